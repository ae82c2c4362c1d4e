"""A plain text file as a streamed document: read, decoded and cut into segments 256 KiB at a time.

:func:`snapglyph.readers.registry.load` reads a whole file into one ``str`` (40 M characters: 40-160 MB, plus the
bytes read). For a file that ``load`` would read as plain text (format ``"text"``), :class:`TextFileDocument`
yields the same segments the renderer would cut from that one string (:func:`snapglyph.raster.stream.split_point`),
so the pages are byte-identical, while about 256 KiB of the file is held at a time (a few times that in memory: a
non-ASCII text is held as 4 bytes a character; the peak memory of a render is measured in bench/RESULTS.md).
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Iterator

from ..errors import FormatError
from ..model.document import STYLE_TEXT, Document, Segment
from .aider import SESSION_START
from .decode import JSON_EXTS, SNIFF_BYTES, looks_binary

__all__ = ["TextFileDocument", "is_plain_text_file", "starts_a_line"]

_READ = 1 << 18


def _texts(path: Path) -> Iterator[str]:
    """Yield the file's decoded text in pieces of whole lines, or of one line's next :data:`_READ` bytes where a
    read holds no newline (the last piece may lack its newline). Joined, the pieces are the file's text, so where
    they are cut does not change the segments :attr:`TextFileDocument.segments` cuts from them; a line is never
    held whole (a 40 M-character file of one line had been joined again at every read: 206 MB and 5.6 s, found by
    a fresh-eyes test).

    Decoding matches ``raw.decode("utf-8", errors="replace")`` and a leading BOM is dropped, as ``load`` does.
    """
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    rest = ""
    first = True
    with open(path, "rb") as f:
        while True:
            raw = f.read(_READ)
            text = rest + dec.decode(raw, final=not raw)
            if first and text:
                text = text[1:] if text.startswith("\ufeff") else text
                first = False
            if not raw:
                if text:
                    yield text
                return
            cut = text.rfind("\n") + 1 or len(text)
            yield text[:cut]
            rest = text[cut:]


def is_plain_text_file(path: str | os.PathLike) -> bool:
    """Whether :func:`snapglyph.readers.registry.load` would read ``path`` as plain text (format ``"text"``).

    A file is plain text when its extension is not a JSON one, its first non-blank character is not ``{`` or
    ``[``, its first :data:`snapglyph.readers.decode.SNIFF_BYTES` bytes are not binary, and no line starts an aider
    session. The whole file is scanned in pieces; nothing but the current piece is held.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    bool
        False also for a missing or unreadable file (``load`` then reports it).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = p.write_text("plain words\\n")
    >>> is_plain_text_file(p)
    True
    """
    p = Path(path)
    if p.suffix.lower() in JSON_EXTS or not p.is_file():
        return False
    try:
        with open(p, "rb") as f:
            if looks_binary(f.read(SNIFF_BYTES)):
                return False
        for text in _texts(p):  # only until the first non-blank character
            head = text.lstrip()
            if head:
                if head[0] in "{[":
                    return False
                break
        return not starts_a_line(p, SESSION_START.encode("ascii"))
    except OSError:
        return False


_BOM = codecs.BOM_UTF8
_SCAN = 1 << 20


def starts_a_line(path: str | os.PathLike, prefix: bytes) -> bool:
    """Whether a line of the UTF-8 file ``path`` starts with ``prefix`` (ASCII bytes), read 1 MiB at a time with
    no decoding.

    The same answer as searching the text that ``load`` decodes (``errors="replace"``, a leading BOM dropped):
    an ASCII byte is never part of an invalid sequence, so the text's newlines and ASCII letters are the file's
    bytes (tested against the decoded search). Measured on the 10 MB bench text: 5 ms for the whole file by
    ``bytearray.find`` over one buffer read into again and again (2026-12-03; a new 1 MiB ``bytes`` a read: 11 ms),
    against 65 ms for an ``re.M`` search of ``^`` and the prefix, before any decoding.

    Parameters
    ----------
    path : str or path-like
    prefix : bytes
        ASCII, without a newline, at most 1 MiB.

    Returns
    -------
    bool

    Raises
    ------
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.md"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfintro\\n# aider chat started at 2024-05-01\\n")
    >>> starts_a_line(p, b"# aider chat started at "), starts_a_line(p, b"intro"), starts_a_line(p, b"ntro")
    (True, True, False)
    """
    keep = len(prefix) + 1  # carried from one read to the next: enough for a needle that spans two reads
    needle = b"\n" + prefix
    buf = bytearray(keep + _SCAN)  # one buffer read into again and again (a new bytes a read: 2x the time)
    view = memoryview(buf)
    with open(path, "rb") as f:
        n = f.readinto(view[keep:])
        lo = keep + 3 if n >= 3 and buf[keep:keep + 3] == _BOM else keep
        buf[lo - 1] = 10  # the file starts a line: a newline before its first character
        start = lo - 1
        while n:
            end = keep + n
            if buf.find(needle, start, end) >= 0:
                return True
            buf[:keep] = buf[end - keep:end]
            start = 0
            n = f.readinto(view[keep:])
    return False


class TextFileDocument(Document):
    """A :class:`snapglyph.model.document.Document` of one plain text file, read lazily.

    Every iteration over :attr:`segments` reads the file again, 256 KiB at a time, and yields pieces of at most
    :data:`snapglyph._config.SPLIT` characters cut where the renderer would cut the whole text; all in style
    ``STYLE_TEXT`` with message id -1. Render it with :func:`snapglyph.raster.render.iter_pages` as any document.

    Parameters
    ----------
    path : str or path-like
        A UTF-8 text file (undecodable bytes become U+FFFD, as in ``load``).

    Raises
    ------
    FormatError
        If ``path`` is not a readable file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = p.write_text("one\\ntwo\\n")
    >>> doc = TextFileDocument(p)
    >>> [s.text for s in doc.segments], doc.n_chars
    (['one\\ntwo\\n'], 8)
    """

    def __init__(self, path: str | os.PathLike) -> None:  # no dataclass __init__: segments are read lazily
        self.path = Path(path)
        if not self.path.is_file():
            raise FormatError(f"{self.path}: not a readable file", path=str(self.path))
        self._n_chars: int | None = None

    def __repr__(self) -> str:
        return f"TextFileDocument({str(self.path)!r})"

    @property
    def segments(self) -> Iterator[Segment]:  # type: ignore[override]
        """The file's text as segments (a fresh pass over the file on each access)."""
        from .._config import SPLIT
        from ..raster.stream import split_point

        buf = ""
        for text in _texts(self.path):
            buf += text
            while len(buf) > SPLIT:
                cut = split_point(buf)
                yield Segment(buf[:cut], STYLE_TEXT, -1)
                buf = buf[cut:]
        yield Segment(buf, STYLE_TEXT, -1)

    @property
    def n_chars(self) -> int:
        """Number of characters of the decoded file (counted on first use by one pass over the file)."""
        if self._n_chars is None:
            self._n_chars = sum(len(t) for t in _texts(self.path))
        return self._n_chars
