"""The store interface: what must cross processes when one endpoint runs on several.

Five parts, each a small protocol, all async (anyio: asyncio or trio):

* `SessionRegistry`: legacy sessions, so any process can restore one
  (`SessionRecord`), with expiry and an owner that only changes hands by
  compare-and-set (`claim`), so two processes never both think they hold it;
* `EventLog`: the SSE events of resumable legacy streams, so a client can
  resume on another process (`Last-Event-ID`), bounded in length and age;
* `Bus`: point-to-point delivery to the process holding a request (the
  client's answer to `elicitation/create`, `notifications/cancelled`,
  progress), addressed by that process's `process_id`;
* `FanOut`: one notification to every process (list_changed,
  resources/updated), each passing it on to its own sessions and
  `subscriptions/listen` streams;
* `TaskRegistry`: tasks (both eras) by id, so that `tasks/get` and a task's
  result work on any process and after the connection that created it is gone.

Every method may raise `StoreUnavailable` (never for the in-memory store), and
never waits unboundedly. A store is an async context manager: enter it once,
in a task that outlives its users (a server's lifespan), before using it.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Protocol, Self

from mcp_adapters.store._event_ids import EventPosition
from mcp_adapters.store._limits import StoreLimits
from mcp_adapters.store._records import BusMessage, Notification, SessionRecord, TaskRecord
from mcp_adapters.store._subscription import Subscription

__all__ = ["Bus", "EventLog", "FanOut", "SessionRegistry", "Store", "TaskRegistry"]


class SessionRegistry(Protocol):
    """Legacy sessions by id. Every write renews the record's expiry
    (`StoreLimits.session_ttl`); an expired record is gone for every method.

    Writes other than `create` and `claim` only succeed for the record's
    current owner, so a process that lost a session cannot overwrite it.
    """

    async def create(self, record: SessionRecord) -> SessionRecord | None:
        """Store a new session; the stored record (with `expires_at`), or None
        if a live session already has that id (nothing is changed then)."""
        ...

    async def get(self, session_id: str) -> SessionRecord | None:
        """The live record, or None."""
        ...

    async def save(self, record: SessionRecord) -> SessionRecord | None:
        """Replace a live record whose owner is `record.owner` (after a log
        level or subscription change); the stored record, or None if the
        session is gone or another process owns it now."""
        ...

    async def touch(self, session_id: str) -> float | None:
        """Renew a live record's expiry (a request arrived); the new expiry, or None."""
        ...

    async def claim(
        self, session_id: str, owner: str | None, *, expected_owner: str | None
    ) -> SessionRecord | None:
        """Compare-and-set the owner: only if it is `expected_owner` now. The
        stored record, or None (gone, or someone else got there first)."""
        ...

    async def delete(self, session_id: str) -> bool:
        """End the session everywhere; whether a live one was there."""
        ...


class EventLog(Protocol):
    """The events of resumable legacy SSE streams, per (session, stream).

    The async twin of `mcp_core.http.EventStore`, with the same rules: ids are
    unique within a session and name their stream, and `replay_after` never
    returns another stream's or another session's events. Each stream keeps
    at most `max_events_per_stream` events, none older than `max_event_age`;
    a session keeps at most `max_streams_per_session` streams.
    """

    async def append(
        self,
        session_id: str,
        stream_id: str,
        payload: bytes | None,
        *,
        at: EventPosition | None = None,
    ) -> str:
        """Keep one event (None: a priming event, never replayed) and return its id.

        The log picks the position (`next_position` of the store's clock)
        unless `at` names one, which must come after the stream's newest
        event (ValueError otherwise): for a process that minted the id itself.
        """
        ...

    async def replay_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]] | None:
        """(stream id, the later events still kept as (id, payload)), or None
        for an id this session never issued on a stream it still has."""
        ...

    async def forget(self, session_id: str) -> None:
        """The session ended: drop all its streams."""
        ...


