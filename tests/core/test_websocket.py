"""The WebSocket transport (`mcp_core._websocket`): pure bytes, no sockets.

Client and server run back to back through bytes in memory, in both eras; the
failure rules (1002 / 1003 / 1007 / 1008 / 1009, HTTP refusals), the timers, and
two properties: the server sees the same events however its input is split, and
no input bytes make either side raise anything but `RemoteProtocolError`.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import tracemalloc
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wsproto import events as wse
from wsproto.connection import Connection as FrameConnection
from wsproto.connection import ConnectionType

from mcp_core import (
    CONNECTION_CLOSED,
    LIMIT_EXCEEDED,
    PARSE_ERROR,
    ClientConfig,
    ClientInitialized,
    Connected,
    ConnectionClosed,
    Era,
    Event,
    Limits,
    LocalProtocolError,
    MessageRejected,
    RemoteProtocolError,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    ServerConfig,
    SessionStarted,
    State,
)
from mcp_core._http_headers import HostPolicy
from mcp_core._http_server import RequestHead
from mcp_core._websocket import (
    MCP_SUBPROTOCOL,
    WebSocketAccepted,
    WebSocketClientConnection,
    WebSocketClosed,
    WebSocketLimits,
    WebSocketRejected,
    WebSocketServerConnection,
)
from mcp_core.testing import default_server_config
from mcp_core.types import ElicitRequestFormParams, ElicitResult

MODERN = "2026-07-28"
KEY = bytes(range(16))
KEY_B64 = base64.b64encode(KEY).decode()
HOST = "127.0.0.1:8000"
MASK = b"\x37\xfa\x21\x3d"

TEXT, BINARY, CLOSE, PING, PONG, CONT = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0

E = TypeVar("E", bound=Event)


# ====================================================================== helpers


def of_type(events: list[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def one(events: list[Event], kind: type[E]) -> E:
    found = of_type(events, kind)
    assert len(found) == 1, events
    return found[0]


def frame(
    opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0, mask: bytes | None = MASK
) -> bytes:
    """One raw WebSocket frame; masked (client to server) unless mask is None."""
    first = (0x80 if fin else 0) | rsv | opcode
    bit = 0x80 if mask is not None else 0
    n = len(payload)
    if n < 126:
        head = bytes([first, bit | n])
    elif n < 65536:
        head = bytes([first, bit | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([first, bit | 127]) + n.to_bytes(8, "big")
    if mask is None:
        return head + payload
    keystream = (mask * (n // 4 + 1))[:n]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(keystream, "big")).to_bytes(n, "big")
    return head + mask + masked


def text(obj: Any, *, mask: bytes | None = MASK) -> bytes:
    return frame(TEXT, json.dumps(obj).encode(), mask=mask)


def close_frame(code: int, reason: bytes = b"", *, mask: bytes | None = MASK) -> bytes:
    return frame(CLOSE, code.to_bytes(2, "big") + reason, mask=mask)


def upgrade_request(
    *,
    path: str = "/mcp",
    host: str | None = HOST,
    method: str = "GET",
    origin: str | None = None,
    extra: tuple[str, ...] = (),
    key: str = KEY_B64,
    version: str = "13",
    protocols: str | None = MCP_SUBPROTOCOL,
    upgrade: str = "websocket",
    http: str = "1.1",
) -> bytes:
    lines = [f"{method} {path} HTTP/{http}"]
    if host is not None:
        lines.append(f"Host: {host}")
    lines += [f"Upgrade: {upgrade}", "Connection: keep-alive, Upgrade"]
    lines += [f"Sec-WebSocket-Key: {key}", f"Sec-WebSocket-Version: {version}"]
    if protocols is not None:
        lines.append(f"Sec-WebSocket-Protocol: {protocols}")
    if origin is not None:
        lines.append(f"Origin: {origin}")
    lines += list(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def initialize(version: str = "2025-11-25", rid: int = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }


def split_response(data: bytes) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, everything after the head) of an HTTP response."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    assert sep, data
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, rest


@dataclass
class Frames:
    """What one side's output decodes to, read as its peer would."""

    texts: list[Any] = field(default_factory=list)
    binary: list[bytes] = field(default_factory=list)
    close: tuple[int, str] | None = None
    pongs: list[bytes] = field(default_factory=list)


class Reader:
    """Decodes frames written by a server (reader plays client) or client."""

    def __init__(self, written_by_server: bool = True) -> None:
        role = ConnectionType.CLIENT if written_by_server else ConnectionType.SERVER
        self.conn = FrameConnection(role)
        self._text: list[str] = []

    def read(self, data: bytes) -> Frames:
        out = Frames()
        self.conn.receive_data(data)
        for ev in self.conn.events():
            if isinstance(ev, wse.TextMessage):
                self._text.append(ev.data)
                if ev.message_finished:
                    out.texts.append(json.loads("".join(self._text)))
                    self._text = []
            elif isinstance(ev, wse.BytesMessage):
                out.binary.append(bytes(ev.data))
            elif isinstance(ev, wse.CloseConnection):
                out.close = (int(ev.code), ev.reason or "")
            elif isinstance(ev, wse.Pong):
                out.pongs.append(bytes(ev.payload))
        return out


def open_server(
    config: ServerConfig | None = None, **kw: Any
) -> tuple[WebSocketServerConnection, Reader]:
    """A server past a raw handshake, and a reader for its frames."""
    ws = WebSocketServerConnection(config or default_server_config(), **kw)
    events = ws.receive_data(upgrade_request())
    assert of_type(events, WebSocketAccepted), events
    status, _, rest = split_response(ws.data_to_send())
    assert status == 101 and rest == b""
    return ws, Reader()


