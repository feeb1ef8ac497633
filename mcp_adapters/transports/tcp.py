"""MCP over TCP with the stdio framing (newline-delimited JSON), written once for every backend.

`connect_tcp`, `TcpServer`, `tcp_server` and `serve_tcp` take the backend from
the session type they are given (`mcp_adapters.asyncio.Session`,
`mcp_adapters.trio.Session`): its seam opens the connection, listens, and runs
each accepted connection in a task of its own. The public modules bind them
(`mcp_adapters.asyncio.tcp_server` ...). The `*_blocking` faces and
`BlockingTcpServer` are the same transport for `mcp_adapters.sockets`, on
`backends.blocking` (threads where the loops have tasks).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from mcp_adapters._driver import CONNECT_TIMEOUT, authority
from mcp_adapters._errors import os_error
from mcp_adapters.backends import Listener
from mcp_adapters.backends.blocking import HANDLER_GRACE
from mcp_core import ClientConfig, ClientConnection, ServerConfig, ServerConnection

if TYPE_CHECKING:
    from mcp_adapters._session_base import RequestHandler, Session
    from mcp_adapters.sockets import RequestHandler as BlockingHandler
    from mcp_adapters.sockets import Session as BlockingSession

logger = logging.getLogger(__name__)

S = TypeVar("S", bound="Session")
B = TypeVar("B", bound="BlockingSession")


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
        raise os_error(exc) from exc
    connection = ClientConnection(config or ClientConfig())
    async with session_type(connection, stream, backend=backend, **session_options) as session:
        yield session


class _Serving:
    """What the async and the blocking TCP servers share: their state, their
    address, and the session each accepted connection gets."""

    #: The session each connection gets; it also names the backend.
    session_type: ClassVar[type[Any]]

    def __init__(
        self, on_request: Any, config: ServerConfig, session_options: dict[str, Any]
    ) -> None:
        self._on_request = on_request
        self._config = config
        self._options: dict[str, Any] = dict(session_options)
        self.sessions: set[Any] = set()
        self.host = ""
        self.port = 0

    @property
    def url(self) -> str:
        """Where it listens, as `Client` takes it: tcp://host:port."""
        return f"tcp://{authority(self.host, self.port)}"

    def _new_session(self, stream: Any, **extra: Any) -> Any:
        # `new_connection` (a session option) lets a layer such as WebSocket wrap
        # the MCP connection: it returns (connection, layer the driver speaks).
        options = dict(self._options)
        new_connection = options.pop("new_connection", None)
        if new_connection is None:
            connection = ServerConnection(self._config)
        else:
            connection, extra["layer"] = new_connection()
        return self.session_type(
            connection, stream, on_request=self._on_request, **extra, **options
        )


class TcpServer(_Serving):
    """A listening TCP server; one `Session` per accepted connection.

    A backend binds it by naming its session type (`session_type`).
    """

    session_type: ClassVar[type[Session]]
    sessions: set[Session]

    def __init__(
        self, on_request: RequestHandler | None, config: ServerConfig, session_options: Any
    ) -> None:
        super().__init__(on_request, config, session_options)
        self._backend = self.session_type.loop_backend()
        self._listener: Listener | None = None
        self._closed = self._backend.event()

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
        session: Session = self._new_session(stream, backend=self._backend)
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


# =========================================================================== blocking
# The same transport for `mcp_adapters.sockets`: a listener thread accepts, and
# each connection's session is driven on a thread of its own.


@contextlib.contextmanager
def connect_tcp_blocking(
    session_type: type[B],
    host: str,
    port: int,
    config: ClientConfig | None = None,
    **session_options: Any,
) -> Iterator[B]:
    """`connect_tcp` for a blocking session type (`mcp_adapters.sockets.Session`)."""
    backend = session_type.loop_backend()
    timeout = session_options.get("connect_timeout", CONNECT_TIMEOUT)
    stream = backend.open_tcp_stream(host, port, timeout)
    session = session_type(ClientConnection(config or ClientConfig()), stream, **session_options)
    with session:
        yield session


class BlockingTcpServer(_Serving):
    """A listening socket; each connection is served by a blocking session on its own thread.

    Bound when made (`port` is known at once). As a context manager it accepts
    on a background thread until the block ends; `serve_forever()` accepts on
    the calling thread instead, until `close()`.
    """

    session_type: ClassVar[type[BlockingSession]]
    sessions: set[BlockingSession]

    def __init__(
        self,
        on_request: BlockingHandler | None,
        config: ServerConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        **session_options: Any,
    ) -> None:
        super().__init__(on_request, config, session_options)
        self._listener = self.session_type.loop_backend().listen_tcp(
            host, port, self.serve_connection
        )
        self.host, self.port = self._listener.address
        self._lock = threading.Lock()
        self._closing = False
        self._accept_thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        """Serve on a background thread until the block ends."""
        self._accept_thread = threading.Thread(
            target=self.serve_forever, name="mcp-tcp-accept", daemon=True
        )
        self._accept_thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def serve_forever(self) -> None:
        """Accept connections until `close()`."""
        self._listener.serve_forever()

    def serve_connection(self, stream: Any) -> None:
        """Serve one accepted connection until it ends (on the listener's thread for it)."""
        session: BlockingSession = self._new_session(stream)
        with self._lock:
            if self._closing:  # accepted as the server closed: it was not told
                session.close()
                return
            self.sessions.add(session)
        try:
            with session:
                session.serve_forever()
        finally:
            with self._lock:
                self.sessions.discard(session)

    def close(self) -> None:
        """Stop accepting, close every connection and wait for their threads."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            sessions = list(self.sessions)
        self._listener.stop_accepting()
        if self._accept_thread is not None:
            self._accept_thread.join()
        for session in sessions:
            session.close("server shutting down")
        self._listener.close(HANDLER_GRACE)


def serve_tcp_blocking(
    server_type: type[BlockingTcpServer],
    on_request: BlockingHandler | None,
    config: ServerConfig,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    log: logging.Logger = logger,
    **session_options: Any,
) -> None:
    """`serve_tcp` for a blocking server type: accept on this thread until interrupted."""
    server = server_type(on_request, config, host, port, **session_options)
    log.info("serving %s on %s", config.name, server.url)
    try:
        server.serve_forever()
    finally:
        server.close()


__all__ = [
    "BlockingTcpServer",
    "TcpServer",
    "connect_tcp",
    "connect_tcp_blocking",
    "serve_tcp",
    "serve_tcp_blocking",
    "tcp_server",
]
