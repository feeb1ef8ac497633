"""A misfit answer never reaches the tool, in either era, through our Client.

The seed's `delete_folder` asks "Delete anyway?" with a boolean form; a client
whose callback answers with a string must not delete anything: legacy fails the
call with a readable tool error, 2026-07-28 asks again every round (the raw HTTP
forgeries are in test_forged_answers.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from examples.seeds import delete_folder_server as seed
from mcp_adapters import Client, RequestFailedError
from mcp_adapters.client import ClientRequestContext
from mcp_adapters.http import HTTPServer, http_server
from mcp_core.types import ElicitRequestParams, ElicitResult

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
PATH = "/tmp/project"
FORGED = {"confirm_delete": {"action": "accept", "content": {"ok": True}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def folders() -> Iterator[dict[str, list[str]]]:
    """The seed really deletes: give every test the page's folders, and put them back."""
    saved = {path: list(files) for path, files in seed._FOLDERS.items()}
    yield seed._FOLDERS
    seed._FOLDERS.clear()
    seed._FOLDERS.update(saved)


@asynccontextmanager
async def serving(make: Any) -> AsyncIterator[HTTPServer]:
    async with http_server(make(), port=0, close_timeout=0.5) as running:
        yield running


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_misfit_answer_never_reaches_the_tool_in_either_era(
    mode: str, folders: dict[str, list[str]]
) -> None:
    """Through the high-level client too: legacy fails the call with a readable tool
    error, 2026-07-28 keeps asking until the client's round limit ends the call."""
    asked: list[str] = []

    async def misfit(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"ok": "yes"})

    async with serving(lambda: seed.mcp) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        async with Client(url, mode=mode, elicitation_callback=misfit) as client:
            if mode == "legacy":
                result = await client.call_tool("delete_folder", {"path": PATH})
                assert result.is_error
                assert "the client's answer to 'confirm_delete' is invalid" in (
                    result.content[0].text
                )
                assert len(asked) == 1
            else:
                with pytest.raises(RequestFailedError, match="rounds exceeded"):
                    await client.call_tool("delete_folder", {"path": PATH})
                assert len(asked) > 1  # asked again each round, never accepted
    assert PATH in folders
