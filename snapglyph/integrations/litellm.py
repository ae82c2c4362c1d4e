"""LiteLLM adapter: SDK helpers that recover from a context overflow and answer ``recall_messages`` themselves, and
a proxy pre-call hook that compacts over-budget requests.

- :func:`completion_with_recovery` (and :func:`acompletion_with_recovery`) calls ``litellm.completion`` with the
  messages compacted when over budget; on a context-overflow error (``litellm.ContextWindowExceededError``, or any
  error whose body :func:`snapglyph.providers.overflow.detect` recognizes) the conversation's budget becomes what
  :func:`snapglyph.compaction.windows.recovery_budget` gives for the request that overflowed (the one next-budget
  rule, with the windows learned per ``api_base`` and model in the hook's folder), and the call is made once more,
  compacted. These helpers are the loop, so a compacted request offers the ``recall_messages`` tool (by default;
  ``SnapglyphHook(recall=False)`` does not) and the helper answers the model's calls of it from the conversation's
  store, at most ``RECALL_ROUNDS`` rounds: the caller gets only the final answer. There a compaction may show no
  page of the middle (all of it recallable by id). A request whose own tools define ``recall_messages``, or that
  streams (``stream=True``), is answered by the caller as before: no tool is added for it.
- :class:`SnapglyphHook` is a ``CustomLogger``; its ``async_pre_call_hook(user_api_key_dict, cache, data,
  call_type)`` replaces ``data["messages"]`` (and ``data["tools"]``, whose names may be repaired) of a chat
  completion that would cost more than its conversation's budget with the compacted request (head verbatim, the
  old middle as page images, tail verbatim). The proxy serves many conversations, so each gets its own source
  store and learned budget in the hook's folder (:class:`snapglyph.integrations._common.Conversations`), keyed by
  :func:`snapglyph.compaction.keys.conversation_id`: the request's ``user`` and ``metadata["session_id"]`` (the
  caller's own keys), its system prompt and its first user turn. Two users who open with the same words are two
  conversations. The proxy's client runs the tool loop, so the hook adds no tool (the loop it leaves to the
  caller: :meth:`SnapglyphHook.async_pre_call_hook`).

Each conversation keeps its cut while the tail fits, counts its new cuts, and ends a storm with
:class:`~snapglyph.errors.CompactionStormError` raised from the helper or the hook instead of another rewrite
(:class:`snapglyph.integrations._common.ConversationCompactor`, ``storm_cuts``). The helpers send a compacted request
answered with a refusal or nothing (:func:`snapglyph.providers.refusal.refusal`) once more without pages, and that
conversation is compacted without pages from then on (at most once per request); the hook cannot (the proxy sends
the request and relays its answer after the hook returned).

Sources (read 2026-12-01): https://docs.litellm.ai/docs/proxy/call_hooks (``async_pre_call_hook`` returns the
modified ``data``) and ``litellm/integrations/custom_logger.py`` of litellm 1.110.2; ``ContextWindowExceededError``
in ``litellm/exceptions.py`` (https://docs.litellm.ai/docs/exception_mapping); the ``user``, ``metadata``,
``api_base`` and ``tools`` request fields and ``choices[0].message.tool_calls`` of the answer
(https://docs.litellm.ai/docs/completion/input, https://docs.litellm.ai/docs/completion/function_call).
"""
from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any, NamedTuple

import litellm
from litellm.exceptions import ContextWindowExceededError
from litellm.integrations.custom_logger import CustomLogger

