"""pydantic-ai adapter: a history processor showing the old middle as page images, and a capability that applies
it to what each request sends, retries once after a context overflow and offers the recall tool.

:class:`SnapglyphHistory` (``messages -> messages``) converts the messages to OpenAI chat dicts, compacts them with
:func:`snapglyph.compact` when over budget, and returns pydantic-ai's own ``ModelMessage`` objects for head and
tail (a ``ModelRequest`` straddling a cut is split into its parts) with, for the middle, one ``ModelRequest`` whose
``UserPromptPart`` holds the pages (``BinaryContent``, ``image/png``) and the snapshot text. pydantic-ai 2 dropped
``Agent(history_processors=...)`` for ``capabilities=[ProcessHistory(processor)]``, which also writes the result
into the run's history (the processor puts the middle of its own snapshots back before compacting again).
:class:`SnapglyphCapability` compacts only what each attempt sends (``prepare_model_request``; the history stays
whole), turns an overflow into the budget :func:`snapglyph.compaction.budget.next_budget` gives for the request that
overflowed and one more attempt (``RetryModelRequest``), and adds the tool. A request sent with page images and
answered with a refusal or nothing (:func:`snapglyph.providers.refusal.refusal`: ``provider_details["refusal"]``,
``finish_reason`` ``content_filter``, no text and no tool call) is attempted once more without pages
(``after_model_request`` raises ``RetryModelRequest``; the text tiers, the snapshot text, ``recall_messages``), and
that conversation is compacted without pages from then on (issue 35); at most one such attempt per request. A
streamed request is not: pydantic-ai refuses ``RetryModelRequest`` for a response that already reached the consumer
(a ``UserError``). The conversation keeps its cut while the tail fits, counts its new cuts, and ends a storm with
:class:`~snapglyph.errors.CompactionStormError` raised from ``prepare_model_request``
(:class:`snapglyph.integrations._common.ConversationCompactor`). Each conversation (the run's
``conversation_id`` where the processor sees the run context, its instructions and first user turn:
:func:`snapglyph.compaction.keys.conversation_id`) has its own source store and learned budget in the processor's
folder (:class:`snapglyph.integrations._common.Conversations`); ``recall_messages`` answers from the store of the
conversation whose model answer made the call.

Sources (read 2026-12-01): https://ai.pydantic.dev/message-history/; pydantic-ai-slim 2.68.0
``capabilities/process_history.py``, ``capabilities/abstract.py`` (``prepare_model_request``,
``on_model_request_error``, ``after_model_request``, ``get_toolset``), ``models/__init__.py``
(``ModelRequestContext``), ``_run_context.py`` (``RunContext.conversation_id``, ``tool_call_id``), ``_utils.py``
(``takes_run_context``: a processor whose first parameter is a ``RunContext`` gets it), ``messages.py`` and
``exceptions.py`` (``RetryModelRequest``, ``ModelContextWindowExceededError``).
"""
from __future__ import annotations

import base64
import contextvars
import dataclasses
import os
import threading
import uuid
from collections import OrderedDict
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai import messages as pm
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelContextWindowExceededError, RetryModelRequest
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.toolsets import FunctionToolset

from snapglyph._config import CONVERSATIONS_IN_MEMORY, STORM_CUTS
from snapglyph.errors import InternalError, StoreError
from snapglyph.providers.refusal import refusal

from ._common import ConversationCompactor, Conversations, recall_spec

__all__ = ["SnapglyphCapability", "SnapglyphHistory"]

_META = "snapglyph_snapshot"  # ModelRequest.metadata key marking a snapshot this adapter made
# the conversation of the request this run's task compacted last, and whether it carried pages (a refusal's retry)
_PREPARED: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("snapglyph_pydantic_ai_sent", default=None)
_MIDDLES_PER_CONVERSATION = 4  # snapshots whose middle is kept to put back (ProcessHistory writes the latest)


