"""The ``gemini`` dialect: generateContent bodies written, checked by validate(), read back in, compacted twice."""

from __future__ import annotations

import json

import pytest
from sdk_oracle import sdk_errors

from conftest import shared_path
from snapglyph import Message, Part, compact, from_request, load_text, profile, validate
from snapglyph.providers.dialects import normalize, to_request

PNG_1x1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABc3UBGAAAAABJRU5ErkJggg==")


def convo() -> list[Message]:
    return [
        Message(0, "system", [Part("text", text="You are terse.")]),
        Message(1, "user", [Part("text", text="Read a.txt and b.txt"), Part("image", media_type="image/png",
                                                                            data=PNG_1x1)]),
        Message(2, "assistant", [Part("thinking", text="plan", signature="sig"), Part("text", text="Reading."),
                                 Part("tool_call", name="read", arguments='{"path": "a.txt"}', call_id="c1"),
                                 Part("tool_call", name="read", arguments='{"path": "b.txt"}', call_id="c2")]),
        Message(3, "tool", [Part("tool_result", call_id="c1", content=[Part("text", text="A")])]),
        Message(4, "tool", [Part("tool_result", call_id="c2", is_error=True, content=[
            Part("text", text="no such file"), Part("image", media_type="image/png", data=PNG_1x1)])]),
        Message(5, "assistant", [Part("text", text="a.txt holds A; b.txt is missing.")]),
    ]


def test_body_shape_exact():
    norm, rewrites = normalize(convo(), dialect="gemini")
    body = to_request(norm, dialect="gemini", model="gemini-2.5-pro", max_tokens=100,
                      tools=[{"name": "read", "description": "Read a file.",
                              "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}])
    assert rewrites == {"hidden reasoning removed (dialect cannot carry it)": 1}
    img = {"inline_data": {"mime_type": "image/png", "data": PNG_1x1}}
    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Read a.txt and b.txt"}, img]},
            {"role": "model", "parts": [
                {"text": "Reading."},
                {"functionCall": {"name": "read", "args": {"path": "a.txt"}, "id": "c1"},
                 "thoughtSignature": "skip_thought_signature_validator"},
                {"functionCall": {"name": "read", "args": {"path": "b.txt"}, "id": "c2"}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "read", "response": {"output": "A"}, "id": "c1"}},
                {"functionResponse": {"name": "read", "response": {"error": "no such file"}, "id": "c2"}},
                img]},
            {"role": "model", "parts": [{"text": "a.txt holds A; b.txt is missing."}]}],
        "systemInstruction": {"parts": [{"text": "You are terse."}]},
        "tools": [{"functionDeclarations": [{"name": "read", "description": "Read a file.", "parametersJsonSchema": {
            "type": "object", "properties": {"path": {"type": "string"}}}}]}],
        "generationConfig": {"maxOutputTokens": 100}}
    assert validate(body, "gemini", profile="gemini-2") == []


def _body(*contents):
    return {"contents": list(contents)}


U = {"role": "user", "parts": [{"text": "go"}]}


def _call(name, cid=None):
    fc = {"name": name, "args": {}}
    if cid:
        fc["id"] = cid
    return {"functionCall": fc}


def _resp(name, cid=None, response=None):
    fr = {"name": name, "response": {"output": "x"} if response is None else response}
    if cid:
        fr["id"] = cid
    return {"functionResponse": fr}


@pytest.mark.parametrize("body,index,start", [
    (_body(U, {"role": "model", "parts": [_call("a")]}), 1, "Please ensure that every function call turn"),
    (_body(U, {"role": "model", "parts": [_call("a"), _call("b")]}, {"role": "user", "parts": [_resp("a")]}), 2,
     "Please ensure that the number of function response parts is equal"),
    (_body(U, {"role": "model", "parts": [_call("a"), _call("b")]},
           {"role": "user", "parts": [_resp("b"), _resp("a")]}), 2, "function response 0 ('b'"),
    (_body(U, {"role": "model", "parts": [_call("a", "1")]}, {"role": "user", "parts": [_resp("a", "2")]}), 2,
     "function response 0 ('a', id '2')"),
    (_body(U, {"role": "user", "parts": [_resp("a")]}), 1, "functionResponse parts without a function call turn"),
    (_body({"role": "user", "parts": [_call("a")]}), 0,
     "parts[0]: functionCall is only allowed in a model content"),
    (_body(U, {"role": "model", "parts": [{"text": "hm"}]}, {"role": "model", "parts": [_call("a")]},
           {"role": "user", "parts": [_resp("a")]}), 2, "Please ensure that function call turn comes immediately"),
    (_body(U, {"role": "assistant", "parts": [{"text": "hi"}]}), 1, "role must be 'user' or 'model'"),
    (_body(U, {"role": "model", "parts": []}), 1, "contents.parts must not be empty"),
    (_body({"role": "user", "parts": [{"text": " "}]}), 0, "parts[0]: Unable to submit request"),
    (_body(U, {"role": "model", "parts": [_call("a")]}, {"role": "user", "parts": [_resp("a", response="x")]}), 2,
     "parts[0]: functionResponse.response must be a JSON object"),
    (_body({"role": "user", "parts": [{"text": "a", "inline_data": {}}]}), 0, "parts[0]: a part must hold exactly"),
    ({"contents": []}, None, "contents: must be a non-empty list"),
])
def test_grammar_faults(body, index, start):
    faults = validate(body, "gemini")
    assert len(faults) == 1, faults
    assert faults[0].index == index and faults[0].text.startswith(start), faults[0]


