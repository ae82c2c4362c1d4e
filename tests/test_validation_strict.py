"""validate() as strict as the providers, with the SDKs' request types as a second oracle (issue 12 item 7), and
the request faults of issue 12 items 1, 3 and 6: repeated tool call ids, images whose bytes are not what they say,
a conversation that opens with an assistant message."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image
from sdk_oracle import sdk_errors

from snapglyph import Message, Part, compact, from_request, validate
from snapglyph.model.messages import OPENING_USER_LINE
from snapglyph.providers.dialects import normalize, to_request

PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
DIALECTS = ("anthropic", "openai", "responses")


def _b64_image(fmt: str, size=(3, 2)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode("ascii")


JPEG = _b64_image("JPEG")
HTML = base64.b64encode(b"<!DOCTYPE html><html><body>404 Not Found</body></html>").decode("ascii")
PDF = base64.b64encode(b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n").decode("ascii")
BMP = _b64_image("BMP")


def texts(faults) -> list[str]:
    return [str(f) for f in faults]


# ------------------------------------------------------------------------------------ item 7: part types per dialect
def anthropic_body(content, role="user", **kw):
    return {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": role, "content": content}], **kw}


def openai_body(content, role="user", **kw):
    return {"model": "gpt-5.4", "messages": [{"role": role, "content": content}], **kw}


WRONG = [
    ("openai", openai_body([{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                        "data": PNG_1x1}}]),
     "messages[0]: content.0: 'image' is not a content part type of a user message"),
    ("openai", openai_body([{"type": "tool_use", "id": "a", "name": "f", "input": {}}], role="assistant"),
     "messages[0]: content.0: 'tool_use' is not a content part type of a assistant message"),
    ("anthropic", anthropic_body([{"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_1x1}}]),
     "messages[0]: content.0.type: unknown content block type 'image_url'"),
    ("anthropic", anthropic_body([{"type": "hologram", "text": "x"}]),
     "messages[0]: content.0.type: unknown content block type 'hologram'"),
    ("anthropic", {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]},
     "max_tokens: Field required"),
    ("anthropic", anthropic_body([{"type": "image", "source": {"type": "base64", "data": PNG_1x1}}]),
     "messages[0]: content.0.source.media_type: Input should be"),
    ("anthropic", anthropic_body([{"type": "text"}]), "messages[0]: content.0.text: Field required"),
    ("anthropic", anthropic_body("hello", role="assistant"), 'messages[0]: first message must use the "user" role'),
    ("responses", {"model": "gpt-5.4", "input": [{"type": "message", "role": "user",
                                                  "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
     "messages[0]: content.0: 'image_url' is not a content part type of a user message"),
    ("responses", {"model": "gpt-5.4", "input": [{"type": "function_call", "call_id": "c"}]},
     "messages[0]: a function_call needs 'call_id', 'name' and 'arguments' strings"),
]


@pytest.mark.parametrize("dialect,body,fault", WRONG, ids=[w[2][:40] for w in WRONG])
def test_wrong_parts_are_faults_for_validate(dialect, body, fault):
    found = texts(validate(body, dialect))
    assert any(f.startswith(fault) for f in found), found


# The SDK oracle agrees on the ones its types can see (role order and our stricter field rules are ours alone).
SDK_SEES = [w for w in WRONG if "first message" not in w[2] and "text: Field" not in w[2]
            and not (w[0] == "openai" and "assistant" in w[2])]


@pytest.mark.parametrize("dialect,body,fault", SDK_SEES, ids=[w[2][:40] for w in SDK_SEES])
def test_wrong_parts_are_faults_for_the_sdk_types(dialect, body, fault):
    assert sdk_errors(body, dialect) != ""


def test_unknown_parameter_and_pattern_faults():
    body = anthropic_body("hi", stop=["x"], tools=[{"name": "read file", "input_schema": {"type": "object"}}])
    assert texts(validate(body, "anthropic")) == [
        "stop: Extra inputs are not permitted",
        "tools.0.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$' ('read file')"]
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "call|1", "name": "f", "input": {}}]}
    body = {"model": "m", "max_tokens": 5, "tools": [{"name": "f", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "go"}, call,
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call|1"}]}]}
    assert texts(validate(body, "anthropic")) == [
        "messages[1]: content.0.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        "messages[2]: content.0.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'"]


def test_openai_reasoning_models_and_both_token_limits():
    body = openai_body("hi", max_tokens=10, max_completion_tokens=10)
    assert texts(validate(body, "openai")) == ["max_tokens and max_completion_tokens cannot both be set"]


# ------------------------------------------------------------------------------ item 1: repeated tool call ids
def _dup_conversation() -> list[Message]:
    return [Message(0, "user", [Part("text", text="go")]),
            Message(1, "assistant", [Part("tool_call", name="read", arguments="{}", call_id="x"),
                                     Part("tool_call", name="bash", arguments="{}", call_id="x")]),
            Message(2, "tool", [Part("tool_result", call_id="x", content=[Part("text", text="out-read")])]),
            Message(3, "tool", [Part("tool_result", call_id="x", content=[Part("text", text="out-bash")])]),
            Message(4, "assistant", [Part("text", text="done")])]


def _pairs(body: dict, dialect: str) -> list[tuple[str, str]]:
    """(tool name, result text) for every call of the request, by id."""
    if dialect == "anthropic":
        blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
        names = {b["id"]: b["name"] for b in blocks if b["type"] == "tool_use"}
        return [(names[b["tool_use_id"]], b.get("content")) for b in blocks if b["type"] == "tool_result"]
    if dialect == "openai":
        names = {c["id"]: c["function"]["name"] for m in body["messages"] for c in m.get("tool_calls") or []}
        return [(names[m["tool_call_id"]], m["content"]) for m in body["messages"] if m["role"] == "tool"]
    names = {i["call_id"]: i["name"] for i in body["input"] if i["type"] == "function_call"}
    return [(names[i["call_id"]], i["output"]) for i in body["input"] if i["type"] == "function_call_output"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_repeated_call_ids_pair_results_in_order(dialect):
    msgs, rw = normalize(_dup_conversation(), dialect=dialect)
    body = to_request(msgs, dialect=dialect, model="m", max_tokens=10)
    assert _pairs(body, dialect) == [("read", "out-read"), ("bash", "out-bash")]
    assert rw == {"duplicate tool call ids made unique": 1}
    assert validate(body, dialect) == [] and sdk_errors(body, dialect) == ""


@pytest.mark.parametrize("source", DIALECTS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_repeated_call_ids_read_from_every_request_dialect(source, dialect):
    wire = to_request(_dup_conversation(), dialect=source, model="m", max_tokens=10)  # ids repeated on the wire
    t = from_request(wire)
    results = [p for m in t.messages for p in m.tool_results()]
    assert [p.name for p in results] == ["read", "bash"]  # each result named after its own call
    res = compact(t, profile="claude", dialect=dialect, budget=50_000)
    assert res.passthrough and _pairs(res.request, dialect) == [("read", "out-read"), ("bash", "out-bash")]


def test_repeated_call_ids_in_the_tail_of_a_compacted_request():
    msgs = [Message(0, "user", [Part("text", text="task")])]
    for r in range(30):
        msgs += [Message(len(msgs), "assistant", [Part("tool_call", name="read", arguments="{}", call_id="x"),
                                                  Part("tool_call", name="bash", arguments="{}", call_id="x")]),
                 Message(len(msgs) + 1, "tool", [Part("tool_result", call_id="x",
                                                      content=[Part("text", text=f"read {r} " + "r" * 3000)]),
                                                 Part("tool_result", call_id="x",
                                                      content=[Part("text", text=f"bash {r} " + "b" * 3000)])])]
    res = compact(msgs, profile="claude", dialect="anthropic", budget=20_000)
    assert res.pages and res.tail_ids
    pairs = _pairs(res.request, "anthropic")
    assert pairs and all(text.startswith(name) for name, text in pairs)
    assert validate(res.request, "anthropic", profile="claude") == []


def test_sanitized_ids_do_not_collide_with_existing_ones():
    msgs = [Message(0, "user", [Part("text", text="go")]),
            Message(1, "assistant", [Part("tool_call", name="a", arguments="{}", call_id="c|1"),
                                     Part("tool_call", name="b", arguments="{}", call_id="c_1")]),
            Message(2, "tool", [Part("tool_result", call_id="c|1", content=[Part("text", text="A")]),
                                Part("tool_result", call_id="c_1", content=[Part("text", text="B")])])]
    out, rw = normalize(msgs, dialect="anthropic")
    body = to_request(out, dialect="anthropic", model="m", max_tokens=5)
    assert [p.call_id for p in out[1].parts] == ["c_1_2", "c_1"]
    assert _pairs(body, "anthropic") == [("a", "A"), ("b", "B")]
    assert rw == {"tool call ids the dialect refuses made safe": 1}
    assert validate(body, "anthropic") == []


# --------------------------------------------------------------------- item 3: images whose bytes are not images
def _image_conversation(media_type: str, data: str) -> list[Message]:
    return [Message(0, "user", [Part("text", text="look"), Part("image", media_type=media_type, data=data)]),
            Message(1, "assistant", [Part("text", text="ok")])]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_jpeg_labelled_png_gets_its_real_media_type(dialect):
    bad = to_request(_image_conversation("image/png", JPEG), dialect=dialect, model="m", max_tokens=5)
    assert any("appears to be a image/jpeg image" in t for t in texts(validate(bad, dialect)))
    out, rw = normalize(_image_conversation("image/png", JPEG), dialect=dialect)
    img = out[0].parts[1]
    assert (img.media_type, img.width, img.height, img.data) == ("image/jpeg", 3, 2, JPEG)
    assert rw == {"image media types corrected from the bytes": 1}
    body = to_request(out, dialect=dialect, model="m", max_tokens=5)
    assert validate(body, dialect) == [] and sdk_errors(body, dialect) == ""


@pytest.mark.parametrize("data,why", [
    (HTML, "[image removed: 54 bytes labelled image/png are an HTML document, not an image]"),
    (PDF, "[image removed: 29 bytes labelled image/png are a PDF document, not an image]"),
    ("iVBORw0KGgo!!!not*base64", "[image removed: 24 characters of base64 labelled image/png are base64 that does "
                                 "not decode]"),
    (BMP, "[image removed: 78 bytes labelled image/png are a BMP image, a format providers do not take]"),
])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_bytes_that_are_no_image_become_a_placeholder(dialect, data, why):
    bad = to_request(_image_conversation("image/png", data), dialect=dialect, model="m", max_tokens=5)
    assert any("Could not process image" in t for t in texts(validate(bad, dialect)))
    out, rw = normalize(_image_conversation("image/png", data), dialect=dialect)
    assert [(p.kind, p.text) for p in out[0].parts] == [("text", "look"), ("text", why)]
    assert rw == {"images that are not images replaced by a placeholder": 1}
    body = to_request(out, dialect=dialect, model="m", max_tokens=5)
    assert validate(body, dialect) == [] and sdk_errors(body, dialect) == ""


def test_image_in_a_tool_result_is_checked_too():
    msgs = [Message(0, "user", [Part("text", text="go")]),
            Message(1, "assistant", [Part("tool_call", name="shot", arguments="{}", call_id="s")]),
            Message(2, "tool", [Part("tool_result", call_id="s", content=[
                Part("image", media_type="image/png", data=HTML), Part("image", media_type="image/gif", data=JPEG)])])]
    res = compact(msgs, profile="claude", dialect="anthropic", budget=50_000)
    result = res.request["messages"][2]["content"][0]["content"]
    assert result[0] == {"type": "text", "text": "[image removed: 54 bytes labelled image/png are an HTML document, "
                                                 "not an image]"}
    assert result[1]["source"]["media_type"] == "image/jpeg"
    assert res.rewrites["images that are not images replaced by a placeholder"] == 1
    assert res.rewrites["image media types corrected from the bytes"] == 1


# ------------------------------------------------------------------ item 6: a conversation opening with the assistant
def _greeting_conversation(rounds: int = 0) -> list[Message]:
    msgs = [Message(0, "system", [Part("text", text="sys")]),
            Message(1, "assistant", [Part("text", text="Hello! How can I help?")]),
            Message(2, "user", [Part("text", text="fix the bug")])]
    for r in range(rounds):
        msgs += [Message(len(msgs), "assistant", [Part("text", text=f"step {r} " + "z" * 4000)]),
                 Message(len(msgs) + 1, "user", [Part("text", text=f"more {r}")])]
    return msgs


@pytest.mark.parametrize("dialect", DIALECTS)
def test_requests_open_with_a_user_message(dialect):
    res = compact(_greeting_conversation(), profile="claude", dialect=dialect, budget=50_000)
    first = (res.request.get("messages") or res.request.get("input"))
    first = [m for m in first if m.get("role") != "system"][0]
    text = first["content"] if isinstance(first["content"], str) else first["content"][0]["text"]
    assert (first["role"], text) == ("user", OPENING_USER_LINE)
    assert res.rewrites["a neutral user line put before an opening assistant message"] == 1
    assert validate(res.request, dialect) == [] and sdk_errors(res.request, dialect) == ""


def test_opening_line_keeps_the_head_and_ids_across_passes(tmp_path):
    res = compact(_greeting_conversation(rounds=40), profile="claude", dialect="anthropic", budget=30_000)
    assert res.head_ids == [0, 1, 1, 2]  # system, the line (standing before #1), the greeting, the task
    roles = [m["role"] for m in res.request["messages"][:3]]
    assert roles == ["user", "assistant", "user"]
    path = tmp_path / "s.jsonl"
    res.store.save(path)
    t = from_request(json.loads(json.dumps(res.request)))
    assert t.meta["opening_line_removed"] and [m.id for m in t.messages[:3]] == [0, 1, 2]
    from snapglyph import SourceStore
    res2 = compact(t, profile="claude", dialect="anthropic", budget=30_000, store=SourceStore(path))
    assert res2.head_ids == res.head_ids and validate(res2.request, "anthropic", profile="claude") == []


# ------------------------------------------------------------------------------------ item 5: parameters are kept
def _long_conversation(rounds: int = 40) -> list[Message]:
    msgs = [Message(0, "user", [Part("text", text="the task")])]
    for r in range(rounds):
        msgs += [Message(len(msgs), "assistant", [Part("tool_call", name="read", arguments=f'{{"n": {r}}}',
                                                       call_id=f"c{r}")]),
                 Message(len(msgs) + 1, "tool", [Part("tool_result", call_id=f"c{r}",
                                                      content=[Part("text", text=f"out {r} " + "q" * 3000)])])]
    return msgs + [Message(len(msgs), "assistant", [Part("text", text="done")])]


PARAMS = {
    "anthropic": {"thinking": {"type": "enabled", "budget_tokens": 2048}, "temperature": 1,
                  "tool_choice": {"type": "auto"}, "stop_sequences": ["END"], "metadata": {"user_id": "u1"}},
    "openai": {"temperature": 0.2, "tool_choice": "auto", "response_format": {"type": "json_object"},
               "stop": ["END"], "metadata": {"run": "7"}, "seed": 3},
    "responses": {"temperature": 0.2, "tool_choice": "auto", "reasoning": {"effort": "high"},
                  "text": {"format": {"type": "json_object"}}, "metadata": {"run": "7"}},
}
LIMIT = {"anthropic": "max_tokens", "openai": "max_completion_tokens", "responses": "max_output_tokens"}
MODEL = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5.4", "responses": "gpt-5.4"}


@pytest.mark.parametrize("rounds", [1, 40], ids=["passthrough", "compacted"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_request_parameters_are_kept(dialect, rounds):
    body = to_request(normalize(_long_conversation(rounds), dialect=dialect)[0], dialect=dialect,
                      model=MODEL[dialect], max_tokens=8000, params=PARAMS[dialect])
    assert body[LIMIT[dialect]] == 8000
    profile = "claude" if dialect == "anthropic" else "openai"
    res = compact(body, profile=profile, budget=40_000, dialect=dialect)
    assert res.passthrough == (rounds == 1)
    req = res.request
    content = {"messages", "input", "system", "instructions", "tools"}
    assert {k: v for k, v in req.items() if k not in content} == {
        k: v for k, v in body.items() if k not in content}  # model, the output limit and every parameter
    assert validate(req, dialect, profile=profile) == [] and sdk_errors(req, dialect) == ""


def test_parameters_translated_across_dialects_and_the_rest_named():
    body = to_request(normalize(_long_conversation(1), dialect="anthropic")[0], dialect="anthropic",
                      model="claude-sonnet-4-5", max_tokens=900, params=PARAMS["anthropic"])
    res = compact(body, profile="claude", dialect="openai", budget=40_000, model="gpt-4.1")
    req = res.request
    assert {k: req[k] for k in ("max_tokens", "temperature", "tool_choice", "stop")} == {
        "max_tokens": 900, "temperature": 1, "tool_choice": "auto", "stop": ["END"]}
    assert "thinking" not in req and "metadata" not in req
    assert any("dropped: thinking, metadata" in n for n in res.notes)
    assert validate(req, "openai") == [] and sdk_errors(req, "openai") == ""


def test_openai_reasoning_models_get_max_completion_tokens():
    body = {"model": "gpt-4.1", "max_tokens": 700, "messages": [{"role": "user", "content": "hi"}]}
    assert compact(body, profile="openai-tiles", budget=10_000).request["max_tokens"] == 700
    req = compact(body, profile="openai", budget=10_000, model="o4-mini", max_tokens=300).request
    assert "max_tokens" not in req and req["max_completion_tokens"] == 300
    assert any("max_completion_tokens" in f for f in texts(validate({**req, "max_tokens": 5}, "openai")))
    assert texts(validate({"model": "gpt-5.4", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
                          "openai")) == ["max_tokens: Unsupported parameter: 'max_tokens' is not supported with "
                                         "this model. Use 'max_completion_tokens' instead."]


def test_a_lone_surrogate_is_a_fault_in_every_dialect():
    """A request holding a lone surrogate cannot be written as UTF-8 JSON: validate names the message (or the
    body), in each dialect; the same request without it has no such fault (validate reported nothing for it; found
    by a fresh-eyes test)."""
    from snapglyph.providers.validation import validate

    bodies = {"anthropic": {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "a \ud800"}]},
              "openai": {"model": "m", "messages": [{"role": "user", "content": "ok"},
                                                    {"role": "assistant", "content": [{"type": "text",
                                                                                       "text": "\udfff"}]}]},
              "responses": {"model": "m", "input": [{"role": "user", "content": "x\ud83d"}]},
              "gemini": {"contents": [{"role": "user", "parts": [{"text": "y\udc00"}]}]}}
    where = {"anthropic": 0, "openai": 1, "responses": 0, "gemini": 0}
    for dialect, body in bodies.items():
        faults = [f for f in validate(body, dialect) if "surrogate" in f.text]
        assert [f.index for f in faults] == [where[dialect]], dialect
        clean = json.loads(json.dumps(body).replace("\\ud800", "?").replace("\\udfff", "?").replace("\\ud83d", "?")
                           .replace("\\udc00", "?"))
        assert not [f for f in validate(clean, dialect) if "surrogate" in f.text]
    system = {**bodies["anthropic"], "messages": [{"role": "user", "content": "ok"}], "system": "s\udfff"}
    assert [f.index for f in validate(system, "anthropic") if "surrogate" in f.text] == [None]


def test_anthropic_system_messages_and_resumed_tool_names_are_accepted():
    """What real Claude Code 2.1 sends: a system message among the messages (anthropic.types.SystemMessageParam)
    and a tool_use of a tool the request no longer lists; a system message with an image, or first, is refused."""
    from snapglyph import validate
    msgs = [{"role": "user", "content": "task"},
            {"role": "system", "content": [{"type": "text", "text": "Today is 2026-12-04."}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Glob", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]}]
    body = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": msgs,
            "tools": [{"name": "Read", "input_schema": {"type": "object"}}]}
    assert validate(body, "anthropic") == []
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    bad = dict(body, messages=[msgs[0], {"role": "system", "content": [img]}] + msgs[2:])
    assert [f.text for f in validate(bad, "anthropic")] == ["a system message holds text only"]
    first = dict(body, messages=[{"role": "system", "content": "x"}] + msgs)
    assert any("role" in f.text for f in validate(first, "anthropic"))
