"""Table-driven tests of snapglyph.overflow from the verbatim bodies in ../shared/reference/providers.md part B."""

from __future__ import annotations

import json

import pytest

from snapglyph import OverflowResult
from snapglyph.providers.overflow import check_silent_truncation, detect

# (case id, status, body, provider, prompt_tokens, limit)
POSITIVE = [
    ("openai-classic", 400,
     '{"error":{"message":"This model\'s maximum context length is 4097 tokens. However, your messages resulted in '
     '4294 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages",'
     '"code":"context_length_exceeded"}}', "openai", 4294, 4097),
    ("openai-classic-completion", 400,
     {"error": {"message": "This model's maximum context length is 4097 tokens. However, you requested 4130 tokens "
                           "(3130 in the messages, 1000 in the completion). Please reduce the length of the messages "
                           "or completion.", "type": "invalid_request_error", "param": "messages",
                "code": "context_length_exceeded"}}, "openai", 3130, 4097),
    ("openai-responses", 400,
     '{"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the '
     'context window of this model. Please adjust your input and try again.","param":"input"}}',
     "openai", None, None),
    ("openai-responses-sse-error", 200,
     'event: error\ndata: {"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context '
     'window of this model. Please adjust your input and try again.","param":"input","sequence_number":2}\n\n',
     "openai", None, None),
    ("openai-responses-failed", None,
     'event: response.created\ndata: {"type":"response.created","response":{"id":"resp_1","status":"in_progress",'
     '"error":null}}\n\nevent: response.failed\ndata: {"type":"response.failed","response":{"id":"resp_1",'
     '"status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window '
     'of this model. Please adjust your input and try again."}}}\n\n', "openai", None, None),
    ("azure", 400,
     b'{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try '
     b'again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}',
     "openai", None, None),
    ("anthropic", 400,
     '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 '
     'maximum"},"request_id":"req_011CUx"}', "anthropic", 219898, 200000),
    ("anthropic-max-tokens", 400,
     '{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed '
     'context limit: 189136 + 20000 > 204648, decrease input length or `max_tokens` and try again"}}',
     "anthropic", 189136, 204648),
    ("anthropic-sse", 200,
     'event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: '
     '201000 tokens > 200000 maximum"}}\n\n', "anthropic", 201000, 200000),
    ("bedrock", 400, '{"message":"Input is too long for requested model."}', "bedrock", None, None),
    ("bedrock-claude", 400,
     '{"__type":"ValidationException","message":"The model returned the following errors: prompt is too long: '
     '200049 tokens > 200000 maximum"}', "bedrock", 200049, 200000),
    ("gemini", 400,
     '{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed '
     '(1048576).","status":"INVALID_ARGUMENT"}}', "gemini", 1200293, 1048576),
    ("vllm-old", 400,
     '{"object":"error","message":"This model\'s maximum context length is 16384 tokens. However, you requested '
     '19591 tokens (9591 in the messages, 10000 in the completion). Please reduce the length of the messages or '
     'completion. None","type":"BadRequestError","param":null,"code":400}', "vllm", 9591, 16384),
    ("vllm-max-tokens", 400,
     '{"error":{"message":"\'max_tokens\' or \'max_completion_tokens\' is too large: 8000. This model\'s maximum '
     'context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None",'
     '"type":"BadRequestError","param":null,"code":400}}', "vllm", 2778, 4096),
    ("vllm-renderer", 400,
     '{"error":{"message":"You passed 9000 input tokens and requested 1000 output tokens. However, the model\'s '
     'context length is only 8192 tokens, resulting in a maximum input length of 7192 tokens. Please reduce the '
     'length of the input prompt.","type":"BadRequestError","param":"input_tokens","code":400}}', "vllm", 9000, 8192),
    ("vllm-decoder", 400,
     '{"error":{"message":"The decoder prompt (length 20480) is longer than the maximum model length of 16384. Make '
     'sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens.",'
     '"type":"BadRequestError","param":null,"code":400}}', "vllm", 20480, 16384),
    ("llamacpp", 400,
     '{"error":{"code":400,"message":"request (13392 tokens) exceeds the available context size (8192 tokens), try '
     'increasing it","type":"exceed_context_size_error","n_prompt_tokens":13392,"n_ctx":8192}}',
     "llamacpp", 13392, 8192),
    ("llamacpp-old", 400,
     '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it",'
     '"type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}', "llamacpp", 9000, 4096),
    ("llamacpp-type-only", 400,
     '{"error":{"code":400,"message":"some future wording","type":"exceed_context_size_error"}}',
     "llamacpp", None, None),
    ("llamacpp-input-larger", 400,
     '{"error":{"code":400,"message":"input (5000 tokens) is larger than the max context size (4096 tokens). '
     'skipping","type":"invalid_request_error"}}', "llamacpp", 5000, 4096),
    ("lmstudio", 400,
     '{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: '
     '13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}',
     "lmstudio", 13055, 4096),
    ("lmstudio-old", 400,
     '{"error":"Trying to keep the first 6000 tokens when context the overflows. However, the model is loaded with '
     'context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, '
     'or provide a shorter input"}', "lmstudio", 6000, 4096),
    ("lmstudio-0.4", 400, '{"error":"Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"}',
     "lmstudio", 15028, 7424),
    ("openrouter", 400,
     '{"error":{"message":"This endpoint\'s maximum context length is 131072 tokens. However, you requested about '
     '141607 tokens (10535 of text input, 131072 in the output). Please reduce the length of either one, or use the '
     '\\"middle-out\\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":'
     '"Chutes"}}}', "openrouter", 10535, 131072),
    ("openrouter-2026", 400,
     '{"error":{"message":"This endpoint\'s maximum context length is 32768 tokens. However, you requested about '
     '42832 tokens (42832 of text input). Please reduce the length of either one, or use the context-compression '
     'plugin to compress your prompt automatically.","code":400}}', "openrouter", 42832, 32768),
    ("openrouter-wrapped", 400,
     {"error": {"message": "Provider returned error", "code": 400,
                "metadata": {"raw": json.dumps({"type": "error", "error": {
                    "type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
                    "provider_name": "Anthropic"}}}, "anthropic", 210000, 200000),
    ("deepseek", 400,
     '{"error":{"message":"This model\'s maximum context length is 131072 tokens. However, you requested 131134 '
     'tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or '
     'completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}',
     "deepseek", 122942, 131072),
    ("mistral", 400,
     '{"object":"error","message":"Prompt contains 66385 tokens, too large for model with 32768 maximum context '
     'length","type":"invalid_request_error","param":null,"code":null}', "mistral", 66385, 32768),
    ("xai", 400,
     '{"code":"Client specified an invalid argument","error":"This model\'s maximum prompt length is 131072 but the '
     'request contains 537812 tokens."}', "xai", 537812, 131072),
    ("ollama-embed", 400, '{"error":"the input length exceeds the context length"}', "ollama", None, None),
    ("ollama-cloud", 400, '{"error":"prompt too long; exceeded max context length by 4 tokens"}',
     "ollama", None, None),
    ("sdk-error-string", 400,
     "Error code: 400 - {'error': {'message': \"This model's maximum context length is 8192 tokens. However, your "
     "messages resulted in 9001 tokens. Please reduce the length of the messages.\", 'type': "
     "'invalid_request_error', 'param': 'messages', 'code': 'context_length_exceeded'}}", "openai", 9001, 8192),
    ("anthropic-window-stop", 200,
     {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "partial"}],
      "stop_reason": "model_context_window_exceeded", "usage": {"input_tokens": 190000, "output_tokens": 10000}},
     "anthropic", 190000, None),
]

NEGATIVE = [
    ("openai-tpm-429", 429,
     '{"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, '
     'Requested 36278. The input or output tokens must be reduced in order to run successfully. Visit '
     'https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,'
     '"code":"rate_limit_exceeded"}}'),
    ("openai-tpm-no-status", None,
     '{"error":{"message":"Request too large for gpt-4 in organization org-x on tokens per min. Limit: 10000 / min. '
     'Please try again later.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}'),
    ("anthropic-rate-limit", 429,
     '{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for '
     'your organization of 20,000 input tokens per minute. Please reduce the prompt length or the maximum tokens '
     'requested, or try again later."}}'),
    ("anthropic-rate-limit-400", 400,
     '{"error":{"code":"rate_limit_error","message":"This request would exceed the rate limit for your organization '
     'of 20,000 input tokens per minute. Please reduce the prompt length or the maximum tokens requested."}}'),
    ("bedrock-throttle", 400,
     '{"__type":"ThrottlingException","message":"Too many tokens, please wait before trying again."}'),
    ("bedrock-throttle-text", None, "ThrottlingException: Too many tokens, please wait before trying again."),
    ("anthropic-413", 413,
     '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of '
     'bytes."}}'),
    ("413-entity", 413, "<html><body>413 Request Entity Too Large</body></html>"),
    ("413-empty", 413, ""),
    ("400-empty", 400, b""),
    ("gemini-quota", 429,
     '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}'),
    ("anthropic-overloaded", 529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    ("openai-tool-grammar", 400,
     '{"error":{"message":"Invalid parameter: messages with role \'tool\' must be a response to a preceeding message '
     'with \'tool_calls\'.","type":"invalid_request_error","param":"messages.[3].role","code":null}}'),
    ("anthropic-image-too-big", 400,
     '{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content.1.image.source.base64.'
     'data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"}}'),
    ("success-mentions-overflow", 200,
     {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": {
         "role": "assistant", "content": "The API said: prompt is too long: 5 tokens > 4 maximum"}}]}),
    ("success-anthropic", 200,
     {"type": "message", "role": "assistant", "stop_reason": "end_turn",
      "content": [{"type": "text", "text": "Your input exceeds the context window of this model."}]}),
    ("none", None, None),
    ("plain-200", 200, "prompt is too long"),
]


