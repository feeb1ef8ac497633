"""Bookkeeping for requests in flight, both directions, with bounded memory.

Deadlines are plain numbers in whatever clock the caller uses; the table never
reads a clock. Recently finished ids are remembered (up to a bound) so a late
response or a late answer can be told apart from one that was never ours.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from ._state import RequestState

# Each inbound request starts so; on CPython 3.11 an enum member read through its class
# goes through `EnumType.__getattr__`, about five times a plain read.
_OPEN = RequestState.OPEN
_SENT = RequestState.SENT  # (and each outbound one so: read per request sent)

RequestId = int | str


class _Empty(dict[Any, Any]):
    """The one empty table that connections share until they first write to it.

    Why: a connection holds about a dozen tables that most sessions never fill (the
    2026-07-28 rounds, the legacy subscriptions, the task tokens...), and each empty
    dict is 64 bytes of every idle session a server holds. The writer replaces it with
    a dict of its own first (`if table is EMPTY: table = self._x = {}`); this one
    refuses writes, so a write site that misses that step fails loudly instead of
    putting an entry in every connection's table at once. Reads (`in`, `get`, `pop`
    with a default, `len`, iteration, `clear`) behave as on any empty dict.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("the shared empty table is read-only")

    __setitem__ = _refuse
    __ior__ = _refuse
    setdefault = _refuse
    update = _refuse

    def __reduce__(self) -> Any:
        # A copy (pickle, `copy.deepcopy`) is a plain empty dict the copy may write to.
        return (dict, ())


#: The shared read-only empty table (see `_Empty`).
EMPTY: dict[Any, Any] = _Empty()


