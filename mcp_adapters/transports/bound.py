"""The stdio and TCP transports bound to one backend: what `mcp_adapters.asyncio`, `.trio`
and `.sockets` export.

`transports.stdio` and `transports.tcp` take the session type (and the TCP
server type) as their first argument, which names the backend. A `Transports`
fixes those, so a backend module publishes `connect_stdio`, `serve_stdio`,
`connect_tcp`, `tcp_server` and `serve_tcp` with one line each;
`BlockingTransports` does the same for `mcp_adapters.sockets`, over the
transports' blocking faces.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mcp_adapters.transports import stdio, tcp
from mcp_adapters.transports.process import StdioServerParameters
from mcp_core import ClientConfig, ServerConfig

if TYPE_CHECKING:
    from mcp_adapters._session_base import RequestHandler, Session
    from mcp_adapters.sockets import RequestHandler as BlockingHandler
    from mcp_adapters.sockets import Session as BlockingSession

S = TypeVar("S", bound="Session")
T = TypeVar("T", bound=tcp.TcpServer)
B = TypeVar("B", bound="BlockingSession")
BT = TypeVar("BT", bound=tcp.BlockingTcpServer)


class Transports(Generic[S, T]):
    """`connect_stdio` ... `serve_tcp` for sessions of `session_type` and servers of `server_type`."""

    def __init__(self, session_type: type[S], server_type: type[T], log: logging.Logger) -> None:
        self._session_type = session_type
        self._server_type = server_type
        # "serving ... on ..." is said in the backend module's name, as before the move.
        self._log = log

    def connect_stdio(
        self,
        params: StdioServerParameters,
        config: ClientConfig | None = None,
        **session_options: Any,
    ) -> contextlib.AbstractAsyncContextManager[S]:
        """Start a stdio server, connect to it, and on exit stop it and its children."""
        return stdio.connect_stdio(self._session_type, params, config, **session_options)

    async def serve_stdio(
        self,
        on_request: RequestHandler | None,
        config: ServerConfig,
        **session_options: Any,
    ) -> None:
        """Serve one connection on this process's stdin/stdout until stdin ends.

        While serving, `print()` and anything else written to fd 1 goes to stderr.
        stdin and stdout may be pipes, sockets, terminals, files, devices or closed
        (see `mcp_adapters.transports.stdio`). When stdin ends, the requests in flight
        are still answered (`drain_on_eof`), then serving returns.
        """
        await stdio.serve_stdio(
            self._session_type, on_request, config, log=self._log, **session_options
        )

    def connect_tcp(
        self,
        host: str,
        port: int,
        config: ClientConfig | None = None,
        **session_options: Any,
    ) -> contextlib.AbstractAsyncContextManager[S]:
        """Connect to an MCP server speaking the stdio framing over TCP."""
        return tcp.connect_tcp(self._session_type, host, port, config, **session_options)

    def tcp_server(
        self,
        on_request: RequestHandler | None,
        config: ServerConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        **session_options: Any,
    ) -> contextlib.AbstractAsyncContextManager[T]:
        """Listen for MCP connections (stdio framing over TCP); `server.port` is the bound port."""
        return tcp.tcp_server(self._server_type, on_request, config, host, port, **session_options)

    async def serve_tcp(
        self,
        on_request: RequestHandler | None,
        config: ServerConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        **session_options: Any,
    ) -> None:
        """Serve MCP over TCP until cancelled."""
        await tcp.serve_tcp(
            self._server_type, on_request, config, host, port, log=self._log, **session_options
        )


class BlockingTransports(Generic[B, BT]):
    """The same five for a blocking session type and TCP server type (`mcp_adapters.sockets`)."""

    def __init__(self, session_type: type[B], server_type: type[BT], log: logging.Logger) -> None:
        self._session_type = session_type
        self._server_type = server_type
        self._log = log

    def connect_stdio(
        self,
        params: StdioServerParameters,
        config: ClientConfig | None = None,
        **session_options: Any,
    ) -> contextlib.AbstractContextManager[B]:
        """Start a stdio server, connect to it, and on exit stop it and its children."""
        return stdio.connect_stdio_blocking(self._session_type, params, config, **session_options)

    def serve_stdio(
        self,
        on_request: BlockingHandler | None,
        config: ServerConfig,
        **session_options: Any,
    ) -> None:
        """Serve one connection on this process's stdin/stdout until stdin ends.

        While serving, `print()` and anything else written to fd 1 goes to stderr.
        stdin and stdout may be pipes, sockets, terminals, files, devices or closed
        (see `mcp_adapters.transports.stdio`). When stdin ends, the requests in flight
        are still answered (`drain_on_eof`), then serving returns.
        """
        stdio.serve_stdio_blocking(
            self._session_type, on_request, config, log=self._log, **session_options
        )

    def connect_tcp(
        self,
        host: str,
        port: int,
        config: ClientConfig | None = None,
        **session_options: Any,
    ) -> contextlib.AbstractContextManager[B]:
        """Connect to an MCP server speaking the stdio framing over TCP."""
        return tcp.connect_tcp_blocking(self._session_type, host, port, config, **session_options)

    def tcp_server(
        self,
        on_request: BlockingHandler | None,
        config: ServerConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        **session_options: Any,
    ) -> BT:
        """A `TcpServer`; use it as a context manager to serve on a background thread."""
        return self._server_type(on_request, config, host, port, **session_options)

    def serve_tcp(
        self,
        on_request: BlockingHandler | None,
        config: ServerConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        **session_options: Any,
    ) -> None:
        """Serve MCP over TCP on this thread, forever (until interrupted)."""
        tcp.serve_tcp_blocking(
            self._server_type, on_request, config, host, port, log=self._log, **session_options
        )


__all__ = ["BlockingTransports", "Transports"]
