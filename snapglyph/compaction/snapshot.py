"""The snapshot message: page images first, then one short neutral text naming the message ids they show.

Also the provider limits every compacted request must keep (images per request, bytes per image, request bytes,
the many-image rule), and :func:`snapshot_parts`, the embedding API for other compactors.

The text is deliberately short and neutral (no wording a model could read as a request to reveal hidden
reasoning)::

    snapglyph snapshot: the images above show messages #2-#417 as pages. Not shown (recall by id): #2-#40.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..errors import InputError, LimitError
from ..model.messages import Message, Part

__all__ = ["SnapshotParts", "check_limits", "format_ranges", "id_ranges", "images_in", "page_parts",
           "snapshot_parts", "snapshot_text"]


def id_ranges(ids: Sequence[int]) -> list[list[int]]:
    """Inclusive ``[first, last]`` runs of consecutive ids: ``[3, 4, 5, 9]`` -> ``[[3, 5], [9, 9]]``."""
    out: list[list[int]] = []
    for i in sorted(set(ids)):
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def format_ranges(ids: Sequence[int]) -> str:
    """Format message ids as comma-separated ranges: ``[3, 4, 5, 9]`` -> ``"#3-#5, #9"``."""
    return ", ".join(f"#{a}" if a == b else f"#{a}-#{b}" for a, b in id_ranges(ids))


def snapshot_text(shown: Sequence[int], dropped: Sequence[int] = (), *, recall_tool: str | None = None,
                  in_full: str = "") -> str:
    """The short neutral text that follows the page images in the snapshot message.

    Parameters
    ----------
    shown : sequence of int
        Ids of the messages the pages show (a message the first page shows only in part counts in both lists).
    dropped : sequence of int
        Ids of the messages the snapshot stands for but does not show (pages dropped for the budget or a limit).
    recall_tool : str, optional
        Name of a tool in the request that returns a message's exact text by id; named in the text when given.
    in_full : str
        The closing sentence naming the oversized parts of the newest messages shown on the last pages
        (:func:`snapglyph.compaction.tail_paging.paged_text`), or empty.
    """
    how = f" ({recall_tool} returns their exact text by id)" if recall_tool else ""
    if not shown and not dropped:
        return "snapglyph snapshot:" + in_full.replace(" The last", " the", 1)
    if not shown:
        return f"snapglyph snapshot: messages {format_ranges(dropped)} are not shown{how}.{in_full}"
    text = f"snapglyph snapshot: the images above show messages {format_ranges(shown)} as pages."
    if dropped:
        text += f" Not shown, or only in part{how}: {format_ranges(dropped)}."
    elif recall_tool:
        text += f" {recall_tool} returns the exact text of any of them by id."
    return text + in_full


def page_parts(pages: Sequence[Any], prof: Any, *, cache_breakpoint: bool = True) -> list[Part]:
    """Image parts for rendered pages (PNG, base64), with the profile's OpenAI ``detail`` where it has one.

    With ``cache_breakpoint``, the last page that stays byte-identical when messages are appended (the one
    before the last page) carries ``meta["cache_control"]``; the Anthropic writer turns it into a prompt-cache
    breakpoint.
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


def images_in(messages: Sequence[Message]) -> list[Part]:
    """Every image part of ``messages``, tool results' content included, in order."""
    out: list[Part] = []
    for m in messages:
        for p in m.parts:
            if p.kind == "image":
                out.append(p)
            elif p.kind == "tool_result":
                out.extend(q for q in p.content if q.kind == "image")
    return out


def check_limits(messages: Sequence[Message], prof: Any, *, request: dict | None = None) -> None:
    """Raise :class:`LimitError` naming the limit if ``messages`` (and the request body) break one of ``prof``'s.

    Checks images per request, bytes per image (base64 size), the many-image rule (more than
    ``many_image_threshold`` images: every side at most ``many_image_max_side`` px) and request bytes.
    """
    imgs = images_in(messages)
    n = len(imgs)
    if n > prof.max_images:
        raise LimitError(f"the request would carry {n} images; profile {prof.name} allows {prof.max_images}",
                         limit="max_images")
    for q in imgs:
        if q.data and len(q.data) > prof.max_image_bytes:
            raise LimitError(f"an image of {len(q.data)} bytes (base64); profile {prof.name} allows "
                             f"{prof.max_image_bytes}", limit="max_image_bytes")
        if (prof.many_image_threshold is not None and n > prof.many_image_threshold and q.width
                and max(q.width, q.height or 0) > prof.many_image_max_side):
            raise LimitError(f"a {q.width}x{q.height} image in a request of {n} images; above "
                             f"{prof.many_image_threshold} images profile {prof.name} allows at most "
                             f"{prof.many_image_max_side} px a side", limit="many_image_max_side")
    if request is not None:
        nbytes = len(json.dumps(request, ensure_ascii=False).encode("utf-8"))
        if nbytes > prof.max_request_bytes:
            raise LimitError(f"the request body would be {nbytes} bytes; profile {prof.name} allows "
                             f"{prof.max_request_bytes}", limit="max_request_bytes")


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
    """

    parts: list[dict]
    ids: list[int]
    pages: list = field(default_factory=list)
    image_tokens: int = 0


def snapshot_parts(messages: Sequence[Message], *, profile: Any = "claude", dialect: str = "anthropic",
                   cell: tuple[int, int] | None = None, mode: str = "dense") -> SnapshotParts:
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

    Returns
    -------
    SnapshotParts

    Raises
    ------
    InputError
        Empty slice, unknown dialect, or something that is not a message.
    """
    from ..providers.dialects import request_messages
    from ..model.document import build_document
    from ..providers.profiles import profile as get_profile
    from ..raster.render import render_document

    msgs = list(messages)
    if not msgs or not all(isinstance(m, Message) for m in msgs):
        raise InputError("snapshot_parts() needs a non-empty list of snapglyph.Message")
    prof = get_profile(profile)
    pages = render_document(build_document(msgs, header_row=mode == "lines"), profile=prof, cell=cell, mode=mode)
    ids = [m.id for m in msgs]
    parts = page_parts(pages, prof) + [Part("text", text=snapshot_text(ids))]
    body = request_messages([Message(ids[0], "user", parts)], dialect=dialect)
    content = body[0]["parts"] if dialect == "gemini" else body[0]["content"]
    if isinstance(content, str):  # pragma: no cover - a snapshot always has images
        content = [{"type": "text", "text": content}]
    return SnapshotParts(parts=content, ids=ids, pages=pages,
                         image_tokens=sum(prof.image_tokens(p.width, p.height) for p in pages))
