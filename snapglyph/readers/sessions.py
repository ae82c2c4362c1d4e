"""Files that hold several conversations one after another: where each starts, and which one is read.

A file may hold more than one session: two roots in one Claude Code file, pi or Codex sessions concatenated, an
OpenHands evaluation output (one conversation per instance). Each such format's row of
:data:`~snapglyph.readers.table.TABLE` has a ``split`` function that cuts the parsed records where a conversation
starts; :func:`choose` takes the last by default (or the ``conversation``-th, counted from 1) and says so in a note.
Reading them as one conversation would join unrelated sessions, or start one with an assistant turn.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import FormatError

__all__ = ["choose", "claude_label", "codex_label", "copilot_label", "gemini_label", "pi_label", "split_claude_code",
           "split_codex", "split_copilot", "split_gemini_cli", "split_pi", "starts"]


def starts(entries: list[dict], is_start) -> list[int]:
    """The indices where a conversation starts: 0, then each later record ``is_start(entry)`` claims (a record
    before which no conversation has begun is no start of its own).

    Examples
    --------
    >>> starts([{"t": "s"}, {"t": "m"}, {"t": "s"}, {"t": "m"}], lambda e: e["t"] == "s")
    [0, 2]
    """
    cuts = [0]
    for i, e in enumerate(entries):
        if i > 0 and is_start(e):
            cuts.append(i)
    return cuts


def _segments(entries: list[dict], cuts: list[int]) -> list[list[dict]]:
    return [entries[a:b] for a, b in zip(cuts, cuts[1:] + [len(entries)])]


def split_claude_code(entries: list[dict]) -> list[list[dict]]:
    """A Claude Code file's conversations: a new one at each root record (one with a ``uuid`` whose ``parentUuid``
    is null, not a sidechain, no ``logicalParentUuid``: Claude Code 2.1 roots a session at its first record,
    often a ``progress`` one; a ``compact_boundary`` keeps its ``logicalParentUuid``) after the first record.

    Examples
    --------
    >>> e = [{"type": "user", "uuid": "a", "parentUuid": None}, {"type": "assistant", "uuid": "b", "parentUuid": "a"},
    ...      {"type": "user", "uuid": "c", "parentUuid": None}]
    >>> [len(s) for s in split_claude_code(e)]
    [2, 1]
    """
    first = next((i for i, e in enumerate(entries) if "uuid" in e), None)
    if first is None:
        return [entries]
    root = lambda e: ("uuid" in e and "parentUuid" in e and e["parentUuid"] is None and not e.get("isSidechain")
                      and not e.get("logicalParentUuid"))
    cuts = [0] + [i for i in range(first + 1, len(entries)) if root(entries[i])]
    out: list[list[dict]] = []
    for seg in _segments(entries, cuts):  # a root with no message after it stays with the conversation before
        if out and not any(e.get("type") in ("user", "assistant") for e in seg):
            out[-1].extend(seg)
        else:
            out.append(seg)
    return out


def split_codex(entries: list[dict]) -> list[list[dict]]:
    """A Codex file's rollouts: a new one at each ``session_meta`` of another id that follows response items (a
    fork's first lines repeat its parent's ``session_meta`` before any item, and stay with it).

    Examples
    --------
    >>> e = [{"type": "session_meta", "payload": {"id": "a"}}, {"type": "response_item", "payload": {}},
    ...      {"type": "session_meta", "payload": {"id": "b"}}, {"type": "response_item", "payload": {}}]
    >>> [len(s) for s in split_codex(e)]
    [2, 2]
    """
    cuts, ids, items = [0], set(), False
    for i, e in enumerate(entries):
        p = e.get("payload") if isinstance(e.get("payload"), dict) else {}
        if e.get("type") == "session_meta":
            if items and p.get("id") not in ids:
                cuts.append(i)
                items = False
            ids.add(p.get("id"))
        elif e.get("type") == "response_item":
            items = True
    return _segments(entries, cuts)


def _header_split(entries: list[dict], is_header) -> list[list[dict]]:
    cuts = [0]
    seen_message = False
    for i, e in enumerate(entries):
        if is_header(e):
            if seen_message:
                cuts.append(i)
                seen_message = False
        else:
            seen_message = True
    return _segments(entries, cuts)


def split_pi(entries: list[dict]) -> list[list[dict]]:
    """A pi file's sessions: a new one at each ``session`` header that follows other records.

    Examples
    --------
    >>> e = [{"type": "session", "id": "a"}, {"type": "message"}, {"type": "session", "id": "b"}, {"type": "message"}]
    >>> [s[0]["id"] for s in split_pi(e)]
    ['a', 'b']
    """
    return _header_split(entries, lambda e: e.get("type") == "session")


def split_gemini_cli(entries: list[dict]) -> list[list[dict]]:
    """A Gemini CLI append log's sessions: a new one at each metadata line (``sessionId``, no record ``id``) that
    follows records (a ``$set`` line is no record).

    Examples
    --------
    >>> e = [{"sessionId": "a"}, {"id": "m1", "type": "user"}, {"sessionId": "b"}, {"id": "m1", "type": "user"}]
    >>> [s[0]["sessionId"] for s in split_gemini_cli(e)]
    ['a', 'b']
    """
    cuts, seen = [0], False
    for i, e in enumerate(entries):
        if "sessionId" in e and "id" not in e and "type" not in e:
            if seen:
                cuts.append(i)
                seen = False
        elif "id" in e and "type" in e:
            seen = True
    return _segments(entries, cuts)


def gemini_label(part: list[dict]) -> str:
    """A Gemini CLI conversation's label: its session id.

    Examples
    --------
    >>> gemini_label([{"sessionId": "g1"}])
    'session g1'
    """
    return f"session {_first(part, lambda e: e.get('sessionId') if 'id' not in e else None)}"


def split_copilot(entries: list[dict]) -> list[list[dict]]:
    """A Copilot CLI file's sessions: a new one at each ``session.start`` event that follows other events.

    Examples
    --------
    >>> e = [{"type": "session.start"}, {"type": "user.message"}, {"type": "session.start"}]
    >>> len(split_copilot(e))
    2
    """
    return _header_split(entries, lambda e: e.get("type") == "session.start")


def _first(entries: list[dict], key: Callable[[dict], Any]) -> str:
    """The first non-empty ``key(entry)`` of ``entries`` as text, else ``"?"``."""
    for e in entries:
        try:
            v = key(e)
        except (AttributeError, TypeError, KeyError):
            v = None
        if v:
            return str(v)
    return "?"


def claude_label(part: list[dict]) -> str:
    """A Claude Code conversation's label: its session id and first time.

    Examples
    --------
    >>> claude_label([{"type": "user", "sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z"}])
    'session s1 from 2026-12-01T10:00:00Z'
    """
    return (f"session {_first(part, lambda e: e.get('sessionId'))} from "
            f"{_first(part, lambda e: e.get('timestamp'))}")


def codex_label(part: list[dict]) -> str:
    """A Codex conversation's label: its rollout id.

    Examples
    --------
    >>> codex_label([{"type": "session_meta", "payload": {"id": "r1"}}])
    'rollout r1'
    """
    return f"rollout {_first(part, lambda e: e['payload']['id'] if e.get('type') == 'session_meta' else None)}"


def copilot_label(part: list[dict]) -> str:
    """A Copilot CLI conversation's label: its session id.

    Examples
    --------
    >>> copilot_label([{"type": "session.start", "data": {"sessionId": "s1"}}])
    'session s1'
    """
    return f"session {_first(part, lambda e: e['data']['sessionId'] if e.get('type') == 'session.start' else None)}"


def pi_label(part: list[dict]) -> str:
    """A pi conversation's label: its session id.

    Examples
    --------
    >>> pi_label([{"type": "session", "id": "p1"}])
    'session p1'
    """
    return f"session {_first(part, lambda e: e.get('id') if e.get('type') == 'session' else None)}"


def choose(parts: list[Any], labels: list[str], conversation: int | None, noun: str,
           path: str | None) -> tuple[Any, str | None]:
    """The conversation read from a file holding ``parts`` (the ``conversation``-th, counted from 1; default the
    last) and the note that says so (None where the file holds one and none was asked for).

    Raises
    ------
    FormatError
        A ``conversation`` out of range: the error lists every conversation by number and label.

    Examples
    --------
    >>> part, note = choose(["a", "b"], ["session s1", "session s2"], None, "Claude Code session", None)
    >>> print(part, note)  # doctest: +NORMALIZE_WHITESPACE
    b this file holds 2 Claude Code conversations (1: session s1, 2: session s2); read the last, 2: session s2
    (choose one with --conversation N)
    >>> try:
    ...     choose(["a"], ["session s1"], 3, "pi session", "x.jsonl")
    ... except FormatError as e:
    ...     print(e)
    there is no conversation 3 in this file: it holds 1 (1: session s1)
    """
    listed = ", ".join(f"{i}: {lab}" for i, lab in enumerate(labels, 1))
    if conversation is not None and not 1 <= conversation <= len(parts):
        raise FormatError(f"there is no conversation {conversation} in this file: it holds {len(parts)} ({listed})",
                          path=path)
    if conversation is None and len(parts) == 1:
        return parts[0], None
    k = len(parts) if conversation is None else conversation
    which = "the last" if conversation is None else "conversation"
    noun = noun.removesuffix(" session").removesuffix(" rollout")
    note = (f"this file holds {len(parts)} {noun} conversations ({listed}); read {which}, {k}: {labels[k - 1]}"
            + (" (choose one with --conversation N)" if conversation is None else ""))
    return parts[k - 1], note
