"""An answer is trusted only for a question this server asked (issue 11, part 5).

The seed's `delete_folder` asks "Delete anyway?" through a resolver. A 2026-07-28
client could skip the question and send a retry that carries the answer it
wants (`inputResponses`) and no sealed `requestState`; the folder must survive,
and the server must ask again, as the official SDK does. The same holds for an
answer that does not fit the question's form. Pinned over Streamable HTTP (a real
TCP socket), with the seed as written (no keys configured: the server makes its
own) and with `request_state_keys` configured.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from examples.seeds import delete_folder_server as seed
from mcp_adapters import Client, RequestFailedError
from mcp_adapters.client import ClientRequestContext
from mcp_adapters.http import HTTPServer, http_server
from mcp_adapters.server import MCPServer
from mcp_core import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION
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


def seed_with_keys() -> MCPServer:
    """The seed's tool, on a server whose keys are configured (shared by replicas)."""
    server = MCPServer("Files", request_state_keys=[b"replica-key-".ljust(32, b"!")])
    server.tool()(seed.delete_folder)
    return server


SERVERS = {"seed as written": lambda: seed.mcp, "keys configured": seed_with_keys}


@asynccontextmanager
async def serving(make: Any) -> AsyncIterator[HTTPServer]:
    async with http_server(make(), port=0, close_timeout=0.5) as running:
        yield running


async def post(port: int, rid: int, params: dict[str, Any]) -> dict[str, Any]:
    """One raw 2026-07-28 tools/call over a fresh TCP connection; its JSON answer."""
    params = {
        "name": "delete_folder",
        "arguments": {"path": PATH},
        **params,
        "_meta": {
            META_PROTOCOL_VERSION: MODERN,
            META_CLIENT_CAPABILITIES: {"elicitation": {}},
            META_CLIENT_INFO: {"name": "forger", "version": "1"},
        },
    }
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    head = (
        "POST /mcp HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Accept: application/json, text/event-stream\r\n"
        "Content-Type: application/json\r\n"
        f"MCP-Protocol-Version: {MODERN}\r\n"
        "Mcp-Method: tools/call\r\n"
        "Mcp-Name: delete_folder\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        with anyio.fail_after(10):
            await stream.send(head.encode() + body.encode())
            data = b""
            while b"\r\n\r\n" not in data:
                data += await stream.receive()
            headers, _, rest = data.partition(b"\r\n\r\n")
            length = int(
                next(
                    line.split(b":", 1)[1]
                    for line in headers.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
            )
            while len(rest) < length:
                rest += await stream.receive()
    answer: dict[str, Any] = json.loads(rest)
    return answer


def asks_again(answer: dict[str, Any]) -> str:
    """The server asked (again): an InputRequiredResult with the question; its state."""
    result = answer["result"]
    assert result["resultType"] == "input_required", answer
    assert list(result["inputRequests"]) == ["confirm_delete"]
    message = result["inputRequests"]["confirm_delete"]["params"]["message"]
    assert message == f"{PATH} has 2 file(s). Delete anyway?"
    token: str = result["requestState"]
    return token


@pytest.mark.parametrize("server", list(SERVERS))
async def test_answers_without_the_sealed_state_never_reach_the_resolver(
    server: str, folders: dict[str, list[str]]
) -> None:
    async with serving(SERVERS[server]) as running:
        asks_again(await post(running.port, 1, {"inputResponses": FORGED}))
        assert PATH in folders  # the folder the forged "yes" would have deleted
        # Nor does state sealed for another call make them answers: another path.
        token = asks_again(await post(running.port, 2, {}))
        other = {"name": "delete_folder", "arguments": {"path": "/tmp/empty"}}
        forged = await post(
            running.port, 3, {**other, "inputResponses": FORGED, "requestState": token}
        )
        assert forged["error"]["code"] == -32602  # the state is bound to its arguments
        # With its own sealed state, the same answer is the user's: the folder goes.
        done = await post(running.port, 4, {"inputResponses": FORGED, "requestState": token})
        assert done["result"]["content"][0]["text"] == f"deleted {PATH}"
    assert PATH not in folders


@pytest.mark.parametrize("server", list(SERVERS))
async def test_an_answer_that_does_not_fit_the_form_is_asked_again(
    server: str, folders: dict[str, list[str]]
) -> None:
    async with serving(SERVERS[server]) as running:
        token = asks_again(await post(running.port, 1, {}))
        misfit = {"confirm_delete": {"action": "accept", "content": {"ok": "yes"}}}
        again = await post(running.port, 2, {"inputResponses": misfit, "requestState": token})
        asks_again(again)
        assert PATH in folders


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
