"""Requests in flight: ids, duplicates, stray responses, cancellation, progress, time, closing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_core import (
    CONNECTION_CLOSED,
    INVALID_REQUEST,
    REQUEST_TIMEOUT,
    ClientConfig,
    ClientConnection,
    ConnectionClosed,
    Era,
    ErrorReceived,
    Limits,
    LocalProtocolError,
    MCPError,
    MessageRejected,
    ProgressReceived,
    RemoteProtocolError,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ResponseIgnored,
    ResponseReceived,
    ServerConnection,
    State,
)
from mcp_core.testing import ConnectionPair

from .engine_support import (
    MODERN,
    error,
    feed,
    legacy_client,
    legacy_server,
    modern_client,
    modern_params,
    modern_server,
    notification,
    of_type,
    one,
    out,
    request,
    result,
    wire,
)

ERAS = ["2025-11-25", MODERN]


def pair_for(mode: str) -> ConnectionPair:
    pair = ConnectionPair(client_config=ClientConfig(mode=mode))
    pair.connect()
    return pair


def call_on_server(pair: ConnectionPair, method: str = "tools/call", **kw: Any) -> tuple[Any, Any]:
    """Client sends a request; returns (client id, the server's RequestReceived)."""
    params = kw.pop("params", {"name": "t"} if method == "tools/call" else None)
    rid = pair.client.send_request(method, params, **kw)
    _, server_events = pair.pump()
    return rid, one(server_events, RequestReceived)


# ------------------------------------------------------------------ ids


@pytest.mark.parametrize("mode", ["2025-11-25", "auto", MODERN])
def test_request_ids_are_unique_including_internal_requests(mode: str) -> None:
    seen: list[Any] = []
    pair = ConnectionPair(
        client_config=ClientConfig(mode=mode),
        tap=lambda direction, data: seen.extend(
            m["id"] for m in wire(data) if direction == "client->server" and "id" in m
        ),
    )
    pair.connect()
    method = "tools/list" if pair.client.era is Era.MODERN else "ping"
    ids = [pair.client.send_request(method) for _ in range(50)]
    pair.pump()
    assert len(set(ids)) == 50
    assert len(set(seen)) == len(seen)
    assert set(ids) <= set(seen)


def test_duplicate_in_flight_id_is_refused_and_the_first_completes() -> None:
    conn = legacy_server()
    events = feed(
        conn,
        request(1, "tools/call", {"name": "first"}),
        request(1, "tools/call", {"name": "second"}),
    )
    (received,) = of_type(events, RequestReceived)
    assert received.params.name == "first"
    assert out(conn) == [error(1, INVALID_REQUEST, "request id 1 is already in flight")]
    assert one(events, MessageRejected).request_id == 1
    assert conn.requests_in_flight == (0, 1)
    # The first request is answered normally, with its own payload, exactly once.
    assert conn.send_result(1, {"content": [{"type": "text", "text": "first"}]})
    assert out(conn) == [result(1, {"content": [{"type": "text", "text": "first"}]})]
    # Once answered, the id may be used again.
    events = feed(conn, request(1, "tools/call", {"name": "third"}))
    assert one(events, RequestReceived).params.name == "third"


def test_twelve_concurrent_requests_with_the_same_id() -> None:
    # python-sdk#3060: a client that sends every request with id 1.
    conn = legacy_server()
    events = feed(conn, *[request(1, "tools/call", {"name": f"n{i}"}) for i in range(12)])
    assert [e.params.name for e in of_type(events, RequestReceived)] == ["n0"]
    assert [m["error"]["code"] for m in out(conn)] == [INVALID_REQUEST] * 11
    conn.check_invariants()


def test_duplicate_id_on_a_modern_stream() -> None:
    conn = modern_server()
    feed(
        conn,
        request("x", "tools/call", modern_params({"name": "a"})),
        request("x", "tools/call", modern_params({"name": "b"})),
    )
    assert out(conn) == [error("x", INVALID_REQUEST, "request id 'x' is already in flight")]


def test_duplicate_server_request_id_at_the_client() -> None:
    conn = legacy_client(capabilities={"roots": {}})
    events = feed(conn, request(3, "roots/list"), request(3, "roots/list"))
    assert len(of_type(events, RequestReceived)) == 1
    assert out(conn) == [error(3, INVALID_REQUEST, "request id 3 is already in flight")]
    assert conn.send_result(3, {"roots": []})
    assert out(conn) == [result(3, {"roots": []})]


# --------------------------------------------------------- stray responses


def test_response_to_an_unknown_id_is_ignored_not_late() -> None:
    conn = legacy_client()
    events = feed(conn, result(12345, {}), error("nope", -1, "x"))
    assert events == [ResponseIgnored(12345, late=False), ResponseIgnored("nope", late=False)]
    assert out(conn) == []
    assert conn.state == State.READY


def test_response_with_the_right_number_as_a_string_is_not_ours() -> None:
    conn = legacy_client()
    rid = conn.send_request("ping")
    assert feed(conn, result(str(rid), {})) == [ResponseIgnored(str(rid), late=False)]
    assert conn.requests_in_flight == (1, 0)


@pytest.mark.parametrize("mode", ERAS)
def test_response_after_cancel_is_late(mode: str) -> None:
    pair = pair_for(mode)
    rid, received = call_on_server(pair)
    pair.client.cancel_request(rid, "user gave up")
    # A race: the server answered before it saw the cancel.
    pair.server.send_result(received.request_id, {"content": []})
    client_events, server_events = pair.pump()
    assert client_events == [ResponseIgnored(rid, late=True)]
    # The server's own application already answered, so the cancel finds nothing.
    assert server_events == []


@pytest.mark.parametrize("mode", ERAS)
def test_cancellation_reaches_the_server_and_silences_it(mode: str) -> None:
    pair = pair_for(mode)
    rid, received = call_on_server(pair, progress=True)
    pair.client.cancel_request(rid, "user gave up")
    sent = pair.client.data_to_send()
    assert wire(sent) == [
        notification("notifications/cancelled", {"requestId": rid, "reason": "user gave up"})
    ]
    server_events = pair.server.receive_data(sent)
    assert server_events == [RequestCancelled(received.request_id, "user gave up")]
    # After the cancel nothing more goes out for that request.
    assert pair.server.send_result(received.request_id, {"content": []}) is False
    assert pair.server.send_error(received.request_id, -32603, "boom") is False
    assert pair.server.send_progress(received.request_id, 1.0) is False
    assert pair.server.data_to_send() == b""
    assert pair.server.requests_in_flight == (0, 0)
    assert pair.client.requests_in_flight == (0, 0)
    # Cancelling twice is harmless.
    pair.client.cancel_request(rid)
    assert pair.client.data_to_send() == b""


def test_server_cancels_its_own_request_to_the_client() -> None:
    pair = ConnectionPair(client_config=ClientConfig(mode="2025-06-18", capabilities={"roots": {}}))
    pair.connect()
    sid = pair.server.send_request("roots/list")
    client_events, _ = pair.pump()
    received = one(client_events, RequestReceived)
    pair.server.cancel_request(sid, "never mind")
    client_events, _ = pair.pump()
    assert client_events == [RequestCancelled(received.request_id, "never mind")]
    assert pair.client.send_result(received.request_id, {"roots": []}) is False
    assert pair.client.data_to_send() == b""


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"requestId": 999},
        {"requestId": None},
        {"requestId": 1.5},
        {"requestId": "init"},
        {"requestId": 1, "reason": 5},
    ],
)
def test_unknown_malformed_or_late_cancels_are_ignored(params: Any) -> None:
    conn = legacy_server()
    feed(conn, request(1, "tools/call", {"name": "t"}))
    conn.send_result(1, {"content": []})
    out(conn)
    assert feed(conn, notification("notifications/cancelled", params)) == []
    assert out(conn) == []


