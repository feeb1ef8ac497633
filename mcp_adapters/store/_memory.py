"""`InMemoryStore`: the default store, for one process (nothing to start).

All state lives in a `MemoryHub`. Each store makes its own unless given one;
two stores sharing a hub behave like two processes sharing a Redis server
(the contract tests use that), with one `process_id` each.

Expiry and age use the store's clock (`clock`, wall-clock seconds by default;
inject one to test expiry without waiting). Expired entries are dropped when
they are next looked at, and swept in order of expiry on every write, so
memory is bounded by what is live.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Self

from mcp_adapters.store._errors import StoreError
from mcp_adapters.store._event_ids import (
    EventPosition,
    check_position,
    format_event_id,
    next_position,
    parse_event_id,
)
from mcp_adapters.store._interface import Store
from mcp_adapters.store._limits import StoreLimits
from mcp_adapters.store._records import (
    BusMessage,
    Notification,
    SessionRecord,
    TaskRecord,
    check_orphan_failure,
)
from mcp_adapters.store._subscription import Subscription

__all__ = ["InMemoryStore", "MemoryHub"]

Clock = Callable[[], float]


class _StreamLog:
    """A deque with `maxlen`: a stream's log keeps its newest events and drops the oldest, so a
    client far behind gets what is left rather than the store growing. `last` is kept apart
    because it must survive its entry being dropped: positions only go forward, even past a
    trimmed log.
    """

    __slots__ = ("entries", "last")

    def __init__(self, bound: int) -> None:
        self.entries: deque[tuple[EventPosition, bytes | None]] = deque(maxlen=bound)
        self.last: EventPosition | None = None


class MemoryHub:
    """The state of in-memory stores: sessions, event logs, inboxes, listeners."""

    def __init__(self) -> None:
        # session id -> record, in order of expiry (a write moves it to the end)
        self.sessions: OrderedDict[str, SessionRecord] = OrderedDict()
        # session id -> stream id -> log; both in order of last append
        self.logs: OrderedDict[str, OrderedDict[str, _StreamLog]] = OrderedDict()
        self.inboxes: dict[str, set[Subscription[BusMessage]]] = {}
        self.listeners: set[Subscription[Notification]] = set()
        # task id -> record, in order of expiry (fixed at creation); answers apart
        self.tasks: dict[str, TaskRecord] = {}
        self.task_answers: dict[str, dict[str, object]] = {}
        # process id -> until when its runner heartbeat holds (store clock)
        self.heartbeats: dict[str, float] = {}


class _Sessions:
    """Session records with a sliding expiry (each write renews it), as Redis keys with a TTL
    behave, so the contract tests can run one suite against both stores.
    """

    def __init__(self, store: InMemoryStore) -> None:
        self._store = store
        self._hub = store.hub

    def _now(self) -> float:
        return self._store.clock()

    def _sweep(self, now: float) -> None:
        """Records are kept in order of expiry (every write moves one to the end with the same
        TTL), so the sweep stops at the first live one: O(expired), not O(sessions).
        """
        sessions = self._hub.sessions
        while sessions:
            session_id, record = next(iter(sessions.items()))
            if record.expires_at > now:
                return
            del sessions[session_id]

    def _live(self, session_id: str, now: float) -> SessionRecord | None:
        """Expired records are dropped on lookup too: a sweep only runs on writes, and a read
        must never see a session past its TTL.
        """
        record = self._hub.sessions.get(session_id)
        if record is not None and record.expires_at <= now:
            del self._hub.sessions[session_id]
            return None
        return record

    def _put(self, record: SessionRecord, now: float) -> SessionRecord:
        stored = dataclasses.replace(record, expires_at=now + self._store.limits.session_ttl)
        sessions = self._hub.sessions
        sessions[record.session_id] = stored
        sessions.move_to_end(record.session_id)
        return stored

    async def create(self, record: SessionRecord) -> SessionRecord | None:
        """None when the id is taken: ids are minted at random, so a clash means two processes
        raced for one id, and the loser must mint another rather than share a session.
        """
        now = self._now()
        self._sweep(now)
        if self._live(record.session_id, now) is not None:
            return None
        return self._put(record, now)

    async def get(self, session_id: str) -> SessionRecord | None:
        return self._live(session_id, self._now())

    async def save(self, record: SessionRecord) -> SessionRecord | None:
        """Only the current owner may save: a process that lost the session to another
        (`claim`) must not overwrite what the new owner wrote.
        """
        now = self._now()
        self._sweep(now)
        current = self._live(record.session_id, now)
        if current is None or current.owner != record.owner:
            return None
        return self._put(record, now)

    async def touch(self, session_id: str) -> float | None:
        """The renewed expiry is returned so the owner knows how long it holds the session
        without asking again.
        """
        now = self._now()
        self._sweep(now)
        current = self._live(session_id, now)
        if current is None:
            return None
        return self._put(current, now).expires_at

    async def claim(
        self, session_id: str, owner: str | None, *, expected_owner: str | None
    ) -> SessionRecord | None:
        """A compare-and-set on the owner, the one atomic step a session move needs: two
        replicas claiming at once cannot both win.
        """
        now = self._now()
        self._sweep(now)
        current = self._live(session_id, now)
        if current is None or current.owner != expected_owner:
            return None
        return self._put(dataclasses.replace(current, owner=owner), now)

    async def delete(self, session_id: str) -> bool:
        """Whether a live session was deleted, so the caller can tell ending a session from
        finding it already gone.
        """
        live = self._live(session_id, self._now()) is not None
        self._hub.sessions.pop(session_id, None)
        return live


class _Events:
    """SSE event logs for resumption across processes: positions are ordered per stream, and
    event ids carry the position so any replica can resume any stream.
    """

    def __init__(self, store: InMemoryStore) -> None:
        self._store = store
        self._hub = store.hub

    def _now_ms(self) -> int:
        """Milliseconds, as positions are: the age limit compares positions with the clock."""
        return int(self._store.clock() * 1000)

    def _oldest_ms(self, now_ms: int) -> int:
        return now_ms - int(self._store.limits.max_event_age * 1000)

    def _sweep(self, oldest: int) -> None:
        """Drop the sessions whose last append is older than the age limit."""
        logs = self._hub.logs
        while logs:
            session_id, streams = next(iter(logs.items()))
            newest = next(reversed(streams.values()), None)
            if newest is not None and newest.last is not None and newest.last.ms >= oldest:
                return
            del logs[session_id]

    async def append(
        self,
        session_id: str,
        stream_id: str,
        payload: bytes | None,
        *,
        at: EventPosition | None = None,
    ) -> str:
        """`at` lets a replica append at a position it already promised (an id sent before the
        store write): `check_position` refuses one that would go backwards, so a stream's
        events never reorder.
        """
        limits = self._store.limits
        now_ms = self._now_ms()
        oldest = self._oldest_ms(now_ms)
        self._sweep(oldest)
        logs = self._hub.logs
        streams = logs.get(session_id)
        if streams is None:
            streams = logs[session_id] = OrderedDict()
        logs.move_to_end(session_id)
        log = streams.get(stream_id)
        if at is not None:
            check_position(at, log.last if log is not None else None)
        if log is None:
            log = streams[stream_id] = _StreamLog(limits.max_events_per_stream)
            while len(streams) > limits.max_streams_per_session:
                streams.popitem(last=False)
        streams.move_to_end(stream_id)
        position = at if at is not None else next_position(log.last, now_ms)
        log.last = position
        log.entries.append((position, payload))
        while log.entries and log.entries[0][0].ms < oldest:
            log.entries.popleft()
        return format_event_id(stream_id, position)

    async def replay_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]] | None:
        """A cursor after the log's last position, or for a stream older than the age limit, is
        unknown (None): replaying from it would skip events silently. Priming events (no
        payload) carry nothing and are not replayed.
        """
        parsed = parse_event_id(last_event_id)
        streams = self._hub.logs.get(session_id)
        if parsed is None or streams is None:
            return None
        stream_id, after = parsed
        log = streams.get(stream_id)
        oldest = self._oldest_ms(self._now_ms())
        if log is None or log.last is None or after > log.last or log.last.ms < oldest:
            return None
        return stream_id, [
            (format_event_id(stream_id, position), payload)
            for position, payload in log.entries
            if position > after and payload is not None and position.ms >= oldest
        ]

    async def forget(self, session_id: str) -> None:
        self._hub.logs.pop(session_id, None)


class _Bus:
    """Process-to-process messages (a request for a session another replica holds), one inbox
    set per process id.
    """

    def __init__(self, store: InMemoryStore) -> None:
        self._store = store
        self._hub = store.hub

    async def send(self, owner: str, message: BusMessage) -> bool:
        """True when some process listens under `owner`, as a Redis PUBLISH reports its
        receivers: a False tells the sender nobody received it (the owner is down), so it
        can answer at once instead of waiting for a reply that cannot come.
        """
        if len(message.payload) > self._store.limits.max_message_bytes:
            raise ValueError("bus message payload over max_message_bytes")
        # Received by the process even if its reader is behind (then counted in
        # `dropped`), as PUBLISH counts a subscriber whatever it does next.
        inboxes = tuple(self._hub.inboxes.get(owner, ()))
        for inbox in inboxes:
            inbox.offer(message)
        return bool(inboxes)

    @contextlib.asynccontextmanager
    async def inbox(self) -> AsyncIterator[Subscription[BusMessage]]:
        """Bounded (`max_pending_messages`): a process whose reader falls behind loses messages
        (counted in `dropped`) rather than making the sender's memory grow.
        """
        subscription = Subscription[BusMessage](self._store.limits.max_pending_messages)
        inboxes = self._hub.inboxes
        inboxes.setdefault(self._store.process_id, set()).add(subscription)
        try:
            yield subscription
        finally:
            mine = inboxes.get(self._store.process_id)
            if mine is not None:
                mine.discard(subscription)
                if not mine:
                    del inboxes[self._store.process_id]
            subscription.discard()


class _FanOut:
    """Notifications every replica must see (a list changed, a task's status), for the listen
    streams each of them holds.
    """

    def __init__(self, store: InMemoryStore) -> None:
        self._store = store
        self._hub = store.hub

    async def publish(self, notification: Notification) -> int:
        listeners = tuple(self._hub.listeners)
        for listener in listeners:
            listener.offer(notification)
        return len(listeners)

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[Subscription[Notification]]:
        subscription = Subscription[Notification](self._store.limits.max_pending_messages)
        self._hub.listeners.add(subscription)
        try:
            yield subscription
        finally:
            self._hub.listeners.discard(subscription)
            subscription.discard()


class _Tasks:
    """Tasks in the hub. Expiry is fixed at creation, so the dict's insertion
    order is the order of expiry whenever the TTLs are alike; a sweep drops
    expired entries from the front and `_live` catches the rest on lookup."""

    def __init__(self, store: InMemoryStore) -> None:
        self._store = store
        self._hub = store.hub

    def _now(self) -> float:
        return self._store.clock()

    def _live(self, task_id: str, now: float) -> TaskRecord | None:
        record = self._hub.tasks.get(task_id)
        if record is not None and record.expires_at <= now:
            self._forget(task_id)
            return None
        return record

    def _forget(self, task_id: str) -> None:
        self._hub.tasks.pop(task_id, None)
        self._hub.task_answers.pop(task_id, None)

    def _sweep(self, now: float) -> None:
        for task_id, record in list(self._hub.tasks.items()):
            if record.expires_at > now:
                return
            self._forget(task_id)

    def _with_answers(self, record: TaskRecord) -> TaskRecord:
        """Answers are kept apart from the record because `respond` may run on any replica
        while the runner updates the record: merging them on read means neither write can
        lose the other's.
        """
        answers = self._hub.task_answers.get(record.task_id)
        return dataclasses.replace(record, input_responses=dict(answers) if answers else None)

    async def create(self, record: TaskRecord) -> TaskRecord | None:
        """The cap is checked after the sweep, so expired tasks never count against it; over it
        the store refuses (StoreError) and no task is created, which the server reports as a
        failed call.
        """
        now = self._now()
        self._sweep(now)
        if self._live(record.task_id, now) is not None:
            return None
        if len(self._hub.tasks) >= self._store.limits.max_tasks:
            raise StoreError(f"the store keeps at most {self._store.limits.max_tasks} tasks")
        stored = dataclasses.replace(
            record, input_responses=None, expires_at=now + record.ttl_ms / 1000
        )
        self._hub.tasks[record.task_id] = stored
        if record.input_responses:
            self._hub.task_answers[record.task_id] = dict(record.input_responses)
        return self._with_answers(stored)

    async def get(self, task_id: str) -> TaskRecord | None:
        record = self._live(task_id, self._now())
        return None if record is None else self._with_answers(record)

    async def update(self, record: TaskRecord) -> TaskRecord | None:
        """A terminal record is never updated again: a cancel (written by any replica) wins
        over a body finishing late, as both task specs require a terminal status to stand.
        """
        current = self._live(record.task_id, self._now())
        if current is None or current.terminal:
            return None
        stored = dataclasses.replace(record, input_responses=None, expires_at=current.expires_at)
        self._hub.tasks[record.task_id] = stored
        return self._with_answers(stored)

    async def respond(self, task_id: str, responses: dict[str, object]) -> bool:
        current = self._live(task_id, self._now())
        if current is None or current.terminal:
            return False
        self._hub.task_answers.setdefault(task_id, {}).update(responses)
        return True

    async def list(self, owner: str | None, limit: int) -> list[TaskRecord]:
        """Filtered by owner: `tasks/list` must never show one requester another's tasks."""
        now = self._now()
        self._sweep(now)
        found = [
            self._with_answers(record)
            for record in self._hub.tasks.values()
            if record.owner == owner and record.expires_at > now
        ]
        return found[: max(limit, 0)]

    async def delete(self, task_id: str) -> bool:
        live = self._live(task_id, self._now()) is not None
        self._forget(task_id)
        return live

    # One process alone on its hub beats for itself and reads only its own
    # heartbeat; stores sharing a hub play several processes, as on Redis.

    async def beat(self, expiry: float) -> bool:
        now = self._now()
        beats = self._hub.heartbeats
        for process_id, until in list(beats.items()):  # one entry per process that beat
            if until <= now:
                del beats[process_id]
        held = self._store.process_id in beats
        beats[self._store.process_id] = now + expiry
        return held

    def _alive(self, process_id: str, now: float) -> bool:
        until = self._hub.heartbeats.get(process_id)
        return until is not None and until > now

    async def runner_alive(self, process_id: str) -> bool:
        return self._alive(process_id, self._now())

    async def fail_orphan(self, record: TaskRecord) -> TaskRecord | None:
        check_orphan_failure(record)
        now = self._now()
        current = self._live(record.task_id, now)
        if current is None or current.terminal or self._alive(record.runner or "", now):
            return None
        stored = dataclasses.replace(record, input_responses=None, expires_at=current.expires_at)
        self._hub.tasks[record.task_id] = stored
        return self._with_answers(stored)


class InMemoryStore:
    """A `Store` in this process's memory; never raises `StoreUnavailable`.

    `hub` shares state with other in-memory stores (tests use it to play two
    processes); `process_id` defaults to a random token.
    """

    def __init__(
        self,
        *,
        hub: MemoryHub | None = None,
        limits: StoreLimits | None = None,
        clock: Clock = time.time,
        process_id: str | None = None,
    ) -> None:
        self.hub = hub if hub is not None else MemoryHub()
        self.clock = clock
        self._limits = limits or StoreLimits()
        self._process_id = process_id or secrets.token_hex(8)
        self._sessions = _Sessions(self)
        self._events = _Events(self)
        self._bus = _Bus(self)
        self._fanout = _FanOut(self)
        self._tasks = _Tasks(self)

    @property
    def process_id(self) -> str:
        return self._process_id

    @property
    def limits(self) -> StoreLimits:
        return self._limits

    @property
    def sessions(self) -> _Sessions:
        return self._sessions

    @property
    def events(self) -> _Events:
        return self._events

    @property
    def bus(self) -> _Bus:
        return self._bus

    @property
    def fanout(self) -> _FanOut:
        return self._fanout

    @property
    def tasks(self) -> _Tasks:
        return self._tasks

    async def __aenter__(self) -> Self:
        """Nothing to open or close: the context protocol exists so that code written for the
        Redis store (which connects) runs unchanged against this one.
        """
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


if TYPE_CHECKING:

    def _is_a_store(store: InMemoryStore) -> Store:  # mypy checks the structural match
        return store
