"""Our client adapter against our server adapter, on asyncio and on trio.

Transports: stdio (a real subprocess running tests/adapters/servers/echo_server.py)
and plain TCP on loopback (the same handlers served in-process). Eras: legacy
(`initialize`) and 2026-07-28 (`server/discover` in "auto" mode, or pinned).
The tests drive the native backends from anyio, which runs on both loops.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import socket
import tempfile
import time
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any

import anyio
import pytest

from mcp_adapters import (
    ConnectionClosedError,
    RequestTimeoutError,
    StdioServerParameters,
    TransportError,
)
from mcp_core import INVALID_PARAMS, ClientConfig, Era, MCPError, NotificationReceived
from mcp_core.types import ListRootsResult, Root
from tests.adapters.conftest import echo_server, is_alive, wait_until_dead
from tests.adapters.servers import echo_server as server_module
from tests.timing import HANG, START

BACKENDS = ["asyncio", "trio"]
MODES = ["legacy", "auto"]

Scenario = Callable[..., Awaitable[None]]


def run(backend: str, scenario: Scenario, *args: Any) -> None:
    """Run `scenario(backend_module, *args)` on that loop; on asyncio, check no task is left."""
    module = importlib.import_module(f"mcp_adapters.{backend}")

    async def main() -> None:
        await scenario(module, *args)
        if backend == "asyncio":
            import asyncio

            current = asyncio.current_task()
            leftover = [t for t in asyncio.all_tasks() if t is not current]
            assert not leftover, f"tasks left running: {leftover}"

    anyio.run(main, backend=backend)


def client_config(mode: str) -> ClientConfig:
    """The clients' config. Their "auto" connections also pass a generous
    `probe_timeout`: every server here answers `server/discover`, and one that takes
    its time (most of all a subprocess starting on a loaded machine) must not be taken
    for a legacy one."""
    return ClientConfig(mode=mode, log_level="debug", capabilities={"roots": {}})


#: For a stdio server subprocess: as long for the probe and the handshake as it may
#: take to start on a loaded machine (the defaults are 5 s and 30 s).
SLOW_START = {"probe_timeout": START, "connect_timeout": START}


def text_of(result: Any) -> str:
    value: str = result.content[0].text
    return value


async def call(session: Any, name: str, **arguments: Any) -> str:
    return text_of(await session.request("tools/call", {"name": name, "arguments": arguments}))


async def answer_roots(session: Any, request: Any) -> ListRootsResult:
    assert request.method == "roots/list"
    return ListRootsResult(roots=[Root(uri="file:///workspace")])


async def wait_for_cancelled_tag(session: Any, tag: str) -> None:
    """Ask the server until its `slow` handler reports it saw the cancellation."""
    with anyio.fail_after(HANG):
        while tag not in json.loads(await call(session, "cancelled")):
            await anyio.sleep(0.02)


async def wait_until_stopped(session: Any, tag: str, *, reported: bool) -> None:
    """After a request's deadline, the server's `slow` handler for it is not left running.

    One that had reported progress was running, so it must be cancelled. One that had
    not may never have run: a loaded server can read the request and its cancellation
    together and drop both; if it did run, it must have been cancelled all the same."""
    if reported:
        await wait_for_cancelled_tag(session, tag)
        return
    with anyio.fail_after(HANG):
        while True:
            state = json.loads(await call(session, "slow_state"))
            if tag not in state["started"] or tag in state["cancelled"]:
                return
            await anyio.sleep(0.02)


async def exercise(session: Any, mode: str, notes: list[NotificationReceived]) -> None:
    """Everything a session should do, the same for every backend and transport."""
    connected = session.connected
    assert connected.era is (Era.LEGACY if mode == "legacy" else Era.MODERN)
    assert connected.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")

    tools = await session.request("tools/list")
    assert "echo" in [tool.name for tool in tools.tools]
    assert await call(session, "echo", text="hello") == "hello"

    with pytest.raises(MCPError) as failed:
        await call(session, "fail")
    assert (failed.value.code, failed.value.data) == (INVALID_PARAMS, {"tool": "fail"})

    progress: list[Any] = []
    result = await session.request(
        "tools/call", {"name": "progress", "arguments": {"steps": 3}}, on_progress=progress.append
    )
    assert text_of(result) == "progress done"
    assert [(p.progress, p.total, p.message) for p in progress] == [
        (1, 3, "step 1"),
        (2, 3, "step 2"),
        (3, 3, "step 3"),
    ]

    assert json.loads(await call(session, "log", text="a log line")) == {"sent": True}
    logs = [n for n in notes if n.method == "notifications/message"]
    assert [n.params.data for n in logs] == ["a log line"]

    # The caller cancels: the server's handler is cancelled too.
    tag = f"cancel-{mode}-{time.monotonic_ns()}"
    started = anyio.Event()
    outcome: list[str] = []

    async def slow_call() -> None:
        try:
            await session.request(
                "tools/call",
                {"name": "slow", "arguments": {"tag": tag}},
                on_progress=lambda _: started.set(),
            )
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise

    async with anyio.create_task_group() as group:
        group.start_soon(slow_call)
        with anyio.fail_after(HANG):
            await started.wait()
        group.cancel_scope.cancel()
    assert outcome == ["cancelled"]
    await wait_for_cancelled_tag(session, tag)

    # A deadline: the request fails locally, not before its time, and the server is
    # told to stop (its handler would otherwise run for a minute and answer).
    tag = f"timeout-{mode}-{time.monotonic_ns()}"
    reported: list[Any] = []
    begun = time.monotonic()
    with pytest.raises(RequestTimeoutError) as timed_out:
        await session.request(
            "tools/call",
            {"name": "slow", "arguments": {"tag": tag}},
            timeout=0.4,
            on_progress=reported.append,
        )
    assert time.monotonic() - begun > 0.35  # did not fire early (no upper bound: load)
    assert timed_out.value.method == "tools/call"
    await wait_until_stopped(session, tag, reported=bool(reported))

    if mode == "legacy":  # a server-to-client request, answered by our on_request
        assert json.loads(await call(session, "roots")) == ["file:///workspace"]


# ============================================================================ stdio


@pytest.mark.parametrize(
    ("backend", "server_backend", "mode"),
    [
        ("asyncio", "asyncio", "legacy"),
        ("asyncio", "asyncio", "auto"),
        ("trio", "trio", "legacy"),
        ("trio", "trio", "auto"),
        ("asyncio", "sockets", "legacy"),
        ("trio", "asyncio", "auto"),
    ],
)
def test_stdio_round_trip(backend: str, server_backend: str, mode: str) -> None:
    with tempfile.TemporaryFile() as stderr:

        async def scenario(module: ModuleType) -> None:
            notes: list[NotificationReceived] = []
            async with module.connect_stdio(
                echo_server(server_backend, stderr=stderr.fileno()),
                client_config(mode),
                **SLOW_START,
                on_request=answer_roots,
                on_notification=lambda _, note: notes.append(note),
            ) as session:
                await exercise(session, mode, notes)
                # Stray writes to stdout in the server must not corrupt the stream.
                assert await call(session, "stray") == "wrote to stdout"
                assert await call(session, "echo", text="still fine") == "still fine"
                grandchild = json.loads(await call(session, "grandchild"))["pid"]
                assert is_alive(grandchild)
            # The server exited on end of input; what it started is ended with it.
            assert session.process.returncode == 0
            assert wait_until_dead([grandchild], HANG) == []

        run(backend, scenario)
        stderr.seek(0)
        logged = stderr.read().decode()
    for line in (
        "stray print() from a tool",
        "stray sys.stdout.write",
        "stray os.write to fd 1",
        "stray output of a child process",
    ):
        assert line in logged


@pytest.mark.parametrize("backend", BACKENDS)
def test_stdio_server_killed_mid_call_fails_every_pending_request(backend: str) -> None:
    async def scenario(module: ModuleType) -> None:
        async with module.connect_stdio(
            echo_server(backend), client_config("legacy"), **SLOW_START
        ) as session:
            both_started = anyio.Event()
            started: list[str] = []
            failures: list[tuple[str, BaseException]] = []

            def on_progress(tag: str) -> Callable[[Any], None]:
                def seen(_: Any) -> None:
                    started.append(tag)
                    if len(started) == 2:
                        both_started.set()

                return seen

            async def slow(tag: str) -> None:
                try:
                    await session.request(
                        "tools/call",
                        {"name": "slow", "arguments": {"tag": tag}},
                        on_progress=on_progress(tag),
                    )
                except Exception as exc:
                    failures.append((tag, exc))

            # No request has a timeout: only the end of the connection can end them.
            with anyio.fail_after(HANG):
                async with anyio.create_task_group() as group:
                    group.start_soon(slow, "a")
                    group.start_soon(slow, "b")
                    await both_started.wait()
                    os.kill(session.process.pid, signal.SIGKILL)
            assert sorted(tag for tag, _ in failures) == ["a", "b"]
            for _, exc in failures:
                assert isinstance(exc, ConnectionClosedError), exc
            assert session.closed
            with pytest.raises(ConnectionClosedError):
                await session.request("tools/list")
        assert session.process.returncode == -signal.SIGKILL

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stdio_client_kills_a_hung_server_and_its_children(backend: str) -> None:
    params = echo_server(
        backend, "--ignore-eof", "--ignore-term", close_timeout=0.3, terminate_timeout=0.3
    )

    async def scenario(module: ModuleType) -> None:
        with anyio.fail_after(HANG):
            async with module.connect_stdio(
                params, client_config("legacy"), **SLOW_START
            ) as session:
                server = json.loads(await call(session, "pid"))
                grandchild = json.loads(await call(session, "grandchild"))["pid"]
                assert server["pid"] == server["pgid"] == session.process.pid
                closing = time.monotonic()
        # Closed, and by the last resort (SIGKILL to the whole group), after each grace
        # period ran out in full: end of input, then SIGTERM (a lower bound: no load
        # makes a timer fire early; how long past it is no business of this test).
        assert session.process.returncode == -signal.SIGKILL
        assert time.monotonic() - closing > 0.55
        assert wait_until_dead([server["pid"], grandchild], HANG) == []

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stdio_spawn_failure_is_a_transport_error(backend: str) -> None:
    async def scenario(module: ModuleType) -> None:
        params = StdioServerParameters("/nonexistent/mcp-server")
        with pytest.raises(TransportError, match="cannot start server"):
            async with module.connect_stdio(params):
                pass

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stdio_server_that_dies_at_once_fails_the_handshake(backend: str) -> None:
    async def scenario(module: ModuleType) -> None:
        params = StdioServerParameters("sh", ["-c", "exit 3"])
        with pytest.raises(ConnectionClosedError):
            async with module.connect_stdio(params, client_config("legacy")):
                pass

    run(backend, scenario)


# ============================================================================== TCP


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", [*MODES, "2026-07-28"])
def test_tcp_round_trip(backend: str, mode: str) -> None:
    async def scenario(module: ModuleType) -> None:
        async with module.tcp_server(server_module.async_handler, server_module.CONFIG) as server:
            notes: list[NotificationReceived] = []
            async with module.connect_tcp(
                "127.0.0.1",
                server.port,
                client_config(mode),
                probe_timeout=HANG,
                on_request=answer_roots,
                on_notification=lambda _, note: notes.append(note),
            ) as session:
                if mode == "2026-07-28":  # pinned: no discovery, nothing known about the server
                    assert session.connected.server_capabilities is None
                    mode_seen = "auto"
                else:
                    mode_seen = mode
                await exercise(session, mode_seen, notes)
                assert len(server.sessions) == 1

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tcp_server_closing_fails_the_clients_pending_requests(backend: str) -> None:
    tag = f"server-closing-{backend}-{time.monotonic_ns()}"

    async def scenario(module: ModuleType) -> None:
        async with (
            module.tcp_server(server_module.async_handler, server_module.CONFIG) as server,
            module.connect_tcp(
                "127.0.0.1", server.port, client_config("auto"), probe_timeout=HANG
            ) as session,
        ):
            started = anyio.Event()
            failures: list[BaseException] = []

            async def slow() -> None:
                try:
                    await session.request(
                        "tools/call",
                        {"name": "slow", "arguments": {"tag": tag}},
                        on_progress=lambda _: started.set(),
                    )
                except Exception as exc:
                    failures.append(exc)

            with anyio.fail_after(HANG):
                async with anyio.create_task_group() as group:
                    group.start_soon(slow)
                    await started.wait()
                    await server.aclose()
            assert len(failures) == 1 and isinstance(failures[0], ConnectionClosedError)
            # Closing cancelled the handler (it records that), rather than leaving it to
            # run its minute (then it records nothing).
            with anyio.fail_after(HANG):
                while tag not in server_module.CANCELLED:
                    await anyio.sleep(0.01)

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tcp_client_leaving_mid_call_cancels_the_server_handler(backend: str) -> None:
    tag = f"client-left-{backend}-{time.monotonic_ns()}"

    async def scenario(module: ModuleType) -> None:
        async with module.tcp_server(server_module.async_handler, server_module.CONFIG) as server:
            failures: list[BaseException] = []
            async with module.connect_tcp(
                "127.0.0.1", server.port, client_config("legacy")
            ) as session:
                started = anyio.Event()

                async def slow() -> None:
                    try:
                        await session.request(
                            "tools/call",
                            {"name": "slow", "arguments": {"tag": tag}},
                            on_progress=lambda _: started.set(),
                        )
                    except Exception as exc:
                        failures.append(exc)

                async with anyio.create_task_group() as group:
                    group.start_soon(slow)
                    with anyio.fail_after(HANG):
                        await started.wait()
                    await session.aclose()
            assert len(failures) == 1 and isinstance(failures[0], ConnectionClosedError)
            with anyio.fail_after(HANG):
                while tag not in server_module.CANCELLED:
                    await anyio.sleep(0.01)

    run(backend, scenario)


class TcpTarget:
    """A `Client` target: our TCP transport (the stdio framing) on the running backend."""

    def __init__(self, port: int) -> None:
        self.port = port

    def connect(self, config: ClientConfig, **options: Any) -> Any:
        import mcp_adapters

        return mcp_adapters.current_backend().connect_tcp("127.0.0.1", self.port, config, **options)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tcp_resource_updated_reaches_exactly_the_subscribers(backend: str) -> None:
    """`MCPServer.notify_resource_updated` over TCP, which runs the same session code as
    stdio, with several sessions at once: subscribed, never subscribed, unsubscribed,
    subscribed to another URI, and a 2026-07-28 listen stream. Each client also watches
    `barrier`, announced last: its arrival shows each stream everything sent before."""
    from mcp_adapters.client import Client
    from mcp_adapters.server import MCPServer
    from mcp_adapters.server._serve import request_handler

    watched, other, barrier = "file:///watched", "file:///other", "file:///barrier"
    mcp = MCPServer("subscriptions")
    for uri in (watched, other, barrier):
        mcp.resource(uri, name=uri.rsplit("/", 1)[1])(lambda: "content")
    got: dict[str, list[str]] = {}

    def recorder(name: str) -> Any:
        got[name] = []

        async def handler(message: Any) -> None:
            if getattr(message, "method", None) == "notifications/resources/updated":
                got[name].append(message.params.uri)

        return handler

    async def scenario(module: ModuleType) -> None:
        async with (
            module.tcp_server(request_handler(mcp), mcp.config) as server,
            contextlib.AsyncExitStack() as stack,
        ):
            plan = {"subscribed": [watched], "unsubscribed": [watched], "other": [other]}
            plan["never"] = []
            for name, uris in plan.items():
                client = await stack.enter_async_context(
                    Client(TcpTarget(server.port), mode="legacy", message_handler=recorder(name))
                )
                for uri in [*uris, barrier]:
                    await client.subscribe_resource(uri)
                if name == "unsubscribed":
                    await client.unsubscribe_resource(watched)
            modern = await stack.enter_async_context(
                Client(TcpTarget(server.port), mode="2026-07-28")
            )
            stream = await stack.enter_async_context(
                modern.listen(resource_uris=[watched, barrier])
            )

            assert mcp.notify_resource_updated(watched) == 2
            assert mcp.notify_resource_updated(other) == 1
            assert mcp.notify_resource_updated(barrier) == 5
            with anyio.fail_after(5):
                assert [(await stream.receive()).params.uri for _ in range(2)] == [watched, barrier]
                while not all(uris[-1:] == [barrier] for uris in got.values()):
                    await anyio.sleep(0.01)
            assert got == {
                "subscribed": [watched, barrier],
                "unsubscribed": [barrier],
                "other": [other, barrier],
                "never": [barrier],
            }

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stdio_client_leaving_mid_call_lets_the_server_exit_by_itself(backend: str) -> None:
    """The server answers what is in flight when its input ends; the leaving client
    cancels its call first, so the server stops it and exits at once, not on SIGTERM."""

    async def scenario(module: ModuleType) -> None:
        failures: list[BaseException] = []
        async with module.connect_stdio(echo_server(backend), client_config("legacy")) as session:
            started = anyio.Event()

            async def slow() -> None:
                try:
                    await session.request(
                        "tools/call",
                        {"name": "slow", "arguments": {"tag": "leaving"}},
                        on_progress=lambda _: started.set(),
                    )
                except Exception as exc:
                    failures.append(exc)

            async with anyio.create_task_group() as group:
                group.start_soon(slow)
                with anyio.fail_after(5):
                    await started.wait()
                await session.aclose()
        assert len(failures) == 1 and isinstance(failures[0], ConnectionClosedError)
        assert session.process.returncode == 0

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tcp_connection_refused_is_a_transport_error(backend: str) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def scenario(module: ModuleType) -> None:
        with pytest.raises(TransportError):
            async with module.connect_tcp("127.0.0.1", port):
                pass

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_current_backend_picks_the_running_loop(backend: str) -> None:
    async def scenario(module: ModuleType) -> None:
        import mcp_adapters

        assert mcp_adapters.current_backend() is module

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_handlers_may_answer_on_the_connection_directly(backend: str) -> None:
    """`apply` (and `connection` + `wake`) for core verbs the session does not wrap.

    The answer goes out when the handler sends it, not when the handler ends: each
    handler here waits, after answering, until the client has the answer."""
    order: list[str] = []

    async def on_request(session: Any, request: Any) -> None:
        rid = request.request_id
        name = request.params.name
        if name == "via-apply":
            session.apply(lambda conn: conn.send_result(rid, server_module.text("applied")))
        else:
            session.connection.send_result(rid, server_module.text("woken"))
            session.wake()
        with anyio.move_on_after(HANG):  # a wrong order ends this, and the test fails
            await answered[name].wait()
        order.append(f"{name} handler ended")
        ended[name].set()

    answered: dict[str, anyio.Event] = {}
    ended: dict[str, anyio.Event] = {}

    async def scenario(module: ModuleType) -> None:
        for events in (answered, ended):
            events.update({"via-apply": anyio.Event(), "via-wake": anyio.Event()})
        async with (
            module.tcp_server(on_request, server_module.CONFIG) as server,
            module.connect_tcp(
                "127.0.0.1", server.port, client_config("auto"), probe_timeout=HANG
            ) as session,
        ):
            for name, expected in (("via-apply", "applied"), ("via-wake", "woken")):
                assert await call(session, name) == expected
                order.append(f"{name} answered")
                answered[name].set()
                with anyio.fail_after(2 * HANG):
                    await ended[name].wait()
        assert order == [
            "via-apply answered",
            "via-apply handler ended",
            "via-wake answered",
            "via-wake handler ended",
        ]

    run(backend, scenario)