def test_cancel_reason_is_optional() -> None:
    conn = legacy_server()
    feed(conn, request(1, "tools/call", {"name": "t"}))
    assert feed(conn, notification("notifications/cancelled", {"requestId": 1})) == [
        RequestCancelled(1, None)
    ]


def test_cancel_of_a_request_that_is_not_ours_is_misuse() -> None:
    conn = legacy_client()
    with pytest.raises(LocalProtocolError, match="no request 77"):
        conn.cancel_request(77)


# -------------------------------------------------------------- progress


@pytest.mark.parametrize("mode", [*ERAS, "2024-11-05"])
def test_progress_is_routed_to_its_request(mode: str) -> None:
    pair = pair_for(mode)
    a, recv_a = call_on_server(pair, progress=True, params={"name": "a"})
    b, recv_b = call_on_server(pair, progress=True, params={"name": "b"})
    assert recv_a.context.progress_token is not None
    assert recv_a.context.progress_token != recv_b.context.progress_token
    assert pair.server.send_progress(recv_b.request_id, 1, 10, "one of ten")
    assert pair.server.send_progress(recv_a.request_id, 0.5)
    assert pair.server.send_progress(recv_b.request_id, 2.5, 10)
    client_events, _ = pair.pump()
    message = None if mode == "2024-11-05" else "one of ten"  # no `message` in 2024-11-05
    assert client_events == [
        ProgressReceived(b, 1, 10, message),
        ProgressReceived(a, 0.5, None, None),
        ProgressReceived(b, 2.5, 10, None),
    ]
    # Progress must increase.
    with pytest.raises(LocalProtocolError, match="increase"):
        pair.server.send_progress(recv_b.request_id, 2.5)
    pair.server.send_result(recv_a.request_id, {"content": []})
    client_events, _ = pair.pump()
    assert one(client_events, ResponseReceived).request_id == a


