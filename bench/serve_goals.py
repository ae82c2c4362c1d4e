"""Issue 29's measured goals for the doors: first-retry recovery, the latency ``serve`` adds, the prompt-cache share.

Real conversations from ``../shared/data`` (read with :func:`snapglyph.load`, written as requests with
:func:`snapglyph.providers.dialects.to_request`): the Claude Code session (tool calls and results) and the aider chat
history (1.3 M tokens of prose and code), each cut at the shortest prefix the provider simulator
(:class:`snapglyph.testing.Simulator`, in this process) counts over the size wanted.

(a) First retry. For every overflow body the simulator knows (but Ollama, which truncates instead of refusing),
    every dialect a door speaks and windows of 8k / 32k / 128k / 200k: the conversation grown just over the window
    is refused with that body, the door's own rule makes the retry (``serve``: ``Planner.recover``; the adapters:
    ``ConversationCompactor.learn`` from a configured budget far above the prompt, then ``compact``) and the
    simulator must take it. In process, as tests/test_doors_recover.py does with synthetic turns.
(b) Latency. ``snapglyph serve`` as a user starts it, in front of the simulator. Recovery: a 200,000-token
    conversation (Anthropic from the Claude Code session, OpenAI chat from the aider history) refused at a 200,000
    window; the time from the simulator's overflow answer written (its ``on_request`` hook) to the retried request
    read whole (the log's ``arrived``), a new conversation each round (``x-snapglyph-conversation``), after one
    run of each not counted (warm). Pass-through: the same requests direct to the simulator and through the proxy,
    alternating in each round; first byte at the client, and the upstream leg (client send to ``arrived``).
(c) Cache share. Through ``serve``: a conversation refused once, then the transcript's next rounds sent one by one.
    For each turn whose cut is the previous turn's (``/snapglyph/status``: no new cut), the share of the request's
    bytes up to its last ``cache_control`` breakpoint that are unchanged from the previous turn: the request as
    the upstream received it, in prompt order (tools, system, messages), as one JSON text per block with
    ``cache_control`` left out (a marker, not prompt), counted whole blocks from the start.

``--write`` puts the section into bench/RESULTS.md between ``<!-- serve-goals:start -->`` and
``<!-- serve-goals:end -->`` with the commit, date, machine and load.

    python bench/serve_goals.py --write          # about 10 minutes on 2 cores
    python bench/serve_goals.py --tiny           # the same at a tiny size (bench/test_bench_serve_goals.py)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from serve import _context, _cpu, _start_proxy

import httpx

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
SOURCES = {"claude-code": DATA / "claude-code-spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
           "aider": DATA / "aider-chat-history" / "chat-history.md"}
MODELS = {"openai": "gpt-5.4", "responses": "gpt-5.4", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-pro"}
PATHS = {"openai": "/v1/chat/completions", "responses": "/v1/responses", "anthropic": "/v1/messages"}
HEADERS = {"x-api-key": "k", "authorization": "Bearer k", "anthropic-version": "2023-06-01",
           "content-type": "application/json"}
RESERVE = 4096                                       # the output every request asks for
CC = {"type": "ephemeral"}
FULL = dict(windows=(8_000, 32_000, 128_000, 200_000), bodies=None, tokens=200_000, rounds=10, pass_rounds=100,
            turns=40, cache_windows={"claude-code": 128_000, "aider": 200_000})
TINY = dict(windows=(8_000,), bodies=("anthropic", "openai", "openai-responses", "bedrock"), tokens=12_000, rounds=2,
            pass_rounds=6, turns=3, cache_windows={"claude-code": 8_000, "aider": 8_000})


def progress(msg: str) -> None:
    """One status line on a terminal (rewritten in place); nothing when stderr is not a terminal."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + msg[:150])
        sys.stderr.flush()


