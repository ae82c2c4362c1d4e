"""Context windows learned per upstream and model, shared by every conversation to that model (issue 35, item 3).

An upstream's overflow answers teach what its documentation may not say (a region that serves a model at a smaller
window, a gateway's own cap): the window an answer names, the smallest request it refused as too long (an upper bound
of the window) and the largest it answered (a lower bound). :class:`WindowBook` keeps them per ``(upstream, model)``
in one JSON file, ``windows.json`` in a door's folder (``serve``'s state folder, an adapter's store folder), written
atomically (:func:`snapglyph._files.write_atomic`) and re-read before each write, so two processes sharing a folder
each add to what the other wrote (a write that races another may lose that one observation, never the file). Sizes
are in the provider's tokens, reserved output included, as :func:`snapglyph.compaction.budget.counted_size` gives
them. :func:`recovery_budget` is the next-budget rule (:func:`~snapglyph.compaction.budget.next_budget`) fed with
what the book knows, and records the refusal; every door calls it after an overflow and :meth:`WindowBook.answered`
after an answer.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .._config import SERVE_MARGIN
from .._files import write_atomic
from ..errors import StoreError
from ..providers.overflow import OverflowResult
from ..providers.params import output_reserve
from ..providers.profiles import Profile
from .budget import Budget, counted_size, estimate, next_budget

__all__ = ["FILE", "WINDOWS_KEPT", "Learned", "WindowBook", "recovery_budget"]

FILE = "windows.json"
"""The book's file name in a door's folder."""

WINDOWS_KEPT = 512
"""Upstream and model pairs a book keeps (the least recently updated dropped past it): a bound, not a measurement."""


@dataclass(frozen=True)
class Learned:
    """What one upstream and model showed of its window, in provider tokens (reserved output included).

    Attributes
    ----------
    window : int or None
        The window its last overflow answer named.
    accepted : int or None
        The largest request it answered since its last refusal at or below that size: the window is at least this.
    refused : int or None
        The smallest request it refused as too long since an answer at or above that size: the window is below it.

    Examples
    --------
    >>> Learned(accepted=7_000, refused=28_000).refused
    28000
    """

    window: int | None = None
    accepted: int | None = None
    refused: int | None = None


class WindowBook:
    """The windows learned per ``(upstream, model)``, in ``<folder>/windows.json``.

    Parameters
    ----------
    folder : str or os.PathLike or None
        The door's folder (made when first written); ``None``: kept in memory only.
    limit : int
        Pairs kept (:data:`WINDOWS_KEPT`).

    Raises
    ------
    StoreError
        From :meth:`answered` and :meth:`refused`, when the file cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> book = WindowBook(tempfile.mkdtemp())
    >>> book.refused("https://api.example", "m", 28_000)
    >>> book.answered("https://api.example", "m", 7_000)
    >>> book.get("https://api.example", "m"), book.get("https://api.example", "other")
    (Learned(window=None, accepted=7000, refused=28000), Learned(window=None, accepted=None, refused=None))
    >>> WindowBook(book.path.parent).get("https://api.example", "m").accepted      # read again from its file
    7000
    """

    def __init__(self, folder: "str | os.PathLike | None", *, limit: int = WINDOWS_KEPT) -> None:
        self.path = Path(folder) / FILE if folder is not None else None
        self.limit = max(1, int(limit))
        self._lock = threading.Lock()
        self._entries: dict[str, dict] = self._read()

    @staticmethod
    def key(upstream: str, model: str) -> str:
        """The entry's key: ``upstream`` and ``model`` joined by a space (a URL and a model name hold none)."""
        return f"{upstream or '-'} {model or '-'}"

    def _read(self) -> dict[str, dict]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}                                   # none yet, or torn by hand: start afresh
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)} \
            if isinstance(data, dict) else {}

    def get(self, upstream: str, model: str) -> Learned:
        """What is known of ``(upstream, model)`` (nothing: every field ``None``)."""
        with self._lock:
            e = self._entries.get(self.key(upstream, model), {})
        return Learned(*(e.get(f) if isinstance(e.get(f), int) else None for f in ("window", "accepted", "refused")))

    def all(self) -> list[dict]:
        """Every pair known, as plain data (``upstream``, ``model``, ``window``, ``accepted``, ``refused``)."""
        with self._lock:
            items = sorted(self._entries.items())
        return [{"upstream": k.split(" ", 1)[0], "model": k.split(" ", 1)[-1],
                 **{f: e.get(f) for f in ("window", "accepted", "refused")}} for k, e in items]

    def answered(self, upstream: str, model: str, tokens: int) -> None:
        """``(upstream, model)`` answered a request of ``tokens``: the window holds it (a refusal at or below it is
        older than the window now served, and forgotten)."""
        tokens = int(tokens)

        def change(e: dict) -> None:
            e["accepted"] = max(tokens, e.get("accepted") or 0)
            if (e.get("refused") or 0) and e["refused"] <= tokens:
                e.pop("refused")
            if (e.get("window") or 0) and e["window"] < tokens:
                e.pop("window")
        self._update(upstream, model, change, grows=tokens > (self.get(upstream, model).accepted or 0))

    def refused(self, upstream: str, model: str, tokens: int, window: int | None = None) -> None:
        """``(upstream, model)`` refused a request of ``tokens`` as too long, naming ``window`` where it did (an
        answer at or above ``tokens`` is older than the window now served, and forgotten)."""
        tokens = int(tokens)

        def change(e: dict) -> None:
            e["refused"] = min(tokens, e.get("refused") or tokens)
            if (e.get("accepted") or 0) >= tokens:
                e.pop("accepted")
            if window:
                e["window"] = int(window)
        self._update(upstream, model, change, grows=True)

    def _update(self, upstream: str, model: str, change, *, grows: bool) -> None:
        if not grows:
            return                                      # nothing new: no write
        key = self.key(upstream, model)
        with self._lock:
            entries = {**self._entries, **self._read()}  # what another process wrote meanwhile
            e = dict(entries.get(key, {}))
            change(e)
            e["updated"] = time.time()
            entries[key] = e
            if len(entries) > self.limit:
                entries = dict(sorted(entries.items(), key=lambda kv: kv[1].get("updated", 0))[-self.limit:])
            self._entries = entries
            if self.path is None:
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(self.path, json.dumps(entries, sort_keys=True).encode())
            except OSError as err:
                raise StoreError(f"cannot write the learned windows {self.path}: {err.strerror or err}") from None


