"""The numba kernels against the plain-Python reference renderer, page geometry, append stability, determinism."""

from __future__ import annotations

import dataclasses
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from reference_renderer import reference_pages, reference_render

from snapglyph import Document, InputError, profile, render
from snapglyph._config import CHUNK, SPLIT
from snapglyph.model.document import STYLE_CALL, STYLE_DIM, STYLE_HEADER, STYLE_TEXT, Segment
from snapglyph.raster.atlas import atlas
from snapglyph.raster.render import iter_pages, render_document
from snapglyph.raster.stream import chunks

GOLDEN = Path(__file__).parent / "golden"

# A small page so that the slow reference renderer can check several pages quickly.
SMALL = dataclasses.replace(profile("claude"), name="small", page_size=(224, 112), patch=28)

MIXED = (
    "def f(x):\n\tif x:\n\t\treturn {\"id\": \"a0f9e1B8\", 'n': 1}  # 0O 1lI\n"
    "Grüße aus Köln; αβγ; жЖ; ─│┌┐ █▒ → ⠋⠙⠹ é\n"
    "漢字 and 한글 wide; x" + "y" * 50 + "漢z\n"
    "\x1b[31mred\x1b[0m 10%\r100%\n\n\nemoji \U0001F600 \U0001F468\u200d\U0001F469 done\n" + "word " * 60
)


def doc() -> Document:
    return Document([
        Segment(" #1 user ", STYLE_HEADER, 1), Segment("\n", STYLE_TEXT, 1), Segment(MIXED, STYLE_TEXT, 1),
        Segment(" #2 assistant ", STYLE_HEADER, 2), Segment("\n", STYLE_TEXT, 2),
        Segment("-> bash {\"command\": \"ls\"}\n", STYLE_CALL, 2),
        Segment(" #3 tool bash ", STYLE_HEADER, 3), Segment("\n", STYLE_TEXT, 3),
        Segment("total 0\n\tREADME.md\n" * 8, STYLE_DIM, 3),
    ])


# Symbols with a label where no font draws them (✅ ❌ 🚀 ⚡ ...), some with a variation selector or inside a ZWJ
# sequence, ⌛ (a glyph in efont 16 px only) and ⚠ ✔ (glyphs in DejaVu Sans Mono: never labelled).
LABELLED = ("status: ✅ pass ❌ fail ⚠\ufe0f warn ✔ ok 🚀\ufe0f ship 🔥 ⚡ 💥 👍 📁 src/ 📝 🐛 💡 🔍 ⏳ ⌛ 🎉 ✨"
            " 🟢 🔴 🟡\n"
            "\t✅\t❌\t|\n👨\u200d🚀 astronaut; ⎿  Read 5 lines; " + "✅❌" * 30 + "\n")


def labelled_doc() -> Document:
    return Document(doc().segments + [Segment(" #4 assistant ", STYLE_HEADER, 4), Segment("\n", STYLE_TEXT, 4),
                                      Segment(LABELLED, STYLE_TEXT, 4), Segment(LABELLED, STYLE_DIM, 4)])


@pytest.mark.parametrize("mode", ["dense", "lines"])
@pytest.mark.parametrize("cell", [(5, 8), (6, 12), (8, 16)])
@pytest.mark.parametrize("family", ["outline", "bitmap"])
def test_kernel_matches_reference(mode, cell, family):
    d = labelled_doc()
    if cell == (5, 8):  # no wide glyphs at 5x8: the fast path would switch cells; compare on text without CJK
        d = Document([dataclasses.replace(s, text=s.text.replace("漢", "K").replace("字", "J")
                                          .replace("한", "H").replace("글", "G")) for s in d.segments])
    fast = list(iter_pages(d, profile=SMALL, cell=cell, mode=mode, family=family))
    slow = reference_pages(d, profile=SMALL, cell=cell, mode=mode, family=family)
    assert len(fast) == len(slow) >= 2
    for f, s in zip(fast, slow):
        assert f.pixels.shape == s.shape
        assert np.array_equal(f.pixels, s), f"page {f.index} differs"
        assert f.cell == cell and f.note == ""


