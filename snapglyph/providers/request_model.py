"""The request's ``model``: pages are sized for one reader profile, so the model that reads them should be one
that profile's rules are written for (a model of another profile would resize or bill the pages differently)."""

from __future__ import annotations

import re

from .profiles import Profile

__all__ = ["REQUEST_MODELS", "openai_reasoning_model", "reads_as", "request_model"]

_REASONING = re.compile(r"(?:.*/)?(?:o\d+|gpt-5)(?:[-.:].*)?", re.IGNORECASE)


def openai_reasoning_model(model: str) -> bool:
    """Whether ``model`` is an OpenAI reasoning model (o1, o3, o4-mini, gpt-5, gpt-5.4, ...), which takes
    ``max_completion_tokens`` and refuses ``max_tokens`` in chat completions (platform.openai.com/docs/guides/
    reasoning and the chat completions reference, read 2026-12-01).

    Examples
    --------
    >>> [openai_reasoning_model(m) for m in ("gpt-5.4", "o4-mini", "openai/o3", "gpt-4.1", "gpt-4o", "omni")]
    [True, True, True, False, False, False]
    """
    return isinstance(model, str) and bool(_REASONING.fullmatch(model))


REQUEST_MODELS = {
    "claude": "claude-sonnet-4-5", "claude-hires": "claude-opus-4-7", "openai": "gpt-5.4",
    "openai-original": "gpt-5.5", "openai-tiles": "gpt-4.1", "openai-tiles-5": "gpt-5.1", "openai-tiles-o": "o3",
    "openai-mini": "gpt-5-mini", "gemini": "gemini-3-pro-preview",
    "gemini-2": "gemini-2.5-pro", "qwen2.5-vl": "qwen2.5-vl-72b-instruct", "qwen3-vl": "qwen3-vl-235b-a22b-instruct",
    "pixtral": "pixtral-12b",
}
"""A model each profile's rules are written for, used as the request's ``model`` when the caller names none and
the source's model belongs to another profile (``profile_for_model`` maps each back to its profile)."""


def reads_as(model: str) -> str | None:
    """The profile that reads images for ``model`` (None for a model no profile knows, e.g. a local one).

    Examples
    --------
    >>> reads_as("gpt-4.1"), reads_as("claude-sonnet-4-5"), reads_as("gemini-2.5-pro"), reads_as("llama3:8b")
    ('openai-tiles', 'claude', 'gemini-2', None)
    """
    from .profiles import profile_for_model
    from ..errors import UnknownProfileError
    try:
        return profile_for_model(model).name
    except UnknownProfileError:
        return None


def _compatible(a: str | None, b: str) -> bool:
    return a == b or {a, b} == {"openai", "openai-original"}


def request_model(model: str | None, src_model: str | None, prof: Profile) -> tuple[str, list[str]]:
    """The request's ``model`` and any warning: pages are sized for ``prof``; a model read by another profile's
    rules would resize (blur) them or bill them differently.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> request_model(None, None, profile("claude")), request_model(None, "claude-3-5-haiku", profile("claude"))
    (('claude-sonnet-4-5', []), ('claude-3-5-haiku', []))
    >>> model, notes = request_model(None, "gpt-4.1", profile("claude"))
    >>> print(model, notes[0])  # doctest: +NORMALIZE_WHITESPACE
    claude-sonnet-4-5 the source's model gpt-4.1 reads images by profile openai-tiles; wrote model claude-sonnet-4-5
    for profile claude (choose with --model)
    """
    if model:
        reads = reads_as(model)
        if reads is not None and not _compatible(reads, prof.name):
            return model, [f"model {model} reads images by profile {reads}, not {prof.name}: its pages may be "
                           "resized or billed differently"]
        return model, []
    fallback = REQUEST_MODELS.get(prof.name, prof.name)
    if src_model:
        reads = reads_as(src_model)
        if reads is None or _compatible(reads, prof.name):
            return src_model, []
        return fallback, [f"the source's model {src_model} reads images by profile {reads}; wrote model {fallback} "
                          f"for profile {prof.name} (choose with --model)"]
    return fallback, []
