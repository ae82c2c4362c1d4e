"""Deflate libraries over the packed 2-bit rows of real pages (the choice in snapglyph.raster.encode).

``pytest bench/test_bench_deflate.py``: 20 dense claude pages (1092x1092) of the bench text, packed as the PNG
writer packs them, deflated by each library that is installed (ISA-L ``isal``, plain and as the writer calls it,
the standard ``zlib``, and where present libdeflate's ``deflate`` and ``zlib_ng``). Every library writes a valid zlib stream, so the PNG stays exact:
the test checks that each output inflates back to the same rows. RESULTS.md, section "Deflate library choice",
holds the figures the choice was made on.
"""

from __future__ import annotations

import importlib
import zlib

import numpy as np
import pytest


@pytest.fixture(scope="module")
def rows(corpus) -> list[bytes]:
    from snapglyph.model.document import Document
    from snapglyph.raster import _pack_kernels
    from snapglyph.raster.render import iter_pages

    out = []
    for page in iter_pages(Document.from_text(corpus), mode="dense", reuse_buffer=True):
        h, w = page.pixels.shape
        raw = np.empty(h * ((w * 2 + 7) // 8 + 1), np.uint8)
        _pack_kernels.pack_rows(page.pixels, h, 2, raw)
        out.append(raw.tobytes())
        if len(out) == 20:
            break
    return out


def _compressors() -> dict:
    found = {"zlib 1": lambda b: zlib.compress(b, 1), "zlib 6": lambda b: zlib.compress(b, 6)}
    try:
        from isal import isal_zlib
        from snapglyph.raster.encode import _isal_zlib

        found["isal 1"] = lambda b: isal_zlib.compress(b, 1)
        found["isal 1, as the writer calls it"] = lambda b: b"".join(_isal_zlib(memoryview(b)))  # stored first byte
    except ImportError:
        pass
    for name, mod, call in (("libdeflate 1", "deflate", lambda m, b: m.zlib_compress(b, 1)),
                            ("zlib-ng 1", "zlib_ng.zlib_ng", lambda m, b: m.compress(b, 1))):
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        found[name] = lambda b, m=m, call=call: call(m, b)
    return found


@pytest.mark.parametrize("name", sorted(_compressors()))
def test_deflate(benchmark, rows, name):
    fn = _compressors()[name]
    outs = benchmark.pedantic(lambda: [fn(r) for r in rows], rounds=5, iterations=1)
    assert [zlib.decompress(o) for o in outs] == rows  # a valid zlib stream of the same rows: the PNG stays exact
    benchmark.extra_info["kb_per_page"] = sum(map(len, outs)) / len(outs) / 1024
