"""The user's own words: what a person typed in the middle, kept verbatim as text in the snapshot message.

A person's messages are few, short, and carry the task's constraints ("never use curl"); a page dropped for the
budget must not take them along. So the snapshot text repeats them, newest first::

    The user's own messages among them, newest first, verbatim:
    [#40 user] now run the tests
    [#12 user] never use curl

Only what a person typed counts (:func:`is_typed`): each reader marks the text its format says a person typed
(``Part.meta["typed"]``, :func:`snapglyph.readers.common.mark_typed`), so aider's console output, Claude Code's
command records and continuation summaries, Codex's environment context and AGENTS.md instructions, and tool
results sent as user text by Cline-style agents are left out; text no reader marked (a request body, which does not
say who wrote a user turn) counts unless it is a harness's own wrapper
(:func:`snapglyph.readers.common.harness_text`). A text typed again is repeated once, under its newest message; a
text already verbatim in the head (a text part of the head, or one of 80 characters or more found in the head's
text) is not repeated.

A message of more than :data:`~snapglyph._config.USER_TEXT_MAX` characters keeps its start and its end with a
marked gap between (``[... 3,412 characters not repeated here: recall #40 ...]``). The whole section takes at most
a cap in tokens (a share of the budget, :data:`~snapglyph._config.USER_SHARE` by default, and
:data:`USER_PAGE_SHARE` of the planned pages' image tokens); beyond it the newest messages are kept and one closing
line names the older ones left out. Deterministic.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .._config import USER_TEXT_MAX
from ..model.attachments import is_attachment
from ..model.messages import Message, Part
from ..readers.common import harness_text

__all__ = ["USER_HEADING", "USER_PAGE_SHARE", "entry", "is_typed", "typed_text", "user_texts", "user_words_text"]


USER_HEADING = "The user's own messages among them, newest first, verbatim:"
"""First line of the section."""

USER_PAGE_SHARE = 0.04
"""Most tokens the section takes, as a share of the image tokens of the pages the compaction plans to keep (beside
its share of the budget). Measured (bench/RESULTS.md, snapshot text): on the aider history the typed messages of
the middle alone cost 17,166 tokens beside 32,526 tokens of pages (53%); with the ledger's 10% and the guide's
~200 tokens, 4% keeps the whole snapshot text near the goal of at most 15% of the pages' image tokens."""

HEAD_MATCH_MIN = 80
"""Characters from which a typed text found anywhere in the head's text counts as already there (a shorter one
counts only where it is a whole text part of the head: "continue" is in many system prompts)."""


def _shortened(text: str, mid: int) -> str:
    if len(text) <= USER_TEXT_MAX:
        return text
    half = USER_TEXT_MAX // 2
    gap = len(text) - 2 * half
    return f"{text[:half]}\n[... {gap:,} characters not repeated here: recall #{mid} ...]\n{text[-half:]}"


def is_typed(p: Part) -> bool:
    """Whether ``p`` is text a person typed: a non-blank text part its reader marked typed, or, where no reader
    marked it, one that no harness rule names (:func:`~snapglyph.readers.common.harness_text`).

    Examples
    --------
    >>> is_typed(Part("text", text="fix it")), is_typed(Part("text", text="> ok", meta={"typed": False}))
    (True, False)
    >>> is_typed(Part("text", text="<environment_context>...</environment_context>"))
    False
    """
    if p.kind != "text" or not p.text.strip() or is_attachment(p.meta.get("source_block")):
        return False  # an attachment's stand-in text is drawn, not the user's words
    mark = p.meta.get("typed")
    return bool(mark) if mark is not None else not harness_text(p.text)


def _typed(m: Message) -> str:
    if m.role != "user" or m.meta.get("snapshot") is not None:
        return ""
    return "\n".join(p.text for p in m.parts if is_typed(p))


def typed_text(m: Message) -> str:
    """The typed text of one message: for a ``user`` message its typed text parts (:func:`is_typed`) joined by
    newlines (whole up to :data:`~snapglyph._config.USER_TEXT_MAX` characters, else start and end with a marked
    gap); empty for any other role, and for a snapshot message.

    Examples
    --------
    >>> typed_text(Message(3, "user", [Part("text", text="a"), Part("text", text=" "), Part("text", text="b")]))
    'a\\nb'
    >>> typed_text(Message(4, "user", [Part("text", text="Tokens: 8.8k sent", meta={"typed": False})]))
    ''
    """
    text = _typed(m)
    return _shortened(text, m.id) if text else ""


def entry(mid: int, text: str) -> str:
    """One message's line in the section (after a line break): ``[#12 user] text``.

    Examples
    --------
    >>> entry(12, "never use curl")
    '\\n[#12 user] never use curl'
    """
    return f"\n[#{mid} user] {text}"


