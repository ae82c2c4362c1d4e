"""Fingerprints of what snapglyph hands a model, for byte-identity checks across a reshape.

For every transcript under ``../shared/data`` (and ``examples/``), compacts it for each dialect at two budgets and
prints one line per case: the SHA-256 of the request JSON, of the store file and of the concatenated page PNGs.
Run it on the commit before a change and after it; the two outputs must be equal::

    python bench/identity.py > before.txt   # on the old commit
    python bench/identity.py > after.txt && diff before.txt after.txt
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import snapglyph
from snapglyph.errors import SnapglyphError

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for p in (ROOT.parent / "shared" / "data").rglob("*")
                 if p.suffix in (".jsonl", ".json", ".md", ".traj") and p.name not in ("README.md",)
                 and "LICENSE" not in p.name) + sorted((ROOT / "examples").rglob("*.jsonl"))
CASES = [("anthropic", "claude", 60_000), ("openai", "openai", 30_000), ("responses", "openai", 100_000),
         ("gemini", "gemini", 50_000), ("anthropic", "claude", 9_000), ("openai", "openai", 9_000)]


def _h(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()[:16]


def fingerprint(path: Path, dialect: str, profile: str, budget: int) -> str:
    """One line: the hashes of the request, the store and the pages of one compaction (or its error)."""
    with tempfile.TemporaryDirectory() as d:
        store = Path(d) / "s.jsonl"
        try:
            tr = snapglyph.load(path)
            res = snapglyph.compact(tr, profile=profile, dialect=dialect, budget=budget, store=snapglyph.SourceStore(store))
            if res.store is not None:
                res.store.save()
        except SnapglyphError as e:
            return f"error {type(e).__name__}: {str(e)[:120]}"
        req = json.dumps(res.request, sort_keys=True, ensure_ascii=False).encode()
        pages = b"".join(p.png for p in res.pages)
        st = store.read_bytes() if store.exists() else b""
        return f"request {_h(req)} store {_h(st)} pages {len(res.pages)} {_h(pages)}"


def main() -> None:
    for p in SOURCES:
        for dialect, profile, budget in CASES:
            rel = p.relative_to(ROOT.parent) if ROOT.parent in p.parents else p
            print(f"{rel} {dialect} {budget}: {fingerprint(p, dialect, profile, budget)}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
