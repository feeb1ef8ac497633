"""docs/embedding.md's example runs: a plain selectors loop serving real clients.

Including the part a copy of it most needs right: a deadline that passes while
nothing arrives must still be reported, handled and written (the question's
timeout comes out of `tick()`, the answer to the tool call after it).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest

from examples import selectors_server
from examples.selectors_server import serve
from mcp_adapters import asyncio as backend
from mcp_core import ClientConfig, RequestReceived
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


@contextmanager
def running() -> Iterator[int]:
    """The example's loop in a thread until the block ends; yields its port once it
    listens."""
    port = free_port()
    done = threading.Event()
    # Served until the test is done (not for a fixed time a slow machine may overrun).
    loop = threading.Thread(target=serve, args=(port,), kwargs={"stop": done.is_set})
    loop.start()
    try:
        deadline = time.monotonic() + HANG
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=HANG).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                threading.Event().wait(0.02)
        yield port
    finally:
        done.set()
        loop.join(HANG)
    assert not loop.is_alive()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_selectors_server_answers_our_tcp_client(mode: str) -> None:
    with running() as port:
        async with backend.connect_tcp("127.0.0.1", port, ClientConfig(mode=mode)) as session:
            result = await session.request(
                "tools/call", {"name": "echo", "arguments": {"text": "hi"}}
            )
    assert result.content[0].text == "hi"


@pytest.fixture
def folders(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    fresh = {"/tmp/empty": [], "/tmp/project": ["main.py", "README.md"]}
    monkeypatch.setattr(selectors_server, "FOLDERS", fresh)
    return fresh


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_tool_asks_in_both_eras(mode: str, folders: dict[str, list[str]]) -> None:
    asked: list[str] = []

    async def user(session: Any, request: RequestReceived) -> Any:
        asked.append(request.params.message)
        return {"action": "accept", "content": {"ok": True}}

    config = ClientConfig(mode=mode, capabilities={"elicitation": {}})
    with running() as port:
        async with backend.connect_tcp("127.0.0.1", port, config, on_request=user) as session:
            call = {"name": "delete_folder", "arguments": {"path": "/tmp/project"}}
            result = await session.request("tools/call", call, timeout=HANG)
    assert result.content[0].text == "deleted /tmp/project"
    assert asked == ["/tmp/project has 2 file(s). Delete anyway?"]
    assert "/tmp/project" not in folders


async def test_a_question_nobody_answers_times_out_on_a_real_deadline(
    monkeypatch: pytest.MonkeyPatch, folders: dict[str, list[str]]
) -> None:
    """The user never answers; after ASK_SECONDS the loop's own tick reports it, the
    tool answers, and the answer is written though no byte arrived meanwhile."""
    monkeypatch.setattr(selectors_server, "ASK_SECONDS", 0.2)
    withdrawn = anyio.Event()

    async def silent_user(session: Any, request: RequestReceived) -> Any:
        try:
            await anyio.sleep_forever()
        finally:
            withdrawn.set()  # the server cancelled its question when it gave up

    config = ClientConfig(mode="legacy", capabilities={"elicitation": {}})
    with running() as port:
        async with backend.connect_tcp(
            "127.0.0.1", port, config, on_request=silent_user
        ) as session:
            call = {"name": "delete_folder", "arguments": {"path": "/tmp/project"}}
            result = await session.request("tools/call", call, timeout=HANG)
            with anyio.fail_after(HANG):
                await withdrawn.wait()
    assert result.content[0].text == "kept /tmp/project: Request timed out"
    assert folders["/tmp/project"] == ["main.py", "README.md"]
