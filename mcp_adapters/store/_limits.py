"""`StoreLimits`: every bound a store keeps, one object for both implementations."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["StoreLimits"]


@dataclass(frozen=True, slots=True)
class StoreLimits:
    """How long and how much a store keeps (times in seconds of the store's clock).

    `session_ttl`: a session record lives this long after its last write or
    `touch` (the same idea as `HTTPLimits.session_idle_timeout`).
    `max_events_per_stream` and `max_event_age` bound each resumable stream of
    the event log; `max_streams_per_session` the streams a session keeps (the
    least recently written goes first). `max_pending_messages` is how many bus
    or fan-out messages may wait unread in one subscription before new ones
    are dropped (and counted); `max_message_bytes` bounds one bus payload.
    `max_tasks` bounds the in-memory store's live task records (creating one
    more raises `StoreError`; Redis is bounded by each record's TTL instead).
    """

    session_ttl: float = 1800.0
    max_events_per_stream: int = 512
    max_streams_per_session: int = 64
    max_event_age: float = 3600.0
    max_pending_messages: int = 1024
    max_message_bytes: int = 4 * 1024 * 1024
    max_tasks: int = 10_000

    def __post_init__(self) -> None:
        for name in ("session_ttl", "max_event_age"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds")
        for name in (
            "max_events_per_stream",
            "max_streams_per_session",
            "max_pending_messages",
            "max_message_bytes",
            "max_tasks",
        ):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive int")
