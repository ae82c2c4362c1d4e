"""Normalization and dialect writers: every rewrite counted, every output passes validate()."""

from __future__ import annotations

import json

import pytest

from snapglyph import InputError, Message, Part, validate
from snapglyph.providers.dialects import normalize, to_request

PNG_1x1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==")


def convo() -> list[Message]:
    return [
        Message(0, "system", [Part("text", text="be brief")]),
        Message(1, "user", [Part("text", text="fix the bug")]),
        Message(2, "assistant", [Part("thinking", text="hmm", signature=""),
                                 Part("text", text="looking"),
                                 Part("tool_call", name="bash", arguments='{"cmd": "ls"}', call_id="c1"),
                                 Part("tool_call", name="read", arguments='{"path": "a"}', call_id="c2")]),
        Message(3, "tool", [Part("tool_result", call_id="c1", name="bash", content=[Part("text", text="a b")])]),
        Message(4, "tool", [Part("tool_result", call_id="c2", name="read",
                                 content=[Part("text", text="x"), Part("image", media_type="image/png",
                                                                       data=PNG_1x1, width=1, height=1)])]),
        Message(5, "assistant", [Part("text", text="   "), Part("tool_call", name="bash", arguments="{}",
                                                                call_id="c1")]),
        Message(6, "tool", [Part("tool_result", call_id="c1", name="bash", content=[Part("text", text="ok\ud800")])]),
        Message(7, "assistant", [Part("text", text="done")]),
    ]


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "responses"])
def test_normalized_requests_validate(dialect):
    msgs, rw = normalize(convo(), dialect=dialect)
    body = to_request(msgs, dialect=dialect, model="m", max_tokens=100)
    assert validate(body, dialect) == []
    assert rw["duplicate tool call ids made unique"] == 1
    assert rw["whitespace-only text removed"] == 1
    assert rw["lone surrogates replaced"] == 1
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # no lone surrogate left to break the encoder


def test_openai_tool_images_move_to_a_user_message():
    msgs, _ = normalize(convo(), dialect="openai")
    body = to_request(msgs, dialect="openai", model="m", max_tokens=100)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user", "assistant", "tool", "assistant"]
    assert body["messages"][5]["content"][0]["type"] == "image_url"
    assert body["messages"][7]["tool_call_id"] == "c1_2"


def test_anthropic_shape():
    msgs, rw = normalize(convo(), dialect="anthropic")
    body = to_request(msgs, dialect="anthropic", model="m", max_tokens=100)
    assert body["system"] == "be brief"
    assert rw["hidden reasoning without a usable signature removed"] == 1
    first = body["messages"][1]["content"]
    assert [b["type"] for b in first] == ["text", "tool_use", "tool_use"]
    assert first[1]["input"] == {"cmd": "ls"}
    assert {t["name"] for t in body["tools"]} == {"bash", "read"}


def test_orphans_are_repaired_and_counted():
    msgs = [Message(0, "user", [Part("text", text="hi")]),
            Message(1, "tool", [Part("tool_result", call_id="zz", content=[Part("text", text="stray")])]),
            Message(2, "assistant", [Part("tool_call", name="bash", arguments="{}", call_id="c9")]),
            Message(3, "user", [Part("text", text="next")])]
    for dialect in ("openai", "anthropic", "responses"):
        out, rw = normalize(msgs, dialect=dialect)
        assert rw["tool results without a call turned into user text"] == 1
        assert rw["tool calls without a result given an error result"] == 1
        assert validate(to_request(out, dialect=dialect, model="m", max_tokens=10), dialect) == []


def test_unknown_dialect():
    with pytest.raises(InputError, match="known dialects"):
        normalize(convo(), dialect="bedrock")


def _codex_turn() -> list[Message]:
    from snapglyph.readers.responses import read_responses

    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]},
             {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look first"}],
              "encrypted_content": "gAAAAB-opaque"},
             {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"cmd": ["ls"]}'},
             {"type": "function_call_output", "call_id": "c1", "output": "a.py"}]
    return read_responses(items, "rollout")[0]


