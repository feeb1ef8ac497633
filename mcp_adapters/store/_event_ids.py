"""Event ids of the event log: `<stream id>:<milliseconds>-<sequence>`.

Both implementations mint the same ids, the way Redis streams do: the
milliseconds come from the store's clock (never going backwards within a
stream), the sequence counts events within one millisecond. So an id says
which stream it belongs to (a cursor is only ever replayed within its own
stream and session) and how old it is (the age limit needs no other field).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["EventPosition", "format_event_id", "check_position", "next_position", "parse_event_id"]

_MAX_PART = 2**63


class EventPosition(NamedTuple):
    """Where an event sits in its stream; orders like the events do."""

    ms: int
    seq: int

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"


def format_event_id(stream_id: str, position: EventPosition) -> str:
    return f"{stream_id}:{position}"


def _number(text: str) -> int | None:
    if not (text.isascii() and text.isdigit() and len(text) <= 19):
        return None
    value = int(text)
    return value if value < _MAX_PART else None


def parse_event_id(event_id: str) -> tuple[str, EventPosition] | None:
    """(stream id, position), or None for anything this log never mints."""
    stream_id, sep, position = event_id.rpartition(":")
    ms_text, dash, seq_text = position.partition("-")
    if not (sep and dash):
        return None
    ms, seq = _number(ms_text), _number(seq_text)
    if ms is None or seq is None:
        return None
    return stream_id, EventPosition(ms, seq)


def next_position(last: EventPosition | None, now_ms: int) -> EventPosition:
    """The position a log gives the next event of a stream whose newest is `last`.

    Redis' rule for `<ms>-*`: the clock's milliseconds, never before the
    newest event's (a clock that went back) nor 0; the sequence counts up
    within one millisecond. A process that writes a stream's events through a
    cache of its own can mint the same ids with it, and hand them to
    `EventLog.append(..., at=)`.
    """
    ms = max(now_ms, 1, last.ms if last is not None else 0)
    return EventPosition(ms, last.seq + 1 if last is not None and last.ms == ms else 0)


def check_position(at: EventPosition, last: EventPosition | None) -> None:
    """Refuse a position given to `append(at=)` that does not come after `last`."""
    if not (EventPosition(0, 0) < at and (last is None or last < at)):
        raise ValueError(f"event position {at} does not come after the stream's newest ({last})")
    if at.ms >= _MAX_PART or at.seq >= _MAX_PART:
        raise ValueError(f"event position {at} is out of range")
