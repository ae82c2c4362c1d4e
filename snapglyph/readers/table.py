"""The formats ``load()`` reads, as one table: one :class:`ReaderSpec` per format, in detection order.

A spec names the format (``Transcript.format``), says which :class:`Source` is in it (``detect``), reads one
(``read``, to a :class:`~snapglyph.readers.common.ReadResult`) and describes it (:class:`FormatInfo`: the line
``snapglyph formats`` prints, the README's list, the noun the loader's errors use, the kinds of input it takes).
:func:`detect` tries the rows of :data:`TABLE` in order on the kinds of input each declares, so the first row that
claims a source reads it; the "expected ..." lists of the loader's errors are made from the same rows
(:func:`expected`). Adding a format is a reader module and one row of :data:`TABLE`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import FormatError
from .aider import is_aider, read_aider
from .anthropic import read_anthropic
from .claude_code import is_claude_code, read_claude_code
from .cline import is_cline, read_cline
from .cline_markdown import is_cline_markdown, read_cline_markdown
from .codex import is_codex, read_codex
from .common import ReadResult
from .copilot import is_copilot, read_copilot
from .kimi import is_kimi, read_kimi
from .opencode import is_opencode, read_opencode
from .opencode_db import db_sessions, is_opencode_db
from .openhands_runs import eval_history, eval_model, is_eval_output, label_eval, split_eval
from .sessions import (claude_label, codex_label, copilot_label, gemini_label, pi_label, split_claude_code,
                       split_codex, split_copilot, split_gemini_cli, split_pi)
from .gemini_api import read_gemini
from .gemini_cli import is_gemini_cli_json, is_gemini_cli_jsonl, read_gemini_cli
from .openhands import (
    event_files,
    folder_events,
    is_openhands_events,
    is_openhands_trajectory,
    read_openhands_events,
    read_openhands_trajectory,
)
from .pi import is_pi, read_pi
from .requests import read_openai, read_swe_agent
from .responses import read_responses
from .spec import KINDS, FormatInfo, ReaderSpec, Source, entries_of, guard, is_wrapped_call, objects_only, request_body

__all__ = [
    "FORMATS",
    "KINDS",
    "TABLE",
    "FormatInfo",
    "ReaderSpec",
    "Source",
    "detect",
    "expected",
    "guard",
    "read",
    "request_body",
    "spec_named",
]

def _is_claude_code(src: Source) -> bool:
    entries = entries_of(src)
    return entries is not None and is_claude_code(entries)


def _is_gemini_cli(src: Source) -> bool:
    return is_gemini_cli_jsonl(src.data) if src.kind == "jsonl" else is_gemini_cli_json(src.data)


def _is_openhands(src: Source) -> bool:
    if src.kind == "folder":
        return event_files(src.data) is not None
    doc = src.data
    if src.kind == "jsonl":  # an evaluation output (a conversation a line), or SDK events one a line
        return is_eval_output(doc) or is_openhands_events(doc)
    if isinstance(doc, dict):
        return eval_history(doc) is not None
    return objects_only(doc) and (is_openhands_trajectory(doc) or is_openhands_events(doc)
                              or all(eval_history(e) is not None for e in doc))


def _read_openhands(src: Source) -> ReadResult:
    if src.kind == "folder":
        events, model, n_files = folder_events(src.data)
        r = read_openhands_events(events, src.path, model)
        r.meta["event_files"] = n_files
        return r
    doc = src.data
    line = doc[0] if isinstance(doc, list) and len(doc) == 1 and eval_history(doc[0]) is not None else doc
    if isinstance(line, dict):  # one conversation of an evaluation output, or an object holding its history
        events, model = eval_history(line), eval_model(line)
        r = (read_openhands_trajectory(events, src.path) if is_openhands_trajectory(events)
             else read_openhands_events(events, src.path, model))
        r.meta["instance_id"] = line.get("instance_id")
        return r._replace(model=r.model or model)
    if is_openhands_trajectory(doc):
        return read_openhands_trajectory(doc, src.path)
    return read_openhands_events(doc, src.path)


def _is_opencode(src: Source) -> bool:
    return is_opencode_db(src.data) if src.kind == "sqlite" else is_opencode(src.data, src.path)


def _split_opencode(src: Source) -> list[tuple[str, Source]]:
    """A store's sessions (each an export document); an export or stored session file is one."""
    if src.kind != "sqlite":
        return [("", src)]
    parts = [(label, Source("json", doc, src.name, src.path)) for label, doc in db_sessions(src.data)]
    if not parts:
        raise FormatError(f"{src.path}: the opencode store holds no session", path=src.path)
    return parts


def _split_openhands(src: Source) -> list[tuple[str, Source]]:
    """An evaluation output's conversations (one a line or list item); any other OpenHands source is one."""
    doc = src.data
    if isinstance(doc, list) and doc and all(isinstance(e, dict) and eval_history(e) is not None for e in doc):
        return [(label_eval(part), Source(src.kind, part, src.name, src.path)) for part in split_eval(doc)]
    return [("", src)]


