"""The reconstructor: head verbatim, middle as page images, tail verbatim, inside a token budget.

::

    [system, first user message]   head, verbatim (after the dialect's normalisation)
    [user: page images + short text naming the id ranges shown]   the snapshot (middle)
    [newest messages from a cut point]   tail, verbatim: the longest run that fits the budget

A cut point is a place before a user or an assistant message: never between an assistant message's tool calls and
their results (parallel calls included). The budget covers the whole request: text, tool definitions, page images
and the reserved output tokens (``max_tokens``). The source of every message shown as pages goes to the
:class:`~snapglyph.compaction.store.SourceStore`; compacting a compacted request re-renders the whole middle from that source.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..providers import dialects
from ..errors import BudgetError, InputError, ValidationError
from ..model.messages import Message, Part
from ..providers.profiles import Profile, profile as get_profile
from .snapshot import check_limits, format_ranges, id_ranges, images_in, page_parts, snapshot_text
from .estimate import MESSAGE_OVERHEAD, TokenCosts
from ..providers.request_model import request_model
from .tail_paging import page_out, paged_text
from .second_pass import conversation_key, expand_snapshots
from .store import SourceStore

__all__ = ["CompactResult", "compact", "expand_snapshots"]

DEFAULT_MAX_TOKENS = 4096
"""Output tokens reserved inside the budget when the caller gives none."""


@dataclass
class CompactResult:
    """What :func:`compact` returns; unpacks as ``request, store = compact(...)``.

    Attributes
    ----------
    request : dict
        The request body in the target dialect.
    store : SourceStore
        Sources of every message shown as pages (and of every earlier one it already held).
    pages : list
        The :class:`~snapglyph.raster.render.Page` objects sent (oldest first).
    head_ids, middle_ids, tail_ids : list of int
        Message ids in each part (``middle_ids`` includes ids whose pages were dropped).
    dropped_ids : list of int
        Middle ids whose pages were dropped to meet a limit or the budget (recallable from the store).
    rewrites : collections.Counter
        Normalisation rewrites by kind.
    tokens_before, tokens_after : int
        Estimated request tokens of the input and of the output (reserved output tokens included).
    passthrough : bool
        True when the input already fitted and was passed through (normalised).
    notes : list of str
        Warnings worth reading (e.g. a request model that reads pages by another profile's rules).
    paged : list of tuple
        ``(message id, kind, ordinal)`` of each oversized part of the newest messages shown as pages (the tail holds
        a pointer in its place; see :mod:`snapglyph.compaction.tail_paging`).
    middle_text_tokens : int
        Estimated tokens the messages shown as pages would cost as text (for the image-vs-text comparison).
    cache_break : str or None
        Set when the input held an earlier snapshot and its oldest shown pages changed (more pages dropped for
        the budget or a limit), so a provider's prompt cache of them is lost; None otherwise.
    """

    request: dict
    store: SourceStore
    pages: list = field(default_factory=list)
    head_ids: list[int] = field(default_factory=list)
    middle_ids: list[int] = field(default_factory=list)
    tail_ids: list[int] = field(default_factory=list)
    dropped_ids: list[int] = field(default_factory=list)
    rewrites: Counter = field(default_factory=Counter)
    tokens_before: int = 0
    tokens_after: int = 0
    passthrough: bool = False
    cache_break: str | None = None
    middle_text_tokens: int = 0
    paged: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    profile: str = ""
    dialect: str = ""

    def __iter__(self):
        return iter((self.request, self.store))

    def summary(self) -> str:
        """One line: messages in head/middle/tail, pages, rewrites, estimated tokens before and after."""
        return self._summary() + "".join(f"; note: {n}" for n in self.notes)

    def _summary(self) -> str:
        rw = sum(self.rewrites.values())
        if self.passthrough:
            return (f"snapglyph: input fits the budget, passed through ({len(self.tail_ids)} messages, {rw} rewrites)"
                    f"; tokens {self.tokens_before} -> {self.tokens_after} (estimated, profile {self.profile})")
        dropped = f" ({len(self.dropped_ids)} not shown, recallable)" if self.dropped_ids else ""
        cache = f"; cache break: {self.cache_break}" if self.cache_break else ""
        if self.paged:
            cache = f"; {len(self.paged)} oversized part(s) of the newest messages shown as pages" + cache
        return (f"snapglyph: head {len(self.head_ids)} / middle {len(self.middle_ids)}{dropped} / tail "
                f"{len(self.tail_ids)} messages; {len(self.pages)} pages; {rw} rewrites; tokens "
                f"{self.tokens_before} -> {self.tokens_after} (estimated, profile {self.profile}, "
                f"dialect {self.dialect}){cache}")


def _head_end(msgs: Sequence[Message]) -> int:
    """Index just past the head: the system prompt(s) and the first user turn.

    The first user turn is the first user message together with the user messages right after it (providers
    merge consecutive user messages into one turn; an aborted, empty assistant reply between them is removed by
    normalisation), e.g. a ``/mode`` command followed by the actual task.
    """
    i = 0
    while i < len(msgs) and msgs[i].role == "system":
        i += 1
    while i < len(msgs) and msgs[i].role != "user":
        i += 1
    while i < len(msgs) and msgs[i].role == "user":
        i += 1
    while i < len(msgs) and msgs[i].role == "tool":
        i += 1
    return i


def _to_messages(source: Any) -> tuple[list[Message], list[dict], str | None]:
    if isinstance(source, (dict, list)) and (not source or not isinstance(source, list)
                                             or not isinstance(source[0], Message)):
        from ..readers.registry import from_request
        t = from_request(source)
        return t.messages, t.tools, t.model
    if hasattr(source, "messages") and hasattr(source, "tools"):
        return list(source.messages), list(source.tools), getattr(source, "model", None)
    if not isinstance(source, (list, tuple)):
        raise InputError(f"compact() takes a list of snapglyph.Message, a Transcript, or a request body (a dict "
                         f"or a list of provider messages), not {type(source).__name__}")
    msgs = list(source)
    if not all(isinstance(m, Message) for m in msgs):
        raise InputError("compact() takes a list of snapglyph.Message, a Transcript, or a request body (a dict "
                         "or a list of provider messages)")
    return msgs, [], None


def compact(messages: Any, *, profile: "str | Profile" = "claude", dialect: str | None = None,
            budget: int = 100_000, store: SourceStore | None = None, model: str | None = None,
            max_tokens: int = DEFAULT_MAX_TOKENS, tools: Sequence[dict] | None = None,
            cell: tuple[int, int] | None = None, mode: str = "dense",
            summarise: Callable[[list[Message]], str] | None = None, family: str | None = None,
            recall_tool: bool = False) -> CompactResult:
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
    budget : int
        The most the whole request may cost, in (estimated) tokens, reserved output included.
    store : SourceStore, optional
        Source store; required when the input holds a snapshot. A new in-memory store is made when omitted.
    model : str, optional
        ``model`` of the request (default: the source's model, else the profile name).
    max_tokens : int
        Output tokens reserved inside the budget.
    tools : sequence of dict, optional
        Neutral tool definitions (``{"name", "description", "parameters"}``) to add to the source's own.
    cell : (int, int), optional
        Cell ``(cell_w, cell_h)`` in pixels; default: the profile's.
    mode : str
        Layout mode, ``dense`` or ``lines``.
    family : str, optional
        Font family, ``outline`` or ``bitmap``; default: the cell's measured default.
    recall_tool : bool
        Add the ``recall_messages`` tool (:func:`snapglyph.recall_tool`) to the request and name it in the snapshot
        text; the caller answers its calls with :func:`snapglyph.recall` on the returned store.
    summarise : callable, optional
        ``summarise(messages) -> str``, the only tier that may call a model: when pages must be dropped to meet
        the budget or a limit, it gets the source of the messages no longer shown, and its text joins the
        snapshot message (inside the budget).

    Returns
    -------
    CompactResult
        Unpacks as ``(request, store)``; ``.summary()`` gives the one-line report.

    Raises
    ------
    InputError
        Bad arguments (unknown dialect, non-positive budget, wrong types), or a conversation with no user message.
    StoreError
        A snapshot in the input whose covered ids the store lacks, or a store that belongs to another
        conversation.
    ValidationError
        The request would break the dialect's grammar or the profile's limits (a last check; not expected).
    BudgetError
        The head, the newest round and the reserved output cannot fit the budget, or the result would not be
        smaller than the input; the message names both numbers.
    LimitError
        A provider limit (images per request, request bytes) cannot be met.
    """
    prof = get_profile(profile)
    dialect = dialect or getattr(prof, "dialect", None) or ("anthropic" if prof.name.startswith("claude")
                                                            else "openai")
    if dialect not in dialects.DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; known dialects: {', '.join(dialects.DIALECTS)}")
    if not isinstance(budget, int) or budget <= 0:
        raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
    if not isinstance(max_tokens, int) or max_tokens <= 0:
        raise InputError(f"max_tokens must be a positive number of tokens, not {max_tokens!r}")
    source_in, src_tools, src_model = _to_messages(messages)
    all_tools = list(src_tools) + list(tools or [])
    if recall_tool:
        from .recall import RECALL_TOOL_NAME, recall_tool as _recall_def
        spec = _recall_def("responses")
        all_tools = [t for t in all_tools if t.get("name") != RECALL_TOOL_NAME]
        all_tools.append({"name": spec["name"], "description": spec["description"],
                          "parameters": spec["parameters"]})
    model, notes = request_model(model, src_model, prof)
    key = conversation_key(source_in)
    if store is not None:
        store.bind(key)
    source = expand_snapshots(source_in, store)
    store = store if store is not None else SourceStore()
    store.bind(key)
    costs = TokenCosts(prof)

    norm, rewrites = dialects.normalise(source, dialect=dialect)
    if not any(m.role in ("user", "tool") for m in norm):
        raise InputError("nothing to send: the conversation has no user message (after removing empty ones)")
    tool_defs = dialects.tool_definitions(all_tools, norm, dialect=dialect)
    fixed = costs.text(json.dumps(tool_defs, ensure_ascii=False)) if tool_defs else 0
    fixed += max_tokens
    per = [costs.message(m) for m in norm]
    before = fixed + sum(costs.message(m) for m in source)
    total_norm = fixed + sum(per)

    def finish(msgs: list[Message], pages: list, **kw: Any) -> CompactResult:
        req = dialects.to_request(msgs, dialect=dialect, model=model, max_tokens=max_tokens, tools=all_tools)
        # Never emit a request the provider would reject: check it as the provider would.
        from ..providers.validation import validate
        faults = validate(req, dialect, profile=prof)
        if faults:
            raise ValidationError(f"the compacted request would be rejected: {faults[0]}"
                                  + (f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""), faults=faults)
        # Keep every message's source, so that any id is recallable.
        store.put(source)
        return CompactResult(request=req, store=store, pages=pages, rewrites=rewrites, profile=prof.name,
                             dialect=dialect, tokens_before=before, notes=notes, **kw)

    if total_norm <= budget:
        check_limits(norm, prof)
        return finish(norm, [], tail_ids=[m.id for m in norm], tokens_after=total_norm, passthrough=True)

    h = _head_end(norm)
    head, head_cost = norm[:h], sum(per[:h])
    if h >= len(norm):
        raise BudgetError(f"the head alone (the system prompt and the first user turn, {total_norm} tokens with the "
                          f"reserved output) exceeds the budget of {budget} tokens", needed=total_norm, budget=budget)
    # Cut points after the head; with none, the tail is everything after the head (an empty middle), and only
    # paging its oversized parts can help.
    cuts = [c for c in range(h + 1, len(norm)) if norm[c].role in ("user", "assistant")] or [h]
    suffix = [0] * (len(norm) + 1)
    for i in range(len(norm) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + per[i]
    head_last = norm[h - 1].id if h else -1

    def middle_sources(c: int) -> list[Message]:
        return [m for m in source if head_last < m.id < norm[c].id]

    from ..raster.render import render_document
    from ..model.document import build_document

    def render_middle(c: int) -> list:
        doc = build_document(middle_sources(c), header_row=mode == "lines")
        return render_document(doc, profile=prof, cell=cell, mode=mode, family=family)

    snap_text_cost = costs.text(snapshot_text([0, 10**6], [0, 10**6])) + MESSAGE_OVERHEAD
    page_cap = _page_caps(norm, h, prof)

    def cost(c: int, pages: list) -> int:
        kept = pages[-page_cap[c]:] if page_cap[c] else []
        return fixed + head_cost + suffix[c] + (costs.pages(kept) + snap_text_cost if kept else 0)

    # One render of the largest middle gives every smaller middle's pages (pages are append-stable); the last page
    # of a smaller middle is charged at full height here, so the estimate never undercounts.
    full = render_middle(cuts[-1])
    full_page_cost = prof.image_tokens(*prof.page_size)

    min_page_cost = prof.image_tokens(prof.page_size[0], prof.patch)

    first_ids = [p.first_id if p.first_id is not None else -1 for p in full]  # non-decreasing

    def n_pages(c: int) -> int:
        return min(bisect.bisect_right(first_ids, norm[c].id - 1), page_cap[c])

    def estimate(c: int) -> int:
        """Never below the exact cost: the last page charged at full height."""
        n = n_pages(c)
        return fixed + head_cost + suffix[c] + (n * full_page_cost + snap_text_cost if n else 0)

    def lower(c: int) -> int:
        """Never above the exact cost: the last page charged at one patch row."""
        n = n_pages(c)
        return fixed + head_cost + suffix[c] + ((n - 1) * full_page_cost + min_page_cost + snap_text_cost if n else 0)

    # The longest tail that fits: cut points from the oldest on; the bounds settle most of them, and a cut point
    # between them is rendered exactly (the cost is not monotonic: a longer tail can mean one page less).
    chosen, pages, renders = None, None, 0
    for c in cuts:
        if lower(c) > budget:
            continue
        if estimate(c) <= budget:
            chosen = c
            break
        if renders >= 24:  # enough exact renders: settle the rest by the bounds alone
            continue
        renders += 1
        trial = render_middle(c)
        if cost(c, trial) <= budget:
            chosen, pages = c, trial
            break
    if chosen is not None:
        if pages is None:
            pages = render_middle(chosen)
    else:
        # Even the newest round with every page does not fit: the newest pages and the tail share what the head
        # leaves, the tail taking the longest run within half of it (at least the newest round).
        half = (budget - fixed - head_cost) // 2
        chosen = next((c for c in cuts if suffix[c] <= half), cuts[-1])
        pages = render_middle(chosen) if chosen != cuts[-1] else full
    # The newest round alone too big: show its largest user and tool outputs as pages (pointers stay in the tail).
    tail, tail_cost, paged = norm[chosen:], suffix[chosen], []
    if tail_cost > budget - fixed - head_cost - snap_text_cost:
        by_id = {m.id: m for m in source}

        def render_msgs(ms: list[Message]) -> list:
            doc = build_document(ms, header_row=mode == "lines")
            return render_document(doc, profile=prof, cell=cell, mode=mode, family=family)
        tail, paged = page_out(tail, sources=by_id, need=tail_cost - (budget - fixed - head_cost - snap_text_cost),
                               text_cost=costs.text, render=render_msgs, page_cost=costs.pages)
        tail_cost = sum(costs.message(m) for m in tail)
    paged_pages = [pg for pp in paged for pg in pp.pages]

    def total(kept_pages: list) -> int:
        imgs = list(kept_pages) + paged_pages
        return fixed + head_cost + tail_cost + (costs.pages(imgs) + snap_text_cost if imgs else 0)

    keep = min(len(pages), max(0, page_cap[chosen] - len(paged_pages)))
    # Drop the oldest pages until the request fits (their ids stay recallable from the store).
    while keep > 0 and total(pages[len(pages) - keep:]) > budget:
        keep -= 1
    kept = pages[len(pages) - keep:] if keep else []
    final = total(kept)
    # Still too big with no middle page: keep only the newest pages of the largest paged outputs (the end of a log
    # or listing is what an agent reads first; the whole text stays recallable).
    while final > budget and any(len(pp.pages) > 1 for pp in paged):
        big_part = max((pp for pp in paged if len(pp.pages) > 1), key=lambda pp: costs.pages(pp.pages))
        big_part.pages = big_part.pages[1:]
        paged_pages[:] = [pg for pp in paged for pg in pp.pages]
        final = total(kept)
    if final > budget:
        need = final if paged else fixed + head_cost + tail_cost
        big = max(range(chosen, len(norm)), key=lambda i: per[i])
        raise BudgetError(
            f"cannot fit the budget of {budget} tokens: the head ({head_cost}), the newest round "
            f"({tail_cost}" + (f", and {len(paged_pages)} pages for its largest parts" if paged else "")
            + "), tool definitions and the reserved "
            f"output ({fixed}) already need {need} tokens; the largest message of that round is #{norm[big].id} "
            f"({norm[big].role}, {per[big]} tokens)",
            needed=need, budget=budget)

    mid_src = middle_sources(chosen)
    summary = None
    if summarise is not None and keep < len(pages):
        # Tier (d): the caller's summariser, the only tier that calls a model, stands in for the pages dropped.
        for _ in range(3):
            gone = set(_dropped_ids([m.id for m in mid_src], kept, pages))
            summary = summarise([m for m in mid_src if m.id in gone])
            if not isinstance(summary, str) or not summary.strip():
                raise InputError("the summarise callback must return non-empty text")
            summary = f"Summary of messages {format_ranges(sorted(gone))} (not shown as pages):\n{summary}"
            extra = costs.text(summary) + 2
            while keep > 0 and total(pages[len(pages) - keep:]) + extra > budget:
                keep -= 1
            kept = pages[len(pages) - keep:] if keep else []
            if set(_dropped_ids([m.id for m in mid_src], kept, pages)) == gone:
                break
        final = total(kept) + extra
        if final > budget:
            raise BudgetError(f"the summary ({extra} tokens) does not fit the budget of {budget} tokens",
                              needed=final, budget=budget)
    tail_first = norm[chosen].id
    store.put_tail(format_ranges([m.id for m in mid_src]), [m for m in source if m.id >= tail_first])
    middle_ids = [m.id for m in mid_src]
    # Pages that would cost more than the text they replace are never chosen: the search above starts from the
    # longest tail, so a middle is only imaged when that is what makes the request fit.
    dropped, kept, out = _assemble(head, tail, kept, pages, middle_ids, prof, dialect, model,
                                   max_tokens, all_tools, summary, recall_tool, paged, head_last + 1)
    final = total(kept)
    if summary:
        final += costs.text(summary) + 2
    if final >= before:
        raise BudgetError(f"compaction would not shrink the request: {before} tokens in, {final} out",
                          needed=final, budget=budget)
    prev = next((m.meta["snapshot"] for m in source_in if m.meta.get("snapshot")), None)
    cache_break = None
    if prev is not None and id_ranges(dropped) != [list(r) for r in prev.get("dropped", [])]:
        cache_break = (f"the oldest shown pages changed (now not shown: {format_ranges(dropped) or 'none'}); "
                       "a provider's prompt cache of the earlier pages is lost")
    gone = set(dropped)
    shown_text = sum(per[i] for i in range(h, chosen) if norm[i].id not in gone)
    return finish(out, kept + paged_pages, head_ids=[m.id for m in head], middle_ids=middle_ids,
                  tail_ids=[m.id for m in norm[chosen:]], dropped_ids=dropped, tokens_after=final,
                  cache_break=cache_break, middle_text_tokens=shown_text,
                  paged=[(p.message_id, p.kind, p.ordinal) for p in paged])


def _page_caps(norm: Sequence[Message], h: int, prof: Profile) -> list[int]:
    """For each cut ``c``, how many pages a request may carry beside the images of the head and ``norm[c:]``.

    One pass from the end (linear in the messages): the count of verbatim images and whether one of them is above
    the many-image side limit, where the pages must keep the request at or below the count that triggers it.
    """
    side = prof.many_image_max_side

    def big(ims: list[Part]) -> bool:
        return side is not None and any(max(q.width or 0, q.height or 0) > side for q in ims)

    head_imgs = images_in(norm[:h])
    n, is_big = len(head_imgs), big(head_imgs)
    caps = [0] * (len(norm) + 1)
    for c in range(len(norm), -1, -1):
        if c < len(norm):
            ims = images_in([norm[c]])
            n += len(ims)
            is_big = is_big or big(ims)
        cap = prof.max_images - n
        if is_big and prof.many_image_threshold is not None:
            cap = min(cap, prof.many_image_threshold - n)
        caps[c] = max(0, cap)
    return caps


def _dropped_ids(middle_ids: list[int], kept: list, pages: list) -> list[int]:
    """Middle ids not shown on the kept pages; a message whose start is on a dropped page counts too."""
    if len(kept) == len(pages):
        return []
    if not kept:
        return list(middle_ids)
    first = kept[0].first_id
    before = pages[len(pages) - len(kept) - 1]
    partial = before.last_id == first
    return [i for i in middle_ids if i < first or (partial and i == first)]


def _assemble(head: list[Message], tail: list[Message], kept: list, pages: list, middle_ids: list[int],
              prof: Profile, dialect: str, model: str, max_tokens: int, tools: list,
              summary: str | None = None, recall_tool: bool = False, paged: Sequence[Any] = (),
              snap_id: int = 0) -> tuple[list, list, list]:
    """Build the snapshot message and the output messages; drop the oldest pages while the request bytes exceed
    the profile's limit. Returns ``(dropped ids, kept pages, output messages)``."""
    while True:
        dropped = _dropped_ids(middle_ids, kept, pages)
        extra = [pg for pp in paged for pg in pp.pages]
        parts = page_parts(list(kept) + extra, prof) + ([Part("text", text=summary)] if summary else [])
        first = kept[0].first_id if kept else None
        shown = [i for i in middle_ids if first is not None and i >= first]
        name = "recall_messages" if recall_tool else None
        parts.append(Part("text", text=snapshot_text(shown, dropped, recall_tool=name, in_full=paged_text(paged))))
        snap = Message(middle_ids[0] if middle_ids else snap_id, "user", parts,
                       {"snapshot": {"covered": id_ranges(middle_ids), "dropped": id_ranges(dropped)}})
        out = head + [snap] + tail
        req = dialects.to_request(out, dialect=dialect, model=model, max_tokens=max_tokens, tools=tools)
        nbytes = len(json.dumps(req, ensure_ascii=False).encode("utf-8"))
        if nbytes <= prof.max_request_bytes or not kept:
            check_limits(out, prof, request=req)
            return dropped, kept, out
        kept = kept[1:]