def open_legacy_server(**kw: Any) -> tuple[WebSocketServerConnection, Reader]:
    ws, reader = open_server(**kw)
    ws.receive_data(text(initialize()))
    ws.receive_data(text({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert ws.mcp.state == State.READY
    assert reader.read(ws.data_to_send()).texts[0]["id"] == 0
    return ws, reader


class Pair:
    """A WebSocket client and server exchanging bytes in memory."""

    def __init__(
        self,
        client_config: ClientConfig | None = None,
        server_config: ServerConfig | None = None,
        *,
        client_kw: dict[str, Any] | None = None,
        server_kw: dict[str, Any] | None = None,
    ) -> None:
        self.server = WebSocketServerConnection(
            server_config or default_server_config(), **(server_kw or {})
        )
        self.client = WebSocketClientConnection(
            client_config or ClientConfig(mode="legacy"),
            host=HOST,
            new_key=lambda: KEY,
            **(client_kw or {}),
        )
        self.to_server: list[bytes] = []
        self.client_events: list[Event] = []
        self.server_events: list[Event] = []

    def pump(self) -> tuple[list[Event], list[Event]]:
        client_events: list[Event] = []
        server_events: list[Event] = []
        for _ in range(100):
            moved = False
            data = self.client.data_to_send()
            if data:
                moved = True
                self.to_server.append(data)
                server_events += self.server.receive_data(data)
            data = self.server.data_to_send()
            if data:
                moved = True
                client_events += self.client.receive_data(data)
            self.client.check_invariants()
            self.server.check_invariants()
            if not moved:
                break
        self.client_events += client_events
        self.server_events += server_events
        return client_events, server_events

    def connect(self) -> tuple[list[Event], list[Event]]:
        client_events, server_events = self.pump()
        assert one(client_events, WebSocketAccepted).subprotocol == MCP_SUBPROTOCOL
        assert one(server_events, WebSocketAccepted).subprotocol == MCP_SUBPROTOCOL
        return client_events, server_events


def closed_with_error(events: list[Event]) -> ConnectionClosed:
    closed = one(events, ConnectionClosed)
    assert closed.error is not None
    assert isinstance(closed.error, RemoteProtocolError)
    return closed


def assert_failed(
    ws: WebSocketServerConnection | WebSocketClientConnection,
    events: list[Event],
    code: int,
    reader: Reader,
) -> None:
    """The side failed the WebSocket with `code`: events, close frame, state."""
    closed = one(events, WebSocketClosed)
    assert (closed.code, closed.by_peer) == (code, False)
    error = closed_with_error(events).error
    assert error is not None and error.data == {"close_code": code}
    out = reader.read(ws.data_to_send())
    assert out.close is not None and out.close[0] == code
    assert ws.closed and ws.mcp.state == State.ERROR
    ws.check_invariants()
    assert ws.receive_data(text({"jsonrpc": "2.0", "id": 9, "method": "ping"})) == []
    assert ws.data_to_send() == b""


# ============================================================ round trips (both eras)


def test_legacy_initialize_and_tools_call() -> None:
    pair = Pair(ClientConfig(mode="legacy"))
    client_events, server_events = pair.connect()
    connected = one(client_events, Connected)
    assert connected.era is Era.LEGACY and connected.protocol_version == "2025-11-25"
    assert one(server_events, SessionStarted).protocol_version == "2025-11-25"
    assert one(server_events, ClientInitialized) == ClientInitialized()

    rid = pair.client.mcp.send_request("tools/call", {"name": "echo", "arguments": {"x": 1}})
    _, server_events = pair.pump()
    request = one(server_events, RequestReceived)
    assert (request.method, request.params.name, request.params.arguments) == (
        "tools/call",
        "echo",
        {"x": 1},
    )
    pair.server.mcp.send_result(request.request_id, {"content": [{"type": "text", "text": "hi"}]})
    client_events, _ = pair.pump()
    response = one(client_events, ResponseReceived)
    assert response.request_id == rid
    assert response.result.content[0].text == "hi"


def test_every_frame_carries_exactly_one_message() -> None:
    pair = Pair(ClientConfig(mode="legacy"))
    pair.connect()
    for i in range(3):
        pair.client.mcp.send_request("tools/call", {"name": f"t{i}", "arguments": {}})
    data = pair.client.data_to_send()
    out = Reader(written_by_server=False).read(data)
    assert [m["params"]["name"] for m in out.texts] == ["t0", "t1", "t2"]
    events = pair.server.receive_data(data)
    assert [e.params.name for e in of_type(events, RequestReceived)] == ["t0", "t1", "t2"]


def test_legacy_elicitation_from_server_answered_by_client() -> None:
    config = ClientConfig(mode="2025-11-25", capabilities={"elicitation": {"form": {}}})
    pair = Pair(config)
    pair.connect()
    pair.client.mcp.send_request("tools/call", {"name": "book", "arguments": {}})
    _, server_events = pair.pump()
    call = one(server_events, RequestReceived)

    schema = {"type": "object", "properties": {"party": {"type": "integer"}}}
    sid = pair.server.mcp.send_request(
        "elicitation/create",
        {"mode": "form", "message": "How many?", "requestedSchema": schema},
        related_request_id=call.request_id,
    )
    client_events, _ = pair.pump()
    ask = one(client_events, RequestReceived)
    assert ask.method == "elicitation/create"
    assert isinstance(ask.params, ElicitRequestFormParams)
    assert ask.params.message == "How many?"

    pair.client.mcp.send_result(ask.request_id, ElicitResult(action="accept", content={"party": 4}))
    _, server_events = pair.pump()
    answer = one(server_events, ResponseReceived)
    assert (answer.request_id, answer.result.action, answer.result.content) == (
        sid,
        "accept",
        {"party": 4},
    )
    pair.server.mcp.send_result(call.request_id, {"content": [{"type": "text", "text": "booked"}]})
    client_events, _ = pair.pump()
    assert one(client_events, ResponseReceived).result.content[0].text == "booked"


def test_modern_pinned_revision_is_connected_on_accept() -> None:
    pair = Pair(ClientConfig(mode=MODERN))
    client_events, server_events = pair.connect()
    # Pinned 2026-07-28: no handshake message at all, Connected comes with the 101.
    assert [type(e) for e in client_events] == [WebSocketAccepted, Connected]
    assert one(client_events, Connected).era is Era.MODERN
    assert [type(e) for e in server_events] == [WebSocketAccepted]

    pair.client.mcp.send_request("tools/call", {"name": "echo", "arguments": {}})
    _, server_events = pair.pump()
    request = one(server_events, RequestReceived)
    assert request.context.protocol_version == MODERN
    assert pair.server.mcp.era is Era.MODERN
    pair.server.mcp.send_result(request.request_id, {"content": []})
    client_events, _ = pair.pump()
    assert one(client_events, ResponseReceived).method == "tools/call"


def test_auto_mode_discovers_a_modern_server() -> None:
    pair = Pair(ClientConfig(mode="auto"))
    client_events, _ = pair.connect()
    connected = one(client_events, Connected)
    assert (connected.era, connected.protocol_version) == (Era.MODERN, MODERN)
    pair.client.mcp.send_request("tools/list")
    _, server_events = pair.pump()
    request = one(server_events, RequestReceived)
    pair.server.mcp.send_result(request.request_id, {"tools": []})
    client_events, _ = pair.pump()
    assert one(client_events, ResponseReceived).result.tools == []


def test_auto_mode_falls_back_to_initialize_on_a_legacy_only_server() -> None:
    server = default_server_config(supported_versions=("2025-06-18", "2025-11-25"))
    pair = Pair(ClientConfig(mode="auto"), server)
    client_events, server_events = pair.connect()
    connected = one(client_events, Connected)
    assert (connected.era, connected.protocol_version) == (Era.LEGACY, "2025-11-25")
    assert one(server_events, SessionStarted).protocol_version == "2025-11-25"


def test_modern_input_required_round_trip() -> None:
    pair = Pair(ClientConfig(mode="auto", capabilities={"elicitation": {"form": {}}}))
    pair.connect()
    call_id = pair.client.mcp.send_request("tools/call", {"name": "book", "arguments": {}})
    _, server_events = pair.pump()
    first = one(server_events, RequestReceived)
    ask = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Party?",
            "requestedSchema": {"type": "object", "properties": {}},
        },
    }
    assert pair.server.mcp.send_input_required(first.request_id, {"party": ask})
    client_events, _ = pair.pump()
    question = one(client_events, RequestReceived)
    assert question.method == "elicitation/create"
    pair.client.mcp.send_result(question.request_id, {"action": "accept", "content": {}})
    _, server_events = pair.pump()  # the retry, with the answers attached
    retry = one(server_events, RequestReceived)
    assert retry.context.input_responses is not None
    assert set(retry.context.input_responses) == {"party"}
    pair.server.mcp.send_result(retry.request_id, {"content": []})
    client_events, _ = pair.pump()
    assert one(client_events, ResponseReceived).request_id == call_id


def test_client_may_call_connect_itself_before_the_upgrade_completes() -> None:
    pair = Pair(ClientConfig(mode="legacy"))
    assert pair.client.mcp.connect() == []
    head = pair.client.data_to_send()
    assert head.startswith(b"GET /mcp HTTP/1.1\r\n") and b"initialize" not in head
    pair.to_server.append(head)
    pair.server.receive_data(head)
    client_events, _ = pair.pump()
    assert one(client_events, Connected).era is Era.LEGACY


def test_principal_of_binds_the_server_connection() -> None:
    seen: list[RequestHead] = []

    def principal_of(head: RequestHead) -> str | None:
        seen.append(head)
        return head.header("authorization")

    pair = Pair(
        client_kw={"extra_headers": [("authorization", "Bearer alice")]},
        server_kw={"principal_of": principal_of},
    )
    _, server_events = pair.connect()
    assert pair.server.mcp.principal == "Bearer alice"
    assert seen[0].target == "/mcp"
    assert ("authorization", "Bearer alice") in one(server_events, WebSocketAccepted).headers


# ==================================================================== handshake rules


def test_subprotocol_mcp_is_selected_only_when_offered() -> None:
    for offered, expected in (("mcp", "mcp"), ("foo, mcp", "mcp"), ("foo", None), (None, None)):
        ws = WebSocketServerConnection(default_server_config())
        events = ws.receive_data(upgrade_request(protocols=offered))
        assert one(events, WebSocketAccepted).subprotocol == expected
        status, headers, _ = split_response(ws.data_to_send())
        assert status == 101
        assert headers.get("sec-websocket-protocol") == expected


def test_server_answers_the_rfc_accept_token_and_declines_extensions() -> None:
    ws = WebSocketServerConnection(default_server_config())
    ws.receive_data(
        upgrade_request(
            key="dGhlIHNhbXBsZSBub25jZQ==",
            extra=("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits",),
        )
    )
    status, headers, _ = split_response(ws.data_to_send())
    assert status == 101
    assert headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="  # RFC 6455 1.3
    assert "sec-websocket-extensions" not in headers
    # A compressed frame (RSV1) is then a protocol error: nothing was negotiated.
    reader = Reader()
    events = ws.receive_data(frame(TEXT, b"{}", rsv=0x40))
    assert_failed(ws, events, 1002, reader)


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (upgrade_request(path="/other"), 404),
        (upgrade_request(path="/mcp/x"), 404),
        (upgrade_request(origin="http://evil.example"), 403),
        (upgrade_request(origin="null"), 403),
        (upgrade_request(host="attacker.example"), 421),
        (upgrade_request(host="localhost:80@evil"), 421),
        (upgrade_request(method="POST"), 405),
        (upgrade_request(upgrade="h2c"), 426),
        (upgrade_request(version="8"), 426),
        (upgrade_request(key="c2hvcnQ="), 400),
        (upgrade_request(key="not base64!!"), 400),
        (upgrade_request(extra=("Content-Length: 5",)), 400),
        (upgrade_request(http="1.0"), 400),
        (upgrade_request(host=None), 400),
        (upgrade_request(extra=("Host: 127.0.0.1:8000",)), 400),
        (upgrade_request().replace(b"Connection: keep-alive, Upgrade", b"Connection: close"), 400),
        (b"GARBAGE\r\n\r\n", 400),
        (upgrade_request(extra=("X-A: 1\r\n folded",)), 400),
        (upgrade_request().replace(b"\r\n", b"\n"), 400),
        (b"GET /mcp HTTP/1.1\r\nX-Big: " + b"a" * 20_000, 431),
    ],
)
def test_server_refuses_bad_upgrades_with_http_status(request_bytes: bytes, status: int) -> None:
    ws = WebSocketServerConnection(default_server_config())
    events = ws.receive_data(request_bytes)
    assert one(events, WebSocketRejected).status == status
    assert one(events, ConnectionClosed).error is None
    got, headers, body = split_response(ws.data_to_send())
    assert got == status
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    if status == 403:
        assert json.loads(body)["error"]["message"] == "Forbidden: invalid Origin header"
    if status == 426:
        assert headers["sec-websocket-version"] == "13"
    if status == 405:
        assert headers["allow"] == "GET"
    assert ws.closed
    ws.check_invariants()
    assert ws.receive_data(upgrade_request()) == []


