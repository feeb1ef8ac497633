"""The Client: callbacks as capabilities, refusals, input-round limits, notifications."""

from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel

from examples.seeds.callbacks import handle_list_roots, handle_sampling
from mcp_adapters import Client
from mcp_adapters.server import Context, Elicit, MCPServer, Resolve
from mcp_core import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    MCPError,
    NotificationReceived,
)
from mcp_core.types import (
    CancelledNotification,
    ClientCapabilities,
    ElicitationCapability,
    ElicitResult,
    ErrorData,
    RootsCapability,
    SamplingCapability,
    SamplingToolsCapability,
    ToolListChangedNotification,
)
from tests.timing import HANG

from .conftest import MODERN, Recorder, SpyTransport, accept, callbacks_done, settle

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


def ask_confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def build() -> MCPServer:
    mcp = MCPServer("Client tests")

    @mcp.tool()
    def client_features(ctx: Context) -> list[str]:
        declared = {
            "elicitation": ClientCapabilities(elicitation=ElicitationCapability()),
            "sampling": ClientCapabilities(sampling=SamplingCapability()),
            "roots": ClientCapabilities(roots=RootsCapability()),
            "sampling.tools": ClientCapabilities(
                sampling=SamplingCapability(tools=SamplingToolsCapability())
            ),
        }
        return [
            name
            for name, capability in declared.items()
            if ctx.session.check_client_capability(capability)
        ]

    @mcp.tool()
    async def confirm(answer: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
        return f"ok={answer.ok}"

    @mcp.tool(replay_elicitation=True)
    async def nag(ctx: Context) -> str:
        while True:  # never satisfied: asks a new question every round
            await ctx.elicit("Again?", Confirm)

    @mcp.tool()
    async def hang(ctx: Context) -> str:
        await ctx.elicit("Wait for me?", Confirm)
        return "unreachable"

    return mcp


async def elicit_cb(context: Any, params: Any) -> ElicitResult:
    return accept(ok=True)


CALLBACK_SETS: dict[str, dict[str, Any]] = {
    "none": {},
    "elicitation": {"elicitation_callback": elicit_cb},
    "all": {
        "elicitation_callback": elicit_cb,
        "sampling_callback": handle_sampling,
        "list_roots_callback": handle_list_roots,
    },
    "all+sampling-tools": {
        "elicitation_callback": elicit_cb,
        "sampling_callback": handle_sampling,
        "list_roots_callback": handle_list_roots,
        "sampling_capabilities": SamplingCapability(tools=SamplingToolsCapability()),
    },
}
EXPECTED = {
    "none": [],
    "elicitation": ["elicitation"],
    "all": ["elicitation", "sampling", "roots"],
    "all+sampling-tools": ["elicitation", "sampling", "roots", "sampling.tools"],
}
WIRE = {
    "none": {},
    "elicitation": {"elicitation": {"form": {}, "url": {}}},
    "all": {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}},
    "all+sampling-tools": {
        "elicitation": {"form": {}, "url": {}},
        "sampling": {"tools": {}},
        "roots": {},
    },
}


@pytest.mark.parametrize("callbacks", list(CALLBACK_SETS))
async def test_callbacks_declare_capabilities(
    anyio_backend: str, mode: str, callbacks: str
) -> None:
    spy = SpyTransport(build())
    async with Client(spy, mode=mode, **CALLBACK_SETS[callbacks]) as client:
        result = await client.call_tool("client_features", {})
    assert result.structured_content == {"result": EXPECTED[callbacks]}
    if mode == MODERN:
        (call,) = [m for m in spy.sent if m.get("method") == "tools/call"]
        declared = call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    else:
        (init,) = [m for m in spy.sent if m.get("method") == "initialize"]
        declared = init["params"]["capabilities"]
    assert declared == WIRE[callbacks]


