"""How an adapter's conversation keeps its cut, makes a new one and counts it (issue 35 item 4): the part of
:class:`snapglyph.integrations._common.ConversationCompactor` that follows ``serve``'s rules.

- the cut is kept while the tail fits the budget (:func:`snapglyph.compact` with ``cut=``: the same head and pages, a
  provider's prompt cache keeps them);
- a new cut aims at :func:`snapglyph.compaction.growth.cut_target` (room for the next turns at the measured growth),
  where that shows the middle and pages no more of the tail than the whole budget's compaction;
- a request is counted once (a retry of the same messages is the same request), a new cut by
  :func:`snapglyph.compaction.storms.note_cut`, and one more that would be a storm raises
  :class:`~snapglyph.errors.CompactionStormError` (:func:`snapglyph.compaction.storms.storm_error`) instead.

Imports no agent framework.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from snapglyph import compact
from snapglyph.compaction.budget import Budget
from snapglyph.compaction.growth import CUT_SHARE, cut_target
from snapglyph.compaction.sticky import CutNoLongerFits
from snapglyph.compaction.storms import ITEMS, note_cut, storm, storm_error
from snapglyph.errors import BudgetError
from snapglyph.providers.params import output_reserve
from snapglyph.providers.profiles import profile as get_profile

__all__ = ["CutKeeping"]


class CutKeeping:
    """The cut-keeping and storm-counting methods of :class:`~snapglyph.integrations._common.ConversationCompactor`
    (which holds the state they use: ``profile``, ``store``, ``model``, ``max_tokens``, ``last``, ``requests``,
    ``cut_requests``, ``growth``, ``storm_cuts``, ``storm_requests``, ``lock``, ``_items``, ``_fresh``, ``_save``).

    Examples
    --------
    >>> from snapglyph.integrations._common import ConversationCompactor
    >>> c = ConversationCompactor(None, None, budget=3000, max_tokens=100)
    >>> turns = [{"role": "user", "content": "the task"}] + [{"role": "assistant" if i % 2 else "user",
    ...          "content": f"step {i} " + "word " * 400} for i in range(1, 14)]
    >>> _, first = c.compact({"model": "gpt-4o", "messages": turns}, "openai")
    >>> _, again = c.compact({"model": "gpt-4o", "messages": turns + [{"role": "assistant", "content": "ok"}]},
    ...                      "openai")
    >>> again.cut.first_tail == first.cut.first_tail, c.requests, c.cut_requests    # the cut kept: counted once
    (True, 2, [1])
    """

    def _number(self, body: dict, dialect: str) -> None:
        """Count one more request, unless ``body`` holds as many items as the last one (a retry of it)."""
        items = body.get(ITEMS.get(dialect, "messages"))
        n = len(items) if isinstance(items, list) else 0
        if n != self._items:
            self.requests, self._items = self.requests + 1, n

    def _run(self, body: dict, dialect: str, budget: Budget, profile: Any, recall: bool, **cuts: Any) -> Any:
        return compact(body, profile=profile, dialect=dialect, budget=budget, store=self.store, model=self.model,
                       max_tokens=self.max_tokens, recall_tool=recall,
                       allow_empty_middle=recall, **cuts)   # a middle on no page only where recall is answered

    def _sticky(self, body: dict, dialect: str, budget: Budget, profile: Any, recall: bool) -> Any:
        """The last cut again while its tail fits (its head and pages byte for byte), else ``None``."""
        last = self.last
        if last is None or self._fresh or last.cut is None or last.cut.kept < 0:
            return None
        try:
            return self._run(body, dialect, budget, profile, recall, cut=last.cut)
        except (CutNoLongerFits, BudgetError):
            return None

    def _new_cut(self, body: dict, dialect: str, budget: Budget, profile: Any, recall: bool, full: Any) -> Any:
        """A new cut: the storm error where one more would be a storm; else aiming at the growth's target
        (``full``, the compaction to the whole budget, where the target cannot be met); counted and saved."""
        if storm(self.cut_requests, self.requests, limit=self.storm_cuts, window=self.storm_requests):
            raise storm_error(dialect, body, self.profile, limit=self.storm_cuts, window=self.storm_requests)
        target = cut_target(budget.tokens, output_reserve(self.max_tokens, body), self.growth, share=CUT_SHARE)
        res = full
        if target < budget.tokens:
            try:
                low = self._run(body, dialect, Budget(target, budget.window, budget.ratio), profile, recall,
                                earlier=self.last.cut if self.last is not None else None)
                worse = low.passthrough or (full.pages and not low.pages) or len(low.paged) > len(full.paged)
                res = full if worse else low        # not where the middle goes unshown or more of the tail is paged
            except BudgetError:
                pass                                   # the whole budget's compaction, as it was
        self.cut_requests, self._fresh = note_cut(self.cut_requests, self.requests), False
        self._save()
        return res

    def without_pages(self) -> None:
        """Compact this conversation without page images from now on (its model refused a request carrying them):
        the text tiers, the snapshot text and ``recall_messages``; the next compaction makes a new cut."""
        with self.lock:
            self.profile = dataclasses.replace(get_profile(self.profile), max_pages=0)
            self._fresh = True
