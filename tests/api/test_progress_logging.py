"""Progress and logging from a tool, on both protocol generations."""

from typing import Any

import anyio
import pytest

from mcp_adapters import Client
from mcp_adapters.server import Context, MCPServer
from mcp_core import META_LOG_LEVEL
from mcp_core.types import LoggingMessageNotificationParams
from tests.timing import HANG

from .conftest import MODERN, SpyTransport, settle

pytestmark = pytest.mark.anyio


def build() -> MCPServer:
    mcp = MCPServer("Report")

    @mcp.tool()
    async def work(steps: int, ctx: Context) -> list[bool]:
        sent = []
        for step in range(1, steps + 1):
            sent.append(await ctx.report_progress(step, steps, f"step {step}"))
        return sent

    @mcp.tool()
    async def chatty(ctx: Context) -> list[bool]:
        return [
            await ctx.debug("debug line"),
            await ctx.info("info line", logger_name="app"),
            await ctx.warning({"code": 7}),
            await ctx.error("error line", logger_name="db"),
        ]

    return mcp


async def test_progress_reaches_the_callback(anyio_backend: str, mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(build(), mode=mode) as client:
        result = await client.call_tool("work", {"steps": 3}, progress_callback=on_progress)
        silent = await client.call_tool("work", {"steps": 2})
    assert result.structured_content == {"result": [True, True, True]}
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    # Without a callback the client asks for no progress, and nothing is sent.
    assert silent.structured_content == {"result": [False, False]}


class Logs:
    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.received: list[LoggingMessageNotificationParams] = []
        self.done = anyio.Event()

    async def __call__(self, params: LoggingMessageNotificationParams) -> None:
        self.received.append(params)
        if len(self.received) >= self.expected:
            self.done.set()

    async def wait(self) -> None:
        with anyio.fail_after(HANG):
            await self.done.wait()

    def summary(self) -> list[tuple[str, str | None, Any]]:
        return [(p.level, p.logger, p.data) for p in self.received]


ABOVE_INFO = [
    ("info", "app", "info line"),
    ("warning", None, {"code": 7}),
    ("error", "db", "error line"),
]


async def test_legacy_log_level_sets_the_session_level(anyio_backend: str) -> None:
    logs = Logs(3)
    spy = SpyTransport(build())
    async with Client(spy, mode="legacy", log_level="info", logging_callback=logs) as client:
        result = await client.call_tool("chatty", {})
        await logs.wait()
        await settle(client)
    set_level = [m for m in spy.sent if m.get("method") == "logging/setLevel"]
    assert [m["params"] for m in set_level] == [{"level": "info"}]
    assert result.structured_content == {"result": [False, True, True, True]}
    # debug filtered out by the server (order: see test_logs_arrive_in_order_before_the_result)
    assert sorted(logs.summary(), key=str) == sorted(ABOVE_INFO, key=str)


async def test_legacy_without_level_gets_everything(anyio_backend: str) -> None:
    logs = Logs(4)
    spy = SpyTransport(build())
    async with Client(spy, mode="legacy", logging_callback=logs) as client:
        result = await client.call_tool("chatty", {})
        await logs.wait()
        await settle(client)
    assert [m for m in spy.sent if m.get("method") == "logging/setLevel"] == []
    assert result.structured_content == {"result": [True, True, True, True]}
    # (Delivery order is covered by test_logs_arrive_in_order_before_the_result.)
    assert sorted(logs.summary(), key=str) == sorted(
        [("debug", None, "debug line"), *ABOVE_INFO], key=str
    )


async def test_modern_log_level_is_stamped_per_request(anyio_backend: str) -> None:
    server = build()
    stamped_logs, plain_logs = Logs(2), Logs(1)
    stamped_spy, plain_spy = SpyTransport(server), SpyTransport(server)
    async with (
        Client(
            stamped_spy, mode=MODERN, log_level="warning", logging_callback=stamped_logs
        ) as stamped,
        Client(plain_spy, mode=MODERN, logging_callback=plain_logs) as plain,
    ):
        first = await stamped.call_tool("chatty", {})
        second = await plain.call_tool("chatty", {})
        await stamped_logs.wait()
        await settle(stamped)
        await settle(plain)
    # No session level on 2026-07-28: the level travels in each request's _meta.
    assert [m for m in stamped_spy.sent if m.get("method") == "logging/setLevel"] == []
    calls = [m for m in stamped_spy.sent if m.get("method") == "tools/call"]
    assert [m["params"]["_meta"][META_LOG_LEVEL] for m in calls] == ["warning"]
    plain_calls = [m for m in plain_spy.sent if m.get("method") == "tools/call"]
    assert META_LOG_LEVEL not in plain_calls[0]["params"]["_meta"]
    assert first.structured_content == {"result": [False, False, True, True]}
    assert sorted(stamped_logs.summary(), key=str) == [
        ("error", "db", "error line"),
        ("warning", None, {"code": 7}),
    ]
    # A request that did not ask gets no logs at all, whatever another request asked.
    assert second.structured_content == {"result": [False, False, False, False]}
    assert plain_logs.received == []
    assert plain_spy.notifications("notifications/message") == []
    # Every log went on the stamped request's own stream.
    assert len(stamped_spy.notifications("notifications/message")) == 2


async def test_logs_arrive_in_order_before_the_result(anyio_backend: str, mode: str) -> None:
    mcp = MCPServer("Ordered")

    @mcp.tool()
    async def count(n: int, ctx: Context) -> int:
        for i in range(n):
            await ctx.info(i)
        return n

    got: list[Any] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        got.append(params.data)

    seen: list[list[Any]] = []
    async with Client(mcp, mode=mode, log_level="info", logging_callback=on_log) as client:
        # 20 calls: trio's scheduler would let a racy delivery pass only ~1e-6 of the time.
        for _ in range(20):
            got.clear()
            await client.call_tool("count", {"n": 8})
            seen.append(list(got))
    assert seen == [list(range(8))] * 20
