"""Every message either engine emits validates against the official schema of its revision.

A full conversation runs back to back through `ConnectionPair` for each revision
(pinned) and for `auto`; the tap splits the wire into lines, and each message is
checked with `tests.schema_check.validate_message`. Request methods are tracked
by (sender, id) so every result is checked against its own result definition.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_core import (
    ClientConfig,
    ErrorReceived,
    Event,
    ProgressReceived,
    RequestCancelled,
    RequestReceived,
    ResponseIgnored,
    ResponseReceived,
)
from mcp_core.testing import ConnectionPair, default_server_config
from tests.schema_check import validate_message

from .engine_support import LEGACY, MODERN, of_type, one

TOOL = {
    "name": "echo",
    "description": "Echo.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}
ANSWERS: dict[str, dict[str, Any]] = {
    "tools/list": {"tools": [TOOL], "nextCursor": "page-2"},
    "tools/call": {"content": [{"type": "text", "text": "hi"}], "isError": False},
    "prompts/list": {"prompts": [{"name": "greet", "arguments": [{"name": "who"}]}]},
    "prompts/get": {
        "description": "d",
        "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
    },
    "resources/list": {"resources": [{"uri": "file:///a.txt", "name": "a"}]},
    "resources/templates/list": {
        "resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "files"}]
    },
    "resources/read": {
        "contents": [{"uri": "file:///a.txt", "text": "A", "mimeType": "text/plain"}]
    },
    "completion/complete": {"completion": {"values": ["alice"], "total": 1, "hasMore": False}},
    "resources/subscribe": {},
    "resources/unsubscribe": {},
    # answered by the client (legacy)
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "sampled"},
        "model": "m-1",
        "stopReason": "endTurn",
    },
    "roots/list": {"roots": [{"uri": "file:///root", "name": "root"}]},
    "elicitation/create": {"action": "accept", "content": {"name": "Ada"}},
}
CLIENT_REQUESTS: list[tuple[str, dict[str, Any] | None]] = [
    ("tools/list", None),
    ("tools/list", {"cursor": "page-2"}),
    ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    ("prompts/list", None),
    ("prompts/get", {"name": "greet", "arguments": {"who": "you"}}),
    ("resources/list", None),
    ("resources/templates/list", None),
    ("resources/read", {"uri": "file:///a.txt"}),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "a"}},
    ),
]
ELICIT_PARAMS = {
    "message": "Your name?",
    "requestedSchema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
}
CLIENT_CAPS = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}


class Wire:
    """Records and validates every message of a conversation."""

    def __init__(self) -> None:
        self.revision: str | None = None
        self.pending: list[tuple[str, dict[str, Any]]] = []
        self.methods: dict[tuple[str, Any], str] = {}
        self.checked: list[tuple[str, str]] = []

    def tap(self, direction: str, data: bytes) -> None:
        assert data.endswith(b"\n")
        sender = "client" if direction == "client->server" else "server"
        for raw in data.split(b"\n"):
            if raw.strip():
                msg = json.loads(raw)
                if "method" in msg and "id" in msg:
                    self.methods[(sender, msg["id"])] = msg["method"]
                self.pending.append((sender, msg))
                if self.revision is not None:
                    self.flush()

    def flush(self) -> None:
        assert self.revision is not None
        for sender, msg in self.pending:
            peer = "server" if sender == "client" else "client"
            answered = None
            if "method" not in msg:
                answered = self.methods.get((peer, msg.get("id")))
            request_method = answered if "result" in msg else None
            # The discover probe of "auto" is judged by the revision it asked for.
            revision = self.revision
            if "server/discover" in (msg.get("method"), answered):
                revision = MODERN
            validate_message(msg, revision, sender=sender, request_method=request_method)  # type: ignore[arg-type]
            outcome = "result" if "result" in msg else "error"
            if answered is None and "error" in msg:
                answered = str(msg["error"]["code"])
            kind = msg.get("method") or f"{outcome}:{answered}"
            self.checked.append((sender, kind))
        self.pending.clear()


def answer_server(pair: ConnectionPair, events: list[Event]) -> None:
    for e in of_type(events, RequestReceived):
        pair.server.send_progress(e.request_id, 0.5, 1.0, "half way")
        pair.server.send_result(e.request_id, dict(ANSWERS[e.method]))


def answer_client(pair: ConnectionPair, events: list[Event]) -> None:
    for e in of_type(events, RequestReceived):
        pair.client.send_result(e.request_id, dict(ANSWERS[e.method]))


def converse(mode: str) -> tuple[Wire, ConnectionPair]:
    wire = Wire()
    pair = ConnectionPair(
        default_server_config(instructions="Be brief.", server_info={"title": "Test Server"}),
        ClientConfig(mode=mode, capabilities=CLIENT_CAPS, log_level="debug"),
        tap=wire.tap,
    )
    pair.connect()
    wire.revision = pair.client.protocol_version
    wire.flush()
    legacy = pair.client.protocol_version in LEGACY
    revision = pair.client.protocol_version

    # Every client request kind, each answered (with progress first).
    for method, params in CLIENT_REQUESTS:
        pair.client.send_request(method, params, progress=True)
        _, server_events = pair.pump()
        answer_server(pair, server_events)
        client_events, _ = pair.pump()
        assert one(client_events, ResponseReceived).method == method
        assert of_type(client_events, ProgressReceived)

    # An error answer, and an automatic one for an unknown method.
    rid = pair.client.send_request("tools/call", {"name": "missing"})
    _, server_events = pair.pump()
    pair.server.send_error(one(server_events, RequestReceived).request_id, -32602, "Unknown tool")
    client_events, _ = pair.pump()
    assert one(client_events, ErrorReceived).request_id == rid
    pair.server.receive_data(b'{"jsonrpc":"2.0","id":"bogus","method":"no/such/method"}\n')
    client_events, _ = pair.pump()
    assert client_events == [ResponseIgnored("bogus", late=False)]

    # A cancelled request.
    rid = pair.client.send_request("tools/call", {"name": "slow"})
    pair.pump()
    pair.client.cancel_request(rid, "too slow")
    _, server_events = pair.pump()
    assert of_type(server_events, RequestCancelled)

    if legacy:
        legacy_extras(pair, revision)  # type: ignore[arg-type]
    else:
        modern_extras(pair)
    wire.flush()
    return wire, pair


def legacy_extras(pair: ConnectionPair, revision: str) -> None:
    pair.client.send_request("ping")
    pair.client.send_request("logging/setLevel", {"level": "info"})
    pair.client.send_request("resources/subscribe", {"uri": "file:///a.txt"})
    pair.client.send_request("resources/unsubscribe", {"uri": "file:///a.txt"})
    pair.client.send_notification("notifications/roots/list_changed")
    _, server_events = pair.pump()
    answer_server(pair, server_events)
    pair.pump()
    pair.server.send_request("ping")
    pair.server.send_request(
        "sampling/createMessage",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 20,
        },
    )
    pair.server.send_request("roots/list")
    if revision not in ("2024-11-05", "2025-03-26"):
        pair.server.send_request("elicitation/create", ELICIT_PARAMS)
    pair.server.send_log("warning", {"disk": "low"}, logger="fs")
    pair.server.send_notification("notifications/tools/list_changed")
    pair.server.send_notification("notifications/prompts/list_changed")
    pair.server.send_notification("notifications/resources/list_changed")
    pair.server.send_notification("notifications/resources/updated", {"uri": "file:///a.txt"})
    client_events, first = pair.pump()
    answer_client(pair, client_events)
    _, server_events = pair.pump()
    server_events = first + server_events
    expected = 4 if revision not in ("2024-11-05", "2025-03-26") else 3
    assert len(of_type(server_events, ResponseReceived)) == expected


def modern_extras(pair: ConnectionPair) -> None:
    # A request-scoped log message, then a multi-round-trip call.
    pair.client.send_request("tools/call", {"name": "echo", "arguments": {"text": "log"}})
    _, server_events = pair.pump()
    call = one(server_events, RequestReceived)
    assert pair.server.send_log("info", "working", related_request_id=call.request_id)
    pair.server.send_input_required(
        call.request_id,
        {"who": {"method": "elicitation/create", "params": ELICIT_PARAMS}},
        state="opaque-state",
    )
    client_events, _ = pair.pump()
    answer_client(pair, client_events)
    _, server_events = pair.pump()
    retry = one(server_events, RequestReceived)
    assert retry.context.request_state == "opaque-state"
    pair.server.send_result(retry.request_id, dict(ANSWERS["tools/call"]))
    client_events, _ = pair.pump()
    assert one(client_events, ResponseReceived).method == "tools/call"
    # An unsupported version, from a raw client on the same stream.
    pair.server.receive_data(
        b'{"jsonrpc":"2.0","id":"v","method":"tools/list","params":{"_meta":'
        b'{"io.modelcontextprotocol/protocolVersion":"2099-01-01",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}}}\n'
    )
    pair.pump()


MODES = [*LEGACY, MODERN, "auto"]


@pytest.mark.parametrize("mode", MODES)
def test_every_emitted_message_validates(mode: str) -> None:
    wire, pair = converse(mode)
    expected_revision = MODERN if mode == "auto" else mode
    assert pair.client.protocol_version == pair.server.protocol_version == expected_revision
    kinds = {kind for _, kind in wire.checked}
    # The conversation really covered the ground it claims to.
    for method, _ in CLIENT_REQUESTS:
        assert method in kinds and f"result:{method}" in kinds
    assert {"notifications/progress", "notifications/cancelled", "error:tools/call"} <= kinds
    assert "error:-32601" in kinds
    if expected_revision in LEGACY:
        assert {"initialize", "result:initialize", "notifications/initialized", "ping"} <= kinds
        assert {"result:ping", "result:sampling/createMessage", "result:roots/list"} <= kinds
        assert {"notifications/message", "notifications/resources/updated"} <= kinds
    else:
        assert "initialize" not in kinds
        assert {"notifications/message", "error:-32022"} <= kinds
    if mode == "auto":
        assert {"server/discover", "result:server/discover"} <= kinds
    assert len(wire.checked) >= 35


def test_schema_check_really_rejects_what_the_engine_must_not_send() -> None:
    # Guard against a validator that accepts anything.
    with pytest.raises(AssertionError):
        validate_message(
            {"jsonrpc": "2.0", "id": 1, "result": {"tools": "x"}},
            "2025-11-25",
            sender="server",
            request_method="tools/list",
        )
    with pytest.raises(AssertionError):
        validate_message({"jsonrpc": "2.0", "id": 1, "method": "ping"}, MODERN, sender="client")
