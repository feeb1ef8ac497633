"""An in-process link: two sans-IO connections joined by calls instead of a byte pipe.

Why: with client and server in one process, a pipe (anyio memory streams, a
reader and a writer task per end) cost more per call than the whole engine
(docs/performance.md, finding 2). Here a `wake()` on either end moves what is
queued straight into the other end's `receive_data()` and hands the events to
its session, in the caller's stack. Nothing can block (the receiving engine
takes the bytes synchronously), so there are no reader or writer tasks and no
back-pressure; the only thing left for the loop is a timer for the next
deadline, which each backend arms its own way (`LinkDriver._arm`).

The bytes still go through both engines exactly as on a socket: framing,
parsing, validation and limits are the same, so in-process behaviour is
wire behaviour.

Re-entrancy: delivering to one end can make it queue output (an automatic
error reply) or finish; `Link.pump` runs a single loop that keeps moving data
both ways until neither end has anything queued, and a nested `pump()` only
asks that loop for one more pass. End of stream travels through the same loop,
after everything queued before it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from mcp_adapters._driver import EventSink, SansIOConnection
from mcp_adapters._errors import TransportError

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

    __slots__ = ("_again", "_pumping", "ends")

    def __init__(self) -> None:
        self.ends = (LinkEnd(self), LinkEnd(self))
        self._pumping = False
        self._again = False

    def peer_of(self, driver: LinkDriver) -> LinkDriver | None:
        a, b = self.ends
        return b.driver if a.driver is driver else a.driver

    def pump(self) -> None:
        """Move queued bytes (and end of stream) both ways until nothing is left."""
        if self._pumping:
            self._again = True
            return
        self._pumping = True
        try:
            again = True
            while again:
                self._again = False
                a, b = self.ends[0].driver, self.ends[1].driver
                moved = False
                if a is not None:
                    moved = a.deliver_to(b)
                if b is not None:
                    moved = b.deliver_to(a) or moved
                again = moved or self._again
        finally:
            self._pumping = False
        for end in self.ends:
            if end.driver is not None:
                end.driver.rearm()


def link_pair() -> tuple[LinkEnd, LinkEnd]:
    """Two joined ends for an in-process client and server session."""
    return Link().ends


class LinkDriver:
    """A driver (see `mcp_adapters._driver`) for one `LinkEnd`; backends add the timer."""

    def __init__(self, connection: SansIOConnection, end: LinkEnd, on_events: EventSink) -> None:
        if end.driver is not None:
            raise RuntimeError("this link end is already in use")
        self._conn = connection
        self._end = end
        self._link = end.link
        self._on_events = on_events
        end.driver = self
        self.error: TransportError | None = None
        self.input_done = False
        self.finished = False
        self._eof_pending = False
        self._armed: float | None = None
        # An MCP connection takes whole messages; other sans-IO objects get bytes.
        self._framed = hasattr(connection, "messages_to_send") and hasattr(
            connection, "receive_message"
        )

    # ---- what the session calls

    def wake(self) -> None:
        """Output was queued: deliver it now."""
        self._link.pump()

    def finish(self) -> None:
        """Take no more input; deliver what is queued, then end the peer's input."""
        self.input_done = True
        if self.finished:
            return
        self.finished = True
        self._eof_pending = True
        self._link.pump()
        self._done()

    #: Never writing: the peer takes every write at once.
    busy = False

    async def drain(self) -> None:
        """Nothing to wait for: the peer takes every write at once."""

    def detach(self) -> None:
        """The session has ended: let go of the link, so neither end keeps the other alive."""
        self.finish()
        if self._end.driver is self:
            self._end.driver = None

    # ---- the pump's side

    def deliver_to(self, peer: LinkDriver | None) -> bool:
        if peer is None:
            return False  # not joined yet: it stays queued until the other end exists
        if self._framed and peer._framed:
            # Message by message: no newline joining and splitting between two engines.
            messages = self._conn.messages_to_send()  # type: ignore[attr-defined]
            if messages and not peer.input_done:
                peer.feed_messages([m.payload for m in messages])
            sent = bool(messages)
        else:
            data = self._conn.data_to_send()
            if data and not peer.input_done:
                peer.feed(data)
            sent = bool(data)
        # What the peer no longer reads is dropped, as on a closed socket.
        if self._eof_pending and not sent:
            self._eof_pending = False
            peer.feed(b"")
            return True
        return sent

    def feed(self, data: bytes) -> None:
        if self.input_done:
            return
        if not data:
            self.input_done = True
        try:
            self._on_events(self._conn.receive_data(data, wall_time=time.time()))
        except Exception:
            self._failed()
        if not data:
            self.finish()

    def feed_messages(self, payloads: list[bytes]) -> None:
        receive = self._conn.receive_message  # type: ignore[attr-defined]
        wall_time = time.time()
        try:
            events: list[Any] = []
            for payload in payloads:
                if self._conn.state in _ENDED:  # type: ignore[attr-defined]
                    break  # closed, or a fatal message ended it: nothing more is read
                events.extend(receive(payload, wall_time=wall_time))
            self._on_events(events)
        except Exception:
            self._failed()

    def _failed(self) -> None:
        logger.exception("link: processing input failed; closing")
        self.error = self.error or TransportError("internal error while processing input")
        self.finish()

    def rearm(self) -> None:
        if self.finished:
            if self._armed is not None:
                self._armed = None
                self._arm(None)
            return
        deadline = self._conn.next_deadline()
        if deadline != self._armed:
            self._armed = deadline
            self._arm(deadline)

    def expire(self, now: float) -> None:
        """The armed deadline passed (the backend's timer calls this)."""
        self._armed = None
        if not self.finished:
            events: list[Any] = self._conn.tick(now)
            if events:
                self._on_events(events)
        self._link.pump()

    # ---- what a backend provides

    def now(self) -> float:  # pragma: no cover - every backend overrides it
        raise NotImplementedError

    def _arm(self, deadline: float | None) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _done(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


__all__ = ["Link", "LinkDriver", "LinkEnd", "link_pair"]
