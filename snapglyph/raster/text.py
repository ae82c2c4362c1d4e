"""Normalization: any Python ``str`` -> the characters a terminal would show, with an exact accounting.

Applied to each document segment on its own, in this order:

1. Lone surrogates become U+FFFD (drawn as the replacement glyph and counted as replaced).
2. CRLF becomes one newline (the CR counts as removed); U+2028 and U+2029 become newlines.
3. Terminal controls, only in segments that hold any: ANSI CSI (SGR colors, cursor hiding ...), OSC (hyperlinks,
   window titles; ended by BEL or ST), DCS/APC/PM/SOS strings and two-byte escapes are removed; an OSC 1337 inline
   image becomes the placeholder ``[inline image]``. Escapes end at the line end (an unterminated OSC string does not
   swallow later lines). A carriage return moves to the line start and later characters
   overwrite, a backspace moves one back, ``CSI K`` erases to the line end, so a progress bar leaves only its final
   state (overwritten characters count as removed). Other C0 controls and DEL become their visible Control Pictures
   (U+2400 + code, U+2421; drawn as the replacement box where the cell's fonts have none, as at the default 6x12);
   C1 controls become U+FFFD. Escapes start with ESC only: a C1 character is never read as an 8-bit CSI or OSC.
4. NFC composition (a decomposed ``é`` becomes one cell), bounded by the pinned Unicode version
   (:func:`snapglyph.raster.widths.nfc`): NFC is the one step that reads the running Python's ``unicodedata``, and
   it is kept because Unicode's normalization stability policy makes it give the same result on every Python for
   characters the pinned version assigns; code points it leaves unassigned are not composed (a newer Python would
   compose some of them, an older one could not), so the text and its PNG bytes do not depend on the interpreter.
5. Zero-width characters are dropped and counted: from U+0300 up, combining marks (categories Mn, Me), format
   characters (Cf: ZWJ, ZWNJ, bidi marks), variation selectors, emoji skin-tone modifiers, Hangul medial and final
   jamo, and a pictograph joined to the previous one by a ZWJ (so a ZWJ emoji family is drawn as its first person:
   one 2-cell glyph). Characters below U+0300 all keep their cell (the soft hyphen U+00AD too).
6. Tabs expand to spaces by :func:`snapglyph.raster._codes.tab_fill`: in a line's indentation to the next multiple
   of :data:`~snapglyph.raster._codes.INDENT_TAB_STOP` cells, after other text to the next multiple of
   :data:`~snapglyph.raster._codes.TAB_STOP` cells from the source line start (wide characters count 2; a symbol the
   renderer draws as a short label, ``label_cells``, counts the label's length, so tab-aligned columns stay aligned).

Cells (steps 5 and 6) come from :mod:`snapglyph.raster.widths`, tables generated for one pinned Unicode version
(14.0.0), never from the running Python's ``unicodedata``.

:func:`normalize_codes` does steps 1-4 the same way, then steps 5 and 6 and the glyph lookup in one compiled pass
over the code points (the renderer uses it for long segments); tests hold it equal to :func:`normalize`.

Right-to-left text (Hebrew, Arabic) is kept in logical (storage) order, one character per cell, left to right; no
bidi reordering or shaping is done, so a reader sees the characters in the order they were typed.

The accounting identity, per segment and per render: ``drawn + replaced + zero_width + removed == len(source)``,
where drawn and replaced are counted by the renderer over the non-synthetic characters of :attr:`Normalized.text`
(a symbol drawn as its label is one replaced character; the label's letters are synthetic).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import InternalError
from ..model.messages import LONE_SURROGATE
from . import native
from ._codes import INDENT_TAB_STOP, TAB_STOP, tab_fill
from .terminal import _CONTROL, _runs, _terminal_lines  # noqa: F401 (_CONTROL: tests)
from .widths import cell_table, char_cells, nfc

__all__ = ["LONE_SURROGATE", "Normalized", "cell_table", "char_cells", "normalize", "normalize_codes"]

_ZWJ = "\u200d"


@dataclass
class Normalized:
    """The result of :func:`normalize` on one segment.

    Attributes
    ----------
    text : str
        Characters to lay out: no control character but ``\\n``; no zero-width character; tabs expanded.
    synthetic : list of tuple of int
        ``(start, end)`` index ranges of ``text`` that stand for no source character (tab fill, placeholders).
    removed : int
        Source characters removed as escapes or terminal controls (CR, backspace, overwritten characters).
    zero_width : int
        Source characters that take no cell (combining marks, format characters, joined emoji).

    Examples
    --------
    >>> normalize("\\x1b]1337;File=inline=1:AAAA\\x07 done\\x01")
    Normalized(text='[inline image] done␁', synthetic=[(0, 14)], removed=26, zero_width=0)
    """

    text: str
    synthetic: list[tuple[int, int]] = field(default_factory=list)
    removed: int = 0
    zero_width: int = 0


def _cells(c: str, label_cells: dict[str, int] | None) -> int:
    """Cells ``c`` takes for tab stops: its label's length where it is drawn as a label, else :func:`char_cells`."""
    if label_cells and c in label_cells:
        return label_cells[c]
    return char_cells(c)


