"""Step 3 of :func:`~snapglyph.compaction.compactor.compact`: fit the budget.

In this order, each only when the previous is not enough:

1. the newest round alone too big: its largest user and tool outputs are shown as pages (pointers stay in the
   tail; :mod:`.tail_paging`);
2. the oldest pages of the middle are dropped (their ids stay recallable from the store);
3. only the newest pages of the largest paged outputs are kept (the end of a log is what an agent reads first);
4. the caller's summarizer, when given, stands in for the dropped pages (the only tier that calls a model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..errors import BudgetError, InputError
from ..model.ids import format_ranges
from ..model.messages import Message
from .tail_paging import PagedPart, page_out

if TYPE_CHECKING:  # pragma: no cover
    from .conversation import Conversation
    from .plan import Plan

__all__ = ["Fit", "add_summary", "dropped_ids", "fit_budget"]


def dropped_ids(middle_ids: list[int], kept: list, pages: list) -> list[int]:
    """Middle ids not shown on the kept pages (the newest ``len(kept)`` of ``pages``); a message whose start is on
    a dropped page counts too.

    Examples
    --------
    >>> from types import SimpleNamespace as P
    >>> pages = [P(first_id=2, last_id=4), P(first_id=4, last_id=6)]
    >>> dropped_ids([2, 3, 4, 5, 6], pages[1:], pages)
    [2, 3, 4]
    """
    if len(kept) == len(pages):
        return []
    if not kept:
        return list(middle_ids)
    first = kept[0].first_id
    before = pages[len(pages) - len(kept) - 1]
    partial = before.last_id == first
    return [i for i in middle_ids if i < first or (partial and i == first)]


@dataclass
class Fit:
    """What fits the budget: the tail (with pointers where outputs are paged), the pages kept, and the summary.

    Attributes
    ----------
    tail : list of Message
    tail_cost : int
        Tokens of ``tail``.
    paged : list of PagedPart
        Oversized outputs of the newest messages shown as pages.
    kept : list of Page
        The newest pages of the middle that are sent.
    base : int
        Tokens of the tool definitions, the reserved output and the head.
    snap_text : int
        Tokens of the snapshot text.
    page_cost : callable
        ``page_cost(pages) -> int`` image tokens.
    summary : str or None
        The caller's summary of the messages not shown, with its heading.
    summary_cost : int
        Tokens of ``summary`` as a text part.
    """

    tail: list[Message]
    tail_cost: int
    paged: list[PagedPart]
    kept: list
    base: int
    snap_text: int
    page_cost: Callable[[list], int]
    summary: str | None = None
    summary_cost: int = 0

    def paged_pages(self) -> list:
        """Pages of the paged outputs, in tail order."""
        return [pg for pp in self.paged for pg in pp.pages]

    def total(self, kept: list | None = None) -> int:
        """Tokens of the request with ``kept`` (default: :attr:`kept`) as the middle's pages, summary included."""
        imgs = list(self.kept if kept is None else kept) + self.paged_pages()
        return (self.base + self.tail_cost + (self.page_cost(imgs) + self.snap_text if imgs else 0)
                + self.summary_cost)


def _newest(pages: list, keep: int) -> list:
    return pages[len(pages) - keep:] if keep else []


def _drop_to_fit(fit: Fit, pages: list, keep: int, budget: int) -> None:
    while keep > 0 and fit.total(_newest(pages, keep)) > budget:
        keep -= 1
    fit.kept = _newest(pages, keep)


def fit_budget(conv: "Conversation", plan: "Plan", budget: int) -> Fit:
    """Page the newest outputs, drop the oldest pages, trim paged outputs, until the request fits ``budget``.

    Raises
    ------
    BudgetError
        The head, the newest round (its outputs paged) and the reserved output still do not fit; the message names
        the largest message of that round.
    """
    norm, c, costs = conv.norm, plan.cut, conv.costs
    base = conv.fixed + sum(conv.per[:plan.head_end])
    tail, tail_cost, paged = norm[c:], sum(conv.per[c:]), []
    room = budget - base - conv.snapshot_text_cost
    if tail_cost > room:
        tail, paged = page_out(tail, sources={m.id: m for m in conv.source}, need=tail_cost - room,
                               text_cost=costs.text, render=conv.draw, page_cost=costs.pages)
        tail_cost = sum(costs.message(m) for m in tail)
    fit = Fit(tail, tail_cost, paged, [], base, conv.snapshot_text_cost, costs.pages)
    pages = plan.pages
    _drop_to_fit(fit, pages, min(len(pages), max(0, plan.page_cap - len(fit.paged_pages()))), budget)
    while fit.total() > budget and any(len(pp.pages) > 1 for pp in paged):
        big_part = max((pp for pp in paged if len(pp.pages) > 1), key=lambda pp: costs.pages(pp.pages))
        big_part.pages = big_part.pages[1:]
    if fit.total() > budget:
        final = fit.total()
        need = final if paged else base + tail_cost
        big = max(range(c, len(norm)), key=lambda i: conv.per[i])
        head_cost = base - conv.fixed
        raise BudgetError(
            f"cannot fit the budget of {budget} tokens: the head ({head_cost}), the newest round "
            f"({tail_cost}" + (f", and {len(fit.paged_pages())} pages for its largest parts" if paged else "")
            + "), tool definitions and the reserved "
            f"output ({conv.fixed}) already need {need} tokens; the largest message of that round is "
            f"#{norm[big].id} ({norm[big].role}, {conv.per[big]} tokens)",
            needed=need, budget=budget)
    return fit


def add_summary(fit: Fit, plan: "Plan", budget: int, summarize: Callable[[list[Message]], str], cost_text:
                Callable[[str], int]) -> None:
    """Let the caller's ``summarize`` stand in for the pages dropped; drop more pages to make room for its text.

    Up to three rounds: a summary's length can drop another page, whose messages the next summary then covers.

    Raises
    ------
    InputError
        The callback returned no text.
    BudgetError
        The summary does not fit beside the head and the newest round.
    """
    pages, mid_ids, mid = plan.pages, plan.middle_ids, plan.middle
    for _ in range(3):
        gone = set(dropped_ids(mid_ids, fit.kept, pages))
        text = summarize([m for m in mid if m.id in gone])
        if not isinstance(text, str) or not text.strip():
            raise InputError("the summarize callback must return non-empty text")
        fit.summary = f"Summary of messages {format_ranges(sorted(gone))} (not shown as pages):\n{text}"
        fit.summary_cost = cost_text(fit.summary) + 2
        _drop_to_fit(fit, pages, len(fit.kept), budget)
        if set(dropped_ids(mid_ids, fit.kept, pages)) == gone:
            break
    if fit.total() > budget:
        raise BudgetError(f"the summary ({fit.summary_cost} tokens) does not fit the budget of {budget} tokens",
                          needed=fit.total(), budget=budget)
