"""An in-process link: two sans-IO connections joined by calls instead of a byte pipe.

Why: with client and server in one process, a pipe (anyio memory streams, a
reader and a writer task per end) cost more per call than the whole engine
(docs/performance.md, finding 2). Here a `wake()` on either end moves what is
queued straight into the other end's `receive_data()` and hands the events to
its session, in the caller's stack. Nothing can block (the receiving engine
takes the bytes synchronously), so there are no reader or writer tasks and no
back-pressure; the only thing left for the loop is a timer for the next
deadline, which each backend arms its own way (`Backend.timer`: a bare
`call_at` on asyncio, a sleeping task on trio).

The bytes still go through both engines exactly as on a socket: framing,
parsing, validation and limits are the same, so in-process behaviour is
wire behaviour.

Re-entrancy: delivering to one end can make it queue output (an automatic
error reply, or its session's answer) or finish; `Link.pump` runs a single loop
that keeps moving data from every end marked as having output until none is,
and a nested `pump()` only marks its end for that loop. End of stream travels
through the same loop, after everything queued before it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mcp_adapters._driver import DriverCore, EventSink, SansIOConnection
from mcp_adapters._errors import TransportError
from mcp_adapters.backends import Backend

logger = logging.getLogger(__name__)

_ENDED = ("closed", "error")


class LinkEnd:
    """One end of `link_pair()`: give it to a backend `Session` in place of a stream."""

    __slots__ = ("driver", "link")

    def __init__(self, link: Link) -> None:
        self.link = link
        self.driver: LinkDriver | None = None

    async def aclose(self) -> None:
        if self.driver is not None:
            self.driver.finish()


class Link:
    """The shared pump of two `LinkDriver`s."""

    __slots__ = ("ends", "pumping")

    def __init__(self) -> None:
        self.ends = (LinkEnd(self), LinkEnd(self))
        #: A pump is running (further up this stack): an end's wake only marks itself.
        self.pumping = False

    def peer_of(self, driver: LinkDriver) -> LinkDriver | None:
        a, b = self.ends
        return b.driver if a.driver is driver else a.driver

    def pump(self, origin: LinkDriver | None = None) -> None:
        """Move queued messages (and end of stream) both ways until nothing is left.

        `origin` is the end that queued something (None: either may have). Each end
        carries a `pending` mark: set by its own wake, and by a delivery to it after
        which its engine has output queued (what it receives may make it answer by
        itself, an error reply say, with no wake). The pump moves output from marked
        ends only, so a round trip is two deliveries (the request and the answer), not
        two full passes over both ends.
        """
        if origin is not None:
            origin.pending = True
        else:
            for end in self.ends:
                if end.driver is not None:
                    end.driver.pending = True
        if self.pumping:
            return  # the running loop sees the mark
        self.pumping = True
        first, second = self.ends
        try:
            while True:
                a = first.driver
                b = second.driver
                if a is None or b is None:
                    break  # not joined yet, or one end gone: the marks stay for later
                if a.pending:
                    src, dst = a, b
                elif b.pending:
                    src, dst = b, a
                else:
                    break
                src.pending = False
                if src.framed and dst.framed and not src.eof_pending and not dst.input_done:
                    # `deliver_to` for a message-framed pair with no end of stream to pass,
                    # written in (a request, then its answer: two calls per round trip).
                    # Its steps in its order; keep the two alike.
                    messages = src.connection.payloads_to_send()  # type: ignore[attr-defined]
                    if not messages:
                        continue
                    if len(messages) == 1:
                        conn = dst.connection
                        try:
                            wall_time = dst.wall_clock() if dst.wall else None
                            dst.on_events(
                                []
                                if conn.state in _ENDED  # type: ignore[attr-defined]
                                else conn.receive_message(  # type: ignore[attr-defined]
                                    messages[0], wall_time
                                )
                            )
                        except Exception:
                            dst.input_failed()
                            dst.pending = True
                        else:
                            if conn.output_pending:  # type: ignore[attr-defined]
                                dst.pending = True
                    elif dst.feed_messages(messages):
                        dst.pending = True
                elif src.deliver_to(dst):
                    dst.pending = True
        finally:
            self.pumping = False
        # Each end's timer from its engine's next deadline: `rearm`, with its common case
        # (not finishing) written in, as this runs after every round trip. With the timer
        # disarmed and the engine's `deadline_epoch` where it was when `next_deadline()`
        # was last read, nothing can have come due (the engine bumps the epoch for all
        # that makes `next_deadline()` earlier, so its None is still None): no call at
        # all, which is every call of a client without timeouts. An armed timer asks,
        # so that a deadline that went away disarms it (or moves it later) as before.
        for driver in (first.driver, second.driver):
            if driver is not None:
                if driver.finishing:
                    driver.rearm()
                else:
                    conn = driver.connection
                    epoch = driver.epoch
                    if epoch is not None:
                        if driver.armed is None and epoch == conn.deadline_epoch:  # type: ignore[attr-defined]
                            continue
                        driver.epoch = conn.deadline_epoch  # type: ignore[attr-defined]
                    deadline = conn.next_deadline()
                    if deadline != driver.armed:
                        driver.arm(deadline)


def link_pair() -> tuple[LinkEnd, LinkEnd]:
    """Two joined ends for an in-process client and server session."""
    return Link().ends


class LinkDriver(DriverCore):
    """A driver (see `mcp_adapters._driver`) for one `LinkEnd`; its timer comes from the backend.

    A `DriverCore` itself rather than the owner of one: a session pair holds two of
    these for as long as it lives, and the core object and the bound method it called
    back on finishing were about 200 bytes of each. `error`, `input_done` and
    `finishing` are the core's own attributes.
    """

    # Slots: a session pair holds two of these for as long as it lives.
    __slots__ = (
        "_backend",
        "_end",
        "_link",
        "_timer",
        "armed",
        "eof_pending",
        "epoch",
        "framed",
        "pending",
        "wall",
    )

    def __init__(
        self, connection: SansIOConnection, end: LinkEnd, on_events: EventSink, *, backend: Backend
    ) -> None:
        if end.driver is not None:
            raise RuntimeError("this link end is already in use")
        super().__init__(connection, on_events)
        self._end = end
        self._link = end.link
        self._backend = backend
        self._timer = backend.timer(self.expire)
        end.driver = self
        #: `finish()` was called and the peer's end of input is still to be passed on
        #: (after what is queued); read by `Link.pump`.
        self.eof_pending = False
        #: Output may be queued here (see `Link.pump`).
        self.pending = False
        #: The deadline the timer is armed for (None: not armed); read by `Link.pump`.
        self.armed: float | None = None
        #: The engine's `deadline_epoch` when `next_deadline()` was last read here (-1:
        #: never, or the timer expired since); None: an engine without the epoch, asked
        #: every time. Read by `Link.pump`.
        self.epoch: int | None = -1 if hasattr(connection, "deadline_epoch") else None
        #: Whether deliveries read the wall clock for the engine: only when it needs
        #: the wall time (`needs_wall_time`: a server sealing `requestState`); a client's,
        #: or a server's that seals nothing, is never read, and `time.time()` was one call
        #: per message. An engine that does not say gets it.
        self.wall = bool(getattr(connection, "needs_wall_time", True))
        #: An MCP connection takes whole messages; other sans-IO objects get bytes.
        #: (`output_pending` too: a delivery reads it to know whether to look at the
        #: receiver again, see `deliver_to`.)
        self.framed = (
            hasattr(connection, "payloads_to_send")
            and hasattr(connection, "receive_message")
            and hasattr(connection, "output_pending")
        )

    @property
    def finished(self) -> bool:
        """`finish()` was called: the peer's input ends after what is queued."""
        return self.finishing

    def now(self) -> float:
        return self._backend.now()

    # ---- what the session calls

    def wake(self) -> None:
        """Output was queued: deliver it now.

        Inside a running pump (a server answering in the stack of the client's
        delivery: every in-process call of a plain tool), the mark alone is
        enough: that pump's loop delivers it next, and entering `pump` only to
        find it running was one call more per answer.
        """
        link = self._link
        if link.pumping:
            self.pending = True
            return
        link.pump(self)

    def finish(self) -> None:
        """Take no more input; deliver what is queued, then end the peer's input.

        (`DriverCore.finish` with its `on_finish` written in: the core's own failure
        paths call this one too.)
        """
        self.input_done = True
        if not self.finishing:
            self.finishing = True
            self.eof_pending = True
            self._link.pump(self)
            self._timer.close()

    #: Never writing: the peer takes every write at once.
    busy = False

    async def drain(self) -> None:
        """Nothing to wait for: the peer takes every write at once."""

    async def run(self) -> None:
        """Serve the deadline timer until the session ends."""
        try:
            await self._timer.serve()
        finally:
            self.detach()
            self._timer.close()

    def end_without_task(self, on_end: Callable[[], None]) -> bool:
        """Instead of a task in `run()`: `on_end()` is called on a later loop turn once
        the link has ended (it must `detach()` this driver, as `run()` does on leaving).
        False when the backend's timer needs a task of its own (trio's sleeps): then
        `run()` is still what serves it.

        Why: with nothing to read, a link session's main task only waited for its end;
        it and its coroutines were about a kilobyte of every idle in-process session.
        """
        when_closed = getattr(self._timer, "when_closed", None)
        if when_closed is None:
            return False
        when_closed(on_end)
        return True

    def detach(self) -> None:
        """The session has ended: let go of the link, so neither end keeps the other alive."""
        self.finish()
        if self._end.driver is self:
            self._end.driver = None

    # ---- the pump's side

    def deliver_to(self, peer: LinkDriver | None) -> bool:
        """Move this end's output to `peer`; True when `peer` may now have output of its
        own (so the pump looks at it next)."""
        if peer is None:
            return False  # not joined yet: it stays queued until the other end exists
        if self.framed and peer.framed:
            # Message by message: no newline joining and splitting between two engines.
            messages = self.connection.payloads_to_send()  # type: ignore[attr-defined]
            sent = bool(messages)
            # Whether the peer may have output now. Marked only when its engine queued
            # something while reading (a wake from its session marks it by itself):
            # asking an end that just read a response, with nothing queued, was a third
            # delivery per call, two calls and an empty list, where this is one property
            # read. The queue itself is read, so nothing queued can be missed.
            woke = sent
            if sent and not peer.input_done:
                if len(messages) == 1:
                    # `peer.feed_messages` for one message (nearly always: a request, then
                    # its answer), written in: two calls fewer per round trip.
                    conn = peer.connection
                    try:
                        wall_time = peer.wall_clock() if peer.wall else None
                        peer.on_events(
                            []
                            if conn.state in _ENDED  # type: ignore[attr-defined]
                            else conn.receive_message(  # type: ignore[attr-defined]
                                messages[0], wall_time
                            )
                        )
                    except Exception:
                        peer.input_failed()
                        woke = True
                    else:
                        woke = bool(conn.output_pending) or peer.pending  # type: ignore[attr-defined]
                else:
                    woke = peer.feed_messages(messages) or peer.pending
        else:
            data = self.connection.data_to_send()
            if data and not peer.input_done:
                peer.feed(data)
            woke = sent = bool(data)
        # What the peer no longer reads is dropped, as on a closed socket.
        if self.eof_pending:
            if sent:
                self.pending = True  # the end of stream goes on the next turn, after these
            else:
                self.eof_pending = False
                peer.feed(b"")
                return True
        return woke

    def feed(self, data: bytes) -> None:
        if not self.input_done:
            super().feed(data)

    def feed_messages(self, messages: list[bytes]) -> bool:
        """The peer's queued messages (`payloads_to_send()`), each read as one frame.

        Returns whether this end's engine has output queued after reading them (an
        error reply, say), so the pump knows to look here next without another call.
        """
        conn = self.connection
        receive = conn.receive_message  # type: ignore[attr-defined]
        wall_time = self.wall_clock() if self.wall else None
        try:
            if len(messages) == 1:  # nearly always: no list of our own
                ended = conn.state in _ENDED  # type: ignore[attr-defined]
                events: list[Any] = [] if ended else receive(messages[0], wall_time)
            else:
                events = []
                for message in messages:
                    if conn.state in _ENDED:  # type: ignore[attr-defined]
                        break  # closed, or a fatal message ended it: nothing more is read
                    events.extend(receive(message, wall_time))
            self.on_events(events)
        except Exception:
            self.input_failed()
            return True  # finishing: the pump looks here for what is left to send
        return bool(conn.output_pending)  # type: ignore[attr-defined]

    def input_failed(self) -> None:
        """Reading the peer's messages raised (a bug of ours or of a callback): log it and
        close this end, with what is queued still delivered (the pump looks here next)."""
        logger.exception("link: processing input failed; closing")
        self.error = self.error or TransportError("internal error while processing input")
        self.finish()

    def rearm(self) -> None:
        if self.finishing:
            if self.armed is not None:
                self.armed = None
                self._timer.arm(None)
            return
        deadline = self.connection.next_deadline()
        if deadline != self.armed:
            self.arm(deadline)

    def arm(self, deadline: float | None) -> None:
        """Arm the timer for `deadline` (None: disarm), which the engine just reported."""
        self.armed = deadline
        self._timer.arm(deadline)

    def expire(self, now: float) -> None:
        """The armed deadline passed (the backend's timer calls this)."""
        self.armed = None
        if self.epoch is not None:
            self.epoch = -1  # what is due next is for the pump to ask, epoch or not
        if not self.finishing:
            events: list[Any] = self.connection.tick(now)
            if events:
                self.on_events(events)
        self._link.pump(self)


__all__ = ["Link", "LinkDriver", "LinkEnd", "link_pair"]
