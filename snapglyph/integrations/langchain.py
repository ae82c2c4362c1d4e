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
call is retried once, compacted, to the budget :func:`snapglyph.compaction.budget.next_budget` gives for the
request that overflowed. A call sent with page images and answered with a refusal or nothing
(:func:`snapglyph.providers.refusal.refusal`: an OpenAI-style ``refusal``, Anthropic's ``stop_reason: "refusal"``,
no text and no tool call) is made once more without pages (the text tiers, the snapshot text, ``recall_messages``),
and that conversation is compacted without pages from then on (issue 35). The conversation keeps its cut while the
tail fits, counts its new cuts, and ends a storm with :class:`~snapglyph.errors.CompactionStormError` raised from the
model call instead of another rewrite (:class:`snapglyph.integrations._common.ConversationCompactor`). Each
conversation (its thread id from the run's config, its system prompt and first user turn:
:func:`snapglyph.compaction.keys.conversation_id`) has its own source store and learned budget in the
middleware's folder (:class:`snapglyph.integrations._common.Conversations`). The middleware registers a
``recall_messages`` tool answering from the store of the conversation whose model call made the tool call, so
exact text stays recallable across runs and never comes from another conversation.

Sources (read 2026-12-01): ``AgentMiddleware.wrap_model_call`` and ``ModelRequest.override`` in
``langchain/agents/middleware/types.py`` of langchain 1.5.2, ``ExecutionInfo.thread_id`` in
``langgraph/runtime.py`` of langgraph 1.2.24 and ``ToolRuntime.tool_call_id`` and its reference page
https://reference.langchain.com/python/langchain/agents/middleware/types/wrap_model_call; ``ContextOverflowError``
(https://reference.langchain.com/python/langchain-core/exceptions/ContextOverflowError, langchain-core 1.8.3).
"""
from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain.tools import ToolRuntime
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import convert_to_messages, convert_to_openai_messages
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from snapglyph._config import CONVERSATIONS_IN_MEMORY, STORM_CUTS

from snapglyph.errors import SnapglyphError
from snapglyph.providers.refusal import refusal

from ._common import ConversationCompactor, Conversations, recall_spec

__all__ = ["SnapglyphMiddleware"]


def _thread_id(request: ModelRequest) -> str | None:
    """The LangGraph thread id of the run (``config={"configurable": {"thread_id": ...}}``), or ``None``."""
    info = getattr(getattr(request, "runtime", None), "execution_info", None)
    thread = getattr(info, "thread_id", None)
    if thread is None:
        try:
            from langgraph.config import get_config
            thread = (get_config().get("configurable") or {}).get("thread_id")
        except (RuntimeError, ImportError):              # called outside a runnable context
            thread = None
    return str(thread) if thread is not None else None


def _call_ids(response: Any) -> list[str]:
    """The tool-call ids of a model call's answer (``ModelResponse``, ``ExtendedModelResponse`` or ``AIMessage``)."""
    inner = getattr(response, "model_response", response)
    messages = getattr(inner, "result", None)
    messages = messages if isinstance(messages, list) else [inner]
    return [c.get("id") for m in messages for c in (getattr(m, "tool_calls", None) or []) if c.get("id")]


def _refused(response: Any) -> str:
    """Why a model call's answer gives nothing (a refusal, or no text and no tool call), else ``""``.

    Examples
    --------
    >>> from langchain_core.messages import AIMessage
    >>> _refused(AIMessage(content="", additional_kwargs={"refusal": "I can't help with that."}))
    'refusal (message.refusal)'
    >>> _refused(AIMessage(content="", response_metadata={"stop_reason": "refusal"})), _refused(AIMessage("ok"))
    ('refusal (stop_reason refusal)', '')
    """
    inner = getattr(response, "model_response", response)
    messages = getattr(inner, "result", None)
    ai = (messages if isinstance(messages, list) else [inner])[-1:] or [None]
    msg = ai[0]
    content = getattr(msg, "content", None)
    text = content if isinstance(content, str) else " ".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict)) if isinstance(content, list) else ""
    meta = getattr(msg, "response_metadata", None) or {}
    extra = getattr(msg, "additional_kwargs", None) or {}
    if meta.get("stop_reason") == "refusal":
        return "refusal (stop_reason refusal)"
    chat = {"choices": [{"message": {"content": text, "tool_calls": getattr(msg, "tool_calls", None) or None,
                                     "refusal": extra.get("refusal")}, "finish_reason": meta.get("finish_reason")}]}
    return refusal("openai", chat)


