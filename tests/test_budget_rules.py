"""The one budget rule of every door (snapglyph.compaction.budget): a window becomes a budget in the provider's
tokens, text is counted at the calibration, page images as the provider bills them."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings, strategies as st

import snapglyph
from snapglyph._config import MESSAGE_OVERHEAD
from snapglyph import Message, Part
from snapglyph.compaction.budget import Budget, budget_for, calibrated, estimate, next_budget
from snapglyph.compaction.estimate import TokenCosts
from snapglyph.compaction.settings import RenderSettings
from snapglyph.providers.overflow import detect


@settings(max_examples=200, deadline=None)
@example(est=2000, reserve=5994, window=8000, ratio=8.0, margin=0.25)   # a reserve above the estimate (CI found it)
@given(est=st.integers(2_000, 400_000), reserve=st.integers(1, 8_000), window=st.integers(8_000, 200_000),
       ratio=st.floats(0.1, 10.0), margin=st.floats(0.0, 0.3))
def test_a_budget_never_passes_the_window_whatever_the_ratio(est, reserve, window, ratio, margin):
    b = budget_for(est, reserve, window=window, ratio=ratio, margin=margin)
    assert b.tokens == max(1, int(window * (1 - margin) - reserve)) + reserve      # the window's room, any ratio
    sent = int(max(1, est - reserve) * b.ratio) + reserve            # the refused request as the provider counts it
    assert b.most == max(b.tokens, min(window, sent - 1))                     # never past it, nor past the window
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


# -- an overflow that names no number: the window guessed from what was refused and what was answered ---------------
NO_NUMBERS = {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input "
                        "and try again.", "code": "context_length_exceeded"}}


def test_the_numberless_guess_is_a_third_of_the_refused_or_the_largest_answered():
    from snapglyph.compaction.budget import window_guess
    assert [window_guess(28_284), window_guess(28_284, accepted=7_342), window_guess(28_284, accepted=10_000),
            window_guess(28_284, accepted=28_284), window_guess(2)] == [9428, 9428, 10000, 9428, 1]


def test_next_budget_without_numbers_exact_values():
    body = {"model": "gpt-4.1", "max_tokens": 500, "messages": [{"role": "user", "content": "word " * 4000}]}
    ov = detect(400, NO_NUMBERS)
    sent = estimate(body, "openai")
    assert sent == 4505 and ov.limit is None and ov.prompt_tokens is None
    assert next_budget(ov, body, "openai") == Budget(1380, 1501, 1.0, 4144)               # 4505 / 3, 92% of it
    assert next_budget(ov, body, "openai", accepted=3000) == Budget(2760, 3000, 1.0, 4144)   # answered before: it fits
    assert next_budget(ov, body, "openai", accepted=5000) == Budget(1380, 1501, 1.0, 4144)   # above the refusal: stale
    assert next_budget(ov, body, "openai", refused=3000) == Budget(920, 1000, 1.0, 2760)     # a smaller one refused
    assert next_budget(ov, body, "openai", ratio=2.0) == Budget(2609, 2836, 2.0, 7829)    # the prompt counted twice
    assert next_budget(None, body, "openai", window=2000) == Budget(1840, 2000, 1.0, 2000)   # a window known earlier


@settings(max_examples=300, deadline=None)
@given(window=st.integers(2_000, 400_000), over=st.floats(1.0001, 3.26), reserve=st.integers(1, 1_000))
def test_a_request_up_to_3_26_times_its_window_recovers_without_numbers(window, over, reserve):
    """The guess's promise: the retry's budget is within the window for a request up to 1 / (share * (1 - margin))
    times it, whatever the provider counted."""
    est = int(window * over)
    b = budget_for(est, reserve, overflow=detect(400, NO_NUMBERS))
    assert b.tokens <= window and b.tokens < est


def test_the_book_keeps_bounds_per_upstream_and_model(tmp_path):
    from snapglyph.compaction.windows import Learned, WindowBook
    book = WindowBook(tmp_path)
    book.refused("https://a", "m", 28_000)
    book.refused("https://a", "m", 30_000)                       # a larger refusal proves less
    book.answered("https://a", "m", 7_000)
    book.answered("https://a", "m", 6_000)                        # a smaller answer proves less
    assert book.get("https://a", "m") == Learned(None, 7000, 28000)
    assert book.get("https://b", "m") == Learned() and book.get("https://a", "n") == Learned()
    book.refused("https://a", "m", 5_000, window=4_096)          # the window shrank: the old answer is forgotten
    assert book.get("https://a", "m") == Learned(4096, None, 5000)
    book.answered("https://a", "m", 6_500)                        # and grew again: refusal and window forgotten
    assert book.get("https://a", "m") == Learned(None, 6500, None)
    other = WindowBook(tmp_path)                                  # a second process on the same folder
    other.refused("https://b", "m", 9_000)
    book.answered("https://a", "n", 1_000)                        # merges what the other wrote
    assert {(e["upstream"], e["model"]): (e["accepted"], e["refused"]) for e in WindowBook(tmp_path).all()} == {
        ("https://a", "m"): (6500, None), ("https://a", "n"): (1000, None), ("https://b", "m"): (None, 9000)}
    small = WindowBook(tmp_path / "small", limit=2)
    for k in range(4):
        small.refused("", f"m{k}", 1000 + k)
    assert [e["model"] for e in WindowBook(tmp_path / "small").all()] == ["m2", "m3"]
    (tmp_path / "torn").mkdir()
    (tmp_path / "torn" / "windows.json").write_text("{not json")
    assert WindowBook(tmp_path / "torn").get("", "m") == Learned()


def test_recovery_budget_learns_across_conversations(tmp_path):
    """A second conversation to the same model, refused with no numbers, is retried at what the first one's
    answered retry showed, not at a third of itself."""
    from snapglyph.compaction.windows import WindowBook, recovery_budget
    book = WindowBook(tmp_path)
    ov = detect(400, NO_NUMBERS)
    first = {"model": "gpt-4.1", "max_tokens": 500, "messages": [{"role": "user", "content": "word " * 4000}]}
    b1 = recovery_budget(book, "https://a", "gpt-4.1", ov, first, "openai")
    assert b1 == Budget(1380, 1501, 1.0, 4144) and book.get("https://a", "gpt-4.1").refused == 4505
    book.answered("https://a", "gpt-4.1", 1380)                  # the retry was answered
    second = {**first, "messages": [{"role": "user", "content": "other " * 6000}]}     # 6,505 tokens
    b2 = recovery_budget(book, "https://a", "gpt-4.1", ov, second, "openai")
    assert b2 == Budget(1380, 1501, 1.0, 4144)                         # a third of the smaller refusal (4505) = 1501
    book.answered("https://a", "gpt-4.1", 4000)
    assert recovery_budget(book, "https://a", "gpt-4.1", ov, second, "openai") == Budget(3680, 4000, 1.0, 4144)
    assert recovery_budget(book, "https://b", "gpt-4.1", ov, second, "openai").tokens < 3680   # another upstream
