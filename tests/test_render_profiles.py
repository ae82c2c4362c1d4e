"""Every profile's pages, full and short, are taken by its provider as they are and never cost more than a page."""

from __future__ import annotations

import pytest

from snapglyph import profile, profile_names, render


@pytest.mark.parametrize("name", profile_names())
@pytest.mark.parametrize("n_lines", [1, 7, 400])
def test_pages_are_never_resized_and_short_pages_never_cost_more(name, n_lines):
    prof = profile(name)
    pages = render("status: ok 0123456789\n" * n_lines, profile=name, mode="lines")
    full = prof.image_tokens(*prof.page_size)
    for p in pages:
        assert prof.provider_resize(p.width, p.height) == (p.width, p.height)
        assert prof.image_tokens(p.width, p.height) <= full
        assert p.width == prof.page_size[0] and p.height % prof.patch == 0
