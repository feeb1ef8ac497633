"""`Client(url, auth=OAuthProvider(...))` end to end, on real loopback sockets: the
tests' authorization server (tests/auth_server.py), a protected `MCPServer` over
HTTP, and our client doing the whole flow itself, at 2025-11-25 (handshake) and
2026-07-28 (stateless), on asyncio and trio.

What is checked: the first request's 401 runs discovery, registration, the browser
step and the token request, and the request is retried with the token; a tool
needing more scope is a 403 `insufficient_scope` and a step-up; a token the server
refuses mid-session (401) is refreshed, without the browser; a stale token is
refreshed before the request; the file store survives a restart (a new `Client`
refreshes from it); the loopback redirect receives a real browser-like redirect;
a flow the client must refuse fails the call with `AuthorizationFailedError`.
"""

from __future__ import annotations

import json
import os
import stat
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.to_thread
import jwt
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from mcp_adapters.auth import AuthSettings, JWTVerifier
from mcp_adapters.auth._fetch import fetch
from mcp_adapters.client import Client
from mcp_adapters.http import HTTPServer, http_server
from mcp_adapters.oauth import (
    AuthorizationFailedError,
    FileTokenStorage,
    InMemoryTokenStorage,
    LoopbackRedirect,
    OAuthProvider,
    OAuthRecord,
)
from mcp_adapters.server import MCPServer
from mcp_core.oauth import JWTSigner, PKCENotSupported, PreRegisteredClient
from tests.auth_server import MACHINE_CLIENT, AuthServer
from tests.timing import HANG

REDIRECT = "http://127.0.0.1:3000/callback"
ERAS = ["2025-11-25", "auto"]  # "auto" speaks 2026-07-28 to our server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# On trio too: the flows, and our loopback listener. (Not every test: a trio run
# that used a worker thread, as getaddrinfo does, takes trio's 10 s thread-cache
# timeout to end, paid by each test.)
both_backends = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


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

    return mcp


@asynccontextmanager
async def running(**as_options: Any) -> AsyncIterator[tuple[AuthServer, HTTPServer]]:
    with AuthServer(**as_options) as auth:
        async with http_server(build_server(auth), port=0) as server:
            yield auth, server


class Browser:
    """A headless browser: follows the authorization URL to the AS, which approves at
    once, and hands back the redirect it answers with; counts the logins."""

    def __init__(self) -> None:
        self.visits: list[str] = []

    async def __call__(self, url: str) -> str:
        self.visits.append(url)
        answer = await fetch("GET", url, timeout=HANG)
        assert answer.status == 302, answer
        return dict(answer.headers)["location"]


async def never(url: str) -> str:
    raise AssertionError(f"the browser was opened: {url}")


def text(result: Any) -> str:
    assert not result.is_error, result
    return str(result.content[0].text)


def calls(auth: AuthServer, path: str) -> int:
    return sum(1 for _, p in auth.requests if p.split("?")[0] == path)


# ================================================================== the flow


@both_backends
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
async def test_client_authorizes_on_the_first_401_and_steps_up_on_403(mode: str) -> None:
    async with running() as (auth, server):
        browser = Browser()
        storage = InMemoryTokenStorage()
        provider = OAuthProvider(
            redirect_uri=REDIRECT, client_name="test", authorize=browser, storage=storage
        )
        async with Client(server.url, mode=mode, auth=provider) as client:
            assert client.protocol_version == ("2025-11-25" if mode != "auto" else "2026-07-28")
            assert len(browser.visits) == 1  # the handshake's 401: one login
            assert [t.name for t in (await client.list_tools()).tools] == ["read", "write"]
            assert text(await client.call_tool("read", {"path": "a"})) == "contents of a"
            assert storage.record is not None and storage.record.tokens is not None
            assert "files:write" not in (storage.record.tokens.scope or "")
            # write needs files:write: 403 insufficient_scope, a step-up, the retry.
            assert text(await client.call_tool("write", {"path": "b"})) == "wrote b"
            assert len(browser.visits) == 2
            assert "files:write" in parse_qs(urlsplit(browser.visits[1]).query)["scope"][0]
            assert "files:write" in (storage.record.tokens.scope or "")
            assert text(await client.call_tool("write", {"path": "c"})) == "wrote c"
        assert len(browser.visits) == 2
        assert calls(auth, "/register") == 1  # the step-up reused the registration


