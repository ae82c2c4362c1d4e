"""What an SDK exception an adapter caught says, by the same rule as ``serve``
(:func:`snapglyph.compaction.error_read.read_error`): a context overflow to recover from, an image-count cap or a
body byte cap the retry must meet, an output reserve that alone fills the window (no compaction can help: the
provider's error goes to the caller, with one log line naming ``max_tokens``), or nothing snapglyph can act on.

The exception's HTTP status is read from ``exc.status_code`` and its body from, in order, ``exc.response.text``,
``exc.body``, ``exc.message`` and ``str(exc)`` (what the OpenAI, Anthropic, LiteLLM and pydantic-ai errors carry),
then from ``exc.__cause__``. Imports no agent framework.
"""
from __future__ import annotations

import json
from typing import Any, Iterator

from snapglyph._config import SERVE_MARGIN
from snapglyph.compaction.error_read import ErrorRead, read_error
from snapglyph.errors import SnapglyphError
from snapglyph.providers.limits import request_bytes

__all__ = ["fault_of", "response_text"]


def response_text(exc: BaseException) -> str | None:
    """The text of ``exc.response`` where it has one that can be read (``None`` otherwise).

    >>> class R: text = "prompt is too long"
    >>> class E(Exception): response = R()
    >>> response_text(E()), response_text(ValueError())
    ('prompt is too long', None)
    """
    try:
        text = getattr(getattr(exc, "response", None), "text", None)
    except (RuntimeError, ValueError, AttributeError):  # httpx's ResponseNotRead (a RuntimeError), a bad encoding
        return None
    return text if isinstance(text, str) else None


def _answers(exc: BaseException | None) -> Iterator[tuple[int | None, Any]]:
    seen = 0
    while exc is not None and seen < 4:
        status = getattr(exc, "status_code", None)
        status = status if isinstance(status, int) else None
        for body in (response_text(exc), getattr(exc, "body", None), getattr(exc, "message", None), str(exc)):
            if body:
                yield status, json.dumps(body) if isinstance(body, (dict, list)) else body
        exc, seen = exc.__cause__, seen + 1


def fault_of(exc: BaseException, sent: dict | None, profile: str, window: int | None) -> ErrorRead:
    """What ``exc``, raised for the request ``sent`` (read in ``profile``; ``window``: the one known, or ``None``),
    says: the first of its answers that :func:`~snapglyph.compaction.error_read.read_error` reads as an overflow, a
    cap or a reserve that alone overflows; an empty :class:`~snapglyph.compaction.error_read.ErrorRead` otherwise.

    Examples
    --------
    >>> class E(Exception):
    ...     status_code = 400
    ...     body = {"error": {"message": "request contains 52 images, exceeding the maximum of 50"}}
    >>> fault_of(E(), None, "openai", None).images.limit
    50
    >>> class R(Exception):
    ...     status_code = 400
    ...     message = ("This model's maximum context length is 32768 tokens. However, you requested 32100 tokens "
    ...                "(100 in the messages, 32000 in the completion).")
    >>> body = {"model": "m", "max_tokens": 32000, "messages": [{"role": "user", "content": "hi"}]}
    >>> read = fault_of(R(), body, "openai", None); read.overflow is None, read.note[:42]
    (True, 'the output reserve alone overflows: max_to')
    >>> fault_of(ValueError("no"), None, "openai", None) == ErrorRead()
    True
    """
    try:
        nbytes = request_bytes(sent) if sent is not None else None
    except (TypeError, ValueError):
        nbytes = None
    for status, text in _answers(exc):
        try:
            read = read_error(status, text, sent, profile, window, margin=SERVE_MARGIN, sent_bytes=nbytes)
        except SnapglyphError:
            continue
        if read.overflow is not None or read.images is not None or read.body is not None or read.note:
            return read
    return ErrorRead()
