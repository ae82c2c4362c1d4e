"""The real agent CLIs from npm through ``snapglyph serve`` in front of the simulator, driven past an overflow.

Claude Code, Codex, pi and Gemini CLI (versions pinned in :data:`real_clients.CLIS`, installed on first use into a
cache folder outside the repository) each resume a long session of their own format, pointed at ``serve`` by
their own base-URL settings: the resumed conversation overflows the simulator's window (the "prompt is too long,
resume it" case), ``serve`` compacts it, and the CLI prints the scripted answer. Each test skips, saying why, where
npm or the CLI is absent. A run takes 1-3 s once installed; every run has a hang guard of 120 s.
"""

from __future__ import annotations

import contextlib
import json
import uuid

import pytest
import real_clients as rc
from real_clients import ANSWER, FIRST, PROMPT, assert_recovered, conversation, installed, run

from conftest import shared_path
from snapglyph.serve.app import ServeConfig
from snapglyph.serve.run import Background
from snapglyph.testing import Simulator, answer

pytest.importorskip("uvicorn")

WINDOW = 30_000
"""The simulator's window: above each CLI's own system prompt and tools (1,800 to 15,500 tokens by its count),
below the resumed session (42,000 to 56,000)."""


@contextlib.contextmanager
def serving(tmp_path, window: int = WINDOW):
    """The simulator (each dialect's own provider's overflow body, every answer the scripted one) and ``serve`` in
    front of it, both in this process; yields ``(sim, serve's URL)``."""
    with Simulator(lambda dialect, body: answer(ANSWER), provider="native", context_window=window) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")) as bg:
        yield sim, bg.url


@pytest.fixture
def world(tmp_path):
    """A temporary HOME and an empty working directory."""
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    return tmp_path / "home", tmp_path / "work"


def test_claude_code_resumes_a_session_past_the_window(tmp_path, world):
    exe = installed("claude")
    home, cwd = world
    sid = str(uuid.uuid4())
    rc.claude_session(home, cwd, sid)
    with serving(tmp_path) as (sim, url):
        proc = run([exe, "-p", PROMPT, "--resume", sid], cwd, rc.claude_env(home, url))
    sent, got = assert_recovered(sim, "anthropic", proc)
    # Claude Code 2.1.332 sends role "system" messages inside `messages` (the environment, the date): kept as sent
    assert [m["role"] for m in sent["messages"]].count("system") >= 2
    assert any(m["role"] == "system" for m in got["messages"][2:])


