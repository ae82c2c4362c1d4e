"""Rows of a block of the ``auto`` layout two ways: in a band of columns (:func:`band_rows`) and as flow
(:func:`flow_rows`), what :func:`snapglyph.raster.blocks.plan_blocks` compares to choose between them
(:data:`snapglyph.raster.blocks.FLOW_GAIN`), and the stream of a block laid out as flow (:func:`flow_stream`, which
:func:`snapglyph.raster.stream.insert_blocks` calls): prose codes whose row starts fall where its lines fit whole.

Plain Python and numpy: the estimates read a block's line widths and indentations
(:func:`snapglyph.raster.blocks.line_kinds`), the stream its glyph indices and their widths; nothing here reads
pixels.
"""

from __future__ import annotations

import numpy as np

from . import native
from ._codes import BLANK, CODE_NEWLINE, CODE_NOP

__all__ = ["GUTTER_LIGHT", "GUTTER_PAD", "band_rows", "flow_rows", "flow_stream"]

GUTTER_LIGHT = False
"""Draw a flow line's line-number gutter's digits and arrow (Claude Code's ``    12→code``) in light grey, as the
newline's mark is? Off: measured on the Claude Code session of ../shared/data, RapidOCR read 57% of the gutters'
numbers light against 68% dark, at the same characters per token and the same CER on the rest (bench/gutter.py,
bench/RESULTS.md section "Line-number gutter", 2026-12-08)."""
GUTTER_PAD = True
"""Draw the blanks before a flow line's gutter digits (its right alignment) as other indentation is (the block's
common part off, the rest at half)? On: leaving them out saved 0.2% of the session's image tokens and cost 3% of
the gutters' numbers read (the number then follows the newline's mark with no blank; bench/gutter.py)."""


