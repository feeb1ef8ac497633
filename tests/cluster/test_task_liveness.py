"""A replica running tasks is `kill -9`ed: its tasks fail on the other, both eras.

Two replicas behind nginx on a real Redis, with a short runner heartbeat
(`CLUSTER_APP_TASK_HEARTBEAT`: a beat every 0.25 s, dead after 1.5 s without
one). A legacy and a 2026-07-28 task run `stalled` (it waits on an event nobody
sets) on one replica; that replica is killed; the survivor, reading them
through the balancer, finds the runner's heartbeat expired and fails them:
`tasks/get` shows `failed`, and a `tasks/result` sent after the kill returns
the failure instead of waiting until the TTL. The only bound is the hang guard.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcp_adapters.server._tasks import RUNNER_LOST
from tests.timing import HANG

from .harness import ROOT, Cluster, Hit, Replica
from .raw import Raw
from .test_tasks import call, poll

APP = ROOT / "tests" / "cluster" / "cluster_app.py"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    started = Cluster(
        APP,
        tmp_path_factory.mktemp("task-liveness"),
        size=2,
        env={"CLUSTER_APP_TASK_HEARTBEAT": "0.25 1.5"},
    )
    try:
        yield started
    finally:
        started.stop()


def replica_at(cluster: Cluster, address: str) -> Replica:
    (found,) = [r for r in cluster.replicas if r.address == address]
    return found


def lines(cluster: Cluster, keep: Callable[[Hit], bool], count: int) -> list[Hit]:
    """The access log's lines that `keep` picks, once there are `count` of them."""
    deadline = time.monotonic() + HANG
    while True:
        kept = [hit for hit in cluster.hits() if keep(hit)]
        if len(kept) >= count or time.monotonic() > deadline:
            return kept
        time.sleep(0.02)


def modern_tools_call(hit: Hit) -> bool:
    """A stateless 2026-07-28 tools/call (no session; its method mirrored in a header)."""
    return hit.mcp_method == "tools/call" and hit.session == "-"


def test_kill_9_of_the_runner_fails_its_tasks_on_the_other_replica(cluster: Cluster) -> None:
    legacy = Raw(cluster.url)
    legacy.open()
    created = legacy.request("tools/call", {"name": "stalled", "arguments": {}, "task": {}})
    legacy_id = created["result"]["task"]["taskId"]
    # The session's second line (the first is notifications/initialized): lines are
    # picked by what they are, not by where they stand, since a line of another
    # request can trail into the log.
    runner = lines(cluster, lambda hit: hit.session == legacy.session_id, 2)[1].replica
    # A 2026-07-28 task on the same replica: round robin gets there within two calls.
    modern_id: str | None = None
    others: list[str] = []
    for sent in range(1, 5):
        task = call(cluster.url, "tools/call", {"name": "stalled", "arguments": {}}, "stalled")
        if lines(cluster, modern_tools_call, sent)[sent - 1].replica == runner:
            modern_id = task["taskId"]
            break
        others.append(task["taskId"])
    assert modern_id is not None, "round robin never reached the runner"
    for task_id in others:  # on the survivor: not part of this test
        call(cluster.url, "tasks/cancel", {"taskId": task_id}, task_id)
    # Both working, whichever replica is asked (the runner beats).
    for _ in range(2):
        assert call(cluster.url, "tasks/get", {"taskId": modern_id}, modern_id)["status"] == (
            "working"
        )
        assert legacy.request("tasks/get", {"taskId": legacy_id})["result"]["status"] == "working"

    replica_at(cluster, runner).kill()

    # 2025-11-25: a tasks/result sent now reaches the survivor (nginx skips the
    # dead one), waits while the heartbeat still holds, and ends with the failure.
    waited = legacy.request("tasks/result", {"taskId": legacy_id})
    assert waited["error"]["code"] == -32603, waited
    assert waited["error"]["message"] == RUNNER_LOST
    got = legacy.request("tasks/get", {"taskId": legacy_id})["result"]
    assert (got["status"], got["statusMessage"]) == ("failed", RUNNER_LOST)
    # 2026-07-28: tasks/get through the balancer shows it failed, with the error.
    failed: dict[str, Any] = poll(cluster.url, modern_id, "failed", "completed", "cancelled")
    assert failed["status"] == "failed", failed
    assert failed["statusMessage"] == RUNNER_LOST
    assert failed["error"] == {"code": -32603, "message": RUNNER_LOST}


def test_the_survivors_own_tasks_are_left_alone(cluster: Cluster) -> None:
    """A task on a live replica (the survivor, once the other was killed) is never
    failed under it: polled for two heartbeat expiries, it stays working, then
    completes with its result."""
    task = call(cluster.url, "tools/call", {"name": "job", "arguments": {"seconds": 3}}, "job")
    deadline = time.monotonic() + HANG
    while True:
        got = call(cluster.url, "tasks/get", {"taskId": task["taskId"]}, task["taskId"])
        if got["status"] != "working" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert got["status"] == "completed", got
    assert got["result"]["content"][0]["text"].endswith(" done")
