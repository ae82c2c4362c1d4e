"""Reader for Anthropic messages request bodies, and the Anthropic content block reader other readers share.

Claude Code session lines (:mod:`snapglyph.readers.claude_code`) and Cline/Roo histories (:mod:`snapglyph.readers.cline`)
hold Anthropic content blocks. Returns a :class:`~snapglyph.readers.common.ReadResult` like the other readers;
:mod:`snapglyph.readers.registry` numbers the messages. Malformed input raises :class:`~snapglyph.errors.FormatError`.
"""

from __future__ import annotations

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

__all__ = ["anthropic_block", "read_anthropic"]

_ANTHROPIC_MSG_KEYS = frozenset({"role", "content"})


def anthropic_block(b: dict, path: str | None, where: str, names: CallNames) -> Part:
    """One Anthropic content block (also Claude Code's and Cline's) as a neutral part; ``tool_use`` blocks are
    recorded in ``names`` and ``tool_result`` blocks take their names from it. Unknown kinds: :func:`unknown_block`.

    Raises
    ------
    FormatError
        A ``tool_result`` whose content is neither a string nor a list of blocks.

    Examples
    --------
    >>> names = CallNames()
    >>> anthropic_block({"type": "tool_use", "id": "t1", "name": "ls", "input": {"d": "."}}, None, "x", names).arguments
    '{"d": "."}'
    >>> anthropic_block({"type": "tool_result", "tool_use_id": "t1", "content": "a b"}, None, "x", names).name
    'ls'
    """
    t = b.get("type")
    if t == "text":
        return Part(kind="text", text=as_str(b.get("text")), meta=part_extra(b, {"type", "text"}))
    if t == "image":
        src = b.get("source") if isinstance(b.get("source"), dict) else {}
        meta = part_extra(b, {"type", "source"})
        if src.get("type") == "base64":
            return image_part(media_type=src.get("media_type", ""), data=src.get("data", ""), meta=meta)
        if src.get("type") == "url":
            return image_part(url=src.get("url", ""), meta=meta)
        return Part(kind="image", meta={**meta, "source": src})
    if t in ("tool_use", "server_tool_use"):
        cid = as_str(b.get("id"))
        names.add(cid, b.get("name", ""))
        meta = part_extra(b, {"type", "id", "name", "input"})
        if t == "server_tool_use":
            meta["server_tool"] = True
        return Part(kind="tool_call", name=b.get("name", ""), arguments=dumps_args(b.get("input", {})), call_id=cid,
                    meta=meta)
    if t == "tool_result":
        cid = as_str(b.get("tool_use_id"))
        c = b.get("content")
        if c is None:
            content = []
        elif isinstance(c, str):
            content = [Part(kind="text", text=c)]
        elif isinstance(c, list):
            content = [anthropic_block(require_dict(x, f"{where}: tool_result content", path), path, where, names)
                       for x in c]
        else:
            raise FormatError(f"{where}: tool_result content is a {type(c).__name__}", path=path)
        return Part(kind="tool_result", call_id=cid, name=names.take(cid), content=content,
                    is_error=bool(b.get("is_error", False)),
                    meta=part_extra(b, {"type", "tool_use_id", "content", "is_error"}))
    if t == "thinking":
        return Part(kind="thinking", text=as_str(b.get("thinking")), signature=as_str(b.get("signature")),
                    meta=part_extra(b, {"type", "thinking", "signature"}))
    if t == "redacted_thinking":
        return Part(kind="thinking", signature=as_str(b.get("data")), meta={"redacted": True})
    return unknown_block(b)


def read_anthropic(body: Any, path: str | None = None) -> ReadResult:
    """Read an Anthropic messages request body (or a bare Anthropic message list).

    ``system`` (a string or text blocks) becomes message 0; a ``system`` message inside ``messages`` (the API
    takes them: ``anthropic.types.SystemMessageParam``, anthropic-sdk-python 2.17.0, read 2026-12-04; Claude Code
    2.1.332 sends its environment and date so) stays a system message where it is. A user message holding
    ``tool_result`` blocks becomes role ``tool``: its tool results first, then its other blocks. ``tool_use`` input
    is serialized with ``json.dumps(input, ensure_ascii=False)``.

    Parameters
    ----------
    body : dict or list
        The request body, or a bare list of Anthropic messages.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        Tool definitions ``{"name", "description", "parameters"}``, the model name or ``None``, and format facts.

    Raises
    ------
    FormatError
        A role other than user/assistant/system, or content of the wrong type.

    Examples
    --------
    >>> body = {"model": "claude-x", "system": "Be brief.", "messages": [
    ...     {"role": "user", "content": "ls?"},
    ...     {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]},
    ...     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]}]}
    >>> msgs, tools, model, meta = read_anthropic(body)
    >>> len(msgs), [m.role for m in msgs], model, msgs[3].parts[0].name
    (4, ['system', 'user', 'assistant', 'tool'], 'claude-x', 'ls')
    >>> [m.role for m in read_anthropic([{"role": "user", "content": "hi"}, {"role": "system", "content": "today"}])[0]]
    ['user', 'system']
    """
    if isinstance(body, dict):
        msgs = body.get("messages")
        tools, model, meta = normalize_tools(body.get("tools"), path), body.get("model"), request_meta(body)
        system = body.get("system")
    else:
        msgs, tools, model, meta, system = body, [], None, {}, None
    if not isinstance(msgs, list):
        raise FormatError(f"'messages' is a {type(msgs).__name__}, expected a list", path=path)
    out: list[Message] = []
    names = CallNames()
    if system:
        if isinstance(system, str):
            parts = [Part(kind="text", text=system)]
        elif isinstance(system, list):
            parts = [anthropic_block(require_dict(b, "a system block", path), path, "system", names) for b in system]
        else:
            raise FormatError(f"'system' is a {type(system).__name__}, expected a string or a list", path=path)
        out.append(Message(0, "system", parts, {}))
    for i, m in enumerate(msgs):
        m = require_dict(m, f"message {i}", path)
        role = m.get("role")
        where = f"message {i} ({role})"
        if role not in ("user", "assistant", "system"):
            raise FormatError(f"{where}: an Anthropic message role must be 'user' or 'assistant' (or 'system' "
                              f"inside the conversation)", path=path)
        meta_m = {"extra": extra_keys(m, _ANTHROPIC_MSG_KEYS)} if extra_keys(m, _ANTHROPIC_MSG_KEYS) else {}
        c = m.get("content")
        if isinstance(c, str):
            parts = [Part(kind="text", text=c)]
        elif isinstance(c, list):
            parts = [anthropic_block(require_dict(b, f"{where}: a content block", path), path, where, names)
                     for b in c]
        elif c is None:
            parts = []
        else:
            raise FormatError(f"{where}: content is a {type(c).__name__}", path=path)
        if role == "user" and any(p.kind == "tool_result" for p in parts):
            results = [p for p in parts if p.kind == "tool_result"]
            rest = [p for p in parts if p.kind != "tool_result"]
            if parts[:len(results)] != results:
                meta_m["reordered"] = True
            out.append(Message(0, "tool", results + rest, meta_m))
        else:
            out.append(Message(0, role, parts, meta_m))
    return ReadResult(out, tools, model, meta)
