"""Message digests: one serialization a message, shared by the page cache's key and the cut's fingerprint."""
import copy

from snapglyph.compaction.digest import MessageDigests
from snapglyph.compaction.page_cache import CachedDraw
from snapglyph.compaction.sticky import prefix_fingerprint
from snapglyph.model.messages import Message, Part


def _msgs():
    return [Message(0, "system", [Part("text", text="today")]), Message(1, "user", [Part("text", text="task")]),
            Message(2, "assistant", [Part("tool_call", name="bash", arguments='{"cmd": "ls"}', call_id="c1")]),
            Message(3, "tool", [Part("tool_result", call_id="c1", content=[Part("text", text="a.py")])],
                    meta={"k": [1, 2]})]


def test_equal_messages_equal_digests_any_memo():
    a, b = _msgs(), copy.deepcopy(_msgs())
    shared = MessageDigests()
    assert shared.run(a) == shared.run(b) == MessageDigests().run(a)
    assert prefix_fingerprint(a, 4, shared) == prefix_fingerprint(b, 4) == prefix_fingerprint(a, 4, MessageDigests())
    key = CachedDraw(lambda ms: [], ("claude", None, "auto", None), shared).key
    assert key(a[1:]) == CachedDraw(lambda ms: [], ("claude", None, "auto", None)).key(b[1:])


def test_any_change_changes_the_digest():
    base = MessageDigests().run(_msgs())
    edits = []
    m = _msgs(); m[3].parts[0].content[0].text = "b.py"; edits.append(m)
    m = _msgs(); m[3].meta["k"] = [1, 3]; edits.append(m)
    m = _msgs(); m[2].parts[0].arguments = '{"cmd": "ls -l"}'; edits.append(m)
    m = _msgs(); m[1].role = "assistant"; edits.append(m)
    m = _msgs(); m[1], m[2] = m[2], m[1]; edits.append(m)
    edits.append(_msgs()[:3])
    edits.append(_msgs() + [Message(4, "user", [])])
    got = [MessageDigests().run(e) for e in edits]
    assert base not in got and len(set(got)) == len(got)


def test_memo_is_by_identity_not_by_id_number():
    d = MessageDigests()
    first = d.run([Message(5, "user", [Part("text", text="x")])])  # the object dies; its id() may be reused
    for _ in range(50):
        assert d.run([Message(5, "user", [Part("text", text="y")])]) != first


def test_a_system_message_after_the_opening_counts():
    """Agents rebuild their opening system prompt on every call (left out); one later in the conversation is drawn
    on the pages, so changing it must change the fingerprint (found by a fresh-eyes test)."""
    msgs = _msgs() + [Message(4, "system", [Part("text", text="note: tests pass")]),
                      Message(5, "user", [Part("text", text="go on")])]
    a = prefix_fingerprint(msgs, 5)
    msgs[0] = Message(0, "system", [Part("text", text="tomorrow")])
    assert prefix_fingerprint(msgs, 5) == a
    msgs[4] = Message(4, "system", [Part("text", text="note: tests fail")])
    assert prefix_fingerprint(msgs, 5) != a


def test_the_page_cache_key_names_the_whole_profile_and_takes_a_list_cell():
    import dataclasses

    from snapglyph import Message as M, compact
    from snapglyph.providers.profiles import profile
    claude = profile("claude")
    small = dataclasses.replace(claude, page_size=(784, 784))
    key = lambda p, cell: CachedDraw(lambda ms: [], (repr(p), cell, "auto", None)).key(_msgs())
    assert key(claude, (6, 12)) != key(small, (6, 12))
    msgs = [M(i, "assistant" if i % 2 else "user", [Part("text", text="word " * 400)]) for i in range(12)]
    res = compact(msgs, dialect="anthropic", budget=6000, max_tokens=100, cell=[6, 12])
    assert res.pages and res.pages[0].cell == (6, 12)


def test_a_message_json_cannot_write_is_an_input_error():
    import datetime

    import pytest

    from snapglyph.errors import InputError
    for meta in ({"when": datetime.datetime(2026, 12, 3)}, {1: "a", "b": 2}):
        m = Message(7, "user", [Part("text", text="hi")], meta=meta)
        with pytest.raises(InputError, match="message #7 cannot be written as JSON"):
            MessageDigests().of(m)
