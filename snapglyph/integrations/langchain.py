"""LangChain v1 adapter: an agent middleware that compacts what each model call sends, recovers from a context
overflow, and offers the recall tool.

:class:`SnapglyphMiddleware` is an ``AgentMiddleware`` for ``create_agent(middleware=[...])``. Its
``wrap_model_call`` (and ``awrap_model_call``) converts the request's messages to OpenAI chat dicts
(``langchain_core.messages.convert_to_openai_messages``), compacts them to the budget with
:func:`snapglyph.compact` (head verbatim, the old middle as page images, tail verbatim), converts the result back
(``convert_to_messages``) and hands ``request.override(messages=...)`` on: the agent state's ``messages`` are never
rewritten, so the stored history stays whole and the next call compacts it afresh from source. When the model
answers with a context-overflow error (``langchain_core.exceptions.ContextOverflowError``, or any error whose body
:func:`snapglyph.providers.overflow.detect` recognizes), the budget drops to the window the error names and the
call is retried once, compacted. The middleware registers a ``recall_messages`` tool answering from its on-disk
source store, so exact text stays recallable across runs.

Sources (read 2026-12-01): ``AgentMiddleware.wrap_model_call`` and ``ModelRequest.override`` in
``langchain/agents/middleware/types.py`` of langchain 1.5.2 and its reference page
https://reference.langchain.com/python/langchain/agents/middleware/types/wrap_model_call; ``ContextOverflowError``
(https://reference.langchain.com/python/langchain-core/exceptions/ContextOverflowError, langchain-core 1.8.3).
"""
from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import convert_to_messages, convert_to_openai_messages
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from ._common import ChatCompactor

__all__ = ["SnapglyphMiddleware"]


class SnapglyphMiddleware(AgentMiddleware):
    """``create_agent`` middleware compacting each model call's messages to a token budget.

    Parameters
    ----------
    store_path : str or os.PathLike
        JSONL file of this conversation's source store (created when absent); ``recall_messages`` answers from it.
    budget : int
        Most tokens one call may cost (reserved output included); lowered on a context-overflow error.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget (default 4096).

    Attributes
    ----------
    compactor : ChatCompactor
        The store, the current ``budget`` and the ``last`` compaction (``None`` while every call fitted).
    tools : list of BaseTool
        ``[recall_messages]``, registered with the agent by ``create_agent``.

    Examples
    --------
    >>> import tempfile, os
    >>> mw = SnapglyphMiddleware(os.path.join(tempfile.mkdtemp(), "s.jsonl"), budget=50_000)
    >>> mw.compactor.budget, [t.name for t in mw.tools]
    (50000, ['recall_messages'])
    """

    def __init__(self, store_path: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None) -> None:
        super().__init__()
        self.compactor = ChatCompactor(store_path, budget=budget, profile=profile, model=model,
                                       max_tokens=max_tokens)
        self.tools = [self._recall_tool()]

    def compacted(self, request: ModelRequest) -> ModelRequest:
        """``request`` with its messages compacted to the budget (``request`` itself when they fit)."""
        system = [request.system_message] if request.system_message is not None else []
        chat = convert_to_openai_messages(system + list(request.messages))
        tools = [convert_to_openai_tool(t) for t in request.tools if isinstance(t, BaseTool)]
        res = self.compactor.compact_chat(chat, tools)
        if res is None:
            return request
        out = res.request["messages"]
        if system and out and out[0].get("role") in ("system", "developer"):
            out = out[1:]  # the head keeps the system message verbatim: send the request's own
        return request.override(messages=convert_to_messages(out))

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Call the model with the compacted request; on an overflow, lower the budget and call once more."""
        try:
            return handler(self.compacted(request))
        except Exception as exc:  # a foreign SDK error: only a recognized overflow is handled
            if not self.compactor.learn(exc, known=isinstance(exc, ContextOverflowError)):
                raise
        return handler(self.compacted(request))

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        """Async twin of :meth:`wrap_model_call`."""
        try:
            return await handler(self.compacted(request))
        except Exception as exc:  # a foreign SDK error: only a recognized overflow is handled
            if not self.compactor.learn(exc, known=isinstance(exc, ContextOverflowError)):
                raise
        return await handler(self.compacted(request))

    def _recall_tool(self) -> BaseTool:
        spec = ChatCompactor.recall_spec()

        def recall_messages(ids: str) -> str:
            return self.compactor.recall_text(ids)

        return StructuredTool.from_function(recall_messages, name=spec["name"], description=spec["description"],
                                            args_schema=spec["parameters"])

