"""Issue 35: recoveries that die in the wild today, each through the simulator and ``serve`` in every dialect.

- the wordings added to the catalogue (sglang, vLLM's "at least", Ollama's "no user query", OpenRouter's tool input),
  image-count refusals as a cap the retry meets, Gemini's ambiguous "Request contains an invalid argument", and the
  output reserve alone (relayed, one log line naming max_tokens);
- a compacted request answered with a refusal or nothing: one text-only retry, remembered per upstream and model;
- an overflow as the first event after a 200 (sglang): recovered like an overflow answer.
"""

from __future__ import annotations

import base64
import json
import logging
import struct
import zlib

import httpx
import pytest

from snapglyph.providers.overflow import detect, image_limit
from snapglyph.providers.params import reserve_alone_overflows
from snapglyph.providers.refusal import refusal
from snapglyph.testing import Simulator, answer
from snapglyph.testing.provider_errors import overflow_body

DIALECTS = ["anthropic", "openai", "responses", "gemini"]
MODELS = {"openai": "gpt-4.1", "responses": "gpt-4.1", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-pro"}
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "responses": "/v1/responses",
         "gemini": "/v1beta/models/gemini-2.5-pro:generateContent"}
STREAM_PATHS = {**PATHS, "gemini": "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"}
HEADERS = {"authorization": "Bearer x", "x-api-key": "x", "anthropic-version": "2023-06-01"}
RESERVE = 512


# -- the catalogue ---------------------------------------------------------------------------------------------------
WORDINGS = [  # (case, status, body, provider, prompt_tokens, limit); each body as its public report shows it
    ("sglang", 400, '{"object":"error","message":"The input (61709 tokens) is longer than the model\'s context length '
                    '(40960 tokens).","type":"BadRequestError","param":null,"code":400}', "sglang", 61709, 40960),
    ("sglang-in-stream", None, 'data: {"error": {"object": "error", "message": "The input (61709 tokens) is longer '
                               'than the model\'s context length (40960 tokens).", "type": "BadRequestError", '
                               '"param": null, "code": 400}}\n\n', "sglang", 61709, 40960),
    ("vllm-at-least", 400, {"error": {"message": "This model's maximum context length is 128000 tokens. However, you "
                                                 "requested 65535 output tokens and your prompt contains at least "
                                                 "62466 input tokens, for a total of at least 128001 tokens.",
                                      "type": "BadRequestError", "param": None, "code": 400}}, "vllm", 62466, 128000),
    ("vllm-zero-output", 400, {"error": {"message": "This model's maximum context length is 32768 tokens. However, "
                                                    "you requested 0 output tokens and your prompt contains at least "
                                                    "32769 input tokens, for a total of at least 32769 tokens.",
                                         "type": "BadRequestError", "code": 400}}, "vllm", 32769, 32768),
    ("ollama-no-user", 500, '{"error":{"message":"no user query found in messages","type":"api_error","param":null,'
                            '"code":null}}', "ollama", None, None),
    ("openrouter-tool-input", 400, {"error": {"message": "This endpoint's maximum context length is 204800 tokens. "
                                              "However, you requested about 205432 tokens (81684 of text input, 3748 "
                                              "of tool input, 120000 in the output). Please reduce the length of "
                                              "either one", "code": 400}}, "openrouter", 85432, 204800),
]


@pytest.mark.parametrize("case,status,body,provider,prompt,limit", WORDINGS, ids=[w[0] for w in WORDINGS])
def test_new_wordings_are_overflows_with_their_numbers(case, status, body, provider, prompt, limit):
    r = detect(status, body)
    assert (r.provider, r.prompt_tokens, r.limit) == (provider, prompt, limit)


