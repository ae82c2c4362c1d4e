"""Reader repairs (issue 12 item 2): Claude Code phantom parents, torn last lines, JSON records run together.

Each repair is read, not refused, and said in ``Transcript.notes``; tests on small files built from the formats and on
the real sessions in ../shared (skipped where it is absent).
"""

from __future__ import annotations

import json

from conftest import shared_path
from snapglyph import load, load_text

CC_MAIN = ("data", "claude-code-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
PI_LARGE = ("data", "pi-session", "large-session.jsonl")


def _cc_session(n: int, phantom_at: int | None = None) -> str:
    """A linear Claude Code session of ``n`` messages (user/assistant alternating, with a progress line between);
    the entry of message ``phantom_at`` links to a parent that is not in the file."""
    lines, parent = [], None
    for k in range(n):
        uid = f"u{k}"
        if k % 2 == 0:
            e = {"type": "user", "message": {"role": "user", "content": f"question {k}"}}
        else:
            e = {"type": "assistant", "message": {"id": f"msg_{k}", "role": "assistant", "model": "claude-test",
                                                  "content": [{"type": "text", "text": f"answer {k}"}]}}
        e.update(uuid=uid, parentUuid="3f1b-phantom" if k == phantom_at else parent, sessionId="s",
                 isSidechain=False)
        lines.append(json.dumps(e))
        lines.append(json.dumps({"type": "progress", "uuid": f"p{k}", "parentUuid": uid, "sessionId": "s",
                                 "isSidechain": False}))
        parent = f"p{k}"
    return "\n".join(lines) + "\n"


def test_claude_code_phantom_parent_followed_by_file_order():
    clean = load_text(_cc_session(15), name="s.jsonl")
    assert len(clean.messages) == 15 and clean.notes == []
    t = load_text(_cc_session(15, phantom_at=12), name="s.jsonl")
    assert [m.text() for m in t.messages] == [m.text() for m in clean.messages]   # was 3 of 15
    assert t.notes == ["line 25: its parent 3f1b-phantom is not in the file (a phantom parent); the conversation "
                       "continues at line 24, the entry before it"]
    assert t.meta["phantom_parents"] == [{"line": 25, "missing_parent": "3f1b-phantom", "continued_at_line": 24}]
    assert "fragment" not in t.meta


def test_claude_code_phantom_parent_in_a_real_session(tmp_path):
    src = shared_path(*CC_MAIN).read_text(encoding="utf-8").splitlines(keepends=True)
    entries = [json.loads(x) for x in src]
    msgs = [i for i, e in enumerate(entries) if e.get("type") == "user" and isinstance(e.get("message"), dict)]
    k = msgs[len(msgs) // 2]                                 # a user message in the middle of the session
    broken = dict(entries[k], parentUuid="00000000-dead-beef-0000-000000000000")
    src[k] = json.dumps(broken) + "\n"
    (tmp_path / "s.jsonl").write_text("".join(src), encoding="utf-8")
    clean, t = load(shared_path(*CC_MAIN)), load(tmp_path / "s.jsonl")
    assert len(clean.messages) == 323 and clean.notes == []
    assert [m.text() for m in t.messages] == [m.text() for m in clean.messages]
    assert len(t.notes) == 1 and t.notes[0].startswith(f"line {k + 1}: its parent 00000000-dead-beef")


def test_torn_last_line_reads_every_complete_line(tmp_path):
    raw = shared_path(*CC_MAIN).read_bytes()
    cut = raw.rfind(b"\n", 0, len(raw) - 1) + 1 + 50          # 50 bytes into the last line
    (tmp_path / "s.jsonl").write_bytes(raw[:cut])
    t = load(tmp_path / "s.jsonl")
    whole = load(shared_path(*CC_MAIN))
    n_lines = raw.count(b"\n")
    assert t.format == "claude-code" and len(t.messages) >= len(whole.messages) - 1
    assert t.notes == [f"line {n_lines} of s.jsonl is torn (it ends without a newline after 50 characters and is no "
                       "complete JSON: a session still being written); it is left out"]
    # the same for pi, torn inside a message line
    raw = shared_path(*PI_LARGE).read_bytes()
    lines = raw.split(b"\n")
    (tmp_path / "p.jsonl").write_bytes(b"\n".join(lines[:40]) + b"\n" + lines[40][:30])
    p = load(tmp_path / "p.jsonl")
    assert p.format == "pi" and p.notes[0].startswith("line 41 of p.jsonl is torn")
    assert len(p.messages) == len(load_text(b"\n".join(lines[:40]).decode(), name="q.jsonl").messages)


def test_torn_line_inside_the_file_is_still_an_error():
    import pytest

    from snapglyph import FormatError
    text = _cc_session(4).splitlines()
    text[3] = text[3][:20]
    with pytest.raises(FormatError, match="malformed JSON in s.jsonl at line 4"):
        load_text("\n".join(text) + "\n", name="s.jsonl")


def test_records_run_together_on_one_line(tmp_path):
    """Two pi records with no newline between them (as in sessions committed by pi's author) are both read."""
    raw = shared_path(*PI_LARGE).read_text(encoding="utf-8")
    lines = raw.split("\n")
    joined = lines[:10] + [lines[10] + lines[11]] + lines[12:]
    (tmp_path / "p.jsonl").write_text("\n".join(joined), encoding="utf-8")
    t, whole = load(tmp_path / "p.jsonl"), load(shared_path(*PI_LARGE))
    assert [m.text() for m in t.messages] == [m.text() for m in whole.messages]
    assert t.notes == ["line 11 of p.jsonl holds 2 JSON records run together; read each"]
    # built from the format: a header and two messages on one line
    text = ('{"type":"session","version":3,"id":"s1"}\n'
            '{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}'
            '{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":[{"type":"text",'
            '"text":"hello"}]}}\n')
    t = load_text(text, name="x.jsonl")
    assert t.format == "pi" and [m.text() for m in t.messages] == ["hi", "hello"] and len(t.notes) == 1


def test_cli_says_what_was_repaired(tmp_path, capsys):
    from snapglyph.cli import main
    (tmp_path / "s.jsonl").write_text(_cc_session(6, phantom_at=3), encoding="utf-8")
    assert main(["render", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "pages")]) == 0
    err = capsys.readouterr().err
    assert "snapglyph: note: line 7: its parent 3f1b-phantom is not in the file (a phantom parent)" in err


def test_pi_parent_missing_from_the_file_is_crossed():
    """A pi v2+ entry whose parentId names no entry: the earlier entries are kept (they were dropped silently)."""
    def session(phantom_at=None):
        lines = ['{"type":"session","version":3,"id":"s1"}']
        for k in range(8):
            role, content = ("user", f"q{k}") if k % 2 == 0 else ("assistant", [{"type": "text", "text": f"a{k}"}])
            parent = "feedbeef" if k == phantom_at else (f"e{k - 1}" if k else None)
            lines.append(json.dumps({"type": "message", "id": f"e{k}", "parentId": parent,
                                     "message": {"role": role, "content": content}}))
        return "\n".join(lines) + "\n"
    clean, t = load_text(session(), name="p.jsonl"), load_text(session(phantom_at=5), name="p.jsonl")
    assert [m.text() for m in clean.messages] == ["q0", "a1", "q2", "a3", "q4", "a5", "q6", "a7"]
    assert [m.text() for m in t.messages] == [m.text() for m in clean.messages]    # was a5..a7 only
    assert t.notes == ["entry 6 after the header: its parent feedbeef is not in the file; the conversation "
                       "continues at the entry before it"]


def test_compact_result_carries_what_the_reader_repaired_and_skipped(tmp_path):
    """Issue 12: what load() repaired or skipped reaches CompactResult (a field and its summary line)."""
    from snapglyph import compact
    text = _cc_session(6, phantom_at=3)
    (tmp_path / "s.jsonl").write_text(text + text.splitlines()[0][:40], encoding="utf-8")  # and a torn last line
    t = load(tmp_path / "s.jsonl")
    res = compact(t, profile="claude", budget=100_000)
    expected = [
        ("line 13 of s.jsonl is torn (it ends without a newline after 40 characters and is no complete JSON: a "
         "session still being written); it is left out"),
        ("line 7: its parent 3f1b-phantom is not in the file (a phantom parent); the conversation continues at "
         "line 6, the entry before it"),
        "the reader skipped 6 records that are no message: progress 6"]
    assert t.notes == expected[:2]
    assert res.reader_notes == expected
    assert res.summary().endswith("".join(f"; read: {n}" for n in expected))
    # the free tiers pass them on too
    from snapglyph import compact_ladder
    assert compact_ladder(t, profile="claude", budget=100_000).result.reader_notes == expected
    # messages and request bodies built by hand have nothing to report
    assert compact(t.messages, profile="claude", budget=100_000).reader_notes == []


def test_cli_compact_names_the_repairs_once_in_its_summary(tmp_path, capsys):
    from snapglyph.cli import main
    (tmp_path / "s.jsonl").write_text(_cc_session(6, phantom_at=3), encoding="utf-8")
    assert main(["compact", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "req.json")]) == 0
    err = capsys.readouterr().err
    assert err.count("line 7: its parent 3f1b-phantom is not in the file") == 1
    assert "; read: line 7: its parent 3f1b-phantom is not in the file (a phantom parent)" in err
    assert "; read: the reader skipped 6 records that are no message: progress 6" in err
