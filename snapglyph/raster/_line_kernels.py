"""Numba kernels of the block planner (:mod:`snapglyph.raster.blocks`): arrays and scalars in, arrays out.

A module of kernels like :mod:`snapglyph.raster._kernels` (compiled through its one :data:`~._kernels.jit`), kept
apart because it is a stage of its own: it reads a segment's source text (code points), not stream codes.

:func:`line_kinds` gives each line's letter (``C``, ``P``, ``B``, ``N``) by the line rule of
:mod:`snapglyph.raster.blocks` and each line's width (tabs expanded, trailing space dropped); :func:`choose_band`
is the column count of a block (:func:`snapglyph.raster.blocks.choose_columns`). Python's ``\\s``, ``\\w`` and
``\\d`` come in as a table of the Basic Multilingual Plane (:func:`snapglyph.raster.blocks.char_classes`); a code
point above U+FFFF comes in as a character of the plane of the same class. These kernels are the rule's one
implementation in the package; tests hold them equal to the plain-Python reference (tests/reference_blocks.py) on
every line of ../shared/data and on generated lines.
"""

from __future__ import annotations

import numpy as np

from ._kernels import jit
from ._line_rule import (CLASS_DIGIT, CLASS_SPACE, CLASS_WORD, CODE_END, CODE_KEYWORDS, F_DIFF_LINE, F_ENDS_CODE,
                         F_PROSE, F_TOKENS, KIND_BITS, LOG_LEVELS)

RULE_DIGEST = "cbe2572411d9db99"  # SHA-256 of _line_rule.py, whose constants and tables the kernels bake in

__all__ = ["RULE_DIGEST", "choose_band", "line_kinds"]

_FENCE, _BLANK, _DIFF, _ITEM, _CODE = 1, 2, 3, 4, 5


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("ascii"), np.uint8).astype(np.uint32)


def _word_table(words: list[str]) -> np.ndarray:
    """Rows of letters, the word's length in the last column."""
    width = max(map(len, words))
    table = np.zeros((len(words), width + 1), np.uint32)
    for i, w in enumerate(words):
        table[i, :len(w)] = _codes(w)
        table[i, width] = len(w)
    return table


_KEY_TABLE = _word_table([w for w in CODE_KEYWORDS if w[0] != "#"])
_HASH_TABLE = _word_table([w[1:] for w in CODE_KEYWORDS if w[0] == "#"])  # #include: the word after the #
_LEVEL_TABLE = _word_table(list(LOG_LEVELS))
_TICKS, _TILDES = _codes("```"), _codes("~~~")
_DIFF_AT, _DIFF_GIT, _PLUS3, _MINUS3, _INDEX = _codes("@@ "), _codes("diff --git "), _codes("+++ "), _codes("--- "), \
    _codes("index ")
_LS_TYPE, _LS_MODE, _LS_MARK = _codes("dlcbps-"), _codes("rwxsStT-"), _codes(".+@")
_PROMPTS = _word_table(["$ ", ">>> ", "... ", "#! ", "% "])
_CODE_END = _codes(CODE_END)
_ARROW = 0x2192  # a numbered listing line's separator, beside : | and a tab


@jit
def _is(c, cls, bit):
    return c < 0x10000 and (cls[c] & bit) != 0


@jit
def _run(cps, p, b, cls, bit):
    """End of the run of characters of class ``bit`` from ``p``."""
    while p < b and _is(cps[p], cls, bit):
        p += 1
    return p


@jit
def _at(cps, p, b, text):
    """Whether ``cps[p:b]`` starts with ``text``."""
    if b - p < len(text):
        return False
    for k in range(len(text)):
        if cps[p + k] != text[k]:
            return False
    return True


@jit
def _one_of(c, chars):
    for k in range(len(chars)):
        if c == chars[k]:
            return True
    return False


