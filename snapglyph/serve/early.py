"""Sending a request upstream before it is read, where nothing can be compacted before it goes out.

``serve`` reads a request before sending it only to find its conversation (:func:`~snapglyph.compaction.keys.
conversation_id`) and whether that one is compacted or marked (or, with ``compact_at``, to estimate it). Every key
holds the caller's own key (``x-snapglyph-conversation``; a request without one has the caller ``None``), so a
request whose caller has no conversation compacted or marked cannot belong to one: it goes upstream at once, as the
bytes the client sent, and is read while the upstream works (the recovery from an overflow, the checks of the
answer and the log line need its key and body). Reading a 650 KB body takes 0.4-0.8 ms (orjson), which the upstream
then no longer waits for.

That holds while every conversation that can be compacted was read here: :class:`EarlySend` notes each key read
with its caller (:meth:`EarlySend.saw`, before the planner can act on it), and is on only where the state folder
held no conversation at start (one written before, or by another ``serve`` on the same folder, may belong to any
caller). A caller with more than :data:`PER_CALLER` keys is read first (each key's record is looked up), and past
:data:`KEYS` keys in all the early path is off for good. A body under :data:`MIN_BYTES` is read first too: reading
it costs less than starting the sending apart (a 2 KB request through serve took 0.1-0.2 ms longer so).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

__all__ = ["KEYS", "MIN_BYTES", "PER_CALLER", "EarlySend", "compacted_first"]

PER_CALLER = 4
"""Most keys of one caller whose records :meth:`EarlySend.may` looks up; a caller with more is read first."""

MIN_BYTES = 1 << 16
"""Smallest body sent before it is read (:attr:`EarlySend.min_bytes`): orjson reads 64 KB in about 0.05 ms."""

KEYS = 100_000
"""Most keys noted in all; past it nothing is sent before it is read (the notes stay exact, never trimmed)."""


def compacted_first(conv: Any) -> bool:
    """Whether a conversation's requests are compacted before they are sent (:meth:`snapglyph.serve.app.Proxy.
    _before`): its record says it was compacted, or marked by an overflow inside a stream.

    Examples
    --------
    >>> from snapglyph.serve.state import ConversationRecord
    >>> compacted_first(None), compacted_first(ConversationRecord("0123456789abcdef", pending=True))
    (False, True)
    """
    return conv is not None and bool(conv.compacted or conv.pending)


class EarlySend:
    """Which callers' requests may go upstream before they are read, and the sending itself.

    Parameters
    ----------
    on : bool
        False where the state folder held a conversation at start: then every request is read first.

    Attributes
    ----------
    sent : int
        Requests sent before they were read.
    min_bytes : int
        :data:`MIN_BYTES`: a smaller body is read first.

    Examples
    --------
    >>> early = EarlySend(on=True)
    >>> early.may("thread-1", hot=lambda key: False), early.may("thread-1", hot=lambda key: True)   # none seen
    (True, True)
    >>> early.saw("thread-1", "0123456789abcdef")
    >>> early.may("thread-1", hot=lambda key: key == "0123456789abcdef"), early.may(None, hot=lambda key: True)
    (False, True)
    >>> EarlySend(on=False).may("thread-2", hot=lambda key: False)
    False
    """

    def __init__(self, on: bool) -> None:
        self.on = on
        self.sent = 0
        self.min_bytes = MIN_BYTES
        self._keys: dict[str | None, set[str]] = {}
        self._n = 0

    def saw(self, caller: str | None, key: str | None) -> None:
        """Note that a request of conversation ``key`` (of ``caller``) was read (``None``: no conversation)."""
        if key is None:
            return
        keys = self._keys.setdefault(caller, set())
        if key not in keys:
            keys.add(key)
            self._n += 1
            self.on = self.on and self._n <= KEYS

    def may(self, caller: str | None, hot: Callable[[str], bool]) -> bool:
        """Whether a request of ``caller`` may be sent before it is read: no conversation of ``caller`` read here
        is compacted or marked (``hot(key)``: the rule :meth:`snapglyph.serve.app.Proxy._before` compacts by)."""
        keys = self._keys.get(caller, ())
        return self.on and len(keys) <= PER_CALLER and not any(hot(k) for k in keys)

    async def send(self, proxy: Any, ctx: Any) -> "asyncio.Task | None":
        """For a conversation request (``ctx.dialect``) of at least :attr:`min_bytes` that :meth:`may` go before it
        is read, without ``compact_at`` (which estimates every request) and with no window or cap learned for any
        upstream and model (:meth:`snapglyph.compaction.windows.WindowBook.limits_known`: a new conversation to that
        model may be compacted first): :meth:`start` it and return the task; else ``None``."""
        if ctx.dialect is None or len(ctx.raw) < self.min_bytes or proxy.config.compact_at is not None or \
                proxy.planner.book.limits_known() or not self.may(
                ctx.caller, lambda key: compacted_first(proxy.states.get(key))):
            return None
        return await self.start(proxy.upstream, ctx.method, ctx.path, ctx.query, ctx.headers, ctx.raw)

    async def start(self, upstream: Any, method: str, path: str, query: bytes, headers: list, raw: bytes
                    ) -> "asyncio.Task":
        """Start sending ``raw`` (with its ``Content-Length``) and return once its last byte was handed to the
        connection (or the sending ended, an error included); ``await`` the task for the response."""
        written = asyncio.Event()

        async def body() -> Any:
            yield raw
            written.set()                                   # asked for more: the bytes went out

        self.sent += 1
        task = asyncio.ensure_future(upstream.send(method, path, query, [*headers, (b"content-length",
                                                                                    str(len(raw)).encode())], body()))
        waiting = asyncio.ensure_future(written.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        return task
