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

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from mcp_adapters import _driver
from mcp_adapters._driver import (
    CLOSE_TIMEOUT,
    CONNECT_TIMEOUT,
    PROBE_TIMEOUT,
    READ_SIZE,
    AsyncByteStream,
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
from mcp_adapters.backends.asyncio import (
    AsyncioStream,
    listen_tcp,
    open_pipe_stream,
    open_tcp_stream,
    set_if_pending,
)
from mcp_adapters.backends.asyncio import backend as _backend
from mcp_adapters.transports.link import LinkEnd
from mcp_adapters.transports.process import ServerProcess, Sleep, StdioServerParameters, WaitExit
from mcp_adapters.transports.stdio import claim_stdio
from mcp_core import (
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    ClientConfig,
    ClientConnection,
    Connected,
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


class _FutureWaiter:
    """A request's outcome into an asyncio future, unless the caller stopped waiting."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self.future = future

    def set_result(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def set_exception(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)


async def _finish_uncancelled(task: asyncio.Future[Any]) -> None:
    """Wait for `task` even through cancellation (it is bounded); re-raise that afterwards."""
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                break
            cancelled = True
            task.cancel()
        except Exception:
            break
    if cancelled:
        raise asyncio.CancelledError


class Session(SessionBase):
    """One MCP connection, client or server, over one byte stream.

    Use it as an async context manager: entering starts the driver and, for a
    client, runs the handshake (`session.connected` holds the `Connected` event);
    leaving closes the connection, settles everything in flight and closes the
    stream. Inbound requests run as tasks calling `on_request(session, request)`:
    its return value is the result, an `MCPError` it raises is the error, and
    the task is cancelled when the peer cancels or the connection ends.
    `on_notification` and `on_event` are plain callbacks run in the reader;
    they must not block. Not thread-safe: use it from its loop only.
    `drain_on_eof=True` (a server's option): when the input ends, the requests
    in flight are still answered before the connection closes.
    """

    def __init__(
        self,
        connection: Connection,
        stream: AsyncByteStream | LinkEnd,
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
            backend=_backend(),
            drain_on_eof=drain_on_eof,
        )
        self._handlers: set[asyncio.Task[None]] = set()
        self._loop = asyncio.get_running_loop()
        self._task: asyncio.Task[None] | None = None
        # A future, not an asyncio.Event: an Event carries a deque per session.
        self._done: asyncio.Future[None] = self._loop.create_future()
        #: The server process, for a session made by `connect_stdio`.
        self.process: ServerProcess | None = None
        self._attach_to_server()

    # ---- lifetime

    async def __aenter__(self) -> Session:
        self._task = asyncio.get_running_loop().create_task(self._run())
        try:
            connection = self._core.connection
            if isinstance(connection, ClientConnection) and connection.state == State.IDLE:
                await self._handshake()
        except BaseException:
            await self.aclose("handshake failed")
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _handshake(self) -> None:
        future: asyncio.Future[Connected] = asyncio.get_running_loop().create_future()
        self._core.connect(_FutureWaiter(future), deadline=self._driver.now() + self._probe_timeout)
        self._driver.wake()
        try:
            await asyncio.wait_for(future, self._connect_timeout)
        except TimeoutError:
            raise RequestTimeoutError(
                "initialize", REQUEST_TIMEOUT, "the server did not complete the handshake"
            ) from None

    async def _run(self) -> None:
        try:
            await self._driver.run()
        finally:
            self._core.close("transport closed")  # settles anything still waiting
            handlers = list(self._handlers)
            for task in handlers:
                task.cancel()
            if handlers:
                await asyncio.wait(handlers)
            set_if_pending(self._done)

    async def aclose(self, reason: str = "closed locally") -> None:
        """Close the connection: waiters fail (the peer is told), handlers are cancelled,
        the stream is closed."""
        self._core.close(reason, tell_peer=True)
        self._driver.finish()
        if self._task is not None:
            await _finish_uncancelled(self._task)

    async def wait_closed(self) -> None:
        """Wait until the connection ends (the peer closed it, or `aclose`)."""
        await asyncio.shield(self._done)

    # ---- sending

    def spawn(self, awaitable: Awaitable[Any]) -> None:
        """Run a callback coroutine alongside the session; it ends with the session."""

        async def run() -> None:
            try:
                await awaitable
            except Exception:
                logger.exception("callback failed")

        task = asyncio.get_running_loop().create_task(run())
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

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
        if self._driver.busy:
            await self._driver.drain()
        future: asyncio.Future[Any] = self._loop.create_future()
        deadline = None if timeout is None else self._driver.now() + timeout
        rid = self._core.start_request(
            method,
            params,
            _FutureWaiter(future),
            deadline=deadline,
            on_progress=on_progress,
            related_request_id=related_request_id,
        )
        self._driver.wake()
        try:
            return await future
        except asyncio.CancelledError:
            self._core.cancel_request(rid, "cancelled by the caller")
            self._driver.wake()
            raise

    # ---- inbound

    def _spawn(self, event: RequestReceived) -> asyncio.Task[None] | None:
        answered, work = self._start_now(event)
        if answered:
            return None
        task = asyncio.get_running_loop().create_task(self._handle(event, work))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)
        return task

    async def _handle(
        self, event: RequestReceived, work: Callable[[], Awaitable[None]] | None
    ) -> None:
        rid = event.request_id
        try:
            if work is not None:
                await work()
                result = ANSWERED
            elif self._on_request is None:
                raise MCPError(METHOD_NOT_FOUND, f"Method not found: {event.method}")
            else:
                result = await self._on_request(self, event)
            await self._driver.drain()
        except asyncio.CancelledError:
            self._core.forget(rid)
            raise
        except Exception as exc:
            self._core.answer_exception(rid, exc)
        else:
            if result is ANSWERED:
                self._core.forget(rid)
            else:
                self._core.answer(rid, result)
        self._driver.wake()


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
        stream = await open_pipe_stream(*process.take_pipes())
        session = Session(ClientConnection(config or ClientConfig()), stream, **session_options)
        session.process = process
        async with session:
            yield session
    finally:
        await _stop_process(process)


async def _stop_process(process: ServerProcess) -> None:
    try:
        for step in process.shutdown():
            if isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, WaitExit):
                await _wait_exit(step)
    finally:
        process.release()  # kills at once if we were interrupted


async def _wait_exit(step: WaitExit) -> None:
    if step.process.poll() is not None:
        return
    loop = asyncio.get_running_loop()
    if step.pidfd is None:
        end = loop.time() + step.timeout
        while step.process.poll() is None and loop.time() < end:
            await asyncio.sleep(0.01)
        return
    exited = loop.create_future()
    loop.add_reader(step.pidfd, set_if_pending, exited)
    try:
        await asyncio.wait_for(exited, step.timeout)
    except TimeoutError:
        pass
    finally:
        loop.remove_reader(step.pidfd)
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
        stream = await open_pipe_stream(fd_in, fd_out)
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
        self, on_request: RequestHandler | None, config: ServerConfig, session_options: Any
    ) -> None:
        self._on_request = on_request
        self._config = config
        self._options: dict[str, Any] = dict(session_options)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.sessions: set[Session] = set()
        self.host = ""
        self.port = 0
        self._closed = asyncio.Event()

    async def listen(self, host: str, port: int) -> None:
        """Start listening on `host:port` (`tcp_server` does; port 0 picks a free one)."""
        self._server = await listen_tcp(host, port, self._accepted)
        self.host, self.port = self._server.sockets[0].getsockname()[:2]

    @property
    def url(self) -> str:
        """Where it listens, as `Client` takes it: tcp://host:port."""
        return f"tcp://{authority(self.host, self.port)}"

    def _accepted(self, stream: AsyncioStream) -> None:
        task = asyncio.get_running_loop().create_task(self._serve(stream))
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    async def _serve(self, stream: AsyncioStream) -> None:
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
        """Stop listening, close every connection, wait for them to end."""
        if self._server is not None:
            self._server.close()
        for session in list(self.sessions):
            await session.aclose("server shutting down")
        if self._connections:
            await asyncio.wait(list(self._connections))
        if self._server is not None:
            await self._server.wait_closed()
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
    server = TcpServer(on_request, config, session_options)
    await server.listen(host, port)
    try:
        yield server
    finally:
        await _finish_uncancelled(asyncio.ensure_future(server.aclose()))


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
