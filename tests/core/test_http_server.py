"""The Streamable HTTP server layer, driven with raw HTTP/1.1 bytes (no sockets)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import pytest

from mcp_core import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    LIMIT_EXCEEDED,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ClientInitialized,
    ConnectionClosed,
    Limits,
    LocalProtocolError,
    MessageRejected,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    ServerConfig,
    SessionStarted,
)
from mcp_core._http_headers import HostPolicy
from mcp_core._http_server import (
    HTTPLimits,
    HTTPRequestRejected,
    HTTPServerConnection,
    HTTPServerEndpoint,
    InMemoryEventStore,
    MCPEvent,
    RequestHead,
    tool_header_params_from,
)
from mcp_core._sse import SSEDecoder, SSEEvent
from mcp_core.testing import default_server_config

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
MODERN = "2026-07-28"
ENVELOPE = {PV: MODERN, CAPS: {}}

# --------------------------------------------------------------------------- helpers


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    complete: bool
    raw_headers: list[tuple[str, str]] = field(default_factory=list)

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[SSEEvent]:
        return SSEDecoder().feed(self.body)

    def messages(self) -> list[Any]:
        return [json.loads(e.data) for e in self.events() if e.data]


def parse_responses(data: bytes) -> list[Response]:
    """A small HTTP/1.1 response parser: Content-Length or chunked, possibly unfinished."""
    out: list[Response] = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"incomplete head: {data!r}"
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        raw = [tuple(part.strip() for part in line.split(":", 1)) for line in lines[1:]]
        headers = {k.lower(): v for k, v in raw}
        if "content-length" in headers:
            n = int(headers["content-length"])
            out.append(Response(status, headers, rest[:n], True, raw))  # type: ignore[arg-type]
            data = rest[n:]
            continue
        if headers.get("transfer-encoding", "").lower() != "chunked":
            out.append(Response(status, headers, rest, False, raw))  # type: ignore[arg-type]
            break
        body = b""
        complete = False
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                rest = rest[2:]
                complete = True
                break
            body += rest[:size]
            rest = rest[size + 2 :]
        out.append(Response(status, headers, body, complete, raw))  # type: ignore[arg-type]
        data = rest if complete else b""
    return out


def http_request(
    method: str = "POST",
    body: Any = None,
    *,
    target: str = "/mcp",
    host: str | None = "localhost:8000",
    accept: str | None = "application/json, text/event-stream",
    content_type: str | None = "application/json",
    headers: dict[str, str] | list[tuple[str, str]] | None = None,
) -> bytes:
    raw = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    lines = [f"{method} {target} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {host}")
    if accept is not None:
        lines.append(f"Accept: {accept}")
    if method == "POST":
        if content_type is not None:
            lines.append(f"Content-Type: {content_type}")
        lines.append(f"Content-Length: {len(raw)}")
    pairs = headers.items() if isinstance(headers, dict) else headers or []
    lines += [f"{k}: {v}" for k, v in pairs]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + raw


def rpc(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def note(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def init_params(version: str = "2025-11-25", caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": caps or {},
        "clientInfo": {"name": "raw", "version": "1"},
    }


def modern_call(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return rpc(rid, method, {**(params or {}), "_meta": dict(ENVELOPE)})


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    headers.update(extra)
    return headers


class Server:
    """An endpoint plus helpers: one fresh TCP connection per call unless given one."""

    def __init__(self, config: ServerConfig | None = None, **kwargs: Any) -> None:
        counter = itertools.count(1)
        kwargs.setdefault("new_session_id", lambda: f"session-{next(counter)}")
        self.endpoint = HTTPServerEndpoint(config or default_server_config(), **kwargs)

    def conn(self) -> HTTPServerConnection:
        return self.endpoint.new_connection(now=0.0)

    def send(
        self, data: bytes, http: HTTPServerConnection | None = None, now: float = 0.0
    ) -> tuple[list[Any], list[Response], HTTPServerConnection]:
        http = http or self.conn()
        events = http.receive_data(data, now=now)
        return events, parse_responses(http.data_to_send()), http

    def initialize(self, version: str = "2025-11-25", caps: dict[str, Any] | None = None) -> str:
        _, [resp], _ = self.send(
            http_request(body=rpc(0, "initialize", init_params(version, caps)))
        )
        assert resp.status == 200
        sid = resp.headers["mcp-session-id"]
        self.version = version
        _, [ack], _ = self.send(
            http_request(body=note("notifications/initialized"), headers=self.session_headers(sid))
        )
        assert ack.status == 202
        return sid

    def session_headers(self, sid: str) -> dict[str, str]:
        return {"Mcp-Session-Id": sid, "MCP-Protocol-Version": self.version}


def only(events: list[Any], kind: type) -> list[Any]:
    return [e.event for e in events if isinstance(e, MCPEvent) and isinstance(e.event, kind)]


def received(events: list[Any]) -> MCPEvent:
    [ev] = [e for e in events if isinstance(e, MCPEvent) and isinstance(e.event, RequestReceived)]
    return ev


# ============================================================== legacy: sessions


def test_initialize_mints_a_session_and_answers_json() -> None:
    server = Server()
    events, [resp], http = server.send(
        http_request(body=rpc(1, "initialize", init_params("2025-06-18")))
    )
    assert resp.status == 200
    assert resp.headers["content-type"] == "application/json"
    assert resp.headers["mcp-session-id"] == "session-1"
    assert resp.json()["result"]["protocolVersion"] == "2025-06-18"
    [started] = only(events, SessionStarted)
    assert started.protocol_version == "2025-06-18"
    assert events[0].session_id == "session-1"
    assert set(server.endpoint.sessions) == {"session-1"}
    assert not http.closed  # keep-alive


def test_initialized_notification_gets_202_and_surfaces() -> None:
    server = Server()
    sid = server.initialize()
    events, [resp], _ = server.send(
        http_request(body=note("notifications/initialized"), headers=server.session_headers(sid))
    )
    assert resp.status == 202 and resp.body == b""
    assert only(events, ClientInitialized)


def test_refused_initialize_creates_no_session() -> None:
    server = Server()
    _, [resp], _ = server.send(http_request(body=rpc(1, "initialize", {"capabilities": {}})))
    assert resp.status == 400  # -32602 for bad params, through the status table
    assert resp.json()["error"]["code"] == INVALID_PARAMS
    assert "mcp-session-id" not in resp.headers
    assert not server.endpoint.sessions


def test_modern_only_server_refuses_initialize_with_supported_versions() -> None:
    server = Server(default_server_config(supported_versions=(MODERN,)))
    _, [resp], _ = server.send(http_request(body=rpc(1, "initialize", init_params())))
    assert resp.status == 400
    error = resp.json()["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"]["supported"] == [MODERN]
    assert not server.endpoint.sessions


def test_session_header_rules() -> None:
    server = Server()
    sid = server.initialize()
    body = rpc(5, "tools/list")
    _, [missing], _ = server.send(http_request(body=body))
    assert missing.status == 400 and "Missing session ID" in missing.json()["error"]["message"]
    _, [unknown], _ = server.send(http_request(body=body, headers={"Mcp-Session-Id": "nope"}))
    assert unknown.status == 404
    _, [twice], _ = server.send(
        http_request(body=body, headers=[("Mcp-Session-Id", sid), ("Mcp-Session-Id", sid)])
    )
    assert twice.status == 400


def test_protocol_version_header_checks() -> None:
    server = Server()
    sid = server.initialize()
    body = rpc(5, "tools/list")
    # Missing: the session's negotiated version is how the server knows.
    events, _, _ = server.send(http_request(body=body, headers={"Mcp-Session-Id": sid}))
    received(events).connection.send_result(5, {"tools": []})
    _, [bogus], _ = server.send(
        http_request(
            body=rpc(6, "tools/list"),
            headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-13-45"},
        )
    )
    assert bogus.status == 400
    _, [other], _ = server.send(
        http_request(
            body=rpc(7, "tools/list"),
            headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"},
        )
    )
    assert other.status == 400 and "does not match" in other.json()["error"]["message"]


def test_legacy_only_server_rejects_unknown_version_header() -> None:
    server = Server(default_server_config(supported_versions=("2025-11-25",)))
    sid = server.initialize()
    _, [resp], _ = server.send(
        http_request(
            body=rpc(1, "tools/list"),
            headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2030-01-01"},
        )
    )
    assert resp.status == 400


def test_delete_ends_the_session() -> None:
    server = Server()
    sid = server.initialize()
    events, [resp], _ = server.send(http_request("DELETE", headers=server.session_headers(sid)))
    assert resp.status == 200
    assert only(events, ConnectionClosed)
    assert not server.endpoint.sessions
    _, [after], _ = server.send(
        http_request(body=rpc(1, "tools/list"), headers=server.session_headers(sid))
    )
    assert after.status == 404
    _, [again], _ = server.send(http_request("DELETE", headers=server.session_headers(sid)))
    assert again.status == 404


def test_delete_can_be_disabled() -> None:
    server = Server(allow_delete=False)
    sid = server.initialize()
    _, [resp], _ = server.send(http_request("DELETE", headers=server.session_headers(sid)))
    assert resp.status == 405
    assert sid in server.endpoint.sessions


def test_sessions_are_bound_to_their_principal() -> None:
    server = Server(principal_of=lambda head: head.header("x-user"))
    _, [init], _ = server.send(
        http_request(body=rpc(0, "initialize", init_params()), headers={"X-User": "alice"})
    )
    sid = init.headers["mcp-session-id"]
    server.version = "2025-11-25"
    _, [mallory], _ = server.send(
        http_request(
            body=rpc(1, "tools/list"), headers={**server.session_headers(sid), "X-User": "mallory"}
        )
    )
    assert mallory.status == 404  # the same answer as for a session that does not exist
    events, _, _ = server.send(
        http_request(
            body=rpc(1, "tools/list"), headers={**server.session_headers(sid), "X-User": "alice"}
        )
    )
    assert received(events).event.method == "tools/list"


def test_session_limit_gives_503() -> None:
    server = Server(limits=HTTPLimits(max_sessions=1))
    server.initialize()
    _, [resp], _ = server.send(http_request(body=rpc(0, "initialize", init_params())))
    assert resp.status == 503


def test_new_session_id_must_be_visible_ascii() -> None:
    server = Server(new_session_id=lambda: "has space")
    with pytest.raises(LocalProtocolError):
        server.send(http_request(body=rpc(0, "initialize", init_params())))


def test_session_idle_timeout_via_endpoint_tick() -> None:
    server = Server(limits=HTTPLimits(session_idle_timeout=100.0))
    sid = server.initialize()
    endpoint = server.endpoint
    assert endpoint.next_deadline() == 100.0  # stamped at now=0 by the last request
    assert endpoint.tick(50.0) == []
    events = endpoint.tick(100.0)
    assert only(events, ConnectionClosed)
    assert sid not in endpoint.sessions
    assert endpoint.next_deadline() is None


# ====================================================== legacy: JSON and SSE answers


def test_request_answered_as_json_when_nothing_comes_first() -> None:
    server = Server()
    sid = server.initialize()
    events, responses, http = server.send(
        http_request(body=rpc(7, "tools/list"), headers=server.session_headers(sid))
    )
    assert responses == []  # the handler has not answered yet
    ev = received(events)
    assert ev.session_id == sid
    ev.connection.send_result(7, {"tools": []})
    assert server.endpoint.pump() == [http]
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 200 and resp.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"tools": []},
    }
    assert resp.headers["mcp-session-id"] == sid


def test_progress_commits_to_sse_with_priming_and_ids() -> None:
    server = Server(retry_ms=250)
    sid = server.initialize()
    events, _, http = server.send(
        http_request(
            body=rpc(8, "tools/call", {"name": "slow", "_meta": {"progressToken": "p"}}),
            headers=server.session_headers(sid),
        )
    )
    conn = received(events).connection
    conn.send_progress(8, 1, 2, "half")
    server.endpoint.pump(conn)
    conn.send_result(8, {"content": []})
    server.endpoint.pump(conn)
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 200 and resp.complete
    assert resp.headers["content-type"] == "text/event-stream"
    assert resp.headers["x-accel-buffering"] == "no"
    assert resp.headers["mcp-session-id"] == sid
    priming, progress, answer = resp.events()
    assert priming.data == "" and priming.id == "2:1" and priming.retry == 250
    assert json.loads(progress.data)["method"] == "notifications/progress"
    assert progress.id == "2:2"
    assert json.loads(answer.data)["id"] == 8 and answer.id == "2:3"
    assert not http.closed  # the stream ended, the connection lives on


def test_no_priming_before_2025_11_25_but_ids_still() -> None:
    server = Server()
    sid = server.initialize("2025-06-18")
    events, _, http = server.send(
        http_request(
            body=rpc(1, "tools/call", {"name": "x", "_meta": {"progressToken": 1}}),
            headers=server.session_headers(sid),
        )
    )
    conn = received(events).connection
    conn.send_progress(1, 1)
    conn.send_result(1, {"content": []})
    server.endpoint.pump()
    [resp] = parse_responses(http.data_to_send())
    assert [e.id for e in resp.events()] == ["2:1", "2:2"]
    assert all(e.data for e in resp.events())


def test_not_resumable_sends_no_ids() -> None:
    server = Server(resumable=False)
    sid = server.initialize()
    events, _, http = server.send(
        http_request(
            body=rpc(1, "tools/call", {"name": "x", "_meta": {"progressToken": 1}}),
            headers=server.session_headers(sid),
        )
    )
    conn = received(events).connection
    conn.send_progress(1, 1)
    conn.send_result(1, {"content": []})
    server.endpoint.pump()
    [resp] = parse_responses(http.data_to_send())
    assert [e.id for e in resp.events()] == [None, None]


def test_response_mode_sse_streams_everything() -> None:
    server = Server(response_mode="sse")
    sid = server.initialize()
    events, [resp], http = server.send(
        http_request(body=rpc(3, "tools/list"), headers=server.session_headers(sid))
    )
    assert resp.headers["content-type"] == "text/event-stream" and not resp.complete
    received(events).connection.send_result(3, {"tools": []})
    server.endpoint.pump()
    [rest] = parse_responses(
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + http.data_to_send()
    )
    assert rest.complete and rest.messages()[0]["id"] == 3


def test_response_mode_json_drops_notifications_and_moves_requests_to_get() -> None:
    server = Server(response_mode="json")
    sid = server.initialize(caps={"elicitation": {}})
    _, _, get = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    get.data_to_send()
    events, _, post = server.send(
        http_request(
            body=rpc(3, "tools/call", {"name": "x", "_meta": {"progressToken": 1}}),
            headers=server.session_headers(sid),
            accept="application/json",
        )
    )
    conn = received(events).connection
    conn.send_progress(3, 1)
    conn.send_request(
        "elicitation/create",
        {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
        related_request_id=3,
    )
    conn.send_result(3, {"content": []})
    server.endpoint.pump()
    [resp] = parse_responses(post.data_to_send())
    assert resp.headers["content-type"] == "application/json" and resp.json()["id"] == 3
    [elicit] = [
        json.loads(e.data) for e in SSEDecoder().feed(get.data_to_send().split(b"\r\n", 1)[1])
    ]
    assert elicit["method"] == "elicitation/create"


def test_server_request_on_the_post_stream_answered_by_a_post() -> None:
    server = Server()
    sid = server.initialize(caps={"elicitation": {}})
    events, _, post = server.send(
        http_request(
            body=rpc(4, "tools/call", {"name": "book"}), headers=server.session_headers(sid)
        )
    )
    conn = received(events).connection
    eid = conn.send_request(
        "elicitation/create",
        {"message": "Which day?", "requestedSchema": {"type": "object", "properties": {}}},
        related_request_id=4,
    )
    server.endpoint.pump(conn)
    [resp] = parse_responses(post.data_to_send())
    assert resp.headers["content-type"] == "text/event-stream"
    [elicit] = resp.messages()
    assert elicit["method"] == "elicitation/create" and elicit["id"] == eid
    answer = {"jsonrpc": "2.0", "id": eid, "result": {"action": "decline"}}
    events, [ack], _ = server.send(http_request(body=answer, headers=server.session_headers(sid)))
    assert ack.status == 202
    [got] = only(events, ResponseReceived)
    assert got.result.action == "decline"
    conn.send_result(4, {"content": []})
    server.endpoint.pump(conn)
    [rest] = parse_responses(
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + post.data_to_send()
    )
    assert rest.complete and rest.messages()[-1]["id"] == 4


def test_rejected_notification_gets_400() -> None:
    server = Server()
    sid = server.initialize()
    bad = {"jsonrpc": "2.0", "id": 99}  # a response with neither result nor error
    events, [resp], _ = server.send(http_request(body=bad, headers=server.session_headers(sid)))
    assert resp.status == 400
    assert only(events, MessageRejected)


def test_duplicate_request_id_in_flight_gets_409() -> None:
    server = Server()
    sid = server.initialize()
    events, _, first = server.send(
        http_request(body=rpc(1, "tools/list"), headers=server.session_headers(sid))
    )
    conn = received(events).connection
    _, [dup], _ = server.send(
        http_request(body=rpc(1, "tools/list"), headers=server.session_headers(sid))
    )
    assert dup.status == 409 and dup.json()["error"]["code"] == -32600
    conn.send_result(1, {"tools": []})
    server.endpoint.pump()
    [resp] = parse_responses(first.data_to_send())
    assert resp.json()["id"] == 1  # the first request kept its stream


def test_client_cancel_ends_the_stream() -> None:
    server = Server()
    sid = server.initialize()
    events, _, post = server.send(
        http_request(body=rpc(2, "tools/call", {"name": "x"}), headers=server.session_headers(sid))
    )
    conn = received(events).connection
    events, [ack], _ = server.send(
        http_request(
            body=note("notifications/cancelled", {"requestId": 2}),
            headers=server.session_headers(sid),
        )
    )
    assert ack.status == 202
    assert only(events, RequestCancelled)
    server.endpoint.pump()
    [resp] = parse_responses(post.data_to_send())
    assert resp.status == 202  # nothing was sent for it yet: the exchange simply ends
    assert conn.send_result(2, {"content": []}) is False


def test_batch_in_2025_03_26_answers_with_an_array() -> None:
    server = Server()
    sid = server.initialize("2025-03-26")
    batch = [rpc(1, "ping"), rpc(2, "tools/list"), note("notifications/initialized")]
    events, responses, http = server.send(
        http_request(body=batch, headers=server.session_headers(sid))
    )
    assert responses == []
    received(events).connection.send_result(2, {"tools": []})
    server.endpoint.pump()
    [resp] = parse_responses(http.data_to_send())
    assert sorted(m["id"] for m in resp.json()) == [1, 2]


def test_batch_refused_after_2025_03_26() -> None:
    server = Server()
    sid = server.initialize()
    _, [resp], _ = server.send(
        http_request(body=[rpc(1, "ping")], headers=server.session_headers(sid))
    )
    assert resp.status == 400


def test_parse_error_is_400() -> None:
    server = Server()
    _, [resp], _ = server.send(http_request(body=b"{not json"))
    assert resp.status == 400 and resp.json()["error"]["code"] == -32700


# ================================================================ legacy: GET stream


def test_get_stream_carries_unrelated_messages() -> None:
    server = Server()
    sid = server.initialize()
    conn = server.endpoint.sessions[sid]
    conn.send_notification("notifications/tools/list_changed")  # before any GET: kept
    _events, [resp], get = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    assert resp.status == 200 and resp.headers["content-type"] == "text/event-stream"
    assert resp.headers["mcp-session-id"] == sid
    server.endpoint.pump()  # routes the queued notification (backlog or live)
    conn.send_log("info", "hello")
    server.endpoint.pump()
    body = resp.body + _dechunk(get.data_to_send())
    messages = [json.loads(e.data) for e in SSEDecoder().feed(body) if e.data]
    assert [m["method"] for m in messages] == [
        "notifications/tools/list_changed",
        "notifications/message",
    ]
    _, [conflict], _ = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    assert conflict.status == 409


def _dechunk(data: bytes) -> bytes:
    """Chunked body bytes (after the head) -> payload."""
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16) if size_line else 0
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2 :]
    return out


def test_get_needs_event_stream_accept() -> None:
    server = Server()
    sid = server.initialize()
    _, [resp], _ = server.send(
        http_request("GET", accept="application/json", headers=server.session_headers(sid))
    )
    assert resp.status == 406


def test_get_without_session_is_400_and_unknown_404() -> None:
    server = Server()
    _, [resp], _ = server.send(http_request("GET", accept="text/event-stream"))
    assert resp.status == 400
    _, [resp], _ = server.send(
        http_request("GET", accept="text/event-stream", headers={"Mcp-Session-Id": "x"})
    )
    assert resp.status == 404


def test_get_disconnect_frees_the_slot() -> None:
    server = Server()
    sid = server.initialize()
    _, _, get = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    assert get.receive_data(b"") == []
    assert get.closed
    _, [again], _ = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    assert again.status == 200


# =============================================================== legacy: resumption


def _open_call(
    server: Server, sid: str, rid: int = 1
) -> tuple[Any, HTTPServerConnection, Response]:
    events, _, post = server.send(
        http_request(
            body=rpc(rid, "tools/call", {"name": "x", "_meta": {"progressToken": rid}}),
            headers=server.session_headers(sid),
        )
    )
    conn = received(events).connection
    conn.send_progress(rid, 1)
    server.endpoint.pump(conn)
    [resp] = parse_responses(post.data_to_send())
    return conn, post, resp


def test_resume_a_dropped_post_stream_after_it_finished() -> None:
    server = Server()
    sid = server.initialize()
    conn, post, resp = _open_call(server, sid)
    last = resp.events()[-1].id
    assert post.receive_data(b"") == []  # a dropped connection is not a cancellation (legacy)
    conn.send_progress(1, 2)
    conn.send_result(1, {"content": []})
    server.endpoint.pump()
    _, [replay], _ = server.send(
        http_request(
            "GET",
            accept="text/event-stream",
            headers={**server.session_headers(sid), "Last-Event-ID": last},
        )
    )
    assert replay.status == 200 and replay.complete
    assert [m.get("method", m.get("id")) for m in replay.messages()] == [
        "notifications/progress",
        1,
    ]


def test_resume_an_open_stream_continues_live() -> None:
    server = Server()
    sid = server.initialize()
    conn, post, resp = _open_call(server, sid)
    post.receive_data(b"")
    conn.send_progress(1, 2)
    server.endpoint.pump()
    _, [replay], get = server.send(
        http_request(
            "GET",
            accept="text/event-stream",
            headers={**server.session_headers(sid), "Last-Event-ID": resp.events()[-1].id},
        )
    )
    assert not replay.complete and [m["params"]["progress"] for m in replay.messages()] == [2]
    conn.send_result(1, {"content": []})
    assert server.endpoint.pump() == [get]
    tail = get.data_to_send()
    assert tail.endswith(b"0\r\n\r\n")
    assert json.loads(SSEDecoder().feed(_dechunk(tail))[0].data)["id"] == 1


def test_resume_the_get_stream() -> None:
    server = Server()
    sid = server.initialize()
    _, [resp], get = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    priming_id = resp.events()[0].id
    get.receive_data(b"")
    conn = server.endpoint.sessions[sid]
    conn.send_notification("notifications/tools/list_changed")
    server.endpoint.pump()
    _, [again], _ = server.send(
        http_request(
            "GET",
            accept="text/event-stream",
            headers={**server.session_headers(sid), "Last-Event-ID": priming_id},
        )
    )
    assert [m["method"] for m in again.messages()] == ["notifications/tools/list_changed"]


def test_unknown_or_foreign_last_event_id_is_refused() -> None:
    server = Server()
    alice = server.initialize()
    _, _, resp = _open_call(server, alice)
    bob = server.initialize()
    foreign = resp.events()[-1].id
    for last in (foreign, "garbage", "9:1", "2:999"):
        _, [refused], _ = server.send(
            http_request(
                "GET",
                accept="text/event-stream",
                headers={**server.session_headers(bob), "Last-Event-ID": last},
            )
        )
        assert refused.status == 400, last


def test_close_stream_for_polling() -> None:
    server = Server(retry_ms=10)
    sid = server.initialize()
    conn, post, resp = _open_call(server, sid)
    assert server.endpoint.close_stream(sid, 1)
    [tail] = parse_responses(
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + post.data_to_send()
    )
    assert tail.complete and tail.body == b""  # response over, stream not finished
    assert not server.endpoint.close_stream(sid, 1)
    conn.send_result(1, {"content": []})
    server.endpoint.pump()
    _, [replay], _ = server.send(
        http_request(
            "GET",
            accept="text/event-stream",
            headers={**server.session_headers(sid), "Last-Event-ID": resp.events()[-1].id},
        )
    )
    assert replay.messages()[-1]["id"] == 1


def test_in_memory_event_store_bounds() -> None:
    store = InMemoryEventStore(max_events_per_stream=2, max_streams_per_session=2)
    ids = [store.store_event("s", "1", b"%d" % n) for n in range(4)]
    assert store.replay_after("s", ids[0]) == ("1", [(ids[2], b"2"), (ids[3], b"3")])
    store.store_event("s", "2", b"x")
    store.store_event("s", "3", b"y")  # evicts stream 1
    assert store.replay_after("s", ids[0]) is None
    assert store.replay_after("other", "2:1") is None
    store.forget_session("s")
    assert store.replay_after("s", "3:1") is None
    with pytest.raises(ValueError):
        InMemoryEventStore(max_events_per_stream=0)


# ==================================================================== 2026-07-28


def test_modern_request_json_without_session() -> None:
    server = Server()
    body = modern_call(1, "tools/list")
    events, responses, http = server.send(
        http_request(
            body=body, headers=modern_headers("tools/list", **{"Mcp-Session-Id": "ignored"})
        )
    )
    ev = received(events)
    assert ev.session_id is None and responses == []
    ev.connection.send_result(1, {"tools": []})
    server.endpoint.pump(ev.connection)
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 200
    assert "mcp-session-id" not in resp.headers
    assert resp.json()["result"]["resultType"] == "complete"
    assert not server.endpoint.sessions


def test_modern_discover_answered_synchronously() -> None:
    server = Server()
    _, [resp], _ = server.send(
        http_request(
            body=modern_call(1, "server/discover"), headers=modern_headers("server/discover")
        )
    )
    assert resp.status == 200 and MODERN in resp.json()["result"]["supportedVersions"]


def test_each_modern_request_gets_its_own_connection() -> None:
    server = Server()
    a, _, _ = server.send(
        http_request(body=modern_call(1, "tools/list"), headers=modern_headers("tools/list"))
    )
    b, _, _ = server.send(
        http_request(body=modern_call(1, "tools/list"), headers=modern_headers("tools/list"))
    )
    assert received(a).connection is not received(b).connection  # same id, no collision


def test_modern_progress_streams_sse_with_no_ids() -> None:
    server = Server()
    body = modern_call(2, "tools/call", {"name": "t", "arguments": {}})
    body["params"]["_meta"]["progressToken"] = "p"
    events, _, http = server.send(
        http_request(body=body, headers=modern_headers("tools/call", "t"))
    )
    conn = received(events).connection
    conn.send_progress(2, 1)
    conn.send_result(2, {"content": []})
    server.endpoint.pump(conn)
    [resp] = parse_responses(http.data_to_send())
    assert resp.headers["content-type"] == "text/event-stream"
    assert resp.headers["x-accel-buffering"] == "no"
    assert [e.id for e in resp.events()] == [None, None]  # no resumption in 2026-07-28
    assert resp.complete


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        # Mcp-Method disagrees with the body.
        (modern_call(1, "tools/list"), modern_headers("prompts/list"), 400, HEADER_MISMATCH),
        # MCP-Protocol-Version missing while the body is modern.
        (modern_call(1, "tools/list"), {"Mcp-Method": "tools/list"}, 400, HEADER_MISMATCH),
        # Mcp-Name disagrees.
        (
            modern_call(1, "tools/call", {"name": "a"}),
            modern_headers("tools/call", "b"),
            400,
            HEADER_MISMATCH,
        ),
        # A required envelope field is missing.
        (
            rpc(1, "tools/list", {"_meta": {PV: MODERN}}),
            modern_headers("tools/list"),
            400,
            INVALID_PARAMS,
        ),
        # Unknown method.
        (modern_call(1, "nope/nope"), modern_headers("nope/nope"), 404, METHOD_NOT_FOUND),
    ],
)
def test_modern_status_mapping(body: Any, headers: dict[str, str], status: int, code: int) -> None:
    server = Server()
    _, [resp], _ = server.send(http_request(body=body, headers=headers))
    assert resp.status == status
    assert resp.json()["error"]["code"] == code
    assert resp.json()["id"] == 1


def test_modern_unsupported_version_is_400_with_supported() -> None:
    server = Server()
    body = rpc(1, "tools/list", {"_meta": {PV: "2099-01-01", CAPS: {}}})
    _, [resp], _ = server.send(
        http_request(
            body=body, headers={"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}
        )
    )
    assert resp.status == 400
    error = resp.json()["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION and MODERN in error["data"]["supported"]


def test_missing_client_capability_answer_is_400() -> None:
    server = Server()
    events, _, http = server.send(
        http_request(
            body=modern_call(1, "tools/call", {"name": "t"}),
            headers=modern_headers("tools/call", "t"),
        )
    )
    ev = received(events)
    ev.connection.send_error(
        1,
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        "needs elicitation",
        {"requiredCapabilities": {"elicitation": {}}},
    )
    server.endpoint.pump(ev.connection)
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 400 and resp.json()["error"]["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY


def test_mirrored_param_header_checked_against_the_tool_schema() -> None:
    tools = [
        {
            "name": "weather",
            "inputSchema": {
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            },
        }
    ]
    server = Server(tool_header_params=tool_header_params_from(tools))
    body = modern_call(1, "tools/call", {"name": "weather", "arguments": {"region": "eu-west"}})
    events, _, _ = server.send(
        http_request(
            body=body,
            headers=modern_headers("tools/call", "weather", **{"Mcp-Param-Region": "eu-west"}),
        )
    )
    assert received(events).event.params.arguments == {"region": "eu-west"}
    _, [wrong], _ = server.send(
        http_request(
            body=body,
            headers=modern_headers("tools/call", "weather", **{"Mcp-Param-Region": "us-east"}),
        )
    )
    assert wrong.status == 400 and wrong.json()["error"]["code"] == HEADER_MISMATCH
    _, [missing], _ = server.send(
        http_request(body=body, headers=modern_headers("tools/call", "weather"))
    )
    assert missing.status == 400 and "Mcp-Param-Region" in missing.json()["error"]["message"]


def test_tool_header_params_from_rejects_invalid_annotations() -> None:
    bad = {
        "name": "b",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "number", "x-mcp-header": "N"}},
        },
    }
    with pytest.raises(ValueError):
        tool_header_params_from([bad])


def test_modern_notification_is_202_and_get_delete_are_405() -> None:
    server = Server()
    _, [resp], _ = server.send(
        http_request(
            body=note("notifications/cancelled", {"requestId": 1}),
            headers={"MCP-Protocol-Version": MODERN},
        )
    )
    assert resp.status == 202
    for method in ("GET", "DELETE"):
        _, [resp], _ = server.send(http_request(method, headers={"MCP-Protocol-Version": MODERN}))
        assert resp.status == 405 and resp.headers["allow"] == "POST"


def test_modern_only_server_answers_405_to_any_get() -> None:
    server = Server(default_server_config(supported_versions=(MODERN,)))
    _, [resp], _ = server.send(
        http_request("GET", accept="text/event-stream", headers={"Mcp-Session-Id": "x"})
    )
    assert resp.status == 405


def test_modern_posted_response_or_batch_is_400() -> None:
    server = Server()
    for body in ([modern_call(1, "tools/list")], {"jsonrpc": "2.0", "id": 1, "result": {}}):
        _, [resp], _ = server.send(
            http_request(body=body, headers={"MCP-Protocol-Version": MODERN})
        )
        assert resp.status == 400


def test_modern_disconnect_cancels_the_request() -> None:
    server = Server()
    events, _, http = server.send(
        http_request(
            body=modern_call(9, "tools/call", {"name": "t"}),
            headers=modern_headers("tools/call", "t"),
        )
    )
    conn = received(events).connection
    events = http.receive_data(b"")
    [cancelled] = only(events, RequestCancelled)
    assert cancelled.request_id == 9
    assert conn.send_result(9, {"content": []}) is False
    assert server.endpoint.pump() == []


def test_modern_keepalive_and_sse_commit_via_tick() -> None:
    server = Server(limits=HTTPLimits(sse_after=5.0, keepalive_interval=3.0))
    events, _, http = server.send(
        http_request(
            body=modern_call(1, "tools/call", {"name": "t"}),
            headers=modern_headers("tools/call", "t"),
        )
    )
    assert http.next_deadline() == 5.0
    assert http.tick(4.0) == [] and http.data_to_send() == b""
    http.tick(5.0)
    [resp] = parse_responses(http.data_to_send())
    assert resp.headers["content-type"] == "text/event-stream" and not resp.complete
    assert http.next_deadline() == 8.0
    http.tick(8.0)
    assert _dechunk(http.data_to_send()) == b": keep-alive\n\n"
    conn = received(events).connection
    conn.send_result(1, {"content": []})
    server.endpoint.pump()
    tail = http.data_to_send()
    assert json.loads(SSEDecoder().feed(_dechunk(tail))[0].data)["id"] == 1


def test_listen_streams_and_its_refusal_keeps_the_status() -> None:
    server = Server(response_mode="json")  # listen streams even here
    body = modern_call(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    events, responses, http = server.send(
        http_request(body=body, headers=modern_headers("subscriptions/listen"))
    )
    assert responses == []  # nothing is committed before the handler speaks
    conn = received(events).connection
    conn.acknowledge_subscription(1)
    assert conn.notify_subscribers("notifications/tools/list_changed") == 1
    server.endpoint.pump(conn)
    [resp] = parse_responses(http.data_to_send())
    assert resp.headers["content-type"] == "text/event-stream"
    assert [m["method"] for m in resp.messages()] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    bad = rpc(2, "subscriptions/listen", {"_meta": dict(ENVELOPE)})  # no filter: bad params
    _, [refused], _ = server.send(
        http_request(body=bad, headers=modern_headers("subscriptions/listen"))
    )
    assert refused.status == 400 and refused.headers["content-type"] == "application/json"


def test_response_mode_sse_keeps_statuses_of_immediate_refusals() -> None:
    server = Server(response_mode="sse")
    _, [resp], _ = server.send(
        http_request(body=modern_call(1, "nope/nope"), headers=modern_headers("nope/nope"))
    )
    assert resp.status == 404 and resp.json()["error"]["code"] == METHOD_NOT_FOUND


def test_legacy_only_server_answers_modern_request_with_json_error() -> None:
    server = Server(default_server_config(supported_versions=("2025-11-25",)))
    _, [resp], _ = server.send(
        http_request(
            body=modern_call(1, "server/discover"), headers=modern_headers("server/discover")
        )
    )
    assert resp.status == 404 and resp.json()["error"]["code"] == METHOD_NOT_FOUND


# ======================================================================= security


def test_bad_origin_is_403_and_bad_host_421() -> None:
    server = Server()
    body = rpc(0, "initialize", init_params())
    events, [resp], _ = server.send(
        http_request(body=body, headers={"Origin": "https://evil.example"})
    )
    assert resp.status == 403
    assert isinstance(events[0], HTTPRequestRejected) and events[0].status == 403
    _, [resp], _ = server.send(http_request(body=body, host="evil.example"))
    assert resp.status == 421
    _, [resp], _ = server.send(http_request(body=body, host="localhost:80@evil"))
    assert resp.status == 421
    _, [ok], _ = server.send(http_request(body=body, headers={"Origin": "http://localhost:3000"}))
    assert ok.status == 200


def test_host_policy_can_be_replaced_or_switched_off() -> None:
    body = rpc(0, "initialize", init_params())
    public = Server(host_policy=HostPolicy(allowed_hosts=("mcp.example.com",)))
    _, [resp], _ = public.send(http_request(body=body, host="mcp.example.com"))
    assert resp.status == 200
    off = Server(host_policy=None)
    _, [resp], _ = off.send(
        http_request(body=body, host="anything.example", headers={"Origin": "https://x"})
    )
    assert resp.status == 200


def test_wrong_path_and_method() -> None:
    server = Server()
    _, [resp], _ = server.send(http_request(target="/other", body=rpc(1, "ping")))
    assert resp.status == 404
    _, [resp], _ = server.send(http_request("PUT", target="/mcp?x=1"))
    assert resp.status == 405 and resp.headers["allow"] == "GET, POST, DELETE"


def test_accept_and_content_type_checks() -> None:
    server = Server()
    body = rpc(0, "initialize", init_params())
    _, [resp], _ = server.send(http_request(body=body, accept="application/json"))
    assert resp.status == 406
    _, [resp], _ = server.send(
        http_request(body=body, accept="application/json;q=0, text/event-stream")
    )
    assert resp.status == 406
    _, [resp], _ = server.send(http_request(body=body, accept="*/*"))
    assert resp.status == 200
    _, [resp], _ = server.send(http_request(body=body, content_type="text/plain"))
    assert resp.status == 415
    _, [resp], _ = server.send(
        http_request(body=body, content_type="application/json; charset=utf-8")
    )
    assert resp.status == 200
    json_server = Server(response_mode="json")
    _, [resp], _ = json_server.send(http_request(body=body, accept="application/json"))
    assert resp.status == 200


def test_oversized_head_is_431() -> None:
    server = Server(limits=HTTPLimits(max_header_bytes=1024))
    big = http_request(body=rpc(0, "ping"), headers={"X-Pad": "a" * 2000})
    events, [resp], http = server.send(big)  # complete head, but too large
    assert resp.status == 431 and http.closed
    assert events[0].status == 431
    http = server.conn()
    http.receive_data(
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 2000
    )  # never ends
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 431 and http.closed


def head_of_size(size: int, *, pad: str = "a") -> bytes:
    """A POST (initialize) whose head is exactly `size` bytes, `X-Pad` taking the slack;
    `pad=" "` makes the slack optional whitespace, which h11 drops from the value."""
    body = json.dumps(rpc(0, "initialize", init_params())).encode()
    bare = http_request(body=body, headers={"X-Pad": "x"})
    slack = size - len(bare) + len(body)
    assert slack >= 0
    request = http_request(body=body, headers={"X-Pad": pad * slack + "x"})
    assert request.index(b"\r\n\r\n") + 4 == size
    return request


def splits(data: bytes, how: str) -> list[bytes]:
    if how == "one call":
        return [data]
    if how == "byte by byte":
        return [data[i : i + 1] for i in range(len(data))]
    return [data[:700], data[700:]]  # a split inside the head


def request_before(where: str) -> bytes:
    """What comes ahead of the measured head on the same connection."""
    if where == "first":
        return b""
    ping = json.dumps(rpc(7, "ping")).encode()
    if where == "across a slice":  # h11 is fed 16 KiB at a time: end one inside the head
        bare = len(http_request(body=ping))
        ping += b" " * (16 * 1024 - 500 - bare)
    return http_request(body=ping)


@pytest.mark.parametrize("how", ["one call", "byte by byte", "two calls"])
@pytest.mark.parametrize("where", ["first", "behind another", "across a slice"])
def test_head_limit_holds_however_the_bytes_arrive(how: str, where: str) -> None:
    """A head of `max_header_bytes` is served, one byte more is 431 and closes: in one
    call, byte by byte or split, as the connection's first request or behind another
    on the same keep-alive connection (where it starts in h11's unread bytes)."""
    limit = 1024
    for size, served in ((limit, True), (limit + 1, False)):
        server = Server(limits=HTTPLimits(max_header_bytes=limit))
        before = request_before(where)
        http = server.conn()
        events: list[Any] = []
        for chunk in splits(before + head_of_size(size), how):
            events += http.receive_data(chunk, now=0.0)
        responses = parse_responses(http.data_to_send())
        if before:  # a ping without a session: refused, and the connection kept
            first, *responses = responses
            assert first.status == 400 and "connection" not in first.headers
        if served:
            assert [r.status for r in responses] == [200] and not http.closed
            assert len(server.endpoint.sessions) == 1
        else:
            assert [r.status for r in responses] == [431] and http.closed
            assert not server.endpoint.sessions
            rejected = [e for e in events if isinstance(e, HTTPRequestRejected)][-1]
            assert (rejected.status, rejected.method, rejected.target) == (431, "", "")


def test_a_whitespace_padded_head_counts_its_raw_bytes() -> None:
    """h11 drops the padding around a field value: the limit is on the bytes sent."""
    server = Server(limits=HTTPLimits(max_header_bytes=1024))
    _, [resp], http = server.send(head_of_size(20 * 1024, pad=" "))
    assert resp.status == 431 and http.closed


def test_a_megabyte_head_in_one_call_is_431() -> None:
    server = Server()  # the default 16 KiB limit
    events, [resp], http = server.send(head_of_size(2**20, pad=" "))
    assert resp.status == 431 and http.closed
    assert [type(e) for e in events] == [HTTPRequestRejected]
    assert not server.endpoint.sessions


def over_limit(size: int, limit: int, setting: str = "HTTPLimits.max_body_bytes") -> str:
    return f"message of {size} bytes exceeds the limit of {limit} bytes ({setting})"


def test_a_body_over_the_limit_is_read_to_its_end_and_answered_413_with_its_id() -> None:
    server = Server(limits=HTTPLimits(max_body_bytes=100))
    body = json.dumps(rpc(7, "initialize", init_params())).encode()
    assert 100 < len(body) <= 200
    events, [resp], http = server.send(http_request(body=body))
    assert resp.status == 413
    assert resp.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32700, "message": over_limit(len(body), 100)},
    }
    assert [e.status for e in events if isinstance(e, HTTPRequestRejected)] == [413]
    assert not http.closed  # the body was read whole: the connection goes on
    _, [served], _ = server.send(http_request(body=rpc(8, "ping")), http)
    assert served.status == 400 and "Missing session ID" in served.json()["error"]["message"]


