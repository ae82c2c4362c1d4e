"""Request parameters carried over: a compacted request differs from its input only in its messages.

The source request's settings (``thinking``, ``temperature``, ``tool_choice``, ``response_format``,
``stop_sequences``, ``metadata``, the caller's output limit, ...) are kept where the target dialect defines them
(:data:`snapglyph.providers.grammar.PARAMS`). Written in another dialect, the ones with a known counterpart are
translated (``stop`` <-> ``stop_sequences``, the output limit's name, ``tool_choice``'s shape, ``response_format``
<-> ``text.format``, ``reasoning_effort`` <-> ``reasoning.effort``); the rest are reported as dropped, never sent to
an endpoint that refuses them. Sources (read 2026-12-01): the parameter lists of the Anthropic Messages, OpenAI chat
completions and Responses API references and their SDK request types.
"""

from __future__ import annotations

from typing import Any

from .._config import DEFAULT_MAX_TOKENS
from .grammar import OUTPUT_LIMIT_KEYS, PARAMS
from .request_model import openai_reasoning_model

__all__ = ["OUTPUT_LIMIT_KEYS", "carry_params", "output_limit", "output_limit_key", "output_reserve",
           "reserve_alone_overflows"]

#: Keys the request writer sets itself from the conversation (never carried over).
_WRITTEN = frozenset({"model", "messages", "input", "instructions", "system", "tools", "functions",
                      *OUTPUT_LIMIT_KEYS})
#: Parameters every dialect spells the same way.
_SHARED = frozenset({"temperature", "top_p", "stream", "metadata"})


def output_limit(params: dict) -> int | None:
    """The output-token limit a source request set (under any dialect's name: Gemini's is
    ``generationConfig.maxOutputTokens``, https://ai.google.dev/api/generate-content, read 2026-12-04), or ``None``.

    Examples
    --------
    >>> output_limit({"max_output_tokens": 900}), output_limit({"temperature": 0})
    (900, None)
    >>> output_limit({"generationConfig": {"maxOutputTokens": 512}})
    512
    """
    gen = params.get("generationConfig", params.get("generation_config"))
    nested = gen if isinstance(gen, dict) else {}
    for v in [params.get(k) for k in OUTPUT_LIMIT_KEYS] + [nested.get("maxOutputTokens"),
                                                           nested.get("max_output_tokens")]:
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def output_reserve(max_tokens: int | None, params: dict) -> int:
    """Output tokens a compacted request reserves inside its budget: ``max_tokens`` (the caller's) when given, else
    the source request's own limit (:func:`output_limit` of its ``params``), else
    :data:`~snapglyph._config.DEFAULT_MAX_TOKENS`.

    Examples
    --------
    >>> output_reserve(None, {"max_tokens": 900}), output_reserve(2000, {"max_tokens": 900}), output_reserve(None, {})
    (900, 2000, 4096)
    """
    return max_tokens or output_limit(params) or DEFAULT_MAX_TOKENS


def reserve_alone_overflows(params: dict, window: int | None, *, margin: float = 0.0) -> int | None:
    """The output limit the request set when it alone leaves no room for any prompt in ``window``: at or above the
    window less its ``margin`` share (32,000 output tokens asked of a 32,768 window, BerriAI/litellm#12680 as issue
    35 quotes it, read 2026-12-07); ``None`` otherwise, or where the request set no limit of its own or no window
    is known. No compaction can help such a request: the door relays the provider's answer and names
    ``max_tokens``.

    Examples
    --------
    >>> reserve_alone_overflows({"max_tokens": 32000}, 32768, margin=0.08)
    32000
    >>> reserve_alone_overflows({"max_tokens": 4096}, 32768, margin=0.08) is None, reserve_alone_overflows({}, 100)
    (True, None)
    """
    limit = output_limit(params)
    if limit is None or not window:
        return None
    return limit if limit >= window * (1.0 - margin) else None


def output_limit_key(dialect: str, model: str, source_params: dict | None = None) -> str:
    """The name the output-token limit goes by in ``dialect`` for ``model``.

    OpenAI reasoning models (o-series, gpt-5.x) refuse ``max_tokens`` ("Unsupported parameter: 'max_tokens' is not
    supported with this model. Use 'max_completion_tokens' instead."); a chat source that already used
    ``max_completion_tokens`` keeps it.

    Examples
    --------
    >>> output_limit_key("openai", "gpt-5.4"), output_limit_key("openai", "gpt-4.1")
    ('max_completion_tokens', 'max_tokens')
    >>> output_limit_key("responses", "gpt-4.1"), output_limit_key("anthropic", "claude-sonnet-4-5")
    ('max_output_tokens', 'max_tokens')
    """
    if dialect == "responses":
        return "max_output_tokens"
    if dialect == "openai" and (openai_reasoning_model(model) or "max_completion_tokens" in (source_params or {})):
        return "max_completion_tokens"
    return "max_tokens"


