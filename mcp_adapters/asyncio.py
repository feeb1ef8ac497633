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
import os
import socket
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

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
    TransportError,
    to_transport_error,
)
from mcp_adapters._link import LinkDriver, LinkEnd
from mcp_adapters._process import ServerProcess, Sleep, StdioServerParameters, WaitExit
from mcp_adapters._session import ANSWERED, Connection, RequestId
from mcp_adapters._session_base import SessionBase
from mcp_adapters._stdio import claim_stdio
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

# Pause reading when this much arrived but was not consumed yet.
_HIGH_WATER = 256 * 1024


# =========================================================================== streams


class _StreamProtocol(asyncio.Protocol):
    """One side of a transport as a pull-style stream, with flow control both ways."""

    def __init__(self, on_connection: Callable[[_StreamProtocol], None] | None = None) -> None:
        self.transport: asyncio.BaseTransport | None = None
        self._on_connection = on_connection
        self._buffer = bytearray()
        self._eof = False
        self._exc: BaseException | None = None
        self._reading_paused = False
        self._writing_paused = False
        self._read_waiter: asyncio.Future[None] | None = None
        self._drain_waiters: deque[asyncio.Future[None]] = deque()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # ---- asyncio callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if self._on_connection is not None:
            self._on_connection(self)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) > _HIGH_WATER and not self._reading_paused:
            assert isinstance(self.transport, asyncio.ReadTransport)
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake_reader()
        return True  # keep the write side open: queued answers may still go out

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._exc = exc
        self._wake_reader()
        while self._drain_waiters:
            waiter = self._drain_waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
        if not self.lost.done():
            self.lost.set_result(None)

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        while self._drain_waiters:
            waiter = self._drain_waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _wake_reader(self) -> None:
        waiter = self._read_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ---- the stream side

    async def read(self, max_bytes: int) -> bytes:
        while not self._buffer and not self._eof:
            self._read_waiter = asyncio.get_running_loop().create_future()
            try:
                await self._read_waiter
            finally:
                self._read_waiter = None
        if not self._buffer:
            if self._exc is not None:
                raise self._exc
            return b""
        data = bytes(self._buffer[:max_bytes])
        del self._buffer[:max_bytes]
        if self._reading_paused and len(self._buffer) <= _HIGH_WATER // 4:
            assert isinstance(self.transport, asyncio.ReadTransport)
            self._reading_paused = False
            self.transport.resume_reading()
        return data

    async def write(self, data: bytes) -> None:
        transport = self.transport
        if self.lost.done() or transport is None or transport.is_closing():
            raise self._exc or BrokenPipeError("the stream is closed")
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(data)
        while self._writing_paused and not self.lost.done():
            waiter = asyncio.get_running_loop().create_future()
            self._drain_waiters.append(waiter)
            await waiter
        if self.lost.done() and self._exc is not None:
            raise self._exc

    def write_nowait(self, data: bytes) -> bool:
        """Hand `data` to the transport now if nothing says wait; False: use `write`."""
        transport = self.transport
        if self._writing_paused or transport is None or self.lost.done() or transport.is_closing():
            return False
        transport.write(data)  # type: ignore[attr-defined]
        return True

    async def close(self, timeout: float) -> None:
        """Close gracefully (queued bytes still go out), forcefully after `timeout`."""
        transport = self.transport
        if transport is None:
            return
        if not transport.is_closing():
            transport.close()
        try:
            await asyncio.wait_for(asyncio.shield(self.lost), timeout)
        except TimeoutError:
            if isinstance(transport, asyncio.WriteTransport):
                transport.abort()
            await self.lost


