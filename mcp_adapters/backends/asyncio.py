"""The asyncio backend of the driver seam: transports as pull streams, futures, timers.

Native asyncio only (no anyio), so it runs on any asyncio loop. `AsyncioStream`
keeps the write fast path (`write_nowait`: an asyncio transport takes bytes at
once unless it paused us), which lets `Driver.wake()` write without scheduling
the writer task; the link's timer is a bare `call_at`, with no task at all.

Pipe streams (stdio) and TCP streams (the TCP transport, the HTTP and
WebSocket clients, each connection a TCP listener accepts) also have the read
fast path (`push_to`): what the transport reads is handed to the driver from
the transport's own callback, so a request is parsed, dispatched and (a plain
tool) answered in the loop turn that read it, with no reader task to wake in
between: one loop turn per message instead of two. The HTTP server's accepted
sockets take it too (their own stream class in transports/http_server.py, over
`_StreamProtocol`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import ssl
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from mcp_adapters._errors import TransportError, to_transport_error
from mcp_adapters.backends import _eager

logger = logging.getLogger(__name__)

#: How long a closing stream waits for its transports by default.
_CLOSE_TIMEOUT = 2.0

# Pause reading when this much arrived but was not consumed yet.
_HIGH_WATER = 256 * 1024
#: Bytes a pipe or socket transport asks for per read. asyncio's default (256 KiB) is above
#: glibc's mmap threshold: every read of a 100-byte message then cost an mmap, an
#: mremap and a munmap (strace), and a fresh zeroed page. 64 KiB comes from the heap.
PIPE_READ_SIZE = 64 * 1024


def heap_sized_reads(transport: asyncio.BaseTransport) -> None:
    """Make asyncio's own pipe or socket transport read `PIPE_READ_SIZE` at a time.

    Both read `self.max_size` bytes per call (256 KiB by default: an mmap, an mremap
    and a munmap per read of a small message, strace). Another loop's transport
    (uvloop's), or a TLS one, has no such attribute and is left as it is.
    """
    if isinstance(getattr(type(transport), "max_size", None), int):
        with contextlib.suppress(AttributeError, TypeError):
            transport.max_size = PIPE_READ_SIZE  # type: ignore[attr-defined]


#: What a pushing stream hands over: data read (b"" at end of stream), and the
#: error that ended the stream, if one did. Data is handed over as `sink(data)`, the
#: end as `sink(b"", exc)`: the second argument must default to None.
Sink = Callable[..., None]


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
        # A list, not a deque: a deque allocates a 64-slot block up front, and every
        # idle connection (an HTTP server's keep-alive sockets) would carry one.
        self._drain_waiters: list[asyncio.Future[None]] = []
        # Kept: `get_running_loop()` costs a getpid() system call on every use.
        self._loop = asyncio.get_running_loop()
        self.lost: asyncio.Future[None] = self._loop.create_future()
        #: Who gets what is read, as it is read (`push_to`); None: it is buffered.
        self._sink: Sink | None = None
        #: The write transport's own descriptor when we opened it (`write_directly`).
        self._fd: int | None = None
        #: Whether `write_nowait` writes to `_fd` itself: the transport then holds
        #: nothing, and is neither closing nor closed by us.
        self._direct = False

    # ---- asyncio callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if self._on_connection is not None:
            self._on_connection(self)

    def data_received(self, data: bytes) -> None:
        sink = self._sink
        if sink is not None:
            sink(data, None)
            return
        self._buffer += data
        if len(self._buffer) > _HIGH_WATER and not self._reading_paused:
            assert isinstance(self.transport, asyncio.ReadTransport)
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self._eof = True
        self._end_push(None)
        self._wake_reader()
        # Keep the write side open: queued answers may still go out. (TLS has no
        # half-close: asyncio closes it anyway and warns when asked to keep it.)
        transport = self.transport
        return transport is None or transport.get_extra_info("sslcontext") is None

    def connection_lost(self, exc: Exception | None) -> None:
        # The transport closes its descriptor right after this: from now on the number
        # may name another file.
        self._fd = None
        self._direct = False
        self._eof = True
        self._exc = exc
        self._end_push(exc)
        self._wake_reader()
        self._release_drain_waiters()
        if not self.lost.done():
            self.lost.set_result(None)

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._release_drain_waiters()

    def _release_drain_waiters(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _wake_reader(self) -> None:
        waiter = self._read_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _end_push(self, exc: BaseException | None) -> None:
        sink, self._sink = self._sink, None
        if sink is not None:
            del self.data_received  # (the sink's, set by `push_to`)
            sink(b"", exc)  # the end, once: nothing is read after it

    # ---- the stream side

    def push_to(self, sink: Sink) -> None:
        """From now on hand what is read to `sink` in the transport's callback.

        What was buffered before goes first; an end already seen is passed at
        once. `sink(b"", exc)` comes exactly once, at the end of the stream.
        """
        if self._buffer:
            data = bytes(self._buffer)
            self._buffer.clear()
            self._resume_if_paused()
            sink(data, None)
        if self._eof:
            sink(b"", self._exc)
            return
        self._sink = sink
        # The transport calls `protocol.data_received(data)` for every read: from now on
        # that is the sink itself, an instance attribute ahead of the class's method, so
        # no method of ours runs in between (one Python call per read fewer).
        self.data_received = sink  # type: ignore[method-assign]

    def stop_push(self) -> None:
        """Stop handing data over; reading pauses (what is unread stays in the pipe)."""
        if self._sink is None:
            return
        self._sink = None
        del self.data_received  # the class's again: what is read is buffered
        transport = self.transport
        if isinstance(transport, asyncio.ReadTransport) and not transport.is_closing():
            self._reading_paused = True
            transport.pause_reading()

    def pull(self) -> None:
        """After `stop_push`: read into the buffer again, for `read` (a socket's last
        bytes, read and dropped while it closes)."""
        if self._sink is None:
            self._resume_if_paused()

    def _resume_if_paused(self) -> None:
        if self._reading_paused and len(self._buffer) <= _HIGH_WATER // 4:
            assert isinstance(self.transport, asyncio.ReadTransport)
            self._reading_paused = False
            self.transport.resume_reading()

    async def read(self, max_bytes: int) -> bytes:
        while not self._buffer and not self._eof:
            self._read_waiter = self._loop.create_future()
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
        self._resume_if_paused()
        return data

    async def write(self, data: bytes) -> None:
        transport = self.transport
        if self.lost.done() or transport is None or transport.is_closing():
            raise self._exc or BrokenPipeError("the stream is closed")
        assert isinstance(transport, asyncio.WriteTransport)
        self._direct = False  # what follows goes after this, through the transport
        transport.write(data)
        while self._writing_paused and not self.lost.done():
            waiter = self._loop.create_future()
            self._drain_waiters.append(waiter)
            await waiter
        if self.lost.done() and self._exc is not None:
            raise self._exc

    def write_nowait(self, data: bytes) -> bool:
        """Hand `data` to the transport now if nothing says wait; False: use `write`.

        With `write_directly`, while the transport holds nothing, the bytes go to its
        descriptor with one `os.write`: what the transport's `write` does itself when
        its buffer is empty, without its checks and our `is_closing()` around it (two
        Python calls per message, on both sides of stdio). What the descriptor does not
        take (a full pipe, an error) takes the transport's way from there, so a
        partial write, a broken pipe and a closing transport end as they did.
        """
        if self._direct:
            try:
                written = os.write(self._fd, data)  # type: ignore[arg-type]
            except OSError:  # (a full pipe, a broken one: the transport's way says which)
                written = 0
            if written == len(data):
                return True
            self._direct = False
            if written:  # the rest follows what went out, as asyncio's own write does it
                self.transport.write(data[written:])  # type: ignore[union-attr]
                return True
        transport = self.transport
        if self._writing_paused or transport is None or self.lost.done() or transport.is_closing():
            return False
        transport.write(data)  # type: ignore[attr-defined]
        if self._fd is not None and not transport.get_write_buffer_size():  # type: ignore[attr-defined]
            self._direct = True  # nothing held back: the next write may go straight out
        return True

    def write_directly(self, fd: int) -> None:
        """Let `write_nowait` write to `fd`, the write transport's own descriptor (one we
        opened), while the transport holds nothing. Only a non-blocking one: a write
        must never wait. Ends when we close the transport or it is lost."""
        if not os.get_blocking(fd):
            self._fd = fd

    def abort(self) -> None:
        """Close the transport at once, dropping what it still buffers."""
        self._fd = None
        self._direct = False
        transport = self.transport
        if isinstance(transport, asyncio.WriteTransport):
            transport.abort()
        elif transport is not None:
            transport.close()

    async def close(self, timeout: float) -> None:
        """Close gracefully (queued bytes still go out), forcefully after `timeout`."""
        self._fd = None
        self._direct = False
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


#: The protocol half of a stream, for a transport made elsewhere (an accepted socket).
StreamProtocol = _StreamProtocol


class AsyncioStream:
    """A byte stream over one transport (a socket) or two (a pair of pipes)."""

    def __init__(
        self,
        reader: _StreamProtocol,
        writer: _StreamProtocol | None = None,
        *,
        close_timeout: float = _CLOSE_TIMEOUT,
        push: bool = False,
    ) -> None:
        self._reader = reader
        self._writer = writer or reader
        self._close_timeout = close_timeout
        self._push = push
        #: Write without waiting when the transport takes it at once (it never blocks);
        #: False: it paused us, use `send_all`. The writer protocol's own method, bound
        #: here: `Driver.wake()` calls it for every message, with no call of ours between.
        self.write_nowait: Callable[[bytes], bool] = self._writer.write_nowait

    async def receive_some(self, max_bytes: int) -> bytes:
        return await self._reader.read(max_bytes)

    def push_to(self, sink: Sink) -> bool:
        """Hand what is read to `sink` as it is read (see `_StreamProtocol.push_to`);
        False: this stream is read with `receive_some` only."""
        if not self._push:
            return False
        self._reader.push_to(sink)
        return True

    def stop_push(self) -> None:
        self._reader.stop_push()

    async def send_all(self, data: bytes) -> None:
        await self._writer.write(data)

    async def aclose(self) -> None:
        await self._writer.close(self._close_timeout)
        if self._reader is not self._writer:
            await self._reader.close(self._close_timeout)

    def abort(self) -> None:
        """Close at once, dropping whatever the transports still buffer."""
        for side in (self._writer, self._reader):
            side.abort()


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
        transport, _ = await loop.connect_read_pipe(lambda: reader, read_file)
    except BaseException:
        read_file.close()
        write_file.close()
        raise
    heap_sized_reads(transport)
    try:
        await loop.connect_write_pipe(lambda: writer, write_file)
    except BaseException:
        write_file.close()
        await reader.close(0)
        raise
    writer.write_directly(write_fd)  # (the transport made it non-blocking)
    return AsyncioStream(reader, writer, push=True)


async def open_tcp_stream(
    host: str, port: int, *, ssl_context: ssl.SSLContext | None = None
) -> AsyncioStream:
    """A TCP connection as a stream (asyncio sets TCP_NODELAY itself); with
    `ssl_context`, TLS on it, the server's certificate checked against `host`."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_connection(
        _StreamProtocol,
        host,
        port,
        ssl=ssl_context,
        server_hostname=host if ssl_context is not None else None,
    )
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    heap_sized_reads(transport)
    return AsyncioStream(protocol, push=True)


