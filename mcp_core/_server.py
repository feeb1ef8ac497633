"""`ServerConnection`: the server side of one MCP connection, either era.

The first request decides the era: `initialize` starts a legacy session; a
request carrying the 2026-07-28 `_meta` envelope makes the stream modern, and
from then on every request is judged on its own envelope.

Asking the client is one verb in both eras, `request_input`: questions become
server-to-client requests on a legacy session and an `InputRequiredResult` on
2026-07-28, and the answers come back as one `InputReceived`, judged against the
questions (sealed state, form schemas). The lower-level verbs it is built from
stay public: `send_request` (legacy) and `send_input_required` (2026-07-28),
whose retry arrives as an ordinary `RequestReceived` carrying the answers.
"""

from __future__ import annotations

import contextlib
import json
import marshal
from collections.abc import Callable, Mapping
from typing import Any, Final

import pydantic
from pydantic_core import PydanticSerializationError, to_json

from . import _jsonrpc as jr
from ._base import (
    _ENDED,
    LOCAL_FAILURE,
    LOG_RANK,
    Reject,
    RequestId,
    State,
    _Connection,
    capability_problem,
    describe,
    has_capability,
    json_kind,
    validator,
)
from ._config import ServerConfig, to_wire
from ._errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_BUSY,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalProtocolError,
)
from ._events import (
    ClientInitialized,
    Event,
    InputAnswer,
    InputReceived,
    MessageRejected,
    NotificationReceived,
    RequestContext,
    RequestReceived,
    RequestStateRejected,
    SessionStarted,
    _NewRequestContext,
    _NewRequestReceived,
    new_request_context,
    new_request_received,
)
from ._jsonrpc import _RESULT_ID, _STRUCTURED, _TEXT_CONTENT
from ._request_state import INVALID_REQUEST_STATE_MESSAGE, RequestStateError
from ._requests import EMPTY, Inbound, Outbound
from ._session_snapshot import SessionSnapshot, apply_snapshot, take_snapshot
from ._state import (
    RequestInput,
    RequestState,
    SessionInput,
    SessionState,
    advance,
    advance_request,
    classify_era,
    follows,
    follows_request,
)
from ._tasks import (
    LEGACY_AUGMENTABLE,
    MODERN_TASK_METHODS,
    MODERN_TASK_REQUESTS,
    NO_TASKS,
    TASKS_EXTENSION,
    LiveTasks,
    extension_declared,
    missing_extension,
    related_task_meta,
    terminal_status,
    wants_task,
    with_related_task,
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
    V2025_06_18,
    Era,
    MethodSpec,
    Role,
    lookup,
)

# What an answer to each kind of input request must validate as.
# Keyed by the only three methods an `InputRequiredResult` may carry (SEP-2322, 2026-07-28
# `basic/patterns/mrtr`), which are also the three a legacy server asks with: the table
# doubles as the check that a question is one of them.
INPUT_RESULT_TYPES: Final = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}

# Enum members read through their class on every message: on CPython 3.11 `EnumType`
# has a `__getattr__`, which makes each such read about five times a plain one.
_MODERN: Final = Era.MODERN
_LEGACY: Final = Era.LEGACY
# (read on every 2026-07-28 POST: its per-POST connection meets its first envelope)
_ENVELOPE: Final = SessionInput.ENVELOPE
# Where that envelope takes a connection still awaiting its first request, as the table
# says (`_request_lane` moves there without `_move`'s two calls: see there).
_AWAITING_FIRST: Final = SessionState.AWAITING_FIRST
_ENVELOPE_TAKES_TO: Final = advance("server", SessionState.AWAITING_FIRST, SessionInput.ENVELOPE)

# Server notifications that need an advertised capability (legacy sessions).
# The spec lets a server send each of these only under the capability that announces it
# (2025-03-26 on: "Servers that declared the listChanged capability SHOULD send..."), and a
# client that did not see the capability may treat the notification as a protocol error.
# Refusing on our side keeps an application's mistake from reaching it.
_NOTIFICATION_CAPABILITY: Final = {
    "notifications/tools/list_changed": "tools.listChanged",
    "notifications/prompts/list_changed": "prompts.listChanged",
    "notifications/resources/list_changed": "resources.listChanged",
    "notifications/resources/updated": "resources.subscribe",
    "notifications/message": "logging",
}

# subscriptions/listen filter field -> (notification method, capability it needs)
# The filter a `subscriptions/listen` names (2026-07-28, SEP-2575 and
# `basic/utilities/subscriptions`): every type is opt-in, and the server MUST NOT send a
# type the client did not ask for, nor one its own capabilities do not cover. The capability
# is the one a legacy session needs for the same notification, so one table serves both eras
# in `notify_subscribers`.
_LISTEN_FILTER: Final = {
    "toolsListChanged": ("notifications/tools/list_changed", "tools.listChanged"),
    "promptsListChanged": ("notifications/prompts/list_changed", "prompts.listChanged"),
    "resourcesListChanged": ("notifications/resources/list_changed", "resources.listChanged"),
    "resourceSubscriptions": ("notifications/resources/updated", "resources.subscribe"),
    # The tasks extension (SEP-2663): `notifications/tasks` for the listed task ids,
    # only on a listen request that declared the extension (else -32021).
    "taskIds": ("notifications/tasks", f"extensions.{TASKS_EXTENSION}"),
}


# The client requests whose complete 2026-07-28 result carries caching hints
# (`_finish_result` adds them), read as `METHODS[("client", method)].cacheable` there.
_CACHEABLE: Final = frozenset(
    method for (role, method), spec in METHODS.items() if role == "client" and spec.cacheable
)


# (`object.__new__`, bound once: the lane makes its events without calling a class.)
_new: Final = object.__new__

# The methods whose requests have a step of their own in `_modern_request` and
# `_legacy_request`, which the request lane leaves to them.
_MODERN_OWN_STEPS: Final = frozenset(
    {"initialize", "server/discover", "subscriptions/listen", *MODERN_TASK_REQUESTS}
)
_LEGACY_OWN_STEPS: Final = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)

# For `send_result`'s lane: the move a result makes of a client's open request, looked up
# once (`_end_inbound` looks it up per answer), and the methods whose results the lane
# leaves to the general path: per era, those `_check_result` or `_finish_result` do more
# for than encode (a 2025-11-25 task's bookkeeping; the 2026-07-28 caching hints), and
# those whose ending the role watches (`_ENDINGS_WATCHED`).
_OPEN: Final = RequestState.OPEN
_ANSWERED: Final = advance_request("server", "inbound", RequestState.OPEN, RequestInput.RESULT)
_WATCHED: Final = frozenset({"resources/subscribe"})  # (`ServerConnection._ENDINGS_WATCHED`)
_LEGACY_OFF_LANE: Final = frozenset({"tasks/result", "tasks/get", "tasks/cancel"}) | _WATCHED
_MODERN_OFF_LANE: Final = _CACHEABLE | _WATCHED


class _EnvelopeCache:
    """Validated envelope objects (capabilities, clientInfo), keyed by their JSON bytes.

    A client sends the same capabilities and clientInfo on every 2026-07-28
    request; validating them once instead of per request is most of the
    envelope's cost. The pair is one key (one encoding per request, not two).
    Bounded, and shared by every connection, so the models it hands out must be
    treated as read-only.
    """

    __slots__ = ("_bound", "_cache", "_capabilities", "_info", "_last", "_plain", "_wire")

    def __init__(self, bound: int = 256, capabilities: str = "ClientCapabilities") -> None:
        # `capabilities`: the model of the first of the pair (the client's handshake
        # keeps a cache of its own, of the server's declaration: `_client.py`).
        self._capabilities = validator(capabilities)
        self._info = validator("Implementation")
        # Keyed by the canonical JSON bytes rather than the parsed objects, which are not
        # hashable; two requests with the same declaration produce the same bytes.
        self._cache: dict[bytes, tuple[Any, Any]] = {}
        # The wire form of each capabilities model in `_cache`, by the model's id (each is
        # alive while it is here: both are cleared together). A legacy session kept its
        # own dump of the shared model, a few hundred bytes of every idle one.
        self._wire: dict[int, dict[str, Any]] = {}
        self._bound = bound
        # The last declaration seen, as a private copy (caps, info, models, leaves), when
        # it holds no float (see `_typed_leaves`); else None. One slot: a bound that needs
        # no bookkeeping, and enough for the usual case of one client (or many alike)
        # declaring the same on every request. `_plain` gives, for each cached key, the
        # paths and types of its integer and boolean leaves, or None when it may not take
        # the slot (found once, when the key is validated).
        self._last: tuple[Any, Any, tuple[Any, Any], _Leaves] | None = None
        self._plain: dict[bytes, _Leaves | None] = {}

    def models(self, caps: Any, info: Any) -> tuple[Any, Any]:
        """The validated (capabilities, info) models of a declaration, shared and
        read-only; `pydantic.ValidationError` for a bad one. Also the instance's
        `__call__`; named, a hot path's call is a plain method call, without the
        slot wrapper an instance call goes through."""
        # The slot first: two dict comparisons in C, against `marshal`'s encoding and a
        # hash of its bytes (about 1.2k instructions instead of 5.7k per 2026-07-28
        # request). Python's `==` is not exact about types (1 == 1.0 == True): a string,
        # object, array or null equals only a value of its own kind, but a number or a
        # boolean may equal one of another. So the slot holds no declaration with a float,
        # and remembers where its integers and booleans are: a value equal to the copy
        # has the same members and lengths, so each of those paths leads to a leaf, which
        # must be of the copy's exact type. Whatever passes is the same JSON value (member
        # order aside, which JSON does not give a meaning), so it gets the same verdict.
        # (The SDKs' usual `roots.listChanged: true` is such a declaration.) The copy is
        # private, so the application changing the request's `_meta` cannot change what
        # the slot compares against.
        last = self._last
        if (
            last is not None
            and caps == last[0]
            and info == last[1]
            and (not last[3] or _same_leaf_types(caps, info, last[3]))
        ):
            return last[2]
        # The key is `marshal`'s version 2 form of the pair: a parsed JSON value is made
        # of dicts, lists, strings, ints, floats, bools and None, each of which it writes
        # with its type and in full (no back-references, which version 3 added), so the
        # key names one value exactly (1, 1.0 and true stay apart, as in JSON text), at
        # about two thirds of `to_json`'s cost, per 2026-07-28 request. A value marshal
        # refuses keys by its JSON text; the two never collide (a marshalled tuple starts
        # with `(`, a JSON array with `[`).
        try:
            key = marshal.dumps((caps, info), 2)
        except ValueError:
            key = jr.dumps((caps, info))
            marshalled = False
        else:
            marshalled = True
        found = self._cache.get(key)
        if found is None:
            # Capabilities first: an error names the first bad one, as before.
            found = (self._capabilities(caps), self._info(info) if info is not None else None)
            # Cleared whole rather than evicted one by one: a client rarely changes its
            # declaration, so the cache is nearly always one or two entries, and only a peer
            # sending a new declaration per request (to grow our memory) fills it. Clearing
            # keeps the bound with no bookkeeping on the common path.
            if len(self._cache) >= self._bound:
                self._cache.clear()
                self._wire.clear()
                self._plain.clear()
                self._last = None
            self._cache[key] = found
            self._wire[id(found[0])] = to_wire(found[0]) or {}
            self._plain[key] = _typed_leaves((caps, info))
        leaves = self._plain.get(key) if marshalled else None
        if leaves is not None:
            copy = marshal.loads(key)  # (the pair, decoded afresh: nothing shared)
            self._last = (copy[0], copy[1], found, leaves)
        return found

    __call__ = models

    def capabilities_wire(self, capabilities: Any) -> dict[str, Any]:
        """`to_wire(capabilities) or {}`, shared (so read-only) for a model this cache gave."""
        wire = self._wire.get(id(capabilities))
        return wire if wire is not None else to_wire(capabilities) or {}


# The paths (from the (caps, info) pair) and exact types of a declaration's integer
# and boolean leaves.
_Leaves = tuple[tuple[tuple[int | str, ...], type], ...]


