"""The legacy (initialize-handshake) lifecycle, both roles."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_core import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    ClientConfig,
    ClientConnection,
    ClientInitialized,
    Connected,
    ConnectionClosed,
    Era,
    LocalProtocolError,
    MessageRejected,
    NotificationReceived,
    RemoteProtocolError,
    RequestReceived,
    ResponseReceived,
    ServerConnection,
    SessionStarted,
    State,
)
from mcp_core.testing import ConnectionPair, default_server_config

from .engine_support import (
    ALL,
    FULL_SERVER_CAPS,
    LEGACY,
    error,
    feed,
    initialize_params,
    initialize_result,
    legacy_client,
    legacy_server,
    log_meta,
    modern_params,
    modern_server,
    notification,
    of_type,
    one,
    out,
    request,
    result,
    server,
)

# ------------------------------------------------------------- version offer


@pytest.mark.parametrize(
    ("server_versions", "offered", "answered"),
    [
        *[(ALL, v, v) for v in LEGACY],
        (("2025-06-18", "2025-03-26"), "2025-11-25", "2025-06-18"),
        (("2025-03-26", "2026-07-28"), "2025-06-18", "2025-03-26"),
        (ALL, "1999-01-01", "2025-11-25"),
        (ALL, "2026-07-28", "2025-11-25"),
        (("2024-11-05",), "2025-11-25", "2024-11-05"),
    ],
)
def test_server_counter_offers_its_latest_legacy_version(
    server_versions: tuple[str, ...], offered: str, answered: str
) -> None:
    conn = server(supported_versions=server_versions, instructions="Be nice.")
    events = feed(conn, request(0, "initialize", initialize_params(offered, {"roots": {}})))
    (msg,) = out(conn)
    assert msg == result(
        0,
        {
            "protocolVersion": answered,
            "capabilities": FULL_SERVER_CAPS,
            "serverInfo": {"name": "test-server", "version": "1.0.0"},
            "instructions": "Be nice.",
        },
    )
    started = one(events, SessionStarted)
    assert started.protocol_version == answered
    assert started.client_info.name == "raw-client"
    assert started.client_capabilities.roots is not None
    assert (conn.protocol_version, conn.era, conn.state) == (answered, Era.LEGACY, State.READY)


def test_initialize_without_params_is_invalid_params() -> None:
    conn = server()
    feed(conn, request(0, "initialize"))
    assert out(conn) == [error(0, INVALID_PARAMS, "initialize requires params")]
    assert conn.state == State.AWAITING_FIRST


def test_initialize_with_bad_params_leaves_the_server_waiting() -> None:
    conn = server()
    feed(conn, request(0, "initialize", {"protocolVersion": 5}))
    (msg,) = out(conn)
    assert msg["id"] == 0 and msg["error"]["code"] == INVALID_PARAMS
    assert conn.state == State.AWAITING_FIRST and conn.protocol_version is None
    feed(conn, request(1, "initialize", initialize_params()))
    assert out(conn)[0]["result"]["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize(
    ("mode", "supported", "answered", "accepted"),
    [
        ("legacy", ALL, "2025-06-18", True),
        ("legacy", ALL, "2024-11-05", True),
        ("legacy", ("2025-11-25", "2025-06-18"), "2025-03-26", False),
        ("legacy", ALL, "2026-07-28", False),
        ("legacy", ALL, "1999-01-01", False),
        ("2025-11-25", ALL, "2025-11-25", True),
        ("2025-11-25", ALL, "2025-06-18", False),
        ("2024-11-05", ALL, "2025-03-26", False),
        ("auto", ("2025-11-25", "2025-03-26"), "2025-03-26", True),
    ],
)
def test_client_accepts_only_versions_it_speaks(
    mode: str, supported: tuple[str, ...], answered: str, accepted: bool
) -> None:
    conn = ClientConnection(ClientConfig(mode=mode, supported_versions=supported))
    conn.connect()
    (init,) = out(conn)
    assert init["method"] == "initialize"
    offered = init["params"]["protocolVersion"]
    latest_legacy = next(v for v in reversed(LEGACY) if v in supported)
    assert offered == (mode if mode not in ("auto", "legacy") else latest_legacy)
    events = feed(conn, result(init["id"], initialize_result(answered)))
    if accepted:
        connected = one(events, Connected)
        assert (connected.protocol_version, connected.era) == (answered, Era.LEGACY)
        assert out(conn) == [notification("notifications/initialized")]
        assert conn.protocol_version == answered and conn.state == State.READY
    else:
        closed = one(events, ConnectionClosed)
        assert isinstance(closed.error, RemoteProtocolError)
        assert repr(answered) in closed.error.message
        assert conn.state == State.ERROR
        assert out(conn) == []
        with pytest.raises(LocalProtocolError):
            conn.send_request("ping")


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (error(0, INVALID_PARAMS, "no thanks"), "initialize failed: no thanks"),
        (result(0, {"protocolVersion": "2025-11-25"}), "invalid initialize result"),
        (result(0, {**initialize_result("2025-11-25"), "serverInfo": 5}), "invalid initialize"),
    ],
)
def test_failed_initialize_ends_the_client_connection(answer: Any, fragment: str) -> None:
    conn = ClientConnection(ClientConfig(mode="legacy"))
    conn.connect()
    conn.data_to_send()
    events = feed(conn, answer)
    closed = one(events, ConnectionClosed)
    assert closed.error is not None and fragment in closed.error.message
    assert conn.state == State.ERROR


def test_negotiation_end_to_end_picks_a_mutual_version() -> None:
    pair = ConnectionPair(
        default_server_config(supported_versions=("2025-06-18", "2025-03-26")),
        ClientConfig(mode="legacy", supported_versions=("2025-11-25", "2025-06-18")),
    )
    client_events, server_events = pair.connect()
    assert one(client_events, Connected).protocol_version == "2025-06-18"
    assert [type(e) for e in server_events] == [SessionStarted, ClientInitialized]
    assert pair.client.protocol_version == pair.server.protocol_version == "2025-06-18"
    assert pair.client.server_info.name == "test-server"
    assert pair.client.server_capabilities.tools.list_changed is True


def test_initialized_notification_is_reported_once_per_arrival() -> None:
    conn = server()
    events = feed(
        conn,
        request(0, "initialize", initialize_params()),
        notification("notifications/initialized"),
    )
    assert [type(e) for e in events] == [SessionStarted, ClientInitialized]
    assert feed(conn, notification("notifications/initialized")) == [ClientInitialized()]


# ----------------------------------------------------- before initialization


LEGACY_ONLY = {"supported_versions": LEGACY}


@pytest.mark.parametrize("method", ["tools/list", "prompts/list", "resources/list"])
def test_legacy_only_server_refuses_requests_before_initialize(method: str) -> None:
    conn = server(**LEGACY_ONLY)
    feed(conn, request(1, method))
    assert out(conn) == [
        error(1, INVALID_REQUEST, "Received request before initialization was complete")
    ]
    assert conn.state == State.AWAITING_FIRST


def test_ping_before_initialize_is_answered() -> None:
    for conn in (server(**LEGACY_ONLY), server()):
        feed(conn, request("p", "ping"))
        assert out(conn) == [result("p", {})]
        assert conn.state == State.AWAITING_FIRST


def test_unknown_method_before_initialize_is_method_not_found() -> None:
    conn = server(**LEGACY_ONLY)
    feed(conn, request(1, "no/such"))
    assert out(conn) == [error(1, METHOD_NOT_FOUND, "Method not found: no/such")]


def test_notifications_before_initialize_are_ignored() -> None:
    conn = server()
    assert feed(conn, notification("notifications/initialized")) == []
    assert feed(conn, notification("notifications/roots/list_changed")) == []
    assert out(conn) == []


def test_dual_era_server_reads_a_plain_request_before_initialize_as_modern() -> None:
    # The first message decides the era; without `initialize` it must carry the envelope.
    conn = server()
    feed(conn, request(1, "tools/list"))
    (msg,) = out(conn)
    assert (msg["id"], msg["error"]["code"]) == (1, INVALID_PARAMS)
    assert conn.era is None


def test_client_refuses_server_requests_before_the_handshake_ends() -> None:
    conn = ClientConnection(ClientConfig(mode="legacy", capabilities={"sampling": {}}))
    conn.connect()
    conn.data_to_send()
    feed(conn, request("p", "ping"), request("s", "sampling/createMessage", {"messages": []}))
    assert out(conn) == [
        result("p", {}),
        error("s", INVALID_REQUEST, "Received request before initialization was complete"),
    ]


# ------------------------------------------------------ second initialize


@pytest.mark.parametrize("version", LEGACY)
def test_second_initialize_is_refused_and_changes_nothing(version: str) -> None:
    conn = legacy_server(version, client_caps={"roots": {"listChanged": True}})
    caps_before = conn.client_capabilities
    info_before = conn.client_info
    other = "2024-11-05" if version != "2024-11-05" else "2025-11-25"
    events = feed(
        conn,
        request(
            "again",
            "initialize",
            {
                "protocolVersion": other,
                "capabilities": {"sampling": {}, "elicitation": {}},
                "clientInfo": {"name": "impostor", "version": "6.6.6"},
            },
        ),
    )
    assert out(conn) == [error("again", INVALID_REQUEST, "Session already initialized")]
    assert not of_type(events, SessionStarted)
    assert conn.protocol_version == version
    assert conn.client_capabilities == caps_before and conn.client_capabilities.sampling is None
    assert conn.client_info == info_before and conn.client_info.name == "raw-client"
    # What the engine enforces follows the original declaration, too.
    with pytest.raises(LocalProtocolError, match="Sampling not supported"):
        conn.send_request("sampling/createMessage", {"messages": [], "maxTokens": 1})
    events = feed(conn, request(2, "tools/list"))
    ctx = one(events, RequestReceived).context
    assert ctx.protocol_version == version
    assert ctx.client_capabilities.sampling is None
    assert ctx.client_info.name == "raw-client"


# ---------------------------------------------------- capability gating


GATED = [
    ("tools/list", None, "tools"),
    ("tools/call", {"name": "t"}, "tools"),
    ("prompts/list", None, "prompts"),
    ("prompts/get", {"name": "p"}, "prompts"),
    ("resources/list", None, "resources"),
    ("resources/read", {"uri": "file:///a"}, "resources"),
    ("resources/templates/list", None, "resources"),
    ("resources/subscribe", {"uri": "file:///a"}, "resources.subscribe"),
    ("resources/unsubscribe", {"uri": "file:///a"}, "resources.subscribe"),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}},
        "completions",
    ),
    ("logging/setLevel", {"level": "info"}, "logging"),
]


@pytest.mark.parametrize(("method", "params", "capability"), GATED)
def test_server_refuses_methods_whose_capability_it_did_not_advertise(
    method: str, params: Any, capability: str
) -> None:
    caps = dict(FULL_SERVER_CAPS)
    head = capability.split(".")[0]
    if "." in capability:
        caps[head] = {"listChanged": True}
    else:
        del caps[head]
    conn = legacy_server("2025-06-18", capabilities=caps)
    events = feed(conn, request(1, method, params))
    assert out(conn) == [
        error(1, METHOD_NOT_FOUND, f"Method not found: {method} (capability not offered)")
    ]
    assert not of_type(events, RequestReceived)
    # The client side refuses to send it at all.
    client = legacy_client("2025-06-18", server_caps=caps)
    with pytest.raises(LocalProtocolError, match=capability):
        client.send_request(method, params)
    assert client.data_to_send() == b""


@pytest.mark.parametrize(("method", "params", "capability"), GATED)
def test_advertised_methods_are_accepted(method: str, params: Any, capability: str) -> None:
    conn = legacy_server("2025-06-18")
    events = feed(conn, request(1, method, params))
    if method == "logging/setLevel":
        assert out(conn) == [result(1, {})]
        assert conn.log_level == "info"
    else:
        assert one(events, RequestReceived).method == method
        assert out(conn) == []


def test_completion_is_not_gated_on_prompts_or_resources() -> None:
    conn = legacy_server(capabilities={"completions": {}})
    feed(conn, request(1, "prompts/list"))
    assert out(conn)[0]["error"]["code"] == METHOD_NOT_FOUND


def test_methods_a_revision_lacks_are_method_not_found() -> None:
    conn = legacy_server("2025-11-25")
    feed(
        conn,
        request(1, "server/discover", {}),
        request(2, "subscriptions/listen", {"notifications": {}}),
        request(3, "sampling/createMessage", {"messages": []}),
        request(4, "notifications/initialized"),
    )
    assert [(m["id"], m["error"]["code"]) for m in out(conn)] == [
        (1, METHOD_NOT_FOUND),
        (2, METHOD_NOT_FOUND),
        (3, METHOD_NOT_FOUND),
        (4, METHOD_NOT_FOUND),
    ]


def test_invalid_params_are_answered_with_invalid_params() -> None:
    conn = legacy_server()
    feed(conn, request(1, "tools/call", {"arguments": {}}), request(2, "tools/call"))
    msgs = out(conn)
    assert [(m["id"], m["error"]["code"]) for m in msgs] == [
        (1, INVALID_PARAMS),
        (2, INVALID_PARAMS),
    ]
    assert msgs[0]["error"]["message"].startswith("Invalid params for tools/call: name")
    assert msgs[1]["error"]["message"] == "tools/call requires params"


# ----------------------------------------- client refuses undeclared requests


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (
            "elicitation/create",
            {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
            "Elicitation not supported",
        ),
        (
            "sampling/createMessage",
            {"messages": [], "maxTokens": 10},
            "Sampling not supported",
        ),
        ("roots/list", None, "Roots not supported"),
    ],
)
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_client_refuses_server_requests_it_did_not_declare(
    version: str, method: str, params: Any, message: str
) -> None:
    conn = legacy_client(version, capabilities={})
    events = feed(conn, request("srv-1", method, params))
    data = conn.data_to_send()
    assert data == (
        b'{"jsonrpc":"2.0","id":"srv-1","error":{"code":-32601,"message":"'
        + message.encode()
        + b'"}}\n'
    )
    assert events == [MessageRejected("srv-1", METHOD_NOT_FOUND, message)]
    # Declared, the same request reaches the application.
    declared = {"elicitation": {}, "sampling": {}, "roots": {}}
    conn = legacy_client(version, capabilities=declared)
    events = feed(conn, request("srv-1", method, params))
    assert one(events, RequestReceived).method == method
    # And a server never sends it to a client that did not declare it.
    srv = legacy_server(version, client_caps={})
    with pytest.raises(LocalProtocolError, match=message):
        srv.send_request(method, params)
    assert srv.data_to_send() == b""


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_elicitation_does_not_exist_before_2025_06_18(version: str) -> None:
    conn = legacy_client(version, capabilities={"elicitation": {}})
    feed(conn, request(1, "elicitation/create", {"message": "?", "requestedSchema": {}}))
    assert out(conn) == [error(1, METHOD_NOT_FOUND, "Method not found: elicitation/create")]
    srv = legacy_server(version, client_caps={"elicitation": {}})
    with pytest.raises(LocalProtocolError, match="not a server request"):
        srv.send_request("elicitation/create", {"message": "?", "requestedSchema": {}})


def test_url_elicitation_needs_the_url_mode_declared() -> None:
    conn = legacy_client("2025-11-25", capabilities={"elicitation": {"form": {}}})
    feed(
        conn,
        request(
            1,
            "elicitation/create",
            {"mode": "url", "message": "go", "url": "https://x.example", "elicitationId": "e"},
        ),
    )
    assert out(conn) == [error(1, INVALID_PARAMS, "Elicitation mode 'url' not supported")]


def test_client_refuses_unknown_server_requests() -> None:
    conn = legacy_client()
    feed(conn, request(1, "tools/list"), request(2, "made/up"))
    assert out(conn) == [
        error(1, METHOD_NOT_FOUND, "Method not found: tools/list"),
        error(2, METHOD_NOT_FOUND, "Method not found: made/up"),
    ]


# ------------------------------------------------------------------ ping


@pytest.mark.parametrize("version", LEGACY)
def test_ping_both_ways(version: str) -> None:
    pair = ConnectionPair(client_config=ClientConfig(mode=version))
    pair.connect()
    rid = pair.client.send_request("ping")
    client_events, server_events = pair.pump()
    assert server_events == []
    response = one(client_events, ResponseReceived)
    assert (response.request_id, response.method) == (rid, "ping")
    sid = pair.server.send_request("ping")
    client_events, server_events = pair.pump()
    assert client_events == []
    assert one(server_events, ResponseReceived).request_id == sid
    assert pair.client.requests_in_flight == pair.server.requests_in_flight == (0, 0)


# --------------------------------------------------------------- logging


def test_legacy_log_threshold_follows_set_level() -> None:
    conn = legacy_server()
    assert conn.send_log("debug", {"a": 1}, logger="core")
    feed(conn, request(1, "logging/setLevel", {"level": "warning"}))
    assert out(conn)[-1] == result(1, {})
    assert not conn.send_log("info", "quiet")
    assert conn.send_log("error", "loud")
    assert out(conn) == [
        notification("notifications/message", {"level": "error", "data": "loud"}),
    ]
    with pytest.raises(LocalProtocolError, match="unknown log level"):
        conn.send_log("verbose", "x")


def test_logging_needs_the_capability() -> None:
    conn = legacy_server(capabilities={"tools": {}})
    with pytest.raises(LocalProtocolError, match="logging"):
        conn.send_log("error", "x")


def test_notifications_follow_the_session_revision_and_capabilities() -> None:
    conn = legacy_server("2025-06-18", capabilities={"tools": {}})
    with pytest.raises(LocalProtocolError, match=r"tools\.listChanged"):
        conn.send_notification("notifications/tools/list_changed")
    with pytest.raises(LocalProtocolError, match="not a server notification"):
        conn.send_notification("notifications/elicitation/complete", {"elicitationId": "e"})
    conn = legacy_server("2025-11-25")
    conn.send_notification("notifications/tools/list_changed")
    conn.send_notification("notifications/elicitation/complete", {"elicitationId": "e"})
    assert [m["method"] for m in out(conn)] == [
        "notifications/tools/list_changed",
        "notifications/elicitation/complete",
    ]


def test_client_notifications_are_checked_against_its_declaration() -> None:
    conn = legacy_client(capabilities={"roots": {}})
    with pytest.raises(LocalProtocolError, match=r"roots\.listChanged"):
        conn.send_notification("notifications/roots/list_changed")
    conn = legacy_client(capabilities={"roots": {"listChanged": True}})
    conn.send_notification("notifications/roots/list_changed")
    srv = legacy_server()
    events = feed(srv, *out(conn))
    assert one(events, NotificationReceived).method == "notifications/roots/list_changed"


def test_server_notifications_reach_the_client() -> None:
    pair = ConnectionPair()
    pair.connect()
    pair.server.send_notification("notifications/resources/updated", {"uri": "file:///a"})
    pair.server.send_notification("notifications/tools/list_changed")
    client_events, _ = pair.pump()
    got = of_type(client_events, NotificationReceived)
    assert [n.method for n in got] == [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ]
    assert got[0].params.uri == "file:///a"


def test_invalid_notification_params_are_reported_not_answered() -> None:
    conn = legacy_client()
    events = feed(conn, notification("notifications/resources/updated", {"uri": 5}))
    rejected = one(events, MessageRejected)
    assert (rejected.request_id, rejected.code) == (None, INVALID_PARAMS)
    assert out(conn) == []
    srv = legacy_server()
    events = feed(srv, notification("notifications/cancelled", {"requestId": 1, "reason": 5}))
    assert events == [] and out(srv) == []


def test_unknown_notifications_are_ignored_silently() -> None:
    for conn in (legacy_client(), legacy_server()):
        assert feed(conn, notification("notifications/whatever", {"x": 1})) == []
        assert out(conn) == []


def test_server_instance_is_reusable_config_but_not_state() -> None:
    config = default_server_config()
    a, b = ServerConnection(config), ServerConnection(config)
    feed(a, request(0, "initialize", initialize_params("2025-03-26")))
    assert a.protocol_version == "2025-03-26" and b.protocol_version is None
    assert b.state == State.AWAITING_FIRST


def test_a_non_object_elicitation_capability_covers_no_mode() -> None:
    conn = legacy_client("2025-11-25", capabilities={"elicitation": True})
    feed(conn, request(1, "elicitation/create", {"message": "?", "requestedSchema": {}}))
    assert out(conn) == [error(1, INVALID_PARAMS, "Elicitation mode 'form' not supported")]


SAMPLING_WITH_TOOLS = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 5,
    "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
}


def test_sampling_with_tools_needs_sampling_tools_declared() -> None:
    conn = legacy_client("2025-11-25", capabilities={"sampling": {}})
    feed(conn, request(1, "sampling/createMessage", SAMPLING_WITH_TOOLS))
    assert out(conn) == [error(1, INVALID_PARAMS, "Sampling with tools not supported")]
    conn = legacy_client("2025-11-25", capabilities={"sampling": {"tools": {}}})
    events = feed(conn, request(1, "sampling/createMessage", SAMPLING_WITH_TOOLS))
    assert one(events, RequestReceived).method == "sampling/createMessage"
    srv = legacy_server("2025-11-25", client_caps={"sampling": {}})
    with pytest.raises(LocalProtocolError, match="Sampling with tools not supported"):
        srv.send_request("sampling/createMessage", SAMPLING_WITH_TOOLS)


def test_url_elicitation_rules_per_revision() -> None:
    url = {"mode": "url", "message": "go", "url": "https://x.example"}
    srv = legacy_server("2025-06-18", client_caps={"elicitation": {"url": {}}})
    with pytest.raises(LocalProtocolError, match="2025-11-25"):
        srv.send_request("elicitation/create", url)
    srv = legacy_server("2025-11-25", client_caps={"elicitation": {"url": {}}})
    with pytest.raises(LocalProtocolError, match="elicitationId"):
        srv.send_request("elicitation/create", url)
    srv.send_request("elicitation/create", {**url, "elicitationId": "e-1"})
    assert out(srv)[0]["params"]["elicitationId"] == "e-1"


def test_declined_elicitation_never_carries_content() -> None:
    srv = legacy_server("2025-06-18", client_caps={"elicitation": {}})
    form = {"type": "object", "properties": {"secret": {"type": "string"}}}
    rid = srv.send_request("elicitation/create", {"message": "?", "requestedSchema": form})
    srv.data_to_send()
    events = feed(srv, result(rid, {"action": "decline", "content": {"secret": "x"}}))
    response = one(events, ResponseReceived)
    assert response.result.action == "decline" and response.result.content is None


def test_send_log_needs_a_session() -> None:
    conn = server()
    with pytest.raises(LocalProtocolError, match="not ready"):
        conn.send_log("error", "x")


def test_modern_log_messages_are_request_scoped() -> None:
    conn = modern_server()
    feed(
        conn,
        request(1, "tools/call", modern_params({"name": "a"})),
        request(
            2,
            "tools/call",
            {"name": "b", "_meta": {**modern_params()["_meta"], **log_meta("warning")}},
        ),
    )
    assert not conn.send_log("error", "no level asked", related_request_id=1)
    assert not conn.send_log("error", "no request named")
    assert not conn.send_log("info", "below the level", related_request_id=2)
    assert conn.send_log("error", "this one", related_request_id=2)
    (msg,) = conn.messages_to_send()
    assert (msg.method, msg.related_request_id) == ("notifications/message", 2)


def test_completion_is_usable_on_a_2024_11_05_session() -> None:
    conn = legacy_client("2024-11-05", server_caps={"prompts": {}})
    conn.send_request(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}},
    )
    assert out(conn)[0]["method"] == "completion/complete"


def test_malformed_answer_to_initialize_ends_the_client_connection() -> None:
    conn = ClientConnection(ClientConfig(mode="legacy"))
    conn.connect()
    (init,) = out(conn)
    events = feed(conn, {"jsonrpc": "2.0", "id": init["id"], "result": []})
    closed = one(events, ConnectionClosed)
    assert closed.error is not None and "initialize failed" in closed.error.message
    assert conn.state == State.ERROR
