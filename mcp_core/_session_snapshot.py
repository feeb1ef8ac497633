"""Moving a legacy session to another process: `SessionSnapshot`.

A legacy session is negotiated once (`initialize`) and then lives in one
`ServerConnection`. When several server processes share one endpoint, the
process that gets a session's next request may not be the one that ran its
`initialize`; it rebuilds the connection from a snapshot kept in a shared store.

What a snapshot carries is exactly what the connection learnt from the
handshake and after it, and nothing that belongs to one process:

* the negotiated revision, the client's capabilities and client info (the
  context every later request of the session is judged in);
* the `logging/setLevel` threshold;
* the principal the session is bound to (a sealed state and the session owner
  check both use it);
* the next id for server-to-client requests, so a restored connection never
  reuses an id the client may still associate with an earlier request.

Requests in flight either way are *not* in it: their waiters, deadlines and
handlers live in the process that started them, and their answers must be
routed there (the adapters' store has a bus for that).

The dict form (`as_dict` / `from_dict`) is plain JSON with camelCase keys and a
version number, so records written by one release are read by the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import pydantic

from ._base import LOG_RANK, describe, validator
from ._config import to_wire
from ._errors import LocalProtocolError
from ._events import RequestContext
from ._state import SessionInput, SessionState
from ._versions import Era, is_known

if TYPE_CHECKING:
    from ._server import ServerConnection

__all__ = ["SessionSnapshot"]

# The record's format version. A release that adds to the record bumps it, and an
# older release refuses the newer record instead of restoring a session without the
# part it cannot read; exact keys make that refusal certain, not a silent drop.
_FORMAT: Final = 1
_KEYS: Final = frozenset(
    {"v", "protocolVersion", "clientCapabilities", "clientInfo", "logLevel", "principal", "nextId"}
)


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """What a ready legacy `ServerConnection` needs to go on in another process.

    Take one with `ServerConnection.snapshot()`; rebuild the connection with
    `ServerConnection.restore(config, snapshot)`. `client_capabilities` and
    `client_info` are wire dicts (camelCase), treat them as read-only.
    """

    protocol_version: str
    client_capabilities: Mapping[str, Any]
    client_info: Mapping[str, Any] | None = None
    log_level: str | None = None
    principal: str | None = None
    next_id: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON form (every key present; None as null).

        Every key always present, so a reader can tell "no log level set" (null)
        from a record of a format that had no such key (refused by `from_dict`).
        """
        return {
            "v": _FORMAT,
            "protocolVersion": self.protocol_version,
            "clientCapabilities": dict(self.client_capabilities),
            "clientInfo": dict(self.client_info) if self.client_info is not None else None,
            "logLevel": self.log_level,
            "principal": self.principal,
            "nextId": self.next_id,
        }

    @classmethod
    def from_dict(cls, data: Any) -> SessionSnapshot:
        """Read the JSON form back; raises ValueError on anything else.

        The shapes are checked here; whether the capabilities and client info
        are valid MCP objects is checked by `ServerConnection.restore`.
        """
        if not isinstance(data, Mapping):
            raise ValueError("a session snapshot must be a JSON object")
        if data.get("v") != _FORMAT or type(data.get("v")) is not int:
            raise ValueError(f"unknown session snapshot format {data.get('v')!r}")
        if set(data) != _KEYS:
            raise ValueError(f"session snapshot keys must be exactly {sorted(_KEYS)}")
        version = data["protocolVersion"]
        caps = data["clientCapabilities"]
        info = data["clientInfo"]
        level = data["logLevel"]
        principal = data["principal"]
        next_id = data["nextId"]
        if not isinstance(version, str):
            raise ValueError("protocolVersion must be a string")
        if not isinstance(caps, Mapping):
            raise ValueError("clientCapabilities must be an object")
        if info is not None and not isinstance(info, Mapping):
            raise ValueError("clientInfo must be an object or null")
        if level is not None and level not in LOG_RANK:
            raise ValueError(f"unknown log level {level!r}")
        if principal is not None and not isinstance(principal, str):
            raise ValueError("principal must be a string or null")
        if type(next_id) is not int or next_id < 0:
            raise ValueError("nextId must be a non-negative integer")
        return cls(
            version,
            dict(caps),
            dict(info) if info is not None else None,
            level,
            principal,
            next_id,
        )


def take_snapshot(conn: ServerConnection) -> SessionSnapshot:
    """The snapshot of a ready legacy session (see `ServerConnection.snapshot`)."""
    if (
        conn.era is not Era.LEGACY
        or conn.state is not SessionState.READY
        or conn.protocol_version is None
    ):
        raise LocalProtocolError(
            "only a ready legacy session has state to move "
            f"(era {conn.era}, state {conn.state}); a 2026-07-28 request carries its own"
        )
    # `next_id` is the only counter that must survive: a restored connection that
    # started again at 0 could send an id the client still holds for a question
    # the first process asked, and the client would match the wrong answer.
    info = to_wire(conn.client_info)
    return SessionSnapshot(
        conn.protocol_version,
        dict(conn._client_caps_wire),
        info,
        conn.log_level,
        conn.principal,
        conn._next_id,
    )


def apply_snapshot(conn: ServerConnection, snapshot: SessionSnapshot) -> None:
    """Turn a fresh connection (`ServerConnection.restore` makes one) into the
    session the snapshot describes.

    Raises LocalProtocolError when this server cannot hold the session (it no
    longer speaks the revision) and ValueError when the snapshot's client
    capabilities or info are not valid MCP objects.
    """
    version = snapshot.protocol_version
    if not is_known(version) or version not in conn.config.legacy_versions:
        raise LocalProtocolError(
            f"this server does not speak {version!r} (legacy revisions: "
            f"{', '.join(conn.config.legacy_versions) or 'none'}), so it cannot hold the session"
        )
    if snapshot.log_level is not None and snapshot.log_level not in LOG_RANK:
        raise ValueError(f"unknown log level {snapshot.log_level!r}")
    if type(snapshot.next_id) is not int or snapshot.next_id < 0:
        raise ValueError("next_id must be a non-negative integer")
    # Validated as if they had just arrived in `initialize`: the store is outside this
    # process, and a record changed there must not yield a connection in a state a
    # real handshake could not produce.
    try:
        capabilities = validator("ClientCapabilities")(dict(snapshot.client_capabilities))
        info = (
            validator("Implementation")(dict(snapshot.client_info))
            if snapshot.client_info is not None
            else None
        )
    except pydantic.ValidationError as exc:
        raise ValueError(f"invalid session snapshot: {describe(exc)}") from None
    conn._move(SessionInput.RESTORE)  # only a fresh connection can take a session in
    conn.protocol_version = version
    conn.era = Era.LEGACY
    conn.client_capabilities = capabilities
    conn.client_info = info
    conn.log_level = snapshot.log_level
    conn.principal = snapshot.principal
    conn._client_caps_wire = to_wire(capabilities) or {}
    conn._next_id = snapshot.next_id
    conn._session_context = RequestContext(version, capabilities, info)
