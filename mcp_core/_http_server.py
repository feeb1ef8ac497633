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

This module is the routing and the sessions (the endpoint); the two HTTP objects
live in `_http_server_conn`, the event store in `_event_store`. What they say to each
other is a small package-internal API described there (`admit`/`serve` one way,
`respond`/`start_sse`/`send`/`end` the other); none reads another's private members.

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
        for ready in endpoint.pump(now=clock()):  # answers may land on other sockets
            wake(ready)                           # its task writes ready.data_to_send()
        sock.sendall(http.data_to_send())         # (and re-reads ready.next_deadline())
    sock.close()
    # one more timer for the endpoint: endpoint.tick(clock()) at endpoint.next_deadline()

Answers given later (from a worker) need only `conn.send_...` then
`endpoint.pump(conn, now=clock())`: `now` stamps the timers the write restarts (the
keep-alive connection's idle timer, a session's idle time). Without it they start at
the next `tick`, which `next_deadline()` then asks for at once.

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

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import _http_auth
from . import _jsonrpc as jr
from ._base import (
    OutgoingMessage,
    RequestId,
    State,
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
from ._event_store import EventStore, InMemoryEventStore
from ._events import ConnectionClosed, Event, MessageRejected, RequestCancelled
from ._http import (
    DEFAULT_PATH,
    ERROR_STATUS,
    JSON,
    LAST_EVENT_ID,
    PROTOCOL_VERSION,
    SESSION_ID,
    HeaderList,
    Headers,
    accepted,
    error_body,
    is_visible_ascii,
    media_type,
    single_header,
    slot_setters,
    sse_message,
)
from ._http_headers import (
    HeaderParam,
    HostPolicy,
    TrustedProxies,
    check_mirrored_headers,
    plainly_mirrored,
    x_mcp_header_params,
)
from ._http_server_conn import (
    NEVER,
    HTTPExchange,
    HTTPLimits,
    HTTPRequestRejected,
    HTTPServerConnection,
    Moment,
    Refusal,
    RequestHead,
)
from ._resource_auth import ProtectedResource, ResourceGuard
from ._server import ServerConnection
from ._sse import encode_event
from ._state import StreamState, classify_era
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

# The legacy GET stream's id in the event store. POST streams count up from "1"
# (`_Session.next_stream`), so "0" can never name one of them, and an event id's stream part
# tells `_resume` which of the two kinds a `Last-Event-ID` points at.
GET_STREAM_ID: Final = "0"

# The enum members read per request, bound once: CPython 3.11 does not specialise an
# attribute read on a class, and a member read through its enum costs about 900
# instructions against a few dozen for a module global (several per POST, both eras).
_PENDING: Final = StreamState.PENDING
_STREAMING: Final = StreamState.STREAMING
_DONE: Final = StreamState.DONE
_MODERN: Final = Era.MODERN
_LEGACY: Final = Era.LEGACY


# =========================================================================== events


@dataclass(frozen=True, slots=True)
class MCPEvent(Event):
    """An event of the MCP connection an HTTP request was routed to.

    Answer through `connection` (`send_result`, `send_error`, `send_progress`,
    `send_request` ...), then call `HTTPServerEndpoint.pump()`. `session_id` is the
    legacy session, or None for a 2026-07-28 request (whose connection lives only
    until its response is out).

    The wrapper exists because one endpoint feeds many MCP connections: the event alone
    would not say which connection's verbs answer it, and answering through another
    connection would put a response on a stream of another client (the request-id confusion
    of CVE-2026-25536, RELIABILITY.md 1.4). Ids are only unique per connection, so
    `(connection, event.request_id)` is the key, never the id alone.
    """

    event: Event
    connection: ServerConnection
    session_id: str | None = None

    def __init__(
        self, event: Event, connection: ServerConnection, session_id: str | None = None
    ) -> None:
        # (The generated `__init__`, written out: see `_http.slot_setters`.)
        _EVENT_EVENT(self, event)
        _EVENT_CONNECTION(self, connection)
        _EVENT_SESSION_ID(self, session_id)


_EVENT_EVENT, _EVENT_CONNECTION, _EVENT_SESSION_ID = slot_setters(
    MCPEvent, "event", "connection", "session_id"
)


# On by default, and for loopback only: every SDK shipped DNS rebinding once because the
# check was opt-in (CVE-2025-66416, CVE-2025-66414, RELIABILITY.md 1.1). A public bind has
# to name its hosts, and switching the check off takes an explicit None.
DEFAULT_HOST_POLICY: Final = HostPolicy.loopback()


def tool_header_params_from(
    tools: Iterable[Any],
) -> Callable[[str], Mapping[str, HeaderParam] | None]:
    """A `tool_header_params` hook for a fixed tool list (models or wire dicts).

    Raises ValueError for a tool whose `x-mcp-header` annotations are invalid: clients
    must drop such a tool, so serving it is a bug worth failing on at startup.

    The table is built once, at startup, so the per-request check of `Mcp-Param-*` headers
    (SEP-2243, SPEC-NOTES 4.3) is a dictionary look-up and never walks a schema on the
    request path.
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


class Stream:
    """One HTTP response carrying MCP messages: a POST's answer, or a GET stream.

    A stream outlives the HTTP exchange that carries it in the legacy era: a dropped
    connection leaves it (resumable with `Last-Event-ID`), so `http` is None between
    connections and every write also goes to the event store. In 2026-07-28 it lives and
    dies with its one POST.

    `pending` holds the request ids whose answers still belong on this response; the
    response ends when it empties. `parts` are answers held back while the response may
    still be one JSON body (a batch answers as one array, so nothing can go out before the
    last answer). `can_json` and `can_sse` are what the client's `Accept` allowed, narrowed
    by the endpoint's response mode. `is_init` and `init_ok` keep the session header off the
    answer to an `initialize` that failed: a client must not be handed a session that was
    never made.
    """

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
        can_json: bool,
        can_sse: bool,
        batch: bool = False,
        is_get: bool = False,
        is_init: bool = False,
    ) -> None:
        # (No keyword-only parameters: the POST paths pass everything by position, as a
        # keyword in a class call costs a dict made and unpacked again, about 900
        # instructions per POST.)
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
    """A legacy session: its MCP connection and the streams it has open.

    `backlog` keeps the messages for the GET stream while no GET is connected, up to
    `HTTPLimits.max_backlog_messages`: a deque with `maxlen` drops the oldest, so a client
    that never opens the GET stream cannot grow the server without bound. With an event
    store those messages are in the store as well, and the backlog is only a convenience for
    a client that GETs without `Last-Event-ID`.

    `attached` counts HTTP exchanges carrying its streams. The idle timer runs only at zero:
    a session with a request open is in use however long the request takes. `principal` is
    the one who created it, and every later request must be sent by the same
    (python-sdk#2100, RELIABILITY.md 1.4). `capture` and `feeding` are set only during one
    synchronous feed of a body, so that an answer with no id (a parse error of a
    notification-only body) still has a response to go to.
    """

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
        self.by_request: dict[RequestId, Stream] = {}
        self.streams: dict[str, Stream] = {}
        self.get_stream: Stream | None = None
        self.backlog: deque[tuple[bytes, str | None]] = deque(maxlen=backlog)
        self.next_stream = 1
        self.attached = 0
        self.closed = False
        self.feeding: Stream | None = None  # the POST being fed, for id-less error replies
        self.capture: list[OutgoingMessage] | None = None


def _tag(events: list[Event], conn: ServerConnection, session_id: str | None) -> list[Event]:
    """Tagged at the source, so that the application never has to look a connection up to know
    which session (if any) an event came from.
    """
    return [MCPEvent(e, conn, session_id) for e in events]


def _error_code(payload: bytes) -> int | None:
    """Reads back the code of an error already encoded, to pick the HTTP status of a 2026-07-28
    JSON response (`ERROR_STATUS`): the answer is only bytes by the time the stream is
    finished. The None branches keep it total for a payload that is no error.
    """
    try:
        obj = jr.parse(payload)
    except RemoteProtocolError:
        return None
    error = obj.get("error") if type(obj) is dict else None
    code = error.get("code") if type(error) is dict else None
    return code if type(code) is int else None


def _path_of(target: str) -> str:
    """The query string is not part of the endpoint's identity: clients and proxies add
    cache-busting or auth parameters, and `/mcp?x=1` must reach the same endpoint.
    """
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
    `auth` (a `ProtectedResource`, or a `ResourceGuard` for per-tool scopes) makes the
    endpoint an OAuth resource server: see `mcp_core.auth` (it replaces `principal_of`).
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
        auth: ResourceGuard | ProtectedResource | None = None,
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
            # A body is one message (one JSON-RPC object, or a 2025-03-26 batch), so by
            # default it is bounded by the message limit itself: no second, smaller limit
            # waits behind it, and the error names whichever setting is in force.
            self.max_body_bytes = limits.max_body_bytes
            self.body_setting = "HTTPLimits.max_body_bytes"  # the setting errors name
        else:
            self.max_body_bytes = config.limits.max_message_bytes
            self.body_setting = "Limits.max_message_bytes"
        # What one connection may hold unwritten before its client counts as not reading; by
        # default the engine's own output limit, so any answer the engine would queue fits.
        self.max_output_bytes = (
            limits.max_output_bytes
            if limits.max_output_bytes is not None
            else config.limits.output_limit
        )
        self.response_mode = response_mode
        self.retry_ms = retry_ms
        self.tool_header_params = tool_header_params
        self.principal_of = principal_of
        self.auth = ResourceGuard(auth) if isinstance(auth, ProtectedResource) else auth
        self.allow_delete = allow_delete
        self.trusted_proxies = (
            trusted_proxies
            if isinstance(trusted_proxies, TrustedProxies)
            else TrustedProxies(trusted_proxies or ())
        )
        self._new_session_id = new_session_id
        # No store at all when not resumable: the events are then never kept, and no event
        # id goes out (a client must not be given a cursor the server cannot honour).
        self._store: EventStore | None = (
            (event_store if event_store is not None else InMemoryEventStore())
            if resumable
            else None
        )
        self._sessions: dict[str, _Session] = {}
        # Every MCP connection the endpoint feeds, and what owns it: a legacy `_Session`, or
        # the one `Stream` of a 2026-07-28 POST. `pump()` with no argument drains exactly
        # these; a connection missing here has no wire left, so `_drain` drops its output.
        self._owners: dict[ServerConnection, _Session | Stream] = {}
        # 2026-07-28 requests in flight, held against `HTTPLimits.max_exchanges`: each has a
        # connection of its own, so this is the era's count of live engines.
        self._exchanges = 0
        # Session id -> idle since (None: no clock was known; the next tick stamps it).
        self._idle: dict[str, float | None] = {}
        # A dict as an ordered set: `pump()` returns the connections in the order they got
        # output, and a connection written to twice is named once.
        self._ready: dict[HTTPServerConnection | HTTPExchange, None] = {}
        #: The clocks of the call in progress, shared with every exchange and connection.
        self.moment = Moment()
        # What next_deadline() last said, and whether a deadline came earlier since.
        self._armed: float | None = None
        self._moved = False

    # ----------------------------------------------------------------- public

    def new_connection(
        self, *, now: float | None = None, peer: str | None = None, scheme: str = "http"
    ) -> HTTPServerConnection:
        """A new `HTTPServerConnection` for one accepted TCP connection from `peer`.

        `peer` and `scheme` are what the socket says; they only matter when the peer is a
        trusted proxy (its forwarded headers then replace them) or to the Host check.
        """
        return HTTPServerConnection(self, now=now, peer=peer, scheme=scheme)

    def new_exchange(self) -> HTTPExchange:
        """A new `HTTPExchange`: one request that an HTTP server outside this layer
        parsed (ASGI, HTTP/2). Feed it `receive_head`, `receive_body`, `receive_end`."""
        return HTTPExchange(self)

    @property
    def sessions(self) -> Mapping[str, ServerConnection]:
        """The open legacy sessions: id -> their MCP connection."""
        return {sid: s.conn for sid, s in self._sessions.items()}

    def pump(
        self, *connections: ServerConnection, now: float | None = None
    ) -> list[HTTPServerConnection | HTTPExchange]:
        """Route what the MCP connections queued onto their HTTP streams.

        With no argument every live MCP connection is drained; name the ones you
        answered through to make it cheaper. `now` (the clock `tick` gets) stamps
        what is written, so the timers it restarts need no `tick` to start: pass it
        for answers given outside `receive_data`. Returns the HTTP connections that
        now have bytes to write (or events waiting for their next `tick`), and the
        standalone exchanges (`new_exchange`) that have output.

        The endpoint never writes on its own: the application's answers queue inside the MCP
        connections, and only a pump moves them onto HTTP. This keeps the endpoint free of
        callbacks into the loop (sans-IO), and it lets one pump after a burst of answers
        write each stream once.
        """
        moment = self.moment
        saved = moment.enter(now)
        try:
            # A snapshot of the owners: draining may end a stream and drop its connection
            # from the table mid-loop.
            for conn in connections or tuple(self._owners):
                self._drain(conn)
        finally:
            moment.leave(saved)
        ready = list(self._ready)
        self._ready.clear()
        return ready

    def tick(self, now: float) -> list[Event]:
        """Run the sessions' timers: their MCP connections' request deadlines (a
        server-to-client request that timed out), and the expiry of sessions idle (no
        HTTP request open) for `session_idle_timeout`. Then `pump()` as usual."""
        moment = self.moment
        saved = moment.enter(now)
        try:
            return self._tick(now)
        finally:
            moment.leave(saved)

    def _tick(self, now: float) -> list[Event]:
        """A session's MCP deadlines are checked first, so that a server-to-client request that
        timed out is failed (and its handler told) before an idle timeout could end the same
        session with a less precise reason.

        An idle stamp of None means the session went idle in a call that knew no clock
        (`pump()` without `now`); the first tick that sees it starts its timer. The session
        then lives one timeout past that tick, never less than its timeout.
        """
        events: list[Event] = []
        # A list copy: a timed-out request may end its session (the engine gives up), which
        # removes it from the table during the loop.
        for session in list(self._sessions.values()):
            conn = session.conn
            deadline = conn.next_deadline()
            if deadline is not None and deadline <= now:
                expired = self._session_events(session, conn.tick(now))
                events += _tag(expired, conn, session.id)
                self._drain(conn)
        timeout = self.limits.session_idle_timeout
        for sid, since in list(self._idle.items()):
            if since is None:
                self._idle[sid] = now
            elif timeout is not None and since + timeout <= now:
                idle = self._sessions.get(sid)
                if idle is not None:
                    events += self._end_session(idle, "session idle timeout")
        return events

    def next_deadline(self) -> float | None:
        """When `tick` next has work, or None (a value in the past means now).

        `_armed` remembers the answer so that `deadline_moved` can tell a loop whether a
        later change came before it; reading the deadline clears that flag, because the
        caller now knows the latest value.
        """
        self._moved = False
        self._armed = deadline = self._next_deadline()
        return deadline

    @property
    def deadline_moved(self) -> bool:
        """Whether `next_deadline()` may have come earlier since it was last read.

        A loop that arms the endpoint's timer from `next_deadline()` need only
        re-arm when this is True (after a `pump`, say): a session that went idle, a
        server-to-client request with a deadline. Deadlines that went later or away
        never need it: an early wake-up finds nothing due.
        """
        return self._moved

    def _next_deadline(self) -> float | None:
        """`NEVER` stands in while some idle stamp is unknown: it is in the past, so the loop
        ticks at once and the tick stamps the session (see `_tick`).
        """
        deadlines = [
            d for d in (s.conn.next_deadline() for s in self._sessions.values()) if d is not None
        ]
        timeout = self.limits.session_idle_timeout
        if timeout is not None and self._idle:
            stamps = self._idle.values()
            if None in stamps:
                return NEVER
            deadlines.append(min(t for t in stamps if t is not None) + timeout)
        return min(deadlines) if deadlines else None

    def _may_come_at(self, deadline: float) -> None:
        """A deadline was set: the timer must hear of it if it comes first.

        Only an earlier deadline matters: a loop that wakes early finds nothing due and
        re-reads `next_deadline()`, so a later or removed deadline needs no wake-up.
        """
        armed = self._armed
        if armed is None or deadline < armed:
            self._moved = True

    def close_session(self, session_id: str, reason: str = "closed by the server") -> list[Event]:
        """End a legacy session: its streams end, later requests get 404.

        The session is dropped from the table before its streams are ended, so a request
        that races in meanwhile already gets the 404 the spec gives a terminated session
        (2025-03-26 transports, "Session Management"), and the client starts again with a
        fresh `initialize`.
        """
        session = self._sessions.get(session_id)
        return self._end_session(session, reason) if session is not None else []

    def close_stream(
        self, session_id: str, request_id: RequestId | None = None, *, now: float | None = None
    ) -> bool:
        """End the HTTP response carrying a legacy stream without ending the stream.

        SEP-1699 polling: the client reconnects (after the priming `retry`) with
        `Last-Event-ID` and gets what was sent meanwhile. `request_id` names a POST's
        stream; None the GET stream. False when there is nothing resumable to close.
        `now` as for `pump`.
        """
        session = self._sessions.get(session_id)
        if session is None or self._store is None:
            return False
        # Only a stream already streaming can be closed this way: a pending one has sent no
        # event id, so a client would have nothing to resume from, and the request would
        # look lost.
        stream = session.get_stream if request_id is None else session.by_request.get(request_id)
        if stream is None or stream.http is None or stream.state is not _STREAMING:
            return False
        http = stream.http
        saved = self.moment.enter(now)
        try:
            self._release(stream)
            if stream.is_get:
                session.get_stream = None
            http.end()
        finally:
            self.moment.leave(saved)
        return True

    def close(self, reason: str = "server shutting down") -> list[Event]:
        """End every session and every 2026-07-28 request in flight.

        A pending 2026-07-28 response gets 503 rather than a silent close: its request was
        never answered, and a status tells the client to retry elsewhere (a new replica)
        instead of waiting on a stream that will never carry the result.
        """
        events: list[Event] = []
        for session in list(self._sessions.values()):
            events += self._end_session(session, reason)
        # The 2026-07-28 requests in flight are owned by their streams, not by a session, so
        # they are found through the owners table.
        for owner in list(self._owners.values()):
            if isinstance(owner, Stream):
                http = owner.http
                state = owner.state
                self._release(owner)
                events += self._abandon(owner, reason)
                if http is not None and state is _STREAMING:
                    http.end()
                elif http is not None:
                    http.respond_json(503, error_body(None, INTERNAL_ERROR, reason))
        return events

    # ------------------------------------- the HTTP layer's side (package-internal)
    # What `HTTPExchange` and `HTTPServerConnection` call; applications do not.

    def mark_ready(self, http: HTTPServerConnection | HTTPExchange) -> None:
        """`http` has output (or events for its next tick): `pump()` names it.

        The exchanges call this when they buffer bytes, so `pump()` can name every
        connection with output without scanning them all.
        """
        self._ready[http] = None

    def mark_read(self, http: HTTPServerConnection | HTTPExchange) -> None:
        """`http`'s output was taken."""
        self._ready.pop(http, None)

    def admit(self, head: RequestHead) -> tuple[RequestHead, Refusal | None]:
        """A request head as judged before its body: with its `view` (who sent it and
        how, after trusted proxies), and the refusal it gets, if any.

        The head is judged before its body is read on purpose: a request from a forbidden
        Origin, or to the wrong path, is refused without the server reading (and buffering)
        a body it will throw away. The view comes first because the Host check must judge
        the host a trusted proxy reports, not the proxy's own.
        """
        view = self.trusted_proxies.resolve(head.headers, peer=head.peer, scheme=head.scheme)
        # (`dataclasses.replace` would do, at several times the cost.)
        head = RequestHead(
            head.method, head.target, head.headers, head.peer, head.scheme, view, head.token
        )
        return head, self._check_head(head)

    def serve(self, http: HTTPExchange, head: RequestHead, body: bytes) -> list[Event]:
        """A complete request that passed `admit`: judge its credentials (with `auth=`),
        then route it and answer through `http`.

        Credentials are judged after the body is complete: the scopes a tool needs depend on
        the tool the body names (`ResourceGuard`), which the head does not carry.
        """
        if self.auth is not None:
            return _http_auth.authorize(self, http, head, body)
        return self.route(http, head, body)

    def route(self, http: HTTPExchange, head: RequestHead, body: bytes) -> list[Event]:
        """A complete request that may go on (its credentials, if any, granted).

        The method was checked by `admit` (405 for the rest), so anything that is neither
        POST nor GET here is a DELETE.
        """
        if head.method == "POST":
            return self._post(http, head, body)
        if head.method == "GET":
            return self._get(http, head)
        return self._delete(http, head)

    # ------------------------------------------------------------ head checks

    def _check_head(self, head: RequestHead) -> Refusal | None:
        """The order follows the cost of a wrong answer. Host and Origin come first: a
        rebinding page (RELIABILITY.md 1.1) must learn nothing, not even whether the path
        exists. 421 for a bad Host is "Misdirected Request" (RFC 9110 15.5.20) and carries
        no JSON-RPC body, since it may not be an MCP client at all; 403 for a bad Origin is
        what 2025-11-25 made explicit. The path and method come next, then what the client
        must accept: 2025-03-26 on (transports, "Sending Messages to the Server") a POST
        must list both `application/json` and `text/event-stream`, because the server
        chooses which one it answers with. In "json" mode we never stream, so JSON alone is
        enough. A body that is not JSON is refused before it is parsed (415).
        """
        policy = self.host_policy
        # `host_policy=None` is the explicit opt-out for a server behind its own checks; the
        # default is the loopback allow-list (see `DEFAULT_HOST_POLICY`).
        if policy is not None:
            status = policy.check_headers(head.headers, view=head.view)
            if status == 421:
                return Refusal(421, "Invalid Host header", jsonrpc=False)
            if status == 403:
                return Refusal(403, "Forbidden: invalid Origin header")
        # The OAuth metadata paths (RFC 9728 3: `/.well-known/oauth-protected-resource`) are
        # served by the same endpoint when it is a resource server, so a client can discover
        # how to authorize from the server it was refused by.
        if _path_of(head.target) != self.path and not (
            self.auth is not None and self.auth.is_metadata_path(_path_of(head.target))
        ):
            return Refusal(404, "Not Found", jsonrpc=False)
        if head.method not in ("POST", "GET", "DELETE"):
            return Refusal(405, "Method Not Allowed", jsonrpc=False, headers=(self._allow(),))
        if head.method != "POST":
            return None
        json_ok, sse_ok = accepted(head.headers)
        if self.response_mode == "json":
            if not json_ok:
                return Refusal(406, "Not Acceptable: Client must accept application/json")
        elif not (json_ok and sse_ok):
            return Refusal(
                406,
                "Not Acceptable: Client must accept both application/json and text/event-stream",
            )
        # Two Content-Type headers are refused, not resolved: which one a proxy believed is
        # unknown, and a body read as JSON by one party and as text by another is the kind
        # of disagreement mirroring rules out elsewhere.
        content_type, repeated = single_header(head.headers, "content-type")
        if repeated or media_type(content_type) != JSON:
            return Refusal(415, "Unsupported Media Type: Content-Type must be application/json")
        return None

    def _allow(self) -> tuple[str, str]:
        """RFC 9110 15.5.6: a 405 must say which methods the target supports. 2026-07-28 is
        POST only, so a modern-only server names no GET or DELETE.
        """
        if self.config.legacy_versions:
            return ("allow", "GET, POST, DELETE" if self.allow_delete else "GET, POST")
        return ("allow", "POST")

    def _principal(self, head: RequestHead) -> str | None:
        """With `auth=` the principal is the verified token's, never the application's guess:
        the binding of sessions to principals must rest on the credential that was checked.
        """
        if self.auth is not None:
            return head.token.principal if head.token is not None else None
        return self.principal_of(head) if self.principal_of is not None else None

    def _session_for(self, head: RequestHead, session_id: str) -> _Session | None:
        """A session owned by someone else answers exactly like an unknown one (404), so a
        guessed or leaked session id neither works nor confirms that the session exists
        (python-sdk PR #2718, RELIABILITY.md 1.4).
        """
        session = self._sessions.get(session_id)
        if session is None or session.closed:
            return None
        if self._principal(head) != session.principal:
            return None  # exactly as if it did not exist: existence must not leak
        return session

    def _version_problem(self, head: RequestHead, session: _Session) -> Refusal | None:
        """2025-06-18 (transports, "Protocol Version Header"): the client MUST send
        `MCP-Protocol-Version` on every request after initialization, and a server that gets
        an invalid or unsupported one answers 400. Absent, the server may assume the
        negotiated version, which a session knows. A version the server knows but the
        session did not agree on is refused as well: answering it would mean speaking two
        revisions on one session.
        """
        version, repeated = single_header(head.headers, PROTOCOL_VERSION)
        if repeated:
            return Refusal(400, "Bad Request: MCP-Protocol-Version appears more than once")
        if version is None or version == session.version:
            return None  # absent: the session's negotiated version is the other way to know
        if not is_known(version):
            return Refusal(400, f"Bad Request: Unsupported protocol version: {version}")
        return Refusal(
            400,
            f"Bad Request: MCP-Protocol-Version {version} does not match the session's "
            f"{session.version}",
        )

    # ------------------------------------------------------------------- POST

    def _post(self, http: HTTPExchange, head: RequestHead, body: bytes) -> list[Event]:
        """The body is parsed with the engine's limits before anything else reads it, so a deep
        or huge body is refused by its own rule (with its id when it can be read), and the
        routing below only ever sees a bounded JSON value.
        """
        try:
            obj = jr.parse(body, self.config.limits)
        except jr.LimitExceeded as refusal:
            return self.refuse_over_limit(http, head, refusal)
        except RemoteProtocolError as exc:
            return http.refuse(Refusal(exc.http_status, exc.message, exc.code))
        # Per-tool scopes are judged on the parsed body (the tool named in it) and before
        # any engine sees the request: a 403 `insufficient_scope` must come before any side
        # effect.
        denied = _http_auth.scope_refusal(self, http, head, obj)
        if denied is not None:
            return denied
        # Routing is by era, and the era is the message's word first (classify_era:
        # the MCP-Protocol-Version header, the params' envelope), this endpoint's
        # policy only where the message says nothing. The order matters:
        version, _ = single_header(head.headers, PROTOCOL_VERSION)
        single = type(obj) is dict
        era = classify_era(obj.get("params") if single else None, version)
        # 1. An initialize opens a legacy session unless the message says
        #    2026-07-28; then it is a modern request for a method that revision
        #    lacks, and the modern path refuses it in words a client can show.
        if single and obj.get("method") == "initialize" and "id" in obj and era is not _MODERN:
            return self._post_legacy(http, head, obj)
        # 2. Said modern, or nothing else is spoken here: no session is involved.
        if era is _MODERN or not self.config.legacy_versions:
            return self._post_modern(http, head, obj)
        # 3. A header naming no revision we know. A server that speaks 2026-07-28
        #    lets its envelope check answer (with the supported list); a
        #    legacy-only one has no JSON-RPC answer to give before a session.
        if era is None and version is not None:
            if self.config.modern_versions:
                return self._post_modern(http, head, obj)
            return http.refuse(
                Refusal(400, f"Bad Request: Unsupported protocol version: {version}")
            )
        # 4. Said legacy, or nothing at all: a request in a session (which
        #    _post_legacy finds by Mcp-Session-Id, or refuses for its absence).
        return self._post_legacy(http, head, obj)

    def refuse_over_limit(
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
        handler waiting on it is not left waiting; the error then names no id.

        A response over the limit is failed on our side because the client will not send it
        again: without this the server's handler would wait for an answer that was thrown
        away, until its deadline or forever. The error then carries no id, since the id
        belongs to our request, not to anything the client asked.
        """
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
        return events + http.refuse(
            Refusal(refusal.http_status, refusal.message, refusal.code, request_id=rid, close=close)
        )

    def _post_modern(self, http: HTTPExchange, head: RequestHead, obj: Any) -> list[Event]:
        """One POST is one request with its own `ServerConnection` (SEP-2575, statelessness):
        ids are per client and never shared, so no routing table is shared either. The
        checks before the connection is made are the ones the 2026-07-28 status table
        (SPEC-NOTES 4.3) maps to HTTP statuses; what remains (the envelope, the method) the
        engine answers as JSON-RPC, and `_finish` picks the status from the error code.
        """
        if type(obj) is not dict or "method" not in obj:
            return http.refuse(
                Refusal(400, "Body must be a single JSON-RPC request or notification object")
            )
        # A notification is answered 202 (2025-03-26 on, transports). A version the server
        # does not speak is still refused, as the status table asks, so that a client
        # misconfigured for another revision hears of it at its first notification.
        if "id" not in obj:
            # A client cancels by closing its stream; no notification has state to act on.
            version, _ = single_header(head.headers, PROTOCOL_VERSION)
            modern = self.config.modern_versions
            if version is not None and modern and version not in modern:
                return http.refuse(
                    Refusal(
                        400,
                        "Unsupported protocol version",
                        UNSUPPORTED_PROTOCOL_VERSION,
                        data={
                            "supported": list(self.config.supported_versions),
                            "requested": version,
                        },
                    )
                )
            http.respond(202, [], b"")
            return []
        rid = obj["id"]
        if not jr.is_request_id(rid):
            return http.refuse(Refusal(400, "id must be a string or an integer"))
        method = obj.get("method")
        json_ok, sse_ok = accepted(head.headers)
        # A listen stream only makes sense as SSE (SPEC-NOTES 1.8): it carries notifications
        # until the client closes it, so a client that cannot take a stream is refused up
        # front with 406 rather than left with a JSON response that could never end.
        listen = method == "subscriptions/listen"
        if listen and not sse_ok:
            return http.refuse(
                Refusal(
                    406,
                    "Not Acceptable: subscriptions/listen needs text/event-stream",
                    request_id=rid,
                )
            )
        # The mirrored headers are judged against the body before any engine sees the
        # request (SEP-2243): the body is the truth, and a mismatch means an intermediary
        # routed on a header that lies. A bad one is 400 with -32020 HeaderMismatch.
        header_params = None
        params = obj.get("params")
        if method == "tools/call" and self.tool_header_params is not None and type(params) is dict:
            name = params.get("name")
            if isinstance(name, str):
                header_params = self.tool_header_params(name)
        # (The common shape, `plainly_mirrored`, is judged without the function; anything
        # else, and every defect, takes it.)
        headers = head.headers
        if not (
            not header_params
            and type(params) is dict
            and type(headers) is HeaderList
            and plainly_mirrored(headers.folded or headers.by_name(), method, params)
        ):
            try:
                check_mirrored_headers(headers, obj, header_params)
            except RemoteProtocolError as exc:
                return http.refuse(
                    Refusal(exc.http_status, exc.message, exc.code, request_id=rid, data=exc.data)
                )
        # Every modern request holds a connection until its answer is out; the cap bounds
        # the memory that many slow requests could pin. 503 says "try again", which is true.
        if self._exchanges >= self.limits.max_exchanges:
            return http.refuse(
                Refusal(503, "Too many requests in flight", INTERNAL_ERROR, request_id=rid)
            )
        # A connection per request (SEP-2575): its `principal` binds any state it seals to
        # the caller, so a retry by another user is refused even on the same replica.
        # (`_principal` asked only when there is one to find: most endpoints have
        # neither `auth=` nor `principal_of`, and this runs per POST.)
        # (And no `principal=` passed when there is none: a keyword in a class call costs
        # a dict made and unpacked again, about 950 instructions, a seventh of the
        # connection's making.)
        if self.auth is None and self.principal_of is None:
            conn = ServerConnection(self.config)
        else:
            conn = ServerConnection(self.config, principal=self._principal(head))
        mode = self.response_mode
        stream = Stream(conn, None, "", {rid}, json_ok, sse_ok and (mode != "json" or listen))
        self._owners[conn] = stream
        self._exchanges += 1
        self._attach(http, stream)
        # The stream is attached before the feed: the engine may answer synchronously (an
        # error, a cached result), and that answer must find its response.
        events = conn.receive_parsed(obj, wall_time=self.moment.wall)
        self._drain(conn)
        self._prefer_sse(stream)
        return _tag(events, conn, None)

    def _prefer_sse(self, stream: Stream) -> None:
        """ "sse" mode streams whatever was not answered at once. Only after the feed:
        a refusal the engine makes on the spot keeps its JSON body and status.

        The order matters: committing before the feed would turn a refusal such as -32601
        into an SSE event under status 200, and the client would lose the 404 that the
        status table (SPEC-NOTES 4.3) uses to tell a 2026 server from a legacy one.
        """
        if self.response_mode == "sse" and stream.state is _PENDING and stream.can_sse:
            self.commit(stream)

    def _post_legacy(self, http: HTTPExchange, head: RequestHead, obj: Any) -> list[Event]:
        """The session checks follow the spec's order (2025-03-26 on, transports, "Session
        Management"): a request other than `initialize` without `Mcp-Session-Id` is 400, an
        unknown or terminated session 404 (the client then initializes again). A repeated
        header is refused rather than one copy picked: two proxies could each pick a
        different one.
        """
        session_id, repeated = single_header(head.headers, SESSION_ID)
        if repeated:
            return http.refuse(Refusal(400, "Bad Request: Mcp-Session-Id appears more than once"))
        single = type(obj) is dict
        if single and obj.get("method") == "initialize" and "id" in obj and session_id is None:
            if not jr.is_request_id(obj["id"]):
                # The id routes the answer to this response: one it cannot be
                # (an array, null, 1.5) is refused here, as inside a session.
                return http.refuse(Refusal(400, "id must be a string or an integer"))
            return self._initialize(http, head, obj)
        if session_id is None:
            return http.refuse(Refusal(400, "Bad Request: Missing session ID"))
        session = self._session_for(head, session_id)
        if session is None:
            return http.refuse(Refusal(404, "Session not found"))
        problem = self._version_problem(head, session)
        if problem is not None:
            return http.refuse(problem)
        # JSON-RPC batches exist only in 2025-03-26 (added there, removed in 2025-06-18,
        # SPEC-NOTES 2.8); a later session refuses an array outright.
        if type(obj) is list:
            if session.version != V2025_03_26:
                return http.refuse(
                    Refusal(400, "batch arrays are not allowed in this protocol revision")
                )
            items: list[Any] = obj
        elif single:
            items = [obj]
        else:
            return http.refuse(Refusal(400, "a JSON-RPC message must be an object"))
        # The ids are checked before anything is fed: a duplicate must be refused while the
        # first request's slot is untouched (RELIABILITY.md 1.6: claude.ai sent every
        # request with id 1, and overwriting the slot cross-wired answers between
        # conversations). 409 with -32600 is what the SDKs converged on.
        request_ids: list[RequestId] = []
        for item in items:
            if type(item) is not dict or "method" not in item or "id" not in item:
                continue
            rid = item["id"]
            if not jr.is_request_id(rid):
                if single:
                    return http.refuse(Refusal(400, "id must be a string or an integer"))
                continue
            if rid in session.by_request or rid in request_ids:
                # Never overwrite a routing slot: the first request keeps its stream.
                return http.refuse(
                    Refusal(
                        409, f"Conflict: request id {rid!r} is already in flight", request_id=rid
                    )
                )
            request_ids.append(rid)
        conn = session.conn
        # Only notifications and responses: the spec answers 202 with no body. The one
        # exception is a message the engine refuses, which gets 400 so the client sees it;
        # `capture` catches an id-less error the feed produces, because no stream exists for
        # it to go on.
        if not request_ids:
            session.capture = []
            try:
                events = conn.receive_parsed(obj, wall_time=self.moment.wall)
                self._drain(conn)
            finally:
                captured, session.capture = session.capture, None
            events = self._session_events(session, events)
            rejected = next((e for e in events if isinstance(e, MessageRejected)), None)
            if captured:
                http.respond_json(400, captured[0].payload)
            elif rejected is not None and single:
                http.respond_json(400, error_body(None, rejected.code, rejected.message))
            else:
                http.respond(202, [], b"")
            return _tag(events, conn, session.id)
        # A legacy client may POST while earlier POST streams are still open; the cap keeps
        # one session from pinning unbounded responses (429: the client should slow down).
        if session.attached >= self.limits.max_streams_per_session:
            return http.refuse(Refusal(429, "Too many concurrent streams in this session"))
        # One stream for every request of the body: a batch's answers all go on its one
        # response, whether that becomes a JSON array or an SSE stream.
        stream = self._new_stream(session, set(request_ids), head, batch=not single)
        self._attach(http, stream)
        events = self._feed(session, stream, obj, self.moment.wall)
        self._prefer_sse(stream)
        return _tag(self._session_events(session, events), conn, session.id)

    def _feed(
        self, session: _Session, stream: Stream, obj: Any, wall_time: float | None
    ) -> list[Event]:
        """Hand a POST body (parsed) to the session; its synchronous answers land on
        `stream`.

        `feeding` is set only for the duration of the synchronous feed: answers the engine
        gives at once (a parse error without an id, an error for a batch item) have no id of
        their own to route by, and they belong on the response being built. The stream is
        finished here when the feed answered everything, so a request answered at once is
        not held open until the next pump.
        """
        session.feeding = stream
        try:
            events = session.conn.receive_parsed(obj, wall_time=wall_time)
            self._drain(session.conn)
        finally:
            session.feeding = None
        if not stream.pending and stream.state is not _DONE:
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
    ) -> Stream:
        """The stream id is a counter per session, which keeps event ids short and unique
        within the session, as 2025-11-25 asks (SPEC-NOTES 4.2, "Resumability"): the id says
        which stream an event belongs to, and `_resume` replays that stream only.
        """
        json_ok, sse_ok = accepted(head.headers)
        stream_id = str(session.next_stream)
        session.next_stream += 1
        # (can_json, can_sse, batch, is_get, is_init: by position, see `Stream.__init__`)
        stream = Stream(
            session.conn,
            session,
            stream_id,
            pending,
            json_ok,
            sse_ok and self.response_mode != "json",
            batch,
            False,
            is_init,
        )
        session.streams[stream_id] = stream
        for rid in pending:
            session.by_request[rid] = stream
        return stream

    def _initialize(
        self, http: HTTPExchange, head: RequestHead, obj: dict[str, Any]
    ) -> list[Event]:
        """The session cap is checked before an id is minted: an attacker opening sessions
        should cost us a 503, not a session each (RELIABILITY.md 1.3; the official SDK's
        default is the same 10,000). The id comes from the application (`secrets`), and a
        bad id is our bug, so it raises LocalProtocolError instead of reaching the client:
        2025-03-26 requires visible ASCII, and a duplicate would hand one client another's
        session.

        The session is registered before the feed, because the engine may send to it during
        `initialize`; it is dropped again if the handshake failed, so a refused `initialize`
        leaves no session behind and carries no `Mcp-Session-Id`.
        """
        if len(self._sessions) >= self.limits.max_sessions:
            return http.refuse(
                Refusal(503, "Too many open sessions", INTERNAL_ERROR, request_id=obj["id"])
            )
        session_id = self._new_session_id()
        if not isinstance(session_id, str) or not is_visible_ascii(session_id):
            raise LocalProtocolError("new_session_id() must return visible ASCII (0x21-0x7E)")
        if session_id in self._sessions:
            raise LocalProtocolError("new_session_id() returned an id already in use")
        # The session is bound to whoever opened it; every later request of the session must
        # come from the same principal (`_session_for`).
        principal = self._principal(head)
        conn = ServerConnection(self.config, principal=principal)
        session = _Session(session_id, conn, principal, self.limits.max_backlog_messages)
        self._sessions[session_id] = session  # provisional until initialize succeeds
        self._owners[conn] = session
        stream = self._new_stream(session, {obj["id"]}, head, is_init=True)
        self._attach(http, stream)
        events = self._feed(session, stream, obj, self.moment.wall)
        if conn.state is State.READY and conn.era is _LEGACY and conn.protocol_version:
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
        """React to what the session's connection reported: cancels end streams.

        A ConnectionClosed means the engine is finished with the session: keeping the
        session id live would make later requests reach a dead engine, so it is ended here
        and they get 404, which tells the client to initialize again.
        """
        for event in events:
            if isinstance(event, RequestCancelled):
                self._cancelled(session, event.request_id)
            elif isinstance(event, ConnectionClosed):
                # The engine gave up on the session (it already reported how): end it here.
                self._end_session(session, event.reason)
        return events

    def _cancelled(self, session: _Session, rid: RequestId) -> None:
        """A legacy cancel (`notifications/cancelled`) means no response will come (2025-03-26,
        "Cancellation": the receiver SHOULD NOT respond), so the request stops holding its
        stream open; a stream whose last request is cancelled ends with 202 and no body.
        """
        stream = session.by_request.pop(rid, None)
        if stream is None:
            return
        stream.pending.discard(rid)
        if not stream.pending:
            self._finish(stream)

    # -------------------------------------------------------------- GET/DELETE

    def _legacy_target(self, http: HTTPExchange, head: RequestHead) -> _Session | list[Event]:
        """The session a GET or DELETE names, or the refusal already sent.

        The checks are those of `_post_legacy`, in the same order, because GET and DELETE
        carry the same session rules (2025-03-26 on, transports, "Session Management").
        """
        version, _ = single_header(head.headers, PROTOCOL_VERSION)
        if classify_era(None, version) is _MODERN or not self.config.legacy_versions:
            # 2026-07-28 has no GET stream and no sessions to delete.
            return http.refuse(
                Refusal(405, "Method Not Allowed", jsonrpc=False, headers=(("allow", "POST"),))
            )
        session_id, repeated = single_header(head.headers, SESSION_ID)
        if repeated:
            return http.refuse(Refusal(400, "Bad Request: Mcp-Session-Id appears more than once"))
        if session_id is None:
            return http.refuse(Refusal(400, "Bad Request: Missing session ID"))
        session = self._session_for(head, session_id)
        if session is None:
            return http.refuse(Refusal(404, "Session not found"))
        problem = self._version_problem(head, session)
        if problem is not None:
            return http.refuse(problem)
        return session

    def _get(self, http: HTTPExchange, head: RequestHead) -> list[Event]:
        """2025-03-26 (transports, "Listening for Messages from the Server"): the GET stream
        carries server messages unrelated to any request. Only one at a time per session: a
        second would make "which stream gets the message" ambiguous, and the spec says a
        message goes on exactly one stream. What queued while no GET was connected is sent
        first, in order.
        """
        target = self._legacy_target(http, head)
        if not isinstance(target, _Session):
            return target
        session = target
        _, sse_ok = accepted(head.headers)
        if not sse_ok:
            return http.refuse(Refusal(406, "Not Acceptable: Client must accept text/event-stream"))
        # A GET with `Last-Event-ID` is a resumption (2025-11-25: resumption always goes
        # through GET); without a store the header is ignored and a fresh GET stream opens.
        last_event_id, _ = single_header(head.headers, LAST_EVENT_ID)
        if last_event_id is not None and self._store is not None:
            return self._resume(http, session, last_event_id)
        if session.get_stream is not None:
            return http.refuse(Refusal(409, "Conflict: Only one SSE stream is allowed per session"))
        if session.attached >= self.limits.max_streams_per_session:
            return http.refuse(Refusal(429, "Too many concurrent streams in this session"))
        stream = self._get_stream(session)
        self._attach(http, stream)
        self.commit(stream)
        backlog = list(session.backlog)
        session.backlog.clear()
        for payload, event_id in backlog:
            http.send(sse_message(payload, event_id))
        return []

    def _get_stream(self, session: _Session) -> Stream:
        """A GET stream has no requests of its own (`pending` is empty), so nothing but
        `_end_session` or a lost connection ever ends it.
        """
        stream = Stream(
            session.conn, session, GET_STREAM_ID, set(), can_json=False, can_sse=True, is_get=True
        )
        session.get_stream = stream
        return stream

    def _resume(self, http: HTTPExchange, session: _Session, last_event_id: str) -> list[Event]:
        """2025-11-25 (transports, "Resumability and Redelivery"): the server may replay only
        the stream the event id belongs to, never another's (RELIABILITY.md 1.5: the
        reference server's store replayed every stream, and a third-party framework leaked
        across sessions). The store is asked with the session id, so a cursor from another
        session is simply unknown, and unknown cursors are 400 rather than a fresh stream
        that would silently skip what was lost.
        """
        assert self._store is not None
        replay = self._store.replay_after(session.id, last_event_id)
        if replay is None:
            return http.refuse(Refusal(400, "Bad Request: unknown Last-Event-ID"))
        stream_id, events = replay
        found = session.get_stream if stream_id == GET_STREAM_ID else session.streams.get(stream_id)
        if found is None and stream_id != GET_STREAM_ID:
            # The stream already ended: hand over what it said, then end too.
            http.start_sse(self._sse_headers(session))
            for event_id, payload in events:
                http.send(sse_message(payload, event_id))
            http.end()
            return []
        # A client that reconnects before the server notices the old socket is gone would
        # otherwise get two live copies of one stream, each event written twice.
        if found is not None and found.http is not None:
            # The client reconnected before we saw the old connection go: move over.
            old_http = found.http
            self._release(found)
            old_http.end()
        if session.attached >= self.limits.max_streams_per_session:
            return http.refuse(Refusal(429, "Too many concurrent streams in this session"))
        if stream_id == GET_STREAM_ID:
            stream = self._get_stream(session)
            session.backlog.clear()  # stored, hence in the replay
        else:
            assert found is not None
            stream = found
        self._attach(http, stream)
        # A resumed stream streams at once: its first bytes are the replay, which is SSE.
        stream.state = _STREAMING
        http.start_sse(self._sse_headers(session))
        for event_id, payload in events:
            http.send(sse_message(payload, event_id))
        return []

    def _delete(self, http: HTTPExchange, head: RequestHead) -> list[Event]:
        """2025-03-26 (transports, "Session Management"): the client SHOULD DELETE a session it
        no longer needs, and a server that does not allow it answers 405.
        """
        if not self.allow_delete:
            return http.refuse(
                Refusal(
                    405,
                    "Method Not Allowed: session termination is not supported",
                    headers=(self._allow(),),
                )
            )
        target = self._legacy_target(http, head)
        if not isinstance(target, _Session):
            return target
        # The session ends before the 200 goes out, so a request racing the DELETE gets 404
        # and not a half-closed session.
        events = self._end_session(target, "session terminated by the client")
        http.respond(200, [], b"")
        return events

    # ---------------------------------------------------------------- routing

    def _drain(self, conn: ServerConnection) -> None:
        """The output is taken from the connection even when it has no owner left: leaving it
        queued would keep growing a buffer nobody will read. A session's deadlines are
        checked here because a drain follows every call that could set one (a server request
        with a timeout), so the endpoint timer hears of it at once.
        """
        owner = self._owners.get(conn)
        messages = conn.messages_to_send()
        if owner is None:
            return  # its exchange or session is over: nothing has a wire to go on
        if isinstance(owner, Stream):
            for message in messages:
                self._deliver(owner, message)
            return
        if conn.deadline_moved:
            deadline = conn.next_deadline()
            if deadline is not None:
                self._may_come_at(deadline)
        for message in messages:
            self._route_session(owner, message)

    def _route_session(self, session: _Session, m: OutgoingMessage) -> None:
        """Routing follows 2025-03-26 (transports, "Sending Messages to the Server"): a
        response goes on the stream of the POST that carried its request, and nowhere else;
        a notification or server request made while handling a request goes on that
        request's stream when it can stream. Everything else (and anything related to a
        request that has no stream left) goes on the GET stream, the only one the spec
        allows for unrelated messages.
        """
        if session.closed:
            return
        if m.kind in ("result", "error"):
            if m.request_id is not None:
                target = session.by_request.get(m.request_id)
                if target is not None:
                    self._deliver(target, m)
                return  # its stream is gone (cancelled): a response must go nowhere else
            # An id-less error during a feed of notifications only (a parse error, a refused
            # notification) is captured for the 400 the POST gets.
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
        """The event is stored before it is sent, so a client that loses the GET stream can
        resume it and lose nothing; without a connected GET it waits in the backlog.
        """
        event_id = self._store_event(session, GET_STREAM_ID, m.payload)
        stream = session.get_stream
        if stream is not None and stream.http is not None:
            stream.http.send(sse_message(m.payload, event_id))
        else:
            session.backlog.append((m.payload, event_id))

    def _deliver(self, stream: Stream, m: OutgoingMessage) -> None:
        """In "auto" mode, this is where JSON or SSE is decided. While the response is pending,
        an answer is held in `parts` (it might still be the whole JSON body); anything else
        that must go on this response commits it to SSE first, since a JSON body can carry
        only the answer. A response that cannot stream drops what it cannot carry: a related
        notification is only informative, and a legacy server request already went to the
        GET stream in `_route_session`.
        """
        if stream.state is _DONE:
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
        if stream.state is _PENDING:
            if response and (stream.batch or done or feeding):
                stream.parts.append(m)  # answers wait, to go out as one JSON body
                if done:
                    self._finish(stream)
                return
            if not stream.can_sse:
                return  # nothing but the answer fits this response
            self.commit(stream)
        self._write(stream, m.payload)
        if done:
            self._finish(stream)

    def commit(self, stream: Stream) -> None:
        """Turn a pending response into an SSE stream (priming it when resumable).

        The priming event (an id with empty data, and `retry`) is 2025-11-25's (SEP-1699):
        it hands the client a cursor before the first real event, so even a stream that
        breaks at once can be resumed. Earlier revisions did not define it, and a 2025-03-26
        client may treat an empty event as a message, so it is sent only on a 2025-11-25
        session. Held answers follow in order.
        """
        stream.state = _STREAMING
        http = stream.http
        session = stream.session
        if http is not None:
            http.start_sse(self._sse_headers(session, stream))
        if session is not None and session.version == V2025_11_25 and self._store is not None:
            event_id = self._store_event(session, stream.stream_id, None)
            if http is not None:
                http.send(encode_event("", id=event_id, retry=self.retry_ms))
        parts, stream.parts = stream.parts, []
        for part in parts:
            self._write(stream, part.payload)

    def _sse_headers(self, session: _Session | None, stream: Stream | None = None) -> Headers:
        """`no-transform` and `X-Accel-Buffering: no` stop proxies (nginx buffers by default)
        from holding events back, which would turn progress and keep-alives into one late
        burst; 2026-07-28 makes the latter a SHOULD. The session id goes on every response
        of the session (2025-03-26), except the answer to a failed `initialize`.
        """
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

    def _write(self, stream: Stream, payload: bytes) -> None:
        """Every event of a legacy stream is stored, with or without a connection: resumption
        works only if the store saw every event in the order it was sent.
        """
        event_id = None
        if stream.session is not None:
            event_id = self._store_event(stream.session, stream.stream_id, payload)
        if stream.http is not None:
            stream.http.send(sse_message(payload, event_id))

    def _store_event(self, session: _Session, stream_id: str, payload: bytes | None) -> str | None:
        """The store is the application's (Redis, say), so its ids are checked: an id with a
        line break would end the SSE field early and let the store inject event fields into
        the stream.
        """
        store = self._store
        if store is None:
            return None
        event_id = store.store_event(session.id, stream_id, payload)
        if not event_id.isascii() or any(c in event_id for c in "\r\n\x00"):
            raise LocalProtocolError("event store returned an id SSE cannot carry")
        return event_id

    def _finish(self, stream: Stream) -> None:
        """Every request of the stream is answered (or cancelled): end the response.

        A JSON response gets the status table (SPEC-NOTES 4.3) only where 2026-07-28 rules:
        a modern request, or a refused `initialize` (which a 2026 client probing a legacy
        server must be able to read as a status). Legacy answers travel with 200 whatever
        the error, as the official SDK does, so that old clients that read the body only
        keep working. A batch is always 200: its items may carry different codes.
        """
        if stream.state is _DONE:
            return
        # A response that cannot be JSON (its client did not accept `application/json`)
        # gets its held answers as SSE events instead.
        if stream.state is _PENDING and stream.parts and not stream.can_json:
            self.commit(stream)  # the answers go out as SSE events after all
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
        if state is _STREAMING:
            http.end()
            return
        parts = stream.parts
        if not parts:
            http.respond(202, self._session_header(stream), b"")  # all cancelled
            return
        # A batch answers as one JSON array (JSON-RPC 2.0 section 6), in the order the
        # answers came; a single request's answer is its object alone.
        if stream.batch:
            body = b"[" + b",".join(p.payload for p in parts) + b"]"
        else:
            body = parts[0].payload
        status = 200
        use_table = session is None or (stream.is_init and not stream.init_ok)
        if use_table and not stream.batch and parts[0].kind == "error":
            status = ERROR_STATUS.get(_error_code(parts[0].payload) or 0, 200)
        http.respond_json(status, body, self._session_header(stream))

    def _session_header(self, stream: Stream) -> Headers:
        """The session header is withheld from a failed `initialize`: the spec assigns the id
        "at initialization time", and a client given one for a refused handshake would send
        requests to a session that does not exist.
        """
        session = stream.session
        if session is None or (stream.is_init and not stream.init_ok):
            return []
        return [(SESSION_ID, session.id)]

    # ------------------------------------------------------ attach and detach

    def _attach(self, http: HTTPExchange, stream: Stream) -> None:
        """Attaching stops the session's idle timer: a session is idle only while no request of
        its is open, so a slow tool call never expires the session under it.
        """
        stream.http = http
        http.attach(stream)
        session = stream.session
        if session is not None:
            session.attached += 1
            self._idle.pop(session.id, None)

    def _release(self, stream: Stream) -> None:
        """The idle timer starts when the last exchange goes; `_may_come_at` tells the loop,
        since this deadline may come before any it armed.
        """
        http = stream.http
        if http is None:
            return
        stream.http = None
        http.detach(stream)
        session = stream.session
        if session is not None:
            session.attached -= 1
            if session.attached == 0 and not session.closed:
                since = self._idle[session.id] = self.moment.now
                timeout = self.limits.session_idle_timeout
                if timeout is not None:
                    self._may_come_at(NEVER if since is None else since + timeout)

    def stream_lost(self, stream: Stream, reason: str) -> list[Event]:
        """The TCP connection under a stream went away.

        The two eras differ on purpose. 2025-03-26 on: a disconnect is not a cancellation,
        and the server may keep the stream for resumption. 2026-07-28 (transports,
        "Cancellation"): the client cancels by closing the stream, and the server MUST treat
        that as a cancel, so the request is abandoned and its handler told.
        """
        self._release(stream)
        session = stream.session
        if session is None:
            return self._abandon(stream, reason)
        if stream.is_get and session.get_stream is stream:
            session.get_stream = None
        # A legacy POST stream lives on: the client may resume it, and its answer is
        # still stored (a dropped connection is not a cancellation in this era).
        return []

    def _abandon(self, stream: Stream, reason: str) -> list[Event]:
        """2026-07-28: a request whose stream closed is cancelled.

        The state goes to DONE first, so whatever the engine sends while abandoning (it
        sends nothing after a cancel, but a racing answer might be queued) finds the stream
        finished and goes nowhere.
        """
        if stream.state is _DONE:
            return []
        stream.state = _DONE
        self._owners.pop(stream.conn, None)
        self._exchanges -= 1
        events: list[Event] = []
        for rid in stream.pending:
            events += stream.conn.abandon_request(rid, reason)
        return _tag(events, stream.conn, None)

    def _end_session(self, session: _Session, reason: str) -> list[Event]:
        """Every stream is answered, none left hanging: a stream already streaming ends, a
        pending one gets 404 "Session terminated" so that its client knows to initialize
        again (rather than a bare close it might retry into the same dead session). The
        store forgets the session too; its events could only ever be replayed to it.
        """
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
            if state is _STREAMING:
                http.end()
            else:
                http.respond_json(404, error_body(None, INVALID_REQUEST, "Session terminated"))
        session.streams.clear()
        session.by_request.clear()
        session.get_stream = None
        session.backlog.clear()
        if self._store is not None:
            self._store.forget_session(session.id)
        return _tag(session.conn.close(reason), session.conn, session.id)
