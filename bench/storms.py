"""Issue 35's storm goals: 200 turns of a conversation growing 1,500 tokens a turn at a 32k window through serve.

Method: the provider simulator (Anthropic's overflow body, a 32,768-token window, 4,096 output tokens asked each
turn) with ``snapglyph serve`` in front of it, in this process, both on 127.0.0.1. The client sends the conversation
as Claude Code does: a system prompt block and the last block of the last message carry a ``cache_control``
breakpoint. Each turn adds a user message of about 1,500 simulator tokens (build-log lines) and the model's short
answer. Counted per turn: the new cuts (``/snapglyph/status``'s ``cuts``), and the share of the upstream request's
bytes up to its last breakpoint that are unchanged from the request before it (whole blocks from the start,
``serve_goals.cache_share``), apart for turns that kept the cut and turns that made a new one.

Goals (issue 35): a new cut at most every 8 turns; at least 90% of each request's bytes up to its last breakpoint
unchanged from the request before it.

``python bench/storms.py`` prints the section; ``--write`` puts it into bench/RESULTS.md between
``<!-- storms:start -->`` and ``<!-- storms:end -->``; ``--turns N`` for a shorter run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import commit_label  # noqa: E402
from serve_goals import cache_share  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CC = {"type": "ephemeral"}
WINDOW, GROWTH, RESERVE = 32_768, 1_500, 4_096


def _turn_text(n: int, tokens: int) -> str:
    return "".join(f"turn {n} build line {k}: target_{k % 13}.o compiled in {k * 7 % 900} ms, warnings=0\n"
                   for k in range(max(1, tokens // 20)))


def run(turns: int) -> dict:
    """Drive ``turns`` turns; per turn ``(new cut made, share up to the last breakpoint)``."""
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.run import Background
    from snapglyph.testing import Simulator, answer
    sim = Simulator(lambda d, b: answer("noted"), provider="anthropic", context_window=WINDOW)
    sim.start()
    counted = sim.count_request("anthropic", {"messages": [{"role": "user", "content": _turn_text(0, GROWTH)}]}).text
    per = max(1, int(GROWTH * GROWTH / max(1, counted)))             # about GROWTH simulator tokens a turn
    msgs: list = []
    out = {"turns": [], "cuts": [], "overflows": 0, "seconds": 0.0,
           "per": sim.count_request("anthropic", {"messages": [{"role": "user", "content": _turn_text(0, per)}]}).text}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as state, \
            Background(ServeConfig(sim.base_url, state=Path(state))).start() as bg, httpx.Client(timeout=600) as c:
        prev, cuts = None, 0
        for n in range(turns):
            if msgs:
                msgs[-1]["content"][-1].pop("cache_control", None)
                msgs.append({"role": "assistant", "content": "noted"})
            msgs.append({"role": "user", "content": [{"type": "text", "text": _turn_text(n, per),
                                                      "cache_control": CC}]})
            body = {"model": "claude-sonnet-4-5", "max_tokens": RESERVE, "system": [
                {"type": "text", "text": "You watch build logs.", "cache_control": CC}], "messages": msgs}
            n0 = len(sim.log)
            r = c.post(bg.url + "/v1/messages", json=body, headers={"x-api-key": "x",
                                                                    "anthropic-version": "2023-06-01"})
            if r.status_code != 200:
                raise SystemExit(f"turn {n}: {r.status_code} {r.text[:300]}")
            out["overflows"] += sum(1 for e in sim.log[n0:] if e["kind"] == "overflow")
            sent = json.loads([e for e in sim.log[n0:] if e["kind"] == "ok"][-1]["raw"])
            convs = c.get(bg.url + "/snapglyph/status").json()["conversations"]
            now = convs[0]["cuts"] if convs else 0
            if prev is not None and cuts:
                out["turns"].append((now != cuts, cache_share(prev, sent)[0]))
            if now != cuts:
                out["cuts"].append(n)
            cuts, prev = now, sent
    sim.stop()
    out["seconds"] = time.monotonic() - t0
    return out


def section(res: dict, turns: int) -> str:
    kept = [s for new, s in res["turns"] if not new]
    made = [s for new, s in res["turns"] if new]
    gaps = [b - a for a, b in zip(res["cuts"], res["cuts"][1:])]
    every = [s for _, s in res["turns"]]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())

    def spread(xs: list) -> str:
        if not xs:
            return "-"
        return f"{100 * statistics.median(xs):.1f} % (min {100 * min(xs):.1f} %, n={len(xs)})"

    ok_gap = bool(gaps) and min(gaps) >= 8
    ok_share = bool(every) and min(every) >= 0.9
    return "\n".join([
        "## Compaction storms: issue 35's goals", "",
        f"Generated by `python bench/storms.py{' --turns ' + str(turns) if turns != 200 else ''}` at "
        f"{commit_label()}, {time.strftime('%Y-%m-%d')}, {platform.machine()} {os.cpu_count()} cores, load {load}; "
        f"{res['seconds']:.0f} s (method: the script's docstring). {turns} turns of about {res['per']:,} simulator "
        f"tokens each at a {WINDOW:,}-token window, {RESERVE:,} output tokens asked.", "",
        "| figure | measured | goal | met |", "| --- | --- | --- | --- |",
        f"| overflows seen by serve | {res['overflows']} | - | - |",
        f"| new cuts (first at turn {res['cuts'][0] if res['cuts'] else '-'}) | {len(res['cuts'])} | - | - |",
        f"| turns between two new cuts | min {min(gaps) if gaps else '-'}, median "
        f"{statistics.median(gaps) if gaps else '-'} | at least 8 | {'met' if ok_gap else 'missed'} |",
        f"| bytes up to the last breakpoint unchanged, every turn after the first cut | {spread(every)} | at least "
        f"90 % each | {'met' if ok_share else 'missed'} |",
        f"| the same, turns that kept the cut | {spread(kept)} | | |",
        f"| the same, turns that made a new cut | {spread(made)} | | |",
    ])


def write(text: str) -> None:
    path = ROOT / "bench" / "RESULTS.md"
    old = path.read_text(encoding="utf-8")
    block = f"<!-- storms:start -->\n{text}\n<!-- storms:end -->"
    new, n = re.subn(r"<!-- storms:start -->.*?<!-- storms:end -->", lambda m: block, old, flags=re.DOTALL)
    path.write_text(new if n else old.rstrip("\n") + "\n\n" + block + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--write", action="store_true", help="write the section into bench/RESULTS.md")
    args = ap.parse_args(argv)
    text = section(run(args.turns), args.turns)
    print(text)
    if args.write:
        write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
