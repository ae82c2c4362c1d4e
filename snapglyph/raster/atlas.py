"""Fonts -> glyph atlas: every glyph pre-rasterised into one ``uint8`` array, with a codepoint table.

An :class:`Atlas` holds, for one cell size and one font family:

``glyphs``  ``(capacity, cell_h, 2 * cell_w)`` uint8 coverage *levels* ``0..LEVELS-1`` (0 = no ink). A narrow glyph
            uses the left ``cell_w`` columns; a wide (East-Asian, 2-cell) glyph uses all ``2 * cell_w``.
``width``   ``(capacity,)`` uint8 number of cells of each glyph (1 or 2).
``table``   ``(0x110000,)`` int32 codepoint -> glyph index; ``-1`` means "not looked up yet".

Glyphs are rasterised with FreeType (freetype-py) on first use of a codepoint, walking the family's fallback chain;
the first font that has the codepoint *with ink* wins (a glyph that a font maps to an empty bitmap does not count,
except for space characters). Codepoints no font covers map to the replacement glyph (a hollow box, narrow or wide),
which the renderer counts; those of them listed in :data:`SYMBOL_LABELS` (emoji and symbols with a well-known meaning,
such as ✅ and ❌) get a glyph index of their own instead, marked in ``label_len``, which the renderer draws as the
short ASCII label (``[ok]``, ``[x]``) and counts as replaced too (:meth:`Atlas.expand_labels`). Anti-aliased
coverage is quantised to ``LEVELS`` levels (4: two bits per pixel), so pages encode as 2-bit grey PNGs.

Atlases are built in memory (a 6x12 atlas of the 400-odd common glyphs takes about 20 ms) and kept per process; there
is no disk cache, so a read-only install behaves exactly like a writable one.

Families (``family=``): ``"outline"`` is DejaVu Sans Mono, anti-aliased at the cell's pixel size; ``"bitmap"`` is
hand-drawn 1-bit fonts at their native size (Spleen 5x8, Terminus 6x12 and 8x16). Both fall back to efont's
biwidth bitmaps (6x12 / 8x16, with CJK and Hangul as 12x12 / 16x16 wide glyphs) and then to DejaVu Sans Mono.
"""

from __future__ import annotations

import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import FontError, InputError

__all__ = [
    "Atlas",
    "CELLS",
    "FAMILIES",
    "FONT_FILES",
    "LEVELS",
    "NEWLINE_MARKER",
    "CONT_MARK",
    "SYMBOL_LABELS",
    "atlas",
    "baseline_row",
    "default_family",
    "fit_offset",
    "font_path",
    "fonts_report",
]

LEVELS = 4
"""Number of ink levels in an atlas glyph (0 = none, LEVELS-1 = full ink)."""

CELLS = {"5x8": (5, 8), "6x12": (6, 12), "8x16": (8, 16)}
"""The named cell sizes ``(cell_w, cell_h)`` in pixels offered for every profile."""

FAMILIES = ("outline", "bitmap")

NEWLINE_MARKER = 0x21B5
CONT_MARK = 0x21AA
"""Codepoint of the continuation mark (RIGHTWARDS ARROW WITH HOOK) of the ``auto`` layout: a block line longer than
its column goes on in the next row after this mark."""
"""Codepoint of the glyph drawn for a source newline in ``dense`` mode (DOWNWARDS ARROW WITH CORNER LEFTWARDS)."""

FONT_FILES = {
    "dejavu": "DejaVuSansMono.ttf",
    "terminus": "TerminusTTF-4.46.0.ttf",
    "spleen5x8": "spleen-5x8.pcf.gz",
    "efont12": "b12.pcf.gz",
    "efont16": "b16.pcf.gz",
}
"""Bundled font files (in ``snapglyph.fonts``; licenses and provenance in its README.md)."""

