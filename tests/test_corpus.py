"""`snapglyph cost` over a corpus on Dask (issue 13 item 6): paths, rows against the single-file report, failures."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, shared_path
from snapglyph import InputError, cost_report, load
from snapglyph.corpus import check_rows_path, corpus_cost, corpus_paths, price_transcript, write_rows

TRAJ = ROOT / "examples" / "swe-agent" / "marshmallow-code__marshmallow-1867.traj"
PI = ROOT / "examples" / "pi-session" / "large-session.jsonl"

pytest.importorskip("distributed", reason="the corpus extra (dask[distributed]) is not installed")


def test_paths_from_folders_globs_and_lists(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".hidden").mkdir()
    for rel in ("a/x.jsonl", "a/y.json", "a/LICENSE", "a/.hidden/z.json", "b.traj"):
        (tmp_path / rel).write_text("{}")
    (tmp_path / "list.txt").write_text("# two files\nb.traj\n\na/x.jsonl\n")
    assert corpus_paths([str(tmp_path / "a")]) == [tmp_path / "a" / "x.jsonl", tmp_path / "a" / "y.json"]
    assert corpus_paths([str(tmp_path / "**" / "*.json*")]) == [tmp_path / "a" / "x.jsonl", tmp_path / "a" / "y.json"]
    assert corpus_paths(["@" + str(tmp_path / "list.txt"), str(tmp_path / "b.traj")]) == [
        tmp_path / "a" / "x.jsonl", tmp_path / "b.traj"]
    # a missing file named on the command line is kept, like one in a list: its row carries the error
    assert corpus_paths([str(tmp_path / "missing.jsonl"), str(tmp_path / "b.traj")]) == [
        tmp_path / "b.traj", tmp_path / "missing.jsonl"]
    os.mkfifo(tmp_path / "fifo")  # exists, but neither a file nor a folder
    with pytest.raises(InputError, match="fifo: not a file or a folder"):
        corpus_paths([str(tmp_path / "fifo")])
    (tmp_path / "bin.lst").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(InputError, match=r"bin\.lst: not a path list"):
        corpus_paths(["@" + str(tmp_path / "bin.lst")])
    with pytest.raises(InputError, match="no transcript files"):
        corpus_paths([str(tmp_path / "*.none")])
    with pytest.raises(InputError, match="cannot read the path list"):
        corpus_paths(["@" + str(tmp_path / "nolist.txt")])
    (tmp_path / "gone.txt").write_text("b.traj\nmissing.jsonl\n")   # a listed file that is gone: kept, for its row
    assert corpus_paths(["@" + str(tmp_path / "gone.txt")]) == [tmp_path / "b.traj", tmp_path / "missing.jsonl"]


def test_a_row_is_the_single_file_report():
    row = price_transcript(str(TRAJ), ["claude", "openai"])
    msgs = load(TRAJ).messages
    for name in ("claude", "openai"):
        whole = [r for r in cost_report(msgs, profiles=[name]) if r.scope == "whole"][0]
        assert (row[f"text_tokens_{name}"], row[f"image_tokens_{name}"], row[f"pages_{name}"]) == (
            whole.text_tokens, whole.image_tokens, whole.pages)
        assert row[f"ratio_{name}"] == whole.ratio
    assert (row["format"], row["messages"], row["chars"], row["error"]) == ("swe-agent", len(msgs), whole.chars, "")


def test_a_failure_is_a_row(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"messages": [')
    row = price_transcript(str(bad), ["claude"])
    assert row["error"].startswith("FormatError: malformed JSON in broken.json")
    assert (row["messages"], row["chars"], row["image_tokens_claude"]) == (0, 0, 0)


def test_two_worker_cluster_over_the_shared_transcripts(tmp_path):
    data = shared_path("data")
    files = [p for p in sorted(data.rglob("*")) if p.is_file() and p.stat().st_size < 1_000_000
             and not p.name.startswith(("LICENSE", "SOURCE", "README"))]
    for k in range(3):
        for p in files:
            dest = tmp_path / f"copy{k}" / p.relative_to(data)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, dest)
    (tmp_path / "copy0" / "broken.json").write_text('{"messages": [')
    paths = corpus_paths([str(tmp_path)])
    res = corpus_cost(paths, profiles=["claude"], workers=2)
    assert res.workers == 2 and [r["path"] for r in res.rows] == [str(p) for p in paths]
    by_name: dict = {}
    for r in res.rows:
        by_name.setdefault(r["path"].split("/copy", 1)[1][2:], []).append(r)
    assert len(by_name) == len(files) + 1
    for rel, rows in by_name.items():
        if rel == "broken.json":
            assert rows[0]["error"].startswith("FormatError: malformed JSON")
            continue
        assert len(rows) == 3
        expect = price_transcript(rows[0]["path"], ["claude"])
        for r in rows:  # every copy, on whichever worker, gives the in-process row
            assert {k: v for k, v in r.items() if k not in ("path", "seconds")} == {
                k: v for k, v in expect.items() if k not in ("path", "seconds")}
    assert sum(not r["error"] for r in res.rows) >= 3 * 3  # pi, swe-agent, claude-code at least
    assert "failed: " + str(tmp_path / "copy0" / "broken.json") in res.summary()


def test_cli_corpus_writes_csv_rows(tmp_path):
    listing = tmp_path / "paths.txt"
    listing.write_text(f"{TRAJ}\n{PI}\n{tmp_path / 'bad.json'}\n{tmp_path / 'gone.json'}\n")
    (tmp_path / "bad.json").write_text("[")
    out = tmp_path / "rows.csv"
    typed = tmp_path / "typed.jsonl"  # missing, named on the command line: a row too, not a failed run
    r = subprocess.run([sys.executable, "-m", "snapglyph.cli", "cost", "@" + str(listing), str(typed), "--workers",
                        "2", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(out.open()))
    assert [row["path"] for row in rows] == sorted([str(TRAJ), str(PI), str(tmp_path / "bad.json"),
                                                    str(tmp_path / "gone.json"), str(typed)])
    single = {row["path"]: row for row in rows}
    expect = price_transcript(str(TRAJ), ["claude"])
    assert int(single[str(TRAJ)]["image_tokens_claude"]) == expect["image_tokens_claude"]
    assert int(single[str(TRAJ)]["text_tokens_claude"]) == expect["text_tokens_claude"]
    assert single[str(tmp_path / "bad.json")]["error"].startswith("FormatError")
    assert single[str(tmp_path / "gone.json")]["error"].startswith("FormatError") and "no such file" in \
        single[str(tmp_path / "gone.json")]["error"]
    assert single[str(typed)]["error"].startswith("FormatError") and "no such file" in single[str(typed)]["error"]
    assert "5 transcripts (3 failed)" in r.stderr and "2 workers" in r.stderr


def test_write_rows_checks(tmp_path):
    with pytest.raises(InputError, match="no rows"):
        write_rows([], tmp_path / "x.csv")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(InputError, match="pyarrow"):
            write_rows([{"a": 1}], tmp_path / "x.parquet")
    else:
        import pyarrow.parquet as pq

        write_rows([{"a": 1, "b": "x"}], tmp_path / "x.parquet")
        assert pq.read_table(tmp_path / "x.parquet").to_pylist() == [{"a": 1, "b": "x"}]


def test_rows_path_is_checked_before_the_run(tmp_path):
    """A wrong --out fails at once, before any transcript is priced; a missing folder is made."""
    with pytest.raises(InputError, match=r"rows\.xlsx: rows are written as \.csv or \.parquet"):
        check_rows_path(tmp_path / "rows.xlsx")
    with pytest.raises(InputError, match="rows are written as"):
        write_rows([{"a": 1}], tmp_path / "rows.xlsx")
    assert not (tmp_path / "rows.xlsx").exists()
    deep = tmp_path / "new" / "folder" / "rows.csv"
    assert check_rows_path(deep) == deep and deep.parent.is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="cannot make the output folder"):
        check_rows_path(tmp_path / "file" / "rows.csv")
    r = subprocess.run([sys.executable, "-m", "snapglyph.cli", "cost", str(TRAJ), str(tmp_path / "gone.jsonl"),
                        "--out", str(tmp_path / "rows.xlsx")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "rows are written as" in r.stderr
    assert "transcript" not in r.stderr  # refused before the run: no summary


def _dask_pair(tmp_path):
    """A ``dask scheduler`` and one ``dask worker`` started here on 127.0.0.1, as a user starts them; returns
    (scheduler address, processes)."""
    import json
    import time

    dask = shutil.which("dask", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if not dask:
        pytest.skip("the `dask` command is not installed (the corpus extra, dask[distributed])")
    sched_file = tmp_path / "scheduler.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sched_file)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    deadline = time.monotonic() + 60
    while not sched_file.exists() or not sched_file.read_text().strip():
        if time.monotonic() > deadline or procs[0].poll() is not None:
            for p in procs:
                p.kill()
            pytest.fail("dask scheduler did not start within 60 s")
        time.sleep(0.1)
    address = json.loads(sched_file.read_text())["address"]
    procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                                   "--host", "127.0.0.1"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return address, procs


def test_rows_are_the_same_through_a_scheduler_started_apart(tmp_path):
    # `--scheduler` against a scheduler and a worker of their own (127.0.0.1): every row is the in-process row.
    from distributed import Client

    address, procs = _dask_pair(tmp_path)
    try:
        with Client(address, timeout="60s") as c:
            c.wait_for_workers(1, timeout=60)
        paths = sorted([str(TRAJ), str(PI)])  # the order `cost` writes its rows in
        out, expect = tmp_path / "rows.csv", tmp_path / "expect.csv"
        r = subprocess.run([sys.executable, "-m", "snapglyph", "cost", *paths, "-p", "claude", "--scheduler",
                            address, "--out", str(out)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        write_rows([price_transcript(p, ["claude"]) for p in paths], expect)  # the same rows, in this process

        def rows(f):
            return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(f.open())]
        got = rows(out)
        assert [row["path"] for row in got] == paths and not any(row["error"] for row in got)
        assert got == rows(expect)
    finally:
        for p in procs[::-1]:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
