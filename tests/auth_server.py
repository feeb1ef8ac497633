"""A small, real OAuth 2.1 authorization server for the tests (and the docs' example).

Real HTTP on loopback (the stdlib's threading HTTP server, in a daemon thread), so
the MCP server's verifiers and the client flow talk to it over sockets exactly as
they would to a deployed one. What it implements is what MCP authorization uses:

* metadata (RFC 8414) at `/.well-known/oauth-authorization-server`;
* a JWKS (`/jwks`, one ES256 key) and JWT access tokens (RFC 9068) whose `aud` is
  the `resource` the client asked for (RFC 8707);
* an authorization endpoint that approves at once, as `subject`: PKCE S256 only,
  `state` returned, `iss` on the redirect (RFC 9207), redirect URIs compared
  exactly with the registered ones (a mismatch is an error page, never a redirect);
* a token endpoint: `authorization_code` (the PKCE check; codes are one-time, and a
  replayed code revokes what it issued, RFC 6749 section 4.1.2), `refresh_token`
  (rotated), `client_credentials`; client auth `none`, `client_secret_basic`,
  `client_secret_post`, and `private_key_jwt` (RFC 7523: an ES256 assertion checked
  against the client's registered public key, `iss`/`sub` the client, `aud` the
  issuer or the token endpoint, unexpired, each `jti` once);
* dynamic client registration (RFC 7591; a `private_key_jwt` client registers its
  `jwks`), `register_key_client` for a pre-registered one, and introspection (RFC
  7662, for the pre-registered resource server client `RESOURCE_CLIENT`).

The knobs make it misbehave for the negative tests: `pkce_methods` (advertise no
S256), `redirect_iss` (another `iss` on the redirect), `redirect_origin` (send the
browser to another origin), `metadata_issuer` (metadata naming another issuer).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

#: The pre-registered client the MCP server introspects with.
RESOURCE_CLIENT = ("mcp-server", "mcp-server-secret")
#: A pre-registered machine client (client_credentials).
MACHINE_CLIENT = ("bot", "bot-secret")


#: RFC 7523 section 2.2: the `client_assertion_type` of a `private_key_jwt` client.
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass
class _Client:
    client_id: str
    secret: str | None
    redirect_uris: tuple[str, ...] = ()
    auth_method: str = "client_secret_basic"
    public_key: Any = None  # private_key_jwt: the key its assertions are checked with


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    scope: str
    resource: str
    used: bool = False
    issued: list[str] = field(default_factory=list)  # jti of the tokens it gave


class AuthServer:
    """Start with `with AuthServer() as auth:`; `auth.issuer` is its URL."""

    def __init__(
        self,
        *,
        subject: str = "alice",
        scopes: Sequence[str] = ("mcp", "files:read", "files:write"),
        token_lifetime: int = 300,
        pkce_methods: Sequence[str] = ("S256",),
        redirect_iss: str | None = None,
        redirect_origin: str | None = None,
        metadata_issuer: str | None = None,
    ) -> None:
        self.subject = subject
        self.scopes = tuple(scopes)
        self.token_lifetime = token_lifetime
        self.pkce_methods = tuple(pkce_methods)
        self.redirect_iss = redirect_iss
        self.redirect_origin = redirect_origin
        self.metadata_issuer = metadata_issuer
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.kid = "k1"
        self.clients: dict[str, _Client] = {
            RESOURCE_CLIENT[0]: _Client(*RESOURCE_CLIENT),
            MACHINE_CLIENT[0]: _Client(*MACHINE_CLIENT),
        }
        self.codes: dict[str, _Code] = {}
        self.refresh_tokens: dict[str, tuple[str, str, str, str]] = {}  # -> client, sub, scope, aud
        self.revoked: set[str] = set()
        self.assertion_ids: set[str] = set()  # jti of the client assertions seen
        self.requests: list[tuple[str, str]] = []  # (method, path), for assertions
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.issuer = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> AuthServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/jwks"

    @property
    def introspection_url(self) -> str:
        return f"{self.issuer}/introspect"

    def metadata(self) -> dict[str, Any]:
        i = self.issuer
        return {
            "issuer": self.metadata_issuer or i,
            "authorization_endpoint": f"{i}/authorize",
            "token_endpoint": f"{i}/token",
            "registration_endpoint": f"{i}/register",
            "introspection_endpoint": f"{i}/introspect",
            "jwks_uri": self.jwks_url,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": list(self.pkce_methods),
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_basic",
                "client_secret_post",
                "private_key_jwt",
            ],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
            "introspection_endpoint_auth_methods_supported": ["client_secret_basic"],
            "scopes_supported": list(self.scopes),
            "authorization_response_iss_parameter_supported": True,
        }

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "ES256"}]}

    def mint(
        self,
        *,
        audience: str | list[str] | None,
        scope: str = "mcp",
        subject: str | None = None,
        client_id: str = "test-client",
        lifetime: int | None = None,
        issuer: str | None = None,
        key: Any = None,
        kid: str | None = None,
    ) -> str:
        """A signed access token, for tests that need one the flow would not give
        (expired, for another audience, from another issuer, signed by another key)."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": issuer or self.issuer,
            "sub": subject or self.subject,
            "client_id": client_id,
            "scope": scope,
            "iat": now,
            "exp": now + (self.token_lifetime if lifetime is None else lifetime),
            "jti": uuid.uuid4().hex,
        }
        if audience is not None:
            claims["aud"] = audience
        headers = {"kid": kid or self.kid, "typ": "at+jwt"}
        return jwt.encode(claims, key or self.key, algorithm="ES256", headers=headers)

    def register_key_client(self, client_id: str, public_key: Any) -> None:
        """Pre-register a `private_key_jwt` client (no secret; its assertions are
        checked with `public_key`)."""
        with self._lock:
            self.clients[client_id] = _Client(
                client_id, None, auth_method="private_key_jwt", public_key=public_key
            )

    # ------------------------------------------------------------ endpoints

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        client = self.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        if client is None or redirect_uri not in client.redirect_uris:
            # RFC 6749 4.1.2.1: never redirect to an unverified URI.
            return 400, {"content-type": "text/plain"}, b"unknown client or redirect_uri"

        def back(**params: str) -> tuple[int, dict[str, str], bytes]:
            target = redirect_uri
            if self.redirect_origin is not None:
                parts = urlsplit(redirect_uri)
                target = self.redirect_origin + parts.path
            params["iss"] = self.redirect_iss or self.issuer
            if "state" in query:
                params["state"] = query["state"]
            return 302, {"location": f"{target}?{urlencode(params)}"}, b""

        if query.get("response_type") != "code":
            return back(error="unsupported_response_type")
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return back(error="invalid_request", error_description="PKCE S256 is required")
        resource = query.get("resource")
        if not resource:
            return back(error="invalid_target", error_description="resource is required")
        scope = " ".join(s for s in query.get("scope", "mcp").split() if s in self.scopes)
        code = secrets.token_urlsafe(16)
        with self._lock:
            self.codes[code] = _Code(
                client.client_id, redirect_uri, query["code_challenge"], scope, resource
            )
        return back(code=code)

    def _asserted_client(self, form: dict[str, str]) -> _Client | None:
        """RFC 7523 section 3: the client whose key signed `client_assertion`."""
        if form.get("client_assertion_type") != JWT_BEARER:
            return None
        assertion = form.get("client_assertion", "")
        try:
            unverified = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError:
            return None
        client = self.clients.get(str(unverified.get("iss", "")))
        if client is None or client.public_key is None:
            return None
        if form.get("client_id", client.client_id) != client.client_id:
            return None
        try:
            claims = jwt.decode(
                assertion,
                client.public_key,
                algorithms=["ES256"],
                audience=[self.issuer, f"{self.issuer}/token"],
                issuer=client.client_id,
                options={"require": ["exp", "jti", "sub"]},
            )
        except jwt.PyJWTError:
            return None
        with self._lock:
            if claims["sub"] != client.client_id or claims["jti"] in self.assertion_ids:
                return None  # another subject, or a replayed assertion
            self.assertion_ids.add(claims["jti"])
        return client

    def _client(self, headers: Any, form: dict[str, str]) -> _Client | None:
        if "client_assertion" in form or "client_assertion_type" in form:
            return self._asserted_client(form)
        auth = headers.get("authorization")
        if auth and auth.lower().startswith("basic "):
            try:
                cid, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            except ValueError:
                return None
            client = self.clients.get(cid)
            return client if client and client.secret == secret else None
        client = self.clients.get(form.get("client_id", ""))
        if client is None or client.public_key is not None:
            return None  # a key client must sign an assertion
        if client.secret is None:
            return client  # a public client: PKCE is its proof
        return client if form.get("client_secret") == client.secret else None

    def token(self, headers: Any, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        client = self._client(headers, form)
        if client is None:
            return 401, {"error": "invalid_client"}
        grant = form.get("grant_type")
        if grant == "authorization_code":
            with self._lock:
                code = self.codes.get(form.get("code", ""))
                if code is None or code.client_id != client.client_id:
                    return 400, {"error": "invalid_grant", "error_description": "unknown code"}
                if code.used:
                    self.revoked.update(code.issued)  # a replay: what it gave is void
                    return 400, {"error": "invalid_grant", "error_description": "code reused"}
                code.used = True
            if form.get("redirect_uri") != code.redirect_uri:
                return 400, {"error": "invalid_grant", "error_description": "redirect_uri"}
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
            if not verifier or digest.rstrip(b"=").decode() != code.challenge:
                return 400, {"error": "invalid_grant", "error_description": "PKCE check failed"}
            if form.get("resource", code.resource) != code.resource:
                return 400, {"error": "invalid_target"}
            answer = self._tokens(client.client_id, self.subject, code.scope, code.resource)
            code.issued.append(answer.pop("_jti"))
            return 200, answer
        if grant == "refresh_token":
            with self._lock:
                held = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if held is None or held[0] != client.client_id:
                return 400, {"error": "invalid_grant"}
            _, sub, scope, aud = held
            answer = self._tokens(client.client_id, sub, scope, form.get("resource", aud))
            answer.pop("_jti")
            return 200, answer
        if grant == "client_credentials":
            if client.secret is None and client.public_key is None:
                return 400, {"error": "unauthorized_client"}  # a public client
            resource = form.get("resource")
            if not resource:
                return 400, {"error": "invalid_target"}
            scope = " ".join(s for s in form.get("scope", "mcp").split() if s in self.scopes)
            answer = self._tokens(
                client.client_id, client.client_id, scope, resource, refresh=False
            )
            answer.pop("_jti")
            return 200, answer
        return 400, {"error": "unsupported_grant_type"}

    def _tokens(
        self, client_id: str, sub: str, scope: str, aud: str, *, refresh: bool = True
    ) -> dict[str, Any]:
        token = self.mint(audience=aud, scope=scope, subject=sub, client_id=client_id)
        jti = jwt.decode(token, options={"verify_signature": False})["jti"]
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.token_lifetime,
            "scope": scope,
            "_jti": jti,
        }
        if refresh:
            rt = secrets.token_urlsafe(24)
            with self._lock:
                self.refresh_tokens[rt] = (client_id, sub, scope, aud)
            answer["refresh_token"] = rt
        return answer

    def register(self, doc: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(doc, dict):
            return 400, {"error": "invalid_client_metadata"}
        uris = doc.get("redirect_uris") or []
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            return 400, {"error": "invalid_redirect_uri"}
        method = doc.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in ("none", "client_secret_basic", "client_secret_post", "private_key_jwt"):
            return 400, {"error": "invalid_client_metadata"}
        public_key = None
        if method == "private_key_jwt":
            keys = (
                (doc.get("jwks") or {}).get("keys") if isinstance(doc.get("jwks"), dict) else None
            )
            if not isinstance(keys, list) or len(keys) != 1:
                return 400, {"error": "invalid_client_metadata", "error_description": "jwks"}
            try:
                public_key = jwt.algorithms.ECAlgorithm.from_jwk(json.dumps(keys[0]))
            except (jwt.PyJWTError, ValueError, KeyError):
                return 400, {"error": "invalid_client_metadata", "error_description": "jwks"}
        cid = "dcr-" + secrets.token_urlsafe(8)
        secret = None if method in ("none", "private_key_jwt") else secrets.token_urlsafe(16)
        with self._lock:
            self.clients[cid] = _Client(cid, secret, tuple(uris), method, public_key)
        answer = {**doc, "client_id": cid, "token_endpoint_auth_method": method}
        if secret is not None:
            answer["client_secret"] = secret
        return 201, answer

    def introspect(self, headers: Any, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        client = self._client(headers, {})
        if client is None or client.client_id != RESOURCE_CLIENT[0]:
            return 401, {"error": "invalid_client"}
        try:
            claims = jwt.decode(
                form.get("token", ""),
                self.key.public_key(),
                algorithms=["ES256"],
                options={"verify_aud": False},
                issuer=self.issuer,
            )
        except jwt.PyJWTError:
            return 200, {"active": False}
        if claims.get("jti") in self.revoked:
            return 200, {"active": False}
        return 200, {"active": True, "token_type": "Bearer", **claims}


def _handler(server: AuthServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet tests

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, doc: Any) -> None:
            body = json.dumps(doc).encode()
            extra = {"cache-control": "no-store"}
            self._send(status, body, {"content-type": "application/json", **extra})

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode()
            return dict(parse_qsl(raw, keep_blank_values=True))

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            server.requests.append(("GET", parts.path))
            if parts.path == "/.well-known/oauth-authorization-server":
                self._json(200, server.metadata())
            elif parts.path == "/jwks":
                self._json(200, server.jwks())
            elif parts.path == "/authorize":
                status, headers, body = server.authorize(dict(parse_qsl(parts.query)))
                self._send(status, body, headers)
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            server.requests.append(("POST", path))
            if path == "/token":
                self._json(*server.token(self.headers, self._form()))
            elif path == "/introspect":
                self._json(*server.introspect(self.headers, self._form()))
            elif path == "/register":
                length = int(self.headers.get("content-length") or 0)
                try:
                    doc = json.loads(self.rfile.read(length))
                except ValueError:
                    doc = None
                self._json(*server.register(doc))
            else:
                self._json(404, {"error": "not_found"})

    return Handler
