"""Streamable HTTP over h11, sans-IO: the public names.

Imported on its own (not by `import mcp_core`) so programs that never speak
HTTP never load h11. See `_http_server` and `_http_client` for the driving loop.

Which object for what:

* Server: one `HTTPServerEndpoint` per MCP endpoint (it holds the legacy
  sessions, the policy and the limits), and one `HTTPServerConnection` per
  accepted TCP connection, which parses HTTP/1.1 with h11. An ASGI server has
  already parsed HTTP, so it feeds each request to the endpoint as an
  `HTTPExchange` instead. Behind a load balancer with several processes,
  `SharedSessionEndpoint` lets legacy sessions move between them.
* Client: one `HTTPClientEndpoint` per server URL and one
  `HTTPClientConnection` per TCP connection (keep-alive reuses it).
* Both eras on one endpoint: a request's era is read from its own headers and
  body (`classify_era`), so legacy clients with sessions and stateless
  2026-07-28 clients can share a URL, as the spec's backwards compatibility
  section expects.
* Security that does not depend on the era: `HostPolicy` (DNS rebinding:
  the spec requires servers to validate `Origin`), `TrustedProxies` (who may
  speak for the client), and the 2026-07-28 mirrored-header functions, also
  usable by a gateway that routes on those headers and wants the same checks.
"""

# The client's names: `ClientOutbox` and `HTTPRequest` are the sans-IO seam (the engine says
# which request to make, the adapter makes it), and the events are what the HTTP layer adds
# to the MCP events: `SessionExpired` for a legacy 404 (2025-03-26: start again with
# `initialize`), `ToolsFiltered` for the tools a 2026-07-28 client MUST drop for invalid
# `x-mcp-header` annotations (SEP-2243), `AuthorizationChallenged` for a 401 or 403 that
# starts the OAuth flow.
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

# Header rules that are pure functions of a header map and a body, public so that a gateway
# or an ASGI middleware in front of the server can make the same checks the server makes
# (RELIABILITY.md rule 10: one implementation of the security checks that every layer
# shares).
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

# For several processes behind one URL: a legacy session must reach the process that holds
# it, or be restored from shared state; 2026-07-28 requests need none of it.
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
