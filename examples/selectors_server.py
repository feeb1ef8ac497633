"""Serve MCP from a plain `selectors` loop: no asyncio, no threads, no adapters.

python examples/selectors_server.py 8765      # then connect with any MCP client over TCP
"""

import selectors
import socket
import sys
import time

from mcp_core import ConnectionClosed, RequestReceived, ServerConfig, ServerConnection

CONFIG = ServerConfig(name="echo", capabilities={"tools": {}})
TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


def answer(conn: ServerConnection, event: RequestReceived) -> None:
    if event.method == "tools/list":
        conn.send_result(event.request_id, TOOLS)
    elif event.method == "tools/call":
        text = str((event.params.arguments or {}).get("text", ""))
        conn.send_result(event.request_id, {"content": [{"type": "text", "text": text}]})
    else:
        conn.send_error(event.request_id, -32601, f"Method not found: {event.method}")


def serve(port: int, stop_after: float | None = None) -> None:
    selector = selectors.DefaultSelector()
    listener = socket.create_server(("127.0.0.1", port))
    listener.setblocking(False)
    selector.register(listener, selectors.EVENT_READ)
    conns: dict[socket.socket, ServerConnection] = {}
    started = time.monotonic()
    while stop_after is None or time.monotonic() - started < stop_after:
        # Wake at the earliest engine deadline (none here, but this is the shape).
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
            conn = conns[sock]
            data = sock.recv(65536)  # b"" at end of stream
            for event in conn.receive_data(data, wall_time=time.time()):
                if isinstance(event, RequestReceived):
                    answer(conn, event)
                elif isinstance(event, ConnectionClosed):
                    selector.unregister(sock)
                    sock.close()
                    del conns[sock]
            if sock in conns:
                sock.sendall(conn.data_to_send())  # replies, errors, pings: all queued here
        for conn in conns.values():
            conn.tick(time.monotonic())
    for sock in [*conns, listener]:
        sock.close()
    selector.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 8765)
