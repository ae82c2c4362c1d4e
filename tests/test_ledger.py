"""Identifiers found in text, the identifier ledger, the user's words and the reading guide of the snapshot text."""

from __future__ import annotations

import re

import pytest

from conftest import shared_path
from snapglyph import Message, Part, count_for_profile, load
from snapglyph._config import USER_TEXT_MAX
from snapglyph.compaction.guide import reading_guide
from snapglyph.compaction.ledger import LEDGER_HEADING, Ledger, drawn_text
from snapglyph.compaction.user_words import USER_HEADING, user_texts, user_words_text
from snapglyph.model.identifiers import find_identifiers, line_of, worth_listing


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


def test_ledger_each_value_once_after_the_messages_holding_it_newest_first():
    text = Ledger(_msgs(), len).text([2, 3, 4, 5], cap=10_000)
    assert text == (LEDGER_HEADING + "\n#5 #2: https://x.org/a\n#5: 123e4567-e89b-12d3-a456-426614174000"
                    "\n#3 #2: 3f2a9c1d\n#3: src/a.py:12\n#2: 9e8d7c6b")                 # pid 48213: a short number
    assert Ledger(_msgs(), len).text([2, 3], cap=10_000) == (LEDGER_HEADING + "\n#3 #2: 3f2a9c1d\n#3: src/a.py:12"
                                                            "\n#2: https://x.org/a 9e8d7c6b")


def test_ledger_merges_a_paths_line_numbers_and_names_at_most_three_holders():
    msgs = [Message(i, "tool", [Part("tool_result", call_id="c", content=[Part("text", text=f"src/app.py:{n} {h}")])])
            for i, n, h in [(31, 77, "3f2a9c1d"), (40, 12, "3f2a9c1d"), (41, 40, "3f2a9c1d"), (50, 12, "3f2a9c1d"),
                            (51, "9:2", "x")]]
    assert Ledger(msgs, len).text([31, 40, 41, 50, 51], cap=10_000) == (
        LEDGER_HEADING + "\n#51 #50 #41 +2: src/app.py:9:2,12,40,77\n#50 #41 #40 +1: 3f2a9c1d")


def test_ledger_cap_keeps_the_newest_and_says_in_one_line_what_it_cut():
    full = Ledger(_msgs(), len).text([2, 3, 4, 5], cap=10_000)
    rows = full.split("\n")[1:]
    for cap in range(len(LEDGER_HEADING), len(full) + 2):
        text = Ledger(_msgs(), len).text([2, 3, 4, 5], cap=cap)
        assert len(text) <= cap
        if text and text != full:
            *listed, cut = text.split("\n")[1:]
            assert cut.startswith("(the cap leaves out ") and cut.endswith(": recall a message by id)")
            assert listed[:-1] == rows[:len(listed) - 1] and rows[len(listed) - 1].startswith(listed[-1])
            left = sum(len(r.split(": ", 1)[1].split()) for r in rows) - sum(
                len(r.split(": ", 1)[1].split()) for r in listed)
            assert f"leaves out {left} identifier" in cut
    assert Ledger(_msgs(), len).text([2, 3, 4, 5], cap=0) == ""
    assert Ledger(_msgs(), len).text([4], cap=1000) == ""


def _expand(value: str) -> set[str]:
    """A ledger value with its merged line numbers as the identifiers it stands for."""
    m = re.fullmatch(r"(.*?)((?:\d+(?::\d+)?,)+\d+(?::\d+)?)", value)
    if m is None or line_of(m.group(1) + m.group(2).split(",")[0]) is None:
        return {value}
    return {m.group(1) + n for n in m.group(2).split(",")}


def test_ledger_holds_every_identifier_worth_listing_of_a_real_transcript_once():
    t = load(shared_path("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"))
    msgs = t.messages
    shown = [m.id for m in msgs[100:300]]
    count = lambda s: count_for_profile(s, "claude")  # noqa: E731
    text = Ledger(msgs, count).text(shown, cap=10**9)
    found = {i for m in msgs[100:300] for k, i in find_identifiers(drawn_text(m)) if worth_listing(k, i)}
    assert len(found) == 103
    entries = Ledger(msgs, count).entries(shown)
    values = [v for _, _, vals in entries for v in vals]
    flat = [i for v in values for i in _expand(v)]
    assert len(values) == len(set(values)) and set(flat) == found and len(values) < len(found)  # once, merged
    assert text == LEDGER_HEADING + "".join(f"\n{head}: " + " ".join(vals) for head, _, vals in entries)
    assert [held[0] for _, held, _ in entries] == sorted((held[0] for _, held, _ in entries), reverse=True)
    assert Ledger(msgs, count).text(shown, cap=10**9) == text          # deterministic
    small = Ledger(msgs, count).text(shown, cap=300)
    assert count(small) <= 300 and small.startswith(text[:len(small) - 90].rsplit(" ", 1)[0])


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
    texts = [(3, "never use curl. " * 9), (9, "run the tests"), (12, "then commit")]
    full, ids = user_words_text(texts, 10_000, len)
    assert full == USER_HEADING + "\n[#12 user] then commit\n[#9 user] run the tests\n[#3 user] " + texts[0][1]
    assert ids == [12, 9, 3]
    cut = USER_HEADING + "\n[#12 user] then commit\n(2 older messages of the user not repeated here, #3 to #9)"
    assert user_words_text(texts, len(cut), len) == (cut, [12])
    assert user_words_text(texts, len(cut) - 1, len) == ("", [])           # no room for the line saying so
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