def test_an_id_at_the_end_of_an_over_limit_body_is_read_too() -> None:
    # The TypeScript SDK's order: method, params, jsonrpc, id.
    server = Server(limits=HTTPLimits(max_body_bytes=100))
    body = b'{"method":"tools/call","params":{"a":"' + b"x" * 80 + b'"},"jsonrpc":"2.0","id":"t"}'
    _, [resp], _ = server.send(http_request(body=body))
    assert (resp.status, resp.json()["id"]) == (413, "t")


def test_a_chunked_body_over_the_limit_is_answered_when_it_ends() -> None:
    server = Server(limits=HTTPLimits(max_body_bytes=100))
    http = server.conn()
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    body = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"p":"' + b" " * 60 + b'"}}'
    http.receive_data(head + b"%x\r\n" % len(body) + body + b"\r\n", now=0.0)
    assert http.data_to_send() == b""  # still reading (and dropping) the body
    http.receive_data(b"0\r\n\r\n", now=0.0)
    [resp] = parse_responses(http.data_to_send())
    assert (resp.status, resp.json()["id"]) == (413, 3) and not http.closed


def test_a_body_far_over_the_limit_is_refused_at_once_and_the_connection_closed() -> None:
    server = Server(limits=HTTPLimits(max_body_bytes=100))
    # Declared beyond twice the limit: not worth reading.
    declared = http_request(body=b"x" * 201)
    _, [resp], http = server.send(declared[: declared.index(b"\r\n\r\n") + 4])
    assert (resp.status, resp.json()["id"]) == (413, None) and http.closed
    # Streamed past twice the limit: refused there, the id read from the start.
    http = server.conn()
    http.receive_data(
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        now=0.0,
    )
    start = b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"p":"'
    http.receive_data(b"%x\r\n" % len(start) + start + b"\r\n", now=0.0)
    for _ in range(3):
        http.receive_data(b"50\r\n" + b"x" * 0x50 + b"\r\n", now=0.0)
    [resp] = parse_responses(http.data_to_send())
    assert (resp.status, resp.json()["id"]) == (413, 4) and http.closed
    assert resp.json()["error"]["message"].startswith("message of 2")


