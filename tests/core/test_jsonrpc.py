"""The JSON-RPC codec as the engine applies it: strict decoding, error replies, batches, limits.

Everything goes through the public connection API (bytes in, bytes and events
out); the exact bytes of the engine's error replies are checked where the
engine wrote the message itself.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    SERVER_BUSY,
    ConnectionClosed,
    ErrorReceived,
    Limits,
    LocalProtocolError,
    MessageRejected,
    ProgressReceived,
    RemoteProtocolError,
    RequestFailed,
    RequestReceived,
    ResponseIgnored,
    ResponseReceived,
    State,
)
from mcp_core import _jsonrpc as jr
from tests.schema_check import validate_message

from .engine_support import (
    error,
    error_code,
    feed,
    legacy_client,
    legacy_server,
    line,
    modern_params,
    modern_server,
    notification,
    of_type,
    one,
    out,
    request,
    result,
    server,
    wire,
)

PING_OK = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


def reply_bytes(rid: str, code: int, message: str) -> bytes:
    """The exact error line the engine writes (ids spelled as JSON)."""
    body = f'{{"code":{code},"message":{json.dumps(message)}}}'
    return f'{{"jsonrpc":"2.0","id":{rid},"error":{body}}}\n'.encode()


# ------------------------------------------------------------ strict decoding

# (raw line, id as JSON, message of the -32600 reply)
INVALID_REQUESTS = [
    pytest.param(
        b'{"jsonrpc":"1.0","id":7,"method":"ping"}',
        "7",
        "jsonrpc must be exactly '2.0'",
        id="jsonrpc-1.0",
    ),
    pytest.param(
        b'{"id":7,"method":"ping"}', "7", "jsonrpc must be exactly '2.0'", id="no-jsonrpc"
    ),
    pytest.param(
        b'{"jsonrpc":2.0,"id":"s","method":"ping"}',
        '"s"',
        "jsonrpc must be exactly '2.0'",
        id="jsonrpc-number",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
        "null",
        "id must be a string or an integer",
        id="id-null",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
        "null",
        "id must be a string or an integer",
        id="id-float",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}',
        "null",
        "id must be a string or an integer",
        id="id-integral-float",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
        "null",
        "id must be a string or an integer",
        id="id-bool",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
        "null",
        "id must be a string or an integer",
        id="id-object",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":[1],"method":"ping"}',
        "null",
        "id must be a string or an integer",
        id="id-array",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":3,"method":5}', "3", "method must be a string", id="method-int"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":3,"method":null}',
        "3",
        "method must be a string",
        id="method-null",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":3,"method":"ping","result":{}}',
        "3",
        "a request must not carry result or error",
        id="request-with-result",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":3,"method":"ping","error":{"code":1,"message":"x"}}',
        "3",
        "a request must not carry result or error",
        id="request-with-error",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1,2]}',
        "4",
        "params must be an object",
        id="params-array",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":"x"}',
        "4",
        "params must be an object",
        id="params-string",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":null}',
        "4",
        "params must be an object",
        id="params-null",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":"m","method":"' + b"x" * 300 + b'"}',
        '"m"',
        "method name too long",
        id="method-too-long",
    ),
    pytest.param(b"42", "null", "a JSON-RPC message must be an object", id="top-level-number"),
    pytest.param(b'"ping"', "null", "a JSON-RPC message must be an object", id="top-level-string"),
    pytest.param(b"null", "null", "a JSON-RPC message must be an object", id="top-level-null"),
    pytest.param(
        b'"' + b"[" * 300 + b'"',
        "null",
        "a JSON-RPC message must be an object",
        id="top-level-string-of-brackets",
    ),
]


@pytest.mark.parametrize(("raw", "rid", "message"), INVALID_REQUESTS)
def test_invalid_request_is_answered_with_exact_bytes(raw: bytes, rid: str, message: str) -> None:
    conn = legacy_server("2025-06-18")  # a revision whose errors carry "id": null
    events = conn.receive_data(raw + b"\n")
    assert conn.data_to_send() == reply_bytes(rid, INVALID_REQUEST, message)
    rejected = one(events, MessageRejected)
    assert rejected.code == INVALID_REQUEST
    assert rejected.message == message
    assert rejected.request_id == json.loads(rid)
    assert conn.state == State.READY
    assert conn.requests_in_flight == (0, 0)
    conn.check_invariants()
    # The connection goes on: the next message is served normally.
    conn.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert conn.data_to_send() == PING_OK


@pytest.mark.parametrize(("raw", "rid", "message"), INVALID_REQUESTS)
@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_error_replies_validate_against_older_schemas(
    revision: str, raw: bytes, rid: str, message: str
) -> None:
    # These schemas require a RequestId on every error; JSON-RPC 2.0 requires null when
    # the id cannot be read. No message satisfies both, so an unattributable error keeps
    # JSON-RPC's null and the rest of it is checked against the schema.
    conn = legacy_server(revision)
    conn.receive_data(raw + b"\n")
    (msg,) = out(conn)
    if msg["id"] is None:
        msg = {**msg, "id": 0}
    validate_message(msg, revision, sender="server")


@pytest.mark.parametrize(
    ("raw", "rid", "message"),
    [case for case in INVALID_REQUESTS],
)
def test_error_replies_validate_against_2025_11_25_schema(
    raw: bytes, rid: str, message: str
) -> None:
    conn = legacy_server("2025-11-25")
    conn.receive_data(raw + b"\n")
    (msg,) = out(conn)
    validate_message(msg, "2025-11-25", sender="server")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"jsonrpc":',
        b"{'jsonrpc': '2.0'}",
        b'{"jsonrpc":"2.0","id":1,"method":"ping"',
        b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing',
        b'{"jsonrpc":"2.0","id":1,"method":"ping",}',
        b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":NaN}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\x00"}}',
    ],
    ids=["truncated", "single-quotes", "unclosed", "trailing", "comma", "bom", "nan", "nul"],
)
def test_unparseable_line_gets_parse_error_with_null_id(raw: bytes) -> None:
    conn = legacy_server("2025-06-18")
    events = conn.receive_data(raw + b"\n")
    data = conn.data_to_send()
    assert data.startswith(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"')
    assert data.endswith(b'"}}\n') and data.count(b"\n") == 1
    assert one(events, MessageRejected).code == PARSE_ERROR
    assert conn.state == State.READY
    conn.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert conn.data_to_send() == PING_OK


def test_case_variant_method_key_is_answered_invalid_request() -> None:
    conn = legacy_server()
    conn.receive_data(b'{"jsonrpc":"2.0","id":9,"Method":"ping"}\n')
    assert [(m["id"], error_code(m)) for m in out(conn)] == [(9, INVALID_REQUEST)]


def test_case_variant_method_key_is_never_dispatched() -> None:
    conn = legacy_server()
    events = conn.receive_data(b'{"jsonrpc":"2.0","id":9,"Method":"tools/list"}\n')
    assert not of_type(events, RequestReceived)
    assert one(events, MessageRejected).request_id == 9
    assert conn.requests_in_flight == (0, 0)


def test_duplicate_keys_are_handled_deterministically() -> None:
    raw = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"ping"}\n'
    answers = []
    for _ in range(2):
        conn = legacy_server()
        events = conn.receive_data(raw)
        msgs = out(conn)
        # Exactly one outcome for id 1: answered (as ping) or refused, never both/none.
        assert len(msgs) + len(of_type(events, RequestReceived)) == 1
        answers.append((msgs, [type(e).__name__ for e in events]))
    assert answers[0] == answers[1]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            b'{"jsonrpc":"1.0","method":"notifications/initialized"}',
            "jsonrpc must be exactly '2.0'",
        ),
        (b'{"jsonrpc":"2.0","method":7}', "method must be a string"),
        (
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}',
            "params must be an object",
        ),
    ],
)
def test_invalid_notification_is_reported_but_never_answered(raw: bytes, message: str) -> None:
    conn = legacy_server()
    events = conn.receive_data(raw + b"\n")
    assert conn.data_to_send() == b""
    assert events == [MessageRejected(None, INVALID_REQUEST, message)]


@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        (
            {"jsonrpc": "2.0", "id": 99, "result": {}, "error": {"code": 1, "message": "x"}},
            MessageRejected(
                99, INVALID_REQUEST, "a response needs exactly one of result and error"
            ),
        ),
        (
            {"jsonrpc": "1.0", "id": 99, "result": {}},
            MessageRejected(99, INVALID_REQUEST, "jsonrpc must be exactly '2.0'"),
        ),
        (
            {"jsonrpc": "2.0", "id": 99, "error": {"code": "x", "message": "m"}},
            MessageRejected(99, INVALID_REQUEST, "malformed error object"),
        ),
        (
            {"jsonrpc": "2.0", "id": 99, "result": 5},
            MessageRejected(99, INVALID_REQUEST, "result must be an object"),
        ),
        (
            {"jsonrpc": "2.0", "id": 1.5, "result": {}},
            MessageRejected(None, INVALID_REQUEST, "response id must be a string or an integer"),
        ),
        (
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}},
            MessageRejected(None, -32700, "bad"),
        ),
        ({"jsonrpc": "2.0", "id": 99, "result": {}}, ResponseIgnored(99, late=False)),
        ({"jsonrpc": "2.0", "id": "99", "result": {}}, ResponseIgnored("99", late=False)),
    ],
)
def test_responses_are_never_answered(msg: dict[str, Any], expected: Any) -> None:
    for conn in (legacy_server(), legacy_client()):
        events = feed(conn, msg)
        assert events == [expected]
        assert conn.data_to_send() == b""
        assert conn.state == State.READY


@pytest.mark.parametrize(
    "bad",
    [
        {"jsonrpc": "2.0", "result": {"tools": []}, "error": {"code": 1, "message": "x"}},
        {"jsonrpc": "2.0", "result": []},
        {"jsonrpc": "2.0", "error": {"code": 1}},
        {"jsonrpc": "2.0", "error": "boom"},
    ],
)
def test_malformed_response_to_a_pending_request_fails_it(bad: dict[str, Any]) -> None:
    conn = legacy_client()
    rid = conn.send_request("tools/list")
    conn.data_to_send()
    events = feed(conn, {**bad, "id": rid})
    failed = one(events, RequestFailed)
    assert (failed.request_id, failed.method, failed.code) == (rid, "tools/list", INTERNAL_ERROR)
    assert failed.message.startswith("invalid response: ")
    assert one(events, MessageRejected).request_id == rid
    assert conn.requests_in_flight == (0, 0)
    # A second answer for the same id is dropped.
    assert of_type(feed(conn, result(rid, {"tools": []})), ResponseIgnored)


def test_result_that_fails_its_model_fails_the_request() -> None:
    conn = legacy_client()
    rid = conn.send_request("tools/list")
    events = feed(conn, result(rid, {"tools": "not-a-list"}))
    failed = one(events, RequestFailed)
    assert failed.code == INTERNAL_ERROR and failed.message.startswith("invalid result: ")


def test_error_response_surfaces_code_message_and_data() -> None:
    conn = legacy_client()
    rid = conn.send_request("tools/call", {"name": "x"})
    events = feed(conn, error(rid, -32602, "Unknown tool: x", {"tool": "x"}))
    assert events == [ErrorReceived(rid, "tools/call", -32602, "Unknown tool: x", {"tool": "x"})]


def test_string_and_integer_ids_are_distinct() -> None:
    conn = legacy_server()
    events = feed(conn, request(1, "tools/list"), request("1", "tools/list"))
    assert [e.request_id for e in of_type(events, RequestReceived)] == [1, "1"]
    assert conn.data_to_send() == b""
    assert conn.send_result("1", {"tools": []})
    assert out(conn) == [result("1", {"tools": []})]
    assert conn.requests_in_flight == (0, 1)


# ---------------------------------------------------------------------- batches

BATCH = [
    request(1, "ping"),
    request(2, "tools/list"),
    notification("notifications/roots/list_changed"),
]


def test_batch_is_accepted_on_a_2025_03_26_session() -> None:
    conn = legacy_server("2025-03-26")
    events = feed(conn, BATCH)
    assert out(conn) == [result(1, {})]
    assert [e.request_id for e in of_type(events, RequestReceived)] == [2]
    assert [type(e).__name__ for e in events] == ["RequestReceived", "NotificationReceived"]
    conn.send_result(2, {"tools": []})
    for msg in out(conn):
        validate_message(msg, "2025-03-26", sender="server", request_method="tools/list")
    validate_message(BATCH, "2025-03-26", sender="client")


def test_batch_items_are_judged_one_by_one() -> None:
    conn = legacy_server("2025-03-26")
    events = feed(
        conn,
        [
            request(5, "initialize", {"protocolVersion": "2025-03-26"}),
            5,
            {"jsonrpc": "1.0", "id": 6, "method": "ping"},
            request(7, "ping"),
        ],
    )
    assert out(conn) == [
        error(5, INVALID_REQUEST, "initialize must not be part of a batch"),
        error(None, INVALID_REQUEST, "batch items must be objects"),
        error(6, INVALID_REQUEST, "jsonrpc must be exactly '2.0'"),
        result(7, {}),
    ]
    assert [e.request_id for e in of_type(events, MessageRejected)] == [5, None, 6]
    assert conn.protocol_version == "2025-03-26"


@pytest.mark.parametrize(
    ("batch", "message"),
    [([], "empty batch"), ([request(i, "ping") for i in range(3)], "batch too large")],
)
def test_empty_or_oversized_batch_gets_one_error(batch: list[Any], message: str) -> None:
    conn = legacy_server("2025-03-26", limits=Limits(max_batch_size=2))
    feed(conn, batch)
    assert conn.data_to_send() == reply_bytes("null", INVALID_REQUEST, message)


def test_batch_of_responses_is_accepted_by_a_2025_03_26_client() -> None:
    conn = legacy_client("2025-03-26")
    a = conn.send_request("tools/list")
    b = conn.send_request("prompts/list")
    events = feed(conn, [result(b, {"prompts": []}), result(a, {"tools": []})])
    assert [(e.request_id, e.method) for e in of_type(events, ResponseReceived)] == [
        (b, "prompts/list"),
        (a, "tools/list"),
    ]


BATCH_REFUSED = reply_bytes(
    "null", INVALID_REQUEST, "batch arrays are not allowed in this protocol revision"
)
# 2025-11-25 and 2026-07-28 leave the id out of an error that names no request.
BATCH_REFUSED_NO_ID = (
    b'{"jsonrpc":"2.0","error":{"code":-32600,'
    b'"message":"batch arrays are not allowed in this protocol revision"}}\n'
)


def batch_refused(revision: str) -> bytes:
    return BATCH_REFUSED_NO_ID if revision in ("2025-11-25", "2026-07-28") else BATCH_REFUSED


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batch_is_refused_on_other_legacy_revisions(revision: str) -> None:
    conn = legacy_server(revision)
    events = feed(conn, BATCH)
    assert conn.data_to_send() == batch_refused(revision)
    assert not of_type(events, RequestReceived)
    client = legacy_client(revision)
    rid = client.send_request("tools/list")
    client.data_to_send()
    assert one(feed(client, [result(rid, {"tools": []})]), MessageRejected)
    assert client.data_to_send() == batch_refused(revision)
    assert client.requests_in_flight == (1, 0)


def test_batch_is_refused_on_a_modern_stream() -> None:
    conn = modern_server()
    items = [request(1, "tools/list", modern_params()), request(2, "tools/list", modern_params())]
    events = feed(conn, items)
    assert conn.data_to_send() == batch_refused("2026-07-28")
    assert not of_type(events, RequestReceived)


def test_initialize_inside_a_batch_before_any_session_is_refused() -> None:
    conn = server()
    events = feed(
        conn,
        [
            request(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-03-26",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            )
        ],
    )
    assert conn.data_to_send() == BATCH_REFUSED
    assert conn.protocol_version is None and conn.state == State.AWAITING_FIRST
    assert one(events, MessageRejected).code == INVALID_REQUEST


# ------------------------------------------------------------------------ limits


@pytest.mark.parametrize(
    "field",
    [
        "max_message_bytes",
        "max_integer_digits",
        "max_string_length",
        "max_inbound_in_flight",
        "max_outbound_in_flight",
        "max_buffered_output_bytes",
        "max_batch_size",
        "max_remembered_ids",
        "max_method_length",
    ],
)
def test_limits_must_be_positive(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: 0})
    Limits(**{field: 1})


@pytest.mark.parametrize("depth", [0, 201])
def test_depth_limit_is_bounded_by_the_parser(depth: int) -> None:
    with pytest.raises(ValueError, match="max_depth"):
        Limits(max_depth=depth)


def parse_error_for(conn: Any, payload: bytes) -> tuple[list[Any], list[Any]]:
    events = conn.receive_message(payload)
    return events, out(conn)


def test_message_over_the_byte_limit_via_receive_message_is_a_parse_error() -> None:
    conn = legacy_server("2025-06-18", limits=Limits(max_message_bytes=300))
    small = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    big = b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"p":"' + b"x" * 300 + b'"}}}'
    events, msgs = parse_error_for(conn, big)
    assert msgs == [
        error(
            2,
            PARSE_ERROR,
            f"message of {len(big)} bytes exceeds the limit of 300 bytes (Limits.max_message_bytes)",
        )
    ]
    assert one(events, MessageRejected).code == PARSE_ERROR
    conn.receive_message(small)
    assert out(conn) == [result(1, {})]


@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
def test_hundred_thousand_levels_never_raise_recursion_error(opener: bytes) -> None:
    closer = b"]" if opener == b"[" else b"}"
    deep = opener * 100_000 + b"1" + closer * 100_000
    conn = server()
    events = conn.receive_data(deep + b"\n")
    assert out(conn) == [
        error(None, PARSE_ERROR, "message nests deeper than 128 levels (Limits.max_depth)")
    ]
    assert one(events, MessageRejected).code == PARSE_ERROR
    nested = (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{"a":'
        + deep
        + b"}}}"
    )
    conn.receive_message(nested)
    assert [(m["id"], error_code(m)) for m in out(conn)] == [(5, PARSE_ERROR)]


def nested_call(depth: int) -> bytes:
    """A tools/call whose whole message nests exactly `depth` levels."""
    # The message object is level 1, params 2, arguments 3.
    inner = b"[" * (depth - 3) + b"1" + b"]" * (depth - 3)
    return (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{"a":'
        + inner
        + b"}}}"
    )


@pytest.mark.parametrize("limit", [8, 128, 200])
def test_depth_limit_boundary(limit: int) -> None:
    conn = legacy_server("2025-06-18", limits=Limits(max_depth=limit))
    events = conn.receive_message(nested_call(limit))
    assert one(events, RequestReceived).request_id == 5
    events = conn.receive_message(nested_call(limit + 1).replace(b'"id":5', b'"id":6'))
    assert out(conn) == [
        error(6, PARSE_ERROR, f"message nests deeper than {limit} levels (Limits.max_depth)")
    ]


def mixed_call(objects: int, arrays: int, pad: int = 0) -> bytes:
    """A tools/call nesting 3 + `objects` + `arrays` levels: objects first, then
    arrays, so the first `[` comes late in a text well over twice the limit (and
    `pad` bytes of string before any of it)."""
    inner = b'{"k":' * objects + b"[" * arrays + b"1" + b"]" * arrays + b"}" * objects
    return (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"'
        + b"n" * pad
        + b'","arguments":{"a":'
        + inner
        + b"}}}"
    )


@pytest.mark.parametrize("objects", [0, 1, 60, 125])
@pytest.mark.parametrize("via", ["receive_message", "parse"])
def test_depth_is_judged_by_both_brackets_wherever_the_first_array_is(
    objects: int, via: str
) -> None:
    """The bracket count counts the `[` from the first one found: a text whose arrays
    all come after its objects (or that has none) is judged as one counting both
    kinds from the start, at the limit and one past it, in the engine's inline parse
    and in `jr.parse`."""
    limits = Limits()
    for arrays, deep in ((125 - objects, False), (126 - objects, True)):
        text = mixed_call(objects, arrays, pad=300)
        assert len(text) > 2 * limits.max_depth + 1
        if via == "parse":
            if deep:
                with pytest.raises(jr.LimitExceeded, match="nests deeper than 128"):
                    jr.parse(text, limits)
            else:
                jr.parse(text, limits)
            continue
        conn = legacy_server("2025-06-18", limits=limits)
        events = conn.receive_message(text)
        if deep:
            assert out(conn) == [
                error(5, PARSE_ERROR, "message nests deeper than 128 levels (Limits.max_depth)")
            ]
        else:
            assert one(events, RequestReceived).request_id == 5


@pytest.mark.parametrize(
    "text",
    [b"", b"x", b"[", b"{", b"[{", b"{[", b"a[b{c[d{", b"{{{[", b"[[[{", b'"[{"' * 40, b"]}" * 9],
)
def test_the_bracket_count_is_that_of_both_kinds(text: bytes) -> None:
    expected = text.count(b"[") + text.count(b"{")
    assert jr._openers(text) == expected
    assert jr._openers(bytearray(text)) == expected


def depth_first_outcome(data: bytes, limits: Limits) -> str:
    """What `parse` said when it judged depth before parsing every message longer than
    the limit: the oracle for the short messages it now parses first."""
    limit = limits.max_depth
    skeleton = re.sub(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', b"", data)
    level = deepest = 0
    for byte in skeleton:
        if byte in b"[{":
            level += 1
            deepest = max(deepest, level)
        elif byte in b"]}":
            level -= 1
    if len(data) > limit and deepest > limit:
        return "too deep"
    try:
        json.loads(data)
    except ValueError:
        return "parse error"
    return "value"


def parse_outcome(data: bytes, limits: Limits) -> str:
    """What `jr.parse` says of `data`, in `depth_first_outcome`'s words."""
    try:
        jr.parse(data, limits)
    except jr.LimitExceeded as exc:
        assert exc.setting == "Limits.max_depth"
        return "too deep"
    except RemoteProtocolError:
        return "parse error"
    return "value"


