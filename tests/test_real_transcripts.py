"""Every real transcript in ../shared/data compacts, at a budget that forces a middle, into a valid request."""

from __future__ import annotations

import pytest

from conftest import shared_path
from snapglyph import compact, load, validate

FILES = [
    ("aider-chat-history/chat-history.md", "claude", "anthropic"),
    ("claude-code-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", "claude", "anthropic"),
    ("claude-code-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", "openai", "openai"),
    ("pi-session/before-compaction.jsonl", "openai", "responses"),
    ("pi-session/large-session.jsonl", "claude", "openai"),
    ("pi-session/large-session.jsonl", "openai", "anthropic"),
    ("swe-agent-traj/marshmallow-code__marshmallow-1867.traj", "claude", "anthropic"),
    ("swe-agent-traj/marshmallow-code__marshmallow-1867.traj", "openai", "openai"),
]


@pytest.mark.parametrize("rel,prof,dialect", FILES)
def test_real_transcript_compacts(rel, prof, dialect):
    t = load(shared_path("data", *rel.split("/")))
    budget = 60_000 if "traj" not in rel else 12_000
    res = compact(t, profile=prof, dialect=dialect, budget=budget)
    assert res.pages, "the budget must force a middle"
    assert validate(res.request, dialect, profile=prof) == []
    assert res.tokens_after <= budget < res.tokens_before
    assert res.tail_ids[-1] == max(m.id for m in t.messages)
    # every middle message is recallable from the store
    assert all(i in res.store for i in res.middle_ids)