def test_claude_code_resumes_a_real_long_session(tmp_path, world):
    """The real Claude Code session of ../shared (1,593 records, 2.1.39) resumed by the pinned Claude Code."""
    src = shared_path("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    exe = installed("claude")
    home, cwd = world
    dest = rc.claude_project(home, cwd) / src.name
    dest.parent.mkdir(parents=True)
    dest.write_bytes(src.read_bytes())
    first = "Work on bead spotter-fum. Run bd show spotter-fum to see the issue details"
    with serving(tmp_path, window=40_000) as (sim, url):
        proc = run([exe, "-p", PROMPT, "--resume", src.stem], cwd, rc.claude_env(home, url))
    sent, got = assert_recovered(sim, "anthropic", proc, first=first)
    assert len(sent["messages"]) > 100 and sent["model"] == got["model"] == "claude-opus-4-6"


def test_codex_exec_resume_of_a_long_rollout(tmp_path, world):
    exe = installed("codex")
    home, cwd = world
    codex_home = home / ".codex"
    sid = "019e1625-0000-7000-8000-" + uuid.uuid4().hex[:12]
    rc.codex_rollout(codex_home, cwd, sid)
    with serving(tmp_path) as (sim, url):
        rc.codex_config(codex_home, url)
        proc = run([exe, "exec", "--skip-git-repo-check", "resume", sid, PROMPT], cwd,
                   {"HOME": str(home), "CODEX_HOME": str(codex_home), "SIM_API_KEY": "sk-offline"})
    sent, got = assert_recovered(sim, "responses", proc)
    # Codex's developer messages (sandbox, skills) before and after the middle, and its client_metadata, as sent
    assert sent["input"][0]["role"] == got["input"][0]["role"] == "developer"
    assert any(it.get("role") == "developer" for it in got["input"][3:])
    assert got["client_metadata"]["session_id"] == sid and got["store"] is False


def test_pi_resumes_a_long_session(tmp_path, world):
    exe = installed("pi")
    home, cwd = world
    agent = home / ".pi" / "agent"
    sid = str(uuid.uuid4())
    session = rc.pi_session(agent, cwd, sid)
    with serving(tmp_path) as (sim, url):
        rc.pi_models(agent, url)
        proc = run([exe, "--provider", "sim", "--model", "gpt-5.4", "-p", "--session", session, PROMPT], cwd,
                   {"HOME": str(home), "PI_OFFLINE": "1"})
    sent, got = assert_recovered(sim, "openai", proc)
    assert sent["messages"][0]["role"] in ("system", "developer") and got["messages"][0] == sent["messages"][0]
    assert conversation(sim)[0]["path"] == "/v1/chat/completions"


def test_gemini_cli_resumes_a_long_session(tmp_path, world):
    exe = installed("gemini")
    home, cwd = world
    gemini = home / ".gemini"
    rc.gemini_settings(gemini)
    rc.gemini_session(gemini, cwd, str(uuid.uuid4()))
    with serving(tmp_path) as (sim, url):
        # -m: a named model, so no routing request (a JSON classification the scripted model cannot answer) first
        proc = run([exe, "--skip-trust", "-m", "gemini-3.1-pro-preview", "--resume", "latest", "-p", PROMPT], cwd,
                   {"HOME": str(home), "GEMINI_API_KEY": "offline-key", "GOOGLE_GEMINI_BASE_URL": url,
                    "NO_COLOR": "1"})
    conv = conversation(sim)
    assert conv and conv[0]["path"].endswith(":streamGenerateContent"), (conv, proc.stderr[-2000:])
    assert len(conv[0]["body"]["contents"]) >= 25                  # the session was resumed whole
    assert_recovered(sim, "gemini", proc)


def test_serve_recovers_a_request_with_mid_conversation_system_messages(tmp_path):
    """No npm: the shape of Claude Code 2.1.332's requests (role "system" messages inside ``messages``, as the
    Anthropic API takes them: ``anthropic.types.SystemMessageParam``) recovers through serve, and the system
    messages of the tail go out as they came. Before, serve could not read such a request and relayed the
    overflow."""
    import anthropic
    log = "\n".join(f"line {i}: worker-{i % 7} finished in {i * 37 % 1000} ms" for i in range(400))
    msgs = [{"role": "user", "content": FIRST}, {"role": "system", "content": []}]
    for p in range(8):
        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{p:02d}", "name": "Bash",
                                                    "input": {"command": f"cat build-{p}.log"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{p:02d}",
                                               "content": log}]}]
    msgs += [{"role": "system", "content": [{"type": "text", "text": "Today's date is 2026-12-04."}]},
             {"role": "assistant", "content": [{"type": "text", "text": "read them all"}]},
             {"role": "user", "content": [{"type": "text", "text": PROMPT}]},
             {"role": "system", "content": [{"type": "text", "text": "# Environment\nPlatform: linux"}]}]
    tools = [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}]
    with serving(tmp_path, window=12_000) as (sim, url):
        client = anthropic.Anthropic(base_url=url, api_key="sk-ant-offline", max_retries=0, timeout=60)
        r = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, system="You are terse.",
                                   messages=msgs, tools=tools)
    assert r.content[0].text == ANSWER
    assert [e["kind"] for e in sim.log] == ["overflow", "ok"] and sim.log[1]["images"]
    got = json.loads(sim.log[1]["raw"])["messages"]
    assert got[0] == msgs[0] and got[-3:] == msgs[-3:] and got[-1]["role"] == "system"


