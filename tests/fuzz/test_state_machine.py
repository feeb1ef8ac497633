"""Stateful property tests (harness H1 of RELIABILITY.md §5).

`PairMachine` drives a client and a server connected through two in-memory
wires that the machine delivers in random slices, so answers, cancellations,
timeouts and closes race the way they do on a real transport. It also injects
duplicate ids, responses to nobody and garbage. `LoneServerMachine` feeds a
server from a model of a misbehaving client and counts every reply.

Invariants: `check_invariants()` on every connection after every step; every
outbound request ends in exactly one terminal event (ResponseReceived,
ErrorReceived or RequestFailed) unless we cancelled it, and never in one after
the cancel; nothing is sent for a request the peer cancelled; the negotiated
revision and capabilities never change once agreed; after ConnectionClosed a
connection emits no event and no byte.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mcp_core import (
    ClientConfig,
    ClientConnection,
    Connected,
    ConnectionClosed,
    ErrorReceived,
    Event,
    InputReceived,
    Limits,
    LocalProtocolError,
    ProgressReceived,
    RemoteProtocolError,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
    ServerConnection,
    SessionStarted,
    State,
)
from mcp_core._jsonrpc import is_request_id
from mcp_core._versions import METHODS
from mcp_core.testing import ConnectionPair, default_server_config
from mcp_core.testing.strategies import (
    client_capabilities,
    invalid_messages,
    valid_notifications,
    valid_params,
    valid_requests,
    valid_results,
)

from .harness import CLIENT_CAPABILITIES, check, scaled

# 50 runs of up to 50 steps in `make test`, ten times more in `make fuzz` (`scaled`).
STATEFUL = settings(
    max_examples=scaled(50),
    stateful_step_count=50,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TERMINAL = (ResponseReceived, ErrorReceived, RequestFailed)
_INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
_GARBAGE = invalid_messages()
CLIENT_MODES = ("legacy", "auto", "2026-07-28", "2025-03-26", "2024-11-05")


@cache
def _params(revision: str, method: str, sender: str) -> st.SearchStrategy[Any]:
    return valid_params(revision, method, sender)  # type: ignore[arg-type]


@cache
def _result(revision: str, method: str) -> st.SearchStrategy[dict[str, Any]]:
    return valid_results(revision, method)


def _requests_of(sender: str, revision: str) -> list[str]:
    return sorted(
        spec.method
        for (who, _), spec in METHODS.items()
        if who == sender
        and spec.is_request
        and revision in spec.revisions
        and spec.method not in ("initialize", "server/discover")
    )


def _line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class _Side:
    """What the model knows about one connection."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: set[Any] = set()  # ids from send_request
        self.cancelled: set[Any] = set()  # ids we cancelled before any terminal event
        self.terminal: Counter[Any] = Counter()
        self.pending: dict[Any, str] = {}  # the peer's requests waiting for our answer
        self.cancelled_by_peer: set[Any] = set()
        self.closed = False
        self.negotiated: tuple[Any, ...] | None = None
        self.progress = itertools.count(1)

    def in_flight(self) -> list[Any]:
        return sorted(
            (r for r in self.sent if not self.terminal[r] and r not in self.cancelled), key=repr
        )


