"""The provider simulator: a scripted model behind a real local HTTP server, with a context window.

:class:`Simulator` speaks OpenAI chat completions (``/v1/chat/completions``), OpenAI Responses
(``/v1/responses``), Anthropic messages (``/v1/messages``) and Gemini (``/v1beta/models/{model}:generateContent``,
``:streamGenerateContent``, ``:countTokens``), streaming or not. It counts the text and image tokens of what it
actually received on the wire (:mod:`snapglyph.testing.counting`), enforces its window, and answers:

- an overflow with the verbatim status and body of a chosen provider
  (:func:`snapglyph.testing.provider_errors.overflow_body`), or for ``provider="ollama"`` with a 200 whose usage
  shows the prompt silently truncated to the window;
- a request that breaks the dialect's grammar with that provider's verbatim grammar error;
- a body that is no JSON object (an array, a string, JSON nested too deeply to read) with a 400;
- anything else with the next step of a scripted model (tool calls, then a final answer), reporting usage
  honestly: the prompt tokens it counted.

Tests can queue canned answers (:meth:`Simulator.inject`: a rate limit, an overload, any status and body), make
the next streams fail after their first event (:attr:`Simulator.fail_mid_stream`), answer a streamed overflow with
a 200 whose first event is the error (:attr:`Simulator.overflow_after_200`, sglang's way), refuse every request
carrying images with a successful refusal (:attr:`Simulator.refuse_images`, :mod:`snapglyph.testing.refusals`),
refuse a request of more than :attr:`Simulator.max_images` images (an image-count cap), answer a body of more than
:attr:`Simulator.max_body_bytes` bytes with a gateway's HTTP 413 (:func:`~snapglyph.testing.provider_errors.
payload_too_large_body`; :attr:`Simulator.body_cap_named`: whether it names the size), serve a model at a smaller
window than ``context_window`` (:attr:`Simulator.model_windows`: a region's window, e.g. Gemini 2.5 Pro answering
"The input token count (218152) exceeds the maximum number of tokens allowed (65536)." in google-gemini/gemini-cli
#11916, read 2026-12-08; the overflow body names the smaller number), and hold every answer back
(``delay``, to try a client's or a proxy's read timeout). The raw bytes and headers of every request, and the
body bytes of every answer (``sent``), are kept in :attr:`Simulator.log`: the recording of what it received
(``arrived``: :func:`time.monotonic` once a request's body was read, for HTTP requests).
"""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any, Callable

from ..errors import InputError
from .counting import Count, Counter, count_text
from .gemini import (gemini_count_items, gemini_grammar_error, gemini_reply, max_output_tokens,
                     tools_disabled)
from .provider_errors import (AMBIGUOUS, OUTPUT_COUNTS, PROVIDERS, anthropic_grammar_error, bad_request, dumps,
                              openai_grammar_error, overflow_body)
from .provider_errors import image_count_body, payload_too_large_body
from .refusals import refusal_reply
from .replies import Step, anthropic_reply, answer, openai_reply
from .responses import responses_count_items, responses_grammar_error, responses_reply

__all__ = ["DIALECTS", "NATIVE", "Simulator"]

DIALECTS = ("openai", "responses", "anthropic", "gemini")
"""The wire formats the simulator speaks."""

NATIVE = {"openai": "openai", "responses": "openai-responses", "anthropic": "anthropic", "gemini": "gemini"}
"""``provider="native"``: each dialect answers an overflow with the body of the provider that defined it."""

_FIELD = {"openai": "messages", "anthropic": "messages", "responses": "input", "gemini": "contents"}