class _NoItems(list[Any]):
    """`NO_ITEMS`: a list a connection has emptied and will fill again (its output
    buffer once handed over, the client's events waiting for a call), until it does.

    Why: the engine hands such a list over and starts a new one, so an idle connection
    kept an empty list in its place, 56 bytes each. Read-only, like `EMPTY`: the writer
    makes a list of its own first, and one that forgot fails instead of filling every
    connection's list at once.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("the shared empty list is read-only")

    append = extend = insert = __setitem__ = __iadd__ = _refuse


#: The shared read-only empty list (see `_NoItems`).
NO_ITEMS: list[Any] = _NoItems()

#: Another one, for a connection's output buffer only: emptied by `payloads_to_send`,
#: whose next messages are queued as tuples (`NO_ITEMS` there: as records; see
#: `_base.Queued`). A second object rather than a flag, so an idle connection holds
#: no list of its own whichever way it was drained.
NO_QUEUED: list[Any] = _NoItems()


class Outbound:
    """A request we sent and still wait on.

    `logical` is the id the application knows the request by. It differs from the
    wire id only for 2026-07-28 retries, which go out under a fresh id but
    answer the original call. `params` is kept only where a retry may be needed.
    """

    __slots__ = (
        "deadline",
        "handler",
        "logical",
        "method",
        "params",
        "progress_token",
        "related",
        "rounds",
        "state",
    )

    def __init__(
        self,
        method: str,
        deadline: float | None,
        progress_token: int | str | None,
        handler: Callable[[RequestId, dict[str, Any] | None, dict[str, Any] | None], Any] | None,
        related: RequestId | None,
        logical: RequestId,
        params: dict[str, Any] | None = None,
        rounds: int = 0,
    ) -> None:
        """An entry for a request just queued; the id it is filed under is the wire id.

        `deadline` is in the caller's clock (None: wait for ever, which only the
        connection ending can settle); `related` names the peer's request this one was
        sent for (a legacy server's question during a tool call), which puts it on that
        request's HTTP stream.
        """
        # (`ClientConnection.send_request`'s lane makes its entries without this frame,
        # with the same stores: keep the two alike.)
        self.method = method
        self.deadline = deadline
        self.progress_token = progress_token
        # Internal requests (initialize, the discover probe, a server's questions)
        # resolve through a handler instead of surfacing as events:
        # handler(id, result, error), which may return the one event to report.
        self.handler = handler
        self.related = related
        self.logical = logical
        self.params = params
        self.rounds = rounds
        # SENT while in the outbound table; its last value says how it ended.
        self.state = _SENT


class Inbound:
    """A request the peer sent us that the application has not answered yet.

    `capabilities` are the client capabilities in force for this request (wire
    form) and `params` its validated params: the server checks what it may ask
    for, and binds a sealed `requestState` to them.
    """

    __slots__ = (
        "capabilities",
        "context",
        "last_progress",
        "log_level",
        "method",
        "params",
        "progress_token",
        "state",
        "subscription",
    )

    def __init__(
        self,
        method: str,
        progress_token: int | str | None,
        log_level: str | None,
        capabilities: dict[str, Any] | None = None,
        params: Any = None,
    ) -> None:
        """An entry for a peer's request the application has been handed.

        The entry exists from the moment the request is accepted to the moment it is
        answered, cancelled or lost, and its id is refused as a duplicate meanwhile:
        a second request with an id in flight must not take over the first's slot
        (the cross-wired-answers bug of RELIABILITY.md 1.6).
        """
        self.method = method
        self.progress_token = progress_token
        self.last_progress: float | None = None
        self.log_level = log_level
        self.capabilities = capabilities
        self.params = params
        # For subscriptions/listen: the acknowledged filter (wire form), once sent.
        self.subscription: dict[str, Any] | None = None
        # Legacy server: the request's context, for the InputReceived of its questions.
        self.context: Any = None
        # OPEN, or ASKING while a legacy round of questions is out (`_state.py`).
        self.state = _OPEN


class PendingInputs:
    """Client side of one 2026-07-28 round: answers collected before the retry."""

    __slots__ = (
        "answers",
        "deadline",
        "method",
        "params",
        "progress_token",
        "related",
        "request_state",
        "rounds",
        "state",
        "waiting",
    )

    def __init__(
        self,
        method: str,
        params: dict[str, Any] | None,
        request_state: str | None,
        waiting: set[str],
        rounds: int,
        deadline: float | None,
        progress_token: int | str | None,
        related: RequestId | None,
    ) -> None:
        """A call parked between rounds: what its retry needs (method, original params,
        the echoed state, the answers so far) and which questions are still open.
        """
        self.method = method
        self.params = params
        self.request_state = request_state
        self.waiting = waiting
        self.answers: dict[str, Any] = {}
        self.rounds = rounds
        self.deadline = deadline
        self.progress_token = progress_token
        self.related = related
        # Always AWAITING_INPUT while held: the retry makes a new Outbound (SENT).
        self.state = RequestState.AWAITING_INPUT


class RecentIds:
    """A bounded set of ids, oldest forgotten first.

    A list used as a ring once full, not a `deque(maxlen=...)`: a deque
    allocates a block of 64 slots up front, and a connection holds several of
    these; the list grows with use instead, so an idle connection stays small.
    The list alone answers membership while it holds at most `_SMALL` ids (a scan
    of a few ids costs about what a hash lookup does); the set is made only past
    that. An idle session has ended a request or two, and the set was 216 bytes of
    each of its memories.
    """

    __slots__ = ("_bound", "_next", "_ring", "_set")

    #: Up to this many ids, no set: membership scans the list.
    _SMALL = 8

    def __init__(self, bound: int, first: RequestId | None = None) -> None:
        """A memory of at most `bound` ids (at least 1), holding `first` if given: what
        `RecentIds(bound)` and then `add(first)` make, in one call. (A connection makes
        its memory when its first request ends, and a 2026-07-28 POST's connection ends
        exactly one and is dropped: its memory is made and filled per POST.)"""
        self._bound = bound
        # Made by the first `add` (an empty list is 56 bytes; a memory may never be used).
        self._ring: list[RequestId] | None = None if first is None else [first]
        self._next = 0  # the oldest slot, once the ring is full
        # Made once the ring holds more than `_SMALL` ids.
        self._set: set[RequestId] | None = None

    def add(self, request_id: RequestId) -> None:
        """Remember `request_id`, forgetting the oldest once full.

        A forgotten id only changes how a very late answer is reported (unknown rather
        than late), never what is accepted, which is why a bound is safe.
        """
        ring = self._ring
        if ring is None:
            ring = self._ring = []
        seen = self._set
        if len(ring) < self._bound:
            ring.append(request_id)
            if seen is not None:
                seen.add(request_id)
            elif len(ring) > self._SMALL:
                self._set = set(ring)
            return
        i = self._next
        forgotten = ring[i]
        ring[i] = request_id
        self._next = i + 1 if i + 1 < self._bound else 0
        if seen is not None:
            seen.discard(forgotten)
            seen.add(request_id)

    def __contains__(self, request_id: object) -> bool:
        """Whether `request_id` ended recently (within the last `bound`)."""
        seen = self._set
        if seen is not None:
            return request_id in seen
        ring = self._ring
        return ring is not None and request_id in ring

    def __len__(self) -> int:
        """How many ids are remembered (at most `bound`)."""
        seen = self._set
        if seen is not None:
            return len(seen)
        return 0 if self._ring is None else len(set(self._ring))


class _NoIds(RecentIds):
    """`NO_IDS`: the memory of a connection that has ended no request that way yet.

    Why: a connection holds two memories (three on a client), and most never fill all
    of them (a server that asks its client nothing ends no request of its own), each
    64 bytes of every idle session. Reads answer as an empty memory does; `add` is
    refused, so a write site that forgot to make its own memory first fails loudly
    instead of remembering ids in every connection at once.
    """

    __slots__ = ()

    def add(self, request_id: RequestId) -> None:
        raise TypeError("the shared empty memory is read-only")


#: The shared read-only empty memory of ended ids (see `_NoIds`).
NO_IDS: RecentIds = _NoIds(0)


class DeadlineHeap:
    """Deadlines of outbound requests, with lazy deletion of settled ones."""

    __slots__ = ("_seq", "heap")

    def __init__(self) -> None:
        """An empty heap; `_seq` breaks ties so ids of different types (int and str, both
        legal JSON-RPC ids) are never compared.
        """
        #: (deadline, seq, id) entries, live and settled; empty when no deadline is set.
        self.heap: list[tuple[float, int, RequestId]] = []
        self._seq = 0

    def push(self, deadline: float, request_id: RequestId, live: dict[RequestId, Outbound]) -> None:
        """Add a deadline for `request_id`. Entries are never removed when a request ends
        (that would cost a search); `live` is checked instead when they surface, and
        the heap is rebuilt when stale entries outnumber live ones, so it stays O(live).
        """
        self._seq += 1
        heap = self.heap
        heapq.heappush(heap, (deadline, self._seq, request_id))
        if len(heap) > 2 * len(live) + 64:
            # Settled entries linger until they reach the top; rebuild to stay bounded.
            self.heap = [
                item
                for item in heap
                if (entry := live.get(item[2])) is not None and entry.deadline == item[0]
            ]
            heapq.heapify(self.heap)

    def next(self, live: dict[RequestId, Outbound]) -> float | None:
        """The earliest deadline of a request still live under that deadline, or None;
        stale entries met on the way are dropped.
        """
        heap = self.heap
        while heap:
            deadline, _, rid = heap[0]
            entry = live.get(rid)
            if entry is not None and entry.deadline == deadline:
                return deadline
            heapq.heappop(heap)
        return None

    def pop_expired(self, now: float, live: dict[RequestId, Outbound]) -> list[RequestId]:
        """The ids whose deadline is at or before `now`; entries of settled requests, or
        of a deadline since moved, are discarded without being reported.
        """
        expired: list[RequestId] = []
        heap = self.heap
        while heap and heap[0][0] <= now:
            deadline, _, rid = heapq.heappop(heap)
            entry = live.get(rid)
            if entry is not None and entry.deadline == deadline:
                expired.append(rid)
        return expired

    def __len__(self) -> int:
        """Entries held, stale ones included (for the invariant checks)."""
        return len(self.heap)
