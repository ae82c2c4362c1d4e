"""bench/auto_density.py's counts on pages made here: where a flow line is broken, starts a row or is not found,
and which lines of a band are broken (exact counts, no transcript needed)."""

from __future__ import annotations

from types import SimpleNamespace

import auto_density as ad

from snapglyph.model.document import STYLE_TEXT, Document, Segment
from snapglyph.raster.render import render_document


def test_flow_placed_counts_broken_row_starts_and_missing():
    pages = [SimpleNamespace(text="ab\u21b5cd\u21b5\nefgh"), SimpleNamespace(text="ij\u21b5k")]
    # "ab↵" starts a row; "cd↵" is whole after it; "efghij↵" runs across the page's end; "zz" is on no page
    assert ad.flow_placed(pages, ["ab\u21b5", "cd\u21b5", "efghij\u21b5", "zz"]) == (1, 2, 1)


def test_broken_counts_runs_of_continuation_rows():
    pages = [SimpleNamespace(text="x\n\u21aay\n\u21aaz\nw\n\u21aav")]
    assert ad.broken(pages) == 2


def test_a_flow_block_measured_on_its_pages():
    text = "Here it is:\n" + "".join(f"    value_{i} = compute({i})\n" for i in range(40))
    doc = Document([Segment(text, STYLE_TEXT, 0)])
    n, whole, flow = ad.block_lines(doc, 182)
    assert n == 40 and whole == 0 and len(flow) == 40 and flow[0] == "value_0 = compute(0)\u21b5"
    pages = render_document(doc, profile="claude", cell=(6, 12), mode="auto")
    broken, first, missing = ad.flow_placed(pages, flow)
    assert (broken, missing) == (0, 0) and 0 < first < 40  # every line whole; some at a row's start
