"""``python -m snapglyph_agent_demo``: run the agent loop against the local simulator or any OpenAI-compatible server.

``--simulate`` starts :class:`snapglyph.testing.Simulator` on 127.0.0.1 (a free port), writes a small project
into a temporary workspace and runs a scripted session whose context overflows; the loop recovers with snapglyph
pages, offline, and prints each round, each compaction and the final answer. Every simulated provider overflows
(or, for ``ollama``, silently truncates) at the defaults; after the first compaction the scripted model calls
``recall_messages`` once. The provider defaults to the dialect's own, and the dialect to ``anthropic`` for the
Anthropic-speaking providers. ``--base-url URL --model NAME`` runs the same loop against a real server, with the
key read from the environment.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from snapglyph.errors import SnapglyphError
from snapglyph.testing import PROVIDERS, Simulator, answer, call

from .clients import AnthropicClient, OpenAIClient, Reply
from .loop import Agent, AgentStop, LoopConfig
from .tools import Workspace
from .transcript import Transcript

PROG = "python -m snapglyph_agent_demo"

TASK = ("Find out why the build of this small project fails and what to change. Look at the files, the build "
        "log and the tests, then answer in a few lines.")


def write_project(root: Path) -> None:
    """Write the demo project (a few source files and a long build log) into ``root``."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "logs").mkdir(exist_ok=True)
    (root / "README.md").write_text("# tiny-calc\n\nA calculator library. Run `python -m tiny_calc`.\n" * 3)
    funcs = "".join(f"def op_{i}(a, b):\n    \"\"\"Operation {i}.\"\"\"\n    return a * {i} + b  # TODO check\n\n"
                    for i in range(40))
    (root / "src" / "calc.py").write_text("import math\n\n" + funcs)
    (root / "src" / "parse.py").write_text("".join(
        f"def parse_{i}(s):\n    return int(s.strip()) + {i}\n\n" for i in range(30)))
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_calc.py").write_text("from src.calc import *\n\n" + "".join(
        f"def test_op_{i}():\n    assert op_{i}(2, 3) == {2 * i + 3}\n    assert op_{i}(0, 1) == 1\n\n"
        for i in range(40)))
    (root / "NOTES.md").write_text("".join(
        f"- {d}: reviewed module_{d}, no change needed; see the build log for timings.\n" for d in range(60)))
    log = "".join(f"[{i:04d}] compiling module_{i}.py ... ok (0.{i % 10}s)\n" for i in range(200))
    log += "[0200] ERROR: src/calc.py:42: division by zero in op_7 when b == 0\n"
    (root / "logs" / "build.log").write_text(log)
    (root / "logs" / "test.log").write_text("".join(
        f"tests/test_calc.py::test_op_{i} {'FAILED' if i == 7 else 'PASSED'} [{(i + 1) * 100 // 40:3d}%]\n"
        for i in range(40)) + "".join(
        f"    frame {k}: src/calc.py:{20 + k} in op_7: return a * 7 + b  # b={k % 3}\n" for k in range(60))
        + "FAILED tests/test_calc.py::test_op_7 - ZeroDivisionError: division by zero\n1 failed, 39 passed\n")


def demo_script(kind: str = "demo"):
    """The scripted model of ``--simulate``: turn 1 explores and overflows; later turns read a file and answer.

    ``kind="short"`` skips the exploration: every turn reads one file and answers (used by the crash tests).
    Once the loop has compacted (the request offers ``recall_messages``), the model calls that tool once, for
    the first message id the snapshot text names, before going on with its script.

    Returns
    -------
    callable
        ``script(dialect, body) -> Step`` for :class:`snapglyph.testing.Simulator`.
    """
    first = [call(("list_dir", {"path": "."})), call(("read_file", {"path": "logs/build.log"})),
             call(("read_file", {"path": "logs/test.log"})), call(("read_file", {"path": "src/calc.py"})),
             call(("read_file", {"path": "tests/test_calc.py"})), call(("read_file", {"path": "NOTES.md"})),
             call(("read_file", {"path": "src/parse.py"})), call(("search", {"pattern": "TODO", "path": "src"})),
             call(("run_command", {"command": "wc -l src/*.py"})),
             call(("read_file", {"path": "src/calc.py", "start": 40, "end": 45})),
             answer("The build fails in src/calc.py (logs/build.log line 200: division by zero in op_7 when "
                    "b == 0). Guard op_7 against b == 0 or fix its caller; the TODOs in calc.py mark the same "
                    "unchecked operations.")]
    state = {"i": 0 if kind == "demo" else len(first), "later": 0, "recalled": False}

    def script(dialect: str, body: dict):
        ids = None if state["recalled"] else _recall_target(body)
        if ids is not None:
            state["recalled"] = True
            return call(("recall_messages", {"ids": ids}))
        i = state["i"]
        state["i"] += 1
        if i < len(first):
            return first[i]
        state["later"] += 1
        if state["later"] % 2 == 1 and body.get("tools"):
            return call(("read_file", {"path": "logs/build.log" if kind == "short" else "src/parse.py"}))
        return answer(f"Turn answer {state['later'] // 2}: parse.py has 30 parse functions.")
    return script


