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

PRM_SUFFIX: Final = "oauth-protected-resource"
AS_METADATA_SUFFIX: Final = "oauth-authorization-server"
OIDC_SUFFIX: Final = "openid-configuration"
_DEFAULT_PORTS: Final = {"https": 443, "http": 80}


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback IP literal (brackets already removed)."""
    host = host.lower().rstrip(".")
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
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port is None else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    @property
    def target(self) -> str:
        """The HTTP request target: path (at least `/`) and query."""
        target = self.path or "/"
        return f"{target}?{self.query}" if self.query else target


def _split(url: str) -> tuple[SplitResult | None, str | None]:
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
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "carries userinfo"
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
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    return ParsedURL(scheme, host, port, parts.path, parts.query, parts.netloc)


def canonical_resource(url: str) -> str:
    """The canonical form of a resource identifier (RFC 8707 section 2, as the MCP
    spec words it): lower-case scheme and host, no default port, no trailing slash."""
    parsed = parse_url(url)
    path = parsed.path.rstrip("/")
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
    if res.origin != srv.origin:
        return False
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
        if url not in urls:
            urls.append(url)
    return tuple(urls)


def form_encode(pairs: Iterable[tuple[str, str]]) -> str:
    """application/x-www-form-urlencoded (RFC 6749 appendix B)."""
    return urlencode(list(pairs))


def append_query(url: str, pairs: Iterable[tuple[str, str]]) -> str:
    """`url` with `pairs` added to its query, keeping any query it already has
    (RFC 6749 section 3.1: the endpoint's own query MUST be retained)."""
    encoded = form_encode(pairs)
    if not encoded:
        return url
    separator = "&" if urlsplit(url).query else ("" if url.endswith("?") else "?")
    return f"{url}{separator}{encoded}"


def query_pairs(url: str) -> list[tuple[str, str]]:
    """The decoded query parameters of `url`, in order, repeats kept."""
    return parse_qsl(urlsplit(url).query, keep_blank_values=True)
