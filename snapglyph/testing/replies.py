"""The simulator's scripted model: steps (tool calls or a final text) and the reply bodies of OpenAI chat
completions and Anthropic messages built from them.

Reply shapes follow the providers' API references (platform.openai.com "Chat Completions object" and
docs.anthropic.com "Messages", read 2026-12-01): ids, ``finish_reason`` / ``stop_reason``, and ``usage`` holding
the prompt tokens the simulator counted. The Responses and Gemini replies live with their dialects
(:mod:`snapglyph.testing.responses`, :mod:`snapglyph.testing.gemini`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from .counting import count_text

__all__ = ["Step", "anthropic_reply", "answer", "call", "final_text", "openai_reply", "tool_calls_of"]


@dataclass(frozen=True)
class Step:
    """One scripted model answer: tool calls (a tuple of ``(name, arguments)``), or a final text, or both.

    Examples
    --------
    >>> Step(text="done").tool_calls
    ()
    """

    text: str = ""
    tool_calls: tuple[tuple[str, dict], ...] = ()


def call(*calls: tuple[str, dict]) -> Step:
    """A scripted step calling tools (parallel calls when several).

    Examples
    --------
    >>> call(("read_file", {"path": "a.txt"})).tool_calls
    (('read_file', {'path': 'a.txt'}),)
    """
    return Step(tool_calls=tuple(calls))


def answer(text: str) -> Step:
    """A scripted final answer.

    Examples
    --------
    >>> answer("all done")
    Step(text='all done', tool_calls=())
    """
    return Step(text=text)


def final_text(step: Step) -> str:
    """The text of a step answered without tools: its own text, else a fixed wrap-up sentence (a request without
    ``tools`` cannot take the step's calls).

    Examples
    --------
    >>> final_text(answer("ok")), final_text(call(("f", {})))[:8]
    ('ok', 'Wrap-up:')
    """
    return step.text or "Wrap-up: I ran out of tool rounds; here is what I found so far."


def tool_calls_of(step: Step, body: dict) -> tuple[tuple[str, dict], ...]:
    """The step's tool calls where the request offers tools (``body["tools"]`` not empty), else none.

    Examples
    --------
    >>> tool_calls_of(call(("f", {})), {"tools": []}), tool_calls_of(call(("f", {})), {"tools": [{}]})
    ((), (('f', {}),))
    """
    return step.tool_calls if body.get("tools") else ()


def openai_reply(n: int, body: dict, step: Step, prompt: int) -> dict:
    """The chat-completions reply body of ``step`` to request number ``n``; ``usage.prompt_tokens`` is
    ``prompt``.

    Examples
    --------
    >>> r = openai_reply(3, {"model": "m"}, answer("hi"), 12)
    >>> r["id"], r["choices"][0]["message"]["content"], r["choices"][0]["finish_reason"], r["usage"]["prompt_tokens"]
    ('chatcmpl-sim0003', 'hi', 'stop', 12)
    """
    msg: dict = {"role": "assistant", "content": None, "refusal": None}
    calls = tool_calls_of(step, body)
    if calls:
        msg["tool_calls"] = [{"id": f"call_sim{n:04d}_{k}", "type": "function",
                              "function": {"name": name, "arguments": json.dumps(args)}}
                             for k, (name, args) in enumerate(calls)]
        msg["content"] = step.text or None
    else:
        msg["content"] = final_text(step)
    out = count_text(json.dumps(msg))
    return {"id": f"chatcmpl-sim{n:04d}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "sim"), "system_fingerprint": "sim",
            "choices": [{"index": 0, "message": msg, "logprobs": None,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}}


def anthropic_reply(n: int, body: dict, step: Step, prompt: int) -> dict:
    """The Anthropic messages reply body of ``step`` to request number ``n``; ``usage.input_tokens`` is
    ``prompt``.

    Examples
    --------
    >>> r = anthropic_reply(2, {"tools": [{}]}, call(("read_file", {"path": "a"})), 40)
    >>> [b["type"] for b in r["content"]], r["stop_reason"], r["content"][0]["id"]
    (['tool_use'], 'tool_use', 'toolu_sim0002_0')
    """
    calls = tool_calls_of(step, body)
    content: list[dict] = []
    if step.text or not calls:
        content.append({"type": "text", "text": step.text if calls else final_text(step)})
    content += [{"type": "tool_use", "id": f"toolu_sim{n:04d}_{k}", "name": name, "input": args}
                for k, (name, args) in enumerate(calls)]
    out = count_text(json.dumps(content))
    return {"id": f"msg_sim{n:04d}", "type": "message", "role": "assistant", "model": body.get("model", "sim"),
            "content": content, "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": out}}
