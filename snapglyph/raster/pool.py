"""PNG encoding beside layout: a small thread pool that encodes pages while the next ones are laid out.

Layout and drawing (:func:`snapglyph.raster._kernels.layout_blit`), row packing
(:func:`snapglyph.raster._kernels.pack_rows`) and deflate (ISA-L or zlib) all release the GIL, so on a machine with
two or more cores a page is encoded while the following one is drawn. :func:`encode_ahead` keeps at most
``window`` pages in flight and yields them in their input order with :attr:`snapglyph.raster.render.Page.png`
already computed; the bytes are those of a serial encode (tested), because each page is encoded by the same
function on its own pixels.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Iterator

from ..errors import InputError

__all__ = ["encode_ahead", "resolve_workers"]


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


def _encode(page):
    return page.png


def encode_ahead(pages: Iterable, workers: int | None = None, window: int | None = None) -> Iterator:
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
    if n == 1:
        for page in pages:
            _encode(page)
            yield page
        return
    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="snapglyph-png") as pool:
        try:
            for page in pages:
                pending.append((page, pool.submit(_encode, page)))
                if len(pending) >= window:
                    page, fut = pending.popleft()
                    fut.result()
                    yield page
            while pending:
                page, fut = pending.popleft()
                fut.result()
                yield page
        finally:
            for _, fut in pending:
                fut.cancel()
