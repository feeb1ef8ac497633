"""Elicitation end to end: form mode (2025-06-18, 2025-11-25), URL mode with its
completion notification and error -32042 (2025-11-25), the 2026-07-28 form of
both inside `inputRequests`, and the capability rules on both sides.

Every message either engine emits is validated against the official schema of
the revision in use (see `interaction_support.Wire`).
"""

from __future__ import annotations

import datetime
from typing import Any, Literal

import pydantic
import pytest
from pydantic import BaseModel, Field

from mcp_core import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    URL_ELICITATION_REQUIRED,
    ClientConfig,
    ClientConnection,
    ErrorReceived,
    LocalProtocolError,
    MessageRejected,
    NotificationReceived,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
)
from mcp_core._elicitation import form_schema, validate_form_answer
from mcp_core.types import (
    ElicitCompleteNotificationParams,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
)
from tests.core.interaction_support import (
    MODERN,
    Wire,
    drain,
    envelope,
    inject,
    legacy_wire,
    modern_wire,
    of_type,
    one,
    raw_legacy_client,
)
from tests.schema_check import SchemaViolation, validate_message

FORM_LEGACY = ("2025-06-18", "2025-11-25")


class Booking(BaseModel):
    party: int = Field(ge=1, le=12, description="How many people")
    day: datetime.date
    seating: Literal["inside", "outside"] = "inside"
    vegetarian: bool = False


URL_PARAMS = {
    "mode": "url",
    "message": "Connect your calendar",
    "url": "https://calendar.example/connect?session=opaque",
}


def form_params(revision: str, message: str = "Book a table") -> dict[str, Any]:
    return {
        "mode": "form",
        "message": message,
        "requestedSchema": form_schema(Booking, revision=revision),
    }


def start_tool_call(w: Wire, name: str = "book") -> int | str:
    """Client calls a tool; returns the id the server sees it under."""
    w.client.send_request("tools/call", {"name": name, "arguments": {}})
    _, server_events = w.pump()
    return one(server_events, RequestReceived).request_id


def elicit(w: Wire, params: dict[str, Any], related: int | str) -> tuple[Any, RequestReceived]:
    """Server sends elicitation/create; returns (its id, the client's event)."""
    sid = w.server.send_request("elicitation/create", params, related_request_id=related)
    client_events, _ = w.pump()
    event = one(client_events, RequestReceived)
    assert event.method == "elicitation/create"
    return sid, event


# ------------------------------------------------------------------ form mode


@pytest.mark.parametrize("revision", FORM_LEGACY)
def test_form_accept_round_trip_with_validated_answer(revision: str) -> None:
    w = legacy_wire(revision, {"elicitation": {}})
    call = start_tool_call(w)
    sid, event = elicit(w, form_params(revision), call)

    params = event.params
    assert isinstance(params, ElicitRequestFormParams)
    assert params.mode == "form"
    assert params.message == "Book a table"
    assert params.requested_schema == form_schema(Booking, revision=revision)
    wire_request = w.last("server")
    assert wire_request["method"] == "elicitation/create"
    if revision == "2025-06-18":
        assert "mode" not in wire_request["params"]  # 2025-06-18 has no mode field
    else:
        assert wire_request["params"]["mode"] == "form"

    answer = {"party": 4, "day": "2026-08-01", "seating": "outside", "vegetarian": True}
    assert w.client.send_result(event.request_id, ElicitResult(action="accept", content=answer))
    _, server_events = w.pump()
    got = one(server_events, ResponseReceived)
    assert got.request_id == sid
    assert got.method == "elicitation/create"
    assert isinstance(got.result, ElicitResult)
    assert got.result.action == "accept"
    booking = validate_form_answer(Booking, got.result.content)
    assert booking == Booking(
        party=4, day=datetime.date(2026, 8, 1), seating="outside", vegetarian=True
    )

    # The tool call then finishes normally.
    w.server.send_result(call, {"content": [{"type": "text", "text": "Booked"}]})
    client_events, _ = w.pump()
    assert one(client_events, ResponseReceived).request_id == call


