"""Reader for pi coding-agent session JSONL (``~/.pi/agent/sessions/*.jsonl``).

An append-only log of entries (pi v1: linear; v2+: a tree linked by ``id``/``parentId``); the conversation is the
active branch, the path from the last entry back to the root (see :func:`read_pi`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part
from .common import ReadResult, as_str, dumps_args, image_part, mark_typed

__all__ = [
    "is_pi",
    "read_pi",
]


def is_pi(entries: list[dict]) -> bool:
    """Whether parsed JSONL entries look like a pi session (a ``session`` header or ``message`` entries).

    Examples
    --------
    >>> is_pi([{"type": "session", "version": 3, "id": "s1"}])
    True
    >>> is_pi([{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}])
    False
    """
    return any(e.get("type") == "session" for e in entries[:5]) or any(
        e.get("type") == "message" and isinstance(e.get("message"), dict) and "role" in e["message"]
        for e in entries)


def _pi_content(content: Any, path: str | None, where: str) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Part(kind="text", text=content)]
    if not isinstance(content, list):
        raise FormatError(f"{where}: content is a {type(content).__name__}", path=path)
    parts = []
    for b in content:
        if not isinstance(b, dict):
            raise FormatError(f"{where}: a content block is a {type(b).__name__}", path=path)
        t = b.get("type")
        if t == "text":
            parts.append(Part(kind="text", text=as_str(b.get("text"))))
        elif t == "image":
            parts.append(image_part(media_type=b.get("mimeType", ""), data=b.get("data", "")))
        elif t == "thinking":
            meta = {"redacted": True} if b.get("redacted") else {}
            parts.append(Part(kind="thinking", text=as_str(b.get("thinking")),
                              signature=as_str(b.get("thinkingSignature")), meta=meta))
        elif t == "toolCall":
            extra = {k: v for k, v in b.items() if k not in ("type", "id", "name", "arguments")}
            parts.append(Part(kind="tool_call", name=b.get("name", ""), arguments=dumps_args(b.get("arguments", {})),
                              call_id=as_str(b.get("id")), meta={"extra": extra} if extra else {}))
        else:
            parts.append(Part(kind="text", text=f"[{t}]", meta={"source_block": b}))
    return parts


def _pi_bash_text(m: dict) -> str:
    text = f"Ran `{m.get('command', '')}`\n"
    out = m.get("output") or ""
    text += f"```\n{out}\n```" if out else "(no output)"
    if m.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif m.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {m['exitCode']}"
    if m.get("truncated") and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {m['fullOutputPath']}]"
    return text


def _pi_message(m: dict, path: str | None, where: str) -> Message | None:
    role = m.get("role")
    base = {"timestamp": m.get("timestamp")}
    if role == "user":
        return Message(0, "user", _pi_content(m.get("content"), path, where), base)
    if role == "assistant":
        meta = {**base, **{k: m[k] for k in ("api", "provider", "model", "stopReason", "errorMessage", "usage")
                           if k in m}}
        return Message(0, "assistant", _pi_content(m.get("content"), path, where), meta)
    if role == "toolResult":
        meta = {**base, "extra": {"details": m["details"]}} if "details" in m else base
        return Message(0, "tool", [Part(kind="tool_result", call_id=as_str(m.get("toolCallId")),
                                        name=m.get("toolName", ""), is_error=bool(m.get("isError", False)),
                                        content=_pi_content(m.get("content"), path, where))], meta)
    if role == "bashExecution":
        if m.get("excludeFromContext"):
            return None
        info = {k: m.get(k) for k in ("command", "exitCode", "cancelled", "truncated", "fullOutputPath") if k in m}
        return Message(0, "user", [Part(kind="text", text=_pi_bash_text(m))], {**base, "bash_execution": info})
    if role in ("custom", "hookMessage"):
        return Message(0, "user", _pi_content(m.get("content"), path, where),
                       {**base, "custom_type": m.get("customType"), "display": m.get("display")})
    if role in ("branchSummary", "compactionSummary"):
        return Message(0, "user", [Part(kind="text", text=as_str(m.get("summary")))], {**base, "summary": role})
    raise FormatError(f"{where}: unknown pi message role {role!r}", path=path)


def _pi_branch(body: list[dict]) -> tuple[list[dict], list[str]]:
    """The entries of the conversation (file order) and repair sentences: all entries of a linear (v1) file; of a
    tree (v2+), the path from the last entry with an ``id`` back through ``parentId``."""
    if not any("id" in e for e in body):
        return body, []
    repairs: list[str] = []
    byid = {e["id"]: i for i, e in enumerate(body) if "id" in e}
    path_idx: list[int] = []
    seen: set[int] = set()
    i: int | None = max(byid.values())
    while i is not None and i not in seen:
        seen.add(i)
        path_idx.append(i)
        parent = body[i].get("parentId")
        i = byid.get(parent) if parent else None
        if parent and i is None:  # a parent not in the file: go on at the entry before, in file order
            i = next((j for j in range(path_idx[-1] - 1, -1, -1) if "id" in body[j] and j not in seen), None)
            if i is not None:
                repairs.append(f"entry {path_idx[-1] + 1} after the header: its parent {parent} is not in the "
                               f"file; the conversation continues at the entry before it")
    return [body[i] for i in sorted(path_idx)], repairs


def _pi_entry(e: dict, path: str | None, where: str) -> Message | None:
    """The message an entry stands for; None for an entry that is no message (or a bash run kept out of context).

    Raises
    ------
    FormatError
        A ``message`` entry whose ``message`` is not an object, or an unknown message role.
    """
    t = e.get("type")
    if t == "message":
        if not isinstance(e.get("message"), dict):
            raise FormatError(f"{where}: 'message' is not a JSON object", path=path)
        return _pi_message(e["message"], path, where)
    if t == "compaction":
        info = {k: e.get(k) for k in ("firstKeptEntryId", "firstKeptEntryIndex", "tokensBefore") if k in e}
        return Message(0, "user", [Part(kind="text", text=as_str(e.get("summary")))],
                       {"timestamp": e.get("timestamp"), "compaction": info})
    if t == "branch_summary":
        return Message(0, "user", [Part(kind="text", text=as_str(e.get("summary")))],
                       {"timestamp": e.get("timestamp"), "branch_summary": {"fromId": e.get("fromId")}})
    if t == "custom_message":
        return Message(0, "user", _pi_content(e.get("content"), path, where),
                       {"timestamp": e.get("timestamp"), "custom_type": e.get("customType")})
    return None


def read_pi(entries: list[dict], path: str | None = None) -> ReadResult:
    """Read a pi coding-agent session (``~/.pi/agent/sessions/*.jsonl``), already parsed into entries.

    Version 1 files are linear; version 2+ files are a tree, and the conversation is the path from the last entry
    with an ``id`` back through ``parentId``; a ``parentId`` naming no entry of the file is crossed by file order
    (the path goes on at the entry before), and said in ``meta["repairs"]`` (the loader's ``Transcript.notes``). ``compaction`` and ``branch_summary`` entries become user messages
    holding their summary (``meta["compaction"]`` / ``meta["branch_summary"]``) in place; the history they
    summarize stays too. ``custom_message`` entries and ``bashExecution`` messages become user messages (pi sends
    them to the model as user text; ``!!`` commands marked ``excludeFromContext`` are skipped). Thinking
    signatures go to ``Part.signature``, never into text. Only the text of ``user`` messages is marked typed by a
    person (``Part.meta["typed"]``; the message roles of pi's ``AgentMessage``, ``packages/coding-agent/src/core/
    messages.ts`` of github.com/badlogic/pi-mono, read 2026-12-04): summaries, bash runs and extension messages
    are not. ``model_change``, ``thinking_level_change``,
    ``custom``, ``label`` and ``session_info`` entries are not messages and are counted in ``meta["skipped"]``.

    Parameters
    ----------
    entries : list of dict
        The parsed JSONL lines, in file order (the ``session`` header included).
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        No tools, the last model the session names (header, ``model_change`` or an assistant message), and
        ``meta`` with ``session`` (the header), ``entries``, ``branch_entries``, ``skipped`` and ``repairs``; each
        message keeps its entry's ``id`` (``meta["entry_id"]``, version 2+) and its line in the file
        (``meta["line"]``, from 0, the header included).

    Raises
    ------
    FormatError
        An unknown message role, or content of the wrong type.

    Examples
    --------
    >>> lines = [{"type": "session", "version": 3, "id": "s1", "modelId": "claude-x"},
    ...     {"type": "message", "id": "e1", "parentId": None, "message": {"role": "user", "content": "hi"}},
    ...     {"type": "message", "id": "e2", "parentId": "e1",
    ...      "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}}]
    >>> msgs, _, model, meta = read_pi(lines)
    >>> len(msgs), [(m.role, m.text()) for m in msgs], model, meta["branch_entries"]
    (2, [('user', 'hi'), ('assistant', 'hello')], 'claude-x', 2)
    >>> msgs[0].parts[0].meta["typed"]
    True
    """
    header = next((e for e in entries if e.get("type") == "session"), {})
    line_of = {id(e): i for i, e in enumerate(entries)}  # each message keeps its record's line (meta["line"])
    chosen, repairs = _pi_branch([e for e in entries if e.get("type") != "session"])
    out: list[Message] = []
    model = header.get("modelId")
    skipped: Counter = Counter()
    for n, e in enumerate(chosen):
        t = e.get("type")
        msg = _pi_entry(e, path, f"entry {n} ({t})")
        if msg is None:
            skipped["excluded_bash" if t == "message" else t] += 1
            if t == "model_change" and e.get("modelId"):
                model = e["modelId"]
            continue
        if t == "message" and msg.role == "assistant" and e["message"].get("model"):
            model = e["message"]["model"]
        if e.get("id"):
            msg.meta["entry_id"] = e["id"]
        msg.meta["line"] = line_of[id(e)]
        if msg.role == "user":  # a person's words: a ``user`` message; summaries, bash runs and extensions' are not
            mark_typed(msg.parts, t == "message" and e["message"].get("role") == "user")
        out.append(msg)
    meta = {"session": {k: v for k, v in header.items() if k != "type"}, "entries": len(entries),
            "branch_entries": len(chosen), "skipped": dict(skipped), "repairs": repairs}
    return ReadResult(out, [], model, meta)
