"""Reader for opencode sessions: ``opencode export <session id>`` JSON, and the stored session files.

Schema source: ``packages/opencode/src/session/message-v2.ts`` of github.com/sst/opencode (its copy in
anomalyco/opencode, read 2026-12-07): a message is ``{info, parts}``; ``info`` is a ``User`` (``role: "user"``,
``model.{providerID, modelID}``, ``agent``, ``time.created``) or an ``Assistant`` (``role: "assistant"``,
``modelID``, ``providerID``, ``parentID``, ``tokens``, ``cost``, ``error``) message; ``parts`` are ``text``
(``synthetic``, ``ignored``), ``reasoning``, ``file`` (``mime``, ``url``, ``filename``), ``tool`` (``callID``,
``tool``, ``state`` of status ``pending`` / ``running`` / ``completed`` (``input``, ``output``) / ``error``
(``input``, ``error``)), and bookkeeping (``step-start``, ``step-finish``, ``snapshot``, ``patch``, ``agent``,
``retry``, ``compaction``, ``subtask``).

- The export is ``{"info": <session>, "messages": [{"info", "parts"}]}``. The stored layout is
  ``storage/session/<project id>/<session id>.json`` (the session), ``storage/message/<session id>/<message
  id>.json`` (each ``info``) and ``storage/part/<message id>/<part id>.json`` (each part); given the session's
  file, its messages and parts are read from there, in id order (opencode's ids sort by time).
- As opencode's ``toModelMessages`` sends them: an assistant message is cut at each ``step-start`` (one model
  call each); its text, reasoning (a ``thinking`` part) and tool calls form one assistant message, and each tool
  part's result follows as a ``tool`` message (an error's text is an error result; a pending or running tool
  reads ``[Tool execution was interrupted]``); ``ignored`` text is left out; a ``file`` part that is an image is
  an image, any other a text stand-in naming it.
- Bookkeeping parts are skipped and counted by type in ``meta["skipped"]``; message ids stay in
  ``Message.meta["message_id"]``, part ids in ``Part.meta["part_id"]``, call ids in ``Part.call_id``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part
from .common import ReadResult, as_str, dumps_args, image_part, mark_typed

__all__ = ["is_opencode", "read_opencode", "stored_messages"]

_INTERRUPTED = "[Tool execution was interrupted]"
_BOOKKEEPING = frozenset({"step-finish", "snapshot", "patch", "agent", "retry", "compaction", "subtask"})


def _is_message(m: Any) -> bool:
    return isinstance(m, dict) and isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list)


def is_opencode(doc: Any, path: str | None = None) -> bool:
    """Whether a parsed JSON document is an opencode export (``messages`` of ``{info, parts}``), a list of such
    messages, or a stored session file (``ses_`` id, ``projectID``) with its messages beside it.

    Examples
    --------
    >>> is_opencode({"info": {"id": "ses_1"}, "messages": [{"info": {"role": "user"}, "parts": []}]})
    True
    >>> is_opencode({"messages": [{"role": "user", "content": "hi"}]})
    False
    """
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return bool(doc["messages"]) and all(_is_message(m) for m in doc["messages"])
    if isinstance(doc, list):
        return bool(doc) and all(_is_message(m) for m in doc)
    return (isinstance(doc, dict) and as_str(doc.get("id")).startswith("ses_") and "projectID" in doc
            and path is not None and _storage_root(Path(path)) is not None)


def _storage_root(session_file: Path) -> Path | None:
    """``storage/`` of a stored session file (``storage/session/<project>/<id>.json``), where it holds messages."""
    root = session_file.parent.parent.parent
    return root if (root / "message" / session_file.stem).is_dir() else None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FormatError(f"{path}: cannot read an opencode record ({e})", path=str(path)) from None


def stored_messages(session_file: Path) -> list[dict]:
    """The ``{info, parts}`` messages of a stored session, read from its ``storage/message`` and ``storage/part``
    folders in id order.

    Raises
    ------
    FormatError
        A record that is no readable JSON.
    """
    root = _storage_root(session_file)
    if root is None:
        return []
    out = []
    for f in sorted((root / "message" / session_file.stem).glob("*.json")):
        info = _json(f)
        pdir = root / "part" / as_str(info.get("id") if isinstance(info, dict) else f.stem)
        parts = [_json(p) for p in sorted(pdir.glob("*.json"))] if pdir.is_dir() else []
        out.append({"info": info, "parts": parts})
    return out


class _Reader:
    """What reading gathers: messages, skipped parts, the model."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.out: list[Message] = []
        self.skipped: Counter = Counter()
        self.model: str | None = None

    def message(self, m: dict, where: str) -> None:
        info, parts = m["info"], m["parts"]
        role, mid = info.get("role"), {"message_id": info.get("id")}
        model = info.get("modelID") or (info.get("model") or {}).get("modelID")
        self.model = as_str(model) if model else self.model
        if role == "user":
            ps = [p for b in parts if (p := self.user_part(b, where)) is not None]
            self.out.append(Message(0, "user", ps, mid))
        elif role == "assistant":
            self.assistant(parts, mid, where)
        else:
            raise FormatError(f"{where}: unknown opencode role {role!r}", path=self.path)

    def user_part(self, b: Any, where: str) -> Part | None:
        if not isinstance(b, dict):
            raise FormatError(f"{where}: a part is a {type(b).__name__}", path=self.path)
        t = b.get("type")
        if t == "text" and not b.get("ignored"):
            return mark_typed([Part(kind="text", text=as_str(b.get("text")), meta={"part_id": b.get("id")})],
                              not b.get("synthetic"))[0]
        if t == "file":
            return self.file(b)
        self.skipped["part:text ignored" if t == "text" else f"part:{t}"] += 1
        return None

    def file(self, b: dict) -> Part:
        if as_str(b.get("mime")).startswith("image/") and as_str(b.get("url")).startswith("data:"):
            return image_part(url=as_str(b["url"]), meta={"part_id": b.get("id")})
        return Part(kind="text", text=f"[file {as_str(b.get('filename') or b.get('url'))}]",
                    meta={"part_id": b.get("id"), "source_block": b})

    def assistant(self, parts: list, mid: dict, where: str) -> None:
        step: list[Part] = []
        results: list[Message] = []
        for b in parts:
            t = b.get("type") if isinstance(b, dict) else None
            if t == "step-start" and step:
                self.flush(step, results, mid)
                step, results = [], []
            elif t == "text" and not b.get("ignored"):
                step.append(Part(kind="text", text=as_str(b.get("text")), meta={"part_id": b.get("id")}))
            elif t == "reasoning":
                step.append(Part(kind="thinking", text=as_str(b.get("text")), meta={"part_id": b.get("id")}))
            elif t == "file":
                step.append(self.file(b))
            elif t == "tool":
                self.tool(b, step, results)
            elif t != "step-start":
                self.skipped["part:text ignored" if t == "text" else f"part:{t}"] += 1
        self.flush(step, results, mid)

    def tool(self, b: dict, step: list[Part], results: list[Message]) -> None:
        st = b.get("state") if isinstance(b.get("state"), dict) else {}
        cid, name = as_str(b.get("callID")), as_str(b.get("tool"))
        step.append(Part(kind="tool_call", name=name, arguments=dumps_args(st.get("input") or {}), call_id=cid,
                         meta={"part_id": b.get("id")}))
        status = st.get("status")
        text = (as_str(st.get("output")) if status == "completed" else as_str(st.get("error")) if status == "error"
                else _INTERRUPTED)
        result = Part(kind="tool_result", call_id=cid, name=name, is_error=status != "completed",
                      content=[Part(kind="text", text=text)])
        results.append(Message(0, "tool", [result], {"status": status}))

    def flush(self, step: list[Part], results: list[Message], mid: dict) -> None:
        if step:
            self.out.append(Message(0, "assistant", step, dict(mid)))
        self.out.extend(results)


