"""A driver over asyncio pipes is fed from the pipe transport's callback (`push_to`).

The stdio fast path: what a read pipe delivers goes to the connection in the
loop turn that read it, with no reader task in between. These tests run a real
`Driver` over real pipes and check what that must keep of the reader task's
behaviour: every byte in order (what arrived before the driver started first),
the end of input fed exactly once, and a held end of input (`hold_eof`) fed only
when the hold is released.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import anyio
import pytest

from mcp_adapters._driver import Driver
from mcp_adapters.backends import asyncio as asyncio_backend
from tests.timing import HANG

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Echo:
    """Answers every line it is fed with the same line; records what it saw."""

    def __init__(self, *, echo: bool = True) -> None:
        self.echo = echo  # False: only record
        self.fed: list[bytes] = []
        self.in_task: list[bool] = []  # whether each feed ran inside a task
        self.out = b""
        self._partial = b""

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]:
        self.fed.append(data)
        try:
            self.in_task.append(asyncio.current_task() is not None)
        except RuntimeError:  # not on asyncio (the trio test)
            self.in_task.append(False)
        if not self.echo:
            return []
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        self.out += b"".join(line + b"\n" for line in lines)
        return []

    def data_to_send(self) -> bytes:
        out, self.out = self.out, b""
        return out

    def next_deadline(self) -> float | None:
        return None

    def tick(self, now: float) -> list[Any]:
        return []


async def _read_until(fd: int, size: int) -> bytes:
    """Read `size` bytes from blocking pipe `fd` without blocking the loop."""
    got = b""
    loop = asyncio.get_running_loop()
    while len(got) < size:
        chunk = await loop.run_in_executor(None, os.read, fd, size - len(got))
        assert chunk, "the driver's output ended early"
        got += chunk
    return got


async def _driver_over_pipes(
    conn: _Echo, hold: list[bool] | None = None
) -> tuple[Driver, asyncio.Task[None], int, int]:
    """A running driver reading one pipe and writing another; (driver, task, in, out)."""
    request_r, request_w = os.pipe()
    answer_r, answer_w = os.pipe()
    os.write(request_w, b"early\n")  # before the stream exists: buffered, fed first
    stream = await asyncio_backend.open_pipe_stream(request_r, answer_w)
    driver = Driver(
        conn,
        stream,
        lambda events: None,
        backend=asyncio_backend.backend(),
        hold_eof=(lambda: hold[0]) if hold is not None else None,
    )
    task = asyncio.get_running_loop().create_task(driver.run())
    return driver, task, request_w, answer_r


async def test_every_byte_is_fed_in_order_from_the_transport_callback() -> None:
    conn = _Echo()
    driver, task, request_w, answer_r = await _driver_over_pipes(conn)
    try:
        for i in range(50):
            os.write(request_w, b"line %d\n" % i)
            expected = b"line %d\n" % i
            if i == 0:
                expected = b"early\n" + expected
            assert await asyncio.wait_for(_read_until(answer_r, len(expected)), HANG) == expected
        os.close(request_w)
        await asyncio.wait_for(task, HANG)
        assert b"".join(conn.fed) == b"early\n" + b"".join(b"line %d\n" % i for i in range(50))
        assert conn.fed[-1] == b"" and conn.fed.count(b"") == 1  # the end, exactly once
        # Everything after the first read came straight from the pipe's callback
        # (the first may have been buffered before the driver started, and fed by it).
        assert not any(conn.in_task[1:])
        assert driver.error is None
    finally:
        os.close(answer_r)


async def test_a_held_end_of_input_is_fed_once_the_hold_is_released() -> None:
    conn = _Echo()
    hold = [True]
    driver, task, request_w, answer_r = await _driver_over_pipes(conn, hold)
    try:
        assert await asyncio.wait_for(_read_until(answer_r, 6), HANG) == b"early\n"
        os.close(request_w)
        while not driver.core.eof_held:
            await asyncio.sleep(0.01)
        assert b"" not in conn.fed and not task.done()
        hold[0] = False
        driver.wake()  # what an answer going out does: the writer looks again
        await asyncio.wait_for(task, HANG)
        assert conn.fed.count(b"") == 1
    finally:
        os.close(answer_r)


async def test_while_pushing_the_transport_calls_the_sink_itself() -> None:
    """While a stream pushes, the protocol's `data_received` is the sink itself (no
    method of ours in between); stopping, or the end, gives the class's back, and
    what is read then is buffered for `read` again."""
    request_r, request_w = os.pipe()
    answer_r, answer_w = os.pipe()
    stream = await asyncio_backend.open_pipe_stream(request_r, answer_w)
    protocol = stream._reader  # (the test's own look inside)
    got: list[tuple[bytes, object]] = []

    def sink(data: bytes, exc: BaseException | None = None) -> None:
        got.append((data, exc))

    try:
        assert stream.push_to(sink)
        assert protocol.data_received is sink
        os.write(request_w, b"one\n")
        with anyio.fail_after(HANG):
            while not got:
                await asyncio.sleep(0.001)
        assert got == [(b"one\n", None)]
        stream.stop_push()
        assert protocol.data_received == protocol.__class__.data_received.__get__(protocol)
        protocol.pull()
        os.write(request_w, b"two\n")
        assert await asyncio.wait_for(stream.receive_some(100), HANG) == b"two\n"
        assert got == [(b"one\n", None)]
        # Pushing again, then the end: the sink hears it once, and the method is the class's.
        assert stream.push_to(sink)
        os.close(request_w)
        request_w = -1
        with anyio.fail_after(HANG):
            while len(got) < 2:
                await asyncio.sleep(0.001)
        assert got[1] == (b"", None)
        assert "data_received" not in vars(protocol)
    finally:
        if request_w != -1:
            os.close(request_w)
        os.close(answer_r)
        await stream.aclose()


# --------------------------------------------------------------------------- TCP


async def test_tcp_streams_both_ways_are_fed_from_the_transport_callback() -> None:
    """A connected and an accepted loopback TCP stream take the same fast path: every
    byte in order, each end fed once, nothing read by a reader task."""
    backend = asyncio_backend.backend()
    accepted: asyncio.Queue[asyncio_backend.AsyncioStream] = asyncio.Queue()
    listener = await asyncio_backend.listen_tcp("127.0.0.1", 0, accepted.put_nowait)
    try:
        port = listener.sockets[0].getsockname()[1]
        client_stream = await asyncio_backend.open_tcp_stream("127.0.0.1", port)
        server_stream = await asyncio.wait_for(accepted.get(), HANG)
        echo = _Echo()  # the accepted side answers every line with itself
        server = Driver(echo, server_stream, lambda events: None, backend=backend)
        seen = _Echo(echo=False)  # the connecting side records the answers
        client = Driver(seen, client_stream, lambda events: None, backend=backend)
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(server.run()), loop.create_task(client.run())]
        lines = [b"line %d\n" % i for i in range(20)] + [b"x" * 300_000 + b"\n", b"last\n"]
        sent = b""
        for line in lines:
            seen.out += line
            sent += line
            client.wake()
            with anyio.fail_after(HANG):
                while b"".join(seen.fed) != sent:  # one line in flight at a time
                    await asyncio.sleep(0.001)
        client.finish()
        await asyncio.wait_for(asyncio.gather(*tasks), HANG)
        assert b"".join(echo.fed) == sent and b"".join(seen.fed) == sent
        # The end, exactly once, on the side that saw it (a finishing side reads no more).
        assert echo.fed[-1] == b"" and echo.fed.count(b"") == 1
        assert not any(echo.in_task) and not any(seen.in_task)
        assert server.error is None and client.error is None
    finally:
        listener.close()
        await listener.wait_closed()


# --------------------------------------------------------------------------- trio


async def _trio_echo_in_order() -> tuple[bytes, bytes, list[bool]]:
    """Lines of 10 B to 200 KiB through a driver over trio pipes; (sent, received, fast)."""
    import trio

    from mcp_adapters.backends import trio as trio_backend

    conn = _Echo()
    request_r, request_w = os.pipe()
    answer_r, answer_w = os.pipe()
    stream = trio_backend.open_pipe_stream(request_r, answer_w)
    fast: list[bool] = []
    write_nowait = stream.write_nowait

    def spy(data: bytes) -> bool:
        fast.append(write_nowait(data))
        return fast[-1]

    stream.write_nowait = spy  # type: ignore[method-assign]
    driver = Driver(conn, stream, lambda events: None, backend=trio_backend.BACKEND)
    lines = [b"x" * size + b"\n" for size in (10, 5000, 10, 200_000, 10, 4000, 10)]
    sent = b"".join(lines)
    received = b""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(driver.run)
        reader = trio.lowlevel.FdStream(answer_r)
        writer = trio.lowlevel.FdStream(request_w)
        expected = 0
        for line in lines:
            await writer.send_all(line)
            expected += len(line)
            with trio.fail_after(HANG):
                while len(received) < expected:  # one answer in flight at a time
                    received += await reader.receive_some()
        await writer.aclose()
        await reader.aclose()
    return sent, received, fast


def test_trio_pipes_write_small_answers_at_once_and_every_byte_in_order() -> None:
    import trio

    sent, received, fast = trio.run(_trio_echo_in_order)
    assert received == sent
    # Answers up to PIPE_BUF went out from wake() itself; the larger through send_all.
    assert fast.count(True) >= 4 and False in fast


async def _trio_reads() -> list[object]:
    """What a trio pipe stream's reads return: full reads, short ones, a read that
    must wait for a later write, the end, and a read after closing."""
    import trio

    from mcp_adapters.backends import trio as trio_backend

    request_r, request_w = os.pipe()
    answer_r, answer_w = os.pipe()
    os.close(answer_r)
    stream = trio_backend.open_pipe_stream(request_r, answer_w)
    got: list[object] = []
    os.write(request_w, b"0123456789")
    with trio.fail_after(HANG):
        got.append(await stream.receive_some(4))  # full: the next reads at once
        got.append(await stream.receive_some(4))
        got.append(await stream.receive_some(4))  # short: the pipe is empty now

        async def write_later() -> None:
            await trio.sleep(0.05)
            os.write(request_w, b"later")
            await trio.sleep(0.05)
            os.close(request_w)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(write_later)
            got.append(await stream.receive_some(4))  # waits for the write
            got.append(await stream.receive_some(4))
            got.append(await stream.receive_some(4))  # the end
    await stream.aclose()
    try:
        await stream.receive_some(4)
    except trio.ClosedResourceError as exc:
        got.append(type(exc))
    return got


def test_trio_pipe_reads_wait_after_a_short_read_and_keep_every_byte() -> None:
    import trio

    assert trio.run(_trio_reads) == [
        b"0123",
        b"4567",
        b"89",
        b"late",
        b"r",
        b"",
        trio.ClosedResourceError,
    ]
