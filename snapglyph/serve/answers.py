"""What ``serve`` does with a successful answer before its first byte goes to the client, and with an image cap.

:func:`watch` holds the start of a 200 (:func:`~snapglyph.serve.first_event.hold`) where it may need a retry:

- a request that carried page images: an answer that ends with no content and refuses or says nothing
  (:func:`snapglyph.providers.refusal.refusal`) is sent once more without pages (:func:`~snapglyph.serve.refusal.
  text_only`); the retry's answer is relayed whatever it is;
- a streamed request near its window (the window known and the estimate at or above ``hold_near`` of it, or no
  window known): an error as the first event (sglang's 200 then ``data: {"error": ...}``) that
  :func:`~snapglyph.compaction.error_read.read_error` calls an overflow is recovered like an overflow answer (compact,
  retry, relay the retried stream); of a request already compacted it teaches the smaller window and is relayed.

:func:`image_capped` retries a request refused for its image count under that cap, :func:`byte_capped` one refused
for its body size under that byte cap (once each); both caps are kept per upstream and model
(:class:`~snapglyph.compaction.windows.WindowBook`), so later conversations to that model are fitted under them
before they are sent. Nothing held is ever changed: the client gets the held bytes, then the rest, exactly as they
came.
"""

from __future__ import annotations

from typing import Any

import anyio

from .._config import HOLD_BYTES, HOLD_NEAR, HOLD_SECONDS
from ..compaction.budget import estimate
from ..errors import SnapglyphError
from ..providers.refusal import refusal
from ..compaction.error_read import read_error
from .first_event import HeldResponse, hold
from .refusal import cap_images, text_only

__all__ = ["byte_capped", "error_read", "image_capped", "relayable", "watch"]



def relayable(answer: Any) -> bool:
    """Whether :func:`watch` gave an upstream answer to relay (not the ASGI response of a retry).

    Examples
    --------
    >>> from starlette.responses import Response
    >>> relayable(Response()), relayable(HeldResponse(None, None))
    (False, True)
    """
    return isinstance(answer, HeldResponse) or hasattr(answer, "aiter_raw")


def _window(proxy: Any, ctx: Any) -> int | None:
    conv = proxy.states.get(ctx.key)
    return (conv.window if conv is not None else None) or proxy.config.window


WHOLE_ANSWER_BYTES = 8 * 2**20
"""Bytes of a non-streamed answer to a request with pages held to read it for a refusal, whatever ``--hold-bytes``
says (that bounds what a stream's start holds back): a model's answer is far smaller (a bound, not a measurement)."""


def _is_stream(resp: Any) -> bool:
    return resp.headers.get("content-type", "").split(";")[0].strip().lower() == "text/event-stream"


def _near(proxy: Any, ctx: Any) -> bool:
    """Whether a passed-through streamed request is near its window (no window known: it may be)."""
    window = _window(proxy, ctx)
    if not window:
        return True
    try:
        return estimate(ctx.body, ctx.profile) >= getattr(proxy.config, "hold_near", HOLD_NEAR) * window
    except SnapglyphError:
        return False


def _wants(proxy: Any, ctx: Any, resp: Any) -> tuple[bool, bool]:
    """``(refusal check, first-event check)`` for this answer."""
    if (resp.status_code != 200 or ctx.key is None or ctx.body is None or ctx.path.endswith("/count_tokens")
            or resp.headers.get("content-encoding", "identity").lower() not in ("", "identity")):
        return False, False
    stream = _is_stream(resp)
    if stream and getattr(proxy.config, "hold_bytes", HOLD_BYTES) <= 0:
        return False, False                 # --hold-bytes 0 holds no stream; a whole answer is read for refusals
    out = ctx.outcome
    pages = (ctx.action != "passed" and out is not None and out.pages > 0 and not ctx.text_only
             and not proxy.config.dry_run)
    first = stream and not ctx.first_event_retried and (ctx.action != "passed" or _near(proxy, ctx))
    return pages, first


async def watch(proxy: Any, ctx: Any, resp: Any) -> Any:
    """The answer to relay (``resp``, or a :class:`~snapglyph.serve.first_event.HeldResponse`), or the ASGI
    response of a retry this answer called for."""
    pages, first = _wants(proxy, ctx, resp)
    if not (pages or first):
        return resp
    cfg = proxy.config
    most = getattr(cfg, "hold_bytes", HOLD_BYTES)
    held = await hold(resp, ctx.dialect, max_bytes=most if _is_stream(resp) else max(most, WHOLE_ANSWER_BYTES),
                      max_seconds=getattr(cfg, "hold_seconds", HOLD_SECONDS))
    if held.state == "error" and first:
        read = read_error(None, held.data, ctx.body, ctx.profile, _window(proxy, ctx), margin=cfg.margin)
        if read.overflow is not None:
            return await _first_event_overflow(proxy, ctx, resp, held, read.overflow)
        ctx.note = "; ".join(n for n in (ctx.note, read.note) if n)
    if held.state == "ended" and pages:
        why = refusal(ctx.dialect, held.events)
        if why:
            return await _refused(proxy, ctx, resp, held, why)
    return HeldResponse(resp, held)


