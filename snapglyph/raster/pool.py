"""PNG encoding beside layout: a small thread pool that encodes pages while the next ones are laid out.

Layout and drawing (:func:`snapglyph.raster._kernels.layout_blit`), row packing
(:func:`snapglyph.raster._pack_kernels.pack_rows`) and deflate (ISA-L or zlib) all release the GIL, so on a machine with
two or more cores a page is encoded while the following one is drawn. :func:`encode_ahead` keeps at most
``window`` pages in flight and yields them in their input order with :attr:`snapglyph.raster.render.Page.png`
already computed; the bytes are those of a serial encode (tested), because each page is encoded by the same
function on its own pixels.
"""

from __future__ import annotations

import ctypes
import dataclasses
import io
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from functools import partial
from typing import Callable, Iterable, Iterator

from .._config import TRIM_PAGES
from ..errors import InputError
from .page import Page
from .page_text import page_body

__all__ = ["PROGRESS", "PackedPage", "PageBuffers", "encode_ahead", "resolve_workers"]

PROGRESS: ContextVar = ContextVar("snapglyph_progress", default=None)
"""A callable ``tick(pages)`` that :func:`snapglyph.raster.lazy.render_packed` (and ``render_lazy``) calls
after each page it keeps, or None (the default).
The command line sets it to a progress bar around ``compact``; the library itself never prints."""


def resolve_workers(workers: int | None) -> int:
    """Return the number of encoding threads for ``workers``.

    Parameters
    ----------
    workers : int or None
        None for the number of cores this process may use; 1 for strictly serial (no thread); more for a pool.

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    InputError
        If ``workers`` is not None or a positive int.

    Examples
    --------
    >>> resolve_workers(1), resolve_workers(None) >= 1
    (1, True)
    """
    if workers is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not on Linux
            return max(1, os.cpu_count() or 1)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a positive int or None, not {workers!r}")
    return workers


