"""Reader for Gemini CLI sessions (``~/.gemini/tmp/<project hash>/chats/session-*.json`` and ``*.jsonl``).

Schema source: ``packages/core/src/services/chatRecordingTypes.ts`` (``ConversationRecord``, ``MessageRecord``,
``ToolCallRecord``, ``RewindRecord``, ``MetadataUpdateRecord``), ``loadConversationRecord`` in
``chatRecordingService.ts``, and ``convertSessionToClientHistory`` in ``packages/core/src/utils/sessionUtils.ts`` of
github.com/google-gemini/gemini-cli (read 2026-12-01).

Two layouts:

- the legacy single JSON ``{"sessionId", "projectHash", "startTime", "lastUpdated", "messages": [...]}``;
- the append log JSONL: a metadata line (``sessionId``, ``projectHash``, ...), ``{"$set": {...}}`` metadata updates,
  message records (objects with a string ``id``) and ``{"$rewindTo": id}`` records. As Gemini CLI loads it: a
  message record whose id was seen before replaces that message in its first place (a model message is written
  again once its tool results arrive: the last record wins); ``$rewindTo`` removes that message and every later one
  (all messages when the id is unknown); a ``$set`` holding ``messages`` replaces the whole list.

Messages map to the model's history as ``convertSessionToClientHistory`` does: ``info``/``error``/``warning``
records and user slash commands (text starting with ``/`` or ``?``) are not sent to the model and are skipped
(counted in ``meta["skipped"]``); a ``gemini`` message is one assistant message (its ``content``, then a
``tool_call`` part per ``toolCalls`` entry, ``args`` as JSON), followed by one ``tool`` message holding the results
of the calls that have one (``functionResponse.response.output``, or ``.error`` as an error result). ``thoughts``
(subject and description summaries) become ``thinking`` parts, never drawn. Record ids are kept in
``meta["record_id"]``, tool call ids in ``Part.call_id``; calls without a recorded result are counted in
``meta["calls_without_result"]`` (the dialect writers give them an error result). A ``user`` record's text is
marked typed by a person (``Part.meta["typed"]``) unless the record has a ``displayContent``
(``BaseMessageRecord`` in chatRecordingTypes.ts): then ``content`` is what the CLI made of the typed text (a slash
command's prompt, inlined ``@`` files, its own "Please continue."), not what was typed.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part
from .common import ReadResult, as_str, image_part, mark_typed

__all__ = [
    "is_gemini_cli_json",
    "is_gemini_cli_jsonl",
    "read_gemini_cli",
]

_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})


def is_gemini_cli_json(doc: Any) -> bool:
    """Whether a parsed JSON document is a legacy Gemini CLI session (``sessionId`` and typed ``messages``).

    Examples
    --------
    >>> is_gemini_cli_json({"sessionId": "s1", "messages": [{"type": "user", "content": "hi"}]})
    True
    >>> is_gemini_cli_json({"sessionId": "s1", "messages": [{"role": "user", "content": "hi"}]})
    False
    """
    return (isinstance(doc, dict) and "sessionId" in doc and isinstance(doc.get("messages"), list)
            and all(isinstance(m, dict) and m.get("type") in _TYPES for m in doc["messages"]))


def is_gemini_cli_jsonl(entries: list[dict]) -> bool:
    """Whether parsed JSONL entries are a Gemini CLI append log (metadata line, ``$set``/``$rewindTo``, records).

    Examples
    --------
    >>> is_gemini_cli_jsonl([{"sessionId": "s1", "projectHash": "p"}])
    True
    >>> is_gemini_cli_jsonl([{"$rewindTo": "m1"}, {"id": "m2", "type": "user", "content": "hi"}])
    True
    >>> is_gemini_cli_jsonl([{"id": "m2", "type": "user", "content": "hi"}])
    False
    """
    head = entries[0] if entries else {}
    if "sessionId" in head and "projectHash" in head:
        return True
    return any("$set" in e or "$rewindTo" in e for e in entries[:20]) and any(
        e.get("type") in _TYPES and isinstance(e.get("id"), str) for e in entries)


def _replay(entries: list[dict]) -> tuple[list[dict], dict, list[str]]:
    """Apply the append log as ``loadConversationRecord`` does: returns (messages, metadata, repair notes)."""
    meta: dict[str, Any] = {}
    records: dict[str, dict] = {}  # insertion order = first appearance, value = last record
    facts: Counter = Counter()
    for e in entries:
        if isinstance(e.get("$rewindTo"), str):
            rid = e["$rewindTo"]
            if rid in records:
                keys = list(records)
                for k in keys[keys.index(rid):]:
                    del records[k]
                    facts["rewound"] += 1
            else:
                facts["rewound"] += len(records)
                records.clear()
        elif isinstance(e.get("id"), str):
            if e["id"] in records:
                facts["records rewritten"] += 1
            records[e["id"]] = e
        elif isinstance(e.get("$set"), dict):
            meta.update(e["$set"])
        elif isinstance(e.get("sessionId"), str):
            meta.update(e)
        else:
            facts["unrecognized"] += 1
    notes = []
    if facts["records rewritten"]:
        notes.append(f"{facts['records rewritten']} message records were written again under an earlier id; the "
                     "last record of each id is read, in the place of the first, as Gemini CLI does")
    if facts["rewound"]:
        notes.append(f"{facts['rewound']} messages were removed by $rewindTo records, as Gemini CLI does")
    if facts["unrecognized"]:
        notes.append(f"{facts['unrecognized']} lines that are neither messages nor metadata were skipped")
    msgs = meta.pop("messages", None)
    if isinstance(msgs, list) and msgs:
        notes.append(f"a $set record holds the whole message list ({len(msgs)} messages); it is read instead of "
                     "the message records")
        return [m for m in msgs if isinstance(m, dict)], meta, notes
    return list(records.values()), meta, notes


def _parts(content: Any, path: str | None, where: str) -> list[Part]:
    """A ``PartListUnion`` (a string, one part or a list of parts/strings) as neutral parts."""
    if content is None or content == "":
        return []
    items = content if isinstance(content, list) else [content]
    parts: list[Part] = []
    for b in items:
        if isinstance(b, str):
            parts.append(Part(kind="text", text=b))
        elif not isinstance(b, dict):
            raise FormatError(f"{where}: a content part is a {type(b).__name__}", path=path)
        elif "text" in b:
            kind = "thinking" if b.get("thought") else "text"
            parts.append(Part(kind=kind, text=as_str(b.get("text"))))
        elif isinstance(b.get("inlineData"), dict):
            d = b["inlineData"]
            parts.append(image_part(media_type=as_str(d.get("mimeType")), data=as_str(d.get("data"))))
        else:
            parts.append(Part(kind="text", text=f"[{next(iter(b), 'part')}]", meta={"source_block": b}))
    return [p for p in parts if p.kind != "text" or p.text]


def _result_parts(result: Any, path: str | None, where: str) -> tuple[list[Part], bool]:
    """The content of a tool call's ``result`` and whether it reports an error."""
    if isinstance(result, str):
        return [Part(kind="text", text=result)], False
    items = result if isinstance(result, list) else [result]
    content: list[Part] = []
    error = False
    for b in items:
        fr = b.get("functionResponse") if isinstance(b, dict) else None
        if isinstance(fr, dict):
            resp = fr.get("response")
            if isinstance(resp, dict) and "error" in resp and "output" not in resp:
                error = True
                content.append(Part(kind="text", text=as_str(resp["error"])))
            elif isinstance(resp, dict) and "output" in resp:
                content.append(Part(kind="text", text=as_str(resp["output"])))
            elif resp is not None:
                content.append(Part(kind="text", text=json.dumps(resp, ensure_ascii=False)))
            for q in fr.get("parts") or []:
                content.extend(_parts(q, path, where) if isinstance(q, dict) else [])
        else:
            content.extend(_parts(b, path, where))
    return content, error


