"""The errors of the OAuth client flow: one class per refusal the spec requires.

Misuse of the flow (calling a method in the wrong state, a bad configuration)
is `LocalProtocolError` or `ValueError`, as everywhere in the engine. Everything
below is about what a *party* sent (the MCP server acting as a resource server,
the authorization server, or the browser redirect): each is a
`RemoteProtocolError`, so one `except RemoteProtocolError` catches them all, and
each class is precise enough to act on (`except IssuerMismatch:` is a security
alarm, `except TokenRequestRejected:` may just mean "log in again").

`reason` is a stable machine-readable slug for logs and metrics; the message is
for humans. Nothing here carries a token, a code, a secret or a PKCE verifier,
so logging an exception never leaks a credential.
"""

from __future__ import annotations

from ._errors import RemoteProtocolError

__all__ = [
    "AuthorizationDenied",
    "AuthorizationServerMismatch",
    "InsecureURL",
    "InvalidAuthorizationResponse",
    "InvalidMetadata",
    "InvalidTokenResponse",
    "IssuerMismatch",
    "IssuerParameterMismatch",
    "MetadataNotFound",
    "OAuthError",
    "PKCENotSupported",
    "ReauthorizationLimitExceeded",
    "RegistrationRejected",
    "RegistrationUnavailable",
    "ResourceMismatch",
    "StateMismatch",
    "StepUpLimitExceeded",
    "TokenRequestRejected",
    "UnsupportedClientAuthentication",
    "UnsupportedGrantType",
    "UnsupportedTokenType",
]


class OAuthError(RemoteProtocolError):
    """Base of every refusal of the OAuth client flow (see the module docstring)."""

    reason = "oauth_error"

    def __init__(self, message: str) -> None:
        super().__init__(message, http_status=401)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class InsecureURL(OAuthError):
    """A metadata document, endpoint or redirect target is not https (and not on a
    loopback host), or carries userinfo or a fragment (OAuth 2.1 section 1.5:
    every authorization server endpoint MUST be served over HTTPS)."""

    reason = "insecure_url"


class MetadataNotFound(OAuthError):
    """No discovery location served the document. `attempts` lists every
    (url, status) tried, in order, so the discovery order can be checked."""

    reason = "metadata_not_found"

    def __init__(self, message: str, attempts: tuple[tuple[str, int], ...]) -> None:
        super().__init__(message)
        self.attempts = attempts


class InvalidMetadata(OAuthError):
    """A metadata document was served but is not valid: not a JSON object, too
    large, a required member missing or of the wrong type."""

    reason = "invalid_metadata"


class ResourceMismatch(OAuthError):
    """The Protected Resource Metadata names a `resource` that does not cover the
    MCP server we are talking to (RFC 9728 section 3.3): the document may belong
    to another server, and its authorization servers must not be trusted."""

    reason = "resource_mismatch"


class IssuerMismatch(OAuthError):
    """The authorization server metadata's `issuer` is not identical to the
    issuer the well-known URL was built from (RFC 8414 section 3.3, OpenID
    Discovery section 4.3): the document must not be used."""

    reason = "issuer_mismatch"


class PKCENotSupported(OAuthError):
    """The authorization server does not advertise PKCE `S256` in
    `code_challenge_methods_supported`; the spec says the client MUST refuse."""

    reason = "pkce_not_supported"


class UnsupportedGrantType(OAuthError):
    """The authorization server's `grant_types_supported` (or
    `response_types_supported`) rules out the grant this client is configured for."""

    reason = "unsupported_grant_type"


class UnsupportedClientAuthentication(OAuthError):
    """No token endpoint authentication method is both supported by the
    authorization server and possible with the credentials this client has."""

    reason = "unsupported_client_authentication"


class RegistrationUnavailable(OAuthError):
    """No way to obtain a client id: no pre-registered client for this issuer,
    no Client ID Metadata Document support, no registration endpoint. The spec's
    last resort is to ask the user for client details; configure them and retry."""

    reason = "registration_unavailable"


class AuthorizationServerMismatch(OAuthError):
    """Pre-registered credentials are bound to one issuer but the resource now
    points at another. The spec says to surface an error rather than send one
    authorization server's credentials to another."""

    reason = "authorization_server_mismatch"


class RegistrationRejected(OAuthError):
    """Dynamic Client Registration (RFC 7591) failed; `error` and
    `error_description` are the server's (RFC 7591 section 3.2.2), if it sent them."""

    reason = "registration_rejected"

    def __init__(
        self, message: str, *, status: int, error: str | None, error_description: str | None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.error_description = error_description


class StateMismatch(OAuthError):
    """The redirect's `state` is missing or is not the one this flow generated:
    the response may be forged (CSRF) or belong to another attempt, and is discarded."""

    reason = "state_mismatch"


class IssuerParameterMismatch(OAuthError):
    """The redirect's `iss` (RFC 9207) differs from the recorded issuer, or is
    absent although the server advertised `authorization_response_iss_parameter_supported`.
    A mix-up attack looks like this; the code is never sent anywhere, and an
    `error` in the same response is not acted on."""

    reason = "issuer_parameter_mismatch"


class InvalidAuthorizationResponse(OAuthError):
    """The redirect is not a usable authorization response: no `code`, a
    parameter repeated, or not addressed to our redirect URI."""

    reason = "invalid_authorization_response"


class AuthorizationDenied(OAuthError):
    """The authorization server answered the authorization request with an error
    (RFC 6749 section 4.1.2.1), e.g. `access_denied` when the user declined."""

    reason = "authorization_denied"

    def __init__(
        self, message: str, *, error: str, error_description: str | None, error_uri: str | None
    ) -> None:
        super().__init__(message)
        self.error = error
        self.error_description = error_description
        self.error_uri = error_uri


class TokenRequestRejected(OAuthError):
    """The token endpoint refused the request (RFC 6749 section 5.2): `error` is
    its code (`invalid_grant`, `invalid_client` ...) or None when the body was not
    an OAuth error; `status` the HTTP status."""

    reason = "token_request_rejected"

    def __init__(
        self, message: str, *, status: int, error: str | None, error_description: str | None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.error_description = error_description


class InvalidTokenResponse(OAuthError):
    """A 200 from the token endpoint that is not a valid access token response
    (RFC 6749 section 5.1): no `access_token`, a token unsafe to put in a header,
    a negative `expires_in` ..."""

    reason = "invalid_token_response"


class UnsupportedTokenType(InvalidTokenResponse):
    """The token endpoint issued a token type other than `Bearer` (e.g. `DPoP`),
    which this client cannot present."""

    reason = "unsupported_token_type"


class ReauthorizationLimitExceeded(OAuthError):
    """The MCP server keeps answering 401 to one operation although the flow
    keeps getting new tokens for it (more than `max_reauthorizations` times
    without `operation_succeeded`): its tokens are refused for a reason no new
    token fixes, and asking the user again would loop forever."""

    reason = "reauthorization_limit_exceeded"


class StepUpLimitExceeded(ReauthorizationLimitExceeded):
    """The server answered `403 insufficient_scope` for the same operation more
    times than `max_step_ups` allows: treated as a permanent authorization
    failure, as the spec asks, instead of sending the user to consent forever.
    The tokens already held are untouched."""

    reason = "step_up_limit_exceeded"
