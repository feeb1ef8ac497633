"""The refusals MCP authorization requires, one named test each, end to end.

Real loopback sockets: an `MCPServer(auth=...)` over HTTP, the tests' authorization
server (tests/auth_server.py) and the sans-IO client flow driven by the helpers of
tests/adapters/test_auth.py. Each test names the rule and checks the answer the
spec gives, not only that something failed:

| Refusal | Rule | The answer |
| --- | --- | --- |
| wrong audience | RFC 8707, MCP "Token Handling" | 401 `invalid_token` |
| token for another resource | RFC 8707 (the AS minted it for another `resource`) | 401 `invalid_token` |
| issuer mismatch, token | the resource's authorization servers only | 401 `invalid_token` |
| issuer mismatch, AS metadata | RFC 8414 section 3.3 | the client stops before registering |
| issuer mismatch, redirect `iss` | RFC 9207 section 2.4 | the code is never redeemed |
| PKCE downgrade, advertised | MCP 2025-11-25: S256 must be offered | the client stops: `PKCENotSupported` |
| PKCE downgrade, requested | OAuth 2.1 / RFC 7636 | the AS answers `invalid_request` |
| PKCE verifier mismatch | RFC 7636 section 4.6 | `invalid_grant` |
| redirect to another origin | OAuth 2.1 redirect URI matching | the client refuses; the AS never redirects to an unregistered URI |
| replayed authorization code | OAuth 2.1 section 4.1.3 | `invalid_grant`, and what the code gave is revoked |
| expired token | RFC 6750 section 3.1 | 401 `invalid_token` |

(Protected Resource Metadata naming another resource, RFC 9728 section 3.3, is
refused by the flow before any authorization request: tests/core/test_oauth_discovery.py,
`test_prm_for_another_resource_is_refused_before_any_authorization`.)
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from mcp_adapters.auth._fetch import fetch
from mcp_adapters.http import http_server
from mcp_core.oauth import (
    AuthorizationRequest,
    Authorized,
    InvalidAuthorizationResponse,
    IssuerParameterMismatch,
    OAuthError,
    OAuthHTTPRequest,
    PKCENotSupported,
)
from tests.adapters.test_auth import (
    browse,
    build_server,
    call,
    challenge,
    login,
    perform,
    run_flow,
    running,
    text,
)
from tests.auth_server import MACHINE_CLIENT, AuthServer
from tests.timing import HANG


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def refused_as_invalid_token(answer: Any, why: str) -> None:
    assert answer.status == 401, answer
    params = challenge(answer)
    assert params["error"] == "invalid_token"
    assert why in params["error_description"], params
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")


async def up_to(flow: Any, step: Any, stop: Any) -> Any:
    """Drive the flow until `stop(step)` holds, and return that step."""
    while not stop(step):
        if isinstance(step, OAuthHTTPRequest):
            status, body = await perform(step)
            step = flow.receive_response(status, body, wall_time=time.time())
        else:
            step = flow.receive_redirect(await browse(step), wall_time=time.time())
    return step


def is_token_request(step: Any) -> bool:
    return isinstance(step, OAuthHTTPRequest) and step.url.endswith("/token")


def tokens_issued(auth: AuthServer) -> int:
    return auth.requests.count(("POST", "/token"))


# ==================================================================== audience


@pytest.mark.anyio
async def test_refused_wrong_audience() -> None:
    async with running() as (auth, server):
        token = auth.mint(audience="api://another-api")
        refused_as_invalid_token(await call(server, "read", token), "not for this resource")


@pytest.mark.anyio
async def test_refused_token_for_another_resource() -> None:
    """A token the AS really issued, for another MCP server (RFC 8707 `resource`)."""
    async with running() as (auth, server):
        cid, secret = MACHINE_CLIENT
        form = (
            "grant_type=client_credentials&scope=mcp&resource=http%3A%2F%2F127.0.0.1%3A1%2Fmcp"
            f"&client_id={cid}&client_secret={secret}"
        )
        answer = await fetch(
            "POST",
            f"{auth.issuer}/token",
            headers=[("content-type", "application/x-www-form-urlencoded")],
            body=form.encode(),
            timeout=HANG,
        )
        assert answer.status == 200
        token = json.loads(answer.body)["access_token"]
        refused_as_invalid_token(await call(server, "read", token), "not for this resource")


# ====================================================================== issuer


@pytest.mark.anyio
async def test_refused_issuer_mismatch_of_the_token() -> None:
    async with running() as (auth, server):
        token = auth.mint(audience=server.url, issuer="http://127.0.0.1:1")
        refused_as_invalid_token(await call(server, "read", token), "issuer")


@pytest.mark.anyio
async def test_refused_issuer_mismatch_of_the_authorization_server_metadata() -> None:
    async with running(metadata_issuer="http://127.0.0.1:1") as (auth, server):
        flow, step = await login(server)
        with pytest.raises(OAuthError, match="issuer"):
            await run_flow(flow, step)
        assert ("POST", "/register") not in auth.requests
        assert ("GET", "/authorize") not in auth.requests


@pytest.mark.anyio
async def test_refused_issuer_mismatch_on_the_redirect() -> None:
    async with running(redirect_iss="http://127.0.0.1:1") as (auth, server):
        flow, step = await login(server)
        with pytest.raises(IssuerParameterMismatch):
            await run_flow(flow, step)
        assert tokens_issued(auth) == 0  # the code was never redeemed


# ======================================================================== PKCE


@pytest.mark.anyio
async def test_refused_pkce_downgrade_advertised_by_the_server() -> None:
    async with running(pkce_methods=["plain"]) as (auth, server):
        flow, step = await login(server)
        with pytest.raises(PKCENotSupported):
            await run_flow(flow, step)
        assert ("GET", "/authorize") not in auth.requests
        assert ("POST", "/register") not in auth.requests


@pytest.mark.anyio
async def test_refused_pkce_downgrade_requested_by_a_client() -> None:
    """The authorization server side: a `plain` challenge (or none) gets an error
    redirect, never a code."""
    async with running() as (_, server):
        flow, step = await login(server)
        authorization = await up_to(flow, step, lambda s: isinstance(s, AuthorizationRequest))
        parts = urlsplit(authorization.url)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        for downgraded in (
            {**query, "code_challenge_method": "plain", "code_challenge": "verifier"},
            {k: v for k, v in query.items() if not k.startswith("code_challenge")},
        ):
            answer = await fetch(
                "GET",
                f"{parts.scheme}://{parts.netloc}{parts.path}?{urlencode(downgraded)}",
                timeout=HANG,
            )
            assert answer.status == 302
            back = parse_qs(urlsplit(dict(answer.headers)["location"]).query)
            assert back["error"] == ["invalid_request"] and "code" not in back


@pytest.mark.anyio
async def test_refused_pkce_verifier_mismatch() -> None:
    async with running() as (_, server):
        flow, step = await login(server)
        token_request = await up_to(flow, step, is_token_request)
        form = parse_qs(token_request.body.decode())
        form["code_verifier"] = ["x" * 43]
        tampered = "&".join(f"{k}={v[0]}" for k, v in form.items())
        answer = await fetch(
            "POST",
            token_request.url,
            headers=[h for h in token_request.headers if h[0] not in ("host", "content-length")],
            body=tampered.encode(),
            timeout=HANG,
        )
        assert answer.status == 400
        assert json.loads(answer.body)["error"] == "invalid_grant"


# ==================================================================== redirect


@pytest.mark.anyio
async def test_refused_redirect_to_another_origin() -> None:
    async with running(redirect_origin="http://127.0.0.2:3000") as (auth, server):
        flow, step = await login(server)
        with pytest.raises(InvalidAuthorizationResponse, match=r"127\.0\.0\.2"):
            await run_flow(flow, step)
        assert tokens_issued(auth) == 0  # the code went nowhere


@pytest.mark.anyio
async def test_refused_redirect_uri_the_client_did_not_register() -> None:
    """The authorization server side: an unregistered redirect URI gets an error
    page, never a redirect (which would hand the code to whoever owns that URI)."""
    async with running() as (_, server):
        flow, step = await login(server)
        authorization = await up_to(flow, step, lambda s: isinstance(s, AuthorizationRequest))
        evil = authorization.url.replace("127.0.0.1%3A3000", "evil.example%3A3000")
        assert evil != authorization.url
        answer = await fetch("GET", evil, timeout=HANG)
        assert answer.status == 400 and "location" not in dict(answer.headers)


# ======================================================================= codes


@pytest.mark.anyio
async def test_refused_replayed_authorization_code() -> None:
    async with running(introspect=True) as (auth, server):
        flow, step = await login(server)
        token_request = await up_to(flow, step, is_token_request)
        status, body = await perform(token_request)
        done = flow.receive_response(status, body, wall_time=time.time())
        assert isinstance(done, Authorized)
        token = done.header[1].removeprefix("Bearer ")
        assert text(await call(server, "read", token, {"path": "a"})) == "contents of a"
        assert ("POST", "/introspect") in auth.requests  # live: introspection said so
        # The same code again (an attacker who saw it): refused ...
        status, body = await perform(token_request)
        assert status == 400 and json.loads(body)["error"] == "invalid_grant"
        # ... and the tokens it gave are revoked: a server that has not cached the
        # token (a replica, a restart) is told it is inactive.
        async with http_server(build_server(auth, introspect=True), port=0) as again:
            refused_as_invalid_token(await call(again, "read", token), "")


# ======================================================================= times


@pytest.mark.anyio
async def test_refused_expired_token() -> None:
    async with running() as (auth, server):
        token = auth.mint(audience=server.url, lifetime=-600)
        refused_as_invalid_token(await call(server, "read", token), "expired")
