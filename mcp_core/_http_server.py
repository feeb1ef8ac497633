"""Streamable HTTP, server side, both protocol eras, over h11; sans-IO.

Three objects, as in wsproto (an HTTP layer that owns h11 and feeds MCP connections):

* `HTTPServerEndpoint`: one per MCP endpoint (default path `/mcp`), shared by every TCP
  connection. It holds the configuration, the legacy session table, the event store
  for SSE resumption, the Host/Origin policy, the trusted proxies and the limits, and
  it routes what the MCP connections want to send onto the right HTTP response.
* `HTTPExchange`: one per HTTP request, at the request level (a head, body chunks, the
  end in; a status, headers and body bytes out). What a server that parsed HTTP itself
  (ASGI) drives directly: `endpoint.new_exchange()`.
* `HTTPServerConnection`: one per TCP connection, with an `h11.Connection(SERVER)`
  inside. Bytes in (`receive_data`), events out, bytes out (`data_to_send`), and
  `tick(now)` for the header, idle, keep-alive and SSE-commit timers. It runs each
  request through an `HTTPExchange`, so both ways in share every rule above HTTP/1.1.

Each HTTP request is routed to an MCP `ServerConnection`: a legacy session's (one per
`Mcp-Session-Id`, created by `initialize`) or, for a 2026-07-28 request, a fresh one
per POST (ids are per client, so no two clients' requests ever share a routing
table). The MCP events come out wrapped in `MCPEvent`, tagged with that connection
and the session id; the application answers *through that connection*
(`ev.connection.send_result(...)`) and then calls `endpoint.pump()`, which takes every
queued `OutgoingMessage` and puts it on its HTTP stream by `related_request_id`: a
response ends its POST's stream; notifications and server requests made while
handling a POST go on that POST's SSE stream; anything else goes on the session's GET
stream (legacy). `pump()` returns the HTTP connections that now have bytes to write.

Driving it (one task per TCP connection, any event loop)::

    endpoint = HTTPServerEndpoint(config, new_session_id=lambda: secrets.token_urlsafe(24))

    http = endpoint.new_connection()              # per accepted socket
    while not http.closed:
        data = recv_with_timeout(sock, http.next_deadline())  # b"" at EOF
        if data is None:                          # the deadline passed
            events = http.tick(clock())
        else:                                     # clock(): monotonic; time(): epoch
            events = http.receive_data(data, now=clock(), wall_time=time())
        for ev in events:
            if isinstance(ev, MCPEvent) and isinstance(ev.event, RequestReceived):
                ev.connection.send_result(ev.event.request_id, answer(ev.event))
        for ready in endpoint.pump():             # answers may land on other sockets
            wake(ready)                           # its task writes ready.data_to_send()
        sock.sendall(http.data_to_send())         # (and re-reads ready.next_deadline())
    sock.close()
    # one more timer for the endpoint: endpoint.tick(clock()) at endpoint.next_deadline()

Answers given later (from a worker) need only `conn.send_...` then `endpoint.pump(conn)`.

Decisions (see the module-level constants and `HTTPLimits` for the numbers):

* JSON or SSE ("auto" mode): a request's answer goes out as `application/json` when it
  is the first thing the handler sends for it. The response commits to
  `text/event-stream` as soon as anything else related to the request comes first
  (progress, a log message, a server request), or when the handler has been silent for
  `sse_after` seconds (so proxies see keep-alive comments and a resumable legacy
  stream gets its priming event). "json" never streams (related notifications are
  dropped, related server requests go to the GET stream); "sse" streams every answer
  not given at once. `subscriptions/listen` always streams. Whatever the mode, a
  request the engine refuses on the spot gets a JSON body with its status.
* Legacy error responses travel with status 200 (as in the official SDK); 2026-07-28
  JSON responses, and a refused `initialize`, use the SPEC-NOTES 4.3 status table.
* Era of a POST: `initialize` is legacy; a request whose `params._meta` carries the
  2026 protocol version, or whose `MCP-Protocol-Version` header is a modern revision,
  is modern; everything else is legacy (or modern, when the server speaks no legacy
  revision).
* Resumption (legacy only): every SSE event gets an id `<stream>:<seq>` from the event
  store; 2025-11-25 streams open with a priming event (id, empty data, `retry`).
  `GET` + `Last-Event-ID` replays that one stream and, if it is still open, continues
  it live. A dropped POST stream is *not* a cancellation in legacy; in 2026-07-28 it
  is, and the request is abandoned (`RequestCancelled`).
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, Protocol

import h11

from . import _jsonrpc as jr
from ._base import (
    OutgoingMessage,
    RequestId,
    State,
    missing_wall_time,
)
from ._config import ServerConfig
from ._errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    LIMIT_EXCEEDED,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalProtocolError,
    RemoteProtocolError,
)
from ._events import ConnectionClosed, Event, MessageRejected, RequestCancelled
from ._framing import Ends
from ._http import (
    DEFAULT_PATH,
    ERROR_STATUS,
    JSON,
    LAST_EVENT_ID,
    PROTOCOL_VERSION,
    SESSION_ID,
    Headers,
    HeadScanner,
    accepted,
    decode_headers,
    error_body,
    is_visible_ascii,
    media_type,
    reason_phrase,
    single_header,
    sse_message,
)
from ._http_headers import (
    ClientView,
    HeaderParam,
    HostPolicy,
    TrustedProxies,
    check_mirrored_headers,
    x_mcp_header_params,
)
from ._server import ServerConnection
from ._sse import encode_event
from ._state import ResponseState, StreamState, classify_era
from ._versions import V2025_03_26, V2025_11_25, Era, is_known

__all__ = [
    "EventStore",
    "HTTPExchange",
    "HTTPLimits",
    "HTTPRequestRejected",
    "HTTPServerConnection",
    "HTTPServerEndpoint",
    "InMemoryEventStore",
    "MCPEvent",
    "RequestHead",
    "tool_header_params_from",
]

_NAN: Final = math.nan
_NEVER: Final = -math.inf  # a deadline in the past: "call tick() now"
_FEED: Final = 16 * 1024  # bytes handed to h11 at a time (see HTTPServerConnection._feed)
GET_STREAM_ID: Final = "0"
_KEEPALIVE: Final = b": keep-alive\n\n"


# =========================================================================== events


@dataclass(frozen=True, slots=True)
class MCPEvent(Event):
    """An event of the MCP connection an HTTP request was routed to.

    Answer through `connection` (`send_result`, `send_error`, `send_progress`,
    `send_request` ...), then call `HTTPServerEndpoint.pump()`. `session_id` is the
    legacy session, or None for a 2026-07-28 request (whose connection lives only
    until its response is out).
    """

    event: Event
    connection: ServerConnection
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class HTTPRequestRejected(Event):
    """The HTTP layer answered a request itself with an error status (for your logs)."""

    method: str
    target: str
    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class RequestHead:
    """A request line and its headers (names lower-case, values decoded as Latin-1).

    `peer` is the direct peer's address (the socket's, or an ASGI scope's `client`) and
    `scheme` how it reached us; `target` is the path (and query) relative to where the
    endpoint is mounted. The endpoint fills in `view`: the scheme, host and client
    address as the client used them, which differ behind a trusted reverse proxy
    (`TrustedProxies`); build links back to the server from `view.base_url`.
    """

    method: str
    target: str
    headers: Headers
    peer: str | None = None
    scheme: str = "http"
    view: ClientView | None = None

    def header(self, name: str) -> str | None:
        """The first value of a header, or None."""
        value, _ = single_header(self.headers, name.lower())
        return value


# ====================================================================== event store


class EventStore(Protocol):
    """Where legacy SSE events are kept so a client can resume a dropped stream.

    Synchronous on purpose: this layer does no I/O, so a store backed by a database
    must answer from memory (a write-behind cache) or be wrapped by the adapter.
    Ids must be unique per session and name their stream; `replay_after` must never
    return another stream's, or another session's, events.
    """

    def store_event(self, session_id: str, stream_id: str, payload: bytes | None) -> str:
        """Keep one event (None: a priming event, never replayed) and return its id."""
        ...

    def replay_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]] | None:
        """(stream id, the later events as (id, payload)), or None for an id this
        session never issued."""
        ...

    def forget_session(self, session_id: str) -> None:
        """The session ended: drop everything it stored."""
        ...


class _StoredStream:
    __slots__ = ("events", "next_seq")

    def __init__(self, bound: int) -> None:
        self.events: deque[tuple[int, bytes | None]] = deque(maxlen=bound)
        self.next_seq = 1


class InMemoryEventStore:
    """The default `EventStore`: bounded per stream and per session, oldest dropped.

    Event ids are `<stream id>:<sequence>`; a cursor is accepted only for a stream of
    the same session and a sequence already issued, so a guessed or foreign id
    replays nothing. A client that fell further behind than the bound gets what is
    left (the oldest events are gone).
    """

    def __init__(
        self, *, max_events_per_stream: int = 512, max_streams_per_session: int = 64
    ) -> None:
        if max_events_per_stream < 1 or max_streams_per_session < 1:
            raise ValueError("event store bounds must be positive")
        self._max_events = max_events_per_stream
        self._max_streams = max_streams_per_session
        self._sessions: dict[str, OrderedDict[str, _StoredStream]] = {}

    def store_event(self, session_id: str, stream_id: str, payload: bytes | None) -> str:
        streams = self._sessions.get(session_id)
        if streams is None:
            streams = self._sessions[session_id] = OrderedDict()
        stored = streams.get(stream_id)
        if stored is None:
            stored = streams[stream_id] = _StoredStream(self._max_events)
            if len(streams) > self._max_streams:
                streams.popitem(last=False)
        else:
            streams.move_to_end(stream_id)
        seq = stored.next_seq
        stored.next_seq += 1
        stored.events.append((seq, payload))
        return f"{stream_id}:{seq}"

    def replay_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]] | None:
        streams = self._sessions.get(session_id)
        stream_id, sep, seq_text = last_event_id.rpartition(":")
        if (
            streams is None
            or not sep
            or not (seq_text.isascii() and seq_text.isdigit() and len(seq_text) <= 18)
        ):
            return None
        stored = streams.get(stream_id)
        seq = int(seq_text)
        if stored is None or not 0 < seq < stored.next_seq:
            return None
        return stream_id, [
            (f"{stream_id}:{n}", payload)
            for n, payload in stored.events
            if n > seq and payload is not None
        ]

    def forget_session(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)


# =========================================================================== limits


@dataclass(frozen=True, slots=True)
class HTTPLimits:
    """Every bound the HTTP layer keeps (times in the caller's clock units, seconds).

    `max_header_bytes` caps the request head (431). `max_body_bytes` caps the body
    (413); None means the server's `Limits.max_message_bytes`, since a body is one
    message. A body over it is read to its end and dropped, keeping only its first
    and last 4 KiB, so the 413 carries the request's JSON-RPC id and the client,
    done sending, can read it; past twice the limit it is refused at once and the
    connection closed. `max_output_bytes` is what may wait in one connection's
    output buffer before the client counts as not reading (its stream is then
    dropped); None means the server's `Limits.output_limit` (128 MiB by default),
    so an answer as big as the engine will queue always fits. `header_timeout` runs
    from a request's first byte to the end of its head, then bounds each silence
    while its body arrives (408): a big body on a slow link is not cut off,
    a stalled one is. `idle_timeout` runs between requests on a keep-alive
    connection (closed quietly). `sse_after` commits a silent "auto"
    response to SSE; `keepalive_interval` spaces comment lines on silent streams.
    HTTP/1.1 carries one request at a time per TCP connection, so the per-connection
    stream limit is 1 by construction; `max_streams_per_session` caps the HTTP
    requests a legacy session may hold open at once (429) and `max_exchanges` the
    2026-07-28 requests in flight over the whole endpoint (503).
    """

    max_header_bytes: int = 16 * 1024
    max_body_bytes: int | None = None
    max_output_bytes: int | None = None
    max_sessions: int = 10_000
    max_streams_per_session: int = 32
    max_exchanges: int = 10_000
    max_backlog_messages: int = 256
    header_timeout: float | None = 10.0
    idle_timeout: float | None = 60.0
    session_idle_timeout: float | None = 1800.0
    sse_after: float | None = 15.0
    keepalive_interval: float | None = 15.0

    def __post_init__(self) -> None:
        for name in (
            "max_header_bytes",
            "max_body_bytes",
            "max_output_bytes",
            "max_sessions",
            "max_streams_per_session",
            "max_exchanges",
            "max_backlog_messages",
        ):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be positive")
        for name in (
            "header_timeout",
            "idle_timeout",
            "session_idle_timeout",
            "sse_after",
            "keepalive_interval",
        ):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds or None")


DEFAULT_HOST_POLICY: Final = HostPolicy.loopback()


def tool_header_params_from(
    tools: Iterable[Any],
) -> Callable[[str], Mapping[str, HeaderParam] | None]:
    """A `tool_header_params` hook for a fixed tool list (models or wire dicts).

    Raises ValueError for a tool whose `x-mcp-header` annotations are invalid: clients
    must drop such a tool, so serving it is a bug worth failing on at startup.
    """
    table: dict[str, Mapping[str, HeaderParam]] = {}
    for tool in tools:
        wire = (
            tool.model_dump(by_alias=True, exclude_none=True)
            if hasattr(tool, "model_dump")
            else tool
        )
        schema = wire.get("inputSchema")
        params = x_mcp_header_params(schema) if isinstance(schema, Mapping) else {}
        if params:
            table[wire["name"]] = params
    return table.get


# ====================================================================== internals

_PENDING, _STREAMING, _DONE = StreamState.PENDING, StreamState.STREAMING, StreamState.DONE


@dataclass(slots=True)
class _Refusal:
    status: int
    message: str
    code: int = INVALID_REQUEST
    request_id: Any = None
    data: Any = None
    jsonrpc: bool = True
    close: bool = False
    headers: tuple[tuple[str, str], ...] = ()


class _Stream:
    """One HTTP response carrying MCP messages: a POST's answer, or a GET stream."""

    __slots__ = (
        "batch",
        "can_json",
        "can_sse",
        "conn",
        "http",
        "init_ok",
        "is_get",
        "is_init",
        "parts",
        "pending",
        "session",
        "state",
        "stream_id",
    )

    def __init__(
        self,
        conn: ServerConnection,
        session: _Session | None,
        stream_id: str,
        pending: set[RequestId],
        *,
        can_json: bool,
        can_sse: bool,
        batch: bool = False,
        is_get: bool = False,
        is_init: bool = False,
    ) -> None:
        self.conn = conn
        self.session = session
        self.stream_id = stream_id
        self.pending = pending
        self.can_json = can_json
        self.can_sse = can_sse
        self.batch = batch
        self.is_get = is_get
        self.is_init = is_init
        self.init_ok = False
        self.state = _PENDING
        self.parts: list[OutgoingMessage] = []
        self.http: HTTPExchange | None = None


class _Session:
    """A legacy session: its MCP connection and the streams it has open."""

    __slots__ = (
        "attached",
        "backlog",
        "by_request",
        "capture",
        "closed",
        "conn",
        "feeding",
        "get_stream",
        "id",
        "next_stream",
        "principal",
        "streams",
        "version",
    )

    def __init__(
        self, session_id: str, conn: ServerConnection, principal: str | None, backlog: int
    ) -> None:
        self.id = session_id
        self.conn = conn
        self.principal = principal
        self.version = ""
        self.by_request: dict[RequestId, _Stream] = {}
        self.streams: dict[str, _Stream] = {}
        self.get_stream: _Stream | None = None
        self.backlog: deque[tuple[bytes, str | None]] = deque(maxlen=backlog)
        self.next_stream = 1
        self.attached = 0
        self.closed = False
        self.feeding: _Stream | None = None  # the POST being fed, for id-less error replies
        self.capture: list[OutgoingMessage] | None = None


def _tag(events: list[Event], conn: ServerConnection, session_id: str | None) -> list[Event]:
    return [MCPEvent(e, conn, session_id) for e in events]


def _error_code(payload: bytes) -> int | None:
    try:
        obj = jr.parse(payload)
    except RemoteProtocolError:
        return None
    error = obj.get("error") if type(obj) is dict else None
    code = error.get("code") if type(error) is dict else None
    return code if type(code) is int else None


def _path_of(target: str) -> str:
    return target.split("?", 1)[0]


# ========================================================================= endpoint


class HTTPServerEndpoint:
    """The shared half of the HTTP server: sessions, routing, the event store, policy.

    `new_session_id` mints legacy session ids (back it with `secrets`; ids must be
    visible ASCII). `host_policy` defaults to the loopback allow-list; pass your own
    for a public bind, or None to switch the check off explicitly. `event_store`
    defaults to a bounded `InMemoryEventStore`; `resumable=False` sends no event ids.
    `tool_header_params(name)` returns the called tool's `x_mcp_header_params` (see
    `tool_header_params_from`), so `Mcp-Param-*` headers are checked against the body.
    `principal_of(head)` names who sent a request (from your own authentication); a
    session is bound to the principal that created it, and anyone else gets 404.
    `retry_ms` is the reconnection delay announced in priming events.
    `trusted_proxies` (addresses and networks, or a `TrustedProxies`; default none) are
    the peers whose X-Forwarded-* (or `Forwarded`) headers are believed: for them the
    Host check and `RequestHead.view` use the host, scheme and client the proxy reports.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        new_session_id: Callable[[], str],
        path: str = DEFAULT_PATH,
        host_policy: HostPolicy | None = DEFAULT_HOST_POLICY,
        limits: HTTPLimits | None = None,
        response_mode: Literal["auto", "json", "sse"] = "auto",
        event_store: EventStore | None = None,
        resumable: bool = True,
        retry_ms: int | None = None,
        tool_header_params: Callable[[str], Mapping[str, HeaderParam] | None] | None = None,
        principal_of: Callable[[RequestHead], str | None] | None = None,
        allow_delete: bool = True,
        trusted_proxies: TrustedProxies | Iterable[str] | None = None,
    ) -> None:
        if response_mode not in ("auto", "json", "sse"):
            raise ValueError("response_mode must be 'auto', 'json' or 'sse'")
        if retry_ms is not None and (isinstance(retry_ms, bool) or retry_ms < 0):
            raise ValueError("retry_ms must be a non-negative int")
        self.config = config
        self.path = path
        self.host_policy = host_policy
        self.limits = limits = limits or HTTPLimits()
        # The limits in force, and the setting each error names.
        if limits.max_body_bytes is not None:
            self.max_body_bytes = limits.max_body_bytes
            self._body_setting = "HTTPLimits.max_body_bytes"
        else:
            self.max_body_bytes = config.limits.max_message_bytes
            self._body_setting = "Limits.max_message_bytes"
        self.max_output_bytes = (
            limits.max_output_bytes
            if limits.max_output_bytes is not None
            else config.limits.output_limit
        )
        self.response_mode = response_mode
        self.retry_ms = retry_ms
        self.tool_header_params = tool_header_params
        self.principal_of = principal_of
        self.allow_delete = allow_delete
        self.trusted_proxies = (
            trusted_proxies
            if isinstance(trusted_proxies, TrustedProxies)
            else TrustedProxies(trusted_proxies or ())
        )
        self._new_session_id = new_session_id
        self._store: EventStore | None = (
            (event_store if event_store is not None else InMemoryEventStore())
            if resumable
            else None
        )
        self._sessions: dict[str, _Session] = {}
        self._owners: dict[ServerConnection, _Session | _Stream] = {}
        self._exchanges = 0
        self._idle: dict[str, float] = {}  # session id -> idle since (NaN: stamp at next tick)
        self._ready: dict[HTTPServerConnection | HTTPExchange, None] = {}

    # ----------------------------------------------------------------- public

    def new_connection(
        self, *, now: float | None = None, peer: str | None = None, scheme: str = "http"
    ) -> HTTPServerConnection:
        """A new `HTTPServerConnection` for one accepted TCP connection from `peer`."""
        return HTTPServerConnection(self, now=now, peer=peer, scheme=scheme)

    def new_exchange(self) -> HTTPExchange:
        """A new `HTTPExchange`: one request that an HTTP server outside this layer
        parsed (ASGI, HTTP/2). Feed it `receive_head`, `receive_body`, `receive_end`."""
        return HTTPExchange(self)

    @property
    def sessions(self) -> Mapping[str, ServerConnection]:
        """The open legacy sessions: id -> their MCP connection."""
        return {sid: s.conn for sid, s in self._sessions.items()}

    def pump(self, *connections: ServerConnection) -> list[HTTPServerConnection | HTTPExchange]:
        """Route what the MCP connections queued onto their HTTP streams.

        With no argument every live MCP connection is drained; name the ones you
        answered through to make it cheaper. Returns the HTTP connections that now
        have bytes to write (or events waiting for their next `tick`), and the
        standalone exchanges (`new_exchange`) that have output.
        """
        for conn in connections or tuple(self._owners):
            self._drain(conn)
        ready = list(self._ready)
        self._ready.clear()
        return ready

    def tick(self, now: float) -> list[Event]:
        """Run the sessions' timers: their MCP connections' request deadlines (a
        server-to-client request that timed out), and the expiry of sessions idle (no
        HTTP request open) for `session_idle_timeout`. Then `pump()` as usual."""
        events: list[Event] = []
        for session in list(self._sessions.values()):
            conn = session.conn
            deadline = conn.next_deadline()
            if deadline is not None and deadline <= now:
                expired = self._session_events(session, conn.tick(now))
                events += _tag(expired, conn, session.id)
                self._drain(conn)
        timeout = self.limits.session_idle_timeout
        for sid, since in list(self._idle.items()):
            if math.isnan(since):
                self._idle[sid] = now
            elif timeout is not None and since + timeout <= now:
                idle = self._sessions.get(sid)
                if idle is not None:
                    events += self._end_session(idle, "session idle timeout")
        return events

    def next_deadline(self) -> float | None:
        """When `tick` next has work, or None (a value in the past means now)."""
        deadlines = [
            d for d in (s.conn.next_deadline() for s in self._sessions.values()) if d is not None
        ]
        timeout = self.limits.session_idle_timeout
        if timeout is not None and self._idle:
            if any(math.isnan(t) for t in self._idle.values()):
                return _NEVER
            deadlines.append(min(self._idle.values()) + timeout)
        return min(deadlines) if deadlines else None

    def close_session(self, session_id: str, reason: str = "closed by the server") -> list[Event]:
        """End a legacy session: its streams end, later requests get 404."""
        session = self._sessions.get(session_id)
        return self._end_session(session, reason) if session is not None else []

    def close_stream(self, session_id: str, request_id: RequestId | None = None) -> bool:
        """End the HTTP response carrying a legacy stream without ending the stream.

        SEP-1699 polling: the client reconnects (after the priming `retry`) with
        `Last-Event-ID` and gets what was sent meanwhile. `request_id` names a POST's
        stream; None the GET stream. False when there is nothing resumable to close.
        """
        session = self._sessions.get(session_id)
        if session is None or self._store is None:
            return False
        stream = session.get_stream if request_id is None else session.by_request.get(request_id)
        if stream is None or stream.http is None or stream.state != _STREAMING:
            return False
        http = stream.http
        self._release(stream)
        if stream.is_get:
            session.get_stream = None
        http._end_response()
        return True

    def close(self, reason: str = "server shutting down") -> list[Event]:
        """End every session and every 2026-07-28 request in flight."""
        events: list[Event] = []
        for session in list(self._sessions.values()):
            events += self._end_session(session, reason)
        for owner in list(self._owners.values()):
            if isinstance(owner, _Stream):
                http = owner.http
                state = owner.state
                self._release(owner)
                events += self._abandon(owner, reason)
                if http is not None and state == _STREAMING:
                    http._end_response()
                elif http is not None:
                    http._send_json(503, error_body(None, INTERNAL_ERROR, reason))
        return events

    # ------------------------------------------------------------ head checks

    def _resolve(self, head: RequestHead) -> RequestHead:
        """The head with its `view`: who sent it and how, after trusted proxies."""
        view = self.trusted_proxies.resolve(head.headers, peer=head.peer, scheme=head.scheme)
        return replace(head, view=view)

    def _check_head(self, head: RequestHead) -> _Refusal | None:
        policy = self.host_policy
        if policy is not None:
            status = policy.check_headers(head.headers, view=head.view)
            if status == 421:
                return _Refusal(421, "Invalid Host header", jsonrpc=False)
            if status == 403:
                return _Refusal(403, "Forbidden: invalid Origin header")
        if _path_of(head.target) != self.path:
            return _Refusal(404, "Not Found", jsonrpc=False)
        if head.method not in ("POST", "GET", "DELETE"):
            return _Refusal(405, "Method Not Allowed", jsonrpc=False, headers=(self._allow(),))
        if head.method != "POST":
            return None
        json_ok, sse_ok = accepted(head.headers)
        if self.response_mode == "json":
            if not json_ok:
                return _Refusal(406, "Not Acceptable: Client must accept application/json")
        elif not (json_ok and sse_ok):
            return _Refusal(
                406,
                "Not Acceptable: Client must accept both application/json and text/event-stream",
            )
        content_type, repeated = single_header(head.headers, "content-type")
        if repeated or media_type(content_type) != JSON:
            return _Refusal(415, "Unsupported Media Type: Content-Type must be application/json")
        return None

    def _allow(self) -> tuple[str, str]:
        if self.config.legacy_versions:
            return ("allow", "GET, POST, DELETE" if self.allow_delete else "GET, POST")
        return ("allow", "POST")

    def _principal(self, head: RequestHead) -> str | None:
        return self.principal_of(head) if self.principal_of is not None else None

    def _session_for(self, head: RequestHead, session_id: str) -> _Session | None:
        session = self._sessions.get(session_id)
        if session is None or session.closed:
            return None
        if self.principal_of is not None and self._principal(head) != session.principal:
            return None  # exactly as if it did not exist: existence must not leak
        return session

    def _version_problem(self, head: RequestHead, session: _Session) -> _Refusal | None:
        version, repeated = single_header(head.headers, PROTOCOL_VERSION)
        if repeated:
            return _Refusal(400, "Bad Request: MCP-Protocol-Version appears more than once")
        if version is None or version == session.version:
            return None  # absent: the session's negotiated version is the other way to know
        if not is_known(version):
            return _Refusal(400, f"Bad Request: Unsupported protocol version: {version}")
        return _Refusal(
            400,
            f"Bad Request: MCP-Protocol-Version {version} does not match the session's "
            f"{session.version}",
        )

    # ------------------------------------------------------------------- POST

    def _post(self, http: HTTPExchange, head: RequestHead, body: bytes) -> list[Event]:
        try:
            obj = jr.parse(body, self.config.limits)
        except jr.LimitExceeded as refusal:
            return self._refuse_over_limit(http, head, refusal)
        except RemoteProtocolError as exc:
            return http._refuse(_Refusal(exc.http_status, exc.message, exc.code))
        # Routing is by era, and the era is the message's word first (classify_era:
        # the MCP-Protocol-Version header, the params' envelope), this endpoint's
        # policy only where the message says nothing. The order matters:
        version, _ = single_header(head.headers, PROTOCOL_VERSION)
        single = type(obj) is dict
        era = classify_era(obj.get("params") if single else None, version)
        # 1. An initialize opens a legacy session unless the message says
        #    2026-07-28; then it is a modern request for a method that revision
        #    lacks, and the modern path refuses it in words a client can show.
        if single and obj.get("method") == "initialize" and "id" in obj and era is not Era.MODERN:
            return self._post_legacy(http, head, obj)
        # 2. Said modern, or nothing else is spoken here: no session is involved.
        if era is Era.MODERN or not self.config.legacy_versions:
            return self._post_modern(http, head, obj)
        # 3. A header naming no revision we know. A server that speaks 2026-07-28
        #    lets its envelope check answer (with the supported list); a
        #    legacy-only one has no JSON-RPC answer to give before a session.
        if era is None and version is not None:
            if self.config.modern_versions:
                return self._post_modern(http, head, obj)
            return http._refuse(
                _Refusal(400, f"Bad Request: Unsupported protocol version: {version}")
            )
        # 4. Said legacy, or nothing at all: a request in a session (which
        #    _post_legacy finds by Mcp-Session-Id, or refuses for its absence).
        return self._post_legacy(http, head, obj)

    def _refuse_over_limit(
        self,
        http: HTTPExchange,
        head: RequestHead,
        refusal: jr.LimitExceeded,
        *,
        close: bool = False,
    ) -> list[Event]:
        """A body over a limit: its status (413, or 400 for depth and digits) with a
        JSON-RPC error carrying the request's id when it could be read. A legacy
        client's answer to one of our requests fails that request here, so the
        handler waiting on it is not left waiting; the error then names no id."""
        rid, is_response, _ = refusal.envelope
        events: list[Event] = []
        if is_response:
            session_id, _ = single_header(head.headers, SESSION_ID)
            session = self._session_for(head, session_id) if session_id is not None else None
            if session is not None and rid is not None:
                conn = session.conn
                failed = conn.fail_request(
                    rid,
                    LIMIT_EXCEEDED,
                    f"response refused: {refusal.message}; raise {refusal.setting} in the "
                    "server's limits to accept it",
                )
                events = _tag(self._session_events(session, failed), conn, session.id)
                self._drain(conn)
            rid = None
        return events + http._refuse(
            _Refusal(
                refusal.http_status, refusal.message, refusal.code, request_id=rid, close=close
            )
        )

    def _post_modern(self, http: HTTPExchange, head: RequestHead, obj: Any) -> list[Event]:
        if type(obj) is not dict or "method" not in obj:
            return http._refuse(
                _Refusal(400, "Body must be a single JSON-RPC request or notification object")
            )
        if "id" not in obj:
            # A client cancels by closing its stream; no notification has state to act on.
            version, _ = single_header(head.headers, PROTOCOL_VERSION)
            modern = self.config.modern_versions
            if version is not None and modern and version not in modern:
                return http._refuse(
                    _Refusal(
                        400,
                        "Unsupported protocol version",
                        UNSUPPORTED_PROTOCOL_VERSION,
                        data={
                            "supported": list(self.config.supported_versions),
                            "requested": version,
                        },
                    )
                )
            http._send_response(202, [], b"")
            return []
        rid = obj["id"]
        if not jr.is_request_id(rid):
            return http._refuse(_Refusal(400, "id must be a string or an integer"))
        method = obj.get("method")
        json_ok, sse_ok = accepted(head.headers)
        listen = method == "subscriptions/listen"
        if listen and not sse_ok:
            return http._refuse(
                _Refusal(
                    406,
                    "Not Acceptable: subscriptions/listen needs text/event-stream",
                    request_id=rid,
                )
            )
        header_params = None
        params = obj.get("params")
        if method == "tools/call" and self.tool_header_params is not None and type(params) is dict:
            name = params.get("name")
            if isinstance(name, str):
                header_params = self.tool_header_params(name)
        try:
            check_mirrored_headers(head.headers, obj, header_params)
        except RemoteProtocolError as exc:
            return http._refuse(
                _Refusal(exc.http_status, exc.message, exc.code, request_id=rid, data=exc.data)
            )
        if self._exchanges >= self.limits.max_exchanges:
            return http._refuse(
                _Refusal(503, "Too many requests in flight", INTERNAL_ERROR, request_id=rid)
            )
        conn = ServerConnection(self.config, principal=self._principal(head))
        mode = self.response_mode
        stream = _Stream(
            conn,
            None,
            "",
            {rid},
            can_json=json_ok,
            can_sse=sse_ok and (mode != "json" or listen),
        )
        self._owners[conn] = stream
        self._exchanges += 1
        self._attach(http, stream)
        events = conn._receive_parsed(obj, wall_time=http._wall)
        self._drain(conn)
        self._prefer_sse(stream)
        return _tag(events, conn, None)

    def _prefer_sse(self, stream: _Stream) -> None:
        """ "sse" mode streams whatever was not answered at once. Only after the feed:
        a refusal the engine makes on the spot keeps its JSON body and status."""
        if self.response_mode == "sse" and stream.state == _PENDING and stream.can_sse:
            self._commit(stream)

    def _post_legacy(self, http: HTTPExchange, head: RequestHead, obj: Any) -> list[Event]:
        session_id, repeated = single_header(head.headers, SESSION_ID)
        if repeated:
            return http._refuse(_Refusal(400, "Bad Request: Mcp-Session-Id appears more than once"))
        single = type(obj) is dict
        if single and obj.get("method") == "initialize" and "id" in obj and session_id is None:
            if not jr.is_request_id(obj["id"]):
                # The id routes the answer to this response: one it cannot be
                # (an array, null, 1.5) is refused here, as inside a session.
                return http._refuse(_Refusal(400, "id must be a string or an integer"))
            return self._initialize(http, head, obj)
        if session_id is None:
            return http._refuse(_Refusal(400, "Bad Request: Missing session ID"))
        session = self._session_for(head, session_id)
        if session is None:
            return http._refuse(_Refusal(404, "Session not found"))
        problem = self._version_problem(head, session)
        if problem is not None:
            return http._refuse(problem)
        if type(obj) is list:
            if session.version != V2025_03_26:
                return http._refuse(
                    _Refusal(400, "batch arrays are not allowed in this protocol revision")
                )
            items: list[Any] = obj
        elif single:
            items = [obj]
        else:
            return http._refuse(_Refusal(400, "a JSON-RPC message must be an object"))
        request_ids: list[RequestId] = []
        for item in items:
            if type(item) is not dict or "method" not in item or "id" not in item:
                continue
            rid = item["id"]
            if not jr.is_request_id(rid):
                if single:
                    return http._refuse(_Refusal(400, "id must be a string or an integer"))
                continue
            if rid in session.by_request or rid in request_ids:
                # Never overwrite a routing slot: the first request keeps its stream.
                return http._refuse(
                    _Refusal(
                        409, f"Conflict: request id {rid!r} is already in flight", request_id=rid
                    )
                )
            request_ids.append(rid)
        conn = session.conn
        if not request_ids:
            session.capture = []
            try:
                events = conn._receive_parsed(obj, wall_time=http._wall)
                self._drain(conn)
            finally:
                captured, session.capture = session.capture, None
            events = self._session_events(session, events)
            rejected = next((e for e in events if isinstance(e, MessageRejected)), None)
            if captured:
                http._send_json(400, captured[0].payload)
            elif rejected is not None and single:
                http._send_json(400, error_body(None, rejected.code, rejected.message))
            else:
                http._send_response(202, [], b"")
            return _tag(events, conn, session.id)
        if session.attached >= self.limits.max_streams_per_session:
            return http._refuse(_Refusal(429, "Too many concurrent streams in this session"))
        stream = self._new_stream(session, set(request_ids), head, batch=not single)
        self._attach(http, stream)
        events = self._feed(session, stream, obj, http._wall)
        self._prefer_sse(stream)
        return _tag(self._session_events(session, events), conn, session.id)

    def _feed(
        self, session: _Session, stream: _Stream, obj: Any, wall_time: float | None
    ) -> list[Event]:
        """Hand a POST body (parsed) to the session; its synchronous answers land on
        `stream`."""
        session.feeding = stream
        try:
            events = session.conn._receive_parsed(obj, wall_time=wall_time)
            self._drain(session.conn)
        finally:
            session.feeding = None
        if not stream.pending and stream.state != _DONE:
            self._finish(stream)
        return events

    def _new_stream(
        self,
        session: _Session,
        pending: set[RequestId],
        head: RequestHead,
        *,
        batch: bool = False,
        is_init: bool = False,
    ) -> _Stream:
        json_ok, sse_ok = accepted(head.headers)
        stream_id = str(session.next_stream)
        session.next_stream += 1
        stream = _Stream(
            session.conn,
            session,
            stream_id,
            pending,
            can_json=json_ok,
            can_sse=sse_ok and self.response_mode != "json",
            batch=batch,
            is_init=is_init,
        )
        session.streams[stream_id] = stream
        for rid in pending:
            session.by_request[rid] = stream
        return stream

    def _initialize(
        self, http: HTTPExchange, head: RequestHead, obj: dict[str, Any]
    ) -> list[Event]:
        if len(self._sessions) >= self.limits.max_sessions:
            return http._refuse(
                _Refusal(503, "Too many open sessions", INTERNAL_ERROR, request_id=obj["id"])
            )
        session_id = self._new_session_id()
        if not isinstance(session_id, str) or not is_visible_ascii(session_id):
            raise LocalProtocolError("new_session_id() must return visible ASCII (0x21-0x7E)")
        if session_id in self._sessions:
            raise LocalProtocolError("new_session_id() returned an id already in use")
        principal = self._principal(head)
        conn = ServerConnection(self.config, principal=principal)
        session = _Session(session_id, conn, principal, self.limits.max_backlog_messages)
        self._sessions[session_id] = session  # provisional until initialize succeeds
        self._owners[conn] = session
        stream = self._new_stream(session, {obj["id"]}, head, is_init=True)
        self._attach(http, stream)
        events = self._feed(session, stream, obj, http._wall)
        if conn.state is State.READY and conn.era is Era.LEGACY and conn.protocol_version:
            session.version = conn.protocol_version
        else:
            # Refused (bad params, or a server without legacy revisions): no session.
            self._sessions.pop(session_id, None)
            self._owners.pop(conn, None)
            self._idle.pop(session_id, None)
            session.closed = True
            if stream.http is not None:
                self._release(stream)
            return _tag(events, conn, None)
        return _tag(self._session_events(session, events), conn, session_id)

    def _session_events(self, session: _Session, events: list[Event]) -> list[Event]:
        """React to what the session's connection reported: cancels end streams."""
        for event in events:
            if isinstance(event, RequestCancelled):
                self._cancelled(session, event.request_id)
            elif isinstance(event, ConnectionClosed):
                # The engine gave up on the session (it already reported how): end it here.
                self._end_session(session, event.reason)
        return events

    def _cancelled(self, session: _Session, rid: RequestId) -> None:
        stream = session.by_request.pop(rid, None)
        if stream is None:
            return
        stream.pending.discard(rid)
        if not stream.pending:
            self._finish(stream)

    # -------------------------------------------------------------- GET/DELETE

    def _legacy_target(self, http: HTTPExchange, head: RequestHead) -> _Session | list[Event]:
        """The session a GET or DELETE names, or the refusal already sent."""
        version, _ = single_header(head.headers, PROTOCOL_VERSION)
        if classify_era(None, version) is Era.MODERN or not self.config.legacy_versions:
            # 2026-07-28 has no GET stream and no sessions to delete.
            return http._refuse(
                _Refusal(405, "Method Not Allowed", jsonrpc=False, headers=(("allow", "POST"),))
            )
        session_id, repeated = single_header(head.headers, SESSION_ID)
        if repeated:
            return http._refuse(_Refusal(400, "Bad Request: Mcp-Session-Id appears more than once"))
        if session_id is None:
            return http._refuse(_Refusal(400, "Bad Request: Missing session ID"))
        session = self._session_for(head, session_id)
        if session is None:
            return http._refuse(_Refusal(404, "Session not found"))
        problem = self._version_problem(head, session)
        if problem is not None:
            return http._refuse(problem)
        return session

    def _get(self, http: HTTPExchange, head: RequestHead) -> list[Event]:
        target = self._legacy_target(http, head)
        if not isinstance(target, _Session):
            return target
        session = target
        _, sse_ok = accepted(head.headers)
        if not sse_ok:
            return http._refuse(
                _Refusal(406, "Not Acceptable: Client must accept text/event-stream")
            )
        last_event_id, _ = single_header(head.headers, LAST_EVENT_ID)
        if last_event_id is not None and self._store is not None:
            return self._resume(http, session, last_event_id)
        if session.get_stream is not None:
            return http._refuse(
                _Refusal(409, "Conflict: Only one SSE stream is allowed per session")
            )
        if session.attached >= self.limits.max_streams_per_session:
            return http._refuse(_Refusal(429, "Too many concurrent streams in this session"))
        stream = self._get_stream(session)
        self._attach(http, stream)
        self._commit(stream)
        backlog = list(session.backlog)
        session.backlog.clear()
        for payload, event_id in backlog:
            http._send_data(sse_message(payload, event_id))
        return []

    def _get_stream(self, session: _Session) -> _Stream:
        stream = _Stream(
            session.conn, session, GET_STREAM_ID, set(), can_json=False, can_sse=True, is_get=True
        )
        session.get_stream = stream
        return stream

    def _resume(self, http: HTTPExchange, session: _Session, last_event_id: str) -> list[Event]:
        assert self._store is not None
        replay = self._store.replay_after(session.id, last_event_id)
        if replay is None:
            return http._refuse(_Refusal(400, "Bad Request: unknown Last-Event-ID"))
        stream_id, events = replay
        found = session.get_stream if stream_id == GET_STREAM_ID else session.streams.get(stream_id)
        if found is None and stream_id != GET_STREAM_ID:
            # The stream already ended: hand over what it said, then end too.
            http._start_sse(self._sse_headers(session))
            for event_id, payload in events:
                http._send_data(sse_message(payload, event_id))
            http._end_response()
            return []
        if found is not None and found.http is not None:
            # The client reconnected before we saw the old connection go: move over.
            old_http = found.http
            self._release(found)
            old_http._end_response()
        if session.attached >= self.limits.max_streams_per_session:
            return http._refuse(_Refusal(429, "Too many concurrent streams in this session"))
        if stream_id == GET_STREAM_ID:
            stream = self._get_stream(session)
            session.backlog.clear()  # stored, hence in the replay
        else:
            assert found is not None
            stream = found
        self._attach(http, stream)
        stream.state = _STREAMING
        http._start_sse(self._sse_headers(session))
        for event_id, payload in events:
            http._send_data(sse_message(payload, event_id))
        return []

    def _delete(self, http: HTTPExchange, head: RequestHead) -> list[Event]:
        if not self.allow_delete:
            return http._refuse(
                _Refusal(
                    405,
                    "Method Not Allowed: session termination is not supported",
                    headers=(self._allow(),),
                )
            )
        target = self._legacy_target(http, head)
        if not isinstance(target, _Session):
            return target
        events = self._end_session(target, "session terminated by the client")
        http._send_response(200, [], b"")
        return events

    # ---------------------------------------------------------------- routing

    def _drain(self, conn: ServerConnection) -> None:
        owner = self._owners.get(conn)
        messages = conn.messages_to_send()
        if owner is None:
            return  # its exchange or session is over: nothing has a wire to go on
        if isinstance(owner, _Stream):
            for message in messages:
                self._deliver(owner, message)
            return
        for message in messages:
            self._route_session(owner, message)

    def _route_session(self, session: _Session, m: OutgoingMessage) -> None:
        if session.closed:
            return
        if m.kind in ("result", "error"):
            if m.request_id is not None:
                target = session.by_request.get(m.request_id)
                if target is not None:
                    self._deliver(target, m)
                return  # its stream is gone (cancelled): a response must go nowhere else
            if session.capture is not None:
                session.capture.append(m)
                return
            if session.feeding is not None:
                self._deliver(session.feeding, m)
                return
        else:
            rel = m.related_request_id
            target = session.by_request.get(rel) if rel is not None else None
            if target is not None:
                if target.can_sse:
                    self._deliver(target, m)
                    return
                if m.kind == "notification":
                    return  # a JSON response has no place for it
        self._deliver_get(session, m)

    def _deliver_get(self, session: _Session, m: OutgoingMessage) -> None:
        event_id = self._store_event(session, GET_STREAM_ID, m.payload)
        stream = session.get_stream
        if stream is not None and stream.http is not None:
            stream.http._send_data(sse_message(m.payload, event_id))
        else:
            session.backlog.append((m.payload, event_id))

    def _deliver(self, stream: _Stream, m: OutgoingMessage) -> None:
        if stream.state == _DONE:
            return
        response = m.kind in ("result", "error")
        if response and m.request_id in stream.pending:
            stream.pending.discard(m.request_id)
            if stream.session is not None:
                stream.session.by_request.pop(m.request_id, None)
            if stream.is_init:
                stream.init_ok = m.kind == "result"
        # While its POST is still being fed, more answers may follow (a batch).
        feeding = stream.session is not None and stream.session.feeding is stream
        done = not stream.pending and not feeding
        if stream.state == _PENDING:
            if response and (stream.batch or done or feeding):
                stream.parts.append(m)  # answers wait, to go out as one JSON body
                if done:
                    self._finish(stream)
                return
            if not stream.can_sse:
                return  # nothing but the answer fits this response
            self._commit(stream)
        self._write(stream, m.payload)
        if done:
            self._finish(stream)

    def _commit(self, stream: _Stream) -> None:
        """Turn a pending response into an SSE stream (priming it when resumable)."""
        stream.state = _STREAMING
        http = stream.http
        session = stream.session
        if http is not None:
            http._start_sse(self._sse_headers(session, stream))
        if session is not None and session.version == V2025_11_25 and self._store is not None:
            event_id = self._store_event(session, stream.stream_id, None)
            if http is not None:
                http._send_data(encode_event("", id=event_id, retry=self.retry_ms))
        parts, stream.parts = stream.parts, []
        for part in parts:
            self._write(stream, part.payload)

    def _sse_headers(self, session: _Session | None, stream: _Stream | None = None) -> Headers:
        headers = [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache, no-transform"),
            ("x-accel-buffering", "no"),
        ]
        if session is not None and not (
            stream is not None and stream.is_init and not stream.init_ok
        ):
            headers.append((SESSION_ID, session.id))
        return headers

    def _write(self, stream: _Stream, payload: bytes) -> None:
        event_id = None
        if stream.session is not None:
            event_id = self._store_event(stream.session, stream.stream_id, payload)
        if stream.http is not None:
            stream.http._send_data(sse_message(payload, event_id))

    def _store_event(self, session: _Session, stream_id: str, payload: bytes | None) -> str | None:
        store = self._store
        if store is None:
            return None
        event_id = store.store_event(session.id, stream_id, payload)
        if not event_id.isascii() or any(c in event_id for c in "\r\n\x00"):
            raise LocalProtocolError("event store returned an id SSE cannot carry")
        return event_id

    def _finish(self, stream: _Stream) -> None:
        """Every request of the stream is answered (or cancelled): end the response."""
        if stream.state == _DONE:
            return
        if stream.state == _PENDING and stream.parts and not stream.can_json:
            self._commit(stream)  # the answers go out as SSE events after all
        state = stream.state
        stream.state = _DONE
        session = stream.session
        http = stream.http
        self._release(stream)
        if session is not None:
            session.streams.pop(stream.stream_id, None)
            for rid in stream.pending:
                session.by_request.pop(rid, None)
        else:
            self._owners.pop(stream.conn, None)
            self._exchanges -= 1
        if http is None:
            return
        if state == _STREAMING:
            http._end_response()
            return
        parts = stream.parts
        if not parts:
            http._send_response(202, self._session_header(stream), b"")  # all cancelled
            return
        if stream.batch:
            body = b"[" + b",".join(p.payload for p in parts) + b"]"
        else:
            body = parts[0].payload
        status = 200
        use_table = session is None or (stream.is_init and not stream.init_ok)
        if use_table and not stream.batch and parts[0].kind == "error":
            status = ERROR_STATUS.get(_error_code(parts[0].payload) or 0, 200)
        http._send_json(status, body, self._session_header(stream))

    def _session_header(self, stream: _Stream) -> Headers:
        session = stream.session
        if session is None or (stream.is_init and not stream.init_ok):
            return []
        return [(SESSION_ID, session.id)]

    # ------------------------------------------------------ attach and detach

    def _attach(self, http: HTTPExchange, stream: _Stream) -> None:
        stream.http = http
        http._stream = stream
        http._started = http._stamp()
        session = stream.session
        if session is not None:
            session.attached += 1
            self._idle.pop(session.id, None)

    def _release(self, stream: _Stream) -> None:
        http = stream.http
        if http is None:
            return
        stream.http = None
        if http._stream is stream:
            http._stream = None
        session = stream.session
        if session is not None:
            session.attached -= 1
            if session.attached == 0 and not session.closed:
                self._idle[session.id] = http._stamp()

    def _lost(self, stream: _Stream, reason: str) -> list[Event]:
        """The TCP connection under a stream went away."""
        self._release(stream)
        session = stream.session
        if session is None:
            return self._abandon(stream, reason)
        if stream.is_get and session.get_stream is stream:
            session.get_stream = None
        # A legacy POST stream lives on: the client may resume it, and its answer is
        # still stored (a dropped connection is not a cancellation in this era).
        return []

    def _abandon(self, stream: _Stream, reason: str) -> list[Event]:
        """2026-07-28: a request whose stream closed is cancelled."""
        if stream.state == _DONE:
            return []
        stream.state = _DONE
        self._owners.pop(stream.conn, None)
        self._exchanges -= 1
        events: list[Event] = []
        for rid in stream.pending:
            events += stream.conn.abandon_request(rid, reason)
        return _tag(events, stream.conn, None)

    def _end_session(self, session: _Session, reason: str) -> list[Event]:
        if session.closed:
            return []
        session.closed = True
        self._sessions.pop(session.id, None)
        self._owners.pop(session.conn, None)
        self._idle.pop(session.id, None)
        streams = list(session.streams.values())
        if session.get_stream is not None:
            streams.append(session.get_stream)
        for stream in streams:
            http = stream.http
            state = stream.state
            stream.state = _DONE
            self._release(stream)
            if http is None:
                continue
            if state == _STREAMING:
                http._end_response()
            else:
                http._send_json(404, error_body(None, INVALID_REQUEST, "Session terminated"))
        session.streams.clear()
        session.by_request.clear()
        session.get_stream = None
        session.backlog.clear()
        if self._store is not None:
            self._store.forget_session(session.id)
        return _tag(session.conn.close(reason), session.conn, session.id)


# ========================================================================= exchange

_NOT_STARTED, _SENDING, _ENDED = (
    ResponseState.NOT_STARTED,
    ResponseState.SENDING,
    ResponseState.ENDED,
)


class HTTPExchange:
    """One HTTP request and its response, at the request level: no HTTP/1.1 framing.

    The entry point for a server that has already parsed HTTP (an ASGI server, an
    HTTP/2 stack): the request goes in as a `RequestHead` and body chunks, the response
    comes out as a status with headers and then body bytes (a JSON body, or an SSE
    stream that stays open). `HTTPServerConnection` runs one of these per request over
    h11, so both ways in share one code path::

        ex = endpoint.new_exchange()
        events = ex.receive_head(RequestHead(method, target, headers, peer=ip), now=clock())
        for chunk in body:                    # stop reading once `ex.wants_body` is False
            events += ex.receive_body(chunk)  # (refused from the head, or too large)
        events += ex.receive_end(now=clock(), wall_time=time())
        ...act on the events, as for HTTPServerConnection; endpoint.pump() also
        returns the exchanges (not only the connections) that have output...
        start(*ex.response) once it is set, then send ex.data_to_send() until
        ex.finished; tick(now) at next_deadline(); close() if the client goes away,
        and drop the response (do not end it) if `closed` comes first.

    `response` is `(status, headers)` (names lower-case); `close_connection` says the
    request's body was left unread or untrusted, so an HTTP/1.1 connection under it
    should close after the response. Passing `now=` makes the SSE and keep-alive timers
    exact; without it they start at the next `tick`.
    """

    def __init__(
        self, endpoint: HTTPServerEndpoint, *, _wire: HTTPServerConnection | None = None
    ) -> None:
        self.endpoint = endpoint
        self._wire = _wire
        self._head: RequestHead | None = None
        self._body: list[bytes] = []
        self._body_len = 0
        self._declared = 0  # the Content-Length the head declared (0: none)
        self._dropping: Ends | None = None  # a body over the limit, read and not kept
        self._refusal: _Refusal | None = None
        self._responded = False
        self._complete_seen = False
        self._stream: _Stream | None = None
        self._closed = False
        self._clock: float | None = None
        self._wall: float | None = None
        self._started = _NAN
        self._last_write = _NAN
        # Standalone only (under h11 the connection holds the output and the state).
        self._state = _NOT_STARTED
        self._response: tuple[int, Headers] | None = None
        self._close_connection = False
        self._out: list[bytes] = []
        self._out_len = 0
        self._deferred: list[Event] = []

    # ----------------------------------------------------------------- public

    @property
    def head(self) -> RequestHead | None:
        """The request head as the endpoint judged it (`view` filled in), once received."""
        return self._head

    @property
    def response(self) -> tuple[int, Headers] | None:
        """`(status, headers)` of the response, once decided; None before."""
        return self._response

    @property
    def close_connection(self) -> bool:
        """True when the connection under this exchange should not carry another request."""
        return self._close_connection

    @property
    def finished(self) -> bool:
        """True when the response is complete: after `data_to_send()`, nothing follows.
        A response cut short (`closed` first) never is: the server must drop it, not end
        it as if it were whole."""
        return self._state == _ENDED

    @property
    def closed(self) -> bool:
        """True once `close()` was called or the client counted as not reading."""
        return self._closed

    @property
    def wants_body(self) -> bool:
        """False once the response is decided before the body is in (a refusal): the
        rest of the body need not be read."""
        return not self._responded and self._refusal is None and not self._complete_seen

    def data_to_send(self) -> bytes:
        """The response body bytes queued so far."""
        self.endpoint._ready.pop(self, None)
        if not self._out:
            return b""
        data = self._out[0] if len(self._out) == 1 else b"".join(self._out)
        self._out.clear()
        self._out_len = 0
        return data

    def receive_head(self, head: RequestHead, *, now: float | None = None) -> list[Event]:
        """The request line and headers: checked at once (Host/Origin, path, method, media
        types, a declared body too large), so a refusal needs no body."""
        return self._call(now, None, lambda: self._begin(head))

    def receive_body(self, data: bytes, *, now: float | None = None) -> list[Event]:
        """A chunk of the request body (kept as given; joined once at the end)."""
        return self._call(now, None, lambda: self._body_chunk(data))

    def receive_end(
        self, *, now: float | None = None, wall_time: float | None = None
    ) -> list[Event]:
        """The body is complete: the request becomes MCP work. `wall_time` (seconds since
        the epoch) judges the expiry of a sealed 2026-07-28 `requestState`."""
        return self._call(now, wall_time, self._end_of_request)

    def close(self, reason: str = "client went away") -> list[Event]:
        """The client is gone: settle what rode on this request (a 2026-07-28 request is
        cancelled; a legacy stream stays resumable)."""
        events, self._deferred = self._deferred, []
        return events + self._close(reason)

    def tick(self, now: float) -> list[Event]:
        """Run the timers: SSE commit and keep-alive comments."""
        self._clock = now
        try:
            self._stamp_unset(now)
            events, self._deferred = self._deferred, []
            if not self._closed:
                self._run_timers(now)
            events += self._deferred
            self._deferred = []
            return events
        finally:
            self._clock = None

    def next_deadline(self) -> float | None:
        """When `tick` next has work; a value in the past means now; None: never."""
        if self._deferred:
            return _NEVER
        if self._closed:
            return None
        return self._deadline()

    # ------------------------------------------------------------------ input

    def _call(
        self, now: float | None, wall: float | None, step: Callable[[], list[Event]]
    ) -> list[Event]:
        self._clock = now
        self._wall = wall
        try:
            events, self._deferred = self._deferred, []
            if not self._closed:
                events += step()
            events += self._deferred
            self._deferred = []
            return events
        finally:
            self._clock = None
            self._wall = None

    def _begin(self, head: RequestHead) -> list[Event]:
        if self._head is not None:
            raise LocalProtocolError("receive_head() was already called for this exchange")
        endpoint = self.endpoint
        self._head = head = endpoint._resolve(head)
        refusal = endpoint._check_head(head)
        if refusal is None:
            length, _ = single_header(head.headers, "content-length")
            declared = self._declared = (
                int(length) if length is not None and length.isdigit() else 0
            )
            if declared > endpoint.max_body_bytes:
                if declared > 2 * endpoint.max_body_bytes:
                    # Not worth reading to its end: refuse now (the connection closes).
                    return self._refuse_declared()
                self._dropping = Ends(self._window())
        if refusal is not None and refusal.close:
            return self._refuse(refusal)
        self._refusal = refusal
        return []

    def _body_chunk(self, data: bytes) -> list[Event]:
        if self._responded or self._refusal is not None:
            return []
        dropping = self._dropping
        limit = self.endpoint.max_body_bytes
        if dropping is None:
            self._body_len += len(data)
            if self._body_len <= limit:
                self._body.append(data)
                return []
            # Over the limit: read on to the end (so the client, done sending, reads the
            # 413), keeping only the two ends, which may show the request's id.
            dropping = self._dropping = Ends(self._window())
            for piece in self._body:
                dropping.add(piece)
            self._body = []
        dropping.add(data)
        if dropping.size > 2 * limit:
            return self._refuse_body(dropping, dropping.size, close=True)
        return []

    def _window(self) -> int:
        return min(jr.PEEK_BYTES, self.endpoint.max_body_bytes // 2)

    def _refuse_declared(self) -> list[Event]:
        """413 at the head, for a declared Content-Length over the limit, without
        reading the body; the connection under it closes."""
        return self._refuse_body(Ends(0), self._declared, close=True)

    def _refuse_body(self, ends: Ends, size: int, *, close: bool) -> list[Event]:
        """413 for a body over the limit. Closing, the last bytes seen are not the
        body's end, so only its start is read for the id."""
        self._dropping = None
        endpoint = self.endpoint
        head = self._head
        assert head is not None
        refusal = jr.too_big(
            size,
            endpoint.max_body_bytes,
            ends.head,
            b"" if close else ends.tail,
            endpoint._body_setting,
            endpoint.config.limits,
        )
        return endpoint._refuse_over_limit(self, head, refusal, close=close)

    def _end_of_request(self) -> list[Event]:
        if self._head is None:
            raise LocalProtocolError("receive_end() before receive_head()")
        if self._complete_seen:
            raise LocalProtocolError("receive_end() was already called for this exchange")
        self._complete_seen = True
        return [] if self._responded else self._complete()

    def _complete(self) -> list[Event]:
        head = self._head
        assert head is not None
        refusal, self._refusal = self._refusal, None
        if refusal is not None:
            return self._refuse(refusal)
        if self._dropping is not None:
            return self._refuse_body(self._dropping, self._dropping.size, close=False)
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        self._body = []
        endpoint = self.endpoint
        if head.method == "POST":
            return endpoint._post(self, head, body)
        if head.method == "GET":
            return endpoint._get(self, head)
        return endpoint._delete(self, head)

    def _close(self, reason: str) -> list[Event]:
        if self._closed and self._stream is None:
            return []
        self._closed = True
        stream = self._stream
        if stream is None:
            return []
        return self.endpoint._lost(stream, reason)

    # ----------------------------------------------------------------- output

    def _refuse(self, refusal: _Refusal) -> list[Event]:
        head = self._head
        headers = list(refusal.headers)
        if refusal.jsonrpc:
            body = error_body(refusal.request_id, refusal.code, refusal.message, refusal.data)
            headers.append(("content-type", JSON))
        else:
            body = refusal.message.encode("utf-8") if refusal.status != 405 else b""
            if body:
                headers.append(("content-type", "text/plain; charset=utf-8"))
        self._send_response(refusal.status, headers, body, close=refusal.close)
        return [
            HTTPRequestRejected(
                head.method if head else "",
                head.target if head else "",
                refusal.status,
                refusal.message,
            )
        ]

    def _send_json(self, status: int, body: bytes, headers: Headers | None = None) -> None:
        self._send_response(status, [("content-type", JSON), *(headers or ())], body)

    def _send_response(
        self, status: int, headers: Headers, body: bytes, *, close: bool = False
    ) -> None:
        sink = self._wire or self
        if self._responded or not sink._can_respond():
            return
        self._responded = True
        sink._respond(status, [("content-length", str(len(body))), *headers], body, close)

    def _start_sse(self, headers: Headers) -> None:
        sink = self._wire or self
        if self._responded or not sink._can_start():
            return
        self._responded = True
        sink._start(200, headers)
        self._last_write = self._stamp()

    def _send_data(self, data: bytes) -> None:
        sink = self._wire or self
        if self._closed or not sink._can_write():
            return
        sink._write(data)
        self._last_write = self._stamp()
        if sink._backlog() > self.endpoint.max_output_bytes:
            # The client is not reading: drop it rather than buffer without bound.
            sink._overflow("client is not reading")

    def _end_response(self) -> None:
        sink = self._wire or self
        if sink._can_end():
            sink._end()

    # The response sink of a standalone exchange; `HTTPServerConnection` is the other
    # one (the same eight methods, over h11).

    def _can_respond(self) -> bool:
        return self._state == _NOT_STARTED and not self._closed

    def _respond(self, status: int, headers: Headers, body: bytes, close: bool) -> None:
        self._response = (status, headers)
        self._close_connection = close
        if body:
            self._write(body)
        self._state = _ENDED
        self.endpoint._ready[self] = None

    _can_start = _can_respond

    def _start(self, status: int, headers: Headers) -> None:
        self._response = (status, headers)
        self._state = _SENDING
        self.endpoint._ready[self] = None

    def _can_write(self) -> bool:
        return self._state == _SENDING

    def _write(self, data: bytes) -> None:
        self._out.append(data)
        self._out_len += len(data)
        self.endpoint._ready[self] = None

    _can_end = _can_write

    def _end(self) -> None:
        self._state = _ENDED
        self.endpoint._ready[self] = None

    def _backlog(self) -> int:
        return self._out_len

    def _overflow(self, reason: str) -> None:
        self._deferred += self._close(reason)
        self._out.clear()
        self._out_len = 0
        self.endpoint._ready[self] = None  # so the adapter looks (and ticks)

    # ------------------------------------------------------------------ time

    def _stamp(self) -> float:
        wire = self._wire
        if wire is not None:
            return wire._stamp()
        return self._clock if self._clock is not None else _NAN

    def _stamp_unset(self, now: float) -> None:
        if math.isnan(self._started):
            self._started = now
        if math.isnan(self._last_write):
            self._last_write = now

    def _run_timers(self, now: float) -> None:
        limits = self.endpoint.limits
        stream = self._stream
        if stream is not None and stream.state == _PENDING:
            if (
                limits.sse_after is not None
                and stream.can_sse
                and self._started + limits.sse_after <= now
            ):
                self.endpoint._commit(stream)
        elif stream is not None and stream.state == _STREAMING:
            interval = limits.keepalive_interval
            if interval is not None and self._last_write + interval <= now:
                self._send_data(_KEEPALIVE)

    def _deadline(self) -> float | None:
        limits = self.endpoint.limits
        stream = self._stream
        if stream is None:
            return None
        if stream.state == _PENDING:
            return _deadline(self._started, limits.sse_after) if stream.can_sse else None
        if stream.state == _STREAMING:
            return _deadline(self._last_write, limits.keepalive_interval)
        return None


# ======================================================================= connection

_IDLE, _RECEIVING, _RESPONDING = 0, 1, 2


class HTTPServerConnection:
    """One TCP connection of the HTTP server (an h11 server connection inside).

    Feed bytes with `receive_data` (`b""` at end of stream), write `data_to_send()`,
    and close the socket once `closed` is true and the output is written. `tick(now)`
    runs the timers; `next_deadline()` says when. Passing `now=` to `receive_data`
    makes timers exact; without it they start at the next `tick` (and
    `next_deadline()` asks for one at once). `peer` is the client's address (it decides
    whether proxy headers are believed, see `TrustedProxies`) and `scheme` how it
    reached us (`https` behind TLS).

    This layer owns what is HTTP/1.1 about a request: framing, the head's size and
    line endings, 100-continue, pipelining, the header and idle timeouts. Each request
    is an `HTTPExchange`, which owns the rest.
    """

    def __init__(
        self,
        endpoint: HTTPServerEndpoint,
        *,
        now: float | None = None,
        peer: str | None = None,
        scheme: str = "http",
    ) -> None:
        self.endpoint = endpoint
        self.peer = peer
        self.scheme = scheme
        self._h11 = h11.Connection(
            h11.SERVER, max_incomplete_event_size=endpoint.limits.max_header_bytes
        )
        # Input waits here until h11 asks for more (`_feed`), so h11 never holds more
        # than one slice beyond what it is parsing; each head is measured on its way
        # in (`_scanner`), starting with what h11 kept of the bytes before it.
        self._input = bytearray()
        self._scanner: HeadScanner | None = HeadScanner(endpoint.limits.max_header_bytes)
        self._unscanned = b""
        self._out: list[bytes] = []
        self._out_len = 0
        self._closed = False
        self._exchange: HTTPExchange | None = None
        self._deferred: list[Event] = []
        self._input_pending = False
        self._processing = False
        self._paused_bytes = 0
        self._clock: float | None = now
        self._wall: float | None = None
        self._phase = _IDLE
        self._since = self._stamp()
        self._clock = None

    # ----------------------------------------------------------------- public

    @property
    def closed(self) -> bool:
        """True when the socket should be closed (after writing `data_to_send()`)."""
        return self._closed

    def data_to_send(self) -> bytes:
        """Everything queued for the socket."""
        self.endpoint._ready.pop(self, None)
        if not self._out:
            return b""
        data = b"".join(self._out)
        self._out.clear()
        self._out_len = 0
        return data

    def receive_data(
        self, data: bytes, *, now: float | None = None, wall_time: float | None = None
    ) -> list[Event]:
        """Feed bytes from the socket; `b""` means the client closed it.

        `now` is the clock `tick()` gets (monotonic is best): it starts the timers.
        `wall_time` (seconds since the epoch) goes to the MCP connection, which
        needs it to judge the expiry of a sealed 2026-07-28 `requestState`: with
        `request_state_keys` configured, bytes without it are refused at once
        (`LocalProtocolError`, nothing read).
        """
        if wall_time is None and data and self.endpoint.config.request_state_sealer is not None:
            missing_wall_time()
        self._clock = now
        self._wall = wall_time
        try:
            events, self._deferred = self._deferred, []
            if self._closed:
                return events
            if not data:
                return events + self.close("client closed the connection")
            limits = self.endpoint.limits
            if self._phase == _RESPONDING:
                # Only a pipelined request (or garbage) can arrive now; it waits
                # unparsed, so bound it here.
                self._paused_bytes += len(data)
                if self._paused_bytes > limits.max_header_bytes + self.endpoint.max_body_bytes:
                    return events + self.close("client sent too much while a response was open")
            if self._phase == _IDLE:
                self._set_phase(_RECEIVING)
            self._input += data
            return events + self._process()
        finally:
            self._clock = None
            self._wall = None

    def close(self, reason: str = "connection closed") -> list[Event]:
        """The socket is gone (or the adapter gave up on it): settle what rode on it."""
        exchange = self._exchange
        if self._closed and (exchange is None or exchange._stream is None):
            return []
        self._closed = True
        if exchange is None:
            return []
        return exchange._close(reason)

    def tick(self, now: float) -> list[Event]:
        """Run the timers: header and idle timeouts, SSE commit, keep-alive comments."""
        self._clock = now
        try:
            if math.isnan(self._since):
                self._since = now
            exchange = self._exchange
            if exchange is not None:
                exchange._stamp_unset(now)
            events, self._deferred = self._deferred, []
            if self._input_pending and not self._closed:
                self._input_pending = False
                events += self._process()
            if self._closed:
                return events
            limits = self.endpoint.limits
            if self._phase == _IDLE:
                if limits.idle_timeout is not None and self._since + limits.idle_timeout <= now:
                    self._closed = True
            elif self._phase == _RECEIVING:
                if limits.header_timeout is not None and self._since + limits.header_timeout <= now:
                    events += self._refuse(
                        _Refusal(408, "Request Timeout", jsonrpc=False, close=True)
                    )
            elif self._exchange is not None:
                self._exchange._run_timers(now)
            events += self._deferred
            self._deferred = []
            return events
        finally:
            self._clock = None

    def next_deadline(self) -> float | None:
        """When `tick` next has work; a value in the past means now; None: never."""
        if self._deferred or (self._input_pending and not self._closed):
            return _NEVER
        if self._closed:
            return None
        limits = self.endpoint.limits
        if self._phase == _IDLE:
            return _deadline(self._since, limits.idle_timeout)
        if self._phase == _RECEIVING:
            return _deadline(self._since, limits.header_timeout)
        exchange = self._exchange
        return exchange._deadline() if exchange is not None else None

    # ------------------------------------------------------------------ input

    def _process(self) -> list[Event]:
        events: list[Event] = []
        self._processing = True
        try:
            while not self._closed:
                if self._unscanned:
                    leftover, self._unscanned = self._unscanned, b""
                    if not self._scan(leftover, events):
                        break
                try:
                    event = self._h11.next_event()
                except h11.RemoteProtocolError as exc:
                    status = exc.error_status_hint
                    if status == 431:
                        message = "Request header fields too large"
                    else:  # h11 hints 501 for a transfer coding it does not implement
                        message = f"{reason_phrase(status).decode('ascii')}: {exc}"
                    events += self._protocol_error(status, message)
                    break
                if event is h11.NEED_DATA:
                    if self._feed(events):
                        continue
                    break
                if event is h11.PAUSED:
                    break
                if isinstance(event, h11.Request):
                    events += self._on_head(event)
                elif isinstance(event, h11.Data):
                    events += self._on_body(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    events += self._on_complete()
                elif isinstance(event, h11.ConnectionClosed):
                    events += self.close("client closed the connection")
                    break
        finally:
            self._processing = False
        return events

    def _feed(self, events: list[Event]) -> bool:
        """Hand h11 the next slice of input; False when there is none, or when the
        head it carries was refused.

        Slices, and only when h11 asks: so whatever h11 holds unparsed when a
        message ends (the start of the next head) is at most one slice, and reading
        it back for the scanner costs no more.
        """
        data = self._input
        if not data:
            return False
        chunk = bytes(data[:_FEED])
        del data[:_FEED]
        if not self._scan(chunk, events):
            return False
        self._h11.receive_data(chunk)
        return True

    def _scan(self, data: bytes, events: list[Event]) -> bool:
        """Measure the head these bytes belong to, if one is arriving; False when it
        is refused (the connection then closes after the answer)."""
        scanner = self._scanner
        if scanner is None:
            return True
        try:
            if scanner.feed(data):
                self._scanner = None  # the head ended within the limit
        except RemoteProtocolError as exc:
            events += self._protocol_error(exc.http_status, exc.message)
            return False
        return True

    def _protocol_error(self, status: int, message: str) -> list[Event]:
        """Malformed input: answer if a response can still go out, and close."""
        events: list[Event] = []
        exchange = self._exchange
        responded = exchange is not None and exchange._responded
        if not responded and self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            events += self._refuse(_Refusal(status, message, jsonrpc=False, close=True))
        events += self.close("malformed HTTP")
        return events

    def _refuse(self, refusal: _Refusal) -> list[Event]:
        """A refusal of the connection's own (a timeout, malformed HTTP), possibly before
        any head: it goes out through the current exchange, or a head-less one."""
        exchange = self._exchange
        if exchange is None:
            exchange = self._exchange = HTTPExchange(self.endpoint, _wire=self)
        return exchange._refuse(refusal)

    def _on_head(self, request: h11.Request) -> list[Event]:
        self._set_phase(_RECEIVING)
        self._paused_bytes = 0
        head = RequestHead(
            request.method.decode("latin-1"),
            request.target.decode("latin-1"),
            decode_headers(request.headers),
            peer=self.peer,
            scheme=self.scheme,
        )
        exchange = self._exchange = HTTPExchange(self.endpoint, _wire=self)
        self._since = self._stamp()  # the head is in: the timer now watches the body
        problem = _framing_problem(request)
        if problem is not None:
            # Framing another parser on the path (a proxy) may have read otherwise:
            # answer and close, so no byte after this head is ever read as a request.
            exchange._head = head
            return exchange._refuse(
                _Refusal(400, f"Bad Request: {problem}", jsonrpc=False, close=True)
            )
        events = exchange._begin(head)
        waiting = self._h11.they_are_waiting_for_100_continue
        if waiting and exchange._dropping is not None:
            # Over the limit, and its body is not sent before we say 100: refuse and close.
            return events + exchange._refuse_declared()
        if exchange._refusal is None and not exchange._responded and waiting:
            self._emit(self._h11.send(h11.InformationalResponse(status_code=100, headers=[])))
        return events

    def _on_body(self, data: bytes) -> list[Event]:
        exchange = self._exchange
        assert exchange is not None
        if exchange._responded or exchange._refusal is not None:
            return []
        self._since = self._stamp()  # each chunk restarts the body timer
        return exchange._body_chunk(data)

    def _on_complete(self) -> list[Event]:
        self._set_phase(_RESPONDING)
        exchange = self._exchange
        assert exchange is not None
        exchange._complete_seen = True
        if exchange._responded:
            self._after_response()
            return []
        exchange._wall = self._wall
        try:
            return exchange._complete()
        finally:
            exchange._wall = None

    # ----------------------------------------------------------------- output
    # The response sink `HTTPExchange` writes through (see its standalone one).

    def _can_respond(self) -> bool:
        return self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE)

    def _respond(self, status: int, headers: Headers, body: bytes, close: bool) -> None:
        if close:
            headers.append(("connection", "close"))
        try:
            self._emit(
                self._h11.send(
                    h11.Response(status_code=status, headers=headers, reason=reason_phrase(status))
                )
            )
            if body:
                self._emit(self._h11.send(h11.Data(data=body)))
            self._emit(self._h11.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:
            self._closed = True
            return
        self._after_response()

    def _can_start(self) -> bool:
        return self._h11.our_state is h11.SEND_RESPONSE

    def _start(self, status: int, headers: Headers) -> None:
        self._emit(
            self._h11.send(
                h11.Response(status_code=status, headers=headers, reason=reason_phrase(status))
            )
        )

    def _can_write(self) -> bool:
        return not self._closed and self._h11.our_state is h11.SEND_BODY

    def _write(self, data: bytes) -> None:
        self._emit(self._h11.send(h11.Data(data=data)))

    def _can_end(self) -> bool:
        return self._h11.our_state is h11.SEND_BODY

    def _end(self) -> None:
        try:
            self._emit(self._h11.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:
            self._closed = True
            return
        self._after_response()

    def _backlog(self) -> int:
        return self._out_len

    def _overflow(self, reason: str) -> None:
        self._deferred += self.close(reason)
        self._out.clear()
        self._out_len = 0
        self.endpoint._ready[self] = None  # so the adapter looks (and ticks)

    def _after_response(self) -> None:
        h = self._h11
        if h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            self._exchange = None
            self._set_phase(_IDLE)
            # The next head starts with what h11 kept of the last slice: the scanner
            # sees those bytes before h11 parses them.
            self._unscanned = h.trailing_data[0]
            self._scanner = HeadScanner(self.endpoint.limits.max_header_bytes)
            if not self._processing:
                self._input_pending = bool(self._unscanned or self._input)
        elif h.our_state in (h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._closed = True

    def _emit(self, data: bytes | None) -> None:
        if data:
            self._out.append(data)
            self._out_len += len(data)
            self.endpoint._ready[self] = None

    # ------------------------------------------------------------------ time

    def _stamp(self) -> float:
        return self._clock if self._clock is not None else _NAN

    def _set_phase(self, phase: int) -> None:
        if phase != self._phase:
            self._phase = phase
            self._since = self._stamp()


def _framing_problem(request: h11.Request) -> str | None:
    """What makes a request's body framing untrustworthy although h11 accepts it.

    h11 refuses conflicting or malformed Content-Length, a Transfer-Encoding other
    than a lone `chunked`, repeated Transfer-Encoding and a repeated Host. It lets
    two through that RFC 9112 says to close on: Content-Length *and*
    Transfer-Encoding (6.3: a request-smuggling shape; h11 frames by chunked), and
    Transfer-Encoding in an HTTP/1.0 request (6.1: "as if the framing is faulty").
    Line framing (a bare LF, a folded line) is refused before h11 parses the head
    (`HeadScanner`).
    """
    names = {name for name, _ in request.headers}
    if b"transfer-encoding" not in names:
        return None
    if b"content-length" in names:
        return "both Content-Length and Transfer-Encoding"
    if request.http_version != b"1.1":
        return "Transfer-Encoding in an HTTP/1.0 request"
    return None


def _deadline(base: float, delta: float | None) -> float | None:
    if delta is None:
        return None
    if math.isnan(base):
        return _NEVER
    return base + delta
