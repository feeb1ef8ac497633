"""`ServerConnection.request_input` and `InputReceived`: one way for a server to ask,
whatever the era.

The same handler (`handle` below, with no era test anywhere) serves a legacy
session, where the questions become server-to-client requests and the request
stays open, and a 2026-07-28 connection, where they become an
`InputRequiredResult` and the answers come with the client's retry.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcp_core import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    REQUEST_TIMEOUT,
    ClientConfig,
    ConnectionClosed,
    ErrorReceived,
    Event,
    InputAnswer,
    InputReceived,
    Limits,
    LocalProtocolError,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    RequestStateRejected,
    ResponseIgnored,
    ResponseReceived,
    ServerConnection,
    form_schema,
)
from mcp_core.testing import ConnectionPair, default_server_config
from mcp_core.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, ListRootsResult

from .engine_support import (
    MODERN,
    error,
    feed,
    legacy_server,
    line,
    modern_params,
    of_type,
    one,
    out,
    request,
    result,
    wire,
)

KEY = b"k" * 32
WALL = 1_000.0
ERAS = ["2025-06-18", "2025-11-25", MODERN]
ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "roots": {}, "sampling": {}}


class Confirm(BaseModel):
    ok: bool


def confirm_question(path: str) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {"message": f"Delete {path}?", "requestedSchema": Confirm},
    }


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def handle(server: ServerConnection, event: RequestReceived | InputReceived) -> None:
    """The whole server side of a tool that asks: no era test anywhere."""
    path = event.params.arguments["path"]
    answers = event.answers if isinstance(event, InputReceived) else {}
    confirm = answers.get("confirm")
    if confirm is None or confirm.status == "unanswered":
        server.request_input(
            event.request_id, {"confirm": confirm_question(path)}, state={"path": path}
        )
    elif (
        confirm.status == "answered"
        and confirm.result is not None
        and isinstance(confirm.result, ElicitResult)
        and confirm.result.action == "accept"
        and (confirm.result.content or {}).get("ok") is True
    ):
        assert isinstance(event, InputReceived) and event.state == {"path": path}
        server.send_result(event.request_id, text(f"deleted {path}"))
    else:
        server.send_result(event.request_id, text(f"kept {path}"))


def connected(mode: str, caps: dict[str, Any] | None = None, **server_kw: Any) -> ConnectionPair:
    config = default_server_config(request_state_keys=(KEY,), **server_kw)
    client = ClientConfig(mode=mode, capabilities=caps if caps is not None else ALL_CAPS)
    pair = ConnectionPair(config, client, wall_clock=lambda: WALL)
    pair.connect()
    return pair


def serve(pair: ConnectionPair, answer: Any) -> tuple[list[Event], list[Event]]:
    """Pump until quiet: the server runs `handle`, the client answers every question
    with `answer` (a result dict, or an (code, message) error)."""
    client_seen: list[Event] = []
    server_seen: list[Event] = []
    for _ in range(20):
        client_events, server_events = pair.pump()
        client_seen += client_events
        server_seen += server_events
        acted = False
        for event in server_events:
            if isinstance(event, (RequestReceived, InputReceived)):
                handle(pair.server, event)
                acted = True
        for event in client_events:
            if isinstance(event, RequestReceived):
                if isinstance(answer, tuple):
                    pair.client.send_error(event.request_id, *answer)
                else:
                    pair.client.send_result(event.request_id, answer)
                acted = True
        pair.server.check_invariants()
        if not acted:
            break
    return client_seen, server_seen


ACCEPT_OK = {"action": "accept", "content": {"ok": True}}


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (ACCEPT_OK, "deleted /tmp/p"),
        ({"action": "accept", "content": {"ok": False}}, "kept /tmp/p"),
        ({"action": "decline"}, "kept /tmp/p"),
        ({"action": "cancel"}, "kept /tmp/p"),
    ],
)
def test_one_handler_asks_in_every_era(mode: str, answer: Any, outcome: str) -> None:
    pair = connected(mode)
    cid = pair.client.send_request("tools/call", {"name": "rm", "arguments": {"path": "/tmp/p"}})
    client_events, server_events = serve(pair, answer)
    final = one(client_events, ResponseReceived)
    assert final.request_id == cid
    assert final.result.content[0].text == outcome
    (got,) = of_type(server_events, InputReceived)
    assert got.state == {"path": "/tmp/p"}
    assert got.answers["confirm"].status == "answered"
    assert isinstance(got.answers["confirm"].result, ElicitResult)
    assert got.answers["confirm"].result.action == answer["action"]
    if mode == MODERN:
        assert got.request_id != one(server_events, RequestReceived).request_id
        assert got.context.input_responses is None and got.params.input_responses is None
    else:
        assert got.request_id == one(server_events, RequestReceived).request_id
    assert pair.server.requests_in_flight == (0, 0)
    assert pair.client.requests_in_flight == (0, 0)


@pytest.mark.parametrize("mode", ERAS)
def test_the_form_is_written_in_the_requests_revision(mode: str) -> None:
    sent: list[bytes] = []
    config = default_server_config(request_state_keys=(KEY,))
    pair = ConnectionPair(
        config,
        ClientConfig(mode=mode, capabilities=ALL_CAPS),
        wall_clock=lambda: WALL,
        tap=lambda direction, data: sent.append(data) if direction == "server->client" else None,
    )
    pair.connect()
    pair.client.send_request("tools/call", {"name": "rm", "arguments": {"path": "/x"}})
    _, server_events = pair.pump()
    assert pair.server.request_input(
        one(server_events, RequestReceived).request_id, {"confirm": confirm_question("/x")}
    )
    (message,) = wire(pair.server.data_to_send())
    rendering = "2025-06-18" if mode == "2025-06-18" else "2025-11-25"
    expected_form = form_schema(Confirm, revision=rendering)
    if mode == MODERN:
        assert message["result"]["resultType"] == "input_required"
        assert isinstance(message["result"]["requestState"], str)
        question = message["result"]["inputRequests"]["confirm"]
        assert question["params"]["requestedSchema"] == expected_form
    else:
        assert message["method"] == "elicitation/create"
        assert message["params"]["requestedSchema"] == expected_form
        assert ("mode" in message["params"]) is (mode != "2025-06-18")


@pytest.mark.parametrize("mode", ["2025-11-25", MODERN])
def test_several_questions_one_round(mode: str) -> None:
    pair = connected(mode)
    pair.client.send_request("tools/call", {"name": "t", "arguments": {}})
    _, server_events = pair.pump()
    call = one(server_events, RequestReceived)
    url = {"mode": "url", "message": "Pay", "url": "https://pay.example/1", "elicitationId": "p1"}
    sample = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 5,
    }
    assert pair.server.request_input(
        call.request_id,
        {
            "form": confirm_question("/x"),
            "pay": {"method": "elicitation/create", "params": url},
            "llm": {"method": "sampling/createMessage", "params": sample},
            "where": {"method": "roots/list"},
        },
    )
    client_events, _ = pair.pump()
    questions = of_type(client_events, RequestReceived)
    assert [q.method for q in questions] == [
        "elicitation/create",
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]
    assert (getattr(questions[1].params, "elicitation_id", None) == "p1") is (mode != MODERN)
    replies = [
        ACCEPT_OK,
        {"action": "accept"},
        {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"},
        {"roots": [{"uri": "file:///w"}]},
    ]
    for question, reply in reversed(list(zip(questions, replies, strict=True))):
        pair.client.send_result(question.request_id, reply)  # in any order
    _, server_events = pair.pump()
    got = one(server_events, InputReceived)
    assert list(got.answers) == ["form", "pay", "llm", "where"]
    assert {a.status for a in got.answers.values()} == {"answered"}
    assert got.answers["where"].result.roots[0].uri == "file:///w"  # type: ignore[union-attr]
    assert got.answers["llm"].method == "sampling/createMessage"


def test_legacy_refusal_timeout_and_invalid_answers() -> None:
    conn = legacy_server(client_caps=ALL_CAPS, request_state_keys=(KEY,))
    feed(conn, request(1, "tools/call", {"name": "t", "arguments": {}}))
    assert conn.request_input(
        1,
        {
            "a": confirm_question("/a"),
            "b": confirm_question("/b"),
            "c": confirm_question("/c"),
            "d": {"method": "roots/list"},
        },
        deadline=5.0,
    )
    asked = {m["id"]: m for m in out(conn)}
    a, b, c, d = asked
    assert conn.next_deadline() == 5.0
    events = feed(
        conn,
        error(a, -32601, "Elicitation not supported"),
        result(b, {"action": "accept", "content": {"ok": "yes"}}),
        result(d, {"nothing": []}),
    )
    assert events == []  # the round is not over while c is out
    (done,) = conn.tick(5.0)
    assert isinstance(done, InputReceived) and done.request_id == 1
    assert done.answers == {
        "a": InputAnswer(
            "elicitation/create", "refused", None, -32601, "Elicitation not supported"
        ),
        "b": InputAnswer(
            "elicitation/create",
            "unanswered",
            None,
            INVALID_PARAMS,
            "the answer does not fit: field 'ok': expected a boolean",
        ),
        "c": InputAnswer(
            "elicitation/create", "unanswered", None, REQUEST_TIMEOUT, "Request timed out"
        ),
        "d": done.answers["d"],
    }
    assert done.answers["d"].status == "unanswered" and done.answers["d"].code == INVALID_PARAMS
    # The timed-out question was withdrawn on the wire.
    assert out(conn) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": c, "reason": "timed out"},
        }
    ]
    # The request is still open: ask again, or answer.
    assert conn.send_result(1, text("gave up"))
    conn.check_invariants()


def test_a_declined_answer_never_carries_content() -> None:
    conn = legacy_server(client_caps=ALL_CAPS, request_state_keys=(KEY,))
    feed(conn, request(1, "tools/call", {"name": "t", "arguments": {}}))
    conn.request_input(1, {"q": confirm_question("/q")})
    (q,) = out(conn)
    (done,) = feed(conn, result(q["id"], {"action": "decline", "content": {"ok": True}}))
    assert isinstance(done, InputReceived)
    answer = done.answers["q"].result
    assert (
        isinstance(answer, ElicitResult) and answer.action == "decline" and answer.content is None
    )


def test_cancelling_the_request_withdraws_its_questions() -> None:
    conn = legacy_server(client_caps=ALL_CAPS, request_state_keys=(KEY,))
    feed(conn, request(1, "tools/call", {"name": "t", "arguments": {}}))
    conn.request_input(1, {"q": confirm_question("/q"), "r": {"method": "roots/list"}})
    q, r = (m["id"] for m in out(conn))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert feed(conn, cancel) == [RequestCancelled(1, None)]
    assert [m["params"] for m in out(conn)] == [
        {"requestId": q, "reason": "the request was cancelled"},
        {"requestId": r, "reason": "the request was cancelled"},
    ]
    assert feed(conn, result(q, ACCEPT_OK)) == [ResponseIgnored(q, late=True)]
    assert conn.request_input(1, {"q": confirm_question("/q")}) is False
    assert conn.requests_in_flight == (0, 0)
    conn.check_invariants()


def test_answering_the_request_withdraws_its_questions() -> None:
    conn = legacy_server(client_caps=ALL_CAPS, request_state_keys=(KEY,))
    feed(conn, request(1, "tools/call", {"name": "t", "arguments": {}}))
    conn.request_input(1, {"q": confirm_question("/q")})
    (q,) = out(conn)
    assert conn.send_error(1, -32603, "changed my mind")
    cancel, answer = out(conn)
    assert cancel["params"] == {"requestId": q["id"], "reason": "answered without it"}
    assert answer["error"]["message"] == "changed my mind"
    assert conn.requests_in_flight == (0, 0)


def test_a_disconnect_with_questions_out() -> None:
    """The questions go with their request: no failure of theirs is reported, and the
    request is listed as abandoned, so the natural reaction is the only event's."""
    conn = legacy_server(client_caps=ALL_CAPS, request_state_keys=(KEY,))
    feed(conn, request(1, "tools/call", {"name": "t", "arguments": {}}))
    ping = conn.send_request("ping")
    conn.request_input(1, {"q": confirm_question("/q")})
    out(conn)
    events = conn.receive_data(b"")
    assert events == [
        RequestFailed(ping, "ping", CONNECTION_CLOSED, "Connection closed"),
        ConnectionClosed("end of stream", (1,), None),
    ]
    assert conn.send_error(1, -32603, "gone") is False
    assert conn.request_input(1, {"q": confirm_question("/q")}) is False
    conn.check_invariants()