def test_no_progress_token_means_no_progress() -> None:
    pair = pair_for("2025-11-25")
    _, received = call_on_server(pair)
    assert received.context.progress_token is None
    assert pair.server.send_progress(received.request_id, 1) is False
    assert pair.server.data_to_send() == b""


def test_progress_after_completion_or_for_unknown_tokens_is_dropped() -> None:
    conn = legacy_client()
    rid = conn.send_request("tools/list", progress=True)
    token = out(conn)[0]["params"]["_meta"]["progressToken"]
    feed(conn, result(rid, {"tools": []}))
    for params in [
        {"progressToken": token, "progress": 1},
        {"progressToken": "other", "progress": 1},
        {"progressToken": None, "progress": 1},
        None,
    ]:
        assert feed(conn, notification("notifications/progress", params)) == []


@pytest.mark.parametrize(
    "params",
    [
        {"progress": "half"},
        {"progress": True},
        {"progress": 1, "total": "ten"},
        {"progress": 1, "total": False},
        {},
    ],
)
def test_malformed_progress_is_rejected(params: dict[str, Any]) -> None:
    conn = legacy_client()
    rid = conn.send_request("tools/list", progress=True)
    conn.data_to_send()
    events = feed(conn, notification("notifications/progress", {"progressToken": rid, **params}))
    assert not of_type(events, ProgressReceived)
    assert one(events, MessageRejected).request_id is None
    assert out(conn) == []


def test_progress_keeps_the_applications_meta() -> None:
    conn = legacy_client()
    conn.send_request("tools/call", {"name": "t", "_meta": {"trace": "x"}}, progress=True)
    sent = out(conn)[0]
    assert sent["params"]["_meta"] == {"trace": "x", "progressToken": sent["id"]}


# -------------------------------------------------------------- pagination


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    "method", ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]
)
def test_cursors_pass_through_both_ways(mode: str, method: str) -> None:
    pair = pair_for(mode)
    rid, received = call_on_server(pair, method, params={"cursor": "opaque==/1"})
    assert received.params.cursor == "opaque==/1"
    field = {
        "tools/list": "tools",
        "prompts/list": "prompts",
        "resources/list": "resources",
        "resources/templates/list": "resourceTemplates",
    }[method]
    pair.server.send_result(received.request_id, {field: [], "nextCursor": "next page"})
    client_events, _ = pair.pump()
    response = one(client_events, ResponseReceived)
    assert response.request_id == rid
    assert response.result.next_cursor == "next page"


