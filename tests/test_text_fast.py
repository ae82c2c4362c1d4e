"""The compiled normalization pass (:func:`snapglyph.raster.text.normalize_codes`) against the plain-Python path.

Both must give the same stream codes, source weights and counts for any text; pages rendered through either must be
pixel-equal to each other and to the independent reference renderer.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_renderer import reference_pages

from snapglyph import Document, profile
from snapglyph.model.document import STYLE_DIM, STYLE_HEADER, STYLE_TEXT, Segment
from snapglyph.raster import stream as stream_mod
from snapglyph.raster import native
from snapglyph.raster._text_kernels import TEXT_CONTROL, TEXT_LINE_SEPARATOR, TEXT_SURROGATE
from snapglyph.raster.atlas import atlas
from snapglyph.raster.render import iter_pages
from snapglyph.raster.text import cell_table, char_cells, normalize, normalize_codes

# Pieces that exercise every rule: tabs, wide CJK and fullwidth, combining marks, ZWJ emoji with modifiers, Hangul
# jamo, controls and escapes (CR, backspace, erase-line fill, inline-image placeholder), line separators, lone
# surrogates, C1 controls.
PIECES = ["\t", "\t", "\n", "a", "b", " ", "ab\tc", "漢", "字", "한", "\uff21", "e\u0301", "\u0301", "\u20dd",
          "\u200d", "\U0001F468", "\U0001F469", "\u2764", "\ufe0f", "\U0001F3FB", "\u1100\u1161", "\u1160",
          "\u00ad", "\r", "\r\n", "\x08", "\x00", "\x07", "\x7f", "\x85", "\x1b[31m", "\x1b[0m", "\x1b[K",
          "\x1b[2K", "\x1b]1337;File=x.png:AAAA\x07", "\x1b]8;;http://x\x1b\\", "\u2028", "\u2029", "\ud800",
          "\udfff", "\ufffd", "שלום", "é", "\U00020000", "✅", "❌", "\U0001F680", "⌛", "⚠", "\U0001F44D"]
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=60).map("".join)


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)


def text_flags(cps: np.ndarray) -> int:
    return native.kernels().text_flags(cps)


def _slow(text: str, style: int, at) -> tuple[np.ndarray, np.ndarray, int, int]:
    return stream_mod.encode_segment(text, style, at, False, fast=False)


def _fast(text: str, style: int, at) -> tuple[np.ndarray, np.ndarray, int, int]:
    return stream_mod.encode_segment(text, style, at, False, fast=True)


def _assert_same(text: str, style: int = STYLE_TEXT) -> None:
    at = atlas((6, 12))
    fc, fw, fz, fr = _fast(text, style, at)
    sc, sw, sz, sr = _slow(text, style, at)
    assert (fz, fr) == (sz, sr)
    assert fc.dtype == sc.dtype == np.int32 and fw.dtype == sw.dtype == np.uint8
    assert np.array_equal(fc, sc)
    assert np.array_equal(fw, sw)


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from([STYLE_TEXT, STYLE_HEADER]))
def test_fast_codes_equal_python(text, style):
    _assert_same(text, style)


# Pieces none of which needs steps 1-3 of the normalization (no control, lone surrogate or line separator): the texts
# the compiled pass sends straight to NFC.
CLEAN_PIECES = [p for p in PIECES if not text_flags(_code_points(p))]
clean_texts = st.lists(st.sampled_from(CLEAN_PIECES), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(clean_texts, st.sampled_from([STYLE_TEXT, STYLE_HEADER]))
def test_clean_texts_take_the_direct_path_and_equal_python(text, style):
    """Texts without the characters of steps 1-3 (combining marks, tabs, ZWJ sequences, wide and astral characters
    included) skip those steps in the compiled pass and still give Python's codes and counts."""
    assert text_flags(_code_points(text)) == 0
    _assert_same(text, style)


def test_text_flags_are_the_patterns():
    """Each code point's flags are what the patterns of steps 1-3 match: every code point below U+3000, the
    surrogates and their neighbours, and astral ones."""
    from snapglyph.raster.text import _CONTROL, LONE_SURROGATE

    cps = list(range(0x3000)) + list(range(0xD780, 0xE080)) + [0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF]
    seen = set()
    for cp in cps:
        ch = chr(cp)
        want = (TEXT_CONTROL * bool(_CONTROL.search(ch)) | TEXT_SURROGATE * bool(LONE_SURROGATE.search(ch))
                | TEXT_LINE_SEPARATOR * (ch in "\u2028\u2029"))
        got = text_flags(_code_points(ch))
        assert got == want, hex(cp)
        seen.add(got)
    assert seen == {0, TEXT_CONTROL, TEXT_SURROGATE, TEXT_LINE_SEPARATOR}
    assert text_flags(_code_points("a\x1b\ud800\u2029")) == TEXT_CONTROL | TEXT_SURROGATE | TEXT_LINE_SEPARATOR