SHORT_TEXTS = [
    b"[[[[[1]]]]]",  # 5 deep, 11 bytes: over twice the limit, judged first
    b"[[[[[]]]]]",  # 5 deep, 10 bytes
    b"[[[[1]]]]",  # 4 deep, 9 bytes: the longest a short message can be
    b"[[[[[",  # 5 deep and unclosed: malformed, refused for its depth
    b"[[[[[]",
    b"{{{{{",
    b'{"a":{"b":[[[',
    b"[[[[x",  # 4 deep, malformed: a parse error
    b'["[[[[["]',  # brackets in a string
    b'[[[{"[":1}]]]',  # 4 deep with a bracket in a key
    b" [[[[[] ",
    b"[1,[2,[3,[4,[5]]]]]",
]


@pytest.mark.parametrize("text", SHORT_TEXTS)
def test_short_messages_are_judged_for_depth_as_before(text: bytes) -> None:
    """Up to twice the limit (and one byte), `parse` parses first and judges depth only
    when that fails: a valid text cannot nest deeper than half its length. The outcome
    is the one judging depth first gave."""
    limits = Limits(max_depth=4)
    assert parse_outcome(text, limits) == depth_first_outcome(text, limits)


# Objects only (no `[`), with `Limits(max_depth=4)`: over twice the limit and one (9
# bytes), at most five bytes a level and one (21), so parsed before depth is judged.
OBJECT_TEXTS = [
    b'{"":{"":{"":{}}}}',  # 4 deep in 17 bytes
    b'{"":{"":{"":{"":{}}}}}',  # 5 deep in the fewest bytes a valid text takes (22)
    b'{"":{"":{"":{"":1}}}}',  # 4 deep, 21 bytes
    b'{"":{"":{"":{"":{',  # 5 deep and unclosed in 17 bytes: refused for its depth
    b'{"a":{"b":{"c":{"d":{',  # the same in 21 bytes
    b'{"a":{"b":{"c":{"d":{}',  # 22 bytes: counted
    b"{{{{{{{{{{{",  # 11 deep, no key: malformed at its second byte, still too deep
    b'{"a": {"b": {"c": {}}}}',  # 4 deep, with spaces (23 bytes: counted)
    b'{"{{{{{{{{{{":{"":{}}}',  # braces in a key: 3 deep
    b'{"a":1,"b":{"c":{}}',  # unclosed, 3 deep: a parse error
    b'{"":{"":{"":{"":x',  # 4 deep, malformed: a parse error
]


