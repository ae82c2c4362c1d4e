"""The source store: exact round trips of any str, atomic writes, one conversation per store."""

from __future__ import annotations

import os

import pytest

from snapglyph import Message, Part, SourceStore, StoreError

ODD = "\x1b[31mred\x1b[0m\r\n\x00\ud800 tab\t e\u0301 \U0001f600 \u202eRTL"


def test_round_trip_keeps_every_string(tmp_path):
    s = SourceStore()
    s.put([Message(5, "tool", [Part("tool_result", call_id="c", name="bash", content=[Part("text", text=ODD)])],
                   {"uuid": "u-1"})])
    s.bind("key1")
    s.put_tail("#1-#4", [Message(6, "user", [Part("text", text="next")])])
    path = s.save(tmp_path / "s.jsonl")
    back = SourceStore(path)
    assert back.get(5).parts[0].content[0].text == ODD
    assert back.get(5).meta == {"uuid": "u-1"}
    assert [m.id for m in back.tail("#1-#4")] == [6]
    assert back.conversation == "key1"
    with pytest.raises(StoreError, match="another conversation"):
        back.bind("key2")
    with pytest.raises(StoreError, match="#7"):
        back.get(7)


def test_a_crash_while_saving_leaves_the_last_good_store(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    s = SourceStore()
    s.put([Message(1, "user", [Part("text", text="first")])])
    s.save(path)
    good = path.read_bytes()
    s.put([Message(2, "user", [Part("text", text="second " * 1000)])])

    def crash(*a, **k):
        raise OSError("disk gone")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(StoreError, match="cannot write"):
        s.save(path)
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]  # no temporary file left behind


def test_a_torn_store_is_an_error_not_a_silent_loss(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": 1, "message": {"id": 1, "role": "user", "parts": []}}\n{"id": 2, "mess')
    with pytest.raises(StoreError, match=":2: not a source-store line"):
        SourceStore(path)


def test_a_reduced_message_never_replaces_its_original():
    s = SourceStore()
    s.put([Message(3, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="the full output")])])])
    s.put([Message(3, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="[omitted]")])],
                   {"reduced": "omission"})])
    assert s.get(3).parts[0].content[0].text == "the full output"
    s.put([Message(3, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="edited")])])])
    assert s.get(3).parts[0].content[0].text == "edited"


def test_message_to_dict_is_asdict_byte_for_byte():
    # The store's serializer is dataclasses.asdict without its generic recursion: same keys, same order, same values,
    # nested tool results and meta (deep-copied) included.
    import json
    from dataclasses import asdict

    from snapglyph.compaction.store import message_to_dict
    m = Message(4, "tool", [Part("tool_result", call_id="c1", is_error=True, meta={"k": [1, {"a": 2}]},
                                 content=[Part("text", text="boom"), Part("image", media_type="image/png", data="iVBO",
                                                                          width=3, height=2)])],
                meta={"snapshot": {"covers": [[1, 3]]}})
    d = message_to_dict(m)
    assert json.dumps(d) == json.dumps(asdict(m))
    d["meta"]["snapshot"]["covers"].append([9, 9])
    d["parts"][0]["meta"]["k"].append(3)
    assert m.meta == {"snapshot": {"covers": [[1, 3]]}} and m.parts[0].meta == {"k": [1, {"a": 2}]}
