"""The server of the command-line tests: `python -m mcp_adapters run slow_server.py`.

`double` answers after a pause, so when its request is the last line of a file
the input has ended long before the answer is due. `explode` raises.
"""

import anyio

from mcp_adapters.server import MCPServer

mcp = MCPServer("Slow")


@mcp.tool()
async def double(x: int) -> int:
    """Double x, after a pause."""
    await anyio.sleep(0.2)
    return 2 * x


@mcp.tool()
def explode(x: int) -> int:
    """Always fails."""
    raise ValueError(f"cannot take {x}")
