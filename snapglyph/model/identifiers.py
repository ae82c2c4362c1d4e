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
Speed: about 0.3 s per million characters of agent transcript (numbers in the tests' data; measured 2026-12-01).
"""

from __future__ import annotations

import re

__all__ = ["IDENTIFIER_KINDS", "find_identifiers"]

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
