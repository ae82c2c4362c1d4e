"""Step 3 of :func:`~snapglyph.compaction.compactor.compact`: fit the budget.

In this order, each only when the previous is not enough:

1. the newest round alone too big: its largest user and tool outputs are shown as pages (pointers stay in the
   tail; :mod:`.tail_paging`);
2. pages of the middle are dropped (their ids stay recallable from the store): first those that hold only tool
   output, oldest first, then the others, oldest first (:func:`drop_order`); the user's own messages are repeated
   as text and charged before any page is dropped, and the identifier ledger of the kept pages is charged at its
   cap, a share of their tokens (:mod:`.notes`);
3. only the newest pages of the largest paged outputs are kept (the end of a log is what an agent reads first);
4. the caller's summarizer, when given, stands in for the dropped pages (the only tier that calls a model).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Sequence

from .._config import SUMMARY_ROUNDS
from ..errors import BudgetError, InputError
from ..model.message_ids import format_ranges
from ..model.messages import Message
from .notes import Notes
from .tail_paging import PagedPart, page_out

if TYPE_CHECKING:  # pragma: no cover
    from .conversation import Conversation
    from .plan import Plan

__all__ = ["Drops", "Fit", "add_summary", "drop_order", "dropped_ids", "fit_budget", "shown_and_dropped"]


def _span(page) -> tuple[int, int] | None:
    if getattr(page, "first_id", None) is None:
        return None
    return page.first_id, page.last_id if page.last_id is not None else page.first_id


def shown_and_dropped(middle_ids: Sequence[int], kept: Sequence, pages: Sequence) -> tuple[list[int], list[int]]:
    """Middle ids the kept pages show, and those they do not show whole.

    A page shows every middle id from its ``first_id`` to its ``last_id``. An id is shown when a kept page shows it,
    and dropped when a page that is not kept shows it (an id split over a kept and a dropped page is in both
    lists); with no page kept, every id is dropped.

    Parameters
    ----------
    middle_ids : sequence of int
        Ids of the middle, ascending.
    kept : sequence of Page
        The pages sent (any subset of ``pages``, in order).
    pages : sequence of Page
        Every page of the middle.

    Returns
    -------
    (list of int, list of int)
        Shown ids and dropped ids, ascending.

    Examples
    --------
    >>> from types import SimpleNamespace as P
    >>> pages = [P(first_id=2, last_id=4), P(first_id=4, last_id=6), P(first_id=6, last_id=7)]
    >>> shown_and_dropped([2, 3, 4, 5, 6, 7], [pages[0], pages[2]], pages)
    ([2, 3, 4, 6, 7], [4, 5, 6])
    """
    if not kept:
        return [], list(middle_ids)
    ids = sorted(middle_ids)
    keep = {id(p) for p in kept}
    shown: set[int] = set()
    dropped: set[int] = set()
    for p in pages:
        span = _span(p)
        if span is None:
            continue
        lo, hi = bisect.bisect_left(ids, span[0]), bisect.bisect_right(ids, span[1])
        (shown if id(p) in keep else dropped).update(ids[lo:hi])
    return sorted(shown), sorted(dropped)


def dropped_ids(middle_ids: Sequence[int], kept: Sequence, pages: Sequence) -> list[int]:
    """Middle ids not shown whole on the kept pages (:func:`shown_and_dropped`).

    Examples
    --------
    >>> from types import SimpleNamespace as P
    >>> pages = [P(first_id=2, last_id=4), P(first_id=4, last_id=6)]
    >>> dropped_ids([2, 3, 4, 5, 6], pages[1:], pages)
    [2, 3, 4]
    """
    return shown_and_dropped(middle_ids, kept, pages)[1]


def drop_order(pages: Sequence, middle: Sequence[Message]) -> list[int]:
    """The order in which the middle's pages are dropped: indices into ``pages``.

    Pages that hold only tool output (every message they show is a ``tool`` message) go first, oldest first; then
    the pages that hold conversation (a user or assistant message, even in part), oldest first.

    Examples
    --------
    >>> from types import SimpleNamespace as P
    >>> msgs = [Message(2, "user"), Message(3, "assistant"), Message(4, "tool"), Message(5, "assistant")]
    >>> drop_order([P(first_id=2, last_id=4), P(first_id=4, last_id=4), P(first_id=4, last_id=5)], msgs)
    [1, 0, 2]
    """
    ids = [m.id for m in middle]
    roles = [m.role for m in middle]

    def tool_only(p) -> bool:
        span = _span(p)
        if span is None:
            return False
        lo, hi = bisect.bisect_left(ids, span[0]), bisect.bisect_right(ids, span[1])
        return hi > lo and all(r == "tool" for r in roles[lo:hi])

    first = [i for i, p in enumerate(pages) if tool_only(p)]
    taken = set(first)
    return first + [i for i in range(len(pages)) if i not in taken]


@dataclass(frozen=True)
class Fit:
    """What fits the budget: the tail (with pointers where outputs are paged), the pages kept, and the summary.

    Frozen: a step that changes what fits returns a new one (``dataclasses.replace``).

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
    notes : Notes or None
        The user's words and the identifier ledger (:mod:`.notes`), charged in :meth:`total`.
    budget : int
        Tokens the request may take.
    pages : list of Page
        Every page of the middle.
    middle_ids : list of int
        Ids of the middle, ascending.
    order : list of int
        The order in which pages are dropped (:func:`drop_order`), indices into :attr:`pages`.

    Examples
    --------
    >>> from types import SimpleNamespace as P
    >>> pages = [P(first_id=1, last_id=3), P(first_id=3, last_id=5)]
    >>> fit = Fit([], 200, [], list(pages), base=300, snap_text=20, page_cost=lambda ps: 500 * len(ps),
    ...           pages=pages, middle_ids=[1, 2, 3, 4, 5], order=[0, 1])
    >>> fit.total(), fit.total(fit.kept_after(1)), fit.shown(fit.kept_after(1)), fit.total([])
    (1520, 1020, [3, 4, 5], 500)
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
    notes: Notes | None = None
    pages: list = field(default_factory=list)
    middle_ids: list[int] = field(default_factory=list)
    order: list[int] = field(default_factory=list)
    budget: int = 0

    def paged_pages(self) -> list:
        """Pages of the paged outputs, in tail order."""
        return [pg for pp in self.paged for pg in pp.pages]

    def kept_after(self, n_dropped: int) -> list:
        """The middle's pages left when the first ``n_dropped`` of :attr:`order` are dropped, in page order."""
        gone = set(self.order[:n_dropped])
        return [p for i, p in enumerate(self.pages) if i not in gone]

    def shown(self, kept: list) -> list[int]:
        """Middle ids the ``kept`` pages show."""
        return shown_and_dropped(self.middle_ids, kept, self.pages)[0]

    def rest(self, kept: list | None = None) -> int:
        """Tokens of the request with ``kept`` (default: :attr:`kept`) as the middle's pages, without the ledger."""
        kept = self.kept if kept is None else kept
        imgs = list(kept) + self.paged_pages()
        return (self.base + self.tail_cost + (self.page_cost(imgs) + self.snap_text if imgs else 0)
                + self.summary_cost + (self.notes.user_cost if self.notes is not None else 0))

    def total(self, kept: list | None = None) -> int:
        """Tokens of the request with ``kept`` (default: :attr:`kept`) as the middle's pages: the rest, and the
        ledger of what they show (at its cap: a share of their image tokens)."""
        kept = self.kept if kept is None else kept
        rest = self.rest(kept)
        if self.notes is None:
            return rest
        return rest + self.notes.ledger_cost(self.shown(kept), self.page_cost(kept))


