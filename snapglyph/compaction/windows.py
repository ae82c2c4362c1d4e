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

The book keeps the caps the answers teach too (issue 35, item 3): an image-count cap (``images``, from an
image-count refusal such as "request contains 52 images, exceeding the maximum of 50") and a body byte cap
(``body_bytes``, the size a 413 "request body exceeds the configured payload limit" / "Payload Too Large: ...
exceeds N bytes" answer names, can1357/oh-my-pi#9235 and lidge-jun/opencodex#3573, read 2026-12-08; where the
answer names no size, ``refused_bytes``: the refused body's size, an upper bound). :func:`learned_budget` applies the
window and caps to a request of a conversation not compacted yet, before the provider refuses again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .._config import DEFAULT_MAX_TOKENS, OVERFLOW_UNKNOWN_SHARE, SERVE_MARGIN
from .._files import write_atomic
from ..errors import StoreError
from ..model.messages import images_in
from ..providers.overflow import OverflowResult
from ..providers.params import output_reserve
from ..providers.profiles import Profile, profile as get_profile
from ..readers.registry import from_request
from .budget import Budget, budget_for, clamp_ratio, counted_size, estimate, next_budget

__all__ = ["BYTE_SHARE", "FILE", "WINDOWS_KEPT", "Learned", "WindowBook", "capped_profile", "learned_budget",
           "over_image_cap", "recovery_budget"]

BYTE_SHARE = 0.9
"""Share of a named body byte cap a compacted request is made to take (the JSON serve splices differs by a few
percent from the rebuild the compaction measures): a bound chosen, not a measurement."""

_FIELDS = ("window", "accepted", "refused", "images", "body_bytes", "refused_bytes", "ratio")

TOKENS_PER_BYTE_MOST = 2.0
"""Most text tokens one byte of a JSON request body is counted as: a token holds at least one byte, the largest
text factor over cl100k of any profile is 1.75 (``claude-hires``), and a message's overhead of a few tokens comes
with more bytes than that of JSON (a bound, checked by tests/test_learned_caps.py against the estimate)."""

_MEDIA_MARKERS = (b"base64", b'"image"', b'"image_url"', b'"input_image"', b'"image_file"', b'"document"',
                  b'"file"', b'"input_file"', b'"input_audio"', b'"inlineData"', b'"inline_data"', b'"fileData"',
                  b'"file_data"')
"""Quoted JSON keys and part types of an image, a document, a file or audio in any dialect (and base64 data):
quoted, so a conversation's text that names a file (escaped quotes inside a JSON string) does not count."""
_OUTPUT_LIMIT = re.compile(rb'"(?:max_tokens|max_output_tokens|max_completion_tokens|maxOutputTokens)"\s*:\s*(\d+)')

FILE = "windows.json"
"""The book's file name in a door's folder."""

WINDOWS_KEPT = 512
"""Upstream and model pairs a book keeps (the least recently updated dropped past it): a bound, not a measurement."""


@dataclass(frozen=True, repr=False)
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
    images : int or None
        Images one request may carry, the client's own counted, as an image-count refusal named it.
    body_bytes : int or None
        The body byte cap a 413-style answer named, in bytes of the JSON body.
    refused_bytes : int or None
        The smallest body (bytes) refused as too large by an answer naming no size: the cap is below it.
    ratio : float or None
        Provider tokens per estimated token its last overflow taught (``None``: not learned).

    Examples
    --------
    >>> Learned(accepted=7_000, refused=28_000).refused, Learned(window=65_536, refused=70_000).bound
    (28000, 65536)
    >>> Learned(body_bytes=600_000).byte_aim, Learned(refused_bytes=90_000).byte_aim
    (540000, 30000)
    """

    window: int | None = None
    accepted: int | None = None
    refused: int | None = None
    images: int | None = None
    body_bytes: int | None = None
    refused_bytes: int | None = None
    ratio: float | None = None

    def __repr__(self) -> str:
        """The window fields always, a cap or ratio only where learned."""
        shown = [f"{f}={getattr(self, f)!r}" for f in _FIELDS if f in ("window", "accepted", "refused")
                 or getattr(self, f) is not None]
        return f"Learned({', '.join(shown)})"

    @property
    def bound(self) -> int | None:
        """The window to keep a request under: the one named, else the smallest refused (``None``: neither)."""
        return self.window or self.refused

    @property
    def byte_aim(self) -> int | None:
        """The bytes a request body is made to take: :data:`BYTE_SHARE` of a named cap, else
        :data:`~snapglyph._config.OVERFLOW_UNKNOWN_SHARE` of the smallest body refused (``None``: no cap learned)."""
        if self.body_bytes:
            return int(self.body_bytes * BYTE_SHARE)
        return int(self.refused_bytes * OVERFLOW_UNKNOWN_SHARE) if self.refused_bytes else None

    def limits(self) -> bool:
        """Whether anything here limits a request (a window, a refusal or a cap; an answered size alone does not)."""
        return any((self.bound, self.images, self.byte_aim))

    def surely_under(self, raw: bytes, ratio: float = 1.0, margin: float = SERVE_MARGIN) -> bool:
        """Whether a request body of these ``raw`` JSON bytes is under every limit here without reading it: no image
        or file in it (none of their spellings' markers), within the byte aim, and at most ``raw``'s length x
        :data:`TOKENS_PER_BYTE_MOST` x ``ratio`` tokens plus the largest output limit it names (else
        :data:`~snapglyph._config.DEFAULT_MAX_TOKENS`) inside the window less ``margin``. ``False`` means: read it.

        >>> small = b'{"model": "m", "max_tokens": 1000, "messages": [{"role": "user", "content": "hi"}]}'
        >>> Learned(window=8_000).surely_under(small), Learned(window=1_000).surely_under(small)
        (True, False)
        >>> Learned(window=8_000).surely_under(small.replace(b'"hi"', b'[{"type": "image_url"}]'))
        False
        >>> Learned(window=8_000).surely_under(small.replace(b'"hi"', b'"read the \\\\"file\\\\" a.py"'))  # text
        True
        """
        if self.images is not None or any(m in raw for m in _MEDIA_MARKERS):
            return False
        if self.byte_aim is not None and len(raw) > self.byte_aim:
            return False
        if self.bound is None:
            return True
        reserve = max((int(n) for n in _OUTPUT_LIMIT.findall(raw)), default=DEFAULT_MAX_TOKENS)
        return len(raw) * TOKENS_PER_BYTE_MOST * max(1.0, ratio) + reserve <= self.bound * (1.0 - margin)


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
        return Learned(*(e.get(f) if isinstance(e.get(f), (int, float)) and not isinstance(e.get(f), bool)
                         else None for f in _FIELDS))

    def all(self) -> list[dict]:
        """Every pair known, as plain data (``upstream``, ``model``, ``window``, ``accepted``, ``refused``,
        ``images``, ``body_bytes``, ``refused_bytes``, ``ratio``): ``/snapglyph/status`` lists it."""
        with self._lock:
            items = sorted(self._entries.items())
        return [{"upstream": k.split(" ", 1)[0], "model": k.split(" ", 1)[-1],
                 **{f: e.get(f) for f in _FIELDS}} for k, e in items]

    def limits_known(self) -> bool:
        """Whether any pair has a window, a refusal or a cap learned (``serve`` then reads every request before it
        is sent, :mod:`snapglyph.serve.early`)."""
        with self._lock:
            return any(e.get(f) for e in self._entries.values()
                       for f in ("window", "refused", "images", "body_bytes", "refused_bytes"))

    def capped(self, upstream: str, model: str, *, images: int | None = None, body_bytes: int | None = None,
               refused_bytes: int | None = None) -> None:
        """``(upstream, model)`` refused a request for its image count (``images``: the cap named) or its body size
        (``body_bytes``: the cap named; ``refused_bytes``: the size of a body refused by an answer naming none);
        the smallest of each is kept."""
        new = {f: int(v) for f, v in (("images", images), ("body_bytes", body_bytes),
                                      ("refused_bytes", refused_bytes)) if v}

        def change(e: dict) -> None:
            for f, v in new.items():
                e[f] = min(v, e.get(f) or v)
        known = self.get(upstream, model)
        self._update(upstream, model, change, grows=any(v < (getattr(known, f) or v + 1) for f, v in new.items()))

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

    def refused(self, upstream: str, model: str, tokens: int, window: int | None = None,
                ratio: float | None = None) -> None:
        """``(upstream, model)`` refused a request of ``tokens`` as too long, naming ``window`` where it did (an
        answer at or above ``tokens`` is older than the window now served, and forgotten); ``ratio``: provider
        tokens per estimated token the refusal taught."""
        tokens = int(tokens)

        def change(e: dict) -> None:
            e["refused"] = min(tokens, e.get("refused") or tokens)
            if (e.get("accepted") or 0) >= tokens:
                e.pop("accepted")
            if window:
                e["window"] = int(window)
            if ratio:
                e["ratio"] = round(float(ratio), 4)
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
        book.refused(upstream, model, counted_size(est, reserve, overflow=overflow, ratio=b.ratio), window=named,
                     ratio=b.ratio if overflow is not None and (overflow.prompt_tokens or overflow.limit) else None)
    return b


def learned_budget(known: Learned, request: dict, profile: "str | Profile", *, nbytes: int | None = None,
                   margin: float = SERVE_MARGIN, max_tokens: int | None = None) -> Budget | None:
    """The budget a request not compacted yet is compacted to before it is sent, from what ``known`` (one
    :meth:`WindowBook.get`) learned of its upstream and model; ``None`` where it fits what was learned.

    The request is over the learned window where its size as the provider counts it (:func:`~snapglyph.compaction.
    budget.counted_size` at the learned ratio) passes :attr:`Learned.bound` less ``margin``: its budget is then
    :func:`~snapglyph.compaction.budget.budget_for` with what the book knows (the window named, else the sizes
    answered and refused: the aim a recovery would take, :func:`~snapglyph.compaction.budget.window_guess`). It is
    over the byte cap where ``nbytes`` passes :attr:`Learned.byte_aim`, which is then a window of the same share of
    the request's tokens. The smaller budget is returned (the one rule, never re-derived).

    Parameters
    ----------
    known : Learned
    request : dict
        The body (any dialect :func:`~snapglyph.compaction.budget.estimate` reads).
    profile : str or Profile
    nbytes : int, optional
        The body's size in bytes (JSON, UTF-8); ``None``: the byte cap is not checked.
    margin : float
        Share of the window kept free (:data:`~snapglyph._config.SERVE_MARGIN`).
    max_tokens : int, optional
        The output reserve (default :func:`~snapglyph.providers.params.output_reserve` of the request).

    Returns
    -------
    Budget or None

    Raises
    ------
    FormatError
        If ``request`` is not a conversation snapglyph can read.

    Examples
    --------
    >>> body = {"model": "m", "max_tokens": 500, "messages": [{"role": "user", "content": "word " * 4000}]}
    >>> learned_budget(Learned(window=3_000), body, "openai")
    Budget(tokens=2760, window=3000, ratio=1.0, most=3000)
    >>> learned_budget(Learned(window=30_000), body, "openai") is None       # under the learned window
    True
    >>> learned_budget(Learned(accepted=1_000, refused=4_000), body, "openai").window   # a third of the refusal
    1333
    >>> learned_budget(Learned(body_bytes=10_000), body, "openai", nbytes=20_000).window   # 0.9 x 10,000 of 20,000 bytes
    2027
    """
    reserve = output_reserve(max_tokens, request)
    est = estimate(request, profile, max_tokens=reserve)
    ratio = clamp_ratio(known.ratio or 1.0)
    size = counted_size(est, reserve, ratio=ratio)
    budgets = []
    if known.bound and size > known.bound * (1 - margin):      # a named window, or sure to be refused again
        budgets.append(budget_for(est, reserve, window=known.window, ratio=ratio, margin=margin,
                                  accepted=known.accepted, refused=known.refused))
    aim = known.byte_aim
    if aim and nbytes and nbytes > aim:
        budgets.append(budget_for(est, reserve, window=max(1, int(size * aim / nbytes)), ratio=ratio,
                                  margin=margin))
    return min(budgets, key=lambda b: b.tokens) if budgets else None


def capped_profile(profile: "str | Profile", *, images: int | None = None, body_bytes: int | None = None,
                   pages: bool = True) -> "str | Profile":
    """``profile`` with at most ``images`` images a request (the client's own counted), at most ``body_bytes`` bytes
    of request body (its ``max_request_bytes`` lowered: the compaction then drops pages and fits the own images
    under it) and no pages where ``pages`` is false; the profile as given when nothing is capped.

    Raises
    ------
    UnknownProfileError
        If ``profile`` names no profile.

    Examples
    --------
    >>> capped_profile("claude")
    'claude'
    >>> p = capped_profile("claude", images=50, body_bytes=540_000)
    >>> p.max_images, p.max_request_bytes, p.max_pages
    (50, 540000, None)
    """
    if pages and images is None and body_bytes is None:
        return profile
    prof = get_profile(profile) if isinstance(profile, str) else profile
    cap = prof.max_images if images is None else max(0, min(prof.max_images, images))
    size = prof.max_request_bytes if body_bytes is None else max(1, min(prof.max_request_bytes, int(body_bytes)))
    return dataclasses.replace(prof, max_images=cap, max_pages=prof.max_pages if pages else 0,
                               max_request_bytes=size)


def over_image_cap(known: Learned, request: dict) -> bool:
    """Whether ``request`` carries more images (the client's own, any dialect :func:`snapglyph.from_request` reads)
    than the image-count cap ``known`` learned (``False`` where none was learned: the request is not read).

    Raises
    ------
    FormatError
        If ``request`` is not a conversation snapglyph can read.

    Examples
    --------
    >>> shot = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    >>> body = {"messages": [{"role": "user", "content": [shot, shot, {"type": "text", "text": "two"}]}]}
    >>> over_image_cap(Learned(images=1), body), over_image_cap(Learned(images=2), body), over_image_cap(Learned(), body)
    (True, False, False)
    """
    return known.images is not None and len(images_in(from_request(request).messages)) > known.images
