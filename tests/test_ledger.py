"""Identifiers found in text, the identifier ledger, the user's words and the reading guide of the snapshot text."""

from __future__ import annotations

import pytest

from conftest import shared_path
from snapglyph import Message, Part, count_for_profile, load
from snapglyph._config import USER_TEXT_MAX
from snapglyph.compaction.guide import reading_guide
from snapglyph.compaction.ledger import LEDGER_HEADING, Ledger, drawn_text
from snapglyph.compaction.user_words import USER_HEADING, user_texts, user_words_text
from snapglyph.model.identifiers import find_identifiers


@pytest.mark.parametrize("text, found", [
    ("commit 3f2a9c1 and 3F2A9C1D00", [("hex", "3f2a9c1"), ("hex", "3F2A9C1D00")]),
    ("uuid 123e4567-e89b-12d3-a456-426614174000.", [("uuid", "123e4567-e89b-12d3-a456-426614174000")]),
    ("at src/app.py:12, ./a/b.rs:7:3 and ~/x/Makefile#L3-L9 or /abs/dir/:40",
     [("path_line", "src/app.py:12"), ("path_line", "./a/b.rs:7:3"), ("path_line", "~/x/Makefile#L3-L9"),
      ("path_line", "/abs/dir/:40")]),
    ('(see https://x.org/a_(b)?q=1&r=2#f), "ftp://h/p".', [("url", "https://x.org/a_(b)?q=1&r=2#f"),
                                                          ("url", "ftp://h/p")]),
    ("key sk-AbCdEf0123456789XyZw== and tok Zm9vYmFyYmF6cXV4MTIzNDU2", [("base64", "sk-AbCdEf0123456789XyZw=="),
                                                                         ("base64", "Zm9vYmFyYmF6cXV4MTIzNDU2")]),
    ("pid 48213, port 65535; 1234 and 3.14159 and v1.23456 and #808080", [("number", "48213"),
                                                                          ("number", "65535")]),
    ('  File "/usr/lib/x.py", line 346, in f', [("traceback", 'File "/usr/lib/x.py", line 346')]),
])
def test_each_kind_is_found_whole_and_verbatim(text, found):
    assert find_identifiers(text) == found


@pytest.mark.parametrize("text", ["deadbeef cafe", "PydanticDeprecatedSince20", "snake_case_name_longer_than_20",
                                  "/home/USER/projects/spotter2/lib", "version 1.2.3", "a = 1234", "", "\ud800" * 9])
def test_no_identifier_in_ordinary_words(text):
    assert find_identifiers(text) == []


def test_drawn_text_resolves_terminal_escapes_and_decodes_calls():
    m = Message(7, "assistant", [Part("tool_call", name="bash", call_id="c",
                                      arguments='{"command": "git show 3f2a9c1d\\nls"}')])
    assert drawn_text(m) == "-> bash\ncommand:\ngit show 3f2a9c1d\nls"
    t = Message(8, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="\x1b[31m48213\x1b[0m")])])
    assert drawn_text(t) == "48213"


def _msgs() -> list[Message]:
    return [Message(2, "user", [Part("text", text="deploy 3f2a9c1d to https://x.org/a, not 9e8d7c6b")]),
            Message(3, "assistant", [Part("text", text="3f2a9c1d is at src/a.py:12 (pid 48213)")]),
            Message(4, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="no ids")])]),
            Message(5, "assistant", [Part("text", text="see https://x.org/a and 123e4567-e89b-12d3-a456-426614174000")])]


def test_ledger_each_identifier_once_under_its_newest_message_newest_first():
    text = Ledger(_msgs(), len).text([2, 3, 4, 5], cap=10_000)
    assert text == (LEDGER_HEADING + "\n#5: https://x.org/a 123e4567-e89b-12d3-a456-426614174000"
                    "\n#3: 3f2a9c1d src/a.py:12 48213\n#2: 9e8d7c6b")
    assert Ledger(_msgs(), len).text([2, 3], cap=10_000) == (LEDGER_HEADING + "\n#3: 3f2a9c1d src/a.py:12 48213"
                                                            "\n#2: https://x.org/a 9e8d7c6b")


