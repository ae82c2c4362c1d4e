"""Recognizing a provider's "context too long" answer, and Ollama's silent truncation.

:func:`detect` reads one HTTP error answer (status and body) and says whether the provider refused the request
because the prompt does not fit the model's context window. It never mistakes a rate limit (HTTP 429, OpenAI's
``Request too large for gpt-4 ... on tokens per min``, Bedrock's ``ThrottlingException: Too many tokens``) or a
request-bytes limit (HTTP 413 ``request_too_large``) for an overflow: those need waiting or fewer bytes, not
compaction.

Only the error part of a body is read (``error`` objects, SSE ``error`` events, ``response.failed`` events,
OpenRouter's ``metadata.raw``), so a successful answer whose text happens to mention "prompt is too long" is not
an overflow.

Sources (all read 2026-11-30): ``../shared/reference/providers.md`` part B, which cites each body's public issue;
badlogic/pi-mono ``packages/ai/src/utils/overflow.ts`` (maintained pattern list, and the rate-limit exclusion);
vLLM ``vllm/renderers/params.py`` and the ``'max_tokens' ... is too large`` body quoted in public issues; llama.cpp
``tools/server`` (``exceed_context_size_error`` with ``n_prompt_tokens`` and ``n_ctx``). The wordings, one rule each,
are in :mod:`snapglyph.providers.overflow_rules`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import InputError
from .overflow_rules import AMBIGUOUS as _AMBIGUOUS, IMAGE_COUNT as _IMAGE_COUNT, RATE_LIMIT as _RATE_LIMIT
from .overflow_rules import REQUEST_BYTES as _REQUEST_BYTES, RULES as _RULES

__all__ = ["ImageLimit", "OverflowResult", "check_silent_truncation", "detect", "image_limit"]


@dataclass(frozen=True)
class OverflowResult:
    """A recognized context overflow.

    Attributes
    ----------
    provider : str
        Best guess of who answered: ``"openai"`` (also Azure OpenAI, whose bodies are the same), ``"anthropic"``,
        ``"bedrock"``, ``"gemini"``, ``"vllm"``, ``"llamacpp"``, ``"lmstudio"``, ``"openrouter"``, ``"deepseek"``,
        ``"mistral"``, ``"xai"``, ``"ollama"``, ``"openai-compatible"`` (the classic OpenAI wording from a server
        that does not say which it is), or a smaller provider's name (``"github-copilot"``, ``"minimax"``,
        ``"kimi"``).
    prompt_tokens : int or None
        Input tokens the provider counted, where the body separates them from the requested output (OpenAI's
        ``4130 tokens (3130 in the messages, 1000 in the completion)`` gives 3130); ``None`` where it does not say.
    limit : int or None
        The context window in tokens the body names; ``None`` where it does not say.
    message : str
        The provider's error message, as sent.
    status : int or None
        The HTTP status given to :func:`detect`.
    note : str
        Why an ambiguous wording was read as an overflow (Gemini's ``Request contains an invalid argument.``: the
        request's estimate against the window known), for the log line; empty otherwise.

    Examples
    --------
    >>> r = detect(400, {"error": {"message": "This model's maximum context length is 128000 tokens. However, "
    ...                                       "your messages resulted in 130512 tokens."}})
    >>> r.provider, r.limit, r.prompt_tokens
    ('openai-compatible', 128000, 130512)
    """

    provider: str
    prompt_tokens: int | None
    limit: int | None
    message: str
    status: int | None = None
    note: str = field(default="", repr=False)


@dataclass(frozen=True)
class ImageLimit:
    """An answer refusing a request for the number of images it carries: a limit the retried request must meet,
    the client's own images counted.

    Attributes
    ----------
    images : int or None
        Images (and documents, where the body adds them) the provider counted; ``None`` where it does not say.
    limit : int
        Images one request may carry.
    message : str
        The provider's error message, as sent.

    Examples
    --------
    >>> image_limit(400, {"type": "error", "error": {"type": "invalid_request_error",
    ...                   "message": "Too much media: 0 document pages + 103 images > 100"}})
    ImageLimit(images=103, limit=100, message='Too much media: 0 document pages + 103 images > 100')
    """

    images: int | None
    limit: int
    message: str


def image_limit(status: int | None, body: Any) -> ImageLimit | None:
    """Recognize an image-count refusal (``request contains 52 images, exceeding the maximum of 50 allowed per
    request``; Anthropic's ``Too much media: ...``); the wordings and their sources are in
    :data:`snapglyph.providers.overflow_rules.IMAGE_COUNT` (read 2026-12-07).

    Parameters
    ----------
    status : int or None
        The HTTP status (``None`` inside a stream).
    body : str, bytes, dict, list or None
        The answer as received or parsed.

    Returns
    -------
    ImageLimit or None
        ``None`` for any other answer (a 429 among them) or a limit below 0.

    Examples
    --------
    >>> image_limit(400, '{"error": {"message": "[invalid_request_error] request contains 52 images, exceeding the '
    ...                  'maximum of 50 allowed per request"}}').limit
    50
    >>> image_limit(400, {"error": {"message": "prompt is too long"}}) is None
    True
    """
    if status == 429:
        return None
    got = _parse(body)
    err = _error_text(got[0], got[1], status) if got is not None else None
    if err is None:
        return None
    for pattern, extract in _IMAGE_COUNT:
        m = pattern.search(err[1])
        if m is not None:
            images, limit = extract(m)
            if limit is not None and limit >= 0:
                return ImageLimit(images, limit, err[2])
    return None


def _loads(text: str) -> Any:
    """Parsed JSON, or None for text that is not JSON or nests too deeply to parse (read as plain text then)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _sse_events(text: str) -> list[Any]:
    events = []
    for line in text.splitlines():
        if line.startswith("data:"):
            ev = _loads(line[5:].strip())
            if ev is not None:
                events.append(ev)
    return events


def _error_parts(obj: Any, depth: int = 0) -> list[Any]:
    """The error-bearing parts of a parsed body: error objects and error strings, never success content."""
    if depth > 6:
        return []
    if isinstance(obj, list):
        return [p for item in obj for p in _error_parts(item, depth + 1)]
    if not isinstance(obj, dict):
        return []
    parts: list[Any] = []
    err = obj.get("error")
    if err is not None:
        parts.append(err)
        if isinstance(err, dict):
            raw = (err.get("metadata") or {}).get("raw") if isinstance(err.get("metadata"), dict) else None
            if isinstance(raw, str):
                inner = _loads(raw)
                parts.extend(_error_parts(inner, depth + 1) if inner is not None else [raw])
    resp = obj.get("response")
    if isinstance(resp, dict) and resp.get("error"):
        parts.append(resp["error"])                         # OpenAI Responses: response.failed
    typ = obj.get("type")
    if err is None and (typ == "error" or obj.get("object") == "error"):
        parts.append(obj)                                   # Responses SSE error event; vLLM's flat error
    if not parts and isinstance(obj.get("message"), str) and not any(
            k in obj for k in ("choices", "content", "output", "candidates")):
        parts.append(obj)                                   # Bedrock: {"message": "..."} with __type
    return parts


def _strings(obj: Any, out: list[str], depth: int = 0) -> None:
    if depth > 8:
        return
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("type", "code", "__type", "status", "object") and isinstance(v, (str, int)):
                out.append(f"{k}={v}")
            else:
                _strings(v, out, depth + 1)
    elif isinstance(obj, list):
        for v in obj:
            _strings(v, out, depth + 1)


def _find_int(obj: Any, key: str, depth: int = 0) -> int | None:
    if depth > 8:
        return None
    if isinstance(obj, dict):
        v = obj.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        for v in obj.values():
            r = _find_int(v, key, depth + 1)
            if r is not None:
                return r
    elif isinstance(obj, list):
        for v in obj:
            r = _find_int(v, key, depth + 1)
            if r is not None:
                return r
    return None


def _message(part: Any, depth: int = 0) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and depth <= 8:
        for key in ("message", "Message", "detail"):
            if isinstance(part.get(key), str):
                return part[key]
        if isinstance(part.get("error"), (str, dict)):
            return _message(part["error"], depth + 1)
    try:
        return json.dumps(part, ensure_ascii=False)[:500]
    except (RecursionError, ValueError, TypeError):  # nested too deeply (or not JSON): its type is all we say
        return f"<{type(part).__name__} nested too deeply to show>"


def _refine(provider: str, text: str) -> str:
    if provider == "anthropic" and re.search(r"the model returned the following errors|ValidationException", text,
                                             re.I):
        return "bedrock"
    if provider == "openai-compatible":
        if re.search(r"code\W+context_length_exceeded", text, re.I):
            return "openai"
        if re.search(r"type\W+BadRequestError|object\W+error\b", text, re.I):
            return "vllm"
        if re.search(r"code\W+invalid_request_error", text, re.I):
            return "deepseek"                               # DeepSeek sends no context_length_exceeded code
    if "exceed_context_size_error" in text:
        return "llamacpp"                                   # llama.cpp: match on the type, whatever the wording
    return provider


def detect(status: int | None, body: Any, *, estimate: "int | Callable[[], int] | None" = None,
           window: int | None = None) -> OverflowResult | None:
    """Recognize a context-overflow error from a provider's HTTP answer.

    Parameters
    ----------
    status : int or None
        The HTTP status code; ``None`` when unknown (e.g. an error event inside a 200 SSE stream).
    body : str, bytes, dict, list or None
        The response body as received (JSON text, SSE text, an SDK's error string) or already parsed JSON.
    estimate : int or callable, optional
        The request's estimate in the provider's tokens (or a function computing it, called only when needed), and
    window : int, optional
        the window known for the model: an ambiguous wording (:data:`~snapglyph.providers.overflow_rules.AMBIGUOUS`,
        Gemini's ``Request contains an invalid argument.``) is an overflow only where ``estimate >= window``; without
        both it is not one. ``note`` says which numbers decided.

    Returns
    -------
    OverflowResult or None
        The overflow, with the provider's reported prompt size and context limit where the body states them;
        ``None`` when the answer is not a context overflow: any HTTP 429, any rate-limit or quota text, a
        request-bytes limit (413 ``request_too_large``), an empty body, or an unrelated error.

    Notes
    -----
    Matching follows ``../shared/reference/providers.md`` part B and badlogic/pi-mono
    ``packages/ai/src/utils/overflow.ts`` (both read 2026-11-30). Azure OpenAI sends OpenAI's bodies, so it is
    reported as ``"openai"``. An Anthropic success with ``stop_reason: "model_context_window_exceeded"`` (Claude
    4.5+, which accepts input + ``max_tokens`` over the window and stops when it is full) is also reported, with
    ``prompt_tokens`` from its ``usage.input_tokens``. A body-less 400/413 (which Cerebras and once Mistral sent for
    an overflow, per pi-mono) is not reported: nothing in it tells an overflow from another error.

    Examples
    --------
    >>> detect(400, {"type": "error", "error": {"type": "invalid_request_error",
    ...                                         "message": "prompt is too long: 210000 tokens > 200000 maximum"}})
    OverflowResult(provider='anthropic', prompt_tokens=210000, limit=200000, message='prompt is too long: 210000 tokens > 200000 maximum', status=400)
    >>> detect(429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}) is None
    True
    >>> bad = {"error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}}
    >>> detect(400, bad) is None, detect(400, bad, estimate=60000, window=65536) is None
    (True, True)
    >>> detect(400, bad, estimate=70000, window=65536).note
    'Request contains an invalid argument. read as an overflow: the estimate 70000 >= the window 65536'
    """
    if status == 429:
        return None
    got = _parse(body)
    if got is None:
        return None
    parsed, raw_text = got
    if isinstance(parsed, dict) and parsed.get("stop_reason") == "model_context_window_exceeded":
        usage = parsed.get("usage") if isinstance(parsed.get("usage"), dict) else {}
        return OverflowResult("anthropic", usage.get("input_tokens"), None,
                              "stop_reason: model_context_window_exceeded", status)
    err = _error_text(parsed, raw_text, status)
    if err is None:
        return None
    parts, text, message = err
    if _RATE_LIMIT.search(text) or _REQUEST_BYTES.search(text) or (status == 413 and not text.strip()):
        return None
    for provider, pattern, extract in _RULES:
        m = pattern.search(text)
        if m is None:
            continue
        prompt, limit = extract(m)
        if provider == "llamacpp" or "exceed_context_size_error" in text:
            prompt = _find_int(parts, "n_prompt_tokens") or prompt
            limit = _find_int(parts, "n_ctx") or limit
        return OverflowResult(_refine(provider, text), prompt, limit, message, status)
    return _ambiguous(text, message, status, estimate, window)


def _ambiguous(text: str, message: str, status: int | None, estimate: Any, window: int | None) -> OverflowResult | None:
    """An ambiguous wording read as an overflow where the request's estimate is at or above the window known."""
    for provider, pattern, _ in _AMBIGUOUS:
        m = pattern.search(text)
        if m is None or estimate is None or not window:
            continue
        est = estimate() if callable(estimate) else estimate
        if est is not None and est >= window:
            return OverflowResult(provider, None, None, message, status,
                                  note=f"{m[0]}. read as an overflow: the estimate {est} >= the window {window}")
    return None


def _parse(body: Any) -> tuple[Any, str] | None:
    """``(parsed, raw_text)`` of a body: JSON (or server-sent events) parsed where it parses, the text of a str or
    bytes body; ``None`` for an empty body or one that is neither."""
    if isinstance(body, (bytes, bytearray)):
        body = bytes(body).decode("utf-8", errors="replace")
    if not isinstance(body, str):
        return (body, "") if body is not None else None
    stripped = body.strip()
    if not stripped:
        return None
    parsed = _loads(stripped)
    if parsed is None and "data:" in body:
        parsed = _sse_events(body) or None
    return parsed, body


def _error_text(parsed: Any, raw_text: str, status: int | None) -> tuple[list, str, str] | None:
    """The error parts of a body, their strings joined into one text, and the first error's message; ``None`` when
    the body holds no error."""
    if parsed is None:
        if status is not None and status < 400:
            return None                                     # plain text success
        return [], raw_text, raw_text.strip()[:2000]
    parts = _error_parts(parsed)
    if not parts:
        return None
    pieces: list[str] = []
    _strings(parts, pieces)
    if isinstance(parsed, dict) and isinstance(parsed.get("__type"), str):
        pieces.append(parsed["__type"])
    return parts, "\n".join(pieces), _message(parts[0])


def check_silent_truncation(sent_tokens: int, reported_prompt_tokens: int | None, *,
                            context_window: int | None = None, ratio: float = 0.75, min_gap: int = 64,
                            since: tuple[int, int] | None = None) -> OverflowResult | None:
    """Detect a provider that answered 200 but silently dropped part of the prompt (Ollama).

    Ollama truncates a prompt longer than ``num_ctx`` from the front, logs ``truncating input prompt``, and
    reports a ``prompt_eval_count`` (``usage.prompt_tokens`` on ``/v1``) smaller than what was sent
    (ollama/ollama#7987, #3839; ``../shared/reference/providers.md`` part B, read 2026-11-30).

    Parameters
    ----------
    sent_tokens : int
        The client's estimate, in tokens, of the prompt it sent.
    reported_prompt_tokens : int or None
        The prompt tokens the provider reported; ``None`` (not reported) never flags.
    context_window : int, optional
        The window in tokens the server is believed to run with (e.g. Ollama's ``num_ctx``). When given, a prompt
        estimated above it whose reported count is at or below it is flagged.
    ratio : float
        Flag when ``reported < ratio * sent``: the slack absorbs estimation error (0 < ratio <= 1).
    min_gap : int
        Never flag when ``sent - reported`` is below this many tokens (small prompts estimate poorly).
    since : (int, int), optional
        ``(sent_tokens, reported_prompt_tokens)`` of the last reply judged whole, when this prompt only extends
        that one. Flag when the estimate grew by ``added >= min_gap`` tokens since, but the reported count by
        ``min_gap`` and half of ``added`` less: Ollama's count stays pinned at its window while the prompt grows.

    Returns
    -------
    OverflowResult or None
        ``provider="ollama"``, ``prompt_tokens=sent_tokens``, ``limit=context_window`` (or the reported count when
        no window is given), or ``None`` when nothing suggests truncation.

    Raises
    ------
    InputError
        If ``sent_tokens`` is negative or ``ratio`` is not in (0, 1] (a ``ValueError`` too).

    Examples
    --------
    >>> check_silent_truncation(150000, 60000, context_window=128000).limit
    128000
    >>> check_silent_truncation(1000, 990) is None
    True
    >>> check_silent_truncation(4500, 4000, since=(3800, 3790)).limit     # 700 tokens added, the count grew 210
    4000
    """
    if sent_tokens < 0:
        raise InputError(f"sent_tokens must be >= 0, got {sent_tokens}")
    if not 0 < ratio <= 1:
        raise InputError(f"ratio must be in (0, 1], got {ratio}")
    if reported_prompt_tokens is None:
        return None
    added, grew = (sent_tokens - since[0], reported_prompt_tokens - since[1]) if since else (0, 0)
    pinned = added >= min_gap and added - grew >= max(min_gap, 0.5 * added)
    if not pinned and sent_tokens - reported_prompt_tokens < min_gap:
        return None
    flagged = pinned or reported_prompt_tokens < ratio * sent_tokens
    if context_window is not None and sent_tokens > context_window >= reported_prompt_tokens:
        flagged = True
    if not flagged:
        return None
    msg = (f"prompt silently truncated: about {sent_tokens} tokens sent, {reported_prompt_tokens} reported "
           f"as evaluated" + (f" (it grew by {grew} while about {added} were added)" if pinned else ""))
    return OverflowResult("ollama", sent_tokens, context_window if context_window is not None
                          else reported_prompt_tokens, msg, 200)
