"""The provider simulator over real HTTP, driven by the official openai and anthropic SDKs."""

from __future__ import annotations

import base64
import io

import anthropic
import openai
import pytest
from PIL import Image

import snapglyph
from snapglyph.providers.overflow import detect
from snapglyph.testing import Simulator, answer, call, count_text, png_size
from snapglyph.testing.provider_errors import PROVIDERS, overflow_body

TOOLS_OAI = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                               "parameters": {"type": "object",
                                                              "properties": {"path": {"type": "string"}}}}}]
TOOLS_ANT = [{"name": "read_file", "description": "Read a file",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]


def _png_b64(w: int, h: int) -> str:
    buf = io.BytesIO()
    Image.new("L", (w, h), 255).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture
def sim():
    s = Simulator([call(("read_file", {"path": "a.txt"})), answer("all done")], context_window=400).start()
    yield s
    s.stop()


def _oai(sim):
    return openai.OpenAI(base_url=sim.base_url + "/v1", api_key="sk-test", max_retries=0, timeout=10)


def _ant(sim):
    return anthropic.Anthropic(base_url=sim.base_url, api_key="sk-ant-test", max_retries=0, timeout=10)


def test_count_text_and_png_size():
    assert count_text("") == 0
    assert count_text("hello world") == 2
    assert count_text("internationalisation 12345 {}") == 4 + 2 + 2
    assert png_size(base64.b64decode(_png_b64(56, 30))) == (56, 30)
    with pytest.raises(ValueError):
        png_size(b"GIF89a" + b"\0" * 30)


def test_openai_scripted_tool_round_and_usage(sim):
    client = _oai(sim)
    msgs = [{"role": "user", "content": "read a.txt please"}]
    r = client.chat.completions.create(model="sim", messages=msgs, tools=TOOLS_OAI, max_tokens=50)
    tc = r.choices[0].message.tool_calls
    assert r.choices[0].finish_reason == "tool_calls" and tc[0].function.name == "read_file"
    assert r.usage.prompt_tokens == sim.log[-1]["prompt_tokens"] > 0
    msgs += [r.choices[0].message.model_dump(exclude_none=True),
             {"role": "tool", "tool_call_id": tc[0].id, "content": "file body"}]
    r2 = client.chat.completions.create(model="sim", messages=msgs, tools=TOOLS_OAI, max_tokens=50)
    assert r2.choices[0].message.content == "all done" and r2.usage.prompt_tokens > r.usage.prompt_tokens


def test_anthropic_scripted_tool_round_and_image_cost(sim):
    client = _ant(sim)
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png_b64(280, 56)}}
    msgs = [{"role": "user", "content": [img, {"type": "text", "text": "read a.txt"}]}]
    r = client.messages.create(model="sim", max_tokens=50, messages=msgs, tools=TOOLS_ANT)
    assert r.stop_reason == "tool_use" and r.content[0].name == "read_file"
    entry = sim.log[-1]
    assert entry["images"] == [(280, 56)]
    assert entry["image_tokens"] == snapglyph.profile("claude").image_tokens(280, 56) == 20
    assert r.usage.input_tokens == entry["text_tokens"] + 20
    msgs += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in r.content]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": r.content[0].id,
                                           "content": "file body"}]}]
    r2 = client.messages.create(model="sim", max_tokens=50, messages=msgs, tools=TOOLS_ANT)
    assert r2.stop_reason == "end_turn" and r2.content[0].text == "all done"


def test_no_tools_gets_plain_text(sim):
    r = _oai(sim).chat.completions.create(model="sim", messages=[{"role": "user", "content": "hi"}], max_tokens=5)
    assert r.choices[0].message.tool_calls is None and r.choices[0].message.content


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p != "ollama"])
def test_overflow_bodies_verbatim_and_detected(provider):
    big = "lorem ipsum dolor " * 200
    with Simulator(provider=provider, context_window=300) as s:
        with pytest.raises(openai.APIStatusError) as ei:       # Ollama answers 500
            _oai(s).chat.completions.create(model="sim", messages=[{"role": "user", "content": big}], max_tokens=10)
        entry = s.log[-1]
        assert entry["kind"] == "overflow"
        status, body = overflow_body(provider, prompt=entry["prompt_tokens"], output=10, window=300,
                                     request_id=f"req_sim_{entry['n']:04d}")
        assert ei.value.status_code == status and ei.value.response.json() == body
        r = detect(ei.value.status_code, ei.value.response.text)
        assert r is not None, provider
        if r.prompt_tokens is not None:
            assert r.prompt_tokens == entry["prompt_tokens"]
        if r.limit is not None:
            assert r.limit == 300


