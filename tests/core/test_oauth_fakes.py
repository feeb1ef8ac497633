"""In-process fakes for the OAuth tests: an MCP server acting as a resource
server (its Protected Resource Metadata) and authorization servers, all
answering `OAuthHTTPRequest`s by URL, plus a browser that follows an
`AuthorizationRequest` to its redirect. No sockets: `World.handle` is the network.

The fakes check what a real server would (PKCE S256 verifier against the
challenge, redirect URI and resource consistency, client authentication by the
registered method, assertion signatures), so a flow that gets tokens from them
did the protocol right. Every request is logged for order assertions. The tests
at the bottom pin the fakes' own checks, so a lax fake cannot hide a bug.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from mcp_core.oauth import (
    AuthorizationRequest,
    Authorized,
    OAuthClientFlow,
    OAuthHTTPRequest,
    Step,
)

NOW = 1_790_000_000.0
MCP_URL = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"
REDIRECT = "http://127.0.0.1:3000/callback"

Verifier = Callable[[str, str], dict[str, Any] | None]  # (assertion, client_id) -> claims


def counter_bytes() -> Callable[[int], bytes]:
    """A deterministic `token_bytes`: every call gives the next bytes of a counter."""
    counter = itertools.count(1)

    def token_bytes(n: int) -> bytes:
        return next(counter).to_bytes(4, "big") * (n // 4) + b"\x00" * (n % 4)

    return token_bytes


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def s256(verifier: str) -> str:
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def reply(status: int, doc: Any = None) -> tuple[int, bytes]:
    return status, b"" if doc is None else json.dumps(doc).encode()


@dataclass
class FakeResourceServer:
    """The MCP server's metadata side. `prm_at` lists the paths that serve the
    document ("path" and "root" are the two well-known ones)."""

    url: str = MCP_URL
    authorization_servers: list[str] = field(default_factory=lambda: [ISSUER])
    prm_at: tuple[str, ...] = ("path",)
    resource: str | None = None  # default: the server URL (root: its origin)
    scopes_supported: list[str] | None = None
    prm_status: int = 200
    prm_body: bytes | None = None  # served instead of the document

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def prm_paths(self) -> dict[str, str]:
        path = urlsplit(self.url).path
        known = {
            "path": f"/.well-known/oauth-protected-resource{path}",
            "root": "/.well-known/oauth-protected-resource",
        }
        return {known.get(where, where): where for where in self.prm_at}

    def handle(self, method: str, path: str) -> tuple[int, bytes] | None:
        where = self.prm_paths().get(path)
        if method != "GET" or where is None:
            return None
        if self.prm_body is not None:
            return self.prm_status, self.prm_body
        resource = self.resource
        if resource is None:
            resource = self.origin if where == "root" else self.url
        doc: dict[str, Any] = {
            "resource": resource,
            "authorization_servers": self.authorization_servers,
        }
        if self.scopes_supported is not None:
            doc["scopes_supported"] = self.scopes_supported
        return reply(self.prm_status, doc)


@dataclass
class FakeAuthorizationServer:
    """An authorization server. `metadata_at` lists where its metadata is served:
    "oauth" / "openid" (inserted before the issuer's path), "openid-append", or a
    literal path. `metadata` entries override the document (None removes one)."""

    issuer: str = ISSUER
    metadata_at: tuple[str, ...] = ("oauth",)
    metadata: dict[str, Any] = field(default_factory=dict)
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    registration: bool = True
    registration_status: int = 201
    registration_override: dict[str, Any] = field(default_factory=dict)
    registered_method: str | None = None  # what DCR assigns (default: what was asked)
    clients: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    iss_in_redirect: str = "correct"  # correct | wrong | omit | normalized
    deny: str | None = None  # an error code for the authorization response
    expires_in: Any = 3600
    issue_refresh: bool = True
    scope_in_response: bool = True
    token_status: int | None = None  # force a token endpoint status
    token_error: str = "invalid_grant"
    refresh_error: str | None = None
    assertion_verifier: Verifier | None = None
    prefix: str = ""  # where the endpoints live under the issuer's origin

    registrations: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    token_auth: list[tuple[str, str | None]] = field(default_factory=list)
    _codes: dict[str, dict[str, str]] = field(default_factory=dict)
    _refresh: dict[str, dict[str, str]] = field(default_factory=dict)
    _serial: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def origin(self) -> str:
        parts = urlsplit(self.issuer)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def base(self) -> str:
        return self.origin + (self.prefix or urlsplit(self.issuer).path.rstrip("/"))

    def metadata_paths(self) -> set[str]:
        path = urlsplit(self.issuer).path.rstrip("/")
        known = {
            "oauth": f"/.well-known/oauth-authorization-server{path}",
            "openid": f"/.well-known/openid-configuration{path}",
            "openid-append": f"{path}/.well-known/openid-configuration",
        }
        return {known.get(where, where) for where in self.metadata_at}

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": self.auth_methods,
            "authorization_response_iss_parameter_supported": True,
        }
        if self.registration:
            doc["registration_endpoint"] = f"{self.base}/register"
        for name, value in self.metadata.items():
            if value is None:
                doc.pop(name, None)
            else:
                doc[name] = value
        return doc

    # ------------------------------------------------------------- endpoints

    def handle(self, request: OAuthHTTPRequest, path: str) -> tuple[int, bytes] | None:
        if request.method == "GET" and path in self.metadata_paths():
            return reply(200, self.document())
        if request.method != "POST":
            return None
        if path == urlsplit(f"{self.base}/register").path and self.registration:
            return self._register(request)
        if path == urlsplit(f"{self.base}/token").path:
            return self._token(request)
        return None

    def _register(self, request: OAuthHTTPRequest) -> tuple[int, bytes]:
        body = json.loads(request.body)
        self.registrations.append(body)
        if self.registration_status >= 400:
            return reply(
                self.registration_status,
                {"error": "invalid_client_metadata", "error_description": "no"},
            )
        method = self.registered_method or body.get("token_endpoint_auth_method", "none")
        client_id = f"dyn-{next(self._serial)}"
        secret = None if method in ("none", "private_key_jwt") else f"secret-{client_id}"
        self.clients[client_id] = (secret, method)
        doc: dict[str, Any] = {
            "client_id": client_id,
            "token_endpoint_auth_method": method,
            **({"client_secret": secret} if secret else {}),
            "redirect_uris": body.get("redirect_uris", []),
        }
        for name, value in self.registration_override.items():
            if value is None:
                doc.pop(name, None)
            else:
                doc[name] = value
        return reply(self.registration_status, doc)

    def browse(self, request: AuthorizationRequest) -> str:
        """The user agent: the authorization endpoint's redirect, as a URL."""
        query = dict(parse_qsl(urlsplit(request.url).query))
        self.authorizations.append(query)
        assert request.url.startswith(f"{self.base}/authorize?")
        assert query["response_type"] == "code"
        assert query["code_challenge_method"] == "S256"
        assert query["client_id"] in self.clients or query["client_id"].startswith("https://")
        params: dict[str, str] = {}
        if self.deny is not None:
            params["error"] = self.deny
            params["error_description"] = "the user said no"
        else:
            code = f"code-{next(self._serial)}"
            self._codes[code] = query
            params["code"] = code
        params["state"] = query["state"]
        iss = {
            "correct": self.issuer,
            "wrong": "https://evil.example.com",
            "normalized": self.issuer + "/",
            "omit": None,
        }[self.iss_in_redirect]
        if iss is not None:
            params["iss"] = iss
        return f"{query['redirect_uri']}?{urlencode(params)}"

    def _authenticate(
        self, request: OAuthHTTPRequest, form: dict[str, str]
    ) -> tuple[str | None, str]:
        """(client_id, method) the request authenticated as, or (None, why)."""
        header = dict(request.headers).get("authorization")
        if header is not None:
            assert header.startswith("Basic ")
            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
            method = "client_secret_basic"
        elif "client_assertion" in form:
            client_id, secret, method = form.get("client_id", ""), None, "private_key_jwt"
            assert form["client_assertion_type"] == (
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            )
            claims = (
                self.assertion_verifier(form["client_assertion"], client_id)
                if self.assertion_verifier
                else None
            )
            if claims is None or claims.get("aud") != self.issuer:
                return None, "bad assertion"
        elif "client_secret" in form:
            client_id, secret, method = (
                form["client_id"],
                form["client_secret"],
                "client_secret_post",
            )
        else:
            client_id, secret, method = form.get("client_id", ""), None, "none"
        self.token_auth.append((method, client_id))
        if method not in self.auth_methods:
            return None, f"{method} not supported"
        if client_id.startswith("https://"):  # a Client ID Metadata Document client
            return client_id, method
        known = self.clients.get(client_id)
        if known is None or known[1] != method:
            return None, f"{client_id} does not use {method}"
        if method.startswith("client_secret") and known[0] != secret:
            return None, "wrong secret"
        return client_id, method

    def _token(self, request: OAuthHTTPRequest) -> tuple[int, bytes]:
        assert dict(request.headers)["content-type"] == "application/x-www-form-urlencoded"
        form = dict(parse_qsl(request.body.decode()))
        self.token_requests.append(form)
        if self.token_status is not None:
            return reply(self.token_status, {"error": self.token_error})
        client_id, why = self._authenticate(request, form)
        if client_id is None:
            return reply(401, {"error": "invalid_client", "error_description": why})
        grant = form.get("grant_type")
        if grant == "authorization_code":
            grant_info = self._codes.pop(form.get("code", ""), None)
            if (
                grant_info is None
                or grant_info["client_id"] != client_id
                or grant_info["redirect_uri"] != form.get("redirect_uri")
                or grant_info["code_challenge"] != s256(form.get("code_verifier", ""))
                or grant_info.get("resource") != form.get("resource")
            ):
                return reply(400, {"error": "invalid_grant"})
            scope = grant_info.get("scope")
        elif grant == "refresh_token":
            if self.refresh_error is not None:
                return reply(400, {"error": self.refresh_error})
            grant_info = self._refresh.pop(form.get("refresh_token", ""), None)
            if grant_info is None or grant_info["client_id"] != client_id:
                return reply(400, {"error": "invalid_grant"})
            if grant_info.get("resource") != form.get("resource"):
                return reply(400, {"error": "invalid_target"})
            scope = grant_info.get("scope")
        elif grant == "client_credentials":
            grant_info = {"client_id": client_id, **form}
            scope = form.get("scope")
        else:
            return reply(400, {"error": "unsupported_grant_type"})
        serial = next(self._serial)
        doc: dict[str, Any] = {"access_token": f"at-{serial}", "token_type": "Bearer"}
        if self.expires_in is not None:
            doc["expires_in"] = self.expires_in
        if self.issue_refresh and grant != "client_credentials":
            doc["refresh_token"] = f"rt-{serial}"
            self._refresh[f"rt-{serial}"] = {
                "client_id": client_id,
                **({"scope": scope} if scope else {}),
                **({"resource": grant_info["resource"]} if "resource" in grant_info else {}),
            }
        if scope and self.scope_in_response:
            doc["scope"] = scope
        return reply(200, doc)


@dataclass
class World:
    """The network: the resource server and authorization servers by origin."""

    resource: FakeResourceServer = field(default_factory=FakeResourceServer)
    servers: list[FakeAuthorizationServer] = field(
        default_factory=lambda: [FakeAuthorizationServer()]
    )
    log: list[tuple[str, str]] = field(default_factory=list)

    @property
    def auth(self) -> FakeAuthorizationServer:
        return self.servers[0]

    def handle(self, request: OAuthHTTPRequest) -> tuple[int, bytes]:
        self.log.append((request.method, request.url))
        parts = urlsplit(request.url)
        origin = f"{parts.scheme}://{parts.netloc}"
        headers = dict(request.headers)
        assert headers["host"] == parts.netloc
        assert len(headers) == len(request.headers), "a header is repeated"
        if request.body:
            assert headers["content-length"] == str(len(request.body))
        if origin == self.resource.origin:
            answer = self.resource.handle(request.method, parts.path)
            if answer is not None:
                return answer
        for server in self.servers:
            if origin == server.origin:
                answer = server.handle(request, parts.path)
                if answer is not None:
                    return answer
        return 404, b"<html>not found</html>"

    def browse(self, request: AuthorizationRequest) -> str:
        self.log.append(("BROWSE", request.url.split("?", 1)[0]))
        for server in self.servers:
            if request.url.startswith(server.base + "/"):
                return server.browse(request)
        raise AssertionError(f"no authorization server at {request.url}")

    def gets(self) -> list[str]:
        return [url for method, url in self.log if method == "GET"]


def drive(flow: OAuthClientFlow, world: World, step: Step, wall_time: float = NOW) -> Authorized:
    """Run a flow against the fakes until it has tokens (a refusal raises)."""
    for _ in range(50):
        if isinstance(step, Authorized):
            return step
        if isinstance(step, OAuthHTTPRequest):
            status, body = world.handle(step)
            step = flow.receive_response(status, body, wall_time=wall_time)
        else:
            step = flow.receive_redirect(world.browse(step), wall_time=wall_time)
    raise AssertionError("the flow did not finish in 50 steps")


# ===================================================== the fakes' own checks


def _request(method: str, url: str, body: bytes = b"", **headers: str) -> OAuthHTTPRequest:
    host = urlsplit(url).netloc
    pairs = [("host", host), *headers.items()]
    if body:
        pairs.append(("content-length", str(len(body))))
    return OAuthHTTPRequest(method, url, "token", tuple(pairs), body)


def _form(**fields: str) -> bytes:
    return urlencode(fields).encode()


def _post_token(server: FakeAuthorizationServer, **fields: str) -> tuple[int, dict[str, Any]]:
    request = _request(
        "POST",
        f"{server.base}/token",
        _form(**fields),
        **{"content-type": "application/x-www-form-urlencoded"},
    )
    status, body = server._token(request)
    return status, json.loads(body)


def _authorize(server: FakeAuthorizationServer, verifier: str) -> str:
    server.clients["c1"] = (None, "none")
    query = urlencode(
        {
            "response_type": "code",
            "client_id": "c1",
            "redirect_uri": REDIRECT,
            "state": "s",
            "code_challenge": s256(verifier),
            "code_challenge_method": "S256",
            "resource": MCP_URL,
        }
    )
    request = AuthorizationRequest(
        f"{server.base}/authorize?{query}", "s", REDIRECT, s256(verifier), verifier
    )
    return dict(parse_qsl(urlsplit(server.browse(request)).query))["code"]


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({}, None),
        ({"code_verifier": "wrong-verifier"}, "invalid_grant"),
        ({"redirect_uri": "http://127.0.0.1:9/other"}, "invalid_grant"),
        ({"resource": "https://other.example.com"}, "invalid_grant"),
        ({"client_id": "c2"}, "invalid_client"),
    ],
)
def test_fake_token_endpoint_checks_pkce_redirect_resource_and_client(
    change: dict[str, str], error: str | None
) -> None:
    server = FakeAuthorizationServer()
    code = _authorize(server, "v" * 43)
    fields = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": "v" * 43,
        "resource": MCP_URL,
        "client_id": "c1",
        **change,
    }
    status, doc = _post_token(server, **fields)
    assert (doc.get("error"), status == 200) == (error, error is None)


def test_fake_refuses_an_auth_method_it_does_not_support() -> None:
    server = FakeAuthorizationServer(auth_methods=["client_secret_basic"])
    server.clients["c1"] = ("pw", "client_secret_basic")
    status, doc = _post_token(
        server, grant_type="client_credentials", client_id="c1", client_secret="pw"
    )
    assert (status, doc["error"]) == (401, "invalid_client")
    assert server.token_auth == [("client_secret_post", "c1")]


def test_world_answers_unknown_urls_with_an_html_404() -> None:
    world = World()
    assert world.handle(_request("GET", "https://elsewhere.example/x")) == (
        404,
        b"<html>not found</html>",
    )
