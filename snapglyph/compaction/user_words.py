"""The user's own words: every message the user typed in the middle, kept verbatim as text in the snapshot message.

User messages are few, short, and carry the task's constraints ("never use curl"); a page dropped for the budget
must not take them along. So the snapshot text repeats them (text parts of ``user`` messages; tool results and
images are not the user's words)::

    The user's messages among them, verbatim:
    [#12 user] never use curl
    [#40 user] now run the tests

A message of more than :data:`~snapglyph._config.USER_TEXT_MAX` characters keeps its start and its end with a
marked gap between (``[... 3,412 characters not repeated here: recall #40 ...]``). The whole section takes at most
a cap in tokens (a share of the budget, :data:`~snapglyph._config.USER_SHARE` by default); beyond it the newest
messages are kept. Deterministic.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .._config import USER_TEXT_MAX
from ..model.messages import Message

__all__ = ["USER_HEADING", "entry", "typed_text", "user_texts", "user_words_text"]



USER_HEADING = "The user's messages among them, verbatim:"
"""First line of the section."""


def _shortened(text: str, mid: int) -> str:
    if len(text) <= USER_TEXT_MAX:
        return text
    half = USER_TEXT_MAX // 2
    gap = len(text) - 2 * half
    return f"{text[:half]}\n[... {gap:,} characters not repeated here: recall #{mid} ...]\n{text[-half:]}"


def typed_text(m: Message) -> str:
    """The typed text of one message: for a ``user`` message its non-blank text parts joined by newlines (whole up
    to :data:`~snapglyph._config.USER_TEXT_MAX` characters, else start and end with a marked gap); empty for any
    other role.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> typed_text(Message(3, "user", [Part("text", text="a"), Part("text", text=" "), Part("text", text="b")]))
    'a\\nb'
    """
    if m.role != "user":
        return ""
    text = "\n".join(p.text for p in m.parts if p.kind == "text" and p.text.strip())
    return _shortened(text, m.id) if text else ""


def entry(mid: int, text: str) -> str:
    """One message's line in the section (after a line break): ``[#12 user] text``.

    Examples
    --------
    >>> entry(12, "never use curl")
    '\\n[#12 user] never use curl'
    """
    return f"\n[#{mid} user] {text}"


def user_texts(messages: Sequence[Message]) -> list[tuple[int, str]]:
    """The typed text of each user message in ``messages``: ``(id, text)``, oldest first.

    Parameters
    ----------
    messages : sequence of Message
        E.g. the middle of a conversation (source messages).

    Returns
    -------
    list of (int, str)
        For each ``user`` message with non-blank text parts: its text parts joined by newlines, whole up to
        :data:`~snapglyph._config.USER_TEXT_MAX` characters, else its start and end with a marked gap. Tool
        results, images and the messages of other roles are left out.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> user_texts([Message(3, "user", [Part("text", text="never use curl")]),
    ...             Message(4, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="x")])])])
    [(3, 'never use curl')]
    >>> len(user_texts([Message(5, "user", [Part("text", text="a" * 5000)])])[0][1])
    2057
    """
    return [(m.id, t) for m in messages if (t := typed_text(m))]


def user_words_text(texts: Sequence[tuple[int, str]], cap: int, count: Callable[[str], int]) -> tuple[str, list[int]]:
    """The section of the snapshot text that repeats the user's messages, within ``cap`` tokens.

    Parameters
    ----------
    texts : sequence of (int, str)
        :func:`user_texts` of the middle.
    cap : int
        Most tokens the section may take (as counted by ``count``); 0 or less: no section.
    count : callable
        ``count(text) -> int`` tokens of a text as sent.

    Returns
    -------
    (str, list of int)
        The section (heading, then ``[#id user] text`` per message, oldest first; empty when nothing fits) and the
        ids of the messages it holds: the newest ones whose entries fit the cap together.

    Examples
    --------
    >>> text, ids = user_words_text([(3, "never use curl"), (9, "run the tests")], 1000, len)
    >>> print(text)
    The user's messages among them, verbatim:
    [#3 user] never use curl
    [#9 user] run the tests
    >>> user_words_text([(3, "never use curl"), (9, "run the tests")], 70, len)[1]
    [9]
    """
    if cap <= 0 or not texts:
        return "", []
    used = count(USER_HEADING)
    chosen: list[tuple[int, str]] = []
    for mid, text in reversed(texts):
        line = entry(mid, text)
        cost = count(line)
        if used + cost > cap:
            break
        used += cost
        chosen.append((mid, line))
    chosen.reverse()
    text = USER_HEADING + "".join(e for _, e in chosen)
    while chosen and count(text) > cap:  # the entries' sum is an estimate: trim the oldest to the true count
        chosen.pop(0)
        text = USER_HEADING + "".join(e for _, e in chosen)
    if not chosen:
        return "", []
    return text, [mid for mid, _ in chosen]