def _expand_line(line: str, n: int, spans: list[tuple[int, int]], label_cells: dict[str, int] | None = None) -> str:
    """Expand the tabs of one line that starts at output index ``n``; append the fill spans to ``spans``."""
    out: list[str] = []
    col = 0
    ascii_ = line.isascii()
    pieces = line.split("\t")
    indent = True
    for piece in pieces[:-1]:
        out.append(piece)
        col += len(piece) if ascii_ else sum(_cells(c, label_cells) for c in piece)
        n += len(piece)
        indent = indent and not piece.strip(" ")
        k = tab_fill(col, indent)
        out.append(" " * k)
        if k > 1:
            spans.append((n + 1, n + k))
        n += k
        col += k
    out.append(pieces[-1])
    return "".join(out)


def _expand_tabs(s: str, synthetic: list[tuple[int, int]],
                 label_cells: dict[str, int] | None = None) -> tuple[str, list[tuple[int, int]]]:
    """Expand tabs (:func:`snapglyph.raster._codes.tab_fill`); shift the synthetic spans; add the fill as
    synthetic."""
    if not synthetic:
        out_lines: list[str] = []
        spans: list[tuple[int, int]] = []
        n = 0
        for line in s.split("\n"):
            if out_lines:
                n += 1
            if "\t" in line:
                line = _expand_line(line, n, spans, label_cells)
            out_lines.append(line)
            n += len(line)
        return "\n".join(out_lines), spans
    syn = bytearray(len(s))
    for a, b in synthetic:
        syn[a:b] = b"\x01" * (b - a)
    chars: list[str] = []
    flags: list[int] = []
    col, indent = 0, True
    for i, c in enumerate(s):
        if c == "\n":
            col, indent = 0, True
            chars.append(c)
            flags.append(syn[i])
        elif c == "\t":
            k = tab_fill(col, indent)
            chars.append(" " * k)
            flags.extend([syn[i]] + [1] * (k - 1))
            col += k
        else:
            chars.append(c)
            flags.append(syn[i])
            col += _cells(c, label_cells)
            indent = indent and c == " "
    return "".join(chars), _runs(flags)


def _per_stretch(s: str, synthetic: list[tuple[int, int]],
                 fn: Callable[[str], str]) -> tuple[str, list[tuple[int, int]], int]:
    """Apply ``fn`` to each stretch of ``s`` between the synthetic spans, which stay exact (shifted); return the
    text, its spans and how many characters ``fn`` took away."""
    if not synthetic:
        out = fn(s)
        return out, synthetic, len(s) - len(out)
    pieces, spans, pos, n = [], [], 0, 0
    for a, b in synthetic:
        src = fn(s[pos:a])
        pieces += (src, s[a:b])
        spans.append((n + len(src), n + len(src) + b - a))
        n += len(src) + b - a
        pos = b
    pieces.append(fn(s[pos:]))
    out = "".join(pieces)
    return out, spans, len(s) - len(out)


