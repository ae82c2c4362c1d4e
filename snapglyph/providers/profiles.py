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
    openai-tiles-5    512x2048   512        630      6x12     14450     openai        o200k (else cl100k)
    openai-tiles-o    512x2048   512        675      6x12     14450     openai        o200k (else cl100k)
    openai-mini      1248x1248   32        1826      6x12     21632     openai        o200k (else cl100k)
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
from .profile_table import FORMAT_DEFAULTS, MODEL_FAMILIES, NO_IMAGES, PROFILE_TABLE

__all__ = ["Profile", "family_reason", "profile", "profile_for_model", "profile_for_session", "profile_names"]


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
    max_pages : int or None
        Page images one request may carry beside its own images (``None``: as many as ``max_images`` allows; 0: a
        compaction without pages, the text tiers and the snapshot text only, as ``serve`` retries a compacted
        request the model refused, :mod:`snapglyph.serve.refusal`).

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
    max_pages: int | None = None

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
    >>> print(*profile_names())  # doctest: +NORMALIZE_WHITESPACE
    claude claude-hires gemini gemini-2 openai openai-mini openai-original openai-tiles openai-tiles-5 openai-tiles-o
    pixtral qwen2.5-vl qwen3-vl
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


def _family(model: str) -> tuple[str, dict[str, Any] | None, str] | None:
    """``(profile name, rule parameters, why)`` of the first row of
    :data:`~snapglyph.providers.profile_table.MODEL_FAMILIES` matching ``model``, or None."""
    m = model.strip().lower().rsplit("/", 1)[-1]
    for pattern, name, params, why in MODEL_FAMILIES:
        if re.match(pattern, m):
            return name, params, why
    return None


def profile_for_model(model: str) -> Profile:
    """Pick the reader profile for a provider model name, by
    :data:`~snapglyph.providers.profile_table.MODEL_FAMILIES` (every current family of each provider, with its
    documented image rule and source).

    Case-insensitive; a provider prefix such as ``anthropic/`` or ``models/`` is ignored. ``claude-*`` of version
    4.7 or later -> ``claude-hires``, other ``claude-*`` -> ``claude``; ``gpt-5.2``..``gpt-5.6`` -> ``openai``;
    ``gpt-5``, ``gpt-5.1`` and their codex models -> ``openai-tiles-5``; ``o1``/``o3`` -> ``openai-tiles-o``;
    the small patch models (``gpt-5-mini``, ``gpt-4.1-mini``, ``o4-mini``, ...) -> ``openai-mini`` with their
    multiplier; ``gpt-4o``, ``gpt-4.1`` -> ``openai-tiles``; ``gemini-3*`` -> ``gemini``; ``gemini-2*`` ->
    ``gemini-2``; Qwen and Pixtral by family.

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
        If no rule matches, or the model reads no images (``o3-mini``); the message lists the known profiles.

    Examples
    --------
    >>> [profile_for_model(m).name for m in ("claude-opus-4-7", "anthropic/claude-sonnet-4-5", "GPT-4o",
    ...                                      "models/gemini-2.5-pro", "qwen2.5-vl-7b-instruct")]
    ['claude-hires', 'claude', 'openai-tiles', 'gemini-2', 'qwen2.5-vl']
    >>> [profile_for_model(m).name for m in ("gpt-5.1-codex-max", "gpt-5-codex", "gpt-5.1", "o3", "gpt-5.2")]
    ['openai-tiles-5', 'openai-tiles-5', 'openai-tiles-5', 'openai-tiles-o', 'openai']
    >>> profile_for_model("gpt-4.1-mini").params["multiplier"]
    1.62
    """
    if not isinstance(model, str):
        raise UnknownProfileError(f"model must be a str, not {type(model).__name__}")
    m = model.strip().lower().rsplit("/", 1)[-1]
    if any(re.match(rf"(?:{p})(?![\w.])|(?:{p})-", m) for p in NO_IMAGES):
        raise UnknownProfileError(f"model {model!r} reads no images, so no page can be sent to it; name a model "
                                  "that does (--model) or a profile (--profile)")
    found = _family(m)
    if found is None:
        raise UnknownProfileError(
            f"no reader profile for model {model!r}; known profiles: {', '.join(profile_names())} "
            "(pick one with --profile / profile(name))")
    name, params, _ = found
    return _PROFILES[name].with_params(**params) if params else _PROFILES[name]


