"""The engine's plain attributes stay equal to what they stand for.

`output_pending` is an attribute kept by every place that queues or drains, and
`deadline_epoch` is bumped by every place that can make `next_deadline()` earlier
(a loop compares it instead of calling `next_deadline()` after every message: the
in-process link does). Both are checked here after every step of `PairMachine`'s
runs (sends, receives in random slices, answers, ticks, cancellations, closes,
injected garbage), on both connections:

- `output_pending` is `bool` of the queue (`check_invariants` asserts it too);
- while `deadline_epoch` is unchanged, `next_deadline()` is never earlier than it
  was at the previous step (None counts as infinitely late, so a None stays None).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import invariant

from mcp_core import ClientConfig, RequestReceived
from mcp_core.testing import ConnectionPair

from .harness import scaled
from .test_state_machine import STATEFUL, PairMachine


def _later_or_same(now: float | None, before: float | None) -> bool:
    return (math.inf if now is None else now) >= (math.inf if before is None else before)


class AttributeMachine(PairMachine):
    """`PairMachine`, with the engine's plain attributes checked after every step."""

    seen: dict[str, tuple[int, float | None]]

    def _check_attributes(self, name: str, conn: Any) -> None:
        assert conn.output_pending is bool(conn._outgoing)
        epoch = conn.deadline_epoch
        deadline = conn.next_deadline()
        before = self.seen.get(name)
        if before is not None and before[0] == epoch:
            assert _later_or_same(deadline, before[1]), (name, before, deadline)
        self.seen[name] = (epoch, deadline)

    @invariant()
    def attributes_follow_what_they_stand_for(self) -> None:
        if not hasattr(self, "client"):
            return
        if not hasattr(self, "seen"):
            self.seen = {}
        self._check_attributes("client", self.client)
        self._check_attributes("server", self.server)


AttributeMachine.TestCase.settings = settings(STATEFUL, max_examples=scaled(100))
test_attributes = pytest.mark.no_cover(AttributeMachine.TestCase)


def test_the_epoch_moves_for_a_deadline_and_for_a_failed_call() -> None:
    """The two ways `next_deadline()` comes earlier, each seen in the epoch: a
    request with a deadline, and a 2026-07-28 call failed by the client's own
    refused input answer (minus infinity: tick now). An answer that ends a
    request moves nothing earlier and leaves the epoch alone."""
    pair = ConnectionPair(client_config=ClientConfig(mode="2026-07-28", capabilities={"roots": {}}))
    pair.connect()
    client = pair.client
    epoch = client.deadline_epoch
    assert client.next_deadline() is None
    rid = client.send_request("tools/call", {"name": "t"})
    assert client.deadline_epoch == epoch  # no deadline: nothing can come earlier
    assert client.output_pending is True
    _, server_events = pair.pump()
    assert client.output_pending is False
    client.send_request("tools/call", {"name": "t"}, 30.0)  # deadline by position
    assert client.deadline_epoch == epoch + 1
    assert client.next_deadline() == 30.0
    epoch = client.deadline_epoch
    _, more = pair.pump()
    server_events += more
    calls = [e for e in server_events if isinstance(e, RequestReceived)]
    assert len(calls) == 2
    assert pair.server.send_result(calls[1].request_id, {"content": []})
    assert pair.server.output_pending is True
    pair.pump()
    assert client.deadline_epoch == epoch  # a deadline that went away
    assert client.next_deadline() is None
    pair.server.send_input_required(calls[0].request_id, {"r": {"method": "roots/list"}}, "s")
    client_events, _ = pair.pump()
    (asked,) = [e for e in client_events if isinstance(e, RequestReceived)]
    assert client.deadline_epoch == epoch
    assert client.send_error(asked.request_id, -32603, "no roots today")
    assert client.deadline_epoch == epoch + 1
    assert client.next_deadline() == -math.inf
    assert client.tick(0.0)[0].request_id == rid
