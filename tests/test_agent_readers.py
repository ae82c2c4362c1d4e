"""Codex, Gemini CLI, Cline/Roo and OpenHands readers, on real files (../shared/data) and on files built from each
format's documented schema (tests/data). Message counts and tool-call pairs are counted here from the raw files,
without the readers' code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import shared_path
from snapglyph import compact, load, load_text, validate

DATA = Path(__file__).parent / "data"


def _calls(t) -> list[str]:
    return [p.call_id for m in t.messages for p in m.tool_calls()]


def _results(t) -> list[str]:
    return [p.call_id for m in t.messages for p in m.tool_results()]


def _roles(t) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in t.messages:
        out[m.role] = out.get(m.role, 0) + 1
    return out


# ------------------------------------------------------------------------------------------------------------ Codex
def _codex_file() -> Path:
    return next(shared_path("data", "codex-rollout").glob("rollout-*.jsonl"))


def test_codex_rollout_counts_from_raw():
    f = _codex_file()
    lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    items = [e["payload"] for e in lines if e["type"] == "response_item"]
    raw_calls = [i["call_id"] for i in items if i["type"] in ("function_call", "custom_tool_call")]
    raw_outputs = [i["call_id"] for i in items if i["type"] in ("function_call_output", "custom_tool_call_output")]
    # an assistant message is a run of assistant-side items between user/developer messages and outputs
    runs, open_run = 0, False
    for i in items:
        side = i["type"] in ("reasoning", "function_call", "custom_tool_call", "web_search_call") or (
            i["type"] == "message" and i["role"] == "assistant")
        runs += side and not open_run
        open_run = side
    t = load(f)
    assert t.format == "codex"
    assert (len(raw_calls), len(raw_outputs)) == (102, 102)
    assert _calls(t) == raw_calls and _results(t) == raw_outputs
    assert _roles(t) == {"system": 2, "user": 3, "assistant": runs, "tool": 102}
    assert t.meta["session"]["id"] == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert sum(v for k, v in t.meta["skipped"].items() if k.startswith("event_msg:")) == sum(
        e["type"] == "event_msg" for e in lines)
    assert t.model == "gpt-5.5"
    # encrypted reasoning rides as a signature, never as text
    thinking = [p for m in t.messages for p in m.parts if p.kind == "thinking"]
    assert len(thinking) == sum(i["type"] == "reasoning" for i in items) and all(p.signature for p in thinking)
    searches = [m for m in t.messages if any(p.text.startswith("[web search] ") for p in m.parts)]
    assert len(searches) >= 1 and all(m.role == "assistant" for m in searches)


def test_codex_compacted_record_and_legacy_layout():
    lines = [{"type": "session_meta", "payload": {"id": "s", "base_instructions": {"text": "sys"}}},
             {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                   "content": [{"type": "input_text", "text": "one"}]}},
             {"type": "compacted", "payload": {"message": "Summary of one.", "replacement_history": [{}, {}]}},
             {"type": "turn_context", "payload": {"model": "gpt-5-codex"}},
             {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                   "content": [{"type": "input_text", "text": "two"}]}}]
    t = load_text("\n".join(json.dumps(x) for x in lines), name="rollout.jsonl")
    assert t.format == "codex" and t.model == "gpt-5-codex"
    assert [(m.id, m.role, m.text()) for m in t.messages] == [
        (0, "system", "sys"), (1, "user", "one"), (2, "user", "Summary of one."), (3, "user", "two")]
    assert t.messages[2].meta["compacted"]["replacement_items"] == 2 and t.meta["compactions"] == 1
    legacy = [{"id": "x", "timestamp": "2025-05-01", "instructions": "be terse"},
              {"record_type": "state"},
              {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
              {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"},
              {"type": "function_call_output", "call_id": "c", "output": "ok"}]
    t = load_text("\n".join(json.dumps(x) for x in legacy), name="rollout.jsonl")
    assert t.format == "codex" and t.meta["legacy"] and t.meta["skipped"] == {"state": 1}
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool"]


# ------------------------------------------------------------------------------------------------------- Gemini CLI
def test_gemini_cli_legacy_json_counts_from_raw():
    f = shared_path("data", "gemini-cli", "session-2025-12-01T21-45-5b959dae.json")
    raw = json.loads(f.read_text(encoding="utf-8"))["messages"]
    raw_calls = [tc["id"] for m in raw if m["type"] == "gemini" for tc in m.get("toolCalls") or []]
    t = load(f)
    assert t.format == "gemini-cli" and len(raw_calls) == 10
    assert _calls(t) == raw_calls and _results(t) == raw_calls
    assert _roles(t) == {"user": sum(m["type"] == "user" for m in raw),
                         "assistant": sum(m["type"] == "gemini" for m in raw),
                         "tool": sum(bool(m.get("toolCalls")) for m in raw)}
    assert [m.meta["record_id"] for m in t.messages if m.role != "tool"] == [m["id"] for m in raw]


def test_gemini_cli_jsonl_last_record_wins():
    f = shared_path("data", "gemini-cli", "gemini.jsonl")
    lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    last: dict[str, dict] = {}
    for e in lines:
        if isinstance(e.get("id"), str):
            last[e["id"]] = e
    kept = [m for m in last.values() if m["type"] in ("user", "gemini")]
    raw_calls = [tc["id"] for m in kept for tc in m.get("toolCalls") or []]
    t = load(f)
    assert t.format == "gemini-cli" and len(raw_calls) == 12
    assert _calls(t) == raw_calls and _results(t) == raw_calls
    assert [m.meta["record_id"] for m in t.messages if m.role != "tool"] == [m["id"] for m in kept]
    assert t.meta["skipped"] == {"info": 2}
    assert t.notes == ["5 message records were written again under an earlier id; the last record of each id is "
                       "read, in the place of the first, as Gemini CLI does"]
    assert t.meta["session"]["sessionId"] == "0ab84937-9fe7-4284-986a-33c832af0b6a"


def test_gemini_cli_rewind_and_slash_commands():
    log = [{"sessionId": "s", "projectHash": "h"},
           {"id": "u1", "type": "user", "content": "first"},
           {"id": "g1", "type": "gemini", "content": "answer one"},
           {"id": "u2", "type": "user", "content": "second, to be rewound"},
           {"id": "g2", "type": "gemini", "content": "answer two"},
           {"$rewindTo": "u2"},
           {"id": "u3", "type": "user", "content": "/stats"},
           {"id": "u4", "type": "user", "content": [{"text": "third"}]},
           {"$set": {"summary": "a test"}}]
    t = load_text("\n".join(json.dumps(x) for x in log), name="session-x.jsonl")
    assert [m.text() for m in t.messages] == ["first", "answer one", "third"]
    assert t.notes == ["2 messages were removed by $rewindTo records, as Gemini CLI does"]
    assert t.meta["skipped"] == {"slash commands": 1} and t.meta["session"]["summary"] == "a test"


# -------------------------------------------------------------------------------------------------------- Cline/Roo
def test_roo_history_hides_condensed_and_truncated():
    f = DATA / "roo_task" / "api_conversation_history.json"
    raw = json.loads(f.read_text(encoding="utf-8"))
    summaries = {m["condenseId"] for m in raw if m.get("isSummary")}
    markers = {m["truncationId"] for m in raw if m.get("isTruncationMarker")}
    live = [m for m in raw if m.get("condenseParent") not in summaries and m.get("truncationParent") not in markers
            and m.get("type") != "reasoning"]
    raw_calls = [b["id"] for m in live if isinstance(m["content"], list) for b in m["content"]
                 if b["type"] == "tool_use"]
    t = load(f)
    assert t.format == "cline"
    # the user text beside the results of #3 is a user message of its own (#4, issue 31)
    assert len(t.messages) == len(live) + 1 == 8 and (t.messages[3].role, t.messages[4].role) == ("tool", "user")
    assert _calls(t) == raw_calls == ["toolu_02", "toolu_03", "toolu_04"] and _results(t) == raw_calls
    assert (t.meta["condensed"], t.meta["truncated"], t.meta["reasoning"]) == (3, 1, 1)
    assert [m.meta["cline"]["ts"] for k, m in enumerate(t.messages) if k != 4] == [m["ts"] for m in live]
    thinking = t.messages[2].parts[0]
    assert thinking.kind == "thinking" and thinking.meta["redacted"] and not thinking.text


# -------------------------------------------------------------------------------------------------------- OpenHands
def test_openhands_v0_trajectory_counts_from_raw():
    f = shared_path("data", "openhands-trajectory", "basic_gui_mode.json")
    raw = json.loads(f.read_text(encoding="utf-8"))
    actions = [e for e in raw if "action" in e and e.get("tool_call_metadata")]
    raw_calls = [e["tool_call_metadata"]["tool_call_id"] for e in actions]
    raw_obs = [e["tool_call_metadata"]["tool_call_id"] for e in raw if "observation" in e
               and e.get("tool_call_metadata")]
    responses = {e["tool_call_metadata"]["model_response"]["id"] for e in actions}
    t = load(f)
    assert t.format == "openhands" and len(raw_calls) == 4
    assert _calls(t) == raw_calls and _results(t) == raw_obs
    messages = [e for e in raw if e.get("action") == "message"]
    assert _roles(t) == {"user": sum(e["source"] == "user" for e in messages),
                         "assistant": len(responses) + sum(e["source"] == "agent" for e in messages), "tool": 4}
    assert t.meta["skipped"] == {"agent_state_changed": 4, "change_agent_state": 1, "null": 3}
    assert t.model == "claude-3-5-sonnet-20241022"
    run = next(m for m in t.messages if m.role == "tool")
    assert run.parts[0].result_text() == "\n[The command completed with exit code 0.]"


def test_openhands_sdk_event_folder():
    folder = DATA / "openhands_conversation"
    events = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((folder / "events").glob("event-*.json"))]
    forgotten = {i for e in events if e["kind"] == "Condensation" for i in e["forgotten_event_ids"]}
    raw_calls = [e["tool_call_id"] for e in events if e["kind"] == "ActionEvent" and e["id"] not in forgotten]
    raw_obs = [e["tool_call_id"] for e in events if e["kind"] in ("ObservationEvent", "AgentErrorEvent",
                                                                   "UserRejectObservation")
               and e["id"] not in forgotten]
    t = load(folder)
    assert t.format == "openhands" and t.model == "anthropic/claude-sonnet-4-5"
    assert _calls(t) == raw_calls == ["call_1", "call_2", "call_4"] and _results(t) == raw_obs
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "tool", "user", "assistant",
                                            "tool", "assistant"]
    assert t.messages[5].text() == "The agent tried to delete src/vendor; the user refused."
    assert t.meta["condensed"] == 2 and t.meta["skipped"] == {"ConversationStateUpdateEvent": 1}
    assert t.tools[0]["name"] == "terminal" and t.messages[2].meta["event_ids"] == ["ev-a1", "ev-a2"]
    assert t.messages[7].parts[0].is_error
    assert load(folder / "events").messages == t.messages


def test_folder_without_events_is_refused(tmp_path):
    from snapglyph import FormatError
    with pytest.raises(FormatError, match=r"is a directory in no supported layout \(expected OpenHands conversation "
                                          r"like .* holding events/event-\*\.json\)"):
        load(tmp_path)


# ------------------------------------------------------------------------------------------------------ compaction
REAL = [("codex-rollout", None), ("gemini-cli", "session-2025-12-01T21-45-5b959dae.json"),
        ("gemini-cli", "gemini.jsonl"), ("openhands-trajectory", "basic_gui_mode.json")]
DIALECTS = ["openai", "anthropic", "responses", "gemini"]
PROFILE = {"openai": "openai", "anthropic": "claude", "responses": "openai", "gemini": "gemini-2"}


def _transcript(folder: str, name: str | None):
    if folder in ("roo", "openhands-sdk"):
        return load(DATA / ("roo_task/api_conversation_history.json" if folder == "roo" else "openhands_conversation"))
    p = shared_path("data", folder)
    return load(next(p.glob("rollout-*.jsonl")) if name is None else p / name)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("folder,name", REAL + [("roo", None), ("openhands-sdk", None)])
def test_agent_transcripts_compact_to_valid_requests(folder, name, dialect):
    t = _transcript(folder, name)
    prof = PROFILE[dialect]
    full = compact(t, profile=prof, dialect=dialect, budget=10_000_000, max_tokens=256)
    assert validate(full.request, dialect, profile=prof) == []
    if folder in ("roo", "openhands-sdk"):
        return  # too small for a page to cost less than its text: the whole conversation is sent as is
    for num, den in ((2, 3), (3, 4), (4, 5)):  # the first budget under the whole that leaves a page beside the tail
        budget = 256 + (full.tokens_before - 256) * num // den
        res = compact(t, profile=prof, dialect=dialect, budget=budget, max_tokens=256, allow_empty_middle=True)
        if res.pages:
            break
    assert res.pages, "the budget must force a middle"
    assert validate(res.request, dialect, profile=prof) == []
    assert res.tokens_after < res.tokens_before
    assert res.tail_ids[-1] == max(m.id for m in t.messages)


# ---------------------------------------------------------------------------------------------------- formats list
def test_formats_lists_every_detected_format(capsys):
    from snapglyph.cli import main
    from snapglyph.readers.registry import FORMATS
    assert main(["formats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["format", "reads", "example"] and len(lines) == len(FORMATS) + 1
    codex = next(x for x in lines if x.startswith("codex "))
    assert codex.endswith("~/.codex/sessions/2026/05/11/rollout-2026-05-11T11-26-55-<id>.jsonl")
    assert main(["formats", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["format"] for r in rows] == list(FORMATS) and rows[0]["example"].startswith("~/.claude/projects/")


def test_cli_compacts_an_openhands_folder_in_the_gemini_dialect(tmp_path, capsys):
    from snapglyph.cli import main
    out = tmp_path / "req.json"
    assert main(["compact", str(DATA / "openhands_conversation"), "--profile", "gemini-2", "--out", str(out)]) == 0
    body = json.loads(out.read_text(encoding="utf-8"))
    assert validate(body, "gemini", profile="gemini-2") == []
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "user", "model", "user", "model"]
    assert body["systemInstruction"] == {"parts": [{"text": "You are OpenHands agent, a helpful AI assistant."}]}
