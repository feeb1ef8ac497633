"""Tokens, client credentials, the persisted record, and the token endpoint's
side of the flow (client authentication, PKCE, response parsing).

Crypto is the stdlib's, as in `_request_state.py`: SHA-256 for PKCE, base64url,
`hmac.compare_digest`. The one signature the flow needs, the `private_key_jwt`
client assertion (RFC 7523), is *not* computed here: the core assembles the
JWS (header, claims, signing input) and hands the signing input to a
`JWTSigner` the embedder supplies. That keeps key material and asymmetric
crypto (and any dependency on a JOSE or crypto library) out of a pure engine,
lets keys live in an HSM, a KMS or the OS keychain, and costs the embedder a
few lines with whatever library they already use (see `JWTSigner`).

Secrets never appear in a `repr`: tokens, client secrets and PKCE verifiers
are excluded, so logging any of these records is safe.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal
from urllib.parse import quote_plus

from ._errors import LocalProtocolError
from ._oauth_errors import InvalidTokenResponse, TokenRequestRejected, UnsupportedTokenType
from ._oauth_metadata import json_object

__all__ = [
    "CLIENT_ASSERTION_TYPE",
    "ClientRegistration",
    "JWTSigner",
    "OAuthRecord",
    "RegistrationKind",
    "TokenSet",
    "b64url",
    "basic_credentials",
    "client_assertion",
    "oauth_error_fields",
    "parse_token_response",
    "pkce_challenge",
    "visible_ascii",
]

# RFC 7523 2.2: the `client_assertion_type` that says the assertion is a JWT.
CLIENT_ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# Bumped when the persisted shape changes, so a record written by another
# version is refused by `from_dict` instead of half-read.
RECORD_VERSION: Final = 1
RegistrationKind = Literal["pre-registered", "client-id-metadata-document", "dynamic"]
_KINDS: Final = ("pre-registered", "client-id-metadata-document", "dynamic")


def b64url(raw: bytes) -> str:
    """Unpadded base64url (RFC 7636 Appendix A, RFC 7515 2): PKCE and JWS both
    forbid the `=` padding, which would also need escaping in a URL."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of `verifier` (RFC 7636 section 4.2)."""
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def visible_ascii(value: object) -> bool:
    """A non-empty string of 0x21-0x7E: safe to put in a header as it is (a token
    with a space, CR or LF could split or forge header lines)."""
    return isinstance(value, str) and bool(value) and all("\x21" <= c <= "\x7e" for c in value)


def _finite(value: object) -> bool:
    """A finite int or float (never a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# =================================================================== tokens


@dataclass(frozen=True, slots=True)
class TokenSet:
    """What the token endpoint issued. `expires_at` is absolute wall-clock time
    (the `wall_time` of the response plus `expires_in`), so it survives a restart;
    None when the server gave no lifetime. `scope` is the granted scope (the
    requested one when the server did not say, RFC 6749 section 5.1)."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    scope: str | None = None

    @property
    def authorization(self) -> str:
        """The `Authorization` header value (RFC 6750 section 2.1)."""
        return f"Bearer {self.access_token}"

    def expired(self, wall_time: float, margin: float = 0.0) -> bool:
        """Whether the token is (or within `margin` seconds will be) expired.

        A token without a lifetime never counts as expired: only the server's
        401 can say it no longer works. The margin covers the request's time in
        flight and clock skew between client and server.
        """
        return self.expires_at is not None and wall_time + margin >= self.expires_at


@dataclass(frozen=True, slots=True)
class ClientRegistration:
    """The client as one authorization server knows it.

    `issuer` binds the credentials to the authorization server that issued them
    (SEP-2352): they are never offered to another one. It is None for a Client
    ID Metadata Document client, whose URL id is portable across servers.
    `client_secret_expires_at` is RFC 7591's (None or 0: never).
    """

    client_id: str
    token_endpoint_auth_method: str
    kind: RegistrationKind
    issuer: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_secret_expires_at: float | None = None

    def usable(self, wall_time: float) -> bool:
        """Whether the client secret is still valid; an expired one would make
        every token request fail with `invalid_client`, so the flow registers
        again instead."""
        expires = self.client_secret_expires_at
        return not expires or wall_time < expires


