"""The snapshot message's image parts, and :func:`snapshot_parts`, the embedding API for other compactors.

The snapshot message holds the page images first, then the text of :mod:`snapglyph.model.snapshot_text` naming
the message ids they show, with the reading guide and the identifier ledger (:mod:`.notes`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Sequence

from .._config import LEDGER_SHARE
from ..errors import InputError
from ..model.messages import Message, Part
from ..model.snapshot_text import snapshot_text
from .estimate import TokenCosts
from .notes import snapshot_notes

__all__ = ["SnapshotParts", "page_parts", "snapshot_parts"]


def page_parts(pages: Sequence[Any], prof: Any, *, cache_breakpoint: bool = True) -> list[Part]:
    """Image parts for rendered pages (PNG, base64), with the profile's OpenAI ``detail`` where it has one.

    With ``cache_breakpoint``, the last page that stays byte-identical when messages are appended (the one
    before the last page) carries ``meta["cache_control"]``; the Anthropic writer turns it into a prompt-cache
    breakpoint.

    Examples
    --------
    >>> from types import SimpleNamespace as Page
    >>> from snapglyph.providers.profiles import profile
    >>> pages = [Page(index=i, png=b"PNG", width=1092, height=1092) for i in range(3)]
    >>> parts = page_parts(pages, profile("openai"))
    >>> parts[0].kind, parts[0].media_type, parts[0].data, parts[0].width
    ('image', 'image/png', 'UE5H', 1092)
    >>> [p.meta for p in parts]   # the page before the last is the cache breakpoint
    [{'page': 0, 'detail': 'high'}, {'page': 1, 'detail': 'high', 'cache_control': True}, {'page': 2, 'detail': 'high'}]
    """
    parts = []
    for i, p in enumerate(pages):
        meta: dict[str, Any] = {"page": p.index}
        if getattr(prof, "detail", None):
            meta["detail"] = prof.detail
        if cache_breakpoint and len(pages) >= 2 and i == len(pages) - 2:
            meta["cache_control"] = True
        parts.append(Part("image", media_type="image/png", data=base64.b64encode(p.png).decode("ascii"),
                          width=p.width, height=p.height, meta=meta))
    return parts


@dataclass
class SnapshotParts:
    """What :func:`snapshot_parts` returns.

    Attributes
    ----------
    parts : list of dict
        Content parts in the dialect's shape: the page images, then the short text.
    ids : list of int
        The message ids the pages show.
    pages : list
        The rendered :class:`~snapglyph.raster.render.Page` objects.
    image_tokens : int
        What the pages cost under the profile (after the provider's own resize, which never changes them).

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> sp = snapshot_parts([Message(2, "assistant", [Part("text", text="done")])], dialect="openai")
    >>> sp.ids, len(sp.pages), sp.parts[0]["type"], sp.image_tokens > 0
    ([2], 1, 'image_url', True)
    """

    parts: list[dict]
    ids: list[int]
    pages: list = field(default_factory=list)
    image_tokens: int = 0


def snapshot_parts(messages: Sequence[Message], *, profile: Any = "claude", dialect: str = "anthropic",
                   cell: tuple[int, int] | None = None, mode: str = "auto",
                   ledger: float = LEDGER_SHARE) -> SnapshotParts:
    """Render a given slice of messages and return the snapshot's content parts for a dialect.

    For other compactors that want snapshots as their cheapest tier: they choose the slice, this renders it.

    Parameters
    ----------
    messages : sequence of Message
        The slice to show as pages (ids as in the source conversation).
    profile : str or Profile
    dialect : str
        ``anthropic`` (``image`` blocks, base64), ``openai`` (``image_url`` data URLs), ``responses``
        (``input_image``) or ``gemini`` (``inline_data`` parts).
    cell, mode
        As for :func:`snapglyph.render`.
    ledger : float
        Cap of the identifier ledger as a share of the pages' image tokens (0: none); the text also holds the
        reading guide (:mod:`snapglyph.compaction.notes`).

    Returns
    -------
    SnapshotParts

    Raises
    ------
    InputError
        Empty slice, unknown dialect, something that is not a message, or a ledger share outside [0, 1].

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> msgs = [Message(i, "tool", [Part("text", text=f"line {i}\\n" * 50)]) for i in range(4, 8)]
    >>> sp = snapshot_parts(msgs, dialect="anthropic")
    >>> [p["type"] for p in sp.parts], sp.parts[0]["source"]["media_type"]
    (['image', 'text'], 'image/png')
    >>> sp.parts[1]["text"].splitlines()[0]
    'snapglyph snapshot: the images above show messages #4-#7 as pages.'
    """
    from ..providers.dialects import request_messages
    from ..providers.profiles import profile as get_profile
    from ..raster.render import render

    msgs = list(messages)
    if not msgs or not all(isinstance(m, Message) for m in msgs):
        raise InputError("snapshot_parts() needs a non-empty list of snapglyph.Message")
    if isinstance(ledger, bool) or not isinstance(ledger, (int, float)) or not 0 <= ledger <= 1:
        raise InputError(f"ledger must be a share of the pages' tokens between 0 and 1, not {ledger!r}")
    prof = get_profile(profile)
    pages = render(msgs, profile=prof, cell=cell, mode=mode)
    ids = [m.id for m in msgs]
    image_tokens = sum(prof.image_tokens(p.width, p.height) for p in pages)
    notes = snapshot_notes(msgs, user_cap=0, ledger_share=ledger, recall_tool=None, count=TokenCosts(prof).text)
    text = snapshot_text(ids, sections=notes.sections(ids, image_tokens))
    parts = page_parts(pages, prof) + [Part("text", text=text)]
    body = request_messages([Message(ids[0], "user", parts)], dialect=dialect)
    content = body[0]["parts"] if dialect == "gemini" else body[0]["content"]
    if isinstance(content, str):  # pragma: no cover - a snapshot always has images
        content = [{"type": "text", "text": content}]
    return SnapshotParts(parts=content, ids=ids, pages=pages, image_tokens=image_tokens)
