"""The direct path of the HTTP server connection: plain requests read and answered
without h11 must get byte for byte what h11 gives them, and anything else must still
go through h11 (the same answers, the same errors)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

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
