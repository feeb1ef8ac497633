"""A client process for the watchdog test: it starts a hung echo server, then waits forever.

    python client_proc.py

Prints one JSON line, {"server": pid, "grandchild": pid, "watchdog": pid}, once
the server has started a grandchild; the test then kills this process with
SIGKILL, so none of our cleanup runs, and checks that the server's group dies.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from mcp_adapters import StdioServerParameters, sockets
from mcp_core import ClientConfig

ECHO_SERVER = Path(__file__).with_name("echo_server.py")


def main() -> None:
    params = StdioServerParameters(
        sys.executable,
        [str(ECHO_SERVER), "--backend", "sockets", "--ignore-eof", "--ignore-term"],
        terminate_timeout=0.3,
    )
    # As long for the handshake as the server may take to start on a loaded machine.
    with sockets.connect_stdio(params, ClientConfig(mode="legacy"), connect_timeout=300) as session:
        result = session.request("tools/call", {"name": "grandchild", "arguments": {}})
        grandchild = json.loads(result.content[0].text)["pid"]
        assert session.process is not None
        report = {
            "server": session.process.pid,
            "grandchild": grandchild,
            "watchdog": session.process.watchdog_pid,
        }
        print(json.dumps(report), flush=True)
        time.sleep(600)


if __name__ == "__main__":
    main()
