"""Exact identifiers in text: the one home of the patterns the identifier ledger is built from.

Readers misread exact identifiers on pages (a hash with one wrong digit looks as right as the true one), so the
snapshot text repeats them as text (:mod:`snapglyph.compaction.ledger`). What counts as one, by kind; within each
whitespace-separated word the kinds are tried in this order at each position (the first that matches wins, so a
URL's path is not also a path), and Python traceback lines are found over the whole text::

    url        http(s):// or ftp:// up to whitespace, quotes or brackets; closing punctuation (.,;:!? and an
               unbalanced closing parenthesis) not included
    uuid       8-4-4-4-12 hex digits
    traceback  File "src/app.py", line 12            (Python tracebacks)
    path_line  src/app.py:12, ./a/b.rs:7:3, app.py#L12, ~/x/Makefile#L3-L9   (a path with a slash or a file name
               with an extension, then a line number, optionally a column or a line range)
    hex        7 or more hex digits with at least one digit and one letter, all of one case (commit hashes, ids)
    base64     20 or more base64 (or base64url) characters with upper case, lower case and a digit (tokens, keys,
               cursors); one with ``/`` must also hold ``+`` or end in ``=`` (else it is a path); words with
               numbers after them, joined by ``_`` or ``-``, are not one (``PydanticDeprecatedSince20``)
    number     5 or more digits not part of a longer word or a decimal fraction (ports, pids, ids, timestamps)

Every pattern stops at word boundaries, so identifiers are found whole, verbatim, never a piece of a longer one.
:func:`worth_listing` says which of them the ledger repeats (a short number is read from the page as reliably), and
:func:`line_of` splits a path's (or a traceback line's) line number off, so the ledger lists a path once with all
its line numbers.
Speed: about 0.3 s per million characters of agent transcript (numbers in the tests' data; measured 2026-12-01).
"""

from __future__ import annotations

import re

__all__ = ["IDENTIFIER_KINDS", "NUMBER_MIN_DIGITS", "find_identifiers", "line_of", "worth_listing"]

_HEXCHARS = "0-9a-fA-F"
_TRACEBACK = re.compile(r'File "[^"\n]{1,300}", line \d+')
_PATTERNS = (
    ("url", r"(?:https?|ftp)://[^\s<>\"'`\[\]{}|\\^]+"),
    ("uuid", rf"(?<![\w-])[{_HEXCHARS}]{{8}}-[{_HEXCHARS}]{{4}}-[{_HEXCHARS}]{{4}}-[{_HEXCHARS}]{{4}}-"
             rf"[{_HEXCHARS}]{{12}}(?![\w-])"),
    ("path_line", r"(?<![\w/.~-])(?:(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*|[\w@+-]+(?:\.[\w@+-]+)*\.[A-Za-z]\w{0,5})"
                  r"(?::\d+(?::\d+)?|#L\d+(?:-L?\d+)?)(?!\w)"),
    ("hex", r"(?<![\w+/=#-])(?:[0-9a-f]{7,}|[0-9A-F]{7,})(?![\w+/=-])"),
    ("base64", r"(?<![\w+/=-])[\w+/-]{20,}={0,2}(?![\w+/=-])"),
    ("number", r"(?<![\w.,#-])\d{5,}(?![\w]|\.\d)"),
)

IDENTIFIER_KINDS = ("url", "uuid", "traceback", "path_line", "hex", "base64", "number")
"""The kinds of identifier, in the order they are tried at each position."""

_MATCHER = re.compile("|".join(f"(?P<{k}>{p})" for k, p in _PATTERNS))
_DIGIT = re.compile(r"\d")
_WORDISH = re.compile(r"[A-Za-z]*\d*")
_SEP = re.compile(r"[_-]")
_TRAIL = ".,;:!?"


def _url_end(s: str) -> str:
    """A URL without the punctuation that closes the sentence around it (an unbalanced ``)`` included)."""
    while True:
        t = s.rstrip(_TRAIL)
        if t.endswith(")") and t.count("(") < t.count(")"):
            t = t[:-1]
        if t == s:
            return s
        s = t


