"""Engine bugs the fuzzers found, each reduced to its trigger.

Each test asserts the correct behaviour; every bug here is fixed and the
tests stay as regression tests.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_core import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    INVALID_REQUEST_STATE_MESSAGE,
    META_LOG_LEVEL,
    ClientConfig,
    ClientConnection,
    Connected,
    MessageRejected,
    RequestFailed,
    RequestReceived,
    RequestStateRejected,
    ServerConnection,
    State,
)
from mcp_core.http import HTTPClientEndpoint, HTTPServerEndpoint, mirrored_request_headers
from mcp_core.testing import default_server_config
from mcp_core.testing.mutations import WRONG_TYPE_VALUES
from tests.core.test_websocket import open_server, text

from .harness import (
    CLIENT_CAPABILITIES,
    MODERN,
    MODERN_META,
    SMALL_LIMITS,
    client_factory,
    feed,
    line,
    server_factory,
    split_lines,
)

LIMIT = SMALL_LIMITS.max_message_bytes


def test_overlong_partial_line_is_not_kept_after_the_framing_error() -> None:
    """Found: the over-long partial line stayed buffered after the framing error,
    so check_invariants() failed (pending > max_message_bytes). Over-long lines
    are now skipped rather than fatal: what is kept of one must stay bounded."""
    server = server_factory("fresh", limits=SMALL_LIMITS)()
    events: list[object] = []
    for byte in b"x" * (LIMIT * 3):  # arrives in pieces: the slow path of feed()
        events += server.receive_data(bytes([byte]))
        server.check_invariants()
    assert events == [] and server.state != State.ERROR
    events += server.receive_data(b"\n")
    assert [type(e) for e in events] == [MessageRejected]
    server.check_invariants()


def test_lines_before_an_overlong_line_are_processed_whatever_the_cut() -> None:
    """Found: complete lines sharing a chunk with an over-long line were dropped
    unprocessed, so the events depended on how the bytes were cut."""
    data = b'{"jsonrpc":"2.0","id":7,"method":"ping"}\n' + b"x" * (LIMIT + 1) + b"\n"
    factory = server_factory("legacy", limits=SMALL_LIMITS)
    whole = feed(factory(), [data])
    by_line = feed(factory(), split_lines(data))
    assert by_line.output.startswith(b'{"jsonrpc":"2.0","id":7,"result":{}}')
    assert whole.events == by_line.events
    assert whole.output == by_line.output


def test_connected_keeps_its_place_among_the_events_of_one_chunk() -> None:
    answer = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    data = b"garbage\n" + json.dumps(answer).encode() + b"\n"
    factory = client_factory("connecting-legacy")
    whole = feed(factory(), [data])
    by_line = feed(factory(), split_lines(data))
    assert by_line.events[0].startswith(MessageRejected.__name__)
    assert whole.events == by_line.events


# ------------------------------------------------------- type confusion (issue 11)
#
# Each input below is one field of a valid message given a value of the wrong
# JSON type; each used to make an exception other than RemoteProtocolError
# escape (or an HTTP request go unanswered). The type-confusion fuzzer
# (test_type_confusion.py) feeds the whole class; these pin the triggers.

WRONG_TYPES = [
    pytest.param(value, id=label)
    for label, kind, value in WRONG_TYPE_VALUES
    if kind not in ("string", "null")
]


def _modern_call(rid: Any, **meta_extra: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "t", "_meta": {**MODERN_META, **meta_extra}},
    }


def _replies(conn: ServerConnection | ClientConnection) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in conn.data_to_send().splitlines()]


@pytest.mark.parametrize("value", WRONG_TYPES)
@pytest.mark.parametrize("setup", ["fresh", "modern"])
def test_log_level_of_the_wrong_type_is_invalid_params(setup: str, value: Any) -> None:
    """Found: `logLevel` as a list or an object raised TypeError (unhashable) out of
    receive_data; over stdio the server exited, over HTTP and WebSocket the
    connection dropped with no answer. The official SDK answers -32602."""
    server = server_factory(setup)()
    events = server.receive_data(line(_modern_call(5, **{META_LOG_LEVEL: value})))
    [reply] = _replies(server)
    assert reply["id"] == 5 and reply["error"]["code"] == INVALID_PARAMS
    assert META_LOG_LEVEL in reply["error"]["message"]
    assert not any(isinstance(e, RequestReceived) for e in events)
    # The engine is consistent: the next valid request is served.
    events = server.receive_data(line(_modern_call(6, **{META_LOG_LEVEL: "info"})))
    [shown] = [e for e in events if isinstance(e, RequestReceived)]
    assert shown.request_id == 6 and shown.context.log_level == "info"
    server.check_invariants()


def test_log_level_list_over_http_gets_400_with_invalid_params() -> None:
    """The same input through Streamable HTTP: an answer, not a dropped connection."""
    endpoint = HTTPServerEndpoint(default_server_config(), new_session_id=lambda: "s")
    body = _modern_call(5, **{META_LOG_LEVEL: ["debug"]})
    headers = mirrored_request_headers("tools/call", body["params"], MODERN)
    http = endpoint.new_connection(now=0.0)
    http.receive_data(_post(json.dumps(body).encode(), headers), now=0.0)
    status, payload = _http_reply(http.data_to_send())
    assert status == 400
    assert payload["id"] == 5 and payload["error"]["code"] == INVALID_PARAMS
    assert not http.closed


def test_log_level_object_over_websocket_gets_invalid_params() -> None:
    ws, reader = open_server()
    ws.receive_data(text(_modern_call(5, **{META_LOG_LEVEL: {"level": "debug"}})))
    [reply] = reader.read(ws.data_to_send()).texts
    assert reply["id"] == 5 and reply["error"]["code"] == INVALID_PARAMS
    assert not ws.closed
    events = ws.receive_data(text(_modern_call(6)))
    assert [e.request_id for e in events if isinstance(e, RequestReceived)] == [6]


def _elicit(rid: Any, mode: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "elicitation/create",
        "params": {
            "message": "m",
            "mode": mode,
            "requestedSchema": {"type": "object", "properties": {}},
        },
    }


@pytest.mark.parametrize("value", WRONG_TYPES)
@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
def test_elicitation_mode_of_the_wrong_type_is_invalid_params(revision: str, value: Any) -> None:
    """Found: `"mode": {}` on a server's elicitation/create raised TypeError
    (unhashable) from the client's capability check, which reads the mode
    before the params are validated."""
    client = ClientConnection(ClientConfig(mode=revision, capabilities=CLIENT_CAPABILITIES))
    client.connect()
    client.receive_data(_handshake_reply_for(client))
    client.data_to_send()
    events = client.receive_data(line(_elicit("e1", value)))
    [reply] = _replies(client)
    assert reply["id"] == "e1" and reply["error"]["code"] == INVALID_PARAMS
    assert "params.mode" in reply["error"]["message"]
    assert not any(isinstance(e, RequestReceived) for e in events)
    events = client.receive_data(line(_elicit("e2", "form")))
    [shown] = [e for e in events if isinstance(e, RequestReceived)]
    assert shown.request_id == "e2"
    client.check_invariants()


@pytest.mark.parametrize("rid", [[1], {"a": 1}, None, True, 1.5], ids=repr)
def test_http_initialize_whose_id_is_not_an_id_gets_400(rid: Any) -> None:
    """Found: a legacy `initialize` POST whose id is an array or an object raised
    TypeError (the id keyed a set); one that is null, a boolean or a float got
    no HTTP response at all, its stream waiting for an answer to that id."""
    endpoint = HTTPServerEndpoint(default_server_config(), new_session_id=lambda: "s")
    body = {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": _init_params()}
    http = endpoint.new_connection(now=0.0)
    http.receive_data(_post(json.dumps(body).encode(), []), now=0.0)
    status, payload = _http_reply(http.data_to_send())
    assert status == 400 and payload["id"] is None
    assert payload["error"]["code"] == INVALID_REQUEST
    assert endpoint.sessions == {}
    # The endpoint goes on: a valid initialize opens a session.
    body["id"] = 1
    http = endpoint.new_connection(now=0.0)
    http.receive_data(_post(json.dumps(body).encode(), []), now=0.0)
    status, payload = _http_reply(http.data_to_send())
    assert status == 200 and payload["id"] == 1 and "result" in payload


@pytest.mark.parametrize(
    "body",
    [{"jsonrpc": "2.0"}, {"jsonrpc": None}, {"jsonrpc": "2.0", "resultx": {}}],
    ids=["no-result", "jsonrpc-null", "misspelt"],
)
def test_http_client_body_with_the_id_but_no_answer_fails_the_request(
    body: dict[str, Any],
) -> None:
    """Found: a 2026-07-28 response body holding the request's id but neither
    `result` nor `error` marked the request answered, so it never ended (the
    engine, rightly, did not take the object as its answer)."""
    mcp = ClientConnection(ClientConfig(mode=MODERN))
    client = HTTPClientEndpoint(mcp, host="h")
    mcp.connect()
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn = client.new_connection()
    conn.start(request)
    raw = json.dumps({**body, "id": rid}).encode()
    events = conn.receive_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n" % len(raw) + raw
    )
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid
    assert mcp.requests_in_flight == (0, 0)


@pytest.mark.parametrize("event_id", ["caf\u00e9", "\u20ac1", "", " x"], ids=repr)
def test_http_client_sse_id_a_header_cannot_carry_is_no_resume_cursor(event_id: str) -> None:
    """Found: a server's SSE `id: café` became the Last-Event-ID of the resume
    request, and starting that request raised UnicodeEncodeError (an empty id
    sent an empty header). Such an id now resets the cursor: the dropped stream
    fails its request instead of resuming."""
    mcp = ClientConnection(ClientConfig(mode="legacy"))
    client = HTTPClientEndpoint(mcp, host="h")
    mcp.connect()
    [init] = client.pump().requests
    conn = client.new_connection()
    conn.start(init)
    answer = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"},
            },
        }
    ).encode()
    conn.receive_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\n"
        b"content-length: %d\r\n\r\n" % len(answer) + answer
    )
    client.pump()  # notifications/initialized (and the GET stream), not needed here
    rid = mcp.send_request("tools/list")
    [call] = [r for r in client.pump().requests if r.request_id == rid]
    conn = client.new_connection()
    conn.start(call)
    sse = ("id: " + event_id + "\ndata: \n\n").encode()
    events = conn.receive_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"transfer-encoding: chunked\r\n\r\n" + b"%x\r\n" % len(sse) + sse + b"\r\n"
    )
    events += conn.receive_data(b"")  # the stream drops before the answer
    resumes = [r for r in client.pump().requests if r.purpose == "resume"]
    for request in resumes:  # whatever is sent must be sendable
        assert client.new_connection().start(request)
    assert not resumes
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid


def test_sealed_state_of_a_shape_we_never_seal_fails_closed() -> None:
    """Hardening found on the audit: a MAC-valid requestState whose payload is not
    the `{"k": {...}, "s": ...}` this server seals (another deployment sharing
    the keys) raised TypeError/KeyError; it now fails like any bad state."""
    config = default_server_config(request_state_keys=(b"k" * 32,))
    sealer = config.request_state_sealer
    assert sealer is not None
    for payload in (["k"], {"k": ["elicitation/create"]}, {"k": {"a": ["x"]}}, {"s": 1}):
        token = sealer.seal(
            payload, method="tools/call", target="t", arguments={}, principal=None, wall_time=NOW
        )
        server = ServerConnection(config)
        call = _modern_call(7)
        call["params"]["requestState"] = token
        events = server.receive_data(line(call), wall_time=NOW)
        [reply] = _replies(server)
        assert reply["error"] == {
            "code": INVALID_PARAMS,
            "message": INVALID_REQUEST_STATE_MESSAGE,
            "data": {"reason": "invalid_request_state"},
        }
        [rejected] = [e for e in events if isinstance(e, RequestStateRejected)]
        assert rejected.reason == "bad_claims"


def test_a_peer_error_saying_local_true_is_still_the_peers() -> None:
    """Found on the audit: internal failures reached the handshake handlers as an
    error dict marked `"local": True`, which a server's own error object could
    carry too; the client then took a server's -32022 naming the versions it
    speaks for a local failure and fell back to initialize blindly."""
    client = ClientConnection(ClientConfig(mode="auto"))
    client.connect()
    [probe] = _replies(client)
    refusal = {
        "jsonrpc": "2.0",
        "id": probe["id"],
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "local": True,
            "data": {"supported": [MODERN, "2025-11-25"], "requested": MODERN},
        },
    }
    events = client.receive_data(line(refusal))
    [connected] = [e for e in events if isinstance(e, Connected)]
    assert connected.protocol_version == MODERN
    assert _replies(client) == []  # no initialize went out


# ---- helpers of the tests above

NOW = 1_700_000_000.0


def _init_params() -> dict[str, Any]:
    return {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }


def _handshake_reply_for(client: ClientConnection) -> bytes:
    server = ServerConnection(default_server_config())
    server.receive_data(client.data_to_send())
    return server.data_to_send()


def _post(body: bytes, headers: list[tuple[str, str]]) -> bytes:
    head = (
        "POST /mcp HTTP/1.1\r\nhost: localhost:8000\r\n"
        "accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    )
    return head.encode("latin-1") + body


def _http_reply(data: bytes) -> tuple[int, Any]:
    head, sep, body = data.partition(b"\r\n\r\n")
    assert sep, data
    return int(head.split(b" ")[1]), json.loads(body)
