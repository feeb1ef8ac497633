"""The two discovery documents and the per-revision discovery rules.

`ProtectedResourceMetadata` (RFC 9728) and `AuthorizationServerMetadata`
(RFC 8414 / OpenID Discovery) are validated once, here, into frozen records
holding only what the flow uses; the parsed JSON stays available as
`document` for anything else. A document that fails a check the spec makes
normative raises the precise error (`IssuerMismatch`, `InsecureURL`); one that
is merely malformed raises `InvalidMetadata`.

`AUTHORIZATION_RULES` says, per protocol revision, what the authorization spec
of that revision asks of a client where revisions differ. It is data so that
the differences can be read (and tested) in one place:

=========== ===== ================================ ======== ===== ===== =====
revision    PRM   AS metadata locations (in order) fallback  PKCE  CIMD  union
=========== ===== ================================ ======== ===== ===== =====
2024-11-05  opt.  RFC 8414                         yes       -     -     -
2025-03-26  opt.  RFC 8414                         yes       -     -     -
2025-06-18  req.  RFC 8414                         -         -     -     -
2025-11-25  req.  RFC 8414, OIDC insert, OIDC app. -         req.  yes   -
2026-07-28  req.  RFC 8414, OIDC insert, OIDC app. -         req.  yes   yes
=========== ===== ================================ ======== ===== ===== =====

* PRM: Protected Resource Metadata discovery (the `WWW-Authenticate`
  `resource_metadata` hint, else the path-based well-known location, else the
  root one). From 2025-06-18 on it is how the authorization server is found, so
  finding none is an error. 2025-03-26 predates it: the flow still tries it
  (servers newer than the client serve it) and otherwise uses the 2025-03-26
  "authorization base URL" (the MCP server's origin) as the issuer.
* fallback: 2025-03-26's default endpoints (`/authorize`, `/token`,
  `/register` at the authorization base URL) when that origin serves no
  metadata. 2024-11-05 has no authorization section; the earliest rules that
  exist (2025-03-26) apply.
* PKCE: 2025-11-25 and later say the client MUST refuse an authorization
  server whose metadata lacks `code_challenge_methods_supported`. At every
  revision a list that lacks `S256` is refused, and S256 is always used.
* CIMD: Client ID Metadata Documents exist from 2025-11-25.
* union: 2026-07-28 asks a client re-authorizing (step-up) to request the union
  of what it asked for before and what the challenge names; earlier revisions
  use the challenged scopes.

What does not vary is applied at every revision: RFC 8707 `resource` on
authorization and token requests (whenever a PRM `resource` is known), the
RFC 8414 section 3.3 issuer check on metadata, and RFC 9207 `iss` validation of
the authorization response, which only ever refuses a response that provably
does not come from the recorded issuer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from . import _jsonrpc as jr
from ._errors import RemoteProtocolError
from ._oauth_errors import InsecureURL, InvalidMetadata, IssuerMismatch
from ._oauth_urls import AS_METADATA_SUFFIX, OIDC_SUFFIX, url_problem
from ._versions import V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28

__all__ = [
    "AUTHORIZATION_RULES",
    "AuthorizationRules",
    "AuthorizationServerMetadata",
    "ProtectedResourceMetadata",
    "json_object",
    "parse_authorization_server_metadata",
    "parse_protected_resource_metadata",
]


# ============================================================= revision rules


@dataclass(frozen=True, slots=True)
class AuthorizationRules:
    """What one revision's authorization spec asks of a client, where revisions
    differ (see the module docstring for the table)."""

    revision: str
    protected_resource_metadata_required: bool
    """No PRM found is `MetadataNotFound`; else the MCP server's origin is the issuer."""
    authorization_server_metadata: tuple[tuple[str, str], ...]
    """(well-known suffix, "insert" | "append") in the order to try them."""
    default_endpoints_fallback: bool
    """No metadata at the legacy issuer: use `/authorize`, `/token`, `/register`."""
    pkce_must_be_advertised: bool
    """An absent `code_challenge_methods_supported` is `PKCENotSupported`."""
    client_id_metadata_documents: bool
    """A configured `client_metadata_url` may be offered as the client id."""
    accumulate_scopes: bool
    """A step-up asks for the scopes asked for before as well as the new ones."""


