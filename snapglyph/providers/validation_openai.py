"""The conversation rules of OpenAI's two dialects, as :func:`snapglyph.validate` walks them.

Chat completions (platform.openai.com/docs/api-reference/chat, read 2026-11-30): a ``tool`` message only as a
response to a preceding ``tool_calls``; every ``tool_call_id`` answered before the next non-tool message, and unique
in its message; images only in user messages; tool message content text only. Responses
(platform.openai.com/docs/api-reference/responses, read 2026-12-01): every ``function_call`` with a
``function_call_output``, no output without its call, call ids unique; images only in user messages and function
call outputs.
"""

from __future__ import annotations

from typing import Any

from .faults import Fault, data_url_image as _data_url_image
from .grammar import part_faults
from .tool_names import TOOL_NAME_RULES, tool_name_ok

__all__ = ["openai_faults", "responses_faults"]


def _url_b64(url: str) -> str:
    if isinstance(url, str) and url.startswith("data:") and "," in url:
        return url.split(",", 1)[1]
    return ""


def _openai_calls(i: int, m: dict, out: list[Fault]) -> list[str]:
    """The ids of an assistant message's tool calls; faults for malformed calls and repeated ids."""
    calls = m.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        out.append(Fault(i, "tool_calls: Input should be a valid list"))
        return []
    ids = []
    for k, c in enumerate(calls):
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(c, dict) or c.get("type", "function") != "function" or not isinstance(fn, dict):
            out.append(Fault(i, f"tool_calls.{k}: a tool call needs type 'function' and a 'function' object"))
            continue
        if not isinstance(c.get("id"), str) or not c["id"]:
            out.append(Fault(i, f"tool_calls.{k}.id: Field required"))
        if not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str):
            out.append(Fault(i, f"tool_calls.{k}.function: needs 'name' and 'arguments' strings"))
        elif not tool_name_ok(fn["name"], "openai"):
            out.append(Fault(i, f"tool_calls.{k}.function.name: {fn['name']!r} does not match "
                                f"{TOOL_NAME_RULES['openai']}"))
        ids.append(c.get("id"))
    if len(set(ids)) != len(ids):
        out.append(Fault(i, "duplicate tool_call ids in one assistant message"))
    return ids


def _openai_content(i: int, role: str, content: Any, out: list[Fault], images: list[tuple[int, str]]) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        out.append(Fault(i, "content: Input should be a string, a list of content parts or null"))
        return
    for j, part in enumerate(content):
        if isinstance(part, dict) and part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url", "") if isinstance(part.get("image_url"), dict) else ""
            if role != "user":
                out.append(Fault(i, f"Image URLs are only allowed for messages with role 'user', but this "
                                    f"message with role '{role}' contains an image URL."))
                continue
            images.append((i, _data_url_image(i, url, f"content.{j}.image_url", out)))
        out.extend(Fault(i, f) for f in part_faults("openai", role, part, f"content.{j}"))


def _openai(body: dict, out: list[Fault], images: list[tuple[int, str]]) -> None:
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        out.append(Fault(None, "messages: must be a non-empty list"))
        return
    pending: list[str] = []
    pending_at = -1
    for i, m in enumerate(msgs):
        if not isinstance(m, dict):
            out.append(Fault(i, "a message must be an object with a role"))
            continue
        role, content = m.get("role"), m.get("content")
        if role != "tool" and pending:
            out.append(Fault(pending_at, "An assistant message with 'tool_calls' must be followed by tool messages "
                                         f"responding to each 'tool_call_id'. The following tool_call_ids did not "
                                         f"have response messages: {', '.join(map(str, pending))}"))
            pending = []
        if role not in ("user", "system", "developer", "assistant", "tool", "function"):
            out.append(Fault(i, f"unknown role {role!r}"))
            continue
        _openai_content(i, role, content, out, images)
        if role == "assistant":
            pending = _openai_calls(i, m, out)
            pending_at = i
            if not content and not pending and not m.get("function_call"):
                out.append(Fault(i, "an assistant message needs content or tool_calls"))
        elif role == "tool":
            cid = m.get("tool_call_id")
            if not isinstance(cid, str):
                out.append(Fault(i, "tool_call_id: Field required"))
            if cid not in pending:
                out.append(Fault(i, "Invalid parameter: messages with role 'tool' must be a response to a "
                                    "preceeding message with 'tool_calls'."))
            else:
                pending.remove(cid)
        elif role in ("user", "system", "developer") and (content is None or content == "" or content == []):
            out.append(Fault(i, f"a {role} message needs non-empty content"))
    if pending:
        out.append(Fault(pending_at, "An assistant message with 'tool_calls' must be followed by tool messages "
                                     f"responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                     f"response messages: {', '.join(map(str, pending))}"))


#: Responses input item types that carry no message content snapglyph checks further (built-in tool items).
_RESPONSES_OTHER_ITEMS = frozenset({
    "reasoning", "item_reference", "custom_tool_call", "custom_tool_call_output", "web_search_call",
    "file_search_call", "computer_call", "computer_call_output", "local_shell_call", "local_shell_call_output",
    "image_generation_call", "code_interpreter_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
    "mcp_approval_response", "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output",
    "compaction"})


def _responses_parts(i: int, role: str, content: Any, out: list[Fault], images: list[tuple[int, str]]) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        out.append(Fault(i, "content: Input should be a string or a list of content parts"))
        return
    for j, p in enumerate(content):
        if isinstance(p, dict) and p.get("type") == "input_image":
            if role not in ("user", "tool_output"):
                out.append(Fault(i, f"content.{j}: input_image is only allowed in user messages"))
                continue
            images.append((i, _data_url_image(i, p.get("image_url"), f"content.{j}.image_url", out)))
        out.extend(Fault(i, f) for f in part_faults("responses", role, p, f"content.{j}"))


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
        if not isinstance(it, dict):
            out.append(Fault(i, "an input item must be an object"))
            continue
        t = it.get("type", "message")
        if t == "function_call":
            if not all(isinstance(it.get(k), str) for k in ("call_id", "name", "arguments")):
                out.append(Fault(i, "a function_call needs 'call_id', 'name' and 'arguments' strings"))
            elif not tool_name_ok(it["name"], "responses"):
                out.append(Fault(i, f"name: {it['name']!r} does not match {TOOL_NAME_RULES['responses']}"))
            if it.get("call_id") in calls:
                out.append(Fault(i, f"Duplicate item found with call_id {it.get('call_id')}."))
            calls[it.get("call_id")] = i
        elif t == "function_call_output":
            cid = it.get("call_id")
            if cid not in calls:
                out.append(Fault(i, f"No tool call found for function call output with call_id {cid}."))
            outputs.add(cid)
            if not isinstance(it.get("output"), (str, list)):
                out.append(Fault(i, "output: Input should be a string or a list of content parts"))
            elif isinstance(it["output"], list):
                _responses_parts(i, "tool_output", it["output"], out, images)
        elif t == "message":
            role = it.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                out.append(Fault(i, f"role: Input should be 'user', 'assistant', 'system' or 'developer', not "
                                    f"{role!r}"))
                continue
            _responses_parts(i, role, it.get("content"), out, images)
        elif t not in _RESPONSES_OTHER_ITEMS:
            out.append(Fault(i, f"type: unknown input item type {t!r}"))
    for cid, i in calls.items():
        if cid not in outputs:
            out.append(Fault(i, f"No tool output found for function call {cid}."))


openai_faults = _openai
responses_faults = _responses