def test_an_over_limit_body_that_waits_for_100_continue_is_refused_before_it_is_sent() -> None:
    server = Server(limits=HTTPLimits(max_body_bytes=100))
    raw = http_request(body=b"x" * 150, headers={"Expect": "100-continue"})
    _, [resp], http = server.send(raw[: raw.index(b"\r\n\r\n") + 4])
    assert resp.status == 413 and http.closed


def test_the_body_limit_follows_the_message_limit_by_default() -> None:
    config = default_server_config(limits=Limits(max_message_bytes=300))
    server = Server(config)
    assert server.endpoint.max_body_bytes == 300
    assert server.endpoint.max_output_bytes == config.limits.output_limit == 128 * 1024 * 1024
    body = json.dumps(rpc(0, "initialize", {**init_params(), "pad": "x" * 300})).encode()
    _, [resp], _ = server.send(http_request(body=body))
    assert resp.status == 413
    assert resp.json()["error"]["message"] == over_limit(len(body), 300, "Limits.max_message_bytes")
    assert (HTTPLimits().max_body_bytes, HTTPLimits().max_output_bytes) == (None, None)


def test_a_string_over_the_engine_limit_is_413_with_the_id() -> None:
    config = default_server_config(limits=Limits(max_string_length=50))
    server = Server(config)
    _, [resp], _ = server.send(
        http_request(body=rpc(5, "initialize", {**init_params(), "pad": "x" * 51}))
    )
    assert (resp.status, resp.json()["id"]) == (413, 5)
    assert "(Limits.max_string_length)" in resp.json()["error"]["message"]


