"""Gemini CLI sessions written back: a new metadata line, the source's own records of the head and the tail, and a
new ``user`` record whose content holds the page images (``inlineData`` parts) and the snapshot text between them.

Gemini CLI (``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``; the append log of
``packages/core/src/services/chatRecordingService.ts`` in github.com/google-gemini/gemini-cli, as the pinned
0.61.0 writes it: a metadata line ``{sessionId, projectHash, startTime, lastUpdated, kind}``, then records
``{id, timestamp, type, content, ...}`` where a record written again under its id replaces the earlier one)
resumes a session of the project by its id (``gemini --resume <uuid>``, ``packages/cli/src/utils/
sessionUtils.ts``). Each head and tail record is the last one the source wrote under its id (what the reader read),
copied as it is; ``$set`` and ``$rewindTo`` lines and records that are no message are left out. A legacy session
(one JSON document with ``messages``) is written back as one, too.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from .._files import write_atomic
from ..errors import InputError
from ..readers.decode import decode_text, jsonl_entries
from .common import Resumed, now_stamp, request_turns, snapshot_blocks, snapshot_turn, turn_blocks

__all__ = ["write_gemini_cli"]


def _records(src: Path) -> tuple[dict, list[dict], bool]:
    """The source's metadata, its message records (the last of each id, in first-written order) and whether it is
    a legacy JSON document."""
    text, _ = decode_text(src.read_bytes(), str(src), str(src))
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return {k: v for k, v in doc.items() if k != "messages"}, doc["messages"], True
    entries, _ = jsonl_entries(text, src.name, str(src))
    meta = next((e for e in entries if "sessionId" in e and "id" not in e), {})
    last: dict[str, dict] = {}
    for e in entries:
        if isinstance(e.get("id"), str) and "type" in e:
            last[e["id"]] = e
    return meta, list(last.values()), False


def _snapshot_record(result: Any, stamp: str) -> dict:
    items = request_turns(result.request)
    turn = items[snapshot_turn(items)]
    parts = [{"inlineData": {"mimeType": mt, "data": data}} if kind == "image" else {"text": data}
             for kind, mt, data in snapshot_blocks(turn_blocks(turn))]
    return {"id": str(uuid.uuid4()), "timestamp": stamp, "type": "user", "content": parts}


def write_gemini_cli(transcript: Any, result: Any, src: Path) -> Resumed:
    """Write the new Gemini CLI session beside ``src``; returns it with ``gemini --resume <id>``.

    Raises
    ------
    InputError
        Where the source holds none of the tail's records.
    OSError
        Where the folder cannot be written.

    Examples
    --------
    >>> callable(write_gemini_cli)   # tests/test_resume.py writes one and the real Gemini CLI resumes it
    True
    """
    meta, records, legacy = _records(src)
    byid = {m.id: m for m in transcript.messages}
    ids = lambda keep: {byid[i].meta.get("record_id") for i in keep if i in byid} - {None}
    head_ids, tail_ids = ids(result.head_ids), ids(result.tail_ids)
    head = [r for r in records if r.get("id") in head_ids]
    tail = [r for r in records if r.get("id") in tail_ids]
    if not tail:
        raise InputError(f"{src}: none of the tail's records was found in the file, so no session was written")
    sid, stamp = str(uuid.uuid4()), now_stamp()
    new_meta = {**meta, "sessionId": sid, "startTime": stamp, "lastUpdated": stamp}
    body = [*head, _snapshot_record(result, stamp), *tail]
    name = f"session-{stamp[:16].replace(':', '-')}-{sid[:8]}.{'json' if legacy else 'jsonl'}"
    path = src.with_name(name)
    if legacy:
        data = json.dumps({**new_meta, "messages": body}, ensure_ascii=False, indent=2) + "\n"
    else:
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [new_meta, *body])
    write_atomic(path, data)
    return Resumed(path, sid, f"gemini --resume {sid}", len(body) + (0 if legacy else 1))
