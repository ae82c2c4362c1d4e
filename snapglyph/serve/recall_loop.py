"""The proxy answers ``recall_messages`` itself: a compacted request offers the tool, and when the model calls it
the proxy sends the exact stored text upstream and asks again, so the client sees only the final answer.

:class:`RecallRelay` takes the place of :class:`~snapglyph.serve.relay.Relay` for the answer to a compacted
request that offers the tool (:func:`snapglyph.serve.recall_shapes.with_recall_tool`):

- a non-streaming answer is read whole; while it is a recall round (its only tool calls are recall calls) and
  fewer than ``bound`` rounds were answered, the follow-up request (:func:`~.recall_shapes.follow_up`) is sent
  and its answer read; the client gets one answer (:func:`~.recall_shapes.merge`), or the first answer's exact
  bytes when it called no recall (a Gemini stream asked for without ``alt=sse``, one JSON array of chunks, is read
  so too, its chunks joined by :func:`~.recall_gemini.join`, and answered as an array of that one answer);
- a streaming answer goes out as it comes, and only what belongs to a recall round is held
  (:mod:`.recall_stream`);
- an answer that calls recall together with the client's own tools is relayed with the recall calls taken out;
  one still calling recall after ``bound`` rounds, or whose follow-up failed (an error status, an unreachable
  upstream), is relayed the same way (with a note where nothing is left), and the reason is logged;
- recalled text is kept within the budget's room (the compaction's budget less the request's estimate, each
  round's answer and recall texts counted): what does not fit is cut, and the model is told so.

After the last byte, ``rounds`` (recall rounds answered), ``asked`` (the ids asked for) and ``note`` hold the
figures for the log line and ``/snapglyph/status``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import anyio
import httpx

from .._config import RECALL_MARGIN, RELAY_KEEP_BYTES
from ..compaction.budget import text_cost
from .recall_gemini import join
from .recall_shapes import calls_of, follow_up, merge, recall_answer
from .recall_stream import splicer
from .relay import MARKERS
from .sse import read_events
from .upstream import decode_body, forward_headers

__all__ = ["RecallJob", "RecallRelay"]

_ANSWER = ("content", "output", "choices", "candidates")
"""Where each dialect's answer holds what the model wrote (Anthropic, Responses, chat, Gemini)."""

_LAST = "\n\n[snapglyph: this was the last recall of this turn; answer with what you have]"


@dataclass
class RecallJob:
    """What a recall loop needs besides the first answer.

    Attributes
    ----------
    upstream : Upstream
    method, path, query, headers
        The request as it went upstream (headers already forwarded).
    dialect : str
        ``anthropic``, ``openai``, ``responses`` or ``gemini``.
    body : bytes or dict
        The compacted request as sent (bytes are read on the first recall round only).
    store : SourceStore
        The conversation's source store.
    profile : str
        Reader profile whose tokenizer counts the recalled text (:func:`snapglyph.compaction.budget.text_cost`).
    room : int
        Estimated tokens the request may still grow by (the budget less the request's estimate).
    bound : int
        The most recall rounds answered for one request.

    Examples
    --------
    >>> from snapglyph import SourceStore
    >>> job = RecallJob(None, "POST", "/v1/messages", b"", [], "anthropic", b"{}", SourceStore(), "claude",
    ...                 room=2000, bound=3)
    >>> job.dialect, job.bound
    ('anthropic', 3)
    """

    upstream: Any
    method: str
    path: str
    query: bytes
    headers: list
    dialect: str
    body: Any
    store: Any
    profile: str
    room: int
    bound: int


