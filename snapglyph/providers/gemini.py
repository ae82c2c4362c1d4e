"""The ``gemini`` dialect: Gemini API ``models.generateContent`` request bodies, written and checked.

Sources (read 2026-12-01): the REST reference of ``models.generateContent``
(https://ai.google.dev/api/generate-content#method:-models.generatecontent: ``contents``, ``tools``,
``systemInstruction``, ``generationConfig``), the ``Content``/``Part``/``FunctionCall``/``FunctionResponse``/``Blob``
types (https://ai.google.dev/api/caching#Content), function calling
(https://ai.google.dev/gemini-api/docs/function-calling) and thought signatures
(https://ai.google.dev/gemini-api/docs/thought-signatures).

Body written by :func:`gemini_body`::

    {"systemInstruction": {"parts": [{"text": ...}]},
     "contents": [{"role": "user" | "model", "parts": [...]}, ...],
     "tools": [{"functionDeclarations": [{"name", "description", "parametersJsonSchema"}]}],
     "generationConfig": {"maxOutputTokens": n}}

Parts: ``{"text"}``, ``{"inline_data": {"mime_type", "data"}}`` (an image by URL: ``{"file_data": {"mime_type",
"file_uri"}}``), ``{"functionCall": {"name", "args", "id"}}`` in ``model`` contents and ``{"functionResponse":
{"name", "id", "response": {"output": text} | {"error": text}}}`` in ``user`` contents. The model is named in the
URL (``models/{model}:generateContent``), not in the body. All the results of one model turn's calls go in the
one ``user`` content after it, in call order, before any other part of that content (an image a tool returned
follows as ``inline_data``). Gemini 3 rejects a replayed ``functionCall`` without a ``thoughtSignature``; the
source's signature is written back where the source had one, else the documented
``skip_thought_signature_validator`` value on the first call of each model turn.

Grammar checked by :func:`check_gemini` (each a 400 from the API): ``contents`` a non-empty list; roles ``user``
or ``model``; no content without parts; no empty text part; ``functionCall`` only in ``model`` contents and
``functionResponse`` only in ``user`` contents; a function call turn only right after a ``user`` content; every
``functionCall`` answered by a ``functionResponse`` in the next ``user`` content, as many responses as calls, in
the same order (same name, same ``id`` where both have one); no ``functionResponse`` without its call;
``response`` an object; ``systemInstruction`` text only.
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any, Sequence

from ..model.attachments import sent_block
from ..model.messages import Message, Part

__all__ = [
    "SKIP_SIGNATURE",
    "check_gemini",
    "gemini_body",
    "gemini_contents",
    "gemini_tools",
]

#: The documented stand-in for a missing thought signature (ai.google.dev/gemini-api/docs/thought-signatures).
SKIP_SIGNATURE = "skip_thought_signature_validator"

_DATA_FIELDS = ("text", "inline_data", "inlineData", "file_data", "fileData", "functionCall", "function_call",
                "functionResponse", "function_response", "executableCode", "executable_code",
                "codeExecutionResult", "code_execution_result")


def _args(arguments: str) -> dict:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (json.JSONDecodeError, ValueError):
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _media(p: Part) -> dict:
    if p.data:
        return {"inline_data": {"mime_type": p.media_type or "image/png", "data": p.data}}
    return {"file_data": {"mime_type": p.media_type or "image/png", "file_uri": p.url}}


def _user_parts(parts: Sequence[Part]) -> list[dict]:
    out = []
    for p in parts:
        if p.kind == "text":
            out.append(sent_block(p.meta, "gemini") or {"text": p.text})
        elif p.kind == "image":
            out.append(_media(p))
    return out


def _model_parts(m: Message, first_call: bool = True) -> list[dict]:
    out: list[dict] = []
    for p in m.parts:
        if p.kind == "text":
            out.append({"text": p.text})
        elif p.kind == "tool_call":
            call: dict[str, Any] = {"name": p.name, "args": _args(p.arguments)}
            if p.call_id:
                call["id"] = p.call_id
            part: dict[str, Any] = {"functionCall": call}
            sig = p.meta.get("thought_signature") or (SKIP_SIGNATURE if first_call else "")
            if sig:
                part["thoughtSignature"] = sig
            first_call = False
            out.append(part)
    return out


def _response_part(p: Part, names: dict[str, str]) -> dict:
    """A ``functionResponse`` part; named as the call it answers where that call is known (Gemini refuses a response
    named unlike its call), else by the result's own name."""
    text = p.result_text()
    fr: dict[str, Any] = {"name": names.get(p.call_id) or p.name or "",
                          "response": {"error": text} if p.is_error else {"output": text}}
    if p.call_id:
        fr["id"] = p.call_id
    return {"functionResponse": fr}


