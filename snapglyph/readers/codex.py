"""Reader for OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Schema source: the ``RolloutItem`` enum and ``CompactedItem`` / ``SessionMeta`` structs of
``codex-rs/protocol/src/protocol.rs`` in github.com/openai/codex (read 2026-12-01, commit edb4efe). Each line is
``{"timestamp", "type", "payload"}`` with ``type`` one of:

``session_meta``   the session: ``id``, ``cwd``, ``cli_version``, ``originator``, ``model_provider`` and
                   ``base_instructions.text`` (the instructions Codex sends): the latter becomes the system message.
``response_item``  one Responses API item (``message``, ``function_call``, ``function_call_output``,
                   ``custom_tool_call``, ``custom_tool_call_output``, ``reasoning``, ``web_search_call``, ...): read by
                   :func:`snapglyph.readers.responses.read_responses`, so consecutive assistant-side items form one
                   assistant message and encrypted reasoning is a ``thinking`` part that is never drawn.
``compacted``      Codex's own compaction (``message``, optional ``replacement_history``): a user message holding the
                   summary, in place (``meta["compacted"]``); the history it summarized stays, as in the other readers.
``turn_context``   per-turn settings (``model``, ``cwd``, policies): not a message; the last ``model`` is the model.
``event_msg``      UI events that duplicate the items (``user_message``, ``agent_message``, ``exec_command_end``,
                   ``token_count``...): skipped, counted by subtype in ``meta["skipped"]``; but a ``user_message``
                   event that no ``response_item`` user message repeats (rollouts that hold a user turn only as the
                   event) is that user turn, in place (its ``images`` data URLs kept; ``meta["from_event"]``).

A ``web_search_call`` item (no output item answers it) is kept as assistant text ``[web search] <query>``. A user
message's text is marked typed by a person (``Part.meta["typed"]``) unless it holds one of Codex's contextual
fragments (``is_contextual_user_fragment``, ``codex-rs/core/src/context/contextual_user_message.rs``: environment
context, AGENTS.md / user instructions, shell command output, aborted turns, ...), is a ``compacted`` summary, or
stands for an item without a neutral form. A ``ghost_snapshot`` item (Codex's record of a git snapshot of the work
tree, ``ResponseItem::GhostSnapshot`` in ``codex-rs/protocol/src/models.rs``: never sent to the model) is no
message: skipped and counted (``meta["skipped"]["ghost_snapshot"]``).
Rollouts written before ``RolloutItem`` (a first line ``{"id", "timestamp", "instructions"}`` followed by bare
Responses items and ``{"record_type": "state"}`` lines) are read too (``meta["legacy"]``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..model.messages import Message, Part
from .common import ReadResult, as_str, harness_text, mark_typed
from .responses import read_responses

__all__ = [
    "is_codex",
    "read_codex",
]

_ROLLOUT_TYPES = frozenset({"session_meta", "response_item", "compacted", "turn_context", "event_msg"})
_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
                         "custom_tool_call_output", "local_shell_call", "web_search_call"})


def is_codex(entries: list[dict]) -> bool:
    """Whether parsed JSONL entries look like a Codex rollout (``RolloutItem`` lines, or the legacy layout).

    Examples
    --------
    >>> is_codex([{"type": "session_meta", "payload": {"id": "s1"}}])
    True
    >>> is_codex([{"type": "user", "message": {"role": "user", "content": "hi"}}])
    False
    """
    if any(e.get("type") in _ROLLOUT_TYPES and isinstance(e.get("payload"), dict) for e in entries[:50]):
        return True
    return _is_legacy(entries)


def _is_legacy(entries: list[dict]) -> bool:
    if not entries or "type" in entries[0] or not {"id", "timestamp"} <= set(entries[0]):
        return False
    return any(e.get("type") in _ITEM_TYPES or e.get("record_type") == "state" for e in entries[1:50])


def _web_search_text(item: dict) -> str:
    action = item.get("action") if isinstance(item.get("action"), dict) else {}
    query = action.get("query") or action.get("url") or item.get("query") or ""
    return f"[web search] {as_str(query)}".rstrip()


def _segment_items(items: list[dict]) -> list[dict]:
    """Responses items as read_responses takes them: web searches become assistant text."""
    out = []
    for it in items:
        if it.get("type") == "web_search_call":
            out.append({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": _web_search_text(it)}]})
        else:
            out.append(it)
    return out


def _read_segment(items: list[dict], path: str | None, out: list[Message]) -> None:
    if not items:
        return
    msgs, _, _, _ = read_responses(_segment_items(items), path)
    out.extend(msgs)


def read_codex(entries: list[dict], path: str | None = None) -> ReadResult:
    """Read a Codex CLI rollout, already parsed into JSONL entries (see the module docstring for the rules).

    Parameters
    ----------
    entries : list of dict
        The parsed JSONL lines, in file order.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        No tool definitions (a rollout stores none), the last model a ``turn_context`` names, and format facts:
        ``session`` (the ``session_meta`` fields but the instructions), ``skipped`` (counts by kind),
        ``compactions`` and ``records``.

    Raises
    ------
    FormatError
        A response item that is not an object, or content of the wrong type.

    Examples
    --------
    >>> lines = [{"type": "session_meta", "payload": {"id": "s1", "base_instructions": {"text": "Be brief."}}},
    ...          {"type": "response_item", "payload": {"type": "message", "role": "user",
    ...           "content": [{"type": "input_text", "text": "hi"}]}},
    ...          {"type": "event_msg", "payload": {"type": "user_message", "message": "hi"}}]
    >>> msgs, _, _, meta = read_codex(lines)
    >>> [(m.role, m.text()) for m in msgs], meta["skipped"]
    ([('system', 'Be brief.'), ('user', 'hi')], {'event_msg:user_message': 1})
    >>> msgs[1].parts[0].meta["typed"]
    True
    """
    legacy = "type" not in entries[0] if entries and _is_legacy(entries) else False
    r = _Rollout(path, _item_user_texts(entries))
    for n, e in enumerate(entries):
        if legacy:
            r.legacy_entry(n, e)
        else:
            r.record(e)
    _read_segment(r.items, path, r.out)
    _mark_typed(r.out)
    meta = {"session": r.session, "records": len(entries), "skipped": dict(r.skipped), "compactions": r.compactions}
    if r.from_events:
        meta["user_turns_from_events"] = r.from_events
    if legacy:
        meta["legacy"] = True
    return ReadResult(r.out, [], r.model, meta)


def _user_text(content: Any) -> str:
    """The text of a user message item's content (its ``input_text`` parts joined), for matching its event."""
    if isinstance(content, str):
        return content.strip()
    parts = content if isinstance(content, list) else []
    return "".join(as_str(c.get("text")) for c in parts if isinstance(c, dict)).strip()


