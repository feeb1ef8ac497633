"""The one driver loop: `DriverCore` (its sans-IO bookkeeping) and `Driver` (the async loop).

The loop, written once here and run by every backend::

    reader:  data = await stream.receive_some(n)      # b"" at end of stream
             core.received(data)                      # receive_data(data, wall_time=...)
             wake the writer                          #   -> on_events(events)
    writer:  sleep until woken or until core.sleep_deadline()
             core.due(now)                            # tick(now) if due; a held end of input
             await stream.send_all(core.take_output())

The writer is the only thing that writes and the reader never waits for a
write, so two peers that both send a lot cannot deadlock each other: what is not
yet written stays in the connection's bounded output buffer. Application code
queues output through the connection (send_request, send_result ...) and then
calls `wake()`; `await drain()` is the back-pressure point (it waits while a
write is in progress).

Who runs what:

- `DriverCore` holds everything that is the same for every loop and touches no
  I/O: the flags (input done, finishing, broken, woken, end of input held), the
  transport error recorded once, "feed, and finish on end of input", "tick when
  due", "take the output, carry what did not fit". The blocking backend
  (`backends.blocking`) and the in-process link (`_link`) step it too.
- `Driver` is the async reader and writer over a `ByteStream`, written once
  against the small `backends.Backend` seam; `backends.asyncio` and
  `backends.trio` supply only streams, events, a movable time limit, a task
  group and a timer.
- The performance tricks belong to the stream: a stream with `write_nowait`
  (asyncio's transports) is written from `wake()` itself, without scheduling
  the writer at all, whenever nothing is in the way; a stream whose `push_to`
  accepts a sink (asyncio's pipes and TCP streams, the HTTP server's sockets)
  is not read by a reader task at all:
  its transport's callback feeds the core (`_pushed`, the reader's step), so a
  message is read, dispatched and answered in one loop turn.

The driver knows nothing about MCP. It binds any sans-IO object with the four
methods of `SansIOConnection`, so the HTTP and WebSocket layers can reuse it.
A failed read or write is translated once (`to_transport_error`), stored on
`driver.error`, and reported to the connection as end of stream; `finish()`
stops input, flushes what is queued (bounded by `close_timeout`) and closes the
stream.

End of input with answers still due: a stdio server fed a file of requests
reads all of it, and its end, before the first slow tool has answered. Fed at
once, that end would close the connection and cancel those tools. So a driver
given `hold_eof` stops reading at end of stream and feeds it only when
`hold_eof()` turns false, checked on every wake-up (each answer wakes it). The
sessions pass `SessionCore.answers_due` when made with `drain_on_eof=True`
(what `serve_stdio` does): handlers still running and none waiting on the peer,
whose answer can no longer come.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from mcp_adapters._errors import TransportError, to_transport_error
from mcp_adapters.backends import Backend, ByteStream, Event, Limit

logger = logging.getLogger(__name__)

#: Bytes asked for per read; the core's line buffer bounds what it keeps anyway.
READ_SIZE = 64 * 1024
#: How long a closing driver keeps trying to write what is still queued.
CLOSE_TIMEOUT = 2.0
#: How long a client waits for the handshake (initialize or server/discover).
CONNECT_TIMEOUT = 30.0
#: How long "auto" mode waits for a `server/discover` answer before trying `initialize`,
#: on message streams (stdio, TCP, WebSocket), where a legacy server may say nothing.
#: Over HTTP every server answers, so the answer decides and there is no such timer.
PROBE_TIMEOUT = 5.0


class SansIOConnection(Protocol):
    """What a driver needs from a protocol object (an MCP connection, an HTTP layer ...)."""

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]: ...

    def data_to_send(self) -> bytes: ...

    def next_deadline(self) -> float | None: ...

    def tick(self, now: float) -> list[Any]: ...


#: Kept for the name the docs used: the async loop's stream.
AsyncByteStream = ByteStream

EventSink = Callable[[list[Any]], None]


class DriverCore:
    """The sans-IO half of every driver: what to feed, tick, write and when to stop.

    It reads no stream and sleeps on nothing: its owner reads, writes and waits,
    and tells it what happened. `on_finish` is called once, when finishing
    begins (the owner starts its close timeout there); `wall_clock` is read
    when input is fed (the expiry of sealed `requestState`).
    """

    __slots__ = (
        "_finish_on_eof",
        "_hold_eof",
        "_on_finish",
        "broken",
        "carried",
        "connection",
        "eof_held",
        "error",
        "finishing",
        "input_done",
        "on_events",
        "wall_clock",
        "woken",
    )

    def __init__(
        self,
        connection: SansIOConnection,
        on_events: EventSink,
        *,
        hold_eof: Callable[[], bool] | None = None,
        on_finish: Callable[[], None] | None = None,
        wall_clock: Callable[[], float] = time.time,
        finish_on_eof: bool = True,
    ) -> None:
        self.connection = connection
        self.on_events = on_events
        self.wall_clock = wall_clock
        #: The first transport failure, translated (a later one adds nothing).
        self.error: TransportError | None = None
        #: No more input is fed (end of stream, or finishing).
        self.input_done = False
        #: End of stream was read but waits for `hold_eof()` to turn false.
        self.eof_held = False
        #: Closing: flush what is queued, then stop.
        self.finishing = False
        #: Writing failed or was given up: nothing more goes out.
        self.broken = False
        #: Someone asked the writer to look again before it sleeps.
        self.woken = False
        self._hold_eof = hold_eof
        self._on_finish = on_finish
        # An HTTP connection half-closed by its client may still owe it a response:
        # there the layer, not the end of input, says when to finish.
        self._finish_on_eof = finish_on_eof
        #: Output taken from the connection but not written yet (it goes first next time).
        self.carried = b""

    # ---- input

    @property
    def reading(self) -> bool:
        """Whether the owner should keep reading."""
        return not self.input_done and not self.eof_held

    def received(self, data: bytes) -> None:
        """What a read returned (b"" at end of stream): fed now, or the end held back."""
        if self.input_done:
            return
        if not data and self._hold_eof is not None and self._hold_eof():
            self.eof_held = True  # `due()` feeds it once the answers are out
            return
        self.feed(data)

    def read_failed(self, error: TransportError) -> None:
        """A read failed: remember why (the owner then reports end of stream)."""
        self.error = self.error or error

    def feed(self, data: bytes) -> None:
        """Give `data` to the connection and its events to the session; b"" ends input."""
        if not data:
            self.input_done = True
            self.eof_held = False
        try:
            self.on_events(self.connection.receive_data(data, wall_time=self.wall_clock()))
        except Exception:
            logger.exception("driver: processing input failed; closing")
            self.error = self.error or TransportError("internal error while processing input")
            self.finish()
        if not data and self._finish_on_eof:
            self.finish()

    # ---- time

    def sleep_deadline(self) -> float | None:
        """Until when the owner may sleep without news (a finishing driver has no timers)."""
        return None if self.finishing else self.connection.next_deadline()

    def due(self, now: float) -> None:
        """On waking: tick the connection if its deadline passed; release a held end."""
        if not self.finishing:
            deadline = self.connection.next_deadline()
            if deadline is not None and deadline <= now:
                self.on_events(self.connection.tick(now))
        if self.eof_held and not self.input_done:
            assert self._hold_eof is not None
            if not self._hold_eof():
                self.feed(b"")  # nothing left to answer: now the input has ended

    # ---- output

    def take_output(self) -> bytes:
        """What to write next: what was carried, then what the connection queued."""
        data = self.connection.data_to_send()
        if self.carried:
            data, self.carried = self.carried + data, b""
        if self.broken:
            return b""  # nothing more goes out; the connection's buffer is emptied
        return data

    def carry(self, data: bytes) -> None:
        """`data` was taken but not written: it goes first next time."""
        self.carried = data + self.carried

    def write_failed(self, error: TransportError) -> None:
        """A write failed: nothing more goes out, and the input ends too."""
        self.error = self.error or error
        self.broken = True
        if not self.input_done:
            self.feed(b"")
        self.finish()

    # ---- the end

    def finish(self) -> None:
        """Take no more input; flush what is queued, then stop (see `done`)."""
        self.input_done = True
        if not self.finishing:
            self.finishing = True
            if self._on_finish is not None:
                self._on_finish()

    def abandon(self) -> None:
        """The close timeout passed with output unwritten: give it up."""
        self.broken = True
        self.carried = b""


class _AlwaysPending:
    """`Driver._quiet` for a sans-IO object that cannot say what a read did (an HTTP
    layer): always something queued, so `_pushed` always wakes after a read."""

    __slots__ = ()
    output_pending = True
    deadline_epoch = None


_ALWAYS_PENDING = _AlwaysPending()


class Driver:
    """Runs one sans-IO connection over one async `ByteStream` on a `Backend`."""

    def __init__(
        self,
        connection: SansIOConnection,
        stream: ByteStream,
        on_events: EventSink,
        *,
        backend: Backend,
        close_timeout: float = CLOSE_TIMEOUT,
        read_size: int = READ_SIZE,
        hold_eof: Callable[[], bool] | None = None,
        finish_on_eof: bool = True,
    ) -> None:
        self.core = DriverCore(
            connection,
            on_events,
            hold_eof=hold_eof,
            on_finish=self._start_close_timeout,
            finish_on_eof=finish_on_eof,
        )
        self._conn = connection
        self._stream = stream
        self._backend = backend
        self._close_timeout = close_timeout
        self._read_size = read_size
        self._errors = backend.errors
        self._wakeup: Event = backend.event()
        #: A write is in progress (answers should wait for `drain()`). A plain
        #: attribute, not a property: the sessions read it on every request and answer.
        self.busy = False
        self._drained: Event | None = None
        self._limit: Limit | None = None
        self._finish_by: float | None = None
        # Streams over asyncio transports take a write at once unless paused: then
        # `wake()` writes itself and the writer task is not scheduled at all.
        self._write_nowait: Callable[[bytes], bool] | None = getattr(stream, "write_nowait", None)
        self._armed: float | None = None  # the deadline the writer sleeps until
        #: Whether a read passes the engine the wall time: only when it needs it
        #: (`needs_wall_time`: a server sealing `requestState`), as the in-process link
        #: does; `time.time()` was one call per read. An engine that does not say gets it.
        self._wall = bool(getattr(connection, "needs_wall_time", True))
        #: An MCP connection (`output_pending` and `deadline_epoch`, both plain attributes):
        #: the engine's `deadline_epoch` when `next_deadline()` last gave None here (-1:
        #: never). While it has not moved, nothing can be due (the engine bumps it for all
        #: that makes `next_deadline()` earlier, so its None stays None), and a wake after
        #: a write need not ask. None: another sans-IO object, asked every time.
        self._none_epoch: int | None = (
            -1
            if hasattr(connection, "output_pending") and hasattr(connection, "deadline_epoch")
            else None
        )
        #: What `_pushed` asks whether a read queued output or set a deadline: the MCP
        #: connection itself, or for another object `_ALWAYS_PENDING` (it cannot say, so
        #: every read wakes). One attribute, so the test costs a server, whose reads
        #: nearly all queue an answer, one read more and no test of which kind it is.
        self._quiet: Any = connection if self._none_epoch is not None else _ALWAYS_PENDING

    @property
    def error(self) -> TransportError | None:
        """The transport failure that ended (or is ending) the stream, if any."""
        return self.core.error

    def now(self) -> float:
        return self._backend.now()

    def wake(self) -> None:
        """Output was queued (or a deadline moved): write it, or let the writer look again."""
        core = self.core
        # `core.carried` is read directly (no property): this runs twice per message on
        # each side, and a property is a Python call.
        if self._write_nowait is not None and not (
            self.busy
            or core.finishing
            or core.broken
            or core.carried
            or core.woken
            or core.eof_held  # the writer decides when a held end of input is due
        ):
            conn = self._conn
            epoch = self._none_epoch
            # An MCP connection says whether it queued anything: a wake after a read that
            # answered nothing (a client's read of its answer) does not ask for bytes.
            data = conn.data_to_send() if epoch is None or conn.output_pending else b""  # type: ignore[attr-defined]
            if data and not self._write_nowait(data):
                core.carry(data)  # paused: the writer waits for the transport
            else:
                # Written. The writer's timer needs re-arming only if the deadline came
                # earlier: one that moved later (an HTTP keep-alive timer restarted by
                # every response) is found not yet due when the old one fires, and the
                # writer re-arms then, instead of being woken for every write. With no
                # deadline set since `next_deadline()` last gave None, there is none now
                # (every call of a client without timeouts): no call at all.
                if epoch is not None:
                    epoch = conn.deadline_epoch  # type: ignore[attr-defined]
                    if epoch == self._none_epoch:
                        return
                deadline, armed = conn.next_deadline(), self._armed
                if deadline is None:
                    if epoch is not None:
                        self._none_epoch = epoch
                    return
                if armed is not None and deadline >= armed:
                    return
        core.woken = True
        self._wakeup.set()

    def finish(self) -> None:
        """Take no more input; write what is queued (within the close timeout), then close."""
        self.core.finish()
        self.wake()

    def abort(self) -> None:
        """Stop at once: what is queued is dropped and the stream closed unflushed.

        What a 2026-07-28 HTTP client does to cancel a request: closing the TCP
        connection that carries it is the cancellation, so nothing more may go out.
        """
        self.core.abandon()
        self.finish()

    def _start_close_timeout(self) -> None:
        # A write may be stuck on a peer that does not read: bound the whole flush.
        self._finish_by = self._backend.now() + self._close_timeout
        if self._limit is not None:
            self._limit.move_to(self._finish_by)

    async def drain(self) -> None:
        """Back-pressure: wait while a write is in progress."""
        while self.busy and not self.core.broken:
            if self._drained is None:
                self._drained = self._backend.event()
            await self._drained.wait()

    async def run(self) -> None:
        """Read and write until `finish()` (or end of stream); always closes the stream."""
        try:
            push_to = getattr(self._stream, "push_to", None)
            if push_to is not None and push_to(self._pushed):
                try:
                    await self._write_loop()
                finally:
                    self._stop_push()
                return
            async with self._backend.task_group() as tasks:
                tasks.start_soon(self._read_loop)
                await self._write_loop()
                tasks.cancel()
        finally:
            await self._backend.close_stream(self._stream, abort=self.core.broken)

    def _stop_push(self) -> None:
        stop: Callable[[], None] = self._stream.stop_push  # type: ignore[attr-defined]
        stop()

    # ---- the two halves

    async def _read_loop(self) -> None:
        core = self.core
        while core.reading:
            try:
                data = await self._stream.receive_some(self._read_size)
            except Exception as exc:
                error = to_transport_error(exc, self._errors)
                if error is None:
                    raise
                core.read_failed(error)
                data = b""
            core.received(bytes(data))
            data = b""  # an idle connection need not keep its last request's bytes
            self.wake()

    def _pushed(self, data: bytes, exc: BaseException | None = None) -> None:
        """One step of `_read_loop`, called by a pushing stream as data arrives
        (b"" at its end, with the error that ended it if one did). Data alone may come
        as `_pushed(data)`: asyncio's pipe and socket transports call it so, as their
        protocol's `data_received` (`backends.asyncio._StreamProtocol.push_to`)."""
        core = self.core
        # `core.reading` and `core.received`, written out: this runs once per message.
        if core.input_done or core.eof_held:
            return  # input ended or its end is held: as a reader that stopped reading
        try:
            if exc is not None:
                core.read_failed(
                    to_transport_error(exc, self._errors) or TransportError(f"read failed: {exc}")
                )
                data = b""
            if data:
                # `core.feed(data)` for data, written out (one Python call per read).
                try:
                    core.on_events(
                        self._conn.receive_data(
                            data, wall_time=core.wall_clock() if self._wall else None
                        )
                    )
                except Exception:
                    logger.exception("driver: processing input failed; closing")
                    core.error = core.error or TransportError(
                        "internal error while processing input"
                    )
                    core.finish()
                if (
                    not self._quiet.output_pending
                    and self._quiet.deadline_epoch == self._none_epoch
                    and not core.input_done
                ):
                    # An MCP connection that queued nothing and set no deadline since
                    # `next_deadline()` last gave None (every read of a client's answer),
                    # with input going on: `wake()` would find nothing to write and
                    # nothing to arm. A writer it would wake instead is one already told:
                    # busy writing (it looks again after the write), finishing (`finish()`
                    # woke it; a finish in this read ends input, which wakes below), or
                    # carrying (woken when the write was carried). A data read holds no
                    # end of input. One Python call fewer per read that answers nothing.
                    return
            else:
                core.received(data)  # the end: fed now, or held (`hold_eof`)
            if core.input_done or core.eof_held:
                self._stop_push()
            self.wake()
        except Exception:
            # What `feed` does not catch (a failed write from `wake`, say) must not
            # reach the transport's callback: asyncio would close the stream unseen.
            logger.exception("driver: processing input failed; closing")
            core.error = core.error or TransportError("internal error while processing input")
            self.finish()

    async def _write_loop(self) -> None:
        limit = self._limit = self._backend.limit()
        if self._finish_by is not None:
            limit.move_to(self._finish_by)
        try:
            async with limit:
                await self._write_until_done()
        finally:
            self._limit = None
        if limit.expired:
            self.core.abandon()  # the close timeout passed: what is buffered is dropped

    async def _write_until_done(self) -> None:
        core = self.core
        backend = self._backend
        while True:
            if not core.woken:
                deadline = self._armed = core.sleep_deadline()
                wakeup = self._wakeup = backend.event()
                await backend.wait(wakeup, deadline)
            core.woken = False
            core.due(backend.now())
            data = core.take_output()
            if data:
                await self._write(data)
                core.woken = True  # look for more before sleeping
            elif core.finishing:
                return

    async def _write(self, data: bytes) -> None:
        self.busy = True
        try:
            await self._stream.send_all(data)
        except Exception as exc:
            error = to_transport_error(exc, self._errors)
            if error is None:
                raise
            self.core.write_failed(error)
        finally:
            self.busy = False
            drained, self._drained = self._drained, None
            if drained is not None:
                drained.set()


def authority(host: str, port: int) -> str:
    """`host:port` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


__all__ = [
    "CLOSE_TIMEOUT",
    "CONNECT_TIMEOUT",
    "PROBE_TIMEOUT",
    "READ_SIZE",
    "AsyncByteStream",
    "Driver",
    "DriverCore",
    "EventSink",
    "SansIOConnection",
    "authority",
]
