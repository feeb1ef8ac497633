"""`RedisStore`: the shared store for several processes, on Redis (>= 7.0).

The client library is coredis (the `redis` extra): it is built on anyio, so
the same store runs under asyncio and trio, as the server does.

Layout (every key under `prefix`; a session's keys share the hash tag
`{<session id>}`, so they sit in one cluster slot and a script may touch them
all; ids are percent-escaped so no id can forge another's key):

* `<prefix>:s:{<sid>}`: hash `body` (the `SessionRecord` JSON), `owner`, `exp`
  (the authoritative owner and expiry, changed atomically by scripts);
  Redis' own TTL (`session_ttl`) collects it, `exp` (the store's clock) decides
  whether it is live;
* `<prefix>:e:{<sid>}:<stream>`: one Redis stream per SSE stream, ids
  `<ms>-<seq>` from the store's clock, trimmed to `max_events_per_stream`
  (MAXLEN) and `max_event_age` (MINID) on every append, and collected by TTL
  once idle for the age limit; `<prefix>:ei:{<sid>}` (a sorted set, by a
  counter `<prefix>:en:{<sid>}`) lists a session's streams, least recently
  written first, for the per-session stream bound and `forget`;
* `<prefix>:t:{<task id>}`: hash `body` (the `TaskRecord` JSON without the
  answers), `status`, `exp` (fixed at creation: the store's clock plus the
  task's `ttlMs`); `<prefix>:ta:{<task id>}` a hash of the client's answers by
  key (JSON each), merged by a script so that an answer never overwrites a
  status change or the other way round; `<prefix>:to:<owner>` a sorted set of
  an owner's task ids by expiry, for `tasks/list`; Redis' TTL collects all three;
* `<prefix>:hb:<process id>`: a runner's heartbeat, the store-clock time it
  holds until (that value decides; PX, the same expiry, collects it);
* the bus and the fan-out are pub/sub channels, `<prefix>:bus:<process id>` and
  `<prefix>:fanout`.

Why pub/sub for the bus and the fan-out (and not streams): both carry
messages for whoever is listening *now*. A bus message is for a request held
in one process's memory; if that process is down the request is gone, and a
message kept for it would only pile up. PUBLISH says at once how many
processes received it, so the sender knows when nobody holds the request. A
fan-out notification is a hint ("the tool list changed"); a listener that was
away re-reads the lists when its clients reconnect. What is lost: anything
published while a subscriber's connection is down or reconnecting.

Failures: every command runs under `command_timeout` (socket reads),
`connect_timeout` (new connections) and an overall `operation_timeout`, and a
Redis that cannot be reached or does not answer raises `StoreUnavailable`
instead of waiting. Nothing needs restarting afterwards: the next command
opens a new connection, and inboxes and listeners resubscribe by themselves
(with backoff up to `reconnect_max_delay`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self, TypeVar
from urllib.parse import quote

import anyio
import anyio.abc
import coredis
import coredis.exceptions
from coredis.retry import ConstantRetryPolicy, NoRetryPolicy

from mcp_adapters.store._errors import StoreUnavailable
from mcp_adapters.store._event_ids import (
    EventPosition,
    check_position,
    format_event_id,
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

__all__ = ["RedisStore"]

logger = logging.getLogger("mcp_adapters.store")

T = TypeVar("T")
Clock = Callable[[], float]

#: What "Redis cannot be reached or did not answer" looks like from coredis and anyio.
_UNAVAILABLE: Final[tuple[type[BaseException], ...]] = (
    coredis.exceptions.ConnectionError,
    TimeoutError,
    OSError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)
# Visible ASCII except the characters that structure our keys.
_SAFE: Final = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "%{}:")


def _part(text: str) -> str:
    return quote(text, safe=_SAFE)


def _unavailable(exc: BaseException) -> bool:
    """True if `exc`, or every leaf of an exception group, means Redis is out of reach."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_unavailable(inner) for inner in exc.exceptions)
    return isinstance(exc, _UNAVAILABLE)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, str):
        return value
    raise TypeError(f"unexpected reply from Redis: {value!r}")


# ------------------------------------------------------------------- scripts
# Each registry script starts by reading `exp`: a record whose expiry (store
# clock, ARGV[1]) has passed counts as absent, whatever Redis' TTL says.

_LIVE: Final = """
local exp = redis.call('HGET', KEYS[1], 'exp')
local live = exp and tonumber(exp) > tonumber(ARGV[1])
"""

