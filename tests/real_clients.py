"""The real agent CLIs from npm, for tests/test_real_clients.py: pinned installs, long sessions to resume, checks.

Each CLI is installed on first use with ``npm install --prefix`` into a cache folder outside the repository
(``~/.cache/snapglyph-test-npm/<package>-<version>/``, or the folder ``SNAPGLYPH_TEST_NPM_CACHE`` names) and reused
on later runs. A test skips, saying why, where npm is absent, the install fails (offline) or the installed CLI
does not start. Each CLI gets a temporary HOME holding its own configuration (base URL pointed at ``serve``, a
dummy key) and a long session of its own format to resume: a task, 12 tool rounds reading build logs of about
3,000 tokens each, a last answer. Resumed with one more prompt, that conversation overflows the simulator's
window: the "prompt is too long, resume it" case. The session formats were read from the installed packages'
own files and from what each CLI wrote in a first run against the simulator (2026-12-04).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from snapglyph import validate

FIRST = "FIRST-TASK-91c2: find the slowest worker in the build logs."
LAST = "LAST-ASSISTANT-5d0e: I have read all 12 parts."
PROMPT = "NEW-PROMPT-33aa: which worker was slowest?"
ANSWER = "SCRIPTED-ANSWER-7f3a: worker-3 was the slowest."
PARTS = 12
RUN_TIMEOUT = 120
"""Seconds a CLI run may take before the test fails (a hang guard: a run takes 1-3 s here)."""
INSTALL_TIMEOUT = 300


@dataclass(frozen=True)
class Cli:
    """One agent CLI on npm: its package, the pinned version and the command it installs."""

    package: str
    version: str
    command: str


CLIS = {
    "claude": Cli("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": Cli("@openai/codex", "0.171.0", "codex"),
    "pi": Cli("@mariozechner/pi-coding-agent", "0.73.1", "pi"),
    "gemini": Cli("@google/gemini-cli", "0.61.0", "gemini"),
}


def cache_root() -> Path:
    """The folder the CLIs are installed under (outside the repository)."""
    return Path(os.environ.get("SNAPGLYPH_TEST_NPM_CACHE") or Path.home() / ".cache" / "snapglyph-test-npm")


def installed(name: str) -> Path:
    """The path of CLI ``name``'s command, installed with npm on first use; skips the test, saying why, where npm
    is absent, the install fails or the command does not start."""
    cli = CLIS[name]
    folder = cache_root() / f"{cli.package.strip('@').replace('/', '+')}-{cli.version}"
    exe = folder / "node_modules" / ".bin" / cli.command
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"npm is not on PATH, so {cli.package}@{cli.version} cannot be installed")
        part = folder.with_name(f"{folder.name}.part-{os.getpid()}")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        try:
            p = subprocess.run([npm, "install", "--prefix", str(part), "--no-audit", "--no-fund", "--loglevel=error",
                                "--fetch-retries=1", f"{cli.package}@{cli.version}"], check=False, capture_output=True,
                               text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            shutil.rmtree(part, ignore_errors=True)
            pytest.skip(f"npm install {cli.package}@{cli.version} did not finish in {INSTALL_TIMEOUT} s (offline?)")
        if p.returncode != 0 or not (part / "node_modules" / ".bin" / cli.command).exists():
            shutil.rmtree(part, ignore_errors=True)
            lines = p.stderr.strip().splitlines() or ["no output"]
            why = next((ln for ln in lines if "Error:" in ln), lines[0])      # npm's FetchError line says most
            pytest.skip(f"npm install {cli.package}@{cli.version} failed (exit {p.returncode}): {why}")
        try:
            part.rename(folder)                         # atomic; another process that won the race keeps its copy
        except OSError:
            shutil.rmtree(part, ignore_errors=True)
    try:
        p = subprocess.run([str(exe), "--version"], check=False, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL, env={"PATH": os.environ.get("PATH", ""), "HOME": str(folder)})
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"{cli.package}@{cli.version} does not start here: {e}")
    if p.returncode != 0 or cli.version not in p.stdout + p.stderr:   # pi prints its version on stderr
        pytest.skip(f"{cli.package}@{cli.version} does not start here (exit {p.returncode}): "
                    f"{(p.stderr.strip().splitlines() or [p.stdout.strip()])[-1]}")
    return exe


def run(cmd: list, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """Run a CLI non-interactively (no terminal, empty stdin) with only ``env`` and PATH; fails the test with its
    output where it runs past :data:`RUN_TIMEOUT`."""
    try:
        return subprocess.run([str(c) for c in cmd], check=False, cwd=cwd,
                              env={"PATH": os.environ.get("PATH", ""), **env}, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{Path(cmd[0]).name} ran past {RUN_TIMEOUT} s; stdout {e.stdout!r:.500} stderr {e.stderr!r:.2000}")


def log_part(part: int) -> str:
    """Build log part ``part``: 200 lines, about 9,700 characters."""
    return "\n".join(f"12:{part:02d}:{i % 60:02d} worker-{i % 7} finished batch {part * 200 + i} in "
                     f"{(i * 37 + part) % 1000} ms" for i in range(200))


def _ts(k: int) -> str:
    return f"2026-12-01T10:{k // 60 % 60:02d}:{k % 60:02d}.000Z"


def _jsonl(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# -- Claude Code ---------------------------------------------------------------------------------------------------
def claude_project(home: Path, cwd: Path) -> Path:
    """Claude Code's folder of a working directory's sessions: ``~/.claude/projects/<cwd, non-alphanumerics as
    '-'>``."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def claude_session(home: Path, cwd: Path, sid: str) -> Path:
    """A long Claude Code session (``type`` user/assistant records chained by ``parentUuid``, as 2.1.x writes
    them) with Bash tool rounds; returns its file."""
    recs: list[dict] = []

    def add(kind: str, message: dict, **extra) -> None:
        recs.append({"parentUuid": recs[-1]["uuid"] if recs else None, "isSidechain": False, "userType": "external",
                     "cwd": str(cwd), "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": kind,
                     "message": message, "uuid": str(uuid.UUID(int=len(recs) + 1)), "timestamp": _ts(len(recs)),
                     **extra})

    def said(content: list, stop: str) -> dict:
        return {"model": "claude-sonnet-4-5", "id": f"msg_{len(recs):024d}", "type": "message", "role": "assistant",
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 10}}

    add("user", {"role": "user", "content": FIRST})
    for p in range(PARTS):
        tid = f"toolu_{p:024d}"
        add("assistant", said([{"type": "tool_use", "id": tid, "name": "Bash",
                                "input": {"command": f"cat build-{p}.log", "description": f"Show log part {p}"}}],
                              "tool_use"))
        add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": log_part(p),
                                                  "is_error": False}]},
            toolUseResult={"stdout": log_part(p), "stderr": "", "interrupted": False, "isImage": False})
    add("assistant", said([{"type": "text", "text": LAST}], "end_turn"))
    return _jsonl(claude_project(home, cwd) / f"{sid}.jsonl", recs)