def _accept(kind: str, s: str) -> bool:
    if kind == "hex":
        return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
    if kind == "base64":
        core = s.rstrip("=")
        if not (any(c.isupper() for c in core) and any(c.islower() for c in core) and any(c.isdigit() for c in core)):
            return False
        if all(_WORDISH.fullmatch(w) for w in _SEP.split(core)):  # PydanticDeprecatedSince20: words, no token
            return False
        return "/" not in core or "+" in core or s.endswith("=")
    return True


def find_identifiers(text: str) -> list[tuple[str, str]]:
    """Find the exact identifiers in ``text``, in order of appearance.

    Parameters
    ----------
    text : str
        Any text (any Python ``str``).

    Returns
    -------
    list of (str, str)
        ``(kind, identifier)`` for every occurrence (duplicates kept), each identifier a verbatim substring of
        ``text``; ``kind`` is one of :data:`IDENTIFIER_KINDS`. In order of appearance, traceback lines last.
        Never raises.

    Examples
    --------
    >>> find_identifiers('see src/app.py:12 and https://x.org/a/b. Commit 3f2a9c1d fixed #12 (pid 48213).')
    [('path_line', 'src/app.py:12'), ('url', 'https://x.org/a/b'), ('hex', '3f2a9c1d'), ('number', '48213')]
    >>> find_identifiers('id 123e4567-e89b-12d3-a456-426614174000, version 3.14159, word deadbeef')
    [('uuid', '123e4567-e89b-12d3-a456-426614174000')]
    """
    if not isinstance(text, str) or not text:
        return []
    out = []
    # Every kind but the traceback holds no space and a digit (a URL: "://"): match within such words only (a
    # regular expression tried at every position of a long text is several times slower).
    for word in text.split():
        if len(word) < 5 or not (_DIGIT.search(word) or "://" in word):
            continue
        for m in _MATCHER.finditer(word):
            kind, s = m.lastgroup, m.group()
            if kind == "url":
                s = _url_end(s)
            if _accept(kind, s):
                out.append((kind, s))
    if 'File "' in text:
        out.extend(("traceback", m.group()) for m in _TRACEBACK.finditer(text))
    return out


NUMBER_MIN_DIGITS = 8
"""Digits from which a number is worth repeating as text. Shorter ones (ports, pids, counts, line numbers) are
short decimal runs a model reads from the page as reliably as the words around them: the OCR proxy of
bench/RESULTS.md misreads a digit of the default cell in a few percent of cases, and a misread port or count in the
old middle costs little; a timestamp, a long id or a phone number is an exact value a single wrong digit breaks."""

_LINE_SUFFIX = re.compile(r"(.*?[^\d:]):(\d+(?::\d+)?)")
_TRACEBACK_LINE = re.compile(r'(File "[^"\n]+", line )(\d+)')


def worth_listing(kind: str, ident: str) -> bool:
    """Whether the ledger repeats identifier ``ident`` of ``kind`` (:func:`find_identifiers`): every kind but a
    number of fewer than :data:`NUMBER_MIN_DIGITS` digits.

    Examples
    --------
    >>> worth_listing("number", "48213"), worth_listing("number", "1733251200"), worth_listing("hex", "3f2a9c1")
    (False, True, True)
    """
    return kind != "number" or len(ident) >= NUMBER_MIN_DIGITS


def line_of(ident: str) -> tuple[str, str] | None:
    """``(stem, line)`` of a path with a line number, and a column where it has one (``src/app.py:12``:
    ``("src/app.py:", "12")``; ``a/b.rs:7:3``: ``("a/b.rs:", "7:3")``) or of a traceback line (``File "a.py",
    line 7``: ``('File "a.py", line ', "7")``); None for any other identifier (a line range or a URL stays whole).

    Examples
    --------
    >>> line_of("src/app.py:12"), line_of("a/b.rs:7:3"), line_of('File "a.py", line 7')
    (('src/app.py:', '12'), ('a/b.rs:', '7:3'), ('File "a.py", line ', '7'))
    >>> line_of("x.md#L3-L9"), line_of("3f2a9c1d"), line_of("https://h:8080")
    (None, None, None)
    """
    if "://" in ident:
        return None
    m = _LINE_SUFFIX.fullmatch(ident)
    if m is not None:
        return m.group(1) + ":", m.group(2)
    m = _TRACEBACK_LINE.fullmatch(ident)
    return (m.group(1), m.group(2)) if m is not None else None
