"""OpenAI Agents SDK adapter: compact what each model call sends, recover from a context overflow, offer recall.

The SDK keeps its own history; :class:`InputFilter` (a ``RunConfig.call_model_input_filter``) rewrites only what
one call sends (Responses items in, Responses items out: head verbatim, the old middle as page images, tail
verbatim). :class:`RecoveringModel` wraps a model so that a context-overflow error (recognized by
:func:`snapglyph.providers.overflow.detect`) teaches the conversation a budget by
:func:`snapglyph.compaction.budget.next_budget` (from the request that overflowed) and the call is retried once,
compacted; a stream that fails before its first event is retried so too. A call sent with page images and answered
with a refusal or nothing (:func:`snapglyph.providers.refusal.refusal` of its Responses output: a ``refusal`` part, no
text and no tool call) is made once more without pages (the text tiers, the snapshot text, ``recall_messages``), and
that conversation is compacted without pages from then on (issue 35); at most one such retry per call. A streamed
call is not retried so: ``Model.stream_response`` hands each event to the run as it comes, so a refusal is seen only
after the run received it. The conversation keeps its cut while the tail fits, counts its new cuts, and ends a storm
with :class:`~snapglyph.errors.CompactionStormError` raised from the filter
(:class:`snapglyph.integrations._common.ConversationCompactor`). Each conversation (the caller's key: the
run context's ``conversation_id``, ``session_id`` or ``group_id``, else the traced run's group id; plus the
instructions and the first user turn, :func:`snapglyph.compaction.keys.conversation_id`) has its own source store and
learned budget in the filter's folder (:class:`snapglyph.integrations._common.Conversations`).
:meth:`InputFilter.recall_tool` is a ``FunctionTool`` answering ``recall_messages`` from the store of the run's own
conversation, so exact text stays recallable across runs and never comes from another conversation.

The filter hands the conversation it picked to the model wrapper and the tool through a context variable (the SDK
calls the filter, the model and the tools in the run's own task or tasks it starts), so concurrent runs stay apart.

Sources: ``agents/run_config.py`` (``ModelInputData``, ``CallModelData``, ``call_model_input_filter``),
``agents/run_internal/turn_preparation.py`` (the filter is awaited in the run loop), ``agents/tool_context.py``
(``ToolContext.tool_call_id``), ``agents/tracing/create.py`` (``get_current_trace``) and
``agents/models/interface.py`` (``Model.get_response``, ``Model.stream_response``) of openai-agents 0.24.0, read
2026-12-01 and 2026-12-04.
"""
from __future__ import annotations

import contextvars
import json
import os
from typing import Any, Callable

from agents import FunctionTool, RunContextWrapper
from agents.models.interface import Model
from agents.run_config import CallModelData, ModelInputData
from agents.tracing import get_current_trace

from snapglyph._config import CONVERSATIONS_IN_MEMORY, STORM_CUTS
from snapglyph.errors import SnapglyphError
from snapglyph.providers.refusal import refusal

from ._common import ConversationCompactor, Conversations, recall_spec

__all__ = ["InputFilter", "RecoveringModel"]

_CALLER_KEYS = ("conversation_id", "session_id", "group_id")
# the conversation the filter picked for this run's current call, with what it was given and what it returned
_CURRENT: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("snapglyph_agents_call", default=None)


def _plain(item: Any) -> Any:
    """A Responses input item as plain JSON data (the SDK may hold pydantic objects)."""
    if hasattr(item, "model_dump"):
        return item.model_dump(exclude_none=True)
    return item


def context_key(context: Any) -> str | None:
    """The caller's key of a run: the run context itself when it is a string, else its ``conversation_id``,
    ``session_id`` or ``group_id`` (key or attribute), else the traced run's group id (``RunConfig.group_id``,
    seen while tracing is on); ``None`` when there is none.

    Examples
    --------
    >>> context_key({"session_id": "user-7"}), context_key("thread-2"), context_key(None)
    ('user-7', 'thread-2', None)
    """
    if isinstance(context, str):
        return context or None
    for name in _CALLER_KEYS:
        value = context.get(name) if isinstance(context, dict) else getattr(context, name, None)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    group = getattr(get_current_trace(), "group_id", None)
    return group if isinstance(group, str) and group else None


