"""Provider-neutral messages: the one shape every reader produces and every dialect writer consumes.

A conversation is a ``list[Message]``. Each :class:`Message` has a stable integer ``id`` (its ordinal in the
source conversation: ``#0``, ``#1``, ...; the system prompt, where there is one, is ``#0``), a ``role`` and a list
of :class:`Part`. Provider-specific data (uuids, tool call ids of the source format, cache markers) rides along in
``meta`` untouched; it is never drawn and never sent unless a dialect writer knows it.

Roles
-----
``system``     the system prompt (text parts only).
``user``       user text and images.
``assistant``  text, ``thinking`` (hidden reasoning; never drawn) and ``tool_call`` parts.
``tool``       one or more ``tool_result`` parts answering the previous assistant message's tool calls, optionally
               followed by user text/image parts (Anthropic puts both in one user message).

Part kinds
----------
``text``         ``text``.
``image``        ``media_type`` (e.g. ``"image/png"``), ``data`` (base64, no ``data:`` prefix) or ``url``,
                 ``width``/``height`` in pixels where known, ``nbytes`` of the decoded image where known.
``tool_call``    ``name``, ``arguments`` (the JSON text as sent, a ``str``), ``call_id``.
``tool_result``  ``call_id``, ``name`` (where known), ``content`` (a list of ``text``/``image`` parts),
                 ``is_error``.
``thinking``     ``text``, ``signature`` (opaque; may be empty), ``meta["redacted"]`` for redacted blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from .images import (
    image_size,  # re-exported for callers that read it here; its home is model.images
)

__all__ = [
    "LONE_SURROGATE",
    "Message",
    "OPENING_USER_LINE",
    "Part",
    "ROLES",
    "image_size",
    "images_in",
    "split_user_text",
]

ROLES = ("system", "user", "assistant", "tool")

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone UTF-16 surrogate in a ``str`` (from a JSON ``\\ud800`` escape): a message's text may hold one, no UTF-8
encoder takes it, so every stage that writes text (the renderer, the request, the store's comparisons) replaces or
drops it. The one home of the pattern."""

#: The neutral user line a request gets before a conversation that opens with an assistant message (providers
#: want a user message first); the readers remove it again, so message ids stay the same across passes.
OPENING_USER_LINE = "(start of the conversation)"


@dataclass(slots=True)
class Part:
    """One piece of a message's content (see the module docstring for which fields each ``kind`` uses).

    Attributes
    ----------
    kind : str
        One of ``text``, ``image``, ``tool_call``, ``tool_result``, ``thinking``.
    text : str
        Text of a ``text`` or ``thinking`` part.
    name : str
        Tool name of a ``tool_call`` (and of a ``tool_result`` where the source names it).
    arguments : str
        Tool call arguments as JSON text, exactly as the source sent them.
    call_id : str
        Tool call id linking a ``tool_call`` to its ``tool_result``.
    content : list of Part
        Content of a ``tool_result``: ``text`` and ``image`` parts.
    is_error : bool
        Whether a ``tool_result`` reports an error.
    media_type, data, url : str
        Image MIME type, base64 payload (no prefix) or URL.
    width, height : int or None
        Image size in pixels where known.
    signature : str
        Opaque signature of a ``thinking`` part.
    meta : dict
        Format-specific data kept untouched (never drawn).

    Examples
    --------
    >>> result = Part("tool_result", call_id="c1", name="ls", content=[Part("text", text="a.py"),
    ...                                                              Part("text", text="b.py")])
    >>> result.result_text()
    'a.py\\nb.py'
    >>> Part("image", media_type="image/png", data="iVBORw0KGgo=").nbytes, Part("image", url="https://x/y.png").nbytes
    (8, 0)
    """

    kind: str
    text: str = ""
    name: str = ""
    arguments: str = ""
    call_id: str = ""
    content: list["Part"] = field(default_factory=list)
    is_error: bool = False
    media_type: str = ""
    data: str = ""
    url: str = ""
    width: int | None = None
    height: int | None = None
    signature: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def result_text(self) -> str:
        """Return the text of a ``tool_result`` part: its text parts joined by newlines (images excluded)."""
        return "\n".join(p.text for p in self.content if p.kind == "text")

    @property
    def nbytes(self) -> int:
        """Size in bytes of a base64 image payload once decoded (0 for a URL image or a non-image part)."""
        if not self.data:
            return 0
        n = len(self.data)
        return n * 3 // 4 - self.data[-2:].count("=")


