"""The calibrated token estimate without a tokenizer: a linear model over character classes and runs.

Letters, case changes, digits, punctuation, whitespace, CJK, other non-ASCII and astral characters (emoji) are
counted per class and per run; the model's coefficients were fitted so that it is never below the ``cl100k_base``
count on code, JSON, base64, CJK, emoji, prose and the real transcripts in ``../shared/data`` (the fit and its
samples are in ``tests/test_tokens_estimate.py``), and its result is capped at the UTF-8 byte count (a byte-level
BPE never needs more tokens than bytes). :func:`snapglyph.providers.tokens.text_tokens` uses it where no encoding is
available offline.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError

__all__ = ["ESTIMATE_METHOD", "estimate_tokens"]

ESTIMATE_METHOD = "estimate v1 (calibrated)"

# ---------------------------------------------------------------------------------------------- the estimate
# Character classes of the estimate (codepoint -> class index).
# Lower-case vowels are a class of their own (random letters have far fewer of them than words do, and tokenize
# 2-3 times shorter); for runs they count as lower case.
_LOWER, _UPPER, _DIGIT, _SPACE, _TAB, _NL, _PUNCT, _CTRL, _LATIN, _CJK, _SYMBOL, _ASTRAL, _VOWEL = range(13)
_NCLASS = 13
_RUN_CLASS = np.arange(_NCLASS, dtype=np.uint8)
_RUN_CLASS[_VOWEL] = _LOWER
_ASCII_CLASS = np.full(128, _CTRL, dtype=np.uint8)
_ASCII_CLASS[ord("a"):ord("z") + 1] = _LOWER
_ASCII_CLASS[ord("A"):ord("Z") + 1] = _UPPER
_ASCII_CLASS[ord("0"):ord("9") + 1] = _DIGIT
_ASCII_CLASS[ord(" ")] = _SPACE
_ASCII_CLASS[ord("\t")] = _TAB
_ASCII_CLASS[[ord("\n"), ord("\r")]] = _NL
for _c in range(33, 127):
    if not chr(_c).isalnum():
        _ASCII_CLASS[_c] = _PUNCT
_ASCII_CLASS[[ord(v) for v in "aeiou"]] = _VOWEL

# Coefficients, one per feature of _features() (tokens per character of each class, per run of each class, then
# the three letter-run features). Fitted by a linear program: minimise the summed relative estimate subject to
# estimate >= 1.02 x the cl100k count on every sample text and chunk (tests/test_tokens_estimate.py holds the
# samples, the fit -- run that file as a script -- and the never-below assertions, including held-out files).
_NFEAT = 2 * _NCLASS + 3
_COEF = np.array([0.19, 0.0, 0.186, 0.009, 0.229, 0.0, 0.488, 0.529, 0.563, 2.234, 2.599, 2.889, 0.0, 0.0, 0.892, 1.894, 0.655, 0.0, 1.649, 0.478, 0.039, 0.0, 0.0, 0.0, 0.0, 0.0, 0.818, 0.0, 0.0])


def _features(text: str) -> tuple[np.ndarray, int]:
    """Feature vector of ``text`` for the estimate, and its UTF-8 byte length.

    Features: characters per class (13), runs per class (13; a capitalised word is one run), then three per-word
    features over letter runs: letters in runs of 4 or more with under 25% vowels ("unpronounceable": ids, hex,
    base64), the number of such runs, and letters beyond the 10th in any run.
    """
    cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    cls = np.empty(cp.shape, dtype=np.uint8)
    ascii_ = cp < 128
    cls[ascii_] = _ASCII_CLASS[cp[ascii_]]
    hi = ~ascii_
    if hi.any():
        c = cp[hi]
        k = np.full(c.shape, _LATIN, dtype=np.uint8)
        k[(c >= 0x2000) & (c < 0x2E80)] = _SYMBOL          # punctuation, arrows, box drawing, braille, dingbats
        k[((c >= 0x2E80) & (c < 0xA000)) | ((c >= 0xAC00) & (c < 0xD800)) | ((c >= 0xF900) & (c < 0xFB00))
          | ((c >= 0xFF00) & (c < 0xFFF0))] = _CJK
        k[(c >= 0xD800) & (c < 0xE000)] = _SYMBOL           # lone surrogates
        k[c >= 0x10000] = _ASTRAL
        cls[hi] = k
    feats = np.zeros(_NFEAT)
    feats[:_NCLASS] = np.bincount(cls, minlength=_NCLASS)
    vowel = cls == _VOWEL
    rc = _RUN_CLASS[cls]
    starts = np.empty(rc.shape, dtype=bool)
    starts[0] = True
    np.not_equal(rc[1:], rc[:-1], out=starts[1:])
    # An upper-case letter followed by lower case ("Word") is one run: the lower run after it is free.
    cap = starts[1:] & (rc[1:] == _LOWER) & (rc[:-1] == _UPPER)
    starts[1:][cap] = False
    feats[_NCLASS:2 * _NCLASS] = np.bincount(rc[starts], minlength=_NCLASS)
    # Per-run word features over letter runs (lower case, upper case, capitalised words).
    idx = np.flatnonzero(starts)
    lengths = np.diff(np.append(idx, rc.size))
    run_cls = rc[idx]
    letter = (run_cls == _LOWER) | (run_cls == _UPPER)
    if letter.any():
        run_id = np.cumsum(starts) - 1
        vowels = np.bincount(run_id, weights=vowel, minlength=idx.size)
        lengths_l = lengths[letter].astype(float)
        v = vowels[letter]
        bad = (lengths_l >= 4) & (v < 0.25 * lengths_l)
        feats[2 * _NCLASS] = lengths_l[bad].sum()
        feats[2 * _NCLASS + 1] = np.count_nonzero(bad)
        feats[2 * _NCLASS + 2] = np.maximum(lengths_l - 10, 0).sum()
    nbytes = int(cp.size + np.count_nonzero(cp >= 0x80) + np.count_nonzero(cp >= 0x800)
                 + np.count_nonzero(cp >= 0x10000))
    return feats, nbytes


def estimate_tokens(text: str) -> int:
    """Estimate the tokens of ``text`` without a tokenizer (errs high; see the module docstring).

    Parameters
    ----------
    text : str
        Any Python string (lone surrogates and NUL included).

    Returns
    -------
    int
        Estimated tokens, at least the ``cl100k_base`` count on every calibration sample, and at most the UTF-8
        byte length of ``text``. ``0`` for the empty string.

    Examples
    --------
    >>> estimate_tokens("def f(x):\\n    return x + 1\\n")      # tiktoken's cl100k_base counts 11
    14
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a str, not {type(text).__name__}")
    if not text:
        return 0
    feats, nbytes = _features(text)
    est = float(feats @ _COEF)
    return max(1, min(nbytes, math.ceil(est)))
