"""Reader for Cline and Roo Code task histories (``api_conversation_history.json``).

Schema sources (read 2026-12-01): Cline (github.com/cline/cline) stores each task's model history in
``<globalStorage>/tasks/<task id>/api_conversation_history.json`` as a JSON list of Anthropic ``MessageParam``
objects (``role`` user/assistant, ``content`` a string or content blocks) with a ``ts`` (ms since the epoch); Roo
Code (github.com/RooCodeInc/Roo-Code, ``src/core/task-persistence/apiMessages.ts`` type ``ApiMessage`` and
``getEffectiveApiHistory`` in ``src/core/condense/index.ts``) adds

- ``isSummary`` + ``condenseId`` on a condensing summary, and ``condenseParent`` (that id) on each message it
  replaced;
- ``isTruncationMarker`` + ``truncationId`` on a sliding-window marker, and ``truncationParent`` on each message it
  hid;
- ``type: "reasoning"`` entries with ``encrypted_content`` (OpenAI reasoning kept for the next request).

The conversation is the live history Roo sends: a message whose ``condenseParent`` names an existing summary, or
whose ``truncationParent`` names an existing marker, is not part of it; those are skipped and counted in
``meta["condensed"]`` / ``meta["truncated"]`` (a parent id that names no existing summary keeps the message, as
Roo does). Content blocks are read as Anthropic blocks (:func:`snapglyph.readers.anthropic.read_anthropic`): a user
message with ``tool_result`` blocks becomes a ``tool`` message. A reasoning entry becomes a redacted ``thinking``
part of the next assistant message (never drawn, never sent). ``ts``, ``id`` and the Roo fields ride along in each
message's ``meta["cline"]``. Cline-style agents send tool results and their own notices as user text; a text part
is marked typed by a person (``Part.meta["typed"]``) only where it is wrapped as Cline wraps the user's words
(:data:`TYPED_WRAPPERS`; ``<feedback>\\n${text}\\n</feedback>`` and the like in ``src/core/task`` of
github.com/cline/cline, read 2026-12-04); a condensing summary is not.
"""

from __future__ import annotations

from typing import Any

from ..errors import FormatError
from ..model.messages import Part
from .anthropic import read_anthropic
from .common import ReadResult

__all__ = [
    "TYPED_WRAPPERS",
    "is_cline",
    "read_cline",
]

TYPED_WRAPPERS = ("<task>", "<feedback>", "<answer>", "<user_message>")
"""The tags Cline and Roo Code wrap a person's words in when they send them to the model (the task, feedback on a
result, the answer to a follow-up question; Roo's ``<user_message>``): only text that starts with one is marked
typed; tool results, ``<environment_details>`` and the agents' own notices sent as user text are not."""

_ROO_KEYS = ("ts", "id", "isSummary", "condenseId", "condenseParent", "truncationParent", "isTruncationMarker",
             "truncationId")
_MARK_KEYS = frozenset({"ts", "isSummary", "condenseParent", "truncationParent", "isTruncationMarker", "condenseId"})


def is_cline(doc: Any, name: str = "") -> bool:
    """Whether a parsed JSON list is a Cline/Roo API history (named so, or messages carrying ``ts``/Roo fields).

    Examples
    --------
    >>> is_cline([{"role": "user", "content": "hi", "ts": 1}]), is_cline([{"role": "user", "content": "hi"}])
    (True, False)
    >>> is_cline([{"role": "user", "content": "hi"}], "api_conversation_history.json")
    True
    """
    if not (isinstance(doc, list) and doc and all(isinstance(m, dict) for m in doc)):
        return False
    if not all(m.get("role") in ("user", "assistant") or m.get("type") == "reasoning" for m in doc):
        return False
    return name == "api_conversation_history.json" or any(_MARK_KEYS & set(m) for m in doc)


def _live(doc: list[dict]) -> tuple[list[dict], int, int]:
    summaries = {m.get("condenseId") for m in doc if m.get("isSummary") and m.get("condenseId")}
    markers = {m.get("truncationId") for m in doc if m.get("isTruncationMarker") and m.get("truncationId")}
    live, condensed, truncated = [], 0, 0
    for m in doc:
        if m.get("condenseParent") and m["condenseParent"] in summaries:
            condensed += 1
        elif m.get("truncationParent") and m["truncationParent"] in markers:
            truncated += 1
        else:
            live.append(m)
    return live, condensed, truncated


def read_cline(doc: list, path: str | None = None) -> ReadResult:
    """Read a Cline or Roo Code ``api_conversation_history.json`` (see the module docstring for the rules).

    Parameters
    ----------
    doc : list of dict
        The parsed JSON list.
    path : str, optional
        The file it came from, named in errors.

    Returns
    -------
    ReadResult
        No tools (the file stores none), no model, and ``meta`` with ``entries``, ``condensed``, ``truncated``, ``reasoning``.

    Raises
    ------
    FormatError
        An entry that is not an object, a role other than user/assistant, or content of the wrong type.

    Examples
    --------
    >>> h = [{"role": "user", "content": "old", "ts": 1, "condenseParent": "c1"},
    ...      {"role": "user", "content": "summary", "ts": 2, "isSummary": True, "condenseId": "c1"},
    ...      {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": 3}]
    >>> msgs, _, _, meta = read_cline(h)
    >>> [m.text() for m in msgs], meta["condensed"]
    (['summary', 'ok'], 1)
    >>> msgs = read_cline([{"role": "user", "ts": 1, "content": [{"type": "text", "text": "<task>\\nfix it\\n</task>"},
    ...     {"type": "text", "text": "<environment_details>...</environment_details>"}]}]).messages
    >>> [p.meta["typed"] for p in msgs[0].parts]
    [True, False]
    """
    if not isinstance(doc, list):
        raise FormatError(f"a Cline history is a JSON list, not a {type(doc).__name__}", path=path)
    for i, m in enumerate(doc):
        if not isinstance(m, dict):
            raise FormatError(f"entry {i} is a {type(m).__name__}, expected a JSON object", path=path)
    live, condensed, truncated = _live(doc)
    plain, marks, reasoning = [], [], []
    pending: list[Part] = []
    for m in live:
        if m.get("type") == "reasoning":
            info = {"redacted": True, "encrypted_content": m.get("encrypted_content"), "summary": m.get("summary")}
            pending.append(Part(kind="thinking", meta=info))
            reasoning.append(m)
            continue
        plain.append({"role": m.get("role"), "content": m.get("content")})
        marks.append(({k: m[k] for k in _ROO_KEYS if k in m}, pending if m.get("role") == "assistant" else []))
        if m.get("role") == "assistant":
            pending = []
    msgs, _, _, _ = read_anthropic(plain, path)
    for msg, (info, thinking) in zip(msgs, marks):
        if info:
            msg.meta["cline"] = info
        msg.parts[:0] = thinking
        for p in msg.parts if msg.role in ("user", "tool") else ():
            if p.kind == "text":
                p.meta["typed"] = not info.get("isSummary") and p.text.lstrip().startswith(TYPED_WRAPPERS)
    meta = {"entries": len(doc), "condensed": condensed, "truncated": truncated, "reasoning": len(reasoning)}
    return ReadResult(msgs, [], None, meta)