class Simulator:
    """A scripted provider on a local HTTP server; a context manager (start on enter, stop on exit).

    Parameters
    ----------
    script : list of Step, or callable
        The model's answers in order, or ``f(dialect, request_body) -> Step``. Each successful (non-error) answer
        consumes one step; a request without ``tools`` gets a plain-text answer even when the step calls tools.
        When the script is exhausted the model answers ``"done"``.
    provider : str
        Whose overflow body to send (one of :data:`~snapglyph.testing.provider_errors.PROVIDERS` or ``AMBIGUOUS``); ``"ollama"``
        truncates silently instead; ``"native"`` sends each dialect's own provider's body (:data:`NATIVE`).
    context_window : int
        The window in tokens. For the providers in ``OUTPUT_COUNTS`` the prompt plus the requested output must
        fit; for the others the prompt alone.
    image_profile : dict, optional
        Reader profile per dialect for image costs; default ``{"openai": "openai", "responses": "openai",
        "anthropic": "claude", "gemini": "gemini"}``.
    per_message : int
        Overhead tokens per message (role and framing).
    extra_event : bytes
        Raw bytes of one more server-sent event put into every Anthropic stream after its ``ping`` (e.g. an event
        type no SDK knows), to check that a proxy relays what it does not understand.
    delay : float
        Seconds every answer is held back before its first byte (0: none); :meth:`stop` ends the wait.
    on_request : callable, optional
        Called with each :attr:`log` entry once its answer went out (the ``simulate`` command prints it).
    log_limit : int, optional
        Keep only the newest this many :attr:`log` entries (default: all).

    Raises
    ------
    InputError
        An unknown ``provider``, a window below 1 or a negative ``delay``.

    Examples
    --------
    >>> import json, urllib.request
    >>> with Simulator([answer("hello")], provider="anthropic", context_window=1000) as sim:
    ...     req = urllib.request.Request(sim.base_url + "/v1/messages", method="POST", data=json.dumps(
    ...         {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}).encode())
    ...     reply = json.load(urllib.request.urlopen(req))
    >>> reply["content"][0]["text"], sim.log[0]["prompt_tokens"], sim.log[0]["kind"]
    ('hello', 5, 'ok')
    """

    def __init__(self, script: list[Step] | Callable[[str, dict], Step] = (), *, provider: str = "openai",
                 context_window: int = 8000, image_profile: dict | None = None, per_message: int = 4,
                 extra_event: bytes = b"", delay: float = 0.0, on_request: Callable[[dict], None] | None = None,
                 log_limit: int | None = None) -> None:
        if provider not in PROVIDERS + AMBIGUOUS and provider != "native":
            raise InputError(f"unknown provider {provider!r}; known: native, {', '.join(PROVIDERS + AMBIGUOUS)}")
        if int(context_window) < 1 or delay < 0:
            raise InputError(f"the window must be 1 token or more and the delay 0 s or more, not {context_window} "
                             f"and {delay}")
        self.provider = provider
        self.context_window = int(context_window)
        self.per_message = per_message
        self.image_profile = {"openai": "openai", "responses": "openai", "anthropic": "claude", "gemini": "gemini",
                              **(image_profile or {})}
        self.delay = float(delay)
        self.on_request = on_request
        self.log_limit = log_limit
        self.log: list[dict] = []
        self.extra_event = extra_event
        self.fail_mid_stream = 0                          # streams still to fail after their first event
        self.overflow_after_200 = False                   # a streamed overflow: 200, then the error as first event
        self.refuse_images = False                        # a request carrying images: a successful refusal
        self.max_images: int | None = None                # more images in one request: the image-count refusal
        self.max_body_bytes: int | None = None            # a longer body: a gateway's HTTP 413
        self.body_cap_named = True                        # the 413 names the cap (else only that it was passed)
        self.model_windows: dict[str, int] = {}           # a model served at a smaller window (a region's)
        self._script = script
        self._step = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._injected: list[tuple[int, Any, dict]] = []
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.stopping = threading.Event()

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self, port: int = 0, host: str = "127.0.0.1") -> "Simulator":
        """Start serving on ``host:port`` (port 0: a free one) in a daemon thread; returns ``self``.

        Raises
        ------
        OSError
            The address cannot be bound (a port in use).
        """
        from .server import make_server
        self.stopping.clear()
        self._server = make_server(self, host, port)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the server, end any ``delay`` being waited out and close the socket (idempotent)."""
        self.stopping.set()
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
        """``http://HOST:PORT``: the Anthropic and Gemini SDKs' base URL (add ``/v1`` for the OpenAI SDK)."""
        assert self._server is not None, "simulator not started"
        host = self._server.server_address[0]
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    # -- canned answers and the log ----------------------------------------------------------------------------
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
            self._record(entry)
            return status, body, headers

    def take_mid_stream_failure(self) -> bool:
        """True (and one fewer to go) while :attr:`fail_mid_stream` streams are still to fail."""
        with self._lock:
            fail = self.fail_mid_stream > 0
            self.fail_mid_stream -= fail
            return fail

    def record(self, entry: dict, **fields: Any) -> None:
        """Log an answer the server gave outside :meth:`handle` (a body that is no JSON object, an unknown
        path), with a request number of its own."""
        with self._lock:
            entry.update(n=next(self._ids), **fields)
            self._record(entry)

    def _record(self, entry: dict) -> None:
        self.log.append(entry)
        if self.log_limit and len(self.log) > self.log_limit:
            del self.log[:-self.log_limit]

    # -- counting ----------------------------------------------------------------------------------------------
    def count_request(self, dialect: str, body: dict) -> Count:
        """Count the prompt tokens of a request body as received (text, images, tool schemas, framing).

        Examples
        --------
        >>> Simulator().count_request("gemini", {"contents": [{"role": "user", "parts": [{"text": "hi there"}]}]}).text
        6
        """
        if dialect == "gemini":
            system, messages = gemini_count_items(body)
        elif dialect == "responses":
            system, messages = body.get("instructions"), responses_count_items(body.get("input"))
        else:
            system, messages = body.get("system"), body.get("messages") or []
        return Counter(self.image_profile, self.per_message).count(dialect, system, messages, body.get("tools"))

    # -- answering ---------------------------------------------------------------------------------------------
    def _next_step(self, dialect: str, body: dict) -> Step:
        if callable(self._script):
            return self._script(dialect, body)
        if self._step < len(self._script):
            step = self._script[self._step]
            self._step += 1
            return step
        return answer("done")

    def _refusal(self, dialect: str, body: dict, rid: str, entry: dict) -> dict | None:
        """The 400 body for a request the provider would refuse before counting it (a missing or malformed
        message list, a grammar fault), else ``None``; ``entry`` gets the kind."""
        items = body.get(_FIELD[dialect])
        ok = isinstance(items, (list, str) if dialect == "responses" else list) and bool(items)
        if not ok or (isinstance(items, list) and not all(isinstance(m, dict) for m in items)):
            entry.update(kind="bad_request", status=400)
            return bad_request(dialect, f"{_FIELD[dialect]}: field required, a non-empty list of objects", rid)
        err = {"openai": openai_grammar_error, "responses": responses_grammar_error,
               "gemini": gemini_grammar_error}.get(dialect, lambda m: anthropic_grammar_error(m, rid))(items)
        if err is not None:
            entry.update(kind="grammar", status=400, error=err)
        return err

    def _limits(self, dialect: str, cnt: Count, rid: str, entry: dict) -> dict | None:
        """The 400 body for an image the simulator cannot read or Anthropic's many-image rule, else ``None``."""
        if cnt.bad_image:
            entry.update(kind="bad_request", status=400)
            return bad_request(dialect, cnt.bad_image, rid)
        if dialect == "anthropic" and len(cnt.images) > 20 and any(max(s) > 2000 for s in cnt.images):
            i = next(k for k, s in enumerate(cnt.images) if max(s) > 2000)
            entry.update(kind="limit", status=400)
            return bad_request(dialect, f"messages.{i}.content.0.image.source.base64.data: At least one of the "
                               f"image dimensions exceed max allowed size for many-image requests: 2000 pixels", rid)
        return None

    def handle(self, dialect: str, body: dict, entry: dict | None = None, *,
               model: str | None = None) -> tuple[int, dict]:
        """Answer one request body: ``(status, response body)``. Thread-safe; appends ``entry`` (a new dict when
        not given) to :attr:`log` and fills it in (``n``, ``dialect``, ``kind``, ``status``, ``prompt_tokens``,
        ...). ``model`` names the model where the URL does (Gemini), else the body's ``model`` is used.

        Examples
        --------
        >>> sim = Simulator(provider="gemini", context_window=5)
        >>> status, body = sim.handle("gemini", {"contents": [{"role": "user", "parts": [{"text": "a b c d e"}]}]})
        >>> status, body["error"]["message"], sim.log[-1]["kind"]
        (400, 'The input token count (9) exceeds the maximum number of tokens allowed (5).', 'overflow')
        """
        if dialect not in DIALECTS:
            raise InputError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
        with self._lock:
            n = next(self._ids)
            rid = f"req_sim_{n:04d}"
            entry = entry if entry is not None else {}
            provider = NATIVE[dialect] if self.provider == "native" else self.provider
            entry.update(n=n, dialect=dialect, provider=provider)
            self._record(entry)
            size = len(entry["raw"]) if isinstance(entry.get("raw"), (bytes, bytearray)) else len(dumps(body))
            if self.max_body_bytes is not None and size > self.max_body_bytes:     # the gateway, before the model
                status, refused = payload_too_large_body(self.max_body_bytes, named=self.body_cap_named)
                entry.update(kind="body_cap", status=status, error=refused, body_bytes=size)
                return status, refused
            refused = self._refusal(dialect, body, rid, entry)
            if refused is not None:
                return 400, refused
            cnt = self.count_request(dialect, body)
            entry.update(text_tokens=cnt.text, image_tokens=cnt.image, images=list(cnt.images))
            refused = self._limits(dialect, cnt, rid, entry)
            if refused is None and self.max_images is not None and len(cnt.images) > self.max_images:
                _, refused = image_count_body(dialect, len(cnt.images), self.max_images, rid)
                entry.update(kind="limit", status=400, error=refused)
            if refused is not None:
                return 400, refused
            prompt = entry["prompt_tokens"] = cnt.text + cnt.image
            out = max_output_tokens(body) if dialect == "gemini" else int(
                body.get("max_tokens") or body.get("max_completion_tokens") or body.get("max_output_tokens") or 0)
            reported = prompt
            window = entry["window"] = self.model_windows.get(model or str(body.get("model", "")),
                                                              self.context_window)
            if prompt + (out if provider in OUTPUT_COUNTS else 0) > window:
                if provider != "ollama":
                    tools = count_text(json.dumps(body["tools"])) if body.get("tools") else 0
                    status, ebody = overflow_body(provider, prompt=prompt, output=out, window=window,
                                                  request_id=rid, tool_input=min(tools, prompt))
                    entry.update(kind="overflow", status=status, error=ebody)
                    return status, ebody
                reported = window                               # Ollama: front of the prompt silently dropped
                entry["truncated"] = True
            if self.refuse_images and cnt.images:            # no step consumed: the retry gets the scripted one
                reply = self._answer(dialect, n, body, reported, entry, model, step=answer(""))
                entry.update(kind="refused")
                return 200, refusal_reply(dialect, reply)
            return 200, self._answer(dialect, n, body, reported, entry, model)

    def _answer(self, dialect: str, n: int, body: dict, reported: int, entry: dict, model: str | None,
                step: Step | None = None) -> dict:
        """The next scripted step (or ``step``) as ``dialect``'s reply body (tools dropped where the request allows
        none)."""
        tc = body.get("tool_choice")
        if tc == "none" or (isinstance(tc, dict) and tc.get("type") == "none") or (
                dialect == "gemini" and tools_disabled(body)):
            body = {**body, "tools": None}                     # tools defined but not allowed this request
        step = step if step is not None else self._next_step(dialect, body)
        entry.update(kind="ok", status=200, reported_prompt_tokens=reported,
                     tool_calls=[c[0] for c in step.tool_calls] if body.get("tools") else [])
        if dialect == "openai":
            return openai_reply(n, body, step, reported)
        if dialect == "responses":
            return responses_reply(n, body, step, reported)
        if dialect == "gemini":
            return gemini_reply(n, body, step, reported, model or str(body.get("model", "sim")))
        return anthropic_reply(n, body, step, reported)
