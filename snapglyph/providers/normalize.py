"""Normalization: a conversation rewritten into one every provider accepts, each rewrite counted.

The rewrites: non-standard keys dropped; tool calls that share an id given unique ids (their results paired in
order, so none is swapped); tool call ids Anthropic refuses made safe; whitespace-only text removed; hidden
reasoning without a usable signature removed; lone surrogates replaced by U+FFFD; images whose bytes are another
format given their real media type, bytes that are no image replaced by a placeholder (``[image removed: N bytes
labelled M are ...]``; an image with no data at all: ``[image removed: no image data]``), and an image in a format
the dialect does not take (a GIF for Gemini) made a PNG; tool calls without a
result given an error result; tool results without a call turned into user text; messages left empty removed; a
neutral user line before a conversation that opens with an assistant message. Grammar sources:
platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls and the OpenAI chat completions reference
(read 2026-11-30; see ``../shared/reference/providers.md`` part C).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import replace
from typing import Sequence

from ..errors import InputError
from ..model.attachments import is_attachment, sent_block, verbatim_block
from ..model.images import check_image, downscale, media_types
from ..model.messages import LONE_SURROGATE, OPENING_USER_LINE, Message, Part

__all__ = ["DIALECTS", "normalize", "replace_lone_surrogates"]

DIALECTS = ("openai", "anthropic", "responses", "gemini")
"""The wire dialects a conversation is normalized for and written in (:mod:`snapglyph.providers.dialects`)."""

_THINKING_REDACTED = ("", "REDACTED", "[REDACTED]", "<redacted>")


def replace_lone_surrogates(s: str, rewrites: Counter | None = None) -> str:
    """``s`` with each lone surrogate replaced by U+FFFD, counted in ``rewrites`` (``"lone surrogates replaced"``)
    where given: the one replacement for text sent in a request, which UTF-8 must encode.

    Examples
    --------
    >>> rw = Counter()
    >>> replace_lone_surrogates("a\\ud800b", rw), rw["lone surrogates replaced"]
    ('a\ufffdb', 1)
    """
    if not s.isascii() and LONE_SURROGATE.search(s):
        if rewrites is not None:
            rewrites["lone surrogates replaced"] += len(LONE_SURROGATE.findall(s))
        return LONE_SURROGATE.sub("\ufffd", s)
    return s


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _clean_arguments(arguments: str, rewrites: Counter) -> str:
    """Tool call arguments with lone surrogates replaced, including JSON-escaped ones (``\\ud800``), which a
    provider that parses the arguments (Anthropic's ``input``) would turn back into unencodable text."""
    arguments = replace_lone_surrogates(arguments, rewrites)
    if not _ESCAPED_SURROGATE.search(arguments):
        return arguments
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, ValueError):
        return arguments
    text = json.dumps(value, ensure_ascii=False)
    if not LONE_SURROGATE.search(text):
        return arguments  # escaped pairs that form valid characters
    return json.dumps(json.loads(replace_lone_surrogates(text, rewrites)), ensure_ascii=False)


def _clean_content(parts: list[Part], rewrites: Counter, dialect: str | None = None) -> list[Part]:
    out = []
    for p in parts:
        if p.kind == "text":
            if not p.text.strip():
                rewrites["whitespace-only text removed"] += 1
                continue
            if dialect is not None and is_attachment(p.meta.get("source_block")):
                if sent_block(p.meta, dialect) is None:
                    rewrites[f"documents and files the {dialect} dialect cannot carry sent as text naming them"] += 1
                elif verbatim_block(p.meta, dialect) is None:
                    rewrites[f"documents sent as the {dialect} dialect's own kind of block"] += 1
            out.append(replace(p, text=replace_lone_surrogates(p.text, rewrites)))
        elif p.kind == "image":
            out.append(_checked_image(p, rewrites, dialect))
    return out


def _file_source(p: Part) -> str | None:
    """The file id of an image sent as an uploaded file (an Anthropic ``source`` of type ``file``, its
    ``file_id``: platform.claude.com/docs/en/build-with-claude/files, read 2026-12-08), else None."""
    src = p.meta.get("source")
    if isinstance(src, dict) and src.get("type") == "file" and isinstance(src.get("file_id"), str) \
            and src["file_id"].strip() and not p.data:
        return src["file_id"]
    return None


