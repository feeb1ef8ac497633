"""The blocking backend: `selectors` and descriptors, no event loop; it steps `DriverCore`.

There is no loop to hand the async `Driver`, so this backend's `Driver` steps the
same sans-IO `DriverCore` itself: `pump()` (what needs no waiting) and `poll()`
(wait for a descriptor, a wake-up or the next deadline), called by whichever
thread drives the session (see `mcp_adapters.sockets`).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import threading
import time
from collections.abc import Callable

from mcp_adapters._driver import (
    CLOSE_TIMEOUT,
    CONNECT_TIMEOUT,
    READ_SIZE,
    DriverCore,
    EventSink,
    SansIOConnection,
)
from mcp_adapters._errors import TransportError, to_transport_error

# =========================================================================== streams


class FdStream:
    """Two descriptors (or one socket), non-blocking while we own them, closed by `close()`."""

    def __init__(self, read_fd: int, write_fd: int, *, sock: socket.socket | None = None) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self._sock = sock
        self._blocking = {fd: os.get_blocking(fd) for fd in {read_fd, write_fd}}
        for fd in self._blocking:
            os.set_blocking(fd, False)
        self._closed = False

    @classmethod
    def from_socket(cls, sock: socket.socket) -> FdStream:
        return cls(sock.fileno(), sock.fileno(), sock=sock)

    def read(self, max_bytes: int) -> bytes | None:
        """Up to `max_bytes`; b"" at end of stream; None when nothing is there yet."""
        try:
            return os.read(self.read_fd, max_bytes)
        except (BlockingIOError, InterruptedError):
            return None

    def write(self, data: bytes | bytearray) -> int:
        """How many bytes the descriptor took (0 when it would block)."""
        try:
            return os.write(self.write_fd, data)
        except (BlockingIOError, InterruptedError):
            return 0

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd, was_blocking in self._blocking.items():
            with contextlib.suppress(OSError):
                os.set_blocking(fd, was_blocking)
        if self._sock is not None:
            self._sock.close()
        else:
            for fd in self._blocking:
                with contextlib.suppress(OSError):
                    os.close(fd)


def open_tcp_stream(host: str, port: int, timeout: float | None = CONNECT_TIMEOUT) -> FdStream:
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        error = to_transport_error(exc)
        assert error is not None
        raise error from exc
    tune_socket(sock)
    return FdStream.from_socket(sock)


def tune_socket(sock: socket.socket) -> None:
    """No Nagle delay, keep-alive on, non-blocking: how every socket here is used."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    sock.setblocking(False)


# =========================================================================== driver


class Driver:
    """One sans-IO connection over one `FdStream`, stepped by its caller.

    `pump()` does what needs no waiting (due deadlines, writing what the
    descriptor accepts); `poll(timeout)` waits for input, writability, a wake-up
    or the next deadline. Only the driving thread calls these; `wake()` may be
    called from any thread. The bookkeeping is the async loop's own `DriverCore`.
    """

    def __init__(
        self,
        connection: SansIOConnection,
        stream: FdStream,
        on_events: EventSink,
        *,
        close_timeout: float = CLOSE_TIMEOUT,
        read_size: int = READ_SIZE,
        hold_eof: Callable[[], bool] | None = None,
    ) -> None:
        self.core = DriverCore(
            connection, on_events, hold_eof=hold_eof, on_finish=self._start_close_timeout
        )
        self._conn = connection
        self._stream = stream
        self._close_timeout = close_timeout
        self._read_size = read_size
        self.finished = threading.Event()
        self._out = bytearray()
        self._finish_by = 0.0
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._wake_lock = threading.Lock()
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._interest: dict[int, int] = {}

    @property
    def error(self) -> TransportError | None:
        """The transport failure that ended (or is ending) the stream, if any."""
        return self.core.error

    def now(self) -> float:
        return time.monotonic()

    def wake(self) -> None:
        """Interrupt a `poll()` in progress (thread-safe)."""
        with self._wake_lock:
            if not self.finished.is_set():
                with contextlib.suppress(OSError):
                    self._wake_w.send(b"\0")

    def finish(self) -> None:
        """Take no more input; write what is queued (within the close timeout), then close."""
        self.core.finish()

    def _start_close_timeout(self) -> None:
        self._finish_by = time.monotonic() + self._close_timeout

    @property
    def pending_output(self) -> bool:
        return bool(self._out)

    def pump(self) -> None:
        if self.finished.is_set():
            return
        core = self.core
        now = time.monotonic()
        core.due(now)
        while not core.broken:
            if not self._out:
                # Keep at most one chunk out here; the rest stays in the bounded core buffer.
                self._out += core.take_output()
            if not self._out or not self._write():
                break
        if core.broken:
            self._out.clear()
            core.take_output()  # dropped: nothing more goes out
        if core.finishing and (not self._out or now >= self._finish_by):
            self._close()

    def poll(self, timeout: float | None) -> None:
        if self.finished.is_set():
            return
        core = self.core
        deadline = self._finish_by if core.finishing else self._conn.next_deadline()
        if deadline is not None:
            remaining = max(0.0, deadline - time.monotonic())
            timeout = remaining if timeout is None else min(timeout, remaining)
        self._update_interest()
        for key, mask in self._selector.select(timeout):
            if key.fileobj is self._wake_r:
                with contextlib.suppress(OSError):
                    while self._wake_r.recv(4096):
                        pass
                continue
            if mask & selectors.EVENT_READ and core.reading:
                self._read()
            if mask & selectors.EVENT_WRITE and self._out and not core.broken:
                self._write()

    # ---- internals

    def _update_interest(self) -> None:
        want: dict[int, int] = {}
        if self.core.reading:
            want[self._stream.read_fd] = selectors.EVENT_READ
        if self._out and not self.core.broken:
            fd = self._stream.write_fd
            want[fd] = want.get(fd, 0) | selectors.EVENT_WRITE
        for fd in set(self._interest) | set(want):
            old, new = self._interest.get(fd, 0), want.get(fd, 0)
            if old == new:
                continue
            if not old:
                self._selector.register(fd, new)
            elif not new:
                self._selector.unregister(fd)
            else:
                self._selector.modify(fd, new)
        self._interest = want

    def _read(self) -> None:
        try:
            data = self._stream.read(self._read_size)
        except OSError as exc:
            self.core.read_failed(_translated(exc))
            data = b""
        if data is not None:
            self.core.received(data)

    def _write(self) -> bool:
        """Write from the chunk; True when all of it went out."""
        try:
            sent = self._stream.write(self._out)
        except OSError as exc:
            self.core.write_failed(_translated(exc))
            return False
        del self._out[:sent]
        return not self._out

    def _close(self) -> None:
        with self._wake_lock:
            self._selector.close()
            self._wake_r.close()
            self._wake_w.close()
            self._stream.close()
            self.finished.set()


def _translated(exc: OSError) -> TransportError:
    error = to_transport_error(exc)
    assert error is not None  # every OSError has a translation
    return error


__all__ = ["Driver", "FdStream", "open_tcp_stream", "tune_socket"]