def read_opencode(doc: Any, path: str | None = None) -> ReadResult:
    """Read an opencode export, message list or stored session file (see the module docstring for the rules).

    Returns
    -------
    ReadResult
        No tool definitions, the last model a message names, and ``meta``: ``session`` (the session's info),
        ``messages``, ``skipped`` by part type.

    Raises
    ------
    FormatError
        A message of an unknown role, a part that is not an object, an unreadable stored record.

    Examples
    --------
    >>> doc = {"info": {"id": "ses_1", "title": "t"}, "messages": [
    ...     {"info": {"id": "msg_1", "role": "user", "model": {"providerID": "p", "modelID": "gpt-5.1"}},
    ...      "parts": [{"id": "prt_1", "type": "text", "text": "ls"}]},
    ...     {"info": {"id": "msg_2", "role": "assistant", "modelID": "gpt-5.1"}, "parts": [
    ...      {"type": "step-start"}, {"type": "tool", "callID": "c1", "tool": "bash",
    ...       "state": {"status": "completed", "input": {"command": "ls"}, "output": "a.py"}},
    ...      {"type": "step-finish"}, {"type": "step-start"}, {"type": "text", "text": "one file"}]}]}
    >>> msgs, _, model, meta = read_opencode(doc)
    >>> [m.role for m in msgs], model, meta["skipped"]
    (['user', 'assistant', 'tool', 'assistant'], 'gpt-5.1', {'part:step-finish': 1})
    """
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        session, messages = doc.get("info") or {}, doc["messages"]
    elif isinstance(doc, list):
        session, messages = {}, doc
    else:
        session, messages = doc, stored_messages(Path(path)) if path else []
    r = _Reader(path)
    for i, m in enumerate(messages):
        if not _is_message(m):
            raise FormatError(f"message {i} is no opencode {{info, parts}} message", path=path)
        r.message(m, f"message {i} ({m['info'].get('id')})")
    meta = {"session": {k: v for k, v in session.items() if k in ("id", "title", "directory", "version",
                                                                  "projectID", "time")},
            "messages": len(messages), "skipped": dict(r.skipped)}
    return ReadResult([m for m in r.out if m.parts], [], r.model, meta)
