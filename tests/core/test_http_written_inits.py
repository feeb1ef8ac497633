"""The frozen dataclasses the HTTP layer builds per request write their `__init__` out
(`_http.slot_setters`): each must take exactly the arguments the generated one takes,
and make the same instance, still frozen.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from mcp_core import ServerConfig, ServerConnection
from mcp_core._http_headers import ClientView
from mcp_core._http_server import MCPEvent
from mcp_core._http_server_conn import RequestHead

CLASSES = [RequestHead, ClientView, MCPEvent]


def _generated(cls: type) -> type:
    """The same fields as `cls`, with the `__init__` dataclasses generates."""
    return dataclasses.make_dataclass(
        cls.__name__,
        [(f.name, f.type, f) for f in dataclasses.fields(cls)],
        frozen=True,
        slots=True,
    )


@pytest.mark.parametrize("cls", CLASSES)
def test_the_written_init_takes_what_the_generated_one_takes(cls: type) -> None:
    mine = inspect.signature(cls)
    theirs = inspect.signature(_generated(cls))
    assert [(p.name, p.kind, p.default) for p in mine.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]


def _samples() -> list[tuple[type, tuple[Any, ...], dict[str, Any]]]:
    conn = ServerConnection(ServerConfig("s"))
    view = ClientView("https", "example.com", "10.0.0.1", True)
    return [
        (RequestHead, ("POST", "/mcp", [("host", "a")]), {}),
        (RequestHead, ("GET", "/", []), {"peer": "1.2.3.4", "scheme": "https", "view": view}),
        (RequestHead, ("POST", "/x", [], "p", "http", view, None), {}),
        (ClientView, ("http", None, None), {}),
        (ClientView, ("http", "h", "c"), {"proxied": True}),
        (MCPEvent, (view, conn), {}),
        (MCPEvent, (view, conn), {"session_id": "abc"}),
    ]


@pytest.mark.parametrize(("cls", "args", "kwargs"), _samples())
def test_the_written_init_makes_the_same_frozen_instance(
    cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    made = cls(*args, **kwargs)
    expected = _generated(cls)(*args, **kwargs)
    names = [f.name for f in dataclasses.fields(cls)]
    assert [getattr(made, n) for n in names] == [getattr(expected, n) for n in names]
    assert made == cls(*args, **kwargs)
    assert repr(made).split("(", 1)[1] == repr(expected).split("(", 1)[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.__setattr__(names[0], None)
    # `replace` goes through the written `__init__` too.
    assert dataclasses.replace(made) == made
    assert copy.copy(made) == made
    if cls is not MCPEvent:  # (a connection is not meant to be pickled)
        assert pickle.loads(pickle.dumps(made)) == made


def test_a_missing_or_extra_argument_is_refused_as_before() -> None:
    with pytest.raises(TypeError):
        RequestHead("POST", "/mcp")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ClientView("http", None, None, False, 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        MCPEvent(event=None)  # type: ignore[call-arg]