def band_rows(widths, leads, k: int, colw: int) -> int:
    """Rows of a block's band of ``k`` columns of ``colw`` cells: its lines' rows (a line's first row and its
    continuation rows, by the rule of :func:`snapglyph.raster.blocks.choose_columns`) over ``k``, rounded up.

    Parameters
    ----------
    widths, leads : array-like of int
        The block's line widths and indentations in cells (:func:`snapglyph.raster.blocks.line_kinds`).
    k, colw : int
        Columns and cells per column.

    Returns
    -------
    int

    Examples
    --------
    >>> band_rows([10, 0, 70], [0, 0, 0], 1, 60)  # the third line takes a continuation row
    4
    """
    w = np.asarray(widths, np.int64)
    ld = np.asarray(leads, np.int64)
    nonblank = w > 0
    strip = int(ld[nonblank].min()) if nonblank.any() else 0
    hang = np.minimum(np.where(nonblank, ld - strip, 0), colw // 2)
    drawn = w - ld + hang
    over = nonblank & (drawn > colw)
    extra = np.where(over, -(-(drawn - colw) // np.maximum(colw - hang - 1, 1)), 0)
    return -(-(len(w) + int(extra.sum())) // max(k, 1))


def flow_rows(widths, leads, cols: int) -> int:
    """Rows of a block laid out as flow on rows of ``cols`` cells: without the block's common indentation and with
    the rest of a line's indentation at half its width (rounded up), each line and its newline mark (one cell)
    after the one before on its row where it fits whole, else from the next row's start; a line wider than a row
    wraps at the row's end, and the line after it goes on along that line's last row where it fits whole.

    The widths are those of :func:`snapglyph.raster.blocks.line_kinds` (one cell a character: wide characters
    count 1 here), so this is the planner's estimate; the stream places the rows by the glyphs' own widths
    (:func:`flow_stream`).

    Examples
    --------
    >>> flow_rows([30, 30, 30, 0, 200], [4, 4, 8, 0, 4], 100)  # 27 + 27 + 25 + 1 cells on the first row
    3
    """
    w = np.asarray(widths, np.int64)
    ld = np.asarray(leads, np.int64)
    nonblank = w > 0
    strip = int(ld[nonblank].min()) if nonblank.any() else 0
    rows, col = 1, 0
    for c in (np.where(nonblank, w - ld + (ld - strip + 1) // 2, 0) + 1).tolist():
        if col > 0 and col + c > cols:
            rows, col = rows + 1, 0
        rows += (col + c - 1) // cols  # a line wider than a row: its continuation rows
        col = (col + c - 1) % cols + 1
    return rows


def flow_stream(codes: np.ndarray, srcw: np.ndarray, cols: int, gwidth: np.ndarray,
                gutter: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The stream of a block laid out as flow (:func:`flow_rows`): prose whose lines are
    never broken where they fit a row.

    ``CODE_ROW_START`` before the block and before each line that would not fit whole (its glyphs and its
    newline's mark, one cell) on the rest of the row (what follows the block goes on along its last row, as prose
    does). Of a line's leading ``BLANK`` glyphs, those of the block's common
    indentation (the fewest of a line that holds another element) and the second half (rounded down) of the rest
    become ``CODE_NOP``, their source weight kept: indentation is drawn at half its width, its levels kept (4 and
    8 spaces as 2 and 4); a line of blanks only keeps none. The line after one wider than a row goes on along
    that line's last row where it fits whole (its last row's cells counted at the glyphs' widths, as the prose
    layout wraps). A line whose text starts with a line-number gutter
    (ASCII digits, then U+2192: Claude Code's ``    12→code``) has the blanks after the arrow, its code's
    indentation, drawn at half their width the same way, none of the blanks before its digits
    (:data:`GUTTER_PAD`), and its digits and arrow in their light variants where ``gutter`` holds them
    (:data:`GUTTER_LIGHT`). The prose layout wraps at glyph widths, so the rows fall where counted.

    Parameters
    ----------
    codes, srcw : int32 and uint8 arrays (n,)
        The block's stream (its lines, each with its newline but perhaps the last); not modified.
    cols : int
        Cells per row.
    gwidth : uint8 array
        Cells of each glyph index.
    gutter : tuple or None
        ``(digits, arrow)`` glyph indices, or ``(digits, arrow, light)`` with ``light`` the light variants of the
        digits then the arrow (see :func:`snapglyph.raster.stream.insert_blocks`); None: no line has a gutter.

    Returns
    -------
    tuple of numpy.ndarray
        The new codes and source weights (the row starts weigh 0).

    Examples
    --------
    >>> c = np.array([0, 0, 5, 6, -1, 0, 0, 0, 0, 5, -1, 0, 0, 7], np.int32)  # "  ab", "    a", "  c" on 6 cells
    >>> flow_stream(c, np.ones(14, np.uint8), 6, np.ones(8, np.uint8))[0].tolist()
    [-2, -3, -3, 5, 6, -1, -3, -3, 0, -3, 5, -1, -2, -3, -3, 7]
    """
    k = native.kernels()  # the rule's one implementation: raster/_flow_kernels.py
    n = len(codes)
    out = np.empty(n, np.int32)
    starts, far = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
    lines, _ = k.flow_indent(codes, out, starts, far)
    starts, far = starts[:lines], far[:lines]
    if gutter is not None:
        line = np.cumsum(codes == CODE_NEWLINE) - (codes == CODE_NEWLINE)  # each element's line
        _gutters(codes, out, starts, starts + np.minimum(far, len(codes) - 1), line, gutter)
    new_codes, new_srcw = np.empty(n + lines + 1, np.int32), np.empty(n + lines + 1, np.uint8)
    m = k.flow_breaks(out, srcw, gwidth, starts, lines, cols, new_codes, new_srcw)
    return new_codes[:m], new_srcw[:m]


def _gutters(codes: np.ndarray, out: np.ndarray, starts: np.ndarray, text_at: np.ndarray, line: np.ndarray,
             gutter: tuple) -> None:
    """Of each line whose text (from ``text_at[line]``) is ASCII digits up to an arrow, in ``out``, in place: the
    second half (rounded down) of the blanks after the arrow and (:data:`GUTTER_PAD` False) the blanks before the
    digits become ``CODE_NOP``; the digits and the arrow their light variants (:data:`GUTTER_LIGHT`, where
    ``gutter`` holds them)."""
    digits, arrow = gutter[0], gutter[1]
    is_digit = np.isin(codes, digits)
    lit = []
    for p in np.flatnonzero(codes == arrow).tolist():
        a = int(text_at[line[p]])
        if a >= p or not is_digit[a:p].all():
            continue
        q = p + 1
        while q < len(codes) and codes[q] == BLANK:
            q += 1
        out[p + 1 + (q - p) // 2:q] = CODE_NOP  # of r blanks, (r + 1) // 2 kept
        if not GUTTER_PAD:
            out[starts[line[p]]:a] = CODE_NOP
        lit.append(np.arange(a, p + 1))
    if GUTTER_LIGHT and len(gutter) > 2 and lit:
        at = np.concatenate(lit)
        base = np.append(digits, arrow)
        order = np.argsort(base)
        out[at] = gutter[2][order[np.searchsorted(base, codes[at], sorter=order)]]
