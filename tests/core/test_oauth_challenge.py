"""`WWW-Authenticate` parsing (RFC 9110 11.6.1), scope lists, and which MCP
server responses are authorization challenges: header values in, challenges out."""

from __future__ import annotations

import pytest

from mcp_core._oauth_challenge import normalize_headers, scope_list, scope_string
from mcp_core.oauth import (
    Challenge,
    bearer_challenge,
    is_authorization_challenge,
    parse_www_authenticate,
)

PRM = "https://mcp.example.com/.well-known/oauth-protected-resource"


def C(scheme: str, token68: str | None = None, **params: str) -> Challenge:
    return Challenge(scheme, params, token68)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Bearer", [C("Bearer")]),
        (f'Bearer resource_metadata="{PRM}"', [C("Bearer", resource_metadata=PRM)]),
        (
            f'Bearer resource_metadata="{PRM}",\r\n scope="files:read"',
            [C("Bearer", resource_metadata=PRM, scope="files:read")],
        ),
        # The spec's 403 example, parameter names in any case, token values unquoted.
        (
            'Bearer ERROR=insufficient_scope, scope="files:read files:write", '
            'error_description="Additional file write permission required"',
            [
                C(
                    "Bearer",
                    error="insufficient_scope",
                    scope="files:read files:write",
                    error_description="Additional file write permission required",
                )
            ],
        ),
        # Several challenges in one header; the comma separates both levels.
        (
            'Basic realm="x", Bearer realm="y", error="invalid_token"',
            [C("Basic", realm="x"), C("Bearer", realm="y", error="invalid_token")],
        ),
        ("Basic, Bearer", [C("Basic"), C("Bearer")]),
        # token68 right after the scheme, padding included, then another challenge.
        ("Negotiate abc+/9==, Bearer", [C("Negotiate", "abc+/9=="), C("Bearer")]),
        ("Basic dXNlcg==", [C("Basic", "dXNlcg==")]),
        # Quoted strings: escapes, commas and equals signs inside, empty values.
        (
            r'Bearer realm="a \"b\", c=d", scope=""',
            [C("Bearer", realm='a "b", c=d', scope="")],
        ),
        # Bad whitespace around "=" is allowed (BWS).
        ('Bearer scope = "a"', [C("Bearer", scope="a")]),
        # A repeated parameter is ambiguous: dropped altogether.
        (
            'Bearer resource_metadata="https://a/", resource_metadata="https://b/", scope="s"',
            [C("Bearer", scope="s")],
        ),
        ('Bearer scope="a", SCOPE="b", scope="c"', [C("Bearer")]),
        # Garbage is skipped to the next comma; an unterminated quote ends the header.
        ('Bearer @@@, scope="s"', [C("Bearer", scope="s")]),
        ('Bearer scope="s", realm="never closed', [C("Bearer", scope="s")]),
        ('Bearer realm="r", scope=, x="y"', [C("Bearer", realm="r", x="y")]),
        # A parameter before any scheme belongs to nothing.
        ('scope="s", Bearer', [C("Bearer")]),
        ("", []),
        (" , ,", []),
    ],
)
def test_www_authenticate_values_parse_to_challenges(value: str, expected: list[Challenge]) -> None:
    assert list(parse_www_authenticate([("WWW-Authenticate", value)])) == expected


def test_every_www_authenticate_header_counts_bytes_or_text_any_case() -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"www-authenticate", b'Basic realm="r"'),
        ("WWW-Authenticate", 'bearer scope="a b"'),
    ]
    assert parse_www_authenticate(headers) == (C("Basic", realm="r"), C("bearer", scope="a b"))
    challenge = bearer_challenge(headers)
    assert challenge is not None and challenge.param("SCOPE") == "a b"
    assert bearer_challenge([("www-authenticate", "Basic")]) is None
    assert normalize_headers([(b"X-A", b"\xff")]) == [("x-a", "\xff")]


@pytest.mark.parametrize(
    ("value", "tokens"),
    [
        ("files:read files:write", ("files:read", "files:write")),
        ("  a  b a ", ("a", "b")),  # repeats and extra spaces dropped, order kept
        ('a "b" c\\d e', ("a", "e")),  # '"' and '\' are not scope-token characters
        ("", ()),
        (None, ()),
        (["a"], ()),
    ],
)
def test_scope_strings_split_into_tokens(value: object, tokens: tuple[str, ...]) -> None:
    assert scope_list(value) == tokens


def test_scope_string_joins_and_omits_an_empty_set() -> None:
    assert scope_string(["a", "b", "a"]) == "a b"
    assert scope_string([]) is None


@pytest.mark.parametrize(
    ("status", "value", "expected"),
    [
        (401, None, True),
        (401, 'Bearer error="invalid_token"', True),
        (403, 'Bearer error="insufficient_scope", scope="x"', True),
        (403, 'Bearer error="invalid_token"', False),
        (403, None, False),  # e.g. an Origin refused: nothing to authorize
        (400, 'Bearer error="invalid_request"', False),
        (404, None, False),
    ],
)
def test_which_responses_are_authorization_challenges(
    status: int, value: str | None, expected: bool
) -> None:
    headers = [] if value is None else [("www-authenticate", value)]
    assert is_authorization_challenge(status, headers) is expected
