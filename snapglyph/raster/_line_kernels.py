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
from ._line_rule import (CLASS_DIGIT, CLASS_SPACE, CLASS_WORD, CODE_KEYWORDS, CODE_PUNCT, F_DIFF_LINE, F_ENDS_CODE,
                         F_EVIDENCE, F_KEYWORD, F_TOKENS, F_WORDY, KIND_BITS, LOG_LEVELS, RULE_CHARS, WORDY_MIN_WORDS,
                         WORDY_SHARE)

RULE_DIGEST = "b76c8fcd52221573"  # SHA-256 of _line_rule.py, whose constants and tables the kernels bake in

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
_WORDY_END = _codes("{([;")  # of CODE_END, the ends that make a wordy line code too
_PUNCT = _codes(CODE_PUNCT)
_RULE = _codes(RULE_CHARS)
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
    """The shapes of the rule after optional leading space (``p``: first non-space, ``q``: past the last)."""
    c = cps[p]
    if c == 124 and q - 1 > p and cps[q - 1] == 124:  # a table row: | ... |
        return True
    if _rule(cps, p, b) or 0x2500 <= c <= 0x259F:  # a rule line, box drawing
        return True
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
    return c == 35 and _row_of(cps, p + 1, _run(cps, p + 1, b, cls, CLASS_WORD), _HASH_TABLE)  # #include, #define


@jit
def _rule(cps, p, b):
    """Four or more of :data:`~._line_rule.RULE_CHARS` from ``p``, then only those and spaces to ``b``."""
    r = p
    while r < b and _one_of(cps[r], _RULE):
        r += 1
    if r - p < 4:
        return False
    while r < b and (cps[r] == 32 or _one_of(cps[r], _RULE)):
        r += 1
    return r == b


@jit
def _shape(cps, a, b, p, q, cls):
    """Whether line ``cps[a:b]`` is code-like by its shape (the ``_SHAPE`` alternatives of the reference): a diff,
    a listing, a prompt, a table, a rule, a log line, a closing bracket; not by its indentation."""
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
def _indented(cps, a, b, p, cls):
    """Two or more spaces (U+0020 only) then a non-space, or a tab then a non-space."""
    if cps[a] == 9:
        return a + 1 < b and not _is(cps[a + 1], cls, CLASS_SPACE)
    if p - a < 2 or p == b:
        return False
    for k in range(a, p):
        if cps[k] != 32:
            return False
    return True


@jit
def _item(cps, p, b, cls):
    """A markdown list item from the first non-space ``p``: ``- x``, ``* x``, ``+ x``, ``1. x``, ``1) x``."""
    c = cps[p]
    if (c == 45 or c == 42 or c == 43) and p + 1 < b and _is(cps[p + 1], cls, CLASS_SPACE):
        return True
    d = _run(cps, p, b, cls, CLASS_DIGIT)
    return p < d and d + 1 < b and (cps[d] == 46 or cps[d] == 41) and _is(cps[d + 1], cls, CLASS_SPACE)


@jit
def _letter(c, cls):
    """A letter of the wordy test: a word character that is not a digit nor ``_`` (``[^\\W\\d_]``)."""
    return c < 0x10000 and (cls[c] & (CLASS_WORD | CLASS_DIGIT)) == CLASS_WORD and c != 95


@jit
def _scan(cps, a, n, cls, tab_stop, indent_stop):
    """One pass over the line that starts at ``cps[a]``: ``(end, width, lead, tokens, evidence, words, letters,
    spaces)``.

    ``end``: the index of its newline (or ``n``); ``width``: its cells with tabs expanded (``_codes.expand_tabs``)
    and trailing space dropped; ``lead``: the cells of its leading spaces and tabs; ``tokens``: whether it holds a
    code token (``=>``, ``->``, ``==``, ``!=``, ``::``, ``&&``, ``||``); ``evidence``: a character of
    :data:`~._line_rule.CODE_PUNCT`, a ``(`` after a word character or a ``.`` between two; ``words`` and
    ``letters``: the runs of two or more letters (:func:`_letter`) and their letters; ``spaces``: its U+0020 between
    its first and last non-space characters. One loop instead of five."""
    col = last = lead = words = letters = run = spaces = pending = 0
    indent, seen, tokens, evidence = True, False, False, False
    prev = prev2 = 0
    b = a
    while b < n:
        c = cps[b]
        if c == 10:
            break
        if b > a and not tokens and ((c == 62 and (prev == 61 or prev == 45)) or (c == 61 and (
                prev == 61 or prev == 33)) or (c == prev and (c == 58 or c == 38 or c == 124))):
            tokens = True
        if not evidence and (_one_of(c, _PUNCT) or (b > a and (c == 40 and _is(prev, cls, CLASS_WORD)) or (
                b > a + 1 and prev == 46 and _is(prev2, cls, CLASS_WORD) and _is(c, cls, CLASS_WORD)))):
            evidence = True
        prev2, prev = prev, c
        if _letter(c, cls):
            run += 1
        else:
            if run >= 2:
                words += 1
                letters += run
            run = 0
        if c == 9:
            stop = indent_stop if indent else tab_stop
            col += stop - col % stop
        else:
            if c != 32 and indent:
                indent = False
                lead = col
            col += 1
            if not _is(c, cls, CLASS_SPACE):
                last = col
                seen = True
                pending = 0
            elif c == 32 and seen:
                spaces += 1
                pending += 1
        b += 1
    if run >= 2:
        words += 1
        letters += run
    return b, last, lead, tokens, evidence, words, letters, spaces - pending


