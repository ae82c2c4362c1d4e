"""Reader for OpenAI Responses requests: ``instructions`` and ``input`` items.

Returns ``(messages, tools, model, meta)`` like the other readers; :mod:`snapglyph.readers.registry` numbers the
messages. Reference: the Responses API's input item types (``message``, ``function_call``,
``function_call_output``, ``reasoning``, ``custom_tool_call``, ``custom_tool_call_output``).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part
from .common import CallNames, as_str, dumps_args, extra_keys, image_part, require_dict
from .requests import _part_extra, _request_meta, _unknown_block, normalize_tools

__all__ = [
    "read_responses",
]

_RESP_MSG_KEYS = frozenset({"type", "role", "content", "id", "status"})


def _responses_output(o: Any, path: str | None, where: str) -> list[Part]:
    if o is None:
        return []
    if isinstance(o, str):
        return [Part(kind="text", text=o)]
    if isinstance(o, list):
        return _responses_parts(o, path, where)
    return [Part(kind="text", text=json.dumps(o, ensure_ascii=False))]


def _responses_parts(content: Any, path: str | None, where: str) -> list[Part]:
    if isinstance(content, str):
        return [Part(kind="text", text=content)]
    if not isinstance(content, list):
        raise FormatError(f"{where}: content is a {type(content).__name__}", path=path)
    parts = []
    for b in content:
        b = require_dict(b, f"{where}: a content part", path)
        t = b.get("type")
        if t in ("input_text", "output_text", "text"):
            parts.append(Part(kind="text", text=as_str(b.get("text")), meta=_part_extra(b, {"type", "text"})))
        elif t == "refusal":
            parts.append(Part(kind="text", text=as_str(b.get("refusal")), meta={"refusal": True}))
        elif t == "input_image":
            url = b.get("image_url") or ""
            meta = {"detail": b["detail"]} if "detail" in b else {}
            if b.get("file_id"):
                meta["file_id"] = b["file_id"]
            parts.append(image_part(url=url, meta=meta))
        else:
            parts.append(_unknown_block(b))
    return parts


def read_responses(body: Any, path: str | None = None) -> tuple[list[Message], list[dict], str | None, dict]:
    """Read an OpenAI Responses request: ``instructions`` and ``input`` (a string or a list of items).

    ``instructions`` (or a leading system/developer message) is message 0. Consecutive assistant-side items
    (``message`` with role assistant, ``reasoning``, ``function_call``, ``custom_tool_call``) form one assistant
    message; each ``function_call_output`` is one ``tool`` message. Reasoning summaries become ``thinking`` parts
    (their ``encrypted_content`` is the signature).

    Parameters
    ----------
    body : dict or list
        The request body, or a bare list of input items.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    tuple
        ``(messages, tools, model, meta)``: neutral messages (ids assigned later by the caller), tool
        definitions ``{"name", "description", "parameters"}``, the model name or ``None``, and format facts.

    Raises
    ------
    FormatError
        An item that is not an object, an unknown message role, or content of the wrong type.
    """
    if isinstance(body, dict):
        items = body.get("input", [])
        tools, model, meta = normalize_tools(body.get("tools"), path), body.get("model"), _request_meta(body)
        instructions = body.get("instructions")
    else:
        items, tools, model, meta, instructions = body, [], None, {}, None
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise FormatError(f"'input' is a {type(items).__name__}, expected a string or a list", path=path)
    out: list[Message] = []
    names = CallNames()
    if instructions:
        out.append(Message(0, "system", [Part(kind="text", text=as_str(instructions))], {"source": "instructions"}))
    cur: Message | None = None  # the open assistant message

    def assistant() -> Message:
        nonlocal cur
        if cur is None:
            cur = Message(0, "assistant", [], {"items": []})
            out.append(cur)
        return cur

    for i, it in enumerate(items):
        it = require_dict(it, f"input item {i}", path)
        t = it.get("type", "message" if "role" in it else None)
        where = f"input item {i} ({t})"
        if t == "message":
            role = it.get("role")
            parts = _responses_parts(it.get("content", ""), path, where)
            extra = extra_keys(it, _RESP_MSG_KEYS)
            if role == "assistant":
                a = assistant()
                a.parts += parts
                a.meta["items"].append({k: it[k] for k in ("id", "status") if k in it} | {"type": "message"})
                if extra:
                    a.meta.setdefault("extra", {}).update(extra)
                continue
            cur = None
            meta_m = {"extra": extra} if extra else {}
            if it.get("id"):
                meta_m["item_id"] = it["id"]
            if role in ("system", "developer"):
                if role == "developer" or any(x.role == "system" for x in out):
                    meta_m["source_role"] = role
                out.append(Message(0, "system", parts, meta_m))
            elif role == "user":
                out.append(Message(0, "user", parts, meta_m))
            else:
                raise FormatError(f"{where}: unknown role {role!r}", path=path)
        elif t in ("function_call", "custom_tool_call"):
            cid = as_str(it.get("call_id"))
            names.add(cid, it.get("name", ""))
            args = it.get("arguments", "") if t == "function_call" else it.get("input", "")
            pm = {k: it[k] for k in ("id", "status") if k in it}
            if t == "custom_tool_call":
                pm["custom"] = True
            assistant().parts.append(Part(kind="tool_call", name=it.get("name", ""), arguments=dumps_args(args),
                                          call_id=cid, meta=pm))
        elif t == "reasoning":
            summ = it.get("summary") or []
            text = "\n".join(s.get("text", "") for s in summ if isinstance(s, dict))
            pm = {"item_id": it["id"]} if it.get("id") else {}
            if it.get("content"):
                pm["content"] = it["content"]
            assistant().parts.append(Part(kind="thinking", text=text,
                                          signature=as_str(it.get("encrypted_content")), meta=pm))
        elif t in ("function_call_output", "custom_tool_call_output"):
            cur = None
            cid = as_str(it.get("call_id"))
            meta_m = {"item_id": it["id"]} if it.get("id") else {}
            if t == "custom_tool_call_output":
                meta_m["custom"] = True
            out.append(Message(0, "tool", [Part(kind="tool_result", call_id=cid, name=names.take(cid),
                                                content=_responses_output(it.get("output"), path, where))], meta_m))
        else:
            # Items without a neutral form (item_reference, built-in tool calls): kept whole in meta.
            cur = None
            out.append(Message(0, "user", [Part(kind="text", text=f"[{t}]")], {"source_item": it}))
    for m in out:
        if m.role == "assistant" and not m.meta.get("items"):
            m.meta.pop("items", None)
    return out, tools, model, meta
