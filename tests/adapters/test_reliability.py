"""Misbehaving peers, on every backend: they never read, never answer, or break the framing.

The peers here are raw sockets, so they can do what no well-behaved adapter would.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest

from mcp_adapters import ConnectionClosedError, RequestTimeoutError, sockets
from mcp_core import ClientConfig, ConnectionClosed, Event, Limits, ServerConfig
from tests.adapters.test_async_backends import run

BACKENDS = ["asyncio", "trio", "sockets"]
OUTPUT_LIMIT = 1_000_000


def _ping(i: int, padding: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": f"{padding}{i}", "method": "ping"}
    return json.dumps(message).encode() + b"\n"


def flood_without_reading(port: int) -> None:
    """Send pings whose answers are big, and never read one; stop when the server hangs up."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a tiny window
    try:
        sock.connect(("127.0.0.1", port))
        padding = "x" * 100_000
        for i in range(400):
            sock.sendall(_ping(i, padding))
    except OSError:
        pass  # the server closed on us: what we want
    finally:
        sock.close()


def with_server(backend: str, body: Callable[[int, list[Event]], None], **options: Any) -> None:
    """Run `body(port, server_events)` in a thread while `backend` serves TCP here."""
    events: list[Event] = []
    config = ServerConfig(name="s", limits=Limits(max_buffered_output_bytes=OUTPUT_LIMIT))
    if backend == "sockets":
        with sockets.tcp_server(None, config, on_event=events.append, **options) as server:
            body(server.port, events)
        return

    async def scenario(module: ModuleType) -> None:
        import anyio

        async with module.tcp_server(None, config, on_event=events.append, **options) as server:
            # A plain thread: the loop keeps serving while the raw peer misbehaves.
            thread = threading.Thread(target=body, args=(server.port, events))
            thread.start()
            while thread.is_alive():
                await anyio.sleep(0.02)

    run(backend, scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_peer_that_never_reads_is_disconnected_not_buffered(backend: str) -> None:
    def body(port: int, events: list[Event]) -> None:
        flood_without_reading(port)
        end = time.monotonic() + 10
        while not any(isinstance(e, ConnectionClosed) for e in events):
            assert time.monotonic() < end, "the server kept buffering for a peer that never reads"
            time.sleep(0.02)

    closed: list[ConnectionClosed] = []

    def check(port: int, events: list[Event]) -> None:
        body(port, events)
        closed.extend(e for e in events if isinstance(e, ConnectionClosed))

    with_server(backend, check, close_timeout=0.5)
    assert len(closed) == 1
    assert closed[0].error is not None and "not reading" in closed[0].error.message


@contextmanager
def raw_server(reply: Callable[[socket.socket], None]) -> Iterator[int]:
    """A one-connection TCP server that runs `reply(conn)` on a thread."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            reply(conn)
            done.wait(10)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join(10)
        listener.close()


def _silent(conn: socket.socket) -> None:
    conn.recv(65536)


def _over_long_handshake_answer(conn: socket.socket) -> None:
    conn.recv(65536)
    # An answer to initialize (id 0) over the client's 1 KiB message limit.
    conn.sendall(b'{"jsonrpc":"2.0","id":0,"result":{"p":"' + b"x" * 4096 + b'"}}\n')


def connect_and_expect(backend: str, port: int, error: type[Exception], **options: Any) -> Any:
    config = ClientConfig(mode="legacy", limits=Limits(max_message_bytes=1024))
    caught: list[Exception] = []
    if backend == "sockets":
        try:
            with sockets.connect_tcp("127.0.0.1", port, config, **options):
                pass
        except error as exc:
            caught.append(exc)
    else:

        async def scenario(module: ModuleType) -> None:
            try:
                async with module.connect_tcp("127.0.0.1", port, config, **options):
                    pass
            except error as exc:
                caught.append(exc)

        run(backend, scenario)
    assert len(caught) == 1, f"expected {error.__name__}"
    return caught[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_server_that_never_answers_times_the_handshake_out(backend: str) -> None:
    with raw_server(_silent) as port:
        begun = time.monotonic()
        connect_and_expect(backend, port, RequestTimeoutError, connect_timeout=0.3)
        assert time.monotonic() - begun < 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_over_long_handshake_answer_ends_the_connection_with_the_peer_error(
    backend: str,
) -> None:
    with raw_server(_over_long_handshake_answer) as port:
        error = connect_and_expect(backend, port, ConnectionClosedError)
    assert error.error is not None  # the RemoteProtocolError from the core
    assert "exceeds the limit of 1024 bytes (Limits.max_message_bytes)" in error.error.message