class SnapglyphMiddleware(AgentMiddleware):
    """``create_agent`` middleware compacting each model call's messages to a token budget, one source store and
    learned budget per conversation.

    Parameters
    ----------
    store_dir : str or os.PathLike
        Folder of the conversations' source stores and learned budgets (created when absent); ``recall_messages``
        answers from them.
    budget : int
        Most tokens one call may cost (reserved output included); each conversation's is lowered on its own
        context-overflow errors.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget; default: the chat model's own ``max_tokens``
        (:func:`snapglyph.providers.params.output_reserve`).
    max_conversations : int
        Conversations held in memory (least recently used dropped; their files stay).
    storm_cuts : int
        New cuts of one conversation in :data:`~snapglyph._config.STORM_REQUESTS` requests past which a call
        raises :class:`~snapglyph.errors.CompactionStormError` instead of another rewrite
        (:data:`~snapglyph._config.STORM_CUTS`, as ``serve --storm-cuts``); 0: never.

    Attributes
    ----------
    conversations : Conversations
        Each conversation's store, current ``budget`` and ``last`` compaction.
    tools : list of BaseTool
        ``[recall_messages]``, registered with the agent by ``create_agent``.

    Raises
    ------
    InputError
        If ``store_dir`` is a store file (one store per conversation now: give a folder).

    Examples
    --------
    >>> import tempfile
    >>> mw = SnapglyphMiddleware(tempfile.mkdtemp(), budget=50_000)
    >>> mw.conversations.budget, [t.name for t in mw.tools]
    (50000, ['recall_messages'])
    """

    def __init__(self, store_dir: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None,
                 max_conversations: int = CONVERSATIONS_IN_MEMORY, storm_cuts: int = STORM_CUTS) -> None:
        super().__init__()
        self.conversations = Conversations(store_dir, budget=budget, profile=profile, model=model,
                                           max_tokens=max_tokens, limit=max_conversations, storm_cuts=storm_cuts)
        self.tools = [self._recall_tool()]

    def conversation(self, request: ModelRequest) -> tuple[ConversationCompactor, dict]:
        """The conversation ``request`` belongs to, and the request as an OpenAI chat body (system message,
        messages, tool definitions, the model's ``max_tokens``)."""
        system = [request.system_message] if request.system_message is not None else []
        body: dict[str, Any] = {"model": self.conversations.model or self.conversations.profile,
                                "messages": convert_to_openai_messages(system + list(request.messages))}
        tools = [convert_to_openai_tool(t) for t in request.tools if isinstance(t, BaseTool)]
        if tools:
            body["tools"] = tools
        limit = request.model_settings.get("max_tokens", getattr(request.model, "max_tokens", None))
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            body["max_tokens"] = limit
        return self.conversations.of("openai", body, _thread_id(request)), body

    def compacted(self, request: ModelRequest, conv: ConversationCompactor | None = None,
                  body: dict | None = None) -> tuple[ModelRequest, dict]:
        """``request`` with its messages compacted to its conversation's budget (``request`` itself when they fit),
        and the chat body that stands for what is sent."""
        if conv is None or body is None:
            conv, body = self.conversation(request)
        sent, res = conv.compact(body, "openai")
        if res is None:
            return request, body
        out = sent["messages"]
        if request.system_message is not None and out and out[0].get("role") in ("system", "developer"):
            out = out[1:]  # the head keeps the system message verbatim: send the request's own
        return request.override(messages=convert_to_messages(out)), sent

    def _without_pages(self, conv: ConversationCompactor, sent: dict, body: dict, response: Any) -> bool:
        """Whether ``response`` refused a call sent with page images: then the conversation is compacted without
        pages from now on (at most once: a call sent without pages is never retried)."""
        if sent is body or not conv.carried_pages(sent) or not _refused(response):
            return False
        conv.without_pages()
        return True

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Call the model with the compacted request; on an overflow, learn the next budget from the request that
        overflowed and call once more."""
        conv, body = self.conversation(request)
        req, sent = self.compacted(request, conv, body)
        try:
            response = handler(req)
        except Exception as exc:  # a foreign SDK error: only a recognized overflow is handled
            if not conv.learn(exc, sent, known=isinstance(exc, ContextOverflowError)):
                raise
            retry, sent = self.compacted(request, conv, body)
            try:
                response = handler(retry)
            except Exception as again:  # the retry overflowed too: the conversation's next call starts lower
                conv.learn(again, sent, known=isinstance(again, ContextOverflowError))
                raise
        if self._without_pages(conv, sent, body, response):       # refused with pages: once more, text only
            try:
                retry, sent = self.compacted(request, conv, body)
            except SnapglyphError:                                 # no text-only request fits: the answer stands
                retry = None
            response = handler(retry) if retry is not None else response
        self.conversations.note_calls(conv, _call_ids(response))
        return response

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        """Async twin of :meth:`wrap_model_call`."""
        conv, body = self.conversation(request)
        req, sent = self.compacted(request, conv, body)
        try:
            response = await handler(req)
        except Exception as exc:  # a foreign SDK error: only a recognized overflow is handled
            if not conv.learn(exc, sent, known=isinstance(exc, ContextOverflowError)):
                raise
            retry, sent = self.compacted(request, conv, body)
            try:
                response = await handler(retry)
            except Exception as again:  # the retry overflowed too: the conversation's next call starts lower
                conv.learn(again, sent, known=isinstance(again, ContextOverflowError))
                raise
        if self._without_pages(conv, sent, body, response):       # refused with pages: once more, text only
            try:
                retry, sent = self.compacted(request, conv, body)
            except SnapglyphError:                                 # no text-only request fits: the answer stands
                retry = None
            response = await handler(retry) if retry is not None else response
        self.conversations.note_calls(conv, _call_ids(response))
        return response

    def _recall_tool(self) -> BaseTool:
        spec = recall_spec()

        def recall_messages(ids: str, runtime: ToolRuntime) -> str:
            thread = (runtime.config.get("configurable") or {}).get("thread_id") if runtime.config else None
            return self.conversations.recall_text(ids, runtime.tool_call_id, str(thread) if thread else None)

        return StructuredTool.from_function(recall_messages, name=spec["name"], description=spec["description"])
