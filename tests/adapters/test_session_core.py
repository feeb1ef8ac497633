"""SessionCore without any loop: two sessions wired back to back through real bytes.

What every backend relies on: each outbound request gets exactly one outcome,
inbound handlers are started and cancelled, and closing settles everything.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_adapters import (
    ConnectionClosedError,
    LimitExceededError,
    RequestFailedError,
    RequestTimeoutError,
)
from mcp_adapters._session import SessionCore
from mcp_core import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    LIMIT_EXCEEDED,
    REQUEST_TIMEOUT,
    ClientConfig,
    ClientConnection,
    Connected,
    Era,
    InputReceived,
    MCPError,
    ProgressReceived,
    RemoteProtocolError,
    RequestReceived,
    ServerConfig,
    ServerConnection,
)
from mcp_core.types import CallToolResult, TextContent


class Outcome:
    """A waiter that records every call, so a second outcome would show."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def set_result(self, value: Any) -> None:
        self.calls.append(("result", value))

    def set_exception(self, exc: BaseException) -> None:
        self.calls.append(("error", exc))

    @property
    def only(self) -> tuple[str, Any]:
        assert len(self.calls) == 1, self.calls
        return self.calls[0]


class Handle:
    def __init__(self, request: RequestReceived) -> None:
        self.request = request
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Pair:
    """A client core and a server core; `pump()` moves bytes until both are quiet."""

    def __init__(self, mode: str = "legacy") -> None:
        self.handles: list[Handle] = []
        self.notifications: list[Any] = []
        self.client = SessionCore(
            ClientConnection(ClientConfig(mode=mode, capabilities={"roots": {}})),
            spawn=self._spawn,
        )
        self.server = SessionCore(
            ServerConnection(ServerConfig(name="s", capabilities={"tools": {}, "logging": {}})),
            spawn=self._spawn,
            on_notification=self.notifications.append,
        )

    def _spawn(self, request: RequestReceived) -> Handle:
        handle = Handle(request)
        self.handles.append(handle)
        return handle

    def pump(self) -> None:
        for _ in range(100):
            moved = False
            for source, target in ((self.client, self.server), (self.server, self.client)):
                data = source.connection.data_to_send()
                if data:
                    moved = True
                    target.dispatch(target.connection.receive_data(data))
            if not moved:
                return
        raise AssertionError("the cores kept talking")

    def connect(self) -> Connected:
        waiter = Outcome()
        self.client.connect(waiter)
        self.pump()
        kind, connected = waiter.only
        assert kind == "result"
        return connected  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_result_and_error_each_settle_their_waiter_once(mode: str) -> None:
    pair = Pair(mode)
    connected = pair.connect()
    assert connected.era is (Era.LEGACY if mode == "legacy" else Era.MODERN)
    ok, bad = Outcome(), Outcome()
    pair.client.start_request("tools/call", {"name": "a"}, ok)
    pair.client.start_request("tools/call", {"name": "b"}, bad)
    pair.pump()
    first, second = pair.handles
    pair.server.answer(first.request.request_id, CallToolResult(content=[]))
    pair.server.answer_exception(
        second.request.request_id, MCPError(INVALID_PARAMS, "nope", {"x": 1})
    )
    pair.pump()
    assert ok.only[0] == "result" and isinstance(ok.only[1], CallToolResult)
    kind, error = bad.only
    assert kind == "error" and isinstance(error, MCPError)
    assert (error.code, error.message, error.data) == (INVALID_PARAMS, "nope", {"x": 1})
    assert pair.client.pending_requests == 0 and pair.server.running_handlers == 0


def test_a_handler_crash_becomes_an_internal_error() -> None:
    pair = Pair()
    pair.connect()
    waiter = Outcome()
    pair.client.start_request("tools/call", {"name": "a"}, waiter)
    pair.pump()
    pair.server.answer_exception(pair.handles[0].request.request_id, ValueError("boom"))
    pair.pump()
    error = waiter.only[1]
    assert isinstance(error, MCPError) and error.code == INTERNAL_ERROR
    assert "boom" in error.message


def test_an_unsendable_result_becomes_an_internal_error() -> None:
    pair = Pair()
    pair.connect()
    waiter = Outcome()
    pair.client.start_request("tools/call", {"name": "a"}, waiter)
    pair.pump()
    pair.server.answer(pair.handles[0].request.request_id, ["not", "an", "object"])
    pair.pump()
    error = waiter.only[1]
    assert isinstance(error, MCPError) and error.code == INTERNAL_ERROR


def test_cancel_tells_the_peer_and_cancels_its_handler() -> None:
    pair = Pair()
    pair.connect()
    waiter = Outcome()
    rid = pair.client.start_request("tools/call", {"name": "slow"}, waiter)
    pair.pump()
    pair.client.cancel_request(rid, "changed my mind")
    pair.pump()
    assert pair.handles[0].cancelled
    # The handler answering late is harmless, and the caller's waiter stays untouched.
    pair.server.answer(pair.handles[0].request.request_id, CallToolResult(content=[]))
    pair.pump()
    assert waiter.calls == []


