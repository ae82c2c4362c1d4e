"""Transcript files and request bodies -> neutral messages: :func:`load`, :func:`load_text`, :func:`load_bytes` and
:func:`from_request`.

The formats are the rows of :data:`snapglyph.readers.table.TABLE` (``snapglyph formats`` lists them, with where
each usually lives); the loader parses the input once (JSON, JSON lines, text or a folder), hands it to the first
row that claims it, and numbers and wraps what that row's reader returns. Each reader documents its own choices.

A request that ``snapglyph compact`` wrote is read in its dialect; its snapshot message (a user message whose last
text part starts with ``snapglyph snapshot:``) gets ``meta["snapshot"]`` and keeps the ids it names, so ids stay
stable across passes (see :func:`parse_snapshot_text`).

Message ids are ordinals ``0, 1, ...`` in the source conversation (the system prompt, where there is one, is
``#0``); the source format's own ids (uuids, tool call ids) are kept in ``Message.meta`` and ``Part.call_id``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..model.messages import Message
from ..model.snapshot_text import parse_snapshot_text
from . import table
from .common import ReadResult, coerce_types, drop_opening_line, mark_snapshots, number_messages
from .decode import JSON_EXTS, LOOKS_JSON, decode_text, json_error, jsonl_entries
from .opencode_db import SQLITE_MAGIC
from .aider import read_aider_lines
from .sessions import choose
from .streamed import open_stream
from .table import FORMATS, Source

__all__ = [
    "FORMATS",
    "Transcript",
    "decode_text",
    "from_request",
    "load",
    "load_bytes",
    "load_text",
    "parse_snapshot_text",
]

@dataclass
class Transcript:
    """A conversation read from a transcript file or a request body.

    Attributes
    ----------
    messages : list of Message
        The conversation in neutral form, ids ``0..n-1`` (a snapshot message of a compacted request takes the
        first id it covers and the ids after it continue past its range). Empty for ``format == "text"``.
    format : str
        One of :data:`FORMATS`.
    tools : list of dict
        Tool definitions found in the source as ``{"name", "description", "parameters"}`` (a JSON schema);
        empty when the source has none.
    model : str or None
        The model the source names (the request's ``model``, or the last model a session used).
    meta : dict
        Format-specific facts: request settings other than messages/tools/system, session ids, skipped entries,
        ``text`` for plain text, ``path`` for files.
    notes : list of str
        What the reader repaired to read the file, one sentence each (empty for a clean file): a torn last line
        left out, JSON records run together on one line read apart, a Claude Code phantom parent crossed. The
        command line prints them on standard error.

    Examples
    --------
    >>> t = load_text('{"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}')
    >>> t.format, [(m.id, m.role) for m in t.messages], t.model, t.meta["params"], t.notes
    ('openai', [(0, 'user')], 'gpt-x', {'temperature': 0}, [])
    """

    messages: list[Message]
    format: str
    tools: list[dict] = field(default_factory=list)
    model: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def content(self) -> str | list[Message]:
        """What to render or price: the text of a plain text file (``format == "text"``), else the messages.

        Examples
        --------
        >>> load_text("just words").content, load_text('[{"role": "user", "content": "hi"}]').content[0].text()
        ('just words', 'hi')
        """
        return self.meta.get("text", "") if self.format == "text" else self.messages


def _finish(fmt: str, result: ReadResult) -> Transcript:
    """A reader's result as a Transcript: types coerced, the opening line dropped, snapshots marked, ids numbered,
    ``meta["repairs"]`` moved to ``notes``."""
    messages, tools, model, meta = result
    coerce_types(messages, tools)
    if drop_opening_line(messages):
        meta["opening_line_removed"] = True
    if mark_snapshots(messages):
        meta["snapshots"] = sum(1 for m in messages if "snapshot" in m.meta)
    number_messages(messages)
    notes = [str(n) for n in meta.pop("repairs", [])]
    return Transcript(messages=messages, format=fmt, tools=tools, model=model if isinstance(model, str) else None,
                      meta=meta, notes=notes)


def _read(src: Source, conversation: int | None = None) -> Transcript | None:
    """The Transcript of the first format of the table that claims ``src``; None when none does. A file holding
    several conversations (the row's ``split``) is read as the ``conversation``-th (from 1; default the last),
    with a note saying so (:func:`~snapglyph.readers.sessions.choose`)."""
    spec = table.detect(src)
    if spec is None:
        return None
    note = None
    if spec.split is not None:
        parts = table.guard(spec.split, src, path=src.path, what=spec.info.noun)
        (label, src), note = choose(parts, [lab for lab, _ in parts], conversation, spec.info.noun, src.path)
    elif conversation not in (None, 1):
        raise FormatError(f"there is no conversation {conversation} in this file: a {spec.info.noun} holds one",
                          path=src.path)
    t = _finish(spec.name, table.read(spec, src))
    if note:
        t.notes.insert(0, note)
        t.meta["conversation"] = {"chosen": label, "of": len(parts)}
    return t


def _plain(text: str, name: str, path: str | None) -> Transcript:
    """``text`` as the table's ``text`` format (no messages; the text in ``meta["text"]``)."""
    return _finish("text", table.read(table.spec_named("text"), Source("text", text, name, path)))


def from_request(body: dict | list) -> Transcript:
    """Read a request body: OpenAI chat completions, Anthropic messages, OpenAI Responses or Gemini (detected).

    Parameters
    ----------
    body : dict or list
        ``{"messages": [...], ...}`` (OpenAI chat or Anthropic: a top-level ``system``, ``input_schema`` tools or
        Anthropic-only content blocks mean Anthropic), ``{"input": ..., "instructions": ...}`` (Responses),
        ``{"contents": [...]}`` (Gemini ``generateContent``), or a
        bare list of messages / input items.

    Returns
    -------
    Transcript
        ``format`` is ``"openai"``, ``"anthropic"``, ``"responses"`` or ``"gemini"``.

    Raises
    ------
    FormatError
        When the body is not one of these shapes or a message in it is malformed.

    Examples
    --------
    >>> t = from_request({"model": "claude-x", "system": "Be brief.", "messages": [
    ...     {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})
    >>> t.format, len(t.messages), [(m.id, m.role) for m in t.messages]
    ('anthropic', 3, [(0, 'system'), (1, 'user'), (2, 'assistant')])
    """
    t = _read(Source("request", body))
    if t is None:  # detect_request names a dialect or raises; a table without that dialect's row lands here
        raise FormatError("not a request body in a dialect read here")
    return t


def _json_error(name: str, doc: Any, path: str | None) -> FormatError:
    keys = f" (keys: {', '.join(sorted(doc)[:8])})" if isinstance(doc, dict) else ""
    return FormatError(f"{name}: JSON {type(doc).__name__} in no supported transcript format{keys}; expected "
                       f"{table.expected('json')} (`snapglyph formats` lists every format)", path=path)


def _load_jsonl(text: str, name: str, path: str | None, strict: bool, conversation: int | None = None
                ) -> Transcript:
    """JSON lines (text that opens with ``{`` and is no single JSON document)."""
    try:
        entries, notes = jsonl_entries(text, name, path)
        t = _read(Source("jsonl", entries, name, path), conversation)
    except FormatError:
        if strict or LOOKS_JSON.match(text):
            raise
        return _plain(text, name, path)
    if t is not None:
        t.notes[:0] = notes
        return t
    if strict:
        raise FormatError(f"{name}: JSON lines in no supported session format (expected {table.expected('jsonl')})",
                          path=path)
    return _plain(text, name, path)


def _load(text: str, name: str, path: str | None, strict: bool, conversation: int | None = None) -> Transcript:
    """Detect the format of ``text`` (the content of ``name``). ``strict``: a JSON extension, unknown = error."""
    text = text.removeprefix("\ufeff")
    head = text.lstrip()
    if head.startswith("//"):  # JSON after comment lines (an export's header): the JSON is read, the lines noted
        t = _after_comments(text, name, path, strict, conversation)
        if t is not None:
            return t
    if head[:1] not in ("{", "["):
        if strict:
            raise FormatError(f"{name} holds no transcript: expected a JSON object, a list of messages or JSON lines "
                              f"(it starts with {head[:20]!r})", path=path)
        return _read(Source("text", text, name, path))  # the text row claims whatever no other does
    try:
        doc, error = json.loads(text), None
    except ValueError as e:  # a JSONDecodeError, or an integer past Python's digit limit (json_error)
        doc, error = None, e
    except RecursionError:
        raise FormatError(f"{name} nests JSON too deeply to read", path=path) from None
    if error is not None:
        if head[:1] == "{" and "\n" in text.strip():
            return _load_jsonl(text, name, path, strict, conversation)
        if strict or LOOKS_JSON.match(text):
            raise json_error(error, name, path)
        return _plain(text, name, path)
    t = _read(Source("json", doc, name, path), conversation)
    if t is not None:
        return t
    if strict:
        raise _json_error(name, doc, path)
    return _plain(text, name, path)


def _after_comments(text: str, name: str, path: str | None, strict: bool, conversation: int | None
                    ) -> Transcript | None:
    """``text`` read past its leading ``//`` comment lines where JSON follows them (None where none does)."""
    lines = text.splitlines(keepends=True)
    k = 0
    while k < len(lines) and (lines[k].lstrip().startswith("//") or not lines[k].strip()):
        k += 1
    rest = "".join(lines[k:])
    if rest.lstrip()[:1] not in ("{", "["):
        return None
    t = _load(rest, name, path, strict, conversation)
    if t.format == "text":
        return None
    n = sum(1 for ln in lines[:k] if ln.strip())
    t.notes.insert(0, f"{n} comment line{'s' * (n != 1)} before the JSON left out")
    return t


def load_text(text: str, *, name: str = "<stdin>") -> Transcript:
    """Read a transcript (or plain text) given as a string, detecting its format from the content.

    Parameters
    ----------
    text : str
        The content: JSON, JSON lines, aider markdown or any text.
    name : str
        A name for messages and for extension hints (``.json``, ``.jsonl`` and ``.traj`` names must hold a
        transcript; ``*.aider.chat.history.md`` is aider markdown).

    Returns
    -------
    Transcript
        ``format == "text"`` with ``messages == []`` and ``meta["text"] == text`` when the text is no transcript.

    Raises
    ------
    FormatError
        Malformed JSON where the name's extension says JSON or the text opens like a JSON object (``{"``) or an
        array of objects (``[{``); JSON in no supported format where the extension says JSON; a malformed message
        inside a recognized format.

    Examples
    --------
    >>> t = load_text('{"role": "user", "content": "hi"}\\n{"role": "assistant", "content": "hello"}\\n')
    >>> t.format, [(m.role, m.text()) for m in t.messages]
    ('openai', [('user', 'hi'), ('assistant', 'hello')])
    >>> t = load_text("#### fix it\\n\\nDone.\\n", name="x.aider.chat.history.md")
    >>> t.format, [m.role for m in t.messages], load_text("plain notes").format
    ('aider', ['user', 'assistant'], 'text')
    """
    if not isinstance(text, str):
        raise FormatError(f"load_text needs a str, not {type(text).__name__}")
    return _load(text, name, None, Path(name).suffix.lower() in JSON_EXTS)


def load(path: str | os.PathLike, *, conversation: int | None = None) -> Transcript:
    """Read a transcript file, detecting its format from the content (the extension only decides strictness).

    Parameters
    ----------
    path : str or path-like
        A ``.json`` request body or message list, a ``.traj`` SWE-agent trajectory, a Claude Code, pi, Codex or
        Gemini CLI session, a Cline/Roo ``api_conversation_history.json``, an aider ``.md`` chat history, an
        OpenHands conversation folder (holding ``events/event-*.json``), or any text file (format ``"text"``).
        Bytes that are not UTF-8 are replaced with U+FFFD (counted in ``meta["decode_errors"]``).
    conversation : int, optional
        Which conversation of a file holding several to read (1 = the first); default: the last, with a note.

    Returns
    -------
    Transcript
        With ``meta["path"]`` set.

    Raises
    ------
    FormatError
        The file is missing or unreadable; a folder that is no OpenHands conversation; malformed JSON or an
        unknown JSON shape in a ``.json``/``.jsonl``/``.traj`` file; a malformed message inside a recognized
        format.

    Examples
    --------
    >>> import json, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "session.jsonl"
    >>> lines = [{"type": "session", "version": 3, "id": "s1", "modelId": "claude-x"},
    ...          {"type": "message", "id": "e1", "parentId": None, "message": {"role": "user", "content": "hi"}}]
    >>> _ = p.write_text("".join(json.dumps(e) + "\\n" for e in lines))
    >>> t = load(p)
    >>> t.format, len(t.messages), [m.role for m in t.messages], t.model, Path(t.meta["path"]).name
    ('pi', 1, ['user'], 'claude-x', 'session.jsonl')
    """
    p = Path(path)
    sp = str(p)
    if not p.exists():
        raise FormatError(f"no such file: {sp}", path=sp)
    if p.is_dir():
        t = _read(Source("folder", p, p.name, sp), conversation)
        if t is None:
            raise FormatError(f"{sp} is a directory in no supported layout (expected "
                              f"{table.expected('folder', examples=True)}), not a transcript file", path=sp)
        t.meta["path"] = sp
        return t
    try:
        t = _load_streamed(p, conversation)
        raw = p.read_bytes() if t is None else b""
    except OSError as e:
        raise FormatError(f"cannot read {sp}: {e.strerror or e}", path=sp) from None
    if t is None and raw.startswith(SQLITE_MAGIC):  # a database: read where a row of the table knows its layout
        t = _read(Source("sqlite", p, p.name, sp), conversation)
        if t is None:
            raise FormatError(f"{sp} is a SQLite file in no supported layout (expected "
                              f"{table.expected('sqlite', examples=True)})", path=sp)
    elif t is None:
        t = _load_bytes(raw, p.name, sp, conversation)
    t.meta.setdefault("path", sp)
    return t


def _load_streamed(p: Path, conversation: int | None) -> Transcript | None:
    """The file ``p`` read a line at a time (:mod:`~snapglyph.readers.streamed`: JSON lines, an aider history), as
    :func:`_load_bytes` reads it whole; None where it is neither, or is JSON lines that :func:`_load_jsonl` would
    not read as a session (its errors and its plain text fallback come from the whole read)."""
    got = open_stream(p)
    if got is None:
        return None
    kind, lines = got
    sp = str(p)
    if kind == "jsonl":
        try:
            entries, notes = jsonl_entries(lines, p.name, sp)
            t = _read(Source("jsonl", entries, p.name, sp), conversation)
        except FormatError:
            return None
        if t is None:
            return None
        t.notes[:0] = notes
    elif conversation in (None, 1):
        t = _finish("aider", read_aider_lines(lines))
    else:
        return None
    if lines.bad:
        t.meta["decode_errors"] = lines.bad
    return t


def _load_bytes(raw: bytes, name: str, path: str | None, conversation: int | None = None) -> Transcript:
    text, bad = decode_text(raw, path or name, path)
    t = _load(text, name, path, Path(name).suffix.lower() in JSON_EXTS, conversation)
    if bad:
        t.meta["decode_errors"] = bad
    return t


def load_bytes(data: bytes, *, name: str = "<stdin>", conversation: int | None = None) -> Transcript:
    """Read a transcript (or plain text) given as bytes, such as standard input, exactly as :func:`load` reads a file.

    Parameters
    ----------
    data : bytes
        The content.
    name : str
        A name for messages and extension hints, as in :func:`load_text`.

    Returns
    -------
    Transcript
        As :func:`load_text`; bytes that are not UTF-8 are replaced with U+FFFD (``meta["decode_errors"]``).

    Raises
    ------
    FormatError
        Binary data (see :func:`decode_text`), and everything :func:`load_text` raises.

    Examples
    --------
    >>> load_bytes(b'[{"role": "user", "content": "hi"}]').messages[0].text()
    'hi'
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise FormatError(f"load_bytes needs bytes, not {type(data).__name__}")
    return _load_bytes(bytes(data), name, None, conversation)
