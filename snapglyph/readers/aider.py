"""Reader for aider's markdown chat history (``.aider.chat.history.md``).

aider appends to one markdown file per repository:

- ``# aider chat started at 2024-08-05 19:33:02`` starts a session (one process run);
- ``#### text`` lines are what the user typed (a multi-line input is several ``#### `` lines);
- ``> text`` lines are aider's own console output (tool output, lint and test runs, confirmations);
- every other line belongs to the assistant's reply (which may hold markdown, code and ``# `` comment lines).

aider appends two spaces (a markdown hard break) to each ``#### `` and ``> `` line; the reader removes exactly
those two spaces, and the ``#### ``/``> `` prefix.

Choices
-------
- Console output has no tool call to answer, and a ``tool`` message without a call breaks every dialect's
  grammar, so each ``> `` block is a **user** message with ``meta["aider_output"] = True`` (its text part carries
  the same mark, and ``meta["typed"] = False``); the text of ``#### `` lines is what a person typed
  (``meta["typed"] = True``, :func:`~snapglyph.readers.common.mark_typed`), except commands to aider (``/add``,
  ``!ls``: aider runs them, the model never reads them) and the blocks aider writes itself
  (:data:`AIDER_OWN_INPUT`). Source: aider's ``InputOutput``
  (``aider/io.py``, github.com/Aider-AI/aider, read 2026-12-04) writes the user's input as ``#### `` lines
  (``user_input``) and its own tool output as ``> `` lines (``tool_output``, ``append_chat_history(...,
  blockquote=True)``).
- Consecutive ``#### `` lines join (with ``\\n``) into one user message; a blank line ends it.
- Session start lines are not messages: ``Transcript.meta["sessions"]`` lists ``{"started", "first_id"}`` and each
  message's ``meta["aider_session"]`` is the index of its session (``None`` before the first marker).
- Blank lines around an assistant reply are trimmed; a reply of only blank lines is no message.
- An Emacs mode line (``-*- mode: ... -*-``) at the very top is kept in ``meta["preamble"]``.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

from ..model.messages import Message, Part
from .common import ReadResult, mark_typed

__all__ = [
    "AIDER_OWN_INPUT",
    "aider_messages",
    "is_aider",
    "read_aider",
    "read_aider_lines",
]

SESSION_START = "# aider chat started at "
"""The start of the line that opens an aider session (the rule of :func:`is_aider`, in one place)."""
AIDER_OWN_INPUT = ("# Question: ", "# Fix any errors below, if possible.")
"""The starts of the ``#### `` blocks aider writes itself: ``/help``'s question with the documentation it found
(``aider/help.py``, ``Help.ask``) and the linter's errors it sends back to the model (``aider/linter.py``); aider
logs both as user input. They are not marked typed."""
_STARTED = re.compile("^" + re.escape(SESSION_START) + r"(.*?)\s*$")
_STARTED_ANY = re.compile("^" + re.escape(SESSION_START), re.M)
_MODE_LINE = re.compile(r"^-\*-.*-\*-\s*$")


def _typed(text: str) -> bool:
    """Whether a ``#### `` block holds words a person wrote to the model: not a command to aider (input starting
    with ``/`` or ``!``: ``Commands.is_command`` in ``aider/commands.py``; ``/ask``, ``/code`` and the like log their
    words again as the next block, which counts), not a block aider writes itself (:data:`AIDER_OWN_INPUT`)."""
    return not text.startswith(("/", "!")) and not text.lstrip().startswith(AIDER_OWN_INPUT)


def is_aider(text: str, name: str = "") -> bool:
    """Whether ``text`` is an aider chat history: it holds a session-start line, or the file is named like one.

    Examples
    --------
    >>> is_aider("# aider chat started at 2024-08-05 19:33:02\\n"), is_aider("# Notes\\n")
    (True, False)
    >>> is_aider("", ".aider.chat.history.md")
    True
    """
    return bool(_STARTED_ANY.search(text)) or name.endswith(".aider.chat.history.md")


def _unbreak(line: str) -> str:
    """Remove the markdown hard break (two trailing spaces, before an optional CR) that aider appends."""
    if line.endswith("  \r"):
        return line[:-3] + "\r"
    if line.endswith("  "):
        return line[:-2]
    return line


def read_aider(text: str) -> ReadResult:
    """Read an aider markdown chat history into neutral messages (see the module docstring for the rules).

    Returns a :class:`~snapglyph.readers.common.ReadResult`: no tools, the model named in the last ``> Model: ...`` /
    ``> Models: ...`` console line (``None`` when absent), and ``meta`` with ``sessions`` and ``preamble``.
    Never raises: any text is a valid (possibly empty) history. :func:`read_aider_lines` reads the same from the
    text's lines, one at a time.

    Examples
    --------
    >>> text = ("# aider chat started at 2024-08-05 19:33:02\\n> Model: gpt-4o with diff edit format  \\n"
    ...         "#### fix the bug  \\n\\nDone.\\n")
    >>> msgs, tools, model, meta = read_aider(text)
    >>> [(m.role, m.text()) for m in msgs]
    [('user', 'Model: gpt-4o with diff edit format'), ('user', 'fix the bug'), ('assistant', 'Done.')]
    >>> [m.parts[0].meta["typed"] for m in msgs[:2]]
    [False, True]
    >>> model, meta["sessions"]
    ('gpt-4o', [{'started': '2024-08-05 19:33:02', 'first_id': 0}])
    """
    return read_aider_lines(text.split("\n"))


def _flush(kind: str | None, buf: list[str], session: int | None, out: list[Message]) -> None:
    """Append the message of the block ``buf`` (its lines, prefixes removed) of ``kind`` to ``out``."""
    if kind is None:
        return
    if kind == "assistant":
        lo, hi = 0, len(buf)
        while lo < hi and not buf[lo].strip():
            lo += 1
        while hi > lo and not buf[hi - 1].strip():
            hi -= 1
        if lo < hi:
            out.append(Message(0, "assistant", [Part(kind="text", text="\n".join(buf[lo:hi]))],
                               {"aider_session": session}))
    elif kind == "user":
        text = "\n".join(buf)
        out.append(Message(0, "user", mark_typed([Part(kind="text", text=text)], _typed(text)),
                           {"aider_session": session}))
    else:
        out.append(Message(0, "user", [Part(kind="text", text="\n".join(buf),
                                            meta={"aider_output": True, "typed": False})],
                           {"aider_session": session, "aider_output": True}))


def _but_last_empty(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` without the last one where it is empty (what a text ending with a newline splits into last)."""
    held = None
    for line in lines:
        if held is not None:
            yield held
        held = line
    if held:
        yield held


