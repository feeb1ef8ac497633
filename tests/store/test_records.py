"""The records' wire forms, event ids and limits: stable, strict, and round-tripping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_adapters.store import (
    BusMessage,
    EventPosition,
    Notification,
    SessionRecord,
    StoreLimits,
    StoreUnavailable,
    format_event_id,
    next_position,
    parse_event_id,
)
from mcp_core import SessionSnapshot

SNAPSHOT = SessionSnapshot("2025-06-18", {"roots": {}}, {"name": "c", "version": "1"}, "debug")


def test_a_session_record_encodes_stably_and_round_trips() -> None:
    record = SessionRecord("s1", SNAPSHOT, "proc-a", frozenset({"file:///b", "file:///a"}), 12.5)
    data = record.to_json()
    assert json.loads(data) == {
        "v": 1,
        "sessionId": "s1",
        "snapshot": SNAPSHOT.as_dict(),
        "owner": "proc-a",
        "subscriptions": ["file:///a", "file:///b"],
        "expiresAt": 12.5,
    }
    assert data == SessionRecord.from_json(data).to_json()
    assert SessionRecord.from_json(data) == record
    assert SessionRecord.from_json(SessionRecord("s2", SNAPSHOT).to_json()).owner is None


GOOD: dict[str, Any] = json.loads(SessionRecord("s1", SNAPSHOT).to_json())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{", "not JSON"),
        (b"[]", "unknown format"),
        (json.dumps({**GOOD, "v": 2}).encode(), "unknown format"),
        (json.dumps({**GOOD, "sessionId": ""}).encode(), "sessionId"),
        (json.dumps({**GOOD, "subscriptions": [1]}).encode(), "subscriptions"),
        (json.dumps({**GOOD, "expiresAt": True}).encode(), "expiresAt"),
        (json.dumps({**GOOD, "owner": 3}).encode(), "owner"),
        (json.dumps({**GOOD, "snapshot": {}}).encode(), "snapshot"),
    ],
)
def test_a_session_record_refuses_anything_else(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SessionRecord.from_json(data)


def test_a_bus_message_carries_its_payload_byte_for_byte() -> None:
    payload = b'{"jsonrpc":"2.0","id":"x\\n","result":{}}\n\xff'
    message = BusMessage(payload, "s\n1", "proc-a")
    encoded = message.encode()
    assert encoded.split(b"\n", 1)[1] == payload
    assert BusMessage.decode(encoded) == message
    with pytest.raises(ValueError, match="no header"):
        BusMessage.decode(b"{}")
    with pytest.raises(ValueError, match="unknown format"):
        BusMessage.decode(b'{"v":9}\n{}')


def test_a_notification_round_trips() -> None:
    notification = Notification("notifications/resources/updated", {"uri": "file:///x"}, "a")
    assert Notification.decode(notification.encode()) == notification
    assert Notification.decode(Notification("m").encode()) == Notification("m")
    with pytest.raises(ValueError, match="method"):
        Notification.decode(b'{"v":1,"method":"","params":null,"origin":null}')
    with pytest.raises(ValueError, match="params"):
        Notification.decode(b'{"v":1,"method":"m","params":[],"origin":null}')


def test_event_ids_name_their_stream_and_order_like_the_events() -> None:
    event_id = format_event_id("a:b", EventPosition(1700000000123, 4))
    assert event_id == "a:b:1700000000123-4"
    assert parse_event_id(event_id) == ("a:b", EventPosition(1700000000123, 4))
    assert EventPosition(5, 0) > EventPosition(4, 9) > EventPosition(4, 8)
    for garbage in ("", "1", "1:2", "1:a-b", "1:2-", "1:-2", "1:2-3-4", "1:٣-0", "1:2-" + "9" * 19):
        assert parse_event_id(garbage) is None, garbage


def test_next_position_follows_the_clock_but_never_goes_back() -> None:
    assert next_position(None, 5000) == EventPosition(5000, 0)
    assert next_position(None, 0) == EventPosition(1, 0)  # 0-0 is no id
    assert next_position(EventPosition(5000, 0), 5000) == EventPosition(5000, 1)
    assert next_position(EventPosition(5000, 7), 4000) == EventPosition(5000, 8)
    assert next_position(EventPosition(5000, 7), 6000) == EventPosition(6000, 0)


@pytest.mark.parametrize(
    "options",
    [
        {"session_ttl": 0},
        {"max_event_age": float("inf")},
        {"max_events_per_stream": 0},
        {"max_pending_messages": 1.5},
        {"max_message_bytes": True},
    ],
)
def test_limits_must_be_positive(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be a positive"):
        StoreLimits(**options)


def test_store_unavailable_says_what_failed() -> None:
    error = StoreUnavailable("sessions.get", "connection refused")
    assert str(error) == "store unavailable during sessions.get: connection refused"
    assert (error.operation, error.detail) == ("sessions.get", "connection refused")
