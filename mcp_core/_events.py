"""Events: what a connection reports after receiving bytes or a tick.

Frozen, slotted dataclasses named in the past tense. Every outbound request
ends in exactly one of `ResponseReceived`, `ErrorReceived` or `RequestFailed`;
every inbound request ends when the application answers it or with
`RequestCancelled` (or with `ConnectionClosed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._errors import RemoteProtocolError
from ._versions import Era

if TYPE_CHECKING:
    from .types import ClientCapabilities, Implementation, ServerCapabilities

RequestId = int | str


class Event:
    """Base class of every event."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What the peer declared for one request.

    On a legacy connection these are the session's negotiated values; on a
    2026-07-28 connection they come from this request's `_meta` envelope and
    are never carried over to another request.
    """

    protocol_version: str
    client_capabilities: ClientCapabilities | None = None
    client_info: Implementation | None = None
    log_level: str | None = None
    progress_token: int | str | None = None
    meta: dict[str, Any] | None = None
    related_request_id: RequestId | None = None
    input_responses: dict[str, Any] | None = None
    request_state: Any = None


@dataclass(frozen=True, slots=True)
class RequestReceived(Event):
    """The peer sent a request the application must answer (or let be cancelled).

    `params` is the validated model from `mcp_core.types` for the method, or
    None for methods without params.
    """

    request_id: RequestId
    method: str
    params: Any
    context: RequestContext


@dataclass(frozen=True, slots=True)
class NotificationReceived(Event):
    """A notification the engine does not consume itself (list_changed, log messages ...).

    `subscription_id` is set for notifications of a 2026-07-28
    `subscriptions/listen` stream: the id of that listen request.
    """

    method: str
    params: Any
    subscription_id: RequestId | None = None


@dataclass(frozen=True, slots=True)
class SubscriptionAcknowledged(Event):
    """Client side: the server accepted a `subscriptions/listen` with this filter."""

    request_id: RequestId
    notifications: Any


@dataclass(frozen=True, slots=True)
class RequestStateRejected(Event):
    """Server side: an echoed `requestState` failed verification.

    The client only saw the uniform -32602 error; `reason` is for your logs.
    """

    request_id: RequestId
    reason: str


@dataclass(frozen=True, slots=True)
class ResponseReceived(Event):
    """A successful result for one of our requests, validated for its method."""

    request_id: RequestId
    method: str
    result: Any


@dataclass(frozen=True, slots=True)
class ErrorReceived(Event):
    """The peer answered one of our requests with a JSON-RPC error."""

    request_id: RequestId
    method: str
    code: int
    message: str
    data: Any = None


@dataclass(frozen=True, slots=True)
class RequestFailed(Event):
    """One of our requests ended without an answer from the peer.

    Local causes only (a timeout, the connection closing, an invalid response),
    so `code` never collides with an error the peer sent.
    """

    request_id: RequestId
    method: str
    code: int
    message: str


@dataclass(frozen=True, slots=True)
class RequestCancelled(Event):
    """The peer cancelled a request it sent us; send nothing more for it."""

    request_id: RequestId
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ProgressReceived(Event):
    """Progress for one of our requests."""

    request_id: RequestId
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class ResponseIgnored(Event):
    """A response whose id matches no request in flight; it was dropped.

    `late` is True when the id belongs to one of our requests that recently
    ended (cancelled, timed out, or already answered once), an expected race;
    False when it was never ours.
    """

    request_id: RequestId | None
    late: bool


@dataclass(frozen=True, slots=True)
class MessageRejected(Event):
    """The peer sent something invalid; the engine answered it (when it could) and went on."""

    request_id: RequestId | None
    code: int
    message: str


@dataclass(frozen=True, slots=True)
class SessionStarted(Event):
    """Server side: a legacy `initialize` was answered; the session's terms are fixed."""

    protocol_version: str
    client_capabilities: ClientCapabilities
    client_info: Implementation


@dataclass(frozen=True, slots=True)
class ClientInitialized(Event):
    """Server side: the client sent `notifications/initialized`."""


@dataclass(frozen=True, slots=True)
class Connected(Event):
    """Client side: the connection is ready to carry requests.

    Emitted after the `initialize` handshake (legacy) or after `server/discover`
    (2026-07-28; at once when a modern revision was pinned and discovery skipped).
    """

    protocol_version: str
    era: Era
    server_capabilities: ServerCapabilities | None
    server_info: Implementation | None
    instructions: str | None = None


@dataclass(frozen=True, slots=True)
class ConnectionClosed(Event):
    """The connection ended. Requests still in flight either way were settled first.

    `error` is set when the peer broke the framing or the handshake (the
    connection is then in the ERROR state); `abandoned_inbound` lists the peer's
    requests that were still waiting for the application.
    """

    reason: str = "end of stream"
    abandoned_inbound: tuple[RequestId, ...] = field(default=())
    error: RemoteProtocolError | None = None
