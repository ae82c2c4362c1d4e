"""Issue 35's storm goals: 200 turns of a conversation growing 1,500 tokens a turn at a 32k window through serve.

Method: the provider simulator (Anthropic's overflow body, a 32,768-token window, 4,096 output tokens asked each
turn) with ``snapglyph serve`` in front of it, in this process, both on 127.0.0.1. The client sends the conversation
as Claude Code does: a system prompt block and the last block of the last message carry a ``cache_control``
breakpoint. Each turn adds a user message of about 1,500 simulator tokens (build-log lines) and the model's short
answer. Counted per turn: the new cuts (``/snapglyph/status``'s ``cuts``), and the share of the upstream request's
bytes up to its last breakpoint that are unchanged from the request before it (whole blocks from the start,
``serve_goals.cache_share``), apart for turns that kept the cut and turns that made a new one. For each new cut
also: whether its page images start with the earlier request's (all but its last, which the new middle fills
further), and the most its share could be (``best``: every earlier page but the last kept, against the new
request's bytes up to its last breakpoint; the new pages and the tail are bytes the earlier request did not have).

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
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import commit_label, write_section  # noqa: E402
from serve_goals import cache_share, prompt_blocks  # noqa: E402

from snapglyph._config import GROWTH_TURNS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CC = {"type": "ephemeral"}
WINDOW, GROWTH, RESERVE = 32_768, 1_500, 4_096


def _turn_text(n: int, tokens: int) -> str:
    return "".join(f"turn {n} build line {k}: target_{k % 13}.o compiled in {k * 7 % 900} ms, warnings=0\n"
                   for k in range(max(1, tokens // 20)))


def _images(body: dict) -> list[str]:
    return [b["source"]["data"] for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "image"]


def _best(prev: dict, cur: dict) -> float:
    """The most a new cut could leave unchanged: what ``prev`` holds before its last page, against that and the
    bytes ``cur`` holds that ``prev`` did not (its pages not in ``prev``, the snapshot text and the tail after
    them)."""
    a, b = prompt_blocks(prev), prompt_blocks(cur)
    shown = [i for i, (x, _) in enumerate(a) if b'"type": "image"' in x]
    keep = sum(len(x) for x, _ in a[:shown[-1]]) if shown else 0
    old = set(_images(prev))
    pages = [i for i, (x, _) in enumerate(b) if b'"type": "image"' in x]
    last = max((i for i, (_, bp) in enumerate(b) if bp), default=-1)
    fresh = sum(len(x) for i, (x, _) in enumerate(b[:last + 1])
                if (i in pages and json.loads(x)[1]["source"]["data"] not in old) or i > max(pages, default=-1))
    return keep / (keep + fresh) if keep + fresh else 0.0


def _snapshot_text_changed(prev: dict, cur: dict) -> bool:
    """Whether the first block of ``cur`` that differs from ``prev`` is the snapshot message's text."""
    a, b = prompt_blocks(prev), prompt_blocks(cur)
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x[0] != y[0]), None)
    return i is not None and b"snapglyph snapshot:" in b[i][0]


def _kept_start(prev: dict, cur: dict) -> bool:
    """Whether ``cur``'s pages start with ``prev``'s but its last (and ``prev`` showed more than one)."""
    old, new = _images(prev), _images(cur)
    return len(old) > 1 and new[:len(old) - 1] == old[:-1]


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
    out = {"turns": [], "cuts": [], "pages": [], "overflows": 0, "seconds": 0.0, "made": [], "text_dips": 0,
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
            if now:
                out["pages"].append(len(_images(sent)))
            if prev is not None and cuts:
                out["turns"].append((now != cuts, cache_share(prev, sent)[0]))
                if now == cuts and out["turns"][-1][1] < 0.9 and _snapshot_text_changed(prev, sent):
                    out["text_dips"] += 1
                if now != cuts:
                    out["made"].append((_kept_start(prev, sent), _best(prev, sent), len(_images(prev)),
                                        len(_images(sent))))
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

    best = [b for _, b, _, _ in res["made"]]
    starts = sum(1 for k, *_ in res["made"] if k)
    under = [(new, x) for new, x in res["turns"] if x < 0.9]
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
        f"| page images sent a request, after the first cut | median {statistics.median(res['pages']) if res['pages'] else '-'}, "
        f"min {min(res['pages'], default='-')}, max {max(res['pages'], default='-')} | - | - |",
        f"| bytes unchanged, the mean over every turn after the first cut | {100 * statistics.mean(every):.1f} % | "
        f"- | - |" if every else "| bytes unchanged, the mean | - | - | - |",
        f"| new cuts whose pages start with the earlier request's (all but its last) | {starts} of {len(res['made'])} "
        f"| - | - |",
        f"| the most a new cut could leave unchanged (every earlier page but the last kept) | {spread(best)} | | |",
        f"| turns under 90 % | {len(under)}: {sum(1 for new, _ in under if new)} new cuts, "
        f"{sum(1 for new, _ in under if not new)} that kept the cut | 0 | {'met' if not under else 'missed'} |",
        "", _read(res, best, under),
    ])


def _read(res: dict, best: list, under: list) -> str:
    """The section's reading of its figures."""
    made = res["made"]
    pages = statistics.median([n for *_, n in made]) if made else 0
    impossible = sum(1 for b in best if b < 0.9)
    return (f"Read: a new cut moves at least {GROWTH_TURNS} turns of the tail into pages (the cut leaves room for "
            f"{GROWTH_TURNS} turns of the measured growth), and those new pages and the shorter tail are bytes the "
            f"request before did not have, while a {WINDOW:,}-token window holds few pages (new cuts sent a median "
            f"of {pages:.0f}), so even a new cut that kept every earlier page but the last would leave at "
            f"most {100 * max(best, default=0):.1f} % of its bytes unchanged (median "
            f"{100 * statistics.median(best) if best else 0:.1f} %): the 90 % goal cannot be met on {impossible} "
            f"of the {len(made)} new-cut turns by any cut that shows the moved turns as pages. A new cut keeps the "
            f"earlier cut's pages as its start where the budget allows (compact(..., earlier=): the pages the earlier "
            f"cut dropped are dropped again; here {sum(1 for k, *_ in made if k)} of {len(made)} new cuts did); where "
            f"more must be dropped it drops only what the budget needs (sticky.LOW_WATER_CUTS = "
            f"{_low_water()}: room kept for the next cut's pages is room the model does not read now). While a "
            f"cut is kept, its snapshot text is the cut's byte for byte (sticky.Cut.user); of the "
            f"{len(under) - sum(1 for new, _ in under if new)} turns that kept the cut and are under 90 %, "
            f"{res['text_dips']} changed first in the snapshot message's text.")


def _low_water() -> int:
    from snapglyph.compaction.sticky import LOW_WATER_CUTS
    return LOW_WATER_CUTS


def write(text: str) -> None:
    write_section("storms", text)

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
