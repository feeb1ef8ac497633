"""A disconnect, as an embedder meets it: the order of the closing events, and that
reacting to each of them (answering the peer's requests) never raises.

The order, on `receive_data(b"")`, `close()` or a stream that broke:

1. `RequestFailed` (CONNECTION_CLOSED) for each request of ours still in flight,
   in the order they were sent;
2. `ConnectionClosed`, whose `abandoned_inbound` lists the peer's requests still
   open, in the order they arrived.

The connection is already closed when the batch comes out, so every answer given
while handling it (or later) returns False and sends nothing.
"""

from __future__ import annotations

import pytest

from mcp_core import (
    CONNECTION_CLOSED,
    ClientConfig,
    ConnectionClosed,
    Limits,
    LocalProtocolError,
    MessageRejected,
    RemoteProtocolError,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ServerConnection,
    State,
)
from mcp_core.testing import ConnectionPair

from .engine_support import (
    MODERN,
    feed,
    legacy_server,
    line,
    modern_params,
    modern_server,
    of_type,
    out,
    request,
)

CALL = {"name": "delete", "arguments": {"path": "/tmp/x"}}
ASK = {
    "message": "Delete?",
    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
}


def answers_are_noops(conn: ServerConnection, request_id: int) -> None:
    """Every verb that answers the peer is a quiet no-op on the closed connection."""
    assert conn.send_result(request_id, {"content": []}) is False
    assert conn.send_error(request_id, -32603, "gone") is False
    assert conn.send_progress(request_id, 1.0) is False
    assert conn.send_log("info", "bye", related_request_id=request_id) is False
    assert conn.data_to_send() == b""


def test_legacy_disconnect_with_a_question_open() -> None:
    """The issue's case: a tool call asks the user, and the client goes away."""
    conn = legacy_server(client_caps={"elicitation": {}})
    feed(conn, request(7, "tools/call", CALL), request(8, "tools/list"))
    question = conn.send_request("elicitation/create", ASK, related_request_id=7)
    probe = conn.send_request("ping")
    out(conn)
    events = conn.receive_data(b"")
    assert events == [
        RequestFailed(question, "elicitation/create", CONNECTION_CLOSED, "Connection closed"),
        RequestFailed(probe, "ping", CONNECTION_CLOSED, "Connection closed"),
        ConnectionClosed("end of stream", (7, 8), None),
    ]
    assert conn.state == State.CLOSED
    # The natural reaction to the question's failure: answer the tool call.
    for rid in (7, 8):
        answers_are_noops(conn, rid)
    # Starting something new is still a mistake, and says so.
    with pytest.raises(LocalProtocolError, match="closed"):
        conn.send_request("ping")
    conn.check_invariants()


def test_reacting_inside_the_closing_batch_never_raises() -> None:
    """A valid request, then more garbage lines in the same chunk than the output
    buffer holds replies for (a peer that writes and never reads): the request's
    event comes out in the batch that closes the connection, and answering it there
    is as safe as answering it after."""
    conn = modern_server(limits=Limits(max_buffered_output_bytes=2000))
    chunk = line(request(1, "tools/call", modern_params(CALL))) + b"not json\n" * 40
    events = conn.receive_data(chunk, wall_time=0.0)
    kinds = [type(e) for e in events]
    assert kinds[0] is RequestReceived and kinds[-1] is ConnectionClosed
    assert set(kinds[1:-1]) == {MessageRejected}  # the garbage, refused until the buffer filled
    closed = events[-1]
    assert isinstance(closed, ConnectionClosed) and isinstance(closed.error, RemoteProtocolError)
    assert closed.abandoned_inbound == (1,)
    assert conn.state == State.ERROR
    conn.data_to_send()  # the refusals queued before the buffer filled
    answers_are_noops(conn, 1)
    assert conn.send_input_required(1, None, "s") is False
    conn.check_invariants()


def test_a_listen_stream_after_the_close() -> None:
    conn = modern_server(capabilities={"tools": {"listChanged": True}})
    feed(
        conn,
        request(
            3, "subscriptions/listen", modern_params({"notifications": {"toolsListChanged": True}})
        ),
    )
    assert conn.close() == [ConnectionClosed("closed locally", (3,), None)]
    assert conn.acknowledge_subscription(3) == {}
    assert conn.notify_subscribers("notifications/tools/list_changed") == 0
    assert conn.end_subscription(3) is False
    assert conn.data_to_send() == b""


def test_a_cancelled_request_then_the_close() -> None:
    """A request the peer cancelled is not abandoned again: it ended with its cancel."""
    conn = legacy_server()
    feed(conn, request(1, "tools/call", CALL), request(2, "tools/call", CALL))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert feed(conn, cancel) == [RequestCancelled(1, None)]
    assert conn.receive_data(b"") == [ConnectionClosed("end of stream", (2,), None)]
    answers_are_noops(conn, 1)
    answers_are_noops(conn, 2)


@pytest.mark.parametrize("mode", ["2025-11-25", MODERN])
def test_client_answers_after_the_close_are_noops(mode: str) -> None:
    """The client's side of the same rule: a server's question that the close
    abandoned is answered with False, in both eras."""
    pair = ConnectionPair(client_config=ClientConfig(mode=mode, capabilities={"roots": {}}))
    pair.connect()
    if mode == MODERN:
        pair.client.send_request("tools/call", CALL)
        _, server_events = pair.pump()
        (call,) = of_type(server_events, RequestReceived)
        pair.server.send_input_required(call.request_id, {"r": {"method": "roots/list"}}, "s")
    else:
        pair.server.send_request("roots/list")
    client_events, _ = pair.pump()
    (asked,) = of_type(client_events, RequestReceived)
    closing = pair.client.receive_data(b"")
    assert isinstance(closing[-1], ConnectionClosed)
    assert pair.client.send_result(asked.request_id, {"roots": []}) is False
    assert pair.client.send_error(asked.request_id, -32603, "no") is False
    assert pair.client.data_to_send() == b""
