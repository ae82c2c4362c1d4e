"""Neutral messages -> request bodies in a wire dialect, after the normalization each provider needs.

Four dialects:

``openai``     OpenAI chat completions (``messages``; images only in user messages, as ``image_url`` data URLs;
               tool results are text-only ``tool`` messages; an image a tool returned rides in a synthetic user
               message right after the tool messages).
``anthropic``  Anthropic messages (``system`` apart; ``tool_result`` blocks first in a user message; ``image``
               blocks with a base64 source, allowed in user content and inside ``tool_result``).
``responses``  OpenAI Responses input items (``message``, ``function_call``, ``function_call_output``).
``gemini``     Gemini API ``generateContent`` bodies (``contents`` of ``user``/``model`` parts; written by
               :mod:`snapglyph.providers.gemini`, which names its sources).

:func:`normalize` rewrites a conversation into one every provider accepts, and counts each rewrite: non-standard
keys dropped, duplicate tool call ids made unique, whitespace-only text removed, hidden reasoning without a usable
signature removed, lone surrogates replaced by U+FFFD, tool calls without a result given an error result, tool
results without a call turned into user text, messages left empty removed. Grammar sources:
platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls and the OpenAI chat completions reference
(read 2026-11-30; see ``../shared/reference/providers.md`` part C).
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from dataclasses import replace
from typing import Any, Sequence

from ..errors import InputError
from ..model.images import check_image
from ..model.messages import OPENING_USER_LINE, Message, Part
from .gemini import gemini_body, gemini_contents, gemini_tools

__all__ = [
    "DIALECTS",
    "normalize",
    "request_messages",
    "tool_definitions",
    "to_request",
]

DIALECTS = ("openai", "anthropic", "responses", "gemini")

_SURROGATE = re.compile("[\ud800-\udfff]")
_THINKING_REDACTED = ("", "REDACTED", "[REDACTED]", "<redacted>")


def _clean(s: str, rewrites: Counter) -> str:
    if _SURROGATE.search(s):
        n = len(_SURROGATE.findall(s))
        rewrites["lone surrogates replaced"] += n
        return _SURROGATE.sub("\ufffd", s)
    return s


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _clean_arguments(arguments: str, rewrites: Counter) -> str:
    """Tool call arguments with lone surrogates replaced, including JSON-escaped ones (``\\ud800``), which a
    provider that parses the arguments (Anthropic's ``input``) would turn back into unencodable text."""
    arguments = _clean(arguments, rewrites)
    if not _ESCAPED_SURROGATE.search(arguments):
        return arguments
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, ValueError):
        return arguments
    text = json.dumps(value, ensure_ascii=False)
    if not _SURROGATE.search(text):
        return arguments  # escaped pairs that form valid characters
    return json.dumps(json.loads(_clean(text, rewrites)), ensure_ascii=False)


def _check_dialect(dialect: str) -> None:
    if dialect not in DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; known dialects: {', '.join(DIALECTS)}")


def _clean_content(parts: list[Part], rewrites: Counter) -> list[Part]:
    out = []
    for p in parts:
        if p.kind == "text":
            if not p.text.strip():
                rewrites["whitespace-only text removed"] += 1
                continue
            out.append(replace(p, text=_clean(p.text, rewrites)))
        elif p.kind == "image":
            out.append(_checked_image(p, rewrites))
    return out


def _checked_image(p: Part, rewrites: Counter) -> Part:
    """An image part whose bytes are what it says: the media type corrected from the bytes, or a text placeholder
    naming its size and why when the bytes are no image a provider takes (:func:`snapglyph.model.images.check_image`).
    URL images are left alone (their bytes are not here)."""
    if not p.data:
        return p
    found = check_image(p.data)
    label = p.media_type or "no media type"
    if found.problem:
        rewrites["images that are not images replaced by a placeholder"] += 1
        size = f"{found.nbytes:,} bytes" if found.nbytes else f"{len(p.data):,} characters of base64"
        return Part("text", text=f"[image removed: {size} labelled {label} are {found.problem}]")
    if found.media_type != p.media_type:
        rewrites["image media types corrected from the bytes"] += 1
    if (found.media_type, found.width, found.height) != (p.media_type, p.width, p.height):
        return replace(p, media_type=found.media_type, width=found.width, height=found.height)
    return p


