"""The honest speed and memory bench of issue 13: whole processes, interleaved rounds, medians with their spread.

Run ``python bench/speed.py --write`` to measure everything and rewrite the ``speed`` section of bench/RESULTS.md
(commit, date, machine and load beside the figures); ``pytest bench/test_bench_speed.py`` runs the same
measurements at smaller sizes under pytest-benchmark. Every ratio compares rounds of both sides taken in turn in
one run (A B A B ...), so a change of machine load hits both sides alike.

What is measured
----------------
- End to end: a text file in, PNG files written, the whole process, wall clock: ``snapglyph render`` against the
  peers in ../shared/peers (pxpipe under Node, oh-my-pi's snapcompact under Bun, installed from npm into a cache
  folder on first use; skipped with the reason where Node, npm or Bun is missing) and a Pillow baseline written like
  for like (one ``ImageDraw.text`` per row, a 2-bit palette PNG at zlib level 1, same page and cell).
- The physical floor: the chosen deflate over the pages' packed bytes plus one write pass over their pixels.
- Start-up: a one-page ``snapglyph render`` in a fresh process (median of 10).
- CPU seconds beside wall seconds for every side (``getrusage`` of the children): wall ratios move with the
  machine's load, CPU ratios hold.
- Peak resident memory (``ru_maxrss`` of the child, bench/rss_probe.py) of ``render`` at 1 M, 10 M and 40 M
  characters of each input kind of bench/inputs.py (plain text, an aider history, a Claude Code session, many tiny
  lines), and of ``compact`` of the aider history at 1x, 4x and 16x, with its time.

Runs on a fresh clone after the README's install: without ../shared the text is the repository's own and the
peers are skipped (the section says so); pytest is not needed (``--tiny`` checks it all runs in about a minute).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import inputs
from provenance import commit_label, write_section

ROOT = Path(__file__).resolve().parent.parent
SHARED = inputs.SHARED
PEERS = SHARED / "peers"
PEER_CACHE = Path(os.environ.get("SNAPGLYPH_PEER_CACHE", Path.home() / ".cache" / "snapglyph-peers"))
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
PY = sys.executable


# ----------------------------------------------------------------------------------------------- inputs

def make_text(n: int, folder: Path) -> Path:
    """Write ``n`` characters of mixed real text (:func:`inputs.mixed_text`: an equal share of each transcript in
    ../shared/data, else of this repository's own text) once; return its path."""
    return inputs.make_kind("text", n, folder)


# ----------------------------------------------------------------------------------------------- sides

def _env() -> dict:
    """The children's environment: this checkout first on the path, and Python's bytecode cache on, as an installed
    package has it (pip compiles it at install time): where ``PYTHONDONTWRITEBYTECODE`` is set (it is in this
    workplace), every fresh process would compile snapglyph's modules from source, 30-100 ms of each start-up
    (measured 2026-12-02 with ``-X importtime``: ``import snapglyph.cli`` 131-210 ms without the cache, 102-147
    ms with it). The run before the measured rounds writes the cache."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def snapglyph_cmd(src: Path, out: Path, workers: int | None = None) -> list[str]:
    cmd = [PY, "-m", "snapglyph.cli", "render", str(src), "--out", str(out)]
    return cmd + (["--workers", str(workers)] if workers else [])


def pillow_cmd(src: Path, out: Path) -> list[str]:
    return [PY, str(Path(__file__).parent / "pillow_render.py"), str(src), str(out)]


def peer_cmds(src: Path, out: Path) -> tuple[dict, dict]:
    """(name -> command, name -> reason skipped) for the peers that can run here."""
    cmds, skipped = {}, {}
    if not PEERS.is_dir():
        return {}, {"peers": f"{PEERS} is absent"}
    if shutil.which("node"):
        cmds["pxpipe"] = ["node", str(PEERS / "pxpipe_render.mjs"), str(src), str(out / "pxpipe"),
                          "--bundle", str(PEERS / "pxpipe-render.mjs")]
    else:
        skipped["pxpipe"] = "node is not installed"
    bun = PEER_CACHE / "node_modules" / ".bin" / "bun"
    if not bun.exists() and shutil.which("npm"):
        PEER_CACHE.mkdir(parents=True, exist_ok=True)
        shutil.copy(PEERS / "package.json", PEER_CACHE / "package.json")
        subprocess.run(["npm", "install", "--prefix", str(PEER_CACHE), "--no-audit", "--no-fund"],
                       capture_output=True, timeout=1800)
    if bun.exists():
        driver = PEER_CACHE / "omp_render.ts"
        shutil.copy(PEERS / "omp_render.ts", driver)
        cmds["omp"] = [str(bun), str(driver), str(src), str(out / "omp")]
    else:
        skipped["omp"] = "bun is missing (npm absent or the install of ../shared/peers/package.json failed)"
    return cmds, skipped


# ----------------------------------------------------------------------------------------------- timing

def run_timed(cmd: list[str], out: Path | None = None) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system of the process and its children) of one whole process writing into
    an empty output folder.

    The previous round's folder is moved aside, not deleted (:func:`clear_aside` deletes them all after the
    measurements), and the file system is synced: on this kind of machine, files written just after many were
    deleted cost the writer up to a second of system time (measured: 874 page files in 1.2 s of system time after
    a delete, 0.07 s otherwise), whichever side it is. Wall ratios move with the machine's load; CPU ratios hold."""
    if out is not None:
        if out.exists():
            aside = out.parent / ".aside"
            aside.mkdir(exist_ok=True)
            out.rename(aside / f"{out.name}-{time.time_ns()}")
        out.mkdir(parents=True)
    os.sync()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, env=_env(), cwd=ROOT, timeout=3600)
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed: {r.stderr.decode(errors='replace')[-400:]}")
    return dt, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_wall(cmd: list[str], out: Path | None = None) -> float:
    """Wall-clock seconds of :func:`run_timed`."""
    return run_timed(cmd, out)[0]


