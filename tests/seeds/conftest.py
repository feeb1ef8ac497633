"""Seed servers as real processes: stdio (spawned per client) and Streamable HTTP.

Each HTTP server runs once per test module on a free loopback port and is
stopped (and reaped) when the module ends.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_adapters import StdioServerParameters, current_backend
from tests.cluster.harness import Cluster, GunicornCluster, Hit
from tests.timing import START

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "examples" / "seeds"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class HTTPServer:
    def __init__(self, script: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcp_adapters",
                "run",
                str(SEEDS / script),
                "--transport",
                "http",
                "--port",
                str(self.port),
            ],
            cwd=ROOT,
        )
        deadline = time.monotonic() + START
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{script} exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{script} did not start listening")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class SeedOverStdio:
    """A seed server spawned per client, through the `Client(transport_object)` hook so
    the handshake may take as long as the server takes to start on a loaded machine
    (the Client's own bound is the library default, 30 s)."""

    def __init__(self, script: str) -> None:
        self.params = StdioServerParameters(
            sys.executable, ["-m", "mcp_adapters", "run", str(SEEDS / script)], cwd=str(ROOT)
        )

    def connect(self, config: Any, **options: Any) -> Any:
        return current_backend().connect_stdio(
            self.params, config, connect_timeout=START, **options
        )


def stdio(script: str) -> SeedOverStdio:
    return SeedOverStdio(script)


# Where tests/cluster/gunicorn_app.py mounts each seed (delete_folder: per mode).
GUNICORN_MOUNTS = {
    "bistro_form_server.py": "/form",
    "bistro_url_server.py": "/url",
    "library_server.py": "/library",
}


class HTTPServers(dict[str, HTTPServer]):
    """The module's seed servers over HTTP, by script: one process each, and on first
    use (`balanced`) two replicas of it behind nginx doing plain round robin, or
    (`gunicorn`) gunicorn's four uvicorn workers serving them all as ASGI apps."""

    def __init__(self, workdir: Path) -> None:
        super().__init__()
        self._workdir = workdir
        self._clusters: dict[str, Cluster] = {}
        self._gunicorn: GunicornCluster | None = None

    def gunicorn(self, script: str, mode: str = "") -> str:
        """The URL of `script` under the module's gunicorn (started on first use);
        delete_folder_server.py has a copy per `mode`."""
        if self._gunicorn is None:
            self._gunicorn = GunicornCluster(
                "tests.cluster.gunicorn_app:seeds()", self._workdir / "gunicorn"
            )
        mount = (
            f"/delete/{mode}" if script == "delete_folder_server.py" else GUNICORN_MOUNTS[script]
        )
        return self._gunicorn.url(f"{mount}/mcp")

    def gunicorn_hits(self) -> list[Hit]:
        """The access log of the module's gunicorn's balancer so far."""
        assert self._gunicorn is not None
        return self._gunicorn.hits()

    def balanced(self, script: str, name: str = "") -> Cluster:
        """The module's cluster of `script` (`name` makes another, fresh one)."""
        key = f"{script}{name}"
        cluster = self._clusters.get(key)
        if cluster is None:
            cluster = Cluster(SEEDS / script, self._workdir / key, size=2)
            self._clusters[key] = cluster
        return cluster

    def stop(self) -> None:
        for server in self.values():
            server.stop()
        for cluster in self._clusters.values():
            cluster.stop()
        if self._gunicorn is not None:
            self._gunicorn.stop()


@pytest.fixture(scope="module")
def http_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HTTPServers]:
    started = HTTPServers(tmp_path_factory.mktemp("balanced"))
    try:
        for script in ("bistro_form_server.py", "bistro_url_server.py", "library_server.py"):
            started[script] = HTTPServer(script)
        yield started
    finally:
        started.stop()
