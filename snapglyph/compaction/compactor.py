"""The reconstructor: head verbatim, middle as page images, tail verbatim, inside a token budget.

::

    [system, first user message]   head, verbatim (after the dialect's normalization)
    [user: page images + short text naming the id ranges shown]   the snapshot (middle)
    [newest messages from a cut point]   tail, verbatim: the longest run that fits the budget

:func:`compact` reads as the algorithm; each step is a module of this package:

1. :mod:`.conversation`  read the input, expand earlier snapshots from the store, normalize, price each message;
2. :mod:`.plan`          plan the cut (head end, tail start) and render the middle, room kept for the user's words;
3. :mod:`.dropping`      fit the budget: page the newest oversized outputs, fit the user's words (:mod:`.notes`),
                         drop pages (tool output first), summarize;
4. :mod:`.assemble`      assemble head + snapshot message + tail, within the request-byte limit;
5. check                 the request as the provider would (:func:`snapglyph.validate`), and the shrink.

Each step takes values and returns values: the conversation, the plan, the fit and the assembly are frozen, and
the notes and rewrites each step returns are joined once, in the result. What is written in place is the source
store (the caller's, returned in the result: bound in step 1, the tail's record before step 4, every source at
the end) and the memos of renders, digests and token counts.

The budget covers the whole request: text, tool definitions, page images and the reserved output tokens
(``max_tokens``). The source of every message shown as pages goes to the
:class:`~snapglyph.compaction.store.SourceStore`; compacting a compacted request re-renders the whole middle from
that source.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Sequence

from .._config import DEFAULT_BUDGET, LEDGER_SHARE
from ..errors import BudgetError, InputError, InternalError
from ..model.attachments import count_attachments
from ..model.message_ids import format_ranges, id_ranges
from ..model.messages import Message
from ..providers.limits import check_messages, request_bytes
from ..providers.profiles import Profile, profile as get_profile
from ..raster.lazy import render_lazy  # pages laid out, drawn when looked at, kept as PNG bytes
from .assemble import Assembly, assemble
from .budget import Budget, calibrated
from .conversation import Conversation, join_counts, prepare, resolve_dialect
from .dropping import add_summary, fit_budget
from .image_fit import fit_image_limits, fit_request_bytes
from .notes import SECTION_GAP, UserBound, planned_page_tokens, snapshot_notes
from .page_cache import CachedDraw
from .plan import Plan, plan_cut
from .result import CompactResult
from .second_pass import PASSTHROUGH, expand_snapshots
from .settings import Allowance, RenderSettings
from .sticky import Cut, CutNoLongerFits, cut_of, plan_after, plan_at, refit
from .store import SourceStore
from .user_words import USER_PAGE_SHARE

__all__ = ["CompactResult", "compact", "compact_sticky", "expand_snapshots"]


def compact(messages: Any, *, profile: "str | Profile" = "claude", dialect: str | None = None,
            budget: "int | Budget" = DEFAULT_BUDGET, store: SourceStore | None = None, model: str | None = None,
            max_tokens: int | None = None, tools: Sequence[dict] | None = None,
            cell: tuple[int, int] | None = None, mode: str = "auto",
            summarize: Callable[[list[Message]], str] | None = None, family: str | None = None,
            recall_tool: bool = False, allow_empty_middle: bool = False,
            ledger: float = LEDGER_SHARE, cut: Cut | None = None, earlier: Cut | None = None) -> CompactResult:
    """Compact a conversation into a request of at most ``budget`` tokens: head + page images + tail.

    Parameters
    ----------
    messages : list of Message, Transcript, or dict
        The conversation; a request body (OpenAI chat, Anthropic messages, OpenAI Responses, or one this function
        wrote) is read with :func:`snapglyph.readers.registry.from_request`.
    profile : str or Profile
        Reader profile (page geometry, token costs, limits).
    dialect : str, optional
        ``openai``, ``anthropic`` or ``responses``; default: the profile's own.
    budget : int or Budget
        The most the whole request may cost, in (estimated) tokens, reserved output included. A
        :class:`~snapglyph.compaction.budget.Budget` (what :func:`snapglyph.next_budget` and
        :func:`snapglyph.budget_for` return) is in the provider's tokens: text is counted times its ``ratio``, page
        images by the provider's rule.
    store : SourceStore, optional
        Source store; required when the input holds a snapshot. A new in-memory store is made when omitted.
    model : str, optional
        ``model`` of the request (default: the source's model, else the profile name).
    max_tokens : int, optional
        Output tokens reserved inside the budget; default: the source request's own limit (``max_tokens``,
        ``max_completion_tokens`` or ``max_output_tokens``), else ``DEFAULT_MAX_TOKENS`` (4096). Written under the
        name the dialect and model need (``max_completion_tokens`` for OpenAI reasoning models in chat). Every
        other parameter of a source request (``temperature``, ``thinking``, ``tool_choice``, ...) is kept where
        the dialect defines it (translated from another dialect where it has a counterpart; the rest are named
        in a note): the compacted request differs from its input only in its messages.
    tools : sequence of dict, optional
        Neutral tool definitions (``{"name", "description", "parameters"}``) to add to the source's own.
    cell : (int, int), optional
        Cell ``(cell_w, cell_h)`` in pixels; default: the profile's.
    mode : str
        Layout mode: ``auto`` (default), ``dense`` or ``lines`` (see :mod:`snapglyph.raster.render`).
    family : str, optional
        Font family, ``outline`` or ``bitmap``; default: the cell's measured default.
    recall_tool : bool
        Add the ``recall_messages`` tool (:func:`snapglyph.recall_tool`) to the request and name it in the snapshot
        text; the caller answers its calls with :func:`snapglyph.recall` on the returned store.
    ledger : float
        Cap of the identifier ledger in the snapshot text (the exact identifiers of the messages shown as pages,
        :mod:`snapglyph.compaction.ledger`), as a share of the pages' image tokens; 0 leaves it out. Counted inside
        the budget.
    summarize : callable, optional
        ``summarize(messages) -> str``, the only tier that may call a model: when pages must be dropped to meet
        the budget or a limit, it gets the source of the messages no longer shown, and its text joins the
        snapshot message (inside the budget).
    allow_empty_middle : bool
        Accept a request that shows none of the middle (every page dropped for the budget or a limit, and no
        summary): its messages are then only named as not shown, recallable from the store (say so to the model
        with ``recall_tool``). Without it, such a compaction is refused with a :class:`BudgetError`.
    cut : Cut, optional
        Cut where an earlier compaction of this conversation cut (its result's ``.cut``): keep the same head,
        middle and pages, the tail grown by what was added, while that tail still fits (:mod:`.sticky`), even
        where the whole conversation would fit the budget; a provider's prompt cache then keeps the pages. Raises
        :class:`~.sticky.CutNoLongerFits` when it cannot.
    earlier : Cut, optional
        With ``cut=None``: the cut of this conversation's compaction before (whose tail no longer fits). The new
        cut keeps the pages it sent as the start of its own, byte for byte, where the budget allows, and where
        pages must be dropped it drops down to a low-water mark that leaves room for the next cut's pages
        (:func:`~.sticky.plan_after`). Ignored with ``cut``.

    Returns
    -------
    CompactResult
        Unpacks as ``(request, store)``; ``.summary()`` gives the one-line report; ``.cut`` the cut made.

    Raises
    ------
    InputError
        Bad arguments (unknown dialect, non-positive budget, a ledger share outside [0, 1], wrong types), or a
        conversation with no user message.
    StoreError
        A snapshot in the input whose covered ids the store lacks, or a store that belongs to another
        conversation.
    InternalError
        The request built would break the dialect's grammar or the profile's limits (a last check; a bug).
    BudgetError
        The head, the newest round and the reserved output cannot fit the budget (nor its ``most``, for a
        :class:`~snapglyph.compaction.budget.Budget` that names one: up to it, that smallest compaction is
        returned), or the result would not be smaller than the input; the message names both numbers. Also when
        every page of the middle would be dropped and ``allow_empty_middle`` is not set.
    LimitError
        A provider limit (images per request, request bytes) cannot be met.

    Examples
    --------
    >>> from snapglyph import Message, Part, compact
    >>> msgs = [Message(0, "user", [Part("text", text="Fix the failing test in parser.py")])] + [
    ...     Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"step {i}: " + "log line\\n" * 200)])
    ...     for i in range(1, 12)]
    >>> res = compact(msgs, dialect="anthropic", budget=6000, max_tokens=500)
    >>> res.head_ids, res.middle_ids, res.tail_ids, len(res.pages)
    ([0], [1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11], 1)
    >>> [m["role"] for m in res.request["messages"]]
    ['user', 'user', 'user', 'assistant', 'user', 'assistant']
    >>> res.tokens_after <= 6000 < res.tokens_before
    True
    """
    prof, most = get_profile(profile), None
    if isinstance(budget, Budget):  # a door's budget (snapglyph.budget_for): text counted at its calibration
        prof, budget, most = calibrated(prof, budget.ratio), budget.tokens, budget.most
    dialect = resolve_dialect(prof, dialect)
    _check_positive(budget=budget, **({} if max_tokens is None else {"max_tokens": max_tokens}))
    allowance = Allowance.of(budget, ledger=ledger)
    renders, cache = _renderers(RenderSettings(prof, cell, mode, family))
    conv = prepare(messages, prof=prof, dialect=dialect, store=store, model=model, max_tokens=max_tokens,
                   tools=tools, recall_tool=recall_tool, draw=cache.draw if cut is None and earlier is None else cache,
                   starts=renders.starts, digests=cache.digests)
    if conv.total <= budget and cut is None:  # a reused cut keeps its pages even where the whole would fit
        return _passthrough(conv, prof)
    steps = {"cut": cut, "earlier": earlier if cut is None else None, "summarize": summarize,
             "recall_tool": recall_tool, "allow_empty_middle": allow_empty_middle}
    try:
        return _shrink(conv, cache, allowance, **steps)
    except BudgetError as e:                # a door's Budget.most: the smallest compaction, where it may still fit
        if cut is not None or most is None or not budget < (e.needed or 0) <= most:
            raise
        floor = e.needed
    return _shrink(conv, cache, Allowance.of(floor, ledger=ledger), **steps)


def _renderers(settings: RenderSettings) -> "tuple[_Middles, CachedDraw]":
    """The middles' renders (one layout of the largest, reused by the smaller) and the page cache over them."""
    renders = _Middles(settings.render_kwargs())
    return renders, CachedDraw(renders.draw, settings.key)


