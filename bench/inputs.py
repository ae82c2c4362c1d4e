"""The bench's inputs, made on any clone: mixed real text, and files of each kind a user renders or compacts.

Text comes from the transcripts in ``../shared/data`` where that folder is there (an equal share of each); on a
fresh clone without it, from this repository's own text (README, the package's source and docs), and
:func:`text_origin` says which, so a result names what it measured. No pytest here: ``python bench/speed.py`` runs
after the README's install alone.

Kinds (:data:`KINDS`), each written at a given size in characters by :func:`make_kind`:

- ``text``: plain text (``snapglyph render`` streams it);
- ``aider``: an aider chat history (``#### `` user turns, ``> `` console output, assistant prose), read as a
  transcript;
- ``claude-code``: a Claude Code JSONL session (user, assistant and tool-result records with fresh uuids and a
  ``parentUuid`` chain, as Claude Code writes them);
- ``tiny-lines``: many short lines (one word each), the manifest's worst case.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SNAPGLYPH_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data"
AIDER = DATA / "aider-chat-history" / "chat-history.md"
KINDS = ("text", "aider", "claude-code", "tiny-lines")


def _strings(obj, out: list[str]) -> None:
    if isinstance(obj, str):
        if len(obj) >= 40:
            out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _strings(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _strings(v, out)


def _shared_texts(data: Path) -> list[str]:
    """One text per transcript file under ``data``: Markdown and text as they are, JSON's strings of 40+ chars."""
    texts = []
    for path in sorted(data.rglob("*")):
        if not path.is_file() or path.name.startswith(("LICENSE", "SOURCE", "README")):
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix in (".md", ".txt"):
            texts.append(raw)
            continue
        found: list[str] = []
        try:
            if path.suffix == ".jsonl":
                for line in raw.splitlines():
                    if line.strip():
                        _strings(json.loads(line), found)
            else:
                _strings(json.loads(raw), found)
        except json.JSONDecodeError:
            continue
        texts.append("\n".join(found))
    return [t for t in texts if t]


def _own_texts() -> list[str]:
    """This repository's own text: the README, the docs and the package's source (code and prose)."""
    paths = [ROOT / "README.md", *sorted((ROOT / "snapglyph").rglob("*.py")), *sorted((ROOT / "examples").rglob("*"))]
    return [p.read_text(encoding="utf-8", errors="replace") for p in paths if p.is_file() and p.suffix in
            (".md", ".py", ".txt")]


def text_origin() -> str:
    """What the bench text is made of: ``"../shared/data"`` or ``"this repository's own text"``."""
    return "../shared/data" if DATA.is_dir() else "this repository's own text (../shared/data is absent)"


def source_texts() -> list[str]:
    """The texts the bench mixes: :func:`_shared_texts` where ../shared/data is there, else :func:`_own_texts`."""
    return _shared_texts(DATA) if DATA.is_dir() else _own_texts()


def mixed_text(n: int) -> str:
    """``n`` characters of mixed text: up to 300,000 of each source text, repeated.

    aider's session-start line is reworded (``began`` for ``started``) so that every tool reads the file as plain
    text: with it, ``snapglyph render`` would read it as an aider transcript."""
    mix = "".join(t[:300_000] for t in source_texts())
    mix = mix.replace("# aider chat started at", "# aider chat began at")
    return (mix * (n // len(mix) + 1))[:n]


def _chunks(text: str, size: int):
    """Pieces of ``text`` of about ``size`` characters, cut at line ends."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def _aider(text: str) -> str:
    out = ["# aider chat started at 2026-12-01 10:00:00\n\n"]
    for i, piece in enumerate(_chunks(text, 1_500)):
        first, _, rest = piece.partition("\n")
        if i % 3 == 0:
            out.append(f"#### {first.strip() or 'go on'}\n\n")
        elif i % 3 == 1:
            out.append("".join(f"> {line}  \n" for line in piece.splitlines()) + "\n")
        else:
            out.append(piece + "\n")
        if rest and i % 3 == 0:
            out.append(rest + "\n")
    return "".join(out)


def _claude_code(text: str) -> str:
    session, parent, out = str(uuid.UUID(int=1)), None, []
    for i, piece in enumerate(_chunks(text, 2_000)):
        me = str(uuid.UUID(int=i + 2))
        rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work/project",
               "sessionId": session, "version": "2.1.39", "uuid": me, "timestamp": "2026-12-01T10:00:00.000Z"}
        if i % 3 == 0:
            rec |= {"type": "user", "message": {"role": "user", "content": piece}}
        elif i % 3 == 1:
            rec |= {"type": "assistant", "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
                {"type": "text", "text": piece[:200]},
                {"type": "tool_use", "id": f"toolu_{i:08d}", "name": "Read", "input": {"file_path": "/w/a.py"}}]}}
        else:
            rec |= {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{i - 1:08d}", "content": piece}]}}
        out.append(json.dumps(rec, ensure_ascii=False) + "\n")
        parent = me
    if len(out) % 3 == 2:  # the last tool call answered
        out.append(json.dumps({"parentUuid": parent, "type": "user", "uuid": str(uuid.UUID(int=len(out) + 2)),
                               "sessionId": session, "timestamp": "2026-12-01T10:00:00.000Z",
                               "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id":
                                           f"toolu_{len(out) - 1:08d}", "content": "ok"}]}}) + "\n")
    return "".join(out)


def _tiny_lines(n: int) -> str:
    words = mixed_text(min(n, 200_000)).split() or ["word"]
    out, size, i = [], 0, 0
    while size < n:
        w = words[i % len(words)][:12]
        out.append(w)
        size += len(w) + 1
        i += 1
    return "\n".join(out) + "\n"


def make_kind(kind: str, n: int, folder: Path) -> Path:
    """Write about ``n`` characters of ``kind`` (one of :data:`KINDS`) under ``folder`` once; return its path.

    The transcript kinds hold ``n`` characters of mixed text (:func:`mixed_text`) in their own record format, so
    the file is somewhat larger than ``n`` (the JSON or Markdown around the text)."""
    suffix = {"claude-code": ".jsonl", "aider": ".md"}.get(kind, ".txt")
    path = folder / f"{kind}-{n}{suffix}"
    if path.exists():
        return path
    if kind == "text":
        body = mixed_text(n)
    elif kind == "aider":
        body = _aider(mixed_text(n))
    elif kind == "claude-code":
        body = _claude_code(mixed_text(n))
    elif kind == "tiny-lines":
        body = _tiny_lines(n)
    else:
        raise ValueError(f"unknown input kind {kind!r}: expected one of {', '.join(KINDS)}")
    path.write_text(body, encoding="utf-8")
    return path


def real_history(times: int, folder: Path) -> Path:
    """The aider history of ../shared/data repeated ``times`` times as one history (else the synthetic ``aider``
    kind at 4,200,000 characters, the real file's size, repeated)."""
    path = folder / f"history-x{times}.md"
    if not path.exists():
        one = AIDER.read_text(encoding="utf-8") if AIDER.is_file() else make_kind("aider", 4_200_000,
                                                                                   folder).read_text("utf-8")
        path.write_text(one * times, encoding="utf-8")
    return path
