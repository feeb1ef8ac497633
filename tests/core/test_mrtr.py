"""Multi round-trip requests (2026-07-28): the server's `send_input_required`, the
sealed `requestState`, and the client's answer-and-retry loop.

Every message either engine emits is validated against the official schema.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from pydantic import BaseModel

from mcp_core import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    INVALID_REQUEST_STATE_MESSAGE,
    ClientConfig,
    ClientConnection,
    ErrorReceived,
    LocalProtocolError,
    MessageRejected,
    ProgressReceived,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    RequestStateRejected,
    ResponseIgnored,
    ResponseReceived,
    ServerConnection,
)
from mcp_core._elicitation import form_schema, validate_form_answer
from mcp_core.testing import default_server_config
from mcp_core.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    ListRootsResult,
)
from tests.core.interaction_support import (
    KEY1,
    KEY2,
    MODERN,
    Wire,
    drain,
    envelope,
    inject,
    legacy_wire,
    modern_wire,
    of_type,
    one,
)

T0 = 1000.0
ALL_INPUT_CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}


class Booking(BaseModel):
    party: int
    day: datetime.date


def ask_booking(revision: str = MODERN) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Which day, and for how many?",
            "requestedSchema": form_schema(Booking, revision=revision),
        },
    }


ASK_SAMPLING = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise"}}],
        "maxTokens": 50,
    },
}
ASK_ROOTS = {"method": "roots/list"}
SAMPLING_ANSWER = {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m1"}
ROOTS_ANSWER = {"roots": [{"uri": "file:///work", "name": "work"}]}
ACCEPT = {"action": "accept", "content": {"party": 2, "day": "2026-08-01"}}


def call(w: Wire, method: str = "tools/call", params: dict[str, Any] | None = None) -> Any:
    """Client sends `method`; returns (client id, the server's RequestReceived)."""
    if params is None:
        params = {"name": "book", "arguments": {"n": 2}}
    cid = w.client.send_request(method, params)
    _, server_events = w.pump()
    return cid, one(server_events, RequestReceived)


def retry_params(msg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in msg["params"].items() if k not in ("inputResponses", "requestState")}


# ====================================================================== server side


ELIGIBLE = [
    ("tools/call", {"name": "book", "arguments": {"n": 2}}),
    ("prompts/get", {"name": "greet", "arguments": {"who": "Ann"}}),
    ("resources/read", {"uri": "file:///booking.txt"}),
]
INELIGIBLE = [
    ("tools/list", {}),
    ("prompts/list", {}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}},
    ),
    ("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
]


@pytest.mark.parametrize(("method", "params"), ELIGIBLE)
def test_eligible_methods_round_trip_with_sealed_state(method: str, params: dict[str, Any]) -> None:
    w = modern_wire({"elicitation": {}})
    cid, req = call(w, method, params)
    assert w.server.send_input_required(
        req.request_id, {"booking": ask_booking()}, state={"step": 1}, wall_time=T0
    )
    client_events, _ = w.pump()
    slot = one(client_events, RequestReceived)
    interim = w.last("server")["result"]
    assert interim["resultType"] == "input_required"
    assert set(interim["inputRequests"]) == {"booking"}
    assert isinstance(interim["requestState"], str)
    assert "ttlMs" not in interim and "cacheScope" not in interim

    w.client.send_result(slot.request_id, ACCEPT)
    _, server_events = w.pump()
    retry = one(server_events, RequestReceived)
    assert retry.method == method
    assert retry.request_id != req.request_id
    assert retry.context.request_state == {"step": 1}
    answer = retry.context.input_responses["booking"]
    assert isinstance(answer, ElicitResult)
    assert validate_form_answer(Booking, answer.content) == Booking(
        party=2, day=datetime.date(2026, 8, 1)
    )
    final: dict[str, Any] = {
        "tools/call": {"content": [{"type": "text", "text": "ok"}]},
        "prompts/get": {"messages": []},
        "resources/read": {"contents": [{"uri": "file:///booking.txt", "text": "ok"}]},
    }[method]
    w.server.send_result(retry.request_id, final)
    client_events, _ = w.pump()
    done = one(client_events, ResponseReceived)
    assert (done.request_id, done.method) == (cid, method)


@pytest.mark.parametrize(("method", "params"), INELIGIBLE)
def test_other_methods_cannot_answer_with_input_required(
    method: str, params: dict[str, Any]
) -> None:
    w = modern_wire({"elicitation": {}})
    _, req = call(w, method, params)
    with pytest.raises(LocalProtocolError, match="InputRequiredResult"):
        w.server.send_input_required(req.request_id, {"q": ask_booking()}, wall_time=T0)
    assert w.server.data_to_send() == b""
    # resultType input_required through send_result is refused too.
    with pytest.raises(LocalProtocolError):
        w.server.send_result(req.request_id, {"resultType": "input_required", "requestState": "x"})
    assert w.server.data_to_send() == b""


