"""Shared harness for the interaction-feature tests (elicitation, MRTR, sampling,
roots, logging, subscriptions, caching).

`Wire` wraps `ConnectionPair` with a tap that checks *every* message either
engine emits against the official schema of the revision in use, and keeps a
decoded transcript so tests can assert on exact wire content. Raw-peer helpers
(`inject_*`, `drain`) do the same for messages an engine emits towards a
hand-written peer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar

from mcp_core import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    ClientConfig,
    ClientConnection,
    Event,
    OutgoingMessage,
    ServerConfig,
    ServerConnection,
)
from mcp_core.testing import ConnectionPair, Direction, default_server_config
from tests.schema_check import validate_message

MODERN = "2026-07-28"
E = TypeVar("E", bound=Event)
Sender = Literal["client", "server"]

FULL_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "prompts": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "logging": {},
    "completions": {},
}
KEY1 = b"k1" * 16
KEY2 = b"k2" * 16


def of_type(events: Iterable[Event], cls: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, cls)]


def one(events: Iterable[Event], cls: type[E]) -> E:
    events = list(events)
    found = of_type(events, cls)
    assert len(found) == 1, f"expected one {cls.__name__}, got {events}"
    return found[0]


def decode(data: bytes) -> list[Any]:
    assert data == b"" or data.endswith(b"\n"), data
    return [json.loads(chunk) for chunk in data.split(b"\n") if chunk.strip()]


class SchemaTap:
    """Validates every message of one conversation; remembers request methods by id."""

    def __init__(self, revision_of: Any) -> None:
        self.revision_of = revision_of
        # (sender of the request, id) -> method, to pick the result definition.
        self.methods: dict[tuple[Sender, Any], str] = {}
        self.transcript: list[tuple[Sender, dict[str, Any]]] = []
        self.checked = 0

    def check(self, sender: Sender, msg: dict[str, Any], revision: str) -> None:
        if "method" in msg and "id" in msg:
            self.methods[(sender, msg["id"])] = msg["method"]
        request_method = None
        if "result" in msg:
            peer: Sender = "client" if sender == "server" else "server"
            request_method = self.methods.get((peer, msg.get("id")))
        validate_message(msg, revision, sender=sender, request_method=request_method)
        self.transcript.append((sender, msg))
        self.checked += 1


def message_revision(msg: Mapping[str, Any], fallback: str | None) -> str:
    params = msg.get("params")
    if isinstance(params, Mapping):
        if msg.get("method") == "initialize" and isinstance(params.get("protocolVersion"), str):
            return str(params["protocolVersion"])
        meta = params.get("_meta")
        if isinstance(meta, Mapping) and isinstance(meta.get(META_PROTOCOL_VERSION), str):
            return str(meta[META_PROTOCOL_VERSION])
    assert fallback is not None, f"no revision known for {msg}"
    return fallback


class Wire:
    """A `ConnectionPair` whose every wire message is schema-validated."""

    def __init__(
        self,
        server_config: ServerConfig | None = None,
        client_config: ClientConfig | None = None,
        *,
        principal: str | None = None,
    ) -> None:
        self.tap = SchemaTap(None)
        #: Wall-clock time the server is told with each delivery (None: the latest
        #: one the test gave the server, e.g. `send_input_required(wall_time=...)`).
        self.wall_time: float | None = None
        self.pair = ConnectionPair(
            server_config, client_config, tap=self._on_wire, wall_clock=self._wall_clock
        )
        if principal is not None:
            self.pair.server = ServerConnection(
                server_config or default_server_config(), principal=principal
            )

    def _wall_clock(self) -> float:
        if self.wall_time is not None:
            return self.wall_time
        return self.server._wall_time or 0.0

    @property
    def client(self) -> ClientConnection:
        return self.pair.client

    @property
    def server(self) -> ServerConnection:
        return self.pair.server

    @server.setter
    def server(self, conn: ServerConnection) -> None:
        self.pair.server = conn

    def _on_wire(self, direction: Direction, data: bytes) -> None:
        if direction == "client->server":
            sender: Sender = "client"
            fallback = self.pair.client.protocol_version
        else:
            sender = "server"
            fallback = self.pair.server.protocol_version
        for msg in decode(data):
            self.tap.check(sender, msg, message_revision(msg, fallback))

    def connect(self) -> tuple[list[Event], list[Event]]:
        return self.pair.connect()

    def pump(self) -> tuple[list[Event], list[Event]]:
        return self.pair.pump()

    def server_messages(self) -> list[OutgoingMessage]:
        """Drain the server as `OutgoingMessage`s (to check routing), validating each and
        delivering it to the client; the client's events land in `pair.client_events`."""
        out = self.server.messages_to_send()
        for m in out:
            data = m.payload + b"\n"
            self._on_wire("server->client", data)
            self.pair.client_events += self.client.receive_data(data)
        return out

    def sent(self, sender: Sender) -> list[dict[str, Any]]:
        return [m for s, m in self.tap.transcript if s == sender]

    def last(self, sender: Sender) -> dict[str, Any]:
        return self.sent(sender)[-1]

    def mark(self) -> int:
        return len(self.tap.transcript)

    def since(self, mark: int, sender: Sender | None = None) -> list[dict[str, Any]]:
        return [m for s, m in self.tap.transcript[mark:] if sender is None or s == sender]


