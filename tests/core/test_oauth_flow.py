"""The authorization flow after discovery: registration, the authorization
request and its redirect, token endpoint authentication, scopes, step-up,
refresh (also after a restart), client credentials, and misuse."""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from mcp_core import LocalProtocolError, RemoteProtocolError
from mcp_core.oauth import (
    AuthorizationDenied,
    AuthorizationRequest,
    AuthorizationServerMismatch,
    Authorized,
    InvalidAuthorizationResponse,
    InvalidTokenResponse,
    IssuerParameterMismatch,
    JWTSigner,
    OAuthClientConfig,
    OAuthClientFlow,
    OAuthHTTPRequest,
    OAuthRecord,
    OAuthState,
    PreRegisteredClient,
    ReauthorizationLimitExceeded,
    RegistrationRejected,
    RegistrationUnavailable,
    StateMismatch,
    StepUpLimitExceeded,
    TokenRequestRejected,
    TokenSet,
    UnsupportedClientAuthentication,
    UnsupportedTokenType,
)
from tests.core.test_oauth_fakes import (
    ISSUER,
    MCP_URL,
    NOW,
    REDIRECT,
    FakeAuthorizationServer,
    FakeResourceServer,
    World,
    counter_bytes,
    drive,
    s256,
)

CIMD_URL = "https://client.example.com/oauth/client.json"
PRM_PATH = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


def new_flow(
    revision: str = "2026-07-28", record: OAuthRecord | None = None, **config: Any
) -> OAuthClientFlow:
    config.setdefault(
        "redirect_uri", REDIRECT if config.get("grant_type") != "client_credentials" else None
    )
    return OAuthClientFlow(
        MCP_URL,
        OAuthClientConfig(**config),
        revision=revision,
        record=record,
        token_bytes=counter_bytes(),
    )


def bearer(**params: str) -> list[tuple[str, str]]:
    return [("www-authenticate", "Bearer " + ", ".join(f'{k}="{v}"' for k, v in params.items()))]


def authorized(world: World, **config: Any) -> tuple[OAuthClientFlow, Authorized]:
    flow = new_flow(**config)
    return flow, drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))


def step_until_redirect(
    flow: OAuthClientFlow, world: World, headers: Any = ()
) -> AuthorizationRequest:
    step = flow.handle_challenge(401, list(headers), wall_time=NOW)
    while isinstance(step, OAuthHTTPRequest):
        status, body = world.handle(step)
        step = flow.receive_response(status, body, wall_time=NOW)
    assert isinstance(step, AuthorizationRequest)
    return step


# ============================================================ registration


def test_pre_registered_credentials_come_first() -> None:
    server = FakeAuthorizationServer(
        auth_methods=["client_secret_basic"],
        metadata={"client_id_metadata_document_supported": True},
    )
    server.clients["pre-registered-client"] = ("pre-registered-secret", "client_secret_basic")
    world = World(servers=[server])
    _, result = authorized(
        world,
        client=PreRegisteredClient("pre-registered-client", "pre-registered-secret"),
        client_metadata_url=CIMD_URL,
    )
    assert server.registrations == []
    assert server.token_auth == [("client_secret_basic", "pre-registered-client")]
    assert result.record.client.kind == "pre-registered"
    assert result.record.client.issuer == ISSUER  # bound to the server that took it


def test_client_id_metadata_document_second_where_supported() -> None:
    server = FakeAuthorizationServer(metadata={"client_id_metadata_document_supported": True})
    world = World(servers=[server])
    _, result = authorized(world, client_metadata_url=CIMD_URL)
    assert server.registrations == []
    assert server.authorizations[0]["client_id"] == CIMD_URL
    assert server.token_auth == [("none", CIMD_URL)]
    assert (result.record.client.kind, result.record.client.issuer) == (
        "client-id-metadata-document",
        None,  # portable across authorization servers
    )


@pytest.mark.parametrize(
    ("revision", "supported", "uses_cimd"),
    [
        ("2026-07-28", True, True),
        ("2025-11-25", True, True),
        ("2025-06-18", True, False),  # CIMD came with 2025-11-25
        ("2026-07-28", False, False),
    ],
)
def test_dynamic_registration_is_the_fallback(
    revision: str, supported: bool, uses_cimd: bool
) -> None:
    server = FakeAuthorizationServer(metadata={"client_id_metadata_document_supported": supported})
    world = World(servers=[server])
    authorized(world, revision=revision, client_metadata_url=CIMD_URL)
    assert (server.authorizations[0]["client_id"] == CIMD_URL) is uses_cimd
    assert len(server.registrations) == (0 if uses_cimd else 1)


def test_dynamic_registration_request_body() -> None:
    server = FakeAuthorizationServer(
        metadata={"scopes_supported": ["files:read", "offline_access"]}
    )
    world = World(FakeResourceServer(scopes_supported=["files:read"]), [server])
    authorized(
        world,
        client_name="Example",
        client_uri="https://client.example.com",
        software_version="1.2",
    )
    assert server.registrations == [
        {
            "client_name": "Example",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
            "client_uri": "https://client.example.com",
            "software_version": "1.2",
            "scope": "files:read offline_access",
        }
    ]


@pytest.mark.parametrize(
    ("redirect", "given", "expected"),
    [
        (REDIRECT, None, "native"),
        ("http://localhost:8080/cb", None, "native"),
        ("https://app.example.com/cb", None, "web"),
        (REDIRECT, "web", "web"),
    ],
)
def test_application_type_follows_the_redirect_uri(
    redirect: str, given: Any, expected: str
) -> None:
    assert (
        OAuthClientConfig(redirect_uri=redirect, application_type=given).resolved_application_type
        == expected
    )


def test_no_way_to_register_asks_for_client_details() -> None:
    world = World(servers=[FakeAuthorizationServer(registration=False)])
    flow = new_flow()
    with pytest.raises(RegistrationUnavailable):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))


@pytest.mark.parametrize(
    ("status", "override", "error"),
    [
        (400, {}, "invalid_client_metadata"),
        (201, {"client_id": None}, None),
        (201, {"client_id": ""}, None),
        (201, {"token_endpoint_auth_method": "client_secret_basic"}, None),  # and no secret
    ],
)
def test_dynamic_registration_failures(
    status: int, override: dict[str, Any], error: str | None
) -> None:
    server = FakeAuthorizationServer(registration_status=status, registration_override=override)
    flow = new_flow()
    with pytest.raises(RegistrationRejected) as caught:
        drive(flow, World(servers=[server]), flow.handle_challenge(401, [], wall_time=NOW))
    assert caught.value.error == error
    assert server.authorizations == []


