"""The free tiers below the snapshot, and the ladder that applies every tier, cheapest first, until a budget is met.

Tiers (cheapest first; each usable alone):

(a) omission    old tool results that carried nothing new (empty, an exit code alone, an empty listing, a repeat of
                an earlier identical output of the same tool) become a one-line placeholder naming the tool and size;
(b) image drop  images older than the newest ``keep_images`` become a placeholder with their kind and pixel size;
(c) snapshot    head verbatim, middle as pages, tail verbatim (:func:`snapglyph.compaction.compactor.compact`);
(d) summary     an optional caller-supplied summarizer, the only tier that calls a model, used last.

Whatever a tier removes goes to the source store first (the original message, by id), so every word stays
recallable: :func:`snapglyph.recall` returns it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from .._config import DEFAULT_BUDGET, KEEP_IMAGES, PROTECT_LAST
from ..model.document import placeholder_for_image
from ..errors import InputError
from ..model.messages import Message, Part, images_in
from .store import SourceStore

__all__ = ["LadderResult", "TierReport", "compact_ladder", "drop_images", "omit_uneventful"]

_EXIT_ONLY = re.compile(r"^\s*(\(no output\)|no output|exit(ed)?( with)?( code| status)?:?\s*-?\d+|"
                        r"\[?exit code:?\s*-?\d+\]?|returncode:?\s*-?\d+|process exited with code \d+|"
                        r"total 0|ok|done|success)\s*\.?\s*$", re.IGNORECASE)


@dataclass
class TierReport:
    """What one tier did.

    Attributes
    ----------
    tier : str
        ``omission``, ``image drop``, ``snapshot`` or ``summary``.
    ids : list of int
        Message ids it changed (their originals are in the store).
    detail : str
        Human-readable summary (counts, sizes).

    Examples
    --------
    >>> TierReport("image drop", [4, 9], "2 images replaced by placeholders").ids
    [4, 9]
    """

    tier: str
    ids: list[int] = field(default_factory=list)
    detail: str = ""


def _size(text: str) -> str:
    n = len(text.encode("utf-8", "surrogatepass"))
    lines = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
    return f"{lines} lines, {n} bytes"


def _uneventful(text: str, seen: set[tuple[str, str]], name: str) -> str | None:
    """Why a tool result carried nothing new, or None."""
    body = text.strip()
    if not body:
        return "empty"
    if _EXIT_ONLY.match(body):
        return "status only"
    key = (name, body)
    if key in seen:
        return "repeats an earlier identical output"
    return None


def omit_uneventful(messages: Sequence[Message], *, protect_from: int, store: SourceStore) -> tuple[
        list[Message], TierReport]:
    """Tier (a): replace old tool results that carried nothing new by a one-line placeholder.

    Parameters
    ----------
    messages : sequence of Message
    protect_from : int
        Index into ``messages``; results at or after it are never touched (the newest work).
    store : SourceStore
        Receives the original of every changed message.

    Returns
    -------
    messages : list of Message
        New list; changed messages carry ``meta["reduced"] = "omission"``.
    report : TierReport

    Examples
    --------
    >>> from snapglyph import SourceStore
    >>> ls = "".join(f"src/mod{k}.py\\n" for k in range(20))
    >>> msgs = [Message(i, "tool", [Part("tool_result", name="ls", call_id=f"c{i}", content=[Part("text", text=ls)])])
    ...         for i in (1, 2, 3)]
    >>> out, report = omit_uneventful(msgs, protect_from=2, store=SourceStore())
    >>> print(out[1].parts[0].result_text())
    [omitted: ls result, 20 lines, 250 bytes, repeats an earlier identical output; recall #2]
    >>> report.ids, out[2] is msgs[2]    # the newest result is protected
    ([2], True)
    """
    seen: set[tuple[str, str]] = set()
    out: list[Message] = []
    ids: list[int] = []
    for idx, m in enumerate(messages):
        if m.role != "tool":
            out.append(m)
            continue
        parts: list[Part] = []
        changed = False
        for p in m.parts:
            if p.kind != "tool_result" or any(q.kind == "image" for q in p.content):
                parts.append(p)
                continue
            text = p.result_text()
            why = _uneventful(text, seen, p.name) if idx < protect_from else None
            seen.add((p.name, text.strip()))
            if why is None:
                parts.append(p)
                continue
            note = f"[omitted: {p.name or 'tool'} result, {_size(text)}, {why}; recall #{m.id}]"
            if len(note) >= len(text):  # a placeholder must never be longer than what it replaces
                parts.append(p)
                continue
            parts.append(replace(p, content=[Part("text", text=note)]))
            changed = True
        if changed:
            if m.id not in store:
                store.put([m])
            ids.append(m.id)
            out.append(Message(m.id, m.role, parts, {**m.meta, "reduced": "omission"}))
        else:
            out.append(m)
    return out, TierReport("omission", ids, f"{len(ids)} uneventful tool results replaced")


def drop_images(messages: Sequence[Message], *, keep: int, store: SourceStore) -> tuple[list[Message], TierReport]:
    """Tier (b): replace every image but the newest ``keep`` by a placeholder with its kind and pixel size.

    Parameters
    ----------
    messages : sequence of Message
    keep : int
        How many of the newest images stay (>= 0).
    store : SourceStore
        Receives the original of every changed message.

    Raises
    ------
    InputError
        If ``keep`` is negative.

    Examples
    --------
    >>> from snapglyph import SourceStore
    >>> img = Part("image", media_type="image/png", data="iVBORw0KGgo=", width=640, height=480)
    >>> msgs = [Message(1, "user", [img]), Message(2, "user", [Part("text", text="and this one"), img])]
    >>> out, report = drop_images(msgs, keep=1, store=SourceStore())
    >>> out[0].parts[0].text, [p.kind for p in out[1].parts]
    ('[image image/png 640x480 0.0 KB] dropped; recall #1', ['text', 'image'])
    >>> report.ids, report.detail
    ([1], '1 images replaced by placeholders')
    """
    if keep < 0:
        raise InputError(f"keep must be >= 0 images, not {keep}")
    positions = []
    for i, m in enumerate(messages):
        for j, p in enumerate(m.parts):
            if p.kind == "image":
                positions.append((i, j, None))
            elif p.kind == "tool_result":
                positions.extend((i, j, k) for k, q in enumerate(p.content) if q.kind == "image")
    drop = positions[:max(0, len(positions) - keep)]
    if not drop:
        return list(messages), TierReport("image drop", [], "no image to drop")
    out = list(messages)
    ids: list[int] = []
    by_msg: dict[int, list[tuple[int, Any]]] = {}
    for i, j, k in drop:
        by_msg.setdefault(i, []).append((j, k))
    for i, places in by_msg.items():
        m = messages[i]
        parts = list(m.parts)
        for j, k in places:
            if k is None:
                parts[j] = Part("text", text=placeholder_for_image(parts[j]) + f" dropped; recall #{m.id}")
            else:
                content = list(parts[j].content)
                content[k] = Part("text", text=placeholder_for_image(content[k]) + f" dropped; recall #{m.id}")
                parts[j] = replace(parts[j], content=content)
        if m.id not in store:
            store.put([m])
        ids.append(m.id)
        out[i] = Message(m.id, m.role, parts, {**m.meta, "reduced": "image drop"})
    return out, TierReport("image drop", ids, f"{len(drop)} images replaced by placeholders")


@dataclass
class LadderResult:
    """What :func:`compact_ladder` returns; unpacks as ``request, store``.

    Attributes
    ----------
    request : dict
    store : SourceStore
    reports : list of TierReport
        One per tier that ran, in order.
    result : CompactResult
        The final compaction (its ``tokens_before`` is the input's estimate before any tier).

    Examples
    --------
    >>> from snapglyph import Message, Part, compact_ladder
    >>> msgs = [Message(0, "user", [Part("text", text="hi")]), Message(1, "assistant", [Part("text", text="hello")])]
    >>> request, store = compact_ladder(msgs, dialect="anthropic")      # it fits: passed through
    >>> [m["role"] for m in request["messages"]]
    ['user', 'assistant']
    """

    request: dict
    store: SourceStore
    reports: list[TierReport]
    result: Any

    def __iter__(self):
        return iter((self.request, self.store))


def compact_ladder(messages: Any, *, profile: Any = "claude", dialect: str | None = None, budget: int = DEFAULT_BUDGET,
                   store: SourceStore | None = None, keep_images: int = KEEP_IMAGES, protect_last: int = PROTECT_LAST,
                   summarize: Callable[[list[Message]], str] | None = None, **kw: Any) -> LadderResult:
    """Apply the tiers cheapest first until the request fits ``budget`` tokens.

    Omission and image drop run on messages older than the newest ``protect_last`` messages; if the request then
    fits it is passed through (normalized); otherwise the snapshot runs; if the snapshot must leave pages out and
    a ``summarize`` callback is given, the messages left out are summarized by it (the last tier).

    Parameters
    ----------
    messages : list of Message, Transcript or request dict
    profile, dialect, budget, store
        As for :func:`snapglyph.compact`.
    keep_images : int
        Images kept by the image-drop tier (the newest).
    protect_last : int
        Number of newest messages no free tier touches.
    summarize : callable, optional
        ``summarize(messages) -> str``; called only with the messages the snapshot could not show.
    **kw
        Passed to :func:`snapglyph.compact` (``max_tokens``, ``model``, ``tools``, ``cell``, ``mode``).

    Raises
    ------
    BudgetError, LimitError, StoreError, InputError
        As :func:`snapglyph.compact` does, when no tier gets the request within the budget.

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> msgs = [Message(0, "user", [Part("text", text="Fix the failing test")])] + [
    ...     Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"step {i}: " + "log line\\n" * 200)])
    ...     for i in range(1, 12)]
    >>> lad = compact_ladder(msgs, dialect="anthropic", budget=6000, max_tokens=500)
    >>> [(r.tier, r.ids) for r in lad.reports][:2], lad.reports[-1].tier, lad.reports[-1].ids == lad.result.middle_ids
    ([('omission', []), ('image drop', [])], 'snapshot', True)
    >>> lad.result.tokens_after <= 6000
    True
    """
    from .compactor import compact, expand_snapshots
    from .conversation import to_messages

    store = store if store is not None else SourceStore()
    msgs, tools, model, settings = to_messages(messages)
    msgs = expand_snapshots(msgs, store)
    kw.setdefault("model", model)
    kw["tools"] = list(tools) + list(kw.get("tools") or [])
    protect = max(0, len(msgs) - protect_last)
    reports: list[TierReport] = []
    msgs, rep = omit_uneventful(msgs, protect_from=protect, store=store)
    reports.append(rep)
    older, newer = msgs[:protect], msgs[protect:]
    n_new = len(images_in(newer))
    older, rep = drop_images(older, keep=max(0, keep_images - n_new), store=store)
    reports.append(rep)
    msgs = older + newer
    from ..readers.registry import Transcript
    source = Transcript(msgs, settings["dialect"] or "text", meta={"params": settings["params"]},
                        notes=list(settings.get("reader_notes") or []))
    res = compact(source, profile=profile, dialect=dialect, budget=budget, store=store, summarize=summarize, **kw)
    if not res.passthrough:
        reports.append(TierReport("snapshot", res.middle_ids, f"{len(res.pages)} pages"))
        if summarize is not None and res.dropped_ids:
            reports.append(TierReport("summary", res.dropped_ids, "messages not shown as pages summarized by the "
                                                                  "caller's summarizer"))
    return LadderResult(res.request, store, reports, res)
