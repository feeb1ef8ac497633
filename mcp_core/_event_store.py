"""Where legacy SSE events are kept so a client can resume a dropped stream.

`EventStore` is the interface the HTTP server (`_http_server`) writes every legacy
SSE event through; `InMemoryEventStore` is its bounded default. Nothing here knows
HTTP: a store sees session ids, stream ids and payloads.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Protocol

__all__ = ["EventStore", "InMemoryEventStore"]


class EventStore(Protocol):
    """Where legacy SSE events are kept so a client can resume a dropped stream.

    Synchronous on purpose: this layer does no I/O, so a store backed by a database
    must answer from memory (a write-behind cache) or be wrapped by the adapter.
    Ids must be unique per session and name their stream; `replay_after` must never
    return another stream's, or another session's, events.
    """

    def store_event(self, session_id: str, stream_id: str, payload: bytes | None) -> str:
        """Keep one event (None: a priming event, never replayed) and return its id.

        The priming event of 2025-11-25 (SEP-1699) is stored with no payload so that its id
        is a valid cursor (a client may resume from it) while nothing is ever replayed for
        it.
        """
        ...

    def replay_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]] | None:
        """(stream id, the later events as (id, payload)), or None for an id this
        session never issued.

        The session id is part of the question, not only of the cursor: a cursor presented
        by another session must be unknown (RELIABILITY.md 1.5, the cross-session replay of
        GHSA-84j6-jc92-77jm).
        """
        ...

    def forget_session(self, session_id: str) -> None:
        """The session ended: drop everything it stored.

        Called when a session ends, because no one can resume a stream of a session that no
        longer exists, and a store that kept them would grow with every session ever made.
        """
        ...


class _StoredStream:
    """Sequences count from 1 per stream, so a cursor of 0 (or a sequence not yet issued) is
    refused by the range check in `replay_after` instead of replaying everything.
    """

    __slots__ = ("events", "next_seq")

    def __init__(self, bound: int) -> None:
        self.events: deque[tuple[int, bytes | None]] = deque(maxlen=bound)
        self.next_seq = 1


class InMemoryEventStore:
    """The default `EventStore`: bounded per stream and per session, oldest dropped.

    Event ids are `<stream id>:<sequence>`; a cursor is accepted only for a stream of
    the same session and a sequence already issued, so a guessed or foreign id
    replays nothing. A client that fell further behind than the bound gets what is
    left (the oldest events are gone).
    """

    def __init__(
        self, *, max_events_per_stream: int = 512, max_streams_per_session: int = 64
    ) -> None:
        if max_events_per_stream < 1 or max_streams_per_session < 1:
            raise ValueError("event store bounds must be positive")
        self._max_events = max_events_per_stream
        self._max_streams = max_streams_per_session
        self._sessions: dict[str, OrderedDict[str, _StoredStream]] = {}

    def store_event(self, session_id: str, stream_id: str, payload: bytes | None) -> str:
        streams = self._sessions.get(session_id)
        if streams is None:
            streams = self._sessions[session_id] = OrderedDict()
        stored = streams.get(stream_id)
        if stored is None:
            stored = streams[stream_id] = _StoredStream(self._max_events)
            # The least recently written stream goes first: a session's old, finished POST
            # streams are what nobody will resume, while the GET stream stays busy.
            if len(streams) > self._max_streams:
                streams.popitem(last=False)
        else:
            streams.move_to_end(stream_id)
        seq = stored.next_seq
        stored.next_seq += 1
        # A deque with `maxlen` drops the oldest event when the stream is full: a client
        # that fell that far behind gets what is left instead of the store growing without
        # bound.
        stored.events.append((seq, payload))
        return f"{stream_id}:{seq}"

    def replay_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]] | None:
        streams = self._sessions.get(session_id)
        # Parsed strictly: at most 18 ASCII digits keep `int` fast and bounded on a
        # peer-chosen string (Python refuses huge integer strings only past 4,300 digits),
        # and `rpartition` keeps a stream id that contains colons intact.
        stream_id, sep, seq_text = last_event_id.rpartition(":")
        if (
            streams is None
            or not sep
            or not (seq_text.isascii() and seq_text.isdigit() and len(seq_text) <= 18)
        ):
            return None
        stored = streams.get(stream_id)
        seq = int(seq_text)
        # A sequence never issued is refused rather than clamped, so a guessed cursor cannot
        # be used to read a stream from its start.
        if stored is None or not 0 < seq < stored.next_seq:
            return None
        return stream_id, [
            (f"{stream_id}:{n}", payload)
            # Priming events (no payload) are skipped: they carried nothing, and replaying
            # an empty data event would hand a 2025-03-26-style client a message to misread.
            for n, payload in stored.events
            if n > seq and payload is not None
        ]

    def forget_session(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
