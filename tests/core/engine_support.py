"""Shared helpers for the core engine tests: raw peers, wire decoding, event picking.

Most tests drive one real connection with hand-written JSON (a "raw peer"), so
the exact bytes the engine answers with can be checked. `ConnectionPair` is
used where both sides are the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from mcp_core import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    ClientConfig,
    ClientConnection,
    Event,
    ServerConfig,
    ServerConnection,
)
from mcp_core.testing import default_server_config

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
ALL = (*LEGACY, MODERN)

FULL_SERVER_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "prompts": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "logging": {},
    "completions": {},
}

E = TypeVar("E", bound=Event)


def line(obj: Any) -> bytes:
    """One NDJSON line for a JSON value."""
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def wire(data: bytes) -> list[Any]:
    """The JSON messages in a chunk of NDJSON output (every line must parse)."""
    assert data == b"" or data.endswith(b"\n"), data
    return [json.loads(chunk) for chunk in data.split(b"\n") if chunk.strip()]


def out(conn: ClientConnection | ServerConnection) -> list[Any]:
    """Drain a connection's output as decoded messages."""
    return wire(conn.data_to_send())


def feed(conn: ClientConnection | ServerConnection, *messages: Any) -> list[Event]:
    """Deliver JSON values to a connection, one line each, in one chunk (at the wall
    time it was last given, or 0: sealing servers need one)."""
    return conn.receive_data(b"".join(line(m) for m in messages), wall_time=conn._wall_time or 0.0)


def of_type(events: Iterable[Event], cls: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, cls)]


def one(events: Iterable[Event], cls: type[E]) -> E:
    found = of_type(events, cls)
    assert len(found) == 1, f"expected one {cls.__name__}, got {list(events)}"
    return found[0]


def request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result(rid: Any, value: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": dict(value)}


def error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def error_code(msg: Mapping[str, Any]) -> int:
    code: int = msg["error"]["code"]
    return code


# ---------------------------------------------------------------- servers


def server(**overrides: Any) -> ServerConnection:
    return ServerConnection(default_server_config(**overrides))


def initialize_params(
    version: str = "2025-11-25", capabilities: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": dict(capabilities or {}),
        "clientInfo": {"name": "raw-client", "version": "1.0"},
    }


def legacy_server(
    version: str = "2025-11-25",
    client_caps: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> ServerConnection:
    """A server after a raw `initialize` (id "init") and `notifications/initialized`."""
    conn = server(**overrides)
    feed(
        conn,
        request("init", "initialize", initialize_params(version, client_caps)),
        notification("notifications/initialized"),
    )
    answer = out(conn)
    assert answer[0]["result"]["protocolVersion"] == version, answer
    return conn


def meta(
    version: str = MODERN,
    caps: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A 2026-07-28 `_meta` envelope."""
    envelope: dict[str, Any] = {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: dict(caps or {}),
        META_CLIENT_INFO: {"name": "raw-client", "version": "1.0"},
    }
    envelope.update(extra)
    return envelope


def modern_params(params: Mapping[str, Any] | None = None, **meta_kw: Any) -> dict[str, Any]:
    return {**(params or {}), "_meta": meta(**meta_kw)}


def log_meta(level: str) -> dict[str, Any]:
    return {META_LOG_LEVEL: level}


def modern_server(**overrides: Any) -> ServerConnection:
    """A server made modern by a first `server/discover`."""
    conn = server(**overrides)
    feed(conn, request("d", "server/discover", modern_params()))
    answer = out(conn)
    assert "result" in answer[0], answer
    return conn


# ---------------------------------------------------------------- clients


def initialize_result(
    version: str, capabilities: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": dict(FULL_SERVER_CAPS if capabilities is None else capabilities),
        "serverInfo": {"name": "raw-server", "version": "1.0"},
    }


def legacy_client(
    version: str = "2025-11-25",
    capabilities: Mapping[str, Any] | None = None,
    server_caps: Mapping[str, Any] | None = None,
    **config: Any,
) -> ClientConnection:
    """A client pinned to a legacy revision, connected through a raw server."""
    conn = ClientConnection(ClientConfig(mode=version, capabilities=capabilities, **config))
    conn.connect()
    sent = out(conn)
    assert sent[0]["method"] == "initialize", sent
    feed(conn, result(sent[0]["id"], initialize_result(version, server_caps)))
    assert out(conn) == [notification("notifications/initialized")]
    return conn


def modern_client(**config: Any) -> ClientConnection:
    """A client pinned to 2026-07-28 (no discovery: ready at once)."""
    conn = ClientConnection(ClientConfig(mode=MODERN, **config))
    conn.connect()
    assert conn.data_to_send() == b""
    return conn


def server_config(**overrides: Any) -> ServerConfig:
    return default_server_config(**overrides)