# Short ASCII labels for symbols that no bundled font draws, so that ✅ (pass) and ❌ (fail) stay distinct instead of
# both becoming the replacement box. Where the list comes from: the emoji that agent transcripts use for status and
# structure, as named in issue 3's defect report, plus the glyph-less emoji in ../shared/data (measured over the
# decoded strings of all its transcripts: ✅ 50, ⚡ 27, 📋 6, ✨ 4, 💥 4, 🍰 2, 💔 2, 😀 2, 🚨 2, 👋 1, 👍 1; faces such
# as 😀 keep the box). Names follow the GitHub/Slack shortcodes where one is short (:zap: :boom: :+1:), else the
# meaning. Labels are ASCII, except one look-alike box-drawing glyph.
# Only characters with no glyph in an atlas get the label there (✔ ✖ ⚠ ☑ ✗ have glyphs in DejaVu Sans Mono and keep
# them; ⌛ has one in efont 16 px). A variation selector after a symbol is zero-width as before.
SYMBOL_LABELS = {
    0x2705: "[ok]", 0x2714: "[ok]", 0x2611: "[ok]", 0x1F197: "[ok]",            # ✅ ✔ ☑ 🆗
    0x274C: "[x]", 0x2716: "[x]", 0x2717: "[x]", 0x274E: "[x]",                 # ❌ ✖ ✗ ❎
    0x26A0: "[!]", 0x2757: "[!]", 0x2755: "[!]", 0x2753: "[?]", 0x2754: "[?]",  # ⚠ ❗ ❕ ❓ ❔
    0x26D4: "[no]", 0x1F6AB: "[no]", 0x1F6D1: "[stop]", 0x1F6A8: "[alert]",     # ⛔ 🚫 🛑 🚨
    0x1F680: "[rocket]", 0x1F525: "[fire]", 0x26A1: "[zap]", 0x1F4A5: "[boom]",  # 🚀 🔥 ⚡ 💥
    0x1F44D: "[+1]", 0x1F44E: "[-1]", 0x1F44B: "[wave]", 0x1F440: "[eyes]",      # 👍 👎 👋 👀
    0x1F4C1: "[dir]", 0x1F4C2: "[dir]", 0x1F4C4: "[doc]", 0x1F4DD: "[doc]",      # 📁 📂 📄 📝
    0x1F4CB: "[list]", 0x1F4CA: "[chart]", 0x1F4C8: "[chart]", 0x1F4E6: "[pkg]",  # 📋 📊 📈 📦
    0x1F41B: "[bug]", 0x1F4A1: "[idea]", 0x1F50D: "[search]", 0x1F50E: "[search]",  # 🐛 💡 🔍 🔎
    0x23F3: "[wait]", 0x231B: "[wait]", 0x23F1: "[timer]", 0x1F504: "[sync]",    # ⏳ ⌛ ⏱ 🔄
    0x1F389: "[party]", 0x2728: "[new]", 0x1F195: "[new]", 0x2B50: "[star]",     # 🎉 ✨ 🆕 ⭐
    0x1F7E2: "[green]", 0x1F534: "[red]", 0x1F7E1: "[yellow]", 0x1F7E0: "[orange]",  # 🟢 🔴 🟡 🟠
    0x1F535: "[blue]", 0x1F3AF: "[target]", 0x1F527: "[fix]", 0x1F6E0: "[tools]",  # 🔵 🎯 🔧 🛠
    0x1F6A7: "[wip]", 0x1F512: "[lock]", 0x1F517: "[link]", 0x1F4CC: "[pin]",    # 🚧 🔒 🔗 📌
    0x1F9EA: "[test]", 0x1F916: "[bot]", 0x1F4AC: "[chat]", 0x1F449: "[->]",     # 🧪 🤖 💬 👉
    0x1F370: "[cake]", 0x1F494: "[heartbreak]", 0x1F4AF: "[100]",                 # 🍰 💔 💯
    0x23BF: "\u2514",  # ⎿ (Claude Code's tool-output connector, 65 times in ../shared/data) as its look-alike └
}
"""Code point -> short ASCII label, drawn (where the atlas has no glyph for it) instead of the replacement box."""

