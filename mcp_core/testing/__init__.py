"""Tools for testing code built on mcp_core (and mcp_core itself).

`ConnectionPair` wires a client and a server connection back to back through
real bytes, with no loop. Hypothesis strategies live in
`mcp_core.testing.strategies`, so importing this module needs no Hypothesis;
`mcp_core.testing.mutations` turns a valid message into every type-confused
variant of it (each field of each wrong JSON type, deleted, or inserted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from .._base import _Connection
from .._client import ClientConnection
from .._config import ClientConfig, ServerConfig
from .._events import Event
from .._server import ServerConnection

# A tap sees the bytes exactly as the other side will get them, so a test can check framing
# (one message per line) as well as content, or corrupt a copy.
Direction = Literal["client->server", "server->client"]
WireTap = Callable[[Direction, bytes], None]


def default_server_config(**overrides: object) -> ServerConfig:
    """A server that offers every feature, for tests that need a full peer.

    Every capability is offered so that no request of a generated test is refused for a
    missing capability by default; a test about gating passes its own config.
    """
    settings: dict[str, object] = {
        "name": "test-server",
        "version": "1.0.0",
        "capabilities": {
            "tools": {"listChanged": True},
            "prompts": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "logging": {},
            "completions": {},
        },
    }
    settings.update(overrides)
    return ServerConfig(**settings)  # type: ignore[arg-type]


class ConnectionPair:
    """A client and a server connection exchanging bytes in memory.

    `pump()` moves bytes both ways until neither side has anything to send and
    returns what each side reported. `tap`, if given, sees every chunk on the
    wire (validate it, log it, corrupt it in a copy ...). `wall_clock` gives the
    server the wall time with every delivery (a server with request_state_keys
    refuses input without it); `principal` is who the server connection believes
    the client is.
    """

    def __init__(
        self,
        server_config: ServerConfig | None = None,
        client_config: ClientConfig | None = None,
        *,
        tap: WireTap | None = None,
        wall_clock: Callable[[], float] | None = None,
        principal: str | None = None,
    ) -> None:
        """A server with every feature (`default_server_config`) and a client in legacy
        mode (an `initialize` handshake, no discovery probe) unless configs are given.
        """
        self.server = ServerConnection(
            server_config or default_server_config(), principal=principal
        )
        self.wall_clock = wall_clock
        self.client = ClientConnection(client_config or ClientConfig(mode="legacy"))
        self.tap = tap
        self.client_events: list[Event] = []
        self.server_events: list[Event] = []

    def connect(self, *, deadline: float | None = None) -> tuple[list[Event], list[Event]]:
        """Run the handshake (or discovery) to the end; returns (client, server) events."""
        first = self.client.connect(deadline=deadline)
        client_events, server_events = self.pump()
        return first + client_events, server_events

    def pump(self, max_rounds: int = 1000) -> tuple[list[Event], list[Event]]:
        """Deliver bytes both ways until both sides are quiet."""
        client_events: list[Event] = []
        server_events: list[Event] = []
        # A bound on rounds, not on time: a pair that keeps talking is a bug (two engines
        # answering each other for ever), and a round count fails it deterministically where
        # a timer would depend on the machine's load.
        for _ in range(max_rounds):
            moved = False
            data = self.client.data_to_send()
            if data:
                moved = True
                if self.tap is not None:
                    self.tap("client->server", data)
                # Only the server gets a wall time: the client never seals anything, and a
                # server with `request_state_keys` refuses input without one.
                wall_time = self.wall_clock() if self.wall_clock is not None else None
                server_events += self.server.receive_data(data, wall_time=wall_time)
            data = self.server.data_to_send()
            if data:
                moved = True
                if self.tap is not None:
                    self.tap("server->client", data)
                client_events += self.client.receive_data(data)
            if not moved:
                break
        else:
            raise RuntimeError("connections kept talking after max_rounds exchanges")
        self.client_events += client_events
        self.server_events += server_events
        return client_events, server_events


@contextmanager
def general_path_only() -> Iterator[None]:
    """Within the block, every connection takes the general path only.

    The engines handle the common, well-formed message of each kind in a specialised
    path (a "lane") that must behave exactly as the general one: same events, same
    bytes out, same state. A test compares the two by running the same input inside
    and outside this block; `pytest --general-path` runs a whole suite inside it.
    Not thread-safe: it flips a class attribute for the whole process.
    """
    before = _Connection._lanes
    _Connection._lanes = False
    try:
        yield
    finally:
        _Connection._lanes = before


__all__ = ["ConnectionPair", "Direction", "WireTap", "default_server_config", "general_path_only"]
