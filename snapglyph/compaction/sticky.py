"""Sticky compaction: compact a grown conversation again with the cut an earlier compaction made, while the tail
after that cut still fits.

A client that does not know about compaction (an agent behind ``snapglyph serve``) sends its whole history on
every request. Compacting each request afresh would move the cut as the conversation grows, and every move
changes the pages, so a provider's prompt cache never keeps them. :func:`compact_sticky` instead reuses the
earlier :class:`Cut`: the same head, the same middle (so byte-identical pages: the render is deterministic and
depends on the middle's source only) and a verbatim tail that grows by what was added, until that tail no longer
fits the budget. Only then (:class:`CutNoLongerFits`) does the caller make a new cut.

The pages of a middle are kept in a small in-memory cache keyed by the middle's source and the render settings,
so a reused cut costs no render.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .._config import DEFAULT_MAX_TOKENS, PAGE_CACHE_SIZE
from ..errors import BudgetError
from ..model.ids import format_ranges
from ..providers.profiles import Profile, profile as get_profile
from .assemble import assemble
from .compactor import _finish, compact
from .conversation import prepare, resolve_dialect
from .dropping import Fit
from .plan import Plan, head_end, page_caps
from .result import CompactResult
from .store import SourceStore, message_to_dict

__all__ = ["Cut", "CutNoLongerFits", "compact_sticky", "prefix_fingerprint"]

_PAGE_CACHE: "OrderedDict[tuple, list]" = OrderedDict()


class CutNoLongerFits(BudgetError):
    """The earlier cut cannot be reused: its tail no longer fits the budget, or the messages before it changed,
    or it is no longer a cut point. Make a new cut."""


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
        Pages of the middle that were sent (the newest ``kept``); ``-1`` when the cut cannot be reused (the tail
        had oversized outputs shown as pages).
    """

    first_tail: int
    prefix: str
    kept: int

    def to_json(self) -> dict:
        """Plain data (for a state file)."""
        return {"first_tail": self.first_tail, "prefix": self.prefix, "kept": self.kept}


def prefix_fingerprint(messages: list, first_tail: int) -> str:
    """16 hex digits identifying the non-system messages with ids below ``first_tail``, exactly (system prompts
    are left out: agents rebuild them on every call).

    Examples
    --------
    >>> from snapglyph.model.messages import Message, Part
    >>> msgs = [Message(i, r, [Part("text", text=t)]) for i, (r, t) in enumerate(
    ...     [("system", "today"), ("user", "task"), ("assistant", "ok"), ("user", "more")])]
    >>> a = prefix_fingerprint(msgs, 3)
    >>> msgs[0] = Message(0, "system", [Part("text", text="tomorrow")])
    >>> a == prefix_fingerprint(msgs, 3), a == prefix_fingerprint(msgs, 2)
    (True, False)
    """
    data = [message_to_dict(m) for m in messages if m.id < first_tail and m.role != "system"]
    return hashlib.sha256(json.dumps(data, ensure_ascii=True, sort_keys=True).encode()).hexdigest()[:16]


def _cached_pages(draw: Any, middle: list, key: tuple) -> list:
    pages = _PAGE_CACHE.get(key)
    if pages is None:
        pages = draw(middle)
        _PAGE_CACHE[key] = pages
        while len(_PAGE_CACHE) > PAGE_CACHE_SIZE:
            _PAGE_CACHE.popitem(last=False)
    else:
        _PAGE_CACHE.move_to_end(key)
    return pages


