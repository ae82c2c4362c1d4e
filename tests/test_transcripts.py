"""Transcript readers on the real transcripts in ../shared/data and the cases in ../shared/cases.

The expected counts were checked by an independent count of the source (see each test's comment), not by reading
this project's output back.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from conftest import shared_path
from snapglyph import Transcript, load

CC_MAIN = ("claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
CC_SUB = ("claude-code-spotter", "agent-acompact-e1f845.jsonl")
PI_LARGE = ("pi-session", "large-session.jsonl")
PI_COMPACT = ("pi-session", "before-compaction.jsonl")
SWE = ("swe-agent-traj", "marshmallow-code__marshmallow-1867.traj")
AIDER = ("aider-chat-history", "chat-history.md")


@pytest.fixture(scope="module")
def loaded():
    """Each real transcript loaded once per module (keyed by its path parts)."""
    cache: dict = {}

    def get(parts):
        if parts not in cache:
            cache[parts] = load(shared_path("data", *parts))
        return cache[parts]
    return get


def unanswered_rounds(t: Transcript) -> list[int]:
    """Ids of assistant messages whose tool calls are not all answered by the tool messages right after them."""
    bad = []
    msgs = t.messages
    for i, m in enumerate(msgs):
        calls = sorted(p.call_id for p in m.tool_calls())
        if not calls:
            continue
        got, j = [], i + 1
        while j < len(msgs) and msgs[j].role == "tool":
            got += [p.call_id for p in msgs[j].tool_results()]
            j += 1
        if sorted(got) != calls:
            bad.append(m.id)
    return bad


def orphan_results(t: Transcript) -> list[int]:
    """Ids of tool messages holding a result whose call is not in the nearest preceding assistant message."""
    bad, calls = [], set()
    for m in t.messages:
        if m.role == "assistant":
            calls = {p.call_id for p in m.tool_calls()}
        elif m.role == "tool" and any(p.call_id not in calls for p in m.tool_results()):
            bad.append(m.id)
        elif m.role == "user":
            calls = set()
    return bad


# (parts, format, messages, roles). Independent counts:
# - Claude Code main: 458 user/assistant lines = 180 user lines (177 tool_result-only, 2 strings, 1 compaction
#   summary) + 278 assistant lines with 143 distinct message.id -> 180 + 143 = 323 messages.
# - Claude Code sub-agent: 5 lines, 5 messages (4 user strings, 1 assistant).
# - pi large: 914 `message` entries (88 user, 453 assistant, 373 toolResult); no compaction entries.
# - pi before-compaction: 990 `message` entries + 2 `compaction` entries = 992 (55 user + 3 bashExecution + 2
#   compaction summaries = 60 user).
# - SWE-agent: len(history) == 28.
# - aider: an awk pass over the line classes (#### / > / session marker / other) counts 1776 runs of `#### ` lines,
#   2816 runs of `> ` lines and 1213 runs of other lines holding a non-blank line: 5805.
EXPECTED = [
    (CC_MAIN, "claude-code", 323, {"user": 3, "assistant": 143, "tool": 177}),
    (CC_SUB, "claude-code", 5, {"user": 4, "assistant": 1}),
    (PI_LARGE, "pi", 914, {"user": 88, "assistant": 453, "tool": 373}),
    (PI_COMPACT, "pi", 992, {"user": 60, "assistant": 484, "tool": 448}),
    (SWE, "swe-agent", 28, {"system": 1, "user": 1, "assistant": 13, "tool": 13}),
    (AIDER, "aider", 5805, {"user": 4592, "assistant": 1213}),
]


@pytest.mark.parametrize("parts,fmt,n,roles", EXPECTED, ids=[e[0][1][:24] for e in EXPECTED])
def test_real_transcript_counts(loaded, parts, fmt, n, roles):
    t = loaded(parts)
    assert t.format == fmt
    assert len(t.messages) == n
    assert dict(Counter(m.role for m in t.messages)) == roles
    assert [m.id for m in t.messages] == list(range(n))


def test_claude_code_active_branch(loaded):
    """All 458 message lines are on the active branch once the parallel-call side entries are added back."""
    t = loaded(CC_MAIN)
    assert t.meta["message_entries"] == 458
    assert t.meta["branch_entries"] == 458
    assert t.meta["side_entries"] == 22  # parallel tool calls: 3 assistant blocks and 19 results off the chain
    assert t.meta["skipped"] == {"progress": 1117, "file-history-snapshot": 13, "system": 4, "queue-operation": 1}
    assert sum(len(m.tool_calls()) for m in t.messages) == 177
    assert sum(len(m.tool_results()) for m in t.messages) == 177
    assert unanswered_rounds(t) == [] and orphan_results(t) == []
    # the compaction boundary is crossed (history before it kept) and the summary is an ordinary user message
    assert len(t.meta["compact_boundaries"]) == 1 and t.meta["compact_boundaries"][0]["preTokens"] == 167731
    summaries = [m for m in t.messages if m.meta.get("compact_summary")]
    assert [m.role for m in summaries] == ["user"] and summaries[0].id == 160
    assert summaries[0].text().startswith("This session is being continued from a previous conversation")
    assert t.messages[0].text().startswith("Work on bead spotter-fum.")
    assert t.model == "claude-opus-4-6"
    # 19 thinking blocks with their signatures, never as text
    thinking = [p for m in t.messages for p in m.parts if p.kind == "thinking"]
    assert len(thinking) == 19
    texts = "\n".join(m.text() for m in t.messages)
    assert all(p.signature and p.signature not in texts for p in thinking if len(p.signature) > 20)


def test_claude_code_merges_blocks_of_one_message(loaded):
    t = loaded(CC_MAIN)
    ids = [m.meta["message_id"] for m in t.messages if m.role == "assistant"]
    assert len(ids) == len(set(ids)) == 143
    assert sum(len(m.meta["uuids"]) for m in t.messages if m.role == "assistant") == 278


def test_claude_code_subagent_fragment(loaded):
    t = loaded(CC_SUB)
    assert t.meta["fragment"] is True
    assert t.messages[-1].role == "assistant"
    assert t.messages[-2].text().startswith("Your task is to create a detailed summary")


def test_pi_sessions_pairs(loaded):
    """Every result answers a call; the calls left unanswered are exactly those the source never answered."""
    for parts, unanswered in ((PI_LARGE, [30, 216, 737]), (PI_COMPACT, [368, 380, 622, 672])):
        t = loaded(parts)
        assert orphan_results(t) == []
        assert unanswered_rounds(t) == unanswered
        # all but one are assistant turns that ended in an error or were aborted
        reasons = Counter(t.messages[i].meta.get("stopReason") for i in unanswered)
        assert set(reasons) <= {"error", "aborted", "toolUse"}
        results = {p.call_id for m in t.messages for p in m.tool_results()}
        calls = {p.call_id for m in t.messages for p in m.tool_calls()}
        assert results <= calls


def test_pi_thinking_signatures_stay_out_of_text(loaded):
    t = loaded(PI_COMPACT)
    thinking = [p for m in t.messages for p in m.parts if p.kind == "thinking"]
    assert len(thinking) == 49
    signed = [p for p in thinking if p.signature]
    assert signed, "the fixture carries opaque thinking signatures"
    everything = "\n".join(p.text for m in t.messages for p in m.parts) + "\n".join(
        c.text for m in t.messages for p in m.tool_results() for c in p.content)
    assert not any(p.signature in everything for p in signed)
    compactions = [m for m in t.messages if "compaction" in m.meta]
    assert len(compactions) == 2
    assert all(m.role == "user" and m.text().startswith("# Context Checkpoint") for m in compactions)
    assert t.model == "claude-opus-4-5"


def test_pi_aborted_turn_with_empty_content(loaded):
    t = loaded(PI_LARGE)
    empty = [m for m in t.messages if not m.parts]
    assert len(empty) == 14 and all(m.role == "assistant" for m in empty)
    assert all(m.meta.get("stopReason") in ("aborted", "error") for m in empty)


def test_swe_agent(loaded):
    t = loaded(SWE)
    assert t.messages[0].role == "system" and t.messages[0].text().startswith("SETTING: You are an autonomous")
    assert unanswered_rounds(t) == [] and orphan_results(t) == []
    first_call = t.messages[2].tool_calls()[0]
    assert (first_call.name, first_call.arguments, first_call.call_id) == (
        "bash", '{"command":"ls -F"}', "call_9diWc1DYm4RLmPfHgIaP2wd")
    extra = t.messages[2].meta["extra"]
    assert extra["action"] == "ls -F" and extra["agent"] == "main" and extra["message_type"] == "action"
    assert t.messages[3].meta["extra"]["tool_call_ids"] == ["call_9diWc1DYm4RLmPfHgIaP2wd"]
    assert t.messages[3].tool_results()[0].name == "bash"
    assert "\r\n" in t.meta["info"]["submission"]


def test_aider(loaded):
    t = loaded(AIDER)
    assert len(t.meta["sessions"]) == 1133
    assert t.meta["preamble"] == "-*- mode: fundamental -*-"
    outputs = [m for m in t.messages if m.meta.get("aider_output")]
    assert len(outputs) == 2816 and all(m.role == "user" for m in outputs)
    assert not any(m.role == "tool" for m in t.messages)
    first_user = next(m for m in t.messages if m.role == "user" and not m.meta.get("aider_output"))
    assert first_user.text().startswith("# Fix any errors below, if possible.\n\n## Running:")
    assert not any(line.endswith("  ") for line in first_user.text().split("\n")[:3])


def test_anthropic_case():
    t = load(shared_path("cases", "anthropic_parallel_cut.json"))
    assert t.format == "anthropic" and t.model == "claude-x"
    assert [m.role for m in t.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert t.meta["cut_hint"]["tail_from"] == 4 and t.meta["max_tokens"] == 1024
    assert [len(m.tool_calls()) for m in t.messages] == [0, 1, 0, 2, 0, 0, 0]
    assert unanswered_rounds(t) == [] and orphan_results(t) == []
    body = json.loads(shared_path("cases", "anthropic_parallel_cut.json").read_text())["request"]
    block = body["messages"][3]["content"][1]
    call = t.messages[3].tool_calls()[0]
    assert call.arguments == json.dumps(block["input"], ensure_ascii=False) and call.call_id == block["id"]
    assert [p.name for p in t.messages[4].tool_results()] == [b["name"] for b in body["messages"][3]["content"][1:]]


@pytest.mark.parametrize("name,role", [("ansi_osc.json", "tool"), ("crlf_spinner.json", "tool"),
                                       ("long_line.json", "tool"), ("tabs.json", "tool"),
                                       ("missing_glyphs.json", "user"), ("zwj_combining.json", "assistant")])
def test_openai_cases(name, role):
    path = shared_path("cases", name)
    t = load(path)
    src = json.loads(path.read_text(encoding="utf-8"))["messages"][0]
    assert t.format == "openai" and [m.role for m in t.messages] == [role]
    m = t.messages[0]
    if role == "tool":
        (r,) = m.tool_results()
        assert r.call_id == src["tool_call_id"] and r.result_text() == src["content"]
    else:
        assert m.text() == src["content"]
