"""The HTTP client's side of authorization, sans-IO: with `hold_challenges`, a 401 or
a 403 `insufficient_scope` holds the request (`AuthorizationChallenged`) until the
embedder has a token (`retry_challenged`, with the new `authorization` on the wire)
or gives up (`fail_challenged`); each kind of challenge is retried once per request.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_core import ClientConfig, ClientConnection, Event, RequestFailed, ResponseReceived
from mcp_core.http import AuthorizationChallenged, HTTPClientEndpoint, HTTPRequest

MODERN = "2026-07-28"
CHALLENGE_401 = 'www-authenticate: Bearer resource_metadata="https://example.test/prm"\r\n'
CHALLENGE_403 = 'www-authenticate: Bearer error="insufficient_scope", scope="files:write"\r\n'


def client(*, hold: bool = True) -> tuple[HTTPClientEndpoint, ClientConnection]:
    mcp = ClientConnection(ClientConfig(mode=MODERN))
    endpoint = HTTPClientEndpoint(
        mcp, host="example.test", headers=[("authorization", "Bearer static")]
    )
    endpoint.hold_challenges = hold
    mcp.connect()
    return endpoint, mcp


def send(endpoint: HTTPClientEndpoint, response: bytes) -> tuple[bytes, list[Event]]:
    """Start the one queued request on a new connection and answer it."""
    [request] = endpoint.pump().requests
    return answer(endpoint, request, response)


def answer(
    endpoint: HTTPClientEndpoint, request: HTTPRequest, response: bytes
) -> tuple[bytes, list[Event]]:
    conn = endpoint.new_connection()
    assert conn.start(request)
    wire = conn.data_to_send()
    return wire, conn.receive_data(response)


def refused(status: int, challenge: str) -> bytes:
    body = b'{"error":"invalid_token"}'
    return (
        f"HTTP/1.1 {status} No\r\ncontent-type: application/json\r\n{challenge}"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body


def ok(rid: Any) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}).encode()
    return (
        f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body


def authorization_on(wire: bytes) -> list[bytes]:
    head = wire.split(b"\r\n\r\n")[0].split(b"\r\n")
    return [line for line in head if line.lower().startswith(b"authorization:")]


def test_a_401_holds_the_request_until_retried_with_the_new_token() -> None:
    endpoint, mcp = client()
    rid = mcp.send_request("tools/list")
    wire, events = send(endpoint, refused(401, CHALLENGE_401))
    assert authorization_on(wire) == [b"authorization: Bearer static"]
    [held] = events
    assert isinstance(held, AuthorizationChallenged)
    assert (held.status, held.method, held.request_id) == (401, "tools/list", rid)
    assert ("www-authenticate", 'Bearer resource_metadata="https://example.test/prm"') in (
        held.headers
    )
    assert mcp.awaiting(rid) and not endpoint.pump()  # held: nothing failed, nothing sent
    endpoint.authorization = "Bearer fresh"
    endpoint.retry_challenged()
    wire, events = send(endpoint, ok(rid))
    # The current token replaces the one the request was queued with.
    assert authorization_on(wire) == [b"authorization: Bearer fresh"]
    assert any(isinstance(e, ResponseReceived) and e.request_id == rid for e in events)


def test_each_kind_of_challenge_is_retried_once() -> None:
    endpoint, mcp = client()
    rid = mcp.send_request("tools/list")
    _, events = send(endpoint, refused(401, CHALLENGE_401))
    assert isinstance(events[0], AuthorizationChallenged)
    endpoint.retry_challenged()
    # After the 401's retry, a 403 insufficient_scope is a step-up: held once more.
    _, events = send(endpoint, refused(403, CHALLENGE_403))
    [held] = events
    assert isinstance(held, AuthorizationChallenged) and held.status == 403
    endpoint.retry_challenged()
    _, events = send(endpoint, refused(403, CHALLENGE_403))
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid and "HTTP 403" in failed.message


def test_a_403_that_is_not_insufficient_scope_is_no_challenge() -> None:
    endpoint, mcp = client()
    rid = mcp.send_request("tools/list")
    _, events = send(endpoint, refused(403, 'www-authenticate: Bearer error="invalid_token"\r\n'))
    assert not [e for e in events if isinstance(e, AuthorizationChallenged)]
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid


def test_without_hold_challenges_a_401_fails_the_request() -> None:
    endpoint, mcp = client(hold=False)
    rid = mcp.send_request("tools/list")
    _, events = send(endpoint, refused(401, CHALLENGE_401))
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid and "HTTP 401" in failed.message


def test_fail_challenged_fails_the_held_requests_with_the_code_given() -> None:
    endpoint, mcp = client()
    first = mcp.send_request("tools/list")
    second = mcp.send_request("prompts/list")
    requests = endpoint.pump().requests
    for request in requests:
        _, events = answer(endpoint, request, refused(401, CHALLENGE_401))
        assert isinstance(events[0], AuthorizationChallenged)
    endpoint.fail_challenged("authorization failed: no", -32010)
    events = endpoint.pump().events
    assert sorted((e.request_id, e.code) for e in events if isinstance(e, RequestFailed)) == [
        (first, -32010),
        (second, -32010),
    ]
    assert not mcp.awaiting(first) and not mcp.awaiting(second)
