"""Shared machinery of the fuzz tests: connections in known states, feeding, checking.

A *factory* builds a connection in one state (fresh, legacy session, 2026-07-28
stream ...), the same way every time, so one input can be fed to several copies
and the results compared. `feed` delivers chunks and enforces invariants (i) and
(iii) at every step; `reply_accounting` enforces (iv).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from mcp_core import (
    ClientConfig,
    ClientConnection,
    Era,
    Event,
    Limits,
    LocalProtocolError,
    MessageRejected,
    RemoteProtocolError,
    RequestReceived,
    ServerConfig,
    ServerConnection,
    State,
)
from mcp_core._jsonrpc import LimitExceeded, is_request_id, parse
from mcp_core.testing import default_server_config

Connection = ClientConnection | ServerConnection
Factory = Callable[[], Connection]

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
# Tight limits so the fuzzer reaches every limit path with small inputs.
SMALL_LIMITS = Limits(
    max_message_bytes=700,
    max_depth=8,
    max_integer_digits=20,
    max_string_length=64,
    max_inbound_in_flight=3,
    max_outbound_in_flight=3,
    max_buffered_output_bytes=4096,
    max_batch_size=2,
    max_remembered_ids=4,
    max_method_length=24,
)
CLIENT_CAPABILITIES: dict[str, Any] = {
    "roots": {"listChanged": True},
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
}


def line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def check(conn: Connection) -> None:
    """Invariant (iii)."""
    conn.check_invariants()


# ----------------------------------------------------------------- servers


def _server_config(limits: Limits, versions: tuple[str, ...] | None) -> ServerConfig:
    if versions is None:
        return default_server_config(limits=limits)
    return default_server_config(limits=limits, supported_versions=versions)


SERVER_SETUPS: dict[str, list[bytes]] = {
    "fresh": [],
    "legacy": [
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": CLIENT_CAPABILITIES,
                    "clientInfo": {"name": "fuzz", "version": "1"},
                },
            }
        ),
        line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "slow", "_meta": {"progressToken": "p1"}},
            }
        ),
        line({"jsonrpc": "2.0", "id": "a", "method": "prompts/get", "params": {"name": "p"}}),
    ],
    "modern": [
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "server/discover",
                "params": {"_meta": MODERN_META},
            }
        ),
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "slow", "_meta": {**MODERN_META, "progressToken": "p1"}},
            }
        ),
        line(
            {
                "jsonrpc": "2.0",
                "id": "a",
                "method": "prompts/get",
                "params": {"name": "p", "_meta": MODERN_META},
            }
        ),
    ],
}


DEFAULT_LIMITS = Limits()


def server_factory(
    setup: str, *, limits: Limits = DEFAULT_LIMITS, versions: tuple[str, ...] | None = None
) -> Factory:
    """A ServerConnection after the setup lines (output drained, invariants checked)."""
    config = _server_config(limits, versions)
    lines = SERVER_SETUPS[setup]

    def make() -> ServerConnection:
        server = ServerConnection(config)
        for data in lines:
            server.receive_data(data)
        server.data_to_send()
        check(server)
        return server

    return make


# ----------------------------------------------------------------- clients


@cache
def _handshake_reply(mode: str) -> bytes:
    """What a full server answers to this client's connect(), recorded once."""
    server = ServerConnection(default_server_config())
    client = ClientConnection(ClientConfig(mode=mode, capabilities=CLIENT_CAPABILITIES))
    client.connect()
    request = client.data_to_send()
    reply = b""
    while request:
        server.receive_data(request)
        answer = server.data_to_send()
        reply += answer
        client.receive_data(answer)
        request = client.data_to_send()
    return reply


CLIENT_SETUPS = ("idle", "connecting-legacy", "connecting-auto", "legacy", "modern")