_RFC8414: Final = ((AS_METADATA_SUFFIX, "insert"),)
_RFC8414_AND_OIDC: Final = (
    (AS_METADATA_SUFFIX, "insert"),
    (OIDC_SUFFIX, "insert"),
    (OIDC_SUFFIX, "append"),
)


def _rules(revision: str, *flags: bool, order: tuple[tuple[str, str], ...]) -> AuthorizationRules:
    """Positional flags, so each revision is one row of the table below."""
    prm, fallback, pkce, cimd, union = flags
    return AuthorizationRules(revision, prm, order, fallback, pkce, cimd, union)


AUTHORIZATION_RULES: Final[Mapping[str, AuthorizationRules]] = {
    #                          PRM    fallback PKCE   CIMD   union
    V2024_11_05: _rules(V2024_11_05, False, True, False, False, False, order=_RFC8414),
    V2025_03_26: _rules(V2025_03_26, False, True, False, False, False, order=_RFC8414),
    V2025_06_18: _rules(V2025_06_18, True, False, False, False, False, order=_RFC8414),
    V2025_11_25: _rules(V2025_11_25, True, False, True, True, False, order=_RFC8414_AND_OIDC),
    V2026_07_28: _rules(V2026_07_28, True, False, True, True, True, order=_RFC8414_AND_OIDC),
}


# ================================================================ documents


def json_object(body: bytes, max_bytes: int) -> dict[str, Any] | None:
    """`body` as a JSON object, or None if it is not one (or is over `max_bytes`).

    Parsed by the engine's JSON-RPC parser, whose depth and size limits hold
    for whatever a server sends.
    """
    # Checked before parsing, so an oversized body costs no parsing work; the
    # caller reads None as "no document here" and tries the next location.
    if len(body) > max_bytes:
        return None
    try:
        value = jr.parse(body, jr.Limits(max_message_bytes=max(1, max_bytes)))
    except RemoteProtocolError:
        return None
    return value if type(value) is dict else None


def _strings(doc: Mapping[str, Any], name: str, where: str) -> tuple[str, ...] | None:
    """A JSON array of strings, or None when absent (absent and empty differ:
    absent takes the RFC 8414 2 default, an empty list supports nothing)."""
    value = doc.get(name)
    if value is None:
        return None
    if type(value) is not list or not all(isinstance(v, str) for v in value):
        raise InvalidMetadata(f"{where}: {name} must be an array of strings")
    return tuple(value)


def _flag(doc: Mapping[str, Any], name: str) -> bool:
    """A JSON boolean that is true: `"true"` or 1 is no promise (RFC 8414 2 and
    RFC 9207 3 define these members as booleans, absent meaning false)."""
    return doc.get(name) is True


def _endpoint(doc: Mapping[str, Any], name: str, where: str, *, required: bool) -> str | None:
    """An endpoint URL, held to https here (RFC 6749 3.1 and 3.2 require TLS at
    both endpoints) so that no later step can send a code or secret in clear."""
    value = doc.get(name)
    if value is None:
        if required:
            raise InvalidMetadata(f"{where}: {name} is missing")
        return None
    if not isinstance(value, str):
        raise InvalidMetadata(f"{where}: {name} must be a string")
    problem = url_problem(value)
    if problem is not None:
        raise InsecureURL(f"{where}: {name} {value!r} {problem}")
    return value


