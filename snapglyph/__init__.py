"""snapglyph: render the old middle of an LLM-agent conversation as dense glyph pages for vision models.

The public surface is re-exported here lazily, so ``import snapglyph`` stays cheap and the render path never
imports an SDK or a tokenizer.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import (BudgetError, CompactionStormError, FontError, FormatError, InputError, InternalError, LimitError,
                     ProviderError, RenderError, ServeError, SnapglyphError, StoreError, UnknownProfileError,
                     ValidationError)

_LAZY = {
    "Budget": "compaction.budget",
    "CompactResult": "compaction.result",
    "CostRow": "report",
    "LadderResult": "compaction.tiers",
    "OverflowResult": "providers.overflow",
    "Page": "raster.render",
    "TierReport": "compaction.tiers",
    "Transcript": "readers.registry",
    "from_request": "readers.registry",
    "load": "readers.registry",
    "load_text": "readers.registry",
    "Document": "model.document",
    "Fault": "providers.validation",
    "SnapshotParts": "compaction.snapshot_message",
    "SourceStore": "compaction.store",
    "compact_ladder": "compaction.tiers",
    "compact": "compaction.compactor",
    "budget_for": "compaction.budget",
    "estimate": "compaction.budget",
    "next_budget": "compaction.budget",
    "output_reserve": "providers.params",
    "recall": "compaction.recall",
    "recall_tool": "compaction.recall",
    "snapshot_parts": "compaction.snapshot_message",
    "text_tokens": "providers.tokens",
    "TokenCount": "providers.tokens",
    "Calibration": "providers.tokens",
    "calibrate": "providers.tokens",
    "count_for_profile": "providers.tokens",
    "profile_for_model": "providers.profiles",
    "cost_report": "report",
    "validate": "providers.validation",
    "Message": "model.messages",
    "Part": "model.messages",
    "Profile": "providers.profiles",
    "build_document": "model.document",
    "profile": "providers.profiles",
    "profile_names": "providers.profiles",
}

__all__ = sorted([
    "BudgetError", "CompactionStormError", "FontError", "FormatError", "InputError", "InternalError", "LimitError", "ProviderError",
    "RenderError",
    "ServeError", "SnapglyphError", "StoreError", "UnknownProfileError", "ValidationError", "render", *_LAZY,
])

__version__ = "0.1.0"


_SUBMODULES = {
    "compaction": "compaction", "dialects": "providers.dialects", "model": "model", "overflow": "providers.overflow",
    "profiles": "providers.profiles", "providers": "providers", "raster": "raster", "readers": "readers",
    "report": "report", "tokens": "providers.tokens",
}
"""Submodules reachable as attributes (``snapglyph.overflow.detect``) without importing them up front."""

# The render path is imported eagerly (it needs no SDK and no tokenizer); everything else on first use.
from .raster.render import render  # noqa: E402


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f".{_SUBMODULES[name]}", __name__)
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'snapglyph' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
