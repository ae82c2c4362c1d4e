"""What a second pass needs: the conversation key of a store, and the source behind a compacted request.

A request ``snapglyph compact`` wrote holds three things that are not source text: the snapshot message (page
images standing for messages by id), pointers that stand for oversized parts of the newest messages (shown as
pages), and tail messages a dialect may have merged or renamed. :func:`expand_snapshots` puts the source back for
all three, from the :class:`~snapglyph.compaction.store.SourceStore`, so that every page is rendered again from source text.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Sequence

from ..errors import StoreError
from ..model.message_ids import format_ranges
from ..model.messages import LONE_SURROGATE, Message
from .store import SourceStore

__all__ = ["PASSTHROUGH", "bare_text", "conversation_key", "expand_snapshots"]

PASSTHROUGH = "passthrough"
"""The store's key of the source a passthrough sent whole (no snapshot): :func:`expand_snapshots` gives a request
read back from it its ids and exact sources again."""


_MADE = re.compile(r"\[(?:image removed|image not sent|image in an assistant message|document\b|file\b|"
                   r"\d+ image\(s\) returned by this tool)[^\]\n]*\]")
"""Text snapglyph itself writes in place of a part or beside one (the placeholders of
:mod:`snapglyph.providers.normalize` and :mod:`.image_fit`, the note on a tool's images in OpenAI chat, the line
naming an attachment, :func:`snapglyph.model.attachments.attachment_text`, which a dialect may send as its own
block): left out of a message's fingerprints, so a source and the request written from it give the same ones."""


def _ids_of(ranges: Sequence[Sequence[int]]) -> list[int]:
    return [i for a, b in ranges for i in range(int(a), int(b) + 1)]


def _made_bare(text: str) -> str:
    return bare_text(_MADE.sub("", text) if "[" in text else text)


def _fingerprints(m: Message) -> list[tuple]:
    """What survives normalization and a dialect round trip of each part: text without whitespace, lone surrogates,
    U+FFFD and snapglyph's own placeholders; a call (ids and refused names may be renamed: neither is kept); a
    result's text alike. A part that leaves nothing (an empty text, an image) gives none; consecutive text parts give
    one (OpenAI chat joins them into one string)."""
    out: list[tuple] = []
    for p in m.parts:
        if p.kind == "text":
            t = _made_bare(p.text)
            if t and out and out[-1][0] == "text":
                out[-1] = ("text", out[-1][1] + t)
            elif t:
                out.append(("text", t))
        elif p.kind == "tool_call":
            out.append(("call",))
        elif p.kind == "tool_result":
            out.append(("result", _made_bare(p.result_text())))
    return out


def _restore_tail_ids(after: list[Message], stored: list[Message], next_id: int) -> list[Message]:
    """Put back the recorded tail source in place of the messages read after a snapshot, as far as they match.

    A dialect may merge messages (Anthropic puts one round's results in one user message) or split them, so the
    match runs over the parts; a system message the dialect moved to the request's system prompt (Anthropic,
    Responses, Gemini) is matched there by :func:`_restore_head` and put back here, in its place. Matched messages
    are replaced by the stored source messages themselves (their ids and exact source). A message edited since the
    last pass (same role and number of parts as the stored one at its place, and the messages after it matching
    again) keeps the stored id with its new content, marked ``derived`` (the store keeps the source it holds). From
    the first message that matches nothing (messages appended since the last pass), ids continue after the largest
    known id.
    """
    hoisted = not any(m.role == "system" for m in after)
    owners: list[tuple[tuple, int]] = [(f, i) for i, m in enumerate(stored) if not (hoisted and m.role == "system")
                                       for f in _fingerprints(m)]
    memo: dict[int, list[tuple]] = {}

    def prints(m: Message) -> list[tuple]:
        if id(m) not in memo:
            memo[id(m)] = _fingerprints(m)
        return memo[id(m)]

    def matches(m: Message, k: int) -> bool:
        fps = prints(m)
        return bool(fps) and [f for f, _ in owners[k:k + len(fps)]] == fps

    out: list[Message] = []
    k = 0
    n_read = 0
    emitted = 0  # stored messages already placed in out
    while n_read < len(after) and k < len(owners):
        m = after[n_read]
        if matches(m, k):
            last = owners[k + len(prints(m)) - 1][1]
            out.extend(stored[emitted:last + 1])
            emitted = last + 1
            k += len(prints(m))
            n_read += 1
            continue
        # An edited message: the stored one at this place has the same role and part count, and what follows
        # matches again (or nothing follows).
        src_i = owners[k][1]
        src = stored[src_i]
        n_fp = len(prints(src))
        nxt = after[n_read + 1] if n_read + 1 < len(after) else None
        if (src_i == emitted and src.role == m.role and len(prints(m)) == n_fp
                and (nxt is None or k + n_fp >= len(owners) or matches(nxt, k + n_fp))):
            out.append(Message(src.id, m.role, m.parts, {**m.meta, "edited": True, "derived": True}))
            emitted = src_i + 1
            k += n_fp
            n_read += 1
            continue
        break
    sent = {i for _, i in owners}
    while emitted < len(stored) and emitted not in sent:  # no part of it was sent here (empty, or a hoisted system)
        out.append(stored[emitted])
        emitted += 1
    for m in after[n_read:]:
        out.append(Message(next_id, m.role, m.parts, m.meta))
        next_id += 1
    return out


