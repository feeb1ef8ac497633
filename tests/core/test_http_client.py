"""The Streamable HTTP client layer: against raw bytes, and back to back with the server
through bytes in memory (no sockets), for both protocol eras."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from mcp_core import (
    CONNECTION_CLOSED,
    LIMIT_EXCEEDED,
    METHOD_NOT_FOUND,
    ClientConfig,
    ClientConnection,
    Connected,
    ConnectionClosed,
    Era,
    ErrorReceived,
    Event,
    Limits,
    NotificationReceived,
    OutgoingMessage,
    ProgressReceived,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    ServerConfig,
    SessionStarted,
)
from mcp_core._http_client import (
    HTTPClientConnection,
    HTTPClientEndpoint,
    HTTPErrorReceived,
    HTTPRequest,
    SessionExpired,
    ToolsFiltered,
)
from mcp_core._http_server import (
    HTTPServerConnection,
    HTTPServerEndpoint,
    MCPEvent,
    tool_header_params_from,
)
from mcp_core.testing import default_server_config

MODERN = "2026-07-28"
WALL = 1_790_000_000.0  # a wall-clock time, for sealed requestState

WEATHER = {
    "name": "weather",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "days": {"type": "integer", "x-mcp-header": "Days"},
        },
    },
}
BROKEN = {
    "name": "broken",
    "inputSchema": {
        "type": "object",
        "properties": {"n": {"type": "number", "x-mcp-header": "N"}},
    },
}


# ----------------------------------------------------------------------- harness


class Net:
    """A client endpoint and a server endpoint joined by in-memory TCP connections.

    Each `HTTPRequest` runs on an idle connection pair if one exists (keep-alive),
    else on a new one. `run()` moves bytes until nothing moves. Requests' `delay`
    is recorded, not waited for.
    """

    def __init__(
        self,
        server: HTTPServerEndpoint,
        client: HTTPClientEndpoint,
        *,
        server_app: Callable[[MCPEvent], None] | None = None,
        client_app: Callable[[Event], None] | None = None,
    ) -> None:
        self.server = server
        self.client = client
        self.server_app = server_app
        self.client_app = client_app
        self.pairs: list[tuple[HTTPClientConnection, HTTPServerConnection]] = []
        self.sent: list[HTTPRequest] = []
        self.wire: list[bytes] = []  # raw client -> server bytes
        self.client_events: list[Event] = []
        self.server_events: list[Event] = []
        self.now = 0.0

    def run(self, max_rounds: int = 500) -> None:
        for _ in range(max_rounds):
            moved = False
            out = self.client.pump()
            self._client(out.events)
            for request in out.requests:
                pair = next(
                    (
                        p
                        for p in self.pairs
                        if not p[0].busy and not p[0].closed and not p[1].closed
                    ),
                    None,
                )
                if pair is None:
                    pair = (self.client.new_connection(), self.server.new_connection(now=self.now))
                    self.pairs.append(pair)
                if pair[0].start(request):
                    self.sent.append(request)
                    moved = True
            for http in out.aborts:
                self.cut(lambda c, h=http: c is h)  # type: ignore[misc]
                moved = True
            for pair in list(self.pairs):
                c, s = pair
                data = c.data_to_send()
                if data:
                    moved = True
                    self.wire.append(data)
                    self._server(s.receive_data(data, now=self.now, wall_time=WALL))
                self.server.pump()
                data = s.data_to_send()
                if data:
                    moved = True
                    self._client(c.receive_data(data))
                if s.closed and not c.closed:
                    self._client(c.receive_data(b""))
                    moved = True
                if c.closed and not s.closed:
                    self._server(s.receive_data(b"", now=self.now))
                    moved = True
                if c.closed and s.closed:
                    self.pairs.remove(pair)
            if not moved:
                return
        raise RuntimeError("the network never went quiet")

    def cut(self, which: Callable[[HTTPClientConnection], bool]) -> None:
        """Break the TCP connections whose client side matches (both ends see EOF)."""
        for pair in list(self.pairs):
            c, s = pair
            if which(c):
                self._client(c.close())
                self._server(s.receive_data(b"", now=self.now))
                self.pairs.remove(pair)

    def carrying(self, request_id: Any) -> Callable[[HTTPClientConnection], bool]:
        return lambda c: c._stream is not None and c._stream.request_id == request_id

    def _server(self, events: list[Event]) -> None:
        self.server_events += events
        if self.server_app is not None:
            for event in events:
                if isinstance(event, MCPEvent):
                    self.server_app(event)

    def _client(self, events: list[Event]) -> None:
        self.client_events += events
        if self.client_app is not None:
            for event in events:
                self.client_app(event)

    def client_of(self, kind: type) -> list[Any]:
        return [e for e in self.client_events if isinstance(e, kind)]

    def server_of(self, kind: type) -> list[Any]:
        return [
            e.event
            for e in self.server_events
            if isinstance(e, MCPEvent) and isinstance(e.event, kind)
        ]

    def requests(self, purpose: str) -> list[HTTPRequest]:
        return [r for r in self.sent if r.purpose == purpose]


def headers_of(request: HTTPRequest) -> dict[str, str]:
    return {k.lower(): v for k, v in request.headers}


class App:
    """A small server application: tools/list, tools/call with options in arguments."""

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        self.tools = tools if tools is not None else [WEATHER]
        self.held: list[MCPEvent] = []

    def __call__(self, ev: MCPEvent) -> None:
        event = ev.event
        if not isinstance(event, RequestReceived):
            return
        conn, rid = ev.connection, event.request_id
        if event.method == "tools/list":
            conn.send_result(rid, {"tools": self.tools})
        elif event.method == "tools/call":
            args = event.params.arguments or {}
            if args.get("hold"):
                self.held.append(ev)
                if event.context.progress_token is not None:
                    conn.send_progress(rid, 1)
                return
            if event.context.progress_token is not None:
                conn.send_progress(rid, 1, 2, "half way")
            conn.send_result(rid, {"content": [{"type": "text", "text": json.dumps(args)}]})


def make(
    mode: str = "legacy",
    *,
    config: ServerConfig | None = None,
    app: Callable[[MCPEvent], None] | None = None,
    client_app: Callable[[Event], None] | None = None,
    client_caps: dict[str, Any] | None = None,
    **server_kwargs: Any,
) -> tuple[Net, ClientConnection]:
    counter = itertools.count(1)
    server_kwargs.setdefault("new_session_id", lambda: f"sid-{next(counter)}")
    server = HTTPServerEndpoint(config or default_server_config(), **server_kwargs)
    mcp = ClientConnection(ClientConfig(mode=mode, capabilities=client_caps))
    client = HTTPClientEndpoint(mcp, host="localhost:8000")
    net = Net(server, client, server_app=app or App(), client_app=client_app)
    mcp.connect()
    net.run()
    return net, mcp


def result_of(net: Net, rid: Any) -> Any:
    [got] = [e for e in net.client_of(ResponseReceived) if e.request_id == rid]
    return got.result


# ===================================================================== legacy era


def test_legacy_handshake_session_and_headers() -> None:
    net, _mcp = make("legacy")
    [connected] = net.client_of(Connected)
    assert connected.era is Era.LEGACY and connected.protocol_version == "2025-11-25"
    assert net.client.session_id == "sid-1"
    init, initialized = net.requests("message")[:2]
    h = headers_of(init)
    assert h["accept"] == "application/json, text/event-stream"
    assert h["content-type"] == "application/json"
    assert "mcp-protocol-version" not in h and "mcp-session-id" not in h
    h = headers_of(initialized)
    assert h["mcp-protocol-version"] == "2025-11-25" and h["mcp-session-id"] == "sid-1"
    [listen] = net.requests("listen")
    h = headers_of(listen)
    assert listen.method == "GET" and h["accept"] == "text/event-stream"
    assert h["mcp-session-id"] == "sid-1"
    assert net.server_of(SessionStarted)


def test_legacy_calls_json_and_sse_with_progress() -> None:
    net, mcp = make("legacy")
    rid = mcp.send_request("tools/list")
    net.run()
    assert [t.name for t in result_of(net, rid).tools] == ["weather"]
    rid = mcp.send_request(
        "tools/call", {"name": "weather", "arguments": {"region": "eu"}}, progress=True
    )
    net.run()
    [progress] = net.client_of(ProgressReceived)
    assert progress.request_id == rid and progress.message == "half way"
    assert json.loads(result_of(net, rid).content[0].text) == {"region": "eu"}
    # Legacy: no x-mcp-header filtering or mirroring.
    call = net.requests("message")[-1]
    assert "mcp-param-region" not in headers_of(call) and "mcp-method" not in headers_of(call)


def test_legacy_elicitation_on_the_post_stream() -> None:
    def server_app(ev: MCPEvent) -> None:
        event = ev.event
        if isinstance(event, RequestReceived) and event.method == "tools/call":
            ev.connection.send_request(
                "elicitation/create",
                {
                    "message": "Which day?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"day": {"type": "string"}},
                    },
                },
                related_request_id=event.request_id,
            )
            calls.append(ev)
        elif isinstance(event, ResponseReceived):
            day = event.result.content["day"]
            call = calls[0]
            call.connection.send_result(
                call.event.request_id, {"content": [{"type": "text", "text": day}]}
            )

    def client_app(event: Event) -> None:
        if isinstance(event, RequestReceived) and event.method == "elicitation/create":
            net.client.mcp.send_result(
                event.request_id, {"action": "accept", "content": {"day": "Friday"}}
            )

    calls: list[MCPEvent] = []
    net, mcp = make(
        "legacy", app=server_app, client_app=client_app, client_caps={"elicitation": {}}
    )
    rid = mcp.send_request("tools/call", {"name": "book"})
    net.run()
    assert result_of(net, rid).content[0].text == "Friday"
    # The client's answer went out as its own POST, acknowledged with 202.
    answer = [r for r in net.requests("message") if b'"result"' in r.body]
    assert answer and headers_of(answer[0])["mcp-session-id"] == "sid-1"


def test_legacy_get_stream_delivers_unrelated_notifications() -> None:
    net, _mcp = make("legacy")
    session = net.server.sessions["sid-1"]
    session.send_notification("notifications/tools/list_changed")
    net.run()
    [note] = net.client_of(NotificationReceived)
    assert note.method == "notifications/tools/list_changed"


def test_legacy_resumption_after_a_dropped_stream_honours_retry() -> None:
    app = App()
    net, mcp = make("legacy", app=app, retry_ms=250)
    rid = mcp.send_request(
        "tools/call", {"name": "weather", "arguments": {"hold": True}}, progress=True
    )
    net.run()
    assert net.client_of(ProgressReceived)
    net.cut(net.carrying(rid))  # the network drops the POST's stream
    [held] = app.held
    held.connection.send_result(
        held.event.request_id, {"content": [{"type": "text", "text": "late"}]}
    )
    net.server.pump()
    net.run()
    [resume] = net.requests("resume")
    assert resume.method == "GET" and resume.delay == 0.25
    h = headers_of(resume)
    assert h["last-event-id"].startswith("2:") and h["mcp-session-id"] == "sid-1"
    assert result_of(net, rid).content[0].text == "late"
    assert not net.client_of(RequestFailed)


def test_legacy_resumption_while_the_stream_is_still_open() -> None:
    app = App()
    net, mcp = make("legacy", app=app)
    rid = mcp.send_request("tools/call", {"name": "w", "arguments": {"hold": True}}, progress=True)
    net.run()
    net.cut(net.carrying(rid))
    net.run()  # resumes at once (no answer yet): the GET now carries the stream live
    [held] = app.held
    held.connection.send_result(held.event.request_id, {"content": []})
    net.server.pump()
    net.run()
    assert result_of(net, rid).content == []
    assert net.requests("resume")[0].delay == 1.0  # no retry from the server: the default


def test_dropped_stream_without_event_ids_fails_the_request() -> None:
    app = App()
    net, mcp = make("legacy", app=app, resumable=False)
    rid = mcp.send_request("tools/call", {"name": "w", "arguments": {"hold": True}}, progress=True)
    net.run()
    net.cut(net.carrying(rid))
    net.run()
    [failed] = net.client_of(RequestFailed)
    assert failed.request_id == rid and failed.code == CONNECTION_CLOSED
    assert not net.requests("resume")


def test_close_sends_delete_and_ends_the_session() -> None:
    net, _mcp = make("legacy")
    events = net.client.close()
    assert any(isinstance(e, ConnectionClosed) for e in events)
    net.run()
    [delete] = net.requests("terminate")
    assert delete.method == "DELETE" and headers_of(delete)["mcp-session-id"] == "sid-1"
    assert not net.server.sessions
    assert net.server_of(ConnectionClosed)
    assert net.client.close() == []


def test_session_404_expires_the_session() -> None:
    app = App()
    net, mcp = make("legacy", app=app)
    held = mcp.send_request("tools/call", {"name": "w", "arguments": {"hold": True}})
    net.run()
    net.server.close_session("sid-1")  # its pending answer becomes a 404
    net.run()
    [expired] = net.client_of(SessionExpired)
    assert expired.session_id == "sid-1"
    assert [e.request_id for e in net.client_of(RequestFailed)] == [held]
    assert mcp.state == "closed" and net.client.session_id is None
    assert net.client.close() == []
    net.run()
    assert not net.requests("terminate")  # nothing to delete


def test_session_expiry_is_noticed_through_the_get_stream() -> None:
    net, mcp = make("legacy")
    net.server.close_session("sid-1")  # ends the GET stream; its reconnection gets 404
    net.run()
    assert net.client_of(SessionExpired) and mcp.state == "closed"
    assert [r.purpose for r in net.sent].count("listen") == 2


def test_get_stream_refused_with_405_is_not_retried() -> None:
    # Our server offers a GET stream; one that answers 405 must not be asked again.
    client = HTTPClientEndpoint(ClientConnection(ClientConfig(mode="legacy")), host="h")
    conn = client.new_connection()
    client.session_id = "s"
    client._want_listen = True
    [listen] = client.pump().requests
    assert conn.start(listen)
    conn.data_to_send()
    conn.receive_data(
        b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nallow: POST\r\n\r\n"
    )
    assert not conn.busy and client.pump().requests == []


def legacy_listening() -> tuple[HTTPClientEndpoint, HTTPClientConnection]:
    """A legacy endpoint whose first GET stream has just been sent, not answered."""
    client = HTTPClientEndpoint(ClientConnection(ClientConfig(mode="legacy")), host="h")
    assert not client.listen_pending  # not connected: no GET due
    client.session_id = "s"
    client._want_listen = True
    assert client.listen_pending  # due, not queued yet
    [listen] = client.pump().requests
    assert listen.purpose == "listen" and client.listen_pending
    conn = client.new_connection()
    assert conn.start(listen)
    conn.data_to_send()
    assert client.listen_pending
    return client, conn


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nallow: POST\r\n\r\n",
        b"HTTP/1.1 500 Oops\r\ncontent-length: 0\r\n\r\n",
    ],
)
def test_the_first_get_stream_is_pending_until_its_head_arrives(head: bytes) -> None:
    client, conn = legacy_listening()
    # The head in two pieces: nothing is answered before the whole head is in.
    conn.receive_data(head[:20])
    assert client.listen_pending
    conn.receive_data(head[20:])
    assert not client.listen_pending


def test_a_get_stream_lost_or_closed_is_no_longer_pending() -> None:
    client, conn = legacy_listening()
    conn.close()  # the connection broke before any answer: retried later, not waited for
    assert not client.listen_pending
    [again] = client.pump().requests
    assert again.purpose == "listen" and again.delay > 0
    assert not client.listen_pending  # a reopening is never waited for
    client, _conn = legacy_listening()
    client.close()
    assert not client.listen_pending


def test_a_connection_the_adapter_aborted_is_not_sent_again() -> None:
    """`close(aborted=True)`: we broke the connection ourselves, so nothing says the
    server did not read the request; it fails (or resumes) as any broken exchange."""
    client, mcp = raw_client()
    conn = reused_connection(client, mcp)
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    assert conn.start(request)
    conn.data_to_send()
    events = conn.close(aborted=True)
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid and failed.code == CONNECTION_CLOSED
    assert [r for r in client.pump().requests if r.purpose == "message"] == []


def test_get_stream_reconnects_with_last_event_id() -> None:
    net, _mcp = make("legacy", retry_ms=100)
    net.cut(lambda c: c._stream is not None and c._stream.kind == "listen")
    net.run()
    _first, second = net.requests("listen")
    assert second.delay == 0.1
    assert headers_of(second)["last-event-id"] == "0:1"  # the priming event's id
    net.server.sessions["sid-1"].send_notification("notifications/prompts/list_changed")
    net.run()
    assert [n.method for n in net.client_of(NotificationReceived)] == [
        "notifications/prompts/list_changed"
    ]


# ===================================================================== modern era


def test_modern_probe_and_calls_with_mirrored_headers() -> None:
    net, mcp = make("auto", tool_header_params=tool_header_params_from([WEATHER]))
    [connected] = net.client_of(Connected)
    assert connected.era is Era.MODERN
    probe = net.requests("message")[0]
    h = headers_of(probe)
    assert h["mcp-protocol-version"] == MODERN and h["mcp-method"] == "server/discover"
    rid = mcp.send_request("tools/list")
    net.run()
    assert [t.name for t in result_of(net, rid).tools] == ["weather"]
    rid = mcp.send_request(
        "tools/call", {"name": "weather", "arguments": {"region": "eu west", "days": 3}}
    )
    net.run()
    call = net.requests("message")[-1]
    h = headers_of(call)
    assert h["mcp-method"] == "tools/call" and h["mcp-name"] == "weather"
    assert h["mcp-param-region"] == "eu west" and h["mcp-param-days"] == "3"
    assert "mcp-session-id" not in h
    assert json.loads(result_of(net, rid).content[0].text) == {"region": "eu west", "days": 3}
    assert not net.server.sessions


def test_modern_tools_list_drops_invalid_annotations() -> None:
    net, mcp = make("auto", app=App([WEATHER, BROKEN]))
    rid = mcp.send_request("tools/list")
    net.run()
    [filtered] = net.client_of(ToolsFiltered)
    assert [name for name, _ in filtered.dropped] == ["broken"]
    assert [t.name for t in result_of(net, rid).tools] == ["weather"]
    assert set(net.client.tool_header_params) == {"weather"}


def test_every_modern_tools_list_is_filtered_however_many_came_before() -> None:
    """The filter is looked for only while a modern `tools/list` is out: one after
    another, two at once, and one after a cancelled one are all filtered."""
    net, mcp = make("auto", app=App([WEATHER, BROKEN]))
    for _ in range(2):
        rid = mcp.send_request("tools/list")
        net.run()
        assert [t.name for t in result_of(net, rid).tools] == ["weather"]
    cancelled = mcp.send_request("tools/list")
    mcp.cancel_request(cancelled, "not needed")
    both = [mcp.send_request("tools/list") for _ in range(2)]
    net.run()
    for rid in both:
        assert [t.name for t in result_of(net, rid).tools] == ["weather"]
    assert len(net.client_of(ToolsFiltered)) == 4
    assert net.client._modern_lists == 0


def test_a_pump_with_nothing_to_do_returns_the_shared_empty_outbox() -> None:
    client, mcp = raw_client()
    assert client.pump() is client.pump()
    assert not client.pump() and client.pump().requests == []
    mcp.send_request("tools/list")
    out = client.pump()
    assert out is not client.pump() and len(out.requests) == 1


def test_modern_mismatch_without_listing_is_a_header_error() -> None:
    # Without tools/list the client cannot know the Mcp-Param headers: the server says so.
    net, mcp = make("auto", tool_header_params=tool_header_params_from([WEATHER]))
    rid = mcp.send_request("tools/call", {"name": "weather", "arguments": {"region": "eu"}})
    net.run()
    [error] = net.client_of(ErrorReceived)
    assert error.request_id == rid and error.code == -32020


def test_modern_progress_over_sse() -> None:
    net, mcp = make("auto")
    rid = mcp.send_request("tools/call", {"name": "t", "arguments": {}}, progress=True)
    net.run()
    assert net.client_of(ProgressReceived)[0].request_id == rid
    assert result_of(net, rid).content[0].text == "{}"


def test_modern_cancel_closes_the_stream_and_cancels_on_the_server() -> None:
    app = App()
    net, mcp = make("auto", app=app)
    rid = mcp.send_request("tools/call", {"name": "t", "arguments": {"hold": True}})
    net.run()
    mcp.cancel_request(rid, "user gave up")
    net.run()
    [cancelled] = net.server_of(RequestCancelled)
    assert cancelled.request_id == rid
    assert not any(b"notifications/cancelled" in r.body for r in net.sent)
    assert app.held[0].connection.send_result(rid, {"content": []}) is False


def test_modern_cancel_before_the_request_was_sent() -> None:
    net, mcp = make("auto")
    rid = mcp.send_request("tools/call", {"name": "t", "arguments": {}})
    mcp.cancel_request(rid)
    out = net.client.pump()
    [request] = out.requests
    assert request.cancelled and not net.client.new_connection().start(request)


def test_modern_dropped_stream_fails_without_resumption() -> None:
    app = App()
    net, mcp = make("auto", app=app)
    rid = mcp.send_request("tools/call", {"name": "t", "arguments": {"hold": True}}, progress=True)
    net.run()
    net.cut(net.carrying(rid))
    net.run()
    [failed] = net.client_of(RequestFailed)
    assert failed.request_id == rid and failed.code == CONNECTION_CLOSED
    assert not net.requests("resume")
    assert net.server_of(RequestCancelled)  # and the server took it as a cancellation


def test_modern_input_required_round_trip_over_http() -> None:
    def server_app(ev: MCPEvent) -> None:
        event = ev.event
        if not isinstance(event, RequestReceived):
            return
        answers = event.context.input_responses
        if answers:
            assert event.context.request_state == {"step": 1}  # sealed, then verified
            day = answers["day"].content["day"]
            ev.connection.send_result(
                event.request_id, {"content": [{"type": "text", "text": day}]}
            )
            return
        ev.connection.send_input_required(
            event.request_id,
            state={"step": 1},
            wall_time=WALL,
            input_requests={
                "day": {
                    "method": "elicitation/create",
                    "params": {
                        "message": "Day?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"day": {"type": "string"}},
                        },
                    },
                }
            },
        )

    def client_app(event: Event) -> None:
        if isinstance(event, RequestReceived):
            net.client.mcp.send_result(
                event.request_id, {"action": "accept", "content": {"day": "Monday"}}
            )

    config = default_server_config(request_state_keys=(b"k" * 32,))
    net, mcp = make(
        "auto",
        config=config,
        app=server_app,
        client_app=client_app,
        client_caps={"elicitation": {}},
    )
    rid = mcp.send_request("tools/call", {"name": "book", "arguments": {}})
    net.run()
    assert result_of(net, rid).content[0].text == "Monday"
    posts = [r for r in net.requests("message") if headers_of(r).get("mcp-method") == "tools/call"]
    assert len(posts) == 2 and posts[0].request_id != posts[1].request_id  # the retry: a new id


def test_modern_listen_stream() -> None:
    listens: list[MCPEvent] = []

    def server_app(ev: MCPEvent) -> None:
        if isinstance(ev.event, RequestReceived) and ev.event.method == "subscriptions/listen":
            ev.connection.acknowledge_subscription(ev.event.request_id)
            listens.append(ev)

    net, mcp = make("auto", app=server_app)
    mcp.send_request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    net.run()
    listens[0].connection.notify_subscribers("notifications/tools/list_changed")
    net.server.pump()
    net.run()
    [note] = net.client_of(NotificationReceived)
    assert note.method == "notifications/tools/list_changed" and note.subscription_id is not None


def test_probe_falls_back_to_legacy_on_a_legacy_only_server() -> None:
    net, _mcp = make(
        "auto", config=default_server_config(supported_versions=("2025-11-25", "2025-06-18"))
    )
    [connected] = net.client_of(Connected)
    assert connected.era is Era.LEGACY and net.client.session_id == "sid-1"
    methods = [json.loads(r.body)["method"] for r in net.requests("message")[:2]]
    assert methods == ["server/discover", "initialize"]


def test_unmirrorable_request_fails_before_sending() -> None:
    net, mcp = make("auto")
    net.client._tool_params["weather"] = tool_header_params_from([WEATHER])("weather") or {}
    rid = mcp.send_request("tools/call", {"name": "weather", "arguments": {"days": 2**60}})
    out = net.client.pump()
    assert out.requests == []
    [failed] = out.events
    assert isinstance(failed, RequestFailed) and failed.request_id == rid


def test_a_request_carries_the_params_it_was_encoded_from() -> None:
    """`OutgoingMessage.params`: what the HTTP client mirrors from without parsing the
    payload back. Only an application's requests have them; equality and repr ignore
    them."""
    mcp = ClientConnection(ClientConfig(mode=MODERN))
    mcp.connect()
    mcp.messages_to_send()
    mcp.send_request("tools/call", {"name": "weather", "arguments": {"days": 2}})
    [request] = mcp.messages_to_send()
    assert request.params == json.loads(request.payload)["params"]
    assert request.params["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
    # The engine's own requests (the discovery probe) carry none: read back when needed.
    probing = ClientConnection(ClientConfig(mode="auto"))
    probing.connect()
    [probe] = probing.messages_to_send()
    assert probe.method == "server/discover" and probe.params is None
    bare = OutgoingMessage(request.payload, "request", "tools/call", request.request_id)
    assert bare.params is None and bare == request and repr(bare) == repr(request)


def test_mirrored_headers_come_from_the_params_sent() -> None:
    net, mcp = make("auto")
    rid = mcp.send_request("tools/call", {"name": "weather", "arguments": {"days": 2}})
    [request] = net.client.pump().requests
    body = json.loads(request.body)
    assert body["id"] == rid
    headers = headers_of(request)
    assert headers["mcp-name"] == body["params"]["name"] == "weather"
    assert headers["mcp-method"] == "tools/call"
    assert headers["mcp-protocol-version"] == MODERN
    # The application's own `_meta` naming another revision still fails the request.
    stale = {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    rid = mcp.send_request("tools/call", {"name": "weather", "arguments": {}, "_meta": stale})
    out = net.client.pump()
    assert out.requests == []
    [failed] = out.events
    assert isinstance(failed, RequestFailed) and failed.request_id == rid


def test_the_tool_called_last_gets_the_headers_the_function_makes() -> None:
    """`_outgoing` reuses the mirrored headers of the `tools/call` sent last (same tool,
    same version, no `Mcp-Param-*`): every call's headers are still exactly what
    `mirrored_request_headers` makes of its params, whatever came before: the same tool
    again, another, a tool that gained header parameters, a name with a sentinel's
    shape, an application `_meta` of another revision (refused as without the entry)."""
    from mcp_core import _http_client
    from mcp_core._http_headers import mirrored_request_headers

    net, mcp = make("auto")
    weather = tool_header_params_from([WEATHER])("weather") or {}
    calls: list[tuple[str, dict[str, Any], bool]] = [
        ("echo", {"text": "a"}, False),
        ("echo", {"text": "b"}, False),
        ("weather", {"region": "eu", "days": 2}, False),
        ("weather", {"region": "eu", "days": 2}, False),
        ("weather", {"region": "eu", "days": 2}, True),  # now with header parameters
        ("weather", {"region": "us", "days": 3}, True),
        ("echo", {"text": "c"}, False),
        ("=?base64?ZWNobw==?=", {}, False),
        ("=?base64?ZWNobw==?=", {}, False),
        ("caf\u00e9", {}, False),
        ("caf\u00e9", {}, False),
        ("echo", {"text": "d"}, False),
    ]
    for name, arguments, with_params in calls:
        if with_params:
            net.client._tool_params["weather"] = weather
        else:
            net.client._tool_params.pop("weather", None)
        hit = _http_client._last_call is not None and _http_client._last_call[0] == name
        rid = mcp.send_request("tools/call", {"name": name, "arguments": arguments})
        [request] = net.client.pump().requests
        params = json.loads(request.body)["params"]
        expected = mirrored_request_headers(
            "tools/call", params, MODERN, weather if with_params else None
        )
        assert request.headers[-len(expected) :] == expected, (name, hit)
        assert json.loads(request.body)["id"] == rid
        mcp.fail_request(rid, -32000, "not sent")
        net.client.pump()
    # The entry never outlives the check it stands for: a `_meta` naming another
    # revision is refused whether or not the tool was called last.
    for name in ("echo", "echo", "other"):
        stale = {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}
        rid = mcp.send_request("tools/call", {"name": name, "arguments": {}, "_meta": stale})
        out = net.client.pump()
        assert out.requests == []
        [failed] = out.events
        assert isinstance(failed, RequestFailed) and failed.request_id == rid


def test_param_headers_mirror_the_bytes_not_arguments_changed_after_sending() -> None:
    """The arguments inside `OutgoingMessage.params` are the application's object: one
    changed after `send_request` must not reach an `Mcp-Param-*` header the body
    contradicts (the server would refuse the call with -32020)."""
    net, mcp = make("auto")
    net.client._tool_params["weather"] = tool_header_params_from([WEATHER])("weather") or {}
    arguments: dict[str, Any] = {"region": "eu", "days": 2}
    mcp.send_request("tools/call", {"name": "weather", "arguments": arguments})
    arguments["region"] = "us"
    [request] = net.client.pump().requests
    assert json.loads(request.body)["params"]["arguments"]["region"] == "eu"
    assert headers_of(request)["mcp-param-region"] == "eu"


# ================================================================= raw responses


def raw_client(mode: str = MODERN) -> tuple[HTTPClientEndpoint, ClientConnection]:
    mcp = ClientConnection(ClientConfig(mode=mode))
    client = HTTPClientEndpoint(mcp, host="example.test", headers=[("authorization", "Bearer t")])
    mcp.connect()
    return client, mcp


def exchange(
    client: HTTPClientEndpoint, response: bytes
) -> tuple[HTTPRequest, list[Event], HTTPClientConnection]:
    [request] = client.pump().requests
    conn = client.new_connection()
    assert conn.start(request)
    wire = conn.data_to_send()
    assert wire.startswith(f"{request.method} /mcp HTTP/1.1\r\n".encode())
    assert b"authorization: Bearer t" in wire
    return request, conn.receive_data(response), conn


def json_response(status: int, body: Any, extra: str = "") -> bytes:
    raw = json.dumps(body).encode()
    return (
        f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(raw)}\r\n{extra}\r\n"
    ).encode() + raw


def test_jsonrpc_error_body_on_4xx_is_the_answer() -> None:
    client, mcp = raw_client()
    rid = mcp.send_request("tools/list")
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "bad"}}
    _, events, conn = exchange(client, json_response(400, error))
    [got] = [e for e in events if isinstance(e, ErrorReceived)]
    assert got.request_id == rid and got.code == -32602
    assert not conn.busy and not conn.closed  # keep-alive


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n", "202"),
        (b"HTTP/1.1 500 Oops\r\ncontent-length: 4\r\n\r\nboom", "HTTP 500"),
        (
            b"HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nno",
            "HTTP 404",
        ),
        (b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi", "no answer"),
    ],
)
def test_statuses_without_an_answer_fail_the_request(response: bytes, message: str) -> None:
    client, mcp = raw_client()
    rid = mcp.send_request("tools/list")
    _, events, _ = exchange(client, response)
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid and message in failed.message


def test_probe_rule_plain_404_falls_back_and_jsonrpc_32022_stays_modern() -> None:
    client, _ = raw_client("auto")
    exchange(client, b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
    [fallback] = client.pump().requests
    assert json.loads(fallback.body)["method"] == "initialize"
    assert "mcp-protocol-version" not in headers_of(fallback)

    client, _mcp = raw_client("auto")
    refusal = {
        "jsonrpc": "2.0",
        "id": 0,
        "error": {
            "code": -32022,
            "message": "Unsupported",
            "data": {"supported": ["2025-06-18"], "requested": MODERN},
        },
    }
    _, _events, _ = exchange(client, json_response(400, refusal))
    [next_request] = client.pump().requests
    body = json.loads(next_request.body)
    assert body["method"] == "initialize" and body["params"]["protocolVersion"] == "2025-06-18"


def test_sse_event_over_the_limit_fails_the_request() -> None:
    mcp = ClientConnection(ClientConfig(mode=MODERN))
    client = HTTPClientEndpoint(mcp, host="h", max_sse_event_bytes=64)
    mcp.connect()
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn = client.new_connection()
    conn.start(request)
    big = b"data: " + b"x" * 200 + b"\n\n"
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    events = conn.receive_data(head + b"%x\r\n" % len(big) + big + b"\r\n")
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid and conn.closed
    assert failed.code == LIMIT_EXCEEDED
    assert failed.message == (
        "response refused: an SSE event exceeds the limit of 64 bytes "
        "(HTTPClientEndpoint.max_sse_event_bytes); raise HTTPClientEndpoint.max_sse_event_bytes "
        "in the client's limits to accept it"
    )
    assert client.pump().requests == []  # not resumed: it would meet the same limit


def test_an_sse_event_of_exactly_the_message_limit_passes() -> None:
    """The line holds `data: ` besides the message: that must not be a hidden limit."""
    mcp = ClientConnection(ClientConfig(mode=MODERN, limits=Limits(max_message_bytes=300)))
    client = HTTPClientEndpoint(mcp, host="h")
    mcp.connect()
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn = client.new_connection()
    conn.start(request)
    answer = {"jsonrpc": "2.0", "id": rid, "result": {"tools": [], "_meta": {"p": ""}}}
    answer["result"]["_meta"]["p"] = "x" * (300 - len(json.dumps(answer, separators=(",", ":"))))
    message = json.dumps(answer, separators=(",", ":")).encode()
    assert len(message) == 300
    event = b"event: message\ndata: " + message + b"\n\n"
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    events = conn.receive_data(head + b"%x\r\n" % len(event) + event + b"\r\n")
    assert [e.request_id for e in events if isinstance(e, ResponseReceived)] == [rid]


def test_oversized_json_body_fails_the_request() -> None:
    mcp = ClientConnection(ClientConfig(mode=MODERN))
    client = HTTPClientEndpoint(mcp, host="h", max_response_bytes=10)
    mcp.connect()
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn = client.new_connection()
    conn.start(request)
    events = conn.receive_data(
        json_response(200, {"jsonrpc": "2.0", "id": rid, "result": {"tools": []}})
    )
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert (failed.request_id, failed.code) == (rid, LIMIT_EXCEEDED)
    assert "the response body exceeds the limit of 10 bytes" in failed.message


def test_the_response_limits_follow_the_message_limit_by_default() -> None:
    mcp = ClientConnection(ClientConfig(mode=MODERN, limits=Limits(max_message_bytes=200)))
    client = HTTPClientEndpoint(mcp, host="h")
    assert client.max_response_bytes == client.max_sse_event_bytes == 200
    mcp.connect()
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn = client.new_connection()
    conn.start(request)
    pad = {"jsonrpc": "2.0", "id": rid, "result": {"tools": [], "_meta": {"p": "x" * 300}}}
    [failed] = [
        e for e in conn.receive_data(json_response(200, pad)) if isinstance(e, RequestFailed)
    ]
    assert failed.code == LIMIT_EXCEEDED
    assert "(Limits.max_message_bytes); raise Limits.max_message_bytes" in failed.message


def test_a_response_the_connection_refuses_settles_its_stream_once() -> None:
    """Within the body limit but over the engine's string limit: the connection fails the
    request (LIMIT_EXCEEDED) and the end of the stream adds no second failure."""
    mcp = ClientConnection(ClientConfig(mode=MODERN, limits=Limits(max_string_length=20)))
    client = HTTPClientEndpoint(mcp, host="h")
    mcp.connect()
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn = client.new_connection()
    conn.start(request)
    answer = {"jsonrpc": "2.0", "id": rid, "result": {"tools": [], "_meta": {"p": "x" * 21}}}
    events = conn.receive_data(json_response(200, answer))
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert (failed.request_id, failed.code) == (rid, LIMIT_EXCEEDED)
    assert "(Limits.max_string_length)" in failed.message
    assert not conn.closed and not conn.busy


def test_server_closing_mid_json_fails_the_request() -> None:
    client, mcp = raw_client()
    rid = mcp.send_request("tools/list")
    _, events, conn = exchange(
        client, b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{"
    )
    assert events == []
    events = conn.receive_data(b"")
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid and conn.closed


def test_busy_connection_refuses_a_second_request() -> None:
    client, mcp = raw_client()
    mcp.send_request("tools/list")
    mcp.send_request("prompts/list")
    first, second = client.pump().requests
    conn = client.new_connection()
    conn.start(first)
    with pytest.raises(Exception, match="busy"):
        conn.start(second)


def test_notification_post_refused_is_reported() -> None:
    client, _mcp = raw_client("legacy")
    [init] = client.pump().requests
    conn = client.new_connection()
    conn.start(init)
    result = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    events = conn.receive_data(json_response(200, result, "mcp-session-id: abc\r\n"))
    assert any(isinstance(e, Connected) for e in events)
    assert client.session_id == "abc"
    out = client.pump()
    initialized = next(r for r in out.requests if r.purpose == "message")
    conn.start(initialized)
    events = conn.receive_data(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
    [error] = events
    assert isinstance(error, HTTPErrorReceived) and error.status == 400


def test_malformed_session_id_is_ignored() -> None:
    client, _mcp = raw_client("legacy")
    result = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    _, events, _ = exchange(client, json_response(200, result, "mcp-session-id: a b\r\n"))
    assert any(isinstance(e, HTTPErrorReceived) for e in events)
    assert client.session_id is None


def test_a_session_id_is_taken_from_the_initialize_response_only() -> None:
    client, mcp = raw_client("legacy")
    result = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    exchange(client, json_response(200, result, "mcp-session-id: abc\r\n"))
    assert client.session_id == "abc"
    client.pump()  # notifications/initialized, the GET stream
    rid = mcp.send_request("tools/list")
    answer = {"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}
    _, events, _ = exchange(client, json_response(200, answer, "mcp-session-id: other\r\n"))
    assert [e.request_id for e in events if isinstance(e, ResponseReceived)] == [rid]
    assert client.session_id == "abc"  # a later response cannot move the session


def test_server_sent_error_for_unknown_method_over_http() -> None:
    net, mcp = make("auto")
    # A method the server does not offer: 404 with a JSON-RPC error is this request's answer.
    net.server.config.capabilities_wire.pop("completions")
    rid = mcp.send_request(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "b"}},
    )
    net.run()
    [error] = net.client_of(ErrorReceived)
    assert error.request_id == rid and error.code == METHOD_NOT_FOUND


def test_empty_json_body_on_a_notification_post_is_fine() -> None:
    client, mcp = raw_client()
    mcp.send_notification("notifications/cancelled", {"requestId": 99})
    assert client.pump().requests == []  # 2026-07-28: cancellation is never POSTed
    legacy, lmcp = raw_client("legacy")
    [init] = legacy.pump().requests
    conn = legacy.new_connection()
    conn.start(init)
    result = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    conn.receive_data(json_response(200, result, "mcp-session-id: abc\r\n"))
    initialized = next(r for r in legacy.pump().requests if r.purpose == "message")
    conn.start(initialized)
    events = conn.receive_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n"
    )
    assert events == []
    assert lmcp.messages_to_send() == []  # nothing was taken for a malformed message


# ============================================= a keep-alive connection closed under us


def tools_result(rid: Any) -> bytes:
    return json_response(200, {"jsonrpc": "2.0", "id": rid, "result": {"tools": []}})


def reused_connection(client: HTTPClientEndpoint, mcp: ClientConnection) -> HTTPClientConnection:
    """A connection that has carried one answered exchange and is idle again."""
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn = client.new_connection()
    assert conn.start(request)
    conn.data_to_send()
    events = conn.receive_data(tools_result(rid))
    assert [e.request_id for e in events if isinstance(e, ResponseReceived)] == [rid]
    assert not conn.busy and not conn.closed
    return conn


@pytest.mark.parametrize("how", ["eof", "broken"])
def test_request_dropped_unread_on_a_reused_connection_is_sent_again_on_a_new_one(
    how: str,
) -> None:
    # The server closed the idle connection (its keep-alive timer) just as we sent on it.
    client, mcp = raw_client()
    conn = reused_connection(client, mcp)
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    assert not request.fresh
    assert conn.start(request)
    conn.data_to_send()
    events = conn.receive_data(b"") if how == "eof" else conn.close()
    assert events == [] and conn.closed
    [again] = client.pump().requests
    assert again.fresh and again is not request
    assert (again.method, again.headers, again.body) == (
        request.method,
        request.headers,
        request.body,
    )
    fresh = client.new_connection()
    assert fresh.start(again)
    fresh.data_to_send()
    events = fresh.receive_data(tools_result(rid))
    assert [e.request_id for e in events if isinstance(e, ResponseReceived)] == [rid]
    assert not [e for e in events if isinstance(e, RequestFailed)]


def test_a_request_is_sent_again_once_only() -> None:
    client, mcp = raw_client()
    conn = reused_connection(client, mcp)
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn.start(request)
    conn.receive_data(b"")
    [again] = client.pump().requests
    # Even an adapter that ignored `fresh` and used another reused connection: no loop.
    other = reused_connection(client, mcp)
    assert other.start(again)
    events = other.receive_data(b"")
    [failed] = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.request_id == rid and failed.code == CONNECTION_CLOSED
    assert client.pump().requests == []


def test_no_second_send_after_part_of_an_answer_or_on_a_new_connection() -> None:
    # A new connection closed unanswered: the server may have read it; fail, do not resend.
    client, mcp = raw_client()
    rid = mcp.send_request("tools/list")
    _, events, conn = exchange(client, b"")  # b"": the server closed it
    assert [e.request_id for e in events if isinstance(e, RequestFailed)] == [rid]
    assert client.pump().requests == []
    # A reused connection that brought some of the answer: the server did read it.
    conn = reused_connection(client, mcp)
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn.start(request)
    assert conn.receive_data(b"HTTP/1.1 200 OK\r\ncontent-ty") == []
    events = conn.receive_data(b"")
    assert [e.request_id for e in events if isinstance(e, RequestFailed)] == [rid]
    assert client.pump().requests == []


def test_a_cancelled_request_on_a_reused_connection_is_not_sent_again() -> None:
    client, mcp = raw_client()
    conn = reused_connection(client, mcp)
    rid = mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn.start(request)
    mcp.cancel_request(rid)
    out = client.pump()
    assert out.aborts == [conn]  # 2026-07-28: the cancellation is closing that connection
    conn.close()
    assert client.pump().requests == []


def test_a_notification_dropped_unread_on_a_reused_connection_is_sent_again() -> None:
    # notifications/initialized goes out on the connection initialize came back on.
    client, _mcp = raw_client("legacy")
    [init] = client.pump().requests
    conn = client.new_connection()
    conn.start(init)
    result = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    conn.receive_data(json_response(200, result, "mcp-session-id: abc\r\n"))
    initialized = next(r for r in client.pump().requests if r.purpose == "message")
    assert conn.start(initialized)
    assert conn.receive_data(b"") == []
    [again] = [r for r in client.pump().requests if r.purpose == "message"]
    assert again.fresh and again.body == initialized.body
    assert headers_of(again)["mcp-session-id"] == "abc"