@dataclass(frozen=True)
class Drops:
    """How a new cut that follows an earlier one drops pages (:func:`snapglyph.compaction.sticky.plan_after`).

    Attributes
    ----------
    least : int
        Pages of :func:`drop_order` dropped whatever the budget (the earlier cut's dropped pages, so that its kept
        pages stay the start of the new snapshot, byte for byte).
    room : int
        Tokens left free below the budget when more than ``least`` pages must be dropped (a low-water mark: the
        next cuts' new pages then fit without dropping again); 0: the fewest that fit.

    Examples
    --------
    >>> Drops(2, 3000)
    Drops(least=2, room=3000)
    """

    least: int = 0
    room: int = 0


def _least_fit(fit: Fit, n_dropped: int, budget: int) -> int:
    """The fewest pages of :attr:`Fit.order` dropped, ``n_dropped`` or more, for the request to fit ``budget``
    (all of them where none fits)."""
    n = len(fit.pages)
    while n_dropped < n:
        kept = fit.kept_after(n_dropped)
        if fit.rest(kept) <= budget and fit.total(kept) <= budget:  # the rest first: it is cheaper to count
            break
        n_dropped += 1
    return n_dropped


def _drop_to_fit(fit: Fit, n_dropped: int, budget: int, room: int = 0) -> Fit:
    """``fit`` with pages dropped in :attr:`Fit.order`, from ``n_dropped`` on, until the request fits (or no page
    is left); where more than ``n_dropped`` must go and ``room`` is set, until it fits ``budget - room`` (but one
    page is kept where one fits the budget)."""
    least = _least_fit(fit, n_dropped, budget)
    if room > 0 and least > n_dropped:
        n = len(fit.pages)
        low = _least_fit(fit, least, budget - room)
        least = low if low < n else max(least, n - 1) if least < n else n
    return replace(fit, kept=fit.kept_after(least))


def _trim_paged(fit: Fit, budget: int, page_cost: Callable[[list], int]) -> Fit:
    """``fit`` with the oldest page of its largest paged output (of more than one page) left out, again and again,
    while the request exceeds ``budget``."""
    while fit.total() > budget and any(len(pp.pages) > 1 for pp in fit.paged):
        big = max((i for i, pp in enumerate(fit.paged) if len(pp.pages) > 1),
                  key=lambda i: page_cost(fit.paged[i].pages))
        paged = list(fit.paged)
        paged[big] = replace(paged[big], pages=paged[big].pages[1:])
        fit = replace(fit, paged=paged)
    return fit