def test_an_over_limit_answer_to_a_server_request_fails_that_request() -> None:
    server = Server(limits=HTTPLimits(max_body_bytes=200))
    sid = server.initialize(caps={"roots": {}})
    conn = server.endpoint.sessions[sid]
    rid = conn.send_request("roots/list")
    server.endpoint.pump()
    answer = b'{"jsonrpc":"2.0","id":%d,"result":{"roots":[],"p":"' % rid + b"x" * 300 + b'"}}'
    events, [resp], _ = server.send(http_request(body=answer, headers=server.session_headers(sid)))
    [failed] = only(events, RequestFailed)
    assert (failed.request_id, failed.code) == (rid, LIMIT_EXCEEDED)
    assert failed.message.endswith(
        "raise HTTPLimits.max_body_bytes in the server's limits to accept it"
    )
    assert (resp.status, resp.json()["id"]) == (413, None)


def test_the_header_timer_watches_silences_in_the_body_not_its_whole_length() -> None:
    server = Server(limits=HTTPLimits(header_timeout=10.0))
    http = server.conn()
    body = json.dumps(rpc(0, "initialize", init_params())).encode()
    raw = http_request(body=body)
    split = raw.index(b"\r\n\r\n") + 4
    http.receive_data(raw[:split], now=5.0)
    now = 5.0
    for byte in body:  # a byte every 9 s: far longer than 10 s, never silent for 10
        assert http.tick(now + 8.5) == []
        now += 9.0
        http.receive_data(bytes([byte]), now=now)
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 200
    # A body that stalls is still cut off.
    http = server.conn()
    http.receive_data(raw[: split + 5], now=0.0)
    assert http.next_deadline() == 10.0
    assert [e.status for e in http.tick(10.0) if isinstance(e, HTTPRequestRejected)] == [408]


