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
   (U+2400 + code, U+2421); C1 controls become U+FFFD.
4. NFC composition (a decomposed ``é`` becomes one cell).
5. Zero-width characters are dropped and counted: combining marks (categories Mn, Me), format characters (Cf: ZWJ,
   ZWNJ, bidi marks, soft hyphen), variation selectors, emoji skin-tone modifiers, and a pictograph joined to the
   previous one by a ZWJ (so a ZWJ emoji family is drawn as its first person: one 2-cell glyph).
6. Tabs expand to the next multiple of 8 cells from the source line start (wide characters count 2; a symbol the
   renderer draws as a short label, ``label_cells``, counts the label's length, so tab-aligned columns stay aligned).

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
import threading
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from ..errors import InternalError

__all__ = ["Normalized", "cell_table", "char_cells", "normalize", "normalize_codes"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# One token of terminal input: an escape sequence, a control, or a run of ordinary characters.
_TOKEN = re.compile(
    r"(?P<osc>(?:\x1b\]|\x9d)(?P<oscbody>[^\x07\x1b\x9c]*)(?:\x07|\x1b\\|\x9c)?)"
    r"|(?P<str>(?:\x1b[P_^X]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?)"
    r"|(?P<csi>(?:\x1b\[|\x9b)(?P<params>[0-?]*)[ -/]*(?P<final>[@-~])?)"
    r"|(?P<esc>\x1b[ -/]*[0-~]?)"
    r"|(?P<cr>\r)|(?P<bs>\x08)|(?P<nl>\n)"
    r"|(?P<ctl>[\x00-\x08\x0b-\x1f\x7f-\x9f])"
    r"|(?P<run>[^\x00-\x08\x0a-\x1f\x7f-\x9f]+)"
)
_IMAGE_PLACEHOLDER = "[inline image]"
_ZWJ = "\u200d"
_ZW_CACHE: dict[str, bool] = {}
_CELLS: np.ndarray | None = None  # int8 (0x110000,): char_cells of each code point, -1 where not computed yet
_CELLS_LOCK = threading.Lock()


def _zero_width(ch: str) -> bool:
    z = _ZW_CACHE.get(ch)
    if z is None:
        cp = ord(ch)
        cat = unicodedata.category(ch)
        z = (cat in ("Mn", "Me", "Cf") or 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF
             or 0x1F3FB <= cp <= 0x1F3FF or 0x1160 <= cp <= 0x11FF)
        _ZW_CACHE[ch] = z
    return z


def char_cells(ch: str) -> int:
    """Return the number of cells one character takes: 0 (zero-width), 1, or 2 (East-Asian wide or fullwidth).

    Parameters
    ----------
    ch : str
        A single character (not a lone surrogate).

    Returns
    -------
    int
        Number of cells (0, 1 or 2).
    """
    if ch < "\u0300":
        return 1
    if _zero_width(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


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
    """

    text: str
    synthetic: list[tuple[int, int]] = field(default_factory=list)
    removed: int = 0
    zero_width: int = 0


def _terminal(s: str) -> tuple[str, list[tuple[int, int]], int]:
    """Apply escapes, CR, backspace and control pictures; return text, synthetic spans and removed count."""
    out: list[str] = []  # finished lines, joined by "\n"
    synthetic: list[tuple[int, int]] = []
    removed = 0
    line: list[str] = []
    syn_line: list[bool] = []
    cur = 0

    def write(chars: str, syn: bool) -> None:
        nonlocal cur, removed
        if cur == len(line):
            line.extend(chars)
            syn_line.extend([syn] * len(chars))
            cur += len(chars)
            return
        for c in chars:
            if cur < len(line):
                if not syn_line[cur]:
                    removed += 1
                line[cur] = c
                syn_line[cur] = syn
            else:
                line.append(c)
                syn_line.append(syn)
            cur += 1

    pos = 0
    base = 0

    def flush(nl: bool) -> None:
        nonlocal base, line, syn_line, cur
        start = base
        i = 0
        while i < len(line):
            if syn_line[i]:
                j = i
                while j < len(line) and syn_line[j]:
                    j += 1
                synthetic.append((start + i, start + j))
                i = j
            else:
                i += 1
        out.append("".join(line) + ("\n" if nl else ""))
        base += len(line) + (1 if nl else 0)
        line, syn_line, cur = [], [], 0

    for m in _TOKEN.finditer(s):
        if m.start() != pos:  # pragma: no cover - the token pattern matches every character
            raise InternalError(f"terminal tokenizer skipped {s[pos:m.start()]!r}")
        kind = m.lastgroup
        text = m.group(0)
        pos = m.end()
        if kind == "run":
            write(text, False)
        elif kind == "nl":
            flush(True)
        elif kind == "cr":
            removed += 1
            cur = 0
        elif kind == "bs":
            removed += 1
            cur = max(0, cur - 1)
        elif kind == "ctl":
            c = ord(text)
            if c < 0x20:
                write(chr(0x2400 + c), False)
            elif c == 0x7F:
                write("\u2421", False)
            else:
                write("\ufffd", False)
        else:
            removed += len(text)
            if kind == "osc" and (m.group("oscbody") or "").startswith("1337;File="):
                write(_IMAGE_PLACEHOLDER, True)
            elif kind == "csi" and m.group("final") == "K":
                p = m.group("params") or "0"
                if p in ("0", ""):
                    del line[cur:], syn_line[cur:]
                elif p == "2":
                    removed += sum(1 for x in syn_line if not x)
                    line[:] = [" "] * cur
                    syn_line[:] = [True] * cur
                    continue
    if pos != len(s):  # pragma: no cover
        raise InternalError("terminal tokenizer stopped early")
    flush(False)
    return "".join(out), synthetic, removed


def _terminal_lines(s: str) -> tuple[str, list[tuple[int, int]], int]:
    """Run :func:`_terminal` only over the lines that hold a control character (an escape never spans lines)."""
    out: list[str] = []
    synthetic: list[tuple[int, int]] = []
    removed = 0
    pos = 0  # source index copied up to
    n = 0  # output length so far
    m = _CONTROL.search(s)
    while m is not None:
        a = s.rfind("\n", 0, m.start()) + 1
        b = s.find("\n", m.start())
        if b < 0:
            b = len(s)
        out.append(s[pos:a])
        n += a - pos
        line, syn, r = _terminal(s[a:b])
        removed += r
        synthetic.extend((x + n, y + n) for x, y in syn)
        out.append(line)
        n += len(line)
        pos = b
        m = _CONTROL.search(s, b)
    out.append(s[pos:])
    return "".join(out), synthetic, removed


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
    for piece in pieces[:-1]:
        out.append(piece)
        col += len(piece) if ascii_ else sum(_cells(c, label_cells) for c in piece)
        n += len(piece)
        k = 8 - col % 8
        out.append(" " * k)
        if k > 1:
            spans.append((n + 1, n + k))
        n += k
        col += k
    out.append(pieces[-1])
    return "".join(out)


def _expand_tabs(s: str, synthetic: list[tuple[int, int]],
                 label_cells: dict[str, int] | None = None) -> tuple[str, list[tuple[int, int]]]:
    """Expand tabs to the next multiple of 8 cells; shift the synthetic spans; add the fill as synthetic."""
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
    col = 0
    for i, c in enumerate(s):
        if c == "\n":
            col = 0
            chars.append(c)
            flags.append(syn[i])
        elif c == "\t":
            k = 8 - col % 8
            chars.append(" " * k)
            flags.extend([syn[i]] + [1] * (k - 1))
            col += k
        else:
            chars.append(c)
            flags.append(syn[i])
            col += _cells(c, label_cells)
    spans = []
    i = 0
    while i < len(flags):
        if flags[i]:
            j = i
            while j < len(flags) and flags[j]:
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return "".join(chars), spans


def _drop_zero_width(s: str) -> tuple[str, int]:
    """Remove zero-width characters (and pictographs joined by ZWJ); return the text and how many were dropped."""
    zw = {c for c in set(s) if c >= "\u0300" and _zero_width(c)}
    if not zw:
        return s, 0
    n0 = len(s)
    if _ZWJ in zw:
        # A pictograph after a ZWJ joins the previous one: it takes no cell of its own.
        s = re.sub("\u200d[\ufe0f\U0001f3fb-\U0001f3ff]*[\u2600-\u27bf\U0001f000-\U0001faff]", "", s)
    s = s.translate({ord(c): None for c in zw})
    return s, n0 - len(s)


def _prepare(s: str) -> tuple[str, list[tuple[int, int]], int, int]:
    """Steps 1-4 of the normalization: return the text, its synthetic spans, the removed and zero-width counts."""
    removed = 0
    synthetic: list[tuple[int, int]] = []
    if not s.isascii():
        if _SURROGATE.search(s):
            s = _SURROGATE.sub("\ufffd", s)
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
    if not s.isascii():
        if not unicodedata.is_normalized("NFC", s):
            if synthetic:
                # Keep placeholder spans exact: normalize each source stretch between them on its own.
                pieces, spans, pos, n = [], [], 0, 0
                for a, b in synthetic:
                    src = unicodedata.normalize("NFC", s[pos:a])
                    zero_width += (a - pos) - len(src)
                    pieces.append(src)
                    n += len(src)
                    pieces.append(s[a:b])
                    spans.append((n, n + b - a))
                    n += b - a
                    pos = b
                tail = unicodedata.normalize("NFC", s[pos:])
                zero_width += (len(s) - pos) - len(tail)
                pieces.append(tail)
                s, synthetic = "".join(pieces), spans
            else:
                n0 = len(s)
                s = unicodedata.normalize("NFC", s)
                zero_width += n0 - len(s)
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
    """
    if not isinstance(s, str):
        from ..errors import InputError

        raise InputError(f"text must be a str, not {type(s).__name__}")
    s, synthetic, removed, zero_width = _prepare(s)
    if not s.isascii():
        # Placeholders are ASCII, so dropping zero-width characters never touches them; shift their spans.
        if synthetic:
            pieces, spans, pos, n = [], [], 0, 0
            for a, b in synthetic:
                src, z = _drop_zero_width(s[pos:a])
                zero_width += z
                pieces.append(src)
                n += len(src)
                pieces.append(s[a:b])
                spans.append((n, n + b - a))
                n += b - a
                pos = b
            tail, z = _drop_zero_width(s[pos:])
            zero_width += z
            pieces.append(tail)
            s, synthetic = "".join(pieces), spans
        else:
            s, z = _drop_zero_width(s)
            zero_width += z
    if "\t" in s:
        s, synthetic = _expand_tabs(s, synthetic, label_cells)
    return Normalized(s, synthetic, removed, zero_width)


def cell_table(cps: np.ndarray | None = None) -> np.ndarray:
    """Return the process-wide table of :func:`char_cells` per code point, filled for every code point of ``cps``.

    Parameters
    ----------
    cps : numpy.ndarray or None
        1-D integer array of code points ``0..0x10FFFF`` (no lone surrogate) whose entries must be filled.

    Returns
    -------
    numpy.ndarray
        ``(0x110000,)`` int8: cells (0, 1 or 2) of each code point, -1 where not computed yet (entries below
        U+0300 are always 1). Shared and filled in place by later calls; do not modify.
    """
    global _CELLS
    with _CELLS_LOCK:
        if _CELLS is None:
            t = np.full(0x110000, -1, np.int8)
            t[:0x300] = 1
            _CELLS = t
        t = _CELLS
        if cps is not None and len(cps):
            todo = np.unique(cps[t[cps] < 0])
            for cp in todo.tolist():
                t[cp] = char_cells(chr(cp))
    return t


def normalize_codes(s: str, table: np.ndarray, head: int = 0,
                    label_len: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """Normalize ``s`` like :func:`normalize` and map it to stream codes, with one compiled pass for steps 5-6.

    Equal, element for element, to mapping ``normalize(s).text`` through ``table`` (newline -> -1) with the
    synthetic spans as weight 0; it imports numba (use :func:`normalize` where start-up time matters).

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
    """
    if not isinstance(s, str):
        from ..errors import InputError

        raise InputError(f"text must be a str, not {type(s).__name__}")
    from ._kernels import expand_codes

    s, synthetic, removed, zero_width = _prepare(s)
    cps = np.frombuffer(s.encode("utf-32-le"), np.uint32)
    spans = np.array(synthetic, np.int64).reshape(-1, 2)
    size = head + len(cps) + 7 * s.count("\t")
    codes = np.empty(size, np.int32)
    srcw = np.empty(size, np.uint8)
    codes[:head] = 0
    srcw[:head] = 0
    cells = cell_table()
    lab = np.zeros(1, np.uint8) if label_len is None else label_len
    stop, zw, unseen = expand_codes(cps, spans, cells, table, codes, srcw, head, lab)
    if stop < 0:  # code points not seen before: fill their cells, then run again
        cells = cell_table(cps[cps >= 0x300])
        stop, zw, unseen = expand_codes(cps, spans, cells, table, codes, srcw, head, lab)
    return codes[:stop], srcw[:stop], zero_width + zw, removed, unseen