def upgrade_of_size(size: int) -> bytes:
    """A valid upgrade request whose head is exactly `size` bytes (`X-Pad` takes the slack)."""
    slack = size - len(upgrade_request(extra=("X-Pad: x",)))
    request = upgrade_request(extra=(f"X-Pad: {'a' * slack}x",))
    assert len(request) == size
    return request


@pytest.mark.parametrize("how", ["one call", "byte by byte", "two calls"])
def test_upgrade_head_limit_holds_however_the_bytes_arrive(how: str) -> None:
    limit = 1024
    for size, accepted in ((limit, True), (limit + 1, False)):
        ws = WebSocketServerConnection(
            default_server_config(), limits=WebSocketLimits(max_header_bytes=limit)
        )
        request = upgrade_of_size(size)
        chunks = {
            "one call": [request],
            "byte by byte": [request[i : i + 1] for i in range(len(request))],
            "two calls": [request[:500], request[500:]],
        }[how]
        events: list[Event] = []
        for chunk in chunks:
            events += ws.receive_data(chunk)
        status, _, _ = split_response(ws.data_to_send())
        if accepted:
            assert status == 101 and of_type(events, WebSocketAccepted)
        else:
            assert status == 431 and one(events, WebSocketRejected).status == 431
            assert not of_type(events, WebSocketAccepted) and ws.closed
        ws.check_invariants()


