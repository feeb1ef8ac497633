"""Requests answered where they arrive go out together, once the read is routed.

A server session answers a plain tool's call in the stack of the read that
brought it (the handler's `now`), and a coroutine tool's in its task's first
step, run eagerly there. The answer waits on the connection until the
whole batch of that read is routed: then the driver writes everything queued at
once. Two calls in one read are two answers in one write, in order.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_adapters import current_backend
from mcp_adapters.server import MCPServer
from mcp_adapters.server._serve import request_handler
from tests.adapters.streams import PushedStream
from tests.timing import HANG

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize("tool", ["echo", "echo_async"])
async def test_two_calls_in_one_read_are_answered_in_one_write(tool: str) -> None:
    # A coroutine tool that never suspends is answered in its task's first step,
    # run eagerly where the request arrived: it too waits for the read's one write.
    mcp = MCPServer("batch")

    @mcp.tool()
    def echo(text: str) -> str:
        return text

    @mcp.tool()
    async def echo_async(text: str) -> str:
        return text

    stream = PushedStream()
    session = current_backend().Session(
        mcp.new_connection(), stream, on_request=request_handler(mcp)
    )
    async with session:
        with anyio.fail_after(HANG):
            while stream.sink is None:
                await anyio.sleep(0.001)
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        stream.sink(
            _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}), None
        )
        stream.sink(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}), None)
        before = len(stream.written)
        calls = b"".join(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": {"text": f"call {i}"}},
                }
            )
            for i in (1, 2)
        )
        stream.sink(calls, None)
        written = stream.written[before:]
        assert len(written) == 1  # both answers, in one write
        answers = [json.loads(line) for line in written[0].splitlines()]
        assert [a["id"] for a in answers] == [1, 2]
        assert [a["result"]["content"][0]["text"] for a in answers] == ["call 1", "call 2"]
