"""``snapglyph simulate``: the provider simulator as a command, for trying ``snapglyph serve`` or an agent offline.

It listens until Ctrl-C (or SIGTERM), prints where it listens and one line per request (dialect, the tokens it
counted against its window, the answer's status and kind), and answers every request that fits with a short
scripted text (no tool calls): enough for a client to see a recovery through ``serve`` end to end.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Callable

from ..errors import ServeError
from .replies import Step, answer
from .simulator import Simulator

__all__ = ["describe", "echo_script", "run"]


def echo_script(dialect: str, body: dict) -> Step:
    """The command's model: one short answer naming the dialect and how many items the request held.

    Examples
    --------
    >>> echo_script("anthropic", {"messages": [{}, {}, {}]}).text
    'simulated anthropic answer: 3 messages received'
    """
    items = body.get({"responses": "input", "gemini": "contents"}.get(dialect, "messages"))
    n = len(items) if isinstance(items, list) else 1
    return answer(f"simulated {dialect} answer: {n} message{'s' * (n != 1)} received")


def describe(entry: dict, window: int) -> str:
    """One line about a logged request (a :attr:`Simulator.log` entry): its number, dialect, the prompt tokens
    counted against the window (the entry's own where it has one: a model served at a smaller window), the status
    and what happened.

    Examples
    --------
    >>> describe({"n": 2, "dialect": "anthropic", "prompt_tokens": 24310, "status": 400, "kind": "overflow",
    ...           "provider": "anthropic"}, 20000)
    'request 2: anthropic, 24,310 tokens > window 20,000 -> 400 overflow (anthropic body)'
    >>> describe({"n": 3, "dialect": "openai", "prompt_tokens": 9120, "status": 200, "kind": "ok"}, 20000)
    'request 3: openai, 9,120 tokens -> 200 ok'
    >>> describe({"n": 4, "dialect": "gemini", "prompt_tokens": 9682, "status": 400, "kind": "overflow",
    ...           "provider": "gemini", "window": 8000}, 20000)
    'request 4: gemini, 9,682 tokens > window 8,000 -> 400 overflow (gemini body)'
    """
    window = entry.get("window") or window
    tokens = entry.get("prompt_tokens")
    over = tokens is not None and entry.get("kind") == "overflow"
    size = "" if tokens is None else f", {tokens:,} tokens" + (f" > window {window:,}" if over else "")
    body = f" ({entry.get('provider')} body)" if over else ""
    return f"request {entry.get('n')}: {entry.get('dialect', entry.get('path', '?'))}{size} -> " \
           f"{entry.get('status')} {entry.get('kind')}{body}"


def run(*, window: int, port: int = 8788, host: str = "127.0.0.1", provider: str = "native", delay: float = 0.0,
        out: Callable[[str], None] = lambda s: print(s, flush=True), stop: threading.Event | None = None,
        refuse_images: bool = False, max_images: int | None = None, overflow_after_200: bool = False,
        max_body_bytes: int | None = None, model_windows: dict | None = None) -> int:
    """Serve the simulator on ``host:port`` until Ctrl-C, SIGTERM or ``stop`` is set; returns 0.

    Parameters
    ----------
    window : int
        The context window in tokens.
    port, host : int, str
        Where to listen (port 0: a free one).
    provider : str
        Whose overflow bodies to send (``native``: each dialect's own provider's).
    delay : float
        Seconds each answer is held back.
    out : callable
        Gets the start-up lines and one line per request.
    stop : threading.Event, optional
        Set it to stop (tests); the command itself stops on Ctrl-C.
    refuse_images, max_images, overflow_after_200
        The simulator's :attr:`~snapglyph.testing.Simulator.refuse_images` (a request carrying images gets a
        successful refusal), ``max_images`` (more images in one request: the image-count refusal) and
        ``overflow_after_200`` (a streamed overflow: a 200 whose first event is the error).
    max_body_bytes, model_windows
        The simulator's :attr:`~snapglyph.testing.Simulator.max_body_bytes` (a longer body: a gateway's 413) and
        ``model_windows`` (a model served at a smaller window, ``{model: tokens}``).

    Raises
    ------
    ServeError
        The port is in use or the address cannot be bound.
    InputError
        An unknown provider, a window below 1 or a negative delay.

    Examples
    --------
    >>> ev = threading.Event(); ev.set()
    >>> run(window=1000, port=0, stop=ev, out=lambda s: None)
    0
    """
    seen = []

    def on_request(entry: dict) -> None:
        seen.append(1)
        out(describe(entry, window))
    sim = Simulator(echo_script, provider=provider, context_window=window, delay=delay, log_limit=1000,
                    on_request=on_request)
    try:
        sim.start(port, host)
    except OSError as e:
        raise ServeError(f"cannot listen on {host}:{port}: {e.strerror or e}"
                         + (" (pick another with --port)" if e.errno in (98, 48, 10048) else "")) from None
    sim.refuse_images, sim.max_images, sim.overflow_after_200 = refuse_images, max_images, overflow_after_200
    sim.max_body_bytes, sim.model_windows = max_body_bytes, dict(model_windows or {})
    url = sim.base_url
    extras = [w for w, on in (("requests with images refused", refuse_images),
                              (f"at most {max_images} images a request", max_images is not None),
                              ("streamed overflows sent after a 200", overflow_after_200),
                              (f"bodies over {max_body_bytes} bytes refused (413)", max_body_bytes is not None),
                              ("windows " + ", ".join(f"{m} {w:,}" for m, w in (model_windows or {}).items()),
                               bool(model_windows))) if on]
    out(f"snapglyph simulate: {url} (window {window:,} tokens, {provider} overflow bodies"
        + (f", answers held {delay:g} s" if delay else "") + "".join(f", {w}" for w in extras) + "; Ctrl-C stops it)")
    out(f"  OpenAI chat and Responses: {url}/v1   Anthropic messages: {url}   "
        f"Gemini: {url}/v1beta/models/MODEL:generateContent")
    stop = stop or threading.Event()
    previous = _on_sigterm(stop)
    try:
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    out(f"snapglyph simulate: stopped after {len(seen)} request{'s' * (len(seen) != 1)}")
    return 0


def _on_sigterm(stop: threading.Event):
    """Make SIGTERM set ``stop`` (main thread only); returns the handler it replaced, or None."""
    if threading.current_thread() is not threading.main_thread() or sys.platform == "win32":
        return None
    return signal.signal(signal.SIGTERM, lambda *_: stop.set())
