"""The identifier ledger: the exact identifiers of the messages shown as pages, repeated as text.

A reader misreads a hash or a long number on a page without noticing (a public sweep on Claude Opus read 10% of
such identifiers exactly at a 5x8 cell, 35% at 7x10; see ``reference/prior-art.md``), so the snapshot text carries
them as text, found by :func:`snapglyph.model.identifiers.find_identifiers` in the text the pages draw::

    Exact identifiers in the messages shown as pages, newest first:
    #417: 3f2a9c1d src/app.py:12 https://github.com/o/r/pull/7
    #380: 123e4567-e89b-12d3-a456-426614174000 48213

Each identifier once, under the newest message that holds it; messages newest first; within a message in order of
appearance. A cap in tokens cuts the list (the oldest messages go first; a closing line says so); the cap is a share
of the pages' image tokens (:data:`snapglyph._config.LEDGER_SHARE` by default), counted inside the compaction's
budget. Deterministic: the same messages and cap give the same text.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from ..model.document import STYLE_HEADER, build_document
from ..model.identifiers import find_identifiers
from ..model.messages import Message

__all__ = ["LEDGER_HEADING", "Ledger", "drawn_text"]


LEDGER_HEADING = "Exact identifiers in the messages shown as pages, newest first:"
"""First line of the ledger."""

_CUT = "(older identifiers not listed: recall the message by id)"
_CONTROL = frozenset(chr(c) for c in [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0)])


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
    >>> msgs = [Message(3, "user", [Part("text", text="fix src/a.py:12 from 3f2a9c1d")]),
    ...         Message(4, "assistant", [Part("text", text="3f2a9c1d is on https://x.org/p/1")])]
    >>> print(Ledger(msgs, len).text([3, 4], cap=1000))
    Exact identifiers in the messages shown as pages, newest first:
    #4: 3f2a9c1d https://x.org/p/1
    #3: src/a.py:12
    >>> Ledger(msgs, len).text([3, 4], cap=0)
    ''
    """

    def __init__(self, messages: Iterable[Message], count: Callable[[str], int]):
        self._messages = {m.id: m for m in messages}
        self._ids: dict[int, list[str]] = {}
        self._count = count
        self._cost: dict[str, int] = {}

    def entries(self, shown: Sequence[int]) -> list[tuple[int, list[str]]]:
        """``(message id, identifiers)`` for the shown messages that hold any, newest first, each identifier once
        (under the newest message that holds it)."""
        seen: set[str] = set()
        out = []
        for mid in sorted(set(shown), reverse=True):
            mine = [i for i in self._of(mid) if i not in seen]
            seen.update(mine)
            if mine:
                out.append((mid, mine))
        return out

    def _of(self, mid: int) -> list[str]:
        ids = self._ids.get(mid)
        if ids is None:
            m = self._messages.get(mid)
            found = find_identifiers(drawn_text(m)) if m is not None else []
            ids = self._ids[mid] = list(dict.fromkeys(i for _, i in found))
        return ids

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
            The heading and one line per message (newest first); when the cap cut the list, a closing line says
            so. Empty when ``cap`` leaves no room for one identifier or the messages hold none.
        """
        entries = self.entries(shown)
        if cap <= 0 or not entries:
            return ""
        n_all = sum(len(ids) for _, ids in entries)
        lines = self._fill(entries, cap)
        if sum(len(ids) for _, ids in lines) < n_all:  # cut: leave room for the closing line
            lines = self._fill(entries, cap - self._tokens("\n" + _CUT))
        text = self._write(lines, n_all)
        while lines and self._count(text) > cap:  # the pieces' sum is an estimate: trim to the true count
            mid, ids = lines[-1]
            lines[-1] = (mid, ids[:-1])
            if not lines[-1][1]:
                lines.pop()
            text = self._write(lines, n_all)
        return text if lines else ""

    def _fill(self, entries: list[tuple[int, list[str]]], room: int) -> list[tuple[int, list[str]]]:
        used = self._tokens(LEDGER_HEADING)
        lines: list[tuple[int, list[str]]] = []
        for mid, ids in entries:
            head = self._tokens(f"\n#{mid}:")
            took: list[str] = []
            for ident in ids:
                cost = self._tokens(" " + ident) + (0 if took else head)
                if used + cost > room:
                    break
                used += cost
                took.append(ident)
            if took:
                lines.append((mid, took))
            if len(took) < len(ids):
                break
        return lines

    @staticmethod
    def _write(lines: list[tuple[int, list[str]]], n_all: int) -> str:
        body = "".join(f"\n#{mid}: " + " ".join(ids) for mid, ids in lines)
        cut = "\n" + _CUT if sum(len(ids) for _, ids in lines) < n_all else ""
        return LEDGER_HEADING + body + cut
