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

import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import trio

from mcp_adapters import _driver
from mcp_adapters._driver import (
    CLOSE_TIMEOUT,
    CONNECT_TIMEOUT,
    PROBE_TIMEOUT,
    READ_SIZE,
    EventSink,
    SansIOConnection,
    authority,
)
from mcp_adapters._errors import (
    ConnectionClosedError,
    RequestTimeoutError,
    to_transport_error,
)
from mcp_adapters._session import ANSWERED, Connection, RequestId
from mcp_adapters._session_base import SessionBase
from mcp_adapters.backends.trio import BACKEND, open_pipe_stream, open_tcp_stream
from mcp_adapters.transports.link import LinkEnd
from mcp_adapters.transports.process import ServerProcess, Sleep, StdioServerParameters, WaitExit
from mcp_adapters.transports.stdio import claim_stdio
from mcp_core import (
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    ClientConfig,
    ClientConnection,
    Event,
    MCPError,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ServerConfig,
    ServerConnection,
    State,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

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


class _EventWaiter:
    """A request's outcome, delivered through a trio event."""

    __slots__ = ("_error", "_event", "_value")

    def __init__(self) -> None:
        self._event = trio.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def set_result(self, value: Any) -> None:
        if not self._event.is_set():
            self._value = value
            self._event.set()

    def set_exception(self, exc: BaseException) -> None:
        if not self._event.is_set():
            self._error = exc
            self._event.set()

    async def wait(self) -> Any:
        await self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value


class Session(SessionBase):
    """One MCP connection, client or server, over one trio stream.

    Use it as an async context manager (it holds a nursery for its tasks):
    entering starts the driver and, for a client, runs the handshake
    (`session.connected` holds the `Connected` event); leaving closes the
    connection, settles everything in flight and closes the stream. Inbound
    requests run as tasks calling `on_request(session, request)`: its return
    value is the result, an `MCPError` it raises is the error, and its cancel
    scope is cancelled when the peer cancels or the connection ends.
    `on_notification` and `on_event` are plain callbacks; they must not block.
    Not thread-safe: use it from its trio run only.
    `drain_on_eof=True` (a server's option): when the input ends, the requests
    in flight are still answered before the connection closes.
    """

    def __init__(
        self,
        connection: Connection,
        stream: trio.abc.Stream | LinkEnd,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        on_event: EventObserver | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        probe_timeout: float = PROBE_TIMEOUT,
        close_timeout: float = CLOSE_TIMEOUT,
        layer: SansIOConnection | None = None,
        drain_on_eof: bool = False,
    ) -> None:
        super().__init__(
            connection,
            stream,
            on_request=on_request,
            on_notification=on_notification,
            on_event=on_event,
            connect_timeout=connect_timeout,
            probe_timeout=probe_timeout,
            close_timeout=close_timeout,
            layer=layer,
            backend=BACKEND,
            drain_on_eof=drain_on_eof,
        )
        self._stack = contextlib.AsyncExitStack()
        self._nursery: trio.Nursery | None = None
        self._done = trio.Event()
        #: The server process, for a session made by `connect_stdio`.
        self.process: ServerProcess | None = None
        self._attach_to_server()

    # ---- lifetime

    async def __aenter__(self) -> Session:
        self._nursery = await self._stack.enter_async_context(trio.open_nursery())
        self._nursery.start_soon(self._run)
        try:
            connection = self._core.connection
            if isinstance(connection, ClientConnection) and connection.state == State.IDLE:
                await self._handshake()
        except BaseException:
            await self._shutdown()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._shutdown()

    async def _shutdown(self) -> None:
        try:
            await self.aclose()
        finally:
            # Every task of ours has ended, so the nursery closes without the body's
            # exception: the caller sees it as raised, not wrapped in a group.
            await self._stack.aclose()

    async def _handshake(self) -> None:
        waiter = _EventWaiter()
        self._core.connect(waiter, deadline=self._driver.now() + self._probe_timeout)
        self._driver.wake()
        with trio.move_on_after(self._connect_timeout):
            await waiter.wait()
            return
        raise RequestTimeoutError(
            "initialize", REQUEST_TIMEOUT, "the server did not complete the handshake"
        )

    async def _run(self) -> None:
        try:
            await self._driver.run()
        finally:
            self._core.close("transport closed")  # settles anything still waiting
            self._done.set()

    async def aclose(self, reason: str = "closed locally") -> None:
        """Close the connection: waiters fail (the peer is told), handlers are cancelled,
        the stream is closed."""
        self._core.close(reason, tell_peer=True)
        self._driver.finish()
        if self._nursery is not None:
            with trio.CancelScope(shield=True):
                await self._done.wait()

    async def wait_closed(self) -> None:
        """Wait until the connection ends (the peer closed it, or `aclose`)."""
        await self._done.wait()

    # ---- sending

    def spawn(self, awaitable: Awaitable[Any]) -> None:
        """Run a callback coroutine alongside the session; it ends with the session."""

        async def run() -> None:
            try:
                await awaitable
            except Exception:
                logger.exception("callback failed")

        if self._nursery is None:
            raise RuntimeError("the session is not running")
        self._nursery.start_soon(run)

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        on_progress: Callable[[ProgressReceived], None] | None = None,
        related_request_id: RequestId | None = None,
    ) -> Any:
        """Send a request and return its validated result model.

        Raises `MCPError` for the peer's error, `RequestTimeoutError` once
        `timeout` seconds pass (the peer is told to cancel), `ConnectionClosedError`
        when the connection ends first. Cancelling the caller cancels the request.
        """
        await self._driver.drain()
        waiter = _EventWaiter()
        deadline = None if timeout is None else self._driver.now() + timeout
        rid = self._core.start_request(
            method,
            params,
            waiter,
            deadline=deadline,
            on_progress=on_progress,
            related_request_id=related_request_id,
        )
        self._driver.wake()
        try:
            return await waiter.wait()
        except trio.Cancelled:
            self._core.cancel_request(rid, "cancelled by the caller")
            self._driver.wake()
            raise

    # ---- inbound

    def _spawn(self, event: RequestReceived) -> trio.CancelScope | None:
        answered, work = self._start_now(event)
        if answered:
            return None
        scope = trio.CancelScope()
        assert self._nursery is not None
        self._nursery.start_soon(self._handle, event, scope, work)
        return scope

    async def _handle(
        self,
        event: RequestReceived,
        scope: trio.CancelScope,
        work: Callable[[], Awaitable[None]] | None,
    ) -> None:
        rid = event.request_id
        with scope:
            try:
                if work is not None:
                    await work()
                    result = ANSWERED
                elif self._on_request is None:
                    raise MCPError(METHOD_NOT_FOUND, f"Method not found: {event.method}")
                else:
                    result = await self._on_request(self, event)
                await self._driver.drain()
            except Exception as exc:
                self._core.answer_exception(rid, exc)
            else:
                if result is ANSWERED:
                    self._core.forget(rid)
                else:
                    self._core.answer(rid, result)
            self._driver.wake()
            return
        self._core.forget(rid)  # cancelled: the peer gave up, or the connection ended


