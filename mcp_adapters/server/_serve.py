"""Glue between `MCPServer` and the sessions of a backend.

An `MCPServer` answers requests through a `RequestScope`; a backend `Session`
(asyncio or trio, chosen by the running loop) supplies the three things a
scope needs: a way to ask the client and wait, a way to say "output is
queued", and a wall clock for sealed state. Everything here is a few lines on
purpose: protocol decisions live in the core and in the server.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from mcp_adapters._session import ANSWERED
from mcp_adapters.backends._scoped import EventWaiter
from mcp_core import INTERNAL_ERROR, InputReceived, MCPError, RequestReceived, ServerConnection

if TYPE_CHECKING:
    from mcp_adapters.server import MCPServer

RequestId = int | str


class Waiter(EventWaiter):
    """One outcome (a result or an exception) handed from a dispatch to an awaiting task.

    An anyio event so the same waiter works under asyncio and trio: the server code above it
    is written once, whichever loop runs it.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(anyio.Event())


async def ask_in_place(
    owner: Any,
    connection: ServerConnection,
    request_id: RequestId,
    questions: Any,
    wake: Callable[[], None],
) -> InputReceived:
    """Ask for a still-open legacy request (`request_input`) and wait for the answers.

    `owner` (a `SessionCore`, or a session passing to one) hands the round's
    `InputReceived` to the waiter registered here, or fails it when the
    connection ends; a cancelled wait leaves nothing registered.
    """
    # The waiter is registered before the questions go out: the answers may arrive (and be
    # dispatched) before this task resumes, and must find someone to hand them to.
    waiter = Waiter()
    owner.expect_input(request_id, waiter)
    try:
        # False means the request ended before it could ask (the client cancelled, the
        # connection closed): there is nobody to wait for, so the handler's ask fails now.
        if not connection.request_input(request_id, questions):
            raise MCPError(INTERNAL_ERROR, "the request ended while asking")
        # The questions are only queued: the wake makes the session's writer send them
        # before this task blocks on the answers.
        wake()
        event: InputReceived = await waiter.wait()
        return event
    finally:
        # Always forgotten, also on cancellation: a later round (or another request reusing
        # the session) must not find a stale waiter and hand its answers to a dead task.
        owner.forget_input(request_id)


class SessionScope:
    """A `RequestScope` over a backend session.

    A scope per request, cheap to build: the session is the state, the scope only the view
    of it that `MCPServer` is allowed to use.
    """

    __slots__ = ("connection", "session")

    def __init__(self, session: Any) -> None:
        self.session = session
        self.connection: ServerConnection = session.connection

    async def ask(self, request_id: RequestId, questions: Any) -> InputReceived:
        """Legacy sessions ask in place (server-to-client requests, the handler waits); a
        2026-07-28 request never gets here, since `request_input` answers it at once with an
        `InputRequiredResult` and the retry is a new request.
        """
        return await ask_in_place(
            self.session, self.connection, request_id, questions, self.session.wake
        )

    def wake(self) -> None:
        """Output queued from a handler task is not written until the session's writer runs;
        waking it is how an answer given outside event handling reaches the wire.
        """
        self.session.wake()

    def wall_time(self) -> float:
        """The wall clock, not the loop's: sealed `requestState` expiry is judged in epoch
        seconds so that another process can judge it alike (the core takes it as
        `wall_time=`).
        """
        return time.time()


class ServerHandler:
    """The `on_request` a backend session calls for each request from the client.

    The server answers on the connection itself (result, InputRequiredResult
    or error), so the session has nothing left to send: `ANSWERED`. `now` is
    the fast path a session tries first: requests that cannot suspend are
    answered where they arrive, with no task (see `MCPServer.handle_now`).
    """

    __slots__ = ("now", "server")

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        # Bound once: a session keeps its handler's `now`, and a method looked up per
        # session was a bound method object (64 bytes) of each. A session calls
        # `now(request, session, handler.scope_of)`: `server.handle_now` itself, which
        # makes the session's `SessionScope` only when the request needs one (a plain
        # tool without a `Context` does not). (A `functools.partial` binding `scope_of`
        # by keyword cost a dict copy and a keyword call per request: about 0.8 us.)
        self.now: Callable[..., Callable[[], Awaitable[None]] | None] = server.handle_now

    #: How `now` makes a request's scope from a session (see `MCPServer.handle_now`).
    scope_of = SessionScope

    async def __call__(self, session: Any, request: RequestReceived) -> object:
        await self.server.handle(request, SessionScope(session))
        return ANSWERED

    def attach(self, session: Any) -> None:
        """A legacy session whose `initialize` was just accepted: the server must know it
        before its next request, so a change announced right after `initialize` reaches
        it. (A 2026-07-28 session is attached by its `subscriptions/listen` request.)"""
        self.server.attach(SessionScope(session))


