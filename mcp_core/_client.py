"""`ClientConnection`: the client side of one MCP connection, either era.

It picks the protocol revision (`initialize`, a pinned revision, or the
`server/discover` probe with its fallbacks), stamps the 2026-07-28 `_meta`
envelope on every request, and runs the multi-round-trip loop: a server's
`InputRequiredResult` turns into the same `RequestReceived` events a legacy
server's `elicitation/create`, `sampling/createMessage` or `roots/list` produce,
and once the application answered them all the original call goes out again.
"""

from __future__ import annotations

from typing import Any, Final

import pydantic
from pydantic_core import PydanticSerializationError, to_json

from . import _jsonrpc as jr
from ._base import (
    LOCAL_FAILURE,
    Fatal,
    Reject,
    RequestId,
    State,
    _Connection,
    _new_outgoing,
    capability_problem,
    describe,
    has_capability,
    validator,
)
from ._config import ClientConfig, to_wire
from ._errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalProtocolError,
    RemoteProtocolError,
)
from ._events import (
    Connected,
    ErrorReceived,
    Event,
    MessageRejected,
    NotificationReceived,
    RequestContext,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    ResponseReceivedTwin,
    SubscriptionAcknowledged,
)
from ._requests import (
    EMPTY,
    NO_IDS,
    NO_ITEMS,
    NO_QUEUED,
    DeadlineHeap,
    Outbound,
    PendingInputs,
    RecentIds,
)
from ._server import _EnvelopeCache, capabilities_wire, shared_declaration
from ._state import RequestInput, RequestState, SessionInput, advance_request, follows
from ._tasks import (
    LEGACY_AUGMENTABLE,
    MODERN_TASK_METHODS,
    MODERN_TASK_REQUESTS,
    NO_TASKS,
    RELATED_TASK_META_KEY,
    LiveTasks,
    extension_declared,
    terminal_status,
    wants_task,
)
from ._versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHODS,
    SPECS,
    UNGATED,
    Era,
    MethodSpec,
    Role,
    era_of,
    lookup,
    preference_order,
)

# The requests a 2026-07-28 server may put in `inputRequests` (the three a legacy
# server sends as requests); the client answers each as it would the request.
# The same three that `_server.INPUT_RESULT_TYPES` keys, from the other side: the client
# answers nothing else inside an `InputRequiredResult` (SEP-2322).
INPUT_REQUEST_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})


# The servers' declarations seen in legacy handshakes, shared by every client
# connection of the process (`shared_declaration`); built on first use, since
# `validator` pulls in the wire models.
_SERVER_DECLARATIONS: _EnvelopeCache | None = None


def _server_declaration(capabilities: Any, info: Any) -> tuple[Any, Any]:
    global _SERVER_DECLARATIONS
    if _SERVER_DECLARATIONS is None:
        _SERVER_DECLARATIONS = _EnvelopeCache(capabilities="ServerCapabilities")
    return _SERVER_DECLARATIONS(capabilities, info)


# The result lane (`ClientConnection._receive_response`): the validator of each method's
# result, by (method, revision), looked up once rather than per response (`SPECS`, then the
# model's validator, then the ElicitResult test). Only methods `SPECS` knows are kept,
# so the table is bounded by the protocol however many custom methods an application
# sends; a method without a result model keeps `_as_sent`.
_RESULT_VALIDATORS: dict[tuple[str, str], Any] = {}
# A request of ours in flight is SENT; a result moves it to ANSWERED (`_state.py`'s
# table says so; read from it, so that the table stays the one statement of the move).
_SENT: Final = RequestState.SENT
# (Read once: on CPython 3.11 a member read through its enum class costs about 0.9k
# instructions, through `EnumType.__getattr__`, against 0.1k for a module global.)
_MODERN: Final = Era.MODERN
_blank: Final = object.__new__
# What the lane's validation gives when it leaves the result to the general path.
_REFUSED: Final = object()
_ANSWERED: Final = advance_request("client", "outbound", _SENT, RequestInput.RESPONSE)


def _as_sent(result: Any) -> Any:
    """The "validator" of a method without a result model: the result as it came."""
    return result


def _result_validator(method: str, revision: str) -> Any:
    """The lane's validator for `method`'s result in `revision`, or None where the lane
    must not take it (a method `SPECS` does not know, or an ElicitResult, whose content
    `_accept_result` drops on a decline)."""
    spec = SPECS.get(("client", method, revision))
    if spec is None or spec.result == "ElicitResult":
        return None
    found = _as_sent if spec.result is None else validator(spec.result)
    _RESULT_VALIDATORS[(method, revision)] = found
    return found


# The 2026-07-28 envelopes of the connections made so far, by their encoded tail
# (equal bytes, equal envelope), each with that tail: `_become_modern` hands every
# connection the shared pair (read-only). Cleared whole when full: an application
# rarely has more than a few declarations, and only one making a new one per
# connection would fill it.
_STAMPS: dict[bytes, tuple[dict[str, Any], bytes]] = {}
_STAMPS_BOUND: Final = 64

# (read per request sent; an enum member read through its class costs five plain reads;
# `_MODERN` is above)
_READY: Final = State.READY

# The requests `send_request`'s lane sends, by method and revision: the capability the
# server must have advertised for it (None: ungated there, `needs_capability`) and
# whether its entry keeps the params for a retry (`MethodSpec.input_required`). The
# 2026-07-28 task methods are left out: `_prepare_request` checks them
# (`_check_task_request`) against the tasks extension.
_REQUEST_LANES: Final[dict[tuple[str, str], tuple[str | None, bool]]] = {
    (method, revision): (
        None if (method, revision) in UNGATED else spec.server_capability,
        spec.input_required,
    )
    for (sender, method, revision), spec in SPECS.items()
    if sender == "client"
    and spec.is_request
    and not (era_of(revision) is Era.MODERN and method in MODERN_TASK_REQUESTS)
}


