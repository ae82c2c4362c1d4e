"""Stream codes and the layout state, shared by the kernels and the renderer.

Plain Python: importing this module does not load numba (the renderer imports it; only
:mod:`snapglyph.raster._kernels` compiles).

Stream codes (the ``codes`` array of :func:`snapglyph.raster._kernels.layout_blit`): a value ``>= 0`` is a glyph
index into the atlas; ``CODE_NEWLINE`` is a source newline; ``CODE_ROW_START`` starts a new row unless the cursor is
at a row start; ``CODE_BLOCK, k, colw`` opens a block of ``k`` columns of ``colw`` cells, ``CODE_BLOCK_END`` closes
it; any other value below -2 is a no-op (it carries accounting only).
:func:`snapglyph.raster._text_kernels.expand_codes` also writes ``CODE_UNSEEN - cp`` for a code point with no glyph index
yet; the caller replaces those before layout.

Tabs (:data:`TAB_STOP`, :data:`INDENT_TAB_STOP`, :func:`tab_fill`): the one tab rule of the normalization
(:func:`snapglyph.raster.text.normalize`), its compiled twin (:func:`snapglyph.raster._text_kernels.expand_codes`) and
the block widths of :mod:`snapglyph.raster.blocks`.

Blocks (layout ``auto``): the lines of a block are laid out one source line per row in ``k`` side-by-side columns of
``colw`` cells (one blank cell between columns, holding a 1-px rule in the marker's grey), read top to bottom then
left to right. The block's rows (:func:`snapglyph.raster._kernels.block_rows`) fill a **band** of ``ceil(rows / k)``
rows, or the rest of the page, in which case the block goes on in a new band on the next page. The indentation
common to the block's lines (the fewest leading blanks of a line that holds anything else) is not drawn, and a
line's indentation is drawn at most ``colw // 2`` cells deep: a line never wraps inside its leading whitespace. A
line longer than its column goes on in continuation rows that hang under its text: the continuation mark in the
cell where the line's text starts, the text after it. Prose after the block starts below the band.

The layout state is an int64 array of ``N_STATE`` elements, modified in place by the layout; the ``S_*`` names are
its indices. Indices 0-3 are the cursor and the page's counts; 4-7 and 16-18 the block fields, kept across pages;
8-15 the band fields of the page. A new page resets 0-3 and 8-15 (:func:`new_page_state`).
"""

from __future__ import annotations

__all__ = ["BLANK", "CODE_BLOCK", "CODE_BLOCK_END", "CODE_NEWLINE", "CODE_NOP", "CODE_ROW_START", "CODE_UNSEEN", "INDENT_TAB_STOP",
           "KMAX", "N_STATE", "STYLE_MARKER", "S_BAND_OPEN", "S_CELLS", "S_COL", "S_COLUMN", "S_COLUMNS", "S_COLW",
           "S_EXTRA", "S_FIRST_LINE", "S_HANG", "S_HEIGHT", "S_IN_BLOCK", "S_K", "S_LEAD", "S_RESUME", "S_ROW",
           "S_ROWS_USED", "S_ROW_IN_COLUMN", "S_STRIP", "S_TOP", "TAB_STOP", "expand_tabs",
           "new_page_state", "tab_fill"]

BLANK = 0
"""The glyph index of the blank cell (a space; :data:`snapglyph.raster.atlas.BLANK`): a line's leading run of it is
its indentation."""
CODE_NEWLINE = -1
CODE_ROW_START = -2
CODE_NOP = -3
CODE_BLOCK = -4
"""Opens a block; the next two elements are its column count ``k`` and column width ``colw`` in cells."""
CODE_BLOCK_END = -5
CODE_UNSEEN = -16
""":func:`snapglyph.raster._text_kernels.expand_codes` writes ``CODE_UNSEEN - cp`` for a code point ``cp`` whose glyph
index is not known yet."""
KMAX = 8
"""Most columns a block band may have (``line_flag`` holds ``rows * KMAX`` lines)."""
STYLE_MARKER = 4
"""Style row of the pixel table used for the dense-mode newline marker, the continuation mark and column rules."""

