"""What a legacy session survives behind the balancer: `kill -9` of a replica
mid-call, and a Redis restart. Real processes, real signals, a real Redis."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from mcp_adapters import Client, ConnectionClosedError
from mcp_adapters.client import ClientRequestContext
from mcp_core import MCPError
from mcp_core.types import ElicitRequestParams, ElicitResult, LoggingMessageNotificationParams
from tests.timing import HANG

from .harness import ROOT, Cluster

pytestmark = pytest.mark.anyio

APP = ROOT / "tests" / "cluster" / "cluster_app.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    started = Cluster(APP, tmp_path_factory.mktemp("failures"), size=2)
    try:
        yield started
    finally:
        started.stop()


async def confirm(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"ok": True})


async def test_a_redis_restart_gives_clear_errors_and_the_replicas_recover(
    cluster: Cluster,
) -> None:
    redis = cluster.redis
    assert redis is not None
    async with Client(cluster.url, mode="legacy") as client:
        await client.call_tool("whoami", {})
        redis.stop()
        try:
            for _ in range(2):  # through both replicas
                with pytest.raises(MCPError) as down:
                    await client.call_tool("whoami", {})
                assert "session store unavailable" in down.value.message
        finally:
            redis.start()  # empty: this Redis keeps nothing on disk
        # The record went with it: the session is over, and the client is told so.
        with pytest.raises(ConnectionClosedError, match="session expired"):
            await client.call_tool("whoami", {})
    # Nothing was restarted but Redis: a new session works across both replicas.
    async with Client(cluster.url, mode="legacy", elicitation_callback=confirm) as client:
        pids = {(await client.call_tool("whoami", {})).content[0].text for _ in range(2)}
        asked = [(await client.call_tool("ask", {})).content[0].text for _ in range(2)]
    assert pids == {str(r.process.pid) for r in cluster.replicas}
    assert all(text.endswith(" True") for text in asked)


async def test_kill_9_fails_the_calls_of_the_dead_replica_and_the_session_goes_on(
    cluster: Cluster,
) -> None:
    running_on: list[str] = []
    failures: list[BaseException] = []
    said = anyio.Event()

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        running_on.append(str(params.data).removeprefix("pid "))
        said.set()

    async with Client(
        cluster.url, mode="legacy", logging_callback=on_log, elicitation_callback=confirm
    ) as client:
        before = {(await client.call_tool("whoami", {})).content[0].text for _ in range(2)}
        assert len(before) == 2

        async def call_hang() -> None:
            try:
                await client.call_tool("hang", {})
            except Exception as exc:  # what the call ends with is the point
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_hang)
            with anyio.fail_after(HANG):
                await said.wait()
            (victim,) = [r for r in cluster.replicas if str(r.process.pid) == running_on[0]]
            victim.kill()
            with anyio.fail_after(HANG):  # the call ends: it never hangs
                while not failures:
                    await anyio.sleep(0.05)
        # The same session, on the survivor: plain calls and a question.
        (survivor,) = [r for r in cluster.replicas if r is not victim]
        after = {(await client.call_tool("whoami", {})).content[0].text for _ in range(3)}
        asked = await client.call_tool("ask", {})
    assert after == {str(survivor.process.pid)}
    assert asked.content[0].text == f"{survivor.process.pid} True"
    # Either the replay of what the dead replica kept ends without an answer, or
    # it kept nothing yet (events are written behind): both say the stream is lost.
    (failure,) = failures
    assert "lost" in str(failure)