def test_input_required_is_refused_on_a_legacy_session() -> None:
    w = legacy_wire("2025-11-25", {"elicitation": {}})
    _, req = call(w)
    with pytest.raises(LocalProtocolError, match="send_request"):
        w.server.send_input_required(req.request_id, {"q": ask_booking("2025-11-25")}, wall_time=T0)
    assert w.server.data_to_send() == b""
    assert w.server.send_result(req.request_id, {"content": []})


def test_input_requests_need_questions_or_state() -> None:
    w = modern_wire({"elicitation": {}})
    _, req = call(w)
    with pytest.raises(LocalProtocolError):
        w.server.send_input_required(req.request_id, {}, wall_time=T0)
    with pytest.raises(LocalProtocolError):
        w.server.send_input_required(req.request_id, {"q": {"method": "tools/list"}}, wall_time=T0)
    assert w.server.data_to_send() == b""


def test_input_request_keys_are_the_servers_and_models_are_accepted() -> None:
    w = modern_wire(ALL_INPUT_CAPS)
    _, req = call(w)
    model = ElicitRequest(params=ElicitRequestFormParams(**ask_booking()["params"]))
    w.server.send_input_required(
        req.request_id,
        {"when-and-who": model, "llm.1": ASK_SAMPLING, "roots!": ASK_ROOTS},
        wall_time=T0,
    )
    client_events, _ = w.pump()
    interim = w.last("server")["result"]
    assert list(interim["inputRequests"]) == ["when-and-who", "llm.1", "roots!"]
    assert interim["inputRequests"]["roots!"] == {"method": "roots/list"}
    assert interim["inputRequests"]["when-and-who"]["params"]["mode"] == "form"
    assert [e.method for e in of_type(client_events, RequestReceived)] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]


def test_sealing_needs_a_clock() -> None:
    fresh = ServerConnection(default_server_config(request_state_keys=(KEY1,)))
    body = {"name": "book", "arguments": {"n": 2}, "_meta": envelope({"elicitation": {}})}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": body}
    with pytest.raises(LocalProtocolError, match="wall_time="):
        fresh.receive_data(json.dumps(message).encode() + b"\n")
    assert fresh.requests_in_flight == (0, 0)


def test_without_keys_state_must_be_a_string_and_passes_through() -> None:
    w = modern_wire({"elicitation": {}}, keys=())
    _, req = call(w)
    with pytest.raises(LocalProtocolError, match="request_state_keys"):
        w.server.send_input_required(req.request_id, {"q": ask_booking()}, state={"step": 1})
    w.server.send_input_required(req.request_id, {"q": ask_booking()}, state="app-sealed")
    client_events, _ = w.pump()
    assert w.last("server")["result"]["requestState"] == "app-sealed"
    w.client.send_result(one(client_events, RequestReceived).request_id, ACCEPT)
    _, server_events = w.pump()
    retry = one(server_events, RequestReceived)
    assert retry.context.request_state == "app-sealed"
    assert isinstance(retry.context.input_responses["q"], ElicitResult)


# ---------------------------------------------------------------- the retry's context


def _interim(w: Wire) -> tuple[Any, str]:
    """Send a call, ask one elicitation with state; return (client id, sealed token)."""
    cid, req = call(w)
    w.server.send_input_required(
        req.request_id, {"date": ask_booking()}, state={"s": 1}, wall_time=T0
    )
    w.pump()
    token = w.last("server")["result"]["requestState"]
    return cid, token


def raw_retry(
    server: ServerConnection,
    token: Any,
    responses: Any = None,
    *,
    method: str = "tools/call",
    params: dict[str, Any] | None = None,
    rid: Any = "raw-retry",
    caps: dict[str, Any] | None = None,
    wall_time: float = T0 + 1,
) -> tuple[list[Any], list[dict[str, Any]]]:
    body: dict[str, Any] = dict(
        params if params is not None else {"name": "book", "arguments": {"n": 2}}
    )
    body["_meta"] = envelope(caps if caps is not None else {"elicitation": {}})
    if token is not None:
        body["requestState"] = token
    if responses is not None:
        body["inputResponses"] = responses
    events = inject(
        server, {"jsonrpc": "2.0", "id": rid, "method": method, "params": body}, wall_time=wall_time
    )
    return events, drain(server, MODERN)


