"""Streamable HTTP, client side, both protocol eras, over h11; sans-IO.

Two objects, mirroring the server:

* `HTTPClientEndpoint`: one per MCP server URL, wrapping the `ClientConnection`. It
  turns every message the connection queues into an `HTTPRequest` (a POST with the
  right headers: `Accept`, `Content-Type`, `MCP-Protocol-Version`, `Mcp-Session-Id`
  and, in 2026-07-28, the mirrored `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*`), opens
  the legacy GET stream, resumes dropped streams with `Last-Event-ID`, and sends the
  DELETE when closed. It keeps what outlives one TCP connection: the session id, the
  tools' `x-mcp-header` parameters seen in `tools/list`, the streams to resume.
* `HTTPClientConnection`: one per TCP connection (an `h11.Connection(CLIENT)`
  inside). It runs one `HTTPRequest` at a time and may be reused (keep-alive) once it
  is no longer `busy`. JSON bodies and SSE events are fed to the `ClientConnection`;
  its events come out of `receive_data`.

Driving it (one task per `HTTPRequest`)::

    mcp = ClientConnection(ClientConfig())
    client = HTTPClientEndpoint(mcp, host="127.0.0.1:8000")
    mcp.connect()

    def flush():                                  # after every step that may queue output
        out = client.pump()
        for request in out.requests:
            spawn(run, request)
        for http in out.aborts:                   # 2026-07-28 cancel: close that socket
            cancel_task_running(http)
        handle(out.events)

    def run(request):
        sleep(request.delay)                      # the server's SSE `retry`, for resumptions
        sock, http = pool.get(fresh=request.fresh)  # http = client.new_connection() per socket
        if not http.start(request):               # cancelled while waiting
            return pool.put(sock, http)
        sock.sendall(http.data_to_send())
        while http.busy:
            handle(http.receive_data(sock.recv(65536)))   # b"" at EOF
            flush()
        pool.put(sock, http) if not http.closed else sock.close()

Decisions:

* A status >= 400 whose body is a JSON-RPC error is that request's answer (fed to the
  connection as an error response with the request's id), so the `server/discover`
  probe follows the connection's own rule (-32022 with `supported` means modern and
  retry; anything else means legacy). A status without such a body fails the request
  locally (`RequestFailed`), which makes the probe fall back to `initialize`.
* 404 on a request carrying `Mcp-Session-Id` means the session is gone:
  `SessionExpired` comes out and the `ClientConnection` is closed (every request in
  flight fails); start again with a new connection.
* A legacy SSE stream that ends without the answer is resumed with GET +
  `Last-Event-ID` after the server's `retry` (or `default_retry_ms`), at most
  `max_reconnects` times in a row; without an event id it fails. A 2026-07-28 stream
  is never resumed: the request fails and the application re-issues it (new id).
* A request sent on a reused keep-alive connection that the server closes before a
  single byte of the answer is sent again, once, with `fresh` set (on a new
  connection, never an idle one). Servers close idle connections when they like
  (their keep-alive timeout), and a request sent just then is lost unread; a slow
  server makes the race likely: Node's keep-alive timer, once its loop has stalled
  past its 5 s, fires before the socket is read. Browsers resend in this case for the
  same reason. What went out on a new connection, or got any byte of an answer, is
  never sent twice: the server may have acted on it (RFC 9110 9.2.2).
* Authorization (`hold_challenges=True`, set by an adapter that runs the OAuth
  flow): a 401, or a 403 whose Bearer challenge says `insufficient_scope`, does not
  fail the request: it is held and `AuthorizationChallenged` comes out. The adapter
  runs `mcp_core.oauth`'s flow, sets `authorization` (the header every request
  carries from then on, set as the request is started, so queued and resent ones
  get the new token too) and calls `retry_challenged()`, or `fail_challenged()`.
  A request is retried at most once after a 401 and once after a 403, so a server
  that keeps refusing ends in a failure, not a loop of consent screens.
* In 2026-07-28 a cancelled request is not announced with a POST: its TCP connection
  is closed (`ClientOutbox.aborts`), which the server treats as the cancellation.
* `tools/list` results of 2026-07-28 are filtered before the connection sees them:
  tools with invalid `x-mcp-header` annotations are dropped (`ToolsFiltered` says
  which and why, for a warning), and the valid annotations are kept to build the
  `Mcp-Param-*` headers of later `tools/call` requests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import h11

from . import _jsonrpc as jr
from ._base import META_PROTOCOL_VERSION, OutgoingMessage, RequestId, State
from ._client import ClientConnection
from ._errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    LIMIT_EXCEEDED,
    LocalProtocolError,
    RemoteProtocolError,
)
from ._events import Connected, Event
from ._http import (
    DEFAULT_PATH,
    JSON,
    LAST_EVENT_ID,
    PROTOCOL_VERSION,
    SESSION_ID,
    SSE,
    Headers,
    decode_headers,
    is_visible_ascii,
    media_type,
    plain_fields,
    plain_head,
    single_header,
)
from ._http_headers import (
    NAME_BEARING_METHODS,
    PROTOCOL_VERSION_META_KEY,
    HeaderParam,
    InvalidToolHeaderAnnotation,
    filter_tools_with_valid_headers,
    mirrored_request_headers,
    x_mcp_header_params,
)
from ._oauth import is_authorization_challenge
from ._sse import SSEDecoder
from ._state import classify_era
from ._versions import Era

__all__ = [
    "AuthorizationChallenged",
    "ClientOutbox",
    "HTTPClientConnection",
    "HTTPClientEndpoint",
    "HTTPErrorReceived",
    "HTTPRequest",
    "SessionExpired",
    "ToolsFiltered",
]

# What an HTTP request is for decides how its end is judged: a message's response carries
# (or fails) an MCP request, a listen stream is reopened, a resumption continues a request's
# stream, and a DELETE's answer matters to no one.
Purpose = Literal["message", "listen", "resume", "terminate"]
# A POST must accept both (transports, Streamable HTTP): the server picks JSON or
# SSE per request, and a client that listed one could be refused with 406.
_ACCEPT_BOTH: Final = "application/json, text/event-stream"
# The enum members read per call, bound once: CPython 3.11 does not specialise an
# attribute read on a class, and a member read through its enum costs about 900
# instructions against a few dozen for a module global.
_MODERN: Final = Era.MODERN
_LEGACY: Final = Era.LEGACY
_GONE: Final = (State.CLOSED, State.ERROR)  # the states after which nothing is fed
# The longest tool name whose mirrored headers `_outgoing` keeps for the next call (as
# `mirrored_request_headers` keeps none longer either).
_LAST_CALL_NAME_CHARS: Final = 256
# The last `tools/call` without `Mcp-Param-*` headers that any endpoint of this process
# sent: (tool name, version, the mirrored headers `mirrored_request_headers` made for
# them), or None. One entry, not a table: it serves the usual client calling one tool
# again and again (and many clients calling the same one) at no memory per client, and
# a miss only costs the comparison. See `_outgoing`.
_last_call: tuple[str, str, tuple[tuple[str, str], ...]] | None = None
# Enough for any JSON-RPC error a server puts in an error response; the rest of an
# error body (an HTML page from a proxy) is skipped, not buffered.
_MAX_ERROR_BODY: Final = 64 * 1024


# =========================================================================== events


@dataclass(frozen=True, slots=True)
class SessionExpired(Event):
    """The server answered 404 for our legacy session: it ended or was never known.

    The `ClientConnection` has been closed (its requests failed); start over with a
    new connection and `initialize` (without the old session id).

    The connection is closed rather than re-initialized here: a new session has new
    capabilities and a new revision, which is the application's decision, and requests that
    were in flight under the old session cannot be carried over (their ids meant something
    only to the old session).
    """

    session_id: str


@dataclass(frozen=True, slots=True)
class ToolsFiltered(Event):
    """Tools dropped from a 2026-07-28 `tools/list` result for invalid `x-mcp-header`
    annotations, as (name, reason): the spec asks clients to log a warning.

    An event rather than a log line because the engine does no logging: the adapter decides
    where the warning goes.
    """

    dropped: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class HTTPErrorReceived(Event):
    """An HTTP exchange failed without settling an MCP request (a notification POST
    refused, the GET stream refused or given up on, a failed DELETE).

    Reported rather than raised: these failures concern no call the application is waiting
    on, and an exception out of `receive_data` would break the one promise the engine makes
    about receiving.
    """

    purpose: str
    status: int | None
    message: str


@dataclass(frozen=True, slots=True)
class AuthorizationChallenged(Event):
    """The server refused an HTTP request with an authorization challenge (a 401, or
    a 403 `insufficient_scope`); only with `hold_challenges`.

    The request is held, not failed. Give `status` and `headers` (the response's,
    with its `WWW-Authenticate`) to `OAuthClientFlow.handle_challenge`, then set
    `HTTPClientEndpoint.authorization` and call `retry_challenged()`; or call
    `fail_challenged()`. `method` and `request_id` name the MCP message refused
    (None for the GET stream).

    Held rather than failed because the fix (a token) takes I/O the engine cannot do: a
    browser, a token endpoint. The adapter's flow runs, then the same request goes out again
    with the new `Authorization` header.
    """

    status: int
    headers: Headers = field(repr=False)
    method: str | None = None
    request_id: RequestId | None = None


# ========================================================================= requests


class _ClientStream:
    """What one logical exchange needs across HTTP responses (resumption state).

    It outlives the HTTP response it started on: a legacy stream survives a dropped
    connection (resumed with its last event id), a challenged one waits for a token, and a
    request resent after a keep-alive race keeps its state. `attempts` counts failures in a
    row so that only a stream that makes no progress is given up on.
    """

    __slots__ = (
        "attempts",
        "auth_retries",
        "cancelled",
        "completed",
        "got_events",
        "http",
        "kind",
        "last_event_id",
        "method",
        "modern",
        "request",
        "request_id",
        "retry_ms",
    )

    def __init__(
        self,
        kind: Purpose,
        request_id: RequestId | None = None,
        method: str | None = None,
        modern: bool = False,
    ) -> None:
        """A stream of kind `kind`; `modern` fixes its era at creation, so a reply is judged
        by the rules it was sent under even if the connection's era is settled meanwhile.
        """
        self.kind: Purpose = kind
        self.request_id = request_id
        self.method = method
        self.modern = modern
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None
        self.attempts = 0
        # The challenge statuses retried after; made on the first challenge (most streams
        # never meet one).
        self.auth_retries: set[int] | None = None
        self.got_events = False
        self.completed = False
        self.cancelled = False
        self.http: HTTPClientConnection | None = None
        self.request: HTTPRequest | None = None


@dataclass(eq=False, slots=True)
class HTTPRequest:
    """One HTTP request the adapter must send (on any idle `HTTPClientConnection`).

    `delay` is how long to wait first (seconds; the server's SSE `retry` when
    resuming). `request_id` is the MCP request (as sent on the wire) whose answer it
    carries, if any. `cancelled` turns true if the request became pointless before it
    was started; `HTTPClientConnection.start` then refuses it. `fresh` asks for a new
    TCP connection rather than an idle one: the request is being sent again because
    the server closed the idle connection it went out on without answering.
    """

    method: str
    target: str
    headers: Headers
    body: bytes = b""
    purpose: Purpose = "message"
    request_id: RequestId | None = None
    delay: float = 0.0
    cancelled: bool = False
    fresh: bool = False
    _stream: _ClientStream | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class ClientOutbox:
    """What `HTTPClientEndpoint.pump()` asks the adapter to do.

    Start `requests`; close the sockets of `aborts` (2026-07-28 cancellations, or
    everything when closing) and call their `close()`; handle `events` (requests the
    transport failed before sending them).

    Returned, never pushed: the engine cannot open sockets or schedule tasks, so each pump
    hands the adapter a complete list of what to start and what to close. A pump with
    nothing to hand over returns one shared empty outbox (most pumps of a call are
    such): read an outbox, never add to its lists.
    """

    requests: list[HTTPRequest]
    aborts: list[HTTPClientConnection]
    events: list[Event]

    def __bool__(self) -> bool:
        """True when there is anything for the adapter to do."""
        return bool(self.requests or self.aborts or self.events)


#: What a pump with nothing to do returns (shared: see `ClientOutbox`).
_NOTHING: Final = ClientOutbox([], [], [])


# ========================================================================= endpoint


class HTTPClientEndpoint:
    """The shared half of the HTTP client: one per server endpoint and `ClientConnection`.

    `host` is the `Host` header (`host[:port]`), `path` the MCP endpoint path; extra
    `headers` (user agent ...) go on every request. `listen=False` skips the legacy
    GET stream. `authorization`, when set, is the `Authorization` header value put
    on every request as it is started; `hold_challenges` holds the requests an
    authorization challenge refuses (see `AuthorizationChallenged`).
    """

    def __init__(
        self,
        connection: ClientConnection,
        *,
        host: str,
        path: str = DEFAULT_PATH,
        headers: Iterable[tuple[str, str]] = (),
        listen: bool = True,
        max_reconnects: int = 3,
        default_retry_ms: int = 1000,
        max_response_bytes: int | None = None,
        max_sse_event_bytes: int | None = None,
        max_header_bytes: int = 64 * 1024,
        max_tools: int = 10_000,
        hold_challenges: bool = False,
    ) -> None:
        """The endpoint for one server; nothing is sent until the connection queues output.

        `max_reconnects` (3) bounds resumptions in a row without progress, so a server
        that drops every stream is given up on instead of polled for ever; the count
        starts over whenever a stream delivered events. `default_retry_ms` (1 s) is the
        wait before a resumption when the server sent no SSE `retry`. `max_header_bytes`
        bounds a response head (h11 refuses a longer one as it arrives).
        `max_tools` bounds the `x-mcp-header` table kept from `tools/list`: the server
        decides how many tools it lists, and each entry outlives the page.
        """
        self.mcp = connection
        self.host = host
        self.path = path
        self.listen = listen
        self.max_reconnects = max_reconnects
        self.default_retry_ms = default_retry_ms
        # A response body and an SSE event each carry one message: by default they are
        # bounded by the message limit itself, so no smaller limit hides behind it.
        limit = connection.limits.max_message_bytes
        self.max_response_bytes = max_response_bytes or limit
        self.max_sse_event_bytes = max_sse_event_bytes or limit
        # The setting to name in a limit error: the one the user actually set, or the
        # message limit it defaults to, so the error says which knob to turn.
        self._response_setting = (
            "HTTPClientEndpoint.max_response_bytes"
            if max_response_bytes
            else "Limits.max_message_bytes"
        )
        self._sse_setting = (
            "HTTPClientEndpoint.max_sse_event_bytes"
            if max_sse_event_bytes
            else "Limits.max_message_bytes"
        )
        # 64 KiB for a response head (four times what our server accepts for a request
        # head): a server's head carries cookies and long `WWW-Authenticate` challenges, and
        # a client refusing one would lose a valid answer.
        self.max_header_bytes = max_header_bytes
        self.max_tools = max_tools
        self.hold_challenges = hold_challenges
        self.authorization: str | None = None
        # Requests held on an authorization challenge, in order, until the flow gives a
        # token (`retry_challenged`) or fails (`fail_challenged`).
        self._held: list[_ClientStream] = []
        self.session_id: str | None = None
        self._extra = [(k, v) for k, v in headers]
        self._streams: dict[RequestId, _ClientStream] = {}
        # At least the number of modern `tools/list` streams in `_streams` (never fewer):
        # while it is 0 no response needs the tool filter, and none is looked for.
        self._modern_lists = 0
        # Tool name to its `x-mcp-header` parameters, learned from `tools/list`: a
        # `tools/call` must mirror those arguments in `Mcp-Param-*` headers (SEP-2243), and
        # only the tool's schema says which arguments they are.
        self._tool_params: dict[str, Mapping[str, HeaderParam]] = {}
        self._queue: list[HTTPRequest] = []
        self._aborts: list[HTTPClientConnection] = []
        self._events: list[Event] = []
        self._listen: _ClientStream | None = None
        # Set once a legacy session is connected (and `listen` allows it): the GET stream
        # opens at the next pump, and reopens after it ends, until a 405 says there is none.
        self._want_listen = False
        # The first GET stream of the session is queued or sent and no response head has
        # come back yet (`listen_pending`): the adapter holds its handshake until then.
        self._listen_unanswered = False
        self._closing = False
        # After a 404 for our session nothing more is sent under it: a new session needs a
        # new connection (and a new `initialize`), which the application decides.
        self._expired = False

    # ----------------------------------------------------------------- public

    def new_connection(self) -> HTTPClientConnection:
        """A new `HTTPClientConnection` for one TCP connection to the server."""
        return HTTPClientConnection(self)

    @property
    def tool_header_params(self) -> Mapping[str, Mapping[str, HeaderParam]]:
        """Tool name -> its `x-mcp-header` parameters, from 2026-07-28 `tools/list`."""
        return self._tool_params

    @property
    def listen_pending(self) -> bool:
        """The legacy GET stream is due or on its way and the server has not answered it:
        no response head yet (a 200 with its SSE head, or a refusal such as 405).

        True from the `Connected` of a legacy session (with `listen`) until the first
        GET's head arrives, or its exchange ends without one (connection refused,
        dropped), or the endpoint closes. Reopening the stream later never makes it true
        again. An adapter that waits for this to turn false before it hands the session
        to the application (ours does, within `listen_timeout`) orders the GET before
        the application's first requests: a server then has the stream to send on when
        it answers them, instead of seeing a `tools/call` first and a GET later on
        another connection.
        """
        return self._listen_unanswered or (
            self._want_listen
            and self._listen is None
            and self.session_id is not None
            and not self._closing
            and not self._expired
        )

    def pump(self) -> ClientOutbox:
        """Turn what the `ClientConnection` queued into HTTP requests (and aborts).

        The GET stream is opened here, once `initialize` gave a session id, and queued
        after the messages of the same pump, so the `initialized` notification comes first
        in the list: an adapter that starts requests in order sends it before the GET.
        """
        for message in self.mcp.messages_to_send():
            self._outgoing(message)
        # The GET stream is opened for a legacy session only (once initialize gave an
        # id), and never while the endpoint is closing or its session expired.
        if (
            self._want_listen
            and self._listen is None
            and self.session_id is not None
            and not self._closing
            and not self._expired
        ):
            self._listen = _ClientStream("listen")
            self._listen_unanswered = True
            self._open_listen(self._listen, 0.0)
        elif not (self._queue or self._aborts or self._events):
            return _NOTHING
        requests, self._queue = self._queue, []
        aborts, self._aborts = self._aborts, []
        events, self._events = self._events, []
        return ClientOutbox(requests, aborts, events)

    def close(self, reason: str = "closed locally") -> list[Event]:
        """Close the `ClientConnection`, abort open streams, and (legacy) queue the
        DELETE that ends the session; the next `pump()` hands them over."""
        if self._closing:
            return []
        self._closing = True
        events: list[Event] = []
        if self.mcp.state not in _GONE:
            events = self.mcp.close(reason)
        self._abort_all()
        # A client done with a legacy session should say so with a DELETE (2025-03-26,
        # session management), so the server frees it now rather than at its timeout.
        if self.session_id is not None and not self._expired:
            headers = [("host", self.host), *self._extra, (SESSION_ID, self.session_id)]
            if self.mcp.protocol_version is not None:
                headers.append((PROTOCOL_VERSION, self.mcp.protocol_version))
            self._queue.append(
                HTTPRequest(
                    "DELETE",
                    self.path,
                    headers,
                    purpose="terminate",
                    _stream=_ClientStream("terminate"),
                )
            )
        return events

    def retry_challenged(self) -> None:
        """Send the requests held on an authorization challenge again (with the
        current `authorization`); the next `pump()` hands them over.

        A fresh `HTTPRequest` for each held stream, because the old one may be cancelled or
        half-used; the headers are the same, and `start` adds the new authorization.
        """
        held, self._held = self._held, []
        for stream in held:
            request = stream.request
            if request is None or stream.cancelled or stream.completed:
                continue
            if self._closing or self._expired:
                break
            again = HTTPRequest(
                request.method,
                request.target,
                request.headers,
                request.body,
                request.purpose,
                request.request_id,
                _stream=stream,
            )
            stream.request = again
            self._queue.append(again)

    def fail_challenged(self, message: str, code: int = INTERNAL_ERROR) -> None:
        """Fail the requests held on an authorization challenge (the flow could not
        get a token) with `code`; the next `pump()` hands over their events.

        A held GET stream is not reopened after a failed flow: without a token every attempt
        would be refused again, and the retries would only load the server.
        """
        held, self._held = self._held, []
        for stream in held:
            if stream.cancelled or stream.completed:
                continue
            if stream.kind == "listen":
                self._want_listen = False
                self._listen = None
                self._listen_unanswered = False
                self._events.append(HTTPErrorReceived("listen", None, message))
            elif stream.request_id is None:
                self._events.append(HTTPErrorReceived(stream.kind, None, message))
            else:
                self._events += self._fail(stream, code, message)

    def _challenged(self, stream: _ClientStream, status: int, headers: Headers) -> list[Event]:
        """Hold `stream` on an authorization challenge, if it may be retried.

        Each challenge status is retried once per stream (RFC 6750 3.1's `invalid_token`
        after a 401, `insufficient_scope` after a 403): a server that refuses the new token
        too is misconfigured, and asking the user again would not fix it.
        """
        if (
            not self.hold_challenges
            or self._closing
            or self._expired
            or stream.kind == "terminate"
            or stream.cancelled
            or stream.completed
            or (stream.auth_retries is not None and status in stream.auth_retries)
            or not is_authorization_challenge(status, headers)
        ):
            return []
        if stream.auth_retries is None:
            stream.auth_retries = set()
        stream.auth_retries.add(status)
        stream.http = None
        self._held.append(stream)
        return [AuthorizationChallenged(status, headers, stream.method, stream.request_id)]

    # --------------------------------------------------------------- outgoing

    def _outgoing(self, m: OutgoingMessage) -> None:
        """One queued message as an HTTP request, or, for a 2026-07-28 cancel, an abort.

        A legacy request carries `Mcp-Session-Id` once there is one (every request after
        initialize must, 2025-03-26+) and `MCP-Protocol-Version` once a revision is
        agreed (2025-06-18+); a 2026-07-28 one carries the mirrored headers instead, and
        a request those headers cannot be built for fails here, since any server would
        refuse it with -32020.
        """
        global _last_call
        mcp = self.mcp
        if self._closing or self._expired:
            return
        if m.kind == "notification" and m.method == "notifications/cancelled":
            rid = m.related_request_id
            stream = self._streams.get(rid) if rid is not None else None
            modern = stream.modern if stream is not None else mcp.era is _MODERN
            if stream is not None:
                stream.cancelled = True
            if modern:
                # 2026-07-28: closing the response stream *is* the cancellation.
                if stream is not None:
                    self._abort(stream)
                return
        # The params are looked at only when a header depends on them: a big legacy request
        # (a tool call with megabytes of arguments) is not parsed twice.
        params: Any = None
        carried = False  # `params` is the message's own object, not read back
        is_request = m.kind == "request"
        if (
            is_request
            and mcp.era is not _LEGACY
            and (m.method in NAME_BEARING_METHODS or mcp.era is None)
        ):
            # Headers mirror params (2026-07-28) and the probe's envelope tells its era;
            # a legacy request needs neither. An application's request carries the params
            # it was encoded from (`OutgoingMessage.params`): its name, `_meta` and
            # envelope are the engine's own objects, as encoded, so they are read there
            # rather than parsed back from the payload (about 14,000 instructions, 3% of
            # the client's per call). The engine's own requests (the probe) are read back.
            params = m.params
            carried = params is not None
            if not carried:
                obj = jr.loads_own(m.payload)
                params = obj.get("params") if type(obj) is dict else None
        modern = mcp.era is _MODERN
        version = mcp.protocol_version if mcp.era is not None else None
        if mcp.era is None and classify_era(params) is _MODERN:
            # The discovery probe, before any era is agreed: it travels as the
            # revision its own envelope names (ours, so a string).
            modern, version = True, params["_meta"][META_PROTOCOL_VERSION]
        # Content-Length is always set: the body is complete, and a chunked upload would
        # only make some servers and proxies buffer it anyway.
        headers: Headers = [
            ("host", self.host),
            ("accept", _ACCEPT_BOTH),
            ("content-type", JSON),
            ("content-length", str(len(m.payload))),
            *self._extra,
        ]
        if modern and version is not None:
            if is_request and m.method is not None:
                header_params = None
                name: Any = None
                mirrored: Any = None
                if m.method == "tools/call" and type(params) is dict:
                    name = params.get("name")
                    header_params = self._tool_params.get(name) if isinstance(name, str) else None
                    if header_params:
                        if carried:
                            # `Mcp-Param-*` mirror the arguments, which may still be the
                            # application's objects: read from the bytes that go out.
                            obj = jr.loads_own(m.payload)
                            params = obj.get("params") if type(obj) is dict else None
                    else:
                        # The tool called last, again (a client calling one tool in a
                        # loop): its headers as `mirrored_request_headers` made them
                        # then, which depend only on the version and the name. What
                        # depends on the call, `params._meta`'s version, is judged here as
                        # there; anything else (another `_meta` type, a disagreeing
                        # version) takes the function, which raises as before.
                        last = _last_call
                        if last is not None and last[0] == name and last[1] == version:
                            meta = params.get("_meta")
                            if (
                                type(meta) is dict
                                and meta.get(PROTOCOL_VERSION_META_KEY, version) == version
                            ):
                                mirrored = last[2]
                if mirrored is None:
                    try:
                        mirrored = mirrored_request_headers(
                            m.method, params, version, header_params
                        )
                    except LocalProtocolError as exc:
                        if m.request_id is not None:
                            self._events += mcp.fail_request(m.request_id, exc.code, exc.message)
                        return
                    if (
                        name is not None
                        and not header_params
                        and type(name) is str
                        and len(name) <= _LAST_CALL_NAME_CHARS
                    ):
                        # (Only a tools/call sets `name`. A tuple, so no caller can
                        # change what the next call is given; replaced whole, so a
                        # thread reads a consistent entry.)
                        _last_call = (name, version, tuple(mirrored))
                headers += mirrored
            else:
                headers.append((PROTOCOL_VERSION, version))
        else:
            if version is not None:
                headers.append((PROTOCOL_VERSION, version))
            if self.session_id is not None:
                headers.append((SESSION_ID, self.session_id))
        # The era is fixed on the stream now: a response judged later (a 404, say) must be
        # read by the rules the request was sent under, even if the probe settled the era
        # meanwhile.
        stream = _ClientStream("message", m.request_id if is_request else None, m.method, modern)
        # (Every field by position: a keyword in a class call costs a dict made and
        # unpacked again, about 900 instructions per request.)
        request = HTTPRequest(
            "POST",
            self.path,
            headers,
            m.payload,
            "message",
            stream.request_id,
            0.0,
            False,
            False,
            stream,
        )
        stream.request = request
        if is_request and m.request_id is not None:
            self._streams[m.request_id] = stream
            if modern and m.method == "tools/list":
                self._modern_lists += 1
        # Streams are tracked by the wire id the request went out with: an answer, a cancel
        # and a resumption all name that id, never the application's logical one.
        self._queue.append(request)

    def _get_headers(self, stream: _ClientStream) -> Headers:
        """The headers of a GET: the legacy listen stream, or a resumption naming the last
        event seen (`Last-Event-ID`), which the server replays from on that stream only.

        The GET carries the session id and the protocol version like any legacy request
        (2025-06-18: the version header on every request after initialization), or the
        server refuses it with 400 before looking at `Last-Event-ID`.
        """
        headers: Headers = [("host", self.host), ("accept", SSE), *self._extra]
        # (the legacy session header; 2026-07-28 requests never carry one, SPEC-NOTES 4.3: a
        # modern server ignores it and must not mint sessions)
        if self.session_id is not None:
            headers.append((SESSION_ID, self.session_id))
        version = self.mcp.protocol_version
        if version is not None:
            headers.append((PROTOCOL_VERSION, version))
        if stream.last_event_id is not None:
            headers.append((LAST_EVENT_ID, stream.last_event_id))
        return headers

    def _open_listen(self, stream: _ClientStream, delay: float) -> None:
        """Queue the legacy GET stream, on which the server sends its own requests and
        notifications (2025-03-26+); `delay` spaces out reopening after a failure.
        """
        request = HTTPRequest(
            "GET",
            self.path,
            self._get_headers(stream),
            purpose="listen",
            delay=delay,
            _stream=stream,
        )
        stream.request = request
        self._queue.append(request)

    def _delay(self, stream: _ClientStream) -> float:
        """The wait before reopening `stream`, in seconds.

        2025-11-25 (SEP-1699): the client MUST wait the `retry` the server sent before it
        reconnects; a server that sent none gets `default_retry_ms`, so no server is polled
        in a tight loop.
        """
        retry = stream.retry_ms if stream.retry_ms is not None else self.default_retry_ms
        return retry / 1000.0

    # -------------------------------------------------------------- incoming

    def _deliver(self, stream: _ClientStream, data: bytes | bytearray) -> list[Event]:
        """Feed one JSON-RPC message (or batch) to the connection, watching for answers.

        The connection parses it once; which streams it answered is read afterwards
        from what the connection still waits for, exactly and without a second
        pass. Only while a 2026-07-28 `tools/list` is out is the message parsed
        here first, to filter the tools before the connection sees them.
        """
        mcp = self.mcp
        if mcp.state in _GONE:
            return []
        events: list[Event] = []
        # Parsed here only while a modern `tools/list` is out: every other message goes to
        # the connection untouched and is parsed once, by it.
        if self._modern_lists and any(
            s.method == "tools/list" and s.modern for s in self._streams.values()
        ):
            data = self._filter_tools_in(data, events)
        events += mcp.receive_message(data)
        # The stream's own request, or (on a GET stream) any whose answer came there.
        # On a GET (a resumption, or a server that answers there anyway) the message may
        # answer any request still tracked, so each is checked against what the connection
        # still awaits.
        targets = [stream] if stream.kind == "message" else list(self._streams.values())
        for target in targets:
            if target.request_id is not None and not mcp.awaiting(target.request_id):
                target.completed = True
        for event in events:
            if isinstance(event, Connected) and event.era is _LEGACY:
                self._want_listen = self.listen
        return events

    def _filter_tools_in(self, data: bytes | bytearray, events: list[Event]) -> bytes | bytearray:
        """`data` with invalid tools dropped from the 2026-07-28 `tools/list` results in it.

        2026-07-28 (SEP-2243): a client MUST drop tools with invalid `x-mcp-header`
        annotations from `tools/list` and warn. Filtering before the engine sees the result
        keeps the application from ever holding a tool it could not call correctly.
        """
        try:
            obj: Any = jr.parse(data, self.mcp.limits)
        except RemoteProtocolError:
            return data  # the connection refuses it the same way
        items = obj if type(obj) is list else [obj]
        rewritten = False
        for index, item in enumerate(items):
            # Only what the engine will take as the answer completes the stream: an
            # object with the id but neither result nor error is not one, and the
            # request would otherwise wait for an answer that has already gone by.
            if (
                type(item) is not dict
                or "method" in item
                or ("result" not in item and "error" not in item)
                or not jr.is_request_id(item.get("id"))
            ):
                continue
            target = self._streams.get(item["id"])
            if target is not None and target.method == "tools/list" and target.modern:
                filtered, dropped = self._filter_tools(item)
                if dropped:
                    items[index] = filtered
                    rewritten = True
                    events.append(ToolsFiltered(dropped))
        return jr.dumps(items if type(obj) is list else items[0]) if rewritten else data

    def _filter_tools(
        self, response: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
        """One `tools/list` response with the tools whose `x-mcp-header` is invalid removed.

        The annotations of the kept tools are remembered for building `Mcp-Param-*` on
        later calls; a dropped tool's are forgotten, so a later `tools/call` to it
        (which the application may still send) goes out without mirrored params and the
        server, not this client, decides.
        """
        result = response.get("result")
        tools = result.get("tools") if type(result) is dict else None
        if type(tools) is not list:
            return response, ()
        mappings = [t for t in tools if isinstance(t, Mapping)]
        kept, dropped = filter_tools_with_valid_headers(mappings)
        for tool in kept:
            name, schema = tool.get("name"), tool.get("inputSchema")
            if not isinstance(name, str) or not isinstance(schema, Mapping):
                continue
            try:
                params = x_mcp_header_params(schema)
            except InvalidToolHeaderAnnotation:  # pragma: no cover - filtered above
                continue
            # A tool already known is always updated, and a new one only while there is
            # room: the table stays bounded, and a tool that changed its annotations is
            # never left with the old ones.
            if params and (name in self._tool_params or len(self._tool_params) < self.max_tools):
                self._tool_params[name] = params
            else:
                self._tool_params.pop(name, None)
        if not dropped:
            return response, ()
        for name, _ in dropped:
            self._tool_params.pop(name, None)
        # By identity, because tools are mappings that may compare equal; the result keeps
        # the page's order and any non-mapping entries (the engine's validation judges
        # them).
        keep_ids = {id(t) for t in kept}
        tools_out = [t for t in tools if not isinstance(t, Mapping) or id(t) in keep_ids]
        assert type(result) is dict
        return {**response, "result": {**result, "tools": tools_out}}, tuple(dropped)

    def _ended(
        self,
        stream: _ClientStream,
        status: int | None,
        mode: str,
        body: bytes | None,
        reason: str,
    ) -> list[Event]:
        """The HTTP response carrying `stream` is over (`status` None: it never came).

        `mode` is "sse", "json" or "other"; `body` the collected body (JSON/other).
        """
        stream.http = None
        kind = stream.kind
        if kind == "listen":
            self._listen_unanswered = False  # answered, refused, or lost: not pending
        if kind == "terminate":
            # 404: the session was gone already; 405: the server does not let clients
            # end sessions (2025-03-26 allows that). Neither is worth reporting.
            if status is not None and status not in (200, 202, 204, 404, 405):
                return [HTTPErrorReceived(kind, status, f"DELETE answered {status}")]
            return []
        if self._closing or self._expired:
            return []
        # A 404 means "session gone" only for a request that carried the session id; a
        # 2026-07-28 request carries none, and its 404 is -32601 for an unknown method.
        if status == 404 and self.session_id is not None and not stream.modern:
            return self._session_expired()
        # (A legacy 404 with the session id is the spec's "session terminated", 2025-03-26
        # session management; the session's requests are all lost then, so the check comes
        # before any per-stream handling.)
        if kind == "listen":
            return self._listen_ended(stream, status, mode)
        events: list[Event] = []
        ok = status is not None and 200 <= status < 300
        # An empty 2xx body is no answer (a 202 to a request, a proxy's empty 200): it falls
        # through to the failure below instead of being parsed as a message.
        if ok and mode == "json" and body is not None and body.strip():
            events += self._deliver(stream, body)
        if stream.request_id is None:
            if status is not None and not ok:
                events.append(HTTPErrorReceived(kind, status, f"POST answered {status}"))
            return events
        if stream.completed or stream.cancelled:
            self._forget(stream)
            return events
        # An error status whose body is a JSON-RPC error is that request's answer, with
        # the server's code (2026-07-28 maps codes to statuses, so 400 and 404 carry
        # meaning); without such a body only the status is known.
        if status is not None and not ok:
            error = _jsonrpc_error(body)
            if error is not None:
                code, message, data = error
                payload = jr.encode_error(stream.request_id, jr.error_object(code, message, data))
                events += self._deliver(stream, payload)
                self._forget(stream)
                return events
            return events + self._fail(
                stream, INTERNAL_ERROR, f"HTTP {status} without a JSON-RPC error"
            )
        # A stream that ended before its answer: legacy servers let it be resumed from
        # the last event id; 2026-07-28 has no resumption, so the call fails and the
        # application decides whether to send it again.
        if mode == "sse" or status is None:
            if (
                not stream.modern
                and stream.last_event_id is not None
                and self.session_id is not None
            ):
                return events + self._resume(stream)
            return events + self._fail(
                stream, CONNECTION_CLOSED, f"stream ended without an answer ({reason})"
            )
        # 202 answers a notification or a response, never a request (transports):
        # no answer will follow, so waiting would hang the call.
        if status == 202:
            return events + self._fail(
                stream, INTERNAL_ERROR, "server answered a request with 202 Accepted"
            )
        return events + self._fail(stream, INTERNAL_ERROR, "response carried no answer")

    def _resume(self, stream: _ClientStream) -> list[Event]:
        """Reopen a legacy response stream with GET + `Last-Event-ID` (2025-03-26+).

        Attempts count only failures in a row: a resumption that delivered events
        resets the count, since the stream was making progress.

        The resumption is a GET with `Last-Event-ID` whatever the stream started as
        (2025-11-25: resumption always goes through GET), and it waits the server's `retry`
        (SEP-1699) before it goes.
        """
        stream.attempts = 0 if stream.got_events else stream.attempts + 1
        stream.got_events = False
        if stream.attempts >= self.max_reconnects:
            return self._fail(stream, CONNECTION_CLOSED, "stream lost and could not be resumed")
        stream.kind = "resume"
        request = HTTPRequest(
            "GET",
            self.path,
            self._get_headers(stream),
            purpose="resume",
            request_id=stream.request_id,
            delay=self._delay(stream),
            _stream=stream,
        )
        stream.request = request
        self._queue.append(request)
        return []

    def _listen_ended(self, stream: _ClientStream, status: int | None, mode: str) -> list[Event]:
        """The legacy GET stream ended: reopen it after a delay, unless the server said it
        has none (405: a server may offer no GET stream) or one is open already (409).

        The GET stream is reopened after it ends normally too: 2025-03-26 lets a server
        close it at any time, and a client that stopped listening would miss the server's
        requests and notifications from then on.
        """
        if status in (405, 409):
            # No GET stream here (405), or one is open already (409): nothing to retry.
            self._want_listen = False
            return (
                [] if status == 405 else [HTTPErrorReceived("listen", status, "GET stream refused")]
            )
        # A stream that delivered events was working: its end resets the failure count, so a
        # server that closes its GET stream every few minutes (as SEP-1699 polling does) is
        # listened to for ever.
        if status == 200 and mode == "sse" and stream.got_events:
            stream.attempts = 0
        else:
            stream.attempts += 1
        stream.got_events = False
        if stream.attempts >= self.max_reconnects:
            self._want_listen = False
            return [
                HTTPErrorReceived("listen", status, "GET stream given up after repeated failures")
            ]
        self._open_listen(stream, self._delay(stream))
        return []

    def _resend(self, stream: _ClientStream) -> bool:
        """Queue `stream`'s request again, on a new connection; False if it must not be.

        Called when a reused connection closed before any byte of the answer came: the
        server closing the idle connection as we sent on it, before reading. Once only:
        a request that was already sent on a fresh connection fails for real.
        """
        request = stream.request
        if (
            request is None
            or request.fresh
            or stream.cancelled
            or stream.completed
            or self._expired
            or (self._closing and stream.kind != "terminate")
        ):
            return False
        stream.http = None
        again = HTTPRequest(
            request.method,
            request.target,
            request.headers,
            request.body,
            request.purpose,
            request.request_id,
            fresh=True,
            _stream=stream,
        )
        stream.request = again
        self._queue.append(again)
        return True

    def _fail(self, stream: _ClientStream, code: int, message: str) -> list[Event]:
        """Fail the MCP request `stream` carried (nothing to fail for a notification or a
        GET) with `code`; the event comes from the `ClientConnection`, as any failure.

        The failure goes through the `ClientConnection`, so that the request leaves its
        tables and the event has the same shape as any other failure (a timeout, a close).
        """
        self._forget(stream)
        mcp = self.mcp
        if stream.request_id is None or mcp.state in _GONE:
            return []
        return mcp.fail_request(stream.request_id, code, message)

    def _forget(self, stream: _ClientStream) -> None:
        """Stop tracking `stream`, unless its id was reused by a newer stream.

        The identity check guards against a retry under the same key: only the stream that
        was tracked is forgotten.
        """
        if stream.request_id is not None and self._streams.get(stream.request_id) is stream:
            del self._streams[stream.request_id]
            if stream.modern and stream.method == "tools/list":
                self._modern_lists -= 1

    def _abort(self, stream: _ClientStream) -> None:
        """Cancel `stream`: close its socket if it is on one (the adapter closes it), or
        mark its queued request so `start` refuses it.

        A queued request is marked rather than removed: the adapter may already hold it (a
        task waiting out its delay), and `start` is where it must be refused.
        """
        stream.cancelled = True
        self._forget(stream)
        if stream.http is not None:
            self._aborts.append(stream.http)
        elif stream.request is not None:
            stream.request.cancelled = True

    def _abort_all(self) -> None:
        """Abort every stream and queued request (closing, or the session is gone)."""
        streams = list(self._streams.values())
        if self._listen is not None:
            streams.append(self._listen)
        for stream in streams:
            self._abort(stream)
        for request in self._queue:
            request.cancelled = True
        self._queue = []
        self._streams.clear()
        self._modern_lists = 0
        self._listen = None
        self._listen_unanswered = False

    def _session_expired(self) -> list[Event]:
        """A 404 for our session id: the server forgot the session (restart, idle timeout),
        so nothing sent under it can succeed. The spec's answer is a new initialize
        without the id (2025-03-26, session management); that is the application's call,
        so everything is failed and `SessionExpired` says why.
        """
        session_id = self.session_id
        assert session_id is not None
        # Set before anything is failed, so that whatever the failures trigger (an
        # application retrying at once) finds the endpoint expired and sends nothing.
        self._expired = True
        self.session_id = None
        self._abort_all()
        events: list[Event] = [SessionExpired(session_id)]
        if self.mcp.state not in _GONE:
            events += self.mcp.close("session expired")
        return events

    def _took_session(self, stream: _ClientStream, headers: Headers) -> list[Event]:
        """The session id a server assigns in the response to `initialize` (2025-03-26+).

        The spec assigns it there (session management) and nowhere else, so an id on
        any other response is ignored. A value that is not visible ASCII breaks the
        spec's rule for session ids and could not be sent back as a header.
        """
        if stream.method != "initialize":
            return []  # (not looked for: no other response's headers are read for it)
        session_id, _ = single_header(headers, SESSION_ID)
        if session_id is None:
            return []
        if not is_visible_ascii(session_id):
            return [HTTPErrorReceived("message", None, "ignored a malformed Mcp-Session-Id")]
        self.session_id = session_id
        return []


# A header value that survives the trip: HTTP strips leading and trailing
# whitespace (RFC 9110 5.5), so a value starting or ending with a space would not
# come back the same, and other octets are read differently by different stacks.
_HEADER_TEXT: Final = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")


def _header_safe(value: str) -> bool:
    """Visible ASCII, inner spaces allowed: what a header value carries unchanged.

    An SSE id that fails this is dropped as a cursor rather than sent mangled: a wrong
    `Last-Event-ID` would resume the wrong place, or be refused.
    """
    return _HEADER_TEXT.fullmatch(value) is not None


def _jsonrpc_error(body: bytes | None) -> tuple[int, str, Any] | None:
    """(code, message, data) when `body` is one JSON-RPC error response.

    The status table of 2026-07-28 (SPEC-NOTES 4.3) puts JSON-RPC errors in 400 and 404
    bodies, and the probe must read them to tell a modern server (a recognised error) from a
    legacy one (anything else, SPEC-NOTES 1.15). Anything that is not exactly one error
    response is None, so a proxy's error page never passes for one.
    """
    if not body:
        return None
    try:
        obj = jr.parse(body)
    except RemoteProtocolError:
        return None
    if type(obj) is not dict or obj.get("jsonrpc") != "2.0" or "method" in obj:
        return None
    error = obj.get("error")
    if type(error) is not dict:
        return None
    code, message = error.get("code"), error.get("message")
    if type(code) is not int or type(message) is not str:
        return None
    return code, message, error.get("data")


# ======================================================================= connection

# The direct path (`HTTPClientConnection._direct_start`): the requests it writes and the
# responses it reads (the fields: `_http.plain_fields`, `plain_head`).
_DIRECT_METHODS: Final = frozenset({"GET", "POST", "DELETE"})
_TARGET: Final = re.compile(r"[!-~]+")
_STATUS_LINE: Final = re.compile(r"HTTP/1\.1 ([1-9][0-9][0-9])(?: [\t !-~]*)?\r\n")
_DIRECT_WATCHED: Final = frozenset(
    {"host", "content-length", "transfer-encoding", "expect", "upgrade", "connection"}
)


class HTTPClientConnection:
    """One TCP connection to the server (an h11 client connection inside).

    `start(request)` when not `busy`, write `data_to_send()`, feed what the socket
    gives to `receive_data` (`b""` at EOF) until `busy` is false; close the socket
    when `closed`. `close()` tells it the socket is gone (or that you aborted it).
    """

    def __init__(self, endpoint: HTTPClientEndpoint) -> None:
        """A fresh TCP connection for `endpoint`; `_reused` tells a stale keep-alive race
        (resend once) from a real failure.
        """
        self.endpoint = endpoint
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=endpoint.max_header_bytes)
        self._out: list[bytes] = []
        self._stream: _ClientStream | None = None
        self._closed = False
        self._reused = False  # an exchange completed on it before the current one
        self._received = 0  # bytes of the current exchange's response so far
        self._status: int | None = None
        self._challenge: Headers | None = None  # a 401/403's headers
        self._mode = "other"
        self._body: list[bytes] = []
        self._body_len = 0
        self._limit = 0
        self._decoder: SSEDecoder | None = None
        # The direct path (`_direct_start`): the current exchange was written without
        # h11, which is still between requests; `_sent` is what was written, so h11 can
        # be told it after all (`_to_h11`) when the response is not of the plainest
        # shape. `_left` counts the body still due once the head is read (None before).
        self._direct = False
        self._h11_fresh = True  # h11 between requests with nothing buffered (`_direct_start`)
        self._sent: tuple[bytes, bytes, Headers, bytes] | None = None
        self._head_in = bytearray()
        self._left: int | None = None
        self._declared = 0  # the response's Content-Length
        self._direct_close = False

    @property
    def busy(self) -> bool:
        """An exchange is in progress: keep reading."""
        return self._stream is not None

    @property
    def closed(self) -> bool:
        """The socket must be closed (after writing `data_to_send()`); not reusable."""
        return self._closed

    def start(self, request: HTTPRequest) -> bool:
        """Send `request` on this connection. False (nothing sent) if it was cancelled."""
        # One request at a time per connection: HTTP/1.1 pipelining is allowed but a slow
        # SSE answer would hold up everything behind it, so the adapter uses another
        # connection instead.
        if (
            self._closed
            or self._stream is not None
            or (not self._h11_fresh and self._h11.our_state is not h11.IDLE)
        ):
            raise LocalProtocolError("this connection is busy or closed; use another one")
        stream = request._stream
        if request.cancelled or stream is None or stream.cancelled:
            return False
        headers = request.headers
        authorization = self.endpoint.authorization
        if authorization is not None:
            # The current token, whenever the request was queued: a refresh or a new
            # authorization between queueing and sending must not send a stale one.
            headers = [h for h in headers if h[0].lower() != "authorization"]
            headers.append(("authorization", authorization))
        if not self._direct_start(request.method, request.target, headers, request.body):
            self._h11_fresh = False
            self._emit(
                self._h11.send(
                    h11.Request(method=request.method, target=request.target, headers=headers)
                )
            )
            if request.body:
                self._emit(self._h11.send(h11.Data(data=request.body)))
            self._emit(self._h11.send(h11.EndOfMessage()))
        self._stream = stream
        stream.http = self
        self._received = 0
        self._status = None
        self._challenge = None
        self._mode = "other"
        self._body = []
        self._body_len = 0
        self._decoder = None
        return True

    def data_to_send(self) -> bytes:
        """Everything queued for the socket.

        One join per call: the head and the body usually go out in a single write.
        """
        data = b"".join(self._out)
        self._out.clear()
        return data

    def receive_data(self, data: bytes) -> list[Event]:
        """Feed bytes from the socket; `b""` means the server closed it.

        `_received` counts every byte of the current exchange, so `_drop` can tell "closed
        before answering" (safe to resend on a reused connection) from "closed mid-answer"
        (never resent: the server may have acted, RFC 9110 9.2.2).
        """
        if self._closed:
            return []
        self._received += len(data)
        if self._direct:
            read = self._direct_data(data)
            if read is not None:
                return read
            # Not the plainest response: h11 reads it from its start (then the EOF).
            eof = not data
            data = self._to_h11()
            if eof:
                if data:
                    self._h11.receive_data(data)
                data = b""
        events: list[Event] = []
        self._h11.receive_data(data)
        while not self._closed:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                events += self._drop(f"malformed HTTP response: {exc}")
                break
            if event is h11.NEED_DATA or event is h11.PAUSED:
                break
            if isinstance(event, h11.Response):
                events += self._on_head(event.status_code, decode_headers(event.headers))
            elif isinstance(event, h11.Data):
                events += self._on_data(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                events += self._on_end()
            elif isinstance(event, h11.ConnectionClosed):
                events += self._drop("server closed the connection")
                break
            # InformationalResponse (100 Continue): nothing to do
        return events

    def close(self, *, aborted: bool = False) -> list[Event]:
        """The socket is closed (by you, or it broke): settle the exchange on it.

        An abort by the adapter (a 2026-07-28 cancel) and a broken socket end the same way:
        the exchange is settled, and the stream decides whether to resume. `aborted` says
        the adapter broke the connection itself: its request is then never sent again
        (the resend is for a server that closed an idle connection as the request went
        out; a connection we broke tells nothing of whether the server read it).
        """
        if self._closed and self._stream is None:
            return []
        return self._drop("connection closed", resend=not aborted)

    # ------------------------------------------------------------------ input

    def _on_head(self, status: int, headers: Headers) -> list[Event]:
        """The response head: the session id, the body's kind and the limit it is read under.

        Success bodies are bounded by the message limits; an error body is only skimmed
        for a JSON-RPC error (its first `_MAX_ERROR_BODY` bytes), so a proxy's large
        HTML error page costs nothing and does not fail the request as "too big".
        """
        stream = self._stream
        if stream is None:
            return self._drop("response without a request")
        endpoint = self.endpoint
        self._status = status
        if stream.kind == "listen":
            endpoint._listen_unanswered = False  # acknowledged (200) or refused (405 ...)
        events: list[Event] = []
        content_type = media_type(single_header(headers, "content-type")[0])
        if 200 <= status < 300:
            events += endpoint._took_session(stream, headers)
            if content_type == SSE:
                self._mode = "sse"
                # (The line limit follows, with room for the field name: the event limit
                # is the one a big message meets.)
                self._decoder = SSEDecoder(endpoint.max_sse_event_bytes)
                return events
            # A 2xx that is neither JSON nor SSE carries no JSON-RPC answer: its body is
            # read (bounded) and then judged as "no answer", rather than parsed as one.
            self._mode = "json" if content_type == JSON else "other"
            self._limit = endpoint.max_response_bytes
        else:
            self._mode = "other"
            self._limit = _MAX_ERROR_BODY
            if status in (401, 403) and endpoint.hold_challenges:
                self._challenge = headers
        return events

    def _on_data(self, data: bytes) -> list[Event]:
        """Body bytes: SSE events go to the connection as they complete (a stream may stay
        open for long), a JSON body is collected whole and delivered at its end.
        """
        stream = self._stream
        if stream is None:
            return []
        if self._mode == "sse":
            assert self._decoder is not None
            try:
                sse_events = self._decoder.feed(data)
            except RemoteProtocolError:
                limit = self.endpoint.max_sse_event_bytes
                return self._drop(
                    self._refused("an SSE event", limit, self.endpoint._sse_setting), limit=True
                )
            events: list[Event] = []
            for sse in sse_events:
                if sse.id is not None:
                    # The id goes back as the Last-Event-ID header: one a header
                    # cannot carry is no cursor (and "" resets it, as in EventSource).
                    stream.last_event_id = sse.id if _header_safe(sse.id) else None
                if sse.retry is not None:
                    stream.retry_ms = sse.retry
                stream.got_events = True
                # Only `message` events carry JSON-RPC; the priming event (empty data)
                # and any event type a server adds are kept for their id only.
                if sse.event == "message" and sse.data:
                    events += self.endpoint._deliver(stream, sse.data.encode("utf-8"))
            if self._decoder.retry is not None:
                stream.retry_ms = self._decoder.retry
            return events
        self._body_len += len(data)
        if self._body_len > self._limit:
            if self._mode == "json":
                limit = self._limit
                return self._drop(
                    self._refused("the response body", limit, self.endpoint._response_setting),
                    limit=True,
                )
            return []  # an error body we only skim: keep what fits
        self._body.append(data)
        return []

    def _on_end(self) -> list[Event]:
        """The response ended: deliver it, or hold it on an authorization challenge; keep
        the socket for the next request only if h11 says both sides ended cleanly.
        """
        stream = self._stream
        if stream is None:
            return []
        self._stream = None
        body = b"".join(self._body) if self._mode != "sse" else None
        self._body = []
        events: list[Event] = []
        # A challenge is judged once the body has been read, so the socket can be kept
        # for the retry the authorization flow will make.
        if self._challenge is not None and self._status is not None:
            events = self.endpoint._challenged(stream, self._status, self._challenge)
        if not events:
            events = self.endpoint._ended(stream, self._status, self._mode, body, "stream ended")
        if self._direct:
            # h11 saw neither message: it is still between requests, as it would be now.
            self._direct = False
            self._sent = None
            if self._direct_close:
                self._closed = True
            else:
                self._reused = True
            return events
        h = self._h11
        if h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            # A request h11 never sees leaves it as it is only when it holds nothing.
            self._h11_fresh = not h.trailing_data[0]
            self._reused = True
        else:
            self._closed = True
        return events

    # ------------------------------------------------------- the direct path

    def _direct_start(self, method: str, target: str, headers: Headers, body: bytes) -> bool:
        """Write a request without h11 when it is of the plainest shape (as every request
        the endpoint builds is); False (nothing written) for any other, which h11 sends.

        h11 is pure Python and costs about 200 calls per exchange. The shape:
        `GET`/`POST`/`DELETE`, a visible-ASCII target, one Host, a Content-Length that
        is the body's, no Transfer-Encoding, Expect, Upgrade or Connection, every field
        one h11 would send. It is written as h11 writes it (Host first); the response is
        then read directly too (`_direct_data`), or handed to h11 (`_to_h11`).
        """
        if not self._h11_fresh or method not in _DIRECT_METHODS:
            return False
        hosts: list[tuple[str, str]] = []
        rest: list[tuple[str, str]] = []
        length: int | None = None
        for item in headers:
            name = item[0].lower()
            if name in _DIRECT_WATCHED:
                if name == "host":
                    hosts.append(item)
                    continue
                value = item[1]
                if name != "content-length" or length is not None:
                    return False
                if not (value.isascii() and value.isdigit()):
                    return False
                length = int(value)
            rest.append(item)
        if len(hosts) != 1 or length != len(body) or not _TARGET.fullmatch(target):
            return False
        head = plain_head(b"%s %s HTTP/1.1\r\n" % (method.encode(), target.encode()), hosts + rest)
        if head is None:
            return False
        self._out.append(head + body if body else head)
        self._direct = True
        self._sent = (method.encode(), target.encode(), headers, body)
        self._head_in.clear()
        self._left = None
        self._direct_close = False
        return True

    def _direct_data(self, data: bytes) -> list[Event] | None:
        """Bytes of the response to a request written directly. The head waits whole
        (within `max_header_bytes`); if it is not of the plainest shape (an HTTP/1.1
        status of 200 or more other than 204 and 304, one Content-Length, no
        Transfer-Encoding, no Connection but `keep-alive` or `close`, plain fields),
        `_direct` goes False and None comes back: `receive_data` then hands h11 the lot.
        """
        left = self._left
        if left is None:
            buffer = self._head_in
            if not data:
                self._direct = False  # h11 says what an early EOF means
                return None
            # Searched from where the last bytes could start the blank line, so a head
            # that trickles in costs no more than one that comes whole.
            resume = max(0, len(buffer) - 3)
            buffer += data
            end = buffer.find(b"\r\n\r\n", resume)
            if end < 0:
                if len(buffer) > self.endpoint.max_header_bytes:
                    self._direct = False  # h11 refuses it
                    return None
                return []
            parsed = self._plain_response(buffer, end)
            if parsed is None:
                self._direct = False
                return None
            status, headers, left = parsed
            data = bytes(buffer[end + 4 :])
            buffer.clear()
            self._left = left
            events = self._on_head(status, headers)
            if self._closed:
                return events
        else:
            if not data:  # as h11 words it
                return self._drop(
                    "malformed HTTP response: peer closed connection without sending "
                    f"complete message body (received {self._declared - left} bytes, "
                    f"expected {self._declared})"
                )
            events = []
        if data:
            chunk = data[:left] if len(data) > left else data
            left -= len(chunk)
            self._left = left
            events += self._on_data(chunk)
            if self._closed:
                return events
            if len(data) > len(chunk):
                # Bytes past the response the server sent unasked: h11 would keep them
                # and fail on the next exchange; the socket is not reused.
                self._direct_close = True
        if left == 0:
            events += self._on_end()
        return events

    def _plain_response(self, buffer: bytearray, end: int) -> tuple[int, Headers, int] | None:
        """(status, headers, body length) of a plain response head, or None."""
        if end + 4 > self.endpoint.max_header_bytes:
            return None
        text = buffer[: end + 2].decode("latin-1")
        line = _STATUS_LINE.match(text)
        if line is None:
            return None
        status = int(line.group(1))
        if status < 200 or status in (204, 304):
            return None
        headers = plain_fields(text, line.end())
        if headers is None:
            return None
        length: int | None = None
        close = False
        for name, value in headers:
            if name in _DIRECT_WATCHED:
                if name == "content-length":
                    if length is not None or not (value.isascii() and value.isdigit()):
                        return None
                    if len(value) > 18:
                        return None
                    length = int(value)
                elif name == "connection" and value.lower() in ("keep-alive", "close"):
                    close = value.lower() == "close"
                else:
                    return None
        if length is None:
            return None
        self._declared = length
        self._direct_close = close
        return status, headers, length

    def _to_h11(self) -> bytes:
        """Tell h11 the request that was written directly (its bytes are already out,
        so what h11 writes is dropped) and give back the response bytes read so far, for
        h11 to read from their start: h11 then reads this response as if it had sent
        the request itself."""
        assert self._sent is not None
        method, target, headers, body = self._sent
        h = self._h11
        self._h11_fresh = False
        h.send(h11.Request(method=method, target=target, headers=headers))
        if body:
            h.send(h11.Data(data=body))
        h.send(h11.EndOfMessage())
        self._sent = None
        data = bytes(self._head_in)
        self._head_in.clear()
        return data

    @staticmethod
    def _refused(what: str, limit: int, setting: str) -> str:
        """The message of a limit refusal, naming the setting to raise: a silent or vague
        failure here is what made an SDK's 1 MiB event cap look like a broken server.
        """
        return (
            f"response refused: {what} exceeds the limit of {limit} bytes ({setting}); "
            f"raise {setting} in the client's limits to accept it"
        )

    def _drop(self, reason: str, *, limit: bool = False, resend: bool = True) -> list[Event]:
        """The exchange broke (EOF, garbage, a limit): settle it and retire the socket.

        Over a limit the request fails with LIMIT_EXCEEDED and is not resumed:
        resuming would hit the same wall."""
        self._closed = True
        stream = self._stream
        self._stream = None
        if stream is None:
            return []
        if limit and stream.request_id is not None and not stream.completed:
            return self.endpoint._fail(stream, LIMIT_EXCEEDED, reason)
        # Only on a reused connection and before any byte of the answer: then the server
        # closed an idle connection as we sent, and never read the request (see the module
        # notes); anything else may have been acted on, and is never sent twice.
        if resend and self._reused and self._received == 0 and self.endpoint._resend(stream):
            return []
        status = self._status if self._mode == "sse" else None
        return self.endpoint._ended(stream, status, self._mode, None, reason)

    def _emit(self, data: bytes | None) -> None:
        """Queue bytes h11 produced (it returns None for nothing)."""
        if data:
            self._out.append(data)
