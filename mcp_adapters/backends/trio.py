"""The trio backend of the driver seam: trio streams, events, cancel scopes, nurseries.

trio streams fit `ByteStream` as they are; what this adds is how the loop waits
(`trio.Event` under `move_on_at`), its close-timeout bound (a `CancelScope` whose
deadline moves), its tasks (a nursery), and the link's timer (a task sleeping to
the armed deadline: trio has no callbacks without a task).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import socket
import ssl
import stat
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import trio

from mcp_adapters._errors import ConnectionClosedError, TransportError
from mcp_adapters.backends._scoped import EventWaiter, ScopeLimit, TaskTimer

#: trio's own stream failures, as ours.
ERRORS: Mapping[type[BaseException], type[TransportError]] = {
    trio.BrokenResourceError: ConnectionClosedError,
    trio.ClosedResourceError: ConnectionClosedError,
}


# =========================================================================== streams

#: Bytes a pipe read asks for when the caller names no size (trio's own default).
_RECEIVE_SIZE = 65536


class PipeStream(trio.abc.Stream):
    """trio's two `FdStream`s of a pipe pair, with the driver's write fast path.

    `write_nowait` lets `Driver.wake()` write an answer from where it was made
    (the reader task, on a plain tool) instead of waking the writer task for
    it: one loop turn less per message. It writes only what a pipe takes whole
    or not at all (at most `PIPE_BUF` bytes: POSIX makes such writes atomic);
    anything else, or a pipe that is full, goes through `send_all` as before.
    """

    def __init__(self, send: trio.lowlevel.FdStream, receive: trio.lowlevel.FdStream) -> None:
        self._stapled = trio.StapledStream(send, receive)
        self._send = send
        self._receive = receive
        self._drained = False  # the last read emptied the pipe: wait before the next
        try:
            self._atomic = stat.S_ISFIFO(os.fstat(send.fileno()).st_mode)
        except OSError:
            self._atomic = False

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """`FdStream.receive_some`, but after a short read it waits before reading.

        trio's own reads at once and, the pipe being empty, fails with EAGAIN and
        then waits: on a stdio server answering one request at a time that is a
        system call and a Python exception per message, and an extra loop turn (its
        checkpoint). A read that returned less than asked for emptied the pipe, so
        the next one waits for readability first (itself a checkpoint); after a full
        read, more is likely there and it reads at once, as trio's does.
        """
        size = max_bytes or _RECEIVE_SIZE
        fd = self._receive.fileno()  # -1 once closed
        if fd < 0:
            raise trio.ClosedResourceError("file was already closed")
        if self._drained:
            await trio.lowlevel.wait_readable(fd)
        else:
            await trio.lowlevel.checkpoint()
        while True:
            try:
                data = os.read(fd, size)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(fd)
            except OSError as exc:
                if exc.errno == errno.EBADF:
                    raise trio.ClosedResourceError("file was already closed") from None
                raise trio.BrokenResourceError from exc
            else:
                self._drained = 0 < len(data) < size
                return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._send.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._send.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self._stapled.aclose()

    def write_nowait(self, data: bytes) -> bool:
        """Write `data` now if the pipe takes all of it at once; False: use `send_all`."""
        fd = self._send.fileno()  # -1 once closed: never a number reused since
        if not self._atomic or fd < 0 or len(data) > select.PIPE_BUF:
            return False
        try:
            os.write(fd, data)  # all of it or nothing (EAGAIN): a pipe, at most PIPE_BUF
        except OSError:
            return False  # full, or broken: `send_all` waits, or reports it
        return True


def open_pipe_stream(read_fd: int, write_fd: int) -> PipeStream:
    """A stream over two pipe (or socket, or terminal) descriptors; it owns and closes them."""
    try:
        receive = trio.lowlevel.FdStream(read_fd)
    except BaseException:
        # The stream owns both descriptors from the call on: if wrapping the first fails,
        # both are closed here, or the caller would leak the one it can no longer name.
        os.close(read_fd)
        os.close(write_fd)
        raise
    return PipeStream(trio.lowlevel.FdStream(write_fd), receive)


async def open_tcp_stream(
    host: str, port: int, *, ssl_context: ssl.SSLContext | None = None
) -> trio.SocketStream | trio.SSLStream[trio.SocketStream]:
    """A TCP connection as a stream (trio sets TCP_NODELAY itself); with `ssl_context`,
    TLS on it, the server's certificate checked against `host` (HTTPS-style: a peer
    that closes without TLS's close_notify is no error, as most servers do)."""
    stream = await trio.open_tcp_stream(host, port)
    # Keep-alive probes notice a peer that vanished without a FIN (a laptop lid, a dropped
    # NAT mapping), which would otherwise hold the connection open until the OS gives up.
    stream.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    if ssl_context is None:
        return stream
    tls = trio.SSLStream(stream, ssl_context, server_hostname=host, https_compatible=True)
    try:
        await tls.do_handshake()
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return tls


