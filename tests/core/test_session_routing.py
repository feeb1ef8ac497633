"""Sessions shared by two endpoints (two processes), sans-IO: `SharedSessionEndpoint`.

No store and no loop: the test plays the adapter, moving a snapshot from one
endpoint to the other and forwarding a client's answer by hand.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from mcp_core import (
    LocalProtocolError,
    RequestReceived,
    ResponseReceived,
    ServerConnection,
)
from mcp_core.http import (
    MCPEvent,
    RequestHead,
    SessionNamed,
    SessionOpened,
    SharedSessionEndpoint,
    tag_request_ids,
    tagged_origin,
)
from mcp_core.testing import default_server_config

VERSION = "2025-11-25"
_ids = itertools.count()


def endpoint() -> SharedSessionEndpoint:
    return SharedSessionEndpoint(
        default_server_config(),
        new_session_id=lambda: f"s{next(_ids)}",
        host_policy=None,
        response_mode="json",
    )


def post(ep: SharedSessionEndpoint, message: Any, session_id: str | None = None) -> Any:
    headers = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", VERSION),
    ]
    if session_id is not None:
        headers.append(("mcp-session-id", session_id))
    exchange = ep.new_exchange()
    events = exchange.receive_head(RequestHead("POST", "/mcp", headers))
    events += exchange.receive_body(json.dumps(message).encode())
    events += exchange.receive_end()
    return exchange, events


def initialize(ep: SharedSessionEndpoint) -> SessionOpened:
    params = {
        "protocolVersion": VERSION,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    _, events = post(ep, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    (opened,) = [e for e in events if isinstance(e, SessionOpened)]
    return opened


def test_an_initialize_answer_waits_for_release() -> None:
    ep = endpoint()
    opened = initialize(ep)
    assert opened.exchange.response is None  # held: the record is not written yet
    ep.release(opened.exchange)
    status, headers = opened.exchange.response or (0, [])
    assert status == 200
    assert ("mcp-session-id", opened.session_id) in headers
    assert json.loads(opened.exchange.data_to_send())["result"]["protocolVersion"] == VERSION


def test_a_refused_held_initialize_ends_the_session() -> None:
    ep = endpoint()
    opened = initialize(ep)
    ep.refuse(opened.exchange, 503, "session store unavailable")
    assert opened.exchange.response is not None and opened.exchange.response[0] == 503
    body = json.loads(opened.exchange.data_to_send())
    assert body["id"] == 0 and body["error"]["message"] == "session store unavailable"
    assert opened.session_id not in ep.sessions


def test_a_session_moves_and_the_answer_is_forwarded_to_the_asker() -> None:
    a, b = endpoint(), endpoint()
    opened = initialize(a)
    a.release(opened.exchange)
    sid = opened.session_id
    snapshot = opened.connection.snapshot()

    # A request lands on B, which does not hold the session: parked, named.
    exchange, events = post(b, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, sid)
    (named,) = events
    assert isinstance(named, SessionNamed)
    assert (named.held, named.has_request, named.method) == (False, True, "POST")
    assert exchange.response is None
    restored = ServerConnection.restore(b.config, snapshot)
    tag_request_ids(restored, "procB.1-")
    assert b.adopt(sid, restored)
    with pytest.raises(LocalProtocolError):
        b.adopt(sid, restored)
    ran = b.proceed(exchange)
    (request,) = [e for e in ran if isinstance(e, MCPEvent)]
    assert isinstance(request.event, RequestReceived) and request.session_id == sid

    # B asks the client; the id names B.
    rid = restored.send_request(
        "elicitation/create",
        {"message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}},
        related_request_id=1,
    )
    assert rid == "procB.1-0" and tagged_origin(rid) == "procB"
    b.pump(restored)

    # The answer lands on A: only a response, so A forwards it and answers 202.
    answer = {"jsonrpc": "2.0", "id": rid, "result": {"action": "decline"}}
    exchange, events = post(a, answer, sid)
    (named,) = events
    assert isinstance(named, SessionNamed) and not named.has_request and named.held
    assert tagged_origin(named.messages[0]["id"]) == "procB"
    a.answer(exchange)
    assert exchange.response is not None and exchange.response[0] == 202
    delivered = b.deliver(sid, named.payload())
    (response,) = [e.event for e in delivered if isinstance(e, MCPEvent)]
    assert isinstance(response, ResponseReceived) and response.request_id == rid


def test_untagged_ids_name_no_process() -> None:
    assert tagged_origin(7) is None
    assert tagged_origin("plain") is None
    with pytest.raises(LocalProtocolError):
        tag_request_ids(ServerConnection(default_server_config()), "no-separator")