# -------------------------------------------------------------------- time


@pytest.mark.parametrize("mode", ERAS)
def test_deadline_fails_the_request_and_tells_the_peer(mode: str) -> None:
    pair = pair_for(mode)
    assert pair.client.next_deadline() is None
    rid, received = call_on_server(pair, deadline=100.0)
    other, _ = call_on_server(pair, deadline=50.0, params={"name": "other"})
    assert pair.client.next_deadline() == 50.0
    assert pair.client.tick(49.0) == []
    events = pair.client.tick(50.0)
    assert events == [RequestFailed(other, "tools/call", REQUEST_TIMEOUT, "Request timed out")]
    assert pair.client.next_deadline() == 100.0
    events = pair.client.tick(1000.0)
    assert events == [RequestFailed(rid, "tools/call", REQUEST_TIMEOUT, "Request timed out")]
    assert pair.client.next_deadline() is None
    sent = wire(pair.client.data_to_send())
    assert sent == [
        notification("notifications/cancelled", {"requestId": other, "reason": "timed out"}),
        notification("notifications/cancelled", {"requestId": rid, "reason": "timed out"}),
    ]
    server_events = feed(pair.server, *sent)
    assert received.request_id == rid
    assert server_events == [
        RequestCancelled(other, "timed out"),
        RequestCancelled(rid, "timed out"),
    ]
    # An answer after the timeout is late, and changes nothing.
    assert feed(pair.client, result(rid, {"content": []})) == [ResponseIgnored(rid, late=True)]
    assert pair.client.requests_in_flight == (0, 0)


def test_settled_requests_leave_the_deadline_queue() -> None:
    conn = legacy_client()
    a = conn.send_request("ping", deadline=5)
    b = conn.send_request("ping", deadline=7)
    conn.cancel_request(a)
    assert conn.next_deadline() == 7
    feed(conn, result(b, {}))
    assert conn.next_deadline() is None
    assert conn.tick(100) == []


def test_many_settled_deadlines_stay_bounded() -> None:
    conn = legacy_client()
    for i in range(500):
        rid = conn.send_request("ping", deadline=1000 + i)
        feed(conn, result(rid, {}))
    conn.send_request("ping", deadline=5000)
    assert conn.next_deadline() == 5000
    conn.check_invariants()


def test_tick_on_a_closed_connection_does_nothing() -> None:
    conn = legacy_client()
    conn.send_request("ping", deadline=1)
    conn.close()
    assert conn.tick(10) == []


def test_timeouts_settle_every_request_even_when_the_output_buffer_is_full() -> None:
    conn = legacy_client(limits=Limits(max_buffered_output_bytes=200))
    ids = [conn.send_request("ping", deadline=1) for _ in range(3)]
    conn.data_to_send()
    events = conn.tick(1)  # the three cancels (~100 bytes each) do not fit
    failed = of_type(events, RequestFailed)
    assert sorted(f.request_id for f in failed) == sorted(ids)
    assert {f.code for f in failed} <= {REQUEST_TIMEOUT, CONNECTION_CLOSED}
    assert conn.requests_in_flight == (0, 0)
    conn.check_invariants()


def test_timeouts_with_room_in_the_output_buffer() -> None:
    conn = legacy_client(limits=Limits(max_buffered_output_bytes=400))
    ids = [conn.send_request("ping", deadline=1) for _ in range(3)]
    conn.data_to_send()
    events = conn.tick(1)
    assert [f.request_id for f in of_type(events, RequestFailed)] == ids
    assert len(wire(conn.data_to_send())) == 3


# ------------------------------------------------------------ end of stream


