"""The store contract: every test runs against `InMemoryStore` and `RedisStore`, on
asyncio and trio, with two stores standing for two processes of one deployment.

Expiry and age are driven by an injected clock, never by waiting.
"""

from __future__ import annotations

import dataclasses
import json

import anyio
import pytest

from mcp_adapters.store import (
    BusMessage,
    EventPosition,
    Notification,
    SessionRecord,
    StoreLimits,
    TaskRecord,
    format_event_id,
    next_position,
    parse_event_id,
)
from mcp_core import RequestReceived, ServerConnection, SessionSnapshot
from mcp_core.testing import default_server_config
from tests.store.conftest import FakeClock, Stores

pytestmark = pytest.mark.anyio

SNAPSHOT = SessionSnapshot(
    "2025-11-25",
    {"elicitation": {"form": {}}},
    {"name": "client", "version": "1"},
    log_level="info",
    principal="alice",
    next_id=3,
)
TTL = 100.0
AGE = 60.0


def record(session_id: str = "s1", owner: str | None = "a", **changes: object) -> SessionRecord:
    return dataclasses.replace(SessionRecord(session_id, SNAPSHOT, owner), **changes)


async def within(seconds: float, receive: object) -> object:
    """Await a subscription's next message, failing the test (not hanging) if none comes."""
    with anyio.fail_after(seconds):
        return await receive.receive()  # type: ignore[attr-defined]


# ------------------------------------------------------------------ registry


async def test_a_session_created_by_one_process_is_read_by_the_other(stores: Stores) -> None:
    clock = FakeClock()
    async with stores.pair(limits=StoreLimits(session_ttl=TTL), clock=clock) as (a, b):
        stored = await a.sessions.create(record(subscriptions=frozenset({"file:///x"})))
        assert stored is not None
        assert stored.expires_at == clock.now + TTL
        assert await b.sessions.get("s1") == stored
        assert await b.sessions.get("nope") is None


