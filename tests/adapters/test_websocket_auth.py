"""`MCPServer(auth=...)` served over WebSocket is a resource server as over HTTP.

Before this, `serve_websocket` ignored `auth=`: anyone could upgrade and call every
tool without a token, a bypass of the HTTP endpoint's checks. What is checked here,
on real loopback sockets with the tests' authorization server (tests/auth_server.py):

* an upgrade without a token is 401 with the `WWW-Authenticate` challenge naming the
  metadata document, which the same listener serves to a plain GET;
* bad tokens (another audience, expired, another issuer) are 401 `invalid_token`,
  a token without the required scope 403 `insufficient_scope`, all before any 101;
* a good token opens the connection, which then runs as its principal: a tool
  needing a scope the token lacks is a JSON-RPC error carrying the 403 challenge,
  and a sealed `requestState` of one principal is refused on another's connection;
* the tcp transport, which cannot carry a token, refuses to serve such a server.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from pydantic import BaseModel
from wsproto import events as wse
from wsproto.connection import Connection as WSFrames
from wsproto.connection import ConnectionType

from mcp_adapters import Client
from mcp_adapters._errors import ConnectionClosedError
from mcp_adapters.auth import AuthSettings, JWTVerifier
from mcp_adapters.oauth import (
    AuthorizationFailedError,
    InMemoryTokenStorage,
    OAuthProvider,
    OAuthRecord,
)
from mcp_adapters.server import Context, MCPServer
from mcp_adapters.websocket import connect_websocket, serve_websocket
from mcp_core import ClientConfig, MCPError
from mcp_core.oauth import PKCENotSupported, PreRegisteredClient, bearer_challenge
from tests.adapters.test_oauth_client import REDIRECT, Browser, calls, never, text
from tests.auth_server import MACHINE_CLIENT, AuthServer
from tests.timing import HANG

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Confirmation(BaseModel):
    sure: bool


def build_server(auth: AuthServer) -> MCPServer:
    mcp = MCPServer(
        "Files",
        auth=AuthSettings(
            verifier=JWTVerifier(issuer=auth.issuer, audience=None, jwks_url=auth.jwks_url),
            authorization_servers=[auth.issuer],
            required_scopes=["mcp"],
        ),
    )

    @mcp.tool()
    def read(path: str) -> str:
        return f"contents of {path}"

    @mcp.tool(scopes=["files:write"])
    def write(path: str) -> str:
        return f"wrote {path}"

    @mcp.tool(replay_elicitation=True)
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("Sure?", Confirmation)
        return answer.action

    return mcp


@asynccontextmanager
async def running() -> AsyncIterator[tuple[AuthServer, int]]:
    with AuthServer() as auth:
        async with anyio.create_task_group() as group:
            port = await group.start(functools.partial(serve_websocket, build_server(auth), port=0))
            yield auth, port
            group.cancel_scope.cancel()


def resource(port: int) -> str:
    """The resource a WebSocket server at ws://127.0.0.1:port/mcp names by default."""
    return f"http://127.0.0.1:{port}/mcp"


