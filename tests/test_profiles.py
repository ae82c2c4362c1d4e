"""Reader profiles: documented worked examples, hand-computed edges, and the never-resized page invariant."""

from __future__ import annotations

import math
import random
import re

import pytest

from snapglyph import InputError, LimitError, UnknownProfileError, profile, profile_for_model, profile_names
from snapglyph.providers import profiles

ALL = profile_names()


def test_names():
    assert set(ALL) >= {"claude", "claude-hires", "openai", "openai-original", "openai-tiles", "gemini", "gemini-2",
                        "qwen2.5-vl", "qwen3-vl", "pixtral"}


@pytest.mark.parametrize("name", ALL)
def test_page_is_never_resized_and_on_the_grid(name):
    p = profile(name)
    w, h = p.page_size
    assert p.provider_resize(w, h) == (w, h)
    assert w % p.patch == 0 and h % p.patch == 0
    if p.many_image_max_side:
        assert max(w, h) <= p.many_image_max_side
    if p.max_image_side:
        assert max(w, h) <= p.max_image_side
    cw, ch = p.cell
    assert w // cw >= 40 and h // ch >= 40
    assert p.dialect == ("anthropic" if name.startswith("claude") else "gemini" if name.startswith("gemini") else "openai")
    assert p.text_token_factor >= 1.0 and p.encoding in ("cl100k_base", "o200k_base")
    assert "2026-11-30" in p.doc and "http" in p.doc


@pytest.mark.parametrize("name", ALL)
def test_module_table_matches_code(name):
    row = re.search(rf"^    {re.escape(name)} +(\d+)x(\d+) +(\d+) +(\d+) +(\d+)x(\d+) +(\d+)", profiles.__doc__, re.M)
    assert row, f"{name} missing from the module table"
    w, h, patch, tokens, cw, ch, chars = map(int, row.groups())
    p = profile(name)
    assert (p.page_size, p.patch, p.page_tokens, p.cell) == ((w, h), patch, tokens, (cw, ch))
    c, r = p.grid()
    assert c * r == chars


def test_claude_page_meets_both_anthropic_rules():
    w, h = profile("claude").page_size
    assert math.ceil(w / 28) * math.ceil(h / 28) <= 1568 and max(w, h) <= 1568
    assert w * h / 750 <= 1600                       # the older docs.anthropic.com rule


# ------------------------------------------------------------------------------------------ documented examples
def test_anthropic_documented_examples():
    c, hi = profile("claude"), profile("claude-hires")
    assert c.provider_resize(1075, 1520) == (924, 1307)        # the A4 scan
    assert c.image_tokens(1075, 1520) == 33 * 47 == 1551
    assert c.provider_resize(1920, 1080) == (1456, 819)        # not 1568x882
    assert hi.provider_resize(1075, 1520) == (1075, 1520)      # 2145 tokens fit the 4784 budget
    assert hi.image_tokens(1075, 1520) == 39 * 55 == 2145
    assert hi.provider_resize(3840, 2160) == (2576, 1449)
    assert c.image_tokens(280, 56) == 20


def test_openai_documented_examples():
    o = profile("openai")
    assert o.image_tokens(1024, 1024) == 1229
    assert o.provider_resize(2048, 2048) == (1600, 1600) and o.image_tokens(2048, 2048) == 3000
    t = profile("openai-tiles")
    assert t.image_tokens(768, 1536) == 1105
    assert t.provider_resize(1024, 1024) == (768, 768) and t.image_tokens(1024, 1024) == 765
    assert t.provider_resize(2048, 4096) == (768, 1536) and t.image_tokens(2048, 4096) == 1105


def test_gemini_rules():
    g2 = profile("gemini-2")
    assert g2.image_tokens(384, 384) == 258                    # both sides <= 384: one unit
    assert g2.image_tokens(385, 384) == 258 * 2 * 2            # crop unit max(256, 384/1.5) = 256
    assert g2.image_tokens(1536, 1536) == 258 * 4              # crop unit 768: 2x2 tiles
    assert g2.image_tokens(1536, 400) == 258 * 6 * 2           # short pages cost more (unit 266)
    assert g2.provider_resize(6144, 3072) == (3072, 1536)
    g = profile("gemini")
    assert g.image_tokens(100, 100) == g.image_tokens(4000, 3000) == 1120