class InputFilter:
    """``RunConfig.call_model_input_filter`` that compacts each model call's input to its conversation's budget.

    Parameters
    ----------
    store_dir : str or os.PathLike
        Folder of the conversations' source stores and learned budgets (created when absent).
    budget : int
        Most tokens one call may cost (reserved output included); each conversation's is lowered on its own
        overflows.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs and output-token naming; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget (default: :func:`snapglyph.providers.params.output_reserve`).
    key : callable, optional
        ``f(CallModelData) -> str | None``: the caller's key of the conversation; default :func:`context_key` of
        the run context.
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

    Raises
    ------
    InputError
        If ``store_dir`` is a store file (one store per conversation now: give a folder).

    Examples
    --------
    >>> import tempfile
    >>> f = InputFilter(tempfile.mkdtemp(), budget=50_000)
    >>> f.conversations.budget
    50000
    """

    def __init__(self, store_dir: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None,
                 key: Callable[[CallModelData], str | None] | None = None,
                 max_conversations: int = CONVERSATIONS_IN_MEMORY, storm_cuts: int = STORM_CUTS) -> None:
        self.conversations = Conversations(store_dir, budget=budget, profile=profile, model=model,
                                           max_tokens=max_tokens, limit=max_conversations, storm_cuts=storm_cuts)
        self.key = key

    def body(self, instructions: str | None, items: list, max_tokens: int | None = None) -> dict:
        """The Responses request body that stands for one call (its instructions, its input items as plain data,
        its output limit)."""
        body: dict[str, Any] = {"model": self.conversations.model or self.conversations.profile,
                                "input": [_plain(i) for i in items]}
        if instructions:
            body["instructions"] = instructions
        if max_tokens:
            body["max_output_tokens"] = int(max_tokens)
        return body

    def compact_input(self, instructions: str | None, items: list, conv: ConversationCompactor | None = None,
                      caller: str | None = None, max_tokens: int | None = None) -> tuple[str | None, list]:
        """Compact Responses ``items`` (and ``instructions``) to the conversation's budget, reserving ``max_tokens``
        (the agent's ``ModelSettings.max_tokens``) for the output; returns them unchanged when they fit."""
        body = self.body(instructions, items, max_tokens)
        conv = conv or self.conversations.of("responses", body, caller)
        sent, res = conv.compact(body, "responses")
        if res is None:
            return instructions, items
        return sent.get("instructions", instructions), sent["input"]

    def __call__(self, data: CallModelData) -> ModelInputData:
        """Filter one call's input (the SDK's stored history is not changed)."""
        md = data.model_data
        caller = self.key(data) if self.key is not None else context_key(data.context)
        limit = getattr(getattr(data.agent, "model_settings", None), "max_tokens", None)
        conv = self.conversations.of("responses", self.body(md.instructions, md.input), caller)
        instructions, items = self.compact_input(md.instructions, md.input, conv, max_tokens=limit)
        _CURRENT.set((conv, md.instructions, md.input, conv.carried_pages(items)))
        return ModelInputData(input=items, instructions=instructions)

    def current(self, instructions: str | None, items: Any) -> tuple[ConversationCompactor, str | None, list]:
        """The conversation of a model call and its input before the filter: the filter's pick for this call (it
        runs right before each model call, in the run's task), else the conversation ``items`` belong to."""
        now = _CURRENT.get()
        if now is not None:
            return now[0], now[1], now[2]
        items = [{"role": "user", "content": items}] if isinstance(items, str) else list(items)
        return self.conversations.of("responses", self.body(instructions, items)), instructions, items

    def recall_tool(self) -> FunctionTool:
        """The ``recall_messages`` tool answering from the run's conversation's store (add it to
        ``Agent(tools=...)``)."""
        spec = recall_spec()

        async def invoke(ctx: RunContextWrapper[Any], args: str) -> str:
            try:
                ids = json.loads(args or "{}").get("ids", "")
            except (ValueError, AttributeError) as e:
                return f"error: the arguments are not a JSON object with ids ({e})"
            conv = self.conversations.for_call(getattr(ctx, "tool_call_id", None))
            now = _CURRENT.get()
            if conv is None and now is not None:
                conv = now[0]
            if conv is None:
                return self.conversations.recall_text(ids)       # the one-line "not known here"
            return conv.recall_text(ids)

        return FunctionTool(name=spec["name"], description=spec["description"],
                            params_json_schema=spec["parameters"], on_invoke_tool=invoke, strict_json_schema=False)


