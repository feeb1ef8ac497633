"""The resource server side of MCP authorization, sans-IO: what needs no I/O.

An MCP server reached over HTTP is an OAuth 2.1 resource server. This module holds
its rules as plain functions and one small stateful object, `ResourceGuard`:

* the `Authorization: Bearer` header (RFC 6750 section 2.1; the header only: MCP
  forbids tokens in the query string, and the form-body method does not apply to
  JSON bodies);
* the answers that carry a `WWW-Authenticate` challenge (RFC 6750 section 3,
  RFC 9728 section 5.1): 401 without an error code when no token came, 401
  `invalid_token` for a token that fails any check, 403 `insufficient_scope`
  naming the scopes the operation needs, 400 `invalid_request` for a malformed
  request; each points at the Protected Resource Metadata document;
* that document (RFC 9728), served at `/.well-known/oauth-protected-resource`
  with the resource's path appended (and at the bare location, for clients of
  revisions that looked only there);
* the checks every token must pass whoever verified it: an issuer among the
  resource's authorization servers (exact strings, RFC 8414 section 3.3), an
  audience that is this resource (RFC 8707, compared in canonical form, so a
  token minted for another resource is refused), not expired, not before its
  time, and a subject to bind sessions to;
* a bounded cache of tokens already verified, so the I/O a verifier may need (a
  JWKS fetch, an introspection POST) happens once per token, not per request.

Verifying a token's signature or asking the authorization server about it is I/O
and lives in the adapters: the guard answers `NeedsVerification(token)` and takes
the verifier's `AccessToken` (or `InvalidToken`) back in `judge`. The guard never
keeps the token itself (the cache is keyed by its SHA-256), and nothing it returns
to the application carries it: a token is for this resource only and is never to
be passed on to another service (the MCP spec forbids token passthrough).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ._oauth_challenge import scope_string
from ._oauth_urls import PRM_SUFFIX, canonical_resource, parse_url, query_pairs, url_problem

__all__ = [
    "PRM_WELL_KNOWN",
    "AccessToken",
    "AuthResponse",
    "Granted",
    "InvalidToken",
    "NeedsVerification",
    "ProtectedResource",
    "ResourceGuard",
    "VerificationResult",
    "VerifierUnavailable",
    "bearer_token",
    "www_authenticate",
]

PRM_WELL_KNOWN: Final = f"/.well-known/{PRM_SUFFIX}"  # RFC 9728 3

# RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
# RFC 6750 section 3: error_description and scope values exclude `"` and `\`.
_DESCRIPTION_UNSAFE: Final = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")
# The bodies are JSON like RFC 6749 5.2's error responses, for people reading
# them; clients act on the status and the challenge header only.
_JSON: Final = "application/json"


# ============================================================ what verifiers return


@dataclass(frozen=True, slots=True)
class AccessToken:
    """What a verifier learned about a valid token: its claims, never the token.

    `scopes` is what the token grants; `audiences` its `aud` (RFC 7519 allows a
    string or a list); times are seconds since the epoch. `claims` keeps the whole
    JWT payload or introspection answer for the application (a tenant claim, say).
    """

    issuer: str | None
    subject: str | None
    client_id: str | None = None
    audiences: tuple[str, ...] = ()
    scopes: frozenset[str] = frozenset()
    expires_at: float | None = None
    not_before: float | None = None
    issued_at: float | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def principal(self) -> str:
        """Who the token speaks for, as sessions and sealed `requestState` are bound:
        the subject qualified by its issuer (two authorization servers may both have
        a user "42"); a client acting for itself (client_credentials without `sub`)
        by its client id."""
        who = self.subject if self.subject else f"client:{self.client_id}"
        # "#" cannot occur in an issuer (RFC 8414 2: no fragment), so no issuer
        # and subject pair can spell another pair's principal.
        return f"{self.issuer or ''}#{who}"


@dataclass(frozen=True, slots=True)
class InvalidToken:
    """The verifier refused the token (bad signature, revoked, inactive ...):
    answered 401 `invalid_token` with `description`, which tells the client
    (RFC 6750 3.1) to get a new token rather than retry this one."""

    description: str


@dataclass(frozen=True, slots=True)
class VerifierUnavailable:
    """The verifier could not decide (the JWKS or introspection endpoint is down):
    answered 503, not 401, so the client does not throw away a good token."""

    description: str


VerificationResult = AccessToken | InvalidToken | VerifierUnavailable


# ================================================================== the guard's answers


@dataclass(frozen=True, slots=True)
class AuthResponse:
    """An HTTP answer the guard decided: send it as is. `reason` is for logs (the
    guard puts no token in it; a verifier's description is passed through)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    reason: str


@dataclass(frozen=True, slots=True)
class Granted:
    """The request may go on, on behalf of `token.principal`."""

    token: AccessToken


@dataclass(frozen=True, slots=True)
class NeedsVerification:
    """The token is new to the guard: verify it, then `judge(token, result)`.

    It comes for the first request with a token, and again once the cached
    verdict lapses (`cache_seconds`, or the token's expiry); the token is kept
    out of the `repr` so that logging the event leaks nothing.
    """

    token: str = field(repr=False)


# ==================================================================== configuration


def _strings(value: Iterable[str], name: str) -> tuple[str, ...]:
    """A configured list of strings. A bare string is refused: iterated, it
    would become one "issuer" or "scope" per character."""
    if isinstance(value, str):
        raise TypeError(f"{name} must be a sequence of strings, not a string")
    items = tuple(value)
    if not all(isinstance(v, str) and v for v in items):
        raise TypeError(f"{name} must hold non-empty strings")
    return items


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """This MCP server as an OAuth protected resource.

    `resource` is its canonical URL (`https://mcp.example.com/mcp`): the audience
    every token must name and the `resource` of its metadata document. It is given,
    not guessed from `Host`: a token's audience checked against what the client
    claims the server is called would check nothing. `authorization_servers` are
    the issuers whose tokens are accepted (at least one). `required_scopes` are
    needed for any request; `scopes_supported` is what the metadata advertises (it
    defaults to the required ones). `audiences` lists other `aud` values accepted
    (an authorization server that names the resource by another identifier).

    Limits: `max_token_bytes` (longer tokens are refused without verification),
    `cache_size` tokens remembered after verification, each for at most
    `cache_seconds` (and never past its expiry; a revoked token is noticed after at
    most this long), `clock_leeway` seconds of clock difference with the issuer.
    """

    resource: str
    authorization_servers: Sequence[str]
    required_scopes: Sequence[str] = ()
    scopes_supported: Sequence[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    audiences: Sequence[str] = ()
    max_token_bytes: int = 8192
    cache_size: int = 1024
    cache_seconds: float = 300.0
    clock_leeway: float = 60.0

    def __post_init__(self) -> None:
        # Plain http is allowed for the resource and the issuers: here they are
        # only identifiers compared as strings, and the client, which fetches
        # them, holds them to https itself (`_oauth_urls.url_problem`).
        problem = url_problem(self.resource, require_secure=False)
        if problem is not None:
            raise ValueError(f"resource {problem}")
        if "#" in self.resource:
            raise ValueError("resource must not have a fragment (RFC 8707 section 2)")
        servers = _strings(self.authorization_servers, "authorization_servers")
        if not servers:
            raise ValueError("name at least one authorization server")
        for issuer in servers:
            if url_problem(issuer, require_secure=False) is not None:
                raise ValueError(f"authorization server {issuer!r} is not an http(s) URL")
        # Normalized to tuples once, so the frozen config cannot change under
        # the guard when the caller later mutates the list it passed.
        object.__setattr__(self, "authorization_servers", servers)
        required = _strings(self.required_scopes, "required_scopes")
        object.__setattr__(self, "required_scopes", required)
        supported = required if self.scopes_supported is None else self.scopes_supported
        object.__setattr__(self, "scopes_supported", _strings(supported, "scopes_supported"))
        object.__setattr__(self, "audiences", _strings(self.audiences, "audiences"))
        for name in ("max_token_bytes", "cache_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int")
        for name in ("cache_seconds", "clock_leeway"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a non-negative number")

    @property
    def metadata_path(self) -> str:
        """Where the metadata document is served: the well-known prefix inserted
        before the resource's path (RFC 9728 section 3.1)."""
        return PRM_WELL_KNOWN + parse_url(self.resource).path.rstrip("/")

    @property
    def metadata_url(self) -> str:
        """The `resource_metadata` URL every challenge carries."""
        return parse_url(self.resource).origin + self.metadata_path

    def metadata(self) -> dict[str, Any]:
        """The Protected Resource Metadata document (RFC 9728 section 2)."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            # The only method `bearer_token` accepts: a client that read this
            # will not try the query or the body.
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            doc["resource_documentation"] = self.resource_documentation
        return doc


# ========================================================================== headers


def bearer_token(headers: Iterable[tuple[str, str]], target: str = "") -> str | AuthResponse | None:
    """The request's bearer token; None when it sent none; an `AuthResponse` (400
    `invalid_request`) when its credentials are malformed.

    `headers` are (lower-case name, value) pairs. Another scheme (`Basic ...`) is
    no bearer token at all: the answer is the plain 401 challenge. A repeated
    `Authorization` header, a bearer value that is not a b64token, or an
    `access_token` in the query (RFC 6750 section 2.3, forbidden by MCP) is refused.
    """
    values = [value for name, value in headers if name == "authorization"]
    # Refused even when a header also came: a token in a URL ends up in logs
    # and Referer headers (RFC 6750 5.3), so the client must be told, not
    # quietly served. The "?" test spares every request without a query.
    if "?" in target and any(name == "access_token" for name, _ in query_pairs(target)):
        return _bad_request("access tokens are not accepted in the query string")
    if not values:
        return None
    # Two headers could carry two tokens; verifying one while a proxy or log
    # records the other is an ambiguity nobody should have to reason about.
    if len(values) > 1:
        return _bad_request("more than one Authorization header")
    value = values[0].strip(" \t")
    scheme, _, credentials = value.partition(" ")
    # Scheme names are case-insensitive (RFC 9110 11.1). Another scheme is no
    # bearer credential, so it gets the challenge that says how to get one.
    if scheme.lower() != "bearer":
        return None
    credentials = credentials.strip(" ")
    if not _B64TOKEN.fullmatch(credentials):
        return _bad_request("the bearer token is missing or malformed")
    return credentials


def _quote(value: str) -> str:
    """A quoted-string for a challenge parameter. Excluded characters are
    replaced, not backslash-escaped: RFC 6750 3 forbids `"` and `\\` in these
    values outright, and a CR or LF could end the header."""
    return '"' + _DESCRIPTION_UNSAFE.sub("?", value) + '"'


def www_authenticate(
    metadata_url: str,
    *,
    error: str | None = None,
    description: str | None = None,
    scopes: Iterable[str] = (),
) -> str:
    """A `Bearer` challenge (RFC 6750 section 3) pointing at the metadata document
    (RFC 9728 section 5.1), with the scope the request needs. Values are quoted and
    stripped of characters the grammar excludes, so no input can split the header."""
    parts = [f"resource_metadata={_quote(metadata_url)}"]
    scope = scope_string(scopes)
    if scope is not None:
        parts.append(f"scope={_quote(scope)}")
    if error is not None:
        parts.append(f"error={_quote(error)}")
    if description is not None:
        parts.append(f"error_description={_quote(description)}")
    return "Bearer " + ", ".join(parts)


def _json_response(
    status: int, error: str | None, description: str, headers: Iterable[tuple[str, str]] = ()
) -> AuthResponse:
    """An answer with a JSON body; `error` None for the first challenge, which
    RFC 6750 3.1 says should carry no error code (no token came to be wrong)."""
    doc = (
        {"error": error, "error_description": description}
        if error
        else {"error_description": description}
    )
    body = json.dumps(doc).encode("utf-8")
    return AuthResponse(
        status,
        (("content-type", _JSON), *headers),
        body,
        f"{error or 'unauthorized'}: {description}",
    )


def _bad_request(description: str) -> AuthResponse:
    # No resource_metadata here: the request is refused for its form, and a client
    # that retries with a well-formed header gets the real challenge.
    return _json_response(
        400,
        "invalid_request",
        description,
        (
            (
                "www-authenticate",
                f'Bearer error="invalid_request", error_description={_quote(description)}',
            ),
        ),
    )


# ============================================================================ rules


def _aud_matches(audiences: Iterable[str], accepted: frozenset[str]) -> bool:
    """Whether any `aud` names this resource (RFC 7519 4.1.3: one match suffices).

    URL audiences are compared canonically, since authorization servers echo
    the client's `resource` with whatever case or trailing slash it sent; other
    identifiers (`api://mcp`) have no canonical form and must match exactly.
    """
    for aud in audiences:
        if url_problem(aud, require_secure=False) is None:
            if canonical_resource(aud) in accepted:
                return True
        elif aud in accepted:
            return True
    return False


def _finite(value: float | None) -> bool:
    """A usable time: a NaN from a verifier would make every comparison false."""
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


class ResourceGuard:
    """Authentication for one protected resource: the challenge, the metadata, the
    token checks and the cache of verified tokens. Shared by every request of an
    HTTP endpoint (`HTTPServerEndpoint(auth=...)`); no I/O, no clock.

    `scopes_for(method, params)` names the extra scopes one JSON-RPC request needs
    (`MCPServer` answers it from `@mcp.tool(scopes=[...])`); a token without them
    gets 403 `insufficient_scope` naming them.
    """

    def __init__(
        self,
        resource: ProtectedResource,
        *,
        scopes_for: Callable[[str, Any], Iterable[str]] | None = None,
    ) -> None:
        self.resource = resource
        self.scopes_for = scopes_for
        self._metadata_url = resource.metadata_url
        self._metadata_paths = frozenset({resource.metadata_path, PRM_WELL_KNOWN})
        # Serialized once: it is fetched on every client's first 401, and the
        # config it comes from is frozen.
        self._document = json.dumps(resource.metadata()).encode("utf-8")
        accepted = [resource.resource, *resource.audiences]
        self._accepted = frozenset(
            canonical_resource(a) if url_problem(a, require_secure=False) is None else a
            for a in accepted
        )
        self._issuers = frozenset(resource.authorization_servers)
        # sha256(token) -> (its claims, verified until): tokens are never stored.
        self._cache: OrderedDict[bytes, tuple[AccessToken, float]] = OrderedDict()

    # ------------------------------------------------------------- metadata

    def is_metadata_path(self, path: str) -> bool:
        """Whether `path` (no query) is where the metadata document is served."""
        return path in self._metadata_paths

    def metadata_response(self, method: str) -> AuthResponse:
        """The answer to a request for the metadata document: public, cacheable, and
        readable cross-origin (browser-based clients fetch it from another origin)."""
        # RFC 9110 15.5.6: a 405 lists the methods that would work.
        if method not in ("GET", "HEAD"):
            return AuthResponse(
                405, (("allow", "GET, HEAD"),), b"", "the metadata document is read-only"
            )
        return AuthResponse(
            200,
            (
                ("content-type", _JSON),
                # Clients discover again on every 401; an hour's caching spares
                # the server that, and the document changes only on redeploy.
                ("cache-control", "max-age=3600"),
                # "*" is safe: the document holds nothing private and the
                # request carries no credentials.
                ("access-control-allow-origin", "*"),
            ),
            b"" if method == "HEAD" else self._document,
            "protected resource metadata",
        )

    # ------------------------------------------------------------ challenges

    def unauthorized(
        self, description: str = "this resource needs an OAuth access token"
    ) -> AuthResponse:
        """401 without an error code (no token came): where to get one, and the
        scopes to ask for (2025-11-25: SHOULD name them in the first challenge)."""
        header = www_authenticate(self._metadata_url, scopes=self.resource.required_scopes)
        return _json_response(401, None, description, (("www-authenticate", header),))

    def invalid_token(self, description: str) -> AuthResponse:
        """401 `invalid_token`: expired, revoked, malformed, for another resource.

        The scopes are named here too, so the client's new authorization asks
        for what this resource needs rather than what the bad token had.
        """
        header = www_authenticate(
            self._metadata_url,
            error="invalid_token",
            description=description,
            scopes=self.resource.required_scopes,
        )
        return _json_response(401, "invalid_token", description, (("www-authenticate", header),))

    def insufficient_scope(self, token: AccessToken, needed: Iterable[str]) -> AuthResponse:
        """403 `insufficient_scope`. The challenge's scope is what the token has plus
        what is missing, so a client that replaces its scope with the challenged one
        (rather than adding to it, as 2026-07-28 clients do) loses nothing."""
        needed = tuple(needed)
        missing = [s for s in needed if s not in token.scopes]
        scopes = [*sorted(token.scopes), *missing]
        description = "the token lacks the scope " + " ".join(missing)
        header = www_authenticate(
            self._metadata_url,
            error="insufficient_scope",
            description=description,
            scopes=scopes,
        )
        return _json_response(
            403, "insufficient_scope", description, (("www-authenticate", header),)
        )

    # --------------------------------------------------------------- tokens

    def authenticate(
        self, headers: Iterable[tuple[str, str]], *, target: str = "", wall_time: float
    ) -> Granted | NeedsVerification | AuthResponse:
        """Judge a request's credentials: granted from the cache, a token to verify,
        or the answer to send (no token, malformed, too long)."""
        found = bearer_token(headers, target)
        if found is None:
            return self.unauthorized()
        if isinstance(found, AuthResponse):
            return found
        # Before hashing or verifying: a megabyte of "token" costs one length
        # check, and never reaches a verifier that may do I/O for it.
        if len(found) > self.resource.max_token_bytes:
            return self.invalid_token(
                f"the token is longer than {self.resource.max_token_bytes} bytes"
            )
        key = hashlib.sha256(found.encode("ascii")).digest()
        hit = self._cache.get(key)
        if hit is not None:
            token, until = hit
            if wall_time < until:
                self._cache.move_to_end(key)  # least recently used goes first
                # Scopes are checked again on a hit: `_granted` is not cached.
                return self._granted(token)
            del self._cache[key]
        return NeedsVerification(found)

    def judge(
        self, token: str, result: VerificationResult, *, wall_time: float
    ) -> Granted | AuthResponse:
        """The verifier's answer about `token`, checked against this resource's
        rules; a token that passes is remembered (bounded, see `ProtectedResource`)."""
        if isinstance(result, InvalidToken):
            return self.invalid_token(result.description)
        if isinstance(result, VerifierUnavailable):
            # 503, not 401: a 401 would make the client discard a good token
            # and send the user through the browser for an outage.
            return _json_response(
                503,
                "temporarily_unavailable",
                f"the token cannot be verified now: {result.description}",
                (("retry-after", "5"),),
            )
        problem = self.check(result, wall_time=wall_time)
        if problem is not None:
            return self.invalid_token(problem)
        # The cache bounds how long a revoked token is still accepted: at most
        # `cache_seconds`, and never past its own expiry (with the same leeway
        # `check` allows, so a cached token is not judged more strictly).
        until = wall_time + self.resource.cache_seconds
        if _finite(result.expires_at):
            assert result.expires_at is not None
            until = min(until, result.expires_at + self.resource.clock_leeway)
        cache = self._cache
        cache[hashlib.sha256(token.encode("ascii")).digest()] = (result, until)
        while len(cache) > self.resource.cache_size:
            cache.popitem(last=False)
        return self._granted(result)

    def check(self, token: AccessToken, *, wall_time: float) -> str | None:
        """Why this resource refuses a verified token, or None: the rules that hold
        whichever verifier spoke (its signature or introspection is its business)."""
        leeway = self.resource.clock_leeway
        # Issuer first: a valid token from a server this resource does not
        # trust says nothing, whatever else it claims (exact strings, as the
        # client's RFC 8414 3.3 check).
        if token.issuer not in self._issuers:
            return f"the token's issuer {token.issuer!r} is not an authorization server of this resource"
        # MCP "Token Audience Binding and Validation" (RFC 8707): a token the
        # client got for another service must not work here, or any service it
        # talks to could replay its tokens to this one. An empty `aud` fails.
        if not _aud_matches(token.audiences, self._accepted):
            return f"the token is not for this resource ({self.resource.resource})"
        if token.expires_at is not None:
            if not _finite(token.expires_at):
                return "the token's expiry is not a number"
            if token.expires_at + leeway <= wall_time:
                return "the token has expired"
        if token.not_before is not None:
            if not _finite(token.not_before):
                return "the token's not-before time is not a number"
            if token.not_before - leeway > wall_time:
                return "the token is not valid yet"
        # Sessions and sealed requestState are bound to `principal`; a token
        # naming nobody would let every such token share one principal.
        if not token.subject and not token.client_id:
            return "the token names no subject"
        return None

    def required_scopes(self, message: Any) -> tuple[str, ...]:
        """The per-request scopes a JSON-RPC message (or a 2025-03-26 batch) needs,
        from `scopes_for`; the resource's `required_scopes` are checked before."""
        if self.scopes_for is None:
            return ()
        items = message if type(message) is list else [message]
        needed: dict[str, None] = {}  # ordered and unique, for the challenge
        # Requests only: a notification or a response to the server's own
        # request invokes no operation a scope could guard.
        for item in items:
            if type(item) is dict and isinstance(item.get("method"), str) and "id" in item:
                needed.update(dict.fromkeys(self.scopes_for(item["method"], item.get("params"))))
        return tuple(needed)

    def check_scopes(self, token: AccessToken, message: Any) -> AuthResponse | None:
        """403 `insufficient_scope` when `message` needs scopes the token lacks."""
        needed = self.required_scopes(message)
        if all(s in token.scopes for s in needed):
            return None
        return self.insufficient_scope(token, needed)

    def _granted(self, token: AccessToken) -> Granted | AuthResponse:
        """The resource-wide scopes, checked for every request; per-request
        scopes come later (`check_scopes`), once the body has been read."""
        required = self.resource.required_scopes

        if all(s in token.scopes for s in required):
            return Granted(token)
        return self.insufficient_scope(token, required)