def normalize(messages: Sequence[Message], *, dialect: str) -> tuple[list[Message], Counter]:
    """Rewrite ``messages`` into a conversation the ``dialect``'s provider accepts; count every rewrite.

    Parameters
    ----------
    messages : sequence of Message
        The conversation in neutral form; not modified.
    dialect : str
        ``openai``, ``anthropic`` or ``responses``.

    Returns
    -------
    messages : list of Message
        New messages (ids kept; a message left empty is removed).
    rewrites : collections.Counter
        ``{description: count}`` for every kind of rewrite made.

    Raises
    ------
    InputError
        For an unknown dialect.
    """
    _check_dialect(dialect)
    rewrites: Counter = Counter()
    taken: set[str] = {p.call_id for m in messages for p in m.parts if p.kind == "tool_call" and p.call_id}
    seen: set[str] = set()    # source call ids met so far
    used: set[str] = set()    # call ids given so far
    out: list[Message] = []
    # original call id -> the unique ids given to the calls of the last assistant message that carried it, in
    # order: results with a repeated id answer those calls in order.
    pending: dict[str, list[str]] = {}
    answered: set[str] = set()
    last_calls: list[Part] = []

    def close_round(before: int) -> None:
        # Give every unanswered call of the last assistant message an error result, right after it.
        missing = [c for c in last_calls if c.call_id not in answered]
        if missing:
            rewrites["tool calls without a result given an error result"] += len(missing)
            res = [Part("tool_result", call_id=c.call_id, name=c.name, is_error=True,
                        content=[Part("text", text="(no result was recorded for this tool call)")])
                   for c in missing]
            if out and out[-1].role == "tool":
                out[-1].parts[:0] = res
            else:
                out.append(Message(before, "tool", res, {"synthetic": True}))
        last_calls.clear()
        answered.clear()
        pending.clear()

    for m in messages:
        if m.meta.get("extra"):
            rewrites["non-standard keys dropped"] += len(m.meta["extra"])
        if m.role not in ("tool",) and last_calls:
            close_round(m.id)
        if m.role == "system":
            parts = _clean_content([p for p in m.parts if p.kind == "text"], rewrites)
            if parts:
                out.append(Message(m.id, "system", parts, dict(m.meta)))
            continue
        if m.role == "assistant":
            parts: list[Part] = []
            for p in m.parts:
                if p.kind == "thinking":
                    if (dialect != "anthropic" or p.meta.get("redacted")
                            or p.signature.strip() in _THINKING_REDACTED):
                        rewrites["hidden reasoning without a usable signature removed" if dialect == "anthropic"
                                 else "hidden reasoning removed (dialect cannot carry it)"] += 1
                        continue
                    parts.append(p)
                elif p.kind == "tool_call":
                    cid = p.call_id
                    base = (_safe_id(cid) if dialect == "anthropic" else cid) or f"call_{m.id}_{len(parts)}"
                    new = _unique_id(base, cid, used, taken)
                    if not cid:
                        rewrites["missing tool call ids added"] += 1
                    elif cid in seen:
                        rewrites["duplicate tool call ids made unique"] += 1
                    elif new != cid:
                        rewrites["tool call ids the dialect refuses made safe"] += 1
                    seen.add(cid)
                    used.add(new)
                    pending.setdefault(cid, []).append(new)
                    call = replace(p, call_id=new, name=_clean(p.name, rewrites),
                                   arguments=_clean_arguments(p.arguments, rewrites))
                    parts.append(call)
                    last_calls.append(call)
                elif p.kind == "image":
                    rewrites["images in assistant messages turned into text"] += 1
                    parts.append(Part("text", text="[image in an assistant message]"))
                else:
                    parts.extend(_clean_content([p], rewrites))
            if not parts:
                rewrites["empty messages removed"] += 1
                continue
            out.append(Message(m.id, "assistant", parts, dict(m.meta)))
            continue
        # user and tool messages
        results: list[Part] = []
        rest: list[Part] = []
        for p in m.parts:
            if p.kind == "tool_result":
                cid = p.call_id
                new = next((n for n in pending.get(cid, ()) if n not in answered), None)
                if new is not None:
                    answered.add(new)
                    results.append(replace(p, call_id=new, content=_clean_content(p.content, rewrites)))
                else:
                    rewrites["tool results without a call turned into user text"] += 1
                    body = p.result_text()
                    rest.append(Part("text", text=_clean(f"[tool result {p.name or cid}]\n{body}", rewrites)))
                    rest.extend(q for q in p.content if q.kind == "image")
            elif p.kind in ("text", "image"):
                rest.extend(_clean_content([p], rewrites))
            elif p.kind == "thinking":
                rewrites["hidden reasoning removed (dialect cannot carry it)"] += 1
            elif p.kind == "tool_call":
                rewrites["tool calls outside assistant messages turned into text"] += 1
                rest.append(Part("text", text=_clean(f"-> {p.name} {p.arguments}", rewrites)))
        if rest and last_calls and not results:
            close_round(m.id)
        parts = results + rest
        if not parts:
            rewrites["empty messages removed"] += 1
            continue
        out.append(Message(m.id, "tool" if results else "user", parts, dict(m.meta)))
        if rest and last_calls:
            close_round(m.id)
    if last_calls:
        close_round(messages[-1].id if messages else 0)
    _open_with_user(out, rewrites)
    return out, rewrites


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

