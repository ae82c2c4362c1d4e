"""The simulator's Gemini dialect: ``models/{model}:generateContent``, ``:streamGenerateContent`` and
``:countTokens`` as the Gemini API answers them.

Sources (read 2026-12-01): the REST reference of ``models.generateContent`` and ``models.streamGenerateContent``
(https://ai.google.dev/api/generate-content: ``contents``, ``systemInstruction``, ``tools``, ``toolConfig``,
``generationConfig.maxOutputTokens``; the ``GenerateContentResponse`` with ``candidates``, ``finishReason``,
``usageMetadata``, ``modelVersion``, ``responseId``), ``models.countTokens`` (``totalTokens``), and thought
signatures (https://ai.google.dev/gemini-api/docs/thought-signatures: Gemini 3 puts a ``thoughtSignature`` on the
first ``functionCall`` part of a step). The API takes both spellings of the fields (``inlineData`` and
``inline_data``); so does this module.

A stream with ``?alt=sse`` (what the ``google-genai`` SDKs and Gemini CLI ask for) is server-sent events, one
``data:`` line per ``GenerateContentResponse`` chunk; the simulator ends its lines with CRLF (the SSE grammar
allows LF, CR or CRLF), so a relay that only splits on LF is caught. Without ``alt=sse`` the chunks come as one
JSON array. Text is cut into deltas; a function call comes whole in one chunk; the last chunk carries the
``finishReason`` and the full ``usageMetadata``.

Grammar errors, each with the API's verbatim message (``{"error": {"code": 400, "message", "status":
"INVALID_ARGUMENT"}}``): a function call turn not right after a user turn or a function response turn
(continuedev/continue#11164, google-gemini/gemini-cli#11814), a function response turn not right after a
function call turn (langchain-ai/langchain#27799), and a function response turn with another number of parts
than the calls it answers (providers.md part C; google-gemini/gemini-cli#4217).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any, Iterator

from .counting import count_text
from .replies import Step, final_text, tool_calls_of
from .streams import pieces, sse

__all__ = ["gemini_chunks", "gemini_count_items", "gemini_events", "gemini_grammar_error", "gemini_reply",
           "gemini_route", "max_output_tokens", "tools_disabled"]

_ROUTE = re.compile(r"^/(v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$")

_FC = ("functionCall", "function_call")
_FR = ("functionResponse", "function_response")


def gemini_route(path: str) -> tuple[str, str] | None:
    """``(model, method)`` of a Gemini API path (query string removed), or ``None`` for any other path.

    Examples
    --------
    >>> gemini_route("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    ('gemini-2.5-flash', 'streamGenerateContent')
    >>> gemini_route("/v1/messages") is None
    True
    """
    m = _ROUTE.match(path)
    return (m.group(2), m.group(3)) if m else None


def _get(d: dict, *names: str) -> Any:
    for n in names:
        if n in d:
            return d[n]
    return None


def _parts(content: Any) -> list[dict]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _chat_part(p: dict) -> dict | None:
    """One Gemini part as a chat-like content part for counting (None: counted elsewhere or not at all)."""
    if isinstance(p.get("text"), str):
        return {"type": "text", "text": p["text"]}
    blob = _get(p, "inlineData", "inline_data")
    if isinstance(blob, dict):
        return {"type": "image", "source": {"data": str(blob.get("data", ""))}}
    ref = _get(p, "fileData", "file_data")
    if isinstance(ref, dict):
        return {"type": "image_url", "image_url": {"url": str(_get(ref, "fileUri", "file_uri") or "")}}
    fr = _get(p, *_FR)
    if isinstance(fr, dict):
        return {"type": "text", "text": f"{fr.get('name', '')} {json.dumps(fr.get('response', {}))}"}
    return None


def gemini_count_items(body: dict) -> tuple[list, list[dict]]:
    """A ``generateContent`` body as ``(system parts, chat-like messages)`` for counting
    (:class:`snapglyph.testing.counting.Counter`): text parts count their text, ``inlineData`` images their
    PNG's cost, ``functionCall`` parts their name and arguments, ``functionResponse`` parts their name and
    response.

    Examples
    --------
    >>> system, msgs = gemini_count_items({"systemInstruction": {"parts": [{"text": "be brief"}]},
    ...     "contents": [{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {"d": "."}}}]}]})
    >>> system, msgs[0]["tool_calls"]
    ([{'type': 'text', 'text': 'be brief'}], [{'function': {'name': 'ls', 'arguments': '{"d": "."}'}}])
    """
    sys_parts = [q for q in map(_chat_part, _parts(_get(body, "systemInstruction", "system_instruction"))) if q]
    out: list[dict] = []
    contents = body.get("contents")
    for c in contents if isinstance(contents, list) else []:
        parts = _parts(c)
        calls = [_get(p, *_FC) for p in parts if isinstance(_get(p, *_FC), dict)]
        out.append({"role": c.get("role", "user") if isinstance(c, dict) else "user",
                    "content": [q for q in map(_chat_part, parts) if q],
                    "tool_calls": [{"function": {"name": fc.get("name", ""), "arguments": json.dumps(fc.get("args", {}))}}
                                   for fc in calls]})
    return sys_parts, out


def _error(message: str) -> dict:
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


def gemini_grammar_error(contents: list) -> dict | None:
    """The Gemini API's error body for the first function-calling fault of ``contents``, else ``None`` (rules and
    sources in the module docstring; a reading of its own, apart from :func:`snapglyph.providers.gemini.check_gemini`).

    Examples
    --------
    >>> call = {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]}
    >>> reply = {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]}
    >>> gemini_grammar_error([{"role": "user", "parts": [{"text": "hi"}]}, call, reply]) is None
    True
    >>> gemini_grammar_error([{"role": "user", "parts": [{"text": "hi"}]}, call, {**reply, "parts": reply["parts"] * 2}])
    {'error': {'code': 400, 'message': 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.', 'status': 'INVALID_ARGUMENT'}}
    """
    prev_role, prev_calls = None, 0
    for c in contents:
        parts = _parts(c)
        role = c.get("role") if isinstance(c, dict) else None
        calls = sum(isinstance(_get(p, *_FC), dict) for p in parts)
        responses = sum(isinstance(_get(p, *_FR), dict) for p in parts)
        if calls and prev_role != "user":
            return _error("Please ensure that function call turn comes immediately after a user turn or after a "
                          "function response turn.")
        if responses and not prev_calls:
            return _error("Please ensure that function response turn comes immediately after a function call turn.")
        if prev_calls and responses != prev_calls:
            return _error("Please ensure that the number of function response parts is equal to the number of "
                          "function call parts of the function call turn.")
        prev_role, prev_calls = role, calls
    return None


def max_output_tokens(body: dict) -> int:
    """The output limit a ``generateContent`` body asks for (``generationConfig.maxOutputTokens``, either
    spelling), 0 when none.

    Examples
    --------
    >>> max_output_tokens({"generationConfig": {"maxOutputTokens": 512}}), max_output_tokens({})
    (512, 0)
    """
    cfg = _get(body, "generationConfig", "generation_config")
    value = _get(cfg, "maxOutputTokens", "max_output_tokens") if isinstance(cfg, dict) else None
    return int(value) if isinstance(value, (int, float)) else 0


def tools_disabled(body: dict) -> bool:
    """True where ``toolConfig.functionCallingConfig.mode`` is ``NONE`` (tools defined, none allowed).

    Examples
    --------
    >>> tools_disabled({"toolConfig": {"functionCallingConfig": {"mode": "NONE"}}}), tools_disabled({})
    (True, False)
    """
    cfg = _get(body, "toolConfig", "tool_config")
    fcc = _get(cfg, "functionCallingConfig", "function_calling_config") if isinstance(cfg, dict) else None
    return isinstance(fcc, dict) and str(fcc.get("mode", "")).upper() == "NONE"


def gemini_reply(n: int, body: dict, step: Step, prompt: int, model: str) -> dict:
    """The ``GenerateContentResponse`` of a scripted ``step`` to request number ``n``;
    ``usageMetadata.promptTokenCount`` is ``prompt``. The first function call part carries a ``thoughtSignature``
    (an opaque base64 string, as Gemini 3 sends one), for a client or proxy to send back unchanged.

    Examples
    --------
    >>> r = gemini_reply(4, {"tools": [{}]}, Step(tool_calls=(("ls", {"d": "."}),)), 25, "gemini-2.5-flash")
    >>> part = r["candidates"][0]["content"]["parts"][0]
    >>> part["functionCall"], r["candidates"][0]["finishReason"], r["usageMetadata"]["promptTokenCount"]
    ({'name': 'ls', 'args': {'d': '.'}}, 'STOP', 25)
    """
    calls = tool_calls_of(step, body)
    parts: list[dict] = []
    if step.text or not calls:
        parts.append({"text": step.text if calls else final_text(step)})
    for k, (name, args) in enumerate(calls):
        part: dict = {"functionCall": {"name": name, "args": args}}
        if k == 0:
            part["thoughtSignature"] = base64.b64encode(f"sim-signature-{n:04d}".encode()).decode()
        parts.append(part)
    out = count_text(json.dumps(parts))
    return {"candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out},
            "modelVersion": model, "responseId": f"sim{n:04d}"}


def gemini_chunks(reply: dict) -> list[dict]:
    """The chunks ``streamGenerateContent`` sends for a ``reply`` (:func:`gemini_reply`): text parts cut into
    deltas, each function call whole, ``finishReason`` and the full ``usageMetadata`` on the last chunk (the
    earlier ones carry the prompt count).

    Examples
    --------
    >>> chunks = gemini_chunks(gemini_reply(1, {}, Step(text="a" * 20), 7, "m"))
    >>> [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks], chunks[-1]["candidates"][0]["finishReason"]
    (['aaaaaaaaaaaa', 'aaaaaaaa'], 'STOP')
    """
    cand, usage = reply["candidates"][0], reply["usageMetadata"]
    part_list: list[dict] = []
    for p in cand["content"]["parts"]:
        part_list += [{"text": t} for t in pieces(p["text"])] if "text" in p else [p]
    chunks = []
    for i, p in enumerate(part_list):
        last = i == len(part_list) - 1
        c = {"content": {"parts": [p], "role": "model"}, "index": 0}
        if last:
            c["finishReason"] = cand["finishReason"]
        chunks.append({"candidates": [c], "usageMetadata": usage if last else {
            "promptTokenCount": usage["promptTokenCount"], "totalTokenCount": usage["promptTokenCount"]},
            "modelVersion": reply["modelVersion"], "responseId": reply["responseId"]})
    return chunks


def gemini_events(reply: dict) -> Iterator[bytes]:
    """The ``?alt=sse`` stream of a ``reply``: one ``data:`` event per chunk of :func:`gemini_chunks`, CRLF
    line endings.

    Examples
    --------
    >>> next(gemini_events(gemini_reply(1, {}, Step(text="hi"), 7, "m")))[:40]
    b'data: {"candidates":[{"content":{"parts"'
    """
    for chunk in gemini_chunks(reply):
        yield sse(chunk, eol="\r\n")
