"""The type-confusion fuzzer: schema-built messages, one field at a time of the wrong type.

For every revision, both roles and both eras, a *target* is a connection in a
state where a class of messages is legal (a legacy session, a fresh server, a
2026-07-28 stream, a client waiting for its handshake answer ...). Its seeds
are the valid messages of `schema_messages` it may receive there; each seed is
mutated with `mcp_core.testing.mutations`, and every mutated message must give:

(1) no exception from `receive_data` (the connection was healthy, so not even
    `RemoteProtocolError`), and `check_invariants()` afterwards;
(2) every request with a readable id exactly one answer with that id (an error
    at once, or the application's answer when it was shown the request); no
    answer to a notification or a response; `null`/absent id when unreadable;
    a wrong type in params answered -32602 names the field;
(3) an answer to one of our requests settles it exactly once (a result, an
    error, a local failure, or in 2026-07-28 an input round or a retry), and
    anything that is not its answer leaves it in flight;
(4) the connection still serves a valid request afterwards (or, for a client
    whose handshake answer was broken, has either ended with the error on
    `ConnectionClosed` or completes the handshake when a real server answers).

Besides the engine's own targets there is a server with sealed requestState
(its seeds carry a valid token, so the answers behind it are checked too), and
the same inputs through Streamable HTTP (`type_confusion_http.py`).

A failure raises `Failure` with everything needed to replay it on a fresh
connection. Targets reuse one connection while its tables stay as set up (most
inputs are refused without side effects) and rebuild it otherwise, so an input
costs about one parse and one probe.
"""

from __future__ import annotations

import json
import random
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

import pydantic_core

from mcp_core import (
    INVALID_PARAMS,
    INVALID_REQUEST_STATE_MESSAGE,
    ClientConfig,
    ClientConnection,
    ConnectionClosed,
    Era,
    ErrorReceived,
    Event,
    Limits,
    MessageRejected,
    RemoteProtocolError,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    ServerConnection,
    SessionStarted,
    State,
)
from mcp_core._jsonrpc import dumps, is_request_id, parse
from mcp_core._versions import LEGACY_REVISIONS, MODERN_REVISIONS, lookup
from mcp_core.testing import default_server_config
from mcp_core.testing.mutations import (
    WRONG_TYPE_VALUES,
    Change,
    Mutation,
    apply,
    changes,
    sampled_mutations,
)

from .schema_messages import SEED_ID, Seed, seeds

Connection = ClientConnection | ServerConnection

MODERN = MODERN_REVISIONS[0]
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

# What the engine reads that a valid message may leave out: inserted, with
# every wrong-typed value, wherever an object of that name appears.
INSERT: dict[str, tuple[str, ...]] = {
    "_meta": (
        "progressToken",
        META_PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES,
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/logLevel",
        "io.modelcontextprotocol/serverInfo",
        META_SUBSCRIPTION_ID,
    ),
    "params": (
        "_meta",
        "mode",
        "tools",
        "toolChoice",
        "requestState",
        "inputResponses",
        "elicitationId",
    ),
    "result": ("_meta", "resultType", "inputRequests", "requestState"),
    "error": ("data",),
    "data": ("supported",),
    "": ("id", "params"),
}

CLIENT_CAPABILITIES: dict[str, Any] = {
    "roots": {"listChanged": True},
    "sampling": {"tools": {}, "context": {}},
    "elicitation": {"form": {}, "url": {}},
    # 2025-11-25: the client hosts tasks too (the server may ask tasks/get etc.).
    "tasks": {"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}},
}
# Every feature, tasks included (2025-11-25 tasks/* and the 2026-07-28 extension),
# so that every message of the schemas has a session in which it is legal.
SERVER_CONFIG = default_server_config(
    capabilities={
        **default_server_config().capabilities_wire,
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }
)

# Valid params for the requests a target sends so that a result can answer them.
SEND_PARAMS: dict[str, dict[str, Any] | None] = {
    "tools/call": {"name": "t"},
    "prompts/get": {"name": "p"},
    "resources/read": {"uri": "file:///fuzz/a.txt"},
    "resources/subscribe": {"uri": "file:///fuzz/a.txt"},
    "resources/unsubscribe": {"uri": "file:///fuzz/a.txt"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "p"},
        "argument": {"name": "a", "value": "v"},
    },
    "logging/setLevel": {"level": "info"},
    "subscriptions/listen": {"notifications": {"toolsListChanged": True}},
    "sampling/createMessage": {"messages": [], "maxTokens": 1},
    "elicitation/create": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
    "tasks/get": {"taskId": "t1"},
    "tasks/result": {"taskId": "t1"},
    "tasks/cancel": {"taskId": "t1"},
    "tasks/list": {},
    "tasks/update": {"taskId": "t1", "inputResponses": {}},
}
INTERNAL = frozenset({"initialize", "server/discover"})


