"""Fixtures and helpers for the high-level API tests.

Every test runs client and server in this process (`Client(mcp_server, ...)`
or `Client(SpyTransport(mcp_server), ...)`): real engines on both sides joined
by a memory pipe, on asyncio and on trio.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
import pytest

from mcp_adapters.client import ClientRequestContext
from mcp_core import ClientConnection
from mcp_core.types import ElicitRequestParams, ElicitResult
from tests.timing import HANG

MODES = ["legacy", "2026-07-28"]
MODERN = "2026-07-28"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Recorder:
    """An elicitation callback answering with canned results, recording what it was asked."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[ElicitRequestParams] = []
        self.contexts: list[ClientRequestContext] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> Any:
        self.asked.append(params)
        self.contexts.append(context)
        return self.answers.pop(0)


class ByMessage:
    """An elicitation callback answering by question text (for questions asked concurrently)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> Any:
        self.asked.append(params.message)
        return self.answers[params.message]


def accept(**content: Any) -> ElicitResult:
    return ElicitResult(action="accept", content=content)


class _SpyStream:
    """The client's end of the memory pipe, recording every JSON message it receives."""

    def __init__(self, inner: Any, received: list[dict[str, Any]], sent: list[dict[str, Any]]):
        self._inner = inner
        self._received = received
        self._sent = sent
        self._buffer = b""
        self._out = b""

    @staticmethod
    def _lines(buffer: bytes, into: list[dict[str, Any]]) -> bytes:
        *lines, rest = buffer.split(b"\n")
        for line in lines:
            if line.strip():
                into.append(json.loads(line))
        return rest

    async def receive_some(self, max_bytes: int) -> bytes:
        data: bytes = await self._inner.receive_some(max_bytes)
        self._buffer = self._lines(self._buffer + data, self._received)
        return data

    async def send_all(self, data: bytes) -> None:
        self._out = self._lines(self._out + data, self._sent)
        await self._inner.send_all(data)

    async def aclose(self) -> None:
        await self._inner.aclose()


class MemoryStream:
    """One end of a byte pipe over anyio memory streams: the spy's transport.

    The library's in-process path is a direct link with no stream; this pipe keeps
    the stream driver under test and gives the spy the bytes to record.
    """

    def __init__(
        self,
        send: anyio.abc.ObjectSendStream[bytes],
        receive: anyio.abc.ObjectReceiveStream[bytes],
    ) -> None:
        self._send = send
        self._receive = receive

    async def receive_some(self, max_bytes: int) -> bytes:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return b""

    async def send_all(self, data: bytes) -> None:
        try:
            await self._send.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise BrokenPipeError("the in-process peer is gone") from None

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


def memory_stream_pair(buffer: int = 64) -> tuple[MemoryStream, MemoryStream]:
    """Two connected in-process byte streams; `buffer` chunks in flight each way."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](buffer)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](buffer)
    return MemoryStream(a_send, a_receive), MemoryStream(b_send, b_receive)


async def serve_session(session: Any) -> None:
    """Run a server session until its peer goes away."""
    async with session:
        await session.wait_closed()


class SpyTransport:
    """A transport object for `Client(...)`: the in-process pipe, with the wire recorded.

    `received` holds every message the client read (server to client), `sent`
    every message it wrote, as decoded JSON-RPC objects.
    """

    def __init__(self, server: Any) -> None:
        self.server = server
        self.received: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []

    @contextlib.asynccontextmanager
    async def connect(self, config: Any, **options: Any) -> AsyncIterator[Any]:
        from mcp_adapters import current_backend
        from mcp_adapters.server._serve import request_handler

        backend = current_backend()
        client_stream, server_stream = memory_stream_pair()
        server_session = backend.Session(
            self.server.new_connection(), server_stream, on_request=request_handler(self.server)
        )
        async with anyio.create_task_group() as group:
            group.start_soon(serve_session, server_session)
            spy = _SpyStream(client_stream, self.received, self.sent)
            session = backend.Session(ClientConnection(config), spy, **options)
            try:
                async with session:
                    yield session
            finally:
                await server_session.aclose()

    def results(self) -> list[dict[str, Any]]:
        return [m["result"] for m in self.received if "result" in m]

    def input_required(self) -> list[dict[str, Any]]:
        """Every InputRequiredResult the server sent."""
        return [r for r in self.results() if r.get("resultType") == "input_required"]

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" not in m]

    def requests(self, method: str) -> list[dict[str, Any]]:
        """Server-to-client requests (legacy) with this method."""
        return [m for m in self.received if m.get("method") == method and "id" in m]


async def callbacks_done(client: Any) -> None:
    """Wait until the client has run every notification callback (logging, message
    handler) queued so far: they run one at a time, in order, off the client's queue."""
    with anyio.fail_after(HANG):
        while client._delivering:
            await client._idle.wait()


async def settle(client: Any) -> None:
    """Let the callbacks of everything that came so far run: a round trip (what the
    server sent before its answer is queued by then), then until they are done."""
    await client.list_tools()
    await callbacks_done(client)
