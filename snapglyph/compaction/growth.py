"""No compaction storms: a new cut leaves room for the next turns from the conversation's measured growth, and a
door that keeps cutting stops with one clear error.

Public reports count 48 automatic compactions in 76 minutes (openai/codex#40213) and 211 in one session
(anthropics/claude-code#24179), as issue 35 quotes them (read 2026-12-07); each rewrite re-bills the prompt cache.
Two rules, one owner each, for every door:

- :func:`cut_target`: the budget a new cut aims at is the ceiling less the room the next
  :data:`~snapglyph._config.GROWTH_TURNS` turns take at the conversation's growth per turn (:func:`grown`), not a
  fixed share; never below :data:`~snapglyph._config.CUT_FLOOR` of the room above the reserve;
- :func:`storm` (owned by :mod:`snapglyph.compaction.storms`, with the counting and the one error): more than
  :data:`~snapglyph._config.STORM_CUTS` new cuts within the last :data:`~snapglyph._config.STORM_REQUESTS`
  requests of a conversation is a storm: the door answers the client with one error naming the largest message
  instead of another rewrite.
"""

from __future__ import annotations

from .._config import CUT_FLOOR, GROWTH_TURNS
from .storms import storm      # the storm rule's owner is compaction.storms (re-exported here)

__all__ = ["CUT_SHARE", "cut_target", "grown", "storm"]

CUT_SHARE = 0.6
"""The share of the room above the reserve a new cut aims at before any growth is measured (:func:`cut_target`'s
``share``): ``serve``'s ``--target`` default and the adapters' (:class:`snapglyph.integrations._common.
ConversationCompactor`). A choice: the verbatim tail can grow for several turns before the next cut."""


def grown(growth: float, before: int | None, now: int) -> float:
    """The conversation's growth per turn in estimated tokens after one more request: the mean of the last ones,
    weighted to the newest (half each time); a request that did not grow the conversation (a retry, an edit that
    shrank it) leaves it as it was.

    Parameters
    ----------
    growth : float
        The growth measured so far (0: none yet).
    before, now : int
        The estimates of the previous request (``None``: none) and of this one.

    Examples
    --------
    >>> grown(0.0, None, 5000), grown(0.0, 5000, 6500), grown(1500.0, 6500, 7500), grown(1250.0, 7500, 7000)
    (0.0, 1500.0, 1250.0, 1250.0)
    """
    if before is None or now <= before:
        return growth
    delta = float(now - before)
    return delta if growth <= 0 else 0.5 * growth + 0.5 * delta


def cut_target(ceiling: int, reserve: int, growth: float, *, share: float, turns: int = GROWTH_TURNS,
               floor: float = CUT_FLOOR) -> int:
    """The budget a new cut aims at, in the ceiling's tokens (the reserved output included).

    Parameters
    ----------
    ceiling : int
        The most a request may cost (:func:`snapglyph.compaction.budget.budget_for`'s tokens).
    reserve : int
        Output tokens reserved inside it.
    growth : float
        The conversation's growth per turn (:func:`grown`); 0 where not measured yet: ``share`` of the room above
        the reserve is the target then.
    share : float
        The fixed share used before any growth is measured (serve's ``target``, 0.6).
    turns : int
        Turns the new cut must hold before the next (:data:`~snapglyph._config.GROWTH_TURNS`).
    floor : float
        The target never goes below this share of the room above the reserve.

    Returns
    -------
    int
        Between ``reserve + floor * (ceiling - reserve)`` and ``ceiling``.

    Examples
    --------
    >>> cut_target(30000, 4000, 0.0, share=0.6)             # nothing measured: the fixed share
    19600
    >>> cut_target(30000, 4000, 1000.0, share=0.6)          # room for 10 turns of 1,000 tokens
    20000
    >>> cut_target(30000, 4000, 5000.0, share=0.6)          # cannot hold 10 such turns: the floor
    17000
    """
    room = max(1, ceiling - reserve)
    if growth <= 0:
        return reserve + max(1, int(room * share))
    return max(reserve + max(1, int(room * floor)), min(ceiling, int(ceiling - growth * turns)))
