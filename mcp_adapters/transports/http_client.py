"""The Streamable HTTP client on real sockets, on anyio (asyncio or trio, one implementation).

`HTTPClientEndpoint.pump()` says what to do: start `requests` (each on an idle
keep-alive TCP connection, or a new one; always a new one for a request marked
`fresh`, which the server dropped unread on an idle connection), abort the
connections in `aborts` (a 2026-07-28 cancellation *is* closing the stream), handle
`events`. One task per HTTP exchange, each holding one TCP connection while it runs,
bounded by two limiters: one for exchanges that may last (requests, the legacy GET
stream, resumptions) and a small one for quick posts (notifications, our answers to
the server's requests, the DELETE), so answers always find a connection even when
every long slot waits on them.

The `ClientConnection` sits behind a `SessionCore`, exactly as in the stream
backends: waiters for our requests, handler tasks for the server's (legacy requests
on a POST's SSE stream or the GET stream, and 2026-07-28 input requests, which the
engine presents the same way), `ConnectionClosed` settling everything. Its deadlines
run on `anyio.current_time()`.
"""

from __future__ import annotations

import contextlib
import logging
import select
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc
from anyio.abc import SocketAttribute

from mcp_adapters._driver import CLOSE_TIMEOUT, CONNECT_TIMEOUT, READ_SIZE
from mcp_adapters._errors import (
    ConnectionClosedError,
    RequestTimeoutError,
    TransportError,
    to_transport_error,
)
from mcp_adapters._session import RequestId, SessionCore
from mcp_adapters.backends.anyio import BACKEND as ANYIO
from mcp_adapters.transports.http_server import Waiter, close_quietly
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

_STREAM_ERRORS: tuple[type[BaseException], ...] = (
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
)


class _Conn:
    """One TCP connection to the server and the HTTP/1.1 state machine on it."""

    __slots__ = ("http", "stream")

    def __init__(self, stream: anyio.abc.ByteStream, http: HTTPClientConnection) -> None:
        self.stream = stream
        self.http = http

    def looks_dead(self) -> bool:
        """An idle keep-alive connection with something to read was closed by the server
        (or it sent garbage): either way it cannot carry a request."""
        if self.http.closed or self.http.busy:
            return True
        sock = self.stream.extra(SocketAttribute.raw_socket, None)
        if sock is None:
            return False
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)


class _NotRunning:
    """The handle of a handler that could not start (the session is shutting down)."""

    def cancel(self) -> None:
        pass


