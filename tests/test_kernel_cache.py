"""numba's disk cache keys compiled kernels on the source of ``_kernels.py`` only; the kernels bake in the
constants of ``_codes.py``. ``_kernels.CODES_DIGEST`` ties the two: editing ``_codes.py`` without updating the
digest (which edits ``_kernels.py`` and so invalidates every cached kernel) fails here instead of leaving stale
kernels in warm caches."""

import hashlib
from pathlib import Path

from snapglyph.raster import _codes, _kernels


def test_kernels_name_the_codes_they_were_compiled_with():
    digest = hashlib.sha256(Path(_codes.__file__).read_bytes()).hexdigest()[:16]
    assert _kernels.CODES_DIGEST == digest, (
        f"raster/_codes.py changed: set CODES_DIGEST = {digest!r} in raster/_kernels.py so that numba recompiles "
        "the kernels instead of loading ones built with the old constants")
