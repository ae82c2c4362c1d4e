"""The snapshot text's paragraphs after its ranges line, and what they cost inside the budget.

::

    snapglyph snapshot: the images above show messages #41-#418 as pages. Not shown, or only in part: #3-#41.

    The pages above show earlier messages ...                      reading guide (fixed; :mod:`.guide`)

    The user's own messages among them, newest first, verbatim:   the user's own words (:mod:`.user_words`)
    [#12 user] never use curl

    Exact identifiers in the messages shown as pages, ...:         identifier ledger (:mod:`.ledger`)
    #417: 3f2a9c1d src/app.py:12

The guide's tokens are charged with the ranges line (:attr:`Conversation.snapshot_text_cost`); the user's words are
charged from the plan on, before any page is dropped; the ledger's cap is a share of the kept pages' tokens: the
plan leaves room for it where the bounds show a cut that fits with it, else the cut is planned without it and the
oldest pages (tool output first) make room for it (the newest round stays verbatim before the ledger).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Sequence

from ..model.messages import Message
from .guide import reading_guide
from .ledger import Ledger
from .user_words import USER_HEADING, USER_PAGE_SHARE, entry, typed_text, user_texts, user_words_text

__all__ = ["SECTION_GAP", "Notes", "UserBound", "planned_page_tokens", "snapshot_notes"]

if TYPE_CHECKING:
    from .conversation import Conversation
    from .plan import Plan

SECTION_GAP = 2
"""Tokens charged for the blank line before each paragraph after the first."""


@dataclass(frozen=True)
class Notes:
    """The user's words and the ledger of one compaction (the guide is fixed: :func:`reading_guide`); frozen
    (:meth:`fit_user` returns new notes).

    Attributes
    ----------
    guide : str
        The reading guide.
    typed : list of (int, str)
        The middle's user messages (:func:`~snapglyph.compaction.user_words.user_texts`), oldest first.
    user_cap : int
        Tokens the user's words may take (as :meth:`fit_user` set it).
    user_text : str
        The user's messages section, or empty.
    user_ids : list of int
        Ids of the user messages it repeats.
    user_cost : int
        Its tokens (with its paragraph gap); 0 when empty.
    ledger : Ledger or None
        The middle's identifiers; None when the ledger is off.
    ledger_share : float
        The ledger's cap as a share of the kept pages' image tokens.
    count : callable
        ``count(text) -> int`` tokens of a text as sent.
    page_tokens : int or None
        Image tokens of the pages the compaction plans to keep: the user's words take at most
        :data:`~snapglyph.compaction.user_words.USER_PAGE_SHARE` of them (None: no such cap).

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> middle = [Message(3, "user", [Part("text", text="never use curl")]),
    ...           Message(4, "assistant", [Part("text", text="ok: commit 3f2a9c1d")])]
    >>> notes = snapshot_notes(middle, user_cap=250, ledger_share=0.5, recall_tool=None, count=len)
    >>> notes.user_ids, notes.user_cap, notes.user_cost
    ([3], 250, 86)
    >>> print(notes.ledger_text([3, 4], page_tokens=600))  # doctest: +NORMALIZE_WHITESPACE
    Exact identifiers in the messages shown as pages, each once after the ids of the messages holding it, newest
    first:
    #4: 3f2a9c1d
    """

    guide: str
    typed: list[tuple[int, str]]
    ledger: Ledger | None
    ledger_share: float
    count: Callable[[str], int]
    user_cap: int = 0
    user_text: str = ""
    user_ids: list[int] = field(default_factory=list)
    user_cost: int = 0
    page_tokens: int | None = None

    def fit_user(self, cap: int) -> "Notes":
        """These notes with the user's messages written within ``cap`` tokens (gap included; newest kept first),
        and within :data:`~snapglyph.compaction.user_words.USER_PAGE_SHARE` of :attr:`page_tokens` where that is
        set."""
        if self.page_tokens is not None:
            cap = min(cap, int(USER_PAGE_SHARE * self.page_tokens) + SECTION_GAP)
        text, ids = user_words_text(self.typed, cap - SECTION_GAP, self.count)
        return replace(self, user_cap=cap, user_text=text, user_ids=ids,
                       user_cost=self.count(text) + SECTION_GAP if text else 0)

    def ledger_text(self, shown: Sequence[int], page_tokens: int) -> str:
        """The ledger of the ``shown`` ids, capped at :attr:`ledger_share` of ``page_tokens`` (its paragraph gap
        included)."""
        if self.ledger is None or not shown:
            return ""
        return self.ledger.text(shown, int(self.ledger_share * page_tokens) - SECTION_GAP)

    def ledger_cost(self, shown: Sequence[int], page_tokens: int) -> int:
        """Tokens of :meth:`ledger_text` with its paragraph gap (0 when empty)."""
        led = self.ledger_text(shown, page_tokens)
        return self.count(led) + SECTION_GAP if led else 0

    def sections(self, shown: Sequence[int], page_tokens: int) -> list[str]:
        """The paragraphs after the ranges line: guide, user's words, ledger (empty ones included as "")."""
        return [self.guide, self.user_text, self.ledger_text(shown, page_tokens)]


