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
    """The request could not be made or its answer was not HTTP, or too large."""


@dataclass(frozen=True, slots=True)
class Fetched:
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
    if body or method == "POST":
        request_headers.append(("content-length", str(len(body))))
    conn = h11.Connection(h11.CLIENT)
    try:
        with anyio.fail_after(timeout):
            stream: anyio.abc.ByteStream
            if secure:
                stream = await anyio.connect_tcp(
                    parts.hostname,
                    port,
                    ssl_context=ssl_context or ssl.create_default_context(),
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