@jit
def _row_of(cps, p, q, table):
    """Whether ``cps[p:q]`` is one of the rows of ``table`` (see ``_word_table``)."""
    last = table.shape[1] - 1
    for r in range(table.shape[0]):
        if table[r, last] == q - p:
            same = True
            for k in range(q - p):
                if cps[p + k] != table[r, k]:
                    same = False
                    break
            if same:
                return True
    return False


@jit
def _prompt(cps, a, b):
    last = _PROMPTS.shape[1] - 1
    for r in range(_PROMPTS.shape[0]):
        if _at(cps, a, b, _PROMPTS[r, :_PROMPTS[r, last]]):
            return True
    return False


@jit
def _digit_stamp(cps, s, b, cls):
    """``\\d{4}-\\d\\d-\\d\\d[ T]\\d`` or ``\\d\\d:\\d\\d:\\d\\d`` at ``s``."""
    d = _run(cps, s, b, cls, CLASS_DIGIT)
    if d - s == 4 and d + 7 < b and cps[d] == 45 and cps[d + 3] == 45 and (cps[d + 6] == 32 or cps[d + 6] == 84):
        return (_is(cps[d + 1], cls, CLASS_DIGIT) and _is(cps[d + 2], cls, CLASS_DIGIT)
                and _is(cps[d + 4], cls, CLASS_DIGIT) and _is(cps[d + 5], cls, CLASS_DIGIT)
                and _is(cps[d + 7], cls, CLASS_DIGIT))
    if d - s == 2 and d + 5 < b and cps[d] == 58 and cps[d + 3] == 58:
        return (_is(cps[d + 1], cls, CLASS_DIGIT) and _is(cps[d + 2], cls, CLASS_DIGIT)
                and _is(cps[d + 4], cls, CLASS_DIGIT) and _is(cps[d + 5], cls, CLASS_DIGIT))
    return False


@jit
def _after_space(cps, b, p, q, cls):
    """The code-like alternatives after optional leading space (``p``: first non-space, ``q``: past the last)."""
    c = cps[p]
    if c == 124:  # a table row: | ... |
        return q - 1 > p and cps[q - 1] == 124
    s = p + 1 if c == 91 else p  # [ before a time stamp or a level
    if _digit_stamp(cps, s, b, cls) or _row_of(cps, s, _run(cps, s, b, cls, CLASS_WORD), _LEVEL_TABLE):
        return True
    d = _run(cps, p, b, cls, CLASS_DIGIT)
    if d > p:  # a numbered listing line: digits, space, then : | -> or a tab, or two spaces
        r = d
        tab = False
        while r < b and _is(cps[r], cls, CLASS_SPACE):
            tab = tab or cps[r] == 9
            r += 1
        if r - d >= 2 or tab or (r < b and (cps[r] == 58 or cps[r] == 124 or cps[r] == _ARROW)):
            return True
    if c == 125 or c == 41 or c == 93:  # } ) ]
        return True
    if c == 35:  # #include, #define
        return _row_of(cps, p + 1, _run(cps, p + 1, b, cls, CLASS_WORD), _HASH_TABLE)
    return _row_of(cps, p, _run(cps, p, b, cls, CLASS_WORD), _KEY_TABLE)