def compact_sticky(messages: Any, *, cut: Cut | None = None, profile: "str | Profile" = "claude",
                   dialect: str | None = None, budget: int = 100_000, store: SourceStore | None = None,
                   model: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS,
                   cell: tuple[int, int] | None = None, mode: str = "dense",
                   family: str | None = None, allow_empty_middle: bool = False) -> tuple[CompactResult, Cut]:
    """Compact ``messages`` with the earlier ``cut`` if its tail still fits ``budget``; with ``cut=None`` make a
    new cut (:func:`snapglyph.compact`).

    Parameters
    ----------
    messages : list of Message, Transcript, or dict
        As for :func:`snapglyph.compact`; the whole conversation, grown since the earlier compaction.
    cut : Cut, optional
        The cut returned by an earlier call for this conversation.
    profile, dialect, budget, store, model, max_tokens, cell, mode, family, allow_empty_middle
        As for :func:`snapglyph.compact` (use the same render settings as the earlier call).

    Returns
    -------
    (CompactResult, Cut)
        The result, and the cut to pass next time (the same ``cut`` when it was reused).

    Raises
    ------
    CutNoLongerFits
        ``cut`` was given but its tail no longer fits ``budget``, the messages before it changed, or it is no
        longer a cut point after the head.
    BudgetError, InputError, StoreError, LimitError, InternalError
        As :func:`snapglyph.compact` (a new cut).

    Examples
    --------
    >>> from snapglyph.model.messages import Message, Part
    >>> def conv(n):
    ...     return [Message(0, "user", [Part("text", text="the task")])] + [
    ...         Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"step {i} " + "word " * 300)])
    ...         for i in range(1, n)]
    >>> kw = dict(dialect="anthropic", max_tokens=100, budget=3800)
    >>> first, cut = compact_sticky(conv(12), **{**kw, "budget": 3400})
    >>> again, same = compact_sticky(conv(13), cut=cut, **kw)          # one message more: the same cut
    >>> same == cut, [p.png for p in again.pages] == [p.png for p in first.pages], len(again.tail_ids)
    (True, True, 2)
    >>> compact_sticky(conv(16), cut=cut, **kw)
    Traceback (most recent call last):
    ...
    snapglyph.compaction.sticky.CutNoLongerFits: the tail from #11 no longer fits: 3804 tokens > 3800
    """
    if cut is None:
        res = compact(messages, profile=profile, dialect=dialect, budget=budget, store=store, model=model,
                      max_tokens=max_tokens, cell=cell, mode=mode, family=family,
                      allow_empty_middle=allow_empty_middle)
        first = res.tail_ids[0] if res.tail_ids else 0
        from .conversation import to_messages
        kept = -1 if res.paged or res.passthrough else len(res.pages)
        return res, Cut(first, prefix_fingerprint(to_messages(messages)[0], first), kept)
    if cut.kept < 0:
        raise CutNoLongerFits("the earlier cut showed outputs of its tail as pages; a new cut is needed")
    prof = get_profile(profile)
    dialect = resolve_dialect(prof, dialect)
    from ..raster.render import render
    draw = functools.partial(render, profile=prof, cell=cell, mode=mode, family=family)
    conv = prepare(messages, prof=prof, dialect=dialect, store=store, model=model, max_tokens=max_tokens,
                   tools=None, recall_tool=False, draw=draw)
    return _reuse(conv, cut, budget, (prof.name, cell, mode, family)), cut


def _reuse(conv: Any, cut: Cut, budget: int, settings: tuple) -> CompactResult:
    """The request with the earlier cut; raises :class:`CutNoLongerFits` when it cannot be reused."""
    ids = [m.id for m in conv.norm]
    h = head_end(conv.norm)
    c = ids.index(cut.first_tail) if cut.first_tail in ids else -1
    if c <= h or conv.norm[c].role not in ("user", "assistant"):
        raise CutNoLongerFits(f"message #{cut.first_tail} is no longer a cut point after the head")
    if prefix_fingerprint(conv.source, cut.first_tail) != cut.prefix:
        raise CutNoLongerFits(f"the messages before #{cut.first_tail} changed")
    head_last = conv.norm[h - 1].id if h else -1
    middle = [m for m in conv.source if head_last < m.id < cut.first_tail]
    pages = _cached_pages(conv.draw, middle, (*settings, cut.prefix, cut.first_tail))
    cap = page_caps(conv.norm, h, conv.prof)[c]
    if cut.kept > min(len(pages), cap):
        raise CutNoLongerFits("the earlier pages no longer fit the provider's image limits")
    kept = pages[len(pages) - cut.kept:] if cut.kept else []
    plan = Plan(h, c, pages, cap, middle, True, 0)
    fit = Fit(conv.norm[c:], sum(conv.per[c:]), [], kept, conv.fixed + sum(conv.per[:h]), conv.snapshot_text_cost,
              conv.costs.pages)
    for name, value in (("pages", pages), ("middle_ids", plan.middle_ids), ("budget", budget),
                        ("order", list(range(len(pages))))):
        if hasattr(fit, name):                       # newer Fit fields: drop the oldest first, as the cut was made
            setattr(fit, name, value)
    if fit.total() > budget:
        raise CutNoLongerFits(f"the tail from #{cut.first_tail} no longer fits: {fit.total()} tokens > "
                              f"{budget}", needed=fit.total(), budget=budget)
    conv.store.put_tail(format_ranges(plan.middle_ids), [m for m in conv.source if m.id >= cut.first_tail])
    out = assemble(conv, plan, fit, False)
    if len(out.kept) != len(kept):
        raise CutNoLongerFits("the request would exceed the provider's request bytes with the earlier pages")
    return _finish(conv, out.messages, out.request, out.kept, head_ids=ids[:h], middle_ids=plan.middle_ids,
                   tail_ids=ids[c:], dropped_ids=out.dropped, tokens_after=fit.total(out.kept))