def client_factory(setup: str, *, limits: Limits = DEFAULT_LIMITS) -> Factory:
    """A ClientConnection in `setup`: established ones have requests 1 and 2 in flight."""
    mode = {
        "idle": "auto",
        "connecting-legacy": "legacy",
        "connecting-auto": "auto",
        "legacy": "legacy",
        "modern": "auto",
    }[setup]
    config = ClientConfig(mode=mode, capabilities=CLIENT_CAPABILITIES, limits=limits)
    reply = _handshake_reply(mode) if setup in ("legacy", "modern") else b""

    def make() -> ClientConnection:
        client = ClientConnection(config)
        if setup != "idle":
            client.connect()
        if reply:
            client.receive_data(reply)
            assert client.state == State.READY, client.state
            client.send_request("tools/list")
            client.send_request("tools/call", {"name": "slow"}, progress=True)
        client.data_to_send()
        check(client)
        return client

    return make


# ----------------------------------------------------------------- feeding


#: How many times its `make test` size each Hypothesis fuzz test runs: 1 in the
#: default run, 10 in `make fuzz` (MCP_FUZZ_SCALE=10). The examples are derandomized,
#: the same on every run, so more of them in every CI run would repeat the same inputs;
#: the larger run looks further.
SCALE = float(os.environ.get("MCP_FUZZ_SCALE", "1"))


def scaled(examples: int) -> int:
    """`examples` (the count in `make test`) times `SCALE`, at least 1."""
    return max(1, round(examples * SCALE))


@dataclass
class Fed:
    """What one feeding produced: event reprs, output bytes, final state."""

    events: list[str]
    output: bytes
    state: str


def receive(conn: Connection, chunk: bytes, closed_by_us: bool) -> list[Event] | None:
    """`receive_data` with invariant (i): None when the connection refused input.

    RemoteProtocolError is allowed only once the connection has failed (ERROR);
    LocalProtocolError only once we closed it (CLOSED after our EOF or close()).
    Anything else propagates and fails the test.
    """
    before = conn.state
    try:
        return conn.receive_data(chunk)
    except RemoteProtocolError:
        assert before == State.ERROR, f"RemoteProtocolError escaped in state {before}"
        return None
    except LocalProtocolError:
        assert before == State.CLOSED and closed_by_us, f"LocalProtocolError in state {before}"
        return None


def feed(conn: Connection, chunks: Iterable[bytes]) -> Fed:
    """Feed chunks (b"" = end of stream), checking invariants after every step."""
    events: list[str] = []
    output: list[bytes] = []
    eof_fed = False
    for chunk in chunks:
        got = receive(conn, chunk, eof_fed)
        check(conn)
        if chunk == b"":
            eof_fed = True
        if got is None:
            continue
        events.extend(repr(e) for e in got)
        output.append(conn.data_to_send())
    return Fed(events, b"".join(output), conn.state)


def split_lines(data: bytes) -> list[bytes]:
    """`data` cut after every newline (the last piece may be unterminated)."""
    pieces = data.split(b"\n")
    chunks = [p + b"\n" for p in pieces[:-1]]
    if pieces[-1]:
        chunks.append(pieces[-1])
    return chunks


def check_equivalent(factory: Factory, data: bytes, splits: list[list[bytes]], eof: bool) -> Fed:
    """Invariant (ii): every way of cutting `data` gives the same events and bytes."""
    tail = [b""] if eof else []
    reference = feed(factory(), ([data] if data else []) + tail)
    for chunks in splits:
        assert b"".join(chunks) == data
        other = feed(factory(), [c for c in chunks if c] + tail)
        assert other.state == reference.state
        assert other.events == reference.events, _diff(reference.events, other.events, chunks)
        assert other.output == reference.output
    return reference


