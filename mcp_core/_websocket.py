"""WebSocket transport, server and client, both protocol eras, over wsproto; sans-IO.

No MCP revision specifies a WebSocket transport. This follows the SEP-1288 proposal
(SPEC-NOTES 4.4), which makes it a *custom transport* in the spec's terms: one
JSON-RPC message per UTF-8 text message, and a binary message closes the connection
with 1003. Each object owns one MCP connection (`.mcp`) and does the framing around
it, so both eras work unchanged: a server's first message decides (as on stdio).

Driving a server (one task per accepted socket, any event loop)::

    ws = WebSocketServerConnection(config, host_policy=HostPolicy.loopback(8000))
    while not ws.closed:
        data = recv_with_timeout(sock, ws.next_deadline())   # b"" at EOF
        if data is None:                                      # the deadline passed
            events = ws.tick(clock())                         # clock(): monotonic
        else:
            events = ws.receive_data(data, wall_time=time())  # time(): epoch seconds
        for ev in events:
            if isinstance(ev, RequestReceived):
                ws.mcp.send_result(ev.request_id, answer(ev))
        sock.sendall(ws.data_to_send())
    sock.sendall(ws.data_to_send()); sock.close()

Driving a client::

    ws = WebSocketClientConnection(ClientConfig(), host="127.0.0.1:8000",
                                   new_key=lambda: secrets.token_bytes(16))
    sock.sendall(ws.data_to_send())                           # the upgrade request
    ... same loop; after `Connected`: ws.mcp.send_request("tools/list") and
    sock.sendall(ws.data_to_send()); answers arrive as ResponseReceived ...

Decisions:

* The HTTP/1.1 upgrade is done here with h11 and only the frame layer is wsproto's
  (`wsproto.connection.Connection`). `wsproto.WSConnection` draws the client key from
  `os.urandom` with no way to pass one, and its server handshake drops frames that
  arrive in the same chunk as the request and lets `UnicodeDecodeError` escape on
  non-ASCII header bytes.
* Server handshake, checked in the HTTP layer's order: a head over
  `max_header_bytes` gets 431 (counted on the bytes as they arrive, so one large
  read changes nothing), a malformed one h11's status (400), a bad `Host` 421, a
  bad `Origin` 403 (with a JSON-RPC error body, as over HTTP), another path 404, a
  method other than GET 405, a missing `Upgrade: websocket` or a
  `Sec-WebSocket-Version` other than 13 gets 426, and anything else malformed (no
  `Connection: upgrade`, a bad key, a body, HTTP/1.0) gets 400. Extension offers
  (permessage-deflate included) are declined by leaving them out of the answer.
  The subprotocol `mcp` is selected when offered (the official SDK's 1.x
  WebSocket client offers it) and never required; others are ignored.
* Client: offers `mcp`, offers no extension, and fails the connection when the 101
  lacks the right `Sec-WebSocket-Accept`, names a subprotocol it did not offer, or
  turns on any extension. Once accepted it calls `mcp.connect()`, unless the
  application already did (its requests then wait for the 101).
* A text message over `max_message_bytes` is answered, not closed on: once its
  bytes pass the limit only its first and last `PEEK_BYTES` are kept and the rest
  is dropped as it arrives; when it ends, the MCP connection refuses it as it
  refuses an over-long stdio line (`receive_oversized`: the error with the
  request's id when those bytes show it, or the failure of our request it
  answered) and the WebSocket goes on. Closing with 1009 instead would fail every
  other request in flight on the connection, and tell the peer nothing about which
  of its requests was refused; over stdio and HTTP the same message fails alone.
* Frames: a binary message closes with 1003, invalid UTF-8 with 1007 (wsproto's
  check), a message of more than `max_fragments` frames with 1008 (a policy limit,
  not a size), any other framing violation (unmasked client frame, reserved bits,
  a bad close code ...) with 1002. These surface as `WebSocketClosed` and a
  `ConnectionClosed` whose `error` is set.
* Input is handed to wsproto in slices of 64 KiB and parsed as it goes, so a peer
  cannot make this layer hold more than one slice beyond the message limit.
  A complete message is handed to the MCP connection without a copy.
* Pings are answered with pongs. Only the latest unanswered ping is answered
  (RFC 6455 5.5.3), so a ping flood cannot grow the output.
* Every WebSocket ends with exactly one `ConnectionClosed` from `.mcp` (also when
  the handshake fails), and every opened one with exactly one `WebSocketClosed`,
  emitted when the closing starts (ours or the peer's).
* Two clocks, as in the adapters' driver: `wall_time=` on `receive_data` is wall-clock
  time for the MCP connection (expiry of a sealed `requestState`); `tick(now)`
  takes the timer clock, which runs the MCP request deadlines and this layer's
  handshake and closing timeouts. Those timers start at the first `tick()`
  (`next_deadline()` asks for one at once), so wall time never leaks into them.
* The client's frames are masked by wsproto with `os.urandom(4)` per frame; RFC
  6455 requires unpredictable masks and wsproto offers no hook, so that is the one
  source of randomness used on this path.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import h11
from wsproto import events as wse
from wsproto.connection import Connection as FrameConnection
from wsproto.connection import ConnectionState, ConnectionType
from wsproto.utilities import generate_accept_token

from . import _jsonrpc as jr
from ._base import State, missing_wall_time
from ._client import ClientConnection
from ._config import ClientConfig, ServerConfig
from ._errors import INVALID_REQUEST, PARSE_ERROR, LocalProtocolError, RemoteProtocolError
from ._events import ConnectionClosed, Event
from ._framing import Ends
from ._http import (
    DEFAULT_PATH,
    JSON,
    Headers,
    HeadScanner,
    decode_headers,
    error_body,
    reason_phrase,
)
from ._http_headers import HostPolicy
from ._http_server import DEFAULT_HOST_POLICY, RequestHead
from ._jsonrpc import PEEK_BYTES
from ._resource_auth import (
    AccessToken,
    AuthResponse,
    Granted,
    NeedsVerification,
    ProtectedResource,
    ResourceGuard,
    VerificationResult,
)
from ._server import ServerConnection
from ._state import WebSocketState

__all__ = [
    "CLOSE_ABNORMAL",
    "CLOSE_GOING_AWAY",
    "CLOSE_INTERNAL_ERROR",
    "CLOSE_INVALID_PAYLOAD",
    "CLOSE_MESSAGE_TOO_BIG",
    "CLOSE_NORMAL",
    "CLOSE_POLICY_VIOLATION",
    "CLOSE_PROTOCOL_ERROR",
    "CLOSE_UNSUPPORTED_DATA",
    "MCP_SUBPROTOCOL",
    "WebSocketAccepted",
    "WebSocketClientConnection",
    "WebSocketClosed",
    "WebSocketLimits",
    "WebSocketRejected",
    "WebSocketServerConnection",
    "WebSocketTokenVerificationNeeded",
]

# Selected when the client offers it (the official SDK's 1.x client does), never
# required: clients that offer no subprotocol must still get in.
MCP_SUBPROTOCOL: Final = "mcp"

# RFC 6455 section 7.4.1. Which one a close carries tells the peer whether to retry:
# 1000/1001 are ordinary ends, 1002/1003/1007 say it sent what we cannot read (fix
# the sender, retrying resends it), 1008/1009 a policy of ours, 1011 our own fault.

CLOSE_NORMAL: Final = 1000
CLOSE_GOING_AWAY: Final = 1001
CLOSE_PROTOCOL_ERROR: Final = 1002
CLOSE_UNSUPPORTED_DATA: Final = 1003
CLOSE_ABNORMAL: Final = 1006  # never sent: no close frame was received
CLOSE_INVALID_PAYLOAD: Final = 1007
CLOSE_POLICY_VIOLATION: Final = 1008
CLOSE_MESSAGE_TOO_BIG: Final = 1009
CLOSE_INTERNAL_ERROR: Final = 1011

# Codes an endpoint may put in a close frame (RFC 6455 7.4, IANA registry).
# (1005 and 1006 are reserved to say "no code" and "no close frame", and must never be sent;
# 1010 is the client's "extension required", listed for completeness.)
_SENDABLE_CODES: Final = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012})
# wsproto buffers whatever it is handed, so one huge read given whole would sit in
# memory before the message limit could see any of it; slices bound that.
_SLICE: Final = 64 * 1024  # bytes handed to wsproto at a time
# A refusal's body explains it (a JSON-RPC error, a proxy's message); 4 KiB holds any useful
# one, and a server streaming an endless body must not be read for ever.
_MAX_REJECTION_BODY: Final = 4096  # what a client keeps of a refusal's body
# The only version RFC 6455 defines; a client asking for another gets 426 with this one
# named, which is how the RFC says to negotiate (section 4.4).
_WEBSOCKET_VERSION: Final = "13"

_HANDSHAKE, _OPEN, _CLOSING, _DONE = (
    WebSocketState.HANDSHAKE,
    WebSocketState.OPEN,
    WebSocketState.CLOSING,
    WebSocketState.CLOSED,
)


# =========================================================================== events


@dataclass(frozen=True, slots=True)
class WebSocketAccepted(Event):
    """The opening handshake completed; MCP messages flow from now on.

    Server: `target` and `headers` are the client's request (names lower-case, values
    decoded as Latin-1), for your logs or authentication. Client: `target` is the path
    asked for and `headers` the server's 101 response.
    """

    target: str
    subprotocol: str | None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class WebSocketRejected(Event):
    """The upgrade was refused with an HTTP status; the connection is over.

    Server: the status this layer answered with and why (for your logs). Client: the
    server's status and the start of its body (decoded leniently).
    """

    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class WebSocketTokenVerificationNeeded(Event):
    """Server with `auth=`: the upgrade request carries a token the guard has not
    verified yet, and the handshake waits for the verdict.

    Verify `token` (a JWT against the issuer's keys, an RFC 7662 introspection ...),
    then call `connection.receive_token_verification(result, wall_time=...)` with an
    `AccessToken`, `InvalidToken` or `VerifierUnavailable`, and act on the events it
    returns (then write `data_to_send()`: the 101, or the refusal). Keep `token` out
    of logs, and never send it anywhere but to the verifier.
    """

    connection: WebSocketServerConnection
    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class WebSocketClosed(Event):
    """The WebSocket started closing: `code` and `reason` of the close that started it.

    `by_peer` tells whose close it was. 1006 means the peer vanished without a close
    frame. The MCP connection was closed at the same time (its events follow).
    """

    code: int
    reason: str
    by_peer: bool


# =========================================================================== limits


@dataclass(frozen=True, slots=True)
class WebSocketLimits:
    """The bounds this layer keeps (times in the `tick()` clock's units, seconds).

    `max_message_bytes` caps one reassembled text message; None means the MCP
    connection's `Limits.max_message_bytes`, so an oversized message is refused here
    (answered, the connection stays open) before it is ever buffered whole.
    `max_fragments` caps the frames of one message (1008). `max_header_bytes` caps the
    handshake's HTTP head (431 on the server).
    `handshake_timeout` runs from the first `tick()` to the end of the upgrade;
    `close_timeout` is how long a close we started waits for the peer's answer before
    `closed` turns true anyway.
    """

    max_message_bytes: int | None = None
    # wsproto bounds no frame count: a message split into one-byte frames costs a
    # frame header and an event per byte. 4096 frames lets a 64 MiB message arrive
    # in 16 KiB frames and stops a fragment flood long before it costs much.
    max_fragments: int = 4096
    # h11's own default for an incomplete head, as the HTTP endpoint uses: a browser's
    # upgrade request, cookies included, normally fits.
    max_header_bytes: int = 16 * 1024
    # A client that opens a socket and never finishes its upgrade holds a slot of
    # ours; 10 s is ample for a head of 16 KiB on any real link, as for HTTP heads.
    handshake_timeout: float | None = 10.0
    # RFC 6455 lets us close the TCP connection if the peer never answers our close;
    # waiting 5 s gives a live peer time to answer.
    close_timeout: float | None = 5.0

    def __post_init__(self) -> None:
        """Refuse bounds that would refuse everything or never fire (zero, negative, NaN)."""
        if self.max_message_bytes is not None and self.max_message_bytes < 1:
            raise ValueError("max_message_bytes must be positive")
        if self.max_fragments < 1 or self.max_header_bytes < 1:
            raise ValueError("max_fragments and max_header_bytes must be positive")
        for name in ("handshake_timeout", "close_timeout"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds or None")


# ====================================================================== helpers


def _tokens(headers: Headers, name: str, *, lower: bool = True) -> list[str]:
    """Every comma-separated token of a header across repeats (subprotocol names are
    case-sensitive, so those keep their case)."""
    tokens = [token.strip() for key, value in headers if key == name for token in value.split(",")]
    return [t.lower() if lower else t for t in tokens if t]


def _values(headers: Headers, name: str) -> list[str]:
    """Every value of a header, repeats kept, so that a repeated key or version (which
    RFC 6455 forbids) is seen as two values and refused, not read as one."""
    return [value.strip(" \t") for key, value in headers if key == name]


def _valid_key(values: list[str]) -> bool:
    """RFC 6455 4.2.1: one `Sec-WebSocket-Key`, the base64 of 16 bytes."""
    if len(values) != 1:
        return False
    try:
        return len(base64.b64decode(values[0].encode("latin-1"), validate=True)) == 16
    except (binascii.Error, ValueError):
        return False


def _close_reason(reason: str) -> str:
    """A reason that fits a close frame (123 bytes of UTF-8) whatever it quotes."""
    raw = reason.encode("utf-8", "replace")[:123]
    return raw.decode("utf-8", "ignore")


def _accept_token(key: str) -> str:
    """`Sec-WebSocket-Accept` for a key (RFC 6455 4.2.2: SHA-1 of key and the GUID).

    It proves the server read this handshake, so a cached or misdirected HTTP
    answer cannot pass for an upgrade; the client checks it for that reason.
    """
    return generate_accept_token(key.encode("latin-1")).decode("ascii")


def _protocol_error(code: int, reason: str) -> RemoteProtocolError:
    """What a failed WebSocket reports on `ConnectionClosed.error`.

    The JSON-RPC code says what a request failed by it should show: -32700 when the
    peer's bytes could not be read (bad UTF-8, too big), -32600 for any other
    broken framing; the status is the one the HTTP transport gives the same fault.
    """
    unreadable = code in (CLOSE_INVALID_PAYLOAD, CLOSE_MESSAGE_TOO_BIG)
    return RemoteProtocolError(
        f"WebSocket closed with {code}: {reason}",
        code=PARSE_ERROR if unreadable else INVALID_REQUEST,
        http_status=413 if code == CLOSE_MESSAGE_TOO_BIG else 400,
        data={"close_code": code},
    )


@dataclass(frozen=True, slots=True)
class _Refusal:
    """An HTTP answer to an upgrade we refuse. `jsonrpc` puts a JSON-RPC error in the
    body: for a 403 on `Origin`, as the HTTP transport does, so a client reads the
    same refusal whichever transport it tried."""

    status: int
    message: str
    headers: tuple[tuple[str, str], ...] = ()
    jsonrpc: bool = False


# ========================================================================== shared


class _WebSocket:
    """What both roles share: the frame loop, message reassembly, closing, timers."""

    mcp: ServerConnection | ClientConnection

    def __init__(self, mcp: ServerConnection | ClientConnection, limits: WebSocketLimits) -> None:
        """The shared state of both roles; the message limit is taken from the MCP
        connection unless set here, so one setting governs every transport.
        """
        self.mcp = mcp
        self.limits = limits
        self.subprotocol: str | None = None
        if limits.max_message_bytes is not None:
            self._max_message = limits.max_message_bytes
            self._setting = "WebSocketLimits.max_message_bytes"
        else:
            self._max_message = mcp.limits.max_message_bytes
            self._setting = "Limits.max_message_bytes"
        # The two kept ends of an oversized message never hold more than the limit itself,
        # even when the limit is smaller than the usual peek window.
        self._window = min(PEEK_BYTES, self._max_message // 2)
        self._skipping: Ends | None = None  # the over-long message being dropped
        self._phase = _HANDSHAKE
        self._ws: FrameConnection | None = None
        self._out: list[bytes] = []
        self._pong: bytes | None = None
        # The text message being reassembled from its frames; a bytearray so appending a
        # fragment does not copy what came before.
        self._message = bytearray()
        self._fragments = 0
        # Events raised in `data_to_send` (which returns bytes) wait here for the next call
        # that returns events, so none is lost.
        self._deferred: list[Event] = []
        self._wall: float | None = None
        # The running timer (handshake or closing): its length, and its start in the
        # tick() clock (NaN: start at the next tick).
        self._timer: float | None = limits.handshake_timeout
        self._timer_start = math.nan

    # ----------------------------------------------------------------- public

    @property
    def state(self) -> WebSocketState:
        """One of "handshake", "open", "closing" (our close sent, waiting) or "closed"
        (a `WebSocketState`, a str enum equal to those strings)."""
        return self._phase

    @property
    def closed(self) -> bool:
        """True when the socket should be closed (after writing `data_to_send()`)."""
        return self._phase == _DONE

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Event]:
        """Feed bytes from the socket; `b""` means the peer closed it.

        `wall_time` is wall-clock time in seconds since the epoch, passed to the
        MCP connection for the expiry of a sealed `requestState` (required, as
        there, when the server has `request_state_keys`). Never raises for
        anything the peer sends: failures come out as events.
        """
        # Refused at the first bytes rather than at the first retry that carries a sealed
        # state: a driver that never passes the wall time would otherwise fail later,
        # per request, far from its cause.
        if wall_time is None and data and self.mcp.needs_wall_time:
            missing_wall_time()
        events, self._deferred = self._deferred, []
        if self._phase == _DONE:
            return events
        self._wall = wall_time
        try:
            if not data:
                events += self._end_of_stream()
            elif self._phase == _HANDSHAKE:
                events += self._receive_handshake(data)
            else:
                events += self._sync(events)
                self._receive_frames(data, events)
        finally:
            self._wall = None
        return events

    def data_to_send(self) -> bytes:
        """Everything to write: handshake, one text frame per MCP message, control frames."""
        self._flush_messages()
        ws = self._ws
        # The pong goes out with the next write, after the messages queued before it, and
        # only once however many pings came meanwhile (RFC 6455 5.5.3 allows that).
        if self._pong is not None and ws is not None and ws.state is ConnectionState.OPEN:
            self._out.append(ws.send(wse.Pong(payload=self._pong)))
        self._pong = None
        self._deferred += self._sync(self._deferred)
        if not self._out:
            return b""
        data = b"".join(self._out)
        self._out.clear()
        return data

    def next_deadline(self) -> float | None:
        """When `tick()` next has work (minus infinity: now), or None."""
        if self._deferred:
            return -math.inf
        if self._phase == _DONE:
            return None
        deadlines: list[float] = []
        if self._timer is not None:
            start = self._timer_start
            # An unstamped timer (armed in a call that had no `tick()` clock) asks for a
            # tick now, which stamps it; the timeout then runs from that tick.
            deadlines.append(-math.inf if math.isnan(start) else start + self._timer)
        inner = self.mcp.next_deadline()
        if inner is not None:
            deadlines.append(inner)
        return min(deadlines) if deadlines else None

    def tick(self, now: float) -> list[Event]:
        """Run the timers: the MCP request deadlines, the handshake and closing timeouts."""
        events, self._deferred = self._deferred, []
        if self._phase == _DONE:
            return events
        # A timer starts at the first tick after it was armed: arming happens inside
        # receive_data or close, which are given no time of the tick() clock.
        if self._timer is not None:
            if math.isnan(self._timer_start):
                self._timer_start = now
            elif self._timer_start + self._timer <= now:
                self._timer = None
                if self._phase == _HANDSHAKE:
                    return events + self._handshake_timed_out()
                self._phase = _DONE  # the peer never answered our close
                return events
        if self.mcp.state not in (State.CLOSED, State.ERROR):
            events += self.mcp.tick(now)
        events += self._sync(events)
        return events

    def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> list[Event]:
        """Close the WebSocket with `code` and end the MCP connection (requests in
        flight are settled). `closed` turns true once the peer answered, or after
        `close_timeout`. Before the upgrade completed the socket is simply dropped.
        """
        # RFC 6455 7.4.2: 3000-3999 are registered for libraries and frameworks, 4000-4999
        # private; any other code outside the defined ones may not appear in a close frame.
        if code not in _SENDABLE_CODES and not 3000 <= code <= 4999:
            raise LocalProtocolError(f"{code} may not be sent in a close frame")
        events, self._deferred = self._deferred, []
        # Before the upgrade there are no frames to close with: the socket is just dropped,
        # and the MCP connection (which never opened) is closed cleanly.
        if self._phase == _HANDSHAKE:
            self._phase = _DONE
            return events + self._close_mcp(reason or "closed locally before the handshake")
        if self._phase != _OPEN:
            return events
        self._send_close(code, reason)
        events.append(WebSocketClosed(code, reason, by_peer=False))
        return events + self._close_mcp(reason or "closed locally")

    def check_invariants(self) -> None:
        """Assert this layer's bounds and consistency (for tests and fuzzers)."""
        assert len(self._message) <= self._max_message
        if self._skipping is not None:
            assert len(self._skipping.head) + len(self._skipping.tail) <= self._max_message
        assert self._fragments <= self.limits.max_fragments
        assert self._pong is None or len(self._pong) <= 125
        if self._phase == _DONE:
            assert self.mcp.state in (State.CLOSED, State.ERROR)
        self.mcp.check_invariants()

    # ------------------------------------------------------------ frame layer

    def _open(self, connection_type: ConnectionType, subprotocol: str | None) -> None:
        """The upgrade is done: frames from now on, and the handshake timer stops."""
        self._ws = FrameConnection(connection_type)
        self._phase = _OPEN
        self.subprotocol = subprotocol
        self._timer = None

    def _receive_frames(self, data: bytes, events: list[Event]) -> None:
        """Feed frames in `_SLICE`s, acting on each slice's events before the next.

        Acting between slices is what lets a close or a failure stop the reading
        at once: bytes after our close are never parsed.
        """
        for start in range(0, len(data), _SLICE):
            ws = self._ws
            if ws is None or self._phase not in (_OPEN, _CLOSING):
                return
            try:
                ws.receive_data(data[start : start + _SLICE])
                received = list(ws.events())
            except Exception as exc:  # wsproto turns framing errors into events; be safe
                self._fail(CLOSE_PROTOCOL_ERROR, f"malformed frame: {exc}", events)
                return
            for event in received:
                if self._phase not in (_OPEN, _CLOSING):
                    return
                self._on_frame_event(event, events)

    def _on_frame_event(self, event: wse.Event, events: list[Event]) -> None:
        """One wsproto event. While closing, only control frames still count: data the
        peer sent before it saw our close may still arrive, and is dropped unanswered."""
        ws = self._ws
        assert ws is not None
        if isinstance(event, wse.TextMessage):
            if self._phase == _OPEN:
                self._on_text(event, events)
        elif isinstance(event, wse.BytesMessage):
            if self._phase == _OPEN:
                self._fail(CLOSE_UNSUPPORTED_DATA, "binary messages are not supported", events)
        elif isinstance(event, wse.Ping):
            # Only the latest ping's payload is kept (RFC 6455 5.5.3 lets an endpoint answer
            # only the most recent), so a ping flood costs one pong, not one per ping.
            self._pong = bytes(event.payload)
        elif isinstance(event, wse.CloseConnection):
            if ws.state in (ConnectionState.REMOTE_CLOSING, ConnectionState.CLOSED):
                self._on_peer_close(event, events)
            else:  # wsproto reports a framing error as a close event, state unchanged
                self._fail(int(event.code), event.reason or "protocol error", events)
        # Pong: we send no pings, so there is nothing to match it with.

    def _on_text(self, event: wse.TextMessage, events: list[Event]) -> None:
        """A piece of a text message; the whole message goes to the MCP connection.

        Fragments are counted per frame (wsproto may split one frame into several
        events), and the size is checked before the piece is appended, so memory
        never holds more than the limit plus one slice.
        """
        raw = event.data.encode("utf-8")  # wsproto checked it; a str, so re-encode
        skipping = self._skipping
        if skipping is not None:
            skipping.add(raw)
        elif len(self._message) + len(raw) > self._max_message:
            # Over the limit: from here on keep only the two ends (see the module notes).
            skipping = self._skipping = Ends(self._window)
            skipping.add(self._message)
            skipping.add(raw)
            self._message = bytearray()
        if event.frame_finished:
            self._fragments += 1
            if self._fragments > self.limits.max_fragments:
                self._fail(
                    CLOSE_POLICY_VIOLATION,
                    f"message has more than {self.limits.max_fragments} fragments",
                    events,
                )
                return
        if skipping is None:
            self._message += raw
        if not event.message_finished:
            return
        self._fragments = 0
        # A message completed after the MCP connection ended (our close is on its way) is
        # dropped: nothing could answer it.
        if self.mcp.state in (State.CLOSED, State.ERROR):
            self._reset_message()
            return
        if skipping is not None:
            self._reset_message()
            events += self.mcp.receive_oversized(
                skipping.size,
                skipping.head,
                skipping.tail,
                limit=self._max_message,
                setting=self._setting,
                wall_time=self._wall,
            )
        else:
            payload, self._message = self._message, bytearray()  # handed over, not copied
            if self._admit(payload, events):
                events += self.mcp.receive_message(payload, wall_time=self._wall)
        events += self._sync(events)

    def _reset_message(self) -> None:
        """Drop a message in progress (a close came, or it was refused)."""
        self._message = bytearray()
        self._skipping = None

    def _on_peer_close(self, event: wse.CloseConnection, events: list[Event]) -> None:
        """The peer's close: answer it (RFC 6455 5.5.1 requires echoing a close),
        then end the MCP connection, whose requests in flight are settled as lost.

        The WebSocketClosed comes first, so an application learns why before it
        sees the requests fail.
        """
        ws = self._ws
        assert ws is not None
        was_open = self._phase == _OPEN
        self._phase = _DONE
        self._timer = None
        self._pong = None
        self._reset_message()
        if ws.state is ConnectionState.REMOTE_CLOSING:
            self._out.append(ws.send(wse.CloseConnection(code=event.code)))
        if was_open:
            code, reason = int(event.code), event.reason or ""
            events.append(WebSocketClosed(code, reason, by_peer=True))
            events += self._close_mcp(f"peer closed the WebSocket ({code} {reason})".strip())

    def _fail(self, code: int, reason: str, events: list[Event]) -> None:
        """Fail the WebSocket (RFC 6455 7.1.7): send our close and stop reading."""
        if self._phase == _OPEN:
            self._send_close(code, reason)
            events.append(WebSocketClosed(code, reason, by_peer=False))
            events += self._settle_mcp(reason, _protocol_error(code, reason))
        self._phase = _DONE
        self._timer = None
        self._reset_message()
        self._fragments = 0

    def _send_close(self, code: int, reason: str) -> None:
        """Queue our close frame after whatever the MCP connection already queued."""
        self._flush_messages()
        ws = self._ws
        assert ws is not None
        self._pong = None
        frame_reason = _close_reason(reason) or None
        self._out.append(ws.send(wse.CloseConnection(code=code, reason=frame_reason)))
        self._phase = _CLOSING
        self._timer = self.limits.close_timeout
        self._timer_start = math.nan

    def _flush_messages(self) -> None:
        """Frame the MCP connection's output: one text frame per message."""
        if self._phase == _HANDSHAKE:
            return  # kept queued until the upgrade completes
        messages = self.mcp.messages_to_send()
        ws = self._ws
        if self._phase != _OPEN or ws is None:
            return  # nothing can carry them any more
        for message in messages:
            # Our payloads are valid UTF-8 (`jr.dumps` writes strict JSON), so the decode
            # cannot fail; wsproto wants text for a text frame.
            self._out.append(ws.send(wse.TextMessage(data=message.payload.decode("utf-8"))))

    def _sync(self, events: Sequence[Event]) -> list[Event]:
        """Close the WebSocket when the MCP connection ended under it."""
        state = self.mcp.state
        if self._phase != _OPEN or state not in (State.CLOSED, State.ERROR):
            return []
        reason = next(
            (e.reason for e in reversed(events) if isinstance(e, ConnectionClosed)),
            "MCP connection closed",
        )
        # An MCP connection that failed (the peer broke the protocol) closes with 1008:
        # the generic "you broke our rules" code, since MCP has no close codes of its own.
        code = CLOSE_POLICY_VIOLATION if state == State.ERROR else CLOSE_NORMAL
        self._send_close(code, reason)
        return [WebSocketClosed(code, reason, by_peer=False)]

    def _settle_mcp(self, reason: str, error: RemoteProtocolError) -> list[Event]:
        """End the MCP connection as failed (ERROR state, `ConnectionClosed.error` set)."""
        if self.mcp.state in (State.CLOSED, State.ERROR):
            return []
        return self.mcp.close(reason, error=error)

    def _close_mcp(self, reason: str) -> list[Event]:
        """End the MCP connection cleanly (the socket ended, nobody broke a rule)."""
        if self.mcp.state in (State.CLOSED, State.ERROR):
            return []
        return self.mcp.close(reason)

    def _end_of_stream(self) -> list[Event]:
        """TCP EOF. In the open phase that is 1006 (no close frame): reported, but as
        the peer's leaving, not as a protocol error, since the network may be why."""
        phase = self._phase
        self._phase = _DONE
        self._timer = None
        self._reset_message()
        if phase == _OPEN:
            reason = "connection lost without a close frame"
            return [WebSocketClosed(CLOSE_ABNORMAL, reason, by_peer=True), *self._close_mcp(reason)]
        if phase == _HANDSHAKE:
            return self._handshake_eof()
        return []

    # ---- role hooks

    def _admit(self, payload: bytearray, events: list[Event]) -> bool:
        """Whether a complete message goes to the MCP connection (the server's auth)."""
        return True

    def _receive_handshake(self, data: bytes) -> list[Event]:
        """Role hook: bytes while the upgrade is in progress."""
        raise NotImplementedError

    def _handshake_eof(self) -> list[Event]:
        """Role hook: the socket ended before the upgrade completed."""
        raise NotImplementedError

    def _handshake_timed_out(self) -> list[Event]:
        """Role hook: the upgrade took longer than `handshake_timeout`."""
        raise NotImplementedError


# ========================================================================== server


class WebSocketServerConnection(_WebSocket):
    """The server side of one WebSocket (one accepted TCP connection).

    Answer through `mcp` (the `ServerConnection`), then write `data_to_send()`.
    `path` is the target accepted (query strings aside), with each of `aliases`
    (`serve_websocket` adds "/", so `ws://host:port` finds it too). `host_policy` defaults
    to the loopback allow-list, as for HTTP; pass your own for a public bind, or None
    to switch the check off explicitly. Browsers do not apply CORS to WebSockets, so
    the `Origin` check is what stops another site's page from connecting.
    `principal_of(head)` names who the handshake authenticated (from your own
    headers); a sealed 2026-07-28 `requestState` is bound to it.

    `auth` (a `ProtectedResource`, or a `ResourceGuard` for per-request scopes) makes
    the endpoint an OAuth resource server, as `HTTPServerEndpoint(auth=)` does over
    HTTP, and replaces `principal_of`. The upgrade request is judged like any HTTP
    request: the metadata document is served at its well-known path (a plain GET,
    no upgrade); no token is 401 with the `WWW-Authenticate` challenge, a bad one
    401 `invalid_token`, one short of the required scopes 403 `insufficient_scope`,
    a verifier that cannot decide 503. A token the guard has not seen is
    `WebSocketTokenVerificationNeeded`: the 101 waits for
    `receive_token_verification`. Once open, the connection runs as the token's
    principal (`token`, `mcp.principal`); a request needing a scope the token lacks
    (`@mcp.tool(scopes=)`) is answered with a JSON-RPC error carrying the 403's
    challenge, as there is no HTTP status to give; and a message arriving after the
    token expired closes the WebSocket with 1008 (a long-lived socket must not
    outlive its credentials: the client reconnects with a fresh token).
    """

    mcp: ServerConnection

    def __init__(
        self,
        config: ServerConfig,
        *,
        path: str = DEFAULT_PATH,
        host_policy: HostPolicy | None = DEFAULT_HOST_POLICY,
        limits: WebSocketLimits | None = None,
        principal_of: Callable[[RequestHead], str | None] | None = None,
        aliases: Collection[str] = (),
        auth: ProtectedResource | ResourceGuard | None = None,
    ) -> None:
        """A server connection waiting for the upgrade request. The head is measured as it
        arrives, before h11 parses it, because h11 applies its own bound only to heads
        that arrive in pieces.
        """
        limits = limits or WebSocketLimits()
        super().__init__(ServerConnection(config), limits)
        self.path = path
        self._paths = frozenset((path, *aliases))
        self.host_policy = host_policy
        if auth is not None and principal_of is not None:
            raise LocalProtocolError("auth= names the principal itself: drop principal_of=")
        self.principal_of = principal_of
        self.auth = ResourceGuard(auth) if isinstance(auth, ProtectedResource) else auth
        #: The verified token the connection runs as (with `auth=`), once accepted.
        self.token: AccessToken | None = None
        self._verifying: str | None = None  # the token whose verdict the 101 waits for
        self.request: RequestHead | None = None
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_header_bytes)
        # The upgrade request is the connection's first bytes: measured as they come,
        # before h11 parses them (h11 alone lets a head that arrives whole through).
        self._scanner: HeadScanner | None = HeadScanner(limits.max_header_bytes)

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Event]:
        """With `auth=` the wall time is required from the first byte, not only with sealing
        keys: the token's expiry is judged on the handshake itself, and a token that cannot
        be judged must not open a connection that may live for hours.
        """
        if wall_time is None and data and self.auth is not None and self._phase == _HANDSHAKE:
            raise LocalProtocolError(
                "this endpoint checks access tokens (auth=): pass wall_time=<the wall clock> "
                "with the handshake's bytes, or no token's expiry can be judged"
            )
        return super().receive_data(data, wall_time=wall_time)

    def receive_token_verification(
        self, result: VerificationResult, *, wall_time: float
    ) -> list[Event]:
        """The verifier's answer to `WebSocketTokenVerificationNeeded`: the upgrade is
        accepted (101, with the frames that came behind it) or refused. After the
        handshake ended otherwise (the client left, the handshake timed out) it does
        nothing."""
        token, self._verifying = self._verifying, None
        if self._phase == _DONE:
            return []
        if token is None:
            raise LocalProtocolError("no token verification is pending on this WebSocket")
        guard = self.auth
        assert guard is not None
        events, self._deferred = self._deferred, []
        self._wall = wall_time
        try:
            events += self._go_on(guard.judge(token, result, wall_time=wall_time))
        finally:
            self._wall = None
        return events

    def _receive_handshake(self, data: bytes) -> list[Event]:
        """Bytes of the upgrade request: checked, then answered with 101 or a refusal
        (with `auth=`, once the token is judged, which may wait for the verifier's
        answer through `receive_token_verification`). Frames that arrived with the request are read at once, so the result does not
        depend on how the client's writes were split.
        """
        if self._verifying is not None:
            # Nothing but the verdict moves the handshake on. A client must wait for
            # the 101 (RFC 6455 4.1); what it sends anyway waits, within the head limit.
            self._h11.receive_data(data)
            if len(self._h11.trailing_data[0]) > self.limits.max_header_bytes:
                self._verifying = None
                return self._reject(
                    _Refusal(400, "Bad Request: data sent before the upgrade was accepted")
                )
            return []
        scanner = self._scanner
        if scanner is not None:
            try:
                if scanner.feed(data):
                    self._scanner = None  # the head ended within the limit
            except RemoteProtocolError as exc:
                return self._reject(_Refusal(exc.http_status, exc.message))
        self._h11.receive_data(data)
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                return self._reject(_Refusal(exc.error_status_hint, f"Bad Request: {exc}"))
            if event is h11.NEED_DATA:
                return []
            if isinstance(event, h11.Request):
                head = RequestHead(
                    event.method.decode("latin-1"),
                    event.target.decode("latin-1"),
                    decode_headers(event.headers),
                )
                self.request = head
                guard = self.auth
                # A resource server's metadata (RFC 9728) is served on the WebSocket port
                # too, as a plain GET: a client refused at the upgrade must be able to
                # discover how to authorize from the same origin.
                if guard is not None and guard.is_metadata_path(head.target.split("?", 1)[0]):
                    policy = self.host_policy
                    if policy is None or policy.check_headers(head.headers) is None:
                        return self._answer(guard.metadata_response(head.method))
                refusal = self._check(head, event.http_version)
                if refusal is not None:
                    return self._reject(refusal)
            elif event is h11.PAUSED:
                return self._authenticate()
            elif isinstance(event, h11.Data) and event.data:
                return self._reject(_Refusal(400, "Bad Request: a WebSocket upgrade has no body"))
            # EndOfMessage (the upgrade request carries no body): PAUSED comes next.

    def _check(self, head: RequestHead, http_version: bytes) -> _Refusal | None:
        """The refusal an upgrade request earns, or None to accept it.

        `Host` and `Origin` come first, before the path: a DNS-rebinding page must
        learn nothing about the server, not even whether its path exists.
        """
        headers = head.headers
        policy = self.host_policy
        if policy is not None:
            status = policy.check_headers(headers)
            if status == 421:
                return _Refusal(421, "Invalid Host header")
            if status == 403:
                return _Refusal(403, "Forbidden: invalid Origin header", jsonrpc=True)
        if head.target.split("?", 1)[0] not in self._paths:
            return _Refusal(404, f"Not Found: the MCP endpoint is {self.path}")
        if head.method != "GET":
            return _Refusal(405, "Method Not Allowed", (("allow", "GET"),))
        # RFC 6455 4.1: the upgrade is an HTTP/1.1 GET (h11 speaks nothing newer), and
        # HTTP/1.0 has no Upgrade mechanism to answer with.
        if http_version != b"1.1":
            return _Refusal(400, "Bad Request: a WebSocket upgrade needs HTTP/1.1")
        upgrade_needed = (("upgrade", "websocket"), ("sec-websocket-version", _WEBSOCKET_VERSION))
        # 426 with the Upgrade header names what this endpoint speaks (RFC 9110 15.5.22),
        # so a plain HTTP client learns it is at a WebSocket endpoint.
        if "websocket" not in _tokens(headers, "upgrade"):
            return _Refusal(426, "Upgrade Required: this endpoint speaks WebSocket", upgrade_needed)
        if "upgrade" not in _tokens(headers, "connection"):
            return _Refusal(400, "Bad Request: missing Connection: Upgrade")
        if _values(headers, "sec-websocket-version") != [_WEBSOCKET_VERSION]:
            return _Refusal(426, "Upgrade Required: unsupported WebSocket version", upgrade_needed)
        if not _valid_key(_values(headers, "sec-websocket-key")):
            return _Refusal(400, "Bad Request: invalid Sec-WebSocket-Key")
        # Bytes after the head are frames, so a body would be read as frames by us and
        # as a body by a proxy in front: the request-smuggling shape, refused.
        if _values(headers, "transfer-encoding") or any(
            v != "0" for v in _values(headers, "content-length")
        ):
            return _Refusal(400, "Bad Request: a WebSocket upgrade has no body")
        return None

    def _authenticate(self) -> list[Event]:
        """The upgrade request passed every WebSocket check: judge its credentials."""
        guard = self.auth
        if guard is None:
            return self._accept()
        head = self.request
        assert head is not None and self._wall is not None
        outcome = guard.authenticate(head.headers, target=head.target, wall_time=self._wall)
        if isinstance(outcome, NeedsVerification):
            self._verifying = outcome.token
            return [WebSocketTokenVerificationNeeded(self, outcome.token)]
        return self._go_on(outcome)

    def _go_on(self, outcome: Granted | AuthResponse) -> list[Event]:
        """The principal is set on the MCP connection before the 101, so the first message is
        already judged as the token's principal (sealed state, session binding).
        """
        if isinstance(outcome, AuthResponse):
            return self._refuse(outcome)
        self.token = outcome.token
        self.mcp.principal = outcome.token.principal
        return self._accept()

    def _refuse(self, answer: AuthResponse) -> list[Event]:
        """An authentication refusal: the guard's own answer (its challenge), then close."""
        self._send_answer(answer)
        return [
            WebSocketRejected(answer.status, answer.reason),
            *self._close_mcp(f"WebSocket upgrade refused with HTTP {answer.status}"),
        ]

    def _answer(self, answer: AuthResponse) -> list[Event]:
        """A plain HTTP answer instead of an upgrade (the metadata document), then close."""
        self._send_answer(answer)
        return self._close_mcp("served the protected resource metadata")

    def _send_answer(self, answer: AuthResponse) -> None:
        """Queue the guard's HTTP answer as the last thing on this connection."""
        headers = [*answer.headers, ("content-length", str(len(answer.body)))]
        headers.append(("connection", "close"))
        self._out.append(_response_bytes(self._h11, answer.status, headers, answer.body))
        self._phase = _DONE
        self._timer = None

    def _admit(self, payload: bytearray, events: list[Event]) -> bool:
        """Whether a complete message may reach the MCP connection (with `auth=`): the
        token must still be valid, and carry the scopes the message's requests need."""
        guard, token = self.auth, self.token
        if guard is None or token is None:
            return True
        wall = self._wall
        problem = None if wall is None else guard.check(token, wall_time=wall)
        if problem is not None:
            self._fail(CLOSE_POLICY_VIOLATION, problem, events)
            return False
        if guard.scopes_for is None:
            return True
        try:
            message: Any = jr.parse(payload, self.mcp.limits)
        except RemoteProtocolError:
            return True  # the MCP connection answers what does not parse
        refusal = guard.check_scopes(token, message)
        if refusal is None:
            return True
        challenge = next((v for n, v in refusal.headers if n == "www-authenticate"), "")
        data = {"error": "insufficient_scope", "status": 403, "www_authenticate": challenge}
        items = message if type(message) is list else [message]
        answers = [
            error_body(item["id"], INVALID_REQUEST, refusal.reason, data)
            for item in items
            if type(item) is dict and "id" in item and "method" in item
        ]
        self._flush_messages()
        ws = self._ws
        assert ws is not None
        if type(message) is list and answers:
            answers = [b"[" + b",".join(answers) + b"]"]
        for body in answers:
            self._out.append(ws.send(wse.TextMessage(data=body.decode("utf-8"))))
        return False

    def _accept(self) -> list[Event]:
        """Answer 101 and switch to frames. No extension is accepted (RFC 6455 lets a
        server leave offers out of its answer); without compression no frame can
        inflate, deflate-bomb style, before its size is counted."""
        head = self.request
        assert head is not None
        offered = _tokens(head.headers, "sec-websocket-protocol", lower=False)
        subprotocol = MCP_SUBPROTOCOL if MCP_SUBPROTOCOL in offered else None
        key = _values(head.headers, "sec-websocket-key")[0]
        headers = [
            ("upgrade", "websocket"),
            ("connection", "Upgrade"),
            ("sec-websocket-accept", _accept_token(key)),
        ]
        if subprotocol is not None:
            headers.append(("sec-websocket-protocol", subprotocol))
        self._out.append(
            self._h11.send(
                h11.InformationalResponse(
                    status_code=101, headers=headers, reason=b"Switching Protocols"
                )
            )
            or b""
        )
        trailing = self._h11.trailing_data[0]
        if self.principal_of is not None:
            self.mcp.principal = self.principal_of(head)
        self._open(ConnectionType.SERVER, subprotocol)
        events: list[Event] = [WebSocketAccepted(head.target, subprotocol, tuple(head.headers))]
        if trailing:  # frames pipelined behind the request: same result however split
            self._receive_frames(trailing, events)
        return events

    def _reject(self, refusal: _Refusal) -> list[Event]:
        """Answer an HTTP error and end; the MCP connection never opened, so it closes
        without an error (no request of the peer's was lost)."""
        headers = list(refusal.headers)
        if refusal.jsonrpc:
            body = error_body(None, INVALID_REQUEST, refusal.message)
            headers.append(("content-type", JSON))
        else:
            body = refusal.message.encode("utf-8") if refusal.status != 405 else b""
            if body:
                headers.append(("content-type", "text/plain; charset=utf-8"))
        headers += [("content-length", str(len(body))), ("connection", "close")]
        self._out.append(_response_bytes(self._h11, refusal.status, headers, body))
        self._phase = _DONE
        self._timer = None
        return [
            WebSocketRejected(refusal.status, refusal.message),
            *self._close_mcp(f"WebSocket upgrade refused with HTTP {refusal.status}"),
        ]

    def _handshake_eof(self) -> list[Event]:
        """The client left before its upgrade finished: nothing to answer."""
        return self._close_mcp("client closed the connection during the WebSocket handshake")

    def _handshake_timed_out(self) -> list[Event]:
        """408, as for an HTTP head that never finished (RFC 9110 15.5.9)."""
        return self._reject(_Refusal(408, "Request Timeout"))


