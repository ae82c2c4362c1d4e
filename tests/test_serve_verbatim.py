"""``snapglyph serve`` sends what the agent sent: outside the middle, the compacted request is the client's own.

Real-shaped requests (Codex's Responses body, Claude Code's Anthropic body) go through the proxy in front of the
simulator, overflow, and are compacted; the simulator's recording of the retried request is compared with what
the client sent, item by item, outside the middle.
"""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from snapglyph import validate
from snapglyph.serve.app import ServeConfig
from snapglyph.serve.run import Background
from snapglyph.serve.verbatim import MAX_BREAKPOINTS, item_ids

try:
    from snapglyph.testing import Simulator, answer
except ImportError:  # pragma: no cover - the simulator before its move into the library
    from snapglyph.testing import Simulator, answer

pytest.importorskip("uvicorn")

KEY = "sk-test-SECRET-4242"


@pytest.fixture
def caplog_serve(caplog):
    caplog.set_level(logging.INFO, logger="snapglyph.serve")
    return caplog


def _proxy(sim: Simulator, tmp_path, **kw) -> Background:
    return Background(ServeConfig(sim.base_url, state=tmp_path / "state", **kw)).start()


def _log(n: int) -> str:
    return "\n".join(f"tests/test_mod{n}.py::test_case_{k} PASSED [{k * 4 % 100:3d}%] in {k * 0.13:.2f}s "
                     f"worker gw{k % 4} seed {n * 1000 + k}" for k in range(40))


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "snapglyph.serve"]


def _snapshot_at(items: list, dialect: str) -> list[int]:
    out = []
    for k, it in enumerate(items):
        c = it.get("content") if isinstance(it, dict) else None
        texts = [c] if isinstance(c, str) else [b.get("text", "") for b in c or [] if isinstance(b, dict)]
        if any(t.startswith("snapglyph snapshot:") for t in texts):
            out.append(k)
    return out


def _own_tools(body: dict) -> dict:
    """``body`` without the ``recall_messages`` tool the proxy may add after the client's own (issue 29 item 3)."""
    tools = [t for t in body.get("tools") or [] if t.get("name") != "recall_messages"
             and (t.get("function") or {}).get("name") != "recall_messages"]
    return {**body, "tools": tools} if "tools" in body else body


def _compare(sent: dict, got: dict, field: str, dialect: str) -> tuple[int, int]:
    """Assert ``got`` is ``sent`` outside the middle: every other field equal (the client's tools kept, in front of
    any the proxy adds), the head a prefix and the tail a suffix of the client's items, exactly one snapshot item
    between them. Returns (head, tail) lengths."""
    assert got["tools"][:len(sent["tools"])] == sent["tools"]
    got = _own_tools(got)
    assert {k: v for k, v in got.items() if k != field} == {k: v for k, v in sent.items() if k != field}
    (snap,) = _snapshot_at(got[field], dialect)
    head, tail = got[field][:snap], got[field][snap + 1:]
    assert head == sent[field][:len(head)] and tail == sent[field][len(sent[field]) - len(tail):]
    assert len(head) + len(tail) < len(sent[field]) and tail
    return len(head), len(tail)