def _in_head(text: str, parts: set[str], joined: str) -> bool:
    s = text.strip()
    return s in parts or (len(s) >= HEAD_MATCH_MIN and s in joined)


def user_texts(messages: Sequence[Message], head: Sequence[Message] = ()) -> list[tuple[int, str]]:
    """The typed text of each user message in ``messages``: ``(id, text)``, oldest first, each text once.

    Parameters
    ----------
    messages : sequence of Message
        E.g. the middle of a conversation (source messages).
    head : sequence of Message
        The messages sent verbatim before them (the system prompt and the first user turn): a typed text already
        there is left out.

    Returns
    -------
    list of (int, str)
        For each ``user`` message with typed text (:func:`typed_text`): that text, whole up to
        :data:`~snapglyph._config.USER_TEXT_MAX` characters, else its start and end with a marked gap. A text typed
        again is listed once, at its newest message. Tool results, images, what a harness wrote and the messages
        of other roles are left out.

    Examples
    --------
    >>> user_texts([Message(3, "user", [Part("text", text="never use curl")]),
    ...             Message(4, "tool", [Part("tool_result", call_id="c", content=[Part("text", text="x")])]),
    ...             Message(5, "user", [Part("text", text="run it")]), Message(6, "user", [Part("text", text="run it")])])
    [(3, 'never use curl'), (6, 'run it')]
    >>> user_texts([Message(3, "user", [Part("text", text="fix the bug")])],
    ...            head=[Message(1, "user", [Part("text", text="fix the bug")])])
    []
    >>> len(user_texts([Message(5, "user", [Part("text", text="a" * 5000)])])[0][1])
    2057
    """
    head_parts = {p.text.strip() for m in head for p in m.parts if p.kind == "text"}
    joined = "\n".join(head_parts)
    seen: set[str] = set()
    out = []
    for m in reversed(messages):
        text = _typed(m)
        if not text or text in seen or _in_head(text, head_parts, joined):
            continue
        seen.add(text)
        out.append((m.id, _shortened(text, m.id)))
    out.reverse()
    return out


def _cut_line(left: Sequence[int]) -> str:
    if len(left) == 1:
        return f"\n(1 older message of the user not repeated here: #{left[0]})"
    return f"\n({len(left)} older messages of the user not repeated here, #{min(left)} to #{max(left)})"


def user_words_text(texts: Sequence[tuple[int, str]], cap: int, count: Callable[[str], int]) -> tuple[str, list[int]]:
    """The section of the snapshot text that repeats the user's messages, within ``cap`` tokens.

    Parameters
    ----------
    texts : sequence of (int, str)
        :func:`user_texts` of the middle, oldest first.
    cap : int
        Most tokens the section may take (as counted by ``count``); 0 or less: no section.
    count : callable
        ``count(text) -> int`` tokens of a text as sent.

    Returns
    -------
    (str, list of int)
        The section (heading, then ``[#id user] text`` per message, newest first, and where the cap left older
        ones out a closing line naming them; empty when nothing fits) and the ids of the messages it holds: the
        newest ones whose entries fit the cap together.

    Examples
    --------
    >>> text, ids = user_words_text([(3, "never use curl"), (9, "run the tests")], 1000, len)
    >>> print(text)
    The user's own messages among them, newest first, verbatim:
    [#9 user] run the tests
    [#3 user] never use curl
    >>> print(user_words_text([(3, "never use curl. " * 5), (9, "run the tests")], 140, len)[0])
    The user's own messages among them, newest first, verbatim:
    [#9 user] run the tests
    (1 older message of the user not repeated here: #3)
    """
    if cap <= 0 or not texts:
        return "", []
    newest = list(reversed(texts))
    chosen = _fill(newest, cap, count)
    if len(chosen) < len(newest):  # cut: leave room for the closing line
        chosen = _fill(newest, cap - count(_cut_line([m for m, _ in newest[len(chosen):]])), count)
    text = _write(newest, chosen)
    while chosen and count(text) > cap:  # the entries' sum is an estimate: trim the oldest to the true count
        chosen.pop()
        text = _write(newest, chosen)
    if not chosen:
        return "", []
    return text, [mid for mid, _ in chosen]


def _fill(newest: list[tuple[int, str]], room: int, count: Callable[[str], int]) -> list[tuple[int, str]]:
    used = count(USER_HEADING)
    chosen: list[tuple[int, str]] = []
    for mid, text in newest:
        line = entry(mid, text)
        cost = count(line)
        if used + cost > room:
            break
        used += cost
        chosen.append((mid, line))
    return chosen


def _write(newest: list[tuple[int, str]], chosen: list[tuple[int, str]]) -> str:
    left = [mid for mid, _ in newest[len(chosen):]]
    return USER_HEADING + "".join(e for _, e in chosen) + (_cut_line(left) if left and chosen else "")
