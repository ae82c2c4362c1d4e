"""The snapshot text: written by the compactor, parsed back by the readers; both directions in this one module.

The snapshot message of a compacted request holds the page images, then one short neutral text naming the message
ids they show (deliberately short and neutral: no wording a model could read as a request to reveal hidden
reasoning). Its forms (ranges as :func:`snapglyph.model.message_ids.format_ranges` writes them)::

    snapglyph snapshot: the images above show messages #3-#418 as pages.
    snapglyph snapshot: the images above show messages #41-#418 as pages. Not shown, or only in part: #3-#41.
    snapglyph snapshot: messages #3-#40 are not shown.
    snapglyph snapshot: ... The last 3 pages show outputs of the newest messages: #991 (tool result 1).

The closing sentence names oversized parts of the newest messages (they stay in the tail as pointers: they are not
covered ids). An optional parenthesis after "Not shown"/"not shown" says how to recall them.

It lives in :mod:`snapglyph.model` (not in the compaction stage) because both the readers (which recognize a
snapshot in a request they read) and the compactor (which writes it) use it, and the readers must not import the
compaction stage.
"""

from __future__ import annotations

import re
from typing import Sequence

from .message_ids import RANGE_PATTERN, format_ranges, merge_ranges, parse_ranges

__all__ = ["SNAPSHOT_PREFIX", "parse_snapshot_text", "snapshot_text"]

SNAPSHOT_PREFIX = "snapglyph snapshot:"
"""The text every snapshot message's last text part starts with."""

_PAGED = "pages show outputs of the newest messages:"
_LIST = rf"((?:{RANGE_PATTERN}\s*,?\s*(?:and\s+)?)+)"
_COVERED = re.compile(rf"messages\s+{_LIST}")
_DROPPED = re.compile(rf"Not shown[^:]*:\s*{_LIST}")


def _paged_sentence(paged: Sequence[tuple[int, str, int, int, int]]) -> str:
    if not paged:
        return ""
    n = sum(shown for _, _, _, shown, _ in paged)
    items = ", ".join(f"#{mid} ({kind} {ordinal}" + (f", its last {shown} of {total} pages)" if shown < total
                                                     else ")") for mid, kind, ordinal, shown, total in paged)
    return f" The last {n} {_PAGED} {items}."


def snapshot_text(shown: Sequence[int], dropped: Sequence[int] = (), *, recall_tool: str | None = None,
                  paged: Sequence[tuple[int, str, int, int, int]] = (), sections: Sequence[str] = ()) -> str:
    """The short neutral text that follows the page images in the snapshot message.

    Parameters
    ----------
    shown : sequence of int
        Ids of the messages the pages show (a message the first page shows only in part counts in both lists).
    dropped : sequence of int
        Ids of the messages the snapshot stands for but does not show (pages dropped for the budget or a limit).
    recall_tool : str, optional
        Name of a tool in the request that returns a message's exact text by id; named in the text when given.
    paged : sequence of (int, str, int, int, int)
        Oversized parts of the newest messages shown on the last pages, each ``(message id, kind, ordinal, pages
        shown, pages rendered)`` (see :mod:`snapglyph.compaction.tail_paging`).
    sections : sequence of str
        Paragraphs that follow the ranges line, each after a blank line (the reading guide, the user's messages,
        the identifier ledger: :mod:`snapglyph.compaction.notes`); empty ones are left out. Their text is never
        parsed: the ranges line is the first line, and it holds no line break.

    Returns
    -------
    str
        Text that :func:`parse_snapshot_text` reads back to the same ranges.

    Examples
    --------
    >>> snapshot_text([5, 6, 7], [2, 3, 4, 5])
    'snapglyph snapshot: the images above show messages #5-#7 as pages. Not shown, or only in part: #2-#5.'
    >>> snapshot_text([], [2, 3])
    'snapglyph snapshot: messages #2-#3 are not shown.'
    >>> snapshot_text([], [], paged=[(9, "tool result", 1, 2, 2)])
    'snapglyph snapshot: the 2 pages show outputs of the newest messages: #9 (tool result 1).'
    >>> print(snapshot_text([5, 6], sections=["How to read the pages.", "", "Not shown: #1."]))
    snapglyph snapshot: the images above show messages #5-#6 as pages.
    <BLANKLINE>
    How to read the pages.
    <BLANKLINE>
    Not shown: #1.
    """
    line = _ranges_line(shown, dropped, recall_tool, _paged_sentence(paged))
    return "\n\n".join([line] + [t for t in sections if t])


def _ranges_line(shown: Sequence[int], dropped: Sequence[int], recall_tool: str | None, in_full: str) -> str:
    how = f" ({recall_tool} returns their exact text by id)" if recall_tool else ""
    if not shown and not dropped:
        return SNAPSHOT_PREFIX + in_full.replace(" The last", " the", 1)
    if not shown:
        return f"{SNAPSHOT_PREFIX} messages {format_ranges(dropped)} are not shown{how}.{in_full}"
    text = f"{SNAPSHOT_PREFIX} the images above show messages {format_ranges(shown)} as pages."
    if dropped:
        text += f" Not shown, or only in part{how}: {format_ranges(dropped)}."
    elif recall_tool:
        text += f" {recall_tool} returns the exact text of any of them by id."
    return text + in_full


def parse_snapshot_text(text: str) -> dict | None:
    """Parse the short text of a snapshot message (any form :func:`snapshot_text` writes, and older ones).

    The older form, where the shown ranges included the dropped ones, parses to the same result.

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

    Examples
    --------
    >>> parse_snapshot_text(snapshot_text([5, 6, 7], [2, 3, 4, 5]))
    {'covered': [[2, 7]], 'dropped': [[2, 5]]}
    >>> parse_snapshot_text(snapshot_text([5, 6, 7], sections=["[#9 user] Not shown: #1-#3 are not shown"]))
    {'covered': [[5, 7]], 'dropped': []}
    >>> parse_snapshot_text("hello") is None
    True
    """
    if not isinstance(text, str) or not text.lstrip().startswith(SNAPSHOT_PREFIX):
        return None
    # Only the first line names ranges: what follows (the user's messages, the ledger) is quoted text.
    body = text.lstrip()[len(SNAPSHOT_PREFIX):].split("\n", 1)[0]
    full = body.find(_PAGED)
    if full >= 0:  # oversized parts of the newest messages, shown on the last pages: not covered ids
        body = body[:full]
        if not parse_ranges(body):
            return {"covered": [], "dropped": []}
    none_shown = body.find("are not shown")
    if none_shown >= 0:
        m = _COVERED.search(body[:none_shown])
        dropped = parse_ranges(m.group(1)) if m else []
        if not dropped:
            return None
        dropped = merge_ranges(dropped)
        return {"covered": dropped, "dropped": dropped}
    cut = body.find("Not shown")
    m = _COVERED.search(body[:cut] if cut >= 0 else body)
    shown = parse_ranges(m.group(1)) if m else []
    if not shown:
        return None
    dropped_r: list[list[int]] = []
    if cut >= 0:
        d = _DROPPED.search(body[cut:])
        if d:
            dropped_r = merge_ranges(parse_ranges(d.group(1)))
    return {"covered": merge_ranges(shown + dropped_r), "dropped": dropped_r}
