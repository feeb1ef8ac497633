"""`make cluster-demo`: the seed flows through a load balancer, and a replica killed.

Starts a real redis-server, three replicas of the seed server
(`python -m mcp_adapters run examples/seeds/bistro_form_server.py --transport
http`, configured only by the environment: the shared `requestState` key
ring, the server identity and `MCP_STORE_URL`) and nginx doing plain round
robin in front of them, all on loopback (the same harness as tests/cluster).
Then the seed client books a table through the balancer in both protocol
generations, `kill -9`s one replica in the middle of a legacy session, and
books again in that same session and in a new 2026-07-28 exchange. nginx's
access log shows which replica served each request.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

from mcp_adapters import Client
from mcp_core.types import ElicitRequestParams, ElicitResult
from tests.cluster.harness import Cluster

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "examples" / "seeds" / "bistro_form_server.py"
ARGUMENTS = {"date": "2025-12-25", "party_size": 2}


async def handle_elicitation(context: Any, params: ElicitRequestParams) -> ElicitResult:
    """The seed page's callback: print the question, accept another date."""
    print(f"    callback: {params.message}")
    return ElicitResult(action="accept", content={"accept_alternative": True, "date": "2025-12-27"})


async def served(cluster: Cluster, since: int) -> str:
    await anyio.sleep(0.5)  # nginx logs a request once its response has ended
    counts = Counter(hit.replica for hit in cluster.hits()[since:])
    return ", ".join(f"{replica} x{n}" for replica, n in sorted(counts.items()))


async def book(client: Client) -> str:
    result = await client.call_tool("book_table", ARGUMENTS)
    text: str = result.content[0].text
    print(f"    result: {text}")
    return text


async def main(workdir: Path) -> None:
    print("starting redis-server, 3 replicas and nginx on loopback ...")
    cluster = Cluster(SERVER, workdir, size=3)
    try:
        print(f"balancer: {cluster.url}; replicas: {[r.address for r in cluster.replicas]}")
        for mode in ("legacy", "2026-07-28"):
            since = len(cluster.hits())
            print(f"\n{mode}: book_table through the balancer")
            async with Client(cluster.url, mode=mode, elicitation_callback=handle_elicitation) as c:
                await book(c)
            print(f"    served by: {await served(cluster, since)}")

        print("\nlegacy: one session, a replica killed in the middle of it")
        since = len(cluster.hits())
        async with Client(
            cluster.url, mode="legacy", elicitation_callback=handle_elicitation
        ) as client:
            await book(client)
            victim = cluster.replicas[0]
            print(f"    kill -9 {victim.process.pid} (replica {victim.address})")
            victim.kill()
            for _ in range(2):
                await book(client)
        print(f"    served by: {await served(cluster, since)}")

        print("\n2026-07-28 after the kill")
        since = len(cluster.hits())
        async with Client(
            cluster.url, mode="2026-07-28", elicitation_callback=handle_elicitation
        ) as client:
            await book(client)
        print(f"    served by: {await served(cluster, since)}")
        print("\nevery flow completed through the balancer")
    finally:
        cluster.stop()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="mcp-cluster-demo-") as directory:
        anyio.run(main, Path(directory))
