"""The one budget rule of every door (snapglyph.compaction.budget): a window becomes a budget in the provider's
tokens, text is counted at the calibration, page images as the provider bills them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import snapglyph
from snapglyph._config import MESSAGE_OVERHEAD
from snapglyph import Message, Part
from snapglyph.compaction.budget import Budget, budget_for, calibrated, estimate, next_budget
from snapglyph.compaction.estimate import TokenCosts
from snapglyph.compaction.settings import RenderSettings
from snapglyph.providers.overflow import detect


@settings(max_examples=200, deadline=None)
@given(est=st.integers(2_000, 400_000), reserve=st.integers(1, 8_000), window=st.integers(8_000, 200_000),
       ratio=st.floats(0.1, 10.0), margin=st.floats(0.0, 0.3))
def test_a_budget_never_passes_the_window_whatever_the_ratio(est, reserve, window, ratio, margin):
    b = budget_for(est, reserve, window=window, ratio=ratio, margin=margin)
    assert b.tokens == max(1, int(window * (1 - margin) - reserve)) + reserve      # the window's room, any ratio
    assert b.ratio == min(max(ratio, 0.25), 8.0) and b.window == window


def _talk(n: int) -> list[Message]:
    return [Message(i, "user" if i % 2 == 0 else "assistant", [Part("text", text=f"step {i} " + "word " * 200)])
            for i in range(n)]


def test_compact_counts_text_at_the_ratio_and_pages_as_billed():
    msgs = _talk(14)
    plain = snapglyph.compact(msgs, dialect="anthropic", budget=10**6, max_tokens=100)
    doubled = snapglyph.compact(msgs, dialect="anthropic", budget=Budget(10**6, None, 2.0), max_tokens=100)
    framing = MESSAGE_OVERHEAD * len(msgs) + 100            # per-message framing and the reserve: not text
    text = plain.tokens_before - framing
    assert plain.passthrough and doubled.passthrough
    assert 2 * text - len(msgs) <= doubled.tokens_before - framing <= 2 * text + len(msgs)   # rounding per text
    pages = snapglyph.compact(msgs, dialect="anthropic", budget=3000, max_tokens=100).pages
    prof = snapglyph.profile("claude")
    assert pages and TokenCosts(calibrated(prof, 3.0)).pages(pages) == TokenCosts(prof).pages(pages)
    assert RenderSettings(calibrated(prof, 3.0), None, "auto", None).key == RenderSettings(prof, None, "auto",
                                                                                             None).key


def test_a_low_ratio_widens_the_text_but_not_the_pages():
    """The provider counts text at half the estimate: a compaction to its window shows more than the estimate's
    budget would allow, yet the request's provider count (text halved, images as billed) stays in the window."""
    msgs = _talk(40)
    prof = snapglyph.profile("claude")
    b = budget_for(10**6, 100, window=8000, ratio=0.5)
    res = snapglyph.compact(msgs, dialect="anthropic", budget=b, max_tokens=100)
    costs = TokenCosts(prof)
    images = costs.pages(res.pages)
    text = estimate(res.request, prof) - 100 - images
    assert 0.5 * text + images + 100 <= b.tokens + len(res.request["messages"]) * 4
    narrow = snapglyph.compact(msgs, dialect="anthropic", budget=b.tokens, max_tokens=100)
    assert len(res.tail_ids) > len(narrow.tail_ids)


@pytest.mark.parametrize("message, limit", [
    ("Your input exceeds the context window of this model. Please adjust your input and try again.", None),
    ("This model's maximum context length is 900000 tokens. However, your messages resulted in 901000 tokens.",
     900000),
])
def test_the_next_budget_is_below_what_was_sent(message, limit):
    """Whatever the body names (nothing, or a window far above what was sent), the retry is smaller than the
    request that overflowed."""
    body = {"model": "gpt-4.1", "max_tokens": 500, "messages": [{"role": "user", "content": "word " * 6000}]}
    ov = detect(400, {"error": {"message": message, "code": "context_length_exceeded"}})
    assert ov is not None and ov.limit == limit
    sent = estimate(body, "openai")
    b = next_budget(ov, body, "openai")
    assert b.tokens < (sent - 500) * b.ratio + 500
