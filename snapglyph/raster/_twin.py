"""Plain-Python twin of :func:`snapglyph.raster._kernels.layout_blit`: same arguments, same result, same pixels.

The renderer uses it for short documents while numba is not loaded yet (importing numba costs about 0.5 s of
start-up). It writes every cell whole with numpy slicing, so it ignores the ink lists. It mirrors the kernel step by
step (same state layout, same step names: :func:`_prose_run`, :func:`_block_run`, :meth:`_Twin.open_band`,
:func:`_close_block`); tests hold the two, and the independent reference renderer, pixel-equal.
"""

from __future__ import annotations

from ._codes import (CODE_BLOCK, CODE_BLOCK_END, CODE_NEWLINE, CODE_ROW_START, S_BAND_OPEN, S_CELLS, S_COL, S_COLUMN,
                     S_COLUMNS, S_COLW, S_EXTRA, S_FIRST_LINE, S_HEIGHT, S_IN_BLOCK, S_K, S_RESUME, S_ROW,
                     S_ROW_IN_COLUMN, S_ROWS_USED, S_TOP, STYLE_MARKER)

__all__ = ["layout_blit_py"]


def _rows(codes, i, stop, colw, gwidth, cont, limit) -> int:
    """Twin of :func:`snapglyph.raster._kernels.block_rows`."""
    b, col = 0, 1 if cont else 0
    while i < stop:
        c = int(codes[i])
        if c == CODE_BLOCK_END:
            break
        if c == CODE_NEWLINE:
            b, col = b + 1, 0
        elif c >= 0:
            w = int(gwidth[c])
            if col + w > colw:
                b, col = b + 1, 1
            col += w
        if b >= limit:
            return limit
        i += 1
    return min(limit, b + (1 if col > 0 else 0))


def _ink(cache: dict, g: int, s: int, glyphs, gwidth, lut, cell_w):
    """The pixels of glyph ``g`` in style ``s``: ``(cell_h, cells * cell_w)`` uint8, computed once per call."""
    img = cache.get((g, s))
    if img is None:
        img = cache[(g, s)] = lut[s][glyphs[g, :, :int(gwidth[g]) * cell_w]]
    return img


