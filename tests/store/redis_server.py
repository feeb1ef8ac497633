"""A real `redis-server` for the tests: loopback only, its own temporary dir, no persistence.

`RedisServer` starts one on a free port and can stop, restart (same port) and
freeze it, so the tests can take Redis away under a running store. Every
process it starts is stopped by `stop()`, which the fixtures call on every
exit path; the child also gets SIGKILL from the kernel if the test process
dies first (PR_SET_PDEATHSIG), so a crashed run leaves no server behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

INSTALL_HINT = (
    "redis-server is not installed, and the Redis store tests run against a real one. "
    "Install it: `apt-get install -y redis-server` on Debian/Ubuntu (`make test` does this "
    "for you when it can), `dnf install redis` on Fedora, `brew install redis` on macOS."
)
_PR_SET_PDEATHSIG = 1
_READY_TIMEOUT = 10.0


def redis_server_binary() -> str | None:
    return shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process (or none, between `stop()` and `start()`)."""

    def __init__(self, directory: Path) -> None:
        binary = redis_server_binary()
        if binary is None:
            raise RuntimeError(INSTALL_HINT)
        self.binary = binary
        self.directory = directory
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start (or restart, on the same port) and wait until it answers PING."""
        if self.process is not None:
            raise RuntimeError("already running")
        log = self.directory / "redis.log"
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--protected-mode",
                "yes",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
                "--logfile",
                str(log),
                "--daemonize",
                "no",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + _READY_TIMEOUT
        while not _answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise RuntimeError(f"redis-server did not start on port {self.port}:\n{text}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL) and reap it; a no-op when not running."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGCONT)  # a frozen server cannot act on SIGTERM
            process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def freeze(self) -> None:
        """SIGSTOP: the port stays open but nothing answers (a hung server)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)
