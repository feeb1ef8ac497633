"""`WebSocketServerConnection(auth=...)`: the upgrade judged as an HTTP request is,
then the open connection held to its token. Pure bytes, no sockets.

The rules are the HTTP endpoint's (`mcp_core.auth`): metadata at the well-known
path, 401 with the challenge without a token, 401 `invalid_token`, 403
`insufficient_scope`, 503 when the verifier cannot decide; what is WebSocket's own
is the waiting 101 (`WebSocketTokenVerificationNeeded`), a tool scope refused as a
JSON-RPC error on the open socket, and the close (1008) once the token expired.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import (
    LocalProtocolError,
    RemoteProtocolError,
    RequestReceived,
    SessionStarted,
    State,
)
from mcp_core.auth import (
    AccessToken,
    InvalidToken,
    ProtectedResource,
    ResourceGuard,
    VerifierUnavailable,
)
from mcp_core.oauth import bearer_challenge
from mcp_core.testing import default_server_config
from mcp_core.websocket import (
    CLOSE_POLICY_VIOLATION,
    WebSocketAccepted,
    WebSocketRejected,
    WebSocketServerConnection,
    WebSocketTokenVerificationNeeded,
)
from tests.core.test_websocket import (
    Reader,
    frame_soup,
    of_type,
    one,
    split_response,
    text,
    upgrade_request,
)

RESOURCE = "http://127.0.0.1:8000/mcp"
ISSUER = "https://auth.example.com"
NOW = 1_800_000_000.0
TOKEN = "alice-token"


def guard(**options: Any) -> ResourceGuard:
    tool_scopes = {"write": ("files:write",)}

    def scopes_for(method: str, params: Any) -> tuple[str, ...]:
        if method == "tools/call" and isinstance(params, dict):
            return tool_scopes.get(params.get("name", ""), ())
        return ()

    resource = ProtectedResource(RESOURCE, [ISSUER], required_scopes=["mcp"], **options)
    return ResourceGuard(resource, scopes_for=scopes_for)


def claims(**changes: Any) -> AccessToken:
    values: dict[str, Any] = {
        "issuer": ISSUER,
        "subject": "alice",
        "audiences": (RESOURCE,),
        "scopes": frozenset({"mcp"}),
        "expires_at": NOW + 300,
    }
    values.update(changes)
    return AccessToken(**values)


def server(auth: ResourceGuard | ProtectedResource | None = None) -> WebSocketServerConnection:
    return WebSocketServerConnection(default_server_config(), auth=auth or guard())


def upgrade(token: str | None = TOKEN) -> bytes:
    extra = () if token is None else (f"Authorization: Bearer {token}",)
    return upgrade_request(extra=extra)


def opened(ws: WebSocketServerConnection, result: AccessToken | None = None) -> Reader:
    """Upgrade with TOKEN and verify it as `result`; the 101 is read."""
    [needed] = ws.receive_data(upgrade(), wall_time=NOW)
    assert isinstance(needed, WebSocketTokenVerificationNeeded)
    assert needed.token == TOKEN and needed.connection is ws
    assert ws.data_to_send() == b""  # the 101 waits for the verdict
    events = ws.receive_token_verification(result or claims(), wall_time=NOW)
    assert of_type(events, WebSocketAccepted)
    status, _, rest = split_response(ws.data_to_send())
    assert status == 101 and rest == b""
    return Reader()


def initialize(rid: int = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }


def ready(ws: WebSocketServerConnection, reader: Reader) -> None:
    ws.receive_data(text(initialize()), wall_time=NOW)
    ws.receive_data(text({"jsonrpc": "2.0", "method": "notifications/initialized"}), wall_time=NOW)
    assert ws.mcp.state == State.READY
    reader.read(ws.data_to_send())


def challenge(data: bytes) -> tuple[int, dict[str, str], Any]:
    status, headers, body = split_response(data)
    found = bearer_challenge(list(headers.items()))
    assert found is not None, headers
    return status, dict(found.params), json.loads(body)


# ============================================================ the upgrade


def test_no_token_is_401_with_the_challenge_and_no_upgrade() -> None:
    ws = server()
    events = ws.receive_data(upgrade(None), wall_time=NOW)
    assert one(events, WebSocketRejected).status == 401
    status, params, _ = challenge(ws.data_to_send())
    assert status == 401
    assert params == {
        "resource_metadata": "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp",
        "scope": "mcp",
    }
    assert ws.closed and ws.mcp.state in (State.CLOSED, State.ERROR)


def test_the_metadata_document_is_served_to_a_plain_get() -> None:
    ws = server(ProtectedResource(RESOURCE, [ISSUER]))  # a bare resource is accepted too
    ws.receive_data(
        b"GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n",
        wall_time=NOW,
    )
    status, headers, body = split_response(ws.data_to_send())
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body)["resource"] == RESOURCE
    assert ws.closed


def test_the_metadata_document_still_needs_an_allowed_host() -> None:
    ws = server()
    ws.receive_data(
        b"GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        wall_time=NOW,
    )
    assert split_response(ws.data_to_send())[0] == 421


@pytest.mark.parametrize(
    ("result", "status", "error"),
    [
        (InvalidToken("bad signature"), 401, "invalid_token"),
        (claims(audiences=("http://127.0.0.1:1/mcp",)), 401, "invalid_token"),
        (claims(issuer="https://other.example.com"), 401, "invalid_token"),
        (claims(expires_at=NOW - 600), 401, "invalid_token"),
        (claims(scopes=frozenset({"files:read"})), 403, "insufficient_scope"),
    ],
    ids=["refused", "another audience", "another issuer", "expired", "no required scope"],
)
def test_a_refused_token_gets_the_guards_answer(result: Any, status: int, error: str) -> None:
    ws = server()
    ws.receive_data(upgrade(), wall_time=NOW)
    events = ws.receive_token_verification(result, wall_time=NOW)
    assert one(events, WebSocketRejected).status == status
    got, params, body = challenge(ws.data_to_send())
    assert got == status and params["error"] == error and body["error"] == error
    assert ws.closed


def test_an_unavailable_verifier_is_503() -> None:
    ws = server()
    ws.receive_data(upgrade(), wall_time=NOW)
    ws.receive_token_verification(VerifierUnavailable("JWKS down"), wall_time=NOW)
    status, headers, _ = split_response(ws.data_to_send())
    assert status == 503 and headers["retry-after"] == "5"


def test_a_verified_token_is_remembered_by_the_shared_guard() -> None:
    shared = guard()
    opened(server(shared))
    second = server(shared)
    events = second.receive_data(upgrade(), wall_time=NOW)
    assert of_type(events, WebSocketAccepted) and not of_type(
        events, WebSocketTokenVerificationNeeded
    )
    assert second.mcp.principal == f"{ISSUER}#alice"


def test_frames_sent_before_the_101_wait_for_the_verdict() -> None:
    ws = server()
    ws.receive_data(upgrade() + text(initialize()), wall_time=NOW)
    assert ws.receive_data(text({"jsonrpc": "2.0", "id": 9, "method": "ping"}), wall_time=NOW) == []
    events = ws.receive_token_verification(claims(), wall_time=NOW)
    assert of_type(events, WebSocketAccepted) and of_type(events, SessionStarted)
    status, _, frames = split_response(ws.data_to_send())
    assert status == 101
    assert [m["id"] for m in Reader().read(frames).texts] == [0, 9]  # initialize, ping


def test_too_much_data_before_the_101_is_refused() -> None:
    ws = server()
    ws.receive_data(upgrade(), wall_time=NOW)
    ws.receive_data(b"x" * (ws.limits.max_header_bytes + 1), wall_time=NOW)
    assert split_response(ws.data_to_send())[0] == 400
    assert ws.receive_token_verification(claims(), wall_time=NOW) == []  # too late: ignored


def test_a_verdict_after_the_client_left_does_nothing() -> None:
    ws = server()
    ws.receive_data(upgrade(), wall_time=NOW)
    ws.receive_data(b"", wall_time=NOW)
    assert ws.closed
    assert ws.receive_token_verification(claims(), wall_time=NOW) == []
    assert ws.data_to_send() == b""


def test_misuse_is_a_local_error() -> None:
    with pytest.raises(LocalProtocolError, match="principal_of"):
        WebSocketServerConnection(
            default_server_config(), auth=guard(), principal_of=lambda head: "x"
        )
    ws = server()
    with pytest.raises(LocalProtocolError, match="wall_time"):
        ws.receive_data(upgrade())
    with pytest.raises(LocalProtocolError, match="pending"):
        ws.receive_token_verification(claims(), wall_time=NOW)


# ==================================================== the open connection


def test_the_connection_runs_as_the_tokens_principal() -> None:
    ws = server()
    opened(ws)
    assert ws.token is not None and ws.token.subject == "alice"
    assert ws.mcp.principal == f"{ISSUER}#alice"


def test_a_tool_scope_the_token_lacks_is_a_json_rpc_error() -> None:
    ws = server()
    reader = opened(ws)
    ready(ws, reader)
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "write"}}
    events = ws.receive_data(text(call), wall_time=NOW)
    assert not of_type(events, RequestReceived)  # never reached the server
    [answer] = reader.read(ws.data_to_send()).texts
    assert answer["id"] == 7 and answer["error"]["code"] == -32600
    data = answer["error"]["data"]
    assert data["error"] == "insufficient_scope" and data["status"] == 403
    assert 'scope="mcp files:write"' in data["www_authenticate"]
    # Other requests go on; a notification needs no scope.
    ok = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "read"}}
    assert of_type(ws.receive_data(text(ok), wall_time=NOW), RequestReceived)


def test_a_token_with_the_tool_scope_reaches_the_tool() -> None:
    ws = server()
    reader = opened(ws, claims(scopes=frozenset({"mcp", "files:write"})))
    ready(ws, reader)
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "write"}}
    assert of_type(ws.receive_data(text(call), wall_time=NOW), RequestReceived)


def test_a_message_after_the_token_expired_closes_with_1008() -> None:
    ws = server()
    reader = opened(ws)
    ready(ws, reader)
    later = NOW + 300 + 61  # past the expiry and the clock leeway
    ws.receive_data(text({"jsonrpc": "2.0", "id": 3, "method": "ping"}), wall_time=later)
    frames = reader.read(ws.data_to_send())
    assert frames.texts == [] and frames.close is not None
    assert frames.close[0] == CLOSE_POLICY_VIOLATION and "expired" in frames.close[1]
    assert ws.mcp.state in (State.CLOSED, State.ERROR)


# ======================================================================= robustness

auth_soup = st.lists(
    st.one_of(
        frame_soup.map(b"".join),
        st.sampled_from(
            [
                text(
                    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "write"}}
                ),
                text(
                    [
                        {
                            "jsonrpc": "2.0",
                            "id": 2,
                            "method": "tools/call",
                            "params": {"name": "write"},
                        }
                    ]
                ),
                text({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "write"}),
                text({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "write"}}),
            ]
        ),
    ),
    max_size=10,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(auth_soup, st.sampled_from([0.0, 400.0]))
def test_arbitrary_input_to_an_authenticated_connection_never_raises(
    chunks: list[bytes], later: float
) -> None:
    """Whatever arrives after the upgrade (scoped calls, batches, garbage, after the
    token expired or not), only `RemoteProtocolError` may escape and the layer stays
    consistent."""
    ws = server()
    opened(ws)
    for chunk in chunks:
        with contextlib.suppress(RemoteProtocolError):
            ws.receive_data(chunk, wall_time=NOW + later)
        ws.data_to_send()
        ws.check_invariants()
    ws.receive_data(b"", wall_time=NOW)
    ws.data_to_send()
    assert ws.mcp.state in (State.CLOSED, State.ERROR)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=80), max_size=6), st.booleans())
def test_arbitrary_bytes_while_the_verdict_is_awaited_never_raise(
    chunks: list[bytes], granted: bool
) -> None:
    ws = server()
    ws.receive_data(upgrade(), wall_time=NOW)
    for chunk in chunks:
        with contextlib.suppress(RemoteProtocolError):
            ws.receive_data(chunk, wall_time=NOW)
    with contextlib.suppress(RemoteProtocolError):
        ws.receive_token_verification(claims() if granted else InvalidToken("no"), wall_time=NOW)
    ws.data_to_send()
    ws.check_invariants()