def test_unknown_answer_keys_are_ignored_and_missing_ones_absent() -> None:
    w = modern_wire({"elicitation": {}, "roots": {}})
    _, req = call(w)
    w.server.send_input_required(
        req.request_id, {"date": ask_booking(), "roots": ASK_ROOTS}, state=[1, 2], wall_time=T0
    )
    w.pump()
    token = w.last("server")["result"]["requestState"]
    events, out = raw_retry(
        w.server,
        token,
        {"date": ACCEPT, "bogus": ROOTS_ANSWER},
        caps={"elicitation": {}, "roots": {}},
    )
    assert out == []
    retry = one(events, RequestReceived)
    assert set(retry.context.input_responses) == {"date"}  # "roots" missing, "bogus" dropped
    assert retry.context.request_state == [1, 2]
    # The application re-asks for what is missing, in a new round.
    assert w.server.send_input_required(retry.request_id, {"roots": ASK_ROOTS}, state=[1, 2])
    [again] = drain(w.server, MODERN)
    assert again["id"] == "raw-retry"
    assert again["result"]["resultType"] == "input_required"


def test_answers_without_state_are_passed_on_validated() -> None:
    """Nothing sealed to check them against: the validated answers reach the
    application (which matches them to its own questions), with no state."""
    w = modern_wire({"elicitation": {}})
    events, out = raw_retry(w.server, None, {"date": ACCEPT, "extra": ROOTS_ANSWER})
    assert out == []
    retry = one(events, RequestReceived)
    answers = retry.context.input_responses
    assert answers is not None and set(answers) == {"date", "extra"}
    assert answers["date"].action == "accept"
    assert retry.context.request_state is None


@pytest.mark.parametrize(
    "answer",
    [
        ROOTS_ANSWER,  # a roots answer for an elicitation question
        SAMPLING_ANSWER,  # a sampling answer for an elicitation question
        {"action": "maybe"},  # not a valid ElicitResult at all
    ],
)
def test_answer_of_the_wrong_kind_is_invalid_params(answer: dict[str, Any]) -> None:
    w = modern_wire({"elicitation": {}})
    _, token = _interim(w)
    events, out = raw_retry(w.server, token, {"date": answer})
    assert not of_type(events, RequestReceived)
    [err] = out
    assert err["id"] == "raw-retry"
    assert err["error"]["code"] == INVALID_PARAMS


def _assert_state_rejected(events: list[Any], out: list[dict[str, Any]], reason: str) -> None:
    assert not of_type(events, RequestReceived)
    rejected = one(events, RequestStateRejected)
    assert rejected.reason == reason
    [err] = out
    assert err["error"] == {
        "code": INVALID_PARAMS,
        "message": INVALID_REQUEST_STATE_MESSAGE,
        "data": {"reason": "invalid_request_state"},
    }
    assert INVALID_REQUEST_STATE_MESSAGE == "Invalid or expired requestState"


def _tamper(token: str) -> str:
    version, body, mac = token.split(".")
    flipped = ("B" if mac[0] == "A" else "A") + mac[1:]
    return f"{version}.{body}.{flipped}"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"token": "tamper"}, "bad_signature"),
        ({"token": "garbage"}, "bad_format"),
        ({"params": {"name": "delete_everything", "arguments": {"n": 2}}}, "wrong_target"),
        ({"params": {"name": "book", "arguments": {"n": 3}}}, "wrong_arguments"),
        ({"params": {"name": "book"}}, "wrong_arguments"),
        (
            {"method": "prompts/get", "params": {"name": "book", "arguments": {"n": "2"}}},
            "wrong_method",
        ),
    ],
)
def test_tampered_or_misdirected_state_is_rejected(change: dict[str, Any], reason: str) -> None:
    w = modern_wire({"elicitation": {}})
    _, token = _interim(w)
    if change.get("token") == "tamper":
        token = _tamper(token)
    elif change.get("token") == "garbage":
        token = "not-a-token"
    events, out = raw_retry(
        w.server,
        token,
        {"date": ACCEPT},
        method=change.get("method", "tools/call"),
        params=change.get("params"),
    )
    _assert_state_rejected(events, out, reason)


def test_expired_state_is_rejected_and_the_client_sees_the_error() -> None:
    w = modern_wire({"elicitation": {}})
    cid, _ = _interim(w)
    slot = one(w.pair.client_events[-1:], RequestReceived)
    w.client.send_result(slot.request_id, ACCEPT)
    w.wall_time = T0 + 601.0  # request_state_ttl is 600 s
    client_events, server_events = w.pump()
    assert one(server_events, RequestStateRejected).reason == "expired"
    err = one(client_events, ErrorReceived)
    assert err.request_id == cid  # reported under the original id
    assert (err.code, err.message, err.data) == (
        INVALID_PARAMS,
        INVALID_REQUEST_STATE_MESSAGE,
        {"reason": "invalid_request_state"},
    )


@pytest.mark.parametrize(
    ("sealed_for", "retried_by"),
    [("alice", "bob"), (None, "alice"), ("alice", None)],
)
def test_state_is_bound_to_the_principal(sealed_for: str | None, retried_by: str | None) -> None:
    w = modern_wire({"elicitation": {}}, principal=sealed_for)
    cid, _ = _interim(w)
    slot = one(w.pair.client_events[-1:], RequestReceived)
    # The retry lands on a server connection authenticated as someone else (or no one).
    config = default_server_config(request_state_keys=(KEY1,))
    other = ServerConnection(config, principal=retried_by)
    w.wall_time = T0 + 1
    w.server = other
    w.client.send_result(slot.request_id, ACCEPT)
    client_events, server_events = w.pump()
    assert one(server_events, RequestStateRejected).reason == "principal_mismatch"
    assert one(client_events, ErrorReceived).request_id == cid