def _diff(a: list[str], b: list[str], chunks: list[bytes]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"event {i} differs with {len(chunks)} chunks:\n whole: {x}\n split: {y}"
    return f"event counts differ: whole {len(a)}, split {len(b)}"


# --------------------------------------------------------- reply accounting


def _output_messages(data: bytes) -> list[dict[str, Any]]:
    messages = []
    for raw in data.split(b"\n"):
        if raw:
            obj = json.loads(raw)  # every output line must be strict JSON
            assert type(obj) is dict and obj.get("jsonrpc") == "2.0", raw
            messages.append(obj)
    return messages


def _answer(conn: Connection, event: RequestReceived) -> None:
    if hash(repr(event.request_id)) % 2:
        sent = conn.send_result(event.request_id, {})
    else:
        sent = conn.send_error(event.request_id, -32603, "fuzz says no")
    assert sent, "an unanswered request the connection just reported must take an answer"


def reply_accounting(factory: Factory, data: bytes) -> None:
    """Invariant (iv): feed line by line, answering every request the application sees.

    A notification or a response never gets a reply; a request gets exactly one
    (an error at once, an automatic result, or the application's answer), with
    its id echoed when the id is valid and null otherwise; an unparseable line
    gets one -32700 with a null id; a line over a limit gets one -32700 with the
    id `parse` could read of it, unless it is a response or a notification.
    Stops once the connection has ended.
    """
    conn = factory()
    limits = conn.limits
    for chunk in split_lines(data):
        if conn.state in (State.ERROR, State.CLOSED):
            return
        modern_client = isinstance(conn, ClientConnection) and conn.era is Era.MODERN
        events = conn.receive_data(chunk)
        check(conn)
        for event in events:
            if isinstance(event, RequestReceived):
                _answer(conn, event)
        check(conn)
        # The engine may also send requests of its own (a handshake fallback,
        # notifications/initialized); only responses count as replies.
        replies = [m for m in _output_messages(conn.data_to_send()) if "method" not in m]
        if conn.state in (State.ERROR, State.CLOSED):
            return  # a failed handshake: the connection died
        body = chunk.rstrip(b"\n")
        if body.endswith(b"\r"):
            body = body[:-1]
        if not chunk.endswith(b"\n") or not body.strip():
            assert replies == [], (chunk, replies)
            continue
        try:
            obj = parse(body, limits)
        except LimitExceeded as refusal:
            rid, is_response, is_notification = refusal.envelope
            if is_response or is_notification:
                assert replies == [], (body, replies)
            else:
                assert len(replies) == 1 and replies[0].get("id") == rid, (body, replies)
                assert replies[0]["error"]["code"] == -32700
            continue
        except RemoteProtocolError:
            assert len(replies) == 1 and replies[0].get("id") is None, (body, replies)
            assert replies[0]["error"]["code"] == -32700
            continue
        if type(obj) is list:
            assert len(replies) <= max(1, len(obj)), (body, replies)
            for reply in replies:
                assert ("result" in reply) != ("error" in reply)
            continue
        if type(obj) is not dict:
            assert len(replies) == 1 and replies[0].get("id") is None, (body, replies)
            continue
        if "method" not in obj and ("result" in obj or "error" in obj):
            assert replies == [], f"no reply expected to response {body!r}, got {replies}"
            continue
        if "method" in obj and "id" not in obj:
            assert replies == [], f"no reply expected to notification {body!r}, got {replies}"
            continue
        rid = obj.get("id")
        if modern_client and not replies and is_request_id(rid):
            # A 2026-07-28 client answers no request at all (servers send none):
            # the engine only reports it.
            assert any(isinstance(e, MessageRejected) and e.request_id == rid for e in events), (
                body,
                events,
            )
            continue
        # A request, or an object that is neither request nor response.
        assert len(replies) == 1, f"exactly one reply expected to {body!r}, got {replies}"
        reply = replies[0]
        assert ("result" in reply) != ("error" in reply)
        expected = rid if is_request_id(rid) else None
        # From 2025-11-25 an error whose id could not be read may leave `id` out.
        got = reply.get("id")
        assert got == expected and type(got) is type(expected), (body, reply)