async def raw_request(port: int, head: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one HTTP request head to the listener, read the whole answer (the
    server closes after a refusal)."""
    with anyio.fail_after(HANG):
        async with await anyio.connect_tcp("127.0.0.1", port) as sock:
            await sock.send(head)
            data = b""
            while True:
                try:
                    data += await sock.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
                if b"\r\n\r\n" in data and data.startswith(b"HTTP/1.1 101"):
                    break
    head_bytes, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head_bytes.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body


def upgrade(port: int, token: str | None = None) -> bytes:
    auth = b"" if token is None else b"Authorization: Bearer %s\r\n" % token.encode()
    return (
        b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Sec-WebSocket-Version: 13\r\n%s\r\n" % (port, auth)
    )


def challenge_of(headers: dict[str, str]) -> dict[str, str]:
    found = bearer_challenge(list(headers.items()))
    assert found is not None, headers
    return dict(found.params)


# ================================================================ the upgrade


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_an_upgrade_without_a_token_is_401_with_the_challenge() -> None:
    async with running() as (_, port):
        status, headers, body = await raw_request(port, upgrade(port))
        assert status == 401
        params = challenge_of(headers)
        assert params["resource_metadata"] == (
            f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        )
        assert params["scope"] == "mcp"
        assert "error" not in params
        assert json.loads(body)["error_description"]
        # Our own client reports the refusal; no session was opened.
        with pytest.raises(ConnectionClosedError, match="401"):
            async with connect_websocket(f"ws://127.0.0.1:{port}/mcp"):
                pass


async def test_the_listener_serves_the_metadata_document() -> None:
    async with running() as (auth, port):
        status, headers, body = await raw_request(
            port,
            b"GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\n"
            b"Host: 127.0.0.1:%d\r\n\r\n" % port,
        )
        assert status == 200 and headers["content-type"] == "application/json"
        assert json.loads(body) == {
            "resource": resource(port),
            "authorization_servers": [auth.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp", "files:write"],
            "resource_name": "Files",
        }


async def test_refused_tokens_get_no_upgrade() -> None:
    async with running() as (auth, port):
        here = resource(port)
        refused = {
            "wrong audience": (auth.mint(audience="http://127.0.0.1:1/mcp"), 401, "invalid_token"),
            "expired": (auth.mint(audience=here, lifetime=-600), 401, "invalid_token"),
            "issuer mismatch": (
                auth.mint(audience=here, issuer="http://127.0.0.1:1"),
                401,
                "invalid_token",
            ),
            "no required scope": (
                auth.mint(audience=here, scope="files:read"),
                403,
                "insufficient_scope",
            ),
        }
        for why, (token, status, error) in refused.items():
            got, headers, _ = await raw_request(port, upgrade(port, token))
            assert got == status, why
            assert challenge_of(headers)["error"] == error, why
        good, _, _ = await raw_request(port, upgrade(port, auth.mint(audience=here)))
        assert good == 101


# ======================================================= the open connection


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_good_token_opens_the_connection_and_tool_scopes_still_apply() -> None:
    async with running() as (auth, port):
        token = auth.mint(audience=resource(port), scope="mcp")
        async with connect_websocket(
            f"ws://127.0.0.1:{port}/mcp",
            ClientConfig(mode="legacy"),
            headers=[("authorization", f"Bearer {token}")],
        ) as session:
            result = await session.request(
                "tools/call", {"name": "read", "arguments": {"path": "a"}}
            )
            assert result.content[0].text == "contents of a"
            with pytest.raises(MCPError) as refused:
                await session.request("tools/call", {"name": "write", "arguments": {"path": "b"}})
            data = refused.value.data
            assert data["error"] == "insufficient_scope" and data["status"] == 403
            assert 'scope="mcp files:write"' in data["www_authenticate"]
            # The refusal answered that request only; the connection goes on.
            again = await session.request(
                "tools/call", {"name": "read", "arguments": {"path": "c"}}
            )
            assert again.content[0].text == "contents of c"
        writer = auth.mint(audience=resource(port), scope="mcp files:write")
        async with connect_websocket(
            f"ws://127.0.0.1:{port}/mcp", headers=[("authorization", f"Bearer {writer}")]
        ) as session:
            result = await session.request(
                "tools/call", {"name": "write", "arguments": {"path": "b"}}
            )
            assert result.content[0].text == "wrote b"


class RawWebSocket:
    """A bare WebSocket client (wsproto frames): one JSON-RPC message in, one out,
    so a test can hold a sealed `requestState` and replay it on another connection
    (our client would answer the input request itself)."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.ws = WSFrames(ConnectionType.CLIENT)

    @classmethod
    @asynccontextmanager
    async def open(cls, port: int, token: str) -> AsyncIterator[RawWebSocket]:
        async with await anyio.connect_tcp("127.0.0.1", port) as sock:
            await sock.send(upgrade(port, token))
            data = b""
            while b"\r\n\r\n" not in data:
                data += await sock.receive()
            assert data.startswith(b"HTTP/1.1 101"), data
            raw = cls(sock)
            rest = data.partition(b"\r\n\r\n")[2]
            if rest:  # (None would tell wsproto the stream ended)
                raw.ws.receive_data(rest)
            yield raw

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        await self.sock.send(self.ws.send(wse.TextMessage(data=json.dumps(message))))
        text = ""
        while True:
            for event in self.ws.events():
                if isinstance(event, wse.TextMessage):
                    text += event.data
                    if event.message_finished:
                        answer: dict[str, Any] = json.loads(text)
                        return answer
            self.ws.receive_data(await self.sock.receive())


def confirm_call(**params: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    }
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "confirm", "arguments": {}, "_meta": meta, **params},
    }


