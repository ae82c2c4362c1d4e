"""A second oracle for request bodies: the official SDKs' own request types, checked with pydantic.

``snapglyph.validate`` is our grammar; these are Anthropic's and OpenAI's (``anthropic.types.message_create_params.
MessageCreateParamsNonStreaming``, ``openai.types.chat.completion_create_params.CompletionCreateParamsNonStreaming``,
``openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming``). Their ``Iterable`` fields are
validated lazily by pydantic, so every iterator is drained to reach every content part.

Gemini's SDK (google-genai) has no type for a whole ``generateContent`` body, so each of its fields is checked with
the SDK's type for it (``types.Content``, ``types.Tool``, ``types.ToolConfig``, ``types.GenerationConfig``; pydantic
models that forbid unknown keys and decode ``inline_data`` as base64), and a key outside the REST body's is an error.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

import pytest


@lru_cache(maxsize=None)
def _adapter(dialect: str):
    from pydantic import TypeAdapter

    if dialect == "anthropic":
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming as T
    elif dialect == "openai":
        from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming as T
    else:
        from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming as T
    return TypeAdapter(T)


def _drain(v: Any) -> None:

    if isinstance(v, dict):
        for x in v.values():
            _drain(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _drain(x)
    elif type(v).__name__ == "ValidatorIterator":
        for x in v:
            _drain(x)
    elif hasattr(v, "model_dump"):
        _drain(v.model_dump())


@cache
def _gemini_fields() -> dict:
    from google.genai import types
    from pydantic import TypeAdapter

    content = TypeAdapter(types.Content)
    return {"contents": TypeAdapter(list[types.Content]), "systemInstruction": content,
            "system_instruction": content, "tools": TypeAdapter(list[types.Tool]),
            "toolConfig": TypeAdapter(types.ToolConfig), "tool_config": TypeAdapter(types.ToolConfig),
            "generationConfig": TypeAdapter(types.GenerationConfig),
            "generation_config": TypeAdapter(types.GenerationConfig),
            "safetySettings": TypeAdapter(list[types.SafetySetting]), "cachedContent": TypeAdapter(str),
            "labels": TypeAdapter(dict[str, str])}


def _gemini_errors(body: dict) -> str:
    from pydantic import ValidationError

    fields = _gemini_fields()
    out = [f"{k}: not a field of a generateContent body" for k in body if k not in fields]
    for k, v in body.items():
        if k in fields:
            try:
                fields[k].validate_python(v)
            except ValidationError as e:
                out.append(f"{k}: {e}")
    return "\n".join(out)


def sdk_errors(body: dict, dialect: str) -> str:
    """The SDK request type's validation errors for ``body`` ("" when it accepts it)."""
    pytest.importorskip("pydantic")
    if dialect == "gemini":
        pytest.importorskip("google.genai")
        return _gemini_errors(body)
    pytest.importorskip("anthropic" if dialect == "anthropic" else "openai")
    from pydantic import ValidationError

    try:
        _drain(_adapter(dialect).validate_python(body))
    except ValidationError as e:
        return str(e)
    return ""
