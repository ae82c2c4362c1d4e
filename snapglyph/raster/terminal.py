"""Step 3 of :func:`snapglyph.raster.text.normalize`: terminal controls applied as a terminal shows them.

ANSI CSI (SGR colors, cursor hiding ...), OSC (hyperlinks, window titles; ended by BEL or ST), DCS/APC/PM/SOS
strings and two-byte escapes are removed; an OSC 1337 inline image becomes the placeholder ``[inline image]``.
Escapes end at the line end. A carriage return moves to the line start and later characters overwrite, a backspace
moves one back, ``CSI K`` erases to the line end, so a progress bar leaves only its final state (overwritten
characters count as removed). Other C0 controls and DEL become their visible Control Pictures; C1 controls become
U+FFFD. Escapes start with ESC, or with U+009B, the 8-bit CSI, where a whole control sequence with parameters follows
it (parameter bytes, intermediates and a final byte, ECMA-48 5.4:
https://ecma-international.org/publications-and-standards/standards/ecma-48/, read 2026-12-07), so ``\x9b31m`` is
removed as its 7-bit form ``ESC [ 31 m`` is; a U+009B followed by a letter (mojibake) and every other C1 character
(the 8-bit OSC, DCS, ST ...) is never read as an introducer.
"""

from __future__ import annotations

import re

from ..errors import InternalError

__all__ = ["terminal_lines"]

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# One token of terminal input: an escape sequence, a control, or a run of ordinary characters. Sequences start with
# ESC, or with U+009B (CSI) only where parameters and a final byte follow: any other C1 character
# (U+0080-U+009F) is not taken as the 8-bit form of OSC or DCS, which UTF-8 terminals do not read either; in text it
# is mostly mojibake (the right quote's UTF-8 bytes read as Latin-1 end in U+009D), and as an introducer it swallowed
# the rest of its line (found by a fresh-eyes test, 2026-12-03). The 8-bit CSI drawn while ESC [ was removed was
# issue 31's fault (item 6); its final byte bounds it to the sequence.
_TOKEN = re.compile(
    r"(?P<osc>\x1b\](?P<oscbody>[^\x07\x1b\x9c]*)(?:\x07|\x1b\\|\x9c)?)"
    r"|(?P<str>\x1b[P_^X][^\x1b\x9c]*(?:\x1b\\|\x9c)?)"
    r"|(?P<csi>(?:\x1b\[|\x9b(?=[0-?]+[ -/]*[@-~]))(?P<params>[0-?]*)[ -/]*(?P<final>[@-~])?)"
    r"|(?P<esc>\x1b[ -/]*[0-~]?)"
    r"|(?P<cr>\r)|(?P<bs>\x08)|(?P<nl>\n)"
    r"|(?P<ctl>[\x00-\x08\x0b-\x1f\x7f-\x9f])"
    r"|(?P<run>[^\x00-\x08\x0a-\x1f\x7f-\x9f]+)"
)
_IMAGE_PLACEHOLDER = "[inline image]"