class _Twin:
    """The page and atlas of one call: draws cells and opens bands (``ink``: the :func:`_ink` cache)."""

    def __init__(self, page, glyphs, gwidth, lut, cell_w, cell_h, ink):
        self.page, self.glyphs, self.gwidth, self.lut, self.cw, self.ch = page, glyphs, gwidth, lut, cell_w, cell_h
        self.ink = ink

    def cell(self, g, s, row, col):
        """Twin of :func:`snapglyph.raster._kernels._cell` (a blank glyph on white draws nothing)."""
        if g != 0 or self.lut[s, 0] != 255:
            img = _ink(self.ink, g, s, self.glyphs, self.gwidth, self.lut, self.cw)
            self.page[row * self.ch:(row + 1) * self.ch, col * self.cw:col * self.cw + img.shape[1]] = img

    def open_band(self, codes, i, stop, st, rows, line_flag, cont) -> bool:
        """Twin of :func:`snapglyph.raster._kernels._open_band`."""
        row = st[S_ROW] + (1 if st[S_COL] > 0 else 0)
        free = rows - row
        if free <= 0:
            return False
        k, colw = st[S_K], st[S_COLW]
        n = _rows(codes, i, stop, colw, self.gwidth, st[S_RESUME], k * free + 1)
        bh = (n + k - 1) // k if n <= k * free else free
        ncu = min(k, (n + bh - 1) // bh) if bh > 0 else 0
        for j in range(1, ncu):
            x = (j * (colw + 1) - 1) * self.cw + self.cw // 2
            self.page[row * self.ch:(row + bh) * self.ch, x] = self.lut[STYLE_MARKER, 3]
        st[S_ROW], st[S_COL], st[S_ROWS_USED] = row, 0, max(st[S_ROWS_USED], row + bh)
        st[S_BAND_OPEN:] = [1, row, bh, 0, 0, st[S_EXTRA], row + st[S_EXTRA], ncu]
        if st[S_RESUME] == 1:
            self.cell(cont, STYLE_MARKER, row, 0)
            line_flag[st[S_FIRST_LINE]] = 2
            st[S_COL], st[S_RESUME] = 1, 0
            st[S_CELLS] += 1
        return True


def _close_block(st: list) -> None:
    """Twin of :func:`snapglyph.raster._kernels._close_block`."""
    if st[S_COLUMNS] > 0:
        st[S_EXTRA] += (st[S_COLUMNS] - 1) * st[S_HEIGHT]
    st[S_ROW], st[S_COL], st[S_IN_BLOCK], st[S_BAND_OPEN] = st[S_TOP] + st[S_HEIGHT], 0, 0, 0


def _next_band_row(st: list) -> None:
    """Move the band cursor to the next row, or to the top of the next column after the band's last row (as
    :func:`snapglyph.raster._kernels._block_run` moves it)."""
    st[S_ROW_IN_COLUMN] += 1
    if st[S_ROW_IN_COLUMN] == st[S_HEIGHT]:
        st[S_COLUMN], st[S_ROW_IN_COLUMN] = st[S_COLUMN] + 1, 0


def _block_run(t: _Twin, codes, styles, i, stop, st, rows, out_line, out_col, line_flag, cont) -> tuple[int, bool]:
    """Twin of :func:`snapglyph.raster._kernels._block_run`."""
    if st[S_BAND_OPEN] == 0 and not t.open_band(codes, i, stop, st, rows, line_flag, cont):
        return i, True
    colw, bh = st[S_COLW], st[S_HEIGHT]
    while i < stop:
        c = int(codes[i])
        if c == CODE_BLOCK:
            return i, False
        if c == CODE_BLOCK_END:
            _close_block(st)
            return i + 1, False
        if c < CODE_NEWLINE:
            i += 1
            continue
        if st[S_COLUMN] >= st[S_COLUMNS]:
            return i, True
        line = st[S_FIRST_LINE] + st[S_COLUMN] * bh + st[S_ROW_IN_COLUMN]
        if c == CODE_NEWLINE:
            if line_flag[line] == 0:
                line_flag[line] = 1
            _next_band_row(st)
            st[S_COL] = 0
            i += 1
            continue
        w = int(t.gwidth[c])
        if st[S_COL] + w > colw:  # a continuation row
            _next_band_row(st)
            if st[S_COLUMN] >= st[S_COLUMNS]:
                st[S_RESUME] = 1
                return i, True
            line = st[S_FIRST_LINE] + st[S_COLUMN] * bh + st[S_ROW_IN_COLUMN]
            line_flag[line] = 2
            t.cell(cont, STYLE_MARKER, st[S_TOP] + st[S_ROW_IN_COLUMN], st[S_COLUMN] * (colw + 1))
            st[S_COL] = 1
            st[S_CELLS] += 1
        t.cell(c, int(styles[i]), st[S_TOP] + st[S_ROW_IN_COLUMN], st[S_COLUMN] * (colw + 1) + st[S_COL])
        if line_flag[line] == 0:
            line_flag[line] = 1
        out_line[i], out_col[i] = line, st[S_COL]
        st[S_COL] += w
        st[S_CELLS] += w
        i += 1
    return i, False


def _prose_run(codes, styles, i, stop, st, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense, marker,
               out_line, out_col, line_flag, ink) -> tuple[int, bool]:
    """Twin of :func:`snapglyph.raster._kernels._prose_run`. The hot path: the cursor in local variables."""
    row, col, used, rows_used, extra = st[S_ROW], st[S_COL], st[S_CELLS], st[S_ROWS_USED], st[S_EXTRA]
    full = False
    while i < stop:
        c = int(codes[i])
        if c == CODE_BLOCK:
            break
        if c <= CODE_ROW_START:
            if c == CODE_ROW_START and col > 0:
                row, col = row + 1, 0
            i += 1
            continue
        if c == CODE_NEWLINE:
            if not dense:
                if row < rows and line_flag[row + extra] == 0:
                    line_flag[row + extra] = 1
                row, col = row + 1, 0
                i += 1
                continue
            g, s = marker, STYLE_MARKER
        else:
            g, s = c, int(styles[i])
        w = int(gwidth[g])
        if col + w > cols:
            row, col = row + 1, 0
        if row >= rows:
            full = True
            break
        if g != 0 or lut[s, 0] != 255:
            img = ink.get((g, s))
            if img is None:
                img = _ink(ink, g, s, glyphs, gwidth, lut, cell_w)
            page[row * cell_h:(row + 1) * cell_h, col * cell_w:(col + w) * cell_w] = img
        line = row + extra
        if line_flag[line] == 0:
            line_flag[line] = 1
        out_line[i], out_col[i] = line, col
        col += w
        used += w
        rows_used = max(rows_used, row + 1)
        i += 1
    st[S_ROW], st[S_COL], st[S_CELLS], st[S_ROWS_USED] = row, col, used, rows_used
    return i, full


def layout_blit_py(codes, styles, start, stop, state, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense,
                   marker, ink_start, ink_off, ink_lvl, out_line, out_col, line_flag, cont):
    """Plain-Python twin of :func:`snapglyph.raster._kernels.layout_blit` (see there for every argument).

    Returns
    -------
    int
        Index of the first element not placed; ``state``, ``page``, ``out_line``, ``out_col`` and ``line_flag``
        are modified in place exactly as the kernel modifies them.

    Examples
    --------
    >>> import numpy as np
    >>> page, state = np.full((2, 8), 255, np.uint8), np.zeros(16, np.int64)
    >>> glyphs, lut = np.full((2, 2, 4), 3, np.uint8), np.array([[255, 170, 85, 0]] * 5, np.uint8)
    >>> codes, out = np.array([1, 1, 1, 1, 1], np.int32), np.full(5, -1, np.int32)
    >>> layout_blit_py(codes, np.zeros(5, np.uint8), 0, 5, state, page, glyphs, np.ones(2, np.uint8), lut, 2, 2,
    ...                4, 1, True, 0, None, None, None, out, out.copy(), np.zeros(8, np.int8), 0)
    4
    >>> out.tolist(), state[:4].tolist(), int(page.min())
    ([0, 0, 0, 0, -1], [1, 0, 4, 1], 0)
    """
    ink: dict = {}  # (glyph, style) -> pixels, for this call
    t = _Twin(page, glyphs, gwidth, lut, cell_w, cell_h, ink)
    st = [int(v) for v in state]
    i = start
    try:
        while i < stop:
            if int(codes[i]) == CODE_BLOCK:  # enter a block: its band opens at its first element
                st[S_IN_BLOCK:S_BAND_OPEN + 1] = [1, int(codes[i + 1]), int(codes[i + 2]), 0, 0]
                i += 3
                continue
            if st[S_IN_BLOCK] == 1:
                i, full = _block_run(t, codes, styles, i, stop, st, rows, out_line, out_col, line_flag, cont)
            else:
                i, full = _prose_run(codes, styles, i, stop, st, page, glyphs, gwidth, lut, cell_w, cell_h, cols,
                                     rows, dense, marker, out_line, out_col, line_flag, ink)
            if full:
                break
    finally:
        state[:] = st
    return i
