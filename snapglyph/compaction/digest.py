"""SHA-256 digests of messages, each message serialized once per compaction.

Two things in a compaction identify a run of messages exactly: the page cache's key of a middle
(:mod:`.page_cache`) and the fingerprint of the messages before a cut (:func:`.sticky.prefix_fingerprint`). So that
a long conversation's middle is serialized once, not once for each of them, each message's canonical
JSON (:func:`.store.message_to_dict`, keys sorted, ASCII) is hashed once, and a run's digest is the SHA-256 of its
messages' digests in order: equal runs give equal digests, and a run whose messages differ in any field (or in
their order or number) gives another one, as SHA-256 is collision resistant.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from ..errors import InputError
from ..model.messages import Message
from .store import message_to_dict

__all__ = ["MessageDigests"]


class MessageDigests:
    """A memo of message digests: :meth:`of` hashes a message the first time it is asked for.

    Messages are remembered by identity (the message itself is kept beside its digest, so its ``id()`` cannot go
    to another object meanwhile): share one instance between the steps of one compaction, whose messages are not
    changed while it runs.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> d = MessageDigests()
    >>> a, b = Message(1, "user", [Part("text", text="hi")]), Message(2, "assistant", [Part("text", text="ok")])
    >>> len(d.run([a, b])), d.run([a, b]) == MessageDigests().run([a, b]), d.run([a, b]) == d.run([b, a])
    (64, True, False)
    >>> d.run([a]) == d.run([Message(1, "user", [Part("text", text="hi!")])])
    False
    """

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Message, bytes]] = {}

    def of(self, m: Message) -> bytes:
        """The 32-byte SHA-256 of ``m``'s canonical JSON.

        Raises
        ------
        InputError
            ``m`` holds what JSON cannot write (a ``meta`` value such as a datetime, keys of mixed types): the
            store could not keep it either.
        """
        got = self._memo.get(id(m))
        if got is None or got[0] is not m:
            try:
                data = json.dumps(message_to_dict(m, copy=False), ensure_ascii=True, sort_keys=True)
            except (TypeError, ValueError) as e:
                raise InputError(f"message #{m.id} cannot be written as JSON (its meta?): {e}") from None
            got = self._memo[id(m)] = (m, hashlib.sha256(data.encode()).digest())
        return got[1]

    def run(self, messages: Iterable[Message]) -> str:
        """The hex SHA-256 of the digests of ``messages``, in order."""
        h = hashlib.sha256()
        for m in messages:
            h.update(self.of(m))
        return h.hexdigest()
