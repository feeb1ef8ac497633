"""URL rules of the OAuth client flow: what may be fetched, how well-known
locations are built, and how resource identifiers are compared.

Only the stdlib URL parser is used, and only for splitting: every decision
(scheme, loopback, comparison) is made here, explicitly, because the spec's
refusals depend on exact answers:

* Communication security (OAuth 2.1 section 1.5): authorization server
  endpoints and metadata must be https. Plain http is allowed on loopback hosts
  only (`localhost`, 127.0.0.0/8, `::1`), where there is no network to attack
  and where local development and the conformance suite live.
* URLs with userinfo (`https://user@host/`) are refused everywhere: a metadata
  document has no business sending credentials, and `https://good@evil/` is a
  classic phishing shape. Fragments are refused on anything fetched.
* Issuers are compared as exact strings (RFC 8414 section 3.3, RFC 9207
  section 2.4), never normalized. Resource identifiers are compared after the
  normalization the MCP spec asks to accept (case of scheme and host, default
  port, trailing slash).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit

__all__ = [
    "PRM_SUFFIX",
    "AS_METADATA_SUFFIX",
    "OIDC_SUFFIX",
    "ParsedURL",
    "append_query",
    "authorization_server_metadata_urls",
    "canonical_resource",
    "form_encode",
    "is_loopback_host",
    "parse_url",
    "protected_resource_metadata_urls",
    "query_pairs",
    "resource_covers",
    "url_problem",
]

# The registered well-known suffixes: RFC 9728 3, RFC 8414 3, OpenID Connect
# Discovery 4.
PRM_SUFFIX: Final = "oauth-protected-resource"
AS_METADATA_SUFFIX: Final = "oauth-authorization-server"
OIDC_SUFFIX: Final = "openid-configuration"
# Also the schemes allowed at all: anything else (file:, javascript:, a custom
# app scheme) is not something the flow can fetch or safely redirect through.
_DEFAULT_PORTS: Final = {"https": 443, "http": 80}


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback IP literal (brackets already removed).

    Only these names: `localhost` is reserved to resolve to loopback (RFC 6761
    6.3), while any other name could be made to resolve anywhere, which would
    let an attacker's DNS turn an allowed http URL into a remote one.
    """
    host = host.lower().rstrip(".")  # "localhost." is the same name, fully qualified
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class ParsedURL:
    """An absolute http(s) URL split into what the flow needs (lower-cased scheme
    and host; `port` None when it is the scheme's default)."""

    scheme: str
    host: str
    port: int | None
    path: str
    query: str
    netloc: str

    @property
    def origin(self) -> str:
        """scheme://host[:port], the unit RFC 6454 compares: equal for two URLs
        that differ only in case or an explicit default port."""
        host = f"[{self.host}]" if ":" in self.host else self.host  # IPv6, RFC 3986 3.2.2
        port = "" if self.port is None else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    @property
    def target(self) -> str:
        """The HTTP request target: path (at least `/`) and query."""
        target = self.path or "/"
        return f"{target}?{self.query}" if self.query else target


def _split(url: str) -> tuple[SplitResult | None, str | None]:
    """`urlsplit`, with the port read at once: the stdlib checks it only when
    `.port` is accessed, which would otherwise raise later, outside any check."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return None, f"is not a valid URL ({exc})"
    return parts, None


def url_problem(url: object, *, require_secure: bool = True) -> str | None:
    """Why `url` may not be used as an endpoint or document location, or None.

    With `require_secure` (the default), http is allowed on loopback hosts only.
    """
    if not isinstance(url, str) or not url:
        return "is not a non-empty string"
    # A CR LF in a URL that goes into a request line would inject headers; a
    # space would split the request line. Refused rather than escaped, since a
    # server that sent one is not to be trusted with the rest.
    if any(c <= " " or c == "\x7f" for c in url):
        return "contains whitespace or control characters"
    parts, problem = _split(url)
    if parts is None:
        return problem
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return "is not an http(s) URL"
    if not parts.hostname:
        return "has no host"
    # The "@" test also catches an empty userinfo (`https://@host/`), for which
    # the stdlib reports no username.
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "carries userinfo"
    # RFC 6749 3.1 and 3.1.2: endpoints and redirect URIs carry no fragment;
    # an empty one (a trailing "#") leaves `fragment` empty, hence the test.
    if parts.fragment or url.endswith("#"):
        return "carries a fragment"
    if require_secure and scheme != "https" and not is_loopback_host(parts.hostname):
        return "is not https (plain http is allowed on loopback hosts only)"
    return None


def parse_url(url: str) -> ParsedURL:
    """Split a URL `url_problem` accepted (without its secure check, if need be)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    # An explicit default port is the same origin (RFC 9110 4.2.3); dropping it
    # makes origins and resource identifiers compare equal as strings.
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    return ParsedURL(scheme, host, port, parts.path, parts.query, parts.netloc)


