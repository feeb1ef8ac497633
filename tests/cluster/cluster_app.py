"""The server the cluster tests run as replicas: each tool says which process ran it.

`touch` announces a resource update (published on the store's fan-out, so the
replica holding the client's stream passes it on); `hang` reports its process
id and then waits forever, so a test can `kill -9` the replica running it.

`CLUSTER_APP_TASK_HEARTBEAT="<interval> <expiry>"` (seconds) sets the task
runner heartbeat (tests/cluster/test_task_liveness.py makes it short, so a
killed replica's tasks fail soon); unset, the defaults stand.
"""

from __future__ import annotations

import os

import anyio
from pydantic import BaseModel

from mcp_adapters.server import Context, MCPServer, TaskSettings


def _task_settings() -> TaskSettings | None:
    beat = os.environ.get("CLUSTER_APP_TASK_HEARTBEAT", "").split()
    if not beat:
        return None
    interval, expiry = map(float, beat)
    return TaskSettings(poll_interval=0.2, heartbeat_interval=interval, heartbeat_expiry=expiry)


mcp = MCPServer("cluster-app", tasks=_task_settings())


class Confirm(BaseModel):
    ok: bool


@mcp.resource("memo://pad")
def pad() -> str:
    """A resource clients subscribe to."""
    return "pad"


@mcp.tool()
def whoami() -> str:
    """The process id of the replica that ran this call."""
    return str(os.getpid())


@mcp.tool()
def touch(uri: str) -> str:
    """Announce that `uri` changed; returns the process id that announced it."""
    mcp.notify_resource_updated(uri)
    return str(os.getpid())


@mcp.tool()
async def ask(ctx: Context) -> str:
    """Ask the client a question; returns who asked and what came back."""
    result = await ctx.elicit(message="Sure?", schema=Confirm)
    ok = result.action == "accept" and result.data.ok
    return f"{os.getpid()} {ok}"


@mcp.tool()
async def roots(ctx: Context) -> str:
    """Ask the client for its roots (a 2025-03-26 server may: it has no
    elicitation); returns who asked and the first root's URI."""
    result = await ctx.list_roots()
    return f"{os.getpid()} {result.roots[0].uri}"


@mcp.tool()
async def chatter(ctx: Context) -> str:
    """Log at info and at error (the session's log level decides what goes out)."""
    await ctx.info("info line")
    await ctx.error("error line")
    return "done"


@mcp.tool()
async def hang(ctx: Context) -> str:
    """Say which process runs this call, then never answer."""
    await ctx.error(f"pid {os.getpid()}")
    await anyio.sleep_forever()
    return "never"


class Go(BaseModel):
    go: bool


@mcp.tool(task="optional")
async def job(seconds: float) -> str:
    """Runs as a task when the client lets it; says which process ran it."""
    await anyio.sleep(seconds)
    return f"{os.getpid()} done"


@mcp.tool(task="required")
async def gated_job(ctx: Context) -> str:
    """A task that asks before it finishes: the answer may reach any replica."""
    answer = await ctx.elicit(message="Go on?", schema=Go)
    return f"{os.getpid()} go={answer.action == 'accept' and answer.data.go}"


@mcp.tool(task="optional")
async def stalled() -> str:
    """A task that waits on an event nobody sets: it stays `working` until its
    replica is killed (or it is cancelled)."""
    await anyio.Event().wait()
    return "never"
