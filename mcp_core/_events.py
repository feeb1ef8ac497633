"""Events: what a connection reports after receiving bytes or a tick.

Frozen, slotted dataclasses named in the past tense. Every outbound request
ends in exactly one of `ResponseReceived`, `ErrorReceived` or `RequestFailed`;
every inbound request ends when the application answers it or with
`RequestCancelled` (or with `ConnectionClosed`). A server's questions asked with
`ServerConnection.request_input` end together, in one `InputReceived`.

Payloads are the validated models of `mcp_core.types`: `RequestReceived.params`
is the method's params model (`CallToolRequestParams` for `tools/call` ...,
None for methods without params), `ResponseReceived.result` the method's result
model, `InputAnswer.result` an `ElicitResult`, `CreateMessageResult` or
`ListRootsResult`. The models are shared and must be treated as read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ._errors import RemoteProtocolError
from ._versions import Era

if TYPE_CHECKING:
    from .types import (
        ClientCapabilities,
        CreateMessageResult,
        ElicitResult,
        Implementation,
        ListRootsResult,
        ServerCapabilities,
    )

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

    `input_responses` and `request_state` are what a 2026-07-28 retry carried
    after an `InputRequiredResult` sent with the lower-level
    `send_input_required`. Trust them only when `input_verified` is True: the
    retry came back under requestState this server sealed (`request_state_keys`),
    and only answers to the keys it asked are kept. Answers that came without
    such state (no keys configured, or no state echoed) are the client's word
    alone. `request_input` needs none of this: its answers arrive in
    `InputReceived`, verified, and these fields stay empty there.
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
    input_verified: bool = False


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
class InputAnswer:
    """What became of one question asked with `ServerConnection.request_input`.

    `status` is one of:

    - ``"answered"``: `result` is the client's answer, validated as the
      question's result model (`ElicitResult`, `CreateMessageResult`,
      `ListRootsResult`), and verified: on a legacy session it is the response
      to the request this connection sent; on 2026-07-28 it came back under
      requestState this server sealed for this very call, for a key it asked.
      An accepted form's `content` fits the form it was asked with
      (`check_form_answer`); a declined or cancelled one carries no content.
      The user's "decline" and "cancel" are answers too (`result.action`).
    - ``"refused"``: the client answered the question with a JSON-RPC error
      (`code`, `message`, `data` are its own), as a legacy client does for a
      capability it lacks. (A 2026-07-28 client that refuses simply does not
      retry: then no `InputReceived` comes at all.)
    - ``"unanswered"``: no usable answer came. `code` and `message` say why:
      REQUEST_TIMEOUT when the question's deadline passed (legacy),
      INVALID_PARAMS when the answer was invalid or did not fit the form, None
      when a 2026-07-28 retry carried nothing for this key. Ask again or give up.
    """

    method: str
    status: Literal["answered", "refused", "unanswered"]
    result: ElicitResult | CreateMessageResult | ListRootsResult | None = None
    code: int | None = None
    message: str | None = None
    data: Any = None

    @property
    def accepted(self) -> dict[str, Any] | None:
        """The content of an accepted elicitation (`{}` for URL mode), else None.

        None covers every other case (declined, cancelled, refused, unanswered,
        not an elicitation), so `if answer.accepted is not None` is the whole
        test for "the user said yes"; a form's content fits its form.
        """
        result = self.result
        if self.status != "answered" or getattr(result, "action", None) != "accept":
            return None
        content: dict[str, Any] = getattr(result, "content", None) or {}
        return content


@dataclass(frozen=True, slots=True)
class InputReceived(Event):
    """Server side: the answers to one round of `request_input` questions.

    Shaped like `RequestReceived` (`request_id`, `method`, `params`,
    `context`), because it is handled the same way: run the request's handler
    again with the answers in hand, then answer `request_id` with
    `send_result` / `send_error`, or ask again with another `request_input`.
    On a legacy session `request_id` is the request's own id (it stayed open
    while the questions were out) and `params` / `context` are the request's;
    on 2026-07-28 it is the id of the client's retry, whose params and envelope
    came anew. Nothing else differs, so handling this event needs no era test.

    `answers` holds an `InputAnswer` for every key asked in the round.
    `state` is the `state` given to `request_input`: kept by the connection on
    a legacy session, sealed in requestState on 2026-07-28 and verified on the
    way back.
    """

    request_id: RequestId
    method: str
    params: Any
    context: RequestContext
    answers: Mapping[str, InputAnswer]
    state: Any = None


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
    """The peer cancelled a request it sent us; send nothing more for it.

    Questions still out for it (`request_input`) were withdrawn by the engine.
    """

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

    The closing batch is, in this order: a `RequestFailed` (CONNECTION_CLOSED)
    for each request of ours still in flight, in the order they were sent, then
    this event, whose `abandoned_inbound` lists the peer's requests that were
    still waiting for the application, in the order they arrived. Questions
    asked with `request_input` end with their request: no failure of theirs is
    reported. The connection is already closed while the batch is handled, and
    answering any of these requests then returns False (see `State`).

    `error` is set when the peer broke the framing or the handshake (the
    connection is then in the ERROR state).
    """

    reason: str = "end of stream"
    abandoned_inbound: tuple[RequestId, ...] = field(default=())
    error: RemoteProtocolError | None = None


