"""Server-sent events as the proxy reads and writes them while it splices a stream (:mod:`.recall_stream`).

The grammar: WHATWG HTML "Server-sent events" (https://html.spec.whatwg.org/multipage/server-sent-events.html,
read 2026-12-01): an event is ``event:`` and ``data:`` lines ended by a blank line; lines end with CRLF, LF or CR.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, AsyncIterator

__all__ = ["Event", "encode", "parse_event", "read_events"]

_BOUNDARY = re.compile(rb"\r\n\r\n|\n\n|\r\r")
_LINES = re.compile(rb"\r\n|\n|\r")


@dataclass
class Event:
    """One server-sent event: its raw bytes (blank line included), its ``event:`` name and its ``data`` (parsed
    JSON, else the text as it is, ``None`` without a data line)."""

    raw: bytes
    name: str | None
    data: Any


def parse_event(raw: bytes) -> Event:
    """Read one server-sent event.

    Examples
    --------
    >>> parse_event(b'event: ping\\ndata: {"type": "ping"}\\n\\n').data
    {'type': 'ping'}
    >>> parse_event(b"data: [DONE]\\r\\n\\r\\n").data
    '[DONE]'
    """
    name, lines = None, []
    for line in _LINES.split(raw):
        if line.startswith(b"event:"):
            name = line[6:].strip().decode("utf-8", "replace")
        elif line.startswith(b"data:"):
            lines.append(line[6:] if line[5:6] == b" " else line[5:])
    if not lines:
        return Event(raw, name, None)
    text = b"\n".join(lines).decode("utf-8", "replace")
    try:
        return Event(raw, name, json.loads(text))
    except ValueError:
        return Event(raw, name, text)


async def read_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[Event]:
    """The events of a byte stream, each once its blank line arrived (the rest at the end).

    Examples
    --------
    >>> import asyncio
    >>> async def names(pieces):
    ...     async def chunks():
    ...         for p in pieces:
    ...             yield p
    ...     return [e.name async for e in read_events(chunks())]
    >>> asyncio.run(names([b"event: a\\ndata: 1\\n", b"\\nevent: b\\r\\ndata: 2\\r\\n\\r\\nevent: c\\ndata: 3"]))
    ['a', 'b', 'c']
    """
    buf = b""
    async for piece in chunks:
        buf += piece
        start = 0
        for m in _BOUNDARY.finditer(buf):
            raw = buf[start:m.end()]
            start = m.end()
            if raw.strip():
                yield parse_event(raw)
        buf = buf[start:]
    if buf.strip():
        yield parse_event(buf)


def encode(name: str | None, data: Any) -> bytes:
    """One event as bytes (compact JSON data).

    Examples
    --------
    >>> encode("ping", {"type": "ping"})
    b'event: ping\\ndata: {"type":"ping"}\\n\\n'
    """
    body = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (f"event: {name}\n" if name else "").encode() + b"data: " + body.encode("utf-8") + b"\n\n"
