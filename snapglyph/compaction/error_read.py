"""How a door reads an error answer of a conversation request (``serve`` and the adapters alike): an overflow to recover from, an image-count cap
or a body byte cap the retry must meet, an output reserve no compaction can help, or anything else (relayed as it
came).

A body byte cap is an answer that :data:`snapglyph.providers.overflow_rules.REQUEST_BYTES` matches (or an HTTP 413
with a body): "413 request body exceeds the configured payload limit (type=invalid_request_error
param=request_too_large)" (can1357/oh-my-pi#9235), "413 Payload Too Large: Decompressed request body exceeds
268435456 bytes" (lidge-jun/opencodex#3573), both read 2026-12-08. The size it names (``N bytes``, ``N KB``,
``N MiB``) is the cap; where it names none the refused body's size is an upper bound (:func:`body_cap`).

Every rule is the core's: :func:`snapglyph.providers.overflow.detect` (with the request's estimate and the window
known, for Gemini's ambiguous ``Request contains an invalid argument.``), :func:`~snapglyph.providers.overflow.
image_limit`, :func:`snapglyph.providers.params.reserve_alone_overflows` and
:func:`snapglyph.compaction.budget.estimate`; this module only puts them in order for the doors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .budget import estimate
from ..errors import SnapglyphError
from ..providers.overflow import ImageLimit, OverflowResult, detect, image_limit
from ..providers.overflow_rules import REQUEST_BYTES
from ..providers.params import reserve_alone_overflows

__all__ = ["BodyCap", "ErrorRead", "body_cap", "read_error"]

_SIZE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(bytes?|KiB|KB|kB|MiB|MB)\b")
_UNIT = {"byte": 1, "bytes": 1, "kib": 1024, "kb": 1000, "mib": 2**20, "mb": 10**6}


@dataclass(frozen=True)
class BodyCap:
    """An answer refusing a request for its body size.

    Attributes
    ----------
    limit : int or None
        The cap the answer names, in bytes (``None``: it names none).
    refused : int or None
        The refused body's size in bytes (an upper bound of the cap; ``None``: not known).

    Examples
    --------
    >>> BodyCap(600_000, 812_345).limit
    600000
    """

    limit: int | None
    refused: int | None


def body_cap(status: int | None, text: Any, sent_bytes: int | None = None) -> BodyCap | None:
    """A body byte cap in an error answer (see the module's text), or ``None``.

    Parameters
    ----------
    status : int or None
        The HTTP status.
    text : str or bytes
        The answer's body.
    sent_bytes : int, optional
        Bytes of the body that was refused.

    Examples
    --------
    >>> body_cap(413, '{"error": {"message": "request body exceeds the configured payload limit of 600 KB", '
    ...          '"type": "invalid_request_error", "param": "request_too_large"}}', 812_345)
    BodyCap(limit=600000, refused=812345)
    >>> body_cap(413, "Payload Too Large", 70_000), body_cap(400, "prompt is too long: 9 tokens > 5 maximum")
    (BodyCap(limit=None, refused=70000), None)
    """
    text = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else str(text or "")
    if not (REQUEST_BYTES.search(text) or (status == 413 and text.strip())):
        return None
    sizes = [int(float(n.replace(",", "")) * _UNIT[u.lower()]) for n, u in _SIZE.findall(text)]
    named = min(sizes) if sizes else None
    if named is not None and sent_bytes and named >= sent_bytes:
        named = None                                    # a size at or above what was refused: not the cap
    return BodyCap(named, sent_bytes)


@dataclass(frozen=True)
class ErrorRead:
    """What an error answer means to a door.

    Attributes
    ----------
    overflow : OverflowResult or None
        A context overflow compaction can recover from.
    images : ImageLimit or None
        An image-count refusal: the retry must carry at most ``images.limit`` images, the client's own counted.
    body : BodyCap or None
        A body byte cap: the retry's body must be smaller.
    note : str
        For the log line: why an answer is relayed (the output reserve alone overflows: names ``max_tokens``), or
        how an ambiguous wording was read; empty when nothing to say.

    Examples
    --------
    >>> ErrorRead().overflow is None and ErrorRead().images is None
    True
    """

    overflow: OverflowResult | None = None
    images: ImageLimit | None = None
    note: str = ""
    body: BodyCap | None = None


def read_error(status: int | None, text: Any, body: dict | None, profile: str, window: int | None, *,
               margin: float, sent_bytes: int | None = None) -> ErrorRead:
    """Read one error answer of a request whose body was ``body`` (``None``: not read).

    Parameters
    ----------
    status : int or None
        The HTTP status (``None`` for an error event inside a stream).
    text : str or bytes
        The answer's body.
    body : dict or None
        The request the client sent (its estimate and ``max_tokens`` are read).
    profile : str
        The request's reader profile (for the estimate).
    window : int or None
        The window known for the conversation's model in provider tokens (learned, or ``--window``).
    margin : float
        Share of the window kept free (``--margin``): an output limit at or above the rest overflows alone.
    sent_bytes : int, optional
        Bytes of the body that was sent (the bound of a byte cap whose answer names no size).

    Returns
    -------
    ErrorRead

    Examples
    --------
    >>> body = {"model": "m", "max_tokens": 32000, "messages": [{"role": "user", "content": "hi"}]}
    >>> err = ('{"error": {"message": "This model\\'s maximum context length is 32768 tokens. However, you '
    ...        'requested 32100 tokens (100 in the messages, 32000 in the completion)."}}')
    >>> r = read_error(400, err, body, "openai", None, margin=0.08)
    >>> r.overflow is None, r.note
    (True, 'the output reserve alone overflows: max_tokens 32000 of a 32768-token window leaves no room for the prompt; relayed, no compaction can fit')
    """
    limit = image_limit(status, text)
    if limit is not None:
        return ErrorRead(images=limit, note=f"image-count cap: {limit.images} images > {limit.limit} allowed")

    def est() -> int | None:
        try:
            return estimate(body, profile) if body is not None else None
        except SnapglyphError:
            return None

    ov = detect(status, text, estimate=est, window=window)
    cap = body_cap(status, text, sent_bytes) if ov is None else None    # an overflow's 413 stays an overflow
    if cap is not None:
        return ErrorRead(body=cap, note=f"body byte cap: {sent_bytes or '?'} bytes refused" + (
            f", {cap.limit} allowed" if cap.limit else " (no size named)"))
    if ov is None:
        return ErrorRead()
    known = ov.limit or window
    reserve = reserve_alone_overflows(body, known, margin=margin) if body is not None else None
    if reserve is not None:
        return ErrorRead(note=f"the output reserve alone overflows: max_tokens {reserve} of a {known}-token window "
                              f"leaves no room for the prompt; relayed, no compaction can fit")
    return ErrorRead(overflow=ov, note=ov.note)