def test_deadline_fails_the_request_and_cancels_on_the_peer() -> None:
    pair = Pair()
    pair.connect()
    waiter = Outcome()
    pair.client.start_request("tools/call", {"name": "slow"}, waiter, deadline=10.0)
    pair.pump()
    assert pair.client.connection.next_deadline() == 10.0
    pair.client.dispatch(pair.client.connection.tick(9.0))
    assert waiter.calls == []
    pair.client.dispatch(pair.client.connection.tick(10.0))
    pair.pump()
    _, error = waiter.only
    assert isinstance(error, RequestTimeoutError) and error.code == REQUEST_TIMEOUT
    assert isinstance(error, RequestFailedError) and error.method == "tools/call"
    assert pair.handles[0].cancelled


def test_progress_reaches_the_callback_of_its_request() -> None:
    pair = Pair("auto")
    pair.connect()
    seen: list[ProgressReceived] = []
    waiter = Outcome()
    pair.client.start_request("tools/call", {"name": "p"}, waiter, on_progress=seen.append)
    pair.pump()
    rid = pair.handles[0].request.request_id
    for step in (1, 2):
        assert pair.server.connection.send_progress(rid, step, 2, f"step {step}")
    pair.server.answer(rid, CallToolResult(content=[TextContent(type="text", text="done")]))
    pair.pump()
    assert [(p.progress, p.message) for p in seen] == [(1, "step 1"), (2, "step 2")]
    assert waiter.only[0] == "result"


def test_end_of_stream_settles_everything_in_flight_both_ways() -> None:
    pair = Pair()
    pair.connect()
    waiters = [Outcome() for _ in range(3)]
    for waiter in waiters:
        pair.client.start_request("tools/call", {"name": "slow"}, waiter)
    pair.pump()
    # The server side sees its peer vanish: every running handler is cancelled.
    pair.server.dispatch(pair.server.connection.receive_data(b""))
    assert all(handle.cancelled for handle in pair.handles)
    assert pair.server.running_handlers == 0
    # The client side too: every waiter fails once, with the closed error.
    pair.client.cause = BrokenPipeError("pipe gone")
    pair.client.dispatch(pair.client.connection.receive_data(b""))
    for waiter in waiters:
        _, error = waiter.only
        assert isinstance(error, ConnectionClosedError) and error.code == CONNECTION_CLOSED
        assert isinstance(error.__cause__, BrokenPipeError)
    with pytest.raises(ConnectionClosedError):
        pair.client.start_request("tools/list", None, Outcome())


def test_local_close_fails_the_handshake_waiter() -> None:
    pair = Pair()
    waiter = Outcome()
    pair.client.connect(waiter)
    pair.client.close("giving up")
    _, error = waiter.only
    assert isinstance(error, ConnectionClosedError) and "giving up" in str(error)


