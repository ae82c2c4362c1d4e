"""Block detection for the ``auto`` layout: which source lines of a segment keep their shape (one line per row).

A segment's text is split into lines (after the newline rules of :func:`snapglyph.raster.text.normalize`: CRLF,
U+2028 and U+2029 are newlines). Each line is classified, by its own text alone:

``C`` code-like  indented (2+ spaces or a tab), a fence (```` ``` ```` or ``~~~``), a diff line (``@@``, ``+++``,
                 ``---``, ``diff --git``, ``index``), a table row (``| a | b |``), a log line (a date or time stamp,
                 a level word), a listing line (``12: ...``, ``path:12:``, ``drwxr-xr-x``, a shell prompt), or a
                 line that reads as code (ends with ``{ } ; ( [ ,``, starts with a keyword or a closing bracket;
                 in tool output and calls also a line holding ``=>``, ``->``, ``::``, ``==``, ``!=``, ``&&``,
                 ``||``). In conversation text a markdown list item (``- x``, ``1. x``) is never code-like.
``P`` prose      80+ characters and 10+ words, mostly letters and spaces.
``B`` blank      nothing but spaces.
``N`` neutral    anything else (a short line: a heading, a list item, a file name).

Inside a fence every line is ``C``. In tool output and tool calls (``STYLE_DIM``, ``STYLE_CALL``) a neutral line
counts as code-like (a listing of names keeps one name per row). A block is a maximal run of ``C``, ``B`` and
(only between two ``C`` lines of the run) ``N`` lines that starts and ends with a ``C`` line and holds at least
:data:`MIN_BLOCK_LINES` lines. Everything else is prose, laid out dense.

The column count of a block (:func:`choose_columns`) follows from its line widths: the lowest band, with columns of
at least :data:`MIN_COLW` cells that wrap at most :data:`MAX_WRAP_SHARE` of the lines.

The letters, widths and columns come from compiled kernels (:mod:`snapglyph.raster._line_kernels`, called through
:func:`snapglyph.raster.native.kernels`), the rule's one implementation here; its constants are in
:mod:`snapglyph.raster._line_rule`. The rule written the plain way, one regex search a line, is the tests'
reference (tests/reference_blocks.py), which the kernels are held equal to on every line of ../shared/data.

Deterministic: the same text and page width give the same blocks and columns. Nothing here reads pixels.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from . import native
from ._codes import INDENT_TAB_STOP, TAB_STOP
from ._codes import KMAX as _KMAX
from ._line_rule import (CLASS_DIGIT, CLASS_SPACE, CLASS_WORD, CODE_END, CODE_KEYWORDS, F_DIFF_LINE, F_ENDS_CODE,
                         F_PROSE, F_TOKENS, KIND_BITS, LOG_LEVELS)

__all__ = ["CLASS_DIGIT", "CLASS_SPACE", "CLASS_WORD", "CODE_END", "CODE_KEYWORDS", "F_DIFF_LINE", "F_ENDS_CODE",
           "F_PROSE", "F_TOKENS", "KIND_BITS", "LOG_LEVELS", "MAX_WRAP_SHARE", "MIN_BLOCK_LINES", "MIN_COLW",
           "MIN_ROWS_PER_COLUMN", "char_classes", "choose_columns", "classify_lines", "find_blocks", "line_kinds",
           "plan_blocks", "plan_with_newlines", "split_lines"]

MIN_BLOCK_LINES = 2
"""A run of code-like lines shorter than this stays prose. 3 would add 0.4 points to the figures of
:data:`MAX_WRAP_SHARE` but draw a two-line tool-call argument or code snippet dense, its lines run together."""
MIN_COLW = 28
"""Fewest cells per column of a block band with more than one column: 28 allows six columns of 29 cells on a
182-cell row (Claude's page at 6x12), 32 only five of 35. Measured with :data:`MAX_WRAP_SHARE` (see there): +1.4
points of ``auto``'s share of ``dense``'s characters per image token over 32. Any value from 8 up lays out (a test
holds 8 to 28 pixel-equal to the reference renderer); below 3 a wide character could not follow a continuation
mark."""
MIN_ROWS_PER_COLUMN = 3
"""A block of n lines gets at most ``n // MIN_ROWS_PER_COLUMN`` columns (two lines side by side read as a table)."""
MAX_WRAP_SHARE = 0.7
"""Most of a block's non-blank lines that may wrap in a band of more than one column. Measured on ../shared/data
(``python bench/auto_density.py``, profile claude, 2026-12-01, indentation tabs of 4 cells; ``auto``'s characters
per image token as a share of ``dense``'s, block lines wrapped): 0.5 with 32-cell columns 67.5%, 28%; 0.6 68.5%
(28 cells: 69.5%); 0.7 69.6% (28 cells: 71.0%, 40%: the setting); 0.1 with 28 cells 51.7%, 3%."""

_STYLE_HEADER = 2
_LISTING_STYLES = (1, 3)  # STYLE_DIM (tool output), STYLE_CALL (tool calls)


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines the way the renderer counts them: at ``\\n``, CRLF, U+2028 and U+2029.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
        ``text.count("\\n") + 1`` lines (after the newline rules); the last is empty when the text ends with a
        newline.

    Examples
    --------
    >>> split_lines("a\\r\\nb\\u2028c\\n")
    ['a', 'b', 'c', '']
    """
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\n").replace("\u2029", "\n")
    return text.split("\n")


def classify_lines(lines: list[str], style: int = 0) -> str:
    """Classify each line as ``C`` (code-like), ``P`` (prose), ``B`` (blank) or ``N`` (neutral); see the module.

    Parameters
    ----------
    lines : list of str
        Lines of one segment (:func:`split_lines`).
    style : int
        The segment's style (:mod:`snapglyph.model.document`): in tool output and tool calls a neutral line
        counts as code-like.

    Returns
    -------
    str
        One letter per line.

    Examples
    --------
    >>> classify_lines(["Here is the fix:", "```py", "x = 1", "```", "", "It works now."])
    'NCCCBN'
    >>> classify_lines(["README.md", "setup.py"], style=1)
    'CC'
    """
    return line_kinds(lines, style)[0]


@functools.lru_cache(maxsize=1)
def char_classes() -> np.ndarray:
    """The class of each code point of the Basic Multilingual Plane under Python's own ``\\s``, ``\\w`` and ``\\d``
    (the running Python's Unicode tables, as the rule's patterns use them), for
    :func:`snapglyph.raster._line_kernels.line_kinds`.

    For a ``str`` pattern, ``\\s`` is a character for which ``str.isspace()`` holds, ``\\w`` one for which
    ``str.isalnum()`` holds or the underscore, ``\\d`` one for which ``str.isdecimal()`` holds (category Nd)
    (https://docs.python.org/3/library/re.html, read 2026-12-03); numpy's ``char`` predicates apply those methods'
    tables to the whole plane at once (6 ms, against 30 ms for the patterns' own matches over the plane; the two
    tested equal on every code point).

    Returns
    -------
    numpy.ndarray
        uint8 ``(0x10000,)``: bits ``CLASS_SPACE`` (1), ``CLASS_WORD`` (2), ``CLASS_DIGIT`` (4). Made once a
        process.

    Examples
    --------
    >>> cls = char_classes()
    >>> [int(cls[ord(c)]) for c in " a7\u3000\u0661-_"]
    [1, 2, 6, 1, 6, 0, 2]
    """
    plane = np.arange(0x10000, dtype=np.uint32).view("<U1")  # each code point as a one-character string
    word = np.char.isalnum(plane) | (plane == "_")
    return (np.char.isspace(plane) * np.uint8(CLASS_SPACE) | word * np.uint8(CLASS_WORD)
            | np.char.isdecimal(plane) * np.uint8(CLASS_DIGIT)).astype(np.uint8)


@functools.lru_cache(maxsize=1)
def _stand_ins() -> np.ndarray:
    """For each class value (``CLASS_`` bits, 0-7), a code point of the plane with that class that no part of the
    rule names by itself (above U+00FF, not U+2192), or 0 where the plane has none: what a code point above U+FFFF
    of that class is read as (the rule looks at such a character only through its class)."""
    cls = char_classes()
    out = np.zeros(8, np.uint32)
    for v in range(8):
        found = np.flatnonzero(cls[0x100:] == v) + 0x100
        found = found[found != 0x2192]
        out[v] = found[0] if len(found) else 0
    return out


def _in_plane(cps: np.ndarray) -> np.ndarray:
    """``cps`` with each code point above U+FFFF replaced by its class's stand-in (:func:`_stand_ins`); a new array.

    Raises
    ------
    InternalError
        A class of such a code point that no character of the plane has (none in Unicode 15).
    """
    cps = cps.copy()
    astral = cps > 0xFFFF
    found = np.unique(cps[astral])
    classes = np.array([(chr(c).isspace() * CLASS_SPACE) | ((chr(c).isalnum() or c == 0x5F) * CLASS_WORD)
                        | (chr(c).isdecimal() * CLASS_DIGIT) for c in found.tolist()], np.uint32)
    stand = _stand_ins()[classes]
    if not stand.all():
        from ..errors import InternalError
        raise InternalError(f"no character of the plane has the class of U+{int(found[stand == 0][0]):X}")
    cps[astral] = stand[np.searchsorted(found, cps[astral])]
    return cps


def line_kinds(lines: list[str], style: int = 0) -> tuple[str, np.ndarray]:
    """:func:`classify_lines` of ``lines``, and each line's width, by the compiled
    :func:`snapglyph.raster._line_kernels.line_kinds` (through :func:`snapglyph.raster.native.kernels`).

    The widths are ``len(expand_tabs(line).rstrip())`` (:func:`snapglyph.raster._codes.expand_tabs`); both are
    tested equal to the reference's on every line of ../shared/data and on generated lines.

    Returns
    -------
    kinds : str
        One letter per line.
    widths : numpy.ndarray
        int32 ``(len(lines),)``.

    Examples
    --------
    >>> kinds, widths = line_kinds(["Here is the fix:", "```py", "\\tx = 1", "```", "", "It works now, naïvely."])
    >>> kinds, widths.tolist()
    ('NCCCBN', [16, 5, 9, 3, 0, 22])
    """
    joined = "\n".join(lines)
    cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
    return _line_kinds(joined, cps, len(lines), style)


def _line_kinds(text: str, cps: np.ndarray, n: int, style: int) -> tuple[str, np.ndarray]:
    """:func:`line_kinds` of the ``n`` lines of ``text`` (newlines between them), whose code points are ``cps``."""
    if not text.isascii() and cps.max() > 0xFFFF:  # beyond the class table: a stand-in of the same class
        cps = _in_plane(cps)
    out = np.empty(n, np.uint8)
    widths = np.empty(n, np.int32)
    native.kernels().line_kinds(cps, style in _LISTING_STYLES, char_classes(), TAB_STOP, INDENT_TAB_STOP, out,
                                widths)
    return out.tobytes().decode("ascii"), widths


def _may_have_blocks(text: str, style: int) -> bool:
    """A header has no blocks, nor has a text of one line."""
    return style != _STYLE_HEADER and ("\n" in text or "\u2028" in text or "\u2029" in text)


def find_blocks(text: str, style: int = 0, lines: list[str] | None = None) -> list[tuple[int, int]]:
    """Return the blocks of a segment: line ranges ``[a, b)`` that keep one source line per row.

    Parameters
    ----------
    text : str
        The segment's source text.
    style : int
        The segment's style; a header segment has no blocks.
    lines : list of str or None
        ``split_lines(text)`` where the caller has it already (None: split here).

    Returns
    -------
    list of tuple of int
        Sorted, disjoint ranges of line indices of :func:`split_lines` ``(text)``; each starts and ends with a
        code-like line and spans at least :data:`MIN_BLOCK_LINES` lines.

    Examples
    --------
    >>> find_blocks("Run it:\\n$ make\\nok\\n  done\\nThat is all.")
    [(1, 4)]
    """
    if not _may_have_blocks(text, style):
        return []
    if lines is None:
        lines = split_lines(text)
    return _runs(classify_lines(lines, style))


def _runs(kinds: str) -> list[tuple[int, int]]:
    """The blocks of a segment from its line kinds (see :func:`find_blocks`)."""
    blocks = []
    for m in re.finditer(r"C(?:[CBN]*C)?", kinds):
        a, b = m.span()
        if b - a >= MIN_BLOCK_LINES:
            blocks.append((a, b))
    return blocks


def choose_columns(widths: list[int], cols: int) -> tuple[int, int]:
    """Choose the column count and width of a block band from the block's line widths.

    Of the counts k = 1..KMAX (at most one per :data:`MIN_ROWS_PER_COLUMN` lines) whose columns are at least
    :data:`MIN_COLW` cells wide and wrap at most :data:`MAX_WRAP_SHARE` of the block's non-blank lines, the one
    with the lowest band (rows needed over k, rounded up); the fewest columns on a tie. Measured on ../shared/data
    (bench/RESULTS.md, layout ``auto``, profile claude): this keeps 71.0% of ``dense``'s characters per image
    token with 40% of block lines wrapped; fitting 90% of the lines instead keeps 51.7% (3% wrapped).

    Parameters
    ----------
    widths : list of int
        Width of each line of the block in cells (tabs expanded: :func:`snapglyph.raster._codes.expand_tabs`).
    cols : int
        Cells per page row.

    Returns
    -------
    k, colw : int
        Columns (1..KMAX) and cells per column: ``colw = (cols - (k - 1)) // k`` (one blank cell between
        columns holds the rule).

    Examples
    --------
    >>> choose_columns([30, 42, 12, 0, 38, 40, 20, 41, 9], 182)
    (3, 60)
    >>> choose_columns([120, 10], 182)
    (1, 182)
    """
    w = np.ascontiguousarray(widths, np.int32)
    k, colw = native.kernels().choose_band(w, 0, len(w), int(cols), _KMAX, MIN_COLW, MIN_ROWS_PER_COLUMN,
                                           MAX_WRAP_SHARE)
    return int(k), int(colw)


def plan_blocks(text: str, style: int, cols: int, cps: np.ndarray | None = None) -> list[tuple[int, int, int, int]]:
    """Return ``(a, b, k, colw)`` for each block of a segment: its line range and its columns.

    Parameters
    ----------
    text : str
        The segment's source text.
    style : int
        The segment's style.
    cols : int
        Cells per page row.
    cps : numpy.ndarray or None
        ``text``'s code points (uint32, surrogates as they are: ``encode("utf-32-le", "surrogatepass")``) where the
        caller has them (the renderer's normalization made them already); None to encode here where needed.

    Returns
    -------
    list of tuple of int
        See :func:`find_blocks` and :func:`choose_columns` (by :func:`line_kinds` and
        :func:`snapglyph.raster._line_kernels.choose_band`).

    Examples
    --------
    >>> plan_blocks("x:\\n    a = 1\\n    b = 2\\n", 0, 100)
    [(1, 3, 1, 100)]
    """
    return plan_with_newlines(text, style, cols, cps)[0]


def plan_with_newlines(text: str, style: int, cols: int, cps: np.ndarray | None = None) -> tuple[list[tuple], int]:
    """:func:`plan_blocks` (same arguments), and the count of ``text``'s newlines by the rules of
    :func:`split_lines` (0 where the plan is empty: not counted), which
    :func:`snapglyph.raster.stream.insert_blocks` checks against the stream's.

    The compiled path reads the segment's code points as they are where it has no CRLF and no line separator (the
    common case: no list of lines is made, no text joined and encoded again).

    Examples
    --------
    >>> plan_with_newlines("x:\\n    a = 1\\n    b = 2\\n", 0, 100)
    ([(1, 3, 1, 100)], 3)
    """
    if not _may_have_blocks(text, style):
        return [], 0
    if "\r\n" in text or (not text.isascii() and ("\u2028" in text or "\u2029" in text)):  # as split_lines
        kinds, widths = line_kinds(split_lines(text), style)
    else:
        if cps is None:
            cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
        kinds, widths = _line_kinds(text, cps, int(np.count_nonzero(cps == 10)) + 1, style)
    choose_band = native.kernels().choose_band
    return [(a, b, *choose_band(widths, a, b, int(cols), _KMAX, MIN_COLW, MIN_ROWS_PER_COLUMN, MAX_WRAP_SHARE))
            for a, b in _runs(kinds)], len(widths) - 1
