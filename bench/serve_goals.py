"""Issue 29's measured goals for the doors: first-retry recovery, the latency ``serve`` adds, the prompt-cache share.

Real conversations from ``../shared/data`` (:func:`snapglyph.load`, then
:func:`snapglyph.providers.dialects.to_request`, with the session's one tool list as an agent sends it): the Claude
Code session (tool calls and results) and the aider chat history (1.3 M tokens), each cut at the shortest prefix (no
tool call left open) that the provider simulator (:class:`snapglyph.testing.Simulator`, in this process) counts
over the size wanted. Every request asks for ``RESERVE`` output tokens.

(a) First retry, in process as tests/test_doors_recover.py (which grows synthetic turns): for every overflow body the
    simulator knows but Ollama's (it truncates instead), every dialect of a door and windows 8k / 32k / 128k / 200k,
    the conversation just over the window is refused with that body, the door's rule makes the retry (``serve``:
    ``Planner.recover``; the adapters: ``ConversationCompactor.learn`` from a configured budget far above the
    prompt, then ``compact``) and the simulator must take it.
(b) Latency, through ``snapglyph serve`` started as a user starts it. Recovery of a 200,000-token conversation
    (Anthropic: the Claude Code session; OpenAI chat: aider) at a 200,000 window: from the simulator's overflow
    answer written (its ``on_request`` hook) to the retry read whole (the log's ``arrived``), a new conversation
    each round (``x-snapglyph-conversation``), one run of each first, not counted. Pass-through of a 2 KB request
    and of the same conversations (window raised), direct and proxied alternating within each round: the first
    byte at the client, and the upstream leg (client send to ``arrived``).
(c) Cache share, through ``serve``: a conversation refused once, then the transcript's next rounds one a turn; for
    each turn that kept the previous turn's cut (``/snapglyph/status``: no new cut), :func:`cache_share` of the
    requests as the upstream received them.

``--write`` puts the section into bench/RESULTS.md between ``<!-- serve-goals:start -->`` and
``<!-- serve-goals:end -->`` with the commit, date, machine and load:
``python bench/serve_goals.py --write`` (about 4 minutes on 2 cores); ``--tiny`` runs it all at a tiny size.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from provenance import write_section
from serve import _context, _cpu, _start_proxy

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
SOURCES = {"claude-code": DATA / "claude-code-spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
           "aider": DATA / "aider-chat-history" / "chat-history.md"}
MODELS = {"openai": "gpt-5.4", "responses": "gpt-5.4", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-pro"}
PATHS = {"openai": "/v1/chat/completions", "responses": "/v1/responses", "anthropic": "/v1/messages"}
HEADERS = {"x-api-key": "k", "authorization": "Bearer k", "anthropic-version": "2023-06-01",
           "content-type": "application/json"}
RESERVE = 4096
CC = {"type": "ephemeral"}
FULL = {"windows": (8_000, 32_000, 128_000, 200_000), "bodies": None, "tokens": 200_000, "rounds": 10,
        "pass_rounds": 100, "turns": 40, "cache_windows": {"claude-code": 128_000, "aider": 200_000}}
TINY = {"windows": (8_000,), "bodies": ("anthropic", "openai", "openai-responses", "bedrock"), "tokens": 12_000,
        "rounds": 2, "pass_rounds": 6, "turns": 3, "cache_windows": {"claude-code": 8_000, "aider": 8_000}}
ADAPTERS = {  # door -> (dialect, the adapter's recall setting)
    "LangChain, pydantic-ai (openai, recall tool)": ("openai", True),
    "LiteLLM (openai, recall tool)": ("openai", True),    # completion_with_recovery answers recall itself
    "OpenAI Agents SDK (responses, recall tool)": ("responses", True)}


def doors() -> dict[str, tuple[str, object]]:
    """door -> (dialect, ``"serve"`` for its planner, else the adapter's recall setting): ``serve`` in every dialect
    it routes (:data:`snapglyph.serve.rewrite.ROUTES`, and Gemini's model paths), then :data:`ADAPTERS`."""
    from snapglyph.serve.rewrite import ROUTES, route
    dialects = sorted(set(ROUTES.values()) | {(route("/v1beta/models/m:generateContent") or ("openai",))[0]})
    return {f"serve ({d})": (d, "serve") for d in dialects} | ADAPTERS


def progress(msg: str) -> None:
    """One status line on a terminal (rewritten in place); nothing when stderr is not a terminal."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + msg[:150])
        sys.stderr.flush()


# -- real conversations ----------------------------------------------------------------------------------------------
class Source:
    """A transcript's messages and the requests of their prefixes; :attr:`cuts`: the prefix lengths that leave no
    tool call open."""

    def __init__(self, name: str) -> None:
        import snapglyph
        self.name = name
        self.tr = snapglyph.load(SOURCES[name])
        ms = self.tr.messages
        self.cuts = [k for k in range(2, len(ms) + 1)
                     if ms[k - 1].role in ("user", "tool") and (k == len(ms) or ms[k].role == "assistant")]
        self._tools: dict[str, list] = {}

    def body(self, k: int, dialect: str, *, breakpoints: bool = False) -> dict:
        """The request of the first ``k`` messages; ``breakpoints``: shaped as Claude Code sends them (the system
        prompt as a block with a ``cache_control``, and one on the last block of the last message)."""
        from snapglyph.providers.dialects import normalize, to_request
        if dialect not in self._tools:                   # the definitions of every tool the session uses
            full, _ = normalize(self.tr.messages, dialect=dialect)
            self._tools[dialect] = to_request(full, dialect=dialect, model="m", max_tokens=1,
                                              tools=self.tr.tools).get("tools") or []
        msgs, _ = normalize(self.tr.messages[:k], dialect=dialect)
        body = to_request(msgs, dialect=dialect, model=MODELS[dialect], max_tokens=RESERVE, tools=self.tr.tools)
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

    def over(self, dialect: str, tokens: int, sim) -> int | None:
        """The shortest prefix whose request ``sim`` counts over ``tokens``; ``None`` when the whole is not."""
        cuts = self.cuts
        if sim.count_request(dialect, self.body(cuts[-1], dialect)).text <= tokens:
            return None
        lo, hi = 0, len(cuts) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if sim.count_request(dialect, self.body(cuts[mid], dialect)).text > tokens else \
                (mid + 1, hi)
        return cuts[lo]


# -- (a) first retry -------------------------------------------------------------------------------------------------
def _retry(door: str, body: dict, status: int, err, state: Path, n: int) -> dict:
    """The retry ``door``'s rule makes after ``err`` (an adapter is given it as the OpenAI SDK raises it, an
    ``APIStatusError``); raises where it makes none."""
    from snapglyph.integrations._common import ConversationCompactor
    from snapglyph.providers.overflow import detect
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.planner import Planner
    from snapglyph.serve.rewrite import pick_profile
    from snapglyph.serve.state import StateDir
    dialect, how = doors()[door]
    profile = pick_profile(MODELS[dialect], dialect)
    if how == "serve":
        out = Planner(StateDir(state), ServeConfig("http://127.0.0.1:9")).recover(
            f"{n:016x}", dialect, body, profile, detect(status, err), model=MODELS[dialect])
        if out.error:
            raise RuntimeError(out.error)
        return json.loads(out.data)
    import openai
    exc = openai.APIStatusError(f"Error code: {status}", body=err, response=httpx.Response(
        status, json=err, request=httpx.Request("POST", "http://127.0.0.1:9/v1")))
    conv = ConversationCompactor(None, None, budget=10_000_000, profile=profile, recall=how)
    sent, res = conv.compact(body, dialect)
    if res is not None or not conv.learn(exc, sent):
        raise RuntimeError("the adapter's rule did not take the error as an overflow")
    return conv.compact(body, dialect)[0]


def _attempt(door: str, provider: str, body: dict, window: int, state: Path, n: int) -> str:
    """One case: empty when the simulator took the retry, else why not."""
    from snapglyph.errors import SnapglyphError
    from snapglyph.testing import Simulator
    dialect = doors()[door][0]
    sim = Simulator(provider=provider, context_window=window)
    try:
        retry = _retry(door, body, *sim.handle(dialect, body), state, n)
    except (SnapglyphError, RuntimeError) as e:          # a failure of the rule is a result, not a crash
        return f"no retry: {type(e).__name__}: {str(e)[:150]}"
    got, _ = sim.handle(dialect, retry)
    return "" if got == 200 else (f"the retry overflowed again ({sim.log[-1].get('prompt_tokens', 0):,} prompt "
                                  f"tokens + {RESERVE:,} output asked)")


def first_retry(sources: dict, windows, bodies) -> dict:
    """Per door and window ``(retries taken, cases)``; the failures grouped by door, window and cause."""
    from snapglyph.testing import PROVIDERS, Simulator
    bodies = [p for p in (bodies or PROVIDERS) if p != "ollama"]
    out: dict = {"bodies": bodies, "cells": {}, "fails": {}, "sources": {}, "doors": list(doors())}
    n = 0
    with tempfile.TemporaryDirectory() as state:
        for window in windows:
            sim, grown = Simulator(context_window=window), {}
            for d in dict.fromkeys(d for d, _ in doors().values()):   # Claude Code where it passes, else aider
                name, k = next((n, k) for n, k in ((n, sources[n].over(d, window, sim)) for n in SOURCES) if k)
                less = max([c for c in sources[name].cuts if c < k] or [k])
                grown[d] = (name, k, sources[name].body(k, d))
                out["sources"][(d, window)] = (name, k, sim.count_request(d, grown[d][2]).text,
                                               sim.count_request(d, sources[name].body(less, d)).text)
            for door, (dialect, _) in doors().items():
                ok = 0
                for provider in bodies:
                    n += 1
                    progress(f"(a) {door}, {window // 1000}k, {provider}")
                    # a state folder per window: the windows serve learns per upstream and model stay with theirs
                    why = _attempt(door, provider, grown[dialect][2], window, Path(state) / str(window), n)
                    ok += not why
                    if why:
                        out["fails"].setdefault((door, window, re.sub(r"\d[\d,]*\d|\d", "N", why)), []).append(provider)
                out["cells"][(door, window)] = (ok, len(bodies))
    return out


# -- (b) latency -----------------------------------------------------------------------------------------------------
class Proxy:
    """``snapglyph serve`` in a process of its own in front of ``sim`` (its log read away: a full pipe stops it)."""

    def __init__(self, sim) -> None:
        self.state = tempfile.TemporaryDirectory()
        self.proc, self.url = _start_proxy(sim.base_url, self.state.name)
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def record(self, key: str) -> dict:
        """The conversation's figures on ``/snapglyph/status`` (empty when it has none)."""
        status = httpx.get(self.url + "/snapglyph/status", timeout=60).json()
        return next((c for c in status["conversations"] if c["key"] == key), {})

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


def _model_of_round(raw: bytes, dialect: str, r: int) -> bytes:
    """``raw`` with its model named for round ``r`` (``gpt-5.4-r3``: the same profile): serve learns the window of
    an upstream and model from an overflow and compacts a new conversation to it before it is sent, so each round
    asks for a model it has not learned yet, or no round after the first would overflow."""
    model = json.dumps(MODELS[dialect])
    return raw.replace(f'"model": {model}'.encode(), f'"model": {json.dumps(f"{MODELS[dialect]}-r{r}")}'.encode(), 1)


def recovery(sim, proxy: Proxy, convs: dict, rounds: int) -> dict:
    """Per dialect: seconds from the overflow answer to the retry read whole (the first run of each not counted),
    the proxy's CPU seconds per recovery, and each counted round's ``(status, kinds the simulator logged)``."""
    out: dict = {d: {"added": [], "cpu": [], "status": []} for d in convs}
    with httpx.Client(timeout=600) as c:
        for r in range(rounds + 1):
            for d, (_, raw) in (convs.items() if r % 2 == 0 else reversed(convs.items())):
                progress(f"(b) recovery, round {r}/{rounds}, {d}")
                n0, cpu0 = len(sim.log), _cpu(proxy.proc.pid)
                _, status, _ = _post(c, proxy.url, PATHS[d], _model_of_round(raw, d, r), caller=f"latency-{d}-{r}")
                got = sim.log[n0:]
                if r == 0:
                    continue                                   # warm-up
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
def prompt_blocks(body: dict) -> list[tuple[bytes, bool]]:
    """An Anthropic request in prompt order (tools, system, messages), one ``(JSON of the block and its place,
    whether it carries a cache_control)`` per block; the ``cache_control`` itself is left out (a marker, not
    prompt)."""
    def one(where, block) -> tuple[bytes, bool]:
        marked = isinstance(block, dict) and "cache_control" in block
        b = {k: v for k, v in block.items() if k != "cache_control"} if marked else block
        return json.dumps([where, b], sort_keys=True, ensure_ascii=False).encode(), marked
    system = body.get("system") or []
    out = [one("tools", t) for t in body.get("tools") or []]
    out += [one("system", b) for b in ([{"type": "text", "text": system}] if isinstance(system, str) else system)]
    for i, m in enumerate(body.get("messages") or []):
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        out += [one([i, m["role"]], b) for b in content]
    return out


def cache_share(prev: dict, cur: dict) -> tuple[float, float]:
    """``(share of the bytes up to the last breakpoint, share of all bytes)`` of ``cur`` unchanged from ``prev``:
    whole blocks (:func:`prompt_blocks`) counted from the start up to the first that differs.

    Examples
    --------
    >>> page = {"type": "image", "cache_control": CC, "source": {"data": "A" * 80}}
    >>> prev = {"messages": [{"role": "user", "content": [page]}, {"role": "user", "content": "old"}]}
    >>> cur = {"messages": prev["messages"] + [{"role": "assistant", "content": "new"}]}
    >>> [round(x, 2) for x in cache_share(prev, cur)]           # the pages' prefix is the same; the new turn is not
    [1.0, 0.78]
    """
    a, b = prompt_blocks(prev), prompt_blocks(cur)
    same = 0
    while same < min(len(a), len(b)) and a[same][0] == b[same][0]:
        same += 1
    last = max((i for i, (_, bp) in enumerate(b) if bp), default=-1)
    size = [len(x) for x, _ in b]
    upto = sum(size[:last + 1])
    return (sum(size[:min(same, last + 1)]) / upto if upto else 0.0), sum(size[:same]) / sum(size)


def turns(sim, proxy: Proxy, src: Source, window: int, n_turns: int, breakpoints: bool) -> dict:
    """Send the transcript's prefix over ``window``, then its next ``n_turns`` rounds one a turn; per turn after
    the first ``(cut kept, share up to the last breakpoint, share of all)``."""
    from snapglyph.compaction.keys import conversation_id
    sim.context_window = window
    k0 = src.over("anthropic", window, sim)
    out: dict = {"turns": [], "cuts": [], "first": k0, "window": window}
    prev = None
    with httpx.Client(timeout=600) as c:
        for t, k in enumerate([k for k in src.cuts if k >= k0][:n_turns + 1]):
            progress(f"(c) {src.name}, turn {t}/{n_turns}")
            body = src.body(k, "anthropic", breakpoints=breakpoints)
            n0 = len(sim.log)
            _, status, _ = _post(c, proxy.url, PATHS["anthropic"], json.dumps(body).encode())
            sent = [e for e in sim.log[n0:] if e["kind"] == "ok"]
            rec = proxy.record(conversation_id("anthropic", body))
            if status != 200 or not sent or rec.get("cut") is None:
                raise SystemExit(f"(c) {src.name} turn {t}: status {status}, {[e['kind'] for e in sim.log[n0:]]}")
            cur = json.loads(sent[-1]["raw"])
            out["cuts"].append(rec["cuts"])
            if prev is not None:
                out["turns"].append((rec["cuts"] == out["cuts"][-2], *cache_share(prev, cur)))
            prev = cur
    return out


# -- the section -----------------------------------------------------------------------------------------------------
def _spread(xs: list[float], unit: float = 1.0, fmt: str = "{:.2f}") -> str:
    """``median (quartile 1-quartile 3, n=...)`` of ``xs`` times ``unit``."""
    ys = sorted(x * unit for x in xs)
    if not ys:
        return "no samples"
    q = statistics.quantiles(ys, n=4) if len(ys) > 1 else [ys[0]] * 3
    return f"{fmt.format(statistics.median(ys))} ({fmt.format(q[0])}-{fmt.format(q[2])}, n={len(ys)})"


def _met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def section_a(a: dict, windows) -> str:
    """The first-retry table, the conversations refused and the failures."""
    rows = ["| door (dialect) | " + " | ".join(f"{w // 1000}k" for w in windows) + " |",
            "|---|" + "---|" * len(windows)]
    rows += [f"| {door} | " + " | ".join("{}/{}".format(*a["cells"][(door, w)]) for w in windows) + " |"
             for door in a["doors"]]
    convs = "; ".join(f"{w // 1000}k {d}: {name}, first {k} messages, {tok:,} tokens ({tok / w:.2f}x the window; "
                      f"a round fewer: {less:,})" for (d, w), (name, k, tok, less) in a["sources"].items())
    ok, total = (sum(v[i] for v in a["cells"].values()) for i in (0, 1))
    fails = "".join(f"\n- {door}, {w // 1000}k, {len(ps)} bodies ({', '.join(ps)}): {why}"
                    for (door, w, why), ps in a["fails"].items())
    return (f"**(a) Recovery on the first retry** (goal: 100%): {ok} of {total} retries taken, "
            f"{100 * ok / max(1, total):.1f}%, {_met(ok == total)}. Overflow bodies ({len(a['bodies'])}): "
            + ", ".join(a["bodies"]) + ". A cell: the bodies whose one retry the simulator took.\n\n"
            + "\n".join(rows) + f"\n\nConversations refused (simulator tokens; {RESERVE:,} output asked): {convs}."
            + ("\n\nNot taken (N: a number that differs by case):" + fails if fails else ""))


def section_b(rec: dict, convs: dict, pas: dict) -> str:
    """The latency table: recoveries, then pass-throughs."""
    rows = ["| measure | median (IQR, n) | goal | |", "|---|---|---|---|"]
    for d, r in rec.items():
        ok = bool(r["added"]) and statistics.median(r["added"]) < 0.5 and len(r["added"]) == len(r["status"])
        rows.append(f"| recovery of {d} ({convs[d][0]}, {convs[d][2]:,} tokens; the retry {convs[d][3]} pages), "
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
    rows = [("| conversation | window | turns after the first | cut kept | share up to the last breakpoint, cut "
             "kept: median (IQR, n), min | share of the whole request | goal >= 90% |"),
            "|---|---|---|---|---|---|---|"]
    for name, r in c.items():
        kept = [t for t in r["turns"] if t[0]]
        share, whole = [t[1] for t in kept], [t[2] for t in kept]
        low = min(share) if share else 0.0
        cuts = ", ".join(f"{100 * t[1]:.1f} %" for t in r["turns"] if not t[0])
        rows.append(f"| {name} (first {r['first']} messages, then a round a turn) | {r['window']:,} | "
                    f"{len(r['turns'])} | {len(kept)} (a new cut: {len(r['turns']) - len(kept)}, share there "
                    f"{cuts or '-'}) | {_spread(share, 100, '{:.1f}')} %, min {100 * low:.1f} % | "
                    f"{_spread(whole, 100, '{:.1f}')} % | {_met(bool(share) and low >= 0.9)} |")
    return ("**(c) Prompt-cache share of the next turns** (Anthropic; the Claude Code session shaped as Claude Code "
            "sends it: a breakpoint on the system prompt and on the last message; the aider history with none of "
            "the client's, so the pages' breakpoint is the last)\n\n" + "\n".join(rows))


def write(section: str) -> None:
    """Replace the serve-goals section of bench/RESULTS.md (or append it)."""
    write_section("serve-goals", section)

# -- running ---------------------------------------------------------------------------------------------------------
def run_b_c(sources: dict, size: dict, only: str) -> list[str]:
    """Parts (b) and (c): one simulator here, one ``serve`` process in front of it."""
    from snapglyph.testing import Simulator, answer
    sim = Simulator(lambda d, b: answer("ok"), provider="native", context_window=size["tokens"])
    sim.on_request = lambda e: e.__setitem__("answered", time.monotonic())
    proxy = Proxy(sim.start())
    out = []
    try:
        if "b" in only:
            convs = {d: (name, json.dumps(sources[name].body(sources[name].over(d, size["tokens"], sim), d)).encode())
                     for d, name in (("anthropic", "claude-code"), ("openai", "aider"))}
            rec = recovery(sim, proxy, convs, size["rounds"])
            figures = {d: (name, raw, sim.count_request(d, json.loads(raw)).text,
                           len([e for e in sim.log if e.get("kind") == "ok" and e["dialect"] == d][-1]["images"]))
                       for d, (name, raw) in convs.items()}
            sim.context_window = 10 ** 9
            small = json.dumps({"model": MODELS["anthropic"], "max_tokens": 64, "messages": [
                {"role": "user", "content": "Summarize the build log. " + "ok " * 600}]}).encode()
            raws = {"small (2 KB, anthropic)": (PATHS["anthropic"], small)}
            raws.update({f"{d} {figures[d][2]:,} tokens ({len(raw) // 1000} KB)": (PATHS[d], raw)
                         for d, (_, raw) in convs.items()})
            proxy.close()
            proxy = Proxy(sim)          # a state folder that learned no window: pass-through is measured as it comes
            out.append(section_b(rec, figures, passthrough(sim, proxy, raws, size["pass_rounds"])))
            proxy.close()
            proxy = Proxy(sim)
        if "c" in only:
            out.append(section_c({f"{name} session" if name == "claude-code" else name: turns(
                sim, proxy, sources[name], size["cache_windows"][name], size["turns"], name == "claude-code")
                for name in ("claude-code", "aider")}))
    finally:
        proxy.close()
        sim.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="a tiny run (8k window, 4 bodies, 2 rounds, 3 turns)")
    ap.add_argument("--only", default="abc", help="the parts to run (default abc)")
    ap.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md (all parts)")
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        raise SystemExit(f"{DATA} is absent: the conversations come from ../shared/data")
    if args.write and (args.tiny or set(args.only) != set("abc")):
        raise SystemExit("--write takes a full run of every part (no --tiny, no --only)")
    size = TINY if args.tiny else FULL
    started = time.monotonic()
    sources = {name: Source(name) for name in SOURCES}
    parts = [section_a(first_retry(sources, size["windows"], size["bodies"]), size["windows"])] if "a" in args.only \
        else []
    if set(args.only) & set("bc"):
        parts += run_b_c(sources, size, args.only)
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