@both_backends
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
async def test_a_token_refused_mid_session_is_refreshed_and_the_request_retried(
    mode: str,
) -> None:
    async with running() as (auth, server):
        storage = InMemoryTokenStorage()
        first = OAuthProvider(
            redirect_uri=REDIRECT, client_name="test", authorize=Browser(), storage=storage
        )
        async with Client(server.url, mode=mode, auth=first) as client:
            await client.list_tools()
        record = storage.record
        assert record is not None and record.tokens is not None
        old_refresh = record.tokens.refresh_token
        # The server stops accepting the token (say, revoked) long before it expires.
        storage.record = _with_tokens(record, access_token="revoked.token.value")
        again = OAuthProvider(
            redirect_uri=REDIRECT, client_name="test", authorize=never, storage=storage
        )
        tokens_before = calls(auth, "/token")
        async with Client(server.url, mode=mode, auth=again) as client:
            assert text(await client.call_tool("read", {"path": "a"})) == "contents of a"
        assert calls(auth, "/token") == tokens_before + 1  # one refresh, no login
        assert storage.record.tokens is not None
        assert storage.record.tokens.refresh_token not in (None, old_refresh)  # rotated


def _with_tokens(record: OAuthRecord, **changes: Any) -> OAuthRecord:
    data = record.to_dict()
    data["tokens"].update(changes)
    return OAuthRecord.from_dict(data)