@pytest.mark.parametrize(
    ("method", "params", "retry_params_", "reason"),
    [
        (
            "resources/read",
            {"uri": "file:///a"},
            {"uri": "file:///etc/passwd"},
            "wrong_target",
        ),
        (
            "prompts/get",
            {"name": "greet", "arguments": {"who": "Ann"}},
            {"name": "admin", "arguments": {"who": "Ann"}},
            "wrong_target",
        ),
        (
            "prompts/get",
            {"name": "greet", "arguments": {"who": "Ann"}},
            {"name": "greet", "arguments": {"who": "Bob"}},
            "wrong_arguments",
        ),
        (
            "resources/read",
            {"uri": "file:///a"},
            {"name": "file:///a"},
            "wrong_method",
        ),
    ],
)
def test_state_is_bound_to_prompt_and_resource_targets(
    method: str, params: dict[str, Any], retry_params_: dict[str, Any], reason: str
) -> None:
    w = modern_wire({"elicitation": {}})
    _, req = call(w, method, params)
    w.server.send_input_required(req.request_id, None, state="st", wall_time=T0)
    # The client's own automatic retry (state only) is accepted ...
    retry = one(w.pump()[1], RequestReceived)
    token = w.last("server")["result"]["requestState"]
    assert retry.context.request_state == "st"
    # ... but the same token on another target is not.
    retry_method = "tools/call" if reason == "wrong_method" else method
    events, out = raw_retry(w.server, token, method=retry_method, params=retry_params_)
    _assert_state_rejected(events, out, reason)


def test_state_is_accepted_by_the_same_principal_on_another_connection() -> None:
    w = modern_wire({"elicitation": {}}, principal="alice")
    cid, _ = _interim(w)
    slot = one(w.pair.client_events[-1:], RequestReceived)
    alice2 = ServerConnection(default_server_config(request_state_keys=(KEY1,)), principal="alice")
    w.wall_time = T0 + 1
    w.server = alice2
    w.client.send_result(slot.request_id, ACCEPT)
    _, server_events = w.pump()
    retry = one(server_events, RequestReceived)
    assert retry.context.request_state == {"s": 1}
    alice2.send_result(retry.request_id, {"content": [{"type": "text", "text": "done"}]})
    client_events, _ = w.pump()
    assert one(client_events, ResponseReceived).request_id == cid


def test_state_is_bound_to_the_audience() -> None:
    w = modern_wire({"elicitation": {}})
    _, token = _interim(w)
    other = ServerConnection(
        default_server_config(name="other-service", request_state_keys=(KEY1,))
    )
    events, out = raw_retry(other, token, {"date": ACCEPT}, wall_time=T0 + 1)
    _assert_state_rejected(events, out, "wrong_audience")


@pytest.mark.parametrize(
    ("keys", "accepted"),
    [((KEY2, KEY1), True), ((KEY1,), True), ((KEY2,), False)],
)
def test_key_rotation(keys: tuple[bytes, ...], accepted: bool) -> None:
    """Server A seals with (k1,); a restarted or sibling server verifies with its ring."""
    w = modern_wire({"elicitation": {}}, keys=(KEY1,))
    cid, _ = _interim(w)
    slot = one(w.pair.client_events[-1:], RequestReceived)
    replica = ServerConnection(default_server_config(request_state_keys=keys))
    w.wall_time = T0 + 5
    w.server = replica
    w.client.send_result(slot.request_id, ACCEPT)
    client_events, server_events = w.pump()
    if accepted:
        retry = one(server_events, RequestReceived)
        assert retry.context.request_state == {"s": 1}
        assert isinstance(retry.context.input_responses["date"], ElicitResult)
        replica.send_result(retry.request_id, {"content": []})
        client_events, _ = w.pump()
        assert one(client_events, ResponseReceived).request_id == cid
    else:
        assert one(server_events, RequestStateRejected).reason == "unknown_key"
        assert one(client_events, ErrorReceived).request_id == cid


# ====================================================================== client side


