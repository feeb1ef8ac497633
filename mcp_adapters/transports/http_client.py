"""The Streamable HTTP client on real sockets: the one `Driver` per TCP connection.

`HTTPClientEndpoint.pump()` says what to do: start `requests` (each on an idle
keep-alive TCP connection, or a new one; always a new one for a request marked
`fresh`, which the server dropped unread on an idle connection), abort the
connections in `aborts` (a 2026-07-28 cancellation *is* closing the stream), handle
`events`.

Each TCP connection is one `HTTPClientConnection` run by one `Driver` over the
backend seam (`backends.running.loop_backend()`: asyncio's own transports, or
trio's streams), for as long as the socket is open. An exchange is started in place,
from `wake()`: `http.start(request)` and `driver.wake()`, which on asyncio
writes the request at once; its response is read by that driver's reader, and
when it ends the connection goes back to the pool with its reader still
waiting. So a request on a kept-alive connection costs no task, no scope and no
check of the socket; only a new connection costs a task (it connects, then runs
the driver). Two caps count the exchanges running: one for those that may last
(requests, the legacy GET stream, resumptions) and a small one for quick posts
(notifications, our answers to the server's requests, the DELETE), so answers
always find a connection even when every long slot waits on them; an exchange
over its cap waits in its queue, first come first served.

The `ClientConnection` sits behind a `SessionCore`, exactly as in the stream
backends: waiters for our requests, handler tasks for the server's (legacy requests
on a POST's SSE stream or the GET stream, and 2026-07-28 input requests, which the
engine presents the same way), `ConnectionClosed` settling everything. Its deadlines
run on the loop's clock, on the backend's timer.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import ssl
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc

from mcp_adapters._driver import CLOSE_TIMEOUT, CONNECT_TIMEOUT, Driver
from mcp_adapters._errors import (
    ConnectionClosedError,
    RequestTimeoutError,
    TransportError,
    to_transport_error,
)
from mcp_adapters._session import RequestId, SessionCore
from mcp_adapters.backends import Cancellable, SessionBackend, Tasks, Timer
from mcp_adapters.backends import Event as BackendEvent
from mcp_adapters.backends.running import loop_backend
from mcp_core import (
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    ClientConfig,
    ClientConnection,
    Connected,
    Event,
    LocalProtocolError,
    MCPError,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
)
from mcp_core.http import (
    AuthorizationChallenged,
    HTTPClientConnection,
    HTTPClientEndpoint,
    HTTPRequest,
    ToolsFiltered,
)

logger = logging.getLogger(__name__)

RequestHandler = Callable[["HTTPSession", RequestReceived], Awaitable[Any]]
NotificationHandler = Callable[["HTTPSession", NotificationReceived], None]
EventObserver = Callable[[Event], None]

#: Exchanges that may last (requests, the GET stream) running at once, one TCP connection each.
MAX_CONNECTIONS = 8
#: Quick posts (notifications, answers, DELETE) running at once, besides those.
MAX_SHORT_CONNECTIONS = 2
#: How long connecting waits, after a legacy handshake, for the server to answer the GET
#: listen stream (its 200 head, or a refusal) before the session is handed over anyway.
LISTEN_TIMEOUT = 5.0


class _Conn:
    """One TCP connection to the server: its HTTP/1.1 state machine, run by one `Driver`.

    The driver runs for as long as the socket is open, across the exchanges it
    carries: an exchange ends when the response does (`http.busy` turns false),
    and the connection goes back to the pool with its reader still waiting, so a
    server that closes an idle connection is noticed (and the connection dropped)
    when it does, not when the next request picks it. The sans-IO side the driver
    needs: the HTTP layer, with no timers of its own (the MCP deadlines run on the
    session's timer).
    """

    __slots__ = ("aborted", "carrying", "driver", "http", "quick")

    def __init__(self, http: HTTPClientConnection) -> None:
        self.http = http
        self.driver: Driver | None = None
        #: An exchange runs on it now, in the quick class (`quick`) or the long one.
        self.carrying = False
        self.quick = False
        #: We broke it (`cancel`): what it carried is not sent again (`close(aborted=)`).
        self.aborted = False

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]:
        return self.http.receive_data(data)

    def data_to_send(self) -> bytes:
        return self.http.data_to_send()

    def next_deadline(self) -> float | None:
        return None

    def tick(self, now: float) -> list[Any]:
        return []

    def cancel(self) -> None:
        """Break the connection at once: what a 2026-07-28 cancellation is."""
        self.aborted = True
        if self.driver is not None:
            self.driver.abort()


class HTTPSession:
    """One MCP client connection over Streamable HTTP; made by `connect_http`.

    The same API as the stream backends' `Session` (`request`, `notify`, `wake`,
    `spawn`, `aclose`, `wait_closed`, `connection`, `connected`, `closed`,
    `transport_error`).

    `listen` opens the legacy GET stream after `initialize`; the handshake then also
    waits, at most `listen_timeout` seconds (0: not at all), for the server to answer
    that GET, so the session is handed over with its stream up (or refused).
    """

    def __init__(
        self,
        url: str,
        config: ClientConfig,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        on_event: EventObserver | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        probe_timeout: float | None = None,
        close_timeout: float = CLOSE_TIMEOUT,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        max_connections: int = MAX_CONNECTIONS,
        ssl_context: ssl.SSLContext | None = None,
        listen: bool = True,
        listen_timeout: float = LISTEN_TIMEOUT,
        max_response_bytes: int | None = None,
        max_sse_event_bytes: int | None = None,
        max_header_bytes: int = 64 * 1024,
        max_reconnects: int = 3,
        max_tools: int = 10_000,
        auth: Any = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        if max_connections < 1:
            raise ValueError("max_connections must be positive")
        self.url = url
        self._host = parts.hostname
        self._tls = parts.scheme == "https"
        self._port = parts.port or (443 if self._tls else 80)
        self._ssl_context = ssl_context
        authority = parts.netloc.rpartition("@")[2]
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        extra = list(headers.items()) if isinstance(headers, Mapping) else list(headers or ())
        self._mcp = ClientConnection(config)
        # The body and event limits follow `config.limits.max_message_bytes` unless set.
        self._http = HTTPClientEndpoint(
            self._mcp,
            host=authority,
            path=target,
            headers=extra,
            listen=listen,
            max_response_bytes=max_response_bytes,
            max_sse_event_bytes=max_sse_event_bytes,
            max_header_bytes=max_header_bytes,
            max_reconnects=max_reconnects,
            max_tools=max_tools,
        )
        # An `mcp_adapters.oauth.OAuthProvider`: bearer tokens, challenges, refresh.
        self._auth = None if auth is None else auth.attach(self, self._http)
        self._on_request = on_request
        self._on_notification = on_notification
        self._core = SessionCore(
            self._mcp,
            spawn=self._spawn_handler,
            on_notification=self._notification if on_notification is not None else None,
            on_event=on_event,
        )
        self._connect_timeout = connect_timeout
        self._listen_timeout = listen_timeout
        # Set when the legacy GET stream stops being pending (`_handshake` waits on it).
        self._listened: BackendEvent | None = None
        self._probe_timeout = probe_timeout
        self._close_timeout = close_timeout
        # The two classes of exchange, each with its cap, its count and its queue:
        # [long, quick] (see the module's docstring).
        self._caps = (max_connections, MAX_SHORT_CONNECTIONS)
        self._running = [0, 0]
        self._waiting: tuple[deque[HTTPRequest], deque[HTTPRequest]] = (deque(), deque())
        self._max_idle = max_connections
        self._conns: dict[HTTPClientConnection, _Conn] = {}  # every open TCP connection
        self._idle: list[_Conn] = []  # those of them carrying nothing, newest last
        #: Exchanges pumped and not over yet (queued, connecting or running).
        self._exchanges = 0
        self._quiet: BackendEvent | None = None  # set when `_exchanges` drops to 0
        self._error: TransportError | None = None
        self._stopping = False
        self._closing = False
        self._closed_event = anyio.Event()
        # Bound when `running()` starts, on the running loop: its clock, its tasks
        # (the connections' drivers, the handlers of the server's requests), its
        # timer (the connection's deadlines, re-armed when they move).
        self._backend: SessionBackend | None = None
        self._tasks: Tasks | None = None
        self._timer: Timer | None = None
        self._armed: float | None = None
        self._stop: BackendEvent | None = None
        self._finished: BackendEvent | None = None
        self._default_tls: ssl.SSLContext | None = None
        self._flushing = False
        self._again = False
        self._admitting = False

    # ------------------------------------------------------------------ state

    @property
    def connection(self) -> ClientConnection:
        return self._mcp

    @property
    def connected(self) -> Connected | None:
        return self._core.connected

    @property
    def closed(self) -> bool:
        return self._core.closed is not None

    @property
    def observe_responses(self) -> bool:
        """Whether the `on_event` observer sees `ResponseReceived` events (True unless
        turned off, as on the stream sessions: see `SessionCore.observe_responses`)."""
        return self._core.observe_responses

    @observe_responses.setter
    def observe_responses(self, observe: bool) -> None:
        self._core.observe_responses = observe

    @property
    def transport_error(self) -> TransportError | None:
        """The last failure to reach the server (connect or read/write), if any."""
        return self._error

    @property
    def session_id(self) -> str | None:
        """The legacy `Mcp-Session-Id` the server gave us."""
        return self._http.session_id

    @property
    def listen_pending(self) -> bool:
        """The legacy GET stream is due or sent, and the server has not answered it yet
        (true after connecting only when it did not within `listen_timeout`)."""
        return self._http.listen_pending

    @property
    def open_connections(self) -> int:
        """TCP connections open now (busy or idle)."""
        return len(self._conns)

    @property
    def _carrying(self) -> dict[HTTPClientConnection, _Conn]:
        """The connections carrying an exchange now; `cancel()` breaks one."""
        return {http: conn for http, conn in self._conns.items() if conn.carrying}

    # --------------------------------------------------------------- lifetime

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the session's tasks and the handshake while the block runs (`connect_http`
        uses this); leaving ends the session. What the block raises is re-raised
        outside the task group, so the caller gets it as is, not in an ExceptionGroup."""
        failure: BaseException | None = None
        backend = self._backend = loop_backend()
        self._tasks = backend.tasks()
        self._timer = backend.timer(self._timer_fired)
        self._stop = backend.event()
        self._finished = backend.event()
        async with anyio.create_task_group() as tg:
            await tg.start(self._run)
            try:
                await self._handshake()
                yield
            except BaseException as exc:
                failure = exc
            finally:
                await self.aclose("handshake failed" if self.connected is None else "closed")
        if failure is not None:
            try:
                raise failure
            finally:
                failure = None  # no reference cycle through the traceback

    async def _run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """The session's main task: holds its tasks until stopped, then ends them."""
        assert self._tasks is not None and self._timer is not None and self._stop is not None
        assert self._finished is not None
        try:
            async with self._tasks:
                timer = self._tasks.start(self._timer.serve)
                task_status.started()
                try:
                    await self._stop.wait()
                finally:
                    self._stopping = True
                    self._timer.close()
                    timer.cancel()
                    self._quiet_now()
                    for conn in list(self._conns.values()):
                        conn.cancel()  # idle or past the close timeout: closed at once
                    await self._tasks.stop()
        finally:
            self._finished.set()

    async def _handshake(self) -> None:
        # No deadline on the "auto" probe by default: over HTTP every server answers,
        # and the answer (DiscoverResult, a modern refusal, or anything else) decides
        # the era. A timer would only take a slow modern server for a legacy one, and
        # send it an `initialize` it refuses. `connect_timeout` bounds the whole.
        assert self._backend is not None
        waiter = self._backend.waiter()
        probe = self._probe_timeout
        deadline = None if probe is None else self._backend.now() + probe
        self._core.connect(waiter, deadline=deadline)
        self.wake()
        try:
            with anyio.fail_after(self._connect_timeout) as scope:
                if self._auth is not None:
                    self._auth.handshake_scope = scope  # paused while the user logs in
                await waiter.wait()
        except TimeoutError:
            raise RequestTimeoutError(
                "initialize",
                REQUEST_TIMEOUT,
                f"{self.url} did not complete the handshake in {self._connect_timeout} s",
            ) from self._error
        except Exception as exc:
            if self._auth is not None:
                self._auth.raise_failure(exc, handshake=True)
            if isinstance(exc, ConnectionClosedError) and self._error is not None:
                raise ConnectionClosedError(
                    f"cannot connect to {self.url}: {self._error}"
                ) from self._error
            raise
        await self._await_listen()

    async def _await_listen(self) -> None:
        """Hold the connected legacy session until the server answered its GET stream.

        The GET goes out on its own TCP connection beside the `initialized`
        notification; the application's first requests would otherwise race it (reusing
        the idle connection while the GET still connects), and a server answering them
        with a request or notification of its own for the GET stream could find none
        yet. So the session is handed over once the GET's response head arrived: a 200
        (the stream is up), or a refusal (405: the server has no GET stream; any other
        status, or a connection failure: the stream is retried in the background, as
        before). A server that has not answered within `listen_timeout` seconds gets the
        session anyway, with the GET still waiting: a slow stream must not make a working
        session fail to connect. 2026-07-28 sessions and `listen=False` never wait.
        """
        if not self._http.listen_pending or self._listen_timeout <= 0 or self.closed:
            return
        listened = self._listened = self._backend_event()
        try:
            with anyio.move_on_after(self._listen_timeout) as scope:
                await listened.wait()
            if scope.cancelled_caught:
                logger.debug(
                    "%s has not answered the GET stream in %s s; connected without it",
                    self.url,
                    self._listen_timeout,
                )
        finally:
            self._listened = None

    async def aclose(self, reason: str = "closed locally") -> None:
        """End the session: waiters fail, handlers are cancelled, a legacy session is
        ended with DELETE (within the close timeout), every socket is closed."""
        if self._stop is None or self._finished is None:
            return  # never ran
        if not self._closing:
            self._closing = True
            with anyio.CancelScope(shield=True):
                try:
                    self._dispatch(self._http.close(reason))
                    self.wake()  # the aborts, and the DELETE
                except Exception:
                    logger.exception("closing the HTTP session failed")
                if self._exchanges:
                    quiet = self._quiet = self._backend_event()
                    with anyio.move_on_after(self._close_timeout):
                        await quiet.wait()
            self._stop.set()
        # Not shielded: a callback of this very session may be the one closing it, and
        # stopping cancels it. `connect_http` waits for the tasks as it leaves anyway.
        await self._finished.wait()

    def _backend_event(self) -> BackendEvent:
        assert self._backend is not None
        return self._backend.event()

    async def wait_closed(self) -> None:
        """Wait until the connection ends (the session expired, or `aclose`)."""
        await self._closed_event.wait()

    # ----------------------------------------------------------------- sending

    async def request(
        self,
        method: str,
        params: Any = None,
        timeout: float | None = None,
        on_progress: Callable[[ProgressReceived], None] | None = None,
        related_request_id: RequestId | None = None,
    ) -> Any:
        """Send a request and return its validated result model.

        Raises `MCPError` for the server's error, `RequestTimeoutError` once `timeout`
        seconds pass, `ConnectionClosedError` when the session ends or the request's
        stream is lost for good. Cancelling the caller cancels the request (2026-07-28:
        by closing the TCP connection that carries it). (Positional parameters as
        `Session.request`'s: `Client.call_tool` passes them in order.)
        """
        backend = self._backend
        if backend is None:
            raise RuntimeError("the session is not running (use connect_http)")
        waiter = backend.waiter()
        deadline = None if timeout is None else backend.now() + timeout
        rid = self._core.start_request(
            method,
            params,
            waiter,
            deadline=deadline,
            on_progress=on_progress,
            related_request_id=related_request_id,
        )
        self.wake()
        try:
            return await waiter.wait()
        except backend.cancelled:
            with contextlib.suppress(LocalProtocolError):
                self._core.cancel_request(rid, "cancelled by the caller")
            self.wake()
            raise
        except ConnectionClosedError as exc:
            if exc.__cause__ is None and self._error is not None:
                exc.__cause__ = self._error
            raise
        except Exception as exc:
            if self._auth is not None:
                self._auth.raise_failure(exc)
            raise

    async def notify(
        self, method: str, params: Any = None, *, related_request_id: RequestId | None = None
    ) -> None:
        self._core.notify(method, params, related_request_id=related_request_id)
        self.wake()

    async def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Progress on a request the server sent us; False when it did not ask for any."""
        self._core.check_open()
        sent = self._mcp.send_progress(request_id, progress, total, message)
        self.wake()
        return sent

    def wake(self) -> None:
        """Output was queued on the connection: send it (and re-arm the timer)."""
        if self._flushing:
            self._again = True
            return
        self._flushing = True
        try:
            while True:
                self._again = False
                out = self._http.pump()
                if out.events:
                    self._dispatch(out.events)
                for http in out.aborts:
                    conn = self._conns.get(http)
                    if conn is not None:
                        conn.cancel()  # its driver's end settles the exchange
                    else:
                        self._dispatch(http.close())
                for request in out.requests:
                    self._start(request)
                if not out and not self._again:
                    break
        finally:
            self._flushing = False
        deadline = None if self.closed else self._mcp.next_deadline()
        if deadline != self._armed and self._timer is not None:
            self._armed = deadline
            self._timer.arm(deadline)
        listened = self._listened
        if listened is not None and not self._http.listen_pending:
            listened.set()

    def spawn(self, awaitable: Awaitable[Any]) -> None:
        """Run a callback coroutine as a task of the session (errors are logged)."""
        if self._tasks is None or self._stopping or self._stop is None or self._stop.is_set():
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()  # never awaited: say so quietly
            return
        self._tasks.start(_run_logged, awaitable)

    # ------------------------------------------------------------------ events

    def _dispatch(self, events: list[Event]) -> None:
        if self._error is not None and self._core.cause is None:
            self._core.cause = self._error
        for event in events:
            if isinstance(event, ToolsFiltered):
                for name, why in event.dropped:
                    logger.warning("dropped tool %r from tools/list: %s", name, why)
            elif isinstance(event, AuthorizationChallenged) and self._auth is not None:
                self._auth.challenged(event)
        self._core.dispatch(events)
        if self._core.closed is not None:
            self._closed_event.set()

    def _notification(self, event: NotificationReceived) -> None:
        assert self._on_notification is not None
        self._on_notification(self, event)

    def _spawn_handler(self, event: RequestReceived) -> Cancellable | None:
        if self._tasks is None or self._stopping:
            return None
        return self._tasks.start(self._handle, event)

    async def _handle(self, event: RequestReceived) -> None:
        assert self._backend is not None
        rid = event.request_id
        try:
            if self._on_request is None:
                raise MCPError(METHOD_NOT_FOUND, f"Method not found: {event.method}")
            result = await self._on_request(self, event)
        except self._backend.cancelled:
            self._core.forget(rid)  # the server gave up, or the session ended
            raise
        except Exception as exc:
            self._core.answer_exception(rid, exc)
        else:
            self._core.answer(rid, result)
        self.wake()

    def _timer_fired(self, now: float) -> None:
        self._armed = None
        deadline = None if self.closed else self._mcp.next_deadline()
        if deadline is not None and deadline <= now:
            self._dispatch(self._mcp.tick(now))
        self.wake()  # which re-arms the timer

    # --------------------------------------------------------------- exchanges
    #
    # An exchange is admitted into its class (or queued behind the cap), then
    # started on an idle connection in place, or on a new one in a task that
    # connects and then runs that connection's driver for as long as it is open.

    def _start(self, request: HTTPRequest) -> None:
        if self._tasks is None or self._stopping:
            request.cancelled = True
            return
        self._exchanges += 1
        if request.delay > 0:
            self._tasks.start(self._delayed, request)
        else:
            self._admit(request)

    async def _delayed(self, request: HTTPRequest) -> None:
        assert self._backend is not None
        try:
            await self._backend.sleep(request.delay)
        except BaseException:
            self._exchange_over()
            raise
        self._admit(request)

    def _admit(self, request: HTTPRequest) -> None:
        quick = int(
            request.purpose == "terminate"
            or (request.purpose == "message" and request.request_id is None)
        )
        if self._waiting[quick] or self._running[quick] >= self._caps[quick]:
            self._waiting[quick].append(request)
            return
        self._running[quick] += 1
        self._carry(request, quick)

    def _carry(self, request: HTTPRequest, quick: int) -> None:
        """Start an admitted exchange: on an idle connection now, or on a new one."""
        if request.cancelled or self._stopping:
            self._done(quick)
            return
        if self._auth is not None and self._auth.must_prepare():
            assert self._tasks is not None
            self._tasks.start(self._prepared, request, quick)
            return
        if request.fresh:
            logger.debug("%s dropped a request unread on an idle connection; resending", self.url)
        elif self._idle:
            self._start_on(self._idle.pop(), request, quick)
            return
        assert self._tasks is not None
        self._tasks.start(self._open, request, quick)

    async def _prepared(self, request: HTTPRequest, quick: int) -> None:
        """`_carry` once the authorization is ready (a stored token, a refresh)."""
        assert self._auth is not None
        try:
            await self._auth.before_request()
        except BaseException:
            self._done(quick)
            raise
        if request.cancelled or self._stopping:
            self._done(quick)
        elif not request.fresh and self._idle:
            self._start_on(self._idle.pop(), request, quick)
        else:
            await self._open(request, quick)

    def _start_on(self, conn: _Conn, request: HTTPRequest, quick: int) -> None:
        if not conn.http.start(request):  # cancelled while it waited
            self._idle.append(conn)
            self._done(quick)
            return
        conn.carrying = True
        conn.quick = bool(quick)
        assert conn.driver is not None
        conn.driver.wake()  # on asyncio: written right here

    async def _open(self, request: HTTPRequest, quick: int) -> None:
        """Connect, start `request` on the new connection, and run its driver until the
        connection closes (it may carry many exchanges meanwhile)."""
        backend = self._backend
        assert backend is not None
        try:
            stream = await self._connect(backend)
        except Exception as exc:
            error = to_transport_error(exc, backend.errors)
            if error is None:
                self._done(quick)
                raise
            self._error = error
            logger.debug("cannot connect to %s: %s", self.url, error)
            http = self._http.new_connection()
            if http.start(request):
                self._dispatch(http.close())  # fails (or retries) what it carried
            self._done(quick)
            self.wake()
            return
        except BaseException:
            self._done(quick)
            raise
        conn = _Conn(self._http.new_connection())
        driver = conn.driver = Driver(
            conn,
            stream,
            functools.partial(self._conn_events, conn),
            backend=backend,
            close_timeout=self._close_timeout,
        )
        self._conns[conn.http] = conn
        try:
            if self._stopping:
                self._done(quick)
            else:
                self._start_on(conn, request, quick)
            await driver.run()
        except Exception:
            logger.exception("HTTP connection failed")
        finally:
            self._ended(conn)

    async def _connect(self, backend: SessionBackend) -> Any:
        tls: ssl.SSLContext | None = None
        if self._tls:
            tls = self._ssl_context or self._default_tls
            if tls is None:  # made once: loading the trusted CAs is not cheap
                tls = self._default_tls = ssl.create_default_context()
        limit = backend.limit()
        limit.move_to(backend.now() + self._connect_timeout)
        stream: Any = None
        async with limit:
            stream = await backend.open_tcp_stream(self._host, self._port, ssl_context=tls)
        if limit.expired or stream is None:
            raise TransportError(f"connecting to {self.url} timed out")
        return stream

    def _conn_events(self, conn: _Conn, events: list[Event]) -> None:
        """What a connection's driver read: the exchange's events; at its end the
        connection goes back to the pool (or closes), and the next one may start."""
        if events:
            self._dispatch(events)
        http = conn.http
        if conn.carrying and not http.busy:
            conn.carrying = False
            keep = not http.closed and not self._stopping and len(self._idle) < self._max_idle
            if keep:
                self._idle.append(conn)  # before `_done`, so a queued exchange takes it
            elif conn.driver is not None:
                conn.driver.finish()
            self._done(int(conn.quick))
        elif http.closed and conn.driver is not None:
            conn.driver.finish()  # the server closed an idle connection (or garbled)
            if conn in self._idle:
                self._idle.remove(conn)
        self.wake()

    def _ended(self, conn: _Conn) -> None:
        """A connection's driver ended: settle what it carried, forget it."""
        http = conn.http
        del self._conns[http]
        if conn in self._idle:
            self._idle.remove(conn)
        driver = conn.driver
        if driver is not None and driver.error is not None:
            self._error = driver.error
        carrying, conn.carrying = conn.carrying, False
        try:
            self._dispatch(http.close(aborted=conn.aborted))
        finally:
            if carrying:
                self._done(int(conn.quick))
            self.wake()

    def _done(self, quick: int) -> None:
        """An admitted exchange is over: its slot goes to the next one queued.

        Starting a queued one may end it at once (it was cancelled meanwhile), which
        calls this again: that inner call only frees the slot, and the loop of the
        outer one goes on, so a long queue of cancelled exchanges is no deep recursion.
        """
        self._running[quick] -= 1
        self._exchange_over()
        if self._admitting:
            return
        self._admitting = True
        try:
            for q in (0, 1):
                waiting = self._waiting[q]
                while waiting and self._running[q] < self._caps[q]:
                    self._running[q] += 1
                    self._carry(waiting.popleft(), q)
        finally:
            self._admitting = False

    def _exchange_over(self) -> None:
        self._exchanges -= 1
        if self._exchanges == 0:
            self._quiet_now()

    def _quiet_now(self) -> None:
        quiet = self._quiet
        if quiet is not None:
            self._quiet = None
            quiet.set()


