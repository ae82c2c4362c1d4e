"""Text token counting speed: count_for_profile on ~3 MB of mixed text (code, JSON, CJK, emoji).

Run with ``pytest bench/``. The figure to read is MB per second; the compactor counts every message once per call.
"""

from __future__ import annotations

import pytest

from snapglyph import profile
from snapglyph.providers import tokens

TEXT = ("Traceback (most recent call last):\n  File \"x.py\", line 3\n{\"a\": [1, 2, 3]} " + "é漢🙂" * 3) * 40_000


@pytest.mark.skipif("cl100k_base" not in tokens.available_encodings(), reason="cl100k_base is not available offline")
def test_count_for_profile_3mb(benchmark):
    tokens.count_for_profile("warm", profile("claude"))
    n = benchmark.pedantic(tokens.count_for_profile, args=(TEXT, profile("claude")), rounds=3, iterations=1)
    assert n > 0
    mb = len(TEXT.encode("utf-8")) / 1e6
    print(f"\ncount_for_profile: {mb / benchmark.stats.stats.min:.1f} MB/s over {mb:.1f} MB")
