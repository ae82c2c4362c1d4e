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

:func:`normalize` (:mod:`snapglyph.providers.normalize`) rewrites a conversation into one every provider
accepts first. Grammar sources: platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls and the
OpenAI chat completions reference (read 2026-11-30; see ``../shared/reference/providers.md`` part C).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Sequence

from ..errors import InputError
from ..model.attachments import sent_block
from ..model.messages import Message, Part
from .gemini import gemini_body, gemini_contents, gemini_tools
from .normalize import DIALECTS, normalize

__all__ = [
    "DIALECTS",
    "normalize",
    "request_messages",
    "tool_definitions",
    "to_request",
]


def _check_dialect(dialect: str) -> None:
    if dialect not in DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; known dialects: {', '.join(DIALECTS)}")



def _data_url(p: Part) -> str:
    return p.url if (p.url and not p.data) else f"data:{p.media_type or 'image/png'};base64,{p.data}"


def _parse_args(arguments: str) -> dict:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (json.JSONDecodeError, ValueError):
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _anthropic_image(p: Part) -> dict:
    src = p.meta.get("source")
    if not p.data and isinstance(src, dict) and src.get("type") == "file":  # an uploaded file, by its id
        block = {"type": "image", "source": dict(src)}
    elif p.data:
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
            blocks.append(sent_block(p.meta, "anthropic") or {"type": "text", "text": p.text})
        elif p.kind == "image":
            blocks.append(_anthropic_image(p))
        elif p.kind == "thinking":
            blocks.append({"type": "thinking", "thinking": p.text, "signature": p.signature})
        elif p.kind == "tool_call":
            blocks.append({"type": "tool_use", "id": p.call_id, "name": p.name, "input": _parse_args(p.arguments)})
        elif p.kind == "tool_result":
            content: Any
            if all(q.kind == "text" and not sent_block(q.meta, "anthropic") for q in p.content):
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
    if all(p.kind == "text" and not sent_block(p.meta, "openai") for p in parts):
        return "\n".join(p.text for p in parts)
    out = []
    for p in parts:
        if p.kind == "text":
            out.append(sent_block(p.meta, "openai") or {"type": "text", "text": p.text})
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


def _reasoning_item(p: Part) -> dict:
    """A Responses ``reasoning`` input item from a ``thinking`` part read from one: its summary and
    ``encrypted_content`` (the item's id left out: with ``store: false`` the server holds no item to name,
    developers.openai.com/api/docs/guides/reasoning, read 2026-12-07)."""
    item: dict = {"type": "reasoning", "summary": [{"type": "summary_text", "text": t}
                                                  for t in ([p.text] if p.text else [])]}
    if p.meta.get("content"):
        item["content"] = p.meta["content"]
    item["encrypted_content"] = p.signature
    return item


def _responses_items(messages: Sequence[Message]) -> list[dict]:
    items: list[dict] = []
    custom: set[str] = set()  # call ids of freeform tools' calls (their outputs are custom_tool_call_output)

    def user_content(parts: list[Part]) -> list[dict]:
        c = []
        for p in parts:
            if p.kind == "text":
                c.append(sent_block(p.meta, "responses") or {"type": "input_text", "text": p.text})
            elif p.kind == "image":
                c.append({"type": "input_image", "image_url": _data_url(p), "detail": p.meta.get("detail", "auto")})
        return c

    for m in messages:
        if m.role == "system":
            continue
        if m.role == "user":
            items.append({"type": "message", "role": "user", "content": user_content(m.parts)})
        elif m.role == "assistant":
            for p in m.parts:  # OpenAI's encrypted reasoning, sent back as it came (normalize keeps only that)
                if p.kind == "thinking" and p.meta.get("reasoning_item"):
                    items.append(_reasoning_item(p))
            text = "\n".join(p.text for p in m.parts if p.kind == "text")
            if text:  # string content: an input message (an output_text part wants the output item's id)
                items.append({"type": "message", "role": "assistant", "content": text})
            for c in m.tool_calls():
                if c.meta.get("custom"):  # a freeform (custom) tool's call: its input is raw text, not JSON
                    custom.add(c.call_id)
                    items.append({"type": "custom_tool_call", "call_id": c.call_id, "name": c.name,
                                  "input": c.arguments})
                    continue
                items.append({"type": "function_call", "call_id": c.call_id, "name": c.name,
                              "arguments": c.arguments or "{}"})
        else:
            for p in m.tool_results():
                if any(q.kind == "image" for q in p.content):
                    output: Any = user_content(p.content)
                else:
                    output = p.result_text()
                kind = "custom_tool_call_output" if p.call_id in custom else "function_call_output"
                items.append({"type": kind, "call_id": p.call_id, "output": output})
            rest = [p for p in m.parts if p.kind in ("text", "image")]
            if rest:
                items.append({"type": "message", "role": "user", "content": user_content(rest)})
    return items


