"""The page a render yields (:class:`Page`): its pixels, its counts and ids, and its PNG and text, made on first
use. A module of its own because every stage after the layout reads it (the PNG pool, the page folder, the lazy
pages, the compactor) while only :mod:`snapglyph.raster.render` makes it; it is exported from there too."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .page_text import join_lines, page_body

__all__ = ["PNG_DEPTH", "Page"]

PNG_DEPTH = 2
"""Bits per pixel of a page's PNG: every style's pixel values are multiples of 85."""


class _computed_once:
    """Like :class:`functools.cached_property`, without its lock: on Python 3.11 that property holds one lock for
    every instance of the class while a value is computed (3.12 dropped it), so pages encoding their PNGs on the
    pool's threads took turns (two threads: 0.94x one, against 1.76x without it; measured 2026-12-03). Two threads
    asking one page at once may both compute its value; the values are equal (the PNG writer is deterministic)."""

    def __init__(self, fn) -> None:
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)  # the instance's dict answers the next lookups
        return value


@dataclass(frozen=True, eq=False)
class Page:
    """One rendered page.

    Attributes
    ----------
    pixels : numpy.ndarray
        ``(height, width)`` uint8 grey values in {0, 85, 170, 255}; white background.
    index : int
        0-based page number within the render.
    chars : int
        Source characters shown on the page (drawn plus replaced; a newline counts as shown).
    replaced : int
        Source characters with no glyph in the bundled fonts: drawn as the replacement glyph, or as a short ASCII
        label where :data:`snapglyph.raster.atlas.SYMBOL_LABELS` has one (✅ as ``[ok]``).
    zero_width : int
        Source characters of the page's segments that take no cell (combining marks, format characters).
    removed : int
        Source characters removed as escapes or terminal controls.
    first_id, last_id : int or None
        First and last message id shown (None where the page shows no message text).
    fill : float
        Cells used over cells available in the rows the page uses (0..1).
    cell : tuple of int
        ``(cell_w, cell_h)`` in pixels actually used.
    rows : int
        Rows of cells the page uses (``rows * cell_h <= height``).
    note : str
        Why the cell differs from the one asked for, else empty.
    text : str
        The exact text drawn on the page, one line per row in reading order (a block band's columns one after the
        other, top to bottom then left to right), joined by ``\\n``: characters after normalization, a symbol
        drawn as its label as the label's letters, the replacement glyph as U+FFFD, a newline mark as ↵, a
        continuation row starting with ↪, an empty row as an empty line.

    Examples
    --------
    >>> from snapglyph import Document
    >>> from snapglyph.raster.render import render_document
    >>> p, = render_document(Document.from_text("ok \\u2705 done"), workers=1)
    >>> p.pixels.shape, p.pixels.dtype, p.rows, p.cell, p.fill
    ((28, 1092), dtype('uint8'), 1, (6, 12), 0.06593406593406594)
    >>> p.chars, p.replaced, p.drawn, p.text
    (9, 1, 8, 'ok [ok] done')
    """

    pixels: np.ndarray
    index: int
    chars: int
    replaced: int
    zero_width: int
    removed: int
    first_id: int | None
    last_id: int | None
    fill: float
    cell: tuple[int, int]
    rows: int = 0
    note: str = ""
    depth: int = field(default=PNG_DEPTH, repr=False)
    reading: tuple | None = field(default=None, repr=False, compare=False)
    """What :attr:`text` is computed from on first access: ``(shown, line_flag, atlas)`` as the renderer keeps them,
    or ``(body, ends, line_flag)`` (:func:`page_body`, kept by a page stored as its PNG); None: no text."""

    @property
    def width(self) -> int:
        """Page width in pixels."""
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        """Page height in pixels."""
        return int(self.pixels.shape[0])

    @property
    def drawn(self) -> int:
        """Source characters drawn from a font glyph (``chars - replaced``)."""
        return self.chars - self.replaced

    @_computed_once
    def text(self) -> str:
        """The exact text drawn on the page (see the class), computed on first access: writing pages does not
        need it, and it costs about a fifth of the layout's time."""
        r = self.reading
        if r is None:
            return ""
        return join_lines(*(r if isinstance(r[0], str) else page_body(*r)))

    @_computed_once
    def png(self) -> bytes:
        """Deterministic PNG bytes of :attr:`pixels` (2-bit grey; computed on first access)."""
        from .encode import png_bytes

        return png_bytes(self.pixels, depth=self.depth)