class SnapglyphHistory:
    """History processor compacting pydantic-ai messages to a token budget, one source store and learned budget
    per conversation.

    Parameters
    ----------
    store_dir : str or os.PathLike
        Folder of the conversations' source stores and learned budgets (created when absent); ``recall_messages``
        answers from them.
    budget : int
        Most tokens one request may cost (reserved output included); each conversation's is lowered on its own
        context-overflow errors.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget; default: the request's ``max_tokens`` setting
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

    Raises
    ------
    InputError
        If ``store_dir`` is a store file (one store per conversation now: give a folder).

    Examples
    --------
    >>> import tempfile
    >>> from pydantic_ai.messages import ModelRequest, UserPromptPart
    >>> h = SnapglyphHistory(tempfile.mkdtemp(), budget=50_000)
    >>> msgs = [ModelRequest(parts=[UserPromptPart("hi")])]
    >>> h(msgs) is msgs                       # fits: the same list back
    True
    """

    def __init__(self, store_dir: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None,
                 max_conversations: int = CONVERSATIONS_IN_MEMORY, storm_cuts: int = STORM_CUTS) -> None:
        self.conversations = Conversations(store_dir, budget=budget, profile=profile, model=model,
                                           max_tokens=max_tokens, limit=max_conversations, storm_cuts=storm_cuts)
        self._middles: OrderedDict[str, list[pm.ModelMessage]] = OrderedDict()
        self._limit = max_conversations * _MIDDLES_PER_CONVERSATION
        self._lock = threading.Lock()

    def __call__(self, ctx: RunContext[Any], messages: list[pm.ModelMessage] | None = None) -> list[pm.ModelMessage]:
        """The processor as ``ProcessHistory`` calls it (``ctx, messages``: the run's ``conversation_id`` keys the
        conversation), or ``processor(messages)``: :meth:`process` without tool definitions."""
        if messages is None:
            return self.process(ctx)
        return self.process(messages, caller=getattr(ctx, "conversation_id", None))

    def body(self, messages: list[pm.ModelMessage], tools: list[dict] | None = None,
             max_tokens: int | None = None) -> tuple[dict, list[tuple[int, int | None]]]:
        """The OpenAI chat body that stands for a request of ``messages`` (with ``tools`` and the output limit),
        and where each chat message came from (see :func:`_to_chat`)."""
        chat, where = _to_chat(messages)
        body: dict[str, Any] = {"model": self.conversations.model or self.conversations.profile, "messages": chat}
        if tools:
            body["tools"] = list(tools)
        if max_tokens:
            body["max_tokens"] = int(max_tokens)
        return body, where

    def conversation(self, messages: list[pm.ModelMessage], caller: str | None = None) -> ConversationCompactor:
        """The conversation ``messages`` belong to (``caller``: the run's ``conversation_id``)."""
        return self.conversations.of("openai", self.body(self._expand(messages))[0], caller)

    def process(self, messages: list[pm.ModelMessage], tools: list[dict] | None = None,
                max_tokens: int | None = None, caller: str | None = None) -> list[pm.ModelMessage]:
        """Compact ``messages`` (with OpenAI ``tools`` definitions counted in the budget) to their conversation's
        budget; ``caller`` is the caller's key of the conversation (the run's ``conversation_id``).

        Raises
        ------
        StoreError
            The messages hold a snapshot this processor did not make (its middle is not known here).
        snapglyph.BudgetError
            Even the head and the newest round cannot fit the budget.
        """
        full = self._expand(messages)
        body, where = self.body(full, tools, max_tokens)
        conv = self.conversations.of("openai", body, caller)
        sent, res = conv.compact(body, "openai")
        _PREPARED.set((conv, res is not None and bool(res.pages)))
        if res is None:
            return messages if full is messages else full
        out = sent["messages"]
        if res.passthrough:      # fitted under a learned cap, not compacted: the parts it rewrote (images dropped)
            changed = {i: d for i, d in enumerate(out) if i < len(body["messages"]) and d != body["messages"][i]}
            return _pick(full, where, res.tail_ids, changed)
        n_head = len(res.head_ids)
        snap = out[n_head] if len(out) == n_head + 1 + len(res.tail_ids) else {}
        if isinstance(snap.get("content"), str):           # a snapshot without pages: its text alone
            snap = {**snap, "content": [{"type": "text", "text": snap["content"]}]}
        if not isinstance(snap.get("content"), list):
            raise InternalError("the compacted request has no snapshot message between its head and tail")
        pointers = {p[0] for p in res.paged}
        paged = {i: d for i, d in zip(res.tail_ids, out[n_head + 1:]) if i in pointers}
        key = uuid.uuid4().hex
        with self._lock:
            self._middles[key] = _pick(full, where, res.middle_ids, {})
            while len(self._middles) > self._limit:
                self._middles.popitem(last=False)
        snapshot = pm.ModelRequest(parts=[pm.UserPromptPart(_user_content(snap["content"]))], metadata={_META: key})
        return _pick(full, where, res.head_ids, {}) + [snapshot] + _pick(full, where, res.tail_ids, paged)

    def _expand(self, messages: list[pm.ModelMessage]) -> list[pm.ModelMessage]:
        """Put back the middle of each snapshot made here (the history ``ProcessHistory`` wrote)."""
        if not any(_snapshot_key(m) is not None for m in messages):
            return messages
        out: list[pm.ModelMessage] = []
        for m in messages:
            key = _snapshot_key(m)
            if key is None:
                out.append(m)
                continue
            with self._lock:
                middle = self._middles.get(key)
            if middle is None:
                raise StoreError("the history holds a snapglyph snapshot this processor did not make (or made too "
                                 "long ago); use SnapglyphCapability, which never writes snapshots into the history")
            out.extend(middle)
        return out

    def recall_tool(self) -> Tool:
        """The ``recall_messages`` tool answering from the store of the conversation that made the call (for
        ``Agent(tools=[...])``)."""
        spec = recall_spec()

        def recall_messages(ctx: RunContext[Any], ids: str) -> str:
            return self.conversations.recall_text(ids, ctx.tool_call_id, ctx.conversation_id)

        return Tool(recall_messages, name=spec["name"], description=spec["description"], takes_ctx=True)


