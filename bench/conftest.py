"""Benchmark fixtures: a fixed ~1,000,000-character corpus of real transcript text, and the ratio report.

Run with ``pytest bench/`` (plain ``pytest`` collects only ``tests/``). Every figure is reported as a ratio against
the Pillow baseline measured in the same run, with the absolute characters per second beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import inputs  # noqa: E402

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
CORPUS_CHARS = 1_000_000
RESULTS: dict[str, float] = {}  # benchmark name -> seconds (min over rounds)


def _source_texts() -> list[str]:
    """One text per transcript in ``SHARED`` (bench/inputs.py reads them)."""
    return inputs._shared_texts(SHARED)


@pytest.fixture(scope="session")
def corpus() -> str:
    """About 1,000,000 characters of mixed real text: an equal share from each transcript in ../shared/data."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the benchmark corpus comes from ../shared/data")
    texts = _source_texts()
    share = CORPUS_CHARS // len(texts)
    return "".join(t[:share] for t in texts)[:CORPUS_CHARS]


@pytest.fixture(scope="session")
def warm_kernels():
    """Compile (or load) the numba kernels and make their ahead-of-time build before any timing."""
    from snapglyph.raster.warm import main

    main()


def record(benchmark, name: str) -> None:
    """Keep the fastest round of ``benchmark`` under ``name`` for the ratio report."""
    RESULTS[name] = benchmark.stats.stats.min


GOALS = {"raster": 50.0, "end_to_end": 15.0}


def pytest_terminal_summary(terminalreporter):
    if not RESULTS:
        return
    tr = terminalreporter
    tr.section("snapglyph vs Pillow baseline (same run, same text and geometry)")
    n = CORPUS_CHARS
    for kind, base, ours in (("raster", "pillow_draw", "snapglyph_raster"),
                             ("end_to_end", "pillow_draw_png", "snapglyph_png")):
        for mode in ("dense", "lines"):
            b, o = RESULTS.get(f"{base}_{mode}"), RESULTS.get(f"{ours}_{mode}")
            if b and o:
                goal = GOALS[kind] if mode == "dense" or kind == "raster" else None
                tr.write_line(f"{kind:<10} {mode:<5} snapglyph {n / o / 1e6:7.2f} M chars/s  "
                              f"Pillow {n / b / 1e6:6.3f} M chars/s  ratio {b / o:6.1f}x"
                              + (f"  (goal {goal:.0f}x)" if goal else ""))
    for name, secs in sorted(RESULTS.items()):
        if name.startswith("png_"):
            tr.write_line(f"{name}: {secs * 1000:.2f} ms per page")