@pytest.mark.parametrize("text", OBJECT_TEXTS)
@pytest.mark.parametrize("via", ["receive_message", "parse"])
def test_array_free_messages_are_judged_for_depth_as_before(text: bytes, via: str) -> None:
    """A text without a `[` spends at least five bytes on each level but its innermost
    (`{`, `""`, `:`, `}`), so up to five times the limit (and one byte) it is parsed
    first and judged for depth only when that fails, in `jr.parse` and in the engine's
    inline parse alike. The outcome is the one judging depth first gave."""
    limits = Limits(max_depth=4)
    expected = depth_first_outcome(text, limits)
    if via == "parse":
        assert parse_outcome(text, limits) == expected
        return
    conn = legacy_server("2025-06-18", limits=limits)
    conn.receive_message(text)
    said = out(conn)
    if expected == "value":  # a bare object: an invalid request, not a parse error
        assert [error_code(m) for m in said] == [INVALID_REQUEST]
    else:
        assert [error_code(m) for m in said] == [PARSE_ERROR]
        assert ("nests deeper" in said[0]["error"]["message"]) == (expected == "too deep")


_KEYS = st.sampled_from(["", "a", "[", "{", "k\\", '"'])
_LEAVES = st.sampled_from([{}, 1, None, "s", "{{"])
_OBJECTS = st.recursive(
    _LEAVES, lambda inner: st.dictionaries(_KEYS, inner, max_size=2), max_leaves=12
)