@pytest.mark.parametrize("size", [20 * 1024, 2**20])
def test_an_oversized_upgrade_in_one_call_is_431(size: int) -> None:
    """The default 16 KiB limit: h11 alone would parse a head that arrives whole."""
    ws = WebSocketServerConnection(default_server_config())
    events = ws.receive_data(upgrade_of_size(size) + text(initialize()))
    assert one(events, WebSocketRejected).status == 431
    assert not of_type(events, WebSocketAccepted)
    status, headers, _ = split_response(ws.data_to_send())
    assert status == 431 and headers["connection"] == "close"
    assert ws.closed and ws.mcp.state == State.CLOSED
    assert ws.receive_data(text(initialize())) == []


def test_host_policy_port_and_explicit_none() -> None:
    strict = WebSocketServerConnection(
        default_server_config(), host_policy=HostPolicy.loopback(8000)
    )
    assert of_type(strict.receive_data(upgrade_request(host="localhost:8000")), WebSocketAccepted)
    strict = WebSocketServerConnection(
        default_server_config(), host_policy=HostPolicy.loopback(8000)
    )
    assert (
        one(strict.receive_data(upgrade_request(host="localhost:9000")), WebSocketRejected).status
        == 421
    )
    allowed = WebSocketServerConnection(
        default_server_config(), host_policy=HostPolicy.loopback(8000)
    )
    events = allowed.receive_data(upgrade_request(origin="http://localhost:8000"))
    assert of_type(events, WebSocketAccepted)
    anything = WebSocketServerConnection(default_server_config(), host_policy=None)
    events = anything.receive_data(
        upgrade_request(host="mcp.example.com", origin="https://app.example")
    )
    assert of_type(events, WebSocketAccepted)


def test_query_string_is_ignored_for_path_matching() -> None:
    ws = WebSocketServerConnection(default_server_config(), path="/ws")
    events = ws.receive_data(upgrade_request(path="/ws?token=abc"))
    assert one(events, WebSocketAccepted).target == "/ws?token=abc"


@pytest.mark.parametrize(
    ("target", "accepted"), [("/mcp", True), ("/", True), ("/?a=1", True), ("/other", False)]
)
def test_aliases_are_accepted_as_the_endpoint(target: str, accepted: bool) -> None:
    ws = WebSocketServerConnection(default_server_config(), path="/mcp", aliases=("/",))
    events = ws.receive_data(upgrade_request(path=target))
    if accepted:
        assert one(events, WebSocketAccepted).target == target
    else:
        assert one(events, WebSocketRejected).status == 404


def test_client_sees_the_refusal_and_its_body() -> None:
    pair = Pair(server_kw={"path": "/elsewhere"})
    client_events, server_events = pair.pump()
    assert one(server_events, WebSocketRejected).status == 404
    rejected = one(client_events, WebSocketRejected)
    # The body names the endpoint, so the client's error can say where to go.
    assert (rejected.status, rejected.reason) == (404, "Not Found: the MCP endpoint is /elsewhere")
    error = closed_with_error(client_events).error
    assert error is not None and error.http_status == 404
    assert pair.client.closed and pair.client.mcp.state == State.ERROR

    pair = Pair(client_kw={"origin": "http://evil.example"})
    client_events, _ = pair.pump()
    rejected = one(client_events, WebSocketRejected)
    assert rejected.status == 403
    assert json.loads(rejected.reason)["error"]["code"] == -32600


def test_client_refusal_body_is_capped_and_eof_delimited() -> None:
    client = WebSocketClientConnection(ClientConfig(), host=HOST, new_key=lambda: KEY)
    client.data_to_send()
    assert client.receive_data(b"HTTP/1.1 503 Busy\r\n\r\n" + b"x" * 100) == []
    events = client.receive_data(b"")
    assert one(events, WebSocketRejected) == WebSocketRejected(503, "x" * 100)
    client = WebSocketClientConnection(ClientConfig(), host=HOST, new_key=lambda: KEY)
    events = client.receive_data(b"HTTP/1.1 500 Oops\r\n\r\n" + b"y" * 100_000)
    assert len(one(events, WebSocketRejected).reason) == 4096
    assert client.closed


def accept_response(
    key: str = KEY_B64, *, protocol: str | None = "mcp", extra: tuple[str, ...] = ()
) -> bytes:
    from wsproto.utilities import generate_accept_token

    lines = [
        "HTTP/1.1 101 Switching Protocols",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Accept: {generate_accept_token(key.encode()).decode()}",
    ]
    if protocol is not None:
        lines.append(f"Sec-WebSocket-Protocol: {protocol}")
    lines += list(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@pytest.mark.parametrize(
    ("response", "problem"),
    [
        (accept_response(key="dGhlIHNhbXBsZSBub25jZQ=="), "Sec-WebSocket-Accept"),
        (accept_response(protocol="graphql-ws"), "subprotocol"),
        (accept_response(extra=("Sec-WebSocket-Extensions: permessage-deflate",)), "extension"),
        (accept_response().replace(b"Upgrade: websocket\r\n", b""), "Upgrade"),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "Connection"),
        (b"\x00\x01garbage\r\n\r\n", "malformed"),
    ],
)
def test_client_fails_a_bad_101(response: bytes, problem: str) -> None:
    client = WebSocketClientConnection(ClientConfig(mode="legacy"), host=HOST, new_key=lambda: KEY)
    request = client.data_to_send()
    assert f"sec-websocket-key: {KEY_B64}".encode() in request
    events = client.receive_data(response)
    closed = closed_with_error(events)
    assert problem in closed.reason
    assert client.closed and not of_type(events, WebSocketAccepted)
    assert client.data_to_send() == b""
    client.check_invariants()


