"""Streamable HTTP as an ASGI 3 application: mount an `MCPServer` in Starlette or FastAPI,
or run it under uvicorn, hypercorn or gunicorn's uvicorn workers.

    app = mcp.asgi_app()                 # uvicorn module:app
    starlette = Starlette(routes=[Mount("/tools", app=app)], lifespan=app.lifespan)

The ASGI server has already parsed HTTP, so h11 is not involved: each HTTP request
becomes an `HTTPExchange` of the sans-IO layer (`mcp_core.http`), the same request-level
code the socket binding runs under its h11 connections. Everything above that layer is
shared with `mcp_adapters.http` as well: handlers, legacy sessions and their
server-to-client requests, timers, shutdown (`_ASGIDispatch` is `HTTPServer` with ASGI
requests where sockets were).

Per request, two tasks: one reads (the body, then `http.disconnect`), one writes the
response as it comes (a JSON body, or an SSE stream). A client that goes away is an
`HTTPExchange.close()`, exactly what a dropped TCP connection is on the socket binding: a
2026-07-28 request is cancelled, a legacy stream stays resumable. Back-pressure: the
writer awaits each `send`, so a client that does not read stalls it, output piles up in
the exchange, and past `HTTPLimits.max_output_bytes` the stream is dropped.

Handlers outlive the request that started them (a legacy stream may be resumed on
another request), so they run in a task group that lives as long as the application:
the ASGI lifespan protocol starts and stops it when the app is the top-level one
(uvicorn, hypercorn), and `lifespan` (an async context manager, the shape Starlette's
`lifespan=` takes) does when it is mounted inside another app, whose framework does not
pass lifespan events on. Until then requests get 503.

Several processes (gunicorn's workers, replicas behind a balancer): with a store
(`MCPServer(store=...)`, or `MCP_STORE_URL`), the app serves a
`SharedSessionEndpoint` and runs a `ClusterBinding` beside it, exactly as
`http_server` does (mcp_adapters.cluster, docs/deploy.md), so a legacy session's
requests may land on any worker. Like `python -m mcp_adapters run`, the app takes
its deployment's configuration from the environment when it is set
(`MCP_REQUEST_STATE_KEYS(_FILE)`, `MCP_SERVER_IDENTITY`, `MCP_STORE_URL`,
`MCP_STORE_PREFIX`; `environment=False` turns that off): a worker has no command
line of its own.

Only anyio here, so any asyncio or trio ASGI server runs it; no framework is imported.
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import anyio

from mcp_adapters._driver import CLOSE_TIMEOUT
from mcp_adapters.cluster import cluster_endpoint, configure_store_from_environment
from mcp_adapters.request_state_keys import configure_from_environment
from mcp_adapters.transports.http_server import HTTPServer, tool_header_params_of
from mcp_core.http import (
    HTTPExchange,
    HTTPServerConnection,
    HTTPServerEndpoint,
    RequestHead,
)

if TYPE_CHECKING:
    from mcp_adapters.server import MCPServer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

logger = logging.getLogger("mcp_adapters.asgi")

_NOT_RUNNING = (
    b"MCP application not started: run it as the top-level ASGI app (lifespan on), or "
    b"enter app.lifespan() around the app that mounts it (Starlette: lifespan=app.lifespan)"
)
_SEND_ERRORS: tuple[type[BaseException], ...] = (OSError, anyio.BrokenResourceError)


class _Request:
    """One ASGI HTTP request in flight: its exchange and how to wake its writer."""

    __slots__ = ("event", "exchange", "send_scope", "woken")

    def __init__(self, exchange: HTTPExchange) -> None:
        self.exchange = exchange
        self.event = anyio.Event()
        self.woken = False
        self.send_scope: anyio.CancelScope | None = None

    def wake(self) -> None:
        self.woken = True
        self.event.set()
        if self.exchange.closed:
            self.abort()

    def abort(self) -> None:
        """Stop a `send` the client is not reading (the exchange dropped its stream)."""
        if self.send_scope is not None:
            self.send_scope.cancel()


class _ASGIDispatch(HTTPServer):
    """`HTTPServer`'s dispatch (handlers, sessions, timers, shutdown) serving ASGI
    requests instead of sockets: `pump()` names exchanges, whose writers it wakes."""

    def __init__(
        self, server: MCPServer, endpoint: HTTPServerEndpoint, close_timeout: float
    ) -> None:
        super().__init__(server, endpoint, host="", port=0, close_timeout=close_timeout)
        self.requests: dict[HTTPExchange, _Request] = {}
        self.idle = anyio.Event()  # set when the last request ends during shutdown

    def _wake_ready(self, ready: list[HTTPServerConnection | HTTPExchange]) -> None:
        dropped = []
        for item in ready:
            request = self.requests.get(item) if isinstance(item, HTTPExchange) else None
            if request is not None:
                request.wake()
                if item.closed:
                    dropped.append(item)
        if self.endpoint.deadline_moved:  # the endpoint timer re-arms only when it must
            self._rearm_timer()
        # An exchange dropped for not reading holds what that means (a 2026-07-28 call
        # cancelled) until its next tick. Its writer may be stuck in the server's `send`
        # for as long as the client does not read (hypercorn shields it from
        # cancellation), so settle it here rather than there.
        for exchange in dropped:
            self.handle_events(exchange.tick(anyio.current_time()))

    async def _shutdown(self) -> None:
        await super()._shutdown()  # ends every session and request: their writers wake
        if self.requests:
            with anyio.move_on_after(self._close_timeout + 0.5):
                await self.idle.wait()
            for request in list(self.requests.values()):
                request.abort()


class ASGIApp:
    """An `MCPServer` as an ASGI 3 application (see the module docstring).

    `path` is the endpoint's path relative to where the app is mounted (its
    `root_path`). `endpoint_options` go to `HTTPServerEndpoint`, as for `http_server`:
    `host_policy` (default: the loopback allow-list on any port; pass your own for a
    public name), `trusted_proxies`, `limits`, `response_mode`, `event_store` ...

    `environment` (default True): the key ring, identity and store of the
    environment variables replace the server's own when they are set, now (a bad
    ring fails here, when the module making the app is imported).
    """

    def __init__(
        self,
        server: MCPServer,
        *,
        path: str = "/mcp",
        close_timeout: float = CLOSE_TIMEOUT,
        environment: bool = True,
        **endpoint_options: Any,
    ) -> None:
        if environment:
            # The deployment decides, as for the command line (mcp_adapters.__main__).
            configure_from_environment(server)
            configure_store_from_environment(server)
        self.server = server
        self.path = path
        self._close_timeout = close_timeout
        options = dict(endpoint_options)
        options.setdefault("new_session_id", lambda: secrets.token_urlsafe(24))
        options.setdefault("tool_header_params", tool_header_params_of(server))
        if server.auth is not None and "auth" not in options:
            options["auth"] = server.auth.guard(server)  # resource= is required here
        self._options = options
        # Built now to refuse bad options at once; rebuilt at startup, when the server's
        # tools (hence its capabilities) are all registered.
        HTTPServerEndpoint(server.config, path=path, **options)
        self._dispatch: _ASGIDispatch | None = None

    # ----------------------------------------------------------------- public

    @property
    def endpoint(self) -> HTTPServerEndpoint:
        """The running sans-IO endpoint (sessions, `close_session` ...); call `wake()`
        after using it directly."""
        return self._running().endpoint

    @property
    def running(self) -> bool:
        return self._dispatch is not None and not self._dispatch.closing

    @property
    def running_handlers(self) -> int:
        return 0 if self._dispatch is None else self._dispatch.running_handlers

    def wake(self) -> None:
        """Route what every MCP connection queued and wake the responses concerned."""
        self._running().wake()

    def notify_subscribers(self, method: str, params: Any = None) -> int:
        """As `HTTPServer.notify_subscribers`: list changes and resource updates to the
        clients that asked."""
        return self._running().notify_subscribers(method, params)

    @contextlib.asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """Run the app's task group and timers while the block runs; leaving it ends
        every session and request. `app` is ignored: it lets a framework's
        `lifespan=app.lifespan` call this with its own application."""
        if self._dispatch is not None:
            raise RuntimeError("this MCP application is already running")
        # With a store, the endpoint parks what needs it and the binding (started
        # by `serving`) does that I/O: the same pair as `http_server`'s.
        shared = cluster_endpoint(self.server, path=self.path, **self._options)
        endpoint = (
            shared[0]
            if shared
            else HTTPServerEndpoint(self.server.config, path=self.path, **self._options)
        )
        dispatch = _ASGIDispatch(self.server, endpoint, self._close_timeout)
        dispatch.cluster = shared[1] if shared else None
        try:
            async with dispatch.serving():  # what the block raises is re-raised as is
                self._dispatch = dispatch
                logger.info("MCP application started (endpoint %s)", self.path)
                yield
        finally:
            self._dispatch = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await receive()  # websocket.connect; closing before accepting refuses it (403)
            await send({"type": "websocket.close", "code": 1000})
        else:
            raise ValueError(f"unsupported ASGI scope type {kind!r}")

    # --------------------------------------------------------------- lifespan

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        started = False
        try:
            async with self.lifespan():
                started = True
                await send({"type": "lifespan.startup.complete"})
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
        except Exception as exc:
            logger.exception("MCP application %s failed", "shutdown" if started else "startup")
            kind = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": kind, "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})

    # ------------------------------------------------------------------- HTTP

    def _running(self) -> _ASGIDispatch:
        if self._dispatch is None:
            raise RuntimeError("the MCP application is not running (see ASGIApp.lifespan)")
        return self._dispatch

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        dispatch = self._dispatch
        if dispatch is None or dispatch.closing:
            await _plain(send, 503, _NOT_RUNNING if dispatch is None else b"Shutting down")
            return
        exchange = dispatch.endpoint.new_exchange()
        request = _Request(exchange)
        dispatch.requests[exchange] = request
        try:
            dispatch.handle_events(exchange.receive_head(_head(scope), now=anyio.current_time()))
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._read, dispatch, request, receive)
                await self._write(dispatch, request, send, scope.get("http_version", "1.1"))
                tg.cancel_scope.cancel()
        finally:
            del dispatch.requests[exchange]
            try:
                # What rode on the request: a 2026-07-28 call still running is cancelled.
                now = anyio.current_time()
                dispatch.handle_events(exchange.tick(now) + exchange.close("client went away"))
            except Exception:
                logger.exception("settling a finished ASGI request failed")
            if dispatch.closing and not dispatch.requests:
                dispatch.idle.set()

    async def _read(self, dispatch: _ASGIDispatch, request: _Request, receive: Receive) -> None:
        """The body, then `http.disconnect` (which may come at any time)."""
        exchange = request.exchange
        more = exchange.wants_body
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return self._gone(dispatch, request)
            if message["type"] != "http.request":
                continue
            more = bool(message.get("more_body", False))
            body = message.get("body", b"")
            if body:
                dispatch.handle_events(exchange.receive_body(body, now=anyio.current_time()))
            more = more and exchange.wants_body  # refused meanwhile: leave the rest unread
        now, wall = anyio.current_time(), time.time()
        dispatch.handle_events(exchange.receive_end(now=now, wall_time=wall))
        request.wake()
        if exchange.finished:
            return  # nothing left to lose (and no `receive` to prompt a 100 Continue)
        while (await receive())["type"] != "http.disconnect":
            pass  # an HTTP/1.1 server says nothing else; others may
        self._gone(dispatch, request)

    def _gone(self, dispatch: _ASGIDispatch, request: _Request) -> None:
        dispatch.handle_events(request.exchange.close("client went away"))
        request.wake()

    async def _write(
        self, dispatch: _ASGIDispatch, request: _Request, send: Send, http_version: str
    ) -> None:
        """Send the response as the exchange produces it; return when it is complete,
        or when the client is gone (then the server drops the connection)."""
        exchange = request.exchange
        started = False
        while True:
            if not request.woken:
                request.event = anyio.Event()
                deadline = exchange.next_deadline()
                with anyio.move_on_at(math.inf if deadline is None else deadline):
                    await request.event.wait()
            request.woken = False
            now = anyio.current_time()
            deadline = exchange.next_deadline()
            if deadline is not None and deadline <= now:
                dispatch.handle_events(exchange.tick(now))
            if exchange.closed:
                return
            if not started:
                if exchange.response is None:
                    continue
                status, headers = exchange.response
                raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
                if exchange.close_connection and http_version in ("1.0", "1.1"):
                    raw.append((b"connection", b"close"))  # the body was left unread
                if not await self._send(request, send, _start(status, raw)):
                    return
                started = True
            data = exchange.data_to_send()
            if exchange.finished:
                await self._send(request, send, _body(data, more=False))
                return
            if data:
                if not await self._send(request, send, _body(data, more=True)):
                    return
                request.woken = True  # look again before sleeping

    async def _send(self, request: _Request, send: Send, message: Message) -> bool:
        """One `send`; False when the client is gone or was dropped meanwhile."""
        with anyio.CancelScope() as scope:
            request.send_scope = scope
            try:
                await send(message)
            except _SEND_ERRORS:
                return False
            finally:
                request.send_scope = None
        return not scope.cancelled_caught


def _head(scope: Scope) -> RequestHead:
    """The request as the endpoint sees it: the path relative to the mount point."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        path = path[len(root) :] or "/"
    query: bytes = scope.get("query_string", b"")
    target = f"{path}?{query.decode('latin-1')}" if query else path
    client = scope.get("client")
    return RequestHead(
        scope["method"],
        target,
        [(name.decode("latin-1"), value.decode("latin-1")) for name, value in scope["headers"]],
        peer=client[0] if client else None,
        scheme=scope.get("scheme", "http"),
    )


def _start(status: int, headers: list[tuple[bytes, bytes]]) -> Message:
    return {"type": "http.response.start", "status": status, "headers": headers}


def _body(data: bytes, *, more: bool) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": more}


async def _plain(send: Send, status: int, text: bytes) -> None:
    await send(_start(status, [(b"content-type", b"text/plain; charset=utf-8")]))
    await send(_body(text, more=False))


def asgi_app(
    server: MCPServer,
    *,
    path: str = "/mcp",
    close_timeout: float = CLOSE_TIMEOUT,
    environment: bool = True,
    **options: Any,
) -> ASGIApp:
    """`server` as an ASGI 3 application; options as for `ASGIApp`."""
    return ASGIApp(
        server, path=path, close_timeout=close_timeout, environment=environment, **options
    )


__all__ = ["ASGIApp", "asgi_app"]
