"""MCP over WebSocket (the transport; `mcp_adapters.websocket` is its public path).

`serve_websocket` and `connect_websocket`, on asyncio or trio.

A custom transport in the spec's terms (the proposed SEP-1288 shape: one
JSON-RPC message per UTF-8 text frame). The sans-IO layer is
`mcp_core.websocket`; here it is only bound to a TCP stream of the running
loop's backend: the backend's session drives the WebSocket layer, which owns
the MCP connection.

Authorization: an `MCPServer(auth=...)` is a resource server here as over HTTP.
The upgrade request must carry `Authorization: Bearer <token>`: without one it
is answered 401 with the `WWW-Authenticate` challenge, and the listener serves
the Protected Resource Metadata document to a plain GET at its well-known path.
The token is verified before the 101 (the same verifier, bounded by
`verify_timeout`), the connection then runs as its principal, and a request
needing a tool's scope the token lacks gets a JSON-RPC error. `AuthSettings.resource`
defaults to `http://host:port/path`, the http spelling of the bound URL (RFC 9728
identifiers are http(s) URLs; the metadata is served by this same listener).

URLs: the server answers at its path (`/mcp` by default) and at `/`, so both
`ws://host:port/mcp` and `ws://host:port` reach it. A client refused with 404
(another server, another path) says in its error which path to use. `wss://`
runs the same protocol inside TLS (anyio's TLS stream, on either backend), for
a server behind a TLS-terminating proxy.
"""

from __future__ import annotations

import contextlib
import logging
import re
import secrets
import ssl
import time
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import anyio
import anyio.abc

from mcp_adapters._driver import authority
from mcp_adapters._errors import ConnectionClosedError, TransportError, to_transport_error
from mcp_adapters.server._serve import request_handler
from mcp_core import ClientConfig, Event
from mcp_core.auth import ResourceGuard
from mcp_core.http import HostPolicy
from mcp_core.websocket import (
    WebSocketClientConnection,
    WebSocketLimits,
    WebSocketRejected,
    WebSocketServerConnection,
    WebSocketTokenVerificationNeeded,
)

if TYPE_CHECKING:
    from mcp_adapters.server import MCPServer

logger = logging.getLogger(__name__)

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


