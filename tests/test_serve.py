"""``snapglyph serve`` end to end: the official SDKs -> the proxy -> the provider simulator, all on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import threading

import anthropic
import httpx
import openai
import pytest

from snapglyph.cli import main
from snapglyph.providers.overflow import detect
from snapglyph.serve.app import ServeConfig
from snapglyph.serve.run import Background, bind
from snapglyph.serve.upstream import forward_headers
from snapglyph.testing import Simulator, answer, call
from snapglyph.testing.provider_errors import PROVIDERS, overflow_body

pytest.importorskip("uvicorn")

SECRET = "sk-ant-SECRET-do-not-log-4242"
TOOLS_ANT = [{"name": "read_file", "description": "Read a file",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
TOOLS_OAI = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                               "parameters": TOOLS_ANT[0]["input_schema"]}}]
TOOLS_RESP = [{"type": "function", "name": "read_file", "description": "Read a file",
               "parameters": TOOLS_ANT[0]["input_schema"]}]


@pytest.fixture
def caplog_serve(caplog):
    caplog.set_level(logging.INFO, logger="snapglyph.serve")
    return caplog


def _proxy(sim: Simulator, tmp_path, **kw) -> Background:
    return Background(ServeConfig(sim.base_url, state=tmp_path / "state", **kw)).start()


def _ant(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=SECRET, max_retries=0, timeout=120)


def _oai(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key=SECRET, max_retries=0, timeout=120)


# -- pass-through --------------------------------------------------------------------------------------------------
def test_passthrough_request_and_response_bytes_are_exact(tmp_path):
    raw = ('{ "model" : "claude-sonnet-4-6",\n  "max_tokens": 50, "messages": [{"role": "user", "content": '
           '"caf\\u00e9 \u00e9t\u00e9 \U0001f680"}],  "metadata": {"user_id": "u1"} }').encode()
    with Simulator([answer("hi")] * 4, provider="anthropic", context_window=5000) as sim, \
            _proxy(sim, tmp_path) as bg, httpx.Client() as c:
        headers = {"content-type": "application/json", "x-api-key": SECRET, "anthropic-version": "2023-06-01",
                   "anthropic-beta": "prompt-caching-2024-07-31", "x-custom": "kept",
                   "connection": "keep-alive, x-custom", "keep-alive": "timeout=5"}
        r = c.post(bg.url + "/v1/messages?beta=true", content=raw, headers=headers)
        got = sim.log[-1]
        assert r.status_code == 200 and got["raw"] == raw and r.content == got["sent"]
        sent = {k.lower(): v for k, v in got["headers"].items()}
        assert sent["x-api-key"] == SECRET and sent["anthropic-version"] == "2023-06-01"
        assert sent["anthropic-beta"] == "prompt-caching-2024-07-31"
        assert "keep-alive" not in sent and "x-custom" not in sent      # hop-by-hop, and named by Connection
        assert sent["host"] == sim.base_url.split("//")[1]
        # streams: the exact bytes, unknown event types included
        sim.extra_event = b'event: sim_unknown\ndata: {"type":"sim_unknown","x":1}\n\n'
        stream_raw = raw.replace(b'"max_tokens": 50', b'"max_tokens": 50, "stream": true')
        with c.stream("POST", bg.url + "/v1/messages", content=stream_raw, headers=headers) as r:
            body = b"".join(r.iter_raw())
            assert r.headers["content-type"].startswith("text/event-stream")
        assert sim.log[-1]["raw"] == stream_raw and body == bytes(sim.log[-1]["sent"])
        assert b"event: sim_unknown" in body and body.count(b"event: content_block_delta") >= 1
        # other paths are relayed too
        r = c.get(bg.url + "/v1/models", headers={"authorization": f"Bearer {SECRET}"})
        assert r.status_code == 200 and r.json()["data"][0]["id"] == "sim"


def test_forward_headers_drops_hop_by_hop_both_ways():
    h = [(b"Transfer-Encoding", b"chunked"), (b"TE", b"trailers"), (b"Upgrade", b"h2c"), (b"Host", b"x"),
         (b"Content-Length", b"3"), (b"Proxy-Authorization", b"p"), (b"authorization", b"Bearer k"),
         (b"set-cookie", b"a=1"), (b"set-cookie", b"b=2")]
    assert forward_headers(h, request=True) == [(b"authorization", b"Bearer k"), (b"set-cookie", b"a=1"),
                                                (b"set-cookie", b"b=2")]
    assert forward_headers(h, request=False) == [(b"Host", b"x"), (b"Content-Length", b"3"),
                                                 (b"authorization", b"Bearer k"), (b"set-cookie", b"a=1"),
                                                 (b"set-cookie", b"b=2")]


@pytest.mark.parametrize("stream", [False, True])
def test_official_sdks_through_the_proxy(tmp_path, stream):
    script = [call(("read_file", {"path": "a.txt"})), answer("all done, the answer is 42")] * 3
    with Simulator(script, provider="anthropic", context_window=5000) as sim, _proxy(sim, tmp_path) as bg:
        a = _ant(bg.url)
        msgs = [{"role": "user", "content": "read a.txt"}]
        if stream:
            with a.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=msgs, tools=TOOLS_ANT) as s:
                m = s.get_final_message()
        else:
            m = a.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=msgs, tools=TOOLS_ANT)
        assert m.stop_reason == "tool_use" and m.content[0].input == {"path": "a.txt"}
        assert m.usage.input_tokens == sim.log[-1]["prompt_tokens"]
        o = _oai(bg.url)
        omsgs = [{"role": "user", "content": "go on"}]
        if stream:
            chunks = list(o.chat.completions.create(model="gpt-5.4", messages=omsgs, stream=True,
                                                    stream_options={"include_usage": True}))
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            assert chunks[-1].usage.prompt_tokens == sim.log[-1]["prompt_tokens"]
        else:
            text = o.chat.completions.create(model="gpt-5.4", messages=omsgs).choices[0].message.content
        assert text == "all done, the answer is 42"
        if stream:
            with o.responses.stream(model="gpt-5.4", input="read a.txt", tools=TOOLS_RESP) as s:
                r = s.get_final_response()
        else:
            r = o.responses.create(model="gpt-5.4", input="read a.txt", tools=TOOLS_RESP)
        assert r.output[0].type == "function_call" and json.loads(r.output[0].arguments) == {"path": "a.txt"}
        assert [e["kind"] for e in sim.log] == ["ok", "ok", "ok"]
        assert all(e["stream"] is stream for e in sim.log)


# -- errors --------------------------------------------------------------------------------------------------------
RATE_LIMITS = [
    (429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded "
                                      "your per-minute rate limit"}, "request_id": "req_1"}),
    (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_2"}),
    (429, {"error": {"message": "Request too large for gpt-4o in organization org-x on tokens per min (TPM): "
                     "Limit 30000, Requested 31000.", "type": "tokens", "param": None, "code": "rate_limit_exceeded"}}),
    (413, {"type": "error", "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}),
    (500, "upstream failure, plain text"),
]


def test_every_error_in_the_catalogue_arrives_unchanged(tmp_path):
    msgs = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "more " * 50}]
    with Simulator([answer("x")], provider="anthropic", context_window=100) as sim, \
            _proxy(sim, tmp_path) as bg, httpx.Client() as c:
        def post(body: dict, path: str = "/v1/messages") -> httpx.Response:
            return c.post(bg.url + path, content=json.dumps(body).encode(), headers={"x-api-key": SECRET})
        for status, body in RATE_LIMITS:
            sim.inject(status, body, {"retry-after": "7"})
            r = post({"model": "claude-sonnet-4-6", "max_tokens": 10, "messages": msgs})
            assert (r.status_code, r.content, r.headers["retry-after"]) == (status, sim.log[-1]["sent"], "7")
        # grammar errors (both dialects) and a bad request
        r = post({"model": "claude-sonnet-4-6", "max_tokens": 10, "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}]})
        assert r.status_code == 400 and "unexpected `tool_use_id`" in r.text and r.content == sim.log[-1]["sent"]
        r = post({"model": "gpt-5.4", "messages": [{"role": "tool", "tool_call_id": "c", "content": "x"}]},
                 "/v1/chat/completions")
        assert r.status_code == 400 and "must be a response to a preceeding" in r.text
        r = post({"model": "gpt-5.4", "input": [{"type": "function_call_output", "call_id": "c9", "output": "x"}]},
                 "/v1/responses")
        assert r.status_code == 400 and "No tool call found" in r.text
        # every provider's overflow body, for a model that reads no images: relayed unchanged, log says why
        for provider in [p for p in PROVIDERS if p != "ollama"]:
            status, body = overflow_body(provider, prompt=300, output=10, window=100)
            sim.inject(status, body)
            r = post({"model": "deepseek-chat", "max_tokens": 10, "messages": msgs}, "/v1/chat/completions")
            assert (r.status_code, r.content) == (status, sim.log[-1]["sent"]), provider
            assert detect(r.status_code, r.content) is not None, provider
        assert all(e["kind"] != "ok" for e in sim.log)
        status = c.get(bg.url + "/snapglyph/status").json()
        assert status["conversations"] == [] and status["requests"] >= len(RATE_LIMITS) + 3 + len(PROVIDERS) - 1


def test_keys_are_never_logged_or_stored(tmp_path, caplog_serve):
    with Simulator([answer("x")] * 3, provider="anthropic", context_window=200) as sim, _proxy(sim, tmp_path) as bg:
        a = _ant(bg.url)
        a.messages.create(model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(anthropic.BadRequestError):
            a.messages.create(model="claude-sonnet-4-6", max_tokens=10,
                              messages=[{"role": "user", "content": "word " * 900}])
    lines = [r.getMessage() for r in caplog_serve.records if r.name == "snapglyph.serve"]
    assert len(lines) == 2 and all(SECRET not in line for line in lines)
    assert " passed " in lines[0] and "status 200" in lines[0]
    for f in (tmp_path / "state").rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes()


# -- start-up ------------------------------------------------------------------------------------------------------
def test_startup_errors_are_one_line(tmp_path, capsys):
    held = bind("127.0.0.1", 0)
    port = held.getsockname()[1]
    dead = bind("127.0.0.1", 0)
    dead_port = dead.getsockname()[1]
    dead.close()
    try:
        with Simulator([], provider="anthropic") as sim:
            cases = [
                (["--upstream", sim.base_url, "--port", str(port)], f"port {port} on 127.0.0.1 is in use"),
                (["--upstream", f"http://127.0.0.1:{dead_port}", "--port", "0"],
                 f"upstream http://127.0.0.1:{dead_port} is unreachable"),
                (["--upstream", sim.base_url, "--port", "0", "--profile", "nope"], "nope"),
                (["--upstream", "ftp://x", "--port", "0"], "--upstream must be an http(s) URL"),
                (["--upstream", sim.base_url, "--compact-at", "1.5", "--window", "100"], "--compact-at must be"),
            ]
            for args, want in cases:
                rc = main(["serve", "--state", str(tmp_path / "s"), *args])
                err = capsys.readouterr().err
                assert rc == 2 and want in err and len(err.strip().splitlines()) == 1, (args, err)
    finally:
        held.close()


# -- recovery and sticky compaction ---------------------------------------------------------------------------------
def _log_text(n: int) -> str:
    return "\n".join(f"2026-12-01 03:{n % 60:02d}:{k:02d} worker[{n}] step {k}: processed batch {n * 100 + k} "
                     f"in {k * 7 % 93} ms, queue depth {k * 3 % 17}" for k in range(24))


def _pages(raw: bytes) -> list[str]:
    """Base64 data of every image in a request body as received, in order."""
    body = json.loads(raw)
    out = []
    for m in body.get("messages") or body.get("input") or []:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if b.get("type") == "image":
                out.append(b["source"]["data"])
            elif b.get("type") == "image_url":
                out.append(b["image_url"]["url"])
            elif b.get("type") == "input_image":
                out.append(b["image_url"])
    return out


def _anthropic_turn(a, msgs: list, n: int, stream: bool) -> str:
    msgs.append({"role": "user", "content": f"turn {n}: here is the next log, what stands out?\n{_log_text(n)}"})
    if stream:
        with a.messages.stream(model="claude-sonnet-4-6", max_tokens=256, messages=msgs) as s:
            text = s.get_final_message().content[0].text
    else:
        text = a.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=msgs).content[0].text
    msgs.append({"role": "assistant", "content": text})
    return text


def _openai_turn(o, msgs: list, n: int, stream: bool) -> str:
    msgs.append({"role": "user", "content": f"turn {n}: here is the next log, what stands out?\n{_log_text(n)}"})
    if stream:
        chunks = o.chat.completions.create(model="gpt-4o", max_tokens=256, messages=msgs, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        text = o.chat.completions.create(model="gpt-4o", max_tokens=256, messages=msgs).choices[0].message.content
    msgs.append({"role": "assistant", "content": text})
    return text


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_long_session_recovers_and_keeps_pages_byte_identical(tmp_path, dialect, caplog_serve):
    turns = 18
    # gpt-4o reads pages by the tile rule (765 tokens a page), which the simulator applies too
    with Simulator(lambda d, b: answer(f"noted, turn {len(b.get('messages', []))}"), provider=dialect,
                   context_window=6000, image_profile={"openai": "openai-tiles"}) as sim, \
            _proxy(sim, tmp_path) as bg:
        client = _ant(bg.url) if dialect == "anthropic" else _oai(bg.url)
        turn = _anthropic_turn if dialect == "anthropic" else _openai_turn
        msgs = [{"role": "system", "content": "You read logs."}] if dialect == "openai" else []
        msgs.append({"role": "user", "content": "Task: watch the worker logs I paste and tell me what stands out."})
        msgs.append({"role": "assistant", "content": "Ready."})
        for n in range(turns):
            assert turn(client, msgs, n, stream=n % 2 == 0).startswith("noted")   # no error reached the client
        status = httpx.get(bg.url + "/snapglyph/status").json()
    ok = [e for e in sim.log if e["kind"] == "ok"]
    assert len(ok) == turns and [e["kind"] for e in sim.log].count("overflow") == 1
    assert all(e["prompt_tokens"] <= 6000 for e in ok)
    (conv,) = status["conversations"]
    assert conv["dialect"] == dialect and conv["cuts"] >= 1 and conv["window"] == 6000
    # after the first overflow every request is compacted; between cuts the pages are byte-identical and the
    # verbatim tail grows by one turn per request
    first = next(i for i, e in enumerate(sim.log) if e["kind"] == "overflow")
    pages = [_pages(e["raw"]) for e in sim.log[first + 1:]]
    assert all(pages)
    same = sum(1 for a, b in zip(pages, pages[1:]) if a == b)
    cuts = sum(1 for a, b in zip(pages, pages[1:]) if a != b)
    assert cuts + 1 == conv["cuts"] and same >= 2 * cuts and same >= 4
    lines = [r.getMessage() for r in caplog_serve.records if r.name == "snapglyph.serve"]
    assert sum(" recovered " in line for line in lines) == 1 and sum(" sticky " in line for line in lines) == same


def _grown(n: int) -> list:
    msgs = [{"role": "user", "content": "Task: watch the worker logs I paste and tell me what stands out."}]
    for k in range(n):
        msgs += [{"role": "assistant", "content": f"noted {k}"},
                 {"role": "user", "content": f"turn {k}: next log\n{_log_text(k)}"}]
    return msgs


def test_overflow_inside_a_started_stream_is_relayed_and_the_next_request_compacted(tmp_path, caplog_serve):
    # hold_bytes=0: nothing held, so the error after message_start reaches the client (held, it is recovered:
    # tests/test_recovery_wild.py)
    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=100_000) as sim, \
            _proxy(sim, tmp_path, hold_bytes=0) as bg:
        a = _ant(bg.url)
        sim.fail_mid_stream = 1
        with pytest.raises(anthropic.APIStatusError) as e:
            with a.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=_grown(8)) as s:
                s.get_final_message()
        assert "prompt is too long" in str(e.value)
        assert httpx.get(bg.url + "/snapglyph/status").json()["conversations"][0]["pending"] is True
        m = a.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=_grown(9))
        assert m.content[0].text == "noted"
        # no window known: a third of the request (compaction.budget.window_guess), its middle recallable by id
        sent = json.loads(sim.log[-1]["raw"])
        assert len(sent["messages"]) < 19 and sent["tools"][-1]["name"] == "recall_messages"
    lines = [r.getMessage() for r in caplog_serve.records if r.name == "snapglyph.serve"]
    assert "overflow inside the stream (anthropic)" in lines[0] and " compacted " in lines[1]


def test_second_overflow_is_relayed_as_it_came(tmp_path):
    with Simulator(lambda d, b: answer("noted"), provider="openai", context_window=100_000) as sim, \
            _proxy(sim, tmp_path) as bg:
        first = overflow_body("openai", prompt=9000, output=64, window=6000)
        second = overflow_body("openai", prompt=6100, output=64, window=6000)
        sim.inject(*first)
        sim.inject(*second)
        r = httpx.post(bg.url + "/v1/chat/completions", json={"model": "gpt-4o", "max_tokens": 64,
                                                             "messages": _grown(10)}, timeout=60)
        assert (r.status_code, r.content) == (400, sim.log[-1]["sent"]) and "6100" in r.text
        assert _pages(sim.log[-1]["raw"]) and not _pages(sim.log[-2]["raw"])      # the resend was compacted
        conv = httpx.get(bg.url + "/snapglyph/status").json()["conversations"][0]
        assert conv["pending"] is True and conv["cut"] is None and conv["window"] == 6000


def test_model_that_refuses_images_gets_the_request_unchanged(tmp_path, caplog_serve):
    with Simulator(lambda d, b: answer("noted"), provider="openai", context_window=100_000) as sim, \
            _proxy(sim, tmp_path) as bg:
        sim.inject(*overflow_body("openai", prompt=9000, output=64, window=6000))
        sim.inject(400, {"error": {"message": "Invalid content type. image_url is only supported by certain "
                                              "models.", "type": "invalid_request_error", "param": None,
                                   "code": None}})
        last = overflow_body("openai", prompt=9000, output=64, window=6000)
        sim.inject(*last)
        raw = json.dumps({"model": "gpt-4o", "max_tokens": 64, "messages": _grown(10)}).encode()
        r = httpx.post(bg.url + "/v1/chat/completions", content=raw, timeout=60)
        assert r.status_code == 400 and r.content == sim.log[-1]["sent"] and sim.log[-1]["raw"] == raw
        conv = httpx.get(bg.url + "/snapglyph/status").json()["conversations"][0]
        assert conv["no_images"] == "the upstream refused images for this model"
        sim.inject(*last)
        r = httpx.post(bg.url + "/v1/chat/completions", content=raw, timeout=60)
        assert r.status_code == 400 and sim.log[-1]["raw"] == raw                  # never compacted again
    assert "the upstream refused images" in caplog_serve.records[-1].getMessage()


def test_twenty_concurrent_conversations(tmp_path):
    with Simulator(lambda d, b: answer(f"answer to {len(b['messages'])}"), provider="anthropic",
                   context_window=100_000) as sim, _proxy(sim, tmp_path) as bg:
        results: dict = {}
        errors: dict = {}

        def client(k: int) -> None:
            try:
                converse(k)
            except Exception as e:  # noqa: BLE001 - reported by the assertion below, with its conversation
                errors[k] = repr(e)

        def converse(k: int) -> None:
            a = _ant(bg.url)
            msgs = [{"role": "user", "content": f"conversation {k}: count the words"}]
            for turn in range(3):
                if (k + turn) % 2:
                    with a.messages.stream(model="claude-sonnet-4-6", max_tokens=32, messages=msgs) as s:
                        text = s.get_final_message().content[0].text
                else:
                    text = a.messages.create(model="claude-sonnet-4-6", max_tokens=32, messages=msgs).content[0].text
                msgs += [{"role": "assistant", "content": text}, {"role": "user", "content": f"k={k} t={turn}"}]
            results[k] = msgs

        threads = [threading.Thread(target=client, args=(k,)) for k in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    assert errors == {} and sorted(results) == list(range(20))
    assert all([m["content"] for m in r if m["role"] == "assistant"] == ["answer to 1", "answer to 3", "answer to 5"]
               for r in results.values())
    assert len(sim.log) == 60 and all(e["kind"] == "ok" for e in sim.log)
    firsts = {json.loads(e["raw"])["messages"][0]["content"] for e in sim.log}
    assert firsts == {f"conversation {k}: count the words" for k in range(20)}


def test_dry_run_passes_everything_through(tmp_path, caplog_serve):
    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=3000) as sim, \
            _proxy(sim, tmp_path, dry_run=True) as bg:
        raw = json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": _grown(8)}).encode()
        r = httpx.post(bg.url + "/v1/messages", content=raw, timeout=60)
        assert r.status_code == 400 and r.content == sim.log[-1]["sent"] and len(sim.log) == 1
        assert httpx.get(bg.url + "/snapglyph/status").json()["conversations"] == []
    line = caplog_serve.records[-1].getMessage()
    assert " passed " in line and "dry run: overflow (anthropic); would send recovered:" in line


def test_compact_at_compacts_before_the_provider_refuses(tmp_path):
    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=100_000) as sim, \
            _proxy(sim, tmp_path, window=6000, compact_at=0.5) as bg:
        a = _ant(bg.url)
        a.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=_grown(1))
        assert not _pages(sim.log[-1]["raw"])
        a.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=_grown(10))
        assert _pages(sim.log[-1]["raw"]) and sim.log[-1]["prompt_tokens"] < 0.5 * 6000
        assert [e["kind"] for e in sim.log] == ["ok", "ok"]


def test_compact_at_keeps_the_cut_while_the_grown_request_fits_the_ceiling(tmp_path):
    """With ``compact_at``, the request after a compaction is compacted with the same cut even where the whole
    conversation fits the budget (it was sent whole before, labelled sticky, with no pages)."""
    from snapglyph.serve.planner import Planner
    from snapglyph.compaction.keys import conversation_id
    from snapglyph.serve.state import StateDir
    planner = Planner(StateDir(tmp_path / "state"), ServeConfig("http://127.0.0.1:9", window=8000, compact_at=0.5))
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [
        {"role": "assistant" if i % 2 else "user", "content": f"step {i} " + "word " * 300} for i in range(12)]}
    key = conversation_id("anthropic", body)
    first = planner.before(key, "anthropic", body, "claude")
    assert first.action == "compacted" and first.pages == 1 and 1 < first.cut < 12
    assert 0.5 * 8000 < first.tokens_before and first.tokens_after < first.tokens_before
    grown = dict(body, messages=body["messages"] + [{"role": "user", "content": "and now?"}])
    again = planner.before(key, "anthropic", grown, "claude")           # grown, yet under the 7360 ceiling
    assert again.action == "sticky" and again.pages == 1 and again.cut == first.cut
    assert first.tokens_before < again.tokens_before < 7360 and first.tokens_after < again.tokens_after
    assert len(json.loads(again.data)["messages"]) == len(json.loads(first.data)["messages"]) + 1 and not again.error


def test_a_killed_proxy_resumes_its_conversations(tmp_path):
    """A proxy process recovers from an overflow and is killed (SIGKILL); a new proxy on the same state folder
    compacts the conversation's next request with the same cut: the same pages, byte for byte."""
    import subprocess
    import sys
    import time

    import snapglyph.compaction.page_cache as page_cache
    state = tmp_path / "state"
    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=6000) as sim:
        sock = bind("127.0.0.1", 0)
        port = sock.getsockname()[1]
        sock.close()
        p = subprocess.Popen([sys.executable, "-m", "snapglyph.cli", "serve", "--upstream", sim.base_url,
                              "--port", str(port), "--state", str(state)], stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(1200):
                try:
                    httpx.get(url + "/snapglyph/status", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            _ant(url).messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=_grown(12))
        finally:
            p.kill()
            p.wait(10)
        before = _pages(sim.log[-1]["raw"])
        page_cache._PAGES.clear()                      # nothing rendered survives but the state folder
        with _proxy(sim, tmp_path) as bg:
            _ant(bg.url).messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=_grown(14))
            conv = httpx.get(bg.url + "/snapglyph/status").json()["conversations"][0]
    assert [e["kind"] for e in sim.log] == ["overflow", "ok", "ok"]
    assert before and _pages(sim.log[-1]["raw"]) == before and conv["cuts"] == 1
    assert len(json.loads(sim.log[-1]["raw"])["messages"]) == len(json.loads(sim.log[-2]["raw"])["messages"]) + 4