@settings(max_examples=400, deadline=None)
@given(
    value=_OBJECTS,
    limit=st.integers(1, 8),
    spaced=st.booleans(),
    cut=st.integers(0, 400),
)
def test_any_array_free_text_is_judged_for_depth_as_judging_first_did(
    value: Any, limit: int, spaced: bool, cut: int
) -> None:
    """Objects nested in any shape (keys with brackets and escapes, compact or spaced),
    whole or cut short anywhere: `parse` says what judging depth before parsing said."""
    text = json.dumps(value, separators=(", ", ": ") if spaced else (",", ":")).encode()
    for data in (text, text[: cut % (len(text) + 1)]):
        limits = Limits(max_depth=limit)
        assert parse_outcome(data, limits) == depth_first_outcome(data, limits)


@pytest.mark.parametrize("size", [129, 200, 201, 257, 258])
def test_unclosed_nesting_near_the_parsers_own_limit_is_refused_for_depth(size: int) -> None:
    # The parser gives up at 200 levels by itself; what it refuses is still refused
    # for the configured depth, whichever side of the short-message bound it is.
    with pytest.raises(jr.LimitExceeded, match="nests deeper than 128"):
        jr.parse(b"[" * size, Limits())


def test_brackets_inside_strings_do_not_count_towards_depth() -> None:
    conn = legacy_server(limits=Limits(max_depth=4))
    name = '[[[[{{{{\\"[[[[\\\\'
    raw = (
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"' + name + '"}}'
    ).encode()
    events = conn.receive_message(raw)
    assert one(events, RequestReceived).params.name == '[[[[{{{{"[[[[\\'


