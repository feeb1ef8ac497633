"""The URL rules: what may be fetched, the well-known locations each revision
builds, and how resource identifiers are compared."""

from __future__ import annotations

import pytest

from mcp_core._oauth_metadata import AUTHORIZATION_RULES
from mcp_core._oauth_urls import (
    append_query,
    authorization_server_metadata_urls,
    canonical_resource,
    is_loopback_host,
    parse_url,
    protected_resource_metadata_urls,
    query_pairs,
    resource_covers,
    url_problem,
)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://auth.example.com/token", None),
        ("HTTPS://Auth.Example.com:8443/t?x=1", None),
        ("http://localhost:3000/callback", None),
        ("http://127.0.0.1/x", None),
        ("http://127.9.9.9/x", None),
        ("http://[::1]:8080/x", None),
        ("http://auth.example.com/token", "is not https"),
        ("http://localhost.evil.com/", "is not https"),
        ("http://10.0.0.1/", "is not https"),
        ("ftp://auth.example.com/", "is not an http(s) URL"),
        ("/relative/path", "is not an http(s) URL"),
        ("https:///nohost", "has no host"),
        ("https://user:pw@auth.example.com/", "carries userinfo"),
        ("https://good.example@evil.example/", "carries userinfo"),
        ("https://auth.example.com/#frag", "carries a fragment"),
        ("https://auth.example.com/#", "carries a fragment"),
        ("https://auth.example.com:99999/", "is not a valid URL"),
        ("https://auth.example.com/a b", "contains whitespace"),
        ("https://auth.example.com/\r\nx", "contains whitespace"),
        ("", "is not a non-empty string"),
        (None, "is not a non-empty string"),
    ],
)
def test_url_problems(url: object, problem: str | None) -> None:
    found = url_problem(url)
    assert (found is None) == (problem is None)
    if problem is not None:
        assert found is not None and found.startswith(problem)


def test_plain_http_is_acceptable_only_when_security_is_not_asked_for() -> None:
    assert url_problem("http://mcp.example.com/mcp", require_secure=False) is None
    assert url_problem("http://mcp.example.com/mcp") is not None


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST.", True),
        ("127.0.0.1", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("localhost.example", False),
        ("example.com", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


def test_parsed_urls_drop_default_ports_and_give_request_targets() -> None:
    parsed = parse_url("HTTPS://Auth.Example.COM:443/a?b=1")
    assert (parsed.origin, parsed.target, parsed.netloc) == (
        "https://auth.example.com",
        "/a?b=1",
        "Auth.Example.COM:443",
    )
    assert parse_url("http://[::1]:8080").origin == "http://[::1]:8080"
    assert parse_url("http://[::1]:8080").target == "/"


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        (
            "https://example.com/public/mcp",
            (
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ),
        ),
        (
            "https://example.com/mcp/",  # the terminating slash goes before insertion
            (
                "https://example.com/.well-known/oauth-protected-resource/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ),
        ),
        (
            "https://example.com:8443/mcp?tenant=a",
            (
                "https://example.com:8443/.well-known/oauth-protected-resource/mcp?tenant=a",
                "https://example.com:8443/.well-known/oauth-protected-resource",
            ),
        ),
        # A server at the root has only the root location.
        ("https://example.com", ("https://example.com/.well-known/oauth-protected-resource",)),
        ("https://example.com/", ("https://example.com/.well-known/oauth-protected-resource",)),
    ],
)
def test_protected_resource_metadata_locations(server: str, expected: tuple[str, ...]) -> None:
    assert protected_resource_metadata_urls(server) == expected


AS = "https://auth.example.com"


@pytest.mark.parametrize(
    ("revision", "issuer", "expected"),
    [
        # 2025-11-25 and 2026-07-28: RFC 8414 then OpenID, insertion then appending.
        *[
            (
                revision,
                f"{AS}/tenant1",
                (
                    f"{AS}/.well-known/oauth-authorization-server/tenant1",
                    f"{AS}/.well-known/openid-configuration/tenant1",
                    f"{AS}/tenant1/.well-known/openid-configuration",
                ),
            )
            for revision in ("2025-11-25", "2026-07-28")
        ],
        *[
            (
                revision,
                AS,
                (
                    f"{AS}/.well-known/oauth-authorization-server",
                    f"{AS}/.well-known/openid-configuration",
                ),
            )
            for revision in ("2025-11-25", "2026-07-28")
        ],
        (
            "2026-07-28",
            f"{AS}/",
            tuple(
                f"{AS}/.well-known/{s}"
                for s in ("oauth-authorization-server", "openid-configuration")
            ),
        ),
        # 2025-06-18 and earlier: RFC 8414 only.
        *[
            (revision, f"{AS}/tenant1", (f"{AS}/.well-known/oauth-authorization-server/tenant1",))
            for revision in ("2024-11-05", "2025-03-26", "2025-06-18")
        ],
        ("2025-06-18", AS, (f"{AS}/.well-known/oauth-authorization-server",)),
    ],
)
def test_authorization_server_metadata_locations_per_revision(
    revision: str, issuer: str, expected: tuple[str, ...]
) -> None:
    order = AUTHORIZATION_RULES[revision].authorization_server_metadata
    assert authorization_server_metadata_urls(issuer, order) == expected


@pytest.mark.parametrize(
    ("resource", "server", "covers"),
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp", True),
        ("HTTPS://MCP.example.com:443/mcp/", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/a", "https://mcp.example.com/a/b/mcp", True),
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcpx", False),
        ("https://mcp.example.com/mcp/x", "https://mcp.example.com/mcp", False),
        ("https://evil.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("http://mcp.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp?t=1", "https://mcp.example.com/mcp?t=1", True),
        ("https://mcp.example.com/mcp?t=1", "https://mcp.example.com/mcp?t=2", False),
        ("https://mcp.example.com/?t=1", "https://mcp.example.com/mcp?t=1", False),
        ("https://mcp.example.com/mcp#f", "https://mcp.example.com/mcp", False),
        ("mcp.example.com/mcp", "https://mcp.example.com/mcp", False),
    ],
)
def test_which_resources_cover_a_server(resource: str, server: str, covers: bool) -> None:
    assert resource_covers(resource, server) is covers


def test_canonical_resource_form() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com:443/mcp/") == "https://mcp.example.com/mcp"
    assert canonical_resource("https://mcp.example.com:8443") == "https://mcp.example.com:8443"
    assert canonical_resource("https://h/p?q=1") == "https://h/p?q=1"


@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("https://a.example/authorize", "https://a.example/authorize?x=1&y=a+b"),
        ("https://a.example/authorize?tenant=t", "https://a.example/authorize?tenant=t&x=1&y=a+b"),
        ("https://a.example/authorize?", "https://a.example/authorize?x=1&y=a+b"),
    ],
)
def test_append_query_keeps_the_endpoints_own_query(endpoint: str, expected: str) -> None:
    assert append_query(endpoint, [("x", "1"), ("y", "a b")]) == expected
    assert append_query(endpoint, []) == endpoint


def test_query_pairs_decode_form_encoding_and_keep_repeats() -> None:
    assert query_pairs("http://h/cb?a=1&a=2&iss=https%3A%2F%2Fx&s=a+b&e=") == [
        ("a", "1"),
        ("a", "2"),
        ("iss", "https://x"),
        ("s", "a b"),
        ("e", ""),
    ]
