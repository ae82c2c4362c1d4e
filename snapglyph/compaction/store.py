"""The source store: the retained source of every message shown as pages, keyed by message id.

Pages are always re-rendered from this source, never from earlier pixels. On disk the store is a JSONL file, one
line per message (``{"id": 12, "message": {...}}``) in id order, written atomically (a temporary file in the same
folder, fsynced, then ``os.replace``), so a crash leaves the last good store. Strings are written with
``ensure_ascii=True``, so every Python ``str`` (lone surrogates, NUL, ANSI escapes) comes back equal.

The store is the truth: a source once held is never replaced by anything derived from it (a free tier's reduced
copy, ``meta["reduced"]``, or the normalized copy a compacted request holds, ``meta["derived"]``). Two processes
that compact one conversation at once (two agents, a proxy and a CLI run) both keep what they added: :meth:`save`
takes an exclusive lock (:func:`snapglyph._files.folder_lock`: ``flock(2)`` on the store's folder), reads the file
again, merges what another process saved since (ids, head and tail records this process does not hold), and writes
the union atomically.
"""

from __future__ import annotations

import json
import os
import weakref
from copy import deepcopy
from dataclasses import fields
from pathlib import Path
from typing import Iterable, Iterator

from .._files import atomic_writer, folder_lock
from ..errors import StoreError
from ..model.messages import Message, Part

__all__ = ["SourceStore", "message_from_dict", "message_to_dict", "store_beside"]

LOCK_TIMEOUT_S = 60.0
"""How long :meth:`SourceStore.save` waits for another process's save of the same store (a save takes
milliseconds; a minute means a process hung holding the lock)."""


def message_to_dict(m: Message, *, copy: bool = True) -> dict:
    """Serialize a :class:`Message` to plain JSON-able data (every field kept).

    Parameters
    ----------
    m : Message
    copy : bool
        Copy the ``meta`` dicts (deeply), so the data shares nothing mutable with ``m``. False where the data is
        written out at once (``json.dumps``: a store record, a digest) and never kept: the deep copies were a sixth
        of a compaction's serialization time (aider history, 2026-12-02).

    Examples
    --------
    >>> d = message_to_dict(Message(7, "tool", [Part("text", text="exit status 1")]))
    >>> d["id"], d["role"], d["parts"][0]["kind"], d["parts"][0]["text"], d["meta"]
    (7, 'tool', 'text', 'exit status 1', {})
    >>> message_from_dict(d) == Message(7, "tool", [Part("text", text="exit status 1")])
    True
    """
    # What dataclasses.asdict gives, without its generic recursion (5x slower: a compaction serializes every message
    # for the store, the cut's fingerprint and the page cache's key).
    return {"id": m.id, "role": m.role, "parts": [_part_to_dict(p, copy) for p in m.parts],
            "meta": (deepcopy(m.meta) if copy else m.meta) if m.meta else {}}


_PART_FIELDS = tuple(f.name for f in fields(Part))


def _part_to_dict(p: Part, copy: bool = True) -> dict:
    d = {name: getattr(p, name) for name in _PART_FIELDS}  # asdict's key order: the field order
    d["content"] = [_part_to_dict(c, copy) for c in p.content]
    d["meta"] = (deepcopy(p.meta) if copy else p.meta) if p.meta else {}
    return d


def _part_from_dict(d: dict) -> Part:
    d = dict(d)
    d["content"] = [_part_from_dict(c) for c in d.get("content", [])]
    return Part(**d)


def message_from_dict(d: dict) -> Message:
    """Rebuild a :class:`Message` from :func:`message_to_dict` output.

    Raises
    ------
    StoreError
        If the data is not a serialized message.

    Examples
    --------
    >>> message_from_dict({"id": 7, "role": "tool", "parts": [{"kind": "text", "text": "exit status 1"}]}).parts[0].text
    'exit status 1'
    >>> message_from_dict({"role": "tool"})
    Traceback (most recent call last):
    ...
    snapglyph.errors.StoreError: not a stored message: 'id'
    """
    try:
        return Message(id=int(d["id"]), role=d["role"], parts=[_part_from_dict(p) for p in d.get("parts", [])],
                       meta=dict(d.get("meta", {})))
    except (KeyError, TypeError, ValueError) as e:
        raise StoreError(f"not a stored message: {e}") from None