@jit
def _code_start(cps, a, b, p, q, cls):
    """Whether line ``cps[a:b]`` is code-like at its start (the alternatives of the rule in
    :mod:`snapglyph.raster.blocks`)."""
    if p - a >= 2 and p < b:  # two or more spaces (U+0020 only), then a non-space
        spaces = True
        for k in range(a, p):
            if cps[k] != 32:
                spaces = False
                break
        if spaces:
            return True
    if cps[a] == 9 and a + 1 < b and not _is(cps[a + 1], cls, CLASS_SPACE):
        return True
    if _at(cps, a, b, _DIFF_AT) or _at(cps, a, b, _PLUS3) or _at(cps, a, b, _MINUS3) or _at(cps, a, b, _DIFF_GIT):
        return True
    if b - a >= 13 and _at(cps, a, b, _INDEX):  # index [0-9a-f]{7}
        hexes = True
        for k in range(a + 6, a + 13):
            hexes = hexes and (48 <= cps[k] <= 57 or 97 <= cps[k] <= 102)
        if hexes:
            return True
    e = a
    while e < b and (_is(cps[e], cls, CLASS_WORD) or cps[e] == 46 or cps[e] == 47 or cps[e] == 45):
        e += 1
    if a < e < b and cps[e] == 58:  # [\w./-]+:\d+[:\s]
        d = _run(cps, e + 1, b, cls, CLASS_DIGIT)
        if e + 1 < d < b and (cps[d] == 58 or _is(cps[d], cls, CLASS_SPACE)):
            return True
    if b - a >= 11 and _one_of(cps[a], _LS_TYPE):  # ls -l: [dlcbps-][rwxsStT-]{9}[.+@]?\s
        mode = True
        for k in range(a + 1, a + 10):
            mode = mode and _one_of(cps[k], _LS_MODE)
        if mode and (_is(cps[a + 10], cls, CLASS_SPACE)
                     or (_one_of(cps[a + 10], _LS_MARK) and a + 11 < b and _is(cps[a + 11], cls, CLASS_SPACE))):
            return True
    return _prompt(cps, a, b) or _after_space(cps, b, p, q, cls)


@jit
def _item(cps, p, b, cls):
    """A markdown list item from the first non-space ``p``: ``- x``, ``* x``, ``+ x``, ``1. x``, ``1) x``."""
    c = cps[p]
    if (c == 45 or c == 42 or c == 43) and p + 1 < b and _is(cps[p + 1], cls, CLASS_SPACE):
        return True
    d = _run(cps, p, b, cls, CLASS_DIGIT)
    return p < d and d + 1 < b and (cps[d] == 46 or cps[d] == 41) and _is(cps[d + 1], cls, CLASS_SPACE)


@jit
def _scan(cps, a, n, cls, tab_stop, indent_stop):
    """One pass over the line that starts at ``cps[a]``: ``(end, width, tokens, words, letters)``.

    ``end``: the index of its newline (or ``n``); ``width``: its cells with tabs expanded (``_codes.expand_tabs``)
    and trailing space dropped; ``tokens``: whether it holds a code token (``=>``, ``->``, ``==``, ``!=``, ``::``,
    ``&&``, ``||``); ``words`` and ``letters``: the runs of two or more ASCII letters, and their letters plus the
    spaces (the counts of the prose test, :data:`~snapglyph.raster._line_rule.F_PROSE`). One loop instead of
    three."""
    col = 0
    last = 0
    indent = True
    words = 0
    letters = 0
    run = 0
    tokens = False
    prev = 0
    b = a
    while b < n:
        c = cps[b]
        if c == 10:
            break
        if b > a and not tokens and ((c == 62 and (prev == 61 or prev == 45)) or (c == 61 and (
                prev == 61 or prev == 33)) or (c == prev and (c == 58 or c == 38 or c == 124))):
            tokens = True
        prev = c
        if 65 <= c <= 90 or 97 <= c <= 122:
            run += 1
        else:
            if run >= 2:
                words += 1
                letters += run
            run = 0
            if c == 32:
                letters += 1
        if c == 9:
            stop = indent_stop if indent else tab_stop
            col += stop - col % stop
        else:
            if c != 32:
                indent = False
            col += 1
            if not _is(c, cls, CLASS_SPACE):
                last = col
        b += 1
    if run >= 2:
        words += 1
        letters += run
    return b, last, tokens, words, letters