def clear_aside(folder: Path) -> None:
    """Delete the output folders :func:`run_wall` moved aside under ``folder`` (outside any timing)."""
    for aside in folder.rglob(".aside"):
        shutil.rmtree(aside, ignore_errors=True)


def interleave(sides: dict, rounds: int) -> dict:
    """Run each side's command once per round, in turn; return name -> :func:`summary` of its wall seconds, with
    ``"cpu"``: the summary of its CPU seconds."""
    times: dict = {name: ([], []) for name in sides}
    for _ in range(rounds):
        for name, (cmd, out) in sides.items():
            wall, cpu = run_timed(cmd, out)
            times[name][0].append(wall)
            times[name][1].append(cpu)
    return {name: summary(w) | {"cpu": summary(c)} for name, (w, c) in times.items()}


def summary(ts: list[float]) -> dict:
    """Median, min, max and spread (max - min over median) of a list of seconds."""
    med = statistics.median(ts)
    return {"median": med, "min": min(ts), "max": max(ts), "spread": (max(ts) - min(ts)) / med if med else 0.0,
            "rounds": len(ts)}


def peak_rss_mb(cmd: list[str], out: Path | None = None) -> dict:
    """Peak memory of one whole process in MB, ``{"rss", "anon", "file"}``, measured by bench/rss_probe.py (what
    each figure means is said there)."""
    if out is not None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
    probe = [PY, str(Path(__file__).parent / "rss_probe.py"), *cmd]
    r = subprocess.run(probe, capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"bench/rss_probe.py failed: {r.stderr[-400:]}")
    got = json.loads(r.stdout)
    if got["status"] != 0:
        raise RuntimeError(f"{cmd[:4]} failed with status {got['status']}")
    return {k: got[k] for k in ("rss", "anon", "file")}


