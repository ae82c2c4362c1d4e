"""Fonts -> glyph bitmaps: the bundled font files, the fallback chain of each family, and FreeType rasterization.

Families (``family=``): ``"outline"`` is DejaVu Sans Mono, anti-aliased at the cell's pixel size; ``"bitmap"`` is
hand-drawn 1-bit fonts at their native size (Spleen 5x8, Terminus 6x12 and 8x16). Both fall back to efont's
biwidth bitmaps (6x12 / 8x16, with CJK and Hangul as 12x12 / 16x16 wide glyphs) and then to DejaVu Sans Mono.

A :class:`Face` renders one code point into a ``(cell_h, 2 * cell_w)`` uint8 array of coverage *levels*
``0..LEVELS-1`` (0 = no ink), placed on the font's baseline in the cell (:func:`baseline_row`) and moved inward
where its ink would cross an edge (:func:`fit_offset`). Anti-aliased coverage is quantised to ``LEVELS`` levels
(4: two bits per pixel), so pages encode as 2-bit grey PNGs. :mod:`.atlas` collects these bitmaps into the atlas.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import FontError
from .widths import is_space_separator

__all__ = ["FAMILIES", "FONT_FILES", "LEVELS", "Face", "FontSource", "baseline_row", "default_family", "dot_zero",
           "fit_offset", "font_chain", "font_path"]

LEVELS = 4
"""Number of ink levels in an atlas glyph (0 = none, LEVELS-1 = full ink)."""

FAMILIES = ("outline", "bitmap")
"""The font families: anti-aliased outlines, or hand-drawn bitmaps at their native size."""

_DEJAVU_ADVANCE = 1233 / 2048  # DejaVu Sans Mono advance width in em

FONT_FILES = {
    "dejavu": "DejaVuSansMono.ttf",
    "terminus": "TerminusTTF-4.46.0.ttf",
    "spleen5x8": "spleen-5x8.pcf.gz",
    "efont12": "b12.pcf.gz",
    "efont16": "b16.pcf.gz",
}
"""Bundled font files (in ``snapglyph.fonts``; licenses and provenance in its README.md)."""


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

    Examples
    --------
    >>> font_path("dejavu").name
    'DejaVuSansMono.ttf'
    """
    fname = FONT_FILES.get(name, name)
    candidates = []
    with contextlib.suppress(Exception):  # a missing resource package falls back to the repository folder
        from importlib.resources import files

        candidates.append(Path(str(files("snapglyph.fonts").joinpath(fname))))
    candidates.append(Path(__file__).resolve().parents[2] / "fonts" / fname)
    for p in candidates:
        if p.is_file():
            return p
    raise FontError(f"bundled font {fname!r} not found (looked in {', '.join(map(str, candidates))})")


def default_family(cell: tuple[int, int]) -> str:
    """Return the font family used by default at ``cell``: ``"bitmap"`` below 10 px cell height, else ``"outline"``.

    Anti-aliased outline fonts were read with about half the character errors of 1-bit fonts at 6x12 and up; at
    5x8 an outline font has too few pixels and a hand-drawn bitmap font is the legible choice.

    Parameters
    ----------
    cell : tuple of int
        ``(cell_w, cell_h)`` in pixels.

    Returns
    -------
    str
        A name of :data:`FAMILIES`.

    Examples
    --------
    >>> default_family((5, 8)), default_family((6, 12))
    ('bitmap', 'outline')
    """
    return "bitmap" if cell[1] < 10 else "outline"


@dataclass(frozen=True)
class FontSource:
    """One font of a fallback chain: a file rasterized at one size, placed on a baseline.

    Attributes
    ----------
    key : str
        A key of :data:`FONT_FILES`.
    kind : str
        ``"outline"`` (anti-aliased) or ``"bitmap"`` (a 1-bit strike).
    px : int
        Pixel size (outline) or strike height (bitmap), in pixels.
    wide_ok : bool
        Whether the font may provide 2-cell (CJK) glyphs.

    Examples
    --------
    >>> FontSource("efont12", "bitmap", 12, True).wide_ok
    True
    """

    key: str
    kind: str  # "outline" (anti-aliased) or "bitmap" (1-bit strike)
    px: int  # pixel size (outline) or strike height (bitmap)
    wide_ok: bool  # may provide 2-cell glyphs