def family_reason(model: str) -> str | None:
    """Why ``model`` reads by its profile (the matching family's rule, in a few words), or None.

    Examples
    --------
    >>> family_reason("o3")
    'o1, o1-pro, o3, o3-pro: tiles 75 + 150'
    """
    found = _family(model) if isinstance(model, str) else None
    return found[2] if found else None


def profile_for_request(model: object, dialect: str, override: str | None = None) -> Profile:
    """The profile a request is read by: ``override``, else the one its ``model`` reads by, else the dialect's
    provider's (``claude`` for Anthropic, ``gemini`` for Gemini, ``openai`` for OpenAI chat and Responses).

    The one rule ``snapglyph serve`` and ``snapglyph validate`` pick a request's profile by.

    Raises
    ------
    UnknownProfileError
        If ``override`` names no profile (a model with no profile falls back to the dialect's, never an error).

    Examples
    --------
    >>> profile_for_request("claude-sonnet-4-5", "anthropic").name, profile_for_request("my-local-model", "openai").name
    ('claude', 'openai')
    >>> profile_for_request(None, "gemini").name, profile_for_request("gpt-5.4", "openai", "pixtral").name
    ('gemini', 'pixtral')
    """
    if override:
        return profile(override)
    if isinstance(model, str) and model:
        try:
            return profile_for_model(model)
        except UnknownProfileError:
            pass
    return _PROFILES[{"anthropic": "claude", "gemini": "gemini"}.get(dialect, "openai")]


def profile_for_session(fmt: str, model: str | None) -> tuple[Profile, str | None, str]:
    """The profile and dialect a session is compacted for when neither a profile nor a model is given, and one
    line saying what was chosen and why.

    The source's own model picks the profile where a family of
    :data:`~snapglyph.providers.profile_table.MODEL_FAMILIES` matches it; else the format's provider does
    (:data:`~snapglyph.providers.profile_table.FORMAT_DEFAULTS`: Codex -> openai, Gemini CLI -> gemini, Claude
    Code -> claude; any other format -> claude). The dialect is the format's own (Codex -> responses, Gemini CLI
    -> gemini, Claude Code -> anthropic), else None (the profile's own).

    Parameters
    ----------
    fmt : str
        The session's format (``Transcript.format``).
    model : str or None
        The model the session names (``Transcript.model``).

    Returns
    -------
    (Profile, str or None, str)
        The profile, the dialect (None: the profile's own) and the note line.

    Examples
    --------
    >>> p, d, note = profile_for_session("codex", "gpt-5.1-codex-max")
    >>> p.name, d
    ('openai-tiles-5', 'responses')
    >>> print(note)  # doctest: +NORMALIZE_WHITESPACE
    profile openai-tiles-5 and dialect responses, from the session: codex format, model gpt-5.1-codex-max (gpt-5,
    gpt-5.1 and their codex models: tiles 70 + 140)
    >>> profile_for_session("claude-code", "claude-opus-4-7")[0].name, profile_for_session("gemini-cli", None)[:2]
    ('claude-hires', (Profile(name='gemini', ...), 'gemini'))
    """
    default, dialect = FORMAT_DEFAULTS.get(fmt, ("claude", None))
    why = None
    prof = None
    if isinstance(model, str) and model:
        try:
            prof = profile_for_model(model)
            why = f"model {model} ({family_reason(model)})"
        except UnknownProfileError as e:
            why = f"model {model} has no profile ({str(e).split(';')[0]}), so the {fmt} format's"
    if prof is None:
        prof = _PROFILES[default]
        why = (why + f" default" if why else f"no model named, so the {fmt} format's default")
    if dialect is not None and prof.dialect != "openai" and dialect in ("responses", "openai"):
        dialect = None  # a Claude or Gemini model in an OpenAI-shaped session: the profile's own wire
    if dialect is not None and prof.dialect == "openai" and dialect in ("anthropic", "gemini"):
        dialect = None
    shown = dialect or prof.dialect
    return prof, dialect, f"profile {prof.name} and dialect {shown}, from the session: {fmt} format, {why}"
