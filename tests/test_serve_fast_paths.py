"""serve's fast paths give the same bytes and counts as the slow ones.

- A pass-through: the upstream receives the client's bytes exactly, also where the fast JSON reading (orjson) reads
  the body otherwise than the standard library (an integer past 64 bits, ``NaN``, a lone surrogate escape,
  duplicate keys) and for a 700 KB body.
- A recovery: the compacted request holds the client's head exactly as the standard library reads it (an integer past
  64 bits stays an integer); its source store is written after the retry went out.
- Counting: inside :func:`snapglyph.providers.tokens.counted_once` each text is encoded once, and the counts are
  those outside it; the planner's recovery (its estimate, then the compaction) encodes no text twice.
"""

from __future__ import annotations

import collections
import json
import time

import httpx
import pytest

from snapglyph.providers import tokens
from snapglyph.providers.overflow import detect
from snapglyph.serve.app import ServeConfig
from snapglyph.serve.planner import Planner
from snapglyph.serve.state import StateDir
from snapglyph.testing import Simulator, answer

pytest.importorskip("uvicorn")
from snapglyph.serve.run import Background  # noqa: E402

HEADERS = {"content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01"}
BIG = 18446744073709551616          # 2**64: orjson reads it as a float


def _long_body(n: int = 60) -> dict:
    turns = [{"role": "assistant" if i % 2 else "user", "content": f"step {i}: " + "log line of a build\n" * 120}
             for i in range(n)]
    return {"model": "claude-sonnet-4-5", "max_tokens": 256, "metadata": {"user_id": "u1"}, "messages": turns}


@pytest.mark.parametrize("raw", [
    b'{"model": "claude-sonnet-4-5", "max_tokens": 20, "metadata": {"n": 18446744073709551616}, '
    b'"messages": [{"role": "user", "content": "hi"}]}',
    b'{"model": "claude-sonnet-4-5", "max_tokens": 20, "temperature": NaN, "messages": [{"role": "user", '
    b'"content": "a \\ud800 b"}]}',
    b'{"model": "claude-sonnet-4-5", "model": "claude-sonnet-4-5", "max_tokens": 20, "messages": '
    b'[{"role": "user", "content": "caf\\u00e9 1.0e+00"}]}  ',
    json.dumps(_long_body(400), indent=1).encode(),
], ids=["int-past-64-bits", "nan-and-lone-surrogate", "duplicate-keys", "700-kb"])
def test_a_pass_through_sends_the_clients_bytes_exactly(tmp_path, raw):
    with Simulator([answer("ok")] * 2, provider="anthropic", context_window=10 ** 7) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg, httpx.Client() as c:
        r = c.post(bg.url + "/v1/messages", content=raw, headers=HEADERS, timeout=60)
        assert r.status_code == 200 and sim.log[-1]["raw"] == raw and r.content == sim.log[-1]["sent"]


def test_a_recovery_keeps_an_integer_past_64_bits_and_saves_the_store_after(tmp_path):
    body = _long_body()
    body["messages"][0]["content"] = [{"type": "text", "text": body["messages"][0]["content"]}]
    body["metadata"] = {"user_id": "u1", "n": BIG}
    raw = json.dumps(body).encode()
    with Simulator([answer("ok")] * 2, provider="anthropic", context_window=6000) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg, httpx.Client() as c:
        r = c.post(bg.url + "/v1/messages", content=raw, headers=HEADERS, timeout=120)
        assert r.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow", "ok"]
        sent = sim.log[-1]["raw"]
        assert b'"n":18446744073709551616' in sent and json.loads(sent)["metadata"] == body["metadata"]
        stores = tmp_path / "state" / "conversations"
        deadline = time.monotonic() + 30
        while not list(stores.glob("*.store.jsonl")) and time.monotonic() < deadline:
            time.sleep(0.05)                      # written by a worker thread while the answer is relayed
        (store,) = stores.glob("*.store.jsonl")
        assert "step 1: log line of a build" in store.read_text(encoding="utf-8")


def test_recover_later_leaves_the_store_to_save_store(tmp_path):
    planner = Planner(StateDir(tmp_path), ServeConfig("http://127.0.0.1:9", window=6000))
    ov = detect(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                 "message": "prompt is too long: 9000 tokens > 6000 maximum"}})
    out = planner.recover("0123456789abcdef", "anthropic", _long_body(), "claude", ov, later=True)
    path = planner.states.store_path("0123456789abcdef")
    assert not out.error and out.action == "recovered" and not path.exists()
    planner.save_store("0123456789abcdef")
    assert "step 1: log line of a build" in path.read_text(encoding="utf-8")
    path.unlink()
    planner.save_store("0123456789abcdef")               # saved once: nothing left to write
    assert not path.exists()


