"""Legacy sessions across replicas behind a real nginx doing plain round robin.

Two replicas share a real redis-server (`MCP_STORE_URL`). nginx's access log
names the replica of every request and each tool returns the process id that
ran it, so every test shows that its flow really crossed replicas.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from mcp_adapters import Client
from mcp_adapters.client import ClientRequestContext
from mcp_core.types import ElicitRequestParams, ElicitResult, LoggingMessageNotificationParams

from .harness import ROOT, Cluster, Hit
from .raw import Raw

pytestmark = pytest.mark.anyio

APP = ROOT / "tests" / "cluster" / "cluster_app.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    started = Cluster(APP, tmp_path_factory.mktemp("legacy"), size=2)
    try:
        yield started
    finally:
        started.stop()


def replica_of(cluster: Cluster, pid: str) -> str:
    (address,) = [r.address for r in cluster.replicas if str(r.process.pid) == pid]
    return address


def session_hits(cluster: Cluster, session_id: str) -> list[Hit]:
    return [hit for hit in cluster.hits() if hit.session == session_id]


async def confirm(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"ok": True})


async def test_a_question_asked_by_one_replica_is_answered_through_the_other(
    cluster: Cluster,
) -> None:
    async with Client(cluster.url, mode="legacy", elicitation_callback=confirm) as client:
        session_id = client.session.session_id
        results = [await client.call_tool("ask", {}) for _ in range(3)]
    askers = []
    for result in results:
        pid, ok = result.content[0].text.split()
        assert ok == "True"
        askers.append(replica_of(cluster, pid))
    hits = session_hits(cluster, session_id)
    # One session, served by both replicas.
    assert {hit.replica for hit in hits} == {r.address for r in cluster.replicas}
    # The answers: 202 POSTs after notifications/initialized, one per call, in order.
    answers = [hit.replica for hit in hits if hit.method == "POST" and hit.status == 202][1:]
    assert len(answers) == 3
    assert any(asker != answer for asker, answer in zip(askers, answers, strict=True))


async def test_the_log_level_set_through_one_replica_holds_on_the_other(
    cluster: Cluster,
) -> None:
    lines: list[str] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        lines.append(str(params.data))

    async with Client(cluster.url, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("error")
        pids = {(await client.call_tool("whoami", {})).content[0].text for _ in range(2)}
        for _ in range(2):
            assert (await client.call_tool("chatter", {})).content[0].text == "done"
    assert len(pids) == 2  # consecutive calls ran on both replicas
    assert lines == ["error line", "error line"]


def test_a_get_stream_resumes_on_the_other_replica_and_goes_on_there(cluster: Cluster) -> None:
    raw = Raw(cluster.url)
    raw.open()
    assert raw.session_id is not None
    raw.request("resources/subscribe", {"uri": "memo://pad"})
    first = raw.stream()
    assert first.status == 200
    touched_by = []
    for _ in range(2):
        answer = raw.request("tools/call", {"name": "touch", "arguments": {"uri": "memo://pad"}})
        touched_by.append(answer["result"]["content"][0]["text"])
    seen, note = first.next_message()
    assert note == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "memo://pad"},
    }
    missed, again = first.next_message()
    assert again == note
    first.close()
    # The update reached the stream from both replicas (the fan-out).
    assert len(set(touched_by)) == 2
    holder = _wait_for_get(cluster, raw.session_id, 1)
    # Make the holder the last one served: round robin sends the next one elsewhere.
    while cluster.hits()[-1].replica != holder:
        raw.request("ping")
    resumed = raw.stream(last_event_id=seen)
    assert resumed.status == 200
    assert resumed.next_message() == (missed, note)  # replayed from the shared log
    raw.request("tools/call", {"name": "touch", "arguments": {"uri": "memo://pad"}})
    later, live = resumed.next_message()  # and live on the new holder
    assert live == note and later != missed
    resumed.close()
    assert _wait_for_get(cluster, raw.session_id, 2) != holder


def _wait_for_get(cluster: Cluster, session_id: str, count: int) -> str:
    """The replica of the session's `count`th GET (nginx logs it once it ends)."""
    deadline = time.monotonic() + 60
    while True:
        gets = [h for h in session_hits(cluster, session_id) if h.method == "GET"]
        if len(gets) >= count:
            return gets[count - 1].replica
        assert time.monotonic() < deadline, "nginx never logged the GET"
        time.sleep(0.05)


async def test_a_listen_stream_on_one_replica_hears_an_update_made_on_the_other(
    cluster: Cluster,
) -> None:
    async with (
        Client(cluster.url, mode="2026-07-28") as listener,
        Client(cluster.url, mode="2026-07-28") as caller,
        listener.listen(resource_uris=["memo://pad"]) as notes,
    ):
        pids = set()
        for _ in range(2):
            result = await caller.call_tool("touch", {"uri": "memo://pad"})
            pids.add(result.content[0].text)
            note = await notes.receive()
            assert note.method == "notifications/resources/updated"
            assert note.params.uri == "memo://pad"
    assert len(pids) == 2  # one of the updates was made by the replica without the stream


def test_a_batch_mixing_an_answer_and_a_request_forwards_the_answer(cluster: Cluster) -> None:
    """2025-03-26: a batch carrying the answer to one replica's question and a new
    request lands on the other replica; the request runs there, the answer goes
    to the replica that asked (over the bus), whose call then completes."""
    raw = Raw(cluster.url, version="2025-03-26")
    raw.open(capabilities={"roots": {}})
    asking = raw.send(
        {"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": {"name": "roots"}}
    )
    assert asking.status == 200
    events = asking.stream()
    _, question = events.next_message()
    assert question["method"] == "roots/list"
    # Round robin: the call went to one replica; these two take the other, then
    # that one again, so the batch lands on the replica that did not ask.
    other = raw.request("tools/call", {"name": "whoami", "arguments": {}})
    raw.request("tools/call", {"name": "whoami", "arguments": {}})
    status, answers = raw.post(
        [
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"roots": [{"uri": "file:///bistro"}]},
            },
            {
                "jsonrpc": "2.0",
                "id": 101,
                "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}},
            },
        ]
    )
    assert status == 200
    (ran,) = [a for a in answers if a.get("id") == 101]
    batch_pid = ran["result"]["content"][0]["text"]
    assert batch_pid == other["result"]["content"][0]["text"]
    _, result = events.next_message()
    events.close()
    assert result["id"] == 100
    asker_pid, root = result["result"]["content"][0]["text"].split()
    assert root == "file:///bistro"
    assert asker_pid != batch_pid  # asked on one replica, answered through the other
