"""Served connections do not outlive their sessions (regression: MCPServer kept them all)."""

import gc

import pytest

from mcp_adapters import Client
from mcp_adapters.server import MCPServer
from mcp_core import ServerConnection

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_closed_connections_are_collected(mode: str) -> None:
    mcp = MCPServer("leak-check")

    @mcp.tool()
    def echo(text: str) -> str:
        return text

    for _ in range(10):
        async with Client(mcp, mode=mode) as client:
            result = await client.call_tool("echo", {"text": "hi"})
            assert result.content[0].text == "hi"
    gc.collect()
    assert len(mcp._live) == 0
    assert not [
        o for o in gc.get_objects() if isinstance(o, ServerConnection) and o.config is mcp.config
    ]
