"""The client's result lane against the general path (differential).

`ClientConnection._receive_response` takes a well-formed result to one of our
application requests in one function and hands everything else to the general
path before it changes anything. These tests feed the same response to two
clients in the same state, one of them inside `general_path_only()`, and
compare what comes out: the events (dataclass equality), the bytes queued,
the connection's whole state (every slot, walked) and the answered request's
record. Results of every kind of client request in both eras, drawn from
`mcp_core.testing.strategies.valid_results`, then each single-change mutation
of a response (`mcp_core.testing.mutations`), so that every case the lane
refuses is seen to reach the same place the general path takes it.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import ClientConnection, Event, ResponseReceived
from mcp_core.testing import general_path_only
from mcp_core.testing.mutations import mutations
from mcp_core.testing.strategies import valid_results

from .engine_support import FULL_SERVER_CAPS, MODERN, legacy_client, line, modern_client, result

LEGACY = "2025-11-25"

# Requests a client sends, with params its config and the server's declaration allow.
METHODS: dict[str, Any] = {
    "tools/call": {"name": "echo", "arguments": {"text": "hi"}},
    "tools/list": None,
    "prompts/get": {"name": "greet", "arguments": {"who": "you"}},
    "prompts/list": None,
    "resources/read": {"uri": "file:///a.txt"},
    "resources/list": None,
    "resources/templates/list": None,
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "who", "value": "y"},
    },
}
LEGACY_ONLY: dict[str, Any] = {
    "ping": None,
    "resources/unsubscribe": {"uri": "file:///a.txt"},
    "tasks/get": {"taskId": "t1"},
    "tasks/result": {"taskId": "t1"},
    "tasks/list": None,
    "logging/setLevel": {"level": "info"},
    "resources/subscribe": {"uri": "file:///a.txt"},
}


def _methods(revision: str) -> list[tuple[str, Any]]:
    both = list(METHODS.items())
    return both if revision == MODERN else [*both, *LEGACY_ONLY.items()]


SERVER_CAPS = {
    **FULL_SERVER_CAPS,
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}

CASES = [(rev, m, p) for rev in (LEGACY, MODERN) for m, p in _methods(rev)]


def _client(revision: str) -> ClientConnection:
    if revision == MODERN:
        return modern_client()
    return legacy_client(revision, server_caps=SERVER_CAPS)


def dump(value: Any, depth: int = 0) -> Any:
    """A connection's state as plain values that compare by content: slotted objects
    become (type, their slots), tables their items; callables are named, not compared
    by identity (two connections' bound methods are never equal)."""
    if depth > 12:
        return "..."
    if isinstance(value, enum.Enum) or value is None or type(value) in (int, str, float, bool):
        return value
    if isinstance(value, dict):
        return (type(value).__name__, [(k, dump(v, depth + 1)) for k, v in value.items()])
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return (type(value).__name__, [dump(v, depth + 1) for v in items])
    if callable(value) and not hasattr(value, "__slots__"):
        return ("callable", getattr(value, "__qualname__", repr(type(value))))
    slots = [s for cls in type(value).__mro__ for s in getattr(cls, "__slots__", ())]
    if slots and not hasattr(value, "model_dump"):
        return (
            type(value).__name__,
            [(s, dump(getattr(value, s, "<unset>"), depth + 1)) for s in slots],
        )
    return value


def deliver(
    make: Callable[[], tuple[ClientConnection, Any]],
    response: Callable[[Any], Any],
    *,
    general: bool,
) -> tuple[list[Event], bytes, Any, Any]:
    """Make a client with one request in flight, feed it the response, and return what
    came out and what the client holds after."""
    with general_path_only() if general else nullcontext():
        client, rid = make()
        entry = client._outbound.get(rid)
        events = client.receive_data(line(response(rid)))
        client.check_invariants()
        return events, client.data_to_send(), dump(client), dump(entry)


def assert_same(
    make: Callable[[], tuple[ClientConnection, Any]],
    response: Callable[[Any], Any],
    case: object = "",
) -> list[Event]:
    lane = deliver(make, response, general=False)
    general = deliver(make, response, general=True)
    assert lane[0] == general[0], case
    assert [repr(e) for e in lane[0]] == [repr(e) for e in general[0]], case
    assert [type(e) for e in lane[0]] == [type(e) for e in general[0]], case
    assert lane[1] == general[1], case
    assert lane[2] == general[2], case
    assert lane[3] == general[3], case
    return lane[0]


def sender(revision: str, method: str, params: Any, **kw: Any) -> Callable[[], Any]:
    def make() -> tuple[ClientConnection, Any]:
        client = _client(revision)
        rid = client.send_request(method, params, **kw)
        client.data_to_send()
        return client, rid

    return make


@pytest.mark.parametrize(("revision", "method", "params"), CASES)
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_valid_results_come_out_the_same(
    revision: str, method: str, params: Any, data: st.DataObject
) -> None:
    body = data.draw(valid_results(revision, method))
    events = assert_same(sender(revision, method, params), lambda rid: result(rid, body))
    assert [type(e) for e in events] == [ResponseReceived]
    # The lane fills the event in place (`ResponseReceivedTwin`): still frozen.
    with pytest.raises(dataclasses.FrozenInstanceError):
        events[0].method = "x"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("revision", "method", "params"), CASES)
