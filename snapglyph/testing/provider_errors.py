"""The simulator's error answers: each provider's verbatim overflow body and each dialect's grammar errors.

Every body here is copied from ``../shared/reference/providers.md`` (part B for overflows, part C for grammar;
read 2026-11-30), which cites the public issue each one was taken from; only the numbers, ids and indexes are
filled in. The grammar checks implement the rules of part C independently of ``snapglyph.validate``, so a request
the client believes valid is checked by a second, separate reading of the rules. Gemini's grammar errors live with
the rest of that dialect, in :mod:`snapglyph.testing.gemini`.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import InputError

__all__ = ["AMBIGUOUS", "OUTPUT_COUNTS", "PROVIDERS", "anthropic_grammar_error", "bad_request", "dumps",
           "image_count_body", "openai_grammar_error", "overflow_body"]

#: Providers whose window check counts the requested output (max_tokens) together with the prompt.
OUTPUT_COUNTS = frozenset({"openai", "deepseek", "vllm", "vllm-old", "vllm-at-least", "openrouter",
                           "anthropic-max-tokens"})


def _openai_err(message: str, *, type_: str = "invalid_request_error", param: Any = None, code: Any = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _anthropic_err(message: str, request_id: str, type_: str = "invalid_request_error") -> dict:
    return {"type": "error", "error": {"type": type_, "message": message}, "request_id": request_id}


def overflow_body(provider: str, *, prompt: int, output: int, window: int,
                  request_id: str = "req_sim", tool_input: int = 0) -> tuple[int, dict | str]:
    """The ``(status, body)`` a provider answers when a request overflows its context window.

    Parameters
    ----------
    provider : str
        One of :data:`PROVIDERS`.
    prompt, output, window : int
        Input tokens counted, output tokens requested (``max_tokens``), and the context window, all in tokens.
    request_id : str
        Anthropic's ``request_id``.
    tool_input : int
        Tokens of the request's tool definitions, part of ``prompt`` (OpenRouter names them apart:
        ``(81684 of text input, 3748 of tool input, 120000 in the output)``, boldsoftware/shelley#159, read
        2026-12-07); 0 where the request has none.

    Returns
    -------
    (int, dict or str)
        The HTTP status and the body (a dict sent as compact JSON; a str sent as it is).

    Raises
    ------
    InputError
        If ``provider`` is unknown.

    Examples
    --------
    >>> overflow_body("anthropic", prompt=21000, output=0, window=20000, request_id="req_1")
    (400, {'type': 'error', 'error': {'type': 'invalid_request_error', 'message': 'prompt is too long: 21000 tokens > 20000 maximum'}, 'request_id': 'req_1'})
    >>> overflow_body("gemini", prompt=21000, output=0, window=20000)[1]["error"]["status"]
    'INVALID_ARGUMENT'
    """
    total = prompt + output
    if provider == "openai":
        return 400, _openai_err(
            f"This model's maximum context length is {window} tokens. However, you requested {total} tokens "
            f"({prompt} in the messages, {output} in the completion). Please reduce the length of the messages or "
            f"completion.", param="messages", code="context_length_exceeded")
    if provider == "openai-responses":
        return 400, _openai_err("Your input exceeds the context window of this model. Please adjust your input and "
                                "try again.", param="input", code="context_length_exceeded")
    if provider == "anthropic":
        return 400, _anthropic_err(f"prompt is too long: {prompt} tokens > {window} maximum", request_id)
    if provider == "anthropic-max-tokens":
        return 400, _anthropic_err(f"input length and `max_tokens` exceed context limit: {prompt} + {output} > "
                                   f"{window}, decrease input length or `max_tokens` and try again", request_id)
    if provider == "bedrock":
        return 400, {"message": "Input is too long for requested model."}
    if provider == "gemini":
        return 400, {"error": {"code": 400, "message": f"The input token count ({prompt}) exceeds the maximum "
                               f"number of tokens allowed ({window}).", "status": "INVALID_ARGUMENT"}}
    if provider == "vllm":
        return 400, {"error": {"message": (
            f"You passed {prompt} input tokens and requested {output} output tokens. However, the model's context "
            f"length is only {window} tokens, resulting in a maximum input length of {max(0, window - output)} "
            f"tokens. Please reduce the length of the input prompt."), "type": "BadRequestError",
            "param": "input_tokens", "code": 400}}
    if provider == "vllm-old":
        return 400, {"object": "error", "message": (
            f"This model's maximum context length is {window} tokens. However, you requested {total} tokens "
            f"({prompt} in the messages, {output} in the completion). Please reduce the length of the messages or "
            f"completion. None"), "type": "BadRequestError", "param": None, "code": 400}
    if provider == "llamacpp":
        return 400, {"error": {"code": 400, "message": f"request ({prompt} tokens) exceeds the available context "
                               f"size ({window} tokens), try increasing it", "type": "exceed_context_size_error",
                               "n_prompt_tokens": prompt, "n_ctx": window}}
    if provider == "lmstudio":
        return 400, {"error": f"The number of tokens to keep from the initial prompt is greater than the context "
                              f"length (n_keep: {prompt}>= n_ctx: {window}). Try to load the model with a larger "
                              f"context length, or provide a shorter input."}
    if provider == "openrouter":
        parts = f"{prompt - tool_input} of text input, " + (f"{tool_input} of tool input, " if tool_input else "")
        return 400, {"error": {"message": (
            f"This endpoint's maximum context length is {window} tokens. However, you requested about {total} "
            f"tokens ({parts}{output} in the output). Please reduce the length of either one, or "
            f"use the context-compression plugin to compress your prompt automatically."), "code": 400,
            "metadata": {"provider_name": "Simulated"}}}
    if provider == "deepseek":
        return 400, _openai_err(
            f"This model's maximum context length is {window} tokens. However, you requested {total} tokens "
            f"({prompt} in the messages, {output} in the completion). Please reduce the length of the messages or "
            f"completion.", code="invalid_request_error")
    if provider == "mistral":
        return 400, {"object": "error", "message": f"Prompt contains {prompt} tokens, too large for model with "
                     f"{window} maximum context length", "type": "invalid_request_error", "param": None,
                     "code": None}
    if provider == "xai":
        return 400, {"code": "Client specified an invalid argument", "error": f"This model's maximum prompt length "
                     f"is {window} but the request contains {prompt} tokens."}
    return _newer_body(provider, prompt=prompt, output=output, window=window)


def _newer_body(provider: str, *, prompt: int, output: int, window: int) -> tuple[int, dict | str]:
    """The bodies added 2026-12-07, each read that day in its public report (the sources in
    :mod:`snapglyph.providers.overflow_rules`)."""
    if provider == "sglang":                                # QwenLM/Qwen3#1321 (sglang behind LiteLLM#10793)
        return 400, {"object": "error", "message": f"The input ({prompt} tokens) is longer than the model's context "
                     f"length ({window} tokens).", "type": "BadRequestError", "param": None, "code": 400}
    if provider == "vllm-at-least":                         # vllm-project/vllm#42474
        return 400, {"error": {"message": (
            f"This model's maximum context length is {window} tokens. However, you requested {output} output tokens "
            f"and your prompt contains at least {prompt} input tokens, for a total of at least {prompt + output} "
            f"tokens."), "type": "BadRequestError", "param": None, "code": 400}}
    if provider == "ollama-no-user":                        # ollama/ollama#18107: its truncation dropped the user turn
        return 500, {"error": {"message": "no user query found in messages", "type": "api_error", "param": None,
                               "code": None}}
    if provider == "gemini-invalid-argument":               # google-gemini/gemini-cli#16780, #15366 (and #22942)
        return 400, {"error": {"code": 400, "message": "Request contains an invalid argument.",
                               "errors": [{"message": "Request contains an invalid argument.", "domain": "global",
                                           "reason": "badRequest"}], "status": "INVALID_ARGUMENT"}}
    raise InputError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS + AMBIGUOUS)}")


def image_count_body(dialect: str, images: int, limit: int, request_id: str = "req_sim") -> tuple[int, dict]:
    """The 400 a provider answers a request carrying more than ``limit`` images: Anthropic's ``Too much media: 0
    document pages + 103 images > 100`` (anthropics/claude-code#3397), elsewhere a gateway's ``request contains 52
    images, exceeding the maximum of 50 allowed per request`` (anomalyco/opencode#47721); both read 2026-12-07.

    Examples
    --------
    >>> image_count_body("openai", 52, 50)[1]["error"]["message"]
    '[invalid_request_error] request contains 52 images, exceeding the maximum of 50 allowed per request'
    """
    if dialect == "anthropic":
        return 400, _anthropic_err(f"Too much media: 0 document pages + {images} images > {limit}", request_id)
    return 400, _openai_err(f"[invalid_request_error] request contains {images} images, exceeding the maximum of "
                            f"{limit} allowed per request")


def payload_too_large_body(limit: int, *, named: bool = True) -> tuple[int, dict]:
    """The 413 a hosted endpoint (a gateway in front of the model) answers a request body of more than ``limit``
    bytes, before the model sees it: ``413 request body exceeds the configured payload limit
    (type=invalid_request_error param=request_too_large)`` (can1357/oh-my-pi#9235, no size named), with ``named``
    the size added as ``Payload Too Large: ... exceeds 268435456 bytes`` names it (lidge-jun/opencodex#3573); both
    read 2026-12-08. The same body in every dialect: the gateway answers, not the provider.

    Examples
    --------
    >>> payload_too_large_body(40_000)
    (413, {'error': {'message': 'request body exceeds the configured payload limit of 40000 bytes', 'type': 'invalid_request_error', 'param': 'request_too_large'}})
    >>> payload_too_large_body(40_000, named=False)[1]["error"]["message"]
    'request body exceeds the configured payload limit'
    """
    said = f" of {int(limit)} bytes" if named else ""
    return 413, {"error": {"message": f"request body exceeds the configured payload limit{said}",
                           "type": "invalid_request_error", "param": "request_too_large"}}


#: Providers :func:`overflow_body` knows, plus ``"ollama"`` (which truncates silently instead of failing).
PROVIDERS = ("anthropic", "anthropic-max-tokens", "bedrock", "deepseek", "gemini", "llamacpp", "lmstudio",
             "mistral", "ollama", "ollama-no-user", "openai", "openai-responses", "openrouter", "sglang", "vllm",
             "vllm-at-least", "vllm-old", "xai")

#: Bodies :func:`overflow_body` knows that answer other faults too: an overflow only where the request's estimate
#: is at or above the window known (:func:`snapglyph.providers.overflow.detect`'s ``estimate`` and ``window``).
AMBIGUOUS = ("gemini-invalid-argument",)


def _has_image(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in ("image_url", "input_image", "image") for p in content)


def openai_grammar_error(messages: list) -> dict | None:
    """Check OpenAI chat-completions grammar; return OpenAI's error body for the first fault, or ``None``.

    Rules (providers.md part C): a ``tool`` message must answer a preceding assistant ``tool_calls``; every
    ``tool_call_id`` must be answered before the next non-tool message; images only in ``user`` messages.

    Examples
    --------
    >>> openai_grammar_error([{"role": "user", "content": "hi"}]) is None
    True
    >>> openai_grammar_error([{"role": "tool", "tool_call_id": "c1", "content": "x"}])["error"]["param"]
    'messages.[0].role'
    """
    pending: list[str] = []
    answered_block = False
    for i, m in enumerate(messages):
        role = m.get("role")
        if role in ("assistant", "tool") and _has_image(m.get("content")):
            return _openai_err(f"Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', "
                               f"but this message with role '{role}' contains an image URL.",
                               param=f"messages[{i}]", code="invalid_value")
        if role == "tool":
            if not answered_block or m.get("tool_call_id") not in pending:
                return _openai_err("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                                   "message with 'tool_calls'.", param=f"messages.[{i}].role")
            pending.remove(m.get("tool_call_id"))
            continue
        if pending:
            return _openai_err("An assistant message with 'tool_calls' must be followed by tool messages responding "
                               "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                               + ", ".join(pending), param=f"messages.[{i}].role")
        answered_block = role == "assistant" and bool(m.get("tool_calls"))
        pending = [c.get("id") for c in (m.get("tool_calls") or [])] if answered_block else []
    if pending:
        return _openai_err("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                           "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                           + ", ".join(pending), param=f"messages.[{len(messages)}].role")
    return None


def _blocks(content: Any) -> list:
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def anthropic_grammar_error(messages: list, request_id: str = "req_sim") -> dict | None:
    """Check Anthropic messages grammar; return Anthropic's error body for the first fault, or ``None``.

    Rules (providers.md part C): each ``tool_use`` answered by a ``tool_result`` in the next message, tool results
    first in that user content, no ``tool_result`` without a ``tool_use`` in the previous message, no empty text
    blocks, no images in assistant turns.

    Examples
    --------
    >>> anthropic_grammar_error([{"role": "user", "content": "hi"}]) is None
    True
    >>> anthropic_grammar_error([{"role": "user", "content": [{"type": "text", "text": ""}]}])["error"]["message"]
    'messages: text content blocks must be non-empty'
    """
    prev_uses: list[str] = []
    for i, m in enumerate(messages):
        blocks = _blocks(m.get("content"))
        for j, b in enumerate(blocks):
            if b.get("type") == "text" and not b.get("text"):
                return _anthropic_err("messages: text content blocks must be non-empty", request_id)
            if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                for c in b["content"]:
                    if c.get("type") == "text" and not c.get("text"):
                        return _anthropic_err("messages: text content blocks must be non-empty", request_id)
        if m.get("role") == "assistant" and _has_image(blocks):
            return _anthropic_err(f"messages.{i}.content: 'image' blocks are not permitted within assistant turns",
                                  request_id)
        results = [(j, b) for j, b in enumerate(blocks) if b.get("type") == "tool_result"]
        for j, b in results:
            if b.get("tool_use_id") not in prev_uses:
                return _anthropic_err(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{b.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` block "
                    f"in the previous message.", request_id)
        if prev_uses:
            lead = 0
            while lead < len(blocks) and blocks[lead].get("type") == "tool_result":
                lead += 1
            if lead < len(results):
                return _anthropic_err(
                    f"messages.{i}: Did not find {len(prev_uses)} tool_result block(s) at the beginning of this "
                    f"message. Messages following tool_use blocks must begin with a matching number of tool_result "
                    f"blocks.", request_id)
            missing = [u for u in prev_uses if u not in {b.get("tool_use_id") for _, b in results}]
            if missing or m.get("role") != "user":
                return _anthropic_err(
                    f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing or prev_uses)}. Each `tool_use` block must have a corresponding "
                    f"`tool_result` block in the next message.", request_id)
        prev_uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"] if m.get("role") == "assistant" \
            else []
    if prev_uses:
        return _anthropic_err(
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(prev_uses)}. Each `tool_use` block must have a corresponding `tool_result` block in "
            f"the next message.", request_id)
    return None


def bad_request(dialect: str, message: str, request_id: str = "req_sim") -> dict:
    """The body of a plain 400 (a missing field, a body that is no JSON object) in ``dialect``'s error shape:
    OpenAI's ``{"error": {"message", "type", "param", "code"}}`` for ``openai`` and ``responses``, Google's
    ``{"error": {"code", "message", "status"}}`` for ``gemini``, Anthropic's ``{"type": "error", ...}`` otherwise.

    Examples
    --------
    >>> bad_request("gemini", "contents is not specified")
    {'error': {'code': 400, 'message': 'contents is not specified', 'status': 'INVALID_ARGUMENT'}}
    >>> bad_request("openai", "messages: field required")["error"]["type"]
    'invalid_request_error'
    """
    if dialect in ("openai", "responses"):
        return _openai_err(message)
    if dialect == "gemini":
        return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    return _anthropic_err(message, request_id)


def dumps(body: dict | list | str) -> bytes:
    """Serialize a body as the providers do (compact JSON, UTF-8; a str is sent as it is).

    Examples
    --------
    >>> dumps({"a": [1, "b"]}), dumps("as is")
    (b'{"a":[1,"b"]}', b'as is')
    """
    return (body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))).encode("utf-8")
