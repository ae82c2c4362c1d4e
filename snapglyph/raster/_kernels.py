"""Numba kernels: arrays and scalars in, arrays modified in place. No closures, no Python objects.

Every kernel is a module-level function compiled through the one alias :data:`jit`
(``numba.njit(cache=True, nogil=True)``), so numba's on-disk cache serves every process. ``python -m snapglyph.raster.warm``
compiles (or loads) each of them once.

Stream codes (the ``codes`` array of :func:`layout_blit`): a value ``>= 0`` is a glyph index into the atlas;
``CODE_NEWLINE`` is a source newline; ``CODE_ROW_START`` starts a new row unless the cursor is at a row start;
any other value below -2 is a no-op (it carries accounting only). :func:`expand_codes` also writes
``CODE_UNSEEN - cp`` for a code point with no glyph index yet; the caller replaces those before layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["CODE_BLOCK", "CODE_BLOCK_END", "CODE_NEWLINE", "CODE_NOP", "CODE_ROW_START", "CODE_UNSEEN", "KMAX",
           "N_STATE", "STYLE_MARKER", "block_rows", "expand_codes", "jit", "layout_blit", "new_page_state",
           "pack_rows"]

jit = njit(cache=True, nogil=True)
"""The one JIT decorator every kernel uses."""

CODE_NEWLINE = -1
CODE_ROW_START = -2
CODE_NOP = -3
CODE_BLOCK = -4
"""Opens a block; the next two elements are its column count ``k`` and column width ``colw`` in cells."""
CODE_BLOCK_END = -5
N_STATE = 16
"""Length of the ``state`` array of :func:`layout_blit`."""
KMAX = 8
"""Most columns a block band may have (``line_flag`` holds ``rows * KMAX`` lines)."""
CODE_UNSEEN = -16
""":func:`expand_codes` writes ``CODE_UNSEEN - cp`` for a code point ``cp`` whose glyph index is not known yet."""
STYLE_MARKER = 4
"""Style row of the pixel table used for the dense-mode newline marker."""


def new_page_state(state) -> None:
    """Reset ``state`` (int64 array (N_STATE,)) for a new page, keeping the block fields (indices 4-7)."""
    state[:4] = 0
    state[8:] = 0


@jit
def block_rows(codes, i, stop, colw, gwidth, cont):
    """Count the rows a block needs in a column of ``colw`` cells, from ``codes[i]`` to its ``CODE_BLOCK_END``.

    The wrapping rule of :func:`layout_blit` inside a block: a source newline ends a row; a glyph that does not fit
    the rest of the row starts a continuation row whose first cell holds the continuation mark.

    Parameters
    ----------
    codes : int32 array (n,)
        Stream codes (see :func:`layout_blit`).
    i, stop : int
        First element to count and the end of the stream slice.
    colw : int
        Cells per column (``>= 3``).
    gwidth : uint8 array (n_glyphs,)
        Cells per glyph (1 or 2).
    cont : int
        1 if the first row is a continuation row (its first cell holds the mark), else 0.

    Returns
    -------
    int
        Rows needed (0 for an empty block).
    """
    b = 0
    col = 1 if cont else 0
    while i < stop:
        c = codes[i]
        if c == CODE_BLOCK_END:
            break
        if c == CODE_NEWLINE:
            b += 1
            col = 0
        elif c >= 0:
            w = np.int64(gwidth[c])
            if col + w > colw:
                b += 1
                col = 1
            col += w
        i += 1
    if col > 0:
        b += 1
    return b


@jit
def _cell(page, flat, width, g, s, row, col, glyphs, gwidth, lut, cell_w, cell_h, ink_start, ink_off, ink_lvl):
    """Draw glyph ``g`` in style ``s`` with its top-left cell at (``row``, ``col``); modifies ``page`` in place."""
    y0 = row * cell_h
    x0 = col * cell_w
    if lut[s, 0] == 255:
        base = y0 * width + x0
        for k in range(ink_start[g], ink_start[g + 1]):
            flat[base + ink_off[k]] = lut[s, ink_lvl[k]]
    else:
        for y in range(cell_h):
            for x in range(np.int64(gwidth[g]) * cell_w):
                page[y0 + y, x0 + x] = lut[s, glyphs[g, y, x]]


@jit
def _open_band(codes, i, stop, state, page, gwidth, lut, cell_w, cell_h, rows):
    """Start a block band at the cursor row (after the current row when it holds anything); return False when the
    page has no row left. Sets the band fields of ``state`` and draws the column rules."""
    row = state[0]
    if state[1] > 0:
        row += 1
    free = rows - row
    if free <= 0:
        return False
    k = state[5]
    colw = state[6]
    n = block_rows(codes, i, stop, colw, gwidth, state[7])
    if n <= k * free:
        bh = (n + k - 1) // k
    else:
        bh = free
    ncu = 0
    if bh > 0:
        ncu = min(k, (n + bh - 1) // bh)
    for j in range(1, ncu):
        x = (j * (colw + 1) - 1) * cell_w + cell_w // 2
        for y in range(row * cell_h, (row + bh) * cell_h):
            page[y, x] = lut[STYLE_MARKER, 3]
    state[0] = row
    state[1] = 0
    if row + bh > state[3]:
        state[3] = row + bh
    state[8] = 1
    state[9] = row
    state[10] = bh
    state[11] = 0
    state[12] = 0
    state[14] = row + state[13]
    state[15] = ncu
    return True


@jit
def layout_blit(codes, styles, start, stop, state, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense,
                marker, ink_start, ink_off, ink_lvl, out_line, out_col, line_flag, cont):
    """Lay out ``codes[start:stop]`` from the cursor in ``state`` and draw them into ``page``, until the page is full.

    A glyph in a style whose background (level 0) is white is drawn from its ink list alone (the pixels of level
    ``> 0``; about 12 per character of real text instead of the 72 of a 6x12 cell): the page must be white (255)
    in every cell not drawn yet, which holds because the cursor only moves forward and pages start white. Other
    styles (inverted headers) write their cells whole.

    Blocks (layout ``auto``): ``CODE_BLOCK, k, colw`` opens a block whose lines are laid out one source line per
    row in ``k`` side-by-side columns of ``colw`` cells (one blank cell between columns, holding a 1-px rule in the
    marker's grey), read top to bottom then left to right, until ``CODE_BLOCK_END``. The block's rows (counted by
    :func:`block_rows`) fill a band of ``ceil(rows / k)`` rows, or the rest of the page, in which case the block
    goes on in a new band on the next page. A line longer than its column goes on in a continuation row that starts
    with glyph ``cont`` (in the marker's style). Prose after the block starts below the band.

    Parameters
    ----------
    codes : int32 array (n,)
        Glyph indices (``>= 0``), ``CODE_NEWLINE`` (-1), ``CODE_ROW_START`` (-2), ``CODE_BLOCK`` (-4, followed by
        two elements ``k`` and ``colw``) or ``CODE_BLOCK_END`` (-5); any other value below -2 is skipped.
    styles : uint8 array (n,)
        Style of each element: a row of ``lut``.
    start, stop : int
        The slice of ``codes`` to place.
    state : int64 array (N_STATE,)
        Cursor and band state; modified in place. ``[row, col, cells_used, rows_used]``, then the block fields kept
        across pages ``[in_block, k, colw, resume_continuation]`` and the band fields of the page ``[band_open,
        top, height, column, row_in_column, extra_lines, first_line, columns_used]``. A new page resets indices
        0-3 and 8-15 (:func:`new_page_state`).
    page : uint8 array (height, width), C-contiguous
        The page; modified in place. White (255) in every cell not drawn yet.
    glyphs : uint8 array (n_glyphs, cell_h, 2*cell_w)
        Atlas levels.
    gwidth : uint8 array (n_glyphs,)
        Cells per glyph (1 or 2).
    lut : uint8 array (n_styles, n_levels)
        Pixel value of each (style, level).
    cell_w, cell_h : int
        Cell size in pixels.
    cols, rows : int
        Cells per row and rows per page.
    dense : bool
        True: a newline outside a block draws ``marker`` (style ``STYLE_MARKER``); False: it starts a new row.
    marker : int
        Glyph index of the newline marker.
    ink_start : int32 array (>= max glyph index + 2,)
        Glyph ``g``'s ink pixels are ``ink_off[ink_start[g]:ink_start[g + 1]]``
        (see :meth:`snapglyph.raster.atlas.Atlas.ink_lists`).
    ink_off : int32 array (k,)
        Offset of each ink pixel from its cell's top-left pixel in the flattened page: ``y * width + x``.
    ink_lvl : uint8 array (k,)
        Level (``> 0``) of each ink pixel.
    out_line, out_col : int32 arrays (n,)
        For each element drawn, its reading line on the page (rows in reading order: a band's columns one after
        the other) and its cell within that line; elements not drawn are left as they are. Modified in place.
    line_flag : int8 array (rows * max k,)
        Per reading line of the page: 1 if the line exists, 2 if it is a continuation line (starts with ``cont``).
        Modified in place.
    cont : int
        Glyph index of the continuation mark.

    Returns
    -------
    int
        Index of the first element not placed: ``stop`` when all were placed, else the page is full.
    """
    flat = page.reshape(-1)
    width = page.shape[1]
    i = start
    while i < stop:
        c = codes[i]
        if c == CODE_BLOCK:
            state[4] = 1
            state[5] = codes[i + 1]
            state[6] = codes[i + 2]
            state[7] = 0
            state[8] = 0
            i += 3
            continue
        if state[4] == 1:
            if state[8] == 0:
                if not _open_band(codes, i, stop, state, page, gwidth, lut, cell_w, cell_h, rows):
                    break
                if state[7] == 1:  # the block goes on mid-line from the previous page
                    line = state[14]
                    _cell(page, flat, width, cont, STYLE_MARKER, state[9], 0, glyphs, gwidth, lut, cell_w, cell_h,
                          ink_start, ink_off, ink_lvl)
                    line_flag[line] = 2
                    state[1] = 1
                    state[2] += 1
                    state[7] = 0
            if c == CODE_BLOCK_END:
                if state[15] > 0:
                    state[13] += (state[15] - 1) * state[10]
                state[0] = state[9] + state[10]
                state[1] = 0
                state[4] = 0
                state[8] = 0
                i += 1
                continue
            if c < -1:
                i += 1
                continue
            if state[11] >= state[15]:
                break
            bh = state[10]
            if c == CODE_NEWLINE:
                line = state[14] + state[11] * bh + state[12]
                if line_flag[line] == 0:
                    line_flag[line] = 1
                state[12] += 1
                state[1] = 0
                if state[12] == bh:
                    state[11] += 1
                    state[12] = 0
                i += 1
                continue
            w = np.int64(gwidth[c])
            colw = state[6]
            x0 = state[11] * (colw + 1)
            if state[1] + w > colw:
                state[12] += 1
                if state[12] == bh:
                    state[11] += 1
                    state[12] = 0
                if state[11] >= state[15]:
                    state[7] = 1
                    break
                x0 = state[11] * (colw + 1)
                line_flag[state[14] + state[11] * bh + state[12]] = 2
                _cell(page, flat, width, cont, STYLE_MARKER, state[9] + state[12], x0, glyphs, gwidth, lut, cell_w,
                      cell_h, ink_start, ink_off, ink_lvl)
                state[1] = 1
                state[2] += 1
            line = state[14] + state[11] * bh + state[12]
            _cell(page, flat, width, c, styles[i], state[9] + state[12], x0 + state[1], glyphs, gwidth, lut, cell_w,
                  cell_h, ink_start, ink_off, ink_lvl)
            if line_flag[line] == 0:
                line_flag[line] = 1
            out_line[i] = line
            out_col[i] = state[1]
            state[1] += w
            state[2] += w
            i += 1
            continue
        row = state[0]
        col = state[1]
        if c <= -2:
            if c == CODE_ROW_START and col > 0:
                state[0] = row + 1
                state[1] = 0
            i += 1
            continue
        if c == CODE_NEWLINE:
            if not dense:
                if row < rows and line_flag[row + state[13]] == 0:
                    line_flag[row + state[13]] = 1
                state[0] = row + 1
                state[1] = 0
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
            state[0] = row
            state[1] = col
            break
        _cell(page, flat, width, g, s, row, col, glyphs, gwidth, lut, cell_w, cell_h, ink_start, ink_off, ink_lvl)
        line = row + state[13]
        if line_flag[line] == 0:
            line_flag[line] = 1
        out_line[i] = line
        out_col[i] = col
        state[0] = row
        state[1] = col + w
        state[2] += w
        if row + 1 > state[3]:
            state[3] = row + 1
        i += 1
    return i


@jit
def expand_codes(cps, spans, cells, table, out_codes, out_srcw, start, label_len=None):
    """Drop zero-width characters, expand tabs and map code points to stream codes, in one pass.

    The array twin of steps 5 and 6 of :func:`snapglyph.raster.text.normalize` followed by the glyph lookup: a code point
    ``>= U+0300`` with ``cells[cp] == 0`` is dropped (and counted), as is a pictograph (U+2600-U+27BF,
    U+1F000-U+1FAFF) joined to the previous one by a ZWJ (U+200D) and any U+FE0F or skin-tone modifiers
    (U+1F3FB-U+1F3FF) between them; a tab becomes spaces up to the next multiple of 8 cells from the line start
    (a wide character counts ``cells[cp]`` = 2 cells, a glyph with a label counts ``label_len[g]``); a newline
    becomes ``CODE_NEWLINE``.

    Parameters
    ----------
    cps : uint32 array (n,)
        Code points after steps 1-4 of the normalization (no lone surrogate; no control but tab and newline).
    spans : int64 array (k, 2)
        Sorted, disjoint ``[a, b)`` index ranges of ``cps`` that stand for no source character.
    cells : int8 array (0x110000,)
        Cells of each code point ``>= U+0300``: 0 (zero-width), 1, 2, or -1 (not known yet).
    table : int32 array (0x110000,)
        Glyph index of each code point, negative where not known yet.
    out_codes : int32 array (>= start + n + 7 * tabs,)
        Stream codes, written from ``start``: a glyph index, ``CODE_NEWLINE``, or ``CODE_UNSEEN - cp`` where
        ``table[cp] < 0`` (the caller looks those up). Modified in place.
    out_srcw : uint8 array (same length)
        Source weight of each written element: 1, or 0 for synthetic elements (tab fill after the first space,
        ``spans``). Modified in place.
    start : int
        First index of ``out_codes`` to write.
    label_len : uint8 array or None
        Label length of each glyph index (0: no label; :attr:`snapglyph.raster.atlas.Atlas.label_len`): the cells such a
        glyph takes for tab stops (the renderer draws it as its label). Indices past its end count 0.

    Returns
    -------
    stop : int
        One past the last element written; or ``-1 - i`` if ``cells[cps[i]]`` is not known (nothing is valid
        then: fill ``cells`` and call again).
    zero_width : int
        Code points dropped as zero-width.
    unseen : int
        Elements written as ``CODE_UNSEEN - cp``.
    """
    n = cps.shape[0]
    k = spans.shape[0]
    p = 0
    o = start
    col = 0
    zw = 0
    unseen = 0
    drop = -1
    space = table[32]
    if space < 0:
        space = CODE_UNSEEN - 32
    for i in range(n):
        cp = cps[i]
        while p < k and spans[p, 1] <= i:
            p += 1
        w = 1
        if p < k and spans[p, 0] <= i:
            syn = 1
        else:
            syn = 0
        if cp == 10:
            out_codes[o] = CODE_NEWLINE
            out_srcw[o] = 1 - syn
            o += 1
            col = 0
            continue
        if cp == 9:
            fill = 8 - col % 8
            for j in range(fill):
                out_codes[o + j] = space
                out_srcw[o + j] = 0
            out_srcw[o] = 1 - syn
            if space < 0:
                unseen += fill
            o += fill
            col += fill
            continue
        if cp >= 0x300:
            w = cells[cp]
            if w < 0:
                return -1 - i, zw, unseen
            if i == drop:
                zw += 1
                continue
            if w == 0 and syn == 0:
                zw += 1
                if cp == 0x200D:
                    j = i + 1
                    while j < n and (cps[j] == 0xFE0F or 0x1F3FB <= cps[j] <= 0x1F3FF):
                        j += 1
                    if j < n and (0x2600 <= cps[j] <= 0x27BF or 0x1F000 <= cps[j] <= 0x1FAFF):
                        drop = j
                continue
        g = table[cp]
        if g < 0:
            g = CODE_UNSEEN - np.int64(cp)
            unseen += 1
        elif label_len is not None:
            if g < label_len.shape[0] and label_len[g] > 0:
                w = label_len[g]
        out_codes[o] = g
        out_srcw[o] = 1 - syn
        o += 1
        col += w
    return o, zw, unseen


@jit
def pack_rows(pixels, height, depth, out):
    """Pack the first ``height`` rows of a grey page into PNG scanlines (filter byte 0, then packed samples).

    Parameters
    ----------
    pixels : uint8 array (h, width)
        Grey values; a sample keeps the top ``depth`` bits of its pixel (exact where every pixel is a multiple of
        ``255 // (2**depth - 1)``).
    height : int
        Rows to pack (``<= h``).
    depth : int
        Bits per sample: 1, 2, 4 or 8.
    out : uint8 array (height * (1 + ceil(width*depth/8)),)
        Modified in place.

    Returns
    -------
    int
        Number of bytes written.
    """
    width = pixels.shape[1]
    stride = (width * depth + 7) // 8
    per = 8 // depth
    shift = 8 - depth
    o = 0
    for y in range(height):
        out[o] = 0
        o += 1
        if depth == 8:
            for x in range(width):
                out[o + x] = pixels[y, x]
            o += stride
            continue
        full = width // per
        if depth == 2:
            for b in range(full):
                x = 4 * b
                out[o + b] = ((pixels[y, x] >> 6) << 6) | ((pixels[y, x + 1] >> 6) << 4) \
                    | ((pixels[y, x + 2] >> 6) << 2) | (pixels[y, x + 3] >> 6)
        else:
            for b in range(full):
                x = per * b
                v = 0
                for k in range(per):
                    v = (v << depth) | (pixels[y, x + k] >> shift)
                out[o + b] = v
        if full < stride:
            v = 0
            for k in range(per):
                x = full * per + k
                v <<= depth
                if x < width:
                    v |= pixels[y, x] >> shift
            out[o + full] = v
        o += stride
    return o