async def _run_logged(awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except Exception:
        logger.exception("session callback failed")


@contextlib.asynccontextmanager
async def connect_http(
    url: str,
    config: ClientConfig | None = None,
    *,
    on_request: RequestHandler | None = None,
    on_notification: NotificationHandler | None = None,
    on_event: EventObserver | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    probe_timeout: float | None = None,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    **options: Any,
) -> AsyncIterator[HTTPSession]:
    """Connect to a Streamable HTTP MCP endpoint and run the handshake.

    "auto" mode waits for the server's answer to `server/discover`, however long it
    takes within `connect_timeout`, unless `probe_timeout` is given (then a server
    still silent by then is taken to be legacy, as on stdio).

    A legacy session opens its GET listen stream (server-to-client messages) right
    after `initialize`, and the block starts once the server answered that GET (its
    200 SSE head, or a refusal such as 405), so whatever the server sends on it in
    answer to the first requests has a stream; a server that does not answer within
    `listen_timeout` (5 s) gets the session anyway, the GET still waiting.
    `listen=False` opens no GET stream.

    `headers` go on every request (authorization ...); `options` are `HTTPSession`'s
    (`max_connections`, `close_timeout`, `ssl_context`, `listen`, `listen_timeout`, and the limits
    `max_response_bytes`, `max_sse_event_bytes`, `max_header_bytes`,
    `max_reconnects`, `max_tools`: docs/limits.md). Leaving the block
    ends the session (DELETE for a legacy one) and closes every socket.
    """
    session = HTTPSession(
        url,
        config or ClientConfig(),
        on_request=on_request,
        on_notification=on_notification,
        on_event=on_event,
        connect_timeout=connect_timeout,
        probe_timeout=probe_timeout,
        headers=headers,
        **options,
    )
    async with session.running():
        yield session


__all__ = ["HTTPSession", "connect_http"]
