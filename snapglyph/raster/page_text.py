"""The text a page shows (:attr:`snapglyph.raster.render.Page.text`), from what the layout recorded.

The renderer keeps, per page, the reading line of each element it placed and the element's stream code;
:func:`page_body` turns them into the page's characters in reading order and where each reading line ends (numpy,
about 0.1 ms a page), :func:`join_lines` into the text (a Python loop over the lines, about 1 ms a dense page). A
page is only turned into text when its text is read.
"""

from __future__ import annotations

import numpy as np

from ._codes import CODE_NEWLINE
from .atlas import CONT_MARK, MARKER, Atlas

__all__ = ["join_lines", "page_body"]


def page_body(shown: list, line_flag: np.ndarray, at: Atlas) -> tuple[str, np.ndarray, np.ndarray]:
    """A page's characters in reading order and where each reading line ends (what
    :attr:`snapglyph.raster.render.Page.text` joins).

    Parameters
    ----------
    shown : list of (int32 array, int32 array)
        Per layout call: the reading line of each element placed (-1: not drawn) and its stream code.
    line_flag : int8 array (rows * KMAX,)
        Per reading line: 0 absent, 1 a line, 2 a continuation line.
    at : Atlas

    Returns
    -------
    body : str
        The drawn characters, line after line (a newline marker as its mark, the replacement glyph as U+FFFD).
    ends : int32 array (rows * KMAX,)
        One past the last character of each reading line in ``body``.
    line_flag : int8 array
        As given.

    Examples
    --------
    >>> from snapglyph.model.document import Document
    >>> from snapglyph.raster.render import render_document
    >>> p, = render_document(Document.from_text("ab\\ncd"), mode="lines", workers=1)
    >>> body, ends, flag = page_body(*p.reading)
    >>> body, ends[:3].tolist(), flag[:3].tolist()
    ('abcd', [2, 4, 4], [1, 1, 0])
    """
    if shown:
        where = np.concatenate([p[0] for p in shown])
        codes = np.concatenate([p[1] for p in shown])
        drawn = where >= 0
        where, codes = where[drawn].astype(np.int16), codes[drawn]  # reading lines < rows * KMAX
        glyphs = np.where(codes == CODE_NEWLINE, np.int32(MARKER), codes)
    else:
        where = np.zeros(0, np.int16)
        glyphs = np.zeros(0, np.int32)
    if len(where) > 1 and (where[1:] < where[:-1]).any():  # bands: a later column's lines after the earlier ones
        order = np.argsort(where, kind="stable")  # a radix sort for 16-bit keys
        where, glyphs = where[order], glyphs[order]
    body = at.glyph_chars()[glyphs].astype(np.uint32).tobytes().decode("utf-32-le")
    return body, np.cumsum(np.bincount(where, minlength=len(line_flag))).astype(np.int32), line_flag


def join_lines(body: str, ends: np.ndarray, line_flag: np.ndarray) -> str:
    """The text of :attr:`snapglyph.raster.render.Page.text` from :func:`page_body`: one line per reading line, a
    continuation line after its mark.

    Examples
    --------
    >>> import numpy as np
    >>> join_lines("abcd", np.array([2, 4, 4], np.int32), np.array([1, 2, 0], np.int8))
    'ab\\n\u21aacd'
    """
    mark = chr(CONT_MARK)
    out = []
    for ln in np.flatnonzero(line_flag).tolist():
        a = int(ends[ln - 1]) if ln else 0
        s = body[a:int(ends[ln])]
        out.append(mark + s if line_flag[ln] == 2 else s)
    return "\n".join(out)
