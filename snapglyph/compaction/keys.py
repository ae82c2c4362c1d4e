"""A conversation's key at the doors: what tells two conversations apart when one process serves many.

``serve``, every adapter of :mod:`snapglyph.integrations` and the agent loop pick a conversation's source store and
state by :func:`conversation_id`, never by a key of their own. The key holds the dialect, the caller's own key where
there is one (a header, a thread or session id, a user), the system prompt and the first user turn (each with its
whitespace left out, as :func:`snapglyph.compaction.second_pass.conversation_key` does). Two users who open with the
same words under different system prompts or caller keys are two conversations; a changed system prompt starts a new
key, which costs a new cut, never a mix of two conversations' messages.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from ..errors import SnapglyphError
from ..readers.registry import from_request
from .second_pass import bare_text, conversation_key

__all__ = ["conversation_id"]

_ITEMS = {"responses": "input", "gemini": "contents"}
"""The field that holds a dialect's conversation items (``messages`` for the others)."""

def _items(dialect: str, body: dict) -> list:
    items = body.get(_ITEMS.get(dialect, "messages"))
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return items if isinstance(items, list) else []


def _system(dialect: str, body: dict) -> Any:
    """The request's system prompt outside its messages (Anthropic ``system``, Responses ``instructions``, Gemini
    ``systemInstruction``); system and developer messages before the first user turn are added to it."""
    key = {"anthropic": "system", "responses": "instructions"}.get(dialect)
    if key is not None:
        return body.get(key)
    return body.get("systemInstruction", body.get("system_instruction")) if dialect == "gemini" else None


def conversation_id(dialect: str, body: dict, *, caller: str | None = None) -> str | None:
    """The key (16 hex digits) of the conversation a request body belongs to, or ``None`` when the body holds no
    user turn snapglyph can read.

    Parameters
    ----------
    dialect : str
        ``"openai"``, ``"anthropic"``, ``"responses"`` or ``"gemini"``: part of the key (the ids, stores and cuts of
        two APIs' conversations never mix).
    body : dict
        The request body; only the items up to its first user turn and its system prompt are read (cheap on long
        bodies).
    caller : str, optional
        The caller's own key of the conversation (``x-snapglyph-conversation``, a LangChain thread id, a LiteLLM
        ``user``, an Agents SDK group id).

    Examples
    --------
    >>> a = conversation_id("openai", {"messages": [{"role": "user", "content": "fix the bug"}]})
    >>> b = conversation_id("openai", {"messages": [{"role": "user", "content": "fix  the bug"}]})
    >>> c = conversation_id("anthropic", {"messages": [{"role": "user", "content": "fix the bug"}]})
    >>> d = conversation_id("openai", {"messages": [{"role": "user", "content": "fix the bug"}]}, caller="thread-2")
    >>> e = conversation_id("openai", {"messages": [{"role": "system", "content": "You are Bob."},
    ...                                             {"role": "user", "content": "fix the bug"}]})
    >>> a == b, len({a, c, d, e}), len(a)
    (True, 4, 16)
    >>> conversation_id("openai", {"messages": [{"role": "assistant", "content": "hi"}]}) is None
    True
    """
    items = _items(dialect, body)
    first = next((i for i, m in enumerate(items) if isinstance(m, dict) and m.get("role") == "user"), None)
    if first is None:
        return None
    try:
        head = json.dumps(items[:first + 1], ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return None
    lead = [m for m in items[:first] if isinstance(m, dict) and m.get("role") in ("system", "developer")]
    system = "".join(_texts(_system(dialect, body))) + "".join(_texts(lead))
    return _key_of(dialect, head, bare_text(system), caller or "")


def _texts(value: Any, depth: int = 0) -> list[str]:
    """The words of a system prompt in any shape (a string, Anthropic text blocks, Responses or chat messages,
    Gemini parts): the strings under ``text``, ``content`` and ``parts``, so the key of a request whose system
    messages a dialect moved into its system field (Responses ``instructions``) is the key of its source.

    Examples
    --------
    >>> _texts([{"role": "system", "content": "be brief"}]), _texts({"parts": [{"text": "be brief"}]})
    (['be brief'], ['be brief'])
    """
    if isinstance(value, str):
        return [value]
    if depth > 8:
        return []
    if isinstance(value, list):
        return [t for v in value for t in _texts(v, depth + 1)]
    if isinstance(value, dict):
        return [t for k in ("text", "content", "parts") if k in value for t in _texts(value[k], depth + 1)]
    return []


@functools.lru_cache(maxsize=1024)
def _key_of(dialect: str, head: str, system: str, caller: str) -> str | None:
    """The key of a first turn (JSON text of the items up to the first user message), a system prompt and a caller
    key."""
    items = json.loads(head)
    mini = {_ITEMS.get(dialect, "messages"): items}
    try:
        first_turn = conversation_key(from_request(mini).messages)
    except SnapglyphError:
        return None
    parts = json.dumps([dialect, caller, system, first_turn], ensure_ascii=True)
    return hashlib.sha256(parts.encode()).hexdigest()[:16]