def _data_url(p: Part) -> str:
    return p.url if (p.url and not p.data) else f"data:{p.media_type or 'image/png'};base64,{p.data}"


def _parse_args(arguments: str) -> dict:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (json.JSONDecodeError, ValueError):
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _anthropic_image(p: Part) -> dict:
    if p.data:
        block = {"type": "image", "source": {"type": "base64", "media_type": p.media_type or "image/png",
                                             "data": p.data}}
    else:
        block = {"type": "image", "source": {"type": "url", "url": p.url}}
    if p.meta.get("cache_control"):
        # A prompt-cache breakpoint after the last page that stays stable when messages are appended
        # (platform.claude.com/docs/en/build-with-claude/prompt-caching, read 2026-11-30).
        block["cache_control"] = {"type": "ephemeral"}
    return block


def _image_url(p: Part) -> dict:
    iu = {"url": _data_url(p)}
    if p.meta.get("detail"):
        iu["detail"] = p.meta["detail"]
    return iu


def _anthropic_blocks(parts: list[Part]) -> list[dict]:
    blocks: list[dict] = []
    for p in parts:
        if p.kind == "text":
            blocks.append({"type": "text", "text": p.text})
        elif p.kind == "image":
            blocks.append(_anthropic_image(p))
        elif p.kind == "thinking":
            blocks.append({"type": "thinking", "thinking": p.text, "signature": p.signature})
        elif p.kind == "tool_call":
            blocks.append({"type": "tool_use", "id": p.call_id, "name": p.name, "input": _parse_args(p.arguments)})
        elif p.kind == "tool_result":
            content: Any
            if all(q.kind == "text" for q in p.content):
                content = "\n".join(q.text for q in p.content)
            else:
                content = _anthropic_blocks(p.content)
            block = {"type": "tool_result", "tool_use_id": p.call_id, "content": content}
            if p.is_error:
                block["is_error"] = True
            if content == "" or content == []:
                del block["content"]
            blocks.append(block)
    return blocks


def _openai_user_content(parts: list[Part]) -> Any:
    if all(p.kind == "text" for p in parts):
        return "\n".join(p.text for p in parts)
    out = []
    for p in parts:
        if p.kind == "text":
            out.append({"type": "text", "text": p.text})
        elif p.kind == "image":
            out.append({"type": "image_url", "image_url": _image_url(p)})
    return out


