"""What the session writers share: the written session's description and the snapshot turn's place."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from ..errors import InputError

__all__ = ["Resumed", "now_stamp", "request_turns", "snapshot_blocks", "snapshot_turn", "turn_blocks"]


def now_stamp() -> str:
    """The current UTC time as the agents write it (``2026-12-07T23:10:00.123Z``).

    Examples
    --------
    >>> len(now_stamp()), now_stamp().endswith("Z")
    (24, True)
    """
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class Resumed(NamedTuple):
    """A session written by :func:`write_resume`.

    Attributes
    ----------
    path : Path
        The new session file (beside the source).
    session_id : str
        Its new session id.
    command : str
        The agent's command that resumes it (``claude --resume <id>``, ``codex resume <id>``).
    records : int
        JSON lines written.
    """

    path: Path
    session_id: str
    command: str
    records: int


def snapshot_turn(items: list[dict]) -> int:
    """The index of the compacted request's snapshot turn in its ``messages`` or ``input``: the user message whose
    content holds page images (``image``, ``input_image`` or ``image_url`` blocks).

    Raises
    ------
    InputError
        Where no message holds a page (a passthrough: nothing was compacted, so no session is written).

    Examples
    --------
    >>> snapshot_turn([{"role": "user", "content": "hi"},
    ...                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "snapshot"}]}])
    1
    """
    for i, m in enumerate(items):
        c = turn_blocks(m) if isinstance(m, dict) and m.get("role") == "user" else None
        if isinstance(c, list) and any(isinstance(b, dict) and (b.get("type") in ("image", "input_image", "image_url")
                                                                or "inlineData" in b or "inline_data" in b) for b in c):
            return i
    raise InputError("the compacted request shows no page (the conversation fit as it was), so no session to "
                     "resume was written")


def turn_blocks(turn: dict) -> list:
    """A request turn's blocks: its ``content`` list, or its Gemini ``parts``.

    Examples
    --------
    >>> turn_blocks({"role": "user", "parts": [{"text": "hi"}]})
    [{'text': 'hi'}]
    """
    c = turn.get("content") if "content" in turn else turn.get("parts")
    return c if isinstance(c, list) else []


def request_turns(request: dict) -> list:
    """A request body's list of turns in any dialect (``messages``, ``input`` or Gemini ``contents``).

    Examples
    --------
    >>> request_turns({"contents": [{"role": "user", "parts": []}]})
    [{'role': 'user', 'parts': []}]
    """
    for key in ("messages", "input", "contents"):
        if isinstance(request.get(key), list):
            return request[key]
    return []


def snapshot_blocks(content: list[dict]) -> list[tuple[str, str, str]]:
    """The snapshot turn's blocks in any dialect as ``(kind, media type, data)``: ``("image", "image/png", base64)``
    for a page (Anthropic ``image``, chat ``image_url``, Responses ``input_image`` data URLs, Gemini
    ``inlineData`` / ``inline_data``), ``("text", "", text)`` for text.

    Examples
    --------
    >>> snapshot_blocks([{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
    ...                  {"type": "text", "text": "snapglyph snapshot: x"}])
    [('image', 'image/png', 'iVBO'), ('text', '', 'snapglyph snapshot: x')]
    """
    out = []
    for b in content:
        t = b.get("type")
        if t == "image" and isinstance(b.get("source"), dict):
            out.append(("image", b["source"].get("media_type", "image/png"), b["source"].get("data", "")))
        elif t in ("image_url", "input_image"):
            url = b.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            head, _, data = str(url).partition(",")
            out.append(("image", head[5:].split(";")[0] or "image/png", data))
        elif isinstance(b.get("inlineData") or b.get("inline_data"), dict):
            d = b.get("inlineData") or b["inline_data"]
            out.append(("image", d.get("mimeType") or d.get("mime_type") or "image/png", d.get("data", "")))
        elif t in ("text", "input_text") or (t is None and isinstance(b.get("text"), str)):
            out.append(("text", "", b.get("text", "")))
    return out