def test_end_of_stream_settles_everything() -> None:
    pair = ConnectionPair(client_config=ClientConfig(mode="2025-11-25", capabilities={"roots": {}}))
    pair.connect()
    a = pair.client.send_request("tools/list")
    b = pair.client.send_request("prompts/list", progress=True)
    pair.server.send_request("roots/list")
    client_events, server_events = pair.pump()
    inbound = one(client_events, RequestReceived).request_id
    events = pair.client.receive_data(b"")
    assert events == [
        RequestFailed(a, "tools/list", CONNECTION_CLOSED, "Connection closed"),
        RequestFailed(b, "prompts/list", CONNECTION_CLOSED, "Connection closed"),
        ConnectionClosed("end of stream", (inbound,), None),
    ]
    assert pair.client.state == State.CLOSED
    pair.client.check_invariants()
    # Answering what the close abandoned is a no-op, as for a cancelled request ...
    assert pair.client.send_result(inbound, {"roots": []}) is False
    # ... and everything else after the end is refused.
    for attempt in (
        lambda: pair.client.send_request("tools/list"),
        lambda: pair.client.send_notification("notifications/roots/list_changed"),
        lambda: pair.client.cancel_request(a),
        lambda: pair.client.receive_data(b"{}\n"),
        lambda: pair.client.receive_message(b"{}"),
    ):
        with pytest.raises(LocalProtocolError):
            attempt()
    assert pair.client.receive_data(b"") == []
    assert pair.client.close() == []
    assert pair.client.data_to_send() == b""
    # The server, for its part, lists the requests it had from the client.
    server_end = pair.server.receive_data(b"")
    assert one(server_end, ConnectionClosed).abandoned_inbound == tuple(
        e.request_id for e in of_type(server_events, RequestReceived)
    )


def test_close_settles_like_end_of_stream() -> None:
    conn = legacy_client()
    rid = conn.send_request("ping")
    events = conn.close("shutting down")
    assert events == [
        RequestFailed(rid, "ping", CONNECTION_CLOSED, "Connection closed"),
        ConnectionClosed("shutting down", (), None),
    ]


def test_end_of_stream_during_the_handshake() -> None:
    conn = ClientConnection(ClientConfig(mode="legacy"))
    conn.connect()
    events = conn.receive_data(b"")
    # The internal initialize request does not surface as a RequestFailed.
    assert events == [ConnectionClosed("end of stream", (), None)]
    server = ServerConnection(legacy_server().config)
    assert server.receive_data(b"") == [ConnectionClosed("end of stream", (), None)]


def test_abandon_request_reports_a_cancel_for_a_lost_stream() -> None:
    conn = modern_server()
    feed(conn, request(1, "tools/call", modern_params({"name": "t"})))
    assert conn.abandon_request(1) == [RequestCancelled(1, "stream closed")]
    assert conn.abandon_request(1) == []
    assert conn.send_result(1, {"content": []}) is False
    assert out(conn) == []


# ------------------------------------------------------------- API misuse


def test_answering_a_request_that_never_came_is_misuse() -> None:
    conn = legacy_server()
    with pytest.raises(LocalProtocolError, match="no request 5"):
        conn.send_result(5, {})
    with pytest.raises(LocalProtocolError, match="no request 5"):
        conn.send_error(5, -32603, "x")
    with pytest.raises(LocalProtocolError, match="no request 5"):
        conn.send_progress(5, 1)


@pytest.mark.parametrize(
    ("attempt", "fragment"),
    [
        (lambda c: c.send_request("tools/list", [1, 2]), "params must be"),
        (lambda c: c.send_request("no/such"), "not a client request"),
        (lambda c: c.send_request("notifications/initialized"), "not a client request"),
        (lambda c: c.send_notification("tools/list"), "not a client notification"),
        (lambda c: c.send_notification("notifications/message", {}), "not a client notification"),
        (lambda c: c.send_request("sampling/createMessage", {}), "not a client request"),
    ],
)
def test_client_misuse_raises_local_protocol_error(attempt: Any, fragment: str) -> None:
    conn = legacy_client()
    with pytest.raises(LocalProtocolError, match=fragment):
        attempt(conn)
    assert conn.data_to_send() == b""
    assert conn.requests_in_flight == (0, 0)


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        (-32050, "reserved"),
        (-32042, "2025-11-25"),
        ("x", "integers"),
    ],
)
def test_error_codes_are_policed(code: Any, fragment: str) -> None:
    conn = legacy_server("2025-06-18")
    feed(conn, request(1, "tools/call", {"name": "t"}))
    with pytest.raises(LocalProtocolError, match=fragment):
        conn.send_error(1, code, "x")
    assert conn.send_error(1, -32002, "Resource not found", {"uri": "file:///x"})
    assert out(conn) == [error(1, -32002, "Resource not found", {"uri": "file:///x"})]