@pytest.mark.parametrize("mode", ["dense", "auto", "lines"])
def test_chunk_that_fills_the_page(mode):
    """A chunk whose last glyph fills the page's last cell: the next chunk starts on a full page, places nothing
    there and goes on on the next page (the renderer took that for a layout stuck on an empty page and raised)."""
    cells = (224 // 6) * (112 // 12)
    half = -(-CHUNK // (2 * cells)) * cells  # two segments of whole pages make one chunk (each at most SPLIT)
    n = 2 * half
    assert half <= SPLIT and half < CHUNK <= n
    d = Document([Segment("a" * half, STYLE_TEXT, 0), Segment("a" * half, STYLE_TEXT, 0), Segment("b", STYLE_TEXT, 1)])
    assert [len(ck.codes) for ck in chunks(d, atlas((6, 12)))] == [n, 1]
    pages = list(iter_pages(d, profile=SMALL, cell=(6, 12), mode=mode))
    assert len(pages) == n // cells + 1
    assert pages[-2].text == ("a" * 37 + "\n") * 8 + "a" * 37 and pages[-2].last_id == 0
    assert pages[-1].text == "b" and (pages[-1].first_id, pages[-1].chars) == (1, 1)


def test_geometry_and_trim():
    for name in ("claude", "openai"):
        prof = profile(name)
        pages = render("hello\n" * 5000, profile=name, mode="lines")
        assert len(pages) >= 2
        for p in pages[:-1]:
            assert (p.width, p.height) == prof.page_size
        last = pages[-1]
        assert last.width == prof.page_size[0]
        assert last.height % prof.patch == 0 and prof.patch <= last.height <= prof.page_size[1]
        assert [p.index for p in pages] == list(range(len(pages)))
    assert render("x")[0].height == 28


def test_append_stability():
    base = doc()
    more = Document(base.segments + [Segment(" #4 user ", STYLE_HEADER, 4), Segment("\nnext " * 400, 0, 4)])
    a = render_document(base, profile=SMALL)
    b = render_document(more, profile=SMALL)
    assert len(b) > len(a)
    for p, q in zip(a[:-1], b):
        assert p.png == q.png
    used = a[-1].rows * a[-1].cell[1]
    assert np.array_equal(a[-1].pixels[:used], b[len(a) - 1].pixels[:used])


def test_accounting_and_ids():
    d = doc()
    pages = render_document(d, profile=SMALL)
    n = d.n_chars
    assert sum(p.chars + p.zero_width + p.removed for p in pages) == n
    assert sum(p.replaced for p in pages) == 2  # the two emoji (the joined one is zero-width)
    assert pages[0].first_id == 1 and pages[-1].last_id == 3
    assert all(0 < p.fill <= 1 for p in pages)


def test_stray_codes_are_no_ops_in_the_kernel():
    """A code below -2 outside a block (a stray ``CODE_BLOCK_END``, ``CODE_NOP``, -6) is skipped by the kernel (a
    plain-Python twin of the kernel once looped forever on -5 and -6 in prose)."""
    from snapglyph.raster._kernels import layout_blit

    glyphs = np.zeros((4, 2, 4), np.uint8)
    glyphs[1] = 3
    lut = np.array([[255, 170, 85, 0]] * 5, np.uint8)
    ink = (np.array([0, 0, 4, 4, 4], np.int32), np.array([0, 1, 8, 9], np.int32), np.full(4, 3, np.uint8))
    codes = np.array([1, -5, 1, -6, 1, -3, 1], np.int32)
    page, state = np.full((4, 8), 255, np.uint8), np.zeros(16, np.int64)
    out_line, out_col = np.full(7, -1, np.int32), np.full(7, -1, np.int32)
    j = layout_blit(codes, np.zeros(7, np.uint8), 0, 7, state, page, glyphs, np.ones(4, np.uint8), lut, 2, 2, 4, 2,
                    True, 1, *ink, out_line, out_col, np.zeros(16, np.int8), 2)
    assert (j, out_line.tolist(), out_col.tolist()) == (7, [0, -1, 0, -1, 0, -1, 0], [0, -1, 1, -1, 2, -1, 3])
    assert page.tolist()[0] == [0, 0, 0, 0, 0, 0, 0, 0] and page.tolist()[2] == [255] * 8


@pytest.mark.parametrize("cell", [(5, 8), (6, 12), (8, 16)])
def test_symbols_without_glyph_read_as_labels(cell):
    """✅ and ❌ (no glyph in any bundled font) are drawn as their labels [ok] and [x], pixel for pixel, and count as
    replaced."""

    def page(text):
        pages = list(iter_pages(Document.from_text(text), profile=SMALL, cell=cell))
        assert len(pages) == 1
        return pages[0]

    ok, x = page("✅"), page("❌\ufe0f")
    assert not np.array_equal(ok.pixels, x.pixels)
    assert np.array_equal(ok.pixels, page("[ok]").pixels) and np.array_equal(x.pixels, page("[x]").pixels)
    assert (ok.chars, ok.replaced, ok.drawn) == (1, 1, 0)
    assert (x.chars, x.replaced, x.zero_width, x.drawn) == (1, 1, 1, 0)
    both = page("a ✅ b\t❌ c 🚀d")
    plain = page("a [ok] b\t[x] c [rocket]d")
    assert np.array_equal(both.pixels, plain.pixels)
    assert (both.chars, both.replaced) == (12, 3) and both.drawn + both.replaced == 12
    # Where a font has the glyph, it is drawn, never the label: ⚠ and ✔ (DejaVu Sans Mono), ⌛ only in efont 16 px.
    assert not np.array_equal(page("⚠").pixels, page("[!]").pixels) and page("⚠").replaced == 0
    assert page("✔").replaced == 0
    hourglass = page("⌛")
    assert (hourglass.replaced == 0) == (cell == (8, 16))
    assert np.array_equal(hourglass.pixels, page("[wait]").pixels) == (cell != (8, 16))
    # Tab stops count the label's cells, so tab-aligned columns stay aligned; ⎿ is drawn as its look-alike └.
    assert np.array_equal(page("✅\tA\n❌\tB").pixels, page("[ok]\tA\n[x]\tB").pixels)
    assert np.array_equal(page("⎿  Read").pixels, page("└  Read").pixels) and page("⎿").replaced == 1
    # A symbol with no glyph and no label keeps the replacement box (two cells).
    box = page("\U0001F600")
    assert box.replaced == 1 and not np.array_equal(box.pixels, page("[ok]").pixels)


def test_dense_fills_rows():
    text = "\n".join(f"line {i}: some words" for i in range(3000))
    dense = render(text, mode="dense")
    lines = render(text, mode="lines")
    assert len(dense) < len(lines)
    assert dense[0].fill > 0.99 and lines[0].fill < 0.3


def test_wide_switch_note():
    pages = render("abc 漢字", cell="5x8")
    assert pages[0].cell == (6, 12) and "switched" in pages[0].note
    assert render("abc", cell="5x8")[0].cell == (5, 8)


def test_inputs_and_errors():
    from snapglyph import Message, Part

    msgs = [Message(id=0, role="user", parts=[Part(kind="text", text="hi")])]
    assert render(msgs)[0].first_id == 0
    assert render(Document.from_text("x"))[0].chars == 1
    assert render("") == []
    with pytest.raises(InputError):
        render(123)
    with pytest.raises(InputError):
        render("x", mode="sparse")
    with pytest.raises(InputError):
        render("x", cell="huge")
    with pytest.raises(InputError):
        render("x", profile="nope")


def test_reuse_buffer_stream(tmp_path):
    text = "abc " * 20000
    pngs = [p.png for p in iter_pages(Document.from_text(text), profile="claude", reuse_buffer=True)]
    assert pngs == [p.png for p in render(text)]


def test_golden_page():
    """One page of real-looking mixed text, pinned: any change to fonts, layout or styles shows up here."""
    page = render_document(doc(), profile="claude", cell=(6, 12), mode="dense")[0]
    gold = np.load(GOLDEN / "mixed_6x12_dense.npy")
    assert page.pixels.shape == gold.shape
    assert np.array_equal(page.pixels, gold)


def test_png_roundtrip_and_determinism():
    pages = render_document(doc(), profile="claude")
    for p in pages:
        im = Image.open(io.BytesIO(p.png))
        assert np.array_equal(np.asarray(im.convert("L")), p.pixels)
    code = ("import sys, hashlib; sys.path.insert(0, 'tests'); from test_render import doc; "
            "from snapglyph.raster.render import render_document; "
            "print(hashlib.sha256(b''.join(p.png for p in render_document(doc()))).hexdigest())")
    root = Path(__file__).parent.parent
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                                check=True).stdout)
    assert len(outs) == 1