def _gemini_message(m: dict, path: str | None, where: str, calls_without: list[int]) -> list[Message]:
    base = {"record_id": m.get("id"), "timestamp": m.get("timestamp")}
    for k in ("model", "tokens"):
        if m.get(k) is not None:
            base[k] = m[k]
    parts = [Part(kind="thinking", text=as_str(t.get("subject")) + "\n" + as_str(t.get("description")))
             for t in m.get("thoughts") or [] if isinstance(t, dict)]
    parts += _parts(m.get("content"), path, where)
    results: list[Part] = []
    for tc in m.get("toolCalls") or []:
        if not isinstance(tc, dict):
            raise FormatError(f"{where}: a tool call is a {type(tc).__name__}", path=path)
        cid, name = as_str(tc.get("id")), as_str(tc.get("name"))
        args = tc.get("args") if tc.get("args") is not None else {}
        parts.append(Part(kind="tool_call", name=name, call_id=cid, meta={"status": tc.get("status")},
                          arguments=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)))
        if tc.get("result") in (None, "", []):
            calls_without[0] += 1
            continue
        content, error = _result_parts(tc["result"], path, where)
        results.append(Part(kind="tool_result", call_id=cid, name=name, content=content,
                            is_error=error or tc.get("status") == "error"))
    out = [Message(0, "assistant", parts, base)] if parts else []
    if results:
        out.append(Message(0, "tool", results, {"record_id": m.get("id")}))
    return out


