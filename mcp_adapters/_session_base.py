"""`SessionBase`: the half of a backend session that does not depend on the backend.

The asyncio and trio sessions differ in how they wait (futures or events), run
handlers (tasks or a nursery) and shut down. Everything else (the core and the
driver they own, the state properties, the send verbs, routing a batch of
events, the fast path for requests answered where they arrive) is the same
code, kept here once. No I/O happens here beyond what the driver is told.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcp_adapters._driver import Driver, SansIOConnection
from mcp_adapters._errors import TransportError
from mcp_adapters._session import Connection, RequestId, SessionCore
from mcp_adapters.backends import Backend
from mcp_adapters.transports.link import LinkDriver, LinkEnd
from mcp_core import Connected, NotificationReceived, RequestReceived, ServerConnection

T = TypeVar("T")
Work = Callable[[], Awaitable[None]]


class SessionBase:
    """Shared by `mcp_adapters.asyncio.Session` and `mcp_adapters.trio.Session`."""

    def __init__(
        self,
        connection: Connection,
        stream: Any,
        *,
        on_request: Any,
        on_notification: Any,
        on_event: Any,
        connect_timeout: float,
        probe_timeout: float,
        close_timeout: float,
        layer: SansIOConnection | None,
        backend: Backend,
        drain_on_eof: bool = False,
    ) -> None:
        # `layer`: a sans-IO object wrapping `connection` (the WebSocket layer, say)
        # that the driver reads and writes instead of the connection itself.
        self._on_request = on_request
        # A handler's fast path for requests it can answer without a task.
        self._now: Callable[[Any, RequestReceived], Work | None] | None = getattr(
            on_request, "now", None
        )
        self._on_notification = on_notification
        self._connect_timeout = connect_timeout
        self._probe_timeout = probe_timeout
        self._core = SessionCore(
            connection,
            spawn=self._spawn,
            on_notification=self._notification if on_notification is not None else None,
            on_event=on_event,
        )
        sansio = layer if layer is not None else connection
        self._driver: Driver | LinkDriver
        if isinstance(stream, LinkEnd):
            self._driver = LinkDriver(sansio, stream, self._on_events, backend=backend)
        else:
            self._driver = Driver(
                sansio,
                stream,
                self._on_events,
                backend=backend,
                close_timeout=close_timeout,
                hold_eof=self._core.answers_due if drain_on_eof else None,
            )

    def _attach_to_server(self) -> None:
        """Let a server that announces changes know of this session from the start."""
        attach = getattr(self._on_request, "attach", None)
        if attach is not None:
            attach(self)

    # ---- state

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
        self._core.check_open()
        sent = self._core.connection.send_progress(request_id, progress, total, message)
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
        connection = self._core.connection
        if not isinstance(connection, ServerConnection):
            raise TypeError("only a server sends log messages")
        await self._driver.drain()
        self._core.check_open()
        sent = connection.send_log(
            level, data, logger=logger, related_request_id=related_request_id
        )
        self._driver.wake()
        return sent

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

    def _on_events(self, events: list[Any]) -> None:
        if self._driver.error is not None and self._core.cause is None:
            self._core.cause = self._driver.error
        self._core.dispatch(events)
        if self._core.closed is not None:
            self._driver.finish()

    def _notification(self, event: NotificationReceived) -> None:
        assert self._on_notification is not None
        self._on_notification(self, event)

    def _start_now(self, event: RequestReceived) -> tuple[bool, Work | None]:
        """(True, None) when the request was answered where it arrived; else the work
        to run in a task (None: call `on_request`)."""
        if self._now is None or self._driver.busy:
            return False, None
        try:
            work = self._now(self, event)
        except Exception as exc:
            self._core.answer_exception(event.request_id, exc)
            work = None
        if work is None:
            self._driver.wake()
            return True, None
        return False, work

    def _spawn(self, event: RequestReceived) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError


__all__ = ["SessionBase"]