def _passthrough(conv: Conversation, prof: Profile) -> CompactResult:
    """The whole conversation, as it fits: only the many-image rule and the last check apply."""
    conv.store.put_tail(PASSTHROUGH, conv.source)  # a second pass over this request gets its ids back
    sent, rewrites = fit_image_limits(conv.norm, prof)
    sent, fitted = fit_request_bytes(sent, prof, lambda ms: request_bytes(conv.request(ms)))
    req = conv.request(sent)
    check_messages(sent, prof, request=req)
    return _finish(conv, sent, req, [], rewrites=join_counts(rewrites, fitted), tail_ids=[m.id for m in conv.norm],
                   tokens_after=conv.total, passthrough=True)


def _shrink(conv: Conversation, cache: CachedDraw, allowance: Allowance, *, cut, earlier, summarize,
            recall_tool: bool, allow_empty_middle: bool) -> CompactResult:
    """The steps of :func:`compact` for a conversation over its budget: plan the cut (or keep ``cut``), fit the
    pages and the tail to the budget, summarize what is dropped where asked, assemble and check the request.

    The renders share two memos (``settings`` of :func:`compact`: encoded segments and the messages' segments) so
    that the largest middle's layout and the middles drawn after it normalize each segment once."""
    count, budget, ledger = conv.costs.text, allowance.budget, allowance.ledger_share
    user_bound = UserBound(allowance.user_words, count, most=int(USER_PAGE_SHARE * budget) + SECTION_GAP)
    plan, drops = (plan_at(conv, cut), None) if cut is not None else (
        plan_after(conv, budget, earlier, user_bound=user_bound, ledger_share=ledger) if earlier is not None
        else (plan_cut(conv, budget, user_bound=user_bound, ledger_share=ledger), None))
    frozen = cut is not None and cut.user >= 0          # a kept cut writes its user's words as it did
    notes = snapshot_notes(plan.middle, user_cap=cut.user if frozen else allowance.user_words, ledger_share=ledger,
                           recall_tool=conv.recall_tool, count=count, head=conv.norm[:plan.head_end],
                           page_tokens=None if frozen else planned_page_tokens(conv, plan, budget))
    fit = fit_budget(conv, plan, budget, notes, drops) if cut is None else refit(conv, plan, budget, notes, cut)
    if summarize is not None and len(fit.kept) < len(plan.pages):
        fit = add_summary(fit, plan, budget, summarize, conv.costs.text)
    # the caller's store is written here and in _finish: a compaction refused after this line leaves this tail
    # record in it (kept so: the stores stay byte-identical)
    first = conv.norm[plan.head_end].id if plan.head_end < len(conv.norm) else conv.norm[plan.cut].id
    conv.store.put_tail(format_ranges(plan.middle_ids), [m for m in conv.source if m.id >= conv.norm[plan.cut].id],
                        head=[m for m in conv.source if m.id < first])
    out = assemble(conv, plan, fit, recall_tool)
    if cut is not None and len(out.kept) != len(fit.kept):
        raise CutNoLongerFits("the request would exceed the provider's request bytes with the earlier pages")
    cache.keep(plan.middle, plan.pages)
    fit = out.fit  # its head's and tail's costs as their own images were fitted
    final = fit.total(out.kept)
    if final >= conv.before:
        raise BudgetError(f"compaction would not shrink the request: {conv.before} tokens in, {final} out",
                          needed=final, budget=budget)
    # empty only where no page is sent: the newest pages of a long message are what the budget can show of it
    shows_none = bool(plan.middle_ids) and not out.kept and not fit.summary
    dropped = set(out.dropped)  # once: a set a message made the shrink quadratic (18 of 29 s at 4x the history)
    drawn = count_attachments(m for m in conv.norm[plan.head_end:plan.cut] if m.id not in dropped)
    rewrites = join_counts(out.rewrites, Counter({"documents and files drawn in the middle as what they are": drawn}
                                                 if drawn else {}))
    return _finish(conv, out.messages, out.request, out.kept + fit.paged_pages(), rewrites=rewrites,
                   notes=_empty_middle(plan, fit, budget, allow_empty_middle) if shows_none else (),
                   head_ids=[m.id for m in conv.norm[:plan.head_end]], middle_ids=plan.middle_ids,
                   tail_ids=[m.id for m in conv.norm[plan.cut:]], dropped_ids=out.dropped, tokens_after=final,
                   cache_break=_cache_break(conv, out), middle_text_tokens=_shown_text_tokens(conv, plan, out),
                   paged=[(p.message_id, p.kind, p.ordinal) for p in fit.paged],
                   user_cap=fit.notes.user_cap if fit.notes is not None else -1)


