"""Messages -> document: one styled character stream, ready for normalization, layout and blitting.

A :class:`Document` is a list of :class:`Segment`: runs of source text that share one style and one message id.
The renderer normalizes each segment's text on its own (so a carriage return never reaches across a message), lays
the segments out in order, and reports for each page the first and last message id it shows.

What is drawn for each message::

    [#12 user] the user's text      header segment (STYLE_HEADER: drawn inverted, always starts a row),
                                    then the text (STYLE_TEXT) on the same row
    [#13 assistant]
    the assistant's text            STYLE_TEXT
    -> edit path=a.py line=12       tool call, decoded (STYLE_CALL): the name and the short arguments,
    text:                           then each argument of several lines under its key, with its real line
    def f():                        breaks (:mod:`snapglyph.model.tool_calls`)
        return 1
    [#14 tool bash]
    the tool's output               STYLE_DIM (drawn dimmer than conversation text)

Images become ``[image image/png 1024x768 45.1 KB]``; base64 runs of 256 or more characters inside text become
``[base64 12.0 KB]`` (``[data:image/png base64 12.0 KB]`` for data URLs). Hidden reasoning (``thinking`` parts),
signatures and other opaque blobs are never drawn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from .._config import BLOB_MIN_CHARS
from .messages import Message, Part
from .tool_calls import call_lines

__all__ = [
    "build_document",
    "Document",
    "document_for",
    "placeholder_for_image",
    "replace_blobs",
    "Segment",
    "STYLE_CALL",
    "STYLE_DIM",
    "STYLE_HEADER",
    "STYLE_TEXT",
]

STYLE_TEXT = 0
"""Conversation text: full ink."""
STYLE_DIM = 1
"""Tool output: drawn dimmer than conversation text."""
STYLE_HEADER = 2
"""Role header with the message id: drawn inverted; always starts a new row."""
STYLE_CALL = 3
"""Tool call name and arguments: full ink (a renderer may draw it like STYLE_TEXT)."""

_BLOB_RE = re.compile(r"(data:([\w.+-]+/[\w.+-]+);base64,)?([A-Za-z0-9+/]{%d,}={0,2})" % BLOB_MIN_CHARS)


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of source text with one style and one message id.

    Attributes
    ----------
    text : str
        Source text, not yet normalized (any Python ``str``, lone surrogates included).
    style : int
        One of ``STYLE_TEXT``, ``STYLE_DIM``, ``STYLE_HEADER``, ``STYLE_CALL``.
    message_id : int
        The id of the message this text belongs to (``-1`` for text outside any message).

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> result = Part("tool_result", call_id="c1", name="bash", content=[Part("text", text="exit 1")])
    >>> build_document([Message(4, "tool", [result])]).segments
    [Segment(text=' #4 tool bash ', style=2, message_id=4), Segment(text='exit 1', style=1, message_id=4)]
    >>> Segment("free text")
    Segment(text='free text', style=0, message_id=-1)
    """

    text: str
    style: int = STYLE_TEXT
    message_id: int = -1


@dataclass
class Document:
    """A styled character stream: the segments to draw, in order.

    Attributes
    ----------
    segments : list of Segment

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> doc = build_document([Message(0, "user", [Part("text", text="hi")])])
    >>> [s.message_id for s in doc.segments], doc.segments[1].text
    ([0, 0], 'hi')
    """

    segments: list[Segment] = field(default_factory=list)

    @classmethod
    def from_text(cls, text: str, *, message_id: int = -1) -> "Document":
        """Build a one-segment document of plain ``text`` (style ``STYLE_TEXT``)."""
        return cls([Segment(text, STYLE_TEXT, message_id)])

    @property
    def n_chars(self) -> int:
        """Number of source characters (Python ``str`` code points) over all segments."""
        return sum(len(s.text) for s in self.segments)

    def message_ids(self) -> list[int]:
        """Return the distinct message ids in order of first appearance (``-1`` excluded)."""
        seen: dict[int, None] = {}
        for s in self.segments:
            if s.message_id >= 0:
                seen.setdefault(s.message_id, None)
        return list(seen)


