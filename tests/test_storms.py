"""Issue 35 item 4: no compaction storms through ``serve``.

A conversation growing a little each turn is driven 200 turns through ``serve`` in front of the simulator: the
rewrites (new cuts) are counted, each must hold for several turns, and the pages between two cuts stay
byte-identical. A conversation whose every turn needs a new cut gets one clear error after ``STORM_CUTS`` of them,
naming its largest message, and nothing more is sent upstream. Tiny messages keep it fast.
"""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from snapglyph._config import STORM_CUTS
from snapglyph.compaction.growth import cut_target, grown, storm
from snapglyph.testing import Simulator, answer

pytest.importorskip("uvicorn")

HEADERS = {"x-api-key": "x", "anthropic-version": "2023-06-01"}


def _proxy(sim: Simulator, tmp_path, **kw):
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.run import Background
    return Background(ServeConfig(sim.base_url, state=tmp_path / "state", **kw)).start()


def _pages(raw: bytes) -> list[str]:
    body = json.loads(raw)
    return [b["source"]["data"] for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "image"]


def test_the_rules():
    assert [round(grown(g, b, n)) for g, b, n in [(0, None, 10), (0, 10, 160), (150, 160, 300), (145, 300, 250)]] == [
        0, 150, 145, 145]
    assert cut_target(5520, 64, 150.0, share=0.6) == 4020 and cut_target(5520, 64, 0.0, share=0.6) == 3337
    assert storm([1, 2, 3, 4, 5], 6) and not storm([1, 2, 3, 4, 5], 11) and not storm([1, 2, 3, 4], 5)


def test_200_turns_of_a_growing_conversation_cut_rarely(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="snapglyph.serve")
    turns, window = 200, 6000
    msgs = [{"role": "user", "content": "Task: watch the build log lines I paste and say what stands out."}]
    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=window) as sim, \
            _proxy(sim, tmp_path) as bg, httpx.Client(timeout=120) as c:
        for n in range(turns):
            msgs += [{"role": "assistant", "content": "noted"},
                     {"role": "user", "content": f"turn {n}: " + " ".join(f"step{n}_{k}=ok" for k in range(40))}]
            r = c.post(bg.url + "/v1/messages", json={"model": "claude-sonnet-4-5", "max_tokens": 64,
                                                       "messages": msgs}, headers=HEADERS)
            assert r.status_code == 200, (n, r.text)
        conv = c.get(bg.url + "/snapglyph/status").json()["conversations"][0]
    kinds = [e["kind"] for e in sim.log]
    assert kinds.count("overflow") == 1 and kinds.count("ok") == turns
    first = kinds.index("overflow")
    pages = [_pages(e["raw"]) for e in sim.log[first + 1:]]
    cuts = 1 + sum(1 for a, b in zip(pages, pages[1:]) if a != b)
    compacted = len(pages)
    assert conv["cuts"] == cuts and conv["growth"] > 0
    assert cuts * 8 <= compacted, (cuts, compacted)              # a new cut at most every 8 turns
    print(f"200 turns: {compacted} compacted requests, {cuts} cuts")
    lines = [r.getMessage() for r in caplog.records if r.name == "snapglyph.serve"]
    assert not any("cannot be kept under the window" in line for line in lines)


def test_a_conversation_that_needs_a_cut_every_turn_gets_one_clear_error(tmp_path):
    window = 6000
    msgs = [{"role": "user", "content": "Task: read each file I paste."}]
    codes = []
    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=window) as sim, \
            _proxy(sim, tmp_path) as bg, httpx.Client(timeout=120) as c:
        for n in range(STORM_CUTS + 3):
            msgs += [{"role": "assistant", "content": "noted"},
                     {"role": "user", "content": f"file {n}:\n" + "\n".join(f"line {n}.{k}: value={k * 7}"
                                                                            for k in range(330))}]
            r = c.post(bg.url + "/v1/messages", json={"model": "claude-sonnet-4-5", "max_tokens": 64,
                                                       "messages": msgs}, headers=HEADERS)
            codes.append(r.status_code)
            if r.status_code != 200:
                break
        sent = len(sim.log)
    assert codes[-1] == 400 and codes[:-1] == [200] * (len(codes) - 1)
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error"
    assert err["message"].startswith(f"snapglyph serve: this conversation cannot be kept under the window: "
                                     f"{STORM_CUTS} new cuts in its last 10 requests")
    assert "; its largest message is messages[" in err["message"] and "(user, about 4," in err["message"]
    assert sent == len(sim.log) and sim.log[-1]["kind"] == "ok"     # the storm's request never went upstream


def test_a_stormed_conversation_is_answered_again_once_its_cuts_fall_out_of_the_window(tmp_path):
    """A storm's refused requests count as the conversation's: the same request sent again gets the storm error
    while five cuts are in its last ten requests, then goes through (it was refused for ever before: the refused
    requests were not counted, so the window never moved on)."""
    window = 6000
    msgs = [{"role": "user", "content": "Task: read each file I paste."}]
    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=window) as sim, \
            _proxy(sim, tmp_path) as bg, httpx.Client(timeout=120) as c:
        def post():
            return c.post(bg.url + "/v1/messages", json={"model": "claude-sonnet-4-5", "max_tokens": 64,
                                                          "messages": msgs}, headers=HEADERS).status_code
        n, code = 0, 200
        while code == 200 and n < STORM_CUTS + 3:
            msgs += [{"role": "assistant", "content": "noted"},
                     {"role": "user", "content": f"file {n}:\n" + "\n".join(f"line {n}.{k}: value={k * 7}"
                                                                            for k in range(330))}]
            code, n = post(), n + 1
        assert code == 400

        def counted() -> int:
            return c.get(bg.url + "/snapglyph/status").json()["conversations"][0]["requests"]
        before = counted()
        again = [post() for _ in range(10)]
        requests = counted() - before
    first = again.index(200)                             # refused while five cuts are in its last ten requests
    assert again[:first] == [400] * first and 0 < first < 10, again
    assert requests == len(again)                        # every request counted, the refused ones too