def test_progress_deadline_and_ids_after_a_result_are_the_same(
    revision: str, method: str, params: Any
) -> None:
    """A request with a progress token and a deadline: the token goes with the result,
    and the deadline finds nothing to fail, either way."""
    body: dict[str, Any] = {"content": []} if method == "tools/call" else {}
    if method == "tools/call" and revision == MODERN:
        body["resultType"] = "complete"
    for variant in (
        lambda rid: result(rid, body),
        # A string id for an int request is not ours: ignored, the same way.
        lambda rid: result(str(rid), body),
        lambda rid: result(rid + 1, body),
    ):
        assert_same(sender(revision, method, params, deadline=5.0, progress=True), variant)


def _mutated(revision: str, method: str, body: dict[str, Any]) -> Iterator[Any]:
    message = result(0, body)
    insert = {"": ["error"], "result": ["resultType", "taskId", "_meta", "task"]}
    yield from mutations(message, insert=insert)


MUTATED = [
    (LEGACY, "tools/call", {"content": [{"type": "text", "text": "x"}], "isError": False}),
    (LEGACY, "resources/read", {"contents": [{"uri": "file:///a.txt", "text": "x"}]}),
    (LEGACY, "ping", {}),
    (
        MODERN,
        "tools/call",
        {
            "content": [{"type": "text", "text": "x"}],
            "structuredContent": {"r": 1},
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
        },
    ),
    (
        MODERN,
        "prompts/get",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
            "resultType": "complete",
        },
    ),
    (MODERN, "tools/list", {"tools": [], "resultType": "complete", "ttlMs": 0}),
]


@pytest.mark.parametrize(("revision", "method", "body"), MUTATED)
def test_every_mutation_of_a_result_comes_out_the_same(
    revision: str, method: str, body: dict[str, Any]
) -> None:
    """Each single change of a good response (a wrong type anywhere, a member gone, an
    `error`, `resultType`, `taskId` or `task` added) reaches the same events, bytes and
    state with the lane as without it: the lane takes the well-formed ones and leaves
    the rest, untouched, to the general path."""
    params = {**METHODS, **LEGACY_ONLY}[method]
    taken = 0
    for mutation in _mutated(revision, method, body):
        wire = mutation.message

        def response(rid: Any, wire: Any = wire) -> Any:
            # The request's id where the mutation left the original id in place.
            if isinstance(wire, dict) and wire.get("id") == 0 and type(wire.get("id")) is int:
                return {**wire, "id": rid}
            return wire

        events = assert_same(sender(revision, method, params), response, mutation)
        taken += [type(e) for e in events] == [ResponseReceived]
    # Some mutations are still good results (an extra member, say): the lane serves them.
    assert taken > 0


def test_a_retried_call_ends_the_same() -> None:
    """A 2026-07-28 call answered after an input round: its result comes under the
    retry's wire id and is reported under the call's own id, and the client forgets the
    retry's id, the same way on both paths."""
    ask = {
        "resultType": "input_required",
        "inputRequests": {
            "q": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Name?",
                    "requestedSchema": {"type": "object", "properties": {}},
                },
            }
        },
    }

    def make() -> tuple[ClientConnection, Any]:
        client = modern_client(capabilities={"elicitation": {"form": {}}})
        cid = client.send_request("tools/call", METHODS["tools/call"])
        client.data_to_send()
        [question] = client.receive_data(line(result(cid, ask)))
        client.send_result(question.request_id, {"action": "decline"})  # type: ignore[attr-defined]
        retry = client.data_to_send()
        wire_id = json.loads(retry)["id"]
        assert wire_id != cid
        return client, wire_id

    body = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}
    events = assert_same(make, lambda rid: result(rid, body))
    [event] = events
    assert isinstance(event, ResponseReceived)
    assert event.request_id == 0


