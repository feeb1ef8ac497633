"""Trusted proxies on the socket binding (`http_server`), with real loopback connections.

The ASGI half is in test_asgi.py (through uvicorn and hypercorn); the rule itself in
tests/core/test_http_proxies.py. Here the address the HTTP layer judges is the one
the accepted socket reports: 127.0.0.1 is the trusted proxy, 127.0.0.2 (another
loopback address, reaching the same 127.0.0.1 listener) is anyone else.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_adapters.http import http_server
from mcp_core.http import HostPolicy, RequestHead
from tests.adapters.asgi_apps import probe_server
from tests.core.test_http_server import http_request, parse_responses

pytestmark = pytest.mark.anyio

PUBLIC = HostPolicy(allowed_hosts=("mcp.example.com",))
FORWARDED = {
    "X-Forwarded-Host": "mcp.example.com",
    "X-Forwarded-Proto": "https",
    "X-Forwarded-For": "203.0.113.9",
}
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def principal(head: RequestHead) -> str:
    assert head.view is not None
    return f"{head.peer} {head.view.client} {head.view.base_url}"


async def whoami(
    port: int, source: str, host: str, headers: dict[str, str]
) -> tuple[int, str | None]:
    """One 2026-07-28 call of the probe's `whoami` from `source`, on its own connection."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}, "_meta": META},
    }
    headers = {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "whoami",
        **headers,
    }
    raw = http_request(body=body, host=host, headers={**headers, "Connection": "close"})
    data = b""
    with anyio.fail_after(30):
        async with await anyio.connect_tcp("127.0.0.1", port, local_host=source) as stream:
            await stream.send(raw)
            try:
                while chunk := await stream.receive():
                    data += chunk
            except anyio.EndOfStream:
                pass
    [resp] = parse_responses(data)
    if resp.status != 200:
        return resp.status, None
    result: Any = json.loads(resp.body)["result"]
    return 200, result["content"][0]["text"]


async def test_the_socket_binding_believes_only_its_trusted_proxy() -> None:
    probe = probe_server()
    async with http_server(
        probe, port=0, host_policy=PUBLIC, trusted_proxies=["127.0.0.1"], principal_of=principal
    ) as running:
        upstream = f"127.0.0.1:{running.port}"
        assert await whoami(running.port, "127.0.0.1", upstream, FORWARDED) == (
            200,
            "127.0.0.1 203.0.113.9 https://mcp.example.com",
        )
        assert (await whoami(running.port, "127.0.0.1", upstream, {}))[0] == 421
        assert (await whoami(running.port, "127.0.0.2", upstream, FORWARDED))[0] == 421
        assert await whoami(running.port, "127.0.0.2", "mcp.example.com", FORWARDED) == (
            200,
            "127.0.0.2 127.0.0.2 http://mcp.example.com",
        )


async def test_without_trusted_proxies_nobody_is_believed() -> None:
    probe = probe_server()
    async with http_server(probe, port=0, host_policy=PUBLIC, principal_of=principal) as running:
        assert (await whoami(running.port, "127.0.0.1", f"127.0.0.1:{running.port}", FORWARDED))[
            0
        ] == 421
