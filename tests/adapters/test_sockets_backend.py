"""The blocking backend (`selectors`, threads for handlers): stdio and TCP, both eras.

Also the cross-backend runs (async clients against the blocking TCP server) and
the watchdog: a client process killed outright still takes its server with it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from typing import Any

import pytest

from mcp_adapters import ConnectionClosedError, RequestTimeoutError, TransportError, sockets
from mcp_adapters.transports.process import ServerProcess, Sleep
from mcp_core import INVALID_PARAMS, ClientConfig, Era, MCPError, NotificationReceived
from mcp_core.types import ListRootsResult, Root
from tests.adapters.conftest import SERVERS, echo_server, is_alive, wait_until_dead
from tests.adapters.servers import echo_server as server_module
from tests.adapters.test_async_backends import (
    SLOW_START,
    answer_roots,
    client_config,
    exercise,
    run,
)
from tests.timing import HANG


def call(session: sockets.Session, name: str, **arguments: Any) -> str:
    result = session.request("tools/call", {"name": name, "arguments": arguments})
    text: str = result.content[0].text
    return text


def on_roots(session: sockets.Session, request: Any) -> ListRootsResult:
    assert request.method == "roots/list"
    return ListRootsResult(roots=[Root(uri="file:///workspace")])


def wait_for_cancelled_tag(session: sockets.Session, tag: str) -> None:
    end = time.monotonic() + HANG
    while tag not in json.loads(call(session, "cancelled")):
        assert time.monotonic() < end, f"the server never saw {tag} cancelled"
        time.sleep(0.02)


def wait_until_stopped(session: sockets.Session, tag: str, *, reported: bool) -> None:
    """test_async_backends.wait_until_stopped, blocking."""
    if reported:
        wait_for_cancelled_tag(session, tag)
        return
    end = time.monotonic() + HANG
    while True:
        state = json.loads(call(session, "slow_state"))
        if tag not in state["started"] or tag in state["cancelled"]:
            return
        assert time.monotonic() < end, f"the server never stopped {tag}"
        time.sleep(0.02)


def exercise_blocking(
    session: sockets.Session, mode: str, notes: list[NotificationReceived]
) -> None:
    connected = session.connected
    assert connected is not None
    assert connected.era is (Era.LEGACY if mode == "legacy" else Era.MODERN)

    tools = session.request("tools/list")
    assert "echo" in [tool.name for tool in tools.tools]
    assert call(session, "echo", text="hello") == "hello"

    with pytest.raises(MCPError) as failed:
        call(session, "fail")
    assert failed.value.code == INVALID_PARAMS

    progress: list[Any] = []
    result = session.request(
        "tools/call", {"name": "progress", "arguments": {"steps": 3}}, on_progress=progress.append
    )
    assert result.content[0].text == "progress done"
    assert [p.progress for p in progress] == [1, 2, 3]

    assert json.loads(call(session, "log", text="a log line")) == {"sent": True}
    assert [n.params.data for n in notes if n.method == "notifications/message"] == ["a log line"]

    # A deadline: the request fails locally, not before its time, and the server is
    # told to stop (its handler would otherwise run for a minute and answer).
    tag = f"timeout-{mode}-{time.monotonic_ns()}"
    reported: list[Any] = []
    begun = time.monotonic()
    with pytest.raises(RequestTimeoutError) as timed_out:
        session.request(
            "tools/call",
            {"name": "slow", "arguments": {"tag": tag}},
            timeout=0.4,
            on_progress=reported.append,
        )
    assert time.monotonic() - begun > 0.35  # did not fire early (no upper bound: load)
    assert timed_out.value.method == "tools/call"
    wait_until_stopped(session, tag, reported=bool(reported))

    # Requests from several threads at once share the one connection.
    results: list[str] = []

    def echo(i: int) -> None:
        results.append(call(session, "echo", text=str(i)))

    threads = [threading.Thread(target=echo, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG)
    assert sorted(results, key=int) == [str(i) for i in range(8)]

    if mode == "legacy":
        assert json.loads(call(session, "roots")) == ["file:///workspace"]


# ============================================================================ stdio


@pytest.mark.parametrize(
    ("server_backend", "mode"), [("sockets", "legacy"), ("sockets", "auto"), ("trio", "auto")]
)
def test_stdio_round_trip(server_backend: str, mode: str) -> None:
    notes: list[NotificationReceived] = []
    with (
        tempfile.TemporaryFile() as stderr,
        sockets.connect_stdio(
            echo_server(server_backend, stderr=stderr.fileno()),
            client_config(mode),
            **SLOW_START,
            on_request=on_roots,
            on_notification=lambda _, note: notes.append(note),
        ) as session,
    ):
        exercise_blocking(session, mode, notes)
        assert call(session, "stray") == "wrote to stdout"
        assert call(session, "echo", text="still fine") == "still fine"
        grandchild = json.loads(call(session, "grandchild"))["pid"]
    assert session.process is not None and session.process.returncode == 0
    assert wait_until_dead([grandchild], HANG) == []


def test_stdio_server_killed_mid_call_fails_every_pending_request() -> None:
    with sockets.connect_stdio(
        echo_server("sockets"), client_config("legacy"), **SLOW_START
    ) as session:
        assert session.process is not None
        started = threading.Semaphore(0)
        failures: list[BaseException] = []

        def slow(tag: str) -> None:
            try:
                session.request(
                    "tools/call",
                    {"name": "slow", "arguments": {"tag": tag}},
                    on_progress=lambda _: started.release(),
                )
            except Exception as exc:
                failures.append(exc)

        threads = [threading.Thread(target=slow, args=(tag,)) for tag in "ab"]
        for thread in threads:
            thread.start()
        for _ in threads:
            assert started.acquire(timeout=HANG)
        os.kill(session.process.pid, signal.SIGKILL)
        # No request has a timeout: only the end of the connection can end them.
        for thread in threads:
            thread.join(HANG)
            assert not thread.is_alive()
        assert len(failures) == 2
        for exc in failures:
            assert isinstance(exc, ConnectionClosedError), exc
        with pytest.raises(ConnectionClosedError):
            session.request("tools/list")
    assert session.process.returncode == -signal.SIGKILL


def test_stdio_client_leaving_mid_call_lets_the_server_exit_by_itself() -> None:
    """Told of the abandoned call before its input ends, the server exits with status 0."""
    with sockets.connect_stdio(echo_server("sockets"), client_config("legacy")) as session:
        started = threading.Event()
        failures: list[BaseException] = []

        def slow() -> None:
            try:
                session.request(
                    "tools/call",
                    {"name": "slow", "arguments": {"tag": "leaving"}},
                    on_progress=lambda _: started.set(),
                )
            except Exception as exc:
                failures.append(exc)

        thread = threading.Thread(target=slow)
        thread.start()
        assert started.wait(5)
        session.close()
        thread.join(5)
    assert len(failures) == 1 and isinstance(failures[0], ConnectionClosedError)
    assert session.process is not None and session.process.returncode == 0


def test_stdio_client_kills_a_hung_server_and_its_children() -> None:
    params = echo_server(
        "sockets", "--ignore-eof", "--ignore-term", close_timeout=0.3, terminate_timeout=0.3
    )
    with sockets.connect_stdio(params, client_config("auto"), **SLOW_START) as session:
        server = json.loads(call(session, "pid"))["pid"]
        grandchild = json.loads(call(session, "grandchild"))["pid"]
        closing = time.monotonic()
    # Closed, and by the last resort (SIGKILL to the whole group), after each grace
    # period ran out in full: end of input, then SIGTERM (a lower bound: no load makes
    # a timer fire early; how long past it is no business of this test).
    assert session.process is not None and session.process.returncode == -signal.SIGKILL
    assert time.monotonic() - closing > 0.55
    assert wait_until_dead([server, grandchild], HANG) == []


def test_interrupting_a_request_cancels_it_on_the_server() -> None:
    """Ctrl-C inside `request()` tells the server before the interrupt propagates."""
    tag = f"interrupted-{time.monotonic_ns()}"
    with sockets.connect_stdio(
        echo_server("sockets"), client_config("legacy"), **SLOW_START
    ) as session:

        def interrupt_soon(_: Any) -> None:
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()

        with pytest.raises(KeyboardInterrupt):
            session.request(
                "tools/call",
                {"name": "slow", "arguments": {"tag": tag}},
                on_progress=interrupt_soon,
            )
        wait_for_cancelled_tag(session, tag)


def test_client_killed_outright_takes_its_server_group_along() -> None:
    """The watchdog: SIGKILL the client, and its hung server and grandchild still die."""
    client = subprocess.Popen(
        [sys.executable, str(SERVERS / "client_proc.py")],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert client.stdout is not None
        report = json.loads(client.stdout.readline())
        pids = [report["server"], report["grandchild"], report["watchdog"]]
        assert all(is_alive(pid) for pid in pids)
        client.kill()
        client.wait()
        # The server ignores end of input and SIGTERM: only the watchdog's SIGKILL ends it.
        assert wait_until_dead(pids, HANG) == []
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        if client.stdout is not None:
            client.stdout.close()


# ============================================================================== TCP


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_tcp_round_trip(mode: str) -> None:
    notes: list[NotificationReceived] = []
    with (
        sockets.tcp_server(server_module.sync_handler, server_module.CONFIG) as server,
        sockets.connect_tcp(
            "127.0.0.1",
            server.port,
            client_config(mode),
            probe_timeout=HANG,
            on_request=on_roots,
            on_notification=lambda _, note: notes.append(note),
        ) as session,
    ):
        exercise_blocking(session, mode, notes)
        assert len(server.sessions) == 1


@pytest.mark.parametrize("client_backend", ["asyncio", "trio"])
def test_async_clients_against_the_blocking_tcp_server(client_backend: str) -> None:
    """Cross-backend: the same exercise, an async client, a thread-served blocking server."""
    with sockets.tcp_server(server_module.sync_handler, server_module.CONFIG) as server:

        async def scenario(module: Any) -> None:
            for mode in ("legacy", "auto"):
                notes: list[NotificationReceived] = []
                async with module.connect_tcp(
                    "127.0.0.1",
                    server.port,
                    client_config(mode),
                    probe_timeout=HANG,
                    on_request=answer_roots,
                    on_notification=lambda _, note, notes=notes: notes.append(note),
                ) as session:
                    await exercise(session, mode, notes)

        run(client_backend, scenario)


def test_tcp_client_leaving_mid_call_cancels_the_server_handler() -> None:
    tag = f"blocking-client-left-{time.monotonic_ns()}"
    with sockets.tcp_server(server_module.sync_handler, server_module.CONFIG) as server:
        failures: list[BaseException] = []
        with sockets.connect_tcp("127.0.0.1", server.port, client_config("legacy")) as session:
            started = threading.Event()

            def slow() -> None:
                try:
                    session.request(
                        "tools/call",
                        {"name": "slow", "arguments": {"tag": tag}},
                        on_progress=lambda _: started.set(),
                    )
                except Exception as exc:
                    failures.append(exc)

            thread = threading.Thread(target=slow)
            thread.start()
            assert started.wait(HANG)
            session.close()
            thread.join(HANG)
        assert len(failures) == 1 and isinstance(failures[0], ConnectionClosedError)
        end = time.monotonic() + HANG
        while tag not in server_module.CANCELLED:
            assert time.monotonic() < end, "the server handler was never cancelled"
            time.sleep(0.01)


def test_tcp_server_closing_fails_the_clients_pending_request() -> None:
    tag = f"blocking-server-closing-{time.monotonic_ns()}"
    with (
        sockets.tcp_server(server_module.sync_handler, server_module.CONFIG) as server,
        sockets.connect_tcp(
            "127.0.0.1", server.port, ClientConfig(mode="auto"), probe_timeout=HANG
        ) as session,
    ):
        started = threading.Event()
        failures: list[BaseException] = []

        def slow() -> None:
            try:
                session.request(
                    "tools/call",
                    {"name": "slow", "arguments": {"tag": tag}},
                    on_progress=lambda _: started.set(),
                )
            except Exception as exc:
                failures.append(exc)

        thread = threading.Thread(target=slow)
        thread.start()
        assert started.wait(HANG)
        server.close()
        thread.join(HANG)
        assert not thread.is_alive()
        assert len(failures) == 1 and isinstance(failures[0], ConnectionClosedError)
        # Closing cancelled the handler (it records that), rather than leaving it to run
        # its minute (then it records nothing).
        end = time.monotonic() + HANG
        while tag not in server_module.CANCELLED:
            assert time.monotonic() < end, "the server handler was never cancelled"
            time.sleep(0.01)


def test_handler_threads_answer_on_the_connection_through_apply() -> None:
    """The answer goes out when the handler sends it, not when the handler ends: the
    handler waits, after answering, until the client has the answer."""
    answered, ended = threading.Event(), threading.Event()
    order: list[str] = []

    def on_request(session: sockets.Session, request: Any) -> None:
        rid = request.request_id
        session.apply(lambda conn: conn.send_result(rid, server_module.text("applied")))
        answered.wait(HANG)  # a wrong order ends this, and the test fails
        order.append("handler ended")
        ended.set()

    with (
        sockets.tcp_server(on_request, server_module.CONFIG) as server,
        sockets.connect_tcp("127.0.0.1", server.port, client_config("legacy")) as session,
    ):
        assert call(session, "anything") == "applied"
        order.append("answered")
        answered.set()
        assert ended.wait(2 * HANG)
    assert order == ["answered", "handler ended"]


def test_a_tcp_server_accepting_on_a_thread_of_ours_stops_when_closed_from_another() -> None:
    """`serve_forever()` on the caller's thread (what `serve_tcp` does) returns on
    `close()`, which ends the connections it served; nothing is accepted after."""
    server = sockets.TcpServer(server_module.sync_handler, server_module.CONFIG)
    accepting = threading.Thread(target=server.serve_forever)
    accepting.start()
    with sockets.connect_tcp("127.0.0.1", server.port, client_config("auto")) as session:
        assert call(session, "echo", text="before") == "before"
        server.close()
        accepting.join(HANG)
        assert not accepting.is_alive()
        with pytest.raises(ConnectionClosedError):
            call(session, "echo", text="after")
    assert not server.sessions
    with (
        pytest.raises(TransportError, match="ConnectionRefused"),
        sockets.connect_tcp("127.0.0.1", server.port, client_config("auto")),
    ):
        pass  # the listening socket is closed too


def test_stopping_a_server_without_a_pidfd_polls_until_it_exits() -> None:
    """Where there is no pidfd (before Linux 5.3, off Linux) the stop steps wait for
    the exit in short sleeps; the server still ends, and early (stdin closed: it exits
    on EOF, long before its close timeout)."""
    # No watchdog: its dismissal would wait on the watchdog's own pidfd.
    process = ServerProcess(replace(echo_server("sockets", close_timeout=HANG), watchdog=False))
    if process.pidfd is not None:
        os.close(process.pidfd)
        process.pidfd = None
    for fd in process.take_pipes():
        os.close(fd)  # the server's stdin ends
    steps = []
    try:
        for step in process.stop_steps():
            steps.append(step)
            assert isinstance(step, Sleep)  # no descriptor to wait on
            time.sleep(step.seconds)
    finally:
        process.release()
    assert process.returncode is not None
    assert steps and all(step.seconds < 1 for step in steps)
