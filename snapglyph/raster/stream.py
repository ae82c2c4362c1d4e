"""Document -> stream codes, in chunks: the input of the layout kernel (:mod:`snapglyph.raster._codes`).

Per segment: cut at :data:`snapglyph._config.SPLIT` characters (:func:`split_point`), normalized
(:func:`snapglyph.raster.text.normalize` in plain Python, or :func:`snapglyph.raster.text.normalize_codes`
compiled, the renderer's: measured 2026-12-02 on the aider
history's 11,610 segments, once the kernels are loaded it is as fast or faster at every length, 8.8 against 10.2 us
up to 16 characters, 121 against 148 us past 4096), mapped to glyph indices of the
:class:`~snapglyph.raster.atlas.Atlas`, a symbol with a label drawn as its label's letters, and (layout ``auto``) its
blocks marked (:func:`insert_blocks`). :func:`chunks` groups segments into :class:`Chunk` objects of about
:data:`snapglyph._config.CHUNK` elements, so the renderer holds one chunk at a time.

A module of its own because it is a stage of the pipeline with its own inputs and outputs (text in, arrays out):
:mod:`snapglyph.raster.render` only pages what it yields.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator

import numpy as np

from .._config import CHUNK, SPLIT
from ..errors import InputError
from ..model.document import STYLE_HEADER, Document
from . import flow
from ._codes import CODE_BLOCK, CODE_BLOCK_END, CODE_NEWLINE, CODE_NOP, CODE_ROW_START, CODE_UNSEEN
from .atlas import Atlas
from .blocks import plan_with_newlines
from .flow import flow_stream
from .page_label import label_glyphs
from .text import normalize, normalize_codes

__all__ = ["Chunk", "ahead", "chunks", "encode_segment", "insert_blocks", "segments", "split_point"]


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
    >>> n = SPLIT * 3 // 4  # a newline in the second half: cut after it; none: cut at SPLIT
    >>> split_point("a" * n + "\\n" + "b" * SPLIT) == n + 1, split_point("a" * 2 * SPLIT) == SPLIT
    (True, True)
    """
    cut = text.rfind("\n", SPLIT // 2, SPLIT)
    return SPLIT if cut < 0 else cut + 1


def segments(document: Document) -> Iterator[tuple[str, int, int, bool]]:
    """Yield ``(text, style, message_id, continued)`` per piece of each segment of ``document``: a text of more
    than :data:`SPLIT` characters is cut at :func:`split_point`; ``continued`` is True for every piece but the last.

    Raises
    ------
    InputError
        For a segment whose text is not a ``str``.

    Examples
    --------
    >>> list(segments(Document.from_text("hi")))
    [('hi', 0, -1, False)]
    """
    for seg in document.segments:
        t = seg.text
        if not isinstance(t, str):
            raise InputError(f"segment text must be a str, not {type(t).__name__}")
        while len(t) > SPLIT:
            cut = split_point(t)
            yield t[:cut], seg.style, seg.message_id, True
            t = t[cut:]
        yield t, seg.style, seg.message_id, False


def insert_blocks(codes: np.ndarray, srcw: np.ndarray, head: int, plan: list, gwidth: np.ndarray | None = None,
                  gutter: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mark a segment's planned blocks in its stream.

    Inserts ``CODE_BLOCK, k, colw`` before the first element of each block's first line and ``CODE_BLOCK_END``
    after its last line's newline (or at the end), each with source weight 0. A block planned as flow (``k == 0``,
    ``colw`` the row's cells) stays prose, its rows placed by :func:`snapglyph.raster.flow.flow_stream`.

    Parameters
    ----------
    codes, srcw : int32 and uint8 arrays (n,)
        The segment's stream codes and source weights (not modified).
    head : int
        Elements before the text (1 for a header's ``CODE_ROW_START``, else 0).
    plan : list of tuple
        :func:`snapglyph.raster.blocks.plan_blocks` tuples ``(first_line, end_line, k, colw)``, then ``(lines,)``:
        the segment's line count. A plan whose line count differs from the stream's newlines is not applied.
    gwidth : uint8 array or None
        Cells of each glyph index (:attr:`snapglyph.raster.atlas.Atlas.width`); needed for a flow block only.
    gutter : tuple or None
        ``(digits, arrow)`` or ``(digits, arrow, light)``: the glyph indices of ``0``-``9`` (int32 array) and of
        U+2192, and their light variants, where a flow block's lines may carry a tool's line-number gutter
        (:func:`snapglyph.raster.flow.flow_stream`); None: none.

    Returns
    -------
    tuple of numpy.ndarray
        The new ``codes`` and ``srcw`` (the same arrays where the plan does not apply).

    Examples
    --------
    >>> codes, srcw = np.array([5, -1, 6, -1, 7], np.int32), np.ones(5, np.uint8)
    >>> insert_blocks(codes, srcw, 0, [(0, 2, 2, 10), (2,)])[0].tolist()
    [-4, 2, 10, 5, -1, 6, -1, -5, 7]
    """
    nl = np.flatnonzero(codes == CODE_NEWLINE)
    if len(nl) != plan[-1][-1]:
        return codes, srcw
    pc, pw, pos = [], [], 0  # the stream's stretches with the marks between them (a copy each: one concatenation)
    for a, b, k, colw in plan[:-1]:
        first = head if a == 0 else int(nl[a - 1]) + 1
        end = int(nl[b - 1]) + 1 if b - 1 < len(nl) else len(codes)
        if k == 0:  # flow: row starts where a line would not fit whole, the common indentation a no-op
            fc, fw = flow_stream(codes[first:end], srcw[first:end], colw, gwidth, gutter)
            pc += (codes[pos:first], fc)
            pw += (srcw[pos:first], fw)
        else:
            pc += (codes[pos:first], np.array([CODE_BLOCK, k, colw], np.int32), codes[first:end], _BLOCK_END)
            pw += (srcw[pos:first], _ZEROS3, srcw[first:end], _ZEROS3[:1])  # the marks weigh 0
        pos = end
    pc.append(codes[pos:])
    pw.append(srcw[pos:])
    return np.concatenate(pc), np.concatenate(pw)


_BLOCK_END = np.array([CODE_BLOCK_END], np.int32)
_ZEROS3 = np.zeros(3, np.uint8)


def _gutter(text: str, at: Atlas) -> tuple | None:
    """The glyph indices of a line-number gutter's digits and arrow, then (where
    :data:`snapglyph.raster.flow.GUTTER_LIGHT`) their light variants (:meth:`snapglyph.raster.atlas.Atlas.light`),
    where ``text`` holds the arrow, drawn as a glyph of its own (not
    as a symbol's label); else None."""
    if "\u2192" not in text or "\u2192" in at.label_cells:
        return None
    digits = at.table[np.arange(0x30, 0x3A)]
    digits, arrow = digits[digits >= 0], int(at.table[0x2192])  # a digit the text lacks has no glyph index yet
    return (digits, arrow, at.light(np.append(digits, arrow))) if flow.GUTTER_LIGHT else (digits, arrow)


def _fast_codes(text: str, head: int, at: Atlas, cps: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Stream codes of ``text`` (code points ``cps``) by the compiled pass; unseen code points are added to the
    atlas."""
    codes, srcw, zw, rm, unseen = normalize_codes(text, at.table, head, at.label_len, cps)
    if head:
        codes[0] = CODE_ROW_START
    if unseen:
        miss = codes <= CODE_UNSEEN
        cps = CODE_UNSEEN - codes[miss]
        at.ensure(np.unique(cps).tolist())
        codes[miss] = at.table[cps]
    return codes, srcw, zw, rm


def _python_codes(text: str, head: int, at: Atlas) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Stream codes of ``text`` by :func:`snapglyph.raster.text.normalize` in plain Python."""
    nt = normalize(text, at.label_cells)
    s = nt.text
    ascii_ = s.isascii()
    cps = np.frombuffer(s.encode("ascii" if ascii_ else "utf-32-le"), np.uint8 if ascii_ else np.uint32)
    body = at.lookup(cps)
    body[cps == 10] = CODE_NEWLINE
    codes = np.concatenate([np.full(head, CODE_ROW_START, np.int32), body]) if head else body
    srcw = np.ones(len(codes), np.uint8)
    srcw[:head] = 0
    for a, b in nt.synthetic:
        srcw[head + a:head + b] = 0
    return codes, srcw, nt.zero_width, nt.removed


def encode_segment(text: str, style: int, at: Atlas, continued: bool, fast: bool = False,
                   cols: int = 0, encoded: dict | None = None) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Normalize one segment and map it to stream codes.

    Parameters
    ----------
    text : str
    style : int
        The segment's style; a header (``STYLE_HEADER``) that is not a continued piece starts with
        ``CODE_ROW_START``.
    at : Atlas
        Glyphs are added to it where needed (modified in place).
    continued : bool
        True for a piece that continues the previous one (see :func:`segments`).
    fast : bool
        Use the compiled :func:`snapglyph.raster.text.normalize_codes` (the numba engine) instead of
        :func:`snapglyph.raster.text.normalize` (both paths give the same arrays).
    cols : int
        Cells per row to mark the segment's blocks for layout ``auto`` (:func:`insert_blocks`); 0 for none.
    encoded : dict or None
        A memo of this function's results by ``(text, style, continued, fast, cols, atlas)``, shared by the renders
        of documents that share segments (compaction lays out its largest middle, then draws a smaller one, whose
        segments are the first of the largest's: normalization and block planning then run once a segment). A
        segment not in the memo is encoded and put in; one found is taken out (each is wanted once more, and the
        memo's memory goes back as the second render takes its pages' memory). None to encode every time. The
        arrays are the same either way, and never modified.

    Returns
    -------
    codes : int32 array
        Stream codes; a lone ``CODE_NOP`` for a segment that shows nothing but had characters removed.
    srcw : uint8 array
        1 for an element that stands for a source character, 2 for the first letter of a symbol's label (a source
        character, counted as replaced), 0 for synthetic elements (tab fill, placeholders, label letters, blocks).
    zero_width, removed : int
        Source characters dropped as zero-width, and removed as escapes or controls.

    Examples
    --------
    >>> from snapglyph.raster.atlas import atlas
    >>> codes, srcw, zw, rm = encode_segment("a\\tb", 0, atlas((6, 12)), False)
    >>> len(codes), srcw.tolist(), zw, rm
    (9, [1, 1, 0, 0, 0, 0, 0, 0, 1], 0, 0)
    """
    key = (text, style, continued, fast, cols, id(at))
    if encoded is None:
        return _encode(text, style, at, continued, fast, cols)
    hit = encoded.pop(key, None)  # taken out when used: the memo shrinks as the second render goes on
    if hit is None:
        hit = encoded[key] = _encode(text, style, at, continued, fast, cols)
    return hit


def _encode(text: str, style: int, at: Atlas, continued: bool, fast: bool,
            cols: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """:func:`encode_segment` without its memo."""
    head = 1 if style == STYLE_HEADER and not continued else 0
    cps = None
    if fast:  # the source's code points, read by the normalization and the block planner alike
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
        codes, srcw, zw, rm = _fast_codes(text, head, at, cps)
    else:
        codes, srcw, zw, rm = _python_codes(text, head, at)
    if not text.isascii():  # symbols with a label instead of a glyph (atlas.SYMBOL_LABELS): their letters
        codes, srcw = at.expand_labels(codes, srcw)
    if cols > 0:
        plan, newlines = plan_with_newlines(text, style, cols, cps)
        if plan:
            gutter = _gutter(text, at)  # first: its light glyphs may grow the atlas' width array
            codes, srcw = insert_blocks(codes, srcw, head, plan + [(newlines,)], at.width, gutter)
    if len(codes) == head and (zw or rm):
        codes = np.append(codes, np.int32(CODE_NOP))
        srcw = np.append(srcw, np.uint8(0))
    return codes, srcw, zw, rm


class Chunk:
    """About :data:`CHUNK` stream elements of consecutive segments.

    Attributes
    ----------
    codes, srcw, styles : int32, uint8 and uint8 arrays (n,)
        Per element: stream code, source weight (:func:`encode_segment`) and style.
    starts : int64 array (segments,)
        Index of each segment's first element.
    mids, zw, rm : list of int
        Per segment: message id, zero-width and removed counts.
    pieces : list of int
        Per segment: its index among the pieces :func:`segments` yields for the document.
    first : int
        Index of the piece :func:`chunks` started this chunk at (``chunks(..., first=first)`` gives this chunk
        again, then the same ones after it: how a layout is taken up again at a page, :mod:`snapglyph.raster.lazy`).
    heads : list of str or None
        Per segment: the header text of the message it belongs to (the last header piece before it with its message
        id, itself for a header), None where it has none: what a page that opens inside the message is labeled by
        (:func:`snapglyph.raster.page_label.cont_label`).
    header : list of bool
        Per segment: whether it is a message's header (``STYLE_HEADER``, not a continued piece).

    Examples
    --------
    >>> ck = Chunk([(np.array([7, 8], np.int32), np.ones(2, np.uint8), 0, 3, 0, 1)])
    >>> ck.styles.tolist(), ck.starts.tolist(), ck.mids, ck.rm, ck.pieces, ck.first
    ([0, 0], [0], [3], [1], [0], 0)
    """

    def __init__(self, parts: list, first: int = 0, pieces: list[int] | None = None,
                 heads: list | None = None, header: list | None = None) -> None:
        """``parts``: one ``(codes, srcw, style, message_id, zero_width, removed)`` tuple per segment; ``first``,
        ``pieces`` (default: the parts' positions from ``first`` on), ``heads`` and ``header`` (default: none and
        False): see the class."""
        self.first = first
        self.heads = heads if heads is not None else [None] * len(parts)
        self.header = header if header is not None else [False] * len(parts)
        self.pieces = pieces if pieces is not None else list(range(first, first + len(parts)))
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


def chunks(document: Document, at: Atlas, fast: bool = False, cols: int = 0,
           encoded: dict | None = None, first: int = 0) -> Iterator[Chunk]:
    """Yield the stream of ``document`` as :class:`Chunk` objects of about :data:`CHUNK` elements.

    Segments that give no element are skipped; a style outside 0-3 is drawn as 0 (``fast``, ``cols``, ``encoded``:
    see :func:`encode_segment`). A chunk ends after the piece that brings it to :data:`CHUNK` elements, so where
    the chunks start depends only on the pieces before: ``first``, a chunk's :attr:`Chunk.first`, starts at that
    chunk (the pieces before it are not encoded) and yields it and the later chunks as a whole run would.

    Examples
    --------
    >>> from snapglyph.raster.atlas import atlas
    >>> [(len(ck.codes), ck.mids) for ck in chunks(Document.from_text("hello"), atlas((6, 12)))]
    [(5, [-1])]
    """
    parts: list[tuple] = []
    pieces: list[int] = []
    heads: list = []
    header: list[bool] = []
    size, start = 0, first
    head, head_mid = None, None  # the last header piece and its message id (the pieces before first read too)
    for k, (text, style, mid, continued) in enumerate(segments(document)):
        is_header = style == STYLE_HEADER and not continued
        if is_header:
            head, head_mid = text, mid
            label_glyphs(at, [text])  # the glyphs of the label a page opening inside the message takes
        if k < first:
            continue
        codes, srcw, zw, rm = encode_segment(text, style, at, continued, fast, cols, encoded)
        if len(codes) == 0:
            continue
        parts.append((codes, srcw, style if 0 <= style <= 3 else 0, mid, zw, rm))
        pieces.append(k)
        heads.append(head if head_mid == mid else None)
        header.append(is_header)
        size += len(codes)
        if size >= CHUNK:
            yield Chunk(parts, start, pieces, heads, header)
            parts, pieces, heads, header, size, start = [], [], [], [], 0, k + 1
    if parts:
        yield Chunk(parts, start, pieces, heads, header)


_DONE = object()


def ahead(items: Iterable, depth: int = 2) -> Iterator:
    """Yield the items of ``items``, computed on a thread of their own up to ``depth`` items ahead of the consumer.

    The renderer runs :func:`chunks` this way for a long document: normalization and block planning (Python,
    holding the GIL) then go on while the layout kernel (which releases it) draws the previous chunk. Items come in
    order; an exception raised by ``items`` is raised here, at the item where it happened. Closing the generator
    early stops the thread at its next item.

    Parameters
    ----------
    items : iterable
        Consumed on the thread only.
    depth : int
        Items computed but not yet taken (>= 1).

    Examples
    --------
    >>> list(ahead(iter(range(5)), depth=1))
    [0, 1, 2, 3, 4]
    """
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(x) -> bool:
        while not stop.is_set():
            try:
                q.put(x, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for x in items:
                if not put((x, None)):
                    return
        except BaseException as e:  # raised in the consumer, at this point of the sequence
            put((_DONE, e))
            return
        put((_DONE, None))

    t = threading.Thread(target=run, name="snapglyph-stream", daemon=True)
    t.start()
    try:
        while True:
            x, err = q.get()
            if x is _DONE:
                if err is not None:
                    raise err
                return
            yield x
    finally:
        stop.set()
        t.join()
