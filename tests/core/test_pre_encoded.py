"""The members every 2026-07-28 message repeats, encoded once: the client's `_meta`
envelope and the server's `resultType` and server info (`jr.trailing_members`).

What must hold: the bytes on the wire are exactly what encoding the whole message
would give, member order included, in every case the fast path takes and in the
ones it leaves to the plain encoder (an application `_meta`, a progress token, a
value only the fallback encoder can write). The envelope cache on the server keys
values exactly: 1, 1.0 and true stay three declarations.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_core import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    ClientConnection,
    RequestReceived,
    ResponseReceived,
)
from mcp_core import _jsonrpc as jr

from .engine_support import (
    LEGACY,
    MODERN,
    feed,
    legacy_server,
    meta,
    modern_client,
    modern_params,
    modern_server,
    one,
    request,
)

VALUES: list[Any] = [
    {},
    {"name": "echo"},
    {"name": "echo", "arguments": {"text": "hello world", "n": 3, "x": 1.5, "ok": True}},
    {"text": 'é 😀 \u2028 "quoted" \\ back'},
    {"nested": [[{"a": None}], [], {}], "big": 10**30, "inf": float("inf")},
]
MEMBERS: list[dict[str, Any]] = [
    {"_meta": meta()},
    {"_meta": {}},
    {"resultType": "complete", "_meta": {META_SERVER_INFO: {"name": "s", "version": "1"}}},
]


def pairs(data: bytes) -> Any:
    """The message as nested lists of (key, value): order and duplicates kept."""
    return json.loads(data, object_pairs_hook=list)


@pytest.mark.parametrize("rid", [0, 7, "tag-3"])
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("members", MEMBERS)
def test_ending_encoders_give_the_plain_encoders_bytes(
    rid: Any, value: dict[str, Any], members: dict[str, Any]
) -> None:
    tail = jr.trailing_members(members)
    assert tail is not None
    whole = {**value, **members}
    assert jr.encode_request_ending(rid, "tools/call", dict(value), tail) == jr.encode_request(
        rid, "tools/call", whole
    )
    assert jr.encode_result_ending(rid, dict(value), tail) == jr.encode_result(rid, whole)


def test_what_only_the_fallback_encoder_writes_takes_the_plain_path() -> None:
    # A lone surrogate has no UTF-8 form: `dumps` writes it escaped, which the ending
    # encoders leave to it rather than splice into a differently encoded head.
    assert jr.trailing_members({"_meta": {"name": "\ud800"}}) is None
    tail = jr.trailing_members({"_meta": {}})
    assert tail is not None
    assert jr.encode_request_ending(1, "tools/call", {"name": "\ud800"}, tail) is None
    assert jr.encode_result_ending(1, {"text": "\ud800"}, tail) is None


# ---------------------------------------------------------------- the client's requests


def sent(client: ClientConnection) -> bytes:
    data = client.data_to_send()
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    return data[:-1]


def envelope_of(client: ClientConnection) -> dict[str, Any]:
    return {
        META_PROTOCOL_VERSION: MODERN,
        META_CLIENT_CAPABILITIES: client.config.capabilities_wire,
        META_CLIENT_INFO: client.config.client_info_wire,
    }


@pytest.mark.parametrize(
    "params",
    [
        # No `_meta` of the application's: the envelope is appended last (the fast path).
        {"name": "echo", "arguments": {"text": "hi"}},
        # An empty `_meta` keeps its place, first here, and is replaced by the envelope.
        {"_meta": {}, "name": "echo"},
        {"_meta": None, "name": "echo"},
        # The application's keys win over the envelope's, after them.
        {"name": "echo", "_meta": {"trace": "t1"}},
    ],
)
def test_a_2026_request_is_the_whole_params_encoded(params: dict[str, Any]) -> None:
    client = modern_client()
    envelope = envelope_of(client)
    rid = client.send_request("tools/call", dict(params))
    app_meta = params.get("_meta")
    expected = dict(params)
    expected["_meta"] = {**envelope, **app_meta} if app_meta else envelope
    assert sent(client) == jr.encode_request(rid, "tools/call", expected)
    assert [k for k, _ in pairs(sent_again(client, params))[3][1]] == list(expected)


def sent_again(client: ClientConnection, params: dict[str, Any]) -> bytes:
    client.send_request("tools/call", dict(params))
    return sent(client)


def test_a_request_without_params_carries_the_envelope_alone() -> None:
    client = modern_client()
    rid = client.send_request("tools/list")
    assert sent(client) == jr.encode_request(rid, "tools/list", {"_meta": envelope_of(client)})


def test_a_progress_token_is_merged_into_the_envelope() -> None:
    client = modern_client()
    rid = client.send_request("tools/call", {"name": "echo"}, progress=True)
    expected = {"name": "echo", "_meta": {**envelope_of(client), "progressToken": rid}}
    assert sent(client) == jr.encode_request(rid, "tools/call", expected)


def test_a_client_name_only_the_fallback_can_write_is_sent_as_before() -> None:
    client = modern_client(name="bad \ud800 name")
    rid = client.send_request("tools/call", {"name": "echo"})
    data = sent(client)
    assert data == jr.encode_request(
        rid, "tools/call", {"name": "echo", "_meta": envelope_of(client)}
    )
    assert b"\\ud800" in data  # escaped by the fallback encoder, whole


def test_clients_that_declare_alike_share_one_envelope() -> None:
    """Each `Client` makes a config of its own: what two clients declaring the same
    things share is found by the envelope's bytes, not by their configs."""
    first, second = modern_client(), modern_client()
    other = modern_client(name="another-client")
    for client in (first, second, other):
        client.send_request("tools/call", {"name": "echo"})
    assert sent(first) == sent(second) != sent(other)
    assert first._stamp is second._stamp is not None  # one shared pair
    assert other._stamp is not first._stamp


