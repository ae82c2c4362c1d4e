"""Reader for Claude Code session JSONL (``~/.claude/projects/*/<session>.jsonl``).

An append-only log of entries linked into a tree by ``uuid``/``parentUuid``; the conversation is the active branch:
the path from the last message entry back to the root (see :func:`read_claude_code`).
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part
from .anthropic import (
    anthropic_block,  # Claude Code lines hold Anthropic content blocks
)
from .common import CallNames, ReadResult, mark_typed

__all__ = [
    "is_claude_code",
    "read_claude_code",
]


def is_claude_code(entries: list[dict]) -> bool:
    """Whether parsed JSONL entries look like a Claude Code session (user/assistant entries with uuids).

    Examples
    --------
    >>> is_claude_code([{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}])
    True
    >>> is_claude_code([{"type": "message", "id": "e1", "message": {"role": "user", "content": "hi"}}])
    False
    """
    return any(e.get("type") in ("user", "assistant") and "uuid" in e and isinstance(e.get("message"), dict)
               for e in entries)


def _cc_branch(entries: list[dict]) -> tuple[list[int], dict]:
    """Indices (file order) of the entries of the active branch, and facts about how it was found."""
    msg_idx = [i for i, e in enumerate(entries) if e.get("type") in ("user", "assistant")
               and isinstance(e.get("message"), dict)]
    if not msg_idx:
        return [], {}
    main = [i for i in msg_idx if not entries[i].get("isSidechain")]
    leaf = (main or msg_idx)[-1]
    on, facts = _cc_chain(entries, leaf)
    facts["side_entries"] = _cc_add_side_entries(entries, msg_idx, on)
    if facts.pop("missing_parent") is not None:
        facts["fragment"] = True  # the first entry's parent lives in another file (e.g. a sub-agent log)
    msg_set = set(msg_idx)
    return sorted(j for j in on if j in msg_set), facts


def _cc_chain(entries: list[dict], leaf: int) -> tuple[set[int], dict]:
    """The entries on the parent chain from ``leaf`` back to the root, and facts: ``leaf_uuid``,
    ``compact_boundaries`` crossed, ``phantom_parents`` repaired, and ``missing_parent`` (where the chain left the
    file, else None)."""
    byu = {e["uuid"]: i for i, e in enumerate(entries) if isinstance(e.get("uuid"), str)}
    with_uuid = sorted(byu.values())
    side = bool(entries[leaf].get("isSidechain"))
    on: set[int] = set()
    facts: dict[str, Any] = {"leaf_uuid": entries[leaf].get("uuid"), "compact_boundaries": []}
    repairs: list[dict] = []
    i: int | None = leaf
    missing_parent = None
    while i is not None and i not in on:
        on.add(i)
        e = entries[i]
        if e.get("type") == "system" and e.get("subtype") == "compact_boundary":
            facts["compact_boundaries"].append({"uuid": e.get("uuid"), "timestamp": e.get("timestamp"),
                                                **(e.get("compactMetadata") or {})})
        parent = e.get("parentUuid") or e.get("logicalParentUuid")
        if not parent:
            break
        if parent not in byu:
            # A "phantom" parent (a link to an entry the file does not hold, a known Claude Code fault; or, in a
            # sub-agent log, the outer conversation's entry): the chain goes on at the entry before, in file order.
            j = _previous_entry(entries, with_uuid, i, on, side)
            if j is None:
                missing_parent = parent
                break
            repairs.append({"line": i + 1, "missing_parent": parent, "continued_at_line": j + 1})
            i = j
            continue
        i = byu[parent]
    facts["phantom_parents"] = repairs
    facts["missing_parent"] = missing_parent
    return on, facts


def _cc_add_side_entries(entries: list[dict], msg_idx: list[int], on: set[int]) -> int:
    """Add to ``on`` (in place) the side entries of parallel tool calls; returns how many were added.

    Claude Code writes one line per content block and chains them, so parallel tool calls leave side branches:
    blocks of an assistant message already on the branch, and tool results answering tool_use blocks on it.
    Repeated until nothing more joins (an added result can make room for none, an added block for more results).
    """
    msg_set = set(msg_idx)

    def msg_id(j: int) -> str | None:
        return entries[j]["message"].get("id") if entries[j].get("type") == "assistant" else None

    added = 0
    while True:
        ids = {msg_id(j) for j in on} - {None}
        calls, answered = Counter(), Counter()  # counts: a repeated call id has as many results to take
        for j in on:
            c = entries[j]["message"].get("content") if j in msg_set else None
            for b in c if isinstance(c, list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    calls[b.get("id")] += 1
                elif isinstance(b, dict) and b.get("type") == "tool_result":
                    answered[b.get("tool_use_id")] += 1
        new = set()
        for j in msg_idx:
            if j in on:
                continue
            if msg_id(j) is not None and msg_id(j) in ids:
                new.add(j)
                continue
            c = entries[j]["message"].get("content")
            if (entries[j].get("type") == "user" and isinstance(c, list) and c and all(
                    isinstance(b, dict) and b.get("type") == "tool_result"
                    and answered[b.get("tool_use_id")] < calls[b.get("tool_use_id")] for b in c)):
                new.add(j)
        if not new:
            return added
        on |= new
        added += len(new)


def _previous_entry(entries: list[dict], with_uuid: list[int], i: int, on: set[int], side: bool) -> int | None:
    """The nearest entry before ``entries[i]`` (file order) with a uuid, not on the branch yet, on the same side
    (sidechain or not) as the branch; None when there is none."""
    for k in range(bisect.bisect_left(with_uuid, i) - 1, -1, -1):
        j = with_uuid[k]
        if j not in on and bool(entries[j].get("isSidechain")) == side:
            return j
    return None


def _cc_blocks(content: Any, names: CallNames, path: str | None, where: str) -> list[Part]:
    if isinstance(content, str):
        return [Part(kind="text", text=content)]
    if not isinstance(content, list):
        raise FormatError(f"{where}: message content is a {type(content).__name__}", path=path)
    return [anthropic_block(b if isinstance(b, dict) else {"type": "text", "text": str(b)}, path, where, names)
            for b in content]


def _cc_assistant(e: dict, parts: list[Part], by_msg_id: dict[str, Message]) -> Message | None:
    """An assistant line as a new message, or None when it continues the message of the same ``message.id``
    (its parts, uuid, ``stop_reason`` and ``usage`` then join that one)."""
    m = e["message"]
    mid = m.get("id")
    if mid and mid in by_msg_id:
        prev = by_msg_id[mid]
        prev.parts += parts
        prev.meta["uuids"].append(e.get("uuid"))
        for k in ("stop_reason", "usage"):
            if m.get(k) is not None:
                prev.meta[k] = m[k]
        return None
    meta = {"uuids": [e.get("uuid")], "parent_uuid": e.get("parentUuid"), "timestamp": e.get("timestamp"),
            "message_id": mid, "model": m.get("model"), "stop_reason": m.get("stop_reason"), "usage": m.get("usage")}
    if e.get("requestId"):
        meta["request_id"] = e["requestId"]
    if e.get("isApiErrorMessage"):
        meta["api_error"] = True
    msg = Message(0, "assistant", parts, meta)
    if mid:
        by_msg_id[mid] = msg
    return msg


#: The fields of a user line that say Claude Code, not a person, wrote it (``isMeta``: hook and command context;
#: ``isCompactSummary``: its continuation summary; ``isVisibleInTranscriptOnly``: shown, never typed), and the names
#: they get in the message's meta.
_NOT_TYPED = (("isCompactSummary", "compact_summary"), ("isMeta", "is_meta"),
              ("isVisibleInTranscriptOnly", "transcript_only"))


def _cc_user(e: dict, parts: list[Part]) -> Message:
    """A user line: role ``tool`` (tool results first) when it holds tool results, else ``user``; its text parts
    marked typed (:func:`~snapglyph.readers.common.mark_typed`) unless a field of :data:`_NOT_TYPED` is set, the
    line is a sub-agent's (``isSidechain``: its user is the agent that started it), or the text is one of Claude
    Code's wrappers (:data:`~snapglyph.readers.common.HARNESS_RULES`)."""
    meta = {"uuids": [e.get("uuid")], "parent_uuid": e.get("parentUuid"), "timestamp": e.get("timestamp")}
    for src, dst in _NOT_TYPED:
        if e.get(src):
            meta[dst] = True
    mark_typed(parts, not e.get("isSidechain") and not any(e.get(src) for src, _ in _NOT_TYPED))
    if any(p.kind == "tool_result" for p in parts):
        results = [p for p in parts if p.kind == "tool_result"]
        rest = [p for p in parts if p.kind != "tool_result"]
        return Message(0, "tool", results + rest, meta)
    return Message(0, "user", parts, meta)


