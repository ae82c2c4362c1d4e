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
    assert callable(snapglyph.recall) and callable(snapglyph.overflow.detect)


def test_render_path_imports_no_sdk_or_tokenizer():
    code = ("import sys, snapglyph; snapglyph.render('hello', profile='claude'); "
            "print(sorted(m for m in ('tiktoken', 'openai', 'anthropic', 'httpx') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


# Every public function's returned type is exported too (a caller can name what it gets back).
RETURNS = {
    "compact": "CompactResult", "compact_ladder": "LadderResult", "cost_report": "CostRow", "render": "Page",
    "load": "Transcript", "load_text": "Transcript", "from_request": "Transcript", "snapshot_parts": "SnapshotParts",
    "text_tokens": "TokenCount", "calibrate": "Calibration", "profile": "Profile", "validate": "Fault",
    "next_budget": "Budget", "budget_for": "Budget",
}


def test_returned_types_are_exported():
    import inspect
    for fn, typ in RETURNS.items():
        assert fn in snapglyph.__all__ and typ in snapglyph.__all__, (fn, typ)
        ret = str(inspect.signature(getattr(snapglyph, fn)).return_annotation)
        doc = inspect.getdoc(getattr(snapglyph, fn)) or ""
        assert typ in ret or typ in doc, (fn, typ, ret)
    assert snapglyph.overflow.detect.__annotations__["return"] == "OverflowResult | None"
    assert "OverflowResult" in snapglyph.__all__


def test_error_tree_is_exported_and_drawn():
    import snapglyph.errors as errors
    assert sorted(errors.__all__) == sorted(n for n in snapglyph.__all__ if n.endswith("Error"))
    for name in errors.__all__:
        cls = getattr(snapglyph, name)
        assert issubclass(cls, snapglyph.SnapglyphError) and name in errors.__doc__, name
