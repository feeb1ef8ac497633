"""What a store keeps and carries, as frozen records with a stable encoding.

Each record has a versioned, documented wire form, because records written by
one process (and one release) are read by another: a session record is JSON;
a bus message and a fan-out notification are one compact JSON header line,
and a bus message's payload follows the header as raw bytes (a JSON-RPC
message is forwarded exactly as the client sent it, never re-encoded).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_core import SessionSnapshot

__all__ = ["BusMessage", "Notification", "SessionRecord"]

_FORMAT: Final = 1


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=False).encode()


def _loads_object(data: bytes, what: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict) or value.get("v") != _FORMAT or type(value["v"]) is not int:
        raise ValueError(f"{what} has an unknown format")
    return value


def _optional_str(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or null")
    return value


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A legacy session as every process of a deployment sees it.

    `snapshot` restores the session's `ServerConnection` anywhere
    (`ServerConnection.restore(config, record.snapshot)`); `owner` is the
    process that holds the live connection and its requests in flight (the
    bus address to forward the client's answers to), or None while nobody
    does; `subscriptions` are the URIs of its `resources/subscribe` calls.
    `expires_at` is set by the registry (the store's clock); what you pass is
    ignored.
    """

    session_id: str
    snapshot: SessionSnapshot
    owner: str | None = None
    subscriptions: frozenset[str] = field(default_factory=frozenset)
    expires_at: float = 0.0

    def to_json(self) -> bytes:
        """Sorted-keys compact JSON; subscriptions sorted, so equal records encode alike."""
        return _dumps(
            {
                "v": _FORMAT,
                "sessionId": self.session_id,
                "snapshot": self.snapshot.as_dict(),
                "owner": self.owner,
                "subscriptions": sorted(self.subscriptions),
                "expiresAt": self.expires_at,
            }
        )

    @classmethod
    def from_json(cls, data: bytes) -> SessionRecord:
        """Read `to_json` output back; ValueError on anything else."""
        value = _loads_object(data, "session record")
        session_id = value.get("sessionId")
        subscriptions = value.get("subscriptions")
        expires_at = value.get("expiresAt")
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("sessionId must be a non-empty string")
        if not (isinstance(subscriptions, list) and all(isinstance(u, str) for u in subscriptions)):
            raise ValueError("subscriptions must be a list of strings")
        if not isinstance(expires_at, (int, float)) or isinstance(expires_at, bool):
            raise ValueError("expiresAt must be a number")
        return cls(
            session_id,
            SessionSnapshot.from_dict(value.get("snapshot")),
            _optional_str(value.get("owner"), "owner"),
            frozenset(subscriptions),
            float(expires_at),
        )


@dataclass(frozen=True, slots=True)
class BusMessage:
    """One message for the process holding a request: a client's answer to a
    server-to-client request (`elicitation/create` ...), a
    `notifications/cancelled`, a progress notification.

    `payload` is the JSON-RPC message exactly as the client sent it, so the
    holder feeds it to the session's connection as if it had arrived there.
    `session_id` names the legacy session (None when there is none);
    `origin` is the process that forwarded it (for logs).
    """

    payload: bytes
    session_id: str | None = None
    origin: str | None = None

    def encode(self) -> bytes:
        header = _dumps({"v": _FORMAT, "sessionId": self.session_id, "origin": self.origin})
        return header + b"\n" + self.payload

    @classmethod
    def decode(cls, data: bytes) -> BusMessage:
        header, sep, payload = data.partition(b"\n")
        if not sep:
            raise ValueError("bus message has no header line")
        value = _loads_object(header, "bus message header")
        return cls(
            payload,
            _optional_str(value.get("sessionId"), "sessionId"),
            _optional_str(value.get("origin"), "origin"),
        )


@dataclass(frozen=True, slots=True)
class Notification:
    """A change every process must pass on to its own clients.

    `method` is `notifications/{tools,prompts,resources}/list_changed` or
    `notifications/resources/updated` (with `{"uri": ...}` as params); each
    process delivers it to its legacy sessions and 2026-07-28
    `subscriptions/listen` streams whose filter covers it.
    """

    method: str
    params: Mapping[str, Any] | None = None
    origin: str | None = None

    def encode(self) -> bytes:
        params = dict(self.params) if self.params is not None else None
        return _dumps(
            {"v": _FORMAT, "method": self.method, "params": params, "origin": self.origin}
        )

    @classmethod
    def decode(cls, data: bytes) -> Notification:
        value = _loads_object(data, "notification")
        method = value.get("method")
        params = value.get("params")
        if not isinstance(method, str) or not method:
            raise ValueError("method must be a non-empty string")
        if params is not None and not isinstance(params, dict):
            raise ValueError("params must be an object or null")
        return cls(method, params, _optional_str(value.get("origin"), "origin"))
