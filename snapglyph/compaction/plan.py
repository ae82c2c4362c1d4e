"""Step 2 of :func:`~snapglyph.compaction.compactor.compact`: plan the cut (where the head ends, where the tail
starts) and render the middle between them.

The head is the system prompt and the first user turn. A cut point is a place before a user or an assistant
message after the head: never between an assistant message's tool calls and their results. The plan takes the
longest tail that fits the budget beside the head and the middle's pages; pages are append-stable, so one layout
of the largest middle (its page starts, no page encoded:
:meth:`~snapglyph.compaction.conversation.Conversation.page_starts`) gives an upper and a lower bound for every
smaller middle, and only cut points the bounds leave open are rendered exactly (at most
:data:`snapglyph._config.EXACT_RENDERS` of them).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Sequence

from .._config import EXACT_RENDERS
from ..errors import BudgetError
from ..model.messages import Message, images_in
from ..providers.limits import has_big_image, image_allowance
from ..providers.profiles import Profile

if TYPE_CHECKING:  # pragma: no cover
    from .conversation import Conversation

__all__ = ["Plan", "cut_points", "head_end", "page_caps", "plan_cut"]


@dataclass(frozen=True)
class Plan:
    """Where :func:`plan_cut` cut the conversation, and the middle's pages.

    Attributes
    ----------
    head_end : int
        Index in the normalized messages just past the head.
    cut : int
        Index in the normalized messages of the first tail message.
    pages : list of Page
        The whole middle rendered, oldest first (before any page is dropped).
    page_cap : int
        Pages the request may carry beside its own images at this cut (provider image limits).
    middle : list of Message
        Source messages of the middle (ids between the head and the tail).
    fits : bool
        False when even the newest round with every page does not fit: the tail then takes the longest run within
        half of what the head leaves, and later steps page its outputs or drop pages.
    exact_renders : int
        Middles rendered exactly to settle cut points the bounds left open.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> p = Plan(head_end=1, cut=4, middle=[Message(i, "user", [Part("text", text="x")]) for i in (2, 3)])
    >>> p.middle_ids, p.pages, p.fits
    ([2, 3], [], True)
    """

    head_end: int
    cut: int
    pages: list = field(default_factory=list)
    page_cap: int = 0
    middle: list[Message] = field(default_factory=list)
    fits: bool = True
    exact_renders: int = 0

    @property
    def middle_ids(self) -> list[int]:
        """Ids of the middle's messages, oldest first."""
        return [m.id for m in self.middle]


def head_end(msgs: Sequence[Message]) -> int:
    """Index just past the head: the system prompt(s) and the first user turn.

    The first user turn is the first user message together with the user messages right after it (providers
    merge consecutive user messages into one turn; an aborted, empty assistant reply between them is removed by
    normalization), e.g. a ``/mode`` command followed by the actual task. A conversation that opens with an
    assistant message (after the neutral user line normalization puts before it) keeps it in the head too.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> roles = ["system", "user", "user", "assistant", "user"]
    >>> head_end([Message(i, r, [Part("text", text="x")]) for i, r in enumerate(roles)])
    3
    """
    i = 0
    while i < len(msgs) and msgs[i].role == "system":
        i += 1
    if i < len(msgs) and msgs[i].meta.get("opening"):
        i += 1
    while i < len(msgs) and msgs[i].role != "user":
        i += 1
    while i < len(msgs) and msgs[i].role == "user":
        i += 1
    while i < len(msgs) and msgs[i].role == "tool":
        i += 1
    return i


def cut_points(msgs: Sequence[Message], h: int) -> list[int]:
    """Cut points after the head ``msgs[:h]``, oldest first; ``[h]`` (an empty middle) when there is none. The
    user's words sent in one turn with tool results (``meta["beside_results"]``) stay with them.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> roles = ["user", "assistant", "tool", "assistant", "user"]
    >>> cut_points([Message(i, r, [Part("text", text="x")]) for i, r in enumerate(roles)], 1)
    [3, 4]
    """
    return [c for c in range(h + 1, len(msgs)) if msgs[c].role in ("user", "assistant")
            and not msgs[c].meta.get("beside_results")] or [h]