def _drop_zero_width(s: str) -> str:
    """Remove zero-width characters (and pictographs joined by ZWJ)."""
    zw = {c for c in set(s) if not char_cells(c)}
    if not zw:
        return s
    if _ZWJ in zw:
        # A pictograph after a ZWJ joins the previous one: it takes no cell of its own.
        s = re.sub("\u200d[\ufe0f\U0001f3fb-\U0001f3ff]*[\u2600-\u27bf\U0001f000-\U0001faff]", "", s)
    return s.translate({ord(c): None for c in zw})


def _prepare(s: str) -> tuple[str, list[tuple[int, int]], int, int]:
    """Steps 1-4 of the normalization: return the text, its synthetic spans, the removed and zero-width counts."""
    removed = 0
    synthetic: list[tuple[int, int]] = []
    if not s.isascii():
        if LONE_SURROGATE.search(s):
            s = LONE_SURROGATE.sub("\ufffd", s)
        if "\u2028" in s or "\u2029" in s:
            s = s.replace("\u2028", "\n").replace("\u2029", "\n")
    if "\r\n" in s:
        n0 = len(s)
        s = s.replace("\r\n", "\n")
        removed += n0 - len(s)
    if _CONTROL.search(s):
        s, synthetic, r = _terminal_lines(s)
        removed += r
    zero_width = 0
    if not s.isascii():  # NFC composes each source stretch between placeholders on its own
        s, synthetic, zero_width = _per_stretch(s, synthetic, nfc)
    return s, synthetic, removed, zero_width


def normalize(s: str, label_cells: dict[str, int] | None = None) -> Normalized:
    """Normalize one segment of source text for layout (see the module docstring for every rule).

    Parameters
    ----------
    s : str
        Any Python string: controls, escapes, lone surrogates and any length are accepted.
    label_cells : dict or None
        Characters the renderer draws as a label (:attr:`snapglyph.raster.atlas.Atlas.label_cells`) -> the label's
        length, which is then the cells they take for tab stops; the characters themselves stay in the text.

    Returns
    -------
    Normalized
        Text to lay out, synthetic spans, and the removed and zero-width counts.

    Raises
    ------
    InputError
        If ``s`` is not a ``str``.

    Examples
    --------
    >>> n = normalize("\\x1b[1mbuild\\x1b[0m 40%\\rbuild 100%\\nzero\\u200bwidth")
    >>> n.text, n.removed, n.zero_width
    ('build 100%\\nzerowidth', 18, 1)
    """
    if not isinstance(s, str):
        from ..errors import InputError

        raise InputError(f"text must be a str, not {type(s).__name__}")
    s, synthetic, removed, zero_width = _prepare(s)
    if not s.isascii():  # placeholders are ASCII: dropping zero-width characters never touches them
        s, synthetic, z = _per_stretch(s, synthetic, _drop_zero_width)
        zero_width += z
    if "\t" in s:
        s, synthetic = _expand_tabs(s, synthetic, label_cells)
    return Normalized(s, synthetic, removed, zero_width)