# -- real conversations ----------------------------------------------------------------------------------------------
class Source:
    """A transcript's messages and the requests made of their prefixes (cut where no tool call is left open)."""

    def __init__(self, name: str) -> None:
        import snapglyph
        self.name = name
        self.tr = snapglyph.load(SOURCES[name])
        ms = self.tr.messages
        self.cuts = [k for k in range(2, len(ms) + 1)
                     if ms[k - 1].role in ("user", "tool") and (k == len(ms) or ms[k].role == "assistant")]
        self._tools: dict[str, list] = {}                # per dialect: the definitions of every tool the session uses

    def body(self, k: int, dialect: str, *, breakpoints: bool = False) -> dict:
        """The request of the first ``k`` messages; ``breakpoints``: shaped as Claude Code sends them (system as
        blocks, one ``cache_control`` on the system prompt and one on the last block of the last message)."""
        from snapglyph.providers.dialects import normalize, to_request
        msgs, _ = normalize(self.tr.messages[:k], dialect=dialect)
        body = to_request(msgs, dialect=dialect, model=MODELS[dialect], max_tokens=RESERVE, tools=self.tr.tools)
        if dialect not in self._tools:                   # an agent sends one tool list every turn, as Claude Code does
            full, _ = normalize(self.tr.messages, dialect=dialect)
            self._tools[dialect] = to_request(full, dialect=dialect, model="m", max_tokens=1,
                                              tools=self.tr.tools).get("tools") or []
        if self._tools[dialect]:
            body["tools"] = self._tools[dialect]
        if breakpoints:
            body["system"] = [{"type": "text", "text": body.get("system") or "You are a coding agent.",
                               "cache_control": CC}]
            last = body["messages"][-1]
            if isinstance(last["content"], str):
                last["content"] = [{"type": "text", "text": last["content"]}]
            last["content"][-1]["cache_control"] = CC
        return body

    def over(self, dialect: str, tokens: int, sim, start: int = 0) -> int | None:
        """The shortest prefix (a cut point at ``start`` or later) whose request the simulator counts over
        ``tokens``; ``None`` when the whole transcript is not."""
        cuts = [k for k in self.cuts if k >= start]
        if not cuts or sim.count_request(dialect, self.body(cuts[-1], dialect)).text <= tokens:
            return None
        lo, hi = 0, len(cuts) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if sim.count_request(dialect, self.body(cuts[mid], dialect)).text > tokens:
                hi = mid
            else:
                lo = mid + 1
        return cuts[lo]


def _sources() -> dict[str, Source]:
    return {name: Source(name) for name in SOURCES}


def _grown(sources: dict, dialect: str, window: int, sim) -> tuple[str, dict]:
    """The Claude Code session over ``window`` where it is long enough in ``dialect``, else the aider history."""
    for name in ("claude-code", "aider"):
        k = sources[name].over(dialect, window, sim)
        if k is not None:
            return name, sources[name].body(k, dialect)
    raise SystemExit(f"no transcript passes {window} tokens in {dialect}")


# -- (a) first retry -------------------------------------------------------------------------------------------------
class _SDKError(Exception):
    """What an SDK raises for an error answer: its status and the body as received."""

    def __init__(self, status: int, body) -> None:
        super().__init__(f"Error code: {status}")
        self.status_code, self.body = status, body


DOORS = {  # door -> (dialect, what it builds: serve's planner or an adapter's ConversationCompactor and its recall)
    "serve (openai)": ("openai", "serve"), "serve (responses)": ("responses", "serve"),
    "serve (anthropic)": ("anthropic", "serve"),
    "LangChain, pydantic-ai (openai, recall tool)": ("openai", True), "LiteLLM (openai, no recall tool)": ("openai", False),
    "OpenAI Agents SDK (responses, recall tool)": ("responses", True),
}


def _retry(door: str, body: dict, status: int, err, profile: str, state: Path, n: int) -> dict:
    """The retry ``door``'s rule makes after ``err``."""
    from snapglyph.integrations._common import ConversationCompactor
    from snapglyph.providers.overflow import detect
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.planner import Planner
    from snapglyph.serve.state import StateDir
    dialect, how = DOORS[door]
    if how == "serve":
        planner = Planner(StateDir(state), ServeConfig("http://127.0.0.1:9"))
        out = planner.recover(f"{n:016x}", dialect, body, profile, detect(status, err))
        if out.error:
            raise RuntimeError(out.error)
        return json.loads(out.data)
    conv = ConversationCompactor(None, None, budget=10_000_000, profile=profile, recall=how)
    sent, res = conv.compact(body, dialect)
    if res is not None or not conv.learn(_SDKError(status, err), sent):
        raise RuntimeError("the adapter's rule did not take the error as an overflow")
    return conv.compact(body, dialect)[0]