def _split_system(messages: Sequence[Message]) -> tuple[str, str]:
    """The bare fingerprint text of the system messages and of the others (a dialect may join and move the
    former)."""
    def text(ms: Sequence[Message]) -> str:
        return "".join(fp[-1] for m in ms for fp in _fingerprints(m))  # kinds left out: a dialect joins parts
    return text([m for m in messages if m.role == "system"]), text([m for m in messages if m.role != "system"])


def _restore_head(read: list[Message], stored: list[Message], stored_tail: list[Message]) -> list[Message] | None:
    """The stored head source in place of the head read before a snapshot, where it is the same head: the same
    fingerprints, the system messages compared apart (a dialect joins them into one system prompt, with the
    tail's own system messages moved there too). None where the head differs (edited since)."""
    sys_read, rest_read = _split_system(read)
    sys_head, rest_head = _split_system(stored)
    sys_tail, _ = _split_system(stored_tail)
    if rest_read == rest_head and sys_read in (sys_head, sys_head + sys_tail):
        return list(stored)
    return None


def _derived(messages: list[Message], store: SourceStore) -> list[Message]:
    """Messages read from a compacted request that stand where the store holds another source: marked
    ``derived``, so :meth:`SourceStore.put` never replaces that source with them."""
    out = []
    for m in messages:
        if m.id in store and store.get(m.id) is not m and not m.meta.get("derived"):
            m = Message(m.id, m.role, m.parts, {**m.meta, "derived": True})
        out.append(m)
    return out


def bare_text(text: str) -> str:
    """``text`` without whitespace, lone surrogates and U+FFFD: what a conversation's key is computed from, so the
    normalization a request went through does not change it.

    Examples
    --------
    >>> bare_text("fix  parser.py\\n\\ud800")
    'fixparser.py'
    """
    if not text.isascii():
        text = LONE_SURROGATE.sub("", text).replace("\ufffd", "")
    return "".join(text.split())  # str.split's whitespace is the \s of a str pattern (str.isspace)


def conversation_key(messages: Sequence[Message]) -> str:
    """A key of a conversation: its first user turn, the same on every pass.

    The system prompt is left out (agents rebuild it on every call: date, working folder, git status), and so are
    empty messages, whitespace, lone surrogates, U+FFFD, images and the placeholders snapglyph writes for parts it
    could not send, so the key of a source and of the request a compaction wrote from it are the same. Returns 16
    hex digits.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> def opening(system, task):
    ...     return [Message(0, "system", [Part("text", text=system)]), Message(1, "user", [Part("text", text=task)])]
    >>> conversation_key(opening("today is Monday", "fix parser.py"))
    '31551fd36c34ed8e'
    >>> conversation_key(opening("today is Tuesday", "fix  parser.py\\n"))   # system prompt and spaces left out
    '31551fd36c34ed8e'
    """
    data = []
    for m in messages:
        if m.meta.get("snapshot"):
            break
        fps = _fingerprints(m)
        if m.role == "system" or not fps:  # an empty message is dropped from a request: left out here too
            continue
        data.append("".join(str(x) for fp in fps for x in fp))
        if m.role == "user":
            break
    return hashlib.sha256(json.dumps(data, ensure_ascii=True).encode()).hexdigest()[:16]