_CREATE: Final = (
    _LIVE
    + """
if live then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'body', ARGV[4], 'owner', ARGV[5], 'exp', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
)

_SAVE: Final = (
    _LIVE
    + """
if not live or redis.call('HGET', KEYS[1], 'owner') ~= ARGV[5] then return 0 end
redis.call('HSET', KEYS[1], 'body', ARGV[4], 'exp', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
)

_TOUCH: Final = (
    _LIVE
    + """
if not live then return 0 end
redis.call('HSET', KEYS[1], 'exp', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
)

_CLAIM: Final = (
    _LIVE
    + """
if not live or redis.call('HGET', KEYS[1], 'owner') ~= ARGV[4] then return false end
redis.call('HSET', KEYS[1], 'owner', ARGV[5], 'exp', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return redis.call('HGET', KEYS[1], 'body')
"""
)

_DELETE: Final = (
    _LIVE
    + """
redis.call('DEL', KEYS[1])
if live then return 1 end
return 0
"""
)

# The newest id a stream ever issued (kept by Redis even after trimming).
_LAST_ID: Final = """
local function last_id(key)
  local info = redis.call('XINFO', 'STREAM', key)
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then return info[i + 1] end
  end
end
"""

# KEYS: stream, index, counter. ARGV: now_ms, maxlen, oldest_ms, age_ms, max_streams,
# index member, field ('e' event / 'p' priming), payload, stream key prefix,
# the id to use ('' for the next one: the clock's ms, never going back, then '-*').
_APPEND: Final = (
    _LAST_ID
    + """
local at = ARGV[10]
if at == '' then
  local ms = math.max(tonumber(ARGV[1]), 1)
  if redis.call('EXISTS', KEYS[1]) == 1 then
    local last = tonumber(string.match(last_id(KEYS[1]), '^(%d+)-'))
    if last > ms then ms = last end
  end
  at = string.format('%d', ms) .. '-*'
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[2], at, ARGV[7], ARGV[8])
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5])
if excess > 0 then
  local evicted = redis.call('ZPOPMIN', KEYS[2], excess)
  for i = 1, #evicted, 2 do redis.call('DEL', ARGV[9] .. evicted[i]) end
end
return id
"""
)

# KEYS: stream. ARGV: cursor ms, cursor seq, oldest_ms.
# Returns false (never issued here, or the stream is gone), or {'ok', id, payload, ...}.
_REPLAY: Final = (
    _LAST_ID
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local lm, ls = string.match(last_id(KEYS[1]), '^(%d+)-(%d+)$')
lm, ls = tonumber(lm), tonumber(ls)
local am, as = tonumber(ARGV[1]), tonumber(ARGV[2])
local oldest = tonumber(ARGV[3])
if am > lm or (am == lm and as > ls) or lm < oldest then return false end
local out = {'ok'}
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], '(' .. ARGV[1] .. '-' .. ARGV[2], '+')) do
  local ms = tonumber(string.match(entry[1], '^(%d+)-'))
  if entry[2][1] == 'e' and ms >= oldest then
    out[#out + 1] = entry[1]
    out[#out + 1] = entry[2][2]
  end
end
return out
"""
)

# KEYS: index, counter. ARGV: stream key prefix.
_FORGET: Final = """
local streams = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, member in ipairs(streams) do redis.call('DEL', ARGV[1] .. member) end
redis.call('DEL', KEYS[1], KEYS[2])
return #streams
"""


# Tasks. KEYS: the task hash, its answers hash. A terminal status is final.
_TERMINAL_LUA: Final = """
local function terminal(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
"""

