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