def _post(url: str, body: dict) -> httpx.Response:
    return httpx.post(url + "/v1/messages", content=json.dumps(body).encode(), timeout=120,
                      headers={"x-api-key": "x", "anthropic-version": "2023-06-01", "content-type": "application/json"})


def test_a_numberless_overflow_far_past_the_window_shrinks_on_every_call(tmp_path):
    """Bedrock's body names no numbers: a request over 3.26 times the window cannot fit on the first retry (a third
    of it, less the margin: compaction.budget.window_guess), but each overflow of a compacted request lowers the
    learned window from what was sent (an earlier guess above it is disproven), so the client's next calls get
    through instead of repeating the same refused request."""
    with Simulator(lambda d, b: answer("noted"), provider="bedrock", context_window=6_000) as sim, \
            _proxy(sim, tmp_path) as bg:
        body = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": _grown(60)}      # 45,321 tokens
        codes = [_post(bg.url, body).status_code for _ in range(4)]
    sizes = [e["prompt_tokens"] for e in sim.log]
    assert codes[-1] == 200 and 400 in codes, (codes, sizes)
    refused = [e["prompt_tokens"] for e in sim.log if e["kind"] == "overflow"]
    assert refused == sorted(refused, reverse=True) and len(set(refused)) == len(refused), sizes   # each smaller


def test_a_lone_surrogate_in_the_head_is_sent_back_as_it_came(tmp_path):
    """A head item holding a lone surrogate (a JSON escape: UTF-8 cannot hold it) is relayed escaped, not a 500."""
    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=6000) as sim, \
            _proxy(sim, tmp_path) as bg:
        msgs = _grown(12)
        msgs[0] = {"role": "user", "content": "Task \ud800: watch the logs."}
        r = _post(bg.url, {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": msgs})
    assert r.status_code == 200, r.text
    assert [e["kind"] for e in sim.log] == ["overflow", "ok"] and b"Task \\ud800:" in sim.log[-1]["raw"]