def request_messages(messages: Sequence[Message], *, dialect: str) -> list[dict]:
    """Write already-normalized messages (system excluded for ``anthropic``/``responses``) in a dialect's shape.

    Returns the ``messages`` list (``openai``, ``anthropic``), the ``input`` item list (``responses``) or the
    ``contents`` list (``gemini``). Raises :class:`InputError` for an unknown dialect.

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> msgs = [Message(0, "user", [Part("text", text="list files")]),
    ...         Message(1, "assistant", [Part("tool_call", name="bash", arguments='{"cmd": "ls"}', call_id="c1")])]
    >>> request_messages(msgs, dialect="anthropic")[1]
    {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'c1', 'name': 'bash', 'input': {'cmd': 'ls'}}]}
    >>> request_messages(msgs, dialect="responses")[1]
    {'type': 'function_call', 'call_id': 'c1', 'name': 'bash', 'arguments': '{"cmd": "ls"}'}
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
    calls = [p for m in messages for p in m.parts if p.kind == "tool_call" and p.name and p.name not in known]
    custom = {p.name for p in calls if p.meta.get("custom")}
    return defs + [{"name": n, "description": f"The {n} tool.", "parameters": {"type": "object"}}
                   | ({"custom": True} if n in custom else {}) for n in sorted({p.name for p in calls})]


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

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> call = Message(1, "assistant", [Part("tool_call", name="bash", arguments='{"cmd": "ls"}', call_id="c1")])
    >>> tool_definitions([], [call], dialect="anthropic")     # called but not defined: an open schema
    [{'name': 'bash', 'description': 'The bash tool.', 'input_schema': {'type': 'object'}}]
    >>> tool_definitions([{"name": "bash", "description": "Run a command.", "parameters": {"type": "object"}}],
    ...                  [call], dialect="openai")  # doctest: +NORMALIZE_WHITESPACE
    [{'type': 'function',
      'function': {'name': 'bash', 'description': 'Run a command.', 'parameters': {'type': 'object'}}}]
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
        elif dialect == "responses" and t.get("custom"):  # a freeform tool (Codex's apply_patch): text input
            out.append({"type": "custom", "name": t["name"], "description": desc})
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
        Output tokens reserved, under ``limit_key`` (``generationConfig.maxOutputTokens`` for ``gemini``, whose
        body names no model).
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
        The JSON-serializable request body.

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> msgs = [Message(0, "system", [Part("text", text="be brief")]), Message(1, "user", [Part("text", text="hi")])]
    >>> to_request(msgs, dialect="anthropic", model="claude-sonnet-4-5", max_tokens=1024)
    ... # doctest: +NORMALIZE_WHITESPACE
    {'model': 'claude-sonnet-4-5', 'max_tokens': 1024, 'system': 'be brief',
     'messages': [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}]}
    >>> to_request(msgs, dialect="openai", model="o3", max_tokens=1024)  # doctest: +NORMALIZE_WHITESPACE
    {'model': 'o3', 'max_completion_tokens': 1024,
     'messages': [{'role': 'system', 'content': 'be brief'}, {'role': 'user', 'content': 'hi'}]}
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
