"""The anyio backend of the driver seam, for code that runs on either loop (the HTTP server).

The Streamable HTTP server is one implementation on anyio for asyncio and trio
alike; its per-socket loop is the one `Driver`, bound to this seam: anyio events
under `move_on_at`, a `CancelScope` whose deadline moves, an anyio task group.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc

from mcp_adapters._errors import ConnectionClosedError, TransportError
from mcp_adapters.backends._scoped import ScopeLimit, TaskTimer

#: anyio's own stream failures, as ours.
ERRORS: Mapping[type[BaseException], type[TransportError]] = {
    anyio.BrokenResourceError: ConnectionClosedError,
    anyio.ClosedResourceError: ConnectionClosedError,
}


class _TaskGroup:
    """An anyio task group: leaving waits for the tasks."""

    __slots__ = ("_group",)

    def __init__(self) -> None:
        self._group = anyio.create_task_group()

    def start_soon(self, fn: Callable[[], Awaitable[None]]) -> None:
        self._group.start_soon(fn)  # type: ignore[arg-type]

    def cancel(self) -> None:
        self._group.cancel_scope.cancel()

    async def __aenter__(self) -> _TaskGroup:
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._group.__aexit__(*exc_info)


class AnyioBackend:
    """The seam on anyio (stateless: one instance serves every run)."""

    errors = ERRORS

    def now(self) -> float:
        return anyio.current_time()

    def event(self) -> anyio.Event:
        return anyio.Event()

    async def wait(self, event: Any, deadline: float | None) -> None:
        with anyio.move_on_at(math.inf if deadline is None else deadline):
            await event.wait()

    def limit(self) -> ScopeLimit:
        return ScopeLimit(anyio.CancelScope())

    def task_group(self) -> _TaskGroup:
        return _TaskGroup()

    def timer(self, fire: Callable[[float], None]) -> TaskTimer:
        return TaskTimer(
            fire, event=anyio.Event, move_on_at=anyio.move_on_at, clock=anyio.current_time
        )

    async def close_stream(self, stream: Any, *, abort: bool) -> None:
        with anyio.CancelScope(shield=True):
            # Closing a broken connection: nothing is left to lose.
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await stream.aclose()


BACKEND = AnyioBackend()


__all__ = ["BACKEND", "ERRORS", "AnyioBackend"]