def _is_swe_agent(src: Source) -> bool:
    doc = src.data
    return (isinstance(doc, dict) and isinstance(doc.get("history"), list)
            and ("trajectory" in doc or "info" in doc or "replay_config" in doc))


def _in_dialect(dialect: str) -> Callable[[Source], bool]:
    def detect(src: Source) -> bool:
        return src.dialect == dialect
    return detect


def _request_reader(fn: Callable[[Any, str | None], ReadResult]) -> Callable[[Source], ReadResult]:
    def read(src: Source) -> ReadResult:
        r = fn(request_body(src), src.path)
        if src.kind == "json" and is_wrapped_call(src.data):  # a logged call: its other fields are facts of the request
            r.meta.update({k: v for k, v in src.data.items() if k != "request"})
        return r
    return read


def _of_data(fn: Callable) -> Callable[[Source], Any]:
    """``fn(data, path)`` as a function of a :class:`Source` (the shape of most readers)."""
    return lambda src: fn(src.data, src.path)


def _read_text(src: Source) -> ReadResult:
    return ReadResult([], [], None, {"text": src.data})


_SESSIONS = ("json", "jsonl")


def _splitter(cut: Callable[[list[dict]], list[list[dict]]], label: Callable[[list[dict]], str]
              ) -> Callable[[Source], list[tuple[str, Source]]]:
    """A row's ``split``: the records cut by ``cut`` into conversations, each labelled ``label(records)``."""
    def split(src: Source) -> list[tuple[str, Source]]:
        entries = entries_of(src)
        if entries is None:
            return [("", src)]
        return [(label(part), Source(src.kind, part, src.name, src.path)) for part in cut(entries)]
    return split


#: The formats, in detection order (the first row whose ``detect`` claims a source reads it; a row is tried only
#: on its ``info.kinds``). Rows that share a kind keep the order the shapes need: a Claude Code list before
#: OpenHands and Cline lists, Gemini CLI and OpenHands objects before SWE-agent and request bodies, every session
#: before chat messages (Kimi's records and opencode's messages before chat messages); the request dialects exclude
#: each other (:func:`~snapglyph.readers.requests.detect_request`).
TABLE: tuple[ReaderSpec, ...] = (
    ReaderSpec("claude-code", _is_claude_code, _of_data(read_claude_code), FormatInfo(
        "Claude Code session JSONL", "~/.claude/projects/<project>/<session id>.jsonl",
        "Claude Code session", _SESSIONS), _splitter(split_claude_code, claude_label)),
    ReaderSpec("codex", lambda src: is_codex(src.data), _of_data(read_codex), FormatInfo(
        "OpenAI Codex CLI rollout JSONL", "~/.codex/sessions/2026/05/11/rollout-2026-05-11T11-26-55-<id>.jsonl",
        "Codex rollout", ("jsonl",)), _splitter(split_codex, codex_label)),
    ReaderSpec("copilot", lambda src: is_copilot(src.data), _of_data(read_copilot), FormatInfo(
        "GitHub Copilot CLI session events JSONL", "~/.copilot/session-state/<session id>/events.jsonl",
        "Copilot CLI session", ("jsonl",)), _splitter(split_copilot, copilot_label)),
    ReaderSpec("kimi", lambda src: is_kimi(src.data), _of_data(read_kimi), FormatInfo(
        "Kimi CLI context JSONL", "~/.kimi/sessions/<work dir hash>/<session id>/context.jsonl", "Kimi CLI context",
        ("jsonl",))),
    ReaderSpec("opencode", _is_opencode, _of_data(read_opencode), FormatInfo(
        "opencode session (`opencode export` JSON, its SQLite store, or a stored session file)",
        "~/.local/share/opencode/opencode.db", "opencode session", ("json", "sqlite")), _split_opencode),
    ReaderSpec("gemini-cli", _is_gemini_cli, _of_data(read_gemini_cli), FormatInfo(
        "Gemini CLI session (JSON, or the JSONL append log)",
        "~/.gemini/tmp/<project hash>/chats/session-2026-04-23T12-53-<id>.jsonl", "Gemini CLI session", _SESSIONS),
        _splitter(split_gemini_cli, gemini_label)),
    ReaderSpec("openhands", _is_openhands, _read_openhands, FormatInfo(
        "OpenHands conversation folder (SDK events, or their JSON lines), V0 trajectory JSON, evaluation output",
        "~/.openhands/conversations/<conversation id>/ holding events/event-*.json", "OpenHands conversation",
        ("json", "jsonl", "folder")), _split_openhands),
    ReaderSpec("swe-agent", _is_swe_agent, _of_data(read_swe_agent), FormatInfo(
        "SWE-agent trajectory", "trajectories/<user>/<run>/<instance>/<instance>.traj", "SWE-agent trajectory",
        ("json",))),
    ReaderSpec("cline", lambda src: is_cline(src.data, src.name), _of_data(read_cline), FormatInfo(
        "Cline / Roo Code task history",
        "~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/<task id>/api_conversation_history.json",
        "Cline/Roo history", ("json",))),
    ReaderSpec("pi", lambda src: is_pi(src.data), _of_data(read_pi), FormatInfo(
        "pi coding-agent session JSONL", "~/.pi/agent/sessions/<cwd>/<timestamp>_<id>.jsonl", "pi session",
        ("jsonl",)), _splitter(split_pi, pi_label)),
    ReaderSpec("openai", _in_dialect("openai"), _request_reader(read_openai), FormatInfo(
        "OpenAI chat completions request, or a message list (JSON or JSONL)", "request.json",
        "OpenAI chat messages", ("json", "jsonl", "request"))),
    ReaderSpec("anthropic", _in_dialect("anthropic"), _request_reader(read_anthropic), FormatInfo(
        "Anthropic messages request body", "request.json", "Anthropic messages", ("json", "jsonl", "request"))),
    ReaderSpec("responses", _in_dialect("responses"), _request_reader(read_responses), FormatInfo(
        "OpenAI Responses request (instructions, input items)", "request.json", "OpenAI Responses input",
        ("json", "jsonl", "request"))),
    ReaderSpec("gemini", _in_dialect("gemini"), _request_reader(read_gemini), FormatInfo(
        "Gemini API generateContent request body", "request.json", "Gemini generateContent body",
        ("json", "request"))),
    ReaderSpec("cline-md", lambda src: is_cline_markdown(src.data, src.name), _of_data(read_cline_markdown),
               FormatInfo("Cline / Roo Code task exported as Markdown",
                          "~/Downloads/cline_task_dec-7-2026_11-20-05-pm.md", "Cline/Roo Markdown export", ("text",))),
    ReaderSpec("aider", lambda src: is_aider(src.data, src.name), lambda src: read_aider(src.data), FormatInfo(
        "aider markdown chat history", "<repo>/.aider.chat.history.md", "aider chat history", ("text",))),
    ReaderSpec("text", lambda src: True, _read_text, FormatInfo(
        "any other text (render only)", "notes.txt, build.log, -  (standard input)", "text", ("text",))),
)