@dataclass(frozen=True, slots=True)
class ProtectedResourceMetadata:
    """An RFC 9728 document: which authorization servers protect `resource`."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    location: str
    document: Mapping[str, Any] = field(repr=False, compare=False)


def parse_protected_resource_metadata(
    doc: Mapping[str, Any], location: str
) -> ProtectedResourceMetadata:
    """Validate a PRM document (already a JSON object) fetched from `location`.

    The `resource` check against the server is the flow's, since it depends on
    how the document was found.
    """
    where = f"protected resource metadata at {location}"
    resource = doc.get("resource")
    # RFC 9728 2: `resource` is REQUIRED; without it nothing ties the document
    # to the server it was fetched for.
    if not isinstance(resource, str) or not resource:
        raise InvalidMetadata(f"{where}: resource is missing")
    servers = _strings(doc, "authorization_servers", where)
    if not servers:
        # RFC 9728 2 makes it optional, but MCP (2025-06-18 and later,
        # "Authorization Server Location") requires at least one: it is the
        # only way the client learns where to authorize.
        raise InvalidMetadata(f"{where}: authorization_servers must name at least one server")
    scopes = _strings(doc, "scopes_supported", where)
    return ProtectedResourceMetadata(resource, servers, scopes, location, doc)


@dataclass(frozen=True, slots=True)
class AuthorizationServerMetadata:
    """An RFC 8414 / OpenID Discovery document, validated against the issuer it
    was looked up for. `location` is None for the 2025-03-26 default endpoints,
    which come from no document at all (then `issuer` is None too: there is no
    validated issuer to hold an `iss` against)."""

    issuer: str | None
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    response_types_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_signing_alg_values_supported: tuple[str, ...] | None = None
    client_id_metadata_document_supported: bool = False
    authorization_response_iss_parameter_supported: bool = False
    location: str | None = None
    document: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


def parse_authorization_server_metadata(
    doc: Mapping[str, Any], location: str, expected_issuer: str
) -> AuthorizationServerMetadata:
    """Validate a metadata document (already a JSON object) fetched from
    `location`, which was built from `expected_issuer`.

    The issuer must be *identical* to `expected_issuer` (no normalization): a
    document served at `https://attacker/.well-known/...` that claims
    `"issuer": "https://honest"` is exactly what this refuses. Endpoints must be
    https (or loopback).
    """
    where = f"authorization server metadata at {location}"
    issuer = doc.get("issuer")
    # RFC 8414 3.3 and 6.2 (impersonation). Checked first: nothing else in a
    # document from the wrong issuer is worth validating.
    if issuer != expected_issuer:
        raise IssuerMismatch(
            f"{where}: issuer {issuer!r} is not the {expected_issuer!r} it was looked up for"
        )
    # RFC 8414 2: the token endpoint is required for every grant the flow uses;
    # the authorization endpoint is not (a client_credentials-only server), so
    # the flow asks for it only when it needs one.
    token_endpoint = _endpoint(doc, "token_endpoint", where, required=True)

    assert token_endpoint is not None
    return AuthorizationServerMetadata(
        issuer=expected_issuer,
        authorization_endpoint=_endpoint(doc, "authorization_endpoint", where, required=False),
        token_endpoint=token_endpoint,
        registration_endpoint=_endpoint(doc, "registration_endpoint", where, required=False),
        scopes_supported=_strings(doc, "scopes_supported", where),
        response_types_supported=_strings(doc, "response_types_supported", where),
        grant_types_supported=_strings(doc, "grant_types_supported", where),
        code_challenge_methods_supported=_strings(doc, "code_challenge_methods_supported", where),
        token_endpoint_auth_methods_supported=_strings(
            doc, "token_endpoint_auth_methods_supported", where
        ),
        token_endpoint_auth_signing_alg_values_supported=_strings(
            doc, "token_endpoint_auth_signing_alg_values_supported", where
        ),
        client_id_metadata_document_supported=_flag(doc, "client_id_metadata_document_supported"),
        authorization_response_iss_parameter_supported=_flag(
            doc, "authorization_response_iss_parameter_supported"
        ),
        location=location,
        document=doc,
    )
