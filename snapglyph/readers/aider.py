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

from ..model.messages import Message, Part
from .common import ReadResult, mark_typed

__all__ = [
    "AIDER_OWN_INPUT",
    "is_aider",
    "read_aider",
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
    Never raises: any text is a valid (possibly empty) history.

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
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[Message] = []
    sessions: list[dict] = []
    meta: dict = {"sessions": sessions, "preamble": ""}
    if lines and _MODE_LINE.match(lines[0]):
        meta["preamble"] = lines.pop(0)
    model = None
    kind = None  # "user" | "output" | "assistant"
    buf: list[str] = []
    session: int | None = None

    def flush() -> None:
        nonlocal buf, kind
        if kind is None:
            return
        if kind == "assistant":
            while buf and not buf[0].strip():
                buf.pop(0)
            while buf and not buf[-1].strip():
                buf.pop()
            if buf:
                out.append(Message(0, "assistant", [Part(kind="text", text="\n".join(buf))],
                                   {"aider_session": session}))
        elif kind == "user":
            text = "\n".join(buf)
            out.append(Message(0, "user", mark_typed([Part(kind="text", text=text)], _typed(text)),
                               {"aider_session": session}))
        else:
            out.append(Message(0, "user", [Part(kind="text", text="\n".join(buf),
                                                meta={"aider_output": True, "typed": False})],
                               {"aider_session": session, "aider_output": True}))
        buf, kind = [], None

    for line in lines:
        m = _STARTED.match(line)
        if m:
            flush()
            session = len(sessions)
            sessions.append({"started": m.group(1), "first_id": len(out)})
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
            flush()
            kind = new
        buf.append(content)
    flush()
    return ReadResult(out, [], model, meta)
