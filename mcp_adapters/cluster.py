"""Legacy sessions across replicas: the Streamable HTTP server bound to a `Store`.

With a store (`MCPServer(store=...)`, or `MCP_STORE_URL` for the command
line), `http_server` serves a `SharedSessionEndpoint` and runs a
`ClusterBinding` next to it, which does the I/O the endpoint asks for
(docs/deploy.md has the whole picture):

* `initialize` succeeded here: the session record is created (owner: this
  process) before the answer, carrying the session id, goes out;
* a request of a session: this process claims the session (compare-and-set
  on the owner) and holds it, restored from the record when it did not;
  `logging/setLevel` and `resources/(un)subscribe` are saved before they run,
  so the next request, wherever it lands, sees them;
* a body of only answers and notifications: to the process whose request
  waits for it, over the bus (a client's answer by its id, which names that
  process: `tag_request_ids`; progress by its token; anything else to the
  session's owner), answered 202 here; in a 2025-03-26 batch that also
  carries a request (which runs here), each such answer is forwarded alike;
* a GET: the session is held here (restored if need be), and a
  `Last-Event-ID` is looked up in the shared event log first;
* a DELETE: the record and its events are deleted, and every process is told
  to drop its copy;
* `notify_*` publish on the fan-out; every process passes what it receives to
  the legacy sessions whose GET stream it has open and to its own 2026-07-28
  listen streams and other connections.

The endpoint's event store stays synchronous: `SharedEventStore` answers from
memory and writes behind to the store's event log.

Without a store nothing here runs: one process keeps its sessions in memory.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc

from mcp_adapters.store import (
    BusMessage,
    EventPosition,
    Notification,
    SessionRecord,
    Store,
    StoreLimits,
    StoreUnavailable,
    format_event_id,
    next_position,
    parse_event_id,
)
from mcp_core import INVALID_REQUEST, Event, LocalProtocolError, ServerConnection
from mcp_core.http import (
    SessionNamed,
    SessionOpened,
    SharedSessionEndpoint,
    apply_shared_state,
    tag_request_ids,
    tagged_origin,
)

if TYPE_CHECKING:
    from mcp_adapters.server import MCPServer
    from mcp_adapters.transports.http_server import HTTPServer

__all__ = [
    "STORE_PREFIX_VARIABLE",
    "STORE_URL_VARIABLE",
    "ClusterBinding",
    "SharedEventStore",
    "cluster_endpoint",
    "configure_store_from_environment",
    "store_from_environment",
]

logger = logging.getLogger(__name__)

STORE_URL_VARIABLE: Final = "MCP_STORE_URL"
STORE_PREFIX_VARIABLE: Final = "MCP_STORE_PREFIX"
#: A fan-out message of our own: a session was deleted, drop your copy.
SESSION_ENDED: Final = "x-mcp-sansio/session-ended"
LOST_STREAM: Final = (
    "Bad Request: the stream of this Last-Event-ID was lost with the process that carried it"
)
#: Write-behind appends and fan-out publications waiting for the store, at most.
QUEUE_BOUND: Final = 4096
#: How often a request retries a claim another process won meanwhile.
_CLAIM_TRIES: Final = 3
_LOG_LEVELS: Final = frozenset(
    {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)
_RETRY_DELAY: Final = 0.5  # before re-entering an inbox or a listener that failed
_UNSAVED_METHODS: Final = frozenset({"resources/subscribe", "resources/unsubscribe"})


# ====================================================================== configuration


def store_from_environment(environ: Mapping[str, str] | None = None) -> Store | None:
    """The store `MCP_STORE_URL` names: `redis://host:port/db` (or `rediss://`), or
    `memory:` for this process alone; None when unset or empty. `MCP_STORE_PREFIX`
    (default `mcp`) separates deployments sharing one Redis."""
    env = os.environ if environ is None else environ
    url = env.get(STORE_URL_VARIABLE, "").strip()
    if not url:
        return None
    if url == "memory:":
        from mcp_adapters.store import InMemoryStore

        return InMemoryStore()
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"{STORE_URL_VARIABLE} must be a redis:// URL or memory:, not {url!r}")
    from mcp_adapters.store import RedisStore

    prefix = env.get(STORE_PREFIX_VARIABLE, "").strip() or "mcp"
    return RedisStore(url, prefix=prefix)


def configure_store_from_environment(
    server: MCPServer, environ: Mapping[str, str] | None = None
) -> bool:
    """Give `server` the store of `MCP_STORE_URL` when it is set (the deployment
    decides, as for the key ring); whether it did."""
    store = store_from_environment(environ)
    if store is None:
        return False
    server.store = store
    return True


# ====================================================================== event store


class _Stored:
    __slots__ = ("events", "last")

    def __init__(self, bound: int) -> None:
        self.events: deque[tuple[EventPosition, bytes | None]] = deque(maxlen=bound)
        self.last: EventPosition | None = None


class SharedEventStore:
    """The endpoint's (synchronous) `EventStore`, writing behind to a shared `EventLog`.

    Stream ids are made unique across processes: the endpoint's stream `n` of a
    session is `<tag>.<n>` in the log, `<tag>` naming this process and this
    holding of the session. Event ids are the log's (`<stream>:<ms>-<seq>`,
    minted here with `next_position` and handed over with `append(at=)`), so a
    cursor issued here resumes on any process. What `replay_after` answers for
    another process's stream comes from `prefetch` (the binding reads the log
    before the GET runs); another process's GET stream replays as this
    session's GET stream, which goes on here, and any other stream of theirs as
    a stream that ended (the client learns its call's fate from what was kept).
    """

    def __init__(
        self,
        process_id: str,
        limits: StoreLimits,
        write: Callable[[str, str, bytes | None, EventPosition], None],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._process_id = process_id
        self._limits = limits
        self._write = write
        self._clock = clock
        self._tags: dict[str, str] = {}
        self._numbers = itertools.count(1)
        self._local: dict[str, OrderedDict[str, _Stored]] = {}
        self._prefetched: OrderedDict[tuple[str, str], tuple[str, list[tuple[str, bytes]]]] = (
            OrderedDict()
        )

    def _tag(self, session_id: str) -> str:
        tag = self._tags.get(session_id)
        if tag is None:
            tag = self._tags[session_id] = f"{self._process_id}.{next(self._numbers)}"
        return tag

    def store_event(self, session_id: str, stream_id: str, payload: bytes | None) -> str:
        shared = f"{self._tag(session_id)}.{stream_id}"
        streams = self._local.setdefault(session_id, OrderedDict())
        stored = streams.get(shared)
        if stored is None:
            stored = streams[shared] = _Stored(self._limits.max_events_per_stream)
            if len(streams) > self._limits.max_streams_per_session:
                streams.popitem(last=False)
        else:
            streams.move_to_end(shared)
        position = next_position(stored.last, int(self._clock() * 1000))
        stored.last = position
        stored.events.append((position, payload))
        self._write(session_id, shared, payload, position)
        return format_event_id(shared, position)

    def prefetch(
        self, session_id: str, last_event_id: str, replay: tuple[str, list[tuple[str, bytes]]]
    ) -> None:
        """What the shared log replays after `last_event_id` (read by the binding)."""
        self._prefetched[(session_id, last_event_id)] = replay
        while len(self._prefetched) > 256:  # left by GETs that went away while parked
            self._prefetched.popitem(last=False)

    def _local_id(self, session_id: str, shared: str) -> str:
        mine = self._tags.get(session_id)
        tag, _, number = shared.rpartition(".")
        if mine is not None and tag == mine:
            return number
        if number == "0":
            return "0"  # a GET stream: it goes on here
        return shared

    def replay_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]] | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        shared, position = parsed
        fetched = self._prefetched.pop((session_id, last_event_id), None)
        streams = self._local.get(session_id)
        stored = streams.get(shared) if streams is not None else None
        if stored is not None and stored.last is not None and position <= stored.last:
            events = [
                (format_event_id(shared, p), payload)
                for p, payload in stored.events
                if p > position and payload is not None
            ]
            return self._local_id(session_id, shared), events
        if fetched is None:
            return None
        return self._local_id(session_id, fetched[0]), fetched[1]

    def knows(self, session_id: str, last_event_id: str) -> bool:
        """Whether `last_event_id` names a stream this process keeps for the session."""
        parsed = parse_event_id(last_event_id)
        streams = self._local.get(session_id)
        return parsed is not None and streams is not None and parsed[0] in streams

    def forget_session(self, session_id: str) -> None:
        """This process no longer holds the session; the shared log keeps its
        events (the binding forgets them there when the session is deleted)."""
        self._tags.pop(session_id, None)
        self._local.pop(session_id, None)
        for key in [k for k in self._prefetched if k[0] == session_id]:
            del self._prefetched[key]


# ============================================================================ binding


def _origin_of(message: Any) -> str | None:
    """The process a client's message is for, when its id (an answer) or its
    progress token (our request's id) names one (`tag_request_ids`)."""
    if type(message) is not dict:
        return None
    if "method" not in message:
        return tagged_origin(message.get("id"))
    if message.get("method") == "notifications/progress":
        params = message.get("params")
        return tagged_origin(params.get("progressToken")) if type(params) is dict else None
    return None


def cluster_endpoint(
    server: MCPServer, **options: Any
) -> tuple[SharedSessionEndpoint, ClusterBinding] | None:
    """The endpoint and binding for a server with a store; None without one."""
    store: Store | None = getattr(server, "store", None)
    if store is None:
        return None
    binding = ClusterBinding(server, store)
    options.setdefault("event_store", binding.events)
    endpoint = SharedSessionEndpoint(server.config, **options)
    binding.endpoint = endpoint
    return endpoint, binding


class ClusterBinding:
    """The I/O a `SharedSessionEndpoint` asks for, against a `Store` (module docstring)."""

    def __init__(self, server: MCPServer, store: Store) -> None:
        self.server = server
        self.store = store
        self.process_id = store.process_id
        self.endpoint: SharedSessionEndpoint | None = None
        self._http: HTTPServer | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._tags = itertools.count(1)
        self._appends_in, self._appends = anyio.create_memory_object_stream[
            tuple[str, str, bytes | None, EventPosition]
        ](QUEUE_BOUND)
        self._notes_in, self._notes = anyio.create_memory_object_stream[Notification](QUEUE_BOUND)
        self.events = SharedEventStore(self.process_id, store.limits, self._queue_append)

    # ------------------------------------------------------------------ running

    async def run(
        self,
        http: HTTPServer,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Enter the store and serve the bus, the fan-out and the write-behind
        until cancelled (the HTTP server's task group runs this)."""
        self._http = http
        async with self.store, anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._appender)
            tg.start_soon(self._publisher)
            tg.start_soon(self._inbox)
            tg.start_soon(self._listener)
            # The runner heartbeat: other replicas fail this one's tasks once it stops.
            tg.start_soon(self.server.tasks.keep_alive, self.store)
            self.server.publish_through(self._queue_publish)
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self.server.publish_through(None)
                tg.cancel_scope.cancel()

    def handle(self, event: Event) -> bool:
        """Take the endpoint's `SessionNamed` and `SessionOpened`; False for others."""
        if isinstance(event, SessionNamed):
            self._spawn(self._admit, event)
            return True
        if isinstance(event, SessionOpened):
            self._spawn(self._opened, event)
            return True
        return False

    def _spawn(self, work: Callable[[Any], Any], event: Any) -> None:
        tg = self._tg
        if tg is None:  # not started, or stopping: nothing can be looked up
            assert self.endpoint is not None
            self._emit(self.endpoint.refuse(event.exchange, 503, "server shutting down"))
            return
        tg.start_soon(work, event)

    def _emit(self, events: list[Event]) -> None:
        if self._http is not None:
            self._http.handle_events(events)

    @property
    def _ep(self) -> SharedSessionEndpoint:
        assert self.endpoint is not None
        return self.endpoint

    # --------------------------------------------------------- initialize, requests

    async def _opened(self, event: SessionOpened) -> None:
        ep = self._ep
        conn = event.connection
        tag_request_ids(conn, f"{self.process_id}.{next(self._tags)}-")
        try:
            record = SessionRecord(event.session_id, conn.snapshot(), owner=self.process_id)
            created = await self.store.sessions.create(record)
        except StoreUnavailable as exc:
            self._emit(ep.refuse(event.exchange, 503, f"session store unavailable: {exc}"))
            return
        if created is None:
            self._emit(ep.refuse(event.exchange, 503, "session id already in use"))
            return
        self._emit(ep.release(event.exchange))

    async def _admit(self, event: SessionNamed) -> None:
        ep = self._ep
        try:
            if event.method == "DELETE":
                await self._delete(event)
            elif event.method == "GET":
                await self._stream(event)
            elif event.has_request:
                await self._run_here(event)
            else:
                await self._route(event)
        except StoreUnavailable as exc:
            logger.warning("session store unavailable: %s", exc)
            self._emit(ep.refuse(event.exchange, 503, f"session store unavailable: {exc}"))
        except Exception:
            logger.exception("looking up session %s failed", event.session_id)
            self._emit(ep.refuse(event.exchange, 500, "looking up the session failed"))

    def _proceed(self, event: SessionNamed) -> None:
        self._emit(
            self._ep.proceed(event.exchange, now=anyio.current_time(), wall_time=time.time())
        )

    def _gone(self, event: SessionNamed) -> None:
        """No live record: the session expired or was deleted (everywhere)."""
        ep = self._ep
        events: list[Event] = []
        if event.session_id in ep.sessions:
            events += ep.close_session(event.session_id, "session expired")
        events += ep.refuse(event.exchange, 404, "Session not found", code=INVALID_REQUEST)
        self._emit(events)

    def _hold(self, event: SessionNamed, record: SessionRecord) -> ServerConnection | None:
        """This endpoint's connection for the session, brought up to date, or
        restored and adopted; None when it refused the request instead."""
        ep = self._ep
        snapshot = record.snapshot
        conn = ep.sessions.get(record.session_id)
        if conn is None:
            try:
                conn = ServerConnection.restore(ep.config, snapshot)
            except (LocalProtocolError, ValueError) as exc:
                self._emit(ep.refuse(event.exchange, 400, f"cannot hold this session: {exc}"))
                return None
            tag_request_ids(conn, f"{self.process_id}.{next(self._tags)}-")
            if not ep.adopt(record.session_id, conn):
                self._emit(ep.refuse(event.exchange, 503, "Too many open sessions"))
                return None
        apply_shared_state(conn, log_level=snapshot.log_level, subscriptions=record.subscriptions)
        return conn

    async def _claim(self, session_id: str) -> SessionRecord | None:
        sessions = self.store.sessions
        for _ in range(_CLAIM_TRIES):
            record = await sessions.get(session_id)
            if record is None:
                return None
            if record.owner == self.process_id:
                await sessions.touch(session_id)
                return record
            claimed = await sessions.claim(session_id, self.process_id, expected_owner=record.owner)
            if claimed is not None:
                return claimed
        raise StoreUnavailable(
            "sessions.claim", f"session {session_id!r} changed hands {_CLAIM_TRIES} times"
        )

    async def _run_here(self, event: SessionNamed) -> None:
        record = await self._claim(event.session_id)
        if record is None:
            self._gone(event)
            return
        conn = self._hold(event, record)
        if conn is None:
            return
        await self._save_ahead(event, record, conn)
        await self._forward_foreign(event)
        self._proceed(event)

    async def _forward_foreign(self, event: SessionNamed) -> None:
        """A 2025-03-26 batch mixing requests with answers runs here, but an answer
        (or progress) it carries for a request another process is waiting on goes
        to that process over the bus, one message each, as a body of only answers
        would. Here those messages meet no request of ours and are ignored
        (`ResponseIgnored`: the ids name their process). Anything else in the
        batch (`notifications/cancelled` ...) takes effect here, this process
        being the session's owner from this request on."""
        if len(event.messages) < 2:
            return
        for message in event.messages:
            origin = _origin_of(message)
            if origin is None or origin == self.process_id:
                continue
            payload = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
            if not await self.store.bus.send(
                origin, BusMessage(payload, event.session_id, self.process_id)
            ):
                logger.info("nobody at %s for a message of session %s", origin, event.session_id)

    async def _save_ahead(
        self, event: SessionNamed, record: SessionRecord, conn: ServerConnection
    ) -> None:
        """Record what the body's requests will change before they run, so the
        answer never reaches the client before the record says it."""
        snapshot = record.snapshot
        subscriptions = set(record.subscriptions)
        for message in event.messages:
            if type(message) is not dict:
                continue
            method, params = message.get("method"), message.get("params")
            if type(params) is not dict:
                continue
            if method == "logging/setLevel" and params.get("level") in _LOG_LEVELS:
                snapshot = replace(snapshot, log_level=params["level"])
            elif method in _UNSAVED_METHODS and isinstance(params.get("uri"), str):
                if method == "resources/subscribe":
                    subscriptions.add(params["uri"])
                else:
                    subscriptions.discard(params["uri"])
        if snapshot == record.snapshot and subscriptions == record.subscriptions:
            return
        saved = await self.store.sessions.save(
            SessionRecord(record.session_id, snapshot, self.process_id, frozenset(subscriptions))
        )
        if saved is None:
            logger.info("session %s changed hands before its change was saved", record.session_id)

    # ----------------------------------------------------- answers, notifications

    def _principal_ok(self, event: SessionNamed, record: SessionRecord) -> bool:
        """Whether the request's principal is the one the session is bound to, named
        as the endpoint names it: the verified token's with `auth=` (then
        `principal_of` is not used), else `principal_of`'s."""
        ep = self._ep
        head = event.exchange.head
        if head is None:
            return False  # no request head to judge: refuse rather than guess
        if ep.auth is not None:
            principal = head.token.principal if head.token is not None else None
        elif ep.principal_of is not None:
            principal = ep.principal_of(head)
        else:
            return True
        return principal == record.snapshot.principal

    def _destination(self, event: SessionNamed, record: SessionRecord) -> str | None:
        """Which process waits for these messages: a response's id or a progress
        token names it (`tag_request_ids`); anything else goes to the owner."""
        for message in event.messages:
            origin = _origin_of(message)
            if origin is not None:
                return origin
        return record.owner

    async def _route(self, event: SessionNamed) -> None:
        ep = self._ep
        record = await self.store.sessions.get(event.session_id)
        if record is None or not self._principal_ok(event, record):
            self._gone(event)
            return
        target = self._destination(event, record)
        if target is None or target == self.process_id:
            if event.held:
                self._proceed(event)
            else:  # it was for a connection this process no longer has
                self._emit(ep.answer(event.exchange))
            return
        message = BusMessage(event.payload(), event.session_id, self.process_id)
        if not await self.store.bus.send(target, message):
            # The process that asked is gone, and its request with it.
            logger.info("nobody at %s for a message of session %s", target, event.session_id)
        self._emit(ep.answer(event.exchange))

    # ------------------------------------------------------------ GET and DELETE

    async def _stream(self, event: SessionNamed) -> None:
        record = await self.store.sessions.get(event.session_id)
        if record is None or not self._principal_ok(event, record):
            self._gone(event)
            return
        await self.store.sessions.touch(event.session_id)
        if self._hold(event, record) is None:
            return
        cursor = event.last_event_id
        if cursor is not None:
            replay = await self.store.events.replay_after(event.session_id, cursor)
            if replay is not None:
                self.events.prefetch(event.session_id, cursor, replay)
            elif not self.events.knows(event.session_id, cursor):
                # Written behind by a process that died before its events were
                # kept: the call it carried is lost with it, and the client must
                # hear so (400 fails that call, not the session).
                self._emit(self._ep.refuse(event.exchange, 400, LOST_STREAM, code=INVALID_REQUEST))
                return
        self._proceed(event)

    async def _delete(self, event: SessionNamed) -> None:
        ep = self._ep
        sid = event.session_id
        record = await self.store.sessions.get(sid)
        if record is not None and not self._principal_ok(event, record):
            self._gone(event)
            return
        existed = await self.store.sessions.delete(sid)
        await self.store.events.forget(sid)
        if existed:
            self._queue_publish(SESSION_ENDED, {"sessionId": sid})
        if event.held:
            self._proceed(event)
        elif existed:
            self._emit(ep.answer(event.exchange, 200))
        else:
            self._gone(event)

    # ---------------------------------------------------------------- the bus

    async def _inbox(self) -> None:
        while True:
            try:
                async with self.store.bus.inbox() as inbox:
                    async for message in inbox:
                        if message.session_id is not None:
                            self._emit(
                                self._ep.deliver(
                                    message.session_id, message.payload, wall_time=time.time()
                                )
                            )
            except StoreUnavailable as exc:
                logger.warning("bus inbox unavailable, retrying: %s", exc)
            await anyio.sleep(_RETRY_DELAY)

    # ---------------------------------------------------------------- the fan-out

    def _queue_publish(self, method: str, params: Any = None) -> None:
        """What `MCPServer.notify_*` call with a store: publish to every process."""
        note = Notification(method, params, self.process_id)
        try:
            self._notes_in.send_nowait(note)
        except anyio.WouldBlock:
            logger.warning("fan-out queue full: %s dropped", method)

    async def _publisher(self) -> None:
        async for note in self._notes:
            try:
                await self.store.fanout.publish(note)
            except StoreUnavailable as exc:
                logger.warning("could not publish %s: %s", note.method, exc)

    async def _listener(self) -> None:
        while True:
            try:
                async with self.store.fanout.listen() as listener:
                    async for note in listener:
                        try:
                            await self._pass_on(note)
                        except StoreUnavailable as exc:
                            logger.warning("could not pass on %s: %s", note.method, exc)
            except StoreUnavailable as exc:
                logger.warning("fan-out listener unavailable, retrying: %s", exc)
            await anyio.sleep(_RETRY_DELAY)

    async def _pass_on(self, note: Notification) -> None:
        ep = self._ep
        params = dict(note.params) if note.params is not None else None
        if note.method == SESSION_ENDED:
            sid = params.get("sessionId") if params is not None else None
            if isinstance(sid, str) and sid in ep.sessions:
                self._emit(ep.close_session(sid, "session terminated by the client"))
            return
        told: list[ServerConnection] = []
        held = ep.sessions
        for sid, conn in held.items():
            if not ep.has_live_stream(sid):
                continue  # the process with its GET stream passes it on
            if note.method == "notifications/resources/updated":
                record = await self.store.sessions.get(sid)
                if record is None or ep.sessions.get(sid) is not conn:
                    continue
                apply_shared_state(
                    conn,
                    log_level=conn.log_level,
                    subscriptions=record.subscriptions,
                )
            try:
                if conn.notify_subscribers(note.method, params):
                    told.append(conn)
            except LocalProtocolError as exc:  # closed, or its output is full
                logger.debug("not passing %s on: %s", note.method, exc)
        self.server.notify_local(note.method, params, exclude=set(held.values()))
        if told and self._http is not None:
            self._http.flush(*told)

    # ------------------------------------------------------------- write-behind

    def _queue_append(
        self, session_id: str, stream_id: str, payload: bytes | None, at: EventPosition
    ) -> None:
        try:
            self._appends_in.send_nowait((session_id, stream_id, payload, at))
        except anyio.WouldBlock:
            logger.warning("event write-behind queue full: an event of %s not kept", session_id)

    async def _appender(self) -> None:
        async for session_id, stream_id, payload, at in self._appends:
            try:
                await self.store.events.append(session_id, stream_id, payload, at=at)
            except (StoreUnavailable, ValueError) as exc:
                logger.debug("event of %s not kept in the shared log: %s", session_id, exc)
