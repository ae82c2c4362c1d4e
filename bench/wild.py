"""Issue 35's goal table: every behavior of the wild recovered on the first retry through every door.

Method: for each behavior (a simulator setting, :mod:`snapglyph.testing`) and each door (``snapglyph serve`` over
HTTP in each dialect, driven by the official SDK where installed, else httpx; each adapter with its framework's own
classes), one client request is sent to a fresh simulator (and a fresh ``serve`` or adapter state folder), and the
cell is read from the simulator's log: the upstream requests that client request made (``kinds``, in order) and what
the client got. A cell says ``recovered`` where the client got an answer with text and the upstream saw exactly the
requests of one recovery (the refused request, then the retry; for a refusal or an empty answer after a compaction:
the overflow, the compacted request refused, the one text-only retry), ``ended`` where the behavior must end with an
error and it did with the one the issue names (the output reserve alone: the provider's 400 relayed, one upstream
request, and through ``serve`` its log line naming ``max_tokens``; a refused text-only retry: the refusal as it
came, no third request; a storm: ``CompactionStormError``'s line), and for a refused or empty compaction only where
the compacted request carried page images and the retry none, ``FAILED`` with what happened otherwise, ``n/a`` with the reason
where a door cannot meet the behavior.

Goal (issue 35): every behavior recovered on the first retry through every door; at most one text-only retry per
refused compaction.

``python bench/wild.py`` prints the section; ``--write`` puts it into bench/RESULTS.md between
``<!-- wild:start -->`` and ``<!-- wild:end -->``; ``--tiny`` a quick subset (``serve`` in two dialects, two
behaviors and the LangChain adapter); ``--json`` prints the cells as JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import commit_label, write_section  # noqa: E402
from wild_doors import (DIALECT, MODELS, RESERVE, SERVE_DOORS, WINDOW, Conv, Ended, _MEMO,  # noqa: E402
                        doors, grown, missing)

ROOT = Path(__file__).resolve().parent.parent

# -- behaviors -------------------------------------------------------------------------------------------------------
EMPTY = {"anthropic": {"id": "msg_empty", "type": "message", "role": "assistant", "model": MODELS["anthropic"],
                       "content": [], "stop_reason": "end_turn", "stop_sequence": None,
                       "usage": {"input_tokens": 4000, "output_tokens": 0}},
         "openai": {"id": "chatcmpl-empty", "object": "chat.completion", "created": 0, "model": MODELS["openai"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "", "refusal": None},
                                 "logprobs": None, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 4000, "completion_tokens": 0, "total_tokens": 4000}},
         "responses": {"id": "resp_empty", "object": "response", "created_at": 0, "status": "completed",
                       "model": MODELS["responses"], "output": [], "parallel_tool_calls": True, "tool_choice": "auto",
                       "tools": [], "usage": {"input_tokens": 4000, "output_tokens": 0, "total_tokens": 4000,
                                              "input_tokens_details": {"cached_tokens": 0},
                                              "output_tokens_details": {"reasoning_tokens": 0}}},
         "gemini": {"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 4000, "candidatesTokenCount": 0,
                                      "totalTokenCount": 4000}, "modelVersion": MODELS["gemini"]}}
"""An answer with no text and no tool call, per dialect (HTTP 200)."""


def _empty_after_overflow(sim, dialect):
    """The simulator's overflow for the client's request, then an empty answer for the compacted one (injected:
    the simulator's scripted model always says something)."""
    from snapglyph.testing.provider_errors import overflow_body
    sim.inject(*overflow_body("openai", prompt=WINDOW + 600, output=RESERVE, window=WINDOW))
    sim.inject(200, EMPTY[dialect])


@dataclass
class Behavior:
    """One behavior of the wild: the simulator's settings, the conversation, what the door must do."""
    name: str
    provider: str = "openai"
    window: int = WINDOW
    setup: Callable[[Any, str], None] = lambda sim, dialect: None
    conv: Callable[[], Conv] = lambda: Conv(grown(WINDOW))
    expect: tuple = ("overflow", "ok")             # the upstream kinds of a recovery on the first retry
    ends: str = ""                                 # "reserve" / "storm": must end with that error
    script: Any = None
    serve_kw: dict = field(default_factory=dict)
    only: tuple = ()                               # doors that can meet it (others n/a)
    why_na: str = ""


def _refuse(sim, dialect):
    sim.refuse_images = True


def _after_200(sim, dialect):
    sim.overflow_after_200 = True


def _cap3(sim, dialect):
    sim.max_images = 3


def _other_wording(sim, dialect):
    """The image-count wording the simulator does not use for ``dialect``, injected; the cap then holds."""
    from snapglyph.testing.provider_errors import image_count_body
    sim.max_images = 3
    _, body = image_count_body("openai" if dialect == "anthropic" else "anthropic", 5, 3)
    sim.inject(400, body)


def _body_cap(sim, dialect):
    sim.max_body_bytes = 40_000


def _region(sim, dialect):
    sim.model_windows = {MODELS[dialect]: 6_000}


def behaviors() -> list[Behavior]:
    """Every behavior of issue 35, in the table's order."""
    stream_only = SERVE_DOORS
    gem = ("serve gemini",)
    return [
        Behavior("refusal after a compaction", setup=_refuse, expect=("overflow", "refused", "ok")),
        Behavior("refusal after a compaction, streamed", setup=_refuse, conv=lambda: Conv(grown(WINDOW), stream=True),
                 expect=("overflow", "refused", "ok"), only=stream_only,
                 why_na="the adapter is driven without streaming here"),
        Behavior("refusal of the text-only retry too (the client's own image)", setup=_refuse,
                 conv=lambda: Conv(grown(WINDOW), images=1), expect=("overflow", "refused", "refused"),
                 ends="once"),
        Behavior("empty answer after a compaction", setup=_empty_after_overflow,
                 expect=("injected", "injected", "ok")),
        Behavior("overflow as the first event after a 200", provider="sglang", setup=_after_200,
                 conv=lambda: Conv(grown(WINDOW), stream=True), expect=("overflow_after_200", "ok"),
                 only=stream_only, why_na="the adapter is driven without streaming here"),
        Behavior("sglang 'The input (N tokens) is longer'", provider="sglang"),
        Behavior("vLLM 'at least N input tokens'", provider="vllm-at-least"),
        Behavior("Ollama 500 'no user query found'", provider="ollama-no-user"),
        Behavior("OpenRouter 'tool input'", provider="openrouter"),
        Behavior("Gemini 'invalid argument' at the wall (window known)", provider="gemini-invalid-argument",
                 serve_kw={"window": WINDOW}, only=gem, why_na="a Gemini body: only the Gemini door meets it"),
        Behavior("image-count cap, the dialect's wording", window=100_000, setup=_cap3,
                 conv=lambda: Conv([("user", "five images")], images=5), expect=("limit", "ok")),
        Behavior("image-count cap, the other wording", window=100_000, setup=_other_wording,
                 conv=lambda: Conv([("user", "five images")], images=5), expect=("injected", "ok")),
        Behavior("413 body cap (40,000 bytes)", provider="native", window=200_000, setup=_body_cap,
                 conv=lambda: Conv(grown(20_000, 700)), expect=("body_cap", "ok")),
        Behavior("a region's smaller window (6,000 of 200,000)", provider="native", window=200_000, setup=_region,
                 conv=lambda: Conv(grown(6_000))),
        Behavior("output reserve alone over the window", window=32_768,
                 conv=lambda: Conv([("user", "hi " * 1200)], max_out=32_000), expect=("overflow",), ends="reserve"),
        Behavior("a storm (each turn a new cut)", window=6_000,
                 conv=lambda: Conv(grown(6_000), rounds=12), expect=(), ends="storm"),
    ]


# -- one cell --------------------------------------------------------------------------------------------------------
def cell(b: Behavior, door: str, run: Callable) -> dict:
    """Run behavior ``b`` through ``door``; the cell: ``verdict`` (recovered / ended / FAILED / n/a), ``how``."""
    from snapglyph.testing import Simulator
    if b.only and door not in b.only:
        return {"verdict": "n/a", "how": b.why_na, "kinds": []}
    gone = missing(door)
    if gone:
        return {"verdict": "n/a", "how": f"{gone} not installed", "kinds": []}
    dialect = DIALECT[door]
    script = b.script or (lambda d, body: __import__("snapglyph.testing", fromlist=["answer"]).answer("recovered"))
    c = b.conv()
    _MEMO.clear()
    with tempfile.TemporaryDirectory() as tmp, Simulator(script, provider=b.provider,
                                                         context_window=b.window) as sim:
        b.setup(sim, dialect)
        t0, lines, log = time.monotonic(), _ServeLines(), logging.getLogger("snapglyph.serve")
        level = log.level
        log.setLevel(logging.INFO)
        log.addHandler(lines)
        try:
            got = run(sim, b, c, Path(tmp) / "state")
        except Exception as e:                                            # noqa: BLE001 - the cell says what
            got = [Ended(None, f"{type(e).__name__}: {e}")]
        finally:
            log.removeHandler(lines)
            log.setLevel(level)
        kinds = [e["kind"] for e in sim.log]
        pages = [b"iVBORw0KGgo" in bytes(e.get("raw") or b"") for e in sim.log]   # a PNG's base64 start
    out = judge(b, got, kinds, pages)
    if door in SERVE_DOORS and b.ends == "reserve" and out["verdict"] == "ended" and not any(
            "the output reserve alone overflows: max_tokens" in x for x in lines.got):
        out = {"verdict": "FAILED", "how": out["how"] + ", but no log line naming max_tokens"}
    return {**out, "kinds": kinds, "seconds": round(time.monotonic() - t0, 2)}


class _ServeLines(logging.Handler):
    """The messages ``serve`` logs during one cell."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.got: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.got.append(record.getMessage())


def judge(b: Behavior, got: list, kinds: list, pages: list | None = None) -> dict:
    """The verdict of a cell from what the client got, the upstream kinds and whether each upstream request
    carried a PNG (``pages``: a refused compaction must be retried without its page images)."""
    from snapglyph._config import STORM_CUTS
    last = got[-1] if got else Ended(None, "no request made")
    up = f"{len(kinds)} upstream ({', '.join(kinds) or '-'})"
    if b.ends == "reserve":
        ok = (isinstance(last, Ended) and last.status == 400 and len(kinds) == 1
              and "maximum context length" in last.text)                 # the simulator's (OpenAI's) body
        return {"verdict": "ended" if ok else "FAILED",
                "how": f"the provider's 400 relayed, {up}" if ok else f"{_said(last)}; {up}"}
    if b.ends == "once":                          # never a second text-only retry: the refusal ends it
        ok = tuple(kinds) == b.expect and not (isinstance(last, str) and last)
        return {"verdict": "ended" if ok else "FAILED",
                "how": f"one text-only retry, then {_said(last)}; {up}" if ok else f"{_said(last)}; {up}"}
    if b.ends == "storm":
        ok = isinstance(last, Ended) and "cannot be kept under the window" in last.text
        return {"verdict": "ended" if ok else "FAILED",
                "how": (f"storm error at client request {len(got)} (the rule: {STORM_CUTS} new cuts), {up}" if ok else f"{len(got)} requests, last: {_said(last)}; {up}")}
    text_only = len(b.expect) == 3 and not b.ends               # a refusal or an empty answer after a compaction
    if text_only and pages and not (pages[1] and not pages[-1]):
        return {"verdict": "FAILED", "how": f"page images in the upstream requests {pages}; {up}"}
    if isinstance(last, str) and last and tuple(kinds) == b.expect:
        return {"verdict": "recovered", "how": up + (", the compacted request with pages, the retry without"
                                                     if text_only else "")}
    return {"verdict": "FAILED", "how": f"{_said(last)}; {up}"}


def _said(x) -> str:
    if isinstance(x, Ended):
        return f"error {x.status}: {' '.join(x.text.split())[:160]}"
    return f"answer {x[:40]!r}" if x else "an empty answer or a refusal relayed"


# -- the run and the section -----------------------------------------------------------------------------------------
TINY = (("refusal after a compaction", "sglang 'The input (N tokens) is longer'"),
        ("serve anthropic", "serve openai chat", "LangChain"))


def run(tiny: bool = False, only_doors: tuple = (), only_behaviors: tuple = ()) -> dict:
    """Every cell: ``{"cells": {(behavior, door): cell}, "seconds": ...}``."""
    bs = [b for b in behaviors() if (not tiny or b.name in TINY[0]) and
          (not only_behaviors or any(s in b.name for s in only_behaviors))]
    ds = {n: f for n, f in doors().items() if (not tiny or n in TINY[1]) and
          (not only_doors or n in only_doors)}
    t0, cells = time.monotonic(), {}
    for b in bs:
        for name, f in ds.items():
            cells[(b.name, name)] = cell(b, name, f)
    return {"cells": cells, "behaviors": [b.name for b in bs], "doors": list(ds),
            "seconds": time.monotonic() - t0}


def section(res: dict, tiny: bool) -> str:
    """The RESULTS.md section: the matrix and its reading."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    cells = res["cells"].values()
    count = {v: sum(1 for c in cells if c["verdict"] == v) for v in ("recovered", "ended", "FAILED", "n/a")}
    short = {"recovered": "recovered", "ended": "ended", "FAILED": "**FAILED**", "n/a": "n/a"}
    rows = ["| behavior | " + " | ".join(res["doors"]) + " |", "| --- |" + " --- |" * len(res["doors"])]
    notes, why = [], {}
    for b in res["behaviors"]:
        row = []
        for d in res["doors"]:
            c = res["cells"][(b, d)]
            if c["verdict"] == "n/a":
                row.append(f"n/a [{why.setdefault(c['how'], len(why) + 1)}]")
                continue
            row.append(f"{short[c['verdict']]} ({len(c['kinds'])}: {', '.join(c['kinds'])})")
            if c["verdict"] == "FAILED":
                notes.append(f"- {b} @ {d}: {c['verdict']}, {c['how']}".replace("|", "/"))
        rows.append(f"| {b} | " + " | ".join(row) + " |")
    reasons = [f"[{n}] {w}" for w, n in why.items()]
    met = count["FAILED"] == 0 and _text_retries(res) <= 1
    return "\n".join([
        "## Recovery in the wild: issue 35's goal table", "",
        f"Generated by `python bench/wild.py{' --tiny' if tiny else ''}` at {commit_label()}, "
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()} {os.cpu_count()} cores, load {load}; "
        f"{res['seconds']:.0f} s (method: the script's docstring). Each cell: the verdict, then the number and kinds of "
        f"the upstream requests the client request made, from the simulator's log (a storm: over all its client "
        f"requests; `injected`: an answer the bench queued, the other image-count wording or the empty answer).",
        "", *rows, "", *(["n/a: " + "; ".join(reasons) + ".", ""] if reasons else []),
        *(["What the failed cells ended with (the client's error or answer, the upstream requests):",
           "", *notes, ""] if notes else []),
        f"Text-only retries after a refused or empty compacted answer: at most {_text_retries(res)} per client "
        f"request (goal: at most 1).", "",
        f"Cells: {count['recovered']} recovered on the first retry, {count['ended']} ended with the error the issue "
        f"names, {count['FAILED']} failed, {count['n/a']} n/a. Goal (every behavior recovered on the first retry "
        f"through every door, at most one text-only retry per refused compaction): {'met' if met else 'missed'}.",
    ])


def _text_retries(res: dict) -> int:
    """The most upstream requests any refusal or empty-answer cell made after its compacted request."""
    return max((len(c["kinds"]) - 2 for (b, _), c in res["cells"].items()
                if b.startswith(("refusal", "empty")) and c["kinds"]), default=0)


def write(text: str) -> None:
    """Put ``text`` into bench/RESULTS.md between the wild markers."""
    write_section("wild", text)

def main(argv: list[str] | None = None) -> int:
    """The command line (``-h``)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="a quick subset (2 behaviors x 3 doors)")
    ap.add_argument("--write", action="store_true", help="write the section into bench/RESULTS.md")
    ap.add_argument("--json", action="store_true", help="print the cells as JSON")
    ap.add_argument("--door", action="append", default=[], help="only this door (repeatable)")
    ap.add_argument("--behavior", action="append", default=[], help="only behaviors naming this (repeatable)")
    args = ap.parse_args(argv)
    res = run(args.tiny, tuple(args.door), tuple(args.behavior))
    if args.json:
        print(json.dumps({f"{b} @ {d}": c for (b, d), c in res["cells"].items()}, indent=1))
    text = section(res, args.tiny)
    print(text)
    if args.write:
        write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
