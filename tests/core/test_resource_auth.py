"""The resource server side of MCP authorization, in the core: raw HTTP/1.1 bytes in,
responses and events out, no sockets (the verifier's answer is given by the test)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from mcp_core import LocalProtocolError, RequestReceived
from mcp_core._http_server import HTTPServerConnection, HTTPServerEndpoint, MCPEvent
from mcp_core.auth import (
    PRM_WELL_KNOWN,
    AccessRefused,
    AccessToken,
    InvalidToken,
    ProtectedResource,
    ResourceGuard,
    TokenVerificationNeeded,
    VerifierUnavailable,
    bearer_token,
)
from mcp_core.oauth import bearer_challenge
from mcp_core.testing import default_server_config
from tests.core.test_http_server import (
    Response,
    http_request,
    init_params,
    modern_call,
    modern_headers,
    parse_responses,
    rpc,
)

RESOURCE = "http://localhost:8000/mcp"
ISSUER = "http://127.0.0.1:9000"
NOW = 1_900_000_000.0
INIT = rpc(0, "initialize", init_params())


def claims(**changes: Any) -> AccessToken:
    base: dict[str, Any] = {
        "issuer": ISSUER,
        "subject": "alice",
        "client_id": "app",
        "audiences": (RESOURCE,),
        "scopes": frozenset({"mcp"}),
        "expires_at": NOW + 600,
    }
    base.update(changes)
    return AccessToken(**base)


class Protected:
    """An endpoint with `auth=`, and helpers that play the verifier."""

    def __init__(self, **resource: Any) -> None:
        scopes_for = resource.pop("scopes_for", None)
        resource.setdefault("resource", RESOURCE)
        resource.setdefault("authorization_servers", [ISSUER])
        counter = itertools.count(1)
        self.guard = ResourceGuard(ProtectedResource(**resource), scopes_for=scopes_for)
        self.endpoint = HTTPServerEndpoint(
            default_server_config(),
            new_session_id=lambda: f"session-{next(counter)}",
            auth=self.guard,
        )
        self.verified: list[str] = []

    def send(
        self, data: bytes, answer: Any = None, *, wall_time: float = NOW
    ) -> tuple[list[Any], list[Response], HTTPServerConnection]:
        """Send one request; if the endpoint asks for a verification, answer `answer`."""
        http = self.endpoint.new_connection(now=0.0)
        events = http.receive_data(data, now=0.0, wall_time=wall_time)
        asks = [e for e in events if isinstance(e, TokenVerificationNeeded)]
        if asks:
            assert answer is not None, "the endpoint asked for a verification"
            [ask] = asks
            self.verified.append(ask.token)
            events += ask.exchange.receive_token_verification(answer, now=0.0, wall_time=wall_time)
        return events, parse_responses(http.data_to_send()), http


def bearer(token: str = "tok-alice", **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **extra}


def challenge_of(resp: Response) -> dict[str, str]:
    found = bearer_challenge([("www-authenticate", resp.headers["www-authenticate"])])
    assert found is not None
    return dict(found.params)


def received(events: list[Any]) -> MCPEvent:
    [ev] = [e for e in events if isinstance(e, MCPEvent) and isinstance(e.event, RequestReceived)]
    return ev


# ===================================================================== the metadata


def test_metadata_is_served_at_the_path_suffixed_and_the_root_location() -> None:
    server = Protected(required_scopes=["mcp"], resource_name="Files")
    for target in (f"{PRM_WELL_KNOWN}/mcp", PRM_WELL_KNOWN):
        events, [resp], _ = server.send(http_request("GET", target=target, accept=None))
        assert resp.status == 200, target
        assert resp.headers["content-type"] == "application/json"
        assert resp.json() == {
            "resource": RESOURCE,
            "authorization_servers": [ISSUER],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp"],
            "resource_name": "Files",
        }
        assert events == []  # no token was needed, none was asked about
    assert server.guard.resource.metadata_url == f"http://localhost:8000{PRM_WELL_KNOWN}/mcp"


def test_metadata_of_another_path_is_not_found() -> None:
    _, [resp], _ = Protected().send(http_request("GET", target=f"{PRM_WELL_KNOWN}/other"))
    assert resp.status == 404


# ======================================================================= challenges


def test_no_token_gets_401_pointing_at_the_metadata_with_the_scope() -> None:
    server = Protected(required_scopes=["mcp", "files:read"])
    events, [resp], _ = server.send(http_request(body=rpc(1, "initialize", init_params())))
    assert resp.status == 401
    params = challenge_of(resp)
    assert params == {
        "resource_metadata": f"http://localhost:8000{PRM_WELL_KNOWN}/mcp",
        "scope": "mcp files:read",
    }
    assert "error" not in resp.json()  # RFC 6750 3.1: no error code without credentials
    [refused] = [e for e in events if isinstance(e, AccessRefused)]
    assert refused.status == 401
    assert server.endpoint.sessions == {}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_every_method_needs_a_token(method: str) -> None:
    _, [resp], _ = Protected().send(http_request(method, headers={"Mcp-Session-Id": "x"}))
    assert resp.status == 401


def test_another_scheme_is_no_bearer_token() -> None:
    _, [resp], _ = Protected().send(
        http_request(body=rpc(1, "ping"), headers={"Authorization": "Basic dXNlcjpwdw=="})
    )
    assert resp.status == 401 and "error" not in challenge_of(resp)


@pytest.mark.parametrize(
    ("headers", "target"),
    [
        ([("Authorization", "Bearer a"), ("Authorization", "Bearer b")], "/mcp"),
        ([("Authorization", "Bearer not a token")], "/mcp"),
        ([("Authorization", "Bearer")], "/mcp"),
        ([], "/mcp?access_token=abc"),
    ],
)
def test_malformed_credentials_get_400_invalid_request(
    headers: list[tuple[str, str]], target: str
) -> None:
    events, [resp], _ = Protected().send(
        http_request(body=rpc(1, "ping"), headers=headers, target=target)
    )
    assert resp.status == 400
    assert resp.json()["error"] == "invalid_request"
    assert challenge_of(resp)["error"] == "invalid_request"
    assert not any(isinstance(e, TokenVerificationNeeded) for e in events)


def test_bearer_token_parsing() -> None:
    assert bearer_token([("authorization", "bearer abc.DEF-_~+/==")]) == "abc.DEF-_~+/=="
    assert bearer_token([("authorization", "Bearer   spaced")]) == "spaced"
    assert bearer_token([]) is None


def test_an_overlong_token_is_refused_without_asking_the_verifier() -> None:
    server = Protected(max_token_bytes=16)
    _, [resp], _ = server.send(http_request(body=rpc(1, "ping"), headers=bearer("x" * 17)))
    assert resp.status == 401 and challenge_of(resp)["error"] == "invalid_token"
    assert server.verified == []


def test_challenge_values_cannot_split_the_header() -> None:
    server = Protected()
    _, [resp], _ = server.send(
        http_request(body=rpc(1, "ping"), headers=bearer()),
        InvalidToken('bad "quote" \\ and\r\nnewline'),
    )
    value = resp.headers["www-authenticate"]
    assert "\r" not in value and "\n" not in value
    assert challenge_of(resp)["error_description"] == "bad ?quote? ? and??newline"


# ==================================================================== verification


def test_a_new_token_is_verified_once_then_cached() -> None:
    server = Protected()
    events, [resp], _ = server.send(
        http_request(body=rpc(1, "initialize", init_params()), headers=bearer()), claims()
    )
    [ask] = [e for e in events if isinstance(e, TokenVerificationNeeded)]
    assert "tok-alice" not in repr(ask)  # the token stays out of logs
    assert resp.status == 200
    sid = resp.headers["mcp-session-id"]
    assert server.endpoint.sessions[sid].principal == f"{ISSUER}#alice"
    events, _, _ = server.send(
        http_request(
            body=rpc(2, "tools/list"),
            headers=bearer(**{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}),
        )
    )
    assert not any(isinstance(e, TokenVerificationNeeded) for e in events)
    assert received(events).event.method == "tools/list"
    assert server.verified == ["tok-alice"]


def test_a_cached_token_is_verified_again_once_it_expires() -> None:
    server = Protected(clock_leeway=0)
    server.send(http_request(body=rpc(1, "ping"), headers=bearer()), claims(expires_at=NOW + 10))
    _, [resp], _ = server.send(
        http_request(body=rpc(1, "ping"), headers=bearer()),
        InvalidToken("expired"),
        wall_time=NOW + 11,
    )
    assert resp.status == 401 and server.verified == ["tok-alice", "tok-alice"]


def test_the_cache_is_bounded() -> None:
    server = Protected(cache_size=2)
    for name in ("a", "b", "c"):
        server.send(http_request(body=rpc(1, "ping"), headers=bearer(name)), claims(subject=name))
    server.send(http_request(body=rpc(1, "ping"), headers=bearer("a")), claims(subject="a"))
    assert server.verified == ["a", "b", "c", "a"]  # "a" was forgotten first


def test_the_verifiers_refusal_is_401_invalid_token() -> None:
    events, [resp], _ = Protected().send(
        http_request(body=rpc(1, "ping"), headers=bearer()), InvalidToken("signature mismatch")
    )
    assert resp.status == 401
    assert challenge_of(resp)["error"] == "invalid_token"
    assert resp.json() == {"error": "invalid_token", "error_description": "signature mismatch"}
    assert [e.status for e in events if isinstance(e, AccessRefused)] == [401]


def test_an_unavailable_verifier_is_503_not_401() -> None:
    _, [resp], _ = Protected().send(
        http_request(body=rpc(1, "ping"), headers=bearer()), VerifierUnavailable("JWKS down")
    )
    assert resp.status == 503 and "www-authenticate" not in resp.headers


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"audiences": ("http://localhost:8000/other",)}, "not for this resource"),
        ({"audiences": ("http://localhost:8001/mcp",)}, "not for this resource"),
        ({"audiences": ()}, "not for this resource"),
        ({"audiences": ("api://mcp",)}, "not for this resource"),
        ({"issuer": "http://127.0.0.1:9001"}, "issuer"),
        ({"issuer": None}, "issuer"),
        ({"expires_at": NOW - 61}, "expired"),
        ({"expires_at": float("nan")}, "not a number"),
        ({"not_before": NOW + 61}, "not valid yet"),
        ({"subject": None, "client_id": None}, "no subject"),
    ],
)
def test_the_resources_own_rules_refuse(changes: dict[str, Any], why: str) -> None:
    _, [resp], _ = Protected().send(
        http_request(body=rpc(1, "ping"), headers=bearer()), claims(**changes)
    )
    assert resp.status == 401
    params = challenge_of(resp)
    assert params["error"] == "invalid_token" and why in params["error_description"]


def test_the_audience_is_compared_in_canonical_form() -> None:
    _, [resp], _ = Protected().send(
        http_request(body=INIT, headers=bearer()),
        claims(audiences=("other", "HTTP://LOCALHOST:8000/mcp/")),
    )
    assert resp.status == 200


def test_extra_audiences_are_accepted_when_configured() -> None:
    _, [resp], _ = Protected(audiences=["api://mcp"]).send(
        http_request(body=INIT, headers=bearer()), claims(audiences=("api://mcp",))
    )
    assert resp.status == 200


def test_the_clock_leeway_applies_both_ways() -> None:
    ok = claims(expires_at=NOW - 30, not_before=NOW + 30)
    _, [resp], _ = Protected().send(http_request(body=INIT, headers=bearer()), ok)
    assert resp.status == 200


def test_wall_time_is_required() -> None:
    server = Protected()
    http = server.endpoint.new_connection(now=0.0)
    with pytest.raises(LocalProtocolError, match="wall_time"):
        http.receive_data(http_request(body=rpc(1, "ping"), headers=bearer()), now=0.0)


def test_answering_twice_is_a_local_error() -> None:
    server = Protected()
    http = server.endpoint.new_connection(now=0.0)
    events = http.receive_data(
        http_request(body=rpc(1, "ping"), headers=bearer()), now=0.0, wall_time=NOW
    )
    [ask] = [e for e in events if isinstance(e, TokenVerificationNeeded)]
    ask.exchange.receive_token_verification(claims(), wall_time=NOW)
    with pytest.raises(LocalProtocolError):
        ask.exchange.receive_token_verification(claims(), wall_time=NOW)


def test_an_answer_after_the_client_left_sends_nothing() -> None:
    server = Protected()
    http = server.endpoint.new_connection(now=0.0)
    events = http.receive_data(
        http_request(body=rpc(1, "ping"), headers=bearer()), now=0.0, wall_time=NOW
    )
    [ask] = [e for e in events if isinstance(e, TokenVerificationNeeded)]
    http.close("gone")
    assert ask.exchange.receive_token_verification(claims(), wall_time=NOW) == []
    assert http.data_to_send() == b""


# ========================================================================== scopes


def test_required_scopes_missing_from_the_token_get_403() -> None:
    server = Protected(required_scopes=["mcp", "files:read"])
    _, [resp], _ = server.send(http_request(body=rpc(1, "ping"), headers=bearer()), claims())
    assert resp.status == 403
    params = challenge_of(resp)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "mcp files:read"  # what it has, plus what it lacks
    assert params["resource_metadata"].endswith(f"{PRM_WELL_KNOWN}/mcp")


def tool_scopes(method: str, params: Any) -> list[str]:
    if method == "tools/call" and isinstance(params, dict) and params.get("name") == "write":
        return ["files:write"]
    return []


def test_per_tool_scopes_get_403_naming_the_scope() -> None:
    server = Protected(scopes_for=tool_scopes)
    call = modern_call(1, "tools/call", {"name": "write", "arguments": {}})
    headers = bearer(**modern_headers("tools/call", "write"))
    events, [resp], _ = server.send(http_request(body=call, headers=headers), claims())
    assert resp.status == 403
    params = challenge_of(resp)
    assert params["scope"] == "mcp files:write" and params["error"] == "insufficient_scope"
    assert "files:write" in params["error_description"]
    assert not any(isinstance(e, MCPEvent) for e in events)  # no handler ran
    other = modern_call(2, "tools/call", {"name": "read", "arguments": {}})
    events, _, _ = server.send(
        http_request(body=other, headers=bearer(**modern_headers("tools/call", "read")))
    )
    assert received(events).event.method == "tools/call"


def test_a_token_with_the_tool_scope_goes_through() -> None:
    server = Protected(scopes_for=tool_scopes)
    call = modern_call(1, "tools/call", {"name": "write", "arguments": {}})
    events, _, _ = server.send(
        http_request(body=call, headers=bearer(**modern_headers("tools/call", "write"))),
        claims(scopes=frozenset({"mcp", "files:write"})),
    )
    ev = received(events)
    assert ev.connection.principal == f"{ISSUER}#alice"  # bound into sealed requestState


# ======================================================================== principals


def test_a_session_cannot_be_used_by_another_principal() -> None:
    server = Protected()
    _, [init], _ = server.send(
        http_request(body=rpc(0, "initialize", init_params()), headers=bearer()), claims()
    )
    sid = init.headers["mcp-session-id"]
    session = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    _, [bob], _ = server.send(
        http_request(body=rpc(1, "tools/list"), headers=bearer("tok-bob", **session)),
        claims(subject="bob"),
    )
    assert bob.status == 404  # exactly as for a session that does not exist
    # A refreshed token of the same principal keeps the session.
    events, _, _ = server.send(
        http_request(body=rpc(1, "tools/list"), headers=bearer("tok-alice-2", **session)),
        claims(),
    )
    assert received(events).event.method == "tools/list"


def test_the_same_subject_of_another_issuer_is_another_principal() -> None:
    one = claims(issuer=ISSUER).principal
    two = claims(issuer="http://127.0.0.1:9001").principal
    assert one != two
    assert claims(subject=None, client_id="bot").principal == f"{ISSUER}#client:bot"


# =================================================================== configuration


@pytest.mark.parametrize(
    "changes",
    [
        {"resource": "mcp.example.com"},
        {"resource": "https://mcp.example.com/mcp#x"},
        {"authorization_servers": []},
        {"authorization_servers": "https://auth.example.com"},
        {"authorization_servers": ["not a url"]},
        {"cache_size": 0},
        {"clock_leeway": -1},
    ],
)
def test_bad_configuration_is_refused(changes: dict[str, Any]) -> None:
    kwargs: dict[str, Any] = {"resource": RESOURCE, "authorization_servers": [ISSUER], **changes}
    with pytest.raises((ValueError, TypeError)):
        ProtectedResource(**kwargs)


def test_a_protected_resource_alone_is_accepted_by_the_endpoint() -> None:
    endpoint = HTTPServerEndpoint(
        default_server_config(),
        new_session_id=lambda: "s",
        auth=ProtectedResource(RESOURCE, [ISSUER]),
    )
    http = endpoint.new_connection(now=0.0)
    http.receive_data(http_request(body=json.dumps(rpc(1, "ping")).encode()), wall_time=NOW)
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 401
