"""Check a request body against a dialect's grammar and a reader profile's limits, as the provider would.

Grammar rules (each one a documented 400 from the provider; sources read 2026-11-30, quoted in
``../shared/reference/providers.md`` part C):

Anthropic messages (platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls, /docs/en/api/messages)
  every ``tool_use`` answered by a ``tool_result`` in the next message; every ``tool_result`` answering a
  ``tool_use`` of the previous message; tool results first in their user message; tool use ids unique; no image in
  an assistant message; no empty or whitespace-only text block; no empty content; tools defined when tool blocks
  are present. (A 2024 report of "first message must use the user role" is not in current docs, so it is not
  checked.)
OpenAI chat completions (platform.openai.com/docs/api-reference/chat)
  a ``tool`` message only as a response to a preceding ``tool_calls``; every ``tool_call_id`` answered before the
  next non-tool message; images only in user messages; tool message content text only.
OpenAI Responses (platform.openai.com/docs/api-reference/responses)
  every ``function_call`` with a ``function_call_output`` and no output without its call; images only in user
  messages.
Gemini ``generateContent`` (ai.google.dev/api/generate-content, read 2026-12-01)
  the rules listed in :mod:`snapglyph.providers.gemini` (every ``functionCall`` answered, in order, by the
  ``functionResponse`` parts of the next ``user`` content; roles ``user``/``model``; no empty parts).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..model.messages import image_size
from .gemini import check_gemini

__all__ = ["Fault", "validate"]


@dataclass(frozen=True)
class Fault:
    """One thing a provider would reject.

    Attributes
    ----------
    index : int or None
        Index of the message (or input item) at fault; ``None`` for the request as a whole.
    text : str
        What is wrong, in the provider's terms.
    """

    index: int | None
    text: str

    def __str__(self) -> str:
        return f"messages[{self.index}]: {self.text}" if self.index is not None else self.text


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _anthropic(body: dict, out: list[Fault], images: list[tuple[int, str]]) -> None:
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        out.append(Fault(None, "messages: must be a non-empty list"))
        return
    has_tools = bool(body.get("tools"))
    tool_names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    seen_ids: set[str] = set()
    for i, m in enumerate(msgs):
        role, content = m.get("role"), m.get("content")
        if role not in ("user", "assistant"):
            out.append(Fault(i, f"role must be user or assistant, not {role!r}"))
            continue
        blocks = _blocks(content)
        if (content == "" or content == []) and not (i == len(msgs) - 1 and role == "assistant"):
            out.append(Fault(i, "all messages must have non-empty content except for the optional final "
                                "assistant message"))
        seen_other = False
        for j, b in enumerate(blocks):
            t = b.get("type")
            if t == "text" and not str(b.get("text", "")).strip():
                out.append(Fault(i, f"content.{j}: text content blocks must be non-empty and contain "
                                    "non-whitespace text"))
            if t == "image":
                if role == "assistant":
                    out.append(Fault(i, f"content.{j}: 'image' blocks are not permitted within assistant turns"))
                images.append((i, _b64_of(b)))
            if t == "tool_result":
                if seen_other:
                    out.append(Fault(i, f"content.{j}: tool_result blocks must come first in the content array"))
                for q in _blocks(b.get("content", [])):
                    if q.get("type") == "image":
                        images.append((i, _b64_of(q)))
                    if q.get("type") == "text" and not str(q.get("text", "")).strip() and isinstance(
                            b.get("content"), list):
                        out.append(Fault(i, f"content.{j}: text content blocks must be non-empty"))
            else:
                seen_other = True
            if t == "tool_use":
                tid = b.get("id")
                if tid in seen_ids:
                    out.append(Fault(i, f"content.{j}: `tool_use` ids must be unique: {tid}"))
                seen_ids.add(tid)
                if not has_tools:
                    f = Fault(None, "requests which include `tool_use` or `tool_result` blocks must define tools")
                    if f not in out:
                        out.append(f)
                elif b.get("name") not in tool_names:
                    out.append(Fault(i, f"content.{j}: tool {b.get('name')!r} is not defined in tools"))
        uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"] if role == "assistant" else []
        if uses:
            nxt = _blocks(msgs[i + 1].get("content")) if i + 1 < len(msgs) else []
            answered = {b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                out.append(Fault(i, f"`tool_use` ids were found without `tool_result` blocks immediately after: "
                                    f"{', '.join(map(str, missing))}"))
        if role == "user":
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            prev = _blocks(msgs[i - 1].get("content")) if i > 0 and msgs[i - 1].get("role") == "assistant" else []
            called = {b.get("id") for b in prev if b.get("type") == "tool_use"}
            extra = [r for r in results if r not in called]
            if extra:
                out.append(Fault(i, f"unexpected `tool_use_id` found in `tool_result` blocks: "
                                    f"{', '.join(map(str, extra))}"))


def _b64_of(block: dict) -> str:
    src = block.get("source") or {}
    return src.get("data", "") if src.get("type") == "base64" else ""


def _url_b64(url: str) -> str:
    if url.startswith("data:") and "," in url:
        return url.split(",", 1)[1]
    return ""


def _openai(body: dict, out: list[Fault], images: list[tuple[int, str]]) -> None:
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        out.append(Fault(None, "messages: must be a non-empty list"))
        return
    pending: list[str] = []
    pending_at = -1
    for i, m in enumerate(msgs):
        role, content = m.get("role"), m.get("content")
        if role != "tool" and pending:
            out.append(Fault(pending_at, "An assistant message with 'tool_calls' must be followed by tool messages "
                                         f"responding to each 'tool_call_id'. The following tool_call_ids did not "
                                         f"have response messages: {', '.join(pending)}"))
            pending = []
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = (part.get("image_url") or {}).get("url", "")
                    if role != "user":
                        out.append(Fault(i, f"Image URLs are only allowed for messages with role 'user', but this "
                                            f"message with role '{role}' contains an image URL."))
                    images.append((i, _url_b64(url)))
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if not content and not calls:
                out.append(Fault(i, "an assistant message needs content or tool_calls"))
            pending = [c.get("id") for c in calls]
            pending_at = i
            if len(set(pending)) != len(pending):
                out.append(Fault(i, "duplicate tool_call ids in one assistant message"))
        elif role == "tool":
            cid = m.get("tool_call_id")
            if cid not in pending:
                out.append(Fault(i, "Invalid parameter: messages with role 'tool' must be a response to a "
                                    "preceeding message with 'tool_calls'."))
            else:
                pending.remove(cid)
            if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") != "text" for p in content):
                out.append(Fault(i, "tool message content must be a string or text parts only"))
        elif role in ("user", "system", "developer"):
            if content is None or content == "" or content == []:
                out.append(Fault(i, f"a {role} message needs non-empty content"))
        else:
            out.append(Fault(i, f"unknown role {role!r}"))
    if pending:
        out.append(Fault(pending_at, "An assistant message with 'tool_calls' must be followed by tool messages "
                                     f"responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                     f"response messages: {', '.join(pending)}"))


def _responses(body: dict, out: list[Fault], images: list[tuple[int, str]]) -> None:
    items = body.get("input")
    if isinstance(items, str):
        return
    if not isinstance(items, list) or not items:
        out.append(Fault(None, "input: must be a string or a non-empty list"))
        return
    calls: dict[str, int] = {}
    outputs: set[str] = set()
    for i, it in enumerate(items):
        t = it.get("type", "message")
        if t == "function_call":
            calls[it.get("call_id")] = i
        elif t == "function_call_output":
            cid = it.get("call_id")
            if cid not in calls:
                out.append(Fault(i, f"No tool call found for function call output with call_id {cid}."))
            outputs.add(cid)
            if isinstance(it.get("output"), list):
                for p in it["output"]:
                    if isinstance(p, dict) and p.get("type") == "input_image":
                        images.append((i, _url_b64(p.get("image_url", ""))))
        elif t == "message":
            content = it.get("content")
            for p in content if isinstance(content, list) else []:
                if isinstance(p, dict) and p.get("type") == "input_image":
                    if it.get("role") != "user":
                        out.append(Fault(i, "input_image is only allowed in user messages"))
                    images.append((i, _url_b64(p.get("image_url", ""))))
    for cid, i in calls.items():
        if cid not in outputs:
            out.append(Fault(i, f"No tool output found for function call {cid}."))


def _limits(body: dict, images: list[tuple[int, str]], prof: Any, out: list[Fault]) -> None:
    from .limits import ImageInfo, breaches, request_bytes
    infos = []
    for i, data in images:
        size = image_size(data) if data else None
        if data and size is None:
            try:
                base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4))
            except ValueError:
                out.append(Fault(i, "image data is not base64"))
        infos.append(ImageInfo(i, len(data or ""), *(size or (None, None))))
    out.extend(Fault(b.index, b.text) for b in breaches(prof, infos, request_bytes(body)))


def validate(request: dict, dialect: str, profile: Any = None) -> list[Fault]:
    """Return every fault a provider would reject in ``request`` (an empty list when there is none).

    Parameters
    ----------
    request : dict
        A request body in ``dialect``.
    dialect : str
        ``openai`` (chat completions), ``anthropic`` (messages), ``responses`` or ``gemini`` (``generateContent``;
        ``index`` of a fault is then the index in ``contents``).
    profile : str or Profile, optional
        Also check this reader profile's limits: images per request, bytes per image (base64), request bytes,
        the many-image rule.

    Returns
    -------
    list of Fault
        In request order; each has the message index (or ``None``) and the text.

    Raises
    ------
    InputError
        For an unknown dialect or a request that is not a dict.
    """
    if not isinstance(request, dict):
        raise InputError(f"a request body must be a JSON object, not {type(request).__name__}")
    out: list[Fault] = []
    images: list[tuple[int, str]] = []
    if dialect == "anthropic":
        _anthropic(request, out, images)
    elif dialect == "openai":
        _openai(request, out, images)
    elif dialect == "responses":
        _responses(request, out, images)
    elif dialect == "gemini":
        check_gemini(request, lambda i, text: out.append(Fault(i, text)), images)
    else:
        raise InputError(f"unknown dialect {dialect!r}; known dialects: openai, anthropic, responses, gemini")
    if profile is not None:
        from .profiles import profile as get_profile
        _limits(request, images, get_profile(profile), out)
    return out