# Glyph indices fixed in every atlas.
BLANK = 0
REPL_NARROW = 1
REPL_WIDE = 2
MARKER = 3
_N_FIXED = 4

_DEJAVU_ADVANCE = 1233 / 2048  # DejaVu Sans Mono advance width in em


def font_path(name: str) -> Path:
    """Return the path of a bundled font file.

    Parameters
    ----------
    name : str
        A key of :data:`FONT_FILES` or a file name in the fonts folder.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FontError
        If the file is not in the installed package nor in the repository's ``fonts/`` folder.
    """
    fname = FONT_FILES.get(name, name)
    candidates = []
    try:
        from importlib.resources import files

        candidates.append(Path(str(files("snapglyph.fonts").joinpath(fname))))
    except Exception:  # noqa: BLE001 - a missing resource package falls back to the repository folder
        pass
    candidates.append(Path(__file__).resolve().parents[2] / "fonts" / fname)
    for p in candidates:
        if p.is_file():
            return p
    raise FontError(f"bundled font {fname!r} not found (looked in {', '.join(map(str, candidates))})")


def default_family(cell: tuple[int, int]) -> str:
    """Return the font family used by default at ``cell``: ``"bitmap"`` below 10 px cell height, else ``"outline"``.

    Anti-aliased outline fonts were read with about half the character errors of 1-bit fonts at 6x12 and up; at
    5x8 an outline font has too few pixels and a hand-drawn bitmap font is the legible choice.
    """
    return "bitmap" if cell[1] < 10 else "outline"


@dataclass(frozen=True)
class _Source:
    """One font of a fallback chain: a file rasterised at one size, placed on a baseline."""

    key: str
    kind: str  # "outline" (anti-aliased) or "bitmap" (1-bit strike)
    px: int  # pixel size (outline) or strike height (bitmap)
    wide_ok: bool  # may provide 2-cell glyphs


def _chain(cell: tuple[int, int], family: str) -> list[_Source]:
    cw, ch = cell
    px = max(6, round(cw / _DEJAVU_ADVANCE))
    dejavu = _Source("dejavu", "outline", px, False)
    efont = []
    if ch >= 16 and cw >= 8:
        efont = [_Source("efont16", "bitmap", 16, True)]
    elif ch >= 12 and cw >= 6:
        efont = [_Source("efont12", "bitmap", 12, True)]
    if family == "outline":
        return [dejavu, *efont]
    first = []
    if ch >= 16 and cw >= 8:
        first = [_Source("terminus", "bitmap", 16, False)]
    elif ch >= 12 and cw >= 6:
        first = [_Source("terminus", "bitmap", 12, False)]
    elif ch >= 8 and cw >= 5:
        first = [_Source("spleen5x8", "bitmap", 8, False)]
    return [*first, *efont, dejavu]


def baseline_row(ascent: int, descent: int, cell_h: int) -> int:
    """Return the cell row of the baseline for a font box of ``ascent`` + ``descent`` pixels in ``cell_h`` rows.

    A box that fits is centred (a spare odd row goes below); a box taller than the cell loses its overflow evenly
    above and below (an odd pixel below), so neither the accents nor the descenders take all of it.

    Parameters
    ----------
    ascent, descent : int
        Pixels above and below the baseline the font draws in (both >= 0).
    cell_h : int
        Cell height in pixels.

    Returns
    -------
    int
        The baseline's row in the cell (0 = top): a glyph whose bitmap reaches ``t`` pixels above the baseline
        starts at row ``baseline - t``.

    Examples
    --------
    >>> baseline_row(12, 4, 16)   # Terminus 8x16: the font box is the cell
    12
    >>> baseline_row(10, 3, 12)   # DejaVu Sans Mono 10 px in 12 rows: one row over, lost below
    10
    >>> baseline_row(7, 1, 12)
    9
    """
    total = ascent + descent
    if total <= cell_h:
        return ascent + (cell_h - total) // 2
    return ascent - (total - cell_h) // 2