def test_image_count_refusals_name_the_cap():
    got = [image_limit(400, b) for b in (
        '{"error":{"message":"[invalid_request_error] request contains 52 images, exceeding the maximum of 50 allowed '
        'per request"}}',
        '{"type":"error","error":{"type":"invalid_request_error","message":"Too much media: 0 document pages + 103 '
        'images > 100"}}',
        '{"type":"error","error":{"type":"invalid_request_error","message":"too many images and documents: 120 + 0 > '
        '100"},"request_id":"req_011CXyLbCw5kpB1NsykoTSqu"}',
        '{"object":"error","message":"Image count 5 exceeds limit 4 per request.","type":"BadRequestError",'
        '"param":null,"code":400}')]
    assert [(g.images, g.limit) for g in got] == [(52, 50), (103, 100), (120, 100), (5, 4)]
    assert image_limit(429, '{"error":{"message":"request contains 52 images, exceeding the maximum of 50"}}') is None
    assert detect(400, '{"error":{"message":"request contains 52 images, exceeding the maximum of 50"}}') is None


def test_gemini_invalid_argument_is_an_overflow_only_at_the_window_known():
    _, body = overflow_body("gemini-invalid-argument", prompt=0, output=0, window=0)
    assert detect(400, body) is None                                    # no window known: another fault
    assert detect(400, body, estimate=65535, window=65536) is None      # under the window: another fault
    r = detect(400, body, estimate=lambda: 65536, window=65536)
    assert r.provider == "gemini" and r.note.endswith("the estimate 65536 >= the window 65536")


def test_output_reserve_alone():
    assert reserve_alone_overflows({"max_tokens": 32000}, 32768, margin=0.08) == 32000
    assert reserve_alone_overflows({"max_completion_tokens": 30146}, 32768, margin=0.08) is None
    assert reserve_alone_overflows({"generationConfig": {"maxOutputTokens": 32768}}, 32768) == 32768


# -- the simulator ---------------------------------------------------------------------------------------------------
def _png() -> str:
    """A valid 8x8 grey PNG, base64."""
    raw = b"".join(b"\x00" + bytes([128] * 8) for _ in range(8))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return base64.b64encode(png).decode()


def _image_part(dialect: str) -> dict:
    b64 = _png()
    if dialect == "anthropic":
        return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}}
    if dialect == "openai":
        return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}
    if dialect == "responses":
        return {"type": "input_image", "image_url": f"data:image/png;base64,{b64}"}
    return {"inlineData": {"mimeType": "image/png", "data": b64}}


