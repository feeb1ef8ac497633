"""Receiving never raises anything but RemoteProtocolError, whatever the bytes.

Property tests over generated valid and broken messages, fed to both roles in
every state, whole and in random chunks. After every step the engine's own
invariants hold, every output line is one JSON object, and a connection that
failed stays failed.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import (
    ClientConnection,
    ConnectionClosed,
    Event,
    Limits,
    RemoteProtocolError,
    ServerConnection,
    State,
)
from mcp_core.testing import strategies as mst

from .engine_support import (
    legacy_client,
    legacy_server,
    modern_client,
    modern_server,
    server,
)

SMALL = Limits(max_message_bytes=4096, max_depth=16, max_integer_digits=30, max_string_length=512)
# Lines over this limit are common in the generated input, so fatal paths get exercised.
TIGHT = Limits(max_message_bytes=300, max_depth=8, max_integer_digits=10, max_string_length=64)

Factory = Callable[[], ClientConnection | ServerConnection]
PEERS: dict[str, tuple[Factory, str, str]] = {
    # name: (connection factory, revision its peer speaks, the peer's role)
    "fresh-server": (lambda: server(limits=SMALL), "2025-11-25", "client"),
    "legacy-server-0326": (
        lambda: legacy_server("2025-03-26", {"roots": {}}, limits=SMALL),
        "2025-03-26",
        "client",
    ),
    "legacy-server": (lambda: legacy_server(limits=SMALL), "2025-11-25", "client"),
    "modern-server": (lambda: modern_server(limits=SMALL), "2026-07-28", "client"),
    "legacy-client": (
        lambda: legacy_client(capabilities={"sampling": {}, "roots": {}}, limits=SMALL),
        "2025-11-25",
        "server",
    ),
    "modern-client": (lambda: modern_client(limits=SMALL), "2026-07-28", "server"),
}
TIGHT_PEERS: dict[str, tuple[Factory, str, str]] = {
    "tight-server": (lambda: legacy_server(limits=TIGHT), "2025-11-25", "client"),
    "tight-modern-server": (lambda: modern_server(limits=TIGHT), "2026-07-28", "client"),
    "tight-client": (
        lambda: legacy_client(capabilities={"sampling": {}}, limits=TIGHT),
        "2025-11-25",
        "server",
    ),
}
ALL_PEERS = {**PEERS, **TIGHT_PEERS}


def drive(conn: ClientConnection | ServerConnection, chunks: list[bytes]) -> list[Event]:
    events: list[Event] = []
    for chunk in filter(None, chunks):
        if conn.state == State.ERROR:
            try:
                conn.receive_data(chunk)
            except RemoteProtocolError:
                continue
            raise AssertionError("a failed connection accepted more input")
        events += conn.receive_data(chunk)
        if conn.state != State.ERROR:  # see test_framing: the buffer outlives a framing error
            conn.check_invariants()
        output = conn.data_to_send()
        for raw in output.split(b"\n")[:-1]:
            assert type(json.loads(raw)) is dict
    return events


@functools.cache
def lines_for(peer: str) -> st.SearchStrategy[bytes]:
    _, revision, sender = ALL_PEERS[peer]
    valid = mst.valid_messages(revision, sender).map(lambda m: json.dumps(m).encode())
    return st.lists(st.one_of(valid, mst.invalid_messages()), min_size=1, max_size=6).map(
        lambda items: b"".join(item + b"\n" for item in items)
    )


@st.composite
def scenario(
    draw: st.DrawFn, peers: tuple[str, ...] = tuple(sorted(PEERS))
) -> tuple[str, bytes, list[int]]:
    peer = draw(st.sampled_from(peers))
    data = draw(lines_for(peer))
    cuts = draw(st.lists(st.integers(min_value=1, max_value=max(1, len(data) - 1)), max_size=6))
    return peer, data, sorted(set(cuts))


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *[c for c in cuts if 0 < c < len(data)], len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def normalized(events: list[Event]) -> list[Any]:
    """Events, comparable across runs (exceptions compare by identity)."""
    return [
        (e.reason, e.abandoned_inbound, e.error and (e.error.code, e.error.message))
        if isinstance(e, ConnectionClosed)
        else e
        for e in events
    ]


def outcome(peer: str, chunks: list[bytes]) -> tuple[Any, ...]:
    conn = ALL_PEERS[peer][0]()
    events = drive(conn, chunks)
    if conn.state == State.ERROR:
        closed = [e for e in events if isinstance(e, ConnectionClosed)]
        assert len(closed) == 1 and isinstance(closed[0].error, RemoteProtocolError)
        assert closed[0] is events[-1]
        tail: list[Event] = []
    else:
        tail = conn.receive_data(b"")
        assert isinstance(tail[-1], ConnectionClosed) and tail[-1].error is None
        conn.check_invariants()
    return tuple(normalized(events)), tuple(normalized(tail)), conn.state


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario())
def test_split_equivalence_on_generated_conversations(case: tuple[str, bytes, list[int]]) -> None:
    peer, data, cuts = case
    assert outcome(peer, split(data, cuts)) == outcome(peer, [data])


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario(tuple(sorted(ALL_PEERS))))
def test_any_input_gives_events_never_stray_exceptions(case: tuple[str, bytes, list[int]]) -> None:
    # `outcome` lets nothing but RemoteProtocolError out of a failed connection and
    # checks the invariants; both feeds must survive, whole and chunked.
    peer, data, cuts = case
    outcome(peer, [data])
    outcome(peer, split(data, cuts))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), st.sampled_from(sorted(ALL_PEERS)))
def test_random_bytes(data: bytes, peer: str) -> None:
    conn = ALL_PEERS[peer][0]()
    drive(conn, [data, b"\n", data + b"\n"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mst.json_values(max_leaves=12), st.sampled_from(sorted(ALL_PEERS)))
def test_any_json_value_through_receive_message(value: Any, peer: str) -> None:
    conn = ALL_PEERS[peer][0]()
    conn.receive_message(json.dumps(value))
    conn.check_invariants()
    for message in conn.messages_to_send():
        assert type(json.loads(message.payload)) is dict
