"""A slow, obviously correct renderer in plain Python, for pixel-exact comparison with the numba kernels.

It shares only the inputs with the fast path (text normalization, the glyph atlas, the table of symbol labels and
the profile geometry) and imports nothing from ``snapglyph.raster._kernels`` or ``snapglyph.raster.render``: layout, wrapping,
paging, styles, label substitution and blitting are written again here, one character and one pixel at a time.
"""

from __future__ import annotations

import numpy as np

from snapglyph.raster.atlas import MARKER, SYMBOL_LABELS, atlas
from snapglyph.model.document import STYLE_HEADER, Document
from snapglyph.providers.profiles import profile as get_profile
from snapglyph.raster.text import normalize

# Pixel value of each atlas level for each style, written out independently of render.STYLE_LUT.
INK = {0: (255, 170, 85, 0), 1: (255, 170, 170, 85), 2: (0, 85, 170, 255), 3: (255, 170, 85, 0)}
MARKER_INK = (255, 170, 170, 170)


def reference_pages(document: Document, *, profile: str, cell: tuple[int, int], mode: str,
                    family: str | None = None) -> list[np.ndarray]:
    """Render ``document`` page by page; return the pixel arrays ``(height, width)`` uint8."""
    prof = get_profile(profile)
    at = atlas(cell, family)
    cw, ch = cell
    width, height = prof.page_size
    cols, rows = width // cw, height // ch
    pages: list[np.ndarray] = []
    page = [[255] * width for _ in range(height)]
    row = col = rows_used = 0
    touched = False

    # Symbols that no font of this atlas draws and that have a label take the label's cells (tab stops too).
    labels = {}
    for cp, label in SYMBOL_LABELS.items():
        at.ensure([cp])
        if cp not in at.covered_by:
            labels[chr(cp)] = label

    for seg in document.segments:
        nt = normalize(seg.text, {c: len(label) for c, label in labels.items()})
        if seg.style == STYLE_HEADER or nt.text or nt.zero_width or nt.removed:
            touched = True
        if seg.style == STYLE_HEADER and col > 0:
            row, col = row + 1, 0
        for c in "".join(labels.get(c, c) for c in nt.text):  # a labelled symbol is shown as its label's letters
            if c == "\n" and mode == "lines":
                row, col = row + 1, 0
                continue
            if c == "\n":
                g, ink = MARKER, MARKER_INK
            else:
                at.ensure([ord(c)])
                g, ink = int(at.table[ord(c)]), INK.get(seg.style, INK[0])
            w = int(at.width[g])
            if col + w > cols:
                row, col = row + 1, 0
            if row >= rows:
                pages.append(np.array(page, np.uint8))
                page = [[255] * width for _ in range(height)]
                row = col = rows_used = 0
            for y in range(ch):
                for x in range(w * cw):
                    page[row * ch + y][col * cw + x] = ink[int(at.glyphs[g, y, x])]
            col += w
            rows_used = max(rows_used, row + 1)
    if touched:
        used = max(1, rows_used * ch)
        h = min(height, -(-used // prof.patch) * prof.patch)
        # a short last page only where the provider takes it as it is and it costs no more than a full page
        if prof.provider_resize(width, h) != (width, h) or prof.image_tokens(width, h) > prof.image_tokens(width, height):
            h = height
        pages.append(np.array(page[:h], np.uint8))
    return pages
