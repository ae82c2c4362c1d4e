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
The numbers of each profile are data in :mod:`snapglyph.providers.profile_table`; this module holds the type, the
image cost and resize rules with their sources, and the lookup by profile name or model name.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Mapping

from ..errors import InputError, LimitError, UnknownProfileError
from .profile_table import PROFILE_TABLE, READ

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


def _floor(x: float) -> int:
    # floor that forgives floating-point noise just under an integer (2048 * 0.78125 must give 1600)
    return math.floor(x + 1e-9)


# ------------------------------------------------------------------------------------------------- Anthropic
def _claude_tokens(p: Profile, w: int, h: int) -> int:
    return math.ceil(w / 28) * math.ceil(h / 28)


def _claude_resize(p: Profile, w: int, h: int) -> tuple[int, int]:
    # The docs' reference resized_size(): binary search along the long edge for the largest aspect-preserving
    # size whose padded sides (ceil(side/28)*28) are <= max_edge and whose tokens are <= max_tokens; the short
    # edge is round(long / aspect), Python's round (half to even), at least 1.
    max_edge, max_tokens = p.params["max_edge"], p.params["max_tokens"]

    def fits(a: int, b: int) -> bool:
        return (math.ceil(a / 28) * 28 <= max_edge and math.ceil(b / 28) * 28 <= max_edge
                and math.ceil(a / 28) * math.ceil(b / 28) <= max_tokens)

    if fits(w, h):
        return w, h
    if h > w:
        rh, rw = _claude_resize(p, h, w)
        return rw, rh
    aspect = w / h
    lo, hi = 1, w
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if fits(mid, max(round(mid / aspect), 1)):
            lo = mid
        else:
            hi = mid
    return lo, max(round(lo / aspect), 1)


_CLAUDE_SRC = f"""
Sources (read {READ}):
- https://platform.claude.com/docs/en/build-with-claude/vision-coordinates ("How Claude resizes and pads images",
  reference resized_size(); worked example 1075x1520 -> 924x1307, 1920x1080 -> 1456x819; padding to 28).
- https://platform.claude.com/docs/en/build-with-claude/vision ("Resolution and token cost": ceil(w/28)*ceil(h/28);
  standard tier 1568 px / 1568 tokens, Claude 4.7 and later 2576 px / 4784 tokens; >8000x8000 rejected; >20 images
  -> 2000 px a side; 100 images on 200k-context models, 600 otherwise; 32 MB request).
- https://docs.anthropic.com/en/docs/vision (older: tokens ~ w*h/750, ~1600 tokens; 5 MB per image, error
  'image exceeds 5 MB maximum: ... bytes > 5242880 bytes'). 10 MB on the direct API today, 5 MB on Bedrock/Vertex:
  this profile keeps 5 MiB.
Text tokens (the tokenizer is not public): Claude 3.5 Sonnet produced ~16% more tokens than GPT-4o on English
articles, ~21% on math and ~30% on Python code (L. Gupta, summarized at
https://news.quarkybyte.com/understanding-tokenizer-differences-impacting-ai-model-costs-and-efficiency-2025-05-01,
read {READ}); the models overview puts Opus 4.6 at ~3.4M characters per 1M tokens, where cl100k gives ~4.5
characters per token on English prose (our measurement). Hence 1.30 over cl100k."""


# ---------------------------------------------------------------------------------------------------- OpenAI
def _patch_tokens(p: Profile, w: int, h: int) -> int:
    return math.ceil(math.ceil(w / 32) * math.ceil(h / 32) * p.params["multiplier"] - 1e-9)


def _patch_resize(p: Profile, w: int, h: int) -> tuple[int, int]:
    # 1. fit within the detail level's pixel limit, aspect kept, rounded to whole pixels, never enlarged;
    # 2. if patches exceed the budget: shrink = sqrt(32^2*budget/(w*h)), adjusted so that floor(w*s/32)/(w*s/32)
    #    fits on both sides, then floor to whole pixels.
    max_side, budget = p.params["max_side"], p.params["patch_budget"]
    if max(w, h) > max_side:
        s = max_side / max(w, h)
        w, h = (max_side, max(1, round(h * s))) if w >= h else (max(1, round(w * s)), max_side)
    if budget is not None and math.ceil(w / 32) * math.ceil(h / 32) > budget:
        s = math.sqrt(32 * 32 * budget / (w * h))
        adj = s * min(math.floor(w * s / 32) / (w * s / 32), math.floor(h * s / 32) / (h * s / 32))
        w, h = max(1, _floor(w * adj)), max(1, _floor(h * adj))
    return w, h


