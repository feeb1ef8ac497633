"""The legacy GET listen stream is answered before a connected session is handed over.

Once `connect_http` (or `Client`) has connected a legacy session, the server has
answered its GET stream: a 200 with the SSE head (the stream is up, so what the server
sends there in answer to the first request has somewhere to go), or a refusal (405:
no GET stream here). A server that does not answer the GET within `listen_timeout`
gets the session anyway. Before, the GET was opened beside the application's first
requests, on a new TCP connection while they reused the idle one, and a server could
see `tools/call` first (the conformance scenario sse-retry failed once on it).

Our server on real sockets, and servers played by hand on a thread (a slow GET, a 405,
a GET never answered), since only they can make the race certain.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import anyio
import pytest

from mcp_adapters.client import Client
from mcp_adapters.http import connect_http
from mcp_core import ClientConfig
from tests.adapters.test_http_binding import (
    Probe,
    make_server,
    no_leaks,
    no_task_leak,
    scripted_server,
    serving,
    settle,
    text_of,
    url_of,
)
from tests.timing import HANG

__all__ = ["no_leaks", "no_task_leak"]  # the fixtures, re-used by name

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_task_leak")]

SESSION = "s-1"
VERSION = "2025-11-25"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# ------------------------------------------------------------------ our own server


async def test_the_get_stream_is_attached_when_connect_returns() -> None:
    async with (
        serving(make_server(Probe())) as running,
        connect_http(url_of(running), ClientConfig(mode="legacy")) as session,
    ):
        # No waiting here: the server already holds the GET stream of the session (read
        # from the endpoint's own table: nothing public tells a held stream from a backlog).
        assert session.session_id is not None
        assert running.endpoint._sessions[session.session_id].get_stream is not None
        assert running.notify_subscribers("notifications/tools/list_changed") == 1


async def test_a_client_hears_on_the_get_stream_what_its_first_call_caused() -> None:
    """The `Client` face of the same contract: a notification the server sends on the
    GET stream while it handles the first call reaches the client."""
    mcp = make_server(Probe())
    heard: list[Any] = []
    arrived = anyio.Event()

    @mcp.tool()
    def announce() -> str:
        """Add a tool (the server tells listening sessions the list changed)."""
        mcp.add_tool(lambda: "new", name="fresh")
        return "announced"

    async def on_message(message: Any) -> None:
        heard.append(message)
        arrived.set()

    async with (
        serving(mcp) as running,
        Client(url_of(running), mode="legacy", message_handler=on_message) as client,
    ):
        assert text_of(await client.call_tool("announce")) == "announced"
        with anyio.fail_after(HANG):
            await arrived.wait()
    assert [type(m).__name__ for m in heard] == ["ToolListChangedNotification"]


async def test_a_modern_session_opens_no_get_stream() -> None:
    async with (
        serving(make_server(Probe())) as running,
        connect_http(url_of(running), ClientConfig(mode="2026-07-28")) as session,
    ):
        assert not session.listen_pending
        assert (
            text_of(
                await session.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
            )
            == "x"
        )


# ------------------------------------------------------------- servers played by hand


class Legacy:
    """A legacy Streamable HTTP server played by hand. `get` answers each GET (given the
    socket); every request and answer is logged in `log`, in the order it happened."""

    def __init__(self, get: Any) -> None:
        self.get = get
        self.log: list[str] = []
        self.lock = threading.Lock()

    def note(self, what: str) -> None:
        with self.lock:
            self.log.append(what)

    def count(self, what: str) -> int:
        with self.lock:
            return self.log.count(what)

    def handle(self, n: int, sock: socket.socket) -> None:
        buffer = bytearray()
        while True:
            request = read_request(sock, buffer)
            if request is None:
                return
            method, body = request
            if method == "GET":
                self.note("GET")
                self.get(self, sock)
                continue
            if method == "DELETE":
                self.note("DELETE")
                send(sock, 200, b"", [])
                continue
            message = json.loads(body)
            name = message.get("method", "answer")
            self.note(name)
            if "id" not in message:
                send(sock, 202, b"", [])
            elif name == "initialize":
                result = {
                    "protocolVersion": VERSION,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"},
                }
                reply(sock, message, result, [("mcp-session-id", SESSION)])
            else:
                reply(sock, message, {"content": [{"type": "text", "text": "ok"}]}, [])


def read_request(sock: socket.socket, buffer: bytearray) -> tuple[str, bytes] | None:
    """(method, body) of the next request on `sock`; None once the client closed it."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(b":") for x in lines[1:])}
    length = int(fields.get(b"content-length", b"0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        rest += chunk
    buffer[:] = rest[length:]
    return lines[0].split()[0].decode(), rest[:length]


def send(sock: socket.socket, status: int, body: bytes, fields: list[tuple[str, str]]) -> None:
    head = f"HTTP/1.1 {status} X\r\ncontent-length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in fields)
    sock.sendall(head.encode() + b"\r\n" + body)


def reply(sock: socket.socket, message: Any, result: Any, fields: list[tuple[str, str]]) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
    send(sock, 200, body, [("content-type", "application/json"), *fields])


def hold_until_closed(sock: socket.socket) -> None:
    """Keep a GET stream open (sending nothing more) until the client closes it."""
    while sock.recv(65536):
        pass


def slow_stream(server: Legacy, sock: socket.socket) -> None:
    """Answer the GET late (a loaded server), with the SSE head; then hold it."""
    time.sleep(0.5)
    server.note("GET answered")
    sock.sendall(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    hold_until_closed(sock)


def refuse(server: Legacy, sock: socket.socket) -> None:
    server.note("GET answered")
    send(sock, 405, b"", [("allow", "POST, DELETE")])


def never(server: Legacy, sock: socket.socket) -> None:
    hold_until_closed(sock)


def connect_legacy(port: int, **options: Any) -> Any:
    return connect_http(f"http://127.0.0.1:{port}/mcp", ClientConfig(mode="legacy"), **options)


async def call(session: Any) -> None:
    result = await session.request("tools/call", {"name": "x", "arguments": {}})
    assert text_of(result) == "ok"


async def test_a_slow_get_stream_is_answered_before_the_first_call() -> None:
    server = Legacy(slow_stream)
    with scripted_server(server.handle) as port:
        async with connect_legacy(port) as session:
            assert not session.listen_pending
            await call(session)
    log = server.log
    assert log.index("GET answered") < log.index("tools/call"), log
    assert log.count("GET") == 1


async def test_a_refused_get_stream_is_not_waited_for_again() -> None:
    """405: the server has no GET stream. Connecting goes on, and no GET follows."""
    server = Legacy(refuse)
    with scripted_server(server.handle) as port:
        async with connect_legacy(port) as session:
            await call(session)
            await call(session)
    log = server.log
    assert log.index("GET answered") < log.index("tools/call"), log
    assert log.count("GET") == 1


async def test_a_get_stream_never_answered_delays_connecting_by_listen_timeout_only() -> None:
    """The server takes the GET and says nothing: the session is handed over after
    `listen_timeout` all the same, the GET still waiting (it is not sent again)."""
    server = Legacy(never)
    with scripted_server(server.handle) as port:
        async with connect_legacy(port, listen_timeout=0.2) as session:
            assert session.listen_pending  # the GET has had no answer
            await call(session)
            await settle(lambda: server.count("GET") == 1)
            assert session.listen_pending
    assert server.log.count("GET") == 1


async def test_listen_false_and_no_listen_timeout_do_not_wait() -> None:
    """`listen=False` opens no GET stream; `listen_timeout=0` opens it without waiting."""
    server = Legacy(never)
    with scripted_server(server.handle) as port:
        async with connect_legacy(port, listen=False) as session:
            assert not session.listen_pending
            await call(session)
        assert server.count("GET") == 0
        async with connect_legacy(port, listen_timeout=0) as session:
            await call(session)
            await settle(lambda: server.count("GET") == 1)