async def listen_tcp(
    host: str, port: int, on_stream: Callable[[AsyncioStream], None]
) -> asyncio.Server:
    """Listen on `host:port`; each accepted connection becomes a stream for `on_stream`."""

    def accepted(protocol: _StreamProtocol) -> None:
        transport = protocol.transport
        sock = transport.get_extra_info("socket") if transport else None
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if transport is not None:
            heap_sized_reads(transport)
        on_stream(AsyncioStream(protocol, push=True))

    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: _StreamProtocol(accepted), host, port)


# =========================================================================== the seam


def set_if_pending(future: asyncio.Future[None]) -> None:
    """Resolve `future` unless it already is (a timer and a wake-up may race)."""
    if not future.done():
        future.set_result(None)


class _Event:
    """A one-shot event on one future (an asyncio.Event carries a deque of its own)."""

    __slots__ = ("future",)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.future: asyncio.Future[None] = loop.create_future()

    def set(self) -> None:
        if not self.future.done():
            self.future.set_result(None)

    def is_set(self) -> bool:
        return self.future.done()

    async def wait(self) -> None:
        # Shielded: one waiter cancelled must not cancel the future the others wait on.
        await asyncio.shield(self.future)


class _Limit:
    """`asyncio.timeout` that reports expiry instead of raising it."""

    __slots__ = ("_deadline", "_timeout", "expired")

    def __init__(self) -> None:
        self.expired = False
        self._deadline: float | None = None
        self._timeout: asyncio.Timeout | None = None

    def move_to(self, deadline: float) -> None:
        self._deadline = deadline
        if self._timeout is not None:
            self._timeout.reschedule(deadline)

    async def __aenter__(self) -> _Limit:
        self._timeout = asyncio.timeout_at(self._deadline)  # a deadline on the loop clock
        await self._timeout.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        timeout, self._timeout = self._timeout, None
        assert timeout is not None
        try:
            await timeout.__aexit__(*exc_info)
            return None
        except TimeoutError:
            if not timeout.expired():
                raise
            self.expired = True
            return True


