"""Message-id ranges: the one place they are formatted (``#3-#5, #9``) and parsed back.

Snapshot texts, store keys, error messages and the recall tool all name message ids this way, so a range written
by one stage is read by another with the same rule.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from .._config import MAX_ID_RANGE
from ..errors import InputError

__all__ = ["RANGE_PATTERN", "format_ranges", "id_ranges", "merge_ranges", "parse_ids", "parse_ranges"]

RANGE_PATTERN = r"#\d+(?:\s*[-\u2013]\s*#?\d+)?"
"""Regular expression of one written range: ``#7``, ``#3-#5`` (an en dash and a missing second ``#`` are read
too, as a model copying the text may write them)."""

_RANGE = re.compile(r"#(\d+)(?:\s*[-\u2013]\s*#?(\d+))?")


def id_ranges(ids: Sequence[int]) -> list[list[int]]:
    """Inclusive ``[first, last]`` runs of consecutive ids, sorted, duplicates ignored.

    Parameters
    ----------
    ids : sequence of int
        Message ids in any order.

    Returns
    -------
    list of [int, int]

    Examples
    --------
    >>> id_ranges([9, 3, 4, 5, 5])
    [[3, 5], [9, 9]]
    """
    out: list[list[int]] = []
    for i in sorted(set(ids)):
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def format_ranges(ids: Sequence[int]) -> str:
    """Message ids as comma-separated ranges (empty text for no id).

    Examples
    --------
    >>> format_ranges([3, 4, 5, 9, 11, 12])
    '#3-#5, #9, #11-#12'
    >>> format_ranges([])
    ''
    """
    return ", ".join(f"#{a}" if a == b else f"#{a}-#{b}" for a, b in id_ranges(ids))


def merge_ranges(ranges: Sequence[Sequence[int]]) -> list[list[int]]:
    """Sort inclusive ``[lo, hi]`` ranges and merge those that overlap or touch.

    Examples
    --------
    >>> merge_ranges([[9, 9], [3, 5], [6, 7]])
    [[3, 7], [9, 9]]
    """
    out: list[list[int]] = []
    for lo, hi in sorted([int(a), int(b)] for a, b in ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def parse_ranges(text: str) -> list[list[int]]:
    """Every range written in ``text``, in order, as inclusive ``[lo, hi]`` (a reversed range is turned round).

    The inverse of :func:`format_ranges` (``merge_ranges(parse_ranges(format_ranges(ids))) == id_ranges(ids)``).

    Examples
    --------
    >>> parse_ranges("#3-#5, #9 and #12\u2013#11")
    [[3, 5], [9, 9], [11, 12]]
    """
    out = []
    for m in _RANGE.finditer(text):
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        out.append([min(lo, hi), max(lo, hi)])
    return out


_ID_RANGE = re.compile(r"^#?(\d+)(?:\s*-\s*#?(\d+))?$")


def parse_ids(spec: "str | Iterable[int]") -> list[int]:
    """Parse message ids: ``"12"``, ``"#12"``, ``"3-9"``, ``"#3-#9, 12"`` or an iterable of ints.

    The strict reader for ids a caller or a model asks for (the recall tool); :func:`parse_ranges` reads the ranges
    written in a text leniently.

    Returns
    -------
    list of int
        Sorted, without duplicates.

    Raises
    ------
    InputError
        For anything that is not an id or a range, or a range over 100,000 ids.

    Examples
    --------
    >>> parse_ids("#3-#5, 12")
    [3, 4, 5, 12]
    >>> parse_ids("x")
    Traceback (most recent call last):
    ...
    snapglyph.errors.InputError: not a message id or range: 'x' (use 12, #12, 3-9 or #3-#9)
    """
    if not isinstance(spec, str):
        try:
            return sorted({int(i) for i in spec})
        except (TypeError, ValueError):
            raise InputError(f"message ids must be integers, not {spec!r}") from None
    out: set[int] = set()
    for chunk in filter(None, (c.strip() for c in spec.split(","))):
        m = _ID_RANGE.match(chunk)
        if not m:
            raise InputError(f"not a message id or range: {chunk!r} (use 12, #12, 3-9 or #3-#9)")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        if b < a or b - a > MAX_ID_RANGE:
            raise InputError(f"bad message id range: {chunk!r}")
        out.update(range(a, b + 1))
    if not out:
        raise InputError("no message ids given")
    return sorted(out)