TAB_STOP = 8
"""A tab after other text on its line expands to spaces up to the next multiple of ``TAB_STOP`` cells from the line
start, as a terminal draws it (tab-separated listings keep their columns: ../shared/cases/tabs.json)."""
INDENT_TAB_STOP = 4
"""A tab in a line's indentation (only spaces and tabs before it) expands to the next multiple of
``INDENT_TAB_STOP`` cells. Tab-indented code (Go, the TypeScript of the pi session) otherwise spends 8 cells per
level, and in the narrow columns of a block band many of its lines wrap. Measured on ../shared/data (2026-12-01;
block lines hold 78,967 indentation tabs and 1,525 other tabs): 4 instead of 8 cuts the rows of the block bands by
5.9% and raises the characters per image token (``python bench/auto_density.py``, profile claude) of ``auto`` from
6.07 to 6.33 and of ``dense`` from 9.02 to 9.38 (the pi session: 8.00 to 9.14). Stops of 4 for every tab measure
the same to 0.1% but would move the columns of tab-separated listings off the terminal's."""

N_STATE = 19
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
S_STRIP, S_LEAD, S_HANG = 16, 17, 18
"""The block's common indentation in blanks (not drawn); the blanks of the current line's leading whitespace seen so
far, or -1 past it; the cell where the current line's text starts (its continuation rows' mark goes there)."""


def new_page_state(state) -> None:
    """Reset the layout state for a new page, keeping the block fields (indices 4-7 and 16-18).

    Parameters
    ----------
    state : int64 array (N_STATE,) or list of int
        Modified in place.

    Examples
    --------
    >>> st = list(range(N_STATE))
    >>> new_page_state(st)
    >>> st
    [0, 0, 0, 0, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 16, 17, 18]
    """
    state[:S_IN_BLOCK] = [0] * S_IN_BLOCK
    state[S_BAND_OPEN:S_STRIP] = [0] * (S_STRIP - S_BAND_OPEN)


def tab_fill(col: int, indent: bool) -> int:
    """Cells a tab at cell ``col`` of its line expands to (:data:`TAB_STOP`, :data:`INDENT_TAB_STOP`).

    Parameters
    ----------
    col : int
        Cells before the tab on its line (wide characters count 2).
    indent : bool
        True if only spaces and tabs come before it on its line.

    Returns
    -------
    int
        1 to the stop's width.

    Examples
    --------
    >>> tab_fill(0, True), tab_fill(6, True), tab_fill(6, False), tab_fill(8, False)
    (4, 2, 2, 8)
    """
    stop = INDENT_TAB_STOP if indent else TAB_STOP
    return stop - col % stop


def expand_tabs(line: str) -> str:
    """Expand the tabs of one line by :func:`tab_fill`, counting one cell per character (the width estimate of
    :mod:`snapglyph.raster.blocks`; :func:`snapglyph.raster.text.normalize` counts wide characters 2).

    Parameters
    ----------
    line : str
        One line (no newline).

    Returns
    -------
    str

    Examples
    --------
    >>> expand_tabs("\\t\\tif x:\\ty")
    '        if x:   y'
    """
    if "\t" not in line:
        return line
    if "\r" in line or "\n" in line:  # str.expandtabs restarts its column there; tab_fill does not
        return _expand_tabs_slow(line)
    body = line.lstrip(" \t")
    lead = line[:len(line) - len(body)].expandtabs(INDENT_TAB_STOP)
    if "\t" not in body:
        return lead + body
    return lead + (" " * len(lead) + body).expandtabs(TAB_STOP)[len(lead):]  # body's column starts after lead


def _expand_tabs_slow(line: str) -> str:
    """:func:`expand_tabs` character by character (the rule of :func:`tab_fill` as written)."""
    out: list[str] = []
    col, indent = 0, True
    for c in line:
        if c == "\t":
            k = tab_fill(col, indent)
            out.append(" " * k)
            col += k
            continue
        if c != " ":
            indent = False
        out.append(c)
        col += 1
    return "".join(out)
