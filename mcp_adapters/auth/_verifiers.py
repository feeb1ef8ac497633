"""Token verifiers: the I/O half of resource-server authentication.

The core's `ResourceGuard` asks for a verification once per token it has not seen
(`TokenVerificationNeeded`) and applies the resource's rules to the answer (issuer,
audience, times) whichever verifier gave it. A verifier is anything with

    async def verify(self, token: str) -> AccessToken | InvalidToken | VerifierUnavailable

Two are here. `JWTVerifier` checks a JWT access token (RFC 9068) locally against the
issuer's keys (a JWKS fetched from `jwks_url`, or given); `IntrospectionVerifier`
asks the authorization server (RFC 7662), for opaque tokens or for revocation that
shows within the guard's cache time.

JOSE is PyJWT's (the `auth` extra): a small, long-maintained library whose
`decode` checks signature, `exp`/`nbf`, `iss` and `aud` in one call and which
refuses `alg: none` and HMAC-with-a-public-key confusion when given the list of
algorithms, which is all a resource server needs (no JWE, no signing).
"""

from __future__ import annotations

import base64
import json
import logging
import math
import ssl
from collections.abc import Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlencode

import anyio

from mcp_adapters.auth._fetch import FetchError, fetch
from mcp_core.auth import AccessToken, InvalidToken, VerificationResult, VerifierUnavailable

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "IntrospectionVerifier",
    "JWTVerifier",
    "TokenVerifier",
    "access_token_from_claims",
]

logger = logging.getLogger("mcp_adapters.auth")

#: Signature algorithms accepted by default: public-key ones only, so a JWKS can never
#: be read as an HMAC secret (the classic algorithm-confusion attack).
ASYMMETRIC_ALGORITHMS: tuple[str, ...] = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)


class TokenVerifier(Protocol):
    """What `AuthSettings(verifier=...)` takes."""

    async def verify(self, token: str) -> VerificationResult: ...


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def access_token_from_claims(
    claims: Mapping[str, Any], *, issuer: str | None = None
) -> AccessToken:
    """An `AccessToken` from JWT claims or an introspection answer (RFC 9068 and RFC
    7662 share the names): `scope` a space-separated string (or `scp` a list), `aud`
    a string or a list. `issuer` stands in when the claims name none (introspection:
    the server asked is the issuer)."""
    aud = claims.get("aud")
    audiences = (
        (aud,) if isinstance(aud, str) else tuple(a for a in aud or () if isinstance(a, str))
    )
    scope = claims.get("scope")
    if isinstance(scope, str):
        scopes = frozenset(s for s in scope.split(" ") if s)
    else:
        scp = claims.get("scp")
        scopes = (
            frozenset(s for s in scp if isinstance(s, str))
            if isinstance(scp, list)
            else frozenset()
        )
    iss = claims.get("iss")
    sub = claims.get("sub")
    client = claims.get("client_id", claims.get("azp"))
    return AccessToken(
        issuer=iss if isinstance(iss, str) else issuer,
        subject=sub if isinstance(sub, str) and sub else None,
        client_id=client if isinstance(client, str) and client else None,
        audiences=audiences,
        scopes=scopes,
        expires_at=_number(claims.get("exp")),
        not_before=_number(claims.get("nbf")),
        issued_at=_number(claims.get("iat")),
        claims=dict(claims),
    )


