"""Recall: the exact source of messages shown as pages, by message id, and a tool a model can call for it.

A page can be hard to read (exact hashes, ids, long numbers); the model asks for message ``#N`` and gets its source
text back, byte for byte as it came in (ANSI codes and odd characters included).
"""

from __future__ import annotations

from typing import Iterable

from ..errors import InputError
from ..model.message_ids import parse_ids
from ..model.messages import Message
from .store import SourceStore

__all__ = ["RECALL_TOOL_NAME", "format_recall", "parse_ids", "recall", "recall_tool", "source_text"]

RECALL_TOOL_NAME = "recall_messages"

def source_text(m: Message) -> str:
    """The source text of one message: its text, tool calls (``-> name arguments``) and tool results, unchanged.

    A message made of one text part gives exactly that part's text. Hidden reasoning (``thinking`` parts) and
    signatures are not returned, as they are never drawn: recall gives back what the pages show, exactly.

    Examples
    --------
    >>> from snapglyph import Part
    >>> print(source_text(Message(4, "assistant", [Part("text", text="running the tests"), Part(
    ...     "tool_call", name="bash", arguments='{"cmd": "pytest"}', call_id="c1")])))
    running the tests
    -> bash {"cmd": "pytest"}
    >>> source_text(Message(6, "user", [Part("image", media_type="image/png", width=640, height=480)]))
    '[image image/png 640x480]'
    """
    out: list[str] = []
    for p in m.parts:
        if p.kind == "text":
            out.append(p.text)
        elif p.kind == "tool_call":
            out.append(f"-> {p.name} {p.arguments}")
        elif p.kind == "tool_result":
            out.append(p.result_text())
        elif p.kind == "image":
            from ..model.document import placeholder_for_image
            out.append(placeholder_for_image(p))
    return "\n".join(out)


def recall(store: SourceStore, ids: "str | Iterable[int]") -> dict[int, str]:
    """Return ``{id: source text}`` for messages held in the source store.

    Parameters
    ----------
    store : SourceStore
    ids : str or iterable of int
        See :func:`parse_ids`.

    Raises
    ------
    StoreError
        If an id has no retained source.
    InputError
        For a malformed id list.

    Examples
    --------
    >>> from snapglyph import Message, Part, SourceStore
    >>> store = SourceStore()
    >>> store.put([Message(3, "assistant", [Part("text", text="ran pytest: 2 failed")])])
    >>> recall(store, "#3")
    {3: 'ran pytest: 2 failed'}
    """
    if not isinstance(store, SourceStore):
        raise InputError(f"recall needs the SourceStore a compaction returned, not {type(store).__name__}")
    return {i: source_text(store.get(i)) for i in parse_ids(ids)}


def format_recall(store: SourceStore, ids: "str | Iterable[int]") -> str:
    """Recalled messages as one text: a ``#id role`` line before each message's source text.

    Examples
    --------
    >>> from snapglyph import Message, Part, SourceStore
    >>> store = SourceStore()
    >>> store.put([Message(3, "assistant", [Part("text", text="ran pytest: 2 failed")])])
    >>> print(format_recall(store, [3]))
    #3 assistant
    ran pytest: 2 failed
    """
    blocks = []
    for i in parse_ids(ids):
        m = store.get(i)
        blocks.append(f"#{i} {m.role}\n{source_text(m)}")
    return "\n\n".join(blocks)


def recall_tool(dialect: str = "openai") -> dict:
    """A ready tool definition that lets a model ask for the exact source of messages shown as pages.

    Parameters
    ----------
    dialect : str
        ``openai`` (chat completions), ``responses``, ``anthropic`` or ``gemini`` (a function declaration).

    Raises
    ------
    InputError
        For an unknown dialect.

    Examples
    --------
    >>> t = recall_tool("anthropic")
    >>> t["name"], sorted(t)
    ('recall_messages', ['description', 'input_schema', 'name'])
    """
    desc = ("Return the exact text of earlier conversation messages that are shown as page images, by message "
            "id (the #N in each page's headers). Use it when a page is hard to read or exact text is needed.")
    params = {"type": "object", "properties": {"ids": {"type": "string", "description":
                                                        "Message ids or ranges, e.g. \"12\" or \"#3-#9, 12\"."}},
              "required": ["ids"]}
    if dialect == "anthropic":
        return {"name": RECALL_TOOL_NAME, "description": desc, "input_schema": params}
    if dialect == "responses":
        return {"type": "function", "name": RECALL_TOOL_NAME, "description": desc, "parameters": params}
    if dialect == "openai":
        return {"type": "function", "function": {"name": RECALL_TOOL_NAME, "description": desc,
                                                 "parameters": params}}
    if dialect == "gemini":  # one function declaration, to go in a tool's functionDeclarations
        return {"name": RECALL_TOOL_NAME, "description": desc, "parametersJsonSchema": params}
    raise InputError(f"unknown dialect {dialect!r}; known dialects: openai, anthropic, responses, gemini")
