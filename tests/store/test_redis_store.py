"""What only the Redis store has: its key layout, Redis' own TTLs, and Redis going away.

Each test here has a redis-server of its own (it looks at every key, or stops,
restarts or freezes the server). Outages are real: the process is stopped
(SIGTERM) or frozen (SIGSTOP) under a running store, and the same store object
must work again once Redis is back, without being restarted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import coredis
import pytest

from mcp_adapters.store import (
    BusMessage,
    Notification,
    SessionRecord,
    StoreLimits,
    StoreUnavailable,
)
from mcp_core import SessionSnapshot
from tests.store.conftest import redis_store
from tests.store.redis_server import RedisServer

pytestmark = pytest.mark.anyio

RECORD = SessionRecord("s1", SessionSnapshot("2025-11-25", {}), "a")
FAST = {
    "connect_timeout": 0.5,
    "command_timeout": 0.5,
    "operation_timeout": 2.0,
    "reconnect_max_delay": 0.2,
}
CHANGED = Notification("notifications/tools/list_changed")


@asynccontextmanager
async def raw(server: RedisServer) -> AsyncIterator[Any]:
    """A plain coredis client, to look at what the store wrote."""
    async with coredis.Redis.from_url(server.url) as client:
        yield client


async def publish_until_heard(store: Any, notification: Notification) -> None:
    """Publish until a listener is subscribed again (it resubscribes on its own)."""
    with anyio.fail_after(20):
        while True:
            try:
                if await store.fanout.publish(notification) > 0:
                    return
            except StoreUnavailable:
                pass
            await anyio.sleep(0.05)


async def test_every_key_is_under_the_prefix(own_redis_server: RedisServer) -> None:
    limits = StoreLimits(session_ttl=300, max_event_age=120)
    async with redis_store(own_redis_server.url, "tenant-1", limits=limits) as store:
        await store.sessions.create(RECORD)
        await store.events.append("s1", "1", b"event")
        async with raw(own_redis_server) as client:
            keys = sorted(await client.keys("*"))
            assert keys == [
                b"tenant-1:e:{s1}:1",
                b"tenant-1:ei:{s1}",
                b"tenant-1:en:{s1}",
                b"tenant-1:s:{s1}",
            ]
            # Redis' own TTLs collect what nobody deletes.
            assert 0 < await client.pttl("tenant-1:s:{s1}") <= 300_000
            for key in keys[:3]:
                assert 0 < await client.pttl(key) <= 120_000
        await store.events.forget("s1")
        await store.sessions.delete("s1")
        async with raw(own_redis_server) as client:
            assert not await client.keys("*")


async def test_two_prefixes_are_two_deployments(redis_server: RedisServer) -> None:
    async with (
        redis_store(redis_server.url, "blue") as blue,
        redis_store(redis_server.url, "green") as green,
    ):
        await blue.sessions.delete("s1")
        await green.sessions.delete("s1")
        assert await blue.sessions.create(RECORD) is not None
        assert await green.sessions.get("s1") is None
        assert await green.sessions.create(RECORD) is not None
        async with green.fanout.listen():
            assert await blue.fanout.publish(CHANGED) == 0
        await blue.sessions.delete("s1")
        await green.sessions.delete("s1")


async def test_ids_cannot_forge_each_others_keys(redis_server: RedisServer) -> None:
    async with redis_store(redis_server.url, "escape") as store:
        await store.events.forget("a}:x")
        await store.events.forget("a")
        forged = await store.events.append("a}:x", "y", b"one session")
        other = await store.events.append("a", "x}:y", b"another")
        assert await store.events.replay_after("a}:x", forged) == ("y", [])
        assert await store.events.replay_after("a", other) == ("x}:y", [])
        first = await store.events.append("a", "x}:y", b"later")
        assert await store.events.replay_after("a}:x", forged) == ("y", [])
        assert await store.events.replay_after("a", other) == ("x}:y", [(first, b"later")])
        await store.events.forget("a}:x")
        await store.events.forget("a")


async def test_redis_down_at_start_raises_then_recovers(own_redis_server: RedisServer) -> None:
    own_redis_server.stop()
    async with redis_store(own_redis_server.url, "down", **FAST) as store:
        with pytest.raises(StoreUnavailable, match=r"during sessions\.get"):
            await store.sessions.get("s1")
        with pytest.raises(StoreUnavailable, match=r"during sessions\.create"):
            await store.sessions.create(RECORD)
        with pytest.raises(StoreUnavailable, match=r"during events\.append"):
            await store.events.append("s1", "1", b"x")
        with pytest.raises(StoreUnavailable, match=r"during events\.replay"):
            await store.events.replay_after("s1", "1:1-0")
        with pytest.raises(StoreUnavailable, match=r"during bus\.send"):
            await store.bus.send("b", BusMessage(b"{}"))
        with pytest.raises(StoreUnavailable, match=r"during fanout\.publish"):
            await store.fanout.publish(CHANGED)
        with pytest.raises(StoreUnavailable, match="during subscribe"):
            async with store.fanout.listen():
                pass
        with pytest.raises(StoreUnavailable, match="during ping"):
            await store.ping()

        own_redis_server.start()  # the same store object, not restarted

        await store.ping()
        assert await store.sessions.create(RECORD) is not None
        async with store.bus.inbox() as inbox:
            assert await store.bus.send(store.process_id, BusMessage(b"{}", "s1")) is True
            with anyio.fail_after(5):
                assert (await inbox.receive()).session_id == "s1"


async def test_a_restarted_redis_is_used_again_and_listeners_resubscribe(
    own_redis_server: RedisServer,
) -> None:
    async with (
        redis_store(own_redis_server.url, "restart", process_id="a", **FAST) as a,
        redis_store(own_redis_server.url, "restart", process_id="b", **FAST) as b,
        b.fanout.listen() as listener,
        b.bus.inbox() as inbox,
    ):
        assert await a.fanout.publish(Notification("notifications/prompts/list_changed")) == 1
        with anyio.fail_after(5):
            assert (await listener.receive()).method == "notifications/prompts/list_changed"

        own_redis_server.stop()
        with pytest.raises(StoreUnavailable):
            await a.fanout.publish(CHANGED)
        with pytest.raises(StoreUnavailable):
            await a.sessions.create(RECORD)
        own_redis_server.start()

        # Commands work at once; the subscriptions made before the outage come back.
        assert await a.sessions.create(RECORD) is not None
        got = await b.sessions.get("s1")
        assert got is not None and got.owner == "a"
        await publish_until_heard(a, CHANGED)
        with anyio.fail_after(5):
            assert await listener.receive() == CHANGED
        with anyio.fail_after(20):
            while not await a.bus.send("b", BusMessage(b"answer", "s1")):
                await anyio.sleep(0.05)
        with anyio.fail_after(5):
            assert (await inbox.receive()).payload == b"answer"


async def test_a_hung_redis_times_out_instead_of_hanging(own_redis_server: RedisServer) -> None:
    async with redis_store(own_redis_server.url, "hung", **FAST) as store:
        assert await store.sessions.create(RECORD) is not None
        own_redis_server.freeze()
        try:
            with anyio.fail_after(10):  # a guard for the test itself, far above the bound
                with pytest.raises(StoreUnavailable, match=r"during sessions\.get"):
                    await store.sessions.get("s1")
                with pytest.raises(StoreUnavailable, match=r"during fanout\.publish"):
                    await store.fanout.publish(CHANGED)
        finally:
            own_redis_server.thaw()
        got = await store.sessions.get("s1")
        assert got is not None and got.owner == "a"


def test_the_store_refuses_a_prefix_that_would_make_hash_tags() -> None:
    with pytest.raises(ValueError, match="prefix"):
        redis_store("redis://127.0.0.1:1/0", "a{b}")
    with pytest.raises(ValueError, match="prefix"):
        redis_store("redis://127.0.0.1:1/0", "")
    with pytest.raises(ValueError, match="command_timeout"):
        redis_store("redis://127.0.0.1:1/0", "p", command_timeout=0)


async def test_subscribing_needs_an_entered_store(redis_server: RedisServer) -> None:
    store = redis_store(redis_server.url, "not-entered")
    with pytest.raises(RuntimeError, match="enter the store"):
        async with store.fanout.listen():
            pass