def _recall_target(body: dict) -> str | None:
    """What the scripted model recalls once ``body`` offers ``recall_messages`` and holds a snapshot: ``"#N"``.

    The snapshot text names the ids its pages show (``... show messages #2-#11 as pages``). The scripted model
    asks for the exact text of the build log, the fourth message of the first range (as a model would find it
    from the page headers: list_dir call, its result, the read_file call, the log); for a range shorter than
    that, the range's first id. Returns ``None`` when there is nothing to recall.
    """
    names = {t.get("name") or (t.get("function") or {}).get("name") for t in body.get("tools") or []}
    if "recall_messages" not in names:
        return None
    for m in body.get("messages") or []:
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for part in parts:
            text = part.get("text") if isinstance(part, dict) and part.get("type") == "text" else None
            if isinstance(text, str) and text.startswith("snapglyph snapshot:"):
                found = re.search(r"#(\d+)(?:-#(\d+))?", text)
                if found:
                    first, last = int(found.group(1)), int(found.group(2) or found.group(1))
                    return f"#{first + 3 if last >= first + 3 else first}"
    return None


#: Dialect of the simulated providers that speak Anthropic messages; every other one speaks OpenAI chat.
ANTHROPIC_PROVIDERS = ("anthropic", "anthropic-max-tokens", "bedrock")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m snapglyph_agent_demo``.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The process exit code: 0 on success; 1 when a turn fails (the provider is unreachable or answers an
        error that is not an overflow, after the SDK's retries, or an overflow cannot be recovered from); 2 for an
        unknown ``--provider`` (one line on stderr naming the known ones), a ``--transcript`` that is not a
        transcript, or the turn cap (:class:`~snapglyph_agent_demo.loop.AgentStop`). Bad options exit 2 through
        argparse. Every error is one line.
    """
    ap = argparse.ArgumentParser(prog=PROG, description=_plain(__doc__))
    ap.add_argument("--simulate", action="store_true", help="run against the local simulator (no key, no network)")
    ap.add_argument("--provider", default=None, metavar="NAME",
                    help="--simulate: the provider whose overflow bodies are sent (ollama truncates silently "
                         "instead); default: the dialect's own. Known: " + ", ".join(PROVIDERS))
    ap.add_argument("--dialect", choices=("openai", "anthropic"), default=None,
                    help="wire format; default anthropic for --simulate alone and for the anthropic, "
                         "anthropic-max-tokens and bedrock providers, else openai")
    ap.add_argument("--base-url", help="the server's base URL, e.g. http://127.0.0.1:8000/v1 for an "
                                       "OpenAI-compatible one (default: none; give it or --simulate)")
    ap.add_argument("--model", default="sim", help="model name sent in each request (default: sim)")
    ap.add_argument("--api-key-env", default=None, help="environment variable holding the key "
                    "(default OPENAI_API_KEY or ANTHROPIC_API_KEY)")
    ap.add_argument("--context-window", type=int, default=32_768,
                    help="the window the loop assumes, in tokens (an overflow body naming a smaller one wins; "
                         "default: 32768)")
    ap.add_argument("--sim-window", type=int, default=12_000,
                    help="--simulate: the window the simulated server enforces, as if started with a small -c "
                         "(default: 12000)")
    ap.add_argument("--max-tokens", type=int, default=512, help="output tokens asked per request (default: 512)")
    ap.add_argument("--max-rounds", type=int, default=12,
                    help="model calls per user turn before the loop asks for a final answer (default: 12)")
    ap.add_argument("--max-turns", type=int, default=50, help="user turns per session (default: 50)")
    ap.add_argument("--turns", type=int, default=2, help="--simulate: scripted user turns to run (default: 2)")
    ap.add_argument("--workspace", help="folder the tools read and run in (default: a temporary folder; with "
                                        "--simulate it holds a small demo project)")
    ap.add_argument("--transcript", help="JSONL transcript this demo writes; a file that is not one is refused "
                                         "(default: in a temporary folder)")
    ap.add_argument("--resume", action="store_true",
                    help="continue the transcript's conversation (says so when there is nothing to resume)")
    ap.add_argument("--script", choices=("demo", "short"), default="demo", help=argparse.SUPPRESS)
    ap.add_argument("--check-truncation", action="store_true",
                    help="detect silent truncation (Ollama); on by itself with --simulate --provider ollama")
    ap.add_argument("prompt", nargs="*", help="user message(s); without one, read lines from stdin")
    a = ap.parse_args(argv)
    if not a.simulate and not a.base_url:
        ap.error("give --simulate or --base-url URL --model NAME")
    if a.provider is not None and a.provider not in PROVIDERS:
        print(f"{ap.prog}: error: unknown provider {a.provider!r}; known providers: {', '.join(PROVIDERS)}",
              file=sys.stderr)
        return 2
    if a.dialect is None:  # --simulate alone speaks Anthropic: Claude pages (1,521 tokens) fit its small window
        a.dialect = ("anthropic" if a.provider in ANTHROPIC_PROVIDERS or (a.simulate and a.provider is None)
                     else "openai")
    if a.provider is None:
        a.provider = a.dialect
    check_truncation = a.check_truncation or (a.simulate and a.provider == "ollama")

    tmp = Path(tempfile.mkdtemp(prefix="agent_demo_")) if not (a.workspace and a.transcript) else None
    ws_dir = Path(a.workspace) if a.workspace else tmp / "workspace"
    if a.simulate and not (ws_dir / "logs" / "build.log").exists():
        write_project(ws_dir)
    ws_dir.mkdir(parents=True, exist_ok=True)
    transcript = Transcript(a.transcript or tmp / "transcript.jsonl")
    sim = None
    if a.simulate:
        sim = Simulator(demo_script(a.script), provider=a.provider, context_window=a.sim_window).start()
        base = sim.base_url + ("/v1" if a.dialect == "openai" else "")
        key = "sk-simulated"
        what = "silent truncation" if a.provider == "ollama" else f"{a.provider} overflow bodies"
        print(f"simulator: {what}, {a.sim_window}-token window enforced, {a.dialect} dialect at {base}; the loop "
              f"assumes {a.context_window} tokens" + ("; checking for silent truncation" if check_truncation else ""))
    else:
        base = a.base_url
        env = a.api_key_env or ("OPENAI_API_KEY" if a.dialect == "openai" else "ANTHROPIC_API_KEY")
        key = os.environ.get(env, "sk-local")
    client = OpenAIClient(base, key) if a.dialect == "openai" else AnthropicClient(base, key)
    cfg = LoopConfig(context_window=a.context_window, max_tokens=a.max_tokens, max_rounds=a.max_rounds,
                     max_turns=a.max_turns, check_truncation=check_truncation)
    agent = Agent(client, dialect=a.dialect, model=a.model, workspace=Workspace(ws_dir), transcript=transcript,
                  config=cfg, log=lambda s: print("  " + s, flush=True))
    t0 = time.perf_counter()
    try:
        return _run(a, agent, sim, transcript, t0)
    except SnapglyphError as e:  # a transcript that is not one
        print(f"{ap.prog}: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _one_line(reply: Reply) -> str:
    text = " ".join(str(reply.error).split())
    if "Connection error" in text or (reply.status is None and text.startswith("provider error")):
        text += " (is the server at --base-url running and reachable?)"
    return text


def _plain(doc: str) -> str:
    """A docstring as plain help text: reStructuredText ``literals`` and :role:`targets` as their bare words."""
    text = re.sub(r":\w+:`~?([^`]+)`", lambda m: m.group(1).rsplit(".", 1)[-1], doc)
    return text.replace("``", "").strip()


def _run(a, agent, sim, transcript, t0) -> int:
    try:
        agent.start(resume=a.resume)
        prompts = a.prompt or ([TASK] + [f"Follow-up {k}: what is in src/parse.py?" for k in range(1, a.turns)]
                               if a.simulate else None)
        for text in prompts if prompts is not None else _stdin_lines():
            print(f"turn {agent.counters.turns + 1}: user: {text}", flush=True)
            reply = agent.run_turn(text)
            if reply.error is not None:
                print(f"{PROG}: error: {_one_line(reply)}", file=sys.stderr)
                return 1
            print(f"turn {agent.counters.turns}: answer: {reply.text}", flush=True)
    except AgentStop as e:
        print(f"stopped: {e}", file=sys.stderr)
        return 2
    finally:
        if sim is not None:
            sim.stop()
    c = agent.counters
    print(f"done in {time.perf_counter() - t0:.1f} s: session {c.sessions}, {c.turns} turns, {c.rounds} rounds, "
          f"{c.overflows} overflows, {c.truncations} truncations, {c.compactions} compactions, {c.recalls} recalls; "
          f"transcript {transcript.path}")
    return 0


def _stdin_lines():
    for line in sys.stdin:
        if line.strip():
            yield line.strip()


if __name__ == "__main__":
    sys.exit(main())
