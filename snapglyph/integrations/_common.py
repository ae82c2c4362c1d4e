"""What the chat-message adapters share: one conversation's on-disk source store, its token budget, compaction of
OpenAI chat messages, learning the budget from an overflow error, and answering ``recall_messages``.

Imports no agent framework (each adapter module imports only its own).
"""
from __future__ import annotations

import os
from typing import Any

from snapglyph import SourceStore, compact, recall, recall_tool
from snapglyph._config import OVERFLOW_UNKNOWN_SHARE
from snapglyph.errors import SnapglyphError
from snapglyph.providers.overflow import OverflowResult, detect

__all__ = ["ChatCompactor", "overflow_of"]

def overflow_of(exc: BaseException) -> OverflowResult | None:
    """The context overflow an SDK exception reports, read from its HTTP status and body; ``None`` when it is none.

    Looks at ``exc.status_code`` and, in order, ``exc.response.text``, ``exc.body``, ``exc.message`` and
    ``str(exc)`` (what the OpenAI, Anthropic, LiteLLM and pydantic-ai errors carry), then at ``exc.__cause__``.

    Examples
    --------
    >>> class E(Exception):
    ...     status_code = 400
    ...     body = {"error": {"message": "This model's maximum context length is 4000 tokens. However, you "
    ...             "requested 4100 tokens (3900 in the messages, 200 in the completion).",
    ...             "code": "context_length_exceeded"}}
    >>> overflow_of(E()).limit
    4000
    >>> overflow_of(ValueError("no")) is None
    True
    """
    seen = 0
    while exc is not None and seen < 4:
        status = getattr(exc, "status_code", None)
        status = status if isinstance(status, int) else None
        for body in (_response_text(exc), getattr(exc, "body", None), getattr(exc, "message", None), str(exc)):
            if body:
                found = detect(status, body)
                if found is not None:
                    return found
        exc, seen = exc.__cause__, seen + 1
    return None


def _response_text(exc: BaseException) -> str | None:
    try:
        text = getattr(getattr(exc, "response", None), "text", None)
    except (RuntimeError, ValueError, AttributeError):  # httpx's ResponseNotRead (a RuntimeError), a bad encoding
        return None
    return text if isinstance(text, str) else None


class ChatCompactor:
    """One conversation's compaction state: its source store on disk, its budget, and the last result.

    Parameters
    ----------
    store_path : str or os.PathLike
        JSONL file of this conversation's source store (created when absent); ``recall_messages`` answers from it.
    budget : int
        Most tokens one request may cost (reserved output included); lowered by :meth:`learn` on an overflow.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget; default: the request's own ``max_tokens``, else 4096.
    recall : bool
        Name the ``recall_messages`` tool in the snapshot text (and count its definition in the budget).

    Attributes
    ----------
    last : CompactResult or None
        The last compaction (``None`` while every request fitted).

    Examples
    --------
    >>> import tempfile, os
    >>> c = ChatCompactor(os.path.join(tempfile.mkdtemp(), "s.jsonl"), budget=50_000)
    >>> c.compact_chat([{"role": "user", "content": "hi"}]) is None   # fits: nothing to do
    True
    """

    def __init__(self, store_path: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None, recall: bool = True) -> None:
        self.store = SourceStore(store_path)
        self.budget = int(budget)
        self.profile = profile
        self.model = model
        self.max_tokens = max_tokens
        self.recall = recall
        self.last = None

    def compact_chat(self, messages: list[dict], tools: list[dict] | None = None,
                     max_tokens: int | None = None) -> Any:
        """Compact OpenAI chat ``messages`` (with the request's ``tools``, counted) to the budget.

        Returns the :class:`~snapglyph.CompactResult` (its ``request["messages"]`` is what to send), or ``None``
        when the messages already fit. Raises what :func:`snapglyph.compact` raises (``BudgetError`` when even the
        head and the newest round cannot fit).
        """
        body: dict[str, Any] = {"model": self.model or self.profile, "messages": list(messages)}
        if tools:
            body["tools"] = list(tools)
        if max_tokens:
            body["max_tokens"] = int(max_tokens)
        res = compact(body, profile=self.profile, dialect="openai", budget=self.budget, store=self.store,
                      model=self.model, max_tokens=self.max_tokens, recall_tool=self.recall)
        if res.passthrough:
            return None
        self.last = res
        self.store.save()
        return res

    def learn(self, exc: BaseException, *, known: bool = False) -> bool:
        """Lower the budget after an overflow error; ``True`` when ``exc`` is one.

        The budget becomes the context window the error names; where it names none, ``OVERFLOW_UNKNOWN_SHARE`` of
        the smaller of the budget and the prompt size it names. ``known`` says the framework already classified
        ``exc`` as an overflow (then it counts as one even when its body is not recognized).
        """
        found = overflow_of(exc)
        if found is None and not known:
            return False
        if found is not None and found.limit:
            self.budget = min(self.budget, found.limit)
        else:
            seen = found.prompt_tokens if found is not None and found.prompt_tokens else self.budget
            self.budget = int(min(self.budget, seen) * OVERFLOW_UNKNOWN_SHARE)
        return True

    def recall_text(self, ids: str) -> str:
        """Answer a ``recall_messages`` call: ``#id: text`` blocks from the store, or a one-line error."""
        try:
            found = recall(self.store, ids or "")
        except (SnapglyphError, ValueError) as e:
            return f"error: {e}"
        return "\n\n".join(f"#{i}: {t}" for i, t in sorted(found.items())) or "no such message ids"

    @staticmethod
    def recall_spec() -> dict:
        """Name, description and JSON-schema parameters of the ``recall_messages`` tool."""
        spec = recall_tool("responses")
        return {"name": spec["name"], "description": spec["description"], "parameters": spec["parameters"]}
