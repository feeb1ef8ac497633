"""`async def` tools, now started eagerly on asyncio (`backends._eager`), as before on trio.

A coroutine tool's task takes its first step where the request arrives; one
that never suspends is answered there, like a plain function. What a tool can
observe must not change with that: it runs in a task of its own (the same one
before and after its awaits), its context variables are its own, anyio cancel
scopes and `asyncio.timeout` bind to its task, an exception before its first
await ends the call as it did, and every way a call can be cancelled (the
client's `notifications/cancelled`, the connection closing, the server
stopping) still reaches it. Each is pinned here on asyncio and trio, on both
eras where the era matters, in process and over a real TCP stream.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import anyio
import anyio.abc
import pytest
import sniffio
import trio

from mcp_adapters import Client, current_backend
from mcp_adapters._errors import ConnectionClosedError, RequestTimeoutError
from mcp_adapters.server import Context, MCPServer, ToolFailure
from mcp_adapters.server._serve import request_handler
from mcp_adapters.transports.link import link_pair
from mcp_core import ClientConfig, ClientConnection, MCPError
from tests.timing import HANG

from .conftest import MODES

pytestmark = pytest.mark.anyio


def current_task() -> object:
    """The running task object itself (held, so that no two calls can share an id)."""
    if sniffio.current_async_library() == "trio":
        return trio.lowlevel.current_task()
    return asyncio.current_task()


VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


class Seen:
    """What the tools saw, for the test to look at afterwards."""

    def __init__(self) -> None:
        self.tasks: list[tuple[object, object]] = []  # (the task before the await, after)
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.finished = anyio.Event()


def build() -> tuple[MCPServer, Seen]:
    mcp = MCPServer("coroutine tools")
    seen = Seen()

    @mcp.tool()
    async def echo(text: str) -> str:
        return text

    @mcp.tool()
    async def which_task(suspend: bool) -> str:
        before = current_task()
        if suspend:
            await anyio.sleep(0)
        seen.tasks.append((before, current_task()))
        return "ok"

    @mcp.tool()
    async def context_var(value: str, suspend: bool) -> str:
        found = VAR.get()
        VAR.set(value)
        if suspend:
            await anyio.sleep(0)
        return f"{found}->{VAR.get()}"

    @mcp.tool()
    async def scoped(suspend_first: bool) -> str:
        # Entered in the first step (before any await), left after suspending: the scope
        # is bound to the tool's task, so this only works if the first step ran as it.
        with anyio.move_on_after(0.05) as scope:
            if suspend_first:
                await anyio.sleep(0)
            await anyio.sleep(HANG)
        return "moved on" if scope.cancelled_caught else "slept"

    @mcp.tool()
    async def crash_first() -> str:
        raise RuntimeError("before any await")

    @mcp.tool()
    async def fail_first() -> str:
        raise ToolFailure("refused at once")

    @mcp.tool()
    async def refuse_first() -> str:
        raise MCPError(4002, "not a chance", {"at": "first step"})

    @mcp.tool()
    async def crash_later() -> str:
        await anyio.sleep(0)
        raise RuntimeError("after an await")

    @mcp.tool()
    async def progress(ctx: Context, steps: int) -> str:
        for step in range(steps):
            await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        return "done"

    @mcp.tool()
    async def version(ctx: Context) -> str:
        return ctx.protocol_version

    @mcp.tool()
    async def wait() -> str:
        seen.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            seen.cancelled.set()
        raise AssertionError("unreachable")

    @mcp.tool()
    async def wait_at_once() -> str:
        # Suspends in its first step; cancelled before its task's next step can run.
        try:
            await anyio.sleep_forever()
        finally:
            seen.cancelled.set()
        raise AssertionError("unreachable")

    return mcp, seen


@pytest.mark.parametrize("mode", MODES)
async def test_every_ending_of_a_coroutine_tool(anyio_backend: str, mode: str) -> None:
    mcp, _ = build()
    async with Client(mcp, mode=mode) as client:
        echoed = await client.call_tool("echo", {"text": "hi"})
        invalid = await client.call_tool("echo", {"text": 1})
        crashed = await client.call_tool("crash_first", {})
        failed = await client.call_tool("fail_first", {})
        later = await client.call_tool("crash_later", {})
        version = await client.call_tool("version", {})
        with pytest.raises(MCPError) as refused:
            await client.call_tool("refuse_first", {})
        assert (await client.call_tool("echo", {"text": "still"})).content[0].text == "still"
    assert echoed.content[0].text == "hi"
    assert echoed.structured_content == {"result": "hi"}
    assert invalid.is_error is True
    assert invalid.content[0].text.startswith("Invalid arguments for tool echo")
    assert crashed.is_error is True
    assert crashed.content[0].text == "Error executing tool crash_first: before any await"
    assert failed.is_error is True and failed.content[0].text == "refused at once"
    assert later.content[0].text == "Error executing tool crash_later: after an await"
    assert version.content[0].text == client.protocol_version
    assert (refused.value.code, refused.value.message) == (4002, "not a chance")
    assert refused.value.data == {"at": "first step"}


async def test_a_tool_runs_in_a_task_of_its_own(anyio_backend: str) -> None:
    mcp, seen = build()
    async with Client(mcp) as client:
        caller = current_task()
        for suspend in (False, True, False, True):
            await client.call_tool("which_task", {"suspend": suspend})
        assert caller is current_task()
    tasks = [before for before, _ in seen.tasks]
    # The same task before and after its await; never the caller's; one per call.
    assert all(before is after for before, after in seen.tasks)
    assert all(task is not caller for task in tasks)
    assert len({id(task) for task in tasks}) == len(tasks) == 4


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_asyncio_current_task_is_the_tools_own(anyio_backend: str) -> None:
    mcp = MCPServer("current task")
    found: list[tuple[Any, Any, bool]] = []

    @mcp.tool()
    async def task_of(suspend: bool) -> str:
        task = asyncio.current_task()
        if suspend:
            await asyncio.sleep(0)
        found.append((task, asyncio.current_task(), task is not None and task.done()))
        return "ok"

    async with Client(mcp) as client:
        caller = asyncio.current_task()
        before = len(asyncio.all_tasks())
        for suspend in (False, True) * 3:
            await client.call_tool("task_of", {"suspend": suspend})
        await asyncio.sleep(0)
        # None of the tools' tasks is left behind, pending or registered.
        assert len(asyncio.all_tasks()) == before
        assert asyncio.current_task() is caller
    for task, after, done in found:
        assert isinstance(task, asyncio.Task) and task is after and task is not caller
        assert not done
        assert task.done() and task.result() is None
    assert len({id(task) for task, _, _ in found}) == len(found)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_asyncio_timeout_in_a_tool_binds_to_its_task(anyio_backend: str) -> None:
    mcp = MCPServer("timeout")

    @mcp.tool()
    async def timed(suspend_first: bool) -> str:
        try:
            async with asyncio.timeout(0.05):
                if suspend_first:
                    await asyncio.sleep(0)
                await asyncio.sleep(HANG)
        except TimeoutError:
            return "timed out"
        return "slept"

    async with Client(mcp) as client:
        with anyio.fail_after(HANG):
            for suspend_first in (False, True):
                result = await client.call_tool("timed", {"suspend_first": suspend_first})
                assert result.content[0].text == "timed out"
            assert (await client.call_tool("timed", {"suspend_first": False})).content


async def test_a_tools_context_variables_are_its_own(anyio_backend: str) -> None:
    mcp, _ = build()
    async with Client(mcp) as client:
        VAR.set("caller's")
        answers = [
            (await client.call_tool("context_var", {"value": v, "suspend": s})).content[0].text
            for v, s in (("a", False), ("b", True), ("c", False))
        ]
        # What a tool set stays in its task: the caller and the next call never see it.
        assert VAR.get() == "caller's"
    # In process, a tool's task copies the context where the request arrived (the
    # caller's, here), as a task spawned there always did.
    assert answers == ["caller's->a", "caller's->b", "caller's->c"]


async def test_cancel_scopes_in_a_tool_bind_to_its_task(anyio_backend: str) -> None:
    mcp, _ = build()
    async with Client(mcp) as client:
        with anyio.fail_after(HANG):
            for suspend_first in (False, True):
                result = await client.call_tool("scoped", {"suspend_first": suspend_first})
                assert result.is_error is not True, result.content
                assert result.content[0].text == "moved on"


@pytest.mark.parametrize("mode", MODES)
async def test_progress_from_a_tool_that_never_suspends(anyio_backend: str, mode: str) -> None:
    mcp, _ = build()
    reported: list[tuple[float, float | None, str | None]] = []
    async with Client(mcp, mode=mode) as client:
        result = await client.call_tool(
            "progress",
            {"steps": 3},
            progress_callback=lambda p, t, m: reported.append((p, t, m)),
        )
    assert result.content[0].text == "done"
    assert reported == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("mode", MODES)
async def test_the_client_cancelling_reaches_a_waiting_tool(anyio_backend: str, mode: str) -> None:
    mcp, seen = build()
    async with Client(mcp, mode=mode) as client:
        with anyio.fail_after(HANG):
            with pytest.raises(RequestTimeoutError):
                await client.call_tool("wait", {}, read_timeout=0.1)
            if seen.started.is_set():  # (a loaded machine may time out before it starts)
                await seen.cancelled.wait()
            # Cancelled by the caller itself (its scope), right after the request went out:
            # the tool suspended in its first step and is cancelled before its task's next.
            seen.cancelled = anyio.Event()
            with anyio.move_on_after(0):
                await client.call_tool("wait_at_once", {})
            await seen.cancelled.wait()
            assert (await client.call_tool("echo", {"text": "after"})).content[0].text == "after"


@pytest.mark.parametrize("closing", ["server", "client"])
async def test_a_closing_connection_cancels_a_waiting_tool(
    anyio_backend: str, closing: str
) -> None:
    mcp, seen = build()
    backend = current_backend()
    client_end, server_end = link_pair()
    server = backend.Session(mcp.new_connection(), server_end, on_request=request_handler(mcp))
    config = ClientConfig(name="link", mode="legacy")
    async with server, backend.Session(ClientConnection(config), client_end) as client:
        assert await client.request("tools/call", {"name": "echo", "arguments": {"text": "a"}})

        async def close_mid_call() -> None:
            await seen.started.wait()  # the request is in, its tool waiting
            await (server if closing == "server" else client).aclose()

        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as group:
                group.start_soon(close_mid_call)
                with pytest.raises(ConnectionClosedError):
                    await client.request("tools/call", {"name": "wait"})
            await seen.cancelled.wait()
            await server.wait_closed()


async def test_nothing_is_left_of_calls_that_ended(anyio_backend: str) -> None:
    """A call answered in its first step leaves no handler registered (nothing that a
    cancellation or the session's end would still try to stop), one that waited neither."""
    mcp, _ = build()
    backend = current_backend()
    client_end, server_end = link_pair()
    server = backend.Session(mcp.new_connection(), server_end, on_request=request_handler(mcp))
    config = ClientConfig(name="link", mode="legacy")
    async with server, backend.Session(ClientConnection(config), client_end) as client:
        with anyio.fail_after(HANG):
            for i in range(20):
                suspend = i % 2 == 1
                await client.request(
                    "tools/call", {"name": "which_task", "arguments": {"suspend": suspend}}
                )
            await anyio.sleep(0.01)  # the waited-for handlers' last steps
            assert server._core.running_handlers == 0


async def test_over_tcp(anyio_backend: str) -> None:
    """The stream driver: the first step runs in the session's reader, not the caller."""
    mcp, seen = build()
    backend = current_backend()

    async def serve(*, task_status: anyio.abc.TaskStatus[int]) -> None:
        async with backend.tcp_server(request_handler(mcp), mcp.config) as server:
            task_status.started(server.port)
            await server.serve_forever()

    async with anyio.create_task_group() as group:
        port = await group.start(serve)
        with anyio.fail_after(HANG):
            async with Client(f"tcp://127.0.0.1:{port}") as client:
                echoed = await client.call_tool("echo", {"text": "over tcp"})
                crashed = await client.call_tool("crash_first", {})
                for suspend in (False, True):
                    await client.call_tool("which_task", {"suspend": suspend})
                with pytest.raises(RequestTimeoutError):
                    await client.call_tool("wait", {}, read_timeout=0.1)
                if seen.started.is_set():
                    await seen.cancelled.wait()
        group.cancel_scope.cancel()
    assert echoed.content[0].text == "over tcp"
    assert crashed.content[0].text == "Error executing tool crash_first: before any await"
    assert all(before is after for before, after in seen.tasks) and len(seen.tasks) == 2


@pytest.mark.parametrize("mode", MODES)
async def test_over_http(anyio_backend: str, mode: str) -> None:
    """The HTTP server starts its handlers eagerly on asyncio too: one that never
    suspends is answered in the step that read its request, and what a tool observes
    is as in process (its own task across an await, cancel scopes bound to it, the
    client's cancelling reaching it); nothing stays registered after the calls."""
    from mcp_adapters.transports.http_server import http_server

    mcp, seen = build()
    async with http_server(mcp, port=0) as server:
        with anyio.fail_after(HANG):
            async with Client(server.url, mode=mode) as client:
                echoed = await client.call_tool("echo", {"text": "over http"})
                crashed = await client.call_tool("crash_first", {})
                later = await client.call_tool("crash_later", {})
                for suspend in (False, True, False):
                    await client.call_tool("which_task", {"suspend": suspend})
                scoped = [
                    (await client.call_tool("scoped", {"suspend_first": s})).content[0].text
                    for s in (False, True)
                ]
                with pytest.raises(RequestTimeoutError):
                    await client.call_tool("wait", {}, read_timeout=0.1)
                if seen.started.is_set():
                    await seen.cancelled.wait()
                assert (await client.call_tool("echo", {"text": "after"})).content
            while server.running_handlers:  # the cancelled tool's last step
                await anyio.sleep(0.01)
    assert echoed.content[0].text == "over http"
    assert crashed.content[0].text == "Error executing tool crash_first: before any await"
    assert later.content[0].text == "Error executing tool crash_later: after an await"
    assert scoped == ["moved on", "moved on"]
    tasks = [before for before, _ in seen.tasks]
    assert all(before is after for before, after in seen.tasks)
    assert len({id(task) for task in tasks}) == len(tasks) == 3
    if anyio_backend == "asyncio":
        # Each handler's task is named after the server's handler coroutine, as a
        # session's are after theirs (not "Task-<n>", which 3.11 formats per task).
        assert {task.get_name() for task in tasks} <= {  # type: ignore[attr-defined]
            "HTTPServer._run_in_place",
            "HTTPServer._run_native_handler",
        }
