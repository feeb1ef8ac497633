"""Revision 2026-07-28 (stateless, per-request envelope), both roles, and era detection."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from mcp_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    ClientConfig,
    Era,
    LocalProtocolError,
    MessageRejected,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    State,
)
from mcp_core._server import _EnvelopeCache
from mcp_core.testing import ConnectionPair, default_server_config
from tests.schema_check import validate_message

from .engine_support import (
    FULL_SERVER_CAPS,
    LEGACY,
    MODERN,
    error,
    feed,
    initialize_params,
    legacy_server,
    meta,
    modern_client,
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

SERVER_INFO = {"name": "test-server", "version": "1.0.0"}

# --------------------------------------------------------------- the envelope


def without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


ENVELOPE_FAULTS = [
    pytest.param(
        None,
        INVALID_PARAMS,
        f"Missing required params._meta with {META_PROTOCOL_VERSION}",
        id="no-params",
    ),
    pytest.param(
        {},
        INVALID_PARAMS,
        f"Missing required params._meta with {META_PROTOCOL_VERSION}",
        id="no-meta",
    ),
    pytest.param(
        {"_meta": []},
        INVALID_PARAMS,
        f"Missing required params._meta with {META_PROTOCOL_VERSION}",
        id="meta-array",
    ),
    pytest.param(
        {"_meta": without(meta(), META_PROTOCOL_VERSION)},
        INVALID_PARAMS,
        f"Missing required _meta key {META_PROTOCOL_VERSION}",
        id="no-version",
    ),
    pytest.param(
        {"_meta": {**meta(), META_PROTOCOL_VERSION: 20260728}},
        INVALID_PARAMS,
        f"_meta key {META_PROTOCOL_VERSION} must be a string, not an integer",
        id="version-number",
    ),
    pytest.param(
        {"_meta": {**meta(), META_PROTOCOL_VERSION: [MODERN]}},
        INVALID_PARAMS,
        f"_meta key {META_PROTOCOL_VERSION} must be a string, not an array",
        id="version-array",
    ),
    pytest.param(
        {"_meta": without(meta(), META_CLIENT_CAPABILITIES)},
        INVALID_PARAMS,
        f"Missing required _meta key {META_CLIENT_CAPABILITIES}",
        id="no-capabilities",
    ),
    pytest.param(
        {"_meta": {**meta(), META_CLIENT_CAPABILITIES: None}},
        INVALID_PARAMS,
        f"Missing required _meta key {META_CLIENT_CAPABILITIES}",
        id="capabilities-null",
    ),
    pytest.param(
        {"_meta": {**meta(), META_CLIENT_CAPABILITIES: ["roots"]}},
        INVALID_PARAMS,
        f"_meta key {META_CLIENT_CAPABILITIES} must be an object, not an array",
        id="capabilities-array",
    ),
    pytest.param(
        {"_meta": {**meta(), META_LOG_LEVEL: "loud"}},
        INVALID_PARAMS,
        f"Unknown log level 'loud' in _meta key {META_LOG_LEVEL}",
        id="unknown-log-level",
    ),
    *(
        pytest.param(
            {"_meta": {**meta(), META_LOG_LEVEL: value}},
            INVALID_PARAMS,
            f"_meta key {META_LOG_LEVEL} must be a string, not {kind}",
            id=f"log-level-{kind.split()[-1]}",
        )
        for value, kind in (
            (["debug"], "an array"),
            ({"level": "debug"}, "an object"),
            (3, "an integer"),
            (0.5, "a number"),
            (True, "a boolean"),
        )
    ),
]


@pytest.mark.parametrize("fresh", [True, False], ids=["first-message", "after-discover"])
@pytest.mark.parametrize(("params", "code", "message"), ENVELOPE_FAULTS)
def test_envelope_faults_are_invalid_params(
    fresh: bool, params: Any, code: int, message: str
) -> None:
    conn = server() if fresh else modern_server()
    events = feed(conn, request(1, "tools/list", params))
    assert out(conn) == [error(1, code, message)]
    assert not of_type(events, RequestReceived)
    if fresh:
        assert conn.era is None and conn.state == State.AWAITING_FIRST


def test_invalid_client_info_is_invalid_params() -> None:
    conn = modern_server()
    feed(conn, request(1, "tools/list", {"_meta": {**meta(), META_CLIENT_INFO: {"name": 5}}}))
    (msg,) = out(conn)
    assert (msg["id"], msg["error"]["code"]) == (1, INVALID_PARAMS)
    assert msg["error"]["message"].startswith("Invalid _meta envelope")


def test_a_different_envelope_after_a_good_one_is_still_checked_and_refused() -> None:
    # The envelope cache remembers the last good declaration; a request whose
    # clientInfo or capabilities differ from it is validated again, and refused.
    conn = modern_server()
    good = meta()
    feed(conn, request(1, "tools/list", {"_meta": good}), request(2, "tools/list", {"_meta": good}))
    assert [m["id"] for m in out(conn)] == []  # both handed on, unanswered
    bad_info = {**good, META_CLIENT_INFO: {"name": "raw-client", "version": 1}}
    bad_caps = {**good, META_CLIENT_CAPABILITIES: {"roots": "yes"}}
    events = feed(conn, request(3, "tools/list", {"_meta": bad_info}))
    events += feed(conn, request(4, "tools/list", {"_meta": bad_caps}))
    events += feed(conn, request(5, "tools/list", {"_meta": good}))
    msgs = out(conn)
    assert [(m["id"], m["error"]["code"]) for m in msgs] == [
        (3, INVALID_PARAMS),
        (4, INVALID_PARAMS),
    ]
    assert all(m["error"]["message"].startswith("Invalid _meta envelope") for m in msgs)
    assert [e.request_id for e in of_type(events, RequestReceived)] == [5]


def test_an_envelope_equal_but_for_a_number_is_not_taken_for_the_last_one() -> None:
    # 1 == 1.0 == True in Python, not in JSON: declarations holding numbers or booleans
    # never take the remembered slot, so each keeps the value it sent.
    conn = modern_server()
    contexts = []
    for rid, flag in enumerate((True, 1, 1.0, True)):
        caps = {"experimental": {"feature": {"on": flag}}}
        events = feed(conn, request(rid, "tools/list", {"_meta": meta(caps=caps)}))
        contexts.append(one(events, RequestReceived).context)
    seen = [c.client_capabilities.experimental["feature"]["on"] for c in contexts]
    assert [type(v) for v in seen] == [bool, int, float, bool]


def test_the_envelope_memo_is_one_private_slot() -> None:
    cache = _EnvelopeCache()
    info = {"name": "a", "version": "1"}
    first = cache({}, info)
    assert cache({}, {"name": "a", "version": "1"}) is first  # equal: the slot's models
    # The slot compares against its own copy: the caller's dicts may change afterwards.
    info["version"] = 2
    with pytest.raises(pydantic.ValidationError):
        cache({}, info)
    assert cache({}, {"name": "a", "version": "1"}) is first
    # One slot, whatever the number of declarations: each new one replaces it.
    for n in range(50):
        cache({"experimental": {str(n): {}}}, {"name": "a", "version": "1"})
    assert cache._last is not None and cache._last[0] == {"experimental": {"49": {}}}
    assert cache({}, {"name": "a", "version": "1"}) is first  # still from the bounded cache
    # A declaration with a float in it does not take the slot (`==` is exact about neither
    # the type nor the sign of a float).
    cache({"experimental": {"f": {"v": 1.5}}}, None)
    assert cache._last is not None and cache._last[0] == {}


def test_the_envelope_memo_takes_integers_and_booleans_by_their_exact_type() -> None:
    # The SDKs' usual declaration (`roots.listChanged: true`) takes the slot; an equal one
    # whose boolean or integer is of another JSON type is validated on its own.
    cache = _EnvelopeCache()
    info = {"name": "a", "version": "1"}
    roots = cache({"roots": {"listChanged": True}}, info)
    assert cache._last is not None and cache._last[0] == {"roots": {"listChanged": True}}
    assert cache({"roots": {"listChanged": True}}, dict(info)) is roots  # the slot
    experimental = {"experimental": {"x": {"n": 1, "on": True, "list": [0, False]}}}
    models = cache(experimental, None)
    assert cache(json.loads(json.dumps(experimental)), None) is models
    for other in (
        {"experimental": {"x": {"n": True, "on": True, "list": [0, False]}}},
        {"experimental": {"x": {"n": 1, "on": 1, "list": [0, False]}}},
        {"experimental": {"x": {"n": 1, "on": True, "list": [False, False]}}},
        {"experimental": {"x": {"n": 1.0, "on": True, "list": [0, False]}}},
    ):
        assert other == experimental  # what `==` alone would take for the slot's
        got = cache(other, None)
        assert got is not models
        assert got[0].experimental["x"] == other["experimental"]["x"]
        assert [type(v) for v in got[0].experimental["x"]["list"]] == [
            type(v) for v in other["experimental"]["x"]["list"]
        ]
        assert cache(experimental, None) is models  # and the slot's own still hits


@pytest.mark.parametrize("requested", ["2099-01-01", "2025-11-25", "2024-11-05", "draft"])
def test_unsupported_version_gets_32022_with_supported_and_requested(requested: str) -> None:
    conn = modern_server()
    feed(conn, request(7, "tools/list", {"_meta": meta(requested)}))
    assert out(conn) == [
        error(
            7,
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": [MODERN, *reversed(LEGACY)], "requested": requested},
        )
    ]


def test_unsupported_version_error_validates_against_the_schema() -> None:
    conn = modern_server()
    feed(conn, request(7, "tools/list", {"_meta": meta("2099-01-01")}))
    (msg,) = out(conn)
    validate_message(msg, MODERN, sender="server")
    # Its data is an UnsupportedProtocolVersionError's data.
    assert set(msg["error"]["data"]) == {"supported", "requested"}


@pytest.mark.parametrize("level", ["debug", "warning", "emergency"])
def test_known_log_levels_are_passed_to_the_request_context(level: str) -> None:
    conn = modern_server()
    events = feed(conn, request(1, "tools/list", {"_meta": {**meta(), META_LOG_LEVEL: level}}))
    assert one(events, RequestReceived).context.log_level == level


# ------------------------------------------------------------ server/discover


def test_discover_result() -> None:
    conn = server(instructions="Use the tools.", cache_ttl_ms=5000, cache_scope="public")
    feed(conn, request("d", "server/discover", modern_params()))
    assert out(conn) == [
        result(
            "d",
            {
                "supportedVersions": [MODERN, *reversed(LEGACY)],
                "capabilities": FULL_SERVER_CAPS,
                "instructions": "Use the tools.",
                "resultType": "complete",
                "_meta": {META_SERVER_INFO: SERVER_INFO},
                "ttlMs": 5000,
                "cacheScope": "public",
            },
        )
    ]
    assert (conn.era, conn.state, conn.protocol_version) == (Era.MODERN, State.READY, MODERN)


def test_discover_result_of_a_modern_only_server_validates() -> None:
    conn = server(
        supported_versions=(MODERN,), server_info={"title": "T", "websiteUrl": "https://x"}
    )
    feed(conn, request("d", "server/discover", modern_params()))
    (msg,) = out(conn)
    assert msg["result"]["supportedVersions"] == [MODERN]
    assert msg["result"]["_meta"][META_SERVER_INFO] == {
        "title": "T",
        "websiteUrl": "https://x",
        "name": "test-server",
        "version": "1.0.0",
    }
    validate_message(msg, MODERN, sender="server", request_method="server/discover")


# ------------------------------------------------------- results carry resultType

ANSWERS: list[tuple[str, dict[str, Any] | None, dict[str, Any], bool]] = [
    ("tools/list", None, {"tools": []}, True),
    ("tools/call", {"name": "t"}, {"content": []}, False),
    ("prompts/list", None, {"prompts": []}, True),
    ("prompts/get", {"name": "p"}, {"messages": []}, False),
    ("resources/list", None, {"resources": []}, True),
    ("resources/templates/list", None, {"resourceTemplates": []}, True),
    ("resources/read", {"uri": "file:///a"}, {"contents": []}, True),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}},
        {"completion": {"values": []}},
        False,
    ),
]


@pytest.mark.parametrize(("method", "params", "answer", "cacheable"), ANSWERS)
def test_every_result_is_complete_with_server_info(
    method: str, params: Any, answer: dict[str, Any], cacheable: bool
) -> None:
    conn = modern_server()
    events = feed(conn, request(1, method, modern_params(params)))
    assert one(events, RequestReceived).method == method
    assert conn.send_result(1, dict(answer))
    (msg,) = out(conn)
    got = msg["result"]
    assert got["resultType"] == "complete"
    assert got["_meta"] == {META_SERVER_INFO: SERVER_INFO}
    if cacheable:
        assert (got["ttlMs"], got["cacheScope"]) == (0, "private")
    else:
        assert "ttlMs" not in got and "cacheScope" not in got
    validate_message(msg, MODERN, sender="server", request_method=method)


def test_application_meta_and_cache_hints_are_kept() -> None:
    conn = modern_server()
    feed(conn, request(1, "tools/list", modern_params()))
    conn.send_result(1, {"tools": [], "ttlMs": 60_000, "cacheScope": "public", "_meta": {"k": 1}})
    got = out(conn)[0]["result"]
    assert got["ttlMs"] == 60_000 and got["cacheScope"] == "public"
    assert got["_meta"] == {"k": 1, META_SERVER_INFO: SERVER_INFO}


@pytest.mark.parametrize("meta", [[1], "trace", 7, True, [], ""])
def test_a_result_meta_that_is_no_object_is_the_applications_mistake(meta: Any) -> None:
    """Our server info is merged into the result's `_meta`: a value that is no object is
    refused with LocalProtocolError, and the request still waits for a valid answer (it
    used to escape as a TypeError from the merge, or, when falsy, be silently replaced)."""
    conn = modern_server()
    feed(conn, request(1, "tools/call", modern_params({"name": "t"})))
    with pytest.raises(LocalProtocolError, match=r"result\._meta must be an object"):
        conn.send_result(1, {"content": [], "_meta": meta})
    assert out(conn) == []
    assert conn.send_result(1, {"content": []}) is True
    assert out(conn)[0]["result"]["_meta"] == {META_SERVER_INFO: SERVER_INFO}


def test_application_cannot_invent_result_types() -> None:
    conn = modern_server()
    feed(conn, request(1, "tools/list", modern_params()), request(2, "tools/list", modern_params()))
    with pytest.raises(LocalProtocolError, match="unknown resultType"):
        conn.send_result(1, {"tools": [], "resultType": "bogus"})
    with pytest.raises(LocalProtocolError, match="tools/list cannot answer with a task"):
        conn.send_result(1, {"tools": [], "resultType": "task"})
    with pytest.raises(LocalProtocolError, match="InputRequiredResult"):
        conn.send_result(2, {"resultType": "input_required", "requestState": "s"})
    assert out(conn) == []
    assert conn.requests_in_flight == (0, 2)


@pytest.mark.parametrize("version", LEGACY)
def test_legacy_results_never_carry_result_type(version: str) -> None:
    conn = legacy_server(version)
    feed(conn, request(1, "tools/list"))
    conn.send_result(1, {"tools": [], "resultType": "complete"})
    assert out(conn) == [result(1, {"tools": []})]


# ---------------------------------------------------- the client's reading


def test_client_treats_a_result_without_result_type_as_complete() -> None:
    conn = modern_client()
    rid = conn.send_request("tools/list")
    sent = out(conn)[0]
    assert sent["params"]["_meta"][META_PROTOCOL_VERSION] == MODERN
    events = feed(conn, result(rid, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))
    response = one(events, ResponseReceived)
    assert response.result.tools[0].name == "t"


@pytest.mark.parametrize("result_type", ["task", "bogus", "", 5])
def test_client_fails_a_request_on_an_unknown_result_type(result_type: Any) -> None:
    conn = modern_client()
    rid = conn.send_request("tools/list")
    events = feed(conn, result(rid, {"tools": [], "resultType": result_type}))
    failed = one(events, RequestFailed)
    assert (failed.request_id, failed.method, failed.code) == (rid, "tools/list", INTERNAL_ERROR)
    assert "resultType" in failed.message
    assert conn.requests_in_flight == (0, 0)


def test_client_refuses_input_required_on_a_method_that_cannot_have_it() -> None:
    conn = modern_client()
    rid = conn.send_request("tools/list")
    conn.data_to_send()
    events = feed(conn, result(rid, {"resultType": "input_required", "requestState": "x"}))
    assert one(events, RequestFailed).code == INTERNAL_ERROR
    assert out(conn) == []


def test_modern_client_stamps_its_envelope_on_every_request() -> None:
    conn = modern_client(
        capabilities={"elicitation": {}},
        client_info={"name": "app", "version": "2", "title": "App"},
        log_level="info",
    )
    conn.send_request("tools/list", {"_meta": {"traceparent": "00-abc"}})
    conn.send_request("tools/call", {"name": "t"})
    for sent in out(conn):
        envelope = sent["params"]["_meta"]
        assert envelope[META_PROTOCOL_VERSION] == MODERN
        assert envelope[META_CLIENT_CAPABILITIES] == {"elicitation": {}}
        assert envelope[META_CLIENT_INFO] == {"name": "app", "version": "2", "title": "App"}
        assert envelope[META_LOG_LEVEL] == "info"
        validate_message(sent, MODERN, sender="client")
    # Application _meta keys are merged, not replaced.
    conn.send_request("tools/list", {"_meta": {"traceparent": "00-abc"}})
    assert out(conn)[0]["params"]["_meta"]["traceparent"] == "00-abc"


@pytest.mark.parametrize("meta", [[1], "trace", 7, True, [], ""])
def test_a_meta_that_is_no_object_is_the_applications_mistake(meta: Any) -> None:
    """The envelope is merged into the application's `_meta`: a value that is no object
    is refused with LocalProtocolError before anything is sent or recorded (it used to
    escape as a TypeError from the merge, or, when falsy, be silently replaced)."""
    conn = modern_client()
    with pytest.raises(LocalProtocolError, match=r"params\._meta must be an object"):
        conn.send_request("tools/call", {"name": "t", "_meta": meta})
    assert out(conn) == []
    assert not conn._outbound
    # The connection goes on: the next request is sent as usual.
    conn.send_request("tools/call", {"name": "t", "_meta": None})
    (sent,) = out(conn)
    assert sent["params"]["_meta"][META_PROTOCOL_VERSION] == MODERN


# ------------------------------------------------- per-request capabilities


def test_capabilities_are_evaluated_per_request() -> None:
    conn = modern_server()
    events = feed(
        conn,
        request(1, "tools/call", modern_params({"name": "a"}, caps={"elicitation": {}})),
        request(2, "tools/call", modern_params({"name": "b"})),
        request(3, "tools/call", modern_params({"name": "c"}, caps={"sampling": {}})),
    )
    contexts = [e.context for e in of_type(events, RequestReceived)]
    assert contexts[0].client_capabilities.elicitation is not None
    assert contexts[1].client_capabilities.elicitation is None
    assert contexts[1].client_capabilities.sampling is None
    assert contexts[2].client_capabilities.sampling is not None
    assert contexts[2].client_capabilities.elicitation is None
    # What the server may ask for follows the same per-request declaration.
    ask = {
        "q": {
            "method": "elicitation/create",
            "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
        }
    }
    with pytest.raises(LocalProtocolError, match="Elicitation not supported"):
        conn.send_input_required(2, ask, "state")
    assert conn.send_input_required(1, ask, "state")


def test_client_info_is_per_request_too() -> None:
    conn = modern_server()
    first = modern_params()
    second = {"_meta": without(meta(), META_CLIENT_INFO)}
    events = feed(conn, request(1, "tools/list", first), request(2, "tools/list", second))
    a, b = of_type(events, RequestReceived)
    assert a.context.client_info.name == "raw-client"
    assert b.context.client_info is None


# ------------------------------------------------- no server-to-client requests


def test_modern_server_sends_no_requests_or_unsolicited_notifications() -> None:
    conn = modern_server()
    for method, params in [
        ("ping", None),
        ("sampling/createMessage", {"messages": [], "maxTokens": 1}),
        ("roots/list", None),
        ("elicitation/create", {"message": "?", "requestedSchema": {}}),
    ]:
        with pytest.raises(LocalProtocolError, match="2026-07-28"):
            conn.send_request(method, params)
    with pytest.raises(LocalProtocolError, match="2026-07-28"):
        conn.send_notification("notifications/tools/list_changed")
    assert out(conn) == []


def test_request_arriving_at_a_modern_client_is_refused_and_never_surfaces() -> None:
    # The spec has no server-to-client requests in 2026-07-28, and clients send no
    # responses: the engine reports the request and answers nothing.
    conn = modern_client(capabilities={"sampling": {}, "roots": {}})
    for rid, method in enumerate(["ping", "sampling/createMessage", "roots/list"]):
        events = feed(conn, request(rid, method, {"messages": [], "maxTokens": 1}))
        assert not of_type(events, RequestReceived)
        assert events == [
            MessageRejected(rid, METHOD_NOT_FOUND, "2026-07-28 servers do not send requests")
        ]
        assert out(conn) == []
    assert conn.requests_in_flight == (0, 0)
    assert conn.state == State.READY


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "nope"])
def test_methods_removed_in_2026_are_method_not_found(method: str) -> None:
    conn = modern_server()
    feed(conn, request(1, method, modern_params({"level": "info", "uri": "file:///a"})))
    assert out(conn) == [error(1, METHOD_NOT_FOUND, f"Method not found: {method}")]


def test_capability_gating_applies_per_method() -> None:
    conn = modern_server(capabilities={"tools": {}})
    feed(conn, request(1, "prompts/list", modern_params()))
    assert out(conn) == [
        error(1, METHOD_NOT_FOUND, "Method not found: prompts/list (capability not offered)")
    ]


# --------------------------------------------------------- era detection


def test_initialize_to_a_modern_only_server_names_the_supported_versions() -> None:
    conn = server(supported_versions=(MODERN,))
    events = feed(conn, request(0, "initialize", initialize_params("2025-11-25")))
    (msg,) = out(conn)
    assert msg["id"] == 0
    assert msg["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert MODERN in msg["error"]["message"]
    assert msg["error"]["data"] == {"supported": [MODERN], "requested": "2025-11-25"}
    assert one(events, MessageRejected).code == UNSUPPORTED_PROTOCOL_VERSION
    assert conn.era is None
    validate_message(msg, MODERN, sender="server")


def test_initialize_with_garbage_version_to_a_modern_only_server() -> None:
    conn = server(supported_versions=(MODERN,))
    feed(conn, request(0, "initialize", {"protocolVersion": 5}))
    (msg,) = out(conn)
    assert msg["error"]["data"] == {"supported": [MODERN], "requested": None}


def test_ping_to_a_modern_only_server_is_method_not_found() -> None:
    conn = server(supported_versions=(MODERN,))
    feed(conn, request(1, "ping"))
    assert out(conn) == [error(1, METHOD_NOT_FOUND, "Method not found: ping")]


def test_first_modern_request_makes_the_stream_modern() -> None:
    conn = server()
    events = feed(conn, request(1, "tools/list", modern_params()))
    assert one(events, RequestReceived).context.protocol_version == MODERN
    assert conn.era is Era.MODERN
    # initialize is now refused, naming the versions.
    feed(conn, request(2, "initialize", initialize_params()))
    (msg,) = out(conn)
    assert msg["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert conn.era is Era.MODERN


def test_first_initialize_makes_the_stream_legacy() -> None:
    conn = legacy_server()
    assert conn.era is Era.LEGACY
    # A later request carrying an envelope is read as a legacy request with _meta.
    events = feed(conn, request(1, "tools/list", modern_params()))
    assert one(events, RequestReceived).context.protocol_version == "2025-11-25"
    feed(conn, request(2, "server/discover", modern_params()))
    assert out(conn) == [error(2, METHOD_NOT_FOUND, "Method not found: server/discover")]
    assert conn.era is Era.LEGACY


def test_one_config_serves_both_eras_on_separate_connections() -> None:
    config = default_server_config()
    for mode, era in [("legacy", Era.LEGACY), ("auto", Era.MODERN), (MODERN, Era.MODERN)]:
        pair = ConnectionPair(config, ClientConfig(mode=mode))
        pair.connect()
        rid = pair.client.send_request("tools/list")
        _, server_events = pair.pump()
        pair.server.send_result(one(server_events, RequestReceived).request_id, {"tools": []})
        client_events, _ = pair.pump()
        assert one(client_events, ResponseReceived).request_id == rid
        assert pair.client.era is era
        assert pair.server.era is era


def test_modern_notifications_from_client_are_limited() -> None:
    # Only notifications/cancelled exists client -> server in 2026-07-28.
    client = modern_client()
    with pytest.raises(LocalProtocolError, match="not a client notification"):
        client.send_notification("notifications/initialized")
    with pytest.raises(LocalProtocolError, match="not a client notification"):
        client.send_notification("notifications/progress", {"progressToken": 1, "progress": 1})
    srv = modern_server()
    assert feed(srv, notification("notifications/initialized")) == []
    assert feed(srv, notification("notifications/roots/list_changed")) == []


def test_modern_cancel_of_an_unknown_id_is_ignored() -> None:
    srv = modern_server()
    assert feed(srv, notification("notifications/cancelled", {"requestId": 42})) == []
    assert out(srv) == []
