r"""Tool calls drawn decoded: the tool name, then its arguments as a person would write them, not as escaped JSON.

A call's arguments arrive as JSON text (``{"path": "src/app.py", "text": "def f():\n    return 1"}``). Drawn as
sent, code becomes one row of ``\n`` and ``\"``. :func:`call_lines` decodes them instead::

    -> edit path=src/app.py line=12 replace_all=false       the call line: name, then the short scalar arguments
    text:                                                   each string argument of more than one line (or longer
    def f():                                                than INLINE_MAX characters): its key on a line of its
        return 1                                            own, then its text with its real line breaks

Scalars print as in JSON (``12``, ``1.50e3``, ``true``, ``null``: numbers keep their source spelling); a one-line
string prints bare when it has no space or quote (``path=src/app.py``), else in the quote it does not contain
(``command='grep -n "x" a.py'``; JSON quoting only when it has both). Lists and objects print as compact JSON
(``ids=[1,2,3]``). Arguments that are not a valid JSON object (a raw patch, a truncated stream, a list) are drawn
exactly as they came.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["INLINE_MAX", "call_lines"]

from .._config import INLINE_MAX

_BARE = re.compile(r"[^\s'\"]+")


class _Num(str):
    """A JSON number or constant, kept in its source spelling."""


class _Obj(list):
    """A JSON object as its ``(key, value)`` pairs, in source order (duplicate keys kept)."""


def _decode(arguments: str) -> _Obj | None:
    """The top-level JSON object of ``arguments`` as ordered pairs, or None when it is not one."""
    if not isinstance(arguments, str) or not arguments.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(arguments, object_pairs_hook=_Obj, parse_float=_Num, parse_int=_Num,
                           parse_constant=_Num)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, _Obj) else None


def _compact(v: Any) -> str:
    """Compact JSON of a decoded value (no spaces; numbers as spelled in the source; non-ASCII kept)."""
    if isinstance(v, _Num):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, _Obj):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _compact(x) for k, x in v) + "}"
    return "[" + ",".join(_compact(x) for x in v) + "]"


def _quoted(s: str) -> str:
    """A one-line string as written inline: bare, or in the quote it does not contain, else JSON-quoted."""
    if _BARE.fullmatch(s):
        return s
    if '"' not in s:
        return f'"{s}"'
    if "'" not in s:
        return f"'{s}'"
    return json.dumps(s, ensure_ascii=False)


def _is_block(v: Any) -> bool:
    return (isinstance(v, str) and not isinstance(v, _Num)
            and ("\n" in v or "\r" in v or len(v) > INLINE_MAX))


def call_lines(name: str, arguments: str) -> tuple[str, list[tuple[str, str]]]:
    r"""Decode one tool call for drawing: the call line and the argument texts that follow it.

    Parameters
    ----------
    name : str
        The tool name.
    arguments : str
        The call's arguments as sent (JSON text, usually an object; any ``str`` is accepted).

    Returns
    -------
    (str, list of (str, str))
        The call line (``-> name`` and the inline arguments, ``key=value`` separated by one space), and for each
        string argument of more than one line or more than :data:`INLINE_MAX` characters, ``(key, text)`` in source
        order, the text unchanged (real line breaks). Arguments that are not a JSON object give
        ``("-> name " + arguments, [])``: drawn as they came. Never raises.

    Examples
    --------
    >>> call_lines("edit", '{"path": "src/app.py", "line": 12, "text": "a = 1\\nb = 2"}')
    ('-> edit path=src/app.py line=12', [('text', 'a = 1\nb = 2')])
    >>> print(call_lines("bash", '{"command": "grep -n \\"x\\" a.py", "ids": [1, 2], "dry": false}')[0])
    -> bash command='grep -n "x" a.py' ids=[1,2] dry=false
    >>> call_lines("apply_patch", "*** Begin Patch")
    ('-> apply_patch *** Begin Patch', [])
    """
    pairs = _decode(arguments)
    if pairs is None:
        return (f"-> {name} {arguments}" if arguments else f"-> {name}"), []
    inline, blocks = [], []
    for key, v in pairs:
        if _is_block(v):
            blocks.append((key, v))
        elif isinstance(v, str) and not isinstance(v, _Num):
            inline.append(f"{key}={_quoted(v)}")
        else:
            inline.append(f"{key}={_compact(v)}")
    return " ".join([f"-> {name}"] + inline), blocks
