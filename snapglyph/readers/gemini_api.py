"""Reader for Gemini API ``generateContent`` request bodies (the ``gemini`` dialect read back in).

Source: the REST reference of ``models.generateContent`` and its ``Content``/``Part`` types
(https://ai.google.dev/api/generate-content, https://ai.google.dev/api/caching#Content, read 2026-12-01). Field
names are accepted in both spellings the JSON API takes (``inlineData``/``inline_data``, ``functionCall``/
``function_call``...).

``systemInstruction`` is message 0 (system). A ``model`` content is an assistant message: ``text`` parts (``thought``
parts become ``thinking``), ``functionCall`` parts become ``tool_call`` parts (``args`` as JSON; a part's
``thoughtSignature`` is kept in ``Part.meta["thought_signature"]`` and written back by the ``gemini`` writer). A
``user`` content holding ``functionResponse`` parts is a ``tool`` message: its results first (``response.output``,
or ``response.error`` as an error result, else the response as JSON), then its other parts. A call without an
``id`` gets ``<name>#<content index>.<call index>`` and the responses of the next content are matched to the calls
in order (``meta["ids_added"]`` counts them). ``tools[].functionDeclarations`` become neutral tool definitions;
``generationConfig`` and every other request field are kept in ``meta``.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import FormatError
from ..model.attachments import attachment_text, is_attachment
from ..model.messages import Message, Part
from .common import ReadResult, as_str, image_part, require_dict

__all__ = [
    "is_gemini_request",
    "read_gemini",
]

_CONTENT_KEYS = frozenset({"contents", "systemInstruction", "system_instruction", "tools"})


def is_gemini_request(doc: Any) -> bool:
    """Whether a parsed JSON document is a ``generateContent`` body: a ``contents`` list and no ``messages``.

    Examples
    --------
    >>> is_gemini_request({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    True
    >>> is_gemini_request({"contents": [], "messages": []}), is_gemini_request([{"contents": []}])
    (False, False)
    """
    return isinstance(doc, dict) and isinstance(doc.get("contents"), list) and "messages" not in doc


def _g(p: dict, camel: str, snake: str) -> Any:
    return p.get(camel, p.get(snake))


def _response_content(fr: dict) -> tuple[list[Part], bool]:
    resp = fr.get("response")
    if isinstance(resp, dict) and set(resp) == {"error"}:
        return [Part(kind="text", text=as_str(resp["error"]))], True
    if isinstance(resp, dict) and "output" in resp and len(resp) == 1:
        return [Part(kind="text", text=as_str(resp["output"]))], False
    return [Part(kind="text", text=json.dumps(resp, ensure_ascii=False))], False


def _parts(parts: list, where: str, path: str | None, pending: list[Part], i: int, counts: dict) -> list[Part]:
    out: list[Part] = []
    for k, p in enumerate(parts):
        p = require_dict(p, f"{where}: part {k}", path)
        fc, fr = _g(p, "functionCall", "function_call"), _g(p, "functionResponse", "function_response")
        blob = _g(p, "inlineData", "inline_data")
        if "text" in p:
            out.append(Part(kind="thinking" if p.get("thought") else "text", text=as_str(p["text"])))
        elif isinstance(fc, dict):
            cid = as_str(fc.get("id"))
            if not cid:
                cid = f"{as_str(fc.get('name'))}#{i}.{sum(q.kind == 'tool_call' for q in out)}"
                counts["ids_added"] += 1
            sig = _g(p, "thoughtSignature", "thought_signature")
            args = fc.get("args") if fc.get("args") is not None else {}
            out.append(Part(kind="tool_call", name=as_str(fc.get("name")), call_id=cid,
                            arguments=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                            meta={"thought_signature": sig} if sig else {}))
        elif isinstance(fr, dict):
            cid = as_str(fr.get("id"))
            if not cid and pending:
                cid = pending.pop(0).call_id
            elif cid:
                pending[:] = [c for c in pending if c.call_id != cid]
            content, error = _response_content(fr)
            out.append(Part(kind="tool_result", call_id=cid, name=as_str(fr.get("name")), content=content,
                            is_error=error))
        elif is_attachment(p):  # a file by URI, or inline data that is no image (a PDF): kept as sent
            out.append(Part(kind="text", text=attachment_text(p), meta={"source_block": p}))
        elif isinstance(blob, dict):
            out.append(image_part(media_type=as_str(_g(blob, "mimeType", "mime_type")), data=as_str(blob.get("data"))))
        else:
            out.append(Part(kind="text", text=f"[{next(iter(p), 'part')}]", meta={"source_block": p}))
    return out


def _tools(tools: Any, path: str | None) -> list[dict]:
    out = []
    for t in tools if isinstance(tools, list) else []:
        t = require_dict(t, "a tool", path)
        for d in _g(t, "functionDeclarations", "function_declarations") or []:
            d = require_dict(d, "a function declaration", path)
            params = _g(d, "parametersJsonSchema", "parameters_json_schema") or d.get("parameters")
            out.append({"name": as_str(d.get("name")), "description": as_str(d.get("description")),
                        "parameters": params if isinstance(params, dict) else {"type": "object", "properties": {}}})
    return out


def read_gemini(body: Any, path: str | None = None) -> ReadResult:
    """Read a ``generateContent`` request body (see the module docstring for the rules).

    Parameters
    ----------
    body : dict
        The request body.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        The model is the body's ``model`` where it names one (the API takes it
        from the URL); ``meta`` holds the other request fields and ``ids_added``.

    Raises
    ------
    FormatError
        ``contents`` not a list, a content or part that is not an object, or a role other than user/model.

    Examples
    --------
    >>> body = {"systemInstruction": {"parts": [{"text": "Be brief."}]},
    ...         "contents": [{"role": "user", "parts": [{"text": "ls?"}]},
    ...                      {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
    ...                      {"role": "user", "parts": [{"functionResponse": {"name": "ls",
    ...                                                                      "response": {"output": "a.txt"}}}]}]}
    >>> msgs, _, _, meta = read_gemini(body)
    >>> [(m.role, [(p.kind, p.call_id) for p in m.parts]) for m in msgs][1:]
    [('user', [('text', '')]), ('assistant', [('tool_call', 'ls#1.0')]), ('tool', [('tool_result', 'ls#1.0')])]
    """
    body = require_dict(body, "a generateContent body", path)
    contents = body.get("contents")
    if not isinstance(contents, list):
        raise FormatError(f"'contents' is a {type(contents).__name__}, expected a list", path=path)
    out: list[Message] = []
    si = _g(body, "systemInstruction", "system_instruction")
    if si:
        si = {"parts": [{"text": si}]} if isinstance(si, str) else require_dict(si, "systemInstruction", path)
        out.append(Message(0, "system", _parts(si.get("parts") or [], "systemInstruction", path, [], -1,
                                               {"ids_added": 0}), {"source": "systemInstruction"}))
    counts = {"ids_added": 0}
    pending: list[Part] = []
    for i, c in enumerate(contents):
        c = require_dict(c, f"content {i}", path)
        role = c.get("role") or "user"
        where = f"content {i} ({role})"
        if role not in ("user", "model"):
            raise FormatError(f"{where}: a Gemini content role must be 'user' or 'model'", path=path)
        parts = c.get("parts") if isinstance(c.get("parts"), list) else []
        new = _parts(parts, where, path, pending, i, counts)
        if role == "model":
            pending = [p for p in new if p.kind == "tool_call"]
            out.append(Message(0, "assistant", new, {}))
            continue
        results = [p for p in new if p.kind == "tool_result"]
        rest = [p for p in new if p.kind != "tool_result"]
        out.append(Message(0, "tool" if results else "user", results + rest, {}))
        pending = []
    meta = {k: v for k, v in body.items() if k not in _CONTENT_KEYS and k != "model"}
    meta["ids_added"] = counts["ids_added"]
    model = body.get("model")
    return ReadResult(out, _tools(body.get("tools"), path), as_str(model).removeprefix("models/") if model else None,
                      meta)
