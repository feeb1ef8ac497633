"""A server whose tool calls run as tasks, in both eras (docs/tasks.md).

    python -m mcp_adapters run examples/tasks_server.py --transport http

`render` may run as a task (the client chooses on 2025-11-25; on 2026-07-28 the
server makes it one whenever the request declares the tasks extension);
`approve` must, and asks the user midway through the same `ctx.elicit` as any
tool; `wait_forever` is there to be cancelled. With a `store=` shared by the
replicas (`mcp_adapters.store.RedisStore`), `tasks/get` and the result work on
any of them.
"""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from mcp_adapters.server import Context, MCPServer, TaskSettings

mcp = MCPServer("tasks-demo", tasks=TaskSettings(poll_interval=0.05))


class Approval(BaseModel):
    approve: bool


@mcp.tool(task="optional")
async def render(frames: int, ctx: Context) -> str:
    """Render some frames (slowly), reporting progress."""
    for frame in range(1, frames + 1):
        await anyio.sleep(0.01)
        await ctx.report_progress(frame, frames, f"frame {frame}")
    return f"rendered {frames} frames"


@mcp.tool(task="required")
async def approve(item: str, ctx: Context) -> str:
    """Ask the user to approve `item`, then act on the answer."""
    answer = await ctx.elicit(f"Approve {item}?", Approval)
    if answer.action == "accept" and answer.data.approve:
        return f"{item}: approved"
    return f"{item}: not approved"


@mcp.tool(task="optional")
async def wait_forever() -> str:
    """Never finishes by itself (cancel it with tasks/cancel)."""
    await anyio.sleep_forever()
    return "unreachable"