def expand_snapshots(messages: Sequence[Message], store: SourceStore | None, *,
                     read_back: bool = False) -> list[Message]:
    """Replace every snapshot message by the stored source of the messages it covers.

    A snapshot message is one with ``meta["snapshot"] = {"covered": [[a, b], ...], ...}`` (as the transcript
    readers mark it). Pixels are never reused: the covered messages come back as source, to be rendered again.
    With ``read_back`` (the input is a request body a reader numbered), a request that holds no snapshot but whose
    store recorded a passthrough (:data:`PASSTHROUGH`) gets the recorded sources and ids back where it matches.

    Raises
    ------
    StoreError
        If a snapshot is present and the store is missing or lacks a covered id.

    Examples
    --------
    >>> from snapglyph import Part, SourceStore
    >>> store = SourceStore()
    >>> store.put([Message(i, "assistant", [Part("text", text=f"step {i}")]) for i in (1, 2)])
    >>> snap = Message(1, "user", [Part("text", text="(pages)")], {"snapshot": {"covered": [[1, 2]]}})
    >>> out = expand_snapshots([Message(0, "user", [Part("text", text="task")]), snap], store)
    >>> [(m.id, m.text()) for m in out]
    [(0, 'task'), (1, 'step 1'), (2, 'step 2')]
    """
    from .tail_paging import POINTER_RE, restore_pointers

    if any(POINTER_RE.match(t) for m in messages for p in m.parts
           for t in ([p.text] if p.kind == "text" else [q.text for q in p.content if q.kind == "text"])):
        if store is None:
            raise StoreError("the input holds snapglyph pointers to parts shown as pages but no source store was "
                             "given (--store PATH); pages are re-rendered from source only")
        messages = restore_pointers(messages, store)
    out: list[Message] = []
    for n, m in enumerate(messages):
        snap = m.meta.get("snapshot")
        if not snap:
            out.append(m)
            continue
        if store is not None:
            out = _head_of(out, store, format_ranges(_ids_of(snap.get("covered", []))))
        ids = _ids_of(snap.get("covered", []))
        if store is None:
            raise StoreError(f"the input holds a snapglyph snapshot of messages {format_ranges(ids)} but no "
                             "source store was given (--store PATH); pages are re-rendered from source only")
        if store.path is not None and not store.path.exists() and len(store) == 0:
            raise StoreError(f"the input holds a snapglyph snapshot of messages {format_ranges(ids)} but the "
                             f"source store {store.path} does not exist (pass the store the first pass wrote with --store PATH)")
        out.extend(store.get(i) for i in ids)
        stored_tail = store.tail(format_ranges(ids))
        if stored_tail:
            rest = [x for x in messages[n + 1:]]
            known = max([i for i in store] + [x.id for x in out])
            out.extend(_restore_tail_ids(rest, stored_tail, known + 1))
            return _derived(out, store)
    if store is not None and read_back and store.tail(PASSTHROUGH) and not any(m.meta.get("snapshot") for m in out):
        stored = store.tail(PASSTHROUGH)
        return _derived(_restore_whole(out, stored, max(m.id for m in stored) + 1), store)
    return out  # no snapshot: the caller's own messages (an edit replaces what the store held)


def _restore_whole(read: list[Message], stored: list[Message], next_id: int) -> list[Message]:
    """A passthrough read back: the leading system prompt the dialect joined every system message into, matched
    apart (:func:`_restore_head`), and the rest as a tail (:func:`_restore_tail_ids`). Only where every recorded
    message is found again (the request sent, with messages appended since); else the read as it is."""
    lead = 0
    while lead < len(read) and read[lead].role == "system":
        lead += 1
    sys_read, _ = _split_system(read[:lead])
    sys_all, _ = _split_system(stored)
    if lead and sys_read == sys_all and any(m.role == "system" for m in stored):
        out = _restore_tail_ids(read[lead:], stored, next_id)   # every system message moved to the top
    else:
        out = _restore_tail_ids(read, stored, next_id)
    found = {id(m) for m in out}
    return out if all(id(m) in found for m in stored) else read  # edited or another start: the reader's ids

def _head_of(read: list[Message], store: SourceStore, key: str) -> list[Message]:
    """The head read before a snapshot, replaced by its stored source where the store recorded that head."""
    stored = store.head(key)
    if not stored:
        return read
    head = _restore_head(read, stored, store.tail(key))
    return head if head is not None else read
