"""Reader profiles: what one provider/model family needs from a page, with the rule each number comes from.

A :class:`Profile` gives the page geometry the provider never resizes, the default cell, the image token cost of
any ``(width, height)``, an emulation of the provider's own resize, the request limits, and how to count text
tokens for that provider. Sources were read on 2026-11-30 (stored copies; see each profile's ``doc``)::

    profile          page (px)   patch  tokens/page  cell   chars/page  wire dialect  text tokens
    claude           1092x1092   28        1521      6x12     16562     anthropic     cl100k x 1.30
    claude-hires     1932x1932   28        4761      6x12     51842     anthropic     cl100k x 1.75
    openai           1600x1600   32        3000      6x12     35378     openai        o200k (else cl100k)
    openai-original  3200x3200   32       12000      6x12    141778     openai        o200k (else cl100k)
    openai-tiles      512x2048   512        765      6x12     14450     openai        o200k (else cl100k)
    gemini           2048x2048   32        1120     12x24     14450     gemini        cl100k x 1.15
    gemini-2         1536x1536   768       1032      6x12     32768     gemini        cl100k x 1.15
    qwen2.5-vl       1008x980    28        1260      6x12     13608     openai        cl100k
    qwen3-vl         1024x1024   32        1024      6x12     14450     openai        cl100k
    pixtral          1024x1024   16        4160      6x12     14450     openai        cl100k x 1.10

(``tests/test_profiles.py`` checks this table against the code.) Cells are defaults; the renderer may take others.
The numbers of each profile are data in :mod:`snapglyph.providers.profile_table`, the image cost and resize rules
with their sources are in :mod:`snapglyph.providers.image_rules`; this module holds the type and the lookup by
profile name or model name.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Mapping

from ..errors import InputError, UnknownProfileError
from .image_rules import RULES
from .profile_table import PROFILE_TABLE

__all__ = ["Profile", "profile", "profile_for_model", "profile_names"]


@dataclass(frozen=True)
class Profile:
    """One reader profile.

    Attributes
    ----------
    name : str
        Profile name, e.g. ``"claude"``.
    page_size : tuple of int
        ``(width, height)`` in pixels of a full page; the provider never resizes it (``provider_resize`` returns
        it unchanged, a test checks).
    cell : tuple of int
        Default cell ``(cell_w, cell_h)`` in pixels.
    max_images : int
        Images per request.
    max_image_bytes : int
        Bytes per image (base64-encoded size, as the provider counts it).
    max_request_bytes : int
        Bytes per request body.
    many_image_threshold : int or None
        Above this many images in one request the ``many_image_max_side`` rule applies (``None``: no such rule).
    many_image_max_side : int or None
        Longest side in pixels allowed for every image of a many-image request.
    text_token_factor : float
        Safety factor over the ``encoding`` count for this provider's text (``>= 1``; see ``doc`` for evidence).
    encoding : str
        The tiktoken encoding text counts start from (``cl100k_base`` when the provider's own is not available).
    patch : int
        Side in pixels of the provider's patch/token grid (or tile); page sides are multiples of it, and a short
        last page is trimmed to a multiple of it.
    dialect : str
        Default wire dialect: ``"anthropic"`` (Messages API), ``"openai"`` (Chat Completions) or ``"gemini"``
        (``generateContent``).
    detail : str or None
        The OpenAI ``detail`` value pages must be sent with (``None`` where the API has no such field).
    max_image_side : int or None
        Pixels on either side above which the provider rejects an image instead of resizing it.
    params : Mapping
        Parameters of the cost and resize rules (e.g. ``max_edge``, ``max_tokens``, ``max_pixels``); override with
        :meth:`with_params`.
    doc : str
        The rules, with the URL of each source and the date it was read.

    Examples
    --------
    >>> p = profile("claude")
    >>> p.page_size, p.cell, p.dialect, p.max_images, p.image_tokens(*p.page_size)
    ((1092, 1092), (6, 12), 'anthropic', 100, 1521)
    >>> q = profile("openai-tiles")
    >>> q.page_size, q.detail, q.image_tokens(*q.page_size)
    ((512, 2048), 'high', 765)
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
    _tokens: Callable[..., int] = field(repr=False, compare=False, default=None)  # type: ignore[assignment]
    _resize: Callable[..., tuple[int, int]] = field(repr=False, compare=False, default=None)  # type: ignore
    dialect: str = "openai"
    detail: str | None = None
    max_image_side: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict, compare=False)
    doc: str = field(default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        """Refuse a page the provider would reject: a side above the many-image limit (pages alone can take a
        request past the rule's threshold, so they must meet it whatever the count) or the hard side limit.

        Raises
        ------
        InputError
            Naming the side and the limit.
        """
        side = max(self.page_size)
        for limit, what in ((self.many_image_max_side, "many-image"), (self.max_image_side, "image side")):
            if limit is not None and side > limit:
                raise InputError(f"profile {self.name}: a {self.page_size[0]}x{self.page_size[1]} page exceeds the "
                                 f"{what} limit of {limit} px a side")

    def image_tokens(self, width: int, height: int) -> int:
        """Tokens an image of ``width`` x ``height`` pixels costs, after the provider's own resize.

        Parameters
        ----------
        width, height : int
            Image size in pixels, ``>= 1``.

        Returns
        -------
        int
            Billed image tokens by the provider's current documented rule (for Gemini 3: the documented cap).

        Raises
        ------
        InputError
            If a size is not a positive integer.
        LimitError
            Where the provider rejects the shape outright (Qwen: aspect ratio over 200).
        """
        w, h = self.provider_resize(width, height)
        return self._tokens(self, w, h)

    def provider_resize(self, width: int, height: int) -> tuple[int, int]:
        """The ``(width, height)`` in pixels the provider resizes an image of this size to.

        Never enlarges, except Qwen's ``min_pixels`` rule. Padding to the patch grid is not included (Anthropic
        pads bottom/right to a multiple of 28 after resizing; the padded area carries no content).

        Raises
        ------
        InputError
            If a size is not a positive integer.
        LimitError
            Where the provider rejects the shape outright (Qwen: aspect ratio over 200).
        """
        return self._resize(self, _size(width, "width"), _size(height, "height"))

    @property
    def page_tokens(self) -> int:
        """Image tokens of one full page (int)."""
        return self.image_tokens(*self.page_size)

    def grid(self, cell: tuple[int, int] | None = None) -> tuple[int, int]:
        """``(columns, rows)`` of character cells on a full page with ``cell`` (default: :attr:`cell`)."""
        cw, ch = cell or self.cell
        return self.page_size[0] // cw, self.page_size[1] // ch

    def with_params(self, **params: Any) -> "Profile":
        """Return a copy with some rule parameters replaced (e.g. ``max_pixels`` of a Qwen server).

        Raises
        ------
        InputError
            If a name is not a parameter of this profile.
        """
        unknown = set(params) - set(self.params)
        if unknown:
            raise InputError(f"profile {self.name} has no parameter(s) {sorted(unknown)}; it has "
                             f"{sorted(self.params)}")
        return replace(self, params=MappingProxyType({**self.params, **params}))


def _size(v: Any, what: str) -> int:
    if isinstance(v, bool):
        raise InputError(f"{what} must be an integer number of pixels, not {v!r}")
    try:
        n = operator.index(v)
    except TypeError:
        if isinstance(v, float) and v.is_integer():
            n = int(v)
        else:
            raise InputError(f"{what} must be an integer number of pixels, not {v!r}") from None
    if n < 1:
        raise InputError(f"{what} must be at least 1 pixel, got {n}")
    return n


def _build(name: str, row: dict[str, Any]) -> Profile:
    """The :class:`Profile` of one row of :data:`~snapglyph.providers.profile_table.PROFILE_TABLE`."""
    kw = dict(row)
    tokens, resize, sources = RULES[kw.pop("rule")]
    params = MappingProxyType(dict(kw.pop("params", {})))
    return Profile(name=name, params=params, _tokens=tokens, _resize=resize, doc=kw.pop("doc") + sources, **kw)


_PROFILES: dict[str, Profile] = {name: _build(name, row) for name, row in PROFILE_TABLE.items()}


def profile_names() -> list[str]:
    """Return the known profile names, sorted.

    Examples
    --------
    >>> print(*profile_names())
    claude claude-hires gemini gemini-2 openai openai-original openai-tiles pixtral qwen2.5-vl qwen3-vl
    """
    return sorted(_PROFILES)


def profile(name: "str | Profile") -> Profile:
    """Return the reader profile called ``name`` (a :class:`Profile` is returned as is).

    Names only; for a model name (``claude-opus-4-7``, ``gpt-4o``...) use :func:`profile_for_model`.

    Raises
    ------
    UnknownProfileError
        If no profile has that name; the message lists the known names.

    Examples
    --------
    >>> profile("gemini").dialect, profile(profile("claude")).name
    ('gemini', 'claude')
    >>> profile("gpt-4o")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snapglyph.errors.UnknownProfileError: unknown profile 'gpt-4o'; known profiles: ... -> 'openai-tiles')
    """
    if isinstance(name, Profile):
        return name
    try:
        return _PROFILES[name]
    except (KeyError, TypeError):
        hint = ""
        if isinstance(name, str):
            try:
                hint = f" (for a model name use profile_for_model: {name!r} -> {profile_for_model(name).name!r})"
            except UnknownProfileError:
                pass
        raise UnknownProfileError(
            f"unknown profile {name!r}; known profiles: {', '.join(profile_names())}{hint}") from None


_CLAUDE_VER = re.compile(r"claude-(?:(?:opus|sonnet|haiku|fable|mythos|instant)-)?(\d{1,2})(?:[-.](\d{1,2})(?!\d))?")


def profile_for_model(model: str) -> Profile:
    """Pick the reader profile for a provider model name.

    Rules (case-insensitive; a provider prefix such as ``anthropic/`` or ``models/`` is ignored): ``claude-*`` of
    version 4.7 or later (``claude-opus-4-7``, ``claude-sonnet-5-5``) -> ``claude-hires``, other ``claude-*`` ->
    ``claude``; ``gpt-5.4``..``gpt-5.6`` (any variant) -> ``openai``; ``gpt-4o``, ``gpt-4.1`` (not ``-mini`` /
    ``-nano``, which bill differently) -> ``openai-tiles``; ``gemini-3*`` -> ``gemini``; ``gemini-2*`` ->
    ``gemini-2``; ``qwen2-vl*`` / ``qwen2.5-vl*`` -> ``qwen2.5-vl``; ``qwen3*`` -> ``qwen3-vl``; ``pixtral*`` ->
    ``pixtral``.

    Parameters
    ----------
    model : str
        A model name as sent to the provider.

    Returns
    -------
    Profile

    Raises
    ------
    UnknownProfileError
        If no rule matches; the message lists the known profiles.

    Examples
    --------
    >>> [profile_for_model(m).name for m in ("claude-opus-4-7", "anthropic/claude-sonnet-4-5", "GPT-4o",
    ...                                      "models/gemini-2.5-pro", "qwen2.5-vl-7b-instruct")]
    ['claude-hires', 'claude', 'openai-tiles', 'gemini-2', 'qwen2.5-vl']
    """
    if not isinstance(model, str):
        raise UnknownProfileError(f"model must be a str, not {type(model).__name__}")
    m = model.strip().lower().rsplit("/", 1)[-1]
    name = None
    if m.startswith("claude"):
        v = _CLAUDE_VER.match(m)
        if v:
            major, minor = int(v.group(1)), int(v.group(2) or 0)
            name = "claude-hires" if (major, minor) >= (4, 7) else "claude"
        else:
            name = "claude"
    elif re.match(r"gpt-5\.[456](?!\d)", m):
        name = "openai"
    elif re.match(r"gpt-(4o|4\.1)($|-(?!mini|nano))", m):
        name = "openai-tiles"
    elif m.startswith("gemini-3"):
        name = "gemini"
    elif m.startswith("gemini-2"):
        name = "gemini-2"
    elif re.match(r"qwen2(\.5)?-vl", m):
        name = "qwen2.5-vl"
    elif m.startswith("qwen3"):
        name = "qwen3-vl"
    elif m.startswith("pixtral"):
        name = "pixtral"
    if name is None:
        raise UnknownProfileError(
            f"no reader profile for model {model!r}; known profiles: {', '.join(profile_names())} "
            "(pick one with --profile / profile(name))")
    return _PROFILES[name]