class UserBound:
    """``bound(middle) -> int``: at most the tokens the user's words of ``middle`` take under ``cap`` (and under
    ``most``, e.g. :data:`~snapglyph.compaction.user_words.USER_PAGE_SHARE` of the budget, which no middle's pages
    exceed), never less for a larger middle (the sum of every entry's tokens, up to the cap). Entry costs are cached
    by message id.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> bound = UserBound(1000, len)
    >>> bound([Message(3, "user", [Part("text", text="never use curl")])])
    86
    >>> UserBound(50, len)([Message(3, "user", [Part("text", text="never use curl")])])
    50
    """

    def __init__(self, cap: int, count: Callable[[str], int], most: int | None = None):
        self.cap, self.count = (cap if most is None else min(cap, most)), count
        self._cost: dict[int, int] = {}

    def __call__(self, middle: Sequence[Message]) -> int:
        if self.cap <= 0:
            return 0
        total = 0
        for m in reversed(middle):
            if m.role != "user":
                continue
            n = self._cost.get(m.id)
            if n is None:
                text = typed_text(m)
                n = self._cost[m.id] = self.count(entry(m.id, text)) if text else 0
            total += n
            if total >= self.cap:
                return self.cap
        return min(self.cap, total + self.count(USER_HEADING) + SECTION_GAP) if total else 0


def planned_page_tokens(conv: "Conversation", plan: "Plan", budget: int) -> int:
    """The most image tokens the pages of ``plan`` can take: those of its newest ``page_cap`` pages, and no more than
    ``budget`` leaves beside the tool definitions, the reserved output, the head, the tail and the snapshot text's
    fixed part (the pages the compaction keeps take no more; the user's words take a share of it)."""
    kept = plan.pages[-plan.page_cap:] if plan.page_cap else []
    room = budget - conv.fixed - sum(conv.per[:plan.head_end]) - sum(conv.per[plan.cut:]) - conv.snapshot_text_cost
    return max(0, min(conv.costs.pages(kept), room))


def snapshot_notes(middle: Sequence[Message], *, user_cap: int, ledger_share: float, recall_tool: str | None,
                   count: Callable[[str], int], head: Sequence[Message] = (), page_tokens: int | None = None
                   ) -> Notes:
    """The notes of a compaction whose middle is ``middle``: the user's words at their first cap ``user_cap``
    (:attr:`snapglyph.compaction.settings.Allowance.user_words`; what ``head``, the messages sent verbatim before the
    middle, already holds is not repeated; at most :data:`~snapglyph.compaction.user_words.USER_PAGE_SHARE` of
    ``page_tokens``, the image tokens of the pages planned), the ledger ready for any set of shown ids.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> n = snapshot_notes([Message(3, "user", [Part("text", text="never use curl on 10.0.0.1:8080")])],
    ...                    user_cap=250, ledger_share=0.1, recall_tool=None, count=len)
    >>> n.user_ids, n.user_cost
    ([3], 103)
    """
    notes = Notes(reading_guide(recall_tool), user_texts(middle, head),
                  Ledger(middle, count) if ledger_share > 0 else None, ledger_share, count, page_tokens=page_tokens)
    return notes.fit_user(user_cap)
