"""Render text or a document to pages: ``render(text | messages | Document, profile=...) -> list[Page]``.

Pipeline: :mod:`snapglyph.raster.stream` turns the document's segments into stream codes (normalized text ->
glyph indices from the :class:`Atlas`, rasterized on first use; a symbol with no glyph but a label,
:data:`snapglyph.raster.atlas.SYMBOL_LABELS` ✅ -> ``[ok]``, as its label's letters; blocks marked) in chunks of about
64 K elements; :func:`iter_pages` feeds each chunk to the kernel :func:`snapglyph.raster._kernels.layout_blit`
(:mod:`snapglyph.raster.native`: the ahead-of-time build, else numba's JIT), which places each glyph and draws
its ink pixels into the current page array until the page is full. Pages stream: one page and one chunk are held.

Layout modes:

``auto`` (default)   content-aware: prose is laid out as in ``dense``; a block of code, diff, listing, table or log
                     output (:mod:`snapglyph.raster.blocks`) keeps one source line per row with its indentation,
                     packed into k side-by-side columns (a band; k chosen per block from its line lengths, columns
                     read top to bottom then left to right, a 1-px grey rule between them); a line longer than its
                     column goes on in the next row after a continuation mark (↪, light grey).
``dense``            text is reflowed: each source newline is one light marker glyph (↵) and the text goes on in the
                     same row; indentation (leading spaces) is kept; rows are filled to the page width.
``lines``            every source line starts a row; long lines wrap at the page width.

In all, a role header (``STYLE_HEADER``) starts a new row and is drawn inverted; tool output (``STYLE_DIM``) is drawn
in dark grey instead of black; a wide character never straddles a row end. Page pixels take four grey values (0, 85,
170, 255), so pages encode as 2-bit PNGs.

Append stability: a page's pixels and breaks depend only on the segments it shows and those before it, so appending
segments changes only the last page (which is trimmed to the rows it uses, rounded up to the profile's patch) and
adds new ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, RenderError
from ..model.document import Document
from ..providers.profiles import Profile
from ..providers.profiles import profile as _profile
from . import native
from ._codes import KMAX, N_STATE, S_CELLS, S_ROWS_USED, new_page_state
from .atlas import CELLS, CONT_MARK, MARKER, REPL_NARROW, REPL_WIDE, Atlas, atlas
from .page import PNG_DEPTH, Page  # noqa: F401 - Page is part of this module's interface
from .page_label import draw_label
from .stream import Chunk, ahead, chunks

__all__ = ["MODES", "STYLE_LUT", "Mark", "Page", "iter_pages", "render", "render_document", "resolve_cell"]

MODES = ("auto", "dense", "lines")

STYLE_LUT = np.array([
    [255, 170, 85, 0],     # STYLE_TEXT: black ink on white
    [255, 170, 170, 85],   # STYLE_DIM: tool output, dark grey ink
    [0, 85, 170, 255],     # STYLE_HEADER: inverted, white on black
    [255, 170, 85, 0],     # STYLE_CALL: like text
    [255, 170, 170, 170],  # newline marker (dense mode): light grey, set apart from letters
], np.uint8)
"""Pixel value of each (style, atlas level); every value is a multiple of 85 (2-bit PNG)."""

_WIDE_RE = re.compile("[\u1100-\u115f\u2e80-\u303e\u3041-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f"
                      "\uff00-\uff60\uffe0-\uffe6\U00020000-\U0003fffd]")


def resolve_cell(cell, prof: "Profile | str") -> tuple[int, int]:
    """Return the cell ``(cell_w, cell_h)`` in pixels for ``cell`` on ``prof``.

    Parameters
    ----------
    cell : None, str or tuple of int
        None for the profile's default; a name of :data:`snapglyph.raster.atlas.CELLS` (``"5x8"``, ``"6x12"``,
        ``"8x16"``) or ``"WxH"``; or ``(cell_w, cell_h)``.
    prof : Profile or str
        The profile, or its name.

    Returns
    -------
    tuple of int

    Raises
    ------
    InputError
        For a malformed cell or one that does not fit one row and column on the page.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> claude = profile("claude")
    >>> resolve_cell(None, claude), resolve_cell("8x16", claude), resolve_cell((7, 14), claude)
    ((6, 12), (8, 16), (7, 14))
    >>> resolve_cell("80x8", claude)
    Traceback (most recent call last):
    ...
    snapglyph.errors.InputError: cell 80x8 out of range: width and height must be 4..64 pixels
    >>> resolve_cell(None, "gemini")
    (12, 24)
    """
    if isinstance(prof, str):
        prof = _profile(prof)
    if cell is None:
        cell = prof.cell
    if isinstance(cell, str):
        if cell in CELLS:
            cell = CELLS[cell]
        else:
            m = re.fullmatch(r"(\d+)x(\d+)", cell.strip())
            if not m:
                raise InputError(f"cell {cell!r} is not WxH (known: {', '.join(CELLS)})")
            cell = (int(m.group(1)), int(m.group(2)))
    if not (isinstance(cell, (tuple, list)) and len(cell) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in cell)):
        raise InputError(f"cell must be (cell_w, cell_h) in whole pixels, not {cell!r}"[:200])
    cw, ch = int(cell[0]), int(cell[1])
    if not (4 <= cw <= 64 and 4 <= ch <= 64):
        raise InputError(f"cell {cw}x{ch} out of range: width and height must be 4..64 pixels")
    if cw * 2 > prof.page_size[0] or ch > prof.page_size[1]:
        raise InputError(f"cell {cw}x{ch} does not fit the {prof.name} page {prof.page_size}")
    return cw, ch


def _check(document, prof, cell, mode, family) -> tuple[Profile, Atlas, str]:
    if not isinstance(document, Document):
        raise InputError(f"document must be a Document, not {type(document).__name__}")
    if mode not in MODES:
        raise InputError(f"unknown layout mode {mode!r}; known: {', '.join(MODES)}")
    prof = _profile(prof)
    c = resolve_cell(cell, prof)
    at = atlas(c, family)
    note = ""
    if not at.wide_ok and any(_WIDE_RE.search(s.text) for s in document.segments if not s.text.isascii()):
        for name, alt in sorted(CELLS.items(), key=lambda kv: kv[1][1]):
            if alt[1] > c[1]:
                at2 = atlas(alt, family)
                if at2.wide_ok:
                    note = (f"cell {c[0]}x{c[1]} has no legible wide (CJK) glyphs; "
                            f"switched to {alt[0]}x{alt[1]}")
                    at = at2
                    break
    return prof, at, note


@dataclass(frozen=True)
class Mark:
    """Where a page starts in the stream of its document: what :func:`iter_pages` needs to lay the document out
    again from that page on (``resume=``) instead of from its start.

    Attributes
    ----------
    chunk : int
        :attr:`snapglyph.raster.stream.Chunk.first` of the chunk the page starts in.
    offset : int
        The element of that chunk the page starts at.
    piece : int
        Index of the piece (:func:`snapglyph.raster.stream.segments`) that element belongs to.
    state : tuple of int
        The layout state (``N_STATE`` values of :mod:`snapglyph.raster._codes`) at the page's start.

    Examples
    --------
    >>> marks = []
    >>> pages = list(iter_pages(Document.from_text("word " * 20000), marks=marks))
    >>> len(marks) == len(pages), marks[0].offset, marks[1].offset > 0
    (True, 0, True)
    >>> again = list(iter_pages(Document.from_text("word " * 20000), resume=(1, marks[1])))
    >>> [p.index for p in again] == [p.index for p in pages[1:]], again[0].png == pages[1].png
    (True, True)
    """

    chunk: int
    offset: int
    piece: int
    state: tuple


def iter_pages(document: Document, *, profile="claude", cell=None, mode: str = "auto", family: str | None = None,
               reuse_buffer: bool = False, buffers=None,
               encoded: dict | None = None, draw=True, marks: list | None = None,
               resume: "tuple[int, Mark] | None" = None) -> Iterator[Page]:
    """Lay out and draw ``document`` page by page (streaming: one page and one chunk in memory).

    Parameters
    ----------
    document : Document
    profile : str or Profile
        Reader profile: page size and patch.
    cell : None, str or tuple of int
        See :func:`resolve_cell`.
    mode : str
        ``"auto"`` (default), ``"dense"`` or ``"lines"`` (see the module).
    family : str or None
        ``"outline"`` or ``"bitmap"``; None for the cell's default (:func:`snapglyph.raster.atlas.default_family`).
    reuse_buffer : bool
        If True, every full page shares one pixel buffer, overwritten when the next page is drawn: use each page
        (``.png``, ``.pixels``) before advancing the iterator. Saves allocating a page per page.
    buffers : PageBuffers or None
        Where pages are encoded on other threads: each full page after the first takes its pixel buffer from this
        :class:`snapglyph.raster.pool.PageBuffers` (a buffer given back once its page was encoded, else a new one),
        so a long render reuses a few buffers instead of allocating (and faulting in) one a page.
    encoded : dict or None
        A memo of encoded segments shared with other renders (see :func:`snapglyph.raster.stream.encode_segment`).
    draw : bool or set of int
        False (:func:`snapglyph.raster.lazy.render_lazy`'s layout pass): the compiled kernel gets empty ink lists, so
        breaks and counts are exact; a set: only those pages are drawn (:mod:`snapglyph.raster.lazy`). A page not drawn has
        no text and shares one scratch buffer with the others not drawn, its pixels meaningless: do not keep them
        or give them to a :class:`snapglyph.raster.pool.PageBuffers`.
    marks : list or None
        A list to append the :class:`Mark` of each page to, as the page is started.
    resume : (int, Mark) or None
        ``(index, mark)``: lay out from page ``index``, which ``mark`` (a mark of this document, or of a document
        whose pieces up to the mark's are the same, with the same settings) says starts there; the pages yielded
        are those of a whole run from that index on (tested). The pieces before the mark are not encoded.

    Yields
    ------
    Page
        Full pages of the profile's size, then the last page trimmed to its rows rounded up to the profile's patch.

    Raises
    ------
    InputError
        For a bad document, mode, cell, profile or ``draw``.
    FontError
        If a bundled font is missing.

    Examples
    --------
    >>> [(p.index, p.rows, p.chars) for p in iter_pages(Document.from_text("ab\\ncd"), mode="lines")]
    [(0, 2, 5)]
    """
    if not (isinstance(draw, bool) or (isinstance(draw, (set, frozenset)) and all(
            isinstance(i, int) and not isinstance(i, bool) for i in draw))):
        raise InputError(f"draw must be True, False or a set of page indices (int), not {draw!r}"[:200])
    prof, at, note = _check(document, profile, cell, mode, family)
    index, mark = resume if resume is not None else (0, None)
    pager = _Pager(prof, at, note, native.kernels().layout_blit, mode != "lines", reuse_buffer, buffers, draw, index, marks)
    cks = chunks(document, at, True, pager.cols if mode == "auto" else 0, encoded, mark.chunk if mark else 0)
    start = 0
    if mark is not None:
        pager.state[:] = mark.state
        start = mark.offset
    for ck in ahead(cks):  # a long document: the next chunk is prepared while this one is drawn
        yield from pager.lay_out(ck, start)
        start = 0
    if pager.touched:
        yield pager.last_page(prof)


class _Pager:
    """The page being drawn: its pixel buffer, the layout state and what it shows (the steps of
    :func:`iter_pages`)."""

    def __init__(self, prof: Profile, at: Atlas, note: str, layout, dense: bool, reuse_buffer: bool,
                 buffers=None, draw=True, index: int = 0, marks: list | None = None) -> None:
        self.at, self.note, self.layout, self.dense, self.reuse = at, note, layout, dense, reuse_buffer
        self.buffers, self.draw = buffers, draw  # draw False: the kernel gets empty ink lists (iter_pages)
        self.width, self.height = prof.page_size
        self.cols, self.rows = self.width // at.cell_w, self.height // at.cell_h
        self.scratch: np.ndarray | None = None  # the pixels of every page not drawn (see next_page)
        self.index = index
        self.marks = marks
        self.unmarked = marks is not None  # the current page's Mark is still to be taken
        self.buf = (np.full((self.height, self.width), 255, np.uint8) if self.drawn(index)
                    else self.scratch_buffer())
        self.state = np.zeros(N_STATE, np.int64)
        self.line_flag = np.zeros(self.rows * KMAX, np.int8)
        self.cont = int(at.lookup(np.array([CONT_MARK]))[0])
        self.acc: list = [0, 0, 0, 0, None, None]  # chars, replaced, zero-width, removed, first id, last id
        self.shown: list[tuple[np.ndarray, np.ndarray]] = []  # (reading line or -1, stream code) of the elements placed
        self.out_line = self.out_col = np.empty(0, np.int32)
        self.touched = False
        self.fresh = True  # nothing laid out on this page yet

    def lay_out(self, ck: Chunk, start: int = 0) -> Iterator[Page]:
        """Place chunk ``ck`` from its element ``start`` on, yielding each page it fills."""
        at, i, n = self.at, start, len(ck.codes)
        full = at.ink_lists(self.width)  # after the chunk's glyphs were added
        none = full if self.draw is True else (np.zeros(at.n + 1, np.int32), np.zeros(0, np.int32),
                                               np.zeros(0, np.uint8))
        if len(self.out_line) < n:  # grown, never shrunk: fresh arrays per chunk cost page faults
            self.out_line, self.out_col = np.empty(n, np.int32), np.empty(n, np.int32)
        out_line, out_col = self.out_line[:n], self.out_col[:n]
        out_line.fill(-1)
        count = native.kernels().count_span
        while i < n:  # one call never goes past a page: the ink lists (layout only: all empty) are the page's
            if self.unmarked:
                piece = ck.pieces[int(np.searchsorted(ck.starts, i, side="right")) - 1]
                self.marks.append(Mark(ck.first, i, piece, tuple(self.state.tolist())))
                self.unmarked = False
            drawn = self.drawn(self.index)
            ink = full if drawn else none
            draw_label(self, ck, i, ink, drawn, STYLE_LUT, MARKER)  # a fresh page opening inside a message: its label
            j = self.layout(ck.codes, ck.styles, i, n, self.state, self.buf, at.glyphs, at.width, STYLE_LUT,
                            at.cell_w, at.cell_h, self.cols, self.rows, self.dense, MARKER, *ink, out_line, out_col,
                            self.line_flag, self.cont)
            _account(self.acc, ck, i, j, count)
            if j > i:
                if drawn:  # a page not drawn is drawn again before its text is read (raster/lazy.py)
                    self.shown.append((out_line[i:j].copy(), ck.codes[i:j].copy()))  # read by Page.text, if ever
                self.fresh = False
            elif self.fresh:  # nothing fits on an empty page (a page that a chunk's end filled is not empty)
                raise RenderError("layout made no progress on an empty page (cell wider than the page?)")
            self.touched = True
            if j < n:  # page full
                yield self.page(self.buf)  # not reused: next_page gives the pager a new buffer
                self.next_page()
            i = j

    def page(self, pixels: np.ndarray) -> Page:
        """The current page with ``pixels`` and its counts."""
        used_rows = int(self.state[S_ROWS_USED])
        fill = float(self.state[S_CELLS]) / (used_rows * self.cols) if used_rows else 0.0
        acc = self.acc
        return Page(pixels, self.index, acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], fill,
                    (self.at.cell_w, self.at.cell_h), used_rows, self.note,
                    reading=(list(self.shown), self.line_flag.copy(), self.at) if self.drawn(self.index) else None)

    def drawn(self, index: int) -> bool:
        """Whether page ``index`` is drawn (the ``draw`` of :func:`iter_pages`)."""
        return self.draw is True or (self.draw is not False and index in self.draw)

    def scratch_buffer(self) -> np.ndarray:
        """The one buffer every page not drawn is laid out on: never made white, its pixels mean nothing (the
        kernel still writes inverted cells and band rules; a white page for each cost a fill of the whole page,
        0.1 s of the aider compaction's layout pass)."""
        if self.scratch is None:
            self.scratch = np.empty((self.height, self.width), np.uint8)
        return self.scratch

    def next_page(self) -> None:
        """Start a new page: white where it is drawn (the block fields of the layout state carry over)."""
        if not self.drawn(self.index + 1):
            self.buf = self.scratch_buffer()
        elif self.reuse:
            self.buf.fill(255)
        elif self.buffers is not None:
            self.buf = self.buffers.take((self.height, self.width))
        else:
            self.buf = np.full((self.height, self.width), 255, np.uint8)
        self.index += 1
        self.fresh = True
        self.unmarked = self.marks is not None
        new_page_state(self.state)
        self.line_flag[:] = 0
        self.shown.clear()
        self.acc[:] = [0, 0, 0, 0, None, None]

    def last_page(self, prof: Profile) -> Page:
        """The last page, trimmed (:func:`_last_page_height`)."""
        used = max(1, int(self.state[S_ROWS_USED]) * self.at.cell_h)
        return self.page(self.buf[:_last_page_height(prof, self.width, self.height, used)].copy())


def _account(acc: list, ck: Chunk, a: int, b: int, count) -> None:
    """Add the elements ``[a, b)`` of chunk ``ck`` to a page's counts ``acc`` (chars, replaced, zero-width,
    removed, first id, last id); modifies ``acc`` in place. ``count``: the kernel
    :func:`snapglyph.raster._kernels.count_span`."""
    if b <= a:
        return
    chars, replaced = count(ck.codes, ck.srcw, a, b, REPL_NARROW, REPL_WIDE)
    acc[0] += chars
    acc[1] += replaced
    # Segments whose first element lies in [a, b) bring their zero-width and removed counts.
    lo, hi = np.searchsorted(ck.starts, [a, b])
    for k in range(lo, hi):
        acc[2] += ck.zw[k]
        acc[3] += ck.rm[k]
    first = max(0, int(np.searchsorted(ck.starts, a, side="right")) - 1)
    last = int(np.searchsorted(ck.starts, b - 1, side="right")) - 1
    for k in range(first, last + 1):
        if ck.mids[k] >= 0:
            if acc[4] is None:
                acc[4] = ck.mids[k]
            acc[5] = ck.mids[k]


def _last_page_height(prof: Profile, width: int, height: int, used: int) -> int:
    """Height in pixels of the last page: its rows rounded up to the patch, unless that shorter image would be
    resized by the provider (Qwen's minimum pixels) or cost more than a full page (Gemini 2's tiles); then the full
    page height."""
    p = prof.patch or 1
    h = min(height, -(-used // p) * p)
    if h < height and (prof.provider_resize(width, h) != (width, h)
                       or prof.image_tokens(width, h) > prof.image_tokens(width, height)):
        return height
    return h


def render_document(document: Document, *, profile="claude", cell=None, mode: str = "auto",
                    family: str | None = None, workers: int | None = None) -> list[Page]:
    """Render ``document`` to a list of pages with their PNGs encoded (see :func:`render` and :func:`iter_pages`).

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> from snapglyph.model.document import build_document
    >>> msgs = [Message(0, "user", [Part("text", text="List the files.")]),
    ...         Message(1, "assistant", [Part("text", text="a.py b.py")])]
    >>> pages = render_document(build_document(msgs), workers=1)
    >>> len(pages), pages[0].first_id, pages[0].last_id, pages[0].png[1:4]
    (1, 0, 1, b'PNG')
    >>> print(pages[0].text)
     #0 user List the files.
     #1 assistant a.py b.py
    """
    from .pool import encode_ahead

    pages = iter_pages(document, profile=profile, cell=cell, mode=mode, family=family)
    return list(encode_ahead(pages, workers))


def render(text_or_messages, *, profile="claude", cell=None, mode: str = "auto",
           family: str | None = None, workers: int | None = None) -> list[Page]:
    """Render text, messages or a document to pages.

    Parameters
    ----------
    text_or_messages : str, sequence of Message, or Document
        A ``str`` becomes a one-segment document; messages go through :func:`snapglyph.model.document.build_document`.
    profile, cell, mode, family
        See :func:`iter_pages`.
    workers : int or None
        Threads encoding the PNGs while later pages are drawn (:func:`snapglyph.raster.pool.encode_ahead`):
        None for the number of cores, 1 to encode in the calling thread. The bytes do not depend on it.

    Returns
    -------
    list of Page
        Empty for an empty input; every page's :attr:`Page.png` is already encoded.

    Raises
    ------
    InputError
        For an input of another type, or a bad mode, cell, profile or ``workers``.
    FontError
        If a bundled font is missing.

    Examples
    --------
    >>> pages = render("hello, world", workers=1)
    >>> len(pages), pages[0].width, pages[0].chars, pages[0].png[1:4]
    (1, 1092, 12, b'PNG')
    """
    doc = _as_document(text_or_messages, mode)
    return render_document(doc, profile=profile, cell=cell, mode=mode, family=family, workers=workers)


def _as_document(x, mode: str = "auto", memo: dict | None = None) -> Document:
    from ..model.document import document_for
    return document_for(x, mode, memo)
