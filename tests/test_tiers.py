"""The free tiers and the ladder: each tier reports what it removed, and every removed word is recallable."""

from __future__ import annotations

import pytest
from test_compactor import conversation
from test_properties import _png

from snapglyph import BudgetError, InputError, Message, Part, SourceStore, compact_ladder, recall, validate
from snapglyph.compaction.recall import source_text
from snapglyph.compaction.tiers import drop_images, omit_uneventful


def _result(mid: int, text: str, name: str = "bash") -> Message:
    return Message(mid, "tool", [Part("tool_result", call_id=f"c{mid}", name=name, content=[Part("text", text=text)])])


def _call(mid: int) -> Message:
    return Message(mid, "assistant", [Part("tool_call", name="bash", arguments="{}", call_id=f"c{mid + 1}")])


def test_omission_replaces_only_uneventful_old_results():
    msgs = [Message(0, "user", [Part("text", text="go")])]
    long_status = "Process exited with code 0" + " " * 80
    outputs = [" " * 90, long_status, "real output\n" * 9, "real output\n" * 9, "fresh", "(no output)"]
    for text in outputs:
        msgs += [_call(len(msgs)), _result(len(msgs) + 1, text)]
    store = SourceStore()
    out, rep = omit_uneventful(msgs, protect_from=len(msgs) - 2, store=store)
    changed = {m.id: m.tool_results()[0].result_text() for m in out if m.meta.get("reduced")}
    # empty, status only, the repeat; not the first real output, not "fresh", not the protected last one
    assert sorted(changed) == [2, 4, 8]
    assert changed[8] == "[omitted: bash result, 9 lines, 108 bytes, repeats an earlier identical output; recall #8]"
    assert changed[4].startswith("[omitted: bash result, 1 lines, 106 bytes, status only")
    assert rep.ids == [2, 4, 8]
    assert recall(store, [8]) == {8: "real output\n" * 9}


def test_image_drop_keeps_the_newest():
    msgs = [Message(i, "user", [Part("text", text=f"shot {i}"), _png(10 + i, 20)]) for i in range(5)]
    store = SourceStore()
    out, rep = drop_images(msgs, keep=2, store=store)
    kept = [m.id for m in out if any(p.kind == "image" for p in m.parts)]
    assert kept == [3, 4]
    assert out[0].parts[1].text.startswith("[image image/png 10x20 ")
    assert rep.ids == [0, 1, 2] and all(i in store for i in rep.ids)
    with pytest.raises(InputError):
        drop_images(msgs, keep=-1, store=store)


def test_ladder_stops_at_the_cheapest_tier_that_fits():
    msgs = conversation(rounds=20)
    # make many results repeat an earlier output, so that omission alone gets under the budget
    for m in msgs:
        if m.role == "tool" and m.id % 2:
            m.parts[0].content = [Part("text", text="the same long listing\n" * 40)]
    from snapglyph import compact
    raw = compact(msgs, profile="claude", dialect="anthropic", budget=10**9).tokens_after
    omitted = compact_ladder(msgs, profile="claude", dialect="anthropic", budget=10**9).result.tokens_after
    assert omitted < raw - 100
    target = raw - 100
    res = compact_ladder(msgs, profile="claude", dialect="anthropic", budget=target)
    assert [r.tier for r in res.reports] == ["omission", "image drop"]
    assert res.result.passthrough and res.result.tokens_after <= target
    assert validate(res.request, "anthropic") == []


def test_ladder_reaches_the_snapshot_and_summary():
    msgs = conversation()
    res = compact_ladder(msgs, profile="claude", dialect="anthropic", budget=30_000)
    assert res.reports[-1].tier == "snapshot"
    by_id = {m.id: m for m in msgs}
    assert all(recall(res.store, [i])[i] == source_text(by_id[i]) for i in res.result.middle_ids[:20])
    with pytest.raises(BudgetError):
        compact_ladder(msgs, profile="claude", dialect="anthropic", budget=4100)
    calls = []

    def summarize(middle):
        calls.append([m.id for m in middle])
        return "short summary"

    res = compact_ladder(msgs, profile="claude", dialect="anthropic", budget=12_000, summarize=summarize)
    assert res.reports[-1].tier == "summary"
    assert calls[-1] == res.result.dropped_ids
    snap = res.request["messages"][1]["content"]
    assert snap[-2]["text"].endswith("(not shown as pages):\nshort summary")
    assert res.result.tokens_after <= 12_000
    assert validate(res.request, "anthropic") == []


def test_reduced_tail_messages_keep_their_originals_in_the_store():
    """A long tail can hold results the omission tier reduced; the store still returns their originals."""
    msgs = conversation(rounds=30)
    for m in msgs:
        if m.role == "tool" and m.id % 2:
            m.parts[0].content = [Part("text", text="the same long listing\n" * 40)]
    res = compact_ladder(msgs, profile="claude", dialect="anthropic", budget=25_000, protect_last=2)
    reduced_in_tail = [i for i in res.result.tail_ids
                       if any("[omitted:" in b.get("content", "") for mm in res.request["messages"]
                              if isinstance(mm["content"], list)
                              for b in mm["content"] if b.get("type") == "tool_result" and isinstance(
                                  b.get("content"), str) and f"recall #{i}]" in b.get("content", ""))]
    assert reduced_in_tail, "the test needs an omitted result in the tail"
    by_id = {m.id: m for m in msgs}
    for i in reduced_in_tail:
        assert recall(res.store, [i])[i] == source_text(by_id[i])
