"""`Driver.abort()` closes at once, dropping what is queued; `finish()` flushes it first.

What a 2026-07-28 HTTP client's cancellation relies on: closing the TCP connection
that carries a request is the cancellation, so nothing queued behind it may go out.
Real sockets (a socketpair on asyncio's transports), the peer read with a plain
blocking socket.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from mcp_adapters._driver import Driver
from mcp_adapters.backends import asyncio as asyncio_backend
from tests.adapters.test_driver_wake import _Connection
from tests.timing import HANG

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
    conn = _Connection()
    conn.out = b"queued before the stop"
    driver = Driver(conn, stream, lambda events: None, backend=asyncio_backend.backend())
    getattr(driver, stop)()
    await asyncio.wait_for(driver.run(), HANG)
    with peer:
        return await asyncio.to_thread(_read_to_eof, peer)


async def test_abort_closes_without_writing_what_is_queued() -> None:
    assert await _run("abort") == b""


async def test_finish_writes_what_is_queued_then_closes() -> None:
    assert await _run("finish") == b"queued before the stop"
