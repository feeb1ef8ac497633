"""Replicas of a server behind a real nginx doing plain round robin, on loopback.

What an operator runs in front of several server processes, started for real:
each replica is `python -m mcp_adapters run APP --transport http` (the command
docs/deploy.md gives), configured only through the environment (the shared
`requestState` key ring and server identity, the store), and nginx proxies to
them with its default balancing, round robin: no hash on the session id, no
cookies. One worker process, so consecutive requests take consecutive replicas.

The access log names the replica (`$upstream_addr`) that served each request,
with its `Mcp-Method` and `Mcp-Session-Id` headers and the `X-Worker-Pid` the
response carried (tests/cluster/gunicorn_app.py sets it), so a test can show
that a flow really crossed replicas, or workers, rather than assume it.

`GunicornCluster` is the other shape of a deployment: one gunicorn with several
uvicorn workers (processes sharing one listening socket) serving the ASGI app,
on the same Redis, behind the same nginx.

Used by tests/cluster and by tests/seeds (the seed flows through the balancer).
"""

from __future__ import annotations

import os
import random
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


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (where port 0 and every outgoing
    connection's local port come from); 32768 where it cannot be read."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as ranges:
            return int(ranges.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A free loopback port for a process started later (a replica, nginx, Redis).

    Why not port 0: the process binds the port only after it started (nginx after
    every replica did), and a port from the ephemeral range may be taken meanwhile by
    any outgoing connection of the parallel test workers (one CI run lost 41959 so:
    nginx "bind() failed (98: Address already in use)"). Below that range only an
    explicit bind takes a port, so a free one found there stays free; where the range
    leaves no room below it, port 0 as before.
    """
    low = _ephemeral_low()
    if low > 10_000:
        for _ in range(50):
            port = random.randrange(10_000, low)
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        found: int = sock.getsockname()[1]
        return found


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
        """Wait until it listens. A port that was free when drawn can be taken by
        another test's process before the replica binds it (the draw and the bind
        are two steps, and other workers draw too): then it starts again on a newly
        drawn port, up to three times. Any other early exit fails with its log."""
        for _ in range(3):
            try:
                _wait_listening(self.port, self.process, f"replica {self.address} ({self.app})")
                return
            except RuntimeError as exc:
                log = self._log.read_text(errors="replace")[-2000:]
                if "in use" not in log.lower():
                    raise RuntimeError(f"{exc}; its log ends:\n{log}") from None
            self.port = free_port()
            self.address = f"127.0.0.1:{self.port}"
            self.process = self._spawn()
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
    worker: str  # the response's X-Worker-Pid header ("-" when absent)


class Balancer:
    """nginx in front of `replicas`, round robin, on a free loopback port.

    `keepalive=False` opens a new upstream connection per request: in front of
    one gunicorn that is what spreads requests over its workers (a kept-alive
    connection stays with the worker that accepted it).
    """

    def __init__(
        self,
        replicas: Sequence[Replica | Gunicorn],
        workdir: Path,
        port: int,
        *,
        keepalive: bool = True,
    ) -> None:
        self.replicas = list(replicas)
        self.port = port
        self._keepalive = keepalive
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
        keepalive = "keepalive 16;" if self._keepalive else ""
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
                        '$http_mcp_session_id $status $upstream_http_x_worker_pid';
    # Tool results may carry images and files: nothing here should refuse them.
    client_max_body_size 0;
    upstream replicas {{
{upstreams}
        {keepalive}
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
            replica, method, mcp_method, session, status, worker = line.rsplit(" ", 5)
            # After a failed try nginx lists every replica it tried: the last served.
            served_by = replica.split(",")[-1].strip()
            hits.append(Hit(served_by, method, mcp_method, session, int(status), worker))
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


class Gunicorn:
    """`gunicorn -w WORKERS -k uvicorn_worker.UvicornWorker TARGET` on a loopback port.

    uvicorn's own `uvicorn.workers.UvicornWorker` still imports in uvicorn 0.54
    but warns that it is deprecated (since 0.30) for the `uvicorn-worker`
    package, whose class is the same worker maintained apart: that one is used.
    """

    def __init__(
        self,
        target: str,
        env: Mapping[str, str],
        log: Path,
        workers: int = 4,
        extra: Sequence[str] = (),
    ) -> None:
        self.workers = workers
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self._log = log
        command = [sys.executable, "-m", "gunicorn", "--workers", str(workers)]
        command += ["--worker-class", "uvicorn_worker.UvicornWorker"]
        command += ["--bind", self.address, "--graceful-timeout", "5", *extra, target]
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=out
            )

    def wait_ready(self) -> None:
        """Until every worker has run the app's startup (gunicorn listens before any
        worker does, and a request before then would all go to the first one)."""
        _wait_listening(self.port, self.process, f"gunicorn {self.address}")
        deadline = time.monotonic() + START
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}")
            text = self._log.read_text(encoding="utf-8", errors="replace")
            if text.count("Application startup complete.") >= self.workers:
                return
            time.sleep(0.1)
        raise RuntimeError(f"gunicorn's {self.workers} workers did not all start")

    def stop(self) -> None:
        _stop(self.process)


class GunicornCluster:
    """A real redis-server, gunicorn serving `target` with `workers` uvicorn
    workers configured by the environment (store, key ring, identity), and nginx
    in front opening a connection per request."""

    def __init__(
        self, target: str, workdir: Path, workers: int = 4, extra: Sequence[str] = ()
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.gunicorn: Gunicorn | None = None
        self.balancer: Balancer | None = None
        self.redis = start_redis(workdir / "redis")
        env = {
            "MCP_REQUEST_STATE_KEYS": new_request_state_key(),
            "MCP_SERVER_IDENTITY": "https://mcp.example.test/mcp",
            "MCP_STORE_URL": self.redis.url,
        }
        try:
            self.gunicorn = Gunicorn(target, env, workdir / "gunicorn.log", workers, extra)
            self.gunicorn.wait_ready()
            self.balancer = Balancer(
                [self.gunicorn], workdir / "nginx", free_port(), keepalive=False
            )
        except BaseException:
            self.stop()
            raise

    def url(self, path: str = "/mcp") -> str:
        assert self.balancer is not None
        return f"http://127.0.0.1:{self.balancer.port}{path}"

    def hits(self) -> list[Hit]:
        assert self.balancer is not None
        return self.balancer.hits()

    def stop(self) -> None:
        if self.balancer is not None:
            self.balancer.stop()
        if self.gunicorn is not None:
            self.gunicorn.stop()
        self.redis.stop()