@dataclasses.dataclass
class SnapglyphCapability(AbstractCapability[Any]):
    """``Agent(capabilities=[...])`` entry: compacts each request's messages (not the run's history) to their
    conversation's budget, retries once after a context-overflow error with the budget learned from the request that
    overflowed, and adds the ``recall_messages`` tool.

    Examples
    --------
    >>> import tempfile
    >>> cap = SnapglyphCapability(SnapglyphHistory(tempfile.mkdtemp()))
    >>> cap.history.conversations.budget
    100000
    """

    history: SnapglyphHistory

    @staticmethod
    def _tools(request_context: ModelRequestContext) -> list[dict]:
        return [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                  "parameters": t.parameters_json_schema}}
                for t in request_context.model_request_parameters.function_tools]

    @staticmethod
    def _max_tokens(request_context: ModelRequestContext) -> int | None:
        return (request_context.model_settings or {}).get("max_tokens")

    async def prepare_model_request(self, ctx: RunContext[Any],
                                    request_context: ModelRequestContext) -> ModelRequestContext:
        """Compact the messages this attempt sends, counting the request's tool definitions."""
        request_context.messages = self.history.process(list(request_context.messages), self._tools(request_context),
                                                        self._max_tokens(request_context), ctx.conversation_id)
        return request_context

    async def on_model_request_error(self, ctx: RunContext[Any], *, request_context: ModelRequestContext,
                                     error: Exception) -> pm.ModelResponse:
        """On the first attempt's context-overflow error, learn the budget from the request as sent and attempt
        once more."""
        sent = list(request_context.messages)
        conv = self.history.conversation(sent, ctx.conversation_id)
        body = self.history.body(sent, self._tools(request_context), self._max_tokens(request_context))[0]
        # learned on every attempt (a retry that overflowed too starts the conversation's next call lower), retried once
        if conv.learn(error, body, known=isinstance(error, ModelContextWindowExceededError)) \
                and request_context.attempt == 1:
            raise RetryModelRequest()
        raise error

    async def after_model_request(self, ctx: RunContext[Any], *, request_context: ModelRequestContext,
                                  response: pm.ModelResponse) -> pm.ModelResponse:
        """Remember which conversation made the answer's tool calls (its ``recall_messages`` reads that store); a
        request sent with pages and refused (not streamed) is attempted once more without them."""
        now = _PREPARED.get()                 # the conversation of this attempt, and whether it carried pages
        if now is not None and now[1] and not request_context.streaming and _refused(response):
            _PREPARED.set(None)
            now[0].without_pages()
            raise RetryModelRequest()
        ids = [p.tool_call_id for p in response.parts if isinstance(p, pm.ToolCallPart)]
        if ids:
            self.history.conversations.note_calls(self.history.conversation(list(request_context.messages),
                                                                            ctx.conversation_id), ids)
        return response

    def get_toolset(self) -> FunctionToolset:
        """A toolset of the ``recall_messages`` tool."""
        return FunctionToolset([self.history.recall_tool()])


def _refused(response: pm.ModelResponse) -> str:
    """Why a model response gives nothing (:func:`snapglyph.providers.refusal.refusal` of it as an OpenAI chat
    answer), else ``""``.

    Examples
    --------
    >>> _refused(pm.ModelResponse(parts=[], provider_details={"refusal": "I can't help with that."}))
    'refusal (message.refusal)'
    >>> _refused(pm.ModelResponse(parts=[pm.TextPart("ok")])), _refused(pm.ModelResponse(parts=[]))
    ('', 'empty answer (no text, no tool call)')
    """
    msg = _assistant(response)
    msg["refusal"] = (response.provider_details or {}).get("refusal")
    return refusal("openai", {"choices": [{"message": msg, "finish_reason": response.finish_reason}]})


