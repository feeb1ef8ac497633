"""The seam between the one driver loop and a concrete loop: streams, waking, timers, tasks.

`mcp_adapters._driver.Driver` (the async loop) and `mcp_adapters.transports.link.LinkDriver`
(the in-process link) are written once against these few interfaces, in the manner
of httpcore's network backends; `backends.asyncio` and `backends.trio` implement
them. `backends.blocking` is the selectors twin: it has no event loop to offer, so
it steps the same sans-IO `DriverCore` itself (`pump` / `poll`) instead.

What a backend supplies, and nothing more:

- `ByteStream`: `receive_some` / `send_all` / `aclose`, plus two optional fast
  paths the loop looks for (`write_nowait`: hand bytes over without waiting when
  the transport can take them at once; `abort`: drop what is still buffered);
- `Backend`: its clock (`now`), one-shot events with a bounded wait (`event`,
  `wait`), a movable bound on a block of awaits (`limit`: the close timeout), a
  task group (`task_group`), a deadline timer that fires a callback (`timer`:
  the in-process link), how a stream is closed after the loop (`close_stream`),
  and the backend's own I/O exception types (`errors`).

The transports' openers (`open_tcp_stream`, `open_pipe_stream`, listening) live
beside each backend's stream type in its module.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any, Protocol

from mcp_adapters._errors import TransportError


class ByteStream(Protocol):
    """The byte stream the async loop reads and writes (trio's `Stream` fits as is)."""

    async def receive_some(self, max_bytes: int) -> Any: ...

    async def send_all(self, data: bytes) -> None: ...

    async def aclose(self) -> None: ...


class Event(Protocol):
    """A one-shot event: `set()` once, any number of waiters."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...

    async def wait(self) -> None: ...


class Limit(Protocol):
    """A bound on a block of awaits whose deadline may move while they run."""

    expired: bool

    def move_to(self, deadline: float) -> None: ...

    async def __aenter__(self) -> Limit: ...

    async def __aexit__(self, *exc_info: Any) -> bool | None: ...


class TaskGroup(Protocol):
    """Tasks that end with the block: leaving waits for them; `cancel()` stops them."""

    def start_soon(self, fn: Callable[[], Awaitable[None]]) -> None: ...

    def cancel(self) -> None: ...

    async def __aenter__(self) -> TaskGroup: ...

    async def __aexit__(self, *exc_info: Any) -> bool | None: ...


class Timer(Protocol):
    """Calls back at a deadline, without a task of the caller's: `arm(None)` disarms."""

    def arm(self, deadline: float | None) -> None: ...

    def close(self) -> None: ...

    async def serve(self) -> None:
        """Keep the timer running until `close()` (a no-op wait where callbacks need no task)."""
        ...


class Backend(Protocol):
    """What the one async loop needs from a concrete event loop."""

    #: The backend's own stream exceptions, mapped to ours (see `to_transport_error`).
    errors: Mapping[type[BaseException], type[TransportError]]

    def now(self) -> float: ...

    def event(self) -> Event: ...

    async def wait(self, event: Event, deadline: float | None) -> None:
        """Until `event` is set or the loop's clock reaches `deadline` (None: no bound)."""
        ...

    def limit(self) -> Limit: ...

    def task_group(self) -> TaskGroup: ...

    def timer(self, fire: Callable[[float], None]) -> Timer: ...

    async def close_stream(self, stream: Any, *, abort: bool) -> None:
        """Close `stream` after the loop, at once when `abort` (it will never be read)."""
        ...


def current_backend() -> ModuleType:
    """`mcp_adapters.asyncio` or `mcp_adapters.trio`, whichever loop is running now."""
    import sniffio

    library = sniffio.current_async_library()
    if library not in ("asyncio", "trio"):
        raise RuntimeError(f"no mcp_adapters backend for {library!r}")
    return importlib.import_module(f"mcp_adapters.{library}")


__all__ = [
    "Backend",
    "ByteStream",
    "Event",
    "Limit",
    "TaskGroup",
    "Timer",
    "current_backend",
]
