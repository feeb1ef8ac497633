"""Logging: the legacy session level (`logging/setLevel`) and the 2026-07-28
per-request `logLevel` in `_meta`. Every emitted message is schema-validated.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_core import (
    INVALID_PARAMS,
    LOG_LEVELS,
    META_LOG_LEVEL,
    METHOD_NOT_FOUND,
    ClientConfig,
    LocalProtocolError,
    MessageRejected,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
)
from mcp_core.types import LoggingMessageNotificationParams
from tests.core.interaction_support import (
    FULL_CAPS,
    MODERN,
    Wire,
    drain,
    envelope,
    inject,
    legacy_wire,
    modern_wire,
    of_type,
    one,
)

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
NO_LOGGING = {k: v for k, v in FULL_CAPS.items() if k != "logging"}


def rank(level: str) -> int:
    return LOG_LEVELS.index(level)


def test_log_levels_are_the_syslog_eight_in_order() -> None:
    assert LOG_LEVELS == (
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    )


# ---------------------------------------------------------------------- legacy


@pytest.mark.parametrize("revision", LEGACY)
def test_every_level_goes_out_before_set_level(revision: str) -> None:
    w = legacy_wire(revision)
    for level in LOG_LEVELS:
        assert w.server.send_log(level, {"n": level}, logger="db")
    client_events, _ = w.pump()
    notes = of_type(client_events, NotificationReceived)
    assert [n.params.level for n in notes] == list(LOG_LEVELS)
    assert all(isinstance(n.params, LoggingMessageNotificationParams) for n in notes)
    assert notes[0].params.logger == "db"
    assert notes[0].params.data == {"n": "debug"}


@pytest.mark.parametrize("revision", LEGACY)
def test_set_level_filters_what_follows(revision: str) -> None:
    w = legacy_wire(revision)
    rid = w.client.send_request("logging/setLevel", {"level": "warning"})
    client_events, server_events = w.pump()
    assert server_events == []  # answered by the engine itself
    got = one(client_events, ResponseReceived)
    assert (got.request_id, got.method) == (rid, "logging/setLevel")
    assert w.last("server")["result"] == {}
    assert w.server.log_level == "warning"

    sent = {level: w.server.send_log(level, f"at {level}") for level in LOG_LEVELS}
    assert sent == {level: rank(level) >= rank("warning") for level in LOG_LEVELS}
    client_events, _ = w.pump()
    assert [n.params.level for n in of_type(client_events, NotificationReceived)] == [
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ]

    # The level can be lowered again.
    w.client.send_request("logging/setLevel", {"level": "debug"})
    w.pump()
    assert w.server.send_log("debug", "now visible")
    client_events, _ = w.pump()
    assert one(client_events, NotificationReceived).params.data == "now visible"


def test_set_level_with_an_unknown_level_is_invalid_params() -> None:
    w = legacy_wire("2025-11-25")
    events = inject(
        w.server,
        {"jsonrpc": "2.0", "id": 12, "method": "logging/setLevel", "params": {"level": "verbose"}},
    )
    assert one(events, MessageRejected).code == INVALID_PARAMS
    [err] = drain(w.server, "2025-11-25")
    assert err["id"] == 12
    assert err["error"]["code"] == INVALID_PARAMS
    assert w.server.log_level is None


def test_legacy_log_is_routed_to_the_related_request() -> None:
    w = legacy_wire("2025-11-25")
    w.client.send_request("tools/call", {"name": "t"})
    _, server_events = w.pump()
    call = one(server_events, RequestReceived).request_id
    assert w.server.send_log("info", "working on it", related_request_id=call)
    [out] = w.server_messages()
    assert (out.kind, out.method, out.related_request_id) == (
        "notification",
        "notifications/message",
        call,
    )


def test_server_without_logging_capability() -> None:
    w = legacy_wire("2025-11-25", server_caps=NO_LOGGING)
    with pytest.raises(LocalProtocolError, match="logging"):
        w.server.send_log("error", "x")
    with pytest.raises(LocalProtocolError):
        w.client.send_request("logging/setLevel", {"level": "info"})
    assert w.client.data_to_send() == w.server.data_to_send() == b""
    # A client that asks anyway gets method-not-found.
    inject(
        w.server,
        {"jsonrpc": "2.0", "id": 99, "method": "logging/setLevel", "params": {"level": "info"}},
    )
    [err] = drain(w.server, "2025-11-25")
    assert err["id"] == 99
    assert err["error"]["code"] == METHOD_NOT_FOUND


def test_unknown_level_is_refused_locally() -> None:
    w = legacy_wire("2025-11-25")
    with pytest.raises(LocalProtocolError):
        w.server.send_log("verbose", "x")
    assert w.server.data_to_send() == b""


# ---------------------------------------------------------------------- 2026-07-28


def _call(w: Wire, name: str = "t") -> Any:
    w.client.send_request("tools/call", {"name": name})
    _, server_events = w.pump()
    return one(server_events, RequestReceived)


def test_2026_log_level_is_stamped_on_every_request() -> None:
    w = modern_wire(log_level="notice")
    req = _call(w)
    assert w.last("client")["params"]["_meta"][META_LOG_LEVEL] == "notice"
    assert req.context.log_level == "notice"
    w.client.send_request("tools/list", {})
    w.pump()
    assert w.last("client")["params"]["_meta"][META_LOG_LEVEL] == "notice"
    discover = w.sent("client")[0]
    assert discover["method"] == "server/discover"
    assert discover["params"]["_meta"][META_LOG_LEVEL] == "notice"


@pytest.mark.parametrize("asked", LOG_LEVELS)
def test_2026_logs_go_only_at_or_above_the_requested_level(asked: str) -> None:
    w = modern_wire(log_level=asked)
    req = _call(w)
    sent = {
        level: w.server.send_log(level, level, related_request_id=req.request_id)
        for level in LOG_LEVELS
    }
    assert sent == {level: rank(level) >= rank(asked) for level in LOG_LEVELS}
    mark = len(w.pair.client_events)
    out = w.server_messages()
    assert all(m.related_request_id == req.request_id for m in out)
    assert all(m.method == "notifications/message" for m in out)
    notes = of_type(w.pair.client_events[mark:], NotificationReceived)
    assert [n.params.level for n in notes] == [level for level, ok in sent.items() if ok]
    assert all(n.params.level == n.params.data for n in notes)


def test_2026_logs_reach_the_client() -> None:
    w = modern_wire(log_level="info")
    req = _call(w)
    assert w.server.send_log(
        "warning", {"disk": "low"}, logger="fs", related_request_id=req.request_id
    )
    client_events, _ = w.pump()
    note = one(client_events, NotificationReceived)
    assert note.method == "notifications/message"
    assert (note.params.level, note.params.data, note.params.logger) == (
        "warning",
        {"disk": "low"},
        "fs",
    )
    assert note.subscription_id is None


def test_2026_request_without_log_level_gets_no_logs() -> None:
    w = modern_wire()
    req = _call(w)
    assert META_LOG_LEVEL not in w.last("client")["params"]["_meta"]
    assert req.context.log_level is None
    for level in LOG_LEVELS:
        assert w.server.send_log(level, "x", related_request_id=req.request_id) is False
    assert w.server.data_to_send() == b""


def test_2026_logs_need_a_live_request_that_asked() -> None:
    w = modern_wire(log_level="debug")
    req = _call(w)
    # No request named: nowhere to send it.
    assert w.server.send_log("emergency", "x") is False
    assert w.server.send_log("emergency", "x", related_request_id="nope") is False
    assert w.server.data_to_send() == b""
    # Once the request is answered, its stream is over.
    w.server.send_result(req.request_id, {"content": []})
    w.pump()
    assert w.server.send_log("emergency", "late", related_request_id=req.request_id) is False
    assert w.server.data_to_send() == b""


def test_2026_level_is_per_request() -> None:
    """Two requests on one connection, one asking for logs and one not."""
    w = modern_wire(log_level="error")
    loud = _call(w, "loud")
    inject(
        w.server,
        {
            "jsonrpc": "2.0",
            "id": "quiet",
            "method": "tools/call",
            "params": {"name": "quiet", "_meta": envelope({})},
        },
    )
    assert w.server.send_log("error", "x", related_request_id="quiet") is False
    assert w.server.send_log("error", "x", related_request_id=loud.request_id) is True


def test_2026_unknown_level_is_invalid_params() -> None:
    w = modern_wire()
    events = inject(
        w.server,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "t", "_meta": envelope({}, **{META_LOG_LEVEL: "verbose"})},
        },
    )
    assert not of_type(events, RequestReceived)
    [err] = drain(w.server, MODERN)
    assert err["id"] == 5
    assert err["error"]["code"] == INVALID_PARAMS
    assert "verbose" in err["error"]["message"]


def test_client_config_rejects_an_unknown_log_level() -> None:
    with pytest.raises(ValueError):
        ClientConfig(log_level="verbose")


def test_2026_has_no_set_level() -> None:
    w = modern_wire(log_level="info")
    with pytest.raises(LocalProtocolError):
        w.client.send_request("logging/setLevel", {"level": "info"})
    inject(
        w.server,
        {
            "jsonrpc": "2.0",
            "id": 6,
            "method": "logging/setLevel",
            "params": {"level": "info", "_meta": envelope({})},
        },
    )
    [err] = drain(w.server, MODERN)
    assert err["error"]["code"] == METHOD_NOT_FOUND


def test_2026_server_without_logging_capability_refuses_to_log() -> None:
    w = modern_wire(log_level="debug", server_caps=NO_LOGGING)
    req = _call(w)
    with pytest.raises(LocalProtocolError, match="logging"):
        w.server.send_log("error", "x", related_request_id=req.request_id)
    assert w.server.data_to_send() == b""
