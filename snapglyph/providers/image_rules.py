"""The providers' image rules: the token cost of a ``(width, height)`` image and the provider's own resize, with
the sources each was read from (the ``doc`` of every profile that uses a rule ends with them).

Each rule takes the :class:`~snapglyph.providers.profiles.Profile` (for its parameters: any :class:`RuleInput`), a
width and a height in pixels, and returns tokens (``int``) or the size the provider resizes to (``(int, int)``). The rules are named by
:data:`snapglyph.providers.profile_table.PROFILE_TABLE` rows (``rule``) and looked up in :data:`RULES`.

Examples
--------
>>> tokens, resize, sources = RULES["claude"]
>>> from snapglyph import profile
>>> tokens(profile("claude"), 1092, 1092), resize(profile("claude"), 1920, 1080)
(1521, (1456, 819))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..errors import LimitError
from .profile_table import READ

__all__ = ["RULES", "RuleInput"]


class RuleInput(Protocol):
    """What a rule reads of a :class:`~snapglyph.providers.profiles.Profile` (which imports this module): its
    ``name`` (for errors) and its rule ``params``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> RULES["claude"][0](SimpleNamespace(name="x", params={"max_edge": 1568, "max_tokens": 1568}), 56, 28)
    2
    """

    name: str
    params: Mapping[str, Any]


def _floor(x: float) -> int:
    # floor that forgives floating-point noise just under an integer (2048 * 0.78125 must give 1600)
    return math.floor(x + 1e-9)


# ------------------------------------------------------------------------------------------------- Anthropic
def _claude_tokens(p: RuleInput, w: int, h: int) -> int:
    return math.ceil(w / 28) * math.ceil(h / 28)


def _claude_resize(p: RuleInput, w: int, h: int) -> tuple[int, int]:
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
def _patch_tokens(p: RuleInput, w: int, h: int) -> int:
    return math.ceil(math.ceil(w / 32) * math.ceil(h / 32) * p.params["multiplier"] - 1e-9)


def _patch_resize(p: RuleInput, w: int, h: int) -> tuple[int, int]:
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


def _tile_tokens(p: RuleInput, w: int, h: int) -> int:
    return p.params["base_tokens"] + p.params["tile_tokens"] * math.ceil(w / 512) * math.ceil(h / 512)


def _tile_resize(p: RuleInput, w: int, h: int) -> tuple[int, int]:
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
def _gemini3_tokens(p: RuleInput, w: int, h: int) -> int:
    return p.params["max_tokens"]


def _fit(w: int, h: int, side: int) -> tuple[int, int]:
    if max(w, h) <= side:
        return w, h
    s = side / max(w, h)
    return max(1, round(w * s)), max(1, round(h * s))


def _gemini_resize(p: RuleInput, w: int, h: int) -> tuple[int, int]:
    return _fit(w, h, p.params["max_side"])


def _gemini2_tokens(p: RuleInput, w: int, h: int) -> int:
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
def _qwen_tokens(p: RuleInput, w: int, h: int) -> int:
    f = p.params["factor"]
    return math.ceil(w / f) * math.ceil(h / f)


def _qwen_resize(p: RuleInput, w: int, h: int) -> tuple[int, int]:
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
def _pixtral_tokens(p: RuleInput, w: int, h: int) -> int:
    unit = p.params["patch"] * p.params["merge"]
    wt, ht = (w - 1) // unit + 1, (h - 1) // unit + 1
    return (wt + 1) * ht  # one [IMG_BREAK] per row; the last becomes [IMG_END]


def _pixtral_resize(p: RuleInput, w: int, h: int) -> tuple[int, int]:
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
RULES: dict[str, tuple[Callable[..., int], Callable[..., tuple[int, int]], str]] = {
    "claude": (_claude_tokens, _claude_resize, _CLAUDE_SRC),
    "openai-patch": (_patch_tokens, _patch_resize, _OPENAI_SRC),
    "openai-tiles": (_tile_tokens, _tile_resize, _OPENAI_SRC),
    "gemini-3": (_gemini3_tokens, _gemini_resize, _GEMINI_SRC),
    "gemini-2": (_gemini2_tokens, _gemini_resize, _GEMINI_SRC),
    "qwen": (_qwen_tokens, _qwen_resize, _QWEN_SRC),
    "pixtral": (_pixtral_tokens, _pixtral_resize, _PIXTRAL_SRC),
}