class AsyncioStream:
    """A byte stream over one transport (a socket) or two (a pair of pipes)."""

    def __init__(
        self,
        reader: _StreamProtocol,
        writer: _StreamProtocol | None = None,
        *,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        self._reader = reader
        self._writer = writer or reader
        self._close_timeout = close_timeout

    async def receive_some(self, max_bytes: int) -> bytes:
        return await self._reader.read(max_bytes)

    async def send_all(self, data: bytes) -> None:
        await self._writer.write(data)

    def write_nowait(self, data: bytes) -> bool:
        """Write without waiting when the transport takes it at once (it never blocks)."""
        return self._writer.write_nowait(data)

    async def aclose(self) -> None:
        await self._writer.close(self._close_timeout)
        if self._reader is not self._writer:
            await self._reader.close(self._close_timeout)

    def abort(self) -> None:
        """Close at once, dropping whatever the transports still buffer."""
        for side in (self._writer, self._reader):
            transport = side.transport
            if isinstance(transport, asyncio.WriteTransport):
                transport.abort()
            elif transport is not None:
                transport.close()


async def open_pipe_stream(read_fd: int, write_fd: int) -> AsyncioStream:
    """A stream over two pipe (or socket, or terminal) descriptors; it owns and closes them."""
    loop = asyncio.get_running_loop()
    read_file = os.fdopen(read_fd, "rb", buffering=0)
    try:
        write_file = os.fdopen(write_fd, "wb", buffering=0)
    except BaseException:
        read_file.close()
        os.close(write_fd)
        raise
    reader = _StreamProtocol()
    writer = _StreamProtocol()
    try:
        await loop.connect_read_pipe(lambda: reader, read_file)
    except BaseException:
        read_file.close()
        write_file.close()
        raise
    try:
        await loop.connect_write_pipe(lambda: writer, write_file)
    except BaseException:
        write_file.close()
        await reader.close(0)
        raise
    return AsyncioStream(reader, writer)


async def open_tcp_stream(host: str, port: int) -> AsyncioStream:
    """A TCP connection as a stream (asyncio sets TCP_NODELAY itself)."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_connection(_StreamProtocol, host, port)
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    return AsyncioStream(protocol)


# =========================================================================== driver


class Driver:
    """Runs one sans-IO connection over one byte stream (see `mcp_adapters._driver`)."""

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
        self._conn = connection
        self._stream = stream
        self._on_events = on_events
        self._close_timeout = close_timeout
        self._read_size = read_size
        self._loop = asyncio.get_running_loop()
        self.error: TransportError | None = None
        self._input_done = False
        # See `_driver`: end of input waits while `hold_eof()` says answers are due.
        self._hold_eof = hold_eof
        self._eof_held = False
        self._finishing = False
        self._broken = False
        self._woken = False
        self._waiter: asyncio.Future[None] | None = None
        self._writing = False
        self._drained: list[asyncio.Future[None]] = []
        self._writer: asyncio.Task[None] | None = None
        self._give_up: asyncio.TimerHandle | None = None
        # Streams over asyncio transports take a write at once unless paused: then
        # `wake()` writes itself and the writer task is not scheduled at all.
        self._write_nowait: Callable[[bytes], bool] | None = getattr(stream, "write_nowait", None)
        self._carry = b""  # taken from the connection, not yet written
        self._armed: float | None = None  # the deadline the writer sleeps until

    def now(self) -> float:
        return self._loop.time()

    @property
    def busy(self) -> bool:
        """A write is in progress (answers should wait for `drain()`)."""
        return self._writing

    def wake(self) -> None:
        """Output was queued (or a deadline moved): write it, or let the writer look again."""
        if self._write_nowait is not None and not (
            self._writing
            or self._finishing
            or self._broken
            or self._carry
            or self._woken
            or self._eof_held  # the writer task decides when a held end of input is due
        ):
            conn = self._conn
            data = conn.data_to_send()
            if data and not self._write_nowait(data):
                self._carry = data  # paused: the writer task waits for the transport
            elif conn.next_deadline() == self._armed:
                return  # written, and the writer's timer is still right
        self._woken = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def finish(self) -> None:
        """Take no more input; write what is queued (within the close timeout), then close."""
        self._input_done = True
        if not self._finishing:
            self._finishing = True
            # A write may be stuck on a peer that does not read: bound the whole flush.
            self._give_up = self._loop.call_later(self._close_timeout, self._abandon)
        self.wake()

    def _abandon(self) -> None:
        self._broken = True
        if self._writer is not None and not self._writer.done():
            self._writer.cancel()

    async def drain(self) -> None:
        """Back-pressure: wait while a write is in progress."""
        while self._writing and not self._broken:
            waiter = self._loop.create_future()
            self._drained.append(waiter)
            await waiter

    async def run(self) -> None:
        """Read and write until `finish()` (or end of stream); always closes the stream."""
        reader = self._loop.create_task(self._read_loop())
        writer = self._writer = self._loop.create_task(self._write_loop())
        try:
            await asyncio.wait([writer])
        finally:
            if self._give_up is not None:
                self._give_up.cancel()
            reader.cancel()
            writer.cancel()
            await asyncio.wait([reader, writer])
            for task in (reader, writer):
                if not task.cancelled() and task.exception() is not None:
                    logger.error("driver: %s failed", task.get_name(), exc_info=task.exception())
            abort = getattr(self._stream, "abort", None)
            if self._broken and abort is not None:
                abort()  # what is still buffered will never be read
            try:
                await self._stream.aclose()
            except Exception as exc:
                if to_transport_error(exc) is None:
                    raise

    # ---- the two halves

    async def _read_loop(self) -> None:
        while not self._input_done:
            try:
                data = await self._stream.receive_some(self._read_size)
            except Exception as exc:
                error = to_transport_error(exc)
                if error is None:
                    raise
                self.error = self.error or error
                data = b""
            if self._input_done:
                break
            if not data and self._hold_eof is not None and self._hold_eof():
                self._eof_held = True  # the writer feeds it once the answers are out
                self.wake()
                return
            self._feed(data)

    def _feed(self, data: bytes) -> None:
        if not data:
            self._input_done = True
            self._eof_held = False
        try:
            self._on_events(self._conn.receive_data(data, wall_time=time.time()))
        except Exception:
            logger.exception("driver: processing input failed; closing")
            self.error = self.error or TransportError("internal error while processing input")
            self.finish()
        if not data:
            self.finish()
        self.wake()

    async def _write_loop(self) -> None:
        conn = self._conn
        while True:
            if not self._woken:
                deadline = None if self._finishing else conn.next_deadline()
                self._armed = deadline
                waiter = self._waiter = self._loop.create_future()
                timer = (
                    self._loop.call_at(deadline, _set_if_pending, waiter)
                    if deadline is not None
                    else None
                )
                try:
                    await waiter
                finally:
                    self._waiter = None
                    if timer is not None:
                        timer.cancel()
            self._woken = False
            if not self._finishing:
                deadline = conn.next_deadline()
                now = self._loop.time()
                if deadline is not None and deadline <= now:
                    self._on_events(conn.tick(now))
            self._release_eof()
            data = conn.data_to_send()
            if self._carry:
                data, self._carry = self._carry + data, b""
            if data and not self._broken:
                await self._write(data)
                self._woken = True  # look for more before sleeping
            elif self._finishing:
                return

    def _release_eof(self) -> None:
        """Feed a held end of input once nothing is left to answer."""
        if self._eof_held and not self._input_done:
            assert self._hold_eof is not None
            if not self._hold_eof():
                self._feed(b"")

    async def _write(self, data: bytes) -> None:
        self._writing = True
        try:
            await self._stream.send_all(data)
        except Exception as exc:
            error = to_transport_error(exc)
            if error is None:
                raise
            self.error = self.error or error
            self._broken = True
            if not self._input_done:
                self._feed(b"")
        finally:
            self._writing = False
            drained, self._drained = self._drained, []
            for waiter in drained:
                _set_if_pending(waiter)


def _set_if_pending(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _LinkDriver(LinkDriver):
    """An in-process `LinkEnd` on asyncio: deadlines through `call_at`, no tasks."""

    def __init__(self, connection: SansIOConnection, end: LinkEnd, on_events: EventSink) -> None:
        super().__init__(connection, end, on_events)
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._stopped: asyncio.Future[None] = self._loop.create_future()

    def now(self) -> float:
        return self._loop.time()

    def _arm(self, deadline: float | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if deadline is not None:
            self._timer = self._loop.call_at(deadline, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self.expire(self._loop.time())

    def _done(self) -> None:
        _set_if_pending(self._stopped)

    async def run(self) -> None:
        try:
            await self._stopped
        finally:
            self.detach()
            self._arm(None)


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
            driver=Driver,
            link_driver=_LinkDriver,
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
            _set_if_pending(self._done)

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
    loop.add_reader(step.pidfd, _set_if_pending, exited)
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
    (see `mcp_adapters._stdio`). When stdin ends, the requests in flight are
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

    async def _start(self, host: str, port: int) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _StreamProtocol(self._accepted), host, port)
        self.host, self.port = self._server.sockets[0].getsockname()[:2]

    @property
    def url(self) -> str:
        """Where it listens, as `Client` takes it: tcp://host:port."""
        return f"tcp://{authority(self.host, self.port)}"

    def _accepted(self, protocol: _StreamProtocol) -> None:
        sock = protocol.transport.get_extra_info("socket") if protocol.transport else None
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        task = asyncio.get_running_loop().create_task(self._serve(AsyncioStream(protocol)))
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
    await server._start(host, port)
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
