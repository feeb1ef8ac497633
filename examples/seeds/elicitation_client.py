"""Seed page "Elicitation", client side: one callback for both modes.

As written on the page except for the import lines (see docs/porting.md).
Usage: python elicitation_client.py URL [TOOL] [--mode legacy|auto|2026-07-28]
(TOOL is book_table by default; pay_deposit takes the URL-mode branch).
"""

import sys

import anyio

from mcp_adapters import Client
from mcp_adapters.client import ClientRequestContext
from mcp_core.types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult


async def handle_elicitation(
    context: ClientRequestContext, params: ElicitRequestParams
) -> ElicitResult:
    if isinstance(params, ElicitRequestURLParams):
        print(f"Open this link to continue: {params.url}")
        return ElicitResult(action="accept")
    print(params.message)
    return ElicitResult(action="accept", content={"accept_alternative": True, "date": "2025-12-27"})


async def main(url: str, tool: str = "book_table", mode: str = "legacy") -> None:
    arguments = (
        {"date": "2025-12-25", "party_size": 2} if tool == "book_table" else {"booking_id": "b-42"}
    )
    async with Client(
        url,
        mode=mode,
        elicitation_callback=handle_elicitation,
    ) as client:
        result = await client.call_tool(tool, arguments)
        print(result.content)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--mode")]
    mode = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--mode=")), "legacy")
    anyio.run(main, args[0], args[1] if len(args) > 1 else "book_table", mode)