def first_retry(sources: dict, windows, bodies) -> dict:
    """Per door and window: the bodies whose retry the simulator took, the bodies tried, the failures."""
    from snapglyph.serve.rewrite import pick_profile
    from snapglyph.testing import PROVIDERS, Simulator
    bodies = [p for p in (bodies or PROVIDERS) if p != "ollama"]
    out: dict = {"bodies": bodies, "cells": {}, "fails": [], "sources": {}}
    n = 0
    with tempfile.TemporaryDirectory() as state:
        for window in windows:
            grown = {d: _grown(sources, d, window, Simulator(context_window=window)) for d in PATHS}
            for d, (name, body) in grown.items():
                out["sources"][(d, window)] = (name, Simulator().count_request(d, body).text)
            for door, (dialect, _) in DOORS.items():
                ok = 0
                for provider in bodies:
                    n += 1
                    progress(f"(a) {door}, {window // 1000}k, {provider}")
                    sim = Simulator(provider=provider, context_window=window)
                    body = grown[dialect][1]
                    status, err = sim.handle(dialect, body)
                    try:
                        retry = _retry(door, body, status, err, pick_profile(MODELS[dialect], dialect),
                                       Path(state), n)
                        got, answer = sim.handle(dialect, retry)
                    except Exception as e:              # a failure of the rule is a result, not a crash
                        got, answer = None, repr(e)
                    ok += got == 200
                    if got != 200:
                        out["fails"].append((door, window, provider, got, str(answer)[:160]))
                out["cells"][(door, window)] = (ok, len(bodies))
    return out


# -- (b) latency -----------------------------------------------------------------------------------------------------
class Proxy:
    """``snapglyph serve`` in a process of its own in front of ``sim``; its log lines are kept in :attr:`lines`."""

    def __init__(self, sim) -> None:
        self.state = tempfile.TemporaryDirectory()
        self.proc, self.url = _start_proxy(sim.base_url, self.state.name)
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stderr.readline, "")), daemon=True).start()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.state.cleanup()


def _post(c: httpx.Client, url: str, path: str, raw: bytes, caller: str | None = None) -> tuple[float, int, float]:
    """Send ``raw``; ``(monotonic time sent, status, seconds to the first body byte)``."""
    h = {**HEADERS, **({"x-snapglyph-conversation": caller} if caller else {})}
    t = time.monotonic()
    first = None
    with c.stream("POST", url + path, content=raw, headers=h) as r:
        for _ in r.iter_raw():
            first = first or time.monotonic() - t
    return t, r.status_code, first if first is not None else time.monotonic() - t


def _conversations(sources: dict, tokens: int, sim) -> dict[str, tuple[str, bytes]]:
    """The (b) conversations: dialect -> (source name, raw request over ``tokens``)."""
    out = {}
    for dialect, name in (("anthropic", "claude-code"), ("openai", "aider")):
        k = sources[name].over(dialect, tokens, sim)
        if k is None:
            raise SystemExit(f"{name} does not reach {tokens} tokens in {dialect}")
        out[dialect] = (name, json.dumps(sources[name].body(k, dialect)).encode())
    return out


def recovery(sim, proxy: Proxy, convs: dict, rounds: int) -> dict:
    """Seconds from the overflow answer to the retry read whole, per dialect (the first run of each not counted),
    and the proxy's CPU seconds per recovery."""
    out: dict = {d: {"added": [], "cpu": [], "status": []} for d in convs}
    with httpx.Client(timeout=600) as c:
        for r in range(rounds + 1):
            for d, (_, raw) in (convs.items() if r % 2 == 0 else reversed(convs.items())):
                progress(f"(b) recovery, round {r}/{rounds}, {d}")
                n0, cpu0 = len(sim.log), _cpu(proxy.proc.pid)
                _, status, _ = _post(c, proxy.url, PATHS[d], raw, caller=f"latency-{d}-{r}")
                got = sim.log[n0:]
                if r == 0:
                    continue                                   # warm-up: not counted
                out[d]["status"].append((status, [e["kind"] for e in got]))
                if [e["kind"] for e in got] == ["overflow", "ok"]:
                    out[d]["added"].append(got[1]["arrived"] - got[0]["answered"])
                    if cpu0 is not None:
                        out[d]["cpu"].append(_cpu(proxy.proc.pid) - cpu0)
    return out


