"""Streamable HTTP over h11, sans-IO: the public names.

Imported on its own (not by `import mcp_core`) so programs that never speak
HTTP never load h11. See `_http_server` and `_http_client` for the driving loop.
"""

from ._http_client import (
    AuthorizationChallenged,
    ClientOutbox,
    HTTPClientConnection,
    HTTPClientEndpoint,
    HTTPErrorReceived,
    HTTPRequest,
    SessionExpired,
    ToolsFiltered,
)
from ._http_headers import (
    ClientView,
    HeaderParam,
    HostPolicy,
    InvalidToolHeaderAnnotation,
    TrustedProxies,
    check_mirrored_headers,
    decode_header_value,
    encode_header_value,
    filter_tools_with_valid_headers,
    mirrored_request_headers,
    x_mcp_header_params,
)
from ._http_server import (
    EventStore,
    HTTPExchange,
    HTTPLimits,
    HTTPRequestRejected,
    HTTPServerConnection,
    HTTPServerEndpoint,
    InMemoryEventStore,
    MCPEvent,
    RequestHead,
    tool_header_params_from,
)
from ._session_routing import (
    SessionNamed,
    SessionOpened,
    SharedSessionEndpoint,
    apply_shared_state,
    tag_request_ids,
    tagged_origin,
)

__all__ = [
    "AuthorizationChallenged",
    "ClientOutbox",
    "ClientView",
    "EventStore",
    "HTTPClientConnection",
    "HTTPClientEndpoint",
    "HTTPErrorReceived",
    "HTTPExchange",
    "HTTPLimits",
    "HTTPRequest",
    "HTTPRequestRejected",
    "HTTPServerConnection",
    "HTTPServerEndpoint",
    "HeaderParam",
    "HostPolicy",
    "InMemoryEventStore",
    "InvalidToolHeaderAnnotation",
    "MCPEvent",
    "RequestHead",
    "SessionExpired",
    "SessionNamed",
    "SessionOpened",
    "SharedSessionEndpoint",
    "ToolsFiltered",
    "TrustedProxies",
    "apply_shared_state",
    "check_mirrored_headers",
    "decode_header_value",
    "encode_header_value",
    "filter_tools_with_valid_headers",
    "mirrored_request_headers",
    "tag_request_ids",
    "tagged_origin",
    "tool_header_params_from",
    "x_mcp_header_params",
]
