"""``serve``'s side of the storm rule (:mod:`snapglyph.compaction.growth`): the answer a client gets instead of
another rewrite, naming the message that keeps the conversation over its window.

The answer is a 400 in the dialect's own error shape (Anthropic's ``{"type": "error", "error": {...}}``, OpenAI's
``{"error": {...}}``, Gemini's ``{"error": {"code", "message", "status"}}``) with the code
``snapglyph_compaction_storm``: no client reads it as an overflow, so none compacts again on its own.
"""

from __future__ import annotations

import copy
from typing import Any

from .._config import STORM_CUTS, STORM_REQUESTS
from ..compaction.budget import estimate
from ..compaction.growth import storm
from ..errors import SnapglyphError

__all__ = ["growth_of", "largest_message", "record_cut", "storm_answer", "storm_check", "storm_response",
           "storm_text"]

_ITEMS = {"anthropic": "messages", "openai": "messages", "responses": "input", "gemini": "contents"}


def largest_message(dialect: str, body: dict, profile: str) -> tuple[int, str, int] | None:
    """``(index, role, estimated tokens)`` of the request's largest message (item), or ``None`` when it has none.

    Examples
    --------
    >>> body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"},
    ...         {"role": "assistant", "content": "word " * 500}]}
    >>> i, role, tokens = largest_message("anthropic", body, "claude"); (i, role, tokens > 400)
    (1, 'assistant', True)
    """
    key = _ITEMS.get(dialect, "messages")
    items = body.get(key)
    if not isinstance(items, list) or not items:
        return None
    base = copy.copy(body)
    best: tuple[int, str, int] | None = None
    for i, item in enumerate(items):
        base[key] = [item]
        try:
            n = estimate(base, profile)
        except SnapglyphError:
            continue
        if best is None or n > best[2]:
            role = (item.get("role") or item.get("type") or "item") if isinstance(item, dict) else "item"
            best = (i, str(role), n)
    return best


def storm_text(dialect: str, body: dict, profile: str, cuts: int, requests: int) -> str:
    """The one-line error of a storm.

    Examples
    --------
    >>> storm_text("openai", {"model": "m", "messages": [{"role": "tool", "content": "x " * 900}]}, "openai", 5, 10)[:95]
    'snapglyph serve: this conversation cannot be kept under the window: 5 new cuts in its last 10 r'
    """
    big = largest_message(dialect, body, profile)
    which = (f"; its largest message is {_ITEMS.get(dialect, 'messages')}[{big[0]}] ({big[1]}, about {big[2]:,} "
             f"tokens)" if big is not None else "")
    return (f"snapglyph serve: this conversation cannot be kept under the window: {cuts} new cuts in its last "
            f"{requests} requests, each rewrite re-billing the prompt cache{which}; shorten or drop that message, or "
            f"start a new conversation")


def storm_answer(dialect: str, message: str) -> tuple[int, dict]:
    """``(status, body)`` of the storm error in ``dialect``'s error shape.

    Examples
    --------
    >>> storm_answer("anthropic", "x")[1]["error"]["type"], storm_answer("gemini", "x")[1]["error"]["status"]
    ('invalid_request_error', 'FAILED_PRECONDITION')
    """
    if dialect == "anthropic":
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    if dialect == "gemini":
        return 400, {"error": {"code": 400, "message": message, "status": "FAILED_PRECONDITION"}}
    return 400, {"error": {"message": message, "type": "invalid_request_error", "param": None,
                           "code": "snapglyph_compaction_storm"}}


def growth_of(planner: Any, key: str) -> float:
    """The conversation's measured growth per turn (0 before two compacted requests were counted)."""
    conv = planner.states.get(key)
    return float(getattr(conv, "growth", 0.0) or 0.0) if conv is not None else 0.0


def storm_check(planner: Any, key: str, dialect: str, body: dict, profile: str) -> Any:
    """The planner's ``Outcome`` (``storm`` set, ``error`` the one-line answer) where one more new cut of this
    conversation would be a storm (:func:`snapglyph.compaction.growth.storm`), else ``None``."""
    conv = planner.states.get(key)
    if conv is None:
        return None
    cfg = planner.config
    limit, window = getattr(cfg, "storm_cuts", STORM_CUTS), getattr(cfg, "storm_requests", STORM_REQUESTS)
    if not limit or not storm(conv.cut_requests, conv.requests, limit=limit, window=window):
        return None
    out = planner._outcome_error(storm_text(dialect, body, profile, limit, window))
    out.storm = True
    return out


def record_cut(conv: Any) -> None:
    """Note a new cut at the conversation's current request number (the newest few kept)."""
    conv.cut_requests = (list(conv.cut_requests) + [conv.requests])[-4 * STORM_CUTS:]


def storm_response(proxy: Any, ctx: Any) -> Any:
    """The client's answer to a compaction storm (``ctx.storm``, the one-line error): one error in its dialect's
    shape and the log line; nothing is sent upstream."""
    from starlette.responses import JSONResponse
    status, body = storm_answer(ctx.dialect or "", ctx.storm)
    proxy._line(ctx, status, ctx.storm)
    return JSONResponse(body, status_code=status)
