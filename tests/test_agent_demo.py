"""The agent loop end to end over real HTTP (simulator + official SDKs), its tools and its transcript."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from snapglyph_agent_demo.clients import AnthropicClient, OpenAIClient
from snapglyph_agent_demo.context import strip_reasoning
from snapglyph_agent_demo.loop import WRAP_UP, Agent, AgentStop, LoopConfig
from snapglyph_agent_demo.tools import Workspace
from snapglyph_agent_demo.transcript import Transcript

import snapglyph
from snapglyph.testing import PROVIDERS, Simulator, answer, anthropic_grammar_error, call, openai_grammar_error

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    for i in range(8):
        (d / f"f{i}.txt").write_text("".join(f"line {j} of file {i}: value={j * i}\n" for j in range(80)))
    return d


def _agent(sim, dialect, ws, tmp_path, **cfg):
    client = OpenAIClient(sim.base_url + "/v1") if dialect == "openai" else AnthropicClient(sim.base_url)
    logs: list[str] = []
    cfg.setdefault("context_window", 32_768)
    cfg.setdefault("max_tokens", 200)
    agent = Agent(client, dialect=dialect, model="sim", workspace=Workspace(ws),
                  transcript=Transcript(tmp_path / "t.jsonl"), config=LoopConfig(**cfg), log=logs.append)
    return agent, logs


def _reads(n):
    return [call(("read_file", {"path": f"f{i}.txt"})) for i in range(n)] + [answer("final answer")]


# -- tools ------------------------------------------------------------------------------------------------------
def test_tools_confined_capped_and_errors(ws, tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    os.symlink(tmp_path / "secret.txt", ws / "link.txt")
    w = Workspace(ws, timeout=0.5, max_result_chars=100)
    assert w.run("read_file", {"path": "../secret.txt"}).is_error
    assert "outside the workspace" in w.run("read_file", {"path": "link.txt"}).text
    assert w.run("list_dir", {"path": "/"}).is_error
    r = w.run("read_file", '{"path": "f1.txt"}')
    assert not r.is_error and "[result cut: 100 of" in r.text
    assert w.run("read_file", {"path": "f1.txt", "start": 2, "end": 2}).text == "line 1 of file 1: value=1\n"
    assert w.run("nope", {}).text.startswith("error: unknown tool 'nope'")
    assert w.run("read_file", "{bad json").is_error
    assert w.run("read_file", {"wrong": 1}).is_error
    assert "f3.txt:5:" in Workspace(ws).run("search", {"pattern": "value=12$"}).text
    t0 = time.perf_counter()
    r = w.run("run_command", {"command": "sleep 60"})
    assert r.is_error and "timed out" in r.text and time.perf_counter() - t0 < 60      # killed, not waited out
    assert "exit code 0" in Workspace(ws).run("run_command", {"command": "ls"}).text


# -- transcript -------------------------------------------------------------------------------------------------
def test_transcript_torn_tail_every_offset(tmp_path):
    p = tmp_path / "t.jsonl"
    t = Transcript(p)
    t.start_session(1)
    t.append_turn([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    good = p.read_bytes()
    t.append_turn([{"role": "user", "content": "c" * 50}, {"role": "assistant", "content": "d"}])
    full = p.read_bytes()
    lines = [json.loads(x) for x in full.splitlines()]
    assert [e["parentId"] for e in lines[1:]] == [e["id"] for e in lines[:-1]]
    for cut in range(len(good), len(full)):
        p.write_bytes(full[:cut])
        res = Transcript(p).load()
        assert res.messages == [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
        assert p.read_bytes() == good and res.set_aside == cut - len(good)
    p.write_bytes(full)
    assert Transcript(p).load().turns == 2


# -- the loop ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dialect,provider", [("openai", "openai"), ("anthropic", "anthropic"),
                                              ("openai", "vllm"), ("openai", "llamacpp"),
                                              ("openai", "openrouter"), ("openai", "deepseek"),
                                              ("openai", "openai-responses"), ("openai", "lmstudio"),
                                              ("openai", "mistral"), ("anthropic", "anthropic-max-tokens")])
def test_overflow_recovers_with_pages(dialect, provider, ws, tmp_path):
    with Simulator(_reads(6), provider=provider, context_window=4000) as sim:
        agent, logs = _agent(sim, dialect, ws, tmp_path)
        assert agent.run_turn("read the files").text == "final answer"
        kinds = [e["kind"] for e in sim.log]
        assert "overflow" in kinds and "grammar" not in kinds, kinds
        # every overflow is recovered on the first retry: the request after an overflow is answered
        assert all(kinds[i + 1] == "ok" for i, k in enumerate(kinds) if k == "overflow"), kinds
        assert kinds[-1] == "ok" and agent.counters.overflows >= 1 and agent.counters.compactions >= 1
        assert any("pages" in line for line in logs)
        assert agent.counters.history[0]["after"] < agent.counters.history[0]["before"]
        body = agent.body()
        assert snapglyph.validate(body, dialect, agent.profile) == []
        # the transcript holds the original messages (no pages) of the finished turn
        stored = Transcript(tmp_path / "t.jsonl").load().messages
        assert len(stored) == 2 + 2 * 6
        assert "image" not in json.dumps(stored)


def test_proactive_threshold_and_calibration(ws, tmp_path):
    with Simulator(_reads(7), provider="openai", context_window=6000) as sim:
        agent, _ = _agent(sim, "openai", ws, tmp_path, context_window=6000)
        agent.run_turn("read")
        assert [e["kind"] for e in sim.log].count("overflow") == 0
        assert any("proactive" in h["reason"] for h in agent.counters.history)
        # calibration: our estimate times the ratio tracks the simulator's own count
        ok = [e for e in sim.log if e["kind"] == "ok"]
        est = agent.estimate(agent.body()) - agent.config.max_tokens
        assert abs(est - ok[-1]["prompt_tokens"]) / ok[-1]["prompt_tokens"] < 0.35
        assert all(e["prompt_tokens"] + 200 <= 6000 for e in ok)


def test_wrap_up_without_tools_never_stored(ws, tmp_path):
    for dialect in ("openai", "anthropic"):
        with Simulator([call(("list_dir", {}))] * 5, provider=dialect) as sim:
            agent, _ = _agent(sim, dialect, ws, tmp_path / dialect, max_rounds=2)
            text = agent.run_turn("loop forever").text
            assert text.startswith("Wrap-up") and agent.counters.rounds == 3
            assert sim.log[-1]["tool_calls"] == []
            stored = json.dumps(Transcript(tmp_path / dialect / "t.jsonl").load().messages)
            assert WRAP_UP not in stored and WRAP_UP not in json.dumps(agent.context)


def test_turn_cap_resume_and_system_prompt_not_stored(ws, tmp_path):
    with Simulator(_reads(1) * 3, provider="openai") as sim:
        agent, _ = _agent(sim, "openai", ws, tmp_path, max_turns=2)
        agent.run_turn("one")
        agent.run_turn("two")
        with pytest.raises(AgentStop):
            agent.run_turn("three")
        context = list(agent.context)
        again, _ = _agent(sim, "openai", ws, tmp_path)
        again.start(resume=True)
        assert again.context == context and again.counters.sessions == 2 and again.counters.turns == 2
        assert again.run_turn("three").text == "final answer"
        assert agent.system_prompt not in (tmp_path / "t.jsonl").read_text()


def test_reasoning_kept_only_in_turn_in_progress():
    think = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    msgs = [{"role": "user", "content": "q1"},
            {"role": "assistant", "content": [think, {"type": "text", "text": "a1"}]},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "content": [think, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}]
    out = strip_reasoning(msgs, "anthropic")
    assert out[1]["content"] == [{"type": "text", "text": "a1"}] and out[3]["content"][0] == think
    assert msgs[1]["content"][0] == think                                   # stored copy untouched
    oai = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "reasoning_content": "r"},
           {"role": "user", "content": "q2"}]
    assert "reasoning_content" not in strip_reasoning(oai, "openai")[1]


def test_no_valid_cut_is_an_error_reply_that_leaves_nothing_behind(ws, tmp_path):
    with Simulator(_reads(3), provider="anthropic", context_window=400) as sim:
        agent, _ = _agent(sim, "anthropic", ws, tmp_path, max_tokens=100)
        reply = agent.run_turn("read")
        assert reply.message is None and re.match("cannot recover from the overflow|the request still overflows",
                                                  reply.error), reply.error
        assert agent.context == [] and agent.counters.turns == 0
        assert Transcript(tmp_path / "t.jsonl").load().messages == []


def test_a_provider_error_is_data_and_the_next_turn_goes_on(ws, tmp_path):
    with Simulator(_reads(1), provider="openai") as sim:
        agent, _ = _agent(sim, "openai", ws, tmp_path)
        sim.inject(400, {"error": {"message": "The model `sim` does not exist", "type": "invalid_request_error"}})
        failed = agent.run_turn("first try")
        assert failed.status == 400 and "does not exist" in failed.error and failed.message is None
        assert agent.context == [] and agent.counters.overflows == 0
        assert agent.run_turn("second try").text == "final answer"
        stored = Transcript(tmp_path / "t.jsonl").load().messages
        assert stored[0] == {"role": "user", "content": "second try"} and len(stored) == 4


def test_every_request_passes_the_simulators_grammar(ws, tmp_path):
    with Simulator(_reads(8), provider="anthropic", context_window=4500) as sim:
        agent, _ = _agent(sim, "anthropic", ws, tmp_path)
        agent.run_turn("read everything")
        assert all(e["kind"] in ("ok", "overflow") for e in sim.log)
        assert anthropic_grammar_error(agent.body()["messages"]) is None


# -- silent truncation (Ollama) --------------------------------------------------------------------------------
def test_silent_truncation_detected_not_calibrated_and_recovered(ws, tmp_path):
    # The loop assumes 32768 tokens; the server truncates at 4000 and reports at most 4000 prompt tokens.
    with Simulator(_reads(8), provider="ollama", context_window=4000) as sim:
        agent, logs = _agent(sim, "openai", ws, tmp_path, check_truncation=True)
        assert agent.run_turn("read the files").text == "final answer"
        c = agent.counters
        truncated = [e for e in sim.log if e.get("truncated")]
        assert truncated and c.truncations >= 1 and c.overflows == 0
        assert any(h["reason"].startswith("silent truncation") for h in c.history)
        assert len(truncated) - c.truncations <= 1          # at most one marginal truncation goes unnoticed
        assert not sim.log[-1].get("truncated")              # the answer was made from a whole prompt
        assert agent.window <= 4000                          # the window learned from the reported count
        assert any("silent truncation" in line for line in logs)
        # calibration only saw whole prompts: the estimate tracks the simulator's own count
        whole = [e for e in sim.log if e["kind"] == "ok" and not e.get("truncated")]
        est = agent.estimate(agent.body()) - agent.config.max_tokens
        assert abs(est - whole[-1]["prompt_tokens"]) / whole[-1]["prompt_tokens"] < 0.25


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_truncation_check_quiet_on_providers_that_do_not_truncate(dialect, ws, tmp_path):
    with Simulator(_reads(8), provider=dialect, context_window=4000) as sim:
        agent, _ = _agent(sim, dialect, ws, tmp_path, check_truncation=True)
        assert agent.run_turn("read").text == "final answer"
        assert agent.counters.truncations == 0 and agent.counters.overflows >= 1


# -- recall -----------------------------------------------------------------------------------------------------
def _tool_names(body):
    return sorted(t.get("name") or t["function"]["name"] for t in body.get("tools") or [])


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_recall_tool_offered_after_compaction_and_answered(dialect, ws, tmp_path):
    seen: list[list[str]] = []
    steps = iter(_reads(6)[:-1])
    state = {"recalled": False}

    def script(d, body):
        seen.append(_tool_names(body))
        if "recall_messages" in seen[-1] and not state["recalled"]:
            state["recalled"] = True            # message #3 is the first read_file result (#0 is the system prompt)
            return call(("recall_messages", {"ids": "#3"}), ("recall_messages", {"ids": "9999"}),
                        ("recall_messages", {"ids": "not an id"}))
        return next(steps, answer("final answer"))

    with Simulator(script, provider=dialect, context_window=4000) as sim:
        agent, logs = _agent(sim, dialect, ws, tmp_path)
        assert agent.run_tool("recall_messages", {"ids": "1"}).text.startswith("error: unknown tool")
        assert agent.run_turn("read the files").text == "final answer"
        assert agent.counters.compactions >= 1 and agent.counters.recalls == 3
        assert "recall_messages" not in seen[0] and "recall_messages" in seen[-1]
        assert state["recalled"] and all(e["kind"] in ("ok", "overflow") for e in sim.log)
        assert any("recall_messages" in line and "[error]" not in line for line in logs)
    stored = Transcript(tmp_path / "t.jsonl").load().messages
    results: list[tuple[str, bool]] = []
    for m in stored:
        if m["role"] == "tool":
            results.append((m["content"], m["content"].startswith("error:")))
        elif m["role"] == "user" and isinstance(m["content"], list):
            results += [(b["content"], bool(b.get("is_error"))) for b in m["content"] if b["type"] == "tool_result"]
    assert ("#3 tool\n" + (ws / "f0.txt").read_text(), False) in results       # the exact source text
    unknown = [t for t, err in results if err and "9999" in t]
    assert unknown and unknown[0].startswith("error:")
    assert any(err and "not an id" in t for t, err in results)


# -- the command line and crash safety -------------------------------------------------------------------------
def _cli(*args, timeout=600):                   # a hang guard, not a speed requirement
    return subprocess.run([sys.executable, "-m", "snapglyph_agent_demo", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, check=False)


def test_cli_simulate_overflows_and_recovers(tmp_path):
    r = _cli("--simulate", "--transcript", str(tmp_path / "t.jsonl"))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "overflow:" in out and "compaction (overflow)" in out
    pages = [int(n) for n in re.findall(r"compaction \(overflow\): .*?, (\d+) pages", out)]
    assert pages and min(pages) >= 1, out                   # the default run recovers with pages, not only recall
    assert "answer: The build fails in src/calc.py" in out

_DONE = re.compile(r"(\d+) overflows, (\d+) truncations, (\d+) compactions, (\d+) recalls")


def _cases():
    cases = [["--provider", p, "--dialect", d] for p in PROVIDERS for d in ("openai", "anthropic")]
    return cases + [["--dialect", "anthropic"], ["--dialect", "openai"], ["--provider", "anthropic"],
                    ["--provider", "ollama", "--check-truncation", "--turns", "4"]]


@pytest.mark.parametrize("args", _cases(), ids=lambda a: " ".join(a))
def test_cli_simulate_every_provider_and_dialect_recovers(args, tmp_path, capsys):
    from snapglyph_agent_demo.__main__ import main
    rc = main(["--simulate", "--workspace", str(tmp_path / "ws"), "--transcript", str(tmp_path / "t.jsonl"), *args])
    out = capsys.readouterr().out
    assert rc == 0, out
    done = _DONE.search(out)
    assert done, out
    overflows, truncations, compactions, recalls = map(int, done.groups())
    assert overflows + truncations >= 1 and compactions >= 1 and recalls == 1, out
    assert "answer: The build fails in src/calc.py" in out
    recall = [line for line in out.splitlines() if "recall_messages(" in line]
    assert recall and "[error]" not in recall[0], out
    header = out.splitlines()[0]
    if "--provider" not in args:                            # the default provider follows the dialect
        assert f"{args[1]} overflow bodies" in header and f"{args[1]} dialect" in header
    if args == ["--dialect", "anthropic"]:
        assert "overflow: anthropic says 'prompt is too long" in out
    if args == ["--provider", "anthropic"]:                 # and the default dialect follows the provider
        assert "anthropic dialect" in header
    if "ollama" in args:
        assert truncations >= 1 and "silent truncation" in out


def test_cli_unknown_provider_is_a_one_line_error():
    r = _cli("--simulate", "--provider", "bogus")
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "bogus" in r.stderr and "ollama" in r.stderr and "llamacpp" in r.stderr


def _check_turns(messages):
    assert openai_grammar_error(messages) is None
    # every stored turn starts with a user message and ends with an assistant answer; a kill that lands before the
    # first turn is committed leaves a legitimately empty transcript (a session line only)
    starts = [i for i, m in enumerate(messages) if m["role"] == "user"]
    assert not messages or (messages[0]["role"] == "user" and messages[-1]["role"] == "assistant")
    return len(starts)


def test_check_turns_of_a_kill_before_the_first_turn(tmp_path):
    """What test_sigkill_at_random_moments_then_resume meets when its kill lands before the first turn ends: a
    transcript holding a session line and part of a turn loads as no messages, which is a valid state."""
    tpath = tmp_path / "t.jsonl"
    t = Transcript(tpath)
    t.start_session(1, dialect="openai", model="sim")
    with open(tpath, "ab") as f:                      # the first turn's batch, torn by the kill
        f.write(b'{"id":"x","parentId":null,"type":"message","message":{"role":"user","content":"hi"}}\n{"id"')
    res = Transcript(tpath).load()
    assert res.messages == [] and res.sessions == 1 and res.turns == 0 and res.set_aside > 0
    assert _check_turns(res.messages) == 0


def _wait_for(path, start, marker, proc):
    """Wait until ``marker`` is in ``path`` after byte ``start``, however slow the machine; fail if the process
    ends first (600 s is a hang guard only)."""
    def seen():
        return path.exists() and marker in path.read_bytes()[start:]
    t0 = time.monotonic()
    while not seen():
        if proc.poll() is not None and not seen():
            pytest.fail(f"the process ended (exit {proc.returncode}) before writing {marker!r}")
        if time.monotonic() - t0 > 600:
            pytest.fail(f"no {marker!r} after 600 s")
        time.sleep(0.01)


def test_sigkill_at_random_moments_then_resume(tmp_path):
    # The kill moments are random on purpose; every assertion holds wherever a kill lands, and progress is made
    # certain by waiting for events (a session line, a committed turn), never for a length of time.
    import random
    rng = random.Random(7)
    tpath = tmp_path / "t.jsonl"
    ws = tmp_path / "ws"
    committed = b""
    for k in range(4):
        proc = subprocess.Popen([sys.executable, "-m", "snapglyph_agent_demo", "--simulate", "--script", "short",
                                 "--turns", "400", "--resume", "--transcript", str(tpath), "--workspace", str(ws),
                                 "--max-turns", "100000"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _wait_for(tpath, len(committed), b'"type":"session"', proc)
        if k % 2:                     # odd runs commit a turn first, so the sessions make progress; even ones may not
            _wait_for(tpath, len(committed), b'"turn_end"', proc)
        time.sleep(rng.uniform(0.0, 0.5))
        proc.kill()                                                   # SIGKILL
        proc.wait()
        raw = tpath.read_bytes()
        assert raw.startswith(committed)                              # nothing committed before was changed
        for line in raw[: raw.rfind(b"\n") + 1].splitlines():
            json.loads(line)                                          # every complete line parses
        res = Transcript(tpath).load()
        kept = tpath.read_bytes()
        assert raw.startswith(kept) and len(kept) >= len(committed)
        _check_turns(res.messages)
        assert res.sessions == k + 1
        committed = kept
    assert Transcript(tpath).load().turns >= 2                         # the killed sessions made progress
    r = _cli("--simulate", "--script", "short", "--resume", "--turns", "1", "--transcript", str(tpath),
             "--workspace", str(ws), "--max-turns", "100000", "Last question?")
    assert r.returncode == 0, r.stderr
    assert "resume:" in r.stdout
    assert tpath.read_bytes().startswith(committed)
    final = Transcript(tpath).load()
    assert final.messages[-1]["role"] == "assistant" and final.turns >= 2


_WRITER = """
import sys, time
import snapglyph_agent_demo.transcript as T
from snapglyph_agent_demo.transcript import Transcript

