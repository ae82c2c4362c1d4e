"""Corpora at scale on Dask (issue 33 item 5): ``snapglyph cost`` over 200 real-shaped transcripts.

The corpus: every transcript of ``../shared/data`` copied ``--copies`` times (default 20: 10 transcripts, 200
files), each copy with fresh ids (every UUID in it replaced, the same way throughout the copy, by a new one derived
from the copy's number), so no two files are alike byte for byte and every reader sees its own format. Three runs of
the real command, in turn:

- ``--workers 1`` and ``--workers 2``: the local cluster the command starts itself;
- ``--scheduler ADDRESS``: a ``dask scheduler`` and a ``dask worker`` (two processes of one thread each, no nanny)
  started here on 127.0.0.1, as a user starts them.

Reported: whole-command wall and CPU seconds (the command and its waited children: the local cluster's workers),
seconds per transcript, the peak resident memory of the largest process (``ru_maxrss`` of the children: a worker)
and, for the scheduler run, of each worker process; and whether every run wrote the same rows (all columns but
``seconds``). ``python bench/corpus.py --write`` puts the section between ``<!-- corpus:start -->`` and
``<!-- corpus:end -->`` in bench/RESULTS.md; ``--copies 2`` is a quick check.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import inputs
from speed import machine

PY = sys.executable
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def build_corpus(folder: Path, copies: int) -> list[Path]:
    """Write ``copies`` fresh-id copies of every transcript in ../shared/data under ``folder``; return their paths."""
    if not inputs.DATA.is_dir():
        raise SystemExit(f"corpus: {inputs.DATA} is absent: the corpus is made of its transcripts")
    sources = [p for p in sorted(inputs.DATA.rglob("*")) if p.is_file()
               and not p.name.startswith(("LICENSE", "SOURCE", "README"))]
    out = []
    for k in range(copies):
        ns = uuid.UUID(int=k + 1)
        for src in sources:
            text = src.read_text(encoding="utf-8", errors="surrogateescape")
            text = _UUID.sub(lambda m: str(uuid.uuid5(ns, m.group(0))), text)
            dest = folder / f"copy{k:03d}" / src.relative_to(inputs.DATA)
            dest = dest.with_name(_UUID.sub(lambda m: str(uuid.uuid5(ns, m.group(0))), dest.name))
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8", errors="surrogateescape")
            out.append(dest)
    return out


_WRAP = ("import json, resource, subprocess, sys, time\n"
         "t = time.perf_counter(); r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
         "w = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
         "print(json.dumps({'status': r.returncode, 'wall': w, 'cpu': u.ru_utime + u.ru_stime, "
         "'peak_mb': u.ru_maxrss / 1024, 'stderr': r.stderr[-400:]}))")


def _timed(cmd: list[str]) -> dict:
    """Wall and CPU seconds and the largest process's peak memory (MB) of one command and its waited children,
    read by a small process of its own (a child's ``ru_maxrss`` starts from its parent's peak at the fork)."""
    r = subprocess.run([PY, "-c", _WRAP, *cmd], capture_output=True, text=True, timeout=7200)
    got = json.loads(r.stdout)
    if got["status"] != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed: {got['stderr']}")
    return got


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(f)]


def _pair(folder: Path) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and a two-process worker on 127.0.0.1."""
    dask = shutil.which("dask", path=os.path.dirname(PY) + os.pathsep + os.environ.get("PATH", ""))
    if not dask:
        raise SystemExit("corpus: the `dask` command is missing (pip install -e '.[corpus]')")
    f = folder / "scheduler.json"
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(f)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    while not f.exists() or not f.read_text().strip():
        time.sleep(0.1)
    address = json.loads(f.read_text())["address"]
    for _ in range(2):
        procs.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                       "--host", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    from distributed import Client

    with Client(address, timeout="60s") as c:
        c.wait_for_workers(2, timeout=120)
    return address, procs


def _stop(procs: list[subprocess.Popen]) -> tuple[list[float], float]:
    """Stop the pair; return each worker's peak resident memory in MB and the workers' CPU seconds (their own
    rusage, from wait4)."""
    peaks, cpu = [], 0.0
    for p in procs[:0:-1] + procs[:1]:
        p.terminate()
        _, _, ru = os.wait4(p.pid, 0)
        p.returncode = 0
        if p is not procs[0]:
            peaks.append(ru.ru_maxrss / 1024)
            cpu += ru.ru_utime + ru.ru_stime
    return peaks, cpu


