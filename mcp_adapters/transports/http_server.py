"""The Streamable HTTP server on real sockets, on anyio (asyncio or trio, one implementation).

One `HTTPServerEndpoint` for the listening socket, one `HTTPServerConnection` per
accepted TCP connection, each driven by a reader task and a writer task exactly as
`mcp_core._http_server` describes; one endpoint timer task runs `endpoint.tick`.
On asyncio the accepted sockets are asyncio transports (`_AsyncioStream`), so the
driver writes each answer from `wake()` and no anyio runs per request; on trio they
are anyio streams. The loop is the same `Driver` on both.

Every MCP connection the endpoint routes to (a legacy session's, or the throwaway one
of a 2026-07-28 POST) gets a `SessionCore`: it starts `MCPServer.handle` for each
request as a task, cancels that task on `RequestCancelled` (a legacy
`notifications/cancelled`, or a 2026-07-28 client closing its stream, which the
endpoint reports as such), and holds the waiters of the server-to-client requests a
legacy handler makes (`ctx.elicit`), whose answers come back on other TCP connections.
Whatever a handler queues goes out through `endpoint.pump()`, which names the TCP
connections whose writers must wake.

Time: the HTTP timers (header, idle, SSE commit, keep-alive, session expiry) run on
the loop's monotonic clock (`HTTPServer.now`: `anyio.current_time()`, or the asyncio
loop's `time()`, the same clock); the MCP connections get `time.time()` as the wall
clock for sealed 2026-07-28 `requestState`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import secrets
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import sniffio
from anyio.abc import SocketAttribute

from mcp_adapters._driver import CLOSE_TIMEOUT, READ_SIZE, Driver
from mcp_adapters._session import RequestId, SessionCore
from mcp_adapters.auth._settings import on_auth_event
from mcp_adapters.backends import Backend, _eager
from mcp_adapters.backends import asyncio as asyncio_backend
from mcp_adapters.backends.anyio import BACKEND as ANYIO
from mcp_adapters.cluster import ClusterBinding, cluster_endpoint
from mcp_adapters.server._serve import Waiter, ask_in_place
from mcp_core import (
    ConnectionClosed,
    Era,
    Event,
    InputReceived,
    LocalProtocolError,
    RequestCancelled,
    RequestReceived,
    ServerConnection,
    State,
)
from mcp_core.auth import AccessRefused, TokenVerificationNeeded
from mcp_core.http import (
    HostPolicy,
    HTTPExchange,
    HTTPRequestRejected,
    HTTPServerConnection,
    HTTPServerEndpoint,
    InvalidToolHeaderAnnotation,
    MCPEvent,
    x_mcp_header_params,
)

if TYPE_CHECKING:
    from mcp_adapters.server import MCPServer
    from mcp_core.http import HeaderParam

logger = logging.getLogger(__name__)

#: What a closing connection reads and drops, at most, while its FIN reaches the client.
_LINGER_BYTES = 1024 * 1024

# The era tested on every 2026-07-28 POST's first event, read from here: CPython 3.11 does
# not specialise an attribute read on a class, and a member read through its enum costs
# about 900 instructions, a global a few dozen (as `mcp_core`'s HTTP modules do).
_LEGACY = Era.LEGACY

# What a socket raises when the peer vanished; anything else out of a connection is a bug
# worth a traceback in the log, not a routine disconnect.
_STREAM_ERRORS: tuple[type[BaseException], ...] = (
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
)
_LINGER_ERRORS: tuple[type[BaseException], ...] = (anyio.EndOfStream, *_STREAM_ERRORS)


# ============================================================================ waiter


async def close_quietly(resource: anyio.abc.AsyncResource) -> None:
    """Close at once, even from a cancelled scope (without raising its cancellation)."""
    with anyio.CancelScope(shield=True):
        await anyio.aclose_forcefully(resource)


def is_loopback(host: str) -> bool:
    """True for an address (or `localhost`) that only this machine can reach.

    Decides the default host policy: a loopback bind gets the loopback allow-list (DNS
    rebinding, RELIABILITY.md 1.1), anything else must bring its own.
    """
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def peer_address(stream: anyio.abc.SocketStream) -> str | None:
    """The client's IP address (what trusted proxies are judged by); None for a Unix
    socket, whose peers have none."""
    try:
        remote = stream.extra(SocketAttribute.remote_address)
    except anyio.TypedAttributeLookupError:
        return None
    return remote[0] if isinstance(remote, tuple) else None


# What `tool_header_params_of` reads for a server without a tool table. Never written.
_NO_TOOLS: Mapping[str, Any] = MappingProxyType({})


def tool_header_params_of(server: MCPServer) -> Callable[[str], Mapping[str, HeaderParam] | None]:
    """The endpoint's `tool_header_params` hook, read live from the server's tools."""
    # Cached by schema identity: a tool registered again (with a new schema) is read again,
    # while the common case, the same tool called many times, parses nothing.
    cache: dict[str, tuple[object, Mapping[str, HeaderParam] | None]] = {}
    # A server whose registration keeps `tool_headers_declared` (MCPServer does) is asked
    # that first: while no tool declares `x-mcp-header`, no tool has header parameters.
    flagged = type(getattr(server, "tool_headers_declared", None)) is bool

    def lookup(name: str) -> Mapping[str, HeaderParam] | None:
        if flagged and not server.tool_headers_declared:
            return None
        # (Asked on every 2026-07-28 tools/call: the shared empty default rather
        # than a new dict per call.)
        tools: Mapping[str, Any] = getattr(server, "_tools", _NO_TOOLS)
        tool = tools.get(name)
        if tool is None:
            cache.pop(name, None)
            return None
        schema = tool.input_schema
        hit = cache.get(name)
        if hit is not None and hit[0] is schema:
            return hit[1]
        try:
            params: Mapping[str, HeaderParam] | None = x_mcp_header_params(schema) or None
        # A tool with invalid annotations gets no header check here: clients drop such
        # tools from `tools/list` (SEP-2243), so a conforming client never calls it with
        # mirrored params.
        except InvalidToolHeaderAnnotation:
            params = None
        cache[name] = (schema, params)
        return params

    return lookup


# ===================================================================== TCP connection


class _Socket:
    """One accepted TCP connection: its HTTP state machine, as the one `Driver` runs it.

    The driver's sans-IO side: the HTTP layer gets the loop's clock with each read,
    and no timers once the server is closing. Its events go to the server, which
    routes the output and wakes the sockets concerned.
    """

    __slots__ = ("driver", "eof", "http", "server")

    def __init__(self, server: HTTPServer, http: HTTPServerConnection) -> None:
        self.server = server
        self.http = http
        self.eof = False
        self.driver: Driver | None = None

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]:
        """The clock is read here, per read, so every timer the HTTP layer restarts is stamped
        exactly; the wall time comes from the driver.
        """
        if not data:
            self.eof = True
        return self.http.receive_data(data, now=self.server.now(), wall_time=wall_time)

    def data_to_send(self) -> bytes:
        return self.http.data_to_send()

    def next_deadline(self) -> float | None:
        """No timers while closing: the close timeout of the driver bounds what is left, and a
        keep-alive or an SSE commit firing then would only write to a closing socket.
        """
        return None if self.server.closing else self.http.next_deadline()

    def tick(self, now: float) -> list[Any]:
        return self.http.tick(now)

    def on_events(self, events: list[Event]) -> None:
        self.server.handle_events(events)
        self.wake()

    def wake(self) -> None:
        """Let the writer look again; a closed connection (or server) finishes."""
        driver = self.driver
        if driver is None:
            return
        driver.wake()
        if self.http.closed or self.server.closing:
            driver.finish()  # flush within the close timeout, then close

    def lingers(self) -> bool:
        """Whether closing should first let the client read our answer (see `_Stream`)."""
        driver = self.driver
        return (
            driver is not None
            and driver.error is None
            and not driver.core.broken
            and not self.eof
            and not self.server.closing
        )


class _Stream:
    """An anyio socket as the driver's `ByteStream`; closing lingers when asked to."""

    __slots__ = ("_close_timeout", "_lingers", "_stream")

    def __init__(
        self, stream: anyio.abc.SocketStream, lingers: Callable[[], bool], close_timeout: float
    ) -> None:
        self._stream = stream
        self._lingers = lingers
        self._close_timeout = close_timeout

    async def receive_some(self, max_bytes: int) -> bytes:
        try:
            return await self._stream.receive(max_bytes)
        except anyio.EndOfStream:
            return b""

    async def send_all(self, data: bytes) -> None:
        """Awaited in full: back-pressure from a slow client stops its writer task, never the
        reader or another connection.
        """
        await self._stream.send(data)

    async def aclose(self) -> None:
        if self._lingers():
            await self._linger()
        await close_quietly(self._stream)

    async def _linger(self) -> None:
        """Closing while the client may still be sending (a refused upload, say): send
        our FIN, then read and drop its bytes for a moment, so that closing with unread
        input does not reset the connection before the client has read our answer."""
        # At most a second: enough for the client to read a refusal already sent, short
        # enough that a client that keeps sending cannot hold the socket open.
        with anyio.move_on_after(min(self._close_timeout, 1.0)):
            try:
                await self._stream.send_eof()
                budget = _LINGER_BYTES
                while budget > 0:
                    budget -= len(await self._stream.receive(READ_SIZE))
            except _LINGER_ERRORS:
                pass


