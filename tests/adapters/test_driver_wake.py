"""`Driver.wake()` writes at once and re-arms the writer's timer only when it must.

After a write from `wake()` the writer task is woken only if the connection's
deadline came earlier than the one it sleeps until (or none was armed). A
deadline that moved later is found not yet due when the old one fires, and the
writer re-arms then. Either way every deadline is ticked, and none early.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_adapters._driver import Driver
from mcp_adapters.backends import asyncio as asyncio_backend
from tests.adapters.streams import RecordingStream

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Connection:
    """A sans-IO connection with a settable deadline; `tick` records when it ran."""

    def __init__(self) -> None:
        self.deadline: float | None = None
        self.out = b""
        self.ticks: list[tuple[float, float]] = []  # (now, the deadline it was due for)
        self.ticked = asyncio.Event()

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]:
        return []

    def data_to_send(self) -> bytes:
        out, self.out = self.out, b""
        return out

    def next_deadline(self) -> float | None:
        return self.deadline

    def tick(self, now: float) -> list[Any]:
        assert self.deadline is not None
        self.ticks.append((now, self.deadline))
        self.deadline = None
        self.ticked.set()
        return []


async def _running(conn: _Connection, stream: RecordingStream) -> tuple[Driver, asyncio.Task[None]]:
    backend = asyncio_backend.backend()
    driver = Driver(conn, stream, lambda events: None, backend=backend)
    task = asyncio.get_running_loop().create_task(driver.run())
    for _ in range(5):  # let the writer go to sleep on the first deadline
        await asyncio.sleep(0)
    return driver, task


async def _stop(driver: Driver, task: asyncio.Task[None]) -> None:
    driver.finish()
    await asyncio.wait_for(task, 10)


async def test_a_deadline_moved_later_by_a_write_is_ticked_then_and_not_before() -> None:
    loop = asyncio.get_running_loop()
    conn, stream = _Connection(), RecordingStream()
    conn.deadline = loop.time() + 0.05
    driver, task = await _running(conn, stream)
    later = loop.time() + 0.3
    conn.deadline, conn.out = later, b"answer"
    driver.wake()
    assert stream.written == [b"answer"]  # written in wake()'s own stack
    await asyncio.wait_for(conn.ticked.wait(), 10)
    assert len(conn.ticks) == 1
    now, due = conn.ticks[0]
    assert due == later and now >= later  # the earlier wake-up found nothing due
    await _stop(driver, task)


async def test_a_deadline_moved_earlier_by_a_write_wakes_the_writer() -> None:
    loop = asyncio.get_running_loop()
    conn, stream = _Connection(), RecordingStream()
    conn.deadline = loop.time() + 3600  # the writer sleeps until an hour from now
    driver, task = await _running(conn, stream)
    sooner = loop.time() + 0.05
    conn.deadline, conn.out = sooner, b"answer"
    driver.wake()
    assert stream.written == [b"answer"]
    await asyncio.wait_for(conn.ticked.wait(), 10)
    now, due = conn.ticks[0]
    assert due == sooner and now >= sooner
    await _stop(driver, task)


async def test_a_first_deadline_set_by_a_write_wakes_the_writer() -> None:
    loop = asyncio.get_running_loop()
    conn, stream = _Connection(), RecordingStream()
    driver, task = await _running(conn, stream)  # no deadline: the writer sleeps unbounded
    first = loop.time() + 0.05
    conn.deadline, conn.out = first, b"answer"
    driver.wake()
    await asyncio.wait_for(conn.ticked.wait(), 10)
    now, due = conn.ticks[0]
    assert due == first and now >= first
    await _stop(driver, task)


class _EpochConnection(_Connection):
    """`_Connection` with an MCP connection's two plain attributes: `output_pending`
    (something is queued) and `deadline_epoch` (bumped by all that makes
    `next_deadline()` earlier); it counts what the driver asks."""

    def __init__(self) -> None:
        super().__init__()
        self.output_pending = False
        self.deadline_epoch = 0
        self.asked = {"data_to_send": 0, "next_deadline": 0}

    def queue(self, data: bytes) -> None:
        self.out += data
        self.output_pending = True

    def set_deadline(self, deadline: float) -> None:
        self.deadline = deadline
        self.deadline_epoch += 1

    def data_to_send(self) -> bytes:
        self.asked["data_to_send"] += 1
        self.output_pending = False
        return super().data_to_send()

    def next_deadline(self) -> float | None:
        self.asked["next_deadline"] += 1
        return super().next_deadline()


async def test_an_mcp_connection_is_asked_only_for_what_may_have_changed() -> None:
    conn, stream = _EpochConnection(), RecordingStream()
    driver, task = await _running(conn, stream)  # the writer asked for its deadline once
    asked = dict(conn.asked)
    driver.wake()  # nothing queued, no deadline set since the writer's None
    assert stream.written == []
    assert conn.asked["data_to_send"] == asked["data_to_send"]
    conn.queue(b"answer")
    driver.wake()
    assert stream.written == [b"answer"]
    assert conn.asked["data_to_send"] == asked["data_to_send"] + 1
    # The first wake to look reads the deadline (None) and keeps the epoch it read it at;
    # later wakes with the epoch unchanged do not ask again.
    read = conn.asked["next_deadline"]
    conn.queue(b"more")
    driver.wake()
    driver.wake()
    assert stream.written == [b"answer", b"more"]
    assert conn.asked["next_deadline"] == read
    await _stop(driver, task)


async def test_a_deadline_set_with_its_epoch_wakes_the_writer() -> None:
    loop = asyncio.get_running_loop()
    conn, stream = _EpochConnection(), RecordingStream()
    driver, task = await _running(conn, stream)
    conn.queue(b"first")
    driver.wake()  # the deadline read here is None: its epoch is kept
    first = loop.time() + 0.05
    conn.set_deadline(first)  # a new deadline moves the epoch
    conn.queue(b"answer")
    driver.wake()
    assert stream.written == [b"first", b"answer"]
    await asyncio.wait_for(conn.ticked.wait(), 10)
    now, due = conn.ticks[0]
    assert due == first and now >= first
    await _stop(driver, task)


@pytest.mark.parametrize("needs", [False, True, None])
async def test_a_read_passes_the_wall_time_only_to_an_engine_that_needs_it(
    needs: bool | None,
) -> None:
    """As the in-process link: `needs_wall_time` False gets None (no clock read), True
    gets the wall clock, and an object that does not say gets it too."""
    got: list[float | None] = []

    class _Reader(_Connection):
        def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]:
            got.append(wall_time)
            return []

    conn = _Reader()
    if needs is not None:
        conn.needs_wall_time = needs  # type: ignore[attr-defined]
    driver = Driver(conn, RecordingStream(), lambda events: None, backend=asyncio_backend.backend())
    driver._pushed(b"x\n")
    assert len(got) == 1
    assert (got[0] is None) is (needs is False)


class _ReadConnection(_EpochConnection):
    """`_EpochConnection` whose reads do what the test says: `on_read(data)` may queue
    output, set a deadline, or raise."""

    def __init__(self) -> None:
        super().__init__()
        self.on_read: Any = None

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]:
        if self.on_read is not None:
            self.on_read(data)
        return []


async def _pushing(conn: Any) -> tuple[Driver, asyncio.Task[None], Any, list[int]]:
    """A running driver on a `PushedStream`, its `wake` counted (then run as before)."""
    from tests.adapters.streams import PushedStream

    stream = PushedStream()
    driver, task = await _running(conn, stream)
    assert stream.sink is not None  # reads come pushed, through `_pushed`
    wakes = [0]
    wake = driver.wake

    def counted() -> None:
        wakes[0] += 1
        wake()

    driver.wake = counted  # type: ignore[method-assign]
    return driver, task, stream, wakes


async def test_a_pushed_read_that_queued_nothing_and_set_no_deadline_does_not_wake() -> None:
    """A client's read of its answer: nothing to write, nothing to arm, so no `wake()`
    (it would have returned at once); the writer still writes what a later read queues."""
    conn = _ReadConnection()
    driver, task, stream, wakes = await _pushing(conn)
    driver.wake()  # a send: the deadline read here is None, its epoch kept
    wakes[0] = 0
    stream.sink(b"answer\n")
    assert wakes[0] == 0 and stream.written == []
    conn.on_read = lambda data: conn.queue(b"reply")
    stream.sink(b"request\n")
    assert wakes[0] == 1
    assert stream.written == [b"reply"]  # written in the read's own stack
    await _stop(driver, task)


async def test_a_pushed_read_that_set_a_deadline_wakes_the_writer() -> None:
    """A read that queued nothing but moved the deadline epoch (a deadline set while
    handling it) still wakes, and the deadline is ticked when due."""
    loop = asyncio.get_running_loop()
    conn = _ReadConnection()
    driver, task, stream, wakes = await _pushing(conn)
    driver.wake()  # the writer's None deadline: its epoch kept
    wakes[0] = 0
    first = loop.time() + 0.05
    conn.on_read = lambda data: conn.set_deadline(first)
    stream.sink(b"x\n")
    assert wakes[0] == 1
    await asyncio.wait_for(conn.ticked.wait(), 10)
    now, due = conn.ticks[0]
    assert due == first and now >= first
    await _stop(driver, task)


async def test_a_pushed_read_that_failed_still_wakes_the_writer_to_finish() -> None:
    """A read whose processing raised finishes the driver: the wake after it lets the
    writer flush and stop, though nothing was queued."""

    def fail(data: bytes) -> None:
        raise RuntimeError("boom")

    conn = _ReadConnection()
    driver, task, stream, wakes = await _pushing(conn)
    driver.wake()
    wakes[0] = 0
    conn.on_read = fail
    stream.sink(b"x\n")
    assert wakes[0] == 1
    assert driver.error is not None
    await asyncio.wait_for(task, 10)  # the writer saw the finish and ended the run


async def test_a_pushed_read_of_another_sans_io_object_always_wakes() -> None:
    """An object without `output_pending`/`deadline_epoch` (an HTTP layer) cannot say
    that a read queued nothing: every read wakes, as before."""
    conn = _Connection()
    driver, task, stream, wakes = await _pushing(conn)
    stream.sink(b"x\n")
    assert wakes[0] == 1
    conn.out = b"reply"
    stream.sink(b"y\n")
    assert wakes[0] == 2 and stream.written == [b"reply"]
    await _stop(driver, task)