class _TaskGroup:
    """Tasks that end with the block; a failure is logged, never lost or re-raised."""

    __slots__ = ("_loop", "_tasks")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._tasks: list[asyncio.Task[None]] = []

    def start_soon(self, fn: Callable[[], Awaitable[None]]) -> None:
        self._tasks.append(self._loop.create_task(fn()))  # type: ignore[arg-type]

    def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def __aenter__(self) -> _TaskGroup:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        tasks = self._tasks
        if not tasks:
            return
        if exc_info[0] is not None:
            self.cancel()
        await asyncio.wait(tasks)
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                logger.error("driver: %s failed", task.get_name(), exc_info=task.exception())


class _Timer:
    """A deadline callback on `call_at`: no task, nothing scheduled while disarmed.

    `serve()` waits for `close()` for an owner that keeps a task for it; an owner
    with no task of its own (an in-process link session) asks `when_closed` instead.
    Both are made only when used: a future is about 150 bytes of every idle session.
    """

    __slots__ = ("_closed", "_fire", "_handle", "_loop", "_on_close", "_stopped")

    def __init__(self, loop: asyncio.AbstractEventLoop, fire: Callable[[float], None]) -> None:
        self._loop = loop
        self._fire = fire
        self._handle: asyncio.TimerHandle | None = None
        self._closed = False
        self._stopped: asyncio.Future[None] | None = None
        self._on_close: Callable[[], None] | None = None

    def arm(self, deadline: float | None) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if deadline is not None:
            self._handle = self._loop.call_at(deadline, self._fired)

    def _fired(self) -> None:
        self._handle = None
        self._fire(self._loop.time())

    def close(self) -> None:
        self.arm(None)
        if self._closed:
            return
        self._closed = True
        if self._stopped is not None:
            set_if_pending(self._stopped)
        callback, self._on_close = self._on_close, None
        if callback is not None:
            # On the next turn, as the task waiting in `serve()` would resume: the
            # close may come from deep inside a delivery.
            self._loop.call_soon(callback)

    def when_closed(self, callback: Callable[[], None]) -> None:
        """Call `callback` (once, on a later loop turn) after `close()`; instead of `serve()`."""
        if self._closed:
            self._loop.call_soon(callback)
        else:
            self._on_close = callback

    async def serve(self) -> None:
        if self._closed:
            return
        if self._stopped is None:
            self._stopped = self._loop.create_future()
        await self._stopped


