"""Byte-level fuzzing of both connection roles in every state (harness H2 of RELIABILITY.md §5).

Every input is fed to a fresh copy of a connection in a known state several
ways: in one piece, byte by byte, at random split points and line by line.
Invariants, after every step:

(i)   only RemoteProtocolError escapes receiving, and only once the connection
      has failed; LocalProtocolError only after we ended the stream ourselves;
(ii)  every way of cutting the bytes gives the same events, the same output
      bytes and the same final state;
(iii) `check_invariants()` holds;
(iv)  a notification or a response never gets a reply; every request gets
      exactly one (checked line by line, the "application" answering every
      request it is shown), unless the connection died.

The run is deterministic (`derandomize=True`); the example counts below add up
to 2 000 (600 + 600 + 500 + 300) in `make test`. `MCP_FUZZ_SCALE` multiplies
them: `make fuzz` runs these tests with MCP_FUZZ_SCALE=10 (20 000 examples)
before the type-confusion fuzzer. The default run keeps the share that fits the
suite's time budget (10 000 examples, the count it used to run, cost about 127 s of
CPU on the project's 2-core test machine, a fifth of the whole suite); as
the examples are the same on every run, more of them in every CI run would
repeat the same inputs, while the larger run and atheris (fuzz/) look further.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import ALL_REVISIONS, Limits, RemoteProtocolError, State
from mcp_core.testing.strategies import (
    chunked,
    invalid_messages,
    message_bytes,
    valid_messages,
)

from .harness import (
    CLIENT_SETUPS,
    MODERN_META,
    SERVER_SETUPS,
    SMALL_LIMITS,
    Factory,
    check,
    check_equivalent,
    client_factory,
    feed,
    reply_accounting,
    scaled,
    server_factory,
)

# Coverage is off in the four generated tests below (pytest-cov's `no_cover`): they
# run thousands of examples through the engine, and tracing every line of each doubled
# their CPU time (the suite's largest share). Other tests reach nearly all the same
# lines: without these, mcp_core's coverage went from 96.84 % to 96.77 % (a few
# lines, most in mcp_core/testing/strategies.py). What they assert is unchanged;
# test_after_failure_input_is_refused and the rest of tests/fuzz still count.
NO_COVER = pytest.mark.no_cover


def fuzz(max_examples: int) -> settings:
    """Deterministic, no deadline: CI sees the same examples on every run.

    `max_examples` is the count in `make test`, times `MCP_FUZZ_SCALE`."""
    return settings(
        max_examples=scaled(max_examples),
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


BYTEWISE_LIMIT = 400  # feed byte by byte up to this size (beyond: 1..7-byte chunks)
# Random cut points, drawn once per example and applied modulo the input length
# (cheaper than building `chunked(data)` for every example; test_noise uses it).
_CUTS = st.lists(st.integers(min_value=1, max_value=2**16), max_size=12)

# Ids that collide with what the prepared connections have in flight.
IDS = st.one_of(st.sampled_from([0, 1, 2, 3, "a", "0", "p1"]), st.integers(), st.text(max_size=4))

_VALID: dict[tuple[str, str], st.SearchStrategy[dict[str, Any]]] = {
    (rev, sender): valid_messages(rev, sender, ids=IDS)  # type: ignore[arg-type]
    for rev in ALL_REVISIONS
    for sender in ("client", "server")
}

# Hand-made messages aimed at the prepared state (cancels and progress for the
# requests in flight, a second initialize, a late handshake answer ...).
_AIMED: dict[str, list[dict[str, Any]]] = {
    "client": [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "a"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "again", "version": "2"},
            },
        },
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {"_meta": MODERN_META}},
        {"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel", "params": {"level": "error"}},
        {"jsonrpc": "2.0", "id": 8, "method": "ping"},
        {"jsonrpc": "2.0", "id": 0, "result": {}},
    ],
    "server": [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 2, "progress": 0.5, "total": 1},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 2, "progress": "lots"},
        },
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {},
                "resultType": "complete",
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 0,
            "error": {"code": -32022, "message": "no", "data": {"supported": ["2025-03-26"]}},
        },
        {"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "no discover"}},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "input_required"}},
        {"jsonrpc": "2.0", "id": 2, "result": {"content": "not a list"}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -1, "message": "x"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}},
        {"jsonrpc": "2.0", "id": 9, "method": "roots/list"},
        {"jsonrpc": "2.0", "id": 10, "method": "ping"},
    ],
}


def _messages_from(sender: str) -> st.SearchStrategy[Any]:
    return st.one_of(
        *(_VALID[(rev, sender)] for rev in ALL_REVISIONS),
        invalid_messages(),
        st.sampled_from(_AIMED[sender]),
    )


def _noise() -> st.SearchStrategy[bytes]:
    """Bytes with no JSON-RPC shape at all, newlines sprinkled in."""
    return st.one_of(
        st.binary(max_size=300),
        st.lists(st.binary(max_size=40), max_size=8).map(b"\n".join),
        st.lists(
            st.sampled_from([b"{", b"}", b"[", b"]", b'"', b"\\", b"\n", b"\r", b"\xff", b"1"]),
            max_size=30,
        ).map(b"".join),
    )


def _inputs(sender: str) -> st.SearchStrategy[bytes]:
    messages = message_bytes(_messages_from(sender), min_size=1, max_size=4)
    return st.one_of(messages, messages, messages, _noise())


def _check_all(
    factory: Factory, data: bytes, draw: st.DataObject, eof: bool, *, use_chunked: bool = False
) -> None:
    if len(data) <= BYTEWISE_LIMIT:
        bytewise = [data[i : i + 1] for i in range(len(data))]
    else:
        sizes = draw.draw(st.lists(st.integers(1, 7), min_size=1, max_size=8), label="sizes")
        bytewise, i, k = [], 0, 0
        while i < len(data):
            bytewise.append(data[i : i + sizes[k % len(sizes)]])
            i += sizes[k % len(sizes)]
            k += 1
    if use_chunked:
        random_split = draw.draw(chunked(data), label="chunks")
    else:
        cuts = sorted({c % len(data) for c in draw.draw(_CUTS, label="cuts")} - {0} if data else [])
        bounds = [0, *cuts, len(data)]
        random_split = [data[a:b] for a, b in itertools.pairwise(bounds)]
    splits = [bytewise, random_split]
    check_equivalent(factory, data, splits, eof)
    reply_accounting(factory, data)


_LIMITS = st.sampled_from([Limits(), SMALL_LIMITS])


@NO_COVER
@fuzz(600)
@given(
    setup=st.sampled_from(sorted(SERVER_SETUPS)),
    versions=st.sampled_from([None, ("2025-03-26",), ("2026-07-28",)]),
    limits=_LIMITS,
    data=_inputs("client"),
    eof=st.booleans(),
    draw=st.data(),
)
def test_server_stream(
    setup: str,
    versions: tuple[str, ...] | None,
    limits: Limits,
    data: bytes,
    eof: bool,
    draw: st.DataObject,
) -> None:
    if setup != "fresh" and versions is not None:
        versions = None  # the prepared sessions need a server that speaks their era
    _check_all(server_factory(setup, limits=limits, versions=versions), data, draw, eof)


@NO_COVER
@fuzz(600)
@given(
    setup=st.sampled_from(CLIENT_SETUPS),
    limits=_LIMITS,
    data=_inputs("server"),
    eof=st.booleans(),
    draw=st.data(),
)
def test_client_stream(
    setup: str, limits: Limits, data: bytes, eof: bool, draw: st.DataObject
) -> None:
    _check_all(client_factory(setup, limits=limits), data, draw, eof)


@NO_COVER
@fuzz(500)
@given(
    role=st.sampled_from(["server", "client"]),
    setup=st.integers(0, 4),
    limits=_LIMITS,
    data=_noise(),
    draw=st.data(),
)
def test_noise(role: str, setup: int, limits: Limits, data: bytes, draw: st.DataObject) -> None:
    if role == "server":
        factory = server_factory(sorted(SERVER_SETUPS)[setup % 3], limits=limits)
    else:
        factory = client_factory(CLIENT_SETUPS[setup], limits=limits)
    _check_all(factory, data, draw, eof=False, use_chunked=True)


@NO_COVER
@fuzz(300)
@given(
    role_and_data=st.one_of(
        st.tuples(st.just("server"), message_bytes(_messages_from("client"), max_size=4)),
        st.tuples(st.just("client"), message_bytes(_messages_from("server"), max_size=4)),
    ),
    setup=st.integers(0, 4),
    limits=_LIMITS,
)
def test_receive_message_matches_stream(
    role_and_data: tuple[str, bytes], setup: int, limits: Limits
) -> None:
    """Message-framed transports: `receive_message(body)` acts as `receive_data(body + b"\\n")`.

    Over the size limit too: the stream discards the line keeping its ends, the
    framed path reads the same ends of the whole message, and both refuse it
    alike. (An over-long line ending in CR is left out: the CR counts against a
    line's limit but is not part of the body.)
    """
    role, data = role_and_data
    if role == "server":
        factory = server_factory(sorted(SERVER_SETUPS)[setup % 3], limits=limits)
    else:
        factory = client_factory(CLIENT_SETUPS[setup], limits=limits)
    bodies = [
        b.rstrip(b"\r")
        for b in data.split(b"\n")
        if b.strip() and (len(b) <= limits.max_message_bytes or not b.endswith(b"\r"))
    ]
    framed = factory()
    streamed = factory()
    for body in bodies:
        if framed.state in (State.ERROR, State.CLOSED):
            break
        as_text: bytes | str = body
        with contextlib.suppress(UnicodeDecodeError):
            as_text = body.decode("utf-8")
        got = [repr(e) for e in framed.receive_message(as_text)]
        check(framed)
        want = feed(streamed, [body + b"\n"])
        assert got == want.events, body
        assert framed.data_to_send() == want.output
        assert framed.state == want.state


@pytest.mark.parametrize("role", ["server", "client"])
def test_after_failure_input_is_refused(role: str) -> None:
    """Invariant (i) at the edge: a failed connection raises RemoteProtocolError, every time."""
    factory = (
        server_factory("legacy", limits=SMALL_LIMITS)
        if role == "server"
        else client_factory("legacy", limits=SMALL_LIMITS)
    )
    conn = factory()
    events = conn.close("the layer below broke", error=RemoteProtocolError("broken"))
    assert conn.state == State.ERROR and events[-1].__class__.__name__ == "ConnectionClosed"
    for _ in range(2):
        with pytest.raises(RemoteProtocolError):
            conn.receive_data(b"{}\n")
    assert conn.tick(1e9) == [] and conn.data_to_send() == b""
    check(conn)