def test_client_retries_with_new_id_original_params_answers_and_exact_state() -> None:
    w = modern_wire(ALL_INPUT_CAPS)
    cid, req = call(w)
    original = w.last("client")
    w.server.send_input_required(
        req.request_id,
        {"date": ask_booking(), "llm": ASK_SAMPLING, "roots": ASK_ROOTS},
        state={"step": 1},
        wall_time=T0,
    )
    client_events, _ = w.pump()
    token = w.last("server")["result"]["requestState"]
    slots = of_type(client_events, RequestReceived)
    assert [s.method for s in slots] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]
    assert len({s.request_id for s in slots}) == 3
    assert all(s.context.related_request_id == cid for s in slots)
    assert isinstance(slots[1].params, CreateMessageRequestParams)
    assert slots[2].params is None

    # Answered out of order: nothing goes out until the last answer.
    mark = w.mark()
    w.client.send_result(slots[2].request_id, ROOTS_ANSWER)
    w.client.send_result(slots[0].request_id, ACCEPT)
    assert w.pump() == ([], [])
    assert w.since(mark) == []
    w.client.send_result(slots[1].request_id, SAMPLING_ANSWER)
    _, server_events = w.pump()
    [retry_msg] = w.since(mark, "client")
    assert retry_msg["method"] == "tools/call"
    assert retry_msg["id"] != original["id"]
    assert retry_params(retry_msg) == original["params"]
    assert retry_msg["params"]["requestState"] == token
    assert retry_msg["params"]["inputResponses"] == {
        "date": ACCEPT,
        "llm": SAMPLING_ANSWER,
        "roots": ROOTS_ANSWER,
    }
    retry = one(server_events, RequestReceived)
    answers = retry.context.input_responses
    assert isinstance(answers["date"], ElicitResult)
    assert isinstance(answers["llm"], CreateMessageResult)
    assert isinstance(answers["roots"], ListRootsResult)
    assert answers["roots"].roots[0].uri == "file:///work"

    w.server.send_result(retry.request_id, {"content": [{"type": "text", "text": "Booked"}]})
    client_events, _ = w.pump()
    final = one(client_events, ResponseReceived)
    assert final.request_id == cid  # the ORIGINAL id
    assert final.result.content[0].text == "Booked"
    assert w.client.requests_in_flight == (0, 0)


def test_client_sends_no_state_when_the_server_sent_none() -> None:
    w = modern_wire({"elicitation": {}}, keys=())
    cid, req = call(w)
    w.server.send_input_required(req.request_id, {"date": ask_booking()})
    client_events, _ = w.pump()
    assert "requestState" not in w.last("server")["result"]
    w.client.send_result(one(client_events, RequestReceived).request_id, ACCEPT)
    _, server_events = w.pump()
    retry_msg = w.last("client")
    assert "requestState" not in retry_msg["params"]
    assert retry_msg["params"]["inputResponses"] == {"date": ACCEPT}
    retry = one(server_events, RequestReceived)
    assert retry.context.request_state is None
    w.server.send_result(retry.request_id, {"content": []})
    client_events, _ = w.pump()
    assert one(client_events, ResponseReceived).request_id == cid


def _pinned_client(caps: dict[str, Any], **kw: Any) -> ClientConnection:
    client = ClientConnection(ClientConfig(mode=MODERN, capabilities=caps, **kw))
    client.connect()
    return client


def test_client_echoes_an_unusual_state_string_exactly() -> None:
    state = ' spaces, "quotes", \\ backslash, ünïcødé \u2028 and \U0001f600 '
    client = _pinned_client({"elicitation": {}})
    cid = client.send_request("prompts/get", {"name": "p", "arguments": {"a": "1"}})
    [sent] = drain(client, MODERN)
    interim = {
        "resultType": "input_required",
        "inputRequests": {"q": ask_booking()},
        "requestState": state,
    }
    slot = one(
        inject(client, {"jsonrpc": "2.0", "id": sent["id"], "result": interim}), RequestReceived
    )
    client.send_result(slot.request_id, {"action": "decline"})
    [retry] = drain(client, MODERN)
    assert retry["params"]["requestState"] == state
    assert retry["params"]["inputResponses"] == {"q": {"action": "decline"}}
    assert retry["id"] != sent["id"]
    final = {"messages": [], "resultType": "complete"}
    got = one(
        inject(client, {"jsonrpc": "2.0", "id": retry["id"], "result": final}), ResponseReceived
    )
    assert got.request_id == cid
    assert got.method == "prompts/get"


