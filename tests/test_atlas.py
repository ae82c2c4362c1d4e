"""Glyph atlas: coverage of the scripts issue 3 names, distinct look-alikes, ink checks, the fonts report."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from snapglyph.raster.atlas import CELLS, REPL_NARROW, REPL_WIDE, atlas, font_path, fonts_report
from snapglyph.errors import FontError, InputError

SAMPLES = {
    "latin": "àéîõüßÆŒłş", "greek": "αβγΔΩ", "cyrillic": "жЖщЯ", "box": "─│┌┐└┘├┼", "blocks": "█▀▄▒░",
    "arrows": "←↑→↓↔", "braille": "⠋⠙⠹⠸⠼", "cjk": "漢字中文日本語", "hangul": "한글가나다", "kana": "ひらがなカタカナ",
}


@pytest.mark.parametrize("cell", [(6, 12), (8, 16)])
@pytest.mark.parametrize("family", ["outline", "bitmap"])
def test_coverage(cell, family):
    at = atlas(cell, family)
    for name, chars in SAMPLES.items():
        cps = [ord(c) for c in chars]
        at.ensure(cps)
        for c in cps:
            g = at.table[c]
            assert g not in (REPL_NARROW, REPL_WIDE), f"{name}: {chr(c)!r} missing at {cell} {family}"
            assert at.glyphs[g].any(), f"{chr(c)!r} has no ink"
            wide = name in ("cjk", "hangul", "kana")
            assert at.width[g] == (2 if wide else 1)
            if not wide:
                assert not at.glyphs[g][:, cell[0]:].any()  # narrow glyphs stay in their cell


def test_small_cell_has_latin_but_no_wide():
    at = atlas((5, 8))
    assert at.family == "bitmap" and not at.wide_ok
    assert at.coverage([ord(c) for c in "äöüßαжé─█⠋"]) == 10
    at.ensure([ord("漢")])
    assert at.table[ord("漢")] == REPL_WIDE


@pytest.mark.parametrize("name", list(CELLS))
@pytest.mark.parametrize("family", ["outline", "bitmap"])
def test_lookalikes_distinct(name, family):
    at = atlas(CELLS[name], family)
    groups = ["0O", "1lI", "5S", "8B", "2Z", "0o"]
    for grp in groups:
        imgs = [at.glyphs[at.table[ord(c)]] for c in grp]
        for i in range(len(imgs)):
            for j in range(i + 1, len(imgs)):
                assert not np.array_equal(imgs[i], imgs[j]), f"{grp[i]} and {grp[j]} look the same at {name}"


def test_zero_has_inner_mark():
    """The outline zero carries a dot in its counter, where the letter O is empty."""
    at = atlas((6, 12), "outline")
    zero, oh = at.glyphs[at.table[ord("0")]], at.glyphs[at.table[ord("O")]]
    ys, xs = np.nonzero(zero)
    cy, cx = (ys.min() + ys.max() + 1) // 2, (xs.min() + xs.max()) // 2
    assert zero[cy, cx] > 0 and oh[cy, cx] == 0


def test_errors_and_report():
    with pytest.raises(FontError):
        font_path("no-such-font.ttf")
    with pytest.raises(InputError):
        atlas((2, 2))
    with pytest.raises(InputError):
        atlas((6, 12), "serif")
    report = fonts_report()
    assert "DejaVuSansMono.ttf" in report and "6x12" in report and "Braille" in report


def test_kernels_under_boundscheck(tmp_path):
    """Render edge cases at every cell and mode with numba's bounds checks on (a fresh cache: it compiles)."""
    code = (
        "from snapglyph.model.document import Document\nfrom snapglyph.raster.render import iter_pages\n"
        "for cell in ('5x8', '6x12', '8x16'):\n"
        "    for mode in ('dense', 'lines'):\n"
        "        for t in ('x' * 5000, '漢' * 3000, 'a\\n' * 2000, '\\t\\x1b[31m' * 50 + '\\U0001F600' * 900):\n"
        "            for p in iter_pages(Document.from_text(t), cell=cell, mode=mode, engine='numba'):\n"
        "                p.png\n"
    )
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