# A disk that stops halfway: after `whole` complete turns, the next turn's write() reaches the file in 64 KiB
# pieces and stops after the first one ("torn"), or stops just before it ("between"); the process then says so and
# waits to be killed. A real kernel may cut a large write short when SIGKILL arrives; here it always happens.
path, whole, where = sys.argv[1], int(sys.argv[2]), sys.argv[3]
state = {"writes": 0}

class _Stopping:
    def __init__(self, f):
        self._f = f
    def write(self, data):
        state["writes"] += 1
        if state["writes"] > whole:
            if where == "torn":
                self._f.write(data[:65536])
                self._f.flush()
            print(where, flush=True)
            time.sleep(3600)
        return self._f.write(data)
    def __getattr__(self, name):
        return getattr(self._f, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self._f.__exit__(*exc)

_real_open = open
T.open = lambda *a, **k: _Stopping(_real_open(*a, **k)) if "a" in (a[1] if len(a) > 1 else k.get("mode", "r")) else _real_open(*a, **k)
t = Transcript(path)
t.load()
k = 0
while True:
    k += 1
    t.append_turn([{"role": "user", "content": f"q{k} " + "x" * 1_000_000}, {"role": "assistant", "content": "a"}])
"""


@pytest.mark.parametrize("where", ["torn", "between"])
def test_sigkill_in_the_middle_of_a_write(where, tmp_path):
    tpath = tmp_path / "t.jsonl"
    turns = 0
    for whole in (0, 2, 1):
        before = tpath.read_bytes() if tpath.exists() else b""
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tpath), str(whole), where], cwd=ROOT,
                                stdout=subprocess.PIPE)
        assert proc.stdout.readline().decode().strip() == where      # stopped where asked, waiting for the kill
        proc.kill()
        proc.wait()
        proc.stdout.close()
        raw = tpath.read_bytes()
        assert raw.startswith(before)
        assert (raw == b"" or raw.endswith(b"\n")) == (where == "between")   # a torn last line, or none
        res = Transcript(tpath).load()
        kept = tpath.read_bytes()
        turns += whole
        assert raw.startswith(kept) and (kept == b"" or kept.endswith(b"\n")) and res.turns == turns
        assert len(kept) == len(raw) - (65536 if where == "torn" else 0)
        assert len(res.messages) == 2 * res.turns
        assert all(m["role"] == ("user" if i % 2 == 0 else "assistant") for i, m in enumerate(res.messages))


def test_cli_base_url_against_an_openai_compatible_server(tmp_path):
    with Simulator([call(("list_dir", {})), answer("it works")], provider="llamacpp", context_window=50_000) as sim:
        env = {**os.environ, "OPENAI_API_KEY": "sk-from-env"}
        r = subprocess.run([sys.executable, "-m", "snapglyph_agent_demo", "--base-url", sim.base_url + "/v1",
                            "--model", "m", "--workspace", str(tmp_path), "--transcript", str(tmp_path / "t.jsonl"),
                            "Hello?"], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env, check=False)
        assert r.returncode == 0, r.stderr
        assert "answer: it works" in r.stdout and [e["kind"] for e in sim.log] == ["ok", "ok"]