def recovery_budget(book: WindowBook | None, upstream: str, model: str, overflow: OverflowResult | None,
                    request: dict, profile: "str | Profile", *, window: int | None = None, ratio: float = 1.0,
                    margin: float = SERVE_MARGIN, max_tokens: int | None = None,
                    sent_estimate: int | None = None) -> Budget:
    """:func:`~snapglyph.compaction.budget.next_budget` for ``request``, refused by ``(upstream, model)`` with
    ``overflow``, given what ``book`` learned of that pair (the window it named, else ``window``; the sizes it
    answered and refused); the refusal is then recorded in the book.

    Parameters
    ----------
    book : WindowBook or None
        The door's book (``None``: nothing learned or kept).
    upstream, model : str
        Where the request went: the door's upstream URL (empty where the door does not know it) and the model.
    overflow, request, profile, window, ratio, margin, max_tokens, sent_estimate
        As :func:`~snapglyph.compaction.budget.next_budget`.

    Raises
    ------
    FormatError
        If ``request`` is not a conversation snapglyph can read.
    StoreError
        If the book's file cannot be written.

    Examples
    --------
    >>> body = {"model": "m", "max_tokens": 500, "messages": [{"role": "user", "content": "word " * 4000}]}
    >>> book = WindowBook(None)
    >>> book.answered("", "m", 3_000)                 # a 3,000-token request of this model was answered before
    >>> recovery_budget(book, "", "m", None, body, "openai")      # no numbers: the answered size, not a third
    Budget(tokens=2760, window=3000, ratio=1.0, most=4144)
    >>> book.get("", "m")
    Learned(window=None, accepted=3000, refused=4505)
    """
    known = book.get(upstream, model) if book is not None else Learned()
    reserve = output_reserve(max_tokens, request)
    est = sent_estimate if sent_estimate is not None else estimate(request, profile, max_tokens=reserve)
    b = next_budget(overflow, request, profile, window=window or known.window, ratio=ratio, margin=margin,
                    max_tokens=reserve, sent_estimate=est, accepted=known.accepted, refused=known.refused)
    if book is not None:
        named = overflow.limit if overflow is not None and overflow.limit else None
        book.refused(upstream, model, counted_size(est, reserve, overflow=overflow, ratio=b.ratio), window=named)
    return b