def request_handler(server: MCPServer) -> ServerHandler:
    """One handler per server, shared by every session of every transport, so the server's
    behaviour cannot differ between stdio, TCP, HTTP and WebSocket.
    """
    return server.session_handler()


async def serve_stdio(server: MCPServer) -> None:
    """Serve `server` on this process's stdin/stdout, inside its lifespan."""
    from mcp_adapters.backends import current_backend

    # Inside the lifespan: the server's startup (and its shutdown hooks) wrap the whole time
    # it serves, as an ASGI lifespan does.
    async with server.running():
        await current_backend().serve_stdio(request_handler(server), server.config)


async def serve_tcp(server: MCPServer, host: str, port: int) -> None:
    """Serve `server` at tcp://host:port until cancelled, inside its lifespan.

    Refused for a server with `auth=`: a raw TCP stream has nowhere to carry a
    bearer token, so serving it would serve the tools to anyone, unauthenticated."""
    from mcp_adapters.backends import current_backend

    if server.auth is not None:
        raise ValueError(
            "this server checks OAuth access tokens (auth=): serve it over http or "
            "websocket; the tcp transport cannot carry a token"
        )

    async with server.running():
        await current_backend().serve_tcp(request_handler(server), server.config, host, port)


def run_server(
    server: MCPServer,
    transport: str,
    *,
    host: str,
    port: int,
    path: str,
    backend: str,
    http_limits: Any = None,
    ws_limits: Any = None,
    event_store: Any = None,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] = (),
    trusted_proxies: Sequence[str] = (),
) -> None:
    """Blocking entry point behind `MCPServer.run` and the command line."""

    async def main() -> None:
        if transport == "stdio":
            await server.run_stdio_async()
        elif transport == "tcp":
            await server.run_tcp_async(host=host, port=port)
        elif transport in ("http", "streamable-http"):
            http_options: dict[str, Any] = {"limits": http_limits}
            if event_store is not None:
                http_options["event_store"] = event_store
            # The loopback allow-list stays the default (DNS rebinding, RELIABILITY.md 1.1);
            # an explicit list replaces it for a public bind, and origins make sense only
            # with one.
            if allowed_hosts is not None:
                # Imported here: the HTTP stack is a third of `MCPServer`'s import, and
                # a server run over stdio never needs it.
                from mcp_core.http import HostPolicy

                http_options["host_policy"] = HostPolicy(
                    allowed_hosts=tuple(allowed_hosts), allowed_origins=tuple(allowed_origins)
                )
            elif allowed_origins:
                raise ValueError("allowed_origins needs allowed_hosts too")
            if trusted_proxies:
                http_options["trusted_proxies"] = tuple(trusted_proxies)
            await server.run_streamable_http_async(
                host=host, port=port, streamable_http_path=path, **http_options
            )
        elif transport in ("ws", "websocket"):
            await server.run_websocket_async(host=host, port=port, path=path, limits=ws_limits)
        else:
            raise ValueError(f"unknown transport {transport!r}")

    # anyio picks the loop by name, so the command line's `--backend` chooses asyncio or
    # trio without the server code knowing which.
    if backend == "trio" and threading.current_thread() is threading.main_thread():
        if anyio.run(_stopped_by_sigint, main, backend=backend):
            raise KeyboardInterrupt
    else:
        anyio.run(main, backend=backend)


async def _stopped_by_sigint(main: Callable[[], Awaitable[None]]) -> bool:
    """Run `main` until it returns or SIGINT arrives; True if SIGINT stopped it.

    Why: trio raises KeyboardInterrupt at whatever checkpoint the main thread is
    at, and one that lands while a connection's session is being entered or left
    inside a nursery corrupts trio's nursery stack (seen as "Nursery stack
    corrupted" and an exit status of 1 from `mcp_adapters run --backend trio`).
    Turned into a cancellation here, Ctrl-C stops every connection the way any
    cancel does, and the caller still gets its KeyboardInterrupt, raised outside
    the loop. asyncio's runner already cancels its main task on SIGINT.
    Only the first SIGINT is caught: the receiver closes with it, so a second
    one during a slow shutdown interrupts as usual.
    """
    interrupted = False

    async def watch(scope: anyio.CancelScope) -> None:
        nonlocal interrupted
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                interrupted = True
                break
        scope.cancel()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(watch, group.cancel_scope)
            await main()
            group.cancel_scope.cancel()
    except BaseExceptionGroup as group_error:
        # The task group wraps what `main` raised; the caller expects it bare.
        if len(group_error.exceptions) == 1:
            raise group_error.exceptions[0] from None
        raise
    return interrupted