def read_gemini_cli(doc: dict | list, path: str | None = None) -> ReadResult:
    """Read a Gemini CLI session: a legacy JSON document, or the parsed lines of a JSONL append log.

    Parameters
    ----------
    doc : dict or list of dict
        The ``ConversationRecord`` (legacy ``.json``) or the JSONL lines in file order.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        No tool definitions, the last model a message names, and format facts: ``session`` (metadata), ``skipped``,
        ``repairs`` (sentences on the append-log rewrites and rewinds applied; :func:`~snapglyph.readers.registry.load`
        moves them to ``Transcript.notes``), ``records`` and ``calls_without_result``.

    Raises
    ------
    FormatError
        A message or tool call that is not an object, or content of the wrong type.

    Examples
    --------
    >>> log = [{"sessionId": "s", "projectHash": "h"},
    ...        {"id": "a", "type": "user", "content": [{"text": "list files"}]},
    ...        {"id": "b", "type": "gemini", "content": ""},
    ...        {"id": "b", "type": "gemini", "content": "", "toolCalls": [{"id": "c1", "name": "ls", "args": {},
    ...         "result": [{"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a.txt"}}}]}]}]
    >>> msgs, _, _, meta = read_gemini_cli(log)
    >>> [(m.role, [p.kind for p in m.parts]) for m in msgs]
    [('user', ['text']), ('assistant', ['tool_call']), ('tool', ['tool_result'])]
    >>> meta["repairs"][0][:43]
    '1 message records were written again under '
    """
    if isinstance(doc, dict):
        records, session, repairs = doc.get("messages") or [], {k: v for k, v in doc.items() if k != "messages"}, []
    else:
        records, session, repairs = _replay(doc)
    out: list[Message] = []
    skipped: Counter = Counter()
    calls_without = [0]
    model = None
    for i, m in enumerate(records):
        if not isinstance(m, dict):
            raise FormatError(f"message {i} is a {type(m).__name__}, expected a JSON object", path=path)
        t = m.get("type")
        where = f"message {i} ({t})"
        if t == "user":
            parts = _parts(m.get("content"), path, where)
            text = "".join(p.text for p in parts if p.kind == "text").strip()
            if text.startswith(("/", "?")):
                skipped["slash commands"] += 1
                continue
            if not parts:
                skipped["empty user messages"] += 1
                continue
            mark_typed(parts, m.get("displayContent") is None)  # displayContent: the CLI rewrote what was typed
            out.append(Message(0, "user", parts, {"record_id": m.get("id"), "timestamp": m.get("timestamp")}))
        elif t == "gemini":
            if m.get("model"):
                model = as_str(m["model"])
            new = _gemini_message(m, path, where, calls_without)
            if not new:
                skipped["empty model messages"] += 1
            out.extend(new)
        else:
            skipped[str(t)] += 1
    meta = {"session": session, "records": len(records), "skipped": dict(skipped), "repairs": repairs,
            "calls_without_result": calls_without[0]}
    return ReadResult(out, [], model, meta)