class JWTVerifier:
    """JWT access tokens against an issuer's JSON Web Key Set.

    `jwks_url` is fetched on first use and again after `jwks_ttl` seconds, or sooner
    when a token names a key id the set lacks (key rotation), but no more than once
    every `jwks_min_refresh` seconds (a flood of made-up key ids costs one fetch).
    `keys` (a JWKS document) instead fixes the keys. `issuer` and `audience` are
    checked exactly (`iss`, `aud`; `exp` is required); the guard checks them again,
    the audience in canonical form. `audience=None` leaves `aud` to the guard alone
    (which always checks it against the resource it protects): for a server whose URL
    is known only once it is bound. Limits: `max_jwks_bytes`, `max_keys`; `timeout` per fetch.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str] | None,
        jwks_url: str | None = None,
        keys: Mapping[str, Any] | None = None,
        algorithms: Sequence[str] = ASYMMETRIC_ALGORITHMS,
        leeway: float = 60.0,
        jwks_ttl: float = 300.0,
        jwks_min_refresh: float = 30.0,
        max_jwks_bytes: int = 65536,
        max_keys: int = 32,
        timeout: float = 10.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        try:
            import jwt
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise ImportError("JWTVerifier needs PyJWT: pip install 'mcp-sansio[auth]'") from exc
        self._jwt = jwt
        if (jwks_url is None) == (keys is None):
            raise ValueError("give jwks_url or keys, not both")
        unknown = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if unknown or not algorithms:
            raise ValueError(f"algorithms must be public-key JWS algorithms, not {unknown}")
        self.issuer = issuer
        self.audience = (
            audience if audience is None or isinstance(audience, str) else list(audience)
        )
        self.jwks_url = jwks_url
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.jwks_ttl = jwks_ttl
        self.jwks_min_refresh = jwks_min_refresh
        self.max_jwks_bytes = max_jwks_bytes
        self.max_keys = max_keys
        self.timeout = timeout
        self.ssl_context = ssl_context
        self._keys: dict[str | None, Any] = {}
        self._fetched_at = -math.inf
        self._lock = anyio.Lock()
        if keys is not None:
            self._keys = self._parse(keys)
            self._fetched_at = math.inf

    def _parse(self, document: Any) -> dict[str | None, Any]:
        if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
            raise ValueError("a JWKS is an object with a 'keys' list")
        entries = [k for k in document["keys"] if isinstance(k, dict)]
        if len(entries) > self.max_keys:
            raise ValueError(f"the JWKS has more than {self.max_keys} keys")
        parsed: dict[str | None, Any] = {}
        for entry in entries:
            if entry.get("use", "sig") != "sig":
                continue
            try:
                key = self._jwt.PyJWK(entry)
            except self._jwt.PyJWTError:
                continue  # a key type or curve we do not use
            parsed[entry.get("kid") if isinstance(entry.get("kid"), str) else None] = key
        return parsed

    async def _refresh(self, *, forced: bool) -> None:
        if self.jwks_url is None:
            return
        async with self._lock:
            now = anyio.current_time()
            age = now - self._fetched_at
            if age < (self.jwks_min_refresh if forced else self.jwks_ttl):
                return  # fresh enough, or another task just fetched it
            answer = await fetch(
                "GET",
                self.jwks_url,
                headers=[("accept", "application/json")],
                max_bytes=self.max_jwks_bytes,
                timeout=self.timeout,
                ssl_context=self.ssl_context,
            )
            if answer.status != 200:
                raise FetchError(f"the JWKS answered {answer.status}")
            try:
                keys = self._parse(json.loads(answer.body))
            except (ValueError, UnicodeDecodeError) as exc:
                raise FetchError(f"the JWKS is not usable: {exc}") from exc
            self._keys = keys
            self._fetched_at = now

    async def verify(self, token: str) -> VerificationResult:
        jwt = self._jwt
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return InvalidToken("the token is not a JWT")
        alg = header.get("alg")
        if alg not in self.algorithms:
            return InvalidToken(f"the token's algorithm {alg!r} is not accepted")
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        try:
            await self._refresh(forced=False)
            key = self._pick(kid)
            if key is None:
                await self._refresh(forced=True)
                key = self._pick(kid)
        except FetchError as exc:
            logger.warning("cannot fetch the JWKS of %s: %s", self.issuer, exc)
            return VerifierUnavailable("the issuer's keys cannot be fetched")
        if key is None:
            return InvalidToken("the token is signed with an unknown key")
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={
                    "require": ["exp", "iss"] if self.audience is None else ["exp", "iss", "aud"],
                    "verify_aud": self.audience is not None,
                },
            )
        except jwt.ExpiredSignatureError:
            return InvalidToken("the token has expired")
        except jwt.InvalidAudienceError:
            return InvalidToken("the token is not for this resource")
        except jwt.InvalidIssuerError:
            return InvalidToken("the token's issuer is not accepted")
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            return InvalidToken(f"the token is invalid: {exc}")
        return access_token_from_claims(claims)

    def _pick(self, kid: str | None) -> Any:
        keys = self._keys
        if kid is not None:
            return keys.get(kid)
        return next(iter(keys.values())) if len(keys) == 1 else None


class IntrospectionVerifier:
    """Ask the authorization server about each token (RFC 7662).

    The resource server authenticates as a client of its own (`client_id`,
    `client_secret`, sent as HTTP Basic, or in the form with
    `auth_method="client_secret_post"`). An inactive token is `InvalidToken`; an
    endpoint that cannot be reached or answers oddly is `VerifierUnavailable`.
    `issuer` is the introspecting server's issuer, for answers without `iss`. The
    answer must carry `aud`: without it nothing says the token is meant for this
    resource, and the guard refuses it.
    """

    def __init__(
        self,
        url: str,
        *,
        client_id: str,
        client_secret: str,
        issuer: str,
        auth_method: str = "client_secret_basic",
        timeout: float = 10.0,
        max_response_bytes: int = 65536,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if auth_method not in ("client_secret_basic", "client_secret_post"):
            raise ValueError("auth_method is client_secret_basic or client_secret_post")
        self.url = url
        self.client_id = client_id
        self._secret = client_secret
        self.issuer = issuer
        self.auth_method = auth_method
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.ssl_context = ssl_context

    def __repr__(self) -> str:
        return f"IntrospectionVerifier({self.url!r}, client_id={self.client_id!r})"

    async def verify(self, token: str) -> VerificationResult:
        form = [("token", token), ("token_type_hint", "access_token")]
        headers = [
            ("content-type", "application/x-www-form-urlencoded"),
            ("accept", "application/json"),
        ]
        if self.auth_method == "client_secret_basic":
            # RFC 6749 section 2.3.1: each part form-encoded before Basic.
            pair = f"{urlencode({'': self.client_id})[1:]}:{urlencode({'': self._secret})[1:]}"
            headers.append(("authorization", "Basic " + base64.b64encode(pair.encode()).decode()))
        else:
            form += [("client_id", self.client_id), ("client_secret", self._secret)]
        try:
            answer = await fetch(
                "POST",
                self.url,
                headers=headers,
                body=urlencode(form).encode("ascii"),
                max_bytes=self.max_response_bytes,
                timeout=self.timeout,
                ssl_context=self.ssl_context,
            )
        except FetchError as exc:
            logger.warning("introspection at %s failed: %s", self.url, exc)
            return VerifierUnavailable("the introspection endpoint cannot be reached")
        if answer.status != 200:
            logger.warning("introspection at %s answered %d", self.url, answer.status)
            return VerifierUnavailable(f"the introspection endpoint answered {answer.status}")
        try:
            claims = json.loads(answer.body)
        except (ValueError, UnicodeDecodeError):
            return VerifierUnavailable("the introspection answer is not JSON")
        if not isinstance(claims, dict) or not isinstance(claims.get("active"), bool):
            return VerifierUnavailable("the introspection answer has no 'active'")
        if not claims["active"]:
            return InvalidToken("the token is not active")
        return access_token_from_claims(claims, issuer=self.issuer)