def page_caps(norm: Sequence[Message], h: int, prof: Profile) -> list[int]:
    """For each cut ``c``, how many pages a request may carry beside the images of the head and ``norm[c:]``.

    One pass from the end (linear in the messages), with the limits of :mod:`snapglyph.providers.limits`.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> from snapglyph.providers.profiles import profile
    >>> msgs = [Message(0, "user", [Part("text", text="x")]), Message(1, "user", [Part("image", width=9, height=9)])]
    >>> page_caps(msgs, 1, profile("claude"))
    [99, 99, 100]
    """
    head_imgs = images_in(norm[:h])
    n, big = len(head_imgs), has_big_image(prof, head_imgs)
    caps = [0] * (len(norm) + 1)
    for c in range(len(norm), -1, -1):
        if c < len(norm):
            ims = images_in([norm[c]])
            n += len(ims)
            big = big or has_big_image(prof, ims)
        caps[c] = image_allowance(prof, n, big)
    return caps


@dataclass(frozen=True)
class _Bounds:
    """Token cost of each cut point, from the page starts of the largest middle (pages are append-stable)."""

    base: int                 # tool definitions, reserved output and head
    suffix: list[int]         # suffix[c]: tokens of norm[c:]
    caps: list[int]
    first_ids: list[int]      # first message id on each page of the largest middle (non-decreasing)
    ids: list[int]            # id of each normalized message
    full_page: int            # tokens of a full page
    min_page: int             # tokens of a page one patch row high
    snap_text: int            # tokens of the snapshot text
    notes_up: int = 0         # tokens of the user's words, at most, for any middle (charged with or without pages)
    ledger_share: float = 0.0  # the ledger's cap, as a share of the pages' tokens

    def n_pages(self, c: int) -> int:
        return min(bisect.bisect_right(self.first_ids, self.ids[c] - 1), self.caps[c])

    def upper(self, c: int) -> int:
        """Never below the exact cost: the last page charged at full height."""
        n = self.n_pages(c)
        pages = n * self.full_page
        return (self.base + self.suffix[c] + self.notes_up
                + (pages + self.snap_text + int(self.ledger_share * pages) if n else 0))

    def lower(self, c: int) -> int:
        """Never above the exact cost: the last page charged at one patch row."""
        n = self.n_pages(c)
        return self.base + self.suffix[c] + ((n - 1) * self.full_page + self.min_page + self.snap_text if n else 0)


def _middle(conv: "Conversation", h: int, c: int) -> list[Message]:
    head_last = conv.norm[h - 1].id if h else -1
    return [m for m in conv.source if head_last < m.id < conv.norm[c].id]