def test_anthropic_overflow_via_sdk():
    with Simulator(provider="anthropic", context_window=100) as s:
        with pytest.raises(anthropic.BadRequestError) as ei:
            _ant(s).messages.create(model="sim", max_tokens=10, messages=[{"role": "user", "content": "x " * 500}])
        r = detect(ei.value.status_code, ei.value.response.text)
        assert r.provider == "anthropic" and r.limit == 100 and r.prompt_tokens == s.log[-1]["prompt_tokens"]


def test_ollama_truncates_silently():
    with Simulator([answer("ok")], provider="ollama", context_window=100) as s:
        r = _oai(s).chat.completions.create(model="sim", messages=[{"role": "user", "content": "x " * 500}])
        assert r.usage.prompt_tokens == 100 and s.log[-1]["truncated"]


def test_openai_grammar_errors(sim):
    c = _oai(sim)
    orphan_tool = [{"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "call_1", "content": "x"}]
    with pytest.raises(openai.BadRequestError) as ei:
        c.chat.completions.create(model="sim", messages=orphan_tool)
    assert ei.value.response.json()["error"]["message"] == (
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
    assert ei.value.response.json()["error"]["param"] == "messages.[1].role"
    unanswered = [{"role": "user", "content": "a"},
                  {"role": "assistant", "tool_calls": [{"id": "call_9", "type": "function",
                                                        "function": {"name": "f", "arguments": "{}"}}]},
                  {"role": "user", "content": "b"}]
    with pytest.raises(openai.BadRequestError) as ei:
        c.chat.completions.create(model="sim", messages=unanswered)
    assert "did not have response messages: call_9" in ei.value.response.json()["error"]["message"]
    img_tool = [{"role": "user", "content": "a"},
                {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                                      "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + _png_b64(10, 10)}}]}]
    with pytest.raises(openai.BadRequestError) as ei:
        c.chat.completions.create(model="sim", messages=img_tool)
    err = ei.value.response.json()["error"]
    assert err["message"] == ("Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', but "
                              "this message with role 'tool' contains an image URL.")
    assert err["code"] == "invalid_value"
    assert all(e["kind"] == "grammar" for e in sim.log) and detect(400, ei.value.response.text) is None


def test_anthropic_grammar_errors(sim):
    c = _ant(sim)
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}
    res = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "r"}
    cases = {
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each "
        "`tool_use` block must have a corresponding `tool_result` block in the next message.":
            [{"role": "user", "content": "a"}, use, {"role": "user", "content": "b"}],
        "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. Each `tool_result` "
        "block must have a corresponding `tool_use` block in the previous message.":
            [{"role": "user", "content": "a"}, {"role": "user", "content": [res]}],
        "messages.2: Did not find 1 tool_result block(s) at the beginning of this message. Messages following "
        "tool_use blocks must begin with a matching number of tool_result blocks.":
            [{"role": "user", "content": "a"}, use, {"role": "user", "content": [{"type": "text", "text": "t"}, res]}],
        "messages: text content blocks must be non-empty":
            [{"role": "user", "content": [{"type": "text", "text": ""}]}],
        "messages.1.content: 'image' blocks are not permitted within assistant turns":
            [{"role": "user", "content": "a"}, {"role": "assistant", "content": [{"type": "image", "source": {
                "type": "base64", "media_type": "image/png", "data": _png_b64(8, 8)}}]}],
    }
    for message, msgs in cases.items():
        with pytest.raises(anthropic.BadRequestError) as ei:
            c.messages.create(model="sim", max_tokens=5, messages=msgs)
        body = ei.value.response.json()
        assert body["type"] == "error" and body["error"] == {"type": "invalid_request_error", "message": message}


def test_many_image_rule():
    with Simulator([answer("ok")], context_window=10**6) as s:
        img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png_b64(2100, 28)}}
        with pytest.raises(anthropic.BadRequestError) as ei:
            _ant(s).messages.create(model="sim", max_tokens=5, messages=[{"role": "user", "content": [img] * 21}])
        assert "many-image requests: 2000 pixels" in ei.value.response.json()["error"]["message"]


def test_answers_are_not_held_back_by_nagle():
    """Headers and body are written separately; without TCP_NODELAY each answer waited ~40 ms for the client's
    delayed ACK. Checked on the socket itself (speed goals belong in bench/, not in timed unit tests)."""
    import socket as socket_mod

    from snapglyph.testing.server import _Handler
    seen = []
    orig = _Handler.setup

    def setup(self):
        orig(self)
        seen.append(self.connection.getsockopt(socket_mod.IPPROTO_TCP, socket_mod.TCP_NODELAY))
    _Handler.setup = setup
    try:
        with Simulator([answer("ok")], context_window=10**6) as s:
            _oai(s).chat.completions.create(model="sim", messages=[{"role": "user", "content": "hi"}], max_tokens=5)
    finally:
        _Handler.setup = orig
    assert seen and all(v != 0 for v in seen)