def _kb(nbytes: int) -> str:
    return f"{nbytes / 1024:.1f} KB"


def replace_blobs(text: str) -> str:
    """Replace base64 runs of 256+ characters (and data URLs) in ``text`` by a short ``[base64 N KB]`` placeholder.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        The text with each blob replaced; sizes are the decoded size in kilobytes (1 KB = 1024 bytes).

    Examples
    --------
    >>> import base64
    >>> blob = base64.b64encode(bytes(range(256)) * 4).decode()   # 1,368 characters of base64
    >>> replace_blobs("see " + blob + " above"), replace_blobs("url(data:image/png;base64," + blob + ")")
    ('see [base64 1.0 KB] above', 'url([data:image/png base64 1.0 KB])')
    >>> replace_blobs("a" * 300) == "a" * 300   # letters alone are words glued together, not base64
    True
    """
    # A blob holds no whitespace, so it lies inside one whitespace-free word: a text without a word that long has
    # none (measured on the aider history's 5,805 texts, 2026-12-02: 0.18 s by the pattern alone, 0.03 s so).
    if len(text) < BLOB_MIN_CHARS or max(map(len, text.split()), default=0) < BLOB_MIN_CHARS:
        return text
    return _BLOB_RE.sub(_blob_placeholder, text)


def _blob_placeholder(m: re.Match) -> str:
    """The placeholder of one :data:`_BLOB_RE` match (the match itself where it reads as words, not base64)."""
    blob = m.group(3)
    # Long runs of letters only (no digit, no +/) are more likely words glued together than base64.
    if not any(c.isdigit() or c in "+/" for c in blob[:512]):
        return m.group(0)
    nbytes = len(blob) * 3 // 4
    if m.group(1):
        return f"[data:{m.group(2)} base64 {_kb(nbytes)}]"
    return f"[base64 {_kb(nbytes)}]"


def placeholder_for_image(part: Part) -> str:
    """Return the one-line placeholder drawn for an image part: kind, pixel size where known, decoded size.

    Examples
    --------
    >>> placeholder_for_image(Part("image", media_type="image/png", data="A" * 1200, width=64, height=64))
    '[image image/png 64x64 0.9 KB]'
    >>> placeholder_for_image(Part("image", url="https://example.com/cat.png"))
    '[image https://example.com/cat.png]'
    """
    bits = ["image"]
    if part.media_type:
        bits.append(part.media_type)
    if part.width and part.height:
        bits.append(f"{part.width}x{part.height}")
    if part.data:
        bits.append(_kb(part.nbytes))
    elif part.url:
        url = part.url if len(part.url) <= 80 else part.url[:77] + "..."
        bits.append(url)
    return "[" + " ".join(bits) + "]"


def _content_segments(parts: Iterable[Part], style: int, mid: int) -> list[Segment]:
    out: list[Segment] = []
    for p in parts:
        if p.kind == "text":
            if p.text:
                out.append(Segment(replace_blobs(p.text), style, mid))
        elif p.kind == "image":
            out.append(Segment(placeholder_for_image(p), style, mid))
    return out


def _call_segments(p: Part, mid: int) -> list[Segment]:
    """A tool call decoded (:func:`snapglyph.model.tool_calls.call_lines`): the call line, then each long string
    argument as ``key:`` on its own line and its text, every piece one segment (joined by newlines)."""
    line, blocks = call_lines(p.name, p.arguments)
    out = [Segment(replace_blobs(line), STYLE_CALL, mid)]
    for key, text in blocks:
        out.append(Segment(f"{key}:", STYLE_CALL, mid))
        out.append(Segment(replace_blobs(text), STYLE_CALL, mid))
    return out


