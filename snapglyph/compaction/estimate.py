"""The compactor's token estimate: text tokens of messages and image tokens of pages, for one reader profile.

Used by :mod:`snapglyph.compaction` to choose the cut and check the shrink, and by :mod:`snapglyph.report` for the
image-vs-text cost of a transcript.
"""

from __future__ import annotations

from typing import Any, Sequence

from .._config import MESSAGE_OVERHEAD, TOOL_PART_OVERHEAD
from ..model.attachments import attachment_tokens
from ..model.messages import Message, Part
from ..providers.profiles import Profile

__all__ = ["MESSAGE_OVERHEAD", "TokenCosts"]



class TokenCosts:
    """What messages, texts and pages cost, in tokens, under one reader profile.

    Text is counted with :func:`snapglyph.providers.tokens.count_for_profile` (the profile's encoding where available
    offline, times its safety factor); a message adds :data:`MESSAGE_OVERHEAD` and :data:`~snapglyph._config.TOOL_PART_OVERHEAD` tokens per tool call or
    result; an image costs the profile's :meth:`~snapglyph.providers.profiles.Profile.image_tokens` (an image of unknown size
    costs the most one image can).

    Parameters
    ----------
    prof : Profile

    Examples
    --------
    >>> from snapglyph import Message, Part, profile
    >>> costs = TokenCosts(profile("claude"))
    >>> costs.text("hello world"), costs.message(Message(1, "user", [Part("text", text="hello world")]))
    (3, 7)
    >>> costs.image(Part("image", width=546, height=546)), costs.image(Part("image"))  # unknown size: the most
    (400, 1521)
    """

    def __init__(self, prof: Profile) -> None:
        from ..providers import tokens
        self.prof = prof
        self._count = lambda s: tokens.count_for_profile(s, prof) if s else 0
        self._memo: dict[str, int] = {}  # text -> tokens: a message and its normalized copy are counted once

    def text(self, s: str) -> int:
        """Tokens of a text as sent (each distinct text is counted once per :class:`TokenCosts`)."""
        n = self._memo.get(s)
        if n is None:
            n = self._memo[s] = self._count(s)
        return n

    def image(self, p: Part) -> int:
        """Tokens of an image part."""
        if p.width and p.height:
            return self.prof.image_tokens(p.width, p.height)
        w, h = self.prof.provider_resize(100_000, 100_000)  # unknown size: charge the most one image can cost
        return self.prof.image_tokens(w, h)

    def prefetch(self, messages: Sequence[Message], workers: int = 2) -> None:
        """Count the texts of ``messages`` not counted yet in one batch on ``workers`` threads
        (:func:`snapglyph.providers.tokens.count_many_for_profile`); :meth:`message` then finds them counted.

        Examples
        --------
        >>> from snapglyph import Message, Part, profile
        >>> costs = TokenCosts(profile("claude"))
        >>> costs.prefetch([Message(1, "user", [Part("text", text="hello world")])])
        >>> costs._memo
        {'hello world': 3}
        """
        from ..providers.tokens import count_many_for_profile

        todo = list(dict.fromkeys(s for s in (self._joined(m)[1] for m in messages) if s and s not in self._memo))
        self._memo.update(zip(todo, count_many_for_profile(todo, self.prof, workers)))

    def message(self, m: Message) -> int:
        """Tokens of a message as sent: overhead, texts, tool calls and results, images."""
        n, text = self._joined(m)
        return n + self.text(text)

    def _joined(self, m: Message) -> tuple[int, str]:
        """The tokens of a message other than its text, and its texts joined as they are counted."""
        n = MESSAGE_OVERHEAD
        texts: list[str] = []
        for p in m.parts:
            if p.kind in ("text", "thinking"):
                texts.append(p.text)
                n += attachment_tokens(p.meta) if p.meta else 0  # a PDF sent as it is: its pages
            elif p.kind == "tool_call":
                texts.append(p.name)
                texts.append(p.arguments)
                n += TOOL_PART_OVERHEAD
            elif p.kind == "tool_result":
                n += TOOL_PART_OVERHEAD
                for q in p.content:
                    if q.kind == "text":
                        texts.append(q.text)
                        n += attachment_tokens(q.meta) if q.meta else 0
                    elif q.kind == "image":
                        n += self.image(q)
            elif p.kind == "image":
                n += self.image(p)
        return n, "\n".join(texts)

    def pages(self, pages: Sequence[Any]) -> int:
        """Image tokens of rendered pages."""
        return sum(self.prof.image_tokens(p.width, p.height) for p in pages)