# ARGV: now, exp, ttl_ms, body, status.
_T_CREATE: Final = (
    _LIVE
    + """
if live then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'body', ARGV[4], 'status', ARGV[5], 'exp', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
)

# ARGV: now, body, status. The stored expiry is kept: it counts from creation.
_T_UPDATE: Final = (
    _LIVE
    + _TERMINAL_LUA
    + """
if not live or terminal(redis.call('HGET', KEYS[1], 'status')) then return false end
redis.call('HSET', KEYS[1], 'body', ARGV[2], 'status', ARGV[3])
return redis.call('HGET', KEYS[1], 'exp')
"""
)

# ARGV: now, then key, answer JSON pairs.
_T_RESPOND: Final = (
    _LIVE
    + _TERMINAL_LUA
    + """
if not live or terminal(redis.call('HGET', KEYS[1], 'status')) then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
local left = redis.call('PTTL', KEYS[1])
if left > 0 then redis.call('PEXPIRE', KEYS[2], left) end
return 1
"""
)

# KEYS: the task hash, its answers hash, the runner's heartbeat. ARGV: now, body,
# status. The check of the heartbeat and the write are one step, so a runner that
# beats is never failed under it. (The heartbeat key is in another hash slot than
# the task's: one Redis server, as this store speaks to, not Redis Cluster.)
_T_FAIL_ORPHAN: Final = (
    _LIVE
    + _TERMINAL_LUA
    + """
if not live or terminal(redis.call('HGET', KEYS[1], 'status')) then return false end
local beat = redis.call('GET', KEYS[3])
if beat and tonumber(beat) > tonumber(ARGV[1]) then return false end
redis.call('HSET', KEYS[1], 'body', ARGV[2], 'status', ARGV[3])
return redis.call('HGET', KEYS[1], 'exp')
"""
)

# KEYS: the heartbeat. ARGV: now, until, expiry_ms. Whether the previous one held.
_T_BEAT: Final = """
local old = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if old and tonumber(old) > tonumber(ARGV[1]) then return 1 end
return 0
"""

_T_DELETE: Final = (
    _LIVE
    + """
redis.call('DEL', KEYS[1], KEYS[2])
if live then return 1 end
return 0
"""
)


# --------------------------------------------------------------------- parts


class _Sessions:
    def __init__(self, store: RedisStore) -> None:
        self._store = store
        client = store.client
        self._create = client.register_script(_CREATE)
        self._save = client.register_script(_SAVE)
        self._touch = client.register_script(_TOUCH)
        self._claim = client.register_script(_CLAIM)
        self._delete = client.register_script(_DELETE)

    def _key(self, session_id: str) -> str:
        return f"{self._store.prefix}:s:{{{_part(session_id)}}}"

    def _times(self) -> tuple[float, float, list[Any]]:
        """now, the new expiry, and the script's common ARGV (now, exp, ttl_ms)."""
        now = self._store.clock()
        ttl = self._store.limits.session_ttl
        expires = now + ttl
        return now, expires, [repr(now), repr(expires), max(1, math.ceil(ttl * 1000))]

    async def create(self, record: SessionRecord) -> SessionRecord | None:
        _, expires, argv = self._times()
        stored = SessionRecord(
            record.session_id, record.snapshot, record.owner, record.subscriptions, expires
        )
        done = await self._store.script(
            "sessions.create",
            self._create,
            [self._key(record.session_id)],
            [*argv, stored.to_json(), _owner(stored)],
        )
        return stored if done == 1 else None

    async def get(self, session_id: str) -> SessionRecord | None:
        client = self._store.client
        body, owner, exp = await self._store.run(
            "sessions.get", client.hmget(self._key(session_id), ["body", "owner", "exp"])
        )
        if body is None or exp is None or not float(exp) > self._store.clock():
            return None
        return _record(body, owner, float(exp))

    async def save(self, record: SessionRecord) -> SessionRecord | None:
        _, expires, argv = self._times()
        stored = SessionRecord(
            record.session_id, record.snapshot, record.owner, record.subscriptions, expires
        )
        done = await self._store.script(
            "sessions.save",
            self._save,
            [self._key(record.session_id)],
            [*argv, stored.to_json(), _owner(stored)],
        )
        return stored if done == 1 else None

    async def touch(self, session_id: str) -> float | None:
        _, expires, argv = self._times()
        done = await self._store.script(
            "sessions.touch", self._touch, [self._key(session_id)], argv
        )
        return expires if done == 1 else None

    async def claim(
        self, session_id: str, owner: str | None, *, expected_owner: str | None
    ) -> SessionRecord | None:
        _, expires, argv = self._times()
        body = await self._store.script(
            "sessions.claim",
            self._claim,
            [self._key(session_id)],
            [*argv, expected_owner or "", owner or ""],
        )
        if body is None:
            return None
        return _record(body, (owner or "").encode(), expires)

    async def delete(self, session_id: str) -> bool:
        now = repr(self._store.clock())
        done = await self._store.script(
            "sessions.delete", self._delete, [self._key(session_id)], [now]
        )
        return bool(done == 1)


def _owner(record: SessionRecord) -> str:
    return record.owner or ""


def _record(body: Any, owner: Any, expires_at: float) -> SessionRecord:
    record = SessionRecord.from_json(body)
    owner_text = _text(owner) if owner is not None else ""
    return SessionRecord(
        record.session_id, record.snapshot, owner_text or None, record.subscriptions, expires_at
    )


class _Events:
    def __init__(self, store: RedisStore) -> None:
        self._store = store
        client = store.client
        self._append = client.register_script(_APPEND)
        self._replay = client.register_script(_REPLAY)
        self._forget = client.register_script(_FORGET)

    def _keys(self, session_id: str) -> tuple[str, str, str]:
        """(stream key prefix, index key, counter key) of a session."""
        prefix, tag = self._store.prefix, f"{{{_part(session_id)}}}"
        return f"{prefix}:e:{tag}:", f"{prefix}:ei:{tag}", f"{prefix}:en:{tag}"

    def _clock(self) -> tuple[int, int]:
        """now and the oldest time an event may have, in ms of the store's clock."""
        now_ms = int(self._store.clock() * 1000)
        return now_ms, now_ms - int(self._store.limits.max_event_age * 1000)

    async def append(
        self,
        session_id: str,
        stream_id: str,
        payload: bytes | None,
        *,
        at: EventPosition | None = None,
    ) -> str:
        limits = self._store.limits
        if at is not None:
            check_position(at, None)  # after the newest: Redis checks that
        streams, index, counter = self._keys(session_id)
        member = _part(stream_id)
        now_ms, oldest = self._clock()
        age_ms = max(1, math.ceil(limits.max_event_age * 1000))
        try:
            position = await self._store.script(
                "events.append",
                self._append,
                [streams + member, index, counter],
                [
                    now_ms,
                    limits.max_events_per_stream,
                    max(0, oldest),
                    age_ms,
                    limits.max_streams_per_session,
                    member,
                    "p" if payload is None else "e",
                    payload or b"",
                    streams,
                    str(at) if at is not None else "",
                ],
            )
        except coredis.exceptions.ResponseError as exc:
            if at is not None and "equal or smaller" in str(exc):
                raise ValueError(
                    f"event position {at} does not come after the stream's newest"
                ) from None
            raise
        return f"{stream_id}:{_text(position)}"

    async def replay_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]] | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, after = parsed
        streams, _, _ = self._keys(session_id)
        _, oldest = self._clock()
        reply = await self._store.script(
            "events.replay",
            self._replay,
            [streams + _part(stream_id)],
            [after.ms, after.seq, oldest],
        )
        if not isinstance(reply, (list, tuple)) or not reply:
            return None
        events: list[tuple[str, bytes]] = []
        for i in range(1, len(reply) - 1, 2):
            position = parse_event_id(f"{stream_id}:{_text(reply[i])}")
            payload = reply[i + 1]
            if position is None or not isinstance(payload, bytes):
                raise TypeError(f"unexpected event in the log: {reply[i]!r}")
            events.append((format_event_id(stream_id, position[1]), payload))
        return stream_id, events

    async def forget(self, session_id: str) -> None:
        streams, index, counter = self._keys(session_id)
        await self._store.script("events.forget", self._forget, [index, counter], [streams])


