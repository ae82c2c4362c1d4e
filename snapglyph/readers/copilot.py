"""Reader for GitHub Copilot CLI sessions (``~/.copilot/session-state/<session id>/events.jsonl``, older CLIs
``~/.copilot/session-state/<session id>.jsonl``).

Schema source: the session event types of the Copilot SDK (``generated/session_events`` of
github.com/github/copilot-sdk) and the events the CLI writes, as quoted by public readers of these files (read
2026-12-07). Each line is ``{"type", "data", "id", "timestamp", "parentId"}``:

- ``session.start`` (``sessionId``, ``copilotVersion``, ``selectedModel``, ``context.cwd``) and
  ``session.model_change`` (``newModel``): the session's facts and model;
- ``user.message`` (``content`` as typed; ``transformedContent``, what the model was sent, kept in meta;
  ``attachments``): a user message;
- ``assistant.message`` (``content``, ``toolRequests`` ``[{toolCallId, name, arguments}]``, ``messageId``,
  ``model``, ``reasoningText``): an assistant message, its reasoning a ``thinking`` part; its ``model`` is the
  session's model from then on;
- ``tool.execution_complete`` (``toolCallId``, ``success``, ``result.content``, ``error.message``): the tool
  message answering the call;
- every other event (``tool.execution_start``, which repeats the request, turn starts and ends, usage, info,
  truncation and compaction notices, deltas) is skipped and counted by type in ``meta["skipped"]``, and so are a
  sub-agent's own messages and tool runs (events whose ``parentToolCallId`` names the call that started it: the
  conversation holds that call and its output).

Event ids stay in ``Message.meta["event_id"]``, tool call ids in ``Part.call_id``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..model.messages import Message, Part
from .common import CallNames, ReadResult, as_str, dumps_args, mark_typed

__all__ = ["is_copilot", "read_copilot"]


def is_copilot(entries: list[dict]) -> bool:
    """Whether parsed JSONL entries are Copilot CLI session events (a ``session.start``, or ``user.message`` /
    ``assistant.message`` events with ``data``).

    Examples
    --------
    >>> is_copilot([{"type": "session.start", "data": {"sessionId": "s1"}, "id": "e1"}])
    True
    >>> is_copilot([{"type": "user", "message": {}}])
    False
    """
    return any(isinstance(e.get("data"), dict) and e.get("type") in ("session.start", "user.message",
                                                                    "assistant.message") for e in entries[:50])


def _result_text(d: dict) -> str:
    res = d.get("result") if isinstance(d.get("result"), dict) else {}
    if d.get("success") is False and isinstance(d.get("error"), dict):
        return as_str(d["error"].get("message")) or as_str(res.get("content"))
    return as_str(res.get("content") if res else d.get("result"))


class _Session:
    """What reading the events gathers: messages, call names, facts."""

    def __init__(self) -> None:
        self.out: list[Message] = []
        self.names = CallNames()
        self.skipped: Counter = Counter()
        self.session: dict[str, Any] = {}
        self.model: str | None = None

    def event(self, e: dict) -> None:
        t, d = e.get("type"), e.get("data") if isinstance(e.get("data"), dict) else {}
        ids = {"event_id": e.get("id"), "timestamp": e.get("timestamp")}
        if d.get("parentToolCallId") and t in ("assistant.message", "tool.execution_complete", "user.message"):
            self.skipped[f"sub-agent {t}"] += 1  # a sub-agent's own turn: its result is the parent call's output
        elif t == "session.start":
            self.session = {k: d.get(k) for k in ("sessionId", "copilotVersion", "producer", "startTime") if k in d}
            self.session["cwd"] = (d.get("context") or {}).get("cwd")
            self.model = d.get("selectedModel") or self.model
        elif t == "session.model_change":
            self.model = d.get("newModel") or self.model
        elif t == "user.message":
            parts = mark_typed([Part(kind="text", text=as_str(d.get("content")))], True)
            extra = {k: d[k] for k in ("transformedContent", "attachments") if d.get(k)}
            self.out.append(Message(0, "user", parts, {**ids, **extra}))
        elif t == "assistant.message":
            self.assistant(d, ids)
        elif t == "tool.execution_complete":
            cid = as_str(d.get("toolCallId"))
            self.out.append(Message(0, "tool", [Part(kind="tool_result", call_id=cid, name=self.names.take(cid),
                                                     content=[Part(kind="text", text=_result_text(d))],
                                                     is_error=d.get("success") is False)], ids))
        else:
            self.skipped[str(t)] += 1

    def assistant(self, d: dict, ids: dict) -> None:
        self.model = as_str(d["model"]) if d.get("model") else self.model
        parts = [Part(kind="thinking", text=as_str(d["reasoningText"]))] if d.get("reasoningText") else []
        if d.get("content"):
            parts.append(Part(kind="text", text=as_str(d["content"])))
        for tr in d.get("toolRequests") or []:
            cid, name = as_str(tr.get("toolCallId")), as_str(tr.get("name"))
            self.names.add(cid, name)
            parts.append(Part(kind="tool_call", name=name, arguments=dumps_args(tr.get("arguments") or {}),
                              call_id=cid))
        self.out.append(Message(0, "assistant", parts, {**ids, "message_id": d.get("messageId")}))


def read_copilot(entries: list[dict], path: str | None = None) -> ReadResult:
    """Read a Copilot CLI ``events.jsonl``, already parsed into events (see the module docstring for the rules).

    Returns
    -------
    ReadResult
        No tool definitions (the file stores none), the last model the session names, and ``meta``: ``session``
        (``sessionId``, ``copilotVersion``, ``cwd``...), ``events``, ``skipped`` by type.

    Examples
    --------
    >>> ev = [{"type": "session.start", "data": {"sessionId": "s1", "selectedModel": "claude-sonnet-4.5"}, "id": "e1"},
    ...       {"type": "user.message", "data": {"content": "ls"}, "id": "e2"},
    ...       {"type": "assistant.message", "data": {"content": "", "toolRequests": [
    ...           {"toolCallId": "c1", "name": "bash", "arguments": {"command": "ls"}}]}, "id": "e3"},
    ...       {"type": "tool.execution_start", "data": {"toolCallId": "c1"}, "id": "e4"},
    ...       {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True,
    ...        "result": {"content": "a.py"}}, "id": "e5"}]
    >>> msgs, _, model, meta = read_copilot(ev)
    >>> [m.role for m in msgs], msgs[2].parts[0].name, model, meta["skipped"]
    (['user', 'assistant', 'tool'], 'bash', 'claude-sonnet-4.5', {'tool.execution_start': 1})
    """
    s = _Session()
    for e in entries:
        s.event(e)
    meta = {"session": s.session, "events": len(entries), "skipped": dict(s.skipped)}
    return ReadResult([m for m in s.out if m.parts], [], s.model, meta)