def _cc_meta(entries: list[dict], idx: list[int], facts: dict) -> dict:
    """The session's facts: ids, entry counts, skipped entry kinds, titles, branch facts and repair sentences."""
    skipped = Counter(e.get("type", "?") for e in entries
                      if not (e.get("type") in ("user", "assistant") and isinstance(e.get("message"), dict)))
    first = next((e for e in entries if e.get("sessionId")), {})
    meta = {"session_id": first.get("sessionId"), "cwd": first.get("cwd"), "version": first.get("version"),
            "git_branch": first.get("gitBranch"), "entries": len(entries),
            "message_entries": sum(1 for e in entries if e.get("type") in ("user", "assistant")
                                   and isinstance(e.get("message"), dict)),
            "branch_entries": len(idx), "skipped": dict(skipped),
            "summaries": [e.get("summary") for e in entries if e.get("type") == "summary"], **facts}
    meta["repairs"] = [f"line {r['line']}: its parent {r['missing_parent']} is not in the file (a phantom parent); "
                       f"the conversation continues at line {r['continued_at_line']}, the entry before it"
                       for r in facts["phantom_parents"]]
    return meta


def read_claude_code(entries: list[dict], path: str | None = None) -> ReadResult:
    """Read a Claude Code session (``~/.claude/projects/*/<session>.jsonl``), already parsed into entries.

    The conversation is the active branch: from the last user/assistant entry (the last non-sidechain one where
    there are any), follow ``parentUuid`` back, crossing compaction boundaries through ``logicalParentUuid``, so
    the history before a ``/compact`` stays and Claude Code's compaction summary (``isCompactSummary``) is an
    ordinary user message in place. A link to a parent the file does not hold (a "phantom" parent, a known Claude
    Code fault) is crossed by file order: the chain goes on at the nearest earlier entry not on it yet; each such
    repair is listed in ``meta["phantom_parents"]`` and, as a sentence, in ``meta["repairs"]`` (the loader's
    :attr:`Transcript.notes`). Where no earlier entry is left (a sub-agent log whose parents live in the outer
    session's file), ``meta["fragment"]`` is True. Side entries of parallel tool calls (later blocks of a message on the branch,
    results answering its calls) are added back. Assistant lines sharing one ``message.id`` are merged into one
    assistant message. Non-message entries (``progress``, ``system`` hook/boundary/duration lines,
    ``file-history-snapshot``, ``queue-operation``) are skipped and counted in ``meta["skipped"]``; ``summary``
    entries (session titles, no place in the tree) go to ``meta["summaries"]``. ``toolUseResult`` duplicates the
    tool result content and is dropped. A user line's text is marked typed by a person (``Part.meta["typed"]``)
    unless the line is ``isMeta``, ``isCompactSummary``, ``isVisibleInTranscriptOnly`` or ``isSidechain`` (a
    sub-agent's, prompted by the agent) or its text is a wrapper
    Claude Code writes (``<command-name>``, ``<local-command-stdout>``, ``<system-reminder>``,
    ``<task-notification>``, "[Request interrupted by user]", ...: the fields and wrappers as the session files
    in ../shared/data hold them; Claude Code's source is not public).

    Parameters
    ----------
    entries : list of dict
        The parsed JSONL lines, in file order.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        No tools (a session stores none), the last model an assistant line names, and the facts above.

    Raises
    ------
    FormatError
        Message content of the wrong type.

    Examples
    --------
    >>> lines = [{"type": "summary", "summary": "Listing", "leafUuid": "u2"},
    ...     {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "ls?"}},
    ...     {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "model": "claude-x",
    ...      "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]}},
    ...     {"type": "user", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user",
    ...      "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]}}]
    >>> msgs, _, model, meta = read_claude_code(lines)
    >>> len(msgs), [m.role for m in msgs], model, meta["skipped"]
    (3, ['user', 'assistant', 'tool'], 'claude-x', {'summary': 1})
    >>> msgs[0].parts[0].meta["typed"]
    True
    """
    idx, facts = _cc_branch(entries)
    out: list[Message] = []
    names = CallNames()
    by_msg_id: dict[str, Message] = {}
    model = None
    for j in idx:
        e = entries[j]
        m = e["message"]
        parts = _cc_blocks(m.get("content"), names, path, f"line {j + 1} ({e.get('type')})")
        if e["type"] == "assistant":
            if m.get("model") and m.get("model") != "<synthetic>":
                model = m["model"]
            msg = _cc_assistant(e, parts, by_msg_id)
            if msg is not None:
                out.append(msg)
        else:
            out.append(_cc_user(e, parts))
    return ReadResult(out, [], model, _cc_meta(entries, idx, facts))
