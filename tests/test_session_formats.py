"""Issue 32, item 1 and 2: the session formats read right, files of several conversations, and the profile and
dialect chosen from the session.

Fixtures: ``tests/data/copilot_events.jsonl`` and ``tests/data/kimi_context.jsonl`` are written here in the shapes
of the real files as public readers of them quote them (Copilot CLI 0.0.407 events with ``toolTelemetry``; Kimi
CLI records with ``_system_prompt``, ``_checkpoint``, ``_usage``); no committed real session of either with a
license was found. The opencode session is built in the test in ``message-v2.ts``'s shapes. Files derived from
``../shared/data`` (real sessions) skip where it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import shared_path
from snapglyph.cli import main
from snapglyph.errors import FormatError
from snapglyph.providers.profiles import profile_for_session
from snapglyph.readers.registry import load, load_text

DATA = Path(__file__).resolve().parent / "data"


def _roles(t) -> list[str]:
    return [m.role for m in t.messages]


def _pairs_kept(t) -> bool:
    """Every tool call answered by a tool result and every result answering a call, by id."""
    calls = [p.call_id for m in t.messages for p in m.parts if p.kind == "tool_call"]
    results = [p.call_id for m in t.messages for p in m.parts if p.kind == "tool_result"]
    return sorted(calls) == sorted(results) and len(set(calls)) == len(calls)


def test_copilot_cli_events():
    t = load(DATA / "copilot_events.jsonl")
    assert t.format == "copilot" and t.model == "claude-sonnet-4.5"          # the last model_change
    assert _roles(t).count("user") == 2 and _roles(t).count("assistant") == 5 and _roles(t).count("tool") == 3
    assert _pairs_kept(t)
    assert t.meta["skipped"] == {"session.info": 1, "assistant.turn_start": 1, "tool.execution_start": 3,
                                 "sub-agent assistant.message": 1, "sub-agent tool.execution_complete": 1,
                                 "assistant.turn_end": 1}
    err = [m for m in t.messages if m.role == "tool" and m.parts[0].is_error]
    assert [m.parts[0].content[0].text for m in err] == ["path does not exist"]
    assert t.messages[0].meta["event_id"] == "00000002-ev" and t.meta["session"]["cwd"] == "/home/u/proj"
    assert t.messages[0].meta["transformedContent"].endswith("review since main")
    assert t.messages[0].parts[0].meta["typed"] is True


def test_kimi_cli_context():
    t = load(DATA / "kimi_context.jsonl")
    assert t.format == "kimi" and _roles(t) == ["system", "user", "assistant", "tool", "assistant", "user", "user",
                                                 "assistant", "tool"]
    assert _pairs_kept(t) and t.meta["skipped"] == {"_checkpoint": 2, "_usage": 2}
    assert t.meta["token_count"] == 11200 and t.meta["checkpoints"] == [0, 1]
    assert [p.kind for p in t.messages[2].parts] == ["thinking", "text", "tool_call"]
    assert [m.parts[0].meta.get("typed") for m in t.messages if m.role == "user"] == [True, False, True]


def _opencode_export() -> dict:
    def part(pid, mid, **kw):
        return {"id": pid, "sessionID": "ses_1", "messageID": mid, **kw}
    return {"info": {"id": "ses_1", "projectID": "p1", "directory": "/w", "title": "fix", "version": "1.1.3"},
            "messages": [
                {"info": {"id": "msg_01", "sessionID": "ses_1", "role": "user", "agent": "build",
                          "model": {"providerID": "openai", "modelID": "gpt-5.1-codex"}, "time": {"created": 1}},
                 "parts": [part("prt_01", "msg_01", type="text", text="fix the test"),
                           part("prt_02", "msg_01", type="text", text="<file>a.py</file>", synthetic=True),
                           part("prt_03", "msg_01", type="text", text="gone", ignored=True)]},
                {"info": {"id": "msg_02", "sessionID": "ses_1", "role": "assistant", "modelID": "gpt-5.1-codex",
                          "providerID": "openai", "parentID": "msg_01", "time": {"created": 2}},
                 "parts": [part("prt_04", "msg_02", type="step-start"),
                           part("prt_05", "msg_02", type="reasoning", text="look", time={"start": 2}),
                           part("prt_06", "msg_02", type="tool", callID="call_a", tool="bash",
                                state={"status": "completed", "input": {"command": "pytest"}, "output": "1 failed",
                                       "title": "pytest", "metadata": {}, "time": {"start": 2, "end": 3}}),
                           part("prt_07", "msg_02", type="step-finish", reason="tool-calls", cost=0,
                                tokens={"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}),
                           part("prt_08", "msg_02", type="step-start"),
                           part("prt_09", "msg_02", type="tool", callID="call_b", tool="edit",
                                state={"status": "error", "input": {"path": "a.py"}, "error": "no match",
                                       "time": {"start": 3, "end": 4}}),
                           part("prt_10", "msg_02", type="tool", callID="call_c", tool="bash",
                                state={"status": "running", "input": {"command": "pytest"}, "time": {"start": 4}}),
                           part("prt_11", "msg_02", type="patch", hash="h", files=["a.py"])]}]}


def test_opencode_export_and_stored_session(tmp_path):
    doc = _opencode_export()
    (tmp_path / "export.json").write_text(json.dumps(doc), encoding="utf-8")
    t = load(tmp_path / "export.json")
    assert t.format == "opencode" and t.model == "gpt-5.1-codex"
    assert _roles(t) == ["user", "assistant", "tool", "assistant", "tool", "tool"] and _pairs_kept(t)
    assert [p.text for p in t.messages[0].parts] == ["fix the test", "<file>a.py</file>"]
    assert [p.meta["typed"] for p in t.messages[0].parts] == [True, False]
    assert [m.parts[0].content[0].text for m in t.messages if m.role == "tool"] == [
        "1 failed", "no match", "[Tool execution was interrupted]"]
    assert t.meta["skipped"] == {"part:text ignored": 1, "part:step-finish": 1, "part:patch": 1}
    assert t.messages[1].meta["message_id"] == "msg_02" and t.messages[1].parts[0].meta["part_id"] == "prt_05"
    # the stored layout: storage/session/<project>/<id>.json, message/<id>/, part/<message id>/
    root = tmp_path / "storage"
    (root / "session" / "p1").mkdir(parents=True)
    (root / "session" / "p1" / "ses_1.json").write_text(json.dumps(doc["info"] | {"id": "ses_1"}), encoding="utf-8")
    for m in doc["messages"]:
        (root / "message" / "ses_1").mkdir(parents=True, exist_ok=True)
        (root / "message" / "ses_1" / f"{m['info']['id']}.json").write_text(json.dumps(m["info"]), encoding="utf-8")
        for p in m["parts"]:
            (root / "part" / m["info"]["id"]).mkdir(parents=True, exist_ok=True)
            (root / "part" / m["info"]["id"] / f"{p['id']}.json").write_text(json.dumps(p), encoding="utf-8")
    s = load(root / "session" / "p1" / "ses_1.json")
    assert s.format == "opencode" and [m.text() for m in s.messages] == [m.text() for m in t.messages]


def _eval_line(n: int) -> dict:
    return {"instance_id": f"repo__repo-{n}", "instruction": "fix", "metadata": {"llm_config": {"model": "gpt-5.4"}},
            "history": [{"id": 0, "source": "user", "action": "message", "args": {"content": f"task {n}"}},
                        {"id": 1, "source": "agent", "action": "message", "args": {"content": f"done {n}"}}]}


def test_openhands_evaluation_output_holds_several_conversations(tmp_path):
    p = tmp_path / "output.jsonl"
    p.write_text("".join(json.dumps(_eval_line(n)) + "\n" for n in (1, 2, 3)), encoding="utf-8")
    t = load(p)
    assert t.format == "openhands" and [m.text() for m in t.messages] == ["task 3", "done 3"]
    assert t.notes[0].startswith("this file holds 3 OpenHands conversation conversations (1: instance repo__repo-1")
    assert t.model == "gpt-5.4" and t.meta["instance_id"] == "repo__repo-3"
    assert [m.text() for m in load(p, conversation=2).messages] == ["task 2", "done 2"]
    with pytest.raises(FormatError, match=r"no conversation 4 in this file: it holds 3 \(1: instance repo__repo-1, "
                                          r"2: instance repo__repo-2, 3: instance repo__repo-3\)"):
        load(p, conversation=4)


def test_openhands_sdk_events_as_json_lines(tmp_path):
    folder = DATA / "openhands_conversation"
    events = [json.loads(f.read_text(encoding="utf-8")) for f in sorted((folder / "events").glob("event-*.json"))]
    p = tmp_path / "events.jsonl"
    p.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    a, b = load(folder), load(p)
    assert b.format == "openhands" and [(m.role, m.text()) for m in b.messages] == [(m.role, m.text())
                                                                                    for m in a.messages]


def _rollout_lines() -> list[str]:
    src = shared_path("data", "codex-rollout")
    return next(src.glob("rollout-*.jsonl")).read_text(encoding="utf-8").splitlines()


def test_codex_user_turns_held_only_as_events_and_ghost_snapshots():
    lines = _rollout_lines()
    full = load_text("\n".join(lines), name="r.jsonl")
    kept = [ln for ln in lines if not ('"type":"response_item"' in ln and '"role":"user"' in ln
                                       and '"type":"message"' in ln)]
    ghost = json.dumps({"timestamp": "2026-05-11T08:27:18Z", "type": "response_item",
                        "payload": {"type": "ghost_snapshot", "ghost_commit": {"id": "abc", "parent": None}}})
    t = load_text("\n".join(kept[:8] + [ghost] + kept[8:]), name="r.jsonl")
    users = [m.text() for m in t.messages if m.role == "user"]
    assert users == ["show tools", "let's update the defailt context compart to 90 in env var"]
    assert users == [m.text() for m in full.messages if m.role == "user"][1:]   # the AGENTS.md item has no event
    assert t.meta["user_turns_from_events"] == 2 and t.meta["skipped"]["ghost_snapshot"] == 1
    assert "event_msg:user_message" not in t.meta["skipped"] and full.meta["skipped"]["event_msg:user_message"] == 2
    assert _roles(t).count("assistant") == _roles(full).count("assistant") and _pairs_kept(t)


def test_sessions_concatenated_are_read_apart():
    claude = shared_path("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    a = claude.read_text(encoding="utf-8")
    one = load_text(a, name="s.jsonl")
    both = load_text(a + a, name="s.jsonl")
    assert len(both.messages) == len(one.messages) == 323 and both.notes[0].startswith(
        "this file holds 2 Claude Code conversations (1: session 8463c716-a2ea-4c14-9efa-87158ebd9f20 from ")
    assert both.notes[0].endswith("(choose one with --conversation N)") and one.notes == []
    pi = shared_path("data", "pi-session", "large-session.jsonl").read_text(encoding="utf-8")
    eight = load_text(pi * 8, name="p.jsonl")
    assert eight.notes[0].startswith("this file holds 8 pi conversations") and len(eight.messages) == 914
    for t in (both, eight):
        assert next(m.role for m in t.messages if m.role != "system") == "user"
    g = shared_path("data", "gemini-cli", "gemini.jsonl").read_text(encoding="utf-8")
    g2 = load_text(g + g, name="g.jsonl")
    assert g2.notes[0].startswith("this file holds 2 Gemini CLI conversations (1: session 0ab84937-")
    assert [m.text() for m in g2.messages] == [m.text() for m in load_text(g, name="g.jsonl").messages]
    lines = _rollout_lines()
    other = [ln.replace("019e1625-789d-76c0-80ab-3724b5ddb799", "019e1625-0000-7000-8000-000000000002")
             for ln in lines]
    c = load_text("\n".join(lines + other), name="r.jsonl")
    assert c.notes[0].startswith("this file holds 2 Codex conversations (1: rollout 019e1625-789d")
    assert len(c.messages) == len(load_text("\n".join(lines), name="r.jsonl").messages)


@pytest.mark.parametrize("fmt,model,profile,dialect", [
    ("codex", "gpt-5.1-codex-max", "openai-tiles-5", "responses"), ("codex", "gpt-5.5", "openai", "responses"),
    ("codex", None, "openai", "responses"), ("gemini-cli", "gemini-3-pro-preview", "gemini", "gemini"),
    ("gemini-cli", None, "gemini", "gemini"), ("claude-code", "claude-opus-4-7", "claude-hires", "anthropic"),
    ("claude-code", "claude-opus-4-6", "claude", "anthropic"), ("claude-code", None, "claude", "anthropic"),
    ("copilot", "gpt-5.4", "openai", "openai"), ("copilot", "claude-sonnet-4.5", "claude", "anthropic"),
    ("kimi", None, "openai", "openai"), ("pi", "gpt-5.4", "openai", "openai"),
])
def test_profile_and_dialect_follow_the_session(fmt, model, profile, dialect):
    prof, d, note = profile_for_session(fmt, model)
    assert (prof.name, d or prof.dialect) == (profile, dialect)
    assert note.startswith(f"profile {profile} and dialect {dialect}, from the session: {fmt} format, ")


def test_a_codex_rollout_compacts_for_openai_with_its_own_model(tmp_path, capsys):
    lines = _rollout_lines()
    src = tmp_path / "rollout.jsonl"
    src.write_text("\n".join(ln.replace('"model":"gpt-5.5"', '"model":"gpt-5.1-codex-max"') for ln in lines),
                   encoding="utf-8")
    out = tmp_path / "req.json"
    assert main(["compact", str(src), "--budget", "40000", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert ("snapglyph: note: profile openai-tiles-5 and dialect responses, from the session: codex format, model "
            "gpt-5.1-codex-max (gpt-5, gpt-5.1 and their codex models: tiles 70 + 140)") in err
    body = json.loads(out.read_text(encoding="utf-8"))
    assert body["model"] == "gpt-5.1-codex-max" and "input" in body and "messages" not in body


@pytest.mark.parametrize("model", ["gpt-5.1-codex-max", "gpt-5-codex", "gpt-5.1", "o3"])
def test_openai_models_are_accepted(model, tmp_path, capsys):
    src = tmp_path / "chat.json"
    src.write_text(json.dumps([{"role": "user", "content": "start"}, {"role": "assistant", "content": "word " * 9000},
                               {"role": "user", "content": "go on"}, {"role": "assistant", "content": "ok"},
                               {"role": "user", "content": "next"}]), encoding="utf-8")
    assert main(["compact", str(src), "--model", model, "--budget", "8000", "--out", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["model"] == model


def test_an_opus_4_7_passthrough_keeps_its_model(tmp_path, capsys):
    src = tmp_path / "s.jsonl"
    recs = [{"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "t",
             "message": {"role": "user", "content": "hi"}},
            {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "timestamp": "t",
             "message": {"role": "assistant", "model": "claude-opus-4-7", "content": [{"type": "text", "text": "yo"}]}},
            {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": "s", "timestamp": "t",
             "message": {"role": "user", "content": "more"}}]
    src.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    assert main(["compact", str(src), "--out", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["model"] == "claude-opus-4-7"
    assert "profile claude-hires and dialect anthropic" in capsys.readouterr().err


def _cline_export() -> str:
    """A Cline task exported as ``downloadTask`` writes it (export-markdown.ts): roles, blocks, ``---`` between."""
    msgs = [("User", "<task>\nAdd a --verbose flag to cli.py\n</task>\n<environment_details>\n# cwd\n/w\n"
                     "</environment_details>"),
            ("Assistant", "I'll read the file first.\n[Tool Use: read_file]\nPath: cli.py"),
            ("User", "[Tool]\nimport argparse\nparser = argparse.ArgumentParser()\n[Image]"),
            ("Assistant", "[Tool Use: write_to_file]\nPath: cli.py\nContent: import argparse"),
            ("User", "[Tool (Error)]\npermission denied"),
            ("User", "<feedback>\ntry again\n</feedback>"),
            ("Assistant", "Done: the flag is added.")]
    return "---\n\n".join(f"**{role}:**\n\n{body}\n\n" for role, body in msgs)


def test_cline_markdown_export(tmp_path):
    p = tmp_path / "cline_task_dec-7-2026_11-20-05-pm.md"
    p.write_text(_cline_export(), encoding="utf-8")
    t = load(p)
    assert t.format == "cline-md" and _pairs_kept(t)
    assert _roles(t) == ["user", "assistant", "tool", "assistant", "tool", "user", "assistant"]
    call = t.messages[1].parts[-1]
    assert (call.name, json.loads(call.arguments), call.meta["made_up_id"]) == ("read_file", {"path": "cli.py"}, True)
    assert t.messages[4].parts[0].is_error and t.meta["tool_calls"] == 2 and t.meta["images_not_exported"] == 1
    assert [p.meta.get("typed") for p in t.messages[0].parts] == [True] and t.messages[5].parts[0].meta["typed"]


def test_json_after_comment_lines(tmp_path):
    p = tmp_path / "api_conversation_history.json"
    p.write_text("// Roo Code task export\n// 2026-12-07\n" + json.dumps(
        [{"role": "user", "content": "<task>\nfix it\n</task>", "ts": 1},
         {"role": "assistant", "content": "fixed", "ts": 2}]), encoding="utf-8")
    t = load(p)
    assert t.format == "cline" and _roles(t) == ["user", "assistant"]
    assert t.notes == ["2 comment lines before the JSON left out"]


@pytest.mark.parametrize("given,said", [
    ("Claude", "--profile Claude: profile names are lower case; use --profile claude"),
    ("gpt-4o", "--profile gpt-4o: that is a model name; use --model gpt-4o (it reads by profile openai-tiles) or "
               "--profile openai-tiles"),
    ("nope", "--profile nope: no such profile; known profiles: claude, claude-hires, gemini, gemini-2, openai, "
             "openai-mini, openai-original, openai-tiles, openai-tiles-5, openai-tiles-o, pixtral, qwen2.5-vl, "
             "qwen3-vl (or give --model NAME)"),
])
def test_a_profile_mistake_is_answered_in_command_line_terms(given, said, tmp_path, capsys):
    assert main(["compact", str(DATA / "kimi_context.jsonl"), "--profile", given, "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"snapglyph: error: {said}"]
    assert main(["cost", str(DATA / "kimi_context.jsonl"), "--profile", given]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"snapglyph: error: {said}"


def test_opencode_sqlite_store_holds_several_sessions(tmp_path):
    """opencode's SQLite store (session.sql.ts: session, message and part rows whose data is the JSON opencode
    writes), built here; the session updated last is read by default."""
    import sqlite3
    doc = _opencode_export()
    p = tmp_path / "opencode.db"
    con = sqlite3.connect(p)
    con.executescript("create table session (id text primary key, project_id text, slug text, directory text, "
                      "title text, version text, time_created integer, time_updated integer);"
                      "create table message (id text primary key, session_id text, time_created integer, "
                      "time_updated integer, data text);"
                      "create table part (id text primary key, message_id text, session_id text, "
                      "time_created integer, time_updated integer, data text);")
    for sid, updated in (("ses_1", 50), ("ses_0", 10)):
        con.execute("insert into session values (?, 'p1', 's', '/w', ?, '1.1.3', 1, ?)", (sid, f"title {sid}", updated))
        for n, m in enumerate(doc["messages"]):
            info = {k: v for k, v in m["info"].items() if k not in ("id", "sessionID")}
            mid = f"{sid}-{m['info']['id']}"
            con.execute("insert into message values (?, ?, ?, ?, ?)", (mid, sid, n, n, json.dumps(info)))
            for q in m["parts"]:
                data = {k: v for k, v in q.items() if k not in ("id", "sessionID", "messageID")}
                con.execute("insert into part values (?, ?, ?, 0, 0, ?)", (f"{mid}-{q['id']}", mid, sid,
                                                                         json.dumps(data)))
    con.commit()
    con.close()
    t = load(p)
    assert t.format == "opencode" and t.meta["session"]["id"] == "ses_1" and t.model == "gpt-5.1-codex"
    assert _roles(t) == ["user", "assistant", "tool", "assistant", "tool", "tool"] and _pairs_kept(t)
    assert t.notes[0] == ("this file holds 2 opencode conversations (1: session ses_0 ('title ses_0', updated 10), "
                          "2: session ses_1 ('title ses_1', updated 50)); read the last, 2: session ses_1 ('title "
                          "ses_1', updated 50) (choose one with --conversation N)")
    assert load(p, conversation=1).meta["session"]["id"] == "ses_0"
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t (a)").connection.close()
    with pytest.raises(FormatError, match=r"other.db is a SQLite file in no supported layout \(expected opencode "
                                          r"session like ~/.local/share/opencode/opencode.db\)"):
        load(other)


def test_cost_prices_the_session_for_its_own_profile(capsys):
    assert main(["cost", str(DATA / "copilot_events.jsonl"), "--json"]) == 0
    assert [r["profile"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["claude"]   # claude-sonnet-4.5
    assert main(["cost", str(DATA / "kimi_context.jsonl"), "--json"]) == 0
    assert [r["profile"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["openai"]   # Kimi's default
    assert main(["cost", str(DATA / "kimi_context.jsonl"), "--json", "--profile", "gemini"]) == 0
    assert [r["profile"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["gemini"]


def test_sessions_concatenated_in_a_file_on_disk_are_read_apart(tmp_path):
    """The same through load() of a file (the path a line-at-a-time reader may take), and --conversation 1."""
    claude = shared_path("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    pi = shared_path("data", "pi-session", "large-session.jsonl")
    for src, n in ((claude, 323), (pi, 914)):
        p = tmp_path / f"two-{src.name}"
        p.write_bytes(src.read_bytes() * 2)
        t = load(p)
        assert len(t.messages) == n and t.notes[0].startswith("this file holds 2 ")
        assert len(load(p, conversation=1).messages) == n
        assert next(m.role for m in t.messages if m.role != "system") == "user"
