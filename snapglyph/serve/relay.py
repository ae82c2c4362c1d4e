"""Relaying an upstream response to the client: status, headers and body bytes as they arrive.

The body is read with ``httpx``'s ``aiter_raw`` (no decoding, no re-chunking of our own) and each piece is sent to
the client at once, so a server-sent-event stream keeps its pace and its exact bytes, unknown event types
included. While relaying, the pieces are watched for an error inside the stream (Anthropic's ``event: error``,
an OpenAI ``error`` chunk, a Responses ``response.failed``) and for Anthropic's
``model_context_window_exceeded`` stop reason; from the first piece holding such a marker on, the pieces are kept
(at most :data:`RELAY_KEEP_BYTES`), and they are read by :func:`snapglyph.providers.overflow.detect` after the last byte went out.
"""

from __future__ import annotations

import time
from typing import Any, Awaitable, Callable

import httpx

from .._config import RELAY_KEEP_BYTES
from .upstream import decode_body, forward_headers

__all__ = ["MARKERS", "Relay"]

MARKERS = (b"error", b"failed", b"context_window_exceeded")
"""Byte strings whose presence in a piece of a response keeps that piece for the overflow check."""



class Relay:
    """An ASGI response that relays an open ``httpx`` response (or bytes already read from it).

    Parameters
    ----------
    response : httpx.Response
        Opened with ``stream=True``.
    body : bytes, optional
        The raw body when it was already read (an error answer the proxy looked at); else it is streamed.
    on_done : callable, optional
        ``await on_done(relay)`` after the last byte went out (or the client went away); ``relay.watched`` then
        holds the decoded marked pieces (empty when none), ``relay.first_byte_ms`` and ``relay.nbytes`` the
        figures.

    Examples
    --------
    >>> import asyncio
    >>> async def relay(answer: bytes):
    ...     mock = httpx.MockTransport(lambda request: httpx.Response(200, stream=httpx.ByteStream(answer)))
    ...     async with httpx.AsyncClient(transport=mock) as client:
    ...         resp = await client.send(client.build_request("POST", "http://upstream/v1/messages"), stream=True)
    ...         sent, r = [], Relay(resp)
    ...         async def send(message): sent.append(message["type"])
    ...         await r({"type": "http"}, None, send)
    ...         return sent, r.nbytes, r.watched
    >>> asyncio.run(relay(b"event: error\\ndata: {}\\n\\n"))     # a marked piece is kept for the overflow check
    (['http.response.start', 'http.response.body', 'http.response.body'], 23, b'event: error\\ndata: {}\\n\\n')
    """

    def __init__(self, response: httpx.Response, body: bytes | None = None,
                 on_done: Callable[["Relay"], Awaitable[None]] | None = None) -> None:
        self.response = response
        self.body = body
        self.on_done = on_done
        self.watched = b""
        self.nbytes = 0
        self.first_byte_ms: float | None = None
        self.status = response.status_code

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        resp = self.response
        t0 = time.perf_counter()
        headers = forward_headers(resp.headers.raw, request=False)
        kept: list[bytes] = []
        size = 0
        prev = b""
        try:
            await send({"type": "http.response.start", "status": resp.status_code, "headers": headers})
            if self.body is not None:
                await send({"type": "http.response.body", "body": self.body, "more_body": False})
                self.nbytes = len(self.body)
                self.first_byte_ms = (time.perf_counter() - t0) * 1000
                return
            async for piece in resp.aiter_raw():
                if not piece:
                    continue
                if self.first_byte_ms is None:
                    self.first_byte_ms = (time.perf_counter() - t0) * 1000
                await send({"type": "http.response.body", "body": piece, "more_body": True})
                self.nbytes += len(piece)
                joined = prev[-32:] + piece
                if size < RELAY_KEEP_BYTES and (kept or any(m in joined for m in MARKERS)):
                    kept.append(prev[-4096:] + piece if not kept else piece)
                    size += len(piece)
                prev = piece
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass                                            # the client went away; nothing more to send
        finally:
            await resp.aclose()
            if kept:
                self.watched = decode_body(b"".join(kept), resp.headers.get("content-encoding"))
            if self.on_done is not None:
                await self.on_done(self)