def _snapshot_key(m: pm.ModelMessage) -> str | None:
    meta = getattr(m, "metadata", None) if isinstance(m, pm.ModelRequest) else None
    return meta.get(_META) if isinstance(meta, dict) else None


def _to_chat(messages: list[pm.ModelMessage]) -> tuple[list[dict], list[tuple[int, int | None]]]:
    """OpenAI chat dicts for ``messages`` and, for each, ``(message index, part index)`` it came from (part
    ``None``: the whole message; index -1: the instructions, sent as a system message)."""
    chat: list[dict] = []
    where: list[tuple[int, int | None]] = []
    last = next((m for m in reversed(messages) if isinstance(m, pm.ModelRequest)), None)
    if last is not None and last.instructions:
        chat.append({"role": "system", "content": last.instructions})
        where.append((-1, None))
    for i, m in enumerate(messages):
        if isinstance(m, pm.ModelResponse):
            chat.append(_assistant(m))
            where.append((i, None))
            continue
        for k, p in enumerate(m.parts):
            d = _request_part(p)
            if d is not None:
                chat.append(d)
                where.append((i, k))
    return chat, where


def _assistant(m: pm.ModelResponse) -> dict:
    text = "\n\n".join(p.content for p in m.parts if isinstance(p, pm.TextPart) and p.content)
    calls = [{"id": p.tool_call_id, "type": "function",
              "function": {"name": p.tool_name, "arguments": p.args_as_json_str()}}
             for p in m.parts if isinstance(p, pm.ToolCallPart)]
    return {"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})}


def _request_part(p: Any) -> dict | None:
    if isinstance(p, pm.SystemPromptPart):
        return {"role": "system", "content": p.content}
    if isinstance(p, pm.ToolReturnPart):
        return {"role": "tool", "tool_call_id": p.tool_call_id, "content": p.model_response_str()}
    if isinstance(p, pm.RetryPromptPart):
        if p.tool_name is not None:
            return {"role": "tool", "tool_call_id": p.tool_call_id, "content": p.model_response()}
        return {"role": "user", "content": p.model_response()}
    if isinstance(p, pm.UserPromptPart):
        if isinstance(p.content, str):
            return {"role": "user", "content": p.content}
        return {"role": "user", "content": [_user_item(x) for x in p.content]}
    return None


def _user_item(x: Any) -> dict:
    if isinstance(x, str):
        return {"type": "text", "text": x}
    if isinstance(x, pm.BinaryContent) and x.media_type.startswith("image/"):
        url = f"data:{x.media_type};base64,{base64.b64encode(x.data).decode('ascii')}"
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "text", "text": f"[{type(x).__name__}: {getattr(x, 'url', '') or getattr(x, 'media_type', '')}]"}


def _user_content(parts: list[dict]) -> list[Any]:
    """Snapshot content parts (OpenAI chat) as ``UserPromptPart`` content: ``BinaryContent`` images and text."""
    out: list[Any] = []
    for p in parts:
        if p.get("type") == "image_url":
            head, _, data = p["image_url"]["url"].partition(",")
            out.append(pm.BinaryContent(data=base64.b64decode(data), media_type=head[5:].split(";")[0]))
        elif p.get("type") == "text":
            out.append(p["text"])
    return out


def _pick(messages: list[pm.ModelMessage], where: list[tuple[int, int | None]], ids: list[int],
          paged: dict[int, dict]) -> list[pm.ModelMessage]:
    """The original messages (or the parts of a request) the chat messages ``ids`` came from, in order; a part of
    the tail shown as pages (``paged``: id -> the dict sent) takes the pointer text that stands for it."""
    groups: dict[int, list[int]] = {}
    for cid in ids:
        i, k = where[cid]
        if i >= 0:
            groups.setdefault(i, [])
            if k is not None:
                groups[i].append(cid)
    out: list[pm.ModelMessage] = []
    for i, cids in groups.items():
        m = messages[i]
        if isinstance(m, pm.ModelResponse):
            out.append(m)
            continue
        parts = [_paged_part(m.parts[where[c][1]], paged.get(c)) for c in cids]
        same = len(parts) == len(m.parts) and all(a is b for a, b in zip(parts, m.parts))
        out.append(m if same else dataclasses.replace(m, parts=parts))
    return out


def _paged_part(part: Any, sent: dict | None) -> Any:
    if sent is None or not isinstance(part, (pm.ToolReturnPart, pm.UserPromptPart)):
        return part
    content = sent.get("content")
    if isinstance(part, pm.UserPromptPart) and isinstance(content, list):
        content = _user_content(content)
    return dataclasses.replace(part, content=content)