def _runs(flags: list, base: int = 0) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of the runs of true ``flags``, shifted by ``base``."""
    spans = []
    i, n = 0, len(flags)
    while i < n:
        if flags[i]:
            j = i
            while j < n and flags[j]:
                j += 1
            spans.append((base + i, base + j))
            i = j
        else:
            i += 1
    return spans


class _Screen:
    """One segment replayed as a terminal shows it: the finished lines, the line being written and its cursor.

    ``line`` holds the current line's characters and ``syn`` whether each is synthetic (a placeholder or erase fill);
    ``removed`` counts the source characters that escapes, CR, backspace and overwriting took away.
    """

    def __init__(self) -> None:
        self.out: list[str] = []  # finished lines, each with its "\n"
        self.synthetic: list[tuple[int, int]] = []  # spans of synthetic characters in the finished text
        self.removed = 0
        self.base = 0  # length of the finished text
        self.line: list[str] = []
        self.syn: list[bool] = []
        self.cur = 0

    def write(self, chars: str, syn: bool) -> None:
        """Write ``chars`` at the cursor, overwriting (and counting as removed) the source characters there."""
        line, flags = self.line, self.syn
        if self.cur == len(line):
            line.extend(chars)
            flags.extend([syn] * len(chars))
            self.cur += len(chars)
            return
        for c in chars:
            if self.cur < len(line):
                if not flags[self.cur]:
                    self.removed += 1
                line[self.cur] = c
                flags[self.cur] = syn
            else:
                line.append(c)
                flags.append(syn)
            self.cur += 1

    def move(self, to: int) -> None:
        """Move the cursor to column ``to`` (a carriage return or a backspace, which count as removed)."""
        self.removed += 1
        self.cur = max(0, to)

    def erase(self, param: str) -> None:
        """``CSI K``: erase to the line end (param ``0`` or empty) or the whole line (``2``, the cursor stays)."""
        if param in ("0", ""):
            del self.line[self.cur:], self.syn[self.cur:]
        elif param == "2":
            self.removed += sum(1 for x in self.syn if not x)
            self.line[:] = [" "] * self.cur
            self.syn[:] = [True] * self.cur

    def flush(self, nl: bool) -> None:
        """Finish the current line (with a newline where ``nl``) and record its synthetic spans."""
        line = self.line
        self.synthetic += _runs(self.syn, self.base)
        self.out.append("".join(line) + ("\n" if nl else ""))
        self.base += len(line) + (1 if nl else 0)
        self.line, self.syn, self.cur = [], [], 0


def _control_picture(c: str) -> str:
    """The visible stand-in of a control character: its Control Picture (U+2400 + code, U+2421 for DEL), or
    U+FFFD for a C1 control."""
    code = ord(c)
    if code < 0x20:
        return chr(0x2400 + code)
    return "\u2421" if code == 0x7F else "\ufffd"


def _escape(screen: _Screen, m: re.Match) -> None:
    """Apply one escape token of :data:`_TOKEN` (osc, str, csi, esc): it is removed; an OSC 1337 inline image
    leaves its placeholder, ``CSI K`` erases."""
    kind = m.lastgroup
    screen.removed += len(m.group(0))
    if kind == "osc" and (m.group("oscbody") or "").startswith("1337;File="):
        screen.write(_IMAGE_PLACEHOLDER, True)
    elif kind == "csi" and m.group("final") == "K":
        screen.erase(m.group("params") or "0")


def _terminal(s: str) -> tuple[str, list[tuple[int, int]], int]:
    """Apply escapes, CR, backspace and control pictures; return text, synthetic spans and removed count."""
    screen = _Screen()
    pos = 0
    for m in _TOKEN.finditer(s):
        if m.start() != pos:  # pragma: no cover - the token pattern matches every character
            raise InternalError(f"terminal tokenizer skipped {s[pos:m.start()]!r}")
        kind = m.lastgroup
        pos = m.end()
        if kind == "run":
            screen.write(m.group(0), False)
        elif kind == "nl":
            screen.flush(True)
        elif kind == "cr":
            screen.move(0)
        elif kind == "bs":
            screen.move(screen.cur - 1)
        elif kind == "ctl":
            screen.write(_control_picture(m.group(0)), False)
        else:
            _escape(screen, m)
    if pos != len(s):  # pragma: no cover
        raise InternalError("terminal tokenizer stopped early")
    screen.flush(False)
    return "".join(screen.out), screen.synthetic, screen.removed


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


terminal_lines = _terminal_lines
"""Public name of :func:`_terminal_lines`: ``(text, synthetic spans, removed count)`` of a segment.

Examples
--------
>>> terminal_lines("50%\r100%\n\x1b[31mred\x1b[0m")[0]
'100%\nred'
>>> terminal_lines("\x9b1mbold\x9b0m, \x9d and a lone \x9b")[0]     # 8-bit CSI as ESC [; other C1 drawn as U+FFFD
'bold, \ufffd and a lone \ufffd'
"""
