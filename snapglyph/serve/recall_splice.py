"""The rules of a spliced stream, apart from any dialect: :class:`Splicer`, whose subclasses in
:mod:`.recall_stream` say what each dialect's events are (the rules are written there, in the module docstring).
"""

from __future__ import annotations

from typing import Any

from ..compaction.recall import RECALL_TOOL_NAME
from .sse import Event

__all__ = ["Splicer"]


class Splicer:
    """The client's stream over the rounds of one answer (see the module's rules); one subclass per dialect.

    :meth:`feed` takes each upstream event and returns the bytes to send now; :meth:`reply` is the round's
    answer as a non-streaming body; :meth:`end_round` returns what is still to send, ``go_on`` when the next
    round's stream follows. ``failed`` is set by an error event (no round follows one). An example is at
    :func:`snapglyph.serve.recall_stream.splicer`.
    """

    lead: tuple = ()
    """Item types that wait for the next item (thinking, reasoning)."""

    def __init__(self) -> None:
        self.round = 0
        self.changed = False
        self.failed = False
        self.count = 0
        self._reset()
        self._clear()

    def _reset(self) -> None:
        self.hold = False
        self.held: list[Event] = []
        self.closing: list[Event] = []
        self.pending: list[Event] = []
        self.pending_at: Any = None
        self.map: dict[Any, int | None] = {}
        self.recalls = 0
        self.clients = 0
        self.stopping = False

    # -- what each dialect says ----------------------------------------------------------------------------------
    def _clear(self) -> None:
        """Forget the round's answer (a new round begins)."""

    def classify(self, ev: Event) -> tuple[str, Any, dict]:
        """``(kind, index, item)``: kind ``opening``, ``start`` (of a block, call or item, whose ``item`` has its
        ``type`` and ``name``), ``part``, ``closing`` or ``other``."""
        raise NotImplementedError

    def accumulate(self, ev: Event, kind: str, index: Any, item: dict) -> None:
        """Build :meth:`reply` from the event."""

    def render(self, ev: Event) -> bytes:
        """The bytes of ``ev`` for the client (renumbered where needed)."""
        raise NotImplementedError

    def reply(self) -> dict:
        """The round's answer as the non-streaming body."""
        raise NotImplementedError

    def note(self) -> list[Event]:
        """Events of a text holding :data:`~.recall_shapes.STOPPED_NOTE` (for an answer left empty)."""
        raise NotImplementedError

    def is_error(self, ev: Event) -> bool:
        """Whether the event reports a failure."""
        raise NotImplementedError

    def is_recall(self, item: dict) -> bool:
        """Whether an item starting is a ``recall_messages`` call."""
        return item.get("type") in ("tool_use", "function_call") and item.get("name") == RECALL_TOOL_NAME

    def is_client_call(self, item: dict) -> bool:
        """Whether an item starting is a call of one of the client's tools."""
        return item.get("type") in ("tool_use", "function_call") and not self.is_recall(item)

    def next_index(self) -> int:
        """The client's index for the next block, call or item."""
        self.count += 1
        return self.count - 1

    def sent_nothing(self) -> bool:
        """No content went to the client yet."""
        return self.count == 0

    # -- the rules -----------------------------------------------------------------------------------------------
    def feed(self, ev: Event) -> list[bytes]:
        """Take one upstream event; the bytes to send the client now."""
        kind, index, item = self.classify(ev)
        self.accumulate(ev, kind, index, item)
        self.failed = self.failed or self.is_error(ev)
        if kind == "opening":
            return [self.render(ev)] if self.round == 0 else []
        if kind == "closing":
            if self.recalls and not self.clients:
                self.closing.append(ev)
                return []
            return [self.render(ev)]
        if kind == "start":
            return self._start(ev, index, item)
        if kind == "part":
            if index in self.map and self.map[index] is None:
                return []
            if self.pending and index == self.pending_at:
                self.pending.append(ev)
                return []
        return self._route([ev])

    def _route(self, evs: list[Event]) -> list[bytes]:
        if self.hold:
            self.held += evs
            return []
        return [self.render(e) for e in evs]

    def _start(self, ev: Event, index: Any, item: dict) -> list[bytes]:
        if self.is_recall(item):
            self.map[index] = None
            self.recalls += 1
            self.changed = True
            if self.pending:
                self.map[self.pending_at] = None
                self.pending, self.pending_at = [], None
            self.hold = self.hold or not self.clients
            return []
        out = self._release()
        if self.is_client_call(item):
            self.clients += 1
            if self.hold:
                self.hold = False
                out += [self.render(e) for e in self.held]
                self.held = []
        if item.get("type") in self.lead:
            self.pending, self.pending_at = [ev], index
            return out
        self.map[index] = self.next_index()
        return out + self._route([ev])

    def _release(self) -> list[bytes]:
        if not self.pending:
            return []
        self.map[self.pending_at] = self.next_index()
        evs, self.pending, self.pending_at = self.pending, [], None
        return self._route(evs)

    def end_round(self, go_on: bool) -> list[bytes]:
        """The round's held bytes: its content; with ``go_on`` false also its closing events (the stop reason
        made ``end_turn`` / ``stop`` where no tool call is left, a note where the answer is empty)."""
        if go_on:
            self.pending = []
            out = [self.render(e) for e in self.held]
            self._reset()
            self._clear()
            self.round += 1
            self.changed = True
            return out
        self.hold = False
        out = self._release() + [self.render(e) for e in self.held]
        self.held = []
        if self.recalls and self.sent_nothing():
            out += [self.render(e) for e in self.note()]
        self.stopping = not self.clients
        out += [self.render(e) for e in self.closing]
        self._reset()
        return out
