"""Replicas of a server behind a real nginx doing plain round robin, on loopback.

What an operator runs in front of several server processes, started for real:
each replica is `python -m mcp_adapters run APP --transport http` (the command
docs/deploy.md gives), configured only through the environment (the shared
`requestState` key ring and server identity, the store), and nginx proxies to
them with its default balancing, round robin: no hash on the session id, no
cookies. One worker process, so consecutive requests take consecutive replicas.

The access log names the replica (`$upstream_addr`) that served each request,
with its `Mcp-Method` and `Mcp-Session-Id` headers, so a test can show that a
flow really crossed replicas rather than assume it.

Used by tests/cluster and by tests/seeds (the seed flows through the balancer).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_adapters.request_state_keys import new_request_state_key
from tests.store.redis_server import RedisServer
from tests.timing import HANG, START

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def nginx_binary() -> str:
    """nginx on PATH or in /usr/sbin (Debian installs it there, off a user's PATH)."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise RuntimeError(
            "nginx is not installed: `make servers` installs it with apt-get on a "
            "Debian-family machine; elsewhere install nginx (dnf install nginx, brew install nginx)"
        )
    return found


def _wait_listening(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not start listening on {port}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=HANG)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Replica:
    """One server process on its own loopback port."""

    def __init__(
        self, app: str | Path, env: Mapping[str, str], log: Path, options: Sequence[str] = ()
    ) -> None:
        self.app = str(app)
        self.options = list(options)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self._env = {**os.environ, **env}
        self._log = log
        self.process = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "mcp_adapters", "run", self.app]
        command += ["--transport", "http", "--port", str(self.port), *self.options]
        with self._log.open("ab") as log:
            return subprocess.Popen(command, cwd=ROOT, env=self._env, stdout=log, stderr=log)

    def wait_listening(self) -> None:
        _wait_listening(self.port, self.process, f"replica {self.address} ({self.app})")

    def kill(self) -> None:
        """`kill -9`: no shutdown, no goodbye; what it held in memory is gone."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        _stop(self.process)


@dataclass(frozen=True)
class Hit:
    """One line of the balancer's access log."""

    replica: str
    method: str  # the HTTP method
    mcp_method: str  # the Mcp-Method header ("-" when absent)
    session: str  # the Mcp-Session-Id header ("-" when absent)
    status: int


class Balancer:
    """nginx in front of `replicas`, round robin, on a free loopback port."""

    def __init__(self, replicas: Sequence[Replica], workdir: Path, port: int) -> None:
        self.replicas = list(replicas)
        self.port = port
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._dir = workdir
        self.access_log = workdir / "access.log"
        (workdir / "temp").mkdir(parents=True, exist_ok=True)
        config = workdir / "nginx.conf"
        config.write_text(self._config(), encoding="utf-8")
        self.process = subprocess.Popen(
            [
                nginx_binary(),
                "-p",
                str(workdir),
                "-c",
                str(config),
                "-e",
                str(workdir / "error.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=(workdir / "nginx.out").open("ab"),
        )
        _wait_listening(self.port, self.process, "nginx")

    def _config(self) -> str:
        upstreams = "\n".join(
            # max_fails=0: a dead replica is tried (and skipped) on every pass, so
            # the rotation stays predictable in the tests that kill one.
            f"        server {r.address} max_fails=0;"
            for r in self.replicas
        )
        temp = self._dir / "temp"
        return f"""
daemon off;
worker_processes 1;
pid {self._dir / "nginx.pid"};
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    log_format replicas '$upstream_addr $request_method $http_mcp_method '
                        '$http_mcp_session_id $status';
    # Tool results may carry images and files: nothing here should refuse them.
    client_max_body_size 0;
    upstream replicas {{
{upstreams}
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{self.port};
        access_log {self.access_log} replicas;
        location / {{
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # What the client asked for, for the replicas' Host check: they
            # believe these headers from this proxy only (--trusted-proxy).
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Host $http_host;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            # Server-sent events go out as they are written, and a GET stream
            # may stay open for as long as the session.
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 1h;
            proxy_next_upstream error timeout;
        }}
    }}
}}
"""

    def hits(self) -> list[Hit]:
        """The access log so far (nginx writes a line as each request ends)."""
        if not self.access_log.exists():
            return []
        hits = []
        for line in self.access_log.read_text(encoding="utf-8").splitlines():
            # `$upstream_addr` is "a, b" after a failed try: split from the right.
            replica, method, mcp_method, session, status = line.rsplit(" ", 4)
            # After a failed try nginx lists every replica it tried: the last served.
            hits.append(
                Hit(replica.split(",")[-1].strip(), method, mcp_method, session, int(status))
            )
        return hits

    def stop(self) -> None:
        _stop(self.process)


def start_redis(directory: Path) -> RedisServer:
    """A real redis-server on a free loopback port (a few tries: a free port can
    be taken before redis binds it)."""
    directory.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):
        server = RedisServer(directory)
        try:
            server.start()
            return server
        except RuntimeError:
            server.stop()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


class Cluster:
    """`size` replicas of `app` sharing one key ring and identity, behind a balancer.

    With `store` (the default) they also share a real redis-server started for
    the cluster (`MCP_STORE_URL`), so legacy sessions work across them.
    """

    def __init__(
        self,
        app: str | Path,
        workdir: Path,
        size: int = 3,
        env: Mapping[str, str] | None = None,
        *,
        store: bool = True,
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.replicas: list[Replica] = []
        self.balancer: Balancer | None = None
        self.redis = start_redis(workdir / "redis") if store else None
        shared = {
            "MCP_REQUEST_STATE_KEYS": new_request_state_key(),
            "MCP_SERVER_IDENTITY": "https://mcp.example.test/mcp",
            **({"MCP_STORE_URL": self.redis.url} if self.redis is not None else {}),
            **(env or {}),
        }
        port = free_port()
        # How an operator runs a replica behind a proxy: it answers to the name
        # clients use (the balancer's), and believes forwarded headers from the
        # balancer alone.
        options = ["--allowed-host", f"127.0.0.1:{port}", "--trusted-proxy", "127.0.0.1"]
        try:
            self.replicas = [
                Replica(app, shared, workdir / f"replica-{i}.log", options) for i in range(size)
            ]
            for replica in self.replicas:
                replica.wait_listening()
            self.balancer = Balancer(self.replicas, workdir / "nginx", port)
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        assert self.balancer is not None
        return self.balancer.url

    def hits(self) -> list[Hit]:
        assert self.balancer is not None
        return self.balancer.hits()

    def stop(self) -> None:
        if self.balancer is not None:
            self.balancer.stop()
        for replica in self.replicas:
            replica.stop()
        if self.redis is not None:
            self.redis.stop()
