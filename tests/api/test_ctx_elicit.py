"""`ctx.elicit` / `ctx.elicit_url` from inside a tool, and `ctx.session`, on both generations."""

from typing import Any

import anyio
import pytest
from pydantic import BaseModel, Field

from mcp_adapters import Client
from mcp_adapters.server import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    MCPServer,
)
from mcp_core import INVALID_PARAMS, MCPError
from mcp_core.types import (
    ElicitCompleteNotification,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
)

from .conftest import MODERN, Recorder, SpyTransport, accept, settle

pytestmark = pytest.mark.anyio


class Booking(BaseModel):
    date: str = Field(description="Date (YYYY-MM-DD)")
    guests: int = Field(default=2, description="How many")


class Trace:
    """Counts how often each part of a tool body ran."""

    def __init__(self) -> None:
        self.before = 0
        self.after = 0
        self.outcomes: list[Any] = []


def build(trace: Trace, *, server_replay: bool = False, tool_replay: bool | None = None):
    mcp = MCPServer("Ask", replay_elicitation=server_replay)

    @mcp.tool(replay_elicitation=tool_replay)
    async def book(ctx: Context) -> str:
        trace.before += 1
        answer = await ctx.elicit(message="When?", schema=Booking)
        trace.after += 1
        trace.outcomes.append(answer)
        if answer.action == "accept":
            return f"{answer.data.date} for {answer.data.guests}"
        return f"no booking ({answer.action})"

    @mcp.tool(replay_elicitation=tool_replay)
    async def pay(booking_id: str, ctx: Context) -> str:
        trace.before += 1
        answer = await ctx.elicit_url(
            "Pay the deposit.", f"https://pay.example.com/{booking_id}", f"dep-{booking_id}"
        )
        trace.after += 1
        trace.outcomes.append(answer)
        return f"url {answer.action}"

    @mcp.tool(replay_elicitation=tool_replay)
    async def two(ctx: Context) -> str:
        trace.before += 1
        first = await ctx.elicit("First?", Booking)
        trace.outcomes.append("between")
        second = await ctx.elicit("Second?", Booking)
        trace.after += 1
        assert isinstance(first, AcceptedElicitation)
        assert isinstance(second, AcceptedElicitation)
        return f"{first.data.date} then {second.data.date}"

    return mcp


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


async def test_legacy_elicit_works_without_opt_in(anyio_backend: str) -> None:
    trace = Trace()
    recorder = Recorder(accept(date="2025-12-27", guests=4))
    async with Client(build(trace), mode="legacy", elicitation_callback=recorder) as client:
        result = await client.call_tool("book", {})
    assert texts(result) == ["2025-12-27 for 4"]
    assert (trace.before, trace.after) == (1, 1)
    (asked,) = recorder.asked
    assert isinstance(asked, ElicitRequestFormParams)
    assert asked.message == "When?"
    assert asked.requested_schema["required"] == ["date"]
    assert asked.requested_schema["properties"]["guests"]["default"] == 2
    assert asked.requested_schema["properties"]["date"]["description"] == "Date (YYYY-MM-DD)"
    (outcome,) = trace.outcomes
    assert isinstance(outcome, AcceptedElicitation)
    assert outcome.data == Booking(date="2025-12-27", guests=4)


@pytest.mark.parametrize("tool", ["book", "pay"])
async def test_modern_without_opt_in_fails_clearly(anyio_backend: str, tool: str) -> None:
    trace = Trace()
    recorder = Recorder()
    async with Client(build(trace), mode=MODERN, elicitation_callback=recorder) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool(tool, {"booking_id": "b1"} if tool == "pay" else {})
    error = caught.value
    assert error.code == INVALID_PARAMS
    assert "replay_elicitation" in error.message
    assert "Resolve" in error.message
    what = "elicit" if tool == "book" else "elicit_url"
    # The one-line fix first, with the server's and the tool's names.
    assert error.message.startswith(
        f"ctx.{what}() on a 2026-07-28 connection needs replay_elicitation=True: "
        f'MCPServer("Ask", replay_elicitation=True), or @mcp.tool(replay_elicitation=True) '
        f"on {tool}."
    )
    assert recorder.asked == []
    assert (trace.before, trace.after) == (1, 0)


async def test_tool_opt_out_overrides_server_opt_in(anyio_backend: str) -> None:
    trace = Trace()
    async with Client(
        build(trace, server_replay=True, tool_replay=False),
        mode=MODERN,
        elicitation_callback=Recorder(),
    ) as client:
        with pytest.raises(MCPError, match="replay_elicitation"):
            await client.call_tool("book", {})


