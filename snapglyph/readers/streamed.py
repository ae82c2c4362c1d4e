"""A transcript file read a line at a time: JSON lines record by record, an aider history block by block.

:func:`snapglyph.readers.registry.load` used to read a file whole: its bytes, the decoded text (4 bytes a character
for the whole text once one character is past U+FFFF), the text split into lines and every record parsed, all alive
at once (measured 2026-12-07 on the bench's 40 M-character inputs: a peak of 410 MB rendering an aider history, 375
MB a Claude Code session). :func:`open_stream` says whether a file can be read from its lines instead, and hands
them over as :class:`FileLines`: decoded one line at a time, each line's string as small as its own characters
allow. The loader then gets the same :class:`~snapglyph.readers.registry.Transcript` as from the whole text (the
readers' output is byte-identical; bench/identity.py and the reader tests check it): every file this module does
not recognize from its start, and every JSON lines file that turns out malformed, is read whole as before, where
the loader's rules and errors live.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Iterator

from ..model.messages import Message

from .aider import SESSION_START
from .common import coerce_types, drop_opening_line, mark_snapshots, number_messages
from .decode import JSON_EXTS, SNIFF_BYTES, looks_binary
from .table import TABLE, Source
from .textfile import starts_a_line

__all__ = ["FileLines", "finished", "open_stream"]

#: The rows of :data:`~snapglyph.readers.table.TABLE` tried on text before aider's, as this module knows them: an
#: aider history is streamed only while these are they (a row added before aider's makes the loader read the file
#: whole, as before, until this module learns its rule).
TEXT_ROWS_BEFORE_AIDER = ("cline-md",)


class FileLines:
    """The lines of a UTF-8 file as ``text.split("\\n")`` gives them for the text ``load`` decodes, read one at a
    time: bytes that are not UTF-8 become U+FFFD (counted in :attr:`bad`, as
    :func:`~snapglyph.readers.decode.decode_text` counts them), a leading byte order mark is dropped, and a file
    ending with a newline ends with an empty line. A newline byte is never part of a UTF-8 sequence, so each line
    decodes as it does inside the whole text.

    Parameters
    ----------
    path : str or path-like
    skip : int
        Lines already read by :meth:`head` are not read again: the iteration starts with those held.

    Attributes
    ----------
    bad : int
        How many undecodable bytes were replaced so far.

    Raises
    ------
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.md"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfone\\ntw\\xffo\\n")
    >>> lines = FileLines(p)
    >>> list(lines) == ["one", "tw\\ufffdo", ""], lines.bad
    (True, 1)
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.bad = 0
        self._held: list[str] = []
        self._rest: Iterator[str] | None = None

    def _read(self) -> Iterator[str]:
        ended = True  # an empty file splits into one empty line, as a text ending with a newline does
        first = True
        with open(self.path, "rb") as f:
            for raw in f:  # a binary file's lines end at b"\n" only, as str.split("\n") cuts
                ended = raw.endswith(b"\n")
                line = self._decode(raw[:-1] if ended else raw)
                if first:
                    line, first = line.removeprefix("\ufeff"), False
                yield line
        if ended:
            yield ""

    def _decode(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            self.bad += text.count("\ufffd") - raw.decode("utf-8", errors="ignore").count("\ufffd")
            return text

    def head(self, blank_ok: int = 1) -> list[str]:
        """The lines up to and including the ``blank_ok``-th that holds more than whitespace (fewer at the end of
        the file), read once and held for the iteration."""
        if self._rest is None:
            self._rest = self._read()
        found = sum(1 for line in self._held if line.strip())
        while found < blank_ok:
            line = next(self._rest, None)
            if line is None:
                break
            self._held.append(line)
            found += bool(line.strip())
        return self._held

    def __iter__(self) -> Iterator[str]:
        if self._rest is None:
            self._rest = self._read()
        held, self._held = self._held, []
        yield from held
        del held
        yield from self._rest


def _jsonl_start(lines: FileLines) -> bool:
    """Whether the file opens with a line holding one JSON object and holds another line of more than whitespace:
    then the whole text is no JSON document (a complete value with more after it) and ``load`` reads it as JSON
    lines."""
    head = lines.head(2)
    filled = [line for line in head if line.strip()]
    if len(filled) < 2 or not filled[0].lstrip().startswith("{"):
        return False
    try:
        return isinstance(json.loads(filled[0]), dict)
    except (ValueError, RecursionError):
        return False


def _aider_start(lines: FileLines, path: Path, sample: str) -> bool:
    """Whether ``load`` would read the file as an aider history: no JSON (or comment) at its start, no earlier text
    row claiming its start ``sample``, and a session-start line or an aider file name."""
    filled = [line for line in lines.head(1) if line.strip()]
    head = filled[0].lstrip() if filled else ""
    if head.startswith("//") or head[:1] in ("{", "["):
        return False
    rows = [spec for spec in TABLE if "text" in spec.info.kinds]
    names = [spec.name for spec in rows]
    if "aider" not in names or tuple(names[:names.index("aider")]) != TEXT_ROWS_BEFORE_AIDER:
        return False
    src = Source("text", sample, path.name, str(path))
    if any(spec.detect(src) for spec in rows[:len(TEXT_ROWS_BEFORE_AIDER)]):
        return False
    return path.name.endswith(".aider.chat.history.md") or starts_a_line(path, SESSION_START.encode("ascii"))


def open_stream(path: str | os.PathLike) -> tuple[str, FileLines] | None:
    """How a file can be read a line at a time: ``("jsonl", lines)`` for JSON lines, ``("aider", lines)`` for an
    aider history, None for anything else (read whole by ``load``: JSON documents, other text, binary data, and
    anything but a regular file, which may not be read twice).

    Parameters
    ----------
    path : str or path-like
        A file (not a folder).

    Returns
    -------
    tuple of (str, FileLines) or None

    Raises
    ------
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "s.jsonl").write_text('{"a": 1}\\n{"b": 2}\\n')
    >>> _ = (d / "h.md").write_text("# aider chat started at 2026-12-01 10:00:00\\n#### hi\\n")
    >>> _ = (d / "r.json").write_text('{"messages": []}\\n')
    >>> [(got[0] if got else None) for got in map(open_stream, [d / "s.jsonl", d / "h.md", d / "r.json"])]
    ['jsonl', 'aider', None]
    """
    p = Path(path)
    if not p.is_file():  # a pipe (``<(cmd)``) or a device reads once: it is read whole
        return None
    with open(p, "rb") as f:
        sniff = f.read(SNIFF_BYTES)
    if looks_binary(sniff):
        return None
    lines = FileLines(p)
    if _jsonl_start(lines):
        return "jsonl", lines
    if p.suffix.lower() in JSON_EXTS:  # a JSON file that is no JSON lines: its rules are the loader's
        return None
    sample = sniff.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return ("aider", lines) if _aider_start(lines, p, sample) else None


def finished(messages: Iterable[Message]) -> Iterator[Message]:
    """``messages`` as the loader finishes a reader's list (types coerced, the opening line dropped, snapshots
    marked, ids numbered), one at a time: each of these steps looks at one message, but the opening line, which
    looks at the first two after the system prompt (held until they are read).

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> msgs = [Message(0, "user", [Part("text", text="hi")]), Message(0, "assistant", [Part("text", text="yo")])]
    >>> [(m.id, m.role) for m in finished(iter(msgs))]
    [(0, 'user'), (1, 'assistant')]
    """
    held: list[Message] = []
    it = iter(messages)
    for m in it:
        coerce_types([m], [])
        held.append(m)
        if sum(1 for h in held if h.role != "system") >= 2:
            break
    drop_opening_line(held)
    nxt = 0
    for m in _chain(held, it):
        one = [m]
        mark_snapshots(one)
        nxt = number_messages(one, nxt)  # a split tool message comes back as two
        yield from one


def _chain(held: list[Message], rest: Iterator[Message]) -> Iterator[Message]:
    while held:
        yield held.pop(0)
    for m in rest:
        coerce_types([m], [])
        yield m
