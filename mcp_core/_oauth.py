"""The MCP authorization client flow as a sans-IO state machine.

`OAuthClientFlow` turns "the MCP server answered 401 (or 403
`insufficient_scope`)" into the HTTP requests and the one browser visit that
get a token, and hands back the `Authorization` header to retry with. It
performs nothing itself: every call returns the next *step* for the embedder:

* `OAuthHTTPRequest`: perform it (no redirects followed, at most
  `max_response_bytes` read) and give the answer to `receive_response`;
* `AuthorizationRequest`: send the user's browser to `url`, and give the URL the
  browser was redirected to (your `redirect_uri` with `code`, `state`, `iss`) to
  `receive_redirect`;
* `Authorized`: done; use `header`, persist `record`.

Driving it::

    flow = OAuthClientFlow("https://mcp.example.com/mcp", config, revision=version)
    step = flow.handle_challenge(response.status, response.headers, wall_time=wall_clock())
    while not isinstance(step, Authorized):
        if isinstance(step, OAuthHTTPRequest):
            status, body = perform(step)
            step = flow.receive_response(status, body, wall_time=wall_clock())
        else:
            step = flow.receive_redirect(open_browser_and_wait(step.url), wall_time=wall_clock())
    store.save(step.record.to_dict())
    retry(original_request, headers=[step.header])

The flow, state by state (`_TRANSITIONS` is the whole graph, as data):

1. DISCOVERING_RESOURCE: Protected Resource Metadata (RFC 9728) from the
   challenge's `resource_metadata`, else the path-based well-known location,
   else the root one. Its `resource` must cover the server's URL.
2. DISCOVERING_AUTHORIZATION_SERVER: the chosen server's metadata, at the
   RFC 8414 / OpenID Discovery locations the revision lists, in its order; the
   document's `issuer` must be the one looked up. PKCE S256 must be offered.
3. REGISTERING (only if needed): a client id from, in the spec's order,
   pre-registered credentials, a Client ID Metadata Document URL, or Dynamic
   Client Registration (RFC 7591).
4. AWAITING_REDIRECT: the authorization request (PKCE S256, `state`,
   `resource`, the selected scope); the redirect's `state` and `iss` (RFC 9207)
   are checked before the code goes anywhere.
5. REQUESTING_TOKEN: the code (or, for machine-to-machine clients, the
   `client_credentials` grant) for tokens at the token endpoint, with the
   client's authentication method (`none`, `client_secret_basic`,
   `client_secret_post`, `private_key_jwt`).
6. AUTHORIZED: tokens held. A 401 starts again from 1, since the resource
   may have moved to another authorization server; if it has not and a
   refresh token is held, the tokens are refreshed (REFRESHING) and, only if
   that is refused, authorized again. A 403 `insufficient_scope` starts again
   from 1 with the step-up scopes. Both are bounded per operation
   (`max_reauthorizations`, `max_step_ups`) until `operation_succeeded`.

Time is an argument (`wall_time`, wall-clock seconds since the epoch, the
embedder's `wall_clock()`: expiry times are persisted and must mean the same after a
restart). Randomness (PKCE verifier, `state`, assertion ids) comes from
`token_bytes`, `secrets.token_bytes` unless a test passes its own.

A refusal raises a precise `OAuthError` (see `_oauth_errors`) and leaves the
flow FAILED; `flow.record` still holds the last good record, to start a new
flow from. Calling a method in the wrong state is `LocalProtocolError`.
"""

from __future__ import annotations

import hmac
import json
import math
import secrets
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from ._errors import LocalProtocolError
from ._oauth_challenge import (
    HeadersLike,
    bearer_challenge,
    normalize_headers,
    scope_list,
    scope_string,
)
from ._oauth_errors import (
    AuthorizationDenied,
    AuthorizationServerMismatch,
    InsecureURL,
    InvalidAuthorizationResponse,
    InvalidMetadata,
    IssuerParameterMismatch,
    MetadataNotFound,
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
)
from ._oauth_metadata import (
    AUTHORIZATION_RULES,
    AuthorizationRules,
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    json_object,
    parse_authorization_server_metadata,
    parse_protected_resource_metadata,
)
from ._oauth_tokens import (
    CLIENT_ASSERTION_TYPE,
    ClientRegistration,
    JWTSigner,
    OAuthRecord,
    TokenSet,
    b64url,
    basic_credentials,
    client_assertion,
    oauth_error_fields,
    parse_token_response,
    pkce_challenge,
)
from ._oauth_urls import (
    append_query,
    authorization_server_metadata_urls,
    form_encode,
    is_loopback_host,
    parse_url,
    protected_resource_metadata_urls,
    query_pairs,
    resource_covers,
    url_problem,
)
from ._versions import LATEST

__all__ = [
    "Authorized",
    "AuthorizationRequest",
    "OAuthClientConfig",
    "OAuthClientFlow",
    "OAuthHTTPRequest",
    "OAuthState",
    "PreRegisteredClient",
    "Step",
    "is_authorization_challenge",
]

GrantType = Literal["authorization_code", "client_credentials"]
Purpose = Literal[
    "protected_resource_metadata", "authorization_server_metadata", "client_registration", "token"
]

_JSON: Final = "application/json"
_FORM: Final = "application/x-www-form-urlencoded"
# Retry counters kept (oldest dropped first): an embedder keying operations by
# request id would otherwise grow the table for as long as the session lives.
_MAX_OPERATIONS: Final = 1024
# The authorization response parameters (RFC 6749 4.1.2 and 4.1.2.1, RFC 9207
# 2): each may appear once (RFC 6749 3.1: "MUST NOT be included more than
# once"), so a redirect that repeats one is refused rather than read as the
# first or the last copy, which an attacker appending `&code=...` could pick.
_REDIRECT_PARAMS: Final = ("state", "code", "iss", "error", "error_description", "error_uri")


# ==================================================================== states


class OAuthState:
    """Flow states (plain strings, so they print well)."""

    IDLE: Final = "idle"  # no tokens, nothing in progress
    DISCOVERING_RESOURCE: Final = "discovering_resource"
    DISCOVERING_AUTHORIZATION_SERVER: Final = "discovering_authorization_server"
    REGISTERING: Final = "registering"
    AWAITING_REDIRECT: Final = "awaiting_redirect"
    REQUESTING_TOKEN: Final = "requesting_token"
    REFRESHING: Final = "refreshing"
    AUTHORIZED: Final = "authorized"  # tokens held, nothing in progress
    FAILED: Final = "failed"  # a refusal was raised; start a new flow from `record`


_S = OAuthState

# Which public input each state accepts. Anything else is the embedder's bug
# (`LocalProtocolError`), not the server's: a response given when no request is
# outstanding, or a redirect given after the flow has moved on, would otherwise
# be matched against the wrong attempt.
_ACCEPTS: Final[Mapping[str, frozenset[str]]] = {
    "handle_challenge": frozenset({_S.IDLE, _S.AUTHORIZED}),
    "authorize": frozenset({_S.IDLE, _S.AUTHORIZED}),
    "refresh": frozenset({_S.AUTHORIZED}),
    "receive_response": frozenset(
        {
            _S.DISCOVERING_RESOURCE,
            _S.DISCOVERING_AUTHORIZATION_SERVER,
            _S.REGISTERING,
            _S.REQUESTING_TOKEN,
            _S.REFRESHING,
        }
    ),
    "receive_redirect": frozenset({_S.AWAITING_REDIRECT}),
}

