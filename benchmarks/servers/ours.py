"""The benchmark server, written for mcp-sansio (`mcp_adapters.server.MCPServer`).

`benchmarks/servers/sdk.py` is the same server for the official SDK; the two files
differ only in their import lines and in how they are started:

    python -m mcp_adapters run benchmarks/servers/ours.py --transport stdio|http --port P
"""

from typing import Annotated

from pydantic import BaseModel

from mcp_adapters.server import Context, Elicit, MCPServer, Resolve

mcp = MCPServer("bench")


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


@mcp.tool(replay_elicitation=True)
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