def test_client_accepts_a_101_without_subprotocol_and_skips_interim_responses() -> None:
    client = WebSocketClientConnection(ClientConfig(mode="legacy"), host=HOST, new_key=lambda: KEY)
    client.data_to_send()
    events = client.receive_data(b"HTTP/1.1 100 Continue\r\n\r\n" + accept_response(protocol=None))
    assert one(events, WebSocketAccepted).subprotocol is None
    # connect() ran: the initialize request goes out as one masked text frame.
    out = Reader(written_by_server=False).read(client.data_to_send())
    assert [m["method"] for m in out.texts] == ["initialize"]


def test_client_reads_frames_sent_right_behind_the_101() -> None:
    client = WebSocketClientConnection(ClientConfig(mode="legacy"), host=HOST, new_key=lambda: KEY)
    client.data_to_send()
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    events = client.receive_data(
        accept_response() + text({"jsonrpc": "2.0", "id": 0, "result": result}, mask=None)
    )
    assert [type(e) for e in events] == [WebSocketAccepted, Connected]


def test_client_key_and_constructor_checks() -> None:
    with pytest.raises(ValueError):
        WebSocketClientConnection(ClientConfig(), host=HOST, new_key=lambda: b"short")
    with pytest.raises(ValueError):
        WebSocketClientConnection(
            ClientConfig(), host=HOST, new_key=lambda: KEY, subprotocols=["a b"]
        )
    with pytest.raises(LocalProtocolError):
        WebSocketClientConnection(ClientConfig(), host="bad\r\nhost", new_key=lambda: KEY)
    with pytest.raises(ValueError):
        WebSocketLimits(max_fragments=0)


# ======================================================================= frame rules


def test_binary_message_closes_with_1003() -> None:
    ws, reader = open_legacy_server()
    events = ws.receive_data(frame(BINARY, b'{"jsonrpc":"2.0","id":1,"method":"ping"}'))
    assert_failed(ws, events, 1003, reader)


def test_binary_from_the_server_closes_the_client_with_1003() -> None:
    pair = Pair()
    pair.connect()
    events = pair.client.receive_data(frame(BINARY, b"\x00\x01", mask=None))
    assert_failed(pair.client, events, 1003, Reader(written_by_server=False))


def test_invalid_utf8_closes_with_1007() -> None:
    ws, reader = open_legacy_server()
    events = ws.receive_data(frame(TEXT, b'{"a":"\xff\xfe"}'))
    assert_failed(ws, events, 1007, reader)


def test_invalid_utf8_split_across_fragments_closes_with_1007() -> None:
    ws, reader = open_legacy_server()
    events = ws.receive_data(frame(TEXT, b'"\xe2\x82', fin=False) + frame(CONT, b'x"'))
    assert_failed(ws, events, 1007, reader)


def test_a_character_split_across_fragments_is_reassembled() -> None:
    ws, _ = open_legacy_server()
    payload = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "caf\u00e9", "arguments": {}},
        },
        ensure_ascii=False,
    ).encode()
    cut = payload.index("\u00e9".encode()) + 1  # inside the two-byte character
    events = ws.receive_data(frame(TEXT, payload[:cut], fin=False))
    assert events == []
    events = ws.receive_data(frame(CONT, payload[cut:]))
    assert one(events, RequestReceived).params.name == "caf\u00e9"


OVERSIZED_HEAD = b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"p":"'


def oversized_fragments(count: int = 1000, size: int = 1024) -> list[bytes]:
    body = OVERSIZED_HEAD + b"a" * (count * size) + b'"}}'
    chunks = [body[i * size : (i + 1) * size] for i in range(count)]
    chunks[-1] += body[count * size :]
    frames = [frame(TEXT, chunks[0], fin=False, mask=b"\x00\x00\x00\x00")]
    frames += [frame(CONT, c, fin=False, mask=b"\x00\x00\x00\x00") for c in chunks[1:-1]]
    frames.append(frame(CONT, chunks[-1], mask=b"\x00\x00\x00\x00"))
    return frames


