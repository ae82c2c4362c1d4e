"""The wordings of every provider's context-overflow answer, one rule each, with the numbers each one names.

Each rule is ``(provider, compiled pattern, extractor(match) -> (prompt_tokens, limit))``; the first match wins
(:func:`snapglyph.providers.overflow.detect` reads them in order). Rate limits and request-bytes limits are listed
apart: they are never an overflow. Sources (read 2026-11-30): ``../shared/reference/providers.md`` part B, which
cites each body's public issue; badlogic/pi-mono ``packages/ai/src/utils/overflow.ts``; vLLM
``vllm/renderers/params.py``; llama.cpp ``tools/server``; huggingface/text-generation-inference
``router/src/validation.rs``. Added 2026-12-07 (each body read that day in its public report):

- sglang: ``The input (61709 tokens) is longer than the model's context length (40960 tokens).``
  (https://github.com/QwenLM/Qwen3/issues/1321, cited by BerriAI/litellm#10793; the same body inside a 200 stream:
  https://github.com/sgl-project/sglang/issues/12081, https://github.com/BerriAI/litellm/pull/22624);
- vLLM's renderer: ``This model's maximum context length is 128000 tokens. However, you requested 65535 output
  tokens and your prompt contains at least 62466 input tokens, for a total of at least 128001 tokens.``
  (https://github.com/vllm-project/vllm/issues/42474; the ``0 output tokens`` form is earendil-works/pi#5930's, as
  issue 35 quotes it: that report was not found in the search index);
- Ollama's HTTP 500 ``no user query found in messages`` after its own truncation dropped the user turn
  (https://github.com/ollama/ollama/issues/18107, #17778);
- OpenRouter's ``(81684 of text input, 3748 of tool input, 120000 in the output)``: the existing rule sums every
  ``... input`` part (https://github.com/boldsoftware/shelley/issues/159, RooCodeInc/Roo-Code#11998);
- :data:`AMBIGUOUS`: Gemini's ``Request contains an invalid argument.`` (status ``INVALID_ARGUMENT``), which Gemini
  also sends at the wall (https://github.com/google-gemini/gemini-cli/issues/16780, #15366, #22942) and for
  unrelated faults: an overflow only where the request's estimate is at or above the window known;
- :data:`IMAGE_COUNT`: image-count refusals, a limit the retried request must meet: ``request contains 52 images,
  exceeding the maximum of 50 allowed per request`` (https://github.com/anomalyco/opencode/issues/47721), Anthropic's
  ``Too much media: 0 document pages + 103 images > 100`` (https://github.com/anthropics/claude-code/issues/3397)
  and ``too many images and documents: 120 + 0 > 100`` (https://github.com/anthropics/claude-code/issues/24541),
  ``Image count 5 exceeds limit 4 per request`` (https://github.com/AgnesAI-Labs/AgnesCode/issues/50).
"""

from __future__ import annotations

import re
from typing import Callable

__all__ = ["AMBIGUOUS", "IMAGE_COUNT", "RATE_LIMIT", "REQUEST_BYTES", "RULES"]

_N = r"(\d[\d,]*)"


def _int(s: str | None) -> int | None:
    """A number as a provider wrote it (``"13,392"``), or None: the boundary where a ``ValueError`` of ``int()`` (an
    empty match, or more than 4300 digits in hostile text) becomes "no number"."""
    if s is None:
        return None
    try:
        return int(s.replace(",", ""))
    except ValueError:
        return None


# Rate limits and request-bytes limits: never an overflow (pi-mono overflow.ts excludes "Too many tokens").
RATE_LIMIT = re.compile(
    r"rate[_ ]?limit|tokens per min|\bTPM\b|requests per min|ThrottlingException|too many tokens|"
    r"too many requests|RESOURCE_EXHAUSTED|quota", re.I)
REQUEST_BYTES = re.compile(
    r"request_too_large|request entity too large|payload too large|maximum allowed number of bytes|"
    r"request (?:body )?exceeds the maximum (?:allowed )?size", re.I)

