"""The lifecycles of a connection and of each request in it, as data.

Two kinds of thing have a lifecycle in MCP: the session (one per connection)
and each request (one per JSON-RPC id, either way). Both are written here as
tables, `(role, state, input) -> next state`, and nowhere else: the connections
(`_server.py`, `_client.py`, `_base.py`) never assign a state, they ask
`advance` (or `follows`) for the next one. So the table is the whole truth about
what may happen in what order; `scripts/draw_states.py` draws it into
docs/architecture.md, and tests/core/test_state_table.py fails when the drawing
is stale and checks, pair by pair, that the engine moves only along it.

Why tables rather than `if`s in the verbs: the rules about *order* ("no
request before the handshake", "one round of questions at a time", "nothing
after the end") are what a reader wants to see at once and what a reviewer must
check against the spec; scattered over a dozen methods in three files they can
only be read by simulation. The per-method rules (which method exists in which
revision, which capability gates it) are a table too, `_versions._ROWS`; this
module is its counterpart in time.

What is *not* a state here, and why:

* The era (legacy `initialize` session vs 2026-07-28 per-request envelope) is a
  fact decided once, by the first message, not a stage the session passes
  through: it is `Era`, set alongside the READY transition. `classify_era` below
  is the one reading of a message's era signals, shared by the server
  connection, the HTTP server and the HTTP client.
* A request's bookkeeping (deadline, progress token, the round of questions)
  lives in `_requests.py`'s records; each record carries its `RequestState`,
  and which table holds a record (`_inbound`, `_outbound`, the client's waiting
  calls) always agrees with it (`check_invariants` asserts so).

The same kind of value, a `StrEnum`, names every state in the core: the two
lifecycles here, a Streamable HTTP response stream (`StreamState`), an HTTP
response (`ResponseState`) and TCP connection (`HTTPConnectionState`), and a
WebSocket (`WebSocketState`). A `StrEnum` member *is* a string equal to its
value, so `conn.state == "ready"` and `f"state {conn.state}"` read as they did
when the states were plain strings, and the members print as their values.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final, Literal

from ._errors import LocalProtocolError
from ._versions import LEGACY_REVISIONS, META_PROTOCOL_VERSION, MODERN_REVISIONS, Era, Role

__all__ = [
    "ENDED",
    "HTTPConnectionState",
    "INITIAL_REQUEST_STATE",
    "INITIAL_SESSION_STATE",
    "REQUEST_TABLE",
    "SESSION_TABLE",
    "Direction",
    "RequestInput",
    "RequestState",
    "ResponseState",
    "SessionInput",
    "SessionState",
    "StreamState",
    "WebSocketState",
    "advance",
    "advance_request",
    "classify_era",
    "follows",
    "follows_request",
]


# ================================================================== the session


class SessionState(StrEnum):
    """Where a connection is in its life (public as `mcp_core.State`).

    After CLOSED or ERROR the verbs that answer the peer (`send_result`,
    `send_error`, `send_progress`, `send_log`, the input verbs ...) are no-ops
    that return False, as for a cancelled request, so reacting to the events of
    the closing batch can never raise; the verbs that start or stop something of
    your own (`send_request`, `send_notification`, `cancel_request`) raise
    `LocalProtocolError`.
    """

    IDLE = "idle"  # client: connect() not called yet
    CONNECTING = "connecting"  # client: handshake or probe in flight
    AWAITING_FIRST = "awaiting_first"  # server: the first request picks the era
    READY = "ready"
    CLOSED = "closed"
    ERROR = "error"


class SessionInput(StrEnum):
    """What moves a session. The value is the label the diagrams show."""

    CONNECT = "connect()"  # client: a handshake or a discovery probe goes out
    CONNECT_PINNED = "connect() pinned 2026-07-28"  # client: nothing to negotiate
    NEGOTIATED = "revision agreed"  # client: initialize answered, or the probe settled
    INITIALIZE = "initialize"  # server: a valid initialize opened a legacy session
    ENVELOPE = "2026-07-28 envelope"  # server: a valid envelope made the stream modern
    RESTORE = "restore(snapshot)"  # server: a ready legacy session moved in
    END = "end"  # end of stream or close(): everything in flight settles
    FAIL = "fail"  # broken framing or handshake, or the transport's own fault


_S = SessionState
_SI = SessionInput

# The two ways out of every live state. CLOSED and ERROR have no exits at all:
# closing twice is answered before the table is asked (`close()` returns []),
# because a closed connection has nothing left to settle.
_ENDINGS: Final = {_SI.END: _S.CLOSED, _SI.FAIL: _S.ERROR}

SESSION_TABLE: Final[Mapping[Role, Mapping[SessionState, Mapping[SessionInput, SessionState]]]] = {
    "client": {
        # A client starts idle so that building one sends nothing: the
        # application picks the moment (and the probe's deadline) with connect().
        _S.IDLE: {_SI.CONNECT: _S.CONNECTING, _SI.CONNECT_PINNED: _S.READY, **_ENDINGS},
        # While connecting only the engine's own requests are out (initialize,
        # server/discover); the application's requests wait for READY, because
        # their revision, and so their very shape, is not known yet.
        _S.CONNECTING: {_SI.NEGOTIATED: _S.READY, **_ENDINGS},
        _S.READY: {**_ENDINGS},
        _S.CLOSED: {},
        _S.ERROR: {},
    },
    "server": {
        # The first request decides the era (see classify_era): an initialize
        # opens a legacy session, an envelope a 2026-07-28 stream; a legacy
        # server's ping is answered meanwhile without leaving this state.
        _S.AWAITING_FIRST: {
            _SI.INITIALIZE: _S.READY,
            _SI.ENVELOPE: _S.READY,
            _SI.RESTORE: _S.READY,
            **_ENDINGS,
        },
        # No INITIALIZE out of READY: a second initialize is the peer's error
        # ("Session already initialized"), answered, and the session goes on.
        _S.READY: {**_ENDINGS},
        _S.CLOSED: {},
        _S.ERROR: {},
    },
}

INITIAL_SESSION_STATE: Final[Mapping[Role, SessionState]] = {
    "client": _S.IDLE,
    "server": _S.AWAITING_FIRST,
}

ENDED: Final = (_S.CLOSED, _S.ERROR)


def follows(role: Role, state: SessionState, by: SessionInput) -> SessionState | None:
    """The state `by` leads to from `state`, or None when the table has no such move.

    For input from the peer: the caller turns None into the precise error the
    peer gets (a JSON-RPC error, or the end of a broken handshake).
    """
    return SESSION_TABLE[role][state].get(by)


def advance(role: Role, state: SessionState, by: SessionInput) -> SessionState:
    """The state `by` leads to from `state`; `LocalProtocolError` when none.

    For our own calls, and for moves the engine makes after checking them
    itself, where a missing row is a bug to report, never a peer's doing.
    """
    found = SESSION_TABLE[role][state].get(by)
    if found is None:
        raise LocalProtocolError(f"a {role} connection in state {state} cannot take '{by}'")
    return found


# ================================================================== a request


class RequestState(StrEnum):
    """Where one request is in its life, on the side holding it.

    Live states are held in a record of `_requests.py` (and the record is in
    exactly one of the connection's in-flight tables); terminal states are the
    last value a record carries, the moment it leaves its table, after which
    only its id is remembered (a late answer is then told apart from a stranger).
    """

    # ours: a request we sent
    SENT = "sent"  # on the wire, its answer awaited
    AWAITING_INPUT = "awaiting_input"  # client, 2026-07-28: the application answers questions
    # theirs: a request the peer sent
    OPEN = "open"  # received, the application's answer awaited
    ASKING = "asking"  # server, legacy: its request_input questions are out
    # terminal, either way
    ANSWERED = "answered"  # a result went out, or came in
    FAILED = "failed"  # an error went out or came in; timed out; lost; connection ended
    INPUT_REQUIRED = "input_required"  # server, 2026-07-28: the client retries under a new id
    CANCELLED = "cancelled"  # cancelled by either side, or its stream abandoned


class RequestInput(StrEnum):
    """What moves a request. The value is the label the diagrams show."""

    # theirs, moved by our verbs
    RESULT = "send_result"
    ERROR = "send_error"
    ASK = "request_input (legacy)"
    ASK_IN_RESULT = "send_input_required / request_input (2026-07-28)"
    # theirs, moved by the engine or the peer
    ANSWERS_IN = "every question settled"
    PEER_CANCEL = "peer cancelled"
    ABANDON = "stream abandoned"
    # ours, moved by the peer's answer
    RESPONSE = "result received"
    ERROR_RESPONSE = "error received"
    INPUT_REQUIRED_IN = "InputRequiredResult received"
    # ours, moved by us, the clock or the transport
    CANCEL = "cancel_request"
    TIMEOUT = "deadline passed"
    LOST = "answer lost"  # fail_request, a refused oversized answer, an invalid one
    REFUSED_INPUT = "application refused a question"
    RETRY = "retried with every answer"
    # either, moved by the connection ending
    CLOSE = "connection ended"


Direction = Literal["inbound", "outbound"]

_R = RequestState
_RI = RequestInput

# The ways out of an answer-awaiting request of ours that every role shares.
_OURS_SETTLE: Final = {
    _RI.RESPONSE: _R.ANSWERED,
    _RI.ERROR_RESPONSE: _R.FAILED,
    _RI.CANCEL: _R.CANCELLED,
    _RI.TIMEOUT: _R.FAILED,
    _RI.LOST: _R.FAILED,
    _RI.CLOSE: _R.FAILED,
}
# ... and of a request of theirs that waits on our answer.
_THEIRS_SETTLE: Final = {
    _RI.RESULT: _R.ANSWERED,
    _RI.ERROR: _R.FAILED,
    _RI.PEER_CANCEL: _R.CANCELLED,
    _RI.ABANDON: _R.CANCELLED,
    _RI.CLOSE: _R.CANCELLED,
}
_TERMINAL: Final = (_R.ANSWERED, _R.FAILED, _R.INPUT_REQUIRED, _R.CANCELLED)

REQUEST_TABLE: Final[
    Mapping[tuple[Role, Direction], Mapping[RequestState, Mapping[RequestInput, RequestState]]]
] = {
    # A legacy server's own requests: pings, sampling, and the questions of
    # request_input, which are ordinary requests tied to the request they serve.
    ("server", "outbound"): {
        _R.SENT: {**_OURS_SETTLE},
        **{t: {} for t in _TERMINAL if t is not _R.INPUT_REQUIRED},
    },
    # A client's requests. A 2026-07-28 server may answer tools/call,
    # prompts/get or resources/read with an InputRequiredResult: the call then
    # waits on the application's answers, and goes out again under a new id
    # when every one is in, as often as the server keeps asking (bounded by
    # ClientConfig.max_input_rounds, counted on the record, not in the state).
    ("client", "outbound"): {
        _R.SENT: {
            **_OURS_SETTLE,
            _RI.INPUT_REQUIRED_IN: _R.AWAITING_INPUT,
            # 2026-07-28: a server ends one of our subscriptions/listen streams
            # with notifications/cancelled; the call fails ("ended by the server").
            _RI.PEER_CANCEL: _R.FAILED,
        },
        _R.AWAITING_INPUT: {
            _RI.RETRY: _R.SENT,
            # Refusing one question fails the whole call: a retry with a hole in
            # its answers would only be asked the same question again.
            _RI.REFUSED_INPUT: _R.FAILED,
            _RI.CANCEL: _R.CANCELLED,
            _RI.TIMEOUT: _R.FAILED,  # the call's deadline runs on while it waits
            _RI.CLOSE: _R.FAILED,
        },
        **{t: {} for t in _TERMINAL if t is not _R.INPUT_REQUIRED},
    },
    # The client's requests at a server. Asking is one round at a time: ASKING
    # has no ASK, so a second request_input before the first round's
    # InputReceived is refused (the keys of two rounds could not be told apart).
    # Answering while asking is allowed and withdraws the questions (cancelled
    # on the wire): the application decided it no longer needs them.
    ("server", "inbound"): {
        _R.OPEN: {
            **_THEIRS_SETTLE,
            _RI.ASK: _R.ASKING,
            _RI.ASK_IN_RESULT: _R.INPUT_REQUIRED,
        },
        _R.ASKING: {**_THEIRS_SETTLE, _RI.ANSWERS_IN: _R.OPEN},
        **{t: {} for t in _TERMINAL},
    },
    # A legacy server's requests at a client (elicitation, sampling, roots, ping):
    # answered or refused by the application, or cancelled by the server.
    ("client", "inbound"): {
        _R.OPEN: {**_THEIRS_SETTLE},
        **{t: {} for t in _TERMINAL if t is not _R.INPUT_REQUIRED},
    },
}

INITIAL_REQUEST_STATE: Final[Mapping[Direction, RequestState]] = {
    "outbound": _R.SENT,
    "inbound": _R.OPEN,
}

# The table flattened for the hot path: one tuple, one dict lookup per move.
_REQUEST_NEXT: Final = {
    (role, direction, state, by): target
    for (role, direction), rows in REQUEST_TABLE.items()
    for state, row in rows.items()
    for by, target in row.items()
}


def follows_request(
    role: Role, direction: Direction, state: RequestState, by: RequestInput
) -> RequestState | None:
    """The state `by` leads a request to, or None when the table has no such move."""
    return _REQUEST_NEXT.get((role, direction, state, by))


def advance_request(
    role: Role, direction: Direction, state: RequestState, by: RequestInput
) -> RequestState:
    """The state `by` leads a request to; `LocalProtocolError` when none (see `advance`)."""
    found = _REQUEST_NEXT.get((role, direction, state, by))
    if found is None:
        raise LocalProtocolError(
            f"a {role}'s {direction} request in state {state} cannot take '{by}'"
        )
    return found


# ================================================== transport states (no table)


class StreamState(StrEnum):
    """One Streamable HTTP response stream, as the HTTP server sees it.

    PENDING: nothing written, so the answer may still be plain JSON; STREAMING:
    the SSE head went out, events follow; DONE: the stream ended. It only moves
    forward, which `_http_server.py` checks where it moves it.
    """

    PENDING = "pending"
    STREAMING = "streaming"
    DONE = "done"


class ResponseState(StrEnum):
    """One HTTP response through an `HTTPExchange`: nothing sent, head sent, ended."""

    NOT_STARTED = "not_started"
    SENDING = "sending"
    ENDED = "ended"


class HTTPConnectionState(StrEnum):
    """One TCP connection of the HTTP server: between requests, reading one (head
    and body), or answering one (h11 serves one request at a time per connection)."""

    IDLE = "idle"
    RECEIVING = "receiving"
    RESPONDING = "responding"


class WebSocketState(StrEnum):
    """An MCP-over-WebSocket connection (`WebSocketConnection.state`).

    HANDSHAKE: the HTTP upgrade is not done; OPEN: messages flow; CLOSING: our
    close frame went out and the peer's is awaited; CLOSED: close the socket.
    """

    HANDSHAKE = "handshake"
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


# =================================================================== the era


def classify_era(params: Any, header: str | None = None) -> Era | None:
    """The era a message says it belongs to: MODERN, LEGACY, or None for no word.

    `params` are a request's params as received (anything: a peer sent them);
    `header` the `MCP-Protocol-Version` of the HTTP request that carried it, if
    any. The 2026-07-28 signals win: a header naming a modern revision, or a
    `_meta` carrying `io.modelcontextprotocol/protocolVersion` (whatever its
    value: whether that value is acceptable is for the envelope's check to say,
    with its own precise error). A header naming a legacy revision says LEGACY.
    No header, an unknown one, and params without the envelope say nothing.

    What "nothing" means is each caller's policy, because it is a property of
    the transport, not of the message: a server connection takes an `initialize`
    as legacy and anything else as 2026-07-28 when it speaks that; the HTTP
    server routes it to a session (sessions are legacy), and refuses an
    unknown header on a server that speaks no 2026-07-28; the HTTP client asks
    of its own messages only, to pick their headers while the probe is out.
    """
    if header is not None and header in _MODERN:
        return Era.MODERN
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and META_PROTOCOL_VERSION in meta:
        return Era.MODERN
    if header is not None and header in _LEGACY:
        return Era.LEGACY
    return None


_MODERN: Final = frozenset(MODERN_REVISIONS)
_LEGACY: Final = frozenset(LEGACY_REVISIONS)
