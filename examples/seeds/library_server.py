"""Seed page "Client callbacks": issue_card and client_features.

As written on the page except for the import lines (see docs/porting.md) and
the `replay_elicitation=True` opt-in for 2026-07-28 connections.
"""

from pydantic import BaseModel

from mcp_adapters.server import Context, MCPServer
from mcp_core.types import (
    ClientCapabilities,
    ElicitationCapability,
    RootsCapability,
    SamplingCapability,
)

mcp = MCPServer("Library", replay_elicitation=True)


class CardHolder(BaseModel):
    name: str


@mcp.tool()
async def issue_card(ctx: Context) -> str:
    """Issue a new library card."""
    answer = await ctx.elicit("What name should go on the card?", schema=CardHolder)
    if answer.action == "accept":
        return f"Card issued to {answer.data.name}."
    return "No card issued."


@mcp.tool()
def client_features(ctx: Context) -> list[str]:
    """Which optional features the connected client declared."""
    declared = {
        "elicitation": ClientCapabilities(elicitation=ElicitationCapability()),
        "sampling": ClientCapabilities(sampling=SamplingCapability()),
        "roots": ClientCapabilities(roots=RootsCapability()),
    }
    return [
        name
        for name, capability in declared.items()
        if ctx.session.check_client_capability(capability)
    ]