def _message_segments(m: Message, header_row: bool) -> list[Segment]:
    mid = m.id
    if m.role == "tool":
        names = [p.name for p in m.tool_results() if p.name]
        label = f"#{mid} tool" + (" " + ", ".join(names) if names else "")
    else:
        label = f"#{mid} {m.role}"
    body: list[Segment] = []
    n_results = len(m.tool_results())
    for p in m.parts:
        if p.kind == "text":
            if p.text:
                body.append(Segment(replace_blobs(p.text), STYLE_TEXT, mid))
        elif p.kind == "image":
            body.append(Segment(placeholder_for_image(p), STYLE_TEXT, mid))
        elif p.kind == "tool_call":
            body.extend(_call_segments(p, mid))
        elif p.kind == "tool_result":
            if n_results > 1 or p.is_error:
                body.append(Segment(f"<- {p.name or p.call_id}" + (" (error)" if p.is_error else ""),
                                    STYLE_CALL, mid))
            body.extend(_content_segments(p.content, STYLE_DIM, mid))
        # thinking parts: hidden reasoning is never drawn.
    # The header row is set apart by its inverted cells; parts are separated by one newline (drawn as the newline
    # marker in dense mode) and the next message's header starts a new row, so no newline trails the message.
    segs = [Segment(f" {label} ", STYLE_HEADER, mid)]
    if header_row and body:
        segs.append(Segment("\n", STYLE_TEXT, mid))
    for i, seg in enumerate(body):
        if i:
            segs.append(Segment("\n", seg.style, mid))
        segs.append(seg)
    return segs


def build_document(messages: Sequence[Message], *, header_row: bool = False,
                   memo: dict | None = None) -> Document:
    """Build the document drawn for ``messages``: a header per message, then its text, calls and results.

    Parameters
    ----------
    messages : sequence of Message
    header_row : bool
        Put each header on a row of its own (for the ``lines`` layout, where every source line starts a row and
        tab stops must line up across rows); by default the text follows the header on its row (``dense``).
    memo : dict or None
        The segments of each message already built, by ``(id(message), header_row)``, shared by the documents of
        overlapping message lists while those messages live (a compaction's middles: measured on the aider history,
        2026-12-02, a build 0.04-0.07 s, again with the memo 0.001 s); None to build every message's.

    Returns
    -------
    Document
        Segments in message order; every segment carries its message's id.

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> doc = build_document([Message(1, "assistant", [Part("tool_call", name="bash", arguments='{"cmd": "ls -l"}')])])
    >>> [(s.text, s.style) for s in doc.segments]
    [(' #1 assistant ', 2), ('-> bash cmd="ls -l"', 3)]
    """
    segs: list[Segment] = []
    for m in messages:
        if memo is None:
            segs.extend(_message_segments(m, header_row))
            continue
        got = memo.get((id(m), header_row))
        if got is None or got[0] is not m:  # the object itself, kept: its id cannot go to another meanwhile
            got = memo[(id(m), header_row)] = (m, _message_segments(m, header_row))
        segs.extend(got[1])
    return Document(segs)


def document_for(source: "str | Sequence[Message] | Document", mode: str = "dense",
                 memo: dict | None = None) -> Document:
    """The document a layout ``mode`` draws for ``source``: the one place the mode picks the header style.

    A ``str`` becomes a one-segment document; messages are built with :func:`build_document` (with ``memo``),
    headers on a row of their own for the ``lines`` mode; a :class:`Document` is returned as is.

    Raises
    ------
    InputError
        For anything else.

    Examples
    --------
    >>> doc = document_for([Message(0, "user", [Part("text", text="hi")])], "lines")
    >>> [s.text for s in doc.segments]
    [' #0 user ', '\\n', 'hi']
    """
    if isinstance(source, Document):
        return source
    if isinstance(source, str):
        return Document.from_text(source)
    if isinstance(source, Sequence) and all(isinstance(m, Message) for m in source):
        return build_document(list(source), header_row=mode == "lines", memo=memo)
    from ..errors import InputError
    raise InputError(f"cannot render a {type(source).__name__}: pass a str, a list of Message or a Document")

