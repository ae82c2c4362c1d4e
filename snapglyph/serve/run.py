"""Start-up of ``snapglyph serve``: the checks that turn bad configuration into one line, then uvicorn."""

from __future__ import annotations

import logging
import re
import socket
import sys
from typing import Callable

import httpx

from ..errors import ServeError

__all__ = ["Background", "bind", "check_upstream_url", "serve"]

_VERSIONED = re.compile(r"^(.*?)/v1(?:beta|alpha)?/*$")


def check_upstream_url(url: str) -> None:
    """Refuse an upstream base URL that ends in an API version (``/v1``, ``/v1beta``, ``/v1alpha``): the proxy
    sends each request to the upstream under the client's own path (``/v1/messages``, ``/v1/chat/completions``,
    ``/v1beta/models/...``), so such a base would double the version and every request would 404.

    Raises
    ------
    ServeError
        One line saying to drop the version.

    Examples
    --------
    >>> check_upstream_url("https://api.openai.com")
    >>> check_upstream_url("http://[::1")
    Traceback (most recent call last):
    snapglyph.errors.ServeError: --upstream 'http://[::1' is not a URL: Invalid port: ':1'
    >>> check_upstream_url("https://api.openai.com/v1/")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snapglyph.errors.ServeError: --upstream https://api.openai.com/v1/ ends in /v1, ... (--upstream https://api.openai.com)
    """
    try:
        parsed = httpx.URL(str(url))
    except (httpx.InvalidURL, TypeError, ValueError) as e:
        raise ServeError(f"--upstream {url!r} is not a URL: {e}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ServeError(f"--upstream must be an http(s) URL with a host, not {url!r} (e.g. https://api.anthropic.com)")
    if parsed.query or parsed.fragment:
        raise ServeError(f"--upstream {url!r} has a query or fragment, which the proxy would drop from every request")
    m = _VERSIONED.match(str(url))
    if m:
        version = str(url).rstrip("/")[len(m.group(1)):]
        raise ServeError(f"--upstream {url} ends in {version}, but the proxy sends the client's own paths "
                         f"(/v1/chat/completions, /v1/messages) under it, so every request would 404: drop the "
                         f"{version} (--upstream {m.group(1)})")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 picks a free one).

    Raises
    ------
    ServeError
        One line when the port is in use or the address cannot be bound.

    Examples
    --------
    >>> s = bind("127.0.0.1", 0); s.getsockname()[1] > 0
    True
    >>> s.close()
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(512)
    except OSError as e:
        sock.close()
        if e.errno in (98, 48, 10048):                    # EADDRINUSE on Linux, macOS, Windows
            raise ServeError(f"port {port} on {host} is in use (pick another with --port)") from None
        raise ServeError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    sock.setblocking(False)
    return sock


def serve(config, *, host: str = "127.0.0.1", port: int = 8787, check_upstream: bool = True,
          announce: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> None:
    """Check the configuration, print the URL and what to export, and serve until interrupted.

    Parameters
    ----------
    config : ServeConfig
    host, port : str, int
        Where to listen (127.0.0.1 by default: the proxy forwards the client's keys, keep it local).
    check_upstream : bool
        Open one connection to the upstream first, so an unreachable one is an error at start-up.
    announce : callable
        Gets the start-up lines.

    Raises
    ------
    ServeError
        The port is in use, the upstream is unreachable or ends in ``/v1`` (:func:`check_upstream_url`), or the
        state folder cannot be written.
    UnknownProfileError
        ``config.profile`` names no profile.

    Examples
    --------
    >>> import tempfile
    >>> from snapglyph.serve.app import ServeConfig
    >>> serve(ServeConfig("http://127.0.0.1:9", state=tempfile.mkdtemp()))  # port 9: nothing  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snapglyph.errors.ServeError: upstream http://127.0.0.1:9 is unreachable (127.0.0.1:9: ...)
    """
    try:
        import uvicorn
    except ImportError:
        from .._extras import extra_hint
        raise ServeError(f"snapglyph serve needs {extra_hint('serve', 'uvicorn')}") from None
    from .app import create_app
    check_upstream_url(config.upstream)
    app = create_app(config)
    proxy = app.state.proxy
    if check_upstream:
        proxy.upstream.check_reachable()
    sock = bind(host, port)
    port = sock.getsockname()[1]
    url = f"http://{host}:{port}"
    announce(f"snapglyph serve: {url} -> {proxy.upstream.base_url} (state {proxy.states.path}"
             + (", dry run" if config.dry_run else "") + ")")
    announce(f"  export ANTHROPIC_BASE_URL={url}      # Claude Code and Anthropic SDKs")
    announce(f"  export OPENAI_BASE_URL={url}/v1      # OpenAI SDKs and OpenAI-compatible agents")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)      # one line per request is ours
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    server.run(sockets=[sock])


class Background:
    """The proxy served by uvicorn in a background thread of this process, on 127.0.0.1 at a free port (for
    notebooks, tests and benchmarks); a context manager.

    Parameters
    ----------
    config : ServeConfig

    Attributes
    ----------
    url : str
        ``http://127.0.0.1:PORT`` once started.
    proxy : Proxy
        The application's state (``proxy.states``, ``proxy.planner``).

    Examples
    --------
    >>> import tempfile
    >>> from snapglyph.serve.app import ServeConfig
    >>> with Background(ServeConfig("http://127.0.0.1:9", state=tempfile.mkdtemp())) as bg:
    ...     import httpx; httpx.get(bg.url + "/snapglyph/status").json()["requests"]
    0
    """

    def __init__(self, config) -> None:
        import threading
        import uvicorn
        from .app import create_app
        self.app = create_app(config)
        self.proxy = self.app.state.proxy
        self._sock = bind("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", access_log=False,
                                                     lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def start(self) -> "Background":
        """Start serving; returns once the server accepts connections (at most 10 s)."""
        import time
        if self._thread.is_alive():
            return self
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise ServeError("the proxy did not start within 10 s")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread (idempotent)."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(10)
        self._sock.close()

    def __enter__(self) -> "Background":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
