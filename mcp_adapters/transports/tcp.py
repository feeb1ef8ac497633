"""MCP over TCP with the stdio framing (newline-delimited JSON), written once for asyncio and trio.

`connect_tcp`, `TcpServer`, `tcp_server` and `serve_tcp` take the backend from
the session type they are given (`mcp_adapters.asyncio.Session`,
`mcp_adapters.trio.Session`): its seam opens the connection, listens, and runs
each accepted connection in a task of its own. The public modules bind them
(`mcp_adapters.asyncio.tcp_server` ...); the blocking twin is in
`mcp_adapters.sockets`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from mcp_adapters._driver import authority
from mcp_adapters._errors import to_transport_error
from mcp_adapters.backends import Listener
from mcp_core import ClientConfig, ClientConnection, ServerConfig, ServerConnection

if TYPE_CHECKING:
    from mcp_adapters._session_base import RequestHandler, Session

logger = logging.getLogger(__name__)

S = TypeVar("S", bound="Session")


@contextlib.asynccontextmanager
async def connect_tcp(
    session_type: type[S],
    host: str,
    port: int,
    config: ClientConfig | None = None,
    **session_options: Any,
) -> AsyncIterator[S]:
    """Connect to an MCP server speaking the stdio framing over TCP."""
    backend = session_type.loop_backend()
    try:
        stream = await backend.open_tcp_stream(host, port)
    except OSError as exc:
        error = to_transport_error(exc)
        assert error is not None
        raise error from exc
    connection = ClientConnection(config or ClientConfig())
    async with session_type(connection, stream, backend=backend, **session_options) as session:
        yield session


class TcpServer:
    """A listening TCP server; one `Session` per accepted connection.

    A backend binds it by naming its session type (`session_type`).
    """

    #: The session each connection gets; it also names the backend.
    session_type: ClassVar[type[Session]]

    def __init__(
        self, on_request: RequestHandler | None, config: ServerConfig, session_options: Any
    ) -> None:
        self._on_request = on_request
        self._config = config
        self._options: dict[str, Any] = dict(session_options)
        self._backend = self.session_type.loop_backend()
        self._listener: Listener | None = None
        self._closed = self._backend.event()
        self.sessions: set[Session] = set()
        self.host = ""
        self.port = 0

    @property
    def url(self) -> str:
        """Where it listens, as `Client` takes it: tcp://host:port."""
        return f"tcp://{authority(self.host, self.port)}"

    @contextlib.asynccontextmanager
    async def listening(self, host: str, port: int) -> AsyncIterator[None]:
        """Listen on `host:port` for the block (port 0 picks a free one); then close all."""
        backend = self._backend
        async with backend.listen_tcp(host, port, self.serve_connection) as listener:
            self._listener = listener
            self.host, self.port = listener.address
            try:
                yield
            finally:
                await backend.shielded(self.aclose)

    async def serve_connection(self, stream: Any) -> None:
        """Serve one accepted connection until it ends (the listener runs this per accept)."""
        # `new_connection` (a session option) lets a layer such as WebSocket wrap
        # the MCP connection: it returns (connection, layer the driver speaks).
        options = dict(self._options)
        new_connection = options.pop("new_connection", None)
        connection, layer = (
            new_connection() if new_connection else (ServerConnection(self._config), None)
        )
        session = self.session_type(
            connection,
            stream,
            on_request=self._on_request,
            layer=layer,
            backend=self._backend,
            **options,
        )
        async with session:
            self.sessions.add(session)
            try:
                await session.wait_closed()
            finally:
                self.sessions.discard(session)

    async def serve_forever(self) -> None:
        await self._closed.wait()

    async def aclose(self) -> None:
        """Stop listening and close every connection (the listener then waits for them)."""
        if self._listener is not None:
            self._listener.stop_accepting()
        for session in list(self.sessions):
            await session.aclose("server shutting down")
        self._closed.set()


T = TypeVar("T", bound=TcpServer)


@contextlib.asynccontextmanager
async def tcp_server(
    server_type: type[T],
    on_request: RequestHandler | None,
    config: ServerConfig,
    host: str = "127.0.0.1",
    port: int = 0,
    **session_options: Any,
) -> AsyncIterator[T]:
    """Listen for MCP connections (stdio framing over TCP); `server.port` is the bound port."""
    server = server_type(on_request, config, session_options)
    async with server.listening(host, port):
        yield server


async def serve_tcp(
    server_type: type[TcpServer],
    on_request: RequestHandler | None,
    config: ServerConfig,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    log: logging.Logger = logger,
    **session_options: Any,
) -> None:
    """Serve MCP over TCP until cancelled (`log` says where)."""
    async with tcp_server(server_type, on_request, config, host, port, **session_options) as server:
        log.info("serving %s on %s", config.name, server.url)
        await server.serve_forever()


__all__ = ["TcpServer", "connect_tcp", "serve_tcp", "tcp_server"]
