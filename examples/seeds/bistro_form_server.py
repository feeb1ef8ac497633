"""Seed page "Elicitation", asking from inside a tool: book_table (form mode).

As written on the page except for the import lines (see docs/porting.md), and
one opt-in: `replay_elicitation=True` lets `ctx.elicit` work on 2026-07-28
connections too (the tool body runs again on the client's retry). Legacy
connections do not need it.
"""

from pydantic import BaseModel, Field

from mcp_adapters.server import Context, MCPServer

mcp = MCPServer("Bistro", replay_elicitation=True)


class AlternativeDate(BaseModel):
    accept_alternative: bool = Field(description="Try another date?")
    date: str = Field(default="2025-12-26", description="Alternative date (YYYY-MM-DD)")


@mcp.tool()
async def book_table(date: str, party_size: int, ctx: Context) -> str:
    """Book a table at the bistro."""
    if date != "2025-12-25":
        return f"Booked a table for {party_size} on {date}."

    result = await ctx.elicit(
        message=f"No tables for {party_size} on {date}. Would you like to try another date?",
        schema=AlternativeDate,
    )
    if result.action == "accept" and result.data.accept_alternative:
        return await book_table(result.data.date, party_size, ctx)
    return "No booking made."