def line(message: Any) -> bytes:
    # The engine's own encoder: compact, fast, and a lone surrogate travels as an
    # escape, as a hostile peer would send it.
    return dumps(message) + b"\n"


def envelope(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    return {META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: CLIENT_CAPABILITIES, **extra}


class Failure(AssertionError):
    """An input broke an invariant; the message says which, and how to replay it."""


def failure(target: str, seed: Seed, mutation: Mutation, exc: BaseException) -> Failure:
    """A Failure naming the target, the seed, the changes and the input itself."""
    what = str(exc) if isinstance(exc, Failure) else f"{type(exc).__name__}: {exc}"
    text = dumps(mutation.message).decode("utf-8", "replace")
    if len(text) > 2000:
        text = text[:2000] + "..."
    return Failure(
        f"{target} {seed.definition} [{mutation}]: {what}\n  input (ids before binding): {text}"
    )


# ============================================================== targets


@dataclass
class Live:
    """Ids a target keeps in flight, that seeds refer to (cancel and progress targets)."""

    cancel_id: Any = None  # a request of the peer's the receiver has not answered
    progress_token: Any = None  # the token of a request of the receiver's own
    subscription_id: Any = None  # a 2026-07-28 listen request of the client's
    in_flight: tuple[int, int] = (0, 0)
    handshake: bytes = b""  # what a connecting client sent, for a real server to answer
    now: float | None = None  # the wall clock a sealing server is given
    seal: Callable[[Seed], str | None] | None = None  # a valid requestState for a seed


@dataclass
class Target:
    """A connection state and the seeds that are legal in it."""

    receiver: str  # "server" | "client"
    revision: str
    state: str  # "session" | "fresh" | "stream" | "ready" | "handshake" | "probe" | "http-..."
    reuse: bool
    build: Callable[[], tuple[Connection, Live]] | None = None

    @property
    def name(self) -> str:
        return f"{self.receiver}/{self.revision}/{self.state}"

    @property
    def http(self) -> bool:
        return self.state.startswith("http-")

    def seeds(self) -> list[Seed]:
        return [s for s in _all_seeds(self.revision, self.receiver) if self._legal(s)]

    def _legal(self, seed: Seed) -> bool:
        state = self.state
        if state in ("handshake", "probe"):
            # Only the answer to the handshake request is legal before it completes.
            expected = "initialize" if state == "handshake" else "server/discover"
            return seed.kind == "error" or (seed.kind == "result" and seed.method == expected)
        if state in ("fresh", "http-fresh") and self.revision != MODERN:
            return seed.kind == "request" and seed.method == "initialize"
        if self.receiver == "server" and self.revision == MODERN:
            return seed.kind in ("request", "notification")  # it never sends a request
        if state == "http-ready" and seed.kind == "notification":
            return False  # a response body carries the answer, not notifications
        if seed.kind in ("result", "error"):
            return seed.kind == "error" or (
                seed.method not in INTERNAL and self._can_send(seed.method)
            )
        return True

    def _can_send(self, method: str | None) -> bool:
        return method is not None and lookup(self.receiver, method, self.revision) is not None  # type: ignore[arg-type]


@cache
def _all_seeds(revision: str, receiver: str) -> tuple[Seed, ...]:
    return seeds(revision, receiver)  # type: ignore[arg-type]


def _initialize(revision: str, rid: Any = "init") -> bytes:
    return line(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": CLIENT_CAPABILITIES,
                "clientInfo": {"name": "fuzz", "version": "1"},
            },
        }
    )


def _legacy_server(revision: str) -> Callable[[], tuple[Connection, Live]]:
    setup = (
        _initialize(revision)
        + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + line(
            {
                "jsonrpc": "2.0",
                "id": "live",
                "method": "tools/call",
                "params": {"name": "slow", "_meta": {"progressToken": "live"}},
            }
        )
    )

    def build() -> tuple[Connection, Live]:
        server = ServerConnection(SERVER_CONFIG)
        server.receive_data(setup)
        token = server.send_request("roots/list", progress=True)
        server.data_to_send()
        return server, Live("live", token, None, server.requests_in_flight)

    return build


