"""The limits that big payloads meet, and what is read of a message one of them refuses.

`Limits` defaults that fit real payloads and follow each other; `peek_envelope`,
which reads a refused message's id from its two ends only; the digit scan that
replaced a regex too slow for 50 MB strings; `receive_oversized` for transports
that discard an over-long message themselves.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_core import (
    LIMIT_EXCEEDED,
    PARSE_ERROR,
    ClientConfig,
    ClientConnection,
    ConnectionClosed,
    Limits,
    MessageRejected,
    RequestFailed,
    ResponseReceived,
    ServerConfig,
    ServerConnection,
    State,
)
from mcp_core._jsonrpc import (
    DEFAULT_MAX_MESSAGE_BYTES,
    PEEK_BYTES,
    Envelope,
    LimitExceeded,
    _has_digit_run,
    parse,
    peek_envelope,
)
from mcp_core._state import INITIAL_SESSION_STATE

from .engine_support import error, legacy_client, legacy_server, line, one, out, result

MiB = 1024 * 1024


# ------------------------------------------------------------------ defaults


def test_default_limits_take_a_40_mib_file_in_base64_with_room_to_spare() -> None:
    limits = Limits()
    base64_of_40_mib = (40 * MiB + 2) // 3 * 4
    assert limits.max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES == 64 * MiB
    assert limits.max_message_bytes - base64_of_40_mib > 10 * MiB
    # No second limit waits behind the first: strings and output follow it.
    assert limits.string_limit == limits.max_message_bytes
    assert limits.output_limit == 2 * limits.max_message_bytes


def test_string_and_output_limits_follow_the_message_limit_unless_set() -> None:
    raised = Limits(max_message_bytes=200 * MiB)
    assert (raised.string_limit, raised.output_limit) == (200 * MiB, 400 * MiB)
    own = Limits(max_message_bytes=200 * MiB, max_string_length=5, max_buffered_output_bytes=7)
    assert (own.string_limit, own.output_limit) == (5, 7)
    # Taking less in does not mean sending less out: a small request, a big answer.
    lowered = Limits(max_message_bytes=MiB)
    assert (lowered.string_limit, lowered.output_limit) == (MiB, 128 * MiB)


def test_a_message_at_the_string_limit_by_default_needs_no_walk() -> None:
    """A string is never longer than its message, so the walk never runs for one
    that was accepted: a long string passes, however long, up to the message limit."""
    limits = Limits(max_message_bytes=1000)
    message = b'{"s":"' + b"x" * 990 + b'"}'
    assert parse(message, limits) == {"s": "x" * 990}


# ---------------------------------------------------------------- digit scan


@pytest.mark.parametrize("run", [1000, 1001])
def test_digit_runs_are_found_across_the_scan_slices(run: int) -> None:
    # The scan works in 1 MiB slices; put the run across the first boundary.
    data = b"a" * (MiB - 500) + b"7" * run + b"b" * (2 * MiB)
    assert _has_digit_run(data, 1000) is (run > 1000)
    assert _has_digit_run(b"9" * run, 1000) is (run > 1000)


def test_an_integer_over_the_digit_limit_in_a_big_message_is_refused_with_its_id() -> None:
    limits = Limits()
    filler = "A1b2" * (MiB // 2)  # base64-like: digits, but never many in a row
    message = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "x", "params": {"f": filler}})
    assert parse(message, limits)["id"] == 3
    big = message[:-2] + ', "n": ' + "9" * 1001 + "}}"
    with pytest.raises(LimitExceeded) as refused:
        parse(big, limits)
    assert refused.value.envelope == Envelope(3, False)
    assert refused.value.setting == "Limits.max_integer_digits"


# -------------------------------------------------------------------- peeking

WINDOW = 64
PAD = "x" * 500  # longer than both windows: the middle is never seen


def ends(message: str) -> tuple[bytes, bytes]:
    raw = message.encode()
    return raw[:WINDOW], raw[-WINDOW:]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # Ours and the Python SDK's: the id near the start.
        (f'{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"a":"{PAD}"}}}}', (7, False)),
        # The TypeScript SDK's request and response: the id last.
        (f'{{"method":"m","params":{{"a":"{PAD}"}},"jsonrpc":"2.0","id":"r-1"}}', ("r-1", False)),
        (f'{{"result":{{"a":"{PAD}"}},"jsonrpc":"2.0","id":12}}', (12, True)),
        (f'{{"jsonrpc":"2.0","id":12,"error":{{"code":1,"message":"{PAD}"}}}}', (12, True)),
        # Whitespace anywhere between tokens, and escapes in a string id.
        (
            f'{{ "jsonrpc" : "2.0" ,\n "id" : "a\\"b\\\\" , "method":"m","p":"{PAD}"}}',
            ('a"b\\', False),
        ),
        (f'{{"method":"m","p":"{PAD}", "id" :\t"\\u00e9" }}', ("\u00e9", False)),
        # Read from the end, a string holding an escaped quote before the id.
        (f'{{"method":"m","p":"{PAD}","q":"a\\"b","id":6}}', (6, False)),
        # Nested members before the id are skipped when they end within the window.
        (f'{{"params":{{"a":[1,{{"b":"]"}}]}},"id":4,"method":"m","p":"{PAD}"}}', (4, False)),
        # Not a possible id: float, boolean, null, or too long a number for the limits.
        (f'{{"jsonrpc":"2.0","id":1.5,"method":"m","p":"{PAD}"}}', (None, False)),
        (f'{{"jsonrpc":"2.0","id":true,"method":"m","p":"{PAD}"}}', (None, False)),
        (f'{{"jsonrpc":"2.0","id":null,"result":"{PAD}"}}', (None, True)),
        # In the middle, out of sight: no guess.
        (f'{{"jsonrpc":"2.0","p":"{PAD}","id":5,"method":"m","q":[1,"{PAD}"]}}', (None, False)),
        # Two readings that disagree (a repeated key): no id.
        (f'{{"id":1,"method":"m","p":"{PAD}","id":2}}', (None, False)),
        (f'{{"id":2,"method":"m","p":"{PAD}","id":2}}', (2, False)),
        # A method makes it a request even with a result beside it.
        (f'{{"id":2,"method":"m","result":"{PAD}"}}', (2, False)),
        # Not an object, or not JSON at all.
        (f'[{{"jsonrpc":"2.0","id":1,"method":"m","p":"{PAD}"}}]', (None, False)),
        (f"garbage {PAD} more garbage", (None, False)),
        (f'{{"id":"unterminated {PAD}', (None, False)),
        (f'{{"id":"\\q","method":"m","p":"{PAD}"}}', (None, False)),  # not a JSON escape
        (f'{{"method":"m","p":"{PAD}", x:3}}', (None, False)),  # a key that is no string
    ],
)
def test_peek_reads_the_id_at_either_end(message: str, expected: tuple[Any, bool]) -> None:
    assert peek_envelope(*ends(message)) == Envelope(*expected)


def test_a_scalar_the_window_cuts_is_not_read() -> None:
    # The head ends inside the number: 123 could be 1234...
    message = '{"jsonrpc":"2.0","id":123'
    assert peek_envelope(message.encode(), b"") == Envelope(None, False)
    assert peek_envelope((message + ",").encode(), b"") == Envelope(123, False)


def test_an_escaped_quote_run_at_the_window_start_is_undecidable() -> None:
    # From the end, the string's opening quote cannot be told from an escaped one.
    assert peek_envelope(b"", b'\\\\"x","id":3}') == Envelope(3, False)
    assert peek_envelope(b"", b'\\"x","id":3}') == Envelope(3, False)
    assert peek_envelope(b"", b'"id":3}') == Envelope(None, False)


def test_an_id_over_the_limits_is_not_echoed() -> None:
    digits = "9" * 30
    message = f'{{"jsonrpc":"2.0","id":{digits},"method":"m","p":"{PAD}"}}'
    head = message.encode()[:200]
    assert peek_envelope(head, b"", Limits()) == Envelope(int(digits), False)
    assert peek_envelope(head, b"", Limits(max_integer_digits=20)) == Envelope(None, False)


ids = st.one_of(st.integers(-(10**12), 10**12), st.text(max_size=20))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    rid=ids,
    members=st.dictionaries(
        st.sampled_from(["jsonrpc", "method", "params", "result", "error", "x", "y"]),
        json_values,
        max_size=5,
    ),
    position=st.integers(0, 10),
    window=st.integers(1, 120),
    indent=st.sampled_from([None, 0, 2]),
)
def test_peek_never_reads_a_wrong_id(
    rid: Any, members: dict[str, Any], position: int, window: int, indent: int | None
) -> None:
    """Whatever the members, their order, the spacing and the window: the id read,
    if any, is the message's own; only a message with a result or an error is
    called a response."""
    items = list(members.items())
    items.insert(min(position, len(items)), ("id", rid))
    raw = json.dumps(dict(items), indent=indent, ensure_ascii=position % 2 == 0).encode()
    found = peek_envelope(raw[:window], raw[-window:])
    assert found.request_id in (None, rid)
    if found.request_id is not None:
        assert type(found.request_id) is type(rid)
    if found.is_response:  # (a window may hide the "method" of a malformed message)
        assert "result" in members or "error" in members
    # With the whole message in view the id is always read.
    assert peek_envelope(raw, raw).request_id == rid


@settings(max_examples=300, deadline=None)
@given(head=st.binary(max_size=80), tail=st.binary(max_size=80))
def test_peek_never_raises(head: bytes, tail: bytes) -> None:
    found = peek_envelope(head, tail)
    assert found.request_id is None or type(found.request_id) in (int, str)


def test_the_peek_window_is_at_most_half_the_limit() -> None:
    from mcp_core._jsonrpc import peek_window

    assert peek_window(Limits()) == PEEK_BYTES
    assert peek_window(Limits(max_message_bytes=300)) == 150


# ------------------------------------------------------------ receive_oversized


def test_receive_oversized_answers_a_request_with_its_id_and_names_the_setting() -> None:
    conn = legacy_server("2025-06-18")
    head = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":{"a":"'
    events = conn.receive_oversized(
        10_000_000, head, b'AAAA"}}}', limit=1000, setting="WebSocketLimits.max_message_bytes"
    )
    text = "message of 10000000 bytes exceeds the limit of 1000 bytes (WebSocketLimits.max_message_bytes)"
    assert out(conn) == [error(9, PARSE_ERROR, text)]
    assert one(events, MessageRejected).request_id == 9
    conn.receive_data(line({"jsonrpc": "2.0", "id": 10, "method": "ping"}))
    assert out(conn) == [result(10, {})]


def test_receive_oversized_of_a_response_fails_only_the_request_it_answers() -> None:
    conn = legacy_client()
    first, second = conn.send_request("ping"), conn.send_request("ping")
    conn.data_to_send()
    events = conn.receive_oversized(
        70 * MiB, b'{"jsonrpc":"2.0","id":' + str(second).encode() + b',"result":{"a":"', b'"}}'
    )
    failed = one(events, RequestFailed)
    assert (failed.request_id, failed.method, failed.code) == (second, "ping", LIMIT_EXCEEDED)
    assert "exceeds the limit of 67108864 bytes (Limits.max_message_bytes)" in failed.message
    assert "raise Limits.max_message_bytes in the client's limits" in failed.message
    assert conn.data_to_send() == b""  # a refused response is not answered
    events = conn.receive_data(line(result(first, {})))
    assert one(events, ResponseReceived).request_id == first


def test_an_oversized_answer_to_initialize_ends_the_handshake_with_the_limit() -> None:
    conn = ClientConnection(ClientConfig(mode="2025-11-25"))
    conn.connect()
    conn.data_to_send()
    head = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","p":"'
    events = conn.receive_oversized(100 * MiB, head, b'"}}', wall_time=1.0)
    closed = one(events, ConnectionClosed)
    assert closed.error is not None and "(Limits.max_message_bytes)" in closed.error.message
    assert conn.state == State.ERROR


def test_parse_reads_a_memoryview() -> None:
    assert parse(memoryview(b'{"a":[1]}')) == {"a": [1]}


def test_a_refused_notification_is_reported_and_not_answered() -> None:
    conn = legacy_server("2025-06-18", limits=Limits(max_string_length=20))
    events = conn.receive_data(
        line({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"s": "x" * 21}})
    )
    assert one(events, MessageRejected).request_id is None
    assert conn.data_to_send() == b""


def test_each_connection_keeps_the_output_limit_of_its_own_limits() -> None:
    """A connection reads `output_limit` from the `Limits` it was made with, even when
    connections with other limits are made in between (the value is remembered for the
    last `Limits` object seen, by identity: an equal but distinct object is read again)."""
    small = Limits(max_buffered_output_bytes=7)
    big = Limits(max_message_bytes=200 * MiB)
    again = Limits(max_buffered_output_bytes=9)
    for limits in (small, big, small, small, again, big, Limits(), small):
        server = ServerConnection(ServerConfig("s", limits=limits))
        client = ClientConnection(ClientConfig(limits=limits))
        assert server._output_limit == limits.output_limit == client._output_limit
        assert server.limits is limits is client.limits
        assert server.state == INITIAL_SESSION_STATE["server"]
        assert client.state == INITIAL_SESSION_STATE["client"]