def plan_cut(conv: "Conversation", budget: int, *, user_bound: Callable[[list[Message]], int] | None = None,
             ledger_share: float = 0.0) -> Plan:
    """Choose the cut: the longest tail that fits ``budget`` beside the head and the middle's pages.

    The cost is not monotonic in the cut (a longer tail can mean one page less), so cut points are tried from the
    oldest on: the bounds settle most of them, and one between its bounds is rendered exactly.

    Parameters
    ----------
    conv : Conversation
    budget : int
        Tokens the request may take.
    user_bound : callable, optional
        ``user_bound(middle) -> int``: at most the tokens of the user's words repeated for this middle, never
        less for a larger middle (:meth:`snapglyph.compaction.notes.Notes.bound`); charged beside the pages, so
        the user's words fit before any page is dropped.
    ledger_share : float
        The identifier ledger's cap as a share of the pages' image tokens (charged at its cap here).

    Raises
    ------
    BudgetError
        The head alone (with the tool definitions and the reserved output) exceeds the budget.

    Examples
    --------
    >>> from snapglyph import Part, profile, render
    >>> from snapglyph.compaction.conversation import prepare
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text="word " * 300)]) for i in range(8)]
    >>> conv = prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None, max_tokens=100,
    ...                tools=None, recall_tool=False, draw=render)
    >>> p = plan_cut(conv, 2500)
    >>> p.head_end, p.cut, p.middle_ids, len(p.pages), p.fits
    (1, 6, [1, 2, 3, 4, 5], 1, True)
    >>> p = plan_cut(conv, 1500)      # the newest round and every page do not fit: later steps drop pages
    >>> p.cut, p.middle_ids, p.fits
    (7, [1, 2, 3, 4, 5, 6], False)
    """
    norm, prof = conv.norm, conv.prof
    h = head_end(norm)
    if h >= len(norm):
        raise BudgetError(f"the head alone (the system prompt and the first user turn, {conv.total} tokens with the "
                          f"reserved output) exceeds the budget of {budget} tokens", needed=conv.total, budget=budget)
    cuts = cut_points(norm, h)
    suffix = [0] * (len(norm) + 1)
    for i in range(len(norm) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + conv.per[i]
    caps = page_caps(norm, h, prof)
    user_bound = user_bound or (lambda middle: 0)
    largest = _middle(conv, h, cuts[-1])
    b = _Bounds(conv.fixed + sum(conv.per[:h]), suffix, caps, conv.page_starts(largest), [m.id for m in norm],
                prof.image_tokens(*prof.page_size), prof.image_tokens(prof.page_size[0], prof.patch),
                conv.snapshot_text_cost, user_bound(largest), ledger_share)
    plan, renders = _first_fit(conv, b, h, cuts, caps, user_bound, budget, ledger_share)
    if plan is not None:
        return plan
    # the exact renders are freed (they lived in _first_fit) before another render
    return _none_fits(conv, h, cuts, suffix, (budget - b.base) // 2, caps, renders)


def _first_fit(conv: "Conversation", b: _Bounds, h: int, cuts: list[int], caps: list[int],
               user_bound: Callable[[list[Message]], int], budget: int, ledger_share: float
               ) -> tuple[Plan | None, int]:
    """The oldest cut that fits ``budget`` with every page it may keep (the search of :func:`plan_cut`), or None;
    and the middles rendered exactly.

    The bounds settle most cuts; one between its bounds is rendered (at most :data:`EXACT_RENDERS` of them, kept
    by cut), so a younger cut that the bounds settle never wins over an older one that fits exactly.
    The ledger is charged at its cap first; where no cut fits with it, the cut is planned without it, and the
    dropping step makes room for it with the oldest pages."""
    trials: dict[int, tuple[list[Message], list]] = {}
    for share in dict.fromkeys((ledger_share, 0.0)):
        b = replace(b, ledger_share=share)
        for c in cuts:
            if b.lower(c) > budget:
                continue
            if b.upper(c) <= budget:
                middle, pages = trials.get(c) or (_middle(conv, h, c), None)
                return Plan(h, c, pages if pages is not None else conv.draw(middle), caps[c], middle, True,
                            len(trials)), len(trials)
            if c not in trials:
                if len(trials) >= EXACT_RENDERS:  # enough exact renders: settle the rest by the bounds alone
                    continue
                middle = _middle(conv, h, c)
                trials[c] = (middle, conv.draw(middle))
            middle, trial = trials[c]
            kept = trial[-caps[c]:] if caps[c] else []
            pages = conv.costs.pages(kept)
            extra = user_bound(middle) + (pages + b.snap_text + int(share * pages) if kept else 0)
            if b.base + b.suffix[c] + extra <= budget:
                return Plan(h, c, trial, caps[c], middle, True, len(trials)), len(trials)
    return None, len(trials)


def _none_fits(conv: "Conversation", h: int, cuts: list[int], suffix: list[int], half: int, caps: list[int],
               renders: int) -> Plan:
    """The plan when even the newest round with every page does not fit: the newest pages and the tail share what
    the head leaves, the tail taking the longest run within ``half`` of it (at least the newest round)."""
    c = next((c for c in cuts if suffix[c] <= half), cuts[-1])
    middle = _middle(conv, h, c)
    return Plan(h, c, conv.draw(middle), caps[c], middle, False, renders)
