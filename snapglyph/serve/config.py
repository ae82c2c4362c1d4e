"""The settings of ``snapglyph serve`` (:class:`ServeConfig`): what the command line and the library's callers
set, with the defaults of :mod:`snapglyph._config`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .._config import (HOLD_BYTES, HOLD_NEAR, HOLD_SECONDS, RECALL_ROUNDS, SERVE_MARGIN, STORM_CUTS, STORM_REQUESTS,
                       UPSTREAM_READ_TIMEOUT)
from .rewrite import DEFAULT_TEXT_ONLY

__all__ = ["ServeConfig"]


@dataclass
class ServeConfig:
    """Settings of ``snapglyph serve``.

    Attributes
    ----------
    upstream : str
        The provider's base URL.
    window : int or None
        The context window in provider tokens, when the overflow bodies do not say it (``--window``).
    profile : str or None
        Reader profile for every request (``--profile``); default: the profile of each request's ``model``.
    compact_at : float or None
        Compact before sending when the estimate passes this share of the window (``--compact-at``).
    dry_run : bool
        Log what would be done and pass everything through.
    state : Path or None
        The state folder; default :func:`~snapglyph.serve.state.default_state_dir`.
    text_only : tuple of str
        Model name patterns never sent pages.
    upstream_timeout : float or None
        Seconds to wait for the upstream's next bytes (``--upstream-timeout``); ``None`` or 0: no limit.
    margin : float
        Share of the window kept free for the estimate's error.
    target : float
        A new cut aims at this share of the budget, so the verbatim tail can grow for many turns before the next.
    recall_rounds : int
        A compacted request offers the ``recall_messages`` tool and the proxy answers at most this many rounds of
        its calls per request (``--recall-rounds``, :mod:`snapglyph.serve.recall_loop`); 0 offers no tool, and
        then a compaction that shows no page is refused.
    hold_bytes, hold_seconds, hold_near, storm_cuts, storm_requests : int, float, float, int, int
        ``--hold-bytes``, ``--hold-seconds``, ``--hold-near`` (:mod:`snapglyph.serve.answers`) and ``--storm-cuts``
        (:mod:`snapglyph.compaction.growth`); the defaults and their reasons are in :mod:`snapglyph._config`.

    Examples
    --------
    >>> cfg = ServeConfig("https://api.anthropic.com", window=200_000, compact_at=0.8)
    >>> cfg.profile, cfg.dry_run, cfg.margin, cfg.target, cfg.text_only[:3]
    (None, False, 0.08, 0.6, ('gpt-3.5*', 'gpt-4', 'gpt-4-0*'))
    """

    upstream: str
    window: int | None = None
    profile: str | None = None
    compact_at: float | None = None
    dry_run: bool = False
    state: Path | None = None
    text_only: tuple = DEFAULT_TEXT_ONLY
    margin: float = SERVE_MARGIN
    target: float = 0.6
    extra: dict = field(default_factory=dict)
    upstream_timeout: float | None = UPSTREAM_READ_TIMEOUT
    recall_rounds: int = RECALL_ROUNDS
    hold_bytes: int = HOLD_BYTES
    hold_seconds: float = HOLD_SECONDS
    hold_near: float = HOLD_NEAR
    storm_cuts: int = STORM_CUTS
    storm_requests: int = STORM_REQUESTS
