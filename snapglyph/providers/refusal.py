"""Whether a successful answer refuses or says nothing, in each dialect; and which streamed event carries content.

A model may answer a request whose history is sent as images with an HTTP 200 that refuses or is empty (a benign
imaged context refused with ``stop_reason: "refusal"``, ``stop_details.category: "cyber"``, teamchong/pxpipe#37;
refusals right after compaction, openai/codex#43167; as issue 35 quotes them). The signals, each as documented
(read 2026-12-07):

- Anthropic: ``stop_reason: "refusal"`` (with ``stop_details`` ``category`` / ``explanation`` on Claude Opus 4.7+,
  UKGovernmentBEIS/inspect_ai#4163); streamed in ``message_delta.delta.stop_reason``;
- OpenAI chat completions: ``choices[].message.refusal`` (streamed as ``delta.refusal``), and
  ``finish_reason: "content_filter"``;
- OpenAI Responses: a ``refusal`` content part of an output message (streamed as ``response.refusal.delta`` /
  ``.done``, pipecat-ai/pipecat#5788 quotes the documented events);
- Gemini: a candidate whose ``finishReason`` is ``SAFETY``, ``RECITATION``, ``BLOCKLIST``, ``PROHIBITED_CONTENT``,
  ``SPII`` or ``IMAGE_SAFETY``, or ``promptFeedback.blockReason`` (https://ai.google.dev/api/generate-content,
  ``FinishReason`` and ``BlockReason``);
- every dialect: an answer with no text and no tool call is empty.
"""

from __future__ import annotations

from typing import Any

__all__ = ["GEMINI_REFUSALS", "carries_content", "refusal"]

GEMINI_REFUSALS = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"})
"""Gemini ``finishReason`` values that end a candidate without its answer."""


def _d(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def _l(x: Any) -> list:
    return x if isinstance(x, list) else []


def _text(x: Any) -> bool:
    return isinstance(x, str) and bool(x.strip())


def carries_content(dialect: str, data: Any) -> bool:
    """Whether one answer, or one streamed event's parsed ``data``, carries answer content: text (not whitespace
    alone), or a tool call. A refusal carries none.

    Examples
    --------
    >>> carries_content("anthropic", {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Hi"}})
    True
    >>> carries_content("openai", {"choices": [{"delta": {"role": "assistant", "content": ""}}]})
    False
    >>> carries_content("responses", {"type": "response.output_text.delta", "delta": "Hi"})
    True
    """
    d = _d(data)
    if dialect == "anthropic":
        if d.get("type") == "content_block_start":
            block = _d(d.get("content_block"))
            return block.get("type") in ("tool_use", "server_tool_use") or _text(block.get("text"))
        if d.get("type") == "content_block_delta":
            delta = _d(d.get("delta"))
            return _text(delta.get("text")) or _text(delta.get("partial_json")) or _text(delta.get("thinking"))
        return any(b.get("type") in ("tool_use", "server_tool_use") or _text(b.get("text"))
                   for b in map(_d, _l(d.get("content"))))
    if dialect == "openai":
        for c in map(_d, _l(d.get("choices"))):
            m = _d(c.get("delta") or c.get("message"))
            if _text(m.get("content")) or m.get("tool_calls") or m.get("function_call"):
                return True
        return False
    if dialect == "responses":
        t = d.get("type", "")
        if t in ("response.output_text.delta", "response.function_call_arguments.delta"):
            return _text(d.get("delta"))
        if t == "response.output_item.added":
            return _d(d.get("item")).get("type") not in (None, "message", "reasoning")
        items = _l(d.get("output")) or _l(_d(d.get("response")).get("output"))
        return any(i.get("type") not in ("message", "reasoning") or any(
            _text(p.get("text")) for p in map(_d, _l(i.get("content")))) for i in map(_d, items))
    for c in map(_d, _l(d.get("candidates"))):
        if any(_text(p.get("text")) or p.get("functionCall") for p in map(_d, _l(_d(c.get("content")).get("parts")))):
            return True
    return False


def refusal(dialect: str, answer: Any) -> str:
    """Why a successful answer gives the client nothing: ``"refusal (...)"``, ``"empty answer (no text, no tool
    call)"``, or ``""`` for an answer with content.

    Parameters
    ----------
    dialect : str
        ``anthropic``, ``openai``, ``responses`` or ``gemini``.
    answer : dict or list
        The whole answer (a parsed JSON body), or the parsed ``data`` of every event of a streamed one (Gemini's
        ``streamGenerateContent`` without ``alt=sse``: its JSON array of chunks).

    Returns
    -------
    str

    Examples
    --------
    >>> refusal("anthropic", {"content": [], "stop_reason": "refusal", "stop_details": {"category": "cyber"}})
    'refusal (stop_reason refusal, category cyber)'
    >>> refusal("openai", {"choices": [{"message": {"content": None, "refusal": "I can't help."}}]})
    'refusal (message.refusal)'
    >>> refusal("gemini", {"candidates": [{"finishReason": "SAFETY"}]})
    'refusal (finishReason SAFETY)'
    >>> refusal("responses", {"output": []}), refusal("anthropic", {"content": [{"type": "text", "text": "ok"}]})
    ('empty answer (no text, no tool call)', '')
    """
    parts = [_d(a) for a in answer] if isinstance(answer, list) else [_d(answer)]
    if any(carries_content(dialect, p) for p in parts):
        return ""
    for p in parts:
        why = _signal(dialect, p)
        if why:
            return f"refusal ({why})"
    return "empty answer (no text, no tool call)"


def _signal(dialect: str, d: dict) -> str:
    """The refusal signal one answer or event holds, else ``""``."""
    if dialect == "anthropic":
        stop = d.get("stop_reason") or _d(d.get("delta")).get("stop_reason")
        details = _d(d.get("stop_details") or _d(d.get("delta")).get("stop_details"))
        if stop == "refusal":
            return "stop_reason refusal" + (f", category {details['category']}" if details.get("category") else "")
        return ""
    if dialect == "openai":
        for c in map(_d, _l(d.get("choices"))):
            if _text(_d(c.get("delta") or c.get("message")).get("refusal")):
                return "message.refusal"
            if c.get("finish_reason") == "content_filter":
                return "finish_reason content_filter"
        return ""
    if dialect == "responses":
        if d.get("type", "").startswith("response.refusal"):
            return "a refusal part"
        items = _l(d.get("output")) or _l(_d(d.get("response")).get("output"))
        if any(p.get("type") == "refusal" for i in map(_d, items) for p in map(_d, _l(i.get("content")))):
            return "a refusal part"
        return ""
    block = _d(d.get("promptFeedback")).get("blockReason")
    if block:
        return f"promptFeedback.blockReason {block}"
    for c in map(_d, _l(d.get("candidates"))):
        if c.get("finishReason") in GEMINI_REFUSALS:
            return f"finishReason {c['finishReason']}"
    return ""
