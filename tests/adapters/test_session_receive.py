"""`SessionCore.receive`, a driver's event sink, against the steps it writes in (glue3).

`receive` is `SessionState._on_events` (the driver's error as the cause, the batch
routed, a closed connection finishing the driver) with `dispatch` and the response and
request routes written in for a batch of one event. Two cores in the same state are fed
the same batch, one through `receive` and one through those steps, and everything they
do is compared: the observer's calls, the waiters' outcomes, the handlers spawned and
cancelled, the driver finished, the tables and the cause left behind.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_adapters._errors import TransportError
from mcp_adapters._session import SessionCore
from mcp_core import (
    ClientConfig,
    ClientConnection,
    ConnectionClosed,
    ErrorReceived,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
)


class Log:
    """Everything one core did, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []


class Waiter:
    def __init__(self, log: Log, name: str) -> None:
        self.log, self.name = log, name

    def set_result(self, value: Any) -> None:
        self.log.calls.append(("result", self.name, value))

    def set_exception(self, exc: BaseException) -> None:
        self.log.calls.append(("error", self.name, type(exc).__name__, str(exc)))


class Handle:
    def __init__(self, log: Log, rid: Any) -> None:
        self.log, self.rid = log, rid

    def cancel(self) -> None:
        self.log.calls.append(("cancel", self.rid))


class Driver:
    def __init__(self, log: Log, error: TransportError | None) -> None:
        self.log, self.error = log, error

    def finish(self) -> None:
        self.log.calls.append(("finish",))

    def wake(self) -> None:
        self.log.calls.append(("wake",))


def core(log: Log, error: TransportError | None, *, observe: bool) -> SessionCore:
    def spawn(event: Any) -> Handle | None:
        log.calls.append(("spawn", event.request_id, event.method))
        return None if event.method == "ping" else Handle(log, event.request_id)

    def observer(event: Any) -> None:
        log.calls.append(("observed", type(event).__name__))
        if isinstance(event, MessageRejected):
            raise RuntimeError("an observer that fails is logged, not raised")

    def notified(event: Any) -> None:
        log.calls.append(("notified", event.method))

    c = SessionCore(
        ClientConnection(ClientConfig()),
        spawn=spawn,
        on_event=observer if observe else None,
        on_notification=notified,
    )
    c.driver = Driver(log, error)
    # Two requests of ours in flight (their waiters record), one with progress.
    pending = {1: (Waiter(log, "one"), None), 2: (Waiter(log, "two"), log_progress(log))}
    c._pending = pending
    return c


def log_progress(log: Log) -> Any:
    return lambda event: log.calls.append(("progress", event.progress))


def state(c: SessionCore) -> tuple[Any, ...]:
    return (
        sorted(c._pending),
        sorted(c._inbound),
        sorted(c._streams),
        c.closed,
        repr(c.cause),
    )


CLOSED = ConnectionClosed(reason="gone", abandoned_inbound=(), error=None)

BATCHES: list[list[Any]] = [
    [ResponseReceived(request_id=1, method="tools/call", result={"ok": 1})],
    [ResponseReceived(request_id=9, method="tools/call", result={"late": 1})],
    [ResponseReceived(request_id=2, method="tools/call", result=None)],
    [RequestReceived(request_id=5, method="tools/call", params=None, context=None)],
    [RequestReceived(request_id=6, method="ping", params=None, context=None)],
    [RequestReceived(request_id=7, method="subscriptions/listen", params=None, context=None)],
    [ErrorReceived(request_id=1, method="tools/call", code=-32000, message="no", data=None)],
    [RequestFailed(request_id=2, method="tools/call", code=-32001, message="timed out")],
    [ProgressReceived(request_id=2, progress=0.5, total=None, message=None)],
    [RequestCancelled(request_id=5, reason="changed my mind")],
    [NotificationReceived(method="notifications/message", params=None, subscription_id=None)],
    [MessageRejected(request_id=3, code=-32600, message="bad")],
    [CLOSED],
    # Batches of more than one event take `dispatch` itself.
    [
        ResponseReceived(request_id=1, method="tools/call", result={"ok": 1}),
        RequestReceived(request_id=5, method="tools/call", params=None, context=None),
    ],
    [RequestFailed(request_id=1, method="tools/call", code=-32001, message="closed"), CLOSED],
    [],
]


def through_the_steps(c: SessionCore, events: list[Any]) -> None:
    """`SessionState._on_events` with `dispatch`, as the driver's sink was before."""
    driver = c.driver
    assert driver is not None
    if driver.error is not None and c.cause is None:
        c.cause = driver.error
    c.dispatch(events)
    if c.closed is not None:
        driver.finish()


@pytest.mark.parametrize("observe", [False, True])
@pytest.mark.parametrize("error", [None, TransportError("broken pipe")])
@pytest.mark.parametrize("events", BATCHES)
def test_receive_does_what_the_sink_and_dispatch_did(
    events: list[Any], error: TransportError | None, observe: bool
) -> None:
    lane_log, general_log = Log(), Log()
    lane, general = (
        core(lane_log, error, observe=observe),
        core(general_log, error, observe=observe),
    )
    # A handler already running for request 5 (so a cancellation finds it).
    lane.receive([RequestReceived(request_id=5, method="tools/call", params=None, context=None)])
    through_the_steps(
        general, [RequestReceived(request_id=5, method="tools/call", params=None, context=None)]
    )
    lane.receive(list(events))
    through_the_steps(general, list(events))
    assert lane_log.calls == general_log.calls
    assert state(lane) == state(general)
    # And a second batch after it (a late answer, then a close) still agrees.
    lane.receive([ResponseReceived(request_id=2, method="tools/call", result={})])
    through_the_steps(general, [ResponseReceived(request_id=2, method="tools/call", result={})])
    lane.receive([CLOSED])
    through_the_steps(general, [CLOSED])
    assert lane_log.calls == general_log.calls
    assert state(lane) == state(general)


@pytest.mark.parametrize("events", BATCHES)
def test_an_observer_that_skips_responses_sees_everything_else(events: list[Any]) -> None:
    """`observe_responses` off: `receive` and `dispatch` alike call the observer for
    every event but a `ResponseReceived`, and route every event as before."""
    seen_log, skip_log, general_log = Log(), Log(), Log()
    seen = core(seen_log, None, observe=True)
    skip, general = core(skip_log, None, observe=True), core(general_log, None, observe=True)
    skip.observe_responses = general.observe_responses = False
    seen.receive(list(events))
    skip.receive(list(events))
    through_the_steps(general, list(events))
    assert skip_log.calls == general_log.calls
    assert skip_log.calls == [
        call for call in seen_log.calls if call != ("observed", "ResponseReceived")
    ]
    assert state(skip) == state(seen) == state(general)


def test_observing_responses_is_on_unless_turned_off() -> None:
    c = core(Log(), None, observe=True)
    assert c.observe_responses is True