@pytest.mark.parametrize("digits", [10, 1000])
def test_integer_digit_limit(digits: int) -> None:
    conn = legacy_server("2025-06-18", limits=Limits(max_integer_digits=digits))
    ok = int("9" * (digits - 1) + "8")
    events = feed(conn, request(1, "tools/call", {"name": "t", "arguments": {"n": -ok}}))
    assert one(events, RequestReceived).params.arguments == {"n": -ok}
    feed(conn, request(2, "tools/call", {"name": "t", "arguments": {"n": 10**digits}}))
    assert out(conn) == [
        error(2, PARSE_ERROR, f"integer has more than {digits} digits (Limits.max_integer_digits)")
    ]


def test_integer_with_exactly_the_allowed_digits_is_accepted_on_the_slow_path() -> None:
    conn = legacy_server()  # default limit: 1000 digits
    n = int("9" * 1000)
    events = feed(
        conn,
        request(1, "tools/call", {"name": "t", "arguments": {"n": n, "s": "1" * 1001}}),
    )
    assert one(events, RequestReceived).params.arguments["n"] == n


def test_string_length_limit_covers_values_and_keys() -> None:
    conn = legacy_server("2025-06-18", limits=Limits(max_string_length=100))
    events = feed(conn, request(1, "tools/call", {"name": "t", "arguments": {"s": "x" * 100}}))
    assert one(events, RequestReceived)
    feed(conn, request(2, "tools/call", {"name": "t", "arguments": {"s": "x" * 101}}))
    feed(conn, request(3, "tools/call", {"name": "t", "arguments": {"k" * 101: 1}}))
    too_long = "string of 101 characters exceeds the limit of 100 (Limits.max_string_length)"
    assert out(conn) == [error(2, PARSE_ERROR, too_long), error(3, PARSE_ERROR, too_long)]


