"""`Driver.abort()` closes at once, dropping what is queued; `finish()` flushes it first.

What a 2026-07-28 HTTP client's cancellation relies on: closing the TCP connection
that carries a request is the cancellation, so nothing queued behind it may go out.
Real sockets (a socketpair on asyncio's transports), the peer read with a plain
blocking socket.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from mcp_adapters._driver import Driver
from mcp_adapters.backends import asyncio as asyncio_backend
from tests.timing import HANG

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Queued:
    """A sans-IO connection with output queued and nothing else to do."""

    def __init__(self, out: bytes) -> None:
        self.out = out

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]:
        return []

    def data_to_send(self) -> bytes:
        out, self.out = self.out, b""
        return out

    def next_deadline(self) -> float | None:
        return None

    def tick(self, now: float) -> list[Any]:
        return []


def _read_to_eof(sock: socket.socket) -> bytes:
    sock.settimeout(HANG)
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass  # an abort may reset instead of a FIN: the bytes read so far are what came
    return got


async def _run(stop: str) -> bytes:
    ours, peer = socket.socketpair()
    loop = asyncio.get_running_loop()
    _, protocol = await loop.connect_accepted_socket(asyncio_backend.StreamProtocol, ours)
    stream = asyncio_backend.AsyncioStream(protocol)
    conn = _Queued(b"queued before the stop")
    driver = Driver(conn, stream, lambda events: None, backend=asyncio_backend.backend())
    getattr(driver, stop)()
    await asyncio.wait_for(driver.run(), HANG)
    with peer:
        return await asyncio.to_thread(_read_to_eof, peer)


async def test_abort_closes_without_writing_what_is_queued() -> None:
    assert await _run("abort") == b""


async def test_finish_writes_what_is_queued_then_closes() -> None:
    assert await _run("finish") == b"queued before the stop"
