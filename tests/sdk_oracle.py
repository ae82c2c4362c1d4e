"""A second oracle for request bodies: the official SDKs' own request types, checked with pydantic.

``snapglyph.validate`` is our grammar; these are Anthropic's and OpenAI's (``anthropic.types.message_create_params.
MessageCreateParamsNonStreaming``, ``openai.types.chat.completion_create_params.CompletionCreateParamsNonStreaming``,
``openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming``). Their ``Iterable`` fields are
validated lazily by pydantic, so every iterator is drained to reach every content part.
"""

from __future__ import annotations

from functools import lru_cache
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


def sdk_errors(body: dict, dialect: str) -> str:
    """The SDK request type's validation errors for ``body`` ("" when it accepts it)."""
    pytest.importorskip("pydantic")
    pytest.importorskip("anthropic" if dialect == "anthropic" else "openai")
    from pydantic import ValidationError

    try:
        _drain(_adapter(dialect).validate_python(body))
    except ValidationError as e:
        return str(e)
    return ""
