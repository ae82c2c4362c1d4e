"""The values the format table is made of: the :class:`Source` a reader is handed, a format's
:class:`FormatInfo` and its :class:`ReaderSpec` row, and :func:`guard`, which every read goes through
(:mod:`snapglyph.readers.table` holds the rows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from ..errors import FormatError
from .common import ReadResult
from .gemini_api import is_gemini_request
from .requests import detect_request

__all__ = ["KINDS", "FormatInfo", "ReaderSpec", "Source", "entries_of", "guard", "is_wrapped_call", "objects_only", "request_body"]

#: The kinds of input a :class:`Source` holds: a parsed JSON document, JSON lines (a list of objects), text that
#: is no JSON, a folder, a request body handed over as a value (:func:`~snapglyph.readers.registry.from_request`),
#: and a SQLite file (its :class:`~pathlib.Path`).
KINDS = ("json", "jsonl", "text", "folder", "request", "sqlite")


@dataclass
class Source:
    """One input as detection sees it.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    data : Any
        The parsed JSON document (``json``, ``request``), the list of JSON-lines objects (``jsonl``), the text
        (``text``) or the folder's :class:`~pathlib.Path` (``folder``).
    name : str
        The file's name (or ``"<stdin>"``), in errors and for name hints such as Cline's
        ``api_conversation_history.json``.
    path : str or None
        The file's path, for errors' ``path``; None for text and bodies given as values.

    Examples
    --------
    >>> Source("json", {"messages": [{"role": "user", "content": "hi"}]}).dialect
    'openai'
    >>> Source("jsonl", [{"type": "session", "id": "s1"}]).dialect is None
    True
    """

    kind: str
    data: Any
    name: str = "<stdin>"
    path: str | None = None

    @cached_property
    def dialect(self) -> str | None:
        """The request dialect of :func:`request_body` (``openai``, ``anthropic``, ``responses`` or ``gemini``);
        None when the source holds no request body. Worked out once per source.

        Raises
        ------
        FormatError
            A body shaped like a request that is none (``'messages'`` not a list, ...), with the source's path.
        """
        body = request_body(self)
        if body is None and self.kind != "request":  # a body handed over is checked whatever it is
            return None
        try:
            return guard(detect_request, body, path=self.path, what="request body")
        except FormatError as e:
            raise FormatError(str(e), path=self.path) from None


class FormatInfo(NamedTuple):
    """What is said about a format: ``snapglyph formats``'s line, the README's, the loader's errors."""

    #: What the format is, as ``snapglyph formats`` prints it.
    reads: str
    #: Where such a file usually lives.
    example: str
    #: The format in errors: ``malformed <noun>: ...`` and the "expected ..." lists (:func:`expected`).
    noun: str
    #: The :data:`KINDS` of input ``detect`` is tried on (and the errors list the format for).
    kinds: tuple[str, ...]


class ReaderSpec(NamedTuple):
    """One row of :data:`TABLE`: a format, how to know it, how to read it, what to say about it."""

    #: The format's name (``Transcript.format``).
    name: str
    #: Whether a :class:`Source` of one of ``info.kinds`` is in this format.
    detect: Callable[[Source], bool]
    #: The source read: messages (ids assigned later), tools, model, format facts.
    read: Callable[[Source], ReadResult]
    #: What ``snapglyph formats``, the README and errors say about it.
    info: FormatInfo
    #: Where the format's file may hold several conversations: the source cut into ``(label, source)`` pairs, one
    #: a conversation, in file order (:mod:`snapglyph.readers.sessions`); None for a format of one conversation.
    split: Callable[[Source], list[tuple[str, Source]]] | None = None


def guard(fn: Callable, *args: Any, path: str | None = None, what: str = "input") -> Any:
    """Call ``fn(*args)``; a stray TypeError, AttributeError, KeyError, IndexError or ValueError from a wrongly
    typed field (and a RecursionError) becomes a one-line :class:`~snapglyph.errors.FormatError` about ``what``.

    Examples
    --------
    >>> guard(lambda d: d["messages"][0], {"messages": "hi"}, what="request")
    'h'
    >>> try:
    ...     guard(lambda d: d["messages"]["x"], {"messages": "hi"}, what="request")
    ... except FormatError as e:
    ...     print(e)
    malformed request: a field has an unexpected type or value (TypeError: string indices must be integers, not 'str')
    """
    try:
        return fn(*args)
    except FormatError:
        raise
    except RecursionError:
        raise FormatError(f"{what} nests too deeply to read", path=path) from None
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as e:
        raise FormatError(f"malformed {what}: a field has an unexpected type or value ({type(e).__name__}: {e})",
                          path=path) from None


# ------------------------------------------------------------------------------------------------ source shapes
def objects_only(doc: Any) -> bool:
    """Whether ``doc`` is a non-empty JSON list of objects.

    Examples
    --------
    >>> objects_only([{"role": "user"}]), objects_only([]), objects_only([{"a": 1}, "x"])
    (True, False, False)
    """
    return isinstance(doc, list) and bool(doc) and all(isinstance(m, dict) for m in doc)


def entries_of(src: Source) -> list[dict] | None:
    """The records of a session-like source: its JSON lines, or a JSON list of objects; None otherwise.

    Examples
    --------
    >>> entries_of(Source("json", [{"type": "user"}])), entries_of(Source("json", {"messages": []}))
    ([{'type': 'user'}], None)
    """
    if src.kind == "jsonl":
        return src.data
    return src.data if src.kind == "json" and objects_only(src.data) else None


def is_wrapped_call(doc: Any) -> bool:
    """A JSON object holding a request under ``"request"`` (a logged call), with no content of its own.

    Examples
    --------
    >>> is_wrapped_call({"request": {"messages": []}, "latency": 3}), is_wrapped_call({"messages": []})
    (True, False)
    """
    return (isinstance(doc, dict) and isinstance(doc.get("request"), (dict, list)) and "messages" not in doc
            and "input" not in doc)


def request_body(src: Source) -> Any:
    """The request body a source holds, or None: a body handed over (``request``), a JSON object with
    ``messages``, ``input``, ``instructions`` or Gemini ``contents`` (or one under ``"request"``), a JSON list of
    objects with ``role`` or ``type``, or JSON lines that all have a ``role``.

    Examples
    --------
    >>> request_body(Source("json", {"request": {"input": "hi"}, "response": {}}))
    {'input': 'hi'}
    >>> request_body(Source("jsonl", [{"role": "user"}, {"type": "x"}])) is None
    True
    """
    doc = src.data
    if src.kind == "request":
        return doc
    if src.kind == "jsonl":
        return doc if doc and all("role" in e for e in doc) else None
    if src.kind != "json":
        return None
    if is_wrapped_call(doc):
        return doc["request"]
    if isinstance(doc, dict):
        return doc if ("messages" in doc or "input" in doc or "instructions" in doc
                       or is_gemini_request(doc)) else None
    return doc if objects_only(doc) and any("role" in m or "type" in m for m in doc) else None


# ---------------------------------------------------------------------------------------------- detect and read