def test_2026_retry_without_an_answer_or_with_one_that_does_not_fit() -> None:
    pair = connected(MODERN)
    pair.client.send_request("tools/call", {"name": "rm", "arguments": {"path": "/p"}})
    _, server_events = pair.pump()
    call = one(server_events, RequestReceived)
    pair.server.request_input(
        call.request_id, {"confirm": confirm_question("/p"), "where": {"method": "roots/list"}}
    )
    (interim,) = wire(pair.server.data_to_send())
    token = interim["result"]["requestState"]
    caps = {"_meta": modern_params(caps=ALL_CAPS)["_meta"]}
    params = {"name": "rm", "arguments": {"path": "/p"}, "requestState": token, **caps}
    retry = {**params, "inputResponses": {"confirm": {"action": "accept", "content": {"ok": 1}}}}
    (got,) = pair.server.receive_data(line(request(9, "tools/call", retry)), wall_time=WALL + 1)
    assert isinstance(got, InputReceived) and got.request_id == 9
    assert got.answers["confirm"].status == "unanswered"
    assert got.answers["confirm"].code == INVALID_PARAMS
    assert got.answers["where"] == InputAnswer(
        "roots/list", "unanswered", None, None, "no answer in the retry"
    )
    # Answers in a retry that carries no state are never presented as answers.
    forged = {
        **caps,
        "name": "rm",
        "arguments": {"path": "/p"},
        "inputResponses": {"confirm": ACCEPT_OK},
    }
    (plain,) = pair.server.receive_data(line(request(10, "tools/call", forged)), wall_time=WALL + 1)
    assert isinstance(plain, RequestReceived) and plain.context.input_verified is False
    # A roots answer where a form was asked is malformed: an ordinary JSON-RPC error.
    wrong = {**params, "inputResponses": {"confirm": {"roots": []}}}
    assert pair.server.receive_data(line(request(11, "tools/call", wrong)), wall_time=WALL + 1)
    assert wire(pair.server.data_to_send())[-1]["error"]["code"] == INVALID_PARAMS


