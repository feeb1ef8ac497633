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

A backend a `Session` runs on (asyncio, trio) supplies a little more, the
`SessionBackend`: a waiter for one outcome, the session's tasks, how to wait
through cancellation, and the transports' openers (pipes, TCP, listening) and
sleeps. With those, the session (`_session_base`) and the stdio and TCP
transports (`transports.stdio`, `transports.tcp`) are written once.
"""

from __future__ import annotations

import importlib
import ssl
from collections.abc import Awaitable, Callable, Coroutine, Mapping
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
    """Calls back at a deadline, without a task of the caller's: `arm(None)` disarms.

    A timer that needs no task at all (asyncio's `call_at`) may also offer
    `when_closed(callback)`: `callback()` on a later loop turn after `close()`. An
    in-process link session then runs with no main task (`LinkDriver.end_without_task`),
    and its `Tasks` must offer `end_without_main(then)` (see `backends.asyncio._Tasks`).
    """

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


class Waiter(Protocol):
    """The one outcome of a request: set once (later settings are ignored), awaited once.

    `early` is that outcome as (True, result) or (False, exception) when it was set
    before `wait()` and the backend's wait would not suspend for it anyway (asyncio,
    where awaiting a done future is no checkpoint): the caller may take it there
    instead of waiting. None otherwise, always on trio, whose wait is a checkpoint.
    """

    early: tuple[bool, Any] | None

    def set_result(self, value: Any) -> None: ...

    def set_exception(self, exc: BaseException) -> None: ...

    def wait(self) -> Awaitable[Any]: ...


class Cancellable(Protocol):
    """A task as its starter holds it: cancellable, nothing more."""

    def cancel(self) -> object: ...


class Tasks(Protocol):
    """A session's tasks: its main task (the driver) and the handlers beside it.

    Entered when the session is, left when it is: leaving waits for whatever
    still runs. `stop()` is the main task's last step: the others are cancelled
    (on asyncio also awaited; trio's nursery awaits them on leaving).
    """

    def start_main(self, fn: Callable[[], Awaitable[None]]) -> None: ...

    def start(self, fn: Callable[..., Awaitable[None]], *args: Any) -> Cancellable: ...

    def start_eager(self, coro: Coroutine[Any, Any, None], name: str) -> Cancellable | None:
        """`start` of the coroutine `coro` (the caller made it: a method call of its own,
        not a bound method and an argument tuple passed here to be called), with the
        task's first step taken now where the loop allows it (asyncio; trio starts it as
        `start` does); None when that step ended it. `name` names the task (on asyncio;
        trio names its tasks after their function): a string the caller made once, not
        one read off a function per task."""
        ...

    async def stop(self) -> None: ...

    async def join_main(self) -> None:
        """Wait for the main task to end, even when the waiter is cancelled meanwhile."""
        ...

    async def __aenter__(self) -> Tasks: ...

    async def __aexit__(self, *exc_info: Any) -> bool | None: ...


class Listener(Protocol):
    """Listening TCP: each accepted connection's stream is served in a task of its own.

    Leaving the block stops accepting and ends the connections' tasks (they are
    expected to have been closed by then).
    """

    #: The bound (host, port).
    address: tuple[str, int]

    def stop_accepting(self) -> None: ...

    async def __aenter__(self) -> Listener: ...

    async def __aexit__(self, *exc_info: Any) -> bool | None: ...


class SessionBackend(Backend, Protocol):
    """What a `Session` and the stdio and TCP transports need beyond the loop's seam."""

    #: The exception a cancelled task sees (asyncio.CancelledError, trio.Cancelled).
    cancelled: type[BaseException]

    def waiter(self) -> Waiter: ...

    def tasks(self) -> Tasks: ...

    async def shielded(self, fn: Callable[[], Awaitable[None]]) -> None:
        """Run `fn()` to its end even if the caller is cancelled meanwhile (then re-raise)."""
        ...

    async def sleep(self, seconds: float) -> None: ...

    async def wait_readable(self, fd: int, timeout: float) -> None:
        """Until `fd` is readable or `timeout` seconds passed."""
        ...

    async def open_pipe_stream(self, read_fd: int, write_fd: int) -> ByteStream: ...

    async def open_tcp_stream(
        self, host: str, port: int, *, ssl_context: ssl.SSLContext | None = None
    ) -> ByteStream:
        """A TCP connection (TLS on it with `ssl_context`, checked against `host`)."""
        ...

    def listen_tcp(
        self, host: str, port: int, handle: Callable[[Any], Awaitable[None]]
    ) -> Listener: ...


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
    "Cancellable",
    "Event",
    "Limit",
    "Listener",
    "SessionBackend",
    "TaskGroup",
    "Tasks",
    "Timer",
    "Waiter",
    "current_backend",
]
