"""Tool calls are drawn decoded: name, short arguments inline, long string arguments with their real line breaks."""

from __future__ import annotations

import json

import pytest

from conftest import shared_path
from snapglyph import Message, Part, build_document, load
from snapglyph.model.document import STYLE_CALL
from snapglyph.model.tool_calls import INLINE_MAX, call_lines


def test_scalars_inline_in_source_order_with_source_spelling():
    args = '{"path": "src/app.py", "line": 12, "ratio": 1.50e3, "dry": false, "x": null, "n": -0}'
    assert call_lines("edit", args) == ("-> edit path=src/app.py line=12 ratio=1.50e3 dry=false x=null n=-0", [])


def test_quoting_picks_the_quote_the_text_lacks():
    assert call_lines("bash", json.dumps({"command": "ls -la"}))[0] == '-> bash command="ls -la"'
    assert call_lines("bash", json.dumps({"command": 'grep "a b"'}))[0] == "-> bash command='grep \"a b\"'"
    assert call_lines("bash", json.dumps({"c": "it's \"x\""}))[0] == '-> bash c="it\'s \\"x\\""'
    assert call_lines("t", json.dumps({"s": ""}))[0] == '-> t s=""'


def test_other_values_compact_json_with_unicode_kept():
    args = json.dumps({"ids": [1, 2, {"k": "é\nx"}], "o": {}}, ensure_ascii=True, indent=2)
    assert call_lines("t", args) == ('-> t ids=[1,2,{"k":"é\\nx"}] o={}', [])


def test_multiline_and_long_strings_get_their_own_text():
    long = "x" * (INLINE_MAX + 1)
    args = json.dumps({"file_path": "a.py", "old_string": "a\n  b", "new_string": "c\r\nd", "note": long,
                       "short": "y" * INLINE_MAX})
    line, blocks = call_lines("Edit", args)
    assert line == "-> Edit file_path=a.py short=" + "y" * INLINE_MAX
    assert blocks == [("old_string", "a\n  b"), ("new_string", "c\r\nd"), ("note", long)]


@pytest.mark.parametrize("raw", ["", "not json", '{"a": 1', "[1, 2]", '"text"', "42", "{" * 5000 + "}" * 5000,
                                 '{"a": "\\ud800"} trailing'])
def test_anything_not_a_json_object_is_drawn_as_it_came(raw):
    assert call_lines("t", raw) == ((f"-> t {raw}" if raw else "-> t"), [])


def test_duplicate_keys_and_lone_surrogates_do_not_crash():
    line, blocks = call_lines("t", '{"a": 1, "a": "\\ud800"}')
    assert line == '-> t a=1 a=\ud800' and blocks == []


def test_document_draws_each_argument_text_as_its_own_segment():
    m = Message(3, "assistant", [Part("text", text="Fixing."),
                                 Part("tool_call", name="edit", call_id="c1",
                                      arguments=json.dumps({"path": "a.py", "text": "def f():\n    return 1"}))])
    texts = [(s.text, s.style) for s in build_document([m]).segments]
    assert texts == [(" #3 assistant ", 2), ("Fixing.", 0), ("\n", STYLE_CALL), ("-> edit path=a.py", STYLE_CALL),
                     ("\n", STYLE_CALL), ("text:", STYLE_CALL), ("\n", STYLE_CALL),
                     ("def f():\n    return 1", STYLE_CALL)]


def _calls_drawn(path) -> tuple[list, str]:
    t = load(path)
    msgs = getattr(t, "messages", t)
    drawn = "".join(s.text for s in build_document(msgs).segments)
    return [p for m in msgs for p in m.tool_calls()], drawn


def test_swe_agent_inserted_code_keeps_its_line_breaks():
    calls, drawn = _calls_drawn(shared_path("data", "swe-agent-traj", "marshmallow-code__marshmallow-1867.traj"))
    assert "-> insert\ntext:\nfrom marshmallow.fields import TimeDelta\nfrom datetime import timedelta\n\n" \
           'td_field = TimeDelta(precision="milliseconds")\n' in drawn
    assert "replace:\n# round to nearest int\n        return int(round(value.total_seconds()" in drawn
    assert '-> edit search="return int(value.total_seconds() / base_unit.total_seconds())"' in drawn
    assert "\\n" not in "".join(call_lines(p.name, p.arguments)[0] for p in calls)


def test_claude_code_edits_keep_every_line_of_old_and_new_string():
    path = shared_path("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    calls, drawn = _calls_drawn(path)
    edits = [p for p in calls if p.name in ("Edit", "Write")]
    assert len(edits) == 27
    for p in edits:
        args = json.loads(p.arguments)
        for key in ("old_string", "new_string", "content"):
            text = args.get(key)
            if isinstance(text, str) and "\n" in text:
                assert f"{key}:\n{text}" in drawn, (p.call_id, key)
