"""Helpers shared by the transcript readers: image parts, JSON arguments, snapshot text, id numbering.

Nothing here is public API except :func:`parse_snapshot_text` (re-exported by :mod:`snapglyph.readers.registry`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import FormatError
from ..model.messages import Message, Part, image_size

__all__ = [
    "SNAPSHOT_PREFIX",
    "parse_snapshot_text",
]

#: The text every snapshot message's last text part starts with (see :func:`parse_snapshot_text`).
SNAPSHOT_PREFIX = "snapglyph snapshot:"

_RANGE = re.compile(r"#(\d+)(?:\s*[-\u2013]\s*#?(\d+))?")
_COVERED = re.compile(r"messages\s+((?:#\d+(?:\s*[-\u2013]\s*#?\d+)?\s*,?\s*(?:and\s+)?)+)")
_DROPPED = re.compile(r"Not shown[^:]*:\s*((?:#\d+(?:\s*[-\u2013]\s*#?\d+)?\s*,?\s*(?:and\s+)?)+)")


def _ranges(text: str) -> list[list[int]]:
    out = []
    for m in _RANGE.finditer(text):
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            lo, hi = hi, lo
        out.append([lo, hi])
    return out


def _merge(ranges: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def parse_snapshot_text(text: str) -> dict | None:
    """Parse the short text of a snapshot message written by ``snapglyph compact``.

    The text has one of these forms (ranges comma-separated, a single id is ``#7``)::

        snapglyph snapshot: the images above show messages #3-#418 as pages.
        snapglyph snapshot: the images above show messages #41-#418 as pages. Not shown, or only in part: #3-#41.
        snapglyph snapshot: messages #3-#40 are not shown.
        snapglyph snapshot: ... The last 3 pages show outputs of the newest messages: #991 (tool result 1).

    (the closing sentence names oversized parts of the newest messages, which stay in the tail as pointers: they are
    not covered ids; an optional parenthesis after "Not shown"/"not shown" says how to recall them). The older form, where the
    shown ranges included the dropped ones, parses to the same result.

    Parameters
    ----------
    text : str
        The last text part of a user message.

    Returns
    -------
    dict or None
        ``{"covered": [[lo, hi], ...], "dropped": [[lo, hi], ...]}`` with inclusive message-id ranges, sorted and
        merged (``covered`` is every id the snapshot stands for, shown or not; ``dropped`` the ids not shown or
        shown only in part, empty when none), or ``None`` when the text is not a snapshot text (wrong prefix, or
        no range). Never raises.
    """
    if not isinstance(text, str) or not text.lstrip().startswith(SNAPSHOT_PREFIX):
        return None
    body = text.lstrip()[len(SNAPSHOT_PREFIX):]
    full = re.search(r"pages show outputs of the newest messages:", body)
    if full:  # oversized parts of the newest messages, shown on the last pages: not covered ids
        body = body[:full.start()]
        if not _RANGE.search(body):
            return {"covered": [], "dropped": []}
    none_shown = re.search(r"are not shown", body)
    if none_shown:
        m = _COVERED.search(body[:none_shown.start()])
        dropped = _ranges(m.group(1)) if m else []
        if not dropped:
            return None
        dropped = _merge(dropped)
        return {"covered": dropped, "dropped": dropped}
    cut = re.search(r"Not shown", body)
    head = body[:cut.start()] if cut else body
    m = _COVERED.search(head)
    if not m:
        return None
    shown = _ranges(m.group(1))
    if not shown:
        return None
    dropped: list[list[int]] = []
    if cut:
        d = _DROPPED.search(body[cut.start():])
        if d:
            dropped = _merge(_ranges(d.group(1)))
    return {"covered": _merge(shown + dropped), "dropped": dropped}


def number_messages(messages: list[Message]) -> None:
    """Assign message ids in place: ordinals ``0, 1, ...``, with snapshot messages taking their covered ids.

    A message whose ``meta["snapshot"]`` is set gets the first covered id; the next message continues at the
    largest covered id plus one.
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


_STR_FIELDS = ("text", "name", "arguments", "call_id", "media_type", "data", "url", "signature")


def as_str(v: Any) -> str:
    """A source field as text: ``None`` -> ``""``, a dict or list -> its JSON, anything else -> ``str(v)``."""
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def coerce_types(messages: list[Message], tools: list[dict]) -> None:
    """Make every string field of every part (and of tool definitions) a ``str``, in place.

    Sources are JSON written by other programs; a number or object where a string belongs is turned into text
    (objects as JSON) rather than carried along to crash a later stage.
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
    """Serialise tool-call arguments given as an object the way Anthropic's neutral form wants them."""
    if isinstance(obj, str):
        return obj
    return json.dumps(obj, ensure_ascii=False)


def image_part(media_type: str = "", data: str = "", url: str = "", meta: dict | None = None) -> Part:
    """Build an ``image`` part; a ``data:`` URL is split into media type and base64 payload; size read from data."""
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
    """Return the keys of ``obj`` outside ``standard`` (kept in ``meta["extra"]``)."""
    return {k: v for k, v in obj.items() if k not in standard}


def require_dict(obj: Any, what: str, path: str | None) -> dict:
    """Return ``obj`` if it is a dict, else raise :class:`FormatError` naming ``what``."""
    if not isinstance(obj, dict):
        raise FormatError(f"{what} is a {type(obj).__name__}, expected a JSON object", path=path)
    return obj