async def serve_websocket(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = "/mcp",
    host_policy: HostPolicy | Literal["auto"] | None = "auto",
    limits: WebSocketLimits | None = None,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    **session_options: Any,
) -> None:
    """Serve `server` at ws://host:port/path (and at `/`) until cancelled.

    Reports the bound port as its start value. `host_policy` checks `Host` and
    `Origin`: "auto" is the loopback allow-list for the bound port when `host` is
    a loopback address and no check otherwise; behind a proxy, pass the names
    the proxy forwards (or None). `limits` are the WebSocket layer's own (the
    message limit follows the server's `Limits` unless set); see docs/limits.md.
    """
    from mcp_adapters.auth._settings import verify_token
    from mcp_adapters.backends import current_backend

    backend = current_backend()
    bound: list[int] = []
    guards: list[ResourceGuard] = []  # one for the listener: its cache is shared
    settings = server.auth

    def new_connection() -> tuple[Any, Any]:
        # Origin/Host checks on by default for loopback binds, against the bound port.
        if host_policy != "auto":
            policy = host_policy
        else:
            policy = HostPolicy.loopback(bound[0]) if host in _LOOPBACK else None
        layer = WebSocketServerConnection(
            server.config,
            path=path,
            host_policy=policy,
            aliases=("/",),
            limits=limits,
            # Fails closed: no connection is served before the guard exists.
            auth=guards[0] if settings is not None else None,
        )
        return layer.mcp, layer

    observer = session_options.pop("on_event", None)

    async with anyio.create_task_group() as verifications:

        async def verify(event: WebSocketTokenVerificationNeeded) -> None:
            assert settings is not None
            result = await verify_token(settings, event.token)
            events = event.connection.receive_token_verification(result, wall_time=time.time())
            for session in list(tcp.sessions):
                if session.connection is event.connection.mcp:
                    session.receive_events(events)
                    break

        def on_event(event: Any) -> None:
            if isinstance(event, WebSocketTokenVerificationNeeded):
                verifications.start_soon(verify, event)
            elif isinstance(event, WebSocketRejected) and event.status in (401, 403):
                logger.info("refused a WebSocket upgrade: %d %s", event.status, event.reason)
            if observer is not None:
                observer(event)

        async with (
            server.running(),  # the lifespan, unless something already serves it
            backend.tcp_server(
                request_handler(server),
                server.config,
                host,
                port,
                new_connection=new_connection,
                on_event=on_event,
                **session_options,
            ) as tcp,
        ):
            bound.append(tcp.port)
            if settings is not None:
                here = f"[{host}]" if ":" in host else host
                guards.append(
                    settings.guard(server, default_resource=f"http://{here}:{tcp.port}{path}")
                )
            logger.info("serving %s on ws://%s%s", server.name, authority(tcp.host, tcp.port), path)
            task_status.started(tcp.port)
            try:
                await tcp.serve_forever()
            finally:
                verifications.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def connect_websocket(
    url: str,
    config: ClientConfig | None = None,
    *,
    ssl_context: ssl.SSLContext | None = None,
    limits: WebSocketLimits | None = None,
    headers: Iterable[tuple[str, str]] = (),
    **session_options: Any,
) -> AsyncIterator[Any]:
    """Connect to ws://host:port/path or wss://...; yields the backend's session (its MCP
    connection is the WebSocket layer's). `ssl_context` is for wss:// (default: the
    system's trust store, which `SSL_CERT_FILE` may point elsewhere); `limits` as for
    `serve_websocket`; `headers` go on the upgrade request (`("authorization",
    "Bearer ...")` for a server with `auth=`)."""
    from mcp_adapters.backends import current_backend

    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise TransportError(f"unsupported WebSocket URL {url!r} (ws://host:port/path or wss://)")
    host = parts.hostname
    tls = parts.scheme == "wss"
    port = parts.port or (443 if tls else 80)
    backend = current_backend()
    stream: Any
    try:
        if tls:
            stream = _TLSStream(
                await anyio.connect_tcp(
                    host,
                    port,
                    tls=True,
                    ssl_context=ssl_context,
                    tls_hostname=host,
                    # A WebSocket ends with its own close frame, not TLS close_notify.
                    tls_standard_compatible=False,
                )
            )
        else:
            stream = await backend.open_tcp_stream(host, port)
    except OSError as exc:
        error = to_transport_error(exc)
        assert error is not None
        raise error from exc
    target = parts.path or "/"
    if parts.query:
        target += f"?{parts.query}"
    layer = WebSocketClientConnection(
        config or ClientConfig(),
        host=authority(host, port),
        path=target,
        new_key=lambda: secrets.token_bytes(16),
        limits=limits,
        extra_headers=headers,
    )
    refusals: list[WebSocketRejected] = []
    observer = session_options.pop("on_event", None)

    def on_event(event: Event) -> None:
        if isinstance(event, WebSocketRejected):
            refusals.append(event)
        if observer is not None:
            observer(event)

    entered = False
    try:
        async with backend.Session(
            layer.mcp, stream, layer=layer, on_event=on_event, **session_options
        ) as session:
            entered = True
            yield session
    except ConnectionClosedError as exc:
        if entered or not refusals:
            raise
        raise ConnectionClosedError(_refused(url, refusals[0]), error=exc.error) from exc


def _refused(url: str, refusal: WebSocketRejected) -> str:
    """The error for a refused upgrade; for a 404, the URL to use instead."""
    message = f"{url}: the server refused the WebSocket upgrade with HTTP {refusal.status}"
    if refusal.status != 404:
        return f"{message} ({refusal.reason})" if refusal.reason else message
    parts = urlsplit(url)
    # Our servers name their endpoint in the 404 body; for others, guess the default.
    named = re.search(r"the MCP endpoint is (/\S*)", refusal.reason)
    path = named.group(1) if named else "/mcp"
    return (
        f"{message}: there is no MCP endpoint at {parts.path or '/'}; "
        f"connect to {parts.scheme}://{parts.netloc}{path}"
        + ("" if named else " (the default path), or the path the server was given")
    )


class _TLSStream:
    """An anyio TLS stream with the backends' stream methods, errors made ours."""

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self._stream = stream

    async def receive_some(self, max_bytes: int) -> bytes:
        try:
            return await self._stream.receive(max_bytes)
        except anyio.EndOfStream:
            return b""
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise ConnectionClosedError(f"TLS stream: {exc or type(exc).__name__}") from exc

    async def send_all(self, data: bytes) -> None:
        try:
            await self._stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise ConnectionClosedError(f"TLS stream: {exc or type(exc).__name__}") from exc

    async def aclose(self) -> None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError):
            await self._stream.aclose()
