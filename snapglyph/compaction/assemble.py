"""Step 4 of :func:`~snapglyph.compaction.compactor.compact`: assemble the request messages.

``head + [snapshot message] + tail``: the snapshot message holds the kept pages of the middle, then the pages of
paged outputs, then the caller's summary if any, then the snapshot text (:mod:`snapglyph.model.snapshot_text`)
naming the ids shown and not shown, then its reading guide, the user's words and the identifier ledger
(:mod:`.notes`). The head's and tail's own images meet the image limits for the request's real image count
(:func:`~snapglyph.compaction.image_fit.fit_image_limits`: the many-image rule downscales them rather than drop
pages). While the request body exceeds the profile's byte limit, a page is dropped (in the drop order of
:func:`~snapglyph.compaction.dropping.drop_order`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..model.message_ids import id_ranges
from ..model.messages import Message, Part
from ..model.snapshot_text import snapshot_text
from ..providers.limits import check_messages, request_bytes, request_fits
from ..providers.normalize import replace_lone_surrogates
from .dropping import dropped_ids, shown_and_dropped
from .image_fit import fit_image_limits, fit_request_bytes
from .snapshot_message import page_parts

if TYPE_CHECKING:  # pragma: no cover
    from .conversation import Conversation
    from .dropping import Fit
    from .plan import Plan

__all__ = ["Assembly", "assemble", "snapshot_message"]


@dataclass(frozen=True)
class Assembly:
    """The assembled request.

    Attributes
    ----------
    messages : list of Message
        ``head + [snapshot] + tail``.
    request : dict
        Their request body.
    kept : list of Page
        Middle pages sent (fewer than :attr:`Fit.kept` when the request bytes forced a drop).
    dropped : list of int
        Middle ids not shown (or shown only in part).
    fit : Fit
        The fit the request was assembled from, its head's and tail's costs (and tail) as their own images were
        made to fit the request's image count (:func:`fit_image_limits`): count the request's tokens with it.
    rewrites : collections.Counter
        What making those images fit changed, by kind.

    Examples
    --------
    >>> from snapglyph import Message, Part, profile, render
    >>> from snapglyph.compaction import conversation, dropping, plan
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text="word " * 300)]) for i in range(8)]
    >>> conv = conversation.prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None,
    ...                             max_tokens=100, tools=None, recall_tool=False, draw=render)
    >>> cut = plan.plan_cut(conv, 2500)
    >>> fit = dropping.fit_budget(conv, cut, 2500)
    >>> out = assemble(conv, cut, fit, recall_tool=False)
    >>> [m["role"] for m in out.request["messages"]], [p["type"] for p in out.request["messages"][1]["content"]]
    (['user', 'user', 'user', 'assistant'], ['image', 'text'])
    >>> out.fit.total(out.kept) == fit.total(), out.rewrites   # no image of their own to fit
    (True, Counter())
    """

    messages: list[Message]
    request: dict
    kept: list
    dropped: list[int]
    fit: "Fit"
    rewrites: Counter


def snapshot_message(conv: "Conversation", plan: "Plan", fit: "Fit", kept: list, recall_tool: bool) -> Message:
    """The snapshot message for ``kept`` pages of the middle (and the fit's paged outputs and summary): the page
    images, the summary if any, then the snapshot text (ranges line, reading guide, the user's words, the ledger).

    Examples
    --------
    >>> from snapglyph import Message, Part, profile, render
    >>> from snapglyph.compaction import conversation, dropping, plan
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text="word " * 300)]) for i in range(8)]
    >>> conv = conversation.prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None,
    ...                             max_tokens=100, tools=None, recall_tool=False, draw=render)
    >>> cut = plan.plan_cut(conv, 2500)
    >>> fit = dropping.fit_budget(conv, cut, 2500)
    >>> snap = snapshot_message(conv, cut, fit, fit.kept, recall_tool=False)
    >>> snap.id, [p.kind for p in snap.parts], snap.meta
    (1, ['image', 'text'], {'snapshot': {'covered': [[1, 5]], 'dropped': []}})
    >>> snap.parts[-1].text.splitlines()[0]
    'snapglyph snapshot: the images above show messages #1-#5 as pages.'
    """
    middle_ids = plan.middle_ids
    shown, dropped = shown_and_dropped(middle_ids, kept, plan.pages)
    parts = page_parts(list(kept) + fit.paged_pages(), conv.prof)
    if fit.summary:
        parts.append(Part("text", text=replace_lone_surrogates(fit.summary)))
    paged = [(p.message_id, p.kind, p.ordinal, len(p.pages), p.n_rendered) for p in fit.paged]
    sections = fit.notes.sections(shown, conv.costs.pages(kept)) if fit.notes is not None else []
    text = snapshot_text(shown, dropped, recall_tool="recall_messages" if recall_tool else None, paged=paged,
                         sections=sections)
    # The snapshot quotes the user's words and identifiers from the middle's source messages, as they came (their
    # surrogates are counted already: the normalization rewrote the same messages for the verbatim request).
    parts.append(Part("text", text=replace_lone_surrogates(text)))
    snap_id = middle_ids[0] if middle_ids else (conv.norm[plan.head_end - 1].id + 1 if plan.head_end else 0)
    return Message(snap_id, "user", parts, {"snapshot": {"covered": id_ranges(middle_ids),
                                                         "dropped": id_ranges(dropped)}})


def _own_images(conv: Conversation, fit: Fit, h: int, n_pages: int) -> tuple[list[Message], Fit, Counter]:
    """The head and the tail with their own images within the limits of a request that also carries ``n_pages``
    pages (the count and the many-image rule are known only now): the head, a fit whose tail and costs follow
    what changed (a placeholder can cost more than a tiny image: the caller then drops pages), and the changes
    counted. Pages dropped afterwards only lower the count, so what fits here still fits."""
    before = conv.norm[:h] + fit.tail
    own, rewrites = fit_image_limits(before, conv.prof, extra=n_pages)
    delta = [conv.costs.message(b) - conv.costs.message(a) if a is not b else 0 for a, b in zip(before, own)]
    fit = replace(fit, tail=own[h:], base=fit.base + sum(delta[:h]), tail_cost=fit.tail_cost + sum(delta[h:]))
    return own[:h], fit, rewrites


def _own_bytes(conv: Conversation, fit: Fit, head: list[Message], snap: Message
               ) -> tuple[list[Message], Fit, Counter]:
    """The head's and tail's own images made smaller or left out, oldest first, until the request with ``snap``
    (the snapshot message and its pages) fits the byte budget (:func:`~.image_fit.fit_request_bytes`); the fit's
    costs follow what changed."""
    h = len(head)
    before = head + fit.tail
    own, rewrites = fit_request_bytes(before, conv.prof,
                                      lambda ms: request_bytes(conv.request(ms[:h] + [snap] + ms[h:])))
    delta = [conv.costs.message(b) - conv.costs.message(a) if a is not b else 0 for a, b in zip(before, own)]
    fit = replace(fit, tail=own[h:], base=fit.base + sum(delta[:h]), tail_cost=fit.tail_cost + sum(delta[h:]))
    return own[:h], fit, rewrites


def assemble(conv: "Conversation", plan: "Plan", fit: "Fit", recall_tool: bool) -> Assembly:
    """Build the output messages and request; drop pages (in the fit's drop order) while the request bytes exceed
    the limit (or the budget, where the head's and tail's own images changed for the image limits).

    Raises
    ------
    LimitError
        A provider limit the request still breaks (no page left to drop).

    Examples
    --------
    >>> from snapglyph import Message, Part, profile, render
    >>> from snapglyph.compaction import conversation, dropping, plan
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text="word " * 300)]) for i in range(8)]
    >>> conv = conversation.prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None,
    ...                             max_tokens=100, tools=None, recall_tool=False, draw=render)
    >>> cut = plan.plan_cut(conv, 2500)
    >>> fit = dropping.fit_budget(conv, cut, 2500)
    >>> out = assemble(conv, cut, fit, recall_tool=False)
    >>> [m.id for m in out.messages], len(out.kept), out.dropped
    ([0, 1, 6, 7], 1, [])
    """
    kept = list(fit.kept)
    head, fit, rewrites = _own_images(conv, fit, plan.head_end, len(kept) + len(fit.paged_pages()))
    bytes_fitted = False
    while True:
        out = head + [snapshot_message(conv, plan, fit, kept, recall_tool)] + fit.tail
        req = conv.request(out)
        if not bytes_fitted and not request_fits(req, conv.prof):  # the own images first, beside every page
            bytes_fitted = True
            head, fit, more = _own_bytes(conv, fit, head, out[len(head)])
            if more:
                rewrites.update(more)
                continue
        if (request_fits(req, conv.prof) and not (fit.budget and fit.total(kept) > fit.budget)) or not kept:
            check_messages(out, conv.prof, request=req)
            return Assembly(out, req, kept, dropped_ids(plan.middle_ids, kept, plan.pages), fit, rewrites)
        kept = fit.kept_after(len(plan.pages) - len(kept) + 1)
