"""The server's request lane against the general path (differential).

`ServerConnection._request_lane` takes a plain, well-formed request in one function
and must do exactly what `_dispatch` ... `_modern_request` / `_legacy_request` do for
it: same events, same bytes out, same state after. Everything it does not take must
reach the general path untouched. Each case here feeds the same input to two servers
in the same state, one inside `general_path_only()`, and compares the three.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_core import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    Era,
    Limits,
    RequestContext,
    RequestReceived,
    ServerConfig,
    ServerConnection,
    State,
)
from mcp_core._base import _Connection
from mcp_core._requests import Inbound
from mcp_core.testing import default_server_config, general_path_only
from mcp_core.testing.mutations import mutations

MODERN = "2026-07-28"
LEGACY = "2025-11-25"

ENVELOPE: dict[str, Any] = {
    META_PROTOCOL_VERSION: MODERN,
    META_CLIENT_CAPABILITIES: {"roots": {"listChanged": True}, "sampling": {}},
    META_CLIENT_INFO: {"name": "lane-test", "version": "1.0"},
}

# Plain requests of several methods, as their params (the lane serves them all alike).
PLAIN: list[tuple[str, dict[str, Any] | None]] = [
    ("tools/call", {"name": "echo", "arguments": {"text": "hello world"}}),
    ("tools/list", {}),
    ("tools/list", None),
    ("resources/read", {"uri": "file:///a.txt"}),
    ("resources/list", {"cursor": "c1"}),
    ("prompts/get", {"name": "greet", "arguments": {"who": "you"}}),
    ("prompts/list", {}),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "w", "value": "y"}},
    ),
    ("tools/call", {"name": "echo", "_meta": {"progressToken": 7}}),
    ("tools/call", {"name": "echo", "_meta": {"progressToken": "t", "other": [1]}}),
    ("tools/call", {"name": "echo", "_meta": {"progressToken": 1.5}}),
    # Not the lane's: each has a step of its own, and must come out the same too.
    ("ping", None),
    ("logging/setLevel", {"level": "info"}),
    ("resources/subscribe", {"uri": "file:///a.txt"}),
    ("resources/unsubscribe", {"uri": "file:///a.txt"}),
    ("server/discover", {}),
    ("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
    ("tasks/get", {"taskId": "t1"}),
    ("tools/call", {"name": "echo", "task": {"ttl": 1000}}),
    # The lane reads `task` from the params, not the model: null, and a `task` member
    # of a method whose model has no such field (kept as an extra).
    ("tools/call", {"name": "echo", "task": None}),
    ("tools/call", {"name": "echo", "task": {}}),
    ("prompts/list", {"task": {"ttl": 5}}),
    ("prompts/list", {"task": None}),
    ("tools/call", {"name": "echo", "requestState": "forged"}),
    ("tools/call", {"name": "echo", "inputResponses": {}}),
    (
        "initialize",
        {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"},
        },
    ),
    ("no/such/method", {}),
]


def request(era: str, rid: Any, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The message of a request in `era`: a 2026-07-28 one carries the envelope."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if era == MODERN:
        params = dict(params or {})
        params["_meta"] = {**ENVELOPE, **params.get("_meta", {})}
    if params is not None:
        message["params"] = params
    return message


def line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def server(era: str, config: ServerConfig | None = None) -> ServerConnection:
    """A server whose era is known: a legacy session past its handshake, or a stream
    made modern by a first request (answered)."""
    conn = ServerConnection(config or default_server_config())
    if era == LEGACY:
        init = {
            "protocolVersion": LEGACY,
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "c", "version": "1"},
        }
        conn.receive_data(line(request(LEGACY, 0, "initialize", init)))
        conn.receive_data(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    else:
        (first,) = conn.receive_data(line(request(MODERN, 0, "tools/list", {})))
        assert isinstance(first, RequestReceived)
        conn.send_result(0, {"tools": []})
    conn.data_to_send()
    return conn


def snapshot(conn: ServerConnection) -> Any:
    """What a request can change on a server: its state, revision, framing buffer,
    session state and the in-flight table, entry by entry."""
    inbound = {
        rid: (e.method, e.progress_token, e.log_level, e.capabilities, e.params, e.context, e.state)
        for rid, e in conn._inbound.items()
    }
    return (
        conn.state,
        conn.era,
        conn.protocol_version,
        conn._lines is None,
        conn.log_level,
        conn.resource_subscriptions,
        dict(conn._subscribing),
        inbound,
    )


def settle(conn: ServerConnection) -> bytes:
    """Answer whatever is in flight (so the next case starts alike) and drain."""
    for rid in list(conn._inbound):
        conn.send_error(rid, -32603, "done")
    return conn.data_to_send()


def compare(
    lane: ServerConnection, general: ServerConnection, data: bytes, *, entry: str = "data"
) -> list[Any]:
    """Feed `data` to both through `entry` (`receive_data`, `receive_message`, or
    `receive_parsed` with what `json.loads` makes of it) and check they agree."""

    def receive(conn: ServerConnection) -> list[Any]:
        if entry == "message":
            return conn.receive_message(data)
        if entry == "parsed":
            return conn.receive_parsed(json.loads(data))
        return conn.receive_data(data)

    got = receive(lane)
    with general_path_only():
        want = receive(general)
    assert got == want
    assert [type(e) for e in got] == [type(e) for e in want]
    assert lane.data_to_send() == general.data_to_send()
    assert snapshot(lane) == snapshot(general)
    assert settle(lane) == settle(general)
    return got


@pytest.mark.parametrize("era", [LEGACY, MODERN])
@pytest.mark.parametrize("entry", ["data", "message", "parsed"])
def test_plain_requests_of_every_kind_come_out_as_on_the_general_path(era: str, entry: str) -> None:
    lane, general = server(era), server(era)
    for n, (method, params) in enumerate(PLAIN, 1):
        data = line(request(era, n, method, params))
        compare(lane, general, data if entry == "data" else data[:-1], entry=entry)


@pytest.mark.parametrize("entry", ["data", "parsed"])
@pytest.mark.parametrize("speaks", ["both", "modern", "legacy"])
def test_a_first_request_and_its_mutations_come_out_as_on_the_general_path(
    entry: str, speaks: str
) -> None:
    """A connection's first request picks its era (a 2026-07-28 POST's connection sees
    only that one): each on two fresh servers, one on the general path."""
    versions = {"both": (MODERN, LEGACY), "modern": (MODERN,), "legacy": (LEGACY,)}[speaks]
    config = default_server_config(supported_versions=versions)
    first = [line(request(MODERN, n, m, p)) for n, (m, p) in enumerate(PLAIN, 1)]
    first += [line(request(LEGACY, 1, m, p)) for m, p in PLAIN]
    first += [line(message) for message in _mutated(MODERN)]
    for data in first:
        lane, general = ServerConnection(config), ServerConnection(config)
        compare(lane, general, data if entry == "data" else data[:-1], entry=entry)


def test_a_first_modern_request_leaves_the_same_state_and_a_whole_entry() -> None:
    """The lane moves a fresh connection to the state the table gives the envelope and
    writes its `Inbound` slot by slot: every slot, the state and the era come out as on
    the general path (`snapshot` reads only some of the entry's slots)."""
    taken = 0
    for n, (method, params) in enumerate(PLAIN, 1):
        data = line(request(MODERN, n, method, params))
        lane, general = (
            ServerConnection(default_server_config()),
            ServerConnection(default_server_config()),
        )
        lane.receive_data(data)
        with general_path_only():
            general.receive_data(data)
        assert (lane.state, lane.era) == (general.state, general.era)
        assert list(lane._inbound) == list(general._inbound)
        if lane.era is Era.MODERN:
            taken += 1
            assert lane.state is State.READY
        for rid, want in general._inbound.items():
            got = lane._inbound[rid]
            assert type(got) is Inbound
            for slot in Inbound.__slots__:
                assert getattr(got, slot) == getattr(want, slot), slot
    assert taken >= 3  # (not vacuous: plain requests made the connections modern)


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_the_lane_takes_plain_requests(era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without this the differential tests could pass with the lane never taken.
    (The lanes on, even under `--general-path`: this is about the lane itself.)"""
    monkeypatch.setattr(_Connection, "_lanes", True)
    conn = server(era)
    taken: list[str] = []
    original = conn._request_lane

    def spy(obj: Any, method: Any, events: Any) -> bool:
        took = original(obj, method, events)
        if took:
            taken.append(method)
        return took

    conn._request_lane = spy  # type: ignore[method-assign]
    for n, (method, params) in enumerate(PLAIN[:11], 1):
        (event,) = conn.receive_data(line(request(era, n, method, params)))
        assert isinstance(event, RequestReceived)
    assert taken == [method for method, _ in PLAIN[:11]]


def _mutated(era: str) -> Iterator[Any]:
    insert = {
        "params": ["_meta", "task", "requestState"],
        "params._meta": [META_LOG_LEVEL, "progressToken"],
    }
    for method, params in PLAIN[:8]:
        yield from (m.message for m in mutations(request(era, "m", method, params), insert=insert))


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_every_mutation_of_a_plain_request_comes_out_as_on_the_general_path(era: str) -> None:
    lane, general = server(era), server(era)
    count = 0
    for n, message in enumerate(_mutated(era)):
        compare(lane, general, line(message), entry=("data", "parsed", "message")[n % 3])
        count += 1
    assert count > 500


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_an_id_in_flight_and_the_in_flight_limit_are_the_general_paths(era: str) -> None:
    config = default_server_config(limits=Limits(max_inbound_in_flight=3))
    lane, general = server(era, config), server(era, config)
    for rid in (1, 2, 2, 3, 4, 5):
        data = line(request(era, rid, "tools/call", {"name": "echo"}))
        got = lane.receive_data(data)
        with general_path_only():
            want = general.receive_data(data)
        assert got == want
        assert lane.data_to_send() == general.data_to_send()
        assert snapshot(lane) == snapshot(general)
    assert len(lane._inbound) == 3


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_a_capability_not_offered_and_the_log_level_are_judged_alike(era: str) -> None:
    config = ServerConfig(name="bare", capabilities={"tools": {}})
    lane, general = server(era, config), server(era, config)
    for n, (method, params) in enumerate(PLAIN, 1):
        compare(lane, general, line(request(era, n, method, params)))
    for n, level in enumerate(["debug", "loud", 3, None], 100):
        message = request(era, n, "tools/call", {"name": "echo"})
        message["params"]["_meta"] = {**message["params"].get("_meta", {}), META_LOG_LEVEL: level}
        compare(lane, general, line(message))


def test_a_modern_request_naming_another_revision_is_the_general_paths() -> None:
    lane, general = server(MODERN), server(MODERN)
    lane_legacy = server(LEGACY)  # fills the config's legacy table: it must not leak
    lane_legacy.receive_data(line(request(LEGACY, 9, "tools/call", {"name": "echo"})))
    for version in (LEGACY, "2099-01-01", MODERN):
        message = request(MODERN, version, "tools/call", {"name": "echo"})
        message["params"]["_meta"][META_PROTOCOL_VERSION] = version
        compare(lane, general, line(message))


def test_the_lane_memo_is_bounded_by_the_method_table() -> None:
    config = default_server_config()
    conn = server(MODERN, config)
    for n in range(200):
        conn.receive_data(line(request(MODERN, n, f"made/up/{n}", {})))
        message = request(MODERN, f"v{n}", "tools/list", {})
        message["params"]["_meta"][META_PROTOCOL_VERSION] = f"2030-01-{n}"
        conn.receive_data(line(message))
    modern, legacy = config.request_lanes
    assert set(modern) <= {MODERN} and not legacy
    assert all(not m.startswith("made/") for table in modern.values() for m in table)


def test_responses_and_partial_lines_take_the_general_framing_alike() -> None:
    lane, general = server(LEGACY), server(LEGACY)
    data = line(request(LEGACY, 1, "tools/call", {"name": "echo"}))
    two = data + line(request(LEGACY, 2, "tools/list", {}))
    for chunk in (
        data[:10],
        data[10:],
        two,
        two[:-1],
        b"\n",
        b"\r\n",
        b" " + data,
        data[:-1] + b"\r\n",
    ):
        got = lane.receive_data(chunk)
        with general_path_only():
            want = general.receive_data(chunk)
        assert got == want
        assert lane.data_to_send() == general.data_to_send()
        assert snapshot(lane) == snapshot(general)
    # An unknown response, and one to nothing: the same error events.
    for message in (
        {"jsonrpc": "2.0", "id": 99, "result": {}},
        {"jsonrpc": "2.0", "id": 98, "error": {"code": 1, "message": "m"}},
    ):
        compare(lane, general, line(message))


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_the_lanes_events_are_ordinary_frozen_dataclasses(era: str) -> None:
    """The lane builds its event (and a 2026-07-28 context) without calling the class:
    what comes out must be the public class, frozen, and equal, hashing, printing and
    pickling as one built the usual way."""
    conn = server(era)
    (event,) = conn.receive_data(
        line(request(era, 1, "tools/list", {"_meta": {"progressToken": 3}}))
    )
    assert type(event) is RequestReceived and type(event.context) is RequestContext
    for obj, name in ((event, "method"), (event.context, "progress_token")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, "changed")
    context = event.context
    usual = RequestReceived(
        1,
        "tools/list",
        event.params,
        RequestContext(
            context.protocol_version,
            context.client_capabilities,
            context.client_info,
            context.log_level,
            3,
            context.meta,
        ),
    )
    assert event == usual and repr(event) == repr(usual)
    assert _hashed(event) == _hashed(usual)
    assert _hashed(context) == _hashed(usual.context)
    assert pickle.loads(pickle.dumps(event)) == event
    assert dataclasses.astuple(context) == dataclasses.astuple(usual.context)


def _hashed(value: Any) -> Any:
    """The hash, or TypeError for a value holding a dict (as both kinds do alike)."""
    try:
        return hash(value)
    except TypeError:
        return TypeError
