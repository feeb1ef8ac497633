"""An MCP server protected by OAuth 2.1: a resource server that checks JWT access tokens.

Run it from the repository root: `python -m examples.protected_server`. It starts the
test suite's small authorization server (tests/auth_server.py) on loopback, serves the
MCP server over Streamable HTTP next to it, and plays a machine client: no token gets
401 with the challenge, a client_credentials token reads, the tool that needs
`files:write` answers 403 `insufficient_scope` until the token has it.

In a deployment, `ISSUER` is your authorization server, `RESOURCE` the server's public
https URL, and the server runs with `python -m mcp_adapters run` or as an ASGI app.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import urlencode

import anyio

from mcp_adapters.auth import AuthSettings, JWTVerifier
from mcp_adapters.auth._fetch import fetch
from mcp_adapters.http import http_server
from mcp_adapters.server import MCPServer
from tests.auth_server import MACHINE_CLIENT, AuthServer


def build(issuer: str) -> MCPServer:
    mcp = MCPServer(
        "Files",
        auth=AuthSettings(
            verifier=JWTVerifier(issuer=issuer, audience=None, jwks_url=f"{issuer}/jwks"),
            authorization_servers=[issuer],
            required_scopes=["mcp"],
        ),
    )

    @mcp.tool()
    def read(path: str) -> str:
        """Read a file."""
        return f"contents of {path}"

    @mcp.tool(scopes=["files:write"])
    def write(path: str, text: str) -> str:
        """Write a file: the token needs files:write."""
        return f"wrote {len(text)} characters to {path}"

    return mcp


async def call(
    url: str, token: str | None, name: str, arguments: dict[str, str]
) -> tuple[int, str]:
    """One 2026-07-28 tools/call, as a client would POST it."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    }
    headers = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
    ]
    if token is not None:
        headers.append(("authorization", f"Bearer {token}"))
    answer = await fetch("POST", url, headers=headers, body=json.dumps(body).encode())
    if answer.status != 200:  # 401, 403: the challenge says why and what to get
        return answer.status, dict(answer.headers).get("www-authenticate", "")
    return 200, json.loads(answer.body)["result"]["content"][0]["text"]


async def token_for(issuer: str, resource: str, scope: str) -> str:
    client_id, secret = MACHINE_CLIENT
    form = {"grant_type": "client_credentials", "scope": scope, "resource": resource}
    answer = await fetch(
        "POST",
        f"{issuer}/token",
        headers=[
            ("content-type", "application/x-www-form-urlencoded"),
            ("authorization", "Basic " + _basic(client_id, secret)),
        ],
        body=urlencode(form).encode(),
    )
    return str(json.loads(answer.body)["access_token"])


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


async def main() -> None:
    with AuthServer() as authorization_server:
        issuer = authorization_server.issuer
        async with http_server(build(issuer), port=0) as running:
            url = running.url  # the resource: tokens must be minted for it
            status, challenge = await call(url, None, "read", {"path": "notes.txt"})
            assert status == 401 and "resource_metadata=" in challenge
            print("no token:", status, challenge)
            token = await token_for(issuer, url, "mcp")
            print("read:", await call(url, token, "read", {"path": "notes.txt"}))
            status, challenge = await call(url, token, "write", {"path": "notes.txt", "text": "hi"})
            assert status == 403 and 'error="insufficient_scope"' in challenge
            print("write:", status, challenge)
            token = await token_for(issuer, url, "mcp files:write")
            print("write:", await call(url, token, "write", {"path": "notes.txt", "text": "hi"}))


if __name__ == "__main__":
    anyio.run(main)
