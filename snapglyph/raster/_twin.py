"""Plain-Python twin of :func:`snapglyph.raster._kernels.layout_blit`: same arguments, same result, same pixels.

The renderer uses it for short documents while numba is not loaded yet (importing numba costs about 0.5 s of
start-up). It writes every cell whole with numpy slicing, so it ignores the ink lists. It is a line-by-line port
of the kernel (same state layout); tests hold the two, and the independent reference renderer, pixel-equal.
"""

from __future__ import annotations

__all__ = ["layout_blit_py"]

_STYLE_MARKER = 4


def _rows(codes, i, stop, colw, gwidth, cont) -> int:
    b, col = 0, 1 if cont else 0
    while i < stop:
        c = int(codes[i])
        if c == -5:
            break
        if c == -1:
            b, col = b + 1, 0
        elif c >= 0:
            w = int(gwidth[c])
            if col + w > colw:
                b, col = b + 1, 1
            col += w
        i += 1
    return b + (1 if col > 0 else 0)


def _ink(cache: dict, g: int, s: int, glyphs, gwidth, lut, cell_w):
    """The pixels of glyph ``g`` in style ``s``: ``(cell_h, cells * cell_w)`` uint8, computed once per call."""
    img = cache.get((g, s))
    if img is None:
        img = cache[(g, s)] = lut[s][glyphs[g, :, :int(gwidth[g]) * cell_w]]
    return img


class _Twin:
    def __init__(self, page, glyphs, gwidth, lut, cell_w, cell_h, ink):
        self.page, self.glyphs, self.gwidth, self.lut, self.cw, self.ch = page, glyphs, gwidth, lut, cell_w, cell_h
        self.ink = ink

    def cell(self, g, s, row, col):
        if g != 0 or self.lut[s, 0] != 255:
            img = _ink(self.ink, g, s, self.glyphs, self.gwidth, self.lut, self.cw)
            self.page[row * self.ch:(row + 1) * self.ch, col * self.cw:col * self.cw + img.shape[1]] = img

    def open_band(self, codes, i, stop, st, rows) -> bool:
        row = st[0] + (1 if st[1] > 0 else 0)
        free = rows - row
        if free <= 0:
            return False
        k, colw = st[5], st[6]
        n = _rows(codes, i, stop, colw, self.gwidth, st[7])
        bh = (n + k - 1) // k if n <= k * free else free
        ncu = min(k, (n + bh - 1) // bh) if bh > 0 else 0
        for j in range(1, ncu):
            x = (j * (colw + 1) - 1) * self.cw + self.cw // 2
            self.page[row * self.ch:(row + bh) * self.ch, x] = self.lut[_STYLE_MARKER, 3]
        st[0], st[1], st[3] = row, 0, max(st[3], row + bh)
        st[8:16] = [1, row, bh, 0, 0, st[13], row + st[13], ncu]
        return True


def _prose(codes, styles, i, stop, st, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense, marker,
           out_line, out_col, line_flag, ink) -> int:
    """Lay out prose elements from ``i`` until a block code, ``stop`` or a full page; return the next index, or
    ``-1 - index`` when the page is full. The hot path: everything in local variables."""
    row, col, used, rows_used, extra = st[0], st[1], st[2], st[3], st[13]
    full = False
    while i < stop:
        c = int(codes[i])
        if c <= -4:
            break
        if c <= -2:
            if c == -2 and col > 0:
                row, col = row + 1, 0
            i += 1
            continue
        if c == -1:
            if not dense:
                if row < rows and line_flag[row + extra] == 0:
                    line_flag[row + extra] = 1
                row, col = row + 1, 0
                i += 1
                continue
            g, s = marker, _STYLE_MARKER
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
        out_line[i] = line
        out_col[i] = col
        col += w
        used += w
        if row + 1 > rows_used:
            rows_used = row + 1
        i += 1
    st[0], st[1], st[2], st[3] = row, col, used, rows_used
    return -1 - i if full else i


def layout_blit_py(codes, styles, start, stop, state, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense,
                   marker, ink_start, ink_off, ink_lvl, out_line, out_col, line_flag, cont):
    """Plain-Python twin of :func:`snapglyph.raster._kernels.layout_blit` (see there for every argument)."""
    ink: dict = {}  # (glyph, style) -> pixels, for this call
    t = _Twin(page, glyphs, gwidth, lut, cell_w, cell_h, ink)
    st = [int(v) for v in state]
    i = start
    try:
        while i < stop:
            c = int(codes[i])
            if c == -4:
                st[4:9] = [1, int(codes[i + 1]), int(codes[i + 2]), 0, 0]
                i += 3
                continue
            if st[4] == 1:
                if st[8] == 0:
                    if not t.open_band(codes, i, stop, st, rows):
                        break
                    if st[7] == 1:
                        t.cell(cont, _STYLE_MARKER, st[9], 0)
                        line_flag[st[14]] = 2
                        st[1], st[7] = 1, 0
                        st[2] += 1
                if c == -5:
                    if st[15] > 0:
                        st[13] += (st[15] - 1) * st[10]
                    st[0], st[1], st[4], st[8] = st[9] + st[10], 0, 0, 0
                    i += 1
                    continue
                if c < -1:
                    i += 1
                    continue
                if st[11] >= st[15]:
                    break
                bh = st[10]
                if c == -1:
                    line = st[14] + st[11] * bh + st[12]
                    if line_flag[line] == 0:
                        line_flag[line] = 1
                    st[12] += 1
                    st[1] = 0
                    if st[12] == bh:
                        st[11], st[12] = st[11] + 1, 0
                    i += 1
                    continue
                w = int(gwidth[c])
                colw = st[6]
                if st[1] + w > colw:
                    st[12] += 1
                    if st[12] == bh:
                        st[11], st[12] = st[11] + 1, 0
                    if st[11] >= st[15]:
                        st[7] = 1
                        break
                    line_flag[st[14] + st[11] * bh + st[12]] = 2
                    t.cell(cont, _STYLE_MARKER, st[9] + st[12], st[11] * (colw + 1))
                    st[1] = 1
                    st[2] += 1
                line = st[14] + st[11] * bh + st[12]
                t.cell(c, int(styles[i]), st[9] + st[12], st[11] * (colw + 1) + st[1])
                if line_flag[line] == 0:
                    line_flag[line] = 1
                out_line[i], out_col[i] = line, st[1]
                st[1] += w
                st[2] += w
                i += 1
                continue
            i = _prose(codes, styles, i, stop, st, page, glyphs, gwidth, lut, cell_w, cell_h, cols, rows, dense,
                       marker, out_line, out_col, line_flag, ink)
            if i < 0:
                i = -1 - i
                break
    finally:
        state[:] = st
    return i
