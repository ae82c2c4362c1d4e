"""The shape of each dialect's request: which parameters it takes, which content parts, and their required fields.

:func:`snapglyph.validate` walks a request with these tables; each fault is one a provider answers with a 400.
Sources, read 2026-12-01: the Anthropic Messages API reference (platform.claude.com/docs/en/api/messages) and its
SDK's request types (``anthropic.types.MessageCreateParams``, anthropic-sdk-python 2.14); the OpenAI chat completions
and Responses references (platform.openai.com/docs/api-reference/chat, /responses) and their SDK's request types
(``openai.types.chat.CompletionCreateParams``, ``openai.types.responses.ResponseCreateParams``, openai-python 3.57);
Anthropic's id and name patterns from its 400s ("tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
RooCodeInc/Roo-Code#10649; "tools.7.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
apify/tester-mcp-client#11).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .request_model import openai_reasoning_model
from .tool_names import TOOL_NAME_RULES, tool_name_ok

__all__ = ["OUTPUT_LIMIT_KEYS", "PARAMS", "param_faults", "part_faults"]

#: The output-token limit's name in each dialect (OpenAI chat: ``max_completion_tokens`` for reasoning models).
OUTPUT_LIMIT_KEYS = ("max_tokens", "max_completion_tokens", "max_output_tokens")

#: Top-level parameters each dialect's endpoint takes (the SDK request types' keys, plus ones older SDKs name, plus
#: ones the real CLIs send and the provider takes: Codex's Responses ``client_metadata``, a string map,
#: ``ResponsesApiRequest`` in openai/codex codex-rs/codex-api/src/common.rs, read 2026-12-04).
PARAMS = {
    "anthropic": frozenset({
        "model", "messages", "max_tokens", "system", "tools", "tool_choice", "thinking", "temperature", "top_p",
        "top_k", "stop_sequences", "metadata", "stream", "service_tier", "container", "context_management",
        "mcp_servers", "output_config", "cache_control", "inference_geo", "speed", "diagnostics",
        "user_profile_id", "workspace_id"}),
    "openai": frozenset({
        "model", "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
        "max_completion_tokens", "max_tokens", "metadata", "modalities", "moderation", "n", "parallel_tool_calls",
        "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
        "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop", "store",
        "stream", "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user",
        "verbosity", "web_search_options"}),
    "responses": frozenset({
        "model", "input", "instructions", "access_programs", "background", "background_options", "client_metadata",
        "context_management", "conversation", "image", "include", "max_output_tokens", "max_tool_calls", "metadata",
        "moderation", "parallel_tool_calls", "previous_response_id", "prompt", "prompt_cache_key",
        "prompt_cache_options", "prompt_cache_retention", "reasoning", "safety_identifier", "service_tier", "store",
        "stream", "stream_options", "temperature", "text", "tool_choice", "tools", "top_logprobs", "top_p",
        "truncation", "user"}),
}

_ID = re.compile(r"[a-zA-Z0-9_-]+")
_ANTHROPIC_MEDIA = ("image/jpeg", "image/png", "image/gif", "image/webp")
_DETAILS = ("auto", "low", "high", "original")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _str_field(b: dict, key: str, where: str, out: list[str], *, nonempty: bool = False) -> None:
    v = b.get(key)
    if not isinstance(v, str):
        out.append(f"{where}.{key}: Field required (a string)" if v is None else
                   f"{where}.{key}: Input should be a valid string")
    elif nonempty and not v.strip():
        out.append(f"{where}.{key}: text content blocks must be non-empty and contain non-whitespace text")


def _cache_control(b: dict, where: str, out: list[str]) -> None:
    cc = b.get("cache_control")
    if cc is not None and not (isinstance(cc, dict) and cc.get("type") == "ephemeral"
                               and cc.get("ttl", "5m") in ("5m", "1h")):
        out.append(f"{where}.cache_control: must be {{'type': 'ephemeral'}} (ttl '5m' or '1h')")


# ------------------------------------------------------------------------------------------------------ Anthropic
def _a_text(b: dict, where: str, out: list[str]) -> None:
    _str_field(b, "text", where, out, nonempty=True)


def _a_image(b: dict, where: str, out: list[str]) -> None:
    src = b.get("source")
    if not isinstance(src, dict):
        out.append(f"{where}.source: Field required")
        return
    t = src.get("type")
    if t == "base64":
        if src.get("media_type") not in _ANTHROPIC_MEDIA:
            out.append(f"{where}.source.media_type: Input should be {', '.join(map(repr, _ANTHROPIC_MEDIA))}")
        _str_field(src, "data", f"{where}.source", out)
    elif t == "url":
        _str_field(src, "url", f"{where}.source", out)
    elif t == "file":
        _str_field(src, "file_id", f"{where}.source", out)
    else:
        out.append(f"{where}.source.type: Input should be 'base64', 'url' or 'file'")


def _a_document(b: dict, where: str, out: list[str]) -> None:
    src = b.get("source")
    if not isinstance(src, dict) or src.get("type") not in ("base64", "text", "content", "url", "file"):
        out.append(f"{where}.source: a document needs a base64, text, content, url or file source")


def _a_tool_use(b: dict, where: str, out: list[str]) -> None:
    _str_field(b, "name", where, out)
    if isinstance(b.get("name"), str) and not tool_name_ok(b["name"], "anthropic"):
        out.append(f"{where}.name: String should match pattern '{TOOL_NAME_RULES['anthropic']}' ({b['name']!r})")
    if not isinstance(b.get("id"), str) or not _ID.fullmatch(b["id"]):
        out.append(f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
    if not isinstance(b.get("input"), dict):
        out.append(f"{where}.input: Input should be a valid dictionary")


def _a_tool_result(b: dict, where: str, out: list[str]) -> None:
    if not isinstance(b.get("tool_use_id"), str) or not _ID.fullmatch(b["tool_use_id"]):
        out.append(f"{where}.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'")
    if "is_error" in b and not isinstance(b["is_error"], bool):
        out.append(f"{where}.is_error: Input should be a valid boolean")
    c = b.get("content")
    if c is None or isinstance(c, str):
        return
    if not isinstance(c, list):
        out.append(f"{where}.content: Input should be a string or a list of content blocks")
        return
    for k, q in enumerate(c):
        t = q.get("type") if isinstance(q, dict) else None
        if t not in ("text", "image", "document", "search_result"):
            out.append(f"{where}.content.{k}: a tool_result holds text, image, document or search_result blocks, "
                       f"not {t!r}")
            continue
        _cache_control(q, f"{where}.content.{k}", out)
        {"text": _a_text, "image": _a_image, "document": _a_document}.get(t, lambda *a: None)(
            q, f"{where}.content.{k}", out)


def _a_thinking(b: dict, where: str, out: list[str]) -> None:
    _str_field(b, "thinking", where, out)
    _str_field(b, "signature", where, out)


def _a_redacted(b: dict, where: str, out: list[str]) -> None:
    _str_field(b, "data", where, out)


_SERVER_RESULTS = ("web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
                   "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
                   "tool_search_tool_result")


def _a_server_result(b: dict, where: str, out: list[str]) -> None:
    _str_field(b, "tool_use_id", where, out)
    if "content" not in b:
        out.append(f"{where}.content: Field required")


#: Anthropic block type -> (roles it may appear in, its field check).
_ANTHROPIC_BLOCKS: dict[str, tuple[tuple[str, ...], Callable]] = {
    "text": (("user", "assistant"), _a_text),
    "image": (("user",), _a_image),
    "document": (("user",), _a_document),
    "search_result": (("user",), lambda b, w, o: _str_field(b, "title", w, o)),
    "tool_result": (("user",), _a_tool_result),
    "tool_use": (("assistant",), _a_tool_use),
    "server_tool_use": (("assistant",), lambda b, w, o: (_str_field(b, "id", w, o), _str_field(b, "name", w, o))),
    "thinking": (("assistant",), _a_thinking),
    "redacted_thinking": (("assistant",), _a_redacted),
    "container_upload": (("user",), lambda b, w, o: _str_field(b, "file_id", w, o)),
    **{t: (("assistant",), _a_server_result) for t in _SERVER_RESULTS},
}


# --------------------------------------------------------------------------------------------------------- OpenAI
def _o_text(b: dict, where: str, out: list[str]) -> None:
    _str_field(b, "text", where, out)


def _o_image_url(b: dict, where: str, out: list[str]) -> None:
    iu = b.get("image_url")
    if not isinstance(iu, dict):
        out.append(f"{where}.image_url: Field required (an object with 'url')")
        return
    _str_field(iu, "url", f"{where}.image_url", out)
    if "detail" in iu and iu["detail"] not in _DETAILS:
        out.append(f"{where}.image_url.detail: Input should be {', '.join(map(repr, _DETAILS))}")


def _o_input_audio(b: dict, where: str, out: list[str]) -> None:
    a = b.get("input_audio")
    if not isinstance(a, dict) or not isinstance(a.get("data"), str) or a.get("format") not in ("wav", "mp3"):
        out.append(f"{where}.input_audio: needs 'data' (base64) and 'format' ('wav' or 'mp3')")


def _o_file(b: dict, where: str, out: list[str]) -> None:
    if not isinstance(b.get("file"), dict):
        out.append(f"{where}.file: Field required (an object)")


#: OpenAI chat role -> {part type: field check}: the content parts each role takes.
_OPENAI_PARTS: dict[str, dict[str, Callable]] = {
    "user": {"text": _o_text, "image_url": _o_image_url, "input_audio": _o_input_audio, "file": _o_file},
    "system": {"text": _o_text},
    "developer": {"text": _o_text},
    "assistant": {"text": _o_text, "refusal": lambda b, w, o: _str_field(b, "refusal", w, o)},
    "tool": {"text": _o_text},
    "function": {"text": _o_text},
}


# ------------------------------------------------------------------------------------------------------ Responses
def _r_input_image(b: dict, where: str, out: list[str]) -> None:
    if not isinstance(b.get("image_url"), str) and not isinstance(b.get("file_id"), str):
        out.append(f"{where}: an input_image needs 'image_url' or 'file_id'")
    if b.get("detail") not in _DETAILS:
        out.append(f"{where}.detail: Input should be {', '.join(map(repr, _DETAILS))}")


def _r_input_file(b: dict, where: str, out: list[str]) -> None:
    if not any(isinstance(b.get(k), str) for k in ("file_data", "file_id", "file_url")):
        out.append(f"{where}: an input_file needs 'file_data', 'file_id' or 'file_url'")


_RESPONSES_INPUT = {"input_text": _o_text, "input_image": _r_input_image, "input_file": _r_input_file}
#: Responses message role -> {part type: field check}.
_RESPONSES_PARTS: dict[str, dict[str, Callable]] = {
    "user": _RESPONSES_INPUT,
    "system": _RESPONSES_INPUT,
    "developer": _RESPONSES_INPUT,
    "assistant": {**_RESPONSES_INPUT, "output_text": _o_text,
                  "refusal": lambda b, w, o: _str_field(b, "refusal", w, o)},
}


def part_faults(dialect: str, role: str, block: Any, where: str) -> list[str]:
    """Faults of one content part (its type allowed for ``role`` in ``dialect``, its required fields present).

    Parameters
    ----------
    dialect : str
        ``anthropic``, ``openai`` or ``responses``.
    role : str
        The role of the message holding the part; ``"tool_output"`` for a Responses ``function_call_output``.
    block : object
        The content part as found in the request.
    where : str
        Its place, for the fault text (e.g. ``"content.2"``).

    Returns
    -------
    list of str
        Empty when the part is one the dialect takes there.

    Examples
    --------
    >>> part_faults("openai", "user", {"type": "image", "source": {}}, "content.0")
    ["content.0: 'image' is not a content part type of a user message in this dialect (known: text, image_url, \
input_audio, file)"]
    >>> part_faults("anthropic", "user", {"type": "text", "text": "hi"}, "content.0")
    []
    """
    if not isinstance(block, dict):
        return [f"{where}: a content part must be an object, not {type(block).__name__}"]
    t = block.get("type")
    out: list[str] = []
    if dialect == "anthropic":
        spec = _ANTHROPIC_BLOCKS.get(t)
        if spec is None:
            return [f"{where}.type: unknown content block type {t!r}"]
        roles, check = spec
        if role not in roles:
            return [f"{where}: '{t}' blocks are not permitted within {role} turns"]
        _cache_control(block, where, out)
        check(block, where, out)
        return out
    if dialect == "responses" and role == "tool_output":
        table = _RESPONSES_INPUT
    else:
        table = (_OPENAI_PARTS if dialect == "openai" else _RESPONSES_PARTS).get(role, {})
    check = table.get(t)
    if check is None:
        return [f"{where}: {t!r} is not a content part type of a {role} message in this dialect (known: "
                f"{', '.join(table)})"]
    check(block, where, out)
    return out


def _tool_faults(dialect: str, tools: Any, out: list[str]) -> None:
    if not isinstance(tools, list):
        out.append("tools: Input should be a valid list")
        return
    for k, t in enumerate(tools):
        where = f"tools.{k}"
        if not isinstance(t, dict):
            out.append(f"{where}: Input should be an object")
            continue
        if dialect == "openai":
            fn = t.get("function") if t.get("type", "function") == "function" else None
            if t.get("type", "function") == "function" and not isinstance(fn, dict):
                out.append(f"{where}.function: Field required")
                continue
            name = fn.get("name") if fn else t.get("name", "x")
        elif dialect == "anthropic" and t.get("type") not in (None, "custom"):
            _str_field(t, "name", where, out)  # a server tool (bash_20250124, web_search_...): its type names it
            continue
        elif dialect == "responses" and t.get("type") not in ("function", "custom"):
            # a hosted tool (web_search, local_shell, file_search, ...) is named by its type and has no name:
            # Codex sends {"type": "web_search"} and {"type": "local_shell"} (openai/codex
            # codex-rs/core/src/client_common.rs ToolSpec, read 2026-12-04)
            if not isinstance(t.get("type"), str):
                out.append(f"{where}.type: Field required (a string)")
            continue
        else:
            name = t.get("name")
        if not tool_name_ok(name, dialect):
            out.append(f"{where}.name: String should match pattern '{TOOL_NAME_RULES[dialect]}' ({name!r})")
        if dialect == "anthropic" and not isinstance(t.get("input_schema"), dict):
            out.append(f"{where}.input_schema: Field required (a JSON schema object)")


def param_faults(body: dict, dialect: str) -> list[str]:
    """Faults of a request's top-level parameters: unknown ones, required ones missing, wrongly typed ones.

    Parameters
    ----------
    body : dict
        The request body.
    dialect : str
        ``anthropic``, ``openai`` or ``responses``.

    Returns
    -------
    list of str
        Empty when the parameters are ones the endpoint takes.

    Examples
    --------
    >>> param_faults({"model": "claude-sonnet-4-5", "messages": []}, "anthropic")
    ['max_tokens: Field required']
    >>> param_faults({"model": "gpt-4.1", "messages": [], "max_tokens": 10, "stop_sequences": ["x"]}, "openai")
    ['stop_sequences: Extra inputs are not permitted']
    """
    out = [f"{k}: Extra inputs are not permitted" for k in body if k not in PARAMS[dialect]]
    if not isinstance(body.get("model"), str) or not body.get("model"):
        if not (dialect == "responses" and body.get("prompt")):
            out.append("model: Field required (a model name)")
    if dialect == "anthropic" and "max_tokens" not in body:
        out.append("max_tokens: Field required")
    for key in OUTPUT_LIMIT_KEYS:
        if key in body and (not _is_int(body[key]) or body[key] < 1):
            out.append(f"{key}: Input should be a positive integer")
    if dialect == "openai" and "max_tokens" in body and "max_completion_tokens" in body:
        out.append("max_tokens and max_completion_tokens cannot both be set")
    elif dialect == "openai" and "max_tokens" in body and openai_reasoning_model(body.get("model")):
        out.append("max_tokens: Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                   "'max_completion_tokens' instead.")
    if dialect == "anthropic" and "system" in body:
        s = body["system"]
        if isinstance(s, list):
            for k, b in enumerate(s):
                if not isinstance(b, dict) or b.get("type") != "text":
                    out.append(f"system.{k}: system blocks must be text blocks")
                else:
                    _a_text(b, f"system.{k}", out)
        elif not isinstance(s, str):
            out.append("system: Input should be a string or a list of text blocks")
    if "tools" in body:
        _tool_faults(dialect, body["tools"], out)
    return out
