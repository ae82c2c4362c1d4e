"""LiteLLM adapter: a proxy pre-call hook that compacts over-budget requests, and SDK helpers that recover from a
context overflow.

- :class:`SnapglyphHook` is a ``CustomLogger``; its ``async_pre_call_hook(user_api_key_dict, cache, data,
  call_type)`` replaces ``data["messages"]`` of a chat completion that would cost more than its conversation's
  budget with the compacted messages (head verbatim, the old middle as page images, tail verbatim). The proxy serves
  many conversations, so each gets its own source store and learned budget in the hook's folder
  (:class:`snapglyph.integrations._common.Conversations`), keyed by :func:`snapglyph.compaction.keys.conversation_id`:
  the request's ``user`` and ``metadata["session_id"]`` (the caller's own keys), its system prompt and its first
  user turn. Two users who open with the same words are two conversations.
- :func:`completion_with_recovery` (and :func:`acompletion_with_recovery`) calls ``litellm.completion`` with the
  messages compacted when over budget; on a context-overflow error (``litellm.ContextWindowExceededError``, or any
  error whose body :func:`snapglyph.providers.overflow.detect` recognizes) the conversation's budget becomes what
  :func:`snapglyph.compaction.budget.next_budget` gives for the request that overflowed, and the call is made once
  more, compacted.

Neither can answer a tool call (the client runs its own tool loop), so the ``recall_messages`` tool is not added
to the request; a client that wants it adds ``snapglyph.recall_tool("openai")`` to its tools and answers calls with
:meth:`SnapglyphHook.recall_text` (given the same request keys, so the answer comes from that conversation's store).

Sources (read 2026-12-01): https://docs.litellm.ai/docs/proxy/call_hooks (``async_pre_call_hook`` returns the
modified ``data``) and ``litellm/integrations/custom_logger.py`` of litellm 1.110.2; ``ContextWindowExceededError``
in ``litellm/exceptions.py`` (https://docs.litellm.ai/docs/exception_mapping); the ``user`` and ``metadata``
request fields (https://docs.litellm.ai/docs/completion/input).
"""
from __future__ import annotations

import os
from typing import Any

import litellm
from litellm.exceptions import ContextWindowExceededError
from litellm.integrations.custom_logger import CustomLogger

from snapglyph._config import CONVERSATIONS_IN_MEMORY

from ._common import ConversationCompactor, Conversations

__all__ = ["SnapglyphHook", "acompletion_with_recovery", "completion_with_recovery"]

_CHAT_CALLS = frozenset({"completion", "acompletion"})
_BODY_KEYS = ("messages", "tools", "max_tokens", "max_completion_tokens")


def _data(data_or_messages: dict | list) -> dict:
    return {"messages": data_or_messages} if isinstance(data_or_messages, list) else data_or_messages


class SnapglyphHook(CustomLogger):
    """Compacts chat-completion requests over a token budget, one source store and learned budget per
    conversation.

    Parameters
    ----------
    store_dir : str or os.PathLike
        Folder of the conversations' source stores and learned budgets (created when absent).
    budget : int
        Most tokens one request may cost (reserved output included); each conversation's budget is lowered on
        its own context-overflow errors.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget; default: the request's own limit
        (:func:`snapglyph.providers.params.output_reserve`).
    metadata_key : str
        The key of ``metadata`` that holds the caller's conversation id (``session_id``).
    max_conversations : int
        Conversations held in memory (least recently used dropped; their files stay).

    Raises
    ------
    InputError
        If ``store_dir`` is a store file.

    Examples
    --------
    >>> import tempfile
    >>> hook = SnapglyphHook(tempfile.mkdtemp(), budget=50_000)
    >>> data = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    >>> import asyncio
    >>> asyncio.run(hook.async_pre_call_hook(None, None, data, "completion")) is data   # fits: unchanged
    True
    >>> alice, bob = {**data, "user": "alice"}, {**data, "user": "bob"}
    >>> hook.conversation(alice) is hook.conversation(bob)       # the same words, two users
    False
    """

    def __init__(self, store_dir: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None, metadata_key: str = "session_id",
                 max_conversations: int = CONVERSATIONS_IN_MEMORY) -> None:
        super().__init__()
        self.conversations = Conversations(store_dir, budget=budget, profile=profile, model=model,
                                           max_tokens=max_tokens, recall=False, limit=max_conversations)
        self.metadata_key = metadata_key

    def caller(self, data: dict) -> str | None:
        """The caller's own key of the conversation of request ``data``: its ``user`` and its
        ``metadata[metadata_key]``, where given."""
        meta = data.get("metadata")
        parts = [data.get("user"), meta.get(self.metadata_key) if isinstance(meta, dict) else None]
        parts = [str(p) for p in parts if isinstance(p, (str, int)) and not isinstance(p, bool) and str(p)]
        return "\x1f".join(parts) or None

    def body(self, data: dict) -> dict:
        """The OpenAI chat body that stands for request ``data`` (messages, tools, output limit)."""
        body = {k: data[k] for k in _BODY_KEYS if data.get(k)}
        body["model"] = self.conversations.model or self.conversations.profile
        return body

    def conversation(self, data: dict | list) -> ConversationCompactor:
        """The conversation (store, budget, last result) request ``data`` (or a bare message list) belongs to."""
        data = _data(data)
        return self.conversations.of("openai", self.body(data), self.caller(data))

    def compact_data(self, data: dict) -> dict:
        """``data`` with ``messages`` compacted when over the conversation's budget (a new dict; else ``data``)."""
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            return data
        sent, res = self.conversation(data).compact(self.body(data), "openai")
        return data if res is None else {**data, "messages": sent["messages"]}

    def learn(self, data: dict | list, exc: BaseException, sent: dict | None = None) -> bool:
        """After ``exc`` answered ``sent`` (the request as sent; default ``data``), teach the conversation of
        ``data`` its next budget; ``True`` when ``exc`` is an overflow."""
        data = _data(data)
        known = isinstance(exc, ContextWindowExceededError)
        return self.conversation(data).learn(exc, self.body(sent if sent is not None else data), known=known)

    def recall_text(self, data: dict | list, ids: str) -> str:
        """Answer a ``recall_messages`` call of the conversation of request ``data`` (or its message list) from
        its store."""
        return self.conversation(data).recall_text(ids)

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any) -> dict:
        """Proxy hook: compact ``data["messages"]`` of a chat completion over budget; returns ``data``."""
        if call_type not in _CHAT_CALLS:
            return data
        out = self.compact_data(data)
        if out is not data:
            data["messages"] = out["messages"]
        return data


