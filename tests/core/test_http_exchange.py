"""`HTTPExchange`, the request-level entry of the HTTP server layer (no HTTP/1.1 bytes).

What an ASGI server (or any stack that parsed HTTP itself) drives: a head, body chunks,
the end; out come a status with headers and body bytes. The h11 connection runs every
request through one of these, so the same requests must get the same answers both ways
(`test_the_same_requests_get_the_same_answers_as_over_h11`).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import pytest

from mcp_core import (
    ConnectionClosed,
    LocalProtocolError,
    RequestCancelled,
    RequestReceived,
    ServerConfig,
)
from mcp_core._http_server import (
    HTTPExchange,
    HTTPLimits,
    HTTPRequestRejected,
    HTTPServerEndpoint,
    MCPEvent,
    RequestHead,
)
from mcp_core._sse import SSEDecoder
from mcp_core.testing import default_server_config
from tests.core.test_http_server import (
    MODERN,
    http_request,
    init_params,
    modern_call,
    modern_headers,
    note,
    parse_responses,
    received,
    rpc,
)

BOTH = "application/json, text/event-stream"


def head(
    method: str = "POST",
    *,
    target: str = "/mcp",
    host: str | None = "localhost:8000",
    accept: str | None = BOTH,
    content_type: str | None = "application/json",
    headers: dict[str, str] | None = None,
    length: int | None = None,
    peer: str | None = "127.0.0.1",
) -> RequestHead:
    pairs: list[tuple[str, str]] = []
    if host is not None:
        pairs.append(("host", host))
    if accept is not None:
        pairs.append(("accept", accept))
    if method == "POST" and content_type is not None:
        pairs.append(("content-type", content_type))
    if length is not None:
        pairs.append(("content-length", str(length)))
    pairs += [(k.lower(), v) for k, v in (headers or {}).items()]
    return RequestHead(method, target, pairs, peer=peer)


@dataclass
class Out:
    status: int | None
    headers: dict[str, str]
    body: bytes
    finished: bool

    def json(self) -> Any:
        return json.loads(self.body)

    def messages(self) -> list[Any]:
        return [json.loads(e.data) for e in SSEDecoder().feed(self.body) if e.data]


def drain(ex: HTTPExchange) -> Out:
    data = ex.data_to_send()
    if ex.response is None:
        return Out(None, {}, data, ex.finished)
    status, headers = ex.response
    return Out(status, dict(headers), data, ex.finished)


class Server:
    def __init__(self, config: ServerConfig | None = None, **kwargs: Any) -> None:
        counter = itertools.count(1)
        kwargs.setdefault("new_session_id", lambda: f"session-{next(counter)}")
        self.endpoint = HTTPServerEndpoint(config or default_server_config(), **kwargs)

    def send(
        self, h: RequestHead, body: Any = None, *, chunks: int = 1, now: float = 0.0
    ) -> tuple[list[Any], HTTPExchange, Out]:
        raw = (
            b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        )
        ex = self.endpoint.new_exchange()
        events = ex.receive_head(h, now=now)
        if ex.wants_body:
            size = max(1, -(-len(raw) // chunks))
            for start in range(0, len(raw), size):
                events += ex.receive_body(raw[start : start + size], now=now)
        events += ex.receive_end(now=now, wall_time=1_700_000_000.0)
        return events, ex, drain(ex)

    def initialize(self) -> str:
        _, _, out = self.send(head(), rpc(0, "initialize", init_params()))
        sid = out.headers["mcp-session-id"]
        _, _, ack = self.send(
            head(headers=self.session_headers(sid)), note("notifications/initialized")
        )
        assert ack.status == 202
        return sid

    @staticmethod
    def session_headers(sid: str) -> dict[str, str]:
        return {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}


# ----------------------------------------------------------------- the basics


def test_initialize_answers_json_with_a_session() -> None:
    server = Server()
    events, ex, out = server.send(head(), rpc(0, "initialize", init_params()), chunks=3)
    assert out.status == 200 and out.finished
    assert out.headers["content-type"] == "application/json"
    assert out.headers["content-length"] == str(len(out.body))
    assert out.headers["mcp-session-id"] == "session-1"
    assert out.json()["result"]["protocolVersion"] == "2025-11-25"
    assert events and all(isinstance(e, MCPEvent) for e in events)
    assert not ex.close_connection and not ex.closed
    assert ex.data_to_send() == b""  # taken already


def test_a_later_answer_is_named_by_pump() -> None:
    server = Server()
    sid = server.initialize()
    events, ex, out = server.send(head(headers=server.session_headers(sid)), rpc(7, "tools/list"))
    assert out.status is None and not out.finished  # the handler has not answered
    received(events).connection.send_result(7, {"tools": []})
    assert server.endpoint.pump() == [ex]
    later = drain(ex)
    assert later.status == 200 and later.finished
    assert later.json() == {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}


def test_progress_turns_the_answer_into_a_stream() -> None:
    server = Server()
    sid = server.initialize()
    body = rpc(8, "tools/call", {"name": "slow", "_meta": {"progressToken": "p"}})
    events, ex, _ = server.send(head(headers=server.session_headers(sid)), body)
    conn = received(events).connection
    conn.send_progress(8, 1)
    server.endpoint.pump(conn)
    first = drain(ex)
    assert first.status == 200 and first.headers["content-type"] == "text/event-stream"
    assert "content-length" not in first.headers and not first.finished
    conn.send_result(8, {"content": []})
    server.endpoint.pump(conn)
    rest = drain(ex)
    assert rest.finished
    methods = [m.get("method") for m in Out(200, {}, first.body + rest.body, True).messages()]
    assert methods == ["notifications/progress", None]


def test_head_refusals_need_no_body() -> None:
    server = Server(limits=HTTPLimits(max_body_bytes=100))
    ex = server.endpoint.new_exchange()
    # A refusal that does not close waits for the end of the request, as over h11, but
    # the body need not be read for it.
    assert ex.receive_head(head(host="evil.example")) == []
    assert not ex.wants_body and ex.response is None
    [rejected] = ex.receive_end()
    assert isinstance(rejected, HTTPRequestRejected) and rejected.status == 421
    assert drain(ex).status == 421

    # A declared body more than twice the limit is refused from the head: 413 at once,
    # and the connection under it should not carry another request.
    ex = server.endpoint.new_exchange()
    ex.receive_head(head(length=201))
    out = drain(ex)
    assert out.status == 413 and out.finished and ex.close_connection and not ex.wants_body
    assert out.json()["error"]["message"].startswith("message of 201 bytes exceeds")
    assert ex.receive_body(b"x" * 201) == [] and ex.receive_end() == []


def test_a_body_over_the_limit_is_read_to_its_end_and_refused_with_its_id() -> None:
    server = Server(limits=HTTPLimits(max_body_bytes=100))
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "pad": "x" * 120})
    assert 100 < len(body) <= 200
    # Declared: still read (up to twice the limit), so the client can read the 413.
    ex = server.endpoint.new_exchange()
    assert ex.receive_head(head(length=len(body))) == [] and ex.wants_body
    assert ex.receive_body(body.encode()) == [] and ex.wants_body
    [rejected] = ex.receive_end()
    out = drain(ex)
    assert isinstance(rejected, HTTPRequestRejected) and rejected.status == 413
    assert out.status == 413 and out.finished and not ex.close_connection
    assert out.json()["id"] == 7

    # Undeclared: the same, found as the chunks arrive.
    ex = server.endpoint.new_exchange()
    ex.receive_head(head())
    raw = body.encode()
    assert ex.receive_body(raw[:60]) == [] and ex.receive_body(raw[60:]) == []
    assert ex.wants_body
    [rejected] = ex.receive_end()
    out = drain(ex)
    assert (out.status, out.json()["id"], ex.close_connection) == (413, 7, False)


def test_a_body_over_twice_the_limit_is_refused_as_it_arrives() -> None:
    server = Server(limits=HTTPLimits(max_body_bytes=10))
    ex = server.endpoint.new_exchange()
    ex.receive_head(head())
    assert ex.receive_body(b"x" * 12) == [] and ex.wants_body
    [rejected] = ex.receive_body(b"x" * 12)
    assert rejected.status == 413 and ex.close_connection and not ex.wants_body


def test_misuse_is_a_local_error() -> None:
    server = Server()
    ex = server.endpoint.new_exchange()
    with pytest.raises(LocalProtocolError):
        ex.receive_end()
    ex.receive_head(head("DELETE", headers={"mcp-session-id": "nope"}))
    with pytest.raises(LocalProtocolError):
        ex.receive_head(head())
    ex.receive_end()
    with pytest.raises(LocalProtocolError):
        ex.receive_end()


# ------------------------------------------------------------ timers and loss


def test_timers_commit_to_sse_and_keep_it_alive() -> None:
    server = Server(limits=HTTPLimits(sse_after=5.0, keepalive_interval=10.0))
    sid = server.initialize()
    _, ex, _ = server.send(head(headers=server.session_headers(sid)), rpc(3, "tools/list"), now=100)
    assert ex.next_deadline() == 105.0
    assert ex.tick(104.0) == [] and ex.response is None
    ex.tick(105.0)
    out = drain(ex)
    assert out.status == 200 and out.headers["content-type"] == "text/event-stream"
    assert out.body.startswith(b"id: ")  # the priming event of a resumable stream
    assert ex.next_deadline() == 115.0
    ex.tick(115.0)
    assert ex.data_to_send() == b": keep-alive\n\n"


def test_unstamped_timers_start_at_the_next_tick() -> None:
    server = Server(limits=HTTPLimits(sse_after=5.0))
    sid = server.initialize()
    ex = server.endpoint.new_exchange()
    ex.receive_head(head(headers=server.session_headers(sid)))
    ex.receive_body(json.dumps(rpc(3, "tools/list")).encode())
    ex.receive_end()  # no `now`: the SSE timer has no start yet
    assert ex.next_deadline() == float("-inf")
    ex.tick(50.0)
    assert ex.next_deadline() == 55.0


def test_a_modern_client_that_goes_away_cancels_its_request() -> None:
    server = Server()
    events, ex, _ = server.send(
        head(headers=modern_headers("tools/list")), modern_call(1, "tools/list")
    )
    conn = received(events).connection
    [cancelled] = [e.event for e in ex.close("client went away")]
    assert isinstance(cancelled, RequestCancelled) and cancelled.request_id == 1
    assert ex.closed and ex.close() == [] and ex.next_deadline() is None
    conn.send_result(1, {"tools": []})
    assert server.endpoint.pump(conn) == []  # nothing has a wire to go on


def test_a_legacy_stream_outlives_its_request_and_resumes() -> None:
    server = Server()
    sid = server.initialize()
    body = rpc(4, "tools/call", {"name": "slow", "_meta": {"progressToken": "p"}})
    events, ex, _ = server.send(head(headers=server.session_headers(sid)), body)
    conn = received(events).connection
    conn.send_progress(4, 1)
    server.endpoint.pump(conn)
    last = [e.id for e in SSEDecoder().feed(drain(ex).body)][-1]
    assert ex.close() == []  # not a cancellation in this era
    conn.send_result(4, {"content": []})
    assert server.endpoint.pump(conn) == []
    _, _, out = server.send(
        head(
            "GET",
            accept="text/event-stream",
            headers={**server.session_headers(sid), "last-event-id": last},
        )
    )
    assert out.status == 200 and out.messages()[-1]["id"] == 4 and out.finished


def test_a_client_that_does_not_read_is_dropped() -> None:
    server = Server(limits=HTTPLimits(max_output_bytes=500))
    body = modern_call(1, "tools/call", {"name": "t"})
    body["params"]["_meta"]["progressToken"] = 1
    events, ex, _ = server.send(head(headers=modern_headers("tools/call", "t")), body)
    conn = received(events).connection
    for n in range(1, 20):
        conn.send_progress(1, n)
        server.endpoint.pump(conn)
    assert ex.closed and not ex.finished and ex.data_to_send() == b""
    assert ex.next_deadline() == float("-inf")
    [cancelled] = [e.event for e in ex.tick(1.0)]
    assert isinstance(cancelled, RequestCancelled)
    assert ex.next_deadline() is None


def test_shutdown_answers_a_pending_exchange() -> None:
    server = Server()
    _, ex, _ = server.send(head(headers=modern_headers("tools/list")), modern_call(1, "tools/list"))
    sid = server.initialize()
    _, get, _ = server.send(
        head("GET", accept="text/event-stream", headers=server.session_headers(sid))
    )
    events = server.endpoint.close()
    assert any(isinstance(e.event, ConnectionClosed) for e in events)
    assert drain(ex).status == 503
    assert drain(get).finished


# ------------------------------------------------------- one code path with h11

_SID = "session-1"
_LEGACY = {"Mcp-Session-Id": _SID, "MCP-Protocol-Version": "2025-11-25"}

# (method, body, headers, accept, host, content type, target): the requests of a legacy
# session, a 2026-07-28 call, and every kind of refusal.
CASES: list[tuple[str, Any, dict[str, str], str | None, str | None, str | None, str]] = [
    (
        "POST",
        rpc(0, "initialize", init_params()),
        {},
        BOTH,
        "localhost:8000",
        "application/json",
        "/mcp",
    ),
    (
        "POST",
        note("notifications/initialized"),
        _LEGACY,
        BOTH,
        "localhost:8000",
        "application/json",
        "/mcp",
    ),
    ("POST", rpc(1, "tools/list"), _LEGACY, BOTH, "localhost:8000", "application/json", "/mcp"),
    ("POST", rpc(1, "tools/list"), {}, BOTH, "localhost:8000", "application/json", "/mcp"),
    (
        "POST",
        modern_call(2, "tools/list"),
        modern_headers("tools/list"),
        BOTH,
        "localhost:8000",
        "application/json",
        "/mcp",
    ),
    (
        "POST",
        modern_call(3, "tools/list"),
        modern_headers("tools/call"),
        BOTH,
        "localhost:8000",
        "application/json",
        "/mcp",
    ),
    ("POST", b"{not json", {}, BOTH, "localhost:8000", "application/json", "/mcp"),
    ("POST", rpc(4, "tools/list"), {}, BOTH, "evil.example", "application/json", "/mcp"),
    (
        "POST",
        rpc(4, "tools/list"),
        {"Origin": "http://evil.example"},
        BOTH,
        "localhost:8000",
        "application/json",
        "/mcp",
    ),
    ("POST", rpc(4, "tools/list"), {}, BOTH, "localhost:8000", "application/json", "/other"),
    (
        "POST",
        rpc(4, "tools/list"),
        {},
        "application/json",
        "localhost:8000",
        "application/json",
        "/mcp",
    ),
    ("POST", rpc(4, "tools/list"), {}, BOTH, "localhost:8000", "text/plain", "/mcp"),
    ("PUT", None, {}, BOTH, "localhost:8000", None, "/mcp"),
    ("GET", None, {}, "text/event-stream", "localhost:8000", None, "/mcp"),
    (
        "GET",
        None,
        {**_LEGACY, "Last-Event-ID": "nope"},
        "text/event-stream",
        "localhost:8000",
        None,
        "/mcp",
    ),
    ("DELETE", None, {"MCP-Protocol-Version": MODERN}, BOTH, "localhost:8000", None, "/mcp"),
    ("DELETE", None, _LEGACY, BOTH, "localhost:8000", None, "/mcp"),
]


def _h11_answer(
    server: HTTPServerEndpoint, case: tuple[Any, ...]
) -> tuple[int, dict[str, str], bytes, bool]:
    method, body, headers, accept, host, content_type, target = case
    http = server.new_connection(now=0.0)
    events = http.receive_data(
        http_request(
            method,
            body,
            target=target,
            host=host,
            accept=accept,
            content_type=content_type,
            headers=headers,
        ),
        now=0.0,
    )
    _answer(server, events)
    [resp] = parse_responses(http.data_to_send())
    close = resp.headers.pop("connection", None) == "close"
    resp.headers.pop("transfer-encoding", None)
    return resp.status, resp.headers, resp.body, close


def _exchange_answer(
    server: HTTPServerEndpoint, case: tuple[Any, ...]
) -> tuple[int, dict[str, str], bytes, bool]:
    method, body, headers, accept, host, content_type, target = case
    raw = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    h = head(
        method,
        target=target,
        host=host,
        accept=accept,
        content_type=content_type,
        headers=headers,
        length=len(raw) if method == "POST" else None,
    )
    ex = server.new_exchange()
    events = ex.receive_head(h, now=0.0)
    if ex.wants_body and raw:
        events += ex.receive_body(raw, now=0.0)
    events += ex.receive_end(now=0.0)
    _answer(server, events)
    out = drain(ex)
    assert out.status is not None and out.finished
    return out.status, out.headers, out.body, ex.close_connection


def _answer(server: HTTPServerEndpoint, events: list[Any]) -> None:
    for e in events:
        if isinstance(e, MCPEvent) and isinstance(e.event, RequestReceived):
            e.connection.send_result(e.event.request_id, {"tools": []})
    server.pump()


def test_the_same_requests_get_the_same_answers_as_over_h11() -> None:
    over_h11 = Server().endpoint
    standalone = Server().endpoint
    statuses = []
    for case in CASES:
        answer = _exchange_answer(standalone, case)
        assert answer == _h11_answer(over_h11, case), case
        statuses.append(answer[0])
    assert statuses == [
        200,
        202,
        200,
        400,
        200,
        400,
        400,
        421,
        403,
        404,
        406,
        415,
        405,
        400,
        400,
        405,
        200,
    ]