def test_registration_response_without_a_method_keeps_the_one_asked_for() -> None:
    server = FakeAuthorizationServer(registration_override={"token_endpoint_auth_method": None})
    _, result = authorized(World(servers=[server]))
    assert result.record.client.token_endpoint_auth_method == "none"


def test_pre_registered_credentials_are_never_sent_to_another_server() -> None:
    server = FakeAuthorizationServer()
    flow = new_flow(client=PreRegisteredClient("c", "s", issuer="https://old-as.example.com"))
    with pytest.raises(AuthorizationServerMismatch):
        drive(flow, World(servers=[server]), flow.handle_challenge(401, [], wall_time=NOW))
    assert server.token_requests == server.authorizations == []


def test_pre_registered_credentials_bind_to_the_first_server_they_meet() -> None:
    server = FakeAuthorizationServer(auth_methods=["client_secret_basic"])
    server.clients["pre"] = ("pw", "client_secret_basic")
    _, first = authorized(World(servers=[server]), client=PreRegisteredClient("pre", "pw"))
    assert first.record.client.issuer == ISSUER
    other = FakeAuthorizationServer(issuer="https://as2.example.com")
    world = World(FakeResourceServer(authorization_servers=["https://as2.example.com"]), [other])
    flow = new_flow(record=first.record, client=PreRegisteredClient("pre", "pw"))
    with pytest.raises(AuthorizationServerMismatch):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    assert other.token_requests == other.authorizations == []
    # Other pre-registered credentials carry no such binding.
    other.clients["new"] = (None, "none")
    flow = new_flow(record=first.record, client=PreRegisteredClient("new"))
    drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))


def test_a_signer_the_server_cannot_verify_falls_back_to_another_method(
    es256: tuple[JWTSigner, Any],
) -> None:
    signer, _ = es256
    server = FakeAuthorizationServer(
        auth_methods=["private_key_jwt", "none"],
        metadata={"token_endpoint_auth_signing_alg_values_supported": ["RS256"]},
    )
    _, result = authorized(World(servers=[server]), signer=signer)
    assert server.registrations[0]["token_endpoint_auth_method"] == "none"
    assert result.record.client.token_endpoint_auth_method == "none"


def test_a_stored_registration_is_reused_with_its_issuer_only() -> None:
    server = FakeAuthorizationServer()
    world = World(servers=[server])
    _, first = authorized(world)
    record = OAuthRecord.from_dict(json.loads(json.dumps(first.record.to_dict())))
    # Same server: the stored client id is used again, no new registration.
    flow = new_flow(record=record)
    step = flow.handle_challenge(
        403, bearer(error="insufficient_scope", scope="more"), wall_time=NOW
    )
    drive(flow, world, step)
    assert len(server.registrations) == 1
    assert server.authorizations[-1]["client_id"] == first.record.client.client_id

    # The resource moved to another authorization server (SEP-2352): register there.
    new_server = FakeAuthorizationServer(
        issuer="https://as2.example.com", _serial=itertools.count(100)
    )
    world2 = World(
        FakeResourceServer(authorization_servers=["https://as2.example.com"]), [new_server]
    )
    flow = new_flow(record=record)
    step = flow.handle_challenge(
        403, bearer(error="insufficient_scope", scope="more"), wall_time=NOW
    )
    result = drive(flow, world2, step)
    assert len(new_server.registrations) == 1
    assert first.record.client.client_id not in {a["client_id"] for a in new_server.authorizations}
    assert result.record.client.issuer == "https://as2.example.com"


def test_an_expired_stored_client_secret_means_registering_again() -> None:
    server = FakeAuthorizationServer(
        auth_methods=["client_secret_post"],
        registration_override={"client_secret_expires_at": NOW + 5},
    )
    world = World(servers=[server])
    _, first = authorized(world)
    assert first.record.client.client_secret_expires_at == NOW + 5
    flow = new_flow(record=first.record)
    drive(
        flow,
        world,
        flow.handle_challenge(403, bearer(error="insufficient_scope"), wall_time=NOW + 10),
        wall_time=NOW + 10,
    )
    assert len(server.registrations) == 2


# ==================================================== token endpoint auth


@pytest.mark.parametrize("method", ["none", "client_secret_basic", "client_secret_post"])
def test_the_method_the_server_registered_is_used(method: str) -> None:
    server = FakeAuthorizationServer(auth_methods=[method], registered_method=method)
    world = World(servers=[server])
    _, result = authorized(world)
    assert server.token_auth == [(method, result.record.client.client_id)]
    request = server.token_requests[0]
    assert ("client_secret" in request) is (method == "client_secret_post")
    assert request["resource"] == MCP_URL


@pytest.mark.parametrize(
    ("supported", "secret", "expected"),
    [
        (["client_secret_basic", "client_secret_post"], "pw", "client_secret_basic"),
        (["client_secret_post"], "pw", "client_secret_post"),
        (None, "pw", "client_secret_basic"),  # RFC 8414's default
        (["none"], None, "none"),
        (None, None, "none"),
    ],
)
def test_pre_registered_method_is_picked_from_what_the_server_supports(
    supported: list[str] | None, secret: str | None, expected: str
) -> None:
    server = FakeAuthorizationServer(
        auth_methods=supported or ["client_secret_basic", "none"],
        metadata={"token_endpoint_auth_methods_supported": supported},
    )
    server.clients["pre"] = (secret, expected)
    _, result = authorized(World(servers=[server]), client=PreRegisteredClient("pre", secret))
    assert server.token_auth == [(expected, "pre")]
    assert result.record.client.token_endpoint_auth_method == expected


def test_no_common_method_is_refused() -> None:
    server = FakeAuthorizationServer(auth_methods=["private_key_jwt"])
    flow = new_flow(client=PreRegisteredClient("pre", "pw"))
    with pytest.raises(UnsupportedClientAuthentication):
        drive(flow, World(servers=[server]), flow.handle_challenge(401, [], wall_time=NOW))


def test_basic_credentials_are_form_encoded_before_joining() -> None:
    server = FakeAuthorizationServer(auth_methods=["client_secret_basic"])
    server.clients["a:b c"] = ("p@ss:w/rd", "client_secret_basic")
    world = World(servers=[server])
    flow = new_flow(client=PreRegisteredClient("a:b c", "p@ss:w/rd"))
    step = step_until_redirect(flow, world)
    token_request = flow.receive_redirect(world.browse(step), wall_time=NOW)
    assert isinstance(token_request, OAuthHTTPRequest)
    header = dict(token_request.headers)["authorization"]
    assert base64.b64decode(header.removeprefix("Basic ")) == b"a%3Ab+c:p%40ss%3Aw%2Frd"


