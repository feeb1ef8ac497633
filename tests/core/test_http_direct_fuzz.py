"""The server's direct HTTP path against h11, on generated heads.

`test_http_direct.py` pins fourteen request shapes; this feeds generated variations
of a request's head (field spelling and spacing, duplicated and conflicting framing
fields, line endings, folded lines, bytes outside the grammar, bodies longer or
shorter than announced) to two fresh connections: once whole, where the direct path
may take it, and once a byte at a time, where no read holds a whole head and h11
reads every byte. Whatever the direct path accepts must be answered byte for byte as
h11's path answers it, with the same events; whatever it declines must fall through
to h11 and so come out the same too. A difference is a request the direct path reads
otherwise than h11 would (a smuggling risk), so the property is equality, whatever
the answer is.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import ClientConfig, ClientConnection
from mcp_core._http_client import HTTPClientEndpoint
from tests.fuzz.harness import scaled

from .test_http_server import MODERN, Server

# The request's method line: the plain one most often, else one of these.
_FIRST_LINES = [
    b"GET /mcp HTTP/1.1",
    b"DELETE /mcp HTTP/1.1",
    b"PUT /mcp HTTP/1.1",
    b"post /mcp HTTP/1.1",
    b"POST /mcp HTTP/1.0",
    b"POST /mcp HTTP/2.0",
    b"POST  /mcp HTTP/1.1",
    b"POST /mcp?x=1 HTTP/1.1",
    b"POST http://localhost:8000/mcp HTTP/1.1",
    b"POST /mcp HTTP/1.1 ",
]

# How a field's name is joined to its value, what may follow a value before its
# line ends, and how a line ends: the plain spelling most often, else an odd one
# (each line is drawn apart, so the odd ones must be rare for most heads to be plain).
_SEPARATORS = [b":", b":  ", b":\t", b" : ", b"\t: "]
_TRAILERS = [b" ", b"\t", b"  "]
_ENDINGS = [b"\n", b"\r", b"\r\r\n"]
_NAME_CASES = st.sampled_from(["as-is", "as-is", "lower", "upper"])


def _mostly(draw: Any, plain: bytes, odd: list[bytes], one_in: int = 30) -> bytes:
    """`plain` but about once in `one_in` draws, then one of `odd`.

    A list, not `st.integers(1, one_in)`: Hypothesis draws integers near their bounds
    far more often than between them, which would make nearly every line odd.
    """
    return draw(st.sampled_from([plain] * (one_in - 1) * len(odd) + odd))


def _rarely(draw: Any, one_in: int) -> bool:
    """True about once in `one_in` draws (see `_mostly`)."""
    return draw(st.sampled_from([False] * (one_in - 1) + [True]))


def _spell(name: str, how: str) -> bytes:
    if how == "lower":
        return name.lower().encode()
    if how == "upper":
        return name.upper().encode()
    return name.encode()


@st.composite
def _length_values(draw: Any, size: int) -> bytes:
    """A Content-Length value: right most often, else wrong in one of the ways a
    parser might read differently."""
    return draw(
        st.sampled_from(
            [b"%d" % size] * 12
            + [
                b"+%d" % size,
                b"0%d" % size,
                b"%d, %d" % (size, size),
                b"%d,%d" % (size, size + 1),
                b"%d" % (size + 3),
                b"%d" % max(size - 3, 0),
                b"-1",
                b"0x10",
                b"",
                b"%d " % size + b"x",
                b"99999999999999999999",
            ]
        )
    )


def _framing_extras(body: bytes) -> list[tuple[str, bytes]]:
    """Fields either side may add to a head: framing that agrees or conflicts with
    the body, connection options, and fields outside the grammar."""
    return [
        ("Content-Length", b"%d" % len(body)),
        ("Content-Length", b"%d" % (len(body) + 1)),
        ("Transfer-Encoding", b"chunked"),
        ("Transfer-Encoding", b"identity"),
        ("Connection", b"close"),
        ("Connection", b"keep-alive"),
        ("Connection", b"Upgrade"),
        ("Connection", b"keep-alive, close"),
        ("X-Extra", b"a\x00b"),
        ("X-Extra", b"caf\xe9"),
        ("X Bad", b"1"),
        ("", b"nameless"),
    ]


def _head(
    draw: Any, first_line: bytes, fields: list[tuple[str, bytes]], extras: list[tuple[str, bytes]]
) -> bytes:
    """A head: the first line, `fields` with up to three of `extras` inserted (rarely
    one dropped), each line spelled and ended plainly most often, then the blank line."""
    fields = list(fields)
    for _ in range(draw(st.sampled_from([0] * 6 + [1, 1, 2, 3]))):
        fields.insert(draw(st.integers(0, len(fields))), draw(st.sampled_from(extras)))
    if _rarely(draw, 10):  # drop one field
        del fields[draw(st.integers(0, len(fields) - 1))]
    lines = [first_line]
    for name, value in fields:
        separator = _mostly(draw, b": ", _SEPARATORS)
        line = _spell(name, draw(_NAME_CASES)) + separator + value + _mostly(draw, b"", _TRAILERS)
        lines.append(line)
        if _rarely(draw, 30):  # an obsolete folded continuation
            lines.append(b" folded")
    head = b"".join(line + _mostly(draw, b"\r\n", _ENDINGS) for line in lines)
    return head + _mostly(draw, b"\r\n", _ENDINGS)


@st.composite
def _requests(draw: Any, session: dict[str, str]) -> bytes:
    """One request (sometimes followed by a second, pipelined) on a legacy session."""
    body = _mostly(
        draw,
        b'{"jsonrpc":"2.0","id":7,"method":"ping"}',
        [b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}', b"", b"{"],
        one_in=3,
    )
    fields: list[tuple[str, bytes]] = [
        ("Host", b"localhost:8000"),
        ("Accept", b"application/json, text/event-stream"),
        ("Content-Type", b"application/json"),
        ("Content-Length", draw(_length_values(len(body)))),
        ("Mcp-Session-Id", session["Mcp-Session-Id"].encode()),
        ("MCP-Protocol-Version", session["MCP-Protocol-Version"].encode()),
    ]
    extras = [
        *_framing_extras(body),
        ("Host", b"localhost:8000"),
        ("Host", b"evil.example"),
        ("Expect", b"100-continue"),
        ("Upgrade", b"websocket"),
        ("X-Extra", b"a\x7fb"),
        ("X-Extra", b"a  b"),
        ("X-Extra:", b"1"),
    ]
    first = _mostly(draw, b"POST /mcp HTTP/1.1", _FIRST_LINES, one_in=4)
    head = _head(draw, first, fields, extras)
    request = head + body
    if draw(st.booleans()):  # a plain second request, pipelined behind the first
        request += _plain_ping(session)
    return request


def _plain_ping(session: dict[str, str]) -> bytes:
    """A ping (id 8) on `session`, of the plainest shape: the direct path reads it."""
    return (
        b"POST /mcp HTTP/1.1\r\nHost: localhost:8000\r\n"
        b"Accept: application/json, text/event-stream\r\n"
        b"Content-Type: application/json\r\nContent-Length: 40\r\n"
        + b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in session.items())
        + b'\r\n{"jsonrpc":"2.0","id":8,"method":"ping"}'
    )


def _session(server: Server) -> dict[str, str]:
    return server.session_headers(server.initialize())


def _serve(request: bytes, *, whole: bool) -> tuple[bytes, list[str], bool]:
    server = Server()
    _session(server)  # session-1 on every fresh server: the request names it
    conn = server.conn()
    events: list[Any] = []
    out = b""
    pieces = [request] if whole else [request[i : i + 1] for i in range(len(request))]
    for piece in pieces:
        if conn.closed:
            break
        events += conn.receive_data(piece, now=0.0)
        server.endpoint.pump(now=0.0)
        out += conn.data_to_send()
    events += conn.tick(0.0)
    out += conn.data_to_send()
    return out, [type(e).__name__ for e in events], conn.closed


_PROTO_SESSION = _session(Server())


@settings(
    max_examples=scaled(300),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_requests(_PROTO_SESSION))
def test_a_generated_request_is_answered_alike_whole_and_a_byte_at_a_time(request: bytes) -> None:
    direct = _serve(request, whole=True)
    via_h11 = _serve(request, whole=False)
    assert direct == via_h11


def test_the_generator_reaches_both_paths() -> None:
    """The property above means something only if generated requests take the direct
    path and others fall through to h11: check both happen for two fixed ones."""
    plain = _plain_ping(_PROTO_SESSION)
    chunked = (
        plain.replace(b"Content-Length: 40", b"Transfer-Encoding: chunked").replace(
            b'\r\n\r\n{"jsonrpc"', b'\r\n\r\n28\r\n{"jsonrpc"'
        )
        + b"\r\n0\r\n\r\n"
    )
    for request, h11_read in ((plain, False), (chunked, True)):
        server = Server()
        _session(server)
        conn = server.conn()
        conn.receive_data(request, now=0.0)
        server.endpoint.pump(now=0.0)
        assert b'"id":8' in conn.data_to_send()
        assert (conn._h11.their_http_version is not None) is h11_read


# ===================================================================== the client

# A response's status line: the plain one most often, else one of these.
_STATUS_LINES = [
    b"HTTP/1.1 201 Created",
    b"HTTP/1.1 204 No Content",
    b"HTTP/1.1 304 Not Modified",
    b"HTTP/1.1 100 Continue",
    b"HTTP/1.1 404 Not Found",
    b"HTTP/1.1 200",
    b"HTTP/1.1 200 ",
    b"HTTP/1.0 200 OK",
    b"HTTP/1.1  200 OK",
    b"http/1.1 200 OK",
]


@st.composite
def _responses(draw: Any, body: bytes) -> bytes:
    """A response (then, sometimes, the end of the stream) to the client's request."""
    fields: list[tuple[str, bytes]] = [
        ("content-type", _mostly(draw, b"application/json", [b"text/plain", b""], one_in=8)),
        ("Content-Length", draw(_length_values(len(body)))),
    ]
    extras = [*_framing_extras(body), ("Mcp-Session-Id", b"s-1")]
    first = _mostly(draw, b"HTTP/1.1 200 OK", _STATUS_LINES, one_in=4)
    return _head(draw, first, fields, extras) + body


