"""Engine bugs the fuzzers found, each reduced to its trigger.

Each test asserts the correct behaviour; all three bugs are fixed and the
tests stay as regression tests.
"""

from __future__ import annotations

import json

from mcp_core import MessageRejected, State

from .harness import SMALL_LIMITS, client_factory, feed, server_factory, split_lines

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
