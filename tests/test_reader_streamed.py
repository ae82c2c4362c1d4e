"""JSON lines and aider histories read a line at a time (readers/streamed.py) give what the whole-file read gives."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from snapglyph.errors import SnapglyphError
from snapglyph.readers import registry
from snapglyph.readers.streamed import FileLines, open_stream

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
A = "# aider chat started at 2026-12-01 10:00:00\n"


def _cc(i: int, parent: str | None, role: str = "user") -> str:
    content = f"hi {i} \U0001F600" if role == "user" else [{"type": "text", "text": "ok"}]
    return json.dumps({"type": role, "uuid": f"u{i}", "parentUuid": parent, "sessionId": "s",
                       "message": {"role": role, "content": content}})


#: name -> (content, what open_stream says: "jsonl", "aider" or None for a file read whole)
CASES: dict[str, tuple[str | bytes, str | None]] = {
    "a1.md": (A + "#### hi  \n\nDone.\n", "aider"),
    "a2.md": ("\ufeff" + A + "#### hi\r\n> out  \r\nreply\r\n", "aider"),
    "a3.md": ("-*- mode: markdown -*-\n" + A + "#### x\n\n\n", "aider"),
    "a4.aider.chat.history.md": ("no marker\n#### x\nyo", "aider"),
    "a5.md": ("\n\n  \n" + A + "#### x\n", "aider"),
    "a6.md": ("{not json\n" + A, None),
    "a7.md": ("//c\n" + A, None),
    "a8.md": ("**User:**\n\n" + A + "x", None),
    "a9.md": (A, "aider"),
    "a10.md": ("", None),
    "a11.md": (A.encode() + b"#### caf\xc3\n\xe9 x\n> \xff\xfe  \n", "aider"),
    "j1.jsonl": (_cc(1, None) + "\n" + _cc(2, "u1", "assistant") + "\n", "jsonl"),
    "j2.jsonl": ("\ufeff" + _cc(1, None) + "\n\n" + _cc(2, "u1", "assistant") + "\n" + '{"torn": ', "jsonl"),
    "j3.jsonl": (_cc(1, None) + _cc(2, "u1", "assistant") + "\n" + _cc(3, "u2") + "\n", None),
    "j4.jsonl": (_cc(1, None) + "\n" + "garbage\n" + _cc(3, "u2") + "\n", "jsonl"),
    "j5.jsonl": (_cc(1, None) + "\n   \n", None),
    "j6.txt": (_cc(1, None) + "\n" + _cc(2, "u1", "assistant"), "jsonl"),
    "j7.jsonl": ('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n', "jsonl"),
    "j8.jsonl": ('{"x": 1}\n{"y": 2}\n', "jsonl"),
    "j9.txt": ('{"x": 1}\n{"y": 2}\n', "jsonl"),
    "j10.jsonl": (_cc(1, None) + "\r\n" + _cc(2, "u1", "assistant") + "\r\n", "jsonl"),
    "j11.jsonl": (_cc(1, None) + "\n[1]\n", "jsonl"),
    "j12.txt": ('{ x\n{"a":1}\n', None),
    "j13.jsonl": ('{"type":"session","version":3,"id":"s1"}\n{"type":"message","id":"e1","parentId":null,'
                  '"message":{"role":"user","content":"hi"}}\n', "jsonl"),
    "j14.jsonl": ((_cc(1, None) + "\n" + _cc(2, "u1", "assistant") + "\n").encode().replace(b"hi 1", b"hi \xff1"),
                  "jsonl"),
}


def _whole(p: Path):
    """The file read whole, as load() read every file before the streamed readers."""
    try:
        t = registry._load_bytes(p.read_bytes(), p.name, str(p))
        t.meta.setdefault("path", str(p))
        return t
    except SnapglyphError as e:
        return f"{type(e).__name__}: {e}"


def _load(p: Path):
    try:
        return registry.load(p)
    except SnapglyphError as e:
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_streamed_is_the_whole_read(tmp_path: Path, name: str) -> None:
    content, kind = CASES[name]
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    got = open_stream(p)
    assert (got[0] if got else None) == kind
    assert pickle.dumps(_load(p)) == pickle.dumps(_whole(p))


def test_decode_errors_counted(tmp_path: Path) -> None:
    p = tmp_path / "h.md"
    p.write_bytes(CASES["a11.md"][0])
    t = registry.load(p)
    assert (t.format, t.meta["decode_errors"], len(t.messages)) == ("aider", 4, 3)


def test_file_lines_split_as_text() -> None:
    import tempfile
    d = Path(tempfile.mkdtemp())
    for text in ["", "\n", "a", "a\n", "a\n\nb", "\ufeffa\r\nb\n"]:
        (d / "f").write_text(text, encoding="utf-8", newline="")
        assert list(FileLines(d / "f")) == text.removeprefix("\ufeff").split("\n")


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")
def test_real_transcripts_streamed_as_whole() -> None:
    files = sorted(p for p in SHARED.rglob("*") if p.is_file())
    streamed = [p.name for p in files if open_stream(p) is not None]
    assert "chat-history.md" in streamed and any(n.endswith(".jsonl") for n in streamed)
    for p in files:
        assert pickle.dumps(_load(p)) == pickle.dumps(_whole(p)), p


def _aider_files(tmp_path: Path) -> list[Path]:
    out = []
    for name, (content, kind) in CASES.items():
        if kind == "aider":
            p = tmp_path / name
            p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
            out.append(p)
    real = SHARED / "aider-chat-history" / "chat-history.md"
    return out + ([real] if real.is_file() else [])


@pytest.mark.parametrize("mode", ["dense", "lines"])
def test_aider_document_is_the_loaded_one(tmp_path: Path, mode: str) -> None:
    from snapglyph.model.document import document_for
    from snapglyph.readers.streamed_doc import AiderFileDocument, streamed_document

    for p in _aider_files(tmp_path):
        doc = streamed_document(p, mode)
        assert isinstance(doc, AiderFileDocument), p
        assert list(doc.segments) == document_for(registry.load(p).content, mode).segments, p
    (tmp_path / "pi.jsonl").write_text(CASES["j13.jsonl"][0])
    assert streamed_document(tmp_path / "pi.jsonl", mode) is None  # only aider and Claude Code are drawn as read


def _claude_files(tmp_path: Path) -> list[Path]:
    out = []
    for name in ("j1.jsonl", "j2.jsonl", "j10.jsonl", "j14.jsonl"):
        content = CASES[name][0]
        p = tmp_path / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        out.append(p)
    return out + sorted((SHARED / "claude-code-spotter").glob("*.jsonl")) if SHARED.is_dir() else out


@pytest.mark.parametrize("mode", ["dense", "lines"])
def test_claude_code_document_is_the_loaded_one(tmp_path: Path, mode: str) -> None:
    from snapglyph.model.document import document_for
    from snapglyph.readers.streamed_cc import ClaudeCodeFileDocument
    from snapglyph.readers.streamed_doc import streamed_document

    drawn = 0
    for p in _claude_files(tmp_path):
        doc = streamed_document(p, mode)
        if doc is None:  # several conversations in the file: load chooses one, with a note
            continue
        t = registry.load(p)
        assert isinstance(doc, ClaudeCodeFileDocument) and t.format == "claude-code", p
        assert list(doc.segments) == document_for(t.content, mode).segments, p
        assert doc.notes == t.notes, p
        drawn += 1
    assert drawn >= 4
    assert streamed_document(tmp_path / "j2.jsonl", mode).notes[0].startswith("line 4 of j2.jsonl is torn")


def test_claude_code_record_that_does_not_read_is_loaded(tmp_path: Path) -> None:
    from snapglyph.readers.streamed_cc import plan_session

    bad = _cc(1, None) + "\n" + json.dumps({"type": "assistant", "uuid": "u2", "parentUuid": "u1",
                                             "message": {"role": "assistant", "content": 7}}) + "\n"
    p = tmp_path / "bad.jsonl"
    p.write_text(bad)
    assert plan_session(p) is None
    with pytest.raises(SnapglyphError, match="message content is a int"):
        registry.load(p)


def test_opening_line_and_snapshot_finished_in_stream() -> None:
    from snapglyph.model.messages import OPENING_USER_LINE, Message, Part
    from snapglyph.readers.common import coerce_types, drop_opening_line, mark_snapshots, number_messages
    from snapglyph.readers.streamed_doc import finished

    def conv() -> list[Message]:
        snap = "snapglyph snapshot: the images above show messages #2-#9 as pages."
        return [Message(0, "system", [Part("text", text="sys")]),
                Message(0, "user", [Part("text", text=OPENING_USER_LINE)]),
                Message(0, "assistant", [Part("text", text="hello")]), Message(0, "user", [Part("text", text=snap)]),
                Message(0, "assistant", [Part("text", text="after")])]
    whole = conv()
    coerce_types(whole, [])
    drop_opening_line(whole)
    mark_snapshots(whole)
    number_messages(whole)
    got = list(finished(iter(conv())))
    assert [(m.id, m.role) for m in got] == [(m.id, m.role) for m in whole] == [
        (0, "system"), (1, "assistant"), (2, "user"), (10, "assistant")]


def test_a_pipe_is_read_whole(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    data = CASES["j1.jsonl"][0].encode()

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    assert open_stream(tmp_path) is None
    th = threading.Thread(target=write)
    th.start()
    t = registry.load(fifo)  # read once, whole: a pipe cannot be read again
    th.join()
    assert (t.format, len(t.messages)) == ("claude-code", 2)