def measure(copies: int, work: Path) -> dict:
    """Every run of the module docstring over a corpus of ``copies`` copies; the figures as a dict."""
    paths = build_corpus(work / "corpus", copies)
    chars = sum(len(p.read_text(encoding="utf-8", errors="replace")) for p in paths)
    res: dict = {"before": machine(), "files": len(paths), "chars": chars, "runs": {}}
    base = [PY, "-m", "snapglyph", "cost", str(work / "corpus"), "-p", "claude"]
    for name, extra in (("1 worker (local cluster)", ["--workers", "1"]),
                        ("2 workers (local cluster)", ["--workers", "2"])):
        print(f"corpus: {name}, {len(paths)} transcripts", file=sys.stderr, flush=True)
        out = work / f"rows-{len(res['runs'])}.csv"
        res["runs"][name] = _timed(base + extra + ["--out", str(out)]) | {"rows": str(out)}
    print("corpus: --scheduler, a scheduler and 2 workers started apart", file=sys.stderr, flush=True)
    address, procs = _pair(work)
    try:
        out = work / "rows-scheduler.csv"
        run = _timed(base + ["--scheduler", address, "--out", str(out)])
    finally:
        peaks, cpu = _stop(procs)
    run["cpu"] += cpu  # the workers' own, from their start (their idle wait for tasks included)
    res["runs"]["2 workers (--scheduler, started apart)"] = run | {"rows": str(out), "worker_peaks": peaks}
    rows = [_rows(Path(r["rows"])) for r in res["runs"].values()]
    res["identical"] = all(r == rows[0] for r in rows)
    res["failed"] = sum(bool(row["error"]) for row in rows[0])
    res["after"] = machine()
    return res


def section(res: dict) -> str:
    """The RESULTS.md section for :func:`measure`'s result."""
    b, n = res["before"], res["files"]
    lines = [f"## Corpus cost on Dask: {n} transcripts, local cluster and a scheduler started apart (issue 33)", "",
             f"Generated by `python bench/corpus.py --write` at commit {b['commit']}, {b['date']}; {b['machine']}; "
             f"load average {b['load']} before, {res['after']['load']} after. `snapglyph cost CORPUS -p claude` over "
             f"{n} transcripts ({res['chars'] / 1e6:.1f} M characters: every transcript of ../shared/data copied "
             "with fresh ids), one run of each way, in turn. CPU seconds: the command's and its waited children's (the "
             "local cluster's workers); for the scheduler run, the client's plus the two workers' own (from their "
             "start). Peak memory: `ru_maxrss` of the largest process of the run (a worker), or of each worker.", "",
             "| run | wall | per transcript | CPU | peak memory of a worker | rows |", "|---|---|---|---|---|---|"]
    for name, r in res["runs"].items():
        peak = (" / ".join(f"{p:.0f} MB" for p in r["worker_peaks"]) + " (each worker)") if "worker_peaks" in r \
            else f"{r['peak_mb']:.0f} MB (the largest process)"
        lines.append(f"| {name} | {r['wall']:.1f} s | {r['wall'] / n * 1000:.0f} ms | {r['cpu']:.1f} s | {peak} | "
                     f"{'the same' if res['identical'] else '**differ**'} |")
    lines += ["", f"Rows identical whichever way it ran: {'yes' if res['identical'] else '**no**'} "
              f"(all columns but `seconds`); rows with an error: {res['failed']}."]
    return "\n".join(lines) + "\n"


def write(text: str) -> None:
    """Replace the section between the corpus markers of bench/RESULTS.md (the old issue 13 table included)."""
    body = RESULTS.read_text(encoding="utf-8")
    start = body.index("## Corpus cost on Dask")
    end = body.index("<!-- corpus:end -->")
    body = body[:start] + text + body[end:]
    RESULTS.write_text(body, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=20, help="copies of each shared transcript (default 20: 200)")
    ap.add_argument("--write", action="store_true", help="rewrite the corpus section of bench/RESULTS.md")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="snapglyph-corpus-") as tmp:
        res = measure(args.copies, Path(tmp))
    text = section(res)
    print(text)
    if args.write:
        write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
