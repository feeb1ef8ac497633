"""`SessionCore`: what every backend's session shares, written once and free of I/O.

A session owns one core connection and turns its events into outcomes:

- each request we send gets a *waiter* (an asyncio future, a trio event, a
  threading event ...) that receives exactly one outcome: the result of
  `ResponseReceived`, or the exception for `ErrorReceived` / `RequestFailed`;
- each request the peer sends is handed to a *spawn* function that starts the
  application's handler and returns something cancellable, cancelled again on
  `RequestCancelled` or when the connection ends;
- the answers to a server's questions (`InputReceived`) go to the handler that
  waits for them in place (legacy, `expect_input`), or are spawned like a
  request when nobody waits (a 2026-07-28 retry);
- `ConnectionClosed` fails whatever is still waiting with `ConnectionClosedError`.

Why one class and not one per backend: this bookkeeping is where "exactly one
terminal outcome per request" and "settle everything on disconnect" live, so it
should exist once and be testable without a loop. What differs per backend
(futures vs events, tasks vs threads, how to wait) is passed in as the two tiny
protocols below. The backends own the I/O loop and call `dispatch` with every
batch of events; nothing here blocks, awaits or reads a clock.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from mcp_adapters._errors import (
    ConnectionClosedError,
    RequestTimeoutError,
    TransportError,
    error_for_event,
)
from mcp_core import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    ClientConnection,
    Connected,
    ConnectionClosed,
    ErrorReceived,
    Event,
    InputReceived,
    LocalProtocolError,
    MCPError,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    ServerConnection,
    SessionStarted,
)

logger = logging.getLogger(__name__)

RequestId = int | str
Connection = ClientConnection | ServerConnection
ProgressCallback = Callable[[ProgressReceived], None]


class Waiter(Protocol):
    """Receives the single outcome of one outbound request (or of the handshake)."""

    def set_result(self, value: Any) -> None: ...

    def set_exception(self, exc: BaseException) -> None: ...


class Cancellable(Protocol):
    """A running inbound handler, as the backend started it."""

    def cancel(self) -> object: ...


class _Settable(Protocol):
    def set(self) -> None: ...

    def is_set(self) -> bool: ...


class Outcome:
    """A `Waiter` that keeps its one outcome: the first result or exception wins.

    `done` is set when it has one; how it is waited for is the backend's (an
    async event's `wait`, a `threading.Event`'s), then `outcome()` reads it.
    """

    __slots__ = ("_done", "_error", "_value")

    def __init__(self, done: _Settable) -> None:
        self._done = done
        self._value: Any = None
        self._error: BaseException | None = None

    def set_result(self, value: Any) -> None:
        if not self._done.is_set():
            self._value = value
            self._done.set()

    def set_exception(self, exc: BaseException) -> None:
        if not self._done.is_set():
            self._error = exc
            self._done.set()

    def outcome(self) -> Any:
        """The result, or the exception raised; only once `done` is set."""
        if self._error is not None:
            raise self._error
        return self._value


class _Empty(dict[Any, Any]):
    """The one empty table that `SessionCore`s share until they write: it refuses writes,
    so a missed "make it first" is an error, never an entry in everyone's table."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("the shared empty table is read-only")

    __setitem__ = _refuse
    setdefault = _refuse
    update = _refuse


_EMPTY: dict[Any, Any] = _Empty()


#: A request in flight: its waiter, and its progress callback if it has one. A bare
#: tuple (made per request): a dataclass's `__init__` was one more Python call each.
_Pending = tuple[Waiter, ProgressCallback | None]


#: What an `on_request` handler returns when it answered on the connection itself.
ANSWERED: Any = object()


