"""The identifier ledger: the exact identifiers of the messages shown as pages, repeated as text, each once.

A reader misreads a hash or a long number on a page without noticing (a public sweep on Claude Opus read 10% of
such identifiers exactly at a 5x8 cell, 35% at 7x10; see ``reference/prior-art.md``), so the snapshot text carries
them as text, found by :func:`snapglyph.model.identifiers.find_identifiers` in the text the pages draw::

    Exact identifiers in the messages shown as pages, each once after the ids of the messages holding it, newest first:
    #417: 3f2a9c1d https://github.com/o/r/pull/7
    #417 #380 #31: src/app.py:12,40,77
    #380: 123e4567-e89b-12d3-a456-426614174000 1733251200
    (the cap leaves out 57 identifiers of messages #3 to #120: recall a message by id)

Each exact value once: an identifier that recurs is listed once, after the ids of the messages that hold it (the
newest :data:`MAX_HOLDERS`, then ``+N`` for the older ones); a path's line numbers (and a traceback file's) are
merged into one entry, in line order (``main.js:7,12:4,40``: :func:`snapglyph.model.identifiers.line_of`); identifiers held by the same messages share a
line. Values a model reads from the page as reliably (short numbers:
:func:`snapglyph.model.identifiers.worth_listing`) are left out. Lines go newest first (by the newest message
holding them), within a line in order of appearance. A cap in tokens cuts the list (the oldest lines go first; one
closing line says how many identifiers it left out, of which messages); the cap is a share of the pages' image
tokens (:data:`snapglyph._config.LEDGER_SHARE` by default), counted inside the compaction's budget. Deterministic:
the same messages and cap give the same text.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from ..model.document import STYLE_HEADER, build_document
from ..model.identifiers import find_identifiers, line_of, worth_listing
from ..model.messages import Message

__all__ = ["LEDGER_HEADING", "Ledger", "MAX_HOLDERS", "drawn_text"]


LEDGER_HEADING = ("Exact identifiers in the messages shown as pages, each once after the ids of the messages "
                  "holding it, newest first:")
"""First line of the ledger."""

MAX_HOLDERS = 3
"""Message ids named before an identifier at most: the newest ones; ``+N`` counts the older ones holding it."""

_CONTROL = frozenset(chr(c) for c in [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0)])

Line = tuple[str, list[int], list[str]]
"""One line of the ledger: its head (``#417 #380``), the ids of the messages its identifiers are in (newest first),
and the identifiers (merged values) in order."""


def drawn_text(m: Message) -> str:
    """The text the pages draw for message ``m`` (its header excluded), terminal escapes resolved.

    Segments with control characters (ANSI color, carriage returns, backspaces) are normalized as the renderer
    normalizes them (:func:`snapglyph.raster.text.normalize`), so ``\\x1b[2mabc`` gives ``abc``; segments are
    joined by newlines.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> drawn_text(Message(4, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="\\x1b[2mok")])]))
    'ok'
    """
    from ..raster.text import normalize
    out = []
    for seg in build_document([m]).segments:
        if seg.style == STYLE_HEADER or seg.text == "\n":
            continue
        text = seg.text
        if not _CONTROL.isdisjoint(text):
            text = normalize(text).text
        out.append(text)
    return "\n".join(out)


def _line_key(line: str) -> tuple[int, ...]:
    return tuple(int(n) for n in line.split(":"))


def _head(holders: list[int]) -> str:
    more = len(holders) - MAX_HOLDERS
    return " ".join(f"#{h}" for h in holders[:MAX_HOLDERS]) + (f" +{more}" if more > 0 else "")


class Ledger:
    """The identifiers of a set of messages, ready to be written for any subset of them under a cap.

    Parameters
    ----------
    messages : iterable of Message
        The messages that may be shown (e.g. the whole middle); a message's identifiers are found once, the first
        time it is shown.
    count : callable
        ``count(text) -> int`` tokens of a text as sent (the compactor's
        :meth:`~snapglyph.compaction.estimate.TokenCosts.text`).

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> msgs = [Message(3, "user", [Part("text", text="fix src/a.py:12 from 3f2a9c1d (port 48213)")]),
    ...         Message(4, "assistant", [Part("text", text="3f2a9c1d is on https://x.org/p/1, see src/a.py:40")])]
    >>> print(Ledger(msgs, len).text([3, 4], cap=1000))  # doctest: +NORMALIZE_WHITESPACE
    Exact identifiers in the messages shown as pages, each once after the ids of the messages holding it, newest
    first:
    #4 #3: 3f2a9c1d src/a.py:12,40
    #4: https://x.org/p/1
    >>> Ledger(msgs, len).text([3, 4], cap=0)
    ''
    """

    def __init__(self, messages: Iterable[Message], count: Callable[[str], int]):
        self._messages = {m.id: m for m in messages}
        self._ids: dict[int, list[str]] = {}
        self._count = count
        self._cost: dict[str, int] = {}

    def _of(self, mid: int) -> list[str]:
        """The identifiers worth listing of message ``mid``, each once, in order of appearance."""
        ids = self._ids.get(mid)
        if ids is None:
            m = self._messages.get(mid)
            found = find_identifiers(drawn_text(m)) if m is not None else []
            ids = self._ids[mid] = list(dict.fromkeys(i for k, i in found if worth_listing(k, i)))
        return ids

    def entries(self, shown: Sequence[int]) -> list[Line]:
        """The ledger's lines for the ``shown`` message ids, newest first: each identifier (a path's line numbers
        merged) once, on the line of the messages that hold it."""
        holders: dict[str, list[int]] = {}   # a value (or a path's stem) -> ids of the messages holding it
        lines: dict[str, list[str]] = {}     # a path's stem -> its line numbers (line:column), as found
        for mid in sorted(set(shown), reverse=True):
            for ident in self._of(mid):
                split = line_of(ident)
                key = split[0] if split else ident
                held = holders.setdefault(key, [])
                if not held or held[-1] != mid:
                    held.append(mid)
                if split:
                    nums = lines.setdefault(key, [])
                    if split[1] not in nums:
                        nums.append(split[1])
        groups: dict[str, Line] = {}
        for key, held in holders.items():
            value = key + ",".join(sorted(lines[key], key=_line_key)) if key in lines else key
            head = _head(held)
            groups.setdefault(head, (head, held, []))[2].append(value)
        return sorted(groups.values(), key=lambda line: -line[1][0])  # stable: a newer first holder goes first

    def _tokens(self, piece: str) -> int:
        n = self._cost.get(piece)
        if n is None:
            n = self._cost[piece] = self._count(piece)
        return n

    def text(self, shown: Sequence[int], cap: int) -> str:
        """The ledger of the ``shown`` message ids, at most ``cap`` tokens (empty text when none fits or none).

        Parameters
        ----------
        shown : sequence of int
            Ids of the messages shown as pages.
        cap : int
            Most tokens the ledger may take (as counted by ``count``); 0 or less: no ledger.

        Returns
        -------
        str
            The heading and one line per set of messages holding the same identifiers (newest first); when the cap
            cut the list, a closing line says what it left out. Empty when ``cap`` leaves no room for one
            identifier or the messages hold none.
        """
        entries = self.entries(shown)
        if cap <= 0 or not entries:
            return ""
        n_all = sum(len(vals) for _, _, vals in entries)
        lines = self._fill(entries, cap)
        if sum(len(vals) for _, _, vals in lines) < n_all:  # cut: leave room for the closing line
            lines = self._fill(entries, cap - self._tokens(_cut_line(entries, lines)))
        text = _write(entries, lines)
        while lines and self._count(text) > cap:  # the pieces' sum is an estimate: trim to the true count
            head, held, vals = lines[-1]
            lines[-1] = (head, held, vals[:-1])
            if not lines[-1][2]:
                lines.pop()
            text = _write(entries, lines)
        return text if lines else ""

    def _fill(self, entries: list[Line], room: int) -> list[Line]:
        used = self._tokens(LEDGER_HEADING)
        lines: list[Line] = []
        for head, held, vals in entries:
            cost_head = self._tokens(f"\n{head}:")
            took: list[str] = []
            for value in vals:
                cost = self._tokens(" " + value) + (0 if took else cost_head)
                if used + cost > room:
                    break
                used += cost
                took.append(value)
            if took:
                lines.append((head, held, took))
            if len(took) < len(vals):
                break
        return lines


def _cut_line(entries: list[Line], lines: list[Line]) -> str:
    """The closing line of a ledger the cap cut: how many identifiers it left out, and which messages hold them."""
    listed = {v for _, _, vals in lines for v in vals}
    left = [(held, v) for _, held, vals in entries for v in vals if v not in listed]
    mids = {h for held, _ in left for h in held}
    return (f"\n(the cap leaves out {len(left)} identifier{'s' * (len(left) != 1)} of messages #{min(mids)} to "
            f"#{max(mids)}: recall a message by id)")


def _write(entries: list[Line], lines: list[Line]) -> str:
    body = "".join(f"\n{head}: " + " ".join(vals) for head, _, vals in lines)
    cut = _cut_line(entries, lines) if sum(len(v) for _, _, v in lines) < sum(len(v) for _, _, v in entries) else ""
    return LEDGER_HEADING + body + cut
