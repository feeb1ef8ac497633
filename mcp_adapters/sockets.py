"""The blocking backend: the driver loop on `selectors`, with no event loop at all.

The same API as the async backends, minus `await`::

    with connect_stdio(StdioServerParameters("python", ["server.py"])) as session:
        result = session.request("tools/call", {"name": "echo", "arguments": {}})

    def on_request(session: Session, request: RequestReceived) -> Any:
        if session.wait_cancelled(request.request_id, timeout=1.0):
            return None                            # the peer gave up; nothing is sent
        return CallToolResult(content=[...])

    with tcp_server(on_request, ServerConfig(name="demo")) as server:
        ...                                        # serves on a background thread

Threads, and why: the connection is driven by whichever thread is waiting on
it (a client inside `request()`, a server inside `serve_forever()`); there is
no background loop. Inbound requests run on their own handler threads, so a
slow handler never stops the reading, and cancellation reaches it as an event
(`is_cancelled` / `wait_cancelled`). Every touch of the connection happens on
the driving thread: other threads hand it a job and wake it through a socket
pair; if nobody drives, the caller becomes the driver for as long as it waits.
Callbacks (`on_notification`, `on_event`, progress) run on the driving thread
and must not block or wait on this session.

What is this module's own, and what is shared: the thread machinery above is
(a loop-less design needs it). The bookkeeping is `SessionCore`'s, the event
routing `SessionState`'s, the driver `backends.blocking` stepping `DriverCore`;
stdio and TCP (spawning and stopping a server, claiming stdio, connecting,
listening) are the shared transports' blocking faces, bound below as
`mcp_adapters.asyncio` binds their async ones.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from mcp_adapters._driver import CLOSE_TIMEOUT, CONNECT_TIMEOUT, PROBE_TIMEOUT
from mcp_adapters._errors import ConnectionClosedError, TransportError
from mcp_adapters._session import Connection, Outcome, RequestId, SessionCore, SessionState
from mcp_adapters.backends.blocking import (
    HANDLER_GRACE,
    BlockingBackend,
    Driver,
    FdStream,
    open_tcp_stream,
)
from mcp_adapters.backends.blocking import backend as blocking_backend
from mcp_adapters.transports import tcp
from mcp_adapters.transports.bound import BlockingTransports
from mcp_adapters.transports.process import ServerProcess, StdioServerParameters
from mcp_core import (
    ClientConnection,
    Event,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    State,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

RequestHandler = Callable[["Session", RequestReceived], Any]
NotificationHandler = Callable[["Session", NotificationReceived], None]
EventObserver = Callable[[Event], None]


# =========================================================================== session


class _Outcome(Outcome):
    """An `Outcome` waited for on a `threading.Event` (`done`): driving thread to waiting one."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = threading.Event()
        super().__init__(self.done)


class _Job(_Outcome):
    """A call handed to the driving thread; its outcome comes back to the caller."""

    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[], T]) -> None:
        super().__init__()
        self._fn = fn

    def run(self) -> None:
        try:
            self.set_result(self._fn())
        except BaseException as exc:
            self.set_exception(exc)


class _Flag:
    """A handler thread's cancellation, as the session core cancels it."""

    __slots__ = ("event",)

    def __init__(self) -> None:
        self.event = threading.Event()

    def cancel(self) -> None:
        self.event.set()