def _task(status: str) -> dict[str, Any]:
    return {
        "taskId": "t1",
        "status": status,
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z",
        "ttl": 60_000,
    }


@pytest.mark.parametrize(
    ("method", "params", "body"),
    [
        # A task's final status in a tasks/get result frees its progress token...
        ("tasks/get", {"taskId": "t1"}, _task("completed")),
        ("tasks/get", {"taskId": "t1"}, _task("working")),
        # ... and so does its payload from tasks/result, which names it in `_meta`.
        (
            "tasks/result",
            {"taskId": "t1"},
            {"content": [], "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}},
        ),
        ("tasks/result", {"taskId": "t1"}, {"content": []}),
        ("tasks/cancel", {"taskId": "t1"}, _task("cancelled")),
        # A plain result, the task still live: its token stays routed.
        ("tools/list", None, {"tools": []}),
    ],
)
def test_legacy_task_bookkeeping_is_the_same(method: str, params: Any, body: Any) -> None:
    """A legacy task-augmented call keeps its progress token live after its
    CreateTaskResult; a later result naming the task's end frees it. Both results
    are judged the same way with the lane as without it."""

    def make_live() -> tuple[ClientConnection, Any]:
        client = _client(LEGACY)
        rid = client.send_request(
            "tools/call", {"name": "slow", "task": {"ttl": 1000}}, progress=True
        )
        client.data_to_send()
        return client, rid

    # The CreateTaskResult itself (a task-augmented request: the general path's).
    assert_same(make_live, lambda rid: result(rid, {"task": _task("working")}))
    # (One that would pass for a CallToolResult too: still read as the task.)
    both = {"task": _task("working"), "content": []}
    assert_same(make_live, lambda rid: result(rid, both))

    def make() -> tuple[ClientConnection, Any]:
        client, rid = make_live()
        [created] = client.receive_data(line(result(rid, {"task": _task("working")})))
        assert isinstance(created, ResponseReceived)
        assert client._progress_tokens
        asked = client.send_request(method, params)
        client.data_to_send()
        return client, asked

    assert_same(make, lambda rid: result(rid, body))


def _through(entry: str) -> Callable[[ClientConnection, bytes], list[Event]]:
    """A client's way in for one whole response: a framed transport's `receive_message`
    (the in-process link's, and the lane itself), or `receive_parsed`."""
    if entry == "message":
        return lambda client, data: client.receive_message(data[:-1])
    return lambda client, data: client.receive_parsed(json.loads(data))


@pytest.mark.parametrize("entry", ["message", "parsed"])
@pytest.mark.parametrize(("revision", "method", "body"), MUTATED)
def test_every_mutation_through_a_framed_entry_comes_out_the_same(
    entry: str, revision: str, method: str, body: dict[str, Any]
) -> None:
    """As `test_every_mutation_of_a_result_comes_out_the_same`, through
    `receive_message` (the whole-message lane is that function itself) and
    `receive_parsed`: events, bytes, every slot of the client, the entry."""
    params = {**METHODS, **LEGACY_ONLY}[method]
    feed = _through(entry)
    make = sender(revision, method, params)
    taken = 0
    for mutation in _mutated(revision, method, body):
        wire = mutation.message
        outcomes = []
        for general in (False, True):
            with general_path_only() if general else nullcontext():
                client, rid = make()
                if isinstance(wire, dict) and wire.get("id") == 0 and type(wire.get("id")) is int:
                    message: Any = {**wire, "id": rid}
                else:
                    message = wire
                entry_record = client._outbound.get(rid)
                events = feed(client, line(message))
                client.check_invariants()
                outcomes.append(
                    (events, [repr(e) for e in events], client.data_to_send(), dump(client))
                )
                outcomes[-1] += (dump(entry_record),)
        assert outcomes[0] == outcomes[1], mutation
        taken += [type(e) for e in outcomes[0][0]] == [ResponseReceived]
    assert taken > 0