@pytest.mark.anyio
async def test_the_file_store_survives_a_restart_and_refreshes_a_stale_token(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state" / "oauth.json"
    async with running() as (auth, server):
        provider = OAuthProvider(
            redirect_uri=REDIRECT,
            client_name="test",
            authorize=Browser(),
            storage=FileTokenStorage(path),
        )
        async with Client(server.url, auth=provider) as client:
            await client.list_tools()
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert not [p for p in path.parent.iterdir() if p != path]  # no temporary left
        saved = json.loads(path.read_text())
        assert saved["tokens"]["access_token"]
        # "An hour later": the process restarts, and the stored token has expired.
        saved["tokens"]["expires_at"] = time.time() - 10
        path.write_text(json.dumps(saved))
        restarted = OAuthProvider(
            redirect_uri=REDIRECT,
            client_name="test",
            authorize=never,
            storage=FileTokenStorage(path),
        )
        registrations, tokens_before = calls(auth, "/register"), calls(auth, "/token")
        async with Client(server.url, auth=restarted) as client:
            assert text(await client.call_tool("read", {"path": "x"})) == "contents of x"
        # Refreshed before the first request: no 401 round, no login, no registration.
        assert calls(auth, "/token") == tokens_before + 1
        assert calls(auth, "/register") == registrations
        refreshed = json.loads(path.read_text())
        assert refreshed["tokens"]["expires_at"] > time.time()
        assert refreshed["tokens"]["refresh_token"] != saved["tokens"]["refresh_token"]
        assert refreshed["client"] == saved["client"]


@pytest.mark.anyio
async def test_a_broken_file_reads_as_nothing_stored(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    path.write_text("{not json")
    assert await FileTokenStorage(path).load() is None
    path.write_text(json.dumps({"version": 999}))
    assert await FileTokenStorage(path).load() is None


# ============================================= machines, and private_key_jwt (RFC 7523)


def es256_signer(key: ec.EllipticCurvePrivateKey) -> JWTSigner:
    """A `JWTSigner` over a `cryptography` key, as `JWTSigner`'s docstring shows."""

    def sign(data: bytes) -> bytes:
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    return JWTSigner("ES256", sign, key_id="client-key-1")


def public_jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
    jwk: dict[str, Any] = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    return {**jwk, "kid": "client-key-1", "use": "sig", "alg": "ES256"}


@both_backends
@pytest.mark.anyio
async def test_client_credentials_with_a_client_secret_through_the_client() -> None:
    async with running() as (auth, server):
        provider = OAuthProvider(
            grant_type="client_credentials", client=PreRegisteredClient(*MACHINE_CLIENT)
        )
        async with Client(server.url, auth=provider) as client:
            assert text(await client.call_tool("read", {"path": "a"})) == "contents of a"
            # A tool needing more: the 403 step-up is another client_credentials request.
            assert text(await client.call_tool("write", {"path": "b"})) == "wrote b"
        record = await provider.storage.load()
        assert record is not None and record.tokens is not None
        assert record.tokens.refresh_token is None  # RFC 6749 4.4.3: none for this grant
        claims = jwt.decode(record.tokens.access_token, options={"verify_signature": False})
        assert claims["sub"] == claims["client_id"] == MACHINE_CLIENT[0]
        assert "files:write" in claims["scope"].split()
        assert calls(auth, "/authorize") == 0 and calls(auth, "/register") == 0
        assert calls(auth, "/token") == 2


@both_backends
@pytest.mark.anyio
async def test_client_credentials_with_private_key_jwt_through_the_client() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    async with running() as (auth, server):
        auth.register_key_client("signed-bot", key.public_key())
        provider = OAuthProvider(
            grant_type="client_credentials",
            client=PreRegisteredClient("signed-bot"),
            signer=es256_signer(key),
        )
        async with Client(server.url, auth=provider) as client:
            assert text(await client.call_tool("read", {"path": "a"})) == "contents of a"
        assert len(auth.assertion_ids) == 1  # the token request carried a verified assertion
        # The AS refuses the same client without its key's signature.
        unsigned = OAuthProvider(
            grant_type="client_credentials", client=PreRegisteredClient("signed-bot")
        )
        with pytest.raises(AuthorizationFailedError):
            async with Client(server.url, auth=unsigned):
                pass


@pytest.mark.anyio
async def test_authorization_code_with_private_key_jwt_registers_its_key_and_refreshes(
    tmp_path: Path,
) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "oauth.json"
    options: dict[str, Any] = {
        "redirect_uri": REDIRECT,
        "client_name": "signed",
        "signer": es256_signer(key),
        "registration_extras": {"jwks": {"keys": [public_jwk(key)]}},
    }
    async with running() as (auth, server):
        provider = OAuthProvider(authorize=Browser(), storage=FileTokenStorage(path), **options)
        async with Client(server.url, auth=provider) as client:
            assert text(await client.call_tool("read", {"path": "a"})) == "contents of a"
        [registered] = [c for c in auth.clients.values() if c.client_id.startswith("dcr-")]
        assert registered.auth_method == "private_key_jwt" and registered.secret is None
        assert len(auth.assertion_ids) == 1
        # A restart with the token stale: the refresh is authenticated by a new assertion.
        saved = json.loads(path.read_text())
        saved["tokens"]["expires_at"] = time.time() - 10
        path.write_text(json.dumps(saved))
        restarted = OAuthProvider(authorize=never, storage=FileTokenStorage(path), **options)
        async with Client(server.url, auth=restarted) as client:
            assert text(await client.call_tool("read", {"path": "b"})) == "contents of b"
        assert len(auth.assertion_ids) == 2
        assert calls(auth, "/register") == 1


# ============================================================ the loopback redirect


@both_backends
@pytest.mark.anyio
async def test_the_loopback_redirect_receives_the_browsers_redirect() -> None:
    opened: list[str] = []

    def browser(url: str) -> bool:
        """A real browser's part: GET the authorization URL and follow its redirect
        to the loopback listener (urllib follows redirects)."""
        opened.append(url)
        with urllib.request.urlopen(url, timeout=HANG) as answer:
            assert answer.status == 200
            assert b"Authorization complete" in answer.read()
        return True

    async with running() as (_, server):
        with LoopbackRedirect(open_browser=browser, timeout=HANG) as redirect:
            assert redirect.uri.startswith("http://127.0.0.1:")
            provider = OAuthProvider(
                redirect_uri=redirect.uri, client_name="cli", authorize=redirect
            )
            async with Client(server.url, auth=provider) as client:
                assert text(await client.call_tool("read", {"path": "a"})) == "contents of a"
        assert len(opened) == 1


@pytest.mark.anyio
async def test_the_loopback_redirect_ignores_requests_that_are_not_the_redirect() -> None:
    with LoopbackRedirect(open_browser=None, timeout=HANG) as redirect:
        base = redirect.uri

        def get(url: str) -> int:
            try:
                with urllib.request.urlopen(url, timeout=HANG) as answer:
                    return int(answer.status)
            except urllib.error.HTTPError as exc:
                return exc.code

        async def poke() -> list[int]:
            return [
                await anyio.to_thread.run_sync(get, base.replace("/callback", "/favicon.ico")),
                await anyio.to_thread.run_sync(get, base + "?code=x&state=forged"),
                await anyio.to_thread.run_sync(get, base + "?code=good&state=s1"),
            ]

        statuses: list[int] = []
        async with anyio.create_task_group() as group:

            async def browse() -> None:
                statuses.extend(await poke())

            group.start_soon(browse)
            got = await redirect.receive("s1")
        assert got == base + "?code=good&state=s1"
        assert statuses == [404, 400, 200]


# ================================================================== refusals


@pytest.mark.anyio
async def test_a_refused_flow_fails_the_call_with_the_reason() -> None:
    async with running(pkce_methods=("plain",)) as (auth, server):
        provider = OAuthProvider(redirect_uri=REDIRECT, client_name="test", authorize=never)
        with pytest.raises(AuthorizationFailedError) as caught:
            async with Client(server.url, auth=provider):
                pass
        assert isinstance(caught.value.error, PKCENotSupported)
        assert calls(auth, "/authorize") == 0
        assert calls(auth, "/register") == 0


def test_auth_needs_an_http_target() -> None:
    provider = OAuthProvider(redirect_uri=REDIRECT, authorize=never)
    with pytest.raises(ValueError, match="http"):

        async def connect() -> None:
            async with Client("tcp://127.0.0.1:1", auth=provider):
                pass

        anyio.run(connect)


def test_the_authorization_code_grant_needs_the_browser_step() -> None:
    with pytest.raises(ValueError, match="authorize="):
        OAuthProvider(redirect_uri=REDIRECT)