def _heap_trimmer() -> Callable[[], object]:
    """glibc's ``malloc_trim(0)`` (returns the free pages of every heap to the system), or a no-op elsewhere."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):  # not glibc (musl, macOS, Windows)
        return lambda: None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return partial(trim, 0)


_trim_heap = _heap_trimmer()


def _trim_after(page) -> None:
    """Return freed heap pages to the system after every :data:`TRIM_PAGES`-th page."""
    if page.index % TRIM_PAGES == TRIM_PAGES - 1:
        _trim_heap()


def _encode(page):
    return page.png


def _encode_then(page, then):
    png = page.png
    then(page)
    return png


class PageBuffers:
    """Pixel buffers of encoded pages, given back and taken again for new pages (see ``buffers`` of
    :func:`snapglyph.raster.render.iter_pages`).

    A page's buffer may be given back only once nothing reads that page's pixels again: its PNG is encoded and
    nothing else holds the page (:func:`snapglyph.raster.lazy.render_packed` and
    :func:`snapglyph.raster.page_folder.write_pages` give back their own drawn pages). A buffer given back is made white on the giving thread (an encoding thread, off
    the drawing's path); at most ``keep`` wait to be taken, the rest are freed. Measured on the 10 M-character
    bench text (2026-12-02): without it, faulting in a fresh 1.2 MB buffer a page took 0.24 s of system time.

    Parameters
    ----------
    keep : int
        Most buffers kept for reuse (>= 1).

    Raises
    ------
    InputError
        For a ``keep`` that is not a positive int.

    Examples
    --------
    >>> import numpy as np
    >>> pool = PageBuffers(keep=2)
    >>> a = pool.take((4, 6))
    >>> a[0, 0] = 0
    >>> pool.give(a)
    >>> b = pool.take((4, 6))
    >>> b is a, int(b.min()), pool.take((4, 6)) is a
    (True, 255, False)
    """

    def __init__(self, keep: int = 8) -> None:
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise InputError(f"keep must be a positive int, not {keep!r}")
        self.keep = keep
        self._free: deque = deque()  # append and pop are atomic: given on encoding threads, taken on the drawing one

    def take(self, shape: tuple[int, int]):
        """A white ``shape`` (height, width) uint8 buffer: one given back, else a new one."""
        import numpy as np

        try:
            buf = self._free.pop()
        except IndexError:
            return np.full(shape, 255, np.uint8)
        return buf if buf.shape == shape else np.full(shape, 255, np.uint8)

    def give(self, pixels) -> None:
        """Give back a page's ``(height, width)`` uint8 pixel buffer: made white and kept, or freed when ``keep``
        buffers wait already or the array is a view (a trimmed last page)."""
        if len(self._free) < self.keep and pixels.base is None and pixels.flags.writeable:
            pixels.fill(255)
            self._free.append(pixels)


class _SizedPage(Page):
    """A page that does not hold its pixels: the fields of a drawn page (:meth:`_copy`), its size kept apart."""

    def _copy(self, page: Page) -> None:
        for f in dataclasses.fields(Page):
            if f.name not in ("pixels", "reading"):
                object.__setattr__(self, f.name, getattr(page, f.name))
        object.__setattr__(self, "_size", (page.width, page.height))

    @property
    def width(self) -> int:
        """Page width in pixels."""
        return self._size[0]

    @property
    def height(self) -> int:
        """Page height in pixels."""
        return self._size[1]


class PackedPage(_SizedPage):
    """A :class:`snapglyph.raster.render.Page` that keeps only its PNG bytes (about 70 KB instead of 1.2 MB).

    Every attribute is the drawn page's; :attr:`pixels` is decoded again from the PNG on each access (exactly the
    drawn pixels: the PNG is lossless), so a long list of pages stays small. Compaction keeps its pages this way
    (the ones it looks at: :mod:`snapglyph.raster.lazy`).

    Parameters
    ----------
    page : Page
        A drawn page (its PNG is encoded here if it was not yet).

    Examples
    --------
    >>> from snapglyph.raster.render import render
    >>> page = render("hello", workers=1)[0]
    >>> packed = PackedPage(page)
    >>> (packed.width, packed.height, packed.chars), bool((packed.pixels == page.pixels).all())
    ((1092, 28, 5), True)
    """

    def __init__(self, page: Page) -> None:  # fields copied from the drawn page, pixels replaced by the PNG
        png = page.png
        self._copy(page)
        r = page.reading  # kept as its characters and line ends: the lines are joined only if the text is read
        object.__setattr__(self, "reading", r if r is None or isinstance(r[0], str) else page_body(*r))
        self.__dict__["png"] = png

    @property
    def pixels(self):  # type: ignore[override]
        """``(height, width)`` uint8 pixels, decoded from :attr:`png` (a new array on each access)."""
        import numpy as np
        from PIL import Image

        with Image.open(io.BytesIO(self.png)) as im:
            return np.asarray(im.convert("L")).copy()


def encode_ahead(pages: Iterable, workers: int | None = None, window: int | None = None,
                 then: Callable[[Page], object] | None = None) -> Iterator:
    """Yield ``pages`` in order, each with its PNG computed, encoding up to ``window`` pages ahead on threads.

    Parameters
    ----------
    pages : iterable of Page
        Pages that own their pixels (not a shared buffer: do not pass ``iter_pages(..., reuse_buffer=True)``).
    workers : int or None
        See :func:`resolve_workers`; 1 encodes each page in the calling thread just before yielding it.
    window : int or None
        Most pages drawn but not yet yielded (each holds its pixels: about 1.2 MB for a 1092x1092 page);
        None for ``2 * workers``.
    then : callable or None
        Called with each page on the thread that encoded it, after encoding (writing its file, say: the file
        system's calls then wait on that thread, not on the one drawing). Its errors pass through like encoding's.

    Every :data:`snapglyph._config.TRIM_PAGES` pages, the heap's free pages go back to the system (glibc's
    ``malloc_trim``; nothing elsewhere): pages are allocated on one thread and freed on others, and glibc keeps
    what its per-thread heaps freed, so a long render would otherwise grow by fragments.

    Yields
    ------
    Page
        The same objects, in the same order, with ``page.png`` already set.

    Raises
    ------
    InputError
        For a bad ``workers`` or ``window``. Errors raised while drawing or encoding pass through unchanged.

    Examples
    --------
    >>> from snapglyph.raster.render import iter_pages
    >>> from snapglyph.model.document import Document
    >>> pages = list(encode_ahead(iter_pages(Document.from_text("abc " * 9000)), workers=2))
    >>> [p.index for p in pages], all("png" in p.__dict__ for p in pages)
    ([0, 1, 2], True)
    """
    n = resolve_workers(workers)
    window = 2 * n if window is None else window
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise InputError(f"window must be a positive int or None, not {window!r}")
    work = _encode if then is None else partial(_encode_then, then=then)
    if n == 1:
        for page in pages:
            work(page)
            yield page
            _trim_after(page)
        return
    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="snapglyph-png") as pool:
        try:
            for page in pages:
                pending.append((page, pool.submit(work, page)))
                if len(pending) >= window:
                    page, fut = pending.popleft()
                    fut.result()
                    yield page
                    _trim_after(page)
            while pending:
                page, fut = pending.popleft()
                fut.result()
                yield page
        finally:
            for _, fut in pending:
                fut.cancel()