def test_openai_reasoning_goes_back_to_responses_only():
    # Codex's encrypted reasoning is a Responses item: sent back to Responses as one (summary and
    # encrypted_content, before the call it led to), never as an Anthropic thinking block (its signature would
    # be OpenAI's), and counted where it is left out.
    msgs = _codex_turn()
    out, rw = normalize(msgs, dialect="responses")
    req = to_request(out, dialect="responses", model="gpt-5.1-codex", max_tokens=100)
    assert [it["type"] for it in req["input"]] == ["message", "reasoning", "function_call", "function_call_output"]
    assert req["input"][1] == {"type": "reasoning", "summary": [{"type": "summary_text", "text": "look first"}],
                               "encrypted_content": "gAAAAB-opaque"}
    assert not rw and validate(req, "responses") == []
    for dialect, why in (("anthropic", "hidden reasoning without a usable signature removed"),
                         ("openai", "hidden reasoning removed (dialect cannot carry it)")):
        out, rw = normalize(msgs, dialect=dialect)
        req = to_request(out, dialect=dialect, model="m", max_tokens=100)
        assert "gAAAAB-opaque" not in json.dumps(req) and rw == {why: 1}
    signed = [Message(0, "user", [Part("text", text="hi")]),
              Message(1, "assistant", [Part("thinking", text="plan", signature="EqQBCkYIBRgC"),
                                       Part("text", text="Done.")])]
    out, rw = normalize(signed, dialect="anthropic")  # Anthropic's own signature still goes back to Anthropic
    req = to_request(out, dialect="anthropic", model="claude-sonnet-4-5", max_tokens=100)
    assert req["messages"][1]["content"][0] == {"type": "thinking", "thinking": "plan", "signature": "EqQBCkYIBRgC"}


def test_an_uploaded_file_image_is_kept_for_anthropic_and_named_elsewhere():
    # An Anthropic image whose source is an uploaded file (Files API) has no bytes here: it goes to Anthropic as
    # it came and is named, counted, where no other provider can resolve its id (never an empty-image placeholder).
    from snapglyph import compact

    src = {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [
        {"role": "user", "content": [{"type": "image", "source": src}, {"type": "text", "text": "what is this?"}]}]}
    res = compact(body, profile="claude", dialect="anthropic", budget=100_000)
    assert res.request["messages"][0]["content"][0] == {"type": "image", "source": src}
    assert not res.rewrites and validate(res.request, "anthropic") == []
    for dialect in ("openai", "responses", "gemini"):
        res = compact(body, profile="claude", dialect=dialect, budget=100_000)
        assert "[image: uploaded file file_011CNha8iCJcU1wXNR6q4V8w, which only Anthropic's Files API resolves]" \
            in json.dumps(res.request)
        assert dict(res.rewrites) == {f"images of uploaded files the {dialect} dialect cannot carry sent as text "
                                      "naming them": 1} and validate(res.request, dialect) == []


def test_a_freeform_tool_call_goes_back_to_responses_as_one():
    # Codex's apply_patch is a custom (freeform) tool: its call's input is patch text, not JSON. Sent to Responses it
    # stays a custom_tool_call with its custom_tool_call_output and a custom tool definition, never a function_call
    # whose "arguments" are not JSON.
    from snapglyph.readers.responses import read_responses

    patch = "*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch"
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add a.py"}]},
             {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch},
             {"type": "custom_tool_call_output", "call_id": "c1", "output": "Success."}]
    msgs = read_responses(items, "rollout")[0]
    out, _ = normalize(msgs, dialect="responses")
    req = to_request(out, dialect="responses", model="gpt-5.1-codex", max_tokens=100)
    assert req["input"][1:] == [{"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch},
                                {"type": "custom_tool_call_output", "call_id": "c1", "output": "Success."}]
    assert req["tools"] == [{"type": "custom", "name": "apply_patch", "description": "The apply_patch tool."}]
    assert validate(req, "responses") == []
