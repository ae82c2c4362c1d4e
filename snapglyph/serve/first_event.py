"""Holding the start of a successful answer until it shows content, so an error or a refusal there can be retried.

Some servers answer HTTP 200 and send the overflow as the first server-sent event (sglang behind LiteLLM:
sgl-project/sglang#12081, BerriAI/litellm#22624, read 2026-12-07), and some models answer a compacted request with a
refusal or nothing (:mod:`snapglyph.providers.refusal`). :func:`hold` reads an answer's first bytes, nothing sent to
the client yet, until the first event that carries content (text or a tool call,
:func:`~snapglyph.providers.refusal.carries_content`), the end of the answer, or its bounds (``max_bytes``,
``max_seconds``: ``serve``'s ``--hold-bytes`` and ``--hold-seconds``). :class:`HeldResponse` then relays the held
bytes first and the rest as it comes, so the client's bytes are exactly the upstream's. Past the first content event
nothing is held: an error there is relayed as it came.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import httpx

from ..providers.refusal import carries_content
from .sse import parse_event

__all__ = ["Held", "HeldResponse", "hold", "is_error_event"]

_BOUNDARY = (b"\r\n\r\n", b"\n\n", b"\r\r")


def is_error_event(data: Any) -> bool:
    """Whether a streamed event's parsed ``data`` is an error (an ``error`` object, ``type: "error"``, a Responses
    ``response.failed``).

    Examples
    --------
    >>> is_error_event({"error": {"message": "The input (9 tokens) is longer than ..."}}), is_error_event({"x": 1})
    (True, False)
    """
    if not isinstance(data, dict):
        return False
    return data.get("error") is not None or data.get("type") in ("error", "response.failed") or \
        data.get("object") == "error"


@dataclass
class Held:
    """What :func:`hold` read.

    Attributes
    ----------
    data : bytes
        The raw bytes read so far (nothing of them sent).
    state : str
        ``content`` (an event with content arrived: relay), ``error`` (the first event is an error), ``ended`` (the
        whole answer arrived, no content in it), ``limit`` (a bound was reached first: relay).
    events : list
        The parsed ``data`` of each event read (the whole body's JSON for an answer that is no event stream).
    pending : asyncio.Task or None
        A read still under way when the time bound passed (:class:`HeldResponse` awaits it).
    """

    data: bytes = b""
    state: str = "limit"
    events: list = field(default_factory=list)
    pending: Any = None
    chunks: Any = None


def _split(buf: bytes) -> tuple[list[bytes], bytes]:
    out = []
    while True:
        cuts = [(buf.find(b), b) for b in _BOUNDARY if buf.find(b) >= 0]
        if not cuts:
            return out, buf
        at, sep = min(cuts)
        out.append(buf[:at + len(sep)])
        buf = buf[at + len(sep):]


async def hold(resp: httpx.Response, dialect: str, *, max_bytes: int, max_seconds: float) -> Held:
    """Read the start of ``resp`` (a 200 opened with ``stream=True``, no content encoding) until content, an error
    event, its end, or ``max_bytes`` / ``max_seconds``.

    Examples
    --------
    >>> async def run(body: bytes):
    ...     mock = httpx.MockTransport(lambda r: httpx.Response(200, stream=httpx.ByteStream(body),
    ...                                                         headers={"content-type": "text/event-stream"}))
    ...     async with httpx.AsyncClient(transport=mock) as c:
    ...         resp = await c.send(c.build_request("POST", "http://u/v1/chat/completions"), stream=True)
    ...         return (await hold(resp, "openai", max_bytes=65536, max_seconds=5)).state
    >>> asyncio.run(run(b'data: {"error": {"message": "The input (9 tokens) is longer"}}\\n\\n'))
    'error'
    >>> asyncio.run(run(b'data: {"choices": [{"delta": {"content": "Hi"}}]}\\n\\ndata: [DONE]\\n\\n'))
    'content'
    """
    held = Held(chunks=resp.aiter_raw().__aiter__())
    stream = resp.headers.get("content-type", "").split(";")[0].strip().lower() == "text/event-stream"
    deadline, buf = time.monotonic() + max_seconds, b""
    while len(held.data) < max_bytes:
        task = asyncio.ensure_future(held.chunks.__anext__())
        done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - time.monotonic()))
        if not done:
            held.pending = task
            return held
        try:
            piece = task.result()
        except StopAsyncIteration:
            return _ended(held, buf, stream)
        held.data += piece
        if not stream:
            continue
        events, buf = _split(buf + piece)
        for raw in events:
            data = parse_event(raw).data
            held.events.append(data)
            if is_error_event(data):
                held.state = "error"
                return held
            if carries_content(dialect, data):
                held.state = "content"
                return held
    return held


def _ended(held: Held, rest: bytes, stream: bool) -> Held:
    held.state = "ended"
    if stream:
        if rest.strip():
            held.events.append(parse_event(rest).data)
    else:
        try:
            body = json.loads(held.data)
        except ValueError:
            body = None
        held.events = body if isinstance(body, list) else [body]
        if any(is_error_event(e) for e in held.events):
            held.state = "error"
    return held


class HeldResponse:
    """An open ``httpx`` response whose first bytes :func:`hold` read: it reads as the response itself (status,
    headers, :meth:`aiter_raw`, :meth:`aiter_bytes`, :meth:`aread`, :meth:`aclose`), the held bytes first.

    Examples
    --------
    >>> async def run():
    ...     mock = httpx.MockTransport(lambda r: httpx.Response(200, stream=httpx.ByteStream(b"abc")))
    ...     async with httpx.AsyncClient(transport=mock) as c:
    ...         resp = await c.send(c.build_request("GET", "http://u/"), stream=True)
    ...         held = await hold(resp, "openai", max_bytes=1, max_seconds=5)
    ...         return await HeldResponse(resp, held).aread()
    >>> asyncio.run(run())
    b'abc'
    """

    def __init__(self, response: httpx.Response, held: Held) -> None:
        self._response, self._held = response, held

    def __getattr__(self, name: str) -> Any:
        return getattr(self._response, name)

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The held bytes, then the rest as it arrives."""
        held = self._held
        if held.data:
            yield held.data
        if held.state == "ended":
            return
        if held.pending is not None:
            try:
                yield await held.pending
            except StopAsyncIteration:
                return
        async for piece in held.chunks:
            yield piece

    aiter_bytes = aiter_raw                                # held only where the body has no content encoding

    async def aread(self) -> bytes:
        """The whole body."""
        return b"".join([p async for p in self.aiter_raw()])

    async def aclose(self) -> None:
        """Close the upstream response."""
        if self._held.pending is not None and not self._held.pending.done():
            self._held.pending.cancel()
        await self._response.aclose()
