"""Seed page "Client callbacks", client side: an auto-filling elicitation callback.

As written on the page except for the import lines (see docs/porting.md).
Usage: python library_client.py URL [TOOL] [--mode=legacy|auto|2026-07-28]
"""

import sys

import anyio

from mcp_adapters import Client
from mcp_adapters.client import ClientRequestContext
from mcp_core.types import ElicitRequestParams, ElicitResult


async def handle_elicitation(
    context: ClientRequestContext,
    params: ElicitRequestParams,
) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada Lovelace"})


async def main(url: str, tool: str = "issue_card", mode: str = "legacy") -> None:
    async with Client(
        url,
        mode=mode,
        elicitation_callback=handle_elicitation,
    ) as client:
        result = await client.call_tool(tool)
        print(result.content)
        print(result.structured_content)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--mode")]
    mode = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--mode=")), "legacy")
    anyio.run(main, args[0], args[1] if len(args) > 1 else "issue_card", mode)
