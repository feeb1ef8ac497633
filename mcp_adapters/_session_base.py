"""The one async `Session`: an MCP connection over one stream, on any `SessionBackend`.

`mcp_adapters.asyncio.Session` and `mcp_adapters.trio.Session` are this class
bound to their backend. What differs between the loops (how an outcome is
awaited, how tasks run and are cancelled, how a wait survives cancellation)
comes from `backends.SessionBackend`; the rest (the core and the driver it
owns, the state properties, the send verbs, routing a batch of events, the fast
path for requests answered where they arrive, the handshake, handlers and
shutdown) is written here once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Self, TypeVar

from mcp_adapters._driver import (
    CLOSE_TIMEOUT,
    CONNECT_TIMEOUT,
    PROBE_TIMEOUT,
    Driver,
    SansIOConnection,
)
from mcp_adapters._session import (
    ANSWERED,
    AwaitThen,
    Cancellable,
    Connection,
    RequestId,
    SessionCore,
    SessionState,
)
from mcp_adapters.backends import SessionBackend
from mcp_adapters.transports.link import LinkDriver, LinkEnd
from mcp_adapters.transports.process import ServerProcess
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
Work = Callable[[], Awaitable[None]]
RequestHandler = Callable[[Any, RequestReceived], Awaitable[Any]]
NotificationHandler = Callable[[Any, NotificationReceived], None]
EventObserver = Callable[[Event], None]


class Session(SessionState):
    """One MCP connection, client or server, over one byte stream (or a link end).

    Use it as an async context manager: entering starts the driver and, for a
    client, runs the handshake (`session.connected` holds the `Connected` event);
    leaving closes the connection, settles everything in flight and closes the
    stream. Inbound requests run as tasks calling `on_request(session, request)`:
    its return value is the result, an `MCPError` it raises is the error, and
    the task is cancelled when the peer cancels or the connection ends. On asyncio
    the task's first step runs at once, where the request arrived (as the task:
    `backends._eager`), so a handler that never suspends answers without a loop turn.
    `on_notification` and `on_event` are plain callbacks run in the reader;
    they must not block. Not thread-safe: use it from its loop only.
    `drain_on_eof=True` (a server's option): when the input ends, the requests
    in flight are still answered before the connection closes.
    """

    # Slots: a server holds one of these per client for as long as it is connected
    # (an instance dict was about 350 bytes of every idle session). `__weakref__`
    # for whoever watches a session without keeping it.
    __slots__ = (
        "__weakref__",
        "_backend",
        "_cancelled",
        "_connect_timeout",
        "_core",
        "_done",
        "_driver",
        "_ended",
        "_main_less",
        "_now",
        "_on_notification",
        "_on_request",
        "_probe_timeout",
        "_starting",
        "_tasks",
        # The session's connection, as `SessionState.connection` gives it (its core's,
        # fixed for the session's life) but as a plain slot: `MCPServer.handle_now`
        # reads it on every request, and a property is a Python call.
        "connection",
        "process",
    )

    connection: Connection  # (the slot above, over `SessionState`'s property)

    def __init__(
        self,
        connection: Connection,
        stream: Any,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        on_event: EventObserver | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        probe_timeout: float = PROBE_TIMEOUT,
        close_timeout: float = CLOSE_TIMEOUT,
        layer: SansIOConnection | None = None,
        drain_on_eof: bool = False,
        backend: SessionBackend | None = None,
    ) -> None:
        # `layer`: a sans-IO object wrapping `connection` (the WebSocket layer, say)
        # that the driver reads and writes instead of the connection itself.
        # `backend`: None takes the one the class is bound to (see `loop_backend`).
        if backend is None:
            backend = self.loop_backend()
        self._backend = backend
        self._cancelled = backend.cancelled
        self._tasks = backend.tasks()
        # Made when someone waits for the end (`wait_closed`): an event is a future
        # (about 200 bytes) that most sessions would carry unread until they close.
        self._done: Any = None
        self._ended = False
        # No main task (an asyncio link session; set on entering): True until its end
        # has run (`_link_ended`), then None.
        self._main_less: bool | None = False
        #: The server process, for a session made by `connect_stdio`.
        self.process: ServerProcess | None = None
        self._on_request = on_request
        # A handler's fast path for requests it can answer without a task:
        # `now(request, session, handler.scope_of)` (`ServerHandler.now`: the handler
        # says how a request's scope is made from this session, when one is needed).
        self._now: Callable[[RequestReceived, Any, Any], Work | None] | None = getattr(
            on_request, "now", None
        )
        #: A handler task is being started (`_spawn`): its first step, run eagerly in
        #: the stack of the batch that brought the request, needs no wake of its own.
        self._starting = False
        self._on_notification = on_notification
        self._connect_timeout = connect_timeout
        self._probe_timeout = probe_timeout
        # A server that announces changes learns of a legacy session when its `initialize`
        # is accepted (before anything else in that batch), not at construction: the era
        # is not known yet, and a 2026-07-28 session hears of changes only on a
        # `subscriptions/listen` stream, whose request attaches it (`MCPServer.handle`).
        # Attaching every session cost its connection an instance dict, a scope and a
        # weak reference with its callback (about 0.3 KB a session).
        self.connection = connection
        self._core = SessionCore(
            connection,
            spawn=self._spawn,
            on_notification=self._notifications(),
            on_event=on_event,
            on_started=(
                self._attach_to_server
                if getattr(type(on_request), "attach", None) is not None
                else None
            ),
        )
        sansio = layer if layer is not None else connection
        # The driver's event sink is the core's `receive` (`_on_events` and the routing
        # in one call), which finds the driver in `core.driver`.
        self._driver: Driver | LinkDriver
        if isinstance(stream, LinkEnd):
            self._driver = LinkDriver(sansio, stream, self._core.receive, backend=backend)
        else:
            self._driver = Driver(
                sansio,
                stream,
                self._core.receive,
                backend=backend,
                close_timeout=close_timeout,
                hold_eof=self._core.hold_eof(drain_on_eof),
            )
        self._core.driver = self._driver
        # (`Driver.error` is its core's: `receive` reads it there, without the property)
        self._core.failures = getattr(self._driver, "core", None)

    def _attach_to_server(self) -> None:
        """Let a server that announces changes know of this legacy session from its
        `initialize` on, so a change announced right after it reaches the session."""
        attach = getattr(self._on_request, "attach", None)
        if attach is not None:
            attach(self)

    @staticmethod
    def loop_backend() -> SessionBackend:
        """The backend of the running loop; `asyncio.Session` and `trio.Session` say which."""
        raise TypeError("this Session is bound to no backend: pass backend=")

    # ---- lifetime

    async def __aenter__(self) -> Self:
        await self._tasks.__aenter__()
        driver = self._driver
        # A link session on asyncio has no main task: nothing is read, the link delivers
        # in the caller's stack, and its end comes back as a callback (`_link_ended`).
        self._main_less = isinstance(driver, LinkDriver) and driver.end_without_task(
            self._link_ended
        )
        if not self._main_less:
            self._tasks.start_main(self._run)
        try:
            connection = self._core.connection
            if isinstance(connection, ClientConnection) and connection.state == State.IDLE:
                await self._handshake()
        except BaseException:
            await self._shutdown("handshake failed")
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._shutdown()

    async def _shutdown(self, reason: str = "closed locally") -> None:
        try:
            await self.aclose(reason)
        finally:
            # Every task of ours has ended, so a nursery closes without the body's
            # exception: the caller sees it as raised, not wrapped in a group.
            await self._tasks.__aexit__(None, None, None)

    async def _handshake(self) -> None:
        waiter = self._backend.waiter()
        self._core.connect(waiter, deadline=self._driver.now() + self._probe_timeout)
        self._driver.wake()
        done = getattr(waiter, "done", None)
        if done is not None and done():
            # Answered in the wake (an in-process link): no limit to arm. (Armed and left,
            # its cancelled timer stayed in the loop's heap until the loop next turned.)
            await waiter.wait()
            return
        limit = self._backend.limit()
        limit.move_to(self._driver.now() + self._connect_timeout)
        async with limit:
            await waiter.wait()
        if limit.expired:
            raise self._core.handshake_timeout()

    async def _run(self) -> None:
        try:
            await self._driver.run()
        finally:
            self._core.close("transport closed")  # settles anything still waiting
            await self._tasks.stop()  # what is left of the handlers and callbacks
            self._ended = True
            if self._done is not None:
                self._done.set()

    def _link_ended(self) -> None:
        """What `_run` does when its driver returns, for a session with no main task: the
        waiters are settled now, and the handlers left are cancelled and waited for in a
        task made only if there are any (`Tasks.end_without_main`). Called by the link's
        timer on the turn after the link ended, or sooner by `aclose`; once."""
        if not self._main_less:
            return  # ended already
        self._main_less = None
        driver = self._driver
        assert isinstance(driver, LinkDriver)
        driver.detach()
        self._core.close("transport closed")
        self._tasks.end_without_main(self._set_ended)  # type: ignore[attr-defined]

    def _set_ended(self) -> None:
        self._ended = True
        if self._done is not None:
            self._done.set()

    async def aclose(self, reason: str = "closed locally") -> None:
        """Close the connection: waiters fail (the peer is told), handlers are cancelled,
        the stream is closed."""
        self._core.close(reason, tell_peer=True)
        self._driver.finish()
        self._link_ended()  # (no main task: its end now, not on the next loop turn)
        await self._tasks.join_main()

    async def wait_closed(self) -> None:
        """Wait until the connection ends (the peer closed it, or `aclose`)."""
        if self._ended:
            return
        if self._done is None:
            self._done = self._backend.event()
        await self._done.wait()

    # ---- state: `connection`, `connected`, `closed`, `transport_error` (SessionState)

    # ---- sending

    def wake(self) -> None:
        """Flush what was queued on `session.connection` directly (e.g. an InputRequiredResult)."""
        self._driver.wake()

    def apply(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn(connection)` for a core verb this class does not wrap, then flush."""
        self._core.check_open()
        try:
            return fn(self._core.connection)
        finally:
            self._driver.wake()

    async def notify(
        self, method: str, params: Any = None, *, related_request_id: RequestId | None = None
    ) -> None:
        await self._driver.drain()
        self._core.notify(method, params, related_request_id=related_request_id)
        self._driver.wake()

    async def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Progress on a request the peer sent us; False when it did not ask for any."""
        await self._driver.drain()
        sent = self._core.send_progress(request_id, progress, total, message)
        self._driver.wake()
        return sent

    async def send_log(
        self,
        level: str,
        data: Any,
        *,
        logger: str | None = None,
        related_request_id: RequestId | None = None,
    ) -> bool:
        """Server side: `notifications/message`, if the client's level lets it through."""
        self._core.log_connection()  # a client is refused before any wait
        await self._driver.drain()
        sent = self._core.send_log(
            level, data, logger=logger, related_request_id=related_request_id
        )
        self._driver.wake()
        return sent

    def spawn(self, awaitable: Awaitable[Any]) -> None:
        """Run a callback coroutine alongside the session; it ends with the session."""
        self._tasks.start(_logged, awaitable)

    async def request(
        self,
        method: str,
        params: Any = None,
        timeout: float | None = None,
        on_progress: Callable[[ProgressReceived], None] | None = None,
        related_request_id: RequestId | None = None,
    ) -> Any:
        """Send a request and return its validated result model.

        Raises `MCPError` for the peer's error, `RequestTimeoutError` once
        `timeout` seconds pass (the peer is told to cancel), `ConnectionClosedError`
        when the connection ends first. Cancelling the caller cancels the request.

        (`timeout`, `on_progress` and `related_request_id` may be passed by position:
        `Client.call_tool` does, on every call, and CPython matches a keyword, or fills
        a keyword-only default, by name.)
        """
        driver = self._driver
        if driver.busy:
            await driver.drain()
        waiter = self._backend.waiter()
        deadline = None if timeout is None else driver.now() + timeout
        rid = self._core.start_request(
            method, params, waiter, deadline, on_progress, related_request_id
        )
        driver.wake()
        early = waiter.early
        if early is not None:
            # Answered in the wake (in process, a plain tool) on a backend whose wait
            # would not have suspended: the outcome without a future (see `Waiter`).
            if early[0]:
                return early[1]
            raise early[1]
        try:
            return await waiter.wait()
        except self._cancelled:
            self._core.cancel_request(rid, "cancelled by the caller")
            driver.wake()
            raise

    # ---- asking (a legacy server's handler waiting in place for its answers)

    def expect_input(self, request_id: RequestId, waiter: Any) -> None:
        self._core.expect_input(request_id, waiter)

    def forget_input(self, request_id: RequestId) -> None:
        self._core.forget_input(request_id)

    # ---- inbound

    def receive_events(self, events: list[Any]) -> None:
        """Route events the layer gave outside a read, then flush: the WebSocket
        layer's answer to a token verification (its 101 or refusal, and the frames
        that waited behind it) comes back through the application, not the socket."""
        self._on_events(events)
        self._driver.wake()

    def _spawn(self, event: RequestReceived) -> Cancellable | None:
        """Answer the request where it arrived when the handler can (`now`: None then);
        else run it in a task, started eagerly: a handler that never suspends (an `async
        def` tool awaiting nothing) answers here too, as a plain one does, and None
        comes back as nothing is left to cancel. (One function: a helper that decided
        between the two was one call more per request.)"""
        work: Work | None = None
        if self._now is not None and not self._driver.busy:
            try:
                work = self._now(event, self, self._on_request.scope_of)  # type: ignore[union-attr]
            except Exception as exc:
                self._core.answer_exception(event.request_id, exc)
                work = None
            if work is None:
                # Answered: the answer waits on the connection for whoever routed this
                # batch of events, which writes once the batch is routed
                # (`Driver._pushed` and `_read_loop` wake after every read, the link's
                # pump moves what a delivery left queued, `receive_events` wakes). A wake
                # here was a second one per request: one more look at the connection's
                # output and deadline.
                return None
        # (work None: call `on_request`)
        self._starting = True
        try:
            return self._tasks.start_eager(self._handle(event, work), _HANDLER_TASK)
        finally:
            self._starting = False

    async def _handle(self, event: RequestReceived, work: Work | None) -> None:
        rid = event.request_id
        try:
            if isinstance(work, AwaitThen):
                # `AwaitThen.__call__`, written in: the awaitable (a coroutine tool's
                # own coroutine) is awaited in this frame, not in one more coroutine of
                # its own. The same steps in the same order; keep the two alike.
                awaitable = work.start()
                if awaitable is not None:
                    try:
                        value = await awaitable
                    except work.catch as exc:
                        work.failed(exc)
                    else:
                        work.then(value)
                result = ANSWERED
            elif work is not None:
                await work()
                result = ANSWERED
            elif self._on_request is None:
                raise self._core.unhandled(event)
            else:
                result = await self._on_request(self, event)
            driver = self._driver
            if driver.busy:  # (a link never is: no coroutine to make and run per answer)
                await driver.drain()
        except self._cancelled:
            self._core.forget(rid)  # the peer gave up, or the connection ended
            raise
        except Exception as exc:
            self._core.answer_exception(rid, exc)
        else:
            if result is ANSWERED:
                if not self._starting:
                    self._core.forget(rid)
                # (else: ended in its first step, run eagerly by `_spawn`, before the
                # core recorded a handle for it; and a legacy ask forgets its own waiter
                # when it ends: there is nothing of it to forget)
            else:
                self._core.answer(rid, result)
        if not self._starting:
            # (Answered in the task's first step, run eagerly by `_spawn`: the batch's
            # router writes it, as for an answer given in place.)
            self._driver.wake()


#: The name of a handler's task (`_spawn`), as anyio would name it after its function:
#: made once, not read off the bound method per task.
_HANDLER_TASK = "Session._handle"


async def _logged(awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except Exception:
        logger.exception("callback failed")


#: The old name of the shared half, now the whole session.
SessionBase = Session

__all__ = ["EventObserver", "NotificationHandler", "RequestHandler", "Session", "SessionBase"]
