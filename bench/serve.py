"""What ``snapglyph serve`` adds to a request it passes through: latency to the first byte and stream throughput.

Three processes on 127.0.0.1: the provider simulator (the upstream, answering every request with the same scripted
text), ``snapglyph serve`` in front of it (started as a user starts it), and this client (httpx, one kept-alive
connection per path). Each round sends the same requests directly to the simulator and through the proxy, in
alternating order, so load on the machine hits both paths alike:

- first byte: a small Anthropic request (not streamed, ~2 KB body), time from sending to the first body byte;
- stream: a streamed answer of ``--stream-chars`` characters (Anthropic SSE, one event per 12 characters), its
  bytes per second from request to last byte.

Reported: median and interquartile range of each path, the median of the per-round difference (proxy minus
direct), and the CPU time the proxy process used per round (``/proc``, Linux), which a loaded machine inflates less
than wall time. ``--write`` puts the table in ``bench/RESULTS.md`` between ``<!-- serve:start -->`` and
``<!-- serve:end -->`` with the commit, date, machine and load.

    python bench/serve.py --rounds 200 --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from provenance import commit_label, write_section

import httpx

ROOT = Path(__file__).resolve().parent.parent

SIM = """
import sys, time
from snapglyph.testing import Simulator, answer
n = int(sys.argv[1])
sim = Simulator(lambda d, b: answer("x" * (n if b.get("stream") else 40)), provider="anthropic",
                context_window=10**9).start()
print(sim.port, flush=True)
sys.stdin.read()
"""


def _start_sim(stream_chars: int) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([sys.executable, "-c", SIM, str(stream_chars)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, cwd=ROOT)
    return p, f"http://127.0.0.1:{p.stdout.readline().strip()}"


def _start_proxy(upstream: str, state: str) -> tuple[subprocess.Popen, str]:
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([sys.executable, "-m", "snapglyph.cli", "serve", "--upstream", upstream, "--port",
                          str(port), "--state", state], stderr=subprocess.PIPE, text=True, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/snapglyph/status", timeout=1)
            return p, url
        except httpx.TransportError:
            time.sleep(0.1)
    p.kill()
    raise SystemExit("the proxy did not start: " + (p.stderr.read() if p.stderr else ""))


def _first_byte(c: httpx.Client, url: str, body: bytes) -> float:
    t = time.perf_counter()
    ms = None
    with c.stream("POST", url + "/v1/messages", content=body, headers={"x-api-key": "k"}) as r:
        for _ in r.iter_raw():
            if ms is None:
                ms = (time.perf_counter() - t) * 1000
    return ms


def _stream(c: httpx.Client, url: str, body: bytes) -> float:
    t = time.perf_counter()
    n = 0
    with c.stream("POST", url + "/v1/messages", content=body, headers={"x-api-key": "k"}) as r:
        for piece in r.iter_raw():
            n += len(piece)
    return n / (time.perf_counter() - t) / 1e6


def _cpu(pid: int) -> float | None:
    """CPU seconds (user + system) a process used so far (Linux ``/proc``), else ``None``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _q(xs: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(xs, n=4)
    return q[0], statistics.median(xs), q[2]


def measure(rounds: int, stream_chars: int, stream_every: int = 10) -> dict:
    """Run the rounds; returns the raw samples per path."""
    sim, sim_url = _start_sim(stream_chars)
    with tempfile.TemporaryDirectory() as state:
        proxy, proxy_url = _start_proxy(sim_url, state)
        small = json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": [
            {"role": "user", "content": "Summarize the build log. " + "ok " * 600}]}).encode()
        big = json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 64, "stream": True, "messages": [
            {"role": "user", "content": "Write it all out."}]}).encode()
        out: dict = {"ttfb": {"direct": [], "proxy": []}, "stream": {"direct": [], "proxy": []}}
        try:
            with httpx.Client(timeout=60) as cd, httpx.Client(timeout=60) as cp:
                paths = {"direct": (cd, sim_url), "proxy": (cp, proxy_url)}
                for _ in range(5):                                       # warm both connections
                    for c, u in paths.values():
                        _first_byte(c, u, small)
                cpu = {"ttfb": 0.0, "stream": 0.0}

                def timed(kind: str, who: str, fn, body: bytes) -> None:
                    c0 = _cpu(proxy.pid) if who == "proxy" else None
                    out[kind][who].append(fn(*paths[who], body))
                    if c0 is not None:
                        cpu[kind] += _cpu(proxy.pid) - c0

                for r in range(rounds):
                    order = ("direct", "proxy") if r % 2 == 0 else ("proxy", "direct")
                    for who in order:
                        timed("ttfb", who, _first_byte, small)
                    if r % stream_every == 0:
                        for who in order:
                            timed("stream", who, _stream, big)
                if _cpu(proxy.pid) is not None:
                    out["cpu"] = {k: cpu[k] * 1000 / max(1, len(out[k]["proxy"])) for k in cpu}
        finally:
            proxy.terminate()
            proxy.wait(10)
            sim.stdin.close()
            sim.wait(10)
    return out


