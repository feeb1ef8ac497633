"""`ServerConnection.snapshot()` / `restore()`: a legacy session moves to another process.

The restored connection must behave, for every later request, exactly as the
one that ran `initialize`: same revision and client context on each request,
the same log threshold, the same principal, no reused server-to-client ids and
no second handshake. The JSON form must survive `json.dumps` / `json.loads`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_core import (
    INVALID_REQUEST,
    LocalProtocolError,
    RequestReceived,
    ServerConnection,
    SessionSnapshot,
)
from tests.core.engine_support import (
    error_code,
    feed,
    legacy_server,
    modern_server,
    notification,
    one,
    out,
    request,
    server,
    server_config,
)

CAPS: dict[str, Any] = {"elicitation": {"form": {}}, "roots": {"listChanged": True}}


def moved(conn: ServerConnection, **config: Any) -> ServerConnection:
    """Snapshot, through JSON text (as a store keeps it), restored on a fresh config."""
    text = json.dumps(conn.snapshot().as_dict())
    return ServerConnection.restore(
        server_config(**config), SessionSnapshot.from_dict(json.loads(text))
    )


def test_a_restored_session_answers_in_the_negotiated_context() -> None:
    original = legacy_server("2025-06-18", CAPS)
    feed(original, request(1, "logging/setLevel", {"level": "warning"}))
    assert out(original)[0]["result"] == {}

    restored = moved(original)

    assert restored.protocol_version == "2025-06-18"
    assert restored.state == "ready"
    assert restored.data_to_send() == b""
    events = feed(restored, request(2, "tools/call", {"name": "echo", "arguments": {"x": 1}}))
    received = one(events, RequestReceived)
    assert received.context.protocol_version == "2025-06-18"
    caps = received.context.client_capabilities
    assert caps is not None and caps.model_dump(by_alias=True, exclude_none=True) == CAPS
    assert received.context.client_info is not None
    assert received.context.client_info.name == "raw-client"
    # The threshold set before the move still filters.
    assert restored.send_log("info", "quiet", related_request_id=2) is False
    assert restored.send_log("error", "loud", related_request_id=2) is True
    restored.send_result(2, {"content": []})
    sent = out(restored)
    assert [m.get("method") for m in sent] == ["notifications/message", None]
    assert sent[1]["id"] == 2


def test_server_requests_after_the_move_never_reuse_an_id() -> None:
    original = legacy_server("2025-11-25", CAPS)
    first = original.send_request("roots/list")
    second = original.send_request("roots/list")
    assert out(original)
    restored = moved(original)
    third = restored.send_request("roots/list")
    assert third not in (first, second)
    assert out(restored)[0]["id"] == third


def test_the_restored_session_refuses_a_second_initialize() -> None:
    restored = moved(legacy_server())
    feed(restored, request("again", "initialize", {"protocolVersion": "2025-11-25"}))
    answer = out(restored)[0]
    assert error_code(answer) == INVALID_REQUEST
    assert answer["error"]["message"] == "Session already initialized"


def test_the_principal_moves_with_the_session() -> None:
    original = ServerConnection(server_config(), principal="alice")
    feed(
        original,
        request(
            "init",
            "initialize",
            {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        ),
        notification("notifications/initialized"),
    )
    out(original)
    snapshot = original.snapshot()
    assert snapshot.principal == "alice"
    assert ServerConnection.restore(server_config(), snapshot).principal == "alice"


def test_the_json_form_is_stable() -> None:
    snapshot = legacy_server("2024-11-05", {"sampling": {}}).snapshot()
    assert snapshot.as_dict() == {
        "v": 1,
        "protocolVersion": "2024-11-05",
        "clientCapabilities": {"sampling": {}},
        "clientInfo": {"name": "raw-client", "version": "1.0"},
        "logLevel": None,
        "principal": None,
        "nextId": 0,
    }
    assert SessionSnapshot.from_dict(snapshot.as_dict()) == snapshot


def test_only_a_ready_legacy_session_has_a_snapshot() -> None:
    with pytest.raises(LocalProtocolError, match="only a ready legacy session"):
        server().snapshot()
    with pytest.raises(LocalProtocolError, match="only a ready legacy session"):
        modern_server().snapshot()
    closed = legacy_server()
    closed.close("bye")
    with pytest.raises(LocalProtocolError, match="only a ready legacy session"):
        closed.snapshot()


def test_a_server_that_dropped_the_revision_refuses_to_hold_the_session() -> None:
    snapshot = legacy_server("2025-03-26").snapshot()
    with pytest.raises(LocalProtocolError, match="does not speak '2025-03-26'"):
        ServerConnection.restore(
            server_config(supported_versions=("2025-11-25", "2026-07-28")), snapshot
        )
    with pytest.raises(LocalProtocolError, match="legacy revisions: none"):
        ServerConnection.restore(server_config(supported_versions=("2026-07-28",)), snapshot)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"clientCapabilities": {"roots": "yes"}}, "invalid session snapshot"),
        ({"clientInfo": {"name": 5}}, "invalid session snapshot"),
    ],
)
def test_restore_validates_what_the_client_declared(change: dict[str, Any], message: str) -> None:
    data = {**legacy_server().snapshot().as_dict(), **change}
    with pytest.raises(ValueError, match=message):
        ServerConnection.restore(server_config(), SessionSnapshot.from_dict(data))


@pytest.mark.parametrize(
    ("snapshot", "message"),
    [
        (SessionSnapshot("2025-11-25", {}, log_level="loud"), "unknown log level"),
        (SessionSnapshot("2025-11-25", {}, next_id=-1), "next_id"),
        (SessionSnapshot("1999-01-01", {}), "does not speak"),
    ],
)
def test_restore_refuses_a_snapshot_built_by_hand_wrongly(
    snapshot: SessionSnapshot, message: str
) -> None:
    with pytest.raises((ValueError, LocalProtocolError), match=message):
        ServerConnection.restore(server_config(), snapshot)


GOOD: dict[str, Any] = SessionSnapshot("2025-11-25", {}).as_dict()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "must be a JSON object"),
        ({**GOOD, "v": 2}, "unknown session snapshot format"),
        ({**GOOD, "v": True}, "unknown session snapshot format"),
        ({**GOOD, "extra": 1}, "keys must be exactly"),
        ({k: v for k, v in GOOD.items() if k != "principal"}, "keys must be exactly"),
        ({**GOOD, "protocolVersion": 20251125}, "protocolVersion"),
        ({**GOOD, "clientCapabilities": []}, "clientCapabilities"),
        ({**GOOD, "clientInfo": "me"}, "clientInfo"),
        ({**GOOD, "logLevel": "loud"}, "unknown log level"),
        ({**GOOD, "principal": 7}, "principal"),
        ({**GOOD, "nextId": -1}, "nextId"),
        ({**GOOD, "nextId": 1.5}, "nextId"),
    ],
)
def test_from_dict_refuses_anything_but_the_json_form(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SessionSnapshot.from_dict(data)
