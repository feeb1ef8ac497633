"""Helpers for the command-line tests: real `python -m mcp_adapters` processes.

Shell redirections (`<<EOF`, `< file`, `<&-`, `>&-`) are given to bash as a
user would type them, so what is tested is what a user runs.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).parent / "servers"
SLOW_SERVER = SERVERS / "slow_server.py"
#: A hang guard, not a measurement: every command here ends in well under a second.
TIMEOUT = 60.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "sh", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(rid: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def jsonl(*messages: dict[str, Any]) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


def answers(text: str) -> dict[Any, dict[str, Any]]:
    """The messages of an output, by id (every line must be one JSON message)."""
    messages = [json.loads(line) for line in text.splitlines()]
    return {m.get("id"): m for m in messages}


def env() -> dict[str, str]:
    """This interpreter's environment, with the repository importable."""
    variables = dict(os.environ)
    variables["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [variables.get("PYTHONPATH")])]
    )
    return variables


def bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a bash script with `$PY` set to this interpreter."""
    return subprocess.run(
        ["bash", "-c", f"PY={shlex.quote(sys.executable)}\n{script}"],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


class Served:
    """`python -m mcp_adapters run ...` serving on a network transport."""

    def __init__(
        self, *args: str, cwd: Path = ROOT, env_extra: dict[str, str] | None = None
    ) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_adapters", "run", *args],
            cwd=cwd,
            env={**env(), **(env_extra or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr_lines: list[str] = []

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first stderr line matching `pattern` (read as it is written)."""
        assert self.process.stderr is not None
        deadline = time.monotonic() + TIMEOUT
        compiled = re.compile(pattern)
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stderr], [], [], 0.5)
            if not ready:
                if self.process.poll() is not None:
                    break
                continue
            line = self.process.stderr.readline()
            if not line:
                break
            self.stderr_lines.append(line)
            found = compiled.search(line)
            if found:
                return found
        raise AssertionError(f"no stderr line matched {pattern!r}: {self.stderr_lines}")

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C, as a user stops it; (exit status, the rest of stderr)."""
        self.process.send_signal(signal.SIGINT)
        _, rest = self.process.communicate(timeout=TIMEOUT)
        return self.process.returncode, "".join(self.stderr_lines) + rest

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=TIMEOUT)


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Served] = []

    def start(*args: str, cwd: Path = ROOT, env_extra: dict[str, str] | None = None) -> Served:
        served = Served(*args, cwd=cwd, env_extra=env_extra)
        started.append(served)
        return served

    yield start
    for served in started:
        served.kill()
