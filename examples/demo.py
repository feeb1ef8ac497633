"""The main demo: a real server and client doing an elicitation round trip.

The seed server `examples/seeds/bistro_form_server.py` runs as a separate
process (stdio, then Streamable HTTP on 127.0.0.1); the seed client asks for a
table on Christmas day, the server asks back mid-call, the client's callback
answers, and the booking completes. Both protocol generations run: a legacy
session (`initialize`, then `elicitation/create` sent mid-call) and a
2026-07-28 exchange (`server/discover`, then `InputRequiredResult` and a retry).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from mcp_adapters import Client, StdioServerParameters
from mcp_core.types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "examples" / "seeds" / "bistro_form_server.py"
EXPECTED = "Booked a table for 2 on 2025-12-27."


async def handle_elicitation(context: Any, params: ElicitRequestParams) -> ElicitResult:
    """The seed page's callback: print the question, accept another date."""
    if isinstance(params, ElicitRequestURLParams):
        print(f"    callback: open this link to continue: {params.url}")
        return ElicitResult(action="accept")
    print(f"    callback: {params.message}")
    return ElicitResult(action="accept", content={"accept_alternative": True, "date": "2025-12-27"})


async def book(target: Any, mode: str) -> str:
    async with Client(target, mode=mode, elicitation_callback=handle_elicitation) as client:
        print(f"    connected: revision {client.protocol_version}")
        result = await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
        text: str = result.content[0].text
        print(f"    result: {text!r}")
        return text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_http_server(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcp_adapters",
            "run",
            str(SERVER),
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        cwd=ROOT,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the HTTP server did not start")


async def main() -> int:
    answers: list[str] = []
    stdio = StdioServerParameters(sys.executable, ["-m", "mcp_adapters", "run", str(SERVER)])
    for mode in ("legacy", "2026-07-28"):
        print(f"\n== stdio, client mode {mode!r}")
        answers.append(await book(stdio, mode))
    port = free_port()
    server = start_http_server(port)
    try:
        for mode in ("legacy", "auto"):
            print(f"\n== Streamable HTTP http://127.0.0.1:{port}/mcp, client mode {mode!r}")
            answers.append(await book(f"http://127.0.0.1:{port}/mcp", mode))
    finally:
        server.terminate()
        server.wait(timeout=10)
    ok = answers == [EXPECTED] * len(answers)
    print("\ndemo", "succeeded" if ok else f"FAILED: {answers}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
