"""Reader for Kimi CLI contexts (``~/.kimi/sessions/<work dir hash>/<session id>/context.jsonl``).

Schema source: ``kimi_cli/soul/context.py`` (``Context.restore`` / ``append_message`` / ``checkpoint`` /
``update_token_count``) and the kosong ``Message`` and ``ContentPart`` types (``kosong/message.py``) of
github.com/MoonshotAI/kimi-cli, as quoted in public code that reads these files (read 2026-12-07). Each line is one
record:

- ``{"role": "_system_prompt", "content": "..."}``: the system prompt (the system message);
- ``{"role": "_usage", "token_count": N}`` and ``{"role": "_checkpoint", "id": N}``: bookkeeping, skipped and
  counted in ``meta["skipped"]`` (the last token count is ``meta["token_count"]``, the checkpoints
  ``meta["checkpoints"]``);
- a kosong message ``{"role": "user" | "assistant" | "tool" | "system", "content": str | [part], "tool_calls":
  [{"type": "function", "id", "function": {"name", "arguments"}}], "tool_call_id"}``, with parts ``text``,
  ``think`` (``think``, ``encrypted``: a ``thinking`` part, never drawn), ``image_url`` and ``audio_url``.

A user message whose text is ``<system>CHECKPOINT N</system>`` (what ``checkpoint(add_user_message=True)`` writes)
or another ``<system>`` note is marked not typed by a person.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part
from .common import CallNames, ReadResult, as_str, image_part, mark_typed

__all__ = ["is_kimi", "read_kimi"]

_BOOKKEEPING = frozenset({"_usage", "_checkpoint", "_system_prompt"})
_ROLES = frozenset({"user", "assistant", "tool", "system"}) | _BOOKKEEPING


def is_kimi(entries: list[dict]) -> bool:
    """Whether parsed JSONL entries are a Kimi CLI context: every record has a kosong or bookkeeping ``role``, and
    one is bookkeeping (``_usage``, ``_checkpoint``, ``_system_prompt``).

    Examples
    --------
    >>> is_kimi([{"role": "_system_prompt", "content": "x"}, {"role": "user", "content": "hi"}])
    True
    >>> is_kimi([{"role": "user", "content": "hi"}])
    False
    """
    return (bool(entries) and all(e.get("role") in _ROLES for e in entries)
            and any(e.get("role") in _BOOKKEEPING for e in entries))


def _parts(content: Any, path: str | None, where: str) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Part(kind="text", text=content)] if content else []
    if not isinstance(content, list):
        raise FormatError(f"{where}: content is a {type(content).__name__}", path=path)
    out = []
    for b in content:
        if not isinstance(b, dict):
            raise FormatError(f"{where}: a content part is a {type(b).__name__}", path=path)
        t = b.get("type")
        if t == "text":
            out.append(Part(kind="text", text=as_str(b.get("text"))))
        elif t == "think":
            out.append(Part(kind="thinking", text=as_str(b.get("think")), signature=as_str(b.get("encrypted"))))
        elif t == "image_url":
            url = b.get("image_url") if isinstance(b.get("image_url"), dict) else {"url": b.get("image_url")}
            out.append(image_part(url=as_str(url.get("url"))))
        else:
            out.append(Part(kind="text", text=f"[{t}]", meta={"source_block": b}))
    return out


def _message(e: dict, n: int, path: str | None, names: CallNames) -> Message:
    role, where = e["role"], f"record {n} ({e['role']})"
    parts = _parts(e.get("content"), path, where)
    if role == "tool":
        cid = as_str(e.get("tool_call_id"))
        return Message(0, "tool", [Part(kind="tool_result", call_id=cid, name=names.take(cid), content=parts)],
                       {"line": n})
    for tc in e.get("tool_calls") or []:
        fn = tc.get("function") or {}
        names.add(as_str(tc.get("id")), as_str(fn.get("name")))
        parts.append(Part(kind="tool_call", name=as_str(fn.get("name")), arguments=as_str(fn.get("arguments")),
                          call_id=as_str(tc.get("id"))))
    if role == "user":
        mark_typed(parts, not all(p.text.lstrip().startswith("<system>") for p in parts if p.kind == "text"))
    return Message(0, role, parts, {"line": n})


def read_kimi(entries: list[dict], path: str | None = None) -> ReadResult:
    """Read a Kimi CLI ``context.jsonl``, already parsed into records (see the module docstring for the rules).

    Returns
    -------
    ReadResult
        No tool definitions and no model (the file stores neither); ``meta``: ``records``, ``skipped`` by kind,
        ``token_count`` (the last ``_usage``), ``checkpoints``; each message keeps its line in ``meta["line"]``.

    Raises
    ------
    FormatError
        Content of the wrong type.

    Examples
    --------
    >>> lines = [{"role": "_system_prompt", "content": "Be brief."}, {"role": "_checkpoint", "id": 0},
    ...          {"role": "user", "content": [{"type": "text", "text": "ls?"}]},
    ...          {"role": "assistant", "content": [{"type": "think", "think": "hm"}], "tool_calls": [
    ...              {"type": "function", "id": "c1", "function": {"name": "Shell", "arguments": "{}"}}]},
    ...          {"role": "tool", "tool_call_id": "c1", "content": "a.py"}, {"role": "_usage", "token_count": 90}]
    >>> msgs, _, _, meta = read_kimi(lines)
    >>> [m.role for m in msgs], msgs[3].parts[0].name, meta["skipped"], meta["token_count"]
    (['system', 'user', 'assistant', 'tool'], 'Shell', {'_checkpoint': 1, '_usage': 1}, 90)
    """
    out: list[Message] = []
    skipped: Counter = Counter()
    names = CallNames()
    meta: dict[str, Any] = {"records": len(entries), "checkpoints": []}
    for n, e in enumerate(entries):
        role = e.get("role")
        if role == "_system_prompt":
            out.insert(0, Message(0, "system", [Part(kind="text", text=as_str(e.get("content")))], {"line": n}))
        elif role in _BOOKKEEPING:
            skipped[role] += 1
            if role == "_usage":
                meta["token_count"] = e.get("token_count")
            else:
                meta["checkpoints"].append(e.get("id"))
        else:
            out.append(_message(e, n, path, names))
    meta["skipped"] = dict(skipped)
    return ReadResult([m for m in out if m.parts], [], None, meta)