@pytest.mark.parametrize("revision", FORM_LEGACY)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_form_decline_or_cancel_never_delivers_content(revision: str, action: str) -> None:
    w = legacy_wire(revision, {"elicitation": {}})
    call = start_tool_call(w)
    sid, event = elicit(w, form_params(revision), call)
    # A sloppy client attaches content to a decline: the server must not see it.
    w.client.send_result(
        event.request_id, {"action": action, "content": {"party": 2, "day": "2026-01-01"}}
    )
    _, server_events = w.pump()
    assert w.last("client")["result"]["content"] == {"party": 2, "day": "2026-01-01"}
    got = one(server_events, ResponseReceived)
    assert got.request_id == sid
    assert got.result.action == action
    assert got.result.content is None


@pytest.mark.parametrize("revision", FORM_LEGACY)
@pytest.mark.parametrize(
    "content",
    [
        {"party": "four", "day": "2026-08-01"},  # "four" is not an integer
        {"party": 40, "day": "2026-08-01"},  # above the maximum
        {"party": 4, "day": "tomorrow"},  # not a date
        {"party": 4},  # a required field missing
        {"party": 4, "day": "2026-08-01", "vegetarian": "yes"},  # strict: not a bool
    ],
)
def test_form_accept_with_invalid_answer_is_rejected_by_validate_form_answer(
    revision: str, content: dict[str, Any]
) -> None:
    w = legacy_wire(revision, {"elicitation": {}})
    call = start_tool_call(w)
    _, event = elicit(w, form_params(revision), call)
    w.client.send_result(event.request_id, {"action": "accept", "content": content})
    _, server_events = w.pump()
    got = one(server_events, ResponseReceived)
    assert got.result.action == "accept"
    with pytest.raises(pydantic.ValidationError):
        validate_form_answer(Booking, got.result.content)


def test_form_request_is_routed_to_the_related_tool_call() -> None:
    """The elicitation travels on the stream of the call that caused it (HTTP routing)."""
    w = legacy_wire("2025-11-25", {"elicitation": {}})
    call = start_tool_call(w)
    w.server.send_request("elicitation/create", form_params("2025-11-25"), related_request_id=call)
    [out] = w.server_messages()
    assert out.kind == "request"
    assert out.method == "elicitation/create"
    assert out.related_request_id == call


def test_2025_06_18_strips_mode_from_a_form_request_that_names_it() -> None:
    w = legacy_wire("2025-06-18", {"elicitation": {}})
    call = start_tool_call(w)
    _, event = elicit(w, {**form_params("2025-06-18"), "mode": "form"}, call)
    assert "mode" not in w.last("server")["params"]
    assert isinstance(event.params, ElicitRequestFormParams)


def test_elicitation_does_not_exist_before_2025_06_18() -> None:
    w = legacy_wire("2025-03-26", {"elicitation": {}})
    with pytest.raises(LocalProtocolError):
        w.server.send_request("elicitation/create", form_params("2025-06-18"))


# ------------------------------------------------------------------ URL mode (2025-11-25)


def test_url_mode_needs_an_elicitation_id_in_2025_11_25() -> None:
    w = legacy_wire("2025-11-25", {"elicitation": {"url": {}}})
    call = start_tool_call(w)
    with pytest.raises(LocalProtocolError, match="elicitationId"):
        w.server.send_request("elicitation/create", URL_PARAMS, related_request_id=call)
    assert w.server.data_to_send() == b""