# private_key_jwt, with an ES256 key the test holds (the core never sees it)


@pytest.fixture
def es256() -> tuple[JWTSigner, Any]:
    ec = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ec")
    hashes = pytest.importorskip("cryptography.hazmat.primitives.hashes")
    utils = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.utils")
    key = ec.generate_private_key(ec.SECP256R1())

    def sign(data: bytes) -> bytes:
        r, s = utils.decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
        return bytes(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def verify(assertion: str, client_id: str) -> dict[str, Any] | None:
        header_b64, claims_b64, sig_b64 = assertion.split(".")
        pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
        raw = base64.urlsafe_b64decode(pad(sig_b64))
        der = utils.encode_dss_signature(
            int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
        )
        key.public_key().verify(
            der, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256())
        )
        header = json.loads(base64.urlsafe_b64decode(pad(header_b64)))
        claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(pad(claims_b64)))
        assert header == {"alg": "ES256", "typ": "JWT", "kid": "k1"}
        assert claims["iss"] == claims["sub"] == client_id
        return claims

    return JWTSigner("ES256", sign, key_id="k1"), verify


def test_private_key_jwt_client_credentials(es256: tuple[JWTSigner, Any]) -> None:
    signer, verify = es256
    server = FakeAuthorizationServer(
        auth_methods=["private_key_jwt"],
        assertion_verifier=verify,
        metadata={"token_endpoint_auth_signing_alg_values_supported": ["ES256"]},
    )
    server.clients["m2m"] = (None, "private_key_jwt")
    world = World(FakeResourceServer(scopes_supported=["mcp:tools"]), [server])
    flow = new_flow(
        grant_type="client_credentials", client=PreRegisteredClient("m2m"), signer=signer
    )
    result = drive(flow, world, flow.authorize(wall_time=NOW))
    form = server.token_requests[0]
    assert form["grant_type"] == "client_credentials"
    assert (form["scope"], form["resource"]) == ("mcp:tools", MCP_URL)
    claims = verify(form["client_assertion"], "m2m")
    assert claims["aud"] == ISSUER
    assert claims["exp"] - claims["iat"] == 60
    assert claims["iat"] == int(NOW)
    assert result.tokens.refresh_token is None
    assert world.log[-1] == ("POST", f"{ISSUER}/token")
    assert not any(method == "BROWSE" for method, _ in world.log)


def test_private_key_jwt_with_a_cimd_client(es256: tuple[JWTSigner, Any]) -> None:
    signer, verify = es256
    server = FakeAuthorizationServer(
        auth_methods=["private_key_jwt", "none"],
        assertion_verifier=verify,
        metadata={"client_id_metadata_document_supported": True},
    )
    _, result = authorized(World(servers=[server]), client_metadata_url=CIMD_URL, signer=signer)
    assert server.token_auth == [("private_key_jwt", CIMD_URL)]
    assert result.record.client.token_endpoint_auth_method == "private_key_jwt"


def test_a_signing_algorithm_the_server_refuses_is_not_used(es256: tuple[JWTSigner, Any]) -> None:
    signer, _ = es256
    server = FakeAuthorizationServer(
        auth_methods=["private_key_jwt"],
        metadata={"token_endpoint_auth_signing_alg_values_supported": ["RS256"]},
    )
    flow = new_flow(
        grant_type="client_credentials", client=PreRegisteredClient("m2m"), signer=signer
    )
    with pytest.raises(UnsupportedClientAuthentication):
        drive(flow, World(servers=[server]), flow.authorize(wall_time=NOW))


@pytest.mark.parametrize("algorithm", ["none", "HS256", ""])
def test_signers_must_be_asymmetric(algorithm: str) -> None:
    with pytest.raises(ValueError):
        JWTSigner(algorithm, lambda data: b"sig")
    with pytest.raises(ValueError):
        JWTSigner("ES256", lambda data: b"sig", lifetime=0)


def test_a_signer_returning_no_bytes_is_misuse() -> None:
    server = FakeAuthorizationServer(auth_methods=["private_key_jwt"])
    bad = JWTSigner("ES256", lambda data: "nope")  # type: ignore[arg-type,return-value]
    flow = new_flow(grant_type="client_credentials", client=PreRegisteredClient("m2m"), signer=bad)
    with pytest.raises(LocalProtocolError):
        drive(flow, World(servers=[server]), flow.authorize(wall_time=NOW))
    assert flow.state == OAuthState.FAILED


def test_client_credentials_with_a_secret() -> None:
    server = FakeAuthorizationServer(auth_methods=["client_secret_basic"])
    server.clients["m2m"] = ("pw", "client_secret_basic")
    world = World(servers=[server])
    flow = new_flow(grant_type="client_credentials", client=PreRegisteredClient("m2m", "pw"))
    result = drive(flow, world, flow.handle_challenge(401, bearer(scope="a b"), wall_time=NOW))
    assert server.token_requests[0]["scope"] == "a b"
    assert result.tokens.scope == "a b"
    # No refresh token: a 401 later runs the grant again.
    step = flow.handle_challenge(401, [], wall_time=NOW)
    assert isinstance(step, OAuthHTTPRequest) and step.purpose == "protected_resource_metadata"


def test_client_credentials_registers_as_a_confidential_client() -> None:
    server = FakeAuthorizationServer(auth_methods=["none", "client_secret_post"])
    flow = new_flow(grant_type="client_credentials")
    drive(flow, World(servers=[server]), flow.authorize(wall_time=NOW))
    assert server.registrations[0]["grant_types"] == ["client_credentials"]
    assert "redirect_uris" not in server.registrations[0]
    assert server.registrations[0]["token_endpoint_auth_method"] == "client_secret_post"


def test_client_credentials_refused_when_the_server_does_not_offer_it() -> None:
    server = FakeAuthorizationServer(metadata={"grant_types_supported": ["authorization_code"]})
    flow = new_flow(grant_type="client_credentials", client=PreRegisteredClient("m2m", "pw"))
    with pytest.raises(RemoteProtocolError, match="client_credentials"):
        drive(flow, World(servers=[server]), flow.authorize(wall_time=NOW))


# ============================================== authorization request, redirect