def _openai_messages(messages: Sequence[Message]) -> list[dict]:
    out: list[dict] = []
    extra: list[Part] = []  # images (and user text) of a run of tool messages, sent once the run ends
    for m in messages:
        if extra and m.role != "tool":
            out.append({"role": "user", "content": _openai_user_content(extra)})
            extra = []
        if m.role == "system":
            out.append({"role": "system", "content": m.text()})
        elif m.role == "user":
            out.append({"role": "user", "content": _openai_user_content(m.parts)})
        elif m.role == "assistant":
            text = "\n".join(p.text for p in m.parts if p.kind == "text")
            msg: dict[str, Any] = {"role": "assistant", "content": text or None}
            calls = m.tool_calls()
            if calls:
                msg["tool_calls"] = [{"id": c.call_id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments or "{}"}}
                                     for c in calls]
            out.append(msg)
        else:  # tool: text-only tool messages, then the images and any user text in one user message
            for p in m.tool_results():
                images = [q for q in p.content if q.kind == "image"]
                text = p.result_text()
                if images:
                    note = f"[{len(images)} image(s) returned by this tool follow in the next user message]"
                    text = f"{text}\n{note}" if text else note
                    extra.extend(images)
                out.append({"role": "tool", "tool_call_id": p.call_id, "content": text})
            extra.extend(p for p in m.parts if p.kind in ("text", "image"))
    if extra:
        out.append({"role": "user", "content": _openai_user_content(extra)})
    return out


def _responses_items(messages: Sequence[Message]) -> list[dict]:
    items: list[dict] = []

    def user_content(parts: list[Part]) -> list[dict]:
        c = []
        for p in parts:
            if p.kind == "text":
                c.append({"type": "input_text", "text": p.text})
            elif p.kind == "image":
                c.append({"type": "input_image", "image_url": _data_url(p), "detail": p.meta.get("detail", "auto")})
        return c

    for m in messages:
        if m.role == "system":
            continue
        if m.role == "user":
            items.append({"type": "message", "role": "user", "content": user_content(m.parts)})
        elif m.role == "assistant":
            text = "\n".join(p.text for p in m.parts if p.kind == "text")
            if text:  # string content: an input message (an output_text part wants the output item's id)
                items.append({"type": "message", "role": "assistant", "content": text})
            for c in m.tool_calls():
                items.append({"type": "function_call", "call_id": c.call_id, "name": c.name,
                              "arguments": c.arguments or "{}"})
        else:
            for p in m.tool_results():
                if any(q.kind == "image" for q in p.content):
                    output: Any = user_content(p.content)
                else:
                    output = p.result_text()
                items.append({"type": "function_call_output", "call_id": p.call_id, "output": output})
            rest = [p for p in m.parts if p.kind in ("text", "image")]
            if rest:
                items.append({"type": "message", "role": "user", "content": user_content(rest)})
    return items


def request_messages(messages: Sequence[Message], *, dialect: str) -> list[dict]:
    """Write already-normalized messages (system excluded for ``anthropic``/``responses``) in a dialect's shape.

    Returns the ``messages`` list (``openai``, ``anthropic``), the ``input`` item list (``responses``) or the
    ``contents`` list (``gemini``). Raises :class:`InputError` for an unknown dialect.
    """
    _check_dialect(dialect)
    if dialect == "gemini":
        return gemini_contents(messages)
    if dialect == "openai":
        return _openai_messages(messages)
    if dialect == "responses":
        return _responses_items(messages)
    return _anthropic_messages(messages)


def _anthropic_messages(messages: Sequence[Message]) -> list[dict]:
    # The results of one round must all sit in the one user message after the tool use, first in its content:
    # consecutive tool messages (one per result in OpenAI-shaped sources) are merged, results before other blocks.
    out: list[dict] = []
    prev_tool = False
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool" and prev_tool:
            blocks = out[-1]["content"]
            results = [b for b in blocks if b["type"] == "tool_result"]
            others = [b for b in blocks if b["type"] != "tool_result"]
            new = _anthropic_blocks(m.parts)
            out[-1]["content"] = (results + [b for b in new if b["type"] == "tool_result"] + others
                                  + [b for b in new if b["type"] != "tool_result"])
            continue
        out.append({"role": "assistant" if m.role == "assistant" else "user", "content": _anthropic_blocks(m.parts)})
        prev_tool = m.role == "tool"
    return out


