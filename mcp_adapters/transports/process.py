"""Starting a stdio server as a subprocess, and making sure it ends (POSIX).

Shared by every backend; only the waiting differs, so the shutdown policy is a
generator of steps (`WaitExit`, `Sleep`; `stop_steps` puts them as a sleep or a
wait for a readable descriptor) each backend runs in its own way.

How no process is left behind:

- the server starts in a new session, so it leads a process group holding its
  children too, and signals go to the whole group (`npx`/`uv run` wrappers,
  python-sdk PR #2773, typescript-sdk#2023);
- closing follows the spec: close stdin, wait, SIGTERM the group, wait, SIGKILL
  the group; then whatever is left of the group gets the same treatment, since
  a leader that exited on EOF can leave children behind;
- a watchdog process guards against the client itself dying (SIGKILL, OOM, a
  crash): it blocks on a pipe only the client holds, and if that pipe reaches
  end of file without the client's "done" byte, it ends the server's group.

Why a watchdog and not PR_SET_PDEATHSIG: the death signal fires when the
*thread* that forked the child exits (trio and thread pools fork from worker
threads), it reaches only the direct child and not the group, and it exists
only on Linux. The watchdog costs one small `python -I -S` process per server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from mcp_adapters._errors import TransportError


def is_open(fd: int) -> bool:
    """Whether `fd` is an open descriptor."""
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def reserve_standard_fds() -> tuple[bool, bool, bool]:
    """Reopen whichever of fds 0, 1, 2 is closed on /dev/null; which ones were closed.

    Python starts with a closed standard descriptor left closed, and the next
    `os.pipe()` or socket takes its number: a server's stdin pipe on fd 1 would
    receive every `print`. A stdio client calls this before it spawns a server,
    `claim_stdio` before it takes stdin and stdout.
    """
    closed = tuple(not is_open(fd) for fd in (0, 1, 2))
    for fd, was_closed in enumerate(closed):
        if was_closed:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            os.set_inheritable(fd, True)
    return closed[0], closed[1], closed[2]


#: How long to wait for a group to die after SIGKILL before giving up on it.
KILL_WAIT = 5.0


@dataclass(frozen=True, slots=True)
class StdioServerParameters:
    """How to start a stdio server and how patiently to stop it.

    `env=None` inherits this process's environment; a mapping replaces it.
    `stderr=None` lets the server write its logs to our stderr; pass
    `subprocess.DEVNULL` or an open file to send them elsewhere (never a pipe
    nobody reads: a full pipe blocks the server). After stdin is closed the
    server gets `close_timeout` seconds to exit, then SIGTERM and
    `terminate_timeout` seconds, then SIGKILL.
    """

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    stderr: int | IO[Any] | None = None
    close_timeout: float = 2.0
    terminate_timeout: float = 2.0
    watchdog: bool = True


@dataclass(frozen=True, slots=True)
class WaitExit:
    """Wait until `process` exits or `timeout` seconds pass (`pidfd` helps, when set)."""

    process: subprocess.Popen[bytes]
    pidfd: int | None
    timeout: float


@dataclass(frozen=True, slots=True)
class Sleep:
    seconds: float


Step = WaitExit | Sleep


@dataclass(frozen=True, slots=True)
class WaitReadable:
    """Wait until `fd` is readable or `timeout` seconds pass."""

    fd: int
    timeout: float


#: The two waits every backend has: what `ServerProcess.stop_steps` asks for.
Wait = Sleep | WaitReadable

_WATCHDOG = """\
import os, signal, sys, time
fd, pgid, grace = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
try:
    done = os.read(fd, 1)
except OSError:
    done = b""
if done:
    sys.exit(0)
def alive():
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True
for sig in (signal.SIGTERM, signal.SIGKILL):
    if not alive():
        break
    try:
        os.killpg(pgid, sig)
    except OSError:
        break
    end = time.monotonic() + grace
    while alive() and time.monotonic() < end:
        time.sleep(0.05)
"""


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux >= 5.3), else None."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        fd: int = pidfd_open(pid)
    except OSError:
        return None
    return fd


def live_group_members(pgid: int) -> list[int]:
    """Pids of the group's members that are not zombies (best effort off Linux)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        pass
    if not sys.platform.startswith("linux"):
        return [pgid]
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