def _fresh_server() -> tuple[Connection, Live]:
    return ServerConnection(SERVER_CONFIG), Live()


_MODERN_STREAM = line(
    {"jsonrpc": "2.0", "id": "d0", "method": "server/discover", "params": {"_meta": envelope()}}
) + line(
    {
        "jsonrpc": "2.0",
        "id": "live",
        "method": "tools/call",
        "params": {"name": "slow", "_meta": envelope(progressToken="live")},
    }
)


def _modern_server() -> tuple[Connection, Live]:
    server = ServerConnection(SERVER_CONFIG)
    server.receive_data(_MODERN_STREAM)
    server.data_to_send()
    return server, Live("live", None, None, server.requests_in_flight)


NOW = 1_700_000_000.0
SEALING_CONFIG = default_server_config(request_state_keys=(b"k" * 32,))
_ANSWER_KIND = {"action": "elicitation/create", "roots": "roots/list"}


@cache
def _sealed_state(method: str, target: str, arguments: str, kind: str) -> str:
    sealer = SEALING_CONFIG.request_state_sealer
    assert sealer is not None
    payload = {"k": {"k1": kind}, "s": {"step": 1}}
    return sealer.seal(
        payload,
        method=method,
        target=target,
        arguments=json.loads(arguments),
        principal=None,
        wall_time=NOW,
    )


def _seal_for(seed: Seed) -> str | None:
    """A requestState the sealing server accepts for the seed's (valid) call, asking
    for the kind of answer the seed's inputResponses holds, so the answers get checked."""
    params = seed.message.get("params")
    if seed.kind != "request" or type(params) is not dict or "requestState" not in params:
        return None
    answer = (params.get("inputResponses") or {}).get("k1", {})
    kind = next((v for k, v in _ANSWER_KIND.items() if k in answer), "sampling/createMessage")
    target = params.get("uri") if seed.method == "resources/read" else params.get("name")
    assert isinstance(target, str) and seed.method is not None
    arguments = json.dumps(params.get("arguments") or {}, sort_keys=True)
    return _sealed_state(seed.method, target, arguments, kind)


def _sealing_server() -> tuple[Connection, Live]:
    server = ServerConnection(SEALING_CONFIG)
    server.receive_data(_MODERN_STREAM, wall_time=NOW)
    server.data_to_send()
    return server, Live("live", None, None, server.requests_in_flight, now=NOW, seal=_seal_for)


@cache
def handshake_reply(mode: str) -> bytes:
    """What a full server answers to a client's connect() in `mode`, recorded once."""
    client = ClientConnection(ClientConfig(mode=mode, capabilities=CLIENT_CAPABILITIES))
    client.connect()
    reply = complete_handshake(client, ServerConnection(SERVER_CONFIG))
    return reply


def complete_handshake(
    client: ClientConnection, server: ServerConnection, sent: bytes = b""
) -> bytes:
    """Pipe the client to a real server until both are quiet; returns what the server said.

    `sent` is what the client already sent (and the server has not seen yet)."""
    said = b""
    request = sent + client.data_to_send()
    for _ in range(10):
        if not request:
            break
        server.receive_data(request)
        answer = server.data_to_send()
        if answer:  # (b"" would mean the end of the stream)
            said += answer
            client.receive_data(answer)
        request = client.data_to_send()
    return said


def _legacy_client(revision: str) -> Callable[[], tuple[Connection, Live]]:
    config = ClientConfig(mode=revision, capabilities=CLIENT_CAPABILITIES)
    live_request = line({"jsonrpc": "2.0", "id": "live", "method": "roots/list"})

    def build() -> tuple[Connection, Live]:
        client = ClientConnection(config)
        client.connect()
        client.data_to_send()
        client.receive_data(handshake_reply(revision))
        assert client.state == State.READY
        token = client.send_request("tools/call", {"name": "slow"}, progress=True)
        client.receive_data(live_request)
        client.data_to_send()
        return client, Live("live", token, None, client.requests_in_flight)

    return build


