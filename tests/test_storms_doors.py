"""Issue 35 item 4 through every door: the one storm rule (:mod:`snapglyph.compaction.storms`).

- six requests of one conversation sent at the same time through ``serve``, all over the window: each is recovered,
  and the cuts made for them count as one (none of them was answered before the others were cut), so none gets the
  storm error;
- each adapter (:class:`~snapglyph.integrations._common.ConversationCompactor`) keeps its cut while the tail fits,
  counts its requests and new cuts, and ends a storm with the one :class:`~snapglyph.errors.CompactionStormError`.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from snapglyph._config import STORM_CUTS, STORM_REQUESTS
from snapglyph.compaction.storms import note_cut, storm
from snapglyph.testing import Simulator, answer

HEADERS = {"x-api-key": "x", "anthropic-version": "2023-06-01"}


def _turns(n: int, lines: int = 40) -> list[dict]:
    msgs = [{"role": "user", "content": "Task: watch the build log lines I paste and say what stands out."}]
    for k in range(n):
        msgs += [{"role": "assistant", "content": "noted"},
                 {"role": "user", "content": f"turn {k}: " + " ".join(f"step{k}_{j}=ok" for j in range(lines))}]
    return msgs


def test_the_counting_rule():
    cuts: list[int] = []
    for request in [0, 0, 0, 0, 0, 0]:                 # six cuts of requests none of which was answered yet
        assert not storm(cuts, request)
        cuts = note_cut(cuts, request)
    assert cuts == [0]
    for request in range(1, STORM_CUTS):
        cuts = note_cut(cuts, request)
    assert cuts == list(range(STORM_CUTS)) and storm(cuts, STORM_CUTS) and not storm(cuts, STORM_CUTS - 1)
    assert not storm(cuts, STORM_REQUESTS + 1) and not storm(cuts, 7, limit=0)


def test_six_concurrent_requests_of_one_conversation_through_serve(tmp_path):
    pytest.importorskip("uvicorn")
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.run import Background
    window = 6000

    async def six(url):
        async with httpx.AsyncClient(timeout=120) as c:
            bodies = [{"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": _turns(40 + k)} for k in range(6)]
            return await asyncio.gather(*(c.post(url + "/v1/messages", json=b, headers=HEADERS) for b in bodies))

    with Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=window) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg:
        answers = asyncio.run(six(bg.url))
        status = httpx.get(bg.url + "/snapglyph/status", timeout=30).json()
        kinds = sorted(e["kind"] for e in sim.log)
    assert [r.status_code for r in answers] == [200] * 6, [r.text[:200] for r in answers if r.status_code != 200]
    assert [r.json()["content"][0]["text"] for r in answers] == ["noted"] * 6
    (conv,) = status["conversations"]
    assert kinds == ["ok"] * 6 + ["overflow"] * 6                 # each sent as it came, each recovered once
    assert conv["requests"] == 6 and conv["cuts"] == 6             # six recoveries, each a cut of its own ...
    assert conv["cut_requests"] == [0]                             # ... counted as one: none was answered before
