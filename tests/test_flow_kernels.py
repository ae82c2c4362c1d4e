"""The flow block's kernels (raster/_flow_kernels.py) give the streams of the plain-Python and numpy
flow_stream they replaced (kept here as the reference, as it was at ad3ba3b), element for element and dtype for
dtype: on generated blocks (indentation, blank lines, wide glyphs, lines wider than a row, line-number gutters) and
on every flow block of ../shared/data's transcripts."""

from __future__ import annotations

import random

import numpy as np
import pytest

from snapglyph.raster import flow
from snapglyph.raster._codes import BLANK, CODE_NEWLINE, CODE_NOP, CODE_ROW_START


def _wrapped_col(cells: np.ndarray, cols: int) -> int:
    col = 0
    for w in cells[cells > 0].tolist():
        col = w if col + w > cols else col + w
    return col


def _gutter_step(codes, out, starts, text_at, line, gutter):
    """The gutter step flow_stream calls, by whichever name the module has (issue 30 renames and widens it)."""
    if hasattr(flow, "_gutters"):
        flow._gutters(codes, out, starts, text_at, line, gutter)
    else:
        flow._halve_after_gutters(codes, out, text_at, line, *gutter[:2])


def reference(codes, srcw, cols, gwidth, gutter=None):
    """flow_stream in plain Python and numpy (its gutter step the module's own)."""
    nl = np.flatnonzero(codes == CODE_NEWLINE)
    starts = np.concatenate([[0], nl + 1])
    starts = starts[starts < len(codes)]
    line = np.cumsum(codes == CODE_NEWLINE) - (codes == CODE_NEWLINE)
    pos = np.arange(len(codes)) - starts[line]
    far = np.full(len(starts), len(codes), np.int64)
    held = np.flatnonzero((codes != BLANK) & (codes != CODE_NEWLINE))
    first = held[np.flatnonzero(np.diff(line[held], prepend=-1))]
    far[line[first]] = pos[first]
    strip = int(far.min()) if len(held) else 0
    out = codes.copy()
    keep = strip + (np.where(far < len(codes), far, strip) - strip + 1) // 2
    out[(codes == BLANK) & (pos < far[line]) & ((pos < strip) | (pos >= keep[line]))] = CODE_NOP
    if gutter is not None:
        _gutter_step(codes, out, starts, starts + np.minimum(far, len(codes) - 1), line, gutter)
    cells = np.where(out >= 0, gwidth[np.maximum(out, 0)], 0) + (out == CODE_NEWLINE)
    at = [0]
    col = 0
    ends = np.append(starts[1:], len(codes)).tolist()
    for s, e, c in zip(starts.tolist(), ends, np.add.reduceat(cells, starts).tolist()):
        if col > 0 and col + c > cols:
            at.append(s)
            col = 0
        col = _wrapped_col(cells[s:e], cols) if c > cols else col + c
    return np.insert(out, at, CODE_ROW_START), np.insert(srcw, at, 0)


def _same(codes, srcw, cols, gwidth, gutter=None):
    want = reference(codes, srcw, cols, gwidth, gutter)
    got = flow.flow_stream(codes, srcw, cols, gwidth, gutter)
    assert [a.dtype for a in got] == [a.dtype for a in want]
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


_DIGITS = np.arange(20, 30, dtype=np.int32)
_ARROW = 30


def _block(rnd: random.Random, gutter: bool) -> np.ndarray:
    """A block's stream: lines of blanks, glyphs 1-12 (12 is wide), digits and an arrow, a newline after each but
    perhaps the last."""
    out = []
    for _ in range(rnd.randint(1, 12)):
        if gutter and rnd.random() < 0.6:
            out += [BLANK] * rnd.randint(0, 4) + [int(d) for d in rnd.choices(_DIGITS.tolist(), k=rnd.randint(1, 3))]
            out.append(_ARROW)
        out += [BLANK] * rnd.choice([0, 0, 1, 2, 4, 8, 9])
        out += rnd.choices([BLANK, 1, 2, 3, 5, 7, 12] + _DIGITS[:3].tolist(), k=rnd.choice([0, 0, 3, 10, 40, 90]))
        out.append(CODE_NEWLINE)
    if rnd.random() < 0.5:
        out.pop()
    return np.array(out or [BLANK], np.int32)


@pytest.mark.parametrize("seed", range(6))
def test_generated_blocks(seed):
    rnd = random.Random(seed)
    gwidth = np.ones(64, np.uint8)
    gwidth[12] = 2
    light = np.arange(40, 51, dtype=np.int32)
    for _ in range(300):
        gutter = rnd.random() < 0.4
        codes = _block(rnd, gutter)
        srcw = np.array(rnd.choices([0, 1, 1, 2], k=len(codes)), np.uint8)
        g = None if not gutter else rnd.choice([(_DIGITS, _ARROW), (_DIGITS, _ARROW, light)])
        _same(codes, srcw, rnd.choice([6, 11, 30, 100]), gwidth, g)


def test_docstring_block_and_blank_lines():
    c = np.array([0, 0, 5, 6, -1, 0, 0, 0, 0, 5, -1, 0, 0, 7], np.int32)
    _same(c, np.ones(14, np.uint8), 6, np.ones(8, np.uint8))
    _same(np.array([0, 0, -1, 0, -1], np.int32), np.ones(5, np.uint8), 6, np.ones(8, np.uint8))  # blanks only


def test_every_flow_block_of_the_shared_transcripts(monkeypatch):
    from conftest import shared_path

    from snapglyph.model.document import document_for
    from snapglyph.raster import stream
    from snapglyph.raster.render import iter_pages
    from snapglyph.readers.registry import load

    data = shared_path("data")
    seen = []

    def both(codes, srcw, cols, gwidth, gutter=None):
        _same(codes, srcw, cols, gwidth, gutter)
        seen.append(gutter is not None)
        return flow.flow_stream(codes, srcw, cols, gwidth, gutter)

    monkeypatch.setattr(stream, "flow_stream", both)
    names = ("chat-history.md", "*.jsonl", "*.traj", "session-*.json", "basic_gui_mode.json")
    paths = sorted({p for pattern in names for p in data.rglob(pattern)})
    for path in paths:
        doc = document_for(load(path).messages, "auto")
        for _ in iter_pages(doc, reuse_buffer=True, draw=False):
            pass
    assert len(paths) >= 7 and len(seen) > 100 and any(seen), (len(paths), len(seen))


@pytest.mark.parametrize("seed", range(4))
def test_block_rows_both_is_band_rows_and_flow_rows(seed):
    from snapglyph.raster import native
    both = native.kernels().block_rows_both
    rnd = random.Random(seed)
    for _ in range(2000):
        n = rnd.randint(1, 30)
        widths = np.array([rnd.choice([0, 0, 3, 20, 60, 150, 400]) for _ in range(n)], np.int32)
        leads = np.array([min(int(w) or 99, rnd.choice([0, 2, 4, 8, 13])) for w in widths], np.int32)
        k, colw, cols = rnd.randint(1, 6), rnd.choice([6, 7, 29, 60, 182]), rnd.choice([6, 91, 182])
        assert both(widths, leads, k, colw, cols) == (flow.band_rows(widths, leads, k, colw),
                                                       flow.flow_rows(widths, leads, cols))
