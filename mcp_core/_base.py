"""What both roles of a connection share: `_Connection`, the base of
`ServerConnection` (`_server.py`) and `ClientConnection` (`_client.py`).

Bytes (or whole messages) go in through `receive_data` / `receive_message` and
come back as events; what the application says goes in through verb methods
(`send_request`, `send_result` ...) and comes out of `data_to_send()` or
`messages_to_send()`. Receiving can queue output by itself (a ping answer, an
error for a bad message), which is why output is a buffer and not a return value.

Nothing here does I/O or reads a clock: deadlines are numbers the caller
chooses, and time arrives as an argument under one of two names that are never
mixed: `now` is the caller's loop clock (monotonic is best: `tick(now)`, and the
`deadline=` of the send verbs), `wall_time` is seconds since the epoch (the receive
calls' `wall_time=`, for the expiry of sealed `requestState`, which other
processes must judge alike).

Every change of the session's state and of a request's state is asked of the
tables in `_state.py` (`_move`, `_step`), never assigned: the order in which
things may happen is written there once, for both roles. What stays here is the
*how*: JSON-RPC shape checks, the in-flight tables, the output buffer, timing
out, and settling everything when the connection ends.

The layering is strict, so that the import graph has no cycle: `_state` and
`_requests` below, this module, then the roles; `_connection.py` is only the
old import path, above them all.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NoReturn, TypeGuard

import pydantic
from pydantic_core import from_json

from . import _jsonrpc as jr
from ._config import to_wire
from ._errors import (
    CONNECTION_CLOSED,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LIMIT_EXCEEDED,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    REQUEST_TIMEOUT,
    RESOURCE_NOT_FOUND,
    SERVER_BUSY,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
    LocalProtocolError,
    RemoteProtocolError,
)
from ._events import (
    ConnectionClosed,
    ErrorReceived,
    Event,
    MessageRejected,
    ProgressReceived,
    RequestCancelled,
    RequestFailed,
    ResponseIgnored,
    new_response_received,
)
from ._framing import LineBuffer, Oversized
from ._requests import (
    EMPTY,
    NO_IDS,
    NO_ITEMS,
    NO_QUEUED,
    DeadlineHeap,
    Inbound,
    Outbound,
    PendingInputs,
    RecentIds,
)
from ._state import (
    ENDED,
    INITIAL_SESSION_STATE,
    Direction,
    RequestInput,
    RequestState,
    SessionInput,
    SessionState,
    advance,
    advance_request,
)
from ._tasks import is_task_augmented, wants_task
from ._versions import (
    BATCH_REVISIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHODS,
    SPECS,
    V2024_11_05,
    V2025_11_25,
    Era,
    MethodSpec,
    Role,
    lookup,
)

__all__ = [
    "CAPABILITY_LABEL",
    "LOCAL_FAILURE",
    "LOG_LEVELS",
    "LOG_RANK",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "Fatal",
    "OutgoingMessage",
    "Reject",
    "RequestId",
    "State",
    "capability_problem",
    "describe",
    "elicitation_mode_declared",
    "has_capability",
    "json_kind",
    "missing_wall_time",
    "validator",
]

# JSON-RPC 2.0 allows a null id and fractional numbers; MCP (2025-03-26 on, "Requests")
# narrows it to a string or an integer and MUST NOT be null. Every table keyed by id relies
# on that: a float id would compare equal to an int one (1.0 == 1) and share its slot.
RequestId = int | str

# The syslog severities of RFC 5424 section 6.2.1, which MCP's logging uses (2025-03-26 on,
# `server/utilities/logging`), from the least to the most severe: the order is the rank a
# threshold compares, so it must not be sorted or reordered.
LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
# A rank per level so a threshold test is one integer comparison on every log call.
LOG_RANK: Final = {level: rank for rank, level in enumerate(LOG_LEVELS)}

# What an undeclared client capability is called in the refusal (the SDK's wording).
# The words are the official SDK's, so a server written against it recognises the refusal
# text as well as the code.
CAPABILITY_LABEL: Final = {
    "elicitation": "Elicitation",
    "sampling": "Sampling",
    "roots": "Roots",
}


# The public name of the session states (`mcp_core.State`): a str enum, so the
# comparisons with plain strings that code written against the string constants
# makes (`conn.state == "ready"`) still hold.
State = SessionState
_ENDED: Final = ENDED
# Read on every answer; on CPython 3.11 an enum member read through its class goes
# through `EnumType.__getattr__`, about five times a plain read.
_RESULT: Final = RequestInput.RESULT


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """One encoded message, with what a transport needs to route it.

    `related_request_id` names the inbound request this message belongs to (its
    response, its progress and log notifications, a server request made while
    handling it), so HTTP can put it on that request's stream.

    Frozen, because a transport may hold it after the engine has moved on (an HTTP stream
    waiting to be written); `kind` and the two ids are all a transport routes by, so it
    never has to parse a payload we encoded.

    `params` is, for a request the application sent (`send_request`), the params object
    the payload was encoded from, `_meta` envelope included, so that a transport that
    mirrors some of them (the 2026-07-28 HTTP headers) need not parse the payload back;
    None for every other message. Read it, never change it: it is the engine's, and
    nested values (a tool's arguments) may still be the application's own objects.
    """

    payload: bytes
    kind: Literal["request", "notification", "result", "error"]
    method: str | None = None
    request_id: RequestId | None = None
    related_request_id: RequestId | None = None
    params: Any = field(default=None, compare=False, repr=False)


class _NewOutgoing:
    """Builds an `OutgoingMessage` at a plain class's price: `messages_to_send` makes one per
    message (see the builders at the end of `_events` for how and why)."""

    __slots__ = ("kind", "method", "params", "payload", "related_request_id", "request_id")

    def __init__(
        self,
        payload: bytes,
        kind: str,
        method: str | None,
        request_id: RequestId | None,
        related_request_id: RequestId | None,
        params: Any = None,
    ) -> None:
        self.payload = payload
        self.kind = kind
        self.method = method
        self.request_id = request_id
        self.related_request_id = related_request_id
        self.params = params
        self.__class__ = OutgoingMessage  # type: ignore[assignment]


_new_outgoing: Callable[..., OutgoingMessage] = _NewOutgoing  # type: ignore[assignment]

#: One message in the output buffer of a byte-stream transport: the arguments of its
#: `OutgoingMessage` (payload, kind, method, request id, related id, params), in that
#: order. `data_to_send` needs only the payloads, and the record (a frozen object) costs
#: about five times a tuple to build and free, 0.4 us of every message.
#:
#: Which form a message is queued in follows how the buffer was last drained, with no
#: flag to keep: `messages_to_send` hands its list over and leaves the shared `NO_ITEMS`
#: (records from then on, what it hands over next), `data_to_send` empties its list and
#: keeps it, and `payloads_to_send` leaves the shared `NO_QUEUED` (tuples from then on,
#: as only the payloads are wanted); a list already holding messages takes more of the
#: same form (its first's). A connection drained both ways converts what it finds, so
#: either drain is right whatever the buffer holds.
Queued = tuple[bytes, str, "str | None", "RequestId | None", "RequestId | None", Any]


class Fatal(Exception):
    """Internal: the connection cannot go on (broken framing or handshake).

    Raised deep in receiving and caught only in `_receiving` (and its inline copy in
    `receive_message`) and the timers, so that the settling (every request failed, then
    ConnectionClosed) happens once, in one place, whatever found the failure.
    """

    def __init__(self, error: RemoteProtocolError) -> None:
        super().__init__(error.message)
        self.error = error


class Reject(Exception):
    """Internal: answer the current message with a JSON-RPC error and go on.

    An exception rather than a return value because the role's checks are many levels deep
    and all end the same way; `_receive_request` is the one place that turns it into an
    answer, so a refusal can never be sent twice or not at all.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


# By type name, built on first use: importing every pydantic model up front would make
# importing the engine slow, and a session uses a small share of them.
_VALIDATORS: dict[str, Callable[[Any], Any]] = {}


def validator(type_name: str) -> Callable[[Any], Any]:
    """The validating constructor of a wire type, built on first use."""
    found = _VALIDATORS.get(type_name)
    if found is None:
        from . import types

        target = getattr(types, type_name)
        if isinstance(target, type) and issubclass(target, pydantic.BaseModel):
            # The models defer building; build now and call the validator itself,
            # skipping `model_validate`'s Python wrapper on every message.
            target.model_rebuild()
            found = target.__pydantic_validator__.validate_python
        else:
            found = pydantic.TypeAdapter(target).validate_python
        _VALIDATORS[type_name] = found
    return found


def json_kind(value: object) -> str:
    """What a peer sent instead, in words for an error message ("an array").

    Errors name the JSON type, never echo the value: a wrong-typed value can be
    megabytes long or nested a hundred levels deep.

    The JSON names ("an array", not "list") because the reader is a peer's developer, who
    thinks in JSON, not Python.
    """
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "a boolean"
    if kind is int:
        return "an integer"
    if kind is float:
        return "a number"
    if kind is str:
        return "a string"
    if kind is list:
        return "an array"
    return "an object"


def describe(exc: pydantic.ValidationError) -> str:
    """A pydantic error as one line for a JSON-RPC message: the first three
    problems by path, without the input (a peer's value is never echoed back).

    Three problems at most: enough to fix a request, and a bound on the size of an error
    that a hostile value with thousands of faults could otherwise make huge.
    """
    parts = []
    for err in exc.errors(include_url=False, include_input=False)[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "params"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def has_capability(caps: Mapping[str, Any], path: str) -> bool:
    """Whether a wire capabilities object grants `path` ("tools",
    "tools.listChanged", "tasks.requests.tools.call"): present and not `false`
    or `null` at every step (peers write all three to mean "not offered"), so
    an empty object counts. Under `extensions` the rest of the path is one
    extension id, dots and all.

    `null` and `false` count as "not offered" because the schemas type capabilities as
    optional objects and SDKs serialise an absent one either way; treating them as offered
    would let a client that wrote `"sampling": null` be sent sampling requests. Extension
    ids (SEP-2133) are reverse-DNS names with dots, so they cannot be split like the other
    paths.
    """
    head, _, tail = path.partition(".")
    value = caps.get(head)
    if value is None or value is False:
        return False
    if not tail:
        return True
    if not isinstance(value, Mapping):
        return False
    if head == "extensions":
        found = value.get(tail)
        return found is not None and found is not False
    return has_capability(value, tail)


# A sentinel distinct from None: a `"method": null` must be judged (and refused) as a
# request with a bad method, not taken for a response.
_MISSING: Final = object()

# Marks a failure an internal handler gets from us (a timeout, a broken answer),
# not from the peer: an object no JSON can produce, so an error object that
# carries `"local": true` is still the peer's own.
LOCAL_FAILURE: Final = object()

# MCP reserves -32020..-32099 for codes the spec defines; emitting any other is forbidden.
# (2026-07-28 error code policy, SPEC-NOTES 1.13), so an application error that happens to
# pick a code in that range would look like a protocol error to the peer.
_SPEC_CODES: Final = frozenset(
    {
        HEADER_MISMATCH,
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
        URL_ELICITATION_REQUIRED,
    }
)


def elicitation_mode_declared(declared: Any, mode: str) -> bool:
    """Whether an elicitation capability object covers `mode` (`{}` means form only).

    2025-11-25 (`client/elicitation`, "Capabilities"): an empty elicitation object is form
    mode only, kept so that clients written for 2025-06-18, which declared `{}`, are never
    sent a URL they cannot handle.
    """
    if not isinstance(declared, Mapping):
        return False
    if "form" not in declared and "url" not in declared:
        return mode == "form"
    return declared.get(mode) is not None


def capability_problem(
    declared_caps: Mapping[str, Any], method: str, params: Mapping[str, Any] | None
) -> tuple[int, str] | None:
    """Why a client would refuse this server-to-client request: (code, message) or None.

    One rule for both sides and both eras: the client must have declared the
    capability, the elicitation mode, and sampling with tools when tools are
    offered. The client answers with this error; the server refuses to send.

    The same function runs on both sides so that the server never sends a request its client
    would refuse, and the client refuses exactly what the server should not have sent: the
    two can never disagree about a declaration.
    """
    spec = METHODS.get(("server", method))
    cap = spec.client_capability if spec is not None else None
    if cap is None:
        return None
    # 2025-11-25 (`basic/utilities/tasks`): the capability names each request type the
    # receiver supports as a task, so the check is the full dotted path, not its head.
    if cap.startswith("tasks"):
        # 2025-11-25 tasks the client hosts: tasks/get and tasks/result need the
        # capability itself, tasks/list and tasks/cancel their own sub-field.
        if not has_capability(declared_caps, cap):
            return METHOD_NOT_FOUND, f"{cap} not supported"
        return None
    # -32601 for an undeclared capability: the client has no such method as far as this
    # session goes, which is what the official SDKs answer.
    declared = declared_caps.get(cap)
    if declared is None:
        return METHOD_NOT_FOUND, f"{CAPABILITY_LABEL.get(cap, cap)} not supported"
    if cap == "elicitation":
        # Read before the params are validated (an undeclared capability is refused
        # first), so the mode's type is checked here, where it is read.
        mode = (params or {}).get("mode", "form")
        if type(mode) is not str:
            return INVALID_PARAMS, f"params.mode must be a string, not {json_kind(mode)}"
        if not elicitation_mode_declared(declared, mode):
            return INVALID_PARAMS, f"Elicitation mode {mode!r} not supported"
    if (
        # 2025-11-25 (`client/sampling`, "Tools"): a server MUST NOT send tools or
        # toolChoice unless the client declared `sampling.tools`.
        cap == "sampling"
        and (
            (params or {}).get("tools") is not None or (params or {}).get("toolChoice") is not None
        )
        and not (isinstance(declared, Mapping) and declared.get("tools") is not None)
    ):
        return INVALID_PARAMS, "Sampling with tools not supported"
    return None


def missing_wall_time() -> NoReturn:
    """Refuse input that a sealing server could not judge (raised before reading any).

    Without the wall clock every retry's sealed state would be refused as
    expired: say so at the first input instead, where the fix is obvious.

    Raised before any input is read, so the connection is left exactly as it was and the
    caller can retry the same call with the clock.
    """
    raise LocalProtocolError(
        "this server seals requestState (request_state_keys): pass "
        "wall_time=<the wall clock, seconds since the epoch> with every input, or no "
        "retry can be verified"
    )


# The revisions whose schema makes an error's id optional (leave it out when no request can
# be named); older ones require the member and write null, as JSON-RPC 2.0 section 5 does
# for a parse error.
_ID_OPTIONAL_ON_ERRORS: Final = frozenset({V2025_11_25, "2026-07-28"})

# The last `Limits` a connection was made with, and its `output_limit` (see
# `_Connection.__init__`).
_last_output_limit: tuple[jr.Limits | None, int] = (None, 0)


def _finite_number(value: object) -> TypeGuard[float]:
    """JSON cannot carry NaN or infinity, but Python's parser accepts them unless told
    otherwise; a progress value must compare with the last one, which NaN never does.
    """
    return type(value) is int or (type(value) is float and math.isfinite(value))


def _response_problem(obj: dict[str, Any], error: Any) -> str | None:
    """What is wrong with a response's shape, if anything (its id aside).

    JSON-RPC 2.0 section 5: a response carries exactly one of `result` and `error`, and an
    error object has an integer code and a string message. MCP adds that a result is an
    object (2025-03-26, "Responses"). The id is judged by the caller because what to do
    about a bad id depends on whether the id names one of ours.
    """
    if obj.get("jsonrpc") != "2.0":
        return "jsonrpc must be exactly '2.0'"
    if ("result" in obj) == ("error" in obj):
        return "a response needs exactly one of result and error"
    if "error" in obj:
        if not (
            type(error) is dict
            and type(error.get("code")) is int
            and type(error.get("message")) is str
        ):
            return "malformed error object"
    elif type(obj["result"]) is not dict:
        return "result must be an object"
    return None


class _Connection:
    """What both roles share: framing, the in-flight tables, sending, timing out.

    No method of this class raises on anything the peer sends except RemoteProtocolError,
    and only once the connection is already broken (RELIABILITY.md rule 1, as h11 promises
    for `next_event`): every other bad input becomes an error reply or an event, so a fuzzer
    can assert that. The verbs raise LocalProtocolError for the application's mistakes,
    before they change anything.
    """

    # Slots, not an instance dict: a connection has more attributes than CPython shares
    # the keys of (30), so each instance's dict was a full table of its own (about
    # 1.6 KB), multiplied by every idle session a server holds. An attribute of the
    # engine belongs here (or in the role's `__slots__`; tests/api/test_footprint.py
    # checks that none lands in the dict). `__dict__` stays, made on first use, for what
    # a transport hangs on its connection (`MCPServer` keeps its wake function there);
    # `__weakref__`: servers track their connections in a WeakSet.
    __slots__ = (
        "__dict__",
        "__weakref__",
        "_armed_epoch",
        "_deadlines",
        "_ended_inbound",
        "_ended_outbound",
        "_id_tag",
        "_inbound",
        "_lines",
        "_next_id",
        "_outbound",
        "_outgoing",
        "_outgoing_bytes",
        "_output_limit",
        "_pending_inputs",
        "_progress_tokens",
        "_rounds",
        "_stamp",
        "_wall_time",
        "deadline_epoch",
        "era",
        "limits",
        "output_pending",
        "protocol_version",
        "state",
    )

    _role: Role
    _peer: Role
    #: Whether the specialised paths for well-formed messages (the "lanes") are taken.
    #: A lane handles the common case of one kind of message (a request in, a response
    #: in, a request or result out) in one function, with every check of the general
    #: path in the same order, and hands anything it does not recognise to the general
    #: path before it has changed anything. False runs the general path only: the
    #: differential tests compare the two on the same input, and `--general-path` runs
    #: the suite that way (`mcp_core.testing.general_path_only`). A class attribute,
    #: not a slot, so that flipping it costs no connection a byte.
    _lanes: bool = True
    # `INITIAL_SESSION_STATE[_role]`, looked up once per role rather than per connection.
    _initial_state: SessionState

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_role" in cls.__dict__:
            cls._initial_state = INITIAL_SESSION_STATE[cls._role]

    def __init__(self, limits: jr.Limits) -> None:
        self.limits = limits
        # `Limits.output_limit` is a property that computes; read per message, so once.
        # (And once per `Limits` while the same one comes back, as it does for a server:
        # the Streamable HTTP server builds a connection per 2026-07-28 POST, all with
        # its config's `Limits`. The remembered pair holds the object, so its identity
        # cannot be taken by another; `Limits` is frozen, so the value cannot go stale;
        # one tuple, replaced whole, so threads making connections read a consistent pair.)
        global _last_output_limit
        last = _last_output_limit
        if last[0] is limits:
            self._output_limit = last[1]
        else:
            self._output_limit = output_limit = limits.output_limit
            _last_output_limit = (limits, output_limit)
        # Never assigned but through `_move`: the table in `_state.py` says which
        # moves exist, so a move it lacks is a bug caught where it happens.
        self.state: SessionState = self._initial_state
        self.protocol_version: str | None = None
        self.era: Era | None = None
        # The framing buffer is sized by the message limit and keeps a peek window of an
        # over-long line's ends, so that an oversized request can still be refused by its
        # id. Made by the first `receive_data`: a connection fed whole messages (an HTTP
        # POST's, a WebSocket's, the in-process link's) never splits lines, and the
        # Streamable HTTP server builds one connection per 2026-07-28 POST.
        self._lines: LineBuffer | None = None
        # Output is a buffer the caller drains, never a return value: receiving can produce
        # output by itself (an error reply, a ping answer), and so can a verb called from
        # another task; `_outgoing_bytes` keeps the total for the output limit in O(1).
        # (The shared read-only empty `NO_ITEMS` while nothing is queued on a message-framed
        # transport: `messages_to_send` empties the list for good, and an idle connection
        # kept a new empty one in its place, 56 bytes; `_queue` makes one.) Its entries
        # are `Queued` tuples or `OutgoingMessage`s, one form per list: see `Queued`.
        self._outgoing: list[Any] = NO_ITEMS
        self._outgoing_bytes = 0
        #: Whether `data_to_send()` / `messages_to_send()` has anything to give: a plain
        #: attribute, kept equal to `bool(self._outgoing)` by every place that queues or
        #: drains (`_queue` and the lanes and `_end_inbound` that write it in, and the two
        #: drains; `check_invariants` asserts it). Receiving and ticking can queue output
        #: by themselves; a verb called outside event handling queues it too: check this
        #: (or just drain) after either. (An attribute, not a property computing it: a
        #: loop reads it after every message, the in-process link twice per call.)
        self.output_pending = False
        # (`EMPTY` until the first: a server that asks its client nothing, and a client
        # asked nothing, never make either table; see `_progress_tokens` below.)
        self._outbound: dict[RequestId, Outbound] = EMPTY
        # The two in-flight tables, keyed by wire id: ours (waiting on the peer) and theirs
        # (waiting on us). They are per connection, never shared, which is what keeps one
        # client's ids from routing another's answers (RELIABILITY.md 1.4).
        self._inbound: dict[RequestId, Inbound] = EMPTY
        # Bounded memories of ids that ended, so that a late answer (or a late cancel) is
        # told apart from one naming an id that never existed, without a memory that grows
        # with the connection's age.
        # Each starts as the shared `NO_IDS` and is made by the first request to end its
        # way (`_ended_ids`): a server asking nothing never ends a request of its own.
        self._ended_outbound: RecentIds = NO_IDS
        self._ended_inbound: RecentIds = NO_IDS
        # A heap so that the next deadline is found in O(1) and expiry in O(log n), however
        # many requests are in flight; made by the first request of ours that has a
        # deadline, since a server that asks its clients nothing, and each 2026-07-28
        # POST's connection, never sets one.
        self._deadlines: DeadlineHeap | None = None
        # The tables below, and the roles' rarely filled ones, start as the shared
        # read-only `EMPTY` and get a dict of their own on their first write: most
        # sessions never fill them, and an empty dict is 64 bytes of each.
        # progress token -> the logical id of our request it reports on
        self._progress_tokens: dict[int | str, RequestId] = EMPTY
        # Server: the peer's requests with a round of questions out (see request_input);
        # here so the answering verbs can test it for nothing on the common path.
        self._rounds: dict[RequestId, Any] = EMPTY
        # Client: its 2026-07-28 calls waiting on the application's input answers.
        self._pending_inputs: dict[RequestId, Any] = EMPTY
        # Client, 2026-07-28: the `_meta` envelope it stamps on every request and that
        # object's encoded tail (`jr.trailing_members`), so `send_request` encodes it
        # once per client rather than once per request. None: nothing stamped.
        self._stamp: tuple[dict[str, Any], bytes] | None = None
        # Our ids count up from 0 and are never reused on this connection: 2025-03-26
        # ("Requests") says the id MUST NOT have been used before by the requestor in the
        # same session, and a late answer to a reused id would settle the wrong request.
        self._next_id = 0
        #: Bumped whenever a deadline is set, or anything else is that can make
        #: `next_deadline()` earlier (a client's event waiting to come out). While it is
        #: unchanged, `next_deadline()` gives nothing earlier than when it was last read,
        #: and a None stays None: a loop that keeps the value it saw with the deadline it
        #: armed can skip the call while both are unchanged and the timer is disarmed (the
        #: in-process link does, after every message). Read it, never write it.
        #: `_armed_epoch` is its value when the caller last read next_deadline() (see
        #: `deadline_moved`).
        self.deadline_epoch = 0
        self._armed_epoch = 0
        # The wall time given with the latest input: sealing falls back on it.
        self._wall_time: float | None = None
        # A prefix making our request ids strings unique across processes (set by
        # `mcp_core.http.tag_request_ids`); None: plain integers.
        self._id_tag: str | None = None

    # ------------------------------------------------------------------ input

    #: Whether input must come with `wall_time=`: only a server with
    #: `request_state_keys` judges anything by the wall clock (a sealed `requestState`'s
    #: expiry, in both eras), and it refuses input without it. Elsewhere the wall time
    #: is never read, so a transport may skip reading the clock (the in-process link
    #: does, for every message to a client). Read it, never write it.
    needs_wall_time = False

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Event]:
        """Feed bytes of a newline-delimited stream; `b""` means the stream ended.

        `wall_time` is the wall-clock time (seconds since the epoch, what the
        standard library's time() gives), for the one check that needs it: the expiry of a sealed
        `requestState`, which other processes must judge alike. A server with
        `request_state_keys` cannot judge a retry without it, so it refuses
        bytes that come without it (`LocalProtocolError`, before reading any);
        elsewhere it may be left out. Deadlines use the other clock, the one you
        give `tick(now)`; the two are never mixed.

        Empty bytes mean the end, as in h11: a stream cannot end "with an error" at the byte
        level, so what was in flight is settled as a normal close, and the events say which
        requests were lost.
        """
        if not data:
            if wall_time is not None:
                self._wall_time = wall_time
            if self.state in _ENDED:
                return []
            return self._settle("end of stream", None)
        # The lane (`receive_message`'s): a read that is one whole line while no partial line
        # is buffered, as nearly every stdio and TCP read is. The test is `LineBuffer.feed`'s
        # for its own fast path, and `_receive_lines` keeps no buffer for such a read
        # either, so the two paths leave the connection alike.
        if self._lanes and self._lines is None:
            end = len(data) - 1
            if 0 < end <= self.limits.max_message_bytes and data[end] == 10:
                line = data[:end]
                if 10 not in line and line[-1] != 13 and line[0] > 32:
                    return self.receive_message(line, wall_time)
        return self._receiving(self._receive_lines, data, wall_time)

    def _receiving(
        self,
        receive: Callable[[Any, list[Event]], None],
        item: Any,
        wall_time: float | None,
    ) -> list[Event]:
        """What every input entry point does around `receive(item, events)`: take the
        wall time (refused without one where sealing needs it), check that input is
        still read, and settle the connection on a fatal error.

        The wall time is remembered even on calls that do not need it, because sealing an
        answer later (`send_input_required` from a worker) falls back on the latest one.
        """
        if wall_time is not None:
            self._wall_time = wall_time
        elif self.needs_wall_time:
            missing_wall_time()
        if self.state in _ENDED:
            self._check_receiving()  # raises: input after the end
        events: list[Event] = []
        try:
            receive(item, events)
        except Fatal as fatal:
            events.extend(self._settle(fatal.error.message, fatal.error))
        return events

    def _receive_lines(self, data: bytes, events: list[Event]) -> None:
        """An oversized line arrives as its two kept ends (`Oversized`), so it is refused by
        the same rule, with its id, as a message the framing let through.
        """
        # The limit is per message, not per chunk (RELIABILITY.md 1.3): a chunk may hold a
        # valid near-limit line and the start of another, and both must be accepted.
        lines = self._lines
        if lines is None:
            limits = self.limits
            lines = LineBuffer(limits.max_message_bytes, jr.peek_window(limits))
        items = lines.feed(data)
        # The buffer is kept only while it holds a partial line (or the ends of an
        # over-long one): an idle one is the same as none, and with none the next
        # whole-line read can take the lane (`receive_data`).
        self._lines = None if lines.idle() else lines
        for item in items:
            if isinstance(item, Oversized):
                self._receive_one(self._too_big(item.size, item.head, item.tail), events)
            else:
                self._receive_one(item, events)

    def receive_message(
        self, data: bytes | bytearray | str, wall_time: float | None = None
    ) -> list[Event]:
        """Feed one whole message from a transport that frames messages itself.

        `wall_time` as for `receive_data` (here it may be passed by position too: a
        transport calls this once per message, and CPython matches a keyword by name).

        A transport with its own frames (WebSocket, an HTTP body) has no newlines to split
        on; the checks after the framing are the same, so both eras and every transport
        judge a message alike.

        With the lanes on this is the lane of one whole message itself (a read of one
        whole line comes here from `receive_data` too): `_receiving` around
        `_receive_one` and `_dispatch`, written as one function, which hands a
        well-formed request to the role's `_request_lane` and a response straight to
        `_receive_response`. (It was a call to a lane function of its own: one Python
        call per message more, two per in-process call.) It mirrors `_receiving`,
        `_receive_one` and `_dispatch`, and `_receive_whole` (a parsed message's lane)
        mirrors it (keep them alike): the same steps in the same order, so the same
        events and the same errors. What it does not recognise goes to the general path
        from where it stands: a message that does not parse to `_receive_one` (which
        parses it again, to answer it as before), a batch or a bare value to
        `_receive_object`, anything else to `_dispatch`.
        """
        if self._lanes:
            if wall_time is not None:
                self._wall_time = wall_time
            elif self.needs_wall_time:
                missing_wall_time()
            if self.state in _ENDED:
                self._check_receiving()  # raises: input after the end
            events: list[Event] = []
            try:
                if self._pending_events:
                    self._flush_pending_events(events)
                # `jr.parse`, inline for the usual message: bytes, and too short to break
                # any limit but the depth, which is judged as there (each test in its
                # order: too short to nest past the limit, then the bracket count,
                # `jr._openers`, inline). Any other goes to `jr.parse` itself.
                limits = self.limits
                size = len(data)
                depth = limits.max_depth
                strings = limits.max_string_length
                obj: Any = _MISSING
                try:
                    if (
                        type(data) is bytes
                        and size <= limits.max_message_bytes
                        and (
                            size <= 2 * depth + 1
                            or ((at := data.find(b"[")) < 0 and size <= 5 * depth + 1)
                            or data.count(b"{") + (0 if at < 0 else data.count(b"[", at)) <= depth
                        )
                        and size <= limits.max_integer_digits
                        and (strings is None or size <= strings)
                    ):
                        obj = from_json(data, allow_inf_nan=False)
                    else:
                        obj = jr.parse(data, limits)
                except (RemoteProtocolError, ValueError):
                    self._receive_one(data, events)  # refused there
                if obj is _MISSING:
                    pass  # (answered just above)
                elif type(obj) is not dict:
                    self._receive_object(obj, events)
                else:
                    method = obj.get("method", _MISSING)
                    if method is _MISSING and ("result" in obj or "error" in obj):
                        self._receive_response(obj, events)  # (`_dispatch`'s first branch)
                    elif not self._request_lane(obj, method, events):
                        self._dispatch(obj, events)
                if self._pending_events:
                    self._flush_pending_events(events)
            except Fatal as fatal:
                events.extend(self._settle(fatal.error.message, fatal.error))
            return events
        return self._receiving(self._receive_one, data, wall_time)

    def _receive_whole(self, obj: Any, wall_time: float | None) -> list[Event]:
        """The lane of one whole message as `receive_parsed` has it (already parsed):
        `_receiving` around `_receive_object` and `_dispatch`, written as one function.

        `receive_message`'s lane after its parse (keep the two alike), which mirrors
        `_receiving`, `_receive_object` and `_dispatch`: a batch or a bare value goes to
        `_receive_object`, a response straight to `_receive_response`, a well-formed
        request to the role's `_request_lane`, anything else to `_dispatch`. (There are
        no client's pending events to put first: `_receive_object` has none either.)
        """
        if wall_time is not None:
            self._wall_time = wall_time
        elif self.needs_wall_time:
            missing_wall_time()
        if self.state in _ENDED:
            self._check_receiving()  # raises: input after the end
        events: list[Event] = []
        try:
            if type(obj) is not dict:
                self._receive_object(obj, events)
            else:
                method = obj.get("method", _MISSING)
                if method is _MISSING and ("result" in obj or "error" in obj):
                    self._receive_response(obj, events)  # (`_dispatch`'s first branch)
                elif not self._request_lane(obj, method, events):
                    self._dispatch(obj, events)
        except Fatal as fatal:
            events.extend(self._settle(fatal.error.message, fatal.error))
        return events

    def _request_lane(self, obj: dict[str, Any], method: Any, events: list[Event]) -> bool:
        """Role hook: take a well-formed request the common way, or return False having
        changed nothing (`_dispatch` then judges it). The server has one
        (`ServerConnection._request_lane`); a client's requests are rare, so it has none.
        """
        return False

    def receive_parsed(self, message: Any, *, wall_time: float | None = None) -> list[Event]:
        """`receive_message` for a message its transport already parsed.

        For transports in this package that must read a message before they can
        route it (the HTTP server parses a POST body to find its era, session and
        request ids): `message` is what `jr.parse` returned for it under this
        connection's limits, and it is read exactly as those bytes would be, without
        a second parse. `wall_time` as for `receive_data`.

        The message must have been parsed with this connection's limits: a transport that
        parsed with looser ones would bypass the depth and size checks this promises.
        """
        if self._lanes:
            return self._receive_whole(message, wall_time)
        return self._receiving(self._receive_object, message, wall_time)

    def receive_oversized(
        self,
        size: int,
        head: bytes,
        tail: bytes,
        *,
        limit: int | None = None,
        setting: str = "Limits.max_message_bytes",
        wall_time: float | None = None,
    ) -> list[Event]:
        """A message the transport would not buffer: it kept only its ends.

        For message-framed transports with a size limit of their own (WebSocket,
        say): keep the first and last `PEEK_BYTES` (`mcp_core.PEEK_BYTES`) of the
        message, discard the rest, and pass its `size`, its `limit` (default: our
        `Limits.max_message_bytes`) and the `setting` that sets it. The connection
        refuses it as it refuses an over-long line: a request gets the error with
        its id when the kept bytes show it, a response to one of our requests
        fails that request (`RequestFailed` with `LIMIT_EXCEEDED`), and the
        connection goes on. `wall_time` as for `receive_data`.

        WebSocket libraries enforce their own size limits; this lets the refusal be the same
        JSON-RPC error (with the id) as on stdio, instead of a close that would fail every
        request in flight (see `_websocket`'s module notes).
        """
        limit = self.limits.max_message_bytes if limit is None else limit
        refusal = jr.too_big(size, limit, head, tail, setting, self.limits)
        return self._receiving(self._receive_one, refusal, wall_time)

    def _too_big(self, size: int, head: bytes, tail: bytes) -> jr.LimitExceeded:
        """Named by the setting the operator would raise, so the error a peer receives and the
        event the application logs both say how to accept the message next time.
        """
        limits = self.limits
        return jr.too_big(
            size, limits.max_message_bytes, head, tail, "Limits.max_message_bytes", limits
        )

    def _refuse(self, refusal: jr.LimitExceeded, events: list[Event]) -> None:
        """A message over a limit. A request (or anything not known to be a response)
        gets the error, with its id when that could be read; a response fails our
        request it answers, locally, since the peer has nothing to learn from an
        error sent back for its response; a notification is only reported."""
        rid, is_response, is_notification = refusal.envelope
        if is_notification:
            events.append(MessageRejected(None, refusal.code, refusal.message))
            return
        if not is_response:
            self._reply_error(rid, refusal.code, refusal.message, events)
            return
        events.append(MessageRejected(rid, refusal.code, refusal.message))
        entry = self._outbound.pop(rid, None) if rid is not None else None
        if entry is not None and rid is not None:
            self._ended(rid, entry, RequestInput.LOST)
            self._resolve_failure(
                entry.logical,
                entry,
                LIMIT_EXCEEDED,
                f"response refused: {refusal.message}; raise {refusal.setting} in the "
                f"{self._role}'s limits to accept it",
                events,
            )

    def _check_receiving(self) -> None:
        """Input after the end. After ERROR it is the peer's fault (it kept
        sending on a broken stream); after CLOSED ours (we closed and still feed).

        The two are told apart because they call for different fixes: after ERROR the
        transport should stop reading, after CLOSED the application has a bug.
        """
        if self.state is State.ERROR:
            raise RemoteProtocolError("connection already failed; no more input is accepted")
        if self.state is State.CLOSED:
            raise LocalProtocolError("connection is closed")

    def _receive_one(
        self, data: bytes | bytearray | str | jr.LimitExceeded, events: list[Event]
    ) -> None:
        """One message, or the refusal of one the framing would not keep.

        A parse error is answered and the connection goes on: with newline framing
        one bad line cannot desynchronise the next, so ending the session over it
        would punish every request in flight for one peer bug.
        """
        # The limits are checked before and after parsing (docs/architecture.md, "Limits"):
        # a message over a size is never parsed, and a deep or wide one is refused by the
        # parser before Python's recursion limit could turn it into a crash (RELIABILITY.md
        # 1.2).
        # A client's events caused by its application's own calls (the handshake's
        # Connected, a call failed by a refused input) come out in causal order: those of
        # earlier local calls first, those of this message right after it, however the
        # input was split. (Here rather than in a client override: one call less per
        # message; a server never queues any.)
        if self._pending_events:
            self._flush_pending_events(events)
        if type(data) is not bytes and isinstance(data, jr.LimitExceeded):
            self._refuse(data, events)
        else:
            try:
                obj = jr.parse(data, self.limits)
            except jr.LimitExceeded as refusal:
                self._refuse(refusal, events)
            except RemoteProtocolError as exc:
                # JSON-RPC 2.0 section 5.1: a parse error is answered with id null (or
                # none, where the revision allows), since no id could be read.
                self._reply_error(None, exc.code, exc.message, events)
            else:
                if type(obj) is dict:  # nearly every message: one call less than the router
                    self._dispatch(obj, events)
                else:
                    self._receive_object(obj, events)
        if self._pending_events:
            self._flush_pending_events(events)

    #: Events a client's own calls caused, waiting to come out with the next input
    #: (`_client.py`); always empty on a server, which reads this class default.
    _pending_events: list[Event] = NO_ITEMS

    def _flush_pending_events(self, events: list[Event]) -> None:
        events.extend(self._pending_events)
        self._pending_events = NO_ITEMS

    def _receive_object(self, obj: Any, events: list[Event]) -> None:
        """Route a parsed message by its JSON type: an object, a batch, or junk.

        A JSON text that is not an object or an array is answered -32600 with no id:
        JSON-RPC 2.0 section 5 gives that for an invalid request whose id cannot be read.
        """
        if type(obj) is dict:
            self._dispatch(obj, events)
        elif type(obj) is list:
            self._receive_batch(obj, events)
        else:
            self._reply_error(None, INVALID_REQUEST, "a JSON-RPC message must be an object", events)

    def _receive_batch(self, items: list[Any], events: list[Event]) -> None:
        """A JSON-RPC batch, legal only in 2025-03-26. Its items are dispatched
        one by one, each answered in a message of its own. An initialize in a batch
        is refused: the revision it picks would change how the other items read."""
        # JSON-RPC batches were added in 2025-03-26 and removed in 2025-06-18 (SPEC-NOTES
        # 2.8); before a revision is agreed we cannot know, so a batch is refused then too.
        if self.protocol_version not in BATCH_REVISIONS:
            self._reply_error(
                None,
                INVALID_REQUEST,
                "batch arrays are not allowed in this protocol revision",
                events,
            )
            return
        if not items:
            self._reply_error(None, INVALID_REQUEST, "empty batch", events)
            return
        # Bounded separately from the message size: a batch of many tiny requests costs a
        # dispatch and an answer each, and would otherwise dodge the in-flight limit's
        # intent.
        if len(items) > self.limits.max_batch_size:
            self._reply_error(None, INVALID_REQUEST, "batch too large", events)
            return
        # Items are dispatched one by one, each answered in a message of its own rather
        # than in one array: JSON-RPC 2.0 section 6 says a server SHOULD answer with an
        # array, but the answers come as the application gives them, possibly much later,
        # and clients correlate answers by id.
        for item in items:
            if type(item) is dict:
                if item.get("method") == "initialize":
                    self._reply_error(
                        jr.recover_id(item),
                        INVALID_REQUEST,
                        "initialize must not be part of a batch",
                        events,
                    )
                    continue
                self._dispatch(item, events)
            else:
                self._reply_error(None, INVALID_REQUEST, "batch items must be objects", events)

    def _dispatch(self, obj: dict[str, Any], events: list[Event]) -> None:
        """Classify one object as request, notification or response, checking
        the JSON-RPC envelope first, so the role rules only ever see well-formed
        messages. A request with a broken envelope still gets an error carrying its
        id when one can be read, so the peer can match the refusal to its call.
        """
        method = obj.get("method", _MISSING)
        if method is _MISSING:
            if "result" in obj or "error" in obj:
                self._receive_response(obj, events)
            else:
                # Neither request nor response: an invalid request, answered if it has an id.
                rid = jr.recover_id(obj)
                self._reply_error(
                    rid, INVALID_REQUEST, "a message needs method, result or error", events
                )
            return
        # JSON-RPC 2.0 section 4: a request is a message with an id, whatever its value; a
        # notification has none. An `"id": null` is therefore a request with a bad id, and
        # it is answered (with no id) rather than silently treated as a notification.
        is_request = "id" in obj
        rid = obj["id"] if is_request else None
        if obj.get("jsonrpc") != "2.0":
            reason = "jsonrpc must be exactly '2.0'"
        elif type(method) is not str:
            reason = "method must be a string"
        elif is_request and type(rid) is not int and type(rid) is not str:  # (`is_request_id`)
            reason = "id must be a string or an integer"
            rid = None
        elif "result" in obj or "error" in obj:
            reason = "a request must not carry result or error"
        elif "params" in obj and type(obj["params"]) is not dict:
            reason = "params must be an object"
        # Method names are short in every revision; a long one is refused before it is used
        # as a dictionary key or copied into an error message.
        elif len(method) > self.limits.max_method_length:
            reason = "method name too long"
        else:
            if is_request:
                self._receive_request(rid, method, obj.get("params"), events)  # type: ignore[arg-type]
            else:
                self._receive_notification(method, obj.get("params"), events)
            return
        # A notification is never answered (JSON-RPC 2.0 section 4.1), even when it is
        # broken; it is only reported.
        if is_request or rid is not None:
            self._reply_error(
                rid if jr.is_request_id(rid) else None, INVALID_REQUEST, reason, events
            )
        else:
            events.append(MessageRejected(None, INVALID_REQUEST, reason))

    def _receive_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """Admit a peer's request. The duplicate-id check and the in-flight limit
        come before the role's rules: both protect the routing tables (an id in
        flight names one slot), whatever the method. A `Reject` raised by the role
        becomes the JSON-RPC error for this request, and nothing else changes.
        """
        # The refusal carries the duplicate's id, so a buggy peer sees two answers under
        # one id (this error, then the first request's answer); confusing for it, but the
        # first request's slot is never overwritten, which is what matters (RELIABILITY.md
        # 1.6).
        if rid in self._inbound:
            # Never overwrite a routing slot: the first request completes normally.
            self._reply_error(
                rid, INVALID_REQUEST, f"request id {rid!r} is already in flight", events
            )
            return
        # -32000 (implementation-defined, "server busy") so that the peer can tell a
        # transient refusal from a broken request; the limit caps what a peer can make us
        # hold.
        if len(self._inbound) >= self.limits.max_inbound_in_flight:
            self._reply_error(rid, SERVER_BUSY, "too many requests in flight", events)
            return
        try:
            self._accept_request(rid, method, params, events)
        except Reject as rej:
            self._reply_error(rid, rej.code, rej.message, events, rej.data)

    def _receive_notification(
        self, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """Cancellation and progress mean the same in both roles and eras; the
        rest is the role's (`_accept_notification`).
        """
        if method == "notifications/cancelled":
            self._receive_cancel(params, events)
        elif method == "notifications/progress":
            self._receive_progress(params, events)
        else:
            self._accept_notification(method, params, events)

    def _receive_cancel(self, params: dict[str, Any] | None, events: list[Event]) -> None:
        """2025-03-26 ("Cancellation"): the receiver MAY ignore a cancel for an unknown or
        finished request, and the client MUST NOT cancel `initialize`; 2026-07-28 keeps
        both. After a cancel nothing is sent for the request (RELIABILITY.md rule 6): the
        record leaves the table at once, so a late `send_result` finds it gone and becomes a
        no-op instead of a response the peer no longer expects.
        """
        # Malformed, unknown and late cancels are ignored, as the spec asks.
        if not params:
            return
        rid = params.get("requestId")
        if not jr.is_request_id(rid):
            return
        entry = self._inbound.get(rid)
        if entry is None or entry.method == "initialize" or is_task_augmented(entry.params):
            # A task-augmented request is stopped with tasks/cancel, never this (2025-11-25).
            return
        # Every live state of theirs takes a cancel: no refusal to phrase here.
        self._step(entry, "inbound", RequestInput.PEER_CANCEL)
        inbound = self._inbound
        del inbound[rid]
        if not inbound:
            self._inbound = EMPTY  # (see `_end_inbound`)
        self._ended_ids("inbound").add(rid)
        if entry.method in self._ENDINGS_WATCHED:
            self._inbound_ended(rid, entry, answered=False)
        # Questions a server asked for this request go with it (`_withdraw` cancels them on
        # the wire), so the client stops prompting for a request nobody waits on.
        if self._rounds:
            self._withdraw(rid, "the request was cancelled")
        reason = params.get("reason")
        events.append(RequestCancelled(rid, reason if isinstance(reason, str) else None))

    def _receive_progress(self, params: dict[str, Any] | None, events: list[Event]) -> None:
        """Progress on one of ours, found by its token. An unknown token is dropped
        quietly (the request may have just ended, and progress is advisory); bad
        numbers are reported, never raised.
        """
        if not params:
            return
        token = params.get("progressToken")
        # Found by token, not by request id: the token is what the notification carries, and
        # ours equal our ids only by our choice (`send_request`); an internal request has
        # none.
        rid = self._progress_tokens.get(token) if jr.is_request_id(token) else None
        if rid is None:
            return
        progress = params.get("progress")
        total = params.get("total")
        message = params.get("message")
        # Reported, not raised: progress is advisory, and a broken notification must not
        # fail the request it reports on.
        if not _finite_number(progress) or (total is not None and not _finite_number(total)):
            events.append(MessageRejected(None, INVALID_PARAMS, "malformed progress notification"))
            return
        events.append(
            ProgressReceived(rid, progress, total, message if isinstance(message, str) else None)
        )

    def _receive_response(self, obj: dict[str, Any], events: list[Event]) -> None:
        """A response: settle the request of ours it answers.

        An id we never used, or one already settled, is reported (`ResponseIgnored`,
        `late` for the second) rather than failing anything: a timeout or a cancel
        races with the answer, and both sides are right. A malformed response fails
        the request it names, locally, since its caller would otherwise wait forever.

        (A client takes a well-formed result to an application request of its own in
        a lane, `ClientConnection._receive_response`, which mirrors this, `_ended` and
        `_accept_result` for that case: a change here needs the same there.)
        """
        raw_id = obj.get("id")
        rid = raw_id if type(raw_id) is int or type(raw_id) is str else None  # (`is_request_id`)
        error = obj.get("error")
        # A well-formed result needs none of `_response_problem`'s tests but these.
        if (
            error is None
            and type(obj.get("result")) is dict
            and "error" not in obj
            and obj.get("jsonrpc") == "2.0"
        ):
            problem = None
        else:
            problem = _response_problem(obj, error)
        # A well-formed error without an id is the peer's parse error or invalid request
        # reply (JSON-RPC 2.0 section 5): there is nothing of ours to settle, only to
        # report.
        if problem is None and raw_id is None and type(error) is dict:
            # The peer could not read one of our messages; there is nothing to settle.
            events.append(MessageRejected(None, error["code"], error["message"]))
            return
        if problem is None and rid is None:
            problem = "response id must be a string or an integer"
        if problem is not None or rid is None:
            problem = problem or "response id must be a string or an integer"
            entry = self._outbound.pop(rid, None) if rid is not None else None
            if entry is not None and rid is not None:
                self._ended(rid, entry, RequestInput.LOST)
                self._resolve_failure(
                    entry.logical, entry, INTERNAL_ERROR, f"invalid response: {problem}", events
                )
            events.append(MessageRejected(rid, INVALID_REQUEST, problem))
            return
        # An answer to one of ours leaves the table before anything else, so a handler that
        # sends a new request from its event never finds the old one still in flight.
        entry = self._outbound.pop(rid, None)
        if entry is None:
            events.append(ResponseIgnored(rid, late=rid in self._ended_outbound))
            return
        # How it ends is known only further on for a result (valid? an
        # InputRequiredResult?), so the move is made where that is decided.
        self._ended(rid, entry)
        # Internal requests (the handshake, the probe) answer to a handler, never to an
        # event: the application did not send them and has nothing to match their ids to.
        if entry.handler is not None:
            is_error = type(error) is dict
            self._step(
                entry,
                "outbound",
                RequestInput.ERROR_RESPONSE if is_error else RequestInput.RESPONSE,
            )
            done = entry.handler(rid, obj.get("result"), error)
            if done is not None:
                events.append(done)
        elif type(error) is dict:
            self._step(entry, "outbound", RequestInput.ERROR_RESPONSE)
            events.append(
                ErrorReceived(
                    entry.logical, entry.method, error["code"], error["message"], error.get("data")
                )
            )
        else:
            self._accept_result(entry.logical, entry, obj["result"], events)

    def _accept_result(
        self, rid: RequestId, entry: Outbound, result: dict[str, Any], events: list[Event]
    ) -> None:
        """A result for an application request, validated against the method's
        result model before the application sees it, so an event never carries a
        shape its type says it cannot have.

        (Mirrored for a client's common case by its result lane,
        `ClientConnection._receive_response`.)
        """
        # A result is validated before the application sees it: a typed event must never
        # carry a shape its type says it cannot have, and a peer's malformed result must
        # fail the one request rather than raise in the application's code.
        spec = SPECS.get((self._role, entry.method, self.protocol_version or ""))
        value: Any = result
        if spec is not None and spec.result is not None:
            # A task-augmented request (2025-11-25) is answered with the task, not
            # with the method's result; the result comes later from tasks/result.
            # (`params` is kept only for a retry or a task: None is no task.)
            params = entry.params
            legacy_task = (
                params is not None
                and "task" in params  # (no call for the plain request, the common case)
                and self.era is not Era.MODERN
                and wants_task(params)
            )
            name = "CreateTaskResult" if legacy_task else spec.result
            validate = _VALIDATORS.get(name) or validator(name)  # (built: one probe)
            try:
                value = validate(result)
            except pydantic.ValidationError as exc:
                self._step(entry, "outbound", RequestInput.LOST)
                events.append(
                    RequestFailed(
                        rid, entry.method, INTERNAL_ERROR, f"invalid result: {describe(exc)}"
                    )
                )
                return
            if (
                not legacy_task
                and spec.result == "ElicitResult"
                and value.action != "accept"
                and value.content
            ):
                # Content only means something on accept; never let it leak past a decline.
                value = value.model_copy(update={"content": None})
        self._observe_result(rid, entry, result)
        # (`_step`, inline)
        entry.state = advance_request(self._role, "outbound", entry.state, RequestInput.RESPONSE)
        events.append(new_response_received(rid, entry.method, value))

    def _resolve_failure(
        self, rid: RequestId, entry: Outbound, code: int, message: str, events: list[Event]
    ) -> None:
        """Fail one of ours for a local reason (timeout, a refused answer): an
        internal request's handler decides what that means (a failed handshake, a
        probe that falls back); an application request gets `RequestFailed`.

        The handler is told through an error object marked `local`, so it can tell our
        failure (a timeout) from the peer's refusal, which means something else to a probe
        (SPEC-NOTES 1.15: a timeout is a legacy server, a modern error is not).
        """
        if entry.handler is not None:
            done = entry.handler(
                rid, None, {"code": code, "message": message, "local": LOCAL_FAILURE}
            )
            if done is not None:
                events.append(done)
        else:
            events.append(RequestFailed(rid, entry.method, code, message))

    def _ended(self, rid: RequestId, entry: Outbound, by: RequestInput | None = None) -> None:
        """One of ours left the outbound table (`by`, when the caller knows already
        how it ended; a response's outcome is moved where it is judged).

        The progress token goes with the request: 2025-03-26 ("Progress") says notifications
        for a completed request are no longer valid, and a late one must find no request to
        be attributed to.

        (Inline in the client's result lane, `ClientConnection._receive_response`: a
        change here needs the same there.)
        """
        if by is not None:
            self._step(entry, "outbound", by)
        if not self._outbound:
            # Back to the shared empty table: a client between calls (and a server whose
            # one question was answered) kept a dict with its grown key table, about
            # 220 bytes of every idle session. The next request makes a new one.
            self._outbound = EMPTY
        if entry.progress_token is not None:
            self._progress_tokens.pop(entry.progress_token, None)
        ended = self._ended_outbound
        if ended is NO_IDS:
            ended = self._ended_outbound = RecentIds(self.limits.max_remembered_ids)
        ended.add(rid)
        if entry.logical != rid:  # a 2026-07-28 retry, under a wire id of its own
            self._retry_ended(entry.logical)

    def _ended_ids(self, direction: Literal["inbound", "outbound"]) -> RecentIds:
        """The memory of ended ids of that direction, made by the first request to end so."""
        if direction == "inbound":
            ids = self._ended_inbound
            if ids is NO_IDS:
                ids = self._ended_inbound = RecentIds(self.limits.max_remembered_ids)
            return ids
        ids = self._ended_outbound
        if ids is NO_IDS:
            ids = self._ended_outbound = RecentIds(self.limits.max_remembered_ids)
        return ids

    def _retry_ended(self, logical: RequestId) -> None:
        """Role hook: a call retried under another wire id ended (the client forgets
        which id its retry used). A hook called only then, rather than an override of
        `_ended`, so that the common end costs no extra call."""

    # ---- moving along the tables of _state.py

    def _move(self, by: SessionInput) -> None:
        """Move the session; `LocalProtocolError` for a move the table lacks.

        No state is ever assigned: the tables in `_state.py` are the one statement of the
        lifecycle, and the tests walk every input in every state against them.
        """
        self.state = advance(self._role, self.state, by)

    def _step(
        self, entry: Inbound | Outbound | PendingInputs, direction: Direction, by: RequestInput
    ) -> None:
        """Move one request's record; `LocalProtocolError` for a move the table lacks.

        Called once the move is sure to happen (its output queued, nothing left
        to raise), so a refused verb leaves the record as it was.

        The request's own record is moved (not a table keyed by state) so a lookup by id is
        all the dispatch costs; the tables in `_state.py` only say which moves exist.
        """
        entry.state = advance_request(self._role, direction, entry.state, by)

    # ---- role hooks

    def _accept_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        raise NotImplementedError

    def _accept_notification(
        self, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        raise NotImplementedError

    def _finish_result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        return result

    def _encode_result(self, request_id: RequestId, method: str, result: dict[str, Any]) -> bytes:
        """A checked result's bytes, finished by the role (`_finish_result`); the
        server encodes what every 2026-07-28 result ends with once."""
        return jr.encode_result(request_id, self._finish_result(method, result))

    def _check_result(
        self, request_id: RequestId, entry: Inbound, result: dict[str, Any]
    ) -> dict[str, Any]:
        """Role hook: the rules a result to this request must follow (tasks)."""
        return result

    def _observe_result(self, rid: RequestId, entry: Outbound, result: dict[str, Any]) -> None:
        """Role hook: a valid result to one of our requests arrived (task bookkeeping)."""

    def _prepare_request(
        self, spec: MethodSpec, params: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        return params

    def _sending_revision(self) -> str:
        """Requests and notifications of ours need an agreed revision: before one is agreed the
        method table has nothing to judge them by.
        """
        if self.state is not State.READY or self.protocol_version is None:
            raise LocalProtocolError(f"connection is not ready (state {self.state})")
        return self.protocol_version

    # ---- helpers for the roles

    def _validate_params(self, spec: MethodSpec, params: dict[str, Any] | None) -> Any:
        """A request's params as its method's model, or `Reject` with -32602
        naming where they are wrong (the role answers the peer with it).

        The message names the path of the problem but never the value (`describe`): a peer's
        value can be megabytes long, and echoing it back would make the error as large as
        the attack.
        """
        if spec.params is None:
            return None
        if params is None:
            if spec.params_required:
                raise Reject(INVALID_PARAMS, f"{spec.method} requires params")
            params = {}
        validate = _VALIDATORS.get(spec.params) or validator(spec.params)
        try:
            return validate(params)
        except pydantic.ValidationError as exc:
            raise Reject(
                INVALID_PARAMS, f"Invalid params for {spec.method}: {describe(exc)}"
            ) from None

    def _track_inbound(
        self,
        rid: RequestId,
        method: str,
        meta: Any,
        log_level: str | None,
        capabilities: dict[str, Any] | None = None,
        params: Any = None,
    ) -> int | str | None:
        """Enter a peer's request in the in-flight table (OPEN) with what answering
        it needs: its progress token (only a string or an integer: anything else
        could not be echoed back), the log level and capabilities in force.

        The progress token is kept only when it is a string or an integer, because it is
        echoed back in every progress notification and must be a valid one there.
        """
        token = meta.get("progressToken") if type(meta) is dict else None
        if token is not None and not jr.is_request_id(token):
            token = None
        inbound = self._inbound
        if inbound is EMPTY:
            inbound = self._inbound = {}
        inbound[rid] = Inbound(method, token, log_level, capabilities, params)
        return token

    # ----------------------------------------------------------------- output

    def _queue(
        self,
        payload: bytes,
        kind: Literal["request", "notification", "result", "error"],
        method: str | None,
        request_id: RequestId | None,
        related: RequestId | None,
        *,
        automatic: bool = False,
        params: Any = None,
    ) -> None:
        """Append one message to the output buffer, within `Limits.output_limit`.

        When the buffer is full a verb raises (the application can drain and call
        again), but output the engine makes by itself (`automatic`: an error reply, a
        ping answer) cannot wait: a peer that sends without reading our answers
        would grow the buffer without bound, so that ends the connection instead.

        The bound is on bytes, not messages, because memory is what it protects; the size is
        checked before the append, so the buffer never goes over its limit even by one
        message.
        """
        size = len(payload)
        if self._outgoing_bytes + size > self._output_limit:
            if automatic:
                raise Fatal(
                    RemoteProtocolError("peer is not reading what we send", http_status=503)
                )
            raise LocalProtocolError("output buffer is full; drain data_to_send() first")
        out = self._outgoing
        if out is NO_ITEMS:  # (the form follows the last drain: see `Queued`)
            self._outgoing = [_new_outgoing(payload, kind, method, request_id, related, params)]
        elif out is NO_QUEUED:
            self._outgoing = [(payload, kind, method, request_id, related, params)]
        elif not out or type(out[0]) is tuple:
            out.append((payload, kind, method, request_id, related, params))
        else:
            out.append(_new_outgoing(payload, kind, method, request_id, related, params))
        self._outgoing_bytes += size
        self.output_pending = True

    def _reply_error(
        self,
        rid: RequestId | None,
        code: int,
        message: str,
        events: list[Event],
        data: Any = None,
    ) -> None:
        # 2025-11-25 and 2026-07-28 type the id of an error as optional but never null:
        # an error that names no request leaves it out there; older revisions write null.
        """Answer a message the engine refuses by itself, and report it
        (`MessageRejected`), so the application can log what the peer sent.
        """
        # (see `_ID_OPTIONAL_ON_ERRORS`): a 2025-11-25 client validating against its schema
        # would refuse `"id": null`, an older one would refuse a missing id.
        omit_id = rid is None and self.protocol_version in _ID_OPTIONAL_ON_ERRORS
        self._queue(
            jr.encode_error(rid, jr.error_object(code, message, data), omit_id=omit_id),
            "error",
            None,
            rid,
            rid,
            automatic=True,
        )
        events.append(MessageRejected(rid, code, message))

    def _reply_result(self, rid: RequestId, result: dict[str, Any], method: str) -> None:
        """Automatic, as a ping answer is: the engine answers by itself, so a peer that does
        not read cannot make us buffer without bound.
        """
        self._queue(jr.encode_result(rid, result), "result", method, rid, rid, automatic=True)

    def data_to_send(self) -> bytes:
        """Everything queued, newline-delimited, for a byte-stream transport.

        One join for the whole buffer: a burst of small answers costs one allocation, and
        the transport writes it in one call.
        """
        out = self._outgoing
        if not out:
            return b""
        data: bytes
        if type(out[0]) is not tuple:  # (records, or `Queued` entries: see there)
            data = b"\n".join([m.payload for m in out]) + b"\n"
        elif len(out) == 1:
            data = out[0][0] + b"\n"
        else:
            data = b"\n".join([m[0] for m in out]) + b"\n"
        out.clear()
        self._outgoing_bytes = 0
        self.output_pending = False
        return data

    def messages_to_send(self) -> list[OutgoingMessage]:
        """Everything queued, one entry per message, for transports that frame messages.

        The list is handed over, not copied: the caller owns it from now on, and the engine
        starts a new one. (Messages queued while the buffer was a byte stream's are
        `Queued` tuples: made records here, once.)
        """
        out = self._outgoing
        if not out:
            return []
        self._outgoing = NO_ITEMS
        self._outgoing_bytes = 0
        self.output_pending = False
        if type(out[0]) is tuple:
            return [_new_outgoing(*m) for m in out]
        return out

    def payloads_to_send(self) -> list[bytes]:
        """Everything queued, one bytes object per message (no newline), for transports
        that frame messages and need nothing but their bytes (the in-process link).

        `messages_to_send` without the records: what is queued next takes the cheap tuple
        form (see `Queued`), where after `messages_to_send` each message is a record made
        for it, two per round trip that a transport reading only `payload` threw away.
        Like it, the buffer is left as a shared empty list (`NO_QUEUED`), not a list of
        this connection's own: an idle connection holds none.
        """
        out = self._outgoing
        if not out:
            return []
        payloads = [m[0] for m in out] if type(out[0]) is tuple else [m.payload for m in out]
        self._outgoing = NO_QUEUED
        self._outgoing_bytes = 0
        self.output_pending = False
        return payloads

    def _check_sending(self) -> None:
        """A verb that starts something of ours after the end is the application's
        mistake, unlike the answering verbs, which become no-ops (see `State`).

        The asymmetry is deliberate: answering a request that ended is a race the
        application cannot avoid (a disconnect can come at any moment), while starting
        something new on a closed connection is a mistake it can.
        """
        if self.state in _ENDED:
            raise LocalProtocolError(f"connection is {self.state}")

    def _mint_id(self, n: int) -> RequestId:
        """The id our `n`th request goes out with (see `_id_tag`).

        Tagged ids let processes behind one URL tell their own answers apart (see
        `mcp_core.http.tag_request_ids`); a plain connection uses bare integers, the
        shortest ids JSON can carry.
        """
        tag = self._id_tag
        return n if tag is None else f"{tag}{n}"

    def send_request(
        self,
        method: str,
        params: Any = None,
        deadline: float | None = None,
        progress: bool = False,
        related_request_id: RequestId | None = None,
    ) -> RequestId:
        """Queue a request; returns its id.

        `deadline` is a time in the caller's clock after which `tick` fails the
        request (and tells the peer). `progress=True` asks the peer for progress
        notifications, which arrive as `ProgressReceived` events. (All may be passed by
        position too: an adapter sends every request through here, and CPython matches
        a keyword by name; by keyword they read better elsewhere.)

        Our request is entered in the table only after its bytes are queued: a full buffer
        raises with nothing recorded, so the application can drain and retry with no ghost
        request waiting for an answer that will never come.
        """
        revision = self.protocol_version
        # `_check_sending` and `_sending_revision`, inline for a ready connection (their
        # errors, in their order, otherwise).
        if self.state is not State.READY or revision is None:
            self._check_sending()
            revision = self._sending_revision()
        spec = SPECS.get((self._role, method, revision))
        if spec is None or not spec.is_request:
            raise LocalProtocolError(
                f"{method!r} is not a {self._role} request in revision {revision}"
            )
        # A client's calls waiting on its answers to a server's questions are in
        # flight too: their retry must find room.
        if len(self._outbound) + len(self._pending_inputs) >= self.limits.max_outbound_in_flight:
            raise LocalProtocolError("too many requests in flight")
        wire = dict(params) if type(params) is dict else to_wire(params)  # (the dict first)
        if wire is not None and type(wire) is not dict and not isinstance(wire, dict):
            raise LocalProtocolError("params must be a model or a mapping")
        # The role's hook may refuse (an undeclared capability) or rewrite the params (the
        # 2026-07-28 envelope); both happen before an id is minted, so a refusal costs no
        # id.
        wire = self._prepare_request(spec, wire)
        n = self._next_id
        tag = self._id_tag
        rid = n if tag is None else f"{tag}{n}"  # (`_mint_id`, inline)
        self._next_id = n + 1
        token: RequestId | None = None
        # The token is the request's own id: unique among our active requests by
        # construction, which 2025-03-26 ("Progress") requires of a token.
        if progress:
            token = rid
            wire = dict(wire or {})
            wire["_meta"] = {**(wire.get("_meta") or {}), "progressToken": token}
        stamp = self._stamp
        if stamp is not None and wire is not None and wire.get("_meta") is stamp[0]:
            # The role stamped its shared envelope as the last member (only then is it
            # that very object): encoded once, spliced in after the rest.
            del wire["_meta"]
            try:
                payload = jr.encode_request_ending(rid, method, wire, stamp[1])
            finally:
                wire["_meta"] = stamp[0]
            if payload is None:
                payload = jr.encode_request(rid, method, wire)
        else:
            payload = jr.encode_request(rid, method, wire)
        self._queue(
            payload,
            "request",
            method,
            rid,
            related_request_id,
            params=wire,  # `OutgoingMessage.params`: the HTTP client mirrors from it
        )
        self._register_outbound(
            rid,
            Outbound(
                method,
                deadline,
                token,
                None,
                related_request_id,
                rid,
                # Kept for a 2026-07-28 retry, and for a 2025-11-25 task-augmented
                # request, whose answer is a CreateTaskResult (see `_accept_result`).
                # (`"task" in wire` first: no call for the plain request, the common case)
                wire
                if spec.input_required or (wire is not None and "task" in wire and wants_task(wire))
                else None,
            ),
        )
        return rid

    def _register_outbound(self, rid: RequestId, entry: Outbound) -> None:
        """Enter one of ours in the in-flight table (SENT) with its deadline and
        progress token; a new deadline bumps the epoch `deadline_moved` reads.

        The epoch is bumped for every new deadline, not only earlier ones: comparing
        deadlines here would cost a heap peek per request, and an early wake-up is cheap.
        """
        outbound = self._outbound
        if outbound is EMPTY:
            outbound = self._outbound = {}
        outbound[rid] = entry
        if entry.deadline is not None:
            deadlines = self._deadlines
            if deadlines is None:
                deadlines = self._deadlines = DeadlineHeap()
            deadlines.push(entry.deadline, rid, self._outbound)
            self.deadline_epoch += 1
        if entry.progress_token is not None:
            tokens = self._progress_tokens
            if tokens is EMPTY:
                tokens = self._progress_tokens = {}
            tokens[entry.progress_token] = entry.logical

    def _send_internal(
        self,
        method: str,
        params: dict[str, Any] | None,
        handler: Callable[[RequestId, dict[str, Any] | None, dict[str, Any] | None], None],
        deadline: float | None = None,
    ) -> None:
        """A request of the engine's own (the handshake, the probe): the
        application's in-flight limit does not apply, and its answer goes to
        `handler`, not to an event.

        Exempt from the application's in-flight limit, because the handshake must always be
        possible: a client at its limit would otherwise never finish connecting.
        """
        rid = self._mint_id(self._next_id)
        self._next_id += 1
        self._queue(jr.encode_request(rid, method, params), "request", method, rid, None)
        self._register_outbound(rid, Outbound(method, deadline, None, handler, None, rid))

    def send_notification(
        self, method: str, params: Any = None, *, related_request_id: RequestId | None = None
    ) -> None:
        """Queue a notification the current revision allows this role to send.

        Notifications are fire and forget (JSON-RPC 2.0 section 4.1): nothing is tracked, so
        nothing here needs settling when the connection ends.
        """
        self._check_sending()
        revision = self._sending_revision()
        spec = lookup(self._role, method, revision)
        if spec is None or spec.is_request:
            raise LocalProtocolError(
                f"{method!r} is not a {self._role} notification in revision {revision}"
            )
        self._check_notification_allowed(method)
        wire = to_wire(params)
        self._queue(
            jr.encode_notification(method, wire), "notification", method, None, related_request_id
        )

    def _check_notification_allowed(self, method: str) -> None:
        """Role hook: refuse notifications the negotiated capabilities do not cover."""

    #: The methods whose ending the role wants to hear of (`_inbound_ended`): the hook is
    #: called only for these, so an answer to any other request (nearly every one: only a
    #: legacy server's `resources/subscribe` is watched) makes no call only to return.
    _ENDINGS_WATCHED: frozenset[str] = frozenset()

    def _inbound_ended(self, rid: RequestId, entry: Inbound, *, answered: bool) -> None:
        """Role hook: a peer's request left the in-flight table, with a result
        (`answered`) or without one (an error, the peer's cancel, an abandoned stream).
        Called only for a method in `_ENDINGS_WATCHED`."""

    def _take_inbound(self, rid: RequestId) -> Inbound | None:
        """The peer's request an answering verb names. None for one that ended (the
        verb is then a no-op, since cancels race with answers); an id never seen is
        the application's bug, and raises.

        The difference matters because of a race the spec itself names (2025-03-26,
        "Cancellation": the cancel may arrive after the response is sent): an answer to a
        request the peer cancelled is expected and dropped, while an id that never existed
        is the application answering the wrong thing (RELIABILITY.md rule 6, and
        python-sdk#2416, where the race crashed a task group).
        """
        entry = self._inbound.get(rid)
        if entry is None:
            if rid in self._ended_inbound:
                return None  # cancelled by the peer or abandoned: drop quietly
            raise LocalProtocolError(f"no request {rid!r} from the peer is waiting for an answer")
        return entry

    def send_result(self, request_id: RequestId, result: Any) -> bool:
        """Answer a peer's request.

        False, with nothing sent, when the request no longer waits for an answer:
        the peer cancelled it, or the connection closed (it is then listed in
        `ConnectionClosed.abandoned_inbound`).

        The result is checked and finished (the role's rules) before the record changes, so
        a refused result (LocalProtocolError) leaves the request waiting for a valid one.
        """
        if self.state in _ENDED:
            return False
        wire = dict(result) if type(result) is dict else to_wire(result)  # (the dict first)
        if wire is None:
            wire = {}
        elif type(wire) is not dict and not isinstance(wire, dict):
            raise LocalProtocolError("a result must be a model or a mapping")
        # A client's answer to a question inside a 2026-07-28 InputRequiredResult is not a
        # JSON-RPC response (servers send no requests then): it is collected for the retry.
        if self._collects_answers and self._answers_input(request_id, wire, None):
            return True
        # (`_take_inbound` only for an id not waiting: it tells a late one from a bug)
        entry = self._inbound.get(request_id) or self._take_inbound(request_id)
        if entry is None:
            return False
        wire = self._check_result(request_id, entry, wire)  # may refuse: before any change
        self._end_inbound(
            request_id,
            entry,
            _RESULT,
            self._encode_result(request_id, entry.method, wire),
            "result",
        )
        return True

    def _end_inbound(
        self,
        request_id: RequestId,
        entry: Inbound,
        by: RequestInput,
        payload: bytes,
        kind: Literal["result", "error"],
    ) -> None:
        """Answer a peer's request for good: the one way a request of theirs ends
        by our hand (a result, an error, an InputRequiredResult, a listen's end).

        The order matters for a refused call to change nothing: the move is
        looked up and the room checked before the round's questions (legacy
        request_input) are withdrawn and the answer queued.
        """
        target = advance_request(self._role, "inbound", entry.state, by)
        if self._outgoing_bytes + len(payload) > self._output_limit:
            raise LocalProtocolError("output buffer is full; drain data_to_send() first")
        if self._rounds:
            self._withdraw(request_id, "answered without it")
        self._queue_ending(request_id, entry, payload, kind, target)
        if entry.method in self._ENDINGS_WATCHED:
            self._inbound_ended(request_id, entry, answered=by is _RESULT)

    def _queue_ending(
        self,
        request_id: RequestId,
        entry: Inbound,
        payload: bytes,
        kind: Literal["result", "error"],
        target: RequestState,
    ) -> None:
        """Queue the answer to a peer's request and forget the request: `_queue`, the
        record's move to `target`, and the id remembered as ended.

        Called once every check has passed (the room in the buffer, the move looked
        up, a round of questions withdrawn): nothing here can fail. `_end_inbound` and
        the server's answer lanes (`send_result`'s and `send_text_result`'s) end here,
        so how an answer is queued and a request forgotten is written once.
        """
        out = self._outgoing
        if out is NO_ITEMS:  # (the form follows the last drain: see `Queued`)
            self._outgoing = [_new_outgoing(payload, kind, entry.method, request_id, request_id)]
        elif out is NO_QUEUED:
            self._outgoing = [(payload, kind, entry.method, request_id, request_id, None)]
        elif not out or type(out[0]) is tuple:
            out.append((payload, kind, entry.method, request_id, request_id, None))
        else:
            out.append(_new_outgoing(payload, kind, entry.method, request_id, request_id))
        self._outgoing_bytes += len(payload)
        self.output_pending = True
        entry.state = target
        inbound = self._inbound
        del inbound[request_id]
        if not inbound:
            # Back to the shared empty table: a server between requests kept a dict with
            # its grown key table, about 220 bytes of every idle session.
            self._inbound = EMPTY
        ended = self._ended_inbound
        if ended is NO_IDS:  # (`_ended_ids` and `add`, inline: this runs per answer)
            self._ended_inbound = RecentIds(self.limits.max_remembered_ids, request_id)
        else:
            ended.add(request_id)

    def send_error(self, request_id: RequestId, code: int, message: str, data: Any = None) -> bool:
        """Answer a peer's request with an error. False as for `send_result`.

        The code is checked against the revision before anything is queued, so a code the
        spec forbids never reaches the wire from our side.
        """
        if self.state in _ENDED:
            return False
        self._check_error_code(code)
        if self._collects_answers and self._answers_input(request_id, None, (code, message, data)):
            return True
        entry = self._take_inbound(request_id)
        if entry is None:
            return False
        payload = jr.encode_error(request_id, jr.error_object(code, message, to_wire(data)))
        self._end_inbound(request_id, entry, RequestInput.ERROR, payload, "error")
        return True

    #: Whether `_answers_input` can ever say True (a client's); read before calling it, so
    #: a server's every answer does not make a call only to learn it cannot.
    _collects_answers = False

    def _answers_input(
        self,
        request_id: RequestId,
        result: dict[str, Any] | None,
        error: tuple[int, str, Any] | None,
    ) -> bool:
        """Client hook: answers to 2026-07-28 input requests are collected, not sent."""
        return False

    def _withdraw(self, request_id: RequestId, reason: str) -> None:
        """Server hook: the request ended while its questions were out; cancel them."""

    def _check_error_code(self, code: int) -> None:
        """Refuse codes this revision forbids, so a local bug never reaches the wire.

        2026-07-28 (SPEC-NOTES 1.13) reserves -32020..-32099 for the spec, retires -32002
        (resource not found, now -32602) and -32042 (URL elicitation required, a 2025-11-25
        code only). Sending one of them would make the peer read a protocol meaning into an
        application error.
        """
        if type(code) is not int:
            raise LocalProtocolError("error codes are integers")
        if -32099 <= code <= -32020 and code not in _SPEC_CODES:
            raise LocalProtocolError(f"error code {code} is reserved for the MCP specification")
        version = self.protocol_version
        if code == URL_ELICITATION_REQUIRED and version != V2025_11_25:
            raise LocalProtocolError("error -32042 exists only in revision 2025-11-25")
        if code == RESOURCE_NOT_FOUND and self.era is Era.MODERN:
            raise LocalProtocolError("2026-07-28 reports a missing resource as -32602")

    def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Report progress on a peer's request; False when the peer did not ask for it,
        or the request no longer waits (cancelled, or the connection closed).

        2025-03-26 ("Progress"): only a request that carried a progress token may get
        progress, and the value MUST increase; `message` arrived in 2025-03-26, so a
        2024-11-05 session never gets it. Listen streams never carry progress (2026-07-28,
        SPEC-NOTES 1.8).
        """
        if self.state in _ENDED:
            return False
        entry = self._take_inbound(request_id)
        if entry is None or entry.progress_token is None or entry.method == "subscriptions/listen":
            return False  # not asked for; and a listen stream never carries progress
        if entry.last_progress is not None and not progress > entry.last_progress:
            raise LocalProtocolError("progress must increase with each notification")
        entry.last_progress = progress
        params: dict[str, Any] = {"progressToken": entry.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.protocol_version != V2024_11_05:
            params["message"] = message
        self._queue(
            jr.encode_notification("notifications/progress", params),
            "notification",
            "notifications/progress",
            None,
            request_id,
        )
        return True

    def cancel_request(self, request_id: RequestId, reason: str | None = None) -> None:
        """Give up on one of our requests and tell the peer; a late answer is ignored.

        2025-03-26 ("Cancellation"): `initialize` MUST NOT be cancelled. The cancel is
        queued before the record leaves the table, so a full buffer raises with the request
        still tracked.
        """
        self._check_sending()
        if self._drop_pending_inputs(request_id):
            return
        wire_id = self._wire_id(request_id)
        entry = self._outbound.get(wire_id)
        if entry is None:
            if wire_id in self._ended_outbound:
                return
            raise LocalProtocolError(f"no request {request_id!r} of ours is in flight")
        if entry.method == "initialize":
            raise LocalProtocolError("initialize cannot be cancelled")
        self._queue_cancel(wire_id, reason)
        del self._outbound[wire_id]
        self._ended(wire_id, entry, RequestInput.CANCEL)

    def _wire_id(self, request_id: RequestId) -> RequestId:
        """Client hook: the id a retried call currently travels under."""
        return request_id

    def _drop_pending_inputs(self, request_id: RequestId) -> bool:
        """Client hook: cancel a call that waits on the application's input answers."""
        return False

    def _queue_cancel(self, request_id: RequestId, reason: str | None) -> None:
        """Related to the request it cancels, so that HTTP puts it on that request's stream;
        not automatic, because a cancel is a courtesy the callers may skip when the buffer
        is full.
        """
        params: dict[str, Any] = {"requestId": request_id}
        if reason is not None:
            params["reason"] = reason
        self._queue(
            jr.encode_notification("notifications/cancelled", params),
            "notification",
            "notifications/cancelled",
            None,
            request_id,
        )

    # ------------------------------------------------------------------ time

    def next_deadline(self) -> float | None:
        """The earliest deadline of a request in flight, for the caller's timer.

        Reading it also records the epoch, which is what `deadline_moved` compares: the
        caller now knows the latest deadline, so nothing set before counts as moved.
        """
        self._armed_epoch = self.deadline_epoch
        deadlines = self._deadlines
        # (no deadline at all, the common case without timeouts: no call)
        return deadlines.next(self._outbound) if deadlines is not None and deadlines.heap else None

    @property
    def deadline_moved(self) -> bool:
        """Whether a deadline was set since `next_deadline()` was last read.

        A loop arms its timer from `next_deadline()`; a `send_request(deadline=...)`
        (or `request_input(deadline=...)`, or a client answer that fails a call)
        made outside event handling, from a callback or another task, may need an
        earlier wake-up. Ask this after such a call and re-arm from
        `next_deadline()` when it is True. Deadlines that go away never need it: an
        early wake-up finds nothing due and `tick()` returns no events.
        """
        return self.deadline_epoch != self._armed_epoch

    def tick(self, now: float) -> list[Event]:
        """Fail every request whose deadline is at or before `now` (and tell the peer)."""
        events: list[Event] = []
        if self.state in _ENDED:
            return events
        # A request fails at its deadline whatever progress came: 2025-03-26 ("Timeouts")
        # asks for a maximum timeout regardless of progress notifications.
        deadlines = self._deadlines
        if deadlines is None:  # no deadline was ever set: nothing can be due
            return events
        for rid in deadlines.pop_expired(now, self._outbound):
            entry = self._outbound.pop(rid)
            self._ended(rid, entry, RequestInput.TIMEOUT)
            try:
                # Tell the peer (not for internal requests: initialize cannot be cancelled,
                # and the probe may be talking to a server that knows no such notification;
                # a server's questions, which belong to a request, are told).
                # A full output buffer only costs the courtesy, never the terminal event.
                if entry.handler is None or entry.related is not None:
                    with contextlib.suppress(LocalProtocolError):
                        self._queue_cancel(rid, "timed out")
                self._resolve_failure(
                    entry.logical, entry, REQUEST_TIMEOUT, "Request timed out", events
                )
            except Fatal as fatal:
                events.extend(self._settle(fatal.error.message, fatal.error))
                break
        return events

    # --------------------------------------------------------------- closing

    def close(
        self, reason: str = "closed locally", *, error: RemoteProtocolError | None = None
    ) -> list[Event]:
        """End the connection: every request in flight either way is settled.

        `error` marks a failure found by the layer around this connection (a
        broken WebSocket frame, say): the connection then ends in the ERROR state
        and `ConnectionClosed.error` carries it.

        Closing twice is harmless (nothing left to settle), because a transport may see both
        an EOF and an error for one connection.
        """
        if self.state in _ENDED:
            return []  # nothing left to settle: the table has no move out of an end
        return self._settle(reason, error)

    def abandon_request(self, request_id: RequestId, reason: str | None = None) -> list[Event]:
        """The transport lost the stream carrying a peer's request (HTTP disconnect).

        In 2026-07-28 a closed response stream *is* the cancellation, so the
        application is told as if the peer had cancelled.

        Legacy transports never call this for a cancel: a dropped connection is not a
        cancellation there (2025-03-26 transports), and the HTTP server keeps the stream for
        resumption instead.
        """
        inbound = self._inbound
        entry = inbound.pop(request_id, None)
        if entry is None:
            return []
        if not inbound:
            self._inbound = EMPTY  # (see `_end_inbound`)
        self._step(entry, "inbound", RequestInput.ABANDON)
        self._ended_ids("inbound").add(request_id)
        if entry.method in self._ENDINGS_WATCHED:
            self._inbound_ended(request_id, entry, answered=False)
        if self._rounds:
            self._withdraw(request_id, "the request's stream closed")
        return [RequestCancelled(request_id, reason or "stream closed")]

    def fail_request(
        self,
        request_id: RequestId,
        code: int = CONNECTION_CLOSED,
        message: str = "Connection closed",
    ) -> list[Event]:
        """The transport lost the answer to one of our requests (`request_id` is the
        id it went out under): settle it locally with `RequestFailed`.

        For HTTP streams that broke and cannot be resumed, a 202 to a request, or a
        status with no JSON-RPC error in its body. Nothing is sent to the peer;
        unknown or already settled ids are ignored. An internal request (the
        handshake, the discovery probe) takes its failure path instead, as on a
        timeout.

        A 202 answer to a request, in particular, is a legacy server that lost it; without
        this the caller would wait until its deadline (or forever, with none) for an answer
        the transport knows will not come (python-sdk#332: pending requests hung when the
        server died).
        """
        entry = self._outbound.pop(request_id, None)
        if entry is None:
            return []
        self._ended(request_id, entry, RequestInput.LOST)
        events: list[Event] = []
        try:
            self._resolve_failure(entry.logical, entry, code, message, events)
        except Fatal as fatal:
            events.extend(self._settle(fatal.error.message, fatal.error))
        return events

    def _settle(self, reason: str, error: RemoteProtocolError | None) -> list[Event]:
        """End the connection: every request either way leaves its table, in the
        order the events promise (ours failed, then the roles' own, then the end).

        The order is the promise the events make (docs/embedding.md, "Disconnects"): our
        requests fail first, so an application waiting on one is woken before it learns that
        the connection ended, then the roles' own, then ConnectionClosed listing the peer's
        requests that will never be answered. Moving the session first means a handler that
        reacts to an event by sending finds the connection ended, not half open
        (RELIABILITY.md rule 7).
        """
        events: list[Event] = []
        self._move(SessionInput.FAIL if error is not None else SessionInput.END)
        outbound = self._outbound
        self._outbound = EMPTY
        for rid, entry in outbound.items():
            self._step(entry, "outbound", RequestInput.CLOSE)
            self._ended_ids("outbound").add(rid)
            if entry.handler is None:
                events.append(
                    RequestFailed(
                        entry.logical, entry.method, CONNECTION_CLOSED, "Connection closed"
                    )
                )
        events.extend(self._settle_local())
        self._progress_tokens.clear()
        abandoned = tuple(self._inbound)
        for theirs in self._inbound.values():
            self._step(theirs, "inbound", RequestInput.CLOSE)
        self._inbound = EMPTY
        for rid in abandoned:
            self._ended_ids("inbound").add(rid)
        events.append(ConnectionClosed(reason, abandoned, error))
        return events

    def _settle_local(self) -> list[Event]:
        """Role hook: what ends with the connection besides the requests on the wire
        (the client's calls waiting on input answers, the server's open questions)."""
        raise NotImplementedError

    # ------------------------------------------------------------ inspection

    def awaiting(self, request_id: RequestId) -> bool:
        """Whether our request that went out under `request_id` still waits for an answer.

        By wire id: the HTTP client asks it after feeding a response, to learn which of its
        streams got their answer without parsing the message again.
        """
        return request_id in self._outbound

    @property
    def requests_in_flight(self) -> tuple[int, int]:
        """(ours waiting on the peer, the peer's waiting on us).

        For back-pressure: an adapter can stop reading while the peer has many requests
        waiting on it.
        """
        return len(self._outbound), len(self._inbound)

    def check_invariants(self) -> None:
        """Assert the engine's internal consistency (for tests and fuzzers).

        The tables must agree with each other after any input; the fuzzers call this after
        every step, so a consistency bug shows where it happens instead of as a wrong answer
        much later.
        """
        assert len(self._inbound) <= self.limits.max_inbound_in_flight
        assert len(self._outbound) <= self.limits.max_outbound_in_flight
        assert self._outgoing_bytes <= self.limits.output_limit
        queued = self._outgoing
        forms = {type(m) for m in queued}
        assert forms <= {tuple} or forms == {OutgoingMessage}  # one form (see `Queued`)
        assert self._outgoing_bytes == sum(
            len(m[0] if type(m) is tuple else m.payload) for m in queued
        )
        assert self.output_pending is bool(queued)
        assert self._lines is None or self._lines.pending <= self.limits.max_message_bytes
        logical_in_flight = {entry.logical for entry in self._outbound.values()}
        for token, rid in self._progress_tokens.items():
            assert rid in logical_in_flight or self._token_outlives_request(token, rid)
        if self.state in _ENDED:
            assert not self._outbound and not self._inbound
        # The records agree with the tables they are in (see `_state.py`).
        assert all(ours.state is RequestState.SENT for ours in self._outbound.values())
        for rid, theirs in self._inbound.items():
            asking = theirs.state is RequestState.ASKING
            assert asking == (rid in self._rounds)
            assert asking or theirs.state is RequestState.OPEN

    def _token_outlives_request(self, token: int | str, request_id: RequestId) -> bool:
        """Role hook for `check_invariants`: whether `token` may still route progress to
        `request_id` although that request is no longer in flight. Never on the base: a
        token ends with its request."""
        return False
