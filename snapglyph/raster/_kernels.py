"""Numba kernels: arrays and scalars in, arrays modified in place. No closures, no Python objects.

Every kernel is compiled through the one alias :data:`jit` (``numba.njit(cache=True, nogil=True, _nrt=False)``):
numba's disk cache serves every process; ``python -m snapglyph.raster.warm`` compiles (or loads) each once. Stream
codes and the layout state are defined in :mod:`snapglyph.raster._codes`. The kernels allocate nothing, so they are
compiled without numba's reference-counting runtime (``_nrt=False``, numba's option for such code; a kernel that
allocated would fail to compile), which otherwise counts every array argument of every call between kernels.

:func:`layout_blit` reads as its steps: prose runs (:func:`_prose_run`) and blocks (:func:`_enter_block`, then
:func:`_block_run` in a band opened by :func:`_open_band`, then :func:`_close_block`). The common glyph (ink on a
white cell) is drawn by a loop written out in both runs, :func:`_cell` draws the rest (headers, marks), and the ink
loops index with unsigned integers (numba wraps a negative signed index around, a test on every pixel). What each of
these choices measured is in bench/RESULTS.md, section "Kernel design choices".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._codes import (BLANK, CODE_BLOCK, CODE_BLOCK_END, CODE_NEWLINE, CODE_ROW_START, CODE_UNSEEN, S_BAND_OPEN,
                     S_CELLS, S_COL, S_COLUMN, S_COLUMNS, S_COLW, S_EXTRA, S_FIRST_LINE, S_HANG, S_HEIGHT, S_IN_BLOCK,
                     S_K, S_LEAD, S_RESUME, S_ROW, S_ROW_IN_COLUMN, S_ROWS_USED, S_STRIP, S_TOP, STYLE_MARKER)

__all__ = ["block_rows", "count_span", "jit", "layout_blit"]

jit = njit(cache=True, nogil=True, _nrt=False)  # the one JIT decorator every kernel uses (see the module)
CODES_DIGEST = "aa256c3283a28a05"  # SHA-256 of _codes.py, whose constants the kernels bake in

_MARK = np.int64(STYLE_MARKER)
"""Calls of :func:`_cell` pass int64 glyph, style, row, cell: one compile (3 more types cost 0.3 s of cold start)."""


@jit
def block_rows(codes, i, stop, colw, gwidth, cont, hang, strip, limit):
    """Rows (int) a block needs in a column of ``colw`` cells (``>= 6``), from ``codes[i]`` (int32 stream codes)
    to its ``CODE_BLOCK_END`` or ``stop``, counted up to ``limit``; 0 for an empty block.

    The wrapping rule of :func:`_block_run`: a source newline ends a row; of a line's leading blanks (glyph
    ``BLANK``) the first ``strip`` (the block's common indentation) and those past ``colw // 2`` cells take no cell;
    a glyph (``gwidth``: uint8 cells per glyph) that does not fit starts a continuation row, its mark in the cell
    where the line's text starts, the text after it. ``cont`` is 1 if the first row is a continuation row of a line
    whose text starts at cell ``hang``, else 0 (the first row starts a line). A block that needs ``limit`` rows or
    more returns ``limit`` (its band takes the rest of the page whatever the count past that): a block that runs
    over many pages is counted a page at a time, not to its end on every page.
    """
    b = 0
    col, lead = (hang + 1, -1) if cont else (0, 0)
    half = colw // 2
    while i < stop:
        c = codes[i]
        if c == CODE_BLOCK_END:
            break
        if c == CODE_NEWLINE:
            b += 1
            col = lead = hang = 0
            if b >= limit:
                return limit
        elif c >= 0:
            if lead >= 0:
                if c == BLANK:
                    lead += 1
                    if lead > strip and col < half:
                        col += 1
                    i += 1
                    continue
                hang, lead = col, -1
            w = np.int64(gwidth[c])
            if col + w > colw:
                b += 1
                col = hang + 1
                if b >= limit:
                    return limit
            col += w
        i += 1
    if col > 0:
        b += 1
    return min(b, limit)


@jit
def _common_indent(codes, i, stop):
    """The fewest leading ``BLANK`` glyphs of a line of the block from ``codes[i]`` to its ``CODE_BLOCK_END`` (or
    ``stop``) that holds another glyph; 0 where none does."""
    best, lead = -1, 0
    while i < stop:
        c = codes[i]
        if c == CODE_BLOCK_END:
            break
        if c == CODE_NEWLINE:
            lead = 0
        elif c == BLANK and lead >= 0:
            lead += 1
        elif c > BLANK and lead >= 0:
            if best < 0 or lead < best:
                best = lead
            lead = -1
        i += 1
    return max(best, 0)


@jit
def _cell(page, flat, g, s, row, col, glyphs, gwidth, lut, cell_w, cell_h, ink_start, ink_off, ink_lvl):
    """Draw glyph ``g`` in style ``s`` with its top-left cell at (``row``, ``col``); modifies ``page`` in place."""
    y0 = row * cell_h
    x0 = col * cell_w
    if lut[s, 0] == 255:
        base = np.uint64(y0 * page.shape[1] + x0)  # unsigned indices: no negative-index wraparound (module doc)
        for k in range(np.uint64(ink_start[g]), np.uint64(ink_start[g + 1])):
            flat[base + np.uint64(ink_off[k])] = lut[s, ink_lvl[k]]
    else:
        for y in range(cell_h):
            for x in range(np.int64(gwidth[g]) * cell_w):
                page[y0 + y, x0 + x] = lut[s, glyphs[g, y, x]]


@jit
def _prose_run(codes, styles, i, stop, state, page, flat, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense,
               marker, ink_start, ink_off, ink_lvl, out_line, out_col, line_flag):
    """Lay out prose from ``codes[i]`` until a ``CODE_BLOCK``, ``stop`` or a full page, wrapping at the row end; a
    newline draws ``marker`` when ``dense``, else starts a new row. Returns ``(next index, page full)``.

    The cursor and counts live in locals inside the loop and go back to ``state`` on every exit."""
    row = state[S_ROW]
    col = state[S_COL]
    cells = state[S_CELLS]
    used = state[S_ROWS_USED]
    extra = state[S_EXTRA]
    width = page.shape[1]
    full = False
    while i < stop:
        c = codes[i]
        if c == CODE_BLOCK:
            break
        if c <= CODE_ROW_START:
            if c == CODE_ROW_START and col > 0:
                row += 1
                col = 0
            i += 1
            continue
        if c == CODE_NEWLINE:
            if not dense:
                if row < rows and line_flag[row + extra] == 0:
                    line_flag[row + extra] = 1
                row += 1
                col = 0
                i += 1
                continue
            g = marker
            s = STYLE_MARKER
        else:
            g = c
            s = styles[i]
        w = np.int64(gwidth[g])
        if col + w > cols:
            row += 1
            col = 0
        if row >= rows:
            full = True
            break
        if lut[s, 0] == 255:  # _cell, written out: a call here costs reference counting per glyph
            base = np.uint64(row * cell_h * width + col * cell_w)
            for k in range(np.uint64(ink_start[g]), np.uint64(ink_start[g + 1])):
                flat[base + np.uint64(ink_off[k])] = lut[s, ink_lvl[k]]
        else:
            _cell(page, flat, g, s, row, col, glyphs, gwidth, lut, cell_w, cell_h, ink_start, ink_off, ink_lvl)
        line = row + extra
        if line_flag[line] == 0:
            line_flag[line] = 1
        out_line[i] = line
        out_col[i] = col
        col += w
        cells += w
        if row >= used:
            used = row + 1
        i += 1
    state[S_ROW] = row
    state[S_COL] = col
    state[S_CELLS] = cells
    state[S_ROWS_USED] = used
    return i, full


@jit
def _enter_block(codes, i, state):
    """``CODE_BLOCK, k, colw`` at ``codes[i]``: enter a block (its band opens at its first element); find its
    common indentation."""
    state[S_IN_BLOCK] = 1
    state[S_K] = codes[i + 1]
    state[S_COLW] = codes[i + 2]
    state[S_RESUME] = 0
    state[S_BAND_OPEN] = 0
    state[S_STRIP] = _common_indent(codes, i + 3, len(codes))
    state[S_LEAD] = 0
    state[S_HANG] = 0


@jit
def _open_band(codes, i, stop, state, page, flat, glyphs, gwidth, lut, cell_w, cell_h, rows, ink_start, ink_off,
               ink_lvl, line_flag, cont):
    """Open the block's band at the cursor row (after the current row when it holds anything): ``ceil(n / k)`` rows
    for the block's ``n`` rows left (:func:`block_rows`), or the rest of the page. Sets the band fields of
    ``state``, draws the column rules and, where the block goes on mid-line from the previous page, the
    continuation mark (under the line's text). Returns False when the page has no row left."""
    row = state[S_ROW]
    if state[S_COL] > 0:
        row += 1
    free = rows - row
    if free <= 0:
        return False
    k = state[S_K]
    colw = state[S_COLW]
    n = block_rows(codes, i, stop, colw, gwidth, state[S_RESUME], state[S_HANG], state[S_STRIP],
                   k * free + 1)  # past k * free: the rest of the page
    bh = (n + k - 1) // k if n <= k * free else free
    ncu = min(k, (n + bh - 1) // bh) if bh > 0 else 0
    for j in range(1, ncu):
        x = (j * (colw + 1) - 1) * cell_w + cell_w // 2
        for y in range(row * cell_h, (row + bh) * cell_h):
            page[y, x] = lut[STYLE_MARKER, 3]
    state[S_ROW] = row
    state[S_COL] = 0
    state[S_ROWS_USED] = max(state[S_ROWS_USED], row + bh)
    state[S_BAND_OPEN] = 1
    state[S_TOP] = row
    state[S_HEIGHT] = bh
    state[S_COLUMN] = 0
    state[S_ROW_IN_COLUMN] = 0
    state[S_FIRST_LINE] = row + state[S_EXTRA]
    state[S_COLUMNS] = ncu
    if state[S_RESUME] == 1:
        _cell(page, flat, cont, _MARK, row, state[S_HANG], glyphs, gwidth, lut, cell_w, cell_h, ink_start, ink_off,
              ink_lvl)
        line_flag[state[S_FIRST_LINE]] = 2
        state[S_COL] = state[S_HANG] + 1
        state[S_CELLS] += 1
        state[S_RESUME] = 0
    return True


@jit
def _close_block(state):
    """``CODE_BLOCK_END``: count the band's extra columns as reading lines; prose goes on below the band."""
    if state[S_COLUMNS] > 0:
        state[S_EXTRA] += (state[S_COLUMNS] - 1) * state[S_HEIGHT]
    state[S_ROW] = state[S_TOP] + state[S_HEIGHT]
    state[S_COL] = 0
    state[S_IN_BLOCK] = 0
    state[S_BAND_OPEN] = 0


@jit
def _next_row(column, in_column, bh):
    """The band row after row ``in_column`` of column ``column``: the next row, or the next column's first."""
    in_column += 1
    if in_column == bh:
        return column + 1, 0
    return column, in_column


@jit
def _indent(blank, col, lead, hang, strip, colw):
    """One character of a block line's leading whitespace, or its first of text: ``(lead, hang, drawn)``. ``lead``
    counts the leading blanks (-1 once the text started, which sets ``hang``, the column its continuation rows hang
    at); a blank of the block's common indentation (the first ``strip``) or past half the column is not drawn."""
    if lead >= 0 and not blank:
        return -1, col, True
    if lead >= 0:
        lead += 1
        return lead, hang, not (lead <= strip or col >= colw // 2)
    return lead, hang, True


@jit
def _continuation_mark(page, flat, cont, first, top, column, in_column, bh, colw, hang, line_flag, glyphs, gwidth,
                       lut, cell_w, cell_h, ink_start, ink_off, ink_lvl):
    """Draw the continuation mark of a wrapped block line at its hang column of band row ``in_column`` of
    ``column``, flag the reading line as a continuation, and return that line's index."""
    line = first + column * bh + in_column
    line_flag[line] = 2
    _cell(page, flat, cont, _MARK, top + in_column, column * (colw + 1) + hang, glyphs, gwidth, lut, cell_w, cell_h,
          ink_start, ink_off, ink_lvl)
    return line


@jit
def _block_run(codes, styles, i, stop, state, page, flat, glyphs, gwidth, lut, cell_w, cell_h, rows, ink_start,
               ink_off, ink_lvl, out_line, out_col, line_flag, cont):
    """Lay out a block from ``codes[i]`` in its band (opened here on a new page) until ``CODE_BLOCK_END`` (included),
    a ``CODE_BLOCK``, ``stop`` or a full band: one source line per row, without the block's common indentation and
    with a line's indentation at most half the column (see :func:`block_rows`); a glyph that does not fit the
    column's row goes on in a continuation row that starts with glyph ``cont`` where the line's text starts.
    Returns ``(next index, page full)``."""
    if state[S_BAND_OPEN] == 0 and not _open_band(codes, i, stop, state, page, flat, glyphs, gwidth, lut, cell_w,
                                                  cell_h, rows, ink_start, ink_off, ink_lvl, line_flag, cont):
        return i, True
    colw, bh, top, first, columns = state[S_COLW], state[S_HEIGHT], state[S_TOP], state[S_FIRST_LINE], state[S_COLUMNS]
    column, in_column, col, cells = state[S_COLUMN], state[S_ROW_IN_COLUMN], state[S_COL], state[S_CELLS]
    lead, hang, strip, width = state[S_LEAD], state[S_HANG], state[S_STRIP], page.shape[1]
    full = closed = False
    while i < stop:  # the band cursor in locals (as in _prose_run): state goes back on every exit
        c = codes[i]
        if c == CODE_BLOCK or c == CODE_BLOCK_END:
            closed = c == CODE_BLOCK_END
            i += 1 if closed else 0
            break
        if c < CODE_NEWLINE:
            i += 1
            continue
        if column >= columns:
            full = True
            break
        line = first + column * bh + in_column
        if c == CODE_NEWLINE:
            line_flag[line] = max(line_flag[line], 1)
            column, in_column = _next_row(column, in_column, bh)
            col = lead = hang = 0
            i += 1
            continue
        lead, hang, drawn = _indent(c == BLANK, col, lead, hang, strip, colw)
        if not drawn:  # the common indentation, or past half the column: no cell
            i += 1
            continue
        w = np.int64(gwidth[c])
        if col + w > colw:  # a continuation row
            column, in_column = _next_row(column, in_column, bh)
            if column >= columns:
                state[S_RESUME] = 1
                full = True
                break
            line = _continuation_mark(page, flat, cont, first, top, column, in_column, bh, colw, hang, line_flag,
                                      glyphs, gwidth, lut, cell_w, cell_h, ink_start, ink_off, ink_lvl)
            col, cells = hang + 1, cells + 1
        y, x, s = top + in_column, column * (colw + 1) + col, styles[i]
        if lut[s, 0] == 255:  # _cell, written out (see _prose_run)
            base = np.uint64(y * cell_h * width + x * cell_w)
            for k in range(np.uint64(ink_start[c]), np.uint64(ink_start[c + 1])):
                flat[base + np.uint64(ink_off[k])] = lut[s, ink_lvl[k]]
        else:
            _cell(page, flat, np.int64(c), np.int64(s), y, x, glyphs, gwidth, lut, cell_w, cell_h, ink_start,
                  ink_off, ink_lvl)
        line_flag[line] = max(line_flag[line], 1)
        out_line[i], out_col[i] = line, col
        col += w
        cells += w
        i += 1
    state[S_COLUMN], state[S_ROW_IN_COLUMN], state[S_COL], state[S_CELLS] = column, in_column, col, cells
    state[S_LEAD], state[S_HANG] = lead, hang
    if closed:
        _close_block(state)
    return i, full


@jit
def layout_blit(codes, styles, start, stop, state, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense,
                marker, ink_start, ink_off, ink_lvl, out_line, out_col, line_flag, cont):
    """Lay out ``codes[start:stop]`` from the cursor in ``state`` and draw them into ``page``, until the page is full.

    A glyph in a style whose background (level 0) is white is drawn from its ink list alone (the pixels of level
    ``> 0``; about 12 per character of real text instead of the 72 of a 6x12 cell): the page must be white (255)
    in every cell not drawn yet, which holds because the cursor only moves forward and pages start white. Other
    styles (inverted headers) write their cells whole.

    Blocks (layout ``auto``) are laid out in bands as :mod:`snapglyph.raster._codes` describes; a line longer than
    its column goes on in a continuation row that starts with glyph ``cont`` (in the marker's style).

    Parameters
    ----------
    codes : int32 array (n,)
        Stream codes (:mod:`snapglyph.raster._codes`): glyph indices (``>= 0``), ``CODE_NEWLINE``,
        ``CODE_ROW_START``, ``CODE_BLOCK, k, colw``, ``CODE_BLOCK_END``; any other value below -2 is skipped.
    styles : uint8 array (n,)
        Style of each element: a row of ``lut``.
    start, stop : int
        The slice of ``codes`` to place.
    state : int64 array (N_STATE,)
        Cursor, block and band state (the ``S_*`` indices of :mod:`snapglyph.raster._codes`); modified in place.
    page : uint8 array (height, width), C-contiguous
        The page; modified in place. White (255) in every cell not drawn yet.
    glyphs, gwidth : uint8 arrays (n_glyphs, cell_h, 2*cell_w) and (n_glyphs,)
        Atlas levels; cells per glyph (1 or 2).
    lut : uint8 array (n_styles, n_levels)
        Pixel value of each (style, level).
    cell_w, cell_h, cols, rows : int
        Cell size in pixels; cells per row and rows per page.
    dense : bool
        True: a newline outside a block draws ``marker`` (style ``STYLE_MARKER``); False: it starts a new row.
    marker, cont : int
        Glyph indices of the newline marker and of the continuation mark.
    ink_start, ink_off, ink_lvl : int32 array (>= max glyph index + 2,), int32 and uint8 arrays (k,)
        Glyph ``g``'s ink pixels (:meth:`snapglyph.raster.atlas.Atlas.ink_lists`) are ``ink_start[g]`` to
        ``ink_start[g + 1]``: offset from the cell's top-left pixel in the flattened page (``y * width + x``), level.
    out_line, out_col : int32 arrays (n,)
        For each element drawn, its reading line on the page (rows in reading order: a band's columns one after
        the other) and its cell within that line; elements not drawn are left as they are. Modified in place.
    line_flag : int8 array (rows * KMAX,)
        Per reading line of the page: 1 if the line exists, 2 if it is a continuation line (starts with ``cont``).
        Modified in place.

    Returns
    -------
    int
        Index of the first element not placed: ``stop`` when all were placed, else the page is full.
    """
    flat = page.reshape(-1)
    i = start
    while i < stop:
        if codes[i] == CODE_BLOCK:
            _enter_block(codes, i, state)
            i += 3
            continue
        if state[S_IN_BLOCK] == 1:
            i, full = _block_run(codes, styles, i, stop, state, page, flat, glyphs, gwidth, lut, cell_w, cell_h, rows,
                                 ink_start, ink_off, ink_lvl, out_line, out_col, line_flag, cont)
        else:
            i, full = _prose_run(codes, styles, i, stop, state, page, flat, glyphs, gwidth, lut, cell_w, cell_h, cols,
                                 rows, dense, marker, ink_start, ink_off, ink_lvl, out_line, out_col, line_flag)
        if full:
            break
    return i


@jit
def count_span(codes, srcw, a, b, repl_narrow, repl_wide):
    """Count the elements ``[a, b)`` of a chunk for a page: ``(chars, replaced)``.

    ``chars``: elements that stand for a source character (``srcw > 0``); ``replaced``: those drawn as a
    replacement glyph (code ``repl_narrow`` or ``repl_wide``), plus the first letters of symbol labels
    (``srcw == 2``). ``codes`` int32 and ``srcw`` uint8 arrays (n,); what :func:`snapglyph.raster.render._account`
    counts with (tested against numpy's counts).
    """
    chars = 0
    replaced = 0
    for k in range(a, b):
        w = srcw[k]
        if w > 0:
            chars += 1
            c = codes[k]
            if c == repl_narrow or c == repl_wide:
                replaced += 1
        if w == 2:
            replaced += 1
    return chars, replaced
