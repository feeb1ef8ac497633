"""Trusted reverse proxies: X-Forwarded-* and RFC 7239 `Forwarded`, believed only from them.

The rule (`TrustedProxies`): a request whose direct peer is a trusted proxy is judged by
what the proxy reports (the Host check, `RequestHead.view` and its `base_url`); from any
other peer those headers are ignored. Checked here on the pure rule, then through the
HTTP layer both ways in: h11 bytes (`HTTPServerConnection(peer=...)`) and the
request-level `HTTPExchange`.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from mcp_core._http_headers import ClientView, HostPolicy, TrustedProxies
from mcp_core._http_server import HTTPServerEndpoint, RequestHead
from mcp_core.testing import default_server_config
from tests.core.test_http_server import http_request, init_params, parse_responses, rpc

PUBLIC = HostPolicy(
    allowed_hosts=("mcp.example.com",), allowed_origins=("https://mcp.example.com",)
)
PROXIES = TrustedProxies(["127.0.0.1", "10.0.0.0/8", "::1"])


def view(
    headers: dict[str, str] | list[tuple[str, str]],
    peer: str | None,
    proxies: TrustedProxies = PROXIES,
    scheme: str = "http",
) -> ClientView:
    pairs = list(headers.items()) if isinstance(headers, dict) else headers
    return proxies.resolve(pairs, peer=peer, scheme=scheme)


# ------------------------------------------------------------------ the rule


def test_no_trusted_proxy_means_the_direct_view() -> None:
    headers = {
        "host": "127.0.0.1:8000",
        "x-forwarded-host": "mcp.example.com",
        "x-forwarded-proto": "https",
        "x-forwarded-for": "203.0.113.9",
    }
    direct = view(headers, "127.0.0.1", TrustedProxies())
    assert direct == ClientView("http", "127.0.0.1:8000", "127.0.0.1", proxied=False)
    assert direct.base_url == "http://127.0.0.1:8000"
    assert not TrustedProxies() and TrustedProxies(["127.0.0.1"])


def test_a_trusted_peer_is_believed() -> None:
    headers = {
        "host": "127.0.0.1:8000",
        "x-forwarded-host": "mcp.example.com",
        "x-forwarded-proto": "https",
        "x-forwarded-for": "203.0.113.9",
    }
    proxied = view(headers, "127.0.0.1")
    assert proxied == ClientView("https", "mcp.example.com", "203.0.113.9", proxied=True)
    assert proxied.base_url == "https://mcp.example.com"


def test_an_untrusted_peer_is_not() -> None:
    headers = {
        "host": "mcp.example.com",
        "x-forwarded-host": "localhost",
        "x-forwarded-for": "127.0.0.1",
    }
    assert view(headers, "198.51.100.7") == ClientView("http", "mcp.example.com", "198.51.100.7")
    assert view(headers, None) == ClientView("http", "mcp.example.com", None)  # no address


@pytest.mark.parametrize(
    ("chain", "client"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("203.0.113.9, 10.0.0.2", "203.0.113.9"),  # an inner proxy, trusted: walk past it
        ("6.6.6.6, 203.0.113.9, 10.0.0.2", "203.0.113.9"),  # what the client wrote is left of it
        ("10.0.0.3, 10.0.0.2", "10.0.0.3"),  # all trusted: the leftmost
        ("203.0.113.9:4711", "203.0.113.9"),
        ("[2001:db8::1]:4711", "2001:db8::1"),
        ("2001:db8::1", "2001:db8::1"),
        ("unknown, 10.0.0.2", "unknown"),
    ],
)
def test_the_client_is_the_first_untrusted_address_from_the_right(chain: str, client: str) -> None:
    assert view({"host": "a", "x-forwarded-for": chain}, "10.0.0.1").client == client


def test_list_headers_across_lines_and_the_rightmost_host_and_proto() -> None:
    headers = [
        ("host", "backend:8000"),
        ("x-forwarded-for", "203.0.113.9"),
        ("x-forwarded-for", "10.0.0.2"),
        ("x-forwarded-host", "evil.example, mcp.example.com"),
        ("x-forwarded-proto", "http, HTTPS"),
    ]
    assert view(headers, "10.0.0.1") == ClientView(
        "https", "mcp.example.com", "203.0.113.9", proxied=True
    )


def test_what_a_proxy_leaves_out_or_gets_wrong() -> None:
    # No X-Forwarded-For: the client is the peer; no -Host: the Host header.
    assert view(
        {"host": "mcp.example.com", "x-forwarded-proto": "https"}, "127.0.0.1"
    ) == ClientView("https", "mcp.example.com", "127.0.0.1", proxied=True)
    # Nothing at all: the direct view.
    assert not view({"host": "mcp.example.com"}, "127.0.0.1").proxied
    # A scheme that is not http(s) is not believed; a malformed host is no host (421).
    assert view({"host": "h", "x-forwarded-proto": "gopher"}, "127.0.0.1").scheme == "http"
    bad = view({"host": "h", "x-forwarded-host": "mcp.example.com/evil?"}, "127.0.0.1")
    assert bad.host is None and bad.base_url is None
    # A chain longer than any deployment is ignored.
    assert not view(
        {"host": "h", "x-forwarded-for": ", ".join(["10.0.0.9"] * 40)}, "127.0.0.1"
    ).proxied


def test_peer_addresses_are_normalised() -> None:
    assert PROXIES.trusts("::ffff:127.0.0.1")  # what a dual-stack socket reports
    assert PROXIES.trusts("[::1]") and PROXIES.trusts("10.1.2.3:443")
    assert not PROXIES.trusts("127.0.0.2") and not PROXIES.trusts("localhost")
    assert not PROXIES.trusts(None) and not PROXIES.trusts("not an address")
    assert TrustedProxies(["unix"]).trusts(None) and not TrustedProxies(["unix"]).trusts(
        "127.0.0.1"
    )
    assert TrustedProxies(["*"]).trusts("198.51.100.7") and TrustedProxies(["*"]).trusts(None)


def test_configuration_errors() -> None:
    with pytest.raises(ValueError, match="not an address"):
        TrustedProxies(["10.0.0.0/33"])
    with pytest.raises(TypeError):
        TrustedProxies("127.0.0.1")
    with pytest.raises(ValueError):
        TrustedProxies(["127.0.0.1"], header="x-real-ip")
    assert "10.0.0.0/8" in repr(PROXIES)


# ------------------------------------------------------------------ RFC 7239

RFC = TrustedProxies(["127.0.0.1", "10.0.0.0/8"], header="forwarded")


def test_forwarded_elements_are_walked_like_the_chain() -> None:
    headers = {
        "host": "backend",
        "forwarded": 'for=6.6.6.6;host=evil.example, for=203.0.113.9;proto=https;host="mcp.example.com", for=10.0.0.2;host=inner',
    }
    # The element whose `for` is the first untrusted address is the edge proxy's account.
    assert view(headers, "10.0.0.1", RFC) == ClientView(
        "https", "mcp.example.com", "203.0.113.9", proxied=True
    )


def test_forwarded_syntax() -> None:
    quoted = {
        "host": "b",
        "forwarded": 'For="[2001:db8:cafe::17]:4711";Proto=https;Host="a\\.example:8443"',
    }
    assert view(quoted, "127.0.0.1", RFC) == ClientView(
        "https", "a.example:8443", "2001:db8:cafe::17", proxied=True
    )
    assert (
        view({"host": "b", "forwarded": "for=_hidden;proto=https"}, "127.0.0.1", RFC).client
        == "_hidden"
    )
    assert view({"host": "b", "forwarded": "proto=https"}, "127.0.0.1", RFC).client == "127.0.0.1"
    for broken in (
        "for",
        "for=1.2.3.4;for=5.6.7.8",
        "for=1.2.3.4 garbage",
        "for=1.2.3.4,,for=5.6.7.8",
        'for="unterminated',
    ):
        assert not view({"host": "b", "forwarded": broken}, "127.0.0.1", RFC).proxied, broken
    long_chain = ", ".join(["for=10.0.0.9"] * 40)
    assert not view({"host": "b", "forwarded": long_chain}, "127.0.0.1", RFC).proxied


def test_only_the_configured_family_is_believed() -> None:
    both = {
        "host": "b",
        "forwarded": "for=203.0.113.9;host=from-forwarded",
        "x-forwarded-host": "from-x-forwarded",
    }
    assert view(both, "127.0.0.1").host == "from-x-forwarded"
    assert view(both, "127.0.0.1", RFC).host == "from-forwarded"


# ------------------------------------------------------- the Host/Origin check


def test_the_host_check_uses_the_view() -> None:
    proxied = view({"host": "127.0.0.1:8000", "x-forwarded-host": "mcp.example.com"}, "127.0.0.1")
    direct = view({"host": "127.0.0.1:8000", "x-forwarded-host": "mcp.example.com"}, "198.51.100.7")
    headers = [("host", "127.0.0.1:8000")]
    assert PUBLIC.check_headers(headers, view=proxied) is None
    assert PUBLIC.check_headers(headers, view=direct) == 421
    # Origin is checked as the browser sent it, and still only once.
    assert (
        PUBLIC.check_headers([*headers, ("origin", "https://mcp.example.com")], view=proxied)
        is None
    )
    assert PUBLIC.check_headers([*headers, ("origin", "https://evil.example")], view=proxied) == 403
    twice = [*headers, ("origin", "https://mcp.example.com"), ("origin", "https://mcp.example.com")]
    assert PUBLIC.check_headers(twice, view=proxied) == 403
    # A repeated Host gives no view host, as it gives no Host.
    assert view([("host", "a"), ("host", "b")], "198.51.100.7").host is None


# --------------------------------------------------- through the HTTP layer

INIT = rpc(0, "initialize", init_params())


def endpoint(**kwargs: Any) -> HTTPServerEndpoint:
    counter = itertools.count(1)
    seen: list[RequestHead] = kwargs.pop("seen", [])

    def principal_of(head: RequestHead) -> str | None:
        seen.append(head)
        return None

    return HTTPServerEndpoint(
        default_server_config(),
        new_session_id=lambda: f"s{next(counter)}",
        host_policy=PUBLIC,
        principal_of=principal_of,
        **kwargs,
    )


FORWARDED = {
    "X-Forwarded-Host": "mcp.example.com",
    "X-Forwarded-Proto": "https",
    "X-Forwarded-For": "203.0.113.9",
}


@pytest.mark.parametrize(("peer", "status"), [("127.0.0.1", 200), ("127.0.0.2", 421), (None, 421)])
def test_over_h11_the_peer_decides(peer: str | None, status: int) -> None:
    seen: list[RequestHead] = []
    server = endpoint(trusted_proxies=["127.0.0.1"], seen=seen)
    http = server.new_connection(now=0.0, peer=peer)
    http.receive_data(http_request(body=INIT, host="127.0.0.1:8000", headers=FORWARDED), now=0.0)
    [resp] = parse_responses(http.data_to_send())
    assert resp.status == status
    if status == 200:
        [head] = seen  # what principal_of (your authentication) is shown
        assert head.peer == "127.0.0.1"
        assert head.view == ClientView("https", "mcp.example.com", "203.0.113.9", proxied=True)


def test_without_trusted_proxies_forwarded_headers_change_nothing() -> None:
    server = endpoint()
    http = server.new_connection(now=0.0, peer="127.0.0.1")
    http.receive_data(http_request(body=INIT, host="127.0.0.1:8000", headers=FORWARDED), now=0.0)
    assert parse_responses(http.data_to_send())[0].status == 421
    http = server.new_connection(now=0.0, peer="127.0.0.1")
    http.receive_data(http_request(body=INIT, host="mcp.example.com", headers=FORWARDED), now=0.0)
    assert parse_responses(http.data_to_send())[0].status == 200


@pytest.mark.parametrize(("peer", "status"), [("10.1.2.3", 200), ("192.0.2.1", 421)])
def test_an_exchange_follows_the_same_rule(peer: str, status: int) -> None:
    server = endpoint(trusted_proxies=TrustedProxies(["10.0.0.0/8"], header="forwarded"))
    ex = server.new_exchange()
    headers = [
        ("host", "backend:8000"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("forwarded", "for=203.0.113.9;proto=https;host=mcp.example.com"),
    ]
    ex.receive_head(RequestHead("POST", "/mcp", headers, peer=peer, scheme="http"))
    ex.receive_body(json.dumps(INIT).encode())
    ex.receive_end()
    assert ex.response is not None and ex.response[0] == status
    assert ex.head is not None and ex.head.view is not None
    assert ex.head.view.proxied is (status == 200)