CALL_PREFIX = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":'
)


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity", b"nan", b"inf"])
def test_non_finite_tokens_are_parse_errors(token: bytes) -> None:
    conn = legacy_server()
    events = conn.receive_data(CALL_PREFIX + token + b"}}}\n")
    assert not of_type(events, RequestReceived)
    assert [error_code(m) for m in out(conn)] == [PARSE_ERROR]


OVERFLOWING = [b"1e999", b"-1e999", b"1E+400", b"1" * 400 + b".0", b"1" * 250 + b"e99"]


@pytest.mark.parametrize("literal", OVERFLOWING)
def test_overflowing_literal_in_a_typed_field_is_invalid_params(literal: bytes) -> None:
    # Server side: a string field.
    conn = legacy_server()
    raw = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":' + literal + b"}}"
    events = conn.receive_data(raw + b"\n")
    assert not of_type(events, RequestReceived)
    assert [(m["id"], error_code(m)) for m in out(conn)] == [(1, INVALID_PARAMS)]
    # Client side: a number field (sampling temperature).
    client = legacy_client(capabilities={"sampling": {}})
    raw = (
        b'{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[],'
        b'"maxTokens":10,"temperature":' + literal + b"}}"
    )
    events = client.receive_data(raw + b"\n")
    assert not of_type(events, RequestReceived)
    assert [(m["id"], error_code(m)) for m in out(client)] == [("s", INVALID_PARAMS)]


