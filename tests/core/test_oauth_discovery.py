"""Discovery through the flow, revision by revision: which documents are fetched,
in which order, and every refusal the spec requires of what they contain."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from mcp_core import LocalProtocolError
from mcp_core.oauth import (
    AUTHORIZATION_RULES,
    Authorized,
    InsecureURL,
    InvalidMetadata,
    IssuerMismatch,
    MetadataNotFound,
    OAuthClientConfig,
    OAuthClientFlow,
    OAuthError,
    OAuthHTTPRequest,
    OAuthState,
    PKCENotSupported,
    PreRegisteredClient,
    ResourceMismatch,
    UnsupportedGrantType,
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
)

PRM_PATH = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
PRM_ROOT = "https://mcp.example.com/.well-known/oauth-protected-resource"
CUSTOM = "https://mcp.example.com/custom/metadata.json"
AS_OAUTH = f"{ISSUER}/.well-known/oauth-authorization-server"
AS_OIDC = f"{ISSUER}/.well-known/openid-configuration"
TENANT = f"{ISSUER}/tenant1"
T_OAUTH = f"{ISSUER}/.well-known/oauth-authorization-server/tenant1"
T_OIDC = f"{ISSUER}/.well-known/openid-configuration/tenant1"
T_APPEND = f"{ISSUER}/tenant1/.well-known/openid-configuration"
LEGACY_AS = "https://mcp.example.com/.well-known/oauth-authorization-server"
ALL = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
PRM_ERA = ("2025-06-18", "2025-11-25", "2026-07-28")
MODERN_DISCOVERY = ("2025-11-25", "2026-07-28")


def challenge(hint: str | None = None, scope: str | None = None) -> list[tuple[str, str]]:
    params = []
    if hint is not None:
        params.append(f'resource_metadata="{hint}"')
    if scope is not None:
        params.append(f'scope="{scope}"')
    return [("www-authenticate", "Bearer " + ", ".join(params) if params else "Bearer")]


def new_flow(revision: str = "2026-07-28", url: str = MCP_URL, **config: Any) -> OAuthClientFlow:
    return OAuthClientFlow(
        url,
        OAuthClientConfig(redirect_uri=REDIRECT, **config),
        revision=revision,
        token_bytes=counter_bytes(),
    )


@dataclass
class Case:
    revision: str
    gets: list[str]
    resource: dict[str, Any] = field(default_factory=dict)
    auth: dict[str, Any] = field(default_factory=dict)
    hint: str | None = None
    error: type[OAuthError] | None = None


CASES: dict[str, Case] = {
    # Protected Resource Metadata: the hint, else path-based, else root.
    **{
        f"hint-{r}": Case(
            r, [CUSTOM, AS_OAUTH], {"prm_at": ("/custom/metadata.json",)}, hint=CUSTOM
        )
        for r in ALL
    },
    **{f"path-{r}": Case(r, [PRM_PATH, AS_OAUTH]) for r in ALL},
    **{f"root-{r}": Case(r, [PRM_PATH, PRM_ROOT, AS_OAUTH], {"prm_at": ("root",)}) for r in ALL},
    "hint-not-found-no-fallback": Case(
        "2026-07-28", [CUSTOM], {"prm_at": ("path",)}, hint=CUSTOM, error=MetadataNotFound
    ),
    **{
        f"no-prm-{r}": Case(r, [PRM_PATH, PRM_ROOT], {"prm_at": ()}, error=MetadataNotFound)
        for r in PRM_ERA
    },
    # A 200 that is not JSON (an SPA's catch-all page) is "not here".
    "prm-html-200": Case(
        "2026-07-28",
        [PRM_PATH, PRM_ROOT],
        {"prm_at": ("path", "root"), "prm_body": b"<html>app</html>"},
        error=MetadataNotFound,
    ),
    # Authorization server metadata, issuer with a path: RFC 8414 insertion,
    # then OpenID insertion, then OpenID appending (2025-11-25 on).
    **{
        f"tenant-oauth-{r}": Case(
            r, [PRM_PATH, T_OAUTH], {"authorization_servers": [TENANT]}, {"issuer": TENANT}
        )
        for r in ALL
    },
    **{
        f"tenant-oidc-insert-{r}": Case(
            r,
            [PRM_PATH, T_OAUTH, T_OIDC],
            {"authorization_servers": [TENANT]},
            {"issuer": TENANT, "metadata_at": ("openid",)},
        )
        for r in MODERN_DISCOVERY
    },
    **{
        f"tenant-oidc-append-{r}": Case(
            r,
            [PRM_PATH, T_OAUTH, T_OIDC, T_APPEND],
            {"authorization_servers": [TENANT]},
            {"issuer": TENANT, "metadata_at": ("openid-append",)},
        )
        for r in MODERN_DISCOVERY
    },
    **{
        f"root-oidc-{r}": Case(r, [PRM_PATH, AS_OAUTH, AS_OIDC], auth={"metadata_at": ("openid",)})
        for r in MODERN_DISCOVERY
    },
    # 2025-06-18 knows RFC 8414 only: an OpenID-only server is not found.
    "oidc-only-2025-06-18": Case(
        "2025-06-18",
        [PRM_PATH, AS_OAUTH],
        auth={"metadata_at": ("openid",)},
        error=MetadataNotFound,
    ),
    "nothing-at-all-2026": Case(
        "2026-07-28",
        [PRM_PATH, T_OAUTH, T_OIDC, T_APPEND],
        {"authorization_servers": [TENANT]},
        {"issuer": TENANT, "metadata_at": ()},
        error=MetadataNotFound,
    ),
    # 2025-03-26 (and 2024-11-05, which defines no authorization): without PRM,
    # the MCP server's origin is the authorization server.
    **{
        f"legacy-metadata-{r}": Case(
            r,
            [PRM_PATH, PRM_ROOT, LEGACY_AS],
            {"prm_at": ()},
            {"issuer": "https://mcp.example.com", "prefix": "/oauth"},
        )
        for r in ("2024-11-05", "2025-03-26")
    },
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_discovery_order(case: Case) -> None:
    world = World(FakeResourceServer(**case.resource), [FakeAuthorizationServer(**case.auth)])
    flow = new_flow(case.revision)
    step = flow.handle_challenge(401, challenge(case.hint), wall_time=NOW)
    if case.error is not None:
        with pytest.raises(case.error):
            drive(flow, world, step)
        assert flow.state == OAuthState.FAILED
    else:
        result = drive(flow, world, step)
        assert result.header == ("authorization", result.tokens.authorization)
        assert flow.state == OAuthState.AUTHORIZED
    assert world.gets() == case.gets


def test_metadata_not_found_lists_every_attempt_in_order() -> None:
    world = World(FakeResourceServer(prm_at=()))
    flow = new_flow()
    with pytest.raises(MetadataNotFound) as caught:
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    assert caught.value.attempts == ((PRM_PATH, 404), (PRM_ROOT, 404))


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_legacy_default_endpoints_when_the_origin_serves_no_metadata(revision: str) -> None:
    server = FakeAuthorizationServer(issuer="https://mcp.example.com", metadata_at=())
    world = World(FakeResourceServer(prm_at=()), [server])
    flow = new_flow(revision)
    result = drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    assert world.log == [
        ("GET", PRM_PATH),
        ("GET", PRM_ROOT),
        ("GET", LEGACY_AS),
        ("POST", "https://mcp.example.com/register"),
        ("BROWSE", "https://mcp.example.com/authorize"),
        ("POST", "https://mcp.example.com/token"),
    ]
    # No PRM: no resource to name (RFC 8707 came with 2025-06-18), no issuer to bind.
    assert "resource" not in server.authorizations[0]
    assert "resource" not in server.token_requests[0]
    assert (result.record.issuer, result.record.resource) == (None, None)
    # Without metadata nothing advertises PKCE, and S256 is still used.
    assert server.authorizations[0]["code_challenge_method"] == "S256"


def test_legacy_metadata_issuer_must_be_the_origin() -> None:
    server = FakeAuthorizationServer(issuer="https://mcp.example.com/oauth")
    server.metadata_at = ("/.well-known/oauth-authorization-server",)
    world = World(FakeResourceServer(prm_at=()), [server])
    flow = new_flow("2025-03-26")
    with pytest.raises(IssuerMismatch):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))


def test_a_2025_03_26_client_still_uses_prm_when_the_server_has_it() -> None:
    world = World()
    flow = new_flow("2025-03-26")
    drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    assert world.auth.authorizations[0]["resource"] == MCP_URL


def test_the_protocol_version_header_goes_to_the_mcp_servers_origin_only() -> None:
    flow = new_flow("2025-06-18")
    step = flow.handle_challenge(401, [], wall_time=NOW)
    assert isinstance(step, OAuthHTTPRequest)
    assert dict(step.headers) == {
        "host": "mcp.example.com",
        "accept": "application/json",
        "mcp-protocol-version": "2025-06-18",
    }
    prm = b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": ["%s"]}' % (
        ISSUER.encode()
    )
    step = flow.receive_response(200, prm, wall_time=NOW)
    assert isinstance(step, OAuthHTTPRequest) and step.url == AS_OAUTH
    assert "mcp-protocol-version" not in dict(step.headers)
    assert (step.host, step.target, step.secure, step.port) == (
        "auth.example.com",
        "/.well-known/oauth-authorization-server",
        True,
        443,
    )


def test_the_rules_table_covers_every_revision() -> None:
    from mcp_core import ALL_REVISIONS

    assert set(AUTHORIZATION_RULES) == set(ALL_REVISIONS)
    assert [r for r, rules in AUTHORIZATION_RULES.items() if rules.accumulate_scopes] == [
        "2026-07-28"
    ]


# ================================================================= refusals


@pytest.mark.parametrize(
    "resource",
    [
        "https://evil.example.com/mcp",
        "https://mcp.example.com/other",
        "http://mcp.example.com/mcp",
        "https://mcp.example.com:8443/mcp",
    ],
)
def test_prm_for_another_resource_is_refused_before_any_authorization(resource: str) -> None:
    world = World(FakeResourceServer(resource=resource))
    flow = new_flow()
    with pytest.raises(ResourceMismatch):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    assert world.gets() == [PRM_PATH]
    assert world.auth.authorizations == []


def test_prm_at_the_root_for_the_whole_origin_covers_the_endpoint() -> None:
    world = World(FakeResourceServer(prm_at=("root",)))
    flow = new_flow()
    drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    # The resource named in requests is the PRM's own identifier.
    assert world.auth.authorizations[0]["resource"] == "https://mcp.example.com"


@pytest.mark.parametrize("revision", ALL)
def test_metadata_whose_issuer_differs_is_not_used(revision: str) -> None:
    server = FakeAuthorizationServer(
        prefix="/mismatched", metadata={"issuer": "https://attacker.example.com"}
    )
    world = World(servers=[server])
    flow = new_flow(revision)
    with pytest.raises(IssuerMismatch):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    assert world.gets() == [PRM_PATH, AS_OAUTH]
    assert server.registrations == server.authorizations == server.token_requests == []


@pytest.mark.parametrize(
    ("issuer_in_document"),
    [f"{ISSUER}/", ISSUER.upper().replace("HTTPS", "https"), f"{ISSUER}:443"],
)
def test_issuer_comparison_is_exact(issuer_in_document: str) -> None:
    world = World(servers=[FakeAuthorizationServer(metadata={"issuer": issuer_in_document})])
    flow = new_flow()
    with pytest.raises(IssuerMismatch):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))


@pytest.mark.parametrize(
    ("where", "setup"),
    [
        ("hint", {"hint": "http://mcp.example.com/.well-known/oauth-protected-resource"}),
        ("server", {"url": "http://mcp.example.com/mcp"}),
        ("issuer", {"authorization_servers": ["http://auth.example.com"]}),
        ("token endpoint", {"metadata": {"token_endpoint": "http://auth.example.com/token"}}),
        ("authorize", {"metadata": {"authorization_endpoint": "http://auth.example.com/a"}}),
        ("register", {"metadata": {"registration_endpoint": "http://auth.example.com/r"}}),
        ("userinfo", {"metadata": {"token_endpoint": "https://me@auth.example.com/token"}}),
    ],
)
def test_metadata_and_endpoints_over_plain_http_are_refused(
    where: str, setup: dict[str, Any]
) -> None:
    url = setup.get("url", MCP_URL)
    resource = FakeResourceServer(url=url)
    if "authorization_servers" in setup:
        resource.authorization_servers = setup["authorization_servers"]
    world = World(resource, [FakeAuthorizationServer(metadata=setup.get("metadata", {}))])
    flow = new_flow(url=url)
    with pytest.raises(InsecureURL):
        drive(flow, world, flow.handle_challenge(401, challenge(setup.get("hint")), wall_time=NOW))
    assert world.auth.authorizations == []


def test_everything_on_loopback_may_be_plain_http() -> None:
    server = FakeAuthorizationServer(issuer="http://127.0.0.1:9000")
    resource = FakeResourceServer(
        url="http://localhost:8000/mcp", authorization_servers=["http://127.0.0.1:9000"]
    )
    flow = new_flow(url="http://localhost:8000/mcp")
    step = flow.handle_challenge(401, [], wall_time=NOW)
    assert isinstance(step, OAuthHTTPRequest)
    assert (step.secure, step.port, step.host) == (False, 8000, "localhost:8000")
    result = drive(flow, World(resource, [server]), step)
    assert isinstance(result, Authorized)


@pytest.mark.parametrize(
    ("revision", "methods", "refused"),
    [
        *[(r, None, True) for r in MODERN_DISCOVERY],  # absent: MUST refuse
        *[(r, None, False) for r in ("2025-03-26", "2025-06-18")],  # absent: not yet a rule
        *[(r, ["plain"], True) for r in ALL],  # no S256: refused at every revision
        *[(r, ["plain", "S256"], False) for r in ALL],
    ],
)
def test_pkce_s256_must_be_offered(revision: str, methods: list[str] | None, refused: bool) -> None:
    server = FakeAuthorizationServer(metadata={"code_challenge_methods_supported": methods})
    if methods is None:
        server.metadata = {"code_challenge_methods_supported": None}
    world = World(servers=[server])
    flow = new_flow(revision)
    step = flow.handle_challenge(401, [], wall_time=NOW)
    if refused:
        with pytest.raises(PKCENotSupported):
            drive(flow, world, step)
        assert server.registrations == server.authorizations == []
    else:
        drive(flow, world, step)
        assert server.authorizations[0]["code_challenge_method"] == "S256"


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"response_types_supported": ["token"]}, UnsupportedGrantType),
        ({"grant_types_supported": ["client_credentials"]}, UnsupportedGrantType),
        ({"authorization_endpoint": None}, InvalidMetadata),
        ({"token_endpoint": None}, InvalidMetadata),
        ({"token_endpoint": 7}, InvalidMetadata),
        ({"scopes_supported": "a b"}, InvalidMetadata),
        ({"code_challenge_methods_supported": [1]}, InvalidMetadata),
    ],
)
def test_unusable_authorization_server_metadata(metadata: dict[str, Any], error: type) -> None:
    world = World(servers=[FakeAuthorizationServer(metadata=metadata)])
    flow = new_flow()
    with pytest.raises(error):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))


@pytest.mark.parametrize(
    "body",
    [
        b'{"authorization_servers": ["https://auth.example.com"]}',
        b'{"resource": "https://mcp.example.com/mcp"}',
        b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": []}',
        b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": "x"}',
        b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": '
        b'["https://auth.example.com"], "scopes_supported": [1]}',
        b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": '
        b'["https://auth.example.com?tenant=1"]}',
    ],
)
def test_unusable_protected_resource_metadata(body: bytes) -> None:
    world = World(FakeResourceServer(prm_body=body))
    flow = new_flow()
    with pytest.raises(InvalidMetadata):
        drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))


def test_oversized_documents_are_not_read_as_metadata() -> None:
    padding = b" " * 5000
    body = b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": ["x"]}'
    world = World(FakeResourceServer(prm_at=("path", "root"), prm_body=body + padding))
    flow = new_flow(max_response_bytes=4096)
    step = flow.handle_challenge(401, [], wall_time=NOW)
    assert isinstance(step, OAuthHTTPRequest) and step.max_response_bytes == 4096
    with pytest.raises(MetadataNotFound):
        drive(flow, world, step)


def test_the_first_authorization_server_is_used_unless_the_client_knows_another() -> None:
    other = FakeAuthorizationServer(issuer="https://other.example.com")
    other.clients["pre"] = ("pw", "client_secret_basic")
    other.auth_methods = ["client_secret_basic"]
    resource = FakeResourceServer(authorization_servers=[ISSUER, "https://other.example.com"])
    world = World(resource, [FakeAuthorizationServer(), other])
    flow = new_flow()
    drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    assert world.gets()[1] == AS_OAUTH

    world = World(resource, [FakeAuthorizationServer(), other])
    pre = PreRegisteredClient("pre", "pw", issuer="https://other.example.com")
    flow = new_flow(client=pre)
    drive(flow, world, flow.handle_challenge(401, [], wall_time=NOW))
    assert world.gets()[1] == "https://other.example.com/.well-known/oauth-authorization-server"


def test_receive_response_rejects_what_is_not_an_http_response() -> None:
    flow = new_flow()
    flow.handle_challenge(401, [], wall_time=NOW)
    with pytest.raises(LocalProtocolError):
        flow.receive_response(99, b"", wall_time=NOW)
    with pytest.raises(LocalProtocolError):
        flow.receive_response(200, "text", wall_time=NOW)  # type: ignore[arg-type]
    assert flow.state == OAuthState.DISCOVERING_RESOURCE