def _checked_image(p: Part, rewrites: Counter, dialect: str | None = None) -> Part:
    """An image part whose bytes are what it says: the media type corrected from the bytes, or a text placeholder
    naming its size and why when the bytes are no image a provider takes (:func:`snapglyph.model.images.check_image`);
    an image in a format the ``dialect``'s provider does not take (a GIF for Gemini) made a PNG from its bytes.
    An image with no data and no URL (or an empty ``data:`` URL) is the placeholder ``[image removed: no image
    data]``. URL images are left alone (their bytes are not here)."""
    file_id = _file_source(p)
    if file_id is not None:  # an uploaded file (Anthropic's Files API): only Anthropic can resolve its id
        if dialect in (None, "anthropic"):
            return p
        rewrites[f"images of uploaded files the {dialect} dialect cannot carry sent as text naming them"] += 1
        return Part("text", text=f"[image: uploaded file {file_id}, which only Anthropic's Files API resolves]")
    if not p.data and (not p.url.strip() or p.url.startswith("data:")):
        rewrites["empty images replaced by a placeholder"] += 1
        return Part("text", text="[image removed: no image data]")
    if not p.data:
        return p
    found = check_image(p.data)
    label = p.media_type or "no media type"
    if found.problem:
        rewrites["images that are not images replaced by a placeholder"] += 1
        size = f"{found.nbytes:,} bytes" if found.nbytes else f"{len(p.data):,} characters of base64"
        return Part("text", text=f"[image removed: {size} labelled {label} are {found.problem}]")
    if found.media_type not in media_types(dialect):
        png = downscale(p.data, max_side=None, max_b64_bytes=sys.maxsize)  # same size; a GIF's first frame
        if png is None:
            rewrites["images that are not images replaced by a placeholder"] += 1
            return Part("text", text=f"[image removed: {found.nbytes:,} bytes of {found.media_type} that do not "
                                     f"decode]")
        rewrites[f"images in a format the {dialect} dialect does not take made PNG"] += 1
        return replace(p, data=png[0], media_type=png[1], width=png[2], height=png[3])
    if found.media_type != p.media_type:
        rewrites["image media types corrected from the bytes"] += 1
    if (found.media_type, found.width, found.height) != (p.media_type, p.width, p.height):
        return replace(p, media_type=found.media_type, width=found.width, height=found.height)
    return p


def _open_with_user(out: list[Message], rewrites: Counter) -> None:
    """Make the first message after the system prompt a user message, in place: a short neutral user line goes
    before an opening assistant message. Anthropic refused requests whose first message is not a user message
    ("messages: first message must use the \"user\" role", reported 2024); every provider accepts one that opens
    with a user message."""
    i = next((k for k, m in enumerate(out) if m.role != "system"), None)
    if i is None or out[i].role == "user":
        return
    rewrites["a neutral user line put before an opening assistant message"] += 1
    out.insert(i, Message(out[i].id, "user", [Part("text", text=OPENING_USER_LINE)],
                          {"synthetic": True, "opening": True}))


_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")


def _safe_id(cid: str) -> str:
    """A tool call id in the characters Anthropic accepts: ``^[a-zA-Z0-9_-]+$`` (a 400 "String should match
    pattern" otherwise; reported in RooCodeInc/Roo-Code#10649 and HKUDS/nanobot#4356, read 2026-12-01)."""
    return _UNSAFE_ID.sub("_", cid)


def _unique_id(base: str, cid: str, used: set[str], taken: set[str]) -> str:
    """``base`` if no call so far was given it (and, where it is not the source id ``cid`` itself, no call of the
    conversation carries it), else the first of ``base_2``, ``base_3``... that is neither given nor carried."""
    if base not in used and (base == cid or base not in taken):
        return base
    k = 2
    while f"{base}_{k}" in used or f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


# --------------------------------------------------------------------------------------------------- writers