def _all_defs(tools: Sequence[dict], messages: Sequence[Message]) -> list[dict]:
    """The source's neutral definitions, plus an open one for each tool called but not defined (sorted by name)."""
    defs = [dict(t) for t in tools if t.get("name")]
    known = {t["name"] for t in defs}
    called = sorted({p.name for m in messages for p in m.parts if p.kind == "tool_call" and p.name} - known)
    return defs + [{"name": n, "description": f"The {n} tool.", "parameters": {"type": "object"}} for n in called]


def tool_definitions(tools: Sequence[dict], messages: Sequence[Message], *, dialect: str) -> list[dict]:
    """Tool definitions for the request: the source's own, plus one for every tool called but not defined.

    Anthropic rejects ``tool_use`` blocks whose tool is not defined, so a synthesised definition (an open object
    schema) is added for each tool name that the conversation calls without a definition.

    Parameters
    ----------
    tools : sequence of dict
        Neutral definitions ``{"name", "description", "parameters"}``.
    messages : sequence of Message
    dialect : str

    Returns
    -------
    list of dict
        Definitions in the dialect's shape, source order first, then synthesised ones sorted by name (for
        ``gemini``: one ``{"functionDeclarations": [...]}`` tool holding them all, or none).
    """
    _check_dialect(dialect)
    defs = _all_defs(tools, messages)
    if dialect == "gemini":
        return gemini_tools(defs)
    out = []
    for t in defs:
        params = copy.deepcopy(t.get("parameters") or {"type": "object"})
        desc = t.get("description") or ""
        if dialect == "anthropic":
            out.append({"name": t["name"], "description": desc, "input_schema": params})
        elif dialect == "responses":
            # strict stated: the SDK's FunctionToolParam requires it, and the API's default (true) refuses
            # schemas that are not strict-compatible
            out.append({"type": "function", "name": t["name"], "description": desc, "parameters": params,
                        "strict": bool(t.get("strict", False))})
        else:
            out.append({"type": "function", "function": {"name": t["name"], "description": desc,
                                                          "parameters": params}})
    return out


def to_request(messages: Sequence[Message], *, dialect: str, model: str, max_tokens: int,
               tools: Sequence[dict] = (), params: dict | None = None, limit_key: str | None = None) -> dict:
    """Build a full request body from already-normalized messages.

    Parameters
    ----------
    messages : sequence of Message
        Output of :func:`normalize` (possibly with a snapshot user message inserted).
    dialect : str
    model : str
    max_tokens : int
        Output tokens reserved, under ``limit_key`` (for ``gemini``, whose body names no model:
        ``generationConfig.maxOutputTokens``).
    tools : sequence of dict
        Neutral tool definitions from the source.
    params : dict, optional
        Further top-level parameters, already in the dialect's terms (see
        :func:`snapglyph.providers.params.carry_params`); written after the tools.
    limit_key : str, optional
        The output limit's name; default :func:`snapglyph.providers.params.output_limit_key` (``max_tokens``;
        ``max_output_tokens`` for ``responses``; ``max_completion_tokens`` for OpenAI reasoning models in chat).

    Returns
    -------
    dict
        The JSON-serialisable request body.
    """
    _check_dialect(dialect)
    if dialect == "gemini":  # the model is named in the URL, not the body
        return gemini_body(messages, max_tokens=max_tokens, tools=_all_defs(tools, messages))
    from .params import output_limit_key
    system = "\n\n".join(m.text() for m in messages if m.role == "system")
    body: dict[str, Any] = {"model": model, limit_key or output_limit_key(dialect, model): int(max_tokens)}
    if dialect == "openai":
        body["messages"] = _openai_messages(messages)
    elif dialect == "anthropic":
        if system:
            body["system"] = system
        body["messages"] = request_messages(messages, dialect=dialect)
    else:
        if system:
            body["instructions"] = system
        body["input"] = _responses_items(messages)
    defs = tool_definitions(tools, messages, dialect=dialect)
    if defs:
        body["tools"] = defs
    for k, v in (params or {}).items():
        body.setdefault(k, v)
    return body
