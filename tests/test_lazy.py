"""Lazy pages (snapglyph.raster.lazy) against the pages render_packed draws: the same counts from layout alone, the
same PNG bytes and text once drawn, whatever the order they are looked at in; one drawing pass for a page and the
later ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapglyph import load
from snapglyph.raster import lazy
from snapglyph.raster.lazy import render_lazy
from snapglyph.raster.pool import render_packed

ROOT = Path(__file__).resolve().parent.parent
_FIELDS = ("index", "chars", "replaced", "zero_width", "removed", "first_id", "last_id", "fill", "cell", "rows",
           "note", "width", "height")


@pytest.fixture(scope="module")
def session():
    return load(ROOT / "examples" / "pi-session" / "large-session.jsonl").messages


@pytest.mark.parametrize("mode", ["auto", "dense", "lines"])
def test_lazy_pages_are_the_packed_pages(session, mode):
    want = render_packed(session, mode=mode)
    got = render_lazy(session, mode=mode)
    assert len(got) == len(want) >= 8
    assert [[getattr(p, f) for f in _FIELDS] for p in got] == [[getattr(p, f) for f in _FIELDS] for p in want]
    assert all(p._packed is None for p in got)  # nothing drawn by layout
    order = [len(got) - 3, 1, len(got) - 1, 0]  # a late page first, then earlier ones
    for i in order:
        assert got[i].png == want[i].png and got[i].text == want[i].text
    assert [p.png for p in got] == [p.png for p in want]
    assert (got[2].pixels == want[2].pixels).all()


def test_one_pass_draws_a_page_and_the_later_ones(session, monkeypatch):
    pages = render_lazy(session, workers=2)
    passes = []
    draw = lazy._Pages.draw_from
    monkeypatch.setattr(lazy._Pages, "draw_from", lambda self, first: passes.append(first) or draw(self, first))
    n = len(pages)
    pages[n - 4].png
    assert [p._packed is not None for p in pages] == [False] * (n - 4) + [True] * 4
    for p in pages[n - 4:]:
        p.png, p.text
    pages[0].text
    assert passes == [n - 4, 0] and all(p._packed is not None for p in pages)


def test_the_memo_keeps_each_segment_for_the_drawing_pass(session):
    """The layout pass leaves every segment it encoded in the memo; the drawing pass takes them out (a segment
    whose text comes again is encoded again there and stays: at most one entry per repeated text)."""
    from collections import Counter

    from snapglyph.model.document import document_for
    memo: dict = {}
    pages = render_lazy(session, encoded=memo)
    kept = len(memo)
    repeated = sum(1 for n in Counter(s.text for s in document_for(session, "auto").segments).values() if n > 1)
    assert kept > 4 * repeated
    pages[0].png
    assert len(memo) <= repeated
