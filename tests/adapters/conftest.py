"""Shared fixtures for the adapter tests: a leak check around every test, and helpers.

The leak check compares, before and after each test: this process's open file
descriptors, its threads, its child processes (a zombie child counts: we must
reap what we start), and live processes started from the test servers anywhere
on the machine (an orphaned server or grandchild counts). It waits a little for
things that end asynchronously before failing.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_adapters import StdioServerParameters
from tests.timing import HANG

SERVERS = Path(__file__).parent / "servers"
ECHO_SERVER = SERVERS / "echo_server.py"
GRANDCHILD_MARKER = "mcp-adapters-test-grandchild"
#: How long the leak check waits for what ends asynchronously (it stops as soon as
#: nothing is left): a killed process may take a while to be reaped on a busy machine.
SETTLE = HANG


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1]), int(fields[2])


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def is_alive(pid: int) -> bool:
    """Running (a zombie is dead: nothing runs, only an exit status waits for its parent)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def _children() -> set[int]:
    me = os.getpid()
    found = set()
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and stat[1] == me:
            found.add(pid)
    return found


def _test_processes() -> set[int]:
    """Live processes running our test servers or their grandchildren, anywhere."""
    needles = (str(SERVERS).encode(), GRANDCHILD_MARKER.encode())
    found = set()
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if any(needle in cmdline for needle in needles) and is_alive(pid):
            found.add(pid)
    return found


def _fds() -> dict[int, str]:
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the descriptor listdir itself used
    return found


def _pooled(thread: threading.Thread) -> bool:
    """A worker of trio's thread cache (`trio.to_thread`, name resolution): trio
    keeps an idle one for 10 s by design, to serve the next call, and it ends on
    its own. Waiting it out cost every trio test that touched a thread 10 s."""
    return thread.name.startswith("Trio thread ")


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    fds_before = _fds()
    threads_before = set(threading.enumerate())
    children_before = _children()
    processes_before = _test_processes()
    yield
    deadline = time.monotonic() + SETTLE
    while True:
        fds = {fd: t for fd, t in _fds().items() if fds_before.get(fd) != t}
        threads = [t for t in threading.enumerate() if t not in threads_before and not _pooled(t)]
        children = _children() - children_before
        processes = _test_processes() - processes_before
        if not (fds or threads or children or processes) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not children, f"child processes left behind (unreaped or running): {children}"
    assert not processes, f"test server processes left running: {processes}"
    assert not threads, f"threads left running: {threads}"
    assert not fds, f"file descriptors left open: {fds}"


def echo_server(
    backend: str = "asyncio", *flags: str, stderr: int | None = None, **timeouts: float
) -> StdioServerParameters:
    """Parameters to start tests/adapters/servers/echo_server.py on a backend."""
    return StdioServerParameters(
        sys.executable,
        [str(ECHO_SERVER), "--backend", backend, *flags],
        stderr=stderr,
        **timeouts,  # type: ignore[arg-type]
    )


def wait_until_dead(pids: list[int], timeout: float) -> list[int]:
    """The pids still alive after up to `timeout` seconds."""
    end = time.monotonic() + timeout
    while True:
        alive = [pid for pid in pids if is_alive(pid)]
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.02)
