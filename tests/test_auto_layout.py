"""Layout ``auto`` on real transcripts: every line of every block starts a row of ``Page.text``, in order."""

from __future__ import annotations

import dataclasses
import re
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_renderer import reference_render

import snapglyph.raster.blocks as blocks_mod
import snapglyph.raster.flow as flow_mod
from conftest import shared_path
from snapglyph import Document, build_document, load, profile
from snapglyph.model.document import STYLE_DIM, STYLE_HEADER, STYLE_TEXT, Segment
from snapglyph.raster.atlas import SYMBOL_LABELS, atlas
from snapglyph.raster.blocks import find_blocks, plan_blocks, split_lines
from snapglyph.raster.render import iter_pages, render_document
from snapglyph.raster.text import normalize

CONT = "\u21aa"
NL = "\u21b5"
FILES = [
    "claude-code-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    "swe-agent-traj/marshmallow-code__marshmallow-1867.traj",
    "pi-session/before-compaction.jsonl",
]



CONT_LABEL = re.compile(r" #\d+ \S+ \(cont\.\) ")  # the first row of a page that opens inside a message

def shown_lines(seg: Segment, cols: int, at) -> list[tuple[str, int, bool]]:
    """The normalized text of each line of each block of ``seg`` (labels as their letters) as a block draws it,
    without the block's common indentation and, in a band, with at most half a column of indentation; its column
    width; and whether its block is laid out as flow (then its newline's mark is part of its text, and its blank
    lines, a mark only, are left out)."""
    plan = plan_blocks(seg.text, seg.style, cols)
    if not plan:
        return []
    nt = normalize(seg.text, at.label_cells)
    at.ensure({ord(c) for c in nt.text})
    shown = "".join(SYMBOL_LABELS[ord(c)] if c in at.label_cells else "\ufffd" if at.table[ord(c)] in (1, 2) else c
                    for c in nt.text)
    lines = shown.split("\n")
    assert len(lines) == len(split_lines(seg.text))
    out = []
    for a, b, k, colw in plan:
        part = lines[a:b]
        strip = min((len(x) - len(x.lstrip(" ")) for x in part if x.strip(" ")), default=0)
        for i, x in enumerate(part):
            body = x.lstrip(" ")
            if k == 0:
                if body:
                    half = " " * ((len(x) - len(body) - strip + 1) // 2)  # the rest of the indentation at half
                    gutter = re.match("([0-9]+\u2192)( *)", body)  # and the blanks after a line-number gutter
                    if gutter:  # no blank before its digits unless GUTTER_PAD
                        body = gutter[1] + " " * ((len(gutter[2]) + 1) // 2) + body[gutter.end():]
                        half = half if flow_mod.GUTTER_PAD else ""
                    out.append((half + body + (NL if a + i + 1 < len(lines) else ""), colw, True))
                continue
            out.append((" " * min(max(len(x) - len(body) - strip, 0), colw // 2) + body, colw, False))
    return out


def cells(line: str) -> int:
    """Cells of a line: East Asian wide and fullwidth characters take two."""
    return sum(1 + (unicodedata.east_asian_width(c) in "WF") for c in line)


def _flow_line(rows: list[str], at: int, off: int, line: str, cols: int) -> tuple[int, int, bool]:
    """Find a flow line from row ``at``, cell ``off`` on: whole on a row, or (wider than a row) from a row's start
    on across the rows after it. Returns the row and offset after it, and whether it is broken."""
    while at < len(rows):
        j = rows[at].find(line, off)
        if j >= 0:
            return at, j + len(line), False
        if cells(line) > cols and off == 0:  # a line this wide wraps at the row's end
            run, r = rows[at], at
            while len(run) < len(line) and r + 1 < len(rows):
                r += 1
                run += rows[r]
            if run.startswith(line):
                return r, len(rows[r]) - (len(run) - len(line)), True
        at, off = at + 1, 0
    raise AssertionError(f"flow line {line!r} is not on a row of its own whole")


def check_rows(texts: list[str], want: list[tuple[str, int, bool]], cols: int = 182) -> tuple[int, int]:
    """Walk the rows of the pages in order; each wanted line of a band must start a row with its indentation (then
    continue after ↪ marks, none inside its indentation); each line of a flow must be whole on a row (one wider
    than a row from a row's start). Returns the lines and how many of them are broken across rows."""
    rows = [r for t in texts for r in t.split("\n") if not CONT_LABEL.fullmatch(r)]  # a page's label is no line
    at = off = broken = 0
    for line, _, flow in want:
        if flow:
            at, off, cut = _flow_line(rows, at, off, line, cols)
            broken += cut
            continue
        if off:
            at, off = at + 1, 0
        while True:
            assert at < len(rows), f"block line {line!r} starts no row"
            r = rows[at]
            at += 1
            if not r.startswith(CONT) and line.startswith(r) and (r or not line):
                rest = line[len(r):]
                assert not rest or r.strip(" "), f"{line!r} wraps inside its indentation"
                broken += bool(rest)
                while rest:  # a wrapped line goes on in continuation rows
                    assert rows[at].startswith(CONT), f"{line!r} breaks without a continuation mark"
                    part = rows[at][1:]
                    assert rest.startswith(part) and part, f"{line!r} continues wrongly: {rows[at]!r}"
                    rest = rest[len(part):]
                    at += 1
                break
    return len(want), broken


@pytest.mark.parametrize("rel", FILES)
def test_block_lines_start_rows_on_real_transcripts(rel):
    t = load(shared_path("data", *rel.split("/")))
    doc = build_document(t.messages)
    pages = render_document(doc, profile="claude", cell=(6, 12), mode="auto")
    at = atlas((6, 12))
    cols = 1092 // 6
    want = [line for s in doc.segments for line in shown_lines(s, cols, at)]
    assert len(want) > 50, "the transcript must hold blocks"
    n, broken = check_rows([p.text for p in pages], want)
    assert n == len(want) and broken <= 0.05 * n  # issue 30's goal (bench/auto_density.py)
    assert sum(f for _, _, f in want) > n // 2  # most lines laid out as flow
    # the dense text of the same document has them run together: the check can fail
    dense = render_document(doc, profile="claude", cell=(6, 12), mode="dense")
    with pytest.raises(AssertionError):
        check_rows([p.text for p in dense], want)


def test_blocks_of_a_small_document(monkeypatch):
    text = ("We change two lines; the rest of this paragraph is prose that flows dense across the row as before.\n"
            "```py\nx = 1\n\tif x:\n        y = 2\n```\nDone.")
    assert find_blocks(text) == [(1, 6)]
    doc = Document([Segment(text, STYLE_TEXT, 0), Segment("a.py\nb.py\nc.py\n", STYLE_DIM, 1)])
    page, = render_document(doc, profile="claude", cell=(6, 12))
    assert page.text == (  # as flow: each line whole after the one before, from a row's start
        "We change two lines; the rest of this paragraph is prose that flows dense across the row as before.\u21b5\n"
        "```py\u21b5x = 1\u21b5  if x:\u21b5    y = 2\u21b5```\u21b5Done.\na.py\u21b5b.py\u21b5c.py\u21b5")  # at half
    assert page.rows == 3
    monkeypatch.setattr(blocks_mod, "FLOW_GAIN", 0)  # bands only
    page, = render_document(doc, profile="claude", cell=(6, 12))
    assert page.text == (
        "We change two lines; the rest of this paragraph is prose that flows dense across the row as before.\u21b5\n"
        "```py\nx = 1\n    if x:\n        y = 2\n```\nDone.\na.py\nb.py\nc.py")  # an indentation tab: 4 cells
    assert page.rows == 10


def narrow_doc() -> Document:
    """Blocks of short lines (narrow columns win), wide characters and tabs where column edges fall, a line longer
    than the page, and bands taller than the page."""
    lines = ["\t" * (i % 3 == 0) + "x" * (i % 6) + "漢" * (i % 2) + "字" * (i % 4 == 1) for i in range(90)]
    listing = "".join(f"{'ab' * (i % 5)}\t漢{i}\n" for i in range(70))
    indented = "".join(f"{' ' * (4 + 4 * (i % 9))}{'w' * (i % 40)}{'漢' * (i % 3)} = f(x);\n{' ' * (2 + i % 5)}\n"
                       for i in range(60))  # common indentation 4, deep lines, long lines, blank lines of spaces
    return Document([Segment("Prose before the block, long enough to fill a row or two of the small page.\n"
                             + "\n".join(lines) + "\n" + "z" * 400 + "\n  end;\n", STYLE_TEXT, 0),
                     Segment(listing, STYLE_DIM, 1), Segment(indented + "    }", STYLE_TEXT, 2),
                     Segment("".join(f"f{i % 7};\n" for i in range(90)), STYLE_DIM, 3)])


@pytest.mark.parametrize("min_colw", [8, 9, 10, 12, 28])
def test_narrow_columns_match_reference(min_colw, monkeypatch):
    """Any MIN_COLW from 8 up: the kernel lays out narrow columns pixel-equal to the reference renderer (the common
    indentation off, deep indentation cut at half the column, continuation rows hanging under the text), never
    stalls, and every block line starts a row."""
    monkeypatch.setattr(blocks_mod, "MIN_COLW", min_colw)
    monkeypatch.setattr(blocks_mod, "MAX_WRAP_SHARE", 1.0)  # narrow columns, many lines broken
    monkeypatch.setattr(blocks_mod, "FLOW_GAIN", 0)  # bands only
    small = dataclasses.replace(profile("claude"), name="small", page_size=(224, 112), patch=28)  # 37 x 9 cells
    d = narrow_doc()
    narrowest = min(colw for s in d.segments for _, _, _, colw in plan_blocks(s.text, s.style, 37))
    assert narrowest == {8: 8, 9: 11, 10: 11, 12: 18, 28: 37}[min_colw]  # 4, 3, 3, 2 and 1 columns
    fast = list(iter_pages(d, profile=small, cell=(6, 12), mode="auto"))
    slow, texts = reference_render(d, profile=small, cell=(6, 12), mode="auto")
    assert len(fast) == len(slow) >= 4
    for f, s, t in zip(fast, slow, texts):
        assert np.array_equal(f.pixels, s), f"page {f.index} differs"
        assert f.text == t
    at = atlas((6, 12))
    want = [line for s in d.segments for line in shown_lines(s, 37, at)]
    assert check_rows([p.text for p in fast], want, 37)[0] == len(want) > 150


@pytest.mark.parametrize("gain, min_colw, share, kinds", [(1e-9, 28, 0.05, [0, 0, 0]), (3.0, 28, 0.05, [1, 1, 0]),
                                                          (1.5, 8, 1.0, [3, 0, 0])])
def test_flow_matches_reference(gain, min_colw, share, kinds, monkeypatch):
    """Blocks laid out as flow (every one; beside bands of one column; beside bands of three): the kernel's pages
    are pixel-equal to the reference renderer's, and every flow line is whole on a row (one wider than the row from
    a row's start), wide characters, tabs and blank lines of spaces included."""
    for name, value in (("FLOW_GAIN", gain), ("MIN_COLW", min_colw), ("MAX_WRAP_SHARE", share)):
        monkeypatch.setattr(blocks_mod, name, value)
    small = dataclasses.replace(profile("claude"), name="small", page_size=(224, 112), patch=28)  # 37 x 9 cells
    d = narrow_doc()
    assert [k for s in d.segments for _, _, k, _ in plan_blocks(s.text, s.style, 37)] == kinds
    fast = list(iter_pages(d, profile=small, cell=(6, 12), mode="auto"))
    slow, texts = reference_render(d, profile=small, cell=(6, 12), mode="auto")
    assert len(fast) == len(slow) >= 4
    for f, s, t in zip(fast, slow, texts):
        assert np.array_equal(f.pixels, s), f"page {f.index} differs"
        assert f.text == t
    want = [line for s in d.segments for line in shown_lines(s, 37, atlas((6, 12)))]
    n, broken = check_rows([p.text for p in fast], want, 37)
    wide = sum(cells(x) > 37 for x, _, f in want if f)  # flow lines wider than a row: the only ones it breaks
    assert n == len(want) > 150 and (broken == wide if not any(kinds) else broken > wide)


@pytest.mark.parametrize("pad,light", [(True, False), (False, False), (True, True), (False, True)])
def test_flow_halves_the_blanks_after_a_line_number_gutter(monkeypatch, pad, light):
    """Claude Code's Read output (``    12→code``): the blanks after the gutter's arrow are the code's indentation,
    drawn at half as a flow's leading blanks are; the kernel's pages equal the reference renderer's, with the
    blanks before the digits drawn or not and the gutter dark or light (flow.GUTTER_PAD, flow.GUTTER_LIGHT)."""
    monkeypatch.setattr(flow_mod, "GUTTER_PAD", pad)
    monkeypatch.setattr(flow_mod, "GUTTER_LIGHT", light)
    lines = [f"{i + 1:>6}\u2192{' ' * (4 * (i % 4))}{'x' * (i % 7)}{'漢' * (i % 3)} = f({i});" for i in range(80)]
    lines[5] = "     6\u2192"  # an empty line of the file
    lines[9] = "    10\u2192\t\tdeep"  # tabs after the arrow are not indentation: stops of 8 from the line's start
    lines[11] = "    12 \u2192    not a gutter"
    text = "Read it:\n" + "\n".join(lines) + "\n"
    d = Document([Segment(text, STYLE_DIM, 0), Segment("next", STYLE_TEXT, 1)])
    small = dataclasses.replace(profile("claude"), name="small", page_size=(224, 112), patch=28)  # 37 x 9 cells
    monkeypatch.setattr(blocks_mod, "FLOW_GAIN", 1e-9)  # flow on the small page too
    assert [k for _, _, k, _ in plan_blocks(text, STYLE_DIM, 37)] == [0]
    fast = list(iter_pages(d, profile=small, cell=(6, 12), mode="auto"))
    slow, texts = reference_render(d, profile=small, cell=(6, 12), mode="auto")
    assert len(fast) == len(slow) >= 4
    for f, s, t in zip(fast, slow, texts):
        assert np.array_equal(f.pixels, s), f"page {f.index} differs"
        assert f.text == t
    joined = "".join(t.replace("\n", "") for t in texts)
    assert "2\u2192  x漢 = f(1);" in joined and "4\u2192      xxx = f(3);" in joined  # 4 and 12 blanks: 2 and 6
    assert "12 \u2192    not a gutter" in joined
    want = [line for s in d.segments for line in shown_lines(s, 37, atlas((6, 12)))]
    assert check_rows([p.text for p in fast], want, 37)[0] == len(want) == 81
    monkeypatch.setattr(flow_mod, "GUTTER_LIGHT", not light)  # the same text, other pixels on every page
    other = list(iter_pages(d, profile=small, cell=(6, 12), mode="auto"))
    assert [p.text for p in other] == [p.text for p in fast]
    gutters = [re.search("[0-9]\u2192", p.text) is None for p in fast]  # a page with no gutter: the same pixels
    assert [np.array_equal(a.pixels, b.pixels) for a, b in zip(fast, other)] == gutters and not all(gutters)


_KINDS_OF_TEXT = {  # issue 30 item 4: what the lines are decides, not their indentation
    "license": ("  Permission is hereby granted, free of charge, to any person obtaining a copy\n"
                "  of this software and associated documentation files (the \"Software\"), to deal\n"
                "  in the Software without restriction, including without limitation the rights\n"
                "  to use, copy, modify, merge, publish, distribute, sublicense, and/or sell"),
    "german": ("    Die Würde des Menschen ist unantastbar. Sie zu achten und zu schützen ist\n"
               "    Verpflichtung aller staatlichen Gewalt. Das Deutsche Volk bekennt sich\n"
               "    darum zu unverletzlichen und unveräußerlichen Menschenrechten als Grundlage\n"
               "    jeder menschlichen Gemeinschaft, des Friedens und der Gerechtigkeit in der Welt."),
    "markdown list": ("Next steps:\n- read the reader of each format and mark typed text\n"
                      "- cap the section by measurement\n- report the share\n  1. aider\n  2. Claude Code"),
    "python": ("import os\n\n\nclass Store:\n    def __init__(self, root):\n        self.root = root\n\n"
               "    def path(self, name):\n        return os.path.join(self.root, name)\n"),
    "diff": ("diff --git a/x.py b/x.py\nindex 83db48f..bf269f4 100644\n--- a/x.py\n+++ b/x.py\n"
             "@@ -1,3 +1,3 @@\n import os\n-x = 1\n+x = 2"),
    "pytest log": ("============================= test session starts ==============================\n"
                   "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0\ncollected 12 items\n\n"
                   "tests/test_store.py ......F.....                                         [100%]\n"
                   "FAILED tests/test_store.py::test_path - AssertionError: assert 'a' == 'b'\n"
                   "========================= 1 failed, 11 passed in 0.42s ========================="),
    "table": "| transcript | pages | tokens |\n|---|---|---|\n| aider | 31 | 46,410 |\n| claude | 47 | 70,044 |",
}


@pytest.mark.parametrize("name, style, kinds, plan", [
    ("license", 0, "PPPP", []), ("license", 1, "PPPP", []),  # hard-wrapped prose with an indent: prose, dense
    ("german", 0, "PPPP", []), ("german", 1, "PPPP", []),
    ("markdown list", 0, "NNNNNN", []), ("markdown list", 1, "CNNNNN", []),  # list items stay prose
    # the last line (wordy: seven words, few symbols) is prose after the block; in flow it goes on along its row
    ("python", 0, "CBBCCCBCPB", [(0, 8, 0, 182)]),
    ("diff", 0, "CCCCCCCC", [(0, 8, 0, 182)]), ("diff", 3, "CCCCCCCC", [(0, 8, 0, 182)]),
    ("pytest log", 0, "CNNBNPC", [(0, 7, 0, 182)]), ("pytest log", 1, "CCCBCCC", [(0, 7, 0, 182)]),
    ("table", 0, "CCCC", [(0, 4, 0, 182)]),
])
def test_prose_stays_prose_and_code_keeps_its_lines(name, style, kinds, plan):
    """A license text, a hard-wrapped German paragraph (indented or not) and a Markdown list are prose, laid out
    dense; a Python file, a unified diff, a pytest log and a table are blocks, laid out as flow on Claude's
    182-cell row, every line whole on its row."""
    text = _KINDS_OF_TEXT[name]
    assert blocks_mod.classify_lines(split_lines(text), style) == kinds
    assert plan_blocks(text, style, 182) == plan
    page, = render_document(Document([Segment(text, style, 0)]), profile="claude", cell=(6, 12))
    rows = page.text.split("\n")
    for a, b, _, _ in plan:
        for line in split_lines(text)[a:b]:
            assert line.strip() == "" or any(line.strip(" ") in r for r in rows), line


# ------------------------------------------------------------------ block planning against the slow reference

_PIECES = ["    x = 1", "\tif (a) {", "}", "| a | b |", "2024-01-01 12:00 INFO x", "- item", "1. item", "@@ -1 +1 @@",
           "+added", "-removed", " ctx", "```py", "~~~", "", "   ", "plain words", "x" * 90, "foo.py:12: hit",
           "drwxr-xr-x 2 a", "$ ls", ">>> 1", "def f():", "a => b", "a\tb\tc", "\u00a0x,", "x ;\u3000",
           "ERROR boom", "12: line", "12  x", "return", "Here is some prose that goes on and on " * 3, "\r", "a\rb\t",
           "  - nested item {", "diff --git a b", "[10:00:00] ok", "\u2028", "\t\t  \tdeep\tx",
           "    x = '\U0001F600'", "\U0001F680 launched: it works, and the words go on"]  # beyond U+FFFF: stand-ins of their class


@pytest.mark.parametrize("gain, share", [(blocks_mod.FLOW_GAIN, blocks_mod.MAX_WRAP_SHARE), (0, 0.5), (3.0, 0.5)])
def test_plan_blocks_equals_reference_on_line_soups(gain, share, monkeypatch):
    """The line kernels' classifier and column count, and the choice of flow, give the reference's plan, line soup
    by line soup (the defaults; bands only; both)."""
    import random

    import reference_blocks as ref
    monkeypatch.setattr(blocks_mod, "FLOW_GAIN", gain)
    monkeypatch.setattr(blocks_mod, "MAX_WRAP_SHARE", share)
    rng = random.Random(7)
    differ = []
    n_blocks, multi, flow = 0, 0, 0
    for _ in range(1500):
        text = "\n".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 40)))
        style, cols = rng.choice([0, 1, 2, 3]), rng.choice([182, 100, 60, 30])
        want = ref.plan_blocks(text, style, cols)
        n_blocks += len(want)
        multi += sum(1 for p in want if p[2] > 1)
        flow += sum(1 for p in want if p[2] == 0)
        if plan_blocks(text, style, cols) != want:
            differ.append((text, style, cols))
    assert not differ, differ[:3]
    assert n_blocks > 1000  # the soups hold blocks: not the empty plan; many in several columns, many as flow
    assert (multi > 100 or gain > 0 and share < 0.5) and (flow > 100 or not gain)


@pytest.mark.parametrize("name", FILES + ["aider-chat-history/chat-history.md", "codex-rollout"])
def test_plan_blocks_equals_reference_on_transcripts(name):
    import reference_blocks as ref
    path = shared_path("data", name)
    if path.is_dir():
        path = sorted(path.glob("*.jsonl"))[0]
    doc = build_document(load(path).messages)
    segs = [s for s in doc.segments if "\n" in s.text]
    assert segs
    for cols in (182, 91):
        assert [plan_blocks(s.text, s.style, cols) for s in segs] == [ref.plan_blocks(s.text, s.style, cols)
                                                                      for s in segs]


_UNICODE_PIECES = ["def", "INFO", "x", "12", "\u0661\u0662", ":", "|", " ", "  ", "\t", "\u00a0", "\u3000", "\x1c", "\u2192",
                   "\u00e9", "\U0001f600", "-", "+", "*", ".", ")", "(", ";", "{", "#include", "[", "10:00:00", "```",
                   "==", "->", "word ", "Wörter ", "drwxr-xr-x", "@", "/", "_", "2024-01-01T1", "\r", "\ud800"]


@given(st.lists(st.lists(st.sampled_from(_UNICODE_PIECES), max_size=30).map("".join), min_size=1, max_size=12),
       st.sampled_from([0, 1, 3]))
@settings(max_examples=400, deadline=None)
def test_line_kernel_equals_reference(lines, style):
    """The compiled line classifier and widths equal the reference's patterns and tab expansion, Unicode spaces,
    digits, word characters and code points beyond U+FFFF included."""
    import reference_blocks as ref

    kinds, widths, leads = blocks_mod.line_kinds(lines, style)
    assert kinds == ref.classify_lines(lines, style)
    assert widths.tolist() == [len(ref.expand_tabs(x).rstrip()) for x in lines]
    assert leads.tolist() == [ref.lead(x) if x.strip() else 0 for x in lines]


def test_char_classes_are_the_patterns_classes():
    """The class table (numpy's str predicates) is, code point by code point of the whole plane, what Python's own
    \\s, \\w and \\d match."""
    import re

    plane = "".join(map(chr, range(0x10000)))
    want = np.zeros(0x10000, np.uint8)
    for pattern, bit in ((r"\s", blocks_mod.CLASS_SPACE), (r"\w", blocks_mod.CLASS_WORD), (r"\d", blocks_mod.CLASS_DIGIT)):
        want[[m.start() for m in re.finditer(pattern, plane)]] |= bit
    got = blocks_mod.char_classes()
    assert got.dtype == np.uint8 and got.shape == (0x10000,)
    assert np.array_equal(got, want)
    assert (want & blocks_mod.CLASS_SPACE).sum() > 20 and (want & blocks_mod.CLASS_DIGIT).sum() > 300


@pytest.mark.parametrize("name", FILES + ["aider-chat-history/chat-history.md"])
def test_line_kernel_equals_reference_on_transcripts(name):
    """Every line of real transcripts, in every style: the kernel's letters are the reference's."""
    import reference_blocks as ref
    path = shared_path("data", name)
    doc = build_document(load(path).messages)
    lines = split_lines("\n".join(s.text for s in doc.segments))
    assert len(lines) > 500
    for style, met in ((0, "BCNP"), (1, "BCNP")):  # in tool output only a list item stays neutral
        kinds, _, _ = blocks_mod.line_kinds(lines, style)
        assert kinds == ref.classify_lines(lines, style)
        assert "".join(sorted(set(kinds))) == met


def labeled_doc() -> Document:
    """Messages with headers whose text runs across pages of the small page: prose, a flow block, a band."""
    listing = "".join(f"src/m{i:02d}.py\n" for i in range(60))
    code = "".join(f"{' ' * (4 * (i % 3))}x{i} = f({i});\n" for i in range(70))
    return Document([Segment(" #0 user ", STYLE_HEADER, 0), Segment("word " * 130, STYLE_TEXT, 0),
                     Segment(" #1 tool read_file ", STYLE_HEADER, 1), Segment(code, STYLE_DIM, 1),
                     Segment(" #2 tool ls ", STYLE_HEADER, 2), Segment(listing, STYLE_DIM, 2),
                     Segment("no header of its own " * 20, STYLE_TEXT, 3)])


@pytest.mark.parametrize("mode, gain", [("auto", 1.1), ("auto", 0), ("dense", 1.1), ("lines", 1.1)])
def test_a_page_opening_inside_a_message_is_labeled(mode, gain, monkeypatch):
    """A page that opens inside a message (not at its header) has the message's id and role and ``(cont.)`` on its
    first row, before the text (a band going on opens below it); pixel-equal to the reference renderer in every
    layout; a page that opens at a header, or inside text of no message with a header, has none."""
    monkeypatch.setattr(blocks_mod, "FLOW_GAIN", gain)
    small = dataclasses.replace(profile("claude"), name="small", page_size=(224, 112), patch=28)  # 37 x 9 cells
    d = labeled_doc()
    fast = list(iter_pages(d, profile=small, cell=(6, 12), mode=mode))
    slow, texts = reference_render(d, profile=small, cell=(6, 12), mode=mode)
    assert len(fast) == len(slow) >= 6
    for f, s, t in zip(fast, slow, texts):
        assert np.array_equal(f.pixels, s), f"page {f.index} differs"
        assert f.text == t
    firsts = [t.split("\n")[0] for t in texts]
    labels = [r for r in firsts if CONT_LABEL.fullmatch(r)]
    assert {" #0 user (cont.) ", " #1 tool (cont.) ", " #2 tool (cont.) "} <= set(labels)
    assert all(r.startswith(" #") for r in firsts[1:] if "header" not in r)
    assert sum(p.chars for p in fast) == sum(len(s.text) for s in d.segments)  # a label is no source character
    marks: list = []
    again = list(iter_pages(d, profile=small, cell=(6, 12), mode=mode, marks=marks))
    for k in range(1, len(again)):  # laid out again from a page's mark: the same pages, labels and all
        assert [p.png for p in iter_pages(d, profile=small, cell=(6, 12), mode=mode, resume=(k, marks[k]))] == [
            p.png for p in again[k:]]