def test_modern_servers_do_not_emit_resource_not_found() -> None:
    conn = modern_server()
    feed(conn, request(1, "resources/read", modern_params({"uri": "file:///x"})))
    with pytest.raises(LocalProtocolError, match="-32602"):
        conn.send_error(1, -32002, "Resource not found")
    assert conn.send_error(1, -32602, "Resource not found")


def test_result_must_be_a_mapping() -> None:
    conn = legacy_server()
    feed(conn, request(1, "tools/call", {"name": "t"}))
    with pytest.raises(LocalProtocolError, match="result must be"):
        conn.send_result(1, [1, 2])
    assert conn.send_result(1, None)
    assert out(conn) == [result(1, {})]


def test_error_answer_reaches_the_client() -> None:
    pair = pair_for("2025-11-25")
    rid, received = call_on_server(pair)
    pair.server.send_error(received.request_id, -32602, "Unknown tool: t", {"name": "t"})
    client_events, _ = pair.pump()
    assert client_events == [
        ErrorReceived(rid, "tools/call", -32602, "Unknown tool: t", {"name": "t"})
    ]


def test_every_request_ends_exactly_once_in_a_busy_session() -> None:
    pair = pair_for("2025-11-25")
    ids = [
        pair.client.send_request("tools/call", {"name": f"t{i}"}, progress=i % 3 == 0, deadline=i)
        for i in range(20)
    ]
    _, server_events = pair.pump()
    received = of_type(server_events, RequestReceived)
    for e in received[::2]:  # the server answers the even ones
        pair.server.send_result(e.request_id, {"content": []})
    events = pair.client.tick(10)  # before the answers arrive: 0..10 time out
    client_events, _ = pair.pump()
    events += client_events
    pair.client.check_invariants()
    pair.server.check_invariants()
    ended: dict[Any, list[str]] = {}
    for e in events:
        if isinstance(e, ResponseReceived | RequestFailed):
            ended.setdefault(e.request_id, []).append(type(e).__name__)
    for i, rid in enumerate(ids):
        if i <= 10:
            assert ended[rid] == ["RequestFailed"]
        elif i % 2 == 0:
            assert ended[rid] == ["ResponseReceived"]
        else:
            assert rid not in ended
    late = {e.request_id for e in of_type(events, ResponseIgnored)}
    assert late == {ids[i] for i in range(0, 11, 2)}
    assert all(e.late for e in of_type(events, ResponseIgnored))
    assert pair.client.requests_in_flight == (5, 0)


# ----------------------------------------------------- transport-reported loss


def test_fail_request_settles_one_of_ours_locally() -> None:
    conn = legacy_client()
    rid = conn.send_request("tools/list")
    other = conn.send_request("prompts/list")
    conn.data_to_send()
    assert conn.fail_request(rid) == [
        RequestFailed(rid, "tools/list", CONNECTION_CLOSED, "Connection closed")
    ]
    assert conn.fail_request(rid) == []
    assert conn.fail_request(12345) == []
    assert conn.data_to_send() == b""  # nothing is said to the peer
    assert conn.requests_in_flight == (1, 0)
    assert conn.fail_request(other, -32001, "stream broke") == [
        RequestFailed(other, "prompts/list", -32001, "stream broke")
    ]
    assert feed(conn, result(rid, {"tools": []})) == [ResponseIgnored(rid, late=True)]


def test_fail_request_on_the_probe_falls_back_to_initialize() -> None:
    conn = ClientConnection(ClientConfig(mode="auto"))
    conn.connect()
    (probe,) = out(conn)
    assert conn.fail_request(probe["id"]) == []
    assert out(conn)[0]["method"] == "initialize"


