"""A local provider simulator: a real HTTP server speaking OpenAI chat completions, OpenAI Responses and Anthropic
messages, streaming (server-sent events, as each provider sends them; :mod:`snapglyph_agent_demo.sim_stream`) or not.

It listens on ``127.0.0.1`` (port 0 picks a free port), counts the text and image tokens of what it actually
received on the wire, enforces a small context window, and answers:

- an overflow with the verbatim status and body of a chosen provider (:mod:`snapglyph_agent_demo.sim_errors`), or for
  ``provider="ollama"`` with a 200 whose ``usage`` shows the prompt silently truncated to the window;
- a request that breaks the dialect's grammar with that provider's verbatim grammar error;
- anything else with the next step of a scripted model (tool calls, then a final answer), reporting ``usage``
  honestly: the prompt tokens it counted.

Tests can also queue canned answers (:meth:`Simulator.inject`: a rate limit, an overload, any status and body)
and make the next streams fail after their first event (:attr:`Simulator.fail_mid_stream`). The raw bytes and
headers of every request, and the body bytes of every answer (``sent``), are kept in :attr:`Simulator.log`.

Counting is deliberately independent of the client: text is counted by :func:`count_text` (a word/punctuation
counter written here), images by decoding the PNG header from the base64 data and applying the published formula
of a snapglyph reader profile (``snapglyph.profile("claude").image_tokens(w, h)``), which is the only code shared
with the client side.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import math
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import snapglyph

from .sim_errors import (OUTPUT_COUNTS, PROVIDERS, anthropic_grammar_error, dumps, openai_grammar_error,
                         overflow_body)
from .sim_stream import (anthropic_events, encode_chunk, mid_stream_error, openai_events, responses_count_items,
                         responses_events, responses_grammar_error, responses_reply)

__all__ = ["Simulator", "Step", "answer", "call", "count_text", "png_size"]

_WORD = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


def count_text(text: str) -> int:
    """Tokens of ``text`` by the simulator's own rule: one per punctuation/symbol character, one per run of up to
    3 digits, and one per started 5 letters of a word; whitespace is free. Roughly a BPE tokenizer on English
    and code, with no shared code with the client's estimator."""
    n = 0
    for m in _WORD.finditer(text):
        s = m.group()
        if s[0].isdigit():
            n += math.ceil(len(s) / 3)
        elif s[0].isalpha() and s.isascii():
            n += math.ceil(len(s) / 5)
        else:
            n += len(s)
    return n


def png_size(data: bytes) -> tuple[int, int]:
    """``(width, height)`` in pixels from a PNG's IHDR chunk.

    Raises
    ------
    ValueError
        If ``data`` is not a PNG.
    """
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    return struct.unpack(">II", data[16:24])


@dataclass(frozen=True)
class Step:
    """One scripted model answer: tool calls (a list of ``(name, arguments)``), or a final text, or both."""

    text: str = ""
    tool_calls: tuple[tuple[str, dict], ...] = ()


def call(*calls: tuple[str, dict]) -> Step:
    """A scripted step calling tools, e.g. ``call(("read_file", {"path": "a.txt"}))`` (parallel when several)."""
    return Step(tool_calls=tuple(calls))


def answer(text: str) -> Step:
    """A scripted final answer."""
    return Step(text=text)


@dataclass
class _Count:
    text: int = 0
    image: int = 0
    images: list[tuple[int, int]] = field(default_factory=list)
    bad_image: str | None = None


