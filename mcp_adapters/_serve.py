"""Glue between `MCPServer` and the sessions of a backend.

An `MCPServer` answers requests through a `RequestScope`; a backend `Session`
(asyncio or trio, chosen by the running loop) supplies the three things a
scope needs: a way to ask the client and wait, a way to say "output is
queued", and a wall clock for sealed state. Everything here is a few lines on
purpose: protocol decisions live in the core and in the server.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from mcp_adapters._session import ANSWERED
from mcp_core import RequestReceived, ServerConnection

if TYPE_CHECKING:
    from mcp_adapters.server import MCPServer

RequestId = int | str


class SessionScope:
    """A `RequestScope` over a backend session."""

    __slots__ = ("connection", "session")

    def __init__(self, session: Any) -> None:
        self.session = session
        self.connection: ServerConnection = session.connection

    async def ask(self, method: str, params: dict[str, Any], related: RequestId) -> Any:
        return await self.session.request(method, params, related_request_id=related)

    def wake(self) -> None:
        self.session.wake()

    def wall_time(self) -> float:
        return time.time()


class ServerHandler:
    """The `on_request` a backend session calls for each request from the client.

    The server answers on the connection itself (result, InputRequiredResult
    or error), so the session has nothing left to send: `ANSWERED`. `now` is
    the fast path a session tries first: requests that cannot suspend are
    answered where they arrive, with no task (see `MCPServer.handle_now`).
    """

    __slots__ = ("server",)

    def __init__(self, server: MCPServer) -> None:
        self.server = server

    async def __call__(self, session: Any, request: RequestReceived) -> object:
        await self.server.handle(request, SessionScope(session))
        return ANSWERED

    def now(self, session: Any, request: RequestReceived) -> Callable[[], Awaitable[None]] | None:
        return self.server.handle_now(request, SessionScope(session))

    def attach(self, session: Any) -> None:
        """A new session: the server must know it before its first request, so a
        change announced right after `initialize` reaches it."""
        self.server._attach(SessionScope(session))


def request_handler(server: MCPServer) -> ServerHandler:
    return ServerHandler(server)


def run_server(
    server: MCPServer,
    transport: str,
    *,
    host: str,
    port: int,
    path: str,
    backend: str,
) -> None:
    """Blocking entry point behind `MCPServer.run` and the command line."""

    async def main() -> None:
        from mcp_adapters import current_backend

        module = current_backend()
        if transport == "stdio":
            await module.serve_stdio(request_handler(server), server.config)
        elif transport == "tcp":
            await module.serve_tcp(request_handler(server), server.config, host, port)
        elif transport in ("http", "streamable-http"):
            from mcp_adapters.http import serve_http

            await serve_http(server, host=host, port=port, path=path)
        elif transport in ("ws", "websocket"):
            from mcp_adapters.websocket import serve_websocket

            await serve_websocket(server, host=host, port=port, path=path)
        else:
            raise ValueError(f"unknown transport {transport!r}")

    anyio.run(main, backend=backend)