def test_valid_parallel_calls_and_system_instruction_rule():
    ok = _body(U, {"role": "model", "parts": [_call("a", "1"), _call("b", "2")]},
               {"role": "user", "parts": [_resp("a", "1"), _resp("b", "2"), {"text": "and then?"}]},
               {"role": "model", "parts": [{"text": "done"}]})
    assert validate(ok, "gemini") == []
    bad = dict(ok, systemInstruction={"parts": [{"inline_data": {"mime_type": "image/png", "data": PNG_1x1}}]})
    assert [f.text for f in validate(bad, "gemini")] == ["systemInstruction: only text parts are allowed"]


def test_read_back_round_trip():
    norm, _ = normalize(convo(), dialect="gemini")
    body = to_request(norm, dialect="gemini", model="m", max_tokens=10)
    t = from_request(body)
    assert t.format == "gemini"
    assert [(m.id, m.role) for m in t.messages] == [(0, "system"), (1, "user"), (2, "assistant"), (3, "tool"),
                                                    (4, "assistant")]
    calls = t.messages[2].tool_calls()
    assert [(c.name, c.call_id, json.loads(c.arguments)) for c in calls] == [
        ("read", "c1", {"path": "a.txt"}), ("read", "c2", {"path": "b.txt"})]
    assert calls[0].meta == {"thought_signature": "skip_thought_signature_validator"}
    results = t.messages[3].tool_results()
    assert [(r.call_id, r.result_text(), r.is_error) for r in results] == [("c1", "A", False),
                                                                          ("c2", "no such file", True)]
    assert [p.kind for p in t.messages[3].parts] == ["tool_result", "tool_result", "image"]
    # written again, the body is the same (a real signature rides along)
    norm2, _ = normalize(t.messages, dialect="gemini")
    assert to_request(norm2, dialect="gemini", model="m", max_tokens=10) == body


def test_read_calls_without_ids_and_snake_case():
    body = {"system_instruction": {"parts": [{"text": "s"}]},
            "contents": [{"role": "user", "parts": [{"text": "q"}]},
                         {"role": "model", "parts": [{"function_call": {"name": "f", "args": {"x": 1}},
                                                      "thought_signature": "abc"},
                                                     {"function_call": {"name": "g"}}]},
                         {"role": "user", "parts": [{"function_response": {"name": "f", "response": {"r": 1}}},
                                                    {"function_response": {"name": "g",
                                                                           "response": {"output": "ok"}}}]}],
            "generationConfig": {"temperature": 0.2}}
    t = load_text(json.dumps(body), name="request.json")
    assert t.format == "gemini" and t.meta["ids_added"] == 2
    assert t.meta["generationConfig"] == {"temperature": 0.2}
    assert [p.call_id for p in t.messages[2].tool_calls()] == ["f#1.0", "g#1.1"]
    assert [(p.call_id, p.result_text()) for p in t.messages[3].tool_results()] == [("f#1.0", '{"r": 1}'),
                                                                                   ("g#1.1", "ok")]
    assert t.messages[2].tool_calls()[0].meta["thought_signature"] == "abc"


def test_gemini_profiles_default_to_the_gemini_dialect():
    assert profile("gemini").dialect == "gemini" and profile("gemini-2").dialect == "gemini"


@pytest.mark.parametrize("rel", ["swe-agent-traj/marshmallow-code__marshmallow-1867.traj",
                                 "gemini-cli/gemini.jsonl"])
@pytest.mark.parametrize("prof", ["gemini", "gemini-2"])
def test_real_transcripts_compact_twice_in_gemini(rel, prof):
    from snapglyph import load
    t = load(shared_path("data", *rel.split("/")))
    full = compact(t, profile=prof, budget=10_000_000, max_tokens=256)
    budget = 256 + (full.tokens_before - 256) * 2 // 3
    res = compact(t, profile=prof, budget=budget, max_tokens=256)
    assert res.dialect == "gemini" and res.pages
    assert validate(res.request, "gemini", profile=prof) == []
    assert res.tokens_after <= budget < res.tokens_before
    # the request read back keeps the ids; a second pass re-renders the same middle from the store
    again = compact(res.request, profile=prof, budget=budget, max_tokens=256, store=res.store)
    assert validate(again.request, "gemini", profile=prof) == []
    assert again.middle_ids == res.middle_ids and again.tail_ids == res.tail_ids


def _b64(fmt: str, size: tuple[int, int] = (20, 10)) -> str:
    import base64
    import io

    from PIL import Image
    buf = io.BytesIO()
    Image.new("P" if fmt == "GIF" else "RGB", size).save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _inline(mime: str, data: str) -> dict:
    return {"inline_data": {"mime_type": mime, "data": data}}