async def finish_uncancelled(task: asyncio.Future[Any]) -> None:
    """Wait for `task` even through cancellation (it is bounded); re-raise that afterwards.

    A cancellation while waiting is passed on to `task`, so that it ends sooner.
    """
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


_BASE_CREATE_FUTURE = asyncio.BaseEventLoop.create_future
_Future = asyncio.Future


class _Waiter:
    """A request's outcome into a future, unless the caller stopped waiting.

    `wait()` hands out the future itself: awaiting it costs no coroutine of ours.
    The future is made by the first `wait()`: an outcome that comes before it (every
    in-process call of a plain tool is answered inside the wake that sent it) is kept
    in `early`, where `Session.request` takes it with no future made, set, awaited and
    read. That changes nothing a caller sees: awaiting a done future never suspends
    on asyncio either, so neither way is a checkpoint.
    """

    __slots__ = ("early", "future", "loop", "own")

    def __init__(self, loop: asyncio.AbstractEventLoop, own: bool = False) -> None:
        # (`AsyncioBackend.waiter` makes its waiters without this frame: keep the two alike.)
        self.loop = loop
        #: The loop's `create_future` is asyncio's own: `wait()` makes the future itself.
        self.own = own
        self.future: asyncio.Future[Any] | None = None
        #: (True, result) or (False, exception): the outcome, when it came before `wait()`.
        self.early: tuple[bool, Any] | None = None

    def set_result(self, value: Any) -> None:
        future = self.future
        if future is None:
            if self.early is None:
                self.early = (True, value)
        elif not future.done():
            future.set_result(value)

    def set_exception(self, exc: BaseException) -> None:
        future = self.future
        if future is None:
            if self.early is None:
                self.early = (False, exc)
        elif not future.done():
            future.set_exception(exc)

    def done(self) -> bool:
        """The outcome is in (`wait()` will not suspend)."""
        future = self.future
        return self.early is not None if future is None else future.done()

    def wait(self) -> asyncio.Future[Any]:
        future = self.future
        if future is None:
            # On asyncio's own loop without `loop.create_future`'s frame (one Python call
            # fewer per request a caller waits for); another loop (uvloop), or one whose
            # `create_future` was replaced, makes its own.
            loop = self.loop
            future = self.future = _Future(loop=loop) if self.own else loop.create_future()
            early = self.early
            if early is not None:
                if early[0]:
                    future.set_result(early[1])
                else:
                    future.set_exception(early[1])
        return future