def test_state_and_answers_never_leak_to_concurrent_requests() -> None:
    w = modern_wire({"elicitation": {}})
    a, req_a = call(w, params={"name": "a", "arguments": {}})
    b, req_b = call(w, params={"name": "b", "arguments": {}})
    w.server.send_input_required(req_a.request_id, {"qa": ask_booking()}, state="A", wall_time=T0)
    w.server.send_input_required(req_b.request_id, {"qb": ask_booking()}, state="B")
    client_events, _ = w.pump()
    token_a, token_b = (m["result"]["requestState"] for m in w.sent("server")[-2:])
    slot_a, slot_b = of_type(client_events, RequestReceived)
    assert slot_a.context.related_request_id == a
    assert slot_b.context.related_request_id == b

    # A third, unrelated request meanwhile carries nothing of either round.
    mark = w.mark()
    w.client.send_request("tools/list", {})
    w.client.send_result(slot_b.request_id, {"action": "cancel"})
    w.client.send_result(slot_a.request_id, ACCEPT)
    _, server_events = w.pump()
    listing, retry_b, retry_a = w.since(mark, "client")
    assert listing["method"] == "tools/list"
    assert "requestState" not in listing["params"]
    assert "inputResponses" not in listing["params"]
    assert retry_b["params"]["name"] == "b"
    assert retry_b["params"]["requestState"] == token_b
    assert retry_b["params"]["inputResponses"] == {"qb": {"action": "cancel"}}
    assert retry_a["params"]["name"] == "a"
    assert retry_a["params"]["requestState"] == token_a
    assert retry_a["params"]["inputResponses"] == {"qa": ACCEPT}
    retries = {
        e.params.name: e
        for e in of_type(server_events, RequestReceived)
        if e.method == "tools/call"
    }
    assert retries["a"].context.request_state == "A"
    assert retries["b"].context.request_state == "B"

    # Each final result resolves its own original id.
    w.server.send_result(retries["b"].request_id, {"content": [{"type": "text", "text": "B"}]})
    w.server.send_result(retries["a"].request_id, {"content": [{"type": "text", "text": "A"}]})
    client_events, _ = w.pump()
    finals = {
        e.request_id: e.result.content[0].text for e in of_type(client_events, ResponseReceived)
    }
    assert finals[a] == "A"
    assert finals[b] == "B"


def test_state_only_result_is_retried_at_once() -> None:
    w = modern_wire({})
    cid, req = call(w)
    mark = w.mark()
    w.server.send_input_required(req.request_id, None, state={"busy": True}, wall_time=T0)
    client_events, server_events = w.pump()
    assert not of_type(client_events, RequestReceived)
    interim, retry_msg = w.since(mark)
    assert "inputRequests" not in interim["result"]
    assert retry_msg["params"]["requestState"] == interim["result"]["requestState"]
    assert "inputResponses" not in retry_msg["params"]
    retry = one(server_events, RequestReceived)
    assert retry.context.request_state == {"busy": True}
    assert retry.context.input_responses == {}
    w.server.send_result(retry.request_id, {"content": []})
    client_events, _ = w.pump()
    assert one(client_events, ResponseReceived).request_id == cid


def test_round_limit_ends_the_loop() -> None:
    w = modern_wire({}, max_input_rounds=3)
    cid, req = call(w)
    seen = [req.request_id]
    w.server.send_input_required(req.request_id, None, state={"round": 1}, wall_time=T0)
    for n in range(2, 10):
        client_events, server_events = w.pump()
        if of_type(client_events, RequestFailed):
            break
        retry = one(server_events, RequestReceived)
        seen.append(retry.request_id)
        w.server.send_input_required(retry.request_id, None, state={"round": n})
    failed = one(client_events, RequestFailed)
    assert failed.request_id == cid
    assert failed.method == "tools/call"
    assert "3 rounds" in failed.message
    assert len(seen) == 4  # the original call and three retries
    assert len(set(seen)) == 4
    assert w.client.data_to_send() == b""
    assert w.client.requests_in_flight == (0, 0)


def test_send_error_on_an_input_slot_fails_the_whole_call_and_sends_nothing() -> None:
    w = modern_wire({"elicitation": {}, "roots": {}})
    cid, req = call(w)
    w.server.send_input_required(
        req.request_id, {"date": ask_booking(), "r": ASK_ROOTS}, wall_time=T0
    )
    client_events, _ = w.pump()
    date_slot, _roots_slot = of_type(client_events, RequestReceived)
    assert w.client.send_error(
        date_slot.request_id, -32603, "user interface unavailable", {"why": "headless"}
    )
    assert w.client.data_to_send() == b""
    # The call fails with the application's own error, as it would on a legacy session.
    failed = one(w.client.tick(T0), ErrorReceived)
    assert (failed.request_id, failed.method, failed.code, failed.message, failed.data) == (
        cid,
        "tools/call",
        -32603,
        "user interface unavailable",
        {"why": "headless"},
    )
    assert w.client.requests_in_flight == (0, 0)
    assert w.client.tick(T0 + 1) == []  # reported once


def test_send_error_failure_is_reported_by_the_next_receive() -> None:
    w = modern_wire({"elicitation": {}})
    cid, req = call(w)
    w.server.send_input_required(req.request_id, {"date": ask_booking()}, wall_time=T0)
    client_events, _ = w.pump()
    w.client.send_error(one(client_events, RequestReceived).request_id, -32600, "no")
    other = w.client.send_request("tools/list", {})
    _, server_events = w.pump()
    listing = one(server_events, RequestReceived)
    w.server.send_result(listing.request_id, {"tools": []})
    client_events, _ = w.pump()
    failed, answered = client_events
    assert isinstance(failed, ErrorReceived)
    assert failed.request_id == cid
    assert isinstance(answered, ResponseReceived)
    assert answered.request_id == other


