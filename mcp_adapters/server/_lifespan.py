"""The server's lifespan: one async context manager around everything that serves it.

`MCPServer(..., lifespan=fn)` takes what the official SDK takes: `fn(server)`
returns an async context manager; what it yields is the *lifespan context*,
which handlers read as `ctx.request_context.lifespan_context`. Without one the
context is `{}`, as there.

It is entered once however many things serve the server at the same time
(`run_*_async`, `python -m mcp_adapters run`, `serve_http`, `serve_websocket`,
`Client(mcp)` in process): the first to start enters it, and that same task
leaves it, after every later one has left too. Leaving in the task that
entered is what trio's cancel scopes and nurseries inside a lifespan need;
the price is that the first server waits for the others before it ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import anyio

    from mcp_adapters.server import MCPServer, ServerSessionView
    from mcp_core import InputReceived, RequestReceived

T = TypeVar("T")
LifespanFactory = Callable[[Any], contextlib.AbstractAsyncContextManager[Any]]


class Lifespan:
    """Enters the factory's context once for all concurrent users; see the module docstring."""

    def __init__(self, server: MCPServer, factory: LifespanFactory | None) -> None:
        self._server = server
        self._factory = factory
        self._users = 0
        self._value: Any = {}
        self._started: anyio.Event | None = None  # set once entered (or failed to)
        self._failed: BaseException | None = None
        self._left: anyio.Event | None = None  # set when the last user leaves

    @property
    def needs_entering(self) -> bool:
        """Whether `running()` enters anything: only a factory has a context to enter
        and users to count."""
        return self._factory is not None

    @property
    def value(self) -> Any:
        """The lifespan context, for a handler."""
        started = self._started
        if self._factory is not None and (
            self._users == 0 or started is None or not started.is_set() or self._failed
        ):
            raise RuntimeError(
                "the lifespan runs only while the server is served (MCPServer.run, "
                "run_*_async, python -m mcp_adapters run, serve_http, serve_websocket, "
                "Client(mcp)); around your own transport, use `async with mcp.running():`"
            )
        return self._value

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Any]:
        """Serve inside the lifespan: enter it if nothing else has."""
        if self._factory is None:
            yield self._value
            return
        if self._users > 0:
            async with self._joined() as value:
                yield value
            return
        import anyio  # on first use: importing MCPServer stays cheap

        # The first user enters the lifespan, and leaves it last. Its own state is
        # kept in locals: once it has left, a new first user may start another.
        self._users = 1
        started = self._started = anyio.Event()
        left = self._left = anyio.Event()
        self._failed = None
        manager = self._factory(self._server)
        try:
            self._value = await manager.__aenter__()
        except BaseException as exc:
            self._failed = exc
            started.set()
            self._leave()
            raise
        started.set()
        exc_info: tuple[Any, Any, Any] = (None, None, None)
        try:
            yield self._value
        except BaseException as exc:
            exc_info = (type(exc), exc, exc.__traceback__)
            raise
        finally:
            self._leave()
            with anyio.CancelScope(shield=True):
                await left.wait()
            await manager.__aexit__(*exc_info)

    @contextlib.asynccontextmanager
    async def _joined(self) -> AsyncIterator[Any]:
        self._users += 1
        try:
            started = self._started
            assert started is not None
            await started.wait()
            if self._failed is not None:
                raise RuntimeError("the server's lifespan failed to start") from self._failed
            yield self._value
        finally:
            self._leave()

    def _leave(self) -> None:
        self._users -= 1
        if self._users == 0 and self._left is not None:
            self._left.set()


@dataclass(frozen=True, slots=True)
class RequestContext(Generic[T]):
    """`ctx.request_context`, named as the official SDK names it.

    `lifespan_context` is what the server's lifespan yielded (`{}` without one);
    `session` is `ctx.session`; `request` is the engine's event the handler runs
    for: the `RequestReceived`, or the `InputReceived` that brings the answers to
    its questions.
    """

    request_id: int | str
    meta: dict[str, Any] | None
    session: ServerSessionView
    lifespan_context: T
    request: RequestReceived | InputReceived


__all__ = ["Lifespan", "LifespanFactory", "RequestContext"]