def completion_with_recovery(hook: SnapglyphHook, **kwargs: Any) -> Any:
    """``litellm.completion(**kwargs)`` with the messages compacted to the conversation's budget; on a context
    overflow the budget is learned from the request that overflowed and the call made once more, compacted.

    Raises
    ------
    litellm.ContextWindowExceededError
        When the retry overflows too; any other error of ``litellm.completion`` as it is.
    snapglyph.BudgetError
        When even the head and the newest round cannot fit the learned budget.

    Examples
    --------
    >>> import tempfile
    >>> hook, msgs = SnapglyphHook(tempfile.mkdtemp(), budget=50_000), [{"role": "user", "content": "hi"}]
    >>> completion_with_recovery(hook, model="gpt-4o", messages=msgs, mock_response="hello").choices[0].message.content
    'hello'
    >>> long = msgs + [{"role": "assistant" if i % 2 else "user", "content": f"step {i} " + "word " * 400}
    ...                for i in range(1, 31)]
    >>> err = ContextWindowExceededError("Input is too long for requested model.", model="gpt-4o",
    ...                                  llm_provider="openai")
    >>> try:                                    # litellm's mock raises the overflow on both calls, no network
    ...     completion_with_recovery(hook, model="gpt-4o", messages=long, mock_response=err, max_tokens=100)
    ... except ContextWindowExceededError:      # the budget learned from the request that overflowed (no numbers)
    ...     conv = hook.conversation(long)
    ...     print(conv.budget < 12_000, conv.budget < conv.last.tokens_after)   # the failed retry lowered it again
    True True
    """
    sent = hook.compact_data(kwargs)
    try:
        return litellm.completion(**sent)
    except Exception as exc:  # a foreign error: only a recognized overflow is handled
        if not hook.learn(kwargs, exc, sent):
            raise
    retry = hook.compact_data(kwargs)
    try:
        return litellm.completion(**retry)
    except Exception as again:  # the retry overflowed too: the conversation's next call starts lower
        hook.learn(kwargs, again, retry)
        raise


async def acompletion_with_recovery(hook: SnapglyphHook, **kwargs: Any) -> Any:
    """Async twin of :func:`completion_with_recovery` (``litellm.acompletion``).

    Examples
    --------
    >>> import asyncio, tempfile
    >>> hook, msgs = SnapglyphHook(tempfile.mkdtemp(), budget=50_000), [{"role": "user", "content": "hi"}]
    >>> reply = asyncio.run(acompletion_with_recovery(hook, model="gpt-4o", messages=msgs, mock_response="hello"))
    >>> reply.choices[0].message.content
    'hello'
    """
    sent = hook.compact_data(kwargs)
    try:
        return await litellm.acompletion(**sent)
    except Exception as exc:  # a foreign error: only a recognized overflow is handled
        if not hook.learn(kwargs, exc, sent):
            raise
    retry = hook.compact_data(kwargs)
    try:
        return await litellm.acompletion(**retry)
    except Exception as again:  # the retry overflowed too: the conversation's next call starts lower
        hook.learn(kwargs, again, retry)
        raise