def test_answering_a_sibling_slot_after_send_error_is_harmless() -> None:
    w = modern_wire({"elicitation": {}, "roots": {}})
    _, req = call(w)
    w.server.send_input_required(
        req.request_id, {"date": ask_booking(), "r": ASK_ROOTS}, wall_time=T0
    )
    client_events, _ = w.pump()
    date_slot, roots_slot = of_type(client_events, RequestReceived)
    w.client.send_error(date_slot.request_id, -32603, "gave up")
    assert w.client.send_result(roots_slot.request_id, ROOTS_ANSWER) is True
    assert w.client.data_to_send() == b""


def test_cancel_while_waiting_for_inputs_drops_everything() -> None:
    w = modern_wire({"elicitation": {}, "roots": {}})
    cid, req = call(w)
    w.server.send_input_required(
        req.request_id, {"date": ask_booking(), "r": ASK_ROOTS}, wall_time=T0
    )
    client_events, _ = w.pump()
    assert len(of_type(client_events, RequestReceived)) == 2
    w.client.cancel_request(cid)
    assert w.client.data_to_send() == b""  # nothing on the wire is in flight to cancel
    assert w.client.requests_in_flight == (0, 0)
    assert w.client.tick(T0 + 1) == []
    w.client.cancel_request(cid)  # a second cancel is a no-op
    assert w.client.data_to_send() == b""


def test_answering_a_slot_after_cancel_sends_nothing() -> None:
    w = modern_wire({"elicitation": {}})
    cid, req = call(w)
    w.server.send_input_required(req.request_id, {"date": ask_booking()}, wall_time=T0)
    client_events, _ = w.pump()
    slot = one(client_events, RequestReceived)
    w.client.cancel_request(cid)
    assert w.client.send_result(slot.request_id, ACCEPT) is True
    assert w.client.data_to_send() == b""


def test_cancel_after_the_retry_went_out_cancels_the_retry_id() -> None:
    w = modern_wire({"elicitation": {}})
    cid, req = call(w)
    w.server.send_input_required(req.request_id, {"date": ask_booking()}, wall_time=T0)
    client_events, _ = w.pump()
    w.client.send_result(one(client_events, RequestReceived).request_id, ACCEPT)
    _, server_events = w.pump()
    retry = one(server_events, RequestReceived)
    retry_wire_id = w.last("client")["id"]
    w.client.cancel_request(cid, "user pressed stop")
    client_events, server_events = w.pump()
    assert w.last("client") == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": retry_wire_id, "reason": "user pressed stop"},
    }
    cancelled = one(server_events, RequestCancelled)
    assert cancelled.request_id == retry.request_id
    # A late answer is dropped (the server engine itself would refuse to send it).
    events = inject(w.client, {"jsonrpc": "2.0", "id": retry_wire_id, "result": {"content": []}})
    assert one(events, ResponseIgnored).late is True
    assert not of_type(events, ResponseReceived)


def test_progress_of_every_round_is_reported_under_the_original_id() -> None:
    w = modern_wire({"elicitation": {}})
    cid = w.client.send_request("tools/call", {"name": "b"}, progress=True)
    _, server_events = w.pump()
    first = one(server_events, RequestReceived)
    assert w.server.send_progress(first.request_id, 0.1)
    w.server.send_input_required(first.request_id, {"q": ask_booking()}, wall_time=T0)
    client_events, _ = w.pump()
    assert one(client_events, ProgressReceived).request_id == cid
    w.client.send_result(one(client_events, RequestReceived).request_id, ACCEPT)
    _, server_events = w.pump()
    retry = one(server_events, RequestReceived)
    token = w.last("client")["params"]["_meta"]["progressToken"]
    assert retry.context.progress_token == token
    assert w.server.send_progress(retry.request_id, 0.5, 1.0, "half")
    client_events, _ = w.pump()
    progress = one(client_events, ProgressReceived)
    assert (progress.request_id, progress.progress, progress.total, progress.message) == (
        cid,
        0.5,
        1.0,
        "half",
    )


def test_deadline_keeps_running_while_waiting_for_inputs() -> None:
    w = modern_wire({"elicitation": {}})
    cid = w.client.send_request("tools/call", {"name": "b"}, deadline=T0 + 50)
    _, server_events = w.pump()
    w.server.send_input_required(
        one(server_events, RequestReceived).request_id, {"q": ask_booking()}, wall_time=T0
    )
    client_events, _ = w.pump()
    slot = one(client_events, RequestReceived)
    assert w.client.next_deadline() == T0 + 50
    failed = one(w.client.tick(T0 + 51), RequestFailed)
    assert failed.request_id == cid
    assert w.client.data_to_send() == b""  # nothing of this call is on the wire to cancel
    # A late answer retries nothing.
    w.client.send_result(slot.request_id, ACCEPT)
    assert w.client.data_to_send() == b""