def _tile_tokens(p: Profile, w: int, h: int) -> int:
    return p.params["base_tokens"] + p.params["tile_tokens"] * math.ceil(w / 512) * math.ceil(h / 512)


def _tile_resize(p: Profile, w: int, h: int) -> tuple[int, int]:
    # fit in a 2048x2048 square (never enlarging), then if the shortest side exceeds 768 scale it to 768 and
    # round the other side down.
    if max(w, h) > 2048:
        s = 2048 / max(w, h)
        w, h = (2048, max(1, _floor(h * s))) if w >= h else (max(1, _floor(w * s)), 2048)
    if min(w, h) > 768:
        s = 768 / min(w, h)
        w, h = (768, max(1, _floor(h * s))) if w <= h else (max(1, _floor(w * s)), 768)
    return w, h


_OPENAI_SRC = f"""
Source (read {READ}): https://developers.openai.com/api/docs/guides/images-vision ("Model sizing behavior",
"Patch-based image tokenization", "Tile-based image tokenization", "Image input requirements": 1,500 images and
512 MB per request; older copies said 500 images and 50 MB). Worked examples: gpt-5.4 high, 1024x1024 -> 1229
tokens; 2048x2048 -> 1600x1600 -> 3000 tokens; gpt-4o, 768x1536 -> 6 tiles -> 1105 tokens. The current page gives
no per-image byte cap; 20 MiB is kept as a conservative one. Text: tiktoken o200k_base (the gpt-4o/gpt-5 encoding)
where its file is present offline, else cl100k_base, which counts at least as many tokens on code and prose."""


# ---------------------------------------------------------------------------------------------------- Gemini
def _gemini3_tokens(p: Profile, w: int, h: int) -> int:
    return p.params["max_tokens"]


def _fit(w: int, h: int, side: int) -> tuple[int, int]:
    if max(w, h) <= side:
        return w, h
    s = side / max(w, h)
    return max(1, round(w * s)), max(1, round(h * s))


def _gemini_resize(p: Profile, w: int, h: int) -> tuple[int, int]:
    return _fit(w, h, p.params["max_side"])


def _gemini2_tokens(p: Profile, w: int, h: int) -> int:
    # both sides <= 384: one 258-token image; else crop into tiles of side clamp(min(w,h)/1.5, 256, 768), each
    # scaled to 768x768 and billed 258.
    if w <= 384 and h <= 384:
        return 258
    t = min(768, max(256, math.floor(min(w, h) / 1.5)))
    return 258 * math.ceil(w / t) * math.ceil(h / t)


_GEMINI_SRC = f"""
Sources (read {READ}): https://ai.google.dev/gemini-api/docs/tokens ("Count multimodal tokens": images with both
sides <= 384 px cost 258 tokens; larger ones are cropped and scaled into 768x768 tiles of 258 tokens each; the
image-understanding guide adds the crop unit: the smallest side / 1.5, clamped to 256..768 px);
https://ai.google.dev/gemini-api/docs/media-resolution (Gemini 3: media_resolution low 280, medium 560, high 1120,
ultra_high 2240 tokens per image, as *maximum* tokens; the resize itself is not documented); Vertex AI
image-understanding page (older: scaled down and padded to fit 3072x3072; 3,000 images per prompt on Gemini 2.5
Pro, 900 on Gemini 3 Pro preview; 7 MB per inline file); discuss.ai.google.dev/t/79575 (Files API above 20 MB per
request). Text: Gemini's tokenizer is not available offline; no measured comparison with cl100k was found, so 1.15
is an unmeasured safety margin."""


# ------------------------------------------------------------------------------------------------------ Qwen
def _qwen_tokens(p: Profile, w: int, h: int) -> int:
    f = p.params["factor"]
    return math.ceil(w / f) * math.ceil(h / f)


