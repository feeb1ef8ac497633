"""Serve MCP from a plain `selectors` loop: no asyncio, no threads, no adapters.

python examples/selectors_server.py 8765      # then connect with any MCP client over TCP

The shape to copy (docs/embedding.md): read -> feed -> handle the events ->
write -> sleep until the next read or deadline; and when the deadline comes,
tick -> handle those events too -> write. The tool asks the user mid-call and
gives up after ASK_SECONDS; the same handler serves both protocol eras.
"""

import secrets
import selectors
import socket
import sys
import time
from collections.abc import Callable

from mcp_core import (
    ConnectionClosed,
    Event,
    InputReceived,
    RequestReceived,
    ServerConfig,
    ServerConnection,
)

CONFIG = ServerConfig(
    name="files",
    capabilities={"tools": {}},
    # Answers are trusted only under state this server sealed (2026-07-28 retries).
    request_state_keys=(secrets.token_bytes(32),),
)
FOLDERS = {"/tmp/empty": [], "/tmp/project": ["main.py", "README.md"]}
TOOLS = {
    "tools": [
        {"name": "echo", "inputSchema": {"type": "object"}},
        {
            "name": "delete_folder",
            "description": "Delete a folder, asking first when it is not empty.",
            "inputSchema": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    ]
}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
ASK_SECONDS = 60.0


def handle(conn: ServerConnection, event: RequestReceived | InputReceived, now: float) -> None:
    """Answer a request, or the answers to its questions: the same code in both eras."""
    if event.method == "tools/list":
        conn.send_result(event.request_id, TOOLS)
        return
    if event.method != "tools/call":
        conn.send_error(event.request_id, -32601, f"Method not found: {event.method}")
        return
    if event.params.name == "echo":
        text = str((event.params.arguments or {}).get("text", ""))
        conn.send_result(event.request_id, {"content": [{"type": "text", "text": text}]})
        return
    path = str((event.params.arguments or {}).get("path", ""))
    files = FOLDERS.get(path, [])
    answer = event.answers["confirm"] if isinstance(event, InputReceived) else None
    if files and answer is None:  # ask; the answers come back as an InputReceived
        message = f"{path} has {len(files)} file(s). Delete anyway?"
        question = {"message": message, "requestedSchema": CONFIRM}
        conn.request_input(
            event.request_id,
            {"confirm": {"method": "elicitation/create", "params": question}},
            deadline=now + ASK_SECONDS,  # the loop's clock, as for every deadline
        )
        return
    if answer is not None and answer.status != "answered":
        text = f"kept {path}: {answer.message}"  # refused, or no answer in time
    elif answer is None or (answer.accepted or {}).get("ok") is True:
        FOLDERS.pop(path, None)
        text = f"deleted {path}"
    else:
        text = f"kept {path}"  # declined, cancelled, or "no"
    conn.send_result(event.request_id, {"content": [{"type": "text", "text": text}]})


def dispatch(conn: ServerConnection, events: list[Event], now: float) -> bool:
    """Act on one batch of events; False once the connection is over."""
    for event in events:
        if isinstance(event, (RequestReceived, InputReceived)):
            handle(conn, event, now)
        elif isinstance(event, ConnectionClosed):
            return False
    return True


def serve(
    port: int, stop_after: float | None = None, stop: Callable[[], bool] | None = None
) -> None:
    """Serve until `stop_after` seconds have passed or `stop()` says so (both checked
    each time round the loop), or for ever."""
    selector = selectors.DefaultSelector()
    listener = socket.create_server(("127.0.0.1", port))
    listener.setblocking(False)
    selector.register(listener, selectors.EVENT_READ)
    conns: dict[socket.socket, ServerConnection] = {}
    started = time.monotonic()

    def write_or_drop(sock: socket.socket, alive: bool) -> None:
        sock.sendall(conns[sock].data_to_send())  # replies, errors, pings: all queued here
        if not alive:
            selector.unregister(sock)
            sock.close()
            del conns[sock]

    while (stop_after is None or time.monotonic() - started < stop_after) and not (
        stop is not None and stop()
    ):
        # Sleep until the next read or the earliest engine deadline (a question's).
        deadlines = [d for c in conns.values() if (d := c.next_deadline()) is not None]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else 0.5
        for key, _ in selector.select(timeout):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock is listener:
                client, _ = listener.accept()
                selector.register(client, selectors.EVENT_READ)
                conns[client] = ServerConnection(CONFIG)
                continue
            data = sock.recv(65536)  # b"" at end of stream
            conn = conns[sock]
            events = conn.receive_data(data, wall_time=time.time())  # wall clock: sealing
            write_or_drop(sock, dispatch(conn, events, time.monotonic()))
        now = time.monotonic()
        for sock, conn in list(conns.items()):
            deadline = conn.next_deadline()
            if deadline is not None and deadline <= now:
                # A timed-out question comes back as an InputReceived: handle it, write.
                write_or_drop(sock, dispatch(conn, conn.tick(now), now))
    for sock in [*conns, listener]:
        sock.close()
    selector.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 8765)
