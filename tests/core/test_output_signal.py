"""The output signal: `output_pending` and `deadline_moved`, for a loop that sends
from outside event handling (a callback, another task) and must then flush and
re-arm its timer."""

from __future__ import annotations

import math

from mcp_core import ClientConfig, ErrorReceived, RequestReceived
from mcp_core._requests import NO_QUEUED
from mcp_core.testing import ConnectionPair

from .engine_support import MODERN, feed, legacy_server, of_type, out, request


def test_output_pending_follows_the_buffer() -> None:
    conn = legacy_server()
    assert conn.output_pending is False
    feed(conn, request(1, "tools/call", {"name": "t"}))
    assert conn.output_pending is False  # nothing to say until the application answers
    feed(conn, request(2, "ping"))
    assert conn.output_pending is True  # the engine answered the ping by itself
    out(conn)
    assert conn.send_result(1, {"content": []})
    assert conn.output_pending is True
    assert [m["id"] for m in out(conn)] == [1]
    assert conn.output_pending is False
    assert conn.messages_to_send() == []


def test_deadline_moved_until_the_timer_is_re_armed() -> None:
    conn = legacy_server(client_caps={"roots": {}})
    assert conn.next_deadline() is None
    assert conn.deadline_moved is False
    conn.send_request("roots/list")  # no deadline: the armed timer stays right
    assert conn.deadline_moved is False
    conn.send_request("roots/list", deadline=50.0)
    assert conn.deadline_moved is True
    assert conn.deadline_moved is True  # asking does not reset it ...
    assert conn.next_deadline() == 50.0  # ... re-arming does
    assert conn.deadline_moved is False
    conn.send_request("roots/list", deadline=10.0)
    assert conn.deadline_moved is True
    out(conn)  # draining output is not re-arming
    assert conn.deadline_moved is True
    assert conn.next_deadline() == 10.0
    conn.tick(10.0)
    assert conn.deadline_moved is False  # a deadline that went away needs no re-arm
    assert conn.next_deadline() == 50.0


def test_a_client_answer_that_fails_a_call_moves_the_deadline() -> None:
    """A refused 2026-07-28 input request fails its call on the next tick():
    next_deadline() becomes minus infinity, and the signal says so."""
    pair = ConnectionPair(client_config=ClientConfig(mode=MODERN, capabilities={"roots": {}}))
    pair.connect()
    cid = pair.client.send_request("tools/call", {"name": "t"})
    _, server_events = pair.pump()
    (call,) = of_type(server_events, RequestReceived)
    pair.server.send_input_required(call.request_id, {"r": {"method": "roots/list"}}, "s")
    client_events, _ = pair.pump()
    (asked,) = of_type(client_events, RequestReceived)
    assert pair.client.next_deadline() is None
    assert pair.client.send_error(asked.request_id, -32603, "no roots today")
    assert pair.client.deadline_moved is True
    assert pair.client.next_deadline() == -math.inf
    assert pair.client.deadline_moved is False
    assert pair.client.tick(0.0) == [
        ErrorReceived(cid, "tools/call", -32603, "no roots today", None)
    ]


def test_payloads_to_send_gives_the_bytes_and_keeps_the_queue_cheap() -> None:
    """`payloads_to_send` hands over each message's bytes, as `messages_to_send`'s
    `payload`s, in order, whatever form the queue was in, and empties the buffer."""
    a, b = legacy_server(), legacy_server()
    for conn in (a, b):
        feed(conn, request(1, "tools/call", {"name": "t"}))
        feed(conn, request(2, "ping"))
        conn.send_result(1, {"content": []})
    assert a.payloads_to_send() == [m.payload for m in b.messages_to_send()]
    assert a.output_pending is False
    assert a.payloads_to_send() == []
    a.check_invariants()
    # After this drain the buffer is the shared empty one and what comes next is
    # queued as tuples (no record per message); a queue of records (after
    # `messages_to_send`) gives its payloads too.
    assert a._outgoing is NO_QUEUED
    feed(a, request(3, "ping"))
    feed(b, request(3, "ping"))
    assert type(a._outgoing[0]) is tuple
    assert type(b._outgoing[0]) is not tuple
    assert a.payloads_to_send() == b.payloads_to_send()
    for conn in (a, b):
        conn.check_invariants()
        assert conn._outgoing_bytes == 0