class _Tasks:
    def __init__(self, store: RedisStore) -> None:
        self._store = store
        client = store.client
        self._create = client.register_script(_T_CREATE)
        self._update = client.register_script(_T_UPDATE)
        self._respond = client.register_script(_T_RESPOND)
        self._delete = client.register_script(_T_DELETE)
        self._fail_orphan = client.register_script(_T_FAIL_ORPHAN)
        self._beat = client.register_script(_T_BEAT)

    def _keys(self, task_id: str) -> list[str]:
        tag = f"{{{_part(task_id)}}}"
        return [f"{self._store.prefix}:t:{tag}", f"{self._store.prefix}:ta:{tag}"]

    def _heartbeat(self, process_id: str) -> str:
        return f"{self._store.prefix}:hb:{_part(process_id)}"

    def _index(self, owner: str | None) -> str:
        return f"{self._store.prefix}:to:{_part(owner or '')}"

    async def create(self, record: TaskRecord) -> TaskRecord | None:
        now = self._store.clock()
        ttl_ms = max(1, record.ttl_ms)
        stored = dataclasses.replace(record, input_responses=None, expires_at=now + ttl_ms / 1000)
        done = await self._store.script(
            "tasks.create",
            self._create,
            self._keys(record.task_id),
            [repr(now), repr(stored.expires_at), ttl_ms, stored.to_json(), stored.status],
        )
        if done != 1:
            return None
        client = self._store.client
        index = self._index(record.owner)
        await self._store.run(
            "tasks.index", client.zadd(index, {record.task_id: stored.expires_at})
        )
        # The index lives as long as its longest-lived task: extended, never cut.
        left = await self._store.run("tasks.index", client.pttl(index))
        if left < ttl_ms:
            await self._store.run("tasks.index", client.pexpire(index, ttl_ms))
        if record.input_responses:
            await self.respond(record.task_id, dict(record.input_responses))
            return await self.get(record.task_id)
        return stored

    async def get(self, task_id: str) -> TaskRecord | None:
        client = self._store.client
        key, answers_key = self._keys(task_id)
        body, exp = await self._store.run("tasks.get", client.hmget(key, ["body", "exp"]))
        if body is None or exp is None or not float(exp) > self._store.clock():
            return None
        answers = await self._store.run("tasks.get", client.hgetall(answers_key))
        responses = {_text(k): json.loads(v) for k, v in answers.items()} if answers else None
        record = TaskRecord.from_json(body, responses)
        return dataclasses.replace(record, expires_at=float(exp))

    async def update(self, record: TaskRecord) -> TaskRecord | None:
        stored = dataclasses.replace(record, input_responses=None)
        exp = await self._store.script(
            "tasks.update",
            self._update,
            self._keys(record.task_id),
            [repr(self._store.clock()), stored.to_json(), stored.status],
        )
        if exp is None:
            return None
        return dataclasses.replace(
            record, expires_at=float(_text(exp)), input_responses=record.input_responses
        )

    async def respond(self, task_id: str, responses: dict[str, object]) -> bool:
        pairs: list[Any] = []
        for key, value in responses.items():
            pairs += [key, json.dumps(value, separators=(",", ":"), allow_nan=False)]
        done = await self._store.script(
            "tasks.respond", self._respond, self._keys(task_id), [repr(self._store.clock()), *pairs]
        )
        return bool(done == 1)

    async def list(self, owner: str | None, limit: int) -> list[TaskRecord]:
        if limit < 1:
            return []
        client = self._store.client
        index = self._index(owner)
        now = self._store.clock()
        await self._store.run("tasks.list", client.zremrangebyscore(index, float("-inf"), now))
        found: list[TaskRecord] = []
        start = 0
        while len(found) < limit:
            ids = await self._store.run(
                "tasks.list", client.zrange(index, start, start + limit - 1)
            )
            if not ids:
                break
            start += len(ids)
            for task_id in ids:
                record = await self.get(_text(task_id))
                if record is not None and record.owner == owner:
                    found.append(record)
        return found[:limit]

    async def delete(self, task_id: str) -> bool:
        done = await self._store.script(
            "tasks.delete", self._delete, self._keys(task_id), [repr(self._store.clock())]
        )
        return bool(done == 1)

    async def beat(self, expiry: float) -> bool:
        now = self._store.clock()
        held = await self._store.script(
            "tasks.beat",
            self._beat,
            [self._heartbeat(self._store.process_id)],
            [repr(now), repr(now + expiry), max(1, math.ceil(expiry * 1000))],
        )
        return bool(held == 1)

    async def runner_alive(self, process_id: str) -> bool:
        client = self._store.client
        until = await self._store.run("tasks.alive", client.get(self._heartbeat(process_id)))
        return until is not None and float(until) > self._store.clock()

    async def fail_orphan(self, record: TaskRecord) -> TaskRecord | None:
        check_orphan_failure(record)
        stored = dataclasses.replace(record, input_responses=None)
        exp = await self._store.script(
            "tasks.fail_orphan",
            self._fail_orphan,
            [*self._keys(record.task_id), self._heartbeat(record.runner or "")],
            [repr(self._store.clock()), stored.to_json(), stored.status],
        )
        if exp is None:
            return None
        return dataclasses.replace(record, expires_at=float(_text(exp)))


