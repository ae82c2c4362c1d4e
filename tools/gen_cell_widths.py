"""Generate ``snapglyph/raster/_cell_widths.py``: the render path's character properties for one Unicode version.

The renderer's output must not depend on the Python that runs it, but ``unicodedata`` follows the interpreter
(Python 3.10: Unicode 13.0.0, 3.11: 14.0.0, 3.12: 15.0.0, 3.13: 15.1.0), so cell widths read from it at run time
gave other PNG bytes for the same text on another Python. This script reads them once, from a Python with the
pinned version, into range tables that :mod:`snapglyph.raster.widths` looks up (as rich's
``tools/make_width_tables.py`` writes ``rich/_cell_widths.py``).

Usage (from the repository root, with Python 3.11, whose ``unicodedata`` is Unicode 14.0.0)::

    python tools/gen_cell_widths.py            # rewrite snapglyph/raster/_cell_widths.py
    python tools/gen_cell_widths.py --check    # exit 1 if the committed module is not what this run writes
    python tools/gen_cell_widths.py --repin    # accept another Unicode version than the committed one

Moving to another Unicode version (``--repin``) changes the PNG bytes of text holding the characters that changed;
do it on purpose, with the baseline of rendered pages compared before and after.

The rules (each table holds sorted, disjoint, inclusive ``(first, last)`` code point ranges):

``ZERO_WIDTH``
    Code points from :data:`ZERO_WIDTH_FROM` (U+0300) up that take no cell and are dropped from the text: general
    categories Mn, Me (combining marks) and Cf (format characters: ZWJ, ZWNJ, bidi marks), plus
    :data:`ZERO_WIDTH_EXTRA`. Every code point below U+0300 takes one cell (the render path never looks them up,
    so the soft hyphen U+00AD, category Cf, keeps its cell).
``WIDE``
    East Asian Width W (wide) or F (fullwidth): two cells. UAX #11, https://www.unicode.org/reports/tr11/ (read
    2026-12-01), as the pinned ``unicodedata.east_asian_width`` reports it. CPython up to 3.11 reports F for every
    unassigned code point (https://github.com/python/cpython/issues/96172, fixed in 3.12, where they are N or, in
    the CJK planes, W), so these tables give unassigned code points two cells, as the renderer always did on 3.11.
``SPACE_SEPARATORS``
    General category Zs: a font may draw them without ink and still cover them.
``UNASSIGNED``
    General category Cn: code points the pinned version does not assign, which NFC leaves as they are
    (:func:`snapglyph.raster.widths.nfc`).

General categories: UAX #44, https://www.unicode.org/reports/tr44/#General_Category_Values (read 2026-12-01).
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "snapglyph" / "raster" / "_cell_widths.py"

ZERO_WIDTH_FROM = 0x300
"""First code point the zero-width rule applies to; every code point below takes one cell."""

ZERO_WIDTH_CATEGORIES = ("Mn", "Me", "Cf")

ZERO_WIDTH_EXTRA = (
    (0xFE00, 0xFE0F),    # variation selectors (Mn already; kept for the reader)
    (0xE0100, 0xE01EF),  # variation selectors supplement (Mn already)
    (0x1F3FB, 0x1F3FF),  # emoji skin-tone modifiers (Sk): they color the previous emoji
    (0x1160, 0x11FF),    # Hangul medial vowels and final consonants (Lo): they join the previous syllable
)


def zero_width(cp: int) -> bool:
    """Whether code point ``cp`` takes no cell (the ``ZERO_WIDTH`` rule, by this Python's ``unicodedata``)."""
    if cp < ZERO_WIDTH_FROM:
        return False
    if unicodedata.category(chr(cp)) in ZERO_WIDTH_CATEGORIES:
        return True
    return any(a <= cp <= b for a, b in ZERO_WIDTH_EXTRA)


def wide(cp: int) -> bool:
    """Whether code point ``cp`` is East Asian wide or fullwidth (the ``WIDE`` rule)."""
    return unicodedata.east_asian_width(chr(cp)) in ("W", "F")


def space_separator(cp: int) -> bool:
    """Whether code point ``cp`` is a space separator, category Zs (the ``SPACE_SEPARATORS`` rule)."""
    return unicodedata.category(chr(cp)) == "Zs"


def unassigned(cp: int) -> bool:
    """Whether code point ``cp`` is unassigned, category Cn (the ``UNASSIGNED`` rule)."""
    return unicodedata.category(chr(cp)) == "Cn"


RULES = {
    "ZERO_WIDTH": (zero_width, "combining marks (Mn, Me), format characters (Cf) and ZERO_WIDTH_EXTRA, from U+0300"),
    "WIDE": (wide, "East Asian Width W or F: two cells"),
    "SPACE_SEPARATORS": (space_separator, "general category Zs"),
    "UNASSIGNED": (unassigned, "general category Cn"),
}


def ranges(pred) -> list[tuple[int, int]]:
    """Return the sorted inclusive ``(first, last)`` ranges of the code points ``0..0x10FFFF`` where ``pred`` holds."""
    out: list[tuple[int, int]] = []
    start = None
    for cp in range(0x110000):
        if pred(cp):
            if start is None:
                start = cp
        elif start is not None:
            out.append((start, cp - 1))
            start = None
    if start is not None:
        out.append((start, 0x10FFFF))
    return out


def _table(name: str, doc: str, rows: list[tuple[int, int]]) -> list[str]:
    lines = [f"# {doc}: {len(rows)} ranges", f"{name}: tuple[tuple[int, int], ...] = ("]
    cells = [f"(0x{a:05X}, 0x{b:05X})," for a, b in rows]
    for i in range(0, len(cells), 5):
        lines.append("    " + " ".join(cells[i:i + 5]))
    lines.append(")")
    return lines


def render_module(version: str) -> str:
    """Return the text of the table module for this Python's ``unicodedata`` (which must be ``version``)."""
    head = [
        f'"""Character property tables for Unicode {version}, generated by tools/gen_cell_widths.py: do not edit.',
        "",
        "Sorted, disjoint, inclusive ``(first, last)`` code point ranges; the rules and how to regenerate are in",
        "tools/gen_cell_widths.py; the lookups in :mod:`snapglyph.raster.widths`.",
        '"""',
        "",
        f'UNICODE_VERSION = "{version}"',
        f"ZERO_WIDTH_FROM = 0x{ZERO_WIDTH_FROM:04X}",
        "",
    ]
    body: list[str] = []
    for name, (pred, doc) in RULES.items():
        body += _table(name, doc, ranges(pred)) + [""]
    return "\n".join(head + body[:-1]) + "\n"


def committed_version(path: Path = TARGET) -> str | None:
    """Return the Unicode version of the committed table module, or None if there is none."""
    if not path.is_file():
        return None
    m = re.search(r'^UNICODE_VERSION = "([^"]+)"$', path.read_text(encoding="utf-8"), re.MULTILINE)
    return m.group(1) if m else None


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the table module; return the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed module, write nothing")
    ap.add_argument("--repin", action="store_true", help="accept a Unicode version other than the committed one")
    args = ap.parse_args(argv)
    version = unicodedata.unidata_version
    pinned = committed_version()
    if pinned and pinned != version and not args.repin:
        print(f"this Python has Unicode {version}, the tables are pinned to {pinned}: run with the Python of that "
              f"version, or pass --repin to move the pin", file=sys.stderr)
        return 2
    text = render_module(version)
    if args.check:
        same = TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET}: {'up to date' if same else 'differs from what this run writes'}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} (Unicode {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
