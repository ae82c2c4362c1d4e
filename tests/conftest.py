"""Shared test fixtures: paths to ../shared (skipped cleanly where it is absent)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SNAPGLYPH_SHARED") or ROOT.parent / "shared")
"""../shared beside the project, or the folder ``SNAPGLYPH_SHARED`` names (for work trees kept elsewhere)."""


def shared_path(*parts: str) -> Path:
    """Return a path under ../shared, skipping the test (with the reason) where it does not exist."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} is absent (../shared is not beside the project)")
    return p


def load_case(name: str):
    """Load one JSON file from ../shared/cases, skipping where ../shared is absent."""
    return json.loads(shared_path("cases", name).read_text(encoding="utf-8"))
