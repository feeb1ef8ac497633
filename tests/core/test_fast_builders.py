"""The engine's private builders of frozen records (`_events.new_*`, `_base._new_outgoing`)
make ordinary instances of the public classes: same type, same fields, equal and hashing
alike, and still frozen. They exist only because a frozen dataclass's `__init__` is slow;
a builder that drifted from its class (a field added to one and not the other) must fail
here, not produce an object with a field missing."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from mcp_core import OutgoingMessage, RequestContext, RequestReceived, ResponseReceived
from mcp_core._base import _new_outgoing, _NewOutgoing
from mcp_core._events import (
    _NewRequestContext,
    _NewRequestReceived,
    _NewResponseReceived,
    new_request_context,
    new_request_received,
    new_response_received,
)

CONTEXT_ARGS = ("2026-07-28", None, None, "info", 7, {"k": "v"})

CASES: list[tuple[type[Any], type[Any], Any, tuple[Any, ...]]] = [
    (OutgoingMessage, _NewOutgoing, _new_outgoing, (b"{}", "result", "ping", 3, 3)),
    (RequestContext, _NewRequestContext, new_request_context, CONTEXT_ARGS),
    (
        RequestReceived,
        _NewRequestReceived,
        new_request_received,
        ("a", "tools/call", {"x": 1}, RequestContext("2025-11-25")),
    ),
    (ResponseReceived, _NewResponseReceived, new_response_received, (1, "ping", None)),
]


@pytest.mark.parametrize(("cls", "twin", "build", "args"), CASES, ids=lambda c: str(c)[:40])
def test_builder_makes_the_public_class(
    cls: type[Any], twin: type[Any], build: Any, args: tuple[Any, ...]
) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    # Same slots (CPython lays them out sorted by name, so a set says it all); a
    # mismatch would also make the `__class__` assignment raise.
    assert set(twin.__slots__) == set(names) == set(cls.__slots__)
    built = build(*args)
    usual = cls(*args)
    assert type(built) is cls
    assert built == usual
    try:
        expected_hash = hash(usual)
    except TypeError:  # a field holds a dict (the context's meta): neither hashes
        with pytest.raises(TypeError):
            hash(built)
    else:
        assert hash(built) == expected_hash
    assert [getattr(built, n) for n in names] == [getattr(usual, n) for n in names]
    assert repr(built) == repr(usual)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, names[0], None)
    assert pickle.loads(pickle.dumps(built)) == usual
    assert dataclasses.replace(built) == usual


def test_context_builder_leaves_the_retry_fields_at_their_defaults() -> None:
    built = new_request_context(*CONTEXT_ARGS)
    defaults = RequestContext(CONTEXT_ARGS[0])
    for name in ("related_request_id", "input_responses", "request_state", "input_verified"):
        assert getattr(built, name) == getattr(defaults, name)
