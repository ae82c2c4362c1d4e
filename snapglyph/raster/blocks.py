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

Where numba is loaded (the renderer's numba engine), the same letters, widths and columns come from compiled
kernels (:func:`line_kinds`, :mod:`snapglyph.raster._line_kernels`); the patterns here define them, and tests hold
the kernels equal to them.

Deterministic: the same text and page width give the same blocks and columns. Nothing here reads pixels.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from . import native
from ._codes import INDENT_TAB_STOP, TAB_STOP, expand_tabs
from ._codes import KMAX as _KMAX

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

CODE_KEYWORDS = ("def", "class", "import", "from", "return", "if", "elif", "else", "for", "while", "try", "except",
                 "finally", "with", "async", "await", "const", "let", "var", "function", "fn", "pub", "use", "package",
                 "func", "struct", "impl", "enum", "type", "interface", "export", "public", "private", "static",
                 "#include", "#define")
"""Words that make a line code-like where it starts with one (after indentation), as a whole word."""
LOG_LEVELS = ("DEBUG", "INFO", "WARN", "WARNING", "ERROR", "TRACE", "FATAL", "CRITICAL")
"""Level words that make a line a log line where it starts with one (after indentation and an optional ``[``)."""

_CODE_START = (  # the code-like rule, matched at the line start; also code-like: a line ending in CODE_END
    r"(?:[ ]{2,}|\t)\S"                                   # indented
    r"|(?:@@ |\+\+\+ |--- |diff --git |index [0-9a-f]{7})"  # diff headers
    r"|[\w./-]+:\d+[:\s]"                                 # grep hit: path:line:
    r"|[dlcbps-][rwxsStT-]{9}[.+@]?\s"                    # ls -l
    r"|(?:\$|>>>|\.\.\.|#!|%) "                           # prompts, shebang
    r"|\s*(?:\|.*\|\s*$"                                  # table row
    r"|\[?\d{4}-\d\d-\d\d[ T]\d|\[?\d\d:\d\d:\d\d"          # log time stamps
    r"|\[?(?:" + "|".join(LOG_LEVELS) + r")\b"
    r"|\d+\s*(?:[:\t|\u2192]|\s{2})"                      # numbered listing line
    r"|[})\]]"                                            # starts like code
    r"|(?:" + "|".join(CODE_KEYWORDS) + r")\b)"
)
CODE_END = "{};([,"
"""A line whose last non-space character is one of these reads as code (checked with ``str.rstrip``: a regex
ending in ``\\s*$`` backtracks over the whole line)."""
_CODE_TOKENS = re.compile(r"=>|->|::|==|!=|&&|\|\|")  # code-like in tool output and calls only


def _kinds(item: str) -> re.Pattern:
    """What a line's own text is, matched at its start, the first alternative that matches wins: group 1 a fence,
    2 blank, 3 a diff start, 4 a list item (``item``), 5 code-like (:data:`_CODE_START`)."""
    return re.compile(r"(\s{0,3}(?:```|~~~))|(\s*$)|(@@ |diff --git )|(" + item + ")|(" + _CODE_START + ")")


_KIND = _kinds(r"\s*(?:[-*+]|\d+[.)])\s")
"""Conversation text: a markdown list item (``- x``, ``1. x``) is prose, never code-like."""
_KIND_LISTING = _kinds(r"(?!)")
"""Tool output and calls: no list item exception (``(?!)`` never matches; :data:`_CODE_TOKENS` make a line
code-like too)."""
_FENCE, _BLANK, _DIFF, _ITEM, _CODE = 1, 2, 3, 4, 5
_WORD = re.compile(r"[A-Za-z]{2,}")


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


def _prose(line: str) -> bool:
    if len(line) < 80:
        return False
    words = _WORD.findall(line)
    if len(words) < 10:
        return False
    letters = sum(len(w) for w in words) + line.count(" ")
    return letters >= 0.8 * len(line)


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
    out = []
    fenced = False
    diff = False
    listing = style in _LISTING_STYLES
    kind_of = (_KIND_LISTING if listing else _KIND).match
    for line in lines:
        m = kind_of(line)
        kind = m.lastindex if m else 0
        if kind == _FENCE:
            fenced = not fenced
            out.append("C")
        elif fenced:
            out.append("C")
        elif kind == _BLANK:
            out.append("B")
        else:
            diff = kind == _DIFF or diff and line[0] in "+ -"
            if diff or kind == _CODE or line.rstrip()[-1] in CODE_END and kind != _ITEM:
                out.append("C")
            elif kind == _ITEM:
                out.append("N")
            elif listing:  # a neutral line of a listing counts as code-like; prose only without code tokens
                out.append("P" if _prose(line) and not _CODE_TOKENS.search(line) else "C")
            elif len(line) >= 80 and _prose(line):  # _prose itself starts with this test: a call saved per line
                out.append("P")
            else:
                out.append("N")
    return "".join(out)


CLASS_SPACE, CLASS_WORD, CLASS_DIGIT = 1, 2, 4
"""Bits of the character class table: ``\\s``, ``\\w``, ``\\d``."""
KIND_BITS = 7
"""The low bits of a line's features: its kind (0 none, then fence, blank, diff, list item, code-like: the groups
of ``blocks._kinds``)."""
F_ENDS_CODE, F_DIFF_LINE, F_PROSE, F_TOKENS = 8, 16, 32, 64
"""Feature bits: the last non-space character is one of ``{};([,``; the first is one of ``+ -``; the line reads as
prose (``_prose``); it holds a code token (``=>``, ``->``, ``::``, ``==``, ``!=``, ``&&``, ``||``)."""


@functools.lru_cache(maxsize=1)
def char_classes() -> np.ndarray:
    """The class of each code point of the Basic Multilingual Plane under Python's own ``\\s``, ``\\w`` and ``\\d``
    (the running Python's Unicode tables, as the patterns here use them), for
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


def _features(line: str, listing: bool) -> int:
    """A line's feature bits (:mod:`snapglyph.raster._line_kernels`) by the patterns here: the kernel takes them
    for a line with a code point above U+FFFF, which its class table does not cover."""
    m = (_KIND_LISTING if listing else _KIND).match(line)
    kind = m.lastindex if m else 0
    if kind == _BLANK:
        return kind
    return (kind | F_ENDS_CODE * (line.rstrip()[-1] in CODE_END) | F_DIFF_LINE * (line[0] in "+ -")
            | F_PROSE * _prose(line) | F_TOKENS * bool(_CODE_TOKENS.search(line)))


def line_kinds(lines: list[str], style: int = 0) -> tuple[str, np.ndarray]:
    """:func:`classify_lines` of ``lines``, and each line's width, by the compiled
    :func:`snapglyph.raster._line_kernels.line_kinds` (through :func:`snapglyph.raster.native.kernels`).

    Equal to :func:`classify_lines` and to ``len(expand_tabs(line).rstrip())`` (tested on every line of
    ../shared/data and on generated lines): a line with a code point above U+FFFF has its features from Python.

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
    listing = style in _LISTING_STYLES
    feats = np.full(n, -1, np.int32)
    if not text.isascii() and cps.max() > 0xFFFF:  # lines beyond the class table: their features from Python
        nl = np.flatnonzero(cps == 10)
        for i in np.unique(np.searchsorted(nl, np.flatnonzero(cps > 0xFFFF))).tolist():
            feats[i] = _features(text[int(nl[i - 1]) + 1 if i else 0:int(nl[i]) if i < len(nl) else len(text)],
                                 listing)
    out = np.empty(n, np.uint8)
    widths = np.empty(n, np.int32)
    native.kernels().line_kinds(cps, feats, listing, char_classes(), TAB_STOP, INDENT_TAB_STOP, out, widths)
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
    w = np.asarray(widths, np.int64)
    nonblank = int(np.count_nonzero(w))
    best_h, best_k = -1, 1
    for k in range(1, min(_KMAX, max(1, len(w) // MIN_ROWS_PER_COLUMN)) + 1):
        colw = (cols - (k - 1)) // k
        if k > 1 and colw < MIN_COLW:
            break
        over = w[w > colw]
        if k > 1 and len(over) > MAX_WRAP_SHARE * nonblank:
            continue
        rows = len(w) + int(((over - colw + colw - 2) // (colw - 1)).sum())  # + ceil((w - colw) / (colw - 1))
        h = -(-rows // k)
        if best_h < 0 or h < best_h:
            best_h, best_k = h, k
    return best_k, (cols - (best_k - 1)) // best_k


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
        See :func:`find_blocks` and :func:`choose_columns`: by the patterns and numpy where numba is not loaded
        (a short text's render), else by :func:`line_kinds` and
        :func:`snapglyph.raster._line_kernels.choose_band` (the same plans, tested). Measured on the 39 pieces of
        the 10 M-character bench text, 2026-12-02, four interleaved rounds, load under 1.5: 0.29-0.34 s by the
        patterns, 0.16-0.17 s compiled (the first round 0.34: the kernels' load); in the renderer it holds the
        GIL either way, so the page pipeline waits on it less.

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
    if not native.ready():
        lines = split_lines(text)
        out = []  # the Python engine (numba not loaded): the patterns, line by line
        for a, b in find_blocks(text, style, lines):
            block = lines[a:b]
            shown = map(expand_tabs, block) if any("\t" in x for x in block) else block
            out.append((a, b, *choose_columns(list(map(len, map(str.rstrip, shown))), cols)))
        return out, len(lines) - 1
    if "\r\n" in text or (not text.isascii() and ("\u2028" in text or "\u2029" in text)):  # as split_lines
        kinds, widths = line_kinds(split_lines(text), style)
    else:
        if cps is None:
            cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
        kinds, widths = _line_kinds(text, cps, int(np.count_nonzero(cps == 10)) + 1, style)
    choose_band = native.kernels().choose_band
    return [(a, b, *choose_band(widths, a, b, cols, _KMAX, MIN_COLW, MIN_ROWS_PER_COLUMN, MAX_WRAP_SHARE))
            for a, b in _runs(kinds)], len(widths) - 1