def table(out: dict, stream_chars: int) -> str:
    """The results as a Markdown table."""
    d, p = out["ttfb"]["direct"], out["ttfb"]["proxy"]
    added = [b - a for a, b in zip(d, p)]
    sd, sp = out["stream"]["direct"], out["stream"]["proxy"]
    rows = ["| measure | direct (median, IQR) | through the proxy (median, IQR) | added, median of pairs |",
            "|---|---|---|---|"]
    qd, qp, qa = _q(d), _q(p), _q(added)
    rows.append(f"| first byte, small request ({len(d)} rounds) | {qd[1]:.2f} ms ({qd[0]:.2f}-{qd[2]:.2f}) | "
                f"{qp[1]:.2f} ms ({qp[0]:.2f}-{qp[2]:.2f}) | {qa[1]:+.2f} ms ({qa[0]:+.2f} to {qa[2]:+.2f}) |")
    qd, qp = _q(sd), _q(sp)
    ratio = [b / a for a, b in zip(sd, sp)]
    rows.append(f"| stream of {stream_chars} characters ({len(sd)} rounds) | {qd[1]:.1f} MB/s "
                f"({qd[0]:.1f}-{qd[2]:.1f}) | {qp[1]:.1f} MB/s ({qp[0]:.1f}-{qp[2]:.1f}) | "
                f"{statistics.median(ratio):.2f}x the direct throughput |")
    if out.get("cpu") is not None:
        rows.append(f"| CPU time of the proxy process per request (`/proc`) | | {out['cpu']['ttfb']:.2f} ms per "
                    f"small request, {out['cpu']['stream']:.0f} ms per stream | |")
    return "\n".join(rows)


def _context() -> str:
    commit = commit_label()
    load = os.getloadavg()
    return (f"Commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()} "
            f"{os.cpu_count()} cores, Python {platform.python_version()}, {_server_stack()}, load average "
            f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min) at the end of the run.")


def _server_stack() -> str:
    """The event loop and HTTP parser uvicorn picks here (``auto``: uvloop and httptools where installed, as the
    ``serve`` extra installs them; else asyncio and h11, which cost more per relayed request: one profiling run of
    300 small requests here took 50 ms each with them and 5.7 ms with uvloop and httptools, but not at equal load,
    so that ratio is not a measurement of the stack alone)."""
    import importlib.util
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return f"uvicorn with {loop} and {http}"


def write(section: str) -> None:
    """Replace the ``serve`` section of bench/RESULTS.md (or append it)."""
    write_section("serve", section)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--stream-chars", type=int, default=200_000)
    ap.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md")
    args = ap.parse_args(argv)
    out = measure(args.rounds, args.stream_chars)
    section = ("## snapglyph serve: pass-through overhead\n\n"
               "Generated by `python bench/serve.py --rounds " + str(args.rounds) + " --write`: the provider "
               "simulator, `snapglyph serve` and an httpx client as three processes on 127.0.0.1, direct and "
               "proxied requests alternating within each round. First byte: a 2 KB Anthropic request answered "
               "with JSON. Stream: Anthropic server-sent events, one per 12 characters of text, relayed as they "
               "arrive.\n\n" + table(out, args.stream_chars) + "\n\n" + _context())
    print(section)
    if args.write:
        write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
