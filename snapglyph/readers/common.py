"""Helpers shared by the transcript readers: what a reader returns (:class:`ReadResult`), image parts, JSON arguments,
request settings, unknown blocks, snapshot marking, id numbering.

Snapshot texts are parsed by :func:`snapglyph.model.snapshot_text.parse_snapshot_text` (re-exported by
:mod:`snapglyph.readers.registry`).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from ..errors import FormatError
from ..model.images import image_size
from ..model.messages import OPENING_USER_LINE, Message, Part
from ..model.snapshot_text import parse_snapshot_text

__all__ = ["ReadResult", "as_str", "coerce_types", "dumps_args", "extra_keys", "image_part", "mark_snapshots",
           "number_messages", "part_extra", "request_meta", "require_dict", "unknown_block"]


class ReadResult(NamedTuple):
    """What every reader returns; :mod:`snapglyph.readers.registry` numbers the messages and wraps them in a
    :class:`~snapglyph.readers.registry.Transcript`.

    Attributes
    ----------
    messages : list of Message
        The conversation in neutral form, in order; ids are assigned later by the caller.
    tools : list of dict
        Tool definitions ``{"name", "description", "parameters"}`` (a JSON schema); empty where the source has none.
    model : str or None
        The model the source names (the request's ``model``, or the last model a session used).
    meta : dict
        Format facts (request settings, session ids, skipped entry counts); a ``"repairs"`` list of sentences
        becomes ``Transcript.notes``.

    Examples
    --------
    >>> r = ReadResult([Message(0, "user", [Part("text", text="hi")])], [], None, {})
    >>> r.messages[0].text(), r.model
    ('hi', None)
    """

    messages: list[Message]
    tools: list[dict]
    model: str | None
    meta: dict[str, Any]


#: The keys of a request body that hold its content; every other key is a setting (:func:`request_meta`).
_REQUEST_CONTENT_KEYS = frozenset({"messages", "system", "tools", "input", "instructions", "model"})

def drop_opening_line(messages: list[Message]) -> bool:
    """Remove the neutral user line a snapglyph request puts before an opening assistant message, in place.

    Returns whether it was there: the first message after the system prompt is a user message holding only
    :data:`~snapglyph.model.messages.OPENING_USER_LINE`, and an assistant message follows it.
    """
    i = next((k for k, m in enumerate(messages) if m.role != "system"), None)
    if (i is None or i + 1 >= len(messages) or messages[i].role != "user" or messages[i + 1].role != "assistant"
            or [(p.kind, p.text) for p in messages[i].parts] != [("text", OPENING_USER_LINE)]):
        return False
    del messages[i]
    return True


def number_messages(messages: list[Message]) -> None:
    """Assign message ids in place: ordinals ``0, 1, ...``, with snapshot messages taking their covered ids.

    A message whose ``meta["snapshot"]`` is set gets the first covered id; the next message continues at the
    largest covered id plus one.

    Examples
    --------
    >>> msgs = [Message(0, "system"), Message(0, "user", meta={"snapshot": {"covered": [[1, 40]]}}),
    ...         Message(0, "assistant")]
    >>> number_messages(msgs)
    >>> [m.id for m in msgs]
    [0, 1, 41]
    """
    nxt = 0
    for m in messages:
        snap = m.meta.get("snapshot")
        if snap and snap.get("covered"):
            m.id = min(lo for lo, _ in snap["covered"])
            nxt = max(hi for _, hi in snap["covered"]) + 1
        elif snap is not None:  # a snapshot of paged parts only stands for no message of its own
            m.id = nxt
        else:
            m.id = nxt
            nxt += 1


def mark_snapshots(messages: list[Message]) -> int:
    """Find snapshot messages (user messages whose last text part is a snapshot text) and set their meta.

    Returns the number of snapshot messages found. Modifies ``messages`` in place.

    Examples
    --------
    >>> text = "snapglyph snapshot: the images above show messages #1-#40 as pages."
    >>> msgs = [Message(0, "user", [Part("image"), Part("text", text=text)]), Message(1, "assistant")]
    >>> mark_snapshots(msgs), msgs[0].meta["snapshot"]["covered"]
    (1, [[1, 40]])
    """
    n = 0
    for m in messages:
        if m.role != "user":
            continue
        texts = [p for p in m.parts if p.kind == "text"]
        if not texts:
            continue
        snap = parse_snapshot_text(texts[-1].text)
        if snap is not None:
            m.meta["snapshot"] = snap
            n += 1
    return n


class CallNames:
    """Tool names by call id, for naming tool results; a call id used twice names its results in call order.

    Sources sometimes repeat a tool call id inside one assistant message; each result carrying that id then takes
    the name of the next call with it that no result has taken yet (the last one once all are taken).

    Examples
    --------
    >>> names = CallNames()
    >>> names.add("x", "read"); names.add("x", "bash")
    >>> names.take("x"), names.take("x"), names.take("x"), names.take("y")
    ('read', 'bash', 'bash', '')
    """

    def __init__(self) -> None:
        self._names: dict[str, list[str]] = {}
        self._next: dict[str, int] = {}

    def add(self, call_id: str, name: str) -> None:
        """Record one call of ``name`` with ``call_id``."""
        self._names.setdefault(call_id, []).append(name)

    def peek(self, call_id: str) -> str:
        """The name the next result with ``call_id`` would take (``""`` for an unknown id); nothing is taken."""
        names = self._names.get(call_id)
        return names[min(self._next.get(call_id, 0), len(names) - 1)] if names else ""

    def take(self, call_id: str) -> str:
        """The name of the next call with ``call_id`` not yet answered (``""`` for an unknown id)."""
        name = self.peek(call_id)
        if call_id in self._names:
            self._next[call_id] = self._next.get(call_id, 0) + 1
        return name


_STR_FIELDS = ("text", "name", "arguments", "call_id", "media_type", "data", "url", "signature")


def as_str(v: Any) -> str:
    """A source field as text: ``None`` -> ``""``, a dict or list -> its JSON, anything else -> ``str(v)``.

    Examples
    --------
    >>> as_str(None), as_str({"a": "é"}), as_str(3.5)
    ('', '{"a": "é"}', '3.5')
    """
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def coerce_types(messages: list[Message], tools: list[dict]) -> None:
    """Make every string field of every part (and of tool definitions) a ``str``, in place.

    Sources are JSON written by other programs; a number or object where a string belongs is turned into text
    (objects as JSON) rather than carried along to crash a later stage.

    Examples
    --------
    >>> msgs = [Message(0, "assistant", [Part("tool_call", name=7, arguments={"n": 1}, is_error=0)])]
    >>> tools = [{"name": "ls", "parameters": None}]
    >>> coerce_types(msgs, tools)
    >>> p = msgs[0].parts[0]
    >>> p.name, p.arguments, p.is_error, tools
    ('7', '{"n": 1}', False, [{'name': 'ls', 'parameters': {'type': 'object', 'properties': {}}, 'description': ''}])
    """
    for m in messages:
        stack = list(m.parts)
        while stack:
            p = stack.pop()
            for f in _STR_FIELDS:
                v = getattr(p, f)
                if not isinstance(v, str):
                    setattr(p, f, as_str(v))
            if not isinstance(p.is_error, bool):
                p.is_error = bool(p.is_error)
            stack.extend(p.content)
    for t in tools:
        for f in ("name", "description"):
            if not isinstance(t.get(f), str):
                t[f] = as_str(t.get(f))
        if not isinstance(t.get("parameters"), dict):
            t["parameters"] = {"type": "object", "properties": {}}


def dumps_args(obj: Any) -> str:
    """Serialize tool-call arguments given as an object the way Anthropic's neutral form wants them.

    Examples
    --------
    >>> dumps_args({"path": "a.py", "n": 2}), dumps_args('{"raw": 1}')
    ('{"path": "a.py", "n": 2}', '{"raw": 1}')
    """
    if isinstance(obj, str):
        return obj
    return json.dumps(obj, ensure_ascii=False)


def image_part(media_type: str = "", data: str = "", url: str = "", meta: dict | None = None) -> Part:
    """Build an ``image`` part; a ``data:`` URL is split into media type and base64 payload; size read from data.

    Examples
    --------
    >>> png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
    >>> p = image_part(url="data:image/png;base64," + png)
    >>> p.media_type, p.url, (p.width, p.height), p.nbytes
    ('image/png', '', (1, 1), 67)
    """
    if url.startswith("data:") and not data:
        head, _, payload = url.partition(",")
        mt = head[5:].split(";")[0]
        if ";base64" in head:
            media_type, data, url = mt or media_type, payload, ""
    part = Part(kind="image", media_type=media_type or "", data=data or "", url=url or "", meta=dict(meta or {}))
    if part.data:
        size = image_size(part.data)
        if size is not None:
            part.width, part.height = size
    return part


def extra_keys(obj: dict, standard: set[str] | frozenset[str]) -> dict:
    """Return the keys of ``obj`` outside ``standard`` (kept in ``meta["extra"]``).

    Examples
    --------
    >>> extra_keys({"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}, {"type", "text"})
    {'cache_control': {'type': 'ephemeral'}}
    """
    return {k: v for k, v in obj.items() if k not in standard}


def part_extra(b: dict, standard: set[str]) -> dict:
    """A part's meta holding the block's keys outside ``standard`` under ``"extra"`` (``{}`` when there are none).

    Examples
    --------
    >>> part_extra({"type": "text", "text": "hi", "cache_control": 1}, {"type", "text"})
    {'extra': {'cache_control': 1}}
    """
    extra = extra_keys(b, standard)
    return {"extra": extra} if extra else {}


def unknown_block(b: dict) -> Part:
    """A content block of a kind the neutral form lacks: a short text stand-in, the block kept in ``meta``.

    Examples
    --------
    >>> unknown_block({"type": "audio", "id": "a1"}).text
    '[audio]'
    """
    return Part(kind="text", text=f"[{b.get('type', 'block')}]", meta={"source_block": b})


def request_meta(body: dict) -> dict:
    """The request's settings other than its content: each at the top of the meta (as before) and all together
    under ``"params"`` (what a compacted request carries over, see :mod:`snapglyph.providers.params`).

    Examples
    --------
    >>> request_meta({"model": "m", "messages": [], "temperature": 0})
    {'temperature': 0, 'params': {'temperature': 0}}
    """
    params = {k: v for k, v in body.items() if k not in _REQUEST_CONTENT_KEYS}
    return {**params, "params": dict(params)}


def require_dict(obj: Any, what: str, path: str | None) -> dict:
    """Return ``obj`` if it is a dict, else raise :class:`FormatError` naming ``what``.

    Examples
    --------
    >>> require_dict({"a": 1}, "message 3", "t.json")
    {'a': 1}
    >>> require_dict([1], "message 3", "t.json")
    Traceback (most recent call last):
    ...
    snapglyph.errors.FormatError: message 3 is a list, expected a JSON object
    """
    if not isinstance(obj, dict):
        raise FormatError(f"{what} is a {type(obj).__name__}, expected a JSON object", path=path)
    return obj
