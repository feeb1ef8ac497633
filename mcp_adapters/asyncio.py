"""The asyncio backend: the driver loop on asyncio's own transports and protocols.

Native asyncio only (no anyio), so it runs on any asyncio loop. The same
public API as `mcp_adapters.trio`; `mcp_adapters.sockets` is its blocking twin::

    async with connect_stdio(StdioServerParameters("python", ["server.py"])) as session:
        result = await session.request("tools/call", {"name": "echo", "arguments": {}})

    async def on_request(session: Session, request: RequestReceived) -> Any:
        return CallToolResult(content=[...])      # or raise MCPError(code, message)

    await serve_stdio(on_request, ServerConfig(name="demo"))
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_adapters import _driver, _session_base
from mcp_adapters._driver import (
    CLOSE_TIMEOUT,
    READ_SIZE,
    AsyncByteStream,
    EventSink,
    SansIOConnection,
)
from mcp_adapters._errors import ConnectionClosedError
from mcp_adapters.backends import SessionBackend
from mcp_adapters.backends.asyncio import (
    AsyncioStream,
    open_pipe_stream,
    open_tcp_stream,
)
from mcp_adapters.backends.asyncio import backend as _backend
from mcp_adapters.transports import tcp
from mcp_adapters.transports.bound import Transports
from mcp_adapters.transports.process import StdioServerParameters
from mcp_core import (
    Event,
    NotificationReceived,
    RequestReceived,
)

logger = logging.getLogger(__name__)

RequestHandler = Callable[["Session", RequestReceived], Awaitable[Any]]
NotificationHandler = Callable[["Session", NotificationReceived], None]
EventObserver = Callable[[Event], None]

# =========================================================================== driver


class Driver(_driver.Driver):
    """Runs one sans-IO connection over one byte stream on the running asyncio loop.

    The loop itself is `mcp_adapters._driver.Driver`; this binds the asyncio backend.
    """

    def __init__(
        self,
        connection: SansIOConnection,
        stream: AsyncByteStream,
        on_events: EventSink,
        *,
        close_timeout: float = CLOSE_TIMEOUT,
        read_size: int = READ_SIZE,
        hold_eof: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(
            connection,
            stream,
            on_events,
            backend=_backend(),
            close_timeout=close_timeout,
            read_size=read_size,
            hold_eof=hold_eof,
        )


# =========================================================================== session


class Session(_session_base.Session):
    """One MCP connection, client or server, over one byte stream, on the running asyncio loop.

    The session itself is `mcp_adapters._session_base.Session`; this binds the
    asyncio backend. Inbound requests run as tasks; see the base class for the rest.
    """

    __slots__ = ()

    @staticmethod
    def loop_backend() -> SessionBackend:
        return _backend()


# =========================================================================== transports
# Written once in `transports.stdio` and `transports.tcp` (`transports.bound`); bound here to asyncio.


class TcpServer(tcp.TcpServer):
    """A listening TCP server; one `Session` per accepted connection."""

    session_type = Session


_transports = Transports(Session, TcpServer, logger)
connect_stdio = _transports.connect_stdio
serve_stdio = _transports.serve_stdio
connect_tcp = _transports.connect_tcp
tcp_server = _transports.tcp_server
serve_tcp = _transports.serve_tcp


__all__ = [
    "AsyncioStream",
    "ConnectionClosedError",
    "Driver",
    "EventObserver",
    "NotificationHandler",
    "RequestHandler",
    "Session",
    "StdioServerParameters",
    "TcpServer",
    "connect_stdio",
    "connect_tcp",
    "open_pipe_stream",
    "open_tcp_stream",
    "serve_stdio",
    "serve_tcp",
    "tcp_server",
]