def test_state_sealed_by_send_input_required_stays_a_request() -> None:
    """The lower-level verb keeps its shape: the retry is a RequestReceived, verified."""
    pair = connected(MODERN)
    pair.client.send_request("tools/call", {"name": "t", "arguments": {}})
    _, server_events = pair.pump()
    call = one(server_events, RequestReceived)
    question = {"method": "roots/list"}
    pair.server.send_input_required(call.request_id, {"r": question}, state={"n": 1})
    client_events, _ = pair.pump()
    pair.client.send_result(one(client_events, RequestReceived).request_id, {"roots": []})
    _, server_events = pair.pump()
    retry = one(server_events, RequestReceived)
    assert retry.context.input_verified is True and retry.context.request_state == {"n": 1}
    assert not of_type(server_events, InputReceived)


def test_a_server_that_speaks_2026_needs_keys_to_ask() -> None:
    for config, allowed in [
        (default_server_config(), False),
        (default_server_config(supported_versions=("2025-11-25",)), True),
    ]:
        conn = ServerConnection(config)
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": ALL_CAPS,
            "clientInfo": {"name": "c", "version": "1"},
        }
        feed(conn, request("i", "initialize", init), request(1, "tools/call", {"name": "t"}))
        out(conn)
        if allowed:
            assert conn.request_input(1, {"q": confirm_question("/q")})
        else:
            with pytest.raises(LocalProtocolError, match="request_state_keys"):
                conn.request_input(1, {"q": confirm_question("/q")})
            assert out(conn) == []