@jit
def _features(cps, a, b, listing, cls, tokens, evidence, words, letters, spaces):
    """The feature bits of line ``cps[a:b]`` (:data:`~snapglyph.raster._line_rule.KIND_BITS` and the ``F_`` bits;
    the counts from :func:`_scan`)."""
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
    elif _item(cps, p, b, cls):
        f = _ITEM
    elif _shape(cps, a, b, p, q, cls):
        f = _CODE
    else:
        f = 0
    end = cps[q - 1]
    wordy = words >= WORDY_MIN_WORDS and letters + spaces >= WORDY_SHARE * (q - p)
    if wordy:
        f |= F_WORDY
    if _one_of(end, _WORDY_END) or (not wordy and (end == 44 or end == 125)):  # } and , only where not wordy
        f |= F_ENDS_CODE
    if _row_of(cps, p, _run(cps, p, b, cls, CLASS_WORD), _KEY_TABLE) and (not wordy or end == 58 or end == 123):
        f |= F_KEYWORD
    if cps[a] == 43 or cps[a] == 32 or cps[a] == 45:
        f |= F_DIFF_LINE
    if tokens:
        f |= F_TOKENS
    if evidence and _indented(cps, a, b, p, cls):
        f |= F_EVIDENCE
    return f


@jit
def _letter_of(f, listing):
    """The letter (ASCII code) of a line outside fences, blanks and diffs from its feature bits ``f``."""
    kind = f & KIND_BITS
    if kind == _ITEM:
        return 78
    if kind == _CODE:
        return 67
    if (f & F_WORDY) != 0:
        return 67 if (f & (F_ENDS_CODE | F_KEYWORD)) != 0 or (listing and (f & F_TOKENS) != 0) else 80
    if (f & (F_ENDS_CODE | F_KEYWORD | F_TOKENS | F_EVIDENCE)) != 0:
        return 67
    return 67 if listing else 78


@jit
def line_kinds(cps, listing, cls, tab_stop, indent_stop, out, widths, leads):
    """Classify each line of a segment for block planning and measure it.

    Parameters
    ----------
    cps : uint32 array (n,)
        The segment's code points, its newlines as 10 (CRLF, U+2028 and U+2029 made newlines), each above U+FFFF
        replaced by one of the plane of the same class.
    listing : bool
        Tool output or a tool call: a neutral line counts as code-like, a wordy one with a code token too.
    cls : uint8 array (0x10000,)
        :data:`CLASS_SPACE`, :data:`CLASS_WORD` and :data:`CLASS_DIGIT` of each code point of the Basic
        Multilingual Plane.
    tab_stop, indent_stop : int
        Tab stops after text and in indentation (``_codes.TAB_STOP``, ``_codes.INDENT_TAB_STOP``).
    out : uint8 array (lines,)
        Per line (one more than the newlines): its letter as its ASCII code: ``C`` code-like, ``P`` prose (wordy),
        ``B`` blank, ``N`` neutral.
    widths, leads : int32 arrays (lines,)
        Each line's width in cells, one a character, and the cells of its leading spaces and tabs (0 for a blank
        line). Modified in place, like ``out``.
    """
    fenced = False
    diff = False
    a = 0
    n = len(cps)
    for i in range(len(out)):
        b, width, lead, tokens, evidence, words, letters, spaces = _scan(cps, a, n, cls, tab_stop, indent_stop)
        f = _features(cps, a, b, listing, cls, tokens, evidence, words, letters, spaces)
        widths[i] = width
        leads[i] = lead if width > 0 else 0
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
            out[i] = 67 if diff else _letter_of(f, listing)
        a = b + 1


@jit
def _line_rows(w, ld, strip, colw):
    """Rows a line of ``w`` cells with ``ld`` cells of indentation takes in a column of ``colw`` cells once the
    block's common indentation ``strip`` is taken off (the rule of :func:`snapglyph.raster._kernels.block_rows`,
    one cell a character), and whether it is broken: wider than its column, or indented past half of it."""
    if w == 0:
        return 1, False
    ind = ld - strip
    h = min(ind, colw // 2)
    drawn = w - ld + h
    if drawn <= colw:
        return 1, ind > h
    return 1 + (drawn - colw + colw - h - 2) // (colw - h - 1), True


@jit
def choose_band(widths, leads, a, b, cols, kmax, min_colw, min_rows, max_share):
    """The columns of a block band from the widths and indentations of its lines ``widths[a:b]``, ``leads[a:b]``
    (int32, cells): returns ``(k, colw)``, by the rule of :func:`snapglyph.raster.blocks.choose_columns`."""
    n = b - a
    nonblank = 0
    strip = -1
    for i in range(a, b):
        if widths[i] != 0:
            nonblank += 1
            if strip < 0 or leads[i] < strip:
                strip = leads[i]
    best_h, best_k = -1, 1
    top = min(kmax, max(1, n // min_rows))
    for k in range(1, top + 1):
        colw = (cols - (k - 1)) // k
        if k > 1 and colw < min_colw:
            break
        over = 0
        rows = 0
        for i in range(a, b):
            r, broken = _line_rows(widths[i], leads[i], strip, colw)
            rows += r
            over += broken
        if k > 1 and over > max_share * nonblank:
            continue
        h = -(-rows // k)
        if best_h < 0 or h < best_h:
            best_h, best_k = h, k
    return best_k, (cols - (best_k - 1)) // best_k