def _item_user_texts(entries: list[dict]) -> Counter:
    """How often each user message text occurs as a ``response_item`` (the events that repeat one are skipped)."""
    texts: Counter = Counter()
    for e in entries:
        p = e.get("payload") if e.get("type") == "response_item" else None
        if isinstance(p, dict) and p.get("type") == "message" and p.get("role") == "user":
            texts[_user_text(p.get("content"))] += 1
    return texts


def _event_item(p: dict) -> dict:
    """A ``user_message`` event as the Responses user message item it stands for (text, then its images)."""
    content: list[dict] = [{"type": "input_text", "text": as_str(p.get("message"))}]
    for url in p.get("images") or []:
        if isinstance(url, str) and url:
            content.append({"type": "input_image", "image_url": url})
    return {"type": "message", "role": "user", "content": content}


def _mark_typed(messages: list[Message]) -> None:
    """Mark the user messages' text typed by a person, in place, as Codex tells them apart
    (``parse_user_message`` in ``codex-rs/core/src/event_mapping.rs``): a user message holding any contextual
    fragment (environment context, AGENTS.md instructions, a shell command's output, ...:
    :data:`~snapglyph.readers.common.HARNESS_RULES`) is Codex's own, as are its compaction summaries and items
    without a neutral form (ghost snapshots)."""
    for m in messages:
        if m.role != "user":
            continue
        own = bool(m.meta.get("compacted") or m.meta.get("source_item"))
        mark_typed(m.parts, not own and not any(harness_text(p.text) for p in m.parts if p.kind == "text"))