def _reasoning_kept(p: Part, dialect: str) -> bool:
    """Whether a ``thinking`` part can be sent in ``dialect``: an Anthropic thinking block with its signature to
    Anthropic; OpenAI's encrypted reasoning (a Responses ``reasoning`` item, ``meta["reasoning_item"]``) as a
    ``reasoning`` item to Responses only (its ``encrypted_content`` is not an Anthropic signature, and Anthropic
    rejects a block whose signature it did not issue:
    platform.claude.com/docs/en/build-with-claude/extended-thinking, read 2026-12-07)."""
    if not p.signature.strip() or p.signature.strip() in _THINKING_REDACTED:
        return False
    if p.meta.get("reasoning_item"):
        return dialect == "responses"
    return dialect == "anthropic" and not p.meta.get("redacted")

class _Normalizer:
    """One pass over a conversation (see :func:`normalize`); state of the round in progress."""

    def __init__(self, messages: Sequence[Message], dialect: str) -> None:
        self.dialect = dialect
        self.rewrites: Counter = Counter()
        self.taken = {p.call_id for m in messages for p in m.parts if p.kind == "tool_call" and p.call_id}
        self.seen: set[str] = set()       # source call ids met so far
        self.used: set[str] = set()       # call ids given so far
        self.out: list[Message] = []
        # source call id -> the unique ids given to the calls of the last assistant message that carried it, in
        # call order: results with a repeated id answer those calls in order
        self.pending: dict[str, list[str]] = {}
        self.answered: set[str] = set()
        self.last_calls: list[Part] = []

    def close_round(self, before: int) -> None:
        """Give every unanswered call of the last assistant message an error result, right after it."""
        missing = [c for c in self.last_calls if c.call_id not in self.answered]
        if missing:
            self.rewrites["tool calls without a result given an error result"] += len(missing)
            res = [Part("tool_result", call_id=c.call_id, name=c.name, is_error=True,
                        content=[Part("text", text="(no result was recorded for this tool call)")])
                   for c in missing]
            if self.out and self.out[-1].role == "tool":
                self.out[-1].parts[:0] = res
            else:
                self.out.append(Message(before, "tool", res, {"synthetic": True}))
        self.last_calls.clear()
        self.answered.clear()
        self.pending.clear()

    def call(self, p: Part, m: Message, k: int) -> Part:
        """A tool call with an id of its own (unique in the conversation, safe for the dialect)."""
        cid = p.call_id
        base = (_safe_id(cid) if self.dialect == "anthropic" else cid) or f"call_{m.id}_{k}"
        new = _unique_id(base, cid, self.used, self.taken)
        if not cid:
            self.rewrites["missing tool call ids added"] += 1
        elif cid in self.seen:
            self.rewrites["duplicate tool call ids made unique"] += 1
        elif new != cid:
            self.rewrites["tool call ids the dialect refuses made safe"] += 1
        self.seen.add(cid)
        self.used.add(new)
        self.pending.setdefault(cid, []).append(new)
        call = replace(p, call_id=new, name=replace_lone_surrogates(p.name, self.rewrites),
                       arguments=_clean_arguments(p.arguments, self.rewrites))
        self.last_calls.append(call)
        return call

    def assistant(self, m: Message) -> None:
        rw = self.rewrites
        parts: list[Part] = []
        for p in m.parts:
            if p.kind == "thinking":
                if _reasoning_kept(p, self.dialect):
                    parts.append(p)
                    continue
                rw["hidden reasoning without a usable signature removed" if self.dialect == "anthropic"
                   else "hidden reasoning removed (dialect cannot carry it)"] += 1
            elif p.kind == "tool_call":
                parts.append(self.call(p, m, len(parts)))
            elif p.kind == "image":
                rw["images in assistant messages turned into text"] += 1
                parts.append(Part("text", text="[image in an assistant message]"))
            else:
                parts.extend(_clean_content([p], rw, self.dialect))
        if not parts:
            rw["empty messages removed"] += 1
            return
        self.out.append(Message(m.id, "assistant", parts, dict(m.meta)))

    def result(self, p: Part, results: list[Part], rest: list[Part]) -> None:
        """A tool result: paired with the next unanswered call of its id, or turned into user text."""
        cid = p.call_id
        new = next((n for n in self.pending.get(cid, ()) if n not in self.answered), None)
        if new is not None:
            self.answered.add(new)
            results.append(replace(p, call_id=new, content=_clean_content(p.content, self.rewrites, self.dialect)))
            return
        self.rewrites["tool results without a call turned into user text"] += 1
        body = p.result_text()
        rest.append(Part("text", text=replace_lone_surrogates(f"[tool result {p.name or cid}]\n{body}", self.rewrites)))
        rest.extend(_clean_content([q for q in p.content if q.kind == "image"], self.rewrites, self.dialect))

    def user_or_tool(self, m: Message) -> None:
        rw = self.rewrites
        results: list[Part] = []
        rest: list[Part] = []
        for p in m.parts:
            if p.kind == "tool_result":
                self.result(p, results, rest)
            elif p.kind in ("text", "image"):
                rest.extend(_clean_content([p], rw, self.dialect))
            elif p.kind == "thinking":
                rw["hidden reasoning removed (dialect cannot carry it)"] += 1
            elif p.kind == "tool_call":
                rw["tool calls outside assistant messages turned into text"] += 1
                rest.append(Part("text", text=replace_lone_surrogates(f"-> {p.name} {p.arguments}", rw)))
        if rest and self.last_calls and not results:
            self.close_round(m.id)
        parts = results + rest
        if not parts:
            rw["empty messages removed"] += 1
            return
        self.out.append(Message(m.id, "tool" if results else "user", parts, dict(m.meta)))
        if rest and self.last_calls:
            self.close_round(m.id)

    def run(self, messages: Sequence[Message]) -> list[Message]:
        for m in messages:
            if m.meta.get("extra"):
                self.rewrites["non-standard keys dropped"] += len(m.meta["extra"])
            if m.role != "tool" and self.last_calls:
                self.close_round(m.id)
            if m.role == "system":
                parts = _clean_content([p for p in m.parts if p.kind == "text"], self.rewrites)
                if parts:
                    self.out.append(Message(m.id, "system", parts, dict(m.meta)))
            elif m.role == "assistant":
                self.assistant(m)
            else:
                self.user_or_tool(m)
        if self.last_calls:
            self.close_round(messages[-1].id if messages else 0)
        _open_with_user(self.out, self.rewrites)
        return self.out


