"""``snapglyph compact SESSION --resume-file``: a compacted session the agent itself resumes (issue 32, item 3).

Offline: the written Claude Code session and Codex rollout hold the agent's record fields, one user turn with the
pages and the snapshot text between the head and the tail, a new session id, and the source file is untouched.
With the real CLIs from npm (pinned in ``real_clients.CLIS``, installed on first use, skipped with the reason
where npm or the CLI is absent): each resumes the written session against the simulator and sends the compacted
conversation, pages included, as its next request.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path

import pytest
import real_clients as rc
from real_clients import ANSWER, FIRST, LAST, PROMPT, installed, run

from conftest import shared_path
from snapglyph.cli import main
from snapglyph.readers.registry import load
from snapglyph.testing import Simulator, answer

BUDGET = 20_000
"""Below the long sessions of real_clients (about 40,000 tokens), so the middle goes to pages."""


@pytest.fixture
def world(tmp_path):
    """A temporary HOME and an empty working directory."""
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    return tmp_path / "home", tmp_path / "work"


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _resume(src, capsys) -> tuple[str, str]:
    """Run ``snapglyph compact SRC --resume-file``; returns (the new session id, the resume command printed)."""
    before = _digest(src)
    assert main(["compact", str(src), "--resume-file", "--budget", str(BUDGET),
                 "--store", str(src.with_suffix(".store.jsonl"))]) == 0
    err = capsys.readouterr().err
    assert _digest(src) == before                                   # the original is never modified
    m = re.search(r"resume it with: ((?:claude --resume|codex resume) ([0-9a-f-]{36}))$", err.strip(), re.M)
    assert m, err
    return m.group(2), m.group(1)


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_claude_code_session_written_back(world, capsys):
    home, cwd = world
    src = rc.claude_session(home, cwd, str(uuid.uuid4()))
    sid, cmd = _resume(src, capsys)
    assert cmd == f"claude --resume {sid}"
    recs = _records(src.with_name(f"{sid}.jsonl"))
    assert all({"type", "uuid", "parentUuid", "sessionId", "timestamp", "cwd", "version", "message"} <= set(r)
               for r in recs)
    assert {r["sessionId"] for r in recs} == {sid}
    assert [r["parentUuid"] for r in recs] == [None] + [r["uuid"] for r in recs[:-1]]      # one chain
    old = {r["uuid"] for r in _records(src)}
    assert not old & {r["uuid"] for r in recs}                      # new record ids
    snaps = [r for r in recs if isinstance(r["message"]["content"], list)
             and any(b.get("type") == "image" for b in r["message"]["content"])]
    assert len(snaps) == 1 and snaps[0]["type"] == "user" and snaps[0]["cwd"] == str(cwd)
    blocks = snaps[0]["message"]["content"]
    assert blocks[-1]["type"] == "text" and blocks[-1]["text"].startswith("snapglyph snapshot:")
    assert not any("cache_control" in b for b in blocks)
    assert recs[0]["message"]["content"] == FIRST and recs[-1]["message"]["content"][0]["text"] == LAST
    t = load(src.with_name(f"{sid}.jsonl"))                         # it reads back: pages and the snapshot
    assert t.format == "claude-code" and t.meta["snapshots"] == 1


def test_codex_rollout_written_back(world, capsys):
    home, cwd = world
    sid0 = "019e1625-0000-7000-8000-" + uuid.uuid4().hex[:12]
    src = rc.codex_rollout(home / ".codex", cwd, sid0)
    sid, cmd = _resume(src, capsys)
    assert cmd == f"codex resume {sid}"
    [path] = [p for p in src.parent.glob(f"rollout-*-{sid}.jsonl")]
    recs = _records(path)
    assert recs[0]["type"] == "session_meta" and recs[0]["payload"]["id"] == sid
    assert recs[0]["payload"]["cwd"] == str(cwd) and recs[0]["payload"]["base_instructions"]["text"]
    items = [r["payload"] for r in recs if r["type"] == "response_item"]
    assert all(isinstance(it.get("content"), list) for it in items if it["type"] == "message")
    snaps = [it for it in items if it["type"] == "message" and any(c["type"] == "input_image" for c in it["content"])]
    assert len(snaps) == 1 and snaps[0]["role"] == "user"
    assert items[0]["content"][0]["text"] == FIRST and items[-1]["content"][0]["text"] == LAST
    calls = {it["call_id"] for it in items if it["type"] == "function_call"}
    assert calls == {it["call_id"] for it in items if it["type"] == "function_call_output"}   # every pair kept
    assert load(path).format == "codex"


def test_another_format_is_refused_in_one_line(tmp_path, capsys):
    src = tmp_path / "chat.json"
    src.write_text(json.dumps([{"role": "user", "content": "x " * 5000}, {"role": "assistant", "content": "ok"},
                               {"role": "user", "content": "go on"}]), encoding="utf-8")
    assert main(["compact", str(src), "--resume-file", "--budget", "3000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("snapglyph: error: --resume-file writes Claude Code, Codex, pi and Gemini CLI sessions; this is "
                       "openai, so "
                       "there is no agent session to write")


def _simulator():
    return Simulator(lambda dialect, body: answer(ANSWER), provider="native", context_window=200_000)


def _sent_with_pages(sim) -> dict:
    """The simulator's one request of the resumed conversation (it holds the session's first task), parsed; it
    carries the pages."""
    conv = rc.conversation(sim)
    assert len(conv) == 1 and conv[0]["kind"] == "ok" and conv[0]["images"], [e.get("kind") for e in sim.log]
    return conv[0]["body"]


def test_real_claude_code_resumes_the_written_session(world, capsys):
    exe = installed("claude")
    home, cwd = world
    src = rc.claude_session(home, cwd, str(uuid.uuid4()))
    sid, _ = _resume(src, capsys)
    written = [b for r in _records(src.with_name(f"{sid}.jsonl")) if isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b.get("type") == "image"]
    with _simulator() as sim:
        proc = run([exe, "-p", PROMPT, "--resume", sid], cwd, rc.claude_env(home, sim.base_url))
    assert proc.returncode == 0 and ANSWER in proc.stdout, (proc.stdout[-1000:], proc.stderr[-2000:])
    body = _sent_with_pages(sim)
    msgs = json.dumps(body["messages"])
    snap = [m for m in body["messages"] if rc._has_image(m)]
    assert len(snap) == 1 and "snapglyph snapshot:" in json.dumps(snap[0])
    assert FIRST in msgs and LAST in msgs and PROMPT in msgs
    pages = [b for b in snap[0]["content"] if b.get("type") == "image"]
    assert written and [p["source"]["data"] for p in pages] == [w["source"]["data"] for w in written]   # byte for byte


def test_real_codex_resumes_the_written_rollout(world, capsys):
    exe = installed("codex")
    home, cwd = world
    codex_home = home / ".codex"
    src = rc.codex_rollout(codex_home, cwd, "019e1625-0000-7000-8000-" + uuid.uuid4().hex[:12])
    sid, _ = _resume(src, capsys)
    written = [c["image_url"] for r in _records(next(src.parent.glob(f"rollout-*-{sid}.jsonl")))
               if r["type"] == "response_item" and r["payload"]["type"] == "message"
               for c in r["payload"]["content"] if c["type"] == "input_image"]
    with _simulator() as sim:
        rc.codex_config(codex_home, sim.base_url)
        proc = run([exe, "exec", "--skip-git-repo-check", "resume", sid, PROMPT], cwd,
                   {"HOME": str(home), "CODEX_HOME": str(codex_home), "SIM_API_KEY": "sk-offline"})
    assert proc.returncode == 0 and ANSWER in proc.stdout, (proc.stdout[-1000:], proc.stderr[-2000:])
    body = _sent_with_pages(sim)
    snap = [it for it in body["input"] if rc._has_image(it)]
    assert len(snap) == 1 and "snapglyph snapshot:" in json.dumps(snap[0])
    text = json.dumps(body["input"])
    assert FIRST in text and LAST in text and PROMPT in text
    assert written and [c["image_url"] for c in snap[0]["content"] if c["type"] == "input_image"] == written


def _sent_holding(sim, marker: str) -> dict:
    """The simulator's one request of the resumed conversation (holding ``marker``, its first task), parsed."""
    conv = rc.conversation(sim, marker)
    assert len(conv) == 1 and conv[0]["kind"] == "ok" and conv[0]["images"], [e.get("kind") for e in sim.log]
    return conv[0]["body"]


