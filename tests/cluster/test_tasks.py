"""Tasks across replicas behind nginx, on a real Redis (docs/tasks.md).

The task is created on one replica and runs there; nginx's round robin sends
the polls, the answer (`tasks/update`) and the cancel to the others, which
find the record on the store. nginx's access log shows the spread, the
result names the process that ran the work.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.timing import HANG

from .harness import Cluster
from .raw import Raw

VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
APP = "tests/cluster/cluster_app.py"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    from .harness import ROOT

    started = Cluster(ROOT / APP, tmp_path_factory.mktemp("tasks-cluster"), size=2)
    try:
        yield started
    finally:
        started.stop()


def call(url: str, method: str, params: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """One stateless 2026-07-28 request, its headers mirrored as SEP-2243 asks."""
    parts = urlsplit(url)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": {
                    "elicitation": {"form": {}},
                    "extensions": {TASKS: {}},
                },
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            },
        },
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
    }
    if name is not None:
        headers["mcp-name"] = name
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=HANG)
    try:
        conn.request("POST", parts.path, json.dumps(body).encode(), headers)
        response = conn.getresponse()
        text = response.read().decode()
    finally:
        conn.close()
    assert response.status == 200, (response.status, text)
    if response.getheader("content-type", "").startswith("text/event-stream"):
        found = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
        (answer,) = [m for m in found if m.get("id") == 1]
    else:
        answer = json.loads(text)
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def poll(url: str, task_id: str, *statuses: str) -> dict[str, Any]:
    deadline = time.monotonic() + HANG
    while True:
        task = call(url, "tasks/get", {"taskId": task_id}, task_id)
        if task["status"] in statuses or time.monotonic() > deadline:
            return task
        time.sleep(0.05)


def replicas_for(cluster: Cluster, before: int, method: str) -> set[str]:
    # nginx writes a line once its response has gone out: the last may trail.
    deadline = time.monotonic() + HANG
    while True:
        seen = {hit.replica for hit in cluster.hits()[before:] if hit.mcp_method == method}
        if len(seen) >= 2 or time.monotonic() > deadline:
            return seen


def test_a_task_is_polled_answered_and_finished_across_replicas(cluster: Cluster) -> None:
    before = len(cluster.hits())
    created = call(cluster.url, "tools/call", {"name": "gated_job", "arguments": {}}, "gated_job")
    assert created["resultType"] == "task"
    task_id = created["taskId"]
    waiting = poll(cluster.url, task_id, "input_required")
    assert waiting["status"] == "input_required", waiting
    ((key, question),) = waiting["inputRequests"].items()
    assert question["params"]["message"] == "Go on?"
    # Two reads in a row: round robin sends them to both replicas, and each shows the
    # same question (a task that asks before the first poll is polled only once above).
    for _ in range(2):
        read = call(cluster.url, "tasks/get", {"taskId": task_id}, task_id)
        assert read["status"] == "input_required", read
        assert read["inputRequests"] == waiting["inputRequests"]
    # Round robin: this update lands on either replica; the runner finds it.
    call(
        cluster.url,
        "tasks/update",
        {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"go": True}}}},
        task_id,
    )
    done = poll(cluster.url, task_id, "completed", "failed", "cancelled")
    assert done["status"] == "completed", done
    runner, text = done["result"]["content"][0]["text"].split(" ", 1)
    assert text == "go=True"
    assert len(replicas_for(cluster, before, "tasks/get")) == 2  # both answered the question
    # The result stays readable from every replica until the TTL.
    again = [call(cluster.url, "tasks/get", {"taskId": task_id}, task_id) for _ in range(2)]
    assert [t["result"]["content"][0]["text"] for t in again] == [f"{runner} go=True"] * 2


def test_a_cancel_on_another_replica_stops_the_work(cluster: Cluster) -> None:
    created = call(cluster.url, "tools/call", {"name": "job", "arguments": {"seconds": 600}}, "job")
    task_id = created["taskId"]
    # Two cancels: round robin makes sure one reaches the replica not running it.
    for _ in range(2):
        call(cluster.url, "tasks/cancel", {"taskId": task_id}, task_id)
    assert poll(cluster.url, task_id, "cancelled")["status"] == "cancelled"


def test_a_legacy_task_is_polled_on_any_replica(cluster: Cluster) -> None:
    raw = Raw(cluster.url)
    raw.open()
    created = raw.request("tools/call", {"name": "job", "arguments": {"seconds": 0}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    deadline = time.monotonic() + HANG
    while True:
        got = raw.request("tasks/get", {"taskId": task_id})["result"]
        if got["status"] == "completed" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert got["status"] == "completed"
    result = raw.request("tasks/result", {"taskId": task_id})["result"]
    assert result["content"][0]["text"].endswith(" done")
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


def settled_hits(cluster: Cluster, count: int) -> list[Any]:
    """The access log once it holds `count` lines (nginx writes each as its response ends)."""
    deadline = time.monotonic() + HANG
    while True:
        hits = cluster.hits()
        if len(hits) >= count or time.monotonic() > deadline:
            return hits
        time.sleep(0.02)


def test_a_legacy_tasks_question_is_asked_through_any_replica(cluster: Cluster) -> None:
    """2025-11-25: `gated_job` asks while running on one replica; the client's
    `tasks/result` (sent on seeing input_required) lands, by round robin, on the
    other, which asks the question from the task's record on that request; the
    answer reaches the body through the store, and the result comes back there."""
    raw = Raw(cluster.url)
    raw.open(capabilities={"elicitation": {"form": {}}})
    # This session's lines only: a line of an earlier test's request can trail into
    # the log (nginx writes it when that response ends), and would shift the count.
    session = raw.session_id
    assert session is not None

    def mine(count: int) -> list[Any]:
        deadline = time.monotonic() + HANG
        while True:
            hits = [hit for hit in cluster.hits() if hit.session == session]
            if len(hits) >= count or time.monotonic() > deadline:
                return hits
            time.sleep(0.02)

    before = len(mine(1))  # notifications/initialized (the initialize had no session yet)
    assert before == 1
    sent = 0

    def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        nonlocal sent
        sent += 1
        return raw.request(method, params)

    created = request("tools/call", {"name": "gated_job", "arguments": {}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    deadline = time.monotonic() + HANG
    while request("tasks/get", {"taskId": task_id})["result"]["status"] != "input_required":
        assert time.monotonic() < deadline, "the task never asked"
        time.sleep(0.05)
    hits = mine(before + sent)
    runner = hits[before].replica  # the tools/call's replica runs the body
    # Round robin over two: the next request goes to the one the last did not.
    if hits[before + sent - 1].replica != runner:
        request("tools/call", {"name": "whoami", "arguments": {}})  # shift by one
    waiting = raw.send(
        {"jsonrpc": "2.0", "id": 900, "method": "tasks/result", "params": {"taskId": task_id}}
    )
    assert waiting.status == 200
    events = waiting.stream()
    _, question = events.next_message()
    while question.get("method") != "elicitation/create":  # a status notification first
        _, question = events.next_message()
    assert question["params"]["message"] == "Go on?"
    assert question["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {
        "taskId": task_id
    }
    status, _ = raw.post(
        {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"go": True}},
        }
    )
    assert status == 202
    _, result = events.next_message()
    while result.get("id") != 900:
        _, result = events.next_message()
    events.close()
    assert result["result"]["content"][0]["text"].endswith(" go=True")
    # Two lines more: the answer's 202 (logged first: it ended first) and the tasks/result.
    hits = mine(before + sent + 2)
    (carried,) = [hit for hit in hits[before + sent :] if hit.status == 200]
    assert carried.replica != runner  # the tasks/result reached the other replica