@pytest.mark.parametrize("opt_in", ["server", "tool"])
async def test_replay_runs_the_body_again(anyio_backend: str, mode: str, opt_in: str) -> None:
    trace = Trace()
    server = build(
        trace, server_replay=opt_in == "server", tool_replay=True if opt_in == "tool" else None
    )
    spy = SpyTransport(server)
    recorder = Recorder(accept(date="2026-01-02"))
    async with Client(spy, mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("book", {})
    assert texts(result) == ["2026-01-02 for 2"]  # the default filled in by validation
    assert len(recorder.asked) == 1
    if mode == MODERN:
        # Asked in round one; the retry replays the body from the top.
        assert trace.before == 2
        assert [sorted(r["inputRequests"]) for r in spy.input_required()] == [["elicit_1"]]
    else:
        assert trace.before == 1
    assert trace.after == 1  # code after the question runs once
    (outcome,) = trace.outcomes
    assert outcome.data == Booking(date="2026-01-02", guests=2)


async def test_replay_two_questions(anyio_backend: str, mode: str) -> None:
    trace = Trace()
    spy = SpyTransport(build(trace, server_replay=True))
    recorder = Recorder(accept(date="d1"), accept(date="d2"))
    async with Client(spy, mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("two", {})
    assert texts(result) == ["d1 then d2"]
    assert [p.message for p in recorder.asked] == ["First?", "Second?"]
    if mode == MODERN:
        assert trace.before == 3
        assert trace.outcomes == ["between", "between"]
        assert [sorted(r["inputRequests"]) for r in spy.input_required()] == [
            ["elicit_1"],
            ["elicit_2"],
        ]
    else:
        assert trace.before == 1
        assert trace.outcomes == ["between"]
    assert trace.after == 1


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_is_not_an_error(anyio_backend: str, mode: str, action: str) -> None:
    trace = Trace()
    recorder = Recorder(ElicitResult(action=action))
    async with Client(
        build(trace, server_replay=True), mode=mode, elicitation_callback=recorder
    ) as client:
        result = await client.call_tool("book", {})
    assert not result.is_error
    assert texts(result) == [f"no booking ({action})"]
    (outcome,) = trace.outcomes
    expected = DeclinedElicitation if action == "decline" else CancelledElicitation
    assert isinstance(outcome, expected)
    assert not hasattr(outcome, "data")


async def test_invalid_data_is_never_accepted(anyio_backend: str, mode: str) -> None:
    trace = Trace()
    recorder = Recorder(accept(date="x", guests="many"), accept(date="y", guests=3))
    async with Client(
        build(trace, server_replay=True), mode=mode, elicitation_callback=recorder
    ) as client:
        result = await client.call_tool("book", {})
    if mode == MODERN:
        assert texts(result) == ["y for 3"]
        assert len(recorder.asked) == 2
    else:
        assert result.is_error is True
        assert texts(result)[0].startswith("the client's answer to 'elicit_1' is invalid:")
        assert len(recorder.asked) == 1
        assert trace.after == 0


@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_elicit_url(anyio_backend: str, mode: str, action: str) -> None:
    trace = Trace()
    recorder = Recorder(ElicitResult(action=action))
    async with Client(
        build(trace, server_replay=True), mode=mode, elicitation_callback=recorder
    ) as client:
        result = await client.call_tool("pay", {"booking_id": "b7"})
    assert texts(result) == [f"url {action}"]
    (asked,) = recorder.asked
    assert isinstance(asked, ElicitRequestURLParams)
    assert asked.url == "https://pay.example.com/b7"
    assert asked.message == "Pay the deposit."
    assert asked.elicitation_id == ("dep-b7" if mode == "legacy" else None)
    (outcome,) = trace.outcomes
    assert isinstance(
        outcome, AcceptedUrlElicitation if action == "accept" else DeclinedElicitation
    )


# ----------------------------------------------------------------- ctx.session


def session_server() -> MCPServer:
    mcp = MCPServer("Session")

    @mcp.tool()
    async def complete(elicitation_id: str, ctx: Context) -> bool:
        return await ctx.session.send_elicit_complete(elicitation_id)

    return mcp


async def test_send_elicit_complete(anyio_backend: str, mode: str) -> None:
    received: list[Any] = []
    got = anyio.Event()

    async def handler(message: Any) -> None:
        received.append(message)
        got.set()

    spy = SpyTransport(session_server())
    async with Client(spy, mode=mode, message_handler=handler) as client:
        result = await client.call_tool("complete", {"elicitation_id": "dep-1"})
        if mode == "legacy":
            with anyio.fail_after(5):
                await got.wait()
        else:
            await settle(client)
    if mode == "legacy":
        assert client.protocol_version == "2025-11-25"
        assert result.structured_content == {"result": True}
        assert received == [ElicitCompleteNotification(params={"elicitationId": "dep-1"})]
        assert len(spy.notifications("notifications/elicitation/complete")) == 1
    else:
        assert result.structured_content == {"result": False}
        assert received == []
        assert spy.notifications("notifications/elicitation/complete") == []
