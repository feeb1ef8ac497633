"""The direct path of both HTTP connections: plain requests and responses read and
written without h11 must be byte for byte what h11 reads and writes, and anything
else must still go through h11 (the same answers, the same errors)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import h11
import pytest

from mcp_core import ClientConfig, ClientConnection, RequestFailed, ResponseReceived
from mcp_core._http_client import HTTPClientConnection, HTTPClientEndpoint
from mcp_core._http_server import HTTPServerConnection

from .test_http_server import (
    MODERN,
    Server,
    http_request,
    init_params,
    modern_call,
    modern_headers,
    note,
    parse_responses,
    rpc,
)

# ===================================================================== the server


def _session(server: Server) -> dict[str, str]:
    """A legacy session on `server` (ids are numbered, so two servers get the same)."""
    return server.session_headers(server.initialize())


CASES: dict[str, Callable[[Server], bytes]] = {
    "legacy initialize": lambda s: http_request(body=rpc(0, "initialize", init_params())),
    "legacy ping in a session": lambda s: http_request(body=rpc(1, "ping"), headers=_session(s)),
    "legacy notification (202)": lambda s: http_request(
        body=note("notifications/roots/list_changed"), headers=_session(s)
    ),
    "legacy GET stream (chunked SSE)": lambda s: http_request(
        "GET", accept="text/event-stream", headers=_session(s)
    ),
    "DELETE of a session": lambda s: http_request("DELETE", headers=_session(s)),
    "2026-07-28 server/discover": lambda s: http_request(
        body=modern_call(1, "server/discover"), headers=modern_headers("server/discover")
    ),
    "2026-07-28 GET (405)": lambda s: http_request("GET", headers={"MCP-Protocol-Version": MODERN}),
    "2026-07-28 mirrored header mismatch": lambda s: http_request(
        body=modern_call(1, "tools/list"), headers=modern_headers("tools/call")
    ),
    "unknown path (404)": lambda s: http_request(body=rpc(1, "ping"), target="/nope"),
    "parse error (400)": lambda s: http_request(body=b"{"),
    "refused from the head, body read after": lambda s: http_request(
        body=rpc(0, "initialize", init_params()), content_type="text/plain"
    ),
    "unknown session (404)": lambda s: http_request(
        body=rpc(1, "ping"),
        headers={"Mcp-Session-Id": "nope", "MCP-Protocol-Version": "2025-11-25"},
    ),
    "a Host not allowed": lambda s: http_request(body=rpc(1, "ping"), host="evil.example"),
    "two requests in one read": lambda s: (
        http_request(body=rpc(1, "ping"), headers=(h := _session(s)))
        + http_request(body=rpc(2, "ping"), headers=h)
    ),
}


def _served(case: str, *, whole: bool) -> tuple[bytes, list[str], HTTPServerConnection]:
    """Feed a case's request to a fresh connection whole (the direct path) or a byte at
    a time (no byte holds a whole head, so h11 reads it); what came out, in order."""
    server = Server()
    request = CASES[case](server)
    conn = server.conn()
    events: list[Any] = []
    out = b""
    for piece in [request] if whole else [request[i : i + 1] for i in range(len(request))]:
        events += conn.receive_data(piece, now=0.0)
        server.endpoint.pump(now=0.0)
        out += conn.data_to_send()
    events += conn.tick(0.0)
    out += conn.data_to_send()
    return out, [type(e).__name__ for e in events], conn


@pytest.mark.parametrize("case", list(CASES))
def test_a_plain_request_gets_the_same_bytes_read_directly_as_over_h11(case: str) -> None:
    direct, direct_events, direct_conn = _served(case, whole=True)
    via_h11, h11_events, h11_conn = _served(case, whole=False)
    assert direct and direct == via_h11
    assert direct_events == h11_events
    assert direct_conn.closed == h11_conn.closed
    # h11 never saw the request that came whole, and read the one that trickled in.
    assert direct_conn._h11.their_http_version is None
    assert h11_conn._h11.their_http_version == b"1.1"


def _chunked(body: bytes, headers: dict[str, str]) -> bytes:
    lines = ["POST /mcp HTTP/1.1", "Host: localhost:8000", "Content-Type: application/json"]
    lines += ["Accept: application/json, text/event-stream", "Transfer-Encoding: chunked"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode()
    return head + b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)


def test_one_connection_moves_between_the_direct_path_and_h11() -> None:
    server = Server()
    session = _session(server)
    conn = server.conn()
    ids = []
    for rid, data in enumerate(
        [
            http_request(body=rpc(1, "ping"), headers=session),  # direct
            _chunked(json.dumps(rpc(2, "ping")).encode(), session),  # h11: chunked
            http_request(body=rpc(3, "ping"), headers=session),  # direct again
            http_request(body=rpc(4, "ping"), headers={**session, "Expect": "100-continue"}),
            http_request(body=rpc(5, "ping"), headers=session),
        ],
        start=1,
    ):
        conn.receive_data(data, now=0.0)
        server.endpoint.pump(now=0.0)
        out = conn.data_to_send()
        if rid == 4:  # h11 answers the expectation (the body came with the head)
            assert out.startswith(b"HTTP/1.1 100 ")
            out = out[out.index(b"\r\n\r\n") + 4 :]
        [response] = parse_responses(out)
        assert response.status == 200
        ids.append(response.json()["id"])
    assert ids == [1, 2, 3, 4, 5] and not conn.closed


def test_a_request_whose_body_is_still_arriving_is_read_by_h11() -> None:
    server = Server()
    data = http_request(body=rpc(0, "initialize", init_params()))
    conn = server.conn()
    assert conn.receive_data(data[:-5], now=0.0) == []
    events = conn.receive_data(data[-5:], now=0.0)
    server.endpoint.pump(now=0.0)
    [response] = parse_responses(conn.data_to_send())
    assert response.status == 200 and events
    assert conn._h11.their_http_version == b"1.1"


# ===================================================================== the client


def _client(*extra: tuple[str, str]) -> tuple[HTTPClientEndpoint, ClientConnection]:
    mcp = ClientConnection(ClientConfig(mode=MODERN))
    client = HTTPClientEndpoint(mcp, host="example.test", headers=list(extra))
    mcp.connect()
    return client, mcp


def _started(client: HTTPClientEndpoint) -> tuple[HTTPClientConnection, bytes, Any]:
    [request] = client.pump().requests
    conn = client.new_connection()
    assert conn.start(request)
    return conn, conn.data_to_send(), request


def _json_response(body: Any, *fields: str) -> bytes:
    raw = json.dumps(body).encode()
    head = ["HTTP/1.1 200 OK", "content-type: application/json", *fields]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + raw


def test_a_request_written_directly_is_what_h11_writes() -> None:
    client, mcp = _client(("authorization", "Bearer t"))
    mcp.send_request("tools/list")
    conn, wire, request = _started(client)
    h = h11.Connection(h11.CLIENT)
    expected = h.send(
        h11.Request(method=request.method, target=request.target, headers=request.headers)
    )
    expected += h.send(h11.Data(data=request.body)) + h.send(h11.EndOfMessage())
    assert wire == expected
    assert conn._h11.our_state is h11.IDLE  # h11 did not write it


@pytest.mark.parametrize(
    ("fields", "direct"),
    [
        pytest.param(("content-length: {n}",), True, id="plain (direct)"),
        pytest.param(("content-length: {n}", "connection: close"), True, id="then close (direct)"),
        pytest.param(("transfer-encoding: chunked",), False, id="chunked (h11)"),
        pytest.param(
            ("content-length: {n}", "content-length: {n}"), False, id="length twice (h11)"
        ),
    ],
)
@pytest.mark.parametrize("trickle", [False, True], ids=["whole", "a byte at a time"])
def test_a_response_is_read_the_same_directly_or_by_h11(
    fields: tuple[str, ...], direct: bool, trickle: bool
) -> None:
    client, mcp = _client()
    rid = mcp.send_request("tools/list")
    conn, _, _ = _started(client)
    message = {"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}
    raw = json.dumps(message).encode()
    if "transfer-encoding: chunked" in fields:
        response = _json_response(None, *fields)[: -len(b"null")]
        response += b"%x\r\n%b\r\n0\r\n\r\n" % (len(raw), raw)
    else:
        response = _json_response(message, *(f.format(n=len(raw)) for f in fields))
    events = []
    for piece in [response[i : i + 1] for i in range(len(response))] if trickle else [response]:
        events += conn.receive_data(piece)
    [got] = [e for e in events if isinstance(e, ResponseReceived)]
    assert got.request_id == rid and got.result.tools == []
    assert not conn.busy and conn.closed == ("connection: close" in fields)
    # h11 read the response only when it was not of the plainest shape.
    assert conn._h11.their_http_version == (None if direct else b"1.1")


def test_an_early_end_of_a_body_reads_as_h11_words_it() -> None:
    messages = []
    # The second client sends a Connection field, which keeps it (and its response) on h11.
    for extra in [(), (("connection", "keep-alive"),)]:
        client, mcp = _client(*extra)
        mcp.send_request("tools/list")
        conn, _, _ = _started(client)
        assert conn.receive_data(_json_response({"jsonrpc": "2.0"}, "content-length: 50")) == []
        [failed] = [e for e in conn.receive_data(b"") if isinstance(e, RequestFailed)]
        messages.append(failed.message)
        assert conn.closed
    assert messages[0] == messages[1]
    assert "(received 18 bytes, expected 50)" in messages[0]


def test_an_early_end_before_the_head_reads_as_h11_words_it() -> None:
    for partial in [b"", b"HTTP/1.1 200 OK\r\ncontent-"]:
        messages = []
        for extra in [(), (("connection", "keep-alive"),)]:
            client, mcp = _client(*extra)
            mcp.send_request("tools/list")
            conn, _, _ = _started(client)
            if partial:
                assert conn.receive_data(partial) == []
            [failed] = [e for e in conn.receive_data(b"") if isinstance(e, RequestFailed)]
            messages.append(failed.message)
        assert messages[0] == messages[1]
