"""The embedding examples, driven by the official SDK's client in both eras.

Three loops the project does not use itself, each serving `delete_folder` (a
tool that asks the user mid-call) with `mcp_core` alone: a plain `selectors`
loop over TCP (in a thread), Twisted over stdio and gevent over TCP (each a real
process). The SDK's `Client` talks stdio with its own transport and TCP through
`sdk_tcp` below (newline-delimited JSON, as stdio). Then the case the Twisted
embedding first tripped on: the client goes away while a question is open; the
server must settle it quietly (no traceback) and the stdio process must exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.client import ClientRequestContext
from mcp.shared.message import SessionMessage
from mcp.types import ElicitRequestParams, ElicitResult

from examples import selectors_server
from tests.timing import HANG

from .conftest import ROOT, free_port, sdk_stdio, tagged_env

pytestmark = pytest.mark.anyio

MODES = ["legacy", "default"]  # "default": the SDK's own auto mode, which settles on 2026-07-28
TWISTED = ROOT / "examples" / "twisted_stdio_server.py"
GEVENT = ROOT / "examples" / "gevent_tcp_server.py"
CALL = {"path": "/tmp/project"}


@asynccontextmanager
async def sdk_tcp(port: int) -> AsyncIterator[Any]:
    """An SDK transport over one TCP connection: one JSON-RPC message per line."""
    tcp = await anyio.connect_tcp("127.0.0.1", port)
    incoming, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, outgoing = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        buffer = b""
        async with incoming:
            try:
                while True:
                    *lines, buffer = (buffer + await tcp.receive()).split(b"\n")
                    for line in filter(bytes.strip, lines):
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        await incoming.send(SessionMessage(message))
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    async def write() -> None:
        async with outgoing:
            async for item in outgoing:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                await tcp.send(data.encode() + b"\n")

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            await tcp.aclose()
            group.cancel_scope.cancel()


def wait_listening(port: int, alive: Any = lambda: True) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and alive():
        try:
            import socket

            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


@contextmanager
def selectors_loop() -> Iterator[int]:
    saved = {k: list(v) for k, v in selectors_server.FOLDERS.items()}
    port = free_port()
    done = threading.Event()
    # Serves until the test is done (checked each time round the loop, at least every
    # 0.5 s), with HANG as the outer bound should the test never finish.
    loop = threading.Thread(target=selectors_server.serve, args=(port, HANG, done.is_set))
    loop.start()
    try:
        wait_listening(port)
        yield port
    finally:
        done.set()
        loop.join()
        selectors_server.FOLDERS.clear()
        selectors_server.FOLDERS.update(saved)


@contextmanager
def gevent_process() -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(GEVENT), str(port)],
        cwd=ROOT,
        env=tagged_env("test"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(port, lambda: process.poll() is None)
        yield port, process
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert process.stderr is not None
        errors = process.stderr.read()
        process.stderr.close()
    # A greenlet that died (a send on a closed connection, say) would have said so here.
    assert b"Traceback" not in errors, errors.decode()


class User:
    """The SDK's elicitation callback: answers with `answer`, records the questions."""

    def __init__(self, answer: ElicitResult) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> Any:
        self.asked.append(params.message)
        return self.answer


async def call(target: Any, mode: str, answer: ElicitResult) -> tuple[str, list[str]]:
    user = User(answer)
    options: dict[str, Any] = {"elicitation_callback": user}
    if mode != "default":
        options["mode"] = mode
    async with Client(target, **options) as client:
        listed = await client.list_tools()
        assert "delete_folder" in {tool.name for tool in listed.tools}
        result = await client.call_tool("delete_folder", CALL)
        expected = "2026-07-28" if mode == "default" else "2025-11-25"
        assert client.protocol_version == expected
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return text.text, user.asked


ANSWERS = [
    (ElicitResult(action="accept", content={"ok": True}), "deleted /tmp/project"),
    (ElicitResult(action="decline"), "kept /tmp/project"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("answer", "outcome"), ANSWERS)
async def test_selectors_loop(mode: str, answer: ElicitResult, outcome: str) -> None:
    with selectors_loop() as port:
        text, asked = await call(sdk_tcp(port), mode, answer)
    assert text == outcome
    assert asked == ["/tmp/project has 2 file(s). Delete anyway?"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("answer", "outcome"), ANSWERS)
async def test_twisted_over_stdio(mode: str, answer: ElicitResult, outcome: str) -> None:
    text, asked = await call(sdk_stdio([sys.executable, str(TWISTED)]), mode, answer)
    assert text == outcome
    assert asked == ["Delete /tmp/project and its files?"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("answer", "outcome"), ANSWERS)
async def test_gevent_over_tcp(mode: str, answer: ElicitResult, outcome: str) -> None:
    with gevent_process() as (port, process):
        text, asked = await call(sdk_tcp(port), mode, answer)
        assert process.poll() is None  # still serving
    assert text == outcome
    assert asked == ["Delete /tmp/project and its files?"]


# ------------------------------------------------- a disconnect with a question open

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "leaver", "version": "1"},
    },
}
OPENING = b"".join(
    json.dumps(m).encode() + b"\n"
    for m in (
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "delete_folder", "arguments": CALL}},
    )
)  # fmt: skip


def test_twisted_exits_quietly_when_the_client_leaves_mid_question() -> None:
    process = subprocess.Popen(
        [sys.executable, str(TWISTED)],
        cwd=ROOT,
        env=tagged_env("test"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(OPENING)
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    assert json.loads(process.stdout.readline())["method"] == "elicitation/create"
    process.stdin.close()  # the client goes away while the question is open
    try:
        returncode = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr is not None
    errors = process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    assert returncode == 0
    assert b"Traceback" not in errors and b"Error" not in errors, errors.decode()


async def test_gevent_settles_a_client_that_leaves_mid_question() -> None:
    with gevent_process() as (port, process):
        tcp = await anyio.connect_tcp("127.0.0.1", port)
        await tcp.send(OPENING)
        received = b""
        with anyio.fail_after(10):
            while received.count(b"\n") < 2:
                received += await tcp.receive()
        assert json.loads(received.split(b"\n")[1])["method"] == "elicitation/create"
        await tcp.aclose()
        # The server goes on, and serves the next client in full.
        text, _ = await call(sdk_tcp(port), "legacy", ElicitResult(action="decline"))
        assert text == "kept /tmp/project"
        assert process.poll() is None