class HTTPSession:
    """One MCP client connection over Streamable HTTP; made by `connect_http`.

    The same API as the stream backends' `Session` (`request`, `notify`, `wake`,
    `spawn`, `aclose`, `wait_closed`, `connection`, `connected`, `closed`,
    `transport_error`).
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
        self._probe_timeout = probe_timeout
        self._close_timeout = close_timeout
        self._long = anyio.CapacityLimiter(max_connections)
        self._short = anyio.CapacityLimiter(MAX_SHORT_CONNECTIONS)
        self._max_idle = max_connections
        self._idle: list[_Conn] = []
        self._carrying: dict[HTTPClientConnection, anyio.CancelScope] = {}
        self._exchanges = 0
        self._quiet = anyio.Event()
        self._quiet.set()
        self._error: TransportError | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._stop = anyio.Event()
        self._finished = anyio.Event()
        self._closed_event = anyio.Event()
        # The connection's deadlines (request timeouts, the discovery probe, events
        # its own calls left waiting: an answered input request's retry), on the
        # seam's timer, re-armed by every `wake()`.
        self._timer = ANYIO.timer(self._timer_fired)
        self._flushing = False
        self._again = False
        self._closing = False

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
    def transport_error(self) -> TransportError | None:
        """The last failure to reach the server (connect or read/write), if any."""
        return self._error

    @property
    def session_id(self) -> str | None:
        """The legacy `Mcp-Session-Id` the server gave us."""
        return self._http.session_id

    @property
    def open_connections(self) -> int:
        """TCP connections open now (busy or idle)."""
        return len(self._carrying) + len(self._idle)

    # --------------------------------------------------------------- lifetime

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the session's tasks and the handshake while the block runs (`connect_http`
        uses this); leaving ends the session. What the block raises is re-raised
        outside the task group, so the caller gets it as is, not in an ExceptionGroup."""
        failure: BaseException | None = None
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
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._timer.serve)
                task_status.started()
                await self._stop.wait()
                tg.cancel_scope.cancel()
        finally:
            self._tg = None
            self._quiet.set()
            idle, self._idle = self._idle, []
            try:
                for conn in idle:
                    await close_quietly(conn.stream)
            finally:
                self._finished.set()

    async def _handshake(self) -> None:
        # No deadline on the "auto" probe by default: over HTTP every server answers,
        # and the answer (DiscoverResult, a modern refusal, or anything else) decides
        # the era. A timer would only take a slow modern server for a legacy one, and
        # send it an `initialize` it refuses. `connect_timeout` bounds the whole.
        waiter = Waiter()
        probe = self._probe_timeout
        self._core.connect(waiter, deadline=None if probe is None else anyio.current_time() + probe)
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

    async def aclose(self, reason: str = "closed locally") -> None:
        """End the session: waiters fail, handlers are cancelled, a legacy session is
        ended with DELETE (within the close timeout), every socket is closed."""
        if not self._closing:
            self._closing = True
            with anyio.CancelScope(shield=True):
                try:
                    self._dispatch(self._http.close(reason))
                    self.wake()  # the aborts, and the DELETE
                except Exception:
                    logger.exception("closing the HTTP session failed")
                with anyio.move_on_after(self._close_timeout):
                    await self._quiet.wait()
            self._stop.set()
        # Not shielded: a callback of this very session may be the one closing it, and
        # stopping cancels it. `connect_http` waits for the tasks as it leaves anyway.
        await self._finished.wait()

    async def wait_closed(self) -> None:
        """Wait until the connection ends (the session expired, or `aclose`)."""
        await self._closed_event.wait()

    # ----------------------------------------------------------------- sending

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

        Raises `MCPError` for the server's error, `RequestTimeoutError` once `timeout`
        seconds pass, `ConnectionClosedError` when the session ends or the request's
        stream is lost for good. Cancelling the caller cancels the request (2026-07-28:
        by closing the TCP connection that carries it).
        """
        waiter = Waiter()
        deadline = None if timeout is None else anyio.current_time() + timeout
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
        except anyio.get_cancelled_exc_class():
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
                    scope = self._carrying.get(http)
                    if scope is not None:
                        scope.cancel()
                    else:
                        self._dispatch(http.close())
                for request in out.requests:
                    self._start(request)
                if not out and not self._again:
                    break
        finally:
            self._flushing = False
        self._timer.arm(None if self.closed else self._mcp.next_deadline())

    def spawn(self, awaitable: Awaitable[Any]) -> None:
        """Run a callback coroutine in the session's task group (errors are logged)."""
        tg = self._tg
        if tg is None or self._stop.is_set():
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()  # never awaited: say so quietly
            return
        tg.start_soon(_run_logged, awaitable)

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

    def _spawn_handler(self, event: RequestReceived) -> anyio.CancelScope | _NotRunning:
        tg = self._tg
        if tg is None or self._stop.is_set():
            return _NotRunning()
        scope = anyio.CancelScope()
        tg.start_soon(self._handle, event, scope)
        return scope

    async def _handle(self, event: RequestReceived, scope: anyio.CancelScope) -> None:
        rid = event.request_id
        with scope:
            try:
                if self._on_request is None:
                    raise MCPError(METHOD_NOT_FOUND, f"Method not found: {event.method}")
                result = await self._on_request(self, event)
            except Exception as exc:
                self._core.answer_exception(rid, exc)
            else:
                self._core.answer(rid, result)
            self.wake()
        if scope.cancelled_caught:
            self._core.forget(rid)

    def _timer_fired(self, now: float) -> None:
        deadline = None if self.closed else self._mcp.next_deadline()
        if deadline is not None and deadline <= now:
            self._dispatch(self._mcp.tick(now))
        self.wake()  # which re-arms the timer

    # --------------------------------------------------------------- exchanges

    def _start(self, request: HTTPRequest) -> None:
        tg = self._tg
        if tg is None or self._stop.is_set():
            request.cancelled = True
            return
        if self._exchanges == 0:
            self._quiet = anyio.Event()
        self._exchanges += 1
        tg.start_soon(self._exchange, request)

    async def _exchange(self, request: HTTPRequest) -> None:
        try:
            if request.delay > 0:
                await anyio.sleep(request.delay)
            quick = request.purpose == "terminate" or (
                request.purpose == "message" and request.request_id is None
            )
            async with self._short if quick else self._long:
                await self._carry(request)
        except Exception:
            logger.exception("HTTP exchange failed")
        finally:
            self._exchanges -= 1
            if self._exchanges == 0:
                self._quiet.set()

    async def _carry(self, request: HTTPRequest) -> None:
        """Run one HTTP request on one TCP connection until its response is over."""
        if request.cancelled:
            return
        if request.fresh:
            logger.debug("%s dropped a request unread on an idle connection; resending", self.url)
        if self._auth is not None:
            await self._auth.before_request()
        try:
            conn = await self._connection(fresh=request.fresh)
        except Exception as exc:
            error = to_transport_error(exc)
            if error is None:
                raise
            self._error = error
            logger.debug("cannot connect to %s: %s", self.url, error)
            http = self._http.new_connection()
            if http.start(request):
                self._dispatch(http.close())  # fails (or retries) what it carried
            self.wake()
            return
        http = conn.http
        scope = anyio.CancelScope()
        self._carrying[http] = scope
        reusable = False
        try:
            with scope:
                if not http.start(request):
                    reusable = True
                    return
                await conn.stream.send(http.data_to_send())
                while http.busy:
                    try:
                        data = await conn.stream.receive(READ_SIZE)
                    except anyio.EndOfStream:
                        data = b""
                    self._dispatch(http.receive_data(data))
                    self.wake()
                    if not data:
                        break
            reusable = not scope.cancelled_caught and not http.closed and not http.busy
        except _STREAM_ERRORS as exc:
            error = to_transport_error(exc)
            self._error = error or self._error
        finally:
            del self._carrying[http]
            if reusable and not self._stop.is_set() and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                self.wake()
            else:
                self._dispatch(http.close())
                self.wake()
                await close_quietly(conn.stream)

    async def _connection(self, *, fresh: bool = False) -> _Conn:
        while self._idle and not fresh:
            conn = self._idle.pop()
            if not conn.looks_dead():
                return conn
            await close_quietly(conn.stream)
        try:
            with anyio.fail_after(self._connect_timeout):
                stream: anyio.abc.ByteStream
                if self._tls:
                    stream = await anyio.connect_tcp(
                        self._host,
                        self._port,
                        tls=True,
                        ssl_context=self._ssl_context,
                        tls_standard_compatible=False,
                    )
                else:
                    stream = await anyio.connect_tcp(self._host, self._port)
        except TimeoutError:
            raise TransportError(f"connecting to {self.url} timed out") from None
        return _Conn(stream, self._http.new_connection())


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

    `headers` go on every request (authorization ...); `options` are `HTTPSession`'s
    (`max_connections`, `close_timeout`, `ssl_context`, `listen`, and the limits
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