# Each rule: (provider, compiled pattern, extractor(match) -> (prompt_tokens, limit)). First match wins; the
# provider may be refined afterwards from the error's type/code (see _refine).
_Rule = tuple[str, "re.Pattern[str]", Callable[["re.Match[str]"], tuple[int | None, int | None]]]
RULES: list[_Rule] = [
    # llama.cpp server, current: "request (13392 tokens) exceeds the available context size (8192 tokens), ..."
    ("llamacpp", re.compile(rf"request \({_N} tokens\) exceeds the available context size \({_N} tokens\)", re.I),
     lambda m: (_int(m[1]), _int(m[2]))),
    ("llamacpp", re.compile(rf"input \({_N} tokens\) is larger than the max context size \({_N} tokens\)", re.I),
     lambda m: (_int(m[1]), _int(m[2]))),
    ("llamacpp", re.compile(r"exceeds the available context size", re.I), lambda m: (None, None)),
    # Anthropic (direct, Bedrock, Vertex): "prompt is too long: 219898 tokens > 200000 maximum"
    ("anthropic", re.compile(rf"prompt is too long: {_N} tokens > {_N} maximum", re.I),
     lambda m: (_int(m[1]), _int(m[2]))),
    ("anthropic", re.compile(r"prompt is too long(?!;)", re.I), lambda m: (None, None)),
    # Anthropic, older models: "input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648"
    ("anthropic", re.compile(rf"input length and `?max_tokens`? exceed context limit: {_N} \+ {_N} > {_N}", re.I),
     lambda m: (_int(m[1]), _int(m[3]))),
    ("anthropic", re.compile(r"input length and `?max_tokens`? exceed context limit", re.I),
     lambda m: (None, None)),
    ("bedrock", re.compile(r"input is too long for requested model", re.I), lambda m: (None, None)),
    # Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
    ("gemini", re.compile(rf"input token count \({_N}\) exceeds the maximum number of tokens allowed \({_N}\)", re.I),
     lambda m: (_int(m[1]), _int(m[2]))),
    ("gemini", re.compile(rf"input token count exceeds the maximum number of tokens allowed \(?{_N}", re.I),
     lambda m: (None, _int(m[1]))),
    ("gemini", re.compile(r"input token count.{0,40}exceeds the maximum number of tokens", re.I),
     lambda m: (None, None)),
    # Hugging Face text-generation-inference: "Input validation error: `inputs` tokens + `max_new_tokens` must be
    # <= 8192. Given: 9000 `inputs` tokens and 512 `max_new_tokens`" / "`inputs` must have less than 4096 tokens.
    # Given: 5000" (huggingface/text-generation-inference router/src/validation.rs, read 2026-11-30).
    ("tgi", re.compile(rf"`inputs` tokens \+ `max_new_tokens` must be <= {_N}\. Given: {_N} `inputs` tokens", re.I),
     lambda m: (_int(m[2]), _int(m[1]))),
    ("tgi", re.compile(rf"`inputs` must have less than {_N} tokens\. Given: {_N}", re.I),
     lambda m: (_int(m[2]), _int(m[1]))),
    # OpenRouter: "This endpoint's maximum context length is X tokens. However, you requested about Y tokens
    # (A of text input, B in the output)."
    ("openrouter", re.compile(rf"endpoint's maximum context length is {_N} tokens\. However, you requested about "
                              rf"{_N} tokens(?: \(([^)]*)\))?", re.I),
     lambda m: (_openrouter_input(m[2], m[3]), _int(m[1]))),
    # xAI: "This model's maximum prompt length is 131072 but the request contains 537812 tokens"
    ("xai", re.compile(rf"maximum prompt length is {_N} but the request contains {_N} tokens", re.I),
     lambda m: (_int(m[2]), _int(m[1]))),
    # Mistral: "Prompt contains 66385 tokens, too large for model with 32768 maximum context length"
    ("mistral", re.compile(rf"prompt contains {_N} tokens.{{0,40}}too large for model with {_N} maximum context "
                           r"length", re.I), lambda m: (_int(m[1]), _int(m[2]))),
    # vLLM, current renderer: "You passed N input tokens and requested M output tokens. However, the model's context
    # length is only X tokens, ..."
    ("vllm", re.compile(rf"you passed {_N} input tokens and requested {_N} output tokens\. However, the model's "
                        rf"context length is only {_N} tokens", re.I), lambda m: (_int(m[1]), _int(m[3]))),
    # vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is
    # 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778)."
    ("vllm", re.compile(rf"maximum context length is {_N} tokens and your request has {_N} input tokens", re.I),
     lambda m: (_int(m[2]), _int(m[1]))),
    # vLLM renderer, newer: "This model's maximum context length is 128000 tokens. However, you requested 65535
    # output tokens and your prompt contains at least 62466 input tokens, for a total of at least 128001 tokens."
    ("vllm", re.compile(rf"maximum context length is {_N} tokens\. However, you requested {_N} output tokens and your "
                        rf"prompt contains at least {_N} input tokens", re.I), lambda m: (_int(m[3]), _int(m[1]))),
    # sglang: "The input (61709 tokens) is longer than the model's context length (40960 tokens)."
    ("sglang", re.compile(rf"the input \({_N} tokens\) is longer than the model's context length \({_N} tokens\)",
                          re.I), lambda m: (_int(m[1]), _int(m[2]))),
    # vLLM engine / multimodal: "The decoder prompt (length N) is longer than the maximum model length of M."
    ("vllm", re.compile(rf"(?:decoder )?prompt \(length {_N}\) is longer than the maximum model length of {_N}",
                        re.I), lambda m: (_int(m[1]), _int(m[2]))),
    # OpenAI classic (also DeepSeek, old vLLM, Groq): "This model's maximum context length is 4097 tokens. However,
    # your messages resulted in 4294 tokens." / "... you requested 4130 tokens (3130 in the messages, 1000 in the
    # completion)."
    ("openai-compatible", re.compile(
        rf"maximum context length is {_N} tokens\. However, (?:your messages resulted in {_N} tokens|you requested "
        rf"{_N} tokens(?: \({_N} in the messages, {_N} in the completion\))?)", re.I),
     lambda m: (_int(m[2]) if m[2] else (_int(m[4]) if m[4] else _int(m[3])), _int(m[1]))),
    ("openai-compatible", re.compile(rf"maximum context length is {_N} tokens", re.I),
     lambda m: (None, _int(m[1]))),
    # OpenAI Responses / GPT-5.x / Azure: "Your input exceeds the context window of this model."
    ("openai", re.compile(r"exceeds the context window", re.I), lambda m: (None, None)),
    # LM Studio, three generations of wording.
    ("lmstudio", re.compile(rf"n_keep: {_N}\s*>=\s*n_ctx: {_N}", re.I), lambda m: (_int(m[1]), _int(m[2]))),
    ("lmstudio", re.compile(rf"n_keep \({_N}\)\s*>=\s*n_ctx \({_N}\)", re.I), lambda m: (_int(m[1]), _int(m[2]))),
    ("lmstudio", re.compile(rf"trying to keep the first {_N} tokens when context the overflows\. However, the model "
                            rf"is loaded with context length of only {_N} tokens", re.I),
     lambda m: (_int(m[1]), _int(m[2]))),
    ("lmstudio", re.compile(r"tokens to keep from the initial prompt is greater than the context length", re.I),
     lambda m: (None, None)),
    # Ollama (embeddings; and a "prompt too long" seen from its cloud, unconfirmed).
    ("ollama", re.compile(r"the input length exceeds the context length", re.I), lambda m: (None, None)),
    ("ollama", re.compile(r"prompt too long; exceeded max context length", re.I), lambda m: (None, None)),
    # Ollama's HTTP 500 once its own front truncation dropped the last user turn (ollama/ollama#18107)
    ("ollama", re.compile(r"no user query found in messages", re.I), lambda m: (None, None)),
    # Smaller providers from pi-mono's list.
    ("github-copilot", re.compile(rf"prompt token count of {_N} exceeds the limit of {_N}", re.I),
     lambda m: (_int(m[1]), _int(m[2]))),
    ("minimax", re.compile(r"context window exceeds limit", re.I), lambda m: (None, None)),
    ("kimi", re.compile(rf"exceeded model token limit: {_N}", re.I), lambda m: (None, _int(m[1]))),
    # Generic: the OpenAI / Azure error code, and the llama.cpp error type, whatever the message says.
    ("openai", re.compile(r"\bcontext_length_exceeded\b", re.I), lambda m: (None, None)),
    ("llamacpp", re.compile(r"\bexceed_context_size_error\b", re.I), lambda m: (None, None)),
]