def _is_request(line: str) -> bool:
    """Whether a line is a request body (``messages`` or ``input`` at the top), not a store record."""
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(rec, dict) and ("messages" in rec or "input" in rec) and "message" not in rec


def store_beside(path: str | os.PathLike) -> Path:
    """The source store file kept beside a request file (or named after an input): ``PATH.store.jsonl``.

    Examples
    --------
    >>> store_beside("out/req.json").as_posix()
    'out/req.json.store.jsonl'
    """
    return Path(str(path) + ".store.jsonl")


class _StoreFile:
    """A store file open for reading, its lines read back by offset (the file's inode: a save that replaces the
    file meanwhile leaves these bytes as they were); closed once nothing holds it."""

    def __init__(self, path: Path, errors: str) -> None:
        self.f = open(path, "rb")
        self.errors = errors
        weakref.finalize(self, self.f.close)

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """``(offset, line)`` of each line, its newline included, in file order."""
        self.f.seek(0)
        offset = 0
        for raw in self.f:
            yield offset, raw
            offset += len(raw)

    def check_rest(self) -> None:
        """Raise UnicodeDecodeError where the lines not yet read hold bytes that are no UTF-8 (strict reads)."""
        if self.errors == "strict":
            for raw in self.f:
                raw.decode("utf-8")

    def read(self, offset: int, size: int) -> str:
        """The line of ``size`` bytes at ``offset``, decoded as it was read."""
        return os.pread(self.f.fileno(), size, offset).decode("utf-8", self.errors)  # no shared seek: threads


class _Held:
    """A stored message not read back yet: where its line is in a :class:`_StoreFile`."""

    __slots__ = ("file", "offset", "size")

    def __init__(self, file: _StoreFile, offset: int, size: int) -> None:
        self.file, self.offset, self.size = file, offset, size

    def message(self) -> Message:
        """The message of the line (checked when the file was read)."""
        return message_from_dict(json.loads(self.file.read(self.offset, self.size).splitlines()[0])["message"])