# ---------------------------------------------------------------- the hot path's builders
#
# A frozen dataclass's `__init__` sets each field through `object.__setattr__` (its own
# `__setattr__` refuses): about 0.25 us a field, 2 us for the ten of a `RequestContext`,
# against 0.05 us for a plain slot store. A round trip builds four or five of these (the
# request and response events, the 2026-07-28 request's context, two `OutgoingMessage`s),
# so the engine builds them on its hot paths with a twin instead: a plain class with the
# same slots, in the same order, whose `__init__` stores each field and then makes the
# object an instance of the frozen class (`__class__` assignment, which CPython allows
# between classes of identical layout). What comes out is an ordinary instance of the
# public class: the same type, equal to and hashing like one built the usual way, and
# frozen from then on. Application code still builds events the usual way; the twins
# are private, and tests/core/test_fast_builders.py checks each against its class.


class _NewRequestReceived(Event):  # the same base: the same layout
    __slots__ = ("context", "method", "params", "request_id")

    def __init__(
        self, request_id: RequestId, method: str, params: Any, context: RequestContext
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params
        self.context = context
        self.__class__ = RequestReceived  # type: ignore[assignment]


class _NewResponseReceived(Event):
    __slots__ = ("method", "request_id", "result")

    def __init__(self, request_id: RequestId, method: str, result: Any) -> None:
        self.request_id = request_id
        self.method = method
        self.result = result
        self.__class__ = ResponseReceived  # type: ignore[assignment]


class _NewRequestContext:
    __slots__ = (
        "client_capabilities",
        "client_info",
        "input_responses",
        "input_verified",
        "log_level",
        "meta",
        "progress_token",
        "protocol_version",
        "related_request_id",
        "request_state",
    )

    def __init__(
        self,
        protocol_version: str,
        client_capabilities: ClientCapabilities | None,
        client_info: Implementation | None,
        log_level: str | None,
        progress_token: int | str | None,
        meta: dict[str, Any] | None,
    ) -> None:
        # The six a plain request sets; the rest take the dataclass's defaults.
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.log_level = log_level
        self.progress_token = progress_token
        self.meta = meta
        self.related_request_id = None
        self.input_responses = None
        self.request_state = None
        self.input_verified = False
        self.__class__ = RequestContext  # type: ignore[assignment]


new_request_received: Callable[[RequestId, str, Any, RequestContext], RequestReceived]
new_request_received = _NewRequestReceived  # type: ignore[assignment]
new_response_received: Callable[[RequestId, str, Any], ResponseReceived]
new_response_received = _NewResponseReceived  # type: ignore[assignment]
#: The twin itself, for the client's result lane, which fills it in place without its
#: `__init__` (`object.__new__`, the three slots, then `__class__ = ResponseReceived`):
#: one Python frame less per result than `new_response_received`.
ResponseReceivedTwin = _NewResponseReceived
new_request_context: Callable[
    [str, ClientCapabilities | None, Implementation | None, str | None, int | str | None, Any],
    RequestContext,
]
new_request_context = _NewRequestContext  # type: ignore[assignment]