def claude_env(home: Path, url: str) -> dict:
    """Claude Code pointed at ``url`` with a dummy key, its updater and nonessential traffic off, and its output
    limit at 8,192 tokens (``CLAUDE_CODE_MAX_OUTPUT_TOKENS``): 2.1.332 asks for 128,000 by default, more than the
    simulator's small windows hold, and serve relays a request whose output limit alone overflows the window (no
    compaction can fit it; ``providers.params.reserve_alone_overflows``), as it should; a real window of 200,000
    tokens or more holds that limit and the conversation beside it."""
    return {"HOME": str(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-offline-test",
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8192"}


# -- Codex ---------------------------------------------------------------------------------------------------------
def codex_rollout(codex_home: Path, cwd: Path, sid: str) -> Path:
    """A long Codex rollout (``session_meta``, then ``response_item`` lines: a user message, ``exec_command``
    function calls with their outputs, an assistant message); returns its file."""
    recs: list[dict] = []

    def add(kind: str, payload: dict) -> None:
        recs.append({"timestamp": _ts(len(recs)), "type": kind, "payload": payload})

    def msg(role: str, text: str, kind: str) -> dict:
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    add("session_meta", {"id": sid, "timestamp": _ts(0), "cwd": str(cwd), "originator": "codex_exec",
                         "cli_version": "0.125.0", "source": "exec", "model_provider": "sim",
                         "base_instructions": {"text": "You are Codex, a coding agent."}})
    add("response_item", msg("user", FIRST, "input_text"))
    for p in range(PARTS):
        add("response_item", {"type": "function_call", "name": "exec_command", "call_id": f"call_{p:04d}",
                              "arguments": json.dumps({"cmd": f"cat build-{p}.log"})})
        add("response_item", {"type": "function_call_output", "call_id": f"call_{p:04d}", "output": log_part(p)})
    add("response_item", msg("assistant", LAST, "output_text"))
    return _jsonl(codex_home / "sessions" / "2026" / "12" / "01" / f"rollout-2026-12-01T10-00-00-{sid}.jsonl", recs)


def codex_config(codex_home: Path, url: str) -> None:
    """``config.toml``: a model provider ``sim`` speaking Responses at ``url``/v1, its key from ``SIM_API_KEY``;
    analytics off."""
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "gpt-5.4"\nmodel_provider = "sim"\n\n[model_providers.sim]\nname = "snapglyph serve"\n'
        f'base_url = "{url}/v1"\nwire_api = "responses"\nenv_key = "SIM_API_KEY"\n\n[analytics]\nenabled = false\n',
        encoding="utf-8")


# -- pi ------------------------------------------------------------------------------------------------------------
def pi_session(agent_dir: Path, cwd: Path, sid: str) -> Path:
    """A long pi session (version 3: a ``session`` header, then ``message`` entries linked by ``parentId``:
    user, assistant ``toolCall`` and ``toolResult`` messages); returns its file."""
    recs: list[dict] = [{"type": "session", "version": 3, "id": sid, "timestamp": _ts(0), "cwd": str(cwd)}]
    usage = {"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    def add(entry: dict) -> None:
        recs.append({**entry, "id": f"{len(recs):08x}", "parentId": recs[-1]["id"] if len(recs) > 1 else None,
                     "timestamp": _ts(len(recs))})

    def said(content: list, stop: str) -> dict:
        return {"type": "message", "message": {"role": "assistant", "content": content, "api": "openai-completions",
                                               "provider": "sim", "model": "gpt-5.4", "usage": usage,
                                               "stopReason": stop, "timestamp": 1796400000000 + len(recs)}}

    add({"type": "model_change", "provider": "sim", "modelId": "gpt-5.4"})
    add({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": FIRST}],
                                        "timestamp": 1796400000000}})
    for p in range(PARTS):
        cid = f"call_{p:04d}"
        add(said([{"type": "toolCall", "id": cid, "name": "bash", "arguments": {"command": f"cat build-{p}.log"}}],
                 "toolUse"))
        add({"type": "message", "message": {"role": "toolResult", "toolCallId": cid, "toolName": "bash",
                                            "content": [{"type": "text", "text": log_part(p)}], "isError": False,
                                            "timestamp": 1796400000000 + len(recs)}})
    add(said([{"type": "text", "text": LAST}], "stop"))
    folder = "--" + str(cwd).strip("/").replace("/", "-") + "--"
    return _jsonl(agent_dir / "sessions" / folder / f"2026-12-01T10-00-00-000Z_{sid}.jsonl", recs)


def pi_models(agent_dir: Path, url: str) -> None:
    """``models.json``: a provider ``sim`` speaking OpenAI chat completions at ``url``/v1. Its window is set far
    above the simulator's, so pi's own compaction never runs: the overflow is the provider's to report."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"sim": {
        "baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "sk-offline",
        "models": [{"id": "gpt-5.4", "contextWindow": 1_000_000, "maxTokens": 4096, "input": ["text", "image"]}]}}}),
        encoding="utf-8")


# -- Gemini CLI ----------------------------------------------------------------------------------------------------
def gemini_session(gemini_dir: Path, cwd: Path, sid: str) -> Path:
    """A long Gemini CLI session (the JSONL append log: a metadata line, then ``user`` and ``gemini`` records,
    ``run_shell_command`` tool calls holding their ``functionResponse``), in the project folder ``projects.json``
    names for ``cwd``; returns its file."""
    (gemini_dir / "projects.json").write_text(json.dumps({"projects": {str(cwd): cwd.name}}), encoding="utf-8")
    recs: list[dict] = [{"sessionId": sid, "projectHash": hashlib.sha256(str(cwd).encode()).hexdigest(),
                         "startTime": _ts(0), "lastUpdated": _ts(0), "kind": "main"}]

    def add(kind: str, content, **extra) -> None:
        recs.append({"id": uuid.UUID(int=len(recs)).hex, "timestamp": _ts(len(recs)), "type": kind,
                     "content": content, **extra})

    add("user", [{"text": FIRST}])
    for p in range(PARTS):
        cid = f"call{p:04d}"
        add("gemini", "", model="gemini-3.1-pro-preview", toolCalls=[{
            "id": cid, "name": "run_shell_command", "args": {"command": f"cat build-{p}.log"}, "status": "success",
            "timestamp": _ts(len(recs)), "result": [{"functionResponse": {
                "id": cid, "name": "run_shell_command", "response": {"output": log_part(p)}}}]}])
    add("gemini", LAST, model="gemini-3.1-pro-preview")
    return _jsonl(gemini_dir / "tmp" / cwd.name / "chats" / f"session-2026-12-01T10-00-{sid[:8]}.jsonl", recs)


def gemini_settings(gemini_dir: Path) -> None:
    """``settings.json``: API-key auth, no update check, no telemetry or usage statistics."""
    gemini_dir.mkdir(parents=True, exist_ok=True)
    (gemini_dir / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False}}), encoding="utf-8")


# -- what the simulator received -----------------------------------------------------------------------------------
ITEMS = {"anthropic": "messages", "openai": "messages", "responses": "input", "gemini": "contents"}
RECALL = "recall_messages"


def _has_image(x) -> bool:
    """Whether a request item holds an image (Anthropic ``image``, Responses ``input_image``, chat ``image_url``,
    Gemini ``inlineData``), at any depth."""
    if isinstance(x, dict):
        return x.get("type") in ("image", "input_image", "image_url") or "inlineData" in x or any(
            _has_image(v) for v in x.values())
    return isinstance(x, list) and any(_has_image(v) for v in x)


def _tool_names(tools) -> list:
    out = []
    for t in tools or []:
        decls = t.get("functionDeclarations") if isinstance(t, dict) else None
        out += [d.get("name") for d in decls] if decls else [t.get("name") or (t.get("function") or {}).get("name")]
    return out


def conversation(sim, first: str = FIRST) -> list[dict]:
    """The simulator's log entries of the resumed conversation (requests holding the session's first task,
    ``first``), each with its parsed ``body``; side requests of the CLI (a title, a router's question) are left
    out."""
    return [{**e, "body": json.loads(e["raw"])} for e in sim.log
            if json.dumps(first)[1:-1].encode() in e.get("raw", b"")]


def assert_recovered(sim, dialect: str, proc: subprocess.CompletedProcess, first: str = FIRST,
                     turns: int = 1) -> tuple[dict, dict]:
    """The checks every CLI's run must pass; returns the overflowed and the compacted request bodies.

    The CLI exited 0 and printed the scripted answer; the simulator refused exactly one request (the resumed
    conversation, as the client sent it: ``serve`` relays a request that has not overflowed as its bytes) and then
    received it compacted, with page images in one snapshot item; outside that item the compacted request is the
    client's own: every top-level field but the item list and tools as sent, the client's tools first (then only
    ``recall_messages``), the items before the snapshot the client's first items (its first user message among
    them), the items after it the client's last ones (its new prompt among them); :func:`snapglyph.validate`
    finds no fault in it that the client's own request does not have. ``turns``: the CLI ran that many times in a
    row against one ``serve`` (later runs are compacted before they are sent: still one overflow in all).
    """
    out = f"exit {proc.returncode}\nstdout: {proc.stdout[-1500:]}\nstderr: {proc.stderr[-3000:]}, turns {turns}"
    conv = conversation(sim, first)
    kinds = [e.get("kind") for e in sim.log]
    assert kinds.count("overflow") == 1, (kinds, out)
    assert [e["kind"] for e in conv[:2]] == ["overflow", "ok"], ([e["kind"] for e in conv], out)
    assert proc.returncode == 0 and ANSWER in proc.stdout, out
    sent, got = conv[0]["body"], conv[1]["body"]
    assert conv[1]["images"] and conv[1]["prompt_tokens"] <= sim.context_window < conv[0]["prompt_tokens"]
    field = ITEMS[dialect]
    assert {k: v for k, v in got.items() if k not in (field, "tools")} == \
        {k: v for k, v in sent.items() if k not in (field, "tools")}
    names = _tool_names(got.get("tools"))
    assert names[:len(_tool_names(sent.get("tools")))] == _tool_names(sent.get("tools"))
    assert names[len(_tool_names(sent.get("tools"))):] in ([], [RECALL])
    if dialect != "gemini":                                        # the client's own definitions, as they came
        assert got["tools"][:len(sent.get("tools") or [])] == (sent.get("tools") or [])
    a, b = sent[field], got[field]
    snaps = [i for i, it in enumerate(b) if _has_image(it)]
    assert len(snaps) == 1 and not any(_has_image(it) for it in a), snaps
    s = snaps[0]
    head, tail = b[:s], b[s + 1:]
    assert head and tail and len(head) + len(tail) < len(a)
    assert head == a[:len(head)] and tail == a[len(a) - len(tail):]
    assert json.dumps(first)[1:-1] in json.dumps(head) and PROMPT in json.dumps(tail)
    assert {f.text for f in validate(got, dialect)} <= {f.text for f in validate(sent, dialect)}
    return sent, got