def font_chain(cell: tuple[int, int], family: str) -> list[FontSource]:
    """Return the fallback chain of ``family`` at ``cell``: the fonts tried in order for each code point.

    DejaVu Sans Mono is sized so that its advance fills the cell width (at least 6 px); efont's wide bitmaps join
    where the cell holds their strike (12 or 16 px); the bitmap family starts with Terminus or Spleen.

    Parameters
    ----------
    cell : tuple of int
        ``(cell_w, cell_h)`` in pixels.
    family : str
        ``"outline"`` or ``"bitmap"``.

    Returns
    -------
    list of FontSource

    Examples
    --------
    >>> [f"{s.key}@{s.px}" for s in font_chain((6, 12), "bitmap")]
    ['terminus@12', 'efont12@12', 'dejavu@10']
    """
    cw, ch = cell
    px = max(6, round(cw / _DEJAVU_ADVANCE))
    dejavu = FontSource("dejavu", "outline", px, False)
    efont = []
    if ch >= 16 and cw >= 8:
        efont = [FontSource("efont16", "bitmap", 16, True)]
    elif ch >= 12 and cw >= 6:
        efont = [FontSource("efont12", "bitmap", 12, True)]
    if family == "outline":
        return [dejavu, *efont]
    first = []
    if ch >= 16 and cw >= 8:
        first = [FontSource("terminus", "bitmap", 16, False)]
    elif ch >= 12 and cw >= 6:
        first = [FontSource("terminus", "bitmap", 12, False)]
    elif ch >= 8 and cw >= 5:
        first = [FontSource("spleen5x8", "bitmap", 8, False)]
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


class Face:
    """A FreeType face set to one size, with its baseline inside the cell.

    Parameters
    ----------
    src : FontSource
        The font, its kind and size.
    cell : tuple of int
        ``(cell_w, cell_h)`` in pixels.

    Attributes
    ----------
    ascent, descent : int
        Pixels the font draws above and below its baseline.
    baseline : int
        Row of the baseline in the cell (:func:`baseline_row`).

    Raises
    ------
    FontError
        If the font file is missing or unreadable, or a bitmap font lacks the strike.

    Examples
    --------
    >>> face = Face(FontSource("terminus", "bitmap", 16, False), (8, 16))
    >>> face.ascent, face.descent, face.baseline
    (12, 4, 12)
    >>> int(face.render(ord("A"), 1, (8, 16)).max()) == LEVELS - 1
    True
    """

    def __init__(self, src: FontSource, cell: tuple[int, int]) -> None:
        import freetype

        self.src = src
        path = font_path(src.key)
        try:
            self.face = freetype.Face(str(path))
        except Exception as exc:  # FreeType raises its own error type
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
        """Rasterize ``cp`` into a ``(cell_h, 2*cell_w)`` level array; None where the font lacks it or has no ink."""
        f = self.face
        if f.get_char_index(cp) == 0:
            return None
        f.load_char(chr(cp), self.flags)
        g = f.glyph
        bm = g.bitmap
        rows, width, pitch = bm.rows, bm.width, bm.pitch
        out = np.zeros((cell[1], 2 * cell[0]), np.uint8)
        if rows == 0 or width == 0:
            return out if is_space_separator(cp) else None
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
        x0 = g.bitmap_left + round((box_w - adv) / 2.0) if adv else (box_w - width) // 2
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


def dot_zero(img: np.ndarray) -> None:
    """Put a dot in the middle of an anti-aliased zero so it cannot be read as O (modifies ``img`` in place).

    Parameters
    ----------
    img : numpy.ndarray
        ``(cell_h, 2 * cell_w)`` uint8 levels of the zero glyph; pixels of level >= 2 are its ink.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.zeros((12, 12), np.uint8)
    >>> img[2:10, 1:5] = 3
    >>> img[3:9, 2:4] = 0                    # a hollow 4x8 ring
    >>> dot_zero(img)
    >>> img[:, 2].tolist()
    [0, 0, 3, 0, 0, 3, 3, 0, 0, 3, 0, 0]
    """
    ys, xs = np.nonzero(img >= 2)
    if len(ys) == 0:
        return
    cy = (int(ys.min()) + int(ys.max()) + 1) // 2
    cx = (int(xs.min()) + int(xs.max())) // 2
    h = 2 if img.shape[0] >= 12 else 1
    img[cy - h // 2:cy - h // 2 + h, cx] = LEVELS - 1
