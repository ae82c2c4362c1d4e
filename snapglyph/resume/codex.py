"""Codex rollouts written back: the source's ``session_meta`` (new id and time) and last ``turn_context``, then the
compacted Responses request's input items as ``response_item`` records: the head, one user message holding the
page images and the snapshot text, the tail.

Codex (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``; ``RolloutItem`` of
``codex-rs/protocol/src/protocol.rs``, github.com/openai/codex, read 2026-12-01) rebuilds a resumed conversation
from its ``response_item`` records; ``codex resume <id>`` finds the file by the id in its name. Content written as
a string becomes the list of ``input_text`` / ``output_text`` parts a rollout item holds; ``detail`` is left on
the page images as the request carries it. A call the source holds as a ``custom_tool_call`` (Codex's freeform
``apply_patch``), which the request carries as a ``function_call``, is written back as the source's own item, and
its output as a ``custom_tool_call_output``.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._files import write_atomic
from ..readers.decode import decode_text, jsonl_entries
from .common import Resumed, now_stamp, snapshot_turn

__all__ = ["write_codex"]


def _item(it: dict, custom: dict[str, dict]) -> dict:
    """A request input item as a rollout's ``response_item`` payload (message content as a list of parts; a custom
    tool call and its output as the source holds them)."""
    cid = it.get("call_id")
    if cid in custom and it.get("type") == "function_call":
        return custom[cid]
    if cid in custom and it.get("type") == "function_call_output":
        return {"type": "custom_tool_call_output", "call_id": cid, "output": it.get("output")}
    if it.get("type", "message") == "message" and isinstance(it.get("content"), str):
        kind = "output_text" if it.get("role") == "assistant" else "input_text"
        return {**it, "type": "message", "content": [{"type": kind, "text": it["content"]}]}
    return it if "type" in it else {"type": "message", **it}


def _source_records(src: Path) -> tuple[dict | None, dict | None, dict[str, dict]]:
    """The source's ``session_meta``, its last ``turn_context`` record and its custom tool calls by call id."""
    text, _ = decode_text(src.read_bytes(), str(src), str(src))
    entries, _ = jsonl_entries(text, src.name, str(src))
    meta = next((e for e in entries if e.get("type") == "session_meta"), None)
    ctx = next((e for e in reversed(entries) if e.get("type") == "turn_context"), None)
    custom = {e["payload"]["call_id"]: e["payload"] for e in entries if e.get("type") == "response_item"
              and isinstance(e.get("payload"), dict) and e["payload"].get("type") == "custom_tool_call"
              and isinstance(e["payload"].get("call_id"), str)}
    return meta, ctx, custom


def write_codex(transcript: Any, result: Any, src: Path) -> Resumed:
    """Write the new Codex rollout beside ``src``; returns it with ``codex resume <id>``.

    Raises
    ------
    InputError
        Where the request shows no page (:func:`~snapglyph.resume.snapshot_turn`).
    OSError
        Where the folder cannot be written.

    Examples
    --------
    >>> # tests/test_resume.py writes and re-reads real rollouts; the real Codex resumes them there
    >>> callable(write_codex)
    True
    """
    items = result.request["input"]
    snapshot_turn(items)
    meta, ctx, custom = _source_records(src)
    now = datetime.now(timezone.utc)
    stamp = now_stamp()
    sid = str(uuid.uuid4())
    payload = dict((meta or {}).get("payload") or {})
    payload.update(id=sid, timestamp=stamp)
    if not payload.get("base_instructions") and result.request.get("instructions"):
        payload["base_instructions"] = {"text": result.request["instructions"]}
    out = [{"timestamp": stamp, "type": "session_meta", "payload": payload}]
    if ctx is not None:
        out.append({**ctx, "timestamp": stamp})
    out += [{"timestamp": stamp, "type": "response_item", "payload": _item(it, custom)} for it in items]
    path = src.with_name(f"rollout-{now.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl")
    write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    return Resumed(path, sid, f"codex resume {sid}", len(out))
