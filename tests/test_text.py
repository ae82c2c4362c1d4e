"""Normalization: one test per kind of fault in ../shared/cases, and the accounting over arbitrary text."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_case
from snapglyph import Document, render
from snapglyph.raster.atlas import REPL_NARROW, REPL_WIDE, atlas
from snapglyph.raster.render import render_document
from snapglyph.raster.text import char_cells, normalize


def _texts(case: str) -> list[str]:
    out = []
    for m in load_case(case)["messages"]:
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            out.extend(p.get("text", "") for p in c if isinstance(p, dict))
    return [t for t in out if t]


def _rows(text: str) -> list[str]:
    return normalize(text).text.split("\n")


def _cells_before(row: str, needle: str) -> int:
    return sum(char_cells(c) for c in row[: row.index(needle)])


def test_tabs_case():
    rows = [r for t in _texts("tabs.json") for r in _rows(t) if r.strip()]
    head = next(r for r in rows if "SIZE" in r)
    assert _cells_before(head, "SIZE") == 8 and _cells_before(head, "MTIME") == 16
    second = next(r for r in rows if "1.2K" in r)
    assert _cells_before(second, "1.2K") == 8 and _cells_before(second, "12:00") == 16
    third = next(r for r in rows if "33K" in r)
    assert _cells_before(third, "33K") == 24 and _cells_before(third, "09:41") == 32


def test_indentation_tabs_take_four_cells():
    # a tab with only spaces and tabs before it stops every 4 cells; after other text, every 8 (as tabs.json wants)
    nt = normalize("\t\tif x:\treturn 1\n  \tz\n\t a\tb\n\u0301\t漢\tc")
    assert nt.text == "        if x:   return 1\n    z\n     a  b\n    漢  c"
    assert nt.synthetic == [(1, 4), (5, 8), (14, 16), (28, 29), (32, 35), (38, 39), (42, 45), (47, 48)]
    assert nt.zero_width == 1


def test_ansi_osc_case():
    text = "\n".join(_texts("ansi_osc.json"))
    out = normalize(text).text
    assert "\x1b" not in out and "1337" not in out and "]8;" not in out and "46m" not in out and "?25l" not in out
    rows = out.split("\n")
    assert " RUN  ✓ 12 passed (31ms)" in rows
    assert "  x link" in rows
    after = next(r for r in rows if r.endswith(" after"))
    assert after.startswith("[inline image]")


def test_crlf_spinner_case():
    text = "\n".join(_texts("crlf_spinner.json"))
    nt = normalize(text)
    assert "\r" not in nt.text and "\x08" not in nt.text
    assert "Installing build dependencies ... done" in [r.strip() for r in nt.text.split("\n")]
    assert "\u2029" not in nt.text and "\u2028" not in nt.text


def test_zwj_combining_case():
    rows = [r for t in _texts("zwj_combining.json") for r in _rows(t) if r.count("|") >= 2]
    assert len(rows) == 3
    cols = []
    for r in rows:
        first = r.index("|")
        second = r.index("|", first + 1)
        cols.append(sum(char_cells(c) for c in r[first:second]))
    assert cols == [3, 2, 2]


def test_missing_glyphs_case():
    text = "\n".join(_texts("missing_glyphs.json"))
    pages = render(text)
    assert sum(p.replaced for p in pages) == 0
    at = atlas((6, 12))
    cps = [ord(c) for c in normalize(text).text if c != "\n"]
    at.ensure(cps)
    assert all(at.table[c] not in (REPL_NARROW, REPL_WIDE) for c in cps)
    assert any(at.width[at.table[c]] == 2 for c in cps)  # CJK drawn 2 cells wide


def test_long_line_case():
    text = "\n".join(_texts("long_line.json"))
    assert len(text) >= 150_000
    pages = render(text)
    assert len(pages) >= 9
    assert sum(p.chars for p in pages) == len(text)


def test_controls_visible_and_rtl_logical():
    nt = normalize("a\x00b\x07c\x7f\udc80")
    assert nt.text == "a\u2400b\u2407c\u2421\ufffd"
    assert normalize("שלום abc").text == "שלום abc"


# Arbitrary characters, with symbols drawn as labels (atlas.SYMBOL_LABELS) mixed in.
_CHARS = st.one_of(st.characters(), st.sampled_from("✅❌⚠🚀⌛\ufe0f\u200d\t\n"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=_CHARS, max_size=120), min_size=1, max_size=4))
def test_accounting_never_loses_a_character(texts):
    from snapglyph.model.document import Segment

    doc = Document([Segment(t, i % 4, i) for i, t in enumerate(texts)])
    pages = render_document(doc, profile="claude", mode="dense" if len(texts) % 2 else "lines")
    total = sum(p.drawn + p.replaced + p.zero_width + p.removed for p in pages)
    assert total == doc.n_chars
    for p in pages:
        assert p.pixels.dtype == np.uint8 and p.pixels.shape[1] == 1092


def test_c1_characters_are_not_escape_introducers():
    """A C1 character stands for itself (U+FFFD), never for the 8-bit CSI, OSC or DCS it once was: UTF-8 text
    with mojibake (a right quote's bytes read as Latin-1 end in U+009D) keeps the rest of its line. Found by a
    fresh-eyes test; escape sequences that start with ESC still are applied."""
    from snapglyph.raster.text import normalize

    line = "He said \u201chello\u201d and left. The rest of this line matters.".encode().decode("latin-1")
    n = normalize(line)
    assert n.text.endswith(" and left. The rest of this line matters.") and n.removed == 0
    for c in "\x9b\x9d\x90\x98\x9e\x9f\x9c\x85":
        assert normalize(f"a{c}b[31m tail").text == "a\ufffdb[31m tail"
    assert normalize("x\x1b[31mred\x1b[0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ y").text == "xred link y"


def test_the_8_bit_csi_is_removed_as_its_7_bit_form_is():
    """U+009B followed by parameters and a final byte is the control sequence ``ESC [`` spells in 7 bits, and is
    removed the same way (issue 31 item 6: it was drawn while ESC [ was stripped); with no parameter it stays a
    character (U+FFFD), as in the mojibake above."""
    from snapglyph.raster.text import normalize

    for seven, eight in (("\x1b[31m", "\x9b31m"), ("\x1b[1;32m", "\x9b1;32m"), ("\x1b[0K", "\x9b0K")):
        a, b = normalize(f"ok {seven}red{seven[:1]}[0m done"), normalize(f"ok {eight}red\x9b0m done")
        assert a.text == b.text == "ok red done"
        assert (a.removed, b.removed) == (len(seven) + 4, len(eight) + 3)
    assert normalize("a\x9bm and \x9b").text == "a\ufffdm and \ufffd"
