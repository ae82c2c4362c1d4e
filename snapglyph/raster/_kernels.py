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

__all__ = ["CODE_NEWLINE", "CODE_ROW_START", "CODE_UNSEEN", "STYLE_MARKER", "expand_codes", "jit", "layout_blit",
           "pack_rows"]

jit = njit(cache=True, nogil=True)
"""The one JIT decorator every kernel uses."""

CODE_NEWLINE = -1
CODE_ROW_START = -2
CODE_UNSEEN = -16
""":func:`expand_codes` writes ``CODE_UNSEEN - cp`` for a code point ``cp`` whose glyph index is not known yet."""
STYLE_MARKER = 4
"""Style row of the pixel table used for the dense-mode newline marker."""


@jit
def layout_blit(codes, styles, start, stop, state, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense,
                marker, ink_start, ink_off, ink_lvl):
    """Lay out ``codes[start:stop]`` from the cursor in ``state`` and draw them into ``page``, until the page is full.

    A glyph in a style whose background (level 0) is white is drawn from its ink list alone (the pixels of level
    ``> 0``; about 12 per character of real text instead of the 72 of a 6x12 cell): the page must be white (255)
    in every cell not drawn yet, which holds because the cursor only moves forward and pages start white. Other
    styles (inverted headers) write their cells whole.

    Parameters
    ----------
    codes : int32 array (n,)
        Glyph indices (``>= 0``), ``CODE_NEWLINE`` (-1) or ``CODE_ROW_START`` (-2); any other value below -2 is
        skipped.
    styles : uint8 array (n,)
        Style of each element: a row of ``lut``.
    start, stop : int
        The slice of ``codes`` to place.
    state : int64 array (4,)
        Cursor ``[row, col, cells_used, rows_used]``; modified in place.
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
        True: a newline draws ``marker`` (style ``STYLE_MARKER``); False: a newline starts a new row.
    marker : int
        Glyph index of the newline marker.
    ink_start : int32 array (>= max glyph index + 2,)
        Glyph ``g``'s ink pixels are ``ink_off[ink_start[g]:ink_start[g + 1]]``
        (see :meth:`snapglyph.raster.atlas.Atlas.ink_lists`).
    ink_off : int32 array (k,)
        Offset of each ink pixel from its cell's top-left pixel in the flattened page: ``y * width + x``.
    ink_lvl : uint8 array (k,)
        Level (``> 0``) of each ink pixel.

    Returns
    -------
    int
        Index of the first element not placed: ``stop`` when all were placed, else the page is full.
    """
    row = state[0]
    col = state[1]
    used = state[2]
    rows_used = state[3]
    flat = page.reshape(-1)
    width = page.shape[1]
    i = start
    while i < stop:
        c = codes[i]
        if c <= -2:
            if c == -2 and col > 0:
                row += 1
                col = 0
            i += 1
            continue
        if c == -1:
            if not dense:
                row += 1
                col = 0
                i += 1
                continue
            g = marker
            s = 4
        else:
            g = c
            s = styles[i]
        w = np.int64(gwidth[g])
        if col + w > cols:
            row += 1
            col = 0
        if row >= rows:
            break
        y0 = row * cell_h
        x0 = col * cell_w
        if lut[s, 0] == 255:
            base = y0 * width + x0
            for k in range(ink_start[g], ink_start[g + 1]):
                flat[base + ink_off[k]] = lut[s, ink_lvl[k]]
        else:
            for y in range(cell_h):
                for x in range(w * cell_w):
                    page[y0 + y, x0 + x] = lut[s, glyphs[g, y, x]]
        col += w
        used += w
        if row + 1 > rows_used:
            rows_used = row + 1
        i += 1
    state[0] = row
    state[1] = col
    state[2] = used
    state[3] = rows_used
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
