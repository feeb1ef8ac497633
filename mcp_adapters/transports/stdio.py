"""Taking over this process's stdin and stdout for the protocol (the server side of stdio).

Only MCP messages may appear on stdout, but user code prints, C extensions
write to fd 1 and child processes inherit it. So while serving, the protocol
gets private duplicates of fds 0 and 1, fd 1 itself (and `sys.stdout`) point at
stderr, and fd 0 reads /dev/null so a child cannot steal protocol input.
Everything is put back afterwards, including the descriptors' blocking mode,
which event loops change and would otherwise leak into a shared terminal.

What stdin and stdout may be, and what each means:

- a pipe, a socket or a terminal: used as is, the loop waits on it;
- a regular file or a device (`< requests.jsonl`, `> answers.jsonl`,
  `/dev/null`): epoll and the event loops refuse these (a file is always
  "ready"), so a thread copies between it and a pipe the loop can wait on. All
  three backends then see a pipe. The output thread is joined before the
  protocol lets go, so every answer is in the file when serving returns;
- closed (`<&-`, `>&-`): a closed stdin is an input that has ended; a closed
  stdout drops the answers, said once in the log. Python leaves such a
  descriptor closed (and `sys.__stdin__` / `sys.__stdout__` None), so the next
  descriptor opened takes its number: the event loop's epoll, a socket. That one
  is not ours to take over; `claim_stdio` leaves it alone. The command line
  reopens closed standard descriptors on /dev/null before anything else
  (`reserve_standard_fds`), so there nothing can land on them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
import threading
from collections.abc import Iterator

logger = logging.getLogger(__name__)

#: How long the end of serving waits for the copy of the answers into a file.
FLUSH_TIMEOUT = 30.0
_CHUNK = 64 * 1024


def _is_open(fd: int) -> bool:
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
    closed = tuple(not _is_open(fd) for fd in (0, 1, 2))
    for fd, was_closed in enumerate(closed):
        if was_closed:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            os.set_inheritable(fd, True)
    return closed[0], closed[1], closed[2]


def _pollable(fd: int) -> bool:
    """Whether an event loop can wait on `fd` (epoll refuses files and most devices)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class _Copier:
    """Copies `source` to `target` on a thread until `source` ends; closes both.

    A failed write (a full disk, a reader gone) stops the writing, not the
    reading: the other side of the pipe must never block on a full buffer.
    """

    def __init__(self, source: int, target: int, name: str) -> None:
        self.source = source
        self.target = target
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        writing = True
        try:
            while True:
                try:
                    data = os.read(self.source, _CHUNK)
                except OSError as exc:
                    logger.warning("%s: reading failed: %s", self.thread.name, exc)
                    return
                if not data:
                    return
                view = memoryview(data)
                while writing and view:
                    try:
                        view = view[os.write(self.target, view) :]
                    except BrokenPipeError:
                        return  # the protocol stopped reading: nothing else wants this
                    except OSError as exc:
                        logger.error(
                            "%s: writing failed, dropping the rest: %s", self.thread.name, exc
                        )
                        writing = False
        finally:
            for fd in (self.source, self.target):
                with contextlib.suppress(OSError):
                    os.close(fd)


def _gone(fd: int, stream: object) -> bool:
    """Whether standard descriptor `fd` was closed when Python started (or is now)."""
    return stream is None or not _is_open(fd)


def _input_end(closed: bool) -> tuple[int, _Copier | None]:
    """The descriptor the protocol reads: stdin itself, or a pipe fed from it."""
    if closed:
        read_end, write_end = os.pipe()
        os.close(write_end)  # an input that has already ended
        return read_end, None
    if _pollable(0):
        return os.dup(0), None
    read_end, write_end = os.pipe()
    return read_end, _Copier(os.dup(0), write_end, "mcp-stdin-copy")


def _output_end(closed: bool) -> tuple[int, _Copier | None]:
    """The descriptor the protocol writes: stdout itself, or a pipe drained into it."""
    if closed:
        logger.warning("stdout is closed: the answers are dropped")
        target = os.open(os.devnull, os.O_WRONLY)
    elif _pollable(1):
        return os.dup(1), None
    else:
        target = os.dup(1)
    read_end, write_end = os.pipe()
    return write_end, _Copier(read_end, target, "mcp-stdout-copy")


def _flush_python_stdout() -> None:
    for stream in (sys.stdout, sys.__stdout__):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.flush()


@contextlib.contextmanager
def claim_stdio() -> Iterator[tuple[int, int]]:
    """Yield (protocol input fd, protocol output fd); the caller must close both.

    Both are always a pipe, a socket or a terminal. While inside, writes to fd 1
    and `sys.stdout` land on stderr.
    """
    # Decided before anything is reopened: a descriptor that was closed at start
    # and is open now belongs to somebody else.
    stdin_gone = _gone(0, sys.__stdin__)
    stdout_gone = _gone(1, sys.__stdout__)
    reserve_standard_fds()
    _flush_python_stdout()
    protocol_in, _ = _input_end(stdin_gone)
    try:
        protocol_out, output_copier = _output_end(stdout_gone)
    except BaseException:
        os.close(protocol_in)
        raise
    # Only descriptors that are really stdin and stdout are redirected (and put back).
    taken = [fd for fd, gone in ((0, stdin_gone), (1, stdout_gone)) if not gone]
    saved = {fd: os.dup(fd) for fd in taken}
    blocking = {fd: os.get_blocking(copy) for fd, copy in saved.items()}
    old_stdout = sys.stdout
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        if 0 in saved:
            os.dup2(null, 0)
        if 1 in saved:
            os.dup2(2, 1)
    finally:
        os.close(null)
    if 1 in saved:
        sys.stdout = sys.stderr
    try:
        yield protocol_in, protocol_out
    finally:
        _flush_python_stdout()
        sys.stdout = old_stdout
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            with contextlib.suppress(OSError):
                os.set_blocking(copy, blocking[fd])
            os.close(copy)
        # The protocol has closed its ends, so the output copier meets the end of
        # its pipe right after the last answer. The input copier is not waited
        # for: it ends with its source, or on its first write into the closed pipe.
        if output_copier is not None:
            output_copier.thread.join(FLUSH_TIMEOUT)
            if output_copier.thread.is_alive():
                logger.error("stdout: answers still not written after %.0f s", FLUSH_TIMEOUT)


__all__ = ["claim_stdio", "reserve_standard_fds"]
