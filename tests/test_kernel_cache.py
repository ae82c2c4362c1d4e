"""numba's disk cache keys a compiled kernel on the source of its own module only; the kernels bake in the
constants of other modules (``_codes.py`` for the layout and text kernels, ``_line_rule.py`` for the line kernels). A
digest of that module in the kernel module ties the two: editing the constants' module without updating the digest
(which edits the kernel module and so invalidates its cached kernels) fails here instead of leaving stale kernels in
warm caches. (The ahead-of-time build hashes all of them: :func:`snapglyph.raster.native.build_key`.)"""

import hashlib
from pathlib import Path

import pytest

from snapglyph.raster import _codes, _kernels, _line_kernels, _line_rule, _text_kernels


@pytest.mark.parametrize("kernels, name, constants", [(_kernels, "CODES_DIGEST", _codes),
                                                       (_text_kernels, "CODES_DIGEST", _codes),
                                                       (_line_kernels, "RULE_DIGEST", _line_rule)])
def test_kernels_name_the_constants_they_were_compiled_with(kernels, name, constants):
    path = Path(constants.__file__)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    assert getattr(kernels, name) == digest, (
        f"raster/{path.name} changed: set {name} = {digest!r} in raster/{Path(kernels.__file__).name} so that numba "
        "recompiles the kernels instead of loading ones built with the old constants")
