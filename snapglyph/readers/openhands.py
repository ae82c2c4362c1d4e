"""Reader for OpenHands conversations: the SDK's event folder, and the older (V0) trajectory lists.

Schema sources (read 2026-12-01):

- the SDK (V1): github.com/OpenHands/software-agent-sdk, ``openhands-sdk/openhands/sdk/event/`` (``base.py``:
  ``LLMConvertibleEvent.events_to_messages``; ``llm_convertible/{message,action,observation,system}.py``;
  ``condenser.py``). A conversation folder holds ``events/event-<n>-<id>.json``, one event per file, each with a
  ``kind`` (``SystemPromptEvent``, ``MessageEvent``, ``ActionEvent``, ``ObservationEvent``,
  ``UserRejectObservation``, ``AgentErrorEvent``, ``Condensation``, ``CondensationSummaryEvent``, state events).
- V0: github.com/All-Hands-AI/OpenHands, ``openhands/events/serialization/event.py`` and
  ``openhands/memory/conversation_memory.py``: a JSON list of events ``{id, source, action | observation, message,
  args | content + extras, tool_call_metadata, cause}``.

Mapping, as ``events_to_messages`` (SDK) and ``ConversationMemory`` (V0) do:

- consecutive ``ActionEvent`` s of one ``llm_response_id`` form one assistant message (the first one's ``thought``,
  one ``tool_call`` per action); in V0 the assistant message is the one in ``tool_call_metadata.model_response``
  (its text and every tool call of that response), written once per response id;
- an observation (``ObservationEvent``, ``UserRejectObservation``, ``AgentErrorEvent``; V0: an observation with
  ``tool_call_metadata``) is a ``tool`` message answering ``tool_call_id``;
- ``MessageEvent`` / V0 ``message`` actions are user or assistant messages; ``SystemPromptEvent`` / V0 ``system``
  actions the system message (their tools the tool definitions);
- a ``Condensation`` hides its ``forgotten_event_ids`` from the history the model sees, and its summary (or a
  ``CondensationSummaryEvent``) is a user message at ``summary_offset``, as the SDK's ``View`` builds it
  (``meta["condensed"]`` counts the hidden events);
- state changes, ``null`` observations and other events that are not messages are skipped and counted by kind in
  ``meta["skipped"]``. Event ids stay in ``meta["event_ids"]``, tool call ids in ``Part.call_id``;
- a user message's text is marked typed by a person (``Part.meta["typed"]``) where its event's ``source`` is
  ``user`` (``EventSource``: user, agent, environment); summaries and observations sent as user text are not.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part
from .common import ReadResult, as_str, image_part, mark_typed
from .decode import json_error
from .requests import normalize_tools

__all__ = [
    "event_files",
    "folder_events",
    "is_openhands_events",
    "is_openhands_trajectory",
    "read_openhands_events",
    "read_openhands_trajectory",
]

_V0_SKIP_OBS = frozenset({"null", "agent_state_changed", "recall", "user_rejected_placeholder"})


# ------------------------------------------------------------------------------------------------------- detection
def is_openhands_trajectory(doc: Any) -> bool:
    """Whether a parsed JSON list holds V0 OpenHands events (``source`` plus ``action`` or ``observation``).

    Examples
    --------
    >>> is_openhands_trajectory([{"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}}])
    True
    >>> is_openhands_trajectory([{"source": "user"}]), is_openhands_trajectory([])
    (False, False)
    """
    return (isinstance(doc, list) and bool(doc) and all(isinstance(e, dict) for e in doc)
            and all("source" in e and ("action" in e or "observation" in e) for e in doc))


def is_openhands_events(doc: Any) -> bool:
    """Whether a parsed JSON list holds SDK events (objects with a ``kind`` ending in ``Event`` or the like).

    Examples
    --------
    >>> is_openhands_events([{"id": "e1", "kind": "MessageEvent", "source": "user"}])
    True
    >>> is_openhands_events([{"id": "e1", "kind": "MessageEvent"}])
    False
    """
    return (isinstance(doc, list) and bool(doc) and all(isinstance(e, dict) and isinstance(e.get("kind"), str)
                                                        and "source" in e for e in doc))


def event_files(folder: Path) -> list[Path] | None:
    """The ``event-*.json`` files of an SDK conversation folder (or of its ``events/`` folder), in order; ``None``
    when the folder holds none.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / "events").mkdir()
    >>> for n in ("event-00001-b.json", "event-00000-a.json", "notes.txt"):
    ...     _ = (d / "events" / n).write_text("{}")
    >>> [f.name for f in event_files(d)], event_files(d / "events" / "missing")
    (['event-00000-a.json', 'event-00001-b.json'], None)
    """
    for d in (folder / "events", folder):
        files = sorted(d.glob("event-*.json")) if d.is_dir() else []
        if files:
            return files
    return None


def folder_events(folder: Path) -> tuple[list[dict], str | None, int]:
    """Read an SDK conversation folder: its events (``event-*.json`` in order), the model its ``base_state.json``
    names (None where it names none), and the number of event files.

    Raises
    ------
    FormatError
        A folder with no event files, or an event file that cannot be read or is malformed JSON.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / "events").mkdir()
    >>> _ = (d / "events" / "event-00000-a.json").write_text('{"id": "a", "kind": "MessageEvent"}')
    >>> folder_events(d)
    ([{'id': 'a', 'kind': 'MessageEvent'}], None, 1)
    """
    sp = str(folder)
    files = event_files(folder)
    if files is None:
        raise FormatError(f"{sp} is a directory with no events/event-*.json files (an OpenHands conversation), "
                          "not a transcript file", path=sp)
    events = []
    for f in files:
        try:
            events.append(json.loads(f.read_text(encoding="utf-8", errors="replace")))
        except ValueError as e:  # a JSONDecodeError, or an integer past Python's digit limit (json_error)
            raise json_error(e, f.name, str(f)) from None
        except OSError as e:
            raise FormatError(f"cannot read {f}: {e.strerror or e}", path=str(f)) from None
    model = None
    state = folder / "base_state.json"
    if state.is_file():
        try:
            agent = json.loads(state.read_text(encoding="utf-8", errors="replace")).get("agent") or {}
            model = (agent.get("llm") or {}).get("model") if isinstance(agent, dict) else None
        except (json.JSONDecodeError, OSError, AttributeError):
            model = None
    return events, model, len(files)


# ------------------------------------------------------------------------------------------------------------- SDK
def _content(items: Any, path: str | None, where: str) -> list[Part]:
    if isinstance(items, str):
        return [Part(kind="text", text=items)] if items else []
    parts: list[Part] = []
    for c in items if isinstance(items, list) else []:
        if not isinstance(c, dict):
            raise FormatError(f"{where}: a content item is a {type(c).__name__}", path=path)
        if c.get("type") == "image" or "image_urls" in c:
            parts.extend(image_part(url=as_str(u)) for u in c.get("image_urls") or [])
        else:
            parts.append(Part(kind="text", text=as_str(c.get("text"))))
    return parts


def _thinking(blocks: Any) -> list[Part]:
    out = []
    for b in blocks if isinstance(blocks, list) else []:
        if isinstance(b, dict) and b.get("type") == "redacted_thinking":
            out.append(Part(kind="thinking", signature=as_str(b.get("data")), meta={"redacted": True}))
        elif isinstance(b, dict):
            out.append(Part(kind="thinking", text=as_str(b.get("thinking")), signature=as_str(b.get("signature"))))
    return out


def _call(tc: Any) -> Part:
    tc = tc if isinstance(tc, dict) else {}
    args = tc.get("arguments", "{}")
    return Part(kind="tool_call", name=as_str(tc.get("name")), call_id=as_str(tc.get("id")),
                arguments=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))


def _view(events: list[dict]) -> tuple[list[dict], int]:
    """Events the model sees: forgotten events removed, the newest condensation's summary placed (SDK ``View``)."""
    forgotten = {i for e in events if e.get("kind") == "Condensation" for i in e.get("forgotten_event_ids") or []}
    kept = [e for e in events if e.get("id") not in forgotten and e.get("kind") != "Condensation"]
    last = next((e for e in reversed(events) if e.get("kind") == "Condensation"), None)
    if last and last.get("summary") and last.get("summary_offset") is not None:
        summary = {"kind": "CondensationSummaryEvent", "summary": last["summary"], "id": last.get("id"),
                   "source": "environment"}
        kept.insert(min(int(last["summary_offset"]), len(kept)), summary)
    return kept, len(forgotten)


def _sdk_event(e: dict, path: str | None, where: str, out: list[Message], skipped: Counter) -> None:
    k = e.get("kind")
    ids = {"event_ids": [e.get("id")]}
    if k == "ActionEvent":
        rid = e.get("llm_response_id")
        prev = out[-1] if out else None
        if prev is not None and prev.role == "assistant" and rid and prev.meta.get("llm_response_id") == rid:
            prev.parts.append(_call(e.get("tool_call")))
            prev.meta["event_ids"].append(e.get("id"))
            return
        parts = _thinking(e.get("thinking_blocks")) + _content(e.get("thought"), path, where)
        out.append(Message(0, "assistant", parts + [_call(e.get("tool_call"))], {**ids, "llm_response_id": rid}))
    elif k in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
        if k == "ObservationEvent":
            obs = e.get("observation") if isinstance(e.get("observation"), dict) else {}
            content = _content(obs.get("content"), path, where) + _content(e.get("extended_content"), path, where)
            error = bool(obs.get("is_error"))
        elif k == "UserRejectObservation":
            content = [Part(kind="text", text=f"Action rejected: {as_str(e.get('rejection_reason'))}")]
            error = False
        else:
            content, error = [Part(kind="text", text=as_str(e.get("error")))], True
        out.append(Message(0, "tool", [Part(kind="tool_result", call_id=as_str(e.get("tool_call_id")),
                                            name=as_str(e.get("tool_name")), content=content, is_error=error)],
                           ids))
    elif k == "MessageEvent":
        m = e.get("llm_message") if isinstance(e.get("llm_message"), dict) else {}
        role = m.get("role") if m.get("role") in ("user", "assistant", "system") else (
            "user" if e.get("source") == "user" else "assistant")
        parts = _thinking(m.get("thinking_blocks")) + _content(m.get("content"), path, where)
        parts += _content(e.get("extended_content"), path, where)
        parts += [_call(tc) for tc in m.get("tool_calls") or []] if role == "assistant" else []
        if role == "user":
            mark_typed(parts, e.get("source") == "user")
        out.append(Message(0, role, parts, ids))
    elif k == "SystemPromptEvent":
        sp = e.get("system_prompt")
        parts = _content([sp] if isinstance(sp, dict) else sp, path, where)
        parts += _content(e.get("dynamic_context") and [e["dynamic_context"]], path, where)
        out.append(Message(0, "system", parts, ids))
    elif k == "CondensationSummaryEvent":
        out.append(Message(0, "user", [Part(kind="text", text=as_str(e.get("summary")), meta={"typed": False})],
                           {**ids, "summary": True}))
    else:
        skipped[str(k)] += 1


def _sdk_tools(events: list[dict]) -> list[dict]:
    sp = next((e for e in events if e.get("kind") == "SystemPromptEvent"), None)
    tools = []
    for t in (sp or {}).get("tools") or []:
        if isinstance(t, dict) and (isinstance(t.get("function"), dict) or "parameters" in t):
            tools.extend(normalize_tools([t]))
        elif isinstance(t, dict) and (t.get("name") or t.get("title")):
            tools.append({"name": as_str(t.get("name") or t.get("title")), "description": as_str(t.get("description")),
                          "parameters": {"type": "object", "properties": {}}})
    return tools


def read_openhands_events(events: list[dict], path: str | None = None, model: str | None = None
                          ) -> ReadResult:
    """Read OpenHands SDK events (the parsed ``event-*.json`` files of a conversation, in order).

    Parameters
    ----------
    events : list of dict
        One event per file, in file order.
    path : str, optional
        The folder they came from, named in errors.
    model : str, optional
        The model the conversation's ``base_state.json`` names.

    Returns
    -------
    ReadResult
        See the module docstring; ``meta`` has ``events``, ``skipped`` and
        ``condensed``.

    Raises
    ------
    FormatError
        An event or content item that is not an object.

    Examples
    --------
    >>> ev = [{"kind": "MessageEvent", "id": "e1", "source": "user",
    ...        "llm_message": {"role": "user", "content": [{"type": "text", "text": "run ls"}]}},
    ...       {"kind": "ActionEvent", "id": "e2", "source": "agent", "thought": [], "tool_name": "terminal",
    ...        "tool_call_id": "c1", "llm_response_id": "r1",
    ...        "tool_call": {"id": "c1", "name": "terminal", "arguments": "{\\"command\\": \\"ls\\"}"}},
    ...       {"kind": "ObservationEvent", "id": "e3", "source": "environment", "tool_name": "terminal",
    ...        "tool_call_id": "c1", "action_id": "e2", "observation": {"content": [{"type": "text", "text": "a"}]}},
    ...       {"kind": "ConversationStateUpdateEvent", "id": "e4", "source": "environment"}]
    >>> msgs, _, _, meta = read_openhands_events(ev)
    >>> [m.role for m in msgs], meta["skipped"]
    (['user', 'assistant', 'tool'], {'ConversationStateUpdateEvent': 1})
    """
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise FormatError(f"event {i} is a {type(e).__name__}, expected a JSON object", path=path)
    view, condensed = _view(events)
    out: list[Message] = []
    skipped: Counter = Counter()
    for i, e in enumerate(view):
        _sdk_event(e, path, f"event {e.get('id', i)} ({e.get('kind')})", out, skipped)
    meta = {"events": len(events), "skipped": dict(skipped), "condensed": condensed}
    return ReadResult([m for m in out if m.parts], _sdk_tools(events), model, meta)


# -------------------------------------------------------------------------------------------------------------- V0
def _v0_response_message(tcm: dict) -> dict:
    mr = tcm.get("model_response") if isinstance(tcm.get("model_response"), dict) else {}
    choices = mr.get("choices") if isinstance(mr.get("choices"), list) else []
    msg = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    return msg if isinstance(msg, dict) else {}


def _v0_obs_text(e: dict) -> str:
    text = as_str(e.get("content"))
    md = (e.get("extras") or {}).get("metadata") if isinstance(e.get("extras"), dict) else None
    if e.get("observation") == "run" and isinstance(md, dict):
        text = f"{as_str(md.get('prefix'))}{text}{as_str(md.get('suffix'))}"
    return text or as_str(e.get("message"))


def _v0_action(e: dict, out: list[Message], seen_responses: set, tools: list) -> bool:
    a, args = e.get("action"), e.get("args") if isinstance(e.get("args"), dict) else {}
    ids = {"event_ids": [e.get("id")]}
    tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
    if tcm is not None:
        mr = tcm.get("model_response") if isinstance(tcm.get("model_response"), dict) else {}
        rid = mr.get("id") or tcm.get("tool_call_id")
        if rid in seen_responses:
            if out and out[-1].role == "assistant":
                out[-1].meta["event_ids"].append(e.get("id"))
            return True
        seen_responses.add(rid)
        msg = _v0_response_message(tcm)
        parts = [Part(kind="text", text=as_str(msg.get("content")))] if msg.get("content") else []
        calls = msg.get("tool_calls") or [{"id": tcm.get("tool_call_id"), "function": {
            "name": tcm.get("function_name"), "arguments": json.dumps(args, ensure_ascii=False)}}]
        for c in calls:
            fn = c.get("function") if isinstance(c, dict) and isinstance(c.get("function"), dict) else {}
            parts.append(_call({"id": c.get("id") if isinstance(c, dict) else "", "name": fn.get("name"),
                                "arguments": fn.get("arguments", "{}")}))
        out.append(Message(0, "assistant", parts, {**ids, "response_id": rid}))
        return True
    if a == "message":
        role = "user" if e.get("source") == "user" else "assistant"
        parts = [Part(kind="text", text=as_str(args.get("content", e.get("message"))))]
        parts += [image_part(url=as_str(u)) for u in args.get("image_urls") or [] if role == "user"]
        if role == "user":
            mark_typed(parts, True)
        out.append(Message(0, role, parts, ids))
        return True
    if a == "system":
        out.append(Message(0, "system", [Part(kind="text", text=as_str(args.get("content")))], ids))
        tools.extend(normalize_tools(args.get("tools")) if isinstance(args.get("tools"), list) else [])
        return True
    return False


def read_openhands_trajectory(events: list[dict], path: str | None = None
                              ) -> ReadResult:
    """Read a V0 OpenHands trajectory: a JSON list of actions and observations (see the module docstring).

    Parameters
    ----------
    events : list of dict
        The events, in order.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        The model is the one named by the last ``model_response``; ``meta``
        has ``events`` and ``skipped`` (counts by action or observation kind).

    Raises
    ------
    FormatError
        An event that is not an object.

    Examples
    --------
    >>> ev = [{"id": 1, "source": "user", "action": "message", "args": {"content": "hi"}},
    ...       {"id": 2, "source": "environment", "observation": "agent_state_changed", "content": ""}]
    >>> msgs, _, _, meta = read_openhands_trajectory(ev)
    >>> [(m.role, m.text()) for m in msgs], meta["skipped"]
    ([('user', 'hi')], {'agent_state_changed': 1})
    """
    out: list[Message] = []
    tools: list[dict] = []
    skipped: Counter = Counter()
    seen: set = set()
    model = None
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise FormatError(f"event {i} is a {type(e).__name__}, expected a JSON object", path=path)
        tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
        if tcm and isinstance(tcm.get("model_response"), dict) and tcm["model_response"].get("model"):
            model = as_str(tcm["model_response"]["model"])
        if "action" in e:
            if not _v0_action(e, out, seen, tools):
                skipped[as_str(e.get("action"))] += 1
            continue
        kind = as_str(e.get("observation"))
        if tcm is not None:
            out.append(Message(0, "tool", [Part(kind="tool_result", call_id=as_str(tcm.get("tool_call_id")),
                                                name=as_str(tcm.get("function_name")),
                                                content=[Part(kind="text", text=_v0_obs_text(e))],
                                                is_error=kind == "error")], {"event_ids": [e.get("id")]}))
        elif kind in _V0_SKIP_OBS:
            skipped[kind] += 1
        else:  # an observation no tool call asked for (a user-run command, an error): text the model sees
            out.append(Message(0, "user", [Part(kind="text", text=_v0_obs_text(e), meta={"typed": False})],
                               {"event_ids": [e.get("id")], "observation": kind}))
    return ReadResult(out, tools, model, {"events": len(events), "skipped": dict(skipped)})