def test_url_mode_round_trip_and_completion_notification() -> None:
    w = legacy_wire("2025-11-25", {"elicitation": {"url": {}}})
    call = start_tool_call(w)
    sid, event = elicit(w, {**URL_PARAMS, "elicitationId": "el-7"}, call)
    assert isinstance(event.params, ElicitRequestURLParams)
    assert event.params.url == URL_PARAMS["url"]
    assert event.params.elicitation_id == "el-7"

    w.client.send_result(event.request_id, {"action": "accept"})
    _, server_events = w.pump()
    got = one(server_events, ResponseReceived)
    assert got.request_id == sid
    assert got.result.action == "accept"
    assert got.result.content is None

    w.server.send_notification("notifications/elicitation/complete", {"elicitationId": "el-7"})
    client_events, _ = w.pump()
    note = one(client_events, NotificationReceived)
    assert note.method == "notifications/elicitation/complete"
    assert isinstance(note.params, ElicitCompleteNotificationParams)
    assert note.params.elicitation_id == "el-7"


@pytest.mark.parametrize("revision", ["2025-03-26", "2025-06-18"])
def test_url_mode_and_its_notification_do_not_exist_before_2025_11_25(revision: str) -> None:
    w = legacy_wire(revision, {"elicitation": {}})
    with pytest.raises(LocalProtocolError):
        w.server.send_request("elicitation/create", {**URL_PARAMS, "elicitationId": "el-1"})
    with pytest.raises(LocalProtocolError):
        w.server.send_notification("notifications/elicitation/complete", {"elicitationId": "x"})
    assert w.server.data_to_send() == b""


def test_url_elicitation_required_error_in_2025_11_25() -> None:
    w = legacy_wire("2025-11-25", {"elicitation": {"url": {}}})
    call = start_tool_call(w)
    data = {"elicitations": [{**URL_PARAMS, "elicitationId": "el-9"}]}
    assert w.server.send_error(call, URL_ELICITATION_REQUIRED, "URL elicitation required", data)
    client_events, _ = w.pump()
    err = one(client_events, ErrorReceived)
    assert err.request_id == call
    assert err.code == -32042
    assert err.data == data
    assert w.last("server")["error"] == {
        "code": -32042,
        "message": "URL elicitation required",
        "data": data,
    }


@pytest.mark.parametrize("revision", ["2025-03-26", "2025-06-18"])
def test_url_elicitation_required_error_is_refused_before_2025_11_25(revision: str) -> None:
    w = legacy_wire(revision, {"elicitation": {}})
    call = start_tool_call(w)
    data = {"elicitations": [{**URL_PARAMS, "elicitationId": "el-9"}]}
    with pytest.raises(LocalProtocolError):
        w.server.send_error(call, URL_ELICITATION_REQUIRED, "URL elicitation required", data)
    assert w.server.data_to_send() == b""
    # The call is still open: a proper answer goes through.
    assert w.server.send_result(call, {"content": []})


def test_url_elicitation_required_error_is_refused_in_2026() -> None:
    w = modern_wire({"elicitation": {"url": {}}})
    call = start_tool_call(w)
    with pytest.raises(LocalProtocolError):
        w.server.send_error(call, URL_ELICITATION_REQUIRED, "URL elicitation required")
    assert w.server.data_to_send() == b""


# ------------------------------------------------------------------ 2026-07-28


def test_2026_url_mode_goes_through_input_requests_without_elicitation_id() -> None:
    w = modern_wire({"elicitation": {"url": {}}})
    call = start_tool_call(w)
    assert w.server.send_input_required(
        call, {"connect": {"method": "elicitation/create", "params": URL_PARAMS}}, wall_time=10.0
    )
    client_events, _ = w.pump()
    event = one(client_events, RequestReceived)
    assert isinstance(event.params, ElicitRequestURLParams)
    assert event.params.elicitation_id is None
    assert event.context.related_request_id == call
    interim = w.last("server")["result"]
    assert interim["resultType"] == "input_required"
    assert interim["inputRequests"]["connect"]["params"] == URL_PARAMS


def test_2026_url_mode_with_an_elicitation_id_is_refused() -> None:
    w = modern_wire({"elicitation": {"url": {}}})
    call = start_tool_call(w)
    with pytest.raises(LocalProtocolError, match="elicitationId"):
        w.server.send_input_required(
            call,
            {"c": {"method": "elicitation/create", "params": {**URL_PARAMS, "elicitationId": "e"}}},
            wall_time=10.0,
        )
    assert w.server.data_to_send() == b""
    # Nothing was consumed: the call can still be answered.
    assert w.server.send_result(call, {"content": []})


