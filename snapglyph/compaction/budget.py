"""The budget rules every door shares: a request's token estimate, and the budget that brings it under a window.

:func:`estimate` is the one estimate of a whole request (its messages in any dialect, its tool definitions and the
output it reserves, :func:`snapglyph.providers.params.output_reserve`), counted as :func:`snapglyph.compact` counts
its budget. :func:`budget_for` is the one arithmetic from a window to a budget, and :func:`next_budget` the one rule
"a context-overflow answer -> the next budget": the numbers the error names where it names them, otherwise the
estimated size of the request that overflowed (never a caller's configured budget, which may lie above the prompt).
``serve``, every adapter of :mod:`snapglyph.integrations` and the bundled agent loop call these; none derives its own.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from .._config import OVERFLOW_UNKNOWN_SHARE, RECALL_ROOM, SERVE_MARGIN
from ..errors import InputError
from ..providers.overflow import OverflowResult
from ..providers.params import output_reserve
from ..providers.profiles import Profile, profile as get_profile
from ..readers.registry import from_request
from .estimate import TokenCosts

__all__ = ["PROMPT_ONLY", "Budget", "budget_for", "calibrated", "clamp_ratio", "estimate", "next_budget",
           "text_cost", "window_guess"]

PROMPT_ONLY = frozenset({"gemini", "mistral", "xai", "llamacpp", "lmstudio"})
"""Providers whose window check counts the prompt alone (the requested output is not charged to the window), read
from their overflow bodies (:mod:`snapglyph.providers.overflow`; ``../shared/reference/providers.md`` part B). Anthropic
counts the prompt alone unless its message names ``max_tokens`` ("input length and `max_tokens` exceed context
limit")."""


@dataclass(frozen=True)
class Budget:
    """A compaction budget and how it was reached; give the whole value to :func:`snapglyph.compact`
    (``compact(..., budget=b)``), which counts text by the ratio and page images by the profile's rule.

    Attributes
    ----------
    tokens : int
        The most the compacted request may cost (reserved output included), in the provider's tokens: text counted
        by the profile times ``ratio``, images by the provider's published rule.
    window : int or None
        The provider's window, in the provider's tokens.
    ratio : float
        Provider tokens per estimated text token (the calibration), 0.25 to 8.
    most : int or None
        Where the head, the newest round and the reserved output alone need more than ``tokens``,
        :func:`snapglyph.compact` sends that smallest compaction if it costs at most this (``None``: it raises the
        ``BudgetError``): the window itself, without the margin kept for the estimate's error, or where the window
        is a guess (:func:`window_guess`), the refused request less that margin. A retry that may still fit beats
        the error that is certain.

    Examples
    --------
    >>> b = budget_for(10_000, 1000, window=8000, ratio=2.0)   # 2 provider tokens per estimated text token
    >>> b
    Budget(tokens=7360, window=8000, ratio=2.0, most=8000)
    >>> calibrated("claude", b.ratio).text_token_factor == 2 * calibrated("claude", 1.0).text_token_factor
    True
    """

    tokens: int
    window: int | None
    ratio: float
    most: int | None = None


def recall_room(tokens: int) -> int:
    """Tokens a compaction to a budget of ``tokens`` leaves free for the ``recall_messages`` answers where the
    door's own loop sends them in a follow-up within the same budget (:data:`~snapglyph._config.RECALL_ROOM`).

    Examples
    --------
    >>> recall_room(3680)
    920
    """
    return int(max(0, tokens) * RECALL_ROOM)


def clamp_ratio(ratio: float) -> float:
    """A calibration ratio (provider tokens per estimated text token) within 0.25 to 8: a ratio outside it comes from
    a count that is not this request's (a provider's cached or truncated count), never from a tokenizer.

    Examples
    --------
    >>> clamp_ratio(0.1), clamp_ratio(1.3), clamp_ratio(20)
    (0.25, 1.3, 8.0)
    """
    return min(max(float(ratio), 0.25), 8.0)


def calibrated(profile: "str | Profile", ratio: float) -> Profile:
    """``profile`` whose text counts are scaled by ``ratio`` (provider tokens per estimated text token); its page
    geometry and image rule are unchanged, so its pages are the same bytes.

    Examples
    --------
    >>> p = calibrated("openai", 0.5)
    >>> p.name, p.text_token_factor == 0.5 * calibrated("openai", 1).text_token_factor, p.page_size
    ('openai', True, (1600, 1600))
    """
    prof = get_profile(profile)
    if ratio == 1:
        return prof
    return dataclasses.replace(prof, text_token_factor=prof.text_token_factor * ratio)


def estimate(request: dict, profile: "str | Profile", *, max_tokens: int | None = None) -> int:
    """snapglyph's estimate of a whole request, in tokens: its messages (any dialect :func:`snapglyph.from_request`
    reads: OpenAI chat, Anthropic, Responses, Gemini), its tool definitions and the output it reserves.

    Parameters
    ----------
    request : dict
        A request body as a client sends it.
    profile : str or Profile
        Reader profile whose tokenizer and image rule count the request.
    max_tokens : int, optional
        The output reserve; default: the request's own limit, else ``DEFAULT_MAX_TOKENS``
        (:func:`snapglyph.providers.params.output_reserve`).

    Raises
    ------
    FormatError
        If the body is not a conversation snapglyph can read.
    UnknownProfileError
        If ``profile`` names no profile.

    Examples
    --------
    >>> estimate({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hello"}]}, "claude")
    106
    >>> body = {"messages": [{"role": "user", "content": "hello"}]}
    >>> estimate(body, "claude") - estimate(body, "claude", max_tokens=1)    # the default reserve: 4096
    4095
    """
    if not isinstance(request, dict):
        raise InputError(f"a request is a JSON object, not {type(request).__name__}")
    costs = TokenCosts(get_profile(profile))
    messages = from_request(request).messages
    costs.prefetch(messages)                 # the texts counted on every core (and remembered for a compaction next)
    n = sum(costs.message(m) for m in messages)
    tools = request.get("tools")
    if tools:
        n += text_cost(json.dumps(tools, ensure_ascii=False), costs.prof)
    return n + output_reserve(max_tokens, request)


def text_cost(text: str, profile: "str | Profile") -> int:
    """What a text adds to a request's :func:`estimate`, in tokens (as the estimate counts a tool definition; a
    door counts so the text it adds to a request: a recalled message, a model's answer sent back).

    Raises
    ------
    InputError
        If ``text`` is not a ``str``.
    UnknownProfileError
        If ``profile`` names no profile.

    Examples
    --------
    >>> text_cost("hello world", "claude"), text_cost("", "claude")
    (3, 0)
    """
    if not isinstance(text, str):
        raise InputError(f"a text is a str, not {type(text).__name__}")
    return TokenCosts(get_profile(profile)).text(text)


def _prompt_only(overflow: OverflowResult | None) -> bool:
    if overflow is None:
        return False
    return overflow.provider in PROMPT_ONLY or (overflow.provider == "anthropic" and "max_tokens" not in
                                                 overflow.message)


def counted_size(estimate: int, max_tokens: int, *, overflow: OverflowResult | None = None,
                 ratio: float = 1.0) -> int:
    """A request's size as the provider counts it against its window, in provider tokens: the prompt of its
    :func:`estimate` at ``ratio`` (clamped as :func:`clamp_ratio`), plus the reserved output unless the provider
    counts the prompt alone (:data:`PROMPT_ONLY`, read from ``overflow``). What a refusal proves is above the
    window and an answer within it (:mod:`snapglyph.compaction.windows` keeps both).

    Examples
    --------
    >>> counted_size(10_000, 1000), counted_size(10_000, 1000, ratio=1.5)
    (10000, 14500)
    """
    return int(max(1, estimate - max_tokens) * clamp_ratio(ratio)) + (0 if _prompt_only(overflow) else max_tokens)


def window_guess(refused: int, *, accepted: int | None = None, share: float = OVERFLOW_UNKNOWN_SHARE) -> int:
    """The window to aim a retry at when the overflow answer names none: ``share`` of the smallest request known
    refused, or the largest known accepted where that is more (an answered request fits the window).

    Parameters
    ----------
    refused : int
        The smallest request this upstream and model refused as too long, in provider tokens (what they count of
        it): an upper bound of the window.
    accepted : int, optional
        The largest request it answered, in provider tokens: a lower bound of the window. Ignored at or above
        ``refused`` (the window changed since: the newer refusal wins).
    share : float
        :data:`~snapglyph._config.OVERFLOW_UNKNOWN_SHARE`: with no accepted size, a request up to
        ``1 / (share * (1 - margin))`` times its window recovers in one retry, whatever the provider's counts.

    Returns
    -------
    int
        A window in provider tokens, at least 1 and below ``refused``.

    Examples
    --------
    >>> window_guess(30_000)                     # nothing else known: a third of what was refused
    10000
    >>> window_guess(30_000, accepted=25_000)    # a 25,000-token request was answered: the window holds it
    25000
    >>> window_guess(30_000, accepted=31_000)    # answered above the refusal: the window shrank since
    10000
    """
    guess = int(refused * share)
    if accepted is not None and accepted < refused:
        guess = max(guess, int(accepted))
    return max(1, min(guess, int(refused) - 1))


def budget_for(estimate: int, max_tokens: int, *, overflow: OverflowResult | None = None, window: int | None = None,
               ratio: float = 1.0, margin: float = SERVE_MARGIN, accepted: int | None = None,
               refused: int | None = None) -> Budget:
    """The budget that brings a request of ``estimate`` tokens under the window.

    Parameters
    ----------
    estimate : int
        The request's estimate (:func:`estimate`), reserved output included, in estimated tokens.
    max_tokens : int
        Output tokens the request reserves.
    overflow : OverflowResult, optional
        The provider's overflow answer: its ``limit`` is the window (else ``window``); its ``prompt_tokens`` against
        the estimate give the ratio (else ``ratio``, raised to what the limit proves: the prompt was over it). Where
        the provider counts the prompt alone (:data:`PROMPT_ONLY`) the output is not charged to the window.
    window : int, optional
        The window, in provider tokens, when the overflow names none (configured, or learned earlier).
    ratio : float
        Provider tokens per estimated text token when the overflow reports no prompt size (clamped to 0.25-8).
        The budget is in the provider's tokens; :func:`snapglyph.compact` given the :class:`Budget` scales its text
        counts by the ratio and leaves page images as billed (a compacted request is mostly pages).
    margin : float
        Share of the window kept free for the estimate's error (:data:`~snapglyph._config.SERVE_MARGIN`).
    accepted, refused : int, optional
        With no window anywhere: the largest request this upstream and model answered and the smallest it refused
        before, in provider tokens, reserve included (:mod:`snapglyph.compaction.windows` keeps them); see
        :func:`window_guess`.

    Returns
    -------
    Budget
        With no window anywhere, the window is :func:`window_guess` of the request that overflowed (as the provider
        counts it: the prompt at ``ratio``, and the reserve unless it counts the prompt alone), or of a smaller
        request refused before.

    Examples
    --------
    >>> budget_for(10_000, 1000, window=8000, ratio=1.0)    # where the newest round needs more: up to 8000
    Budget(tokens=7360, window=8000, ratio=1.0, most=8000)
    >>> budget_for(10_000, 1000).tokens          # no window known: a third of the request, less the margin
    3066
    >>> budget_for(10_000, 1000, accepted=9_000).tokens        # a 9,000-token request was answered before
    8280
    >>> budget_for(10_000, 1000, window=8000, ratio=0.5).tokens       # the window's tokens, whatever the ratio
    7360
    """
    prompt_est = max(1, estimate - max_tokens)
    limit = overflow.limit if overflow is not None and overflow.limit else None
    if overflow is not None and overflow.prompt_tokens:
        ratio = overflow.prompt_tokens / prompt_est
    elif limit is not None:
        counted = limit - (0 if _prompt_only(overflow) else max_tokens)
        ratio = max(ratio, counted / prompt_est)       # it overflowed: the provider counted more than that
    ratio = clamp_ratio(ratio)
    window, sent = limit or window, counted_size(estimate, max_tokens, overflow=overflow, ratio=ratio)
    bound = window
    if window is None:
        upper = min(sent, refused) if refused else sent
        window, bound = window_guess(upper, accepted=accepted), int(upper * (1 - margin))
    charged = 0 if _prompt_only(overflow) else max_tokens
    tokens = max(1, int(window * (1 - margin) - charged)) + max_tokens
    return Budget(tokens, window, ratio, max(tokens, min(bound - charged + max_tokens, sent - 1)))


def next_budget(overflow: OverflowResult | None, request: dict, profile: "str | Profile", *,
                window: int | None = None, ratio: float = 1.0, margin: float = SERVE_MARGIN,
                max_tokens: int | None = None, sent_estimate: int | None = None, accepted: int | None = None,
                refused: int | None = None) -> Budget:
    """The budget for the retry after ``request`` was answered with ``overflow``: the one rule of every door.

    What is known, in order: the numbers the answer names (its window, its count of the prompt); a window known
    from earlier (``window``: configured, or named by an earlier answer of that upstream and model); else the
    sizes of requests that upstream and model answered (``accepted``, a lower bound of the window) and refused
    (``refused`` and this request, upper bounds), taken by :func:`window_guess`: the largest answered where that
    is more than :data:`~snapglyph._config.OVERFLOW_UNKNOWN_SHARE` (a third) of the smallest refused. With no
    history at all the retry is a third of the refused request as the provider counts it: a request up to 3.26
    times its window recovers on the first retry (the Claude Code session in bench/serve_goals.py is 3.35x an
    8,000 window by the estimate and recovers; 0.75 did not). What that costs where the window is large: the retry
    is smaller than needed (a 162,209-token estimate over a 200,000 window retried at a budget of 49,743 instead of
    the 184,000 a named window gives; measured on 2026-12-07 through the adapters' rule, the retry the simulator
    counted was 35,657 tokens against 151,804 with the window named, and at 128,000 15,195 against 103,450: more
    of the conversation as pages or dropped); the answered retry is then the lower bound of the next overflow.

    Parameters
    ----------
    overflow : OverflowResult or None
        What :func:`snapglyph.providers.overflow.detect` read from the answer; ``None`` for an overflow the caller
        knows of without a readable body (a framework's own exception class): then only the request's size is used.
    request : dict
        The request that overflowed, as it was sent (compacted or not).
    profile : str or Profile
        Reader profile the request is estimated with.
    window, ratio, margin, accepted, refused
        As :func:`budget_for`: a window known from earlier (a configured one, or learned), the calibration, and
        the sizes of requests that upstream and model answered and refused (provider tokens, reserve included).
    max_tokens : int, optional
        The output reserve; default: the request's own limit (:func:`snapglyph.providers.params.output_reserve`).
    sent_estimate : int, optional
        The request's :func:`estimate` when the caller already has it (saves counting it again).

    Returns
    -------
    Budget
        ``tokens`` is always below the size of the request that overflowed (its estimate, text times the ratio).

    Raises
    ------
    FormatError
        If ``request`` is not a conversation snapglyph can read.

    Examples
    --------
    >>> from snapglyph.providers.overflow import detect
    >>> body = {"model": "gpt-4.1", "max_tokens": 500, "messages": [{"role": "user", "content": "word " * 4000}]}
    >>> ov = detect(400, {"error": {"message": "Your input exceeds the context window of this model. Please "
    ...     "adjust your input and try again.", "code": "context_length_exceeded"}})
    >>> sent = estimate(body, "openai")
    >>> sent, next_budget(ov, body, "openai", sent_estimate=sent)      # no numbers named: a third of what was sent
    (4505, Budget(tokens=1380, window=1501, ratio=1.0, most=4144))
    >>> next_budget(ov, body, "openai", sent_estimate=sent, accepted=3000)    # 3,000 tokens were answered before
    Budget(tokens=2760, window=3000, ratio=1.0, most=4144)
    >>> ov = detect(400, {"error": {"message": "This model's maximum context length is 4000 tokens. However, you "
    ...     "requested 5500 tokens (5000 in the messages, 500 in the completion)."}})
    >>> b = next_budget(ov, body, "openai", sent_estimate=sent)
    >>> b.window, round(b.ratio * (sent - 500)), b.tokens          # the provider's numbers: its window, its count
    (4000, 5000, 3680)
    """
    reserve = output_reserve(max_tokens, request)
    est = sent_estimate if sent_estimate is not None else estimate(request, profile, max_tokens=reserve)
    bounds = {"accepted": accepted, "refused": refused}
    b = budget_for(est, reserve, overflow=overflow, window=window, ratio=ratio, margin=margin, **bounds)
    if b.tokens >= (est - reserve) * b.ratio + reserve:   # a window named above what was sent (stale, foreign)
        b = budget_for(est, reserve, overflow=None, window=None, ratio=b.ratio, margin=margin, **bounds)
    return b
