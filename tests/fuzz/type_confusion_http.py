"""The type-confusion fuzzer over Streamable HTTP: the same inputs, as POST bodies.

The HTTP layers read the body themselves before the engine does (the id that
routes the answer, the method and name mirrored in headers, the tools a
`tools/list` result announces), so type confusion must be checked there too:

* server (`HTTPServerEndpoint`): a 2026-07-28 POST with headers mirrored from
  the valid message, a legacy `initialize` POST, and POSTs inside a legacy
  session (requests, notifications, answers to the server's own requests).
  Every POST gets exactly one complete HTTP response; a request's answer, when
  the body carries one, names its id (or null when the HTTP layer refused the
  message as a whole); nothing is left in flight; and a valid POST afterwards
  is answered.
* client (`HTTPClientEndpoint`, 2026-07-28): each mutated result or error is
  the body of the response to a request; whatever it holds, that request ends
  exactly once, and the next one is answered.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_core import (
    ClientConfig,
    ClientConnection,
    ErrorReceived,
    Event,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    State,
)
from mcp_core._jsonrpc import dumps, is_request_id, parse
from mcp_core._sse import SSEDecoder
from mcp_core.http import (
    HTTPClientEndpoint,
    HTTPServerEndpoint,
    MCPEvent,
    mirrored_request_headers,
)
from mcp_core.testing.mutations import Mutation

from .schema_messages import Seed
from .type_confusion import (
    CLIENT_CAPABILITIES,
    MODERN,
    SEND_PARAMS,
    SERVER_CONFIG,
    Failure,
    Live,
    _bind,
    _readable,
    envelope,
    failure,
    result_for,
)

ACCEPT = "application/json, text/event-stream"
WALL = 1_700_000_000.0


@dataclass
class Reply:
    """One HTTP response as the client saw it."""

    status: int
    headers: dict[str, str]
    messages: list[Any]  # the JSON-RPC messages of the body (JSON or SSE)


def _request_bytes(body: bytes, headers: list[tuple[str, str]]) -> bytes:
    """A POST as a client writes it (by hand: h11 on both ends would double the cost)."""
    head = (
        "POST /mcp HTTP/1.1\r\nhost: localhost:8000\r\n"
        f"accept: {ACCEPT}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
    )
    head += "".join(f"{name}: {value}\r\n" for name, value in headers)
    return (head + "\r\n").encode("latin-1") + body


def _read_reply(data: bytes) -> Reply:
    """Exactly one complete HTTP/1.1 response (Content-Length or chunked) in `data`."""
    if not data:
        raise Failure("no HTTP response at all (the request hangs until the client gives up)")
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        raise Failure(f"an unfinished HTTP response head: {data!r}")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if "content-length" in headers:
        size = int(headers["content-length"])
        body, rest = rest[:size], rest[size:]
        if len(body) != size:
            raise Failure(f"a truncated HTTP response body: {data!r}")
    elif headers.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                rest = rest[2:]
                break
            body, rest = body + rest[:size], rest[size + 2 :]
            if not rest:
                raise Failure(f"an HTTP response that never ends: {data!r}")
    else:
        raise Failure(f"an HTTP response without framing: {data!r}")
    if rest:
        raise Failure(f"more than one HTTP response to one request: {data!r}")
    messages: list[Any] = []
    kind = headers.get("content-type", "").split(";")[0].strip()
    if kind == "application/json" and body.strip():
        messages.append(parse(body))
    elif kind == "text/event-stream":
        messages += [parse(e.data) for e in SSEDecoder().feed(body + b"\n\n") if e.data]
    return Reply(status, headers, messages)


def _answer(event: MCPEvent) -> None:
    inner = event.event
    if isinstance(inner, RequestReceived):
        if hash(repr(inner.request_id)) % 3:
            sent = event.connection.send_result(
                inner.request_id, result_for(event.connection, inner)
            )
        else:
            sent = event.connection.send_error(inner.request_id, -32603, "fuzz says no")
        if not sent:
            raise Failure(f"a request just reported could not take an answer: {inner!r}")


def _responses(messages: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        items = message if type(message) is list else [message]
        for item in items:
            if type(item) is not dict or item.get("jsonrpc") != "2.0":
                raise Failure(f"the body holds something that is not JSON-RPC: {item!r}")
            if "method" not in item:
                if ("result" in item) == ("error" in item):
                    raise Failure(f"a reply needs exactly one of result and error: {item}")
                out.append(item)
    return out


# ================================================================ server side


@dataclass
class _ServerSide:
    endpoint: HTTPServerEndpoint
    session_id: str | None
    version: str
    live: Live = field(default_factory=Live)


class HTTPServerRunner:
    """POSTs mutated client messages to an `HTTPServerEndpoint` in one state."""

    def __init__(self, revision: str, state: str) -> None:
        self.revision = revision
        self.state = state  # "post" (2026-07-28), "fresh" (legacy initialize), "session"
        self.fed = 0
        self.outcomes: Counter[str] = Counter()
        self._side: _ServerSide | None = None
        self._ids = itertools.count(1)
        self._headers: dict[str, list[tuple[str, str]]] = {}

    def _build(self) -> _ServerSide:
        counter = itertools.count(1)
        endpoint = HTTPServerEndpoint(SERVER_CONFIG, new_session_id=lambda: f"sid-{next(counter)}")
        side = _ServerSide(endpoint, None, self.revision)
        if self.state == "session":
            reply, _ = self._post(side, _initialize_body(self.revision), [])
            side.session_id = reply.headers.get("mcp-session-id")
            if reply.status != 200 or side.session_id is None:
                raise Failure(f"the session setup failed: {reply}")
            self._post(side, dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), [])
            side.live.in_flight = self._conn(side).requests_in_flight
        return side

    def _conn(self, side: _ServerSide) -> Any:
        assert side.session_id is not None
        return side.endpoint.sessions[side.session_id]

    def _session_headers(self, side: _ServerSide) -> list[tuple[str, str]]:
        if side.session_id is None:
            return []
        return [("mcp-session-id", side.session_id), ("mcp-protocol-version", side.version)]

    def _post(
        self, side: _ServerSide, body: bytes, headers: list[tuple[str, str]]
    ) -> tuple[Reply, list[Event]]:
        http = side.endpoint.new_connection(now=0.0)
        data = _request_bytes(body, [*self._session_headers(side), *headers])
        events = http.receive_data(data, now=0.0, wall_time=WALL)
        for event in events:
            if isinstance(event, MCPEvent):
                _answer(event)
        side.endpoint.pump()
        reply = _read_reply(http.data_to_send())
        return reply, [e.event if isinstance(e, MCPEvent) else e for e in events]

    def _mirrored(self, seed: Seed) -> list[tuple[str, str]]:
        """The 2026-07-28 headers of the *valid* message (the body may then disagree)."""
        if self.state != "post":
            return []
        found = self._headers.get(seed.definition)
        if found is None:
            message = seed.message
            found = mirrored_request_headers(message["method"], message.get("params"), MODERN)
            self._headers[seed.definition] = found
        return found

    def feed(self, seed: Seed, mutation: Mutation) -> str:
        if self._side is None or self.state != "session":
            self._side = self._build()
        side = self._side
        try:
            label = self._feed(side, seed, mutation.message)
        except Exception as exc:
            self._side = None
            name = f"server/{self.revision}/http-{self.state}"
            raise failure(name, seed, mutation, exc) from exc
        self.fed += 1
        self.outcomes[label] += 1
        if self.state == "session" and not self._pristine(side):
            self._side = None
        return label

    def _pristine(self, side: _ServerSide) -> bool:
        sessions = side.endpoint.sessions
        if side.session_id not in sessions:
            return False
        conn = sessions[side.session_id]
        return (
            conn.state == State.READY
            and conn.requests_in_flight == side.live.in_flight
            and conn.log_level is None
        )

    def _feed(self, side: _ServerSide, seed: Seed, message: Any) -> str:
        ours: Any = None
        if seed.kind in ("result", "error"):
            conn = self._conn(side)
            method = seed.method or "ping"
            ours = conn.send_request(method, SEND_PARAMS.get(method))
            side.endpoint.pump()
            rid = ours
        else:
            rid = f"fz-{next(self._ids)}"
        message = _bind(message, seed, rid, side.live)
        body = dumps(message)
        reply, events = self._post(side, body, self._mirrored(seed))
        message = _readable(body, message, SERVER_CONFIG.limits)
        answers = _responses(reply.messages)
        label = f"http {reply.status}"
        if type(message) is dict and "method" in message and "id" in message:
            wanted = message["id"] if is_request_id(message["id"]) else None
            if len(answers) != 1:
                raise Failure(f"a request needs exactly one answer in its response: {reply}")
            got = answers[0].get("id")
            if got is not None and (got != wanted or type(got) is not type(wanted)):
                raise Failure(f"the answer's id {got!r} is not the request's {wanted!r}")
            if reply.status == 200 and got != wanted:
                raise Failure(f"a 200 answer must name the request's id: {reply}")
            if "error" in answers[0]:
                label += f" error {answers[0]['error']['code']}"
        elif type(message) is list:
            if len(answers) > max(1, len(message)):
                raise Failure(f"more answers than batch items: {reply}")
        elif type(message) is dict and any("result" in a for a in answers):
            raise Failure(f"a notification or response got a result: {reply}")
        if ours is not None:
            label += self._settled(side, message, events, ours)
        if self.state == "post" and side.endpoint._exchanges != 0:
            raise Failure("a 2026-07-28 exchange is still open after its response")
        self._probe(side)
        return label

    def _settled(self, side: _ServerSide, message: Any, events: list[Event], ours: Any) -> str:
        ended = [
            e
            for e in events
            if isinstance(e, (ResponseReceived, ErrorReceived, RequestFailed))
            and e.request_id == ours
        ]
        targeted = (
            type(message) is dict
            and "method" not in message
            and ("result" in message or "error" in message)
            and message.get("id") == ours
            and type(message.get("id")) is type(ours)
        )
        if targeted and len(ended) != 1:
            raise Failure(f"our request must end exactly once, got {ended}")
        if not targeted and ended:
            raise Failure(f"a message that is not its answer settled our request: {ended}")
        conn = side.endpoint.sessions.get(side.session_id or "")
        if not ended and conn is not None and conn.state == State.READY:
            conn.cancel_request(ours)
            side.endpoint.pump()
        return f" {type(ended[0]).__name__}" if ended else ""

    def _probe(self, side: _ServerSide) -> None:
        if self.state == "fresh":
            session = next(iter(side.endpoint.sessions), None)
            if session is None:
                reply, _ = self._post(side, _initialize_body(self.revision, "re-init"), [])
                session = reply.headers.get("mcp-session-id")
                if reply.status != 200 or session is None:
                    raise Failure(f"a valid initialize was refused afterwards: {reply}")
            side.session_id = session
            side.version = side.endpoint.sessions[session].protocol_version or self.revision
        probe_id = f"probe-{next(self._ids)}"
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": probe_id, "method": "tools/list"}
        headers: list[tuple[str, str]] = []
        if self.state == "post":
            body["params"] = {"_meta": envelope()}
            headers = mirrored_request_headers("tools/list", body["params"], MODERN)
        reply, _ = self._post(side, dumps(body), headers)
        answers = _responses(reply.messages)
        if reply.status != 200 or [a.get("id") for a in answers] != [probe_id]:
            raise Failure(f"the probe request was not served: {reply}")
        if self.state == "fresh":
            side.session_id = None


def _initialize_body(revision: str, rid: Any = "init") -> bytes:
    return dumps(
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


# ================================================================ client side


class HTTPClientRunner:
    """Answers a 2026-07-28 client's requests with mutated result and error bodies."""

    def __init__(self) -> None:
        self.fed = 0
        self.outcomes: Counter[str] = Counter()
        self._pair: tuple[ClientConnection, HTTPClientEndpoint] | None = None

    def _build(self) -> tuple[ClientConnection, HTTPClientEndpoint]:
        mcp = ClientConnection(ClientConfig(mode=MODERN, capabilities=CLIENT_CAPABILITIES))
        endpoint = HTTPClientEndpoint(mcp, host="localhost:8000")
        mcp.connect()
        return mcp, endpoint

    def feed(self, seed: Seed, mutation: Mutation) -> str:
        if self._pair is None:
            self._pair = self._build()
        mcp, endpoint = self._pair
        try:
            label = self._feed(mcp, endpoint, seed, mutation.message)
        except Exception as exc:
            self._pair = None
            raise failure(f"client/{MODERN}/http-ready", seed, mutation, exc) from exc
        self.fed += 1
        self.outcomes[label] += 1
        if mcp.state != State.READY or mcp.requests_in_flight != (0, 0):
            self._pair = None
        return label

    def _exchange(
        self, endpoint: HTTPClientEndpoint, rid: Any, status: int, body: bytes
    ) -> list[Event]:
        events: list[Event] = []
        out = endpoint.pump()
        events += out.events
        # (Other POSTs may be queued: the engine's error replies to garbled bodies.)
        requests = [r for r in out.requests if r.purpose == "message" and r.request_id == rid]
        if len(requests) != 1:
            raise Failure(f"expected one request to answer, got {out.requests}")
        http = endpoint.new_connection()
        if not http.start(requests[0]):
            raise Failure("the request could not be started")
        http.data_to_send()
        head = (
            f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode()
        events += http.receive_data(head + body)
        return events

    def _feed(
        self, mcp: ClientConnection, endpoint: HTTPClientEndpoint, seed: Seed, message: Any
    ) -> str:
        method = seed.method or "tools/list"
        rid = mcp.send_request(method, SEND_PARAMS.get(method))
        message = _bind(message, seed, rid, Live())
        status = 200 if seed.kind == "result" else 400
        events = self._exchange(endpoint, rid, status, dumps(message))
        mcp.check_invariants()
        ended = [
            e
            for e in events
            if isinstance(e, (ResponseReceived, ErrorReceived, RequestFailed))
            and e.request_id == rid
        ]
        rounds = [
            e
            for e in events
            if isinstance(e, RequestReceived) and e.context.related_request_id == rid
        ]
        # A state-only InputRequiredResult is retried at once, under a new id.
        retried = [
            r
            for r in endpoint.pump().requests
            if r.purpose == "message" and r.body and parse(r.body).get("method") == method
        ]
        # Over HTTP the response *is* the answer's only chance: whatever the body
        # holds, the request ends with it (or goes on asking for input).
        if len(ended) + (1 if rounds or retried else 0) != 1:
            raise Failure(f"the request must end exactly once, got {ended} {rounds}")
        if not ended:
            mcp.cancel_request(rid)
            endpoint.pump()
        self._probe(mcp, endpoint)
        return type(ended[0]).__name__ if ended else "input-round"  # (or its retry)

    def _probe(self, mcp: ClientConnection, endpoint: HTTPClientEndpoint) -> None:
        rid = mcp.send_request("tools/list")
        body = dumps(
            {"jsonrpc": "2.0", "id": rid, "result": {"tools": [], "resultType": "complete"}}
        )
        events = self._exchange(endpoint, rid, 200, body)
        if not any(isinstance(e, ResponseReceived) and e.request_id == rid for e in events):
            raise Failure(f"the probe request was not answered: {events}")


RunnerFactory = Callable[[], Any]
