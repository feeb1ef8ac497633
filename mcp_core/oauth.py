"""MCP authorization (OAuth 2.1) for clients, sans-IO: the public names.

`OAuthClientFlow` is the whole client side of the MCP authorization spec as a
state machine that performs no I/O: it emits the HTTP requests to make and the
authorization URL to open, takes their results, and ends with tokens and the
`Authorization` header. See `_oauth` for the flow and docs/authorization.md for
driving it from your own loop.

The other names are its parts, public because an application may need them on
their own: the metadata documents it discovers (`ProtectedResourceMetadata`,
RFC 9728; `AuthorizationServerMetadata`, RFC 8414 or OpenID discovery), the `WWW-Authenticate`
parser that starts the flow from a 401 or 403 (`parse_www_authenticate`),
what it ends with and what to store between runs (`TokenSet`,
`ClientRegistration`, `OAuthRecord`), and one exception class per way the flow
can fail, all under `OAuthError`, so an application can tell "the user said
no" (`AuthorizationDenied`) from "the server is misconfigured" and react to
each. The server side (checking tokens on requests) is `mcp_core.auth`.
"""

# Every refusal is exported, not only `OAuthError`: handling differs per class
# (an `IssuerMismatch` is an alarm, a `TokenRequestRejected` a reason to log in
# again), so each must be nameable. The step helpers (`pkce_challenge`,
# `client_assertion`, the URL rules) stay private: used alone, they would skip
# the checks the flow makes around them.
# The flow and its inputs and outputs: what a client needs to run the MCP authorization spec
# (2025-06-18 on) from its own loop, and nothing that would let it skip a step.
from ._oauth import (
    AuthorizationRequest,
    Authorized,
    OAuthClientConfig,
    OAuthClientFlow,
    OAuthHTTPRequest,
    OAuthState,
    PreRegisteredClient,
    Step,
    is_authorization_challenge,
)

# Public for servers too: `bearer_challenge` writes the `WWW-Authenticate` a resource server
# owes a 401 or 403 (RFC 6750 3, with `resource_metadata` from RFC 9728 5.1), and a client
# must parse exactly what a server writes.
from ._oauth_challenge import Challenge, bearer_challenge, parse_www_authenticate
from ._oauth_errors import (
    AuthorizationDenied,
    AuthorizationServerMismatch,
    InsecureURL,
    InvalidAuthorizationResponse,
    InvalidMetadata,
    InvalidTokenResponse,
    IssuerMismatch,
    IssuerParameterMismatch,
    MetadataNotFound,
    OAuthError,
    PKCENotSupported,
    ReauthorizationLimitExceeded,
    RegistrationRejected,
    RegistrationUnavailable,
    ResourceMismatch,
    StateMismatch,
    StepUpLimitExceeded,
    TokenRequestRejected,
    UnsupportedClientAuthentication,
    UnsupportedGrantType,
    UnsupportedTokenType,
)

# `AUTHORIZATION_RULES` are the per-revision rules the flow applies (which discovery paths,
# whether PKCE support must be advertised), public so an application can see which
# revision's rules a server is judged by.
from ._oauth_metadata import (
    AUTHORIZATION_RULES,
    AuthorizationRules,
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
)

# What a client stores between runs: a registration and tokens outlive the process, and the
# record is plain data so the application chooses where (and how securely) it is kept.
from ._oauth_tokens import ClientRegistration, JWTSigner, OAuthRecord, TokenSet

__all__ = [
    "AUTHORIZATION_RULES",
    "AuthorizationDenied",
    "AuthorizationRequest",
    "AuthorizationRules",
    "AuthorizationServerMetadata",
    "AuthorizationServerMismatch",
    "Authorized",
    "Challenge",
    "ClientRegistration",
    "InsecureURL",
    "InvalidAuthorizationResponse",
    "InvalidMetadata",
    "InvalidTokenResponse",
    "IssuerMismatch",
    "IssuerParameterMismatch",
    "JWTSigner",
    "MetadataNotFound",
    "OAuthClientConfig",
    "OAuthClientFlow",
    "OAuthError",
    "OAuthHTTPRequest",
    "OAuthRecord",
    "OAuthState",
    "PKCENotSupported",
    "PreRegisteredClient",
    "ProtectedResourceMetadata",
    "ReauthorizationLimitExceeded",
    "RegistrationRejected",
    "RegistrationUnavailable",
    "ResourceMismatch",
    "StateMismatch",
    "Step",
    "StepUpLimitExceeded",
    "TokenRequestRejected",
    "TokenSet",
    "UnsupportedClientAuthentication",
    "UnsupportedGrantType",
    "UnsupportedTokenType",
    "bearer_challenge",
    "is_authorization_challenge",
    "parse_www_authenticate",
]
