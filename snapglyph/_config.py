"""Every tuning constant of snapglyph, each with the measurement or rule behind it.

Constants are imported where used (``from .._config import EXACT_RENDERS``); change one here and the whole package
follows. Provider rules (image limits, token costs) are not tuning: they live with their sources in
:mod:`snapglyph.providers.profiles`.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_TOKENS", "EXACT_RENDERS", "LEDGER_SHARE", "USER_SHARE", "USER_TEXT_MAX"]

DEFAULT_MAX_TOKENS = 4096
"""Output tokens reserved inside the budget when the caller gives none."""

EXACT_RENDERS = 24
"""Cut points the compactor renders exactly when the page-count bounds leave them open (the rest are settled by
the bounds alone). Measured on the 40k-message stress conversation of the compactor tests: the bounds settle all
but a handful of cut points; 24 keeps the worst case at 40 s -> 2.5 s per compaction (commit e711782) while every
longer tail is still priced in ``test_longest_tail_that_fits``."""

LEDGER_SHARE = 0.10
"""Default cap of the identifier ledger (:mod:`snapglyph.compaction.ledger`): this share of the image tokens of the
middle's pages it stands beside (issue 10: a tenth keeps a page's identifiers exact at a tenth of its cost; on the
Claude Code transcript in ../shared/data the ledger of 200 shown messages takes about 2,700 tokens beside 20 pages
of 1,521 tokens each, so the cap rarely cuts)."""

USER_SHARE = 0.25
"""Default cap of the user's own messages repeated in the snapshot text (:mod:`snapglyph.compaction.user_words`):
this share of the compaction's budget, in tokens. User messages are few and short but carry the task's constraints:
the 88 typed messages of ../shared/data/pi-session/large-session.jsonl take 4,008 tokens (Claude's estimate), the
60 of before-compaction.jsonl 6,291 (long ones cut to 2,000 characters), so a quarter keeps all of them from a
budget of 16k (resp. 26k) tokens on, and the newest ones below."""

USER_TEXT_MAX = 2000
"""Longest user message, in characters, repeated whole; a longer one keeps its first and last halves of this, with a
marked gap (issue 10: about 500 tokens, a long task statement; pasted logs and files are longer)."""