def gemini_contents(messages: Sequence[Message]) -> list[dict]:
    """Write normalized messages as ``contents`` (system messages excluded: they go to ``systemInstruction``).

    Parameters
    ----------
    messages : sequence of Message
        Output of :func:`snapglyph.providers.dialects.normalize` for ``dialect="gemini"``.

    Returns
    -------
    list of dict
        ``{"role": "user" | "model", "parts": [...]}`` contents; the results of consecutive ``tool`` messages are
        merged into one ``user`` content, function responses first, and consecutive assistant messages into one
        ``model`` content (Gemini wants a function call turn right after a user turn).

    Examples
    --------
    >>> msgs = [Message(1, "user", [Part("text", text="ls?")]),
    ...         Message(2, "assistant", [Part("tool_call", name="ls", arguments="{}", call_id="c1")]),
    ...         Message(3, "tool", [Part("tool_result", call_id="c1", content=[Part("text", text="a.txt")])])]
    >>> [c["role"] for c in gemini_contents(msgs)], gemini_contents(msgs)[2]["parts"][0]["functionResponse"]
    (['user', 'model', 'user'], {'name': 'ls', 'response': {'output': 'a.txt'}, 'id': 'c1'})
    """
    out: list[dict] = []
    names: dict[str, str] = {}
    prev_tool = False
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "assistant":
            names.update({p.call_id: p.name for p in m.tool_calls()})
            if out and out[-1]["role"] == "model":  # a function call turn must follow a user turn: one model turn
                prev = out[-1]["parts"]
                prev.extend(_model_parts(m, not any("functionCall" in q for q in prev)))
            else:
                out.append({"role": "model", "parts": _model_parts(m)})
            prev_tool = False
            continue
        if m.role == "tool":
            responses = [_response_part(p, names) for p in m.tool_results()]
            rest = [q for p in m.tool_results() for q in p.content if q.kind == "image"]
            rest += [p for p in m.parts if p.kind in ("text", "image")]
            if prev_tool:
                parts = out[-1]["parts"]
                n = sum(1 for q in parts if "functionResponse" in q)
                parts[n:n] = responses
                parts.extend(_user_parts(rest))
            else:
                out.append({"role": "user", "parts": responses + _user_parts(rest)})
            prev_tool = True
            continue
        out.append({"role": "user", "parts": _user_parts(m.parts)})
        prev_tool = False
    _responses_in_call_order(out)
    return out


def _responses_in_call_order(contents: list[dict]) -> None:
    """Put the function responses after each function call turn in the order of its calls, in place (results that
    arrived in another order, or an error result added for a call without one, come to their call's place)."""
    for prev, cur in itertools.pairwise(contents):
        order = {p["functionCall"].get("id"): k for k, p in enumerate(prev["parts"]) if "functionCall" in p}
        if prev["role"] != "model" or cur["role"] != "user" or not order:
            continue
        n = sum(1 for q in cur["parts"] if "functionResponse" in q)
        head = sorted(cur["parts"][:n], key=lambda q: order.get(q.get("functionResponse", {}).get("id"), len(order)))
        cur["parts"][:n] = head


def gemini_tools(defs: Sequence[dict]) -> list[dict]:
    """Neutral tool definitions as one ``{"functionDeclarations": [...]}`` tool (``[]`` when there are none).

    The schema goes in ``parametersJsonSchema`` (full JSON Schema; ``parameters`` takes only the OpenAPI subset).

    Examples
    --------
    >>> gemini_tools([{"name": "ls", "description": "List.", "parameters": {"type": "object"}}])
    [{'functionDeclarations': [{'name': 'ls', 'description': 'List.', 'parametersJsonSchema': {'type': 'object'}}]}]
    """
    decls = [{"name": t["name"], "description": t.get("description") or "",
              "parametersJsonSchema": copy.deepcopy(t.get("parameters") or {"type": "object"})}
             for t in defs if t.get("name")]
    return [{"functionDeclarations": decls}] if decls else []


def gemini_body(messages: Sequence[Message], *, max_tokens: int, tools: Sequence[dict] = ()) -> dict:
    """A ``generateContent`` request body from normalized messages and neutral tool definitions.

    Parameters
    ----------
    messages : sequence of Message
        Normalized for ``dialect="gemini"``; system messages become ``systemInstruction``.
    max_tokens : int
        Output tokens reserved: ``generationConfig.maxOutputTokens``.
    tools : sequence of dict
        Neutral definitions ``{"name", "description", "parameters"}``.

    Returns
    -------
    dict
        The body (no ``model``: Gemini names it in the URL).

    Examples
    --------
    >>> body = gemini_body([Message(0, "system", [Part("text", text="Be brief.")]),
    ...                     Message(1, "user", [Part("text", text="hi")])], max_tokens=64)
    >>> body["contents"], body["systemInstruction"], body["generationConfig"]
    ([{'role': 'user', 'parts': [{'text': 'hi'}]}], {'parts': [{'text': 'Be brief.'}]}, {'maxOutputTokens': 64})
    """
    body: dict[str, Any] = {"contents": gemini_contents(messages)}
    system = "\n\n".join(m.text() for m in messages if m.role == "system")
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    decls = gemini_tools(tools)
    if decls:
        body["tools"] = decls
    body["generationConfig"] = {"maxOutputTokens": int(max_tokens)}
    return body


