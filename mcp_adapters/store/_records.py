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

__all__ = ["TERMINAL_TASK_STATUSES", "BusMessage", "Notification", "SessionRecord", "TaskRecord"]

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


_TASK_STATUSES: Final = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
#: The statuses a task never leaves; the registry refuses to overwrite them.
TERMINAL_TASK_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})


def _optional_object(value: Any, name: str) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise ValueError(f"{name} must be an object or null")
    return value


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """A task as every process of a deployment sees it (both eras' tasks).

    The fields are the wire `Task`'s, era-neutral: `ttl_ms` and
    `poll_interval_ms` in milliseconds, the timestamps ISO 8601 strings.
    `result` is the underlying request's result in wire form (a
    `CallToolResult`), `error` the JSON-RPC error object it failed with;
    `input_requests` are the questions outstanding (key -> `{method, params}`)
    and `input_responses` the answers the client gave by key (`tasks/update`),
    which the registry merges apart from the rest so that an answer and a
    status change never overwrite each other. `owner` scopes `tasks/list` (a
    principal or a legacy session), `runner` is the process running the work,
    named only while that process keeps a heartbeat on the store (`TaskRegistry`:
    a task whose runner's heartbeat expired may be failed by any process; one
    naming no runner never is).
    `era` is "legacy" (2025-11-25) or "modern" (the 2026-07-28 extension).
    `expires_at` is set by the registry at creation (the store's clock plus
    `ttl_ms`); what you pass is ignored.
    """

    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int
    era: str = "modern"
    poll_interval_ms: int | None = None
    status_message: str | None = None
    owner: str | None = None
    runner: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    input_responses: dict[str, Any] | None = None
    expires_at: float = 0.0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_TASK_STATUSES

    def body(self) -> dict[str, Any]:
        """Everything but the answers, as a JSON-ready dict (the stored body)."""
        return {
            "v": _FORMAT,
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttlMs": self.ttl_ms,
            "era": self.era,
            "pollIntervalMs": self.poll_interval_ms,
            "statusMessage": self.status_message,
            "owner": self.owner,
            "runner": self.runner,
            "result": self.result,
            "error": self.error,
            "inputRequests": self.input_requests,
            "expiresAt": self.expires_at,
        }

    def to_json(self) -> bytes:
        """Sorted-keys compact JSON of the body (the answers are kept apart)."""
        return _dumps(self.body())

    @classmethod
    def from_json(cls, data: bytes, responses: Mapping[str, Any] | None = None) -> TaskRecord:
        """Read `to_json` output back (with the answers kept apart); ValueError otherwise."""
        value = _loads_object(data, "task record")
        task_id = value.get("taskId")
        status = value.get("status")
        if not isinstance(task_id, str) or not task_id:
            raise ValueError("taskId must be a non-empty string")
        if status not in _TASK_STATUSES:
            raise ValueError("status is not a task status")
        ttl = value.get("ttlMs")
        if type(ttl) is not int or ttl < 1:
            raise ValueError("ttlMs must be a positive integer")
        poll = value.get("pollIntervalMs")
        if poll is not None and type(poll) is not int:
            raise ValueError("pollIntervalMs must be an integer or null")
        expires_at = value.get("expiresAt")
        if not isinstance(expires_at, (int, float)) or isinstance(expires_at, bool):
            raise ValueError("expiresAt must be a number")
        era = value.get("era")
        if era not in ("legacy", "modern"):
            raise ValueError("era must be 'legacy' or 'modern'")
        created, updated = value.get("createdAt"), value.get("lastUpdatedAt")
        if not isinstance(created, str) or not isinstance(updated, str):
            raise ValueError("createdAt and lastUpdatedAt must be strings")
        return cls(
            task_id,
            status,
            created,
            updated,
            ttl,
            era,
            poll,
            _optional_str(value.get("statusMessage"), "statusMessage"),
            _optional_str(value.get("owner"), "owner"),
            _optional_str(value.get("runner"), "runner"),
            _optional_object(value.get("result"), "result"),
            _optional_object(value.get("error"), "error"),
            _optional_object(value.get("inputRequests"), "inputRequests"),
            dict(responses) if responses else None,
            float(expires_at),
        )


def check_orphan_failure(record: TaskRecord) -> None:
    """What `TaskRegistry.fail_orphan` accepts: a `failed` record naming its runner."""
    if record.status != "failed":
        raise ValueError("fail_orphan writes a failed record only")
    if not record.runner:
        raise ValueError("fail_orphan needs the record's runner")
