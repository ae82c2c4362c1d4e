"""The simulator's HTTP side: routes, request bodies, JSON answers and server-sent event streams.

Built on the standard library's :class:`http.server.ThreadingHTTPServer` (one thread per connection, HTTP/1.1
keep-alive, ``TCP_NODELAY``). Routes: ``POST /v1/chat/completions`` (also ``/chat/completions``),
``/v1/responses`` (also ``/responses``), ``/v1/messages``, ``/{v1,v1beta}/models/{model}:generateContent``,
``:streamGenerateContent`` (``?alt=sse`` for events, else one JSON array) and ``:countTokens``; ``GET .../models``
lists one model. Anything else is a 404. Streams go out one HTTP chunk per event, as they are made.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .gemini import gemini_chunks, gemini_events, gemini_route
from .provider_errors import bad_request, dumps, overflow_body
from .refusals import error_first_events, refusal_events
from .streams import anthropic_events, encode_chunk, mid_stream_error, openai_events, responses_events

__all__ = ["PATHS", "make_server"]

PATHS = {"/v1/chat/completions": "openai", "/chat/completions": "openai", "/v1/responses": "responses",
         "/responses": "responses", "/v1/messages": "anthropic"}
"""The fixed paths and their dialects (Gemini's paths name the model: :func:`snapglyph.testing.gemini.gemini_route`)."""


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the listen backlog: socketserver's 5 dropped connections of 20 concurrent clients
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):  # a client hanging up is normal
            super().handle_error(request, client_address)


class _V6Server(_Server):
    address_family = socket.AF_INET6


def make_server(sim: Any, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A bound, listening HTTP server answering with ``sim`` (a :class:`~snapglyph.testing.simulator.Simulator`);
    call its ``serve_forever``.

    Raises
    ------
    OSError
        The address cannot be bound.

    Examples
    --------
    >>> srv = make_server(None, "127.0.0.1", 0); srv.server_address[1] > 0
    True
    >>> srv.server_close()
    """
    server = (_V6Server if ":" in host else _Server)((host, port), _Handler)
    server.sim = sim  # type: ignore[attr-defined]
    return server


def _parse(raw: bytes) -> tuple[Any, str | None]:
    """``(body, None)`` for a JSON object, else ``(None, why)``."""
    try:
        body = json.loads(raw)
    except RecursionError:
        return None, "request body nests too deeply to parse"
    except ValueError:
        return None, "request body is not valid JSON"
    if not isinstance(body, dict):
        what = "an array" if isinstance(body, list) else type(body).__name__
        return None, f"request body must be a JSON object, not {what}"
    return body, None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without TCP_NODELAY, Nagle's algorithm holds the body until the
        # client's delayed ACK (about 40 ms per request on Linux).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send(self, status: int, body: Any, headers: dict | None = None) -> None:
        data = dumps(body)
        self._wait()
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
        self._wait()
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

    def _body(self) -> bytes:
        """The request body: ``Content-Length`` bytes, or the chunks of ``Transfer-Encoding: chunked``."""
        if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():           # trailers, then the blank line
                    pass
                return bytes(body)
            body += self.rfile.read(size)
            self.rfile.readline()                              # the CRLF after each chunk

    def _wait(self) -> None:
        """Hold the answer back for the simulator's ``delay`` (the request is already logged)."""
        sim = self.server.sim  # type: ignore[attr-defined]
        if sim.delay:
            sim.stopping.wait(sim.delay)

    def _done(self, sim: Any, entry: dict) -> None:
        if sim.on_request is not None:
            sim.on_request(entry)

    def do_GET(self) -> None:  # noqa: N802
        sim = self.server.sim  # type: ignore[attr-defined]
        injected = sim.take_injected()
        if injected is not None:
            self._send(*injected)
        elif self.path.split("?")[0].rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "sim", "object": "model", "owned_by": "snapglyph"}],
                             "models": [{"name": "models/sim", "displayName": "snapglyph simulator"}]})
        else:
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802
        sim = self.server.sim  # type: ignore[attr-defined]
        raw = self._body()
        path, _, query = self.path.partition("?")
        path = path.rstrip("/")
        entry: dict = {"raw": raw, "headers": dict(self.headers.items()), "path": path,
                       "arrived": time.monotonic()}                # seconds, once the whole body was read
        injected = sim.take_injected(entry)
        if injected is not None:
            self._send(*injected)
            return self._done(sim, entry)
        route = gemini_route(path)
        dialect = "gemini" if route else PATHS.get(path)
        if dialect is None:
            sim.record(entry, kind="not_found", status=404)
            self._send(404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error"}})
            return self._done(sim, entry)
        body, why = _parse(raw)
        if why is not None:
            sim.record(entry, dialect=dialect, kind="bad_request", status=400)
            self._send(400, bad_request(dialect, why))
            return self._done(sim, entry)
        if route and route[1] == "countTokens":
            self._count_tokens(sim, body, entry)
        else:
            stream = bool(body.get("stream")) or bool(route and route[1] == "streamGenerateContent")
            self._answer(sim, dialect, body, entry, stream, route[0] if route else None, "alt=sse" in query)
        return self._done(sim, entry)

    def _count_tokens(self, sim: Any, body: dict, entry: dict) -> None:
        """Gemini's ``countTokens``: ``{"totalTokens": N}`` of ``contents`` or of a ``generateContentRequest``."""
        inner = body.get("generateContentRequest") if isinstance(body.get("generateContentRequest"), dict) else body
        total = sim.count_request("gemini", inner)
        sim.record(entry, dialect="gemini", kind="count_tokens", status=200, prompt_tokens=total.text + total.image)
        entry["sent"] = dumps({"totalTokens": total.text + total.image})
        self._send(200, {"totalTokens": total.text + total.image})

    def _answer(self, sim: Any, dialect: str, body: dict, entry: dict, stream: bool, model: str | None,
                sse: bool) -> None:
        entry["stream"] = stream
        try:
            status, reply = sim.handle(dialect, body, entry, model=model)
        except RecursionError:                              # parsed, yet too deep to count
            entry.update(kind="bad_request", status=400)
            status, reply = 400, bad_request(dialect, "request body nests too deeply to process")
        if status != 200 and stream and sim.overflow_after_200 and entry.get("kind") == "overflow":
            entry.update(kind="overflow_after_200", status=200)     # sglang: 200, the error as the first event
            return self._stream(error_first_events(dialect, reply), entry)
        if status == 200 and stream and entry.get("kind") == "refused":
            return self._stream(refusal_events(dialect, reply), entry)
        if status != 200 or not stream:
            entry["sent"] = dumps(reply)
            self._send(status, reply)
            return
        fail = dialect != "gemini" and sim.take_mid_stream_failure()
        if fail:
            provider = entry.get("provider", "openai")
            _, err = overflow_body(provider if provider != "ollama" else "openai",
                                   prompt=entry.get("prompt_tokens", 0), output=0, window=sim.context_window)
            entry.update(kind="overflow_mid_stream")
            self._stream(mid_stream_error(dialect, reply, err if isinstance(err, dict) else {"message": err}), entry)
        elif dialect == "anthropic":
            self._stream(anthropic_events(reply, extra_event=sim.extra_event), entry)
        elif dialect == "openai":
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(openai_events(reply, include_usage=include), entry)
        elif dialect == "responses":
            self._stream(responses_events(reply), entry)
        elif sse:
            self._stream(gemini_events(reply), entry)
        else:                                               # Gemini without alt=sse: one JSON array of chunks
            entry["sent"] = dumps(gemini_chunks(reply))
            self._send(200, gemini_chunks(reply))
