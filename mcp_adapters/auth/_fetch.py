"""One HTTP/1.1 request over anyio and h11: what the verifiers need (a JWKS GET, an
introspection POST), and no more.

A connection per request (`Connection: close`): verifications are rare (the guard
caches their results), so pooling would buy little and cost a lifetime to manage.
Redirects are not followed (an authorization server's JWKS or introspection URL
that redirects is misconfigured, and following one would send client credentials
wherever it points). The body read is bounded by `max_bytes`.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import anyio.abc
import h11

__all__ = ["FetchError", "Fetched", "fetch"]

_READ = 65536


class FetchError(Exception):
    """The request could not be made or its answer was not HTTP, or too large.

    One exception for every way a fetch fails, so a verifier can map them all to "verifier
    unavailable" (a 503 to the client), never to "token invalid": a network fault must not
    read as a forged token.
    """


@dataclass(frozen=True, slots=True)
class Fetched:
    """The whole answer, already bounded: verifiers parse small JSON documents and have no use
    for a stream.
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


async def fetch(
    method: str,
    url: str,
    *,
    headers: Iterable[tuple[str, str]] = (),
    body: bytes = b"",
    max_bytes: int = 1 << 20,
    timeout: float = 10.0,
    ssl_context: ssl.SSLContext | None = None,
) -> Fetched:
    """Perform one request and read its whole answer (at most `max_bytes` of body)."""
    parts = urlsplit(url)
    # Only http(s), and only with a host: a JWKS or introspection URL comes from
    # configuration or from metadata, and a `file:` or host-less URL there is a mistake to
    # refuse, not a request to attempt.
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(f"not an http(s) URL: {url!r}")
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    request_headers = [
        ("host", parts.netloc),
        ("user-agent", "mcp-sansio"),
        ("connection", "close"),
        *headers,
    ]
    # A POST always says its length, even when empty: some servers refuse a POST without
    # `Content-Length` (411) rather than assume an empty body.
    if body or method == "POST":
        request_headers.append(("content-length", str(len(body))))
    conn = h11.Connection(h11.CLIENT)
    try:
        # One deadline for the whole exchange (connect, send, read): a server that answers a
        # byte at a time cannot hold a verification for longer than `timeout`.
        with anyio.fail_after(timeout):
            stream: anyio.abc.ByteStream
            if secure:
                stream = await anyio.connect_tcp(
                    parts.hostname,
                    port,
                    ssl_context=ssl_context or ssl.create_default_context(),
                    # Servers that close without a TLS close_notify (common behind load
                    # balancers) would otherwise make a complete answer fail; h11's framing
                    # already says where it ends.
                    tls_standard_compatible=False,
                )
            else:
                stream = await anyio.connect_tcp(parts.hostname, port)
            async with stream:
                out = conn.send(h11.Request(method=method, target=target, headers=request_headers))
                if body:
                    out += conn.send(h11.Data(data=body))
                out += conn.send(h11.EndOfMessage())
                await stream.send(out)
                return await _read(stream, conn, max_bytes)
    except TimeoutError as exc:
        raise FetchError(f"{method} {url} timed out after {timeout} s") from exc
    except (OSError, anyio.BrokenResourceError, h11.ProtocolError, ssl.SSLError) as exc:
        raise FetchError(f"{method} {url} failed: {exc}") from exc


async def _read(stream: anyio.abc.ByteStream, conn: h11.Connection, max_bytes: int) -> Fetched:
    """The size is checked per chunk, before it is kept: memory never holds more than
    `max_bytes` of a hostile or misconfigured server's answer.
    """
    status = 0
    response_headers: tuple[tuple[str, str], ...] = ()
    chunks: list[bytes] = []
    size = 0
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(_READ)
            except anyio.EndOfStream:
                data = b""
            # An empty read is EOF, which h11 turns into ConnectionClosed if the answer was
            # not complete, so a truncated answer is refused rather than parsed.
            conn.receive_data(data)
        elif isinstance(event, h11.Response):
            status = event.status_code
            response_headers = tuple(
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers
            )
        elif isinstance(event, h11.Data):
            size += len(event.data)
            if size > max_bytes:
                raise FetchError(f"the answer is larger than {max_bytes} bytes")
            chunks.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            return Fetched(status, response_headers, b"".join(chunks))
        elif isinstance(event, h11.ConnectionClosed):
            raise FetchError("the connection closed before the answer was complete")
