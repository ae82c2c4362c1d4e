"""What :func:`~snapglyph.compaction.compactor.compact` returns."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .store import SourceStore

if TYPE_CHECKING:  # pragma: no cover
    from .sticky import Cut

__all__ = ["CompactResult"]


@dataclass
class CompactResult:
    """What :func:`compact` returns; unpacks as ``request, store = compact(...)``.

    Attributes
    ----------
    request : dict
        The request body in the target dialect.
    store : SourceStore
        The source of every message of the input (so any id, shown as pages or not, is recallable), and of every
        earlier one it already held.
    pages : list
        The :class:`~snapglyph.raster.render.Page` objects sent (oldest first).
    head_ids, middle_ids, tail_ids : list of int
        Message ids in each part (``middle_ids`` includes ids whose pages were dropped).
    dropped_ids : list of int
        Middle ids whose pages were dropped to meet a limit or the budget (recallable from the store).
    rewrites : collections.Counter
        Normalization rewrites by kind.
    tokens_before, tokens_after : int
        Estimated request tokens of the input and of the output (reserved output tokens included).
    passthrough : bool
        True when the input already fitted and was passed through (normalized).
    notes : list of str
        Warnings worth reading (e.g. a request model that reads pages by another profile's rules).
    paged : list of tuple
        ``(message id, kind, ordinal)`` of each oversized part of the newest messages shown as pages (the tail holds
        a pointer in its place; see :mod:`snapglyph.compaction.tail_paging`).
    middle_text_tokens : int
        Estimated tokens the messages shown as pages would cost as text (for the image-vs-text comparison).
    reader_notes : list of str
        What the input's reader repaired or skipped to read it (a torn last line left out, records run together
        read apart, a phantom parent crossed, records that are no message), so that every record of the input is
        accounted for: shown, recallable, or named here.
    renamed_tools : dict
        ``{old: new}`` for each tool name the dialect refuses that was renamed, alike in calls, results, definitions
        and the tool choice (also named in :attr:`notes`); map the model's calls of a new name back to the tool.
    cache_break : str or None
        Set when the input held an earlier snapshot and its oldest shown pages changed (more pages dropped for
        the budget or a limit), so a provider's prompt cache of them is lost; None otherwise.
    cut : Cut or None
        Where this compaction cut (:class:`~snapglyph.compaction.sticky.Cut`): pass it as ``compact(..., cut=)``
        for the grown conversation to keep the same pages while its tail fits.

    Examples
    --------
    >>> from snapglyph import Message, Part, compact
    >>> msgs = [Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"step {i} " * 400)])
    ...         for i in range(12)]
    >>> res = compact(msgs, dialect="anthropic", budget=6000, max_tokens=100)
    >>> res.head_ids, res.tail_ids, res.dropped_ids, len(res.pages), res.tokens_after <= 6000 < res.tokens_before
    ([0], [11], [1, 2, 3, 4, 5, 6], 1, True)
    >>> request, store = res
    >>> sorted(request), type(store).__name__
    (['max_tokens', 'messages', 'model'], 'SourceStore')
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
    renamed_tools: dict = field(default_factory=dict)
    reader_notes: list = field(default_factory=list)
    profile: str = ""
    dialect: str = ""
    cut: Cut | None = None

    def __iter__(self):
        return iter((self.request, self.store))

    def summary(self) -> str:
        """One line: messages in head/middle/tail, pages, rewrites, estimated tokens before and after; then what the
        reader repaired or skipped (``; read: ...``) and the notes (``; note: ...``)."""
        return (self._summary() + "".join(f"; read: {n}" for n in self.reader_notes)
                + "".join(f"; note: {n}" for n in self.notes))

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
