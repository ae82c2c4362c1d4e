"""Compile (or load from numba's on-disk cache) every kernel once, and make the ahead-of-time build of the render
path's kernels (:mod:`snapglyph.raster.native`): ``python -m snapglyph.raster.warm``.

CI runs it with ``NUMBA_CACHE_DIR`` set to a writable folder before the tests, so parallel test workers load the
cached machine code instead of racing to compile it. It prints nothing on success. Where the package folder is
read-only and ``NUMBA_CACHE_DIR`` is unset, numba falls back to a per-user cache directory (or compiles in memory
on every start, about 1 s, if none is writable); rendering works either way.
"""

from __future__ import annotations

import numpy as np

__all__ = ["warm"]


def warm() -> None:
    """Run each numba kernel once on tiny inputs so that it is compiled and cached.

    Raises
    ------
    RenderError
        If a kernel returns a wrong result on the tiny input.

    Examples
    --------
    >>> warm()   # compiles or loads each kernel; silent on success, a RenderError on a wrong result
    """
    from ..errors import RenderError
    from ._codes import INDENT_TAB_STOP, N_STATE, TAB_STOP, expand_tabs
    from ._kernels import count_span, layout_blit
    from ._pack_kernels import pack_rows
    from ._text_kernels import TEXT_CONTROL, TEXT_LINE_SEPARATOR, expand_codes, text_flags

    glyphs = np.zeros((4, 2, 4), np.uint8)
    glyphs[1] = 3
    gwidth = np.ones(4, np.uint8)
    lut = np.array([[255, 170, 85, 0]] * 5, np.uint8)
    page = np.full((4, 8), 255, np.uint8)
    state = np.zeros(N_STATE, np.int64)
    codes = np.array([1, -1, 1, -2, -4, 1, 3, 1, -1, 1, 1, 1, -5], np.int32)  # a block of 1 column, 3 cells
    styles = np.zeros(len(codes), np.uint8)
    out_line = np.full(len(codes), -1, np.int32)
    out_col = np.full(len(codes), -1, np.int32)
    line_flag = np.zeros(16, np.int8)
    ink_start = np.array([0, 0, 4, 4, 4], np.int32)
    ink_off = np.array([0, 1, 8, 9], np.int32)  # glyph 1: its 2x2 cell on a page 8 pixels wide
    ink_lvl = np.full(4, 3, np.uint8)
    for dense in (True, False):
        state[:] = 0
        layout_blit(codes, styles, 0, len(codes), state, page, glyphs, gwidth, lut, 2, 2, 4, 2, dense, 1, ink_start,
                    ink_off, ink_lvl, out_line, out_col, line_flag, 2)
    cells = np.ones(0x110000, np.int8)
    table = np.arange(0x110000, dtype=np.int32)
    out = np.empty(32, np.int32)
    srcw = np.empty(32, np.uint8)
    stop, _, _ = expand_codes(np.frombuffer("\ta\t\n".encode("utf-32-le"), np.uint32),  # read-only, as in render
                              np.zeros((0, 2), np.int64), cells, table, out, srcw, 0, TAB_STOP, INDENT_TAB_STOP,
                              np.zeros(1, np.uint8))  # the signature the renderer calls (with label lengths)
    want = len(expand_tabs("\ta\t")) + 1
    if stop != want or out[want - 1] != -1:
        raise RenderError("kernel warm-up expanded a tab wrongly")
    if text_flags(np.frombuffer("a\x1b\u2028".encode("utf-32-le"), np.uint32)) != TEXT_CONTROL | TEXT_LINE_SEPARATOR:
        raise RenderError("kernel warm-up flagged a text wrongly")
    out = np.empty(4 * (1 + 2), np.uint8)
    for depth in (1, 2, 4, 8):
        out = np.empty(4 * (1 + (8 * depth + 7) // 8), np.uint8)
        pack_rows(page, 4, depth, out)
    if count_span(codes, np.array([1, 0, 2] + [1] * 10, np.uint8), 0, len(codes), 3, 7) != (12, 2):
        raise RenderError("kernel warm-up counted a span wrongly")
    if page[0, 0] != 0:
        raise RenderError("kernel warm-up drew a wrong pixel")
    from .flow import flow_stream
    fc, fw = flow_stream(np.array([0, 0, 1, -1, 0, 0, 0, 0, 1], np.int32), np.ones(9, np.uint8), 3, gwidth)
    if fc.tolist() != [-2, -3, -3, 1, -1, -2, -3, -3, 0, -3, 1] or fw.tolist() != [0] + [1] * 4 + [0] + [1] * 5:
        raise RenderError("kernel warm-up laid out a flow block wrongly")
    from .blocks import plan_blocks
    if plan_blocks("Run it:\n$ make\n\tok\n  done;\nThat is all.", 0, 100) != [(1, 4, 0, 100)]:  # both line kernels, flow
        raise RenderError("kernel warm-up planned a wrong block")


def main() -> int:
    """``python -m snapglyph.raster.warm``: :func:`warm`, then the ahead-of-time build (about 10-30 s the first
    time). One line says what it did: on standard output the build it made or found (and where numba caches the
    JIT's code); where the build cannot be made, one line on standard error says why and the JIT kernels are used.
    Exit 0."""
    import os
    import sys
    import time
    import warnings

    from ..errors import RenderError
    from . import native
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # the JIT is what is being warmed: its "no build" advice is this command
        warnings.simplefilter("ignore", RuntimeWarning)
        warm()
    had = native._built(native.build_dir()) is not None
    try:
        path = native.build()
    except RenderError as e:
        print(f"snapglyph: note: {e}", file=sys.stderr)
        return 0
    cache = os.environ.get("NUMBA_CACHE_DIR") or "numba's default cache"
    did = "found" if had else "made"
    print(f"snapglyph: kernels ready in {time.perf_counter() - t0:.1f} s: the ahead-of-time build {did} at {path}, "
          f"the JIT's code cached in {cache}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
