"""Pages laid out now and drawn when first looked at: what compaction renders its middles with.

A compaction renders the middle of a long conversation to learn its pages' breaks, sizes and message ids, then
keeps the few that fit the budget (17 of the aider history's 329 at a 100,000-token budget) and drops the rest.
:func:`render_lazy` lays the document out without drawing it (``iter_pages(..., draw=False)``: breaks, counts
and ids exact, tested) and returns :class:`LazyPage` objects. The first time a page's PNG, pixels or text is read,
the document is laid out again and that page and every later one are drawn and encoded in one pass (kept pages are
the newest, so that pass draws what is kept and little else); a page is a pure function of the document and the
settings, so its bytes are those :func:`render_packed` gives (tested page by page). :func:`render_packed` is the
eager render beside it: every page drawn and kept as its PNG.
"""

from __future__ import annotations

import bisect
import functools
import threading

from .pool import PROGRESS, PackedPage, PageBuffers, _SizedPage, encode_ahead
from .render import Mark, Page, _as_document, _check, iter_pages
from .stream import segments

__all__ = ["LazyPage", "render_lazy", "render_packed"]


class _Peek:
    """A view of an encoded-segment memo (:func:`snapglyph.raster.stream.encode_segment`) that leaves what it finds
    in: the layout pass leaves each segment for the drawing pass to take."""

    def __init__(self, memo: dict) -> None:
        self.memo = memo

    def pop(self, key, default=None):
        return self.memo.get(key, default)

    def __setitem__(self, key, value) -> None:
        self.memo[key] = value


class _Pages:
    """The document and settings of one lazy render, its pages and where each starts; draws them on demand."""

    def __init__(self, doc, settings: dict, workers: int | None, encoded: dict | None) -> None:
        self.doc, self.settings, self.workers, self.encoded = doc, settings, workers, encoded
        self.pages: list[LazyPage] = []
        self.marks: list[Mark] = []  # per page, where it starts (iter_pages' marks)
        self.lock = threading.Lock()

    @functools.cached_property
    def key(self) -> tuple:
        """The resolved layout (:func:`_layout_key`), worked out only where a reuse is looked at."""
        return _layout_key(self.doc, self.settings)

    def draw_from(self, first: int) -> None:
        """Draw and encode page ``first`` and every later page not drawn yet, in one pass over the document from
        page ``first``'s mark."""
        with self.lock:
            want = {p.index for p in self.pages[first:] if p._packed is None}
            if not want:
                return
            last, buffers = max(want), PageBuffers()
            start = min(want)
            drawn = iter_pages(self.doc, **self.settings, buffers=buffers, encoded=self.encoded, draw=want,
                               resume=(start, self.marks[start]))
            wanted = (p for p in drawn if p.index in want)  # the others share iter_pages' scratch buffer
            encoded = encode_ahead(wanted, self.workers)
            try:
                for page in encoded:
                    self.pages[page.index]._packed = PackedPage(page)
                    buffers.give(page.pixels)
                    if page.index == last:
                        break
            finally:
                encoded.close()
                drawn.close()


class LazyPage(_SizedPage):
    """A page of :func:`render_lazy`: every count and id of the drawn page, known from layout; :attr:`png`,
    :attr:`pixels` and :attr:`text` (its :attr:`reading`) are drawn on first access (this page and the later ones
    of its render, in one pass).

    Examples
    --------
    >>> pages = render_lazy("abc " * 9000, workers=1)
    >>> [p._packed is None for p in pages]
    [True, True, True]
    >>> pages[1].png[1:4], [p._packed is None for p in pages]
    (b'PNG', [True, False, False])
    """

    def __init__(self, page: Page, owner: _Pages) -> None:
        self._copy(page)
        self.__dict__.update(_owner=owner, _packed=None)

    def _page(self) -> PackedPage:
        if self._packed is None:
            self._owner.draw_from(self.index)
        return self._packed

    @property
    def png(self) -> bytes:  # type: ignore[override]
        """Deterministic PNG bytes (drawn on first access)."""
        return self._page().png

    @property
    def pixels(self):  # type: ignore[override]
        """``(height, width)`` uint8 pixels, decoded from :attr:`png`."""
        return self._page().pixels

    @property
    def reading(self):  # type: ignore[override]
        """The page's characters and line ends (:func:`snapglyph.raster.page_text.page_body`)."""
        return self._page().reading


