"""snapglyph: render the old middle of an LLM-agent conversation as dense glyph pages for vision models.

The public surface is re-exported here lazily, so ``import snapglyph`` stays cheap and the render path never
imports an SDK or a tokenizer.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import (BudgetError, FontError, FormatError, InputError, LimitError, ProviderError, RenderError,
                     SnapglyphError, StoreError, UnknownProfileError, ValidationError)

_LAZY = {
    "CompactResult": "compactor",
    "Document": "document",
    "Fault": "validation",
    "SnapshotParts": "snapshot",
    "SourceStore": "store",
    "compact_ladder": "tiers",
    "compact": "compactor",
    "recall": "recalling",
    "recall_tool": "recalling",
    "snapshot_parts": "snapshot",
    "text_tokens": "tokens",
    "TokenCount": "tokens",
    "Calibration": "tokens",
    "calibrate": "tokens",
    "count_for_profile": "tokens",
    "profile_for_model": "profiles",
    "cost_report": "cost",
    "validate": "validation",
    "Message": "messages",
    "Part": "messages",
    "Profile": "profiles",
    "build_document": "document",
    "profile": "profiles",
    "profile_names": "profiles",
}

__all__ = sorted([
    "BudgetError", "FontError", "FormatError", "InputError", "LimitError", "ProviderError", "RenderError",
    "SnapglyphError", "StoreError", "UnknownProfileError", "ValidationError", "render", *_LAZY,
])

__version__ = "0.1.0"


_SUBMODULES = ("overflow", "transcripts", "profiles", "tokens", "dialects", "compactor", "store", "tiers")

# ``render`` is both a submodule and the public function: importing it here binds the name to the function once,
# and the import system never rebinds it (the submodule stays reachable as ``sys.modules["snapglyph.render"]``).
from .render import render  # noqa: E402


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'snapglyph' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