class SourceStore:
    """Message sources keyed by message id, in memory and optionally on disk.

    Parameters
    ----------
    path : str or Path, optional
        The JSONL file. If it exists it is loaded; :meth:`save` writes there.

    Raises
    ------
    StoreError
        If the file exists but a complete line is not a stored message.

    Examples
    --------
    >>> import os, tempfile
    >>> from snapglyph import Message, Part
    >>> path = os.path.join(tempfile.mkdtemp(), "store.jsonl")
    >>> store = SourceStore(path)
    >>> store.put([Message(7, "tool", [Part("text", text="exit status 1")])])
    >>> _ = store.save()
    >>> SourceStore(path).get(7).parts[0].text
    'exit status 1'
    """

    def __init__(self, path: "str | os.PathLike | None" = None) -> None:
        self.path = Path(path) if path is not None else None
        self._messages: dict[int, Message | _Held] = {}
        self._tails: dict[str, list[int]] = {}
        self._heads: dict[str, list[int]] = {}
        self.conversation: str | None = None
        if self.path is not None and self.path.exists():
            self._read_into(self.path, self._messages, self._tails, self._heads)

    def _read_into(self, path: Path, messages: dict, tails: dict, heads: dict, *, skip_bad: bool = False) -> None:
        """Read the store file at ``path`` into the given maps (and :attr:`conversation` where unset); with
        ``skip_bad`` (a save merging a damaged file it then writes afresh) lines that are no store record are
        passed over.

        Every line is checked as it is read (as a whole read would), but a message is kept as where its line is
        (:class:`_Held`, read back on first use), not as its parsed source: a second pass over a large store, or a
        save merging it, holds no second copy of the conversation."""
        errors = "replace" if skip_bad else "strict"
        try:
            src = _StoreFile(path, errors)
            n = 0
            for offset, raw in src.lines():
                text = raw.decode("utf-8", errors)
                subs = text.splitlines()  # as the whole text's splitlines() cuts it
                for line in subs:
                    n += 1
                    try:
                        m = self._read_line(line, n, path, tails, heads, skip_bad)
                    except StoreError:
                        src.check_rest()  # a file that is no UTF-8 further on says so first, as a whole read did
                        raise
                    if m is not None:
                        messages[m.id] = _Held(src, offset, len(raw)) if len(subs) == 1 else m
        except OSError as e:
            raise StoreError(f"cannot read source store {path}: {e}") from None
        except UnicodeDecodeError:
            raise StoreError(f"{path} is not a source store: it is not UTF-8 text") from None

    def _read_line(self, line: str, n: int, path: Path, tails: dict, heads: dict, skip_bad: bool) -> Message | None:
        """The message of the store file's line ``n`` (None for a blank line, a conversation, head or tail record
        (kept in ``tails`` / ``heads``), or a bad line passed over with ``skip_bad``)."""
        if not line.strip():
            return None
        if n == 1 and line.lstrip().startswith("{") and _is_request(line):
            beside = store_beside(path)
            raise StoreError(f"{path} is a request (what compact writes), not its source store; use the store "
                             f"written beside it, {beside}"
                             + ("" if beside.exists() else " (not found: give compact's --store)"))
        try:
            rec = json.loads(line)
            if "conversation" in rec:
                self._bind_read(str(rec["conversation"]), path)
                return None
            if "tail_of" in rec or "head_of" in rec:
                which = tails if "tail_of" in rec else heads
                which[str(rec.get("tail_of", rec.get("head_of")))] = [int(i) for i in rec["ids"]]
                return None
            return message_from_dict(rec["message"])
        except StoreError as e:
            if "another conversation" in str(e):
                raise
            if skip_bad:
                return None
            raise StoreError(f"{path}:{n}: not a source-store line ({e})") from None
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
            if skip_bad:
                return None
            why = f"no field {e}" if isinstance(e, KeyError) else str(e).split("\n")[0]
            raise StoreError(f"{path}:{n}: not a source-store line ({why})") from None

    def _message(self, message_id: int) -> Message:
        """The message held under ``message_id``, read back from its store file the first time (a KeyError for
        none)."""
        m = self._messages[message_id]
        if isinstance(m, _Held):
            m = self._messages[message_id] = m.message()
        return m

    def _bind_read(self, conversation: str, path: Path) -> None:
        if self.conversation is not None and self.conversation != conversation:
            raise StoreError(f"the source store {path} was saved by another conversation meanwhile (its head "
                             "differs); use one store per conversation")
        self.conversation = conversation

    def put(self, messages: Iterable[Message]) -> None:
        """Keep the source of ``messages``: a later put of the same id replaces the earlier one (the caller's own
        edit), except that a copy derived from a held source never replaces it: a message a free tier reduced
        (``meta["reduced"]``) or the normalized copy a compacted request holds (``meta["derived"]``, set by
        :func:`snapglyph.compaction.second_pass.expand_snapshots`).

        Examples
        --------
        >>> s = SourceStore()
        >>> s.put([Message(3, "user", [Part("text", text="caf\u00e9 \\ud800")])])
        >>> s.put([Message(3, "user", [Part("text", text="caf\u00e9 \ufffd")], {"derived": True})])
        >>> s.get(3).parts[0].text
        'caf\u00e9 \\ud800'
        """
        for m in messages:
            if (m.meta.get("reduced") or m.meta.get("derived")) and m.id in self._messages:
                continue
            self._messages[m.id] = m

    def bind(self, conversation: str) -> None:
        """Tie the store to one conversation (a key of its head), so another conversation cannot use it.

        Raises
        ------
        StoreError
            If the store already belongs to a different conversation.
        """
        if self.conversation is None:
            self.conversation = conversation
        elif self.conversation != conversation:
            where = f" {self.path}" if self.path else ""
            raise StoreError(f"the source store{where} belongs to another conversation (its head differs); use "
                             "one store per conversation")

    def put_tail(self, snapshot_key: str, messages: Iterable[Message], *, head: Iterable[Message] = ()) -> None:
        """Keep the source of the tail (and of the head) sent beside a snapshot, so a later pass gives the messages
        it reads back their ids and their exact source.

        Parameters
        ----------
        snapshot_key : str
            The snapshot's covered id ranges as text (``"#2-#417"``).
        messages : iterable of Message
            The tail's source messages, in order.
        head : iterable of Message
            The head's source messages, in order (every source message before the middle, empty ones included).
        """
        msgs, heads = list(messages), list(head)
        self.put(heads + msgs)
        self._tails[snapshot_key] = [m.id for m in msgs]
        if heads:
            self._heads[snapshot_key] = [m.id for m in heads]

    def tail(self, snapshot_key: str) -> list[Message]:
        """The tail source recorded for a snapshot by :meth:`put_tail` (empty when none was)."""
        return [self._message(i) for i in self._tails.get(snapshot_key, []) if i in self._messages]

    def head(self, snapshot_key: str) -> list[Message]:
        """The head source recorded for a snapshot by :meth:`put_tail` (empty when none was)."""
        return [self._message(i) for i in self._heads.get(snapshot_key, []) if i in self._messages]

    def get(self, message_id: int) -> Message:
        """Return the stored source of message ``message_id``.

        Raises
        ------
        StoreError
            If the store holds no source for that id.
        """
        try:
            return self._message(int(message_id))
        except KeyError:
            where = f" ({self.path})" if self.path else ""
            held = f"it holds #{min(self._messages)}-#{max(self._messages)}" if self._messages else "it is empty"
            raise StoreError(f"the source store{where} has no source for message #{message_id} ({held})") from None

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._messages

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._messages))

    def save(self, path: "str | os.PathLike | None" = None) -> Path:
        """Write the store atomically to ``path`` (default: the store's own path), merged with what another process
        saved there since, and return the path.

        Under an exclusive lock (:func:`snapglyph._files.folder_lock`) the file is read again; ids, head and tail records it holds and this
        store does not are added to this store (a source this store holds wins: it was read from that file or put
        since), then the union is written whole. So two processes saving at once lose no entry.

        Raises
        ------
        StoreError
            If no path is known, the file cannot be read, locked or written, or it was saved meanwhile by another
            conversation.
        """
        target = Path(path) if path is not None else self.path
        if target is None:
            raise StoreError("no path to save the source store to")
        try:
            with folder_lock(target, timeout=LOCK_TIMEOUT_S):
                if target.exists():
                    self._merge_from(target)
                self._write(target)
        except TimeoutError as e:
            raise StoreError(f"cannot write source store {target}: {e}") from None
        except OSError as e:
            raise StoreError(f"cannot write source store {target}: {e}") from None
        self.path = target
        return target

    def _merge_from(self, target: Path) -> None:
        """Add what the file at ``target`` holds and this store does not (under the save's lock)."""
        messages: dict[int, Message] = {}
        tails: dict[str, list[int]] = {}
        heads: dict[str, list[int]] = {}
        self._read_into(target, messages, tails, heads, skip_bad=True)  # a damaged file: its good lines kept
        for mid, m in messages.items():
            self._messages.setdefault(mid, m)
        for key, ids in tails.items():
            self._tails.setdefault(key, ids)
        for key, ids in heads.items():
            self._heads.setdefault(key, ids)

    def _write(self, target: Path) -> None:
        with atomic_writer(target, text=True) as f:  # a file in the folder's way is an OSError too
            if self.conversation is not None:
                f.write(json.dumps({"conversation": self.conversation}) + "\n")
            for mid in sorted(self._messages):
                m = self._messages[mid]  # one held message read back at a time, not kept
                rec = {"id": mid, "message": message_to_dict(m.message() if isinstance(m, _Held) else m, copy=False)}
                f.write(json.dumps(rec, ensure_ascii=True, separators=(",", ":")) + "\n")
            for name, records in (("tail_of", self._tails), ("head_of", self._heads)):
                for key in sorted(records):
                    f.write(json.dumps({name: key, "ids": records[key]}, ensure_ascii=True,
                                       separators=(",", ":")) + "\n")