def fit_offset(start: int, ink: np.ndarray, size: int) -> int:
    """Return where to put a glyph bitmap along one axis so that none of its ink falls outside the cell.

    The glyph stays at ``start`` (its place by the font's metrics) when its ink fits there; ink that would cross
    an edge moves it the fewest pixels inward (a comma below a letter at a small size, an accent above a capital);
    ink longer than the cell (box-drawing lines made for a taller line) stays where it is and is clipped.

    Parameters
    ----------
    start : int
        Offset in pixels of the bitmap's first row (or column) in the cell box; may be negative.
    ink : numpy.ndarray
        1-D bool, one per bitmap row (or column): whether it holds ink.
    size : int
        Rows (or columns) of the cell box.

    Returns
    -------
    int
        The offset to use.

    Examples
    --------
    >>> import numpy as np
    >>> fit_offset(-1, np.array([False, True, True]), 4)   # blank first row: fits where it is
    -1
    >>> fit_offset(2, np.array([True, True, True]), 4)     # one row over the bottom edge: up by one
    1
    >>> fit_offset(2, np.ones(6, bool), 4)                 # taller than the cell: clipped in place
    2
    """
    rows = np.flatnonzero(ink)
    if len(rows) == 0 or rows[-1] - rows[0] + 1 > size:
        return start
    if start + rows[0] < 0:
        return -int(rows[0])
    if start + rows[-1] >= size:
        return size - 1 - int(rows[-1])
    return start


def _joins_neighbours(cp: int) -> bool:
    """Box-drawing and block elements (U+2500-U+259F) are drawn to the font's line box to join the next cell's;
    where that box is taller than the cell they are clipped at their place, never moved."""
    return 0x2500 <= cp < 0x25A0


def _is_wide(cp: int) -> bool:
    return unicodedata.east_asian_width(chr(cp)) in "WF"