async def _first_event_overflow(proxy: Any, ctx: Any, resp: Any, held: Any, ov: Any) -> Any:
    """An overflow as the first event after a 200: recover as from an overflow answer (once)."""
    ctx.first_event_retried = True
    said = f"overflow as the first event after a 200 ({ov.provider})"
    if ctx.action != "passed":                          # the compacted request overflowed: learn, relay
        await anyio.to_thread.run_sync(lambda: proxy.planner.second_overflow(ctx.key, ov, ctx.outcome))
        ctx.note = f"{said}: second overflow relayed"
        return HeldResponse(resp, held)
    out = await anyio.to_thread.run_sync(
        lambda: proxy.planner.recover(ctx.key, ctx.dialect, proxy._exact(ctx), ctx.profile, ov,
                                      dry=proxy.config.dry_run,
                                      model=ctx.model or None))
    ctx.outcome = out
    if out.error or proxy.config.dry_run:
        ctx.note = f"{said}: relayed: {out.error or 'dry run'}"
        return HeldResponse(resp, held)
    await resp.aclose()
    ctx.sent, ctx.action, ctx.note = out.data, "recovered", said
    return await proxy._resend(ctx)


async def _refused(proxy: Any, ctx: Any, resp: Any, held: Any, why: str) -> Any:
    """A request with pages answered with a refusal or nothing: once more without pages."""
    ctx.text_only = True
    out = await anyio.to_thread.run_sync(
        lambda: text_only(proxy.planner, ctx.key, ctx.dialect, proxy._exact(ctx), ctx.profile, why,
                          model=ctx.model or None))
    if out is None or out.error:
        ctx.note = f"{why} after a request with page images; relayed: no text-only request fits" + (
            f" ({out.error})" if out is not None else "")
        return HeldResponse(resp, held)
    await resp.aclose()
    ctx.outcome, ctx.sent, ctx.action = out, out.data, "text-only"
    ctx.note = (f"{why} after a request with page images: sent once more without pages; "
                f"{ctx.model or 'this model'} remembered as refusing pages")
    return await proxy._resend(ctx)


async def image_capped(proxy: Any, ctx: Any, limit: Any) -> Any:
    """The request again under an image-count refusal's cap (once), or ``None`` where it cannot be made."""
    if ctx.image_capped or ctx.body is None:
        return None
    ctx.image_capped = True
    await anyio.to_thread.run_sync(lambda: proxy.planner.book.capped(
        proxy.config.upstream, ctx.model or "", images=limit.limit))       # for every conversation to this model
    try:
        out = await anyio.to_thread.run_sync(
            lambda: cap_images(proxy.planner, ctx.key, ctx.dialect, proxy._exact(ctx), ctx.profile, limit.limit,
                               model=ctx.model or None))
    except SnapglyphError as e:
        ctx.note = f"image-count cap {limit.limit}: relayed: {e}"
        return None
    if out is None or out.error:
        ctx.note = f"image-count cap {limit.limit}: relayed: {out.error if out is not None else 'nothing to send'}"
        return None
    ctx.outcome, ctx.sent, ctx.action = out, out.data, "recovered"
    ctx.note = f"image-count cap: {limit.images} images > {limit.limit}; sent again with at most {limit.limit}"
    return await proxy._resend(ctx)


async def byte_capped(proxy: Any, ctx: Any, cap: Any) -> Any:
    """The request again under a body byte cap (``cap``: a :class:`~snapglyph.compaction.error_read.BodyCap`, kept in
    the book first), once; ``None`` where it cannot be made (the answer is relayed as it came)."""
    if getattr(ctx, "byte_capped", False) or ctx.body is None:
        return None
    ctx.byte_capped = True
    said = f"body byte cap: {len(ctx.sent)} bytes refused" + (f", {cap.limit} allowed" if cap.limit else "")
    out = await anyio.to_thread.run_sync(
        lambda: proxy.planner.cap_bytes(ctx.key, ctx.dialect, proxy._exact(ctx), ctx.profile, cap,
                                        model=ctx.model or None))
    if out is None or out.error or proxy.config.dry_run:
        ctx.note = f"{said}: relayed: {out.error if out is not None and out.error else 'nothing to send'}"
        return None
    ctx.outcome, ctx.sent, ctx.action = out, out.data, "recovered"
    ctx.note = f"{said}; sent again compacted to {len(out.data)} bytes"
    return await proxy._resend(ctx)


async def error_read(proxy: Any, ctx: Any, status: int, text: bytes) -> Any:
    """An error answer read by :func:`~snapglyph.compaction.error_read.read_error`: its overflow, or the retry under an
    image-count cap or a body byte cap (an ASGI response), or ``None`` (the log line's note says why where it is
    relayed)."""
    window = _window(proxy, ctx)
    read = await anyio.to_thread.run_sync(lambda: read_error(status, text, ctx.body, ctx.profile, window,
                                                             margin=proxy.config.margin, sent_bytes=len(ctx.sent)))
    if read.images is not None:
        return await image_capped(proxy, ctx, read.images)
    if read.body is not None:
        retried = await byte_capped(proxy, ctx, read.body)
        if retried is not None:
            return retried
    if read.note:
        ctx.note = "; ".join(n for n in (ctx.note, read.note) if n)
    return read.overflow
