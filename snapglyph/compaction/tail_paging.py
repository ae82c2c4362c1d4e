"""Oversized parts of the newest messages, shown as pages when the newest round alone would break the budget.

The usual cause of an overflow is one huge output that just came back (``find .``, a log, a whole file). The tail
must start at a cut point, so it cannot shrink below the newest round; instead, the largest text parts of its user
and tool messages are rendered as pages (in the snapshot message, after the middle's pages) and stand in the tail
as a one-line pointer::

    [snapglyph: tool result 1 of message #991 (51,332 characters) is shown as pages in the snapshot above;
     recall #991 for its exact text]

The pointer names the source message and the part, so a later pass puts the exact source back
(:func:`restore_pointers`) and renders it again; pixels are never reused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from ..errors import StoreError
from ..model.messages import LONE_SURROGATE, Message, Part
from .store import SourceStore

__all__ = ["PagedPart", "page_out", "pointer_text", "restore_pointers"]

POINTER_RE = re.compile(r"^\[snapglyph: (tool result|text) (\d+) of message #(\d+) \(([\d,]+) characters\) is "
                        r"shown as pages")


def pointer_text(kind: str, ordinal: int, message_id: int, n_chars: int) -> str:
    """The one line that stands in the tail for a part shown as pages (``kind`` is ``tool result`` or ``text``).

    Examples
    --------
    >>> print(pointer_text("tool result", 1, 991, 51332))  # doctest: +NORMALIZE_WHITESPACE
    [snapglyph: tool result 1 of message #991 (51,332 characters) is shown as pages in the snapshot above;
     recall #991 for its exact text]
    """
    return (f"[snapglyph: {kind} {ordinal} of message #{message_id} ({n_chars:,} characters) is shown as pages in "
            f"the snapshot above; recall #{message_id} for its exact text]")


@dataclass(frozen=True)
class PagedPart:
    """One part of a tail message shown as pages (frozen: fewer of its pages sent is a new one).

    Attributes
    ----------
    message_id : int
    kind : str
        ``tool result`` or ``text``.
    ordinal : int
        1-based position among the message's parts of that kind (non-empty text parts only).
    pages : list
        The pages sent (:class:`~snapglyph.raster.render.Page`): all of them, or the newest where the budget cannot hold
        all.
    n_rendered : int
        How many pages the part's text took.
    saved : int
        Tokens saved: the part's text tokens minus the pointer's and the pages' image tokens.

    Examples
    --------
    >>> from snapglyph import Message, Part, profile, render
    >>> from snapglyph.compaction.estimate import TokenCosts
    >>> costs = TokenCosts(profile("claude"))
    >>> log = Message(5, "tool", [Part("tool_result", call_id="c1",
    ...                                content=[Part("text", text="GET /index.html 200\\n" * 300)])])
    >>> tail, paged = page_out([log], sources={5: log}, need=1000, text_cost=costs.text, render=render,
    ...                        page_cost=costs.pages)
    >>> p = paged[0]
    >>> p.message_id, p.kind, p.ordinal, p.n_rendered, p.saved, (p.pages[0].width, p.pages[0].height)
    (5, 'tool result', 1, 1, 2099, (1092, 420))
    """

    message_id: int
    kind: str
    ordinal: int
    pages: list = field(default_factory=list)
    saved: int = 0
    n_rendered: int = 0


def _parts_of_kind(m: Message, kind: str) -> list[tuple[int, Part]]:
    if kind == "tool result":
        return [(i, p) for i, p in enumerate(m.parts) if p.kind == "tool_result"]
    return [(i, p) for i, p in enumerate(m.parts) if p.kind == "text" and p.text.strip()]


def _text_of(p: Part) -> str | None:
    if p.kind == "text":
        return p.text
    if p.kind == "tool_result" and p.content and all(q.kind == "text" for q in p.content):
        return p.result_text()
    return None


def _same(a: str, b: str) -> bool:
    """Equal but for lone surrogates the dialect's normalization replaced by U+FFFD."""
    return a == b or (len(a) == len(b) and LONE_SURROGATE.sub("\ufffd", a) == b)


def page_out(tail: Sequence[Message], *, sources: dict[int, Message], need: int, text_cost: Callable[[str], int],
             render: Callable[[list[Message]], list], page_cost: Callable[[list], int]) -> tuple[
        list[Message], list[PagedPart]]:
    """Show the largest text parts of ``tail``'s user and tool messages as pages until ``need`` tokens are saved.

    Parameters
    ----------
    tail : sequence of Message
        The tail, normalized (not modified).
    sources : dict
        Source messages by id (the parts shown as pages are rendered from these).
    need : int
        Tokens to save.
    text_cost : callable
        ``text_cost(str) -> int`` tokens of a text as sent.
    render : callable
        ``render(messages) -> pages``.
    page_cost : callable
        ``page_cost(pages) -> int`` image tokens.

    Returns
    -------
    tail : list of Message
        The tail with each paged part replaced by its pointer.
    paged : list of PagedPart
        In tail order; empty when nothing is worth paging.

    Examples
    --------
    >>> from snapglyph import Message, Part, profile, render
    >>> from snapglyph.compaction.estimate import TokenCosts
    >>> costs = TokenCosts(profile("claude"))
    >>> log = Message(5, "tool", [Part("tool_result", call_id="c1",
    ...                                content=[Part("text", text="GET /index.html 200\\n" * 300)])])
    >>> tail, paged = page_out([log], sources={5: log}, need=1000, text_cost=costs.text, render=render,
    ...                        page_cost=costs.pages)
    >>> tail[0].parts[0].result_text().split(" is shown")[0], tail[0].meta
    ('[snapglyph: tool result 1 of message #5 (6,000 characters)', {'paged': True})
    """
    cands: list[tuple[int, int, int, str, int, str]] = []  # (tokens, ti, pi, kind, ordinal, text)
    for ti, m in enumerate(tail):
        if m.role == "assistant" or m.id not in sources:
            continue
        src = sources[m.id]
        for kind in ("tool result", "text"):
            mine, theirs = _parts_of_kind(m, kind), _parts_of_kind(src, kind)
            for k, (pi, p) in enumerate(mine):
                text = _text_of(p)
                if text is None or k >= len(theirs) or _text_of(theirs[k][1]) is None:
                    continue
                if not _same(_text_of(theirs[k][1]), text):
                    continue
                cands.append((text_cost(text), ti, pi, kind, k + 1, text))
    out = list(tail)
    paged: list[PagedPart] = []
    saved_total = 0
    for tokens, ti, pi, kind, ordinal, text in sorted(cands, key=lambda c: -c[0]):
        if saved_total >= need:
            break
        m = out[ti]
        part = m.parts[pi]
        src_part = _parts_of_kind(sources[m.id], kind)[ordinal - 1][1]
        pages = render([Message(m.id, "tool" if kind == "tool result" else m.role, [src_part])])
        pointer = pointer_text(kind, ordinal, m.id, len(text))
        saved = tokens - text_cost(pointer) - page_cost(pages)
        if saved <= 0:
            continue
        new = (replace(part, content=[Part("text", text=pointer)]) if kind == "tool result"
               else replace(part, text=pointer))
        parts = list(m.parts)
        parts[pi] = new
        out[ti] = Message(m.id, m.role, parts, {**m.meta, "paged": True})
        paged.append(PagedPart(m.id, kind, ordinal, pages, saved, len(pages)))
        saved_total += saved
    order = {m.id: i for i, m in enumerate(tail)}
    paged.sort(key=lambda p: (order[p.message_id], p.kind, p.ordinal))
    return out, paged


def restore_pointers(messages: Sequence[Message], store: SourceStore) -> list[Message]:
    """Put the exact source back in place of every pointer a compacted request holds.

    Raises
    ------
    StoreError
        If the store lacks the message a pointer names (pages are never reused).

    Examples
    --------
    >>> store = SourceStore()
    >>> store.put([Message(5, "tool", [Part("tool_result", call_id="c1", content=[Part("text", text="GET / 200")])])])
    >>> ptr = Part("tool_result", call_id="c1", content=[Part("text", text=pointer_text("tool result", 1, 5, 9))])
    >>> restore_pointers([Message(5, "tool", [ptr])], store)[0].parts[0].result_text()
    'GET / 200'
    """
    out: list[Message] = []
    for m in messages:
        parts = list(m.parts)
        changed = False
        for i, p in enumerate(parts):
            text = _text_of(p)
            match = POINTER_RE.match(text) if text else None
            if not match:
                continue
            kind, ordinal, mid = match.group(1), int(match.group(2)), int(match.group(3))
            src = _parts_of_kind(store.get(mid), kind)
            if ordinal > len(src):
                raise StoreError(f"the source store has no {kind} {ordinal} in message #{mid}")
            original = src[ordinal - 1][1]
            parts[i] = replace(p, content=list(original.content)) if p.kind == "tool_result" else original
            changed = True
        out.append(Message(m.id, m.role, parts, m.meta) if changed else m)
    return out