_new_waiter = object.__new__


class _Tasks:
    """A session's tasks on the loop: a set of its own (no nursery to enter or leave)."""

    __slots__ = ("_eager", "_loop", "_main", "_tasks")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        # The loop's eager `start`, looked up once per session, not per task.
        self._eager = _eager.starter(loop)
        self._main: asyncio.Task[None] | None = None
        # Made by the first `start`: an empty set is 216 bytes, and a session whose
        # requests are all answered in place (or that serves none) never starts one.
        self._tasks: set[asyncio.Task[None]] | None = None

    def start_main(self, fn: Callable[[], Awaitable[None]]) -> None:
        self._main = self._loop.create_task(fn())  # type: ignore[arg-type]

    def start(self, fn: Callable[..., Awaitable[None]], *args: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = self._loop.create_task(fn(*args))  # type: ignore[arg-type]
        return self._keep(task)

    def _keep(self, task: asyncio.Task[None]) -> asyncio.Task[None]:
        """Hold `task` until it ends, so that `stop` can cancel it."""
        tasks = self._tasks
        if tasks is None:
            tasks = self._tasks = set()
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    def start_eager(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None] | None:
        """`start` of `coro`, but the task's first step runs now, in the caller's stack (as
        the task: see `backends._eager`); None when that step finished it (nothing to
        cancel). The caller makes `coro` (until session 21 it passed a bound method and its
        arguments, called here through an argument tuple: a bound method made and a call
        through `*args` per task).

        The task is named `name`, a string the caller made once: on 3.11 a task left to
        name itself formats "Task-<n>" in its constructor, about 1,400 instructions of
        every coroutine handler's call, and reading `fn.__qualname__` off a bound method
        per task (until session 21) was about 290.
        """
        task, finished = self._eager(coro, name)
        if finished:
            return None
        return self._keep(task)

    async def stop(self) -> None:
        tasks = list(self._tasks or ())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def end_without_main(self, then: Callable[[], None]) -> None:
        """For a session with no main task (see `_Timer.when_closed`): what the end of a
        main task does. What is left is cancelled; `then()` runs once all of it has ended:
        now if nothing was left, else in a task made for that wait (which `join_main`
        then waits for), so the task exists only while something is pending."""
        tasks = list(self._tasks or ())
        if not tasks:
            then()
            return
        for task in tasks:
            task.cancel()
        self._main = self._loop.create_task(_wait_then(tasks, then))

    async def join_main(self) -> None:
        if self._main is not None:
            await finish_uncancelled(self._main)

    async def __aenter__(self) -> _Tasks:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        return None  # the main task awaited the others in `stop()`


async def _wait_then(tasks: list[asyncio.Task[None]], then: Callable[[], None]) -> None:
    await asyncio.wait(tasks)
    then()


class _Listener:
    """An `asyncio.Server` whose connections run as tasks, awaited on leaving."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        host: str,
        port: int,
        handle: Callable[[AsyncioStream], Awaitable[None]],
    ) -> None:
        self._loop = loop
        self._where = (host, port)
        self._handle = handle
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.address: tuple[str, int] = ("", 0)

    def _accepted(self, stream: AsyncioStream) -> None:
        task: asyncio.Task[None] = self._loop.create_task(self._handle(stream))  # type: ignore[arg-type]
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    def stop_accepting(self) -> None:
        if self._server is not None:
            self._server.close()

    async def __aenter__(self) -> _Listener:
        self._server = await listen_tcp(*self._where, self._accepted)
        self.address = self._server.sockets[0].getsockname()[:2]
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.stop_accepting()
        if self._connections:
            await asyncio.wait(list(self._connections))
        if self._server is not None:
            await self._server.wait_closed()


class AsyncioBackend:
    """The seam on the running asyncio loop (one per loop; see `backend()`)."""

    errors: Mapping[type[BaseException], type[TransportError]] = {}
    cancelled: type[BaseException] = asyncio.CancelledError

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        # The loop's `create_future` is asyncio's own (`Future(loop=self)`), neither its
        # class's nor one set on the instance: a waiter's `wait()` then makes the future
        # itself.
        self._own_futures = getattr(loop.create_future, "__func__", None) is _BASE_CREATE_FUTURE

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop this seam is for."""
        return self._loop

    def now(self) -> float:
        return self._loop.time()

    def event(self) -> _Event:
        return _Event(self._loop)

    async def wait(self, event: Any, deadline: float | None) -> None:
        # The one waiter of the writer's own event: awaited bare, no shield needed.
        future: asyncio.Future[None] = event.future
        if future.done():
            return
        timer = (
            self._loop.call_at(deadline, set_if_pending, future) if deadline is not None else None
        )
        try:
            await future
        finally:
            if timer is not None:
                timer.cancel()

    def limit(self) -> _Limit:
        return _Limit()

    def task_group(self) -> _TaskGroup:
        return _TaskGroup(self._loop)

    def timer(self, fire: Callable[[float], None]) -> _Timer:
        return _Timer(self._loop, fire)

    # ---- what a session and its transports add

    def waiter(self) -> _Waiter:
        # `_Waiter(loop, own)`, without its `__init__` frame: this runs once per request a
        # client sends. The future is made by the first `wait()` (see `_Waiter`).
        waiter = _new_waiter(_Waiter)
        waiter.loop = self._loop
        waiter.own = self._own_futures
        waiter.future = None
        waiter.early = None
        return waiter

    def tasks(self) -> _Tasks:
        return _Tasks(self._loop)

    async def shielded(self, fn: Callable[[], Awaitable[None]]) -> None:
        await finish_uncancelled(asyncio.ensure_future(fn()))

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def wait_readable(self, fd: int, timeout: float) -> None:
        readable = self._loop.create_future()
        self._loop.add_reader(fd, set_if_pending, readable)
        try:
            await asyncio.wait_for(readable, timeout)
        except TimeoutError:
            pass
        finally:
            self._loop.remove_reader(fd)

    async def open_pipe_stream(self, read_fd: int, write_fd: int) -> AsyncioStream:
        return await open_pipe_stream(read_fd, write_fd)

    async def open_tcp_stream(
        self, host: str, port: int, *, ssl_context: ssl.SSLContext | None = None
    ) -> AsyncioStream:
        return await open_tcp_stream(host, port, ssl_context=ssl_context)

    def listen_tcp(
        self, host: str, port: int, handle: Callable[[Any], Awaitable[None]]
    ) -> _Listener:
        return _Listener(self._loop, host, port, handle)

    async def close_stream(self, stream: Any, *, abort: bool) -> None:
        stop = getattr(stream, "abort", None)
        if abort and stop is not None:
            stop()  # what is still buffered will never be read
        try:
            await stream.aclose()
        except Exception as exc:
            if to_transport_error(exc) is None:
                raise


_latest: weakref.ref[AsyncioBackend] | None = None


def backend() -> AsyncioBackend:
    """The seam for the running loop.

    The seam holds nothing but its loop, so sessions on one loop share one: each
    session made its own before, about 100 bytes of every idle session. The last
    one made is remembered weakly (a program runs one loop at a time, almost
    always), so a finished loop is not kept alive by it.
    """
    global _latest
    loop = asyncio.get_running_loop()
    latest = _latest() if _latest is not None else None
    if latest is None or latest.loop is not loop:
        latest = AsyncioBackend(loop)
        _latest = weakref.ref(latest)
    return latest


__all__ = [
    "AsyncioBackend",
    "AsyncioStream",
    "Sink",
    "StreamProtocol",
    "backend",
    "finish_uncancelled",
    "listen_tcp",
    "open_pipe_stream",
    "open_tcp_stream",
    "set_if_pending",
    "PIPE_READ_SIZE",
]
