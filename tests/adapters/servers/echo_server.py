"""A stdio MCP server for the adapter tests, on any backend.

    python echo_server.py --backend asyncio|trio|sockets [--ignore-eof] [--ignore-term]

Tools: echo(text), fail() (answers with a JSON-RPC error), slow(tag) (records
the tag as started, reports progress 1, then waits until cancelled and records the
tag as cancelled), cancelled() (the cancelled tags), slow_state() (both lists),
progress(steps), log(text), pid(),
grandchild() (starts a process in this server's group), stray() (writes to
stdout every way it can), roots() (asks the client for its roots; legacy only).

`--ignore-eof` keeps the process alive after stdin ends and `--ignore-term`
ignores SIGTERM: together they make the hung server the client must kill.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Runs as a script: make the repository importable without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from mcp_core import INVALID_PARAMS, MCPError, RequestReceived, ServerConfig
from mcp_core.types import CallToolResult, ListToolsResult, TextContent, Tool

GRANDCHILD_MARKER = "mcp-adapters-test-grandchild"
TOOLS = [
    Tool(name=name, input_schema={"type": "object"})
    for name in (
        "echo",
        "fail",
        "slow",
        "cancelled",
        "slow_state",
        "progress",
        "log",
        "pid",
        "grandchild",
        "stray",
        "roots",
    )
]
CONFIG = ServerConfig(
    name="test-server", version="1.0.0", capabilities={"tools": {}, "logging": {}}
)
STARTED: list[str] = []  # slow() calls that ran at all
CANCELLED: list[str] = []  # slow() calls cancelled once running


def text(value: Any) -> CallToolResult:
    if not isinstance(value, str):
        value = json.dumps(value)
    return CallToolResult(content=[TextContent(type="text", text=value)])


def start_grandchild() -> int:
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", "import time; time.sleep(600)", GRANDCHILD_MARKER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    return child.pid


def stray_output() -> None:
    print("stray print() from a tool")
    sys.stdout.write("stray sys.stdout.write\n")
    sys.stdout.flush()
    os.write(1, b"stray os.write to fd 1\n")
    subprocess.run(["echo", "stray output of a child process"], check=True)


def simple(name: str, arguments: dict[str, Any]) -> CallToolResult | None:
    """The tools whose behaviour does not depend on the backend."""
    if name == "echo":
        return text(arguments.get("text", ""))
    if name == "fail":
        raise MCPError(INVALID_PARAMS, "failure requested", {"tool": "fail"})
    if name == "cancelled":
        return text(CANCELLED)
    if name == "slow_state":
        return text({"started": STARTED, "cancelled": CANCELLED})
    if name == "pid":
        return text({"pid": os.getpid(), "pgid": os.getpgrp()})
    if name == "grandchild":
        return text({"pid": start_grandchild()})
    if name == "stray":
        stray_output()
        return text("wrote to stdout")
    return None


# ---------------------------------------------------------------- async backends


async def async_handler(session: Any, request: RequestReceived) -> Any:
    import anyio

    if request.method == "tools/list":
        return ListToolsResult(tools=TOOLS)
    name = request.params.name
    arguments = request.params.arguments or {}
    rid = request.request_id
    found = simple(name, arguments)
    if found is not None:
        return found
    if name == "slow":
        tag = arguments.get("tag", "?")
        STARTED.append(tag)
        try:
            await session.send_progress(rid, 1, None, "started")  # when the caller asked
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            CANCELLED.append(tag)
            raise
        return text("slow finished")
    if name == "progress":
        steps = int(arguments.get("steps", 3))
        for i in range(1, steps + 1):
            await session.send_progress(rid, i, steps, f"step {i}")
        return text("progress done")
    if name == "log":
        sent = await session.send_log("info", arguments.get("text", ""), related_request_id=rid)
        return text({"sent": sent})
    if name == "roots":
        result = await session.request("roots/list", related_request_id=rid)
        return text([root.uri for root in result.roots])
    return text(f"unknown tool {name}")


# -------------------------------------------------------------- blocking backend


def sync_handler(session: Any, request: RequestReceived) -> Any:
    if request.method == "tools/list":
        return ListToolsResult(tools=TOOLS)
    name = request.params.name
    arguments = request.params.arguments or {}
    rid = request.request_id
    found = simple(name, arguments)
    if found is not None:
        return found
    if name == "slow":
        tag = arguments.get("tag", "?")
        STARTED.append(tag)
        session.send_progress(rid, 1, None, "started")  # when the caller asked
        if session.wait_cancelled(rid, 60):
            CANCELLED.append(tag)
            return None
        return text("slow finished")
    if name == "progress":
        steps = int(arguments.get("steps", 3))
        for i in range(1, steps + 1):
            session.send_progress(rid, i, steps, f"step {i}")
        return text("progress done")
    if name == "log":
        sent = session.send_log("info", arguments.get("text", ""), related_request_id=rid)
        return text({"sent": sent})
    if name == "roots":
        result = session.request("roots/list", related_request_id=rid)
        return text([root.uri for root in result.roots])
    return text(f"unknown tool {name}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["asyncio", "trio", "sockets"], default="asyncio")
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    args = parser.parse_args()
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"echo_server: serving on {args.backend}", file=sys.stderr, flush=True)
    if args.backend == "sockets":
        from mcp_adapters import sockets

        sockets.serve_stdio(sync_handler, CONFIG)
    elif args.backend == "trio":
        import trio

        from mcp_adapters import trio as trio_backend

        trio.run(trio_backend.serve_stdio, async_handler, CONFIG)
    else:
        import asyncio

        from mcp_adapters import asyncio as asyncio_backend

        asyncio.run(asyncio_backend.serve_stdio(async_handler, CONFIG))
    print("echo_server: stdin ended", file=sys.stderr, flush=True)
    if args.ignore_eof:
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