# ----------------------------------------------------------------------------------------------------- validation
def _get(part: dict, camel: str, snake: str) -> Any:
    return part.get(camel, part.get(snake))


def _check_parts(i: int, role: str, parts: list, fault, images: list[tuple[int, str]]) -> tuple[list, list]:
    calls, responses = [], []
    for j, p in enumerate(parts):
        if not isinstance(p, dict) or sum(1 for k in _DATA_FIELDS if k in p) != 1:
            fault(i, f"parts[{j}]: a part must hold exactly one of text, inline_data, file_data, functionCall, "
                     "functionResponse")
            continue
        if "text" in p and not str(p["text"]).strip() and not p.get("thought"):
            fault(i, f"parts[{j}]: Unable to submit request because it has an empty text parameter")
        fc = _get(p, "functionCall", "function_call")
        fr = _get(p, "functionResponse", "function_response")
        blob = _get(p, "inlineData", "inline_data")
        if fc is not None:
            if role != "model":
                fault(i, f"parts[{j}]: functionCall is only allowed in a model content")
            else:
                calls.append(fc if isinstance(fc, dict) else {})
        if fr is not None:
            if role != "user":
                fault(i, f"parts[{j}]: functionResponse is only allowed in a user content")
                continue
            if not isinstance(fr, dict) or not isinstance(fr.get("response"), dict):
                fault(i, f"parts[{j}]: functionResponse.response must be a JSON object")
            responses.append(fr if isinstance(fr, dict) else {})
        if isinstance(blob, dict):
            images.append((i, str(blob.get("data", ""))))
    return calls, responses


def _check_pairs(i: int, calls: list, nxt: list | None, fault) -> None:
    if nxt is None:
        fault(i, "Please ensure that every function call turn is followed by a user turn with its function "
                 "responses")
        return
    if len(nxt) != len(calls):
        fault(i + 1, "Please ensure that the number of function response parts is equal to the number of function "
                     f"call parts of the function call turn ({len(nxt)} responses for {len(calls)} calls)")
    for k, (c, r) in enumerate(zip(calls, nxt)):
        if c.get("name") != r.get("name") or (c.get("id") and r.get("id") and c["id"] != r["id"]):
            fault(i + 1, f"function response {k} ({r.get('name')!r}, id {r.get('id')!r}) does not answer function "
                         f"call {k} ({c.get('name')!r}, id {c.get('id')!r}) of the previous turn, in order")
            return


def check_gemini(body: dict, fault, images: list[tuple[int, str]]) -> None:
    """Check a ``generateContent`` body's grammar (see the module docstring); report through ``fault(index, text)``.

    Parameters
    ----------
    body : dict
        The request body.
    fault : callable
        ``fault(index, text)``: called once per fault, ``index`` the content's index (``None`` for the body).
    images : list of (int, str)
        Appended in place: ``(content index, base64 data)`` of each ``inline_data`` part, for the limit checks.

    Examples
    --------
    >>> out = []
    >>> check_gemini({"contents": [{"role": "user", "parts": [{"text": "hi"}]},
    ...                            {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]}]},
    ...              lambda i, t: out.append((i, t[:40])), [])
    >>> out
    [(1, 'Please ensure that every function call t')]
    """
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        fault(None, "contents: must be a non-empty list")
        return
    si = body.get("systemInstruction", body.get("system_instruction"))
    if si is not None and (not isinstance(si, dict) or any(not isinstance(p, dict) or set(p) - {"text"}
                                                            for p in si.get("parts") or [])):
        fault(None, "systemInstruction: only text parts are allowed")
    found: list[tuple[list, list]] = []
    for i, c in enumerate(contents):
        c = c if isinstance(c, dict) else {}
        role = c.get("role") or ("user" if len(contents) == 1 else None)
        if role not in ("user", "model"):
            fault(i, f"role must be 'user' or 'model', not {c.get('role')!r}")
        parts = c.get("parts")
        if not isinstance(parts, list) or not parts:
            fault(i, "contents.parts must not be empty")
            parts = []
        found.append(_check_parts(i, role or "", parts, fault, images))
    for i, (calls, responses) in enumerate(found):
        if calls:
            prev_role = contents[i - 1].get("role") if i > 0 and isinstance(contents[i - 1], dict) else None
            if prev_role != "user":
                fault(i, "Please ensure that function call turn comes immediately after a user turn or after a "
                         "function response turn")
            _check_pairs(i, calls, found[i + 1][1] if i + 1 < len(found) else None, fault)
        if responses and not (i > 0 and found[i - 1][0]):
            fault(i, "functionResponse parts without a function call turn right before them")