#: Every value ``Transcript.format`` can take: the names of :data:`TABLE`'s rows.
FORMATS = tuple(spec.name for spec in TABLE)


def detect(src: Source) -> ReaderSpec | None:
    """The first row of :data:`TABLE` that claims ``src`` (tried on the rows whose ``info.kinds`` hold
    ``src.kind``), or None.

    Raises
    ------
    FormatError
        A detection rule met a wrongly typed field, or a body shaped like a request is none.

    Examples
    --------
    >>> detect(Source("jsonl", [{"type": "session", "version": 3, "id": "s1"}])).name
    'pi'
    >>> detect(Source("json", {"foo": 1})) is None
    True
    """
    return guard(_first_claim, TABLE, src, path=src.path)


def _first_claim(rows: tuple[ReaderSpec, ...], src: Source) -> ReaderSpec | None:
    return next((spec for spec in rows if src.kind in spec.info.kinds and spec.detect(src)), None)


def read(spec: ReaderSpec, src: Source) -> ReadResult:
    """Read ``src`` with ``spec``; a wrongly typed field becomes a one-line FormatError naming the format.

    Examples
    --------
    >>> read(spec_named("text"), Source("text", "just words")).meta
    {'text': 'just words'}
    """
    return guard(spec.read, src, path=src.path, what=spec.info.noun)


def spec_named(name: str) -> ReaderSpec:
    """The row of :data:`TABLE` named ``name``.

    Raises
    ------
    KeyError
        For a name that is no row.

    Examples
    --------
    >>> spec_named("pi").info.noun
    'pi session'
    """
    for spec in TABLE:
        if spec.name == name:
            return spec
    raise KeyError(name)


def expected(kind: str, *, examples: bool = False) -> str:
    """The formats read from a ``kind`` of input (:data:`KINDS`), for an error: their nouns in table order, each
    followed by its example path where ``examples``.

    Examples
    --------
    >>> expected("jsonl").startswith("Claude Code session, Codex rollout, Copilot CLI session, Kimi CLI context")
    True
    >>> expected("folder", examples=True)
    'OpenHands conversation like ~/.openhands/conversations/<conversation id>/ holding events/event-*.json'
    """
    nouns = [spec.info.noun + (f" like {spec.info.example}" if examples else "") for spec in TABLE
             if kind in spec.info.kinds]
    return ", ".join(nouns[:-1]) + " or " + nouns[-1] if len(nouns) > 1 else "".join(nouns)