def _qwen_resize(p: Profile, w: int, h: int) -> tuple[int, int]:
    # smart_resize (qwen-vl-utils / transformers): round each side to the factor; if over max_pixels scale by
    # beta = sqrt(h*w/max_pixels) and floor to the factor; if under min_pixels scale up and ceil to the factor.
    f, lo, hi = p.params["factor"], p.params["min_pixels"], p.params["max_pixels"]
    if max(w, h) / min(w, h) > 200:
        raise LimitError(f"{p.name} rejects images with an aspect ratio over 200 ({w}x{h})", limit="aspect_ratio")
    hb, wb = max(f, round(h / f) * f), max(f, round(w / f) * f)
    if hb * wb > hi:
        beta = math.sqrt(h * w / hi)
        hb, wb = max(f, math.floor(h / beta / f) * f), max(f, math.floor(w / beta / f) * f)
    elif hb * wb < lo:
        beta = math.sqrt(lo / (h * w))
        hb, wb = math.ceil(h * beta / f) * f, math.ceil(w * beta / f) * f
    return wb, hb


_QWEN_SRC = f"""
Sources (read {READ}):
https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen2_vl/image_processing_qwen2_vl.py
and https://github.com/QwenLM/Qwen2.5-VL/blob/main/qwen-vl-utils/src/qwen_vl_utils/vision_process.py (smart_resize;
aspect ratio over 200 rejected); https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct (preprocessor_config.json: min_pixels 3136, max_pixels 12,845,056; the transformers class default is 14*14*4*1280 = 1,003,520 and servers
such as vLLM often pass their own: override with with_params); https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct
(preprocessor_config.json of Qwen3-VL / Qwen3.5 models, as stored in several public repositories: patch 16,
merge 2, size shortest_edge 65536 / longest_edge 16777216, i.e. pixel bounds). The page keeps under 1,003,520
pixels so it survives the common lower max_pixels too. Image counts and bytes are server settings; the limits here
are conservative placeholders. Text: Qwen's tokenizer extends cl100k_base (Qwen tokenization notes), so cl100k
counts are a fair upper estimate (factor 1.0)."""


# --------------------------------------------------------------------------------------------------- Pixtral
def _pixtral_tokens(p: Profile, w: int, h: int) -> int:
    unit = p.params["patch"] * p.params["merge"]
    wt, ht = (w - 1) // unit + 1, (h - 1) // unit + 1
    return (wt + 1) * ht  # one [IMG_BREAK] per row; the last becomes [IMG_END]


def _pixtral_resize(p: Profile, w: int, h: int) -> tuple[int, int]:
    ratio = max(w, h) / p.params["max_image_size"]
    if ratio > 1:
        w, h = max(1, round(w / ratio)), max(1, round(h / ratio))
    return w, h


_PIXTRAL_SRC = f"""
Sources (read {READ}):
https://github.com/mistralai/mistral-common/blob/main/src/mistral_common/tokens/tokenizers/image.py (ImageConfig(16, 1024)
for Pixtral-12B: scale by max(w,h)/1024 when over, tokens per row (w-1)//16+1 plus one [IMG_BREAK], rows
(h-1)//16+1); the image is then resampled to whole 16-px patches, so page sides are multiples of 16.
https://www.scaleway.com/en/docs/managed-inference/reference-content/pixtral-12b-2409/ (12 images per request). Text: Mistral's Tekken tokenizer is not
available offline; 1.10 over cl100k is an unmeasured margin."""


#: Each rule of the table: ``rule -> (image tokens, provider resize, sources)``.
_RULES: dict[str, tuple[Callable[..., int], Callable[..., tuple[int, int]], str]] = {
    "claude": (_claude_tokens, _claude_resize, _CLAUDE_SRC),
    "openai-patch": (_patch_tokens, _patch_resize, _OPENAI_SRC),
    "openai-tiles": (_tile_tokens, _tile_resize, _OPENAI_SRC),
    "gemini-3": (_gemini3_tokens, _gemini_resize, _GEMINI_SRC),
    "gemini-2": (_gemini2_tokens, _gemini_resize, _GEMINI_SRC),
    "qwen": (_qwen_tokens, _qwen_resize, _QWEN_SRC),
    "pixtral": (_pixtral_tokens, _pixtral_resize, _PIXTRAL_SRC),
}


def _build(name: str, row: dict[str, Any]) -> Profile:
    """The :class:`Profile` of one row of :data:`~snapglyph.providers.profile_table.PROFILE_TABLE`."""
    kw = dict(row)
    tokens, resize, sources = _RULES[kw.pop("rule")]
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
