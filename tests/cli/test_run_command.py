"""`python -m mcp_adapters run`: its help, where it says it serves, its log level.

The address a server prints is taken from its stderr and handed to `Client`
as is: the test passes only if what is printed is where it really serves.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_adapters import Client

from .conftest import (
    INITIALIZE,
    INITIALIZED,
    ROOT,
    SERVERS,
    SLOW_SERVER,
    TIMEOUT,
    answers,
    bash,
    call,
    env,
    jsonl,
)


def run_help() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_adapters", "run", "--help"],
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_run_help_describes_every_option_with_its_default() -> None:
    text = run_help()
    options = text.split("options:", 1)[1]
    # One entry per option: its flags at two spaces, its description after them.
    entries = re.split(r"\n  (?=-)", "\n" + options.strip("\n"))
    described = {}
    for entry in filter(None, (e.strip() for e in entries)):
        flags = re.findall(r"--[a-z-]+", entry.split("  ", 1)[0])
        described[flags[0]] = " ".join(entry.split())
    assert set(described) >= {
        "--help",
        "--transport",
        "--host",
        "--port",
        "--path",
        "--backend",
        "--log-level",
    }
    for flag, description in described.items():
        if flag != "--help":
            assert re.search(r"\(default: [^)]+\)$", description), description
    assert "(default: 127.0.0.1)" in described["--host"]
    assert "(default: 8000)" in described["--port"]
    assert "(default: /mcp)" in described["--path"]
    assert "(default: stdio)" in described["--transport"]
    assert "(default: info)" in described["--log-level"]


async def first_tool(target: str) -> str:
    with anyio.fail_after(TIMEOUT):
        async with Client(target) as client:
            tools = await client.list_tools()
    return tools.tools[0].name


@pytest.mark.parametrize(
    ("transport", "printed"),
    [
        ("http", r"serving Slow on (http://127\.0\.0\.1:\d+/mcp)$"),
        ("ws", r"serving Slow on (ws://127\.0\.0\.1:\d+/mcp)$"),
        ("tcp", r"serving Slow on (tcp://127\.0\.0\.1:\d+)$"),
    ],
)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_says_where_it_serves_and_the_client_connects_there(
    transport: str, printed: str, backend: str, serve: Any
) -> None:
    served = serve(str(SLOW_SERVER), "-t", transport, "--port", "0", "--backend", backend)
    url = served.wait_for(printed).group(1)
    assert anyio.run(first_tool, url, backend=backend) in ("double", "explode")
    status, stderr = served.interrupt()
    assert status == 0, stderr
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_ctrl_c_with_a_connection_open_stops_cleanly(backend: str, serve: Any) -> None:
    # A session still open when Ctrl-C arrives: on trio the interrupt used to land
    # wherever the loop was, and one landing in a connection's session corrupted
    # the nursery stack (exit status 1, "Nursery stack corrupted").
    served = serve(str(SLOW_SERVER), "-t", "tcp", "--port", "0", "--backend", backend)
    url = served.wait_for(r"serving Slow on (tcp://127\.0\.0\.1:\d+)$").group(1)
    host, port = url.removeprefix("tcp://").split(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        sock.sendall(jsonl(INITIALIZE).encode())
        reply = sock.makefile("rb").readline()
        assert json.loads(reply)["id"] == INITIALIZE["id"]
        status, stderr = served.interrupt()
    assert status == 0, stderr
    assert "Traceback" not in stderr, stderr


def test_log_level_warning_keeps_quiet_about_serving_but_not_about_failures(
    tmp_path: Path,
) -> None:
    requests = jsonl(INITIALIZE, INITIALIZED, call(1, "explode", x=1))
    done = bash(
        f'"$PY" -m mcp_adapters run {SLOW_SERVER} --log-level warning > out.jsonl '
        f"<<'EOF'\n{requests}EOF\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "serving" not in done.stderr
    assert "ERROR mcp_adapters.server: Error executing tool explode" in done.stderr


def test_log_level_info_says_it_serves_on_stdio(tmp_path: Path) -> None:
    done = bash(f'"$PY" -m mcp_adapters run {SLOW_SERVER} < /dev/null', tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["INFO mcp_adapters.asyncio: serving Slow on stdio"]
    assert done.stdout == ""


def test_log_level_debug_is_accepted_in_any_case(tmp_path: Path) -> None:
    done = bash(f'"$PY" -m mcp_adapters run {SLOW_SERVER} --log-level DEBUG < /dev/null', tmp_path)
    assert done.returncode == 0, done.stderr
    assert "serving Slow on stdio" in done.stderr


def test_an_unknown_log_level_is_refused(tmp_path: Path) -> None:
    done = bash(f'"$PY" -m mcp_adapters run {SLOW_SERVER} --log-level loud < /dev/null', tmp_path)
    assert done.returncode == 2
    assert "invalid choice: 'loud'" in done.stderr


LIFESPAN_SERVER = SERVERS / "lifespan_server.py"


@pytest.mark.parametrize(
    "command",
    [
        f'"$PY" -m mcp_adapters run {LIFESPAN_SERVER}',
        f'"$PY" -m mcp_adapters run {LIFESPAN_SERVER} --backend trio',
        f'"$PY" {LIFESPAN_SERVER}',  # anyio.run(mcp.run_stdio_async)
    ],
)
def test_stdio_serving_runs_the_lifespan_around_the_requests(command: str, tmp_path: Path) -> None:
    requests = jsonl(INITIALIZE, INITIALIZED, call(1, "greet"))
    done = bash(f"LIFESPAN_LOG=events.txt {command} > out.jsonl <<'EOF'\n{requests}EOF\n", tmp_path)
    assert done.returncode == 0, done.stderr
    found = answers((tmp_path / "out.jsonl").read_text())
    assert found["init"]["result"]["serverInfo"]["name"] == "mcp-server"
    assert found[1]["result"]["content"][0]["text"] == "hello from mcp-server"
    assert (tmp_path / "events.txt").read_text() == "up\ndown\n"


def test_http_serving_leaves_the_lifespan_on_ctrl_c(serve: Any, tmp_path: Path) -> None:
    served = serve(
        str(LIFESPAN_SERVER),
        "-t",
        "http",
        "--port",
        "0",
        cwd=tmp_path,
        env_extra={"LIFESPAN_LOG": "events.txt"},
    )
    url = served.wait_for(r"serving mcp-server on (http://\S+)$").group(1)
    assert (tmp_path / "events.txt").read_text() == "up\n"
    assert anyio.run(first_tool, url) == "greet"
    status, stderr = served.interrupt()
    assert status == 0, stderr
    assert (tmp_path / "events.txt").read_text() == "up\ndown\n"
