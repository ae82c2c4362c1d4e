"""Numba kernels of the text's normalization (:func:`snapglyph.raster.text.normalize_codes`): a segment's code
points in, stream codes out.

Compiled through the one :data:`snapglyph.raster._kernels.jit`, like the layout kernels; kept apart because they are
a stage of their own (code points in, not stream codes). :func:`text_flags` says whether a segment needs the
normalization's Python steps at all (controls, lone surrogates, line separators); :func:`expand_codes` does the
rest in one pass.
"""

from __future__ import annotations

import numpy as np

from ._codes import CODE_NEWLINE, CODE_UNSEEN
from ._kernels import jit

CODES_DIGEST = "aa256c3283a28a05"  # SHA-256 of _codes.py, whose constants the kernels bake in (as _kernels)

__all__ = ["TEXT_CONTROL", "TEXT_LINE_SEPARATOR", "TEXT_SURROGATE", "expand_codes", "text_flags"]

TEXT_CONTROL, TEXT_SURROGATE, TEXT_LINE_SEPARATOR = 1, 2, 4
"""Bits of :func:`text_flags`: a control (what the pattern ``_CONTROL`` of :mod:`snapglyph.raster.text` matches: C0
but tab and newline, DEL, C1), a lone surrogate
(:data:`snapglyph.model.messages.LONE_SURROGATE`), a line or paragraph separator (U+2028, U+2029)."""


@jit
def text_flags(cps):
    """The :data:`TEXT_CONTROL`, :data:`TEXT_SURROGATE` and :data:`TEXT_LINE_SEPARATOR` bits of the characters in
    ``cps`` (uint32 array (n,), code points; surrogates as they are): 0 for a text that steps 1-3 of the
    normalization leave as it is. One pass where the two patterns' searches took 8.5 ns a character (measured
    2026-12-03 on the bench text: 2.6 ns with the encoding); tests hold the bits equal to the patterns."""
    f = 0
    for k in range(cps.shape[0]):
        c = cps[k]
        if c < 0x20:
            if c != 9 and c != 10:
                f |= TEXT_CONTROL
        elif c < 0x7F:
            continue
        elif c <= 0x9F:
            f |= TEXT_CONTROL
        elif 0xD800 <= c <= 0xDFFF:
            f |= TEXT_SURROGATE
        elif c == 0x2028 or c == 0x2029:
            f |= TEXT_LINE_SEPARATOR
    return f


@jit
def _write_tab(out_codes, out_srcw, o, fill, space, syn):
    """Write a tab at ``o`` as ``fill`` spaces (code ``space``); the first keeps the tab's source weight."""
    for j in range(fill):
        out_codes[o + j] = space
        out_srcw[o + j] = 0
    out_srcw[o] = 1 - syn


@jit
def _zwj_target(cps, i):
    """For a ZWJ at ``cps[i]``: the index of the pictograph it joins (after any U+FE0F or skin-tone modifiers), or
    -1 if none follows."""
    n = cps.shape[0]
    j = i + 1
    while j < n and (cps[j] == 0xFE0F or 0x1F3FB <= cps[j] <= 0x1F3FF):
        j += 1
    if j < n and (0x2600 <= cps[j] <= 0x27BF or 0x1F000 <= cps[j] <= 0x1FAFF):
        return j
    return -1


@jit
def _zero_width(cps, i, w, syn, drop):
    """Whether ``cps[i]`` (``>= U+0300``, ``w`` cells) is dropped as zero-width, and the index of the pictograph a
    ZWJ drops next (``drop``, -1 if none): the one a ZWJ joined, or a zero-width character outside ``spans``."""
    if i == drop:
        return True, drop
    if w == 0 and syn == 0:
        if cps[i] == 0x200D:
            j = _zwj_target(cps, i)
            if j >= 0:
                drop = j
        return True, drop
    return False, drop


@jit
def _glyph_cells(g, w, label_len):
    """The cells glyph ``g`` takes for tab stops: its label's length where it has one, else ``w``."""
    if label_len is not None and g < label_len.shape[0] and label_len[g] > 0:
        return label_len[g]
    return w


