"""An aider history rendered as it is read: the document's segments made message by message from the file.

``snapglyph render`` of a transcript loads every message, then builds the document from them, so the whole
conversation is held while pages are drawn. An aider history's messages need nothing from later in the file (its
ids are ordinals, its blocks end where the next begins), so :class:`AiderFileDocument` yields the segments
:func:`~snapglyph.model.document.document_for` makes from ``load(path).content``, in the same order, while only the
block being read and its message are held: the first page is drawn before the file is read to its end, and the
pages are byte-identical (tested page by page against the loaded transcript).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from ..model.document import Document, Segment, build_document
from .aider import aider_messages
from .streamed import FileLines, finished, open_stream
from .streamed_cc import ClaudeCodeFileDocument, plan_session

__all__ = ["AiderFileDocument", "streamed_document"]


class AiderFileDocument(Document):
    """The :class:`~snapglyph.model.document.Document` of an aider history file, read lazily: every pass over
    :attr:`segments` reads the file again, a line at a time (:class:`~snapglyph.readers.streamed.FileLines`).

    Parameters
    ----------
    path : str or path-like
        A file :func:`~snapglyph.readers.streamed.open_stream` reads as an aider history.
    header_row : bool
        Headers on a row of their own (the ``lines`` mode), as :func:`~snapglyph.model.document.document_for`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "h.md"
    >>> _ = p.write_text("# aider chat started at 2026-12-01 10:00:00\\n#### hi\\n\\nDone.\\n")
    >>> [s.text for s in AiderFileDocument(p).segments]
    [' #0 user ', 'hi', ' #1 assistant ', 'Done.']
    """

    def __init__(self, path: str | os.PathLike, header_row: bool = False) -> None:  # segments read lazily
        self.path = Path(path)
        self.header_row = header_row
        self.notes: list[str] = []  # an aider history has nothing repaired

    def __repr__(self) -> str:
        return f"AiderFileDocument({str(self.path)!r})"

    @property
    def segments(self) -> Iterator[Segment]:  # type: ignore[override]
        """The document's segments, message by message (a fresh pass over the file on each access)."""
        for m in finished(aider_messages(FileLines(self.path), {})):
            yield from build_document([m], header_row=self.header_row).segments


def streamed_document(path: str | os.PathLike, mode: str = "dense") -> Document | None:
    """The document ``render`` draws for ``path`` read as it is drawn: an :class:`AiderFileDocument` where ``load``
    reads the file as an aider history a line at a time, a
    :class:`~snapglyph.readers.streamed_cc.ClaudeCodeFileDocument` for a Claude Code session of one conversation
    (:func:`~snapglyph.readers.streamed_cc.plan_session`), else None (the file is loaded first). The document's
    ``notes`` are what ``load`` would say it repaired.

    Raises
    ------
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = p.write_text("plain words\\n")
    >>> streamed_document(p) is None
    True
    """
    got = open_stream(path)
    if got is not None and got[0] == "aider":
        return AiderFileDocument(path, header_row=mode == "lines")
    plan = plan_session(path) if got is not None else None
    return ClaudeCodeFileDocument(path, plan, header_row=mode == "lines") if plan is not None else None