@dataclass(frozen=True, slots=True)
class OAuthRecord:
    """Everything needed to use and refresh the tokens later, in another process:
    the shape the adapters persist (`to_dict()` is plain JSON; store it as
    securely as a password, it holds the refresh token and client secret).

    `resource` is the RFC 8707 resource the tokens are bound to (None in the
    2025-03-26 fallback, which has none); `requested_scope` what was asked for,
    which a 2026-07-28 step-up extends rather than replaces.
    """

    token_endpoint: str
    client: ClientRegistration
    tokens: TokenSet | None = None
    issuer: str | None = None
    resource: str | None = None
    requested_scope: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, secrets included (the point is to resume with them)."""
        client = self.client
        tokens = self.tokens
        return {
            "version": RECORD_VERSION,
            "resource": self.resource,
            "issuer": self.issuer,
            "token_endpoint": self.token_endpoint,
            "requested_scope": self.requested_scope,
            "client": {
                "client_id": client.client_id,
                "client_secret": client.client_secret,
                "client_secret_expires_at": client.client_secret_expires_at,
                "token_endpoint_auth_method": client.token_endpoint_auth_method,
                "kind": client.kind,
                "issuer": client.issuer,
            },
            "tokens": None
            if tokens is None
            else {
                "access_token": tokens.access_token,
                "token_type": tokens.token_type,
                "expires_at": tokens.expires_at,
                "refresh_token": tokens.refresh_token,
                "scope": tokens.scope,
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OAuthRecord:
        """The inverse of `to_dict`; ValueError for anything that is not one of its
        outputs (the store is outside the engine and may be stale or edited)."""
        if not isinstance(data, Mapping) or data.get("version") != RECORD_VERSION:
            raise ValueError(f"not a version {RECORD_VERSION} OAuth record")
        client = data.get("client")
        tokens = data.get("tokens")
        if not isinstance(client, Mapping) or not (tokens is None or isinstance(tokens, Mapping)):
            raise ValueError("OAuth record: client must be an object, tokens an object or null")
        kind = client.get("kind")
        if kind not in _KINDS:
            raise ValueError(f"OAuth record: unknown client kind {kind!r}")
        record = cls(
            token_endpoint=_text(data, "token_endpoint"),
            client=ClientRegistration(
                client_id=_text(client, "client_id"),
                token_endpoint_auth_method=_text(client, "token_endpoint_auth_method"),
                kind=kind,
                issuer=_text(client, "issuer", optional=True),
                client_secret=_text(client, "client_secret", optional=True),
                client_secret_expires_at=_number(client, "client_secret_expires_at"),
            ),
            tokens=None
            if tokens is None
            else TokenSet(
                access_token=_text(tokens, "access_token"),
                token_type=_text(tokens, "token_type"),
                expires_at=_number(tokens, "expires_at"),
                refresh_token=_text(tokens, "refresh_token", optional=True),
                scope=_text(tokens, "scope", optional=True),
            ),
            issuer=_text(data, "issuer", optional=True),
            resource=_text(data, "resource", optional=True),
            requested_scope=_text(data, "requested_scope", optional=True),
        )
        # The same check `parse_token_response` makes: a store edited to hold a
        # token with CR LF would otherwise inject header lines on every request.
        if record.tokens is not None and not (
            visible_ascii(record.tokens.access_token)
            and (record.tokens.refresh_token is None or visible_ascii(record.tokens.refresh_token))
        ):
            raise ValueError("OAuth record: tokens must be visible ASCII")
        return record


def _text(data: Mapping[str, Any], name: str, *, optional: bool = False) -> Any:
    """A record field that must be a non-empty string (or None if `optional`);
    an empty one is refused, since `to_dict` never writes one."""
    value = data.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"OAuth record: {name} must be a non-empty string")
    return value


def _number(data: Mapping[str, Any], name: str) -> float | None:
    """A record field that is a finite number or null: a NaN expiry would make
    every comparison false, so the token would never expire."""
    value = data.get(name)
    if value is None:
        return None
    if not _finite(value):
        raise ValueError(f"OAuth record: {name} must be a number or null")
    return float(value)


# ========================================================= token responses


def oauth_error_fields(doc: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """(error, error_description) of an RFC 6749 section 5.2 error body, if it is one."""
    if doc is None:
        return None, None
    error, description = doc.get("error"), doc.get("error_description")
    return (
        error if isinstance(error, str) else None,
        description if isinstance(description, str) else None,
    )


def parse_token_response(
    status: int,
    body: bytes,
    *,
    wall_time: float,
    max_bytes: int,
    requested_scope: str | None,
    previous: TokenSet | None = None,
) -> TokenSet:
    """An access token response (RFC 6749 section 5.1) as a `TokenSet`.

    `previous` is the set being refreshed: a refresh response without a new
    refresh token keeps the old one (RFC 6749 section 6 lets the server rotate
    it or not). Lenient where nothing is at stake: `token_type` absent means
    Bearer, `expires_in` may be a digit string. Strict where a header is built:
    tokens must be visible ASCII.
    """
    doc = json_object(body, max_bytes)
    # Any non-2xx is a refusal (RFC 6749 5.2 uses 400 and 401); `error` is kept
    # so the caller can tell a refused grant from an outage (see `_on_refresh`).
    if not 200 <= status < 300:
        error, description = oauth_error_fields(doc)
        detail = f": {error}" + (f" ({description})" if description else "") if error else ""
        raise TokenRequestRejected(
            f"token endpoint answered {status}{detail}",
            status=status,
            error=error,
            error_description=description,
        )
    if doc is None:
        raise InvalidTokenResponse("token response is not a JSON object (or is too large)")
    access = doc.get("access_token")
    if not isinstance(access, str) or not visible_ascii(access):
        raise InvalidTokenResponse("token response has no usable access_token")
    token_type = doc.get("token_type", "Bearer")
    # RFC 6749 7.1: a client must not use a token whose type it does not
    # understand; a DPoP or MAC token sent as Bearer would be refused, or worse,
    # accepted without its proof. Compared case-insensitively (RFC 6749 5.1).
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise UnsupportedTokenType(f"token type {token_type!r} is not Bearer")
    expires_in = doc.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isdigit():
        expires_in = int(expires_in)
    if expires_in is not None and not (_finite(expires_in) and expires_in >= 0):
        raise InvalidTokenResponse(f"expires_in {expires_in!r} is not a non-negative number")
    refresh = doc.get("refresh_token")
    # A new refresh token replaces the old one, which the server may have
    # revoked on rotation (RFC 9700 4.14.2); none means the old one still holds.
    if refresh is None and previous is not None:
        refresh = previous.refresh_token
    elif refresh is not None and not visible_ascii(refresh):
        raise InvalidTokenResponse("token response has an unusable refresh_token")
    # RFC 6749 5.1: `scope` may be left out only when it is what was requested.
    scope = doc.get("scope")
    return TokenSet(
        access_token=access,
        token_type="Bearer",
        expires_at=None if expires_in is None else wall_time + expires_in,
        refresh_token=refresh,
        scope=scope if isinstance(scope, str) else requested_scope,
    )


# ==================================================== client authentication


@dataclass(frozen=True, slots=True)
class JWTSigner:
    """Signs `private_key_jwt` client assertions (RFC 7523) for the flow.

    `sign` receives the JWS signing input (ASCII bytes of
    `base64url(header) "." base64url(claims)`) and returns the raw signature
    as RFC 7518 defines it for `algorithm`: for ES256 the 64-byte `r || s`
    (not DER), for RS256/PS256 the PKCS#1 signature bytes. With
    `cryptography`, for example::

        def sign(data: bytes) -> bytes:
            der = key.sign(data, ec.ECDSA(hashes.SHA256()))
            r, s = utils.decode_dss_signature(der)
            return r.to_bytes(32, "big") + s.to_bytes(32, "big")

        signer = JWTSigner("ES256", sign, key_id="my-key-1")

    `lifetime` is how long an assertion is valid (RFC 7523 asks for a short
    `exp`). Symmetric algorithms are refused: an HMAC over the client secret is
    `client_secret_jwt`, a different method, and `none` is no signature at all.
    """

    algorithm: str
    sign: Callable[[bytes], bytes] = field(repr=False)
    key_id: str | None = None
    lifetime: float = 60.0

    def __post_init__(self) -> None:
        # Refused when configured rather than when the first assertion is
        # built, which is after the user may already have authorized.
        if not isinstance(self.algorithm, str) or not self.algorithm:
            raise ValueError("algorithm must be a JWS algorithm name")
        if self.algorithm.lower() == "none" or self.algorithm.upper().startswith("HS"):
            raise ValueError(f"private_key_jwt needs an asymmetric algorithm, not {self.algorithm}")
        if not _finite(self.lifetime) or self.lifetime <= 0:
            raise ValueError("lifetime must be a positive number of seconds")


def _b64json(value: Mapping[str, Any]) -> str:
    """A JWS header or claims segment (RFC 7515 3): compact JSON, base64url."""
    return b64url(json.dumps(value, separators=(",", ":")).encode("utf-8"))


def client_assertion(
    signer: JWTSigner, *, client_id: str, audience: str, wall_time: float, jti: str
) -> str:
    """A signed JWT client assertion (RFC 7523 section 3): `iss` and `sub` are the
    client id, `aud` the authorization server's issuer identifier (what
    RFC 7523bis requires and servers accept; the token endpoint when there is no
    issuer), `jti` unique per assertion so the server can refuse replays."""
    header: dict[str, Any] = {"alg": signer.algorithm, "typ": "JWT"}
    if signer.key_id is not None:
        header["kid"] = signer.key_id
    # NumericDate (RFC 7519 2) allows fractions, but some servers parse only
    # integers; the lifetime is rounded up so it is never shorter than asked.
    issued = int(wall_time)
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + math.ceil(signer.lifetime),
        "jti": jti,
    }
    signing_input = f"{_b64json(header)}.{_b64json(claims)}"
    signature = signer.sign(signing_input.encode("ascii"))
    # An embedder's signer returning None or a str would otherwise produce a
    # malformed assertion that the server refuses with a vaguer error.
    if not isinstance(signature, (bytes, bytearray)) or not signature:
        raise LocalProtocolError("JWTSigner.sign must return the signature bytes")
    return f"{signing_input}.{b64url(bytes(signature))}"


def basic_credentials(client_id: str, client_secret: str) -> str:
    """The `client_secret_basic` header value: both parts form-urlencoded before
    joining (RFC 6749 section 2.3.1), so a `:` in the id cannot shift the split."""
    pair = f"{quote_plus(client_id, safe='')}:{quote_plus(client_secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
