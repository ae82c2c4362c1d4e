"""``serve``'s side of the storm rule (:mod:`snapglyph.compaction.storms` owns the counting, the rule and the
one-line error): the answer a client gets instead of another rewrite, naming the message that keeps the
conversation over its window.

The answer is a 400 in the dialect's own error shape (Anthropic's ``{"type": "error", "error": {...}}``, OpenAI's
``{"error": {...}}``, Gemini's ``{"error": {"code", "message", "status"}}``) with the code
``snapglyph_compaction_storm``: no client reads it as an overflow, so none compacts again on its own.
"""

from __future__ import annotations

import contextvars
from typing import Any

from .._config import STORM_CUTS, STORM_REQUESTS
from ..compaction.storms import largest_message, note_cut, storm, storm_error, storm_text

__all__ = ["arrive", "growth_of", "largest_message", "record_cut", "storm_answer", "storm_check", "storm_response",
           "storm_text"]


# the conversation's requests answered when the request being handled arrived (set in its task, read in the worker
# threads the planner runs in: anyio copies the context into them)
_ARRIVED: contextvars.ContextVar[tuple[str, int] | None] = contextvars.ContextVar("snapglyph_serve_arrived",
                                                                                  default=None)


def arrive(states: Any, key: str) -> None:
    """Note, for the request being handled (its task), how many requests of conversation ``key`` were answered when
    it arrived: its cuts are counted at that number (:func:`record_cut`), so requests of one conversation sent at
    once count as one new cut, however their recoveries are ordered."""
    conv = states.get(key)
    _ARRIVED.set((key, conv.requests if conv is not None else 0))


def _number(conv: Any) -> int:
    """The request number a cut of ``conv`` is counted at: the requests answered when this request arrived (its
    current count where no arrival was noted)."""
    now = _ARRIVED.get()
    return min(now[1], conv.requests) if now is not None and now[0] == conv.key else conv.requests


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
    if not limit or not storm(conv.cut_requests, _number(conv), limit=limit, window=window):
        return None
    out = planner._outcome_error(str(storm_error(dialect, body, profile, limit=limit, window=window,
                                                 door="snapglyph serve")))
    out.storm = True
    return out


def record_cut(conv: Any) -> None:
    """Note a new cut at the request number of the request being handled (the conversation's requests answered
    when it arrived, :func:`arrive`), by the core's rule (:func:`snapglyph.compaction.storms.note_cut`: a cut for the same number is not counted again)."""
    conv.cut_requests = note_cut(conv.cut_requests, _number(conv))


def storm_response(proxy: Any, ctx: Any) -> Any:
    """The client's answer to a compaction storm (``ctx.storm``, the one-line error): one error in its dialect's
    shape and the log line; nothing is sent upstream. The request is counted as one of the conversation's, so the
    window of the storm rule moves on and the conversation is answered again once its cuts fall out of it."""
    from starlette.responses import JSONResponse
    status, body = storm_answer(ctx.dialect or "", ctx.storm)
    proxy.planner.count(ctx.key, status, None)
    proxy._line(ctx, status, ctx.storm)
    return JSONResponse(body, status_code=status)