def normalize(messages: Sequence[Message], *, dialect: str) -> tuple[list[Message], Counter]:
    """Rewrite ``messages`` into a conversation the ``dialect``'s provider accepts; count every rewrite.

    Parameters
    ----------
    messages : sequence of Message
        The conversation in neutral form; not modified.
    dialect : str
        ``openai``, ``anthropic``, ``responses`` or ``gemini``.

    Returns
    -------
    messages : list of Message
        New messages (ids kept; a message left empty is removed; the neutral opening line, where one is put,
        takes the id of the message it stands before).
    rewrites : collections.Counter
        ``{description: count}`` for every kind of rewrite made.

    Raises
    ------
    InputError
        For an unknown dialect.

    Examples
    --------
    >>> msgs = [Message(0, "user", [Part("text", text="go")]),
    ...         Message(1, "assistant", [Part("tool_call", name="a", call_id="x"),
    ...                                  Part("tool_call", name="b", call_id="x")]),
    ...         Message(2, "tool", [Part("tool_result", call_id="x", content=[Part("text", text="from a")]),
    ...                             Part("tool_result", call_id="x", content=[Part("text", text="from b")])])]
    >>> out, rw = normalize(msgs, dialect="anthropic")
    >>> [(p.call_id, p.result_text()) for p in out[2].parts], dict(rw)
    ([('x', 'from a'), ('x_2', 'from b')], {'duplicate tool call ids made unique': 1})
    """
    if dialect not in DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; known dialects: {', '.join(DIALECTS)}")
    n = _Normalizer(messages, dialect)
    return n.run(messages), n.rewrites