def test_header_timeout_via_tick() -> None:
    server = Server(limits=HTTPLimits(header_timeout=10.0))
    http = server.conn()
    http.receive_data(b"POST /mcp HTTP/1.1\r\nHost: local", now=3.0)
    assert http.next_deadline() == 13.0
    assert http.tick(12.0) == []
    events = http.tick(13.0)
    assert events[0].status == 408
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 408 and http.closed


def test_timers_without_now_start_at_the_next_tick() -> None:
    server = Server(limits=HTTPLimits(header_timeout=10.0))
    http = server.endpoint.new_connection()
    assert http.next_deadline() == float("-inf")  # asks for a tick to stamp the clock
    http.tick(100.0)
    assert http.next_deadline() == 100.0 + 60.0  # idle timeout
    http.receive_data(b"GET /mcp HTTP/1.1\r\n")
    assert http.next_deadline() == float("-inf")
    http.tick(200.0)
    assert http.next_deadline() == 210.0


def test_idle_timeout_closes_quietly() -> None:
    server = Server(limits=HTTPLimits(idle_timeout=30.0))
    _, [resp], http = server.send(http_request(body=rpc(0, "initialize", init_params())))
    assert resp.status == 200 and not http.closed
    http.tick(29.0)
    assert not http.closed
    http.tick(30.0)
    assert http.closed and http.data_to_send() == b""


