"""The asyncio backend's request waiter: its future, made by the waiter itself on asyncio's
own loop and by the loop's `create_future` on any other, and what settling it does."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_adapters.backends import asyncio as asyncio_backend


def test_a_waiter_on_asyncios_loop_holds_a_plain_future_of_that_loop() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        waiter = asyncio_backend.AsyncioBackend(loop).waiter()
        future = waiter.wait()  # the first wait makes the future
        assert type(future) is asyncio.Future and waiter.future is future
        assert future.get_loop() is loop
        assert not waiter.done()
        waiter.set_result(1)
        waiter.set_result(2)  # settled once: later outcomes are dropped
        waiter.set_exception(RuntimeError("late"))
        assert waiter.done() and await waiter.wait() == 1

    asyncio.run(main())


def test_a_loop_with_its_own_create_future_makes_the_waiters_future() -> None:
    made: list[Any] = []

    class OwnFutures(asyncio.SelectorEventLoop):
        def create_future(self) -> asyncio.Future[Any]:
            future = super().create_future()
            made.append(future)
            return future

    async def main() -> None:
        loop = asyncio.get_running_loop()
        waiter = asyncio_backend.AsyncioBackend(loop).waiter()
        assert made == []  # no future until someone waits
        future = waiter.wait()
        assert made == [future]
        waiter.set_exception(ValueError("no"))
        try:
            await waiter.wait()
        except ValueError:
            pass
        else:  # pragma: no cover
            raise AssertionError("the waiter's exception was not raised")

    loop = OwnFutures()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()

    async def patched() -> None:
        # `create_future` set on the loop instance (instrumentation): used too.
        loop = asyncio.get_running_loop()
        seen: list[Any] = []

        def create_future() -> asyncio.Future[Any]:
            seen.append(asyncio.Future(loop=loop))
            return seen[-1]

        loop.create_future = create_future  # type: ignore[method-assign]
        try:
            waiter = asyncio_backend.AsyncioBackend(loop).waiter()
            future = waiter.wait()
        finally:
            del loop.create_future
        assert seen == [future]

    asyncio.run(patched())
