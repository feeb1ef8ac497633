"""The trio backend: the driver loop on trio streams, nurseries and cancel scopes.

The same public API as `mcp_adapters.asyncio` (only the streams differ), so
code written against one runs on the other::

    async with connect_tcp("127.0.0.1", 8000, ClientConfig(mode="auto")) as session:
        tools = await session.request("tools/list")

    async def on_request(session: Session, request: RequestReceived) -> Any:
        return {}

    async with tcp_server(on_request, ServerConfig(name="demo")) as server:
        print(server.port)
        await server.serve_forever()
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from mcp_adapters import _driver, _session_base
from mcp_adapters._driver import (
    CLOSE_TIMEOUT,
    READ_SIZE,
    EventSink,
    SansIOConnection,
)
from mcp_adapters._errors import ConnectionClosedError
from mcp_adapters.backends import SessionBackend
from mcp_adapters.backends.trio import BACKEND, open_pipe_stream, open_tcp_stream
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
    """Runs one sans-IO connection over one trio stream.

    The loop itself is `mcp_adapters._driver.Driver`; this binds the trio backend.
    """

    def __init__(
        self,
        connection: SansIOConnection,
        stream: trio.abc.Stream,
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
            backend=BACKEND,
            close_timeout=close_timeout,
            read_size=read_size,
            hold_eof=hold_eof,
        )


# =========================================================================== session


class Session(_session_base.Session):
    """One MCP connection, client or server, over one trio stream.

    The session itself is `mcp_adapters._session_base.Session`; this binds the
    trio backend. Use it as an async context manager (it holds a nursery for
    its tasks); each inbound request runs under a cancel scope of its own.
    """

    __slots__ = ()

    @staticmethod
    def loop_backend() -> SessionBackend:
        return BACKEND


# =========================================================================== transports
# Written once in `transports.stdio` and `transports.tcp` (`transports.bound`); bound here to trio.


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
