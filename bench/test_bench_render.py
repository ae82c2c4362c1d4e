"""Speed: raster and end to end against the Pillow baseline of issue 3 (one ImageDraw.text call per row).

The baseline is what a careful user would write: DejaVu Sans Mono at the cell's pixel size, one ``ImageDraw.text``
call per row, mode ``L``, PNG ``compress_level=6``, nothing cached across rounds. It draws the same rows on the same
page geometry: in ``dense`` mode the text with each newline replaced by the marker, cut into rows of the page width;
in ``lines`` mode each source line wrapped at the page width.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from conftest import record

CELL = (6, 12)
PAGE = (1092, 1092)


def _rows(text: str, mode: str, cols: int) -> list[str]:
    text = text.replace("\t", "        ")
    if mode == "dense":
        flat = text.replace("\n", "\u21b5")
        return [flat[i:i + cols] for i in range(0, len(flat), cols)]
    rows = []
    for line in text.split("\n"):
        rows.extend([line[i:i + cols] for i in range(0, len(line), cols)] or [""])
    return rows


def pillow_pages(text: str, mode: str, encode: bool) -> int:
    from PIL import Image, ImageDraw, ImageFont

    from snapglyph.raster.atlas import font_path

    font = ImageFont.truetype(str(font_path("dejavu")), 10, layout_engine=ImageFont.Layout.BASIC)
    cols, rows_per_page = PAGE[0] // CELL[0], PAGE[1] // CELL[1]
    rows = _rows(text, mode, cols)
    total = 0
    for start in range(0, len(rows), rows_per_page):
        im = Image.new("L", PAGE, 255)
        draw = ImageDraw.Draw(im)
        for r, row in enumerate(rows[start:start + rows_per_page]):
            if row:
                draw.text((0, r * CELL[1]), row, font=font, fill=0)
        if encode:
            buf = io.BytesIO()
            im.save(buf, "PNG", compress_level=6)
            total += buf.tell()
    return total


def snapglyph_pages(text: str, mode: str, encode: bool) -> int:
    from snapglyph.model.document import Document
    from snapglyph.raster.render import iter_pages

    total = 0
    for page in iter_pages(Document.from_text(text), profile="claude", cell=CELL, mode=mode, reuse_buffer=True):
        total += len(page.png) if encode else int(page.pixels[0, 0])
    return total


@pytest.mark.parametrize("mode", ["dense", "lines"])
def test_pillow_draw(benchmark, corpus, mode):
    benchmark.pedantic(pillow_pages, args=(corpus, mode, False), rounds=1, iterations=1)
    record(benchmark, f"pillow_draw_{mode}")


@pytest.mark.parametrize("mode", ["dense", "lines"])
def test_pillow_draw_png(benchmark, corpus, mode):
    benchmark.pedantic(pillow_pages, args=(corpus, mode, True), rounds=1, iterations=1)
    record(benchmark, f"pillow_draw_png_{mode}")


@pytest.mark.parametrize("mode", ["dense", "lines"])
def test_snapglyph_raster(benchmark, corpus, warm_kernels, mode):
    snapglyph_pages(corpus[:20000], mode, False)  # build the atlas glyphs this text needs
    benchmark.pedantic(snapglyph_pages, args=(corpus, mode, False), rounds=5, iterations=1)
    record(benchmark, f"snapglyph_raster_{mode}")


@pytest.mark.parametrize("mode", ["dense", "lines"])
def test_snapglyph_png(benchmark, corpus, warm_kernels, mode):
    snapglyph_pages(corpus[:20000], mode, True)
    benchmark.pedantic(snapglyph_pages, args=(corpus, mode, True), rounds=5, iterations=1)
    record(benchmark, f"snapglyph_png_{mode}")


@pytest.mark.parametrize("mode", ["dense", "lines"])
def test_png_one_page(benchmark, corpus, warm_kernels, mode):
    """PNG encoding alone, one full 1092x1092 page: this writer (2-bit, level 1) vs Pillow (L, level 6)."""
    from PIL import Image

    from snapglyph.raster.encode import png_bytes
    from snapglyph.raster.render import render

    page = render(corpus[:200_000], cell=CELL, mode=mode)[1].pixels
    png = benchmark(png_bytes, page, depth=2)
    record(benchmark, f"png_snapglyph_{mode}")
    im = Image.fromarray(page)
    buf = io.BytesIO()
    im.save(buf, "PNG", compress_level=6)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("L")), page)
    benchmark.extra_info.update(snapglyph_kb=len(png) / 1024, pillow_l6_kb=buf.tell() / 1024)
