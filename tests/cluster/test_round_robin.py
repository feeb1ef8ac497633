"""A 2026-07-28 flow that asks the user really crosses replicas behind nginx.

tests/seeds runs every seed flow through two replicas behind the balancer; this
shows, from nginx's own access log, that the question and the retry that answers
it were served by different processes: the second verified the `requestState`
the first sealed, with the key ring and identity both got from the environment.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mcp_adapters import Client
from mcp_adapters.client import ClientRequestContext
from mcp_core import INVALID_PARAMS, MCPError
from mcp_core.types import ElicitRequestParams, ElicitResult
from tests.timing import HANG

from .harness import ROOT, Cluster

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    started = Cluster(
        ROOT / "examples" / "seeds" / "bistro_form_server.py",
        tmp_path_factory.mktemp("cluster"),
        size=2,
    )
    try:
        yield started
    finally:
        started.stop()


async def answer(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"accept_alternative": True, "date": "2025-12-27"})


async def test_the_retry_is_verified_by_the_other_replica(cluster: Cluster) -> None:
    before = len(cluster.hits())
    async with Client(cluster.url, mode="2026-07-28", elicitation_callback=answer) as client:
        result = await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
    assert result.content[0].text == "Booked a table for 2 on 2025-12-27."
    # nginx writes a request's log line once its response has gone out: the last
    # one may trail the client's answer by a moment.
    deadline = time.monotonic() + HANG
    while True:
        calls = [hit for hit in cluster.hits()[before:] if hit.mcp_method == "tools/call"]
        if len(calls) >= 2 or time.monotonic() > deadline:
            break
        await anyio.sleep(0.05)
    # The call that asked, then the retry carrying the answer and the sealed state.
    assert [hit.status for hit in calls] == [200, 200]
    assert calls[0].replica != calls[1].replica
    assert {hit.replica for hit in calls} <= {r.address for r in cluster.replicas}


async def test_without_a_shared_key_ring_the_other_replica_refuses_the_retry(
    tmp_path: Path,
) -> None:
    """The same cluster with no key ring configured: each replica seals with its own
    random key, so the retry that lands on the other one is refused, with the
    uniform invalid-state error, not obeyed."""
    alone = Cluster(
        ROOT / "examples" / "seeds" / "bistro_form_server.py",
        tmp_path,
        size=2,
        env={"MCP_REQUEST_STATE_KEYS": ""},
    )
    try:
        async with Client(alone.url, mode="2026-07-28", elicitation_callback=answer) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
    finally:
        alone.stop()
    assert refused.value.code == INVALID_PARAMS
    assert refused.value.data == {"reason": "invalid_request_state"}
