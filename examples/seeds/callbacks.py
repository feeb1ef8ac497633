"""Seed page "Client callbacks": the sampling and roots callback signatures.

As written on the page except for the import lines (see docs/porting.md).
"""

from pydantic import FileUrl

from mcp_adapters.client import ClientRequestContext
from mcp_core.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ListRootsResult,
    Root,
    TextContent,
)


async def handle_sampling(
    context: ClientRequestContext,
    params: CreateMessageRequestParams,
) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text="The answer is 42."),
        model="my-llm",
    )


async def handle_list_roots(context: ClientRequestContext) -> ListRootsResult:
    return ListRootsResult(
        roots=[Root(uri=FileUrl("file:///home/ada/notebooks"), name="notebooks")]
    )