class _Face:
    """A FreeType face set to one size, with its baseline inside the cell."""

    def __init__(self, src: _Source, cell: tuple[int, int]) -> None:
        import freetype

        self.src = src
        path = font_path(src.key)
        try:
            self.face = freetype.Face(str(path))
        except Exception as exc:  # noqa: BLE001 - FreeType raises its own error type
            raise FontError(f"cannot read font {path}: {exc}") from exc
        f = self.face
        if src.kind == "bitmap":
            sizes = [s.height for s in f.available_sizes]
            if src.px not in sizes:
                raise FontError(f"font {path.name} has no {src.px} px strike (has {sizes})")
            f.select_size(sizes.index(src.px))
            self.flags = freetype.FT_LOAD_RENDER | freetype.FT_LOAD_TARGET_MONO
        else:
            f.set_pixel_sizes(0, src.px)
            self.flags = freetype.FT_LOAD_RENDER | freetype.FT_LOAD_TARGET_NORMAL
        if src.kind == "bitmap":
            asc, desc = self._strike_box()
        else:
            asc, desc = round(f.size.ascender / 64.0), round(-f.size.descender / 64.0)
        self.ascent, self.descent = asc, desc
        self.baseline = baseline_row(asc, desc, cell[1])

    def _strike_box(self) -> tuple[int, int]:
        """(ascent, descent) in pixels of a bitmap strike: the box its printable ASCII glyphs are drawn in.

        A bitmap font draws every glyph inside one fixed box (Terminus 8x16: 12 rows above the baseline, 4 below).
        The size metrics FreeType reports for an embedded strike of an outline font (TerminusTTF) are scaled from
        the outlines instead (14 and 3 at 16 px) and put the glyphs 2 px low, so the box is read from the glyphs.
        """
        f = self.face
        asc = desc = 0
        for cp in range(0x21, 0x7F):
            if f.get_char_index(cp):
                f.load_char(chr(cp), self.flags)
                asc = max(asc, f.glyph.bitmap_top)
                desc = max(desc, f.glyph.bitmap.rows - f.glyph.bitmap_top)
        if asc + desc == 0:  # no ASCII: fall back to the size metrics
            return round(f.size.ascender / 64.0), round(-f.size.descender / 64.0)
        return asc, desc

    def render(self, cp: int, cells: int, cell: tuple[int, int]) -> np.ndarray | None:
        """Rasterise ``cp`` into a ``(cell_h, 2*cell_w)`` level array; None where the font lacks it or has no ink."""
        f = self.face
        if f.get_char_index(cp) == 0:
            return None
        f.load_char(chr(cp), self.flags)
        g = f.glyph
        bm = g.bitmap
        rows, width, pitch = bm.rows, bm.width, bm.pitch
        out = np.zeros((cell[1], 2 * cell[0]), np.uint8)
        if rows == 0 or width == 0:
            return out if unicodedata.category(chr(cp)) == "Zs" else None
        buf = np.frombuffer(bytes(bm.buffer), np.uint8)
        if bm.pixel_mode == 1:  # MONO: 1 bit per pixel, MSB first
            bits = np.unpackbits(buf.reshape(rows, abs(pitch)), axis=1)[:, :width]
            lv = bits * (LEVELS - 1)
        else:
            gray = buf.reshape(rows, abs(pitch))[:, :width].astype(np.int32)
            lv = ((gray * (LEVELS - 1) + 127) // 255).astype(np.uint8)
        if not lv.any():
            return None
        adv = g.advance.x / 64.0
        box_w = cells * cell[0]
        x0 = g.bitmap_left + int(round((box_w - adv) / 2.0)) if adv else (box_w - width) // 2
        y0 = self.baseline - g.bitmap_top
        if not _joins_neighbours(cp):
            y0 = fit_offset(y0, lv.any(axis=1), cell[1])
            x0 = fit_offset(x0, lv.any(axis=0), box_w)
        # Clip into the cell box.
        sy0, sx0 = max(0, -y0), max(0, -x0)
        dy0, dx0 = max(0, y0), max(0, x0)
        h = min(rows - sy0, cell[1] - dy0)
        w = min(width - sx0, box_w - dx0)
        if h <= 0 or w <= 0:
            return None
        out[dy0:dy0 + h, dx0:dx0 + w] = lv[sy0:sy0 + h, sx0:sx0 + w]
        if not out.any():
            return None
        return out


def _dot_zero(img: np.ndarray) -> None:
    """Put a dot in the middle of an anti-aliased zero so it cannot be read as O (modifies ``img`` in place)."""
    ys, xs = np.nonzero(img >= 2)
    if len(ys) == 0:
        return
    cy = (int(ys.min()) + int(ys.max()) + 1) // 2
    cx = (int(xs.min()) + int(xs.max())) // 2
    h = 2 if img.shape[0] >= 12 else 1
    img[cy - h // 2:cy - h // 2 + h, cx] = LEVELS - 1


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
    """

    def __init__(self, cell: tuple[int, int], family: str = "outline") -> None:
        cw, ch = int(cell[0]), int(cell[1])
        if not (4 <= cw <= 64 and 4 <= ch <= 64):
            raise InputError(f"cell {cell!r} out of range: width and height must be 4..64 pixels")
        if family not in FAMILIES:
            raise InputError(f"unknown font family {family!r}; known: {', '.join(FAMILIES)}")
        self.cell_w, self.cell_h, self.family = cw, ch, family
        self._chain = [_Face(s, (cw, ch)) for s in _chain((cw, ch), family)]
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
                    _dot_zero(img)
                return img, face.src.key
        return None

    def ensure(self, cps) -> None:
        """Look up (and rasterise where needed) every codepoint in ``cps``; modifies ``table``/``glyphs`` in place.

        Parameters
        ----------
        cps : iterable of int
            Codepoints ``0..0x10FFFF``; surrogates and unassigned codepoints map to the replacement glyph.
        """
        with self._lock:
            for cp in cps:
                cp = int(cp)
                if self.table[cp] >= 0:
                    continue
                wide = _is_wide(cp)
                cells = 2 if wide else 1
                got = None
                if not (0xD800 <= cp < 0xE000) and cp != 0xFFFD:
                    got = self._raster(cp, cells)
                label = SYMBOL_LABELS.get(cp) if got is None else None
                if got is None and label is None:
                    self.table[cp] = REPL_WIDE if wide else REPL_NARROW
                    continue
                if self.n == len(self.glyphs):
                    self.glyphs = np.concatenate([self.glyphs, np.zeros_like(self.glyphs)])
                    self.width = np.concatenate([self.width, np.ones_like(self.width)])
                    self.label_len = np.concatenate([self.label_len, np.zeros_like(self.label_len)])
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
            self._chars = out
            return out

    def lookup(self, cps: np.ndarray) -> np.ndarray:
        """Map codepoints to glyph indices, rasterising unseen ones.

        Parameters
        ----------
        cps : numpy.ndarray
            1-D array of codepoints (any unsigned or signed integer dtype, values ``0..0x10FFFF``).

        Returns
        -------
        numpy.ndarray
            int32 glyph indices, same length.
        """
        idx = self.table[cps]
        if (idx < 0).any():
            self.ensure(np.unique(cps[idx < 0]).tolist())
            idx = self.table[cps]
        return idx

    def coverage(self, cps) -> int:
        """Return how many codepoints of ``cps`` have a real (inked) glyph in this atlas."""
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
    """
    cell = (int(cell[0]), int(cell[1]))
    family = family or default_family(cell)
    key = (cell[0], cell[1], family)
    with _ATLAS_LOCK:
        a = _ATLASES.get(key)
        if a is None:
            a = _ATLASES[key] = Atlas(cell, family)
    return a


_COVERAGE_SETS = {
    "ASCII": range(0x21, 0x7F),
    "Latin-1 + Latin Extended-A": [c for c in range(0xA1, 0x180) if unicodedata.category(chr(c))[0] in "LNPS"],
    "Greek": [c for c in range(0x391, 0x3CA) if unicodedata.category(chr(c)).startswith("L")],
    "Cyrillic": range(0x410, 0x450),
    "Arrows": range(0x2190, 0x2200),
    "Box drawing": range(0x2500, 0x2580),
    "Block elements": range(0x2580, 0x25A0),
    "Braille": range(0x2800, 0x2900),
    "CJK (first 1000 ideographs)": range(0x4E00, 0x4E00 + 1000),
    "Hangul (first 1000 syllables)": range(0xAC00, 0xAC00 + 1000),
    "Hiragana + Katakana": [c for c in range(0x3041, 0x3100) if unicodedata.category(chr(c)).startswith("L")],
}


def fonts_report() -> str:
    """Return the text ``snapglyph fonts`` prints: bundled fonts, cell sizes, families, coverage per script.

    Returns
    -------
    str
        Several lines; coverage counts only glyphs with ink.

    Raises
    ------
    FontError
        If a bundled font is missing.
    """
    lines = ["Bundled fonts (licenses and provenance: fonts/README.md):"]
    for key, fname in FONT_FILES.items():
        lines.append(f"  {key:<10} {fname:<26} {font_path(key).stat().st_size / 1024:8.1f} KB")
    for name, cell in CELLS.items():
        for fam in FAMILIES:
            a = atlas(cell, fam)
            default = " (default)" if fam == default_family(cell) else ""
            lines.append(f"cell {name} family {fam}{default}: chain {' -> '.join(a.sources)}; "
                         f"wide glyphs: {'yes' if a.wide_ok else 'no (text with CJK switches to 6x12)'}")
            cov = []
            for label, cps in _COVERAGE_SETS.items():
                cps = list(cps)
                cov.append(f"{label} {a.coverage(cps)}/{len(cps)}")
            lines.append("    " + "; ".join(cov))
    return "\n".join(lines)