@pytest.fixture
def encoded(monkeypatch):
    """The texts tiktoken encodes, in order (from every thread)."""
    seen: list[str] = []
    for name in ("cl100k_base", "o200k_base"):
        enc = tokens._load(name)
        if enc is not None:
            orig = enc.encode_ordinary
            monkeypatch.setattr(enc, "encode_ordinary", lambda text, orig=orig: (seen.append(text), orig(text))[1])
    return seen


def test_counted_once_encodes_a_text_once_with_the_same_counts(encoded):
    texts = [f"line {i} of a log\n" * (40 + i) for i in range(30)]
    outside = [tokens.count_for_profile(t, "claude") for t in texts], tokens.count_many_for_profile(texts, "openai")
    encoded.clear()
    with tokens.counted_once():
        inside = [tokens.count_for_profile(t, "claude") for t in texts], tokens.count_many_for_profile(texts, "openai")
        with tokens.counted_once():                                     # a nested block shares the outer one
            assert tokens.count_many_for_profile(texts[:3], "claude") == outside[0][:3]
    assert inside == outside and sorted(encoded) == sorted(texts)
    assert tokens._once.memo is None
    tokens.count_for_profile(texts[0], "claude")                         # outside: encoded again
    assert encoded.count(texts[0]) == 2


def test_a_recovery_encodes_no_text_twice(tmp_path, encoded):
    planner = Planner(StateDir(tmp_path), ServeConfig("http://127.0.0.1:9", window=6000))
    ov = detect(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                 "message": "prompt is too long: 9000 tokens > 6000 maximum"}})
    out = planner.recover("0123456789abcdef", "anthropic", _long_body(), "claude", ov)
    twice = {t[:40]: n for t, n in collections.Counter(encoded).items() if n > 1 and len(t) > 200}
    assert not out.error and out.pages >= 1 and twice == {}


def _post(c: httpx.Client, url: str, body: dict, caller: str) -> httpx.Response:
    return c.post(url + "/v1/messages", content=json.dumps(body).encode(), timeout=120,
                  headers={**HEADERS, "x-snapglyph-conversation": caller})


def test_a_request_of_a_caller_with_nothing_compacted_is_sent_before_it_is_read(tmp_path):
    small = {"model": "claude-sonnet-4-5", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}
    with Simulator([answer("ok")] * 8, provider="anthropic", context_window=9000) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg, httpx.Client() as c:
        early = bg.app.state.proxy.early
        assert _post(c, bg.url, small, "a").status_code == 200 and early.sent == 0      # under MIN_BYTES: read first
        early.min_bytes = 0
        assert _post(c, bg.url, small, "a").status_code == 200 and early.sent == 1
        got = {k.lower(): v for k, v in sim.log[-1]["headers"].items()}
        assert sim.log[-1]["raw"] == json.dumps(small).encode() and "transfer-encoding" not in got
        assert got["content-length"] == str(len(json.dumps(small).encode()))
        assert _post(c, bg.url, _long_body(), "b").status_code == 200 and early.sent == 2   # refused, recovered
        assert [e["kind"] for e in sim.log[-2:]] == ["overflow", "ok"]
        grown = _long_body(62)
        assert _post(c, bg.url, grown, "b").status_code == 200 and early.sent == 2          # compacted first
        assert sim.log[-1]["kind"] == "ok" and sim.log[-1]["images"] and sim.log[-2]["kind"] == "ok"
        # "a" has nothing compacted, yet b's overflow taught a window for the model: a new conversation to it may
        # be compacted before it is sent (issue 35 item 3), so every request is read first from now on
        assert bg.app.state.proxy.planner.book.limits_known()
        assert _post(c, bg.url, small, "a").status_code == 200 and early.sent == 2
    with Simulator([answer("ok")] * 2, provider="anthropic", context_window=6000) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg, httpx.Client() as c:
        early = bg.app.state.proxy.early               # a state folder holding a conversation: every request read first
        early.min_bytes = 0
        assert not early.on and _post(c, bg.url, small, "a").status_code == 200 and early.sent == 0
