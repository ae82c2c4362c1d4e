"""The reader profiles as data: page geometry, cell, limits, rule parameters and the reason for each number.

Read by :mod:`snapglyph.providers.profiles`, which holds the :class:`~snapglyph.providers.profiles.Profile` type, the
image cost and resize rules (each with its sources; ``rule`` names one) and the lookup by name or model. A profile's
``doc`` is its text here followed by its rule's sources. Sources were read on :data:`READ` (stored copies).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CELL_EVIDENCE", "FORMAT_DEFAULTS", "MODEL_FAMILIES", "NO_IMAGES", "PROFILE_TABLE", "READ"]

READ = "2026-11-30"  # the date every source of the profiles was read (stored copies)
_MB = 1000 * 1000
_MIB = 1024 * 1024


def _row(**fields: Any) -> dict[str, Any]:
    """One row of the table: keyword arguments of :class:`~snapglyph.providers.profiles.Profile` (without ``name``,
    ``_tokens`` and ``_resize``) plus ``rule``, the name of its image cost and resize rule."""
    return fields


#: The limits both Claude profiles share (sources: ``_CLAUDE_SRC`` in :mod:`snapglyph.providers.profiles`).
_CLAUDE_LIMITS = _row(max_images=100, max_image_bytes=5 * _MIB, max_request_bytes=32 * _MB, many_image_threshold=20,
                      many_image_max_side=2000, encoding="cl100k_base", patch=28, rule="claude", dialect="anthropic",
                      max_image_side=8000)

#: Every reader profile: name -> the :class:`~snapglyph.providers.profiles.Profile` fields, with ``rule`` naming
#: its image cost and resize rule and ``doc`` why the numbers are what they are (the rule's sources follow it).
PROFILE_TABLE: dict[str, dict[str, Any]] = {
    "claude": _row(page_size=(1092, 1092), cell=(6, 12), text_token_factor=1.30,
        params={"max_edge": 1568, "max_tokens": 1568}, **_CLAUDE_LIMITS,
        doc="Claude standard tier (Haiku 4.5, Sonnet 4.6 and older): long edge <= 1568 px and <= 1568 tokens. The "
            "1092x1092 page is 39x39 = 1521 tokens and also meets the older w*h/750 <= 1600 rule (1590)."),
    "claude-hires": _row(page_size=(1932, 1932), cell=(6, 12), text_token_factor=1.75,
        params={"max_edge": 2576, "max_tokens": 4784}, **_CLAUDE_LIMITS,
        doc="Claude 4.7 and later (Opus 4.7/4.8, Sonnet 5.5, Fable 5, ...): long edge <= 2576 px and <= 4784 tokens. "
            "The 1932x1932 page is 69x69 = 4761 tokens and stays under the 2000 px many-image limit. Text: these "
            "models use the tokenizer introduced with Opus 4.7, ~30% more tokens (1.0-1.35x by content) than "
            "earlier models (Opus 4.7 / Sonnet 5.5 migration notes, platform.claude.com, as quoted in stored "
            f"copies read {READ}); 1.30 x 1.35 = 1.75 over cl100k."),
    "openai": _row(page_size=(1600, 1600), cell=(6, 12), max_images=1500, max_image_bytes=20 * _MIB,
        max_request_bytes=512 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.0,
        encoding="o200k_base", patch=32, rule="openai-patch", detail="high",
        params={"max_side": 2048, "patch_budget": 2500, "multiplier": 1.2},
        doc="gpt-5.4 to gpt-5.6 with detail 'high': fit 2048 px, at most 2,500 patches of 32 px, times 1.2. The "
            "1600x1600 page is exactly 2,500 patches = 3000 tokens; under 'original'/'auto' it is not resized "
            "either and costs the same."),
    "openai-original": _row(page_size=(3200, 3200), cell=(6, 12), max_images=1500, max_image_bytes=20 * _MIB,
        max_request_bytes=512 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.0,
        encoding="o200k_base", patch=32, rule="openai-patch", detail="original",
        params={"max_side": 6000, "patch_budget": 10000, "multiplier": 1.2},
        doc="gpt-5.5 (and gpt-5.4) with detail 'original': fit 6000 px, at most 10,000 patches, times 1.2 (gpt-5.6 "
            "has no patch budget there; the page is within every one of these). 3200x3200 = 10,000 patches = "
            "12,000 tokens."),
    "openai-tiles": _row(page_size=(512, 2048), cell=(6, 12), max_images=500, max_image_bytes=20 * _MIB,
        max_request_bytes=50 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.0,
        encoding="o200k_base", patch=512, rule="openai-tiles", detail="high",
        params={"base_tokens": 85, "tile_tokens": 170},
        doc="gpt-4o / gpt-4.1, detail 'high': fit 2048x2048, shortest side to 768, 85 + 170 per 512 px tile. "
            "512x2048 is 4 whole tiles = 765 tokens, the most pixels per token this rule allows (768x1536 = 6 "
            "tiles = 1105). Limits use the older, smaller published values (500 images, 50 MB), which deployments "
            "of these models (e.g. Azure) still apply."),
    "gemini": _row(page_size=(2048, 2048), cell=(12, 24), max_images=900, max_image_bytes=7 * _MB,
        max_request_bytes=20 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.15,
        encoding="cl100k_base", patch=32, rule="gemini-3", dialect="gemini",
        params={"max_tokens": 1120, "max_side": 3072},
        doc="Gemini 3, media_resolution HIGH (the default for images): at most 1120 tokens an image; the resize is "
            "undocumented, so the cost is the cap and the emulation only fits 3072x3072 (older Vertex rule). Page: "
            "2048 px frames, which others measured to work. 1120 tokens cover about 1.1 Mpx at 32 px a token, so "
            "the model likely sees a 2048 page at about half scale: hence the 12x24 default cell (6x12 as seen)."),
    "gemini-2": _row(page_size=(1536, 1536), cell=(6, 12), max_images=3000, max_image_bytes=7 * _MB,
        max_request_bytes=20 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.15,
        encoding="cl100k_base", patch=768, rule="gemini-2", dialect="gemini",
        params={"max_side": 3072},
        doc="Gemini 2.x: 258 tokens for images up to 384x384, else 258 per tile. 1536x1536 has a 768 px crop "
            "unit (1536/1.5 = 1024, clamped to 768), so it is 4 whole tiles at native scale = 1032 tokens. A short "
            "page is costly here (a 1536x400 page has a 266 px crop unit: 12 tiles); keep pages full height."),
    "qwen2.5-vl": _row(page_size=(1008, 980), cell=(6, 12), max_images=100, max_image_bytes=20 * _MIB,
        max_request_bytes=100 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.0,
        encoding="cl100k_base", patch=28, rule="qwen",
        params={"factor": 28, "min_pixels": 3136, "max_pixels": 12_845_056},
        doc="Qwen2/2.5-VL: 14 px patches merged 2x2, so one token per 28x28 px; smart_resize to multiples of 28 "
            "within [min_pixels, max_pixels]. 1008x980 = 36x35 = 1260 tokens, 987,840 px."),
    "qwen3-vl": _row(page_size=(1024, 1024), cell=(6, 12), max_images=100, max_image_bytes=20 * _MIB,
        max_request_bytes=100 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.0,
        encoding="cl100k_base", patch=32, rule="qwen",
        params={"factor": 32, "min_pixels": 65_536, "max_pixels": 16_777_216},
        doc="Qwen3-VL / Qwen3.5: 16 px patches merged 2x2, one token per 32x32 px; pixel bounds 256^2..4096^2. "
            "1024x1024 = 32x32 = 1024 tokens."),
    "pixtral": _row(page_size=(1024, 1024), cell=(6, 12), max_images=12, max_image_bytes=10 * _MIB,
        max_request_bytes=50 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.10,
        encoding="cl100k_base", patch=16, rule="pixtral",
        params={"max_image_size": 1024, "patch": 16, "merge": 1},
        doc="Pixtral-12B: long side <= 1024, 16 px patches, one break token per row: 1024x1024 = 65 x 64 = 4160 "
            "tokens (Mistral-Small-3.1 uses 28 px tokens instead; not this profile)."),
    "openai-tiles-5": _row(page_size=(512, 2048), cell=(6, 12), max_images=1500, max_image_bytes=20 * _MIB,
        max_request_bytes=512 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.0,
        encoding="o200k_base", patch=512, rule="openai-tiles", detail="high",
        params={"base_tokens": 70, "tile_tokens": 140},
        doc="gpt-5 and gpt-5.1 (gpt-5-codex, gpt-5.1-codex, gpt-5.1-codex-max, gpt-5.1-codex-mini, gpt-5-chat), "
            "detail 'high': the tile rule of gpt-4o at 70 + 140 per 512 px tile (the OpenAI images-and-vision guide's "
            "tile-model table, as quoted in ../shared/reference/providers.md, read 2026-12-07). 512x2048 = 4 tiles "
            "= 630 tokens."),
    "openai-tiles-o": _row(page_size=(512, 2048), cell=(6, 12), max_images=1500, max_image_bytes=20 * _MIB,
        max_request_bytes=512 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.0,
        encoding="o200k_base", patch=512, rule="openai-tiles", detail="high",
        params={"base_tokens": 75, "tile_tokens": 150},
        doc="o1, o1-pro, o3 and o3-pro, detail 'high': the tile rule at 75 + 150 per 512 px tile (the same table, "
            "read 2026-12-07). 512x2048 = 4 tiles = 675 tokens."),
    "openai-mini": _row(page_size=(1248, 1248), cell=(6, 12), max_images=1500, max_image_bytes=20 * _MIB,
        max_request_bytes=512 * _MB, many_image_threshold=None, many_image_max_side=None, text_token_factor=1.0,
        encoding="o200k_base", patch=32, rule="openai-patch", detail="high",
        params={"max_side": 2048, "patch_budget": 1536, "multiplier": 1.2},
        doc="The small patch models (gpt-5-mini, gpt-5-nano, gpt-4.1-mini, gpt-4.1-nano, o4-mini): 32 px patches "
            "capped at 1536 (the 2025 guide; the newer one lists them as deprecated), times a multiplier per model "
            "(1.2 gpt-5-mini, 1.5 gpt-5-nano, 1.62 gpt-4.1-mini, 2.46 gpt-4.1-nano, 1.72 o4-mini: MODEL_FAMILIES "
            "sets it; read 2026-12-07). 1248x1248 = 39x39 = 1521 patches, under the cap: 1826 tokens at 1.2."),
}

_OMP = "https://github.com/can1357/oh-my-pi/blob/main/packages/snapcompact/CHANGELOG.md"
_PXPIPE = "https://github.com/teamchong/pxpipe/blob/main"

#: Why each profile's default ``cell`` is what it is: our OCR proxy (bench/RESULTS.md, section "OCR legibility
#: proxy", auto layout) beside the public sweeps with real models. Sources read 2026-12-01.
CELL_EVIDENCE: dict[str, str] = {
    "claude": "6x12 kept. Proxy: prose CER 2.6% (8x16 2.7%), code 10.9% (13.3%), identifiers exact 10% (18%), at "
              "6.9 characters per image token (3.9; text is 2.97), so 8x16 pays 1.8x for little; 5x8 fails "
              f"(code 27.7%). Public: Claude Fable read 6x12 and 5x8 pages (oh-my-pi {_OMP}; pxpipe "
              f"{_PXPIPE}/docs/LEGIBILITY-AUDIT-2026-07-01.md); no sweep of Sonnet 4.6 / Haiku 4.5 was found. "
              "Exact values come from the identifier ledger, not the pixels.",
    "claude-hires": "6x12 kept for now, with a known risk: Opus 4.8 read 6x12 poorly in oh-my-pi's sweep (F1 .351 "
                    f"against .806 for a sparser 11x16 cell, {_OMP}) and pxpipe saw silent digit swaps below a 9x16 "
                    f"cell ({_PXPIPE}/eval/opus-density/RESULTS.md); this profile's cell was not measured here.",
    "openai": "6x12 kept, with a caveat: GPT-5.x read 6x11 badly in pxpipe's sweep (0/4 exact values, 4 invented; "
              f"7/8 at 8x13 and 9x16, {_PXPIPE}/eval/sol-profile/RESULTS.md) and oh-my-pi moved GPT to 8x16, "
              "but 8x16 auto pages hold 4.1 characters per image token against text's 3.86: on OpenAI no cell is "
              "both clearly legible and much cheaper than text. Proxy: code CER 14.1% (8x16 14.2%), identifiers "
              "exact 8% (20%).",
    "gemini": "12x24 kept (seen at about half scale: 6x12). Proxy: prose 3.5%, code 10.5%, identifiers 7% at 7.6 "
              "characters per image token; 10x20 (seen 5x10) fails. Public: Gemini 3.6 Flash read 5x8 pages with "
              f"14/15 exact hex ({_PXPIPE}/eval/gemini-profile/QUALITY_RESULTS.md); Google documents only the "
              "1120-token cap (https://ai.google.dev/gemini-api/docs/media-resolution), not how it resizes.",
}


#: Every current model family of each provider and the profile that reads its images, in match order: ``(pattern,
#: profile, rule parameters or None, source)``. A pattern is matched (``re.match``) against the lower-cased model
#: name without a provider prefix (``anthropic/``, ``models/``, ``openai/``). Sources: the providers' vision guides
#: as quoted in ``../shared/reference/providers.md`` (platform.claude.com vision; developers.openai.com images and
#: vision, newest copy naming gpt-5.6; ai.google.dev media resolution and tokens), read 2026-12-07.
MODEL_FAMILIES: tuple[tuple[str, str, dict[str, Any] | None, str], ...] = (
    (r"claude-(?:[a-z]+-)?(?:4[-.](?:[7-9]|1\d)|[5-9]|[1-9]\d)(?!\d)", "claude-hires", None,
     "Claude 4.7 and later (Opus 4.7/4.8, Sonnet 5.5, Fable 5, Mythos 5): long edge <= 2576 px, <= 4784 tokens"),
    (r"claude", "claude", None, "Claude 3 to 4.6 (Haiku 4.5, Sonnet 4.5/4.6, Opus 4.1-4.6): <= 1568 px and tokens"),
    (r"gpt-5\.[56](?!\d)", "openai", None, "gpt-5.5/5.6: patch rule, detail high 2048 px / 2500 patches x 1.2"),
    (r"gpt-5\.4(?!\d)", "openai", None, "gpt-5.4 (and -mini, -nano): patch rule, high 2048 px / 2500 x 1.2"),
    (r"gpt-5\.[23](?!\d)", "openai", None, "gpt-5.2 (gpt-5.3-codex, not in the guide, read as its predecessor): "
     "2048 px / 6144 patches x 1.2; the 1600x1600 page is 2500 patches under either cap, 3000 tokens alike"),
    (r"gpt-5-mini", "openai-mini", {"multiplier": 1.2}, "gpt-5-mini: patches capped at 1536, x 1.2"),
    (r"gpt-5-nano", "openai-mini", {"multiplier": 1.5}, "gpt-5-nano: patches capped at 1536, x 1.5"),
    (r"gpt-5(?:\.1)?(?![\d.])", "openai-tiles-5", None, "gpt-5, gpt-5.1 and their codex models: tiles 70 + 140"),
    (r"gpt-4\.1-mini", "openai-mini", {"multiplier": 1.62}, "gpt-4.1-mini: patches capped at 1536, x 1.62"),
    (r"gpt-4\.1-nano", "openai-mini", {"multiplier": 2.46}, "gpt-4.1-nano: patches capped at 1536, x 2.46"),
    (r"o4-mini", "openai-mini", {"multiplier": 1.72}, "o4-mini: patches capped at 1536, x 1.72"),
    (r"gpt-4o-mini", "openai-tiles", {"base_tokens": 2833, "tile_tokens": 5667}, "gpt-4o-mini: tiles 2833 + 5667"),
    (r"gpt-(?:4o|4\.1|4\.5)", "openai-tiles", None, "gpt-4o, gpt-4.1, gpt-4.5: tiles 85 + 170"),
    (r"o(?:1|3)(?:-pro)?(?:$|-(?!mini))", "openai-tiles-o", None, "o1, o1-pro, o3, o3-pro: tiles 75 + 150"),
    (r"gemini-(?:[3-9]|flash-latest|pro-latest|flash-lite-latest)", "gemini", None,
     "Gemini 3 and later: at most 1120 tokens an image (media_resolution HIGH, the default)"),
    (r"gemini-(?:1|2)", "gemini-2", None, "Gemini 2.x and earlier: 258 tokens per 768 px tile"),
    (r"qwen2(?:\.5)?-vl", "qwen2.5-vl", None, "Qwen2/2.5-VL: 28 px tokens, smart_resize"),
    (r"qwen3", "qwen3-vl", None, "Qwen3-VL / Qwen3.5: 32 px tokens"),
    (r"pixtral", "pixtral", None, "Pixtral-12B: 16 px patches, long side <= 1024"),
)

#: Model families that read no images (the same sources): a session of one is compacted by the profile its
#: format's provider reads with, and a request for it is refused by name.
NO_IMAGES: tuple[str, ...] = (r"o1-mini", r"o3-mini", r"gpt-3\.5", r"gpt-4(?:-\d|$)")

#: The profile and dialect a session's format implies when neither ``--profile`` nor ``--model`` is given and its
#: model names none: ``format -> (profile, dialect)``; ``None`` for the dialect keeps the profile's own. Codex
#: speaks the Responses API (its rollout items are Responses items), Gemini CLI generateContent, Claude Code the
#: Messages API.
FORMAT_DEFAULTS: dict[str, tuple[str, str | None]] = {
    "codex": ("openai", "responses"), "responses": ("openai", "responses"), "gemini-cli": ("gemini", "gemini"),
    "gemini": ("gemini", "gemini"), "claude-code": ("claude", "anthropic"), "anthropic": ("claude", "anthropic"),
    "openai": ("openai", "openai"), "copilot": ("claude", None), "opencode": ("claude", None),
    "kimi": ("openai", "openai"),
}
