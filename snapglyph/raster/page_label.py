"""The label of a page that opens inside a message: its first row names the message (``" #41 tool (cont.) "``), so
a page read alone says whose text it goes on with. Drawn as a header is (inverted), by the layout kernel; its
cells count in the page's rows and fill, not in its source characters (``Page.chars``), and it is in the page's
text. A page that opens at a message's header, or inside text of no message with a header
(:meth:`snapglyph.model.document.Document.from_text`), has none.

Plain Python and numpy around the kernel the renderer calls (:func:`snapglyph.raster._kernels.layout_blit`); the
reference renderer (tests/reference_renderer.py) draws the same label pixel for pixel.
"""

from __future__ import annotations

import numpy as np

from ..model.document import STYLE_HEADER
from ._codes import CODE_ROW_START, S_IN_BLOCK

__all__ = ["cont_label", "draw_label", "label_glyphs"]

CONT = "(cont.)"


def cont_label(ck, i: int) -> str | None:
    """The label of a page whose first element is ``ck.codes[i]`` (``ck`` a :class:`snapglyph.raster.stream.Chunk`):
    None where the page opens in a message's header or inside no message with a header; else the message's id and
    role as its header spells them, then ``(cont.)``.

    Examples
    --------
    >>> from snapglyph.raster.stream import Chunk
    >>> ck = Chunk([(np.array([-2, 7], np.int32), np.ones(2, np.uint8), 2, 41, 0, 0),
    ...             (np.array([8, 9], np.int32), np.ones(2, np.uint8), 1, 41, 0, 0)],
    ...            heads=[" #41 tool read_file ", " #41 tool read_file "], header=[True, False])
    >>> cont_label(ck, 1), cont_label(ck, 3)
    (None, ' #41 tool (cont.) ')
    """
    s = int(np.searchsorted(ck.starts, i, side="right")) - 1
    head = ck.heads[s]
    if head is None or ck.header[s]:
        return None
    return " " + " ".join(head.split()[:2] + [CONT]) + " "


def label_glyphs(at, heads: list) -> None:
    """Add to atlas ``at`` (modified in place) the glyphs of the labels that the headers ``heads`` (None for none)
    give, before the renderer takes the ink lists of a chunk.

    Examples
    --------
    >>> from snapglyph.raster.atlas import atlas
    >>> at = atlas((6, 12))
    >>> label_glyphs(at, [" #7 user ", None])
    >>> bool((at.table[[ord(c) for c in "#7user(cont.)"]] >= 0).all())
    True
    """
    chars = {c for h in heads if h is not None for c in " ".join(h.split()[:2]) + " " + CONT}
    if chars:
        at.ensure(sorted(map(ord, chars)))


def draw_label(pager, ck, i: int, ink: tuple, drawn: bool, lut: np.ndarray, marker: int) -> None:
    """Where the page of ``pager`` (the renderer's pager: its atlas, layout kernel, state, buffer and reading lines)
    is fresh (nothing laid out on it yet) and opens at ``ck.codes[i]`` inside a message, draw its label
    (:func:`cont_label`) from the page's first row in the header style, the cursor then at the next row's start (a
    band going on opens there); ``ink``, ``lut``, ``marker``: the kernel's ink lists, style table and newline
    marker. Where ``drawn``, the label's elements join the page's text. Modifies the pager's state, buffer and lines
    in place.

    Examples
    --------
    >>> from snapglyph.model.document import Document, Segment
    >>> from dataclasses import replace
    >>> from snapglyph.providers.profiles import profile
    >>> from snapglyph.raster.render import iter_pages
    >>> small = replace(profile("claude"), name="small", page_size=(224, 112), patch=28)
    >>> doc = Document([Segment(" #3 user ", STYLE_HEADER, 3), Segment("word " * 90, 0, 3)])
    >>> [p.text.split("\\n")[0] for p in iter_pages(doc, profile=small)]
    [' #3 user word word word word word wor', ' #3 user (cont.) ']
    """
    text = cont_label(ck, i) if pager.fresh else None
    if text is None:
        return
    at = pager.at
    codes = np.append(at.table[np.frombuffer(text.encode("ascii"), np.uint8)], CODE_ROW_START).astype(np.int32)
    line, col = np.full(len(codes), -1, np.int32), np.empty(len(codes), np.int32)
    in_block = int(pager.state[S_IN_BLOCK])
    pager.state[S_IN_BLOCK] = 0  # drawn as prose, whatever block goes on after it
    pager.layout(codes, np.full(len(codes), STYLE_HEADER, np.uint8), 0, len(codes), pager.state, pager.buf,
                 at.glyphs, at.width, lut, at.cell_w, at.cell_h, pager.cols, pager.rows, pager.dense, marker, *ink,
                 line, col, pager.line_flag, pager.cont)
    pager.state[S_IN_BLOCK] = in_block
    if drawn:
        pager.shown.append((line, codes))
