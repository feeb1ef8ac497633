"""Taking over this process's stdin and stdout for the protocol (the server side of stdio).

Only MCP messages may appear on stdout, but user code prints, C extensions
write to fd 1 and child processes inherit it. So while serving, the protocol
gets private duplicates of fds 0 and 1, fd 1 itself (and `sys.stdout`) point at
stderr, and fd 0 reads /dev/null so a child cannot steal protocol input.
Everything is put back afterwards, including the descriptors' blocking mode,
which event loops change and would otherwise leak into a shared terminal.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator

from mcp_adapters._errors import TransportError


def _flush_python_stdout() -> None:
    for stream in (sys.stdout, sys.__stdout__):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.flush()


def _check_streamable(fd: int, name: str) -> None:
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        raise TransportError(f"{name} is not open: {exc}") from exc
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
        # Files and /dev/null cannot be polled, and their input ends at once anyway
        # (end of input ends an MCP session).
        raise TransportError(f"{name} must be a pipe, a socket or a terminal")


@contextlib.contextmanager
def claim_stdio() -> Iterator[tuple[int, int]]:
    """Yield (protocol input fd, protocol output fd); the caller must close both.

    While inside, writes to fd 1 and `sys.stdout` land on stderr.
    """
    _check_streamable(0, "stdin")
    _check_streamable(1, "stdout")
    _flush_python_stdout()
    saved_in, saved_out = os.dup(0), os.dup(1)
    blocking = (os.get_blocking(saved_in), os.get_blocking(saved_out))
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    old_stdout = sys.stdout
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    sys.stdout = sys.stderr
    try:
        yield protocol_in, protocol_out
    finally:
        _flush_python_stdout()
        sys.stdout = old_stdout
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd, was_blocking in zip((saved_in, saved_out), blocking, strict=True):
            with contextlib.suppress(OSError):
                os.set_blocking(fd, was_blocking)
            os.close(fd)


__all__ = ["claim_stdio"]
