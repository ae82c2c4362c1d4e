"""How ``serve`` reads an error answer of a conversation request: an overflow to recover from, an image-count cap
the retry must meet, an output reserve no compaction can help, or anything else (relayed as it came).

Every rule is the core's: :func:`snapglyph.providers.overflow.detect` (with the request's estimate and the window
known, for Gemini's ambiguous ``Request contains an invalid argument.``), :func:`~snapglyph.providers.overflow.
image_limit`, :func:`snapglyph.providers.params.reserve_alone_overflows` and
:func:`snapglyph.compaction.budget.estimate`; this module only puts them in order for the proxy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..compaction.budget import estimate
from ..errors import SnapglyphError
from ..providers.overflow import ImageLimit, OverflowResult, detect, image_limit
from ..providers.params import reserve_alone_overflows

__all__ = ["ErrorRead", "read_error"]


@dataclass(frozen=True)
class ErrorRead:
    """What an error answer means to the proxy.

    Attributes
    ----------
    overflow : OverflowResult or None
        A context overflow compaction can recover from.
    images : ImageLimit or None
        An image-count refusal: the retry must carry at most ``images.limit`` images, the client's own counted.
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


def read_error(status: int | None, text: Any, body: dict | None, profile: str, window: int | None, *,
               margin: float) -> ErrorRead:
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
    if ov is None:
        return ErrorRead()
    known = ov.limit or window
    reserve = reserve_alone_overflows(body, known, margin=margin) if body is not None else None
    if reserve is not None:
        return ErrorRead(note=f"the output reserve alone overflows: max_tokens {reserve} of a {known}-token window "
                              f"leaves no room for the prompt; relayed, no compaction can fit")
    return ErrorRead(overflow=ov, note=ov.note)