def _fetch(response: bytes, *, whole: bool, end: bool) -> tuple[list[str], bool, bool]:
    """Feed a response to a fresh client connection whose request is a tools/list (the
    request id is 0 on every fresh client): what it made of it."""
    mcp = ClientConnection(ClientConfig(mode=MODERN))
    client = HTTPClientEndpoint(mcp, host="example.test")
    mcp.connect()
    mcp.send_request("tools/list")
    [request] = client.pump().requests
    conn = client.new_connection()
    assert conn.start(request)
    conn.data_to_send()
    events: list[Any] = []
    pieces = [response] if whole else [response[i : i + 1] for i in range(len(response))]
    for piece in pieces + ([b""] if end else []):
        if conn.closed:
            break
        events += conn.receive_data(piece)
    return [repr(e) for e in events], conn.closed, conn.busy


_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"tools": []}}).encode()


@settings(
    max_examples=scaled(200),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_responses(_TOOLS), st.booleans())
def test_a_generated_response_is_read_alike_whole_and_a_byte_at_a_time(
    response: bytes, end: bool
) -> None:
    """The same events both ways; and the same end, but for one allowed difference:
    bytes past the announced body (a server sending what no request asked for) close
    a directly read connection at once, while h11 holds them until the next cycle or
    the end of the stream. Closing is the safe reading (those bytes would otherwise be
    taken for the next request's response), so the direct path may close earlier,
    never later; at the end of the stream both have closed."""
    direct_events, direct_closed, direct_busy = _fetch(response, whole=True, end=end)
    h11_events, h11_closed, h11_busy = _fetch(response, whole=False, end=end)
    assert direct_events == h11_events
    assert direct_busy == h11_busy
    assert direct_closed or not h11_closed
    if end:
        assert direct_closed == h11_closed


def test_bytes_after_a_close_request_wait_unread_under_its_stream() -> None:
    """A legacy GET stream asked with `Connection: close`, then a pipelined ping: RFC
    9112 9.6 has the server process no later request and close after the response.
    The stream stays open, and the ping unanswered, whether the ping came in the GET's
    own read or byte by byte later (h11 alone calls late bytes an error and would cut
    the stream; the generated property above found the two paths apart)."""
    session = _PROTO_SESSION
    body = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
    get = (
        b"GET /mcp HTTP/1.1\r\nConnection: close\r\nHost: localhost:8000\r\n"
        b"Accept: application/json, text/event-stream\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n"
        % len(body)
        + b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in session.items())
        + b"\r\n"
        + body
    )
    answers = [_serve(get + _plain_ping(session), whole=whole) for whole in (True, False)]
    assert answers[0] == answers[1]
    out, _, closed = answers[0]
    assert out.startswith(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
    assert b"Connection: close\r\n" in out
    assert b'"id":8' not in out  # the ping is not processed
    assert not closed  # the stream goes on until it ends