def test_ledger_cap_keeps_the_newest_and_says_it_cut():
    full = Ledger(_msgs(), len).text([2, 3, 4, 5], cap=10_000)
    for cap in range(len(LEDGER_HEADING), len(full) + 2):
        text = Ledger(_msgs(), len).text([2, 3, 4, 5], cap=cap)
        assert len(text) <= cap
        if text and text != full:
            assert text.endswith("\n(older identifiers not listed: recall the message by id)")
            listed = text.split("\n")[1:-1]
            assert listed == [line for line in full.split("\n")[1:] if line][:len(listed) - 1] + [listed[-1]]
            assert full.split("\n")[len(listed)].startswith(listed[-1])
    assert Ledger(_msgs(), len).text([2, 3, 4, 5], cap=0) == ""
    assert Ledger(_msgs(), len).text([4], cap=1000) == ""


def test_ledger_holds_every_identifier_of_a_real_transcript_verbatim():
    t = load(shared_path("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"))
    msgs = t.messages
    shown = [m.id for m in msgs[100:300]]
    count = lambda s: count_for_profile(s, "claude")  # noqa: E731
    text = Ledger(msgs, count).text(shown, cap=10**9)
    found = {i for m in msgs[100:300] for _, i in find_identifiers(drawn_text(m))}
    assert len(found) == 121
    entries = Ledger(msgs, count).entries(shown)
    flat = [i for _, ids in entries for i in ids]
    assert len(flat) == len(set(flat)) and set(flat) == found          # each once, all of them
    assert text == LEDGER_HEADING + "".join(f"\n#{mid}: " + " ".join(ids) for mid, ids in entries)
    assert [mid for mid, _ in entries] == sorted((mid for mid, _ in entries), reverse=True)
    assert Ledger(msgs, count).text(shown, cap=10**9) == text          # deterministic
    small = Ledger(msgs, count).text(shown, cap=300)
    assert count(small) <= 300 and small.startswith(text[:len(small) - 60].rsplit(" ", 1)[0])


def test_user_texts_only_typed_text_and_long_ones_with_a_marked_gap():
    long = "".join(chr(65 + i % 26) for i in range(USER_TEXT_MAX + 500))
    msgs = [Message(3, "user", [Part("text", text="never use curl"), Part("image", data="AAAA"),
                                Part("text", text="  ")]),
            Message(4, "assistant", [Part("text", text="ok")]),
            Message(5, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="x")]),
                                Part("text", text="system note")]),
            Message(6, "user", [Part("text", text=long)])]
    (a, ta), (b, tb) = user_texts(msgs)
    assert (a, ta, b) == (3, "never use curl", 6)
    half = USER_TEXT_MAX // 2
    assert tb == long[:half] + "\n[... 500 characters not repeated here: recall #6 ...]\n" + long[-half:]


def test_user_words_newest_first_under_the_cap():
    texts = [(3, "never use curl"), (9, "run the tests"), (12, "then commit")]
    full, ids = user_words_text(texts, 10_000, len)
    assert full == USER_HEADING + "\n[#3 user] never use curl\n[#9 user] run the tests\n[#12 user] then commit"
    assert ids == [3, 9, 12]
    text, ids = user_words_text(texts, len(full) - 1, len)
    assert ids == [9, 12] and text == USER_HEADING + "\n[#9 user] run the tests\n[#12 user] then commit"
    assert user_words_text(texts, len(USER_HEADING) + 5, len) == ("", [])
    assert user_words_text(texts, 0, len) == ("", [])


@pytest.mark.parametrize("tool", ["recall_messages", None])
def test_guide_is_short_fixed_and_neutral(tool):
    g = reading_guide(tool)
    assert g == reading_guide(tool)
    assert count_for_profile(g, "openai") <= 120
    assert "reasoning" not in g.lower() and "thinking" not in g.lower()
    assert "\n" not in g and "\u21b5" in g and "\u21aa" in g and "#id role" in g and "columns" in g
    assert (tool or "by its id (#id)") in g
