"""Sampling (with tools and toolChoice in 2025-11-25) and roots: legacy
server-to-client requests, their 2026-07-28 form inside `inputRequests`, and
the capability checks on both sides. Every emitted message is schema-validated.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_core import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    ClientConfig,
    ClientConnection,
    LocalProtocolError,
    MessageRejected,
    NotificationReceived,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
)
from mcp_core.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ListRootsResult,
    TextContent,
    ToolUseContent,
)
from tests.core.interaction_support import (
    MODERN,
    Wire,
    drain,
    envelope,
    inject,
    legacy_wire,
    modern_wire,
    of_type,
    one,
    raw_legacy_client,
)

SAMPLING_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
T0 = 500.0

SAMPLE = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
    "maxTokens": 20,
    "systemPrompt": "Be brief.",
    "modelPreferences": {"hints": [{"name": "small"}], "speedPriority": 0.8},
}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather for a city",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
SAMPLE_WITH_TOOLS = {**SAMPLE, "tools": [WEATHER_TOOL], "toolChoice": {"mode": "auto"}}
ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": "4"},
    "model": "small-1",
    "stopReason": "endTurn",
}
TOOL_USE_ANSWER = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "call-1", "name": "get_weather", "input": {"city": "Oslo"}},
    ],
    "model": "small-1",
    "stopReason": "toolUse",
}
ROOTS = {"roots": [{"uri": "file:///home/ann/project", "name": "project"}]}


def start_call(w: Wire) -> int | str:
    w.client.send_request("tools/call", {"name": "think", "arguments": {}})
    _, server_events = w.pump()
    return one(server_events, RequestReceived).request_id


# ---------------------------------------------------------------------- legacy sampling


@pytest.mark.parametrize("revision", SAMPLING_REVISIONS)
def test_legacy_sampling_round_trip(revision: str) -> None:
    w = legacy_wire(revision, {"sampling": {}})
    call = start_call(w)
    sid = w.server.send_request("sampling/createMessage", SAMPLE, related_request_id=call)
    client_events, _ = w.pump()
    event = one(client_events, RequestReceived)
    assert event.method == "sampling/createMessage"
    assert isinstance(event.params, CreateMessageRequestParams)
    assert event.params.max_tokens == 20
    assert event.params.system_prompt == "Be brief."
    assert event.params.messages[0].content.text == "What is 2+2?"
    assert w.client.send_result(event.request_id, ANSWER)
    _, server_events = w.pump()
    got = one(server_events, ResponseReceived)
    assert got.request_id == sid
    assert isinstance(got.result, CreateMessageResult)
    assert got.result.model == "small-1"
    assert got.result.content_as_list == [TextContent(type="text", text="4")]


def test_sampling_with_tools_and_tool_choice_in_2025_11_25() -> None:
    w = legacy_wire("2025-11-25", {"sampling": {"tools": {}}})
    call = start_call(w)
    sid = w.server.send_request(
        "sampling/createMessage", SAMPLE_WITH_TOOLS, related_request_id=call
    )
    client_events, _ = w.pump()
    event = one(client_events, RequestReceived)
    assert event.params.tools[0].name == "get_weather"
    assert event.params.tool_choice.mode == "auto"
    assert w.last("server")["params"]["toolChoice"] == {"mode": "auto"}
    w.client.send_result(event.request_id, TOOL_USE_ANSWER)
    _, server_events = w.pump()
    got = one(server_events, ResponseReceived)
    assert got.request_id == sid
    tool_use = got.result.content_as_list[1]
    assert isinstance(tool_use, ToolUseContent)
    assert (tool_use.id, tool_use.name, tool_use.input) == (
        "call-1",
        "get_weather",
        {"city": "Oslo"},
    )
    assert got.result.stop_reason == "toolUse"

    # The loop continues with the tool result, still valid on the wire.
    follow_up = {
        **SAMPLE_WITH_TOOLS,
        "messages": [
            *SAMPLE["messages"],
            {"role": "assistant", "content": TOOL_USE_ANSWER["content"]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "toolUseId": "call-1",
                        "content": [{"type": "text", "text": "12 C, rain"}],
                    }
                ],
            },
        ],
        "toolChoice": {"mode": "none"},
    }
    w.server.send_request("sampling/createMessage", follow_up, related_request_id=call)
    client_events, _ = w.pump()
    event = one(client_events, RequestReceived)
    assert event.params.tool_choice.mode == "none"
    w.client.send_result(event.request_id, ANSWER)
    _, server_events = w.pump()
    assert one(server_events, ResponseReceived).result.stop_reason == "endTurn"


@pytest.mark.parametrize(
    ("caps", "params", "allowed"),
    [
        ({}, SAMPLE, False),
        ({"roots": {}}, SAMPLE, False),
        ({"sampling": {}}, SAMPLE, True),
        ({"sampling": {}}, SAMPLE_WITH_TOOLS, False),
        ({"sampling": {"context": {}}}, SAMPLE_WITH_TOOLS, False),
        ({"sampling": {"tools": {}}}, SAMPLE_WITH_TOOLS, True),
    ],
)
def test_legacy_server_sends_sampling_only_as_declared(
    caps: dict[str, Any], params: dict[str, Any], allowed: bool
) -> None:
    w = legacy_wire("2025-11-25", caps)
    call = start_call(w)
    if not allowed:
        with pytest.raises(LocalProtocolError, match="did not declare"):
            w.server.send_request("sampling/createMessage", params, related_request_id=call)
        assert w.server.data_to_send() == b""
        return
    w.server.send_request("sampling/createMessage", params, related_request_id=call)
    client_events, _ = w.pump()
    assert one(client_events, RequestReceived).method == "sampling/createMessage"


TOOL_CHOICE_ONLY = {**SAMPLE, "toolChoice": {"mode": "required"}}


def test_server_refuses_tool_choice_without_sampling_tools() -> None:
    w = legacy_wire("2025-11-25", {"sampling": {}})
    call = start_call(w)
    with pytest.raises(LocalProtocolError):
        w.server.send_request("sampling/createMessage", TOOL_CHOICE_ONLY, related_request_id=call)


def _server_request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


@pytest.mark.parametrize(
    ("caps", "method", "params", "code", "message"),
    [
        ({}, "sampling/createMessage", SAMPLE, METHOD_NOT_FOUND, "Sampling not supported"),
        (
            {"elicitation": {}},
            "sampling/createMessage",
            SAMPLE_WITH_TOOLS,
            METHOD_NOT_FOUND,
            "Sampling not supported",
        ),
        (
            {"sampling": {}},
            "sampling/createMessage",
            SAMPLE_WITH_TOOLS,
            INVALID_PARAMS,
            "Sampling with tools not supported",
        ),
        ({}, "roots/list", None, METHOD_NOT_FOUND, "Roots not supported"),
        ({"sampling": {}}, "roots/list", None, METHOD_NOT_FOUND, "Roots not supported"),
    ],
)
def test_client_refuses_undeclared_server_requests(
    caps: dict[str, Any], method: str, params: Any, code: int, message: str
) -> None:
    client = raw_legacy_client("2025-11-25", caps)
    events = inject(client, _server_request(7, method, params))
    assert not of_type(events, RequestReceived)
    rejected = one(events, MessageRejected)
    assert (rejected.code, rejected.message) == (code, message)
    assert drain(client, "2025-11-25") == [
        {"jsonrpc": "2.0", "id": 7, "error": {"code": code, "message": message}}
    ]


def test_client_refuses_tool_choice_without_sampling_tools() -> None:
    client = raw_legacy_client("2025-11-25", {"sampling": {}})
    events = inject(client, _server_request(8, "sampling/createMessage", TOOL_CHOICE_ONLY))
    assert not of_type(events, RequestReceived)
    [answer] = drain(client, "2025-11-25")
    assert answer["error"]["code"] == INVALID_PARAMS


def test_client_with_sampling_tools_accepts_tools() -> None:
    client = raw_legacy_client("2025-11-25", {"sampling": {"tools": {}}})
    event = one(
        inject(client, _server_request(9, "sampling/createMessage", SAMPLE_WITH_TOOLS)),
        RequestReceived,
    )
    client.send_result(event.request_id, TOOL_USE_ANSWER)
    [answer] = drain(client, "2025-11-25")
    assert answer == {"jsonrpc": "2.0", "id": 9, "result": TOOL_USE_ANSWER}


# ---------------------------------------------------------------------- legacy roots


@pytest.mark.parametrize("revision", SAMPLING_REVISIONS)
def test_legacy_roots_round_trip(revision: str) -> None:
    w = legacy_wire(revision, {"roots": {"listChanged": True}})
    sid = w.server.send_request("roots/list")
    client_events, _ = w.pump()
    event = one(client_events, RequestReceived)
    assert (event.method, event.params) == ("roots/list", None)
    w.client.send_result(event.request_id, ListRootsResult(**ROOTS))
    _, server_events = w.pump()
    got = one(server_events, ResponseReceived)
    assert got.request_id == sid
    assert isinstance(got.result, ListRootsResult)
    assert [(r.uri, r.name) for r in got.result.roots] == [("file:///home/ann/project", "project")]
    assert w.last("client")["result"] == ROOTS

    # The client tells the server the roots changed.
    w.client.send_notification("notifications/roots/list_changed")
    _, server_events = w.pump()
    assert one(server_events, NotificationReceived).method == "notifications/roots/list_changed"


def test_legacy_server_refuses_roots_list_when_undeclared() -> None:
    w = legacy_wire("2025-11-25", {"sampling": {}})
    with pytest.raises(LocalProtocolError, match="Roots not supported"):
        w.server.send_request("roots/list")
    assert w.server.data_to_send() == b""


def test_roots_list_changed_needs_the_list_changed_capability() -> None:
    w = legacy_wire("2025-11-25", {"roots": {}})
    with pytest.raises(LocalProtocolError):
        w.client.send_notification("notifications/roots/list_changed")
    assert w.client.data_to_send() == b""


# ---------------------------------------------------------------------- 2026-07-28


def test_2026_server_sends_no_sampling_or_roots_requests() -> None:
    w = modern_wire({"sampling": {}, "roots": {}})
    with pytest.raises(LocalProtocolError):
        w.server.send_request("sampling/createMessage", SAMPLE)
    with pytest.raises(LocalProtocolError):
        w.server.send_request("roots/list")
    assert w.server.data_to_send() == b""


def test_2026_sampling_with_tools_and_roots_as_input_requests() -> None:
    w = modern_wire({"sampling": {"tools": {}}, "roots": {}})
    call = start_call(w)
    w.server.send_input_required(
        call,
        {
            "llm": {"method": "sampling/createMessage", "params": SAMPLE_WITH_TOOLS},
            "where": {"method": "roots/list"},
        },
        state="s",
        wall_time=T0,
    )
    client_events, _ = w.pump()
    llm, where = of_type(client_events, RequestReceived)
    assert llm.method == "sampling/createMessage"
    assert isinstance(llm.params, CreateMessageRequestParams)
    assert llm.params.tools[0].name == "get_weather"
    assert llm.params.tool_choice.mode == "auto"
    assert (where.method, where.params) == ("roots/list", None)
    w.client.send_result(where.request_id, ROOTS)
    w.client.send_result(llm.request_id, TOOL_USE_ANSWER)
    _, server_events = w.pump()
    retry = one(server_events, RequestReceived)
    answers = retry.context.input_responses
    assert isinstance(answers["llm"], CreateMessageResult)
    assert isinstance(answers["llm"].content_as_list[1], ToolUseContent)
    assert isinstance(answers["where"], ListRootsResult)
    assert retry.context.request_state == "s"
    assert w.last("client")["params"]["inputResponses"] == {"llm": TOOL_USE_ANSWER, "where": ROOTS}


@pytest.mark.parametrize(
    ("caps", "ask", "message"),
    [
        ({}, {"method": "sampling/createMessage", "params": SAMPLE}, "Sampling not supported"),
        (
            {"sampling": {}},
            {"method": "sampling/createMessage", "params": SAMPLE_WITH_TOOLS},
            "Sampling with tools not supported",
        ),
        ({"sampling": {}}, {"method": "roots/list"}, "Roots not supported"),
    ],
)
def test_2026_server_asks_only_for_declared_capabilities(
    caps: dict[str, Any], ask: dict[str, Any], message: str
) -> None:
    w = modern_wire(caps)
    call = start_call(w)
    with pytest.raises(LocalProtocolError, match=message):
        w.server.send_input_required(call, {"q": ask}, wall_time=T0)
    assert w.server.data_to_send() == b""


def test_2026_capabilities_are_judged_per_request() -> None:
    """A capability declared on one request says nothing about another one."""
    w = modern_wire({"sampling": {}})
    call = start_call(w)
    # A raw request on the same connection declaring nothing.
    inject(
        w.server,
        {
            "jsonrpc": "2.0",
            "id": "bare",
            "method": "tools/call",
            "params": {"name": "think", "_meta": envelope({})},
        },
    )
    ask = {"q": {"method": "sampling/createMessage", "params": SAMPLE}}
    with pytest.raises(LocalProtocolError, match="Sampling not supported"):
        w.server.send_input_required("bare", ask, wall_time=T0)
    assert w.server.send_input_required(call, ask, wall_time=T0)


@pytest.mark.parametrize(
    ("caps", "ask", "code", "message"),
    [
        (
            {},
            {"method": "sampling/createMessage", "params": SAMPLE},
            METHOD_NOT_FOUND,
            "Sampling not supported",
        ),
        (
            {"sampling": {}},
            {"method": "sampling/createMessage", "params": SAMPLE_WITH_TOOLS},
            INVALID_PARAMS,
            "Sampling with tools not supported",
        ),
        ({"sampling": {}}, {"method": "roots/list"}, METHOD_NOT_FOUND, "Roots not supported"),
    ],
)
def test_2026_client_fails_the_call_when_asked_for_an_undeclared_capability(
    caps: dict[str, Any], ask: dict[str, Any], code: int, message: str
) -> None:
    client = ClientConnection(ClientConfig(mode=MODERN, capabilities=caps))
    client.connect()
    call = client.send_request("tools/call", {"name": "think"})
    [sent] = drain(client, MODERN)
    interim = {"resultType": "input_required", "inputRequests": {"q": ask}}
    events = inject(client, {"jsonrpc": "2.0", "id": sent["id"], "result": interim})
    failed = one(events, RequestFailed)
    assert (failed.request_id, failed.code, failed.message) == (call, code, message)
    assert not of_type(events, RequestReceived)
    assert client.data_to_send() == b""
