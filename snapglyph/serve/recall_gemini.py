"""Gemini's shapes of a recall round: the ``recall_messages`` declaration added to a ``generateContent`` request,
the model's ``functionCall`` parts of it, the follow-up request that answers them with ``functionResponse`` parts,
and the answer the client gets (:mod:`.recall_shapes` dispatches here for the ``gemini`` dialect; the stream's
splicer is :mod:`.recall_gemini_stream`).

Shapes from the Gemini API reference, read 2026-12-07: ``models.generateContent``
(https://ai.google.dev/api/generate-content: a ``GenerateContentResponse``'s ``candidates[0].content.parts``, a
``functionCall`` part ``{name, args, id?}``), ``Tool`` and ``FunctionResponse`` (https://ai.google.dev/api/caching#Tool,
#FunctionResponse: ``response`` is a JSON object, "use 'output' key to specify function output"; its ``id`` answers
the call of that ``id``), function calling (https://ai.google.dev/gemini-api/docs/function-calling: a function
response turn is a ``user`` content right after the ``model`` turn that called, one response part per call part)
and thought signatures (https://ai.google.dev/gemini-api/docs/thought-signatures: the model's parts go back as they
came, ``thoughtSignature`` included; a thought summary is a part with ``thought: true``).

The declaration goes into the first tool that holds ``functionDeclarations`` (either spelling), after the client's
own declarations: Gemini 2.5 models read only the first such tool (google-gemini/gemini-cli#65,
zed-industries/zed#27905, php-llm/llm-chain#379); a request without one gets a tool of its own (a function tool
may not share its object with ``googleSearch``).
"""

from __future__ import annotations

import copy
from typing import Any

from ..compaction.recall import RECALL_TOOL_NAME

__all__ = ["SEPARATOR", "add_declaration", "add_part", "calls", "declares", "follow_up", "is_client_call", "is_recall",
           "is_text", "is_thought", "join", "merge", "parts_of", "strip", "with_parts"]

SEPARATOR = {"text": "\n\n"}
"""The text part put between one round's text and a later round's (streaming or not), as the chat dialect's
``"\\n\\n"``; the model's own parts are never changed (a signed part stays as signed)."""

_FC = ("functionCall", "function_call")
_DECLS = ("functionDeclarations", "function_declarations")


def _fc(part: Any) -> dict | None:
    if not isinstance(part, dict):
        return None
    for k in _FC:
        if isinstance(part.get(k), dict):
            return part[k]
    return None


def is_recall(part: Any) -> bool:
    """Whether a part is a ``functionCall`` of ``recall_messages`` (:func:`is_client_call`: of another function;
    :func:`is_thought`: a thought summary; :func:`is_text`: answer text that is not empty).

    Examples
    --------
    >>> parts = [{"functionCall": {"name": "recall_messages"}}, {"function_call": {"name": "ls"}},
    ...          {"text": "hm", "thought": True}, {"text": "done"}, {"text": ""}]
    >>> [(is_recall(p), is_client_call(p), is_thought(p), is_text(p)) for p in parts]   # doctest: +NORMALIZE_WHITESPACE
    [(True, False, False, False), (False, True, False, False), (False, False, True, False),
     (False, False, False, True), (False, False, False, False)]
    """
    fc = _fc(part)
    return fc is not None and fc.get("name") == RECALL_TOOL_NAME


def is_client_call(part: Any) -> bool:
    """Whether a part is a ``functionCall`` of one of the client's tools."""
    return _fc(part) is not None and not is_recall(part)


def is_thought(part: Any) -> bool:
    """Whether a part is a thought summary (``thought: true``)."""
    return isinstance(part, dict) and part.get("thought") is True


def is_text(part: Any) -> bool:
    """Whether a part is answer text (not a thought) with some text."""
    return isinstance(part, dict) and isinstance(part.get("text"), str) and bool(part["text"]) and not is_thought(part)


def _candidate(reply: Any) -> dict:
    cands = reply.get("candidates") if isinstance(reply, dict) else None
    return cands[0] if isinstance(cands, list) and cands and isinstance(cands[0], dict) else {}


