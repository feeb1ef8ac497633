"""Interop with the official SDK (`mcp` 2.3.0) as the other peer, over real transports.

Servers run as real subprocesses: Streamable HTTP servers on free loopback
ports (started together, in parallel, once per module, and stopped and reaped
when the module ends); stdio servers are spawned by whichever client connects.

Nothing may be left running: every process started on behalf of these tests
carries `MCP_INTEROP_TAG=<this pytest's pid>-<lifetime>` in its environment
(whatever it starts inherits it). Lifetime `module`: the module's HTTP servers
and the stdio servers of clients shared by a module; `test`: everything else.
After each test no `test` process may be alive and no child of this process
may be left unreaped; after each module, no tagged process at all.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import IO, Any, TypeVar

import anyio
import pytest

from tests.timing import HANG, START

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "examples" / "seeds"
CONFORMANCE_SERVER = ROOT / "examples" / "conformance" / "server.py"
SDK_SEED_SERVER = Path(__file__).resolve().parent / "sdk_servers" / "seed_server.py"

TAG_NAME = "MCP_INTEROP_TAG"
TAG = str(os.getpid())  # values: f"{TAG}-module" and f"{TAG}-test"
SETTLE = HANG  # to wait for processes that end asynchronously (stops when they have)
START_TIMEOUT = START  # for servers to start listening or answer: the machine may be loaded


def tag(lifetime: str) -> dict[str, str]:
    assert lifetime in ("module", "test")
    return {TAG_NAME: f"{TAG}-{lifetime}"}


def tagged_env(lifetime: str) -> dict[str, str]:
    """This process's environment plus the tag (what every server we start gets)."""
    return {**os.environ, **tag(lifetime)}


# tryfirst: pytest-xdist reads the xdist_group marks in its own hook of this name
# (it appends the group to each node id); ours must have added them by then, and an
# initial conftest's hook would otherwise run after xdist's (the groups were ignored).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Under pytest-xdist (`make unit`: -n 2 --dist loadgroup) keep each module on one
    # worker, so its servers start once; the modules themselves may run in parallel.
    here = Path(__file__).parent
    for item in items:
        path = Path(str(item.fspath))
        if here in path.parents:
            item.add_marker(pytest.mark.xdist_group(f"interop-{path.stem}"))


# ------------------------------------------------------------ /proc helpers


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1])


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def tagged_processes(*lifetimes: str) -> set[int]:
    """Live (not zombie) processes anywhere that carry this session's tag."""
    needles = {f"{TAG_NAME}={TAG}-{lifetime}".encode() for lifetime in lifetimes}
    found = set()
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if needles.intersection(environ):
            stat = _stat(pid)
            if stat is not None and stat[0] != "Z":
                found.add(pid)
    return found


def unreaped_children() -> set[int]:
    """Children of this process that exited but were never waited for."""
    me = os.getpid()
    found = set()
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and stat[1] == me and stat[0] == "Z":
            found.add(pid)
    return found


def _settled(check: Any) -> Any:
    deadline = time.monotonic() + SETTLE
    while True:
        found = check()
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.fixture(autouse=True, scope="module")
def nothing_left_running() -> Iterator[None]:
    """After the module (its HTTP servers stopped): no tagged process, no zombie child."""
    yield
    left = _settled(lambda: tagged_processes("module", "test"))
    assert not left, f"interop server processes left running: {left}"
    assert not _settled(unreaped_children), "child processes left unreaped"


@pytest.fixture(autouse=True)
def no_new_processes_left() -> Iterator[None]:
    """After each test: the stdio servers it spawned have exited and were reaped."""
    yield
    left = _settled(lambda: tagged_processes("test"))
    assert not left, f"processes started by this test left running: {left}"
    assert not _settled(unreaped_children), "child processes left unreaped"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    # Module scope so module-scoped async fixtures (shared stdio clients) can use it.
    return "asyncio"


