"""Rows of a block of the ``auto`` layout two ways: in a band of columns (:func:`band_rows`) and as flow
(:func:`flow_rows`), what :func:`snapglyph.raster.blocks.plan_blocks` compares to choose between them
(:data:`snapglyph.raster.blocks.FLOW_GAIN`).

Plain Python and numpy over a block's line widths and indentations (:func:`snapglyph.raster.blocks.line_kinds`);
nothing here reads pixels or glyphs. The stream places a flow's rows by the glyphs' own widths
(:func:`snapglyph.raster.stream.flow_stream`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["band_rows", "flow_rows"]


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
    wraps at the row's end, and the line after it starts a row.

    The widths are those of :func:`snapglyph.raster.blocks.line_kinds` (one cell a character: wide characters
    count 1 here), so this is the planner's estimate; the stream places the rows by the glyphs' own widths
    (:func:`snapglyph.raster.stream.flow_stream`).

    Examples
    --------
    >>> flow_rows([30, 30, 30, 0, 200], [4, 4, 8, 0, 4], 100)  # 27 + 27 + 25 + 1 cells on the first row
    3
    """
    w = np.asarray(widths, np.int64)
    ld = np.asarray(leads, np.int64)
    nonblank = w > 0
    strip = int(ld[nonblank].min()) if nonblank.any() else 0
    rows, col, broke = 1, 0, False
    for c in (np.where(nonblank, w - ld + (ld - strip + 1) // 2, 0) + 1).tolist():
        if col > 0 and (broke or col + c > cols):
            rows, col = rows + 1, 0
        col += c
        broke = c > cols
        if broke:
            rows += (c - 1) // cols
    return rows