# =========================================================================== transports


@contextlib.asynccontextmanager
async def connect_stdio(
    params: StdioServerParameters,
    config: ClientConfig | None = None,
    **session_options: Any,
) -> AsyncIterator[Session]:
    """Start a stdio server, connect to it, and on exit stop it and its children."""
    process = ServerProcess(params)
    try:
        stream = open_pipe_stream(*process.take_pipes())
        session = Session(ClientConnection(config or ClientConfig()), stream, **session_options)
        session.process = process
        async with session:
            yield session
    finally:
        with trio.CancelScope(shield=True):
            await _stop_process(process)


async def _stop_process(process: ServerProcess) -> None:
    try:
        for step in process.shutdown():
            if isinstance(step, Sleep):
                await trio.sleep(step.seconds)
            elif isinstance(step, WaitExit):
                await _wait_exit(step)
    finally:
        process.release()


async def _wait_exit(step: WaitExit) -> None:
    if step.process.poll() is not None:
        return
    with trio.move_on_after(step.timeout):
        if step.pidfd is None:
            while step.process.poll() is None:
                await trio.sleep(0.01)
        else:
            await trio.lowlevel.wait_readable(step.pidfd)
    step.process.poll()


async def serve_stdio(
    on_request: RequestHandler | None,
    config: ServerConfig,
    **session_options: Any,
) -> None:
    """Serve one connection on this process's stdin/stdout until stdin ends.

    While serving, `print()` and anything else written to fd 1 goes to stderr.
    stdin and stdout may be pipes, sockets, terminals, files, devices or closed
    (see `mcp_adapters.transports.stdio`). When stdin ends, the requests in flight are
    still answered (`drain_on_eof`), then serving returns.
    """
    options: dict[str, Any] = {"drain_on_eof": True, **session_options}
    with claim_stdio() as (fd_in, fd_out):
        stream = open_pipe_stream(fd_in, fd_out)
        session = Session(ServerConnection(config), stream, on_request=on_request, **options)
        logger.info("serving %s on stdio", config.name)
        async with session:
            await session.wait_closed()


