"""Sticky compaction: compact a grown conversation again with the cut an earlier compaction made, while the tail
after that cut still fits.

A client that does not know about compaction (an agent behind ``snapglyph serve``) sends its whole history on
every request. Compacting each request afresh would move the cut as the conversation grows, and every move
changes the pages, so a provider's prompt cache never keeps them. ``compact(..., cut=earlier)`` instead reuses the
earlier :class:`Cut`: the same head, the same middle (so byte-identical pages: the render is deterministic and
depends on the middle's source only), the same pages kept, and a verbatim tail that grows by what was added, until
that tail no longer fits the budget. Only then (:class:`CutNoLongerFits`) does the caller make a new cut.
Everything else is the ordinary compaction: the reading guide, the user's words and the identifier ledger, the
checks of the request.

A new cut that follows an earlier one (``compact(..., earlier=cut)``, :func:`plan_after`) keeps the earlier cut's
pages as its start where it can: the new middle begins with the old one and its layout is continuous, so every
page of the old middle but its last is byte-identical in the new one; the pages the earlier cut dropped are
dropped again (and no more of them while the budget allows). When more must be dropped, it may drop down to a
low-water mark that leaves room for ``low_water`` more cuts' new pages (the pages this cut added), so the next cut
could keep this one's pages in turn; the default is none (:data:`LOW_WATER_CUTS`).

This module holds the planning step of a reused cut (:func:`plan_at`, :func:`refit`) and of a cut after an
earlier one (:func:`plan_after`) that :func:`snapglyph.compaction.compactor.compact` calls; it imports nothing of
the compactor (:func:`snapglyph.compaction.compactor.compact_sticky` is the wrapper over ``compact``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import BudgetError
from .digest import MessageDigests
from .dropping import Drops, drop_order
from .plan import Plan, head_end, page_caps, plan_cut

if TYPE_CHECKING:  # pragma: no cover
    from .conversation import Conversation
    from .dropping import Fit
    from .notes import Notes

__all__ = ["Cut", "CutNoLongerFits", "LOW_WATER_CUTS", "cut_of", "plan_after", "plan_at", "prefix_fingerprint",
           "refit"]

#: Cuts whose new pages a new cut that must drop pages leaves room for (:func:`plan_after`). Measured with
#: bench/storms.py (200 turns growing 1,500 tokens a turn at a 32,768-token window, 2026-12-08, bench/RESULTS.md
#: "Compaction storms"): 0 sends a median of 6 pages a request, 1 sends 2 and 2 sends 1, at the same mean share of
#: bytes cached (89.8 %, 90.2 %, 89.8 %): room kept for the next cut's pages is room the model does not read now.
LOW_WATER_CUTS = 0


class CutNoLongerFits(BudgetError):
    """The earlier cut cannot be reused: its tail no longer fits the budget, or the messages before it changed,
    or it is no longer a cut point. Make a new cut.

    Examples
    --------
    >>> isinstance(CutNoLongerFits("the tail grew"), BudgetError)
    True
    """


@dataclass(frozen=True)
class Cut:
    """Where a compaction cut a conversation, enough to cut the same way again.

    Attributes
    ----------
    first_tail : int
        Message id of the first verbatim tail message.
    prefix : str
        :func:`prefix_fingerprint` of the messages before it.
    kept : int
        Pages of the middle that were sent (the last ``kept`` in the drop order); ``-1`` when the cut cannot be
        reused (the tail had oversized outputs shown as pages, or nothing was compacted).
    user : int
        Tokens the snapshot's section of the user's words was written within (its cap, gap included): a reuse of
        the cut writes that section again within the same cap, byte for byte, or is a new cut; ``-1``: not recorded
        (a cut saved before 2026-12-08), the section fitted to the room left as for a new cut.

    Examples
    --------
    >>> Cut(12, "0123456789abcdef", 3, 250).to_json()
    {'first_tail': 12, 'prefix': '0123456789abcdef', 'kept': 3, 'user': 250}
    """

    first_tail: int
    prefix: str
    kept: int
    user: int = -1

    def to_json(self) -> dict:
        """Plain data (for a state file)."""
        return {"first_tail": self.first_tail, "prefix": self.prefix, "kept": self.kept, "user": self.user}


def prefix_fingerprint(messages: list, first_tail: int, digests: MessageDigests | None = None) -> str:
    """16 hex digits identifying the messages with ids below ``first_tail``, exactly, but for the system prompts
    the conversation opens with (agents rebuild them on every call; a system message after the first other message
    is drawn on the pages and counts); ``digests``: the compaction's memo of message digests
    (:class:`snapglyph.compaction.digest.MessageDigests`), a new one when omitted.

    Examples
    --------
    >>> from snapglyph.model.messages import Message, Part
    >>> msgs = [Message(i, r, [Part("text", text=t)]) for i, (r, t) in enumerate(
    ...     [("system", "today"), ("user", "task"), ("assistant", "ok"), ("user", "more")])]
    >>> a = prefix_fingerprint(msgs, 3)
    >>> msgs[0] = Message(0, "system", [Part("text", text="tomorrow")])
    >>> a == prefix_fingerprint(msgs, 3), a == prefix_fingerprint(msgs, 2), len(a)
    (True, False, 16)
    >>> msgs[2] = Message(2, "system", [Part("text", text="ok")])  # a system message in the middle counts
    >>> a == prefix_fingerprint(msgs, 3)
    False
    """
    digests = digests if digests is not None else MessageDigests()
    opening = 0
    while opening < len(messages) and messages[opening].role == "system":
        opening += 1
    return digests.run(m for m in messages[opening:] if m.id < first_tail)[:16]


def cut_of(conv: Conversation, tail_ids: list[int], kept: int, user: int = -1) -> Cut:
    """The :class:`Cut` a finished compaction of ``conv`` made: its tail's ids, the pages it sent (``kept=-1``
    when the cut cannot be reused: outputs of the tail shown as pages, or a passthrough) and the cap its user's
    words were written within (``user``)."""
    first = tail_ids[0] if tail_ids else 0
    return Cut(first, prefix_fingerprint(conv.source, first, conv.digests), kept, user)


def plan_at(conv: Conversation, cut: Cut) -> Plan:
    """The plan of a compaction that keeps the earlier ``cut``: same head, same middle, the tail from it on.

    Raises
    ------
    CutNoLongerFits
        The cut cannot be reused (it showed tail outputs as pages, its message is no longer a cut point after the
        head, or the messages before it changed).

    Examples
    --------
    >>> from snapglyph import Message, Part, compact, profile, render
    >>> from snapglyph.compaction.conversation import prepare
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text="word " * 300)]) for i in range(9)]
    >>> cut = compact(msgs[:8], dialect="anthropic", budget=3200, max_tokens=100).cut  # an earlier compaction
    >>> conv = prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None,  # one message more
    ...                max_tokens=100, tools=None, recall_tool=False, draw=render)
    >>> plan = plan_at(conv, cut)
    >>> plan.middle_ids == list(range(1, cut.first_tail)), [m.id for m in conv.norm[plan.cut:]][-2:]
    (True, [7, 8])
    """
    if cut.kept < 0:
        raise CutNoLongerFits("the earlier cut showed outputs of its tail as pages; a new cut is needed")
    ids = [m.id for m in conv.norm]
    h = head_end(conv.norm)
    c = ids.index(cut.first_tail) if cut.first_tail in ids else -1
    if c <= h or conv.norm[c].role not in ("user", "assistant") or conv.norm[c].meta.get("beside_results"):
        raise CutNoLongerFits(f"message #{cut.first_tail} is no longer a cut point after the head")
    if prefix_fingerprint(conv.source, cut.first_tail, conv.digests) != cut.prefix:
        raise CutNoLongerFits(f"the messages before #{cut.first_tail} changed, or the cut was saved by a snapglyph "
                              "older than its fingerprints of 2026-12-03")
    head_last = conv.norm[h - 1].id if h else -1
    middle = [m for m in conv.source if head_last < m.id < cut.first_tail]
    pages = conv.draw(middle)
    cap = page_caps(conv.norm, h, conv.prof)[c]
    if cut.kept > min(len(pages), cap):
        raise CutNoLongerFits("the earlier pages no longer fit the provider's image limits")
    return Plan(h, c, pages, cap, middle, True, 0)


def refit(conv: Conversation, plan: Plan, budget: int, notes: Notes | None, cut: Cut) -> Fit:
    """Fit the budget with the pages the earlier ``cut`` kept, no fewer and no more; ``notes``, where the cut
    recorded its user's-words cap (``cut.user``), written within that cap: the section must come out as the cut
    wrote it (a section that changed while the cut is kept would change the request's bytes after the pages).

    Raises
    ------
    CutNoLongerFits
        The tail no longer fits beside those pages and that section (or would need its outputs shown as pages).

    Examples
    --------
    >>> from snapglyph import Message, Part, compact, profile, render
    >>> from snapglyph.compaction.conversation import prepare
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text="word " * 300)]) for i in range(9)]
    >>> cut = compact(msgs[:8], dialect="anthropic", budget=3200, max_tokens=100).cut  # an earlier compaction
    >>> conv = prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None,  # one message more
    ...                max_tokens=100, tools=None, recall_tool=False, draw=render)
    >>> plan = plan_at(conv, cut)
    >>> fit = refit(conv, plan, 3500, None, cut)
    >>> len(fit.kept), [m.id for m in fit.tail] == list(range(cut.first_tail, 9)), fit.total() <= 3500
    (1, True, True)
    >>> refit(conv, plan, 3000, None, cut)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snapglyph.compaction.sticky.CutNoLongerFits: the tail from #...
    """
    from .dropping import fit_budget
    try:
        fit = fit_budget(conv, plan, budget, notes)
    except BudgetError as e:
        raise CutNoLongerFits(f"the tail from #{cut.first_tail} no longer fits: {e}", needed=e.needed,
                              budget=budget) from None
    if notes is not None and cut.user >= 0 and fit.notes is not None and fit.notes.user_text != notes.user_text:
        raise CutNoLongerFits(f"the tail from #{cut.first_tail} leaves no room for the snapshot's user's words as "
                              "the cut wrote them")
    if fit.paged:
        raise CutNoLongerFits(f"the tail from #{cut.first_tail} would need its outputs shown as pages")
    fit = replace(fit, kept=fit.kept_after(len(plan.pages) - cut.kept))
    if fit.total() > budget:
        raise CutNoLongerFits(f"the tail from #{cut.first_tail} no longer fits: {fit.total()} tokens > {budget}",
                              needed=fit.total(), budget=budget)
    return fit


def _same_span(a, b) -> bool:
    return (getattr(a, "first_id", None), getattr(a, "last_id", None)) == (getattr(b, "first_id", None),
                                                                            getattr(b, "last_id", None))


def plan_after(conv: Conversation, budget: int, earlier: Cut, *, user_bound=None, ledger_share: float = 0.0,
               low_water: int | None = None) -> tuple[Plan, Drops]:
    """The plan of a new cut of a conversation an earlier compaction cut at ``earlier`` (its tail no longer fits),
    and how its pages are dropped (:class:`~snapglyph.compaction.dropping.Drops`, for
    :func:`~snapglyph.compaction.dropping.fit_budget`).

    The pages ``earlier`` dropped are dropped again, so its kept pages (all but the last, which the new middle
    fills further) start the new snapshot byte for byte; the cut is planned with the room they free. Where more
    pages must go, the fit drops down to ``budget`` less ``low_water`` times the tokens of the pages this cut adds
    (a low-water mark). Where ``earlier`` cannot be followed (its messages changed, it is no longer a cut point,
    or the new cut is older), the ordinary plan (:func:`~snapglyph.compaction.plan.plan_cut`) and no drops.

    Parameters
    ----------
    conv : Conversation
    budget : int
        Tokens the request may take.
    earlier : Cut
        The cut of the compaction before.
    user_bound, ledger_share
        As for :func:`~snapglyph.compaction.plan.plan_cut`.
    low_water : int, optional
        Cuts whose new pages the low-water mark leaves room for (default :data:`LOW_WATER_CUTS`, read at the call).

    Raises
    ------
    BudgetError
        As :func:`~snapglyph.compaction.plan.plan_cut`.

    Examples
    --------
    >>> from snapglyph import Message, Part, compact, profile, render
    >>> from snapglyph.compaction.conversation import prepare
    >>> def conv(n):
    ...     return [Message(0, "user", [Part("text", text="the task")])] + [Message(i, "assistant" if i % 2
    ...         else "user", [Part("text", text=f"step {i} " + f"word{i} " * 300)]) for i in range(1, n)]
    >>> kw = dict(dialect="anthropic", max_tokens=100, budget=6000)
    >>> a = compact(conv(20), **kw); b = compact(conv(24), earlier=a.cut, **kw)
    >>> c = compact(conv(28), earlier=b.cut, **kw)                 # this one had to drop pages
    >>> grown = prepare(conv(32), prof=profile("claude"), dialect="anthropic", store=None, model=None,
    ...                 max_tokens=100, tools=None, recall_tool=False, draw=render)
    >>> plan, drops = plan_after(grown, 6000, c.cut, low_water=1)
    >>> len(c.pages), len(plan.pages), drops.least, drops.room > 0    # c's dropped pages are dropped again
    (3, 4, 1, True)
    """
    def ordinary(b: int) -> Plan:
        return plan_cut(conv, b, user_bound=user_bound, ledger_share=ledger_share)
    try:
        old = plan_at(conv, earlier)
    except CutNoLongerFits:
        return ordinary(budget), Drops()
    n = len(old.pages)
    gone = [i for i in drop_order(old.pages, old.middle)[:n - earlier.kept] if i < n - 1]

    def extends(p: Plan) -> bool:  # the new middle begins with the old one, page for page (but its last)
        return p.cut >= old.cut and len(p.pages) >= n and all(_same_span(a, b) for a, b in zip(old.pages[:n - 1],
                                                                                                p.pages))
    freed = int(conv.costs.pages([old.pages[i] for i in gone]) * (1 + ledger_share)) if gone else 0
    plan = ordinary(budget + freed)
    if freed and not (plan.fits and extends(plan)):  # the earlier drops are not enough: the prefix cannot stay
        plan, gone = ordinary(budget), []
    if not extends(plan):
        return plan, Drops()
    order = drop_order(plan.pages, plan.middle)
    least = max((order.index(i) + 1 for i in gone), default=0)
    added = conv.costs.pages(plan.pages[n - 1:]) if len(plan.pages) >= n else 0
    water = LOW_WATER_CUTS if low_water is None else low_water
    return plan, Drops(least, int(max(0, water) * added))
