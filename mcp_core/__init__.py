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

# Flat on purpose, as h11 exports everything from its top: an application should never need
# an underscore module for the engine's own vocabulary (states, events, errors, limits,
# revisions). `tests/test_layout.py` keeps adapters on these public paths.
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

# The client role; with `ServerConnection` (below, in sorted order) the only classes most
# applications construct. Everything else here is vocabulary for their events and configs.
from ._client import ClientConnection

# The configs compute their wire forms once (capabilities, server info), so a connection
# never re-serialises them per message; `to_wire` is the one conversion from a model or
# mapping to what goes on the wire.
from ._config import ClientConfig, ServerConfig, to_wire

# Every error code the engine sends or reads is exported, so an application can compare
# codes by name; `RESOURCE_NOT_FOUND` (-32002) and `URL_ELICITATION_REQUIRED` (-32042) are
# legacy-only and the engine refuses to send them on 2026-07-28 (SPEC-NOTES 1.13), but a
# client must still recognise them from older servers.
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

# The events are the engine's whole output besides bytes: each is a frozen dataclass, so an
# application can keep one, compare it, or hand it to another task safely.
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

# `PEEK_BYTES` is public because a transport with its own size limit (a WebSocket library)
# must keep that many bytes of an oversized message's ends for `receive_oversized` to find
# the request's id.
from ._jsonrpc import DEFAULT_LIMITS, PEEK_BYTES, Limits

# The sealer is public so that replicas can share one key ring: a 2026-07-28 retry may reach
# another process, which must unseal what this one sealed (SEP-2322).
# `INVALID_REQUEST_STATE_MESSAGE` is the one message every rejection carries, public so that
# tests and clients can recognise it without the engine revealing why.
from ._request_state import INVALID_REQUEST_STATE_MESSAGE, RequestStateError, RequestStateSealer
from ._server import ServerConnection

# What moves a legacy session between processes (`ServerConnection.snapshot` and `restore`);
# 2026-07-28 needs no such thing, since no request depends on another.
from ._session_snapshot import SessionSnapshot

# Only the task constants are top-level; the task rules live in `mcp_core.tasks`.
from ._tasks import RELATED_TASK_META_KEY, TASKS_EXTENSION, TERMINAL_STATUSES

# The revisions as an enumerated set, never compared as dates (SPEC-NOTES checklist item 3):
# `era_of` is the one place that says which era a revision belongs to.
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
    # Listed although loaded lazily: `from mcp_core import *` and documentation tools read
    # `__all__`, and the module `__getattr__` below resolves them on first access.
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


# For type checkers and editors only: at run time these names come through `__getattr__`
# below, so they cost nothing until used.
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

    Caching the value as a global means the hook runs once per name: later lookups are plain
    module attribute reads, as fast as for any eagerly imported name.
    """
    if name in _FROM_ELICITATION:
        from . import _elicitation

        value = getattr(_elicitation, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
