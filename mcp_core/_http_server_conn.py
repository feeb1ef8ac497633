"""The HTTP side of the Streamable HTTP server: one request, and one TCP connection; sans-IO.

Two objects, below the routing (`_http_server.HTTPServerEndpoint`):

* `HTTPExchange`: one HTTP request and its response, at the request level (a head,
  body chunks, the end in; a status, headers and body bytes out). An ASGI server
  drives one directly (`endpoint.new_exchange()`); `HTTPServerConnection` runs one
  per request over h11, so both ways in share every rule above HTTP/1.1.
* `HTTPServerConnection`: one per TCP connection, with an `h11.Connection(SERVER)`
  inside: framing, the head's size and line endings, 100-continue, pipelining, the
  header and idle timeouts. A request of the plainest shape (see `_direct_request`)
  is read and answered without h11; every other one goes through h11.

What the endpoint and the exchange say to each other is a small package-internal
API, in plain names (neither reads the other's private members):

* the endpoint answers through the exchange: `respond`, `respond_json`, `refuse`,
  `start_sse`, `send`, `end`, and ties a stream to it with `attach`/`detach`;
* the exchange hands the endpoint its request: `admit(head)` (the checks a head
  gets before any body), `serve(exchange, head, body)` once the body is in,
  `refuse_over_limit`, `stream_lost` when the client goes, and `commit(stream)` when
  the SSE timer fires; `mark_ready` tells it an exchange or connection has output.
* the exchange writes through a `ResponseSink`: the connection (over h11) or, for a
  standalone exchange, a plain buffer.

Time: every entry point (`receive_*`, `tick`, and the endpoint's `pump`, `tick`,
`close_stream`) that is given `now=` (`wall_time=`) sets the endpoint's shared
`Moment` for the length of the call, so whatever it writes on any connection is
stamped exactly. A stamp taken with no clock known is None: the timer starts at the
next `tick`, and `next_deadline()` asks for one at once (a value in the past).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

import h11

from . import _http_auth
from . import _jsonrpc as jr
from ._base import missing_wall_time
from ._errors import INVALID_REQUEST, LocalProtocolError, RemoteProtocolError
from ._events import Event
from ._framing import Ends
from ._http import (
    JSON,
    Headers,
    HeadScanner,
    decode_headers,
    error_body,
    plain_fields,
    plain_head,
    reason_phrase,
    single_header,
    slot_setters,
)
from ._http_headers import ClientView
from ._resource_auth import AccessToken, VerificationResult
from ._state import HTTPConnectionState, ResponseState, StreamState

if TYPE_CHECKING:
    from ._http_server import HTTPServerEndpoint, Stream

__all__ = [
    "HTTPExchange",
    "HTTPLimits",
    "HTTPRequestRejected",
    "HTTPServerConnection",
    "Moment",
    "Refusal",
    "RequestHead",
    "ResponseSink",
    "StreamState",
]

# -inf rather than 0: whatever the caller's clock (a loop clock may start anywhere, even
# below zero), a deadline of -inf is always due, so a timer armed from it fires at once and
# the tick that follows stamps the timer properly.
NEVER: Final = -math.inf  # a deadline in the past: "call tick() now"
# 16 KiB: large enough that a body arrives in few calls, small enough that what h11 holds
# past a message's end (re-read for the next head's scanner) stays cheap.
_FEED: Final = 16 * 1024  # bytes handed to h11 at a time (see HTTPServerConnection._feed)
# An SSE comment line (WHATWG HTML, "Server-sent events": a line starting with a colon is
# ignored). Proxies and load balancers close connections that stay silent, often after 60 s;
# a comment every `keepalive_interval` keeps a slow tool call or a listen stream alive
# without carrying an event a client would have to interpret. 2026-07-28 names comments as
# the keep-alive for long streams.
_KEEPALIVE: Final = b": keep-alive\n\n"
# Built once: every request that sends `Expect: 100-continue` (clients do for large
# bodies) gets the same interim response.
_CONTINUE: Final = h11.InformationalResponse(status_code=100, headers=[])

# The enum members tested per request, read from here: CPython 3.11 does not specialise an
# attribute read on a class, so a member read through its enum costs about 900
# instructions, a global a few dozen (as `_http_server` and `_http_client` do).
_IDLE: Final = HTTPConnectionState.IDLE
_RECEIVING: Final = HTTPConnectionState.RECEIVING
_RESPONDING: Final = HTTPConnectionState.RESPONDING
_NOT_STARTED: Final = ResponseState.NOT_STARTED
_SENDING: Final = ResponseState.SENDING
_ENDED: Final = ResponseState.ENDED
_PENDING: Final = StreamState.PENDING
_STREAMING: Final = StreamState.STREAMING
_END: Final = h11.EndOfMessage()


# =========================================================================== events


@dataclass(frozen=True, slots=True)
class HTTPRequestRejected(Event):
    """The HTTP layer answered a request itself with an error status (for your logs).

    It exists because these refusals never reach an MCP connection: without the event a
    probing client or a misconfigured proxy would leave no trace in the server's logs.
    """

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
    (`TrustedProxies`); build links back to the server from `view.base_url`. With
    `auth=`, the endpoint also fills in `token`: the verified token's claims (never
    the token itself), whose principal the request runs as.

    Latin-1 because RFC 9110 (5.5) treats bytes above 0x7F in a field value as opaque:
    decoding them as Latin-1 keeps every byte, one character each, and nothing a peer sends
    can fail to decode. Frozen, because the endpoint replaces the head (with `view`, then
    `token`) rather than changing it under code that already holds it.
    """

    method: str
    target: str
    headers: Headers
    peer: str | None = None
    scheme: str = "http"
    view: ClientView | None = None
    token: AccessToken | None = None

    def __init__(
        self,
        method: str,
        target: str,
        headers: Headers,
        peer: str | None = None,
        scheme: str = "http",
        view: ClientView | None = None,
        token: AccessToken | None = None,
    ) -> None:
        # (The generated `__init__`, written out: see `slot_setters`. The same fields,
        # in the same order, with the same defaults.)
        _HEAD_METHOD(self, method)
        _HEAD_TARGET(self, target)
        _HEAD_HEADERS(self, headers)
        _HEAD_PEER(self, peer)
        _HEAD_SCHEME(self, scheme)
        _HEAD_VIEW(self, view)
        _HEAD_TOKEN(self, token)

    def header(self, name: str) -> str | None:
        """The first value of a header, or None."""
        value, _ = single_header(self.headers, name.lower())
        return value


