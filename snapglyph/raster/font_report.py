"""The font report that ``snapglyph fonts`` prints: bundled fonts, cell sizes, families, coverage per script.

The script lists below use the running Python's ``unicodedata`` to pick letters: they only count coverage for the
report and never reach a page.
"""

from __future__ import annotations

import unicodedata

from .atlas import CELLS, atlas
from .fonts import FAMILIES, FONT_FILES, default_family, font_path

__all__ = ["fonts_report"]

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

    Examples
    --------
    >>> fonts_report().splitlines()[6]
    'cell 5x8 family outline: chain dejavu@8px; wide glyphs: no (text with CJK switches to 6x12)'
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
