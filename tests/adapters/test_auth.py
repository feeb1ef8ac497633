"""MCP authorization end to end, on real loopback sockets: an `MCPServer(auth=...)`
served over HTTP, the tests' own authorization server (tests/auth_server.py), and the
sans-IO client flow (`mcp_core.oauth`) driven by a tiny HTTP loop.

Server side: tokens without an audience, signed by a foreign or unknown key, or not
JWTs at all are 401 `invalid_token`; a missing tool scope is 403
`insufficient_scope`; a session or a sealed retry of one principal is refused to
another; introspection (RFC 7662) of a machine client's token. The refusals the
spec names (wrong audience, issuer mismatch, PKCE downgrade, redirect to another
origin, replayed code, token for another resource, expired token) have one test
each in tests/adapters/test_auth_refusals.py, which uses the helpers here.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from pydantic import BaseModel

from mcp_adapters.auth import AuthSettings, IntrospectionVerifier, JWTVerifier
from mcp_adapters.auth._fetch import Fetched, fetch
from mcp_adapters.http import HTTPServer, connect_http, http_server
from mcp_adapters.server import Context, MCPServer
from mcp_core import ClientConfig
from mcp_core.oauth import (
    AuthorizationRequest,
    Authorized,
    OAuthClientConfig,
    OAuthClientFlow,
    OAuthHTTPRequest,
    PreRegisteredClient,
    bearer_challenge,
)
from tests.auth_server import MACHINE_CLIENT, RESOURCE_CLIENT, AuthServer
from tests.timing import HANG

MODERN = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
REDIRECT = "http://127.0.0.1:3000/callback"


class Confirmation(BaseModel):
    sure: bool


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build_server(auth: AuthServer, *, introspect: bool = False) -> MCPServer:
    verifier: Any
    if introspect:
        verifier = IntrospectionVerifier(
            auth.introspection_url,
            client_id=RESOURCE_CLIENT[0],
            client_secret=RESOURCE_CLIENT[1],
            issuer=auth.issuer,
        )
    else:
        verifier = JWTVerifier(issuer=auth.issuer, audience=None, jwks_url=auth.jwks_url)
    mcp = MCPServer(
        "Files",
        auth=AuthSettings(
            verifier=verifier, authorization_servers=[auth.issuer], required_scopes=["mcp"]
        ),
    )

    @mcp.tool()
    def read(path: str) -> str:
        return f"contents of {path}"

    @mcp.tool(scopes=["files:write"])
    def write(path: str) -> str:
        return f"wrote {path}"

    @mcp.tool()
    def inspect(ctx: Context) -> str:
        """Everything about the request a handler can reach, as text."""
        request = ctx.request_context.request
        seen = [repr(ctx.request_context), repr(request), repr(ctx.client_info)]
        seen += [repr(getattr(request, name, None)) for name in dir(request) if name[0] != "_"]
        return "\n".join(seen)

    @mcp.tool(replay_elicitation=True)
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("Sure?", Confirmation)
        return answer.action

    return mcp


@asynccontextmanager
async def running(
    *, introspect: bool = False, **as_options: Any
) -> AsyncIterator[tuple[AuthServer, HTTPServer]]:
    with AuthServer(**as_options) as auth:
        async with http_server(build_server(auth, introspect=introspect), port=0) as server:
            yield auth, server


async def call(
    server: HTTPServer,
    name: str,
    token: str | None,
    arguments: dict[str, Any] | None = None,
    **params: Any,
) -> Fetched:
    """One 2026-07-28 `tools/call`, a POST of its own."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments or {},
            "_meta": {PV: MODERN, CAPS: {"elicitation": {"form": {}}}},
            **params,
        },
    }
    headers = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
    ]
    if token is not None:
        headers.append(("authorization", f"Bearer {token}"))
    return await fetch(
        "POST", server.url, headers=headers, body=json.dumps(body).encode(), timeout=HANG
    )


def challenge(answer: Fetched) -> dict[str, str]:
    found = bearer_challenge(answer.headers)
    assert found is not None, answer
    return dict(found.params)


