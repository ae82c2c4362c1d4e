"""The user's words are what a person typed: each reader marks typed text where its format says so, on the real
transcripts of ../shared/data (skipped where absent), and the section takes only that, newest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import shared_path
from snapglyph import Message, Part, load
from snapglyph.compaction.user_words import USER_HEADING, is_typed, user_texts, user_words_text
from snapglyph.readers.common import harness_text

DATA = Path(__file__).parent / "data"


def _typed(name: str) -> list[tuple[int, str]]:
    return user_texts(load(shared_path("data", *name.split("/"))).messages)


def test_aider_console_output_commands_and_its_own_input_are_not_typed():
    msgs = load(shared_path("data", "aider-chat-history", "chat-history.md")).messages
    typed = user_texts(msgs)
    by_id = {m.id: m for m in msgs}
    assert len(typed) == 454                                                # each text once
    assert all(not by_id[mid].meta.get("aider_output") for mid, _ in typed)
    assert not [t for _, t in typed if t.startswith(("/", "!", "# Question: ", "# Fix any errors below"))]
    outputs = [m for m in msgs if m.meta.get("aider_output")]
    assert len(outputs) == 2816 and all(m.parts[0].meta["typed"] is False for m in outputs)
    assert (dict(typed)[24]) == "Add tests for `subtree_only`."


def test_claude_code_meta_summaries_notifications_and_sub_agents_are_not_typed():
    msgs = load(shared_path("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")).messages
    users = [m for m in msgs if m.role == "user"]
    assert [m.text()[:20] for m in users] == ["Work on bead spotter", "This session is bein", "<task-notification>\n"]
    assert user_texts(msgs) == [(users[0].id, users[0].text())]            # only the first prompt was typed
    sub = load(shared_path("data", "claude-code-spotter", "agent-acompact-e1f845.jsonl")).messages
    assert sub and user_texts(sub) == []                                    # isMeta reminders, the agent's prompt


def test_codex_environment_context_and_agents_md_are_not_typed():
    typed = _typed("codex-rollout/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    assert [t for _, t in typed] == ["show tools", "let's update the defailt context compart to 90 in env var"]


def test_pi_typed_user_messages_and_not_its_summaries():
    msgs = load(shared_path("data", "pi-session", "before-compaction.jsonl")).messages
    typed = dict(user_texts(msgs))
    summaries = [m for m in msgs if m.meta.get("compaction")]
    assert len(summaries) == 2 and not any(m.id in typed for m in summaries)
    assert 45 <= len(typed) <= 55 and "ok, create a branch refactor" in typed.values()
    assert len(user_texts(load(shared_path("data", "pi-session", "large-session.jsonl")).messages)) >= 80


def test_gemini_cli_rewritten_content_is_not_typed():
    typed = _typed("gemini-cli/gemini.jsonl")
    assert [t for _, t in typed] == ["幫我做一個小修改 請幫我將上面確保執行時要透過 uv run 來執行 避免環境有問題"]
    assert [t[:12] for _, t in _typed("gemini-cli/session-2025-12-01T21-45-5b959dae.json")] == [
        "hi", "Explain what", "Make a copy "]


def test_openhands_user_source_is_typed():
    typed = _typed("openhands-trajectory/basic_gui_mode.json")
    assert len(typed) == 1 and typed[0][1].startswith("I want to create a VueJS app")


def test_cline_only_the_wrapped_words_are_typed():
    msgs = load(DATA / "roo_task" / "api_conversation_history.json").messages
    assert [t for _, t in user_texts(msgs)] == ["<task>\nAdd a --verbose flag to cli.py\n</task>"]


@pytest.mark.parametrize("text, agent", [
    ("<command-name>/clear</command-name>", "Claude Code"), ("[Request interrupted by user]", "Claude Code"),
    ("This session is being continued from a previous conversation that ran out", "Claude Code"),
    ("  <environment_context>\n<cwd>/w</cwd>\n</environment_context>", "Codex"),
    ("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>x</INSTRUCTIONS>", "Codex"),
    ("[execute_command for 'npm test'] Result:", "Cline"), ("<environment_details>x", "Cline"),
    ("(start of the conversation)", "snapglyph"), ("never use curl", ""), ("[1, 2] is a list", ""),
])
def test_harness_text_names_the_agent_that_wrote_it(text, agent):
    assert harness_text(text) == agent


def test_unmarked_request_text_counts_unless_a_harness_wrote_it():
    msgs = [Message(3, "user", [Part("text", text="<system-reminder>todo list</system-reminder>"),
                                Part("text", text="never use curl")]),
            Message(4, "user", [Part("text", text="marked", meta={"typed": False})])]
    assert user_texts(msgs) == [(3, "never use curl")]
    assert is_typed(Part("text", text="<task>x</task>", meta={"typed": True}))


def test_each_text_once_at_its_newest_and_nothing_already_in_the_head():
    head = [Message(0, "system", [Part("text", text="You help. " + "rule " * 30)]),
            Message(1, "user", [Part("text", text="fix the bug")])]
    msgs = [Message(2, "user", [Part("text", text="continue")]), Message(3, "user", [Part("text", text="fix the bug")]),
            Message(4, "user", [Part("text", text="rule " * 20)]), Message(5, "user", [Part("text", text="continue")])]
    assert user_texts(msgs, head) == [(5, "continue")]


def test_section_newest_first_and_one_line_for_what_the_cap_cuts():
    texts = [(3, "never use curl"), (9, "run the tests"), (12, "then commit")]
    full, ids = user_words_text(texts, 10_000, len)
    assert full == USER_HEADING + "\n[#12 user] then commit\n[#9 user] run the tests\n[#3 user] never use curl"
    assert ids == [12, 9, 3]
    for cap in range(len(USER_HEADING), len(full)):
        text, ids = user_words_text(texts, cap, len)
        assert len(text) <= cap
        if ids:
            assert ids == [12, 9, 3][:len(ids)] and text.startswith(full[:len(USER_HEADING) + 10])
            left = [3, 9, 12][:3 - len(ids)]
            assert text.endswith(f"not repeated here: #{left[0]})" if len(left) == 1 else
                                 f"{len(left)} older messages of the user not repeated here, #3 to #{max(left)})")
    assert user_words_text(texts, 0, len) == ("", [])