def _modern_client() -> tuple[Connection, Live]:
    client = ClientConnection(ClientConfig(mode="auto", capabilities=CLIENT_CAPABILITIES))
    client.connect()
    client.data_to_send()
    client.receive_data(handshake_reply("auto"))
    assert client.state == State.READY and client.era is Era.MODERN
    token = client.send_request("tools/call", {"name": "slow"}, progress=True)
    listen = client.send_request("subscriptions/listen", SEND_PARAMS["subscriptions/listen"])
    client.data_to_send()
    return client, Live(listen, token, listen, client.requests_in_flight)


def _handshake_client(mode: str) -> Callable[[], tuple[Connection, Live]]:
    config = ClientConfig(mode=mode, capabilities=CLIENT_CAPABILITIES)

    def build() -> tuple[Connection, Live]:
        client = ClientConnection(config)
        client.connect()
        return client, Live(handshake=client.data_to_send())

    return build


@cache
def targets() -> tuple[Target, ...]:
    """Every (receiver, revision, state) the fuzzer feeds."""
    out: list[Target] = []
    for rev in LEGACY_REVISIONS:
        out.append(Target("server", rev, "fresh", False, _fresh_server))
        out.append(Target("server", rev, "session", True, _legacy_server(rev)))
        out.append(Target("client", rev, "handshake", False, _handshake_client(rev)))
        out.append(Target("client", rev, "session", True, _legacy_client(rev)))
    out.append(Target("server", MODERN, "fresh", False, _fresh_server))
    out.append(Target("server", MODERN, "stream", True, _modern_server))
    out.append(Target("server", MODERN, "sealed", True, _sealing_server))
    out.append(Target("client", MODERN, "probe", False, _handshake_client("auto")))
    out.append(Target("client", MODERN, "ready", True, _modern_client))
    # The same inputs through Streamable HTTP (tests/fuzz/type_confusion_http.py).
    for rev in LEGACY_REVISIONS:
        out.append(Target("server", rev, "http-fresh", False))
        out.append(Target("server", rev, "http-session", True))
    out.append(Target("server", MODERN, "http-post", True))
    out.append(Target("client", MODERN, "http-ready", True))
    return tuple(out)


# ============================================================== one input


def _replace_if(message: Any, path: tuple[str, ...], expected: Any, new: Any) -> Any:
    """`message` with the value at `path` set to `new` if it is still `expected`
    (a mutation may have changed or removed it: then it stays as mutated)."""
    node = message
    for part in path:
        if type(node) is not dict or part not in node:
            return message
        node = node[part]
    if node != expected or type(node) is not type(expected):
        return message
    out = dict(message)
    cursor = out
    for part in path[:-1]:
        cursor[part] = dict(cursor[part])
        cursor = cursor[part]
    cursor[path[-1]] = new
    return out


def _bind(message: Any, seed: Seed, rid: Any, live: Live) -> Any:
    """Put the ids of this connection where the seed holds placeholders."""
    message = _replace_if(message, ("id",), SEED_ID, rid)
    if seed.method == "notifications/progress" and live.progress_token is not None:
        message = _replace_if(message, ("params", "progressToken"), "x", live.progress_token)
    if seed.method == "notifications/cancelled" and live.cancel_id is not None:
        message = _replace_if(message, ("params", "requestId"), "x", live.cancel_id)
    if live.subscription_id is not None:
        message = _replace_if(
            message, ("params", "_meta", META_SUBSCRIPTION_ID), "x", live.subscription_id
        )
    if live.seal is not None:
        token = live.seal(seed)
        if token is not None:
            message = _replace_if(message, ("params", "requestState"), "x", token)
    return message


def _output(conn: Connection, data: bytes | None = None) -> list[dict[str, Any]]:
    out = []
    for raw in (conn.data_to_send() if data is None else data).split(b"\n"):
        if raw:
            obj = pydantic_core.from_json(raw, allow_inf_nan=False)  # strict JSON only
            if type(obj) is not dict or obj.get("jsonrpc") != "2.0":
                raise Failure(f"output is not a JSON-RPC object: {raw!r}")
            out.append(obj)
    return out


