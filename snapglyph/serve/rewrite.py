"""What the proxy does to a request body: read it, key it, estimate it, compact it and put it back together.

A compacted body is the client's own body with only the conversation replaced (``messages``; for Responses
``input``): every other field (``stream``, ``max_tokens``, ``tools``, ``tool_choice``, ``temperature``, Anthropic's
``system`` with its ``cache_control`` blocks, Responses' ``instructions``, metadata) is sent as the client sent it.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from .._config import SERVE_MARGIN
from ..errors import SnapglyphError, UnknownProfileError
from ..providers.overflow import OverflowResult

__all__ = ["DEFAULT_TEXT_ONLY", "ROUTES", "Budget", "budget_for", "compact_body", "conversation_of",
           "estimate", "image_refusal", "max_tokens_of", "pick_profile", "text_only"]

ROUTES = {"/v1/messages": "anthropic", "/v1/messages/count_tokens": "anthropic",
          "/v1/chat/completions": "openai", "/chat/completions": "openai",
          "/v1/responses": "responses", "/responses": "responses"}
"""Request paths the proxy reads, and their dialect; every other path is relayed unchanged."""


DEFAULT_TEXT_ONLY = ("gpt-3.5*", "gpt-4", "gpt-4-0*", "gpt-4-32k*", "o1-mini*", "o3-mini*", "deepseek-*",
                     "codestral*", "*embed*", "text-*", "qwen2.5-coder*", "qwen3-coder*", "llama-3*", "llama3*")
"""Model name patterns (``fnmatch``, case-insensitive) that do not read images: never sent pages."""

_IMAGE_REFUSAL = re.compile(r"does not support image|image input is not supported|not (?:a )?multimodal|"
                            r"images? (?:are|is) not supported|model does not support vision|"
                            r"image_url is only supported by certain models|cannot read images?", re.I)


def text_only(model: str, patterns: tuple[str, ...] = DEFAULT_TEXT_ONLY) -> bool:
    """Whether ``model`` matches a text-only pattern (a provider prefix such as ``openai/`` is ignored).

    Examples
    --------
    >>> text_only("deepseek-chat"), text_only("openai/gpt-3.5-turbo"), text_only("claude-sonnet-4-5")
    (True, True, False)
    """
    m = (model or "").strip().lower().rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(m, p.lower()) for p in patterns)


def image_refusal(text: str) -> bool:
    """Whether an upstream error says the model does not read images.

    Examples
    --------
    >>> image_refusal('{"error": {"message": "This model does not support image input"}}')
    True
    """
    return bool(_IMAGE_REFUSAL.search(text or ""))


@functools.lru_cache(maxsize=256)
def pick_profile(model: str, dialect: str, override: str | None = None) -> str:
    """The reader profile name: ``override``, else the one for ``model``, else the dialect's default
    (``claude`` for Anthropic, ``openai`` otherwise).

    Raises
    ------
    UnknownProfileError
        If ``override`` names no profile.

    Examples
    --------
    >>> pick_profile("claude-sonnet-4-5", "anthropic"), pick_profile("my-local-model", "openai")
    ('claude', 'openai')
    """
    from ..providers.profiles import profile, profile_for_model
    if override:
        return profile(override).name
    try:
        return profile_for_model(model).name if isinstance(model, str) and model else _default(dialect)
    except UnknownProfileError:
        return _default(dialect)


def _default(dialect: str) -> str:
    return "claude" if dialect == "anthropic" else "openai"


def _items(dialect: str, body: dict) -> list:
    items = body.get("input") if dialect == "responses" else body.get("messages")
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return items if isinstance(items, list) else []


def conversation_of(dialect: str, body: dict) -> str | None:
    """The proxy's key of a request body's conversation: snapglyph's conversation key of its first user turn (read
    alone, cheap on long bodies) within the dialect; ``None`` when the body is not a conversation snapglyph can read.

    The dialect is part of the key: two clients of different APIs that open with the same words are two
    conversations (their message ids, stores and cuts must not mix).

    Examples
    --------
    >>> a = conversation_of("openai", {"messages": [{"role": "user", "content": "fix the bug"}]})
    >>> b = conversation_of("openai", {"messages": [{"role": "system", "content": "x"},
    ...                                             {"role": "user", "content": "fix  the bug"}]})
    >>> c = conversation_of("anthropic", {"messages": [{"role": "user", "content": "fix the bug"}]})
    >>> a == b, a == c, len(a)
    (True, False, 16)
    """
    items = _items(dialect, body)
    first = next((i for i, m in enumerate(items) if isinstance(m, dict) and m.get("role") == "user"), None)
    if first is None:
        return None
    try:
        text = json.dumps(items[:first + 1], ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return _key_of(dialect, text)


@functools.lru_cache(maxsize=1024)
def _key_of(dialect: str, first_turn: str) -> str | None:
    """The conversation key of a first turn (JSON text of the items up to the first user message)."""
    from ..compaction.second_pass import conversation_key
    from ..readers.registry import from_request
    items = json.loads(first_turn)
    mini = {"input": items} if dialect == "responses" else {"messages": items}
    try:
        key = conversation_key(from_request(mini).messages)
    except SnapglyphError:
        return None
    return hashlib.sha256(f"{dialect}:{key}".encode()).hexdigest()[:16]


def max_tokens_of(body: dict, default: int = 4096) -> int:
    """The output tokens a body reserves (``max_tokens``, ``max_completion_tokens`` or ``max_output_tokens``).

    Examples
    --------
    >>> max_tokens_of({"max_tokens": 1024}), max_tokens_of({"max_output_tokens": 300})
    (1024, 300)
    >>> max_tokens_of({"max_tokens": True}), max_tokens_of({})     # not a positive int: the default
    (4096, 4096)
    """
    for k in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        v = body.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return default


@dataclass(frozen=True)
class Budget:
    """A compaction budget in estimated tokens and how it was reached.

    Attributes
    ----------
    tokens : int
        The budget given to :func:`snapglyph.compact` (reserved output included).
    window : int or None
        The provider's window in its tokens.
    ratio : float
        Provider tokens per estimated token.

    Examples
    --------
    >>> b = budget_for(10_000, 1000, window=8000, ratio=2.0)   # 2 provider tokens per estimated token
    >>> b
    Budget(tokens=4180, window=8000, ratio=2.0)
    >>> (b.tokens - 1000) * b.ratio + 1000     # in provider tokens: the window less the 8% margin
    7360.0
    """

    tokens: int
    window: int | None
    ratio: float


def budget_for(estimate: int, max_tokens: int, *, overflow: OverflowResult | None = None, window: int | None = None,
               ratio: float = 1.0, margin: float = SERVE_MARGIN) -> Budget:
    """The budget that brings a request under the window.

    Parameters
    ----------
    estimate : int
        snapglyph's estimate of the request, reserved output included.
    max_tokens : int
        Output tokens the request reserves.
    overflow : OverflowResult, optional
        The provider's overflow answer: its ``limit`` is the window (else ``window``), its ``prompt_tokens``
        against the estimate give the ratio (else ``ratio``). Where the message shows the provider counts the
        prompt alone (Anthropic's ``prompt is too long``, Gemini, Mistral, xAI, llama.cpp, LM Studio) the
        output is not charged to the window.
    window : int, optional
        The window to use when the overflow names none (``--window`` or learned earlier).
    ratio : float
        Provider tokens per estimated token, when the overflow reports no prompt size.
    margin : float
        Share of the window kept free.

    Returns
    -------
    Budget

    Examples
    --------
    >>> budget_for(10_000, 1000, window=8000, ratio=1.0)
    Budget(tokens=7360, window=8000, ratio=1.0)
    """
    prompt_est = max(1, estimate - max_tokens)
    if overflow is not None and overflow.prompt_tokens:
        ratio = overflow.prompt_tokens / prompt_est
    ratio = min(max(ratio, 0.25), 8.0)
    window = (overflow.limit if overflow is not None and overflow.limit else None) or window
    if window is None:
        # No window anywhere: the request as sent was too long; aim for three quarters of it.
        window = int(prompt_est * ratio * 0.75)
    prompt_only = overflow is not None and (
        overflow.provider in ("gemini", "mistral", "xai", "llamacpp", "lmstudio")
        or (overflow.provider == "anthropic" and "max_tokens" not in overflow.message))
    room = window * (1 - margin) - (0 if prompt_only else max_tokens)
    return Budget(max(1, int(room / ratio)) + max_tokens, window, ratio)


def compact_body(body: dict, dialect: str, *, profile: str, budget: int, store: Any = None,
                 cut: Any = None) -> tuple[dict, Any, Any]:
    """Compact a request body and put the client's other fields back.

    Parameters
    ----------
    body : dict
        The client's request body.
    dialect : str
    profile : str
        Reader profile of the pages.
    budget : int
        Estimated tokens the request may cost, reserved output included.
    store : SourceStore, optional
    cut : snapglyph.compaction.sticky.Cut, optional
        Keep this earlier cut if its tail still fits (``compact(..., cut=)``, :mod:`snapglyph.compaction.sticky`);
        ``None`` makes a new cut.

    Returns
    -------
    (dict, CompactResult, Cut)
        The body to send, the compaction's result and its cut.

    Raises
    ------
    BudgetError, LimitError, InputError, FormatError, ValidationError
        From the compaction; :class:`~snapglyph.compaction.sticky.CutNoLongerFits` when ``cut`` is given and
        its tail no longer fits.

    Examples
    --------
    >>> body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True, "temperature": 0,
    ...         "messages": [{"role": "assistant" if i % 2 else "user", "content": "word " * 300} for i in range(8)]}
    >>> out, res, cut = compact_body(body, "anthropic", profile="claude", budget=3200)
    >>> {k: v for k, v in out.items() if k != "messages"}        # the client's other fields, as sent
    {'model': 'claude-sonnet-4-5', 'max_tokens': 100, 'stream': True, 'temperature': 0}
    >>> [m["role"] for m in out["messages"]], res.middle_ids, cut.first_tail
    (['user', 'user', 'user', 'assistant', 'user', 'assistant'], [1, 2, 3], 4)
    """
    from ..compaction.compactor import compact
    # allow_empty_middle: a proxy sending the newest messages (the rest named as not shown, kept in the store)
    # recovers the session; refusing would relay the overflow instead (issue 12 item 12 is about the CLI's silence)
    kw = dict(profile=profile, dialect=dialect, budget=budget, store=store, max_tokens=max_tokens_of(body),
              allow_empty_middle=True,
              model=body.get("model") if isinstance(body.get("model"), str) else None)
    res = compact(body, cut=cut, **kw)
    req = res.request
    out = dict(body)
    if dialect == "responses":
        out["input"] = req["input"]
        if "instructions" not in body and req.get("instructions"):
            out["instructions"] = req["instructions"]
    else:
        msgs = req["messages"]
        if dialect == "anthropic" and "system" not in body and req.get("system"):
            out["system"] = req["system"]
        out["messages"] = msgs
    return out, res, res.cut


def estimate(body: dict, profile: str) -> int:
    """snapglyph's estimate of a request body, in tokens: its messages, tool definitions and reserved output
    (the same counting :func:`snapglyph.compact` uses for its budget).

    Raises
    ------
    FormatError
        If the body is not a conversation snapglyph can read.

    Examples
    --------
    >>> estimate({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hello"}]}, "claude")
    106
    """
    from ..compaction.estimate import TokenCosts
    from ..providers.profiles import profile as get_profile
    from ..readers.registry import from_request
    costs = TokenCosts(get_profile(profile))
    n = sum(costs.message(m) for m in from_request(body).messages) + max_tokens_of(body)
    if body.get("tools"):
        n += costs.text(json.dumps(body["tools"], ensure_ascii=False))
    return n