class ServerProcess:
    """A running stdio server: its pipes, its process group and its watchdog.

    The backend takes the two pipe ends (`take_pipes`) and wraps them in its own
    stream; when the session is over it runs the steps of `shutdown()`, which
    end with `release()`; a caller that cannot wait (it was cancelled) calls
    `release()` directly, which kills what is left at once.
    """

    def __init__(self, params: StdioServerParameters) -> None:
        self.params = params
        # With our own fd 0, 1 or 2 closed, a pipe end would take its number: our
        # `print()` would then write into the server's stdin, and the server
        # would inherit no stderr.
        reserve_standard_fds()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        try:
            self.popen: subprocess.Popen[bytes] = subprocess.Popen(
                [params.command, *params.args],
                stdin=stdin_r,
                stdout=stdout_w,
                stderr=params.stderr,
                env=None if params.env is None else dict(params.env),
                cwd=params.cwd,
                start_new_session=True,
                close_fds=True,
            )
        except (OSError, ValueError) as exc:
            for fd in (stdin_w, stdout_r):
                os.close(fd)
            raise TransportError(f"cannot start server {params.command!r}: {exc}") from exc
        finally:
            os.close(stdin_r)
            os.close(stdout_w)
        self.pid = self.popen.pid
        self.pgid = self.pid  # start_new_session: the server leads its own group
        self.pidfd = _pidfd(self.pid)
        self._stdin: int | None = stdin_w
        self._stdout: int | None = stdout_r
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._watchdog_pidfd: int | None = None
        self._lifeline: int | None = None
        self._released = False
        self._group_gone = False
        if params.watchdog:
            self._start_watchdog()

    def _start_watchdog(self) -> None:
        if not sys.executable:
            return
        life_r, life_w = os.pipe()
        try:
            self._watchdog = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    _WATCHDOG,
                    str(life_r),
                    str(self.pgid),
                    str(self.params.terminate_timeout),
                ],
                pass_fds=(life_r,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            os.close(life_w)
            self._watchdog = None
            return
        finally:
            os.close(life_r)
        self._lifeline = life_w
        self._watchdog_pidfd = _pidfd(self._watchdog.pid)

    # ------------------------------------------------------------ inspection

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    @property
    def watchdog_pid(self) -> int | None:
        return None if self._watchdog is None else self._watchdog.pid

    def take_pipes(self) -> tuple[int, int]:
        """(read end of the server's stdout, write end of its stdin); the caller owns them."""
        if self._stdin is None or self._stdout is None:
            raise RuntimeError("the pipes were already taken")
        pipes = (self._stdout, self._stdin)
        self._stdin = self._stdout = None
        return pipes

    # -------------------------------------------------------------- stopping

    def signal_group(self, sig: int) -> None:
        """Signal the server's whole group; a group that is already gone is fine."""
        if self._group_gone:
            return  # its number may belong to somebody else's group by now
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)

    def group_alive(self) -> bool:
        """Whether a member of the group still runs (a group, once empty, stays gone)."""
        if not self._group_gone and self.popen.poll() is not None:
            self._group_gone = not live_group_members(self.pgid)
        return not self._group_gone

    def shutdown(self) -> Iterator[Step]:
        """The escalation, as steps to wait through. The server's stdin must be closed first."""
        params = self.params
        try:
            if self.popen.poll() is None:
                yield WaitExit(self.popen, self.pidfd, params.close_timeout)
            if self.popen.poll() is None:
                self.signal_group(signal.SIGTERM)
                yield WaitExit(self.popen, self.pidfd, params.terminate_timeout)
            if self.popen.poll() is None:
                self.signal_group(signal.SIGKILL)
                yield WaitExit(self.popen, self.pidfd, KILL_WAIT)
            # The leader is gone (and reaped); its group may live on without it.
            if self.group_alive():
                self.signal_group(signal.SIGTERM)
                end = time.monotonic() + params.terminate_timeout
                while self.group_alive() and time.monotonic() < end:
                    yield Sleep(0.02)
                if self.group_alive():
                    self.signal_group(signal.SIGKILL)
            yield from self._dismiss_watchdog()
        finally:
            self.release()

    def stop_steps(self) -> Iterator[Wait]:
        """`shutdown()` as sleeps and descriptor waits, for a backend to carry out.

        Waiting for an exit is waiting for the process's pidfd to be readable;
        where there is no pidfd (before Linux 5.3, off Linux) it is polled every
        10 ms until it exits or the step's time is up.
        """
        for step in self.shutdown():
            if isinstance(step, Sleep):
                yield step
                continue
            if step.process.poll() is not None:
                continue
            if step.pidfd is not None:
                yield WaitReadable(step.pidfd, step.timeout)
            else:
                end = time.monotonic() + step.timeout
                while step.process.poll() is None and time.monotonic() < end:
                    yield Sleep(0.01)
            step.process.poll()

    def _dismiss_watchdog(self) -> Iterator[Step]:
        if self._lifeline is not None:
            with contextlib.suppress(OSError):
                os.write(self._lifeline, b"x")
            os.close(self._lifeline)
            self._lifeline = None
        if self._watchdog is not None and self._watchdog.poll() is None:
            yield WaitExit(self._watchdog, self._watchdog_pidfd, 1.0)

    def release(self) -> None:
        """Make sure the group is dead, reap the watchdog, close our ends; safe to call twice.

        Blocks only for the kernel to deliver SIGKILL when something still runs;
        after a completed `shutdown()` there is nothing left to wait for.
        """
        if self._released:
            return
        self._released = True
        for fd in (self._stdin, self._stdout):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._stdin = self._stdout = None
        if self.popen.poll() is None:
            self.signal_group(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(KILL_WAIT)
        if self.group_alive():
            self.signal_group(signal.SIGKILL)
        for step in self._dismiss_watchdog():
            if isinstance(step, WaitExit):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    step.process.wait(step.timeout)
        watchdog = self._watchdog
        if watchdog is not None and watchdog.poll() is None:
            watchdog.kill()
            watchdog.wait()
        for fd in (self.pidfd, self._watchdog_pidfd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.pidfd = self._watchdog_pidfd = None


__all__ = [
    "KILL_WAIT",
    "ServerProcess",
    "Sleep",
    "StdioServerParameters",
    "Step",
    "Wait",
    "WaitExit",
    "WaitReadable",
    "is_open",
    "live_group_members",
    "reserve_standard_fds",
]