URL_NO_ID = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "m", "url": "https://x"},
}


@pytest.mark.parametrize(
    ("questions", "fragment"),
    [
        ({}, "at least one question"),
        ({"": confirm_question("/q")}, "non-empty strings"),
        ({"q": {"method": "tools/list"}}, "must be elicitation/create"),
        ({"q": 3}, "request model"),
        ({"q": {"method": "roots/list", "params": 3}}, "mapping or a model"),
        ({"q": URL_NO_ID}, "elicitationId"),
        (
            {"q": {"method": "elicitation/create", "params": {"mode": "voice", "message": "m"}}},
            "mode",
        ),
        (
            {
                "q": {
                    "method": "elicitation/create",
                    "params": {"message": "m", "requestedSchema": {}},
                }
            },
            "does not fit",
        ),
        (
            {
                "q": {
                    "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 1, "tools": []},
                }
            },
            "tools",
        ),
    ],
)
def test_mistakes_are_refused_before_anything_is_sent(questions: Any, fragment: str) -> None:
    caps = {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
    conn = legacy_server(client_caps=caps, request_state_keys=(KEY,))
    feed(conn, request(1, "tools/call", {"name": "t"}))
    with pytest.raises(LocalProtocolError, match=fragment):
        conn.request_input(1, questions)
    assert out(conn) == [] and conn.requests_in_flight == (0, 1)
    conn.check_invariants()


def test_other_refusals() -> None:
    conn = legacy_server("2025-06-18", client_caps={"elicitation": {}}, request_state_keys=(KEY,))
    feed(conn, request(1, "tools/call", {"name": "t"}), request(2, "tools/list"))
    url = {**URL_NO_ID, "params": {**URL_NO_ID["params"], "elicitationId": "e"}}
    with pytest.raises(LocalProtocolError, match="2025-11-25 or later"):
        conn.request_input(1, {"q": url})
    with pytest.raises(LocalProtocolError, match="cannot ask"):
        conn.request_input(2, {"q": confirm_question("/q")})
    with pytest.raises(LocalProtocolError, match="Roots not supported"):
        conn.request_input(1, {"q": {"method": "roots/list"}})
    with pytest.raises(LocalProtocolError, match="strict JSON"):
        conn.request_input(1, {"q": confirm_question("/q")}, state={"x": object()})

    class Nested(BaseModel):
        inner: Confirm

    nested = {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": Nested}}
    with pytest.raises(LocalProtocolError, match="PrimitiveSchemaDefinition"):
        conn.request_input(1, {"q": nested})
    model = ElicitRequest(
        params=ElicitRequestFormParams(message="m", requested_schema=form_schema(Confirm))
    )
    assert conn.request_input(1, {"q": model})  # a request model is a question too
    with pytest.raises(LocalProtocolError, match="already has questions out"):
        conn.request_input(1, {"q": confirm_question("/q")})
    with pytest.raises(LocalProtocolError, match="no request 77"):
        conn.request_input(77, {"q": confirm_question("/q")})


def test_a_round_is_sent_whole_or_not_at_all() -> None:
    conn = legacy_server(
        client_caps=ALL_CAPS, request_state_keys=(KEY,), limits=Limits(max_outbound_in_flight=1)
    )
    feed(conn, request(1, "tools/call", {"name": "t"}))
    with pytest.raises(LocalProtocolError, match="too many requests"):
        conn.request_input(1, {"a": confirm_question("/a"), "b": confirm_question("/b")})
    assert out(conn) == [] and conn.requests_in_flight == (0, 1)
    conn = legacy_server(
        client_caps=ALL_CAPS,
        request_state_keys=(KEY,),
        limits=Limits(max_buffered_output_bytes=1000),
    )
    feed(conn, request(1, "tools/call", {"name": "t"}))
    many = {str(i): confirm_question(f"/{i}") for i in range(6)}  # ~200 bytes each
    with pytest.raises(LocalProtocolError, match="output buffer"):
        conn.request_input(1, many)
    assert out(conn) == [] and conn.requests_in_flight == (0, 1)
    conn.check_invariants()


def test_the_modern_client_refusing_means_no_retry() -> None:
    """A 2026-07-28 client that refuses a question fails its own call; the server,
    whose request was already answered, hears nothing more."""
    pair = connected(MODERN)
    cid = pair.client.send_request("tools/call", {"name": "rm", "arguments": {"path": "/p"}})
    client_events, server_events = serve(pair, (-32601, "Elicitation not supported"))
    client_events += pair.client.tick(0.0)  # the refusal fails the call on the next tick
    assert one(client_events, ErrorReceived).request_id == cid
    assert not of_type(server_events, InputReceived)


def test_every_way_a_request_ends_withdraws_its_questions() -> None:
    """send_result, and the transport losing the request's stream, end the round too."""
    for end in ("result", "abandon"):
        conn = legacy_server(client_caps=ALL_CAPS, request_state_keys=(KEY,))
        feed(conn, request(1, "tools/call", {"name": "t"}))
        conn.request_input(1, {"q": confirm_question("/q")})
        (q,) = out(conn)
        if end == "result":
            assert conn.send_result(1, text("done"))
        else:
            assert conn.abandon_request(1) == [RequestCancelled(1, "stream closed")]
        assert out(conn)[0]["params"]["requestId"] == q["id"]
        assert feed(conn, result(q["id"], ACCEPT_OK)) == [ResponseIgnored(q["id"], late=True)]
        conn.check_invariants()


@pytest.mark.parametrize(("sealed_at", "verified"), [(WALL - 9.5, True), (WALL - 10.5, False)])
def test_the_seal_is_dated_by_the_wall_time_given(sealed_at: float, verified: bool) -> None:
    pair = connected(MODERN, request_state_ttl=10)
    pair.client.send_request("tools/call", {"name": "rm", "arguments": {"path": "/p"}})
    _, server_events = pair.pump()
    call = one(server_events, RequestReceived)
    assert pair.server.request_input(
        call.request_id, {"r": {"method": "roots/list"}}, wall_time=sealed_at
    )
    client_events, _ = pair.pump()
    pair.client.send_result(one(client_events, RequestReceived).request_id, {"roots": []})
    _, server_events = pair.pump()  # the retry arrives at WALL
    assert bool(of_type(server_events, InputReceived)) is verified
    assert bool(of_type(server_events, RequestStateRejected)) is not verified


def test_accepted_is_the_whole_test_for_yes() -> None:
    accept = ElicitResult(action="accept", content={"ok": True})
    assert InputAnswer("elicitation/create", "answered", accept).accepted == {"ok": True}
    url_accept = ElicitResult(action="accept")
    assert InputAnswer("elicitation/create", "answered", url_accept).accepted == {}
    decline = ElicitResult(action="decline")
    assert InputAnswer("elicitation/create", "answered", decline).accepted is None
    assert InputAnswer("elicitation/create", "unanswered", None, REQUEST_TIMEOUT).accepted is None
    assert InputAnswer("elicitation/create", "refused", None, -32601, "no").accepted is None
    roots = ListRootsResult(roots=[])
    assert InputAnswer("roots/list", "answered", roots).accepted is None