def _dumps(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _changed_headers(resp: httpx.Response, length: int | None = None) -> list[tuple[bytes, bytes]]:
    """The response's headers for a body the proxy rewrote: no content encoding, its own length."""
    out = [(n, v) for n, v in forward_headers(resp.headers.raw, request=False)
           if n.lower() not in (b"content-length", b"content-encoding")]
    return out + ([(b"content-length", str(length).encode())] if length is not None else [])


def _is_stream(resp: httpx.Response) -> bool:
    return resp.headers.get("content-type", "").split(";")[0].strip().lower() == "text/event-stream"


class RecallRelay:
    """An ASGI response that relays an answer and answers its ``recall_messages`` calls (module docstring).

    Parameters
    ----------
    response : httpx.Response
        The first answer, opened with ``stream=True`` (status 2xx).
    job : RecallJob
    on_done : callable, optional
        ``await on_done(relay)`` after the last byte went out (or the client went away); the relay then has
        ``status``, ``watched`` (marked pieces for the overflow check, as :class:`~.relay.Relay`), ``nbytes``,
        ``first_byte_ms``, ``rounds``, ``asked`` and ``note``.

    Examples
    --------
    An answer that calls no recall goes to the client as the bytes that came:

    >>> import asyncio
    >>> from snapglyph import SourceStore
    >>> async def relay(answer: bytes):
    ...     mock = httpx.MockTransport(lambda request: httpx.Response(200, content=answer))
    ...     async with httpx.AsyncClient(transport=mock) as client:
    ...         resp = await client.send(client.build_request("POST", "http://upstream/v1/messages"), stream=True)
    ...         job = RecallJob(None, "POST", "/v1/messages", b"", [], "anthropic", b"{}", SourceStore(), "claude",
    ...                         room=2000, bound=3)
    ...         sent, r = [], RecallRelay(resp, job)
    ...         async def send(message): sent.append(message.get("body", b""))
    ...         await r({"type": "http"}, None, send)
    ...         return b"".join(sent), r.rounds
    >>> asyncio.run(relay(b'{"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}'))
    (b'{"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}', 0)
    """

    def __init__(self, response: httpx.Response, job: RecallJob,
                 on_done: Callable[["RecallRelay"], Awaitable[None]] | None = None) -> None:
        self.response = response
        self.job = job
        self.on_done = on_done
        self.status = response.status_code
        self.watched = b""
        self.nbytes = 0
        self.first_byte_ms: float | None = None
        self.rounds = 0
        self.asked: list[str] = []
        self.note = ""
        self._kept: list[bytes] = []
        self._t0 = 0.0
        self._open: list[httpx.Response] = [response]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self._t0 = time.perf_counter()
        try:
            if _is_stream(self.response):
                await self._stream(send)
            else:
                await self._plain(send)
        except OSError:
            pass                                            # the client went away; nothing more to send
        finally:
            for r in self._open:
                await r.aclose()
            if self._kept:
                self.watched = b"".join(self._kept)
            if self.on_done is not None:
                await self.on_done(self)

    async def _body(self, send: Any, data: bytes, more: bool) -> None:
        if data and self.first_byte_ms is None:
            self.first_byte_ms = (time.perf_counter() - self._t0) * 1000
        self.nbytes += len(data)
        await send({"type": "http.response.body", "body": data, "more_body": more})

    def _watch(self, data: bytes) -> None:
        if sum(map(len, self._kept)) < RELAY_KEEP_BYTES and any(m in data for m in MARKERS):
            self._kept.append(data)

    # -- one round -----------------------------------------------------------------------------------------------
    def _answers(self, reply: dict, calls: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The recall answers, cut to the room left (the model's answer counted first)."""
        job = self.job
        job.room -= text_cost(json.dumps(next((reply[k] for k in _ANSWER if reply.get(k)), None), ensure_ascii=False),
                              job.profile)
        out = []
        for cid, ids in calls:
            text = recall_answer(job.store, ids)
            cost = text_cost(text, job.profile)
            if cost > job.room:
                keep = max(0, int(len(text) * max(job.room - RECALL_MARGIN, 0) / max(cost, 1)))
                text = (text[:keep] + f"\n\n[snapglyph: cut here, {keep:,} of {len(text):,} characters: the "
                        f"context window has no room for more; ask for fewer ids]") if keep else (
                        f"[snapglyph: no room in the context window for the text of {ids}; answer without it]")
                cost = text_cost(text, job.profile)
            job.room -= cost
            out.append((cid, text + (_LAST if self.rounds + 1 >= job.bound else "")))
        return out

    def _follow_up(self, body: Any, reply: dict, calls: list) -> tuple[dict, bytes]:
        """The follow-up request of one round, and its bytes (CPU work: run in a worker thread)."""
        body = json.loads(body) if isinstance(body, (bytes, bytearray)) else body
        body = follow_up(self.job.dialect, body, reply, self._answers(reply, calls))
        return body, _dumps(body)

    async def _round(self, body: Any, reply: dict, calls: list) -> tuple[dict, httpx.Response | None]:
        """Answer one round's recall calls and send the follow-up; ``None`` (and the note) when it failed."""
        job = self.job
        body, data = await anyio.to_thread.run_sync(lambda: self._follow_up(body, reply, calls))
        self.rounds += 1
        self.asked += [ids for _, ids in calls]
        try:
            resp = await job.upstream.send(job.method, job.path, job.query, job.headers, data)
        except httpx.TransportError as e:
            self.note = f"recall round {self.rounds}: upstream unreachable ({type(e).__name__}); answer relayed"
            return body, None
        self._open.append(resp)
        if resp.status_code >= 400:
            raw = await resp.aread()
            self._watch(decode_body(raw, resp.headers.get("content-encoding")))
            self.note = f"recall round {self.rounds}: upstream answered {resp.status_code}; answer relayed"
            return body, None
        return body, resp

    def _why_stop(self, calls: list, others: int, failed: bool = False) -> str:
        """Why a round with recall calls is relayed instead of answered ("" when it is answered)."""
        if others:
            return f"recall_messages called beside {others} client tool call(s): relayed without it"
        if failed:
            return "the stream reported an error: relayed without recall"
        if self.rounds >= self.job.bound:
            return f"recall_messages called again after {self.rounds} round(s) (the bound): relayed without it"
        return ""

    # -- the two ways an answer comes ------------------------------------------------------------------------------
    async def _plain(self, send: Any) -> None:
        resp, job = self.response, self.job
        raw = await resp.aread()
        try:
            reply = json.loads(decode_body(raw, resp.headers.get("content-encoding")))
        except ValueError:
            reply = None
        array = job.dialect == "gemini" and isinstance(reply, list)     # a Gemini stream without alt=sse
        reply = join(reply) if array else reply
        calls = calls_of(job.dialect, reply)[0] if isinstance(reply, dict) else []
        if not calls:
            await send({"type": "http.response.start", "status": resp.status_code,
                        "headers": forward_headers(resp.headers.raw, request=False)})
            await self._body(send, raw, False)
            return
        body, earlier = job.body, []
        while True:
            calls, others = calls_of(job.dialect, reply)
            why = self._why_stop(calls, others) if calls else ""
            if not calls or why:
                self.note = self.note or why
                break
            body, nxt = await self._round(body, reply, calls)
            if nxt is None:
                break
            try:
                nreply = json.loads(decode_body(await nxt.aread(), nxt.headers.get("content-encoding")))
            except ValueError:
                self.note = f"recall round {self.rounds}: the answer was no JSON; answer relayed"
                break
            earlier.append(reply)
            reply = join(nreply) if array and isinstance(nreply, list) else nreply
        merged = merge(job.dialect, earlier, reply)
        data = _dumps([merged] if array else merged)
        await send({"type": "http.response.start", "status": resp.status_code,
                    "headers": _changed_headers(resp, len(data))})
        await self._body(send, data, False)

    async def _stream(self, send: Any) -> None:
        resp, job = self.response, self.job
        sp = splicer(job.dialect)
        await send({"type": "http.response.start", "status": resp.status_code, "headers": _changed_headers(resp)})
        body = job.body
        while True:
            async for ev in read_events(resp.aiter_bytes()):
                self._watch(ev.raw)
                for data in sp.feed(ev):
                    await self._body(send, data, True)
            calls, others = calls_of(job.dialect, sp.reply())
            why = self._why_stop(calls, others, sp.failed) if calls else ""
            nxt = None
            if calls and not why:
                body, nxt = await self._round(body, sp.reply(), calls)
                if nxt is not None and not _is_stream(nxt):
                    self.note = f"recall round {self.rounds}: the answer was no stream; answer relayed"
                    nxt = None
            else:
                self.note = self.note or why
            for data in sp.end_round(go_on=nxt is not None):
                await self._body(send, data, True)
            if nxt is None:
                break
            resp = nxt
        await self._body(send, b"", False)
