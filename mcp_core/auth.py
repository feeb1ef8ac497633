"""MCP authorization for servers, sans-IO: the resource server side.

An MCP server reached over HTTP is an OAuth 2.1 resource server. Give its HTTP
endpoint a `ProtectedResource` (`HTTPServerEndpoint(config, auth=...)`, or a
`ResourceGuard` to add per-request scopes) and it

* serves the Protected Resource Metadata document (RFC 9728) at
  `/.well-known/oauth-protected-resource/<path>` (and the bare location);
* answers a request without a token 401 with a `WWW-Authenticate: Bearer`
  challenge naming that document and the scope to ask for; a bad token 401
  `invalid_token`; a token short of a scope 403 `insufficient_scope`;
* asks you to verify each token it has not seen (`TokenVerificationNeeded`: the
  verification may need I/O), then checks issuer, audience and times itself and
  binds the token's principal into the legacy session and into sealed
  `requestState`, so another principal can take over neither.

`mcp_adapters.auth` has the verifiers (JWT against a JWKS, RFC 7662
introspection) and the `MCPServer(auth=...)` settings; docs/authorization.md
shows both sides. The client side is `mcp_core.oauth`.
"""

# The two events are the HTTP endpoint's; the WebSocket handshake has its own
# (`WebSocketTokenVerificationNeeded`, in mcp_core.websocket). Everything from
# `_resource_auth` is transport-free, so both transports judge tokens alike.
from ._http_auth import AccessRefused, TokenVerificationNeeded
from ._resource_auth import (
    PRM_WELL_KNOWN,
    AccessToken,
    AuthResponse,
    Granted,
    InvalidToken,
    NeedsVerification,
    ProtectedResource,
    ResourceGuard,
    VerificationResult,
    VerifierUnavailable,
    bearer_token,
    www_authenticate,
)

__all__ = [
    "PRM_WELL_KNOWN",
    "AccessRefused",
    "AccessToken",
    "AuthResponse",
    "Granted",
    "InvalidToken",
    "NeedsVerification",
    "ProtectedResource",
    "ResourceGuard",
    "TokenVerificationNeeded",
    "VerificationResult",
    "VerifierUnavailable",
    "bearer_token",
    "www_authenticate",
]
