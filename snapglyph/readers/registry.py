"""Transcript files and request bodies -> neutral messages.

Formats (``Transcript.format``)
-------------------------------
``openai``       OpenAI chat completions: ``{"messages": [...]}`` or a bare list (also JSONL, one message a line).
``anthropic``    An Anthropic messages request body (``system``, ``messages`` with content blocks).
``responses``    An OpenAI Responses request (``instructions``, ``input`` items).
``gemini``       A Gemini API ``generateContent`` body (``contents``, ``systemInstruction``, ``tools``).
``swe-agent``    A SWE-agent ``.traj`` trajectory (its ``history`` is an OpenAI chat message list).
``claude-code``  A Claude Code session JSONL (``~/.claude/projects/*/<session>.jsonl``).
``pi``           A pi coding-agent session JSONL (``~/.pi/agent/sessions/*.jsonl``).
``aider``        aider's markdown chat history (``.aider.chat.history.md``).
``codex``        An OpenAI Codex CLI rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).
``gemini-cli``   A Gemini CLI session (``~/.gemini/tmp/<hash>/chats/session-*.json`` or ``.jsonl``).
``cline``        A Cline or Roo Code task's ``api_conversation_history.json``.
``openhands``    An OpenHands conversation folder (``events/event-*.json``) or a V0 trajectory JSON list.
``text``         Anything else that is text: no messages; the text is in ``meta["text"]``.

A request that ``snapglyph compact`` wrote is read in its dialect; its snapshot message (a user message whose last
text part starts with ``snapglyph snapshot:``) gets ``meta["snapshot"]`` and keeps the ids it names, so ids stay
stable across passes (see :func:`parse_snapshot_text`).

Message ids are ordinals ``0, 1, ...`` in the source conversation (the system prompt, where there is one, is
``#0``); the source format's own ids (uuids, tool call ids) are kept in ``Message.meta`` and ``Part.call_id``.
The format-specific choices are documented on each reader: :func:`~snapglyph.readers.requests.read_openai`,
:func:`~snapglyph.readers.anthropic.read_anthropic`, :func:`~snapglyph.readers.responses.read_responses`,
:func:`~snapglyph.readers.requests.read_swe_agent`, :func:`~snapglyph.readers.sessions.read_claude_code`,
:func:`~snapglyph.readers.sessions.read_pi`, :mod:`snapglyph.readers.aider`, :mod:`snapglyph.readers.codex`,
:mod:`snapglyph.readers.gemini_cli`, :mod:`snapglyph.readers.cline` and :mod:`snapglyph.readers.openhands`.
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
from .aider import is_aider, read_aider
from .anthropic import read_anthropic
from .cline import is_cline, read_cline
from .codex import is_codex, read_codex
from .common import coerce_types, drop_opening_line, mark_snapshots, number_messages
from .decode import JSON_EXTS, LOOKS_JSON, decode_text, json_error, jsonl_entries
from .gemini_api import is_gemini_request, read_gemini
from .gemini_cli import is_gemini_cli_json, is_gemini_cli_jsonl, read_gemini_cli
from .openhands import (
    folder_events,
    is_openhands_events,
    is_openhands_trajectory,
    read_openhands_events,
    read_openhands_trajectory,
)
from .requests import detect_request, read_openai, read_swe_agent
from .responses import read_responses
from .sessions import is_claude_code, is_pi, read_claude_code, read_pi

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

#: Every value ``Transcript.format`` can take.
FORMATS = ("openai", "swe-agent", "anthropic", "claude-code", "pi", "aider", "responses", "gemini", "codex",
           "gemini-cli", "cline", "openhands", "text")

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


def _guard(fn, *args, path: str | None = None, what: str = "input"):
    """Run a reader; a stray TypeError/AttributeError/KeyError from a wrongly typed field becomes a FormatError."""
    try:
        return fn(*args)
    except FormatError:
        raise
    except RecursionError:
        raise FormatError(f"{what} nests too deeply to read", path=path) from None
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as e:
        raise FormatError(f"malformed {what}: a field has an unexpected type or value ({type(e).__name__}: {e})",
                          path=path) from None


def _finish(fmt: str, result: tuple, extra_meta: dict | None = None) -> Transcript:
    messages, tools, model, meta = result
    coerce_types(messages, tools)
    if drop_opening_line(messages):
        meta["opening_line_removed"] = True
    if mark_snapshots(messages):
        meta["snapshots"] = sum(1 for m in messages if "snapshot" in m.meta)
    number_messages(messages)
    if extra_meta:
        meta.update(extra_meta)
    notes = [str(n) for n in meta.pop("repairs", [])]
    return Transcript(messages=messages, format=fmt, tools=tools, model=model if isinstance(model, str) else None,
                      meta=meta, notes=notes)


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
    return _from_request(body, None)


def _from_request(body: Any, path: str | None) -> Transcript:
    try:
        fmt = _guard(detect_request, body, path=path, what="request body")
    except FormatError as e:
        raise FormatError(str(e), path=path) from None
    reader = {"openai": read_openai, "anthropic": read_anthropic, "responses": read_responses,
              "gemini": read_gemini}[fmt]
    return _finish(fmt, _guard(reader, body, path, path=path, what=f"{fmt} request"))


def _from_json(doc: Any, name: str, path: str | None) -> Transcript | None:
    """A parsed JSON document -> Transcript, or None when its shape is no known format."""
    if isinstance(doc, dict):
        if _guard(is_gemini_cli_json, doc, path=path):
            return _finish("gemini-cli", _guard(read_gemini_cli, doc, path, path=path, what="Gemini CLI session"))
        if is_openhands_trajectory(doc.get("history")):
            return _finish("openhands", _guard(read_openhands_trajectory, doc["history"], path, path=path,
                                               what="OpenHands trajectory"))
        if isinstance(doc.get("history"), list) and ("trajectory" in doc or "info" in doc
                                                     or "replay_config" in doc):
            return _finish("swe-agent", _guard(read_swe_agent, doc, path, path=path, what="SWE-agent trajectory"))
        if isinstance(doc.get("request"), (dict, list)) and "messages" not in doc and "input" not in doc:
            t = _from_request(doc["request"], path)
            t.meta.update({k: v for k, v in doc.items() if k != "request"})
            return t
        if "messages" in doc or "input" in doc or "instructions" in doc or is_gemini_request(doc):
            return _from_request(doc, path)
        return None
    if isinstance(doc, list):
        if doc and all(isinstance(m, dict) for m in doc):
            if _guard(is_claude_code, doc, path=path):
                return _finish("claude-code", _guard(read_claude_code, doc, path, path=path,
                                                     what="Claude Code session"))
            if is_openhands_trajectory(doc):
                return _finish("openhands", _guard(read_openhands_trajectory, doc, path, path=path,
                                                   what="OpenHands trajectory"))
            if is_openhands_events(doc):
                return _finish("openhands", _guard(read_openhands_events, doc, path, path=path,
                                                   what="OpenHands events"))
            if is_cline(doc, name):
                return _finish("cline", _guard(read_cline, doc, path, path=path, what="Cline/Roo history"))
            if any("role" in m or "type" in m for m in doc):
                return _from_request(doc, path)
        return None
    return None


def _from_jsonl(text: str, name: str, path: str | None) -> Transcript | None:
    entries, notes = jsonl_entries(text, name, path)
    t = None
    if _guard(is_claude_code, entries, path=path):
        t = _finish("claude-code", _guard(read_claude_code, entries, path, path=path, what="Claude Code session"))
    elif _guard(is_codex, entries, path=path):
        t = _finish("codex", _guard(read_codex, entries, path, path=path, what="Codex rollout"))
    elif _guard(is_gemini_cli_jsonl, entries, path=path):
        t = _finish("gemini-cli", _guard(read_gemini_cli, entries, path, path=path, what="Gemini CLI session"))
    elif _guard(is_pi, entries, path=path):
        t = _finish("pi", _guard(read_pi, entries, path, path=path, what="pi session"))
    elif entries and all("role" in e for e in entries):
        t = _from_request(entries, path)
    if t is not None and notes:
        t.notes[:0] = notes
    return t


def _plain(text: str, path: str | None) -> Transcript:
    meta: dict[str, Any] = {"text": text}
    if path:
        meta["path"] = path
    return Transcript(messages=[], format="text", meta=meta)


def _load(text: str, name: str, path: str | None, strict: bool) -> Transcript:
    """Detect the format of ``text`` (the content of ``name``). ``strict``: a JSON extension, unknown = error."""
    if text.startswith("\ufeff"):
        text = text[1:]
    head = text.lstrip()
    if head[:1] in ("{", "["):
        first_error = None
        try:
            doc = json.loads(text)
        except ValueError as e:  # a JSONDecodeError, or an integer past Python's digit limit (json_error)
            doc, first_error = None, e
        except RecursionError:
            raise FormatError(f"{name} nests JSON too deeply to read", path=path) from None
        if first_error is None:
            t = _from_json(doc, name, path)
            if t is not None:
                return t
            if strict:
                keys = f" (keys: {', '.join(sorted(doc)[:8])})" if isinstance(doc, dict) else ""
                raise FormatError(f"{name}: JSON {type(doc).__name__} in no supported transcript format{keys}; "
                                  f"expected a request body with 'messages', 'input' or 'contents', a SWE-agent .traj, or a "
                                  f"session JSONL", path=path)
            return _plain(text, path)
        if head[:1] == "{" and "\n" in text.strip():
            try:
                t = _from_jsonl(text, name, path)
            except FormatError:
                if strict or LOOKS_JSON.match(text):
                    raise
                return _plain(text, path)
            if t is not None:
                return t
            if strict:
                raise FormatError(f"{name}: JSON lines in no supported session format (expected Claude Code or pi "
                                  f"session entries, or chat messages with 'role')", path=path)
            return _plain(text, path)
        if strict or LOOKS_JSON.match(text):
            raise json_error(first_error, name, path)
        return _plain(text, path)
    if strict:
        raise FormatError(f"{name} holds no transcript: expected a JSON object, a list of messages or JSON lines "
                          f"(it starts with {head[:20]!r})", path=path)
    if is_aider(text, name):
        return _finish("aider", read_aider(text), {"path": path} if path else None)
    return _plain(text, path)


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


def _load_folder(p: Path) -> Transcript:
    """An OpenHands SDK conversation folder: its ``event-*.json`` files in order (model from ``base_state.json``)."""
    sp = str(p)
    events, model, n_files = folder_events(p)
    t = _finish("openhands", _guard(read_openhands_events, events, sp, model, path=sp, what="OpenHands events"))
    t.meta.update({"path": sp, "event_files": n_files})
    return t


def load(path: str | os.PathLike) -> Transcript:
    """Read a transcript file, detecting its format from the content (the extension only decides strictness).

    Parameters
    ----------
    path : str or path-like
        A ``.json`` request body or message list, a ``.traj`` SWE-agent trajectory, a Claude Code, pi, Codex or
        Gemini CLI session, a Cline/Roo ``api_conversation_history.json``, an aider ``.md`` chat history, an
        OpenHands conversation folder (holding ``events/event-*.json``), or any text file (format ``"text"``).
        Bytes that are not UTF-8 are replaced with U+FFFD (counted in ``meta["decode_errors"]``).

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
        return _load_folder(p)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise FormatError(f"cannot read {sp}: {e.strerror or e}", path=sp) from None
    t = _load_bytes(raw, p.name, sp)
    t.meta.setdefault("path", sp)
    return t


def _load_bytes(raw: bytes, name: str, path: str | None) -> Transcript:
    text, bad = decode_text(raw, path or name, path)
    t = _load(text, name, path, Path(name).suffix.lower() in JSON_EXTS)
    if bad:
        t.meta["decode_errors"] = bad
    return t


def load_bytes(data: bytes, *, name: str = "<stdin>") -> Transcript:
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
    return _load_bytes(bytes(data), name, None)