def test_authorization_request_parameters() -> None:
    world = World(FakeResourceServer(scopes_supported=["files:read"]))
    flow = new_flow()
    step = step_until_redirect(flow, world)
    query = dict(parse_qsl(urlsplit(step.url).query))
    assert query == {
        "response_type": "code",
        "client_id": "dyn-1",
        "redirect_uri": REDIRECT,
        "state": step.state,
        "code_challenge": step.code_challenge,
        "code_challenge_method": "S256",
        "scope": "files:read",
        "resource": MCP_URL,
    }
    assert step.code_challenge == s256(step.code_verifier)
    assert 43 <= len(step.code_verifier) <= 128 and len(step.state) >= 22
    assert (step.issuer, step.scope, step.resource) == (ISSUER, "files:read", MCP_URL)
    assert step.code_verifier not in repr(step)


def test_state_and_verifier_come_from_the_random_source() -> None:
    seen: list[int] = []

    def token_bytes(n: int) -> bytes:
        seen.append(n)
        return bytes([len(seen)]) * n

    world = World()
    flow = OAuthClientFlow(
        MCP_URL, OAuthClientConfig(redirect_uri=REDIRECT), token_bytes=token_bytes
    )
    step = step_until_redirect(flow, world)
    assert seen == [32, 16]
    assert step.code_verifier == base64.urlsafe_b64encode(b"\x01" * 32).rstrip(b"=").decode()
    assert step.state == base64.urlsafe_b64encode(b"\x02" * 16).rstrip(b"=").decode()


def _redirect_with(step: AuthorizationRequest, **params: str | None) -> str:
    query = {"code": "code-x", "state": step.state, "iss": ISSUER}
    for name, value in params.items():
        if value is None:
            query.pop(name, None)
        else:
            query[name] = value
    from urllib.parse import urlencode

    return f"{REDIRECT}?{urlencode(query)}"


@pytest.mark.parametrize(
    ("advertised", "iss", "outcome"),
    [
        # RFC 9207 2.4 as the 2026-07-28 table gives it.
        (True, ISSUER, "token"),
        (True, None, IssuerParameterMismatch),
        (False, ISSUER, "token"),
        (False, None, "token"),
        (True, "https://evil.example.com", IssuerParameterMismatch),
        (False, "https://evil.example.com", IssuerParameterMismatch),
        # Simple string comparison: no normalization at all.
        (True, ISSUER + "/", IssuerParameterMismatch),
        (True, ISSUER.replace("auth", "AUTH"), IssuerParameterMismatch),
        (True, ISSUER + ":443", IssuerParameterMismatch),
    ],
)
def test_the_iss_parameter(advertised: bool, iss: str | None, outcome: Any) -> None:
    world = World(
        servers=[
            FakeAuthorizationServer(
                metadata={"authorization_response_iss_parameter_supported": advertised}
            )
        ]
    )
    flow = new_flow()
    step = step_until_redirect(flow, world)
    redirect = _redirect_with(step, iss=iss)
    if outcome == "token":
        result = flow.receive_redirect(redirect, wall_time=NOW)
        assert isinstance(result, OAuthHTTPRequest) and result.purpose == "token"
    else:
        with pytest.raises(outcome):
            flow.receive_redirect(redirect, wall_time=NOW)
        assert flow.state == OAuthState.FAILED


@pytest.mark.parametrize("mode", ["wrong", "normalized", "omit"])
def test_iss_refusals_send_the_code_nowhere(mode: str) -> None:
    server = FakeAuthorizationServer(iss_in_redirect=mode)
    flow = new_flow()
    with pytest.raises(IssuerParameterMismatch):
        drive(flow, World(servers=[server]), flow.handle_challenge(401, [], wall_time=NOW))
    assert server.token_requests == []


def test_an_error_with_the_wrong_iss_is_not_acted_on() -> None:
    world = World()
    flow = new_flow()
    step = step_until_redirect(flow, world)
    redirect = _redirect_with(
        step, code=None, error="access_denied", iss="https://evil.example.com"
    )
    with pytest.raises(IssuerParameterMismatch):
        flow.receive_redirect(redirect, wall_time=NOW)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"state": "forged"}, StateMismatch),
        ({"state": None}, StateMismatch),
        ({"state": ""}, StateMismatch),
        ({"code": None}, InvalidAuthorizationResponse),
        ({"code": ""}, InvalidAuthorizationResponse),
        ({"error": "access_denied", "code": None}, AuthorizationDenied),
    ],
)
def test_redirect_refusals(change: dict[str, str | None], error: type) -> None:
    world = World()
    flow = new_flow()
    step = step_until_redirect(flow, world)
    with pytest.raises(error):
        flow.receive_redirect(_redirect_with(step, **change), wall_time=NOW)
    assert flow.state == OAuthState.FAILED
    assert world.auth.token_requests == []


def test_a_denied_authorization_carries_the_servers_error() -> None:
    server = FakeAuthorizationServer(deny="access_denied")
    flow = new_flow()
    with pytest.raises(AuthorizationDenied) as caught:
        drive(flow, World(servers=[server]), flow.handle_challenge(401, [], wall_time=NOW))
    assert (caught.value.error, caught.value.error_description) == (
        "access_denied",
        "the user said no",
    )


@pytest.mark.parametrize(
    "redirect",
    [
        "http://127.0.0.1:3000/other?code=c&state={state}",
        "http://127.0.0.1:3001/callback?code=c&state={state}",
        "https://127.0.0.1:3000/callback?code=c&state={state}",
        "http://127.0.0.1:3000/callback?code=c&code=d&state={state}",
        "http://127.0.0.1:3000/callback?code=c&state={state}&state={state}",
        "not a url",
    ],
)
def test_redirects_not_meant_for_us_are_refused(redirect: str) -> None:
    flow = new_flow()
    step = step_until_redirect(flow, World())
    with pytest.raises(InvalidAuthorizationResponse):
        flow.receive_redirect(redirect.format(state=step.state), wall_time=NOW)


def test_a_redirect_fragment_is_ignored_and_extra_parameters_too() -> None:
    world = World()
    flow = new_flow()
    step = step_until_redirect(flow, world)
    url = world.browse(step) + "&session_state=xyz#_=_"
    result = flow.receive_redirect(url, wall_time=NOW)
    assert isinstance(result, OAuthHTTPRequest)
    assert isinstance(flow.receive_response(*world.handle(result), wall_time=NOW), Authorized)


