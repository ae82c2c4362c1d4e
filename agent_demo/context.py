"""What the loop sends of its stored messages: hidden reasoning only within the turn in progress."""

from __future__ import annotations

__all__ = ["strip_reasoning"]


def _is_tool_result(msg: dict) -> bool:
    """An OpenAI ``tool`` message, or an Anthropic user message that starts with a ``tool_result``."""
    c = msg.get("content")
    return msg.get("role") == "tool" or (msg.get("role") == "user" and isinstance(c, list) and bool(c)
                                          and isinstance(c[0], dict) and c[0].get("type") == "tool_result")


def strip_reasoning(messages: list[dict], dialect: str) -> list[dict]:
    """Messages to send: hidden reasoning kept only in the assistant messages of the turn in progress.

    Anthropic requires the thinking blocks (with signatures) of the assistant turn in progress with tool use to be
    sent back, and ignores earlier ones (platform.claude.com extended-thinking docs, read 2026-11-30); OpenAI-style
    ``reasoning_content`` (DeepSeek, vLLM reasoning parsers) is likewise kept only within the current turn. The
    stored messages are not modified.

    Examples
    --------
    >>> msgs = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a", "reasoning_content": "r"},
    ...         {"role": "user", "content": "q2"}, {"role": "assistant", "content": "b", "reasoning_content": "s"}]
    >>> [m.get("reasoning_content") for m in strip_reasoning(msgs, "openai")]
    [None, None, None, 's']
    """
    start = next((i for i in range(len(messages) - 1, -1, -1)
                  if messages[i].get("role") == "user" and not _is_tool_result(messages[i])), 0)
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
