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

Then the transport itself: `connect_stdio` (start a server, connect, stop it)
and `serve_stdio`, once for the async backends and once more, as
`*_blocking`, for `mcp_adapters.sockets`; both build their sessions with the
same helpers and stop the server with the same `ServerProcess.stop_steps`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mcp_adapters.backends import SessionBackend
from mcp_adapters.transports.process import (
    ServerProcess,
    Sleep,
    StdioServerParameters,
    is_open,
    reserve_standard_fds,
)
from mcp_core import ClientConfig, ClientConnection, ServerConfig, ServerConnection

if TYPE_CHECKING:
    from mcp_adapters._session_base import RequestHandler, Session
    from mcp_adapters.backends.blocking import BlockingBackend
    from mcp_adapters.sockets import RequestHandler as BlockingHandler
    from mcp_adapters.sockets import Session as BlockingSession

S = TypeVar("S", bound="Session")
B = TypeVar("B", bound="BlockingSession")

logger = logging.getLogger(__name__)

#: How long the end of serving waits for the copy of the answers into a file.
FLUSH_TIMEOUT = 30.0
_CHUNK = 64 * 1024


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
    return stream is None or not is_open(fd)


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


# =========================================================================== the transport


class _HasProcess(Protocol):
    process: ServerProcess | None


C = TypeVar("C", bound=_HasProcess)


def _client_session(
    session_type: Callable[..., C],
    stream: Any,
    process: ServerProcess,
    config: ClientConfig | None,
    options: dict[str, Any],
) -> C:
    """The client session over a started server's pipes (every backend's `connect_stdio`)."""
    session = session_type(ClientConnection(config or ClientConfig()), stream, **options)
    session.process = process
    return session


def _server_session(
    session_type: Callable[..., C],
    stream: Any,
    on_request: Any,
    config: ServerConfig,
    options: dict[str, Any],
) -> C:
    """The server session over the claimed stdio (every backend's `serve_stdio`): when
    stdin ends, the requests in flight are still answered unless told otherwise."""
    options = {"drain_on_eof": True, **options}
    return session_type(ServerConnection(config), stream, on_request=on_request, **options)


@contextlib.asynccontextmanager
async def connect_stdio(
    session_type: type[S],
    params: StdioServerParameters,
    config: ClientConfig | None = None,
    **session_options: Any,
) -> AsyncIterator[S]:
    """Start a stdio server, connect to it, and on exit stop it and its children.

    Written once for every async backend: `session_type` (`asyncio.Session`,
    `trio.Session`) names the backend, whose seam opens the pipes and waits.
    """
    backend = session_type.loop_backend()
    process = ServerProcess(params)
    try:
        stream = await backend.open_pipe_stream(*process.take_pipes())
        options = {"backend": backend, **session_options}
        session = _client_session(session_type, stream, process, config, options)
        async with session:
            yield session
    finally:
        await backend.shielded(lambda: stop_process(backend, process))


async def stop_process(backend: SessionBackend, process: ServerProcess) -> None:
    """Carry out the server process's shutdown steps on `backend`; kill it if interrupted."""
    try:
        for step in process.stop_steps():
            if isinstance(step, Sleep):
                await backend.sleep(step.seconds)
            else:
                await backend.wait_readable(step.fd, step.timeout)
    finally:
        process.release()  # kills at once if we were interrupted


async def serve_stdio(
    session_type: type[Session],
    on_request: RequestHandler | None,
    config: ServerConfig,
    *,
    log: logging.Logger = logger,
    **session_options: Any,
) -> None:
    """Serve one connection on this process's stdin/stdout until stdin ends (`log` says so).

    While serving, `print()` and anything else written to fd 1 goes to stderr.
    stdin and stdout may be pipes, sockets, terminals, files, devices or closed
    (see the module docstring). When stdin ends, the requests in flight are
    still answered (`drain_on_eof`), then serving returns.
    """
    backend = session_type.loop_backend()
    with claim_stdio() as (fd_in, fd_out):
        stream = await backend.open_pipe_stream(fd_in, fd_out)
        options = {"backend": backend, **session_options}
        session = _server_session(session_type, stream, on_request, config, options)
        log.info("serving %s on stdio", config.name)
        async with session:
            await session.wait_closed()


# =========================================================================== blocking
# The same transport for `mcp_adapters.sockets`: the steps above, on the calling thread.


@contextlib.contextmanager
def connect_stdio_blocking(
    session_type: type[B],
    params: StdioServerParameters,
    config: ClientConfig | None = None,
    **session_options: Any,
) -> Iterator[B]:
    """`connect_stdio` for a blocking session type (`mcp_adapters.sockets.Session`)."""
    backend = session_type.loop_backend()
    process = ServerProcess(params)
    try:
        stream = backend.open_pipe_stream(*process.take_pipes())
        session = _client_session(session_type, stream, process, config, session_options)
        with session:
            yield session
    finally:
        stop_process_blocking(backend, process)


def stop_process_blocking(backend: BlockingBackend, process: ServerProcess) -> None:
    """`stop_process` on this thread; kills the server at once if interrupted."""
    try:
        for step in process.stop_steps():
            if isinstance(step, Sleep):
                backend.sleep(step.seconds)
            else:
                backend.wait_readable(step.fd, step.timeout)
    finally:
        process.release()


def serve_stdio_blocking(
    session_type: type[BlockingSession],
    on_request: BlockingHandler | None,
    config: ServerConfig,
    *,
    log: logging.Logger = logger,
    **session_options: Any,
) -> None:
    """`serve_stdio` for a blocking session type, on this thread until stdin ends."""
    backend = session_type.loop_backend()
    with claim_stdio() as (fd_in, fd_out):
        stream = backend.open_pipe_stream(fd_in, fd_out)
        session = _server_session(session_type, stream, on_request, config, session_options)
        log.info("serving %s on stdio", config.name)
        with session:
            session.serve_forever()


__all__ = [
    "claim_stdio",
    "connect_stdio",
    "connect_stdio_blocking",
    "reserve_standard_fds",
    "serve_stdio",
    "serve_stdio_blocking",
    "stop_process",
    "stop_process_blocking",
]
