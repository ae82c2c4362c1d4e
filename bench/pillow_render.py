"""The Pillow baseline as a whole process, like for like with ``snapglyph render``: text file in, PNG files out.

What a careful user would write with Pillow alone: DejaVu Sans Mono at the cell's pixel size, one
``ImageDraw.text`` call per row on a 1092x1092 page of 6x12 cells (dense: each newline drawn as a marker, rows cut
at the page width), then the same PNG as snapglyph's: grey levels 0, 85, 170, 255 at 2 bits a pixel (a palette
PNG), zlib level 1. usage: ``python bench/pillow_render.py INPUT OUT_DIR``
"""

from __future__ import annotations

import sys
from pathlib import Path

CELL = (6, 12)
PAGE = (1092, 1092)


def main(src: str, out: str) -> int:
    from PIL import Image, ImageDraw, ImageFont

    from snapglyph.raster.atlas import font_path

    text = Path(src).read_text(encoding="utf-8", errors="replace").replace("\t", "        ")
    flat = text.replace("\n", "\u21b5")
    cols, rows_per_page = PAGE[0] // CELL[0], PAGE[1] // CELL[1]
    rows = [flat[i:i + cols] for i in range(0, len(flat), cols)]
    font = ImageFont.truetype(str(font_path("dejavu")), 10, layout_engine=ImageFont.Layout.BASIC)
    levels = [min(3, (v + 42) // 85) for v in range(256)]
    palette = [0, 0, 0, 85, 85, 85, 170, 170, 170, 255, 255, 255]
    Path(out).mkdir(parents=True, exist_ok=True)
    for k, start in enumerate(range(0, len(rows), rows_per_page)):
        im = Image.new("L", PAGE, 255)
        draw = ImageDraw.Draw(im)
        for r, row in enumerate(rows[start:start + rows_per_page]):
            draw.text((0, r * CELL[1]), row, font=font, fill=0)
        p = Image.frombytes("P", PAGE, im.point(levels).tobytes())
        p.putpalette(palette)
        p.save(Path(out) / f"page-{k + 1:04d}.png", "PNG", bits=2, compress_level=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
