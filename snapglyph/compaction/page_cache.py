"""The pages of recent middles, kept in memory so that compacting the same conversation again renders nothing.

A proxy compacts a conversation on every request it relays; with a reused cut (:mod:`.sticky`) the middle is the
same each time, and its pages are too (the render is deterministic and depends on the middle's source and the
render settings only). The cache holds the pages of the middles that compactions finally used (not every trial
render of the planning step), at most :data:`snapglyph._config.PAGE_CACHE_SIZE` of them, least recently used out
first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Sequence

from .._config import PAGE_CACHE_SIZE
from ..model.messages import Message
from .digest import MessageDigests

__all__ = ["CachedDraw"]

_PAGES: OrderedDict[tuple, list] = OrderedDict()
_LOCK = threading.Lock()


class CachedDraw:
    """A page renderer that looks its middle up in the cache first; :meth:`keep` stores a middle's pages.

    Parameters
    ----------
    draw : callable
        ``draw(messages) -> list[Page]``: the renderer.
    settings : tuple
        What else the pages depend on (the profile, cell, mode, family); part of the key.
    digests : MessageDigests, optional
        The compaction's memo of message digests (shared with the cut's fingerprint); a new one when omitted.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> calls = []
    >>> d = CachedDraw(lambda ms: calls.append(1) or [len(ms)], ("doc", 1))
    >>> middle = [Message(1, "user", [Part("text", text="hi")])]
    >>> d(middle), d.keep(middle, [1]), d(middle), len(calls)
    ([1], None, [1], 1)
    """

    def __init__(self, draw: Callable[[list[Message]], list], settings: tuple,
                 digests: MessageDigests | None = None) -> None:
        self.draw = draw
        self.settings = settings
        self.digests = digests if digests is not None else MessageDigests()

    def key(self, middle: Sequence[Message]) -> tuple:
        """The cache key of ``middle``: the render settings and the digest of its messages
        (:meth:`snapglyph.compaction.digest.MessageDigests.run`)."""
        return (*self.settings, self.digests.run(middle))

    def __call__(self, middle: list[Message]) -> list:
        key = self.key(middle)
        with _LOCK:
            pages = _PAGES.get(key)
            if pages is not None:
                _PAGES.move_to_end(key)
                return pages
        return self.draw(middle)

    def keep(self, middle: Sequence[Message], pages: list) -> None:
        """Remember ``pages`` as the render of ``middle``."""
        if not middle:
            return
        key = self.key(middle)
        with _LOCK:
            _PAGES[key] = pages
            _PAGES.move_to_end(key)
            while len(_PAGES) > PAGE_CACHE_SIZE:
                _PAGES.popitem(last=False)