def _check_names_the_field(mutation: Mutation, replies: list[dict[str, Any]]) -> None:
    """A wrong type in params gets a -32602 that names the field: one of the keys on
    the changed path (or the uniform requestState refusal, which must not say more).

    For single replacements and insertions only: a deletion may rightly surface
    another field's error (no `mode` means form, which then lacks its schema).
    A container put there may be named by one of its own keys instead.
    """
    if len(mutation.changes) != 1 or len(replies) != 1:
        return
    change = mutation.changes[0]
    error = replies[0].get("error")
    if (
        change.kind == "delete"
        or not change.path
        or change.path[0] != "params"
        or error is None
        or error["code"] != INVALID_PARAMS
    ):
        return
    text = error["message"]
    keys = [part for part in change.path if isinstance(part, str)]
    # (Inner keys of one letter would match nearly any message: not counted.)
    keys += [k for k in _keys_inside(mutation.message, change.path) if len(k) > 1]
    if text != INVALID_REQUEST_STATE_MESSAGE and not any(key in text for key in keys):
        raise Failure(f"-32602 does not name the field {keys[-1]!r}: {text!r}")


def _keys_inside(message: Any, path: tuple[Any, ...]) -> list[str]:
    """Every object key within the value at `path` (a container put there)."""
    node = message
    for part in path:
        node = node[part]
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _check_reply_shape(reply: dict[str, Any]) -> None:
    if ("result" in reply) == ("error" in reply):
        raise Failure(f"a reply needs exactly one of result and error: {reply}")
    if "error" in reply:
        error = reply["error"]
        if not (type(error.get("code")) is int and type(error.get("message")) is str):
            raise Failure(f"malformed error object in a reply: {reply}")


_CREATED_TASK: Final = {
    "task": {
        "taskId": "fuzz-task",
        "status": "working",
        "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z",
        "ttl": 1000,
    }
}


def result_for(conn: Connection, event: RequestReceived) -> dict[str, Any]:
    """The application's (empty) result; a task-augmented request (2025-11-25
    `task`) is answered with its task, as the core insists."""
    task = getattr(event.params, "task", None) if conn.era is not Era.MODERN else None
    return dict(_CREATED_TASK) if task is not None else {}


def _answer(conn: Connection, event: RequestReceived) -> None:
    """The application answers everything it is shown (result or error, by id hash)."""
    if hash(repr(event.request_id)) % 3:
        sent = conn.send_result(event.request_id, result_for(conn, event))
    else:
        sent = conn.send_error(event.request_id, -32603, "fuzz says no")
    if not sent:
        raise Failure(f"a request just reported could not take an answer: {event!r}")


UNREADABLE: Final = object()  # what a line the JSON parser refuses is, for the checks


def _readable(data: bytes, message: Any, limits: Limits) -> Any:
    """`message`, or UNREADABLE when its bytes do not parse (a lone surrogate escape,
    say): then nothing in it can be read, the id included."""
    try:
        parse(data, limits)
    except RemoteProtocolError:
        return UNREADABLE
    return message


def _well_formed_request(message: dict[str, Any], conn: Connection) -> bool:
    method = message.get("method")
    return (
        message.get("jsonrpc") == "2.0"
        and type(method) is str
        and len(method) <= conn.limits.max_method_length
        and is_request_id(message.get("id"))
        and "result" not in message
        and "error" not in message
        and type(message.get("params", {})) is dict
    )


def _expected_replies(message: Any, conn: Connection) -> tuple[str, Any]:
    """("none", None), ("one", id), ("modern-client", id) or ("batch", size)."""
    if type(message) is list:
        return "batch", len(message)
    if type(message) is not dict:
        return "one", None
    if "method" not in message:
        if "result" in message or "error" in message:
            return "none", None
        rid = message.get("id")
        return "one", rid if is_request_id(rid) else None
    if "id" not in message:
        return "none", None
    rid = message["id"]
    modern_client = isinstance(conn, ClientConnection) and conn.era is Era.MODERN
    if modern_client and _well_formed_request(message, conn):
        return "modern-client", rid  # (a broken one gets the usual -32600)
    return "one", rid if is_request_id(rid) else None