def test_fail_request_on_the_probe_of_a_modern_only_client_ends_it() -> None:
    conn = ClientConnection(ClientConfig(mode="auto", supported_versions=(MODERN,)))
    conn.connect()
    (probe,) = out(conn)
    closed = one(conn.fail_request(probe["id"]), ConnectionClosed)
    assert closed.error is not None
    assert conn.state == State.ERROR


def test_probe_timeout_of_a_modern_only_client_ends_it() -> None:
    conn = ClientConnection(ClientConfig(mode="auto", supported_versions=(MODERN,)))
    conn.connect(deadline=3)
    conn.data_to_send()
    closed = one(conn.tick(3), ConnectionClosed)
    assert closed.error is not None and "timed out" in closed.error.message
    assert conn.state == State.ERROR


def test_fatal_answer_through_receive_message() -> None:
    conn = ClientConnection(ClientConfig(mode="legacy"))
    conn.connect()
    (init,) = conn.messages_to_send()
    events = conn.receive_message(
        b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32600,"message":"no"}}' % init.request_id
    )
    assert one(events, ConnectionClosed).error is not None
    assert conn.state == State.ERROR


# ------------------------------------------------------- bounded memory


def test_remembered_ids_are_bounded() -> None:
    conn = legacy_client(limits=Limits(max_remembered_ids=2))
    first = conn.send_request("ping")
    conn.cancel_request(first)
    assert feed(conn, result(first, {})) == [ResponseIgnored(first, late=True)]
    for _ in range(2):
        conn.cancel_request(conn.send_request("ping"))
    # The oldest cancelled id was forgotten: its answer is now a stranger's.
    assert feed(conn, result(first, {})) == [ResponseIgnored(first, late=False)]
    with pytest.raises(LocalProtocolError):
        conn.cancel_request(first)


@pytest.mark.parametrize("bound", [3, 8, 9, 20])  # the list alone, and past it the set
def test_recent_ids_forget_the_oldest_first_across_wraps(bound: int) -> None:
    from mcp_core._requests import RecentIds

    recent = RecentIds(bound)
    assert len(recent) == 0 and 0 not in recent
    for i in range(3 * bound + 1):
        recent.add(i)
        kept = list(range(max(0, i - bound + 1), i + 1))
        assert len(recent) == len(kept)
        assert all(k in recent for k in kept)
        assert not any(k in recent for k in range(i + 1) if k not in kept)


@pytest.mark.parametrize("bound", [1, 2, 8, 9, 20])
@pytest.mark.parametrize("first", [0, 5, "a", ""])
def test_recent_ids_made_with_their_first_id_are_made_then_added(
    bound: int, first: int | str
) -> None:
    """`RecentIds(bound, first)` (what a connection makes when its first request ends)
    is `RecentIds(bound)` and then `add(first)`: the same answers, then and after every
    further id, across the ring's wraps and past the list-only size."""
    from mcp_core._requests import RecentIds

    made, added = RecentIds(bound, first), RecentIds(bound)
    added.add(first)
    probes = [first, 0, 5, "a", "", *range(1, 3 * bound + 2)]
    for i in range(1, 3 * bound + 2):
        assert len(made) == len(added)
        assert [p in made for p in probes] == [p in added for p in probes]
        made.add(i)
        added.add(i)


def test_expired_deadline_of_an_answered_request_is_dropped_silently() -> None:
    conn = legacy_client()
    a = conn.send_request("ping", deadline=5)
    b = conn.send_request("ping", deadline=6)
    feed(conn, result(a, {}))
    assert conn.tick(10) == [RequestFailed(b, "ping", REQUEST_TIMEOUT, "Request timed out")]
    assert conn.tick(20) == []


# ------------------------------------------------------------ time as input


def sealed_server(ttl: float) -> ServerConnection:
    return modern_server(request_state_keys=(b"k" * 32,), request_state_ttl=ttl)


