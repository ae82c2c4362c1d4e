"""What the session writers share: the written session's description and the snapshot turn's place."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from ..errors import InputError

__all__ = ["Resumed", "now_stamp", "snapshot_turn"]


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
    content holds page images (``image`` or ``input_image`` blocks).

    Raises
    ------
    InputError
        Where no message holds a page (a passthrough: nothing was compacted, so no session is written).

    Examples
    --------
    >>> snapshot_turn([{"role": "user", "content": "hi"},
    ...                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "snapglyph snapshot: x"}]}])
    1
    """
    for i, m in enumerate(items):
        c = m.get("content") if isinstance(m, dict) and m.get("role") == "user" else None
        if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") in ("image", "input_image") for b in c):
            return i
    raise InputError("the compacted request shows no page (the conversation fit as it was), so no session to "
                     "resume was written")