def test_qwen_smart_resize():
    q = profile("qwen2.5-vl")
    assert q.provider_resize(1920, 1080) == (1932, 1092) and q.image_tokens(1920, 1080) == 69 * 39
    small = q.with_params(max_pixels=14 * 14 * 4 * 1280)       # the transformers class default
    assert small.provider_resize(1920, 1080) == (1316, 728)
    assert small.provider_resize(*q.page_size) == q.page_size  # the page survives the lower budget too
    assert q.provider_resize(20, 20) == (56, 56)               # min_pixels 3136 scales up
    assert q.provider_resize(10, 2000) == (28, 1988)           # aspect exactly 200 is allowed
    with pytest.raises(LimitError):
        q.provider_resize(10, 2001)
    q3 = profile("qwen3-vl")
    assert q3.provider_resize(100, 100) == (256, 256)          # 65536 pixel minimum
    assert q3.image_tokens(1000, 1000) == 31 * 31              # round(1000/32) = 31
    assert q3.provider_resize(8192, 4096) == (5792, 2880)      # 16,777,216 pixel maximum, floored to 32
    with pytest.raises(InputError):
        q.with_params(nope=1)


def test_pixtral():
    p = profile("pixtral")
    assert p.image_tokens(1024, 1024) == 65 * 64
    assert p.provider_resize(2048, 1024) == (1024, 512) and p.image_tokens(2048, 1024) == 65 * 32
    assert p.image_tokens(17, 17) == 3 * 2
    assert p.image_tokens(16, 16) == 2 * 1


# ------------------------------------------------------------------------------------------ edges (by hand)
def test_claude_edges():
    c = profile("claude")
    assert c.provider_resize(1568, 1) == (1568, 1)             # long edge exactly at the limit
    assert c.provider_resize(1569, 1)[0] < 1569                # one pixel over
    assert c.provider_resize(1568, 784) == (1568, 784)         # 56 x 28 = exactly 1568 tokens
    assert c.provider_resize(1568, 785) != (1568, 785)         # 56 x 29 = 1624 tokens
    assert c.image_tokens(1568, 785) <= 1568
    hi = profile("claude-hires")
    assert hi.provider_resize(2576, 28) == (2576, 28)
    assert hi.provider_resize(2577, 28) != (2577, 28)
    assert hi.image_tokens(1932, 1932) == 4761 and hi.image_tokens(1960, 1960) <= 4784


def test_openai_edges():
    o = profile("openai")
    assert o.provider_resize(1600, 1600) == (1600, 1600) and o.image_tokens(1600, 1600) == 3000
    w, h = o.provider_resize(1601, 1600)                       # 51 x 50 = 2550 patches: over budget
    assert (w, h) == (1568, 1568) and o.image_tokens(1601, 1600) == math.ceil(49 * 49 * 1.2)
    assert o.provider_resize(2048, 1) == (2048, 1)
    assert o.provider_resize(2049, 1) == (2048, 1)
    assert o.image_tokens(1, 1) == 2                           # ceil(1 x 1.2)
    oo = profile("openai-original")
    assert oo.provider_resize(3200, 3200) == (3200, 3200) and oo.image_tokens(3200, 3200) == 12000
    assert oo.provider_resize(6001, 10) == (6000, 10)
    t = profile("openai-tiles")
    assert t.provider_resize(768, 2048) == (768, 2048) and t.image_tokens(768, 2048) == 85 + 170 * 8
    assert t.provider_resize(769, 2048) == (768, 2045)         # shortest side over 768, other rounded down
    assert t.image_tokens(512, 512) == 255 and t.image_tokens(513, 512) == 425


@pytest.mark.parametrize("name", ALL)
def test_resize_results_fit_the_rules(name):
    p = profile(name)
    rng = random.Random(7)
    for _ in range(300):
        w, h = rng.randint(1, 9000), rng.randint(1, 9000)
        if name.startswith("qwen") and max(w, h) / min(w, h) > 200:
            continue
        rw, rh = p.provider_resize(w, h)
        assert rw >= 1 and rh >= 1
        if name.startswith("claude"):
            assert max(math.ceil(rw / 28), math.ceil(rh / 28)) * 28 <= p.params["max_edge"]
            assert p.image_tokens(w, h) <= p.params["max_tokens"]
        elif name in ("openai", "openai-original"):
            assert max(rw, rh) <= p.params["max_side"]
            assert math.ceil(rw / 32) * math.ceil(rh / 32) <= p.params["patch_budget"]
        elif name == "openai-tiles":
            assert max(rw, rh) <= 2048 and min(rw, rh) <= 768
        elif name.startswith("qwen"):
            assert rw % p.params["factor"] == 0 and rh % p.params["factor"] == 0
            assert p.params["min_pixels"] <= rw * rh <= p.params["max_pixels"]
        elif name == "pixtral":
            assert max(rw, rh) <= 1024


# ------------------------------------------------------------------------------------------ errors and lookup
@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", None, True])
def test_bad_sizes(bad):
    for name in ALL:
        with pytest.raises(InputError):
            profile(name).image_tokens(bad, 10)
        with pytest.raises(InputError):
            profile(name).provider_resize(10, bad)