# Every transition the flow makes: (state, outcome) -> next state. Any state
# may also go to FAILED when a refusal is raised.
_TRANSITIONS: Final[Mapping[tuple[str, str], str]] = {
    (_S.IDLE, "discover"): _S.DISCOVERING_RESOURCE,
    (_S.AUTHORIZED, "discover"): _S.DISCOVERING_RESOURCE,
    (_S.AUTHORIZED, "refresh"): _S.REFRESHING,
    (_S.DISCOVERING_RESOURCE, "try_next"): _S.DISCOVERING_RESOURCE,
    (_S.DISCOVERING_RESOURCE, "resource_known"): _S.DISCOVERING_AUTHORIZATION_SERVER,
    (_S.DISCOVERING_AUTHORIZATION_SERVER, "try_next"): _S.DISCOVERING_AUTHORIZATION_SERVER,
    (_S.DISCOVERING_AUTHORIZATION_SERVER, "register"): _S.REGISTERING,
    (_S.DISCOVERING_AUTHORIZATION_SERVER, "authorize"): _S.AWAITING_REDIRECT,
    (_S.DISCOVERING_AUTHORIZATION_SERVER, "request_token"): _S.REQUESTING_TOKEN,
    (_S.DISCOVERING_AUTHORIZATION_SERVER, "refresh"): _S.REFRESHING,
    (_S.REGISTERING, "authorize"): _S.AWAITING_REDIRECT,
    (_S.REGISTERING, "request_token"): _S.REQUESTING_TOKEN,
    (_S.AWAITING_REDIRECT, "request_token"): _S.REQUESTING_TOKEN,
    (_S.REQUESTING_TOKEN, "tokens"): _S.AUTHORIZED,
    (_S.REFRESHING, "tokens"): _S.AUTHORIZED,
    (_S.REFRESHING, "discover"): _S.DISCOVERING_RESOURCE,
    (_S.REFRESHING, "register"): _S.REGISTERING,
    (_S.REFRESHING, "authorize"): _S.AWAITING_REDIRECT,
    (_S.REFRESHING, "request_token"): _S.REQUESTING_TOKEN,
}


# ===================================================================== steps


@dataclass(frozen=True, slots=True)
class OAuthHTTPRequest:
    """One HTTP request to perform: `method` on the absolute `url`, with
    `headers` (including `host`, ready for h11) and `body`.

    Perform it as is: do not follow redirects (give a 3xx back like any other
    status), read at most `max_response_bytes` of the body. `purpose` says
    which step of the flow it is. `headers` and `body` may carry a client secret
    or a refresh token, so they are left out of the `repr`.
    """

    method: str
    url: str
    purpose: Purpose
    headers: tuple[tuple[str, str], ...] = field(repr=False)
    body: bytes = field(default=b"", repr=False)
    # A metadata URL can come from a challenge, so from anyone: the cap keeps a
    # hostile endpoint from streaming the client out of memory.
    max_response_bytes: int = 256 * 1024

    @property
    def host(self) -> str:
        """The `Host` header value (host[:port])."""
        return parse_url(self.url).netloc

    @property
    def target(self) -> str:
        """The request target for the request line (path and query)."""
        return parse_url(self.url).target

    @property
    def secure(self) -> bool:
        """Whether to connect with TLS (https)."""
        return parse_url(self.url).scheme == "https"

    @property
    def port(self) -> int:
        """The TCP port: the URL's, else the scheme's default (RFC 9110 4.2)."""
        parsed = parse_url(self.url)
        return parsed.port or (443 if parsed.scheme == "https" else 80)


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """Send the user's browser to `url`; then give the redirect to `redirect_uri`
    (the whole URL, with its query) to `receive_redirect`.

    `state`, `code_challenge` and `code_verifier` are what the flow generated
    (the verifier never leaves the client before the token request; it is kept
    out of the `repr`); `issuer` is the recorded issuer the redirect's `iss` is
    held against; `scope` and `resource` what is being asked for.
    """

    url: str
    state: str
    redirect_uri: str
    code_challenge: str
    code_verifier: str = field(repr=False)
    issuer: str | None = None
    scope: str | None = None
    resource: str | None = None


@dataclass(frozen=True, slots=True)
class Authorized:
    """The flow has tokens. Retry the MCP request with `header`; persist `record`."""

    tokens: TokenSet
    record: OAuthRecord

    @property
    def header(self) -> tuple[str, str]:
        """The `authorization` header pair to send to the MCP server."""
        return ("authorization", self.tokens.authorization)


Step = OAuthHTTPRequest | AuthorizationRequest | Authorized


# ==================================================================== config