@jit
def expand_codes(cps, spans, cells, table, out_codes, out_srcw, start, tab_stop, indent_stop, label_len=None):
    """Drop zero-width characters, expand tabs and map code points to stream codes, in one pass.

    The array twin of steps 5 and 6 of :func:`snapglyph.raster.text.normalize` followed by the glyph lookup: a code
    point ``>= U+0300`` with ``cells[cp] == 0`` is dropped (and counted), as is a pictograph (U+2600-U+27BF,
    U+1F000-U+1FAFF) joined to the previous one by a ZWJ (U+200D) and any U+FE0F or skin-tone modifiers
    (U+1F3FB-U+1F3FF) between them; a tab becomes spaces up to the next multiple of ``indent_stop`` cells in the
    line's indentation, else of ``tab_stop`` cells, from the line start (a wide character counts ``cells[cp]`` = 2
    cells, a glyph with a label counts ``label_len[g]``); a newline becomes ``CODE_NEWLINE``.

    Parameters
    ----------
    cps : uint32 array (n,)
        Code points after steps 1-4 of the normalization (no lone surrogate; no control but tab and newline).
    spans : int64 array (k, 2)
        Sorted, disjoint ``[a, b)`` index ranges of ``cps`` that stand for no source character.
    cells : int8 array (0x110000,)
        Cells of each code point ``>= U+0300``: 0 (zero-width), 1, 2, or -1 (not known yet).
    table : int32 array (0x110000,)
        Glyph index of each code point, negative where not known yet.
    out_codes : int32 array (>= start + n + (max(tab_stop, indent_stop) - 1) * tabs,)
        Stream codes, written from ``start``: a glyph index, ``CODE_NEWLINE``, or ``CODE_UNSEEN - cp`` where
        ``table[cp] < 0`` (the caller looks those up). Modified in place.
    out_srcw : uint8 array (same length)
        Source weight of each written element: 1, or 0 for synthetic elements (tab fill after the first space,
        ``spans``). Modified in place.
    start : int
        First index of ``out_codes`` to write.
    tab_stop, indent_stop : int
        Tab stops in cells (:func:`snapglyph.raster._codes.tab_fill`); arguments, so numba's cache keeps no old value.
    label_len : uint8 array or None
        Label length of each glyph index (0: no label; :attr:`snapglyph.raster.atlas.Atlas.label_len`): the cells such a
        glyph takes for tab stops (the renderer draws it as its label). Indices past its end count 0.

    Returns
    -------
    stop : int
        One past the last element written; or ``-1 - i`` if ``cells[cps[i]]`` is not known (nothing is valid
        then: fill ``cells`` and call again).
    zero_width : int
        Code points dropped as zero-width.
    unseen : int
        Elements written as ``CODE_UNSEEN - cp``.
    """
    n, k = cps.shape[0], spans.shape[0]
    p, o, col, zw, unseen, drop, stop = 0, start, 0, 0, 0, -1, indent_stop
    space = table[32] if table[32] >= 0 else CODE_UNSEEN - 32
    for i in range(n):
        cp = cps[i]
        while p < k and spans[p, 1] <= i:  # syn: 1 inside a span of synthetic elements
            p += 1
        syn = 1 if p < k and spans[p, 0] <= i else 0
        if cp == 10:
            out_codes[o] = CODE_NEWLINE
            out_srcw[o] = 1 - syn
            o += 1
            col, stop = 0, indent_stop  # a line starts in its indentation
            continue
        if cp == 9:
            fill = stop - col % stop  # the rule of _codes.tab_fill
            _write_tab(out_codes, out_srcw, o, fill, space, syn)
            if space < 0:
                unseen += fill
            o += fill
            col += fill
            continue
        w = 1
        if cp >= 0x300:
            w = cells[cp]
            if w < 0:
                return -1 - i, zw, unseen
            gone, drop = _zero_width(cps, i, w, syn, drop)
            if gone:
                zw += 1
                continue
        g = table[cp]
        if g < 0:
            g = CODE_UNSEEN - np.int64(cp)
            unseen += 1
        else:
            w = _glyph_cells(g, w, label_len)
        out_codes[o] = g
        out_srcw[o] = 1 - syn
        o += 1
        col += w
        stop = stop if cp == 32 else tab_stop  # past the indentation
    return o, zw, unseen
