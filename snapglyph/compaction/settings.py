"""The values :func:`snapglyph.compact` resolves once at its boundary and hands to its steps.

:class:`RenderSettings` is how the middle's pages are drawn (profile, cell, mode, family), frozen and resolved once:
it is also the page cache's key. :class:`Allowance` splits the budget once: the whole budget, the cap of the user's
words (:data:`~snapglyph._config.USER_SHARE` of it) and the ledger's share of the pages' tokens
(:data:`~snapglyph._config.LEDGER_SHARE` by default); the planner and the snapshot notes read it instead of deriving
the shares again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .._config import LEDGER_SHARE, USER_SHARE
from ..errors import InputError
from ..providers.profiles import Profile
from ..raster.render import resolve_cell

__all__ = ["Allowance", "RenderSettings"]


@dataclass(frozen=True)
class RenderSettings:
    """How a compaction draws its pages.

    Attributes
    ----------
    profile : Profile
        The reader profile (page geometry, default cell).
    cell : tuple of int or str or None
        The cell as the caller spelled it (``None``: the profile's); :attr:`key` holds it resolved.
    mode : str
        Layout mode (``"auto"``, ``"dense"``, ``"lines"``).
    family : str or None
        Font family (``"outline"``, ``"bitmap"``), ``None`` for the profile's.

    Raises
    ------
    InputError
        If the cell cannot be resolved (from :func:`snapglyph.raster.render.resolve_cell`).

    Examples
    --------
    >>> from snapglyph import profile
    >>> a = RenderSettings(profile("claude"), None, "auto", None)
    >>> b = RenderSettings(profile("claude"), "6x12", "auto", None)
    >>> a.key == b.key, a.key[1]                  # one cell, one key, whatever its spelling
    (True, (6, 12))
    """

    profile: Profile
    cell: Any
    mode: str
    family: str | None

    @property
    def key(self) -> tuple:
        """The page cache's key: the whole profile (a copy may differ from the named one) but its text count
        factor (a calibration, :func:`snapglyph.compaction.budget.calibrated`, draws the same pages), the cell
        resolved, the mode and the family."""
        drawn = dataclasses.replace(self.profile, text_token_factor=1.0)
        return (repr(drawn), resolve_cell(self.cell, self.profile), self.mode, self.family)

    def render_kwargs(self) -> dict:
        """Keyword arguments of :func:`snapglyph.raster.lazy.render_lazy` (with fresh memos of encoded segments)."""
        return {"profile": self.profile, "cell": self.cell, "mode": self.mode, "family": self.family,
                "encoded": {}, "segments": {}}


@dataclass(frozen=True)
class Allowance:
    """The budget of one compaction, split once.

    Attributes
    ----------
    budget : int
        Estimated tokens the whole request may cost (reserved output included).
    user_words : int
        The most the snapshot's section of the user's own words may cost (:data:`~snapglyph._config.USER_SHARE`
        of ``budget``).
    ledger_share : float
        The identifier ledger's cap as a share of the kept pages' image tokens (0 leaves it out).

    Raises
    ------
    InputError
        From :meth:`of` for a ledger share outside [0, 1] or not a number.

    Examples
    --------
    >>> Allowance.of(10_000)
    Allowance(budget=10000, user_words=2500, ledger_share=0.1)
    >>> Allowance.of(10_000, ledger=2)
    Traceback (most recent call last):
    snapglyph.errors.InputError: ledger must be a share of the pages' tokens between 0 and 1, not 2
    """

    budget: int
    user_words: int
    ledger_share: float

    @classmethod
    def of(cls, budget: int, *, ledger: float = LEDGER_SHARE) -> "Allowance":
        """The allowance of ``budget`` tokens with the ledger's share ``ledger``."""
        if isinstance(ledger, bool) or not isinstance(ledger, (int, float)) or not 0 <= ledger <= 1:
            raise InputError(f"ledger must be a share of the pages' tokens between 0 and 1, not {ledger!r}")
        return cls(budget, int(USER_SHARE * budget), ledger)
