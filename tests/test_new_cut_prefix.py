"""A new cut after an earlier one (``compact(..., earlier=cut)``): the earlier cut's pages start the new snapshot
byte for byte where the budget allows; where pages must be dropped, down to a low-water mark that lets the next
cut keep this one's pages; a conversation whose earlier messages changed is compacted as without ``earlier``."""

from snapglyph import Message, Part, compact
from snapglyph.compaction.sticky import Cut

KW = {"dialect": "anthropic", "max_tokens": 100, "budget": 6000}


def _conv(n: int) -> list[Message]:
    return [Message(0, "user", [Part("text", text="the task")])] + [
        Message(i, "assistant" if i % 2 else "user", [Part("text", text=f"step {i} " + f"word{i} " * 300)])
        for i in range(1, n)]


def _same_start(a, b) -> int:
    """Pages of ``a`` that start ``b``, PNG byte for byte."""
    k = 0
    while k < min(len(a.pages), len(b.pages)) and a.pages[k].png == b.pages[k].png:
        k += 1
    return k


def test_new_cut_keeps_the_earlier_pages_but_the_last_byte_for_byte():
    first = compact(_conv(20), **KW)
    assert (first.cut.first_tail, first.cut.kept, len(first.pages), first.dropped_ids) == (18, 3, 3, [])
    grown = compact(_conv(24), earlier=first.cut, **KW)
    assert grown.cut.first_tail == 23 and len(grown.pages) == 3
    assert _same_start(first, grown) == len(first.pages) - 1 == 2   # all but the old last page, which now holds more
    assert grown.middle_ids[:len(first.middle_ids)] == first.middle_ids
    assert grown.tokens_after <= 6000


def test_by_default_a_cut_that_must_drop_drops_only_what_the_budget_needs():
    """The default low-water mark is none (sticky.LOW_WATER_CUTS = 0): the cut that must drop pages sends the most
    pages that fit, as a compaction with no earlier cut does."""
    a = compact(_conv(20), **KW)
    b = compact(_conv(24), earlier=a.cut, **KW)
    c = compact(_conv(28), earlier=b.cut, **KW)
    least = compact(_conv(28), **KW)
    assert len(c.pages) == len(least.pages) == 3 and c.tokens_after <= 6000


def test_dropping_goes_to_a_low_water_mark_and_the_next_cut_keeps_its_pages(monkeypatch):
    from snapglyph.compaction import sticky
    monkeypatch.setattr(sticky, "LOW_WATER_CUTS", 1)
    a = compact(_conv(20), **KW)
    b = compact(_conv(24), earlier=a.cut, **KW)
    c = compact(_conv(28), earlier=b.cut, **KW)           # must drop: down to the low-water mark
    assert (len(c.pages), c.cut.kept, _same_start(b, c)) == (2, 2, 0)
    least = compact(_conv(28), **KW)                      # the fewest that fit: one page more
    assert len(least.pages) == 3 and c.tokens_after < least.tokens_after
    d = compact(_conv(32), earlier=c.cut, **KW)           # room was left: the next cut keeps c's pages (but its last)
    assert _same_start(c, d) == len(c.pages) - 1 == 1 and len(d.pages) == 2


def test_an_earlier_cut_that_no_longer_applies_is_ignored():
    first = compact(_conv(20), **KW)
    changed = _conv(24)
    changed[3] = Message(3, "assistant", [Part("text", text="an edited answer")])
    plain = compact(changed, **KW)
    after = compact(changed, earlier=first.cut, **KW)
    assert after.request == plain.request
    stale = Cut(first.cut.first_tail, first.cut.prefix, -1)     # a cut that showed its tail's outputs as pages
    assert compact(_conv(24), earlier=stale, **KW).request == compact(_conv(24), **KW).request