def legacy_wire(
    version: str,
    client_caps: Mapping[str, Any] | None = None,
    *,
    server_caps: Mapping[str, Any] | None = None,
    **server_kw: Any,
) -> Wire:
    """A connected legacy pair pinned to `version`."""
    server_config = default_server_config(
        **({"capabilities": dict(server_caps)} if server_caps is not None else {}), **server_kw
    )
    client_config = ClientConfig(mode=version, capabilities=dict(client_caps or {}))
    w = Wire(server_config, client_config)
    client_events, _ = w.connect()
    assert w.client.protocol_version == version, client_events
    assert w.server.protocol_version == version
    return w


def modern_wire(
    client_caps: Mapping[str, Any] | None = None,
    *,
    server_caps: Mapping[str, Any] | None = None,
    log_level: str | None = None,
    max_input_rounds: int = 10,
    principal: str | None = None,
    keys: tuple[bytes, ...] = (KEY1,),
    **server_kw: Any,
) -> Wire:
    """A connected 2026-07-28 pair (through `server/discover`), requestState sealing on."""
    server_config = default_server_config(
        request_state_keys=keys,
        **({"capabilities": dict(server_caps)} if server_caps is not None else {}),
        **server_kw,
    )
    client_config = ClientConfig(
        mode="auto",
        capabilities=dict(client_caps or {}),
        log_level=log_level,
        max_input_rounds=max_input_rounds,
    )
    w = Wire(server_config, client_config, principal=principal)
    w.connect()
    assert w.client.protocol_version == MODERN
    assert w.server.protocol_version == MODERN
    return w


# ------------------------------------------------------------ raw peers


def drain(conn: ClientConnection | ServerConnection, revision: str) -> list[dict[str, Any]]:
    """Everything `conn` queued, decoded and schema-validated for `revision`."""
    sender: Sender = "server" if isinstance(conn, ServerConnection) else "client"
    msgs = decode(conn.data_to_send())
    for msg in msgs:
        validate_message(msg, revision, sender=sender)
    return msgs


def line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def inject(
    conn: ClientConnection | ServerConnection, *messages: Any, wall_time: float | None = None
) -> list[Event]:
    """Deliver hand-written messages; `wall_time` is the wall-clock time they arrive at
    (by default the latest one the connection was given, as the engine used to keep)."""
    if wall_time is None:
        wall_time = conn._wall_time or 0.0
    return conn.receive_data(b"".join(line(m) for m in messages), wall_time=wall_time)


def raw_legacy_client(
    version: str, capabilities: Mapping[str, Any] | None = None
) -> ClientConnection:
    """A client pinned to `version`, connected through a hand-written server."""
    conn = ClientConnection(ClientConfig(mode=version, capabilities=dict(capabilities or {})))
    conn.connect()
    sent = decode(conn.data_to_send())
    assert sent[0]["method"] == "initialize"
    inject(
        conn,
        {
            "jsonrpc": "2.0",
            "id": sent[0]["id"],
            "result": {
                "protocolVersion": version,
                "capabilities": FULL_CAPS,
                "serverInfo": {"name": "raw", "version": "1"},
            },
        },
    )
    assert decode(conn.data_to_send()) == [
        {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ]
    return conn


def envelope(caps: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A 2026-07-28 `_meta` envelope for hand-written client requests."""
    return {
        META_PROTOCOL_VERSION: MODERN,
        META_CLIENT_CAPABILITIES: dict(caps or {}),
        **extra,
    }
