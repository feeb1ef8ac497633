"""The lifecycle tables of `mcp_core/_state.py`, their drawing, and the engine
held to them.

Three kinds of check:

* the drawing in docs/architecture.md is what `scripts/draw_states.py` makes of
  the tables today (a stale picture fails here, with the command to redraw);
* the tables themselves, exhaustively, h2-style: every (state, input) pair of
  every table leads to a state of that table or is refused with
  `LocalProtocolError`, never anything else; every state is reachable and can
  reach an end; the ends have no way out;
* the engine, driven by Hypothesis through random interleavings of both sides'
  verbs, deliveries one message at a time, timeouts, aborts and closes: every
  change it makes to the session's state or to a request record's state is one
  edge of the table, and only protocol errors ever escape.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import (
    ClientConfig,
    ClientConnection,
    InputReceived,
    LocalProtocolError,
    RemoteProtocolError,
    RequestReceived,
    ServerConnection,
    State,
)
from mcp_core._state import (
    ENDED,
    INITIAL_REQUEST_STATE,
    INITIAL_SESSION_STATE,
    REQUEST_TABLE,
    SESSION_TABLE,
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
from mcp_core._versions import Era
from mcp_core.testing import default_server_config

ROOT = Path(__file__).resolve().parents[2]


def _draw_states() -> ModuleType:
    spec = importlib.util.spec_from_file_location("draw_states", ROOT / "scripts/draw_states.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ======================================================================= drawing


def test_the_diagrams_in_the_architecture_page_are_drawn_from_the_table() -> None:
    draw = _draw_states()
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    assert draw.splice(text, draw.render()) == text, (
        "docs/architecture.md is stale: run python3 scripts/draw_states.py"
    )


def test_the_drawing_shows_every_move_of_every_table() -> None:
    draw = _draw_states()
    tables = [(SESSION_TABLE[r], INITIAL_SESSION_STATE[r]) for r in SESSION_TABLE]
    tables += [(REQUEST_TABLE[k], INITIAL_REQUEST_STATE[k[1]]) for k in REQUEST_TABLE]
    for rows, start in tables:
        drawing = draw.diagram(start, rows)
        assert drawing[2] == f"    [*] --> {start.value}"
        for state, row in rows.items():
            for by, target in row.items():
                edge = f"    {state.value} --> {target.value}: "
                (line,) = [x for x in drawing if x.startswith(edge)]
                assert by.value in line.removeprefix(edge).split("; ")
            assert (f"    {state.value} --> [*]" in drawing) == (not row)


# ======================================================= the tables, exhaustively

SESSION_PAIRS = [
    (role, state, by) for role in SESSION_TABLE for state in SessionState for by in SessionInput
]
REQUEST_PAIRS = [
    (key, state, by) for key in REQUEST_TABLE for state in RequestState for by in RequestInput
]


@pytest.mark.parametrize(("role", "state", "by"), SESSION_PAIRS)
def test_every_session_pair_gives_a_legal_state_or_a_protocol_error(
    role: Any, state: SessionState, by: SessionInput
) -> None:
    rows = SESSION_TABLE[role]
    if state not in rows:
        # A state this role never holds (a server is never IDLE): no input moves it.
        with pytest.raises(KeyError):
            follows(role, state, by)
        return
    target = follows(role, state, by)
    if target is None:
        with pytest.raises(LocalProtocolError):
            advance(role, state, by)
    else:
        assert advance(role, state, by) is target and target in rows


@pytest.mark.parametrize(("key", "state", "by"), REQUEST_PAIRS)
def test_every_request_pair_gives_a_legal_state_or_a_protocol_error(
    key: Any, state: RequestState, by: RequestInput
) -> None:
    role, direction = key
    rows = REQUEST_TABLE[key]
    target = follows_request(role, direction, state, by)
    if target is None:
        assert state not in rows or by not in rows[state]
        with pytest.raises(LocalProtocolError):
            advance_request(role, direction, state, by)
    else:
        assert state in rows and target in rows
        assert advance_request(role, direction, state, by) is target


def _reachable(rows: Any, start: Any) -> set[Any]:
    seen = {start}
    todo = [start]
    while todo:
        for target in rows[todo.pop()].values():
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


@pytest.mark.parametrize(
    ("rows", "start"),
    [(SESSION_TABLE[r], INITIAL_SESSION_STATE[r]) for r in SESSION_TABLE]
    + [(REQUEST_TABLE[k], INITIAL_REQUEST_STATE[k[1]]) for k in REQUEST_TABLE],
)
def test_every_state_is_reachable_and_every_path_can_end(rows: Any, start: Any) -> None:
    assert _reachable(rows, start) == set(rows), "a state nothing leads to"
    ends = {state for state, row in rows.items() if not row}
    for state in rows:
        assert _reachable(rows, state) & ends, f"{state} can never end"


def test_the_ends_are_the_ends() -> None:
    for rows in SESSION_TABLE.values():
        assert {state for state, row in rows.items() if not row} == set(ENDED)
        for state in rows:
            if state not in ENDED:
                # Whatever happens, a live connection can always be closed, or fail.
                assert rows[state][SessionInput.END] is SessionState.CLOSED
                assert rows[state][SessionInput.FAIL] is SessionState.ERROR
    for rows in REQUEST_TABLE.values():
        for row in rows.values():
            if row:  # a live request: the connection's end always settles it
                assert RequestInput.CLOSE in row


def test_state_values_read_as_the_strings_they_replaced() -> None:
    assert State.READY == "ready" and f"{State.AWAITING_FIRST}" == "awaiting_first"
    assert State is SessionState and {State.CLOSED: 1}["closed"] == 1


# ================================================================ classify_era


@pytest.mark.parametrize(
    ("params", "header", "era"),
    [
        (None, None, None),
        ({}, None, None),
        ({"_meta": {}}, None, None),
        ({"_meta": {"io.modelcontextprotocol/protocolVersion": 7}}, None, Era.MODERN),
        ({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}, None, Era.MODERN),
        ({"_meta": ["io.modelcontextprotocol/protocolVersion"]}, None, None),
        ([], "2026-07-28", Era.MODERN),
        (None, "2025-06-18", Era.LEGACY),
        (None, "1999-01-01", None),
        # The 2026-07-28 word wins over a legacy header: the envelope is checked next.
        ({"_meta": {"io.modelcontextprotocol/protocolVersion": "x"}}, "2025-11-25", Era.MODERN),
    ],
)
def test_classify_era(params: Any, header: str | None, era: Era | None) -> None:
    assert classify_era(params, header) is era


# ============================================= the engine moves along the table

KEY = b"k" * 32
CAPS = {"elicitation": {"form": {}}, "roots": {}, "sampling": {}}
QUESTION = {
    "method": "elicitation/create",
    "params": {
        "message": "ok?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}


def _records(conn: ClientConnection | ServerConnection) -> list[tuple[Any, str]]:
    found: list[tuple[Any, str]] = [(r, "inbound") for r in conn._inbound.values()]
    found += [(r, "outbound") for r in conn._outbound.values()]
    found += [(r, "outbound") for r in conn._pending_inputs.values()]
    return found


class Side:
    """One real connection, what it has seen, and the states it held before the
    latest operation (to judge the moves that operation made)."""

    def __init__(self, conn: ClientConnection | ServerConnection) -> None:
        self.conn = conn
        self.inbox: list[bytes] = []  # the peer's messages, not yet delivered
        self.asked: list[Any] = []  # ids of the peer's requests we were told about
        self.moves: set[tuple[str, RequestState | SessionState, RequestState | SessionState]] = (
            set()
        )

    def before(self) -> tuple[SessionState, dict[int, tuple[Any, str, RequestState]]]:
        return self.conn.state, {id(r): (r, d, r.state) for r, d in _records(self.conn)}

    def judge(self, seen: tuple[SessionState, dict[int, tuple[Any, str, RequestState]]]) -> None:
        conn, role = self.conn, self.conn._role
        old_session, old_records = seen
        if conn.state is not old_session:
            assert conn.state in SESSION_TABLE[role][old_session].values(), (
                f"{role} moved {old_session} -> {conn.state}, not in the table"
            )
            self.moves.add(("session", old_session, conn.state))
        for record, direction, old in old_records.values():
            if record.state is not old:
                self.moves.add((direction, old, record.state))
                rows = REQUEST_TABLE[(role, direction)]  # type: ignore[index]
                assert record.state in rows[old].values(), (
                    f"{role} {direction} request moved {old} -> {record.state}"
                )
        # A new record starts where a request starts, or carries on one that left
        # its table in this operation (a 2026-07-28 call moves from the wire to
        # the waiting calls as it goes AWAITING_INPUT, and back as it is retried).
        held = {id(record) for record, _ in _records(conn)}
        carried = {r.state for i, (r, _, _) in old_records.items() if i not in held}
        for record, direction in _records(conn):
            if id(record) not in old_records:
                start = INITIAL_REQUEST_STATE[direction]  # type: ignore[index]
                assert record.state is start or record.state in carried, (
                    f"a new {direction} record in {record.state}"
                )
        conn.check_invariants()


def _take(events: list[Any], side: Side) -> None:
    for event in events:
        if isinstance(event, (RequestReceived, InputReceived)):
            side.asked.append(event.request_id)


def _protocol_errors_only(call: Any) -> Any:
    try:
        return call()
    except (LocalProtocolError, RemoteProtocolError):
        return None


def _deliver(source: Side, target: Side) -> None:
    for payload in source.conn.data_to_send().split(b"\n"):
        if payload:
            target.inbox.append(payload)
    if target.inbox and target.conn.state not in ENDED:
        # Nothing a peer sends may raise out of a live connection: no catching here.
        _take(target.conn.receive_message(target.inbox.pop(0), wall_time=1_000.0), target)


def _pick(ids: list[Any], n: int) -> Any:
    return ids[n % len(ids)] if ids else n


def _operate(op: str, n: int, client: Side, server: Side) -> None:
    c, s = client.conn, server.conn
    assert isinstance(c, ClientConnection) and isinstance(s, ServerConnection)
    # Mostly requests still waiting, so the verbs mostly act; a stale id now and
    # then (n past the live ones) checks the no-op answers too.
    theirs_at_client = [i for i in client.asked if i in c._inbound or i in c._input_slots]
    theirs_at_server = [i for i in server.asked if i in s._inbound]
    if n % 7 == 0:
        theirs_at_client, theirs_at_server = client.asked, server.asked
    deadline = float(n) if n % 3 == 0 else None  # most calls wait for their answer
    actions: dict[str, Any] = {
        "connect": lambda: c.connect(deadline=50.0),
        "call": lambda: c.send_request(
            "tools/call", {"name": "t", "arguments": {}}, deadline=deadline
        ),
        "ping": lambda: c.send_request("ping"),
        "cancel": lambda: c.cancel_request(_pick([r.logical for r in c._outbound.values()], n)),
        "answer": lambda: c.send_result(
            _pick(theirs_at_client, n), {"action": "accept", "content": {}}
        ),
        "refuse": lambda: c.send_error(_pick(theirs_at_client, n), -1, "no"),
        "client_tick": lambda: c.tick(float(n)),
        "client_close": lambda: c.close(),
        "client_eof": lambda: c.receive_data(b""),
        "result": lambda: s.send_result(_pick(theirs_at_server, n), {"content": []}),
        "error": lambda: s.send_error(_pick(theirs_at_server, n), -32603, "boom"),
        "ask": lambda: s.request_input(
            _pick(theirs_at_server, n), {"q": QUESTION}, deadline=deadline
        ),
        "abandon": lambda: s.abandon_request(_pick(theirs_at_server, n)),
        "server_ping": lambda: s.send_request("ping", deadline=float(n)),
        "server_tick": lambda: s.tick(float(n)),
        "server_fail": lambda: s.close(error=RemoteProtocolError("the transport broke")),
        "garbage": lambda: s.receive_message(b'{"jsonrpc":"2.0","id":', wall_time=1_000.0),
        "stray_answer": lambda: c.receive_message(
            json.dumps({"jsonrpc": "2.0", "id": n, "result": {}}).encode()
        ),
    }
    if op == "pump":
        # Several steps at once: the paths that need a whole exchange (a question
        # asked, answered, and its InputReceived) come up often this way.
        for _ in range(4):
            _deliver(client, server)
            _deliver(server, client)
    elif op == "answer_all":
        for rid in theirs_at_client:
            _protocol_errors_only(lambda rid=rid: c.send_result(rid, {"action": "decline"}))
    elif op == "to_server":
        _deliver(client, server)
    elif op == "to_client":
        _deliver(server, client)
    elif op in PEER_INPUT:
        # The peer's doing, or the clock's: it must never raise while live.
        conn = c if op in ("stray_answer", "client_tick") else s
        if conn.state not in ENDED:
            _take(actions[op](), client if conn is c else server)
    else:
        events = _protocol_errors_only(actions[op])
        if isinstance(events, list):
            _take(events, client if op.startswith(("client", "stray")) else server)


PEER_INPUT = frozenset({"garbage", "stray_answer", "client_tick", "server_tick"})

# Endings are rare on purpose (once each), so most runs get far enough to ask,
# answer, retry and time out; deliveries are what makes progress: weighted up.
ENDINGS = ["client_close", "client_eof", "server_fail"]
OPS = [
    *ENDINGS,
    "connect",
    "stray_answer",
    "garbage",
    "client_tick",
    "server_tick",
    *[
        "call",
        "ping",
        "cancel",
        "answer",
        "refuse",
        "result",
        "error",
        "ask",
        "ask",
        "abandon",
        "server_ping",
    ]
    * 5,
    *["to_server", "to_client"] * 12,
    *["pump", "answer_all"] * 6,
]


def _handshake(client: Side, server: Side) -> None:
    """connect() and every message both ways until both sides are quiet."""
    _operate("connect", 0, client, server)
    for _ in range(6):
        _deliver(client, server)
        _deliver(server, client)


@pytest.mark.parametrize("mode", ["legacy", "2025-06-18", "auto", "2026-07-28"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    connected=st.booleans(),
    steps=st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 60)), max_size=60),
)
def test_the_engine_moves_only_along_the_table(
    mode: str, connected: bool, steps: list[tuple[str, int]]
) -> None:
    server = Side(ServerConnection(default_server_config(request_state_keys=(KEY,))))
    client = Side(ClientConnection(ClientConfig(mode=mode, capabilities=CAPS)))
    if connected:
        _handshake(client, server)
    for op, n in steps:
        seen = (client.before(), server.before())
        _operate(op, n, client, server)
        client.judge(seen[0])
        server.judge(seen[1])


def _walk(mode: str, ops: list[str]) -> tuple[Side, Side]:
    server = Side(ServerConnection(default_server_config(request_state_keys=(KEY,))))
    client = Side(ClientConnection(ClientConfig(mode=mode, capabilities=CAPS)))
    _handshake(client, server)
    for op in ops:
        seen = (client.before(), server.before())
        _operate(op, 1, client, server)  # n=1: the live ids, no deadlines
        client.judge(seen[0])
        server.judge(seen[1])
    return client, server


R = RequestState


@pytest.mark.parametrize(
    ("mode", "ops", "client_moves", "server_moves"),
    [
        (  # legacy: the questions go out as requests, the request stays open
            "2025-11-25",
            ["call", "pump", "ask", "pump", "answer_all", "pump", "result", "pump"],
            {("inbound", R.OPEN, R.ANSWERED), ("outbound", R.SENT, R.ANSWERED)},
            {
                ("inbound", R.OPEN, R.ASKING),
                ("outbound", R.SENT, R.ANSWERED),
                ("inbound", R.ASKING, R.OPEN),
                ("inbound", R.OPEN, R.ANSWERED),
            },
        ),
        (  # legacy: the client cancels while the questions are out
            "2025-11-25",
            ["call", "pump", "ask", "pump", "cancel", "pump"],
            {("outbound", R.SENT, R.CANCELLED), ("inbound", R.OPEN, R.CANCELLED)},
            {("inbound", R.ASKING, R.CANCELLED), ("outbound", R.SENT, R.CANCELLED)},
        ),
        (  # 2026-07-28: an InputRequiredResult, the answers, the retry, the result
            "2026-07-28",
            ["call", "pump", "ask", "pump", "answer_all", "pump", "result", "pump"],
            {
                ("outbound", R.SENT, R.AWAITING_INPUT),
                ("outbound", R.AWAITING_INPUT, R.SENT),
                ("outbound", R.SENT, R.ANSWERED),
            },
            {("inbound", R.OPEN, R.INPUT_REQUIRED), ("inbound", R.OPEN, R.ANSWERED)},
        ),
        (  # 2026-07-28: refusing a question fails the call; nothing goes out
            "auto",
            ["call", "pump", "ask", "pump", "refuse", "client_tick"],
            {("outbound", R.SENT, R.AWAITING_INPUT), ("outbound", R.AWAITING_INPUT, R.FAILED)},
            {("inbound", R.OPEN, R.INPUT_REQUIRED)},
        ),
        (  # the connection ends with requests in flight either way
            "2025-06-18",
            ["call", "call", "pump", "ask", "to_client", "server_fail", "client_eof"],
            {
                ("outbound", R.SENT, R.FAILED),
                ("inbound", R.OPEN, R.CANCELLED),
                ("session", SessionState.READY, SessionState.CLOSED),
            },
            {
                ("inbound", R.ASKING, R.CANCELLED),
                ("inbound", R.OPEN, R.CANCELLED),
                ("outbound", R.SENT, R.FAILED),
                ("session", SessionState.READY, SessionState.ERROR),
            },
        ),
    ],
)
def test_the_main_paths_walk_the_table(
    mode: str, ops: list[str], client_moves: set[Any], server_moves: set[Any]
) -> None:
    client, server = _walk(mode, ops)
    assert client_moves <= client.moves, client.moves
    assert server_moves <= server.moves, server.moves