def _tool_choice(v: Any, src: str, dst: str) -> Any:
    """``tool_choice`` in ``dst``'s shape (None when it has no counterpart)."""
    mode, name = None, None
    if src == "anthropic" and isinstance(v, dict):
        mode = {"auto": "auto", "any": "required", "none": "none", "tool": "named"}.get(v.get("type"))
        name = v.get("name")
    elif isinstance(v, str):
        mode = v if v in ("auto", "required", "none") else None
    elif isinstance(v, dict) and v.get("type") == "function":
        mode, name = "named", (v.get("function") or {}).get("name") if src == "openai" else v.get("name")
    if mode is None or (mode == "named" and not isinstance(name, str)):
        return None
    if dst == "anthropic":
        return {"type": {"required": "any", "named": "tool"}.get(mode, mode), **({"name": name} if name else {})}
    if mode != "named":
        return mode
    return {"type": "function", "function": {"name": name}} if dst == "openai" else {"type": "function", "name": name}


def _translate(k: str, v: Any, src: str, dst: str) -> tuple[str, Any] | None:
    """One parameter of ``src`` as ``dst`` spells it, or None when ``dst`` has no counterpart."""
    if k in _SHARED:
        if k == "metadata" and "anthropic" in (src, dst):
            return None  # Anthropic's metadata holds only user_id; OpenAI's is free key-value pairs
        return k, v
    if k == "stop_sequences" and dst == "openai":
        return "stop", v
    if k == "stop" and dst == "anthropic":
        return "stop_sequences", [v] if isinstance(v, str) else v
    if k == "tool_choice":
        tc = _tool_choice(v, src, dst)
        return None if tc is None else ("tool_choice", tc)
    if k == "response_format" and dst == "responses" and isinstance(v, dict):
        fmt = dict(v.get("json_schema") or {}, type=v.get("type")) if v.get("type") == "json_schema" else v
        return "text", {"format": fmt}
    if k == "text" and dst == "openai" and isinstance(v, dict) and isinstance(v.get("format"), dict):
        fmt = dict(v["format"])
        kind = fmt.pop("type", None)
        return "response_format", ({"type": "json_schema", "json_schema": fmt} if kind == "json_schema"
                                   else {"type": kind})
    if k == "reasoning_effort" and dst == "responses":
        return "reasoning", {"effort": v}
    if k == "reasoning" and dst == "openai" and isinstance(v, dict) and v.get("effort"):
        return "reasoning_effort", v["effort"]
    if k in ("parallel_tool_calls", "user", "service_tier", "store", "prompt_cache_key", "safety_identifier",
             "top_logprobs", "stream_options") and dst in ("openai", "responses") and src in ("openai", "responses"):
        return k, v
    return None


def carry_params(params: dict | None, source_dialect: str | None, dialect: str) -> tuple[dict, list[str]]:
    """The source request's parameters as the target dialect takes them, and the names of those dropped.

    Parameters
    ----------
    params : dict or None
        The source request's top-level keys other than its content (a reader's ``meta["params"]``).
    source_dialect : str or None
        The source request's dialect (``anthropic``, ``openai``, ``responses``); None for a transcript that is no
        request (its parameters, if any, are taken as the target dialect's).
    dialect : str
        The dialect of the request being written.

    Returns
    -------
    params : dict
        Parameters to add to the request, in source order (the model, messages, tools, system prompt and output
        limit are written apart and never among them).
    dropped : list of str
        Names of source parameters the target dialect has no place for.

    Examples
    --------
    >>> carry_params({"temperature": 0.2, "stop_sequences": ["END"], "thinking": {"type": "disabled"}},
    ...              "anthropic", "openai")
    ({'temperature': 0.2, 'stop': ['END']}, ['thinking'])
    >>> carry_params({"tool_choice": {"type": "any"}, "max_tokens": 99}, "anthropic", "anthropic")
    ({'tool_choice': {'type': 'any'}}, [])
    """
    out: dict = {}
    dropped: list[str] = []
    src = source_dialect or dialect
    if dialect not in PARAMS or src not in PARAMS:  # gemini bodies: written whole by providers.gemini
        return out, dropped
    for k, v in (params or {}).items():
        if k in _WRITTEN:
            continue
        t = ((k, v) if k in PARAMS[dialect] else None) if src == dialect else _translate(k, v, src, dialect)
        if t is None:
            dropped.append(k)
        else:
            out[t[0]] = t[1]
    return out, dropped