def test_authorization_endpoint_query_is_kept() -> None:
    server = FakeAuthorizationServer(
        metadata={"authorization_endpoint": f"{ISSUER}/authorize?tenant=t1"}
    )
    flow = new_flow()
    step = step_until_redirect(flow, World(servers=[server]))
    assert step.url.startswith(f"{ISSUER}/authorize?tenant=t1&response_type=code&")


# ==================================================================== scopes


@pytest.mark.parametrize(
    ("challenge_scope", "prm_scopes", "as_scopes", "offline", "expected"),
    [
        ("mcp:basic", ["mcp:basic", "mcp:read"], None, True, "mcp:basic"),
        (None, ["mcp:basic", "mcp:read", "mcp:write"], None, True, "mcp:basic mcp:read mcp:write"),
        (None, None, None, True, None),
        # offline_access only where the authorization server lists it...
        ("mcp:basic", None, ["mcp:basic", "offline_access"], True, "mcp:basic offline_access"),
        ("mcp:basic", None, ["mcp:basic"], True, "mcp:basic"),
        # ...only when asked for...
        ("mcp:basic", None, ["offline_access"], False, "mcp:basic"),
        # ...and never as the whole scope (that would narrow the server's default).
        (None, None, ["offline_access"], True, None),
        # The resource's own list never smuggles it in twice.
        (
            None,
            ["mcp:basic", "offline_access"],
            ["offline_access"],
            True,
            "mcp:basic offline_access",
        ),
    ],
)
def test_scope_selection(
    challenge_scope: str | None,
    prm_scopes: list[str] | None,
    as_scopes: list[str] | None,
    offline: bool,
    expected: str | None,
) -> None:
    server = FakeAuthorizationServer(metadata={"scopes_supported": as_scopes})
    world = World(FakeResourceServer(scopes_supported=prm_scopes), [server])
    flow = new_flow(request_offline_access=offline)
    headers = bearer(scope=challenge_scope) if challenge_scope else []
    step = step_until_redirect(flow, world, headers)
    assert step.scope == expected
    assert dict(parse_qsl(urlsplit(step.url).query)).get("scope") == expected


# =================================================================== step-up


def _step_up_world() -> World:
    return World(FakeResourceServer(scopes_supported=["mcp:profile"]))


@pytest.mark.parametrize(
    ("revision", "second"),
    [
        ("2026-07-28", "mcp:basic mcp:write"),
        ("2025-11-25", "mcp:write"),
        ("2025-06-18", "mcp:write"),
    ],
)
def test_step_up_scopes_per_revision(revision: str, second: str) -> None:
    world = _step_up_world()
    flow = new_flow(revision)
    first = drive(flow, world, flow.handle_challenge(401, bearer(scope="mcp:basic"), wall_time=NOW))
    assert first.record.requested_scope == "mcp:basic"
    step = flow.handle_challenge(
        403,
        bearer(error="insufficient_scope", scope="mcp:write"),
        wall_time=NOW,
        operation="tools/call",
    )
    result = drive(flow, world, step)
    assert [a.get("scope") for a in world.auth.authorizations] == ["mcp:basic", second]
    assert result.record.requested_scope == second


def test_step_up_limit_per_operation() -> None:
    world = _step_up_world()
    flow = new_flow()
    drive(flow, world, flow.handle_challenge(401, bearer(scope="mcp:admin"), wall_time=NOW))
    challenge = bearer(error="insufficient_scope", scope="mcp:admin")
    for _ in range(2):
        drive(flow, world, flow.handle_challenge(403, challenge, wall_time=NOW, operation="op"))
    with pytest.raises(StepUpLimitExceeded):
        flow.handle_challenge(403, challenge, wall_time=NOW, operation="op")
    # At most three authorizations in all (the conformance suite's limit), and
    # the refusal changes nothing: the tokens stay usable for other operations.
    assert len(world.auth.authorizations) == 3
    assert flow.state == OAuthState.AUTHORIZED
    assert flow.authorization_header(NOW) is not None
    # Another operation has its own count; a success resets one.
    assert isinstance(
        flow.handle_challenge(403, challenge, wall_time=NOW, operation="other"), OAuthHTTPRequest
    )


def test_a_success_resets_the_step_up_count() -> None:
    world = _step_up_world()
    flow = new_flow(max_step_ups=1)
    drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    challenge = bearer(error="insufficient_scope", scope="x")
    drive(flow, world, flow.handle_challenge(403, challenge, wall_time=NOW))
    with pytest.raises(StepUpLimitExceeded):
        flow.handle_challenge(403, challenge, wall_time=NOW)
    flow.operation_succeeded()
    drive(flow, world, flow.handle_challenge(403, challenge, wall_time=NOW))


def test_step_up_counters_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_core._oauth

    monkeypatch.setattr(mcp_core._oauth, "_MAX_OPERATIONS", 3)
    world = _step_up_world()
    flow = new_flow(max_step_ups=1)
    drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    challenge = bearer(error="insufficient_scope", scope="x")
    for op in range(5):
        drive(flow, world, flow.handle_challenge(403, challenge, wall_time=NOW, operation=op))
    # The oldest counts were dropped: operation 0 may step up again, 4 may not.
    with pytest.raises(StepUpLimitExceeded):
        flow.handle_challenge(403, challenge, wall_time=NOW, operation=4)
    assert isinstance(
        flow.handle_challenge(403, challenge, wall_time=NOW, operation=0), OAuthHTTPRequest
    )


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (403, []),
        (403, [("www-authenticate", 'Bearer error="invalid_token"')]),
        (400, []),
        (500, []),
    ],
)
def test_responses_that_are_not_challenges_are_misuse(
    status: int, headers: list[tuple[str, str]]
) -> None:
    flow = new_flow()
    with pytest.raises(LocalProtocolError):
        flow.handle_challenge(status, headers, wall_time=NOW)
    assert flow.state == OAuthState.IDLE


# ================================================================== refresh


def test_a_401_with_a_refresh_token_rediscovers_then_refreshes() -> None:
    world = World()
    flow, first = authorized(world)
    assert first.tokens.refresh_token is not None
    del world.log[:]
    step = flow.handle_challenge(401, bearer(error="invalid_token"), wall_time=NOW + 4000)
    result = drive(flow, world, step, wall_time=NOW + 4000)
    # The resource may have moved: PRM and metadata first, then (same issuer) a refresh.
    assert world.log == [
        ("GET", PRM_PATH),
        ("GET", f"{ISSUER}/.well-known/oauth-authorization-server"),
        ("POST", f"{ISSUER}/token"),
    ]
    assert world.auth.token_requests[-1] == {
        "grant_type": "refresh_token",
        "refresh_token": first.tokens.refresh_token,
        "resource": MCP_URL,
        "client_id": first.record.client.client_id,
    }
    assert result.tokens.access_token != first.tokens.access_token
    assert result.tokens.refresh_token != first.tokens.refresh_token  # rotated
    assert result.tokens.expires_at == NOW + 4000 + 3600
    assert result.record.client == first.record.client


