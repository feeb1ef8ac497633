"""mcp_core: a sans-IO Model Context Protocol engine.

Bytes and calls go in, events and bytes come out; no I/O, no clocks, no threads.
See docs/architecture.md for the shape and docs/embedding.md for the driver loop.

What to reach for:

* `ServerConnection(ServerConfig(...))` / `ClientConnection(ClientConfig(...))`:
  one MCP connection over a byte stream (stdio, TCP); `receive_data` in,
  `data_to_send` out, events to act on. Either speaks every revision from
  2024-11-05 to 2026-07-28; which one a connection runs is negotiated, never
  guessed, and `Era` tells the two shapes apart.
* `mcp_core.http` and `mcp_core.websocket` for those transports (imported
  separately, so a stdio program never loads h11 or wsproto), `mcp_core.oauth`
  and `mcp_core.auth` for authorization, `mcp_core.types` for the wire models,
  `mcp_core.testing` for in-memory pairs and Hypothesis strategies.

The promise, as h11 makes it: receiving never raises for anything the peer
sends (a bad message is answered or reported as an event), a call the protocol
forbids raises `LocalProtocolError` and sends nothing, and every buffer has a
limit (`Limits`). Names not listed here, or in the public submodules, are
private and may change in any release.
"""

from typing import TYPE_CHECKING

from ._base import (
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    OutgoingMessage,
    State,
    capability_problem,
)
from ._client import ClientConnection
from ._config import ClientConfig, ServerConfig, to_wire
from ._errors import (
    CONNECTION_CLOSED,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LIMIT_EXCEEDED,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
    RESOURCE_NOT_FOUND,
    SERVER_BUSY,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
    LocalProtocolError,
    MCPError,
    ProtocolError,
    RemoteProtocolError,
)
from ._events import (
    ClientInitialized,
    Connected,
    ConnectionClosed,
    ErrorReceived,
    Event,
    InputAnswer,
    InputReceived,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestCancelled,
    RequestContext,
    RequestFailed,
    RequestReceived,
    RequestStateRejected,
    ResponseIgnored,
    ResponseReceived,
    SessionStarted,
    SubscriptionAcknowledged,
)
from ._jsonrpc import DEFAULT_LIMITS, PEEK_BYTES, Limits
from ._request_state import INVALID_REQUEST_STATE_MESSAGE, RequestStateError, RequestStateSealer
from ._server import ServerConnection
from ._session_snapshot import SessionSnapshot
from ._tasks import RELATED_TASK_META_KEY, TASKS_EXTENSION, TERMINAL_STATUSES
from ._versions import (
    ALL_REVISIONS,
    LATEST,
    LATEST_LEGACY,
    LEGACY_REVISIONS,
    MODERN_REVISIONS,
    Era,
    era_of,
)

__all__ = [
    "ALL_REVISIONS",
    "CONNECTION_CLOSED",
    "DEFAULT_LIMITS",
    "HEADER_MISMATCH",
    "INVALID_REQUEST_STATE_MESSAGE",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST",
    "LATEST_LEGACY",
    "LEGACY_REVISIONS",
    "LIMIT_EXCEEDED",
    "LOG_LEVELS",
    "RELATED_TASK_META_KEY",
    "TASKS_EXTENSION",
    "TERMINAL_STATUSES",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "MODERN_REVISIONS",
    "PARSE_ERROR",
    "PEEK_BYTES",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "SERVER_BUSY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "ENUM_TITLES",
    "FORM_REVISIONS",
    "check_form_answer",
    "check_form_schema",
    "form_schema",
    "validate_form_answer",
    "ClientConfig",
    "ClientConnection",
    "ClientInitialized",
    "Connected",
    "ConnectionClosed",
    "Era",
    "ErrorReceived",
    "Event",
    "InputAnswer",
    "InputReceived",
    "Limits",
    "LocalProtocolError",
    "MCPError",
    "MessageRejected",
    "NotificationReceived",
    "OutgoingMessage",
    "ProgressReceived",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestCancelled",
    "RequestContext",
    "RequestFailed",
    "RequestReceived",
    "RequestStateError",
    "RequestStateRejected",
    "RequestStateSealer",
    "ResponseIgnored",
    "ResponseReceived",
    "ServerConfig",
    "ServerConnection",
    "SessionSnapshot",
    "SessionStarted",
    "SubscriptionAcknowledged",
    "State",
    "capability_problem",
    "era_of",
    "to_wire",
]


if TYPE_CHECKING:
    from ._elicitation import (
        ENUM_TITLES,
        FORM_REVISIONS,
        check_form_answer,
        check_form_schema,
        form_schema,
        validate_form_answer,
    )

# Form-mode elicitation helpers load pydantic's JSON Schema machinery: on first use.
_FROM_ELICITATION = frozenset(
    {
        "ENUM_TITLES",
        "FORM_REVISIONS",
        "check_form_answer",
        "check_form_schema",
        "form_schema",
        "validate_form_answer",
    }
)


def __getattr__(name: str) -> object:
    """Load the elicitation helpers on first use (PEP 562), then cache them as globals.

    `import mcp_core` stays as cheap as the engine needs; a server that never
    asks with a form never pays for pydantic's JSON Schema generation.
    """
    if name in _FROM_ELICITATION:
        from . import _elicitation

        value = getattr(_elicitation, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