def test_fast_codes_fixed_cases():
    for text in ["", "\t", "\x1b[31m", "\u0301", "a\tb\t\tc\n\t漢\tx", "漢字\t|\n한\t|", "e\u0301\te\u0301",
                 "\U0001F468\u200d\U0001F469\u200d\U0001F467\tx", "\u200d\ufe0f\U0001F3FB\u2764\t|",
                 "\u200d\u200d\U0001F468", "\u200d\U0001F3FB\U0001F3FB", "\x00\t\x7f\t\x85\t|",
                 "50%\r100%\t|\n\x1b[2K\tx", "\x1b]1337;File=a:b\x07\tz", "\ud800\t\udfff|", "\u2028\t\u2029\t",
                 " \t\u0301\t漢\tx\n\u200d\tz", "\x1b[1m\t\tb\x1b[0m\tc", "\x1b]1337;File=a:b\x07\t\tz"]:
        _assert_same(text)
        _assert_same(text, STYLE_HEADER)


def test_cell_table_matches_char_cells():
    cps = np.array([0x41, 0x300, 0x301, 0x200D, 0x6F22, 0xFF21, 0x1160, 0x1F468, 0xFFFD, 0x2400, 0x10FFFF],
                   np.uint32)
    t = cell_table()
    assert t.dtype == np.int8 and t.shape == (0x110000,)
    assert [int(t[c]) for c in cps] == [char_cells(chr(c)) for c in cps.tolist()] == [1, 0, 0, 0, 2, 2, 0, 2, 1, 1, 2]


def test_normalize_codes_rejects_non_str():
    from snapglyph import InputError

    with pytest.raises(InputError):
        normalize_codes(b"abc", atlas((6, 12)).table)


def _long_doc() -> Document:
    line = ("x\tab\t漢字\tcafe\u0301\t\x1b[1mbold\x1b[0m\t\U0001F468\u200d\U0001F469\t10%\r100%\tend ✅\ufe0f ❌\t🚀"
            "\U0001F468\u200d\U0001F680\n")
    big = (line + "\tdef f():\n\t\treturn 1\n" + "word " * 30 + "\n") * 60
    return Document([Segment(" #1 user ", STYLE_HEADER, 1), Segment(big, STYLE_TEXT, 1),
                     Segment(" #2 tool ", STYLE_HEADER, 2), Segment(big.replace("漢", "K"), STYLE_DIM, 2)])


@pytest.mark.parametrize("cols", [0, 182])
def test_long_segments_compiled_normalization_equals_python(cols):
    """The renderer's stream (compiled normalization) of long segments is normalize()'s (plain Python), element for
    element, blocks marked or not; the pages account for every character."""
    d = _long_doc()
    at = atlas((6, 12))
    fast, slow = list(stream_mod.chunks(d, at, True, cols)), list(stream_mod.chunks(d, at, False, cols))
    assert len(fast) == len(slow) >= 1
    for f, s in zip(fast, slow):
        assert np.array_equal(f.codes, s.codes) and np.array_equal(f.srcw, s.srcw)
        assert np.array_equal(f.styles, s.styles)
        assert (f.zw, f.rm) == (s.zw, s.rm) and sum(f.zw) > 0 and sum(f.rm) > 0
    pages = list(iter_pages(d, profile="claude", cell=(6, 12), mode="dense"))
    assert len(pages) >= 2 and sum(p.drawn + p.replaced + p.zero_width + p.removed for p in pages) == d.n_chars


def test_long_segments_match_reference_renderer():
    small = dataclasses.replace(profile("claude"), name="small", page_size=(448, 224), patch=28)
    d = _long_doc()
    d = Document([dataclasses.replace(s, text=s.text[:6000]) for s in d.segments])
    fast = list(iter_pages(d, profile=small, cell=(6, 12), mode="dense"))
    slow = reference_pages(d, profile=small, cell=(6, 12), mode="dense")
    assert len(fast) == len(slow) >= 2
    for f, s in zip(fast, slow):
        assert np.array_equal(f.pixels, s), f"page {f.index} differs"


def test_normalize_unchanged_by_fast_path():
    # normalize() is the pure-Python definition the fast path is tested against; pin a few of its results.
    nt = normalize("a\tb\u0301\t漢\tc")
    assert nt.text == "a       b       漢      c" and nt.zero_width == 1
    assert nt.synthetic == [(2, 8), (10, 16), (18, 23)]
