"""An MCP server on Twisted over stdio, with mcp_core only: a tool that asks the user.

python examples/twisted_stdio_server.py     # a client spawns it and talks over stdin/stdout

The engine does no I/O, so the reactor does: dataReceived feeds it, a callLater
wakes it at its next deadline, and whatever it has to say is written after each.
"""

import secrets
import time

from twisted.internet import reactor, stdio
from twisted.internet.protocol import Protocol

from mcp_core import (
    ConnectionClosed,
    InputReceived,
    RequestReceived,
    ServerConfig,
    ServerConnection,
)

CONFIG = ServerConfig(
    name="files-twisted",
    capabilities={"tools": {}},
    request_state_keys=(secrets.token_bytes(32),),  # seals 2026-07-28 questions
)
FOLDERS = {"/tmp/empty": [], "/tmp/project": ["main.py", "README.md"]}
PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = {"tools": [{"name": "delete_folder", "inputSchema": PATH}]}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
ASK_SECONDS = 60.0


def handle(conn: ServerConnection, event: RequestReceived | InputReceived) -> None:
    """A request, or the answers to its questions: one handler, no era test."""
    if event.method == "tools/list":
        conn.send_result(event.request_id, TOOLS)
        return
    if event.method != "tools/call" or event.params.name != "delete_folder":
        conn.send_error(event.request_id, -32601, f"Method not found: {event.method}")
        return
    path = str((event.params.arguments or {}).get("path", ""))
    answer = event.answers["confirm"] if isinstance(event, InputReceived) else None
    if FOLDERS.get(path) and answer is None:
        question = {"message": f"Delete {path} and its files?", "requestedSchema": CONFIRM}
        conn.request_input(
            event.request_id,
            {"confirm": {"method": "elicitation/create", "params": question}},
            deadline=time.monotonic() + ASK_SECONDS,
        )
        return
    if answer is None or (answer.accepted or {}).get("ok") is True:
        FOLDERS.pop(path, None)
        text = f"deleted {path}"
    else:
        text = f"kept {path}" + (f": {answer.message}" if answer.status != "answered" else "")
    conn.send_result(event.request_id, {"content": [{"type": "text", "text": text}]})


class MCPProtocol(Protocol):
    def __init__(self) -> None:
        self.conn = ServerConnection(CONFIG)
        self.timer = None  # the armed callLater, if any

    def dataReceived(self, data: bytes) -> None:
        self.react(self.conn.receive_data(data, wall_time=time.time()))

    def connectionLost(self, reason: object = None) -> None:
        # The closing batch: our questions go with their requests, and answering
        # one of those now is a no-op that returns False. Nothing here can raise.
        self.react(self.conn.receive_data(b""))

    def expire(self) -> None:
        self.timer = None
        self.react(self.conn.tick(time.monotonic()))

    def react(self, events: list) -> None:
        """Handle one batch, write what the engine has to say, re-arm the timer."""
        for event in events:
            if isinstance(event, (RequestReceived, InputReceived)):
                handle(self.conn, event)
            elif isinstance(event, ConnectionClosed) and reactor.running:
                reactor.stop()
        if self.conn.output_pending:
            self.transport.write(self.conn.data_to_send())
        self.rearm()

    def rearm(self) -> None:
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        self.timer = None
        deadline = self.conn.next_deadline()  # None once closed: nothing is in flight
        if deadline is not None:
            delay = max(0.0, deadline - time.monotonic())
            self.timer = reactor.callLater(delay, self.expire)


if __name__ == "__main__":
    stdio.StandardIO(MCPProtocol())
    reactor.run()