class _Bus:
    def __init__(self, store: RedisStore) -> None:
        self._store = store

    def _channel(self, owner: str) -> str:
        return f"{self._store.prefix}:bus:{_part(owner)}"

    async def send(self, owner: str, message: BusMessage) -> bool:
        if len(message.payload) > self._store.limits.max_message_bytes:
            raise ValueError("bus message payload over max_message_bytes")
        client = self._store.client
        received = await self._store.run(
            "bus.send", client.publish(self._channel(owner), message.encode())
        )
        return received > 0

    def inbox(self) -> contextlib.AbstractAsyncContextManager[Subscription[BusMessage]]:
        return self._store.subscribe(self._channel(self._store.process_id), BusMessage.decode)


class _FanOut:
    def __init__(self, store: RedisStore) -> None:
        self._store = store

    def _channel(self) -> str:
        return f"{self._store.prefix}:fanout"

    async def publish(self, notification: Notification) -> int:
        client = self._store.client
        received: int = await self._store.run(
            "fanout.publish", client.publish(self._channel(), notification.encode())
        )
        return received

    def listen(self) -> contextlib.AbstractAsyncContextManager[Subscription[Notification]]:
        return self._store.subscribe(self._channel(), Notification.decode)


# --------------------------------------------------------------------- store


class RedisStore:
    """A `Store` on a Redis server (`url`: `redis://host:port/db`, `rediss://`, `unix://`).

    `prefix` namespaces every key and channel (one prefix per deployment);
    `clock` (wall-clock seconds) decides session expiry and event age, and
    must agree across processes as closely as `requestState` expiry needs.
    Enter it (`async with RedisStore(...) as store:`) before use; entering
    does not connect, so a store whose Redis is down starts, and raises
    `StoreUnavailable` until Redis is back.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcp",
        limits: StoreLimits | None = None,
        clock: Clock = time.time,
        process_id: str | None = None,
        connect_timeout: float = 1.0,
        command_timeout: float = 2.0,
        operation_timeout: float = 5.0,
        reconnect_max_delay: float = 2.0,
        max_connections: int = 32,
    ) -> None:
        if not prefix or any(c in prefix for c in "{}"):
            raise ValueError("prefix must be non-empty, without braces (they make hash tags)")
        for name, value in (
            ("connect_timeout", connect_timeout),
            ("command_timeout", command_timeout),
            ("operation_timeout", operation_timeout),
            ("reconnect_max_delay", reconnect_max_delay),
        ):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds")
        self.url = url
        self.prefix = prefix
        self.clock = clock
        self._limits = limits or StoreLimits()
        self._process_id = process_id or secrets.token_hex(8)
        # A drawn id is redrawn in a forked child: a store built at import time
        # and inherited by several workers (gunicorn --preload) must not give
        # them one bus address, or each would take the others' answers.
        self._drawn_in: int | None = None if process_id else os.getpid()
        self._connect_timeout = connect_timeout
        self._command_timeout = command_timeout
        self._operation_timeout = operation_timeout
        self._reconnect_max_delay = reconnect_max_delay
        #: The coredis client; the store's facets (sessions, events, bus) share it.
        # One retry for a connection that died while idle in the pool; every
        # attempt is bounded by the timeouts, and the whole by operation_timeout.
        self.client: coredis.Redis[bytes] = coredis.Redis.from_url(
            url,
            connect_timeout=connect_timeout,
            stream_timeout=command_timeout,
            pool_timeout=operation_timeout,
            max_connections=max_connections,
            retry_policy=ConstantRetryPolicy(
                (coredis.exceptions.ConnectionError, TimeoutError), retries=1, delay=0.05
            ),
        )
        self._tasks: anyio.abc.TaskGroup | None = None
        self._exit: contextlib.AsyncExitStack | None = None
        self._sessions = _Sessions(self)
        self._events = _Events(self)
        self._bus = _Bus(self)
        self._fanout = _FanOut(self)
        self._task_registry = _Tasks(self)

    @property
    def process_id(self) -> str:
        if self._drawn_in is not None and self._drawn_in != os.getpid():
            self._process_id = secrets.token_hex(8)
            self._drawn_in = os.getpid()
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
        return self._task_registry

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(self.client)
            self._tasks = await stack.enter_async_context(anyio.create_task_group())
            self._exit = stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        exit_stack, self._exit = self._exit, None
        tasks, self._tasks = self._tasks, None
        if tasks is not None:
            tasks.cancel_scope.cancel()  # the inbox and listener pumps
        if exit_stack is None:
            return
        try:
            await exit_stack.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            # The task groups (ours, coredis') wrap what the block raised; give
            # the caller its own exception back, as is.
            if exc is None or _leaves(group) != [exc]:
                raise

    async def script(self, operation: str, script: Any, keys: list[str], args: list[Any]) -> Any:
        """Run a registered Lua script (EVALSHA, loaded again after a Redis restart)."""
        reply: Any = await self.run(operation, script(keys, args))
        return reply

    async def ping(self) -> None:
        """Raise `StoreUnavailable` unless Redis answers now (a readiness check)."""
        await self.run("ping", self.client.ping())

    # ---------------------------------------------------------------- inside

    async def run(self, operation: str, command: Awaitable[T]) -> T:
        """Await one command, bounded; Redis out of reach becomes `StoreUnavailable`."""
        try:
            with anyio.fail_after(self._operation_timeout):
                return await command
        except BaseException as exc:
            if _unavailable(exc):
                raise StoreUnavailable(operation, f"{self.url}: {exc!r}") from exc
            raise

    @contextlib.asynccontextmanager
    async def subscribe(
        self, channel: str, decode: Callable[[bytes], T]
    ) -> AsyncIterator[Subscription[T]]:
        """A subscription whose pump runs in the store's task group, so the
        reader's block holds no task group of its own (and its exceptions reach
        it unwrapped)."""
        if self._tasks is None:
            raise RuntimeError("enter the store (async with store: ...) before subscribing")
        subscription = Subscription[T](self._limits.max_pending_messages)
        scope = anyio.CancelScope()
        ended = anyio.Event()
        try:
            try:
                with anyio.fail_after(self._operation_timeout):
                    first: BaseException | None = await self._tasks.start(
                        self._pump, channel, decode, subscription, scope, ended
                    )
            except TimeoutError as exc:
                raise StoreUnavailable("subscribe", f"{self.url}: no answer in time") from exc
            if first is not None:
                if not _unavailable(first):
                    raise first  # a refusal (authentication, say), not an outage
                raise StoreUnavailable("subscribe", f"{self.url}: {first!r}") from first
            yield subscription
        finally:
            scope.cancel()
            # Unsubscribed before the block ends, so a publish right after no
            # longer counts this subscriber (bounded: Redis may be gone).
            with anyio.move_on_after(self._command_timeout, shield=True):
                await ended.wait()
            subscription.discard()

    async def _pump(
        self,
        channel: str,
        decode: Callable[[bytes], T],
        subscription: Subscription[T],
        scope: anyio.CancelScope,
        ended: anyio.Event,
        *,
        task_status: anyio.abc.TaskStatus[BaseException | None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Subscribe, pass messages on, and resubscribe after an outage (with backoff).

        The first attempt reports its failure through `task_status`, so that
        entering an inbox or a listener fails at once when Redis is down;
        after that, outages are waited out. Anything unforeseen ends the
        subscription (the reader sees its end) and is logged, never raised
        into the store's task group.
        """
        started = False
        lost = False
        delay = 0.05
        try:
            with scope:
                while True:
                    try:
                        async with self.client.pubsub(
                            channels=[channel],
                            ignore_subscribe_messages=True,
                            retry_policy=NoRetryPolicy(),
                            subscription_timeout=self._command_timeout,
                            max_idle_seconds=max(1.0, self._command_timeout * 2),
                        ) as pubsub:
                            if not started:
                                started = True
                                task_status.started(None)
                            if lost:
                                logger.info("resubscribed to %s", channel)
                            lost, delay = False, 0.05
                            async for message in pubsub:
                                self._offer(channel, message["data"], decode, subscription)
                    except Exception as exc:  # groups too: a pubsub runs a task group
                        if not started:
                            task_status.started(exc)
                            return
                        if not _unavailable(exc):
                            logger.exception("the subscription to %s failed", channel)
                            subscription.close()
                            return
                        logger.warning("lost the subscription to %s: %r; retrying", channel, exc)
                        lost = True
                    await anyio.sleep(delay)
                    delay = min(delay * 2, self._reconnect_max_delay)
        finally:
            ended.set()

    @staticmethod
    def _offer(
        channel: str, data: object, decode: Callable[[bytes], T], subscription: Subscription[T]
    ) -> None:
        if not isinstance(data, bytes):
            return
        try:
            subscription.offer(decode(data))
        except ValueError as exc:
            logger.warning("dropped a malformed message on %s: %s", channel, exc)


if TYPE_CHECKING:

    def _is_a_store(store: RedisStore) -> Store:  # mypy checks the structural match
        return store
