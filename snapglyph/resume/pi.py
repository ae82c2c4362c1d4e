"""pi sessions written back: a new header, the source's own entries of the head and the tail, and a new user
message entry holding the page images (pi's ``image`` blocks: ``data``, ``mimeType``) and the snapshot text between
them, re-linked by ``parentId`` under new entry ids.

pi (``~/.pi/agent/sessions/<cwd>/<timestamp>_<id>.jsonl``; ``SessionManager`` of
``packages/coding-agent/src/core/session-manager.ts``, github.com/badlogic/pi-mono, read 2026-12-04) rebuilds the
conversation from the path of ``parentId`` links ending at the last entry; ``pi --session <file>`` resumes one file.
The source's entries are found by their line (``Message.meta["line"]``), so a version 1 file (entries without ids)
is written back too, as a version 3 file whose entries have ids.
The source's last ``model_change`` entry is kept before the messages, so the resumed session names its model.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._files import write_atomic
from ..errors import InputError
from ..readers.decode import decode_text, jsonl_entries
from .common import Resumed, now_stamp, request_turns, snapshot_blocks, snapshot_turn, turn_blocks

__all__ = ["write_pi"]


def _snapshot_entry(result: Any) -> dict:
    """The new user message entry: the request's snapshot turn as pi content blocks."""
    items = request_turns(result.request)
    turn = items[snapshot_turn(items)]
    content = [{"type": "image", "data": data, "mimeType": mt} if kind == "image" else {"type": "text", "text": data}
               for kind, mt, data in snapshot_blocks(turn_blocks(turn))]
    ms = int(datetime.now(timezone.utc).timestamp() * 1000)
    return {"type": "message", "message": {"role": "user", "content": content, "timestamp": ms}}


def write_pi(transcript: Any, result: Any, src: Path) -> Resumed:
    """Write the new pi session beside ``src``; returns it with ``pi --session <file>``.

    Raises
    ------
    InputError
        Where the source holds none of the tail's entries.
    OSError
        Where the folder cannot be written.

    Examples
    --------
    >>> callable(write_pi)   # tests/test_resume.py writes one and the real pi resumes it
    True
    """
    text, _ = decode_text(src.read_bytes(), str(src), str(src))
    entries, _ = jsonl_entries(text, src.name, str(src))
    byid = {m.id: m for m in transcript.messages}
    lines = lambda keep: sorted({byid[i].meta["line"] for i in keep if i in byid and "line" in byid[i].meta})
    head = [entries[n] for n in lines(result.head_ids) if n < len(entries)]
    tail = [entries[n] for n in lines(result.tail_ids) if n < len(entries)]
    if not tail:
        raise InputError(f"{src}: none of the tail's entries was found in the file, so no session was written")
    header = next((e for e in entries if e.get("type") == "session"), {"type": "session", "version": 3})
    model = [e for e in entries if e.get("type") == "model_change"][-1:]
    sid, stamp = str(uuid.uuid4()), now_stamp()
    out: list[dict] = [{**header, "version": max(3, int(header.get("version") or 1)), "id": sid, "timestamp": stamp}]
    for e in [*model, *head, _snapshot_entry(result), *tail]:
        e = {**e, "id": uuid.uuid4().hex[:8], "parentId": out[-1]["id"] if len(out) > 1 else None}
        e.setdefault("timestamp", stamp)
        out.append(e)
    path = src.with_name(f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl")
    write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    return Resumed(path, sid, f"pi --session {path}", len(out))