(
    _HEAD_METHOD,
    _HEAD_TARGET,
    _HEAD_HEADERS,
    _HEAD_PEER,
    _HEAD_SCHEME,
    _HEAD_VIEW,
    _HEAD_TOKEN,
) = slot_setters(RequestHead, "method", "target", "headers", "peer", "scheme", "view", "token")


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

    # 16 KiB is well above any real MCP request head (a bearer token, the mirrored headers)
    # and of the order common servers allow (nginx refuses a header line over 8 KiB by
    # default); h11 applies it while a head is incomplete, `HeadScanner` to the whole head.
    max_header_bytes: int = 16 * 1024
    # None follows the engine's message limit (one body is one message); `max_output_bytes`
    # None follows the engine's output limit, so the two layers never disagree by default.
    max_body_bytes: int | None = None
    max_output_bytes: int | None = None
    # 10,000 sessions and 10,000 exchanges as the official SDK's DEFAULT_MAX_SESSIONS: each
    # holds an engine, so the bound is memory, and above it new clients get 503 while the
    # existing ones keep working.
    max_sessions: int = 10_000
    # 32 concurrent requests is far above what one client does in practice (SDK clients run
    # a handful), and bounds what one session can pin.
    max_streams_per_session: int = 32
    max_exchanges: int = 10_000
    # What waits for a GET stream that is not connected: a client that never opens one must
    # not make the server keep every list_changed it was ever sent.
    max_backlog_messages: int = 256
    # 10 s for a head defeats slow-loris clients (a byte every few seconds) while being
    # generous to any real client. 60 s between requests frees an idle socket within a
    # minute and still lets a client working in bursts reuse its connection. 30 minutes of
    # session idleness lets an interactive user step away without losing the session, while
    # abandoned sessions still go within the hour.
    header_timeout: float | None = 10.0
    idle_timeout: float | None = 60.0
    session_idle_timeout: float | None = 1800.0
    # 15 s of silence commits an "auto" response to SSE, well below nginx's default
    # `proxy_read_timeout` of 60 s, so the keep-alives start before a proxy gives up on a
    # silent response.
    sse_after: float | None = 15.0
    keepalive_interval: float | None = 15.0

    def __post_init__(self) -> None:
        """Zero or a negative number would not mean "no limit" but "refuse everything" (or a
        timer that is always due), so it is refused here; None is the way to say no limit.
        """
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


# ========================================================================== shared


class Moment:
    """The clocks of the call in progress, one per endpoint, shared by its HTTP objects.

    `now` (the caller's monotonic clock) stamps the timers; `wall` (seconds since the
    epoch) goes to the MCP connections for sealed 2026-07-28 `requestState`. Both are
    None outside a call that was given them. `enter` sets what a call was given (and
    keeps what an enclosing call set otherwise); `leave` puts the previous back.

    One per endpoint rather than per connection, because an answer given through one
    connection's MCP engine is written onto another's socket (`pump`); the write must be
    stamped with the clock of the call in progress, whichever connection it lands on.
    """

    __slots__ = ("now", "wall")

    def __init__(self) -> None:
        self.now: float | None = None
        self.wall: float | None = None

    def enter(self, now: float | None, wall: float | None = None) -> tuple[Any, Any]:
        """Nested calls (a pump inside a receive) keep the outer call's clocks unless they were
        given their own: a call without `now` must not erase the clock another call is
        running under.
        """
        saved = (self.now, self.wall)
        if now is not None:
            self.now = now
        if wall is not None:
            self.wall = wall
        return saved

    def leave(self, saved: tuple[Any, Any]) -> None:
        """Restoring, not clearing: an outer call still in progress keeps its clocks."""
        self.now, self.wall = saved


@dataclass(slots=True)
class Refusal:
    """An error answer the HTTP layer gives itself: its status and, with `jsonrpc`, a
    JSON-RPC error body (otherwise plain text); `close` ends the TCP connection after.

    Mutable on purpose: the auth layer adds a `WWW-Authenticate` header to a refusal built
    elsewhere. The code defaults to -32600 because most refusals at this layer are about the
    request's shape, not its content.
    """

    status: int
    message: str
    code: int = INVALID_REQUEST
    request_id: Any = None
    data: Any = None
    jsonrpc: bool = True
    close: bool = False
    headers: tuple[tuple[str, str], ...] = ()


class ResponseSink(Protocol):
    """Where an `HTTPExchange` writes its response: h11 (`HTTPServerConnection`) or a
    buffer (a standalone exchange). Each write says whether it went out.

    The seam between the request-level rules and HTTP/1.1 framing: a standalone exchange
    (ASGI, HTTP/2) and an h11 connection obey the same rules above it, so a server behind
    uvicorn refuses exactly what ours refuses.
    """

    def send_response(self, status: int, headers: Headers, body: bytes, close: bool) -> bool:
        """A whole response; False when none can go out any more (nothing is sent)."""
        ...

    def start_response(self, status: int, headers: Headers) -> bool:
        """The head of a response whose body follows; False as for `send_response`."""
        ...

    def send_body(self, data: bytes) -> bool:
        """Body bytes of a started response; False when it is not (or no longer) open."""
        ...

    def end_response(self) -> None:
        """End a started response (nothing when none is open)."""
        ...

    @property
    def output_backlog(self) -> int:
        """Bytes written and not yet taken by `data_to_send()`."""
        ...

    def drop_for_overflow(self, reason: str) -> None:
        """The client does not read: give up on it."""
        ...


def _deadline(base: float | None, delta: float | None) -> float | None:
    """An unstamped base means the timer started in a call that had no clock; -inf asks for a
    tick now, which stamps it (see the module's docstring on time).
    """
    if delta is None:
        return None
    if base is None:
        return NEVER  # never stamped: the next tick starts it
    return base + delta


# ========================================================================= exchange


