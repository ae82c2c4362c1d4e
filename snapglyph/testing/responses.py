"""The simulator's OpenAI Responses dialect (``POST /v1/responses``): what it counts, the one grammar rule it
checks, and its reply body.

Shapes from platform.openai.com "Responses" (the ``input`` items ``message``, ``function_call`` and
``function_call_output``; the response object with ``output`` items and ``usage``), read 2026-12-01. The stream
of a reply is :func:`snapglyph.testing.streams.responses_events`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .counting import count_text
from .replies import Step, final_text, tool_calls_of

__all__ = ["responses_count_items", "responses_grammar_error", "responses_reply"]


def _part(p: dict) -> dict:
    if p.get("type") in ("output_text", "input_text"):
        return {"type": "text", "text": p.get("text", "")}
    if p.get("type") == "input_image":
        return {"type": "image_url", "image_url": {"url": p.get("image_url", "")}}
    return p


def responses_count_items(items: Any) -> list[dict]:
    """The ``input`` of a Responses request as chat-like messages ``{"role", "content", "tool_calls"}`` for
    counting (:class:`snapglyph.testing.counting.Counter`): a string becomes one user message; ``function_call``
    items count their name and arguments, ``function_call_output`` items their output.

    Examples
    --------
    >>> responses_count_items("hi")
    [{'role': 'user', 'content': 'hi'}]
    >>> responses_count_items([{"type": "function_call_output", "call_id": "c", "output": "42"}])
    [{'role': 'tool', 'content': '42'}]
    """
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    out: list[dict] = []
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        t = it.get("type", "message")
        if t == "function_call":
            out.append({"role": "assistant", "content": None,
                        "tool_calls": [{"function": {"name": it.get("name", ""),
                                                     "arguments": it.get("arguments", "")}}]})
        elif t == "function_call_output":
            output = it.get("output", "")
            out.append({"role": "tool", "content": output if isinstance(output, (str, list)) else json.dumps(output)})
        elif t == "message":
            content = it.get("content")
            if isinstance(content, list):
                content = [_part(p) for p in content if isinstance(p, dict)]
            out.append({"role": it.get("role", "user"), "content": content})
    return out


def responses_grammar_error(items: Any) -> dict | None:
    """OpenAI's error body for a ``function_call_output`` with no earlier ``function_call`` of its ``call_id``,
    else ``None``.

    Examples
    --------
    >>> responses_grammar_error([{"type": "function_call_output", "call_id": "c9", "output": ""}])["error"]["message"]
    'No tool call found for function call output with call_id c9.'
    """
    seen: set = set()
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        if it.get("type") == "function_call":
            seen.add(it.get("call_id"))
        elif it.get("type") == "function_call_output" and it.get("call_id") not in seen:
            return {"error": {"message": f"No tool call found for function call output with call_id "
                                         f"{it.get('call_id')}.", "type": "invalid_request_error",
                              "param": "input", "code": None}}
    return None


def responses_reply(n: int, body: dict, step: Step, prompt: int) -> dict:
    """The non-streaming Responses body of a scripted ``step`` to request number ``n``; ``usage.input_tokens``
    is ``prompt``.

    Examples
    --------
    >>> r = responses_reply(5, {"model": "m"}, Step(text="hi"), 30)
    >>> r["id"], r["output"][0]["content"][0]["text"], r["usage"]["input_tokens"]
    ('resp_sim0005', 'hi', 30)
    """
    calls = tool_calls_of(step, body)
    output: list[dict] = []
    if step.text or not calls:
        output.append({"type": "message", "id": f"msg_sim{n:04d}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": step.text if calls else final_text(step),
                                    "annotations": []}]})
    output += [{"type": "function_call", "id": f"fc_sim{n:04d}_{k}", "call_id": f"call_sim{n:04d}_{k}",
                "name": name, "arguments": json.dumps(args), "status": "completed"}
               for k, (name, args) in enumerate(calls)]
    out = count_text(json.dumps(output))
    return {"id": f"resp_sim{n:04d}", "object": "response", "created_at": int(time.time()), "status": "completed",
            "error": None, "incomplete_details": None, "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"), "model": body.get("model", "sim"),
            "output": output, "parallel_tool_calls": True, "previous_response_id": None, "temperature": 1.0,
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [], "top_p": 1.0,
            "truncation": "disabled", "text": {"format": {"type": "text"}},
            "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": out,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": prompt + out}}