from snapglyph._config import CONVERSATIONS_IN_MEMORY, RECALL_MARGIN, RECALL_ROUNDS, STORM_CUTS
from snapglyph.compaction.budget import estimate, recall_room
from snapglyph.compaction.recall import RECALL_TOOL_NAME
from snapglyph.errors import SnapglyphError
from snapglyph.providers.refusal import refusal

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
        Folder of the conversations' source stores and learned budgets, and of the windows learned per
        ``api_base`` and model (``windows.json``, :mod:`snapglyph.compaction.windows`); created when absent.
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
    storm_cuts : int
        New cuts of one conversation in :data:`~snapglyph._config.STORM_REQUESTS` requests past which a call
        raises :class:`~snapglyph.errors.CompactionStormError` instead of another rewrite
        (:data:`~snapglyph._config.STORM_CUTS`, as ``serve --storm-cuts``); 0: never.
    recall : bool
        :func:`completion_with_recovery` offers ``recall_messages`` in a compacted request and answers it (the
        proxy hook never adds it: its caller runs the loop).

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
    >>> hook.answers_recall(data), hook.answers_recall({**data, "stream": True})
    (True, False)
    """

    def __init__(self, store_dir: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None, metadata_key: str = "session_id",
                 max_conversations: int = CONVERSATIONS_IN_MEMORY, storm_cuts: int = STORM_CUTS,
                 recall: bool = True) -> None:
        super().__init__()
        self.conversations = Conversations(store_dir, budget=budget, profile=profile, model=model,
                                           max_tokens=max_tokens, recall=False, limit=max_conversations,
                                           storm_cuts=storm_cuts)
        self.metadata_key, self.recall = metadata_key, recall

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

    @staticmethod
    def where(data: dict) -> tuple[str, str]:
        """``(api_base, model)`` of request ``data``: the pair its window is learned for (empty where not given)."""
        base = data.get("api_base") or data.get("base_url") or ""
        return (base if isinstance(base, str) else "", data.get("model") if isinstance(data.get("model"), str) else "")

    def answers_recall(self, data: dict) -> bool:
        """Whether :func:`completion_with_recovery` offers and answers ``recall_messages`` for request ``data``:
        ``recall`` set, the answer not streamed, and no tool of the caller's own by that name (the caller answers
        that one)."""
        tools = data.get("tools") if isinstance(data.get("tools"), list) else []
        own = any(isinstance(t, dict) and isinstance(t.get("function"), dict)
                  and t["function"].get("name") == RECALL_TOOL_NAME for t in tools)
        return self.recall and not data.get("stream") and not own

    def conversation(self, data: dict | list) -> ConversationCompactor:
        """The conversation (store, budget, last result) request ``data`` (or a bare message list) belongs to."""
        data = _data(data)
        return self.conversations.of("openai", self.body(data), self.caller(data))

    def compact_data(self, data: dict, *, recall: bool = False) -> dict:
        """``data`` with ``messages`` compacted when over the conversation's budget (a new dict; else ``data``), and
        ``tools`` as the compaction sent them (a name the provider would refuse repaired in both, as
        :mod:`snapglyph.providers.tool_names` does; with ``recall``, ``recall_messages`` added and
        :func:`~snapglyph.compaction.budget.recall_room` of the budget left free for its answers)."""
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            return data
        conv = self.conversation(data)                 # with recall, room for its answers (recall_room)
        sent, res = conv.compact(self.body(data), "openai", recall=recall, room=recall_room(conv.budget) * recall,
                                 where=self.where(data))     # the learned window and caps of its api_base and model
        if res is None:
            return data
        out = {**data, "messages": sent["messages"]}
        if sent.get("tools"):
            out["tools"] = sent["tools"]
        return out

    def learn(self, data: dict | list, exc: BaseException, sent: dict | None = None) -> bool:
        """After ``exc`` answered ``sent`` (the request as sent; default ``data``), teach the conversation of
        ``data`` its next budget; ``True`` when ``exc`` is an overflow."""
        data = _data(data)
        known = isinstance(exc, ContextWindowExceededError)
        sent = sent if sent is not None else data
        return self.conversation(data).learn(exc, self.body(sent), known=known, where=self.where(sent))

    def answered(self, data: dict | list, sent: dict | None = None) -> None:
        """``sent`` (the request as sent; default ``data``) was answered: its size is a lower bound of the window
        of its ``api_base`` and model (:mod:`snapglyph.compaction.windows`)."""
        data = _data(data)
        sent = sent if sent is not None else data
        self.conversation(data).answered(self.body(sent), where=self.where(sent))

    def recall_text(self, data: dict | list, ids: str) -> str:
        """Answer a ``recall_messages`` call of the conversation of request ``data`` (or its message list) from
        its store."""
        return self.conversation(data).recall_text(ids)

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any) -> dict:
        """Proxy hook: compact ``data["messages"]`` of a chat completion over budget (``data["tools"]`` as the
        compaction sent them); returns ``data``.

        The proxy's client runs the loop, and the hook leaves it to the client: (1) send the request; (2) on a
        context-overflow answer (LiteLLM raises ``ContextWindowExceededError``; any body
        :func:`snapglyph.providers.overflow.detect` reads), call :meth:`learn` with the request as it was sent,
        then send the same request again: this hook compacts it to the learned budget; (3) on an answer, call
        :meth:`answered` (the window learned for its model then holds it). The hook adds no ``recall_messages``
        tool and never sends a middle shown on no page; a client that wants recall adds
        ``snapglyph.recall_tool("openai")`` to its tools and answers each call with :meth:`recall_text` (given
        the same request keys, so the answer comes from that conversation's store), sending the answer as a
        ``tool`` message. :func:`completion_with_recovery` is that loop for SDK callers.
        """
        if call_type not in _CHAT_CALLS:
            return data
        out = self.compact_data(data)
        if out is not data:
            data["messages"] = out["messages"]
            if "tools" in out:
                data["tools"] = out["tools"]
        return data


def _recall_calls(reply: Any) -> list[tuple[str, str]] | None:
    """``[(call id, ids asked)]`` when every tool call of ``reply`` is a ``recall_messages`` call, else ``None``."""
    try:
        calls = reply.choices[0].message.tool_calls or []
    except (AttributeError, IndexError, TypeError):
        return None
    if not calls or any(getattr(getattr(c, "function", None), "name", None) != RECALL_TOOL_NAME for c in calls):
        return None
    out = []
    for c in calls:
        try:
            args = json.loads(c.function.arguments or "{}")
        except (TypeError, ValueError):
            args = {}
        out.append((c.id, str(args.get("ids", "")) if isinstance(args, dict) else ""))
    return out


def _cut(text: str, share: float) -> str:
    """``text`` cut to ``share`` of its characters, saying so."""
    keep = int(len(text) * share)
    if keep >= len(text):
        return text
    return (text[:keep] + f"\n[recall_messages: cut to the room the budget leaves, {len(text) - keep} of "
            f"{len(text)} characters not shown; ask for fewer ids]")


def _follow_up(hook: SnapglyphHook, data: dict, sent: dict, reply: Any, calls: list[tuple[str, str]]) -> dict:
    """``sent`` followed by the model's recall calls and their answers from the conversation's store, the answers
    cut (and said so) where the whole would pass the conversation's budget."""
    conv = hook.conversation(data)
    asked = reply.choices[0].message.model_dump(exclude_none=True)

    def with_answers(texts: list[str]) -> dict:
        answers = [{"role": "tool", "tool_call_id": cid, "content": t} for (cid, _), t in zip(calls, texts)]
        return {**sent, "messages": list(sent["messages"]) + [asked] + answers}

    def cost(body: dict) -> float:           # the estimate at the calibration, never below it
        return estimate(hook.body(body), conv.profile, max_tokens=conv.max_tokens) * max(1.0, conv.ratio)

    texts = [conv.recall_text(ids) for _, ids in calls]
    full = cost(with_answers(texts))
    if full > conv.budget:
        bare = cost(with_answers([""] * len(texts)))
        share = max(0.0, conv.budget - bare - RECALL_MARGIN) / max(1.0, full - bare)
        texts = [_cut(t, share) for t in texts]
    return with_answers(texts)


class _Done(NamedTuple):
    """The end of :func:`_steps`: the reply the caller gets."""

    reply: Any


def _refused(reply: Any) -> str:
    """Why a chat completion reply gives nothing (:func:`snapglyph.providers.refusal.refusal`: a ``refusal``, no
    text and no tool call), else ``""``.

    Examples
    --------
    >>> _refused({"choices": [{"message": {"content": None}}]}), _refused({"choices": [{"message": {"content": "ok"}}]})
    ('empty answer (no text, no tool call)', '')
    """
    data = reply.model_dump() if hasattr(reply, "model_dump") else reply
    return refusal("openai", data if isinstance(data, dict) else {})


def _next(step: Any, value: Any) -> Any:
    """The next request :func:`_steps` wants sent, or :class:`_Done` with its reply."""
    try:
        return step(value)
    except StopIteration as end:
        return _Done(end.value)


def _steps(hook: "SnapglyphHook", kwargs: dict) -> Generator[dict, Any, Any]:
    """The one recovery of :func:`completion_with_recovery` and its async twin, as a generator: it yields each
    request to send and is sent the reply (or thrown the call's exception); it returns the caller's reply.
    Compacted as needed; an overflow learned and retried once (a second overflow lowers the conversation's next
    budget and is raised); then up to :data:`RECALL_ROUNDS` rounds of ``recall_messages`` answered."""
    recall = hook.answers_recall(kwargs)
    sent = hook.compact_data(kwargs, recall=recall)
    try:
        reply = yield sent
    except Exception as exc:  # a foreign error: only a recognized overflow is handled
        if not hook.learn(kwargs, exc, sent):
            raise
        sent = hook.compact_data(kwargs, recall=recall)
        try:
            reply = yield sent
        except Exception as again:  # the retry overflowed too: the conversation's next call starts lower
            hook.learn(kwargs, again, sent)
            raise
    conv = hook.conversation(kwargs) if sent is not kwargs else None
    if conv is not None and conv.carried_pages(sent["messages"]) and _refused(reply):
        conv.without_pages()                       # refused with pages: once more, text only (at most once)
        try:
            text = hook.compact_data(kwargs, recall=recall)
        except SnapglyphError:                     # no text-only request fits: the answer stands
            text = None
        if text is not None:
            sent = text
            reply = yield sent
    hook.answered(kwargs, sent)
    for _ in range(RECALL_ROUNDS if recall and sent is not kwargs else 0):
        calls = _recall_calls(reply)
        if calls is None:
            break
        sent = _follow_up(hook, kwargs, sent, reply, calls)
        reply = yield sent
    return reply


def completion_with_recovery(hook: SnapglyphHook, **kwargs: Any) -> Any:
    """``litellm.completion(**kwargs)`` with the messages compacted to the conversation's budget; on a context
    overflow the budget is learned from the request that overflowed and the call made once more, compacted. A
    compacted request offers ``recall_messages`` (:meth:`SnapglyphHook.answers_recall`) and the model's calls of
    it are answered here, from the conversation's store, at most ``RECALL_ROUNDS`` rounds; the reply returned is
    the model's answer after them (one that still asks for recall after the last round is returned as it is).

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
    steps = _steps(hook, kwargs)
    sent = next(steps)
    while True:
        try:
            reply = litellm.completion(**sent)
        except Exception as exc:
            sent = _next(steps.throw, exc)
        else:
            sent = _next(steps.send, reply)
        if isinstance(sent, _Done):
            return sent.reply


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
    steps = _steps(hook, kwargs)
    sent = next(steps)
    while True:
        try:
            reply = await litellm.acompletion(**sent)
        except Exception as exc:
            sent = _next(steps.throw, exc)
        else:
            sent = _next(steps.send, reply)
        if isinstance(sent, _Done):
            return sent.reply