@pytest.mark.parametrize(
    ("later", "accepted"), [(5.0, True), (9.99, True), (10.0, False), (1e9, False)]
)
def test_now_given_with_input_decides_request_state_expiry(later: float, accepted: bool) -> None:
    conn = sealed_server(ttl=10)
    conn.receive_data(
        line_of(request(1, "tools/call", modern_params({"name": "t"}))), wall_time=0.0
    )
    assert conn.send_input_required(1, None, {"step": 1})
    token = out(conn)[0]["result"]["requestState"]
    retry = request(2, "tools/call", modern_params({"name": "t", "requestState": token}))
    events = conn.receive_data(line_of(retry), wall_time=later)
    if accepted:
        assert one(events, RequestReceived).context.request_state == {"step": 1}
        assert out(conn) == []
    else:
        assert not of_type(events, RequestReceived)
        (msg,) = out(conn)
        assert (msg["id"], msg["error"]["code"]) == (2, -32602)


def test_sealed_state_without_a_clock_is_refused() -> None:
    """A sealing server without the wall clock could verify no retry: it says so at the
    first input, before reading it, instead of refusing every retry later."""
    conn = sealed_server(ttl=10)
    call = line_of(request(1, "tools/call", modern_params({"name": "t"})))
    with pytest.raises(LocalProtocolError, match="wall_time="):
        conn.receive_data(call)
    with pytest.raises(LocalProtocolError, match="wall_time="):
        conn.receive_message(call.strip())
    assert conn.requests_in_flight == (0, 0) and out(conn) == []  # nothing was read
    assert conn.receive_data(b"") != []  # the end of the stream needs no clock
    conn = sealed_server(ttl=10)
    conn.receive_data(call, wall_time=0.5)
    assert conn.send_input_required(1, None, {"step": 1}, wall_time=1.0)
    token = out(conn)[0]["result"]["requestState"]
    retry = request(2, "tools/call", modern_params({"name": "t", "requestState": token}))
    assert one(
        conn.receive_message(line_of(retry).strip(), wall_time=2.0), RequestReceived
    ).context.request_state == {"step": 1}
    assert out(conn) == []


def line_of(msg: Any) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def test_old_import_path_of_the_role_classes() -> None:
    from mcp_core import _connection

    assert _connection.ServerConnection is ServerConnection
    assert _connection.ClientConnection is ClientConnection
    with pytest.raises(AttributeError):
        _connection.NoSuchThing  # noqa: B018


def test_legacy_client_reports_progress_on_a_server_request() -> None:
    pair = ConnectionPair(client_config=ClientConfig(mode="2025-03-26", capabilities={"roots": {}}))
    pair.connect()
    sid = pair.server.send_request("roots/list", progress=True)
    client_events, _ = pair.pump()
    received = one(client_events, RequestReceived)
    assert pair.client.send_progress(received.request_id, 1, 2, "listing")
    assert pair.client.send_result(received.request_id, {"roots": []})
    _, server_events = pair.pump()
    assert server_events[0] == ProgressReceived(sid, 1, 2, "listing")
    assert one(server_events, ResponseReceived).request_id == sid


def test_modern_client_ignores_a_server_cancel_of_an_ordinary_request() -> None:
    conn = modern_client()
    rid = conn.send_request("tools/list")
    conn.data_to_send()
    assert feed(conn, notification("notifications/cancelled", {"requestId": rid})) == []
    assert feed(conn, notification("notifications/cancelled", {"requestId": None})) == []
    assert conn.requests_in_flight == (1, 0)


def test_protocol_errors_carry_code_and_status() -> None:
    err = RemoteProtocolError("bad", code=-32700, http_status=413, data={"x": 1})
    assert (err.message, err.code, err.http_status, err.data) == ("bad", -32700, 413, {"x": 1})
    assert repr(err) == "RemoteProtocolError('bad', code=-32700)"
    assert repr(LocalProtocolError("misuse")) == "LocalProtocolError('misuse', code=-32600)"
    app = MCPError(-32602, "Unknown tool", {"name": "t"})
    assert (app.code, app.message, app.data) == (-32602, "Unknown tool", {"name": "t"})
    assert repr(app) == "MCPError(code=-32602, message='Unknown tool')"