class AwaitThen:
    """Work (a handler's `now` returned it) that awaits one awaitable and answers with
    what came of it: `start()` gives the awaitable (None: answered already), then
    `then(value)` answers with its value, or `failed(exc)` with an exception it raised
    that `catch` names. Everything else it raises (cancellation, an error of `start`,
    `then` or `failed`) goes out as out of any work.

    Why: as a plain `Work` this is one coroutine (`__call__`) awaited by the handler's
    coroutine (`Session._handle`), which awaits the tool's: three coroutine layers per
    call of a coroutine tool. `Session._handle` does what `__call__` does in its own
    frame instead (keep the two alike), one coroutine less: about 1,500 (legacy) to
    2,300 (2026-07-28) instructions of the 27,000-28,000 a coroutine tool cost over a
    plain one in process (callgrind, whole calls). Anything else awaiting the work
    (`await work()`: the HTTP server) gets the same steps through `__call__`.
    """

    __slots__ = ()

    #: The exceptions of the awaitable that `failed` answers.
    catch: tuple[type[BaseException], ...] = (Exception,)

    def start(self) -> Awaitable[Any] | None:
        raise NotImplementedError

    def then(self, value: Any) -> None:
        raise NotImplementedError

    def failed(self, exc: BaseException) -> None:
        raise NotImplementedError

    async def __call__(self) -> None:
        awaitable = self.start()
        if awaitable is not None:
            try:
                value = await awaitable
            except self.catch as exc:
                self.failed(exc)
            else:
                self.then(value)