@dataclass(slots=True)
class Message:
    """One message of a conversation in neutral form.

    Attributes
    ----------
    id : int
        Ordinal in the source conversation, stable across compaction passes (shown as ``#id``).
    role : str
        ``system``, ``user``, ``assistant`` or ``tool``.
    parts : list of Part
        The content, in order.
    meta : dict
        Format-specific data (source uuids, timestamps, ...) kept untouched.

    Examples
    --------
    >>> m = Message(2, "assistant", [Part("thinking", text="plan"), Part("text", text="Listing."),
    ...                              Part("tool_call", name="ls", arguments="{}", call_id="c1")])
    >>> m.text(), [p.name for p in m.tool_calls()], m.tool_results()
    ('Listing.', ['ls'], [])
    """

    id: int
    role: str
    parts: list[Part] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def tool_calls(self) -> list[Part]:
        """Return this message's ``tool_call`` parts, in order."""
        return [p for p in self.parts if p.kind == "tool_call"]

    def tool_results(self) -> list[Part]:
        """Return this message's ``tool_result`` parts, in order."""
        return [p for p in self.parts if p.kind == "tool_result"]

    def text(self) -> str:
        """Return the message's ``text`` parts joined by newlines (tool parts, images and thinking excluded)."""
        return "\n".join(p.text for p in self.parts if p.kind == "text")


def images_in(messages: Sequence[Message]) -> list[Part]:
    """Every image part of ``messages``, tool results' content included, in order: the one image count.

    Examples
    --------
    >>> m = Message(3, "tool", [Part("tool_result", content=[Part("image"), Part("text", text="ok")])])
    >>> len(images_in([Message(2, "user", [Part("image"), Part("text", text="see")]), m]))
    2
    """
    out: list[Part] = []
    for m in messages:
        for p in m.parts:
            if p.kind == "image":
                out.append(p)
            elif p.kind == "tool_result":
                out.extend(q for q in p.content if q.kind == "image")
    return out


def split_user_text(messages: list[Message]) -> int:
    """Give the user's text sent in the same turn as tool results a user message of its own, in place.

    Anthropic and Gemini carry a turn's tool results and the user's words in one user turn; read as one ``tool``
    message the words would be drawn and stored as tool output and missing from the user's words. Each ``tool``
    message with text parts is split into the ``tool`` message (its results and any other parts) and, right after
    it, a ``user`` message of its text parts (same meta, and ``meta["beside_results"]``: no cut falls between the
    two, which the wire sends as one turn). Run by the readers before ids are given
    (:func:`snapglyph.readers.common.number_messages`), so a source and the request written from it get the same
    ids. Returns the number of messages split.

    Examples
    --------
    >>> msgs = [Message(2, "tool", [Part("tool_result", call_id="c1", content=[Part("text", text="ok")]),
    ...                             Part("text", text="now run the tests")])]
    >>> split_user_text(msgs), [(m.role, [p.kind for p in m.parts]) for m in msgs]
    (1, [('tool', ['tool_result']), ('user', ['text'])])
    """
    n = 0
    k = 0
    while k < len(messages):
        m = messages[k]
        words = [p for p in m.parts if p.kind == "text"] if m.role == "tool" else []
        if words and any(p.kind == "tool_result" for p in m.parts):
            m.parts = [p for p in m.parts if p.kind != "text"]
            messages.insert(k + 1, Message(m.id, "user", words, {**m.meta, "beside_results": True}))
            n += 1
            k += 1
        k += 1
    return n