def parts_of(reply: Any) -> list[dict]:
    """The parts of a reply's (or chunk's) first candidate.

    Examples
    --------
    >>> parts_of({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}}]})
    [{'text': 'hi'}]
    >>> parts_of({"error": {"code": 500}})
    []
    """
    content = _candidate(reply).get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def with_parts(reply: dict, parts: list[dict], **fields: Any) -> dict:
    """``reply`` (or a chunk) whose first candidate holds ``parts`` (and ``fields``, e.g. a ``finishReason``);
    nothing else changed, ``reply`` itself not modified.

    Examples
    --------
    >>> with_parts({"candidates": [{"content": {"role": "model", "parts": []}, "index": 0}], "responseId": "r"},
    ...            [{"text": "hi"}], finishReason="STOP")
    {'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'hi'}]}, 'index': 0, 'finishReason': 'STOP'}], 'responseId': 'r'}
    """
    cands = list(reply.get("candidates") or [{}])
    cand = {**_candidate(reply), **fields}
    content = cand.get("content") if isinstance(cand.get("content"), dict) else {"role": "model"}
    cand["content"] = {**content, "parts": parts}
    return {**reply, "candidates": [cand] + cands[1:]}


_PLAIN = {"text", "thought", "thoughtSignature", "thought_signature"}
_SIGNATURE = {"thoughtSignature", "thought_signature"}


def add_part(parts: list[dict], p: dict) -> None:
    """Append one streamed part to an answer's ``parts``: a text delta joins the text part before it (the same
    ``thought`` flag, no signature on that one yet: a signature ends a part), anything else is a part of its own.

    Examples
    --------
    >>> parts = []
    >>> for p in ({"text": "ab"}, {"text": "c", "thoughtSignature": "s"}, {"text": "d"}, {"functionCall": {}}):
    ...     add_part(parts, p)
    >>> parts
    [{'text': 'abc', 'thoughtSignature': 's'}, {'text': 'd'}, {'functionCall': {}}]
    """
    prev = parts[-1] if parts else None
    if (prev is not None and "text" in p and "text" in prev and set(p) <= _PLAIN and set(prev) <= _PLAIN
            and is_thought(p) == is_thought(prev) and not set(prev) & _SIGNATURE):
        prev["text"] += p["text"]
        prev.update({k: v for k, v in p.items() if k != "text"})
    else:
        parts.append(copy.deepcopy(p))


def join(chunks: list) -> dict:
    """The chunks of a ``streamGenerateContent`` answer sent as one JSON array, as one ``GenerateContentResponse``:
    the parts in order (:func:`add_part`), the last chunk's other fields.

    Examples
    --------
    >>> join([{"candidates": [{"content": {"parts": [{"text": "a"}]}}], "responseId": "r"},
    ...       {"candidates": [{"content": {"parts": [{"text": "b"}]}, "finishReason": "STOP"}], "responseId": "r"}])
    {'candidates': [{'content': {'parts': [{'text': 'ab'}]}, 'finishReason': 'STOP'}], 'responseId': 'r'}
    """
    parts: list[dict] = []
    chunks = [c for c in chunks if isinstance(c, dict)]
    for c in chunks:
        for p in parts_of(c):
            add_part(parts, p)
    return with_parts(chunks[-1], parts) if chunks else {}


def declares(body: Any) -> bool:
    """Whether a request's ``tools`` declare ``recall_messages`` (either spelling).

    Examples
    --------
    >>> declares({"tools": [{"functionDeclarations": [{"name": "recall_messages"}]}]}), declares({"tools": []})
    (True, False)
    """
    tools = body.get("tools") if isinstance(body, dict) else None
    return isinstance(tools, list) and any(
        isinstance(d, dict) and d.get("name") == RECALL_TOOL_NAME
        for t in tools if isinstance(t, dict) for k in _DECLS if isinstance(t.get(k), list) for d in t[k])


def add_declaration(body: dict, decl: dict) -> dict:
    """``body`` with ``decl`` after the declarations of its first function tool, else in a tool of its own (module
    docstring); ``body`` is not modified.

    Examples
    --------
    >>> body = {"tools": [{"googleSearch": {}}, {"functionDeclarations": [{"name": "ls"}]}]}
    >>> add_declaration(body, {"name": "recall_messages"})["tools"]
    [{'googleSearch': {}}, {'functionDeclarations': [{'name': 'ls'}, {'name': 'recall_messages'}]}]
    >>> add_declaration({}, {"name": "recall_messages"})["tools"]
    [{'functionDeclarations': [{'name': 'recall_messages'}]}]
    """
    tools = list(body.get("tools")) if isinstance(body.get("tools"), list) else []
    for i, t in enumerate(tools):
        key = next((k for k in _DECLS if isinstance(t, dict) and isinstance(t.get(k), list)), None)
        if key is not None:
            tools[i] = {**t, key: list(t[key]) + [decl]}
            return {**body, "tools": tools}
    return {**body, "tools": tools + [{"functionDeclarations": [decl]}]}