@jit
def _features(cps, a, b, listing, cls, tokens, words, letters):
    """The feature bits of line ``cps[a:b]`` (:data:`~snapglyph.raster._line_rule.KIND_BITS` and the ``F_`` bits;
    ``tokens``, ``words``, ``letters``: from :func:`_scan`)."""
    p = _run(cps, a, b, cls, CLASS_SPACE)
    if p == b:
        return _BLANK
    q = b
    while _is(cps[q - 1], cls, CLASS_SPACE):
        q -= 1
    if p - a <= 3 and (_at(cps, p, b, _TICKS) or _at(cps, p, b, _TILDES)):
        f = _FENCE
    elif _at(cps, a, b, _DIFF_AT) or _at(cps, a, b, _DIFF_GIT):
        f = _DIFF
    elif not listing and _item(cps, p, b, cls):
        f = _ITEM
    elif _code_start(cps, a, b, p, q, cls):
        f = _CODE
    else:
        f = 0
    if _one_of(cps[q - 1], _CODE_END):
        f |= F_ENDS_CODE
    if cps[a] == 43 or cps[a] == 32 or cps[a] == 45:
        f |= F_DIFF_LINE
    if tokens:
        f |= F_TOKENS
    if b - a >= 80 and words >= 10 and letters >= 0.8 * (b - a):
        f |= F_PROSE
    return f


@jit
def line_kinds(cps, listing, cls, tab_stop, indent_stop, out, widths):
    """Classify each line of a segment for block planning and measure it.

    Parameters
    ----------
    cps : uint32 array (n,)
        The segment's code points, its newlines as 10 (CRLF, U+2028 and U+2029 made newlines), each above U+FFFF
        replaced by one of the plane of the same class.
    listing : bool
        Tool output or a tool call: no list items, and a neutral line counts as code-like.
    cls : uint8 array (0x10000,)
        :data:`CLASS_SPACE`, :data:`CLASS_WORD` and :data:`CLASS_DIGIT` of each code point of the Basic
        Multilingual Plane.
    tab_stop, indent_stop : int
        Tab stops after text and in indentation (``_codes.TAB_STOP``, ``_codes.INDENT_TAB_STOP``).
    out : uint8 array (lines,)
        Per line (one more than the newlines): its letter as its ASCII code: ``C`` code-like, ``P`` prose, ``B``
        blank, ``N`` neutral.
    widths : int32 array (lines,)
        Each line's width in cells, one a character (modified in place, like ``out``).
    """
    fenced = False
    diff = False
    a = 0
    n = len(cps)
    for i in range(len(out)):
        b, width, tokens, words, letters = _scan(cps, a, n, cls, tab_stop, indent_stop)
        f = _features(cps, a, b, listing, cls, tokens, words, letters)
        widths[i] = width
        kind = f & KIND_BITS
        if kind == _FENCE:
            fenced = not fenced
            out[i] = 67
        elif fenced:
            out[i] = 67
        elif kind == _BLANK:
            out[i] = 66
        else:
            diff = kind == _DIFF or (diff and (f & F_DIFF_LINE) != 0)
            if diff or kind == _CODE or ((f & F_ENDS_CODE) != 0 and kind != _ITEM):
                out[i] = 67
            elif kind == _ITEM:
                out[i] = 78
            elif listing:
                out[i] = 80 if (f & F_PROSE) != 0 and (f & F_TOKENS) == 0 else 67
            else:
                out[i] = 80 if (f & F_PROSE) != 0 else 78
        a = b + 1


@jit
def choose_band(widths, a, b, cols, kmax, min_colw, min_rows, max_share):
    """The columns of a block band from the widths of its lines ``widths[a:b]`` (int32, cells): returns
    ``(k, colw)``, by the rule of :func:`snapglyph.raster.blocks.choose_columns`."""
    n = b - a
    nonblank = 0
    for i in range(a, b):
        if widths[i] != 0:
            nonblank += 1
    best_h, best_k = -1, 1
    top = min(kmax, max(1, n // min_rows))
    for k in range(1, top + 1):
        colw = (cols - (k - 1)) // k
        if k > 1 and colw < min_colw:
            break
        over = 0
        rows = n
        for i in range(a, b):
            w = widths[i]
            if w > colw:
                over += 1
                if colw > 1:  # numpy's floor division by zero gives 0
                    rows += (w - colw + colw - 2) // (colw - 1)
        if k > 1 and over > max_share * nonblank:
            continue
        h = -(-rows // k)
        if best_h < 0 or h < best_h:
            best_h, best_k = h, k
    return best_k, (cols - (best_k - 1)) // best_k