@pytest.mark.parametrize("case,status,body,provider,prompt,limit", POSITIVE, ids=[c[0] for c in POSITIVE])
def test_detect_overflow(case, status, body, provider, prompt, limit):
    r = detect(status, body)
    assert isinstance(r, OverflowResult), case
    assert (r.provider, r.prompt_tokens, r.limit) == (provider, prompt, limit)
    assert r.message and r.status == status


@pytest.mark.parametrize("case,status,body", NEGATIVE, ids=[c[0] for c in NEGATIVE])
def test_detect_not_overflow(case, status, body):
    assert detect(status, body) is None


def test_parsed_and_text_agree():
    for case, status, body, *_ in POSITIVE:
        if isinstance(body, str) and body.lstrip().startswith("{"):
            assert detect(status, json.loads(body)) == detect(status, body) == detect(status, body.encode())


def test_any_429_is_never_overflow():
    for case, _status, body, *_ in POSITIVE:
        assert detect(429, body) is None, case


def test_silent_truncation():
    # Ollama: limit=2048 prompt=3940 -> new=2048 (ollama#7987)
    r = check_silent_truncation(3940, 2048)
    assert r is not None and r.provider == "ollama" and r.prompt_tokens == 3940 and r.limit == 2048
    assert check_silent_truncation(3940, 2048, context_window=2048).limit == 2048
    assert check_silent_truncation(2100, 2048, context_window=2048) is None      # gap below min_gap
    assert check_silent_truncation(2300, 2048, context_window=2048) is not None  # sent > window >= reported
    assert check_silent_truncation(1000, 950) is None                             # estimation noise
    assert check_silent_truncation(1000, None) is None
    assert check_silent_truncation(1000, 1200) is None
    with pytest.raises(ValueError):
        check_silent_truncation(-1, 0)
    with pytest.raises(ValueError):
        check_silent_truncation(10, 5, ratio=0)


@pytest.mark.parametrize("body,provider,prompt,limit", [
    ({"error": {"message": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 9000 "
                           "`inputs` tokens and 512 `max_new_tokens`", "error_type": "validation"}}, "tgi", 9000, 8192),
    ({"error": "Input validation error: `inputs` must have less than 4096 tokens. Given: 5000",
      "error_type": "validation"}, "tgi", 5000, 4096),
    ({"error": {"code": 400, "message": "The input token count exceeds the maximum number of tokens allowed 1048576.",
                "status": "INVALID_ARGUMENT"}}, "gemini", None, 1048576),
])
def test_more_servers(body, provider, prompt, limit):
    r = detect(400, body)
    assert (r.provider, r.prompt_tokens, r.limit) == (provider, prompt, limit)