class Simulator:
    """A scripted provider on a local HTTP server.

    Parameters
    ----------
    script : list of Step, or callable
        The model's answers in order, or ``f(dialect, request_body) -> Step``. Each successful (non-error) answer
        consumes one step; a request without ``tools`` gets a plain-text answer even when the step calls tools.
        When the script is exhausted the model answers ``"done"``.
    provider : str
        Whose overflow body to send (see :data:`snapglyph_agent_demo.sim_errors.PROVIDERS`); ``"ollama"`` truncates
        silently instead.
    context_window : int
        The window in tokens. For the providers in ``OUTPUT_COUNTS`` the prompt plus ``max_tokens`` must fit;
        for the others the prompt alone.
    image_profile : dict, optional
        Reader profile per dialect for image costs; default ``{"openai": "openai", "anthropic": "claude"}``.
    per_message : int
        Overhead tokens per message (role and framing).
    extra_event : bytes
        Raw bytes of one more server-sent event put into every Anthropic stream after its ``ping`` (e.g. an event
        type no SDK knows), to check that a proxy relays what it does not understand.
    """

    def __init__(self, script: list[Step] | Callable[[str, dict], Step] = (), *, provider: str = "openai",
                 context_window: int = 8000, image_profile: dict | None = None, per_message: int = 4,
                 extra_event: bytes = b"") -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}")
        self.provider = provider
        self.context_window = int(context_window)
        self.per_message = per_message
        self.image_profile = {"openai": "openai", "responses": "openai", "anthropic": "claude", **(image_profile or {})}
        self._script = script
        self._step = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.log: list[dict] = []
        self.extra_event = extra_event
        self.fail_mid_stream = 0                          # streams still to fail after their first event
        self._injected: list[tuple[int, Any, dict]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> "Simulator":
        """Start serving on 127.0.0.1 at a free port, in a daemon thread; returns ``self``."""
        server = _Server(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.sim = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the server and close its socket (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "Simulator":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        assert self._server is not None, "simulator not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (Anthropic SDK base URL; add ``/v1`` for the OpenAI SDK)."""
        return f"http://127.0.0.1:{self.port}"

    def inject(self, status: int, body: Any, headers: dict | None = None) -> None:
        """Answer the next request (any path, any dialect) with ``status`` and ``body`` (a dict, sent as compact
        JSON, or a str sent as it is), plus ``headers``; answers queue up in order."""
        with self._lock:
            self._injected.append((status, body, dict(headers or {})))

    def take_injected(self, entry: dict | None = None) -> tuple[int, Any, dict] | None:
        """The next queued answer (logged as ``entry``), or ``None``."""
        with self._lock:
            if not self._injected:
                return None
            status, body, headers = self._injected.pop(0)
            entry = entry if entry is not None else {}
            entry.update(n=next(self._ids), kind="injected", status=status, sent=dumps(body))
            self.log.append(entry)
            return status, body, headers

    # -- counting ----------------------------------------------------------------------------------------------
    def _image(self, dialect: str, b64: str, cnt: _Count) -> None:
        try:
            w, h = png_size(base64.b64decode(b64[:64] + "=" * (-len(b64[:64]) % 4)))
        except (ValueError, struct.error, binascii.Error):
            cnt.bad_image = "could not process image: only base64 PNG images are simulated"
            return
        cnt.images.append((w, h))
        cnt.image += snapglyph.profile(self.image_profile[dialect]).image_tokens(w, h)

    def _content(self, dialect: str, content: Any, cnt: _Count) -> None:
        if isinstance(content, str):
            cnt.text += count_text(content)
            return
        for part in content or []:
            t = part.get("type")
            if t in ("text", "input_text"):
                cnt.text += count_text(part.get("text", ""))
            elif t == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                if url.startswith("data:") and "," in url:
                    self._image(dialect, url.split(",", 1)[1], cnt)
                else:
                    cnt.bad_image = "simulator cannot fetch image URLs (no network)"
            elif t == "image":
                self._image(dialect, (part.get("source") or {}).get("data", ""), cnt)
            elif t == "tool_use":
                cnt.text += count_text(part.get("name", "")) + count_text(json.dumps(part.get("input", {})))
            elif t == "tool_result":
                self._content(dialect, part.get("content", ""), cnt)
            elif t in ("thinking", "redacted_thinking"):
                cnt.text += count_text(part.get("thinking", "") or part.get("data", ""))

    def count_request(self, dialect: str, body: dict) -> _Count:
        """Count the prompt tokens of a request body as received (text, images, tool schemas, framing)."""
        cnt = _Count()
        system = body.get("instructions") if dialect == "responses" else body.get("system")
        if system:
            self._content(dialect, system, cnt)
        messages = responses_count_items(body.get("input")) if dialect == "responses" else body.get("messages", [])
        for m in messages:
            cnt.text += self.per_message
            self._content(dialect, m.get("content"), cnt)
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                cnt.text += count_text(fn.get("name", "")) + count_text(fn.get("arguments", ""))
        if body.get("tools"):
            cnt.text += count_text(json.dumps(body["tools"]))
        return cnt

    # -- answering ---------------------------------------------------------------------------------------------
    def _next_step(self, dialect: str, body: dict) -> Step:
        if callable(self._script):
            return self._script(dialect, body)
        if self._step < len(self._script):
            step = self._script[self._step]
            self._step += 1
            return step
        return answer("done")

    def handle(self, dialect: str, body: dict, entry: dict | None = None) -> tuple[int, dict]:
        """Answer one request body: ``(status, response body)``. Thread-safe; appends ``entry`` (a new dict when
        not given) to :attr:`log` and fills it in."""
        with self._lock:
            n = next(self._ids)
            rid = f"req_sim_{n:04d}"
            entry = entry if entry is not None else {}
            entry.update(n=n, dialect=dialect, provider=self.provider)
            self.log.append(entry)
            messages = body.get("input" if dialect == "responses" else "messages")
            if not messages or not isinstance(messages, (list, str) if dialect == "responses" else list):
                entry.update(kind="bad_request", status=400)
                return 400, _bad(dialect, "input: field required" if dialect == "responses"
                                 else "messages: field required", rid)
            if dialect == "openai":
                err = openai_grammar_error(messages)
            elif dialect == "responses":
                err = responses_grammar_error(messages)
            else:
                err = anthropic_grammar_error(messages, rid)
            if err is not None:
                entry.update(kind="grammar", status=400, error=err)
                return 400, err
            cnt = self.count_request(dialect, body)
            entry.update(text_tokens=cnt.text, image_tokens=cnt.image, images=list(cnt.images))
            if cnt.bad_image:
                entry.update(kind="bad_request", status=400)
                return 400, _bad(dialect, cnt.bad_image, rid)
            if dialect == "anthropic" and len(cnt.images) > 20 and any(max(s) > 2000 for s in cnt.images):
                i = next(k for k, s in enumerate(cnt.images) if max(s) > 2000)
                entry.update(kind="limit", status=400)
                return 400, _bad(dialect, f"messages.{i}.content.0.image.source.base64.data: At least one of the "
                                 f"image dimensions exceed max allowed size for many-image requests: 2000 pixels", rid)
            prompt = cnt.text + cnt.image
            out = int(body.get("max_tokens") or body.get("max_completion_tokens") or body.get("max_output_tokens")
                      or 0)
            need = prompt + (out if self.provider in OUTPUT_COUNTS else 0)
            entry["prompt_tokens"] = prompt
            reported = prompt
            if need > self.context_window:
                if self.provider != "ollama":
                    status, ebody = overflow_body(self.provider, prompt=prompt, output=out,
                                                  window=self.context_window, request_id=rid)
                    entry.update(kind="overflow", status=status, error=ebody)
                    return status, ebody
                reported = self.context_window                  # Ollama: front of the prompt silently dropped
                entry["truncated"] = True
            tc = body.get("tool_choice")
            if tc == "none" or (isinstance(tc, dict) and tc.get("type") == "none"):
                body = {**body, "tools": None}                 # tools defined but not allowed this request
            step = self._next_step(dialect, body)
            entry.update(kind="ok", status=200, reported_prompt_tokens=reported,
                         tool_calls=[c[0] for c in step.tool_calls] if body.get("tools") else [])
            if dialect == "openai":
                return 200, _openai_reply(n, body, step, reported)
            if dialect == "responses":
                return 200, responses_reply(n, body, step, reported, _final_text(step), count_text)
            return 200, _anthropic_reply(n, body, step, reported)


def _bad(dialect: str, message: str, rid: str) -> dict:
    if dialect in ("openai", "responses"):
        return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}, "request_id": rid}


def _final_text(step: Step) -> str:
    return step.text or "Wrap-up: I ran out of tool rounds; here is what I found so far."


def _openai_reply(n: int, body: dict, step: Step, prompt: int) -> dict:
    msg: dict = {"role": "assistant", "content": None, "refusal": None}
    calls = step.tool_calls if body.get("tools") else ()
    if calls:
        msg["tool_calls"] = [{"id": f"call_sim{n:04d}_{k}", "type": "function",
                              "function": {"name": name, "arguments": json.dumps(args)}}
                             for k, (name, args) in enumerate(calls)]
        msg["content"] = step.text or None
    else:
        msg["content"] = _final_text(step)
    out = count_text(json.dumps(msg))
    return {"id": f"chatcmpl-sim{n:04d}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "sim"), "system_fingerprint": "sim",
            "choices": [{"index": 0, "message": msg, "logprobs": None,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}}


def _anthropic_reply(n: int, body: dict, step: Step, prompt: int) -> dict:
    calls = step.tool_calls if body.get("tools") else ()
    content: list[dict] = []
    if step.text or not calls:
        content.append({"type": "text", "text": step.text if calls else _final_text(step)})
    content += [{"type": "tool_use", "id": f"toolu_sim{n:04d}_{k}", "name": name, "input": args}
                for k, (name, args) in enumerate(calls)]
    out = count_text(json.dumps(content))
    return {"id": f"msg_sim{n:04d}", "type": "message", "role": "assistant", "model": body.get("model", "sim"),
            "content": content, "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": out}}


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the listen backlog: socketserver's 5 dropped connections of 20 concurrent clients

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):  # a client hanging up is normal
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without TCP_NODELAY, Nagle's algorithm holds the body until the
        # client's delayed ACK (about 40 ms per request on Linux).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send(self, status: int, body: dict | str, headers: dict | None = None) -> None:
        data = dumps(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status >= 400:
            self.send_header("x-should-retry", "false")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: Any, entry: dict) -> None:
        """Send server-sent events as they are made, one HTTP chunk per event; ``entry["sent"]`` gets the body."""
        sent = entry["sent"] = bytearray()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for ev in events:
                sent += ev
                self.wfile.write(encode_chunk(ev))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        injected = self.server.sim.take_injected()  # type: ignore[attr-defined]
        if injected is not None:
            self._send(*injected)
        elif self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "sim", "object": "model", "owned_by": "snapglyph"}]})
        else:
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802
        sim: Simulator = self.server.sim  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        entry: dict = {"raw": raw, "headers": dict(self.headers.items())}
        injected = sim.take_injected(entry)
        if injected is not None:
            self._send(*injected)
            return
        path = self.path.split("?")[0].rstrip("/")
        dialect = {"/v1/chat/completions": "openai", "/chat/completions": "openai", "/v1/responses": "responses",
                   "/responses": "responses", "/v1/messages": "anthropic"}.get(path)
        if dialect is None:
            self._send(404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error"}})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, _bad(dialect, "request body is not valid JSON", "req_sim"))
            return
        entry["stream"] = bool(body.get("stream"))
        status, reply = sim.handle(dialect, body, entry)
        if status != 200 or not body.get("stream"):
            entry["sent"] = dumps(reply)
            self._send(status, reply)
            return
        with sim._lock:
            fail = sim.fail_mid_stream > 0
            sim.fail_mid_stream -= fail
        if fail:
            prompt = entry.get("prompt_tokens", 0)
            _, err = overflow_body(sim.provider if sim.provider != "ollama" else "openai", prompt=prompt, output=0,
                                   window=sim.context_window)
            entry.update(kind="overflow_mid_stream")
            self._stream(mid_stream_error(dialect, reply, err if isinstance(err, dict) else {"message": err}), entry)
        elif dialect == "anthropic":
            self._stream(anthropic_events(reply, extra_event=sim.extra_event), entry)
        elif dialect == "openai":
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(openai_events(reply, include_usage=include), entry)
        else:
            self._stream(responses_events(reply), entry)
