"""The client's side of a server's 2026-07-28 questions, at its edges: a call whose
question the application refused, then cancelled or closed; and the in-flight
limit counting calls that wait on the application's answers.

Found by the state machine once its server asked (tests/fuzz/test_state_machine.py).
"""

from __future__ import annotations

import pytest

from mcp_core import (
    ClientConfig,
    ConnectionClosed,
    ErrorReceived,
    Limits,
    LocalProtocolError,
    RequestReceived,
)
from mcp_core.testing import ConnectionPair, default_server_config

from .engine_support import MODERN, of_type, one

ROOTS = {"r": {"method": "roots/list"}}


def asked_pair(limits: Limits | None = None) -> tuple[ConnectionPair, int, RequestReceived]:
    """A 2026-07-28 call (its id) whose server asked for the roots (the client's slot)."""
    config = ClientConfig(mode=MODERN, capabilities={"roots": {}}, limits=limits or Limits())
    pair = ConnectionPair(default_server_config(), config)
    pair.connect()
    cid = pair.client.send_request("tools/call", {"name": "t"})
    _, server_events = pair.pump()
    call = one(server_events, RequestReceived)
    assert pair.server.send_input_required(call.request_id, ROOTS, "s")
    client_events, _ = pair.pump()
    return pair, cid, one(client_events, RequestReceived)


def test_a_refused_then_cancelled_call_reports_nothing_more() -> None:
    pair, cid, slot = asked_pair()
    assert pair.client.send_error(slot.request_id, -32603, "no roots")
    pair.client.cancel_request(cid)
    assert pair.client.tick(0.0) == []
    pair.client.check_invariants()


def test_a_refused_call_settles_before_the_close() -> None:
    pair, cid, slot = asked_pair()
    assert pair.client.send_error(slot.request_id, -32603, "no roots")
    events = pair.client.close()
    assert events[0] == ErrorReceived(cid, "tools/call", -32603, "no roots", None)
    assert isinstance(events[-1], ConnectionClosed)
    assert pair.client.tick(1e9) == []  # nothing after ConnectionClosed


def test_calls_waiting_on_answers_count_as_in_flight() -> None:
    pair, _, slot = asked_pair(Limits(max_outbound_in_flight=1))
    with pytest.raises(LocalProtocolError, match="too many requests"):
        pair.client.send_request("tools/list")
    # Its retry finds room once answered, and the limit holds throughout.
    assert pair.client.send_result(slot.request_id, {"roots": []})
    pair.client.check_invariants()
    _, server_events = pair.pump()
    assert of_type(server_events, RequestReceived)[0].params.input_responses is not None
    assert pair.client.requests_in_flight == (1, 0)
