"""Render text or a document to pages: ``render(text | messages | Document, profile=...) -> list[Page]``.

Pipeline per segment: :func:`snapglyph.raster.text.normalize` -> codepoints -> glyph indices from the :class:`Atlas`
(rasterised on first use) -> the numba kernel :func:`snapglyph.raster._kernels.layout_blit`, which places each glyph and
draws its ink pixels into the current page array until the page is full. With the numba engine, long segments go
through :func:`snapglyph.raster.text.normalize_codes` instead (the same stream codes, tabs and zero-width characters done
in one compiled pass). A symbol with no glyph but a label (:data:`snapglyph.raster.atlas.SYMBOL_LABELS`: ✅ -> ``[ok]``)
then becomes its label's letters (:meth:`snapglyph.raster.atlas.Atlas.expand_labels`; tab stops already counted the
label's cells). Pages stream: :func:`iter_pages` holds one page and one chunk of about 64 K characters.

Layout modes:

``auto`` (default)   content-aware: prose is laid out as in ``dense``; a block of code, diff, listing, table or log
                     output (:mod:`snapglyph.raster.blocks`) keeps one source line per row with its indentation,
                     packed into k side-by-side columns (a band; k chosen per block from its line lengths, columns
                     read top to bottom then left to right, a 1-px grey rule between them); a line longer than its
                     column goes on in the next row after a continuation mark (↪, light grey).
``dense``            text is reflowed: each source newline is one light marker glyph (↵) and the text goes on in the
                     same row; indentation (leading spaces) is kept; rows are filled to the page width.
``lines``            every source line starts a row; long lines wrap at the page width.

In all, a role header (``STYLE_HEADER``) starts a new row and is drawn inverted; tool output (``STYLE_DIM``) is drawn
in dark grey instead of black; a wide character never straddles a row end. Page pixels take four grey values (0, 85,
170, 255), so pages encode as 2-bit PNGs.

Append stability: a page's pixels and breaks depend only on the segments it shows and those before it, so appending
segments changes only the last page (which is trimmed to the rows it uses, rounded up to the profile's patch) and
adds new ones.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator

import numpy as np

from .._config import CHUNK, FAST_MIN, SMALL_DOCUMENT, SPLIT
from .atlas import CELLS, CONT_MARK, MARKER, REPL_NARROW, REPL_WIDE, Atlas, atlas
from ..model.document import STYLE_HEADER, Document
from ..errors import InputError, RenderError
from ..providers.profiles import Profile
from ..providers.profiles import profile as _profile
from .blocks import plan_blocks
from .text import normalize, normalize_codes

__all__ = ["MODES", "Page", "STYLE_LUT", "iter_pages", "render", "render_document", "resolve_cell"]

MODES = ("auto", "dense", "lines")

STYLE_LUT = np.array([
    [255, 170, 85, 0],     # STYLE_TEXT: black ink on white
    [255, 170, 170, 85],   # STYLE_DIM: tool output, dark grey ink
    [0, 85, 170, 255],     # STYLE_HEADER: inverted, white on black
    [255, 170, 85, 0],     # STYLE_CALL: like text
    [255, 170, 170, 170],  # newline marker (dense mode): light grey, set apart from letters
], np.uint8)
"""Pixel value of each (style, atlas level); every value is a multiple of 85 (2-bit PNG)."""

PNG_DEPTH = 2
_CODE_NOP = -3  # = _kernels.CODE_NOP, CODE_BLOCK, CODE_BLOCK_END (not imported: importing the kernels loads numba)
_CODE_BLOCK = -4
_CODE_BLOCK_END = -5
_N_STATE = 16
_KMAX = 8
_WIDE_RE = re.compile("[\u1100-\u115f\u2e80-\u303e\u3041-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f"
                      "\uff00-\uff60\uffe0-\uffe6\U00020000-\U0003fffd]")


@dataclass(frozen=True, eq=False)
class Page:
    """One rendered page.

    Attributes
    ----------
    pixels : numpy.ndarray
        ``(height, width)`` uint8 grey values in {0, 85, 170, 255}; white background.
    index : int
        0-based page number within the render.
    chars : int
        Source characters shown on the page (drawn plus replaced; a newline counts as shown).
    replaced : int
        Source characters with no glyph in the bundled fonts: drawn as the replacement glyph, or as a short ASCII
        label where :data:`snapglyph.raster.atlas.SYMBOL_LABELS` has one (✅ as ``[ok]``).
    zero_width : int
        Source characters of the page's segments that take no cell (combining marks, format characters).
    removed : int
        Source characters removed as escapes or terminal controls.
    first_id, last_id : int or None
        First and last message id shown (None where the page shows no message text).
    fill : float
        Cells used over cells available in the rows the page uses (0..1).
    cell : tuple of int
        ``(cell_w, cell_h)`` in pixels actually used.
    rows : int
        Rows of cells the page uses (``rows * cell_h <= height``).
    note : str
        Why the cell differs from the one asked for, else empty.
    text : str
        The exact text drawn on the page, one line per row in reading order (a block band's columns one after the
        other, top to bottom then left to right), joined by ``\\n``: characters after normalisation, a symbol
        drawn as its label as the label's letters, the replacement glyph as U+FFFD, a newline mark as ↵, a
        continuation row starting with ↪, an empty row as an empty line.
    """

    pixels: np.ndarray
    index: int
    chars: int
    replaced: int
    zero_width: int
    removed: int
    first_id: int | None
    last_id: int | None
    fill: float
    cell: tuple[int, int]
    rows: int = 0
    note: str = ""
    depth: int = field(default=PNG_DEPTH, repr=False)
    text: str = field(default="", repr=False)

    @property
    def width(self) -> int:
        """Page width in pixels."""
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        """Page height in pixels."""
        return int(self.pixels.shape[0])

    @property
    def drawn(self) -> int:
        """Source characters drawn from a font glyph (``chars - replaced``)."""
        return self.chars - self.replaced

    @cached_property
    def png(self) -> bytes:
        """Deterministic PNG bytes of :attr:`pixels` (2-bit grey; computed on first access)."""
        from .encode import png_bytes

        return png_bytes(self.pixels, depth=self.depth)


def resolve_cell(cell, prof: Profile) -> tuple[int, int]:
    """Return the cell ``(cell_w, cell_h)`` in pixels for ``cell`` on ``prof``.

    Parameters
    ----------
    cell : None, str or tuple of int
        None for the profile's default; a name of :data:`snapglyph.raster.atlas.CELLS` (``"5x8"``, ``"6x12"``,
        ``"8x16"``) or ``"WxH"``; or ``(cell_w, cell_h)``.
    prof : Profile

    Returns
    -------
    tuple of int

    Raises
    ------
    InputError
        For a malformed cell or one that does not fit one row and column on the page.
    """
    if cell is None:
        cell = prof.cell
    if isinstance(cell, str):
        if cell in CELLS:
            cell = CELLS[cell]
        else:
            m = re.fullmatch(r"(\d+)x(\d+)", cell.strip())
            if not m:
                raise InputError(f"cell {cell!r} is not WxH (known: {', '.join(CELLS)})")
            cell = (int(m.group(1)), int(m.group(2)))
    try:
        cw, ch = (int(cell[0]), int(cell[1]))
    except (TypeError, ValueError, IndexError):
        raise InputError(f"cell must be (cell_w, cell_h), not {cell!r}") from None
    if not (4 <= cw <= 64 and 4 <= ch <= 64):
        raise InputError(f"cell {cw}x{ch} out of range: width and height must be 4..64 pixels")
    if cw * 2 > prof.page_size[0] or ch > prof.page_size[1]:
        raise InputError(f"cell {cw}x{ch} does not fit the {prof.name} page {prof.page_size}")
    return cw, ch


def split_point(text: str) -> int:
    """Where a segment of more than :data:`SPLIT` characters is cut: after the last newline in the second half of
    its first :data:`SPLIT` characters, else at :data:`SPLIT` characters.

    Parameters
    ----------
    text : str
        More than :data:`SPLIT` characters (only the first :data:`SPLIT` are read).

    Returns
    -------
    int
        Length of the first piece, ``SPLIT // 2 < n <= SPLIT``.

    Examples
    --------
    >>> split_point("a" * 200_000 + "\\n" + "b" * 200_000)
    200001
    """
    cut = text.rfind("\n", SPLIT // 2, SPLIT)
    return SPLIT if cut < 0 else cut + 1


def _segments(document: Document):
    """Yield (text, style, message_id), splitting texts over 1 M characters at a newline where one exists."""
    for seg in document.segments:
        t = seg.text
        if not isinstance(t, str):
            raise InputError(f"segment text must be a str, not {type(t).__name__}")
        while len(t) > SPLIT:
            cut = split_point(t)
            yield t[:cut], seg.style, seg.message_id, True
            t = t[cut:]
        yield t, seg.style, seg.message_id, False


def _insert_blocks(codes: np.ndarray, srcw: np.ndarray, head: int, plan) -> tuple[np.ndarray, np.ndarray]:
    """Insert ``CODE_BLOCK, k, colw`` before the first element of each planned block's first line and
    ``CODE_BLOCK_END`` after its last line's newline (or at the end). ``plan`` holds :func:`plan_blocks` tuples
    over the segment's lines; a plan whose line count differs from the stream's is not applied."""
    nl = np.flatnonzero(codes == -1)
    if len(nl) != plan[-1][-1]:
        return codes, srcw
    at, vals = [], []
    for a, b, k, colw in plan[:-1]:
        first = head if a == 0 else int(nl[a - 1]) + 1
        end = int(nl[b - 1]) + 1 if b - 1 < len(nl) else len(codes)
        at += [first, first, first, end]
        vals += [_CODE_BLOCK, k, colw, _CODE_BLOCK_END]
    codes = np.insert(codes, at, np.array(vals, np.int32))
    srcw = np.insert(srcw, at, np.zeros(len(vals), np.uint8))
    return codes, srcw


def _encode_segment(text: str, style: int, mid: int, at: Atlas, continued: bool, fast: bool = False, cols: int = 0):
    """Normalize one segment; return (codes int32, srcw uint8, zero-width count, removed count).

    ``srcw`` is 1 for an element that stands for a source character, 2 for the first letter of a symbol's label
    (a source character, counted as replaced), 0 for synthetic elements (tab fill, placeholders, label letters).

    ``fast`` uses :func:`snapglyph.raster.text.normalize_codes` (compiled; for segments of at least :data:`FAST_MIN`
    characters), else :func:`snapglyph.raster.text.normalize` in plain Python; both give the same arrays.
    ``cols > 0`` (layout ``auto``, ``cols`` cells per row) marks the segment's blocks (:func:`_insert_blocks`).
    """
    head = 1 if style == STYLE_HEADER and not continued else 0
    if fast and len(text) >= FAST_MIN:
        from ._kernels import CODE_UNSEEN

        codes, srcw, zw, rm, unseen = normalize_codes(text, at.table, head, at.label_len)
        if head:
            codes[0] = -2
        if unseen:
            miss = codes <= CODE_UNSEEN
            cps = CODE_UNSEEN - codes[miss]
            at.ensure(np.unique(cps).tolist())
            codes[miss] = at.table[cps]
    else:
        nt = normalize(text, at.label_cells)
        s = nt.text
        ascii_ = s.isascii()
        cps = np.frombuffer(s.encode("ascii" if ascii_ else "utf-32-le"), np.uint8 if ascii_ else np.uint32)
        body = at.lookup(cps)
        body[cps == 10] = -1
        codes = np.concatenate([np.full(head, -2, np.int32), body]) if head else body
        srcw = np.ones(len(codes), np.uint8)
        srcw[:head] = 0
        for a, b in nt.synthetic:
            srcw[head + a:head + b] = 0
        zw, rm = nt.zero_width, nt.removed
    if not text.isascii():  # symbols with a label instead of a glyph (atlas.SYMBOL_LABELS): their letters
        codes, srcw = at.expand_labels(codes, srcw)
    if cols > 0:
        plan = plan_blocks(text, style, cols)
        if plan:
            lines = text.count("\n") + text.count("\u2028") + text.count("\u2029")
            codes, srcw = _insert_blocks(codes, srcw, head, plan + [(lines,)])
    n = len(codes) - head
    if n == 0 and (zw or rm):
        codes = np.append(codes, np.int32(_CODE_NOP))
        srcw = np.append(srcw, np.uint8(0))
    return codes, srcw, zw, rm


class _Chunk:
    """About ``CHUNK`` stream elements: per element codes, styles and source weights; per segment the rest."""

    def __init__(self, parts: list) -> None:
        if len(parts) == 1:
            self.codes, self.srcw = parts[0][0], parts[0][1]
        else:
            self.codes = np.concatenate([p[0] for p in parts])
            self.srcw = np.concatenate([p[1] for p in parts])
        sizes = [len(p[0]) for p in parts]
        self.starts = np.cumsum([0] + sizes[:-1]).astype(np.int64)
        self.styles = np.repeat(np.array([p[2] for p in parts], np.uint8), sizes)
        self.mids = [p[3] for p in parts]
        self.zw = [p[4] for p in parts]
        self.rm = [p[5] for p in parts]


def _chunks(document: Document, at: Atlas, fast: bool = False, cols: int = 0):
    """Yield :class:`_Chunk` objects of about ``CHUNK`` elements (``fast``, ``cols``: see :func:`_encode_segment`)."""
    parts: list[tuple] = []
    size = 0
    for text, style, mid, continued in _segments(document):
        codes, srcw, zw, rm = _encode_segment(text, style, mid, at, continued, fast, cols)
        if len(codes) == 0:
            continue
        parts.append((codes, srcw, style if 0 <= style <= 3 else 0, mid, zw, rm))
        size += len(codes)
        if size >= CHUNK:
            yield _Chunk(parts)
            parts, size = [], 0
    if parts:
        yield _Chunk(parts)


def _check(document, prof, cell, mode, family) -> tuple[Profile, Atlas, str]:
    if not isinstance(document, Document):
        raise InputError(f"document must be a Document, not {type(document).__name__}")
    if mode not in MODES:
        raise InputError(f"unknown layout mode {mode!r}; known: {', '.join(MODES)}")
    prof = _profile(prof)
    c = resolve_cell(cell, prof)
    at = atlas(c, family)
    note = ""
    if not at.wide_ok and any(_WIDE_RE.search(s.text) for s in document.segments if not s.text.isascii()):
        for name, alt in sorted(CELLS.items(), key=lambda kv: kv[1][1]):
            if alt[1] > c[1]:
                at2 = atlas(alt, family)
                if at2.wide_ok:
                    note = (f"cell {c[0]}x{c[1]} has no legible wide (CJK) glyphs; "
                            f"switched to {alt[0]}x{alt[1]}")
                    at = at2
                    break
    return prof, at, note


def iter_pages(document: Document, *, profile="claude", cell=None, mode: str = "auto", family: str | None = None,
               reuse_buffer: bool = False, engine: str = "auto") -> Iterator[Page]:
    """Lay out and draw ``document`` page by page (streaming: one page and one chunk in memory).

    Parameters
    ----------
    document : Document
    profile : str or Profile
        Reader profile: page size and patch.
    cell : None, str or tuple of int
        See :func:`resolve_cell`.
    mode : str
        ``"auto"`` (default), ``"dense"`` or ``"lines"`` (see the module).
    family : str or None
        ``"outline"`` or ``"bitmap"``; None for the cell's default (:func:`snapglyph.raster.atlas.default_family`).
    reuse_buffer : bool
        If True, every full page shares one pixel buffer, overwritten when the next page is drawn: use each page
        (``.png``, ``.pixels``) before advancing the iterator. Saves allocating a page per page.
    engine : str
        ``"numba"`` (the compiled kernel), ``"python"`` (its plain-Python twin, same pixels) or ``"auto"``: Python
        for documents of at most :data:`SMALL_DOCUMENT` characters while numba is not loaded yet, else numba.

    Yields
    ------
    Page
        Full pages of the profile's size, then the last page trimmed to its rows rounded up to the profile's patch.

    Raises
    ------
    InputError
        For a bad document, mode, cell or profile.
    FontError
        If a bundled font is missing.
    """
    prof, at, note = _check(document, profile, cell, mode, family)
    if engine not in ("auto", "numba", "python"):
        raise InputError(f"unknown engine {engine!r}; known: auto, numba, python")
    if engine == "python" or (engine == "auto" and "snapglyph.raster._kernels" not in sys.modules
                              and _at_most(document, SMALL_DOCUMENT)):
        from ._twin import layout_blit_py as layout_blit  # a short text: skip importing numba (about 0.5 s)

        fast = False
    else:
        from ._kernels import layout_blit

        fast = True

    cw, ch = at.cell_w, at.cell_h
    width, height = prof.page_size
    cols, rows = width // cw, height // ch
    dense = mode != "lines"
    buf = np.full((height, width), 255, np.uint8)
    state = np.zeros(_N_STATE, np.int64)
    line_flag = np.zeros(rows * _KMAX, np.int8)
    cont = int(at.lookup(np.array([CONT_MARK]))[0])
    acc = [0, 0, 0, 0, None, None]  # chars, replaced, zero-width, removed, first id, last id
    shown: list[tuple[np.ndarray, np.ndarray]] = []  # (reading line, glyph index) of the page's drawn elements
    index = 0
    touched = False

    def make(pixels) -> Page:
        used_rows = int(state[3])
        fill = float(state[2]) / (used_rows * cols) if used_rows else 0.0
        return Page(pixels, index, acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], fill, (cw, ch), used_rows, note,
                    text=_page_text(shown, line_flag, at))

    for ck in _chunks(document, at, fast, cols if mode == "auto" else 0):
        i, n = 0, len(ck.codes)
        ink = at.ink_lists(width) if fast else (None, None, None)  # after the chunk's glyphs were added to the atlas
        out_line = np.full(n, -1, np.int32)
        out_col = np.full(n, -1, np.int32)
        while i < n:
            j = layout_blit(ck.codes, ck.styles, i, n, state, buf, at.glyphs, at.width, STYLE_LUT, cw, ch, cols,
                            rows, dense, MARKER, *ink, out_line, out_col, line_flag, cont)
            _account(acc, ck, i, j)
            if j > i:
                drawn = np.flatnonzero(out_line[i:j] >= 0) + i
                g = ck.codes[drawn]
                shown.append((out_line[drawn], np.where(g == -1, np.int32(MARKER), g)))
            touched = True
            if j < n:  # page full
                page = make(buf if reuse_buffer else buf.copy())
                yield page
                if reuse_buffer:
                    buf.fill(255)
                else:
                    buf = np.full((height, width), 255, np.uint8)
                index += 1
                state[:4] = 0
                state[8:] = 0
                line_flag[:] = 0
                shown.clear()
                acc[:] = [0, 0, 0, 0, None, None]
                if j == i:
                    raise RenderError("layout made no progress on an empty page (cell wider than the page?)")
            i = j
    if touched:
        h = _last_page_height(prof, width, height, max(1, int(state[3]) * ch))
        yield make(buf[:h].copy())


def _account(acc: list, ck: _Chunk, a: int, b: int) -> None:
    """Add the elements ``[a, b)`` of chunk ``ck`` to a page's counts ``acc`` (chars, replaced, zero-width,
    removed, first id, last id); modifies ``acc`` in place."""
    if b <= a:
        return
    w = ck.srcw[a:b]
    acc[0] += int(np.count_nonzero(w))
    c = ck.codes[a:b]
    acc[1] += int(np.count_nonzero(((c == REPL_NARROW) | (c == REPL_WIDE)) & (w > 0)) + np.count_nonzero(w == 2))
    # Segments whose first element lies in [a, b) bring their zero-width and removed counts.
    lo, hi = np.searchsorted(ck.starts, [a, b])
    for k in range(lo, hi):
        acc[2] += ck.zw[k]
        acc[3] += ck.rm[k]
    first = max(0, int(np.searchsorted(ck.starts, a, side="right")) - 1)
    last = int(np.searchsorted(ck.starts, b - 1, side="right")) - 1
    for k in range(first, last + 1):
        if ck.mids[k] >= 0:
            if acc[4] is None:
                acc[4] = ck.mids[k]
            acc[5] = ck.mids[k]


def _page_text(shown: list, line_flag: np.ndarray, at: Atlas) -> str:
    """The text a page shows, line by line in reading order (see :attr:`Page.text`)."""
    lines = np.flatnonzero(line_flag)
    if len(lines) == 0:
        return ""
    if shown:
        where = np.concatenate([p[0] for p in shown])
        glyphs = np.concatenate([p[1] for p in shown])
    else:
        where = np.zeros(0, np.int32)
        glyphs = np.zeros(0, np.int32)
    order = np.argsort(where, kind="stable")
    chars = at.glyph_chars()[glyphs[order]].astype(np.uint32)
    body = chars.tobytes().decode("utf-32-le")
    ends = np.cumsum(np.bincount(where, minlength=len(line_flag)))
    mark = chr(CONT_MARK)
    out = []
    for ln in lines.tolist():
        a = int(ends[ln - 1]) if ln else 0
        s = body[a:int(ends[ln])]
        out.append(mark + s if line_flag[ln] == 2 else s)
    return "\n".join(out)


def _at_most(document: Document, n: int) -> bool:
    """Whether ``document`` has at most ``n`` characters (reads segments only until it knows)."""
    total = 0
    for seg in document.segments:
        total += len(seg.text)
        if total > n:
            return False
    return True


def _last_page_height(prof: Profile, width: int, height: int, used: int) -> int:
    """Height in pixels of the last page: its rows rounded up to the patch, unless that shorter image would be
    resized by the provider (Qwen's minimum pixels) or cost more than a full page (Gemini 2's tiles); then the full
    page height."""
    p = prof.patch or 1
    h = min(height, -(-used // p) * p)
    if h < height and (prof.provider_resize(width, h) != (width, h)
                       or prof.image_tokens(width, h) > prof.image_tokens(width, height)):
        return height
    return h


def render_document(document: Document, *, profile="claude", cell=None, mode: str = "auto",
                    family: str | None = None, workers: int | None = None) -> list[Page]:
    """Render ``document`` to a list of pages with their PNGs encoded (see :func:`render` and :func:`iter_pages`)."""
    from .pool import encode_ahead

    pages = iter_pages(document, profile=profile, cell=cell, mode=mode, family=family)
    return list(encode_ahead(pages, workers))


def render(text_or_messages, *, profile="claude", cell=None, mode: str = "auto",
           family: str | None = None, workers: int | None = None) -> list[Page]:
    """Render text, messages or a document to pages.

    Parameters
    ----------
    text_or_messages : str, sequence of Message, or Document
        A ``str`` becomes a one-segment document; messages go through :func:`snapglyph.model.document.build_document`.
    profile, cell, mode, family
        See :func:`iter_pages`.
    workers : int or None
        Threads encoding the PNGs while later pages are drawn (:func:`snapglyph.raster.pool.encode_ahead`):
        None for the number of cores, 1 to encode in the calling thread. The bytes do not depend on it.

    Returns
    -------
    list of Page
        Empty for an empty input; every page's :attr:`Page.png` is already encoded.

    Raises
    ------
    InputError
        For an input of another type, or a bad mode, cell, profile or ``workers``.
    FontError
        If a bundled font is missing.

    Examples
    --------
    >>> pages = render("hello, world", workers=1)
    >>> len(pages), pages[0].width, pages[0].chars, pages[0].png[1:4]
    (1, 1092, 12, b'PNG')
    """
    doc = _as_document(text_or_messages, mode)
    return render_document(doc, profile=profile, cell=cell, mode=mode, family=family, workers=workers)


def _as_document(x, mode: str = "auto") -> Document:
    from ..model.document import document_for
    return document_for(x, mode)