class _AsyncioStream:
    """An accepted socket on asyncio's own transport: the driver's `ByteStream` on asyncio.

    With it the per-request path runs no anyio at all (no cancel scope, no
    checkpoint, no backend lookup per read or write), and `write_nowait` lets the
    driver write an answer from `wake()`, in the stack that produced it, instead
    of waking its writer task for every response; what it reads is pushed to the
    driver (`push_to`). Closing lingers like `_Stream`.
    """

    __slots__ = ("_close_timeout", "_lingers", "_protocol")

    def __init__(
        self,
        protocol: asyncio_backend.StreamProtocol,
        lingers: Callable[[], bool],
        close_timeout: float,
    ) -> None:
        self._protocol = protocol
        self._lingers = lingers
        self._close_timeout = close_timeout

    async def receive_some(self, max_bytes: int) -> bytes:
        return await self._protocol.read(max_bytes)

    def push_to(self, sink: asyncio_backend.Sink) -> bool:
        """What the socket reads goes to the driver in the transport's own callback
        (as a stdio pipe's does): a request is parsed, dispatched and, when a handler
        answers in place, answered in the loop turn that read it, with no reader task
        to wake in between."""
        self._protocol.push_to(sink)
        return True

    def stop_push(self) -> None:
        self._protocol.stop_push()

    async def send_all(self, data: bytes) -> None:
        await self._protocol.write(data)

    def write_nowait(self, data: bytes) -> bool:
        return self._protocol.write_nowait(data)

    def abort(self) -> None:
        transport = self._protocol.transport
        if isinstance(transport, asyncio.WriteTransport):
            transport.abort()

    async def aclose(self) -> None:
        # Closed from a cancelled task too (the server shutting down): the transport is
        # closed before the first await, so a cancellation only cuts the waiting short.
        if self._lingers():
            await self._linger()
        await self._protocol.close(self._close_timeout)

    async def _linger(self) -> None:
        """As `_Stream._linger`: our FIN, then the client's late bytes read and dropped."""
        transport = self._protocol.transport
        if not isinstance(transport, asyncio.WriteTransport) or not transport.can_write_eof():
            return
        self._protocol.pull()  # the driver stopped its push, and reading with it
        try:
            async with asyncio.timeout(min(self._close_timeout, 1.0)):
                transport.write_eof()
                budget = _LINGER_BYTES
                while budget > 0:
                    data = await self._protocol.read(READ_SIZE)
                    if not data:
                        return
                    budget -= len(data)
        except (TimeoutError, OSError):
            pass


