"""The HTTP server's clocks when answers are written outside `receive_data`.

An adapter answers after `receive_data` returned (a handler ran meanwhile), so the
response goes out from `endpoint.pump()`. With `pump(now=...)` what it writes is
stamped then: the keep-alive idle timer and a session's idle time start at once,
and `next_deadline()` asks for no extra tick. Without a clock the old contract
holds: the timers start at the next tick, which `next_deadline()` asks for at once.
Also `endpoint.deadline_moved`, which lets a loop re-arm the endpoint timer only
when a deadline came earlier.
"""

from __future__ import annotations

from mcp_core import RequestReceived
from mcp_core._http_server import HTTPLimits
from tests.core.test_http_server import (
    Server,
    http_request,
    modern_call,
    modern_headers,
    parse_responses,
    received,
    rpc,
)


def _answer_later(server: Server, now: float | None) -> tuple[float | None, bytes]:
    """A 2026-07-28 call answered after receive_data, pumped with `now`."""
    http = server.conn()
    body = modern_call(1, "tools/list")
    events = http.receive_data(
        http_request(body=body, headers=modern_headers("tools/list")), now=1.0
    )
    ev = received(events)
    assert isinstance(ev.event, RequestReceived)
    ev.connection.send_result(ev.event.request_id, {"tools": []})
    if now is None:
        ready = server.endpoint.pump(ev.connection)
    else:
        ready = server.endpoint.pump(ev.connection, now=now)
    assert http in ready
    return http.next_deadline(), http.data_to_send()


def test_an_answer_pumped_with_now_starts_the_idle_timer_then() -> None:
    server = Server(limits=HTTPLimits(idle_timeout=60.0))
    deadline, out = _answer_later(server, now=5.0)
    [resp] = parse_responses(out)
    assert resp.status == 200
    assert deadline == 5.0 + 60.0  # no tick needed to start it


def test_an_answer_pumped_without_now_asks_for_a_tick() -> None:
    server = Server(limits=HTTPLimits(idle_timeout=60.0))
    deadline, out = _answer_later(server, now=None)
    [resp] = parse_responses(out)
    assert resp.status == 200
    assert deadline == float("-inf")


def test_a_legacy_session_going_idle_moves_the_endpoint_deadline() -> None:
    server = Server(limits=HTTPLimits(session_idle_timeout=100.0))
    assert server.endpoint.next_deadline() is None
    assert not server.endpoint.deadline_moved
    sid = server.initialize()
    assert server.endpoint.deadline_moved  # idle since 0.0: a deadline where none was
    assert server.endpoint.next_deadline() == 100.0
    assert not server.endpoint.deadline_moved

    http = server.conn()
    events = http.receive_data(
        http_request(body=rpc(2, "tools/list"), headers=server.session_headers(sid)), now=10.0
    )
    ev = received(events)
    ev.connection.send_result(2, {"tools": []})
    server.endpoint.pump(ev.connection, now=20.0)
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 200
    # Idle again since 20.0: later than the armed 100.0, so no re-arm is needed ...
    assert not server.endpoint.deadline_moved
    # ... and the deadline the timer finds when it wakes early is the new one.
    assert server.endpoint.next_deadline() == 120.0
