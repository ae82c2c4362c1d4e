"""Numba kernels of a block laid out as flow (:func:`snapglyph.raster.flow.flow_stream`): stream codes in, stream
codes out.

A module of kernels like :mod:`snapglyph.raster._kernels` (compiled through its one :data:`~._kernels.jit`), kept
apart because it is a stage of its own: it rewrites a block's stream before layout, where the layout kernel draws
it. :func:`flow_indent` marks the indentation drawn at half its width, :func:`flow_breaks` puts the row starts
where a line would not fit whole; :func:`block_rows_both` is the planner's comparison of a block's rows in a band and
as flow (:func:`snapglyph.raster.flow.band_rows` and :func:`snapglyph.raster.flow.flow_rows`, the reference). Together they were 0.49 s of plain Python and numpy, holding the GIL, for the
6.8 M elements of flow blocks in the 10 M-character bench text (1,756 blocks; measured 2026-12-08); the tests hold
them equal to that plain-Python reference (tests/test_flow_kernels.py).
"""

from __future__ import annotations

import numpy as np

from ._codes import BLANK, CODE_NEWLINE, CODE_NOP, CODE_ROW_START
from ._kernels import jit

__all__ = ["block_rows_both", "flow_breaks", "flow_indent"]


@jit
def flow_indent(codes, out, starts, far):
    """Copy a flow block's stream ``codes`` into ``out`` with its indentation's dropped blanks made ``CODE_NOP``.

    Of a line's leading ``BLANK`` glyphs, those of the block's common indentation (``strip``: the fewest of a line
    that holds another element) and the second half (rounded down) of the rest become ``CODE_NOP``; a line of
    blanks only keeps none (the rule of :func:`snapglyph.raster.flow.flow_stream`).

    Parameters
    ----------
    codes : int32 array (n,)
        The block's stream codes (not modified).
    out : int32 array (n,)
        Written: the new codes.
    starts, far : int64 arrays (n + 1,)
        Written, for each line: its first element, and the position in it of its first element that is neither a
        blank nor a newline (``n`` where there is none).

    Returns
    -------
    (int, int)
        The number of lines (written to ``starts`` and ``far``) and ``strip``.

    Examples
    --------
    >>> c = np.array([0, 0, 5, -1, 0, 0, 0, 0, 5], np.int32)
    >>> out, st, fa = np.empty(9, np.int32), np.empty(10, np.int64), np.empty(10, np.int64)
    >>> flow_indent(c, out, st, fa), out.tolist(), st[:2].tolist(), fa[:2].tolist()
    ((2, 2), [-3, -3, 5, -1, -3, -3, 0, -3, 5], [0, 4], [2, 4])
    """
    n = len(codes)
    lines = 0
    for j in range(n):
        if j == 0 or codes[j - 1] == CODE_NEWLINE:
            starts[lines] = j
            far[lines] = n
            lines += 1
        c = codes[j]
        if c != BLANK and c != CODE_NEWLINE and far[lines - 1] == n:
            far[lines - 1] = j - starts[lines - 1]
    strip = n
    for k in range(lines):
        if far[k] < strip:
            strip = far[k]
    if strip >= n:  # no line holds an element but blanks and newlines
        strip = 0
    for k in range(lines):
        s = starts[k]
        e = starts[k + 1] if k + 1 < lines else n
        f = far[k]
        keep = strip + ((f if f < n else strip) - strip + 1) // 2
        for j in range(s, e):
            c = codes[j]
            p = j - s
            out[j] = CODE_NOP if c == BLANK and p < f and (p < strip or p >= keep) else c
    return lines, strip


