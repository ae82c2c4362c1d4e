"""Sticky compaction: compact again with an earlier cut while its tail still fits.

Not done yet: an earlier cut is never reused (every call makes a new cut); reusing it needs the compactor's plan
(issue 9), which is being split out of :func:`snapglyph.compact` at the time of writing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import BudgetError

__all__ = ["Cut", "CutNoLongerFits", "compact_sticky"]


class CutNoLongerFits(BudgetError):
    """The tail after the earlier cut no longer fits the budget (or the messages before it changed)."""


@dataclass(frozen=True)
class Cut:
    """Where an earlier compaction cut: ``first_tail`` id, ``prefix`` fingerprint, ``dropped`` pages."""

    first_tail: int
    prefix: str = ""
    dropped: int = 0


def compact_sticky(messages: Any, *, cut: Cut | None = None, **kw: Any) -> tuple[Any, Cut]:
    """Compact ``messages`` keeping the earlier ``cut`` if its tail fits; a new cut when ``cut`` is None.

    Raises
    ------
    CutNoLongerFits
        Whenever ``cut`` is given (for now; see the module docstring).
    """
    from .compactor import compact
    if cut is not None:
        raise CutNoLongerFits("earlier cuts are not reused yet: a new cut is made")
    res = compact(messages, **kw)
    return res, Cut(res.tail_ids[0] if res.tail_ids else 0, "", len(res.dropped_ids))