def _typed_leaves(value: Any) -> _Leaves | None:
    """Where a JSON value holds integers and booleans, with their types; None when it
    holds a float (whose `==` is exact about neither type nor sign: 0.0 == -0.0).
    Strings, objects, arrays and nulls need no entry: `==` tells them apart as
    exactly as their JSON text does. Iterative, so a deep declaration costs no
    recursion (it is called only when a declaration is validated, not per request)."""
    found: list[tuple[tuple[int | str, ...], type]] = []
    stack: list[tuple[tuple[int | str, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(((*path, k), v) for k, v in item.items())
        elif kind is list or kind is tuple:
            stack.extend(((*path, i), v) for i, v in enumerate(item))
        elif kind is int or kind is bool:
            found.append((path, kind))
        elif kind is not str and item is not None:
            return None
    return tuple(found)


def _same_leaf_types(caps: Any, info: Any, leaves: _Leaves) -> bool:
    """Whether a declaration equal to the slot's has its integers and booleans where
    the slot's copy has them, of the same types (equality guarantees the paths exist)."""
    pair = (caps, info)
    for path, kind in leaves:
        item: Any = pair
        for step in path:
            item = item[step]
        if type(item) is not kind:
            return False
    return True


# Built on first use, not at import: `validator` pulls in the pydantic models of `types`,
# the slowest import of the package, which a legacy-only server never needs for the
# envelope.
_ENVELOPE_CACHE: _EnvelopeCache | None = None


def _envelope_models(caps: Any, info: Any) -> tuple[Any, Any]:
    """Validation errors are the caller's to turn into -32602: a bad declaration is the peer's
    fault, and must come back as an error naming the envelope, not as a crash.
    """
    return (_ENVELOPE_CACHE or _envelope_cache())(caps, info)


def _envelope_cache() -> _EnvelopeCache:
    """The shared cache, made on first use."""
    global _ENVELOPE_CACHE
    if _ENVELOPE_CACHE is None:
        _ENVELOPE_CACHE = _EnvelopeCache()
    return _ENVELOPE_CACHE


def shared_declaration(
    cache: Callable[[Any, Any], tuple[Any, Any]],
    raw: Mapping[str, Any] | None,
    info_key: str,
    own: tuple[Any, Any],
) -> tuple[Any, Any]:
    """A legacy handshake's capabilities and implementation info as the shared,
    read-only models of `cache` (keyed by their JSON), else `own`, the session's own.

    Why: each legacy session kept its own pydantic copy of the peer's declaration,
    about 1.2 KB (server) and 2 KB (client) of an idle session, though the sessions
    of one client application (of one server) all declare the same. The models are
    those of the 2026-07-28 envelopes, shared by every connection, so read-only.
    The handshake was validated whole before this, so its errors are unchanged; a
    declaration spelled otherwise (snake_case names) keeps the session's own.
    """
    if raw is None:
        return own
    capabilities, info = raw.get("capabilities"), raw.get(info_key)
    if type(capabilities) is not dict or type(info) is not dict:
        return own
    try:
        return cache(capabilities, info)
    except pydantic.ValidationError:  # validated alike above: only a guard
        return own


def capabilities_wire(cache: _EnvelopeCache | None, capabilities: Any) -> dict[str, Any]:
    """A handshake's capabilities on the wire: the cache's shared dict for its models."""
    if cache is None:
        return to_wire(capabilities) or {}
    return cache.capabilities_wire(capabilities)


def _envelope_problem(key: str, value: Any, expected: str) -> str:
    """The -32602 message for an envelope key that is missing or of the wrong type.

    2026-07-28 (`basic/index`, "_meta"): a missing required key is -32602 Invalid params,
    and the message names the key so that a client author sees which one at once.
    """
    if value is None:
        return f"Missing required _meta key {key}"
    return f"_meta key {key} must be {expected}, not {json_kind(value)}"


def _target_and_arguments(method: str, params: Any) -> tuple[str, Mapping[str, Any] | None]:
    """What a sealed requestState is bound to: the tool/prompt name or resource URI.

    SEP-2322 asks that sealed state be bound to "the originating method plus a digest of its
    key parameters": this picks those parameters per method, so a state sealed for one tool
    (or one URI) is refused when echoed to another.
    """
    if method == "resources/read":
        return params.uri, None
    return params.name, params.arguments


class ServerConnection(_Connection):
    """The server side of one MCP connection, legacy session or 2026-07-28 stream.

    `principal` names who the transport authenticated (if anyone); a sealed
    `requestState` is bound to it, so another principal cannot replay it.

    The class keeps what the legacy revisions call session state (negotiated capabilities,
    the log level, resource subscriptions) and nothing of the kind on a 2026-07-28
    connection, where SEP-2575 forbids deriving a request's context from an earlier one:
    every modern request builds its `RequestContext` from its own envelope, and the
    connection only remembers the latest revision spoken.
    """

    # The role's own attributes (see `_Connection.__slots__` for why slots).
    __slots__ = (
        "_asking",
        "_client_caps_wire",
        "_live_tasks",
        "_session_context",
        "_subscribed",
        "_subscribing",
        "client_capabilities",
        "client_info",
        "config",
        "log_level",
        "needs_wall_time",
        "principal",
    )

    _role: Role = "server"
    _peer: Role = "client"

    def __init__(self, config: ServerConfig, *, principal: str | None = None) -> None:
        # (The base's `__init__` named, not found through `super()`: this runs per
        # 2026-07-28 POST, and `super()` builds an object to find it.)
        _Connection.__init__(self, config.limits)
        self.config = config
        self.principal = principal
        # The legacy session's negotiated context: set once by `initialize` (or `restore`)
        # and never again, since a second `initialize` is refused (RELIABILITY.md 1.7). A
        # modern connection leaves them None, because SEP-2575 forbids carrying a request's
        # context over to the next.
        self.client_capabilities: Any = None
        self.client_info: Any = None
        self.log_level: str | None = None
        # The wire form of the legacy client's capabilities, kept beside the model because
        # every capability check on the sending path reads the wire form (`has_capability`),
        # and converting the model per call would cost more than the check.
        self._client_caps_wire: dict[str, Any] = EMPTY
        self._session_context: RequestContext | None = None
        # A legacy session's resource subscriptions: the URIs in force, and the
        # subscribe requests still waiting for the application's answer, by URI
        # (see `_track_subscription`).
        # A dict used as a set (an empty one is 64 bytes, an empty set 216): most
        # sessions subscribe to nothing.
        self._subscribed: dict[str, None] = EMPTY
        self._subscribing: dict[str, set[RequestId]] = EMPTY

        # A sealing server needs the wall clock on every input: the seal's expiry is judged
        # by it, and another replica must judge it alike, which the loop clock cannot do.
        self.needs_wall_time = config.request_state_sealer is not None
        # Legacy questions in flight: our request id -> the round it belongs to.
        self._asking: dict[RequestId, _Round] = EMPTY
        # 2025-11-25 tasks whose creating request's progress token is still valid.
        # Bounded by `Limits.max_tasks`: a client creating tasks it never polls to the end
        # must not grow this table for the life of the session.
        # (The shared `NO_TASKS` until the first task.)
        self._live_tasks = NO_TASKS

    # ------------------------------------------- moving a session (legacy)

    def snapshot(self) -> SessionSnapshot:
        """What another process needs to hold this ready legacy session.

        Raises LocalProtocolError on a 2026-07-28 connection (each request
        carries its own context) or a session not yet (or no longer) ready.
        Requests in flight are not included; see `SessionSnapshot`.

        This is how a legacy session survives a replica: what the session negotiated is all
        another process needs to answer its next request, and in-flight requests stay with
        the process running their handlers.
        """
        return take_snapshot(self)

    @classmethod
    def restore(cls, config: ServerConfig, snapshot: SessionSnapshot) -> ServerConnection:
        """A connection holding the session `snapshot` describes, ready for its
        next request, with no events and nothing to send. Raises
        LocalProtocolError if `config` does not speak the session's revision,
        ValueError if the snapshot's client capabilities or info are invalid.

        The restored connection starts with no requests in flight, which is why a snapshot
        is taken only of a ready session: requests belong to the process running their
        handlers, and the client's retry (or timeout) settles them.
        """
        conn = cls(config, principal=snapshot.principal)
        apply_snapshot(conn, snapshot)
        return conn

    # ------------------------------------------------------------- receiving

    def _accept_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """The era is decided once, by the first request that the table accepts, and never
        changes after: mixing eras on one connection would let a legacy session's
        capabilities leak into a modern request, which SEP-2575 forbids, or let a modern
        client's envelope stand for a session it never negotiated.
        """
        era = self.era
        if era is _MODERN:
            self._modern_request(rid, method, params, events)
            return
        if era is _LEGACY:
            self._legacy_request(rid, method, params, events)
            return
        # The first request (or one after a first that was refused) picks the era.
        # The message's own word comes first (classify_era: the envelope); without
        # one, this transport's policy: an initialize is legacy, anything else is
        # 2026-07-28 when this server speaks it. No byte stream has a header, so
        # the message never says LEGACY here by itself.
        # The envelope is read before the method: a 2026-07-28 `initialize` is not a legacy
        # handshake but an unknown method in that revision, and must be refused as one.
        # (Asked only of the two methods the answer changes: every other request's
        # first step is the same whatever the envelope says, and a 2026-07-28 POST's
        # connection sees one request, a tools/call or the like, so the HTTP server's
        # routing need not be repeated here.)
        said = classify_era(params) if method == "initialize" or method == "ping" else None
        if method == "initialize" and said is not _MODERN:
            # A modern-only server still answers `initialize` with a reason (SPEC-NOTES 1.5,
            # rule 4): a legacy client cannot move forward on its own, and the versions
            # named in the error may be the only clue its user sees.
            if not self.config.legacy_versions:
                self._refuse_initialize(params)
            self._initialize(rid, params, events)
        elif method == "ping" and self.config.legacy_versions and said is not _MODERN:
            # Answered before any session exists, as the legacy revisions allow;
            # the era stays open (the table has no move for it).
            self._reply_result(rid, {}, method)
        elif self.config.modern_versions:
            self._modern_request(rid, method, params, events)
        # A legacy method before `initialize`: 2025-03-26 ("Lifecycle") says the client
        # SHOULD NOT send requests other than pings before the server answered `initialize`,
        # and the SDKs answer -32600 with these words, which clients already recognise.
        elif lookup("client", method, self.config.legacy_versions[0]) is not None:
            raise Reject(INVALID_REQUEST, "Received request before initialization was complete")
        else:
            raise Reject(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _refuse_initialize(self, params: dict[str, Any] | None) -> None:
        """An initialize at a server without legacy revisions. Not "method not
        found": the client is a legacy one, and the error's data names the
        revisions we speak so that it can say why it cannot connect.

        SPEC-NOTES 1.5 leaves the code to the implementation; -32022 is the one a client
        that knows both eras already handles as "speak one of these", and its data is the
        same `supported`/`requested` pair as the modern error.
        """
        requested = (params or {}).get("protocolVersion")
        supported = list(self.config.supported_versions)
        raise Reject(
            UNSUPPORTED_PROTOCOL_VERSION,
            "This server speaks MCP "
            + ", ".join(supported)
            + " without an initialize handshake; use server/discover and per-request _meta",
            {
                "supported": supported,
                "requested": requested if isinstance(requested, str) else None,
            },
        )

    def _initialize(
        self, rid: RequestId, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """The legacy handshake: the revision is the client's if we speak it, else
        our newest legacy one (the client then decides whether it can go on, as the
        spec has it). The session's context is built once here and shared by every
        request that brings no `_meta` of its own.
        """
        spec = METHODS[("client", "initialize")]
        p = self._validate_params(spec, params)
        legacy = self.config.legacy_versions
        # 2025-03-26 ("Version Negotiation"): if the server supports the requested version
        # it MUST answer with the same; otherwise it answers with another it supports, which
        # SHOULD be its latest. The client decides whether that is acceptable; refusing here
        # would take that choice away.
        version = p.protocol_version if p.protocol_version in legacy else legacy[0]
        # The move comes before the answer: if the table refused it (a second `initialize`
        # racing the first), nothing has been queued yet.
        self._move(SessionInput.INITIALIZE)
        self.protocol_version = version
        self.era = Era.LEGACY
        capabilities, info = shared_declaration(
            _envelope_models, params, "clientInfo", (p.capabilities, p.client_info)
        )
        self.client_capabilities = capabilities
        self.client_info = info
        self._client_caps_wire = capabilities_wire(_ENVELOPE_CACHE, capabilities)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.config.legacy_capabilities_wire,
            "serverInfo": self.config.server_info_wire,
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        # The answer is queued before SessionStarted is reported: an application reacting to
        # the event by sending a notification must find it queued after the result, since
        # the client may not accept anything but the result before it has one.
        self._reply_result(rid, result, "initialize")
        # One context object for the whole session, shared by every request that brings no
        # `_meta`: requests in a session are judged by what `initialize` declared, nothing
        # else.
        self._session_context = RequestContext(version, capabilities, info)
        events.append(SessionStarted(version, capabilities, info))

    def _legacy_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """A request in a legacy session: judged by the session's revision and the
        capabilities negotiated once; `logging/setLevel` and the subscriptions are
        session state, kept here rather than left to the application, because
        `send_log` and `notify_subscribers` must obey them.
        """
        version = self.protocol_version
        assert version is not None
        spec = SPECS.get(("client", method, version))
        if spec is None or not spec.is_request:
            raise Reject(METHOD_NOT_FOUND, f"Method not found: {method}")
        # 2025-03-26 ("Ping"): a ping needs no capability and is answered promptly with an
        # empty result, so it short-cuts every check below; a keep-alive must not depend on
        # what the session negotiated.
        if method == "ping":
            self._reply_result(rid, {}, method)
            return
        if (
            # A second `initialize` is refused, not re-run (RELIABILITY.md 1.7,
            # python-sdk#2605): re-running it let a client change its declared capabilities
            # and revision mid-session.
            method == "initialize"
            and follows("server", self.state, SessionInput.INITIALIZE) is None
        ):
            raise Reject(INVALID_REQUEST, "Session already initialized")
        self._check_offered(spec)
        model = self._validate_params(spec, params)
        # 2025-11-25 (`basic/utilities/tasks`): a receiver that did not declare task support
        # for a request type MUST process the request normally, ignoring the task metadata.
        # (`is_task_augmented`, inline: this runs for every request)
        if getattr(model, "task", None) is not None and not has_capability(
            self.config.capabilities_wire, LEGACY_AUGMENTABLE.get(("client", method), "-")
        ):
            # Task augmentation the server did not declare: served as a plain request.
            # (The copy keeps the validated model the peer sent intact for the event's
            # consumers.)
            model = model.model_copy(update={"task": None})
        # The level is session state that `send_log` must obey, so the engine answers this
        # itself (an empty result, 2025-03-26 "Logging") instead of asking the application.
        if method == "logging/setLevel":
            self.log_level = model.level
            self._reply_result(rid, {}, method)
            return
        if method == "resources/subscribe":
            # The subscription is recorded before the application answers, so that an
            # unsubscribe arriving in between finds it and wins (see `_track_subscription`).
            self._track_subscription(rid, model.uri)
        elif method == "resources/unsubscribe":
            # Honoured on arrival, whatever the application answers: the client has
            # said it wants no more of these, and a subscribe to the same URI still
            # waiting for its answer loses to this later word.
            self._subscribed.pop(model.uri, None)
            self._subscribing.pop(model.uri, None)
        # The session's context is reused as is when the request adds nothing of its own:
        # most requests carry no `_meta`, and building a context for each would be pure
        # cost.
        meta = params.get("_meta") if params else None
        # The capabilities tracked with the request are the session's: the answer's checks
        # (may this request be answered with a task?) need no session look-up.
        token = self._track_inbound(rid, method, meta, None, self._client_caps_wire, model)
        base = self._session_context
        assert base is not None
        if token is None and meta is None:
            context = base
        else:
            context = new_request_context(
                version, base.client_capabilities, base.client_info, None, token, meta
            )
        # Kept on the request so that the answers to its questions, which arrive as
        # responses with no context of their own, can be reported under the context of the
        # request.
        if spec.input_required:
            self._inbound[rid].context = context  # for the InputReceived of its questions
        events.append(new_request_received(rid, method, model, context))

    # ------------------------------------------------ the request lane

    def _request_lane(self, obj: dict[str, Any], method: Any, events: list[Event]) -> bool:
        """A plain, well-formed request on a connection whose era is known, taken in
        one function: the `RequestReceived` event, or False having changed nothing.

        Mirrors, in their order, `_dispatch` (a request's branch), `_receive_request`,
        `_accept_request`, `_modern_request` and `_legacy_request` (with
        `_check_offered`, `_validate_params` and `_track_inbound`): keep them alike. Each
        check here is one of theirs, and each hands the request to them when it does not
        pass, so a refusal is always theirs, with its precise error. Everything the
        general path does the same for every request of a method on this server (the
        spec, whether its capability is offered, its params validator) comes from
        `_lane_entry`, once per method and revision. The methods with a step of their
        own (initialize, ping, server/discover, the tasks methods, subscriptions/listen,
        logging/setLevel, the resource subscriptions, a 2026-07-28 retry, a task
        augmentation) stay on the general path, as does an id in flight or a request
        that would reach the in-flight limit.
        """
        # `_dispatch`: a request (it has an id) whose envelope is well-formed.
        if (
            "id" not in obj
            or type(method) is not str
            or obj.get("jsonrpc") != "2.0"
            or "result" in obj
            or "error" in obj
        ):
            return False
        rid = obj["id"]
        if type(rid) is not int and type(rid) is not str:
            return False
        params = obj.get("params")
        if params is None:
            if "params" in obj:
                return False  # `"params": null`, refused there
        elif type(params) is not dict:
            return False
        limits = self.limits
        if len(method) > limits.max_method_length:
            return False
        # `_receive_request`: a free id, below the in-flight limit.
        inbound = self._inbound
        if rid in inbound or len(inbound) >= limits.max_inbound_in_flight:
            return False
        era = self.era
        if era is _MODERN or (
            # `_accept_request`: the first request, but for an initialize or a ping,
            # is a 2026-07-28 one when this server speaks it (the state is
            # AWAITING_FIRST, the only one with no era but the ended ones).
            era is None and method != "ping" and self.config.modern_versions
        ):
            # `_modern_request`: the envelope, key by key, then the method's own checks.
            if params is None:
                return False
            meta = params.get("_meta")
            if type(meta) is not dict:
                return False
            version = meta.get(META_PROTOCOL_VERSION)
            if type(version) is not str:
                return False
            table = self.config.request_lanes[0].get(version)
            entry = table.get(method) if table is not None else None
            if entry is None:
                entry = self._lane_entry(method, version, modern=True)
            if not entry:
                return False
            caps = meta.get(META_CLIENT_CAPABILITIES)
            if type(caps) is not dict:
                return False
            log_level = meta.get(META_LOG_LEVEL)
            if log_level is not None and (type(log_level) is not str or log_level not in LOG_RANK):
                return False
            try:
                capabilities, info = (_ENVELOPE_CACHE or _envelope_cache()).models(
                    caps, meta.get(META_CLIENT_INFO)
                )
                model: Any = entry[1](params) if entry[1] is not None else None
            except pydantic.ValidationError:
                return False
            if getattr(model, "task", None) is not None or (
                entry[0].input_required
                and (model.request_state is not None or model.input_responses is not None)
            ):
                return False  # a task augmentation, a retry: their own steps
            # Every check passed: from here on, what the general path changes.
            if era is None:
                # The first valid envelope: `_move(_ENVELOPE)`, whose table row is read
                # once at import for the one state a server with no era and not ended
                # can be in (`_receive_whole` refused the ended ones). Any other state
                # still takes `_move`, which raises for a move the table lacks. (Two
                # calls less on every 2026-07-28 POST, whose connection starts here.)
                if self.state is _AWAITING_FIRST:
                    self.state = _ENVELOPE_TAKES_TO
                else:
                    self._move(_ENVELOPE)
                self.era = _MODERN
            self.protocol_version = version
            token = meta.get("progressToken")  # (`_track_inbound`, inline)
            if token is not None and type(token) is not int and type(token) is not str:
                token = None
            held = None  # (the entry's context: `_modern_request` keeps none)
            # `new_request_context`, inline (its twin's `__init__`, without the call).
            context: Any = _new(_NewRequestContext)
            context.protocol_version = version
            context.client_capabilities = capabilities
            context.client_info = info
            context.log_level = log_level
            context.progress_token = token
            context.meta = meta
            context.related_request_id = None
            context.input_responses = None
            context.request_state = None
            context.input_verified = False
            context.__class__ = RequestContext
        elif era is _LEGACY:
            # `_legacy_request`: the session's revision and capabilities.
            version = self.protocol_version
            assert version is not None
            table = self.config.request_lanes[1].get(version)
            entry = table.get(method) if table is not None else None
            if entry is None:
                entry = self._lane_entry(method, version, modern=False)
            if not entry:
                return False
            spec, validate = entry
            if validate is None:
                model = None
            else:
                if params is None:
                    if spec.params_required:
                        return False
                    params = {}
                try:
                    model = validate(params)
                except pydantic.ValidationError:
                    return False
                # `getattr(model, "task", None)`, read from the params it was validated
                # from: a valid `task` member is None there only if it was null here,
                # and a model without the field keeps the member as an extra, which
                # `getattr` gives as it came. (A dict read, not pydantic's `__getattr__`
                # hook through `getattr`.)
                if params.get("task") is not None:
                    return False  # a task augmentation: its own step
            meta = params.get("_meta") if params else None
            token = meta.get("progressToken") if type(meta) is dict else None
            if token is not None and type(token) is not int and type(token) is not str:
                token = None
            log_level = None
            caps = self._client_caps_wire
            context = self._session_context
            assert context is not None
            if token is not None or meta is not None:
                context = new_request_context(
                    version, context.client_capabilities, context.client_info, None, token, meta
                )
            # (for the InputReceived of its questions)
            held = context if spec.input_required else None
        else:
            return False  # the first request picks the era: `_accept_request`
        # The entry (`_track_inbound`): `Inbound(method, token, log_level, caps, model)`
        # with `context = held`, without its `__init__` frame: its stores, in its order;
        # keep the two alike. (One place for both eras: nothing above can fail now.)
        if inbound is EMPTY:
            inbound = self._inbound = {}
        tracked: Inbound = _new(Inbound)
        tracked.method = method
        tracked.progress_token = token
        tracked.last_progress = None
        tracked.log_level = log_level
        tracked.capabilities = caps
        tracked.params = model
        tracked.subscription = None
        tracked.context = held
        tracked.state = _OPEN
        inbound[rid] = tracked
        # `new_request_received`, inline likewise.
        event: Any = _new(_NewRequestReceived)
        event.request_id = rid
        event.method = method
        event.params = model
        event.context = context
        event.__class__ = RequestReceived
        events.append(event)
        return True

    def _lane_entry(self, method: str, version: str, *, modern: bool) -> tuple[Any, ...]:
        """What `_request_lane` needs of `method` under `version` on this server: the
        spec and the params validator (None: no params model), or `()` when such a
        request needs the general path (a method with a step of its own, unknown, not a
        request, or whose capability this server does not offer, which is refused there).

        Remembered in the config's `request_lanes` (per era, per revision, per method)
        only for methods of the table under revisions this server speaks, so a peer
        naming new methods or revisions grows nothing.
        """
        config = self.config
        if modern:
            if version not in config.modern_versions or method in _MODERN_OWN_STEPS:
                return ()
            # (the method table of the newest modern revision, as `_modern_request`)
            spec = SPECS.get(("client", method, config.modern_versions[0]))
        else:
            if method in _LEGACY_OWN_STEPS:
                return ()
            spec = SPECS.get(("client", method, version))
        if spec is None:
            return ()
        # `_check_offered` with this revision in force.
        cap = spec.server_capability
        if cap is not None and (spec.method, version) in UNGATED:
            cap = None
        entry: tuple[Any, ...] = ()
        if spec.is_request and not (cap and not has_capability(config.capabilities_wire, cap)):
            name = spec.params
            entry = (spec, None if name is None else validator(name))
        config.request_lanes[0 if modern else 1].setdefault(version, {})[method] = entry
        return entry

    def _track_subscription(self, rid: RequestId, uri: str) -> None:
        """A `resources/subscribe` arrived. It takes effect when the application
        answers it with a result (`_inbound_ended`), so a refused subscribe never
        subscribed anything; a URI is subscribed once any subscribe to it since the
        last unsubscribe was accepted.

        2025-03-26 ("Resources", "Subscriptions"): the server sends `resources/updated` only
        for subscribed URIs. Counting a subscribe only once answered keeps
        `notify_subscribers` from notifying for a URI the application refused to watch. The
        cap counts waiting subscribes too, so a peer flooding subscribes it never lets
        finish is bounded as well (`Limits.max_subscriptions`, -32000 server busy: the
        client may retry later).
        """
        if uri in self._subscribed:
            return  # in force already: whatever this one's answer, it stays
        pending = self._subscribing.get(uri)
        if pending is None:
            if len(self._subscribed) + len(self._subscribing) >= self.limits.max_subscriptions:
                raise Reject(
                    SERVER_BUSY,
                    f"too many resource subscriptions (at most {self.limits.max_subscriptions})",
                )
            if self._subscribing is EMPTY:
                self._subscribing = {}
            pending = self._subscribing[uri] = set()
        pending.add(rid)

    _ENDINGS_WATCHED = _WATCHED

    def _inbound_ended(self, rid: RequestId, entry: Inbound, *, answered: bool) -> None:
        """Called for every `resources/subscribe` that ends (`_ENDINGS_WATCHED`), so that
        its fate is decided where its answer leaves: a result subscribes, anything else (an
        error, a cancel, a lost connection) does not.
        """
        uri = entry.params.uri
        pending = self._subscribing.get(uri)
        if pending is None or rid not in pending:
            return  # an unsubscribe came in between, or it never counted
        if answered:
            del self._subscribing[uri]  # the others' answers change nothing now
            if self._subscribed is EMPTY:
                self._subscribed = {}
            self._subscribed[uri] = None
            return
        pending.discard(rid)  # refused, cancelled or abandoned: it subscribed nothing
        if not pending:
            del self._subscribing[uri]

    @property
    def resource_subscriptions(self) -> frozenset[str]:
        """The URIs a legacy session is subscribed to (a `resources/subscribe` answered
        with a result, no `resources/unsubscribe` since); always empty in 2026-07-28,
        whose `subscriptions/listen` streams carry their own filters."""
        return frozenset(self._subscribed)

    def check_invariants(self) -> None:
        """The tests call this after every step of the state-machine fuzzing; a violation here
        is a bug of ours, never of the peer, so plain asserts are right.
        """
        super().check_invariants()
        assert len(self._subscribed) + len(self._subscribing) <= self.limits.max_subscriptions
        for uri, pending in self._subscribing.items():
            assert pending and uri not in self._subscribed
            for rid in pending:  # each a subscribe to that URI, still waiting
                entry = self._inbound.get(rid)
                assert entry is not None and entry.method == "resources/subscribe"
                assert entry.params.uri == uri
        for rid, round_ in self._rounds.items():
            assert rid in self._inbound and round_.request_id == rid
            for wid in round_.waiting:
                assert self._asking[wid] is round_ and wid in self._outbound
        assert len(self._asking) == sum(len(r.waiting) for r in self._rounds.values())

    def _check_offered(self, spec: MethodSpec) -> None:
        """A method whose capability this server did not advertise is "not found",
        as if it did not exist: that is how the SDKs answer it.

        2025-03-26 ("Capabilities"): both parties SHOULD respect the negotiated
        capabilities. Answering -32601 rather than -32602 follows the official SDKs, and a
        client that probes a feature gets the same answer as for a server that lacks it.
        """
        cap = spec.server_capability  # (`needs_capability`, inline)
        if cap is not None and (spec.method, self.protocol_version or "") in UNGATED:
            cap = None
        if cap and not has_capability(self.config.capabilities_wire, cap):
            raise Reject(
                METHOD_NOT_FOUND, f"Method not found: {spec.method} (capability not offered)"
            )

    def _modern_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """A 2026-07-28 request: everything it is judged by travels in its own
        `_meta` envelope, checked key by key with an error naming the key, because
        there is no session to fall back on. The first valid one makes the
        connection modern (the table's ENVELOPE move); later ones may carry another
        supported revision, and the connection follows the latest.
        """
        if method == "initialize" and classify_era(params) is not _MODERN:
            # A legacy client: tell it, in words it can show, which revisions we speak.
            self._refuse_initialize(params)
        # The method table of our newest modern revision: the method set is the same for
        # every modern revision we speak, and the envelope (which names the revision) is
        # checked just below, so a request for an unknown method is refused even when its
        # envelope is bad.
        spec = SPECS.get(("client", method, self.config.modern_versions[0]))
        if spec is None or not spec.is_request:
            raise Reject(METHOD_NOT_FOUND, f"Method not found: {method}")
        meta = params.get("_meta") if params is not None else None
        # SEP-2575: `params._meta` is required on every 2026-07-28 request; without it the
        # request names no revision, so -32602 names the key the client must add.
        if type(meta) is not dict:
            raise Reject(
                INVALID_PARAMS, f"Missing required params._meta with {META_PROTOCOL_VERSION}"
            )
        # Every envelope value is the peer's: each is type-checked where it is read,
        # before it is hashed, compared or stored (a list is not a log level).
        version = meta.get(META_PROTOCOL_VERSION)
        if type(version) is not str:
            raise Reject(
                INVALID_PARAMS, _envelope_problem(META_PROTOCOL_VERSION, version, "a string")
            )
        # SPEC-NOTES 1.5, rule 1: a version unknown to us, or known but not spoken here (a
        # legacy one in a modern envelope), is -32022 with both lists, so the client can
        # pick a version both sides speak and retry.
        if version not in self.config.modern_versions:
            raise Reject(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": list(self.config.supported_versions), "requested": version},
            )
        # Required too, even when empty (`{}` means no optional capabilities), because the
        # server must never infer a capability the request did not declare.
        caps = meta.get(META_CLIENT_CAPABILITIES)
        if type(caps) is not dict:
            raise Reject(
                INVALID_PARAMS, _envelope_problem(META_CLIENT_CAPABILITIES, caps, "an object")
            )
        log_level = meta.get(META_LOG_LEVEL)
        # 2026-07-28 (`server/utilities/logging`): an unrecognised level SHOULD be rejected
        # with -32602. The level is cut to 64 characters in the message so that a huge value
        # cannot make the error as large as the request.
        if log_level is not None:
            if type(log_level) is not str:
                raise Reject(
                    INVALID_PARAMS, _envelope_problem(META_LOG_LEVEL, log_level, "a string")
                )
            if log_level not in LOG_RANK:
                raise Reject(
                    INVALID_PARAMS,
                    f"Unknown log level {log_level[:64]!r} in _meta key {META_LOG_LEVEL}",
                )
        try:
            # `clientInfo` is optional and display-only (SPEC-NOTES 1.2: never used for
            # behaviour or security), but a malformed one is still refused, so a bad client
            # finds out.
            # (`_envelope_models`, inline: the cache itself once it is made)
            capabilities, info = (_ENVELOPE_CACHE or _envelope_cache())(
                caps, meta.get(META_CLIENT_INFO)
            )
        except pydantic.ValidationError as exc:
            raise Reject(INVALID_PARAMS, f"Invalid _meta envelope: {describe(exc)}") from None
        # The first valid envelope moves the connection to READY; a refused request leaves
        # the era open, so that a client whose first probe was wrong can still start either
        # way.
        if self.era is None:
            self._move(_ENVELOPE)
            self.era = _MODERN
        # The connection follows the latest request's revision: it decides only what the
        # engine writes by itself (an error's id, which codes may be sent), and every
        # request is judged by its own envelope anyway.
        self.protocol_version = version
        # `server/discover` (SEP-2575) must work for every client, before any capability
        # check: it is how a client learns what this server offers.
        if method == "server/discover":
            self._reply_result(rid, self._finish_result(method, self._discover_result()), method)
            return
        self._check_offered(spec)
        # SEP-2663: the tasks methods exist only for a request that declared the extension,
        # and a server without it answers -32021 naming the extension.
        if method in MODERN_TASK_REQUESTS and not extension_declared(caps):
            raise Reject(*missing_extension())
        if (
            method == "subscriptions/listen"
            and isinstance(params, Mapping)
            and isinstance(params.get("notifications"), Mapping)
            and params["notifications"].get("taskIds") is not None
            and not extension_declared(caps)
        ):
            raise Reject(*missing_extension())  # task notifications need the extension
        model = self._validate_params(spec, params)
        if getattr(model, "task", None) is not None:  # (`is_task_augmented`, inline)
            model = model.model_copy(update={"task": None})  # no such param in 2026-07-28
        # A retry (SEP-2322) carries `inputResponses` and the echoed `requestState`; both
        # are the client's word until the seal is checked, so they are judged before the
        # application sees any of it.
        if spec.input_required and (
            model.request_state is not None or model.input_responses is not None
        ):
            # The state is opened before the request is tracked: a forged or expired state
            # is refused (-32602) without the request ever entering the in-flight table.
            answers, state, asked, forms = self._open_request_state(rid, method, model, events)
            token = self._track_inbound(rid, method, meta, log_level, caps, model)
            if forms is not None:
                # A retry after request_input: its answers, judged, in one event.
                assert asked is not None
                context = RequestContext(version, capabilities, info, log_level, token, meta)
                # The retry fields are stripped from the params handed on: the answers
                # arrive judged in `outcomes`, and a handler must not read the unjudged
                # copies by mistake.
                bare = model.model_copy(update={"input_responses": None, "request_state": None})
                outcomes = _retry_answers(asked, answers or {}, forms)
                events.append(InputReceived(rid, method, bare, context, outcomes, state))
                return
            context = RequestContext(
                version,
                capabilities,
                info,
                log_level,
                token,
                meta,
                None,
                answers,
                state,
                asked is not None,
            )
        else:
            token = self._track_inbound(rid, method, meta, log_level, caps, model)
            context = new_request_context(version, capabilities, info, log_level, token, meta)
        events.append(new_request_received(rid, method, model, context))

    def _open_request_state(
        self, rid: RequestId, method: str, model: Any, events: list[Event]
    ) -> tuple[dict[str, Any] | None, Any, dict[str, str] | None, dict[str, Any] | None]:
        """Verify the echoed state and keep only the answers it says were asked for.

        Returns (answers, state, asked, forms): `asked` (key -> method) only when the
        state verified, `forms` (key -> the form asked with) only when it was sealed
        by `request_input`.

        The checks follow SEP-2322's server rules: treat `requestState` as attacker input,
        reject it when verification fails, ignore answers to keys that were not asked, and
        give ordinary JSON-RPC errors for malformed ones. Rejection is reported twice on
        purpose: a RequestStateRejected event with the precise reason for the operator, and
        one generic -32602 for the client, so that a forger learns nothing about which check
        failed.
        """
        sealer = self.config.request_state_sealer
        if sealer is None:
            # No keys configured: the application seals (or trusts) its own state;
            # the answers are the client's word alone (input_verified stays False).
            return model.input_responses, model.request_state, None, None
        if model.request_state is None:
            # Nothing sealed to check them against: the (validated) answers go on,
            # unverified; the application matches them to its own questions.
            return model.input_responses, None, None, None
        target, arguments = _target_and_arguments(method, model)
        wall_time = self._wall_time
        assert wall_time is not None  # a sealing server refuses input that comes without it
        try:
            payload = sealer.unseal(
                model.request_state,
                method=method,
                target=target,
                arguments=arguments,
                principal=self.principal,
                wall_time=wall_time,
            )
            # Sealed by us, so authentic; still read as a peer value would be (another
            # version of this server may share the keys), so a shape we never seal
            # fails the same closed way as a forgery instead of raising.
            asked = payload.get("k") if type(payload) is dict else None
            forms = payload.get("f") if type(payload) is dict else None
            if (
                type(asked) is not dict
                or not all(type(k) is str for k in asked.values())
                or not (forms is None or type(forms) is dict)
            ):
                raise RequestStateError("bad_claims")
        except RequestStateError as exc:
            events.append(RequestStateRejected(rid, exc.reason))
            raise Reject(
                INVALID_PARAMS, INVALID_REQUEST_STATE_MESSAGE, {"reason": "invalid_request_state"}
            ) from None
        given = model.input_responses or {}
        answers: dict[str, Any] = {}
        for key, kind in asked.items():
            value = given.get(key)
            if value is None:
                continue  # missing: the handler asks again rather than failing
            # An answer must be the result type of the question it answers: an ElicitResult
            # under a sampling key would otherwise reach a handler that trusts its shape.
            expected = INPUT_RESULT_TYPES.get(kind)
            if expected is None or not isinstance(value, _wire_type(expected)):
                raise Reject(INVALID_PARAMS, f"inputResponses[{key!r}] does not answer {kind}")
            answers[key] = value
        return answers, payload.get("s"), asked, forms

    def _discover_result(self) -> dict[str, Any]:
        """The `server/discover` answer: every revision we speak, in both eras, so a
        probing client can fall back to initialize knowingly.

        2026-07-28 `server/discover` (SEP-2575): `instructions` moved here from the
        `initialize` result, and the cache fields are added by `_finish_result` since
        DiscoverResult is cacheable.
        """
        result: dict[str, Any] = {
            "supportedVersions": list(self.config.supported_versions),
            "capabilities": self.config.modern_capabilities_wire,
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        return result

    def _accept_notification(
        self, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        """A client notification. Nothing before the era is known means anything
        (a legacy client sends `initialized` only after its initialize).
        """
        version = self.protocol_version
        if version is None:
            return  # nothing but initialize means anything before the era is known
        spec = lookup("client", method, version)
        # JSON-RPC 2.0 (section 4.1): a notification is never answered, so an unknown or
        # misplaced one can only be dropped; raising would let any peer end the session.
        if spec is None or spec.is_request:
            return  # unknown notifications are ignored
        if method == "notifications/initialized":
            events.append(ClientInitialized())
            return
        try:
            model = self._validate_params(spec, params)
        # A notification with bad params is reported, not answered: JSON-RPC forbids a
        # response to a notification, and the application may want to log the peer's
        # mistake.
        except Reject as rej:
            events.append(MessageRejected(None, rej.code, rej.message))
            return
        events.append(NotificationReceived(method, model))

    # ---------------------------------------------------------------- sending

    def send_result(self, request_id: RequestId, result: Any) -> bool:
        """Answer a client's request (see `_Connection.send_result`).

        The common result takes a lane: `_Connection.send_result` with this role's
        `_check_result` and `_encode_result` and the `_end_inbound` it ends with, in one
        function, for a plain dict (no `resultType`, and in 2026-07-28 no `_meta` of the
        application's) answering an open request whose method needs nothing more than
        the encoding (not `_LEGACY_OFF_LANE`/`_MODERN_OFF_LANE`, nor a 2025-11-25
        task-augmented one), with no round of questions out and room in the buffer.
        Those checks come before any change; a result that fails one (or needs the
        encoder's fallback) takes the general path from its start, which refuses it with
        its own error. The application's dict is encoded as it is: the general path's
        copy is only for the members it adds, which the lane splices in encoded. The two
        must stay alike: tests/core/test_lanes.py compares them.
        """
        if (
            self._lanes
            and type(result) is dict
            and (entry := self._inbound.get(request_id)) is not None
            and entry.state is _OPEN
            and not self._rounds
            and self.state not in _ENDED
            and "resultType" not in result
        ):
            payload: bytes | None = None
            if self.era is _MODERN:
                tail = self.config.complete_result_tail
                if (
                    tail is not None
                    and "_meta" not in result
                    and entry.method not in _MODERN_OFF_LANE
                ):
                    payload = jr.encode_result_ending(request_id, result, tail)
            elif (
                entry.method not in _LEGACY_OFF_LANE and getattr(entry.params, "task", None) is None
            ):
                payload = jr.encode_result(request_id, result)
            if payload is not None and self._outgoing_bytes + len(payload) <= self._output_limit:
                self._queue_ending(request_id, entry, payload, "result", _ANSWERED)
                return True
        return super().send_result(request_id, result)

    def send_text_result(
        self, request_id: RequestId, text: str, *, structured: bool = False
    ) -> bool:
        """`send_result(request_id, {"content": [{"type": "text", "text": text}]})`, with
        `"structuredContent": {"result": text}` after the content when `structured`: the
        answer of a tool that returned a string (with an output schema wrapping it,
        when `structured`), the commonest answer a server sends.

        Why: such a result has the same containers around its string every time, and
        encoding them was most of the cost of answering (about 8k instructions of
        `to_json` per call). When `send_result`'s lane would take that dict, this takes
        it the same way, with only the id and the string encoded
        (`jr.encode_text_result`): the same bytes, the same state after. Anything else
        (the lane's checks failing, a string the fast encoder leaves to the plain one)
        is that dict given to `send_result` itself, which answers or refuses it as
        always. Mirrors `send_result`'s lane (keep them alike): tests/core/test_lanes.py
        compares the two.
        """
        if (
            self._lanes
            and type(text) is str
            and (entry := self._inbound.get(request_id)) is not None
            and entry.state is _OPEN
            and not self._rounds
            and self.state not in _ENDED
        ):
            tail: bytes | None = None
            if self.era is _MODERN:
                if entry.method not in _MODERN_OFF_LANE:
                    tail = self.config.complete_result_tail
            elif (
                entry.method not in _LEGACY_OFF_LANE and getattr(entry.params, "task", None) is None
            ):
                tail = b"}}"
            if tail is not None:
                # `jr.encode_text_result(request_id, text, structured, tail)`, written out
                # (a call per answer less): the same steps; keep the two alike.
                try:
                    encoded = to_json(text)
                    rid = b"%d" % request_id if type(request_id) is int else to_json(request_id)
                except PydanticSerializationError:
                    pass  # (None there: the plain encoder's fallback, below)
                else:
                    if structured:
                        payload = b"".join(
                            (
                                _RESULT_ID,
                                rid,
                                _TEXT_CONTENT,
                                encoded,
                                _STRUCTURED,
                                encoded,
                                b"}",
                                tail,
                            )
                        )
                    else:
                        payload = b"".join((_RESULT_ID, rid, _TEXT_CONTENT, encoded, b"}]", tail))
                    if self._outgoing_bytes + len(payload) <= self._output_limit:
                        self._queue_ending(request_id, entry, payload, "result", _ANSWERED)
                        return True
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if structured:
            result["structuredContent"] = {"result": text}
        return self.send_result(request_id, result)

    def _encode_result(self, request_id: RequestId, method: str, result: dict[str, Any]) -> bytes:
        """`_finish_result`, then encoded; a plain 2026-07-28 result (no `resultType`
        or `_meta` of the application's, a method with no caching hints) gets the
        members `_finish_result` would append as this server's pre-encoded tail
        (`ServerConfig.complete_result_tail`): the same bytes.
        """
        if self.era is not _MODERN:
            result.pop("resultType", None)  # (`_finish_result`, inline for a legacy session)
            return jr.encode_result(request_id, result)
        tail = self.config.complete_result_tail
        if (
            tail is not None
            and "resultType" not in result
            and "_meta" not in result
            and method not in _CACHEABLE
        ):
            payload = jr.encode_result_ending(request_id, result, tail)
            if payload is not None:
                return payload
        return jr.encode_result(request_id, self._finish_result(method, result))

    def _finish_result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """What the era adds to every result: 2026-07-28 results carry a
        resultType, our serverInfo and, when cacheable, the caching hints; a legacy
        result must not carry a resultType at all.

        2026-07-28 (SPEC-NOTES 1.3, 1.9): every result MUST carry `resultType`, SHOULD carry
        `serverInfo` in `_meta`, and the six cacheable results MUST carry `ttlMs` and
        `cacheScope` (the config's defaults, unless the application set them). A legacy
        client validating against its schema would refuse the unknown `resultType`, so it is
        removed there. An `input_required` answer to a method that cannot ask is our
        application's error, caught before it reaches a client that would reject it.
        """
        if self.era is not _MODERN:
            result.pop("resultType", None)
            return result
        meta = result.get("_meta")
        # Our server info is merged into the application's `_meta`, which can only be done
        # with an object: anything else is the application's mistake, refused before the
        # request's record changes (it was a TypeError from the merge, or, when falsy, the
        # value silently replaced).
        if meta is not None and not isinstance(meta, dict):
            raise LocalProtocolError(f"result._meta must be an object, not {type(meta).__name__}")
        # `setdefault` because an application may set the type itself (an `input_required`
        # from `send_input_required`, a task); `complete` is what every other result is.
        result_type = result.setdefault("resultType", "complete")
        server_info = self.config.server_info_wire
        # A new `_meta` dict rather than the application's own, which may be shared between
        # answers; the server info goes in last so an application cannot spoof it.
        result["_meta"] = (
            {**meta, META_SERVER_INFO: server_info} if meta else {META_SERVER_INFO: server_info}
        )
        if result_type == "complete":
            spec = METHODS.get(("client", method))
            if spec is not None and spec.cacheable:
                result.setdefault("ttlMs", self.config.cache_ttl_ms)
                result.setdefault("cacheScope", self.config.cache_scope)
        elif result_type == "input_required":
            spec = METHODS.get(("client", method))
            if spec is None or not spec.input_required:
                raise LocalProtocolError(f"{method} cannot answer with an InputRequiredResult")
        elif result_type == "task":
            pass  # checked against the request in `_check_result`
        else:
            raise LocalProtocolError(f"unknown resultType {result_type!r}")
        return result

    def _check_result(
        self, request_id: RequestId, entry: Inbound, result: dict[str, Any]
    ) -> dict[str, Any]:
        """The eras put tasks in different places. 2026-07-28 (SEP-2663): a task answer is
        allowed only for the extension's methods, when both sides declared the extension on
        this request. 2025-11-25: the answer to a task-augmented request is a
        CreateTaskResult, and the request's progress token stays valid until the task ends
        (`basic/utilities/tasks`, "Progress"), so it is remembered here. A `tasks/result`
        answer carries the related-task `_meta`, which that revision requires.
        """
        if self.era is _MODERN:
            # A modern result other than a task was already shaped by `_finish_result`.
            if result.get("resultType") != "task":
                return result
            if entry.method not in MODERN_TASK_METHODS:
                raise LocalProtocolError(f"{entry.method} cannot answer with a task")
            if not extension_declared(self.config.capabilities_wire):
                raise LocalProtocolError(
                    "a task needs the tasks extension in the server's capabilities"
                )
            if not extension_declared(entry.capabilities):
                raise LocalProtocolError(
                    "this request did not declare the tasks extension: no task for it "
                    "(answer it, or refuse it with tasks.missing_extension())"
                )
            self._check_shape("ExtCreateTaskResult", result)
            return result
        if getattr(entry.params, "task", None) is not None:  # (`is_task_augmented`, inline)
            # The answer to a task-augmented request is the task; its result comes
            # from tasks/result. Its progress token stays valid until the task ends.
            self._check_shape("CreateTaskResult", result)
            # (validated just above, so the keys exist)
            task_id = result["task"]["taskId"]
            if entry.progress_token is not None and result["task"].get("status") not in (
                "completed",
                "failed",
                "cancelled",
            ):
                if self._live_tasks is NO_TASKS:
                    self._live_tasks = LiveTasks(self.limits.max_tasks)
                self._live_tasks.start(task_id, entry.progress_token, request_id)
            return result
        if entry.method == "tasks/result":
            task_id = entry.params.task_id
            self._live_tasks.end(task_id)
            return with_related_task(result, task_id)
        if entry.method in ("tasks/get", "tasks/cancel"):
            # A `tasks/get` or `tasks/cancel` answer that reports a terminal status ends the
            # task's progress token (2025-11-25, "Progress": valid until the task ends).
            ended = terminal_status(entry.method, result)
            if ended is not None:
                self._live_tasks.end(ended)
        return result

    def _check_shape(self, type_name: str, result: dict[str, Any]) -> None:
        """Our own results are validated only where a wrong shape would break the peer's task
        bookkeeping; elsewhere the application's result goes out as given, for speed.
        """
        try:
            validator(type_name)(result)
        except pydantic.ValidationError as exc:
            raise LocalProtocolError(f"not a valid {type_name}: {describe(exc)}") from None

    # ------------------------------------------------------------------ tasks

    def send_task_progress(
        self,
        task_id: str,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Progress on a 2025-11-25 task, under the token of the request that created it.

        The token stays valid after the `CreateTaskResult` until the task reaches
        a terminal status (seen in a `tasks/get`, `tasks/cancel` or `tasks/result`
        answer, a `send_task_status`, or `task_ended`). False, with nothing sent,
        when the request asked for no progress, the task ended, the table was full
        (`Limits.max_tasks`) or the connection closed. The notification carries
        the related-task `_meta`.
        """
        if self.state in _ENDED:
            return False
        live = self._live_tasks.get(task_id)
        # None: not a task of this connection with a live token (it ended, the table was
        # full, or the request asked for no progress); nothing is sent, as for
        # `send_progress`.
        if live is None:
            return False
        # 2025-03-26 ("Progress"): the progress value MUST increase with each notification,
        # even if the total is unknown; a client may drop a notification that breaks this.
        if live[2] is not None and not progress > live[2]:
            raise LocalProtocolError("progress must increase with each notification")
        live[2] = progress
        # The token of the creating request, with the related-task `_meta`, so the client
        # can attribute the progress to the task and not to the (already answered) request.
        params: dict[str, Any] = {"progressToken": live[0], "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        params["_meta"] = related_task_meta(task_id)
        self._queue(
            jr.encode_notification("notifications/progress", params),
            "notification",
            "notifications/progress",
            None,
            live[1],
        )
        return True

    def send_task_status(self, task: Any) -> None:
        """Tell a legacy session a task's status changed (`notifications/tasks/status`).

        `task` is a `Task` (or its wire mapping). A terminal status ends the
        task's progress token. On 2026-07-28 status notifications travel on
        `subscriptions/listen` streams; this raises LocalProtocolError there.
        """
        self._check_sending()
        if self.era is _MODERN:
            raise LocalProtocolError(
                "2026-07-28 sends task status only on subscriptions/listen streams"
            )
        # Validated before sending: a malformed status notification would break the client's
        # task bookkeeping, not ours, and the application gets the error where it made it.
        wire = to_wire(task)
        if not isinstance(wire, dict):
            raise LocalProtocolError("a task must be a model or a mapping")
        self._check_shape("TaskStatusNotificationParams", wire)
        self.send_notification("notifications/tasks/status", wire)
        ended = terminal_status("notifications/tasks/status", wire)
        if ended is not None:
            self._live_tasks.end(ended)

    def task_ended(self, task_id: str) -> None:
        """A task reached a terminal status without a message saying so: its
        progress token is no longer valid.

        Needed because a task can end where the engine does not see it (in the application's
        task store, on another replica); without it the token would stay valid and the table
        slot stay taken.
        """
        self._live_tasks.end(task_id)

    def _sending_revision(self) -> str:
        """A 2026-07-28 server sends no requests or unsolicited notifications (it
        asks in results and notifies listen streams): refused, naming the verbs
        that do it instead.
        """
        if self.era is _MODERN:
            raise LocalProtocolError(
                "in 2026-07-28 a server sends no requests or unsolicited notifications; "
                "answer with send_input_required, or notify listeners with notify_subscribers"
            )
        return super()._sending_revision()

    def _prepare_request(
        self, spec: MethodSpec, params: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """A legacy server's request to the client: refused when the client did not
        declare what it needs, and written in the session revision's dialect of
        elicitation (2025-06-18 has no modes).

        2025-03-26 ("Capabilities"), and for tasks 2025-11-25: a server must not send a
        request the client did not declare support for. 2025-06-18 elicitation has no `mode`
        or `elicitationId`, and a strict 2025-06-18 client would refuse them, so they are
        stripped there; 2025-11-25 URL mode needs the id, which
        `notifications/elicitation/complete` refers back to.
        """
        problem = capability_problem(self._client_caps_wire, spec.method, params)
        if problem is not None:
            raise LocalProtocolError(f"the client did not declare it: {problem[1]}")
        # 2025-11-25: a server may ask the client to run its request as a task only if the
        # client declared that request type under `tasks.requests`.
        if wants_task(params):
            cap = LEGACY_AUGMENTABLE.get(("server", spec.method))
            if cap is None:
                raise LocalProtocolError(f"{spec.method} cannot be task-augmented")
            if not has_capability(self._client_caps_wire, cap):
                raise LocalProtocolError(f"the client did not declare {cap}")
        if spec.method == "elicitation/create" and params is not None:
            check_form(params, self.protocol_version or V2025_06_18)
            if self.protocol_version == V2025_06_18:
                if params.get("mode", "form") != "form":
                    raise LocalProtocolError("URL-mode elicitation needs revision 2025-11-25")
                params = {k: v for k, v in params.items() if k not in ("mode", "elicitationId")}
            elif params.get("mode") == "url" and not params.get("elicitationId"):
                raise LocalProtocolError(
                    "URL-mode elicitation in 2025-11-25 needs an elicitationId"
                )
        return params

    def _check_notification_allowed(self, method: str) -> None:
        """A list_changed or log notification needs its capability advertised:
        the spec lets a server send each only under the capability announcing it."""
        cap = _NOTIFICATION_CAPABILITY.get(method)
        if cap is not None and not has_capability(self.config.capabilities_wire, cap):
            raise LocalProtocolError(f"{method} needs the {cap} capability, which was not offered")

    def send_input_required(
        self,
        request_id: RequestId,
        input_requests: Mapping[str, Any] | None = None,
        state: Any = None,
        *,
        wall_time: float | None = None,
    ) -> bool:
        """Answer a 2026-07-28 `tools/call`, `prompts/get` or `resources/read` with
        an `InputRequiredResult`: ask the client, and let its retry come back.

        `input_requests` maps keys of your choosing to `{"method", "params"}`
        objects (or the `ElicitRequest` / `CreateMessageRequest` /
        `ListRootsRequest` models). `state` is any JSON value; with
        `request_state_keys` configured it is sealed together with the kinds of
        the questions, bound to this call, and handed back verified on the retry
        (`context.request_state`, `context.input_responses`, and
        `context.input_verified` True). Without keys nothing can be verified:
        the retry's answers are the client's word. Returns False when the
        request was cancelled meanwhile.

        This is the lower-level building block; `request_input` asks in either
        era and delivers judged answers in one `InputReceived`.

        `wall_time` (seconds since the epoch) dates the sealed state; by default
        the wall time given with the latest input. False, as for `send_result`,
        once the connection closed.

        The answer to the original request is this result: the request ends here (SEP-2322),
        and the retry arrives as a new request with a new id. Nothing is kept in between:
        whatever the retry needs comes back in `requestState`, which is why it is sealed.
        """
        if self.state in _ENDED:
            return False
        if wall_time is not None:
            self._wall_time = wall_time
        entry = self._take_inbound(request_id)
        if entry is None:
            return False
        # An `InputRequiredResult` exists only in 2026-07-28 (SEP-2322); a legacy session
        # asks with requests, which `request_input` does in either era.
        if self.era is not _MODERN:
            raise LocalProtocolError(
                "legacy sessions ask with server-to-client requests (send_request)"
            )
        spec = METHODS[("client", entry.method)]
        if not spec.input_required:
            raise LocalProtocolError(f"{entry.method} cannot answer with an InputRequiredResult")
        asked: dict[str, dict[str, Any]] = {}
        kinds: dict[str, str] = {}
        for key, request in (input_requests or {}).items():
            wire = to_wire(request)
            method = wire.get("method") if isinstance(wire, dict) else None
            if method not in INPUT_RESULT_TYPES:
                raise LocalProtocolError(
                    f"input request {key!r} must be elicitation/create, "
                    "sampling/createMessage or roots/list"
                )
            params = wire.get("params") or {}
            # SEP-2322: never ask for a capability the client did not declare on this
            # request; the envelope of this request is the only declaration that counts.
            problem = capability_problem(entry.capabilities or {}, method, params)
            if problem is not None:
                raise LocalProtocolError(f"the client did not declare it: {problem[1]}")
            if method == "elicitation/create":
                # 2026-07-28 removed `elicitationId` with
                # `notifications/elicitation/complete`: a URL question is answered by the
                # retry itself.
                if "elicitationId" in params:
                    raise LocalProtocolError("2026-07-28 URL-mode elicitation has no elicitationId")
                check_form(params, self.protocol_version or "")
            asked[key] = {"method": method, "params": params} if params else {"method": method}
            kinds[key] = method
        # SEP-2322: at least one of `inputRequests` and `requestState` MUST be present.
        if not asked and state is None:
            raise LocalProtocolError("an InputRequiredResult needs input requests or state")
        # The kinds of the questions are sealed with the state so that the retry's answers
        # can be checked against what was asked, even on another replica.
        token = self._seal(entry, kinds, state)
        result: dict[str, Any] = {"resultType": "input_required"}
        if asked:
            result["inputRequests"] = asked
        if token is not None:
            result["requestState"] = token
        wire_result = self._finish_result(entry.method, result)
        self._end_inbound(
            request_id,
            entry,
            RequestInput.ASK_IN_RESULT,
            jr.encode_result(request_id, wire_result),
            "result",
        )
        return True

    # ------------------------------------------------ asking, in either era

    def request_input(
        self,
        request_id: RequestId,
        questions: Mapping[str, Any],
        *,
        state: Any = None,
        deadline: float | None = None,
        wall_time: float | None = None,
    ) -> bool:
        """Ask the client questions on behalf of its request, whatever the era.

        `request_id` is a `tools/call`, `prompts/get` or `resources/read` that
        still waits for its answer. `questions` maps keys of your choosing
        (non-empty strings, unique within the request) to input requests:
        `{"method": ..., "params": {...}}` mappings with the method
        `elicitation/create`, `sampling/createMessage` or `roots/list`, or the
        `ElicitRequest` / `CreateMessageRequest` / `ListRootsRequest` models. A
        form's `requestedSchema` may be a pydantic model class (rendered with
        `form_schema` for the request's revision); a mapping must fit that
        revision (`check_form_schema`). A URL-mode question needs an
        `elicitationId`, sent where the revision has one. Every question must be
        covered by what the client declared for this request. Anything else is a
        `LocalProtocolError`, raised before anything is sent.

        How the questions travel is the engine's business. On a legacy session
        each goes out as a server-to-client request tied to this request, failing
        at `deadline` (your loop's clock, as for `send_request`), and the request
        stays open. On 2026-07-28 the request is answered at once with an
        `InputRequiredResult` carrying the questions and `state`, sealed in
        `requestState` with what was asked, and the client retries (`deadline`
        has nothing to bound there).

        Either way one `InputReceived` follows for the round, with an
        `InputAnswer` for every key and `state` handed back, unless the request
        ends first: the peer cancels it (`RequestCancelled`), the connection
        closes (`ConnectionClosed`), you answer it yourself, or, on 2026-07-28,
        the client never retries. The open questions are then withdrawn
        (cancelled on the wire, on a legacy session) and nothing more follows.
        One round at a time per request; ask again from the `InputReceived`.

        `state` is any strict JSON value. A server that may speak 2026-07-28
        needs `request_state_keys` for this verb, in every era (answers are only
        trusted under state it sealed; a legacy-only server needs none).
        `wall_time` dates the seal, by default the wall time of the latest input.

        Returns False, with nothing sent, when the request no longer waits
        (cancelled, or the connection closed), as `send_result` does.
        """
        if self.state in _ENDED:
            return False
        entry = self._take_inbound(request_id)
        if entry is None:
            return False
        # The eligible methods are fixed by SEP-2322 (`tools/call`, `prompts/get`,
        # `resources/read`); the one exception is legacy 2025-11-25, whose `tasks/result` is
        # the request a task's questions travel on.
        spec = METHODS[("client", entry.method)]
        # A 2025-11-25 `tasks/result` asks too: the questions of an
        # input_required task travel on the stream of the request waiting for it.
        if not spec.input_required and not (
            entry.method == "tasks/result" and self.era is not _MODERN
        ):
            raise LocalProtocolError(
                f"{entry.method} cannot ask for input (only tools/call, "
                "prompts/get and resources/read can, and a 2025-11-25 tasks/result)"
            )
        # The table is asked before anything else changes: a second round while one is out
        # is refused with nothing sent, since the client could not tell the rounds apart.
        asking = RequestInput.ASK_IN_RESULT if self.era is _MODERN else RequestInput.ASK
        if follows_request("server", "inbound", entry.state, asking) is None:
            # One round at a time (the table has no ASK out of ASKING).
            raise LocalProtocolError(
                f"request {request_id!r} already has questions out: wait for its InputReceived"
            )
        # Without keys a modern retry's answers cannot be tied to the questions, and an
        # attacker could answer questions never asked (SEP-2322: treat `requestState` as
        # attacker-controlled). Refusing in every era keeps one server from behaving
        # differently by transport.
        if self.config.request_state_sealer is None and self.config.modern_versions:
            raise LocalProtocolError(
                "asking needs ServerConfig(request_state_keys=...) on a server that speaks "
                "2026-07-28: answers are trusted only under state this server sealed"
            )
        try:
            # Strict JSON because the state travels inside `requestState` to other processes
            # and back: NaN or an object that only Python can encode would fail there, far
            # from here.
            json.dumps(state, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"state must be strict JSON: {exc}") from None
        # All questions are checked before the era's path runs, so both eras refuse the same
        # bad question in the same words.
        asked = self._questions(entry, questions)
        if self.era is _MODERN:
            if wall_time is not None:
                self._wall_time = wall_time
            self._ask_in_result(request_id, entry, asked, state)
        else:
            self._ask_in_requests(request_id, entry, asked, state, deadline)
        return True

    def _questions(
        self, entry: Inbound, questions: Mapping[str, Any]
    ) -> dict[str, tuple[str, dict[str, Any]]]:
        """Every question as (method, params) for this request's revision, checked.

        Every question is checked before any is sent: a round is all or nothing, since a
        half-sent round would leave the client answering questions whose request failed.
        """
        if not isinstance(questions, Mapping) or not questions:
            raise LocalProtocolError("request_input needs at least one question")
        revision = self.protocol_version
        assert revision is not None
        modern = self.era is _MODERN
        asked: dict[str, tuple[str, dict[str, Any]]] = {}
        for key, question in questions.items():
            # Keys are strings because they become JSON object keys on the wire (SEP-2322's
            # `inputRequests` and `inputResponses` maps).
            if type(key) is not str or not key:
                raise LocalProtocolError("question keys are non-empty strings")
            method, params = _question_parts(question)
            if method not in INPUT_RESULT_TYPES:
                raise LocalProtocolError(
                    f"question {key!r} must be elicitation/create, "
                    "sampling/createMessage or roots/list"
                )
            if method == "elicitation/create":
                params = _elicitation_for(params, revision, modern)
            problem = capability_problem(entry.capabilities or {}, method, params)
            if problem is not None:
                raise LocalProtocolError(f"the client did not declare it: {problem[1]}")
            asked[key] = (method, params)
        return asked

    def _ask_in_result(
        self,
        request_id: RequestId,
        entry: Inbound,
        asked: dict[str, tuple[str, dict[str, Any]]],
        state: Any,
    ) -> None:
        """2026-07-28: the questions, and the seal that proves them, in the answer.

        The seal holds the kinds of the questions and the forms asked with, so that the
        retry's answers can be judged (right result type, content fitting the form) without
        any memory on this server: the retry may reach another replica.
        """
        kinds = {key: method for key, (method, _) in asked.items()}
        forms = {
            key: params["requestedSchema"]
            for key, (method, params) in asked.items()
            if method == "elicitation/create" and params.get("mode", "form") == "form"
        }
        token = self._seal_payload(entry, {"k": kinds, "s": state, "f": forms})
        requests = {
            key: {"method": method, "params": params} if params else {"method": method}
            for key, (method, params) in asked.items()
        }
        result = self._finish_result(
            entry.method,
            {"resultType": "input_required", "inputRequests": requests, "requestState": token},
        )
        self._end_inbound(
            request_id,
            entry,
            RequestInput.ASK_IN_RESULT,
            jr.encode_result(request_id, result),
            "result",
        )

    def _ask_in_requests(
        self,
        request_id: RequestId,
        entry: Inbound,
        asked: dict[str, tuple[str, dict[str, Any]]],
        state: Any,
        deadline: float | None,
    ) -> None:
        """Legacy: one server-to-client request per question; all of them or none.

        Room for every question is checked first (the in-flight cap, the output buffer),
        then the state moves, then the requests are queued: in that order nothing can fail
        after the request's state changed, so a refusal leaves it exactly as it was. The ids
        are minted in a row so the payloads can be encoded before anything is committed.
        """
        if len(self._outbound) + len(asked) > self.limits.max_outbound_in_flight:
            raise LocalProtocolError("too many requests in flight")
        first = self._next_id
        payloads = [
            jr.encode_request(self._mint_id(first + i), method, params)
            for i, (method, params) in enumerate(asked.values())
        ]
        size = sum(len(p) for p in payloads)
        if self._outgoing_bytes + size > self.limits.output_limit:
            raise LocalProtocolError("output buffer is full; drain data_to_send() first")
        round_ = _Round(request_id, entry.method, entry.params, entry.context, state)
        # Nothing below can raise (room and count were checked): move, then record.
        self._step(entry, "inbound", RequestInput.ASK)
        if self._rounds is EMPTY:
            self._rounds = {}
        if self._asking is EMPTY:
            self._asking = {}
        self._rounds[request_id] = round_
        for payload, (key, (method, params)) in zip(payloads, asked.items(), strict=True):
            wid = self._mint_id(self._next_id)
            self._next_id += 1
            self._queue(payload, "request", method, wid, request_id)
            # The form is kept with the question so the answer can be judged against it; a
            # URL question has no form, and its answer carries no content to judge.
            schema = params.get("requestedSchema") if params.get("mode", "form") == "form" else None
            round_.waiting[wid] = (key, method, schema)
            round_.order.append(key)
            # `_asking` maps our question id to its round, so an answer finds its round in
            # one look-up, whichever of several rounds (one per request) are out at once.
            self._asking[wid] = round_
            self._register_outbound(
                wid, Outbound(method, deadline, None, self._on_answer, request_id, wid)
            )

    def _on_answer(
        self, wid: RequestId, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> InputReceived | None:
        """One legacy question settled; the round's event once the last one has.

        An error our side made (a deadline, a lost connection) is "unanswered" and one the
        client sent is "refused": the handler re-asks in the first case and respects the
        user's no in the second. An answer that does not validate is treated as unanswered,
        with the reason, rather than handed to the handler as if the user had said it.
        """
        round_ = self._asking.pop(wid)
        key, method, schema = round_.waiting.pop(wid)
        if error is None:
            try:
                value = validator(INPUT_RESULT_TYPES[method])(result)
            except pydantic.ValidationError as exc:
                answer = InputAnswer(
                    method, "unanswered", None, INVALID_PARAMS, f"invalid answer: {describe(exc)}"
                )
            else:
                answer = _fit(method, schema, value)
        elif error.get("local") is LOCAL_FAILURE:
            answer = InputAnswer(method, "unanswered", None, error["code"], error["message"])
        else:
            answer = InputAnswer(
                method, "refused", None, error["code"], error["message"], error.get("data")
            )
        # The round waits for every question: the handler re-runs once with all the answers,
        # not once per answer, as the 2026-07-28 retry does.
        round_.answers[key] = answer
        if round_.waiting:
            return None
        del self._rounds[round_.request_id]
        # The request is open again: its handler re-runs with the answers, and may
        # answer, or ask another round.
        self._step(self._inbound[round_.request_id], "inbound", RequestInput.ANSWERS_IN)
        answers = {key: round_.answers[key] for key in round_.order}
        return InputReceived(
            round_.request_id, round_.method, round_.params, round_.context, answers, round_.state
        )

    def _withdraw(self, request_id: RequestId, reason: str) -> None:
        """The request the questions belong to has ended (cancelled, answered by the
        application): 2025-03-26 ("Cancellation") lets the sender cancel what it no longer
        needs, and the client should stop prompting its user for an answer nobody will read.
        """
        round_ = self._rounds.pop(request_id, None)
        if round_ is None:
            return
        for wid in round_.waiting:
            del self._asking[wid]
            entry = self._outbound.pop(wid)
            self._ended(wid, entry, RequestInput.CANCEL)
            # A full buffer costs only the courtesy: the late answer is ignored anyway.
            with contextlib.suppress(LocalProtocolError):
                self._queue_cancel(wid, reason)

    def _settle_local(self) -> list[Event]:
        """Only the server's own tables are cleared: the base class settles requests both ways
        and reports them in ConnectionClosed, so nothing here needs an event.
        """
        self._live_tasks.clear()
        # The connection is gone: its questions go with the requests they belong to,
        # which ConnectionClosed lists as abandoned.
        self._rounds.clear()
        self._asking.clear()
        self._subscribed.clear()
        self._subscribing.clear()
        return []

    def _seal(self, entry: Inbound, kinds: dict[str, str], state: Any) -> str | None:
        """Without keys a string state is passed through as the application's own (it may seal
        it itself, SEP-2322 allows any scheme); anything else would go out readable and
        unprotected, so it is refused.
        """
        sealer = self.config.request_state_sealer
        if sealer is None:
            if state is None or isinstance(state, str):
                return state  # the application manages (and protects) its own state
            raise LocalProtocolError(
                "configure ServerConfig.request_state_keys to attach non-string state"
            )
        return self._seal_payload(entry, {"k": kinds, "s": state})

    def _seal_payload(self, entry: Inbound, payload: dict[str, Any]) -> str:
        """Seal what was asked (and the application's state), bound to this request.

        Bound to the method, the target and its arguments, the principal and the time
        (SEP-2322's SHOULDs, and what the official SDK 2.3.0 binds): a state lifted from one
        call cannot be replayed into another tool, by another user, or after it expires.
        """
        sealer = self.config.request_state_sealer
        assert sealer is not None
        wall_time = self._wall_time
        assert wall_time is not None  # the request came with one: a sealing server insists
        target, arguments = _target_and_arguments(entry.method, entry.params)
        try:
            return sealer.seal(
                payload,
                method=entry.method,
                target=target,
                arguments=arguments,
                principal=self.principal,
                wall_time=wall_time,
            )
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"cannot seal requestState: {exc}") from None

    def send_log(
        self,
        level: str,
        data: Any,
        *,
        logger: str | None = None,
        related_request_id: RequestId | None = None,
    ) -> bool:
        """Send `notifications/message` if the level passes the client's threshold.

        Legacy: the session level from `logging/setLevel` (everything before one
        arrives). 2026-07-28: only for a request that asked with `logLevel`, on that
        request's stream. Returns whether anything was sent (never, once the
        connection closed).
        """
        if self.state in _ENDED:
            return False
        # The level is the application's: an unknown one is its bug (LocalProtocolError),
        # while a client's unknown level is refused on arrival with -32602.
        rank = LOG_RANK.get(level)
        if rank is None:
            raise LocalProtocolError(f"unknown log level {level!r}")
        # 2025-03-26 ("Logging"): servers that emit log messages MUST declare `logging`; a
        # client that did not see it may treat the notification as an error.
        if "logging" not in self.config.capabilities_wire:
            raise LocalProtocolError("the server did not advertise the logging capability")
        # 2026-07-28 (SPEC-NOTES 1.10): log messages are request-scoped, go only on that
        # request's stream and at or above the level it asked for, and a request without
        # `logLevel` gets none. Listen streams carry no logs at all.
        if self.era is _MODERN:
            entry = (
                self._inbound.get(related_request_id) if related_request_id is not None else None
            )
            if (
                entry is None
                or entry.log_level is None
                or entry.method == "subscriptions/listen"  # listen streams carry no logs
                or rank < LOG_RANK[entry.log_level]
            ):
                return False
        # A legacy server may log only once the session is up: 2025-03-26 ("Lifecycle")
        # lets it send pings and logging once it answered `initialize`, and nothing
        # before; a level set by `logging/setLevel` needs the session too.
        elif self.state is not State.READY:
            raise LocalProtocolError(f"connection is not ready (state {self.state})")
        # No `logging/setLevel` yet means every level passes: 2025-03-26 leaves the default
        # to the server, and sending all is what a client that never asked can filter
        # itself.
        elif self.log_level is not None and rank < LOG_RANK[self.log_level]:
            return False
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self._queue(
            jr.encode_notification("notifications/message", params),
            "notification",
            "notifications/message",
            None,
            related_request_id,
        )
        return True

    # ------------------------------------------------- subscriptions (2026)

    def acknowledge_subscription(
        self, request_id: RequestId, notifications: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Accept a `subscriptions/listen`: send the acknowledgement, first, on its stream.

        The honoured filter is what the client asked for, narrowed to what the
        server's capabilities allow and, if given, to `notifications`. Returns it
        (empty, with nothing sent, once the connection closed).

        2026-07-28 (SPEC-NOTES 1.8): the acknowledgement MUST come first on the stream and
        names the subset the server will honour, so the client knows at once what it will
        not get. Anything the server lacks the capability for, or (task ids) the extension
        the request did not declare, is left out rather than refused: the spec asks for the
        honoured subset, not an error.
        """
        if self.state in _ENDED:
            return {}
        entry = self._listen_entry(request_id)
        if entry.subscription is not None:
            raise LocalProtocolError("subscription already acknowledged")
        requested = to_wire(entry.params.notifications) or {}
        allowed = to_wire(notifications) if notifications is not None else None
        honoured: dict[str, Any] = {}
        # SPEC-NOTES 1.8: the acknowledgement lists the subset the server will honour. A
        # type the client did not ask for is never added, and one the server lacks the
        # capability for is dropped, so the filter can only narrow.
        for field, (_, cap) in _LISTEN_FILTER.items():
            value = requested.get(field)
            if not value or not has_capability(self.config.capabilities_wire, cap):
                continue
            # Task ids are honoured only for a request that declared the tasks extension
            # (SEP-2663), and only as a list of strings: anything else names no task.
            if field == "taskIds":
                if not isinstance(value, list) or not all(type(t) is str for t in value):
                    continue  # not a list of ids: nothing to honour
                if not extension_declared(entry.capabilities):
                    continue
            if allowed is not None:
                narrow = allowed.get(field)
                if not narrow:
                    continue
                # URI and task lists are intersected, so an application can limit a listen
                # to the resources (or tasks) this client may see.
                if field in ("resourceSubscriptions", "taskIds") and isinstance(narrow, list):
                    value = [item for item in value if item in narrow]
            honoured[field] = value
        # Set before the acknowledgement is queued: a `notify_subscribers` in the same turn
        # must already see the filter, and nothing may go out on the stream before the
        # acknowledgement (it is queued first on the stream's output).
        entry.subscription = honoured
        self._queue(
            jr.encode_notification(
                "notifications/subscriptions/acknowledged",
                {"notifications": honoured, "_meta": {META_SUBSCRIPTION_ID: request_id}},
            ),
            "notification",
            "notifications/subscriptions/acknowledged",
            None,
            request_id,
        )
        return honoured

    def notify_subscribers(self, method: str, params: Any = None) -> int:
        """Send a list_changed / resources/updated / tasks notification to whoever asked.

        `notifications/tasks` (the 2026-07-28 tasks extension; params a
        `DetailedTask`) goes to the listen streams whose acknowledged `taskIds`
        name its task, and never to a legacy session.

        2026-07-28: every listen stream whose acknowledged filter covers it, each
        copy naming its stream. Legacy: the session itself, when the server
        advertises the capability and, for `notifications/resources/updated`, when
        the client is subscribed to that URI (`resource_subscriptions`);
        `send_notification` sends one regardless. Returns how many streams or
        sessions got it: none once the connection closed (a no-op, like every
        `send_*` after a disconnect).
        """
        if self.state in _ENDED:
            return 0
        field = next((f for f, (m, _) in _LISTEN_FILTER.items() if m == method), None)
        if field is None:
            raise LocalProtocolError(f"{method} is not a subscription notification")
        if self.era is not _MODERN:
            return self._notify_session(field, method, to_wire(params))
        wire = to_wire(params) or {}
        sent = 0
        # Every listen stream is its own request in the inbound table: each gets its own
        # copy, tagged with its own id, since a client may hold several listens at once.
        for rid, entry in self._inbound.items():
            honoured = entry.subscription
            if not honoured or not honoured.get(field):
                continue
            if field == "resourceSubscriptions" and wire.get("uri") not in honoured[field]:
                continue
            if field == "taskIds" and wire.get("taskId") not in honoured[field]:
                continue
            # Every notification on a listen stream MUST carry the subscription id
            # (SPEC-NOTES 1.2): on stdio the client demultiplexes several listens by it.
            meta = {**(wire.get("_meta") or {}), META_SUBSCRIPTION_ID: rid}
            self._queue(
                jr.encode_notification(method, {**wire, "_meta": meta}),
                "notification",
                method,
                None,
                rid,
            )
            sent += 1
        return sent

    def _notify_session(self, field: str, method: str, wire: Any) -> int:
        """A legacy session has no filter of its own: the capability stands for the client's
        consent, and `resources/updated` also needs a subscription to that URI (2025-03-26
        "Resources").
        """
        if self.state is not State.READY or field == "taskIds":
            # No session yet (or no longer): nobody asked. `notifications/tasks` is
            # the extension's; a legacy session hears `notifications/tasks/status`.
            return 0
        if not has_capability(self.config.capabilities_wire, _LISTEN_FILTER[field][1]):
            return 0
        if field == "resourceSubscriptions":
            uri = wire.get("uri") if isinstance(wire, dict) else None
            if type(uri) is not str or uri not in self._subscribed:
                return 0
        self.send_notification(method, wire)
        return 1

    def end_subscription(self, request_id: RequestId) -> bool:
        """Close a listen stream gracefully: the final result, then (for byte
        streams) `notifications/cancelled` naming it, as the two spec pages ask.
        False, with nothing sent, once the connection closed.

        The two pages of 2026-07-28 disagree (SPEC-NOTES 1.8): the subscriptions page asks
        for a final result, the cancellation page for `notifications/cancelled` naming the
        listen id. Sending both, result first, satisfies a client that follows either.
        """
        if self.state in _ENDED:
            return False
        entry = self._listen_entry(request_id)
        result = self._finish_result(
            "subscriptions/listen",
            {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: request_id}},
        )
        self._end_inbound(
            request_id, entry, RequestInput.RESULT, jr.encode_result(request_id, result), "result"
        )
        # (see the docstring: the result, then the cancel, satisfies both spec pages)
        self._queue_cancel(request_id, "subscription ended")
        return True

    def _listen_entry(self, request_id: RequestId) -> Inbound:
        """A listen id that is not open is the application's mistake (LocalProtocolError): it
        must not be able to close or acknowledge a request that is not a listen.
        """
        entry = self._inbound.get(request_id)
        if entry is None or entry.method != "subscriptions/listen":
            raise LocalProtocolError(f"no subscriptions/listen request {request_id!r} is open")
        return entry


class _Round:
    """One request's questions out on a legacy session, until the last one settles.

    `order` keeps the keys in the order asked, so the InputReceived lists the answers as the
    handler wrote the questions, whatever order the client answered in.
    """

    __slots__ = (
        "answers",
        "context",
        "method",
        "order",
        "params",
        "request_id",
        "state",
        "waiting",
    )

    def __init__(
        self, request_id: RequestId, method: str, params: Any, context: Any, state: Any
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params
        self.context = context
        self.state = state
        # our request id -> (key, method, the form asked with or None)
        self.waiting: dict[RequestId, tuple[str, str, Any]] = {}
        self.answers: dict[str, InputAnswer] = {}
        self.order: list[str] = []


def _question_parts(question: Any) -> tuple[Any, dict[str, Any]]:
    """(method, params) of one question, given as a mapping or a request model.

    Models and mappings are both accepted so that an application can write questions with
    the `types` models or as plain dicts; both end as the same wire form.
    """
    if isinstance(question, Mapping):
        method = question.get("method")
        params = question.get("params")
        wire = {} if params is None else params if isinstance(params, Mapping) else to_wire(params)
        if not isinstance(wire, Mapping):
            raise LocalProtocolError("a question's params must be a mapping or a model")
        return method, dict(wire)
    wire = to_wire(question)
    if not isinstance(wire, dict):
        raise LocalProtocolError("a question is a {method, params} mapping or a request model")
    return wire.get("method"), dict(wire.get("params") or {})


def _elicitation_for(params: dict[str, Any], revision: str, modern: bool) -> dict[str, Any]:
    """An elicitation as this revision writes it: the one place its dialects differ.

    2025-06-18 elicitation is form only and has no `mode`; 2025-11-25 adds URL mode with
    `elicitationId` (which `notifications/elicitation/complete` refers to); 2026-07-28 keeps
    URL mode but drops the id, because the retry itself is the completion.
    """
    mode = params.get("mode", "form")
    if mode == "url":
        if not params.get("elicitationId"):
            raise LocalProtocolError(
                "a URL-mode question needs an elicitationId (sent where the revision has one)"
            )
        if revision == V2025_06_18:
            raise LocalProtocolError("URL-mode elicitation needs revision 2025-11-25 or later")
        if modern:
            params = {k: v for k, v in params.items() if k != "elicitationId"}
        return params
    if mode != "form":
        raise LocalProtocolError(f"unknown elicitation mode {mode!r}")
    schema = params.get("requestedSchema")
    # A model class is rendered for the question's own revision: the same model gives
    # 2025-06-18 and 2025-11-25 clients the form each can draw.
    if isinstance(schema, type) and issubclass(schema, pydantic.BaseModel):
        # Imported here, not at the top: pydantic's JSON Schema machinery is slow to load
        # and only a form question needs it.
        from ._elicitation import form_schema

        try:
            schema = form_schema(schema, revision=revision)
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(str(exc)) from None
        params = {**params, "requestedSchema": schema}
    check_form(params, revision)
    if revision == V2025_06_18:  # no modes yet: every elicitation is a form
        return {k: v for k, v in params.items() if k != "mode"}
    return {"mode": "form", **params}


def _fit(method: str, form: Any, value: Any) -> InputAnswer:
    """A validated answer, judged against the question: content only on an accepted form
    that fits it.

    2025-06-18 ("Elicitation"): content is present only when the action is "accept". A
    decline or cancel that carries content anyway has it removed, so a handler can never
    mistake data the user did not submit for an answer.
    """
    if method == "elicitation/create":
        if value.action != "accept":
            if value.content:
                value = value.model_copy(update={"content": None})
        elif form is not None:
            from ._elicitation import check_form_answer

            problem = check_form_answer(form, value.content)
            if problem is not None:
                return InputAnswer(
                    method,
                    "unanswered",
                    None,
                    INVALID_PARAMS,
                    f"the answer does not fit: {problem}",
                )
    return InputAnswer(method, "answered", value)


def _retry_answers(
    asked: Mapping[str, str], given: Mapping[str, Any], forms: Mapping[str, Any]
) -> dict[str, InputAnswer]:
    """A 2026-07-28 retry's answers, one per key the sealed state says was asked.

    A missing answer is "unanswered" rather than an error: SEP-2322 lets a client retry
    without some answers, and the advised reaction is to ask again.
    """
    answers: dict[str, InputAnswer] = {}
    for key, method in asked.items():
        value = given.get(key)
        if value is None:
            answers[key] = InputAnswer(method, "unanswered", None, None, "no answer in the retry")
        else:
            answers[key] = _fit(method, forms.get(key), value)
    return answers


def check_form(params: Mapping[str, Any], revision: str) -> None:
    """Refuse a form the client could not draw (`check_form_schema`), before it is sent.

    Checked before sending because a client that cannot draw a form can only decline it, and
    the user would never learn why.
    """
    if params.get("mode", "form") != "form":
        return
    from ._elicitation import check_form_schema

    try:
        check_form_schema(params.get("requestedSchema"), revision=revision)
    except ValueError as exc:
        raise LocalProtocolError(str(exc)) from None


def _wire_type(name: str) -> type:
    """A model class of `mcp_core.types`, imported on first use: it is the slowest import.

    The isinstance check on answers needs the class itself, not a validator: the answer
    arrived validated by the params model, and only its type is in question.
    """
    from . import types

    model: type = getattr(types, name)
    return model
