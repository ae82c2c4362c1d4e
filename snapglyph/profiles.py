"""Reader profiles: what one provider/model family needs from a page (first version: ``claude`` and ``openai``).

A :class:`Profile` gives the page geometry the provider never resizes, the default cell size, the image token cost
function, an emulation of the provider's own resize, and the request limits. Rules and their sources are in each
profile's docstring and in ``../shared/reference/providers.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from .errors import UnknownProfileError

__all__ = ["Profile", "profile", "profile_names"]


@dataclass(frozen=True)
class Profile:
    """One reader profile.

    Attributes
    ----------
    name : str
        Profile name, e.g. ``"claude"``.
    page_size : tuple of int
        ``(width, height)`` in pixels of a full page; the provider never resizes it.
    cell : tuple of int
        Default cell ``(cell_w, cell_h)`` in pixels.
    max_images : int
        Images per request.
    max_image_bytes : int
        Bytes per image (base64-encoded size, as the provider counts it).
    max_request_bytes : int
        Bytes per request body.
    many_image_threshold : int or None
        Above this many images in one request the ``many_image_max_side`` rule applies.
    many_image_max_side : int or None
        Longest side in pixels allowed for every image of a many-image request.
    text_token_factor : float
        Safety factor applied over the token count of ``encoding`` for this provider's text.
    encoding : str
        The tiktoken encoding whose counts the text estimates start from.
    patch : int
        Side in pixels of the provider's patch/token grid; page sides are multiples of it, and a short last page
        is trimmed to a multiple of it.
    """

    name: str
    page_size: tuple[int, int]
    cell: tuple[int, int]
    max_images: int
    max_image_bytes: int
    max_request_bytes: int
    many_image_threshold: int | None
    many_image_max_side: int | None
    text_token_factor: float
    encoding: str
    patch: int = 1
    _tokens: Callable[[int, int], int] = field(repr=False, compare=False, default=None)  # type: ignore[assignment]
    _resize: Callable[[int, int], tuple[int, int]] = field(repr=False, compare=False, default=None)  # type: ignore

    def image_tokens(self, width: int, height: int) -> int:
        """Tokens an image of ``width`` x ``height`` pixels costs, after the provider's own resize."""
        w, h = self.provider_resize(width, height)
        return self._tokens(w, h)

    def provider_resize(self, width: int, height: int) -> tuple[int, int]:
        """The ``(width, height)`` in pixels the provider resizes an image of this size to (never enlarges)."""
        return self._resize(int(width), int(height))


def _claude_tokens(w: int, h: int) -> int:
    return math.ceil(w / 28) * math.ceil(h / 28)


def _claude_resize(w: int, h: int, max_edge: int = 1568, max_tokens: int = 1568) -> tuple[int, int]:
    # Anthropic's reference resized_size(): the largest aspect-preserving size with ceil(side/28)*28 <= max_edge
    # and ceil(w/28)*ceil(h/28) <= max_tokens (platform.claude.com/docs/en/build-with-claude/vision, read 2026-11-30).
    def fits(a: int, b: int) -> bool:
        return (math.ceil(a / 28) * 28 <= max_edge and math.ceil(b / 28) * 28 <= max_edge
                and _claude_tokens(a, b) <= max_tokens)

    if fits(w, h):
        return w, h
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if fits(max(1, math.floor(w * mid)), max(1, math.floor(h * mid))):
            lo = mid
        else:
            hi = mid
    return max(1, math.floor(w * lo)), max(1, math.floor(h * lo))


def _openai_patches(w: int, h: int) -> int:
    return math.ceil(w / 32) * math.ceil(h / 32)


def _openai_resize(w: int, h: int, max_side: int = 2048, budget: int = 2500) -> tuple[int, int]:
    # developers.openai.com/api/docs/guides/images-vision (read 2026-11-30): fit inside the detail level's pixel
    # limit (never enlarging); if patches still exceed the budget, shrink by sqrt(32^2*budget/(w*h)), adjust so that
    # the patch grid fits, and floor to whole pixels.
    s = min(1.0, max_side / max(w, h))
    w2, h2 = w * s, h * s
    if math.ceil(w2 / 32) * math.ceil(h2 / 32) > budget:
        shrink = math.sqrt(32 * 32 * budget / (w2 * h2))
        w3, h3 = w2 * shrink, h2 * shrink
        adj = min(math.floor(w3 / 32) / (w3 / 32), math.floor(h3 / 32) / (h3 / 32))
        w2, h2 = w3 * adj, h3 * adj
    return max(1, math.floor(w2)), max(1, math.floor(h2))


_PROFILES: dict[str, Profile] = {
    "claude": Profile(
        name="claude", page_size=(1092, 1092), cell=(6, 12), max_images=100, max_image_bytes=5 * 1024 * 1024,
        max_request_bytes=32 * 1000 * 1000, many_image_threshold=20, many_image_max_side=2000,
        text_token_factor=1.25, encoding="cl100k_base", patch=28, _tokens=_claude_tokens, _resize=_claude_resize),
    "openai": Profile(
        name="openai", page_size=(1600, 1600), cell=(6, 12), max_images=500, max_image_bytes=20 * 1024 * 1024,
        max_request_bytes=50 * 1000 * 1000, many_image_threshold=None, many_image_max_side=None,
        text_token_factor=1.0, encoding="o200k_base", patch=32,
        _tokens=lambda w, h: math.ceil(_openai_patches(w, h) * 1.2), _resize=_openai_resize),
}


def profile_names() -> list[str]:
    """Return the known profile names, sorted."""
    return sorted(_PROFILES)


def profile(name: "str | Profile") -> Profile:
    """Return the reader profile called ``name`` (a :class:`Profile` is returned as is).

    Raises
    ------
    UnknownProfileError
        If no profile has that name; the message lists the known names.
    """
    if isinstance(name, Profile):
        return name
    try:
        return _PROFILES[name]
    except (KeyError, TypeError):
        raise UnknownProfileError(
            f"unknown profile {name!r}; known profiles: {', '.join(profile_names())}") from None
