"""Readers for request bodies: OpenAI chat completions (and SWE-agent ``.traj``), tool definitions, dialect detection.

The Anthropic messages reader lives in :mod:`snapglyph.readers.anthropic`, the OpenAI Responses reader in
:mod:`snapglyph.readers.responses`; :func:`detect_request` tells them and Gemini bodies apart.

Each reader returns a :class:`~snapglyph.readers.common.ReadResult`; :mod:`snapglyph.readers.registry` numbers the messages and wraps
them in a :class:`~snapglyph.readers.registry.Transcript`. Malformed input raises :class:`~snapglyph.errors.FormatError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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

__all__ = [
    "detect_request",
    "normalize_tools",
    "read_openai",
    "read_swe_agent",
]

_OPENAI_MSG_KEYS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id", "function_call", "refusal",
                              "audio"})
_ANTHROPIC_ONLY_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "document",
                                    "server_tool_use", "web_search_tool_result"})
_RESPONSES_ITEMS = frozenset({"function_call", "function_call_output", "reasoning", "custom_tool_call",
                              "custom_tool_call_output", "item_reference", "web_search_call", "computer_call",
                              "computer_call_output", "local_shell_call", "local_shell_call_output"})
_RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})


# ----------------------------------------------------------------------------------------------------------- tools
def normalize_tools(tools: Any, path: str | None = None) -> list[dict]:
    """Turn OpenAI chat, Anthropic or Responses tool definitions into ``{"name", "description", "parameters"}``.

    Tools that are not functions (Anthropic server tools, Responses built-ins) keep their name, an empty schema and
    the original definition under ``"source"``.

    Examples
    --------
    >>> normalize_tools([{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}])
    [{'name': 'ls', 'description': '', 'parameters': {'type': 'object'}}]
    >>> [t["name"] for t in normalize_tools([{"name": "read", "input_schema": {}}, {"type": "web_search"}])]
    ['read', 'web_search']
    """
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise FormatError(f"'tools' is a {type(tools).__name__}, expected a list", path=path)
    out = []
    for t in tools:
        if not isinstance(t, dict):
            raise FormatError("a tool definition is not a JSON object", path=path)
        fn = t.get("function") if isinstance(t.get("function"), dict) else None
        if fn is not None:  # OpenAI chat
            out.append({"name": fn.get("name", ""), "description": fn.get("description", "") or "",
                        "parameters": fn.get("parameters") or {"type": "object", "properties": {}}})
        elif "input_schema" in t:  # Anthropic
            out.append({"name": t.get("name", ""), "description": t.get("description", "") or "",
                        "parameters": t.get("input_schema") or {"type": "object", "properties": {}}})
        elif t.get("type") == "function" or "parameters" in t:  # Responses
            out.append({"name": t.get("name", ""), "description": t.get("description", "") or "",
                        "parameters": t.get("parameters") or {"type": "object", "properties": {}}})
        else:
            out.append({"name": t.get("name", t.get("type", "")), "description": t.get("description", "") or "",
                        "parameters": {"type": "object", "properties": {}}, "source": t})
    return out


# ------------------------------------------------------------------------------------------------------- detection
def _blocks(messages: list) -> list[dict]:
    out = []
    for m in messages:
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            out.extend(b for b in m["content"] if isinstance(b, dict))
    return out


def detect_request(body: Any) -> str:
    """Name the dialect of a request body: ``"openai"``, ``"anthropic"``, ``"responses"`` or ``"gemini"``.

    Raises
    ------
    FormatError
        When ``body`` is neither a list nor an object with ``messages``, ``input`` or ``contents``.

    Examples
    --------
    >>> detect_request({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    'openai'
    >>> detect_request({"system": "Be brief.", "messages": []}), detect_request({"input": "hi"})
    ('anthropic', 'responses')
    >>> detect_request({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    'gemini'
    """
    if isinstance(body, dict):
        if "messages" not in body and isinstance(body.get("contents"), list):
            return "gemini"
        if "messages" not in body and ("input" in body or "instructions" in body):
            return "responses"
        if "messages" not in body:
            raise FormatError(f"not a request body: no 'messages' or 'input' (keys: {sorted(body)[:8]})")
        if "system" in body:
            return "anthropic"
        msgs = body["messages"]
        if not isinstance(msgs, list):
            raise FormatError(f"'messages' is a {type(msgs).__name__}, expected a list")
        tools = body.get("tools") or []
        if any(isinstance(t, dict) and "input_schema" in t for t in tools):
            return "anthropic"
    elif isinstance(body, list):
        msgs = body
        if any(isinstance(m, dict) and (m.get("type") in _RESPONSES_ITEMS or
               (m.get("type") == "message" and "role" in m)) for m in msgs):
            return "responses"
    else:
        raise FormatError(f"a request body must be a JSON object or list, not {type(body).__name__}")
    blocks = _blocks(msgs)
    if any(b.get("type") in _RESPONSES_PARTS for b in blocks):
        return "responses"
    if any(isinstance(m, dict) and (m.get("role") in ("tool", "function", "developer") or "tool_calls" in m
                                    or "tool_call_id" in m) for m in msgs):
        return "openai"
    if any(b.get("type") in _ANTHROPIC_ONLY_BLOCKS or (b.get("type") == "image" and "source" in b)
           for b in blocks):
        return "anthropic"
    return "openai"


# ---------------------------------------------------------------------------------------------------- OpenAI chat
def _openai_parts(content: Any, path: str | None, where: str) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Part(kind="text", text=content)]
    if not isinstance(content, list):
        raise FormatError(f"{where}: content is a {type(content).__name__}, expected a string or a list", path=path)
    parts = []
    for b in content:
        if isinstance(b, str):
            parts.append(Part(kind="text", text=b))
            continue
        if not isinstance(b, dict):
            raise FormatError(f"{where}: a content part is a {type(b).__name__}", path=path)
        t = b.get("type")
        if t in ("text", "input_text", "output_text"):
            parts.append(Part(kind="text", text=as_str(b.get("text")), meta=part_extra(b, {"type", "text"})))
        elif t == "refusal":
            parts.append(Part(kind="text", text=as_str(b.get("refusal")), meta={"refusal": True}))
        elif t == "image_url":
            iu = b.get("image_url")
            url = as_str(iu.get("url")) if isinstance(iu, dict) else as_str(iu)
            meta = {"detail": iu["detail"]} if isinstance(iu, dict) and "detail" in iu else {}
            parts.append(image_part(url=url, meta=meta))
        else:
            parts.append(unknown_block(b))
    return parts


@dataclass
class _OpenCalls:
    """The tool calls of an OpenAI chat conversation so far: names by call id, and the calls of the last assistant
    message that no tool message answered yet (``pending``, oldest first)."""

    names: CallNames = field(default_factory=CallNames)
    pending: list[str] = field(default_factory=list)

    def open(self, call_id: str, name: str) -> None:
        """Record a call of the current assistant message."""
        self.names.add(call_id, name)
        self.pending.append(call_id)


def _chat_body(body: Any, path: str | None) -> tuple[list, list[dict], str | None, dict]:
    """``(messages, tools, model, meta)`` of a chat-completions body, or of a bare message list."""
    if isinstance(body, dict):
        msgs = body.get("messages")
        tools = normalize_tools(body.get("tools") or body.get("functions"), path)
        model, meta = body.get("model"), request_meta(body)
    else:
        msgs, tools, model, meta = body, [], None, {}
    if not isinstance(msgs, list):
        raise FormatError(f"'messages' is a {type(msgs).__name__}, expected a list", path=path)
    return msgs, tools, model, meta


def _chat_meta(m: dict, role: Any) -> dict[str, Any]:
    """A chat message's meta: its keys outside the standard ones under ``extra``, and its ``name``."""
    meta_m: dict[str, Any] = {}
    extra = extra_keys(m, _OPENAI_MSG_KEYS)
    if extra:
        meta_m["extra"] = extra
    if m.get("name") and role != "function":
        meta_m["name"] = m["name"]
    return meta_m


def _chat_assistant_parts(m: dict, i: int, meta_m: dict, calls: _OpenCalls, path: str | None,
                          where: str) -> list[Part]:
    """An assistant message's parts: reasoning, content, refusal, tool calls, a legacy ``function_call``.

    The reasoning keys leave ``meta_m["extra"]`` (they become ``thinking`` parts); the calls open in ``calls``.
    """
    parts = []
    for key in ("reasoning_content", "reasoning"):
        if isinstance(m.get(key), str) and m[key]:
            parts.append(Part(kind="thinking", text=m[key], meta={"source_key": key}))
            meta_m.get("extra", {}).pop(key, None)
    if meta_m.get("extra") == {}:
        del meta_m["extra"]
    parts += _openai_parts(m.get("content"), path, where)
    if m.get("refusal"):
        parts.append(Part(kind="text", text=as_str(m["refusal"]), meta={"refusal": True}))
    calls.pending = []
    tool_calls = m.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        raise FormatError(f"{where}: tool_calls is not a list", path=path)
    for c in tool_calls:
        c = require_dict(c, f"{where}: a tool call", path)
        fn = c.get("function") if isinstance(c.get("function"), dict) else {}
        name, args, cid = fn.get("name", ""), fn.get("arguments", ""), as_str(c.get("id"))
        extra = extra_keys(c, {"id", "type", "function"})
        parts.append(Part(kind="tool_call", name=name, arguments=dumps_args(args), call_id=cid,
                          meta={"extra": extra} if extra else {}))
        calls.open(cid, name)
    fc = m.get("function_call")
    if isinstance(fc, dict):  # legacy single function call
        cid = f"function_call_{i}"
        parts.append(Part(kind="tool_call", name=fc.get("name", ""), arguments=dumps_args(
            fc.get("arguments", "")), call_id=cid, meta={"legacy_function_call": True}))
        calls.open(cid, fc.get("name", ""))
    return parts


def _answered_ids(m: dict, role: str, meta_m: dict, calls: _OpenCalls) -> list:
    """The call ids a tool/function message answers: its ``tool_call_id``, SWE-agent's ``tool_call_ids``, else
    the oldest pending call (of the same name, for a ``function`` message); ``[""]`` for an orphan."""
    ids = m.get("tool_call_ids") if isinstance(m.get("tool_call_ids"), list) else None
    if m.get("tool_call_id"):
        return [as_str(m["tool_call_id"])]
    if ids:
        return ids
    if role == "function" and m.get("name"):
        match = [c for c in calls.pending if calls.names.peek(c) == m["name"]]
        ids = match[:1] or calls.pending[:1]
    else:
        ids = calls.pending[:1]
    if ids:
        meta_m["inferred_call_id"] = True
        return ids
    meta_m["orphan"] = True
    return [""]


def _chat_results(m: dict, role: str, meta_m: dict, calls: _OpenCalls, path: str | None,
                  where: str) -> list[Part]:
    """A tool/function message's ``tool_result`` parts: the content on the first, the others ``shared_with`` it."""
    content = _openai_parts(m.get("content"), path, where)
    ids = _answered_ids(m, role, meta_m, calls)
    results = []
    for k, cid in enumerate(ids):
        cid = str(cid)
        name = calls.names.take(cid) or (m.get("name", "") if role == "function" else "")
        results.append(Part(kind="tool_result", call_id=cid, name=name,
                            content=content if k == 0 else [], meta={} if k == 0 else {"shared_with": ids[0]}))
        if cid in calls.pending:
            calls.pending.remove(cid)
    if role == "function":
        meta_m["source_role"] = "function"
    return results


def read_openai(body: Any, path: str | None = None) -> ReadResult:
    """Read an OpenAI chat-completions request (``{"messages": [...]}``) or a bare message list.

    The first system/developer message is the system prompt; later ones keep role ``system`` with
    ``meta["source_role"]``. Tool messages without ``tool_call_id`` answer the oldest unanswered call of the
    preceding assistant message; SWE-agent's ``tool_call_ids`` lists are honoured.

    Parameters
    ----------
    body : dict or list
        The request body, or a bare list of chat messages.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        Tool definitions ``{"name", "description", "parameters"}``, the model name or ``None``, and format facts.

    Raises
    ------
    FormatError
        A message that is not an object, an unknown role, or content of the wrong type.

    Examples
    --------
    >>> body = {"model": "gpt-x", "messages": [{"role": "system", "content": "Be brief."},
    ...     {"role": "user", "content": "ls?"},
    ...     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...      "function": {"name": "ls", "arguments": "{}"}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "a.py"}]}
    >>> msgs, tools, model, meta = read_openai(body)
    >>> len(msgs), [m.role for m in msgs], model, msgs[3].parts[0].name
    (4, ['system', 'user', 'assistant', 'tool'], 'gpt-x', 'ls')
    """
    msgs, tools, model, meta = _chat_body(body, path)
    out: list[Message] = []
    calls = _OpenCalls()
    for i, m in enumerate(msgs):
        m = require_dict(m, f"message {i}", path)
        role = m.get("role")
        where = f"message {i} ({role})"
        meta_m = _chat_meta(m, role)
        if role in ("system", "developer"):
            if role == "developer" or any(x.role == "system" for x in out):
                meta_m["source_role"] = role
            out.append(Message(0, "system", _openai_parts(m.get("content"), path, where), meta_m))
        elif role == "user":
            out.append(Message(0, "user", _openai_parts(m.get("content"), path, where), meta_m))
        elif role == "assistant":
            out.append(Message(0, "assistant", _chat_assistant_parts(m, i, meta_m, calls, path, where), meta_m))
        elif role in ("tool", "function"):
            out.append(Message(0, "tool", _chat_results(m, role, meta_m, calls, path, where), meta_m))
        else:
            raise FormatError(f"{where}: unknown role {role!r} for an OpenAI chat message", path=path)
    return ReadResult(out, tools, model, meta)


def read_swe_agent(doc: dict, path: str | None = None) -> ReadResult:
    """Read a SWE-agent ``.traj`` file: its ``history`` is an OpenAI chat message list.

    SWE-agent's extra keys (``agent``, ``message_type``, ``thought``, ``action``, ``tool_call_ids``) stay in each
    message's ``meta["extra"]``. The trajectory, environment and replay config are not messages; ``info`` is kept
    in the transcript meta.

    Parameters
    ----------
    doc : dict
        The parsed ``.traj`` document.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        Tool definitions ``{"name", "description", "parameters"}``, the model name or ``None``, and format facts.

    Raises
    ------
    FormatError
        No ``history`` list, or a malformed message in it.

    Examples
    --------
    >>> traj = {"history": [{"role": "system", "content": "You are an agent."},
    ...     {"role": "user", "content": "Fix it.", "agent": "main", "message_type": "observation"}],
    ...     "info": {"exit_status": "submitted"}}
    >>> msgs, _, model, meta = read_swe_agent(traj)
    >>> [m.role for m in msgs], msgs[1].meta["extra"], meta["info"]
    (['system', 'user'], {'agent': 'main', 'message_type': 'observation'}, {'exit_status': 'submitted'})
    """
    hist = doc.get("history")
    if not isinstance(hist, list):
        raise FormatError("a SWE-agent .traj file needs a 'history' list", path=path)
    messages, tools, _, _ = read_openai(hist, path)
    model = None
    rc = doc.get("replay_config")
    if isinstance(rc, str):
        try:
            rc = json.loads(rc)
        except ValueError:
            rc = None
    if isinstance(rc, dict):
        agent = rc.get("agent") if isinstance(rc.get("agent"), dict) else {}
        mcfg = agent.get("model") if isinstance(agent.get("model"), dict) else {}
        model = mcfg.get("name") or None
        if model in ("replay", "instant_empty_submit", "human", "human_thought"):
            model = None  # SWE-agent's stand-in models name no real model
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    meta = {"info": info, "environment": doc.get("environment"), "trajectory_steps": len(doc.get("trajectory") or [])}
    return ReadResult(messages, tools, model, meta)