async def test_no_callback_fails_the_call(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("confirm", {})
    assert caught.value.message == "Elicitation not supported"
    # Legacy: the client engine refuses the server's request; 2026-07-28: the server
    # sees the capability missing from the request and says which one.
    if mode == MODERN:
        assert caught.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
        assert caught.value.data == {"requiredCapabilities": {"elicitation": {}}}
    else:
        assert caught.value.code == METHOD_NOT_FOUND


@pytest.mark.parametrize("code", [1, INVALID_PARAMS, -32001])
async def test_error_data_from_a_callback_fails_the_call(
    anyio_backend: str, mode: str, code: int
) -> None:
    # -32001 is REQUEST_TIMEOUT: the application's code must not be read as a local timeout.
    asked: list[Any] = []

    async def refuse(context: Any, params: Any) -> ErrorData:
        asked.append(params)
        return ErrorData(code=code, message="the user refused", data={"why": "no"})

    async with Client(build(), mode=mode, elicitation_callback=refuse) as client:
        with pytest.raises(Exception) as caught:
            await client.call_tool("confirm", {})
        # The connection survives the failed call.
        after = await client.call_tool("client_features", {})
    assert len(asked) == 1
    assert after.structured_content == {"result": ["elicitation"]}
    assert type(caught.value) is MCPError
    assert caught.value.message == "the user refused"
    assert caught.value.code == code
    assert caught.value.data == {"why": "no"}


async def test_error_data_is_never_retried_on_modern(anyio_backend: str) -> None:
    """On 2026-07-28 a refusal ends the call in the client: no retry is sent."""
    spy = SpyTransport(build())

    async def refuse(context: Any, params: Any) -> ErrorData:
        return ErrorData(code=1, message="the user refused")

    async with Client(spy, mode=MODERN, elicitation_callback=refuse) as client:
        with pytest.raises(MCPError, match="the user refused"):
            await client.call_tool("confirm", {})
    calls = [m for m in spy.sent if m.get("method") == "tools/call"]
    assert len(calls) == 1  # refused: never retried


@pytest.mark.parametrize("limit", [1, 3])
async def test_max_input_rounds(anyio_backend: str, limit: int) -> None:
    recorder = Recorder(*[accept(ok=True)] * limit)
    spy = SpyTransport(build())
    async with Client(
        spy, mode=MODERN, elicitation_callback=recorder, max_input_rounds=limit
    ) as client:
        with pytest.raises(Exception) as caught:
            await client.call_tool("nag", {})
        after = await client.call_tool("client_features", {})
    assert str(caught.value) == (
        f"tools/call: the server kept asking for input: {limit} rounds exceeded"
    )
    assert len(recorder.asked) == limit
    assert len(spy.input_required()) == limit + 1
    assert after.structured_content == {"result": ["elicitation"]}


def test_max_input_rounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_input_rounds must be at least 1"):
        Client(build(), max_input_rounds=0)


class Messages:
    def __init__(self) -> None:
        self.received: list[Any] = []
        self.arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        self.received.append(message)
        self.arrived.set()


def new_tool() -> str:
    """Added while connected."""
    return "new"


async def test_message_handler_gets_list_changed_on_legacy(anyio_backend: str) -> None:
    mcp = build()
    handler = Messages()
    async with Client(mcp, mode="legacy", message_handler=handler) as client:
        await client.list_tools()
        mcp.add_tool(new_tool)
        with anyio.fail_after(HANG):
            await handler.arrived.wait()
        tools = await client.list_tools()
        await settle(client)
    assert handler.received == [ToolListChangedNotification()]
    assert "new_tool" in [t.name for t in tools.tools]


async def test_list_changed_reaches_a_session_that_only_initialized(anyio_backend: str) -> None:
    mcp = build()
    handler = Messages()
    async with Client(mcp, mode="legacy", message_handler=handler) as client:
        mcp.add_tool(new_tool)
        await client.send_ping()  # a round trip: the notification came before its answer
        await callbacks_done(client)
    assert handler.received == [ToolListChangedNotification()]


async def test_message_handler_never_sees_cancelled(anyio_backend: str) -> None:
    """A call given up on makes the server cancel its elicitation/create: the engine
    applies that notifications/cancelled (the callback is cancelled) and never
    surfaces it. (Given up on by cancelling it once the callback runs, not by a short
    timeout, which a loaded machine can let pass before the server even asks.)"""
    handler = Messages()
    callback_started = anyio.Event()
    callback_cancelled = anyio.Event()

    async def wait_forever(context: Any, params: Any) -> ElicitResult:
        callback_started.set()
        try:
            await anyio.sleep_forever()
        finally:
            callback_cancelled.set()
        raise AssertionError("unreachable")

    spy = SpyTransport(build())
    async with Client(
        spy, mode="legacy", elicitation_callback=wait_forever, message_handler=handler
    ) as client:
        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "hang", {})
                await callback_started.wait()
                group.cancel_scope.cancel()
            await callback_cancelled.wait()
        await settle(client)
    (sent_cancel,) = spy.notifications("notifications/cancelled")
    (asked,) = spy.requests("elicitation/create")
    assert sent_cancel["params"]["requestId"] == asked["id"]
    assert not any(isinstance(m, CancelledNotification) for m in handler.received)
    assert handler.received == []


async def test_listen_stream_gets_list_changed(anyio_backend: str) -> None:
    mcp = build()
    handler = Messages()
    async with Client(mcp, mode=MODERN, message_handler=handler) as client:
        async with client.listen(tools=True) as stream:
            mcp.add_tool(new_tool)
            with anyio.fail_after(HANG):
                event = await stream.receive()
            tools = await client.list_tools()
        await settle(client)
    assert isinstance(event, NotificationReceived)
    assert event.method == "notifications/tools/list_changed"
    assert event.subscription_id is not None
    assert "new_tool" in [t.name for t in tools.tools]
    # The stream's notifications (and its acknowledgement) are consumed by the stream.
    assert handler.received == []


async def test_listen_is_acknowledged(anyio_backend: str) -> None:
    """Entering listen() waits for the acknowledgement, which the stream consumes."""
    spy = SpyTransport(build())
    handler = Messages()
    async with Client(spy, mode=MODERN, message_handler=handler) as client:
        async with client.listen(tools=True):
            pass
        await settle(client)
    (ack,) = spy.notifications("notifications/subscriptions/acknowledged")
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert handler.received == []


async def test_listen_streams_get_only_what_they_asked(anyio_backend: str) -> None:
    mcp = build()

    @mcp.prompt()
    def hello() -> str:
        return "hi"

    async with (
        Client(mcp, mode=MODERN) as client,
        client.listen(tools=True) as tools_stream,
        client.listen(prompts=True) as prompts_stream,
    ):
        mcp.add_tool(new_tool)
        mcp.remove_prompt("hello")
        with anyio.fail_after(HANG):
            tool_event = await tools_stream.receive()
            prompt_event = await prompts_stream.receive()
        await settle(client)
        with pytest.raises(anyio.WouldBlock):
            tools_stream.receive_nowait()
        with pytest.raises(anyio.WouldBlock):
            prompts_stream.receive_nowait()
    assert tool_event.method == "notifications/tools/list_changed"
    assert prompt_event.method == "notifications/prompts/list_changed"
    assert tool_event.subscription_id != prompt_event.subscription_id