def test_malformed_http_is_400_and_closes() -> None:
    server = Server()
    events, [resp], http = server.send(b"GARBAGE\r\n\r\n")
    assert resp.status == 400 and http.closed
    assert isinstance(events[0], HTTPRequestRejected)


def framed(*fields: bytes, body: bytes = b"", version: bytes = b"HTTP/1.1") -> bytes:
    """A POST with exactly the framing fields given (no Content-Length of its own)."""
    return (
        b"POST /mcp " + version + b"\r\nHost: localhost:8000\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        + b"".join(f + b"\r\n" for f in fields)
        + b"\r\n"
        + body
    )


# An initialize: served, it would open a session, which no case below may do.
INIT = json.dumps(rpc(1, "initialize", init_params())).encode()
CHUNKED_INIT = b"%x\r\n%s\r\n0\r\n\r\n" % (len(INIT), INIT)

# Request framings RFC 9112 says to refuse, or to answer and then close on, each with
# the status it gets. Each is followed by a well-formed request in the same bytes,
# which must never be served: another parser on the path may have framed otherwise.
UNTRUSTED_FRAMING = {
    "content-length and transfer-encoding": (
        framed(
            b"Content-Length: %d" % len(CHUNKED_INIT),
            b"Transfer-Encoding: chunked",
            body=CHUNKED_INIT,
        ),
        400,
    ),
    "transfer-encoding and content-length": (
        framed(b"Transfer-Encoding: chunked", b"Content-Length: 3", body=CHUNKED_INIT),
        400,
    ),
    "transfer-encoding in HTTP/1.0": (
        framed(b"Transfer-Encoding: chunked", body=CHUNKED_INIT, version=b"HTTP/1.0"),
        400,
    ),
    "conflicting content-length fields": (
        framed(b"Content-Length: %d" % len(INIT), b"Content-Length: 3", body=INIT),
        400,
    ),
    "conflicting content-length list": (
        framed(b"Content-Length: %d, 3" % len(INIT), body=INIT),
        400,
    ),
    "signed content-length": (framed(b"Content-Length: +%d" % len(INIT), body=INIT), 400),
    "chunked not last": (
        framed(b"Transfer-Encoding: chunked, gzip", body=CHUNKED_INIT),
        501,
    ),
    "a coding before chunked": (
        framed(b"Transfer-Encoding: gzip, chunked", body=CHUNKED_INIT),
        501,
    ),
    "repeated transfer-encoding": (
        framed(b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked", body=CHUNKED_INIT),
        501,
    ),
    "whitespace before the colon": (
        framed(b"Transfer-Encoding : chunked", b"Content-Length: %d" % len(INIT), body=INIT),
        400,
    ),
    "bare CR in a field": (
        framed(b"X-A: 1\r2", b"Content-Length: %d" % len(INIT), body=INIT),
        400,
    ),
    "repeated host": (
        framed(b"Host: elsewhere", b"Content-Length: %d" % len(INIT), body=INIT),
        400,
    ),
    "folded transfer-encoding": (
        framed(b"Transfer-Encoding:\r\n chunked", body=CHUNKED_INIT),
        400,
    ),
    "a folded field": (
        framed(b"X-A: 1\r\n\t2", b"Content-Length: %d" % len(INIT), body=INIT),
        400,
    ),
    "whitespace before the first field": (
        framed(b"Content-Length: %d" % len(INIT), body=INIT).replace(
            b"HTTP/1.1\r\n", b"HTTP/1.1\r\n X-A: 1\r\n", 1
        ),
        400,
    ),
    "a bare LF ending a field": (
        framed(b"X-A: 1\nContent-Length: %d" % len(INIT), body=INIT),
        400,
    ),
    "bare LF line ends throughout": (
        framed(b"Content-Length: %d" % len(INIT)).replace(b"\r\n", b"\n") + INIT,
        400,
    ),
    "malformed chunk size": (
        framed(b"Transfer-Encoding: chunked", body=b"0x10\r\n" + INIT + b"\r\n0\r\n\r\n"),
        400,
    ),
}


@pytest.mark.parametrize("case", UNTRUSTED_FRAMING)
def test_untrusted_framing_is_answered_and_the_connection_closed(case: str) -> None:
    request, status = UNTRUSTED_FRAMING[case]
    server = Server()
    second = http_request(body=rpc(0, "initialize", init_params()))
    events, responses, http = server.send(request + second)
    assert [r.status for r in responses] == [status]
    assert responses[0].body.startswith(HTTPStatus(status).phrase.encode() + b": ")
    assert http.closed
    assert [type(e) for e in events] == [HTTPRequestRejected]
    assert http.receive_data(second, now=0.0) == [] and http.data_to_send() == b""
    assert not server.endpoint.sessions


def test_identical_content_lengths_are_one_and_framing_holds() -> None:
    """RFC 9110 8.6 lets a recipient read repeated identical Content-Length values as
    one (h11 does): nothing is ambiguous, so the connection lives on."""
    server = Server()
    sid = server.initialize()
    headers = [(k, v) for k, v in server.session_headers(sid).items()]
    one_more = [*headers, ("Content-Length", str(len(INIT)))]
    first = http_request(body=INIT, headers=one_more)
    second = http_request(body=rpc(2, "ping"), headers=headers)
    _, responses, http = server.send(first + second)
    assert [r.status for r in responses] == [200, 200]
    assert [r.json()["id"] for r in responses] == [1, 2]
    assert not http.closed


def test_pipelined_requests_are_answered_in_order() -> None:
    server = Server()
    sid = server.initialize()
    first = http_request(body=rpc(1, "ping"), headers=server.session_headers(sid))
    second = http_request(body=rpc(2, "ping"), headers=server.session_headers(sid))
    _, responses, _ = server.send(first + second)
    assert [r.json()["id"] for r in responses] == [1, 2]


def test_pipelined_request_behind_a_pending_answer_waits_for_tick() -> None:
    server = Server()
    sid = server.initialize()
    first = http_request(body=rpc(1, "tools/list"), headers=server.session_headers(sid))
    second = http_request(body=rpc(2, "ping"), headers=server.session_headers(sid))
    events, responses, http = server.send(first + second)
    assert responses == []
    received(events).connection.send_result(1, {"tools": []})
    server.endpoint.pump()
    assert http.next_deadline() == float("-inf")
    http.tick(1.0)
    responses = parse_responses(http.data_to_send())
    assert [r.json()["id"] for r in responses] == [1, 2]


def test_streams_per_session_limit_is_429() -> None:
    server = Server(limits=HTTPLimits(max_streams_per_session=1))
    sid = server.initialize()
    server.send(http_request(body=rpc(1, "tools/list"), headers=server.session_headers(sid)))
    _, [resp], _ = server.send(
        http_request(body=rpc(2, "tools/list"), headers=server.session_headers(sid))
    )
    assert resp.status == 429


def test_a_modern_client_that_does_not_read_is_cancelled() -> None:
    server = Server(limits=HTTPLimits(max_output_bytes=500))
    body = modern_call(1, "tools/call", {"name": "t", "_meta": {}})
    body["params"]["_meta"]["progressToken"] = 1
    events, _, http = server.send(
        http_request(body=body, headers=modern_headers("tools/call", "t"))
    )
    conn = received(events).connection
    for n in range(1, 20):
        conn.send_progress(1, n)
        server.endpoint.pump(conn)
    assert http.closed and http.next_deadline() == float("-inf")
    [cancelled] = [e.event for e in http.tick(1.0) if isinstance(e, MCPEvent)]
    assert isinstance(cancelled, RequestCancelled) and cancelled.request_id == 1
    assert http.next_deadline() is None


def test_a_client_that_does_not_read_is_dropped() -> None:
    server = Server(limits=HTTPLimits(max_output_bytes=2000, max_backlog_messages=2))
    sid = server.initialize()
    _, _, get = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    conn = server.endpoint.sessions[sid]
    for n in range(30):  # nobody drains get.data_to_send()
        conn.send_log("info", f"message {n}")
        server.endpoint.pump()
    assert get.closed and get.data_to_send() == b""
    # The GET slot is free again; the session itself lives on.
    _, [again], _ = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    assert again.status == 200


def test_shutdown_ends_everything() -> None:
    server = Server()
    sid = server.initialize()
    _, _, get = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    get.data_to_send()
    _, _, modern = server.send(
        http_request(body=modern_call(1, "tools/list"), headers=modern_headers("tools/list"))
    )
    events = server.endpoint.close()
    assert only(events, ConnectionClosed) and only(events, RequestCancelled)
    assert _dechunk(get.data_to_send()) == b""
    [resp] = parse_responses(modern.data_to_send())
    assert resp.status == 503
    assert not server.endpoint.sessions


def test_request_head_helper() -> None:
    head = RequestHead("GET", "/mcp", [("x-a", "1"), ("x-a", "2")])
    assert head.header("X-A") == "1" and head.header("missing") is None


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        HTTPLimits(max_body_bytes=0)
    with pytest.raises(ValueError):
        HTTPLimits(header_timeout=-1.0)
    with pytest.raises(ValueError):
        HTTPServerEndpoint(default_server_config(), new_session_id=str, response_mode="xml")  # type: ignore[arg-type]


def test_expect_100_continue() -> None:
    server = Server()
    body = json.dumps(rpc(0, "initialize", init_params())).encode()
    head = http_request(body=body, headers={"Expect": "100-continue"})[: -len(body)]
    http = server.conn()
    http.receive_data(head, now=0.0)
    assert http.data_to_send().startswith(b"HTTP/1.1 100 ")
    http.receive_data(body, now=0.0)
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == 200


def test_batch_errors_for_bad_items_join_the_array() -> None:
    server = Server()
    sid = server.initialize("2025-03-26")
    _, [resp], _ = server.send(
        http_request(body=[rpc(1, "ping"), 5], headers=server.session_headers(sid))
    )
    answers = resp.json()
    assert {a["id"] for a in answers} == {1, None}
    _, [bad], _ = server.send(http_request(body=[7], headers=server.session_headers(sid)))
    assert bad.status == 400 and bad.json()["id"] is None


def test_flooding_a_busy_connection_closes_it() -> None:
    server = Server(limits=HTTPLimits(max_header_bytes=1024, max_body_bytes=1024))
    sid = server.initialize()
    _, _, http = server.send(
        http_request(body=rpc(1, "tools/list"), headers=server.session_headers(sid))
    )
    assert http.receive_data(b"x" * 1500, now=0.0) == []
    assert not http.closed
    http.receive_data(b"x" * 1500, now=0.0)
    assert http.closed


def test_endpoint_tick_times_out_server_requests() -> None:
    server = Server()
    sid = server.initialize(caps={"roots": {}})
    _, _, get = server.send(
        http_request("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    get.data_to_send()
    conn = server.endpoint.sessions[sid]
    rid = conn.send_request("roots/list", deadline=5.0)
    server.endpoint.pump()
    assert server.endpoint.next_deadline() == 5.0
    events = server.endpoint.tick(5.0)
    [failed] = [e.event for e in events if isinstance(e, MCPEvent)]
    assert failed.request_id == rid
    server.endpoint.pump()
    methods = [
        json.loads(e.data)["method"] for e in SSEDecoder().feed(_dechunk(get.data_to_send()))
    ]
    assert methods == ["roots/list", "notifications/cancelled"]
