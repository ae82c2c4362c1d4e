"""The glyph atlas: every glyph of one font family at one cell size in one ``uint8`` array, with a codepoint table.

An :class:`Atlas` holds, for one cell size and one font family:

``glyphs``  ``(capacity, cell_h, 2 * cell_w)`` uint8 coverage *levels* ``0..LEVELS-1`` (0 = no ink). A narrow glyph
            uses the left ``cell_w`` columns; a wide (East-Asian, 2-cell) glyph uses all ``2 * cell_w``.
``width``   ``(capacity,)`` uint8 number of cells of each glyph (1 or 2).
``table``   ``(0x110000,)`` int32 codepoint -> glyph index; ``-1`` means "not looked up yet".

Glyphs are rasterized (:mod:`.fonts`: FreeType, freetype-py) on first use of a codepoint, walking the family's
fallback chain; the first font that has the codepoint *with ink* wins (a glyph that a font maps to an empty bitmap
does not count, except for space separators). A code point is wide (two cells) where the pinned Unicode tables say
so (:func:`snapglyph.raster.widths.is_wide`), never by the running Python's ``unicodedata``. Codepoints no font
covers map to the replacement glyph (a hollow box, narrow or wide), which the renderer counts; those of them listed
in :data:`SYMBOL_LABELS` (emoji and symbols with a well-known meaning, such as ✅ and ❌) get a glyph index of their
own instead, marked in ``label_len``, which the renderer draws as the short ASCII label (``[ok]``, ``[x]``) and
counts as replaced too (:meth:`Atlas.expand_labels`).

Atlases are built in memory (a 6x12 atlas of the 400-odd common glyphs takes about 20 ms) and kept per process; there
is no disk cache, so a read-only install behaves exactly like a writable one.

The font names (:data:`FONT_FILES`, :func:`font_path`, :func:`default_family`, :data:`LEVELS`, ...) live in
:mod:`.fonts` and the labels in :mod:`.symbols`; they are importable from here too. The font report is
:func:`snapglyph.raster.font_report.fonts_report`.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import InputError
from .fonts import (
    FAMILIES,
    FONT_FILES,
    LEVELS,
    Face,
    baseline_row,
    default_family,
    dot_zero,
    fit_offset,
    font_chain,
    font_path,
)
from .symbols import SYMBOL_LABELS
from .widths import is_wide

__all__ = [
    "CELLS",
    "CONT_MARK",
    "FAMILIES",
    "FONT_FILES",
    "LEVELS",
    "NEWLINE_MARKER",
    "SYMBOL_LABELS",
    "Atlas",
    "atlas",
    "baseline_row",
    "default_family",
    "fit_offset",
    "font_path",
]

CELLS = {"5x8": (5, 8), "6x12": (6, 12), "8x16": (8, 16)}
"""The named cell sizes ``(cell_w, cell_h)`` in pixels offered for every profile."""

NEWLINE_MARKER = 0x21B5
"""Codepoint of the glyph drawn for a source newline in ``dense`` mode (DOWNWARDS ARROW WITH CORNER LEFTWARDS)."""

CONT_MARK = 0x21AA
"""Codepoint of the continuation mark (RIGHTWARDS ARROW WITH HOOK) of the ``auto`` layout: a block line longer than
its column goes on in the next row after this mark."""

# Glyph indices fixed in every atlas.
BLANK = 0
REPL_NARROW = 1
REPL_WIDE = 2
MARKER = 3
_N_FIXED = 4


class Atlas:
    """Glyphs of one family at one cell size, grown on demand.

    Parameters
    ----------
    cell : tuple of int
        ``(cell_w, cell_h)`` in pixels, each between 4 and 64.
    family : str
        ``"outline"`` or ``"bitmap"``.

    Attributes
    ----------
    cell_w, cell_h : int
        Cell size in pixels.
    family : str
    glyphs : numpy.ndarray
        ``(capacity, cell_h, 2*cell_w)`` uint8 levels ``0..LEVELS-1``; rows past ``n`` are unused.
    width : numpy.ndarray
        ``(capacity,)`` uint8 cells per glyph (1 or 2).
    table : numpy.ndarray
        ``(0x110000,)`` int32 codepoint -> glyph index, ``-1`` where not looked up yet.
    label_len : numpy.ndarray
        ``(capacity,)`` uint8: for a glyph index that stands for a :data:`SYMBOL_LABELS` symbol with no glyph, the
        length of its label (the glyph itself is the replacement box); 0 for every other glyph.
    label_cells : dict
        Each :data:`SYMBOL_LABELS` character that has no glyph here -> its label's length (the cells it takes).
    wide_ok : bool
        True where the chain has a legible wide (CJK) font at this cell size.
    sources : list of str
        The font keys of the fallback chain, in order.

    Raises
    ------
    InputError
        For a cell size out of range or an unknown family.
    FontError
        If a bundled font is missing or unreadable.

    Examples
    --------
    >>> at = Atlas((6, 12), "bitmap")
    >>> at.sources, at.wide_ok
    (['terminus@12px', 'efont12@12px', 'dejavu@10px'], True)
    >>> g = at.lookup(np.array([ord("A"), 0x6F22]))
    >>> at.width[g].tolist(), at.glyphs.shape[1:]
    ([1, 2], (12, 12))
    """

    def __init__(self, cell: tuple[int, int], family: str = "outline") -> None:
        cw, ch = int(cell[0]), int(cell[1])
        if not (4 <= cw <= 64 and 4 <= ch <= 64):
            raise InputError(f"cell {cell!r} out of range: width and height must be 4..64 pixels")
        if family not in FAMILIES:
            raise InputError(f"unknown font family {family!r}; known: {', '.join(FAMILIES)}")
        self.cell_w, self.cell_h, self.family = cw, ch, family
        self._chain = [Face(s, (cw, ch)) for s in font_chain((cw, ch), family)]
        self.sources = [f"{s.src.key}@{s.src.px}px" for s in self._chain]
        self.wide_ok = any(s.src.wide_ok for s in self._chain)
        self._lock = threading.Lock()
        cap = 512
        self.glyphs = np.zeros((cap, ch, 2 * cw), np.uint8)
        self.width = np.ones(cap, np.uint8)
        self.label_len = np.zeros(cap, np.uint8)
        self.table = np.full(0x110000, -1, np.int32)
        self.n = _N_FIXED
        self.covered_by: dict[int, str] = {}
        self._label_codes: dict[int, np.ndarray] = {}  # glyph index -> glyph indices of its label's letters
        self._label_range = (0x7FFFFFFF, 0)  # the labelled glyph indices lie in [lo, hi)
        self._ink: dict[int, tuple] = {}  # page width -> (n glyphs, ink lists)
        self._chars: np.ndarray | None = None  # glyph index -> code point (glyph_chars)
        self._light: dict[int, int] = {}  # glyph index -> its light variant's (light)
        self._box(REPL_NARROW, 1)
        self._box(REPL_WIDE, 2)
        self.width[REPL_WIDE] = 2
        marker = None
        self.marker_cp = NEWLINE_MARKER
        for cp in (NEWLINE_MARKER, 0xB6):
            marker = self._raster(cp, 1)
            if marker is not None:
                self.marker_cp = cp
                break
        if marker is not None:
            self.glyphs[MARKER] = marker[0]
        self.table[0x20] = BLANK
        self.table[0x0A] = BLANK  # newlines never reach the blitter as glyphs
        self.ensure(range(0x21, 0x7F))
        # Every labelled symbol (after its label's letters) is looked up now, so that a stream never meets one not
        # decided yet.
        self.ensure({ord(c) for label in SYMBOL_LABELS.values() for c in label})
        self.ensure(SYMBOL_LABELS)
        self.label_cells = {chr(cp): len(lab) for cp, lab in SYMBOL_LABELS.items() if self.label_len[self.table[cp]]}

    def _box(self, idx: int, cells: int) -> None:
        g = self.glyphs[idx]
        top, bot = max(1, self.cell_h // 6), self.cell_h - 1 - max(1, self.cell_h // 8)
        right = cells * self.cell_w - 2
        full = LEVELS - 1
        g[top, 0:right + 1] = full
        g[bot, 0:right + 1] = full
        g[top:bot + 1, 0] = full
        g[top:bot + 1, right] = full

    def _raster(self, cp: int, cells: int) -> tuple[np.ndarray, str] | None:
        for face in self._chain:
            if cells == 2 and not face.src.wide_ok:
                continue
            img = face.render(cp, cells, (self.cell_w, self.cell_h))
            if img is not None:
                if cp == 0x30 and face.src.key == "dejavu":
                    dot_zero(img)
                return img, face.src.key
        return None

    def ensure(self, cps) -> None:
        """Look up (and rasterize where needed) every codepoint in ``cps``; modifies ``table``/``glyphs`` in place.

        Parameters
        ----------
        cps : iterable of int
            Codepoints ``0..0x10FFFF``; surrogates and unassigned codepoints map to the replacement glyph.

        Examples
        --------
        >>> at = atlas((6, 12))
        >>> at.ensure([0xD800])
        >>> int(at.table[0xD800]) == REPL_NARROW
        True
        """
        with self._lock:
            for cp in cps:
                cp = int(cp)
                if self.table[cp] >= 0:
                    continue
                wide = is_wide(cp)
                cells = 2 if wide else 1
                got = None
                if not (0xD800 <= cp < 0xE000) and cp != 0xFFFD:
                    got = self._raster(cp, cells)
                label = SYMBOL_LABELS.get(cp) if got is None else None
                if got is None and label is None:
                    self.table[cp] = REPL_WIDE if wide else REPL_NARROW
                    continue
                self._grow()
                if label is not None:  # no glyph: a box of its own, drawn as the label (expand_labels)
                    self.glyphs[self.n] = self.glyphs[REPL_WIDE if wide else REPL_NARROW]
                    self._label_codes[self.n] = self.table[[ord(c) for c in label]].astype(np.int32)
                    self.label_len[self.n] = len(label)
                    lo, hi = self._label_range
                    self._label_range = (min(lo, self.n), max(hi, self.n + 1))
                else:
                    self.glyphs[self.n] = got[0]
                    self.covered_by[cp] = got[1]
                self.width[self.n] = cells
                self.table[cp] = self.n
                self.n += 1

    def _grow(self) -> None:
        """Double the glyph arrays where they are full (under the lock)."""
        if self.n == len(self.glyphs):
            self.glyphs = np.concatenate([self.glyphs, np.zeros_like(self.glyphs)])
            self.width = np.concatenate([self.width, np.ones_like(self.width)])
            self.label_len = np.concatenate([self.label_len, np.zeros_like(self.label_len)])

    def light(self, idx) -> np.ndarray:
        """Glyph indices of light variants of the glyphs ``idx``: each ink pixel at level 1, so that every text
        style draws it in light grey (170, as :data:`snapglyph.raster.render.STYLE_LUT` maps level 1), the width
        and the character (:meth:`glyph_chars`) of the glyph it varies. Made on first use; not in ``table``.

        Parameters
        ----------
        idx : array-like of int
            Glyph indices below ``n``.

        Returns
        -------
        numpy.ndarray
            int32 ``(len(idx),)``.

        Examples
        --------
        >>> at = atlas((6, 12))
        >>> g = int(at.table[ord("7")])
        >>> v, = at.light([g]).tolist()
        >>> int(at.glyphs[v].max()), bool(((at.glyphs[v] > 0) == (at.glyphs[g] > 0)).all())
        (1, True)
        >>> chr(at.glyph_chars()[v]), at.light([g]).tolist() == [v]
        ('7', True)
        """
        out = []
        with self._lock:
            for g in np.asarray(idx, np.int64).tolist():
                v = self._light.get(g)
                if v is None:
                    self._grow()
                    v = self._light[g] = self.n
                    self.glyphs[v] = np.minimum(self.glyphs[g], 1)
                    self.width[v] = self.width[g]
                    self.n += 1
                out.append(v)
        return np.array(out, np.int32)

    def glyph_chars(self) -> np.ndarray:
        """Return the code point each glyph index stands for, to write the text a page shows.

        Returns
        -------
        numpy.ndarray
            uint32 array ``(n,)``: space for the blank glyph, U+FFFD for the replacement boxes, the newline marker's
            code point for the marker glyph, else the one code point mapped to that glyph.

        Examples
        --------
        >>> at = atlas((6, 12))
        >>> chr(at.glyph_chars()[at.table[ord("A")]])
        'A'
        """
        with self._lock:
            got = self._chars
            if got is not None and len(got) == self.n:
                return got
            cps = np.flatnonzero(self.table >= _N_FIXED)
            out = np.zeros(self.n, np.uint32)
            out[self.table[cps]] = cps
            out[BLANK] = 0x20
            out[REPL_NARROW] = out[REPL_WIDE] = 0xFFFD
            out[MARKER] = self.marker_cp
            for g, v in self._light.items():
                out[v] = out[g]
            self._chars = out
            return out

    def lookup(self, cps: np.ndarray) -> np.ndarray:
        """Map codepoints to glyph indices, rasterizing unseen ones.

        Parameters
        ----------
        cps : numpy.ndarray
            1-D array of codepoints (any unsigned or signed integer dtype, values ``0..0x10FFFF``).

        Returns
        -------
        numpy.ndarray
            int32 glyph indices, same length.

        Examples
        --------
        >>> at = atlas((6, 12))
        >>> at.lookup(np.array([0x20, 0x10FFFF])).tolist() == [BLANK, REPL_WIDE]
        True
        """
        idx = self.table[cps]
        if (idx < 0).any():
            self.ensure(np.unique(cps[idx < 0]).tolist())
            idx = self.table[cps]
        return idx

    def coverage(self, cps) -> int:
        """Return how many codepoints of ``cps`` have a real (inked) glyph in this atlas.

        Examples
        --------
        >>> atlas((6, 12)).coverage([ord("a"), 0x20, 0xD800])
        1
        """
        cps = list(cps)
        self.ensure(cps)
        return sum(1 for c in cps if c in self.covered_by)

    def expand_labels(self, codes: np.ndarray, srcw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Replace each labelled glyph index in a stream by its label's letters (see :data:`SYMBOL_LABELS`).

        Parameters
        ----------
        codes : numpy.ndarray
            int32 stream codes: glyph indices of this atlas, or negative layout codes (left as they are).
        srcw : numpy.ndarray
            uint8 source weight of each element (0 or 1).

        Returns
        -------
        codes, srcw : numpy.ndarray
            The same arrays where no labelled glyph occurs; else new ones where each labelled element became its
            letters, the first with source weight 2 (a source character shown, counted as replaced) and the rest 0
            (synthetic, like tab fill).
        """
        if not self._label_codes:
            return codes, srcw
        lo, hi = self._label_range
        at = np.flatnonzero((codes - np.int32(lo)).view(np.uint32) < np.uint32(hi - lo))  # codes in [lo, hi)
        at = at[self.label_len[codes[at]] > 0]
        if len(at) == 0:
            return codes, srcw
        pc, pw, pos = [], [], 0
        for i in at.tolist():
            pc.append(codes[pos:i])
            pw.append(srcw[pos:i])
            letters = self._label_codes[int(codes[i])]
            w = np.zeros(len(letters), np.uint8)
            w[0] = 2 * (srcw[i] > 0)
            pc.append(letters)
            pw.append(w)
            pos = i + 1
        pc.append(codes[pos:])
        pw.append(srcw[pos:])
        return np.concatenate(pc).astype(np.int32, copy=False), np.concatenate(pw)

    def ink_lists(self, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ink lists of the glyphs for :func:`snapglyph.raster._kernels.layout_blit` on a page ``width`` pixels wide.

        Cached until the atlas grows. Returns ``ink_start`` int32 ``(n + 1,)``, ``ink_off`` int32 ``(k,)``
        (``y * width + x`` of each pixel of level ``> 0`` within the left ``width[g] * cell_w`` columns of glyph
        ``g``, glyph by glyph) and ``ink_lvl`` uint8 ``(k,)``.
        """
        with self._lock:  # the stream thread may be adding glyphs (raster.stream.ahead)
            return self._ink_lists(width)

    def _ink_lists(self, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.n
        hit = self._ink.get(width)
        if hit is not None and hit[0] == n:
            return hit[1]
        g = self.glyphs[:n]
        span = self.width[:n].astype(np.int64) * self.cell_w
        mask = (g > 0) & (np.arange(g.shape[2])[None, None, :] < span[:, None, None])
        gi, yy, xx = np.nonzero(mask)
        lists = (np.searchsorted(gi, np.arange(n + 1)).astype(np.int32),
                 (yy.astype(np.int64) * width + xx).astype(np.int32), g[gi, yy, xx].astype(np.uint8))
        self._ink[width] = (n, lists)
        return lists


_ATLASES: dict[tuple[int, int, str], Atlas] = {}
_ATLAS_LOCK = threading.Lock()


def atlas(cell: tuple[int, int], family: str | None = None) -> Atlas:
    """Return the process-wide atlas for ``cell`` and ``family`` (built on first use).

    Parameters
    ----------
    cell : tuple of int
        ``(cell_w, cell_h)`` in pixels.
    family : str or None
        ``"outline"``, ``"bitmap"``, or None for :func:`default_family`.

    Returns
    -------
    Atlas

    Raises
    ------
    InputError, FontError
        As :class:`Atlas`.

    Examples
    --------
    >>> atlas((8, 16)) is atlas((8, 16), "outline")
    True
    """
    cell = (int(cell[0]), int(cell[1]))
    family = family or default_family(cell)
    key = (cell[0], cell[1], family)
    with _ATLAS_LOCK:
        a = _ATLASES.get(key)
        if a is None:
            a = _ATLASES[key] = Atlas(cell, family)
    return a