def test_a_401_after_the_resource_moved_registers_with_the_new_server() -> None:
    """SEP-2352: the old server's refresh token and client id stay with it."""
    old = FakeAuthorizationServer()
    new = FakeAuthorizationServer(issuer="https://as2.example.com", _serial=itertools.count(100))
    world = World(servers=[old, new])
    flow, first = authorized(world)
    world.resource.authorization_servers = ["https://as2.example.com"]
    result = drive(
        flow, world, flow.handle_challenge(401, bearer(scope="mcp:basic"), wall_time=NOW)
    )
    assert [f["grant_type"] for f in old.token_requests] == ["authorization_code"]
    assert len(new.registrations) == 1
    assert first.record.client.client_id not in {a["client_id"] for a in new.authorizations}
    assert {c for _, c in new.token_auth} == {result.record.client.client_id}
    assert (result.record.issuer, result.record.client.issuer) == ("https://as2.example.com",) * 2


def test_repeated_401s_for_one_operation_stop() -> None:
    world = World()
    flow, _ = authorized(world, max_reauthorizations=2)
    for _ in range(2):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW, operation="tools/list"))
    with pytest.raises(ReauthorizationLimitExceeded):
        flow.handle_challenge(401, [], wall_time=NOW, operation="tools/list")
    assert flow.state == OAuthState.AUTHORIZED
    flow.operation_succeeded("tools/list")
    drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW, operation="tools/list"))
    # The first 401, with no token held yet, is not a retry.
    fresh = new_flow(max_reauthorizations=0)
    drive(fresh, world, fresh.handle_challenge(401, [], wall_time=NOW))
    with pytest.raises(ReauthorizationLimitExceeded):
        fresh.handle_challenge(401, [], wall_time=NOW)


def test_refresh_after_a_restart_from_the_stored_record() -> None:
    world = World()
    _, first = authorized(world)
    stored = json.dumps(first.record.to_dict())
    record = OAuthRecord.from_dict(json.loads(stored))
    assert record == first.record
    flow = new_flow(record=record)
    assert flow.state == OAuthState.AUTHORIZED
    later = NOW + 3590
    assert flow.authorization_header(later) == ("authorization", first.tokens.authorization)
    assert flow.needs_refresh(later)  # within refresh_margin
    assert flow.authorization_header(NOW + 3600) is None
    result = drive(flow, world, flow.refresh(wall_time=later), wall_time=later)
    assert world.log[-1] == ("POST", f"{ISSUER}/token")
    assert flow.authorization_header(later) == result.header


def test_authorize_uses_what_is_held_before_asking_anyone() -> None:
    world = World()
    _, first = authorized(world)
    flow = new_flow(record=first.record)
    assert flow.authorize(wall_time=NOW + 10) == Authorized(first.tokens, first.record)
    step = flow.authorize(wall_time=NOW + 3599)
    assert isinstance(step, OAuthHTTPRequest) and step.purpose == "token"


def test_a_refresh_response_without_a_refresh_token_keeps_the_old_one() -> None:
    server = FakeAuthorizationServer()
    world = World(servers=[server])
    flow, first = authorized(world)
    server.issue_refresh = False
    server._refresh[first.tokens.refresh_token or ""] = {
        "client_id": first.record.client.client_id,
        "resource": MCP_URL,
    }
    result = drive(flow, world, flow.refresh(wall_time=NOW), wall_time=NOW)
    assert result.tokens.refresh_token == first.tokens.refresh_token


@pytest.mark.parametrize("error", ["invalid_grant", "invalid_client"])
def test_a_refused_refresh_authorizes_again(error: str) -> None:
    server = FakeAuthorizationServer()
    world = World(servers=[server])
    flow, first = authorized(world)
    server.refresh_error = error
    del world.log[:]
    hint = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    step = flow.handle_challenge(401, bearer(resource_metadata=hint, scope="s2"), wall_time=NOW)
    result = drive(flow, world, step)
    # Discovery is not repeated: the refused refresh goes straight on to authorization.
    assert [m for m, _ in world.log] == ["GET", "GET", "POST"] + (
        ["POST"] if error == "invalid_client" else []
    ) + ["BROWSE", "POST"]
    # invalid_client: the client id went too, so it registers again.
    assert len(server.registrations) == (2 if error == "invalid_client" else 1)
    assert server.authorizations[-1]["scope"] == "s2"
    assert result.tokens.access_token != first.tokens.access_token


def test_a_refused_proactive_refresh_discovers() -> None:
    server = FakeAuthorizationServer()
    world = World(servers=[server])
    _, first = authorized(world)
    server.refresh_error = "invalid_grant"
    flow = new_flow(record=first.record)
    step = flow.refresh(wall_time=NOW)
    status, body = world.handle(step)
    step = flow.receive_response(status, body, wall_time=NOW)
    assert isinstance(step, OAuthHTTPRequest) and step.url == PRM_PATH
    assert flow.tokens is None and flow.record is not None
    drive(flow, world, step)


def test_a_refresh_answered_by_a_server_error_fails_the_flow_but_keeps_the_record() -> None:
    server = FakeAuthorizationServer()
    world = World(servers=[server])
    flow, first = authorized(world)
    server.token_status = 503
    server.token_error = "temporarily_unavailable"
    with pytest.raises(TokenRequestRejected) as caught:
        drive(flow, world, flow.refresh(wall_time=NOW))
    assert (caught.value.status, caught.value.error) == (503, "temporarily_unavailable")
    assert flow.state == OAuthState.FAILED
    assert flow.record == first.record  # start a new flow from it

    server.token_status = 502
    flow = new_flow(record=first.record)
    flow.refresh(wall_time=NOW)
    with pytest.raises(TokenRequestRejected) as caught:
        flow.receive_response(502, b"<html>bad gateway</html>", wall_time=NOW)
    assert caught.value.error is None


def test_refresh_without_a_refresh_token_is_misuse() -> None:
    server = FakeAuthorizationServer(issue_refresh=False)
    flow, _ = authorized(World(servers=[server]))
    with pytest.raises(LocalProtocolError):
        flow.refresh(wall_time=NOW)
    assert flow.state == OAuthState.AUTHORIZED


