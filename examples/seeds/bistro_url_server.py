"""Seed page "Elicitation", sending the user to a URL: pay_deposit / confirm_deposit.

As written on the page except for the import lines (see docs/porting.md) and
the `replay_elicitation=True` opt-in for 2026-07-28 connections.
"""

from mcp_adapters.server import Context, MCPServer

mcp = MCPServer("Bistro", replay_elicitation=True)


@mcp.tool()
async def pay_deposit(booking_id: str, ctx: Context) -> str:
    """Take the deposit that confirms a booking."""
    result = await ctx.elicit_url(
        message="A 20 EUR deposit confirms your booking.",
        url=f"https://pay.example.com/deposit/{booking_id}",
        elicitation_id=f"deposit-{booking_id}",
    )
    if result.action == "accept":
        return "Complete the payment in your browser."
    return "No deposit taken. The booking expires in one hour."


@mcp.tool()
async def confirm_deposit(booking_id: str, ctx: Context) -> str:
    """Record a payment reported by the payment provider."""
    await ctx.session.send_elicit_complete(f"deposit-{booking_id}")
    return f"Deposit received for booking {booking_id}."
