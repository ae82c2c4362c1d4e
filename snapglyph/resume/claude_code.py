"""Claude Code sessions written back: the source's own records of the head and the tail, a new user record holding
the page images and the snapshot text between them, all re-linked under a new session id.

Claude Code (``~/.claude/projects/<project>/<session id>.jsonl``) rebuilds a conversation from the ``parentUuid``
chain of its records; each record needs ``type``, ``uuid``, ``parentUuid``, ``sessionId``, ``timestamp`` and
``message`` (what a pinned Claude Code 2.1.332 resumed, tests/test_real_clients.py), and consecutive user records
become one message. The head's and tail's records are copied as the source holds them (``cwd``, ``version``,
``gitBranch``, ``message``, ``toolUseResult``, ``requestId``...), with new ``uuid`` values and every link to an old
one (``parentUuid``, ``logicalParentUuid``, ``sourceToolAssistantUUID``) mapped to the new ones; records that are
no message (progress, file-history snapshots, summaries) are left out.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from .._files import write_atomic
from ..errors import InputError
from ..readers.decode import decode_text, jsonl_entries
from .common import Resumed, now_stamp, snapshot_turn

__all__ = ["write_claude_code"]

_LINKS = ("parentUuid", "logicalParentUuid", "sourceToolAssistantUUID")


def _strip_cache(blocks: list[dict]) -> list[dict]:
    """The snapshot's content blocks without ``cache_control`` (Claude Code sets its own, at most four a request)."""
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]


def _kept_records(transcript: Any, result: Any, src: Path) -> tuple[list[dict], list[dict]]:
    """The source records of the head's and of the tail's messages, in file order."""
    byid = {m.id: m for m in transcript.messages}
    def uuids(ids: list[int]) -> set[str]:
        return {u for i in ids for u in (byid[i].meta.get("uuids") or []) if i in byid}
    head, tail = uuids(result.head_ids), uuids(result.tail_ids)
    text, _ = decode_text(src.read_bytes(), str(src), str(src))
    entries, _ = jsonl_entries(text, src.name, str(src))
    pick = lambda keep: [e for e in entries if e.get("uuid") in keep and e.get("type") in ("user", "assistant")]
    return pick(head), pick(tail)


def _snapshot_record(result: Any, like: dict, timestamp: str) -> dict:
    """The new user record: the request's snapshot turn (pages, then the snapshot text)."""
    msgs = result.request["messages"]
    turn = msgs[snapshot_turn(msgs)]
    rec = {k: like[k] for k in ("isSidechain", "userType", "cwd", "version", "gitBranch") if k in like}
    return {"parentUuid": None, **rec, "type": "user",
            "message": {"role": "user", "content": _strip_cache(turn["content"])}, "timestamp": timestamp}


def write_claude_code(transcript: Any, result: Any, src: Path) -> Resumed:
    """Write the new Claude Code session beside ``src``; returns it with ``claude --resume <id>``.

    Raises
    ------
    InputError
        Where the source holds none of the tail's records (a session this writer cannot map back).
    OSError
        Where the folder cannot be written.

    Examples
    --------
    >>> # tests/test_resume.py writes and re-reads real sessions; the real Claude Code resumes them there
    >>> callable(write_claude_code)
    True
    """
    head, tail = _kept_records(transcript, result, src)
    if not tail:
        raise InputError(f"{src}: none of the tail's records was found in the file, so no session was written")
    sid = str(uuid.uuid4())
    like = (head or tail)[-1] if head else tail[0]
    snap = _snapshot_record(result, like, (head[-1] if head else tail[0]).get("timestamp") or now_stamp())
    new: dict[str, str] = {}
    out: list[dict] = []
    for rec in [*head, snap, *tail]:
        rec = dict(rec)
        old = rec.get("uuid")
        rec["uuid"] = str(uuid.uuid4())
        if old:
            new[old] = rec["uuid"]
        for k in _LINKS:
            if isinstance(rec.get(k), str) and rec[k] in new:
                rec[k] = new[rec[k]]
        rec["parentUuid"] = out[-1]["uuid"] if out else None
        rec.pop("logicalParentUuid", None)
        rec["sessionId"] = sid
        rec["isSidechain"] = False
        out.append(rec)
    path = src.with_name(f"{sid}.jsonl")
    write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    return Resumed(path, sid, f"claude --resume {sid}", len(out))
