"""The trio backend of the driver seam: trio streams, events, cancel scopes, nurseries.

trio streams fit `ByteStream` as they are; what this adds is how the loop waits
(`trio.Event` under `move_on_at`), its close-timeout bound (a `CancelScope` whose
deadline moves), its tasks (a nursery), and the link's timer (a task sleeping to
the armed deadline: trio has no callbacks without a task).
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import trio

from mcp_adapters._errors import ConnectionClosedError, TransportError

#: trio's own stream failures, as ours.
ERRORS: Mapping[type[BaseException], type[TransportError]] = {
    trio.BrokenResourceError: ConnectionClosedError,
    trio.ClosedResourceError: ConnectionClosedError,
}


# =========================================================================== streams


def open_pipe_stream(read_fd: int, write_fd: int) -> trio.StapledStream[Any, Any]:
    """A stream over two pipe (or socket, or terminal) descriptors; it owns and closes them."""
    try:
        receive = trio.lowlevel.FdStream(read_fd)
    except BaseException:
        os.close(read_fd)
        os.close(write_fd)
        raise
    return trio.StapledStream(trio.lowlevel.FdStream(write_fd), receive)


async def open_tcp_stream(host: str, port: int) -> trio.SocketStream:
    """A TCP connection as a stream (trio sets TCP_NODELAY itself)."""
    stream = await trio.open_tcp_stream(host, port)
    stream.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    return stream


# =========================================================================== the seam


class _Limit:
    """A `trio.CancelScope` entered as an async block; expiry is reported, not raised."""

    __slots__ = ("_scope", "expired")

    def __init__(self) -> None:
        self.expired = False
        self._scope = trio.CancelScope()

    def move_to(self, deadline: float) -> None:
        self._scope.deadline = deadline

    async def __aenter__(self) -> _Limit:
        self._scope.__enter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        suppressed = self._scope.__exit__(*exc_info)
        self.expired = self._scope.cancelled_caught
        return suppressed


class _TaskGroup:
    """A nursery: leaving waits for the tasks, a failure propagates as trio's does."""

    __slots__ = ("_manager", "_nursery")

    def __init__(self) -> None:
        self._manager = trio.open_nursery()
        self._nursery: trio.Nursery | None = None

    def start_soon(self, fn: Callable[[], Awaitable[None]]) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(fn)

    def cancel(self) -> None:
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()

    async def __aenter__(self) -> _TaskGroup:
        self._nursery = await self._manager.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._manager.__aexit__(*exc_info)


class _Timer:
    """A deadline callback served by a task (`serve()`) that sleeps until the armed time."""

    __slots__ = ("_changed", "_closed", "_deadline", "_fire")

    def __init__(self, fire: Callable[[float], None]) -> None:
        self._fire = fire
        self._deadline: float | None = None
        self._closed = False
        self._changed = trio.Event()

    def arm(self, deadline: float | None) -> None:
        self._deadline = deadline
        self._changed.set()

    def close(self) -> None:
        self._closed = True
        self._changed.set()

    async def serve(self) -> None:
        while not self._closed:
            self._changed = trio.Event()
            deadline = self._deadline
            with trio.move_on_at(math.inf if deadline is None else deadline) as scope:
                await self._changed.wait()
            if scope.cancelled_caught:
                self._deadline = None
                self._fire(trio.current_time())


class TrioBackend:
    """The seam on trio (stateless: one instance serves every run)."""

    errors = ERRORS

    def now(self) -> float:
        return trio.current_time()

    def event(self) -> trio.Event:
        return trio.Event()

    async def wait(self, event: Any, deadline: float | None) -> None:
        with trio.move_on_at(math.inf if deadline is None else deadline):
            await event.wait()

    def limit(self) -> _Limit:
        return _Limit()

    def task_group(self) -> _TaskGroup:
        return _TaskGroup()

    def timer(self, fire: Callable[[float], None]) -> _Timer:
        return _Timer(fire)

    async def close_stream(self, stream: Any, *, abort: bool) -> None:
        # trio closes forcefully either way: what a stream still buffers is the kernel's.
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)


BACKEND = TrioBackend()


__all__ = ["BACKEND", "ERRORS", "TrioBackend", "open_pipe_stream", "open_tcp_stream"]
