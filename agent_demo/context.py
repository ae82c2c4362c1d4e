"""Context helpers of the loop: request estimates, reasoning stripping, boundary trimming, the snapglyph hook."""

from __future__ import annotations

import json
from typing import Any, Callable

import snapglyph
from snapglyph.model.images import image_size

__all__ = ["estimate_body", "is_tool_result_message", "snapglyph_compact", "strip_reasoning", "trim_to_boundary"]

_PER_MESSAGE = 4


def _walk(content: Any, texts: list[str], images: list[tuple[int, int]]) -> None:
    if isinstance(content, str):
        texts.append(content)
        return
    if not isinstance(content, list):
        return
    for part in content:
        if not isinstance(part, dict):
            continue
        t = part.get("type")
        if t == "text":
            texts.append(part.get("text", ""))
        elif t == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            size = image_size(url.split(",", 1)[1]) if url.startswith("data:") and "," in url else None
            images.append(size or (1024, 1024))
        elif t == "image":
            size = image_size((part.get("source") or {}).get("data", ""))
            images.append(size or (1024, 1024))
        elif t == "tool_use":
            texts.append(part.get("name", ""))
            texts.append(json.dumps(part.get("input", {}), ensure_ascii=False))
        elif t == "tool_result":
            _walk(part.get("content", ""), texts, images)
        elif t == "thinking":
            texts.append(part.get("thinking", ""))


def estimate_body(body: dict, profile: "str | snapglyph.Profile") -> int:
    """Estimated prompt tokens of a request body (OpenAI chat or Anthropic messages), output not included.

    Text is counted with :func:`snapglyph.providers.tokens.count_for_profile` (the profile's encoding and safety factor),
    images with the profile's published cost formula, plus 4 tokens of framing per message. An image whose size
    cannot be read counts as 1024x1024.
    """
    from snapglyph.providers.tokens import count_for_profile
    prof = snapglyph.profile(profile)
    texts: list[str] = []
    images: list[tuple[int, int]] = []
    if body.get("system"):
        _walk(body["system"], texts, images)
    msgs = body.get("messages") or []
    for m in msgs:
        _walk(m.get("content"), texts, images)
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            texts += [fn.get("name", ""), fn.get("arguments", "")]
    if body.get("tools"):
        texts.append(json.dumps(body["tools"], ensure_ascii=False))
    n = count_for_profile("\n".join(texts), prof) if texts else 0
    return n + sum(prof.image_tokens(w, h) for w, h in images) + _PER_MESSAGE * len(msgs)


def is_tool_result_message(msg: dict) -> bool:
    """True for an OpenAI ``tool`` message or an Anthropic user message that starts with a ``tool_result``."""
    if msg.get("role") == "tool":
        return True
    c = msg.get("content")
    return (msg.get("role") == "user" and isinstance(c, list) and bool(c) and isinstance(c[0], dict)
            and c[0].get("type") == "tool_result")


def _turn_start(messages: list[dict]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and not is_tool_result_message(messages[i]):
            return i
    return 0


def strip_reasoning(messages: list[dict], dialect: str) -> list[dict]:
    """Messages to send: hidden reasoning kept only in the assistant messages of the turn in progress.

    Anthropic requires the thinking blocks (with signatures) of the assistant turn in progress with tool use to be
    sent back, and ignores earlier ones (platform.claude.com extended-thinking docs, read 2026-11-30); OpenAI-style
    ``reasoning_content`` (DeepSeek, vLLM reasoning parsers) is likewise kept only within the current turn. The
    stored messages are not modified.
    """
    start = _turn_start(messages)
    out = []
    for i, m in enumerate(messages):
        if i >= start or m.get("role") != "assistant":
            out.append(m)
        elif dialect == "anthropic" and isinstance(m.get("content"), list):
            blocks = [b for b in m["content"] if b.get("type") not in ("thinking", "redacted_thinking")]
            out.append({**m, "content": blocks or [{"type": "text", "text": "(no text)"}]})
        else:
            out.append({k: v for k, v in m.items() if k not in ("reasoning_content", "reasoning")})
    return out


def trim_to_boundary(messages: list[dict], dialect: str, fits: Callable[[list[dict]], bool]) -> list[dict] | None:
    """Keep the first user message and the longest run of newest messages that ``fits``, cut at a boundary.

    A boundary is before an assistant message or a user message that is not a tool result, so no kept tool
    result loses its call. Returns ``None`` when not even the newest boundary fits.
    """
    head = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    if head is None:
        return None
    cuts = [i for i in range(head + 1, len(messages))
            if messages[i].get("role") == "assistant" or (messages[i].get("role") == "user"
                                                          and not is_tool_result_message(messages[i]))]
    for c in cuts:
        kept = messages[: head + 1] + messages[c:]
        if dialect == "anthropic" and kept[head + 1:] and kept[head + 1].get("role") == "user":
            kept = messages[: head + 1] + [{"role": "assistant", "content": "(earlier messages omitted)"}] + \
                messages[c:]
        if fits(kept):
            return kept
    return None


def snapglyph_compact(profile: str, dialect: str) -> Callable[..., Any]:
    """The default ``compact_fn``: :func:`snapglyph.compact` of the request body for ``profile`` and ``dialect``.

    The returned function takes ``(body, *, budget, store)`` and returns snapglyph's ``CompactResult``
    (``.request``, ``.store``, ``.pages``, ``.tokens_before``, ``.tokens_after``). It raises
    :class:`snapglyph.errors.BudgetError` when nothing fits.
    """
    def compact_fn(body: dict, *, budget: int, store: Any = None) -> Any:
        # an empty middle is fine here: the loop offers recall_messages for every message not shown
        return snapglyph.compact(body, profile=profile, dialect=dialect, budget=budget, store=store,
                                 max_tokens=int(body.get("max_tokens") or 1024), allow_empty_middle=True)
    return compact_fn
