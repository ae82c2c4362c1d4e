"""A local LLM provider that overflows: snapglyph's simulator, for tests and for trying ``snapglyph serve`` offline.

:class:`Simulator` is a real HTTP server on 127.0.0.1 speaking OpenAI chat completions, OpenAI Responses,
Anthropic messages and Gemini ``generateContent`` / ``streamGenerateContent``, streaming or not. It counts what it
received, enforces a context window, answers an overflow with a real provider's verbatim error body, checks each
dialect's grammar as the provider does, answers everything else from a scripted model, and records every request
(raw bytes and headers) and every answer in :attr:`Simulator.log`. ``snapglyph simulate --window 20000 --port 8788``
runs one until Ctrl-C (:func:`snapglyph.testing.command.run`). Nothing here calls a model or the network.

Modules: :mod:`.simulator` (the class), :mod:`.server` (HTTP), :mod:`.counting` (its tokenizer and image costs),
:mod:`.provider_errors` (overflow bodies, OpenAI and Anthropic grammar), :mod:`.replies` (the scripted model),
:mod:`.streams` (server-sent events), :mod:`.responses` and :mod:`.gemini` (those dialects), :mod:`.command`.

Examples
--------
>>> import json, urllib.error, urllib.request
>>> from snapglyph.testing import Simulator, answer
>>> def post(sim, body):
...     req = urllib.request.Request(sim.base_url + "/v1/chat/completions", data=json.dumps(body).encode())
...     try:
...         return json.load(urllib.request.urlopen(req))
...     except urllib.error.HTTPError as e:
...         return json.load(e)
>>> with Simulator([answer("hi")], provider="openai", context_window=50) as sim:
...     small = post(sim, {"model": "m", "messages": [{"role": "user", "content": "hello"}]})
...     big = post(sim, {"model": "m", "messages": [{"role": "user", "content": "word " * 80}]})
>>> small["choices"][0]["message"]["content"], big["error"]["code"], [e["kind"] for e in sim.log]
('hi', 'context_length_exceeded', ['ok', 'overflow'])
"""

from __future__ import annotations

from .counting import count_text, png_size
from .provider_errors import OUTPUT_COUNTS, PROVIDERS, anthropic_grammar_error, openai_grammar_error, overflow_body
from .replies import Step, answer, call
from .simulator import DIALECTS, NATIVE, Simulator

__all__ = ["DIALECTS", "NATIVE", "OUTPUT_COUNTS", "PROVIDERS", "Simulator", "Step", "anthropic_grammar_error",
           "answer", "call", "count_text", "openai_grammar_error", "overflow_body", "png_size"]