# ---------------------------------------------------------------- the server's results


def answer(server: Any, method: str, result: dict[str, Any]) -> bytes:
    params = modern_params({"name": "echo"} if method == "tools/call" else None)
    call = one(feed(server, request(5, method, params)), RequestReceived)
    assert server.send_result(call.request_id, result)
    data = server.data_to_send()
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    return data[:-1]


SERVER_INFO = {"name": "test-server", "version": "1.0.0"}


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            {"content": [], "isError": False},
            {
                "content": [],
                "isError": False,
                "resultType": "complete",
                "_meta": {META_SERVER_INFO: SERVER_INFO},
            },
        ),
        ({}, {"resultType": "complete", "_meta": {META_SERVER_INFO: SERVER_INFO}}),
        # The application's own `_meta` and `resultType` keep their places.
        (
            {"_meta": {"k": 1}, "content": []},
            {
                "_meta": {"k": 1, META_SERVER_INFO: SERVER_INFO},
                "content": [],
                "resultType": "complete",
            },
        ),
        (
            {"_meta": None, "content": []},
            {"_meta": {META_SERVER_INFO: SERVER_INFO}, "content": [], "resultType": "complete"},
        ),
        (
            {"resultType": "complete", "content": []},
            {"resultType": "complete", "content": [], "_meta": {META_SERVER_INFO: SERVER_INFO}},
        ),
    ],
)
def test_a_2026_result_is_the_finished_result_encoded(
    result: dict[str, Any], expected: dict[str, Any]
) -> None:
    server = modern_server()
    assert server.config.server_info_wire == SERVER_INFO
    assert answer(server, "tools/call", result) == jr.encode_result(5, expected)


def test_a_cacheable_result_gets_its_hints_after_the_server_info() -> None:
    server = modern_server()
    expected = {
        "tools": [],
        "resultType": "complete",
        "_meta": {META_SERVER_INFO: SERVER_INFO},
        "ttlMs": 0,
        "cacheScope": "private",
    }
    assert answer(server, "tools/list", {"tools": []}) == jr.encode_result(5, expected)


def test_a_legacy_result_has_no_result_type() -> None:
    server = legacy_server(LEGACY[-1])
    call = one(feed(server, request(5, "tools/call", {"name": "echo"})), RequestReceived)
    server.send_result(call.request_id, {"content": [], "resultType": "complete"})
    assert server.data_to_send() == jr.encode_result(5, {"content": []}) + b"\n"


def test_a_result_only_the_fallback_can_write_is_sent_as_before() -> None:
    server = modern_server()
    data = answer(server, "tools/call", {"content": [{"type": "text", "text": "\ud800"}]})
    assert b"\\ud800" in data
    assert pairs(data)[2][1][-1][0] == "_meta"


def test_the_client_reads_the_spliced_result() -> None:
    client = modern_client()
    server = modern_server()
    client.send_request("tools/call", {"name": "echo"})
    call = one(server.receive_data(client.data_to_send()), RequestReceived)
    server.send_result(call.request_id, {"content": [{"type": "text", "text": "hi"}]})
    response = one(client.receive_data(server.data_to_send()), ResponseReceived)
    assert response.result.result_type == "complete"
    assert response.result.meta == {META_SERVER_INFO: server.config.server_info_wire}


# ---------------------------------------------------------------- the envelope cache


@pytest.mark.parametrize("values", [(1, True, 1.0), (0, False, 0.0, -0.0)])
def test_envelope_declarations_equal_in_python_stay_apart(values: tuple[Any, ...]) -> None:
    """1 == True == 1.0 in Python, but they are three JSON values: each request's
    context holds the value its own envelope declared, of its own type."""
    server = modern_server()
    for value in (*values, *values):
        caps = {"experimental": {"x": {"v": value}}}
        params = {"name": "echo", "_meta": meta(caps=caps)}
        call = one(feed(server, request(1, "tools/call", params)), RequestReceived)
        got = call.context.client_capabilities.experimental["x"]["v"]
        assert type(got) is type(value) and repr(got) == repr(value)
        server.send_result(1, {"content": []})
        server.data_to_send()
