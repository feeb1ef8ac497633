"""How a client picks its protocol revision, and the configuration rules behind it."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_core import (
    ALL_REVISIONS,
    LATEST,
    LATEST_LEGACY,
    LEGACY_REVISIONS,
    META_PROTOCOL_VERSION,
    METHOD_NOT_FOUND,
    MODERN_REVISIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
    ClientConfig,
    ClientConnection,
    Connected,
    ConnectionClosed,
    Era,
    Limits,
    LocalProtocolError,
    ResponseIgnored,
    ServerConfig,
    State,
    era_of,
)
from mcp_core.testing import ConnectionPair, default_server_config

from .engine_support import (
    ALL,
    LEGACY,
    MODERN,
    error,
    feed,
    initialize_result,
    notification,
    of_type,
    one,
    out,
    result,
)


def test_revision_registry() -> None:
    assert ALL_REVISIONS == ALL
    assert LEGACY_REVISIONS == LEGACY and MODERN_REVISIONS == (MODERN,)
    assert (LATEST, LATEST_LEGACY) == (MODERN, "2025-11-25")
    assert [era_of(r) for r in ALL] == [Era.LEGACY] * 4 + [Era.MODERN]
    with pytest.raises(KeyError):
        era_of("2099-01-01")


# ------------------------------------------------------------- modes


@pytest.mark.parametrize(
    ("mode", "first_method", "version"),
    [
        ("legacy", "initialize", LATEST_LEGACY),
        *[(v, "initialize", v) for v in LEGACY],
        ("auto", "server/discover", MODERN),
    ],
)
def test_first_message_of_each_mode(mode: str, first_method: str, version: str) -> None:
    conn = ClientConnection(ClientConfig(mode=mode))
    assert conn.state == State.IDLE
    assert conn.connect() == []
    assert conn.state == State.CONNECTING
    (msg,) = out(conn)
    assert msg["method"] == first_method
    if first_method == "initialize":
        assert msg["params"]["protocolVersion"] == version
    else:
        assert msg["params"]["_meta"][META_PROTOCOL_VERSION] == version


def test_pinned_modern_revision_is_ready_at_once() -> None:
    conn = ClientConnection(ClientConfig(mode=MODERN))
    (connected,) = conn.connect()
    assert connected == Connected(MODERN, Era.MODERN, None, None, None)
    assert conn.data_to_send() == b""
    assert conn.state == State.READY
    # Without discovery it knows no server capabilities, so it gates nothing.
    conn.send_request("prompts/list")
    assert out(conn)[0]["method"] == "prompts/list"


def test_connect_twice_is_misuse() -> None:
    conn = ClientConnection(ClientConfig(mode="legacy"))
    conn.connect()
    with pytest.raises(LocalProtocolError, match="already"):
        conn.connect()


def test_requests_before_the_handshake_ends_are_misuse() -> None:
    conn = ClientConnection(ClientConfig(mode="legacy"))
    with pytest.raises(LocalProtocolError, match="not ready"):
        conn.send_request("ping")
    conn.connect()
    with pytest.raises(LocalProtocolError, match="not ready"):
        conn.send_request("ping")
    with pytest.raises(LocalProtocolError, match="not ready"):
        conn.send_notification("notifications/roots/list_changed")


# ------------------------------------------------------------- auto mode


def test_auto_against_a_dual_era_server_goes_modern_with_discovered_terms() -> None:
    pair = ConnectionPair(
        default_server_config(instructions="Hi.", server_info={"title": "Test"}),
        ClientConfig(mode="auto"),
    )
    client_events, server_events = pair.connect()
    connected = one(client_events, Connected)
    assert (connected.protocol_version, connected.era) == (MODERN, Era.MODERN)
    assert connected.server_capabilities.tools is not None
    assert connected.server_info.name == "test-server" and connected.server_info.title == "Test"
    assert connected.instructions == "Hi."
    assert server_events == []
    assert pair.server.era is Era.MODERN


def test_auto_against_a_legacy_only_server_falls_back_to_initialize() -> None:
    seen: list[Any] = []
    pair = ConnectionPair(
        default_server_config(supported_versions=("2025-06-18", "2025-03-26")),
        ClientConfig(mode="auto"),
        tap=lambda direction, data: seen.append((direction, data)),
    )
    client_events, _ = pair.connect()
    connected = one(client_events, Connected)
    assert (connected.protocol_version, connected.era) == ("2025-06-18", Era.LEGACY)
    probe_answer = next(d for direction, d in seen if direction == "server->client")
    assert b'"code":-32601' in probe_answer
    assert pair.client.state == pair.server.state == State.READY


def probing_client(**config: Any) -> tuple[ClientConnection, dict[str, Any]]:
    conn = ClientConnection(ClientConfig(mode="auto", **config))
    conn.connect()
    (probe,) = out(conn)
    assert probe["method"] == "server/discover"
    return conn, probe


def test_probe_answered_method_not_found_falls_back() -> None:
    conn, probe = probing_client()
    assert feed(conn, error(probe["id"], METHOD_NOT_FOUND, "Method not found")) == []
    (init,) = out(conn)
    assert init["method"] == "initialize"
    assert init["params"]["protocolVersion"] == LATEST_LEGACY
    assert init["id"] != probe["id"]
    events = feed(conn, result(init["id"], initialize_result("2025-11-25")))
    assert one(events, Connected).era is Era.LEGACY


@pytest.mark.parametrize(
    ("supported", "expected"),
    [
        (["2025-06-18"], ("initialize", "2025-06-18")),
        (["2025-03-26", "2024-11-05", "1999-01-01"], ("initialize", "2025-03-26")),
        (["2099-01-01"], None),
        ([], None),
    ],
)
def test_probe_answered_unsupported_version_uses_a_mutual_one(
    supported: list[str], expected: tuple[str, str] | None
) -> None:
    conn, probe = probing_client()
    events = feed(
        conn,
        error(
            probe["id"],
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": supported, "requested": MODERN},
        ),
    )
    if expected is None:
        closed = one(events, ConnectionClosed)
        assert closed.error is not None and "no protocol revision" in closed.error.message
        assert conn.state == State.ERROR
        return
    assert events == []
    (msg,) = out(conn)
    assert (msg["method"], msg["params"]["protocolVersion"]) == expected


def test_probe_answered_32022_naming_the_probed_version_goes_modern_without_terms() -> None:
    conn, probe = probing_client()
    events = feed(
        conn,
        error(
            probe["id"],
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": [MODERN, "2025-11-25"], "requested": MODERN},
        ),
    )
    # No mutual version left to probe: take the best mutual one as it stands.
    connected = one(events, Connected)
    assert (connected.protocol_version, connected.server_capabilities) == (MODERN, None)


def test_probe_answered_32022_without_data_is_treated_as_legacy() -> None:
    conn, probe = probing_client()
    feed(conn, error(probe["id"], UNSUPPORTED_PROTOCOL_VERSION, "nope"))
    assert out(conn)[0]["method"] == "initialize"


def test_probe_answered_with_a_mutual_legacy_version_only() -> None:
    conn, probe = probing_client()
    events = feed(
        conn,
        result(
            probe["id"],
            {
                "supportedVersions": ["2025-06-18"],
                "capabilities": {},
                "resultType": "complete",
            },
        ),
    )
    assert events == []
    (msg,) = out(conn)
    assert (msg["method"], msg["params"]["protocolVersion"]) == ("initialize", "2025-06-18")


@pytest.mark.parametrize(
    "answer",
    [
        {"capabilities": {}},
        {"supportedVersions": "2026-07-28", "capabilities": {}},
    ],
)
def test_invalid_discover_result_ends_the_connection(answer: dict[str, Any]) -> None:
    conn, probe = probing_client()
    events = feed(conn, result(probe["id"], answer))
    closed = one(events, ConnectionClosed)
    assert closed.error is not None and "server/discover" in closed.error.message


def test_discover_result_with_unreadable_server_info_still_connects() -> None:
    conn, probe = probing_client()
    events = feed(
        conn,
        result(
            probe["id"],
            {
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": 5}},
            },
        ),
    )
    connected = one(events, Connected)
    assert connected.server_info is None
    assert connected.server_capabilities.tools is not None


def test_probe_that_times_out_falls_back_to_initialize() -> None:
    conn = ClientConnection(ClientConfig(mode="auto"))
    conn.connect(deadline=10.0)
    (probe,) = out(conn)
    assert conn.next_deadline() == 10.0
    assert conn.tick(9.999) == []
    assert out(conn) == []
    assert conn.tick(10.0) == []
    # No cancellation for the probe: a legacy server knows no notification before initialize.
    (init,) = out(conn)
    assert (init["method"], init["params"]["protocolVersion"]) == ("initialize", LATEST_LEGACY)
    assert conn.next_deadline() is None  # initialize itself has no deadline
    # The slow server's discover answer arrives late and is dropped.
    late = feed(conn, result(probe["id"], {"supportedVersions": [MODERN], "capabilities": {}}))
    assert late == [ResponseIgnored(probe["id"], late=True)]
    events = feed(conn, result(init["id"], initialize_result("2025-11-25")))
    assert one(events, Connected).protocol_version == "2025-11-25"


def test_probe_timeout_against_a_silent_legacy_server_end_to_end() -> None:
    pair = ConnectionPair(
        default_server_config(supported_versions=LEGACY), ClientConfig(mode="auto")
    )
    pair.client.connect(deadline=5)
    # The probe is lost in transit (a legacy server that never answers unknown methods).
    pair.client.data_to_send()
    assert pair.client.tick(5) == []
    client_events, _ = pair.pump()
    assert one(client_events, Connected).protocol_version == "2025-11-25"


def test_modern_only_client_cannot_fall_back() -> None:
    conn, probe = probing_client(supported_versions=(MODERN,))
    events = feed(conn, error(probe["id"], METHOD_NOT_FOUND, "Method not found"))
    closed = one(events, ConnectionClosed)
    assert closed.error is not None and "server/discover failed" in closed.error.message


def test_modern_only_client_against_a_legacy_only_server() -> None:
    pair = ConnectionPair(
        default_server_config(supported_versions=LEGACY),
        ClientConfig(mode="auto", supported_versions=(MODERN,)),
    )
    client_events, _ = pair.connect()
    assert one(client_events, ConnectionClosed).error is not None
    assert pair.client.state == State.ERROR


def test_auto_with_only_legacy_versions_skips_the_probe() -> None:
    conn = ClientConnection(ClientConfig(mode="auto", supported_versions=("2025-03-26",)))
    conn.connect()
    (msg,) = out(conn)
    assert (msg["method"], msg["params"]["protocolVersion"]) == ("initialize", "2025-03-26")


def test_initialize_is_not_cancellable() -> None:
    conn = ClientConnection(ClientConfig(mode="legacy"))
    conn.connect()
    (init,) = out(conn)
    with pytest.raises(LocalProtocolError, match="initialize cannot be cancelled"):
        conn.cancel_request(init["id"])
    assert out(conn) == []


def test_connected_event_comes_before_events_of_the_same_input() -> None:
    conn = ClientConnection(ClientConfig(mode="legacy"))
    conn.connect()
    (init,) = out(conn)
    events = feed(
        conn,
        result(init["id"], initialize_result("2025-11-25")),
        notification("notifications/tools/list_changed"),
    )
    assert [type(e).__name__ for e in events] == ["Connected", "NotificationReceived"]
    assert of_type(events, Connected)[0].server_info.name == "raw-server"


# --------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"mode": "2099-01-01"}, "mode must be"),
        ({"mode": "modern"}, "mode must be"),
        ({"mode": "2025-06-18", "supported_versions": ("2025-11-25",)}, "mode must be"),
        ({"mode": "legacy", "supported_versions": (MODERN,)}, "legacy"),
        ({"supported_versions": ()}, "must not be empty"),
        ({"supported_versions": ("2025-11-25", "1.0")}, "unknown protocol revision"),
        ({"log_level": "loud"}, "unknown log level"),
        ({"max_input_rounds": 0}, "max_input_rounds"),
    ],
)
def test_client_config_is_validated(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        ClientConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"supported_versions": ()}, "must not be empty"),
        ({"supported_versions": ("draft",)}, "unknown protocol revision"),
        ({"cache_ttl_ms": -1}, "cache_ttl_ms"),
    ],
)
def test_server_config_is_validated(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        ServerConfig(name="s", **kwargs)


def test_configs_order_versions_by_preference_and_fill_wire_forms() -> None:
    client = ClientConfig(
        supported_versions=("2024-11-05", MODERN, "2025-06-18"),
        client_info={"name": "custom", "version": "9", "title": "Custom"},
        capabilities={"roots": {"listChanged": True}},
    )
    assert client.supported_versions == (MODERN, "2025-06-18", "2024-11-05")
    assert client.client_info_wire == {"name": "custom", "version": "9", "title": "Custom"}
    assert client.capabilities_wire == {"roots": {"listChanged": True}}
    server = ServerConfig(name="s", supported_versions=("2025-03-26", MODERN))
    assert server.supported_versions == (MODERN, "2025-03-26")
    assert server.legacy_versions == ("2025-03-26",) and server.modern_versions == (MODERN,)
    assert server.server_info_wire == {"name": "s", "version": "0.0.0"}
    assert server.capabilities_wire == {}
    assert ServerConfig(name="s").limits == Limits()


def test_configs_accept_models_for_wire_fields() -> None:
    from mcp_core.types import ClientCapabilities, Implementation, ServerCapabilities

    client = ClientConfig(
        capabilities=ClientCapabilities(roots={"listChanged": True}),
        client_info=Implementation(name="m", version="1"),
    )
    assert client.capabilities_wire == {"roots": {"listChanged": True}}
    assert client.client_info_wire == {"name": "m", "version": "1"}
    server = ServerConfig(name="s", capabilities=ServerCapabilities(tools={"listChanged": True}))
    assert server.capabilities_wire == {"tools": {"listChanged": True}}
