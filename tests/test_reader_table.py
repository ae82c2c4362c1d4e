"""The readers as one table (snapglyph.readers.table): detection in table order, the formats list, the loader's
"expected ..." errors and the README's list all made from the rows, and a new format as one more row."""

import json
from pathlib import Path

import pytest

from snapglyph.cli import main
from snapglyph.errors import FormatError
from snapglyph.model.messages import Message, Part
from snapglyph.readers import formats, table
from snapglyph.readers.common import ReadResult
from snapglyph.readers.pi import read_pi
from snapglyph.readers.registry import FORMATS, from_request, load, load_text

ROOT = Path(__file__).resolve().parent.parent


def _jsonl(*entries):
    return "".join(json.dumps(e) + "\n" for e in entries)


#: One small JSON-lines input per format the loader reads from JSON lines (two lines at least: one line is a JSON
#: document).
JSONL_SAMPLES = {
    "claude-code": _jsonl({"type": "user", "uuid": "u1", "parentUuid": None,
                           "message": {"role": "user", "content": "hi"}}, {"type": "system", "uuid": "s1"}),
    "codex": _jsonl({"type": "session_meta", "payload": {"id": "s1"}},
                    {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                          "content": [{"type": "input_text", "text": "hi"}]}}),
    "gemini-cli": _jsonl({"sessionId": "s1", "projectHash": "p"}, {"id": "m1", "type": "user", "content": "hi"}),
    "copilot": _jsonl({"type": "session.start", "data": {"sessionId": "s1"}, "id": "e1"},
                      {"type": "user.message", "data": {"content": "hi"}, "id": "e2"}),
    "kimi": _jsonl({"role": "_system_prompt", "content": "Be brief."}, {"role": "user", "content": "hi"}),
    "openhands": _jsonl({"kind": "MessageEvent", "id": "e1", "source": "user",
                         "llm_message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
                        {"kind": "ConversationStateUpdateEvent", "id": "e2", "source": "environment"}),
    "pi": _jsonl({"type": "session", "version": 3, "id": "s1"},
                 {"type": "message", "id": "e1", "parentId": None, "message": {"role": "user", "content": "hi"}}),
    "openai": _jsonl({"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}),
    "anthropic": _jsonl({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]}),
    "responses": _jsonl({"type": "message", "role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}),
}


def test_rows_are_well_formed():
    names = [s.name for s in table.TABLE]
    assert names == list(FORMATS) and len(set(names)) == len(names) == 17
    for s in table.TABLE:
        assert isinstance(s, table.ReaderSpec) and s.info.kinds and set(s.info.kinds) <= set(table.KINDS)
        assert s.info.reads and s.info.example and s.info.noun
    assert table.TABLE[-1].name == "text" and table.TABLE[-1].info.kinds == ("text",)


def test_readers_return_a_named_result():
    r = read_pi([{"type": "session", "version": 3, "id": "s1", "modelId": "m"},
                 {"type": "message", "id": "e1", "message": {"role": "user", "content": "hi"}}])
    assert isinstance(r, ReadResult) and r._fields == ("messages", "tools", "model", "meta")
    assert [m.text() for m in r.messages] == ["hi"] and r.tools == [] and r.model == "m" and r.meta["entries"] == 2


@pytest.mark.parametrize("fmt", sorted(JSONL_SAMPLES))
def test_each_jsonl_format_is_read_and_named_in_the_error(fmt):
    """Every format the JSON-lines error lists reads a JSON-lines sample, and every one that does is listed."""
    assert load_text(JSONL_SAMPLES[fmt], name="s.jsonl").format == fmt
    assert table.spec_named(fmt).info.noun in table.expected("jsonl")


def test_the_jsonl_error_lists_exactly_the_jsonl_rows():
    with pytest.raises(FormatError) as e:
        load_text(_jsonl({"foo": 1}, {"bar": 2}), name="odd.jsonl")
    listed = str(e.value).split("(expected ", 1)[1].rstrip(")")
    nouns = [s.info.noun for s in table.TABLE if "jsonl" in s.info.kinds]
    assert sorted(JSONL_SAMPLES) == sorted(s.name for s in table.TABLE if "jsonl" in s.info.kinds)
    assert listed == ", ".join(nouns[:-1]) + " or " + nouns[-1]
    assert str(e.value).startswith("odd.jsonl: JSON lines in no supported session format (expected Claude Code session")


def test_the_json_error_lists_the_json_rows():
    with pytest.raises(FormatError, match=r"no supported transcript format \(keys: foo\); expected Claude Code"):
        load_text('{"foo": 1}', name="odd.json")
    assert "Codex rollout" not in table.expected("json") and "SWE-agent trajectory" in table.expected("json")


def test_detection_follows_the_table_order(monkeypatch):
    """A file both Claude Code and pi rules claim goes to the row that comes first; swapping the rows swaps it."""
    both = _jsonl({"type": "session", "version": 3, "id": "s1"},
                  {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}})
    assert load_text(both, name="s.jsonl").format == "claude-code"
    rows = list(table.TABLE)
    i, j = FORMATS.index("claude-code"), FORMATS.index("pi")
    rows[i], rows[j] = rows[j], rows[i]
    monkeypatch.setattr(table, "TABLE", tuple(rows))
    assert load_text(both, name="s.jsonl").format == "pi"


# ---------------------------------------------------------------------- a new format: one module, one table row
def _is_toy(src):  # the new module's detection rule: every line is a {"who", "said"} record
    return all(set(e) == {"who", "said"} for e in src.data)


def _read_toy(src):  # ... and its reader
    return ReadResult([Message(0, e["who"], [Part("text", text=e["said"])]) for e in src.data], [], "toy-1", {})


TOY = table.ReaderSpec("toy", _is_toy, _read_toy, table.FormatInfo(
    "Toy chat log JSONL", "~/.toy/log.jsonl", "toy chat log", ("jsonl",)))


def test_a_new_format_is_one_more_row(monkeypatch, capsys):
    log = _jsonl({"who": "user", "said": "hi"}, {"who": "assistant", "said": "hello"})
    with pytest.raises(FormatError, match="no supported session format"):
        load_text(log, name="log.jsonl")
    at = FORMATS.index("openai")
    monkeypatch.setattr(table, "TABLE", table.TABLE[:at] + (TOY,) + table.TABLE[at:])
    t = load_text(log, name="log.jsonl")
    assert (t.format, t.model, [(m.id, m.role, m.text()) for m in t.messages]) == (
        "toy", "toy-1", [(0, "user", "hi"), (1, "assistant", "hello")])
    assert load_text(JSONL_SAMPLES["pi"], name="s.jsonl").format == "pi"  # the other rows still read theirs
    with pytest.raises(FormatError, match=r"\(expected Claude Code session, .*, pi session, toy chat log, OpenAI"):
        load_text(_jsonl({"foo": 1}, {"bar": 2}), name="odd.jsonl")
    assert main(["formats"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[at + 1].split()[0] == "toy" and listed[at + 1].endswith("~/.toy/log.jsonl")
    assert "| `toy` | Toy chat log JSONL | `~/.toy/log.jsonl` |" in formats.readme_block()


# ------------------------------------------------------------------------------------------ generated lists
def test_readme_holds_the_generated_list():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index(formats.README_BEGIN)
    end = readme.index(formats.README_END, start) + len(formats.README_END)
    assert readme[start:end] == formats.readme_block(), (
        "README.md's list of formats is stale: replace its block with snapglyph.readers.formats.readme_block()")
    assert readme.count(formats.README_BEGIN) == 1


def test_formats_command_prints_the_table(capsys):
    assert main(["formats", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"format": s.name, "reads": s.info.reads, "example": s.info.example} for s in table.TABLE]
    assert main(["formats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [x.split()[0] for x in lines[1:]] == list(FORMATS)


def test_request_bodies_and_folders_go_through_the_table(tmp_path):
    assert from_request({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).format == "gemini"
    with pytest.raises(FormatError, match="a request body must be a JSON object or list, not NoneType"):
        from_request(None)
    wrapped = load_text(json.dumps({"request": {"input": "hi"}, "id": "call-1"}), name="call.json")
    assert (wrapped.format, wrapped.meta["id"], wrapped.messages[0].text()) == ("responses", "call-1", "hi")
    with pytest.raises(FormatError, match="is a directory in no supported layout"):
        load(tmp_path)
