"""The official SDK's server API a port meets: an unnamed server, `lifespan=`,
`add_resource`, `ctx.read_resource`, `ctx.request_context`, `run_*_async`.

In process on asyncio and trio, and through the transports each `run_*_async`
serves (its log line gives the address, as the command line prints it).
"""

from __future__ import annotations

import base64
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_adapters import Client, current_backend
from mcp_adapters.resources import (
    BinaryResource,
    FileResource,
    FunctionResource,
    ReadResourceContents,
    TextResource,
)
from mcp_adapters.server import Context, MCPServer
from mcp_adapters.server._serve import request_handler
from mcp_adapters.transports.link import link_pair
from mcp_core import ClientConnection

from .conftest import MODES

pytestmark = pytest.mark.anyio


async def text_of(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> str:
    result = await client.call_tool(tool, arguments or {})
    return str(result.content[0].text)


# ------------------------------------------------------------------ names


async def test_a_server_needs_no_name(anyio_backend: str) -> None:
    mcp = MCPServer()

    @mcp.tool()
    def ping() -> str:
        return "pong"

    async with Client(mcp) as client:
        assert client.server_info.name == "mcp-server"
        assert await text_of(client, "ping") == "pong"


def test_shared_request_state_keys_need_a_name() -> None:
    with pytest.raises(ValueError, match="name the server"):
        MCPServer(request_state_keys=[b"k" * 32])
    assert MCPServer("named", request_state_keys=[b"k" * 32]).name == "named"


# --------------------------------------------------------------- lifespan


@dataclass
class Database:
    events: list[str] = field(default_factory=list)
    connected: bool = False


@dataclass
class AppState:
    db: Database


def lifespan_server(database: Database) -> MCPServer:
    @contextlib.asynccontextmanager
    async def app_lifespan(server: MCPServer) -> AsyncIterator[AppState]:
        assert server is mcp
        database.connected = True
        database.events.append("connect")
        try:
            yield AppState(db=database)
        finally:
            database.connected = False
            database.events.append("disconnect")

    mcp = MCPServer("Bookshop", lifespan=app_lifespan)

    @mcp.tool()
    async def status(ctx: Context[AppState]) -> str:
        """Whether the database is connected."""
        state = ctx.request_context.lifespan_context
        return "connected" if state.db.connected else "disconnected"

    return mcp


async def test_lifespan_is_entered_once_for_concurrent_clients(
    anyio_backend: str, mode: str
) -> None:
    database = Database()
    mcp = lifespan_server(database)
    assert database.events == []  # building the server connects nothing
    async with Client(mcp, mode=mode) as first:
        assert await text_of(first, "status") == "connected"
        async with Client(mcp, mode=mode) as second:
            assert await text_of(second, "status") == "connected"
        assert await text_of(first, "status") == "connected"
    assert database.events == ["connect", "disconnect"]
    # A new serving period runs it again.
    async with Client(mcp, mode=mode) as again:
        assert await text_of(again, "status") == "connected"
    assert database.events == ["connect", "disconnect"] * 2


async def test_the_first_server_leaves_the_lifespan_last(anyio_backend: str) -> None:
    """Left in the task that entered it (trio's cancel scopes need that), after the others."""
    database = Database()
    mcp = lifespan_server(database)
    second_in = anyio.Event()
    first_done = anyio.Event()
    first: list[Client] = []

    async def second() -> None:
        async with Client(mcp) as client:
            second_in.set()
            with anyio.fail_after(30):
                while not first[0].session.closed:  # the first client has gone
                    await anyio.sleep(0.01)
            # ...but not the lifespan, and the first server has not finished either.
            assert not first_done.is_set()
            assert await text_of(client, "status") == "connected"

    async with anyio.create_task_group() as group:
        async with Client(mcp) as client:
            first.append(client)
            group.start_soon(second)
            await second_in.wait()
        first_done.set()
    assert database.events == ["connect", "disconnect"]


async def test_the_tool_schema_leaves_the_typed_context_out(anyio_backend: str) -> None:
    mcp = lifespan_server(Database())
    async with Client(mcp) as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.input_schema.get("properties", {}) == {}


async def test_without_a_lifespan_the_context_is_an_empty_dict(anyio_backend: str) -> None:
    mcp = MCPServer("Plain")

    @mcp.tool()
    async def state(ctx: Context) -> str:
        return repr(ctx.request_context.lifespan_context)

    async with Client(mcp) as client:
        assert await text_of(client, "state") == "{}"


async def test_a_lifespan_that_fails_fails_the_serving(anyio_backend: str) -> None:
    @contextlib.asynccontextmanager
    async def broken(server: MCPServer) -> AsyncIterator[None]:
        raise OSError("database unreachable")
        yield

    mcp = MCPServer("Broken", lifespan=broken)
    with pytest.raises(OSError, match="database unreachable"):
        async with Client(mcp):
            pass


async def test_an_own_transport_runs_the_lifespan_with_running(anyio_backend: str) -> None:
    """Serving by hand (a session over a link of one's own) enters it only when asked."""
    database = Database()
    mcp = lifespan_server(database)
    backend = current_backend()

    async def call_status() -> str:
        client_end, server_end = link_pair()
        async with (
            backend.Session(mcp.new_connection(), server_end, on_request=request_handler(mcp)),
            backend.Session(ClientConnection(Client(mcp).config), client_end) as session,
        ):
            result = await session.request("tools/call", {"name": "status", "arguments": {}})
        return str(result.content[0].text)

    outside = await call_status()
    assert "async with mcp.running():" in outside  # the tool failed, and says how to fix it
    async with mcp.running() as state:
        assert state.db is database
        assert await call_status() == "connected"
    assert database.events == ["connect", "disconnect"]


# -------------------------------------------------------------- resources


@dataclass
class Note:
    """A resource object of a port's own: only `uri` and `read()`."""

    uri: str
    body: str

    def read(self) -> str:
        return self.body


def resource_server(tmp_path: Path) -> MCPServer:
    mcp = MCPServer("Files")
    (tmp_path / "notes.txt").write_text("café")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG")
    mcp.add_resource(TextResource(uri="memo://text", text="hello", description="A memo"))
    mcp.add_resource(BinaryResource(uri="memo://bytes", name="raw", data=b"\x00\x01"))
    mcp.add_resource(FileResource(uri="file://notes", path=tmp_path / "notes.txt"))
    mcp.add_resource(
        FileResource(uri="file://logo", path=tmp_path / "logo.png", mime_type="image/png")
    )
    mcp.add_resource(FunctionResource(uri="fn://sync", fn=lambda: {"n": 1}))

    async def later() -> str:
        return "async"

    mcp.add_resource(FunctionResource(uri="fn://async", fn=later, mime_type="text/markdown"))
    mcp.add_resource(Note("note://1", "plain read()"))

    @mcp.tool()
    async def read(uri: str, ctx: Context) -> str:
        """Read one of this server's resources through the context."""
        (part,) = await ctx.read_resource(uri)
        assert isinstance(part, ReadResourceContents)
        content = part.content
        shown = content if isinstance(content, str) else f"bytes {content.hex()}"
        return f"{shown} ({part.mime_type})"

    return mcp


async def test_add_resource_lists_and_reads(anyio_backend: str, tmp_path: Path) -> None:
    async with Client(resource_server(tmp_path)) as client:
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        assert listed["memo://text"].description == "A memo"
        assert listed["memo://text"].name == "memo://text"  # the URI, when unnamed
        assert listed["memo://bytes"].name == "raw"
        assert listed["memo://bytes"].description is None  # not read()'s docstring
        assert listed["file://logo"].mime_type == "image/png"
        assert listed["note://1"].name == "note://1"
        text = await client.read_resource("memo://text")
        assert text.contents[0].text == "hello"
        blob = await client.read_resource("memo://bytes")
        assert base64.b64decode(blob.contents[0].blob) == b"\x00\x01"
        assert blob.contents[0].mime_type == "application/octet-stream"
        notes = await client.read_resource("file://notes")
        assert notes.contents[0].text == "café"  # text/plain: decoded as UTF-8
        logo = await client.read_resource("file://logo")
        assert base64.b64decode(logo.contents[0].blob) == b"\x89PNG"  # image/png: bytes
        data = await client.read_resource("fn://sync")
        assert data.contents[0].text == '{\n  "n": 1\n}'
        assert (await client.read_resource("note://1")).contents[0].text == "plain read()"


async def test_ctx_read_resource_returns_content_and_mime_type(
    anyio_backend: str, mode: str, tmp_path: Path
) -> None:
    async with Client(resource_server(tmp_path), mode=mode) as client:
        assert await text_of(client, "read", {"uri": "memo://text"}) == "hello (text/plain)"
        assert await text_of(client, "read", {"uri": "fn://async"}) == "async (text/markdown)"
        assert (
            await text_of(client, "read", {"uri": "memo://bytes"})
            == "bytes 0001 (application/octet-stream)"
        )


def test_add_resource_refuses_a_template_and_a_relative_file() -> None:
    mcp = MCPServer("x")
    with pytest.raises(ValueError, match=r"use @mcp\.resource"):
        mcp.add_resource(TextResource(uri="user://{id}", text=""))
    with pytest.raises(ValueError, match="absolute path"):
        FileResource(uri="file://x", path=Path("relative.txt"))


# ---------------------------------------------------------- run_*_async


async def served_url(caplog: pytest.LogCaptureFixture, scheme: str) -> str:
    """The address a run_*_async logged (as the command line prints it)."""
    with anyio.fail_after(30):
        while True:
            for record in caplog.records:
                message = record.getMessage()
                if message.startswith("serving ") and f" on {scheme}://" in message:
                    return message.rsplit(" ", 1)[1]
            await anyio.sleep(0.01)


@pytest.mark.parametrize(
    ("method", "scheme"),
    [
        ("run_streamable_http_async", "http"),
        ("run_websocket_async", "ws"),
        ("run_tcp_async", "tcp"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
async def test_run_async_serves_inside_the_lifespan(
    method: str, scheme: str, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    database = Database()
    mcp = lifespan_server(database)
    with caplog.at_level(logging.INFO, logger="mcp_adapters"):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: getattr(mcp, method)(port=0))
            url = await served_url(caplog, scheme)
            async with Client(url, mode=mode) as client:
                assert await text_of(client, "status") == "connected"
            group.cancel_scope.cancel()
    assert database.events == ["connect", "disconnect"]
