"""MCP over WebSocket: `serve_websocket` and `connect_websocket` (asyncio or trio).

A custom transport in the spec's terms (the proposed SEP-1288 shape: one
JSON-RPC message per UTF-8 text frame). The sans-IO layer is
`mcp_core.websocket`; here it is only bound to a TCP stream of the running
loop's backend: the backend's session drives the WebSocket layer, which owns
the MCP connection.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from mcp_adapters._errors import TransportError, to_transport_error
from mcp_adapters._serve import request_handler
from mcp_core import ClientConfig
from mcp_core.http import HostPolicy
from mcp_core.websocket import (
    WebSocketClientConnection,
    WebSocketLimits,
    WebSocketServerConnection,
)

if TYPE_CHECKING:
    from mcp_adapters.server import MCPServer

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


async def serve_websocket(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = "/mcp",
    limits: WebSocketLimits | None = None,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    **session_options: Any,
) -> None:
    """Serve `server` at ws://host:port/path until cancelled (reports the bound port).

    `limits` are the WebSocket layer's own (the message limit follows the server's
    `Limits` unless set); see docs/limits.md.
    """
    from mcp_adapters import current_backend

    backend = current_backend()
    bound: list[int] = []

    def new_connection() -> tuple[Any, Any]:
        # Origin/Host checks on by default for loopback binds, against the bound port.
        policy = HostPolicy.loopback(bound[0]) if host in _LOOPBACK else None
        layer = WebSocketServerConnection(
            server.config, path=path, host_policy=policy, limits=limits
        )
        return layer.mcp, layer

    async with backend.tcp_server(
        request_handler(server),
        server.config,
        host,
        port,
        new_connection=new_connection,
        **session_options,
    ) as tcp:
        bound.append(tcp.port)
        task_status.started(tcp.port)
        await tcp.serve_forever()


@contextlib.asynccontextmanager
async def connect_websocket(
    url: str,
    config: ClientConfig | None = None,
    *,
    limits: WebSocketLimits | None = None,
    **session_options: Any,
) -> AsyncIterator[Any]:
    """Connect to ws://host:port/path; yields the backend's session (its MCP connection
    is the WebSocket layer's). `limits` as for `serve_websocket`."""
    from mcp_adapters import current_backend

    parts = urlsplit(url)
    if parts.scheme != "ws":
        raise TransportError(f"unsupported WebSocket URL {url!r} (only ws:// is supported)")
    host = parts.hostname or "127.0.0.1"
    port = parts.port or 80
    backend = current_backend()
    try:
        stream = await backend.open_tcp_stream(host, port)
    except OSError as exc:
        error = to_transport_error(exc)
        assert error is not None
        raise error from exc
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    layer = WebSocketClientConnection(
        config or ClientConfig(),
        host=authority,
        path=parts.path or "/",
        new_key=lambda: secrets.token_bytes(16),
        limits=limits,
    )
    async with backend.Session(layer.mcp, stream, layer=layer, **session_options) as session:
        yield session
