"""The simulator's answers of a model that refuses, and of a server that reports an error after its HTTP 200.

- :func:`refusal_reply` turns a reply into each dialect's successful refusal: Anthropic ``stop_reason: "refusal"``
  with ``stop_details`` (``category``, ``explanation``; Claude Opus 4.7+, UKGovernmentBEIS/inspect_ai#4163, and the
  ``"cyber"`` refusal on imaged context of teamchong/pxpipe#37), an OpenAI chat ``message.refusal``, a Responses
  ``refusal`` content part (pipecat-ai/pipecat#5788 quotes the documented events), a Gemini candidate with
  ``finishReason: "SAFETY"`` and no content (ai.google.dev/api/generate-content ``FinishReason``); all read
  2026-12-07. :func:`refusal_events` gives the same answer as a stream.
- :func:`error_first_events` is a stream whose first event is the error (sglang behind LiteLLM: HTTP 200, then
  ``data: {"error": {...}}``; sgl-project/sglang#12081, BerriAI/litellm#22624, read 2026-12-07).
"""

from __future__ import annotations

from typing import Any, Iterator

from .streams import sse

__all__ = ["REFUSAL_TEXT", "error_first_events", "refusal_events", "refusal_reply"]

REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
"""The text of every simulated refusal."""


def refusal_reply(dialect: str, reply: dict) -> dict:
    """``reply`` (a successful answer in ``dialect``) as that dialect's refusal: same ids and usage, no text and no
    tool call.

    Examples
    --------
    >>> r = refusal_reply("anthropic", {"id": "msg_1", "content": [{"type": "text", "text": "hi"}],
    ...                                 "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 1}})
    >>> r["content"], r["stop_reason"], r["stop_details"]["category"]
    ([], 'refusal', 'cyber')
    >>> refusal_reply("openai", {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
    ...                                       "finish_reason": "stop"}]})["choices"][0]["message"]["content"] is None
    True
    """
    if dialect == "anthropic":
        return {**reply, "content": [], "stop_reason": "refusal",
                "stop_details": {"type": "refusal", "category": "cyber",
                                 "explanation": "This request may relate to malicious cyber activity."}}
    if dialect == "openai":
        choice = {**reply["choices"][0], "finish_reason": "stop",
                  "message": {"role": "assistant", "content": None, "refusal": REFUSAL_TEXT}}
        return {**reply, "choices": [choice]}
    if dialect == "responses":
        msg = {"type": "message", "id": "msg_refusal", "status": "completed", "role": "assistant",
               "content": [{"type": "refusal", "refusal": REFUSAL_TEXT}]}
        return {**reply, "output": [msg]}
    cand = {"finishReason": "SAFETY", "index": 0, "safetyRatings": [
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]}
    return {**reply, "candidates": [cand]}


def refusal_events(dialect: str, reply: dict) -> Iterator[bytes]:
    """The stream of a refusal made by :func:`refusal_reply`: Anthropic's ``message_start``, ``message_delta``
    (``stop_reason: "refusal"``), ``message_stop``; chat's role chunk, ``refusal`` deltas and ``[DONE]``; Responses'
    ``response.created``, ``response.refusal.delta`` / ``.done``, ``response.completed``; Gemini's one chunk.

    Examples
    --------
    >>> r = refusal_reply("anthropic", {"id": "m", "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}})
    >>> [e.split(b"\\n")[0] for e in refusal_events("anthropic", r)]
    [b'event: message_start', b'event: message_delta', b'event: message_stop']
    """
    if dialect == "anthropic":
        start = {**reply, "stop_reason": None, "stop_details": None}
        yield sse({"type": "message_start", "message": start}, "message_start")
        yield sse({"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_sequence": None,
                                                      "stop_details": reply["stop_details"]},
                   "usage": {"output_tokens": 1}}, "message_delta")
        yield sse({"type": "message_stop"}, "message_stop")
    elif dialect == "openai":
        base = {k: reply.get(k) for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        for delta, finish in (({"role": "assistant", "content": None, "refusal": ""}, None),
                              ({"refusal": REFUSAL_TEXT}, None), ({}, "stop")):
            yield sse({**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})
        yield sse("[DONE]")
    elif dialect == "responses":
        pending = {**reply, "status": "in_progress", "output": [], "usage": None}
        yield sse({"type": "response.created", "sequence_number": 0, "response": pending}, "response.created")
        for n, (name, extra) in enumerate((("response.refusal.delta", {"delta": REFUSAL_TEXT}),
                                           ("response.refusal.done", {"refusal": REFUSAL_TEXT})), 1):
            yield sse({"type": name, "sequence_number": n, "item_id": "msg_refusal", "output_index": 0,
                       "content_index": 0, **extra}, name)
        yield sse({"type": "response.completed", "sequence_number": 3, "response": reply}, "response.completed")
    else:
        yield sse(reply, eol="\r\n")


def error_first_events(dialect: str, error: Any) -> Iterator[bytes]:
    """A stream (after an HTTP 200) whose first event is ``error`` (an error body as :func:`overflow_body` gives
    it): Anthropic's ``event: error``, a Responses ``error`` event, else sglang's ``data: {"error": ...}``.

    Examples
    --------
    >>> next(error_first_events("openai", {"error": {"message": "x"}}))
    b'data: {"error":{"message":"x"}}\\n\\n'
    """
    err = error if isinstance(error, dict) else {"error": {"message": str(error)}}
    if dialect == "anthropic":
        yield sse(err if err.get("type") == "error" else {"type": "error", "error": err.get("error", err)}, "error")
    elif dialect == "responses":
        inner = err.get("error") if isinstance(err.get("error"), dict) else err
        yield sse({"type": "error", "sequence_number": 0, "code": inner.get("code"),
                   "message": inner.get("message", ""), "param": inner.get("param")}, "error")
    else:
        yield sse(err if "error" in err else {"error": err})
        if dialect == "openai":
            yield sse("[DONE]")
