"""The benchmark server, written for the official SDK (`mcp.server.mcpserver.MCPServer`).

The same tools as `benchmarks/servers/ours.py`; only the imports and the start differ
(the SDK's `ctx.elicit` has no 2026-07-28 path, so `book` has no opt-in here), and
`log_level="WARNING"`: at the SDK's default INFO, uvicorn logs every HTTP request
and in-process use turns on httpx's per-request log lines, costs ours does not pay:

    python benchmarks/servers/sdk.py --transport stdio|http --port P
"""

import argparse
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

mcp = MCPServer("bench", log_level="WARNING")  # INFO would log every request


class Booking(BaseModel):
    date: str
    guests: int


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back (a plain function)."""
    return text


@mcp.tool()
async def echo_async(text: str) -> str:
    """Echo the text back (a coroutine function)."""
    return text


@mcp.tool()
async def book(text: str, ctx: Context) -> str:
    """Ask a two-field form with ctx.elicit, then answer."""
    result = await ctx.elicit("Book a table?", Booking)
    if result.action != "accept":
        return "not booked"
    return f"booked {result.data.guests} on {result.data.date}"


async def ask_booking(text: str) -> Elicit[Booking]:
    return Elicit("Book a table?", Booking)


@mcp.tool()
async def book_resolved(text: str, booking: Annotated[Booking, Resolve(ask_booking)]) -> str:
    """Ask the same two-field form through a resolver."""
    return f"booked {booking.guests} on {booking.date}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio", choices=["stdio", "http"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.transport == "stdio":
        mcp.run("stdio")
    else:
        mcp.run("streamable-http", host=args.host, port=args.port)