class ClientConnection(_Connection):
    """The client side of one MCP connection.

    Call `connect()` first; requests may be sent once a `Connected` event came
    out (at once for a pinned 2026-07-28 revision).

    The client keeps more state than the server in 2026-07-28, by design of SEP-2322: the
    server forgets a call once it answered `input_required`, so the client is the one that
    holds the call across rounds (its params, the answers so far, its deadline) and
    re-issues it. That is why a call here can be in flight with no request on the wire
    (`_pending_inputs`).
    """

    # The role's own attributes (see `_Connection.__slots__` for why slots).
    __slots__ = (
        "_dead_slots",
        "_envelope",
        "_granted",
        "_input_slots",
        "_live_tasks",
        "_pending_events",
        "_probe_deadline",
        "_probe_tried",
        "_retry_wire",
        "_server_caps_wire",
        "_slot_numbers",
        "config",
        "instructions",
        "server_capabilities",
        "server_info",
    )

    _role: Role = "client"
    _peer: Role = "server"

    def __init__(self, config: ClientConfig) -> None:
        """A connection in IDLE: nothing is sent before `connect()`.

        Two ids per 2026-07-28 call: the *logical* id the application sent it under,
        kept for every event about the call, and the *wire* id of its current attempt.
        The spec requires each retry to use a new JSON-RPC id (basic/patterns/mrtr), so
        without the split an application would see its call change identity mid-way.
        """
        super().__init__(config.limits)
        self.config = config
        self.server_capabilities: Any = None
        self.server_info: Any = None
        self.instructions: str | None = None
        # The server's capabilities in wire form, read by every capability check on the
        # sending path; empty until a handshake or discovery told us, which
        # `_prepare_request` reads as "unknown" rather than "nothing offered".
        self._server_caps_wire: dict[str, Any] = EMPTY
        # The send lane's capabilities (`_REQUEST_LANES`) found granted in
        # `_server_caps_wire`, so far: the lane asks `has_capability` once per capability
        # rather than per request. Emptied wherever `_server_caps_wire` is set. A tuple:
        # it holds one or two of the lane's own strings, found by identity.
        self._granted: tuple[str, ...] = ()
        # Events caused by the application's own calls (not by input): they wait here for
        # the next call that returns events, in order, so none is lost and none jumps the
        # queue.
        # (The shared read-only `NO_ITEMS` while none waits: each batch is handed on.)
        self._pending_events: list[Event] = NO_ITEMS
        # Each modern revision is probed at most once: a server answering -32022 to every
        # revision it lists would otherwise keep the probe going for ever.
        # A dict used as a set: an empty dict is 64 bytes, an empty set 216, and most
        # connections never probe.
        self._probe_tried: dict[str, None] = EMPTY
        self._probe_deadline: float | None = None
        # The 2026-07-28 `_meta` every request carries, built once (`_envelope_for`).
        self._envelope: dict[str, Any] = EMPTY
        # 2026-07-28 multi-round-trip bookkeeping.
        self._pending_inputs: dict[RequestId, PendingInputs] = EMPTY
        # The ids the application answers questions under, mapped back to (call, key), and
        # the wire id of each call's current retry: the application only ever sees the
        # logical id of its call.
        self._input_slots: dict[str, tuple[RequestId, str]] = EMPTY
        self._retry_wire: dict[RequestId, RequestId] = EMPTY
        # Bounded, like every memory of ended ids: an application answering a question of a
        # call that ended long ago gets LocalProtocolError instead of a quiet no-op, which
        # is the lesser harm next to unbounded memory.
        # (The shared `NO_IDS` until a call with questions ends: most never have any.)
        self._dead_slots: RecentIds = NO_IDS
        # A counter across the connection's life, so a slot id is never reused even when a
        # call asks the same key twice in two rounds.
        # (A plain int: an itertools.count was 56 bytes of every client.)
        self._slot_numbers = 0
        # 2025-11-25 tasks we created whose progress token outlives the request.
        # (The shared `NO_TASKS` until the first task.)
        self._live_tasks = NO_TASKS

    # ------------------------------------------------------------ handshake

    def connect(self, *, deadline: float | None = None) -> list[Event]:
        """Start the handshake (or the discovery probe) the configured mode asks for.

        `deadline` bounds the `server/discover` probe of "auto" mode: a server
        that stays silent until then is taken to be legacy.
        """
        # Once per connection: a second handshake on the same stream would be a second
        # `initialize`, which a legacy server must refuse (RELIABILITY.md 1.7).
        if self.state is not State.IDLE:
            raise LocalProtocolError("connect() was already called")
        mode = self.config.mode
        if mode != "legacy" and mode != "auto" and era_of(mode) is Era.MODERN:
            # Pinned to 2026-07-28: nothing to negotiate, ready at once. The server's
            # capabilities stay unknown (None) until the application discovers them,
            # so sending is not gated on them meanwhile.
            self._move(SessionInput.CONNECT_PINNED)
            self._become_modern(mode)
            return [self._connected_modern()]
        # The deadline applies to the probe only: `initialize` has no timeout of its own
        # here, since 2025-03-26 ("Lifecycle") forbids cancelling it and a legacy server may
        # take its time to start; the application's own connect timeout bounds it.
        self._move(SessionInput.CONNECT)
        # The config's revisions split by era: the probe offers the newest modern one, the
        # handshake the newest legacy one, and a client with only one era skips the other.
        versions = self.config.supported_versions
        modern = [v for v in versions if era_of(v) is Era.MODERN]
        legacy = [v for v in versions if era_of(v) is Era.LEGACY]
        self._probe_deadline = deadline
        # `supported_versions` is newest first, so [0] is the revision to offer: the
        # server answers with it if it speaks it, else with another it does
        # (lifecycle, version negotiation), which `_on_initialize_answer` judges.
        if mode == "legacy":
            self._send_initialize(legacy[0])
        elif mode == "auto":
            # Probe first when we speak 2026-07-28: a legacy server refuses or ignores
            # `server/discover`, and initialize follows, so the probe costs a legacy
            # server one round trip, while initializing first would settle a server
            # that speaks both eras on a legacy revision.
            if modern:
                self._send_probe(modern[0])
            else:
                self._send_initialize(legacy[0])
        else:
            self._send_initialize(mode)
        return []

    def _send_initialize(self, version: str) -> None:
        """The legacy handshake: our capabilities once, for the whole session.

        The capabilities sent here are the only ones the server will ever know for the
        session (2025-03-26, "Capability Negotiation"): they cannot be changed later, so
        they come from the config, not from any call.
        """
        params = {
            "protocolVersion": version,
            "capabilities": self.config.capabilities_wire,
            "clientInfo": self.config.client_info_wire,
        }
        self._send_internal("initialize", params, self._on_initialize_answer)

    def _on_initialize_answer(
        self, rid: RequestId, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> None:
        """The initialize answer decides the session: its revision must be one we
        speak (in "auto" a legacy one, the probe having ruled 2026-07-28 out). A
        failure is fatal for the connection: no request can follow a handshake that
        agreed on no revision.
        """
        if error is not None:
            data = error.get("data")
            if (
                self.config.mode == "auto"
                and error.get("code") == UNSUPPORTED_PROTOCOL_VERSION
                and isinstance(data, dict)
                and isinstance(data.get("supported"), list)
            ):
                # A modern server that answered our late probe after we gave up on it
                # and fell back: it names what it speaks, so use that, not initialize.
                # (the server's list is the peer's: only strings are read from it)
                theirs = {v for v in data["supported"] if isinstance(v, str)}
                mutual = preference_order(tuple(set(self.config.supported_versions) & theirs))
                modern = [v for v in mutual if era_of(v) is Era.MODERN]
                if modern:
                    self._take_mutual(tuple(modern), None)
                    return
            raise Fatal(
                RemoteProtocolError(
                    f"initialize failed: {error.get('message')}",
                    code=error.get("code", INTERNAL_ERROR),
                )
            )
        try:
            # A malformed handshake answer ends the connection (Fatal): without a valid
            # result there is no revision and no capabilities to judge anything by.
            init = validator("InitializeResult")(result)
        except pydantic.ValidationError as exc:
            raise Fatal(
                RemoteProtocolError(f"invalid initialize result: {describe(exc)}")
            ) from None
        version = init.protocol_version
        mode = self.config.mode
        # 2025-03-26 ("Version Negotiation"): if the client does not support the version in
        # the server's answer, it SHOULD disconnect. A pinned client accepts only its pin,
        # because the application asked for exactly that behaviour.
        if mode in ("auto", "legacy"):
            acceptable = version in self.config.supported_versions and era_of(version) is Era.LEGACY
        else:
            acceptable = version == mode
        if not acceptable:
            raise Fatal(
                RemoteProtocolError(
                    f"server chose protocol version {version!r}, which this client does not speak"
                )
            )
        # Ready before `notifications/initialized` goes out: the notification only tells
        # the server we accepted, and requests queued behind it keep their order.
        self._negotiated()
        self.protocol_version = version
        self.era = Era.LEGACY
        # What the server declared once for the session: every later request is gated on it
        # (`_prepare_request`), as 2025-03-26 ("Capability Negotiation") asks.
        capabilities, info = shared_declaration(
            _server_declaration, result, "serverInfo", (init.capabilities, init.server_info)
        )
        self.server_capabilities = capabilities
        self.server_info = info
        self.instructions = init.instructions
        # The initialized notification is automatic output (the engine's own), so a peer
        # that does not read cannot make it raise in the application's code.
        self._server_caps_wire = capabilities_wire(_SERVER_DECLARATIONS, capabilities)
        self._granted = ()
        self._queue(
            jr.encode_notification("notifications/initialized", None),
            "notification",
            "notifications/initialized",
            None,
            None,
            automatic=True,
        )
        if self._pending_events is NO_ITEMS:
            self._pending_events = []
        self._pending_events.append(
            Connected(version, Era.LEGACY, capabilities, info, init.instructions)
        )

    def _envelope_for(self, version: str) -> dict[str, Any]:
        """The 2026-07-28 `_meta` envelope: what a legacy client says once in
        initialize, a 2026-07-28 client says on every request, because the server
        keeps no session to remember it by. Read only, like the wire forms it holds:
        `_become_modern` shares one among the connections whose envelopes encode alike.

        SEP-2575 requires the protocol version and client capabilities on every request, and
        the client info SHOULD be there; `logLevel` is optional and, when absent, the server
        sends no log messages for the request (SPEC-NOTES 1.10), so it is added only when
        the application asked for logs.
        """
        config = self.config
        envelope: dict[str, Any] = {
            META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: config.capabilities_wire,
            META_CLIENT_INFO: config.client_info_wire,
        }
        if config.log_level is not None:
            envelope[META_LOG_LEVEL] = config.log_level
        return envelope

    def _send_probe(self, version: str) -> None:
        """`server/discover` under `version`'s envelope: a 2026-07-28 server
        answers it; a legacy one refuses it, or stays silent until the deadline.

        SPEC-NOTES 1.15: on stdio, `server/discover` first is how a client tells the eras
        apart. The probe is internal (`_send_internal`), so its answer is never an event the
        application has to understand.
        """
        if self._probe_tried is EMPTY:
            self._probe_tried = {}
        self._probe_tried[version] = None
        self._send_internal(
            "server/discover",
            {"_meta": self._envelope_for(version)},
            lambda rid, result, error: self._on_probe_answer(result, error),
            self._probe_deadline,
        )

    def _on_probe_answer(self, result: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
        """Decide the era from the probe. A discover result names the server's
        revisions. An UNSUPPORTED_PROTOCOL_VERSION error with a list is a 2026-07-28
        server that wants another revision, tried once each: never a blind fall back,
        which would downgrade a modern pair. Any other failure means a legacy
        server: initialize goes out (or, without a legacy revision, the end).
        """
        ours = self.config.supported_versions
        if error is None:
            try:
                # A result that does not validate is not taken for a legacy server: it came
                # as an answer to `server/discover`, so the server is modern and broken,
                # which is fatal.
                discovered = validator("DiscoverResult")(result)
            except pydantic.ValidationError as exc:
                raise Fatal(
                    RemoteProtocolError(f"invalid server/discover result: {describe(exc)}")
                ) from None
            # The newest revision both sides list: discovery's `supportedVersions` covers
            # both eras (SEP-2575), so a dual-era server is used in 2026-07-28.
            mutual = preference_order(tuple(set(ours) & set(discovered.supported_versions)))
            self._take_mutual(mutual, discovered)
            return
        data = error.get("data")
        # Only the server's own -32022 counts: a failure made here (the probe's deadline
        # passing, an answer we refused) says nothing of the revisions the server speaks.
        if (
            error.get("local") is not LOCAL_FAILURE
            and error.get("code") == UNSUPPORTED_PROTOCOL_VERSION
            and isinstance(data, dict)
            and isinstance(data.get("supported"), list)
        ):
            # A modern server that wants another revision: never fall back blindly.
            theirs = {v for v in data["supported"] if isinstance(v, str)}
            mutual = preference_order(tuple(set(ours) & theirs))
            retry = [v for v in mutual if era_of(v) is Era.MODERN and v not in self._probe_tried]
            if retry:
                self._send_probe(retry[0])
                return
            self._take_mutual(mutual, None)
            return
        # Any other error or silence means a legacy server (SPEC-NOTES 1.15: never key the
        # fallback to one error code; legacy servers answer -32601, -32602, or nothing).
        legacy = [v for v in ours if era_of(v) is Era.LEGACY]
        if not legacy:
            raise Fatal(RemoteProtocolError(f"server/discover failed: {error.get('message')}"))
        self._send_initialize(legacy[0])

    def _take_mutual(self, mutual: tuple[str, ...], discovered: Any) -> None:
        """Settle on the best revision both sides speak: a legacy one still needs
        its initialize; a 2026-07-28 one is READY now.

        The best mutual revision is the newest both speak (`preference_order`): the era
        follows from it, so a server that speaks both eras is used in 2026-07-28.
        """
        if not mutual:
            raise Fatal(RemoteProtocolError("no protocol revision both sides speak"))
        best = mutual[0]
        if era_of(best) is not Era.MODERN:
            self._send_initialize(best)
            return
        self._negotiated()
        self._become_modern(best)
        if discovered is not None:
            self.server_capabilities = discovered.capabilities
            self._server_caps_wire = to_wire(discovered.capabilities) or {}
            self._granted = ()
            self.instructions = discovered.instructions
            info = (discovered.meta or {}).get(META_SERVER_INFO)
            if info is not None:
                # Display-only, so a malformed serverInfo is dropped rather than allowed
                # to fail a connection whose revision and capabilities are fine.
                try:
                    self.server_info = validator("Implementation")(info)
                except pydantic.ValidationError:
                    self.server_info = None
        if self._pending_events is NO_ITEMS:
            self._pending_events = []
        self._pending_events.append(self._connected_modern())

    def _negotiated(self) -> None:
        """The handshake or the probe settled on a revision: READY, if the table
        agrees. Peer-driven, so a refusal ends the connection as a broken
        handshake rather than raising a local error out of `receive_data`.

        The table is asked rather than assigned, so that a server answering a handshake
        twice (a late probe answer after the fallback) ends the connection cleanly.
        """
        target = follows("client", self.state, SessionInput.NEGOTIATED)
        if target is None:
            raise Fatal(
                RemoteProtocolError(f"the server answered the handshake again (state {self.state})")
            )
        self.state = target

    def _become_modern(self, version: str) -> None:
        """Record a 2026-07-28 revision and the envelope every request will carry.

        The envelope is built once: its contents come from the config, which cannot change,
        and every request then shares one dictionary instead of building its own.
        """
        self.protocol_version = version
        self.era = Era.MODERN
        envelope = self._envelope_for(version)
        tail = jr.trailing_members({"_meta": envelope})
        if tail is None:  # only the fallback encoder can write it: no splicing
            self._envelope = envelope
            return
        # With the encoded tail `send_request` splices in (`_stamp`), shared by every
        # connection whose envelope encodes alike, whatever config it came from (an
        # embedder may make a config per connection): the clients of one application then
        # hold one envelope between them, not one each (about 180 bytes of every idle
        # 2026-07-28 client).
        stamp = _STAMPS.get(tail)
        if stamp is None:
            if len(_STAMPS) >= _STAMPS_BOUND:
                _STAMPS.clear()  # (a new declaration per connection only: see the bound)
            stamp = _STAMPS[tail] = (envelope, tail)
        self._envelope = stamp[0]
        self._stamp = stamp

    def _connected_modern(self) -> Connected:
        """The `Connected` of a 2026-07-28 connection (the capabilities are those
        discovery found, or None for a pinned client that skipped it).
        """
        assert self.protocol_version is not None
        return Connected(
            self.protocol_version,
            Era.MODERN,
            self.server_capabilities,
            self.server_info,
            self.instructions,
        )

    def tick(self, now: float) -> list[Event]:
        """The wire deadlines, and those of calls waiting on the application's answers.

        A call's deadline is the application's budget for the whole call, so it keeps
        running while the questions of a round sit with the application: no server
        round trip is pending then, and only this tick can end the call.
        """
        # The wire deadlines first: a call whose retry is on the wire is in the base tables,
        # and one waiting on the application is only in `_pending_inputs`; the two are
        # disjoint (`check_invariants`), so no call times out twice.
        events = super().tick(now)
        # The deadline keeps running while the application answers input requests.
        for logical, pending in list(self._pending_inputs.items()):
            if pending.deadline is not None and pending.deadline <= now:
                self._drop_pending_inputs(logical, RequestInput.TIMEOUT)
                events.append(
                    RequestFailed(logical, pending.method, REQUEST_TIMEOUT, "Request timed out")
                )
        return self._flush(events)

    def next_deadline(self) -> float | None:
        """The earliest deadline, or minus infinity while an event is waiting to come out.

        Events caused by the application's own calls (a refused input request
        fails its call) leave through the next `tick()`; reporting them as due
        makes any driver tick at once.
        """
        # A due event is a deadline already passed: minus infinity makes any driver tick at
        # once, and the epoch is read as for any deadline so `deadline_moved` stays right.
        if self._pending_events:
            self._armed_epoch = self.deadline_epoch
            return float("-inf")
        if not self._pending_inputs:  # nearly always: only the wire's deadlines
            # (the base's `next_deadline`, inline: the link asks after every message)
            self._armed_epoch = self.deadline_epoch
            heap = self._deadlines
            return heap.next(self._outbound) if heap is not None and heap.heap else None
        deadlines = [p.deadline for p in self._pending_inputs.values() if p.deadline is not None]
        wire = super().next_deadline()
        if wire is not None:
            deadlines.append(wire)
        return min(deadlines) if deadlines else None

    def _flush(self, events: list[Event]) -> list[Event]:
        """Put events queued by earlier local calls before `events` (causal order).

        Events caused by the application's own calls have no input to ride on; they wait
        here and come out first from the next call that returns events, so the order the
        application sees is the order in which things happened.
        """
        if self._pending_events:
            events = self._pending_events + events
            self._pending_events = NO_ITEMS
        return events

    # ------------------------------------------------------------- receiving

    def _accept_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """A server's request (legacy only: a 2026-07-28 server asks in its
        results). What the client did not declare is refused, with the errors the
        SDKs use, before the params are validated.
        """
        if self.era is Era.MODERN:
            # 2026-07-28 servers send no requests and clients send no responses:
            # report it and answer nothing.
            events.append(
                MessageRejected(rid, METHOD_NOT_FOUND, "2026-07-28 servers do not send requests")
            )
            return
        version = self.protocol_version
        # A ping is answered in any state, even before initialization completes: the
        # lifecycle allows pings then, and a peer uses them to check we are alive.
        if method == "ping":
            self._reply_result(rid, {}, method)
            return
        # A server request before the handshake answered: 2025-03-26 ("Lifecycle") lets the
        # server send only pings and logging before it receives `initialized`.
        if version is None:
            raise Reject(INVALID_REQUEST, "Received request before initialization was complete")
        spec = lookup("server", method, version)
        if spec is None or not spec.is_request:
            raise Reject(METHOD_NOT_FOUND, f"Method not found: {method}")
        # Refused before the params are validated, as the SDKs do: a request for a
        # capability the client never declared is "method not found" whatever its params.
        self._check_declared(method, params)
        model = self._validate_params(spec, params)
        meta = params.get("_meta") if params else None
        token = self._track_inbound(rid, method, meta, None)
        # No client capabilities or info in the context: those describe us, and the handler
        # of a server's request needs only the revision and the request's own `_meta`.
        context = RequestContext(version, None, None, None, token, meta)
        events.append(RequestReceived(rid, method, model, context))

    def _check_declared(self, method: str, params: dict[str, Any] | None) -> None:
        """Refuse what the client did not declare, with the errors users expect.

        The errors are the SDKs' (-32601 for an undeclared capability, -32602 for an
        undeclared elicitation mode): servers written against them already handle those.
        """
        problem = capability_problem(self.config.capabilities_wire, method, params)
        if problem is not None:
            raise Reject(*problem)

    def _accept_notification(
        self, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """A server notification. Before a revision is agreed there is no table to
        read it by, so it is dropped; a 2026-07-28 one names its listen stream
        (subscriptionId), which the event carries.
        """
        version = self.protocol_version
        if version is None:
            return
        # A notification the revision does not define is dropped, not answered:
        # JSON-RPC forbids replying to a notification, even with an error.
        spec = lookup("server", method, version)
        if spec is None or spec.is_request:
            return
        try:
            model = self._validate_params(spec, params)
        except Reject as rej:
            events.append(MessageRejected(None, rej.code, rej.message))
            return
        # 2026-07-28 (SPEC-NOTES 1.8): every notification on a listen stream names its
        # subscription, so the application can tell several listens apart; on stdio they all
        # share one stream.
        subscription = None
        if self.era is Era.MODERN:
            meta = params.get("_meta") if params else None
            candidate = meta.get(META_SUBSCRIPTION_ID) if type(meta) is dict else None
            if jr.is_request_id(candidate):
                subscription = candidate
            # The acknowledgement is its own event, carrying the honoured filter: the
            # application learns what it will and will not receive before any notification
            # arrives.
            if method == "notifications/subscriptions/acknowledged":
                if subscription is not None:
                    events.append(SubscriptionAcknowledged(subscription, model.notifications))
                return
        # 2025-11-25: a terminal status in a notification ends the task's progress token.
        elif method == "notifications/tasks/status":
            self._task_over(terminal_status(method, params))
        events.append(NotificationReceived(method, model, subscription))

    def _receive_cancel(self, params: dict[str, Any] | None, events: list[Event]) -> None:
        """A server's cancel: of a request it sent us (legacy), or, in 2026-07-28,
        the end of one of our listen streams, which fails that call.

        2026-07-28 (SPEC-NOTES 1.14): the server sends `notifications/cancelled` only to end
        a listen stream; any other cancel from a modern server names nothing we could act
        on, and is ignored as an unknown cancel would be.
        """
        if self.era is not Era.MODERN:
            super()._receive_cancel(params, events)
            return
        # 2026-07-28: a server cancels only to tear down one of our listen streams.
        rid = (params or {}).get("requestId")
        if not jr.is_request_id(rid):
            return
        entry = self._outbound.get(rid)
        if entry is None or entry.method != "subscriptions/listen":
            return
        del self._outbound[rid]
        self._ended(rid, entry, RequestInput.PEER_CANCEL)
        events.append(
            RequestFailed(
                entry.logical, entry.method, INTERNAL_ERROR, "subscription ended by the server"
            )
        )

    def _receive_response(self, obj: dict[str, Any], events: list[Event]) -> None:
        """The result lane: a well-formed result to an application request of ours.

        It mirrors, for that one case, `_Connection._receive_response`, `_ended`,
        `_Connection._accept_result`, this class's `_accept_result` and
        `_observe_result` (a change to one of them needs the same here): the same checks
        in the same order, the same state after, the same one `ResponseReceived`. It only
        tests until the result is validated, and hands anything else to the general path
        before it changes anything: an error, an id we do not wait on, an internal
        request's answer, a 2026-07-28 `resultType` other than complete, legacy task
        bookkeeping, a result its model refuses (judged again there, to report it).
        """
        if self._lanes:
            result: Any = obj.get("result")
            rid: Any = obj.get("id")
            entry = (
                self._outbound.get(rid)
                # (`_response_problem`'s well-formed case, and `is_request_id`.)
                if type(result) is dict
                and (type(rid) is int or type(rid) is str)
                and "error" not in obj
                and obj.get("jsonrpc") == "2.0"
                else None
            )
            if (
                entry is not None
                and entry.handler is None  # (an internal request answers to its handler)
                and entry.state is _SENT
                and (
                    result.get("resultType", "complete") == "complete"
                    if self.era is _MODERN
                    # (`_observe_result`'s and the legacy task's cases.)
                    else (
                        (entry.params is None or "task" not in entry.params)
                        and entry.method != "tasks/result"
                        and "taskId" not in result
                    )
                )
            ):
                method = entry.method
                key = (method, self.protocol_version or "")
                validate = _RESULT_VALIDATORS.get(key) or _result_validator(*key)
                try:
                    # (None: a method the lane leaves to the general path.)
                    value = validate(result) if validate is not None else _REFUSED
                except pydantic.ValidationError:
                    value = _REFUSED  # the general path fails the request, and says why
                if value is not _REFUSED:
                    # (`_ended`, inline)
                    outbound = self._outbound
                    del outbound[rid]
                    if not outbound:
                        self._outbound = EMPTY
                    token = entry.progress_token
                    if token is not None:
                        self._progress_tokens.pop(token, None)
                    ended = self._ended_outbound
                    if ended is NO_IDS:
                        ended = self._ended_outbound = RecentIds(self.limits.max_remembered_ids)
                    ended.add(rid)
                    logical = entry.logical
                    if logical != rid:
                        self._retry_ended(logical)
                    entry.state = _ANSWERED
                    # (`new_response_received`, inline: see `ResponseReceivedTwin`)
                    event = _blank(ResponseReceivedTwin)
                    event.request_id = logical
                    event.method = method
                    event.result = value
                    event.__class__ = ResponseReceived  # type: ignore[assignment]
                    events.append(event)
                    return
        super()._receive_response(obj, events)

    def _accept_result(
        self, rid: RequestId, entry: Outbound, result: dict[str, Any], events: list[Event]
    ) -> None:
        """A 2026-07-28 result may be an InputRequiredResult (only for the methods
        that can ask): the call then waits on the application's answers instead of
        ending. Any other resultType than complete is the server's error.

        (The result lane, `_receive_response` above, takes the complete case itself.)
        """
        if self.era is Era.MODERN:
            # A missing resultType is "complete": the schema says so, for results from
            # servers of earlier revisions (CacheableResult.resultType).
            result_type = result.get("resultType", "complete")
            if result_type == "input_required" and METHODS[("client", entry.method)].input_required:
                self._start_input_round(entry, result, events)
                return
            if result_type == "task":
                self._accept_task(rid, entry, result, events)
                return
            if result_type != "complete":
                # SPEC-NOTES 1.3: a client MUST treat an unknown `resultType` as invalid,
                # and an `input_required` answer to a method that cannot ask is a server
                # bug; either fails the one call rather than the connection.
                problem = (
                    f"{entry.method} may not answer with input_required"
                    if result_type == "input_required"
                    else f"unknown resultType {result_type!r}"
                )
                self._step(entry, "outbound", RequestInput.LOST)
                events.append(
                    RequestFailed(rid, entry.method, INTERNAL_ERROR, f"invalid result: {problem}")
                )
                return
        super()._accept_result(rid, entry, result, events)

    # ----------------------------------------------------------------- tasks

    def _accept_task(
        self, rid: RequestId, entry: Outbound, result: dict[str, Any], events: list[Event]
    ) -> None:
        """A 2026-07-28 `resultType: "task"`: valid only for a method the extension
        covers, on a request that declared the extension (every request of ours
        carries the same capabilities).

        A task answer the client cannot use fails the call rather than being handed on: the
        application asked for a result, and a task it did not opt into (SEP-2663: only with
        the extension declared on the request) would have no one polling it.
        """
        if entry.method not in MODERN_TASK_METHODS:
            problem = f"{entry.method} cannot answer with resultType 'task'"
        elif not extension_declared(self.config.capabilities_wire):
            problem = "resultType 'task', but the request did not declare the tasks extension"
        else:
            try:
                value = validator("ExtCreateTaskResult")(result)
            except pydantic.ValidationError as exc:
                problem = describe(exc)
            else:
                events.append(ResponseReceived(rid, entry.method, value))
                return
        events.append(
            RequestFailed(rid, entry.method, INTERNAL_ERROR, f"invalid result: {problem}")
        )

    def _observe_result(self, rid: RequestId, entry: Outbound, result: dict[str, Any]) -> None:
        """Legacy tasks bookkeeping on a result: a `CreateTaskResult` keeps the request's
        progress token live (progress keeps coming while the task runs, though the
        request is answered), and a task's final status frees it again.

        (The result lane, `_receive_response`, leaves every case that does something here
        to the general path: a change here needs its conditions checked.)
        """
        if self.era is Era.MODERN:
            return
        params = entry.params
        if params is not None and "task" in params and wants_task(params):
            # The progress token of a task-augmented request stays valid until the
            # task ends: keep routing it to the request's id.
            task = result.get("task")
            token = entry.progress_token
            if token is not None and self._live_tasks is NO_TASKS:
                self._live_tasks = LiveTasks(self.limits.max_tasks)
            if (
                token is not None
                and type(task) is dict
                and type(task.get("taskId")) is str
                and self._live_tasks.start(task["taskId"], token, entry.logical)
            ):
                if self._progress_tokens is EMPTY:
                    self._progress_tokens = {}
                self._progress_tokens[token] = entry.logical
            return
        if entry.method == "tasks/result":
            # Given only once the task ended; it names the task in its related-task _meta.
            meta = result.get("_meta")
            related = meta.get(RELATED_TASK_META_KEY) if type(meta) is dict else None
            self._task_over(related.get("taskId") if type(related) is dict else None)
        elif "taskId" in result:  # (no taskId: no terminal status, the common case)
            self._task_over(terminal_status(entry.method, result))

    def _task_over(self, task_id: Any) -> None:
        """A task reached a final status: stop routing its progress token, if we still do.

        Only when the token still points at that task's request: we may since have
        used the same token for another request of ours, and that routing must stay.
        """
        if type(task_id) is not str:
            return
        live = self._live_tasks.end(task_id)
        if live is not None and self._progress_tokens.get(live[0]) == live[1]:
            del self._progress_tokens[live[0]]

    # ------------------------------------------------ multi-round-trip (2026)

    def _start_input_round(
        self, entry: Outbound, result: dict[str, Any], events: list[Event]
    ) -> None:
        """An InputRequiredResult came in for one of our calls: hand its questions
        to the application as RequestReceived events and wait for every answer
        (AWAITING_INPUT), or fail the call when the result cannot be acted on.

        SEP-2322's client rules: fulfil every input request before retrying, or retry at
        once when there is only state; never answer what the client did not declare; and
        (not in the spec, which sets no round limit) stop after
        `ClientConfig.max_input_rounds`, as the Python SDK does with its default of 10, so
        that a server cannot keep a call and its user waiting for ever.
        """
        logical = entry.logical
        # The round's result ended the attempt on the wire: the call is between attempts
        # now, with no wire id until the retry is sent.
        self._retry_wire.pop(logical, None)
        try:
            interim = validator("InputRequiredResult")(result)
        except pydantic.ValidationError as exc:
            self._step(entry, "outbound", RequestInput.LOST)
            events.append(
                RequestFailed(
                    logical, entry.method, INTERNAL_ERROR, f"invalid result: {describe(exc)}"
                )
            )
            return
        # SEP-2322: at least one of the two MUST be present; a result with neither gives the
        # client nothing to answer or echo, so retrying would only loop.
        if not interim.input_requests and interim.request_state is None:
            self._step(entry, "outbound", RequestInput.LOST)
            events.append(
                RequestFailed(
                    logical,
                    entry.method,
                    INTERNAL_ERROR,
                    "invalid result: nothing to answer or echo",
                )
            )
            return
        # Rounds are counted per call across retries, so a server that asks again and
        # again ends the call instead of holding it, and the user, for ever.
        rounds = entry.rounds + 1
        if rounds > self.config.max_input_rounds:
            self._step(entry, "outbound", RequestInput.LOST)
            events.append(
                RequestFailed(
                    logical,
                    entry.method,
                    INTERNAL_ERROR,
                    f"the server kept asking for input: {self.config.max_input_rounds} rounds exceeded",
                )
            )
            return
        raw_requests = result.get("inputRequests") or {}
        asked: list[tuple[str, str, Any, Any]] = []
        for key, request in (interim.input_requests or {}).items():
            method = request.method
            # The capability check is written for wire params (both roles run it on what
            # travels), so it gets the raw ones, not the validated model.
            raw_params = (raw_requests.get(key) or {}).get("params") or {}
            try:
                self._check_declared(method, raw_params)
            except Reject as rej:
                # The server asked for something we never declared: the call cannot go on.
                self._step(entry, "outbound", RequestInput.LOST)
                events.append(RequestFailed(logical, entry.method, rej.code, rej.message))
                return
            asked.append((key, method, request.params, raw_params.get("_meta")))
        # The move is made only after every question passed the declaration check, so a
        # refused round leaves the call failed, not half waiting.
        self._step(entry, "outbound", RequestInput.INPUT_REQUIRED_IN)
        pending = PendingInputs(
            entry.method,
            entry.params,
            interim.request_state,
            {key for key, *_ in asked},
            rounds,
            entry.deadline,
            entry.progress_token,
            entry.related,
        )
        if self._pending_inputs is EMPTY:
            self._pending_inputs = {}
        self._pending_inputs[logical] = pending
        # The progress token keeps pointing at the call across rounds: a server may report
        # progress on the retry under the same token, and the call is the same call.
        if entry.progress_token is not None:
            if self._progress_tokens is EMPTY:
                self._progress_tokens = {}
            self._progress_tokens[entry.progress_token] = logical
        version = self.protocol_version
        assert version is not None
        # Each question gets a fresh string id: the counter keeps a later round's
        # question distinct from an earlier round's with the same key, and no server
        # request can collide with one (a 2026-07-28 server sends none).
        if asked and self._input_slots is EMPTY:
            self._input_slots = {}
        for key, method, params, meta in asked:
            self._slot_numbers += 1
            slot = f"{logical}#{self._slot_numbers}:{key}"
            self._input_slots[slot] = (logical, key)
            context = RequestContext(version, None, None, None, None, meta, logical)
            events.append(RequestReceived(slot, method, params, context))
        # No questions, only state: the server wants the call again with its state,
        # so there is nothing to wait for.
        if not pending.waiting:
            self._retry(logical, pending)  # state only ("load shedding"): retry at once

    _collects_answers = True  # (see `_Connection._collects_answers`)

    def _answers_input(
        self,
        request_id: RequestId,
        result: dict[str, Any] | None,
        error: tuple[int, str, Any] | None,
    ) -> bool:
        """Answers to a 2026-07-28 round's questions are collected per call and
        sent with its retry, never as JSON-RPC responses (the server asked in a
        result, not in a request). True when `request_id` names such a question.

        Only string ids can be question slots, because the slots are minted as strings: an
        integer id is always an answer to a legacy server's request, and is looked up there.
        """
        if type(request_id) is not str:
            return False
        slot = self._input_slots.pop(request_id, None)
        if slot is None:
            # A slot of a call that was cancelled or failed meanwhile: nothing to send.
            return request_id in self._dead_slots
        logical, key = slot
        pending = self._pending_inputs.get(logical)
        if pending is None:
            return True  # the call was cancelled meanwhile
        if error is not None:
            # The application refused to answer: the whole call fails, nothing is sent.
            self._drop_pending_inputs(logical, RequestInput.REFUSED_INPUT)
            # The call fails with the error the application gave, as on a legacy
            # connection where that error would have come back from the server.
            if self._pending_events is NO_ITEMS:
                self._pending_events = []
            self._pending_events.append(
                ErrorReceived(logical, pending.method, error[0], error[1], error[2])
            )
            self.deadline_epoch += 1  # next_deadline() is now minus infinity
            return True
        # Answers are collected until every question of the round has one; only then does
        # the retry go out, since SEP-2322 asks the client to fulfil the requests before
        # retrying.
        pending.answers[key] = result
        pending.waiting.discard(key)
        if not pending.waiting:
            self._retry(logical, pending)
        return True

    def _retry(self, logical: RequestId, pending: PendingInputs) -> None:
        """The same call again: a new id, the answers, the state echoed byte for byte.

        SEP-2322: the retry MUST use a new JSON-RPC id, carries the original params plus
        `inputResponses` and `requestState` echoed exactly, and those two belong to this
        retry only. The id comes from the same counter as every other request, so it can
        never collide with one of ours still in flight. The round count travels with the
        call, so the cap holds across retries.
        """
        self._step(pending, "outbound", RequestInput.RETRY)
        del self._pending_inputs[logical]
        # The original params, plus only this round's answers and state: what earlier
        # rounds told the server is inside the state it sent back, so resending old
        # answers could only contradict it.
        params = dict(pending.params or {})
        if pending.answers:
            params["inputResponses"] = pending.answers
        if pending.request_state is not None:
            params["requestState"] = pending.request_state
        wire_id = self._mint_id(self._next_id)
        self._next_id += 1
        payload = jr.encode_request(wire_id, pending.method, params)
        self._queue(payload, "request", pending.method, wire_id, pending.related)
        if self._retry_wire is EMPTY:
            self._retry_wire = {}
        self._retry_wire[logical] = wire_id
        self._register_outbound(
            wire_id,
            Outbound(
                pending.method,
                pending.deadline,
                pending.progress_token,
                None,
                pending.related,
                logical,
                pending.params,
                pending.rounds,
            ),
        )

    def cancel_request(self, request_id: RequestId, reason: str | None = None) -> None:
        """Give up on a call; one waiting on input answers ends here, nothing is sent.

        While a call waits on the application, no attempt of it is in flight at the
        server (the interim result ended the last one), so there is nothing to cancel
        on the wire: the call simply never retries.
        """
        super().cancel_request(request_id, reason)
        if self._pending_events:
            # A call failed by its refused input, not yet reported: cancelled, it ends
            # without that event (nothing after a cancel).
            self._pending_events = [
                e for e in self._pending_events if getattr(e, "request_id", None) != request_id
            ]

    def _drop_pending_inputs(
        self, request_id: RequestId, by: RequestInput = RequestInput.CANCEL
    ) -> bool:
        """End a call that waits on input answers, moving it by `by` in the request table.

        Its question slots are remembered as dead, so an application answering one
        afterwards is quietly ignored rather than told the id is unknown (the
        question was real; only the call ended).
        """
        pending = self._pending_inputs.pop(request_id, None)
        if pending is None:
            return False
        self._step(pending, "outbound", by)
        # A linear scan is fine here: a call has a handful of questions at most, and this
        # runs once per ended call.
        for slot in [s for s, (owner, _) in self._input_slots.items() if owner == request_id]:
            del self._input_slots[slot]
            if self._dead_slots is NO_IDS:
                self._dead_slots = RecentIds(self.limits.max_remembered_ids)
            self._dead_slots.add(slot)
        if pending.progress_token is not None:
            self._progress_tokens.pop(pending.progress_token, None)
        # Remembered as ended, so a late `cancel_request` for it is a no-op rather than an
        # error, as for any request that ended.
        self._ended_ids("outbound").add(request_id)
        return True

    def _wire_id(self, request_id: RequestId) -> RequestId:
        """The id a retried call currently travels under: `notifications/cancelled` must
        name the request the server knows, not the application's logical id.

        Without the mapping a cancel would name the logical id, which the server never saw
        after the first round, and the server would go on working for nobody.
        """
        return self._retry_wire.get(request_id, request_id)

    def _retry_ended(self, logical: RequestId) -> None:
        """A retried call ended: forget which wire id its retry used."""
        self._retry_wire.pop(logical, None)

    def _token_outlives_request(self, token: int | str, request_id: RequestId) -> bool:
        """For `check_invariants`: a call between rounds (in flight without being on the
        wire), or a legacy task-augmented request whose task is still live (its progress
        token stays routed to it until the task ends, 2025-11-25 "Tasks", see
        `_observe_result`).
        """
        return request_id in self._pending_inputs or self._live_tasks.routes(token, request_id)

    def check_invariants(self) -> None:
        """The base invariants, plus: a call waiting on input is held only as pending,
        with no wire attempt recorded for it.
        """
        super().check_invariants()
        # The send lane's remembered grants are the server's capabilities' own word.
        for cap in self._granted:
            assert has_capability(self._server_caps_wire, cap)
        # A call waiting on its answers is held only here, never also on the wire.
        for logical, pending in self._pending_inputs.items():
            assert pending.state is RequestState.AWAITING_INPUT
            assert self._retry_wire.get(logical) is None

    def _settle_local(self) -> list[Event]:
        """At close: queued terminal events first, then every call waiting on input fails
        with CONNECTION_CLOSED, so each call the application made ends exactly once.
        """
        # Events of the application's own calls still waiting for a tick (a call its
        # refused input failed) are terminal events too: out before ConnectionClosed.
        events: list[Event] = list(self._pending_events)
        self._pending_events = NO_ITEMS
        for pending in self._pending_inputs.values():
            self._step(pending, "outbound", RequestInput.CLOSE)
        events += [
            RequestFailed(logical, pending.method, CONNECTION_CLOSED, "Connection closed")
            for logical, pending in self._pending_inputs.items()
        ]
        self._pending_inputs.clear()
        self._input_slots.clear()
        self._retry_wire.clear()
        self._live_tasks.clear()
        return events

    # ---------------------------------------------------------------- sending

    def send_request(
        self,
        method: str,
        params: Any = None,
        deadline: float | None = None,
        progress: bool = False,
        related_request_id: RequestId | None = None,
    ) -> RequestId:
        """Queue a request; returns its id (see `_Connection.send_request`).

        The common request takes a lane: `_Connection.send_request` with this role's
        `_prepare_request` and the `_queue` and `_register_outbound` they call, in one
        function, for a READY connection sending a request of the agreed revision's table
        (`_REQUEST_LANES`) that the server's capabilities allow, with a dict of params
        carrying no `_meta` or `task` of the application's, no progress asked, room in
        flight and in the buffer. Every check of the general path comes before any
        change; a request that fails one (or whose params need the encoder's fallback)
        takes the general path from its start, which refuses it with its own error.
        The two must stay alike: tests/core/test_lanes.py sends the same requests both
        ways and compares the bytes, the entries and the tables.
        """
        if (
            self._lanes
            and not progress
            and type(params) is dict
            and self.state is _READY
            and (lane := _REQUEST_LANES.get((method, self.protocol_version))) is not None  # type: ignore[arg-type]
            and "_meta" not in params
            and "task" not in params
            and len(self._outbound) + len(self._pending_inputs) < self.limits.max_outbound_in_flight
            and (
                (cap := lane[0]) is None
                or self.server_capabilities is None
                or cap in self._granted
                or self._grants(cap)
            )
        ):
            n = self._next_id
            tag = self._id_tag
            rid = n if tag is None else f"{tag}{n}"  # (`_mint_id`, inline)
            wire = dict(params)
            payload: bytes | None
            if self.era is _MODERN:
                # `_prepare_request` stamps the shared envelope as the last member, and
                # `send_request` splices in its encoded tail: encoded before it is added.
                stamp = self._stamp
                payload = (
                    None if stamp is None else jr.encode_request_ending(rid, method, wire, stamp[1])
                )
                if payload is not None:
                    wire["_meta"] = self._envelope
            else:
                # (`jr.encode_request(rid, method, wire)`, inline: one Python call per
                # request; keep the two alike)
                msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": wire}
                try:
                    payload = to_json(msg, inf_nan_mode="null")
                except PydanticSerializationError:
                    payload = jr.dumps(msg)
            if payload is not None and self._outgoing_bytes + len(payload) <= self._output_limit:
                # Nothing below can fail. (`_queue`, inline: the form follows the last
                # drain, see `_base.Queued`)
                out = self._outgoing
                if out is NO_ITEMS:
                    self._outgoing = [
                        _new_outgoing(payload, "request", method, rid, related_request_id, wire)
                    ]
                elif out is NO_QUEUED:
                    self._outgoing = [(payload, "request", method, rid, related_request_id, wire)]
                elif not out or type(out[0]) is tuple:
                    out.append((payload, "request", method, rid, related_request_id, wire))
                else:
                    out.append(
                        _new_outgoing(payload, "request", method, rid, related_request_id, wire)
                    )
                self._outgoing_bytes += len(payload)
                self.output_pending = True
                self._next_id = n + 1
                # (`_register_outbound`, inline: no progress token on this lane)
                outbound = self._outbound
                if outbound is EMPTY:
                    outbound = self._outbound = {}
                # (`Outbound(method, deadline, None, None, related_request_id, rid, params)`,
                # without its `__init__` frame: one Python call per request. Its stores, in
                # its order; keep the two alike.)
                entry = _blank(Outbound)
                entry.method = method
                entry.deadline = deadline
                entry.progress_token = None
                entry.handler = None
                entry.related = related_request_id
                entry.logical = rid
                entry.params = wire if lane[1] else None
                entry.rounds = 0
                entry.state = _SENT
                outbound[rid] = entry
                if deadline is not None:
                    deadlines = self._deadlines
                    if deadlines is None:
                        deadlines = self._deadlines = DeadlineHeap()
                    deadlines.push(deadline, rid, outbound)
                    self.deadline_epoch += 1
                return rid
        return super().send_request(method, params, deadline, progress, related_request_id)

    def _grants(self, cap: str) -> bool:
        """`has_capability(self._server_caps_wire, cap)` for a request's capability (the
        send lane's and `_prepare_request`'s check alike, so both leave the same
        `_granted`), remembering a capability granted: the server's capabilities are
        fixed until they are set again, which empties `_granted`."""
        if not has_capability(self._server_caps_wire, cap):
            return False
        self._granted += (cap,)
        return True

    def _prepare_request(
        self, spec: MethodSpec, params: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """Check a request against the server's capabilities and stamp the
        2026-07-28 envelope; the application's own `_meta` keys win over ours.

        The server's capabilities are checked only when known: a pinned 2026-07-28 client
        that skipped discovery would otherwise be unable to send anything. The envelope is
        merged under the application's own `_meta`, never replacing it, because
        `progressToken` and trace context (SPEC-NOTES 1.2) travel there too.
        """
        cap = spec.server_capability  # (`needs_capability`, inline)
        if cap is not None and (spec.method, self.protocol_version or "") in UNGATED:
            cap = None
        # A pinned 2026-07-28 client that skipped discovery knows no capabilities yet.
        if (
            cap is not None
            and self.server_capabilities is not None
            and cap not in self._granted  # (remembered as the send lane remembers it)
            and not self._grants(cap)
        ):
            raise LocalProtocolError(f"the server did not advertise the {cap} capability")
        modern = self.era is Era.MODERN
        # `_check_task_request` has nothing to say of a plain request that is no tasks
        # method (the common case): it is called only for the others.
        if (params is not None and "task" in params) or (
            modern and spec.method in MODERN_TASK_REQUESTS
        ):
            self._check_task_request(spec, params)
        if modern:
            # `send_request` hands over its own copy (or None): stamped in place.
            if params is None:
                params = {}
            meta = params.get("_meta")
            # The envelope is merged into the application's `_meta`, which can only be
            # done with an object: anything else is the application's mistake, refused
            # before anything is sent or recorded (it was a TypeError from the merge).
            if meta is not None and not isinstance(meta, dict):
                raise LocalProtocolError(
                    f"params._meta must be an object, not {type(meta).__name__}"
                )
            # The application's keys win, so one call can carry, say, its own log level
            # or a progress token beside the connection-wide envelope.
            if meta:
                params["_meta"] = {**self._envelope, **meta}
            elif "_meta" in params:
                # An empty `_meta` of the application's keeps its place among the params:
                # a copy, because `send_request` splices the shared envelope in only as
                # the last member (`_stamp`).
                params["_meta"] = dict(self._envelope)
            else:
                params["_meta"] = self._envelope
        return params

    def _check_task_request(self, spec: MethodSpec, params: dict[str, Any] | None) -> None:
        """Only ask for a task where both sides declared it (LocalProtocolError).

        2025-11-25 (`basic/utilities/tasks`): a requestor SHOULD augment only request types
        the receiver declared; 2026-07-28 (SEP-2663) has no task param at all, the server
        decides, and only for a request that declared the extension.
        """
        # (`"task" in params` first: no call for the plain request, the common case)
        asks = params is not None and "task" in params and wants_task(params)
        if self.era is Era.MODERN:
            if asks:
                raise LocalProtocolError(
                    "2026-07-28 has no task param: declare the tasks extension in the "
                    "client capabilities and the server decides"
                )
            if spec.method in MODERN_TASK_REQUESTS and not extension_declared(
                self.config.capabilities_wire
            ):
                raise LocalProtocolError(
                    f"{spec.method} needs the tasks extension in the client capabilities"
                )
            return
        if not asks:
            return
        cap = LEGACY_AUGMENTABLE.get(("client", spec.method))
        if cap is None:
            raise LocalProtocolError(f"{spec.method} cannot be task-augmented")
        if self.server_capabilities is not None and not has_capability(self._server_caps_wire, cap):
            raise LocalProtocolError(f"the server did not declare {cap}")

    def _check_notification_allowed(self, method: str) -> None:
        """`notifications/roots/list_changed` is only for a client that declared
        `roots.listChanged`, the capability that says it sends them.

        2025-03-26 ("Roots"): a client that declared `roots.listChanged` SHOULD send the
        notification when its roots change, and only such a client may; a server that did
        not see the capability has no reason to expect it.
        """
        if method == "notifications/roots/list_changed":
            roots = self.config.capabilities_wire.get("roots")
            if not (isinstance(roots, dict) and roots.get("listChanged")):
                raise LocalProtocolError("roots/list_changed needs roots.listChanged declared")