def refused_and_still_open(
    ws: WebSocketServerConnection, events: list[Event], reader: Reader, size: int, setting: str
) -> None:
    """The oversized request was answered with its id, and the WebSocket serves on."""
    limit = ws.limits.max_message_bytes or ws.mcp.limits.max_message_bytes
    message = f"message of {size} bytes exceeds the limit of {limit} bytes ({setting})"
    assert one(events, MessageRejected).request_id == 8
    assert not of_type(events, WebSocketClosed)
    assert reader.read(ws.data_to_send()).texts == [
        {"jsonrpc": "2.0", "id": 8, "error": {"code": PARSE_ERROR, "message": message}}
    ]
    ws.receive_data(text({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
    assert reader.read(ws.data_to_send()).texts == [{"jsonrpc": "2.0", "id": 9, "result": {}}]
    assert not ws.closed and ws.mcp.state == State.READY
    ws.check_invariants()


def test_oversized_message_across_1000_fragments_is_refused_fragment_by_fragment() -> None:
    cap = 64 * 1024
    ws, reader = open_legacy_server(limits=WebSocketLimits(max_message_bytes=cap))
    events: list[Event] = []
    for piece in oversized_fragments():
        assert ws.data_to_send() == b""  # nothing is answered before the message ends
        events += ws.receive_data(piece)
        ws.check_invariants()  # only the two ends are kept past the cap
    size = len(OVERSIZED_HEAD) + 1000 * 1024 + 3
    refused_and_still_open(ws, events, reader, size, "WebSocketLimits.max_message_bytes")


def test_oversized_message_in_one_chunk_is_refused_in_bounded_memory() -> None:
    cap = 64 * 1024
    ws, reader = open_legacy_server(limits=WebSocketLimits(max_message_bytes=cap))
    data = b"".join(oversized_fragments(1000, 4096))  # ~4 MiB on the wire
    tracemalloc.start()
    try:
        events = ws.receive_data(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * cap, peak  # a few slices, never the whole 4 MiB message
    size = len(OVERSIZED_HEAD) + 1000 * 4096 + 3
    refused_and_still_open(ws, events, reader, size, "WebSocketLimits.max_message_bytes")


def test_message_over_the_mcp_limit_is_refused_by_default() -> None:
    config = default_server_config(limits=Limits(max_message_bytes=1000))
    ws, reader = open_legacy_server(config=config)
    body = OVERSIZED_HEAD + b"x" * 2000 + b'"}}'
    events = ws.receive_data(frame(TEXT, body))
    refused_and_still_open(ws, events, reader, len(body), "Limits.max_message_bytes")


def test_an_oversized_response_fails_only_the_request_it_answers() -> None:
    pair = Pair(ClientConfig(mode="legacy", limits=Limits(max_message_bytes=2000)))
    pair.connect()
    pair.pump()
    mcp = pair.client.mcp
    refused = mcp.send_request("ping")
    pair.client.data_to_send()  # dropped: only the oversized answer below comes back
    answer = f'{{"jsonrpc":"2.0","id":{refused},"result":{{"p":"{"x" * 3000}"}}}}'
    events = pair.client.receive_data(frame(TEXT, answer.encode(), mask=None))
    failed = one(events, RequestFailed)
    assert (failed.request_id, failed.code) == (refused, LIMIT_EXCEEDED)
    assert "exceeds the limit of 2000 bytes (Limits.max_message_bytes)" in failed.message
    assert not of_type(events, WebSocketClosed) and mcp.state == State.READY
    kept = mcp.send_request("ping")
    client_events, _ = pair.pump()
    assert one(client_events, ResponseReceived).request_id == kept


def test_a_message_at_the_limit_is_delivered() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": ""}
    size = len(json.dumps(request).encode())
    request["pad"] = "x" * (300 - size)
    ws, reader = open_legacy_server(limits=WebSocketLimits(max_message_bytes=300))
    body = json.dumps(request).encode()
    assert len(body) == 300
    ws.receive_data(frame(TEXT, body[:100], fin=False) + frame(CONT, body[100:]))
    assert reader.read(ws.data_to_send()).texts == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_too_many_fragments_closes_with_1008() -> None:
    ws, reader = open_legacy_server(limits=WebSocketLimits(max_fragments=100))
    data = frame(TEXT, b"[", fin=False) + b"".join(frame(CONT, b" ", fin=False) for _ in range(150))
    events = ws.receive_data(data)
    assert_failed(ws, events, 1008, reader)


def test_exactly_max_fragments_is_fine() -> None:
    ws, reader = open_legacy_server(limits=WebSocketLimits(max_fragments=4))
    body = b'{"jsonrpc":"2.0","id":3,"method":"ping"}'
    parts = [body[:10], body[10:20], body[20:30], body[30:]]
    data = frame(TEXT, parts[0], fin=False) + frame(CONT, parts[1], fin=False)
    data += frame(CONT, parts[2], fin=False) + frame(CONT, parts[3])
    ws.receive_data(data)
    assert reader.read(ws.data_to_send()).texts == [{"jsonrpc": "2.0", "id": 3, "result": {}}]


@pytest.mark.parametrize(
    "violation",
    [
        frame(TEXT, b"{}", mask=None),  # a client frame must be masked
        frame(TEXT, b"{}", rsv=0x20),  # reserved bit, no extension
        frame(0x3, b"{}"),  # reserved opcode
        frame(CONT, b"{}"),  # continuation with nothing to continue
        frame(PING, b"x", fin=False),  # fragmented control frame
        frame(TEXT, b"[", fin=False) + frame(TEXT, b"]"),  # new message inside one
        frame(PING, b"x" * 126),  # control frame over 125 bytes
        frame(CLOSE, b"\x03"),  # one-byte close payload
        close_frame(999),  # bad close codes
        close_frame(1004),
        close_frame(1005),
        close_frame(1006),
        close_frame(2999),
        close_frame(5000),
        bytes([0x81, 0xFE, 0x00, 0x05]) + MASK + b"12345",  # 2-byte length for a short payload
    ],
)
def test_protocol_violations_close_with_1002(violation: bytes) -> None:
    ws, reader = open_legacy_server()
    events = ws.receive_data(violation)
    assert_failed(ws, events, 1002, reader)


def test_close_reason_with_invalid_utf8_closes_with_1007() -> None:
    ws, reader = open_legacy_server()
    events = ws.receive_data(close_frame(1000, b"\xff"))
    assert_failed(ws, events, 1007, reader)


def test_replies_queued_before_a_failure_still_go_out_before_the_close() -> None:
    ws, reader = open_legacy_server()
    events = ws.receive_data(
        text({"jsonrpc": "2.0", "id": 7, "method": "ping"}) + frame(BINARY, b"x")
    )
    assert one(events, WebSocketClosed).code == 1003
    out = reader.read(ws.data_to_send())
    assert out.texts == [{"jsonrpc": "2.0", "id": 7, "result": {}}]
    assert out.close is not None and out.close[0] == 1003


def test_protocol_error_at_the_client_settles_its_pending_requests() -> None:
    pair = Pair()
    pair.connect()
    rid = pair.client.mcp.send_request("tools/call", {"name": "slow", "arguments": {}})
    pair.pump()
    events = pair.client.receive_data(frame(TEXT, b"{}"))  # a masked frame from the server
    failed = one(events, RequestFailed)
    assert (failed.request_id, failed.code) == (rid, CONNECTION_CLOSED)
    assert_failed(pair.client, events, 1002, Reader(written_by_server=False))


def test_bad_json_in_a_text_frame_is_an_mcp_error_not_a_websocket_one() -> None:
    ws, reader = open_legacy_server()
    events = ws.receive_data(frame(TEXT, b"{not json"))
    assert one(events, MessageRejected).code == -32700
    assert not ws.closed and ws.state == "open"
    assert reader.read(ws.data_to_send()).texts[0]["error"]["code"] == -32700


# ============================================================ ping, close, timers


def test_ping_is_answered_and_pongs_coalesce() -> None:
    ws, reader = open_legacy_server()
    ws.receive_data(frame(PING, b"one"))
    assert reader.read(ws.data_to_send()).pongs == [b"one"]
    ws.receive_data(frame(PING, b"a") + frame(PING, b"b") + frame(PING, b"c"))
    assert reader.read(ws.data_to_send()).pongs == [b"c"]
    # A ping flood without reading keeps one pong, never a growing buffer.
    for i in range(1000):
        ws.receive_data(frame(PING, str(i).encode()))
        ws.check_invariants()
    assert reader.read(ws.data_to_send()).pongs == [b"999"]
    ws.receive_data(frame(PONG, b"unsolicited"))
    assert ws.state == "open"


def test_ping_between_fragments_is_allowed() -> None:
    ws, reader = open_legacy_server()
    body = b'{"jsonrpc":"2.0","id":4,"method":"ping"}'
    ws.receive_data(frame(TEXT, body[:5], fin=False) + frame(PING, b"p") + frame(CONT, body[5:]))
    out = reader.read(ws.data_to_send())
    assert out.pongs == [b"p"]
    assert out.texts == [{"jsonrpc": "2.0", "id": 4, "result": {}}]


def test_peer_close_settles_pending_requests_on_the_client() -> None:
    pair = Pair()
    pair.connect()
    rid = pair.client.mcp.send_request("tools/call", {"name": "slow", "arguments": {}})
    _, server_events = pair.pump()
    inbound = one(server_events, RequestReceived).request_id

    server_events = pair.server.close(1001, "shutting down")
    assert one(server_events, WebSocketClosed) == WebSocketClosed(
        1001, "shutting down", by_peer=False
    )
    assert one(server_events, ConnectionClosed).abandoned_inbound == (inbound,)
    assert pair.server.state == "closing" and not pair.server.closed

    client_events, _ = pair.pump()
    failed = one(client_events, RequestFailed)
    assert (failed.request_id, failed.method, failed.code) == (rid, "tools/call", CONNECTION_CLOSED)
    assert one(client_events, WebSocketClosed) == WebSocketClosed(
        1001, "shutting down", by_peer=True
    )
    closed = one(client_events, ConnectionClosed)
    assert closed.error is None and "1001" in closed.reason
    assert pair.client.closed and pair.server.closed  # the echo completed the handshake
    with pytest.raises(LocalProtocolError):
        pair.client.mcp.send_request("tools/list")


def test_client_close_settles_the_servers_pending_elicitation() -> None:
    pair = Pair(ClientConfig(mode="2025-11-25", capabilities={"elicitation": {}}))
    pair.connect()
    pair.client.mcp.send_request("tools/call", {"name": "book", "arguments": {}})
    _, server_events = pair.pump()
    call = one(server_events, RequestReceived)
    sid = pair.server.mcp.send_request(
        "elicitation/create",
        {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
        related_request_id=call.request_id,
    )
    pair.pump()
    pair.client.close()
    _, server_events = pair.pump()
    failed = one(server_events, RequestFailed)
    assert (failed.request_id, failed.method) == (sid, "elicitation/create")
    assert one(server_events, WebSocketClosed).by_peer
    assert one(server_events, ConnectionClosed).abandoned_inbound == (call.request_id,)


def test_eof_without_close_frame_is_1006() -> None:
    ws, _ = open_legacy_server()
    ws.receive_data(text({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}))
    events = ws.receive_data(b"")
    assert one(events, WebSocketClosed) == WebSocketClosed(
        1006, "connection lost without a close frame", by_peer=True
    )
    assert one(events, ConnectionClosed).abandoned_inbound == (8,)
    assert ws.closed and ws.data_to_send() == b""


def test_close_code_must_be_sendable() -> None:
    ws, _ = open_legacy_server()
    for code in (1005, 1006, 999, 2000, 5000):
        with pytest.raises(LocalProtocolError):
            ws.close(code)
    ws.close(4000, "app-specific")
    assert ws.close() == []  # once


def test_application_closing_the_mcp_connection_closes_the_websocket() -> None:
    ws, reader = open_legacy_server()
    ws.receive_data(text({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}))
    ws.mcp.send_result(8, {"tools": []})
    ws.mcp.close("done")
    out = reader.read(ws.data_to_send())
    assert out.texts == [{"jsonrpc": "2.0", "id": 8, "result": {"tools": []}}]
    assert out.close == (1000, "MCP connection closed")  # its reason went to the app
    assert ws.next_deadline() == float("-inf")
    assert ws.tick(0.0) == [WebSocketClosed(1000, "MCP connection closed", by_peer=False)]
    ws.receive_data(close_frame(1000))
    assert ws.closed


def test_close_timeout_when_the_peer_never_answers() -> None:
    ws, _ = open_legacy_server()
    ws.close()
    ws.data_to_send()
    assert ws.next_deadline() == float("-inf")  # the timer starts at the next tick
    assert ws.tick(100.0) == []
    assert ws.next_deadline() == 105.0
    ws.tick(104.9)
    assert not ws.closed
    ws.tick(105.0)
    assert ws.closed and ws.next_deadline() is None


def test_server_handshake_timeout_answers_408() -> None:
    ws = WebSocketServerConnection(default_server_config())
    assert ws.next_deadline() == float("-inf")
    ws.tick(50.0)
    assert ws.next_deadline() == 60.0
    assert ws.receive_data(b"GET /mcp HTTP/1.1\r\nHost: 127.0") == []  # slowloris
    assert ws.tick(59.0) == []
    events = ws.tick(60.0)
    assert one(events, WebSocketRejected).status == 408
    one(events, ConnectionClosed)
    assert split_response(ws.data_to_send())[0] == 408
    assert ws.closed


def test_client_handshake_timeout_fails_the_connection() -> None:
    client = WebSocketClientConnection(
        ClientConfig(),
        host=HOST,
        new_key=lambda: KEY,
        limits=WebSocketLimits(handshake_timeout=2.0),
    )
    client.tick(0.0)
    events = client.tick(2.0)
    assert "timed out" in closed_with_error(events).reason
    assert client.closed


def test_mcp_request_deadlines_run_through_tick() -> None:
    pair = Pair()
    pair.connect()
    pair.client.tick(0.0)
    rid = pair.client.mcp.send_request(
        "tools/call", {"name": "slow", "arguments": {}}, deadline=30.0
    )
    pair.pump()
    assert pair.client.next_deadline() == 30.0
    events = pair.client.tick(30.0)
    assert one(events, RequestFailed).request_id == rid
    _, server_events = pair.pump()  # the cancellation reached the server
    assert one(server_events, RequestCancelled).reason == "timed out"


# ================================================================== split equivalence


def normalize(events: list[Event]) -> list[Any]:
    out: list[Any] = []
    for e in events:
        if isinstance(e, ConnectionClosed):
            err = e.error
            out.append(("closed", e.reason, e.abandoned_inbound, err and (err.message, err.data)))
        else:
            out.append(e)
    return out


def run_server(chunks: list[bytes]) -> list[Any]:
    """Feed a server chunk by chunk (draining its output each time); its events.

    Output is not compared: what the engine queued for a peer that has meanwhile
    sent its close is dropped, so it depends on when the caller drained.
    """
    ws = WebSocketServerConnection(default_server_config())
    events: list[Event] = []
    for chunk in chunks:
        events += ws.receive_data(chunk)
        ws.data_to_send()
        ws.check_invariants()
    return normalize(events)


def recorded_session() -> bytes:
    """What a real client sends (legacy session, two calls), plus hand-made frames:
    a fragmented request with a ping between fragments, then a close."""
    pair = Pair(ClientConfig(mode="legacy"))
    pair.connect()
    pair.client.mcp.send_request(
        "tools/call", {"name": "a\u00e9b", "arguments": {"k": "\u2603" * 50}}
    )
    pair.client.mcp.send_request("tools/call", {"name": "second", "arguments": {}})
    pair.pump()
    body = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}).encode()
    tail = (
        frame(TEXT, body[:7], fin=False) + frame(PING, b"hi") + frame(CONT, body[7:20], fin=False)
    )
    tail += frame(CONT, body[20:]) + close_frame(1000, b"bye")
    return b"".join(pair.to_server) + tail


SESSION = recorded_session()
FAILING_SESSION = (
    SESSION[: SESSION.rindex(frame(PING, b"hi")) - len(frame(TEXT, b"x" * 7))]
    + frame(TEXT, b'"\xc3', fin=False)
    + frame(CONT, b'\xa9"')
    + frame(BINARY, b"x")
)
WHOLE = run_server([SESSION])
WHOLE_FAILING = run_server([FAILING_SESSION])


def test_recorded_session_is_meaningful() -> None:
    events = WHOLE
    kinds = [e[0] if isinstance(e, tuple) else type(e).__name__ for e in events]
    assert kinds == [
        "WebSocketAccepted",
        "SessionStarted",
        "ClientInitialized",
        "RequestReceived",
        "RequestReceived",
        "RequestReceived",
        "WebSocketClosed",
        "closed",
    ]
    assert events[-1][2] == (1, 2, 99)  # the calls were abandoned by the close
    assert WHOLE_FAILING[-2] == WebSocketClosed(1003, "binary messages are not supported", False)


@pytest.mark.parametrize("session", ["ok", "failing"])
def test_byte_by_byte_feeding_gives_the_same_events(session: str) -> None:
    data, expected = (SESSION, WHOLE) if session == "ok" else (FAILING_SESSION, WHOLE_FAILING)
    assert run_server([data[i : i + 1] for i in range(len(data))]) == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_splits_give_the_same_events(data: st.DataObject) -> None:
    failing = data.draw(st.booleans())
    blob, expected = (FAILING_SESSION, WHOLE_FAILING) if failing else (SESSION, WHOLE)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(blob) - 1), max_size=40)))
    bounds = [0, *cuts, len(blob)]
    assert run_server([blob[a:b] for a, b in itertools.pairwise(bounds)]) == expected


