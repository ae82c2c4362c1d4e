"""Numba kernels: arrays and scalars in, arrays modified in place. No closures, no Python objects.

Every kernel is a module-level function compiled through the one alias :data:`jit`
(``numba.njit(cache=True, nogil=True)``), so numba's on-disk cache serves every process. ``python -m snapglyph.warm``
compiles (or loads) each of them once.

Stream codes (the ``codes`` array of :func:`layout_blit`): a value ``>= 0`` is a glyph index into the atlas;
``CODE_NEWLINE`` is a source newline; ``CODE_ROW_START`` starts a new row unless the cursor is at a row start;
any other value below -2 is a no-op (it carries accounting only).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["CODE_NEWLINE", "CODE_ROW_START", "STYLE_MARKER", "jit", "layout_blit", "pack_rows"]

jit = njit(cache=True, nogil=True)
"""The one JIT decorator every kernel uses."""

CODE_NEWLINE = -1
CODE_ROW_START = -2
STYLE_MARKER = 4
"""Style row of the pixel table used for the dense-mode newline marker."""


@jit
def layout_blit(codes, styles, start, stop, state, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense,
                marker):
    """Lay out ``codes[start:stop]`` from the cursor in ``state`` and draw them into ``page``, until the page is full.

    Parameters
    ----------
    codes : int32 array (n,)
        Glyph indices (``>= 0``), ``CODE_NEWLINE`` (-1) or ``CODE_ROW_START`` (-2).
    styles : uint8 array (n,)
        Style of each element: a row of ``lut``.
    start, stop : int
        The slice of ``codes`` to place.
    state : int64 array (4,)
        Cursor ``[row, col, cells_used, rows_used]``; modified in place.
    page : uint8 array (height, width)
        The page; modified in place (cells are written whole, background pixels of a space are left as they are
        where the style's background is white).
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

    Returns
    -------
    int
        Index of the first element not placed: ``stop`` when all were placed, else the page is full.
    """
    row = state[0]
    col = state[1]
    used = state[2]
    rows_used = state[3]
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
        if g != 0 or lut[s, 0] != 255:
            y0 = row * cell_h
            x0 = col * cell_w
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