def test_a_failed_connection_closes_with_the_peer_error_attached(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pair = Pair()
    pair.connect()
    waiter = Outcome()
    pair.client.start_request("tools/list", None, waiter)
    broken = RemoteProtocolError("broken framing")
    pair.client.dispatch(pair.client.connection.close("the stream broke", error=broken))
    error = waiter.only[1]
    assert isinstance(error, ConnectionClosedError) and error.error is broken
    assert "connection failed: the stream broke" in caplog.text


def test_answers_are_due_while_a_handler_runs_and_waits_on_nobody() -> None:
    """What a stdio server whose input ended waits for (`drain_on_eof`)."""
    pair = Pair()
    pair.connect()
    assert not pair.server.answers_due()
    call = Outcome()
    pair.client.start_request("tools/call", {"name": "slow"}, call)
    pair.pump()
    assert pair.server.answers_due()
    # The handler asks the client: that answer can no longer come once input ended.
    asked = Outcome()
    tool_call = pair.handles[0].request.request_id
    pair.server.start_request("roots/list", None, asked, related_request_id=tool_call)
    assert not pair.server.answers_due()
    pair.pump()
    pair.client.answer(pair.handles[-1].request.request_id, {"roots": []})
    pair.pump()
    assert asked.only[0] == "result"
    assert pair.server.answers_due()
    pair.server.answer(tool_call, CallToolResult(content=[]))
    assert not pair.server.answers_due()


def test_a_listen_stream_is_no_answer_due() -> None:
    pair = Pair(mode="auto")
    assert pair.connect().era is Era.MODERN
    pair.client.start_request("subscriptions/listen", {"notifications": {}}, Outcome())
    pair.pump()
    (listen,) = pair.handles
    assert listen.request.method == "subscriptions/listen"
    assert not pair.server.answers_due()
    pair.client.start_request("tools/call", {"name": "slow"}, Outcome())
    pair.pump()
    assert pair.server.answers_due()


def test_an_over_long_response_fails_only_its_request_with_the_limit_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pair = Pair()
    pair.connect()
    refused, kept = Outcome(), Outcome()
    first = pair.client.start_request("tools/list", None, refused)
    pair.client.start_request("ping", None, kept)
    limit = pair.client.connection.limits.max_message_bytes
    answer = b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[],"pad":"' % first
    pair.client.dispatch(pair.client.connection.receive_data(answer + b"x" * limit + b'"}}\n'))
    assert refused.only[0] == "error"
    error = refused.only[1]
    assert isinstance(error, LimitExceededError) and error.code == LIMIT_EXCEEDED
    assert str(error).startswith("tools/list: response refused: message of ")
    assert "(Limits.max_message_bytes); raise Limits.max_message_bytes" in str(error)
    assert f"refused a message from the peer (id {first})" in caplog.text
    assert kept.calls == []
    pair.pump()
    assert kept.only[0] == "result"


# ------------------------------------------------- a server's questions (InputReceived)


class AskingPair(Pair):
    """A server that may ask (keys configured), fed with the wall clock sealing needs."""

    def __init__(self, mode: str) -> None:
        super().__init__(mode)
        config = ServerConfig(name="s", capabilities={"tools": {}}, request_state_keys=(b"k" * 32,))
        self.server = SessionCore(ServerConnection(config), spawn=self._spawn)

    def pump(self) -> None:
        for _ in range(100):
            moved = False
            for source, target in ((self.client, self.server), (self.server, self.client)):
                data = source.connection.data_to_send()
                if data:
                    moved = True
                    target.dispatch(target.connection.receive_data(data, wall_time=1.0))
            if not moved:
                return
        raise AssertionError("the cores kept talking")

    def ask_roots(self) -> tuple[Outcome, Outcome]:
        """A tools/call whose handler asks for the roots; (the call's waiter, the
        handler's answer waiter)."""
        self.connect()
        call, answers = Outcome(), Outcome()
        self.client.start_request("tools/call", {"name": "t"}, call)
        self.pump()
        rid = self.handles[-1].request.request_id
        self.server.expect_input(rid, answers)
        server = self.server.connection
        assert isinstance(server, ServerConnection)
        assert server.request_input(rid, {"where": {"method": "roots/list"}})
        self.pump()
        return call, answers


def test_legacy_answers_go_to_the_handler_waiting_in_place() -> None:
    pair = AskingPair("legacy")
    _, answers = pair.ask_roots()
    question = pair.handles[-1].request
    assert question.method == "roots/list"
    pair.client.answer(question.request_id, {"roots": []})
    pair.pump()
    kind, event = answers.only
    assert kind == "result" and isinstance(event, InputReceived)
    assert event.answers["where"].status == "answered"
    assert len(pair.handles) == 2  # the tool call and the question: nothing spawned anew


def test_a_2026_retry_nobody_waits_for_runs_like_a_request() -> None:
    pair = AskingPair("2026-07-28")
    _, answers = pair.ask_roots()  # the waiter is for the old id: it never hears
    question = pair.handles[-1].request
    pair.client.answer(question.request_id, {"roots": []})
    pair.pump()
    retry = pair.handles[-1].request
    assert isinstance(retry, InputReceived) and retry.method == "tools/call"
    assert retry.answers["where"].status == "answered"
    assert answers.calls == []


def test_closing_fails_a_handler_waiting_for_answers() -> None:
    pair = AskingPair("legacy")
    _, answers = pair.ask_roots()
    pair.server.close("bye")
    kind, error = answers.only
    assert kind == "error" and isinstance(error, ConnectionClosedError)


def test_a_cancelled_call_drops_the_wait() -> None:
    pair = AskingPair("legacy")
    _, answers = pair.ask_roots()
    tool_call = pair.handles[0]
    rid = next(iter(pair.client._pending))
    pair.client.cancel_request(rid)
    pair.pump()
    assert tool_call.cancelled and answers.calls == []
    pair.server.forget_input(tool_call.request.request_id)  # the handler's cleanup: harmless


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_clients_observer_skips_answers_until_a_task_call_follows_progress(
    anyio_backend: str,
) -> None:
    """The `Client` turns its session's `observe_responses` off once connected (its
    observer does nothing with an answer then) and on only while a legacy task call
    follows its progress (tests/api/test_client_tasks.py checks what it does then)."""
    from mcp_adapters import Client
    from mcp_adapters.server import MCPServer

    server = MCPServer("s")

    @server.tool()
    def echo(text: str) -> str:
        return text

    async with Client(server, mode="legacy") as client:
        assert client.session.observe_responses is False
        result = await client.call_tool("echo", {"text": "hi"})
        assert result.content[0].text == "hi"
        assert client.session.observe_responses is False
