"""The measurements of bench/speed.py at a smaller size, under pytest-benchmark: ``pytest bench/test_bench_speed.py``.

Whole processes, wall clock, text file in and PNG files out, each side's output folder emptied and the file system
synced first (:func:`speed.run_wall`). The peers run when Node and Bun are there (``speed.peer_cmds``), else the
test says why it skipped. The figures of the README come from ``python bench/speed.py --write`` (RESULTS.md), not
from here: this file keeps the measurement code exercised and gives a quick local reading.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import speed  # noqa: E402

CHARS = 1_000_000


@pytest.fixture(scope="module")
def text_file(tmp_path_factory) -> Path:
    return speed.make_text(CHARS, tmp_path_factory.mktemp("speed"))


def test_snapglyph_end_to_end(benchmark, text_file, tmp_path):
    out = tmp_path / "sg"
    speed.run_wall(speed.snapglyph_cmd(text_file, out), out)  # kernels and atlas cached: not a figure
    benchmark.pedantic(speed.run_wall, args=(speed.snapglyph_cmd(text_file, out), out), rounds=3, iterations=1)
    assert len(list(out.glob("page-*.png"))) > 10


@pytest.mark.parametrize("peer", ["pxpipe", "omp"])
def test_peer_end_to_end(benchmark, text_file, tmp_path, peer):
    cmds, skipped = speed.peer_cmds(text_file, tmp_path)
    if peer not in cmds:
        pytest.skip(skipped.get(peer) or skipped.get("peers", "not available"))
    out = tmp_path / peer
    benchmark.pedantic(speed.run_wall, args=(cmds[peer], out), rounds=3, iterations=1)
    assert any(out.iterdir())


def test_pillow_end_to_end(benchmark, text_file, tmp_path):
    out = tmp_path / "pil"
    benchmark.pedantic(speed.run_wall, args=(speed.pillow_cmd(text_file, out), out), rounds=1, iterations=1)
    assert any(out.iterdir())


def test_physical_floor(benchmark, text_file):
    got = benchmark.pedantic(speed.floor_seconds, args=(text_file,), rounds=1, iterations=1)
    assert got["pages"] > 10 and got["floor_s"] > 0


def test_startup_one_page(benchmark, tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("A one-page render: hello, world.\n" * 100, encoding="utf-8")
    out = tmp_path / "one"
    benchmark.pedantic(speed.run_wall, args=(speed.snapglyph_cmd(one, out), out), rounds=5, iterations=1)