# ========================================================================= request scope


def _no_spawn(event: Any) -> None:
    """The spawn of a core made only to answer an exception: it never runs anything."""
    raise AssertionError("nothing is spawned on this core")


class _Scope:
    """The `RequestScope` `MCPServer.handle` gets: the MCP connection, ask, wake, clock."""

    __slots__ = ("_core", "_server", "connection")

    def __init__(
        self, server: HTTPServer, connection: ServerConnection, core: SessionCore | None
    ) -> None:
        self._server = server
        # None only while a 2026-07-28 request is tried in place (`_answer_in_place`):
        # the core is made, and `bind`s here, before anything can await `ask`.
        self._core = core
        self.connection = connection

    def bind(self, core: SessionCore) -> None:
        """Give a scope made before its core (`_answer_in_place`) the core it asks through."""
        self._core = core

    async def ask(self, request_id: RequestId, questions: Any) -> InputReceived:
        """Legacy questions on this session; their answers may arrive on any TCP
        connection of the session (as `MCPEvent`s for this connection)."""
        assert self._core is not None
        return await ask_in_place(self._core, self.connection, request_id, questions, self.wake)

    def wake(self) -> None:
        """A pump for this one connection, not all: a handler's answer concerns only its own
        session, and draining every connection per answer would cost O(sessions).
        """
        self._server.flush(self.connection)

    def wall_time(self) -> float:
        """Epoch seconds for sealed `requestState`: replicas behind one balancer must judge its
        expiry alike, which only the wall clock allows.
        """
        return time.time()


# ============================================================================ server


