"""The session transcript: append-only JSONL, one line per message, written only at turn boundaries.

Each line is a JSON object with ``id``, ``parentId`` (the previous line's id, ``None`` for the first) and ``type``:

- ``"session"``: a session (one process run) started; ``{"n": 3, "dialect": "openai", "model": ...}``.
- ``"message"``: one wire message in the session's dialect (``{"message": {...}}``), hidden reasoning included.
- ``"turn_end"``: the commit mark of a turn: every line before it is one finished turn.

A turn is written as one ``write()`` of all its lines ending with ``turn_end``, then flushed and fsynced, so a
crash leaves at most one unfinished turn at the end of the file. :meth:`Transcript.load` keeps everything up to
the last ``turn_end``; a torn last line (no newline) and any complete lines after the last ``turn_end`` are
moved to ``<name>.torn`` (appended, with a header line) and cut from the transcript, so later appends start clean.
The system prompt is never stored.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snapglyph.errors import FormatError

__all__ = ["LoadResult", "Transcript"]


@dataclass
class LoadResult:
    """What :meth:`Transcript.load` found.

    Attributes
    ----------
    messages : list of dict
        The wire messages of every finished turn, in order.
    sessions : int
        Sessions recorded so far.
    turns : int
        Finished turns.
    set_aside : int
        Bytes moved to the ``.torn`` file (a torn line and/or an unfinished turn); 0 when the file was clean.
    last_id : str or None
        Id of the last kept line (the next line's ``parentId``).
    meta : dict
        The last session line (dialect, model).
    """

    messages: list[dict] = field(default_factory=list)
    sessions: int = 0
    turns: int = 0
    set_aside: int = 0
    last_id: str | None = None
    meta: dict = field(default_factory=dict)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Transcript:
    """An append-only JSONL transcript file.

    Parameters
    ----------
    path : str or path
        The file; created (with its folder) on the first write.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.last_id: str | None = None

    def load(self) -> LoadResult:
        """Read the transcript, recovering from a crash (see the module docstring); a missing file is empty.

        Returns
        -------
        LoadResult

        Raises
        ------
        FormatError
            If the file is not a transcript (its first line is no transcript line, an object with ``id``,
            ``parentId`` and a ``type`` of this module; the file is left as it is), or
            a complete line before the last ``turn_end`` is not valid JSON (real corruption, not a crash).
        """
        res = LoadResult()
        if not self.path.exists():
            return res
        data = self.path.read_bytes()
        self._check_is_transcript(data)
        end = data.rfind(b"\n") + 1                      # bytes after the last newline: a torn line
        lines = data[:end].split(b"\n")[:-1] if end else []
        entries: list[dict] = []
        commit_bytes, commit_index, offset = 0, 0, 0
        for i, raw in enumerate(lines):
            offset += len(raw) + 1
            try:
                e = json.loads(raw)
            except ValueError:
                # A complete but unparsable line can only be the crash's own partial batch if no commit follows.
                if any(b'"turn_end"' in ln for ln in lines[i + 1:]):
                    raise FormatError(f"transcript line {i + 1} is not valid JSON", path=str(self.path)) from None
                break
            entries.append(e)
            if e.get("type") in ("turn_end", "session"):
                commit_bytes, commit_index = offset, len(entries)
        kept = entries[:commit_index]
        pending: list[dict] = []
        for e in kept:
            t = e.get("type")
            if t == "message":
                pending.append(e["message"])
            elif t == "turn_end":
                res.messages.extend(pending)
                pending = []
                res.turns += 1
            elif t == "session":
                res.sessions += 1
                res.meta = {k: v for k, v in e.items() if k not in ("id", "parentId", "type")}
        res.last_id = kept[-1]["id"] if kept else None
        if commit_bytes < len(data):
            res.set_aside = len(data) - commit_bytes
            with open(self.path.with_name(self.path.name + ".torn"), "ab") as f:
                f.write(f"# set aside {time.strftime('%Y-%m-%dT%H:%M:%S')} from byte {commit_bytes}\n".encode())
                f.write(data[commit_bytes:] + b"\n")
                f.flush()
                os.fsync(f.fileno())
            with open(self.path, "r+b") as f:
                f.truncate(commit_bytes)
                f.flush()
                os.fsync(f.fileno())
        self.last_id = res.last_id
        return res

    def _check_is_transcript(self, data: bytes) -> None:
        """Refuse a file that is not a transcript (a precious.json given by mistake): recovery would move it aside."""
        if not data:
            return
        nl = data.find(b"\n")
        if nl < 0:  # a first line torn by a crash: a prefix of the session line _write writes
            ok = data.startswith(b'{"id":"')
        else:
            try:
                first = json.loads(data[:nl])
            except ValueError:
                first = None
            ok = (isinstance(first, dict) and first.get("type") in ("session", "message", "turn_end")
                  and "id" in first and "parentId" in first)
        if not ok:
            raise FormatError(f"{self.path} is not an agent_demo transcript (its first line is no transcript line); "
                              "it is left untouched: give --transcript a new file or one this demo wrote",
                              path=str(self.path))

    def _write(self, entries: list[dict]) -> None:
        new = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for e in entries:
            e = {"id": uuid.uuid4().hex[:12], "parentId": self.last_id, **e}
            self.last_id = e["id"]
            lines.append(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")
        with open(self.path, "ab") as f:
            f.write("".join(lines).encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        if new:
            _fsync_dir(self.path.parent)

    def start_session(self, n: int, **meta: Any) -> None:
        """Append a ``session`` line (session number ``n`` and metadata such as dialect and model)."""
        self._write([{"type": "session", "n": n, "ts": time.time(), **meta}])

    def append_turn(self, messages: list[dict], **meta: Any) -> None:
        """Append one finished turn: its wire messages, then the ``turn_end`` mark; one write, flushed, fsynced."""
        entries: list[dict] = [{"type": "message", "message": m} for m in messages]
        entries.append({"type": "turn_end", "ts": time.time(), **meta})
        self._write(entries)
