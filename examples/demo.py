"""The main demo: a client and a server connection exchanging real bytes.

Both protocol generations run back to back: a legacy session (`initialize`,
then tools/list and tools/call) and a 2026-07-28 exchange (`server/discover`,
then the same calls, each carrying its own `_meta` envelope). Every byte on the
wire is printed. No event loop is involved: this is the sans-IO core alone.
"""

from __future__ import annotations

import sys

from mcp_core import (
    ClientConfig,
    Connected,
    RequestReceived,
    ResponseReceived,
    ServerConfig,
)
from mcp_core.testing import ConnectionPair
from mcp_core.types import CallToolResult, ListToolsResult, TextContent, Tool

ECHO = Tool(
    name="echo",
    description="Echo the text back.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)


def show(direction: str, data: bytes) -> None:
    arrow = "C -> S" if direction == "client->server" else "S -> C"
    for line in data.decode().splitlines():
        print(f"  {arrow}  {line}")


def serve(pair: ConnectionPair, events: list[object]) -> None:
    """The application side of the server: answer what arrived."""
    for event in events:
        if not isinstance(event, RequestReceived):
            continue
        if event.method == "tools/list":
            pair.server.send_result(event.request_id, ListToolsResult(tools=[ECHO]))
        elif event.method == "tools/call":
            text = (event.params.arguments or {}).get("text", "")
            pair.server.send_result(
                event.request_id,
                CallToolResult(content=[TextContent(type="text", text=text)]),
            )


def run(mode: str) -> str:
    print(f"\n=== client mode {mode!r} ===")
    pair = ConnectionPair(
        ServerConfig(name="demo-server", version="1.0.0", capabilities={"tools": {}}),
        ClientConfig(name="demo-client", mode=mode),
        tap=show,
    )
    client_events, _ = pair.connect()
    connected = next(e for e in client_events if isinstance(e, Connected))
    print(f"  connected: revision {connected.protocol_version} ({connected.era.value})")
    pair.client.send_request("tools/list")
    _, server_events = pair.pump()
    serve(pair, server_events)
    client_events, _ = pair.pump()
    tools = next(e for e in client_events if isinstance(e, ResponseReceived)).result.tools
    print(f"  tools: {[t.name for t in tools]}")
    pair.client.send_request("tools/call", {"name": "echo", "arguments": {"text": "hello, MCP"}})
    _, server_events = pair.pump()
    serve(pair, server_events)
    client_events, _ = pair.pump()
    result = next(e for e in client_events if isinstance(e, ResponseReceived)).result
    text: str = result.content[0].text
    print(f"  echo returned: {text!r}")
    return text


def main() -> int:
    answers = [run("legacy"), run("auto")]
    ok = answers == ["hello, MCP", "hello, MCP"]
    print("\ndemo", "succeeded" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
