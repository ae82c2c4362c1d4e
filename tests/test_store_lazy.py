"""The source store read back lazily: a store file is checked line by line when opened, its messages read back on
first use, and a save of a store never used writes the same bytes (no second copy of the conversation held)."""

from __future__ import annotations

from snapglyph.compaction.store import SourceStore, _Held
from snapglyph.model.messages import Message, Part


def _saved(tmp_path, n=5):
    path = tmp_path / "s.store.jsonl"
    s = SourceStore(path)
    s.bind("k1")
    s.put([Message(i, "user" if i % 2 else "assistant", [Part("text", text=f"m{i} caf\u00e9 \ud800")], {"i": i})
           for i in range(n)])
    s.put_tail("#1-#3", [s.get(4)], head=[s.get(0)])
    s.save()
    return path


def test_opened_store_holds_places_until_read(tmp_path):
    path = _saved(tmp_path)
    s = SourceStore(path)
    assert len(s) == 5 and sum(isinstance(v, _Held) for v in s._messages.values()) == 5
    m = s.get(3)
    assert m == Message(3, "user", [Part("text", text="m3 caf\u00e9 \ud800")], {"i": 3})
    assert s.get(3) is m and sum(isinstance(v, _Held) for v in s._messages.values()) == 4
    assert [x.id for x in s.tail("#1-#3")] == [4] and [x.id for x in s.head("#1-#3")] == [0]


def test_save_of_an_unread_store_writes_the_same_bytes(tmp_path):
    path = _saved(tmp_path)
    before = path.read_bytes()
    s = SourceStore(path)
    s.save()
    assert path.read_bytes() == before
    s.put([Message(5, "user", [Part("text", text="new")])])
    s.save()  # the held lines are read from the file opened before it was replaced
    after = path.read_bytes()
    assert after.startswith(before.split(b'{"tail_of"')[0]) and b'"id":5,' in after
    assert SourceStore(path).get(2).parts[0].text == "m2 caf\u00e9 \ud800"


def test_a_bad_line_is_refused_when_opened(tmp_path):
    path = _saved(tmp_path)
    path.write_bytes(path.read_bytes() + b'{"id": 9}\n')
    try:
        SourceStore(path)
    except Exception as e:  # noqa: BLE001
        assert type(e).__name__ == "StoreError" and str(e).endswith(":9: not a source-store line (no field 'message')")
    else:
        raise AssertionError("a bad line was not refused")