class _Middles:
    """The renders of one compaction's middles (:func:`snapglyph.raster.lazy.render_lazy` with the compaction's
    ``settings``): the largest middle is laid out once, for the planner's page starts, and every smaller middle,
    which begins with the same messages, takes its pages up to where they may differ (``like=``) and is laid out
    from there (the aider history's chosen middle: 1 of its 329 pages laid out again)."""

    def __init__(self, settings: dict) -> None:
        self.settings = settings
        self.largest: list = []

    def starts(self, messages: list[Message]) -> list[int]:
        """The first message id of each page of ``messages`` (-1 for none), remembered for :meth:`draw`."""
        self.largest = render_lazy(messages, **self.settings)
        return [p.first_id if p.first_id is not None else -1 for p in self.largest]

    def draw(self, messages: list[Message]) -> list:
        """The lazy pages of ``messages``."""
        return render_lazy(messages, like=self.largest, **self.settings)


def _empty_middle(plan: Plan, fit: Any, budget: int, allowed: bool) -> list[str]:
    """No page of the middle sent (every page dropped for the budget or a limit): refuse (a ``BudgetError`` naming
    the remedy) or, when ``allowed``, the note that says so."""
    ids = format_ranges(plan.middle_ids)
    if not allowed:
        need = fit.total(plan.pages[-2:])
        raise BudgetError(f"every page of the middle would be dropped: messages {ids} would not be shown (the "
                          f"budget is {budget} tokens; showing the newest two pages would need {need}); raise the "
                          f"budget, or allow an empty middle (--allow-empty-middle) to send them only as recallable "
                          f"from the store", needed=need, budget=budget)
    return [f"every page of the middle was dropped: messages {ids} are not shown (recallable from the store by id)"]