@dataclass(frozen=True, slots=True)
class PreRegisteredClient:
    """Static client credentials (the spec's pre-registration).

    `issuer` binds them to the authorization server they were registered with:
    if the resource names another one, the flow refuses
    (`AuthorizationServerMismatch`) rather than send them there. None means
    "the server the resource names the first time"; that binding is kept in
    the record, so a later change of server is refused just the same.
    `token_endpoint_auth_method` None picks one the server supports.
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    issuer: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.client_id, str) or not self.client_id:
            raise ValueError("client_id must be a non-empty string")


@dataclass(frozen=True, slots=True)
class OAuthClientConfig:
    """How this client presents itself to authorization servers.

    * `redirect_uri`: where the browser comes back (authorization code grant
      only); https, or http on a loopback host.
    * `grant_type`: "authorization_code" (a user authorizes) or
      "client_credentials" (the client acts on its own behalf).
    * `client`: pre-registered credentials, tried first.
    * `client_metadata_url`: the https URL of this client's Client ID Metadata
      Document (see `client_metadata_document()`), tried second where the server
      supports it; Dynamic Client Registration comes last.
    * `signer`: signs `private_key_jwt` assertions (see `JWTSigner`).
    * `client_name`, `client_uri`, `logo_uri`, `software_id`,
      `software_version`, `application_type` (None: "native" for a loopback
      redirect, else "web"), `registration_extras` (e.g. `jwks_uri`): client
      metadata for registration and for the metadata document.
    * `token_endpoint_auth_method`: what to ask for at registration (None:
      the best the server supports).
    * `request_offline_access`: add `offline_access` to the scope where the
      authorization server lists it (2026-07-28 allows this to get a refresh
      token), only when a scope is being requested at all.
    * `max_step_ups`: re-authorizations on `403 insufficient_scope` per operation,
      and `max_reauthorizations` on 401 while holding tokens, each counted
      until `OAuthClientFlow.operation_succeeded`.
    * `refresh_margin`: seconds before expiry at which a token counts as stale.
    * `max_response_bytes`: the largest response body the flow reads.
    """

    redirect_uri: str | None = None
    grant_type: GrantType = "authorization_code"
    client: PreRegisteredClient | None = None
    client_metadata_url: str | None = None
    signer: JWTSigner | None = None
    client_name: str = "mcp-sansio"
    client_uri: str | None = None
    logo_uri: str | None = None
    software_id: str | None = None
    software_version: str | None = None
    application_type: Literal["native", "web"] | None = None
    registration_extras: Mapping[str, Any] = field(default_factory=dict)
    token_endpoint_auth_method: str | None = None
    request_offline_access: bool = True
    max_step_ups: int = 2
    max_reauthorizations: int = 2
    refresh_margin: float = 60.0
    max_response_bytes: int = 256 * 1024

    def __post_init__(self) -> None:
        """Every check here is one that would otherwise fail after the user has already gone
        through the browser, or only against one particular server: a configuration error
        must show at start-up, where the fix is obvious.
        """
        # Refused at construction, not mid-flow: a bad redirect_uri would
        # otherwise surface only after the user has authorized.
        if self.grant_type not in ("authorization_code", "client_credentials"):
            raise ValueError(f"unknown grant_type {self.grant_type!r}")
        if self.grant_type == "authorization_code":
            if self.redirect_uri is None:
                raise ValueError("the authorization code grant needs a redirect_uri")
            # MCP "Communication Security": redirect URIs are https or loopback
            # http (RFC 8252 7.3), so the code never crosses the network in clear.
            problem = url_problem(self.redirect_uri)
            if problem is not None:
                raise ValueError(f"redirect_uri {problem}")
        if self.client_metadata_url is not None:
            # The Client ID Metadata Document draft: the client id is an https
            # URL with a path, since the server fetches it and a bare origin
            # would name every client of that host.
            problem = url_problem(self.client_metadata_url)
            parsed = None if problem else parse_url(self.client_metadata_url)
            if parsed is None or parsed.scheme != "https" or parsed.path.strip("/") == "":
                raise ValueError("client_metadata_url must be an https URL with a path")
        for name in ("max_step_ups", "max_reauthorizations"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError(f"{name} must be an int >= 0")
        if not (isinstance(self.refresh_margin, (int, float)) and self.refresh_margin >= 0):
            raise ValueError("refresh_margin must be a number >= 0")
        if type(self.max_response_bytes) is not int or self.max_response_bytes < 1024:
            raise ValueError("max_response_bytes must be an int >= 1024")
        # Extras add metadata (`jwks_uri`, `contacts`); letting them replace the
        # redirect URIs or grant types would register a client the flow does
        # not behave as.
        clash = set(self.registration_extras) & set(self._metadata(None, None))
        if clash:
            raise ValueError(f"registration_extras may not override {sorted(clash)}")

    @property
    def resolved_application_type(self) -> str:
        """`application_type` for registration (OpenID Dynamic Client
        Registration 2): servers refuse a loopback redirect from a "web" client,
        and a non-loopback http one from a "native" client."""
        if self.application_type is not None:
            return self.application_type
        redirect = self.redirect_uri
        if redirect is not None and is_loopback_host(parse_url(redirect).host):
            return "native"  # desktop apps and CLIs: a loopback redirect
        return "web"

    def _metadata(self, auth_method: str | None, scope: str | None) -> dict[str, Any]:
        """RFC 7591 client metadata: for registration, and for the CIMD document."""
        meta: dict[str, Any] = {"client_name": self.client_name}
        # RFC 7591 2.1: grant_types and response_types must agree; refresh_token
        # is asked for so the user is not sent back to the browser at each expiry.
        if self.grant_type == "authorization_code":
            meta["redirect_uris"] = [self.redirect_uri]
            meta["grant_types"] = ["authorization_code", "refresh_token"]
            meta["response_types"] = ["code"]
        else:
            meta["grant_types"] = ["client_credentials"]
        meta["token_endpoint_auth_method"] = auth_method
        meta["application_type"] = self.resolved_application_type
        for name in ("client_uri", "logo_uri", "software_id", "software_version"):
            value = getattr(self, name)
            if value is not None:
                meta[name] = value
        if scope is not None:
            meta["scope"] = scope
        return meta

    def client_metadata_document(self) -> dict[str, Any]:
        """The JSON document to serve at `client_metadata_url` (its `client_id` is
        that URL, exactly, as the Client ID Metadata Document draft requires)."""
        if self.client_metadata_url is None:
            raise LocalProtocolError("no client_metadata_url configured")
        # A document is public, so it can carry no secret: the client is either
        # public ("none") or proves itself with a key whose public half is at
        # `jwks_uri` (from `registration_extras`).
        method = "private_key_jwt" if self.signer is not None else "none"
        return {
            "client_id": self.client_metadata_url,
            **self._metadata(method, None),
            **self.registration_extras,
        }


def is_authorization_challenge(status: int, headers: HeadersLike) -> bool:
    """Whether `handle_challenge` can act on this MCP server response: a 401, or
    a 403 whose Bearer challenge says `insufficient_scope`.

    Any other 403 (RFC 6750 3.1: the token is fine but this is forbidden) is
    not fixed by authorizing again; retrying it would only loop the user
    through the browser, so the embedder should report it instead.
    """
    if status == 401:
        return True
    if status == 403:
        challenge = bearer_challenge(headers)
        return challenge is not None and challenge.param("error") == "insufficient_scope"
    return False


# ===================================================================== flow


class _Attempt:
    """What one authorization attempt learns on its way (discarded after it).

    Kept apart from the record so that nothing half-learnt (a resource's new
    authorization server, a registration not yet used) is persisted: only a
    token response turns an attempt into a record.
    """

    __slots__ = (
        "as_attempts",
        "as_candidates",
        "challenge_scopes",
        "client",
        "expected_issuer",
        "hint",
        "legacy",
        "metadata",
        "pending",
        "prm",
        "prm_attempts",
        "prm_candidates",
        "refresh_first",
        "registration_method",
        "scope",
    )

    def __init__(
        self, hint: str | None, challenge_scopes: tuple[str, ...], refresh_first: bool = False
    ) -> None:
        """Each attempt starts from nothing but the challenge: what an earlier attempt learnt
        about the resource or its authorization server may be stale, and the point of a new
        401 is often that it changed.
        """
        self.hint = hint
        self.challenge_scopes = challenge_scopes
        self.refresh_first = refresh_first  # refresh if the issuer is still the same
        self.prm_candidates: tuple[str, ...] = ()
        self.prm_attempts: list[tuple[str, int]] = []
        self.prm: ProtectedResourceMetadata | None = None
        self.legacy = False
        self.expected_issuer = ""
        self.as_candidates: tuple[str, ...] = ()
        self.as_attempts: list[tuple[str, int]] = []
        self.metadata: AuthorizationServerMetadata | None = None
        self.client: ClientRegistration | None = None
        self.registration_method = "none"
        self.scope: str | None = None
        self.pending: AuthorizationRequest | None = None

    @property
    def resource(self) -> str | None:
        """The resource the tokens will be bound to (RFC 8707), once its metadata is known."""
        return None if self.prm is None else self.prm.resource


class OAuthClientFlow:
    """The authorization client flow for one MCP server (see the module docstring).

    `server_url` is the MCP endpoint; `revision` the protocol revision the
    client speaks to it (the one it proposed, if the 401 came before
    negotiation), which selects the discovery rules (`AUTHORIZATION_RULES`);
    `record` a stored `OAuthRecord` to resume from (tokens, refresh token,
    client registration).
    """

    def __init__(
        self,
        server_url: str,
        config: OAuthClientConfig,
        *,
        revision: str = LATEST,
        record: OAuthRecord | None = None,
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        """`token_bytes` is injectable so a test can make PKCE verifiers and `state` values
        deterministic; the default is `secrets.token_bytes`, a CSPRNG, as RFC 7636 (4.1)
        asks of the verifier.
        """
        # The MCP server itself may be plain http (a local development server);
        # every URL learnt from it is held to https later, in `_secure`.
        problem = url_problem(server_url, require_secure=False)
        if problem is not None:
            raise ValueError(f"server_url {problem}")
        if revision not in AUTHORIZATION_RULES:
            raise ValueError(f"unknown protocol revision {revision!r}")
        if (
            record is not None
            and record.resource is not None
            and not resource_covers(record.resource, server_url)
        ):
            # Its tokens are audience-bound (RFC 8707) to another resource:
            # sending them here would hand that resource's token to this server.
            raise ValueError(f"the record is for {record.resource}, not {server_url}")
        self.server_url = server_url
        self.config = config
        self.revision = revision
        self.rules: AuthorizationRules = AUTHORIZATION_RULES[revision]
        self._token_bytes = token_bytes
        self._record = record
        # A record with tokens resumes as AUTHORIZED, so that after a restart
        # `refresh()` and a 401's refresh-first path work without a new login.
        self._state: str = _S.AUTHORIZED if record and record.tokens else _S.IDLE
        self._attempt: _Attempt | None = None
        # (kind, operation) -> new authorizations so far; insertion-ordered, so
        # the oldest is dropped first (see `_MAX_OPERATIONS`).
        self._retries: dict[tuple[str, Hashable], int] = {}
        # Which requests get the MCP-Protocol-Version header (`_get`), and the
        # 2025-03-26 authorization base URL when the server publishes no PRM.
        self._server_origin = parse_url(server_url).origin

    # ----------------------------------------------------------------- public

    @property
    def state(self) -> str:
        """The current `OAuthState`: which input the flow waits for."""
        return self._state

    @property
    def record(self) -> OAuthRecord | None:
        """The latest good record (tokens and client), to persist or resume from."""
        return self._record

    @property
    def tokens(self) -> TokenSet | None:
        """The tokens held, expired or not (see `authorization_header`)."""
        return None if self._record is None else self._record.tokens

    def authorization_header(self, wall_time: float) -> tuple[str, str] | None:
        """The `authorization` header pair if an unexpired token is held.

        None means: send the request without one and let the server's 401 start
        the flow, or call `authorize` first; a token known to be expired is not
        sent, since it can only earn a round trip and a 401.
        """
        tokens = self.tokens
        if tokens is None or tokens.expired(wall_time):
            return None
        return ("authorization", tokens.authorization)

    def needs_refresh(self, wall_time: float) -> bool:
        """Whether the token is stale (within `refresh_margin` of expiry) and a
        refresh token is held, so `refresh()` is worth calling before a request."""
        tokens = self.tokens
        return (
            tokens is not None
            and tokens.refresh_token is not None
            and tokens.expired(wall_time, self.config.refresh_margin)
        )

    def handle_challenge(
        self, status: int, headers: HeadersLike, *, wall_time: float, operation: Hashable = None
    ) -> Step:
        """Act on the MCP server's 401 or 403 `insufficient_scope` response.

        Either way discovery starts again, honouring the challenge's
        `resource_metadata` and `scope`: the resource may now name another
        authorization server, whose credentials must not be mixed with the old
        ones. After a 401, tokens from the same authorization server are
        refreshed if a refresh token is held; otherwise, and after a 403, the
        user authorizes again (for a 403 with the step-up scopes).

        `operation` (e.g. the MCP method and tool name) keys the retry counts:
        more than `max_step_ups` 403s, or `max_reauthorizations` 401s while
        holding tokens, for one operation without `operation_succeeded` raise
        `StepUpLimitExceeded` / `ReauthorizationLimitExceeded`. Those change
        nothing: the tokens held stay usable for other operations.
        """
        self._check("handle_challenge", wall_time)
        # The counts are taken before any work, so a server that answers 401 to
        # every token cannot keep the user in the browser (or the client in a
        # registration loop) indefinitely.
        challenge = bearer_challenge(normalize_headers(headers))
        hint = challenge.param("resource_metadata") if challenge else None
        scopes = scope_list(challenge.param("scope")) if challenge else ()
        tokens = self.tokens
        if status == 403:
            if challenge is None or challenge.param("error") != "insufficient_scope":
                raise LocalProtocolError(
                    "a 403 without error=insufficient_scope is not an authorization challenge"
                )
            self._count("step_up", operation, self.config.max_step_ups, StepUpLimitExceeded)
            attempt = _Attempt(hint, scopes)
        elif status == 401:
            # A 401 with no token held is the first challenge, not a retry.
            if tokens is not None:
                self._count(
                    "unauthorized",
                    operation,
                    self.config.max_reauthorizations,
                    ReauthorizationLimitExceeded,
                )
            attempt = _Attempt(hint, scopes, refresh_first=bool(tokens and tokens.refresh_token))
        else:
            raise LocalProtocolError(f"a {status} response is not an authorization challenge")
        return self._guard(lambda: self._discover(attempt))

    def _count(
        self,
        kind: str,
        operation: Hashable,
        limit: int,
        error: type[ReauthorizationLimitExceeded],
    ) -> None:
        """One more retry of `kind` for `operation`, or `error` past `limit`."""
        key = (kind, operation)
        # Popped and put back, so the key moves to the end: the most recently
        # challenged operations are the ones kept.
        count = self._retries.pop(key, 0) + 1
        if count > limit:
            self._retries[key] = count - 1  # the refused attempt is not counted
            raise error(
                f"{kind} challenge for {operation!r} after {count - 1} new authorization(s)"
                f" (limit {limit}); giving up"
            )
        self._retries[key] = count
        while len(self._retries) > _MAX_OPERATIONS:
            del self._retries[next(iter(self._retries))]

    def authorize(self, *, wall_time: float) -> Step:
        """Get a usable token without waiting for a challenge: `Authorized` at once
        if the token held is fresh, a refresh if it is stale and refreshable,
        else discovery from the well-known locations (for `client_credentials`
        clients at start-up, or to log in before the first request)."""
        self._check("authorize", wall_time)
        tokens = self.tokens
        record = self._record
        if tokens is not None and record is not None:
            if not tokens.expired(wall_time, self.config.refresh_margin):
                return Authorized(tokens, record)
            if tokens.refresh_token is not None:
                return self._guard(lambda: self._refresh(wall_time, _Attempt(None, ())))
        return self._guard(lambda: self._discover(_Attempt(None, ())))

    def refresh(self, *, wall_time: float) -> Step:
        """Refresh the tokens held (after a restart, or before they expire).

        This goes straight to the stored token endpoint without discovery; if
        the refresh is refused, discovery and a new authorization follow.
        """
        self._check("refresh", wall_time)
        tokens = self.tokens
        if tokens is None or tokens.refresh_token is None:
            raise LocalProtocolError("no refresh token is held")
        return self._guard(lambda: self._refresh(wall_time, _Attempt(None, ())))

    def receive_response(self, status: int, body: bytes, *, wall_time: float) -> Step:
        """The answer to the last `OAuthHTTPRequest`: its status and body."""
        self._check("receive_response", wall_time)
        # Checked before `_guard`, like the state: the embedder's mistake raises
        # without failing the flow, rather than deep in a handler, as a refusal.
        if type(status) is not int or not 100 <= status <= 999:
            raise LocalProtocolError(f"{status!r} is not an HTTP status code")
        if not isinstance(body, (bytes, bytearray, memoryview)):
            raise LocalProtocolError("body must be bytes")
        handler = {
            _S.DISCOVERING_RESOURCE: self._on_resource_metadata,
            _S.DISCOVERING_AUTHORIZATION_SERVER: self._on_server_metadata,
            _S.REGISTERING: self._on_registration,
            _S.REQUESTING_TOKEN: self._on_token,
            _S.REFRESHING: self._on_refresh,
        }[self._state]
        data = bytes(body)
        return self._guard(lambda: handler(status, data, wall_time))

    def receive_redirect(self, url: str, *, wall_time: float) -> Step:
        """The URL the browser was redirected to (the redirect URI with its query).

        Give it whatever arrived at the redirect URI, unfiltered: the checks on
        its `state` and `iss` are what make it safe to use, and an error
        redirect is refused as `AuthorizationDenied` only after them.
        """
        self._check("receive_redirect", wall_time)
        return self._guard(lambda: self._on_redirect(url, wall_time))

    def operation_succeeded(self, operation: Hashable = None) -> None:
        """The MCP server accepted `operation` with the current token: forget its
        retries, so a later expiry or scope change for it starts a fresh count."""
        self._retries.pop(("step_up", operation), None)
        self._retries.pop(("unauthorized", operation), None)

    # -------------------------------------------------------------- machinery

    def _check(self, method: str, wall_time: float) -> None:
        """The state accepts `method`, and `wall_time` is usable: a NaN would
        make every expiry comparison false, so tokens would never expire."""
        if self._state not in _ACCEPTS[method]:
            raise LocalProtocolError(f"{method}() is not allowed in state {self._state}")
        if not (isinstance(wall_time, (int, float)) and math.isfinite(wall_time)):
            raise LocalProtocolError("wall_time must be a finite number (wall-clock seconds)")

    def _go(self, outcome: str) -> None:
        """Take a transition from `_TRANSITIONS`; a KeyError here is a bug in
        the flow (a transition missing from the graph), not a server's doing."""
        self._state = _TRANSITIONS[(self._state, outcome)]

    def _guard(self, action: Callable[[], Step]) -> Step:
        """Run one input's work; anything raised leaves the flow FAILED."""
        # BaseException, not Exception: a KeyboardInterrupt mid-step leaves the
        # attempt half-updated just the same, so it must not be resumed either.
        try:
            return action()
        except BaseException:
            self._state = _S.FAILED
            self._attempt = None
            raise

    def _attempt_now(self) -> _Attempt:
        """The attempt in progress; every state that accepts a response has one."""
        assert self._attempt is not None
        return self._attempt

    def _get(self, url: str, purpose: Purpose) -> OAuthHTTPRequest:
        """A metadata GET. No token goes with it: metadata is public, and a
        token sent to a URL named in a challenge would leak it to whoever wrote
        the challenge."""
        headers = [("host", parse_url(url).netloc), ("accept", _JSON)]
        if parse_url(url).origin == self._server_origin:
            # The MCP server's own endpoints get the revision (2025-03-26 asks
            # for it during metadata discovery; later servers may vary on it).
            headers.append(("mcp-protocol-version", self.revision))
        return OAuthHTTPRequest(
            "GET", url, purpose, tuple(headers), b"", self.config.max_response_bytes
        )

    def _post(
        self,
        url: str,
        purpose: Purpose,
        content_type: str,
        body: bytes,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> OAuthHTTPRequest:
        """A registration or token POST; `extra` is the Basic credentials header."""
        headers = (
            ("host", parse_url(url).netloc),
            ("accept", _JSON),
            ("content-type", content_type),
            ("content-length", str(len(body))),
            *extra,
        )
        return OAuthHTTPRequest("POST", url, purpose, headers, body, self.config.max_response_bytes)

    def _secure(self, url: str, what: str) -> str:
        """`url`, if it is https (or loopback http). Every URL the flow learns
        from a response is checked before it is contacted: issuers and
        resources are https URLs (RFC 8414 2, RFC 9728 2), and MCP
        "Communication Security" requires https for every authorization server
        endpoint, since secrets, codes and tokens go there."""

        problem = url_problem(url)
        if problem is not None:
            raise InsecureURL(f"{what} {url!r} {problem}")
        return url

    # -------------------------------------------------------------- discovery

    def _discover(self, attempt: _Attempt) -> Step:
        """Step 1: the Protected Resource Metadata locations to try, in order.

        The challenge's `resource_metadata` (RFC 9728 5.1) is used alone: the
        server said where its metadata is, so the well-known guesses are not
        tried after it (MCP "Protected Resource Metadata Discovery
        Requirements"). All are checked before the first is fetched, so an
        insecure hint fails at once rather than after a round trip.
        """
        if attempt.hint is not None:
            candidates: tuple[str, ...] = (attempt.hint,)
        else:
            candidates = protected_resource_metadata_urls(self.server_url)
        for url in candidates:
            self._secure(url, "protected resource metadata location")
        attempt.prm_candidates = candidates
        self._attempt = attempt
        self._go("discover")
        return self._get(candidates[0], "protected_resource_metadata")

    def _on_resource_metadata(self, status: int, body: bytes, wall_time: float) -> Step:
        """Step 1's answer: the next location, the legacy path, or the
        authorization server to look up. Every miss is kept with its status,
        so `MetadataNotFound` can say what was tried (a 404 everywhere is a
        deployment problem; a 401 on the metadata path is a misconfigured guard).
        """
        attempt = self._attempt_now()
        location = attempt.prm_candidates[len(attempt.prm_attempts)]
        doc = json_object(body, self.config.max_response_bytes) if 200 <= status < 300 else None
        if doc is None:
            # Not here (a 404, or a 200 that is not JSON: an SPA's catch-all page).
            attempt.prm_attempts.append((location, status))
            if len(attempt.prm_attempts) < len(attempt.prm_candidates):
                self._go("try_next")
                return self._get(
                    attempt.prm_candidates[len(attempt.prm_attempts)],
                    "protected_resource_metadata",
                )
            if self.rules.protected_resource_metadata_required:
                raise MetadataNotFound(
                    f"no protected resource metadata for {self.server_url}",
                    tuple(attempt.prm_attempts),
                )
            # 2025-03-26: the MCP server's origin is the authorization base URL.
            attempt.legacy = True
            return self._look_up_server(self._server_origin)
        prm = parse_protected_resource_metadata(doc, location)
        # RFC 9728 3.3: a document naming another resource may be an
        # attacker's, pointing the client at an authorization server of its
        # choosing to collect a token minted for the real resource.
        if not resource_covers(prm.resource, self.server_url):
            raise ResourceMismatch(
                f"protected resource metadata at {location} is for {prm.resource!r},"
                f" not {self.server_url!r}"
            )
        attempt.prm = prm
        # The first listed is the resource's preference; the choice is the
        # client's, which is why a known pre-registration wins.
        issuer = prm.authorization_servers[0]
        pre = self.config.client
        if pre is not None and pre.issuer in prm.authorization_servers:
            issuer = pre.issuer  # RFC 9728 7.6: the client picks; prefer the one we know
        self._secure(issuer, "authorization server")
        # The well-known URL is built by inserting a path into the issuer; a
        # query would end up in the middle of it (and RFC 8414 2 forbids one).
        if parse_url(issuer).query:
            raise InvalidMetadata(f"authorization server {issuer!r} has a query (RFC 8414 2)")
        return self._look_up_server(issuer)

    def _look_up_server(self, issuer: str) -> Step:
        """Step 2: the authorization server metadata locations for `issuer`, in
        the order the revision prescribes (2025-11-25 "Authorization Server
        Metadata Discovery": RFC 8414 path insertion, then OpenID Connect
        Discovery path insertion, then path appending)."""
        attempt = self._attempt_now()
        # Recorded before the fetch: the document must name this issuer (RFC
        # 8414 3.3), whichever of the locations it comes from.
        attempt.expected_issuer = issuer
        attempt.as_candidates = authorization_server_metadata_urls(
            issuer, self.rules.authorization_server_metadata
        )
        self._go("resource_known")
        return self._get(attempt.as_candidates[0], "authorization_server_metadata")

    def _on_server_metadata(self, status: int, body: bytes, wall_time: float) -> Step:
        """Step 2's answer: the next location, the legacy default endpoints, or
        the metadata. The first location that answers with a JSON object
        decides: a document there with the wrong `issuer` is refused, not
        skipped for the next location, since it means impersonation or a
        misconfiguration, and neither is fixed by looking elsewhere."""
        attempt = self._attempt_now()
        location = attempt.as_candidates[len(attempt.as_attempts)]
        doc = json_object(body, self.config.max_response_bytes) if 200 <= status < 300 else None
        if doc is None:
            attempt.as_attempts.append((location, status))
            if len(attempt.as_attempts) < len(attempt.as_candidates):
                self._go("try_next")
                return self._get(
                    attempt.as_candidates[len(attempt.as_attempts)],
                    "authorization_server_metadata",
                )
            # 2025-03-26 "Fallbacks for Servers without Metadata Discovery": the
            # default endpoints at the authorization base URL. Only for the
            # legacy path; a server that published PRM must publish metadata.
            if attempt.legacy and self.rules.default_endpoints_fallback:
                base = self._server_origin
                return self._use_server(
                    AuthorizationServerMetadata(
                        issuer=None,
                        authorization_endpoint=f"{base}/authorize",
                        token_endpoint=f"{base}/token",
                        registration_endpoint=f"{base}/register",
                    ),
                    wall_time,
                )
            raise MetadataNotFound(
                f"no authorization server metadata for {attempt.expected_issuer}",
                tuple(attempt.as_attempts),
            )
        metadata = parse_authorization_server_metadata(doc, location, attempt.expected_issuer)
        return self._use_server(metadata, wall_time)

    def _use_server(self, metadata: AuthorizationServerMetadata, wall_time: float) -> Step:
        """With the server's metadata: refresh, or check it can do our grant,
        pick the scope and a client id, and go on (registering if need be).

        The capability checks come before registration, so a server that cannot
        serve this client is refused without leaving a registration behind.
        """
        attempt = self._attempt_now()
        config = self.config
        record = self._record
        if (
            attempt.refresh_first
            and record is not None
            and record.tokens is not None
            and record.tokens.refresh_token is not None
            and record.issuer == metadata.issuer
            and record.resource == attempt.resource
        ):
            # Still the same authorization server and resource: a refresh may be
            # all it takes. A refresh token is only good at the server that
            # issued it, and for the resource it was issued for (RFC 8707 2.2).
            attempt.metadata = metadata
            return self._refresh(wall_time, attempt, metadata.token_endpoint)
        attempt.refresh_first = False
        if config.grant_type == "authorization_code":
            if metadata.authorization_endpoint is None:
                raise InvalidMetadata(
                    f"authorization server {metadata.issuer} has no authorization_endpoint"
                )
            _require(metadata.response_types_supported, "code", "response type")
            _require(metadata.grant_types_supported, "authorization_code", "grant type")
            # MCP "Authorization Code Protection" (RFC 7636; 2025-11-25: the
            # client must refuse when PKCE support is not advertised): without
            # PKCE an intercepted code can be redeemed by whoever took it. The
            # synthesised legacy metadata (no location) has no list to check.
            methods = metadata.code_challenge_methods_supported
            if methods is None:
                if self.rules.pkce_must_be_advertised and metadata.location is not None:
                    raise PKCENotSupported(
                        f"authorization server {metadata.issuer} does not advertise PKCE"
                        " (code_challenge_methods_supported is absent)"
                    )
            elif "S256" not in methods:  # "plain" would put the verifier in the URL (RFC 7636 7.2)
                raise PKCENotSupported(
                    f"authorization server {metadata.issuer} does not offer PKCE S256"
                    f" (only {list(methods)})"
                )
        else:
            _require(metadata.grant_types_supported, "client_credentials", "grant type")
        attempt.metadata = metadata
        attempt.scope = self._select_scope(attempt)
        client = self._known_client(metadata, wall_time)
        if client is not None:
            attempt.client = client
            return self._proceed(wall_time)
        # Step 3: Dynamic Client Registration (RFC 7591 3), the last resort.
        if metadata.registration_endpoint is None:
            raise RegistrationUnavailable(
                f"no way to register with {metadata.issuer}: no pre-registered client,"
                " no Client ID Metadata Document support, no registration_endpoint"
            )
        method = self._registration_auth_method(metadata)
        attempt.registration_method = method
        body = json.dumps(
            {**config._metadata(method, attempt.scope), **config.registration_extras},
            separators=(",", ":"),
        ).encode("utf-8")
        self._go("register")
        return self._post(metadata.registration_endpoint, "client_registration", _JSON, body)

    def _select_scope(self, attempt: _Attempt) -> str | None:
        """The spec's scope selection: the challenge's `scope`, else the resource's
        `scopes_supported`, else none; in 2026-07-28 united with what was asked
        for before; plus `offline_access` where the server lists it."""
        # Why this order (2025-11-25 "Scope Selection Strategy"): the challenge
        # names what this request needs; `scopes_supported` is a guess at what
        # the resource can use; asking for nothing lets the server apply its
        # default. `offline_access` only with a scope, since adding it to an
        # empty request would replace the server's default with just it.
        assert attempt.metadata is not None
        scopes: tuple[str, ...] = attempt.challenge_scopes
        if not scopes and attempt.prm is not None and attempt.prm.scopes_supported:
            scopes = scope_list(" ".join(attempt.prm.scopes_supported))
        record = self._record
        if self.rules.accumulate_scopes and record is not None and record.requested_scope:
            scopes = (*scope_list(record.requested_scope), *scopes)
        if (
            scopes
            and self.config.request_offline_access
            and self.config.grant_type == "authorization_code"
            and "offline_access" in (attempt.metadata.scopes_supported or ())
        ):
            scopes = (*scopes, "offline_access")
        return scope_string(scopes)

    # ----------------------------------------------------------- registration

    def _known_client(
        self, metadata: AuthorizationServerMetadata, wall_time: float
    ) -> ClientRegistration | None:
        """The client id to use without registering, in the spec's order:
        pre-registered, then a stored dynamic registration with this very
        issuer, then a Client ID Metadata Document. None: register."""
        config = self.config
        issuer = metadata.issuer
        pre = config.client
        stored = self._record.client if self._record is not None else None
        if pre is not None:
            bound = pre.issuer
            if bound is None and stored is not None and stored.kind == "pre-registered":
                # Configured for "any server": bound to the first one it was used with.
                bound = stored.issuer if stored.client_id == pre.client_id else None
            # The secret was issued by `bound`; sending it to another server
            # would disclose it to that server (a mix-up, RFC 9700 4.4).
            if bound is not None and issuer is not None and bound != issuer:
                raise AuthorizationServerMismatch(
                    f"the pre-registered client is for {bound}, but {self.server_url}"
                    f" is protected by {issuer}"
                )
            # Basic before post: RFC 6749 2.3.1 makes Basic the one servers must
            # support and says to put secrets in the body only when it cannot.
            method = pre.token_endpoint_auth_method or self._pick_method(
                metadata,
                [
                    *(["client_secret_basic", "client_secret_post"] if pre.client_secret else []),
                    *(["private_key_jwt"] if config.signer else []),
                    *(["none"] if not pre.client_secret and not config.signer else []),
                ],
            )
            # Recorded with the issuer it was first used with, so an unbound
            # pre-registration becomes bound from here on (see `PreRegisteredClient`).
            return ClientRegistration(
                pre.client_id, method, "pre-registered", bound or issuer, pre.client_secret
            )
        if (
            stored is not None
            and stored.kind == "dynamic"
            and stored.issuer is not None
            and stored.issuer == issuer  # never another server's credentials (SEP-2352)
            and stored.usable(wall_time)  # its secret has not expired (RFC 7591 3.2.1)
        ):
            return stored
        if (
            config.client_metadata_url is not None
            and self.rules.client_id_metadata_documents
            and metadata.client_id_metadata_document_supported
        ):
            # A public document cannot carry a secret: a key, or none at all (a
            # public client, which client_credentials cannot be).
            methods = (["private_key_jwt"] if config.signer else []) + (
                ["none"] if config.grant_type == "authorization_code" else []
            )
            try:
                method = self._pick_method(metadata, methods)
            except UnsupportedClientAuthentication:
                return None  # this server cannot take our document's method: register
            return ClientRegistration(
                config.client_metadata_url, method, "client-id-metadata-document"
            )
        return None

    def _pick_method(self, metadata: AuthorizationServerMetadata, preferred: list[str]) -> str:
        """The first of `preferred` the server supports (its list absent: the
        first, since RFC 8414's default says nothing about what we can do)."""
        supported = metadata.token_endpoint_auth_methods_supported
        algorithms = metadata.token_endpoint_auth_signing_alg_values_supported
        signer = self.config.signer
        for method in preferred:
            if supported is not None and method not in supported:
                continue
            if (
                method == "private_key_jwt"
                and signer is not None
                and algorithms is not None
                and signer.algorithm not in algorithms
            ):
                continue  # the server would not accept our assertions
            return method
        raise UnsupportedClientAuthentication(
            f"none of {preferred} is among the token endpoint auth methods"
            f" {list(supported or ())} of {metadata.issuer}"
            + (f" (assertion algorithms {list(algorithms)})" if algorithms is not None else "")
        )

    def _registration_auth_method(self, metadata: AuthorizationServerMetadata) -> str:
        """The token endpoint auth method to register with: a key first (no
        shared secret to steal), then none for a user-facing client, then a
        secret; the configured method, if any, is sent as is."""
        config = self.config
        if config.token_endpoint_auth_method is not None:
            return config.token_endpoint_auth_method
        preferred = ["private_key_jwt"] if config.signer else []
        if config.grant_type == "authorization_code":
            preferred.append("none")  # a public client has no secret to leak
        preferred += ["client_secret_basic", "client_secret_post"]
        return self._pick_method(metadata, preferred)

    def _on_registration(self, status: int, body: bytes, wall_time: float) -> Step:
        """Dynamic Client Registration (RFC 7591) is the last resort of the spec's order, after
        pre-registration and Client ID Metadata Documents, because it leaves a client behind
        on the server per installation. Its answer is held to RFC 7591 3.2.1 (a `client_id`,
        and a secret if a secret-based method was chosen), since a registration that cannot
        authenticate would only fail later, at the token endpoint.
        """
        attempt = self._attempt_now()
        assert attempt.metadata is not None
        doc = json_object(body, self.config.max_response_bytes)
        # RFC 7591 3.2.1: success is 201 Created; 200 is accepted because
        # deployed servers send it. An error body is RFC 7591 3.2.2's.
        if status not in (200, 201):
            error, description = oauth_error_fields(doc)
            raise RegistrationRejected(
                f"client registration answered {status}"
                + (f": {error}" if error else "")
                + (f" ({description})" if description else ""),
                status=status,
                error=error,
                error_description=description,
            )
        client_id = doc.get("client_id") if doc is not None else None
        if doc is None or not isinstance(client_id, str) or not client_id:
            raise RegistrationRejected(
                "client registration response has no client_id",
                status=status,
                error=None,
                error_description=None,
            )
        secret = doc.get("client_secret")
        secret = secret if isinstance(secret, str) and secret else None
        method = doc.get("token_endpoint_auth_method")
        if not isinstance(method, str):
            method = attempt.registration_method  # RFC 7591 3.2.1: what was registered
        # The server may change the method it was asked for (RFC 7591 3.2.1);
        # a secret-based one with no secret could never authenticate.
        if method.startswith("client_secret") and secret is None:
            raise RegistrationRejected(
                f"client registration chose {method} but issued no client_secret",
                status=status,
                error=None,
                error_description=None,
            )
        # RFC 7591 3.2.1: 0 means the secret does not expire.
        expires = doc.get("client_secret_expires_at")
        expires = float(expires) if isinstance(expires, (int, float)) and expires > 0 else None
        attempt.client = ClientRegistration(
            client_id, method, "dynamic", attempt.metadata.issuer, secret, expires
        )
        return self._proceed(wall_time)

    # ------------------------------------------------------- authorize, tokens

    def _proceed(self, wall_time: float) -> Step:
        """With a client id: the authorization request, or the client
        credentials token request."""
        attempt = self._attempt_now()
        metadata, client = attempt.metadata, attempt.client
        assert metadata is not None and client is not None
        # RFC 6749 4.4.2; `resource` (RFC 8707 2) binds the token's audience to
        # this MCP server, as MCP "Resource Parameter Implementation" requires.
        if self.config.grant_type == "client_credentials":
            pairs = [("grant_type", "client_credentials")]
            if attempt.scope is not None:
                pairs.append(("scope", attempt.scope))
            if attempt.resource is not None:
                pairs.append(("resource", attempt.resource))
            self._go("request_token")
            return self._token_request(
                metadata.token_endpoint, metadata.issuer, client, pairs, wall_time
            )
        redirect_uri = self.config.redirect_uri
        endpoint = metadata.authorization_endpoint
        assert redirect_uri is not None and endpoint is not None
        # Fresh for every attempt: a verifier or state reused across attempts
        # would let a code or redirect from one be accepted in another.
        verifier = b64url(self._token_bytes(32))  # 43 characters, RFC 7636 4.1
        state = b64url(self._token_bytes(16))  # 128 bits: not guessable (RFC 6749 10.10)
        challenge = pkce_challenge(verifier)
        params = [
            ("response_type", "code"),
            ("client_id", client.client_id),
            ("redirect_uri", redirect_uri),
            ("state", state),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
        ]
        if attempt.scope is not None:
            params.append(("scope", attempt.scope))
        if attempt.resource is not None:
            params.append(("resource", attempt.resource))
        attempt.pending = AuthorizationRequest(
            url=append_query(endpoint, params),
            state=state,
            redirect_uri=redirect_uri,
            code_challenge=challenge,
            code_verifier=verifier,
            issuer=metadata.issuer,
            scope=attempt.scope,
            resource=attempt.resource,
        )
        self._go("authorize")
        return attempt.pending

    def _on_redirect(self, url: str, wall_time: float) -> Step:
        """Step 4's answer: check where the redirect came back to, then `state`,
        then `iss`, and only then read `error` or `code`. An attacker can send
        the user's browser to the redirect URI with parameters of its own, so
        nothing in the redirect is believed before it is tied to this attempt.
        """
        attempt = self._attempt_now()
        pending, metadata, client = attempt.pending, attempt.metadata, attempt.client
        assert pending is not None and metadata is not None and client is not None
        # The code flow answers in the query (RFC 6749 4.1.2); a fragment is
        # the browser's, never the server's, so it is dropped, not read.
        if isinstance(url, str):
            url = url.split("#", 1)[0]
        if not isinstance(url, str) or url_problem(url, require_secure=False) is not None:
            raise InvalidAuthorizationResponse("the redirect is not an http(s) URL")
        got, want = parse_url(url), parse_url(pending.redirect_uri)
        # An embedder listening on a loopback port may be handed any path; only
        # the redirect URI itself carries the authorization response.
        if (got.origin, got.path or "/") != (want.origin, want.path or "/"):
            raise InvalidAuthorizationResponse(
                f"the redirect went to {got.origin}{got.path}, not {pending.redirect_uri}"
            )
        pairs = query_pairs(url)
        params: dict[str, str] = {}
        for name, value in pairs:
            if name in _REDIRECT_PARAMS and name in params:
                raise InvalidAuthorizationResponse(f"the redirect repeats {name}")
            params.setdefault(name, value)
        # 1. Is this the response to *our* request? (CSRF, another attempt;
        # RFC 6749 10.12.) Compared in constant time, like any secret.
        state = params.get("state")
        if state is None or not hmac.compare_digest(
            state.encode("utf-8"), pending.state.encode("ascii")
        ):
            raise StateMismatch("the redirect's state is missing or not this flow's")
        # 2. Does it come from the issuer we sent the user to? (RFC 9207 2.4,
        # before anything in it, an error included, is acted on.)
        iss = params.get("iss")
        if pending.issuer is not None:
            if iss is not None and iss != pending.issuer:
                raise IssuerParameterMismatch(
                    f"the redirect's iss {iss!r} is not the recorded issuer {pending.issuer!r}"
                )
            # An `iss` is checked whenever present; its absence is refused only
            # where the server promised to send one (RFC 9207 2.4), since most
            # servers do not send it.
            if iss is None and metadata.authorization_response_iss_parameter_supported:
                raise IssuerParameterMismatch(
                    f"{pending.issuer} advertises the iss parameter but the redirect has none"
                )
        # 3. The result.
        error = params.get("error")
        if error is not None:
            description = params.get("error_description")
            raise AuthorizationDenied(
                f"authorization failed: {error}" + (f" ({description})" if description else ""),
                error=error,
                error_description=description,
                error_uri=params.get("error_uri"),
            )
        code = params.get("code")
        if not code:
            raise InvalidAuthorizationResponse("the redirect carries no authorization code")
        # RFC 6749 4.1.3: the redirect_uri again, since it was in the request;
        # RFC 7636 4.5: the verifier, which proves this client sent the request.
        token_pairs = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", pending.redirect_uri),
            ("code_verifier", pending.code_verifier),
        ]
        if attempt.resource is not None:
            token_pairs.append(("resource", attempt.resource))
        self._go("request_token")
        return self._token_request(
            metadata.token_endpoint, metadata.issuer, client, token_pairs, wall_time
        )

    def _token_request(
        self,
        endpoint: str,
        issuer: str | None,
        client: ClientRegistration,
        pairs: list[tuple[str, str]],
        wall_time: float,
    ) -> OAuthHTTPRequest:
        """POST `pairs` to the token endpoint, authenticated as `client` is registered.

        The method is the one registered, never a fallback: a server that
        registered `client_secret_basic` refuses a secret in the body, and
        trying methods in turn would send the secret more often than needed.
        """
        self._secure(endpoint, "token endpoint")
        method = client.token_endpoint_auth_method
        headers: tuple[tuple[str, str], ...] = ()
        secret = client.client_secret
        if method in ("client_secret_basic", "client_secret_post") and secret is None:
            raise UnsupportedClientAuthentication(f"{method} needs a client secret")
        if method == "client_secret_basic":
            assert secret is not None
            headers = (("authorization", basic_credentials(client.client_id, secret)),)
        elif method == "client_secret_post":
            assert secret is not None
            pairs = [*pairs, ("client_id", client.client_id), ("client_secret", secret)]
        elif method == "none":
            # RFC 6749 4.1.3: a public client names itself in the body.
            pairs = [*pairs, ("client_id", client.client_id)]
        elif method == "private_key_jwt":
            signer = self.config.signer
            if signer is None:
                raise LocalProtocolError("private_key_jwt needs a JWTSigner in the config")
            # RFC 7523 3: the audience is the authorization server; its issuer
            # identifier is the value every server accepts (the token endpoint
            # only when there is no issuer, under the legacy defaults). A fresh
            # `jti` each time lets the server refuse a replayed assertion.
            assertion = client_assertion(
                signer,
                client_id=client.client_id,
                audience=issuer or endpoint,
                wall_time=wall_time,
                jti=b64url(self._token_bytes(16)),
            )
            pairs = [
                *pairs,
                ("client_id", client.client_id),
                ("client_assertion_type", CLIENT_ASSERTION_TYPE),
                ("client_assertion", assertion),
            ]
        else:
            raise UnsupportedClientAuthentication(
                f"token endpoint auth method {method!r} is not supported by this client"
            )
        body = form_encode(pairs).encode("ascii")
        return self._post(endpoint, "token", _FORM, body, headers)

    def _on_token(self, status: int, body: bytes, wall_time: float) -> Step:
        """Step 5's answer: the tokens, made into the record to persist. The
        record keeps the issuer and resource the tokens were got for, so a later
        challenge can tell whether a refresh is still possible."""
        attempt = self._attempt_now()
        metadata, client = attempt.metadata, attempt.client
        assert metadata is not None and client is not None
        tokens = parse_token_response(
            status,
            body,
            wall_time=wall_time,
            max_bytes=self.config.max_response_bytes,
            requested_scope=attempt.scope,
        )
        record = OAuthRecord(
            token_endpoint=metadata.token_endpoint,
            client=client,
            tokens=tokens,
            issuer=metadata.issuer,
            resource=attempt.resource,
            requested_scope=attempt.scope,
        )
        return self._authorized(record)

    def _authorized(self, record: OAuthRecord) -> Authorized:
        """The record becomes the flow's; the retry counts are kept until the
        embedder says the MCP server accepted the token (`operation_succeeded`)."""
        assert record.tokens is not None
        self._record = record
        self._attempt = None
        self._go("tokens")
        return Authorized(record.tokens, record)

    # ----------------------------------------------------------------- refresh

    def _refresh(self, wall_time: float, attempt: _Attempt, endpoint: str | None = None) -> Step:
        """The refresh token request (RFC 6749 section 6), to `endpoint` (the
        stored token endpoint unless discovery just found the current one).
        `attempt` says what to do if it is refused."""
        record = self._record
        assert record is not None and record.tokens is not None
        refresh_token = record.tokens.refresh_token
        assert refresh_token is not None
        pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh_token)]
        # RFC 8707 2.2: the refreshed token is bound to the same resource; the
        # scope is left out, so the server grants what it granted before
        # (RFC 6749 6).
        if record.resource is not None:
            pairs.append(("resource", record.resource))
        self._attempt = attempt
        self._go("refresh")
        endpoint = endpoint or record.token_endpoint
        return self._token_request(endpoint, record.issuer, record.client, pairs, wall_time)

    def _on_refresh(self, status: int, body: bytes, wall_time: float) -> Step:
        """The refresh's answer: new tokens (a refresh token not reissued is kept,
        RFC 6749 6), or, if the grant was refused, a new authorization."""
        record = self._record
        attempt = self._attempt_now()
        assert record is not None and record.tokens is not None
        endpoint = attempt.metadata.token_endpoint if attempt.metadata else record.token_endpoint
        try:
            tokens = parse_token_response(
                status,
                body,
                wall_time=wall_time,
                max_bytes=self.config.max_response_bytes,
                requested_scope=record.tokens.scope,
                previous=record.tokens,
            )
        except TokenRequestRejected as exc:
            # RFC 6749 5.2: a refused grant is a 400 (invalid_grant) or a 401
            # (invalid_client) with an OAuth error; an outage must not cost the
            # user the refresh token, so anything else is raised as is.
            if exc.error is None or exc.status not in (400, 401):
                raise  # a 5xx or a non-OAuth answer: not a verdict on the grant
            # The refresh token (or the client itself) is no longer good: forget
            # what failed, then authorize from scratch.
            if exc.error == "invalid_client":
                self._record = None  # the client id goes too: register again
            else:
                self._record = replace(record, tokens=None)
            if attempt.metadata is None:
                return self._discover(attempt)  # a refresh() without discovery
            attempt.refresh_first = False
            return self._use_server(attempt.metadata, wall_time)
        return self._authorized(replace(record, token_endpoint=endpoint, tokens=tokens))


def _require(offered: tuple[str, ...] | None, needed: str, what: str) -> None:
    """`needed` must be in the server's list, when it publishes one.

    An absent list is not a refusal: RFC 8414 2's defaults (for grant types,
    authorization_code and implicit) are what a server without a list means.
    """

    if offered is not None and needed not in offered:
        raise UnsupportedGrantType(f"the authorization server does not offer {what} {needed!r}")
