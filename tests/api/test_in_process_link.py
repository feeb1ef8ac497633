"""`Client(MCPServer)` over the direct in-process link, and the inline tool path.

The link hands bytes from one engine to the other in the caller's stack; the
server answers plain-function tools where the request arrives, without a task.
These tests pin what must still hold: deadlines fire, either end's close
reaches the other, concurrency is intact, and every way a tool can end comes
out as it does through `MCPServer.handle`.
"""

import asyncio
from typing import Any

import anyio
import pytest

from mcp_adapters import Client, current_backend
from mcp_adapters._errors import ConnectionClosedError, RequestTimeoutError
from mcp_adapters.server import Context, MCPServer, ToolFailure
from mcp_adapters.server._functions import FunctionTool
from mcp_adapters.server._serve import request_handler
from mcp_adapters.transports.link import link_pair
from mcp_core import ClientConfig, ClientConnection, MCPError, ServerConnection
from mcp_core._config import to_wire
from mcp_core.testing import default_server_config
from tests.timing import HANG

from .conftest import MODERN

pytestmark = pytest.mark.anyio

MODES = ["legacy", MODERN]


class Waiting:
    """What the `wait` tool did: it started, and (later) it was cancelled."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()


def build() -> tuple[MCPServer, Waiting]:
    mcp = MCPServer("link tests")
    waiting = Waiting()

    @mcp.tool()
    def echo(text: str) -> str:
        return text

    @mcp.tool()
    def numbers(n: int) -> list[int]:
        return list(range(n))

    @mcp.tool(structured_output=False)
    def plain(text: str) -> str:
        return text

    @mcp.tool()
    def later(text: str) -> Any:
        async def finish() -> str:
            await anyio.sleep(0)
            return text.upper()

        return finish()

    @mcp.tool()
    def refuse() -> str:
        raise MCPError(4001, "not here", {"why": "test"})

    @mcp.tool()
    def fail() -> str:
        raise ToolFailure("nope")

    @mcp.tool()
    def crash() -> str:
        raise RuntimeError("boom")

    @mcp.tool()
    def protocol(ctx: Context) -> str:
        return ctx.protocol_version

    @mcp.tool()
    async def wait() -> str:
        waiting.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            waiting.cancelled.set()
        raise AssertionError("unreachable")

    return mcp, waiting


@pytest.mark.parametrize("mode", MODES)
async def test_every_ending_of_a_plain_tool(anyio_backend: str, mode: str) -> None:
    mcp, _ = build()
    async with Client(mcp, mode=mode) as client:
        echoed = await client.call_tool("echo", {"text": "hi"})
        listed = await client.call_tool("numbers", {"n": 3})
        plain = await client.call_tool("plain", {"text": "x"})
        later = await client.call_tool("later", {"text": "abc"})
        failed = await client.call_tool("fail", {})
        crashed = await client.call_tool("crash", {})
        invalid = await client.call_tool("echo", {"text": 1})
        version = await client.call_tool("protocol", {})
        with pytest.raises(MCPError) as refused:
            await client.call_tool("refuse", {})
    assert echoed.content[0].text == "hi"
    assert echoed.structured_content == {"result": "hi"}
    assert listed.structured_content == {"result": [0, 1, 2]}
    assert plain.structured_content is None
    assert plain.content[0].text == "x"
    assert later.content[0].text == "ABC"
    assert later.structured_content is None  # `-> Any` declares no output schema
    assert failed.is_error is True and failed.content[0].text == "nope"
    assert crashed.is_error is True
    assert crashed.content[0].text == "Error executing tool crash: boom"
    assert invalid.is_error is True
    assert invalid.content[0].text.startswith("Invalid arguments for tool echo")
    assert version.content[0].text == client.protocol_version
    assert (refused.value.code, refused.value.message) == (4001, "not here")
    assert refused.value.data == {"why": "test"}


def test_text_fast_path_matches_the_model_path() -> None:
    def echo(text: str) -> str:
        return text

    def opaque(text: str) -> str | int:
        return text

    for tool in (
        FunctionTool.build(echo),
        FunctionTool.build(echo, structured_output=False),
        FunctionTool.build(opaque),
    ):
        for value in ("hello", "", "ünï\ncode"):
            assert tool.to_wire_result(value) == to_wire(tool.to_result(value))


@pytest.mark.parametrize("mode", MODES)
async def test_sixty_four_concurrent_calls(anyio_backend: str, mode: str) -> None:
    mcp, _ = build()
    results: dict[int, str] = {}
    async with Client(mcp, mode=mode) as client:

        async def call(i: int) -> None:
            result = await client.call_tool("echo", {"text": f"#{i}"})
            results[i] = result.content[0].text

        async with anyio.create_task_group() as group:
            for i in range(64):
                group.start_soon(call, i)
    assert results == {i: f"#{i}" for i in range(64)}


@pytest.mark.parametrize("mode", MODES)
async def test_deadline_fires_without_a_pipe(anyio_backend: str, mode: str) -> None:
    mcp, waiting = build()
    async with Client(mcp, mode=mode) as client:
        with anyio.fail_after(HANG):
            with pytest.raises(RequestTimeoutError):
                await client.call_tool("wait", {}, read_timeout=0.1)
            assert (await client.call_tool("echo", {"text": "still here"})).content[0].text
            # The server was told, and cancelled the tool. (On a loaded machine the
            # deadline can pass before the tool got going; then it never starts.)
            if waiting.started.is_set():
                await waiting.cancelled.wait()


async def test_server_closing_fails_what_the_client_waits_for(anyio_backend: str) -> None:
    mcp, waiting = build()
    backend = current_backend()
    client_end, server_end = link_pair()
    server = backend.Session(mcp.new_connection(), server_end, on_request=request_handler(mcp))
    config = ClientConfig(name="link", mode="legacy")
    async with server, backend.Session(ClientConnection(config), client_end) as client:
        assert await client.request("tools/call", {"name": "echo", "arguments": {"text": "a"}})

        async def close_mid_call() -> None:
            await waiting.started.wait()  # the request is in, its tool running
            await server.aclose()

        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as group:
                group.start_soon(close_mid_call)
                with pytest.raises(ConnectionClosedError):
                    await client.request("tools/call", {"name": "wait"})
            await client.wait_closed()
        assert client.closed


async def test_the_client_leaving_mid_call_ends_the_server_session(anyio_backend: str) -> None:
    """The server's end comes from the link (on asyncio without a task of its own): the
    tool still running is cancelled, and the server session ends once it has."""
    mcp, waiting = build()
    backend = current_backend()
    client_end, server_end = link_pair()
    server = backend.Session(mcp.new_connection(), server_end, on_request=request_handler(mcp))
    config = ClientConfig(name="link", mode="legacy")
    async with server:
        with anyio.fail_after(HANG):
            async with (
                backend.Session(ClientConnection(config), client_end) as client,
                anyio.create_task_group() as group,
            ):

                async def call() -> None:
                    with pytest.raises(ConnectionClosedError):
                        await client.request("tools/call", {"name": "wait"})

                group.start_soon(call)
                await waiting.started.wait()
                await client.aclose()
            await waiting.cancelled.wait()
            await server.wait_closed()
        assert server.closed


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # trio's link timer is a task
@pytest.mark.parametrize("mode", MODES)
async def test_an_idle_asyncio_pair_runs_no_task(anyio_backend: str, mode: str) -> None:
    """On asyncio neither end of an in-process pair keeps a task while idle (on trio the
    deadline timer is a sleeping task, so each end keeps one); leaving closes both."""
    mcp, _ = build()
    before = len(asyncio.all_tasks())
    async with Client(mcp, mode=mode) as client:
        assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
        assert len(asyncio.all_tasks()) == before
        session = client.session
    assert session.closed
    assert len(asyncio.all_tasks()) == before


async def test_a_link_end_serves_one_session(anyio_backend: str) -> None:
    mcp, _ = build()
    backend = current_backend()
    _, server_end = link_pair()
    backend.Session(mcp.new_connection(), server_end)
    with pytest.raises(RuntimeError, match="already in use"):
        backend.Session(mcp.new_connection(), server_end)


@pytest.mark.parametrize("mode", MODES)
async def test_what_an_engine_answers_by_itself_is_delivered(anyio_backend: str, mode: str) -> None:
    """A ping (legacy) or `server/discover` (2026-07-28) is answered by the server's
    engine during the delivery, with no session and no wake: the pump must still carry
    the answer back (a delivery marks the end it delivered to as having output), and
    the next call must find the link idle."""
    method = "ping" if mode == "legacy" else "server/discover"
    mcp, _ = build()
    backend = current_backend()
    client_end, server_end = link_pair()
    server = backend.Session(mcp.new_connection(), server_end, on_request=request_handler(mcp))
    config = ClientConfig(name="link", mode=mode)
    async with server, backend.Session(ClientConnection(config), client_end) as client:
        with anyio.fail_after(HANG):
            for _ in range(3):
                answer = to_wire(await client.request(method))
                if mode == "legacy":
                    assert answer == {}
                else:
                    assert MODERN in answer["supportedVersions"]
                result = await client.request(
                    "tools/call", {"name": "echo", "arguments": {"text": "after"}}
                )
                assert to_wire(result)["content"][0]["text"] == "after"


async def test_the_link_timer_follows_the_engine_deadlines(anyio_backend: str) -> None:
    """The pump asks the engine for its next deadline only while the timer is armed or
    the engine's `deadline_epoch` moved: a call with a deadline arms the timer, its
    answer disarms it, and when one deadline fires the next one still does (the
    expiry makes the pump ask again, with no new deadline set in between)."""
    mcp, _ = build()
    backend = current_backend()
    client_end, server_end = link_pair()
    server = backend.Session(mcp.new_connection(), server_end, on_request=request_handler(mcp))
    config = ClientConfig(name="link", mode="legacy")
    async with server, backend.Session(ClientConnection(config), client_end) as client:
        driver = client_end.driver
        assert driver is not None
        echo = {"name": "echo", "arguments": {"text": "a"}}
        assert await client.request("tools/call", echo)
        assert driver.armed is None
        assert await client.request("tools/call", echo, timeout=HANG)
        assert driver.armed is None  # answered: its deadline went away, and so did the timer
        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as group:

                async def wait_for(timeout: float) -> None:
                    with pytest.raises(RequestTimeoutError):
                        await client.request("tools/call", {"name": "wait"}, timeout=timeout)

                group.start_soon(wait_for, 0.05)
                group.start_soon(wait_for, 0.3)
        assert driver.armed is None
        assert await client.request("tools/call", echo)


async def test_the_wall_clock_is_read_only_for_an_engine_that_needs_it(anyio_backend: str) -> None:
    """A server that seals `requestState` (an `MCPServer` always does, with a key of its
    own if none is given) gets the wall time with every message, as it refuses input
    without it; a client never reads it, so the link does not read the clock for it."""
    assert ServerConnection(default_server_config()).needs_wall_time is False
    sealing = default_server_config(request_state_keys=(b"k" * 32,))
    assert ServerConnection(sealing).needs_wall_time is True
    mcp, _ = build()
    backend = current_backend()
    client_end, server_end = link_pair()
    server_conn = mcp.new_connection()
    assert server_conn.needs_wall_time is True
    server = backend.Session(server_conn, server_end, on_request=request_handler(mcp))
    client_conn = ClientConnection(ClientConfig(name="link", mode="legacy"))
    assert client_conn.needs_wall_time is False
    async with server, backend.Session(client_conn, client_end) as client:
        assert client_end.driver is not None and server_end.driver is not None
        assert client_end.driver.wall is False
        assert server_end.driver.wall is True
        echo_call = {"name": "echo", "arguments": {"text": "a"}}
        result = await client.request("tools/call", echo_call)
        assert result.content[0].text == "a"
