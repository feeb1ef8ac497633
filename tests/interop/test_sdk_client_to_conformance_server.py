"""The official SDK's `Client` calling OUR conformance example server, a few tools.

examples/conformance/server.py runs as a subprocess: over Streamable HTTP with
its own command line (`python examples/conformance/server.py --port P`), and
over stdio through our CLI (`python -m mcp_adapters run
examples/conformance/server.py`, spawned by the SDK's stdio transport). SDK
modes: `mode="legacy"` (2025-11-25) and the SDK's default (`"auto"`, which
settles on 2026-07-28). Over stdio one SDK client per mode is shared by the
module.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client

from .conftest import (
    CONFORMANCE_SERVER,
    ServerProcess,
    held_open,
    http_servers,
    our_server_argv,
    sdk_stdio,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("mode", ["legacy", "default"]),
    pytest.mark.parametrize("transport", ["http", "stdio"]),
]

VERSION = {"legacy": "2025-11-25", "default": "2026-07-28"}


def sdk_client(target: Any, mode: str) -> Client:
    """The SDK's Client; `default` passes no `mode` (the SDK's own default, "auto")."""
    return Client(target) if mode == "default" else Client(target, mode=mode)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    argv = [sys.executable, str(CONFORMANCE_SERVER), "--port", "{port}"]
    with http_servers({"conformance": argv}, tmp_path_factory.mktemp("conformance")) as started:
        yield started["conformance"]


@pytest.fixture(scope="module")
async def stdio_clients(anyio_backend: str) -> AsyncIterator[dict[str, Client]]:
    target = sdk_stdio(our_server_argv(CONFORMANCE_SERVER), "module")
    async with held_open({mode: sdk_client(target, mode) for mode in VERSION}) as clients:
        yield clients


@pytest.fixture
def connect(request: pytest.FixtureRequest, transport: str, mode: str) -> Any:
    """`async with connect() as client:`, an SDK client on the conformance server."""
    # Module fixtures are resolved here (a sync fixture), not inside the running test.
    shared = request.getfixturevalue("stdio_clients") if transport == "stdio" else None
    server = request.getfixturevalue("server") if transport == "http" else None

    @contextlib.asynccontextmanager
    async def open_client() -> AsyncIterator[Client]:
        if shared is not None:
            yield shared[mode]
            return
        async with sdk_client(server.url, mode) as client:
            yield client

    return open_client


async def test_simple_text(connect: Any, mode: str) -> None:
    async with connect() as client:
        assert client.protocol_version == VERSION[mode]
        assert client.server_info is not None
        assert client.server_info.name == "mcp-sansio-conformance-server"
        result = await client.call_tool("test_simple_text", {})
    assert [block.model_dump(exclude_none=True) for block in result.content] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    assert result.is_error is False
    assert result.structured_content is None  # structured_output=False


async def test_tool_with_progress(connect: Any, mode: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with connect() as client:
        result = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
    assert result.content[0].text == "Tool with progress executed successfully"
    # All three notifications arrive before the result, on both generations.
    assert progress == [
        (0, 100, "step 1 of 3"),
        (50, 100, "step 2 of 3"),
        (100, 100, "step 3 of 3"),
    ]


async def test_error_handling(connect: Any, mode: str) -> None:
    async with connect() as client:
        result = await client.call_tool("test_error_handling", {})
    assert result.is_error is True
    (block,) = result.content
    assert block.type == "text"
    assert "This tool intentionally returns an error for testing" in block.text


async def test_tools_list(connect: Any, mode: str) -> None:
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {"test_simple_text", "test_tool_with_progress", "test_error_handling"} <= set(tools)
    assert tools["test_simple_text"].description == "Returns a simple text response."