class _Buffer:
    """The response sink of a standalone exchange: the status and headers, and the
    body bytes until the server takes them.

    It plays the role h11 plays for a connection: it keeps the response's phase, so a second
    response for one request is refused the same way h11 would refuse it.
    """

    __slots__ = ("close_connection", "exchange", "out", "out_len", "phase", "response")

    def __init__(self, exchange: HTTPExchange) -> None:
        self.exchange = exchange
        self.phase = _NOT_STARTED
        self.response: tuple[int, Headers] | None = None
        self.close_connection = False
        self.out: list[bytes] = []
        self.out_len = 0

    def send_response(self, status: int, headers: Headers, body: bytes, close: bool) -> bool:
        if self.phase is not _NOT_STARTED or self.exchange.closed:
            return False
        self.response = (status, headers)
        self.close_connection = close
        if body:
            self.out.append(body)
            self.out_len += len(body)
        self.phase = _ENDED
        self.exchange.endpoint.mark_ready(self.exchange)
        return True

    def start_response(self, status: int, headers: Headers) -> bool:
        if self.phase is not _NOT_STARTED or self.exchange.closed:
            return False
        self.response = (status, headers)
        self.phase = _SENDING
        self.exchange.endpoint.mark_ready(self.exchange)
        return True

    def send_body(self, data: bytes) -> bool:
        if self.phase is not _SENDING:
            return False
        self.out.append(data)
        self.out_len += len(data)
        self.exchange.endpoint.mark_ready(self.exchange)
        return True

    def end_response(self) -> None:
        if self.phase is _SENDING:
            self.phase = _ENDED
            self.exchange.endpoint.mark_ready(self.exchange)

    @property
    def output_backlog(self) -> int:
        return self.out_len

    def drop_for_overflow(self, reason: str) -> None:
        """The close is deferred because this runs inside a write the endpoint is making:
        reporting the lost stream there would re-enter the endpoint mid-route.
        """
        self.exchange.defer(self.exchange.close(reason))
        self.out.clear()
        self.out_len = 0
        self.exchange.endpoint.mark_ready(self.exchange)  # so the adapter looks (and ticks)

    def take(self) -> bytes:
        """One body chunk is returned as is, without a join: most responses are one JSON body."""
        out = self.out
        if not out:
            return b""
        data = out[0] if len(out) == 1 else b"".join(out)
        out.clear()
        self.out_len = 0
        return data


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

    __slots__ = (
        "_body",
        "_body_len",
        "_buffer",
        "_closed",
        "_complete_seen",
        "_declared",
        "_deferred",
        "_dropping",
        "_head",
        "_last_write",
        "_refusal",
        "_responded",
        "_sink",
        "_started",
        "_stream",
        "auth_pending",
        "endpoint",
    )

    def __init__(self, endpoint: HTTPServerEndpoint, sink: ResponseSink | None = None) -> None:
        self.endpoint = endpoint
        self._buffer: _Buffer | None = None
        self._sink: ResponseSink
        # A standalone exchange writes into its own buffer, which the ASGI (or HTTP/2) layer
        # reads; one run by `HTTPServerConnection` writes through h11 on the socket's
        # behalf.
        if sink is None:
            self._buffer = self._sink = _Buffer(self)
        else:
            self._sink = sink
        self._head: RequestHead | None = None
        self._body: list[bytes] = []
        self._body_len = 0
        self._declared = 0  # the Content-Length the head declared (0: none)
        self._dropping: Ends | None = None  # a body over the limit, read and not kept
        self._refusal: Refusal | None = None
        self._responded = False
        self._complete_seen = False
        self._stream: Stream | None = None
        self._closed = False
        self._started: float | None = None
        self._last_write: float | None = None
        self._deferred: list[Event] = []
        #: A request waiting for its token's verification (`_http_auth`): its head,
        #: body and token. Package-internal.
        self.auth_pending: tuple[RequestHead, bytes, str] | None = None

    # ----------------------------------------------------------------- public

    @property
    def head(self) -> RequestHead | None:
        """The request head as the endpoint judged it (`view` filled in), once received."""
        return self._head

    @property
    def response(self) -> tuple[int, Headers] | None:
        """`(status, headers)` of the response, once decided; None before."""
        buffer = self._buffer
        return buffer.response if buffer is not None else None

    @property
    def close_connection(self) -> bool:
        """True when the connection under this exchange should not carry another request."""
        buffer = self._buffer
        return buffer.close_connection if buffer is not None else False

    @property
    def finished(self) -> bool:
        """True when the response is complete: after `data_to_send()`, nothing follows.
        A response cut short (`closed` first) never is: the server must drop it, not end
        it as if it were whole."""
        buffer = self._buffer
        return buffer is not None and buffer.phase is _ENDED

    @property
    def closed(self) -> bool:
        """True once `close()` was called or the client counted as not reading."""
        return self._closed

    @property
    def wants_body(self) -> bool:
        """False once the response is decided before the body is in (a refusal): the
        rest of the body need not be read.

        A server that stops reading a refused body must also close the connection (the rest
        of the body would be read as the next request); `close_connection` says so.
        """
        return not self._responded and self._refusal is None and not self._complete_seen

    @property
    def responded(self) -> bool:
        """True once a response (or its head) went out for this request."""
        return self._responded

    @property
    def over_limit(self) -> bool:
        """True when the body is (or was declared) over the limit: it is being dropped."""
        return self._dropping is not None

    @property
    def stream(self) -> Stream | None:
        """The endpoint's stream riding on this response, if any."""
        return self._stream

    def data_to_send(self) -> bytes:
        """The response body bytes queued so far.

        Reading the output clears the ready mark, so a later `pump()` names this exchange
        only if something new was written.
        """
        self.endpoint.mark_read(self)
        buffer = self._buffer
        return buffer.take() if buffer is not None else b""

    def receive_head(self, head: RequestHead, *, now: float | None = None) -> list[Event]:
        """The request line and headers: checked at once (Host/Origin, path, method, media
        types, a declared body too large), so a refusal needs no body.

        Judging at the head is what lets a 413 or 403 go out while the client is still
        sending (with `wants_body` False the server may stop reading and close).
        """
        return self._call(now, None, self._begin, head)

    def receive_body(self, data: bytes, *, now: float | None = None) -> list[Event]:
        """A chunk of the request body (kept as given; joined once at the end).

        Chunks are kept as given and joined once: a body arriving in many small reads costs
        one copy, not one per chunk.
        """
        return self._call(now, None, self._body_chunk, data)

    def receive_end(
        self, *, now: float | None = None, wall_time: float | None = None
    ) -> list[Event]:
        """The body is complete: the request becomes MCP work. `wall_time` (seconds since
        the epoch) judges the expiry of a sealed 2026-07-28 `requestState`.

        The end of the body is when the request becomes MCP work: a JSON-RPC message is one
        whole JSON text, and nothing about it can be judged from part of it.
        """
        return self._call(now, wall_time, self._end_of_request, None)

    def receive_token_verification(
        self,
        result: VerificationResult,
        *,
        now: float | None = None,
        wall_time: float | None = None,
    ) -> list[Event]:
        """The answer to this exchange's `TokenVerificationNeeded`: an `AccessToken`,
        `InvalidToken` or `VerifierUnavailable` (see `mcp_core.auth`).

        Verification is asynchronous by nature (a JWKS fetch, an introspection call), so the
        request is parked with its body and resumed here; the engine never waits.
        """
        return self._call(now, wall_time, self._verified, result)

    def close(self, reason: str = "client went away") -> list[Event]:
        """The client is gone: settle what rode on this request (a 2026-07-28 request is
        cancelled; a legacy stream stays resumable).

        A dropped connection means different things per era (see
        `HTTPServerEndpoint.stream_lost`), which is why the exchange does not decide: it
        hands the stream back to the endpoint.
        """
        events, self._deferred = self._deferred, []
        if self._closed and self._stream is None:
            return events
        self._closed = True
        stream = self._stream
        if stream is None:
            return events
        return events + self.endpoint.stream_lost(stream, reason)

    def tick(self, now: float) -> list[Event]:
        """Run the timers: SSE commit and keep-alive comments.

        A timer that was never stamped (no clock was known) is stamped by its first tick:
        the timer then runs a full interval from there, never less.
        """
        moment = self.endpoint.moment
        saved = moment.enter(now)
        try:
            if self._started is None:
                self._started = now
            if self._last_write is None:
                self._last_write = now
            events, self._deferred = self._deferred, []
            if not self._closed:
                self._run_timers(now)
            if self._deferred:
                events += self._deferred
                self._deferred = []
            return events
        finally:
            moment.leave(saved)

    def next_deadline(self) -> float | None:
        """When `tick` next has work; a value in the past means now; None: never.

        A pending response counts down to the SSE commit, a streaming one to the next
        keep-alive; a response that can only be JSON has no timer, since there is nothing it
        could send while the handler works.
        """
        if self._deferred:
            return NEVER
        if self._closed:
            return None
        limits = self.endpoint.limits
        stream = self._stream
        if stream is None:
            return None
        state = stream.state
        if state is _PENDING:
            return _deadline(self._started, limits.sse_after) if stream.can_sse else None
        if state is _STREAMING:
            return _deadline(self._last_write, limits.keepalive_interval)
        return None

    # --------------------------------------------- the endpoint's response API

    def respond(
        self, status: int, headers: Headers, body: bytes = b"", *, close: bool = False
    ) -> None:
        """A whole response (status, headers, body), unless one already went out.

        The content length is always set: without it HTTP/1.1 would have to close the
        connection to mark the end of the body, and the connection could not be kept alive.
        """
        if self._responded:
            return
        if self._sink.send_response(
            status, [("content-length", str(len(body))), *headers], body, close
        ):
            self._responded = True

    def respond_json(self, status: int, body: bytes, headers: Headers | None = None) -> None:
        """A whole `application/json` response."""
        if headers:
            self.respond(status, [("content-type", JSON), *headers], body)
        else:
            self.respond(status, [("content-type", JSON)], body)

    def refuse(self, refusal: Refusal, head: RequestHead | None = None) -> list[Event]:
        """Answer with a refusal (a JSON-RPC error body, or plain text) and report it.
        `head` is the request's, when it was refused before the exchange took it.

        A 405 carries no body: its `Allow` header says all there is to say, and a JSON-RPC
        body would make a legacy client's probe (SPEC-NOTES 4.2: POST, then GET on 405) read
        it as a modern server's error.
        """
        if head is not None and self._head is None:
            self._head = head
        head = self._head
        headers = list(refusal.headers)
        # A JSON-RPC body where a JSON-RPC client will read it (2026-07-28's status table
        # puts errors in 400 and 404 bodies); plain text for statuses a non-MCP client may
        # get (a bad Host, a wrong path), which should not look like an MCP answer.
        if refusal.jsonrpc:
            body = error_body(refusal.request_id, refusal.code, refusal.message, refusal.data)
            headers.append(("content-type", JSON))
        else:
            body = refusal.message.encode("utf-8") if refusal.status != 405 else b""
            if body:
                headers.append(("content-type", "text/plain; charset=utf-8"))
        self.respond(refusal.status, headers, body, close=refusal.close)
        return [
            HTTPRequestRejected(
                head.method if head else "",
                head.target if head else "",
                refusal.status,
                refusal.message,
            )
        ]

    def refuse_unread_body(self) -> list[Event]:
        """413 at the head, for a declared Content-Length over the limit, without
        reading the body; the connection under it closes.

        Closing is the only safe end: the unread body would otherwise be parsed as the next
        request on this connection.
        """
        return self._refuse_body(Ends(0), self._declared, close=True)

    def start_sse(self, headers: Headers) -> None:
        """Start a `200` response whose body is an SSE stream.

        The last write is stamped here because the head itself is what a proxy sees: the
        keep-alive interval counts from it.
        """
        if self._responded:
            return
        if self._sink.start_response(200, headers):
            self._responded = True
            self._last_write = self.endpoint.moment.now

    def send(self, data: bytes) -> None:
        """Bytes of the open SSE stream; a client that reads none of it is dropped
        once `max_output_bytes` wait.

        RELIABILITY.md rule 3: a limit that is hit must have a visible effect. A client that
        stops reading an SSE stream would otherwise make the server buffer every event sent
        to it; dropping the stream settles it like a disconnect, which each era already
        knows how to handle.
        """
        if self._closed:
            return
        sink = self._sink
        if not sink.send_body(data):
            return
        self._last_write = self.endpoint.moment.now
        if sink.output_backlog > self.endpoint.max_output_bytes:
            # The client is not reading: drop it rather than buffer without bound.
            sink.drop_for_overflow("client is not reading")

    def end(self) -> None:
        """End the open SSE stream (the response is complete)."""
        self._sink.end_response()

    def attach(self, stream: Stream) -> None:
        """`stream` now rides on this response; its timers start now.

        The SSE timer counts from the attach, not from the head: a request that waited for
        its token verification must still get its full `sse_after`.
        """
        self._stream = stream
        self._started = self.endpoint.moment.now

    def detach(self, stream: Stream) -> None:
        """`stream` no longer rides on this response."""
        if self._stream is stream:
            self._stream = None

    def grant(self, head: RequestHead) -> None:
        """The request's credentials were granted: `head` carries its token.

        The new head carries the verified token, so the principal the request runs as comes
        from the credential, never from anything the request says about itself.
        """
        self._head = head

    def run_step(
        self, now: float | None, wall: float | None, step: Callable[[], list[Event]]
    ) -> list[Event]:
        """Run `step` as this exchange's input would run (the clocks set, deferred
        events returned with its own): for an endpoint that resumes a request it
        had parked (mcp_core._session_routing)."""
        return self._call(now, wall, lambda _: step(), None)

    def defer(self, events: list[Event]) -> None:
        """Events raised where none can be returned: the next call returns them.

        Some events arise in writes (a client dropped for not reading) where the caller is
        the endpoint, which has no events to return; they come back from the next call on
        this exchange, which is the one the adapter makes for it.
        """
        self._deferred += events

    # ------------------------------------------------------------------ input

    def _call(
        self,
        now: float | None,
        wall: float | None,
        step: Callable[[Any], list[Event]],
        arg: Any,
    ) -> list[Event]:
        """Deferred events go out first, so events keep the order in which they happened."""
        moment = self.endpoint.moment
        saved = moment.enter(now, wall)
        try:
            events, self._deferred = self._deferred, []
            if not self._closed:
                events += step(arg)
            if self._deferred:
                events += self._deferred
                self._deferred = []
            return events
        finally:
            moment.leave(saved)

    def _verified(self, result: VerificationResult) -> list[Event]:
        return _http_auth.resume(self, result)

    def _begin(self, head: RequestHead) -> list[Event]:
        """The head is admitted before any body is read (Host/Origin, path, method, media
        types) so that a refusal costs the server no body. A declared Content-Length over
        the limit starts the dropping at once; past twice the limit reading to the end is
        not worth it, and the connection is closed instead.
        """
        if self._head is not None:
            raise LocalProtocolError("receive_head() was already called for this exchange")
        endpoint = self.endpoint
        head, refusal = endpoint.admit(head)
        self._head = head
        if refusal is None:
            length, _ = single_header(head.headers, "content-length")
            declared = self._declared = (
                # `isdigit` rather than int(): int() accepts signs, underscores and spaces,
                # which RFC 9110 8.6 does not, and h11 has already refused a malformed
                # length.
                int(length) if length is not None and length.isdigit() else 0
            )
            if declared > endpoint.max_body_bytes:
                if declared > 2 * endpoint.max_body_bytes:
                    # Not worth reading to its end: refuse now (the connection closes).
                    return self.refuse_unread_body()
                self._dropping = Ends(self._window())
        # A refusal that must close (a framing doubt) goes out at once; the others wait for
        # the body's end (see `_end_of_request`).
        if refusal is not None and refusal.close:
            return self.refuse(refusal)
        self._refusal = refusal
        return []

    def _body_chunk(self, data: bytes) -> list[Event]:
        """The limit is counted over the chunks as they come, so memory never holds more than
        the limit; the two ends of an oversized body are kept (RELIABILITY.md 1.3) because
        the id of a JSON-RPC request sits near its start, and a refusal carrying the id lets
        the client match it to its call.
        """
        # Already answered or refused: the rest of the body is read (so the connection can
        # be reused) and thrown away.
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
        # Past twice the limit, reading on is the attacker's choice of cost: refuse, close.
        if dropping.size > 2 * limit:
            return self._refuse_body(dropping, dropping.size, close=True)
        return []

    def _window(self) -> int:
        """Half the limit at most, so that the two kept ends of a small limit never hold more
        than the limit itself.
        """
        return min(jr.PEEK_BYTES, self.endpoint.max_body_bytes // 2)

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
            endpoint.body_setting,
            endpoint.config.limits,
        )
        return endpoint.refuse_over_limit(self, head, refusal, close=close)

    def _end_of_request(self, _: None) -> list[Event]:
        """A refusal decided at the head is sent only now, after the body, when the head did
        not ask to close: answering before the client finished sending would make many
        clients see a reset instead of the answer.
        """
        head = self._head
        if head is None:
            raise LocalProtocolError("receive_end() before receive_head()")
        if self._complete_seen:
            raise LocalProtocolError("receive_end() was already called for this exchange")
        self._complete_seen = True
        if self._responded:
            return []
        refusal, self._refusal = self._refusal, None
        if refusal is not None:
            return self.refuse(refusal)
        if self._dropping is not None:
            return self._refuse_body(self._dropping, self._dropping.size, close=False)
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        self._body = []
        return self.endpoint.serve(self, head, body)

    # ------------------------------------------------------------------ time

    def _run_timers(self, now: float) -> None:
        """The SSE commit is a decision of the endpoint (it may prime the stream and flush held
        answers), so the exchange only says when; a keep-alive is plain bytes and needs no
        endpoint.
        """
        limits = self.endpoint.limits
        stream = self._stream
        if stream is None:
            return
        state = stream.state
        if state is _PENDING:
            started = self._started
            if (
                limits.sse_after is not None
                and stream.can_sse
                and started is not None
                and started + limits.sse_after <= now
            ):
                self.endpoint.commit(stream)
        elif state is _STREAMING:
            interval = limits.keepalive_interval
            last = self._last_write
            if interval is not None and last is not None and last + interval <= now:
                self.send(_KEEPALIVE)