def _turn_text(i: int, tokens: int) -> str:
    return "".join(f"step {i} line {j}: test_mod_{j % 9}.py::case_{j} status=ok elapsed={j * 7 % 1000}ms\n"
                   for j in range(max(1, tokens // 14)))


def _body(dialect: str, turns: list, *, images: int = 0, stream: bool = False, max_out: int = RESERVE) -> dict:
    """A request in ``dialect`` of ``turns`` (role, text); the first user turn carries ``images`` images."""
    def content(i: int, role: str, text: str) -> list:
        kind = {"anthropic": "text", "openai": "text", "responses": "input_text" if role == "user" else "output_text"}
        if dialect == "gemini":
            parts = [{"text": text}]
            return parts + [_image_part(dialect) for _ in range(images if i == 0 else 0)]
        parts = [{"type": kind[dialect], "text": text}]
        return parts + [_image_part(dialect) for _ in range(images if i == 0 else 0)]
    if dialect == "gemini":
        return {"generationConfig": {"maxOutputTokens": max_out}, "contents": [
            {"role": "model" if r == "assistant" else "user", "parts": content(i, r, t)} for i, (r, t) in
            enumerate(turns)]}
    items = [{"role": r, "content": content(i, r, t)} for i, (r, t) in enumerate(turns)]
    if dialect == "responses":
        return {"model": MODELS[dialect], "max_output_tokens": max_out, "stream": stream,
                "input": [{"type": "message", **m} for m in items]}
    return {"model": MODELS[dialect], "max_tokens": max_out, "stream": stream, "messages": items}


def _grown(dialect: str, window: int, **kw) -> dict:
    """The first request of a conversation growing by turns of a twentieth of the window that overflows it."""
    sim, turns, i = Simulator(context_window=window), [], 0
    while True:
        turns.append(("user" if i % 2 == 0 else "assistant", _turn_text(i, window // 20)))
        i += 1
        if i % 2 == 1 and sim.count_request(dialect, _body(dialect, turns)).text > window:
            return _body(dialect, turns, **kw)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_simulator_refuses_requests_with_images(dialect):
    with Simulator([answer("fine")], context_window=100_000) as sim, httpx.Client(timeout=30) as c:
        sim.refuse_images = True
        body = _body(dialect, [("user", "look at this")], images=1)
        r = c.post(sim.base_url + PATHS[dialect], json=body, headers=HEADERS)
        assert r.status_code == 200 and refusal(dialect, r.json()).startswith("refusal (")
        plain = c.post(sim.base_url + PATHS[dialect], json=_body(dialect, [("user", "hi")]), headers=HEADERS)
        assert plain.status_code == 200 and refusal(dialect, plain.json()) == ""      # the scripted step, unspent
        assert [e["kind"] for e in sim.log] == ["refused", "ok"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_simulator_caps_images_and_sends_an_overflow_after_a_200(dialect):
    with Simulator([answer("fine")], provider="sglang", context_window=2000) as sim, httpx.Client(timeout=30) as c:
        sim.max_images = 2
        r = c.post(sim.base_url + PATHS[dialect], json=_body(dialect, [("user", "three")], images=3), headers=HEADERS)
        assert r.status_code == 400 and image_limit(r.status_code, r.text).limit == 2
        sim.overflow_after_200 = True
        big = _grown(dialect, 2000, stream=True)
        with c.stream("POST", sim.base_url + STREAM_PATHS[dialect], json=big, headers=HEADERS) as s:
            raw = b"".join(s.iter_raw())
        assert s.status_code == 200 and sim.log[-1]["kind"] == "overflow_after_200"
        assert detect(None, raw).provider == "sglang"


# -- serve -----------------------------------------------------------------------------------------------------------
@pytest.fixture
def serve_log(caplog):
    caplog.set_level(logging.INFO, logger="snapglyph.serve")
    return caplog


def _proxy(sim: Simulator, tmp_path, **kw):
    pytest.importorskip("uvicorn")
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.run import Background
    return Background(ServeConfig(sim.base_url, state=tmp_path / "state", **kw)).start()


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "snapglyph.serve"]


def _has_pages(raw: bytes) -> bool:
    return b"iVBORw0KGgo" in raw                      # a PNG's base64 start: a page image (the tests send none)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_serve_retries_a_refused_compaction_once_without_pages(dialect, tmp_path, serve_log):
    with Simulator([answer("recovered without pages"), answer("again")], provider="openai",
                   context_window=8000) as sim, _proxy(sim, tmp_path) as bg, httpx.Client(timeout=120) as c:
        sim.refuse_images = True
        r = c.post(bg.url + PATHS[dialect], json=_grown(dialect, 8000), headers=HEADERS)
        assert r.status_code == 200 and refusal(dialect, r.json()) == "", r.text
        assert [e["kind"] for e in sim.log] == ["overflow", "refused", "ok"]
        assert _has_pages(sim.log[1]["raw"]) and not _has_pages(sim.log[2]["raw"])
        status = c.get(bg.url + "/snapglyph/status").json()
        assert [(p["model"], p["why"].split(" (")[0]) for p in status["refused_pages"]] == [
            (MODELS[dialect], "refusal")]
        assert status["conversations"][0]["text_retries"] == 1
        # the next request of the conversation goes out text-only at once: no second refusal
        r = c.post(bg.url + PATHS[dialect], json=_grown(dialect, 8000), headers=HEADERS)
        assert r.status_code == 200 and [e["kind"] for e in sim.log][3:] == ["ok"]
        assert not _has_pages(sim.log[3]["raw"])
    assert sum("sent once more without pages" in line for line in _lines(serve_log)) == 1


@pytest.mark.parametrize("hold", [0, 100])
def test_a_whole_answer_is_read_for_a_refusal_whatever_the_hold_of_a_streams_start(hold, tmp_path):
    """--hold-bytes bounds what a stream's start holds back; a non-streamed answer to a request with pages is read
    whole for a refusal all the same (with 0 or 100 bytes it was relayed as it came: found by a fresh-eyes run)."""
    with Simulator([answer("recovered without pages")], provider="anthropic", context_window=8000) as sim, \
            _proxy(sim, tmp_path, hold_bytes=hold) as bg:
        sim.refuse_images = True
        r = httpx.post(bg.url + PATHS["anthropic"], json=_grown("anthropic", 8000), headers=HEADERS, timeout=120)
        assert r.status_code == 200 and refusal("anthropic", r.json()) == "", r.text
        assert [e["kind"] for e in sim.log] == ["overflow", "refused", "ok"]


def test_serve_text_only_retry_is_made_once(tmp_path, serve_log):
    with Simulator([answer("x")], provider="anthropic", context_window=8000) as sim, _proxy(sim, tmp_path) as bg:
        sim.refuse_images = True
        sim.inject(*overflow_body("anthropic", prompt=9000, output=0, window=8000))
        body = _grown("anthropic", 8000)
        body["messages"][-1]["content"].append(_image_part("anthropic"))     # the client's own image: refused again
        r = httpx.post(bg.url + PATHS["anthropic"], json=body, headers=HEADERS, timeout=120)
        assert r.status_code == 200 and r.json()["stop_reason"] == "refusal"  # the retry's answer, relayed
        assert [e["kind"] for e in sim.log] == ["injected", "refused", "refused"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_serve_recovers_an_overflow_sent_as_the_first_event_after_a_200(dialect, tmp_path, serve_log):
    with Simulator([answer("streamed after the retry")], provider="sglang", context_window=8000) as sim, \
            _proxy(sim, tmp_path) as bg, httpx.Client(timeout=120) as c:
        sim.overflow_after_200 = True
        with c.stream("POST", bg.url + STREAM_PATHS[dialect], json=_grown(dialect, 8000, stream=True),
                      headers=HEADERS) as s:
            raw = b"".join(s.iter_raw())
        assert s.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow_after_200", "ok"]
        assert raw == bytes(sim.log[-1]["sent"])                          # the retried stream, byte for byte
    assert any("overflow as the first event after a 200 (sglang)" in line for line in _lines(serve_log))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_serve_retries_under_an_image_count_cap(dialect, tmp_path):
    with Simulator([answer("fine")], context_window=100_000) as sim, _proxy(sim, tmp_path) as bg:
        sim.max_images = 3
        body = _body(dialect, [("user", "five images")], images=5)
        r = httpx.post(bg.url + PATHS[dialect], json=body, headers=HEADERS, timeout=60)
        assert r.status_code == 200, r.text
        assert [e["kind"] for e in sim.log] == ["limit", "ok"] and len(sim.log[1]["images"]) <= 3


def test_serve_relays_an_output_reserve_that_overflows_alone(tmp_path, serve_log):
    with Simulator([answer("x")], provider="openai", context_window=32768) as sim, _proxy(sim, tmp_path) as bg:
        body = _body("openai", [("user", "hi " * 1200)], max_out=32000)
        r = httpx.post(bg.url + PATHS["openai"], json=body, headers=HEADERS, timeout=60)
        assert r.status_code == 400 and r.content == sim.log[-1]["sent"] and len(sim.log) == 1
    line = _lines(serve_log)[-1]
    assert "the output reserve alone overflows: max_tokens 32000 of a 32768-token window" in line


def test_serve_reads_gemini_invalid_argument_by_the_window_known(tmp_path, serve_log):
    body = _grown("gemini", 8000)
    with Simulator([answer("ok")], provider="gemini-invalid-argument", context_window=8000) as sim:
        with _proxy(sim, tmp_path / "a") as bg:                          # no window known: relayed as it came
            r = httpx.post(bg.url + PATHS["gemini"], json=body, headers=HEADERS, timeout=60)
            assert r.status_code == 400 and len(sim.log) == 1
        with _proxy(sim, tmp_path / "b", window=8000) as bg:             # --window: an overflow, recovered
            r = httpx.post(bg.url + PATHS["gemini"], json=body, headers=HEADERS, timeout=120)
            assert r.status_code == 200, r.text
            assert [e["kind"] for e in sim.log] == ["overflow", "overflow", "ok"]
    assert any("read as an overflow: the estimate" in line for line in _lines(serve_log))


@pytest.mark.parametrize("provider", ["sglang", "vllm-at-least", "ollama-no-user"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_serve_recovers_each_new_body_on_the_first_retry(provider, dialect, tmp_path):
    with Simulator([answer("ok")], provider=provider, context_window=8000) as sim, _proxy(sim, tmp_path) as bg:
        r = httpx.post(bg.url + PATHS[dialect], json=_grown(dialect, 8000), headers=HEADERS, timeout=120)
        assert r.status_code == 200, r.text
        assert [e["kind"] for e in sim.log] == ["overflow", "ok"]


def test_langchain_retries_a_refused_compaction_once_without_pages(tmp_path):
    pytest.importorskip("langchain.agents", reason="langchain>=1 not installed (the `integrations` extra)")
    pytest.importorskip("langchain_openai", reason="langchain-openai not installed (the `integrations` extra)")
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    from snapglyph.integrations.langchain import SnapglyphMiddleware
    turns = [m for m in _grown("openai", 8000)["messages"]]
    with Simulator([answer("ok without pages")], provider="openai", context_window=8000) as sim:
        sim.refuse_images = True
        model = ChatOpenAI(model="gpt-4.1", base_url=sim.base_url + "/v1", api_key="x", max_retries=0,
                           max_tokens=RESERVE)
        agent = create_agent(model, tools=[], middleware=[SnapglyphMiddleware(tmp_path)])
        result = agent.invoke({"messages": [{"role": m["role"], "content": m["content"][0]["text"]} for m in turns]})
        assert result["messages"][-1].content == "ok without pages"
        assert [e["kind"] for e in sim.log] == ["overflow", "refused", "ok"]
        assert _has_pages(sim.log[1]["raw"]) and not _has_pages(sim.log[2]["raw"])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_serve_retries_a_streamed_refusal_once_without_pages(dialect, tmp_path):
    with Simulator([answer("streamed without pages")], provider="openai", context_window=8000) as sim, \
            _proxy(sim, tmp_path) as bg, httpx.Client(timeout=120) as c:
        sim.refuse_images = True
        with c.stream("POST", bg.url + STREAM_PATHS[dialect], json=_grown(dialect, 8000, stream=True),
                      headers=HEADERS) as s:
            raw = b"".join(s.iter_raw())
        assert s.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow", "refused", "ok"]
        assert raw == bytes(sim.log[-1]["sent"]) and b"streamed" in raw       # the text-only retry's stream, as sent
        assert not _has_pages(sim.log[2]["raw"])


def test_the_simulate_command_refuses_images_and_caps_them():
    import threading

    from snapglyph.testing.command import run
    lines, stop = [], threading.Event()
    t = threading.Thread(target=run, kwargs=dict(window=100_000, port=0, out=lines.append, stop=stop,
                                                 refuse_images=True, max_images=2), daemon=True)
    t.start()
    for _ in range(200):
        if lines:
            break
        threading.Event().wait(0.05)
    url = lines[0].split()[2]
    assert "requests with images refused, at most 2 images a request" in lines[0]
    try:
        one = httpx.post(url + PATHS["openai"], json=_body("openai", [("user", "x")], images=1), timeout=30)
        three = httpx.post(url + PATHS["openai"], json=_body("openai", [("user", "x")], images=3), timeout=30)
    finally:
        stop.set()
        t.join(10)
    assert refusal("openai", one.json()).startswith("refusal") and image_limit(400, three.text).limit == 2
