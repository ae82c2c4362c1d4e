"""bench/serve_goals.py at a tiny size: every part runs through a real ``snapglyph serve`` and prints its figures.

``pytest bench/test_bench_serve_goals.py`` (about 20 s): an 8k window, four overflow bodies, two recovery rounds,
six pass-through rounds and three turns per conversation. The figures themselves depend on the machine and are not
asserted; what is asserted holds on any machine: every door and body has a cell, the retry counts add up, serve's
own retries were all taken (its rule holds at 8k), each latency row has its samples, and the cache share of a turn
that kept its cut is a share.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent
SHARED = BENCH.parent.parent / "shared" / "data"


@pytest.fixture(scope="module")
def section() -> str:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the conversations come from ../shared/data")
    pytest.importorskip("uvicorn", reason="snapglyph serve needs the `serve` extra")
    r = subprocess.run([sys.executable, str(BENCH / "serve_goals.py"), "--tiny"], capture_output=True, text=True,
                       cwd=BENCH.parent, timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_first_retry_table_has_every_door_and_adds_up(section):
    from serve_goals import TINY, doors

    from snapglyph.serve.rewrite import RECALL_DIALECTS
    n, every = len(TINY["bodies"]), doors()
    cells = {door: re.search(rf"^\| {re.escape(door)} \| (\d+)/(\d+) \|$", section, re.MULTILINE) for door in every}
    assert all(cells.values()), section
    assert {int(m[2]) for m in cells.values()} == {n}
    # serve's rule takes every retry where it answers recall (a middle shown on no page is allowed there)
    assert all(int(cells[d][1]) == n for d, (dialect, how) in every.items() if how == "serve"
               and dialect in RECALL_DIALECTS)
    taken = sum(int(m[1]) for m in cells.values())
    assert f"{taken} of {n * len(every)} retries taken" in section


def test_latency_rows_have_their_samples(section):
    from serve_goals import TINY
    rec = re.findall(r"^\| recovery of (\w+) .*? \| \d+ \(\d+-\d+, n=(\d+)\) ms \| < 500 ms \|", section, re.MULTILINE)
    assert sorted(d for d, _ in rec) == ["anthropic", "openai"]
    assert {int(n) for _, n in rec} == {TINY["rounds"]}                               # the warm-up not counted
    passes = re.findall(r"^\| pass-through .*?added \(median of pairs\) \| -?[\d.]+ \(.*?, n=(\d+)\) ms \| < 2 ms",
                        section, re.MULTILINE)
    assert len(passes) == 6 and {int(n) for n in passes} == {TINY["pass_rounds"]}    # 3 requests x 2 measures


def test_cache_share_rows(section):
    rows = re.findall(r"^\| (claude-code session|aider) \(first \d+ messages.*?\| (\d+) \| (\d+) \(a new cut: (\d+)",
                      section, re.MULTILINE)
    assert [r[0] for r in rows] == ["claude-code session", "aider"]
    for _, turns, kept, cuts in rows:
        assert int(turns) == 3 and int(kept) + int(cuts) == 3
    shares = [float(x) for x in re.findall(r"%, min ([\d.]+) %", section)]
    assert len(shares) == 2 and all(0 <= x <= 100 for x in shares)


def test_cache_share_counts_whole_blocks_up_to_the_last_breakpoint():
    from serve_goals import CC, cache_share, prompt_blocks
    img = {"type": "image", "source": {"data": "A" * 1000}}
    prev = {"system": [{"type": "text", "text": "sys", "cache_control": CC}],
            "messages": [{"role": "user", "content": [img, {**img, "cache_control": CC}]},
                         {"role": "user", "content": [{"type": "text", "text": "tail", "cache_control": CC}]}]}
    moved = {**prev, "messages": [prev["messages"][0], {"role": "user", "content": [{"type": "text", "text": "tail"}]},
                                  {"role": "user", "content": [{"type": "text", "text": "more", "cache_control": CC}]}]}
    upto, whole = cache_share(prev, moved)            # the client's breakpoint moved on: nothing before it changed
    assert upto == whole and 0.95 < upto < 1
    repaged = {**moved, "messages": [{"role": "user", "content": [img, {"type": "image", "source": {"data": "B" * 1000},
                                                                        "cache_control": CC}]}, *moved["messages"][1:]]}
    sizes = [len(b) for b, _ in prompt_blocks(repaged)]          # system, page 1, page 2, tail, more
    assert cache_share(moved, repaged) == ((sizes[0] + sizes[1]) / sum(sizes),) * 2   # only the blocks before it
    assert cache_share(prev, prev) == (1.0, 1.0)