class HTTPServer:
    """A running Streamable HTTP server (see `http_server`).

    `port` is the bound port, `url` the endpoint's URL, `endpoint` the sans-IO
    `HTTPServerEndpoint` (its `sessions`, `close_session` ...; call `wake()` after using
    it directly so queued output goes out).
    """

    def __init__(
        self,
        server: MCPServer,
        endpoint: HTTPServerEndpoint,
        *,
        host: str,
        port: int,
        close_timeout: float,
    ) -> None:
        self.server = server
        self.endpoint = endpoint
        self.host = host
        self.port = port
        self._close_timeout = close_timeout
        self._sockets: dict[HTTPServerConnection, _Socket] = {}
        self._cores: dict[ServerConnection, SessionCore] = {}
        # 2026-07-28 connections are per request: remembered only so their core can be
        # dropped as soon as nothing runs for them (`_retire`), or the table would grow per
        # request.
        self._modern: set[ServerConnection] = set()
        self._listening: dict[ServerConnection, None] = {}  # 2026-07-28 listen streams
        self._handlers = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self._accept_scope = anyio.CancelScope()
        # The endpoint's own timers (session expiry, server-to-client request
        # deadlines), on the seam's timer: armed when the endpoint says they moved.
        self._timer = ANYIO.timer(self._timer_fired)
        self._all_closed = anyio.Event()
        self._closing = False
        self.cluster: ClusterBinding | None = None  # with a store (mcp_adapters.cluster)
        # A connection owned by nobody: `endpoint.pump(idle)` collects the TCP
        # connections that became ready without draining every MCP connection.
        self._nobody = ServerConnection(endpoint.config)
        #: The loop's clock (monotonic), as anyio reads it; set to the loop's own
        #: `time` once serving on asyncio (the same clock, without a backend lookup).
        self.now: Callable[[], float] = anyio.current_time
        #: The running handler and socket tasks, when they are bare asyncio tasks
        #: (see `_spawn`, `_accept_asyncio`).
        self._native: set[asyncio.Task[None]] | None = None
        #: The serving loop's eager `start` (`backends._eager.starter`), with `_native`:
        #: looked up once, not per handler.
        self._eager: (
            Callable[[Coroutine[Any, Any, Any], str | None], tuple[asyncio.Task[None], bool]] | None
        ) = None
        #: A handler's eager first step is running (`_start_eager`).
        self._stepping = False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.endpoint.path}"

    @property
    def open_connections(self) -> int:
        """TCP connections currently open."""
        return len(self._sockets)

    @property
    def running_handlers(self) -> int:
        """Request handlers (`MCPServer.handle` tasks) currently running."""
        return self._handlers

    def wake(self) -> None:
        """Route what every MCP connection queued and wake the writers concerned."""
        self._wake_ready(self.endpoint.pump(now=self.now()))

    def notify_subscribers(self, method: str, params: Any = None) -> int:
        """Tell every client that asked that a list changed (or a resource was updated).

        2026-07-28 clients get it on their `subscriptions/listen` streams whose
        filter covers it; legacy sessions on their GET stream: a `*/list_changed`
        when advertised, a `resources/updated` only when subscribed to that URI (the
        core keeps each session's subscriptions). Returns how many streams or
        sessions were told.
        """
        # The core's own check of the method (it raises for one nobody subscribes to);
        # the connection owned by nobody has no session, so it is told nothing.
        self._nobody.notify_subscribers(method, params)
        told = 0
        touched: list[ServerConnection] = []
        for conn in list(self._listening):
            if conn.requests_in_flight[1] == 0 or conn.state is not State.READY:
                del self._listening[conn]  # the server ended it, or it is closing
                continue
            sent = conn.notify_subscribers(method, params)
            if sent:
                told += sent
                touched.append(conn)
        # Legacy sessions hear of changes on their GET stream; the core decides per session
        # (capability advertised, URI subscribed), so a session that did not ask is told
        # nothing.
        for conn in self.endpoint.sessions.values():
            try:
                sent = conn.notify_subscribers(method, params)
            except LocalProtocolError as exc:  # its output buffer is full
                logger.debug("not sending %s to a session: %s", method, exc)
                continue
            if sent:
                told += sent
                touched.append(conn)
        if touched:
            self.flush(*touched)
        return told

    # ------------------------------------------------------------------ tasks

    async def _accept(self, listener: anyio.abc.SocketListener) -> None:
        tg = self._tg
        assert tg is not None
        with self._accept_scope:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as exc:  # out of descriptors, say: don't spin, don't die
                    logger.warning("accept failed: %s", exc)
                    await anyio.sleep(0.1)
                    continue
                tg.start_soon(self._serve_socket, stream)

    def _timer_fired(self, now: float) -> None:
        """The endpoint timer is the seam's (one per server, not per session): the endpoint
        says when it is next due, so a thousand idle sessions cost one timer.
        """
        if self._closing:
            return
        endpoint = self.endpoint
        deadline = endpoint.next_deadline()
        if deadline is not None and deadline <= now:
            self.handle_events(endpoint.tick(now))
        self._rearm_timer()

    def _rearm_timer(self) -> None:
        self._timer.arm(self.endpoint.next_deadline())

    async def _accept_asyncio(self, listener: anyio.abc.SocketListener) -> None:
        """`_accept` on asyncio: the listener's socket, accepted onto asyncio's transports.

        anyio binds the socket (every address of the host, one port); accepting here
        instead gives each connection a plain asyncio transport, which the driver can
        write from `wake()` (see `_AsyncioStream`)."""
        tg = self._tg
        assert tg is not None
        loop = asyncio.get_running_loop()
        raw: socket.socket = listener.extra(SocketAttribute.raw_socket)
        raw.setblocking(False)
        with self._accept_scope:
            while True:
                try:
                    client, _ = await loop.sock_accept(raw)
                except OSError as exc:  # out of descriptors, say: don't spin, don't die
                    logger.warning("accept failed: %s", exc)
                    await anyio.sleep(0.1)
                    continue
                try:
                    _, protocol = await loop.connect_accepted_socket(
                        asyncio_backend.StreamProtocol, client
                    )
                except OSError as exc:
                    logger.debug("accepted connection failed at once: %s", exc)
                    client.close()
                    continue
                # A bare task, as the handlers are (`_stop_native_tasks` ends it at
                # shutdown): anyio's task state is a part of every idle connection.
                self._start_native(self._serve_asyncio_socket(protocol))

    async def _serve_asyncio_socket(self, protocol: asyncio_backend.StreamProtocol) -> None:
        transport = protocol.transport
        assert transport is not None
        if self._closing:
            transport.close()
            return
        sock = transport.get_extra_info("socket")
        if sock is not None:  # as anyio's listener does: notice a vanished peer, and
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            # no Nagle delay. asyncio sets TCP_NODELAY only on sockets made with
            # proto IPPROTO_TCP, and anyio's listener (whose accepted sockets inherit
            # its proto) is made with 0. Without it, a second write on a stream the
            # client has not acknowledged yet (an SSE event after the one that asked
            # the client a question) waits for the client's delayed ACK: 40 ms on
            # Linux, per legacy elicitation round over HTTP.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        asyncio_backend.heap_sized_reads(transport)
        peer = transport.get_extra_info("peername")
        backend = asyncio_backend.backend()
        await self._run_socket(
            lambda sock: _AsyncioStream(protocol, sock.lingers, self._close_timeout),
            peer[0] if isinstance(peer, tuple) else None,
            backend,
        )

    async def _serve_socket(self, stream: anyio.abc.SocketStream) -> None:
        if self._closing:
            await close_quietly(stream)
            return
        # anyio's accept sets TCP_NODELAY; keep-alive, as on asyncio, notices a vanished peer.
        with contextlib.suppress(OSError):
            raw: socket.socket = stream.extra(SocketAttribute.raw_socket)
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        await self._run_socket(
            lambda sock: _Stream(stream, sock.lingers, self._close_timeout),
            peer_address(stream),
            ANYIO,
        )

    async def _run_socket(
        self,
        make_stream: Callable[[_Socket], Any],
        peer: str | None,
        backend: Backend,
    ) -> None:
        """Run one accepted TCP connection's driver until it ends, then settle it."""
        http = self.endpoint.new_connection(now=self.now(), peer=peer)
        sock = _Socket(self, http)
        driver = sock.driver = Driver(
            sock,
            make_stream(sock),
            sock.on_events,
            backend=backend,
            close_timeout=self._close_timeout,
            finish_on_eof=False,  # a half-closed client may still be owed its response
        )
        self._sockets[http] = sock
        try:
            await driver.run()
        except Exception:
            logger.exception("HTTP connection failed")
        finally:
            del self._sockets[http]
            try:
                # Deferred events (a stream dropped for not reading) and the streams
                # that rode on this connection (a 2026-07-28 request is cancelled).
                # The tick first: events deferred inside the HTTP layer (a client dropped
                # for not reading) come out before the close, in the order they happened.
                self.handle_events(http.tick(self.now()) + http.close("connection closed"))
            except Exception:
                logger.exception("settling a closed HTTP connection failed")
            if self._closing and not self._sockets:
                self._all_closed.set()

    # -------------------------------------------------------------- events

    @property
    def closing(self) -> bool:
        """The server is shutting down: no new timers, every connection flushes and closes."""
        return self._closing

    def start_task(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> bool:
        """Run `fn(*args)` as a task of this server (it ends with the server); False,
        with nothing started, when the server is not running or is closing.

        For work the server owns beyond one request (the cluster's fan-out): it ends with
        the server, and nothing starts while shutting down.
        """
        if self._tg is None or self._closing:
            return False
        self._tg.start_soon(fn, *args)
        return True

    def handle_events(self, events: list[Event]) -> None:
        """Dispatch one batch from the HTTP layer, route the output, wake the writers."""
        touched: list[ServerConnection] = []
        for event in events:
            if isinstance(event, MCPEvent):
                self._mcp_event(event)
                touched.append(event.connection)
            elif self.cluster is not None and self.cluster.handle(event):
                pass  # a session the store must be asked about first
            elif isinstance(event, HTTPRequestRejected):
                # A body over a limit is worth an operator's eye (raise the limit?);
                # the rest is clients being clients.
                logger.log(
                    logging.WARNING if event.status == 413 else logging.DEBUG,
                    "refused %s %s: %d %s",
                    event.method,
                    event.target,
                    event.status,
                    event.reason,
                )
            # Token verification may take I/O (a JWKS fetch, introspection): the auth
            # settings run it as a task and resume the exchange, the engine never waits.
            elif isinstance(event, (TokenVerificationNeeded, AccessRefused)):
                on_auth_event(self, event)
        self.flush(*touched)

    def flush(self, *connections: ServerConnection) -> None:
        """Route what these MCP connections queued and wake the sockets concerned.

        `now` stamps what the pump writes (the idle timer of a keep-alive connection
        whose response just ended), so its writer needs no extra tick to start it."""
        self._wake_ready(self.endpoint.pump(*(connections or (self._nobody,)), now=self.now()))

    def _wake_ready(self, ready: list[HTTPServerConnection | HTTPExchange]) -> None:
        """Only the sockets that got output are woken: a burst of answers for one session wakes
        one writer, however many connections are open.
        """
        for http in ready:
            sock = self._sockets.get(http) if isinstance(http, HTTPServerConnection) else None
            if sock is not None:
                sock.wake()
        if self.endpoint.deadline_moved:  # the endpoint timer re-arms only when it must
            self._rearm_timer()

    def _mcp_event(self, wrapped: MCPEvent) -> None:
        conn, event = wrapped.connection, wrapped.event
        # The event classes are final (frozen dataclasses nobody subclasses): their exact
        # type is tested, with no call at all (`isinstance` is one per test). Where an
        # attribute is read after the test, `type(event)` is spelled out: mypy narrows
        # `event` from that, not from `kind`.
        kind = type(event)
        # 2026-07-28 listen streams are tracked so `notify_subscribers` can reach them: they
        # belong to no session, and the endpoint's session table does not list them.
        if wrapped.session_id is None:
            if type(event) is RequestReceived:
                if event.method == "subscriptions/listen":
                    self._listening[conn] = None
            elif kind is RequestCancelled or kind is ConnectionClosed:
                self._listening.pop(conn, None)
        core = self._cores.get(conn)
        if core is None:
            if kind is ConnectionClosed:
                return
            modern = conn.era is not _LEGACY  # the core's word (None: refused first)
            if modern and kind is not RequestReceived and kind is not InputReceived:
                return  # a 2026-07-28 exchange answered on the spot: nothing runs for it
            if modern and type(event) is RequestReceived and event.method != "subscriptions/listen":
                self._answer_in_place(conn, event)
                return
            # A core per MCP connection, created on its first request: a 2026-07-28 POST
            # refused on the spot never gets one, nor one answered in place (above), so a
            # flood of bad requests costs no bookkeeping.
            new = SessionCore(conn, spawn=lambda e: self._spawn(conn, new, e))
            self._cores[conn] = core = new
            if modern:
                self._modern.add(conn)
            else:  # a legacy session hears of changes from its first message on
                self.server.attach(_Scope(self, conn, new))
        core.dispatch([event])
        self._retire(conn, core)

    def _answer_in_place(self, conn: ServerConnection, event: RequestReceived) -> None:
        """A 2026-07-28 request on its own per-POST connection, with no session core
        unless one is needed.

        Most are answered where they arrive (`handle_now`: a plain tool, a list); the
        core that routes a connection's events to waiters and handlers would be made,
        used once and dropped per POST. It is made only when the request goes on: a
        handler that suspends (whose cancellation the core routes; on asyncio its first
        step runs first, so one that never suspends needs none), or an exception to
        answer. A listen stream, and any other event, takes the general path."""
        work: Callable[[], Awaitable[None]] | None = None
        if self._tg is not None and not self._closing:  # else refused as `_spawn` refuses
            scope = _Scope(self, conn, None)
            try:
                work = self.server.handle_now(event, scope)
            except Exception as exc:
                # Answered with the error; the core is the one that phrases it.
                SessionCore(conn, spawn=_no_spawn).answer_exception(event.request_id, exc)
                return
            if work is None:
                return  # answered: `handle_events` pumps it out
            if self._native is not None:
                # On asyncio the handler's first step runs before any core exists: a
                # coroutine tool that never suspends (most do not) is answered in it,
                # and the core, made and dropped per POST, is made only for a handler
                # that suspends, which it then routes the cancellation of.
                made: list[SessionCore] = []  # the core, once the handler suspended
                self._handlers += 1
                task = self._start_eager(self._run_in_place(conn, event, work, made))
                if task is not None:
                    core = self._new_core(conn)
                    made.append(core)
                    scope.bind(core)
                    core.adopt(event.request_id, task)
                return
        core = self._new_core(conn, work)
        if work is not None:
            scope.bind(core)
        core.dispatch([event])  # its spawn starts `work`, and the core keeps the handle
        self._retire(conn, core)

    def _new_core(
        self, conn: ServerConnection, work: Callable[[], Awaitable[None]] | None = None
    ) -> SessionCore:
        """The session core of a 2026-07-28 connection, kept while something runs;
        `work` is the handler `handle_now` already returned for its request."""
        given = [work] if work is not None else []  # for the first spawn only
        new = SessionCore(
            conn, spawn=lambda e: self._spawn(conn, new, e, given.pop() if given else None)
        )
        self._cores[conn] = new
        self._modern.add(conn)
        return new

    def _retire(self, conn: ServerConnection, core: SessionCore) -> None:
        """Forget a core whose connection ended, or a 2026-07-28 one with nothing running.

        A 2026-07-28 core is dropped once its one request is done: its connection will never
        get another request (SEP-2575), and keeping it would leak one per POST.
        """
        if core.closed is not None or (
            conn in self._modern and core.running_handlers == 0 and core.pending_requests == 0
        ):
            if self._cores.get(conn) is core:
                del self._cores[conn]
            self._modern.discard(conn)

    def _spawn(
        self,
        conn: ServerConnection,
        core: SessionCore,
        event: RequestReceived | InputReceived,
        work: Callable[[], Awaitable[None]] | None = None,
    ) -> anyio.CancelScope | asyncio.Task[None] | None:
        """Run `event`'s handler; `work` when `_answer_in_place` already has it."""
        # During shutdown a new handler is cancelled before it starts: the endpoint is
        # ending every request, and a handler started now would answer a closed connection.
        if self._tg is None or self._closing:
            scope = anyio.CancelScope()
            scope.cancel()
            return scope
        if work is None:
            # Answered where it arrived when nothing can suspend (`handle_events`
            # pumps it out).
            try:
                work = self.server.handle_now(event, _Scope(self, conn, core))
            except Exception as exc:
                core.answer_exception(event.request_id, exc)
                return None
            if work is None:
                return None
        self._handlers += 1
        if self._native is not None:
            # On asyncio a handler is a bare task (cancelled as itself): anyio's
            # start_soon and cancel scope cost more than the tool call they wrap. Its
            # first step runs now (`backends._eager`, as the sessions start theirs): a
            # coroutine tool that never suspends is answered here, as a plain one is,
            # and None says nothing is left to cancel.
            return self._start_eager(self._run_native_handler(conn, core, event, work))
        scope = anyio.CancelScope()
        self._tg.start_soon(self._run_handler, conn, core, event, scope, work)
        return scope

    async def _run_handler(
        self,
        conn: ServerConnection,
        core: SessionCore,
        event: RequestReceived | InputReceived,
        scope: anyio.CancelScope,
        work: Callable[[], Awaitable[None]],
    ) -> None:
        rid = event.request_id
        try:
            with scope:
                try:
                    await work()
                except Exception as exc:
                    core.answer_exception(rid, exc)
        finally:
            self._handler_done(conn, core, rid)

    async def _run_native_handler(
        self,
        conn: ServerConnection,
        core: SessionCore,
        event: RequestReceived | InputReceived,
        work: Callable[[], Awaitable[None]],
    ) -> None:
        """`_run_handler` as a bare asyncio task: cancelled by the session core (the
        request was cancelled) or at shutdown, it ends without an answer."""
        rid = event.request_id
        try:
            await work()
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            core.answer_exception(rid, exc)
        finally:
            self._handler_done(conn, core, rid)

    async def _run_in_place(
        self,
        conn: ServerConnection,
        event: RequestReceived,
        work: Callable[[], Awaitable[None]],
        made: list[SessionCore],
    ) -> None:
        """`_run_native_handler` for a handler started with no core (`_answer_in_place`):
        `made` holds the core once the handler suspended. Ended in its first step, the
        handler leaves nothing to forget, and `handle_events` flushes its answer."""
        rid = event.request_id
        try:
            await work()
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            # The core phrases the answer; one made for that alone if none was needed yet.
            (made[0] if made else SessionCore(conn, spawn=_no_spawn)).answer_exception(rid, exc)
        finally:
            if made:
                self._handler_done(conn, made[0], rid)
            else:
                self._handlers -= 1

    def _handler_done(self, conn: ServerConnection, core: SessionCore, rid: RequestId) -> None:
        """The flush after every handler puts its answer on the wire even when the handler ran
        as a task outside any event handling.
        """
        self._handlers -= 1
        core.forget(rid)
        if not self._stepping:  # in its eager first step, `handle_events` flushes after
            self.flush(conn)
        self._retire(conn, core)

    def _start_native(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """A bare asyncio task of this server (a handler, or an accepted socket's loop)."""
        tasks = self._native
        assert tasks is not None
        task = asyncio.get_running_loop().create_task(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    def _start_eager(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
        """`_start_native` with the task's first step taken now (`backends._eager`); None
        when that step ended it (its `_handler_done` has run)."""
        tasks = self._native
        assert tasks is not None
        # Every spawn comes from `handle_events` (through the session core's dispatch),
        # which flushes the connections of its events after: a handler done in this step
        # leaves its answer for that flush (`_handler_done`).
        stepping, self._stepping = self._stepping, True
        try:
            # Named after the coroutine's function (as anyio names its tasks, and as the
            # sessions' `Tasks.start_eager` does): on 3.11 a task left to name itself
            # formats "Task-<n>" in its constructor, about 1,400 instructions of every
            # coroutine handler's call; the coroutine's `__qualname__` is a slot read.
            name: str = coro.__qualname__  # type: ignore[attr-defined]  # (a coroutine object's)
            task, finished = self._eager(coro, name)  # type: ignore[misc]  # (set with `_native`)
        finally:
            self._stepping = stepping
        if finished:
            return None
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    async def _stop_native_tasks(self) -> None:
        """Cancel the bare asyncio tasks and wait for them (the task group's job for
        the anyio ones)."""
        tasks = self._native
        while tasks:
            pending = list(tasks)
            for task in pending:
                task.cancel()
            await asyncio.wait(pending)

    # ------------------------------------------------------------- running

    @contextlib.asynccontextmanager
    async def serving(
        self, listeners: Sequence[anyio.abc.SocketListener] = ()
    ) -> AsyncIterator[None]:
        """Run the endpoint's timer, and accept on `listeners`, while the block runs.

        Leaving ends every session and request and closes every socket. What the
        block raises is re-raised outside the task group, as is (not in a group).
        """
        failure: BaseException | None = None
        # On asyncio the loop's own clock and bare tasks replace anyio's: the same monotonic
        # clock, without a backend lookup on every read (docs/performance.md).
        on_asyncio = sniffio.current_async_library() == "asyncio"
        if on_asyncio:
            self.now = asyncio.get_running_loop().time
            self._native = set()
            self._eager = _eager.starter(asyncio.get_running_loop())
        async with anyio.create_task_group() as tg:
            self._tg = tg
            for listener in listeners:
                tg.start_soon(self._accept_asyncio if on_asyncio else self._accept, listener)
            self._rearm_timer()
            tg.start_soon(self._timer.serve)
            if self.cluster is not None:  # the store's inbox and fan-out, drained here
                await tg.start(self.cluster.run, self)
            try:
                yield
            except BaseException as exc:
                failure = exc
            finally:
                with anyio.CancelScope(shield=True):
                    await self._shutdown()
                    await self._stop_native_tasks()
                tg.cancel_scope.cancel()
        if failure is not None:
            try:
                raise failure
            finally:
                failure = None

    # ------------------------------------------------------------- shutdown

    async def _shutdown(self) -> None:
        """Stop accepting, end every session and request, flush, close every socket.

        The order matters: stop accepting first (no new connection races the shutdown), then
        end every session and request in the endpoint (their handlers are told), then let
        each socket flush what that queued, within the close timeout.
        """
        self._closing = True
        self._timer.close()
        self._accept_scope.cancel()
        try:
            self.handle_events(self.endpoint.close("server shutting down"))
        except Exception:
            logger.exception("closing the HTTP endpoint failed")
        for sock in list(self._sockets.values()):
            sock.wake()
        if self._sockets:
            with anyio.move_on_after(self._close_timeout + 0.5):
                await self._all_closed.wait()


@contextlib.asynccontextmanager
async def http_server(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    close_timeout: float = CLOSE_TIMEOUT,
    **endpoint_options: Any,
) -> AsyncIterator[HTTPServer]:
    """Serve `server` over Streamable HTTP while the block runs; yields the `HTTPServer`.

    `endpoint_options` go to `HTTPServerEndpoint` (`limits`, `response_mode`,
    `event_store`, `retry_ms`, `principal_of`, `host_policy`, `trusted_proxies` ...). Unless given,
    `host_policy` is the loopback allow-list for the bound port when `host` is a
    loopback address, and off (with a warning) otherwise: pass your own for a public
    bind. Leaving the block ends every session and request and closes every socket.
    """
    async with (
        server.running(),  # the lifespan, unless something already serves it
        _listening(server, host, port, path, close_timeout, endpoint_options) as running,
    ):
        yield running


@contextlib.asynccontextmanager
async def _listening(
    server: MCPServer,
    host: str,
    port: int,
    path: str,
    close_timeout: float,
    endpoint_options: dict[str, Any],
) -> AsyncIterator[HTTPServer]:
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
    try:
        bound = listener.extra(SocketAttribute.local_port)
        options = dict(endpoint_options)
        if "host_policy" not in options:
            if is_loopback(host):
                options["host_policy"] = HostPolicy.loopback(bound)
            else:
                logger.warning(
                    "serving on %s without a Host/Origin allow-list: pass host_policy= "
                    "(HostPolicy) to protect against DNS rebinding",
                    host,
                )
                options["host_policy"] = None
        options.setdefault("new_session_id", lambda: secrets.token_urlsafe(24))
        options.setdefault("tool_header_params", tool_header_params_of(server))
        if server.auth is not None and "auth" not in options:
            here = f"[{host}]" if ":" in host else host
            options["auth"] = server.auth.guard(
                server, default_resource=f"http://{here}:{bound}{path}"
            )
        shared = cluster_endpoint(server, path=path, **options)
        endpoint = shared[0] if shared else HTTPServerEndpoint(server.config, path=path, **options)
        running = HTTPServer(server, endpoint, host=host, port=bound, close_timeout=close_timeout)
        running.cluster = shared[1] if shared else None
        sockets = [sub for sub in listener.listeners if isinstance(sub, anyio.abc.SocketListener)]
        async with running.serving(sockets):
            logger.info("serving %s on %s", server.config.name, running.url)
            yield running
    finally:
        await close_quietly(listener)


async def serve_http(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    **endpoint_options: Any,
) -> None:
    """Serve `server` over Streamable HTTP until cancelled.

    With `await task_group.start(serve_http, server, port=0)` the bound port is the
    start value. Options as for `http_server`.
    """
    async with http_server(server, host=host, port=port, path=path, **endpoint_options) as running:
        task_status.started(running.port)
        await anyio.sleep_forever()


__all__ = ["HTTPServer", "Waiter", "close_quietly", "http_server", "is_loopback", "serve_http"]
