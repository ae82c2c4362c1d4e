"""One client stream spliced from the upstream streams of a recall loop's rounds.

The events of an answer go to the client as they come (the exact bytes while nothing was changed), except:

- from the first event of a ``recall_messages`` call on, the rest of that answer is held; if the answer turns out
  to call the client's own tools too, what was held goes out (without the recall call) and the stream goes on; if
  it is a recall round, the held content goes out, its closing events are dropped and the next round's stream
  continues the same answer (its opening events dropped, its blocks, tool calls or output items numbered on from
  those already sent, sequence numbers rising, the first round's chunk or response id kept: the OpenAI SDK
  refuses a Responses stream whose response id changes, "Lifecycle response identity changed", openai-python
  ``lib/streaming/responses/_responses.py``; a non-streaming answer keeps the last round's id instead, the one a
  ``previous_response_id`` can follow);
- a thinking block (Anthropic) or reasoning item (Responses) waits until the next block starts: it goes with a
  recall call that follows it, else out;
- the last round's closing events end the stream (Anthropic ``message_delta`` / ``message_stop``, OpenAI's
  ``finish_reason`` and usage chunks and ``[DONE]``, Responses' ``response.completed``, whose ``output`` is then
  every item the client was sent).

Event shapes: Anthropic "Streaming Messages" (https://docs.anthropic.com/en/docs/build-with-claude/streaming),
OpenAI "Streaming API responses" (https://platform.openai.com/docs/api-reference/chat-streaming) and "Responses
streaming events" (https://platform.openai.com/docs/api-reference/responses-streaming), read 2026-12-01; the
events are read and written by :mod:`.sse`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ..compaction.recall import RECALL_TOOL_NAME
from .recall_shapes import STOPPED_NOTE
from .recall_gemini_stream import GeminiSplicer
from .recall_splice import Splicer
from .sse import Event, encode

__all__ = ["splicer"]


def _data(ev: Event) -> dict:
    return ev.data if isinstance(ev.data, dict) else {}


class _Anthropic(Splicer):
    lead = ("thinking", "redacted_thinking")

    def _clear(self) -> None:
        self.blocks: dict[int, dict] = {}
        self.partial: dict[int, str] = {}
        self.message: dict = {}

    def classify(self, ev: Event) -> tuple[str, Any, dict]:
        d = _data(ev)
        t = d.get("type")
        if t == "message_start":
            return "opening", None, {}
        if t == "content_block_start":
            return "start", d.get("index"), d.get("content_block") or {}
        if t in ("content_block_delta", "content_block_stop"):
            return "part", d.get("index"), {}
        return ("closing" if t in ("message_delta", "message_stop") else "other"), None, {}

    def accumulate(self, ev: Event, kind: str, index: Any, item: dict) -> None:
        d = _data(ev)
        if kind == "opening":
            self.message = copy.deepcopy(d.get("message") or {})
        elif kind == "start":
            self.blocks[index] = copy.deepcopy(item)
        elif d.get("type") == "content_block_delta" and index in self.blocks:
            _delta(self.blocks[index], d.get("delta") or {}, self.partial, index)
        elif d.get("type") == "content_block_stop" and index in self.partial:
            try:
                self.blocks[index]["input"] = json.loads(self.partial.pop(index) or "{}")
            except ValueError:
                self.blocks[index]["input"] = {}
        elif d.get("type") == "message_delta":
            self.message.update(d.get("delta") or {})
            self.message["usage"] = d.get("usage") or self.message.get("usage")

    def reply(self) -> dict:
        return {**self.message, "content": [self.blocks[i] for i in sorted(self.blocks)]}

    def is_error(self, ev: Event) -> bool:
        return _data(ev).get("type") == "error"

    def note(self) -> list[Event]:
        self.map["note"] = self.next_index()
        return [Event(b"", "content_block_start", {"type": "content_block_start", "index": "note",
                                                   "content_block": {"type": "text", "text": ""}}),
                Event(b"", "content_block_delta", {"type": "content_block_delta", "index": "note",
                                                   "delta": {"type": "text_delta", "text": STOPPED_NOTE}}),
                Event(b"", "content_block_stop", {"type": "content_block_stop", "index": "note"})]

    def render(self, ev: Event) -> bytes:
        d = ev.data
        if not isinstance(d, dict):
            return ev.raw
        if "index" in d:
            new = self.map.get(d["index"], d["index"])
            if new != d["index"] or not ev.raw:
                return encode(ev.name, {**d, "index": new})
        delta = d.get("delta") or {}
        if d.get("type") == "message_delta" and self.stopping and delta.get("stop_reason") == "tool_use":
            return encode(ev.name, {**d, "delta": {**delta, "stop_reason": "end_turn"}})
        return ev.raw


def _delta(block: dict, delta: dict, partial: dict, index: int) -> None:
    """Apply one Anthropic ``content_block_delta`` to the block it belongs to."""
    t = delta.get("type")
    if t == "text_delta":
        block["text"] = block.get("text", "") + delta.get("text", "")
    elif t == "input_json_delta":
        partial[index] = partial.get(index, "") + delta.get("partial_json", "")
    elif t == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
    elif t == "signature_delta":
        block["signature"] = delta.get("signature", "")
    elif t == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))


class _Chat(Splicer):

    def __init__(self) -> None:
        self.first_id: str | None = None
        self.last: dict = {}
        self.texts = 0
        self.separated = True
        super().__init__()

    def _clear(self) -> None:
        self.content = ""
        self.calls: dict[int, dict] = {}
        self.finish: str | None = None
        self.separated = self.texts == 0

    def feed(self, ev: Event) -> list[bytes]:
        d = _data(ev)
        choice = (d.get("choices") or [None])[0]
        calls = ((choice.get("delta") or {}).get("tool_calls") if isinstance(choice, dict) else None)
        if not isinstance(calls, list) or len(calls) < 2:
            return super().feed(ev)
        out: list[bytes] = []                                # one event per tool-call delta
        for c in calls:
            out += super().feed(Event(b"", ev.name, {**d, "choices": [
                {**choice, "delta": {**choice["delta"], "tool_calls": [c]}}]}))
        return out

    def classify(self, ev: Event) -> tuple[str, Any, dict]:
        d = ev.data
        if not isinstance(d, dict):
            return ("closing" if d == "[DONE]" else "other"), None, {}
        choices = d.get("choices")
        if choices == [] or (isinstance(choices, list) and isinstance(choices[0], dict)
                             and choices[0].get("finish_reason")):
            return "closing", None, {}
        delta = (choices[0].get("delta") or {}) if isinstance(choices, list) and isinstance(choices[0], dict) else {}
        if delta.get("tool_calls"):
            c = delta["tool_calls"][0]
            fn = c.get("function") or {}
            kind = "start" if c.get("id") or fn.get("name") else "part"
            return kind, c.get("index", 0), {"type": "function_call", "name": fn.get("name")}
        if delta.get("role") and not delta.get("content"):
            return "opening", None, {}
        return "other", None, {}

    def accumulate(self, ev: Event, kind: str, index: Any, item: dict) -> None:
        d = _data(ev)
        self.first_id = self.first_id or d.get("id")
        self.last.update({k: v for k, v in d.items() if k != "choices"})
        choice = (d.get("choices") or [{}])[0]
        choice = choice if isinstance(choice, dict) else {}
        delta = choice.get("delta") or {}
        if isinstance(delta.get("content"), str):
            self.content += delta["content"]
        for c in delta.get("tool_calls") or []:
            call = self.calls.setdefault(c.get("index", 0), {"id": "", "type": "function",
                                                            "function": {"name": "", "arguments": ""}})
            fn = c.get("function") or {}
            call["id"] = c.get("id") or call["id"]
            call["function"]["name"] = fn.get("name") or call["function"]["name"]
            call["function"]["arguments"] += fn.get("arguments") or ""
        self.finish = choice.get("finish_reason") or self.finish

    def reply(self) -> dict:
        msg: dict = {"role": "assistant", "content": self.content or None}
        if self.calls:
            msg["tool_calls"] = [self.calls[k] for k in sorted(self.calls)]
        return {**self.last, "choices": [{"index": 0, "message": msg, "finish_reason": self.finish}]}

    def is_error(self, ev: Event) -> bool:
        return "error" in _data(ev)

    def sent_nothing(self) -> bool:
        return self.count == 0 and self.texts == 0

    def note(self) -> list[Event]:
        base = {k: v for k, v in self.last.items() if k != "usage"}
        return [Event(b"", None, {**base, "choices": [{"index": 0, "delta": {"content": STOPPED_NOTE},
                                                        "finish_reason": None}]})]

    def render(self, ev: Event) -> bytes:
        d = ev.data
        if not isinstance(d, dict):
            return ev.raw
        out = dict(d)
        if self.round and self.first_id and out.get("id") != self.first_id:
            out["id"] = self.first_id
        choices = out.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            out["choices"] = [self._choice(choices[0])] + choices[1:]
        return ev.raw if out == d and ev.raw else encode(ev.name, out)

    def _choice(self, choice: dict) -> dict:
        delta = dict(choice.get("delta") or {})
        if delta.get("tool_calls"):
            delta["tool_calls"] = [{**c, "index": self.map.get(c.get("index", 0), c.get("index", 0))}
                                   for c in delta["tool_calls"]]
        if isinstance(delta.get("content"), str) and delta["content"]:
            self.texts += 1
            if not self.separated:
                delta["content"], self.separated = "\n\n" + delta["content"], True
        out = {**choice, "delta": delta}
        if self.stopping and choice.get("finish_reason") == "tool_calls":
            out["finish_reason"] = "stop"
        return out


class _Responses(Splicer):
    lead = ("reasoning",)

    def __init__(self) -> None:
        self.sent_items: list[dict] = []
        self.seq = -1
        self.first_id: Any = None
        super().__init__()

    def _clear(self) -> None:
        self.items: dict[int, dict] = {}
        self.completed: dict | None = None

    def classify(self, ev: Event) -> tuple[str, Any, dict]:
        d = _data(ev)
        t = d.get("type") or ""
        if t in ("response.created", "response.in_progress", "response.queued"):
            return "opening", None, {}
        if t in ("response.completed", "response.incomplete", "response.failed"):
            return "closing", None, {}
        if t == "response.output_item.added":
            return "start", d.get("output_index"), d.get("item") or {}
        return ("part" if "output_index" in d else "other"), d.get("output_index"), {}

    def accumulate(self, ev: Event, kind: str, index: Any, item: dict) -> None:
        d = _data(ev)
        if d.get("type") == "response.output_item.done":
            self.items[index] = d.get("item") or {}
        elif kind == "opening" and self.first_id is None:
            self.first_id = (d.get("response") or {}).get("id")
        elif kind == "closing":
            self.completed = d.get("response") or {}

    def reply(self) -> dict:
        base = dict(self.completed or {})
        base["output"] = [self.items[i] for i in sorted(self.items)] or base.get("output") or []
        return base

    def is_error(self, ev: Event) -> bool:
        return _data(ev).get("type") in ("error", "response.failed")

    def note(self) -> list[Event]:
        item = {"type": "message", "id": "msg_snapglyph_note", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": STOPPED_NOTE, "annotations": []}]}
        self.map["note"] = self.next_index()
        return [Event(b"", "response.output_item.added", {"type": "response.output_item.added",
                                                          "output_index": "note", "item": item}),
                Event(b"", "response.output_item.done", {"type": "response.output_item.done",
                                                         "output_index": "note", "item": item})]

    def render(self, ev: Event) -> bytes:
        d = ev.data
        if not isinstance(d, dict):
            return ev.raw
        out = dict(d)
        if "output_index" in out:
            out["output_index"] = self.map.get(out["output_index"], out["output_index"])
        if out.get("type") == "response.output_item.done":
            self.sent_items.append(out.get("item") or {})
        if out.get("type") in ("response.completed", "response.incomplete") and self.changed:
            out["response"] = {**(out.get("response") or {}), "output": list(self.sent_items)}
        if self.round and isinstance(out.get("response"), dict) and self.first_id:   # one response id a stream
            out["response"] = {**out["response"], "id": self.first_id}
        if out == d and ev.raw and not self.changed:
            if isinstance(d.get("sequence_number"), int):
                self.seq = d["sequence_number"]
            return ev.raw
        self.seq += 1
        out["sequence_number"] = self.seq
        return encode(ev.name, out)


def splicer(dialect: str) -> Splicer | GeminiSplicer:
    """The :class:`~.recall_splice.Splicer` of a dialect (``anthropic``, ``openai`` or ``responses``; Gemini's is
    :class:`~.recall_gemini_stream.GeminiSplicer`, its rules at the level of parts).

    Examples
    --------
    A round of text and a recall call, then a round of text: the client gets one message, blocks 0 and 1.

    >>> from snapglyph.serve.sse import parse_event
    >>> def ev(data): return parse_event(encode(data["type"], data))
    >>> def block(i, b): return ev({"type": "content_block_start", "index": i, "content_block": b})
    >>> def stop(i): return ev({"type": "content_block_stop", "index": i})
    >>> def end(why): return [ev({"type": "message_delta", "delta": {"stop_reason": why}}), ev({"type": "message_stop"})]
    >>> first = [ev({"type": "message_start", "message": {"id": "m1", "content": []}}),
    ...          block(0, {"type": "text", "text": "let me look"}), stop(0),
    ...          block(1, {"type": "tool_use", "id": "t1", "name": "recall_messages", "input": {}}), stop(1),
    ...          *end("tool_use")]
    >>> sp = splicer("anthropic")
    >>> sent = [b for e in first for b in sp.feed(e)]
    >>> [b.split(b"\\n")[0] for b in sent]
    [b'event: message_start', b'event: content_block_start', b'event: content_block_stop']
    >>> [b["type"] for b in sp.reply()["content"]], sp.end_round(go_on=True)
    (['text', 'tool_use'], [])
    >>> second = [ev({"type": "message_start", "message": {"id": "m2", "content": []}}),
    ...           block(0, {"type": "text", "text": "the hash is 3f2a"}), stop(0), *end("end_turn")]
    >>> sent = [b for e in second for b in sp.feed(e)] + sp.end_round(go_on=False)
    >>> [(parse_event(b).name, parse_event(b).data.get("index")) for b in sent]
    [('content_block_start', 1), ('content_block_stop', 1), ('message_delta', None), ('message_stop', None)]
    """
    return {"anthropic": _Anthropic, "responses": _Responses, "gemini": GeminiSplicer}.get(dialect, _Chat)()