# =========================================================================== the seam


class _TaskGroup:
    """A nursery: leaving waits for the tasks, a failure propagates as trio's does."""

    __slots__ = ("_manager", "_nursery")

    def __init__(self) -> None:
        self._manager = trio.open_nursery()
        self._nursery: trio.Nursery | None = None

    def start_soon(self, fn: Callable[[], Awaitable[None]]) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(fn)

    def cancel(self) -> None:
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()

    async def __aenter__(self) -> _TaskGroup:
        self._nursery = await self._manager.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._manager.__aexit__(*exc_info)


def _itself(coro: Coroutine[Any, Any, None]) -> Coroutine[Any, Any, None]:
    """`coro`, for `start(fn, *args)`'s `await fn(*args)` (`_Tasks.start_eager`)."""
    return coro


class _Tasks:
    """A session's nursery; each handler runs under a cancel scope of its own."""

    __slots__ = ("_main_done", "_manager", "_nursery", "_scopes")

    def __init__(self) -> None:
        self._manager = trio.open_nursery()
        self._nursery: trio.Nursery | None = None
        self._scopes: set[trio.CancelScope] = set()
        self._main_done = trio.Event()

    def _running(self) -> trio.Nursery:
        if self._nursery is None:
            raise RuntimeError("the session is not running")
        return self._nursery

    def start_main(self, fn: Callable[[], Awaitable[None]]) -> None:
        """The main task's end is recorded so `join_main` can wait for it alone: the handlers
        may still be running, and shutting the session down must not wait on them first.
        """

        async def main() -> None:
            try:
                await fn()
            finally:
                self._main_done.set()

        self._running().start_soon(main)

    def start(self, fn: Callable[..., Awaitable[None]], *args: Any) -> trio.CancelScope:
        """A cancel scope per handler, so one request can be cancelled (the peer's
        `notifications/cancelled`) without touching the other handlers of the session.
        """
        scope = trio.CancelScope()
        scopes = self._scopes

        async def run() -> None:
            try:
                with scope:
                    await fn(*args)
            finally:
                scopes.discard(scope)

        self._running().start_soon(run)
        scopes.add(scope)
        return scope

    def start_eager(self, coro: Coroutine[Any, Any, None], name: str) -> trio.CancelScope:
        """`start`: trio has no eager tasks (a task's first step always waits for the
        scheduler's next batch, and there is no sound way to step a coroutine as a task
        that does not run yet), so a trio handler always starts on the next batch.
        The task awaits `coro` itself (`_itself` hands it over: a plain call, not one
        more coroutine around it); a session that is not running never will, so `coro`
        is closed then (no "never awaited" warning for it).
        """
        try:
            return self.start(_itself, coro)
        except BaseException:
            coro.close()
            raise

    async def stop(self) -> None:
        """Cancelling, not waiting: the nursery's exit does the waiting, and it runs exactly
        once however the session ends.
        """
        for scope in list(self._scopes):
            scope.cancel()  # the nursery waits for them when the session is left

    async def join_main(self) -> None:
        """Shielded: a session closing inside a cancelled scope must still let its main task
        (the reader and writer) finish flushing.
        """
        if self._nursery is not None:
            with trio.CancelScope(shield=True):
                await self._main_done.wait()

    async def __aenter__(self) -> _Tasks:
        self._nursery = await self._manager.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._manager.__aexit__(*exc_info)


