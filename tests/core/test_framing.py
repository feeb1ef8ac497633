"""NDJSON framing: line endings, chunking, split equivalence, the line limit, message framing."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import (
    CONNECTION_CLOSED,
    LIMIT_EXCEEDED,
    PARSE_ERROR,
    ClientConfig,
    ClientConnection,
    ConnectionClosed,
    Event,
    Limits,
    LocalProtocolError,
    MessageRejected,
    OutgoingMessage,
    RemoteProtocolError,
    RequestFailed,
    RequestReceived,
    ResponseIgnored,
    ResponseReceived,
    ServerConnection,
    State,
)
from mcp_core._framing import LineBuffer
from mcp_core.testing import default_server_config

from .engine_support import (
    error,
    error_code,
    feed,
    initialize_params,
    initialize_result,
    legacy_client,
    legacy_server,
    line,
    notification,
    of_type,
    one,
    out,
    request,
    result,
    wire,
)

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
PING_OK = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'

# A server-side conversation touching every path of the line splitter: CRLF, blank
# and whitespace lines, multi-byte UTF-8, an unparseable line, invalid UTF-8, a
# request the application must answer, a cancel, and a notification.
SERVER_SCRIPT = b"".join(
    [
        line(request(0, "initialize", initialize_params("2025-11-25", {"roots": {}}))),
        b"\r\n",
        b"   \n",
        json.dumps(notification("notifications/initialized")).encode() + b"\r\n",
        b"\n",
        json.dumps(
            request(
                "\u00e9\u2713", "tools/call", {"name": "\U0001d11e", "arguments": {"s": "\u00e9"}}
            ),
            ensure_ascii=False,
        ).encode()
        + b"\n",
        b"{not json}\n",
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"\xff\xfe"}}\n',
        PING + b"\r\n",
        line(request(8, "tools/list", {"cursor": "c1"})),
        line(notification("notifications/cancelled", {"requestId": 8, "reason": "bye"})),
        line(notification("notifications/roots/list_changed")),
    ]
)


def run_server(chunks: list[bytes]) -> tuple[list[Event], bytes, str]:
    conn = ServerConnection(default_server_config())
    events: list[Event] = []
    output = b""
    for chunk in chunks:
        events += conn.receive_data(chunk)
        output += conn.data_to_send()
    events += conn.receive_data(b"")
    return events, output, conn.state


def client_script(rid_list: int = 1) -> bytes:
    return b"".join(
        [
            line(result(0, initialize_result("2025-06-18"))),
            b"\r\n",
            line(
                result(rid_list, {"tools": [{"name": "\u00e9", "inputSchema": {"type": "object"}}]})
            ),
            line(notification("notifications/progress", {"progressToken": 2, "progress": 0.5})),
            json.dumps(request("p", "ping")).encode() + b"\r\n",
            b'{"jsonrpc":"2.0","id":99,"result":{}}\n',
            line(notification("notifications/tools/list_changed")),
        ]
    )


def run_client(chunks: list[bytes]) -> tuple[list[Event], bytes, str]:
    conn = ClientConnection(ClientConfig(mode="2025-06-18"))
    conn.connect()
    output = conn.data_to_send()
    events: list[Event] = []
    # Requests sent before the answers arrive (ids 1 and 2) are queued once READY.
    sent = False
    for chunk in chunks:
        events += conn.receive_data(chunk)
        if not sent and conn.state == State.READY:
            conn.send_request("tools/list")
            conn.send_request("tools/call", {"name": "x"}, progress=True)
            sent = True
        output += conn.data_to_send()
    events += conn.receive_data(b"")
    return events, output, conn.state


def test_server_script_outcome() -> None:
    events, output, state = run_server([SERVER_SCRIPT])
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "SessionStarted",
        "ClientInitialized",
        "RequestReceived",
        "MessageRejected",
        "MessageRejected",
        "RequestReceived",
        "RequestCancelled",
        "NotificationReceived",
        "ConnectionClosed",
    ]
    call = of_type(events, RequestReceived)[0]
    assert call.request_id == "\u00e9\u2713" and call.params.name == "\U0001d11e"
    msgs = wire(output)
    assert [m.get("id") for m in msgs] == [0, None, None, 1]
    assert [error_code(m) for m in msgs[1:3]] == [PARSE_ERROR, PARSE_ERROR]
    assert msgs[3] == result(1, {})
    assert one(events, ConnectionClosed).abandoned_inbound == ("\u00e9\u2713",)
    assert state == State.CLOSED


def every_split(data: bytes) -> list[list[bytes]]:
    return [[data[:i], data[i:]] for i in range(1, len(data))]


def test_server_split_at_every_offset_gives_identical_events() -> None:
    expected = run_server([SERVER_SCRIPT])
    for chunks in every_split(SERVER_SCRIPT):
        assert run_server(chunks) == expected, chunks


def test_server_byte_by_byte_gives_identical_events() -> None:
    expected = run_server([SERVER_SCRIPT])
    chunks = [SERVER_SCRIPT[i : i + 1] for i in range(len(SERVER_SCRIPT))]
    assert run_server(chunks) == expected


def test_client_split_at_every_offset_gives_identical_events() -> None:
    script = client_script()
    # The whole script in one chunk answers requests not yet sent; feed the
    # handshake first, then the rest, so requests exist before their answers.
    cut = script.index(b"\r\n") + 2
    expected = run_client([script[:cut], script[cut:]])
    kinds = [type(e).__name__ for e in expected[0]]
    assert kinds == [
        "Connected",
        "ResponseReceived",
        "ProgressReceived",
        "ResponseIgnored",
        "NotificationReceived",
        "RequestFailed",
        "ConnectionClosed",
    ]
    assert one(expected[0], RequestFailed).code == CONNECTION_CLOSED
    rest = script[cut:]
    for i in range(1, len(rest)):
        assert run_client([script[:cut], rest[:i], rest[i:]]) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=1, max_value=len(SERVER_SCRIPT) - 1), max_size=12))
def test_server_random_chunking_gives_identical_events(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    bounds = [0, *points, len(SERVER_SCRIPT)]
    chunks = [SERVER_SCRIPT[a:b] for a, b in itertools.pairwise(bounds)]
    assert run_server(chunks) == run_server([SERVER_SCRIPT])


def test_several_messages_in_one_chunk_are_all_answered() -> None:
    conn = legacy_server()
    conn.receive_data(b"".join(line(request(i, "ping")) for i in range(5)))
    assert [m["id"] for m in out(conn)] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_line_endings(ending: bytes) -> None:
    conn = legacy_server()
    conn.receive_data(PING + ending)
    assert conn.data_to_send() == PING_OK


@pytest.mark.parametrize("blank", [b"\n", b"\r\n", b"  \t \n", b"\n\n\r\n"])
def test_blank_lines_are_skipped(blank: bytes) -> None:
    conn = legacy_server()
    assert conn.receive_data(blank) == []
    assert conn.data_to_send() == b""
    conn.receive_data(blank + PING + b"\n" + blank)
    assert conn.data_to_send() == PING_OK


def test_partial_line_waits_for_its_newline() -> None:
    conn = legacy_server()
    assert conn.receive_data(PING[:10]) == []
    assert conn.data_to_send() == b""
    conn.receive_data(PING[10:])
    assert conn.data_to_send() == b""
    conn.receive_data(b"\n")
    assert conn.data_to_send() == PING_OK


def test_invalid_utf8_is_a_parse_error_and_the_connection_goes_on() -> None:
    conn = legacy_server("2025-06-18")
    events = conn.receive_data(
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"\xff\xfe"}}\n'
        + PING
        + b"\n"
    )
    msgs = out(conn)
    assert [(m["id"], m.get("error", {}).get("code")) for m in msgs] == [
        (None, PARSE_ERROR),
        (1, None),
    ]
    assert one(events, MessageRejected).code == PARSE_ERROR
    assert conn.state == State.READY


def test_multibyte_character_split_across_chunks() -> None:
    conn = legacy_server()
    raw = json.dumps(request(5, "tools/call", {"name": "\u2713"}), ensure_ascii=False).encode()
    cut = raw.index("\u2713".encode()) + 1
    assert conn.receive_data(raw[:cut]) == []
    events = conn.receive_data(raw[cut:] + b"\n")
    assert one(events, RequestReceived).params.name == "\u2713"


# ------------------------------------------------------------------ line limit

LIMIT = 400


def limited_server() -> ServerConnection:
    return legacy_server(limits=Limits(max_message_bytes=LIMIT))


def padded_ping(size: int, rid: int = 1) -> bytes:
    """A valid ping line (without newline) of exactly `size` bytes."""
    head = (
        b'{"jsonrpc":"2.0","id":' + str(rid).encode() + b',"method":"ping","params":{"_meta":{"p":"'
    )
    tail = b'"}}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def too_long(size: int, limit: int = LIMIT) -> str:
    return f"message of {size} bytes exceeds the limit of {limit} bytes (Limits.max_message_bytes)"


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_frame_at_the_limit_is_accepted(ending: bytes) -> None:
    conn = limited_server()
    frame = padded_ping(LIMIT - len(ending) + 1)
    conn.receive_data(frame + ending)
    assert out(conn) == [result(1, {})]


def test_near_limit_frames_in_one_chunk_are_each_counted_alone() -> None:
    conn = limited_server()
    chunk = b"".join(padded_ping(LIMIT, rid) + b"\n" for rid in range(1, 4))
    assert len(chunk) > LIMIT
    conn.receive_data(chunk)
    assert [m["id"] for m in out(conn)] == [1, 2, 3]
    assert conn.state == State.READY


def over_limit_outcome(chunks: list[bytes]) -> tuple[Any, ...]:
    conn = limited_server()
    events: list[Event] = []
    for chunk in chunks:
        events += conn.receive_data(chunk)
        conn.check_invariants()
    return tuple(repr(e) for e in events), conn.data_to_send(), conn.state


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_line_over_the_limit_is_refused_with_its_id_and_the_next_line_is_served(
    ending: bytes,
) -> None:
    """Whole, cut in two at every offset, or in 7-byte pieces: the same refusal."""
    frame = padded_ping(LIMIT + 1, rid=7) + ending + PING + b"\n"
    whole = over_limit_outcome([frame])
    size = LIMIT + len(ending)  # the CR counts against the limit
    assert whole[2] == State.READY
    assert wire(whole[1]) == [error(7, PARSE_ERROR, too_long(size)), result(1, {})]
    assert whole[0][0] == repr(MessageRejected(7, PARSE_ERROR, too_long(size)))
    for i in range(1, len(frame)):
        assert over_limit_outcome([frame[:i], frame[i:]]) == whole
    assert over_limit_outcome([frame[i : i + 7] for i in range(0, len(frame), 7)]) == whole


def test_an_unfinished_over_long_line_keeps_only_its_ends() -> None:
    conn = limited_server()
    conn.receive_data(padded_ping(LIMIT + 1, rid=3)[:-10])
    for _ in range(100):
        assert conn.receive_data(b"x" * 1000) == []
        conn.check_invariants()
    assert conn.data_to_send() == b""  # nothing is answered before the line ends
    events = conn.receive_data(b'"}}}\n' + PING + b"\n")
    assert one(events, MessageRejected).request_id == 3
    assert [m.get("id") for m in wire(conn.data_to_send())] == [3, 1]


def test_good_lines_around_an_over_long_one_do_not_depend_on_chunking() -> None:
    data = PING + b"\n" + padded_ping(LIMIT * 3, rid=2) + b"\n" + PING.replace(b"1", b"4") + b"\n"
    whole = over_limit_outcome([data])
    assert [(m["id"], "error" in m) for m in wire(whole[1])] == [(1, False), (2, True), (4, False)]
    assert over_limit_outcome([data[:50], data[50:700], data[700:]]) == whole
    assert over_limit_outcome([bytes([b]) for b in data]) == whole


def test_the_id_is_read_from_the_end_when_the_message_puts_it_last() -> None:
    """The TypeScript SDK writes `{"method":...,"params":{...},"jsonrpc":"2.0","id":N}`."""
    conn = limited_server()
    big = (
        b'{"method":"ping","params":{"_meta":{"p":"'
        + b"x" * LIMIT
        + b'"}},"jsonrpc":"2.0","id":"a"}'
    )
    conn.receive_data(big + b"\n")
    assert wire(conn.data_to_send()) == [error("a", PARSE_ERROR, too_long(len(big)))]


def test_an_id_neither_end_shows_is_not_guessed() -> None:
    conn = limited_server()
    big = b'{"jsonrpc":"2.0","params":{"p":"' + b"x" * LIMIT + b'"},"id":5,"method":"ping","q":[1]}'
    conn.receive_data(big + b"\n")
    # 2025-11-25 leaves out the id of an error that names no request.
    assert wire(conn.data_to_send()) == [
        {"jsonrpc": "2.0", "error": {"code": PARSE_ERROR, "message": too_long(len(big))}}
    ]


def test_an_over_long_response_fails_the_request_it_answers_and_nothing_is_sent() -> None:
    conn = legacy_client(limits=Limits(max_message_bytes=LIMIT))
    first = conn.send_request("ping")
    second = conn.send_request("ping")
    conn.data_to_send()
    big = (
        b'{"jsonrpc":"2.0","id":'
        + str(first).encode()
        + b',"result":{"p":"'
        + b"x" * LIMIT
        + b'"}}'
    )
    events = conn.receive_data(big + b"\n")
    failed = one(events, RequestFailed)
    assert (failed.request_id, failed.code) == (first, LIMIT_EXCEEDED)
    assert failed.message == (
        f"response refused: {too_long(len(big))}; raise Limits.max_message_bytes in the "
        "client's limits to accept it"
    )
    assert one(events, MessageRejected).request_id == first
    assert conn.data_to_send() == b""
    events = conn.receive_data(line(result(second, {})))
    assert one(events, ResponseReceived).request_id == second
    # The refused id is over: a late second answer to it is reported, not delivered.
    assert of_type(conn.receive_data(line(result(first, {}))), ResponseIgnored)


def test_after_a_fatal_error_input_raises_remote_protocol_error() -> None:
    conn = limited_server()
    conn.close("broken below us", error=RemoteProtocolError("broken"))
    assert conn.state == State.ERROR
    with pytest.raises(RemoteProtocolError):
        conn.receive_data(PING + b"\n")
    with pytest.raises(RemoteProtocolError):
        conn.receive_message(PING)
    with pytest.raises(RemoteProtocolError):
        conn.receive_oversized(10_000, b"{", b"}")
    assert conn.receive_data(b"") == []
    assert conn.close() == []
    assert conn.tick(1e9) == []
    with pytest.raises(LocalProtocolError):
        conn.send_request("ping")
    conn.check_invariants()


# ------------------------------------------------------------ message framing


def test_receive_message_takes_whole_messages_as_bytes_or_str() -> None:
    conn = legacy_server()
    pretty = json.dumps(request(1, "ping"), indent=2)
    assert "\n" in pretty
    conn.receive_message(pretty)
    conn.receive_message(pretty.encode())
    conn.receive_message(b"  " + PING + b"  ")
    msgs = conn.messages_to_send()
    assert [m.payload for m in msgs] == [PING_OK[:-1]] * 3
    assert conn.data_to_send() == b""


def test_receive_message_with_a_lone_surrogate_is_a_parse_error() -> None:
    conn = legacy_server("2025-06-18")
    events = conn.receive_message('{"jsonrpc":"2.0","id":1,"method":"\ud800"}')
    assert one(events, MessageRejected).code == PARSE_ERROR
    assert conn.messages_to_send()[0].payload == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"message is not valid UTF-8"}}'
    )


def test_outgoing_messages_carry_routing_metadata() -> None:
    conn = legacy_server(client_caps={"sampling": {}})
    feed(
        conn,
        request(5, "tools/call", {"name": "t", "_meta": {"progressToken": "tok"}}),
        request(6, "nope/nope"),
    )
    assert conn.send_progress(5, 0.5)
    sid = conn.send_request(
        "sampling/createMessage",
        {"messages": [], "maxTokens": 5},
        related_request_id=5,
    )
    assert conn.send_result(5, {"content": []})
    msgs = conn.messages_to_send()
    routing = [(m.kind, m.method, m.request_id, m.related_request_id) for m in msgs]
    assert routing == [
        ("error", None, 6, 6),
        ("notification", "notifications/progress", None, 5),
        ("request", "sampling/createMessage", sid, 5),
        ("result", "tools/call", 5, 5),
    ]
    for m in msgs:
        assert b"\n" not in m.payload
        json.loads(m.payload)


def test_output_is_one_line_per_message_even_with_newlines_in_strings() -> None:
    conn = legacy_server()
    feed(conn, request(1, "tools/call", {"name": "t"}))
    conn.send_result(1, {"content": [{"type": "text", "text": "a\nb\r\nc\u2028"}]})
    data = conn.data_to_send()
    assert data.count(b"\n") == 1 and data.endswith(b"\n")
    assert wire(data)[0]["result"]["content"][0]["text"] == "a\nb\r\nc\u2028"


def test_lone_surrogate_in_application_output_still_encodes() -> None:
    conn = legacy_server()
    feed(conn, request(1, "tools/call", {"name": "t"}))
    conn.send_result(1, {"content": [{"type": "text", "text": "bad \ud800 text"}]})
    data = conn.data_to_send()
    data.decode("ascii")  # the fallback encoder escapes everything
    assert wire(data)[0]["result"]["content"][0]["text"] == "bad \ud800 text"


def test_client_and_server_exchange_over_message_framing() -> None:
    server = ServerConnection(default_server_config())
    client = ClientConnection(ClientConfig(mode="2025-03-26"))
    client.connect()
    for _ in range(3):
        for m in client.messages_to_send():
            server.receive_message(m.payload)
        for m in server.messages_to_send():
            client.receive_message(m.payload)
    assert client.state == server.state == State.READY
    assert server.protocol_version == "2025-03-26"
    rid = client.send_request("ping")
    for m in client.messages_to_send():
        server.receive_message(m.payload)
    events: list[Event] = []
    for m in server.messages_to_send():
        events += client.receive_message(m.payload)
    assert [type(e).__name__ for e in events] == ["ResponseReceived"]
    assert events[0].request_id == rid  # type: ignore[attr-defined]


def test_legacy_client_over_raw_bytes_sees_errors_without_id() -> None:
    client = legacy_client()
    events = feed(client, error(None, PARSE_ERROR, "garbled"))
    assert events == [MessageRejected(None, PARSE_ERROR, "garbled")]


@pytest.mark.parametrize(
    "read",
    [
        b'{"id":1}\n',
        b'{"id":1}\r\n',
        b' {"id":1}\n',
        b'\t{"id":1}\n',
        b'\x01{"id":1}\n',
        b'\xc3\xa9"x"\n',
        b"a\n",
        b"\n",
        b"\r\n",
        b"  \n",
        b'{"id":1}\n{"id":2}\n',
        b'{"id":1}\n{"id":2}',
        b'{"id":1}\r',
        b'{"id":1}',
        b"x" * 64 + b"\n",
        b"x" * 65 + b"\n",
        b"x" * 63 + b"\r\n",
    ],
)
def test_a_whole_read_gives_what_the_same_bytes_in_two_pieces_give(read: bytes) -> None:
    """A read that is one whole message takes a shorter path than a read that must be
    joined to what came before: both give the same lines."""
    whole = LineBuffer(64, 8)
    at_once = [bytes(x) if isinstance(x, bytearray) else x for x in whole.feed(read)]
    split = LineBuffer(64, 8)
    pieces = split.feed(read[:1]) + split.feed(read[1:])
    assert at_once == [bytes(x) if isinstance(x, bytearray) else x for x in pieces]
    assert whole.pending == split.pending


@pytest.mark.parametrize("first", [None, "bytes", "messages"])
@pytest.mark.parametrize("then", ["bytes", "messages"])
@pytest.mark.parametrize("count", [1, 3])
def test_either_drain_gives_the_same_messages_whatever_the_buffer_holds(
    first: str | None, then: str, count: int
) -> None:
    """The buffer holds tuples after a `data_to_send` and records after a
    `messages_to_send` or before any drain (`_base.Queued`): draining the other way,
    with one message queued or several, gives the same payloads and routing."""
    conn = legacy_server("2025-06-18")
    if first == "bytes":  # the last drain sets the form of what is queued next
        conn.data_to_send()
    elif first == "messages":
        conn.messages_to_send()
    feed(conn, *(request(10 + i, "ping") for i in range(count)))
    conn.check_invariants()
    lines = [PING_OK.replace(b'"id":1', b'"id":%d' % (10 + i)) for i in range(count)]
    if then == "bytes":
        assert conn.data_to_send() == b"".join(lines)
    else:
        msgs = conn.messages_to_send()
        assert all(type(m) is OutgoingMessage for m in msgs)
        assert [m.payload + b"\n" for m in msgs] == lines
        routing = [(m.kind, m.method, m.request_id, m.related_request_id) for m in msgs]
        assert routing == [("result", "ping", 10 + i, 10 + i) for i in range(count)]
    assert conn.data_to_send() == b"" and conn.messages_to_send() == []
    assert not conn.output_pending
    conn.check_invariants()
