"""An unnamed server with a lifespan that records when it runs, SDK style.

LIFESPAN_LOG=events.txt python -m mcp_adapters run lifespan_server.py
LIFESPAN_LOG=events.txt python lifespan_server.py      # anyio.run(mcp.run_stdio_async)
"""

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from mcp_adapters.server import Context, MCPServer

EVENTS = Path(os.environ["LIFESPAN_LOG"])


@contextlib.asynccontextmanager
async def lifespan(server: MCPServer) -> AsyncIterator[dict[str, str]]:
    with EVENTS.open("a") as events:
        events.write("up\n")
    try:
        yield {"greeting": f"hello from {server.name}"}
    finally:
        with EVENTS.open("a") as events:
            events.write("down\n")


mcp = MCPServer(lifespan=lifespan)


@mcp.tool()
async def greet(ctx: Context) -> str:
    """What the lifespan yielded."""
    return str(ctx.request_context.lifespan_context["greeting"])


if __name__ == "__main__":
    anyio.run(mcp.run_stdio_async)
