"""Every tuning constant of snapglyph, each with the measurement or rule behind it.

Constants are imported where used (``from .._config import EXACT_RENDERS``); change one here and the whole package
follows. Provider rules (image limits, token costs) are not tuning: they live with their sources in
:mod:`snapglyph.providers.profiles`.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_TOKENS", "EXACT_RENDERS"]

DEFAULT_MAX_TOKENS = 4096
"""Output tokens reserved inside the budget when the caller gives none."""

EXACT_RENDERS = 24
"""Cut points the compactor renders exactly when the page-count bounds leave them open (the rest are settled by
the bounds alone). Measured on the 40k-message stress conversation of the compactor tests: the bounds settle all
but a handful of cut points; 24 keeps the worst case at 40 s -> 2.5 s per compaction (commit e711782) while every
longer tail is still priced in ``test_longest_tail_that_fits``."""