@contextlib.asynccontextmanager
async def connect_tcp(
    host: str,
    port: int,
    config: ClientConfig | None = None,
    **session_options: Any,
) -> AsyncIterator[Session]:
    """Connect to an MCP server speaking the stdio framing over TCP."""
    try:
        stream = await open_tcp_stream(host, port)
    except OSError as exc:
        error = to_transport_error(exc)
        assert error is not None
        raise error from exc
    async with Session(ClientConnection(config or ClientConfig()), stream, **session_options) as s:
        yield s


class TcpServer:
    """A listening TCP server; one `Session` per accepted connection."""

    def __init__(
        self,
        on_request: RequestHandler | None,
        config: ServerConfig,
        listeners: list[trio.SocketListener],
        session_options: Any,
    ) -> None:
        self._on_request = on_request
        self._config = config
        self._options: dict[str, Any] = dict(session_options)
        self._listeners = listeners
        self.sessions: set[Session] = set()
        self.host, self.port = listeners[0].socket.getsockname()[:2]
        self._closed = trio.Event()

    @property
    def url(self) -> str:
        """Where it listens, as `Client` takes it: tcp://host:port."""
        return f"tcp://{authority(self.host, self.port)}"

    async def serve_connection(self, stream: trio.SocketStream) -> None:
        """Serve one accepted connection until it ends (`tcp_server` runs this per accept)."""
        stream.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        # `new_connection` (a session option) lets a layer such as WebSocket wrap
        # the MCP connection: it returns (connection, layer the driver speaks).
        options = dict(self._options)
        new_connection = options.pop("new_connection", None)
        connection, layer = (
            new_connection() if new_connection else (ServerConnection(self._config), None)
        )
        session = Session(connection, stream, on_request=self._on_request, layer=layer, **options)
        async with session:
            self.sessions.add(session)
            try:
                await session.wait_closed()
            finally:
                self.sessions.discard(session)

    async def serve_forever(self) -> None:
        await self._closed.wait()

    async def aclose(self) -> None:
        """Close every connection (the listeners close with the server's nursery)."""
        with trio.CancelScope(shield=True):
            for session in list(self.sessions):
                await session.aclose("server shutting down")
        self._closed.set()


@contextlib.asynccontextmanager
async def tcp_server(
    on_request: RequestHandler | None,
    config: ServerConfig,
    host: str = "127.0.0.1",
    port: int = 0,
    **session_options: Any,
) -> AsyncIterator[TcpServer]:
    """Listen for MCP connections (stdio framing over TCP); `server.port` is the bound port."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    server = TcpServer(on_request, config, listeners, session_options)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, server.serve_connection, listeners)
        try:
            yield server
        finally:
            await server.aclose()
            nursery.cancel_scope.cancel()


async def serve_tcp(
    on_request: RequestHandler | None,
    config: ServerConfig,
    host: str = "127.0.0.1",
    port: int = 0,
    **session_options: Any,
) -> None:
    """Serve MCP over TCP until cancelled."""
    async with tcp_server(on_request, config, host, port, **session_options) as server:
        logger.info("serving %s on %s", config.name, server.url)
        await server.serve_forever()


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