# --------------------------------------------------------- server processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """A Streamable HTTP server subprocess on a free loopback port.

    `argv` is the command with `{port}` where the port goes. Output goes to a
    log file, shown when the server fails to start.
    """

    def __init__(self, name: str, argv: Sequence[str], log_dir: Path) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log_path = log_dir / f"{name}.log"
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [arg.format(port=self.port) for arg in argv],
            cwd=ROOT,
            env=tagged_env("module"),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_listening(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}"
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start listening:\n{self.log_tail()}")

    def log_tail(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-3000:]

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()

    def reap(self) -> None:
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


@contextlib.contextmanager
def http_servers(
    specs: dict[str, Sequence[str]], log_dir: Path
) -> Iterator[dict[str, ServerProcess]]:
    """Start every server at once, wait until all listen; stop and reap all at the end."""
    started: dict[str, ServerProcess] = {}
    try:
        for name, argv in specs.items():
            started[name] = ServerProcess(name, argv, log_dir)
        deadline = time.monotonic() + START_TIMEOUT
        for server in started.values():
            server.wait_listening(deadline)
        yield started
    finally:
        for server in started.values():
            server.terminate()
        for server in started.values():
            server.reap()


def our_http(script: Path) -> list[str]:
    """Our CLI serving `script` on Streamable HTTP."""
    return [
        sys.executable,
        "-m",
        "mcp_adapters",
        "run",
        str(script),
        "--transport",
        "http",
        "--port",
        "{port}",
    ]


def sdk_http(script: Path) -> list[str]:
    """An SDK server file run with the SDK's own `mcp.run("streamable-http", port=...)`."""
    return [sys.executable, str(script), "--transport", "streamable-http", "--port", "{port}"]


# ------------------------------------------------------------ stdio targets

K = TypeVar("K")
V = TypeVar("V")


@contextlib.asynccontextmanager
async def held_open(
    managers: Mapping[K, AbstractAsyncContextManager[V]],
) -> AsyncIterator[dict[K, V]]:
    """Enter every context manager at once, each in its own task; exit them all at the end.

    Used for the module-shared stdio clients: their server processes start (and
    stop) concurrently instead of one after the other. Each client is entered
    and exited by the same task, and used by the tests in between.
    """
    entered: dict[K, V] = {}
    all_entered = anyio.Event()
    done = anyio.Event()

    async def hold(key: K, manager: AbstractAsyncContextManager[V]) -> None:
        async with manager as value:
            entered[key] = value
            if len(entered) == len(managers):
                all_entered.set()
            await done.wait()

    async with anyio.create_task_group() as group:
        for key, manager in managers.items():
            group.start_soon(hold, key, manager)
        try:
            with anyio.fail_after(START_TIMEOUT):
                await all_entered.wait()
            yield entered
        finally:
            done.set()


def our_server_argv(script: Path) -> list[str]:
    """Our CLI serving `script` on stdio."""
    return [sys.executable, "-m", "mcp_adapters", "run", str(script)]


def sdk_server_argv(script: Path) -> list[str]:
    """An SDK server file run with the SDK's own `mcp.run()` (stdio)."""
    return [sys.executable, str(script)]


def sdk_stdio(argv: Sequence[str], lifetime: str = "test") -> Any:
    """Parameters for the SDK's stdio transport (`mcp.StdioServerParameters`)."""
    from mcp import StdioServerParameters

    # The SDK merges `env` over its own minimal default environment.
    return StdioServerParameters(
        command=argv[0], args=list(argv[1:]), env=tag(lifetime), cwd=str(ROOT)
    )


def our_stdio(argv: Sequence[str], lifetime: str = "test", **options: Any) -> Any:
    """Parameters for our stdio transport (`mcp_adapters.StdioServerParameters`)."""
    from mcp_adapters import StdioServerParameters

    env = tagged_env(lifetime)
    return StdioServerParameters(argv[0], list(argv[1:]), env=env, cwd=str(ROOT), **options)
