"""Legacy sessions shared by several processes: the sans-IO half; see docs/deploy.md.

`HTTPServerEndpoint` holds each legacy session in one process's memory. When
several processes (replicas) serve one endpoint behind a load balancer, a
session's requests land anywhere, and what must cross processes lives in a
store the adapters talk to. That talk is I/O, which this layer never does, so
`SharedSessionEndpoint` turns the two moments that need it into events and
waits for the adapter's word, the way h11 waits for bytes:

* `SessionNamed`: a legacy POST, GET or DELETE names a session
  (`Mcp-Session-Id`). The exchange is parked; the adapter looks the session
  up in the store and then either hands the request on here (`proceed`,
  after `adopt`ing a connection restored from the store when this process did
  not hold it yet), answers it without running it (`answer`: a client's answer
  forwarded to the process whose request asked), or refuses it (`refuse`).
* `SessionOpened`: an `initialize` succeeded. Its answer is held until the
  adapter has written the session record (`release`), so the client never
  learns a session id another process could not yet find.

Messages that belong to a request in another process arrive through the
adapter's bus and are fed with `deliver`, as if they had been posted here.

Server-to-client request ids must not collide between two processes holding
one session: `tag_request_ids` makes a connection's ids strings carrying a
prefix (the adapter puts its process id in it, so any process can tell where
a client's answer must go: `tagged_origin`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import _jsonrpc as jr
from ._connection import LOG_RANK, RequestId, State
from ._errors import INTERNAL_ERROR, LocalProtocolError, RemoteProtocolError
from ._events import Event
from ._http import PROTOCOL_VERSION, SESSION_ID, is_visible_ascii, single_header
from ._http_server import (
    HTTPServerEndpoint,
    Stream,
    _Session,
    _tag,
)
from ._http_server_conn import HTTPExchange, Refusal, RequestHead
from ._server import ServerConnection
from ._state import StreamState, classify_era
from ._versions import Era

__all__ = [
    "SessionNamed",
    "SessionOpened",
    "SharedSessionEndpoint",
    "apply_shared_state",
    "tag_request_ids",
    "tagged_origin",
]

#: Separates the process part of a tagged request id from the rest.
TAG_SEPARATOR: Final = "."
# Put in a stream's `pending` set to keep it open: the stream finishes when that set
# empties, so this holds an initialize answer without a request of its own.
_HELD: Final = "\x00held"  # a pending marker no JSON-RPC id can equal (ids are checked)


@dataclass(frozen=True, slots=True)
class SessionNamed(Event):
    """A legacy request names session `session_id`; the exchange waits for
    `proceed`, `answer` or `refuse` (see the module docstring).

    `held` says whether this endpoint holds a connection for the session now
    (possibly out of date: another process may have changed it since).
    `method` is the HTTP method. For a POST, `messages` are the JSON-RPC
    messages of the body as parsed (one, or a 2025-03-26 batch), and
    `has_request` whether any of them is a request (it will run here); a body
    of only responses and notifications may be forwarded to the process that
    is waiting for it. `last_event_id` is a GET's resumption cursor.
    """

    exchange: HTTPExchange
    session_id: str
    held: bool
    method: Literal["POST", "GET", "DELETE"]
    messages: tuple[Any, ...] = ()
    has_request: bool = False
    last_event_id: str | None = None

    def payload(self) -> bytes:
        """The POST body as one JSON-RPC message (or batch), compact, for the bus."""
        value: Any = self.messages[0] if len(self.messages) == 1 else list(self.messages)
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True, slots=True)
class SessionOpened(Event):
    """An `initialize` created session `session_id` here, on `connection`; its
    answer goes out on `release(exchange)` (or `refuse` ends the session)."""

    exchange: HTTPExchange
    session_id: str
    connection: ServerConnection


def tag_request_ids(conn: ServerConnection, tag: str) -> None:
    """From now on, `conn` sends its requests with string ids `f"{tag}{n}"`.

    Two processes holding copies of one legacy session each tag with their own
    prefix, so their `elicitation/create` ids never collide, and whoever gets
    the client's answer can read where it belongs (`tagged_origin`). The tag is
    visible ASCII; its process part ends at the first `TAG_SEPARATOR`.
    """
    if not tag or not is_visible_ascii(tag) or TAG_SEPARATOR not in tag:
        raise LocalProtocolError(f"a request id tag is visible ASCII with a {TAG_SEPARATOR!r}")
    conn._id_tag = tag


def tagged_origin(request_id: object) -> str | None:
    """The process part of an id made under `tag_request_ids` (or of a progress
    token: ours are our request ids), or None for any other id."""
    if not isinstance(request_id, str):
        return None
    origin, sep, _ = request_id.partition(TAG_SEPARATOR)
    return origin if sep and origin else None


def apply_shared_state(
    conn: ServerConnection, *, log_level: str | None, subscriptions: frozenset[str]
) -> None:
    """Bring a held copy of a ready legacy session up to date with what another
    process recorded for it (its `logging/setLevel`, its subscriptions)."""
    if conn.era is not Era.LEGACY or conn.state is not State.READY:
        raise LocalProtocolError("only a ready legacy session has shared state")
    if log_level is not None and log_level not in LOG_RANK:
        raise ValueError(f"unknown log level {log_level!r}")
    conn.log_level = log_level
    conn._subscribed = dict.fromkeys(subscriptions)


class _Parked:
    """A request waiting for the adapter's word: its head, and the parsed body (None
    for a GET or DELETE), kept so `proceed` runs it without reading it again.
    """

    __slots__ = ("head", "obj")

    def __init__(self, head: RequestHead, obj: Any) -> None:
        """Park `head` with its parsed body `obj`."""
        self.head = head
        self.obj = obj


class SharedSessionEndpoint(HTTPServerEndpoint):
    """An `HTTPServerEndpoint` whose legacy sessions other processes share.

    Everything else (2026-07-28 requests, policy, limits) is the plain
    endpoint's. Drive it as one, and act on `SessionNamed` and `SessionOpened`
    (the module docstring); each of `proceed`, `answer`, `refuse`, `release`
    and `deliver` returns events to handle like those of `receive_data`, then
    `pump()` as usual.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The plain endpoint's arguments. `_admitted` marks exchanges `proceed` let
        through, so the hooks do not park them a second time.
        """
        super().__init__(*args, **kwargs)
        self._parked: dict[HTTPExchange, _Parked] = {}
        self._admitted: set[HTTPExchange] = set()
        self._held: dict[HTTPExchange, tuple[Stream, RequestId]] = {}
        self._opening: Stream | None = None

    # ------------------------------------------------------------ the adapter's word

    def adopt(self, session_id: str, conn: ServerConnection) -> bool:
        """Hold `conn` (a `ServerConnection.restore`d ready legacy session) as
        session `session_id`. False when the session table is full (the
        adapter refuses the request, 503); LocalProtocolError when the id is
        held already or the connection is not a ready legacy session."""
        if session_id in self._sessions:
            raise LocalProtocolError(f"session {session_id!r} is held already")
        if conn.era is not Era.LEGACY or conn.state is not State.READY:
            raise LocalProtocolError("only a ready legacy session can be adopted")
        if not is_visible_ascii(session_id):
            raise LocalProtocolError("a session id is visible ASCII (0x21-0x7E)")
        if len(self._sessions) >= self.limits.max_sessions:
            return False
        # Owned by the principal the restored connection carries, so a request from
        # anyone else is refused as if the session did not exist (404).
        session = _Session(session_id, conn, conn.principal, self.limits.max_backlog_messages)
        session.version = conn.protocol_version or ""
        self._sessions[session_id] = session
        self._owners[conn] = session
        self._idle[session_id] = float("nan")  # idle until a request attaches
        return True

    def proceed(
        self, exchange: HTTPExchange, *, now: float | None = None, wall_time: float | None = None
    ) -> list[Event]:
        """Run a parked request here, as the plain endpoint would have."""
        parked = self._parked.pop(exchange, None)
        if parked is None:
            return []
        self._admitted.add(exchange)
        head = parked.head

        def step() -> list[Event]:
            """The parked request, run as the plain endpoint would have run it."""
            if head.method == "POST":
                return self._post_legacy(exchange, head, parked.obj)
            if head.method == "GET":
                return self._get(exchange, head)
            return self._delete(exchange, head)

        try:
            return exchange.run_step(now, wall_time, step)
        finally:
            self._admitted.discard(exchange)

    def answer(self, exchange: HTTPExchange, status: int = 202) -> list[Event]:
        """Answer a parked request with an empty body (202: its messages went to
        the process waiting for them; 200: a DELETE done elsewhere)."""
        if self._parked.pop(exchange, None) is not None:
            exchange.respond(status, [])
        return []

    def refuse(
        self, exchange: HTTPExchange, status: int, message: str, *, code: int = INTERNAL_ERROR
    ) -> list[Event]:
        """Refuse a parked request, or a held `initialize` (whose session then
        ends here: nobody else could find it). The body is a JSON-RPC error
        carrying the request's id when there was one request."""
        parked = self._parked.pop(exchange, None)
        if parked is not None:
            obj = parked.obj
            rid = obj.get("id") if type(obj) is dict and "method" in obj else None
            return exchange.refuse(Refusal(status, message, code, request_id=rid))
        held = self._held.pop(exchange, None)
        if held is None or held[0].session is None:
            return []
        stream, rid = held
        session = stream.session
        assert session is not None
        self._release(stream)
        stream.state = StreamState.DONE
        events = exchange.refuse(Refusal(status, message, code, request_id=rid))
        return events + self._end_session(session, message)

    def release(self, exchange: HTTPExchange) -> list[Event]:
        """Let a held `initialize` answer go out (the session record is written)."""
        held = self._held.pop(exchange, None)
        if held is not None:
            stream = held[0]
            stream.pending.discard(_HELD)
            if not stream.pending and stream.state != StreamState.DONE:
                self._finish(stream)
        return []

    def deliver(
        self, session_id: str, payload: bytes, *, wall_time: float | None = None
    ) -> list[Event]:
        """Feed a JSON-RPC message (or batch) forwarded from another process (a
        client's answer, a cancel, progress) to the held session, as if it had
        been posted here. Nothing happens for a session not held, and a
        message that is not JSON-RPC is dropped: only answers and
        notifications travel this way, so there is nobody to tell."""
        session = self._sessions.get(session_id)
        if session is None or session.closed:
            return []
        try:
            obj = jr.parse(payload, self.config.limits)
        except RemoteProtocolError:
            return []
        conn = session.conn
        session.capture = []
        try:
            events = conn.receive_parsed(obj, wall_time=wall_time)
            self._drain(conn)
        finally:
            session.capture = None
        return _tag(self._session_events(session, events), conn, session_id)

    def has_live_stream(self, session_id: str) -> bool:
        """Whether the session's GET stream is open on this endpoint now: the
        process that has it is the one to pass on notifications outside any
        request (list changes, resource updates)."""
        session = self._sessions.get(session_id)
        stream = session.get_stream if session is not None else None
        return (
            stream is not None and stream.http is not None and stream.state == StreamState.STREAMING
        )

    # ------------------------------------------------------------------ the hooks

    def _park(self, http: HTTPExchange, head: RequestHead, obj: Any, event: Event) -> list[Event]:
        """Hold `http` until the adapter decides, and hand it the event that asks.

        Nothing is answered meanwhile: the adapter's store lookup is I/O this layer
        cannot wait for, so the exchange simply stays open, as a slow handler's would.
        """
        self._parked[http] = _Parked(head, obj)
        return [event]

    def _post_legacy(self, http: HTTPExchange, head: RequestHead, obj: Any) -> list[Event]:
        """A legacy POST naming a session is parked (`SessionNamed`), unless `proceed`
        already admitted it. A POST without a session id (an `initialize`) or with a
        repeated one is the plain endpoint's to answer: there is nothing to look up.
        """
        session_id, repeated = single_header(head.headers, SESSION_ID)
        if http in self._admitted or session_id is None or repeated:
            return super()._post_legacy(http, head, obj)
        messages = tuple(obj) if type(obj) is list else (obj,)
        has_request = any(
            type(m) is dict and "method" in m and jr.is_request_id(m.get("id")) for m in messages
        )
        held = session_id in self._sessions
        return self._park(
            http,
            head,
            obj,
            SessionNamed(http, session_id, held, "POST", messages, has_request),
        )

    def _legacy_target(self, http: HTTPExchange, head: RequestHead) -> _Session | list[Event]:
        """A legacy GET or DELETE naming a session is parked like a POST. One carrying a
        2026-07-28 version header, or an endpoint with no legacy revision, goes to the
        plain endpoint, whose rules for it apply: there is no session to share.
        """
        session_id, repeated = single_header(head.headers, SESSION_ID)
        version, _ = single_header(head.headers, PROTOCOL_VERSION)
        if (
            http in self._admitted
            or session_id is None
            or repeated
            or classify_era(None, version) is Era.MODERN
            or not self.config.legacy_versions
        ):
            return super()._legacy_target(http, head)
        last_event_id, _ = single_header(head.headers, "last-event-id")
        method: Literal["GET", "DELETE"] = "GET" if head.method == "GET" else "DELETE"
        held = session_id in self._sessions
        return self._park(
            http,
            head,
            None,
            SessionNamed(http, session_id, held, method, last_event_id=last_event_id),
        )

    def _new_stream(
        self,
        session: _Session,
        pending: set[RequestId],
        head: RequestHead,
        *,
        batch: bool = False,
        is_init: bool = False,
    ) -> Stream:
        """The plain endpoint's stream; an `initialize`'s is held by a marker in `pending`
        until `release`, so its answer (which carries the session id) cannot go out
        before the store knows the session.
        """
        stream = super()._new_stream(session, pending, head, batch=batch, is_init=is_init)
        if is_init:
            # Its answer waits for `release` (SessionOpened), or goes at once if refused.
            stream.pending.add(_HELD)
            self._opening = stream
        return stream

    def _feed(
        self, session: _Session, stream: Stream, obj: Any, wall_time: float | None
    ) -> list[Event]:
        """The plain endpoint's feeding; an `initialize` the connection refused needs no
        record, so its hold is dropped and its error goes out at once.
        """
        events = super()._feed(session, stream, obj, wall_time)
        if stream is self._opening and not stream.init_ok:
            # Refused (or not answered at once): nothing to record, nothing to hold.
            self._opening = None
            stream.pending.discard(_HELD)
            if not stream.pending and stream.state != StreamState.DONE:
                self._finish(stream)
        return events

    def _initialize(
        self, http: HTTPExchange, head: RequestHead, obj: dict[str, Any]
    ) -> list[Event]:
        """Create the session as the plain endpoint does, then report `SessionOpened` so
        the adapter writes the record; the answer waits for `release`.
        """
        self._opening = None
        events = super()._initialize(http, head, obj)
        stream, self._opening = self._opening, None
        session = stream.session if stream is not None else None
        if stream is None or session is None or self._sessions.get(session.id) is not session:
            return events
        self._held[http] = (stream, obj["id"])
        return [*events, SessionOpened(http, session.id, session.conn)]

    def _end_session(self, session: _Session, reason: str) -> list[Event]:
        """End a session; held `initialize` answers for it are forgotten, as no
        `release` for them can matter any more.
        """
        for http, (stream, _) in list(self._held.items()):
            if stream.session is session:
                del self._held[http]
        return super()._end_session(session, reason)