def test_start_up_imports_no_sdk():
    code = ("import sys, snapglyph.raster.render; bad = [m for m in ('tiktoken', 'openai', 'anthropic', 'httpx') "
            "if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def auto_doc() -> Document:
    """Prose, fenced code, a diff, a listing with tabs, a long wrapped line, wide and labelled symbols."""
    code = "".join(f"    line_{i} = compute({i}, 'value')  # step {i}\n" for i in range(40))
    listing = "".join(f"src/module_{i}.py\t{i * 37} bytes\n" for i in range(30))
    return Document(labelled_doc().segments + [
        Segment(" #5 assistant ", STYLE_HEADER, 5),
        Segment("Here is the change we make to the parser, explained in a sentence long enough to be prose.\n"
                "```python\n" + code + "```\nAnd a diff:\n@@ -1,3 +1,3 @@\n-old 漢字 line\n+new ✅ line\n ctx\n"
                + "x" * 300 + "\n    tail = 1\n", STYLE_TEXT, 5),
        Segment(" #6 tool ls ", STYLE_HEADER, 6),
        Segment(listing + "    " + "y" * 500 + "\n", STYLE_DIM, 6),
        Segment("short\nlist\n", STYLE_DIM, 6),
    ] * 3)


@pytest.mark.parametrize("cell", [(6, 12), (8, 16)])
@pytest.mark.parametrize("family", ["outline", "bitmap"])
def test_auto_matches_reference(cell, family):
    d = auto_doc()
    medium = dataclasses.replace(SMALL, name="medium", page_size=(448, 224))  # room for 2 columns of 24+ cells
    fast = list(iter_pages(d, profile=medium, cell=cell, mode="auto", family=family))
    slow, texts = reference_render(d, profile=medium, cell=cell, mode="auto", family=family)
    assert len(fast) == len(slow) >= 3
    for f, s, t in zip(fast, slow, texts):
        assert f.pixels.shape == s.shape
        assert np.array_equal(f.pixels, s), f"page {f.index} differs"
        assert f.text == t


@pytest.mark.parametrize("mode", ["dense", "lines"])
def test_page_text_matches_reference(mode):
    d = labelled_doc()
    fast = render_document(d, profile=SMALL, cell=(6, 12), mode=mode)
    _, texts = reference_render(d, profile=SMALL, cell=(6, 12), mode=mode)
    assert [p.text for p in fast] == texts


@pytest.mark.parametrize("cell", [(6.5, 12), (6, 12, 1), (6,), (True, 12), ("6", "12"), 6])
def test_a_cell_not_in_whole_pixels_is_an_input_error(cell):
    """A cell is two whole pixel counts: a float, a third value, a bool or a string in the tuple is one
    InputError (6.5 was taken as 6 and a third value ignored; found by a fresh-eyes test)."""
    from snapglyph.errors import InputError
    from snapglyph.raster.render import resolve_cell
    with pytest.raises(InputError, match="whole pixels"):
        resolve_cell(cell, "claude")
    assert resolve_cell([7, 14], "claude") == resolve_cell((np.int64(7), np.int32(14)), "claude") == (7, 14)