@pytest.mark.parametrize("literal", OVERFLOWING[:2])
def test_overflowing_literal_in_free_form_arguments_reaches_the_application(
    literal: bytes,
) -> None:
    # Documented in _jsonrpc: free-form values may carry inf, as Python's json would.
    conn = legacy_server()
    events = conn.receive_data(CALL_PREFIX + literal + b"}}}\n")
    value = one(events, RequestReceived).params.arguments["x"]
    assert math.isinf(value)


def test_non_finite_output_is_written_as_null() -> None:
    conn = legacy_server()
    feed(conn, request(1, "tools/call", {"name": "t"}))
    conn.send_result(
        1, {"content": [], "structuredContent": {"a": math.inf, "b": -math.inf, "c": math.nan}}
    )
    data = conn.data_to_send()
    assert b"Infinity" not in data and b"NaN" not in data
    assert wire(data)[0]["result"]["structuredContent"] == {"a": None, "b": None, "c": None}


@pytest.mark.parametrize("field", ["progress", "total"])
def test_non_finite_progress_is_refused(field: str) -> None:
    conn = legacy_client()
    rid = conn.send_request("tools/list", progress=True)
    values = {"progress": b"1", "total": b"2", field: b"1e999"}
    raw = (
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":'
        + str(rid).encode()
        + b',"progress":'
        + values["progress"]
        + b',"total":'
        + values["total"]
        + b"}}\n"
    )
    events = conn.receive_data(raw)
    assert not of_type(events, ProgressReceived)
    assert one(events, MessageRejected).code == INVALID_PARAMS


