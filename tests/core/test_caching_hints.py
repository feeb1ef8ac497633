"""Result shapes of the server features: 2026-07-28 caching hints (`ttlMs`,
`cacheScope`) on the results that must carry them and on no others,
completions, and tool results with `structuredContent` / `isError`, in both
eras. Every emitted message is schema-validated.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_core import (
    META_SERVER_INFO,
    METHOD_NOT_FOUND,
    LocalProtocolError,
    RequestReceived,
    ResponseReceived,
)
from mcp_core.testing import default_server_config
from mcp_core.types import CallToolResult, CompleteResult, ListToolsResult
from tests.core.interaction_support import (
    FULL_CAPS,
    Wire,
    drain,
    envelope,
    inject,
    legacy_wire,
    modern_wire,
    one,
)

T0 = 100.0

CACHEABLE: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("tools/list", {}, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
    ("prompts/list", {}, {"prompts": [{"name": "p"}]}),
    ("resources/list", {}, {"resources": [{"uri": "file:///a", "name": "a"}]}),
    (
        "resources/templates/list",
        {},
        {"resourceTemplates": [{"uriTemplate": "file:///{x}", "name": "x"}]},
    ),
    ("resources/read", {"uri": "file:///a"}, {"contents": [{"uri": "file:///a", "text": "A"}]}),
]
NOT_CACHEABLE: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("tools/call", {"name": "t"}, {"content": [{"type": "text", "text": "ok"}]}),
    ("prompts/get", {"name": "p"}, {"messages": []}),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "x"}},
        {"completion": {"values": ["xa", "xb"]}},
    ),
]


def answer(w: Wire, method: str, params: dict[str, Any], result: dict[str, Any]) -> Any:
    rid = w.client.send_request(method, params)
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    w.server.send_result(req.request_id, result)
    client_events, _ = w.pump()
    got = one(client_events, ResponseReceived)
    assert got.request_id == rid
    return got


def test_discover_carries_the_configured_hints() -> None:
    w = modern_wire(cache_ttl_ms=30_000, cache_scope="public")
    discover = w.sent("server")[0]["result"]
    assert (discover["ttlMs"], discover["cacheScope"]) == (30_000, "public")
    assert discover["resultType"] == "complete"


def test_default_hints_are_zero_and_private() -> None:
    w = modern_wire()
    discover = w.sent("server")[0]["result"]
    assert (discover["ttlMs"], discover["cacheScope"]) == (0, "private")


def test_negative_default_ttl_is_refused() -> None:
    with pytest.raises(ValueError):
        default_server_config(cache_ttl_ms=-1)


@pytest.mark.parametrize(("method", "params", "result"), CACHEABLE)
def test_cacheable_results_get_the_config_defaults(
    method: str, params: dict[str, Any], result: dict[str, Any]
) -> None:
    w = modern_wire(cache_ttl_ms=60_000, cache_scope="public")
    got = answer(w, method, params, result)
    wire = w.last("server")["result"]
    assert (wire["ttlMs"], wire["cacheScope"]) == (60_000, "public")
    assert wire["resultType"] == "complete"
    assert META_SERVER_INFO in wire["_meta"]
    assert (got.result.ttl_ms, got.result.cache_scope) == (60_000, "public")


@pytest.mark.parametrize(("method", "params", "result"), CACHEABLE)
def test_application_hints_are_kept(
    method: str, params: dict[str, Any], result: dict[str, Any]
) -> None:
    w = modern_wire(cache_ttl_ms=60_000, cache_scope="public")
    answer(w, method, params, {**result, "ttlMs": 5, "cacheScope": "private"})
    wire = w.last("server")["result"]
    assert (wire["ttlMs"], wire["cacheScope"]) == (5, "private")


def test_application_may_set_just_one_hint() -> None:
    w = modern_wire(cache_ttl_ms=60_000, cache_scope="public")
    answer(w, "tools/list", {}, {"tools": [], "cacheScope": "private"})
    wire = w.last("server")["result"]
    assert (wire["ttlMs"], wire["cacheScope"]) == (60_000, "private")


@pytest.mark.parametrize(("method", "params", "result"), NOT_CACHEABLE)
def test_other_results_carry_no_hints(
    method: str, params: dict[str, Any], result: dict[str, Any]
) -> None:
    w = modern_wire(cache_ttl_ms=60_000, cache_scope="public")
    answer(w, method, params, result)
    wire = w.last("server")["result"]
    assert "ttlMs" not in wire
    assert "cacheScope" not in wire
    assert wire["resultType"] == "complete"


def test_input_required_on_a_cacheable_method_carries_no_hints() -> None:
    w = modern_wire({"roots": {}}, cache_ttl_ms=60_000, cache_scope="public")
    rid = w.client.send_request("resources/read", {"uri": "file:///a"})
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    w.server.send_input_required(req.request_id, {"r": {"method": "roots/list"}}, wall_time=T0)
    client_events, _ = w.pump()
    interim = w.last("server")["result"]
    assert interim["resultType"] == "input_required"
    assert "ttlMs" not in interim
    assert "cacheScope" not in interim
    w.client.send_result(one(client_events, RequestReceived).request_id, {"roots": []})
    _, server_events = w.pump()
    retry = one(server_events, RequestReceived)
    w.server.send_result(retry.request_id, {"contents": [{"uri": "file:///a", "text": "A"}]})
    client_events, _ = w.pump()
    final = w.last("server")["result"]
    assert (final["ttlMs"], final["cacheScope"]) == (60_000, "public")
    assert one(client_events, ResponseReceived).request_id == rid


def test_input_required_through_send_result_carries_no_hints_either() -> None:
    w = modern_wire(cache_ttl_ms=60_000, keys=())  # the application seals its own state
    w.client.send_request("resources/read", {"uri": "file:///a"})
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    w.server.send_result(req.request_id, {"resultType": "input_required", "requestState": "s"})
    _, server_events = w.pump()
    interim = w.sent("server")[-1]["result"]
    assert interim == {
        "resultType": "input_required",
        "requestState": "s",
        "_meta": interim["_meta"],
    }
    # State only: the client retried at once.
    assert one(server_events, RequestReceived).params.request_state == "s"


def test_unknown_result_type_is_refused() -> None:
    w = modern_wire()
    w.client.send_request("tools/list", {})
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    with pytest.raises(LocalProtocolError):
        w.server.send_result(req.request_id, {"tools": [], "resultType": "partial"})
    assert w.server.data_to_send() == b""


@pytest.mark.parametrize("revision", ["2025-03-26", "2025-11-25"])
def test_legacy_results_carry_no_hints_and_no_result_type(revision: str) -> None:
    w = legacy_wire(revision)
    got = answer(w, "tools/list", {}, {"tools": [], "resultType": "complete"})
    wire = w.last("server")["result"]
    assert wire == {"tools": []}
    assert isinstance(got.result, ListToolsResult)
    assert got.result.ttl_ms is None


# ---------------------------------------------------------------------- completions


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_completion_round_trip(era: str) -> None:
    w = legacy_wire("2025-11-25") if era == "legacy" else modern_wire()
    params = {
        "ref": {"type": "ref/resource", "uri": "file:///{name}"},
        "argument": {"name": "name", "value": "re"},
        "context": {"arguments": {"dir": "docs"}},
    }
    rid = w.client.send_request("completion/complete", params)
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    assert req.params.argument.value == "re"
    assert req.params.ref.uri == "file:///{name}"
    assert req.params.context.arguments == {"dir": "docs"}
    w.server.send_result(
        req.request_id,
        {"completion": {"values": ["readme", "report"], "total": 9, "hasMore": True}},
    )
    client_events, _ = w.pump()
    got = one(client_events, ResponseReceived)
    assert got.request_id == rid
    assert isinstance(got.result, CompleteResult)
    assert got.result.completion.values == ["readme", "report"]
    assert (got.result.completion.total, got.result.completion.has_more) == (9, True)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_completion_needs_the_capability(era: str) -> None:
    caps = {k: v for k, v in FULL_CAPS.items() if k != "completions"}
    w = (
        legacy_wire("2025-11-25", server_caps=caps)
        if era == "legacy"
        else modern_wire(server_caps=caps)
    )
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}
    with pytest.raises(LocalProtocolError, match="completions"):
        w.client.send_request("completion/complete", params)
    raw_params = params if era == "legacy" else {**params, "_meta": envelope({})}
    inject(
        w.server,
        {"jsonrpc": "2.0", "id": "c", "method": "completion/complete", "params": raw_params},
    )
    revision = w.server.protocol_version
    assert revision is not None
    [err] = drain(w.server, revision)
    assert err["error"]["code"] == METHOD_NOT_FOUND


# ---------------------------------------------------------------------- tool results


@pytest.mark.parametrize(
    ("era", "revision"), [("legacy", "2025-06-18"), ("legacy", "2025-11-25"), ("modern", None)]
)
def test_structured_content_and_is_error(era: str, revision: str | None) -> None:
    w = legacy_wire(revision) if revision is not None else modern_wire()
    ok = answer(
        w,
        "tools/call",
        {"name": "weather", "arguments": {"city": "Oslo"}},
        {
            "content": [{"type": "text", "text": '{"temp": 12}'}],
            "structuredContent": {"temp": 12, "unit": "C"},
        },
    )
    assert isinstance(ok.result, CallToolResult)
    assert ok.result.structured_content == {"temp": 12, "unit": "C"}
    assert not ok.result.is_error
    failed = answer(
        w,
        "tools/call",
        {"name": "weather", "arguments": {"city": ""}},
        {"content": [{"type": "text", "text": "city must not be empty"}], "isError": True},
    )
    assert failed.result.is_error is True
    assert failed.result.content[0].text == "city must not be empty"
    wire = w.last("server")["result"]
    assert wire["isError"] is True
    if era == "modern":
        assert wire["resultType"] == "complete"
        assert "ttlMs" not in wire