def test_2026_has_no_elicitation_complete_notification() -> None:
    w = modern_wire({"elicitation": {"url": {}}})
    with pytest.raises(LocalProtocolError):
        w.server.send_notification("notifications/elicitation/complete", {"elicitationId": "x"})


# ------------------------------------------------------------------ capability rules, server


# (client elicitation capability, mode) -> allowed?
MODE_MATRIX = [
    (None, "form", False),
    (None, "url", False),
    ({}, "form", True),
    ({}, "url", False),
    ({"form": {}}, "form", True),
    ({"form": {}}, "url", False),
    ({"url": {}}, "form", False),
    ({"url": {}}, "url", True),
    ({"form": {}, "url": {}}, "form", True),
    ({"form": {}, "url": {}}, "url", True),
]


def _caps(declared: dict[str, Any] | None) -> dict[str, Any]:
    return {} if declared is None else {"elicitation": declared}


@pytest.mark.parametrize(("declared", "mode", "allowed"), MODE_MATRIX)
def test_legacy_server_sends_only_declared_elicitation_modes(
    declared: dict[str, Any] | None, mode: str, allowed: bool
) -> None:
    w = legacy_wire("2025-11-25", _caps(declared))
    call = start_tool_call(w)
    params = form_params("2025-11-25") if mode == "form" else {**URL_PARAMS, "elicitationId": "e1"}
    if not allowed:
        with pytest.raises(LocalProtocolError, match="did not declare"):
            w.server.send_request("elicitation/create", params, related_request_id=call)
        assert w.server.data_to_send() == b""
        return
    _, event = elicit(w, params, call)
    assert event.params.mode == mode


@pytest.mark.parametrize(("declared", "mode", "allowed"), MODE_MATRIX)
def test_2026_server_asks_only_declared_elicitation_modes(
    declared: dict[str, Any] | None, mode: str, allowed: bool
) -> None:
    w = modern_wire(_caps(declared))
    call = start_tool_call(w)
    params = form_params(MODERN) if mode == "form" else URL_PARAMS
    ask = {"q": {"method": "elicitation/create", "params": params}}
    if not allowed:
        with pytest.raises(LocalProtocolError, match="did not declare"):
            w.server.send_input_required(call, ask, wall_time=10.0)
        assert w.server.data_to_send() == b""
        return
    w.server.send_input_required(call, ask, wall_time=10.0)
    client_events, _ = w.pump()
    assert one(client_events, RequestReceived).params.mode == mode


def test_2025_06_18_elicitation_capability_is_form() -> None:
    w = legacy_wire("2025-06-18", {"elicitation": {}})
    call = start_tool_call(w)
    _, event = elicit(w, form_params("2025-06-18"), call)
    assert isinstance(event.params, ElicitRequestFormParams)


# ------------------------------------------------------------------ capability rules, client


def _server_request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


@pytest.mark.parametrize(
    ("caps", "params", "code", "message"),
    [
        ({}, form_params("2025-11-25"), METHOD_NOT_FOUND, "Elicitation not supported"),
        (
            {},
            {**URL_PARAMS, "elicitationId": "e"},
            METHOD_NOT_FOUND,
            "Elicitation not supported",
        ),
        (
            {"elicitation": {}},
            {**URL_PARAMS, "elicitationId": "e"},
            INVALID_PARAMS,
            "Elicitation mode 'url' not supported",
        ),
        (
            {"elicitation": {"url": {}}},
            form_params("2025-11-25"),
            INVALID_PARAMS,
            "Elicitation mode 'form' not supported",
        ),
        (
            {"elicitation": {"form": {}}},
            {**URL_PARAMS, "elicitationId": "e"},
            INVALID_PARAMS,
            "Elicitation mode 'url' not supported",
        ),
    ],
)
def test_client_refuses_undeclared_elicitation(
    caps: dict[str, Any], params: dict[str, Any], code: int, message: str
) -> None:
    client = raw_legacy_client("2025-11-25", caps)
    events = inject(client, _server_request(41, "elicitation/create", params))
    assert not of_type(events, RequestReceived)
    rejected = one(events, MessageRejected)
    assert (rejected.request_id, rejected.code, rejected.message) == (41, code, message)
    [answer] = drain(client, "2025-11-25")
    assert answer == {"jsonrpc": "2.0", "id": 41, "error": {"code": code, "message": message}}


