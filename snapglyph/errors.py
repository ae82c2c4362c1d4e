"""The snapglyph exception tree.

Every error the project raises on purpose derives from :class:`SnapglyphError`, so a caller can catch the whole
family with one ``except``; each subclass also derives from the matching builtin (``ValueError``, ``OSError``...)
so generic handlers keep working::

    SnapglyphError
    ├── InputError (ValueError)          bad arguments or bad input data
    │   ├── FormatError                  a transcript or request in no supported / a malformed format
    │   ├── UnknownProfileError (KeyError-free: ValueError)   a profile name that is not known
    │   └── ValidationError              a request that breaks a dialect's grammar
    ├── FontError (OSError)              a bundled font is missing or unreadable
    ├── RenderError (RuntimeError)       the rasterizer could not lay out or draw the text
    ├── BudgetError (ValueError)         the head, pages and newest round cannot fit the token budget
    ├── CompactionStormError (RuntimeError)  a conversation needs a new cut too often to be kept under its window
    ├── LimitError (ValueError)          a provider limit (images, bytes) cannot be met
    ├── StoreError (RuntimeError)        the source store lacks a covered id, or cannot be read/written
    ├── InternalError (RuntimeError)     snapglyph built something it must never build (a bug: please report it)
    ├── ProviderError (RuntimeError)     an agent-demo provider call failed in a way that is not an overflow
    └── ServeError (RuntimeError)        ``snapglyph serve`` cannot start (port in use, upstream unreachable)

Context goes in keyword-only attributes, never only in the message.
"""

from __future__ import annotations

__all__ = [
    "BudgetError",
    "CompactionStormError",
    "FontError",
    "FormatError",
    "InputError",
    "InternalError",
    "LimitError",
    "ProviderError",
    "RenderError",
    "ServeError",
    "SnapglyphError",
    "StoreError",
    "UnknownProfileError",
    "ValidationError",
]


class SnapglyphError(Exception):
    """Base class of every error snapglyph raises on purpose.

    Examples
    --------
    >>> import snapglyph
    >>> try:
    ...     snapglyph.profile("no-such-reader")
    ... except SnapglyphError as e:
    ...     print(type(e).__name__)
    UnknownProfileError
    """


class InputError(SnapglyphError, ValueError):
    """Bad arguments or bad input data (wrong type, malformed value).

    Examples
    --------
    >>> issubclass(InputError, ValueError), str(InputError("budget must be positive"))
    (True, 'budget must be positive')
    """


class FormatError(InputError):
    """A transcript or request file is malformed or in no supported format.

    Attributes
    ----------
    path : str or None
        The file that failed, when there is one.

    Examples
    --------
    >>> FormatError("not a transcript", path="notes.txt").path
    'notes.txt'
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class UnknownProfileError(InputError):
    """A reader profile name (or model name) that no profile matches; the message lists the known names.

    Examples
    --------
    >>> issubclass(UnknownProfileError, InputError)
    True
    """


class ValidationError(InputError):
    """A request breaks a dialect's grammar or a profile's limits.

    Attributes
    ----------
    faults : list
        The faults found (see :func:`snapglyph.validate`).

    Examples
    --------
    >>> ValidationError("bad request", faults=["messages[0]: empty"]).faults
    ['messages[0]: empty']
    """

    def __init__(self, message: str, *, faults: list | None = None) -> None:
        super().__init__(message)
        self.faults = list(faults or [])


class FontError(SnapglyphError, OSError):
    """A bundled font file is missing, unreadable, or has no usable glyphs at the requested cell size.

    Examples
    --------
    >>> issubclass(FontError, OSError) and issubclass(FontError, SnapglyphError)
    True
    """


class RenderError(SnapglyphError, RuntimeError):
    """The rasterizer could not lay out or draw the text.

    Examples
    --------
    >>> issubclass(RenderError, RuntimeError)
    True
    """


class BudgetError(SnapglyphError, ValueError):
    """The request cannot fit the token budget.

    Attributes
    ----------
    needed : int or None
        Tokens the smallest valid request would cost.
    budget : int or None
        The budget in tokens.

    Examples
    --------
    >>> e = BudgetError("too big", needed=5200, budget=4000)
    >>> e.needed - e.budget
    1200
    """

    def __init__(self, message: str, *, needed: int | None = None, budget: int | None = None) -> None:
        super().__init__(message)
        self.needed = needed
        self.budget = budget


class CompactionStormError(SnapglyphError, RuntimeError):
    """A conversation needs a new cut too often to be kept under its window: more than
    :data:`~snapglyph._config.STORM_CUTS` new cuts within :data:`~snapglyph._config.STORM_REQUESTS` of its requests
    (:func:`snapglyph.compaction.storms.storm`). Raised instead of another rewrite, each of which re-bills the
    prompt cache; the message names the conversation's largest message.

    Attributes
    ----------
    cuts, requests : int
        The new cuts counted, and the requests they were counted in.
    largest : tuple of (int, str, int) or None
        ``(index, role, estimated tokens)`` of the request's largest message (item), when it has one.

    Examples
    --------
    >>> e = CompactionStormError("cannot be kept under the window", cuts=5, requests=10, largest=(3, "tool", 4200))
    >>> isinstance(e, RuntimeError), e.cuts, e.largest[1]
    (True, 5, 'tool')
    """

    def __init__(self, message: str, *, cuts: int = 0, requests: int = 0,
                 largest: "tuple[int, str, int] | None" = None) -> None:
        super().__init__(message)
        self.cuts = cuts
        self.requests = requests
        self.largest = largest


class LimitError(SnapglyphError, ValueError):
    """A provider limit (images per request, bytes per image, request bytes) cannot be met.

    Attributes
    ----------
    limit : str or None
        The name of the limit, e.g. ``"max_images"``.

    Examples
    --------
    >>> LimitError("too many images", limit="max_images").limit
    'max_images'
    """

    def __init__(self, message: str, *, limit: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class StoreError(SnapglyphError, RuntimeError):
    """The source store lacks the source of a covered message id, or cannot be read or written.

    Examples
    --------
    >>> issubclass(StoreError, SnapglyphError)
    True
    """


class InternalError(SnapglyphError, RuntimeError):
    """snapglyph's own output failed its own check (e.g. a compacted request the provider would reject).

    Not the caller's fault: the input was accepted, and the bug is here.

    Attributes
    ----------
    faults : list
        The faults found, where the check gives them (see :func:`snapglyph.validate`).

    Examples
    --------
    >>> isinstance(InternalError("a bug"), InputError)
    False
    """

    def __init__(self, message: str, *, faults: list | None = None) -> None:
        super().__init__(message)
        self.faults = list(faults or [])


class ProviderError(SnapglyphError, RuntimeError):
    """A provider call in the agent demo failed in a way that is not a context overflow.

    Examples
    --------
    >>> issubclass(ProviderError, RuntimeError)
    True
    """


class ServeError(SnapglyphError, RuntimeError):
    """``snapglyph serve`` cannot start: the port is in use, the upstream is unreachable, or the state folder
    cannot be written.

    Examples
    --------
    >>> str(ServeError("port 8787 is in use"))
    'port 8787 is in use'
    """