class PairMachine(RuleBasedStateMachine):
    """A client and a server joined by wires the machine delivers in random slices."""

    @initialize(
        mode=st.sampled_from(CLIENT_MODES),
        server_versions=st.sampled_from([None, ("2025-03-26", "2026-07-28")]),
        small=st.booleans(),
        handshake=st.sampled_from([True, True, True, False]),
    )
    def connect(
        self, mode: str, server_versions: tuple[str, ...] | None, small: bool, handshake: bool
    ) -> None:
        limits = Limits(max_inbound_in_flight=4, max_outbound_in_flight=4) if small else Limits()
        # Keys, so the server may ask (request_input); it then needs the wall clock.
        overrides: dict[str, Any] = {"limits": limits, "request_state_keys": (b"k" * 32,)}
        if server_versions is not None:
            overrides["supported_versions"] = server_versions
        supported = ("2026-07-28", "2025-11-25", "2025-03-26", "2024-11-05")
        self.pair = ConnectionPair(
            default_server_config(**overrides),
            ClientConfig(
                mode=mode,
                capabilities=CLIENT_CAPABILITIES,
                limits=limits,
                supported_versions=supported,
            ),
        )
        self.client: ClientConnection = self.pair.client
        self.server: ServerConnection = self.pair.server
        self.c = _Side("client")
        self.s = _Side("server")
        self.now = 0.0
        self.to_server = bytearray()
        self.to_client = bytearray()
        self.injected = itertools.count()
        self.steps = 0
        self._client_events(self.client.connect(deadline=5.0))
        if handshake:
            self.pump()  # most runs start connected; the rest race the handshake

    # ------------------------------------------------------------ events

    def _events(self, side: _Side, conn: Any, events: list[Event]) -> None:
        for event in events:
            assert not side.closed, f"{side.name} emitted {event!r} after ConnectionClosed"
            if isinstance(event, TERMINAL):
                rid = event.request_id
                if rid in side.sent:
                    assert rid not in side.cancelled, f"{event!r} after we cancelled {rid!r}"
                    side.terminal[rid] += 1
                    assert side.terminal[rid] == 1, f"second terminal event {event!r}"
            elif isinstance(event, ProgressReceived):
                assert event.request_id in side.in_flight(), event
            elif isinstance(event, RequestReceived):
                assert event.request_id not in side.pending, "a duplicate id got through"
                side.pending[event.request_id] = event.method
                side.cancelled_by_peer.discard(event.request_id)
            elif isinstance(event, InputReceived):
                # Legacy: the request that asked, still open; 2026-07-28: the retry, new.
                assert event.answers, "an InputReceived with no answers"
                side.pending[event.request_id] = event.method
                side.cancelled_by_peer.discard(event.request_id)
            elif isinstance(event, RequestCancelled):
                side.pending.pop(event.request_id, None)
                side.cancelled_by_peer.add(event.request_id)
            elif isinstance(event, ConnectionClosed):
                side.closed = True
                side.pending.clear()
                for rid in side.sent - side.cancelled:
                    assert side.terminal[rid] == 1, f"{side.name} request {rid!r} never settled"
            elif isinstance(event, Connected):
                assert side.negotiated is None, "a second Connected"
                side.negotiated = self._client_terms()
            elif isinstance(event, SessionStarted):
                assert side.negotiated is None, "a second SessionStarted"
                side.negotiated = self._server_terms()

    def _client_events(self, events: list[Event]) -> None:
        self._events(self.c, self.client, events)

    def _server_events(self, events: list[Event]) -> None:
        self._events(self.s, self.server, events)

    def _client_terms(self) -> tuple[Any, ...]:
        c = self.client
        return (c.protocol_version, c.era, repr(c.server_capabilities), repr(c.server_info))

    def _server_terms(self) -> tuple[Any, ...]:
        s = self.server
        return (s.protocol_version, s.era, repr(s.client_capabilities), repr(s.client_info))

    def _drain(self) -> None:
        self.to_server += self.client.data_to_send()
        self.to_client += self.server.data_to_send()

    def _receive(self, side: _Side, conn: Any, chunk: bytes) -> None:
        before = conn.state
        try:
            if conn is self.server:
                events = conn.receive_data(chunk, wall_time=1_000.0 + self.now)
            else:
                events = conn.receive_data(chunk)
        except RemoteProtocolError:
            assert before == State.ERROR
            return
        except LocalProtocolError:
            assert before == State.CLOSED
            return
        self._events(side, conn, events)

    # ------------------------------------------------------------ wires

    @rule(to_server=st.booleans(), cut=st.integers(0, 2000))
    def deliver(self, to_server: bool, cut: int) -> None:
        """Deliver a slice (cut=0: everything) of one wire."""
        self._drain()
        wire = self.to_server if to_server else self.to_client
        if not wire:
            return
        n = len(wire) if cut == 0 else min(len(wire), cut)
        chunk = bytes(wire[:n])
        del wire[:n]
        if to_server:
            self._receive(self.s, self.server, chunk)
        else:
            self._receive(self.c, self.client, chunk)

    @rule()
    def pump(self) -> None:
        for _ in range(50):
            self._drain()
            if not self.to_server and not self.to_client:
                return
            self.deliver(True, 0)
            self.deliver(False, 0)

    # ------------------------------------------------------------ client side

    def _revision(self, conn: Any) -> str | None:
        return conn.protocol_version if conn.state == State.READY else None

    @rule(
        index=st.integers(0, 100),
        data=st.data(),
        deadline=st.none() | st.floats(0.5, 20),
        progress=st.booleans(),
    )
    def client_request(
        self, index: int, data: st.DataObject, deadline: float | None, progress: bool
    ) -> None:
        revision = self._revision(self.client)
        if revision is None:
            return
        methods = _requests_of("client", revision)
        method = methods[index % len(methods)]
        params = data.draw(_params(revision, method, "client"))
        if params is not None:
            params = {k: v for k, v in params.items() if k != "_meta"}
        try:
            rid = self.client.send_request(
                method,
                params,
                deadline=None if deadline is None else self.now + deadline,
                progress=progress,
            )
        except LocalProtocolError:
            return  # a capability the server did not advertise, or too many in flight
        assert rid not in self.c.sent
        self.c.sent.add(rid)

    @rule(deadline=st.none() | st.floats(0.5, 20))
    def client_calls_a_tool(self, deadline: float | None) -> None:
        """A plain tools/call, the request a server most often asks for."""
        if self._revision(self.client) is None:
            return
        try:
            rid = self.client.send_request(
                "tools/call",
                {"name": "t", "arguments": {"n": 1}},
                deadline=None if deadline is None else self.now + deadline,
            )
        except LocalProtocolError:
            return
        self.c.sent.add(rid)

    @rule(index=st.integers(0, 100))
    def client_cancel(self, index: int) -> None:
        live = self.c.in_flight()
        if not live or self.c.closed:
            return
        rid = live[index % len(live)]
        self.client.cancel_request(rid, "changed my mind")
        self.c.cancelled.add(rid)

    @rule(index=st.integers(0, 100), ok=st.booleans(), data=st.data())
    def client_answer(self, index: int, ok: bool, data: st.DataObject) -> None:
        self._answer(self.c, self.client, index, ok, data)

    # ------------------------------------------------------------ server side

    @rule(index=st.integers(0, 100), ok=st.booleans(), data=st.data())
    def server_answer(self, index: int, ok: bool, data: st.DataObject) -> None:
        self._answer(self.s, self.server, index, ok, data)

    def _answer(self, side: _Side, conn: Any, index: int, ok: bool, data: st.DataObject) -> None:
        if not side.pending or side.closed:
            return
        rids = sorted(side.pending, key=repr)
        rid = rids[index % len(rids)]
        method = side.pending.pop(rid)
        revision = conn.protocol_version
        if revision == "2026-07-28" and method in _INPUT_METHODS:
            revision = "2025-11-25"  # a server's question on 2026-07-28: answered alike
        if ok and revision is not None:
            result = data.draw(_result(revision, method))
            assert conn.send_result(rid, result), "a pending request refused its answer"
        else:
            assert conn.send_error(rid, -32603, "no"), "a pending request refused its error"

    @rule(index=st.integers(0, 100))
    def answer_after_peer_cancelled(self, index: int) -> None:
        """No response after a cancel: answering a cancelled request sends nothing."""
        for side, conn in ((self.s, self.server), (self.c, self.client)):
            if side.closed or not side.cancelled_by_peer:
                continue
            rids = sorted(side.cancelled_by_peer, key=repr)
            rid = rids[index % len(rids)]
            self._drain()
            before = conn.requests_in_flight
            assert conn.send_result(rid, {}) is False
            assert conn.send_error(rid, -1, "late") is False
            assert conn.send_progress(rid, 1.0) is False
            assert conn.requests_in_flight == before
            assert conn.data_to_send() == b"", "something was sent for a cancelled request"

    @rule(index=st.integers(0, 100))
    def server_progress(self, index: int) -> None:
        if not self.s.pending or self.s.closed:
            return
        rids = sorted(self.s.pending, key=repr)
        rid = rids[index % len(rids)]
        self.server.send_progress(rid, float(next(self.s.progress)), message="working")

    @rule(index=st.integers(0, 100), data=st.data())
    def server_request(self, index: int, data: st.DataObject) -> None:
        revision = self._revision(self.server)
        if revision is None or self.server.era is None or self.server.era.value != "legacy":
            return
        methods = _requests_of("server", revision)
        method = methods[index % len(methods)]
        params = data.draw(_params(revision, method, "server"))
        try:
            rid = self.server.send_request(method, params, deadline=self.now + 3)
        except LocalProtocolError:
            return
        self.s.sent.add(rid)

    @rule(
        index=st.integers(0, 100),
        asked=st.sets(st.sampled_from(["form", "url", "llm", "roots"]), min_size=1),
    )
    def server_asks(self, index: int, asked: set[str]) -> None:
        """The one way to ask, in either era, with a deadline that may pass."""
        eligible = sorted(
            (r for r, m in self.s.pending.items() if METHODS[("client", m)].input_required),
            key=repr,
        )
        if not eligible or self.s.closed:
            return
        rid = eligible[index % len(eligible)]
        form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        url = {"mode": "url", "message": "Go", "url": "https://x.example", "elicitationId": "e"}
        llm = {"messages": [{"role": "user", "content": {"type": "text", "text": "?"}}]}
        every = {
            "form": {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": form}},
            "url": {"method": "elicitation/create", "params": url},
            "llm": {"method": "sampling/createMessage", "params": {**llm, "maxTokens": 5}},
            "roots": {"method": "roots/list"},
        }  # fmt: skip
        questions = {key: every[key] for key in sorted(asked)}
        try:
            sent = self.server.request_input(rid, questions, state=index, deadline=self.now + 3)
        except LocalProtocolError:
            return  # undeclared, one round at a time, or a revision without the mode
        assert sent, "a pending request refused to ask"
        if self.server.era is not None and self.server.era.value == "modern":
            del self.s.pending[rid]  # answered with the InputRequiredResult

    @rule(index=st.integers(0, 100))
    def server_cancel(self, index: int) -> None:
        live = self.s.in_flight()
        if not live or self.s.closed:
            return
        rid = live[index % len(live)]
        self.server.cancel_request(rid)
        self.s.cancelled.add(rid)

    # ------------------------------------------------------------ time and ends

    @rule(dt=st.floats(0, 10))
    def tick(self, dt: float) -> None:
        self.now += dt
        self._client_events(self.client.tick(self.now))
        self._server_events(self.server.tick(self.now))

    @rule(which=st.sampled_from(["client", "server"]), eof=st.booleans(), dice=st.integers(0, 5))
    def close(self, which: str, eof: bool, dice: int = 0) -> None:
        if dice:
            return  # one time in six: a close ends the interesting part of a run
        side, conn = (self.c, self.client) if which == "client" else (self.s, self.server)
        if eof:
            self._receive(side, conn, b"")  # the peer hung up
        else:
            self._events(side, conn, conn.close())
        if side.closed:
            self._drain()  # what was queued before the close may still leave
            assert conn.data_to_send() == b""
            assert conn.tick(self.now + 1e6) == []
            for call in (
                lambda: conn.send_notification("notifications/cancelled", {"requestId": 0}),
                lambda: conn.cancel_request(0),
            ):
                try:
                    call()
                except LocalProtocolError:
                    pass
                else:
                    raise AssertionError("a closed connection accepted a call")
            assert conn.data_to_send() == b""

    # ------------------------------------------------------------ injections

    @precondition(lambda self: bool(self.s.pending))
    @rule(index=st.integers(0, 100))
    def inject_duplicate_id(self, index: int) -> None:
        """A second request reusing an id the server still has in flight."""
        rids = sorted(self.s.pending, key=repr)
        rid = rids[index % len(rids)]
        params: dict[str, Any] = {}
        if self.server.era is not None and self.server.era.value == "modern":
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        self._drain()
        self.to_server += _line(
            {"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": params}
        )

    @rule(to_server=st.booleans(), ok=st.booleans())
    def inject_unknown_response(self, to_server: bool, ok: bool) -> None:
        rid = f"nobody-{next(self.injected)}"
        body = {"result": {}} if ok else {"error": {"code": -1, "message": "?"}}
        self._drain()
        (self.to_server if to_server else self.to_client).extend(
            _line({"jsonrpc": "2.0", "id": rid, **body})
        )

    @rule(to_server=st.booleans(), data=st.data())
    def inject_garbage(self, to_server: bool, data: st.DataObject) -> None:
        garbage = data.draw(_GARBAGE)
        self._drain()
        (self.to_server if to_server else self.to_client).extend(garbage + b"\n")

    # ------------------------------------------------------------ invariants

    @invariant()
    def engine_invariants(self) -> None:
        self.steps += 1
        check(self.client)
        check(self.server)

    @invariant()
    def terms_never_change(self) -> None:
        if self.c.negotiated is not None and self.client.state == State.READY:
            assert self._client_terms() == self.c.negotiated
        if self.s.negotiated is not None and self.server.state == State.READY:
            assert self._server_terms() == self.s.negotiated

    @invariant()
    def at_most_one_terminal_event(self) -> None:
        for side in (self.c, self.s):
            assert all(n <= 1 for n in side.terminal.values())
            assert not (side.cancelled & {r for r, n in side.terminal.items() if n})

    def teardown(self) -> None:
        if not hasattr(self, "client"):
            return
        # Deliver everything, then close both: every request must have settled.
        self.pump()
        for which in ("client", "server"):
            side = self.c if which == "client" else self.s
            if not side.closed:
                self.close(which, eof=False)
            assert side.closed
            for rid in side.sent - side.cancelled:
                assert side.terminal[rid] == 1, f"{which} request {rid!r} never settled"


PairMachine.TestCase.settings = settings(STATEFUL, max_examples=scaled(100))
# No coverage tracing (pytest-cov's `no_cover`) in either machine: it more than
# doubled their CPU time (this module: 17 s of CPU without, 40 s with) for what
# they assert, which is unchanged.
test_pair = pytest.mark.no_cover(PairMachine.TestCase)


# ============================================================== lone server

_MODEL_REVISIONS = ("2025-03-26", "2025-11-25", "2026-07-28")


@cache
def _model_requests(revision: str) -> st.SearchStrategy[dict[str, Any]]:
    ids = st.integers(1000, 1010) | st.sampled_from(["t-a", "t-b"])
    return valid_requests(revision, ids=ids)


@cache
def _model_notifications(revision: str) -> st.SearchStrategy[dict[str, Any]]:
    return valid_notifications(revision)


@cache
def _client_capabilities(revision: str) -> st.SearchStrategy[dict[str, Any]]:
    # One strategy object per revision, as for the requests above: built afresh in
    # every initialize_again step, Hypothesis checked and wrapped it again each time
    # (about 40 % of this machine's CPU time). The same strategy, the same examples.
    return client_capabilities(revision)


class LoneServerMachine(RuleBasedStateMachine):
    """A server fed whole lines by a model of a client that breaks every rule.

    Tracked requests use ids 1000..1010 and "t-a"/"t-b"; garbage never does, so
    for those ids: replies + pending + cancelled == requests sent, after every step.
    """

    @initialize(versions=st.sampled_from([None, ("2025-11-25",), ("2026-07-28",)]))
    def start(self, versions: tuple[str, ...] | None) -> None:
        overrides: dict[str, Any] = {}
        if versions is not None:
            overrides["supported_versions"] = versions
        self.server = ServerConnection(default_server_config(**overrides))
        self.sent: Counter[Any] = Counter()
        self.replies: Counter[Any] = Counter()
        self.cancelled: Counter[Any] = Counter()
        self.pending: dict[Any, str] = {}
        self.closed = False
        self.terms: tuple[Any, ...] | None = None

    def _feed(self, data: bytes, counts: Callable[[], None] | None = None) -> None:
        before = self.server.state
        try:
            events = self.server.receive_data(data)
        except RemoteProtocolError:
            assert before == State.ERROR
            return
        except LocalProtocolError:
            assert before == State.CLOSED
            return
        for event in events:
            assert not self.closed, f"{event!r} after ConnectionClosed"
            if isinstance(event, RequestReceived):
                assert event.request_id not in self.pending
                self.pending[event.request_id] = event.method
            elif isinstance(event, RequestCancelled):
                if event.request_id in self.pending:
                    del self.pending[event.request_id]
                    self.cancelled[event.request_id] += 1
            elif isinstance(event, SessionStarted):
                assert self.terms is None
                self.terms = (self.server.protocol_version, repr(self.server.client_capabilities))
            elif isinstance(event, ConnectionClosed):
                self.closed = True
                for rid in event.abandoned_inbound:
                    if self.pending.pop(rid, None) is not None:
                        self.cancelled[rid] += 1
        self._collect()

    def _collect(self) -> None:
        for raw in self.server.data_to_send().split(b"\n"):
            if raw:
                message = json.loads(raw)
                if "method" not in message:
                    rid = message.get("id")  # 2025-11-25+ may omit an unreadable id
                    self.replies[rid if is_request_id(rid) else None] += 1

    def _revision(self, index: int) -> str:
        if self.server.protocol_version is not None:
            return self.server.protocol_version
        return _MODEL_REVISIONS[index % len(_MODEL_REVISIONS)]

    @rule(index=st.integers(0, 2), data=st.data())
    def request(self, index: int, data: st.DataObject) -> None:
        message = data.draw(_model_requests(self._revision(index)))
        if not self.closed:
            self.sent[message["id"]] += 1
        self._feed(_line(message))

    @rule(index=st.integers(0, 2), data=st.data())
    def notification(self, index: int, data: st.DataObject) -> None:
        self._feed(_line(data.draw(_model_notifications(self._revision(index)))))

    @rule(index=st.integers(0, 100))
    def cancel_pending(self, index: int) -> None:
        if self.pending:
            rids = sorted(self.pending, key=repr)
            rid = rids[index % len(rids)]
            self._feed(
                _line(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": rid},
                    }
                )
            )

    @rule(index=st.integers(0, 100), ok=st.booleans())
    def answer(self, index: int, ok: bool) -> None:
        if not self.pending or self.closed:
            return
        rids = sorted(self.pending, key=repr)
        rid = rids[index % len(rids)]
        del self.pending[rid]
        if ok:
            assert self.server.send_result(rid, {})
        else:
            assert self.server.send_error(rid, -32603, "no")
        self._collect()

    @rule(draw=st.data(), split=st.integers(0, 50))
    def garbage(self, draw: st.DataObject, split: int) -> None:
        data = draw.draw(_GARBAGE) + b"\n"
        if 0 < split < len(data):
            self._feed(data[:split])
            self._feed(data[split:])
        else:
            self._feed(data)

    @rule(rid=st.sampled_from([1000, 1001, "t-a", 77, "zz"]), ok=st.booleans())
    def response_to_nobody(self, rid: Any, ok: bool) -> None:
        body = {"result": {}} if ok else {"error": {"code": 1, "message": "?"}}
        self._feed(_line({"jsonrpc": "2.0", "id": rid, **body}))

    @rule(revision=st.sampled_from(["2024-11-05", "2025-06-18", "2025-11-25"]), data=st.data())
    def initialize_again(self, revision: str, data: st.DataObject) -> None:
        caps = data.draw(_client_capabilities(revision))
        rid = f"t-{'a' if caps else 'b'}"
        if not self.closed:
            self.sent[rid] += 1
        self._feed(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": revision,
                        "capabilities": caps,
                        "clientInfo": {"name": "again", "version": "1"},
                    },
                }
            )
        )

    @rule()
    def hang_up(self) -> None:
        if not self.closed:
            self._feed(b"")

    @invariant()
    def accounting(self) -> None:
        check(self.server)
        for rid, n in self.sent.items():
            got = self.replies[rid] + (1 if rid in self.pending else 0) + self.cancelled[rid]
            assert got == n, f"id {rid!r}: sent {n}, replies {self.replies[rid]}, got {got}"
        if self.terms is not None and self.server.state == State.READY:
            assert (
                self.server.protocol_version,
                repr(self.server.client_capabilities),
            ) == self.terms


LoneServerMachine.TestCase.settings = STATEFUL
test_lone_server = pytest.mark.no_cover(LoneServerMachine.TestCase)
