"""Runner liveness: a task whose runner stopped beating is failed by whoever reads it.

Two `MCPServer`s on one `MemoryHub` stand for two replicas on one Redis (the
store contract makes them alike); the stores' clock is injected, so a
heartbeat expires when the test says, never by waiting. The runner's
heartbeat is the real `TaskHost.keep_alive` (what the cluster binding runs);
"dying" is cancelling it, then moving the clock past the expiry. The real
Redis and a real `kill -9` are in tests/cluster/test_task_liveness.py.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from mcp_adapters.server import TaskSettings
from mcp_adapters.server._tasks import RUNNER_LOST
from mcp_adapters.store import InMemoryStore, MemoryHub, TaskRecord
from tests.api.test_tasks_server import EXT, LEGACY, MODERN, connected, make_server
from tests.store.conftest import FakeClock
from tests.timing import HANG

pytestmark = pytest.mark.anyio

EXPIRY = 10.0
SETTINGS = TaskSettings(poll_interval=0.02, heartbeat_interval=5.0, heartbeat_expiry=EXPIRY)


class Replicas:
    """A runner and a reader sharing one hub and one injected clock."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        hub = MemoryHub()
        self.runner_store = InMemoryStore(hub=hub, clock=self.clock, process_id="runner")
        self.reader_store = InMemoryStore(hub=hub, clock=self.clock, process_id="reader")
        self.runner = make_server(self.runner_store, SETTINGS)
        self.reader = make_server(self.reader_store, SETTINGS)

    @contextlib.asynccontextmanager
    async def beating(self) -> AsyncIterator[anyio.CancelScope]:
        """The runner's heartbeat loop, running until the yielded scope is cancelled."""
        async with anyio.create_task_group() as group:
            scope = anyio.CancelScope()

            async def beat() -> None:
                with scope:
                    await self.runner.tasks.keep_alive(self.runner_store)

            group.start_soon(beat)
            with anyio.fail_after(HANG):
                while not await self.reader_store.tasks.runner_alive("runner"):
                    await anyio.sleep(0.01)
            yield scope
            scope.cancel()


