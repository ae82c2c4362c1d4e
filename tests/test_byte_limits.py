"""Issue 31, item 4: the request's byte limit is resolved inside compaction, passthrough included.

Re-made images keep their mode and are encoded compactly; over the byte budget (the smaller of the provider's cap
and :data:`snapglyph.providers.limits.RELIABLE_REQUEST_BYTES`), the oldest own images are made smaller or left out
(counted, their source in the store), never an InternalError.
"""

from __future__ import annotations

import base64
import io
import random

import pytest
from PIL import Image, ImageDraw

from snapglyph import Message, Part, compact, validate
from snapglyph.model.images import downscale
from snapglyph.providers.limits import RELIABLE_REQUEST_BYTES, byte_budget, request_bytes
from snapglyph.providers.profiles import profile


def _b64(im: Image.Image) -> str:
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _gray_screenshot() -> str:
    rnd = random.Random(2)
    im = Image.new("L", (3000, 2000), 240)
    d = ImageDraw.Draw(im)
    for y in range(40, 1960, 60):
        d.text((40, y), "".join(rnd.choice("abcdefghij ") for _ in range(rnd.randint(20, 120))), fill=20)
    d.rectangle((1500, 300, 2800, 1700), fill=200, outline=0)
    return _b64(im)


def test_a_remade_gray_image_stays_gray_and_small():
    src = _gray_screenshot()
    data, media_type, w, h = downscale(src, max_side=2000, max_b64_bytes=5 * 2**20)
    im = Image.open(io.BytesIO(base64.b64decode(data)))
    assert (media_type, w, h) == ("image/png", 2000, 1333) and im.mode in ("L", "P")
    assert len(data) < 2 * len(src)            # was 4x as RGB (and 43x on the screenshot)
    if im.mode == "P":
        assert all(r == g == b for r, g, b in zip(*[iter(im.getpalette()[:3 * 256])] * 3))  # a gray palette


def _noise(side: int, seed: int) -> Part:
    rnd = random.Random(seed)
    im = Image.frombytes("RGB", (side, side), bytes(rnd.getrandbits(8) for _ in range(side * side * 3)))
    return Part("image", media_type="image/png", data=_b64(im), width=side, height=side)


@pytest.fixture(scope="module")
def shots() -> list[Part]:
    return [_noise(700, k) for k in range(4)]          # ~1.96 MB of base64 each: noise does not compress


def _conversation(shots: list[Part], n: int, words: int = 20) -> list[Message]:
    msgs = [Message(0, "user", [Part("text", text="check the screenshots")])]
    for i in range(n):
        msgs.append(Message(len(msgs), "assistant", [Part("tool_call", name="shot", call_id=f"c{i}",
                                                          arguments="{}")]))
        msgs.append(Message(len(msgs), "tool", [Part("tool_result", call_id=f"c{i}", name="shot", content=[
            Part("text", text="word " * words), shots[i % len(shots)]])]))
    return msgs


@pytest.mark.parametrize("dialect,prof", [("anthropic", "claude"), ("gemini", "gemini"), ("openai", "openai"),
                                          ("responses", "openai")])
def test_a_passthrough_over_the_byte_budget_fits(shots, dialect, prof):
    msgs = _conversation(shots, 14)                    # ~27 MB of images: over 16 MiB, under Anthropic's 32 MB
    res = compact(msgs, profile=prof, dialect=dialect, budget=1_000_000)
    size = request_bytes(res.request)
    assert res.passthrough and size <= byte_budget(profile(prof)) <= RELIABLE_REQUEST_BYTES
    assert validate(res.request, dialect, profile=prof) == []
    changed = sum(v for k, v in res.rewrites.items() if "byte budget" in k)
    assert 5 <= changed <= 7                           # the oldest 5-7 of 14, not more
    assert all(res.store.get(m.id) == m for m in msgs)  # every source kept


@pytest.mark.parametrize("dialect,prof,changed", [("anthropic", "claude", 6), ("gemini", "gemini", 1)])
def test_a_compaction_with_large_tail_images_fits(shots, dialect, prof, changed):
    msgs = _conversation(shots, 40, words=100)         # the tail's images alone are over 16 MiB
    res = compact(msgs, dialect=dialect, profile=prof, budget=15_000, max_tokens=1000)
    assert request_bytes(res.request) <= RELIABLE_REQUEST_BYTES and not res.passthrough
    assert validate(res.request, dialect, profile=prof) == []
    assert len(res.pages) == 2                         # the pages are kept; the oldest own images gave way
    assert sum(v for k, v in res.rewrites.items() if "byte budget" in k) == changed
