"""A Claude Code session rendered as it is read: the branch found from slim records, the messages made in a second
pass over the file, one at a time.

The active branch of a Claude Code session is known only once the last record is read (it is the path back from
the last message), so the reader holds every record. :func:`plan_session` reads the file once keeping of each record
only what finding the branch, cutting the file into conversations and the session's facts read (every field but the
message, and of the message its id and its content blocks' types and ids), and checks that every message record
reads; :class:`ClaudeCodeFileDocument` then reads the file again and makes the branch's messages exactly as
:func:`~snapglyph.readers.claude_code.read_claude_code` makes them, handing on each once its last line (the lines
sharing its ``message.id``) is read. Its segments are those of the loaded transcript (tested).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, NamedTuple

from ..errors import FormatError
from ..model.document import Document, Segment, build_document
from ..model.messages import Message
from . import table
from .claude_code import _cc_assistant, _cc_blocks, _cc_branch, _cc_meta, _cc_user
from .common import CallNames
from .decode import iter_jsonl, jsonl_entries
from .streamed import FileLines, finished, open_stream

__all__ = ["ClaudeCodeFileDocument", "SessionPlan", "plan_session"]

_BLOCK_KEYS = ("type", "id", "tool_use_id")
#: The fields of a record the first pass keeps: those the branch (:func:`~snapglyph.readers.claude_code._cc_branch`),
#: the detection, the cut into conversations and the session's facts read; the message is kept slim.
_FIELDS = ("type", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "subtype", "compactMetadata",
           "timestamp", "sessionId", "cwd", "version", "gitBranch", "summary", "leafUuid", "message")


class SessionPlan(NamedTuple):
    """What the first pass learned: the records on the branch (file order), the last record of each assistant
    ``message.id`` on it, and the notes ``load`` would give (torn or run-together lines, phantom parents)."""

    branch: frozenset[int]
    last_of: dict[str, int]
    notes: list[str]


def _reads(e: dict, path: str) -> bool:
    """Whether the message record ``e`` reads as the reader reads it (with throwaway call names)."""
    try:
        parts = _cc_blocks(e["message"].get("content"), CallNames(), path, "")
        _cc_assistant(e, parts, {}) if e["type"] == "assistant" else _cc_user(e, parts)
    except Exception:  # noqa: BLE001 - any fault: the file is loaded whole, where its error is made
        return False
    return True


def _slim(e: dict, path: str, bad: list[int]) -> dict:
    """The fields of record ``e`` the branch, the split and the facts read; a message record that does not read
    is counted in ``bad``."""
    out = {k: e[k] for k in _FIELDS if k in e}
    m = e.get("message")
    if not (e.get("type") in ("user", "assistant") and isinstance(m, dict)):
        return out
    if not _reads(e, path):
        bad.append(1)
    c = m.get("content")
    if isinstance(c, list):
        c = [{k: b[k] for k in _BLOCK_KEYS if k in b} if isinstance(b, dict) else b for b in c]
    elif isinstance(c, str):
        c = ""
    out["message"] = {"id": m.get("id"), "content": c}
    return out


def plan_session(path: str | os.PathLike) -> SessionPlan | None:
    """The :class:`SessionPlan` of a Claude Code session file of one conversation whose every message record
    reads; None for anything else (``load`` reads it whole, with its notes and errors).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> recs = [{"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "hi"}},
    ...         {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "content": []}}]
    >>> _ = p.write_text("".join(json.dumps(r) + "\\n" for r in recs))
    >>> plan_session(p)
    SessionPlan(branch=frozenset({0, 1}), last_of={'m1': 1}, notes=[])
    """
    p = Path(path)
    got = open_stream(p)
    if got is None or got[0] != "jsonl":
        return None
    sp, bad = str(p), []
    try:
        entries, notes = jsonl_entries(got[1], p.name, sp, each=lambda e: _slim(e, sp, bad))
        src = table.Source("jsonl", entries, p.name, sp)
        spec = table.detect(src)
        first = next(s for s in table.TABLE if "jsonl" in s.info.kinds)
        if bad or spec is None or spec.name != "claude-code" or first is not spec:
            return None
        if len(table.guard(spec.split, src, path=sp)) != 1:  # several conversations: load chooses, with a note
            return None
        idx, facts = table.guard(_cc_branch, entries, path=sp, what=spec.info.noun)
        repairs = _cc_meta(entries, idx, facts)["repairs"]
    except FormatError:
        return None
    last_of = {}
    for j in idx:
        mid = entries[j]["message"].get("id") if entries[j]["type"] == "assistant" else None
        if mid:
            last_of[mid] = j
    return SessionPlan(frozenset(idx), last_of, notes + repairs)


def _messages(path: Path, plan: SessionPlan) -> Iterator[Message]:
    """The branch's messages in order, each handed on once the last line that joins it is read."""
    sp = str(path)
    names = CallNames()
    by_msg_id: dict[str, Message] = {}
    queue: list[tuple[Message, int]] = []  # made, and the record after which nothing joins it
    for j, e in enumerate(iter_jsonl(FileLines(path), path.name, sp, [])):
        if j in plan.branch:
            m = e["message"]
            parts = _cc_blocks(m.get("content"), names, sp, f"line {j + 1} ({e.get('type')})")
            msg = _cc_assistant(e, parts, by_msg_id) if e["type"] == "assistant" else _cc_user(e, parts)
            if msg is not None:
                mid = m.get("id") if e["type"] == "assistant" else None
                queue.append((msg, plan.last_of.get(mid, j) if mid else j))
        while queue and queue[0][1] <= j:
            yield queue.pop(0)[0]
    for msg, _ in queue:
        yield msg


class ClaudeCodeFileDocument(Document):
    """The :class:`~snapglyph.model.document.Document` of a Claude Code session file, read lazily: each pass over
    :attr:`segments` reads the file again and makes the branch's messages one at a time.

    Parameters
    ----------
    path : str or path-like
    plan : SessionPlan
        The file's :func:`plan_session`.
    header_row : bool
        Headers on a row of their own (the ``lines`` mode).

    Attributes
    ----------
    notes : list of str
        What ``load`` would say it repaired (the command line prints them).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> recs = [{"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "hi"}},
    ...         {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "content": [
    ...          {"type": "text", "text": "hello"}]}}]
    >>> _ = p.write_text("".join(json.dumps(r) + "\\n" for r in recs))
    >>> [s.text for s in ClaudeCodeFileDocument(p, plan_session(p)).segments]
    [' #0 user ', 'hi', ' #1 assistant ', 'hello']
    """

    def __init__(self, path: str | os.PathLike, plan: SessionPlan, header_row: bool = False) -> None:
        self.path, self.plan, self.header_row = Path(path), plan, header_row
        self.notes = list(plan.notes)

    def __repr__(self) -> str:
        return f"ClaudeCodeFileDocument({str(self.path)!r})"

    @property
    def segments(self) -> Iterator[Segment]:  # type: ignore[override]
        """The document's segments, message by message (a fresh pass over the file on each access)."""
        for m in finished(_messages(self.path, self.plan)):  # every record read in the plan's pass
            yield from build_document([m], header_row=self.header_row).segments