def told(seen: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """The params of the notifications `method` a peer has received so far."""
    return [m["params"] for m in seen if m.get("method") == method]


async def stored(store: InMemoryStore, task_id: str) -> TaskRecord:
    record = await store.tasks.get(task_id)
    assert record is not None
    return record


async def test_a_task_fails_on_another_replica_once_its_runners_heartbeat_expired() -> None:
    replicas = Replicas()
    runner, reader = replicas.runner, replicas.reader
    async with runner.running(), reader.running(), replicas.beating() as heartbeat:
        async with connected(runner, MODERN, EXT) as peer:
            created = await peer.result("tools/call", {"name": "slow", "arguments": {"text": "x"}})
        task_id = created["taskId"]
        assert (await stored(replicas.reader_store, task_id)).runner == "runner"
        async with connected(reader, MODERN, EXT) as other:
            await other.start("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
            assert (await other.receive())["method"] == "notifications/subscriptions/acknowledged"
            # Beating, however long ago the task started: it is left alone. (The
            # loop beats every 5 s of real time; the clock moves faster here, so
            # its next beat is made by hand.)
            replicas.clock.advance(EXPIRY * 5)
            await replicas.runner_store.tasks.beat(EXPIRY)
            assert (await other.result("tasks/get", {"taskId": task_id}))["status"] == "working"
            heartbeat.cancel()  # the runner stops beating (the process died)
            replicas.clock.advance(EXPIRY - 0.5)
            assert (await other.result("tasks/get", {"taskId": task_id}))["status"] == "working"
            replicas.clock.advance(0.5)
            failed = await other.result("tasks/get", {"taskId": task_id})
            assert failed["status"] == "failed"
            assert failed["statusMessage"] == RUNNER_LOST
            assert failed["error"] == {"code": -32603, "message": RUNNER_LOST}
            # ... and told as any failure is: notifications/tasks on the listen stream.
            with anyio.fail_after(HANG):
                while not (notes := told(other.seen, "notifications/tasks")):
                    await other.receive()
            assert [(n["taskId"], n["status"]) for n in notes] == [(task_id, "failed")]
        # The runner was only late, not dead: its body, finishing now, loses (the
        # failure was written first and a terminal status is final); its look at
        # the store sees the failure and ends the body.
        runner.gate.set()  # type: ignore[attr-defined]
        with anyio.fail_after(HANG):
            while runner.tasks.running_count:
                await anyio.sleep(0.01)
        assert (await stored(replicas.reader_store, task_id)).status == "failed"


async def test_a_legacy_tasks_result_waiting_on_a_dead_runner_ends_with_the_failure() -> None:
    replicas = Replicas()
    runner, reader = replicas.runner, replicas.reader
    async with runner.running(), reader.running(), replicas.beating() as heartbeat:
        async with connected(runner, LEGACY) as peer:
            created = await peer.result(
                "tools/call", {"name": "slow", "arguments": {"text": "x"}, "task": {}}
            )
        task_id = created["task"]["taskId"]
        async with connected(reader, LEGACY) as other:
            waiting = await other.start("tasks/result", {"taskId": task_id})
            await anyio.sleep(0.1)  # a few of its polls of the store: still working
            heartbeat.cancel()
            replicas.clock.advance(EXPIRY)
            answer = await other.until(waiting)
            assert answer["error"]["code"] == -32603
            assert answer["error"]["message"] == RUNNER_LOST
            # notifications/tasks/status went to the session that asked, as any
            # failure's does to the session that created the task.
            statuses = told(other.seen, "notifications/tasks/status")
            assert [s["status"] for s in statuses] == ["failed"]
            assert statuses[0]["statusMessage"] == RUNNER_LOST
            got = await other.result("tasks/get", {"taskId": task_id})
            assert got["status"] == "failed"


def orphan(task_id: str, runner: str | None, owner: str = "principal:alice") -> TaskRecord:
    return TaskRecord(
        task_id,
        "working",
        "2026-12-01T00:00:00.000Z",
        "2026-12-01T00:00:00.000Z",
        ttl_ms=3_600_000,
        era="legacy",
        poll_interval_ms=20,
        owner=owner,
        runner=runner,
    )


async def test_tasks_list_judges_each_task_and_a_record_naming_no_runner_is_left_alone() -> None:
    replicas = Replicas()
    store = replicas.reader_store
    for task_id, runner in (("gone", "a-dead-process"), ("unknown", None)):
        assert await store.tasks.create(orphan(task_id, runner)) is not None
    replicas.clock.advance(EXPIRY)
    reader = replicas.reader
    async with reader.running(), connected(reader, LEGACY, principal="alice") as peer:
        listed = await peer.result("tasks/list")
        by_id: dict[str, Any] = {t["taskId"]: t for t in listed["tasks"]}
        assert by_id["gone"]["status"] == "failed"
        assert by_id["gone"]["statusMessage"] == RUNNER_LOST
        # No runner named (written while no heartbeat ran): nobody can tell.
        assert by_id["unknown"]["status"] == "working"
        result = await peer.call("tasks/result", {"taskId": "gone"})
        assert result["error"]["message"] == RUNNER_LOST
    assert (await stored(store, "unknown")).status == "working"


async def test_a_task_left_behind_by_this_process_fails_on_its_next_read() -> None:
    """The server stopped serving (its bodies were cancelled) and serves again:
    this process is the runner, beating, but no longer runs the body."""
    replicas = Replicas()
    runner = replicas.runner
    async with replicas.beating():
        async with runner.running(), connected(runner, MODERN, EXT) as peer:
            created = await peer.result("tools/call", {"name": "forever"})
        async with runner.running(), connected(runner, MODERN, EXT) as peer:
            got = await peer.result("tasks/get", {"taskId": created["taskId"]})
    assert got["status"] == "failed"
    assert got["statusMessage"] == RUNNER_LOST


async def test_without_a_heartbeat_records_name_no_runner() -> None:
    mcp = make_server(InMemoryStore(), SETTINGS)
    async with mcp.running(), connected(mcp, MODERN, EXT) as peer:
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"text": "x"}})
        assert mcp.store is not None
        record = await mcp.store.tasks.get(created["taskId"])
        assert record is not None and record.runner is None
        mcp.gate.set()  # type: ignore[attr-defined]
        assert (await peer.poll(created["taskId"], "completed"))["status"] == "completed"


async def test_a_lapsed_heartbeat_is_logged_and_beating_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The runner's loop finds on its next beat that the previous one had expired
    (here the store's clock jumps past it; in life, a long pause or a store away):
    other replicas may have failed its tasks, and it says so."""
    clock = FakeClock()
    store = InMemoryStore(clock=clock, process_id="runner")
    mcp = make_server(store, TaskSettings(heartbeat_interval=0.01, heartbeat_expiry=1.0))
    async with anyio.create_task_group() as group:
        group.start_soon(mcp.tasks.keep_alive, store)
        with anyio.fail_after(HANG):
            while not await store.tasks.runner_alive("runner"):
                await anyio.sleep(0.01)
            clock.advance(2.0)
            while not [r for r in caplog.records if "lapsed" in r.getMessage()]:
                await anyio.sleep(0.01)
            while not await store.tasks.runner_alive("runner"):  # beating again
                await anyio.sleep(0.01)
        group.cancel_scope.cancel()


def test_the_heartbeat_expiry_must_exceed_its_interval() -> None:
    with pytest.raises(ValueError, match="heartbeat_expiry"):
        TaskSettings(heartbeat_interval=5.0, heartbeat_expiry=5.0)
    with pytest.raises(ValueError, match="heartbeat_interval"):
        TaskSettings(heartbeat_interval=0)
    assert TaskSettings().heartbeat_expiry > TaskSettings().heartbeat_interval