def calls(reply: dict) -> list[tuple[str, Any, Any]]:
    """Every ``functionCall`` of an answer as ``(call id or "", name, args)``.

    Examples
    --------
    >>> calls({"candidates": [{"content": {"parts": [{"text": "hm"}, {"functionCall": {"name": "recall_messages",
    ...        "args": {"ids": "#3"}}}]}}]})
    [('', 'recall_messages', {'ids': '#3'})]
    """
    out = []
    for p in parts_of(reply):
        fc = _fc(p)
        if fc is not None:
            out.append((str(fc.get("id") or ""), fc.get("name"), fc.get("args")))
    return out


def without_recall(parts: list[dict]) -> list[dict]:
    """Parts less the recall calls and the thought parts right before one."""
    out: list[dict] = []
    for p in parts:
        if is_recall(p):
            while out and is_thought(out[-1]):
                out.pop()
            continue
        out.append(p)
    return out


def strip(reply: dict) -> dict:
    """An answer with its recall calls taken out (``finishReason`` stays: Gemini ends a call turn with ``STOP``).

    Examples
    --------
    >>> r = {"candidates": [{"content": {"role": "model", "parts": [{"text": "let me look"}, {"functionCall": {
    ...     "name": "recall_messages", "args": {"ids": "3"}}}]}, "finishReason": "STOP"}], "responseId": "r1"}
    >>> strip(r)["candidates"][0]
    {'content': {'role': 'model', 'parts': [{'text': 'let me look'}]}, 'finishReason': 'STOP'}
    """
    return with_parts(reply, without_recall(parts_of(reply)))


def merge(earlier: list[dict], last: dict, note: str) -> dict:
    """The one answer the client gets: the last round's (its ``finishReason``, ``usageMetadata`` and
    ``responseId``) holding every round's parts in order, recall calls taken out, :data:`SEPARATOR` before a later
    round's first text where an earlier round had text; a text part ``note`` when no part is left.

    Examples
    --------
    >>> first = {"candidates": [{"content": {"role": "model", "parts": [{"text": "let me look"}, {"functionCall":
    ...          {"name": "recall_messages", "args": {"ids": "3"}}}]}, "finishReason": "STOP"}], "responseId": "a"}
    >>> last = {"candidates": [{"content": {"role": "model", "parts": [{"text": "3f2a"}]}, "finishReason": "STOP"}],
    ...         "responseId": "b"}
    >>> out = merge([first], last, "stopped")
    >>> out["responseId"], [p["text"] for p in parts_of(out)]
    ('b', ['let me look', '\\n\\n', '3f2a'])
    """
    parts: list[dict] = []
    had_text = False
    for r in list(earlier) + [last]:
        sep = had_text
        for p in without_recall(parts_of(r)):
            if sep and is_text(p):
                parts.append(dict(SEPARATOR))
                sep = False
            had_text = had_text or is_text(p)
            parts.append(p)
    return with_parts(last, parts or [{"text": note}])


def follow_up(body: dict, reply: dict, answers: list[tuple[str, str]]) -> dict:
    """The next request of a recall round: ``body`` (as sent) with the model's turn as it came and a ``user`` turn
    of one ``functionResponse`` per answer ``(call id, text)`` (the ``id`` only where the call had one).

    Examples
    --------
    >>> body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"temperature": 0}}
    >>> reply = {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "recall_messages",
    ...          "args": {"ids": "3"}}, "thoughtSignature": "c2ln"}]}}]}
    >>> out = follow_up(body, reply, [("", "#3 user\\nhello")])
    >>> [c["role"] for c in out["contents"]], out["contents"][2]["parts"][0]["functionResponse"]
    (['user', 'model', 'user'], {'name': 'recall_messages', 'response': {'output': '#3 user\\nhello'}})
    >>> out["contents"][1]["parts"][0]["thoughtSignature"], out["generationConfig"]
    ('c2ln', {'temperature': 0})
    """
    content = _candidate(reply).get("content")
    turn = copy.deepcopy(content) if isinstance(content, dict) else {"parts": []}
    turn["role"] = "model"
    responses = []
    for cid, text in answers:
        fr: dict = {"name": RECALL_TOOL_NAME, "response": {"output": text}}
        if cid:
            fr["id"] = cid
        responses.append({"functionResponse": fr})
    return {**body, "contents": list(body.get("contents") or []) + [turn, {"role": "user", "parts": responses}]}