class SessionCore:
    """Routes a connection's events to waiters and handlers; see the module docstring.

    Not thread-safe: the owner calls it from one loop (or under one lock).
    """

    # Slots: one per session, for as long as the session lives.
    __slots__ = (
        "_handshake",
        "_inbound",
        "_input_waiters",
        "_on_event",
        "_on_notification",
        "_on_started",
        "_pending",
        "_spawn",
        "_streams",
        "cause",
        "closed",
        "connected",
        "connection",
        "driver",
        "failures",
        "observe_responses",
    )

    def __init__(
        self,
        connection: Connection,
        *,
        # Called with a RequestReceived, or (server side) an InputReceived nobody waits for.
        spawn: Callable[[Any], Cancellable | None],
        on_notification: Callable[[NotificationReceived], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        on_started: Callable[[], None] | None = None,
    ) -> None:
        self.connection = connection
        self.connected: Connected | None = None
        self.closed: ConnectionClosed | None = None
        # The transport failure that ended the stream, if any; the backend sets it
        # before feeding end-of-stream so closed errors can chain to it.
        self.cause: BaseException | None = None
        self._spawn = spawn
        self._on_notification = on_notification
        self._on_event = on_event
        #: Whether `on_event` is called for a `ResponseReceived` too (it is called for
        #: every other event). An observer that has nothing to do with most answers (the
        #: `Client`'s, which looks at one only while a legacy task call follows its
        #: progress) turns it off while so, and saves a call per response.
        self.observe_responses = True
        # Called once, when a legacy session's `initialize` is accepted (SessionStarted),
        # before the rest of its batch is routed; then dropped.
        self._on_started = on_started
        # The four tables start as the shared `_EMPTY` (an empty dict is 64 bytes, and
        # one used once keeps its table: 160): each is made by its first write and
        # dropped again when a response or answer leaves it empty.
        self._pending: dict[RequestId, _Pending] = _EMPTY
        self._inbound: dict[RequestId, Cancellable] = _EMPTY
        # Inbound `subscriptions/listen` streams: they end only when the peer
        # cancels them or goes away, never with an answer.
        # A dict used as a set (an empty one is 64 bytes, an empty set 216): most
        # sessions carry no listen stream.
        self._streams: dict[RequestId, None] = _EMPTY
        self._input_waiters: dict[RequestId, Waiter] = _EMPTY
        self._handshake: Waiter | None = None
        #: The driver whose event sink is `receive` (set by the session that made both).
        self.driver: _Driving | None = None
        #: Where the driver keeps its transport failure, as `error` (set with `driver`):
        #: a stream `Driver`'s `core`, whose attribute its `error` property reads (a
        #: Python call per read, in `receive`), or else the driver itself. None: the
        #: driver.
        self.failures: Any = None

    # ------------------------------------------------------------ outbound

    def connect(self, waiter: Waiter, *, deadline: float | None = None) -> None:
        """Client side: start the handshake; `waiter` gets the `Connected` event."""
        connection = self.connection
        if not isinstance(connection, ClientConnection):
            raise TypeError("only a client connection has a handshake")
        self.check_open()
        self._handshake = waiter
        self.dispatch(connection.connect(deadline=deadline))

    @staticmethod
    def handshake_timeout() -> RequestTimeoutError:
        """The error when the server did not complete the handshake in `connect_timeout`."""
        return RequestTimeoutError(
            "initialize", REQUEST_TIMEOUT, "the server did not complete the handshake"
        )

    def start_request(
        self,
        method: str,
        params: Any,
        waiter: Waiter,
        deadline: float | None = None,
        on_progress: ProgressCallback | None = None,
        related_request_id: RequestId | None = None,
    ) -> RequestId:
        """Queue a request; `waiter` will get its result or its exception.

        (Positional parameters: `Session.request` passes all six in order on every
        request, and a call by keyword, or one filling keyword-only defaults, costs
        CPython 3.11 a lookup per name; so does this one to the engine's `send_request`.)
        """
        if self.closed is not None:  # (`check_open`, inline)
            raise self.closed_error(self.closed)
        rid = self.connection.send_request(
            method, params, deadline, on_progress is not None, related_request_id
        )
        pending = self._pending
        if pending is _EMPTY:
            pending = self._pending = {}
        pending[rid] = (waiter, on_progress)
        return rid

    def cancel_request(self, request_id: RequestId, reason: str | None = None) -> None:
        """The caller gave up: tell the peer (unless it already answered) and forget it."""
        if self._pending.pop(request_id, None) is None or self.closed is not None:
            return
        self.connection.cancel_request(request_id, reason)

    def notify(
        self, method: str, params: Any = None, *, related_request_id: RequestId | None = None
    ) -> None:
        self.check_open()
        self.connection.send_notification(method, params, related_request_id=related_request_id)

    def send_progress(
        self, request_id: RequestId, progress: float, total: float | None, message: str | None
    ) -> bool:
        """Progress on a request the peer sent us; False when it did not ask for any."""
        self.check_open()
        return self.connection.send_progress(request_id, progress, total, message)

    def send_log(
        self, level: str, data: Any, *, logger: str | None, related_request_id: RequestId | None
    ) -> bool:
        """Server side: `notifications/message`, if the client's level lets it through."""
        connection = self.log_connection()
        self.check_open()
        return connection.send_log(
            level, data, logger=logger, related_request_id=related_request_id
        )

    def log_connection(self) -> ServerConnection:
        """The connection, if it is a server's (only a server sends log messages)."""
        if not isinstance(self.connection, ServerConnection):
            raise TypeError("only a server sends log messages")
        return self.connection

    # ------------------------------------------------------------- inbound

    def hold_eof(self, drain_on_eof: bool) -> Callable[[], bool] | None:
        """What the driver asks at end of input before closing (`drain_on_eof`: a server
        still answers the requests in flight), as both drivers take it."""
        return self.answers_due if drain_on_eof else None

    @staticmethod
    def unhandled(event: RequestReceived) -> MCPError:
        """The error for a request when the session has no `on_request` at all."""
        return MCPError(METHOD_NOT_FOUND, f"Method not found: {event.method}")

    def answer(self, request_id: RequestId, result: Any) -> None:
        """A handler returned: send its result (an invalid one becomes an internal error)."""
        self._forget_inbound(request_id)
        if self.closed is not None:
            return
        try:
            self.connection.send_result(request_id, result)
        except (LocalProtocolError, ValueError, TypeError) as exc:
            logger.error(
                "handler for request %r returned an unsendable result: %s", request_id, exc
            )
            self._send_error(request_id, INTERNAL_ERROR, f"Internal error: {exc}", None)

    def answer_exception(self, request_id: RequestId, exc: BaseException) -> None:
        """A handler raised: `MCPError` goes to the peer as is, anything else as -32603."""
        self._forget_inbound(request_id)
        if self.closed is not None:
            return
        if isinstance(exc, MCPError):
            self._send_error(request_id, exc.code, exc.message, exc.data)
        else:
            logger.error("handler for request %r failed", request_id, exc_info=exc)
            self._send_error(request_id, INTERNAL_ERROR, str(exc) or type(exc).__name__, None)

    def _send_error(self, request_id: RequestId, code: int, message: str, data: Any) -> None:
        try:
            self.connection.send_error(request_id, code, message, data)
            return
        except LocalProtocolError as exc:
            logger.error("cannot send error %d for request %r: %s", code, request_id, exc)
        if code != INTERNAL_ERROR:
            try:
                self.connection.send_error(request_id, INTERNAL_ERROR, message)
            except LocalProtocolError as exc:
                logger.error("cannot answer request %r at all: %s", request_id, exc)

    def adopt(self, request_id: RequestId, handle: Cancellable) -> None:
        """Route `request_id`'s cancellation to `handle`, a handler started before this
        core existed (the Streamable HTTP server runs a 2026-07-28 handler's first step
        first, and makes a core only for one that suspends); as `dispatch` records the
        handle its spawn returns."""
        if self._inbound is _EMPTY:
            self._inbound = {}
        self._inbound[request_id] = handle

    def forget(self, request_id: RequestId) -> None:
        """A handler ended without answering (it was cancelled), or answered on the
        connection itself (`ANSWERED`)."""
        # (`_forget_inbound`, inline: every coroutine handler ends here)
        inbound = self._inbound
        if inbound.pop(request_id, None) is not None and not inbound:
            self._inbound = _EMPTY
        self._streams.pop(request_id, None)
        self._input_waiters.pop(request_id, None)

    def _forget_inbound(self, request_id: RequestId) -> None:
        inbound = self._inbound
        if inbound.pop(request_id, None) is not None and not inbound:
            self._inbound = _EMPTY
        self._streams.pop(request_id, None)

    def forget_input(self, request_id: RequestId) -> None:
        """The handler stopped waiting for the answers (it got them, or gave up)."""
        self._input_waiters.pop(request_id, None)

    def expect_input(self, request_id: RequestId, waiter: Waiter) -> None:
        """The handler of `request_id` asked (`request_input`) and waits in place:
        `waiter` gets the round's `InputReceived`, or the closed error."""
        self.check_open()
        if self._input_waiters is _EMPTY:
            self._input_waiters = {}
        self._input_waiters[request_id] = waiter

    # ------------------------------------------------------------- closing

    def close(self, reason: str = "closed locally", *, tell_peer: bool = False) -> None:
        """End the connection locally; everything in flight is settled.

        `tell_peer`: first cancel each of our requests still waiting
        (`notifications/cancelled`, written before the stream closes), so the
        peer stops working on them. A stdio server answers what is in flight
        when its input ends; told, it has nothing left and exits at once.
        """
        if self.closed is not None:
            return
        if tell_peer:
            for rid in list(self._pending):
                # initialize cannot be cancelled: the close ends it anyway.
                with contextlib.suppress(LocalProtocolError):
                    self.connection.cancel_request(rid, reason)
        self.dispatch(self.connection.close(reason))

    def check_open(self) -> None:
        if self.closed is not None:
            raise self.closed_error(self.closed)

    def closed_error(self, event: ConnectionClosed) -> ConnectionClosedError:
        error = ConnectionClosedError(f"Connection closed: {event.reason}", error=event.error)
        error.__cause__ = self.cause or event.error
        return error

    @property
    def pending_requests(self) -> int:
        return len(self._pending)

    @property
    def running_handlers(self) -> int:
        return len(self._inbound)

    def answers_due(self) -> bool:
        """Requests of the peer are still being handled and none waits on the peer.

        What a server whose input ended asks before closing: its handlers may
        still answer, unless one waits for an answer that can no longer come.
        A listen stream is no answer due: it would only end with the peer.
        """
        if self._pending:
            return False
        return any(rid not in self._streams for rid in self._inbound)

    # ------------------------------------------------------------ dispatch

    def dispatch(self, events: Iterable[Event]) -> None:
        """Route one batch of events from the connection."""
        events = events if type(events) is list else list(events)
        if len(events) == 1:
            # Nearly always (one message read, one event): the loops below for a batch of
            # one, without them. The same order: the observer, then the route.
            event = events[0]
            kind = type(event)
            if self._on_event is not None and (
                kind is not ResponseReceived or self.observe_responses
            ):
                try:
                    self._on_event(event)
                except Exception:
                    logger.exception("on_event callback failed")
            route = _ROUTES.get(kind)
            if route is not None:
                route(self, event, event if type(event) is ConnectionClosed else None)
            return
        closing = None
        for event in events:
            if type(event) is ConnectionClosed:
                closing = event
        routes = _ROUTES
        for event in events:
            if self._on_event is not None and (
                type(event) is not ResponseReceived or self.observe_responses
            ):
                try:
                    self._on_event(event)
                except Exception:
                    logger.exception("on_event callback failed")
            route = routes.get(type(event))
            if route is not None:
                route(self, event, closing)

    def receive(self, events: list[Any]) -> None:
        """A driver's event sink: `SessionState._on_events` (with `driver`), and for a
        batch of one event `dispatch` with the routes of the two events of every call
        (`_response`, `_request`) written in: the sink, the dispatch and the route were
        three calls per message, and every in-process call delivers two.

        The same steps in the same order as those four functions; keep them alike.
        """
        driver = self.driver
        assert driver is not None
        # (`driver.error`, read where the driver keeps it: see `failures`)
        error = (self.failures or driver).error
        if error is not None and self.cause is None:
            self.cause = error
        if len(events) != 1:
            self.dispatch(events)
        else:
            event = events[0]
            kind = type(event)
            if self._on_event is not None and (
                kind is not ResponseReceived or self.observe_responses
            ):
                try:
                    self._on_event(event)
                except Exception:
                    logger.exception("on_event callback failed")
            if kind is ResponseReceived:  # (`_response`)
                pending = self._pending.pop(event.request_id, None)
                if pending is not None:
                    if not self._pending:
                        self._pending = _EMPTY
                    pending[0].set_result(event.result)
            elif kind is RequestReceived:  # (`_request`)
                handle = self._spawn(event)
                if handle is not None:  # None: answered already, without a task
                    self._track(event, handle)
            else:
                route = _ROUTES.get(kind)
                if route is not None:
                    route(self, event, event if kind is ConnectionClosed else None)
        if self.closed is not None:
            driver.finish()

    def _response(self, event: ResponseReceived, closing: ConnectionClosed | None) -> None:
        pending = self._pending.pop(event.request_id, None)
        if pending is not None:
            if not self._pending:
                self._pending = _EMPTY
            pending[0].set_result(event.result)

    def _failure(
        self, event: ErrorReceived | RequestFailed, closing: ConnectionClosed | None
    ) -> None:
        pending = self._pending.pop(event.request_id, None)
        if pending is not None:
            if not self._pending:
                self._pending = _EMPTY
            if closing is not None and type(event) is RequestFailed:
                exc: Exception = self.closed_error(closing)
            else:
                exc = error_for_event(event)
            pending[0].set_exception(exc)

    def _progress(self, event: ProgressReceived, closing: ConnectionClosed | None) -> None:
        entry = self._pending.get(event.request_id)
        if entry is not None and entry[1] is not None:
            try:
                entry[1](event)
            except Exception:
                logger.exception("progress callback failed")

    def _request(
        self, event: RequestReceived | InputReceived, closing: ConnectionClosed | None
    ) -> None:
        handle = self._spawn(event)
        if handle is not None:  # None: answered already, without a task
            self._track(event, handle)

    def _track(self, event: RequestReceived | InputReceived, handle: Cancellable) -> None:
        """A handler still running: its cancellation goes to `handle`."""
        if self._inbound is _EMPTY:
            self._inbound = {}
        self._inbound[event.request_id] = handle
        if event.method == "subscriptions/listen":
            if self._streams is _EMPTY:
                self._streams = {}
            self._streams[event.request_id] = None

    def _input(self, event: InputReceived, closing: ConnectionClosed | None) -> None:
        waiter = self._input_waiters.pop(event.request_id, None)
        if waiter is not None:
            waiter.set_result(event)  # the handler that asked continues where it was
        else:
            self._request(event, closing)  # nobody waits: run it like the request again

    def _cancelled(self, event: RequestCancelled, closing: ConnectionClosed | None) -> None:
        self._input_waiters.pop(event.request_id, None)  # the engine withdrew the questions
        handle = self._inbound.pop(event.request_id, None)
        self._streams.pop(event.request_id, None)
        if handle is not None:
            handle.cancel()

    def _notification(self, event: NotificationReceived, closing: ConnectionClosed | None) -> None:
        if self._on_notification is not None:
            try:
                self._on_notification(event)
            except Exception:
                logger.exception("notification callback failed")

    def _connected(self, event: Connected, closing: ConnectionClosed | None) -> None:
        self.connected = event
        if self._handshake is not None:
            self._handshake.set_result(event)
            self._handshake = None

    def _started(self, event: SessionStarted, closing: ConnectionClosed | None) -> None:
        on_started = self._on_started
        if on_started is not None:
            self._on_started = None
            on_started()

    def _rejected(self, event: MessageRejected, closing: ConnectionClosed | None) -> None:
        # The engine answered it (when it could) and went on; say so where an operator
        # looks, since a stdio server has no other voice than stderr.
        about = f" (id {event.request_id!r})" if event.request_id is not None else ""
        logger.warning("refused a message from the peer%s: %s", about, event.message)

    def _closed(self, event: ConnectionClosed, closing: ConnectionClosed | None) -> None:
        if event.error is not None:
            logger.warning("connection failed: %s", event.reason)
        self._settle(event)

    def _settle(self, event: ConnectionClosed) -> None:
        self.closed = event
        pending, self._pending = self._pending, _EMPTY
        for entry in pending.values():
            entry[0].set_exception(self.closed_error(event))
        if self._handshake is not None:
            self._handshake.set_exception(self.closed_error(event))
            self._handshake = None
        waiting, self._input_waiters = self._input_waiters, _EMPTY
        for waiter in waiting.values():
            waiter.set_exception(self.closed_error(event))
        inbound, self._inbound = self._inbound, _EMPTY
        self._streams = _EMPTY
        for handle in inbound.values():
            handle.cancel()


# Exact event types (events are final dataclasses), so a dict lookup replaces an
# isinstance chain on the per-message path.
_ROUTES: dict[type, Callable[[SessionCore, Any, ConnectionClosed | None], None]] = {
    ResponseReceived: SessionCore._response,
    ErrorReceived: SessionCore._failure,
    RequestFailed: SessionCore._failure,
    ProgressReceived: SessionCore._progress,
    RequestReceived: SessionCore._request,
    InputReceived: SessionCore._input,
    RequestCancelled: SessionCore._cancelled,
    NotificationReceived: SessionCore._notification,
    Connected: SessionCore._connected,
    SessionStarted: SessionCore._started,
    MessageRejected: SessionCore._rejected,
    ConnectionClosed: SessionCore._closed,
}


class _Driving(Protocol):
    """What a session's driver (async, link or blocking) shows the shared half."""

    @property
    def error(self) -> TransportError | None: ...

    def finish(self) -> None: ...

    def wake(self) -> None: ...


class SessionState:
    """The state every stream session shows (async and blocking), read from its
    `SessionCore` (`_core`) and its driver (`_driver`), which the session sets;
    and the two steps both kinds take the same way: routing a batch of events
    from the driver, and handing a notification to the application."""

    __slots__ = ()  # (the sessions hold their state in slots of their own)

    _core: SessionCore
    _driver: _Driving
    _on_notification: Callable[[Any, NotificationReceived], None] | None

    @property
    def connection(self) -> Connection:
        return self._core.connection

    @property
    def connected(self) -> Connected | None:
        return self._core.connected

    @property
    def closed(self) -> bool:
        return self._core.closed is not None

    @property
    def transport_error(self) -> TransportError | None:
        return self._driver.error

    @property
    def observe_responses(self) -> bool:
        """Whether the `on_event` observer sees `ResponseReceived` events (True unless
        turned off: see `SessionCore.observe_responses`)."""
        return self._core.observe_responses

    @observe_responses.setter
    def observe_responses(self, observe: bool) -> None:
        self._core.observe_responses = observe

    def _on_events(self, events: list[Any]) -> None:
        """The driver's event sink: route the batch; a closed connection ends the driver."""
        if self._driver.error is not None and self._core.cause is None:
            self._core.cause = self._driver.error
        self._core.dispatch(events)
        if self._core.closed is not None:
            self._driver.finish()

    def _notification(self, event: NotificationReceived) -> None:
        assert self._on_notification is not None
        self._on_notification(self, event)

    def _notifications(self) -> Callable[[NotificationReceived], None] | None:
        """The core's `on_notification`: ours when the application gave one."""
        return self._notification if self._on_notification is not None else None


__all__ = [
    "ANSWERED",
    "AwaitThen",
    "Cancellable",
    "Outcome",
    "ProgressCallback",
    "SessionCore",
    "SessionState",
    "Waiter",
]