@jit
def flow_breaks(out, srcw, gwidth, starts, lines, cols, new_codes, new_srcw):
    """Write a flow block's stream ``out`` (source weights ``srcw``) into ``new_codes`` and ``new_srcw`` with a
    ``CODE_ROW_START`` (weight 0) before the block and before each line that does not fit whole on the rest of
    its row (its cells and its newline's mark, one cell); the line after one wider than ``cols`` goes on along
    that line's last row, whose column is found as the prose layout wraps (a glyph that would cross the row's
    end starts the next row). Cells: ``gwidth`` of a glyph index, 1 for a newline, 0 for other codes.

    Parameters
    ----------
    out : int32 array (n,); srcw : uint8 array (n,)
    gwidth : uint8 array
        Cells of each glyph index.
    starts : int64 array
        The first element of each of the ``lines`` lines (:func:`flow_indent`).
    lines, cols : int
    new_codes : int32 array; new_srcw : uint8 array
        Written; at least ``n + lines + 1`` long.

    Returns
    -------
    int
        The elements written.

    Examples
    --------
    >>> out, st = np.array([5, 6, -1, 5], np.int32), np.array([0, 3], np.int64)
    >>> nc, nw = np.empty(7, np.int32), np.empty(7, np.uint8)
    >>> m = flow_breaks(out, np.ones(4, np.uint8), np.ones(8, np.uint8), st, 2, 3, nc, nw)
    >>> nc[:m].tolist(), nw[:m].tolist()
    ([-2, 5, 6, -1, -2, 5], [0, 1, 1, 1, 0, 1])
    """
    n = len(out)
    new_codes[0] = CODE_ROW_START
    new_srcw[0] = 0
    w = 1
    col = 0
    for k in range(lines):
        s = starts[k]
        e = starts[k + 1] if k + 1 < lines else n
        c = 0
        for j in range(s, e):
            c += _cells(out[j], gwidth)
        if col > 0 and col + c > cols:
            new_codes[w] = CODE_ROW_START
            new_srcw[w] = 0
            w += 1
            col = 0
        if c > cols:  # wider than a row: the column after its last glyph, as the prose layout wraps
            col = 0
            for j in range(s, e):
                g = _cells(out[j], gwidth)
                if g > 0:
                    col = g if col + g > cols else col + g
        else:
            col += c
        for j in range(s, e):
            new_codes[w] = out[j]
            new_srcw[w] = srcw[j]
            w += 1
    return w


@jit
def _cells(code, gwidth):
    """Cells of one stream element: its glyph's width, 1 for a newline's mark, 0 for another code."""
    if code >= 0:
        return np.int64(gwidth[code])
    return np.int64(1) if code == CODE_NEWLINE else np.int64(0)


@jit
def block_rows_both(widths, leads, k, colw, cols):
    """Rows of a block in a band of ``k`` columns of ``colw`` cells and laid out as flow on rows of ``cols`` cells:
    :func:`snapglyph.raster.flow.band_rows` and :func:`snapglyph.raster.flow.flow_rows` in one pass (the same
    integers; tested against them).

    Parameters
    ----------
    widths, leads : int32 arrays (lines,)
        The block's line widths and indentations in cells (:func:`snapglyph.raster.blocks.line_kinds`).
    k, colw, cols : int

    Returns
    -------
    (int, int)
        The band's rows and the flow's rows.

    Examples
    --------
    >>> block_rows_both(np.array([10, 0, 70], np.int32), np.zeros(3, np.int32), 1, 60, 100)
    (4, 1)
    """
    n = len(widths)
    strip = -1
    for i in range(n):
        if widths[i] > 0 and (strip < 0 or leads[i] < strip):
            strip = np.int64(leads[i])
    if strip < 0:
        strip = 0
    half = colw // 2
    extra = 0
    rows, col = 1, 0
    for i in range(n):
        w, ld = np.int64(widths[i]), np.int64(leads[i])
        c = 1
        if w > 0:
            hang = min(ld - strip, half)
            drawn = w - ld + hang
            if drawn > colw:
                extra += -(-(drawn - colw) // max(colw - hang - 1, 1))
            c = w - ld + (ld - strip + 1) // 2 + 1
        if col > 0 and col + c > cols:
            rows, col = rows + 1, 0
        rows += (col + c - 1) // cols
        col = (col + c - 1) % cols + 1
    return -(-(n + extra) // max(k, 1)), rows