# ======================================================================= robustness


def exercise(
    ws: WebSocketServerConnection | WebSocketClientConnection, chunks: list[bytes]
) -> None:
    """Feed chunks, draining and ticking; only RemoteProtocolError may escape."""
    now = 0.0
    for chunk in chunks:
        with contextlib.suppress(RemoteProtocolError):
            ws.receive_data(chunk)
        ws.data_to_send()
        now += 1.0
        ws.tick(now)
        ws.check_invariants()
    ws.receive_data(b"")
    ws.data_to_send()
    ws.check_invariants()
    assert ws.mcp.state in (State.CLOSED, State.ERROR)


frame_soup = st.lists(
    st.one_of(
        st.binary(max_size=64),
        st.builds(
            frame,
            st.sampled_from([CONT, TEXT, BINARY, CLOSE, PING, PONG, 0x3, 0xB]),
            st.binary(max_size=40),
            fin=st.booleans(),
            rsv=st.sampled_from([0, 0, 0, 0x40]),
            mask=st.sampled_from([MASK, None, MASK]),
        ),
        st.builds(
            lambda obj: text(obj),
            st.sampled_from([initialize(), {"jsonrpc": "2.0", "id": 1, "method": "ping"}, [], {}]),
        ),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame_soup)
def test_arbitrary_bytes_after_the_handshake_never_raise(chunks: list[bytes]) -> None:
    ws, _ = open_server()
    exercise(ws, chunks)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame_soup)