class Session(SessionState):
    """One MCP connection, client or server, over one `FdStream`; see the module docstring.

    Use it as a context manager: entering runs a client's handshake
    (`session.connected` holds the `Connected` event); leaving closes the
    connection, settles everything in flight, closes the stream and waits (up
    to `handler_grace`) for handler threads. `on_request(session, request)` runs
    on a handler thread: its return value is the result, an `MCPError` it raises
    is the error. Methods may be called from any thread. `drain_on_eof=True` (a
    server's option): when the input ends, the requests in flight are still
    answered before the connection closes.
    """

    def __init__(
        self,
        connection: Connection,
        stream: FdStream,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        on_event: EventObserver | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        probe_timeout: float = PROBE_TIMEOUT,
        close_timeout: float = CLOSE_TIMEOUT,
        handler_grace: float = HANDLER_GRACE,
        drain_on_eof: bool = False,
    ) -> None:
        self._on_request = on_request
        self._on_notification = on_notification
        self._connect_timeout = connect_timeout
        self._probe_timeout = probe_timeout
        self._handler_grace = handler_grace
        self._core = SessionCore(
            connection,
            spawn=self._spawn,
            on_notification=self._notifications(),
            on_event=on_event,
        )
        self._driver: Driver = Driver(
            connection,
            stream,
            self._on_events,
            close_timeout=close_timeout,
            hold_eof=self._core.hold_eof(drain_on_eof),
        )
        self._jobs: deque[_Job] = deque()
        self._jobs_lock = threading.Lock()
        self._drive_lock = threading.Lock()
        self._driving_thread: int | None = None
        self._threads: set[threading.Thread] = set()
        self._flags: dict[RequestId, threading.Event] = {}
        self._threads_lock = threading.Lock()
        #: The server process, for a session made by `connect_stdio`.
        self.process: ServerProcess | None = None

    @staticmethod
    def loop_backend() -> BlockingBackend:
        """The backend the transports' blocking faces open streams and wait on."""
        return blocking_backend

    # ---- state: `connection`, `connected`, `closed`, `transport_error` (SessionState)

    # ---- lifetime

    def __enter__(self) -> Session:
        connection = self._core.connection
        if isinstance(connection, ClientConnection) and connection.state == State.IDLE:
            try:
                self._handshake()
            except BaseException:
                self.close("handshake failed")
                raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _handshake(self) -> None:
        waiter = _Outcome()
        deadline = time.monotonic() + self._probe_timeout
        self._call(lambda: self._core.connect(waiter, deadline=deadline))
        if not self._wait(waiter.done, time.monotonic() + self._connect_timeout):
            raise self._core.handshake_timeout()
        waiter.outcome()

    def serve_forever(self) -> None:
        """Drive the connection until it ends (the peer closed it, or `close`)."""
        self._wait(self._driver.finished)

    def close(self, reason: str = "closed locally") -> None:
        """Close the connection: waiters fail, handlers are told, the stream is closed."""
        if not self._driver.finished.is_set():
            self._call(lambda: self._close_now(reason))
            if self._driving_thread != threading.get_ident():
                self._wait(self._driver.finished)
        with self._threads_lock:
            threads = [t for t in self._threads if t is not threading.current_thread()]
        end = time.monotonic() + self._handler_grace
        for thread in threads:
            thread.join(max(0.0, end - time.monotonic()))
            if thread.is_alive():
                logger.warning("handler thread %s ignored cancellation", thread.name)

    def _close_now(self, reason: str) -> None:
        self._core.close(reason, tell_peer=True)
        self._driver.finish()

    # ---- sending

    def wake(self) -> None:
        """Flush what the driving thread queued on `session.connection` directly."""
        self._driver.wake()

    def apply(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn(connection)` on the driving thread (the only safe place), then flush.

        The way for handler threads to use a core verb this class does not wrap.
        """

        def run() -> T:
            self._core.check_open()
            return fn(self._core.connection)

        result = self._call(run)
        self._driver.wake()
        return result

    def request(
        self,
        method: str,
        params: Any = None,
        timeout: float | None = None,
        on_progress: Callable[[ProgressReceived], None] | None = None,
        related_request_id: RequestId | None = None,
    ) -> Any:
        """Send a request and wait for its validated result model.

        Raises `MCPError` for the peer's error, `RequestTimeoutError` once
        `timeout` seconds pass (the peer is told to cancel), `ConnectionClosedError`
        when the connection ends first. An interrupt (KeyboardInterrupt)
        cancels the request before propagating.
        """
        waiter = _Outcome()
        deadline = None if timeout is None else time.monotonic() + timeout
        rid = self._call(
            lambda: self._core.start_request(
                method,
                params,
                waiter,
                deadline=deadline,
                on_progress=on_progress,
                related_request_id=related_request_id,
            )
        )
        try:
            self._wait(waiter.done)
        except BaseException:
            with contextlib.suppress(Exception):
                self._call(lambda: self._core.cancel_request(rid, "interrupted"))
            raise
        if not waiter.done.is_set():  # the loop ended without settling it (defensive)
            closed = self._core.closed
            raise ConnectionClosedError() if closed is None else self._core.closed_error(closed)
        return waiter.outcome()

    def notify(
        self, method: str, params: Any = None, *, related_request_id: RequestId | None = None
    ) -> None:
        self._call(lambda: self._core.notify(method, params, related_request_id=related_request_id))

    def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Progress on a request the peer sent us; False when it did not ask for any."""
        return self._call(lambda: self._core.send_progress(request_id, progress, total, message))

    def send_log(
        self,
        level: str,
        data: Any,
        *,
        logger: str | None = None,
        related_request_id: RequestId | None = None,
    ) -> bool:
        """Server side: `notifications/message`, if the client's level lets it through."""
        self._core.log_connection()  # a client is refused on its own thread
        return self._call(
            lambda: self._core.send_log(
                level, data, logger=logger, related_request_id=related_request_id
            )
        )

    # ---- cancellation, seen from a handler thread

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Whether the peer cancelled this inbound request (or the connection ended)."""
        flag = self._flags.get(request_id)
        return flag is not None and flag.is_set()

    def wait_cancelled(self, request_id: RequestId, timeout: float | None = None) -> bool:
        """Sleep up to `timeout`, waking early if the request is cancelled; returns is_cancelled."""
        flag = self._flags.get(request_id)
        if flag is None:
            return False
        return flag.wait(timeout)

    # ---- the thread machinery

    def _call(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the driving thread (becoming it if nobody drives) and return its result."""
        if self._driving_thread == threading.get_ident():
            return fn()
        job = _Job(fn)
        with self._jobs_lock:
            if self._driver.finished.is_set():
                job.run()  # nothing drives any more; the lock keeps callers in line
            else:
                self._jobs.append(job)
        if not job.done.is_set():
            self._driver.wake()
            self._wait(job.done)
        result: T = job.outcome()
        return result

    def _run_jobs(self) -> None:
        while True:
            with self._jobs_lock:
                if not self._jobs:
                    return
                job = self._jobs.popleft()
                if self._driver.finished.is_set():
                    job.run()
                    continue
            job.run()

    def _wait(self, done: threading.Event, deadline: float | None = None) -> bool:
        """Until `done` is set (True) or `deadline` passes (False); drives when nobody else does."""
        me = threading.get_ident()
        if self._driving_thread == me:
            raise RuntimeError("a session callback must not wait on its own session")
        while not done.is_set():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            if self._driver.finished.is_set():
                self._run_jobs()
                return done.is_set()
            if self._drive_lock.acquire(blocking=False):
                try:
                    self._driving_thread = me
                    self._drive(done, deadline)
                finally:
                    self._driving_thread = None
                    self._drive_lock.release()
            else:
                # Another thread drives and will set `done`; the timeout only covers
                # the moment it stops driving and hands over.
                done.wait(0.05 if remaining is None else min(0.05, remaining))
        return True

    def _drive(self, done: threading.Event, deadline: float | None) -> None:
        driver = self._driver
        while not driver.finished.is_set():
            self._run_jobs()
            driver.pump()
            if driver.finished.is_set() or (done.is_set() and not driver.pending_output):
                break
            timeout = None
            if deadline is not None:
                timeout = deadline - time.monotonic()
                if timeout <= 0:
                    break
            driver.poll(timeout)
        if driver.finished.is_set():
            self._run_jobs()

    # ---- inbound

    # `_on_events` (the driver's sink) and `_notification` come from SessionState.

    def _spawn(self, event: RequestReceived) -> _Flag:
        flag = _Flag()
        thread = threading.Thread(
            target=self._handle,
            args=(event, flag.event),
            name=f"mcp-handler-{event.request_id}",
            daemon=True,
        )
        with self._threads_lock:
            self._threads.add(thread)
            self._flags[event.request_id] = flag.event
        thread.start()
        return flag

    def _handle(self, event: RequestReceived, cancelled: threading.Event) -> None:
        rid = event.request_id
        try:
            try:
                if self._on_request is None:
                    raise self._core.unhandled(event)
                result = self._on_request(self, event)
            except Exception as exc:
                error = exc
                self._call(lambda: self._core.answer_exception(rid, error))
            else:
                self._call(lambda: self._core.answer(rid, result))
        except TransportError:
            pass  # the connection ended meanwhile; there is nobody to answer
        finally:
            with self._threads_lock:
                self._threads.discard(threading.current_thread())
                if self._flags.get(rid) is cancelled:
                    del self._flags[rid]


# =========================================================================== transports
# Written once in `transports.stdio` and `transports.tcp` (their blocking faces,
# `transports.bound.BlockingTransports`); bound here to this session.


class TcpServer(tcp.BlockingTcpServer):
    """A listening socket; each connection is served by a `Session` on its own thread."""

    session_type = Session


_transports = BlockingTransports(Session, TcpServer, logger)
connect_stdio = _transports.connect_stdio
serve_stdio = _transports.serve_stdio
connect_tcp = _transports.connect_tcp
tcp_server = _transports.tcp_server
serve_tcp = _transports.serve_tcp


__all__ = [
    "ConnectionClosedError",
    "Driver",
    "EventObserver",
    "FdStream",
    "NotificationHandler",
    "RequestHandler",
    "Session",
    "StdioServerParameters",
    "TcpServer",
    "connect_stdio",
    "connect_tcp",
    "open_tcp_stream",
    "serve_stdio",
    "serve_tcp",
    "tcp_server",
]