@dataclass
class Runner:
    """Feeds inputs to one target, reusing its connection while that is safe."""

    target: Target
    fed: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    _conn: Connection | None = None
    _live: Live = field(default_factory=Live)
    _probes: int = 0

    def connection(self) -> tuple[Connection, Live]:
        if self._conn is None or not self.target.reuse:
            assert self.target.build is not None
            self._conn, self._live = self.target.build()
        return self._conn, self._live

    def feed(self, seed: Seed, mutation: Mutation) -> str:
        conn, live = self.connection()
        try:
            label = self._feed(conn, live, seed, mutation)
        except Exception as exc:
            self._conn = None
            raise failure(self.target.name, seed, mutation, exc) from exc
        self.fed += 1
        self.outcomes[label] += 1
        if self.target.reuse and not self._pristine(conn, live):
            self._conn = None
        return label

    def _pristine(self, conn: Connection, live: Live) -> bool:
        if conn.state != State.READY or conn.requests_in_flight != live.in_flight:
            return False
        if isinstance(conn, ServerConnection):
            return conn.log_level is None
        return True

    def _feed(self, conn: Connection, live: Live, seed: Seed, mutation: Mutation) -> str:
        message = mutation.message
        ours: Any = None
        if seed.kind in ("result", "error"):
            ours = self._send_ours(conn, seed)
            conn.data_to_send()
            rid = ours
        else:
            rid = "fz"
        message = _bind(message, seed, rid, live)
        data = line(message)
        message = _readable(data[:-1], message, conn.limits)
        state_before = conn.state
        events = conn.receive_data(data, wall_time=live.now)
        conn.check_invariants()
        for event in events:
            if isinstance(event, RequestReceived):
                _answer(conn, event)
        conn.check_invariants()
        sent = conn.data_to_send()
        out = _output(conn, sent)
        replies = [m for m in out if "method" not in m]
        for reply in replies:
            _check_reply_shape(reply)
        label = self._check_replies(conn, message, events, replies)
        _check_names_the_field(mutation, replies)
        if ours is not None and self.target.state not in ("handshake", "probe"):
            label = self._check_settled(conn, message, events, out, ours, seed) or label
        self._check_alive(conn, state_before, events, sent)
        return label

    def _send_ours(self, conn: Connection, seed: Seed) -> Any:
        if self.target.state in ("handshake", "probe"):
            return 0  # connect() sent the handshake request as id 0
        method = seed.method or ("ping" if self.target.revision != MODERN else "tools/list")
        return conn.send_request(method, SEND_PARAMS.get(method))

    def _check_replies(
        self, conn: Connection, message: Any, events: list[Event], replies: list[dict[str, Any]]
    ) -> str:
        kind, rid = _expected_replies(message, conn)
        if kind == "none":
            if replies:
                raise Failure(f"a notification or response got a reply: {replies}")
            rejected = [e for e in events if isinstance(e, MessageRejected)]
            return "rejected-event" if rejected else "no-reply"
        if kind == "batch":
            if len(replies) > max(1, rid):
                raise Failure(f"more replies than batch items: {replies}")
            return "batch"
        if kind == "modern-client":
            if replies or not any(
                isinstance(e, MessageRejected) and e.request_id == rid for e in events
            ):
                raise Failure(f"a 2026-07-28 client must only report a request: {replies}")
            return "rejected-event"
        if len(replies) != 1:
            raise Failure(f"exactly one reply expected, got {replies}")
        reply = replies[0]
        got = reply.get("id")
        if got != rid or type(got) is not type(rid):
            raise Failure(f"reply id {got!r} does not echo {rid!r}: {reply}")
        if "error" in reply:
            return f"error {reply['error']['code']}"
        return "result"

    def _check_settled(
        self,
        conn: Connection,
        message: Any,
        events: list[Event],
        out: list[dict[str, Any]],
        ours: Any,
        seed: Seed,
    ) -> str | None:
        ended = [
            e
            for e in events
            if isinstance(e, (ResponseReceived, ErrorReceived, RequestFailed))
            and e.request_id == ours
        ]
        rounds = [
            e
            for e in events
            if isinstance(e, RequestReceived) and e.context.related_request_id == ours
        ]
        retried = [m for m in out if "method" in m and "id" in m and m["method"] == seed.method]
        targeted = (
            type(message) is dict
            and "method" not in message
            and ("result" in message or "error" in message)
            and message.get("id") == ours
            and type(message.get("id")) is type(ours)
        )
        if targeted:
            if len(ended) + (1 if rounds or retried else 0) != 1:
                raise Failure(f"our request must end exactly once, got {ended} {rounds}")
        elif ended:
            raise Failure(f"a message that is not its answer settled our request: {ended}")
        if not ended:
            conn.cancel_request(ours)  # still in flight (or asking for input): tidy up
            conn.data_to_send()
        if ended:
            return type(ended[0]).__name__
        return "input-round" if rounds or retried else None

    def _check_alive(
        self, conn: Connection, state_before: str, events: list[Event], sent: bytes
    ) -> None:
        """The next valid request is served normally."""
        if conn.state == State.ERROR:
            closed = [e for e in events if isinstance(e, ConnectionClosed)]
            handshake = self.target.state in ("handshake", "probe")
            if not (handshake and closed and closed[-1].error is not None):
                raise Failure(f"the connection failed (from {state_before}): {events}")
            return
        if conn.state == State.CLOSED:
            raise Failure(f"the connection closed on a message: {events}")
        self._probes += 1
        probe_id = f"probe-{self._probes}"
        if isinstance(conn, ServerConnection):
            self._probe_server(conn, probe_id)
        else:
            # A connecting client may have moved on (a fallback initialize): a real
            # server gets the first request and whatever followed it.
            self._probe_client(conn, self._live.handshake + sent)

    def _probe_server(self, server: ServerConnection, probe_id: str) -> None:
        if server.state == State.AWAITING_FIRST:
            if self.target.revision == MODERN:
                pass  # a 2026-07-28 request is served from any state
            else:
                events = server.receive_data(_initialize(self.target.revision, "re-init"))
                if not any(isinstance(e, SessionStarted) for e in events):
                    raise Failure(f"a valid initialize was refused afterwards: {events}")
                server.data_to_send()
        params = {"_meta": envelope()} if server.era is not Era.LEGACY else None
        probe: dict[str, Any] = {"jsonrpc": "2.0", "id": probe_id, "method": "tools/list"}
        if params is not None:
            probe["params"] = params
        events = server.receive_data(line(probe), wall_time=self._live.now)
        shown = [e for e in events if isinstance(e, RequestReceived) and e.request_id == probe_id]
        if len(shown) != 1:
            raise Failure(f"the probe request was not served: {events} {server.data_to_send()!r}")
        server.send_result(probe_id, {"tools": []})
        replies = _output(server)
        if [r.get("id") for r in replies] != [probe_id] or "result" not in replies[0]:
            raise Failure(f"the probe got {replies}")
        server.check_invariants()

    def _probe_client(self, client: ClientConnection, handshake: bytes) -> None:
        if client.state == State.CONNECTING:
            complete_handshake(client, ServerConnection(SERVER_CONFIG), handshake)
            if client.state != State.READY:
                raise Failure(f"the handshake did not complete afterwards ({client.state})")
        # A request the server cannot have refused to offer: the answer may have
        # advertised fewer capabilities than the real server has.
        result: dict[str, Any] = {}
        if client.era is Era.LEGACY:
            rid = client.send_request("ping")
        else:
            result["resultType"] = "complete"
            rid = client.send_request("subscriptions/listen", SEND_PARAMS["subscriptions/listen"])
        client.data_to_send()
        events = client.receive_data(line({"jsonrpc": "2.0", "id": rid, "result": result}))
        if not any(isinstance(e, ResponseReceived) and e.request_id == rid for e in events):
            raise Failure(f"the probe request was not answered: {events}")
        if _output(client):
            raise Failure("the client replied to a response")
        client.check_invariants()