# -- Codex: a Responses request shaped as codex-rs builds it (codex-rs/codex-api/src/common.rs ResponsesApiRequest,
# codex-rs/core/src/client_common.rs ToolSpec; openai/codex, read 2026-12-04) -------------------------------------
def _codex_body(rounds: int, in_progress: bool = False) -> dict:
    items = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text":
            "<permissions instructions>Filesystem sandboxing: sandbox_mode is workspace-write; approval_policy is "
            "on-request: ask before running commands outside the workspace.</permissions instructions>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
            "# AGENTS.md instructions for /repo\n\nRun pytest before you finish."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
            "<environment_context>\n  <cwd>/repo</cwd>\n  <shell>bash</shell>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the flaky tests."}]},
    ]
    for n in range(rounds):
        items += [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**Running tests {n}**"}],
             "content": None, "encrypted_content": f"gAAAAABp{n:04d}" + "Zq9x" * 40},
            {"type": "function_call", "name": "shell", "namespace": None, "status": "completed",
             "arguments": json.dumps({"command": ["pytest", "-q", f"tests/test_mod{n}.py"]}), "call_id": f"call_{n}"},
            {"type": "function_call_output", "call_id": f"call_{n}", "output": _log(n)},
        ]
    items.append({"type": "message", "role": "assistant", "status": "completed",
                  "content": [{"type": "output_text", "text": "All modules pass but one; looking at it."}]})
    items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go on."}]})
    if in_progress:  # the turn at work: the model reasoned and called a tool, whose output is the newest item
        items += [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Reading the failure**"}],
                   "content": None, "encrypted_content": "gAAAAABpNEWEST" + "Zq9x" * 40},
                  {"type": "function_call", "name": "shell", "namespace": None, "status": "completed",
                   "arguments": json.dumps({"command": ["pytest", "-q", "-x"]}), "call_id": "call_newest"},
                  {"type": "function_call_output", "call_id": "call_newest", "output": "1 failed"}]
    return {
        "model": "gpt-5.1-codex", "instructions": "You are Codex, a coding agent based on GPT-5.",
        "input": items,
        "tools": [{"type": "function", "name": "shell", "description": "Runs a shell command.", "strict": False,
                   "parameters": {"type": "object", "properties": {"command": {"type": "array",
                                                                                "items": {"type": "string"}}},
                                  "required": ["command"], "additionalProperties": False}},
                  {"type": "local_shell"}, {"type": "web_search"},
                  {"type": "custom", "name": "apply_patch", "description": "Apply a patch.",
                   "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}}],
        "tool_choice": "auto", "parallel_tool_calls": True, "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False, "stream": False, "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199a3c2-6f7e-7b51-9d2f-3c1e5a8b7d10", "text": {"verbosity": "medium"},
        "client_metadata": {"x-codex-installation-id": "5f0c8e2a-1b7d-4c3e-9a6f-2d8b4e1c7a90"},
    }


def test_validate_accepts_a_codex_request():
    assert validate(_codex_body(3), "responses") == []


def test_codex_request_comes_out_unchanged_outside_the_middle(tmp_path, caplog_serve):
    body = _codex_body(14, in_progress=True)
    with Simulator([answer("looking")] * 4, provider="openai-responses", context_window=9000) as sim, \
            _proxy(sim, tmp_path) as bg:
        r = httpx.post(bg.url + "/v1/responses", json=body, headers={"authorization": f"Bearer {KEY}"}, timeout=120)
    assert r.status_code == 200, r.text
    assert [e["kind"] for e in sim.log] == ["overflow", "ok"]
    got = json.loads(sim.log[-1]["raw"])
    head, tail = _compare(body, got, "input", "responses")
    assert got["input"][:head] == body["input"][:4]                    # developer message and the first user turn
    assert got["instructions"] == body["instructions"]
    kept = [it for it in got["input"][head + 1:] if it.get("type") == "reasoning"]
    assert kept and all(it["encrypted_content"].startswith("gAAAAABp") for it in kept)
    assert validate(got, "responses") == []
    dropped = sum(1 for it in body["input"] if it.get("type") == "reasoning") - len(kept)
    (line,) = [x for x in _lines(caplog_serve) if " recovered " in x]
    assert f"{dropped} reasoning items of the middle dropped" in line


# -- Claude Code: system blocks and tools with cache_control, thinking with signatures, metadata.user_id -----------
def _claude_code_body(rounds: int) -> dict:
    cc = {"type": "ephemeral"}
    msgs: list[dict] = [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>As you answer, use the context below.</system-reminder>"},
        {"type": "text", "text": "Find why the nightly job is slow."}]}]
    for n in range(rounds):
        msgs += [
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": f"Read log {n} next.", "signature": f"EqQBCkYIBxgCKkB{n:03d}" + "s" * 60},
                {"type": "text", "text": f"Reading log {n}."},
                {"type": "tool_use", "id": f"toolu_{n:02d}", "name": "Read", "input": {"file_path": f"/logs/{n}.log"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n:02d}", "content": _log(n)}]},
        ]
    msgs[-1]["content"].append({"type": "text", "text": "Keep going.", "cache_control": cc})
    return {
        "model": "claude-sonnet-4-6", "max_tokens": 2048, "stream": False,
        "system": [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.",
                    "cache_control": cc},
                   {"type": "text", "text": "Here is useful information about the environment: cwd /repo",
                    "cache_control": cc}],
        "messages": msgs,
        "tools": [{"name": "Read", "description": "Reads a file.", "input_schema": {
            "type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}},
                  {"name": "Bash", "description": "Runs a command.", "input_schema": {
                      "type": "object", "properties": {"command": {"type": "string"}}}, "cache_control": cc}],
        "metadata": {"user_id": "user_3f2a_account__session_9b1c"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }


def _breakpoints(body: dict) -> list[tuple[str, int]]:
    out = [("tools", k) for k, t in enumerate(body["tools"]) if "cache_control" in t]
    out += [("system", k) for k, b in enumerate(body["system"]) if "cache_control" in b]
    out += [("messages", i) for i, m in enumerate(body["messages"]) if isinstance(m["content"], list)
            for b in m["content"] if "cache_control" in b]
    return out


def test_claude_code_request_comes_out_unchanged_outside_the_middle(tmp_path, caplog_serve):
    body = _claude_code_body(14)
    with Simulator([answer("found it")] * 4, provider="anthropic", context_window=9000) as sim, \
            _proxy(sim, tmp_path) as bg:
        r = httpx.post(bg.url + "/v1/messages", json=body, timeout=120,
                       headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"})
    assert r.status_code == 200, r.text
    assert [e["kind"] for e in sim.log] == ["overflow", "ok"]
    got = json.loads(sim.log[-1]["raw"])
    # the client had 4 breakpoints (a tool, 2 system blocks, its last message): the pages' one makes 5, so the
    # oldest of the client's (the tool's) is dropped, and only that
    sent_tools = json.loads(json.dumps(body["tools"]))
    del sent_tools[1]["cache_control"]
    assert _own_tools(got)["tools"] == sent_tools
    head, tail = _compare({**body, "tools": sent_tools}, got, "messages", "anthropic")
    assert got["system"] == body["system"] and got["metadata"] == body["metadata"]
    assert got["messages"][-1] == body["messages"][-1]                        # its cache_control kept
    assert any(b["type"] == "thinking" and b["signature"] for m in got["messages"][head + 1:] for b in m["content"])
    snap = got["messages"][head]["content"]
    images = [k for k, b in enumerate(snap) if b["type"] == "image"]
    assert images and [k for k, b in enumerate(snap) if "cache_control" in b] == [images[-1]]
    assert len(_breakpoints(got)) == MAX_BREAKPOINTS
    assert validate(got, "anthropic") == []
    (line,) = [x for x in _lines(caplog_serve) if " recovered " in x]
    assert "1 of the client's cache breakpoints dropped (the oldest, tools)" in line


def test_a_paged_tail_output_keeps_the_clients_cache_control(tmp_path):
    body = _claude_code_body(6)
    last = body["messages"][-1]["content"]
    last[0]["content"] = "\n".join(_log(k) for k in range(30))             # a huge output just came back
    last[0]["cache_control"] = last.pop()["cache_control"]
    with Simulator([answer("ok")] * 4, provider="anthropic", context_window=12000) as sim, \
            _proxy(sim, tmp_path) as bg:
        r = httpx.post(bg.url + "/v1/messages", json=body, timeout=120,
                       headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"})
    assert r.status_code == 200, r.text
    got = json.loads(sim.log[-1]["raw"])
    block = got["messages"][-1]["content"][0]
    assert block["content"].startswith("[snapglyph: tool result 1 of message #")
    assert block["cache_control"] == {"type": "ephemeral"} and block["tool_use_id"] == last[0]["tool_use_id"]
    assert validate(got, "anthropic") == []


def test_item_ids_follow_the_readers_numbering():
    from snapglyph.readers.registry import from_request
    for body, dialect in ((_codex_body(3), "responses"), (_claude_code_body(3), "anthropic")):
        ids = item_ids(body, dialect)
        msgs = from_request(body).messages
        # the user's words beside tool results are a message of their own, sent in their turn's item
        assert sorted(set(ids)) == [m.id for m in msgs if m.id >= ids[0] and not m.meta.get("beside_results")]


# -- the edges the breaker found (issue 29 item 7) -------------------------------------------------------------------
def _no_traceback(caplog) -> None:
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not errors, [r.getMessage() for r in errors]


@pytest.mark.parametrize("depth", [100_000, 2_000, 900])
def test_a_deeply_nested_body_is_relayed_never_a_500(tmp_path, caplog_serve, depth):
    raw = ('{"model": "claude-sonnet-4-6", "max_tokens": 10, "messages": [{"role": "user", "content": [{"type": '
           '"text", "text": "hi", "x": ' + '{"a": ' * depth + "1" + "}" * depth + "}]}]}").encode()
    with Simulator([answer("hi")] * 4, provider="anthropic", context_window=5000) as sim, \
            _proxy(sim, tmp_path, window=5000, compact_at=0.0001) as bg:
        r = httpx.post(bg.url + "/v1/messages", content=raw, timeout=60,
                       headers={"content-type": "application/json", "x-api-key": KEY})
    assert r.status_code < 500, r.text
    assert sim.log[-1]["raw"] == raw                          # relayed as it came; the simulator answered it
    _no_traceback(caplog_serve)


def test_an_error_whose_content_encoding_lies_is_relayed_as_it_came(tmp_path, caplog_serve):
    lie = '{"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}'
    with Simulator([answer("hi")], provider="anthropic", context_window=5000) as sim, \
            _proxy(sim, tmp_path) as bg:
        sim.inject(429, lie, {"Content-Encoding": "gzip"})
        with httpx.Client(headers={"accept-encoding": "identity"}) as c:
            with c.stream("POST", bg.url + "/v1/messages", json={"model": "claude-sonnet-4-6", "max_tokens": 10,
                          "messages": [{"role": "user", "content": "hi"}]}, headers={"x-api-key": KEY}) as r:
                got = b"".join(r.iter_raw())
    assert r.status_code == 429 and r.headers["content-encoding"] == "gzip" and got == lie.encode()
    _no_traceback(caplog_serve)


def test_a_client_that_disconnects_leaves_one_log_line(tmp_path, caplog_serve):
    import socket
    import time
    with Simulator([answer("hi")], provider="anthropic", context_window=5000) as sim, \
            _proxy(sim, tmp_path) as bg:
        host, port = bg.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: " + f"{host}:{port}".encode() +
                      b"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"model\": ")
            time.sleep(0.3)
        for _ in range(50):
            if _lines(caplog_serve):
                break
            time.sleep(0.1)
    lines = _lines(caplog_serve)
    assert len(lines) == 1 and "client disconnected" in lines[0], lines
    assert not sim.log
    _no_traceback(caplog_serve)


def test_status_answers_only_a_host_of_the_bound_address(tmp_path):
    with Simulator([], provider="anthropic") as sim, _proxy(sim, tmp_path) as bg:
        port = bg.url.rsplit(":", 1)[1]
        ok = [httpx.get(bg.url + "/snapglyph/status", headers={"host": h}) for h in
              (f"127.0.0.1:{port}", f"localhost:{port}")]
        bad = [httpx.get(bg.url + "/snapglyph/status", headers={"host": h}) for h in
               (f"attacker.example:{port}", "attacker.example", f"127.0.0.1:{int(port) + 1}", "")]
    assert [r.status_code for r in ok] == [200, 200] and all("conversations" in r.json() for r in ok)
    assert [r.status_code for r in bad] == [403] * 4 and not any("conversations" in r.text for r in bad)