def test_integral_float_accepted():
    assert profile("claude").image_tokens(280.0, 56) == 20


def test_unknown_profile_lists_names():
    with pytest.raises(UnknownProfileError) as e:
        profile("nope")
    assert all(n in str(e.value) for n in ALL)
    with pytest.raises(UnknownProfileError) as e:
        profile("claude-opus-4-7")                              # strict on names, with a hint
    assert "profile_for_model" in str(e.value) and "claude-hires" in str(e.value)
    assert profile(profile("claude")) is profile("claude")


@pytest.mark.parametrize("model,expected", [
    ("claude-opus-4-7", "claude-hires"), ("claude-opus-4-8", "claude-hires"), ("claude-sonnet-5-5", "claude-hires"),
    ("anthropic/claude-opus-4.7", "claude-hires"), ("claude-opus-4-6", "claude"), ("claude-sonnet-4-6", "claude"),
    ("claude-haiku-4-5", "claude"), ("claude-3-5-sonnet-20241022", "claude"), ("claude-opus-4-20250514", "claude"),
    ("gpt-5.4", "openai"), ("gpt-5.4-mini", "openai"), ("gpt-5.5", "openai"), ("gpt-5.6-sol", "openai"),
    ("GPT-4o", "openai-tiles"), ("gpt-4o-2024-08-06", "openai-tiles"), ("gpt-4.1", "openai-tiles"),
    ("gemini-3-pro-preview", "gemini"), ("models/gemini-3.5-flash", "gemini"), ("gemini-2.5-pro", "gemini-2"),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl"), ("qwen2-vl-2b", "qwen2.5-vl"), ("qwen3-vl-8b-instruct", "qwen3-vl"),
    ("qwen3.5-27b", "qwen3-vl"), ("pixtral-12b-2409", "pixtral"),
    # issue 32: every current family of each provider (profile_table.MODEL_FAMILIES)
    ("gpt-5.1-codex-max", "openai-tiles-5"), ("gpt-5-codex", "openai-tiles-5"), ("gpt-5.1", "openai-tiles-5"),
    ("gpt-5", "openai-tiles-5"), ("o3", "openai-tiles-o"), ("o3-pro", "openai-tiles-o"), ("o1", "openai-tiles-o"),
    ("gpt-5.2", "openai"), ("gpt-5.3-codex", "openai"), ("gpt-5-mini", "openai-mini"), ("o4-mini", "openai-mini"),
    ("gpt-4.1-nano", "openai-mini"), ("gpt-4o-mini", "openai-tiles"), ("gemini-1.5-pro", "gemini-2"),
    ("gemini-flash-latest", "gemini"), ("claude-fable-5", "claude-hires"), ("claude-3-7-sonnet-latest", "claude"),
])
def test_profile_for_model(model, expected):
    assert profile_for_model(model).name == expected


@pytest.mark.parametrize("model", ["llama-3.2-vision", "", "mistral-large"])
def test_profile_for_model_unknown(model):
    with pytest.raises(UnknownProfileError) as e:
        profile_for_model(model)
    assert "claude-hires" in str(e.value)
    with pytest.raises(UnknownProfileError):
        profile_for_model(None)


@pytest.mark.parametrize("model", ["o3-mini", "o1-mini", "gpt-3.5-turbo", "gpt-4"])
def test_a_model_that_reads_no_images_is_refused_by_name(model):
    with pytest.raises(UnknownProfileError, match=rf"model '{re.escape(model)}' reads no images"):
        profile_for_model(model)


def test_small_patch_models_bill_by_their_own_multiplier():
    """openai-mini: 1248x1248 = 1521 patches under the 1536 cap, times each model's multiplier."""
    assert [profile_for_model(m).page_tokens for m in ("gpt-5-mini", "gpt-5-nano", "gpt-4.1-mini", "gpt-4.1-nano",
                                                      "o4-mini")] == [1826, 2282, 2465, 3742, 2617]
    assert profile_for_model("gpt-5.1-codex-max").page_tokens == 630 and profile_for_model("o3").page_tokens == 675
    assert profile_for_model("gpt-4o-mini").page_tokens == 2833 + 4 * 5667


def test_first_version_attributes_kept():
    p = profile("claude")
    for attr in ("name", "page_size", "cell", "patch", "max_images", "max_image_bytes", "max_request_bytes",
                 "many_image_threshold", "many_image_max_side", "text_token_factor", "encoding", "dialect"):
        assert hasattr(p, attr)
    assert (p.page_size, profile("openai").page_size) == ((1092, 1092), (1600, 1600))
    assert p.many_image_threshold == 20 and p.many_image_max_side == 2000