def test_inbound_in_flight_cap_refuses_only_the_excess() -> None:
    conn = legacy_server(limits=Limits(max_inbound_in_flight=2))
    events = feed(
        conn,
        request(1, "tools/call", {"name": "a"}),
        request(2, "tools/call", {"name": "b"}),
        request(3, "tools/call", {"name": "c"}),
    )
    assert [e.request_id for e in of_type(events, RequestReceived)] == [1, 2]
    assert out(conn) == [error(3, SERVER_BUSY, "too many requests in flight")]
    # The first two are untouched and still answerable; then there is room again.
    assert conn.send_result(1, {"content": []})
    assert conn.send_result(2, {"content": []})
    assert [m["id"] for m in out(conn)] == [1, 2]
    events = feed(conn, request(3, "tools/call", {"name": "c"}))
    assert one(events, RequestReceived).request_id == 3
    conn.check_invariants()


def test_ping_at_the_inbound_cap_is_still_answered() -> None:
    conn = legacy_server(limits=Limits(max_inbound_in_flight=1))
    feed(conn, request(1, "tools/call", {"name": "a"}), request(2, "ping"))
    assert [m["id"] for m in out(conn)] == [2]
    assert conn.requests_in_flight == (0, 1)


def test_outbound_in_flight_cap_raises_locally() -> None:
    conn = legacy_client(limits=Limits(max_outbound_in_flight=2))
    a = conn.send_request("tools/list")
    conn.send_request("tools/list")
    sent = conn.data_to_send()
    with pytest.raises(LocalProtocolError, match="too many requests in flight"):
        conn.send_request("tools/list")
    assert conn.data_to_send() == b""
    assert len(wire(sent)) == 2
    feed(conn, result(a, {"tools": []}))
    conn.send_request("tools/list")
    assert conn.requests_in_flight == (2, 0)


def test_output_buffer_bound_raises_for_application_sends() -> None:
    conn = legacy_server(limits=Limits(max_buffered_output_bytes=300))
    feed(conn, request(1, "tools/call", {"name": "a"}), request(2, "tools/call", {"name": "b"}))
    assert conn.send_result(1, {"content": [{"type": "text", "text": "x" * 150}]})
    with pytest.raises(LocalProtocolError, match="output buffer is full"):
        conn.send_result(2, {"content": [{"type": "text", "text": "y" * 150}]})
    # Nothing was queued for 2 and it is still waiting; after draining it can be answered.
    assert [m["id"] for m in out(conn)] == [1]
    assert conn.send_result(2, {"content": []})
    assert [m["id"] for m in out(conn)] == [2]


def test_peer_that_never_reads_our_automatic_replies_ends_the_connection() -> None:
    conn = legacy_server(limits=Limits(max_buffered_output_bytes=1000))
    events = conn.receive_data(b"".join(line(request(i, "ping")) for i in range(50)))
    assert len(of_type(events, MessageRejected)) == 0
    closed = one(events, ConnectionClosed)
    assert isinstance(closed.error, RemoteProtocolError)
    assert closed.error.http_status == 503
    assert conn.state == State.ERROR
    conn.check_invariants()
    with pytest.raises(RemoteProtocolError):
        conn.receive_data(line(request(99, "ping")))