class Bus(Protocol):
    """Point-to-point messages to the process holding a request.

    Delivery is to the processes listening at the time of sending, at most
    once: what is sent to a process that is down, or while its inbox is
    reconnecting, is lost (its requests in flight are lost with it anyway;
    `send` says so by returning False when nobody received it).
    """

    async def send(self, owner: str, message: BusMessage) -> bool:
        """Deliver to the inbox of process `owner`; False if no inbox got it."""
        ...

    def inbox(self) -> AbstractAsyncContextManager[Subscription[BusMessage]]:
        """This process's inbox (its `process_id`), open while the block runs:
        whatever is sent after entering is delivered."""
        ...


class FanOut(Protocol):
    """One notification to every process listening at the time (at most once,
    as the bus; a listener that was down has missed it)."""

    async def publish(self, notification: Notification) -> int:
        """Send to every listener (this process's too); how many listeners got it
        (one whose reader is behind counts: it drops the message, see `Subscription`)."""
        ...

    def listen(self) -> AbstractAsyncContextManager[Subscription[Notification]]:
        """Every notification published after entering, until the block ends."""
        ...


class TaskRegistry(Protocol):
    """Tasks by id, each kept until its own expiry: the store's clock at
    creation plus the record's `ttl_ms`, however often it is written (the
    spec's TTL counts from creation). An expired task is gone for every method.

    A terminal record (completed, failed, cancelled) is never overwritten:
    whichever of "the work finished" and "the client cancelled" is written
    first wins, on every process. The client's answers (`respond`) are merged
    apart from the rest, so an answer and a status change never lose each other.

    Runner liveness: a process that runs task bodies renews a heartbeat
    (`beat`) under its `process_id`, which its records name as `runner`. A
    heartbeat holds until the store's clock passes its expiry; a task whose
    runner's heartbeat does not hold may be failed by any process
    (`fail_orphan`), in one step with that check, so a runner that is beating
    never has its task failed under it.
    """

    async def create(self, record: TaskRecord) -> TaskRecord | None:
        """Store a new task (durable once this returns); the stored record (with
        `expires_at`), or None if a live task already has that id."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The live record, with every answer given so far, or None."""
        ...

    async def update(self, record: TaskRecord) -> TaskRecord | None:
        """Replace a live, non-terminal record (its answers and expiry kept); the
        stored record, or None if the task is gone or already terminal."""
        ...

    async def respond(self, task_id: str, responses: dict[str, object]) -> bool:
        """Merge answers by key into a live, non-terminal task; whether it was one."""
        ...

    async def list(self, owner: str | None, limit: int) -> list[TaskRecord]:
        """Up to `limit` live tasks of `owner`, oldest first."""
        ...

    async def delete(self, task_id: str) -> bool:
        """Forget a task everywhere; whether a live one was there."""
        ...

    async def beat(self, expiry: float) -> bool:
        """This process (the store's `process_id`) is alive and runs tasks: its
        heartbeat holds until the store's clock plus `expiry` seconds. Whether the
        previous heartbeat still held (False for the first one, and after a lapse,
        during which other processes may have failed this one's tasks)."""
        ...

    async def runner_alive(self, process_id: str) -> bool:
        """Whether the heartbeat of `process_id` holds now."""
        ...

    async def fail_orphan(self, record: TaskRecord) -> TaskRecord | None:
        """Write `record`, a `failed` record whose `runner` is gone, only if in one
        step: the task is live and not terminal, and the heartbeat of
        `record.runner` does not hold. The stored record, or None (the task is
        gone or ended, or its runner is alive after all). ValueError for a record
        that is not `failed` or names no runner."""
        ...


class Store(Protocol):
    """The five parts together, for one process (`process_id`)."""

    @property
    def process_id(self) -> str:
        """This process's address on the bus and its name as a session owner."""
        ...

    @property
    def limits(self) -> StoreLimits: ...

    @property
    def sessions(self) -> SessionRegistry: ...

    @property
    def events(self) -> EventLog: ...

    @property
    def bus(self) -> Bus: ...

    @property
    def fanout(self) -> FanOut: ...

    @property
    def tasks(self) -> TaskRegistry: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