class _Listener:
    """`trio.serve_listeners` in a nursery; the connections run in the same nursery."""

    def __init__(self, host: str, port: int, handle: Callable[[Any], Awaitable[None]]) -> None:
        self._where = (host, port)
        self._handle = handle
        self._stack = contextlib.AsyncExitStack()
        self._accepting = trio.CancelScope()
        self.address: tuple[str, int] = ("", 0)

    async def _serve(self, stream: trio.SocketStream) -> None:
        stream.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        await self._handle(stream)

    async def _accept(
        self, listeners: list[trio.SocketListener], connections: trio.Nursery
    ) -> None:
        """Accepted connections run in the listener's own nursery, so leaving the listener ends
        them all: no connection outlives the server that accepted it.
        """
        with self._accepting:
            await trio.serve_listeners(self._serve, listeners, handler_nursery=connections)

    def stop_accepting(self) -> None:
        self._accepting.cancel()

    async def __aenter__(self) -> _Listener:
        host, port = self._where
        listeners = await trio.open_tcp_listeners(port, host=host)
        # The first listener's address: with port 0 the OS picks the port, and tests and
        # callers need to learn which.
        self.address = listeners[0].socket.getsockname()[:2]
        nursery = await self._stack.enter_async_context(trio.open_nursery())
        nursery.start_soon(self._accept, listeners, nursery)
        self._nursery = nursery
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.stop_accepting()
        self._nursery.cancel_scope.cancel()  # the sessions were closed: end what is left
        await self._stack.aclose()


class TrioBackend:
    """The seam on trio (stateless: one instance serves every run)."""

    errors = ERRORS
    cancelled: type[BaseException] = trio.Cancelled

    def now(self) -> float:
        """trio's clock, which is what its deadlines (`move_on_at`) are measured in: the
        driver's timers and the waits must use one clock.
        """
        return trio.current_time()

    def event(self) -> trio.Event:
        return trio.Event()

    async def wait(self, event: Any, deadline: float | None) -> None:
        """A deadline in the past returns at once and None waits for ever: the driver passes
        whatever `next_deadline()` said without special cases.
        """
        with trio.move_on_at(math.inf if deadline is None else deadline):
            await event.wait()

    def limit(self) -> ScopeLimit:
        return ScopeLimit(trio.CancelScope())

    def task_group(self) -> _TaskGroup:
        return _TaskGroup()

    def timer(self, fire: Callable[[float], None]) -> TaskTimer:
        """trio has no callbacks without a task, so the deadline timer is a task sleeping to
        the armed deadline (`TaskTimer`, shared with the anyio backend).
        """
        return TaskTimer(
            fire, event=trio.Event, move_on_at=trio.move_on_at, clock=trio.current_time
        )

    # ---- what a session and its transports add

    def waiter(self) -> EventWaiter:
        return EventWaiter(trio.Event())

    def tasks(self) -> _Tasks:
        return _Tasks()

    async def shielded(self, fn: Callable[[], Awaitable[None]]) -> None:
        """For clean-up that must finish even when the caller is being cancelled (closing a
        session, settling its requests).
        """
        with trio.CancelScope(shield=True):
            await fn()

    async def sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)

    async def wait_readable(self, fd: int, timeout: float) -> None:
        with trio.move_on_after(timeout):
            await trio.lowlevel.wait_readable(fd)

    async def open_pipe_stream(self, read_fd: int, write_fd: int) -> trio.abc.Stream:
        return open_pipe_stream(read_fd, write_fd)

    async def open_tcp_stream(
        self, host: str, port: int, *, ssl_context: ssl.SSLContext | None = None
    ) -> trio.abc.Stream:
        return await open_tcp_stream(host, port, ssl_context=ssl_context)

    def listen_tcp(
        self, host: str, port: int, handle: Callable[[Any], Awaitable[None]]
    ) -> _Listener:
        return _Listener(host, port, handle)

    async def close_stream(self, stream: Any, *, abort: bool) -> None:
        # trio closes forcefully either way: what a stream still buffers is the kernel's.
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)


BACKEND = TrioBackend()


__all__ = ["BACKEND", "ERRORS", "PipeStream", "TrioBackend", "open_pipe_stream", "open_tcp_stream"]
