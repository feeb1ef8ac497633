"""Real payloads pass, and a refused payload never hangs or kills anything (our side).

With default settings, a 20 MiB file as a tool argument and a 40 MiB image as the
result (both base64, as MCP carries them) go through stdio, Streamable HTTP and
WebSocket with our `Client`, against our server run by the CLI
(tests/payload_server.py). Then each over-limit behaviour, on each transport:

- an argument over the server's limit: the error carries the request's id (our
  Client matches the answer to its call; the raw tests read the id off the wire),
  its text names the limit, and the server answers the next request;
- a result over the client's limit: the call fails with `LimitExceededError`
  naming the limit and how to raise it, and the next call on the same client
  works;
- stdio and TCP: the over-long line is skipped, the next line is served, the
  refusal is logged on stderr, and the server exits 0 only at the end of input;
- HTTP: 413 with a JSON-RPC error carrying the id, on a connection that stays open.

The servers run as real processes, once per module; over-limit cases use servers
started with `--max-message-bytes` (small limits keep them cheap), except one raw
case per byte stream at the default limit, which is only skipped, never parsed.
The SDK clients' side is tests/interop/test_large_payloads_sdk.py.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.client
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import pytest

from mcp_adapters import LimitExceededError, StdioServerParameters
from mcp_adapters.client import Client
from mcp_core import DEFAULT_LIMITS, PARSE_ERROR, Limits, MCPError

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "payload_server.py"
MiB = 1024 * 1024
ARGUMENT = 20 * MiB
RESULT = 40 * MiB
SMALL = 1_000_000  # the limit of the servers (and the client) that refuse
HANG_GUARD = 180.0  # generous: a loaded machine moves 100 MB slowly, but never forever
TRANSPORTS = ["stdio", "http", "ws"]

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


sys.path.insert(0, str(ROOT / "tests"))
from payload_server import pattern  # noqa: E402


@functools.cache
def b64(size: int) -> str:
    return base64.b64encode(pattern(size)).decode("ascii")


def cli(transport: str, *extra: str, port: int | None = None) -> list[str]:
    argv = [sys.executable, "-m", "mcp_adapters", "run", str(SERVER), "--transport", transport]
    if port is not None:
        argv += ["--port", str(port)]
    return argv + list(extra)


# ------------------------------------------------------------------ servers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Served:
    """A server process on a free loopback port, its output in a log file."""

    def __init__(self, transport: str, log_dir: Path, *extra: str) -> None:
        self.port = free_port()
        self.transport = transport
        scheme = "ws" if transport == "ws" else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}/mcp"
        self.log_path = log_dir / f"{transport}-{self.port}.log"
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            cli(transport, *extra, port=self.port),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_listening(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited:\n{self.log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"server did not start listening:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    """Default-limit HTTP and WS servers, and ones refusing messages over SMALL bytes."""
    log_dir = tmp_path_factory.mktemp("payload-servers")
    small = ("--max-message-bytes", str(SMALL))
    specs = {
        "http": ("http",),
        "ws": ("ws",),
        "http-small": ("http", *small),
        "ws-small": ("ws", *small),
        "tcp-small": ("tcp", *small),
    }
    started: dict[str, Served] = {}
    try:
        for name, (transport, *extra) in specs.items():
            started[name] = Served(transport, log_dir, *extra)
        deadline = time.monotonic() + 60
        for server in started.values():
            server.wait_listening(deadline)
        yield started
    finally:
        for server in started.values():
            server.stop()


@asynccontextmanager
async def client(
    servers: dict[str, Served], transport: str, *, small_server: bool = False, **options: Any
) -> AsyncIterator[Client]:
    """Our Client on `transport`, to a default server or to one with the SMALL limit."""
    if transport == "stdio":
        extra = ("--max-message-bytes", str(SMALL)) if small_server else ()
        target: Any = StdioServerParameters(sys.executable, cli("stdio", *extra)[1:], cwd=str(ROOT))
    else:
        target = servers[f"{transport}-small" if small_server else transport].url
    async with Client(target, **options) as connected:
        yield connected


# -------------------------------------------------------------- they pass


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_20_mib_argument_and_a_40_mib_result_pass_with_default_limits(
    servers: dict[str, Served], transport: str
) -> None:
    argument = pattern(ARGUMENT)
    with anyio.fail_after(HANG_GUARD):
        async with client(servers, transport) as connected:
            result = await connected.call_tool("transform", {"data": b64(ARGUMENT), "size": RESULT})
    digest, image = result.content
    assert json.loads(digest.text) == {
        "received_bytes": ARGUMENT,
        "received_sha256": hashlib.sha256(argument).hexdigest(),
    }
    assert image.type == "image" and image.mime_type == "image/png"
    assert image.data == b64(RESULT)
    assert len(image.data) > DEFAULT_LIMITS.max_message_bytes * 3 // 4  # 53 MiB of 64


# ------------------------------------------------------------ over a limit

REFUSED = re.compile(
    r"message of (\d+) bytes exceeds the limit of 1000000 bytes \(Limits\.max_message_bytes\)"
)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_argument_over_the_server_limit_is_refused_by_id_and_the_server_goes_on(
    servers: dict[str, Served], transport: str
) -> None:
    with anyio.fail_after(HANG_GUARD):
        async with client(servers, transport, small_server=True) as connected:
            with pytest.raises(MCPError) as refused:
                await connected.call_tool("transform", {"data": b64(SMALL), "size": 1})
            # The answer reached this call: it carried the call's id.
            assert refused.value.code == PARSE_ERROR
            match = REFUSED.fullmatch(refused.value.message)
            assert match and int(match.group(1)) > len(b64(SMALL))
            echoed = await connected.call_tool("echo", {"text": "still here"})
    assert echoed.content[0].text == "still here"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_result_over_the_client_limit_fails_the_call_and_the_client_goes_on(
    servers: dict[str, Served], transport: str
) -> None:
    with anyio.fail_after(HANG_GUARD):
        async with client(servers, transport, limits=Limits(max_message_bytes=SMALL)) as connected:
            with pytest.raises(LimitExceededError) as refused:
                await connected.call_tool("blob", {"size": 2 * SMALL})
            echoed = await connected.call_tool("echo", {"text": "still here"})
    message = str(refused.value)
    assert message.startswith("tools/call: response refused: ")
    assert "exceeds the limit of 1000000 bytes (Limits.max_message_bytes)" in message
    assert message.endswith("raise Limits.max_message_bytes in the client's limits to accept it")
    assert echoed.content[0].text == "still here"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_string_over_the_client_string_limit_fails_the_call_by_name(
    servers: dict[str, Served], transport: str
) -> None:
    """The case that used to wait forever: a message within its limit, a string in it
    over its own (parsed, so the id is exact)."""
    limits = Limits(max_string_length=100_000)
    with anyio.fail_after(HANG_GUARD):
        async with client(servers, transport, limits=limits) as connected:
            with pytest.raises(LimitExceededError) as refused:
                await connected.call_tool("blob", {"size": 100_000})
            echoed = await connected.call_tool("echo", {"text": "still here"})
    assert "exceeds the limit of 100000 (Limits.max_string_length)" in str(refused.value)
    assert echoed.content[0].text == "still here"


# ---------------------------------------------------- raw: stdio and TCP

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def over_long_call(rid: int, size: int) -> bytes:
    """A tools/call line of `size` bytes (without its newline), its id first."""
    head = (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'
        % rid
    )
    return head + b"x" * (size - len(head) - 4) + b'"}}}'


def answers_by_id(lines: list[bytes]) -> dict[Any, dict[str, Any]]:
    return {m.get("id"): m for m in (json.loads(raw) for raw in lines if raw.strip())}


@pytest.mark.parametrize("limit", [None, 100_000], ids=["default-limit", "small-limit"])
def test_stdio_skips_an_over_long_line_answers_by_id_logs_it_and_goes_on(
    limit: int | None,
) -> None:
    size = (limit or DEFAULT_LIMITS.max_message_bytes) + 1000
    extra = ["--max-message-bytes", str(limit)] if limit else []
    process = subprocess.Popen(
        cli("stdio", *extra),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    data = (
        line(INITIALIZE)
        + line(INITIALIZED)
        + over_long_call(7, size)
        + b"\n"
        + line({"jsonrpc": "2.0", "id": 8, "method": "ping"})
    )
    try:
        out, err = process.communicate(data, timeout=HANG_GUARD)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0  # at the end of its input, not before
    answers = answers_by_id(out.splitlines())
    shown = limit or DEFAULT_LIMITS.max_message_bytes
    assert answers[7]["error"] == {
        "code": PARSE_ERROR,
        "message": f"message of {size} bytes exceeds the limit of {shown} bytes "
        "(Limits.max_message_bytes)",
    }
    assert answers[8]["result"] == {}
    assert b"refused a message from the peer (id 7): message of" in err


def test_tcp_skips_an_over_long_line_and_answers_by_id(servers: dict[str, Served]) -> None:
    server = servers["tcp-small"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=HANG_GUARD) as sock:
        sock.sendall(
            line(INITIALIZE)
            + line(INITIALIZED)
            + over_long_call(7, SMALL + 10)
            + b"\n"
            + line({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        )
        received = b""
        while received.count(b"\n") < 3:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the connection"
            received += chunk
    answers = answers_by_id(received.splitlines())
    assert answers[7]["error"]["code"] == PARSE_ERROR
    assert REFUSED.fullmatch(answers[7]["error"]["message"])
    assert answers[8]["result"] == {}


# ------------------------------------------------------------------ raw: HTTP


def post(conn: http.client.HTTPConnection, body: bytes, **headers: str) -> tuple[int, Any]:
    conn.request(
        "POST",
        "/mcp",
        body=body,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def padded_initialize(rid: Any, size: int) -> bytes:
    message = json.dumps({**INITIALIZE, "id": rid, "params": {**INITIALIZE["params"], "pad": ""}})
    raw = message.encode()
    return raw.replace(b'"pad": ""', b'"pad": "' + b"x" * (size - len(raw)) + b'"')


@pytest.mark.parametrize("which", ["http-small", "http"])
def test_http_answers_413_with_the_id_and_keeps_the_connection(
    servers: dict[str, Served], which: str
) -> None:
    server = servers[which]
    limit = SMALL if which == "http-small" else DEFAULT_LIMITS.max_message_bytes
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HANG_GUARD)
    try:
        body = padded_initialize(5, limit + 1000)
        status, answer = post(conn, body)
        assert status == 413
        assert answer == {
            "jsonrpc": "2.0",
            "id": 5,
            "error": {
                "code": PARSE_ERROR,
                "message": f"message of {len(body)} bytes exceeds the limit of {limit} bytes "
                "(Limits.max_message_bytes)",
            },
        }
        # The TypeScript SDK's order puts the id last: it is read from the end.
        tail_first = json.dumps({"method": "initialize", "params": {"pad": "x" * limit}})
        body = (tail_first[:-1] + ', "jsonrpc": "2.0", "id": "ts-1"}').encode()
        status, answer = post(conn, body)
        assert (status, answer["id"]) == (413, "ts-1")
        # Same connection, the server goes on.
        status, answer = post(conn, json.dumps({**INITIALIZE, "id": 6}).encode())
        assert status == 200 and answer["id"] == 6
    finally:
        conn.close()
