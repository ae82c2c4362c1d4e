"""The wire side of the loop: a request body from the stored messages, and tool results as messages.

The loop keeps its conversation as wire messages of one dialect (``"openai"`` chat completions or
``"anthropic"`` messages); these functions are the only places that know the two shapes.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["request_body", "strip_reasoning", "tool_result_messages"]


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


def request_body(dialect: str, messages: list[dict], *, model: str, system: str, tools: list[dict],
                 max_tokens: int, offer_tools: bool = True, extra: str | None = None) -> dict:
    """The request body of ``messages`` (earlier turns' reasoning stripped) in ``dialect``.

    ``extra`` is a one-request instruction appended as user text (never stored). Without ``offer_tools`` an
    OpenAI request has no tools and an Anthropic one keeps them (its tool blocks need their definitions) with
    ``tool_choice`` ``none``.

    Examples
    --------
    >>> b = request_body("anthropic", [{"role": "user", "content": "hi"}], model="m", system="s", tools=[],
    ...                  max_tokens=10, offer_tools=False, extra="answer now")
    >>> b["messages"], b["tool_choice"]
    ([{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}, {'type': 'text', 'text': 'answer now'}]}], {'type': 'none'})
    """
    msgs = strip_reasoning(messages, dialect)
    if extra:
        msgs = msgs + [{"role": "user", "content": extra}]
        if dialect == "anthropic" and len(msgs) > 1 and msgs[-2].get("role") == "user":   # one user message
            content = msgs[-2]["content"]
            content = content if isinstance(content, list) else [{"type": "text", "text": content}]
            msgs[-2:] = [{**msgs[-2], "content": content + [{"type": "text", "text": extra}]}]
    body: dict = {"model": model, "max_tokens": max_tokens}
    if dialect == "openai":
        body["messages"] = [{"role": "system", "content": system}] + msgs
        if offer_tools:
            body["tools"] = tools
        return body
    body.update(system=system, messages=msgs, tools=tools)
    if not offer_tools:
        body["tool_choice"] = {"type": "none"}
    return body


def tool_result_messages(dialect: str, results: Sequence[tuple[str, str, bool]]) -> list[dict]:
    """``(call_id, text, is_error)`` results as the dialect's messages: one ``tool`` message each (OpenAI), or one
    user message of ``tool_result`` blocks (Anthropic).

    Examples
    --------
    >>> tool_result_messages("openai", [("c1", "ok", False)])
    [{'role': 'tool', 'tool_call_id': 'c1', 'content': 'ok'}]
    >>> tool_result_messages("anthropic", [("t1", "", True)])[0]["content"]
    [{'type': 'tool_result', 'tool_use_id': 't1', 'content': '(empty)', 'is_error': True}]
    """
    if dialect == "openai":
        return [{"role": "tool", "tool_call_id": cid, "content": text} for cid, text, _ in results]
    return [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": text or "(empty)",
                                          **({"is_error": True} if err else {})} for cid, text, err in results]}]
