"""Reader for OpenAI Responses requests: ``instructions`` and ``input`` items.

Returns a :class:`~snapglyph.readers.common.ReadResult` like the other readers; :mod:`snapglyph.readers.registry` numbers the
messages. Reference: the Responses API's input item types (``message``, ``function_call``,
``function_call_output``, ``reasoning``, ``custom_tool_call``, ``custom_tool_call_output``).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part
from .common import (
    CallNames,
    ReadResult,
    as_str,
    dumps_args,
    extra_keys,
    image_part,
    part_extra,
    request_meta,
    require_dict,
    unknown_block,
)
from .requests import normalize_tools

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
            parts.append(Part(kind="text", text=as_str(b.get("text")), meta=part_extra(b, {"type", "text"})))
        elif t == "refusal":
            parts.append(Part(kind="text", text=as_str(b.get("refusal")), meta={"refusal": True}))
        elif t == "input_image":
            url = b.get("image_url") or ""
            meta = {"detail": b["detail"]} if "detail" in b else {}
            if b.get("file_id"):
                meta["file_id"] = b["file_id"]
            parts.append(image_part(url=url, meta=meta))
        else:
            parts.append(unknown_block(b))
    return parts


class _Items:
    """The conversation built from Responses input items, one item at a time.

    Assistant-side items (an assistant ``message``, ``reasoning``, a tool call) join the open assistant message,
    opened by the first of them; any other item closes it.
    """

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.out: list[Message] = []
        self.names = CallNames()
        self.open: Message | None = None

    def assistant(self) -> Message:
        """The open assistant message (a new one when none is open)."""
        if self.open is None:
            self.open = Message(0, "assistant", [], {"items": []})
            self.out.append(self.open)
        return self.open

    def message(self, it: dict, where: str) -> None:
        """A ``message`` item: an assistant one joins the open assistant message; system/developer/user stand alone."""
        role = it.get("role")
        parts = _responses_parts(it.get("content", ""), self.path, where)
        extra = extra_keys(it, _RESP_MSG_KEYS)
        if role == "assistant":
            a = self.assistant()
            a.parts += parts
            a.meta["items"].append({k: it[k] for k in ("id", "status") if k in it} | {"type": "message"})
            if extra:
                a.meta.setdefault("extra", {}).update(extra)
            return
        self.open = None
        meta_m = {"extra": extra} if extra else {}
        if it.get("id"):
            meta_m["item_id"] = it["id"]
        if role in ("system", "developer"):
            if role == "developer" or any(x.role == "system" for x in self.out):
                meta_m["source_role"] = role
            self.out.append(Message(0, "system", parts, meta_m))
        elif role == "user":
            self.out.append(Message(0, "user", parts, meta_m))
        else:
            raise FormatError(f"{where}: unknown role {role!r}", path=self.path)

    def call(self, it: dict, t: str) -> None:
        """A ``function_call`` or ``custom_tool_call`` item: a ``tool_call`` part of the open assistant message."""
        cid = as_str(it.get("call_id"))
        self.names.add(cid, it.get("name", ""))
        args = it.get("arguments", "") if t == "function_call" else it.get("input", "")
        pm = {k: it[k] for k in ("id", "status") if k in it}
        if t == "custom_tool_call":
            pm["custom"] = True
        self.assistant().parts.append(Part(kind="tool_call", name=it.get("name", ""), arguments=dumps_args(args),
                                           call_id=cid, meta=pm))

    def reasoning(self, it: dict) -> None:
        """A ``reasoning`` item: a ``thinking`` part (summary text, ``encrypted_content`` as the signature)."""
        summ = it.get("summary") or []
        text = "\n".join(s.get("text", "") for s in summ if isinstance(s, dict))
        pm = {"item_id": it["id"]} if it.get("id") else {}
        pm["reasoning_item"] = True  # OpenAI's: its encrypted_content is no Anthropic signature
        if it.get("content"):
            pm["content"] = it["content"]
        self.assistant().parts.append(Part(kind="thinking", text=text, signature=as_str(it.get("encrypted_content")),
                                           meta=pm))

    def output(self, it: dict, t: str, where: str) -> None:
        """A ``function_call_output`` or ``custom_tool_call_output`` item: one ``tool`` message."""
        self.open = None
        cid = as_str(it.get("call_id"))
        meta_m = {"item_id": it["id"]} if it.get("id") else {}
        if t == "custom_tool_call_output":
            meta_m["custom"] = True
        self.out.append(Message(0, "tool", [Part(kind="tool_result", call_id=cid, name=self.names.take(cid),
                                                 content=_responses_output(it.get("output"), self.path, where))],
                                meta_m))

    def other(self, it: dict, t: Any) -> None:
        """An item without a neutral form (``item_reference``, built-in tool calls, Codex's ``ghost_snapshot``): kept
        whole in meta; its stand-in text is marked not typed (``Part.meta["typed"]``)."""
        self.open = None
        self.out.append(Message(0, "user", [Part(kind="text", text=f"[{t}]", meta={"typed": False})],
                                {"source_item": it}))

    def finish(self) -> list[Message]:
        """The messages; assistant messages made of no ``message`` item lose their empty ``items`` list."""
        for m in self.out:
            if m.role == "assistant" and not m.meta.get("items"):
                m.meta.pop("items", None)
        return self.out


def _responses_body(body: Any, path: str | None) -> tuple[list, list[dict], str | None, dict, Any]:
    """``(items, tools, model, meta, instructions)`` of a Responses body, or of a bare item list."""
    if isinstance(body, dict):
        items = body.get("input", [])
        tools, model, meta = normalize_tools(body.get("tools"), path), body.get("model"), request_meta(body)
        instructions = body.get("instructions")
    else:
        items, tools, model, meta, instructions = body, [], None, {}, None
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise FormatError(f"'input' is a {type(items).__name__}, expected a string or a list", path=path)
    return items, tools, model, meta, instructions


def read_responses(body: Any, path: str | None = None) -> ReadResult:
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
    ReadResult
        Tool definitions ``{"name", "description", "parameters"}``, the model name or ``None``, and format facts.

    Raises
    ------
    FormatError
        An item that is not an object, an unknown message role, or content of the wrong type.

    Examples
    --------
    >>> body = {"model": "gpt-x", "instructions": "Be brief.", "input": [
    ...     {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls?"}]},
    ...     {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
    ...     {"type": "function_call_output", "call_id": "c1", "output": "a.py"}]}
    >>> msgs, tools, model, meta = read_responses(body)
    >>> len(msgs), [m.role for m in msgs], msgs[3].parts[0].name, msgs[3].parts[0].result_text()
    (4, ['system', 'user', 'assistant', 'tool'], 'ls', 'a.py')
    """
    items, tools, model, meta, instructions = _responses_body(body, path)
    conv = _Items(path)
    if instructions:
        conv.out.append(Message(0, "system", [Part(kind="text", text=as_str(instructions))],
                                {"source": "instructions"}))
    for i, it in enumerate(items):
        it = require_dict(it, f"input item {i}", path)
        t = it.get("type", "message" if "role" in it else None)
        where = f"input item {i} ({t})"
        if t == "message":
            conv.message(it, where)
        elif t in ("function_call", "custom_tool_call"):
            conv.call(it, t)
        elif t == "reasoning":
            conv.reasoning(it)
        elif t in ("function_call_output", "custom_tool_call_output"):
            conv.output(it, t, where)
        else:
            conv.other(it, t)
    return ReadResult(conv.finish(), tools, model, meta)