def test_inline_data_images_are_byte_checked_by_validate_and_fixed_by_compact():
    import base64
    html = base64.b64encode(b"<!DOCTYPE html><html><body>hi</body></html>").decode()
    jpg, gif = _b64("JPEG"), _b64("GIF", (12, 7))
    body = {"contents": [
        {"role": "user", "parts": [{"text": "look"}, _inline("image/png", jpg), {"inlineData": {
            "mimeType": "image/png", "data": html}}, _inline("image/gif", gif), _inline("image/jpg", jpg)]},
        {"role": "model", "parts": [{"functionCall": {"name": "shot", "args": {}, "id": "s1"},
                                     "thoughtSignature": "skip_thought_signature_validator"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "shot", "id": "s1", "response": {"output": "ok"}}},
                                   _inline("image/png", html)]}],
        "tools": [{"functionDeclarations": [{"name": "shot", "description": "a screenshot",
                                             "parametersJsonSchema": {"type": "object", "properties": {}}}]}],
        "generationConfig": {"maxOutputTokens": 100}}
    assert [str(f) for f in validate(body, "gemini", profile="gemini")] == [
        ("messages[0]: parts[1].inline_data: The image was specified using the image/png media type, but the "
         "image appears to be a image/jpeg image"),
        "messages[0]: parts[2].inline_data: Could not process image: the bytes are an HTML document, not an image",
        "messages[0]: parts[3].inline_data: Unsupported MIME type: image/gif",
        "messages[0]: parts[4].inline_data: Unsupported MIME type: image/jpg",
        "messages[2]: parts[1].inline_data: Could not process image: the bytes are an HTML document, not an image"]
    res = compact(body, profile="gemini", dialect="gemini", budget=100_000)
    parts = res.request["contents"][0]["parts"]
    assert [(p["inline_data"]["mime_type"], p["inline_data"]["data"][:4]) if "inline_data" in p else p["text"]
            for p in parts] == [
        "look", ("image/jpeg", "/9j/"),
        "[image removed: 43 bytes labelled image/png are an HTML document, not an image]",
        ("image/png", "iVBO"), ("image/jpeg", "/9j/")]
    assert res.request["contents"][2]["parts"][1] == {
        "text": "[image removed: 43 bytes labelled image/png are an HTML document, not an image]"}
    assert res.rewrites == {"image media types corrected from the bytes": 2,
                            "images that are not images replaced by a placeholder": 2,
                            "images in a format the gemini dialect does not take made PNG": 1}
    assert validate(res.request, "gemini", profile="gemini") == [] and sdk_errors(res.request, "gemini") == ""
    # the GIF stays a GIF where the provider takes it
    assert compact(body, profile="claude", dialect="anthropic", budget=100_000).request["messages"][0]["content"][
        3]["source"]["media_type"] == "image/gif"


def test_function_responses_follow_the_call_order():
    """Found by the fuzz run: results given in another order than the calls (or a call without a result, whose
    error result was put first) were written in that order, and Gemini wants them in call order."""
    calls = Message(1, "assistant", [Part("tool_call", name="read", arguments="{}", call_id="c1"),
                                     Part("tool_call", name="read", arguments="{}", call_id="c2"),
                                     Part("tool_call", name="bash", arguments="{}", call_id="c3")])
    out_of_order = [Message(0, "user", [Part("text", text="go")]), calls,
                    Message(2, "tool", [Part("tool_result", call_id="c3", content=[Part("text", text="3")])]),
                    Message(3, "tool", [Part("tool_result", call_id="c1", content=[Part("text", text="1")])])]
    norm, rewrites = normalize(out_of_order, dialect="gemini")
    body = to_request(norm, dialect="gemini", model="gemini-2.5-pro", max_tokens=100)
    assert [(p["functionResponse"]["id"], p["functionResponse"]["response"]) for p in body["contents"][2]["parts"]] \
        == [("c1", {"output": "1"}), ("c2", {"error": "(no result was recorded for this tool call)"}),
            ("c3", {"output": "3"})]
    assert validate(body, "gemini") == [] and rewrites == {"tool calls without a result given an error result": 1}


def test_a_result_named_unlike_its_call_is_named_as_the_call():
    """Gemini refuses a functionResponse named unlike its call: the response takes the call's name (a result
    named otherwise made even a passthrough fail its last check with InternalError; found by a fresh-eyes test)."""
    import snapglyph
    from snapglyph import Message, Part
    msgs = [Message(0, "user", [Part("text", text="task")]),
            Message(1, "assistant", [Part("tool_call", name="edit", arguments='{"path": "a.py"}', call_id="c1")]),
            Message(2, "tool", [Part("tool_result", call_id="c1", name="bash", content=[Part("text", text="ok")])]),
            Message(3, "assistant", [Part("text", text="done")])]
    res = snapglyph.compact(msgs, profile="gemini-2", dialect="gemini", budget=100_000)
    assert res.passthrough
    fr = res.request["contents"][2]["parts"][0]["functionResponse"]
    assert (fr["name"], fr["id"], fr["response"]) == ("edit", "c1", {"output": "ok"})
