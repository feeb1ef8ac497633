"""The in-process link when reading a message raises (a bug of ours, not the peer's input).

The end that failed logs it and closes; what it had queued still goes out, and the peer
sees its input end: a call waiting on it fails as on a closed connection. The link reads a
single message in `deliver_to` itself and a batch in `feed_messages`; this pins the first,
the one every in-process call takes.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcp_adapters import Client, ConnectionClosedError
from mcp_adapters.server import MCPServer
from mcp_core import ServerConnection


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_read_that_raises_closes_the_end_and_fails_the_waiting_call(
    backend: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    server = MCPServer("failing")

    @server.tool()
    def echo(text: str) -> str:
        return text

    def broken(self: ServerConnection, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug while reading")

    async def main() -> None:
        async with Client(server, mode="2026-07-28") as client:
            assert (await client.call_tool("echo", {"text": "before"})).content[0].text == "before"
            monkeypatch.setattr(ServerConnection, "receive_message", broken)
            with pytest.raises(ConnectionClosedError):
                await client.call_tool("echo", {"text": "after"})

    with caplog.at_level(logging.ERROR, logger="mcp_adapters.transports.link"):
        anyio.run(main, backend=backend)
    assert "link: processing input failed; closing" in caplog.text