def normalize_codes(s: str, table: np.ndarray, head: int = 0, label_len: np.ndarray | None = None,
                    cps: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """Normalize ``s`` like :func:`normalize` and map it to stream codes, with one compiled pass for steps 5-6.

    Equal, element for element, to mapping ``normalize(s).text`` through ``table`` (newline -> -1) with the
    synthetic spans as weight 0; it calls compiled kernels (:func:`snapglyph.raster.native.kernels`: numba's
    import where no ahead-of-time build is there; :func:`normalize` needs none). A compiled pass first flags the
    characters that steps 1-3 act on (:func:`snapglyph.raster._text_kernels.text_flags`); a text with none, the
    common case, goes to NFC directly, its code points encoded once.

    Parameters
    ----------
    s : str
        Any Python string.
    table : numpy.ndarray
        ``(0x110000,)`` int32 glyph index of each code point, negative where not known yet
        (:attr:`snapglyph.raster.atlas.Atlas.table`).
    head : int
        Leading elements of the returned arrays left for the caller (codes and weights 0).
    label_len : numpy.ndarray or None
        uint8 label length of each glyph index (:attr:`snapglyph.raster.atlas.Atlas.label_len`): a glyph with a label
        takes that many cells for tab stops, as ``label_cells`` in :func:`normalize`.
    cps : numpy.ndarray or None
        ``s``'s code points where the caller has them: uint32 ``(len(s),)``, surrogates as they are
        (``s.encode("utf-32-le", "surrogatepass")``); None to encode here.

    Returns
    -------
    codes : numpy.ndarray
        ``(head + n,)`` int32: glyph indices, -1 for a newline, or ``snapglyph.raster._kernels.CODE_UNSEEN - cp`` for a
        code point ``cp`` with a negative ``table`` entry.
    srcw : numpy.ndarray
        ``(head + n,)`` uint8 source weight: 1 per element that stands for a source character, else 0.
    zero_width, removed : int
        As :attr:`Normalized.zero_width` and :attr:`Normalized.removed`.
    unseen : int
        Number of ``CODE_UNSEEN - cp`` elements.

    Raises
    ------
    InputError
        If ``s`` is not a ``str``.

    Examples
    --------
    >>> table = np.full(0x110000, -1, np.int32); table[ord("h")], table[ord("i")] = 7, 8
    >>> codes, srcw, zero_width, removed, unseen = normalize_codes("hi\\r\\nhe\\u0301", table, head=1)
    >>> codes.tolist(), srcw.tolist(), zero_width, removed, unseen  # é (U+E9) is unseen: CODE_UNSEEN - 0xE9
    ([0, 7, 8, -1, 7, -249], [0, 1, 1, 1, 1, 1], 1, 1, 1)
    """
    if not isinstance(s, str):
        from ..errors import InputError

        raise InputError(f"text must be a str, not {type(s).__name__}")
    kern = native.kernels()
    if cps is None:
        cps = np.frombuffer(s.encode("utf-32-le", "surrogatepass"), np.uint32)
    if kern.text_flags(cps):  # a control, a lone surrogate or a line separator: steps 1-4 in Python
        s, synthetic, removed, zero_width = _prepare(s)
        cps = np.frombuffer(s.encode("utf-32-le"), np.uint32)
    else:  # steps 1-3 would leave the text as it is: only NFC (step 4) may change it
        synthetic, removed, zero_width = [], 0, 0
        if not s.isascii():
            composed = nfc(s)
            if composed is not s:
                zero_width = len(s) - len(composed)
                s = composed
                cps = np.frombuffer(s.encode("utf-32-le"), np.uint32)
    spans = np.array(synthetic, np.int64).reshape(-1, 2)
    size = head + len(cps) + (max(TAB_STOP, INDENT_TAB_STOP) - 1) * s.count("\t")
    codes = np.empty(size, np.int32)
    srcw = np.empty(size, np.uint8)
    codes[:head] = 0
    srcw[:head] = 0
    cells = cell_table()
    lab = np.zeros(1, np.uint8) if label_len is None else label_len
    stop, zw, unseen = kern.expand_codes(cps, spans, cells, table, codes, srcw, head, TAB_STOP, INDENT_TAB_STOP, lab)
    if stop < 0:  # pragma: no cover - the cell table holds every code point
        raise InternalError(f"no cell width for U+{int(cps[-1 - stop]):04X}")
    return codes[:stop], srcw[:stop], zero_width + zw, removed, unseen
