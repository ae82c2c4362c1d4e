"""The source store: the retained source of every message shown as pages, keyed by message id.

Pages are always re-rendered from this source, never from earlier pixels. On disk the store is a JSONL file, one
line per message (``{"id": 12, "message": {...}}``) in id order, written atomically (a temporary file in the same
folder, fsynced, then ``os.replace``), so a crash leaves the last good store. Strings are written with
``ensure_ascii=True``, so every Python ``str`` (lone surrogates, NUL, ANSI escapes) comes back equal.
"""

from __future__ import annotations

import json
import os
from copy import deepcopy
from dataclasses import fields
from pathlib import Path
from typing import Iterable, Iterator

from .._files import atomic_writer
from ..errors import StoreError
from ..model.messages import Message, Part

__all__ = ["SourceStore", "message_from_dict", "message_to_dict", "store_beside"]


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
        self._messages: dict[int, Message] = {}
        self._tails: dict[str, list[int]] = {}
        self.conversation: str | None = None
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise StoreError(f"cannot read source store {path}: {e}") from None
        except UnicodeDecodeError:
            raise StoreError(f"{path} is not a source store: it is not UTF-8 text") from None
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            if n == 1 and line.lstrip().startswith("{") and _is_request(line):
                beside = store_beside(path)
                raise StoreError(f"{path} is a request (what compact writes), not its source store; use the store "
                                 f"written beside it, {beside}"
                                 + ("" if beside.exists() else " (not found: give compact's --store)"))
            try:
                rec = json.loads(line)
                if "conversation" in rec:
                    self.conversation = str(rec["conversation"])
                    continue
                if "tail_of" in rec:
                    self._tails[str(rec["tail_of"])] = [int(i) for i in rec["ids"]]
                    continue
                m = message_from_dict(rec["message"])
            except StoreError as e:
                raise StoreError(f"{path}:{n}: not a source-store line ({e})") from None
            except (json.JSONDecodeError, KeyError, TypeError, RecursionError) as e:
                raise StoreError(f"{path}:{n}: not a source-store line ({type(e).__name__}: {e})") from None
            self._messages[m.id] = m

    def put(self, messages: Iterable[Message]) -> None:
        """Keep the source of ``messages``: a later put of the same id replaces the earlier one, except that a
        message a free tier reduced (``meta["reduced"]``) never replaces the original already held."""
        for m in messages:
            if m.meta.get("reduced") and m.id in self._messages:
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

    def put_tail(self, snapshot_key: str, messages: Iterable[Message]) -> None:
        """Keep the source of the tail sent after a snapshot, so a later pass can give its messages their ids back.

        Parameters
        ----------
        snapshot_key : str
            The snapshot's covered id ranges as text (``"#2-#417"``).
        messages : iterable of Message
            The tail's source messages, in order.
        """
        msgs = list(messages)
        self.put(msgs)
        self._tails[snapshot_key] = [m.id for m in msgs]

    def tail(self, snapshot_key: str) -> list[Message]:
        """The tail source recorded for a snapshot by :meth:`put_tail` (empty when none was)."""
        return [self._messages[i] for i in self._tails.get(snapshot_key, []) if i in self._messages]

    def get(self, message_id: int) -> Message:
        """Return the stored source of message ``message_id``.

        Raises
        ------
        StoreError
            If the store holds no source for that id.
        """
        try:
            return self._messages[int(message_id)]
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
        """Write the store atomically to ``path`` (default: the store's own path) and return the path.

        Raises
        ------
        StoreError
            If no path is known or the file cannot be written.
        """
        target = Path(path) if path is not None else self.path
        if target is None:
            raise StoreError("no path to save the source store to")
        try:
            with atomic_writer(target, text=True) as f:  # in the try: a file in the folder's way is an OSError too
                if self.conversation is not None:
                    f.write(json.dumps({"conversation": self.conversation}) + "\n")
                for mid in sorted(self._messages):
                    rec = {"id": mid, "message": message_to_dict(self._messages[mid], copy=False)}
                    f.write(json.dumps(rec, ensure_ascii=True, separators=(",", ":")) + "\n")
                for key in sorted(self._tails):
                    rec = {"tail_of": key, "ids": self._tails[key]}
                    f.write(json.dumps(rec, ensure_ascii=True, separators=(",", ":")) + "\n")
        except OSError as e:
            raise StoreError(f"cannot write source store {target}: {e}") from None
        self.path = target
        return target