def test_client_without_mode_field_treats_request_as_form() -> None:
    """A 2025-06-18 server sends no `mode`; the client reads it as form."""
    client = raw_legacy_client("2025-06-18", {"elicitation": {}})
    params = form_params("2025-06-18")
    del params["mode"]
    event = one(inject(client, _server_request(5, "elicitation/create", params)), RequestReceived)
    assert isinstance(event.params, ElicitRequestFormParams)
    client.send_result(event.request_id, {"action": "cancel"})
    assert drain(client, "2025-06-18") == [
        {"jsonrpc": "2.0", "id": 5, "result": {"action": "cancel"}}
    ]


@pytest.mark.parametrize(
    ("caps", "params", "code", "message"),
    [
        ({}, form_params(MODERN), METHOD_NOT_FOUND, "Elicitation not supported"),
        ({"elicitation": {}}, URL_PARAMS, INVALID_PARAMS, "Elicitation mode 'url' not supported"),
        (
            {"elicitation": {"url": {}}},
            form_params(MODERN),
            INVALID_PARAMS,
            "Elicitation mode 'form' not supported",
        ),
    ],
)
def test_2026_client_fails_the_call_when_asked_an_undeclared_elicitation(
    caps: dict[str, Any], params: dict[str, Any], code: int, message: str
) -> None:
    client = ClientConnection(ClientConfig(mode=MODERN, capabilities=caps))
    client.connect()
    call = client.send_request("tools/call", {"name": "book"})
    [sent] = drain(client, MODERN)
    interim = {
        "resultType": "input_required",
        "inputRequests": {"q": {"method": "elicitation/create", "params": params}},
        "requestState": "opaque",
    }
    events = inject(client, {"jsonrpc": "2.0", "id": sent["id"], "result": interim})
    failed = one(events, RequestFailed)
    assert (failed.request_id, failed.method, failed.code, failed.message) == (
        call,
        "tools/call",
        code,
        message,
    )
    assert not of_type(events, RequestReceived)
    assert client.data_to_send() == b""  # no retry, and no error back to the server
    assert client.requests_in_flight == (0, 0)


def test_2026_client_rejects_legacy_style_server_requests() -> None:
    """2026-07-28 clients send no responses: the request is reported, never answered."""
    client = ClientConnection(ClientConfig(mode=MODERN, capabilities={"elicitation": {}}))
    client.connect()
    events = inject(client, _server_request(3, "elicitation/create", form_params(MODERN)))
    assert not of_type(events, RequestReceived)
    rejected = one(events, MessageRejected)
    assert (rejected.request_id, rejected.code) == (3, METHOD_NOT_FOUND)
    assert drain(client, MODERN) == []


def test_envelope_helper_is_schema_valid() -> None:
    """Guard for the raw-peer helper the other test files use."""
    validate_message(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": envelope({"elicitation": {}})},
        },
        MODERN,
        sender="client",
    )


def test_wire_tap_sees_and_checks_every_message() -> None:
    """Guard for the harness: the handshake went through the tap, and a bad message fails."""
    w = legacy_wire("2025-11-25", {"elicitation": {}})
    assert [m.get("method", "result") for _, m in w.tap.transcript] == [
        "initialize",
        "result",
        "notifications/initialized",
    ]
    assert w.tap.checked == 3
    bad = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"message": "x"}}
    with pytest.raises(SchemaViolation):
        w.tap.check("server", bad, "2025-11-25")