def render_packed(text_or_messages, *, profile="claude", cell=None, mode: str = "auto", family: str | None = None,
                  workers: int | None = None, encoded: dict | None = None, segments: dict | None = None) -> list:
    """Render like :func:`snapglyph.raster.render.render`, keeping each page as its PNG (:class:`PackedPage`).

    At most ``2 * workers`` drawn pages are held as pixels at a time, so memory grows with the PNG bytes only.

    Parameters
    ----------
    text_or_messages, profile, cell, mode, family, workers
        As :func:`snapglyph.raster.render.render`.
    encoded : dict or None
        A memo of encoded segments shared with other renders (:func:`snapglyph.raster.render.iter_pages`).
    segments : dict or None
        A memo of the messages' segments shared with other renders
        (:func:`snapglyph.model.document.build_document`).

    Returns
    -------
    list of PackedPage

    Raises
    ------
    InputError, FontError
        As :func:`snapglyph.raster.render.render`.

    Examples
    --------
    >>> pages = render_packed("abc " * 9000, workers=2)
    >>> [type(p).__name__ for p in pages], pages[0].png[1:4]
    (['PackedPage', 'PackedPage', 'PackedPage'], b'PNG')
    """
    doc = _as_document(text_or_messages, mode, segments)
    buffers = PageBuffers()
    drawn = iter_pages(doc, profile=profile, cell=cell, mode=mode, family=family, buffers=buffers, encoded=encoded)
    tick = PROGRESS.get()
    pages = []
    for page in encode_ahead(drawn, workers):
        pages.append(PackedPage(page))
        buffers.give(page.pixels)  # nothing reads the drawn page again: the packed one decodes its PNG
        if tick is not None:
            tick(1)
    return pages


def render_lazy(text_or_messages, *, profile="claude", cell=None, mode: str = "auto", family: str | None = None,
                workers: int | None = None, encoded: dict | None = None, segments: dict | None = None,
                like: list | None = None) -> list:
    """Lay out like :func:`render_packed` and return its pages undrawn (:class:`LazyPage`).

    Parameters
    ----------
    text_or_messages, profile, cell, mode, family, workers, encoded, segments
        As :func:`render_packed` (``encoded``: the layout pass leaves each segment in the
        memo, the drawing pass takes it out).
    like : list of LazyPage, optional
        The pages of an earlier ``render_lazy`` with the same settings of a document that this one begins
        (its segments, the same objects, come first there: a compaction's largest middle and a smaller one built
        with the same ``segments`` memo). Its pages that end before this document's last piece are taken as they
        are (append stability: a page depends only on what it shows and what comes before), and the layout
        starts at the first page that may differ; the pages are those of a whole layout (tested). Ignored where
        the documents or settings differ.

    Returns
    -------
    list of LazyPage

    Raises
    ------
    InputError, FontError
        As :func:`snapglyph.raster.render.render`.

    Examples
    --------
    >>> [p.png for p in render_lazy("abc " * 9000)] == [p.png for p in render_packed("abc " * 9000)]
    True
    """
    doc = _as_document(text_or_messages, mode, segments)
    settings = {"profile": profile, "cell": cell, "mode": mode, "family": family}
    owner = _Pages(doc, settings, workers, encoded)
    tick = PROGRESS.get()
    kept = _reusable(owner, like)
    resume = None
    if kept:
        earlier = like[0]._owner
        owner.pages = [LazyPage(p, owner) for p in like[:kept]]
        owner.marks = earlier.marks[:kept]
        resume = (kept, earlier.marks[kept])  # laid out again from here (its mark is taken again)
    laid = iter_pages(doc, **settings, reuse_buffer=True, encoded=_Peek(encoded) if encoded is not None else None,
                      draw=False, marks=owner.marks, resume=resume)
    for page in laid:
        owner.pages.append(LazyPage(page, owner))
        if tick is not None:
            tick(1)
    return list(owner.pages)  # the caller's list: changing it leaves the pages' own index of each other alone


def _layout_key(doc, settings: dict) -> tuple:
    """What every page of a layout of ``doc`` depends on beside the text: the profile, the atlas and note the cell
    resolves to (a document with wide characters may switch to a larger cell: :func:`snapglyph.raster.render._check`),
    and the mode."""
    prof, at, note = _check(doc, settings["profile"], settings["cell"], settings["mode"], settings["family"])
    return prof, at, note, settings["mode"]


def _reusable(owner: _Pages, like: list | None) -> int:
    """How many pages of ``like`` (an earlier :func:`render_lazy`) the render ``owner`` begins with, as they are
    (see :func:`render_lazy`); the layout starts at the next one, from its mark."""
    if not like or not isinstance(like[0], LazyPage):
        return 0
    earlier = like[0]._owner
    mine, theirs = owner.doc.segments, earlier.doc.segments
    if not (isinstance(mine, list) and isinstance(theirs, list)):  # a file read as it is laid out: no reuse
        return 0
    if (earlier.key != owner.key or len(earlier.marks) != len(earlier.pages) or len(mine) > len(theirs)
            or any(a is not b for a, b in zip(mine, theirs))):
        return 0
    pieces = sum(1 for _ in segments(owner.doc))
    # Page p is this document's too where page p + 1 starts at a piece of this document (< pieces): page p ended
    # at an element both documents have. The first page that may differ is laid out again from its mark.
    return bisect.bisect_left([m.piece for m in earlier.marks[1:]], pieces)
