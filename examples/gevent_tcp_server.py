"""An MCP server on gevent over TCP, with mcp_core only: a tool that asks the user.

python examples/gevent_tcp_server.py 8765    # newline-delimited JSON-RPC over TCP

One greenlet reads each socket, one runs its timer, and each request is handled
in a greenlet of its own, which answers from outside event handling: it takes
the connection's lock, flushes, and wakes the timer when a deadline moved.
"""

import contextlib
import secrets
import sys
import time

import gevent
from gevent.event import Event
from gevent.lock import RLock
from gevent.server import StreamServer

from mcp_core import (
    ConnectionClosed,
    InputReceived,
    RequestReceived,
    ServerConfig,
    ServerConnection,
)

CONFIG = ServerConfig(
    name="files-gevent",
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
    gevent.sleep(0.01)  # stands for real work: other greenlets run meanwhile
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


def serve_client(sock, _address) -> None:
    conn = ServerConnection(CONFIG)
    lock = RLock()  # the engine is not thread-safe: one greenlet in it at a time
    rearm = Event()  # the timer's wake-up: a deadline moved, or the connection ended
    done = False

    def flush() -> None:  # with the lock held: after anything that may queue output
        if conn.output_pending:  # a peer that is gone: the reader sees the end of stream
            with contextlib.suppress(OSError):
                sock.sendall(conn.data_to_send())
        if conn.deadline_moved:
            rearm.set()

    def dispatch(events: list) -> None:
        nonlocal done
        for event in events:
            if isinstance(event, (RequestReceived, InputReceived)):
                gevent.spawn(run_handler, event)
            elif isinstance(event, ConnectionClosed):
                done = True
                rearm.set()
        flush()

    def run_handler(event: RequestReceived | InputReceived) -> None:
        with lock:  # answering after a disconnect is a no-op: nothing here raises for it
            handle(conn, event)
            flush()

    def timer() -> None:
        while not done:
            with lock:
                deadline = conn.next_deadline()
            rearm.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
            rearm.clear()
            with lock:
                dispatch(conn.tick(time.monotonic()))

    ticking = gevent.spawn(timer)
    while not done:
        try:
            data = sock.recv(65536)  # b"" at end of stream
        except OSError:
            data = b""  # a reset is an end of stream too
        with lock:
            dispatch(conn.receive_data(data, wall_time=time.time()))
    ticking.join()
    sock.close()


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    StreamServer(("127.0.0.1", port), serve_client).serve_forever()
