"""Provider limits on a request: the one place each is checked.

A reader profile (:class:`~snapglyph.providers.profiles.Profile`) carries the limits with their sources; this module
applies them, for the compactor (on neutral messages, raising :class:`~snapglyph.errors.LimitError`), for
:func:`snapglyph.validate` (on a request body, as faults) and for the compactor's planning (how many pages still fit
beside a conversation's own images):

- ``max_images``: images per request, the tail's own images included;
- ``max_image_bytes``: bytes of one image as sent (base64 length);
- the many-image rule: with more than ``many_image_threshold`` images, no side above ``many_image_max_side`` px;
- ``max_request_bytes``: bytes of the JSON request body (UTF-8), the provider's documented cap; compaction aims
  below :func:`byte_budget`, the size at which requests still succeed reliably (:data:`RELIABLE_REQUEST_BYTES`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from .._config import PAGE_IMAGE_SHARE
from ..errors import LimitError
from ..model.messages import Message, Part, images_in

if TYPE_CHECKING:  # pragma: no cover
    from .profiles import Profile

__all__ = ["RELIABLE_REQUEST_BYTES", "Breach", "ImageInfo", "breaches", "byte_budget", "check_messages",
           "has_big_image", "image_allowance", "image_target", "images_over", "request_bytes", "request_fits"]

RELIABLE_REQUEST_BYTES = 16 * 2**20
"""Request body bytes (16 MiB) every compacted or passed-through request stays at or below, whatever a provider's
documented cap: image-heavy requests start failing well before it. Source: teamchong/pxpipe#157 (read 2026-12-07),
10,257 imaged Claude requests: success 99.7% for bodies of 0-8 MiB, 98.3% 8-14, 96.3% 14-18, 100% 18-20 (341 in a
row), then 80.7% for 20-21 MiB and 64.9% for 21-24 MiB (500, 502, empty 200 or a stall), a sharp onset near 20 MiB.
16 MiB keeps a margin of 4 MiB below that onset; a body the size of a Gemini request over its 20 MB cap or an
Anthropic one over 32 MB is brought below it too."""


@dataclass(frozen=True)
class ImageInfo:
    """What the limits need to know of one image.

    Attributes
    ----------
    index : int or None
        Index of the message (or input item) holding it, for the fault report.
    nbytes : int
        Size as sent: the base64 length (0 for an image given by URL).
    width, height : int or None
        Pixel size where known.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> im = ImageInfo(index=2, nbytes=6_000_000, width=800, height=600)
    >>> [(b.limit, b.index) for b in breaches(profile("claude"), [im, ImageInfo(3, 900, 800, 600)])]
    [('max_image_bytes', 2)]
    """

    index: int | None
    nbytes: int
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class Breach:
    """One provider limit a request breaks.

    Attributes
    ----------
    limit : str
        ``max_images``, ``max_image_bytes``, ``many_image_max_side`` or ``max_request_bytes``.
    index : int or None
        Message index of the image at fault; ``None`` for the request as a whole.
    text : str
        What is wrong, naming the profile's limit.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> b, = breaches(profile("claude"), [ImageInfo(0, 100, 80, 60)] * 101)
    >>> b.limit, b.index, b.text
    ('max_images', None, '101 images in one request; profile claude allows 100')
    """

    limit: str
    index: int | None
    text: str


def request_bytes(body: dict) -> int:
    """Size in bytes of a request body as sent (``json.dumps`` defaults, as the dialect writers' output is sent; UTF-8).

    Examples
    --------
    >>> request_bytes({"model": "é"})  # '{"model": "é"}': 14 characters, é two bytes in UTF-8
    15
    """
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def _big(prof: "Profile", width: int | None, height: int | None) -> bool:
    side = prof.many_image_max_side
    return side is not None and max(width or 0, height or 0) > side


def breaches(prof: "Profile", images: Sequence[ImageInfo], nbytes: int | None = None) -> list[Breach]:
    """Every limit of ``prof`` that a request with ``images`` (and ``nbytes`` of body, when given) breaks.

    Parameters
    ----------
    prof : Profile
    images : sequence of ImageInfo
        Every image of the request, in order.
    nbytes : int, optional
        Request body size in bytes (see :func:`request_bytes`); not checked when omitted.

    Returns
    -------
    list of Breach
        Empty when every limit holds.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> [b.limit for b in breaches(profile("claude"), [ImageInfo(0, 10, 2100, 100)] * 21)][:2]
    ['many_image_max_side', 'many_image_max_side']
    >>> breaches(profile("claude"), [ImageInfo(0, 10, 100, 100)], nbytes=100)
    []
    """
    out: list[Breach] = []
    n = len(images)
    if n > prof.max_images:
        out.append(Breach("max_images", None, f"{n} images in one request; profile {prof.name} allows "
                                              f"{prof.max_images}"))
    many = prof.many_image_threshold is not None and n > prof.many_image_threshold
    for im in images:
        if im.nbytes > prof.max_image_bytes:
            out.append(Breach("max_image_bytes", im.index, f"an image of {im.nbytes} bytes (base64); profile "
                                                           f"{prof.name} allows {prof.max_image_bytes}"))
        if many and _big(prof, im.width, im.height):
            out.append(Breach("many_image_max_side", im.index,
                              f"a {im.width}x{im.height} image in a request of {n} images; above "
                              f"{prof.many_image_threshold} images profile {prof.name} allows at most "
                              f"{prof.many_image_max_side} px a side"))
    if nbytes is not None and nbytes > prof.max_request_bytes:
        out.append(Breach("max_request_bytes", None, f"the request body is {nbytes} bytes; profile {prof.name} "
                                                     f"allows {prof.max_request_bytes}"))
    return out


def _info(parts: Sequence[Part]) -> list[ImageInfo]:
    return [ImageInfo(None, len(q.data or ""), q.width, q.height) for q in parts]


def check_messages(messages: Sequence[Message], prof: "Profile", *, request: dict | None = None) -> None:
    """Raise :class:`LimitError` naming the first limit ``messages`` (and the request body) break.

    Parameters
    ----------
    messages : sequence of Message
        The request's messages (every image, tool results' included, counts).
    prof : Profile
    request : dict, optional
        The request body; its size is checked when given.

    Raises
    ------
    LimitError
        With ``limit`` set to the limit's name.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> check_messages([Message(0, "user", [Part("image", data="x" * 10)] * 101)], profile("claude"))
    Traceback (most recent call last):
    ...
    snapglyph.errors.LimitError: 101 images in one request; profile claude allows 100
    """
    found = breaches(prof, _info(images_in(messages)),
                     request_bytes(request) if request is not None else None)
    if found:
        raise LimitError(found[0].text, limit=found[0].limit)


def byte_budget(prof: "Profile") -> int:
    """The most bytes a request body of ``prof`` is made to take: its documented ``max_request_bytes`` or
    :data:`RELIABLE_REQUEST_BYTES`, whichever is smaller. The pages and the conversation's own images share it.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> byte_budget(profile("claude")), profile("claude").max_request_bytes
    (16777216, 32000000)
    """
    return min(prof.max_request_bytes, RELIABLE_REQUEST_BYTES)


def request_fits(body: dict, prof: "Profile") -> bool:
    """Whether the body's size is within ``prof``'s byte budget (:func:`byte_budget`).

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> request_fits({"messages": []}, profile("claude"))
    True
    """
    return request_bytes(body) <= byte_budget(prof)


def has_big_image(prof: "Profile", images: Sequence[Part]) -> bool:
    """Whether one of ``images`` has a side above ``prof``'s many-image limit (known sizes only) and cannot be
    downscaled: it has no bytes here (an image given by URL). One with bytes is downscaled instead once the request
    holds more images than the rule's threshold (:func:`snapglyph.compaction.image_fit.fit_image_limits`).

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> has_big_image(profile("claude"), [Part("image", width=2100, height=100)])
    True
    >>> has_big_image(profile("claude"), [Part("image", data="iVBORw0K", width=2100, height=100)])
    False
    """
    return any(not q.data and _big(prof, q.width, q.height) for q in images)


def image_allowance(prof: "Profile", n_images: int, has_big: bool) -> int:
    """How many more images (pages of the profile's geometry) a request already holding ``n_images`` may carry.

    Pages may always take :data:`~snapglyph._config.PAGE_IMAGE_SHARE` of the profile's images: the request's
    oldest own images become placeholders to make room (:func:`snapglyph.compaction.image_fit.fit_image_limits`).
    The pages never exceed the many-image side limit themselves; when one of the request's own images does and
    cannot be downscaled (``has_big``, see :func:`has_big_image`), the request must stay at or below the count
    that triggers the rule.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> image_allowance(profile("claude"), 1, False), image_allowance(profile("claude"), 1, True)
    (99, 19)
    >>> image_allowance(profile("claude"), 100, False)  # the 50 oldest of the 100 make room for 50 pages
    50
    >>> import dataclasses
    >>> image_allowance(dataclasses.replace(profile("claude"), max_pages=0), 1, False)   # no pages at all
    0
    """
    cap = prof.max_images - n_images
    if has_big and prof.many_image_threshold is not None:
        cap = min(cap, prof.many_image_threshold - n_images)
    else:
        cap = max(cap, int(PAGE_IMAGE_SHARE * prof.max_images))
    if prof.max_pages is not None:                  # a text-only compaction (Profile.max_pages)
        cap = min(cap, prof.max_pages)
    return max(0, cap)


def images_over(prof: "Profile", n_images: int) -> int:
    """How many images a request of ``n_images`` holds beyond ``prof``'s per-request count (0 when within).

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> images_over(profile("claude"), 130), images_over(profile("claude"), 7)
    (30, 0)
    """
    return max(0, n_images - prof.max_images)


def image_target(prof: "Profile", n_images: int) -> tuple[int | None, int]:
    """The largest image a request of ``n_images`` may carry under ``prof``: ``(longest side in px or None, base64
    bytes)``; the side is the many-image rule's above its threshold, else the profile's hard side limit.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> image_target(profile("claude"), 25), image_target(profile("claude"), 3)
    ((2000, 5242880), (8000, 5242880))
    """
    many = prof.many_image_threshold is not None and n_images > prof.many_image_threshold
    side = prof.many_image_max_side if many else getattr(prof, "max_image_side", None)
    return side, prof.max_image_bytes