def _check_positive(**values: Any) -> None:
    for name, v in values.items():
        if not isinstance(v, int) or v <= 0:
            raise InputError(f"{name} must be a positive number of tokens, not {v!r}")


def _cache_break(conv: Conversation, out: Assembly) -> str | None:
    """Set when the input held a snapshot and the pages not shown changed (a provider's cache of them is lost)."""
    prev = next((m.meta["snapshot"] for m in conv.source_in if m.meta.get("snapshot")), None)
    if prev is None or id_ranges(out.dropped) == [list(r) for r in prev.get("dropped", [])]:
        return None
    return (f"the oldest shown pages changed (now not shown: {format_ranges(out.dropped) or 'none'}); "
            "a provider's prompt cache of the earlier pages is lost")


def _shown_text_tokens(conv: Conversation, plan: Plan, out: Assembly) -> int:
    """Tokens the middle messages shown as pages would cost as text."""
    gone = set(out.dropped)
    return sum(conv.per[i] for i in range(plan.head_end, plan.cut) if conv.norm[i].id not in gone)


def _finish(conv: Conversation, msgs: list[Message], req: dict, pages: list, *, rewrites: Counter | None = None,
            notes: Sequence[str] = (), user_cap: int = -1, **kw: Any) -> CompactResult:
    """Check the request as the provider would, keep every message's source, and build the result: its rewrites
    and notes are the conversation's (the reading) joined with those the later steps returned.

    Raises
    ------
    InternalError
        The compactor built a request the provider would reject (a bug here, not the caller's input).
    """
    from ..providers.validation import validate
    faults = validate(req, conv.dialect, profile=conv.prof)
    if faults:
        raise InternalError(f"the compacted request would be rejected: {faults[0]}"
                            + (f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""), faults=faults)
    conv.store.put(conv.source)
    cut = cut_of(conv, kw["tail_ids"], -1 if kw.get("paged") or kw.get("passthrough") else len(pages), user_cap)
    return CompactResult(request=req, store=conv.store, pages=pages, rewrites=join_counts(conv.rewrites, rewrites or Counter()),
                         profile=conv.prof.name, dialect=conv.dialect, tokens_before=conv.before,
                         notes=[*conv.notes, *notes], renamed_tools=dict(conv.renamed_tools),
                         reader_notes=list(conv.reader_notes), cut=cut, **kw)