def test_a_stored_private_key_jwt_client_needs_a_signer() -> None:
    record = OAuthRecord(
        token_endpoint=f"{ISSUER}/token",
        client=__import__("mcp_core.oauth", fromlist=["ClientRegistration"]).ClientRegistration(
            "m2m", "private_key_jwt", "pre-registered", ISSUER
        ),
        tokens=TokenSet("at", refresh_token="rt"),
        issuer=ISSUER,
        resource=MCP_URL,
    )
    flow = new_flow(record=record)
    with pytest.raises(LocalProtocolError):
        flow.refresh(wall_time=NOW)


# ============================================================ token responses


@pytest.mark.parametrize(
    ("status", "doc", "error"),
    [
        (200, {"token_type": "Bearer"}, InvalidTokenResponse),
        (200, {"access_token": "", "token_type": "Bearer"}, InvalidTokenResponse),
        (200, {"access_token": "a b", "token_type": "Bearer"}, InvalidTokenResponse),
        (200, {"access_token": "a\r\nX-Evil: 1", "token_type": "Bearer"}, InvalidTokenResponse),
        (200, {"access_token": "a", "token_type": "DPoP"}, UnsupportedTokenType),
        (200, {"access_token": "a", "token_type": 1}, UnsupportedTokenType),
        (200, {"access_token": "a", "expires_in": -1}, InvalidTokenResponse),
        (200, {"access_token": "a", "expires_in": True}, InvalidTokenResponse),
        (200, {"access_token": "a", "expires_in": "soon"}, InvalidTokenResponse),
        (200, {"access_token": "a", "refresh_token": "r r"}, InvalidTokenResponse),
        (200, ["not", "an", "object"], InvalidTokenResponse),
        (400, {"error": "invalid_grant", "error_description": "expired"}, TokenRequestRejected),
    ],
)
def test_bad_token_responses(status: int, doc: Any, error: type) -> None:
    world = World()
    flow = new_flow()
    step = step_until_redirect(flow, world)
    flow.receive_redirect(world.browse(step), wall_time=NOW)
    with pytest.raises(error):
        flow.receive_response(status, json.dumps(doc).encode(), wall_time=NOW)
    assert flow.state == OAuthState.FAILED
    assert flow.record is None


@pytest.mark.parametrize(
    ("doc", "expires_at", "scope"),
    [
        ({"access_token": "a", "token_type": "bearer", "expires_in": 60}, NOW + 60, "asked"),
        ({"access_token": "a", "expires_in": "60"}, NOW + 60, "asked"),
        ({"access_token": "a", "expires_in": 1.5, "scope": "granted"}, NOW + 1.5, "granted"),
        ({"access_token": "a"}, None, "asked"),
    ],
)
def test_lenient_token_responses(doc: dict[str, Any], expires_at: float | None, scope: str) -> None:
    world = World()
    flow = new_flow()
    step = step_until_redirect(flow, world, bearer(scope="asked"))
    flow.receive_redirect(world.browse(step), wall_time=NOW)
    result = flow.receive_response(200, json.dumps(doc).encode(), wall_time=NOW)
    assert isinstance(result, Authorized)
    assert (result.tokens.token_type, result.tokens.expires_at, result.tokens.scope) == (
        "Bearer",
        expires_at,
        scope,
    )
    assert result.tokens.expired(NOW + 10**9) is (expires_at is not None)


# ================================================================== records


def test_records_round_trip_and_hide_secrets_in_reprs() -> None:
    server = FakeAuthorizationServer(auth_methods=["client_secret_post"])
    _, result = authorized(World(servers=[server]))
    record = result.record
    assert record.client.client_secret and record.tokens and record.tokens.refresh_token
    data = record.to_dict()
    assert OAuthRecord.from_dict(data) == record
    for secret in (
        record.client.client_secret,
        record.tokens.access_token,
        record.tokens.refresh_token,
    ):
        assert secret not in repr(record) and secret not in repr(result)
    without = OAuthRecord(record.token_endpoint, record.client)
    assert OAuthRecord.from_dict(without.to_dict()) == without


@pytest.mark.parametrize(
    "change",
    [
        {"version": 2},
        {"client": None},
        {"tokens": "x"},
        {"token_endpoint": ""},
        {"client": {"kind": "stolen"}},
        {"client": {"client_id": 3}},
        {"client": {"client_secret_expires_at": "never"}},
        {"client": {"client_secret_expires_at": float("nan")}},
        {"tokens": {"access_token": "a b"}},
        {"tokens": {"refresh_token": "r\n"}},
        {"tokens": {"expires_at": True}},
    ],
)
def test_malformed_records_are_refused(change: dict[str, Any]) -> None:
    record = OAuthRecord(
        f"{ISSUER}/token",
        __import__("mcp_core.oauth", fromlist=["ClientRegistration"]).ClientRegistration(
            "c", "none", "dynamic", ISSUER
        ),
        TokenSet("at", expires_at=NOW, refresh_token="rt"),
        ISSUER,
        MCP_URL,
    )
    data = record.to_dict()
    for name, value in change.items():
        if isinstance(value, dict) and isinstance(data.get(name), dict):
            data[name] = {**data[name], **value}
        else:
            data[name] = value
    with pytest.raises(ValueError):
        OAuthRecord.from_dict(data)
    with pytest.raises(ValueError):
        OAuthRecord.from_dict("not a mapping")  # type: ignore[arg-type]


def test_a_record_for_another_server_is_refused() -> None:
    world = World()
    _, result = authorized(world)
    with pytest.raises(ValueError):
        OAuthClientFlow(
            "https://other.example.com/mcp",
            OAuthClientConfig(redirect_uri=REDIRECT),
            record=result.record,
        )


# ============================================================ misuse, config


def test_inputs_outside_their_states_are_misuse() -> None:
    flow = new_flow()
    for call in (
        lambda: flow.receive_response(200, b"{}", wall_time=NOW),
        lambda: flow.receive_redirect(REDIRECT, wall_time=NOW),
        lambda: flow.refresh(wall_time=NOW),
    ):
        with pytest.raises(LocalProtocolError):
            call()
    assert flow.state == OAuthState.IDLE
    flow.handle_challenge(401, [], wall_time=NOW)
    with pytest.raises(LocalProtocolError):
        flow.handle_challenge(401, [], wall_time=NOW)  # one flow at a time
    with pytest.raises(LocalProtocolError):
        flow.receive_redirect(REDIRECT, wall_time=NOW)
    with pytest.raises(LocalProtocolError):
        flow.receive_response(200, b"{}", wall_time=float("nan"))
    assert flow.state == OAuthState.DISCOVERING_RESOURCE


