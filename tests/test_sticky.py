"""Sticky compaction through the public API: ``compact(..., cut=earlier.cut)`` keeps the pages and the snapshot
text (reading guide, the user's words), grows the tail, and refuses once the tail no longer fits."""

import re

import pytest

from snapglyph import BudgetError, Message, Part, compact
from snapglyph.compaction.sticky import CutNoLongerFits


def _conv(n: int) -> list[Message]:
    return [Message(0, "user", [Part("text", text="the task")])] + [
        Message(i, "assistant" if i % 2 else "user",
                [Part("text", text=f"step {i} " + "word " * 300 + f"id_{i}_x")]) for i in range(1, n)]


def _snapshot(res) -> list:
    for m in res.request["messages"]:
        if isinstance(m["content"], list) and any(b.get("type") == "image" for b in m["content"]):
            return m["content"]
    raise AssertionError("no snapshot message")


def test_reused_cut_keeps_pages_and_snapshot_text_and_grows_the_tail():
    kw = {"dialect": "anthropic", "max_tokens": 100}
    first = compact(_conv(12), budget=4000, **kw)
    assert first.cut.first_tail == first.tail_ids[0] and first.cut.kept == len(first.pages) == 1
    again = compact(_conv(13), budget=4400, cut=first.cut, **kw)
    assert again.cut == first.cut
    assert [p.png for p in again.pages] == [p.png for p in first.pages]
    assert _snapshot(again) == _snapshot(first)              # images, guide and the user's words: the same bytes
    text = "\n".join(b["text"] for b in _snapshot(again) if b["type"] == "text")
    assert "Pixels can be misread" in text and "messages #1-#" in text    # the guide and the ranges, as first sent
    assert again.tail_ids == list(range(first.cut.first_tail, 13))
    assert first.tokens_after < again.tokens_after <= 4400
    grown, n = again, 13
    with pytest.raises(CutNoLongerFits, match=r"no longer fits: (\d+) tokens > 4400") as e:
        while n < 40:                                   # the tail grows a message at a time until it no longer fits
            n += 1
            grown = compact(_conv(n), budget=4400, cut=first.cut, **kw)
            assert grown.cut == first.cut and grown.tokens_after <= 4400
    assert isinstance(e.value, BudgetError)
    assert int(re.search(r"fits: (\d+) tokens", str(e.value)).group(1)) > 4400 >= grown.tokens_after


def test_changed_prefix_refuses_the_cut():
    kw = {"dialect": "anthropic", "max_tokens": 100}
    first = compact(_conv(12), budget=4000, **kw)
    edited = _conv(13)
    edited[3] = Message(3, "assistant", [Part("text", text="rewritten")])
    with pytest.raises(CutNoLongerFits, match=f"before #{first.cut.first_tail} changed"):
        compact(edited, budget=4400, cut=first.cut, **kw)


def test_reused_cut_compacts_where_the_whole_conversation_would_fit():
    """A reused cut keeps its pages even when the whole grown conversation fits the budget (it passed the request
    through whole before: the pages and the provider's cache of them were lost, and the returned cut could not be
    reused)."""
    kw = {"dialect": "anthropic", "max_tokens": 100}
    first = compact(_conv(12), budget=4000, **kw)
    again = compact(_conv(13), budget=6000, cut=first.cut, **kw)     # about 5000 tokens whole: fits 6000
    assert again.tokens_before <= 6000 and not again.passthrough and again.cut == first.cut
    assert [p.png for p in again.pages] == [p.png for p in first.pages]
    assert again.tail_ids == list(range(first.cut.first_tail, 13)) and again.tokens_after < again.tokens_before




def _sticky_texts(planner_cut=None) -> tuple[list, int]:
    """Drive 80 turns of a build log growing about 1,500 tokens a turn through ``serve`` in front of the simulator
    at a 32,768-token window (the storm bench's conversation, bench/storms.py: the first cut is a recovery from the
    simulator's overflow answer); per kept cut, the snapshot texts the upstream received while it was kept.
    ``planner_cut``: a stand-in for the planner's ``Cut`` (the counter-example)."""
    import json
    import tempfile
    from pathlib import Path
    from unittest import mock
    httpx = pytest.importorskip("httpx", reason="serve's tests need httpx (the integrations extra)")
    pytest.importorskip("starlette", reason="serve needs starlette (the serve extra)")
    from snapglyph.serve.config import ServeConfig
    from snapglyph.serve.run import Background
    from snapglyph.testing import Simulator, answer
    sim = Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=32_768).start()
    msgs, kept, cc = [], {}, {"type": "ephemeral"}
    patch = mock.patch("snapglyph.serve.planner.Cut", planner_cut) if planner_cut else mock.MagicMock()
    with patch, tempfile.TemporaryDirectory() as state, Background(ServeConfig(sim.base_url, state=Path(state))
                                                                  ).start() as bg, httpx.Client(timeout=120) as c:
        for n in range(80):
            if msgs:
                msgs[-1]["content"][-1].pop("cache_control", None)
                msgs.append({"role": "assistant", "content": "noted"})
            msgs.append({"role": "user", "content": [{"type": "text", "cache_control": cc, "text": "".join(
                f"turn {n} build line {k}: target_{k % 13}.o compiled in {k * 7 % 900} ms, warnings=0\n"
                for k in range(68))}]})
            body = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": msgs,
                    "system": [{"type": "text", "text": "You watch build logs.", "cache_control": cc}]}
            n0 = len(sim.log)
            r = c.post(bg.url + "/v1/messages", json=body, headers={"x-api-key": "x",
                                                                    "anthropic-version": "2023-06-01"})
            assert r.status_code == 200, r.text
            sent = json.loads([e for e in sim.log[n0:] if e["kind"] == "ok"][-1]["raw"])
            snap = [m for m in sent["messages"] if isinstance(m["content"], list)
                    and any(b.get("type") == "image" for b in m["content"])]
            convs = c.get(bg.url + "/snapglyph/status").json()["conversations"]
            if snap:
                text = "\n".join(b["text"] for b in snap[0]["content"] if b["type"] == "text")
                kept.setdefault(convs[0]["cuts"], []).append(text)
    sim.stop()
    return [texts for texts in kept.values() if len(texts) > 1], len(kept)


def test_kept_cut_sends_its_snapshot_text_byte_for_byte():
    """While serve keeps a cut, the snapshot text after its pages is the cut's, byte for byte: the section of the
    user's words is written within the cap the cut recorded (``Cut.user``), not fitted again to the room the
    growing tail leaves (which made it appear and go while the cut was kept: the storm bench saw 15 such turns
    under 90 % of their bytes cached). The counter-example (the cap not passed on) shows the test can fail."""
    from snapglyph.compaction.sticky import Cut
    groups, made = _sticky_texts()
    assert made >= 4 and sum(len(g) for g in groups) >= 40
    assert all(len(set(g)) == 1 for g in groups)
    unfrozen, _ = _sticky_texts(lambda first_tail, prefix, kept, user=-1: Cut(first_tail, prefix, kept))
    assert any(len(set(g)) > 1 for g in unfrozen)