def _refused(response: Any) -> str:
    """Why a ``ModelResponse`` gives nothing (:func:`snapglyph.providers.refusal.refusal` of its Responses output:
    a refusal part, or no text and no tool call), else ``""``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> _refused(SimpleNamespace(output=[{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}]))
    'refusal (a refusal part)'
    >>> _refused(SimpleNamespace(output=[{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]))
    ''
    """
    return refusal("responses", {"output": [_plain(i) for i in getattr(response, "output", None) or []]})


def _call_ids(response: Any) -> list[str]:
    out = []
    for item in getattr(response, "output", None) or []:
        item = _plain(item)
        if isinstance(item, dict) and item.get("type") == "function_call" and item.get("call_id"):
            out.append(item["call_id"])
    return out


class RecoveringModel(Model):
    """A model that, on a context-overflow error, teaches the conversation's budget from the request that
    overflowed and retries the call once, compacted.

    Parameters
    ----------
    inner : agents.models.interface.Model
        The model to call (e.g. ``OpenAIResponsesModel``).
    input_filter : InputFilter
        The filter given to ``RunConfig``; the budget of the conversation it picked is learned.

    Examples
    --------
    >>> RecoveringModel.__name__
    'RecoveringModel'
    """

    def __init__(self, inner: Model, input_filter: InputFilter) -> None:
        self.inner = inner
        self.input_filter = input_filter

    def _learn(self, exc: Exception, system_instructions: str | None, input: Any,
               model_settings: Any) -> tuple[str | None, list] | None:
        """The retry's instructions and input after an overflow of this call, or ``None`` when ``exc`` is none."""
        flt = self.input_filter
        conv, instructions, original = flt.current(system_instructions, input)
        sent_items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        limit = getattr(model_settings, "max_tokens", None)
        sent = flt.body(system_instructions, sent_items, limit)
        if not conv.learn(exc, sent):
            return None
        out = flt.compact_input(instructions, original, conv, max_tokens=limit)
        now = _CURRENT.get()
        if now is not None and now[0] is conv:               # whether the retry carries pages (a refusal's retry)
            _CURRENT.set((*now[:3], conv.carried_pages(out[1])))
        return out

    def _text_only(self, response: Any, system_instructions: str | None, input: Any,
                   model_settings: Any) -> tuple[str | None, list] | None:
        """The retry's instructions and input without pages where ``response`` refused a call the filter sent with
        pages (at most once: the retry carries none), else ``None``."""
        now = _CURRENT.get()
        if now is None or not now[3] or not _refused(response):
            return None
        conv, instructions, original = now[0], now[1], now[2]
        conv.without_pages()
        _CURRENT.set((conv, instructions, original, False))
        try:
            return self.input_filter.compact_input(instructions, original, conv,
                                                   max_tokens=getattr(model_settings, "max_tokens", None))
        except SnapglyphError:                     # no text-only request fits: the answer stands
            return None

    async def get_response(self, system_instructions, input, model_settings, *args, **kwargs):
        """Call ``inner``; on an overflow, compact to the learned budget and call once more; a call sent with pages
        and refused, once more without them."""
        try:
            response = await self.inner.get_response(system_instructions, input, model_settings, *args, **kwargs)
        except Exception as exc:  # a foreign SDK error: only a recognized overflow is handled
            retry = self._learn(exc, system_instructions, input, model_settings)
            if retry is None:
                raise
            try:
                response = await self.inner.get_response(retry[0], retry[1], model_settings, *args, **kwargs)
            except Exception as again:  # the retry overflowed too: the conversation's next call starts lower
                self._learn(again, retry[0], retry[1], model_settings)
                raise
        text = self._text_only(response, system_instructions, input, model_settings)
        if text is not None:
            response = await self.inner.get_response(text[0], text[1], model_settings, *args, **kwargs)
        conv = self.input_filter.current(system_instructions, input)[0]
        self.input_filter.conversations.note_calls(conv, _call_ids(response))
        return response

    async def stream_response(self, system_instructions, input, model_settings, *args, **kwargs):
        """Stream ``inner``'s answer; an overflow before the first event is retried once, compacted."""
        started = False
        try:
            async for event in self.inner.stream_response(system_instructions, input, model_settings, *args,
                                                          **kwargs):
                started = True
                yield event
            return
        except Exception as exc:  # a foreign SDK error: only a recognized overflow before any event is handled
            retry = None if started else self._learn(exc, system_instructions, input, model_settings)
            if retry is None:
                raise
        async for event in self.inner.stream_response(retry[0], retry[1], model_settings, *args, **kwargs):
            yield event
