"""The blocking backend: `selectors` and descriptors, no event loop; it steps `DriverCore`.

There is no loop to hand the async `Driver`, so this backend's `Driver` steps the
same sans-IO `DriverCore` itself: `pump()` (what needs no waiting) and `poll()`
(wait for a descriptor, a wake-up or the next deadline), called by whichever
thread drives the session (see `mcp_adapters.sockets`).

`BlockingBackend` is the rest of this backend, what the transports' blocking
faces take: opening pipes and TCP, listening (`Listener`: one thread per
accepted connection), sleeping and waiting for a descriptor.
"""

from __future__ import annotations

import contextlib
import os
import select
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
from mcp_adapters._errors import TransportError, os_error

#: How long closing waits for each thread that ignores cancellation (a handler's,
#: a TCP connection's).
HANDLER_GRACE = 5.0

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
        raise os_error(exc) from exc
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
            self.core.read_failed(os_error(exc))
            data = b""
        if data is not None:
            self.core.received(data)

    def _write(self) -> bool:
        """Write from the chunk; True when all of it went out."""
        try:
            sent = self._stream.write(self._out)
        except OSError as exc:
            self.core.write_failed(os_error(exc))
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


# =========================================================================== listening


class Listener:
    """Listening TCP: accepts on the thread in `serve_forever`; each accepted
    connection's stream is served by `handle(stream)` on a thread of its own.

    Bound when made, so the port is known before anything is accepted. `close()`
    stops accepting (if `stop_accepting` did not already), waits up to `grace`
    for each connection's thread (they are expected to have been told to end),
    and closes the listening socket.
    """

    def __init__(self, host: str, port: int, handle: Callable[[FdStream], None]) -> None:
        self._sock = socket.create_server((host, port))
        self._sock.setblocking(False)
        name = self._sock.getsockname()
        self.address: tuple[str, int] = (name[0], name[1])
        self._handle = handle
        self._stop_r, self._stop_w = socket.socketpair()
        self._lock = threading.Lock()
        self._stopping = False
        self._threads: set[threading.Thread] = set()
        # Held while accepting: `close()` from another thread waits for the accept
        # loop to see the stop byte before the sockets it selects on are closed.
        self._accepting = threading.Lock()

    def serve_forever(self) -> None:
        """Accept connections until `stop_accepting()`."""
        with self._accepting, selectors.DefaultSelector() as selector:
            selector.register(self._sock, selectors.EVENT_READ)
            selector.register(self._stop_r, selectors.EVENT_READ)
            while not self._stopping:
                for key, _ in selector.select():
                    if key.fileobj is self._stop_r:
                        return
                    try:
                        sock, _ = self._sock.accept()
                    except (BlockingIOError, InterruptedError):
                        continue
                    self._start(sock)

    def _start(self, sock: socket.socket) -> None:
        tune_socket(sock)
        stream = FdStream.from_socket(sock)
        thread = threading.Thread(
            target=self._serve, args=(stream,), name="mcp-tcp-connection", daemon=True
        )
        with self._lock:
            if self._stopping:
                stream.close()
                return
            self._threads.add(thread)
        thread.start()

    def _serve(self, stream: FdStream) -> None:
        try:
            self._handle(stream)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def stop_accepting(self) -> None:
        """Make `serve_forever` return; connections accepted later are closed at once."""
        with self._lock:
            self._stopping = True
        with contextlib.suppress(OSError):
            self._stop_w.send(b"x")

    def close(self, grace: float) -> None:
        self.stop_accepting()
        with self._accepting, self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(grace)
        self._sock.close()
        self._stop_r.close()
        self._stop_w.close()


# =========================================================================== the backend


class BlockingBackend:
    """What the transports' blocking faces (`transports.stdio`, `.tcp`) need, on this thread.

    The blocking twin of `SessionBackend`'s openers and waits: no loop, so every
    call simply blocks the thread that makes it.
    """

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def wait_readable(self, fd: int, timeout: float) -> None:
        """Until `fd` is readable or `timeout` seconds passed."""
        select.select([fd], [], [], timeout)

    def open_pipe_stream(self, read_fd: int, write_fd: int) -> FdStream:
        return FdStream(read_fd, write_fd)

    def open_tcp_stream(self, host: str, port: int, timeout: float | None) -> FdStream:
        return open_tcp_stream(host, port, timeout)

    def listen_tcp(self, host: str, port: int, handle: Callable[[FdStream], None]) -> Listener:
        return Listener(host, port, handle)


#: The one blocking backend (it has no state).
backend = BlockingBackend()


__all__ = [
    "HANDLER_GRACE",
    "BlockingBackend",
    "Driver",
    "FdStream",
    "Listener",
    "backend",
    "open_tcp_stream",
    "tune_socket",
]
