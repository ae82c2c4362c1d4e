"""The simulator's streaming answers: server-sent events as each provider sends them.

A scripted answer (the non-streaming reply body the simulator built) is turned into the server-sent events each
provider sends for it, in the providers' own order and shapes:

- Anthropic messages (docs.anthropic.com "Streaming Messages", read 2026-12-01): ``message_start``,
  ``content_block_start`` / ``ping`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``) /
  ``content_block_stop`` per block, ``message_delta`` (stop reason, output usage), ``message_stop``; each as
  ``event: NAME`` and ``data: JSON``.
- OpenAI chat completions (platform.openai.com "Streaming API responses", read 2026-12-01): ``data:`` lines of
  ``chat.completion.chunk`` objects (role, content deltas, ``tool_calls`` deltas with an ``index``), a last chunk
  with the ``finish_reason``, a usage chunk with empty ``choices`` when ``stream_options.include_usage`` is set,
  then ``data: [DONE]``.
- OpenAI Responses (platform.openai.com "Streaming events", read 2026-12-01): ``response.created``,
  ``response.in_progress``, per output item ``response.output_item.added``, text deltas
  (``response.content_part.added``, ``response.output_text.delta`` / ``.done``, ``response.content_part.done``)
  or ``response.function_call_arguments.delta`` / ``.done``, ``response.output_item.done``, then
  ``response.completed``; every event carries a ``sequence_number``.

Text is cut into deltas of a few characters, so a stream has many events. :func:`mid_stream_error` gives the
events of a stream that starts and then fails with an error event (how a provider reports a failure after the
HTTP 200 went out). Gemini's stream is written in :mod:`snapglyph.testing.gemini`.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

__all__ = ["CHUNK", "anthropic_events", "encode_chunk", "mid_stream_error", "openai_events", "pieces", "responses_events",
           "sse"]

CHUNK = 12
"""Characters of text (or of tool arguments) per delta event."""


def sse(data: Any, event: str | None = None, *, eol: str = "\n") -> bytes:
    """One server-sent event: an optional ``event:`` line, one ``data:`` line (compact JSON, or a str as it is),
    a blank line; lines end with ``eol`` (LF, or CRLF: the SSE grammar allows both, WHATWG HTML "Server-sent
    events", https://html.spec.whatwg.org/multipage/server-sent-events.html, read 2026-12-01).

    Examples
    --------
    >>> sse({"type": "ping"}, "ping")
    b'event: ping\\ndata: {"type":"ping"}\\n\\n'
    >>> sse("[DONE]", eol="\\r\\n")
    b'data: [DONE]\\r\\n\\r\\n'
    """
    body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}{eol}" if event else ""
    return head.encode() + b"data: " + body.encode("utf-8") + (eol + eol).encode()


def pieces(s: str, n: int = CHUNK) -> list[str]:
    """``s`` cut into deltas of ``n`` characters (one empty piece for an empty ``s``).

    Examples
    --------
    >>> pieces("abcdefghijklmno"), pieces("")
    (['abcdefghijkl', 'mno'], [''])
    """
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


def anthropic_events(reply: dict, *, extra_event: bytes = b"") -> Iterator[bytes]:
    """The Anthropic event stream of a non-streaming ``reply`` body (``extra_event`` goes after the ping).

    Examples
    --------
    >>> from snapglyph.testing.replies import anthropic_reply, answer
    >>> [e.split(b"\\n")[0] for e in anthropic_events(anthropic_reply(1, {}, answer("hi"), 9))][:3]
    [b'event: message_start', b'event: content_block_start', b'event: ping']
    """
    start = {**reply, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": reply["usage"]["input_tokens"], "output_tokens": 1}}
    yield sse({"type": "message_start", "message": start}, "message_start")
    for i, block in enumerate(reply["content"]):
        if block["type"] == "text":
            yield sse({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                      "content_block_start")
            if i == 0:
                yield sse({"type": "ping"}, "ping")
                if extra_event:
                    yield extra_event
            for piece in pieces(block["text"]):
                yield sse({"type": "content_block_delta", "index": i,
                           "delta": {"type": "text_delta", "text": piece}}, "content_block_delta")
        else:
            yield sse({"type": "content_block_start", "index": i,
                       "content_block": {**block, "input": {}}}, "content_block_start")
            for piece in pieces(json.dumps(block["input"])):
                yield sse({"type": "content_block_delta", "index": i,
                           "delta": {"type": "input_json_delta", "partial_json": piece}}, "content_block_delta")
        yield sse({"type": "content_block_stop", "index": i}, "content_block_stop")
    yield sse({"type": "message_delta", "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
               "usage": {"output_tokens": reply["usage"]["output_tokens"]}}, "message_delta")
    yield sse({"type": "message_stop"}, "message_stop")


def openai_events(reply: dict, *, include_usage: bool = False) -> Iterator[bytes]:
    """The chat-completions chunk stream of a non-streaming ``reply`` body, ending with ``data: [DONE]``; a usage
    chunk with empty ``choices`` before it when ``include_usage``.

    Examples
    --------
    >>> from snapglyph.testing.replies import answer, openai_reply
    >>> events = list(openai_events(openai_reply(1, {}, answer("hi"), 9), include_usage=True))
    >>> len(events), events[-1]
    (5, b'data: [DONE]\\n\\n')
    """
    base = {"id": reply["id"], "object": "chat.completion.chunk", "created": reply["created"],
            "model": reply["model"], "system_fingerprint": reply.get("system_fingerprint")}
    choice = reply["choices"][0]
    msg = choice["message"]

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return sse({**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    if msg.get("content"):
        for piece in pieces(msg["content"]):
            yield chunk({"content": piece})
    for k, tc in enumerate(msg.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": k, "id": tc["id"], "type": "function",
                                     "function": {"name": tc["function"]["name"], "arguments": ""}}]})
        for piece in pieces(tc["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield sse({**base, "choices": [], "usage": reply["usage"]})
    yield sse("[DONE]")


def responses_events(reply: dict) -> Iterator[bytes]:
    """The Responses event stream of a non-streaming ``reply`` body
    (:func:`snapglyph.testing.responses.responses_reply`).

    Examples
    --------
    >>> from snapglyph.testing.replies import answer
    >>> from snapglyph.testing.responses import responses_reply
    >>> events = list(responses_events(responses_reply(1, {}, answer("hi"), 9)))
    >>> events[0].split(b"\\n")[0], events[-1].split(b"\\n")[0]
    (b'event: response.created', b'event: response.completed')
    """
    seq = iter(range(10**9))

    def ev(name: str, **data: Any) -> bytes:
        return sse({"type": name, "sequence_number": next(seq), **data}, name)

    pending = {**reply, "status": "in_progress", "output": [], "usage": None}
    yield ev("response.created", response=pending)
    yield ev("response.in_progress", response=pending)
    for i, item in enumerate(reply["output"]):
        if item["type"] == "message":
            yield ev("response.output_item.added", output_index=i,
                     item={**item, "status": "in_progress", "content": []})
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            yield ev("response.content_part.added", item_id=item["id"], output_index=i, content_index=0, part=part)
            for piece in pieces(text):
                yield ev("response.output_text.delta", item_id=item["id"], output_index=i, content_index=0,
                         delta=piece, logprobs=[])
            yield ev("response.output_text.done", item_id=item["id"], output_index=i, content_index=0, text=text,
                     logprobs=[])
            yield ev("response.content_part.done", item_id=item["id"], output_index=i, content_index=0,
                     part={**part, "text": text})
        else:
            yield ev("response.output_item.added", output_index=i,
                     item={**item, "status": "in_progress", "arguments": ""})
            for piece in pieces(item["arguments"]):
                yield ev("response.function_call_arguments.delta", item_id=item["id"], output_index=i,
                         delta=piece)
            yield ev("response.function_call_arguments.done", item_id=item["id"], output_index=i,
                     arguments=item["arguments"])
        yield ev("response.output_item.done", output_index=i, item=item)
    yield ev("response.completed", response=reply)


def mid_stream_error(dialect: str, reply: dict, error: dict) -> Iterator[bytes]:
    """A stream that starts (its first event goes out) and then fails with ``error`` (an error body).

    Anthropic sends ``event: error`` with the error body; OpenAI chat a ``data:`` line holding the error object;
    Responses a ``response.failed`` event whose response carries the error (``code``, ``message``).

    Examples
    --------
    >>> from snapglyph.testing.replies import anthropic_reply, answer
    >>> events = list(mid_stream_error("anthropic", anthropic_reply(1, {}, answer("hi"), 9), {"type": "error"}))
    >>> [e.split(b"\\n")[0] for e in events]
    [b'event: message_start', b'event: error']
    """
    if dialect == "anthropic":
        yield next(anthropic_events(reply))
        yield sse(error, "error")
    elif dialect == "openai":
        yield next(openai_events(reply))
        yield sse(error)
    else:
        first = next(responses_events(reply))
        yield first
        err = error.get("error") if isinstance(error.get("error"), dict) else error
        failed = {**reply, "status": "failed", "output": [], "usage": None,
                  "error": {"code": err.get("code") or "server_error", "message": err.get("message", "")}}
        yield sse({"type": "response.failed", "sequence_number": 1, "response": failed}, "response.failed")


def encode_chunk(data: bytes) -> bytes:
    """One HTTP/1.1 chunk of ``data`` (``Transfer-Encoding: chunked``: the size in hex, CRLF, the data, CRLF).

    Examples
    --------
    >>> encode_chunk(b"data: {}\\n\\n")
    b'a\\r\\ndata: {}\\n\\n\\r\\n'
    """
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"