def canonical_resource(url: str) -> str:
    """The canonical form of a resource identifier (RFC 8707 section 2, as the MCP
    spec words it): lower-case scheme and host, no default port, no trailing slash."""
    parsed = parse_url(url)
    path = parsed.path.rstrip("/")
    # RFC 8707 2 discourages a query in a resource but does not forbid it; one
    # that is there is part of the identifier, so it is kept.
    query = f"?{parsed.query}" if parsed.query else ""
    return f"{parsed.origin}{path}{query}"


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether the PRM `resource` identifies the server at `server_url`.

    Same origin, and the resource's path is the server's path or a whole-segment
    prefix of it (`/mcp` covers `/mcp` and `/mcp/x`, not `/mcpx`). RFC 9728
    section 3.3 asks for identity; the prefix form is what deployed servers that
    publish one document for a whole origin need, and what the RFC 9728 update
    under discussion permits. Another origin is never accepted.
    """
    if url_problem(resource, require_secure=False) is not None:
        return False
    res, srv = parse_url(resource), parse_url(server_url)
    # Another origin is another party: accepting it would let any site claim to
    # be this server's resource and collect its tokens (RFC 9728 3.3).
    if res.origin != srv.origin:
        return False
    # A resource with a query names exactly one URL; it cannot cover others.
    if res.query and (res.query != srv.query or res.path.rstrip("/") != srv.path.rstrip("/")):
        return False
    res_segments = [s for s in res.path.split("/") if s]
    srv_segments = [s for s in srv.path.split("/") if s]
    return srv_segments[: len(res_segments)] == res_segments


def protected_resource_metadata_urls(server_url: str) -> tuple[str, ...]:
    """The RFC 9728 well-known locations for `server_url`, in the spec's order:
    path-based (the suffix inserted before the endpoint's path), then the root.
    A server at the root has only the root location."""
    parsed = parse_url(server_url)
    root = f"{parsed.origin}/.well-known/{PRM_SUFFIX}"
    # RFC 9728 3.1: a terminating slash is removed before the suffix is
    # inserted, and the query, if any, follows the path.
    path = parsed.path.rstrip("/")
    if not path:
        return (root,)
    query = f"?{parsed.query}" if parsed.query else ""
    return (f"{root}{path}{query}", root)


def authorization_server_metadata_urls(
    issuer: str, order: Sequence[tuple[str, str]]
) -> tuple[str, ...]:
    """The metadata locations for `issuer`, following `order`: pairs of
    (well-known suffix, "insert" | "append").

    "insert" puts `/.well-known/<suffix>` between the host and the issuer's path
    (RFC 8414 section 3.1); "append" adds it after the path (OpenID Discovery
    section 4). A terminating slash of the path is removed first. For an issuer
    without a path both placements give the same URL, which is kept once.
    """
    parsed = parse_url(issuer)
    path = parsed.path.rstrip("/")
    urls: list[str] = []
    for suffix, placement in order:
        if placement == "insert":
            url = f"{parsed.origin}/.well-known/{suffix}{path}"
        else:
            url = f"{parsed.origin}{path}/.well-known/{suffix}"
        if url not in urls:  # one fetch, and one `MetadataNotFound` line, per URL
            urls.append(url)
    return tuple(urls)


def form_encode(pairs: Iterable[tuple[str, str]]) -> str:
    """application/x-www-form-urlencoded (RFC 6749 appendix B): spaces as `+`,
    everything but unreserved characters percent-encoded, so a secret or a code
    with `&` or `=` in it cannot add a parameter."""
    return urlencode(list(pairs))


def append_query(url: str, pairs: Iterable[tuple[str, str]]) -> str:
    """`url` with `pairs` added to its query, keeping any query it already has
    (RFC 6749 section 3.1: the endpoint's own query MUST be retained)."""
    encoded = form_encode(pairs)
    if not encoded:
        return url
    # An endpoint ending in a bare "?" already has the separator; a second one
    # would make the first parameter's name start with "?".
    separator = "&" if urlsplit(url).query else ("" if url.endswith("?") else "?")
    return f"{url}{separator}{encoded}"


def query_pairs(url: str) -> list[tuple[str, str]]:
    """The decoded query parameters of `url`, in order, repeats kept.

    Repeats are kept so the caller can refuse them (RFC 6749 3.1); blank values
    are kept so `state=` counts as a wrong state, not a missing one.
    """

    return parse_qsl(urlsplit(url).query, keep_blank_values=True)