def test_closing_while_waiting_for_inputs_fails_the_call() -> None:
    w = modern_wire({"elicitation": {}})
    cid, req = call(w)
    w.server.send_input_required(req.request_id, {"q": ask_booking()}, wall_time=T0)
    w.pump()
    events = w.client.close()
    failed = one(events, RequestFailed)
    assert failed.request_id == cid
    assert failed.code == CONNECTION_CLOSED


def test_input_required_on_an_ineligible_method_fails_the_call_on_the_client() -> None:
    client = _pinned_client({"elicitation": {}})
    cid = client.send_request("tools/list", {})
    [sent] = drain(client, MODERN)
    bad = {"resultType": "input_required", "requestState": "x"}
    events = inject(client, {"jsonrpc": "2.0", "id": sent["id"], "result": bad})
    assert one(events, RequestFailed).request_id == cid
    assert client.data_to_send() == b""


def test_malformed_input_required_result_fails_the_call() -> None:
    client = _pinned_client({"elicitation": {}})
    cid = client.send_request("tools/call", {"name": "t"})
    [sent] = drain(client, MODERN)
    events = inject(
        client, {"jsonrpc": "2.0", "id": sent["id"], "result": {"resultType": "input_required"}}
    )
    assert one(events, RequestFailed).request_id == cid
    assert not of_type(events, MessageRejected)
    assert client.data_to_send() == b""


# ---------------------------------------------------------------- one handler, both eras


def answer_booking_question(client: ClientConnection, event: RequestReceived) -> None:
    """Application code: the same function answers a legacy elicitation/create and a
    2026-07-28 input request, because both arrive as the same event."""
    assert event.method == "elicitation/create"
    assert isinstance(event.params, ElicitRequestFormParams)
    fields = event.params.requested_schema["properties"]
    content = {"party": 3, "day": "2026-09-30"}
    assert set(content) <= set(fields)
    client.send_result(event.request_id, ElicitResult(action="accept", content=content))


EXPECTED_BOOKING = Booking(party=3, day=datetime.date(2026, 9, 30))


def test_same_handler_answers_a_legacy_elicitation() -> None:
    w = legacy_wire("2025-11-25", {"elicitation": {}})
    _, req = call(w)
    sid = w.server.send_request(
        "elicitation/create", ask_booking("2025-11-25")["params"], related_request_id=req.request_id
    )
    client_events, _ = w.pump()
    answer_booking_question(w.client, one(client_events, RequestReceived))
    _, server_events = w.pump()
    got = one(server_events, ResponseReceived)
    assert got.request_id == sid
    assert validate_form_answer(Booking, got.result.content) == EXPECTED_BOOKING


def test_same_handler_answers_a_2026_input_request() -> None:
    w = modern_wire({"elicitation": {}})
    _, req = call(w)
    w.server.send_input_required(req.request_id, {"booking": ask_booking()}, wall_time=T0)
    client_events, _ = w.pump()
    answer_booking_question(w.client, one(client_events, RequestReceived))
    _, server_events = w.pump()
    got = one(server_events, RequestReceived).context.input_responses["booking"]
    assert validate_form_answer(Booking, got.content) == EXPECTED_BOOKING


def test_several_rounds_then_success() -> None:
    """Round 1 asks one question, round 2 another; state accumulates server-side."""
    w = modern_wire({"elicitation": {}, "roots": {}})
    cid, req = call(w)
    w.server.send_input_required(
        req.request_id, {"date": ask_booking()}, state={"n": 1}, wall_time=T0
    )
    client_events, _ = w.pump()
    w.client.send_result(one(client_events, RequestReceived).request_id, ACCEPT)
    _, server_events = w.pump()
    r1 = one(server_events, RequestReceived)
    assert r1.context.request_state == {"n": 1}
    w.server.send_input_required(r1.request_id, {"roots": ASK_ROOTS}, state={"n": 2})
    client_events, _ = w.pump()
    slot = one(client_events, RequestReceived)
    assert slot.context.related_request_id == cid
    w.client.send_result(slot.request_id, ROOTS_ANSWER)
    _, server_events = w.pump()
    r2 = one(server_events, RequestReceived)
    assert r2.context.request_state == {"n": 2}
    assert set(r2.context.input_responses) == {"roots"}  # only this round's answers
    assert "date" not in w.last("client")["params"]["inputResponses"]
    w.server.send_result(r2.request_id, {"content": [], "isError": False})
    client_events, _ = w.pump()
    assert one(client_events, ResponseReceived).request_id == cid
    ids = [m["id"] for m in w.sent("client") if m.get("method") == "tools/call"]
    assert len(ids) == len(set(ids)) == 3
