"""The proxy's upstream side: header rules and one shared ``httpx`` async client.

Requests go to the upstream with the client's own headers (``authorization``, ``x-api-key``,
``anthropic-version``, ``anthropic-beta`` ...) minus the hop-by-hop ones, which belong to one connection only
(RFC 9110 section 7.6.1, read 2026-12-01: ``Connection``, the fields it names, ``Keep-Alive``,
``Proxy-Connection``, ``TE``, ``Transfer-Encoding``, ``Upgrade``, ``Proxy-Authenticate``, ``Proxy-Authorization``,
``Trailer``) and minus ``Host`` and ``Content-Length``, which httpx sets for the upstream and the body sent.
Responses come back the same way. Header values are passed on and never logged or stored.
"""

from __future__ import annotations

import zlib
from typing import Iterable

import httpx

from ..errors import ServeError

__all__ = ["HOP_BY_HOP", "Upstream", "decode_body", "forward_headers"]

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                        "upgrade", "proxy-authenticate", "proxy-authorization"})
"""Header names (lower case) that are never forwarded in either direction."""

_REQUEST_DROP = HOP_BY_HOP | {"host", "content-length", "x-snapglyph-conversation"}  # the last: for snapglyph alone


def forward_headers(headers: Iterable[tuple[bytes, bytes]], *, request: bool) -> list[tuple[bytes, bytes]]:
    """The headers to pass on: hop-by-hop ones and those the ``Connection`` header names are left out, and for a
    request also ``Host`` and ``Content-Length`` (set again for the upstream and the body actually sent).

    Parameters
    ----------
    headers : iterable of (bytes, bytes)
        Raw ``(name, value)`` pairs as received (ASGI or httpx raw headers), repeated names kept.
    request : bool
        True for a client request going upstream, False for an upstream response going back.

    Returns
    -------
    list of (bytes, bytes)
        In the order received.

    Examples
    --------
    >>> forward_headers([(b"Host", b"a"), (b"x-api-key", b"k"), (b"Connection", b"close, x-trace"),
    ...                  (b"X-Trace", b"1")], request=True)
    [(b'x-api-key', b'k')]
    """
    headers = list(headers)
    drop = set(_REQUEST_DROP if request else HOP_BY_HOP)
    for name, value in headers:
        if name.lower() == b"connection":
            drop |= {v.strip().lower() for v in value.decode("latin-1").split(",") if v.strip()}
    return [(n, v) for n, v in headers if n.decode("latin-1").lower() not in drop]


def decode_body(raw: bytes, encoding: str | None) -> bytes:
    """Undo a ``gzip`` or ``deflate`` content encoding (to read an error body); other encodings and bytes that do
    not decode come back as they are.

    Examples
    --------
    >>> import gzip
    >>> decode_body(gzip.compress(b'{"a":1}'), "gzip")
    b'{"a":1}'
    >>> decode_body(b"plain", None)
    b'plain'
    """
    enc = (encoding or "").strip().lower()
    try:
        if enc == "gzip":
            return zlib.decompress(raw, 16 + zlib.MAX_WBITS)
        if enc == "deflate":
            try:
                return zlib.decompress(raw)
            except zlib.error:
                return zlib.decompress(raw, -zlib.MAX_WBITS)
    except zlib.error:
        return raw
    return raw


class Upstream:
    """One upstream base URL and a pooled ``httpx.AsyncClient`` to it.

    Parameters
    ----------
    base_url : str
        ``https://api.anthropic.com``, ``http://127.0.0.1:8000`` ...; a request for ``/v1/messages`` goes to
        ``base_url + "/v1/messages"`` (a path in the base URL is kept in front).
    timeout : float
        Seconds to connect.
    read_timeout : float or None
        Seconds to wait for the upstream's next bytes, the response's first ones included (``httpx``'s read
        timeout, so a long stream may run for hours as long as no pause lasts this long); ``None`` or 0: no
        limit. A request that times out raises ``httpx.ReadTimeout`` (a ``TransportError``).

    Raises
    ------
    ServeError
        If ``base_url`` is not an ``http`` or ``https`` URL.

    Examples
    --------
    >>> Upstream("https://api.anthropic.com/").url("/v1/messages", b"beta=true")
    'https://api.anthropic.com/v1/messages?beta=true'
    """

    def __init__(self, base_url: str, *, timeout: float = 10.0, read_timeout: float | None = None) -> None:
        url = httpx.URL(base_url) if isinstance(base_url, str) else None
        if url is None or url.scheme not in ("http", "https") or not url.host:
            raise ServeError(f"--upstream must be an http(s) URL such as https://api.anthropic.com, not "
                             f"{base_url!r}")
        self.base_url = str(base_url).rstrip("/")
        self.timeout = timeout
        self._client: httpx.AsyncHTTPTransport | None = None
        self.read_timeout = read_timeout or None
        self._timeouts = httpx.Timeout(None, connect=timeout, read=self.read_timeout).as_dict()

    def url(self, path: str, query: bytes = b"") -> str:
        """The upstream URL of a request path and raw query string."""
        return self.base_url + path + (("?" + query.decode("latin-1")) if query else "")

    @property
    def transport(self) -> httpx.AsyncHTTPTransport:
        """The shared connection pool (made on first use, inside the running event loop).

        Requests go straight to httpx's transport: the client layer above it (cookies, auth, redirects,
        environment proxies) has nothing to do for a relay and costs time on every request."""
        if self._client is None:
            self._client = httpx.AsyncHTTPTransport(
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=64), retries=0)
        return self._client

    async def send(self, method: str, path: str, query: bytes, headers: list[tuple[bytes, bytes]],
                   content: bytes) -> httpx.Response:
        """Send one request; the response is open for streaming (read it with ``aiter_raw`` or ``aread``, then
        ``aclose``). ``content``: bytes, or an async iterator of bytes (give its ``Content-Length`` in ``headers``,
        else it goes chunked). Connection failures raise ``httpx.TransportError``."""
        req = httpx.Request(method, self.url(path, query), headers=headers, content=content,
                            extensions={"timeout": self._timeouts})
        resp = await self.transport.handle_async_request(req)
        resp.request = req
        return resp

    async def aclose(self) -> None:
        """Close the pooled connections."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def check_reachable(self) -> None:
        """Open (and close) one TCP connection to the upstream's host and port.

        Raises
        ------
        ServeError
            One line naming the upstream and the reason, when it cannot be reached.
        """
        import socket
        url = httpx.URL(self.base_url)
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            socket.create_connection((url.host, port), timeout=self.timeout).close()
        except OSError as e:
            raise ServeError(f"upstream {self.base_url} is unreachable ({url.host}:{port}: "
                             f"{e.strerror or e})") from None