def _response_bytes(conn: h11.Connection, status: int, headers: Headers, body: bytes) -> bytes:
    """An HTTP response through h11, or written by hand when h11's state forbids one
    (a head that never finished, which is exactly when a 408 or 400 is due)."""
    try:
        data = conn.send(
            h11.Response(status_code=status, headers=headers, reason=reason_phrase(status))
        )
        if body:
            data = (data or b"") + (conn.send(h11.Data(data=body)) or b"")
        return (data or b"") + (conn.send(h11.EndOfMessage()) or b"")
    except h11.LocalProtocolError:
        lines = [b"HTTP/1.1 %d %s" % (status, reason_phrase(status))]
        lines += [f"{name}: {value}".encode("latin-1") for name, value in headers]
        return b"\r\n".join(lines) + b"\r\n\r\n" + body


# ========================================================================== client


class WebSocketClientConnection(_WebSocket):
    """The client side of one WebSocket to an MCP server.

    `host` is the `Host` header (`name[:port]`), `path` the target (query allowed).
    `new_key()` returns the 16 random bytes of `Sec-WebSocket-Key` (for example
    `secrets.token_bytes(16)`); the core reads no randomness source of its own.
    `origin`, when set, is sent as `Origin` (browsers do; other clients need not).
    `extra_headers` go on the upgrade request (`Authorization` ...). `connect_deadline`
    is passed to `mcp.connect()`: a time in the `tick()` clock after which a silent
    `server/discover` probe falls back to `initialize` ("auto" mode).

    The upgrade request is queued at once: write `data_to_send()` first. Send MCP
    requests through `mcp` after `Connected`.
    """

    mcp: ClientConnection

    def __init__(
        self,
        config: ClientConfig,
        *,
        host: str,
        new_key: Callable[[], bytes],
        path: str = DEFAULT_PATH,
        origin: str | None = None,
        subprotocols: Sequence[str] = (MCP_SUBPROTOCOL,),
        extra_headers: Iterable[tuple[str, str]] = (),
        connect_deadline: float | None = None,
        limits: WebSocketLimits | None = None,
    ) -> None:
        """A client connection with its upgrade request already queued. The key comes from
        `new_key` because the core reads no randomness of its own; a key of any other
        length than 16 bytes would break RFC 6455 4.1.
        """
        limits = limits or WebSocketLimits()
        super().__init__(ClientConnection(config), limits)
        self.host = host
        self.path = path
        self.subprotocols = tuple(subprotocols)
        for token in self.subprotocols:
            # Subprotocol names are sent as a comma-separated list (RFC 6455 4.1): a comma
            # or whitespace inside one would split it into names the application never
            # offered.
            if not token or any(c in token for c in ", \t\r\n"):
                raise ValueError(f"not a subprotocol token: {token!r}")
        self.connect_deadline = connect_deadline
        nonce = new_key()
        if not isinstance(nonce, bytes) or len(nonce) != 16:
            raise ValueError("new_key() must return 16 random bytes")
        self._key = base64.b64encode(nonce).decode("ascii")
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=limits.max_header_bytes)
        self._accepted: h11.InformationalResponse | None = None
        self._refused: int | None = None
        self._refusal_body = bytearray()
        headers = [
            ("host", host),
            ("upgrade", "websocket"),
            ("connection", "Upgrade"),
            ("sec-websocket-key", self._key),
            ("sec-websocket-version", _WEBSOCKET_VERSION),
        ]
        if self.subprotocols:
            headers.append(("sec-websocket-protocol", ", ".join(self.subprotocols)))
        # Browsers always send `Origin` on a WebSocket upgrade (that is what the server's
        # check is for); a native client need not, and is not judged by it.
        if origin is not None:
            headers.append(("origin", origin))
        headers += list(extra_headers)
        try:
            request = self._h11.send(h11.Request(method="GET", target=path, headers=headers))
            end = self._h11.send(h11.EndOfMessage())
        # A header value h11 refuses (a line break in an extra header) is the application's
        # mistake, raised before anything is sent.
        except h11.LocalProtocolError as exc:
            raise LocalProtocolError(f"cannot build the upgrade request: {exc}") from None
        self._out.append((request or b"") + (end or b""))

    def _receive_handshake(self, data: bytes) -> list[Event]:
        """Bytes of the server's answer to our upgrade request."""
        self._h11.receive_data(data)
        return self._handshake_events()

    def _handshake_events(self) -> list[Event]:
        """Read the answer: a 101 opens, anything else is a refusal whose body (its
        first `_MAX_REJECTION_BODY` bytes, enough for any error message) is kept to
        show why; a server that streams more is not waited for."""
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                return self._handshake_failed(f"malformed upgrade response: {exc}")
            if event is h11.NEED_DATA:
                return []
            if isinstance(event, h11.InformationalResponse):
                if event.status_code == 101:
                    problem = self._check_101(decode_headers(event.headers))
                    if problem is not None:
                        return self._handshake_failed(problem)
                    self._accepted = event
                # other 1xx responses are interim: the real answer follows
            elif event is h11.PAUSED:
                return self._opened()
            elif isinstance(event, h11.Response):
                self._refused = event.status_code
            elif isinstance(event, h11.Data):
                room = _MAX_REJECTION_BODY - len(self._refusal_body)
                self._refusal_body += event.data[: max(room, 0)]
                if room <= len(event.data):
                    return self._rejected()
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                return self._rejected()

    def _check_101(self, headers: Headers) -> str | None:
        """Why a 101 must not be believed (RFC 6455 4.1: the client must fail the
        connection), or None. An extension we never offered would change how every
        frame is read, and a subprotocol we never offered would mean the server is
        speaking something else."""
        if "websocket" not in _tokens(headers, "upgrade"):
            return "upgrade response lacks Upgrade: websocket"
        if "upgrade" not in _tokens(headers, "connection"):
            return "upgrade response lacks Connection: Upgrade"
        if _values(headers, "sec-websocket-accept") != [_accept_token(self._key)]:
            return "upgrade response has a wrong Sec-WebSocket-Accept"
        if _tokens(headers, "sec-websocket-extensions"):
            return "server turned on an extension that was not offered"
        chosen = _values(headers, "sec-websocket-protocol")
        if len(chosen) > 1 or (chosen and chosen[0] not in self.subprotocols):
            return f"server chose a subprotocol that was not offered: {', '.join(chosen)}"
        return None

    def _opened(self) -> list[Event]:
        """The upgrade succeeded: connect the MCP client, unless the application did
        already (its queued requests go out now), then read any frames that came
        in the same bytes as the 101."""
        accepted = self._accepted
        assert accepted is not None
        headers = decode_headers(accepted.headers)
        chosen = _values(headers, "sec-websocket-protocol")
        trailing = self._h11.trailing_data[0]
        self._open(ConnectionType.CLIENT, chosen[0] if chosen else None)
        events: list[Event] = [WebSocketAccepted(self.path, self.subprotocol, tuple(headers))]
        if self.mcp.state == State.IDLE:
            events += self.mcp.connect(deadline=self.connect_deadline)
        events += self._sync(events)
        if trailing:  # frames the server sent right behind its 101
            self._receive_frames(trailing, events)
        return events

    def _rejected(self) -> list[Event]:
        """The server refused the upgrade: requests queued meanwhile fail with that
        status (502 if it sent none: we cannot tell what the server meant)."""
        status = self._refused or 0
        body = bytes(self._refusal_body).decode("utf-8", errors="replace")
        self._phase = _DONE
        self._timer = None
        message = f"WebSocket upgrade refused with HTTP {status}"
        return [
            WebSocketRejected(status, body),
            *self._settle_mcp(message, RemoteProtocolError(message, http_status=status or 502)),
        ]

    def _handshake_failed(self, message: str) -> list[Event]:
        """The answer was not a valid upgrade: 502 as a gateway would say of a bad
        upstream, since the server, not the client, broke the exchange."""
        self._phase = _DONE
        self._timer = None
        return self._settle_mcp(message, RemoteProtocolError(message, http_status=502))

    def _handshake_eof(self) -> list[Event]:
        """EOF before the answer ended: a refusal whose body was cut is still one."""
        if self._refused is not None:
            return self._rejected()
        return self._handshake_failed("server closed the connection during the WebSocket handshake")

    def _handshake_timed_out(self) -> list[Event]:
        """The server never answered the upgrade within `handshake_timeout`."""
        return self._handshake_failed("WebSocket handshake timed out")
