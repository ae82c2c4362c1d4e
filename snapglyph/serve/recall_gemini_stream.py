"""One client stream spliced from the upstream ``streamGenerateContent?alt=sse`` streams of a recall loop's rounds.

A Gemini stream is one ``data:`` event per ``GenerateContentResponse`` chunk, no event names, parts whole or text in
deltas, the ``finishReason`` on the last chunk (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent,
read 2026-12-07). The rules are those of :mod:`.recall_stream`, at the level of parts:

- a chunk goes to the client as its bytes while nothing in it changes;
- from a ``recall_messages`` call on, the rest of the answer is held (the call itself is never sent); a call of the
  client's own tools after it releases what was held and the stream goes on (the answer is relayed without recall);
- a thought part (``thought: true``) waits for the next part: it goes with a recall call that follows it, else out;
- in a recall round the held parts go out when the round ends and the last chunk's ``finishReason`` is dropped:
  the next round's chunks continue the same answer (:data:`~.recall_gemini.SEPARATOR` before its first text where
  text went out before; the first round's ``responseId`` kept); the last round's last chunk ends the stream, with
  :data:`~.recall_shapes.STOPPED_NOTE` where no part went out at all.
"""

from __future__ import annotations

import copy
from typing import Any

from .recall_gemini import SEPARATOR, add_part, is_client_call, is_recall, is_text, is_thought, parts_of, with_parts
from .recall_shapes import STOPPED_NOTE
from .sse import Event, encode

__all__ = ["GeminiSplicer"]

class GeminiSplicer:
    """The client's stream over the rounds of one Gemini answer (module docstring); the interface of
    :class:`~.recall_splice.Splicer`: :meth:`feed`, :meth:`reply`, :meth:`end_round` and ``failed``.

    Examples
    --------
    A round of text and a recall call (in one chunk, with the ``finishReason``), then a round of text:

    >>> from snapglyph.serve.sse import parse_event
    >>> def chunk(parts, **kw):
    ...     return parse_event(encode(None, {"candidates": [{"content": {"role": "model", "parts": parts}, **kw}],
    ...                                      "responseId": "r%d" % len(parts)}))
    >>> sp = GeminiSplicer()
    >>> sent = sp.feed(chunk([{"text": "let me look"}, {"functionCall": {"name": "recall_messages",
    ...                       "args": {"ids": "3"}}}], finishReason="STOP"))
    >>> [parts_of(parse_event(b).data) for b in sent], sp.end_round(go_on=True)
    ([[{'text': 'let me look'}]], [])
    >>> sent = sp.feed(chunk([{"text": "3f2a"}], finishReason="STOP")) + sp.end_round(go_on=False)
    >>> [(parts_of(d), d["responseId"], d["candidates"][0]["finishReason"]) for d in (parse_event(b).data for b in sent)]
    [([{'text': '\\n\\n'}, {'text': '3f2a'}], 'r2', 'STOP')]
    """

    def __init__(self) -> None:
        self.round = 0
        self.failed = False
        self.first_id: Any = None
        self.sent_any = False
        self.had_text = False
        self._reset()

    def _reset(self) -> None:
        self.parts: list[dict] = []             # the round's answer, text deltas joined
        self.last: dict = {}                    # the round's last chunk (its fields less the parts)
        self.hold = False
        self.held: list[dict] = []
        self.pending: list[dict] = []
        self.closing: dict | None = None        # the last chunk, held while the round may be a recall round
        self.recalls = 0
        self.clients = 0
        self.sep = self.had_text

    # -- the round's answer --------------------------------------------------------------------------------------
    def _accumulate(self, d: dict) -> None:
        self.last = d
        for p in parts_of(d):
            add_part(self.parts, p)

    def reply(self) -> dict:
        """The round's answer as a non-streaming ``GenerateContentResponse``."""
        return with_parts(self.last, [copy.deepcopy(p) for p in self.parts])

    # -- the rules -----------------------------------------------------------------------------------------------
    def _put(self, out: list[dict], p: dict) -> None:
        """Route one part the client gets: sent with this chunk, or held (:data:`SEPARATOR` first where due)."""
        dest = self.held if self.hold else out
        if self.sep and is_text(p):
            dest.append(dict(SEPARATOR))
            self.sep = False
        self.had_text = self.had_text or is_text(p)
        self.sent_any = True
        dest.append(p)

    def _parts(self, src: list[dict]) -> list[dict]:
        """The parts of one chunk to send now (the rest held, pending or dropped)."""
        out: list[dict] = []
        for p in src:
            if is_recall(p):
                self.pending, self.recalls = [], self.recalls + 1
                self.hold = self.hold or not self.clients
                continue
            if is_thought(p):
                self.pending.append(p)
                continue
            for q in self.pending:
                self._put(out, q)
            self.pending = []
            if is_client_call(p) and not self.clients:
                self.clients = 1
                if self.hold:
                    self.hold, out, self.held = False, out + self.held, []
            elif is_client_call(p):
                self.clients += 1
            self._put(out, p)
        return out

    def feed(self, ev: Event) -> list[bytes]:
        """Take one upstream event; the bytes to send the client now."""
        d = ev.data
        if not isinstance(d, dict):
            return [] if self.hold else [ev.raw]
        self.failed = self.failed or "error" in d
        self.first_id = self.first_id or d.get("responseId")
        self._accumulate(d)
        src = parts_of(d)
        out = self._parts(src)
        cands = d.get("candidates")
        ends = isinstance(cands, list) and bool(cands) and isinstance(cands[0], dict) and "finishReason" in cands[0]
        if ends and self.recalls and not self.clients:
            self.closing, ends = d, False                # held: the round may go on
        elif ends:
            for q in self.pending:
                self._put(out, q)
            self.pending = []
        if out == src and self.closing is not d and (not self.round or d.get("responseId") == self.first_id):
            return [ev.raw]
        if not out and not ends:
            return []
        chunk = with_parts(d, out)
        return [self._encode(chunk if ends else _without_finish(chunk))]

    def _encode(self, d: dict) -> bytes:
        if self.round and self.first_id and d.get("responseId", self.first_id) != self.first_id:
            d = {**d, "responseId": self.first_id}          # one response id a stream
        return encode(None, d)

    def end_round(self, go_on: bool) -> list[bytes]:
        """The round's held bytes: its parts; with ``go_on`` false also its last chunk (:data:`STOPPED_NOTE` where
        no part went out at all)."""
        parts, self.held, self.hold = self.held, [], False
        for q in self.pending:
            self._put(parts, q)
        last, base = self.closing, self.closing or self.last
        if go_on:
            self.round += 1
            self._reset()
            return [self._encode(_without_finish(with_parts(base, parts)))] if parts else []
        if not self.sent_any and self.recalls:
            parts.append({"text": STOPPED_NOTE})
            self.sent_any = True
        self._reset()
        if last is not None:
            return [self._encode(with_parts(last, parts))]
        return [self._encode(_without_finish(with_parts(base, parts)))] if parts else []


def _without_finish(d: dict) -> dict:
    """A chunk whose first candidate has no ``finishReason`` (the answer goes on)."""
    cands = list(d.get("candidates") or [])
    if cands and isinstance(cands[0], dict):
        cands[0] = {k: v for k, v in cands[0].items() if k != "finishReason"}
    return {**d, "candidates": cands}