async def perform(step: OAuthHTTPRequest) -> tuple[int, bytes]:
    answer = await fetch(
        step.method,
        step.url,
        headers=[h for h in step.headers if h[0] != "host"],
        body=step.body,
        timeout=HANG,
    )
    return answer.status, answer.body


async def browse(step: AuthorizationRequest) -> str:
    """The browser: open the authorization URL, come back with the redirect."""
    answer = await fetch("GET", step.url, timeout=HANG)
    assert answer.status == 302, answer
    return dict(answer.headers)["location"]


async def run_flow(flow: OAuthClientFlow, step: Any) -> Authorized:
    while not isinstance(step, Authorized):
        if isinstance(step, OAuthHTTPRequest):
            status, body = await perform(step)
            step = flow.receive_response(status, body, wall_time=time.time())
        else:
            step = flow.receive_redirect(await browse(step), wall_time=time.time())
    return step


async def login(server: HTTPServer, **config: Any) -> tuple[OAuthClientFlow, Any]:
    """Call without a token, and start the client flow on the challenge."""
    refused = await call(server, "read", None, {"path": "a"})
    assert refused.status == 401
    flow = OAuthClientFlow(
        server.url,
        OAuthClientConfig(redirect_uri=REDIRECT, client_name="test", **config),
        revision=MODERN,
    )
    return flow, flow.handle_challenge(refused.status, refused.headers, wall_time=time.time())


def text(answer: Fetched) -> str:
    assert answer.status == 200, answer
    doc = json.loads(answer.body)
    return str(doc["result"]["content"][0]["text"])


# ================================================================== the full flow


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_the_full_flow_against_a_real_authorization_server() -> None:
    async with running() as (auth, server):
        flow, step = await login(server)
        done = await run_flow(flow, step)
        token = done.header[1].removeprefix("Bearer ")
        assert text(await call(server, "read", token, {"path": "a"})) == "contents of a"
        # The flow asked for what the challenge named; write needs more: 403, step-up.
        refused = await call(server, "write", token, {"path": "b"})
        assert refused.status == 403
        params = challenge(refused)
        assert params["error"] == "insufficient_scope"
        assert "files:write" in params["scope"].split()
        step = flow.handle_challenge(refused.status, refused.headers, wall_time=time.time())
        done = await run_flow(flow, step)
        token = done.header[1].removeprefix("Bearer ")
        assert text(await call(server, "write", token, {"path": "b"})) == "wrote b"
        # A legacy session with the token, through the project's own client.
        async with connect_http(
            server.url, ClientConfig(mode="legacy"), headers={"authorization": f"Bearer {token}"}
        ) as session:
            result = await session.request(
                "tools/call", {"name": "read", "arguments": {"path": "c"}}
            )
            assert result.content[0].text == "contents of c"
        # Verified once per token: the JWKS was fetched once, tokens never sent back.
        assert auth.requests.count(("GET", "/jwks")) == 1
        assert ("POST", "/introspect") not in auth.requests