def test_real_claude_code_resumes_a_real_session_written_back(world, capsys):
    """The real Claude Code session of ../shared (1,593 records, 2.1.39), compacted and written back, resumed."""
    src0 = shared_path("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    exe = installed("claude")
    home, cwd = world
    src = rc.claude_project(home, cwd) / src0.name
    src.parent.mkdir(parents=True)
    src.write_bytes(src0.read_bytes())
    sid, _ = _resume(src, capsys)
    with _simulator() as sim:
        proc = run([exe, "-p", PROMPT, "--resume", sid], cwd, rc.claude_env(home, sim.base_url))
    assert proc.returncode == 0 and ANSWER in proc.stdout, (proc.stdout[-1000:], proc.stderr[-2000:])
    body = _sent_holding(sim, "Work on bead spotter-fum")
    assert body["model"] == "claude-opus-4-6" and PROMPT in json.dumps(body["messages"][-1])
    assert sum(1 for m in body["messages"] if rc._has_image(m)) == 1


def test_real_codex_resumes_a_real_rollout_written_back(world, capsys):
    """The real Codex rollout of ../shared (386 records, custom apply_patch calls), written back, resumed."""
    src0 = next(shared_path("data", "codex-rollout").glob("rollout-*.jsonl"))
    exe = installed("codex")
    home, cwd = world
    codex_home = home / ".codex"
    src = codex_home / "sessions" / "2026" / "05" / "11" / src0.name
    src.parent.mkdir(parents=True)
    # its provider is the test's ("sim"): Codex refuses to resume a thread under another provider than its own
    src.write_text(src0.read_text(encoding="utf-8").replace('"model_provider":"openai"', '"model_provider":"sim"', 1),
                   encoding="utf-8")
    sid, _ = _resume(src, capsys)
    with _simulator() as sim:
        rc.codex_config(codex_home, sim.base_url)
        proc = run([exe, "exec", "--skip-git-repo-check", "resume", sid, PROMPT], cwd,
                   {"HOME": str(home), "CODEX_HOME": str(codex_home), "SIM_API_KEY": "sk-offline"})
    assert proc.returncode == 0 and ANSWER in proc.stdout, (proc.stdout[-1000:], proc.stderr[-2000:])
    body = _sent_holding(sim, "show tools")
    assert sum(1 for it in body["input"] if rc._has_image(it)) == 1 and PROMPT in json.dumps(body["input"][-1])


def test_pi_session_written_back(world, capsys):
    home, cwd = world
    src = rc.pi_session(home / ".pi" / "agent", cwd, str(uuid.uuid4()))
    before = _digest(src)
    assert main(["compact", str(src), "--resume-file", "--budget", str(BUDGET),
                 "--store", str(src.with_suffix(".store.jsonl"))]) == 0
    err = capsys.readouterr().err
    assert _digest(src) == before
    m = re.search(r"resume it with: pi --session (\S+)$", err.strip(), re.M)
    assert m, err
    recs = _records(Path(m.group(1)))
    assert recs[0]["type"] == "session" and recs[0]["cwd"] == str(cwd) and recs[0]["id"] != _records(src)[0]["id"]
    assert [r["parentId"] for r in recs[1:]] == [None] + [r["id"] for r in recs[1:-1]]
    assert recs[1]["type"] == "model_change"
    snaps = [r for r in recs if r["type"] == "message" and any(b.get("type") == "image"
                                                                for b in r["message"]["content"])]
    assert len(snaps) == 1 and snaps[0]["message"]["role"] == "user"
    assert snaps[0]["message"]["content"][0]["mimeType"] == "image/png"
    t = load(Path(m.group(1)))
    assert t.format == "pi" and t.meta["snapshots"] == 1


def test_real_pi_resumes_the_written_session(world, capsys):
    exe = installed("pi")
    home, cwd = world
    agent = home / ".pi" / "agent"
    src = rc.pi_session(agent, cwd, str(uuid.uuid4()))
    assert main(["compact", str(src), "--resume-file", "--budget", str(BUDGET),
                 "--store", str(src.with_suffix(".store.jsonl"))]) == 0
    path = re.search(r"resume it with: pi --session (\S+)$", capsys.readouterr().err.strip(), re.M).group(1)
    with _simulator() as sim:
        rc.pi_models(agent, sim.base_url)
        proc = run([exe, "--provider", "sim", "--model", "gpt-5.4", "-p", "--session", path, PROMPT], cwd,
                   {"HOME": str(home), "PI_OFFLINE": "1"})
    assert proc.returncode == 0 and ANSWER in proc.stdout, (proc.stdout[-1000:], proc.stderr[-2000:])
    body = _sent_with_pages(sim)
    assert sum(1 for m in body["messages"] if rc._has_image(m)) == 1 and PROMPT in json.dumps(body["messages"][-1])


def test_real_pi_resumes_a_real_version_1_session_written_back(world, capsys):
    """The real pi session of ../shared (version 1: entries without ids, 914 messages), written back as a version 3
    file, resumed by the pinned pi."""
    src0 = shared_path("data", "pi-session", "large-session.jsonl")
    exe = installed("pi")
    home, cwd = world
    agent = home / ".pi" / "agent"
    src = agent / "sessions" / "real" / src0.name
    src.parent.mkdir(parents=True)
    # its working directory is the test's: pi refuses a session whose folder does not exist here
    src.write_text(src0.read_text(encoding="utf-8").replace('"cwd":"/Users/badlogic/workspaces/pi-mono"',
                                                            json.dumps({"cwd": str(cwd)})[1:-1], 1), encoding="utf-8")
    assert main(["compact", str(src), "--resume-file", "--store", str(src.with_suffix(".store.jsonl"))]) == 0
    path = Path(re.search(r"resume it with: pi --session (\S+)$", capsys.readouterr().err.strip(), re.M).group(1))
    recs = _records(path)
    assert recs[0]["version"] == 3 and all("id" in r for r in recs)
    first = next(r for r in recs if r["type"] == "message")["message"]["content"]
    with _simulator() as sim:
        rc.pi_models(agent, sim.base_url)
        proc = run([exe, "--provider", "sim", "--model", "gpt-5.4", "-p", "--session", path, PROMPT], cwd,
                   {"HOME": str(home), "PI_OFFLINE": "1"})
    assert proc.returncode == 0 and ANSWER in proc.stdout, (proc.stdout[-1000:], proc.stderr[-2000:])
    marker = (first if isinstance(first, str) else first[0]["text"])[:40]
    body = _sent_holding(sim, marker)
    assert sum(1 for m in body["messages"] if rc._has_image(m)) == 1 and PROMPT in json.dumps(body["messages"][-1])


def test_real_gemini_cli_resumes_the_written_session(world, capsys):
    exe = installed("gemini")
    home, cwd = world
    gemini = home / ".gemini"
    rc.gemini_settings(gemini)
    src = rc.gemini_session(gemini, cwd, str(uuid.uuid4()))
    sid, _ = _resume_as(src, capsys, r"gemini --resume")
    recs = _records(next(src.parent.glob(f"session-*-{sid[:8]}.jsonl")))
    assert recs[0]["sessionId"] == sid and recs[0]["projectHash"] == _records(src)[0]["projectHash"]
    snaps = [r for r in recs[1:] if isinstance(r.get("content"), list) and any("inlineData" in p for p in r["content"])]
    assert len(snaps) == 1 and snaps[0]["type"] == "user"
    with _simulator() as sim:
        proc = run([exe, "--skip-trust", "-m", "gemini-3.1-pro-preview", "--resume", sid, "-p", PROMPT], cwd,
                   {"HOME": str(home), "GEMINI_API_KEY": "offline-key", "GOOGLE_GEMINI_BASE_URL": sim.base_url,
                    "NO_COLOR": "1"})
    assert proc.returncode == 0 and ANSWER in proc.stdout, (proc.stdout[-1000:], proc.stderr[-2000:])
    body = _sent_with_pages(sim)
    assert sum(1 for c in body["contents"] if rc._has_image(c)) == 1 and PROMPT in json.dumps(body["contents"][-1])


def _resume_as(src, capsys, command: str) -> tuple[str, str]:
    """``snapglyph compact SRC --resume-file``; returns (the new session id, the printed command)."""
    before = _digest(src)
    assert main(["compact", str(src), "--resume-file", "--budget", str(BUDGET),
                 "--store", str(src.with_suffix(".store.jsonl"))]) == 0
    err = capsys.readouterr().err
    assert _digest(src) == before
    m = re.search(rf"resume it with: ({re.escape(command)} ([0-9a-f-]{{36}}))$", err.strip(), re.M)
    assert m, err
    return m.group(2), m.group(1)