def test_a_missing_npm_skips_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("SNAPGLYPH_TEST_NPM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))                      # no npm here
    with pytest.raises(pytest.skip.Exception, match=r"npm is not on PATH, so @openai/codex@0\.171\.0 cannot be"):
        installed("codex")
    assert not (tmp_path / "cache").exists()


def _page_bytes(entry: dict) -> list[str]:
    """The base64 page images of one logged request, in order (any dialect)."""
    out: list[str] = []

    def walk(x):
        if isinstance(x, dict):
            if x.get("type") == "image" and isinstance(x.get("source"), dict):
                out.append(x["source"].get("data", ""))
            elif x.get("type") == "input_image":
                out.append(str(x.get("image_url", "")).partition(",")[2])
            else:
                for v in x.values():
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(entry["body"])
    return out


def _side_calls_untouched(sim) -> list[dict]:
    """The simulator's requests outside the conversation (token counts, small-model calls): each answered, none
    carrying a page (serve relays them as they came); returns them."""
    side = [e for e in sim.log if json.dumps(FIRST)[1:-1].encode() not in e.get("raw", b"")]
    assert all(b'"image"' not in e.get("raw", b"") and b"input_image" not in e.get("raw", b"") for e in side)
    assert all(e.get("kind") == "ok" for e in side), [e.get("kind") for e in side]
    return side


def test_claude_code_goes_on_past_the_overflow_with_the_same_pages(tmp_path, world):
    """Item 4 of issue 32: two more turns of real ``claude -p`` through serve; the second turn is compacted before
    it is sent (no second overflow) and its pages start with the first compaction's page bytes."""
    exe = installed("claude")
    home, cwd = world
    sid = str(uuid.uuid4())
    rc.claude_session(home, cwd, sid)
    with serving(tmp_path) as (sim, url):
        first = run([exe, "-p", PROMPT, "--resume", sid], cwd, rc.claude_env(home, url))
        second = run([exe, "-p", "NEXT-PROMPT-77b1: and the fastest?", "--resume", sid], cwd,
                     rc.claude_env(home, url))
    assert_recovered(sim, "anthropic", first, turns=2)
    assert second.returncode == 0 and ANSWER in second.stdout and "error" not in second.stdout.lower(), second
    conv = conversation(sim)
    assert [e["kind"] for e in conv].count("overflow") == 1 and conv[-1]["kind"] == "ok"
    assert "NEXT-PROMPT-77b1" in json.dumps(conv[-1]["body"]["messages"][-1])
    a, b = _page_bytes(conv[1]), _page_bytes(conv[-1])
    assert a and b[:len(a)] == a                               # the same page bytes: the provider's cache holds
    _side_calls_untouched(sim)


def test_codex_goes_on_past_the_overflow_with_the_same_pages(tmp_path, world):
    """Item 4 of issue 32 for real ``codex exec``: two more turns through serve, the same page bytes."""
    exe = installed("codex")
    home, cwd = world
    codex_home = home / ".codex"
    sid = "019e1625-0000-7000-8000-" + uuid.uuid4().hex[:12]
    rc.codex_rollout(codex_home, cwd, sid)
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home), "SIM_API_KEY": "sk-offline"}
    with serving(tmp_path) as (sim, url):
        rc.codex_config(codex_home, url)
        first = run([exe, "exec", "--skip-git-repo-check", "resume", sid, PROMPT], cwd, env)
        second = run([exe, "exec", "--skip-git-repo-check", "resume", sid, "NEXT-PROMPT-77b1: and the fastest?"],
                     cwd, env)
    assert_recovered(sim, "responses", first, turns=2)
    assert second.returncode == 0 and ANSWER in second.stdout, (second.stdout[-800:], second.stderr[-1500:])
    conv = conversation(sim)
    assert [e["kind"] for e in conv].count("overflow") == 1 and conv[-1]["kind"] == "ok"
    assert "NEXT-PROMPT-77b1" in json.dumps(conv[-1]["body"]["input"][-1])
    a, b = _page_bytes(conv[1]), _page_bytes(conv[-1])
    assert a and b[:len(a)] == a
    _side_calls_untouched(sim)
