"""Stream codes and the layout state, shared by the kernels, their plain-Python twin and the renderer.

Plain Python: importing this module does not load numba (the renderer and the twin import it; only
:mod:`snapglyph.raster._kernels` compiles).

Stream codes (the ``codes`` array of :func:`snapglyph.raster._kernels.layout_blit`): a value ``>= 0`` is a glyph
index into the atlas; ``CODE_NEWLINE`` is a source newline; ``CODE_ROW_START`` starts a new row unless the cursor is
at a row start; ``CODE_BLOCK, k, colw`` opens a block of ``k`` columns of ``colw`` cells, ``CODE_BLOCK_END`` closes
it; any other value below -2 is a no-op (it carries accounting only).
:func:`snapglyph.raster._kernels.expand_codes` also writes ``CODE_UNSEEN - cp`` for a code point with no glyph index
yet; the caller replaces those before layout.

Blocks (layout ``auto``): the lines of a block are laid out one source line per row in ``k`` side-by-side columns of
``colw`` cells (one blank cell between columns, holding a 1-px rule in the marker's grey), read top to bottom then
left to right. The block's rows (:func:`snapglyph.raster._kernels.block_rows`) fill a **band** of ``ceil(rows / k)``
rows, or the rest of the page, in which case the block goes on in a new band on the next page. A line longer than
its column goes on in a continuation row that starts with the continuation mark. Prose after the block starts below
the band.

The layout state is an int64 array of ``N_STATE`` elements, modified in place by the layout; the ``S_*`` names are
its indices. Indices 0-3 are the cursor and the page's counts; 4-7 the block fields, kept across pages; 8-15 the band
fields of the page. A new page resets 0-3 and 8-15 (:func:`new_page_state`).
"""

from __future__ import annotations

__all__ = ["CODE_BLOCK", "CODE_BLOCK_END", "CODE_NEWLINE", "CODE_NOP", "CODE_ROW_START", "CODE_UNSEEN", "KMAX",
           "N_STATE", "STYLE_MARKER", "S_BAND_OPEN", "S_CELLS", "S_COL", "S_COLUMN", "S_COLUMNS", "S_COLW",
           "S_EXTRA", "S_FIRST_LINE", "S_HEIGHT", "S_IN_BLOCK", "S_K", "S_RESUME", "S_ROW", "S_ROWS_USED",
           "S_ROW_IN_COLUMN", "S_TOP", "new_page_state"]

CODE_NEWLINE = -1
CODE_ROW_START = -2
CODE_NOP = -3
CODE_BLOCK = -4
"""Opens a block; the next two elements are its column count ``k`` and column width ``colw`` in cells."""
CODE_BLOCK_END = -5
CODE_UNSEEN = -16
""":func:`snapglyph.raster._kernels.expand_codes` writes ``CODE_UNSEEN - cp`` for a code point ``cp`` whose glyph
index is not known yet."""
KMAX = 8
"""Most columns a block band may have (``line_flag`` holds ``rows * KMAX`` lines)."""
STYLE_MARKER = 4
"""Style row of the pixel table used for the dense-mode newline marker, the continuation mark and column rules."""

N_STATE = 16
"""Length of the layout state array."""
S_ROW, S_COL, S_CELLS, S_ROWS_USED = 0, 1, 2, 3
"""Cursor row and cell (within the band's column inside a block), cells drawn on the page, rows the page uses."""
S_IN_BLOCK, S_K, S_COLW, S_RESUME = 4, 5, 6, 7
"""1 inside a block; its columns and cells per column; 1 if the block goes on mid-line on the next page."""
S_BAND_OPEN, S_TOP, S_HEIGHT, S_COLUMN, S_ROW_IN_COLUMN = 8, 9, 10, 11, 12
"""1 once the block's band is open on this page; the band's top row, height in rows, current column and row."""
S_EXTRA, S_FIRST_LINE, S_COLUMNS = 13, 14, 15
"""Reading lines the page's earlier bands added (their columns after the first); the band's first reading line;
columns the band uses."""


def new_page_state(state) -> None:
    """Reset the layout state for a new page, keeping the block fields (indices 4-7).

    Parameters
    ----------
    state : int64 array (N_STATE,) or list of int
        Modified in place.

    Examples
    --------
    >>> st = list(range(N_STATE))
    >>> new_page_state(st)
    >>> st
    [0, 0, 0, 0, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0]
    """
    state[:S_IN_BLOCK] = [0] * S_IN_BLOCK
    state[S_BAND_OPEN:] = [0] * (N_STATE - S_BAND_OPEN)