def floor_seconds(src: Path) -> dict:
    """The physical floor for ``src``: deflate (the chosen library, the renderer's level) over every page's packed
    rows, plus one write pass over the pixels; also the pages' count and pixel bytes."""
    import numpy as np

    from snapglyph.raster import _pack_kernels
    from snapglyph.raster.encode import DEFLATE, _deflate
    from snapglyph.raster.render import iter_pages
    from snapglyph.readers.textfile import TextFileDocument

    deflate_s = pass_s = 0.0
    pages = nbytes = 0
    for page in iter_pages(TextFileDocument(src), reuse_buffer=True):
        px = page.pixels
        h, w = px.shape
        raw = np.empty(h * ((w * 2 + 7) // 8 + 1), np.uint8)
        _pack_kernels.pack_rows(px, h, 2, raw)
        t = time.perf_counter()
        _deflate(raw.data, None)  # the writer's own deflate call
        t2 = time.perf_counter()
        scratch = np.empty_like(px)
        t3 = time.perf_counter()
        scratch.fill(255)
        t4 = time.perf_counter()
        deflate_s += t2 - t
        pass_s += t4 - t3
        pages += 1
        nbytes += px.nbytes
    return {"deflate": DEFLATE, "deflate_s": deflate_s, "pixel_pass_s": pass_s, "floor_s": deflate_s + pass_s,
            "pages": pages, "pixel_mb": nbytes / 2**20}


# ----------------------------------------------------------------------------------------------- report

def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = commit_label()
    from importlib.metadata import PackageNotFoundError, version

    versions = []
    for name in ("numba", "llvmlite", "numpy", "isal"):
        try:
            versions.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            versions.append(f"{name} absent")
    return {"commit": commit or "?", "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
                       f"Python {platform.python_version()}, {', '.join(versions)}",
            "load": "%.2f %.2f %.2f" % os.getloadavg()}


def warm_kernels() -> str:
    """Run the install step that compiles the kernels (``python -m snapglyph.raster.warm``: the JIT's cache and the
    ahead-of-time build) in the children's environment; return which kernels a child then uses (``build`` or
    ``jit``), which the results name."""
    subprocess.run([PY, "-m", "snapglyph.raster.warm"], env=_env(), cwd=ROOT, check=True, timeout=1800)
    r = subprocess.run([PY, "-c", "from snapglyph.raster import native; print(native.kernels().source)"],
                       env=_env(), cwd=ROOT, check=True, capture_output=True, text=True, timeout=600)
    return r.stdout.strip()


def measure(sizes=(1_000_000, 10_000_000, 40_000_000), e2e_chars: int = 10_000_000, rounds: int = 3,
            startup_runs: int = 10, pillow_chars: int = 1_000_000, history_times=(1, 4, 16),
            work: Path | None = None, kinds=inputs.KINDS) -> dict:
    """Take every measurement of the module docstring; return them as a dict (also written as JSON)."""
    work = Path(work or tempfile.mkdtemp(prefix="snapglyph-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    out = work / "out"
    res: dict = {"before": machine(), "text": inputs.text_origin()}
    src = make_text(e2e_chars, work)
    sides = {"snapglyph": (snapglyph_cmd(src, out / "sg"), out / "sg")}
    peers, skipped = peer_cmds(src, out)
    for name, cmd in peers.items():
        sides[name] = (cmd, out / name)
    res["kernels"] = warm_kernels()
    run_wall(sides["snapglyph"][0], sides["snapglyph"][1])  # numba cache, atlas cache: not a figure
    progress(f"end to end, {len(sides)} sides x {rounds} rounds")
    res["e2e"] = {"chars": e2e_chars, "skipped": skipped, "sides": interleave(sides, rounds)}
    small = make_text(pillow_chars, work)
    base = {"snapglyph": (snapglyph_cmd(small, out / "sg1"), out / "sg1"),
            "pillow": (pillow_cmd(small, out / "pil"), out / "pil")}
    res["pillow"] = {"chars": pillow_chars, "sides": interleave(base, rounds)}
    res["floor"] = floor_seconds(src)
    one = work / "one-page.txt"
    one.write_text("A one-page render: hello, world.\n" * 100, encoding="utf-8")
    run_wall(snapglyph_cmd(one, out / "one"), out / "one")  # the Python engine's bytecode cache: not a figure
    res["startup"] = summary([run_wall(snapglyph_cmd(one, out / "one"), out / "one") for _ in range(startup_runs)])
    res["memory"] = {}
    for kind in kinds:
        for n in sizes:
            progress(f"peak memory of render: {kind} at {n / 1e6:.0f} M characters")
            res["memory"][f"{kind} {n}"] = peak_rss_mb(snapglyph_cmd(inputs.make_kind(kind, n, work), out / "mem"),
                                                       out / "mem")
    res["compact"] = {}
    for k in history_times:
        hist = inputs.real_history(k, work)
        comp = [PY, "-m", "snapglyph.cli", "compact", str(hist), "--out", str(work / "req.json"),
                "--store", str(work / f"store-{k}.jsonl")]
        progress(f"compact of the history x{k} ({hist.stat().st_size / 1e6:.0f} MB)")
        (work / f"store-{k}.jsonl").unlink(missing_ok=True)  # a first compaction: no store of an earlier run read
        mem = peak_rss_mb(comp)
        (work / f"store-{k}.jsonl").unlink(missing_ok=True)
        wall, cpu = run_timed(comp)
        (work / f"store-{k}.jsonl").unlink(missing_ok=True)
        res["compact"][str(k)] = {"mb": hist.stat().st_size / 2**20, "memory": mem, "wall": wall, "cpu": cpu}
    res["history"] = "the aider history of ../shared/data" if inputs.AIDER.is_file() else \
        "a synthetic aider history of 4.2 M characters (../shared/data is absent)"
    res["after"] = machine()
    clear_aside(work)
    (work / "speed.json").write_text(json.dumps(res, indent=1))
    return res


def progress(msg: str) -> None:
    """One line on standard error (a long run shows where it is)."""
    print(f"speed: {msg}", file=sys.stderr, flush=True)


def _fmt(s: dict) -> str:
    return f"{s['median']:.2f} s (min {s['min']:.2f}, max {s['max']:.2f}, {s['rounds']} rounds)"


def _cpu_fmt(s: dict) -> str:
    c = s.get("cpu")
    return f"{c['median']:.2f} s" if c else "not recorded"


def _section_e2e(res: dict) -> list[str]:
    b, a, e = res["before"], res["after"], res["e2e"]
    n = e["chars"]
    lines = ["## Speed and memory (issue 13)", "",
             f"Generated by `python bench/speed.py --write` at commit {b['commit']}"
             + (f" (the work tree moved to {a['commit']} during the run)" if a["commit"] != b["commit"] else "")
             + f", {b['date']}; {b['machine']}; "
             f"load average {b['load']} before, {a['load']} after (other work shared the machine). Text: "
             f"{res.get('text', '../shared/data')}. Whole processes (Python's bytecode cache on, as installed), "
             "text file in, PNG files written; wall clock and CPU seconds (user + system, the process and its "
             "children: wall ratios move with the machine's load, CPU ratios hold); each ratio from rounds of both "
             "sides taken in turn in the same run; median with min and max. Kernels: "
             + {"build": "the ahead-of-time build (`snapglyph.raster.native`, made by `python -m "
                         "snapglyph.raster.warm` before the rounds)",
                "jit": "numba's JIT (no ahead-of-time build here)"}.get(res.get("kernels"), "not recorded")
             + ".", "",
             f"### End to end, {n / 1e6:g} M characters of mixed text "
             f"({e['sides']['snapglyph']['rounds']} rounds of each side, interleaved)", "",
             "| renderer | wall (median) | min | max | CPU (median) | M chars/s | snapglyph is (wall) | (CPU) |",
             "|---|---|---|---|---|---|---|---|"]
    sg = e["sides"]["snapglyph"]
    for name, s in e["sides"].items():
        wall = "" if name == "snapglyph" else f"{s['median'] / sg['median']:.1f}x faster"
        cpu = "" if name == "snapglyph" or "cpu" not in s else f"{s['cpu']['median'] / sg['cpu']['median']:.1f}x"
        lines.append(f"| {name} | {s['median']:.2f} s | {s['min']:.2f} | {s['max']:.2f} | {_cpu_fmt(s)} | "
                     f"{n / s['median'] / 1e6:.2f} | {wall} | {cpu} |")
    for name, why in e["skipped"].items():
        lines.append(f"| {name} | skipped: {why} | | | | | | |")
    p = res["pillow"]
    lines += ["", f"Pillow baseline (like for like: 2-bit palette PNG, zlib level 1, same page and cell; "
              f"{p['chars'] / 1e6:.0f} M characters): Pillow {_fmt(p['sides']['pillow'])}, snapglyph "
              f"{_fmt(p['sides']['snapglyph'])}: "
              f"{p['sides']['pillow']['median'] / p['sides']['snapglyph']['median']:.1f}x."]
    f = res["floor"]
    lines += ["", f"Physical floor on the same {n / 1e6:.0f} M characters ({f['pages']} pages, "
              f"{f['pixel_mb']:.0f} MB of pixels): {f['deflate']} deflate of the packed rows {f['deflate_s']:.2f} s "
              f"+ one write pass over the pixels {f['pixel_pass_s']:.2f} s = {f['floor_s']:.2f} s; snapglyph end to "
              f"end is {sg['median'] / f['floor_s']:.1f}x the floor (wall), "
              f"{sg.get('cpu', sg)['median'] / f['floor_s']:.1f}x in CPU seconds."]
    lines += ["", f"Start-up, one-page `snapglyph render` in a fresh process: {_fmt(res['startup'])}."]
    return lines


def _section_memory(res: dict) -> list[str]:
    m = res["memory"]
    kinds = list(dict.fromkeys(k.rsplit(" ", 1)[0] for k in m))
    sizes = sorted({int(k.rsplit(" ", 1)[1]) for k in m})
    lines = ["", "### Peak memory of `render` by input kind", "",
              "`ru_maxrss` of the whole process; in brackets the peak of its private memory (`RssAnon`, which leaves "
              "out the shared libraries' pages). Kinds (bench/inputs.py): plain text; an aider chat history and a "
              "Claude Code JSONL session holding the same mixed text, read as transcripts; many one-word lines.", "",
              "| input | " + " | ".join(f"{n / 1e6:g} M chars" for n in sizes) + " |",
              "|---|" + "---|" * len(sizes)]
    for kind in kinds:
        cells = [m.get(f"{kind} {n}") for n in sizes]
        lines.append(f"| {kind} | " + " | ".join(f"{v['rss']:.0f} MB ({v['anon']:.0f})" if v else "" for v in cells)
                     + " |")
    big = m.get(f"text {sizes[-1]}")
    if big:
        lines += ["", f"File-backed pages at the end of the {sizes[-1] / 1e6:.0f} M text render: {big['file']:.0f} MB "
                  "(shared libraries: with numba's JIT they are mostly libllvmlite.so's, 56-116 MB by how the page "
                  "cache holds that file, measured 2026-12-02; the ahead-of-time build loads neither numba nor LLVM)."]
    return lines


def _section_compact(res: dict) -> list[str]:
    c = res.get("compact") or {}
    if not c:
        return []
    lines = ["", f"### `compact` of {res.get('history', 'the aider history')}, repeated", "",
             "| history | file | peak memory | goal: 100 MB + 1.5x the file | wall | CPU |", "|---|---|---|---|---|---|"]
    for k, v in c.items():
        goal = 100 + 1.5 * v["mb"]
        met = "met" if v["memory"]["rss"] <= goal else "**missed**"
        lines.append(f"| x{k} | {v['mb']:.1f} MB | {v['memory']['rss']:.0f} MB ({v['memory']['anon']:.0f}) | "
                     f"{goal:.0f} MB: {met} | {v['wall']:.2f} s | {v['cpu']:.2f} s |")
    return lines


def section(res: dict) -> str:
    """The RESULTS.md section for a result of :func:`measure`."""
    return "\n".join(_section_e2e(res) + _section_memory(res) + _section_compact(res)) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the speed section of bench/RESULTS.md")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of each side (default 3)")
    ap.add_argument("--work", default=None, help="folder for inputs and outputs (default: a new temporary one)")
    ap.add_argument("--from-json", default=None, metavar="FILE", help="write the section from a saved speed.json")
    ap.add_argument("--tiny", action="store_true", help="every measurement at a tiny size (a check that it runs; "
                                                        "never --write with it)")
    args = ap.parse_args(argv)
    if args.from_json:
        text = section(json.loads(Path(args.from_json).read_text()))
        print(text)
        if args.write:
            write_section("speed", text, path=RESULTS)
        return 0
    if not (SHARED / "data").is_dir():
        print(f"speed: {SHARED}/data is absent: the text is this repository's own, the peers are skipped "
              "(set SNAPGLYPH_SHARED)", file=sys.stderr)
    tiny = dict(sizes=(100_000, 300_000), e2e_chars=300_000, startup_runs=2, pillow_chars=100_000,
                history_times=(1,)) if args.tiny else {}
    if args.tiny and args.write:
        ap.error("--tiny figures are not results: leave out --write")
    res = measure(rounds=1 if args.tiny else args.rounds, work=Path(args.work) if args.work else None, **tiny)
    text = section(res)
    print(text)
    if args.write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
