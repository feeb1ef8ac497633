"""The principal binding of legacy sessions holds across replicas sharing a store.

Two `MCPServer(auth=..., store=...)` replicas in this process, on one `MemoryHub`
(as two processes on one Redis), both protected by the tests' authorization server:
a session alice opened on one replica is a session that does not exist (404) for
bob's token on the other, whatever the method, and still alice's own there. Before,
a replica routed another principal's messages to the session's owner unchecked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from mcp_adapters.auth import AuthSettings, JWTVerifier
from mcp_adapters.auth._fetch import fetch
from mcp_adapters.http import HTTPServer, connect_http, http_server
from mcp_adapters.server import MCPServer
from mcp_adapters.store import InMemoryStore, MemoryHub
from mcp_core import ClientConfig
from tests.auth_server import AuthServer
from tests.timing import HANG


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def replica(auth: AuthServer, hub: MemoryHub, name: str, resource: str | None) -> MCPServer:
    mcp = MCPServer(
        "Files",
        auth=AuthSettings(
            verifier=JWTVerifier(issuer=auth.issuer, audience=None, jwks_url=auth.jwks_url),
            authorization_servers=[auth.issuer],
            resource=resource,
        ),
        store=InMemoryStore(hub=hub, process_id=name),
    )

    @mcp.tool()
    def whoami() -> str:
        return name

    return mcp


@asynccontextmanager
async def two_replicas() -> AsyncIterator[tuple[AuthServer, HTTPServer, HTTPServer]]:
    hub = MemoryHub()
    with AuthServer() as auth:
        async with http_server(replica(auth, hub, "a", None), port=0) as a:
            # One public resource for both, as behind a balancer: a's URL.
            b_server = replica(auth, hub, "b", a.url)
            async with http_server(b_server, port=0) as b:
                yield auth, a, b


@pytest.mark.anyio
async def test_a_session_of_one_principal_is_not_anothers_on_another_replica() -> None:
    async with two_replicas() as (auth, a, b):
        alice = auth.mint(audience=a.url, subject="alice")
        bob = auth.mint(audience=a.url, subject="bob")
        async with connect_http(
            a.url, ClientConfig(mode="legacy"), headers={"authorization": f"Bearer {alice}"}
        ):
            [sid] = a.endpoint.sessions
            body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).encode()
            headers = [
                ("accept", "application/json, text/event-stream"),
                ("content-type", "application/json"),
                ("mcp-session-id", sid),
                ("mcp-protocol-version", "2025-11-25"),
            ]

            async def as_(token: str, method: str) -> int:
                answer = await fetch(
                    method,
                    b.url,
                    headers=[*headers, ("authorization", f"Bearer {token}")],
                    body=body if method == "POST" else b"",
                    timeout=5 if method == "GET" else HANG,
                )
                return answer.status

            assert await as_(bob, "POST") == 404  # as if the session did not exist
            assert await as_(bob, "GET") == 404
            assert await as_(bob, "DELETE") == 404
            # Bob's DELETE ended nothing: the session is still alice's, on either replica.
            assert await as_(alice, "POST") == 200
            assert [*a.endpoint.sessions] == [sid]