class _Rollout:
    """What reading a rollout gathers: messages so far, the response items of the open segment, and the facts."""

    def __init__(self, path: str | None, item_texts: Counter | None = None) -> None:
        self.path = path
        self.item_texts = item_texts if item_texts is not None else Counter()
        self.from_events = 0
        self.out: list[Message] = []
        self.skipped: Counter = Counter()
        self.session: dict[str, Any] = {}
        self.model: str | None = None
        self.items: list[dict] = []
        self.compactions = 0

    def system(self, text: Any, source: str) -> None:
        self.out.append(Message(0, "system", [Part(kind="text", text=as_str(text))], {"source": source}))

    def legacy_entry(self, n: int, e: dict) -> None:
        """One line of the older rollout shape: the session first, then items and ``state`` records."""
        if n == 0:
            self.session = {k: v for k, v in e.items() if k != "instructions"}
            if e.get("instructions"):
                self.system(e["instructions"], "instructions")
        elif e.get("record_type") == "state":
            self.skipped["state"] += 1
        elif e.get("type") == "ghost_snapshot":
            self.skipped["ghost_snapshot"] += 1
        else:
            self.items.append(e)

    def record(self, e: dict) -> None:
        """One ``{"type", "payload"}`` line of a current rollout."""
        t, p = e.get("type"), e.get("payload")
        if not isinstance(p, dict):
            self.skipped[f"{t or '?'} without payload"] += 1
        elif t == "response_item" and p.get("type") == "ghost_snapshot":
            self.skipped["ghost_snapshot"] += 1
        elif t == "response_item":
            self.items.append(p)
        elif t == "session_meta":
            self.session = {k: v for k, v in p.items() if k not in ("base_instructions", "instructions")}
            text = p.get("base_instructions") or p.get("instructions")
            text = text.get("text") if isinstance(text, dict) else text
            if text and not any(m.role == "system" for m in self.out):
                self.system(text, "session_meta.base_instructions")
        elif t == "compacted":
            self.compacted(e, p)
        elif t == "turn_context":
            self.skipped["turn_context"] += 1
            if p.get("model"):
                self.model = as_str(p["model"])
        elif t == "event_msg" and p.get("type") == "user_message" and not self.repeated(p):
            self.items.append(_event_item(p))
            self.from_events += 1
        elif t == "event_msg":
            self.skipped[f"event_msg:{p.get('type', '?')}"] += 1
        else:
            self.skipped[str(t)] += 1

    def repeated(self, p: dict) -> bool:
        """Whether a ``user_message`` event repeats a user message item (each item answers one event)."""
        text = as_str(p.get("message")).strip()
        if self.item_texts[text] > 0:
            self.item_texts[text] -= 1
            return True
        return False

    def compacted(self, e: dict, p: dict) -> None:
        """Codex compacted here: the segment so far is read, then its summary stands as a user message."""
        _read_segment(self.items, self.path, self.out)
        self.items = []
        self.compactions += 1
        hist = p.get("replacement_history")
        info = {"replacement_items": len(hist) if isinstance(hist, list) else None, "timestamp": e.get("timestamp")}
        text = as_str(p.get("message")) or f"(Codex compacted the history above: {info['replacement_items']} items)"
        self.out.append(Message(0, "user", [Part(kind="text", text=text)], {"compacted": info}))
