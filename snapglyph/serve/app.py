"""The proxy: an ASGI application (starlette) in front of one provider.

Every request is relayed to the upstream. ``POST`` requests to the conversation routes (:func:`~.rewrite.route`: the
paths of :data:`~.rewrite.ROUTES` and Gemini's ``models/{model}:generateContent`` and ``:streamGenerateContent``)
are read:

1. a conversation compacted before (or marked by an overflow inside a started stream) is compacted before it is
   sent, with the same cut while its tail fits (sticky: the earlier pages stay byte-identical, so a provider's
   prompt cache keeps them), else with a new cut; with ``compact_at`` a request whose estimate passes that share
   of a known window is compacted too;
2. any other request goes upstream as the bytes the client sent (before it is read where no conversation of its
   caller is compacted: :mod:`~snapglyph.serve.early`);
3. an answer that :func:`snapglyph.providers.overflow.detect` calls an overflow (read before any byte went to the
   client) is compacted to the window it reports and sent once more; the client sees only that second answer,
   whatever it is. Rate limits, overloads and grammar errors are relayed as they came.

``GET /snapglyph/status`` lists the conversations and their figures. One log line per request goes to the
``snapglyph.serve`` logger. Keys and other header values are never logged or stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..compaction.keys import conversation_id
from ..errors import SnapglyphError
from ..providers.overflow import OverflowResult, detect
from .answers import error_read, relayable, watch
from .early import EarlySend, compacted_first
from .guards import host_allowed, read_json, read_raw
from .storms import arrive, storm_response
from .recall_loop import RecallJob, RecallRelay
from .recall_shapes import offers_recall
from .relay import Relay
from .config import ServeConfig
from .rewrite import RECALL_DIALECTS, image_refusal, pick_profile, route, text_only
from .state import ConversationRecord, StateDir, default_state_dir
from .planner import Outcome, Planner
from .upstream import Upstream, decode_body, forward_headers

__all__ = ["CONVERSATION_HEADER", "ServeConfig", "create_app"]

CONVERSATION_HEADER = "x-snapglyph-conversation"
"""A client's own key of its conversation (:func:`snapglyph.compaction.keys.conversation_id`); not sent upstream."""

log = logging.getLogger("snapglyph.serve")


@dataclass
class _Ctx:
    """One request as the proxy handles it."""

    t0: float
    method: str
    path: str
    query: bytes
    headers: list
    raw: bytes
    dialect: str | None = None
    model: str = ""
    body: dict | None = None
    key: str | None = None
    caller: str | None = None
    profile: str = ""
    sent: bytes = b""
    action: str = "passed"
    note: str = ""
    outcome: Outcome | None = None
    text_only: bool = False                 # sent once more without pages after a refusal (serve.answers)
    first_event_retried: bool = False
    image_capped: bool = False
    byte_capped: bool = False               # sent once more under a body byte cap (serve.answers)
    storm: str = ""                         # the one-line error of a compaction storm (serve.storms)
    exact: bool = False