def compact_sticky(messages: Any, *, cut: Cut | None = None, **kw: Any) -> tuple[CompactResult, Cut]:
    """Compact ``messages`` with the earlier ``cut`` if its tail still fits; with ``cut=None`` make a new cut.

    Parameters
    ----------
    messages : list of Message, Transcript, or dict
        As for :func:`snapglyph.compact`; the whole conversation, grown since the earlier compaction.
    cut : Cut, optional
        The cut returned by an earlier call for this conversation.
    **kw
        As for :func:`snapglyph.compact` (use the same render settings as the earlier call).

    Returns
    -------
    (CompactResult, Cut)
        The result, and the cut to pass next time (equal to ``cut`` when it was reused).

    Raises
    ------
    CutNoLongerFits
        ``cut`` was given but its tail no longer fits ``budget``, the messages before it changed, or it is no
        longer a cut point after the head.
    BudgetError, InputError, StoreError, LimitError, InternalError
        As :func:`snapglyph.compact`.

    Examples
    --------
    >>> from snapglyph.model.messages import Message, Part
    >>> def conv(n):
    ...     return [Message(0, "user", [Part("text", text="the task")])] + [
    ...         Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"step {i} " + "word " * 300)])
    ...         for i in range(1, n)]
    >>> kw = dict(dialect="anthropic", max_tokens=100, budget=4400)
    >>> first, cut = compact_sticky(conv(12), **{**kw, "budget": 4000})
    >>> again, same = compact_sticky(conv(13), cut=cut, **kw)          # one message more: the same cut
    >>> same == cut, [p.png for p in again.pages] == [p.png for p in first.pages], again.tail_ids[0] == cut.first_tail
    (True, True, True)
    >>> compact_sticky(conv(20), cut=cut, **kw)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snapglyph.compaction.sticky.CutNoLongerFits: the tail from #...
    """
    res = compact(messages, cut=cut, **kw)
    return res, res.cut