# ============================================================== input plans

Item = tuple[Target, Seed, Mutation]

# One value of each JSON type, for the quick run: the type is what breaks code.
QUICK_VALUES = tuple(
    v
    for v in WRONG_TYPE_VALUES
    if v[0] in {"null", "true", "negative", "float", "string", "empty-list", "object"}
)


def _key(seed: Seed, change: Change) -> tuple[Any, ...]:
    return (seed.kind, seed.method, change.path, change.kind, change.label)


@cache
def _quick_changes(revision: str, receiver: str, definition: str) -> tuple[Change, ...]:
    seed = next(s for s in _all_seeds(revision, receiver) if s.definition == definition)
    return tuple(changes(seed.message, insert=INSERT, values=QUICK_VALUES))


def full_plan() -> Iterator[Item]:
    """Every single change of every seed of every target, each (method, path, change)
    once per target (seeds of one method differ only where their unions branched)."""
    for target in targets():
        seen: set[tuple[Any, ...]] = set()
        for seed in target.seeds():
            for change in changes(seed.message, insert=INSERT):
                key = _key(seed, change)
                if key not in seen:
                    seen.add(key)
                    yield target, seed, apply(seed.message, change)


# Through HTTP an input costs about ten times as much (two HTTP layers, a fresh
# exchange per POST), so the quick run sends one in this many keys that way.
HTTP_SHARE = 8


