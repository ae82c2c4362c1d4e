"""No compaction storms, for every door: count a conversation's new cuts, and end a storm with one clear error.

Public reports count 48 automatic compactions in 76 minutes (openai/codex#40213) and 211 in one session
(anthropics/claude-code#24179), as issue 35 quotes them (read 2026-12-07); each rewrite re-bills the prompt cache.
The rule, one owner for ``serve`` and the adapters:

- :func:`note_cut`: a conversation's new cuts are counted by the number of the request each was made for; a cut
  made for the same request number as the one before (a recovery of that request, or requests of one conversation
  sent at the same time, none answered yet) is not counted again;
- :func:`storm`: one more new cut is a storm where :data:`~snapglyph._config.STORM_CUTS` were counted within the
  last :data:`~snapglyph._config.STORM_REQUESTS` requests;
- :func:`storm_error`: the :class:`~snapglyph.errors.CompactionStormError` a door raises (or answers with) instead
  of that cut, naming the request's largest message (:func:`largest_message`).
"""

from __future__ import annotations

import copy
from typing import Sequence

from .._config import STORM_CUTS, STORM_REQUESTS
from ..errors import CompactionStormError, SnapglyphError
from .budget import estimate

__all__ = ["ITEMS", "largest_message", "note_cut", "storm", "storm_error", "storm_text"]

ITEMS = {"anthropic": "messages", "openai": "messages", "responses": "input", "gemini": "contents"}
"""The key of a request's messages (items) in each dialect."""


def storm(cuts: Sequence[int], request: int, *, limit: int = STORM_CUTS, window: int = STORM_REQUESTS) -> bool:
    """Whether one more new cut at request number ``request`` would be a storm: ``limit`` cuts already counted in
    the last ``window`` requests (``cuts``: the request numbers of the conversation's new cuts, :func:`note_cut`).
    A cut for the request number of the newest one counted is no new one (:func:`note_cut` does not count it), so
    it is never a storm. ``limit`` 0: never a storm.

    Examples
    --------
    >>> storm([3, 11, 19], 27), storm([20, 21, 22, 23, 24], 25), storm([2, 21, 22, 23, 24], 25)
    (False, True, False)
    >>> storm([20, 21, 22, 23, 24], 24)           # the same request as the newest cut: not counted again
    False
    """
    if not limit or (cuts and cuts[-1] == request):
        return False
    return sum(1 for n in cuts if request - n < window) >= limit


def note_cut(cuts: Sequence[int], request: int, *, keep: int = 4 * STORM_CUTS) -> list[int]:
    """The request numbers of a conversation's new cuts after one more, made for request number ``request``: the
    newest ``keep`` kept. A cut for a request no later than the newest one counted (a recovery of that very
    request; requests of the conversation sent at once, each numbered by the requests answered before it) is not
    counted again.

    Examples
    --------
    >>> note_cut([], 4), note_cut([4], 4), note_cut([4], 9), note_cut(list(range(30)), 30)[-3:]
    ([4], [4], [4, 9], [28, 29, 30])
    """
    out = list(cuts)
    if not out or request > out[-1]:
        out.append(int(request))
    return out[-keep:]


def largest_message(dialect: str, body: dict, profile: str) -> tuple[int, str, int] | None:
    """``(index, role, estimated tokens)`` of the request's largest message (item), or ``None`` when it has none.

    Examples
    --------
    >>> body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"},
    ...         {"role": "assistant", "content": "word " * 500}]}
    >>> i, role, tokens = largest_message("anthropic", body, "claude"); (i, role, tokens > 400)
    (1, 'assistant', True)
    """
    key = ITEMS.get(dialect, "messages")
    items = body.get(key)
    if not isinstance(items, list) or not items:
        return None
    base = copy.copy(body)
    best: tuple[int, str, int] | None = None
    for i, item in enumerate(items):
        base[key] = [item]
        try:
            n = estimate(base, profile)
        except SnapglyphError:
            continue
        if best is None or n > best[2]:
            role = (item.get("role") or item.get("type") or "item") if isinstance(item, dict) else "item"
            best = (i, str(role), n)
    return best


def storm_text(dialect: str, body: dict, profile: str, cuts: int, requests: int, *,
               door: str = "snapglyph serve", big: tuple[int, str, int] | None = None) -> str:
    """The one-line error of a storm (``door`` opens it; ``big``: :func:`largest_message`, found when not given).

    Examples
    --------
    >>> storm_text("openai", {"model": "m", "messages": [{"role": "tool", "content": "x " * 900}]}, "openai", 5, 10)[:95]
    'snapglyph serve: this conversation cannot be kept under the window: 5 new cuts in its last 10 r'
    """
    big = big if big is not None else largest_message(dialect, body, profile)
    which = (f"; its largest message is {ITEMS.get(dialect, 'messages')}[{big[0]}] ({big[1]}, about {big[2]:,} "
             f"tokens)" if big is not None else "")
    return (f"{door}: this conversation cannot be kept under the window: {cuts} new cuts in its last "
            f"{requests} requests, each rewrite re-billing the prompt cache{which}; shorten or drop that message, or "
            f"start a new conversation")


def storm_error(dialect: str, body: dict, profile: str, *, limit: int = STORM_CUTS, window: int = STORM_REQUESTS,
                door: str = "snapglyph") -> CompactionStormError:
    """The :class:`~snapglyph.errors.CompactionStormError` of a storm of the request ``body`` (to raise, or to
    answer with: ``str()`` is :func:`storm_text`).

    Examples
    --------
    >>> e = storm_error("openai", {"model": "m", "messages": [{"role": "user", "content": "x " * 900}]}, "openai")
    >>> e.cuts, e.requests, e.largest[:2], str(e)[:51]
    (5, 10, (0, 'user'), 'snapglyph: this conversation cannot be kept under t')
    """
    big = largest_message(dialect, body, profile)
    return CompactionStormError(storm_text(dialect, body, profile, limit, window, door=door, big=big),
                                cuts=limit, requests=window, largest=big)