def _openrouter_input(total: str, detail: str | None) -> int | None:
    # "(10535 of text input, 131072 in the output)": sum every "... input" part; else total minus the output.
    if detail:
        inputs = re.findall(rf"{_N} of [\w ]*?input", detail)
        if inputs:
            return sum(_int(x) or 0 for x in inputs)
        out = re.search(rf"{_N} in the output", detail)
        if out:
            return (_int(total) or 0) - (_int(out[1]) or 0)
    return _int(total)


# Wordings that answer an overflow and other faults alike: an overflow only where the request's estimate is at or
# above the window known (:func:`snapglyph.providers.overflow.detect`'s ``estimate`` and ``window``).
AMBIGUOUS: list[_Rule] = [
    ("gemini", re.compile(r"request contains an invalid argument", re.I), lambda m: (None, None)),
]

# Image-count refusals: (pattern, extractor(match) -> (images counted, images allowed)).
IMAGE_COUNT: list[tuple["re.Pattern[str]", Callable[["re.Match[str]"], tuple[int | None, int | None]]]] = [
    (re.compile(rf"request contains {_N} images, exceeding the maximum of {_N}", re.I),
     lambda m: (_int(m[1]), _int(m[2]))),
    (re.compile(rf"too much media: {_N} document pages \+ {_N} images > {_N}", re.I),
     lambda m: ((_int(m[1]) or 0) + (_int(m[2]) or 0), _int(m[3]))),
    (re.compile(rf"too many images and documents: {_N} \+ {_N} > {_N}", re.I),
     lambda m: ((_int(m[1]) or 0) + (_int(m[2]) or 0), _int(m[3]))),
    (re.compile(rf"image count {_N} exceeds limit {_N}", re.I), lambda m: (_int(m[1]), _int(m[2]))),
    (re.compile(rf"{_N} images were provided, but the model supports a maximum of {_N} images", re.I),
     lambda m: (_int(m[1]), _int(m[2]))),
]