@cache
def quick_changes() -> tuple[tuple[Target, Seed, Change], ...]:
    """The default run's deterministic share, as (target, seed, change), not built.

    Every (receiver, era, method, path) with one value of each other JSON type
    (and deleted) is fed to one of the engine targets that can receive it,
    chosen by a stable hash (so each revision and state gets its share, the same
    one every run); one key in `HTTP_SHARE` also goes through HTTP. Building the
    messages is left to `quick_plan` and `quick_shard`: a worker that feeds one
    shard builds only that shard's.
    """
    core: dict[tuple[Any, ...], list[tuple[Target, Seed, Change]]] = {}
    http: dict[tuple[Any, ...], list[tuple[Target, Seed, Change]]] = {}
    for target in targets():
        era = "modern" if target.revision == MODERN else "legacy"
        table = http if target.http else core
        for seed in target.seeds():
            for change in _quick_changes(seed.revision, seed.receiver, seed.definition):
                key = (target.receiver, era, *_key(seed, change))
                found = table.setdefault(key, [])
                if not found or found[-1][0] is not target:
                    found.append((target, seed, change))
    chosen: list[tuple[Target, Seed, Change]] = []
    for table, share in ((core, 1), (http, HTTP_SHARE)):
        for key, candidates in table.items():
            digest = zlib.crc32(repr(key).encode())
            if digest % share == 0:
                chosen.append(candidates[(digest // share) % len(candidates)])
    return tuple(chosen)


def _built(chosen: tuple[tuple[Target, Seed, Change], ...]) -> tuple[Item, ...]:
    return tuple((t, s, apply(s.message, c, QUICK_VALUES)) for t, s, c in chosen)


@cache
def quick_plan() -> tuple[Item, ...]:
    """Every input of `quick_changes`, built."""
    return _built(quick_changes())


def quick_shard(shard: int, shards: int) -> tuple[Item, ...]:
    """The inputs `quick_plan()[shard::shards]`, building only those."""
    return _built(quick_changes()[shard::shards])


def sampled_plan(seed: int, count: int, *, http_share: int = HTTP_SHARE) -> Iterator[Item]:
    """`count` random multi-change mutations, reproducible from `seed`: a random
    target (one in `http_share` through HTTP), seed and stack of changes."""
    rng = random.Random(seed)
    core = [(t, s) for t in targets() if not t.http for s in t.seeds()]
    http = [(t, s) for t in targets() if t.http for s in t.seeds()]
    for _ in range(count):
        pool = http if rng.randrange(http_share) == 0 else core
        target, base = pool[rng.randrange(len(pool))]
        for mutation in sampled_mutations(base.message, rng.randrange, count=1, insert=INSERT):
            yield target, base, mutation


@dataclass
class Run:
    """Feeds items to their targets (one runner each) and counts what happened."""

    runners: dict[str, Any] = field(default_factory=dict)

    def feed(self, item: Item) -> str:
        target, seed, mutation = item
        runner = self.runners.get(target.name)
        if runner is None:
            runner = self.runners[target.name] = make_runner(target)
        label: str = runner.feed(seed, mutation)
        return label

    @property
    def fed(self) -> int:
        return sum(r.fed for r in self.runners.values())

    def outcomes(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for runner in self.runners.values():
            total.update(runner.outcomes)
        return total


def make_runner(target: Target) -> Any:
    """The runner that feeds `target`: the engine directly, or through HTTP."""
    if not target.http:
        return Runner(target)
    from .type_confusion_http import HTTPClientRunner, HTTPServerRunner

    if target.receiver == "client":
        return HTTPClientRunner()
    return HTTPServerRunner(target.revision, target.state.removeprefix("http-"))


def replay(target_name: str, seed: Seed, mutation: Mutation) -> str:
    """Feed one input to a fresh runner of the named target (for reproducing)."""
    target = next(t for t in targets() if t.name == target_name)
    label: str = make_runner(target).feed(seed, mutation)
    return label


__all__ = [
    "Failure",
    "Run",
    "Runner",
    "Target",
    "full_plan",
    "make_runner",
    "quick_changes",
    "quick_plan",
    "quick_shard",
    "replay",
    "sampled_plan",
    "targets",
]
