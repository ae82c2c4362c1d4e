"""Block detection for the ``auto`` layout: which source lines of a segment keep their lines whole.

A segment's text is split into lines (after the newline rules of :func:`snapglyph.raster.text.normalize`: CRLF,
U+2028 and U+2029 are newlines). Each line is classified, by its own text alone, by what it is, not by its
indentation alone:

``C`` code-like  a fence (```` ``` ```` or ``~~~``), a diff line (``@@``, ``+++``, ``---``, ``diff --git``,
                 ``index``), a table row (``| a | b |``) or rule (``|---|``, ``=====``, box drawing), a log line
                 (a date or time stamp, a level word), a listing line (``12: ...``, ``path:12:``, ``drwxr-xr-x``,
                 a shell prompt), a line that starts with a closing bracket, ``#include`` or ``#define``; else a
                 line that is not wordy (see ``P``) and ends with ``{ } ; ( [ ,``, starts with a keyword, holds a
                 code token (``=>``, ``->``, ``::``, ``==``, ``!=``, ``&&``, ``||``), or is indented (2+ spaces or
                 a tab) and holds evidence of code (:data:`~._line_rule.CODE_PUNCT`, ``f(``, ``a.b``); a wordy
                 line that ends with ``{ ( [ ;``, or starts with a keyword and ends with ``:`` or ``{``.
``P`` prose      wordy: four or more words of two or more letters (any script), whose letters and spaces make
                 three quarters of the line's text; indented or not (a license text, a hard-wrapped paragraph).
``N`` neutral    a markdown list item (``- x``, ``1. x``), and anything else (a short line: a heading, a file
                 name, an indented line with no evidence of code).
``B`` blank      nothing but spaces.

Inside a fence every line is ``C``. In tool output and tool calls (``STYLE_DIM``, ``STYLE_CALL``) a neutral line
that is not a list item counts as code-like (a listing of names keeps one name per row), and so does a wordy line
with a code token. A block is a maximal run from a ``C`` line to a ``C`` line over ``C``, ``B``, ``N`` and ``P``
lines where at most :data:`MAX_PROSE_RUN` ``P`` lines come between two ``C`` lines (a comment or a one-line
docstring stays in its code; three paragraphs between blank lines do not), that holds at least
:data:`MIN_BLOCK_LINES` lines. Everything else is prose, laid out dense.

The column count of a block (:func:`choose_columns`) follows from its line widths less the indentation common to
the block (which the layout does not draw): the lowest band, with columns of at least :data:`MIN_COLW` cells that
break at most :data:`MAX_WRAP_SHARE` of the lines (a line wider than its column, or indented past half of it).
Where that band would take more than :data:`FLOW_GAIN` times the rows of the block laid out as **flow**
(:func:`snapglyph.raster.flow.flow_rows`: its lines one after another along the rows, each whole on its row where
it fits, without the common indentation and with the rest of a line's indentation at half its width), the block
is planned as flow (``k == 0``) and stays prose in the stream (:func:`snapglyph.raster.flow.flow_stream` places
its row starts): lines of ordinary length are never broken, and a page of code holds about as much as a dense one
(bench/RESULTS.md, section "Layout auto").

The letters, widths and columns come from compiled kernels (:mod:`snapglyph.raster._line_kernels`, called through
:func:`snapglyph.raster.native.kernels`), the rule's one implementation here; its constants are in
:mod:`snapglyph.raster._line_rule`. The rule written the plain way, one regex search a feature, is the tests'
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
from ._line_rule import CLASS_DIGIT, CLASS_SPACE, CLASS_WORD, CODE_END, CODE_KEYWORDS, LOG_LEVELS

__all__ = ["CLASS_DIGIT", "CLASS_SPACE", "CLASS_WORD", "CODE_END", "CODE_KEYWORDS", "LOG_LEVELS", "MAX_PROSE_RUN",
           "FLOW_GAIN", "MAX_WRAP_SHARE", "MIN_BLOCK_LINES", "MIN_COLW", "MIN_ROWS_PER_COLUMN", "char_classes",
           "choose_columns", "classify_lines", "find_blocks", "line_kinds", "plan_blocks", "plan_with_newlines",
           "split_lines"]

MIN_BLOCK_LINES = 2
"""A run of code-like lines shorter than this stays prose. 3 would draw a two-line tool-call argument or code
snippet dense, its lines run together."""
MAX_PROSE_RUN = 2
"""Most wordy (``P``) lines that a block holds between two code-like lines, blank and neutral lines between them
not counted but not ending the count: a comment or a docstring's line stays in its code; a paragraph of three
lines, or three paragraphs of a line each between blank lines or headings (Markdown's way), ends the block
(measured on ../shared/data, 2026-12-07: 2,000 of 104,000 block lines go to prose, 92.9% of dense against 92.7%
when only P lines in a row were counted)."""
MIN_COLW = 28
"""Fewest cells per column of a block band with more than one column (six columns of 29 cells on a 182-cell row,
Claude's page at 6x12, where the lines are that short). Any value from 8 up lays out (a test holds 8 to 28
pixel-equal to the reference renderer); below 6 a hanging continuation row could not hold a wide character."""
MIN_ROWS_PER_COLUMN = 3
"""A block of n lines gets at most ``n // MIN_ROWS_PER_COLUMN`` columns (two lines side by side read as a table)."""
MAX_WRAP_SHARE = 0.05
"""Most of a block's non-blank lines that may be broken (wider than the column once the block's common
indentation is off, or indented past half of it) in a band of more than one column; a block that would break more
takes fewer, wider columns, down to the full width, and most such blocks then go as flow (:data:`FLOW_GAIN`),
which breaks only a line wider than the row. Issue 30's goal is at most 5% of block lines broken; measured in
bench/RESULTS.md, section "Layout auto" (0.5 before flow: 33.8% broken at 67.7% of dense)."""
FLOW_GAIN = 1.1
"""A block whose band would take more than this many times the rows of its lines laid out as flow (one after
another along the rows, each whole on its row where it fits: :func:`snapglyph.raster.flow.flow_rows`) is laid out
as flow; 0: never.
Measured on ../shared/data (2026-12-07, claude profile, bench/auto_density.py and bench/snapshot_share.py with
:data:`MAX_WRAP_SHARE` 0.05; bench/RESULTS.md, section "The choice of flow"): 1.0, 1.1, 1.25 and 1.5 hold
92.8%, 92.7%, 92.4% and 91.2% of dense's characters per image token, bands only 44.1%; 1.1 keeps a band where it
costs at most a tenth more rows (lines all about a column wide: a listing of paths), where one line a row reads
best."""

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
    >>> classify_lines(["Here is the fix, in full:", "```py", "x = 1", "```", "", "It works now."])
    'PCCCBN'
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


def line_kinds(lines: list[str], style: int = 0) -> tuple[str, np.ndarray, np.ndarray]:
    """:func:`classify_lines` of ``lines``, each line's width and its indentation, by the compiled
    :func:`snapglyph.raster._line_kernels.line_kinds` (through :func:`snapglyph.raster.native.kernels`).

    The widths are ``len(expand_tabs(line).rstrip())`` (:func:`snapglyph.raster._codes.expand_tabs`), the
    indentations the cells of the leading spaces and tabs (0 for a blank line); all are tested equal to the
    reference's on every line of ../shared/data and on generated lines.

    Returns
    -------
    kinds : str
        One letter per line.
    widths, leads : numpy.ndarray
        int32 ``(len(lines),)`` each.

    Examples
    --------
    >>> kinds, widths, leads = line_kinds(["Here is the fix:", "```py", "\\tx = 1", "```", "", "It works now."])
    >>> kinds, widths.tolist(), leads.tolist()
    ('PCCCBN', [16, 5, 9, 3, 0, 13], [0, 0, 4, 0, 0, 0])
    """
    joined = "\n".join(lines)
    cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
    return _line_kinds(joined, cps, len(lines), style)


def _line_kinds(text: str, cps: np.ndarray, n: int, style: int) -> tuple[str, np.ndarray, np.ndarray]:
    """:func:`line_kinds` of the ``n`` lines of ``text`` (newlines between them), whose code points are ``cps``."""
    if not text.isascii() and cps.max() > 0xFFFF:  # beyond the class table: a stand-in of the same class
        cps = _in_plane(cps)
    out = np.empty(n, np.uint8)
    widths = np.empty(n, np.int32)
    leads = np.empty(n, np.int32)
    native.kernels().line_kinds(cps, style in _LISTING_STYLES, char_classes(), TAB_STOP, INDENT_TAB_STOP, out,
                                widths, leads)
    return out.tobytes().decode("ascii"), widths, leads


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
    >>> find_blocks("Run it:\\n$ make\\nok\\n  done;\\nThat is all.")
    [(1, 4)]
    """
    if not _may_have_blocks(text, style):
        return []
    if lines is None:
        lines = split_lines(text)
    return _runs(classify_lines(lines, style))


def _runs(kinds: str) -> list[tuple[int, int]]:
    """The blocks of a segment from its line kinds (see :func:`find_blocks`)."""
    return [m.span() for m in _run_pattern(MAX_PROSE_RUN).finditer(kinds) if m.end() - m.start() >= MIN_BLOCK_LINES]


@functools.lru_cache(maxsize=4)
def _run_pattern(prose_run: int) -> re.Pattern:
    """A block over the line letters: C to C over C, B, N and P, where no stretch between two C holds more than
    ``prose_run`` P (B and N between them do not end the stretch: the lookahead at a P sees the stretch's rest)."""
    return re.compile(rf"C(?:(?:[CBN]|P(?!(?:[BN]*P){{{prose_run}}}))*C)?" if prose_run > 0 else r"C(?:[CBN]*C)?")


def choose_columns(widths: list[int], cols: int, leads: list[int] | None = None) -> tuple[int, int]:
    """Choose the column count and width of a block band from the block's line widths and indentations.

    The indentation common to the block's non-blank lines is not drawn (:mod:`snapglyph.raster._codes`), so it is
    taken off every line first. A line is broken in a column of ``colw`` cells where it is wider than the column,
    or indented past ``colw // 2`` (its indentation is drawn at most that deep, and a continuation row hangs under
    its text). Of the counts k = 1..KMAX (at most one per :data:`MIN_ROWS_PER_COLUMN` lines) whose columns are at
    least :data:`MIN_COLW` cells wide and break at most :data:`MAX_WRAP_SHARE` of the block's non-blank lines, the
    one with the lowest band (rows needed over k, rounded up); the fewest columns on a tie; one column (the full
    width) where no other count qualifies.

    Parameters
    ----------
    widths : list of int
        Width of each line of the block in cells (tabs expanded: :func:`snapglyph.raster._codes.expand_tabs`).
    cols : int
        Cells per page row.
    leads : list of int or None
        Cells of each line's leading spaces and tabs (0 for a blank line); None: no line is indented.

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
    >>> choose_columns([58, 64, 60, 62, 61, 0, 63], 124, [8, 8, 12, 12, 8, 0, 8])  # 8 cells in common: 2 of 61
    (2, 61)
    """
    w = np.ascontiguousarray(widths, np.int32)
    ld = np.zeros(len(w), np.int32) if leads is None else np.ascontiguousarray(leads, np.int32)
    k, colw = native.kernels().choose_band(w, ld, 0, len(w), int(cols), _KMAX, MIN_COLW, MIN_ROWS_PER_COLUMN,
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
        :func:`snapglyph.raster._line_kernels.choose_band`); the layout finds the common indentation again in the
        stream.

    Examples
    --------
    >>> plan_blocks("x:\\n    a = 1\\n    b = 2\\n", 0, 100)  # flow: both lines on one row
    [(1, 3, 0, 100)]
    >>> plan_blocks("".join(f"src/pkg/module_number_{i:02d}.py\\n" for i in range(24)), 1, 182)  # a band: 4 rows
    [(0, 24, 6, 29)]
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
    ([(1, 3, 0, 100)], 3)
    """
    if not _may_have_blocks(text, style):
        return [], 0
    if "\r\n" in text or (not text.isascii() and ("\u2028" in text or "\u2029" in text)):  # as split_lines
        kinds, widths, leads = line_kinds(split_lines(text), style)
    else:
        if cps is None:
            cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
        kinds, widths, leads = _line_kinds(text, cps, int(np.count_nonzero(cps == 10)) + 1, style)
    choose_band = native.kernels().choose_band
    plan = []
    for a, b in _runs(kinds):
        k, colw = choose_band(widths, leads, a, b, int(cols), _KMAX, MIN_COLW, MIN_ROWS_PER_COLUMN, MAX_WRAP_SHARE)
        if _flows(widths[a:b], leads[a:b], int(cols), int(k), int(colw)):
            k, colw = 0, int(cols)
        plan.append((a, b, int(k), int(colw)))
    return plan, len(widths) - 1


def _flows(widths: np.ndarray, leads: np.ndarray, cols: int, k: int, colw: int) -> bool:
    """Whether a block is laid out as flow: its band of ``k`` columns of ``colw`` cells would take more than
    :data:`FLOW_GAIN` times the rows of its lines one after another along the rows
    (:func:`snapglyph.raster.flow.flow_rows`; both counted by the compiled
    :func:`snapglyph.raster._flow_kernels.block_rows_both`, the same integers)."""
    if FLOW_GAIN <= 0:
        return False
    band, flow = native.kernels().block_rows_both(widths, leads, k, colw, cols)
    return band > FLOW_GAIN * flow