@pytest.mark.anyio
async def test_the_metadata_document_names_the_resource_and_its_server() -> None:
    async with running() as (auth, server):
        refused = await call(server, "read", None)
        url = challenge(refused)["resource_metadata"]
        assert url == server.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        answer = await fetch("GET", url, timeout=HANG)
        assert json.loads(answer.body) == {
            "resource": server.url,
            "authorization_servers": [auth.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp", "files:write"],
            "resource_name": "Files",
        }


# ====================================================== server side: refused tokens


@pytest.mark.anyio
async def test_other_bad_tokens_are_401_invalid_token() -> None:
    async with running() as (auth, server):
        other_key = ec.generate_private_key(ec.SECP256R1())
        # (Wrong audience, another resource, issuer mismatch, expiry: one test each
        # in tests/adapters/test_auth_refusals.py.)
        bad = {
            "no audience": auth.mint(audience=None),
            "another key": auth.mint(audience=server.url, key=other_key),
            "unknown key id": auth.mint(audience=server.url, key=other_key, kid="k2"),
            "not a JWT": "abc.def",
        }
        for why, token in bad.items():
            answer = await call(server, "read", token, {"path": "a"})
            assert answer.status == 401, why
            params = challenge(answer)
            assert params["error"] == "invalid_token", why
            assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
        good = auth.mint(audience=server.url)
        assert text(await call(server, "read", good, {"path": "a"})) == "contents of a"


@pytest.mark.anyio
async def test_a_missing_tool_scope_is_403_naming_it() -> None:
    async with running() as (auth, server):
        refused = await call(server, "write", auth.mint(audience=server.url), {"path": "b"})
        assert refused.status == 403
        params = challenge(refused)
        assert params["error"] == "insufficient_scope"
        assert params["scope"] == "mcp files:write"
        assert json.loads(refused.body)["error"] == "insufficient_scope"
        missing_base = await call(
            server, "read", auth.mint(audience=server.url, scope="files:read")
        )
        assert missing_base.status == 403 and "mcp" in challenge(missing_base)["scope"].split()


@pytest.mark.anyio
async def test_a_session_of_one_principal_is_not_anothers() -> None:
    async with running() as (auth, server):
        alice = auth.mint(audience=server.url, subject="alice")
        bob = auth.mint(audience=server.url, subject="bob")
        async with connect_http(
            server.url, ClientConfig(mode="legacy"), headers={"authorization": f"Bearer {alice}"}
        ):
            [sid] = server.endpoint.sessions  # the one session, alice's
            body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).encode()
            headers = [
                ("accept", "application/json, text/event-stream"),
                ("content-type", "application/json"),
                ("mcp-session-id", sid),
                ("mcp-protocol-version", "2025-11-25"),
            ]
            taken = await fetch(
                "POST",
                server.url,
                headers=[*headers, ("authorization", f"Bearer {bob}")],
                body=body,
                timeout=HANG,
            )
            assert taken.status == 404  # as if the session did not exist
            own = await fetch(
                "POST",
                server.url,
                headers=[*headers, ("authorization", f"Bearer {alice}")],
                body=body,
                timeout=HANG,
            )
            assert own.status == 200


@pytest.mark.anyio
async def test_a_sealed_retry_of_one_principal_is_not_anothers() -> None:
    async with running() as (auth, server):
        alice = auth.mint(audience=server.url, subject="alice")
        bob = auth.mint(audience=server.url, subject="bob")
        first = await call(server, "confirm", alice)
        result = json.loads(first.body)["result"]
        assert result["resultType"] == "input_required", result
        [key] = result["inputRequests"]
        retry = {
            "inputResponses": {key: {"action": "accept", "content": {"sure": True}}},
            "requestState": result["requestState"],
        }
        stolen = await call(server, "confirm", bob, **retry)
        error = json.loads(stolen.body)["error"]
        assert error["data"] == {"reason": "invalid_request_state"}
        assert text(await call(server, "confirm", alice, **retry)) == "accept"


@pytest.mark.anyio
async def test_the_token_never_reaches_a_handler() -> None:
    """No token passthrough (MCP "Token Handling"): a handler cannot forward the
    client's token upstream, because nothing it can reach carries it; the server
    and a legacy session alike."""
    async with running() as (auth, server):
        token = auth.mint(audience=server.url)
        seen = text(await call(server, "inspect", token))
        assert "RequestReceived" in seen  # the handler did see its request
        assert token not in seen and "Bearer" not in seen
        async with connect_http(
            server.url, ClientConfig(mode="legacy"), headers={"authorization": f"Bearer {token}"}
        ) as session:
            result = await session.request("tools/call", {"name": "inspect", "arguments": {}})
        seen = result.content[0].text
        assert token not in seen and "Bearer" not in seen


# ===================================================== introspection (RFC 7662)


@pytest.mark.anyio
async def test_introspection_of_a_machine_clients_token() -> None:
    async with running(introspect=True) as (_, server):
        flow = OAuthClientFlow(
            server.url,
            OAuthClientConfig(
                grant_type="client_credentials",
                client=PreRegisteredClient(*MACHINE_CLIENT),
            ),
            revision=MODERN,
        )
        done = await run_flow(flow, flow.authorize(wall_time=time.time()))
        token = done.header[1].removeprefix("Bearer ")
        assert text(await call(server, "read", token, {"path": "a"})) == "contents of a"
