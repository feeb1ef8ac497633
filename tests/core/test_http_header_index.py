"""`HeaderList`: a head's fields as a list, with an index every reader shares.

The server's readers of a request head (`single_header`, `accepted`, the Host/Origin
check, the trusted proxies, the mirrored-header check, the direct path's framing) read a
`HeaderList` through its index instead of scanning the pairs. The properties: the index
is always the fold of the pairs as they are now (whatever changed the list), and every
reader answers a `HeaderList` exactly as it answers the same pairs in a plain list.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_core._errors import RemoteProtocolError
from mcp_core._http import HeaderList, accepted, decode_headers, plain_fields, single_header
from mcp_core._http_headers import (
    HeaderParam,
    HostPolicy,
    TrustedProxies,
    check_mirrored_headers,
)
from tests.core.test_http_plain_fields import _END, _LINE
from tests.fuzz.harness import scaled


def _fold(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """The index by its definition: lower-cased names, every value trimmed, in order."""
    folded: dict[str, list[str]] = {}
    for name, value in pairs:
        folded.setdefault(name.lower(), []).append(value.strip(" \t"))
    return folded


def test_the_index_files_every_value_by_lower_case_name() -> None:
    headers = HeaderList(
        [("Host", " a "), ("accept", "application/json"), ("host", "b\t"), ("X-Y", "")]
    )
    assert headers.by_name() == {
        "host": ["a", "b"],
        "accept": ["application/json"],
        "x-y": [""],
    }
    assert headers.by_name() is headers.by_name()  # built once
    # Still a list of pairs, equal to the plain one.
    assert headers == [
        ("Host", " a "),
        ("accept", "application/json"),
        ("host", "b\t"),
        ("X-Y", ""),
    ]
    assert isinstance(headers, list)


def test_the_heads_the_server_reads_are_indexed() -> None:
    # h11's heads and the direct path's both come as a `HeaderList`.
    assert type(decode_headers([(b"host", b"a")])) is HeaderList
    assert type(plain_fields("host: a\r\n", 0)) is HeaderList
    assert type(plain_fields("host:\ta\x80\r\n", 0)) is HeaderList  # the expressions' path


_PAIR = st.tuples(
    st.sampled_from(["host", "Host", "accept", "origin", "mcp-method", "x-a"]),
    st.sampled_from(["", "a", " b ", "c\t", "application/json", "*/*;q=0"]),
)
# Each change a list can take, as (name, arguments).
_CHANGE = st.one_of(
    st.tuples(st.just("append"), st.tuples(_PAIR)),
    st.tuples(st.just("extend"), st.tuples(st.lists(_PAIR, max_size=3))),
    st.tuples(st.just("insert"), st.tuples(st.integers(-3, 3), _PAIR)),
    st.tuples(st.just("pop"), st.tuples()),
    st.tuples(st.just("clear"), st.tuples()),
    st.tuples(st.just("sort"), st.tuples()),
    st.tuples(st.just("reverse"), st.tuples()),
    st.tuples(st.just("__setitem__"), st.tuples(st.integers(-2, 1), _PAIR)),
    st.tuples(st.just("__setitem__"), st.tuples(st.just(slice(0, 2)), st.lists(_PAIR, max_size=2))),
    st.tuples(st.just("__delitem__"), st.tuples(st.integers(-2, 1))),
    st.tuples(st.just("__delitem__"), st.tuples(st.just(slice(None, None, 2)))),
    st.tuples(st.just("__iadd__"), st.tuples(st.lists(_PAIR, max_size=2))),
    st.tuples(st.just("__imul__"), st.tuples(st.integers(0, 2))),
    st.tuples(st.just("remove"), st.tuples(_PAIR)),
)


@settings(max_examples=scaled(300), deadline=None)
@given(st.lists(_PAIR, max_size=5), st.lists(_CHANGE, max_size=8))
def test_the_index_follows_every_change(
    pairs: list[tuple[str, str]], changes: list[tuple[str, tuple[Any, ...]]]
) -> None:
    headers = HeaderList(pairs)
    plain = list(pairs)
    assert headers.by_name() == _fold(plain)
    for method, args in changes:
        outcomes = []
        for target in (headers, plain):
            try:
                result = getattr(target, method)(*args)
            except (IndexError, ValueError) as exc:
                outcomes.append(type(exc))
            else:
                outcomes.append(None if result is target else result)
        assert outcomes[0] == outcomes[1]
        assert headers == plain
        # Read after every change: an index left stale by any change shows here, in
        # the slot the hot readers take first (`folded or by_name()`) as in `by_name`.
        assert headers.folded is None or headers.folded == _fold(plain)
        assert (headers.folded or headers.by_name()) == _fold(plain)
        assert headers.by_name() == _fold(plain)


_NAMES = st.sampled_from(
    [
        "host",
        "origin",
        "accept",
        "content-type",
        "content-length",
        "mcp-protocol-version",
        "mcp-session-id",
        "mcp-method",
        "mcp-name",
        "mcp-param-region",
        "x-forwarded-for",
        "x-forwarded-host",
        "x-forwarded-proto",
        "forwarded",
        "x-other",
    ]
)
_VALUES = st.sampled_from(
    [
        "",
        "localhost",
        "127.0.0.1:8000",
        " evil.example ",
        "http://localhost:3000",
        "application/json, text/event-stream",
        "text/event-stream;q=0, application/json",
        "*/*",
        "application/json",
        "2026-07-28",
        " 2025-06-18\t",
        "tools/call",
        "echo",
        "=?base64?ZWNobw==?=",
        "eu",
        "10.0.0.1, 127.0.0.1",
        "https",
        "for=10.0.0.2;host=mcp.example;proto=https",
    ]
)


def _mirrored(headers: list[tuple[str, str]], body: dict[str, Any], params: Any) -> Any:
    """What the mirrored-header check answers: None, or the error it raises."""
    try:
        check_mirrored_headers(headers, body, params)
    except RemoteProtocolError as exc:
        return (exc.code, exc.http_status, exc.message)
    return None


_POLICY = HostPolicy(("localhost:*", "127.0.0.1:*"), ("http://localhost:*",))
_PROXIES = (
    TrustedProxies(),
    TrustedProxies(["127.0.0.1"]),
    TrustedProxies(["127.0.0.1"], header="forwarded"),
)
_BODIES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"region": "eu"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        },
    },
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
_HEADER_PARAMS = {"Region": HeaderParam(("region",), "string")}


@settings(max_examples=scaled(400), deadline=None)
@given(st.lists(st.tuples(_NAMES, _VALUES), max_size=10), st.sampled_from(_BODIES))
def test_every_reader_answers_an_indexed_head_as_the_plain_one(
    pairs: list[tuple[str, str]], body: dict[str, Any]
) -> None:
    indexed, plain = HeaderList(pairs), list(pairs)
    for name in ("host", "content-type", "mcp-protocol-version", "mcp-session-id", "x-none"):
        assert single_header(indexed, name) == single_header(plain, name)
    assert accepted(indexed) == accepted(plain)
    for view in (None, TrustedProxies().resolve(plain, peer="127.0.0.1")):
        assert _POLICY.check_headers(indexed, view=view) == _POLICY.check_headers(plain, view=view)
    for proxies in _PROXIES:
        for peer in ("127.0.0.1", "192.0.2.1"):
            assert proxies.resolve(indexed, peer=peer) == proxies.resolve(plain, peer=peer)
    for params in (None, _HEADER_PARAMS):
        assert _mirrored(indexed, body, params) == _mirrored(plain, body, params)


@settings(max_examples=scaled(400), deadline=None)
@given(st.lists(st.tuples(_LINE, _END), max_size=6))
def test_the_index_plain_fields_files_as_it_reads_is_the_fold(
    lines: list[tuple[tuple[str, str, str], str]],
) -> None:
    # `plain_fields` hands its `HeaderList` the index it filed while reading (the common
    # shape) or none (the expressions' path): either way, the fold of its fields.
    text = "".join(name + colon + value + end for (name, colon, value), end in lines)
    fields = plain_fields(text, 0)
    if fields is not None:
        assert fields.by_name() == _fold(list(fields))


def test_a_repeated_field_is_filed_in_order() -> None:
    fields = plain_fields("Host: a\r\nX: 1\r\nhost: b \r\n", 0)
    assert fields is not None
    assert fields.by_name() == {"host": ["a", "b"], "x": ["1"]}


_ACCEPTS = [
    "application/json, text/event-stream",
    "application/json",
    "text/event-stream",
    "*/*",
    "application/*;q=0, text/*",
    "application/json;q=0.000, text/event-stream",
    "TEXT/EVENT-STREAM ; Q=0 , application/json",
    "",
    " application/json , text/event-stream ",
]


def test_one_accept_field_is_answered_as_its_tuple_would_be() -> None:
    """`accepted` keys a head's single Accept field by its value, several by their
    tuple: both kinds of entry live in one table, and each answer is the uncached
    parse of the same values, whichever kind was filed first."""
    from mcp_core import _http

    for first_single in (True, False):
        _http._ACCEPTED.clear()
        for value in _ACCEPTS:
            single = HeaderList([("accept", value)])
            plain = [("accept", value)]
            twice = HeaderList([("accept", value), ("accept", value)])
            expected = _http._accepted((value,))
            order = [single, plain] if first_single else [plain, single]
            for headers in [*order, *order]:
                assert accepted(headers) == expected, (value, headers)
            assert accepted(twice) == _http._accepted((value, value))
            assert accepted(twice) == accepted([("accept", value), ("accept", value)])
        assert set(_http._ACCEPTED) >= {value.strip() for value in _ACCEPTS}
    assert accepted(HeaderList([("host", "x")])) == (True, True)