async def test_create_refuses_an_id_in_use(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        first = await a.sessions.create(record(owner="a"))
        assert await b.sessions.create(record(owner="b")) is None
        assert await a.sessions.get("s1") == first


async def test_only_the_owner_saves(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        await a.sessions.create(record())
        changed = record(
            subscriptions=frozenset({"file:///a", "file:///b"}),
            snapshot=dataclasses.replace(SNAPSHOT, log_level="error"),
        )
        saved = await a.sessions.save(changed)
        assert saved is not None and saved.subscriptions == {"file:///a", "file:///b"}
        got = await b.sessions.get("s1")
        assert got is not None and got.snapshot.log_level == "error"
        # Another process, or a session that does not exist, cannot write.
        assert await b.sessions.save(record(owner="b")) is None
        assert await b.sessions.save(record("other")) is None
        assert await a.sessions.get("s1") == saved


async def test_claim_moves_the_session_to_one_process_only(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        await a.sessions.create(record(owner="a"))
        taken = await b.sessions.claim("s1", "b", expected_owner="a")
        assert taken is not None and taken.owner == "b" and taken.snapshot == SNAPSHOT
        # The loser of the race sees it fail, and can no longer write.
        assert await a.sessions.claim("s1", "a", expected_owner="a") is None
        assert await a.sessions.save(record(owner="a")) is None
        got = await a.sessions.get("s1")
        assert got is not None and got.owner == "b"
        # Releasing (owner None) and taking back work the same way.
        released = await b.sessions.claim("s1", None, expected_owner="b")
        assert released is not None and released.owner is None
        back = await a.sessions.claim("s1", "a", expected_owner=None)
        assert back is not None and back.owner == "a"
        assert await a.sessions.claim("missing", "a", expected_owner=None) is None


async def test_sessions_expire_after_the_ttl(stores: Stores) -> None:
    clock = FakeClock()
    async with stores.pair(limits=StoreLimits(session_ttl=TTL), clock=clock) as (a, b):
        await a.sessions.create(record())
        await a.sessions.create(record("s2"))
        clock.advance(TTL - 1)
        assert await b.sessions.get("s1") is not None
        clock.advance(1)
        assert await b.sessions.get("s1") is None
        assert await b.sessions.touch("s1") is None
        assert await a.sessions.save(record()) is None
        assert await b.sessions.claim("s1", "b", expected_owner="a") is None
        assert await a.sessions.delete("s1") is False
        # The id is free again.
        assert await b.sessions.create(record(owner="b")) is not None
        got = await a.sessions.get("s1")
        assert got is not None and got.owner == "b"
        assert await a.sessions.get("s2") is None


async def test_every_write_renews_the_expiry(stores: Stores) -> None:
    clock = FakeClock()
    async with stores.pair(limits=StoreLimits(session_ttl=TTL), clock=clock) as (a, b):
        await a.sessions.create(record())
        clock.advance(60)
        assert await b.sessions.touch("s1") == clock.now + TTL
        clock.advance(60)
        saved = await a.sessions.save(record())
        assert saved is not None and saved.expires_at == clock.now + TTL
        clock.advance(60)
        claimed = await b.sessions.claim("s1", "b", expected_owner="a")
        assert claimed is not None and claimed.expires_at == clock.now + TTL
        clock.advance(TTL - 1)
        assert await a.sessions.get("s1") is not None
        clock.advance(1)
        assert await a.sessions.get("s1") is None


async def test_delete_ends_the_session_everywhere(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        await a.sessions.create(record())
        assert await b.sessions.delete("s1") is True
        assert await a.sessions.get("s1") is None
        assert await a.sessions.delete("s1") is False


async def test_a_record_restores_the_connection_in_the_other_process(stores: Stores) -> None:
    config = default_server_config()
    original = ServerConnection(config)
    original.receive_data(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"roots": {}},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            }
        ).encode()
        + b"\n"
    )
    original.data_to_send()
    async with stores.pair() as (a, b):
        await a.sessions.create(SessionRecord("s1", original.snapshot(), "a"))
        got = await b.sessions.get("s1")
        assert got is not None
        restored = ServerConnection.restore(config, got.snapshot)
        events = restored.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
        assert isinstance(events[0], RequestReceived)
        assert events[0].context.protocol_version == "2025-06-18"


# ------------------------------------------------------------------ event log


async def test_events_replay_after_a_cursor_on_any_process(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        prime = await a.events.append("s1", "1", None)
        first = await a.events.append("s1", "1", b"one")
        second = await a.events.append("s1", "1", b"two")
        third = await a.events.append("s1", "1", b"three")
        ids = [prime, first, second, third]
        assert len(set(ids)) == 4
        assert all(event_id.isascii() and event_id.startswith("1:") for event_id in ids)
        positions = [parse_event_id(event_id) for event_id in ids]
        assert positions == sorted(positions)  # type: ignore[type-var]
        assert await b.events.replay_after("s1", prime) == (
            "1",
            [(first, b"one"), (second, b"two"), (third, b"three")],
        )
        assert await b.events.replay_after("s1", second) == ("1", [(third, b"three")])
        assert await b.events.replay_after("s1", third) == ("1", [])


async def test_a_cursor_replays_only_its_own_stream_and_session(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        one = await a.events.append("s1", "1", b"stream 1")
        zero = await a.events.append("s1", "0", b"get stream")
        later = await a.events.append("s1", "1", b"stream 1 again")
        await a.events.append("s2", "1", b"another session")
        assert await b.events.replay_after("s1", one) == ("1", [(later, b"stream 1 again")])
        assert await b.events.replay_after("s1", zero) == ("0", [])
        # Another session's cursor, an unknown stream, garbage: nothing.
        assert await b.events.replay_after("s3", one) is None
        _, ms_seq = one.split(":")
        assert await b.events.replay_after("s1", f"9:{ms_seq}") is None
        for garbage in ("", "1", "1:", "1:x-0", "1:5", "1:-1-0", "1:" + "9" * 20 + "-0"):
            assert await b.events.replay_after("s1", garbage) is None, garbage


async def test_a_cursor_never_issued_is_refused(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        last = await a.events.append("s1", "1", b"x")
        parsed = parse_event_id(last)
        assert parsed is not None
        _, position = parsed
        assert await b.events.replay_after("s1", f"1:{position.ms}-{position.seq + 1}") is None
        assert await b.events.replay_after("s1", f"1:{position.ms + 1}-0") is None


async def test_each_stream_keeps_at_most_its_length(stores: Stores) -> None:
    async with stores.pair(limits=StoreLimits(max_events_per_stream=3)) as (a, b):
        ids = [await a.events.append("s1", "1", f"e{n}".encode()) for n in range(6)]
        replay = await b.events.replay_after("s1", ids[0])
        assert replay == ("1", [(ids[3], b"e3"), (ids[4], b"e4"), (ids[5], b"e5")])


async def test_events_older_than_the_age_limit_are_gone(stores: Stores) -> None:
    clock = FakeClock()
    async with stores.pair(limits=StoreLimits(max_event_age=AGE), clock=clock) as (a, b):
        prime = await a.events.append("s1", "1", None)
        old = await a.events.append("s1", "1", b"old")
        clock.advance(AGE / 2)
        new = await a.events.append("s1", "1", b"new")
        assert await b.events.replay_after("s1", prime) == ("1", [(old, b"old"), (new, b"new")])
        clock.advance(AGE / 2 + 1)
        assert await b.events.replay_after("s1", prime) == ("1", [(new, b"new")])
        clock.advance(AGE / 2)
        # Every event is older than the limit: the stream itself is gone.
        assert await b.events.replay_after("s1", prime) is None
        assert await b.events.replay_after("s1", new) is None


async def test_a_session_keeps_its_most_recently_written_streams(stores: Stores) -> None:
    async with stores.pair(limits=StoreLimits(max_streams_per_session=2)) as (a, b):
        one = await a.events.append("s1", "1", b"a")
        two = await a.events.append("s1", "2", b"b")
        await a.events.append("s1", "1", b"c")  # stream 1 is now the most recent
        three = await a.events.append("s1", "3", b"d")
        assert await b.events.replay_after("s1", two) is None  # evicted
        replay = await b.events.replay_after("s1", one)
        assert replay is not None and [payload for _, payload in replay[1]] == [b"c"]
        assert await b.events.replay_after("s1", three) == ("3", [])


async def test_forget_drops_every_stream_of_the_session(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        one = await a.events.append("s1", "1", b"a")
        zero = await a.events.append("s1", "0", b"b")
        other = await a.events.append("s2", "1", b"c")
        await b.events.forget("s1")
        assert await a.events.replay_after("s1", one) is None
        assert await a.events.replay_after("s1", zero) is None
        assert await a.events.replay_after("s2", other) == ("1", [])
        await b.events.forget("never-existed")


async def test_ids_keep_increasing_when_the_clock_goes_back(stores: Stores) -> None:
    clock = FakeClock()
    async with stores.pair(clock=clock) as (a, b):
        first = await a.events.append("s1", "1", b"a")
        clock.advance(-5)
        second = await b.events.append("s1", "1", b"b")
        third = await a.events.append("s1", "1", b"c")
        positions = [parse_event_id(i) for i in (first, second, third)]
        assert positions == sorted(positions) and len(set(positions)) == 3  # type: ignore[type-var]
        assert await b.events.replay_after("s1", first) == ("1", [(second, b"b"), (third, b"c")])


async def test_a_process_may_mint_the_ids_itself(stores: Stores) -> None:
    # A write-behind cache in the process holding the session mints ids with
    # the log's own rule and hands them over: the log keeps them as they are.
    clock = FakeClock()
    async with stores.pair(clock=clock) as (a, b):
        now_ms = int(clock.now * 1000)
        first = next_position(None, now_ms)
        one = await a.events.append("s1", "1", b"one", at=first)
        assert one == format_event_id("1", first)
        second = next_position(first, now_ms)
        two = await a.events.append("s1", "1", b"two", at=second)
        three = await a.events.append("s1", "1", b"three")  # the log's choice: the same rule
        assert three == format_event_id("1", next_position(second, now_ms))
        assert await b.events.replay_after("s1", one) == ("1", [(two, b"two"), (three, b"three")])
        with pytest.raises(ValueError, match="does not come after"):
            await b.events.append("s1", "1", b"late", at=second)
        with pytest.raises(ValueError, match="does not come after"):
            await a.events.append("s1", "2", b"zero", at=EventPosition(0, 0))
        assert await b.events.replay_after("s1", three) == ("1", [])


# ------------------------------------------------------------------------ bus


async def test_the_bus_reaches_the_process_holding_the_request(stores: Stores) -> None:
    answer = b'{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"n":1}}}'
    async with stores.pair() as (a, b), b.bus.inbox() as b_inbox, a.bus.inbox() as a_inbox:
        assert await a.bus.send("b", BusMessage(answer, "s1", "a")) is True
        assert await within(5, b_inbox) == BusMessage(answer, "s1", "a")
        cancelled = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}'
        assert await b.bus.send("a", BusMessage(cancelled, "s1", "b")) is True
        assert await within(5, a_inbox) == BusMessage(cancelled, "s1", "b")
        # Nobody listens at that address: the sender is told.
        assert await a.bus.send("c", BusMessage(b"{}")) is False
        assert b_inbox.dropped == 0 and a_inbox.dropped == 0


async def test_a_closed_inbox_receives_nothing(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        async with b.bus.inbox():
            pass
        assert await a.bus.send("b", BusMessage(b"{}")) is False


async def test_an_inbox_drops_what_its_reader_does_not_take(stores: Stores) -> None:
    async with (
        stores.pair(limits=StoreLimits(max_pending_messages=2)) as (a, b),
        b.bus.inbox() as inbox,
    ):
        for n in range(3):
            assert await a.bus.send("b", BusMessage(b"%d" % n)) is True
        with anyio.fail_after(5):
            while inbox.dropped == 0:  # over Redis, messages arrive asynchronously
                await anyio.sleep(0.01)
        assert [(await within(5, inbox)).payload for _ in range(2)] == [b"0", b"1"]  # type: ignore[attr-defined]
        assert inbox.dropped == 1
        await a.bus.send("b", BusMessage(b"after"))
        assert (await within(5, inbox)).payload == b"after"  # type: ignore[attr-defined]


async def test_a_bus_payload_is_bounded(stores: Stores) -> None:
    async with stores.pair(limits=StoreLimits(max_message_bytes=8)) as (a, _):
        with pytest.raises(ValueError, match="max_message_bytes"):
            await a.bus.send("b", BusMessage(b"123456789"))


# -------------------------------------------------------------------- fan-out


async def test_fan_out_reaches_every_listener_of_every_process(stores: Stores) -> None:
    updated = Notification("notifications/resources/updated", {"uri": "file:///x"}, "a")
    changed = Notification("notifications/tools/list_changed", None, "b")
    async with (
        stores.pair() as (a, b),
        a.fanout.listen() as a1,
        a.fanout.listen() as a2,
        b.fanout.listen() as b1,
    ):
        assert await a.fanout.publish(updated) == 3
        assert await b.fanout.publish(changed) == 3
        for listener in (a1, a2, b1):
            assert await within(5, listener) == updated
            assert await within(5, listener) == changed
        async with b.fanout.listen() as b2:
            assert await a.fanout.publish(changed) == 4
            assert await within(5, b2) == changed
        assert await a.fanout.publish(changed) == 3


async def test_iterating_a_listener_ends_when_its_block_ends(stores: Stores) -> None:
    seen: list[Notification] = []
    async with stores.pair() as (a, b):
        async with b.fanout.listen() as listener:
            await a.fanout.publish(Notification("notifications/prompts/list_changed"))

            async def read() -> None:
                async for notification in listener:
                    seen.append(notification)
                    return

            with anyio.fail_after(5):
                await read()
        assert seen == [Notification("notifications/prompts/list_changed")]
        assert await a.fanout.publish(Notification("notifications/prompts/list_changed")) == 0


# --------------------------------------------------------------------- tasks


def task(task_id: str = "t1", owner: str | None = "alice", **changes: object) -> TaskRecord:
    base = TaskRecord(
        task_id,
        "working",
        "2026-12-01T00:00:00Z",
        "2026-12-01T00:00:00Z",
        ttl_ms=int(TTL * 1000),
        poll_interval_ms=500,
        owner=owner,
        runner="a",
    )
    return dataclasses.replace(base, **changes)


async def test_a_task_created_by_one_process_is_read_by_the_other(stores: Stores) -> None:
    clock = FakeClock()
    async with stores.pair(clock=clock) as (a, b):
        stored = await a.tasks.create(task())
        assert stored is not None
        assert stored.expires_at == clock.now + TTL
        assert await b.tasks.get("t1") == stored
        assert await b.tasks.get("nope") is None
        assert await b.tasks.create(task()) is None  # the id is taken


async def test_a_task_expires_at_its_ttl_from_creation_however_often_written(
    stores: Stores,
) -> None:
    clock = FakeClock()
    async with stores.pair(clock=clock) as (a, b):
        await a.tasks.create(task())
        clock.now += TTL - 1
        assert await a.tasks.update(task(status_message="still at it")) is not None
        assert (await b.tasks.get("t1")).status_message == "still at it"  # type: ignore[union-attr]
        clock.now += 1
        assert await b.tasks.get("t1") is None
        assert await a.tasks.update(task()) is None
        assert await b.tasks.respond("t1", {"k": {"action": "decline"}}) is False
        assert await a.tasks.list("alice", 10) == []


async def test_a_terminal_task_is_never_overwritten(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        await a.tasks.create(task())
        cancelled = await b.tasks.update(task(status="cancelled"))
        assert cancelled is not None and cancelled.terminal
        # The work finishing later, on the other process, loses.
        assert await a.tasks.update(task(status="completed", result={"content": []})) is None
        assert (await a.tasks.get("t1")).status == "cancelled"  # type: ignore[union-attr]
        assert await a.tasks.respond("t1", {"k": {}}) is False


async def test_answers_merge_apart_from_status_changes(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        questions = {"q1": {"method": "elicitation/create", "params": {"message": "?"}}}
        await a.tasks.create(task(status="input_required", input_requests=questions))
        assert await b.tasks.respond("t1", {"q1": {"action": "accept", "content": {"n": 1}}})
        # A status change written by the runner, which had not seen the answer yet,
        # keeps it.
        await a.tasks.update(task(status="input_required", input_requests=questions))
        assert await b.tasks.respond("t1", {"q2": {"action": "decline"}})
        found = await a.tasks.get("t1")
        assert found is not None
        assert found.input_requests == questions
        assert found.input_responses == {
            "q1": {"action": "accept", "content": {"n": 1}},
            "q2": {"action": "decline"},
        }


async def test_tasks_list_by_owner_and_delete(stores: Stores) -> None:
    async with stores.pair() as (a, b):
        for name, owner in (("t1", "alice"), ("t2", "bob"), ("t3", "alice")):
            await a.tasks.create(task(name, owner))
        assert [t.task_id for t in await b.tasks.list("alice", 10)] == ["t1", "t3"]
        assert [t.task_id for t in await b.tasks.list("alice", 1)] == ["t1"]
        assert [t.task_id for t in await b.tasks.list("bob", 10)] == ["t2"]
        assert await b.tasks.delete("t1") is True
        assert await a.tasks.delete("t1") is False
        assert await a.tasks.get("t1") is None
        assert [t.task_id for t in await a.tasks.list("alice", 10)] == ["t3"]


BEAT = 10.0


async def test_a_heartbeat_holds_until_its_expiry_on_the_store_clock(stores: Stores) -> None:
    clock = FakeClock()
    async with stores.pair(clock=clock) as (a, b):
        assert await b.tasks.runner_alive("a") is False  # never beat
        assert await a.tasks.beat(BEAT) is False  # the first beat: nothing held before
        assert await b.tasks.runner_alive("a") is True
        assert await b.tasks.runner_alive("b") is False  # per process id
        clock.advance(BEAT - 1)
        assert await b.tasks.runner_alive("a") is True
        assert await a.tasks.beat(BEAT) is True  # renewed while it held
        clock.advance(BEAT - 1)
        assert await b.tasks.runner_alive("a") is True  # counted from the last beat
        clock.advance(1)
        assert await b.tasks.runner_alive("a") is False  # expiry reached: gone
        assert await a.tasks.beat(BEAT) is False  # a lapse shows on the next beat
        assert await b.tasks.runner_alive("a") is True


async def test_a_task_of_a_runner_whose_heartbeat_expired_is_failed_once(
    stores: Stores,
) -> None:
    clock = FakeClock()
    async with stores.pair(clock=clock) as (a, b):
        await a.tasks.beat(BEAT)
        created = await a.tasks.create(task(runner="a"))
        assert created is not None
        failed = task(runner="a", status="failed", status_message="runner gone")
        # While the runner beats, nobody can fail its task.
        assert await b.tasks.fail_orphan(failed) is None
        assert (await b.tasks.get("t1")).status == "working"  # type: ignore[union-attr]
        clock.advance(BEAT)
        stored = await b.tasks.fail_orphan(failed)
        assert stored is not None
        assert stored.status == "failed" and stored.expires_at == created.expires_at
        again = await b.tasks.get("t1")
        assert again is not None and again.status_message == "runner gone"
        # A second reader, or the runner coming back and finishing, loses.
        assert await a.tasks.fail_orphan(failed) is None
        await a.tasks.beat(BEAT)
        assert await a.tasks.update(task(status="completed", result={"content": []})) is None
        assert (await a.tasks.get("t1")).status == "failed"  # type: ignore[union-attr]


async def test_a_runner_that_finished_first_keeps_its_result(stores: Stores) -> None:
    clock = FakeClock()
    async with stores.pair(clock=clock) as (a, b):
        await a.tasks.beat(BEAT)
        await a.tasks.create(task(runner="a"))
        done = await a.tasks.update(task(status="completed", result={"content": []}))
        assert done is not None
        clock.advance(BEAT + 1)  # the runner is gone now, but its task had ended
        assert await b.tasks.fail_orphan(task(runner="a", status="failed")) is None
        assert (await b.tasks.get("t1")).status == "completed"  # type: ignore[union-attr]
        assert await b.tasks.fail_orphan(task("t9", runner="a", status="failed")) is None
        with pytest.raises(ValueError):
            await b.tasks.fail_orphan(task(runner="a"))  # not a failed record
        with pytest.raises(ValueError):
            await b.tasks.fail_orphan(task(runner=None, status="failed"))


def test_task_records_round_trip_and_refuse_garbage() -> None:
    record_ = task(result={"content": [{"type": "text", "text": "hi"}]}, era="legacy")
    assert TaskRecord.from_json(record_.to_json()) == record_
    assert TaskRecord.from_json(record_.to_json(), {"k": 1}).input_responses == {"k": 1}
    for bad in (b"[]", b'{"v": 1, "taskId": ""}', b"not json"):
        with pytest.raises(ValueError):
            TaskRecord.from_json(bad)
    broken = json.loads(record_.to_json())
    broken["status"] = "sleeping"
    with pytest.raises(ValueError, match="status"):
        TaskRecord.from_json(json.dumps(broken).encode())
