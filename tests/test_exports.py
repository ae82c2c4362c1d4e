"""The package's public surface: one sorted __all__, every name importable, the render path kept light."""

from __future__ import annotations

import subprocess
import sys

import snapglyph


def test_all_is_sorted_and_resolves():
    assert snapglyph.__all__ == sorted(snapglyph.__all__)
    for name in snapglyph.__all__:
        assert getattr(snapglyph, name) is not None, name
    assert callable(snapglyph.render) and callable(snapglyph.compact) and callable(snapglyph.validate)
    assert callable(snapglyph.recall) and callable(snapglyph.providers.overflow.detect)


def test_render_path_imports_no_sdk_or_tokenizer():
    code = ("import sys, snapglyph; snapglyph.render('hello', profile='claude'); "
            "print(sorted(m for m in ('tiktoken', 'openai', 'anthropic', 'httpx') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