def test_a_failed_flow_refuses_everything_but_keeps_its_record() -> None:
    world = World(FakeResourceServer(resource="https://evil.example.com/mcp"))
    flow = new_flow()
    with pytest.raises(RemoteProtocolError):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    for call in (
        lambda: flow.handle_challenge(401, [], wall_time=NOW),
        lambda: flow.authorize(wall_time=NOW),
        lambda: flow.receive_response(200, b"", wall_time=NOW),
    ):
        with pytest.raises(LocalProtocolError):
            call()


@pytest.mark.parametrize(
    "config",
    [
        {},  # the code grant needs a redirect URI
        {"redirect_uri": "http://app.example.com/cb"},
        {"redirect_uri": "myapp://callback"},
        {"redirect_uri": REDIRECT, "grant_type": "implicit"},
        {"redirect_uri": REDIRECT, "client_metadata_url": "http://client.example.com/c.json"},
        {"redirect_uri": REDIRECT, "client_metadata_url": "https://client.example.com/"},
        {"redirect_uri": REDIRECT, "max_step_ups": -1},
        {"redirect_uri": REDIRECT, "refresh_margin": -1},
        {"redirect_uri": REDIRECT, "max_response_bytes": 10},
        {"redirect_uri": REDIRECT, "registration_extras": {"redirect_uris": ["https://evil/"]}},
    ],
)
def test_bad_configurations(config: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        OAuthClientConfig(**config)


def test_bad_flow_arguments() -> None:
    config = OAuthClientConfig(redirect_uri=REDIRECT)
    with pytest.raises(ValueError):
        OAuthClientFlow("mcp.example.com/mcp", config)
    with pytest.raises(ValueError):
        OAuthClientFlow(MCP_URL, config, revision="2099-01-01")
    with pytest.raises(ValueError):
        PreRegisteredClient("")


def test_client_metadata_document() -> None:
    config = OAuthClientConfig(
        redirect_uri=REDIRECT,
        client_metadata_url=CIMD_URL,
        client_name="Example",
        logo_uri="https://client.example.com/logo.png",
        registration_extras={"contacts": ["ops@example.com"]},
    )
    assert config.client_metadata_document() == {
        "client_id": CIMD_URL,
        "client_name": "Example",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
        "logo_uri": "https://client.example.com/logo.png",
        "contacts": ["ops@example.com"],
    }
    with pytest.raises(LocalProtocolError):
        OAuthClientConfig(redirect_uri=REDIRECT).client_metadata_document()


def test_authorize_without_a_refresh_token_discovers_again() -> None:
    server = FakeAuthorizationServer(issue_refresh=False)
    _, first = authorized(World(servers=[server]))
    flow = new_flow(record=first.record)
    step = flow.authorize(wall_time=NOW + 3600)
    assert isinstance(step, OAuthHTTPRequest) and step.url == PRM_PATH


@pytest.mark.parametrize(
    ("config", "methods"),
    [
        ({}, ["client_secret_basic"]),  # a public CIMD client needs "none"
        ({"grant_type": "client_credentials"}, ["none", "client_secret_basic"]),  # needs a key
    ],
)
def test_cimd_is_skipped_when_its_method_is_impossible(
    config: dict[str, Any], methods: list[str]
) -> None:
    server = FakeAuthorizationServer(
        auth_methods=methods, metadata={"client_id_metadata_document_supported": True}
    )
    flow = new_flow(client_metadata_url=CIMD_URL, **config)
    drive(flow, World(servers=[server]), flow.authorize(wall_time=NOW))
    assert len(server.registrations) == 1
    assert server.registrations[0]["token_endpoint_auth_method"] == "client_secret_basic"


def test_the_configured_registration_method_is_asked_for() -> None:
    server = FakeAuthorizationServer(auth_methods=["none", "client_secret_post"])
    _, result = authorized(World(servers=[server]), token_endpoint_auth_method="client_secret_post")
    assert server.registrations[0]["token_endpoint_auth_method"] == "client_secret_post"
    assert server.token_auth == [("client_secret_post", result.record.client.client_id)]


def test_legacy_client_credentials_and_refresh_without_a_resource() -> None:
    server = FakeAuthorizationServer(issuer="https://mcp.example.com", metadata_at=())
    server.auth_methods = ["client_secret_post", "none"]
    server.clients["m2m"] = ("pw", "client_secret_post")
    world = World(FakeResourceServer(prm_at=()), [server])
    pre = PreRegisteredClient("m2m", "pw", token_endpoint_auth_method="client_secret_post")
    flow = new_flow("2025-03-26", grant_type="client_credentials", client=pre)
    drive(flow, world, flow.authorize(wall_time=NOW))
    assert "resource" not in server.token_requests[0]

    flow = new_flow("2025-03-26")
    result = drive(flow, world, flow.authorize(wall_time=NOW))
    assert result.record.resource is None
    drive(flow, world, flow.refresh(wall_time=NOW))
    assert server.token_requests[-1]["grant_type"] == "refresh_token"
    assert "resource" not in server.token_requests[-1]


def _stored(method: str, secret: str | None) -> OAuthRecord:
    from mcp_core.oauth import ClientRegistration

    return OAuthRecord(
        f"{ISSUER}/token",
        ClientRegistration("c", method, "pre-registered", ISSUER, secret),
        TokenSet("at", refresh_token="rt"),
        ISSUER,
        MCP_URL,
    )


@pytest.mark.parametrize(
    ("method", "secret"),
    [("client_secret_basic", None), ("client_secret_post", None), ("tls_client_auth", "pw")],
)
def test_stored_clients_this_flow_cannot_authenticate_as(method: str, secret: str | None) -> None:
    flow = new_flow(record=_stored(method, secret))
    with pytest.raises(UnsupportedClientAuthentication):
        flow.refresh(wall_time=NOW)
    assert flow.state == OAuthState.FAILED


def test_a_redirect_that_is_not_a_string_is_refused() -> None:
    flow = new_flow()
    step_until_redirect(flow, World())
    with pytest.raises(InvalidAuthorizationResponse):
        flow.receive_redirect(None, wall_time=NOW)  # type: ignore[arg-type]


def test_errors_repr_without_secrets() -> None:
    assert repr(StateMismatch("bad state")) == "StateMismatch('bad state')"
    assert StateMismatch("x").reason == "state_mismatch"
    assert isinstance(StateMismatch("x"), RemoteProtocolError)
