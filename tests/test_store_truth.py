"""Issue 31, item 1: the source store is the truth.

A stored source is never replaced by anything derived from it; a conversation's key is the same from the source and
from the request a compaction wrote; ids never move on a second pass (several system and developer messages in the
head, empty messages); two and eight processes saving one store at once lose no entry.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
from pathlib import Path

import pytest

from snapglyph import Message, Part, SourceStore, StoreError, compact, load
from snapglyph.compaction.second_pass import conversation_key
from snapglyph.compaction.store import message_to_dict
from snapglyph.readers.registry import from_request

DIALECTS = ("openai", "anthropic", "responses", "gemini")
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _exact(m: Message) -> str:
    return json.dumps(message_to_dict(m), ensure_ascii=True, sort_keys=True)


def _conversation(n_system: int = 1, bad_head_image: bool = False, empty: bool = False) -> list[Message]:
    msgs = [Message(i, "system", [Part("text", text=f"system prompt {i}")])
            for i in range(n_system)]
    first = [Part("text", text="fix the parser\ud800")]
    if bad_head_image:
        first.append(Part("image", media_type="image/png", data="bm90IGFuIGltYWdl"))
    msgs.append(Message(len(msgs), "user", first))
    for r in range(24):
        msgs.append(Message(len(msgs), "assistant", [Part("text", text=f"step {r} " + "word " * 200)]))
        if r == 5:
            msgs.append(Message(len(msgs), "system", [Part("text", text="a system note in the middle")]))
        if empty and r % 7 == 3:
            msgs.append(Message(len(msgs), "user", []))
        msgs.append(Message(len(msgs), "user", [Part("text", text=f"ok {r} \udc00 " + "more " * 100)]))
    msgs.append(Message(len(msgs), "system", [Part("text", text="a system note in the tail \ud801")]))
    msgs.append(Message(len(msgs), "user", [Part("text", text="and now the last question")]))
    return msgs


def _passes(source, dialect: str, budget: int, n: int = 3, store: SourceStore | None = None):
    """Compact ``source``, then the request it wrote (through JSON) ``n`` more times; yield each result."""
    store = store if store is not None else SourceStore()
    res = compact(source, dialect=dialect, budget=budget, max_tokens=200, store=store)
    yield res
    for k in range(n):
        res = compact(json.loads(json.dumps(res.request)), dialect=dialect, budget=budget - 50 * k,
                      max_tokens=200, store=store)
        yield res


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("shape", [dict(), dict(n_system=3), dict(bad_head_image=True), dict(empty=True)])
def test_stored_sources_stay_exact_over_passes(dialect, shape):
    msgs = _conversation(**shape)
    orig = {m.id: _exact(m) for m in msgs}
    results = list(_passes(msgs, dialect, 4000))
    store = results[-1].store
    assert sorted(store) == sorted(orig)                         # every message kept, under the id it had
    assert {i: _exact(store.get(i)) for i in store} == orig      # byte-exact: no U+FFFD, no role changed
    heads = [r.head_ids for r in results]
    assert heads[1:] == heads[:1] * (len(heads) - 1)             # the head never shrinks


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_key_of_a_source_and_of_its_request_agree(dialect):
    msgs = _conversation(n_system=2, bad_head_image=True)
    res = compact(msgs, dialect=dialect, budget=4000, max_tokens=200)
    assert conversation_key(from_request(json.loads(json.dumps(res.request))).messages) == conversation_key(msgs)


def _rollout_ids(path: Path, dialect: str, budget: int) -> tuple[dict, dict, list]:
    t = load(path)
    orig = {m.id: _exact(m) for m in t.messages}
    results = list(_passes(t, dialect, budget))
    store = results[-1].store
    return orig, {i: _exact(store.get(i)) for i in store}, [r.head_ids for r in results]


@pytest.mark.parametrize("name,dialect", [("codex-rollout", "responses"), ("codex-rollout", "anthropic"),
                                          ("pi-session", "openai"), ("pi-session", "gemini")])
def test_real_sessions_keep_their_ids_on_every_pass(name, dialect):
    files = sorted((DATA / name).glob("*.jsonl")) if DATA.exists() else []
    if not files:
        pytest.skip(f"{DATA / name} is absent (../shared not mounted)")
    orig, stored, heads = _rollout_ids(files[0], dialect, 30000)
    assert stored == orig
    assert all(h == heads[0] for h in heads)


def test_a_derived_copy_never_replaces_the_source():
    s = SourceStore()
    s.put([Message(3, "system", [Part("text", text="note \ud800")])])
    s.put([Message(3, "user", [Part("text", text="note \ufffd")], {"derived": True})])
    assert (s.get(3).role, s.get(3).parts[0].text) == ("system", "note \ud800")
    s.put([Message(4, "user", [Part("text", text="new")], {"derived": True})])   # nothing held: kept
    assert s.get(4).text() == "new"


def _save_range(path: str, lo: int, hi: int, rounds: int) -> None:
    for r in range(rounds):
        s = SourceStore(path)
        s.bind("conv")
        s.put([Message(i, "user", [Part("text", text=f"m{i}")]) for i in range(lo + r, hi, rounds)])
        s.put_tail(f"#{lo}", [Message(10_000 + lo, "user", [Part("text", text="t")])])
        s.save()


@pytest.mark.parametrize("procs", [2, 8])
def test_concurrent_saves_merge(tmp_path, procs):
    path = str(tmp_path / "s.jsonl")
    per, rounds = 40, 4
    ctx = mp.get_context("spawn")
    ps = [ctx.Process(target=_save_range, args=(path, k * per, (k + 1) * per, rounds)) for k in range(procs)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(60)
    assert [p.exitcode for p in ps] == [0] * procs
    back = SourceStore(path)
    want = set(range(procs * per)) | {10_000 + k * per for k in range(procs)}
    assert set(back) == want
    assert all(back.get(i).text() == f"m{i}" for i in range(procs * per))
    assert len({k for k in back._tails}) == procs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]   # no temporary or lock file left


def test_a_store_saved_meanwhile_by_another_conversation_is_refused(tmp_path):
    path = tmp_path / "s.jsonl"
    a, b = SourceStore(path), SourceStore(path)
    a.bind("one")
    a.put([Message(1, "user", [Part("text", text="x")])])
    a.save()
    b.bind("two")
    with pytest.raises(StoreError, match="another conversation"):
        b.save()
    assert SourceStore(path).conversation == "one"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_passthrough_compacted_again_keeps_ids_and_sources(dialect):
    msgs = _conversation(n_system=2, empty=True)
    orig = {m.id: _exact(m) for m in msgs}
    store = SourceStore()
    req = compact(msgs, dialect=dialect, budget=100_000, max_tokens=200, store=store).request   # sent whole
    for budget in (100_000, 4000, 3900):                   # whole again, then compacted twice
        res = compact(json.loads(json.dumps(req)), dialect=dialect, budget=budget, max_tokens=200, store=store)
        req = res.request
        assert {i: _exact(store.get(i)) for i in store} == orig
    assert not res.passthrough and res.head_ids == [0, 1, 2]


def test_a_damaged_store_is_saved_over_with_its_good_lines_kept(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": 1, "message": {"id": 1, "role": "user", "parts": []}}\n{"id": 2, "mess\n')
    with pytest.raises(StoreError, match=":2: not a source-store line"):
        SourceStore(path)
    s = SourceStore()
    s.path = path                     # what serve does with a damaged store: written afresh
    s.put([Message(3, "user", [Part("text", text="new")])])
    s.save()
    assert sorted(SourceStore(path)) == [1, 3]


@pytest.mark.parametrize("fmt", DIALECTS)
def test_the_door_key_of_a_source_and_of_its_compacted_request_agree(fmt):
    from test_property_issue31 import WRITERS

    from snapglyph.compaction.keys import conversation_id
    evs = [("system", "You are terse.", "system"), ("system", "dev rules", "developer"),
           ("user", [("text", "fix the parser \ud800"), ("image", "html"), ("pdf",)])]
    evs += [("round", [("bash", f"c{k}", "r " * 400)], None) for k in range(8)] + [("user", [("text", "what now")])]
    body = WRITERS[fmt](evs)
    res = compact(json.loads(json.dumps(body)), dialect=fmt, budget=6000, max_tokens=200)
    assert not res.passthrough
    assert conversation_id(fmt, json.loads(json.dumps(res.request))) == conversation_id(fmt, body) is not None
    other = json.loads(json.dumps(body).replace("You are terse.", "You are verbose."))
    assert conversation_id(fmt, other) != conversation_id(fmt, body)     # another system prompt: another key
