"""A request's waiter on each backend: one outcome, and `early` only where waiting would not
suspend anyway.

asyncio's waiter makes its future on the first `wait()`; an outcome set before it (an
in-process call of a plain tool is answered inside the wake that sent it) is kept in
`early`, which `Session.request` returns or raises without a future. trio's wait is a
checkpoint even with the outcome in, so its `early` is always None.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from mcp_adapters import Client
from mcp_adapters.asyncio import Session as AsyncioSession
from mcp_adapters.server import MCPServer
from mcp_adapters.trio import Session as TrioSession
from mcp_core import MCPError


def test_asyncio_an_outcome_set_before_waiting_is_early_and_the_first_one_wins() -> None:
    async def main() -> None:
        waiter = AsyncioSession.loop_backend().waiter()
        assert waiter.early is None
        waiter.set_result("first")
        waiter.set_result("second")
        waiter.set_exception(RuntimeError("late"))
        assert waiter.early == (True, "first")
        # Who waits anyway (the handshake, the HTTP client) gets the same outcome.
        assert await waiter.wait() == "first"

        failing = AsyncioSession.loop_backend().waiter()
        error = RuntimeError("refused")
        failing.set_exception(error)
        failing.set_result("ignored")
        assert failing.early == (False, error)
        with pytest.raises(RuntimeError) as raised:
            await failing.wait()
        assert raised.value is error

    asyncio.run(main())


def test_asyncio_an_outcome_set_while_waiting_goes_to_the_future_not_early() -> None:
    async def main() -> None:
        waiter: Any = AsyncioSession.loop_backend().waiter()
        future = waiter.wait()
        assert not future.done()
        waiter.set_result(42)
        assert waiter.early is None
        assert await future == 42

        abandoned: Any = AsyncioSession.loop_backend().waiter()
        abandoned.wait().cancel()  # the caller stopped waiting
        abandoned.set_result("too late")  # ignored, not an InvalidStateError
        assert abandoned.early is None

    asyncio.run(main())


def test_trio_never_has_an_early_outcome_and_waiting_still_checkpoints() -> None:
    async def main() -> None:
        waiter = TrioSession.loop_backend().waiter()
        waiter.set_result("in already")
        assert waiter.early is None
        with anyio.CancelScope() as scope:
            scope.cancel()
            await waiter.wait()  # a checkpoint: the cancelled scope stops it here
            pytest.fail("waiting for an outcome already in did not checkpoint")
        assert scope.cancelled_caught
        assert await waiter.wait() == "in already"

    anyio.run(main, backend="trio")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_in_process_results_and_errors_answered_in_the_wake(backend: str, mode: str) -> None:
    """In process a plain tool's answer (and the server's error for an unknown tool) is in
    before the caller waits: on asyncio it comes back through `early`, on trio through
    the event, with the same result and the same error either way."""
    server = MCPServer("early")

    @server.tool()
    def double(n: int) -> int:
        return 2 * n

    async def main() -> None:
        async with Client(server, mode=mode) as client:
            result = await client.call_tool("double", {"n": 21})
            assert result.structured_content == {"result": 42}
            with pytest.raises(MCPError) as raised:
                await client.call_tool("missing", {})
            assert "missing" in str(raised.value)
            bad = await client.call_tool("double", {"n": "many"})
            assert bad.is_error

    anyio.run(main, backend=backend)
