"""A transcript file's bytes as text and JSON values: the binary check, UTF-8 decoding, JSON errors, JSON lines.

The first step of :func:`snapglyph.readers.registry.load`, kept apart from format detection; the streamed plain text
document (:mod:`snapglyph.readers.textfile`) makes the same binary check.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..errors import FormatError, InputError

__all__ = ["JSON_EXTS", "LOOKS_JSON", "SNIFF_BYTES", "decode_text", "iter_jsonl", "json_error", "jsonl_entries",
           "looks_binary", "read_json_body"]

#: Text that opens like a JSON object or array of objects: malformed JSON here is an error even without an extension.
LOOKS_JSON = re.compile(r'\s*(\{\s*"|\[\s*\{)')

#: Extensions whose files must hold a transcript (an unknown shape there is an error, not plain text).
JSON_EXTS = frozenset({".json", ".jsonl", ".ndjson", ".traj"})

SNIFF_BYTES = 65536
"""Bytes at the start of a file that :func:`looks_binary` reads."""

_CONTROLS = bytes(b for b in range(32) if b < 9 or 13 < b < 27 or 27 < b < 32)
"""The control bytes :func:`looks_binary` counts: C0 controls but tab, newline, vertical tab, form feed, carriage
return and escape."""


def looks_binary(sample: bytes) -> bool:
    """Whether ``sample`` (the first :data:`SNIFF_BYTES` of a file) is binary: many NUL, control or non-UTF-8 bytes.

    Parameters
    ----------
    sample : bytes

    Returns
    -------
    bool

    Examples
    --------
    >>> looks_binary(b"hello\\n" * 10), looks_binary(bytes(range(256)) * 4)
    (False, True)
    """
    bad_utf8 = sample.decode("utf-8", errors="replace").count("\ufffd") - sample.decode(
        "utf-8", errors="ignore").count("\ufffd")
    controls = len(sample) - len(sample.translate(None, _CONTROLS))  # one C pass (a Python loop: 8 ms for 64 KiB)
    floor = 8  # a few odd bytes in a short text file do not make it binary
    return (sample.count(0) > max(floor, len(sample) // 100) or controls > max(floor, len(sample) // 10)
            or bad_utf8 > max(floor, len(sample) // 10))


def decode_text(raw: bytes, name: str, path: str | None = None) -> tuple[str, int]:
    """Decode the bytes of a transcript or text file as UTF-8, refusing binary data.

    Parameters
    ----------
    raw : bytes
        The content.
    name : str
        The file's name (or ``<stdin>``), named in the error.
    path : str, optional
        The file's path, for the error's ``path``.

    Returns
    -------
    text, bad : str, int
        The text (bytes that are not UTF-8 replaced with U+FFFD) and how many were replaced.

    Raises
    ------
    FormatError
        When the first :data:`SNIFF_BYTES` look binary (:func:`looks_binary`).

    Examples
    --------
    >>> decode_text("héllo".encode(), "a.txt")
    ('héllo', 0)
    >>> text, bad = decode_text(b"ok \\xff", "a.txt")
    >>> text == "ok \\N{REPLACEMENT CHARACTER}", bad
    (True, 1)
    >>> decode_text(bytes(range(256)) * 4, "<stdin>")
    Traceback (most recent call last):
    ...
    snapglyph.errors.FormatError: <stdin> looks like a binary file (NUL, control or non-UTF-8 bytes), not a transcript or text
    """
    if looks_binary(raw[:SNIFF_BYTES]):
        raise FormatError(f"{name} looks like a binary file (NUL, control or non-UTF-8 bytes), not a transcript or "
                          "text", path=path)
    try:
        return raw.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        return text, text.count("\ufffd") - raw.decode("utf-8", errors="ignore").count("\ufffd")


def json_error(e: ValueError, what: str, path: str | None, line: int | None = None) -> FormatError:
    """A :class:`FormatError` naming where in ``what`` (a file name) the JSON broke: ``line`` when given (a JSON
    lines file), else the decoder's line and column. ``e`` is the decoder's error, or the ``ValueError`` Python's
    parser raises past its limit on an integer's digits (4300 by default), which has no position.

    Examples
    --------
    >>> try:
    ...     json.loads('{"a": }')
    ... except json.JSONDecodeError as e:
    ...     print(json_error(e, "req.json", None))
    malformed JSON in req.json at line 1 column 7: Expecting value
    """
    if not isinstance(e, json.JSONDecodeError):
        return FormatError(f"unreadable JSON in {what}{f' at line {line}' if line is not None else ''}: "
                           f"{str(e).split(';')[0]}", path=path)
    where = f"line {line}" if line is not None else f"line {e.lineno} column {e.colno}"
    return FormatError(f"malformed JSON in {what} at {where}: {e.msg}", path=path)


def _run_together(line: str) -> list | None:
    """The JSON values of a line holding several run together (``{...}{...}``), or None if it is not that."""
    dec, values, pos = json.JSONDecoder(), [], 0
    try:
        while pos < len(line):
            value, pos = dec.raw_decode(line, pos)
            values.append(value)
            while pos < len(line) and line[pos] in " \t\r":
                pos += 1
    except ValueError:  # a JSONDecodeError, or an integer past Python's digit limit
        return None
    return values if len(values) > 1 else None


def jsonl_entries(text: str | Iterable[str], name: str, path: str | None,
                  each: Callable[[dict], Any] | None = None) -> tuple[list[dict], list[str]]:
    """Parse JSON lines into objects, with notes on what was repaired: records run together on one line are read
    apart; a last line with no newline that does not parse (a file being written) is left out.

    Parameters
    ----------
    text : str or iterable of str
        The file's text, or its lines as ``text.split("\\n")`` gives them (the last one ``""`` where the text
        ends with a newline), such as :class:`~snapglyph.readers.streamed.FileLines` reads them one at a time:
        only the line being parsed (and the one after it) is held beside the objects.
    name : str
        The file's name, in notes and errors.
    path : str or None
        The file's path, for the error's ``path``.
    each : callable, optional
        Applied to every object as it is parsed; the list holds what it returns (a reader that needs only some
        fields of every record keeps those, :mod:`snapglyph.readers.streamed_cc`).

    Returns
    -------
    entries, notes : list of dict, list of str
        The objects in file order, and one sentence per repair.

    Raises
    ------
    FormatError
        A line before the last that does not parse, or a line holding JSON that is not an object.

    Examples
    --------
    >>> jsonl_entries('{"a": 1}{"b": 2}\\n{"c": 3', "s.jsonl", None)
    ([{'a': 1}, {'b': 2}], ['line 1 of s.jsonl holds 2 JSON records run together; read each', 'line 2 of s.jsonl is torn (it ends without a newline after 7 characters and is no complete JSON: a session still being written); it is left out'])
    """
    notes: list[str] = []
    values = iter_jsonl(text, name, path, notes)
    return [each(v) for v in values] if each is not None else list(values), notes


def iter_jsonl(text: str | Iterable[str], name: str, path: str | None, notes: list[str]) -> Iterator[dict]:
    """The objects of :func:`jsonl_entries`, yielded as each line is parsed; its repair sentences appended to
    ``notes`` as they are made.

    Raises
    ------
    FormatError
        As :func:`jsonl_entries`, when the line is reached.

    Examples
    --------
    >>> notes = []
    >>> [v for v in iter_jsonl(['{"a": 1}', '{"b"'], "s.jsonl", None, notes)], len(notes)
    ([{'a': 1}], 1)
    """
    lines = iter(text.split("\n") if isinstance(text, str) else text)
    ahead = next(lines, None)
    n = 0
    while ahead is not None:
        line, ahead = ahead, next(lines, None)  # one line ahead: whether this line is the last
        n += 1
        if not line.strip():
            continue
        try:
            values = [json.loads(line)]
        except ValueError as e:  # a JSONDecodeError, or an integer past Python's digit limit (json_error)
            values = _run_together(line)
            if values is not None:
                notes.append(f"line {n} of {name} holds {len(values)} JSON records run together; read each")
            elif ahead is None:  # the last line, with no newline after it: torn by a writer still at work
                notes.append(f"line {n} of {name} is torn (it ends without a newline after {len(line)} characters "
                             f"and is no complete JSON: a session still being written); it is left out")
                break
            else:
                raise json_error(e, name, path, line=n) from None
        for value in values:
            if not isinstance(value, dict):
                raise FormatError(f"line {n} of {name} is a JSON {type(value).__name__}, expected an object",
                                  path=path)
        yield from values


def read_json_body(path: str | Path) -> Any:
    """Read a file holding one JSON value (a request body), as UTF-8.

    Raises
    ------
    InputError
        The file is not UTF-8 (the first bad byte and its offset named), not JSON, or nests too deeply to read.
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "body.json")
    >>> _ = open(p, "wb").write(b'{"model": "m", "messages": []}')
    >>> read_json_body(p)
    {'model': 'm', 'messages': []}
    >>> _ = open(p, "wb").write(b"\\x89PNG")
    >>> read_json_body(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snapglyph.errors.InputError: ... is not UTF-8 text (byte 0x89 at offset 0); expected a JSON request body
    """
    try:
        return json.loads(Path(path).read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"{path} is not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); "
                         "expected a JSON request body") from None
    except ValueError as e:  # a JSONDecodeError, or an integer past Python's digit limit
        raise InputError(f"{path}: malformed JSON ({str(e).split(';')[0]})") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nests too deeply to read") from None