def fit_budget(conv: "Conversation", plan: "Plan", budget: int, notes: Notes | None = None,
               drops: Drops | None = None) -> Fit:
    """Page the newest outputs, fit the user's words, drop pages, trim paged outputs, until the request fits
    ``budget``.

    The user's words (``notes``) keep their first cap where the head, the tail and the snapshot text leave room for
    them, else the newest of them that fit that room; pages are dropped after that, in :func:`drop_order` (with
    ``drops``, a new cut after an earlier one: at least ``drops.least`` of them, and down to ``budget -
    drops.room`` where more must go; :class:`Drops`).

    Raises
    ------
    BudgetError
        The head, the newest round (its outputs paged) and the reserved output still do not fit; the message names
        the largest message of that round.

    Examples
    --------
    >>> from snapglyph import Part, profile, render
    >>> from snapglyph.compaction import conversation, plan
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"step {i} " * 400)])
    ...         for i in range(12)]
    >>> conv = conversation.prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None,
    ...                             max_tokens=100, tools=None, recall_tool=False, draw=render)
    >>> cut = plan.plan_cut(conv, 5000)
    >>> fit = fit_budget(conv, cut, 5000)
    >>> [(p.first_id, p.last_id) for p in cut.pages], [(p.first_id, p.last_id) for p in fit.kept], fit.total()
    ([(1, 6), (6, 10)], [(6, 10)], 4643)
    """
    norm, c, costs = conv.norm, plan.cut, conv.costs
    base = conv.fixed + sum(conv.per[:plan.head_end])
    tail, tail_cost, paged = norm[c:], sum(conv.per[c:]), []
    room = budget - base - conv.snapshot_text_cost
    if tail_cost > room and conv.prof.max_pages != 0:     # max_pages 0: no page at all (Profile.max_pages)
        tail, paged = page_out(tail, sources={m.id: m for m in conv.source}, need=tail_cost - room,
                               text_cost=costs.text, render=conv.draw, page_cost=costs.pages)
        tail_cost = sum(costs.message(m) for m in tail)
    if notes is not None:
        notes = notes.fit_user(min(notes.user_cap, budget - base - tail_cost - conv.snapshot_text_cost))
    pages = plan.pages
    fit = Fit(tail, tail_cost, paged, [], base, conv.snapshot_text_cost, costs.pages, notes=notes, pages=pages,
              middle_ids=plan.middle_ids, order=drop_order(pages, plan.middle), budget=budget)
    over_cap = len(pages) - min(len(pages), max(0, plan.page_cap - len(fit.paged_pages())))
    drops = drops or Drops()
    fit = _drop_to_fit(fit, max(over_cap, min(drops.least, len(pages))), budget, drops.room)
    fit = _trim_paged(fit, budget, costs.pages)
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
                Callable[[str], int]) -> Fit:
    """``fit`` with the caller's ``summarize`` standing in for the pages dropped, and more pages dropped to make
    room for its text.

    Up to :data:`~snapglyph._config.SUMMARY_ROUNDS` rounds: a summary's length can drop another page, whose messages the next summary then covers.

    Raises
    ------
    InputError
        The callback returned no text.
    BudgetError
        The summary does not fit beside the head and the newest round.

    Examples
    --------
    >>> from snapglyph import Part, profile, render
    >>> from snapglyph.compaction import conversation, plan
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"step {i} " * 400)])
    ...         for i in range(12)]
    >>> conv = conversation.prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None,
    ...                             max_tokens=100, tools=None, recall_tool=False, draw=render)
    >>> cut = plan.plan_cut(conv, 5000); fit = fit_budget(conv, cut, 5000)
    >>> fit = add_summary(fit, cut, 5000, lambda ms: f"{len(ms)} messages about steps", conv.costs.text)
    >>> fit.summary.splitlines(), fit.summary_cost, len(fit.kept), fit.total()
    (['Summary of messages #1-#6 (not shown as pages):', '6 messages about steps'], 26, 1, 4669)
    """
    pages, mid_ids, mid = plan.pages, plan.middle_ids, plan.middle
    for _ in range(SUMMARY_ROUNDS):
        gone = set(dropped_ids(mid_ids, fit.kept, pages))
        text = summarize([m for m in mid if m.id in gone])
        if not isinstance(text, str) or not text.strip():
            raise InputError("the summarize callback must return non-empty text")
        summary = f"Summary of messages {format_ranges(sorted(gone))} (not shown as pages):\n{text}"
        fit = _drop_to_fit(replace(fit, summary=summary, summary_cost=cost_text(summary) + 2),
                           len(pages) - len(fit.kept), budget)
        if set(dropped_ids(mid_ids, fit.kept, pages)) == gone:
            break
    if fit.total() > budget:
        raise BudgetError(f"the summary ({fit.summary_cost} tokens) does not fit the budget of {budget} tokens",
                          needed=fit.total(), budget=budget)
    return fit
