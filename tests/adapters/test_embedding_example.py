"""docs/embedding.md's example runs: a plain selectors loop serving real clients."""

from __future__ import annotations

import socket
import threading

import anyio
import pytest

from examples.selectors_server import serve
from mcp_adapters import asyncio as backend
from mcp_core import ClientConfig
from tests.timing import HANG

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_selectors_server_answers_our_tcp_client(mode: str) -> None:
    port = free_port()
    done = threading.Event()
    # Served until the client is done (not for a fixed time a slow machine may overrun).
    loop = threading.Thread(target=serve, args=(port,), kwargs={"stop": done.is_set})
    loop.start()
    try:
        with anyio.fail_after(HANG):
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=HANG).close()
                    break
                except OSError:
                    await anyio.sleep(0.02)
            async with backend.connect_tcp("127.0.0.1", port, ClientConfig(mode=mode)) as session:
                result = await session.request(
                    "tools/call", {"name": "echo", "arguments": {"text": "hi"}}
                )
    finally:
        done.set()
        loop.join(HANG)
    assert not loop.is_alive()
    assert result.content[0].text == "hi"