def read_aider_lines(lines: Iterable[str]) -> ReadResult:
    """:func:`read_aider` of a text given as its lines, ``text.split("\\n")`` (an iterator is read once, one line
    at a time: only the block being read is held beside the messages).

    Examples
    --------
    >>> msgs, _, _, meta = read_aider_lines(iter(["-*- mode: markdown -*-", "#### hi", "", "Hello.", ""]))
    >>> [(m.role, m.text()) for m in msgs], meta["preamble"]
    ([('user', 'hi'), ('assistant', 'Hello.')], '-*- mode: markdown -*-')
    """
    meta: dict = {}
    out = list(aider_messages(lines, meta))
    return ReadResult(out, [], meta.pop("model"), meta)


def aider_messages(lines: Iterable[str], meta: dict) -> Iterator[Message]:
    """The messages of :func:`read_aider_lines`, yielded as each block ends (nothing but the block being read is
    held). ``meta`` gets ``sessions`` and ``preamble`` as they are read and, once the last line is, ``model``.

    Examples
    --------
    >>> meta = {}
    >>> [m.role for m in aider_messages(["#### hi", "", "Hello.", "> Model: gpt-4o  "], meta)], meta["model"]
    (['user', 'assistant', 'user'], 'gpt-4o')
    """
    out: list[Message] = []  # the messages of the block just ended, handed on at once
    sessions: list[dict] = []
    meta.update(sessions=sessions, preamble="")
    model = None
    kind = None  # "user" | "output" | "assistant"
    buf: list[str] = []
    session: int | None = None
    given = 0
    for n, line in enumerate(_but_last_empty(lines)):
        if n == 0 and _MODE_LINE.match(line):
            meta["preamble"] = line
            continue
        m = _STARTED.match(line)
        if m:
            _flush(kind, buf, session, out)
            buf, kind = [], None
            session = len(sessions)
            given += len(out)
            yield from out
            out.clear()
            sessions.append({"started": m.group(1), "first_id": given})
            continue
        bare = line.rstrip(" \r")
        if bare == "####" or line.startswith("#### "):
            new, content = "user", "" if bare == "####" else _unbreak(line[5:])
        elif bare == ">" or line.startswith("> "):
            new, content = "output", "" if bare == ">" else _unbreak(line[2:])
            s = content.strip()
            if s.startswith(("Model: ", "Models: ", "Main model: ")):
                model = s.split(": ", 1)[1].split(" with ")[0].strip() or model
        else:
            new, content = "assistant", line
        if new != kind:
            _flush(kind, buf, session, out)
            buf, kind = [], new
            given += len(out)
            yield from out
            out.clear()
        buf.append(content)
    _flush(kind, buf, session, out)
    yield from out
    meta["model"] = model
