"""Lazy pages (snapglyph.raster.lazy) against the pages render_packed draws: the same counts from layout alone, the
same PNG bytes and text once drawn, whatever the order they are looked at in; one drawing pass for a page and the
later ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapglyph import load
from snapglyph.raster import lazy
from snapglyph.raster.lazy import render_lazy
from snapglyph.raster.lazy import render_packed

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


def _mixed_messages():
    """Prose, a code block, a table, a segment longer than SPLIT (cut into pieces) and short turns."""
    from snapglyph._config import SPLIT
    from snapglyph.model.messages import Message, Part
    code = "".join(f"    def f{i}(x):\n        return x * {i}  # step {i}\n" for i in range(700))
    table = "".join(f"| row {i} | {i * i} | ok |\n" for i in range(400))
    long_log = "".join(f"line {i}: " + "x" * (i % 90) + "\n" for i in range(SPLIT // 40))
    texts = ["fix the parser", "word " * 3000, code, table, "short", long_log, "naïve café 日本語 " * 300, "done"]
    return [Message(i, "assistant" if i % 2 else "user", [Part("text", text=t)]) for i, t in enumerate(texts * 2)]


@pytest.mark.parametrize("mode", ["auto", "dense", "lines"])
def test_a_smaller_document_reuses_the_larger_ones_pages(session, mode):
    """A prefix of the messages laid out with ``like=`` the whole one: the pages of a layout of its own, in every
    field and, once drawn, in PNG bytes and text; and the reuse did take pages (the test exercises it)."""
    for msgs in (session, _mixed_messages()):
        memo: dict = {}
        whole = render_lazy(msgs, mode=mode, segments=memo)
        assert len(whole[0]._owner.marks) == len(whole)
        for n in (len(msgs) - 1, len(msgs) * 2 // 3, len(msgs) // 3):
            part = msgs[:n]
            want = render_packed(part, mode=mode)
            got = render_lazy(part, mode=mode, segments=memo, like=whole)
            kept = lazy._reusable(got[0]._owner, whole)
            assert 0 < kept < len(got), (n, kept, len(got))
            assert [[getattr(p, f) for f in _FIELDS] for p in got] == [[getattr(p, f) for f in _FIELDS] for p in want]
            assert [p.png for p in got[kept - 1:]] == [p.png for p in want[kept - 1:]]  # drawn from a mark
            assert got[0].png == want[0].png and got[-1].text == want[-1].text


def test_no_reuse_across_other_segments_or_settings(session):
    whole = render_lazy(session, segments={})
    assert lazy._reusable(whole[0]._owner, whole) == len(whole) - 1
    other = render_lazy(session[:-2], segments={}, like=whole)  # segments built again: other objects
    assert lazy._reusable(other[0]._owner, whole) == 0
    memo: dict = {}
    whole = render_lazy(session, segments=memo)
    dense = render_lazy(session[:-2], segments=memo, mode="dense", like=whole)
    assert lazy._reusable(dense[0]._owner, whole) == 0
    assert [p.png for p in dense] == [p.png for p in render_packed(session[:-2], mode="dense")]


def test_drawing_starts_at_the_first_page_wanted(session, monkeypatch):
    """A late page is drawn from its mark: the pieces before its chunk are not encoded again."""
    from snapglyph.raster import stream
    pages = render_lazy(session)
    seen = []
    real = stream.encode_segment
    monkeypatch.setattr(stream, "encode_segment", lambda text, *a, **k: seen.append(text) or real(text, *a, **k))
    want = render_packed(session)
    seen.clear()
    assert pages[-2].png == want[-2].png and pages[-1].png == want[-1].png
    assert 0 < len(seen) < sum(1 for _ in stream.segments(pages[0]._owner.doc)) // 2


def test_no_reuse_where_the_larger_document_switched_cells():
    """Wide characters late in the larger document switch its cell (5x8 has no legible CJK glyphs): a prefix
    without them keeps 5x8, so no page of the larger one may be taken (found by a fresh-eyes test)."""
    from snapglyph.model.messages import Message, Part
    msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"message {i} " + "word " * 3000)])
            for i in range(8)] + [Message(8, "user", [Part("text", text="日本語 end")])]
    memo: dict = {}
    whole = render_lazy(msgs, cell="5x8", segments=memo)
    got = render_lazy(msgs[:6], cell="5x8", segments=memo, like=whole)
    want = render_packed(msgs[:6], cell="5x8")
    assert whole[0].cell != want[0].cell  # the switch happened in the larger one only
    assert lazy._reusable(got[0]._owner, whole) == 0
    assert [[getattr(p, f) for f in _FIELDS] for p in got] == [[getattr(p, f) for f in _FIELDS] for p in want]
    assert [p.png for p in got] == [p.png for p in want]
    same = render_lazy(msgs[:6], cell="5x8", segments=memo, like=render_lazy(msgs[:7], cell="5x8", segments=memo))
    assert lazy._reusable(same[0]._owner, render_lazy(msgs[:7], cell="5x8", segments=memo)) > 0


def test_the_returned_list_is_the_callers(session, tmp_path):
    """Changing the list render_lazy returns does not break drawing; a file read as it is laid out is never a
    reuse (both found by a fresh-eyes test)."""
    from snapglyph.readers.textfile import TextFileDocument
    pages = render_lazy(session)
    want = render_packed(session)
    last = pages[-1]
    del pages[0]
    pages.reverse()
    assert last.png == want[-1].png and pages[-1].png == want[1].png
    path = tmp_path / "notes.txt"
    path.write_text("word " * 20000, encoding="utf-8")
    doc = TextFileDocument(path)
    got = render_lazy(doc, like=render_lazy(doc))
    assert [p.png for p in got] == [p.png for p in render_packed("word " * 20000)]
