"""LiteLLM adapter: a proxy pre-call hook that compacts over-budget requests, and SDK helpers that recover from a
context overflow.

- :class:`SnapglyphHook` is a ``CustomLogger``; its ``async_pre_call_hook(user_api_key_dict, cache, data,
  call_type)`` replaces ``data["messages"]`` of a chat completion that would cost more than the budget with the
  compacted messages (head verbatim, the old middle as page images, tail verbatim). The proxy serves many
  conversations, so each gets its own source store, ``<store_dir>/<conversation key>.store.jsonl`` (the key is a
  hash of the first user turn, :func:`snapglyph.compaction.second_pass.conversation_key`), and its own budget.
- :func:`completion_with_recovery` (and :func:`acompletion_with_recovery`) calls ``litellm.completion`` with the
  messages compacted when over budget; on ``litellm.ContextWindowExceededError`` it lowers that conversation's
  budget to the window the error names, compacts and calls once more.

Neither can answer a tool call (the client runs its own tool loop), so the ``recall_messages`` tool is not added
to the request; a client that wants it adds ``snapglyph.recall_tool("openai")`` to its tools and answers calls with
:meth:`SnapglyphHook.recall_text`.

Sources (read 2026-12-01): https://docs.litellm.ai/docs/proxy/call_hooks (``async_pre_call_hook`` returns the
modified ``data``) and ``litellm/integrations/custom_logger.py`` of litellm 1.110.2; ``ContextWindowExceededError``
in ``litellm/exceptions.py`` (https://docs.litellm.ai/docs/exception_mapping).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import litellm
from litellm.exceptions import ContextWindowExceededError
from litellm.integrations.custom_logger import CustomLogger

from snapglyph import from_request
from snapglyph.compaction.second_pass import conversation_key

from ._common import ChatCompactor

__all__ = ["SnapglyphHook", "acompletion_with_recovery", "completion_with_recovery"]

_CHAT_CALLS = frozenset({"completion", "acompletion"})


class SnapglyphHook(CustomLogger):
    """Compacts chat-completion requests over a token budget, one source store per conversation.

    Parameters
    ----------
    store_dir : str or os.PathLike
        Folder of the conversations' source stores (created when absent).
    budget : int
        Most tokens one request may cost (reserved output included); each conversation's budget is lowered on
        its own context-overflow errors.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget; default: the request's own ``max_tokens``, else 4096.

    Examples
    --------
    >>> import tempfile
    >>> hook = SnapglyphHook(tempfile.mkdtemp(), budget=50_000)
    >>> data = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    >>> import asyncio
    >>> asyncio.run(hook.async_pre_call_hook(None, None, data, "completion")) is data   # fits: unchanged
    True
    """

    def __init__(self, store_dir: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None) -> None:
        super().__init__()
        self.store_dir = Path(store_dir)
        self.budget = int(budget)
        self.profile = profile
        self.model = model
        self.max_tokens = max_tokens
        self.conversations: dict[str, ChatCompactor] = {}

    def compactor_for(self, messages: list) -> ChatCompactor:
        """The :class:`ChatCompactor` (store, budget, last result) of the conversation ``messages`` belong to."""
        key = conversation_key(from_request({"messages": messages}).messages)
        comp = self.conversations.get(key)
        if comp is None:
            comp = self.conversations[key] = ChatCompactor(
                self.store_dir / f"{key}.store.jsonl", budget=self.budget, profile=self.profile, model=self.model,
                max_tokens=self.max_tokens, recall=False)
        return comp

    def compact_data(self, data: dict) -> dict:
        """``data`` with ``messages`` compacted when over the conversation's budget (a new dict; else ``data``)."""
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            return data
        max_tokens = data.get("max_tokens") or data.get("max_completion_tokens")
        res = self.compactor_for(messages).compact_chat(messages, data.get("tools"), max_tokens)
        return data if res is None else {**data, "messages": res.request["messages"]}

    def learn(self, messages: list, exc: BaseException) -> bool:
        """Lower the budget of the conversation of ``messages`` after ``exc``; ``True`` when it is an overflow."""
        return self.compactor_for(messages).learn(exc, known=isinstance(exc, ContextWindowExceededError))

    def recall_text(self, messages: list, ids: str) -> str:
        """Answer a ``recall_messages`` call of the conversation of ``messages`` from its store."""
        return self.compactor_for(messages).recall_text(ids)

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any) -> dict:
        """Proxy hook: compact ``data["messages"]`` of a chat completion over budget; returns ``data``."""
        if call_type not in _CHAT_CALLS:
            return data
        out = self.compact_data(data)
        if out is not data:
            data["messages"] = out["messages"]
        return data


def completion_with_recovery(hook: SnapglyphHook, **kwargs: Any) -> Any:
    """``litellm.completion(**kwargs)`` with the messages compacted to ``hook``'s budget; on
    ``ContextWindowExceededError`` the conversation's budget is lowered and the call made once more, compacted.

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
    >>> err = ContextWindowExceededError("maximum context length is 8192 tokens", model="gpt-4o", llm_provider="openai")
    >>> try:                                    # litellm's mock raises the overflow on both calls, no network
    ...     completion_with_recovery(hook, model="gpt-4o", messages=msgs, mock_response=err)
    ... except ContextWindowExceededError:
    ...     print(hook.compactor_for(msgs).budget)   # the budget learned from the error
    8192
    """
    try:
        return litellm.completion(**hook.compact_data(kwargs))
    except ContextWindowExceededError as exc:
        hook.learn(kwargs["messages"], exc)
    return litellm.completion(**hook.compact_data(kwargs))


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
    try:
        return await litellm.acompletion(**hook.compact_data(kwargs))
    except ContextWindowExceededError as exc:
        hook.learn(kwargs["messages"], exc)
    return await litellm.acompletion(**hook.compact_data(kwargs))