# ======================================================================= connection


class HTTPServerConnection:
    """One TCP connection of the HTTP server (an h11 server connection inside).

    Feed bytes with `receive_data` (`b""` at end of stream), write `data_to_send()`,
    and close the socket once `closed` is true and the output is written. `tick(now)`
    runs the timers; `next_deadline()` says when. Passing `now=` to `receive_data`
    (and to `endpoint.pump` for answers given later) makes timers exact; without it
    they start at the next `tick` (and `next_deadline()` asks for one at once).
    `peer` is the client's address (it decides whether proxy headers are believed,
    see `TrustedProxies`) and `scheme` how it reached us (`https` behind TLS).

    This layer owns what is HTTP/1.1 about a request: framing, the head's size and
    line endings, 100-continue, pipelining, the header and idle timeouts. Each request
    is an `HTTPExchange`, which owns the rest; this connection is its `ResponseSink`
    (`send_response`, `start_response`, `send_body`, `end_response`: package-internal,
    for the exchange).
    """

    __slots__ = (
        "_closed",
        "_deferred",
        "_direct",
        "_direct_close",
        "_direct_read",
        "_exchange",
        "_h11",
        "_h11_clean",
        "_input",
        "_input_pending",
        "_out",
        "_out_len",
        "_paused_bytes",
        "_phase",
        "_processing",
        "_scanner",
        "_since",
        "_unscanned",
        "endpoint",
        "peer",
        "scheme",
    )

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
        # h11 bounds an incomplete event (the head) by the same limit, so a head that never
        # ends is refused by h11 even before the scanner sees it all.
        self._h11 = h11.Connection(
            h11.SERVER, max_incomplete_event_size=endpoint.limits.max_header_bytes
        )
        # True while h11 is between requests with nothing buffered: only then may a
        # request bypass it (`_direct_request`), since h11 is then in the very state a
        # request it never saw would leave it in.
        self._h11_clean = True
        # The exchange read without h11: where its response is (`_D_*`, 0 for none),
        # whether the request is all read, and whether the connection closes after it.
        self._direct = 0
        self._direct_read = False
        self._direct_close = False
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
        # Input that waits for the next tick: bytes after a request that arrived while its
        # response was open (pipelining), processed once that response is done.
        self._input_pending = False
        self._processing = False
        # What arrived while a response was open, counted against the pipelining bound.
        self._paused_bytes = 0
        self._phase = _IDLE
        # When the current phase began: the idle and header timers both count from it.
        self._since: float | None = now if now is not None else endpoint.moment.now

    # ----------------------------------------------------------------- public

    @property
    def closed(self) -> bool:
        """True when the socket should be closed (after writing `data_to_send()`)."""
        return self._closed

    def data_to_send(self) -> bytes:
        """Everything queued for the socket."""
        self.endpoint.mark_read(self)
        out = self._out
        if not out:
            return b""
        data = out[0] if len(out) == 1 else b"".join(out)
        out.clear()
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

        The wall-time check comes before anything is read so that a misconfigured server
        fails at its first request with the fix in the message, not later at every retry.
        """
        endpoint = self.endpoint
        if wall_time is None and data and endpoint.config.request_state_sealer is not None:
            missing_wall_time()
        moment = endpoint.moment
        saved = moment.enter(now, wall_time)
        try:
            events, self._deferred = self._deferred, []
            if self._closed:
                return events
            if not data:
                return events + self.close("client closed the connection")
            # HTTP/1.1 allows pipelining (RFC 9112 9.3.2): the next request may arrive
            # before this response is done. It is kept unparsed until then, and bounded by
            # what one whole request may be (a head and a body), so a client cannot stream
            # unbounded data into a connection whose response is still open.
            if self._phase is _RESPONDING:
                # Only a pipelined request (or garbage) can arrive now; it waits
                # unparsed, so bound it here.
                self._paused_bytes += len(data)
                if self._paused_bytes > endpoint.limits.max_header_bytes + endpoint.max_body_bytes:
                    return events + self.close("client sent too much while a response was open")
            # The first byte of a new request moves the connection out of IDLE and starts
            # the header timer: a slow-loris client is timed from its first byte, not its
            # last.
            elif self._phase is _IDLE:
                self._set_phase(_RECEIVING)
            self._input += data
            return events + self._process()
        finally:
            moment.leave(saved)

    def close(self, reason: str = "connection closed") -> list[Event]:
        """The socket is gone (or the adapter gave up on it): settle what rode on it.

        Closing twice is harmless: the second call has nothing left to settle, and an
        adapter that sees both EOF and an error may well call it twice.
        """
        exchange = self._exchange
        if self._closed and (exchange is None or exchange.stream is None):
            return []
        self._closed = True
        if exchange is None:
            return []
        return exchange.close(reason)

    def tick(self, now: float) -> list[Event]:
        """Run the timers: header and idle timeouts, SSE commit, keep-alive comments.

        Input that arrived while a response was open (pipelining) is processed here, after
        that response ended: processing it inside the write that ended the response would
        re-enter the endpoint.
        """
        moment = self.endpoint.moment
        saved = moment.enter(now)
        try:
            if self._since is None:
                self._since = now
            events, self._deferred = self._deferred, []
            if self._input_pending and not self._closed:
                self._input_pending = False
                events += self._process()
            if self._closed:
                return events
            limits = self.endpoint.limits
            phase = self._phase
            exchange = self._exchange
            # Between requests the idle timer closes quietly (nothing to answer); while a
            # head or a body is arriving the header timer answers 408 (RFC 9110 15.5.9) and
            # closes, since the rest of that request can no longer be trusted.
            if phase is _IDLE:
                if limits.idle_timeout is not None and self._since + limits.idle_timeout <= now:
                    self._closed = True
            elif phase is _RECEIVING:
                if limits.header_timeout is not None and self._since + limits.header_timeout <= now:
                    events += self._refuse(
                        Refusal(408, "Request Timeout", jsonrpc=False, close=True)
                    )
            elif exchange is not None:
                events += exchange.tick(now)
            if self._deferred:
                events += self._deferred
                self._deferred = []
            return events
        finally:
            moment.leave(saved)

    def next_deadline(self) -> float | None:
        """When `tick` next has work; a value in the past means now; None: never."""
        if self._deferred or (self._input_pending and not self._closed):
            return NEVER
        if self._closed:
            return None
        limits = self.endpoint.limits
        phase = self._phase
        if phase is _IDLE:
            return _deadline(self._since, limits.idle_timeout)
        if phase is _RECEIVING:
            return _deadline(self._since, limits.header_timeout)
        exchange = self._exchange
        return exchange.next_deadline() if exchange is not None else None

    # ---------------------------------------------------- the response sink

    def send_response(self, status: int, headers: Headers, body: bytes, close: bool) -> bool:
        """A `connection: close` header is added when the body was left unread or untrusted:
        RFC 9112 9.6 asks a server that will close to say so, and the client then knows not
        to send another request on this connection. h11 refusing to send means the
        connection is already unusable, so it closes.
        """
        if self._direct:
            return self._direct_response(status, headers, body, close)
        h = self._h11
        # From IDLE too: a refusal of the connection's own (a timeout before any head)
        # answers a request h11 never saw.
        if h.our_state is not h11.SEND_RESPONSE and h.our_state is not h11.IDLE:
            return False
        if close:
            headers.append(("connection", "close"))
        try:
            self._emit(
                h.send(
                    h11.Response(status_code=status, headers=headers, reason=reason_phrase(status))
                )
            )
            if body:
                self._emit(h.send(h11.Data(data=body)))
            self._emit(h.send(_END))
        # h11 refuses a response it cannot frame for this request (a body on a HEAD, say):
        # the connection cannot go on in a known state, so it closes.
        except h11.LocalProtocolError:
            self._closed = True
            return True
        self._after_response()
        return True

    def start_response(self, status: int, headers: Headers) -> bool:
        """Only from SEND_RESPONSE: a streaming response needs a request that is fully
        received, which h11's state says; starting one from IDLE would be a response to no
        request.
        """
        if self._direct:
            return self._direct_start(status, headers)
        h = self._h11
        if h.our_state is not h11.SEND_RESPONSE:
            return False
        self._emit(
            h.send(h11.Response(status_code=status, headers=headers, reason=reason_phrase(status)))
        )
        return True

    def send_body(self, data: bytes) -> bool:
        if self._direct:
            if self._closed or self._direct != _D_BODY:
                return False
            if data:  # as h11's chunked writer: an empty chunk would read as the end
                self._emit(b"%x\r\n%b\r\n" % (len(data), data))
            return True
        if self._closed or self._h11.our_state is not h11.SEND_BODY:
            return False
        self._emit(self._h11.send(h11.Data(data=data)))
        return True

    def end_response(self) -> None:
        if self._direct:
            if self._direct == _D_BODY:
                self._direct = _D_DONE
                self._emit(b"0\r\n\r\n")
                self._after_response()
            return
        if self._h11.our_state is not h11.SEND_BODY:
            return
        try:
            self._emit(self._h11.send(_END))
        except h11.LocalProtocolError:
            self._closed = True
            return
        self._after_response()

    @property
    def output_backlog(self) -> int:
        return self._out_len

    def drop_for_overflow(self, reason: str) -> None:
        """The output is dropped with the client: a client that does not read will not read it,
        and keeping it would keep the memory the limit exists to protect.
        """
        self._deferred += self.close(reason)
        self._out.clear()
        self._out_len = 0
        self.endpoint.mark_ready(self)  # so the adapter looks (and ticks)

    # ------------------------------------------------------------------ input

    def _process(self) -> list[Event]:
        """Every h11 error closes the connection after an answer when one can still go out: an
        HTTP/1.1 message that failed to parse leaves no trustworthy boundary for the next
        one (h11 moves to ERROR and refuses to go on).
        """
        events: list[Event] = []
        self._processing = True
        h = self._h11
        try:
            while not self._closed:
                if self._direct:
                    break  # a request read directly is being answered (h11 would be PAUSED)
                if (
                    self._h11_clean
                    and self._input
                    and self._exchange is None
                    and self._direct_request(events)
                ):
                    # Answered at once (a refusal, a plain tool) with more input
                    # waiting: the loop takes the next request; else it is over.
                    if self._exchange is not None or not self._input:
                        break
                    continue
                if self._unscanned:
                    leftover, self._unscanned = self._unscanned, b""
                    if not self._scan(leftover, events):
                        break
                if self._exchange is not None and h.their_state is h11.MUST_CLOSE:
                    # The client said `Connection: close` and its response (an SSE
                    # stream, say) is still going out. RFC 9112 9.6: no later request
                    # is processed, and the connection closes after that response. What
                    # else the client sent waits unread (bounded as pipelined bytes are)
                    # and goes with the connection, whether it came in the request's own
                    # read or later: h11 would call it an error and cut the stream.
                    break
                try:
                    event = h.next_event()
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
                # PAUSED: h11 has a whole request and waits for our response before it
                # parses the next (HTTP/1.1 answers in order); the loop resumes from
                # `_after_response`.
                if event is h11.PAUSED:
                    break
                if type(event) is h11.Request:
                    events += self._on_head(event)
                elif type(event) is h11.Data:
                    events += self._on_body(bytes(event.data))
                elif type(event) is h11.EndOfMessage:
                    events += self._on_complete()
                    if self._exchange is not None or not (self._unscanned or self._input):
                        # Unanswered, h11 would say PAUSED; answered, with nothing left
                        # to read, NEED_DATA: either way the loop is over.
                        break
                elif type(event) is h11.ConnectionClosed:
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
        if len(data) <= _FEED:
            chunk = bytes(data)
            data.clear()
        else:
            chunk = bytes(data[:_FEED])
            del data[:_FEED]
        if not self._scan(chunk, events):
            return False
        self._h11_clean = False
        self._h11.receive_data(chunk)
        return True

    def _scan(self, data: bytes, events: list[Event]) -> bool:
        """Measure the head these bytes belong to, if one is arriving; False when it
        is refused (the connection then closes after the answer).

        h11 checks line framing loosely (it accepts a bare LF, as RFC 9112 2.2 allows);
        `HeadScanner` refuses it, because a proxy in front may split lines otherwise, and a
        disagreement on where a head ends is a request-smuggling shape.
        """
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
        """Malformed input: answer if a response can still go out, and close.

        No answer goes out once a response has started: a status line in the middle of a
        body would be read as body bytes. Closing is then the only signal left.
        """
        events: list[Event] = []
        exchange = self._exchange
        responded = exchange is not None and exchange.responded
        if self._direct:
            can_answer = self._direct == _D_RESPONSE
        else:
            can_answer = self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE)
        if not responded and can_answer:
            events += self._refuse(Refusal(status, message, jsonrpc=False, close=True))
        events += self.close("malformed HTTP")
        return events

    def _refuse(self, refusal: Refusal) -> list[Event]:
        """A refusal of the connection's own (a timeout, malformed HTTP), possibly before
        any head: it goes out through the current exchange, or a head-less one.

        A head-less exchange exists so that a timeout before any head still answers through
        the same path (and the same event) as every other refusal.
        """
        exchange = self._exchange
        if exchange is None:
            exchange = self._exchange = HTTPExchange(self.endpoint, sink=self)
        return exchange.refuse(refusal)

    def _on_head(self, request: h11.Request) -> list[Event]:
        """The body timer starts when the head is in; each chunk restarts it (`_on_body`), so a
        slow but steady upload is never cut while a stalled one is. `100 Continue` (RFC 9110
        10.1.1) is sent only when the body is wanted: a client waiting for it sends nothing
        if we refuse from the head, and we need not read a body we would drop.
        """
        self._set_phase(_RECEIVING)
        self._paused_bytes = 0
        head = RequestHead(
            request.method.decode("latin-1"),
            request.target.decode("latin-1"),
            decode_headers(request.headers),
            self.peer,
            self.scheme,
        )
        # (By position, as `_direct_request` makes them: see there.)
        exchange = self._exchange = HTTPExchange(self.endpoint, self)
        self._since = self.endpoint.moment.now  # the head is in: the timer now watches the body
        problem = _framing_problem(request)
        if problem is not None:
            # Framing another parser on the path (a proxy) may have read otherwise:
            # answer and close, so no byte after this head is ever read as a request.
            return exchange.refuse(
                Refusal(400, f"Bad Request: {problem}", jsonrpc=False, close=True), head
            )
        events = exchange.receive_head(head)
        if self._h11.they_are_waiting_for_100_continue:
            if exchange.over_limit:
                # Over the limit, and its body is not sent before we say 100: refuse and close.
                return events + exchange.refuse_unread_body()
            if exchange.wants_body:
                self._emit(self._h11.send(_CONTINUE))
        return events

    def _on_body(self, data: bytes) -> list[Event]:
        exchange = self._exchange
        assert exchange is not None
        if not exchange.wants_body:
            return []
        self._since = self.endpoint.moment.now  # each chunk restarts the body timer
        return exchange.receive_body(data)

    def _on_complete(self) -> list[Event]:
        """A request refused from its head is done once its body has been read, so the
        connection can move on to the next request at once (keep-alive).
        """
        self._set_phase(_RESPONDING)
        exchange = self._exchange
        assert exchange is not None
        if exchange.responded:
            # Answered from the head (a refusal): the request is over with its body.
            exchange.receive_end()
            self._after_response()
            return []
        return exchange.receive_end()

    def _after_response(self) -> None:
        """Both sides must be DONE for the next cycle (h11's rule for keep-alive); until then
        input waits. The trailing data is what h11 read past this request, the start of the
        next head, so the new scanner must measure it first.
        """
        if self._direct:
            # Read directly: h11 saw nothing, so it is still between requests, and the
            # next head is still whole in the input (the scanner has seen none of it).
            if self._direct == _D_DONE and self._direct_read:
                if self._direct_close:
                    self._closed = True
                    return
                self._direct = 0
                self._exchange = None
                self._set_phase(_IDLE)
                if not self._processing:
                    self._input_pending = bool(self._input)
            return
        h = self._h11
        if h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            self._exchange = None
            self._set_phase(_IDLE)
            # The next head starts with what h11 kept of the last slice: the scanner
            # sees those bytes before h11 parses them.
            self._unscanned = h.trailing_data[0]
            self._h11_clean = not self._unscanned
            self._scanner = HeadScanner(self.endpoint.limits.max_header_bytes)
            if not self._processing:
                self._input_pending = bool(self._unscanned or self._input)
        # h11 says the connection cannot be reused (HTTP/1.0, `Connection: close`, an
        # error): closing is the only correct next step.
        elif h.our_state in (h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._closed = True

    # ------------------------------------------------------- the direct path

    def _direct_request(self, events: list[Event]) -> bool:
        """Read the next request without h11 when it is whole in the input and of the
        plainest shape; False (nothing read) for any other, which h11 then parses.

        h11 is pure Python and costs about 200 calls per exchange; most requests an MCP
        server gets are one shape: `GET`/`POST`/`DELETE` in HTTP/1.1, one Host, at most
        one plain Content-Length within the body limit, no Transfer-Encoding, Expect,
        Upgrade or Connection (but `keep-alive`), every line CRLF-ended and every field
        as RFC 9112 writes it, the head within `max_header_bytes`. Each of these is
        checked here, by two regular expressions over the whole head; a request that
        passes is one h11 and `HeadScanner` would accept and frame the same way, so
        every refusal, malformed or unusual request still takes the h11 path and gets
        the answer it got before.
        """
        data = self._input
        endpoint = self.endpoint
        limit = endpoint.limits.max_header_bytes
        end = data.find(b"\r\n\r\n", 0, limit)  # bounded: a longer head is h11's 431
        if end < 0 or end + 4 > limit:
            return False
        text = data[: end + 2].decode("latin-1")
        line = _DIRECT_LINE.match(text)
        if line is None:
            return False
        headers = plain_fields(text, line.end())
        if headers is None:
            return False
        # Read from the head's index: the one pass over the fields it takes is the one
        # every later reader of this head (`single_header`, `accepted`, the Host and
        # mirrored-header checks) reuses.
        index = headers.folded or headers.by_name()
        hosts = index.get("host")
        if hosts is None or len(hosts) != 1:
            return False
        if "transfer-encoding" in index or "expect" in index or "upgrade" in index:
            return False
        connections = index.get("connection")
        if connections is not None:
            for value in connections:
                if value.lower() != "keep-alive":
                    return False  # another connection option: h11 decides
        length = 0
        lengths = index.get("content-length")
        if lengths is not None:
            value = lengths[0]
            if len(lengths) != 1 or not (value.isascii() and value.isdigit()) or len(value) > 18:
                return False
            length = int(value)
        if length > endpoint.max_body_bytes:
            return False
        total = end + 4 + length
        if len(data) < total:
            return False  # the body is still arriving: h11 reads it as it comes
        body = bytes(data[end + 4 : total]) if length else b""
        del data[:total]
        # What `_on_head`, `_on_body` and `_on_complete` do for a request h11 read.
        self._set_phase(_RECEIVING)
        self._paused_bytes = 0
        self._direct = _D_RESPONSE
        self._direct_read = False
        self._direct_close = False
        # (Both made with positional arguments only: a keyword in a class call costs a
        # dict made and unpacked again, about 900 instructions each, per request.)
        head = RequestHead(line.group(1), line.group(2), headers, self.peer, self.scheme)
        exchange = self._exchange = HTTPExchange(endpoint, self)
        self._since = endpoint.moment.now
        events += exchange.receive_head(head)
        if body:
            events += self._on_body(body)
        self._direct_read = True
        events += self._on_complete()
        return True

    def _direct_response(self, status: int, headers: Headers, body: bytes, close: bool) -> bool:
        """A whole response to a request read directly, written as h11 writes one.

        Every response the exchange builds declares its Content-Length (`respond`); a head
        h11 would refuse (a field it finds illegal, a length that does not match the
        body, a status without a body) closes the connection, as h11's refusal does.
        """
        if self._direct != _D_RESPONSE:
            return False
        if close:
            headers.append(("connection", "close"))
        self._direct = _D_DONE
        head = _direct_head(status, headers)
        if (
            head is None
            or status < 200
            or status in (204, 304)
            or _declared_length(headers) != len(body)
        ):
            self._closed = True
            return True
        self._direct_close = _closes(headers)
        self._emit(head + body if body else head)
        self._after_response()
        return True

    def _direct_start(self, status: int, headers: Headers) -> bool:
        """The head of a streamed response to a request read directly: chunked, as h11
        frames a body of unknown length for an HTTP/1.1 client (any Content-Length
        dropped, `Transfer-Encoding: chunked` added last)."""
        if self._direct != _D_RESPONSE:
            return False
        fields = [item for item in headers if item[0].lower() != "content-length"]
        fields.append(("Transfer-Encoding", "chunked"))
        head = _direct_head(status, fields)
        if head is None or status < 200 or status in (204, 304):
            self._direct = _D_DONE
            self._closed = True
            return True
        self._direct = _D_BODY
        self._direct_close = _closes(fields)
        self._emit(head)
        return True

    def _emit(self, data: bytes | None) -> None:
        """Every write marks the connection ready, so `pump()` can tell the adapter which
        sockets to wake without scanning all of them.
        """
        if data:
            self._out.append(data)
            self._out_len += len(data)
            self.endpoint.mark_ready(self)

    def _set_phase(self, phase: HTTPConnectionState) -> None:
        """The phase stamp is what the idle and header timers count from, so it moves only when
        the phase really changes.
        """
        if phase is not self._phase:
            self._phase = phase
            self._since = self.endpoint.moment.now


# The direct path (`HTTPServerConnection._direct_request`): where the response to a
# request read without h11 is.
_D_RESPONSE: Final = 1  # not started
_D_BODY: Final = 2  # a streamed (chunked) body is open
_D_DONE: Final = 3  # complete
# The request line it reads (the fields: `_http.plain_fields`).
_DIRECT_LINE: Final = re.compile(r"(GET|POST|DELETE) ([!-~]+) HTTP/1\.1\r\n")
_STATUS_LINES: dict[int, bytes] = {}


def _direct_head(status: int, headers: Headers) -> bytes | None:
    """A response head as h11 writes it, or None where h11 would refuse to send it."""
    line = _STATUS_LINES.get(status)
    if line is None:
        if not 100 <= status <= 999:
            return None
        line = b"HTTP/1.1 %d %b\r\n" % (status, reason_phrase(status))
        if len(_STATUS_LINES) < 64:  # bounded: statuses are few
            _STATUS_LINES[status] = line
    return plain_head(line, headers)


def _declared_length(headers: Headers) -> int | None:
    """The one Content-Length of a response, None when it has none, several that
    differ, one that is not digits, or a Transfer-Encoding (h11 would frame it
    otherwise or refuse it)."""
    length: int | None = None
    for name, value in headers:
        lower = name.lower()
        if lower == "content-length":
            if not (value.isascii() and value.isdigit()) or (
                length is not None and int(value) != length
            ):
                return None
            length = int(value)
        elif lower == "transfer-encoding":
            return None
    return length


def _closes(headers: Headers) -> bool:
    """Whether a response says `Connection: close` (h11 then closes after it)."""
    for name, value in headers:
        if name.lower() == "connection" and "close" in [
            token.strip().lower() for token in value.split(",")
        ]:
            return True
    return False


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