async def test_a_sealed_retry_of_one_principal_is_refused_on_anothers_connection() -> None:
    async with running() as (auth, port):
        alice = auth.mint(audience=resource(port), subject="alice")
        bob = auth.mint(audience=resource(port), subject="bob")
        with anyio.fail_after(HANG):
            async with RawWebSocket.open(port, alice) as ws:
                first = (await ws.call(confirm_call()))["result"]
            assert first["resultType"] == "input_required", first
            [key] = first["inputRequests"]
            retry = {
                "inputResponses": {key: {"action": "accept", "content": {"sure": True}}},
                "requestState": first["requestState"],
            }
            async with RawWebSocket.open(port, bob) as ws:
                stolen = await ws.call(confirm_call(**retry))
            assert stolen["error"]["data"] == {"reason": "invalid_request_state"}
            async with RawWebSocket.open(port, alice) as ws:
                own = await ws.call(confirm_call(**retry))
            assert own["result"]["content"][0]["text"] == "accept"


# ======================================================= Client(ws://..., auth=)


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_the_client_authorizes_before_the_upgrade() -> None:
    async with running() as (auth, port):
        url = f"ws://127.0.0.1:{port}/mcp"
        browser, storage = Browser(), InMemoryTokenStorage()
        provider = OAuthProvider(
            redirect_uri=REDIRECT, client_name="ws", authorize=browser, storage=storage
        )
        async with Client(url, auth=provider) as client:
            assert text(await client.call_tool("read", {"path": "a"})) == "contents of a"
            # Asked for what the metadata lists (no challenge to go by): write too.
            assert text(await client.call_tool("write", {"path": "b"})) == "wrote b"
        assert len(browser.visits) == 1
        query = parse_qs(urlsplit(browser.visits[0]).query)
        assert query["resource"] == [resource(port)]  # RFC 8707: the http spelling
        # Another client with the stored token: no login, no token request.
        tokens = calls(auth, "/token")
        again = OAuthProvider(
            redirect_uri=REDIRECT, client_name="ws", authorize=never, storage=storage
        )
        async with Client(url, auth=again) as client:
            assert text(await client.call_tool("read", {"path": "c"})) == "contents of c"
        assert calls(auth, "/token") == tokens


async def test_the_client_refreshes_a_stale_token_before_the_upgrade() -> None:
    async with running() as (auth, port):
        url = f"ws://127.0.0.1:{port}/mcp"
        storage = InMemoryTokenStorage()
        first = OAuthProvider(
            redirect_uri=REDIRECT, client_name="ws", authorize=Browser(), storage=storage
        )
        async with Client(url, auth=first):
            pass
        record = storage.record
        assert record is not None
        data = record.to_dict()
        data["tokens"]["expires_at"] = time.time() - 10
        storage.record = OAuthRecord.from_dict(data)
        tokens = calls(auth, "/token")
        again = OAuthProvider(
            redirect_uri=REDIRECT, client_name="ws", authorize=never, storage=storage
        )
        async with Client(url, auth=again) as client:
            assert text(await client.call_tool("read", {"path": "c"})) == "contents of c"
        assert calls(auth, "/token") == tokens + 1  # one refresh


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_machine_client_over_websocket() -> None:
    async with running() as (_, port):
        provider = OAuthProvider(
            grant_type="client_credentials", client=PreRegisteredClient(*MACHINE_CLIENT)
        )
        async with Client(f"ws://127.0.0.1:{port}/mcp", auth=provider) as client:
            assert text(await client.call_tool("read", {"path": "a"})) == "contents of a"


async def test_a_refused_flow_fails_before_any_upgrade() -> None:
    with AuthServer(pkce_methods=("plain",)) as auth:
        async with anyio.create_task_group() as group:
            port = await group.start(functools.partial(serve_websocket, build_server(auth), port=0))
            provider = OAuthProvider(redirect_uri=REDIRECT, authorize=never)
            with pytest.raises(AuthorizationFailedError) as caught:
                async with Client(f"ws://127.0.0.1:{port}/mcp", auth=provider):
                    pass
            assert isinstance(caught.value.error, PKCENotSupported)
            group.cancel_scope.cancel()


# ================================================================ tcp


async def test_the_tcp_transport_refuses_a_server_with_auth() -> None:
    with AuthServer() as auth, pytest.raises(ValueError, match="cannot carry a token"):
        await build_server(auth).run_tcp_async(port=0)