def passthrough(sim, proxy: Proxy, raws: dict, rounds: int) -> dict:
    """Direct and proxied, alternating within each round: first byte at the client and the upstream leg, seconds."""
    out = {name: {w: {"first": [], "leg": []} for w in ("direct", "proxy")} for name in raws}
    with httpx.Client(timeout=600) as cd, httpx.Client(timeout=600) as cp:
        ways = {"direct": (cd, sim.base_url), "proxy": (cp, proxy.url)}
        for r in range(rounds + 2):
            for name, (path, raw) in raws.items():
                progress(f"(b) pass-through, round {r}/{rounds}, {name}")
                for w in (("direct", "proxy") if r % 2 == 0 else ("proxy", "direct")):
                    n0 = len(sim.log)
                    t, status, first = _post(ways[w][0], ways[w][1], path, raw, caller=f"pass-{name}")
                    if status != 200 or sim.log[n0]["kind"] != "ok":
                        raise SystemExit(f"pass-through {name} {w}: status {status}")
                    if r >= 2:                                 # two rounds warm the connections
                        out[name][w]["first"].append(first)
                        out[name][w]["leg"].append(sim.log[n0]["arrived"] - t)
    return out


# -- (c) cache share -------------------------------------------------------------------------------------------------
def prompt_blocks(body: dict) -> list[tuple[int, bool]]:
    """An Anthropic request in prompt order (tools, system, messages) as ``(bytes of the block's JSON without its
    cache_control, whether it carries one)``, the block's place (role, message number) in its text."""
    def one(where, block) -> tuple[bytes, bool]:
        b = {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
        return json.dumps([where, b], sort_keys=True, ensure_ascii=False).encode(), isinstance(block, dict) and \
            "cache_control" in block
    system = body.get("system") or []
    out = [one("tools", t) for t in body.get("tools") or []]
    out += [one("system", b) for b in ([{"type": "text", "text": system}] if isinstance(system, str) else system)]
    for i, m in enumerate(body.get("messages") or []):
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        out += [one([i, m["role"]], b) for b in content]
    return out


def cache_share(prev: dict, cur: dict) -> tuple[float, float]:
    """``(share of the bytes up to the last breakpoint, share of all bytes)`` of ``cur`` unchanged from ``prev``
    (whole blocks from the start)."""
    a, b = prompt_blocks(prev), prompt_blocks(cur)
    same = 0
    while same < min(len(a), len(b)) and a[same][0] == b[same][0]:
        same += 1
    last = max((i for i, (_, bp) in enumerate(b) if bp), default=-1)
    size = [len(x) for x, _ in b]
    upto = sum(size[:last + 1])
    return (sum(size[:min(same, last + 1)]) / upto if upto else 0.0), sum(size[:same]) / sum(size)


def _conv_record(proxy: Proxy, key: str) -> dict:
    status = httpx.get(proxy.url + "/snapglyph/status", timeout=60).json()
    return next((c for c in status["conversations"] if c["key"] == key), {})


def turns(sim, proxy: Proxy, src: Source, window: int, n_turns: int, breakpoints: bool) -> dict:
    """Send the transcript's prefix over ``window``, then its next ``n_turns`` rounds; per turn after the first:
    the action (the cut kept or a new one) and the two shares."""
    from snapglyph.compaction.keys import conversation_id
    sim.context_window = window
    k0 = src.over("anthropic", window, sim)
    ks = [k for k in src.cuts if k >= k0][:n_turns + 1]
    out: dict = {"turns": [], "cuts": [], "first": k0, "window": window}
    prev = None
    with httpx.Client(timeout=600) as c:
        for t, k in enumerate(ks):
            progress(f"(c) {src.name}, turn {t}/{len(ks) - 1}")
            body = src.body(k, "anthropic", breakpoints=breakpoints)
            n0 = len(sim.log)
            _, status, _ = _post(c, proxy.url, PATHS["anthropic"], json.dumps(body).encode())
            sent = [e for e in sim.log[n0:] if e["kind"] == "ok"]
            rec = _conv_record(proxy, conversation_id("anthropic", body))
            if status != 200 or not sent or rec.get("cut") is None:
                raise SystemExit(f"(c) {src.name} turn {t}: status {status}, {[e['kind'] for e in sim.log[n0:]]}")
            cur = json.loads(sent[-1]["raw"])
            out["cuts"].append(rec["cuts"])
            if prev is not None:
                kept = rec["cuts"] == out["cuts"][-2]
                out["turns"].append((kept, *cache_share(prev, cur)))
            prev = cur
    return out


# -- the section -----------------------------------------------------------------------------------------------------
def _spread(xs: list[float], unit: float = 1.0, fmt: str = "{:.2f}") -> str:
    """``median (quartile 1-quartile 3, n)`` of ``xs`` times ``unit``."""
    ys = sorted(x * unit for x in xs)
    if not ys:
        return "no samples"
    q = statistics.quantiles(ys, n=4) if len(ys) > 1 else [ys[0]] * 3
    return f"{fmt.format(statistics.median(ys))} ({fmt.format(q[0])}-{fmt.format(q[2])}, n={len(ys)})"


def _met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def section_a(a: dict, windows) -> str:
    """The first-retry table and its conversations."""
    rows = ["| door (dialect) | " + " | ".join(f"{w // 1000}k" for w in windows) + " |",
            "|---|" + "---|" * len(windows)]
    for door in DOORS:
        rows.append(f"| {door} | " + " | ".join("{}/{}".format(*a["cells"][(door, w)]) for w in windows) + " |")
    convs = "; ".join(f"{w // 1000}k {d}: {name} {tok:,}" for (d, w), (name, tok) in a["sources"].items())
    ok = sum(v[0] for v in a["cells"].values())
    total = sum(v[1] for v in a["cells"].values())
    fails = "".join(f"\n- {door}, {w // 1000}k, {p}: " + (f"the retry answered {st}" if st else "no retry")
                    + f": {why}" for door, w, p, st, why in a["fails"])
    return ("**(a) Recovery on the first retry** (goal: 100%): " + f"{ok} of {total} retries taken, "
            f"{100 * ok / max(1, total):.0f}%, {_met(ok == total)}. Overflow bodies ({len(a['bodies'])}): "
            + ", ".join(a["bodies"]) + ". Each cell: bodies whose single retry the simulator took.\n\n"
            + "\n".join(rows) + f"\n\nConversations refused (simulator tokens, {RESERVE} output asked): {convs}."
            + fails)


def section_b(rec: dict, convs: dict, pas: dict) -> str:
    """The latency table: recoveries, then pass-throughs."""
    rows = ["| measure | median (IQR, n) | goal | |", "|---|---|---|---|"]
    for d, r in rec.items():
        ok = bool(r["added"]) and statistics.median(r["added"]) < 0.5 and len(r["added"]) == len(r["status"])
        rows.append(f"| recovery of {d} ({convs[d][0]}, {convs[d][2]:,} tokens; retry {convs[d][3]} images), "
                    f"overflow answer to retry sent | {_spread(r['added'], 1000, '{:.0f}')} ms | < 500 ms | "
                    f"{_met(ok)} |")
        if r["cpu"]:
            rows.append(f"| the proxy's CPU time per recovery of {d} (`/proc`) | {_spread(r['cpu'], 1000, '{:.0f}')}"
                        f" ms | | |")
    for name, w in pas.items():
        for what, label in (("first", "first byte at the client"), ("leg", "upstream leg (sent to read whole)")):
            d, p = w["direct"][what], w["proxy"][what]
            added = [b - a for a, b in zip(d, p)]
            rows.append(f"| pass-through {name}, {label}: direct {_spread(d, 1000)} ms, proxied {_spread(p, 1000)} "
                        f"ms; added (median of pairs) | {_spread(added, 1000)} ms | < 2 ms | "
                        f"{_met(statistics.median(added) < 0.002)} |")
    return "**(b) Latency `serve` adds**\n\n" + "\n".join(rows)


def section_c(c: dict) -> str:
    """The cache-share table."""
    rows = ["| conversation | window | turns after the first | cut kept | share up to the last breakpoint, cut "
            "kept: median (IQR, n), min | share of the whole request | goal >= 90% |", "|---|---|---|---|---|---|---|"]
    for name, r in c.items():
        kept = [t for t in r["turns"] if t[0]]
        share = [t[1] for t in kept]
        whole = [t[2] for t in kept]
        low = min(share) if share else 0.0
        rows.append(f"| {name} (first {r['first']} messages, then one round a turn) | {r['window']:,} | "
                    f"{len(r['turns'])} | {len(kept)} (new cuts: {len(r['turns']) - len(kept)}) | "
                    f"{_spread(share, 100, '{:.1f}')} %, min {100 * low:.1f} % | "
                    f"{_spread(whole, 100, '{:.1f}')} % | {_met(bool(share) and low >= 0.9)} |")
    return ("**(c) Prompt-cache share of the next turns** (Anthropic; the Claude Code session shaped as Claude Code "
            "sends it: a breakpoint on the system prompt and on the last message; the aider history with none of "
            "the client's, so the pages' breakpoint is the last)\n\n" + "\n".join(rows))


def write(section: str) -> None:
    """Replace the serve-goals section of bench/RESULTS.md (or append it)."""
    import re
    path = ROOT / "bench" / "RESULTS.md"
    text = path.read_text(encoding="utf-8")
    block = f"<!-- serve-goals:start -->\n{section}\n<!-- serve-goals:end -->"
    if "<!-- serve-goals:start -->" in text:
        text = re.sub(r"<!-- serve-goals:start -->.*?<!-- serve-goals:end -->", lambda m: block, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


# -- running ---------------------------------------------------------------------------------------------------------
def run_b_c(sources: dict, size: dict, only: str) -> tuple[str, str]:
    """Parts (b) and (c): one simulator here, one ``serve`` process in front of it."""
    from snapglyph.testing import Simulator, answer
    sim = Simulator(lambda d, b: answer("ok"), provider="native", context_window=size["tokens"])
    sim.on_request = lambda e: e.__setitem__("answered", time.monotonic())
    sim.start()
    proxy = Proxy(sim)
    out_b = out_c = ""
    try:
        if "b" in only:
            convs = _conversations(sources, size["tokens"], sim)
            rec = recovery(sim, proxy, convs, size["rounds"])
            figures = {}
            for d, (name, raw) in convs.items():
                retry = [e for e in sim.log if e.get("kind") == "ok" and e.get("dialect") == d][-1]
                figures[d] = (name, raw, Simulator().count_request(d, json.loads(raw)).text, len(retry["images"]))
            sim.context_window = 10 ** 9
            small = json.dumps({"model": MODELS["anthropic"], "max_tokens": 64, "messages": [
                {"role": "user", "content": "Summarize the build log. " + "ok " * 600}]}).encode()
            raws = {"small (2 KB, anthropic)": (PATHS["anthropic"], small)}
            raws.update({f"{d} {figures[d][2]:,} tokens ({len(raw) // 1000} KB)": (PATHS[d], raw)
                         for d, (_, raw) in convs.items()})
            out_b = section_b(rec, figures, passthrough(sim, proxy, raws, size["pass_rounds"]))
        if "c" in only:
            res = {f"{name} session" if name == "claude-code" else name:
                   turns(sim, proxy, sources[name], size["cache_windows"][name], size["turns"], name == "claude-code")
                   for name in ("claude-code", "aider")}
            out_c = section_c(res)
    finally:
        proxy.close()
        sim.stop()
    return out_b, out_c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="a tiny run (8k window, 4 bodies, 2 rounds, 3 turns)")
    ap.add_argument("--only", default="abc", help="the parts to run (default abc)")
    ap.add_argument("--rounds", type=int, help="recovery rounds counted (default 10)")
    ap.add_argument("--pass-rounds", type=int, help="pass-through rounds (default 100)")
    ap.add_argument("--turns", type=int, help="turns after the first per conversation in (c) (default 40)")
    ap.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md (all parts)")
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        raise SystemExit(f"{DATA} is absent: the conversations come from ../shared/data")
    if args.write and (args.tiny or set(args.only) != set("abc")):
        raise SystemExit("--write takes a full run of every part (no --tiny, no --only)")
    size = dict(TINY if args.tiny else FULL)
    size.update({k: v for k, v in (("rounds", args.rounds), ("pass_rounds", args.pass_rounds),
                                   ("turns", args.turns)) if v is not None})
    started = time.monotonic()
    sources = _sources()
    parts = []
    if "a" in args.only:
        parts.append(section_a(first_retry(sources, size["windows"], size["bodies"]), size["windows"]))
    if set(args.only) & set("bc"):
        parts += [p for p in run_b_c(sources, size, args.only) if p]
    progress("")
    cmd = "python bench/serve_goals.py" + " --tiny" * args.tiny + " --write" * args.write
    section = ("## snapglyph serve: issue 29's goals (first retry, added latency, prompt-cache share)\n\n"
               f"Generated by `{cmd}` in {time.monotonic() - started:.0f} s (method: the script's docstring). "
               "Conversations are real transcripts from ../shared/data; the provider is snapglyph.testing.Simulator; "
               "(b) and (c) go through `snapglyph serve` in a process of its own.\n\n" + "\n\n".join(parts)
               + "\n\n" + _context())
    print(section)
    if args.write:
        write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
