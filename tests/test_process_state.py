"""Determinism across process state: the same compaction gives the same request bytes whatever ran before it.

Module-level state a compaction meets: which kernels it runs on (the ahead-of-time build, or numba's JIT), the
order in which glyphs entered the process-wide atlas, the page cache and the token encodings. Each run is a fresh
interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import shared_path

_PROCESS_RUN = """
import hashlib, json, sys
import snapglyph as s
tr = s.load(sys.argv[1])
if sys.argv[2] == "warm":  # numba's JIT, other glyphs first in the atlas, other compactions before
    s.render("Gr\u00fc\u00dfe \u4f60\u597d \u2192 \u2502 \u2500 \u2705 \U0001F600 \\t tab\\n" * 40, profile="gemini")
    s.compact(tr, profile="openai", budget=8000, allow_empty_middle=True)
for prof in ("gemini", "claude"):  # outline 12x24 and bitmap 6x12 glyphs
    r = s.compact(tr, profile=prof, budget=8000, allow_empty_middle=True)
    print(hashlib.sha256(json.dumps(r.request, sort_keys=True).encode()).hexdigest()[:16], len(r.pages))
from snapglyph.raster import native
print(native.kernels().source)
"""


def test_same_request_in_a_fresh_and_a_warm_process():
    """Determinism across process state: a fresh process draws this small middle with the ahead-of-time build where
    there is one, a warm one with numba's JIT after other renders and compactions (another glyph order in the
    atlas); the request is byte-identical."""
    path = shared_path("data", "openhands-trajectory", "basic_gui_mode.json")
    root = Path(__file__).resolve().parent.parent
    out = [subprocess.run([sys.executable, "-c", _PROCESS_RUN, str(path), state], cwd=root, capture_output=True,
                          env=dict(os.environ, PYTHONPATH=str(root), SNAPGLYPH_KERNELS=kernels), text=True,
                          check=True).stdout.split() for state, kernels in (("fresh", "auto"), ("warm", "jit"))]
    fresh, warm = out
    assert fresh[-1] in ("build", "jit") and warm[-1] == "jit"
    assert fresh[1::2] == ["1", "1"]
    assert fresh[:-1] == warm[:-1]