class Proxy:
    """The proxy's state and handlers; :attr:`app` is the ASGI application.

    Parameters
    ----------
    config : ServeConfig
    """

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.upstream = Upstream(config.upstream, read_timeout=config.upstream_timeout)
        self.states = StateDir(config.state or default_state_dir())
        self.planner = Planner(self.states, config)
        self._locks: dict[str, asyncio.Lock] = {}
        self.requests = 0
        self.recall_rounds = 0
        self._tasks: set = set()                           # work left for after a request went out
        self.early = EarlySend(on=len(self.states) == 0)   # requests sent before they are read (serve.early)
        self.app = Starlette(routes=[
            Route("/snapglyph/status", self.status, methods=["GET"]),
            Route("/{path:path}", self.handle, methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD",
                                                        "OPTIONS"]),
        ], lifespan=self._lifespan)
        self.app.state.proxy = self

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Any) -> Any:
        gc.collect()
        gc.freeze()         # what serve loaded is never collected: a collection during a recovery walks less (10-15
        yield               # ms of garbage collection per recovery of a 200k-token conversation, 36-97 ms before)
        await asyncio.gather(*self._tasks)
        await self.upstream.aclose()

    # -- routes ------------------------------------------------------------------------------------------------
    async def status(self, request: Request) -> Response:
        """``GET /snapglyph/status``: the upstream, the settings, every compacted conversation's figures and the
        windows learned per upstream and model (``windows``, :mod:`snapglyph.compaction.windows`); only
        for a ``Host`` of the bound address (:func:`~snapglyph.serve.guards.host_allowed`), else a 403."""
        if not host_allowed(request.headers.get("host"), request.scope.get("server")):
            return JSONResponse({"error": "snapglyph serve: /snapglyph/status answers only a Host of the address it "
                                          "is bound to"}, status_code=403)
        convs = sorted((c.to_json() for c in self.states.all()), key=lambda c: c["key"])
        for c in convs:
            c.pop("history", None)
        return JSONResponse({"upstream": self.upstream.base_url, "dry_run": self.config.dry_run,
                             "requests": self.requests, "recall_rounds": self.recall_rounds, "conversations": convs,
                             "refused_pages": self.planner.refused.all(),
                             "windows": self.planner.book.all()})

    async def handle(self, request: Request) -> Any:
        """Relay one request, compacting it first or after an overflow where the rules say so."""
        self.requests += 1
        scope = request.scope
        t0 = time.perf_counter()
        try:
            raw = await request.body()
        except ClientDisconnect:                            # one log line, no traceback; nothing went upstream
            log.info("- relay %s %s client disconnected before its request body arrived %.1f ms", request.method,
                     scope["path"], (time.perf_counter() - t0) * 1000)
            return Response(status_code=400)
        ctx = _Ctx(t0, request.method, scope["path"], scope.get("query_string", b""),
                   forward_headers(scope["headers"], request=True), raw)
        ctx.sent = ctx.raw
        ctx.caller = request.headers.get(CONVERSATION_HEADER) or None
        if request.method == "POST":
            ctx.dialect, ctx.model = route(ctx.path) or (None, "")     # Gemini: the model from the path
        early = await self.early.send(self, ctx)            # nothing to compact: sent before it is read
        if ctx.dialect is not None:
            await self._read(ctx)
        if ctx.key is not None:
            arrive(self.states, ctx.key)                    # its cuts count at this number (serve.storms)
        if ctx.key is not None and early is None:
            await self._before(ctx)
            if ctx.storm:
                return storm_response(self, ctx)
        try:
            resp = await (early or self.upstream.send(ctx.method, ctx.path, ctx.query, ctx.headers, ctx.sent))
        except httpx.TransportError as e:
            self._line(ctx, 502, f"upstream unreachable: {type(e).__name__}")
            return JSONResponse({"type": "error", "error": {
                "type": "api_error", "message": f"snapglyph serve: upstream {self.upstream.base_url} unreachable "
                                                f"({type(e).__name__})"}}, status_code=502)
        if ctx.key is not None and resp.status_code >= 400 and not ctx.path.endswith("/count_tokens"):
            return await self._after_error(ctx, resp)
        return await self._answer(ctx, resp)

    async def _answer(self, ctx: _Ctx, resp: Any) -> Any:
        """A successful answer: held where it may call for a retry (:func:`~snapglyph.serve.answers.watch`)."""
        out = await watch(self, ctx, resp)
        return self._relay(ctx, out) if relayable(out) else out

    # -- steps -------------------------------------------------------------------------------------------------
    async def _read(self, ctx: _Ctx) -> None:
        body = read_json(ctx.raw, exact=False)   # no JSON, or nested too deeply: relayed as it came; read exactly
        ctx.exact = False                        # (:meth:`_exact`) only where it is compacted
        if not isinstance(body, dict):
            return
        try:
            key = conversation_id(ctx.dialect, body, caller=ctx.caller)
        except (SnapglyphError, RecursionError):
            return
        ctx.body, ctx.key = body, key
        self.early.saw(ctx.caller, key)                     # before anything may compact it
        model = ctx.model = ctx.model or (body.get("model") if isinstance(body.get("model"), str) else "")
        try:
            ctx.profile = pick_profile(model, ctx.dialect, self.config.profile)
        except SnapglyphError:
            ctx.profile = pick_profile(model, ctx.dialect)

    @staticmethod
    def _exact(ctx: _Ctx) -> dict:
        """The body to compact, read by the standard library (:func:`~snapglyph.serve.guards.read_json`), so its head
        and tail go out as they came; the fast reading only told the conversation and the model."""
        if not ctx.exact:
            body = read_json(ctx.raw)
            ctx.body, ctx.exact = body if isinstance(body, dict) else ctx.body, True
        return ctx.body

    def _lock(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    def _images_refused(self, ctx: _Ctx, conv: ConversationRecord | None) -> str:
        model = ctx.model
        if conv is not None and conv.no_images:
            return conv.no_images
        if text_only(model, self.config.text_only):
            return f"model {model} does not read images (text-only list)"
        return ""

    async def _before(self, ctx: _Ctx) -> None:
        """Compact before sending: a compacted or marked conversation, or ``compact_at`` passed."""
        conv = self.states.get(ctx.key)
        wants = compacted_first(conv)
        if not wants and self.config.compact_at is None and not self.planner.learned(ctx.model, ctx.raw):
            return
        why = self._images_refused(ctx, conv)
        if why:
            ctx.note = f"relayed unchanged: {why}"
            return
        count_only = ctx.path.endswith("/count_tokens")
        out = await anyio.to_thread.run_sync(
            lambda: self.planner.before(ctx.key, ctx.dialect, self._exact(ctx), ctx.profile, dry=self.config.dry_run
                                        or count_only, model=ctx.model or None))
        if out is None:
            return
        ctx.outcome = out
        if out.error:
            ctx.note, ctx.storm = out.error, out.error if out.storm else ""
            return
        if self.config.dry_run:
            ctx.note = f"dry run: would send {out.summary()}"
            return
        ctx.sent, ctx.action = out.data, out.action

    async def _after_error(self, ctx: _Ctx, resp: httpx.Response) -> Any:
        """An error answer before any byte went out: recover from an overflow once; else relay it as it came."""
        raw = await read_raw(resp)
        await resp.aclose()
        text = decode_body(raw, resp.headers.get("content-encoding"))
        ov = await error_read(self, ctx, resp.status_code, text)
        if not isinstance(ov, OverflowResult) and ov is not None:
            return ov                                       # the request again, under an image-count cap
        sent_pages = ctx.sent is not ctx.raw
        if ov is None and sent_pages and image_refusal(text.decode("utf-8", "replace")):
            async with self._lock(ctx.key):
                self.planner.refuse_images(ctx.key, "the upstream refused images for this model")
            ctx.note = "relayed unchanged: the upstream refused images for this model"
            ctx.sent, ctx.action = ctx.raw, "passed"
            return await self._resend(ctx)
        if ov is None or self._images_refused(ctx, self.states.get(ctx.key)):
            if ov is not None:
                ctx.note = f"overflow relayed: {self._images_refused(ctx, self.states.get(ctx.key))}"
            return Relay(resp, body=raw, on_done=lambda r: self._done(ctx, r))
        if sent_pages:                                     # the compacted request overflowed: relay, learn
            await anyio.to_thread.run_sync(lambda: self.planner.second_overflow(ctx.key, ov, ctx.outcome))
            ctx.note = f"second overflow relayed ({ov.provider})"
            return Relay(resp, body=raw, on_done=lambda r: self._done(ctx, r))
        out = await anyio.to_thread.run_sync(
            lambda: self.planner.recover(ctx.key, ctx.dialect, self._exact(ctx), ctx.profile, ov,
                                         dry=self.config.dry_run, model=ctx.model or None, later=True))
        ctx.outcome = out
        if out.storm:
            ctx.storm = out.error
            return storm_response(self, ctx)
        if out.error or self.config.dry_run:
            ctx.note = (f"overflow relayed: {out.error}" if out.error
                        else f"dry run: overflow ({ov.provider}); would send {out.summary()}")
            return Relay(resp, body=raw, on_done=lambda r: self._done(ctx, r))
        ctx.sent, ctx.action = out.data, "recovered"
        return await self._resend(ctx)

    async def _resend(self, ctx: _Ctx) -> Any:
        try:
            resp = await self.upstream.send(ctx.method, ctx.path, ctx.query, ctx.headers, ctx.sent)
        except httpx.TransportError as e:
            self._save_store(ctx)
            self._line(ctx, 502, f"upstream unreachable: {type(e).__name__}")
            return JSONResponse({"type": "error", "error": {"type": "api_error", "message": "snapglyph serve: "
                                 f"upstream unreachable ({type(e).__name__})"}}, status_code=502)
        self._save_store(ctx)
        if resp.status_code >= 400 and ctx.action == "recovered":
            raw = await read_raw(resp)
            await resp.aclose()
            text = decode_body(raw, resp.headers.get("content-encoding"))
            ov = await error_read(self, ctx, resp.status_code, text)
            if not isinstance(ov, OverflowResult) and ov is not None:
                return ov
            if ov is None and image_refusal(text.decode("utf-8", "replace")):
                async with self._lock(ctx.key):
                    self.planner.refuse_images(ctx.key, "the upstream refused images for this model")
                ctx.note = "relayed unchanged: the upstream refused images for this model"
                ctx.sent, ctx.action = ctx.raw, "passed"
                return await self._resend(ctx)
            if ov is not None:
                await anyio.to_thread.run_sync(lambda: self.planner.second_overflow(ctx.key, ov, ctx.outcome))
                ctx.note = f"second overflow relayed ({ov.provider})"
            return Relay(resp, body=raw, on_done=lambda r: self._done(ctx, r))
        return await self._answer(ctx, resp)

    def _save_store(self, ctx: _Ctx) -> None:
        """A recovery's source store, written in a worker thread while the answer comes (the retry did not wait)."""
        if ctx.action == "recovered":
            task = asyncio.ensure_future(anyio.to_thread.run_sync(self.planner.save_store, ctx.key))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _relay(self, ctx: _Ctx, resp: httpx.Response) -> Any:
        """The answer to the client: through the recall loop where the compacted request offers recall_messages
        (the proxy added it), else as it comes (always for a dialect outside
        :data:`~snapglyph.serve.rewrite.RECALL_DIALECTS`)."""
        done = functools.partial(self._done, ctx)
        out = ctx.outcome
        if (out is None or ctx.action == "passed" or not self.config.recall_rounds or resp.status_code >= 300
                or ctx.body is None or offers_recall(ctx.body) or ctx.path.endswith("/count_tokens")
                or ctx.dialect not in RECALL_DIALECTS):
            return Relay(resp, on_done=done)
        conv = self.states.get(ctx.key)
        room = (conv.budget or 0) - out.tokens_after if conv is not None else 0
        job = RecallJob(self.upstream, ctx.method, ctx.path, ctx.query, ctx.headers, ctx.dialect,
                        ctx.sent, self.planner._store(ctx.key), ctx.profile, room,
                        self.config.recall_rounds)
        return RecallRelay(resp, job, on_done=done)

    def _recalled(self, ctx: _Ctx, relay: Any) -> int:
        """The recall rounds a relay answered, counted and put in the log line's note."""
        rounds = getattr(relay, "rounds", 0)
        said = [f"recall_messages answered: {rounds} round(s), ids {'; '.join(relay.asked)}"] if rounds else []
        out = ctx.outcome                                   # the compactor's note of a middle shown on no page
        if isinstance(relay, RecallRelay) and "every page of the middle was dropped" in out.note:
            said.append("no page of the middle shown: recall_messages offered and answered here")
        said += [relay.note] if getattr(relay, "note", "") else []
        ctx.note = "; ".join([ctx.note] * bool(ctx.note) + said)
        self.recall_rounds += rounds
        return rounds

    async def _done(self, ctx: _Ctx, relay: Relay) -> None:
        """After the last byte: an overflow inside the stream marks the conversation; the log line."""
        if relay.watched and ctx.key is not None:
            ov = detect(None, relay.watched)
            if ov is not None:
                self.planner.mark_pending(ctx.key, ctx.dialect, ctx.profile)
                ctx.note = (ctx.note + "; " if ctx.note else "") + (
                    f"overflow inside the stream ({ov.provider}): relayed, the next request is compacted first")
        if ctx.key is not None:
            self.planner.count(ctx.key, relay.status, ctx.outcome if ctx.action != "passed" else None,
                               recalls=self._recalled(ctx, relay))
        self._line(ctx, relay.status, ctx.note, relay)

    def _line(self, ctx: _Ctx, status: int, note: str = "", relay: Relay | None = None) -> None:
        ms = (time.perf_counter() - ctx.t0) * 1000
        what = ctx.dialect or "relay"
        figures = ""
        out = ctx.outcome
        if out is not None and ctx.action != "passed":
            figures = f" tokens {out.tokens_before}->{out.tokens_after} pages {out.pages} cut #{out.cut}"
            note = "; ".join(n for n in (out.note, note) if n)
        log.info("%s %s %s %s %s%s status %d %.1f ms%s", ctx.key or "-", what, ctx.method, ctx.path, ctx.action,
                 figures, status, ms, f" ({note})" if note else "")


def create_app(config: ServeConfig) -> Starlette:
    """The ASGI application of ``snapglyph serve`` (run it with uvicorn).

    Parameters
    ----------
    config : ServeConfig

    Returns
    -------
    starlette.applications.Starlette
        ``app.state.proxy`` is the :class:`Proxy` (its state folder, planner and upstream).

    Raises
    ------
    ServeError
        If the upstream URL is not http(s) or the state folder cannot be written.
    UnknownProfileError
        If ``config.profile`` names no profile.

    Examples
    --------
    >>> import tempfile
    >>> app = create_app(ServeConfig("http://127.0.0.1:9", state=Path(tempfile.mkdtemp())))
    >>> [r.path for r in app.routes]
    ['/snapglyph/status', '/{path:path}']
    """
    if config.profile:
        from ..providers.profiles import profile
        profile(config.profile)
    return Proxy(config).app