def test_arbitrary_bytes_to_an_open_client_never_raise(chunks: list[bytes]) -> None:
    pair = Pair()
    pair.connect()
    exercise(pair.client, chunks)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=80),
            st.sampled_from(
                [upgrade_request(), upgrade_request(path="/x"), b"\r\n\r\n", b"\xff\xfe\r\n"]
            ),
            st.binary(max_size=20).map(lambda v: b"X-H: " + v + b"\r\n"),
        ),
        max_size=6,
    )
)
def test_arbitrary_handshake_bytes_never_raise(chunks: list[bytes]) -> None:
    exercise(WebSocketServerConnection(default_server_config()), chunks)
    client = WebSocketClientConnection(ClientConfig(), host=HOST, new_key=lambda: KEY)
    client.data_to_send()
    exercise(client, chunks)


def test_non_ascii_header_bytes_are_refused_not_raised() -> None:
    ws = WebSocketServerConnection(default_server_config())
    request = upgrade_request().replace(
        b"Connection: keep-alive, Upgrade", b"Connection: \xffUpgrade"
    )
    events = ws.receive_data(request)
    assert one(events, WebSocketRejected).status == 400


def test_close_reasons_are_made_to_fit_a_close_frame() -> None:
    ws, reader = open_legacy_server()
    ws.close(1000, "\ud800" + "\u00e9" * 100)  # a lone surrogate and 200 bytes
    out = reader.read(ws.data_to_send())
    assert out.close is not None
    code, reason = out.close
    assert code == 1000 and reason.startswith("?\u00e9") and len(reason.encode()) <= 123


def test_subprotocol_names_are_case_sensitive() -> None:
    ws = WebSocketServerConnection(default_server_config())
    assert (
        one(ws.receive_data(upgrade_request(protocols="MCP")), WebSocketAccepted).subprotocol
        is None
    )
