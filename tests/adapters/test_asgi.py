"""The MCP server as an ASGI application (`mcp_adapters.asgi`), under real ASGI servers.

Every app runs in its own server process on a free loopback port, under uvicorn
(asyncio) and then under hypercorn's trio worker; each set is started together, once,
and stopped and reaped when its tests end, whatever happens:

* `top`: examples/asgi_app.py's `mcp_app` (the book_table seed) as the top-level app,
  so the server's lifespan events start and stop it;
* `mounted`: the same file's Starlette `app`, which mounts it at /tools beside a route
  of its own and hands it Starlette's lifespan;
* `seeds`: tests/adapters/asgi_apps.py's Starlette app with every seed server and a
  probe mounted (the probe's tools report cancellations, wait, flood);
* `proxy`: the probe behind a public host name, trusting a proxy on 127.0.0.1.

Clients: ours and the official SDK's, in both protocol eras, on the seed flows; raw
HTTP/1.1 (h11 over a blocking socket) where a test needs to hold a stream, drop it,
stop reading it, or send from another loopback address (127.0.0.2 is not a trusted
proxy). Two tests are about uvicorn itself and start their own: its proxy-header
option, and its shutdown with streams open.
"""

from __future__ import annotations

import json
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import h11
import pytest
from mcp import Client as SDKClient
from mcp.types import ElicitRequestFormParams as SDKFormParams
from mcp.types import ElicitRequestURLParams as SDKURLParams
from mcp.types import ElicitResult as SDKElicitResult

from mcp_adapters import Client
from mcp_adapters.client import ClientRequestContext
from mcp_adapters.http import connect_http
from mcp_core._sse import SSEDecoder, SSEEvent
from mcp_core.types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from tests.interop.conftest import ServerProcess, http_servers

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0  # per socket operation: the machine may be loaded
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
BOTH = "application/json, text/event-stream"
PUBLIC = "mcp.example.com"


def uvicorn(target: str, *flags: str) -> list[str]:
    """uvicorn (asyncio) serving `target` (`module:app`, or `module:factory` with
    --factory) on the port the fixture picks."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        target,
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--no-access-log",
        "--timeout-graceful-shutdown",
        "2",  # open SSE streams would hold uvicorn's shutdown forever
        *flags,
    ]


def hypercorn(target: str) -> list[str]:
    """hypercorn's trio worker serving `target` (`module:app` or `module:factory()`)."""
    return [
        sys.executable,
        "-m",
        "hypercorn",
        "--worker-class",
        "trio",
        "--bind",
        "127.0.0.1:{port}",
        "--graceful-timeout",
        "2",
        target,
    ]


SERVERS = {
    "uvicorn": {
        "top": uvicorn("examples.asgi_app:mcp_app"),
        "mounted": uvicorn("examples.asgi_app:app"),
        "seeds": uvicorn("tests.adapters.asgi_apps:seeds", "--factory"),
        # uvicorn's own proxy-header handling is on by default (for 127.0.0.1): off here,
        # so that trusted_proxies alone decides (test_uvicorn_proxy_headers_... has it on).
        "proxy": uvicorn("tests.adapters.asgi_apps:proxied", "--factory", "--no-proxy-headers"),
    },
    "hypercorn-trio": {
        "top": hypercorn("examples.asgi_app:mcp_app"),
        "mounted": hypercorn("examples.asgi_app:app"),
        "seeds": hypercorn("tests.adapters.asgi_apps:seeds()"),
        "proxy": hypercorn("tests.adapters.asgi_apps:proxied()"),
    },
}


@pytest.fixture(scope="module", params=list(SERVERS))
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, ServerProcess]]:
    """Every app under one ASGI server: uvicorn (asyncio), then hypercorn (trio)."""
    log_dir = tmp_path_factory.mktemp(request.param)
    with http_servers(SERVERS[request.param], log_dir) as started:
        yield started


@pytest.fixture
def anyio_backend() -> str:
    # The clients' loop; the servers' is theirs (hypercorn's runs trio).
    return "asyncio"


def url(servers: dict[str, ServerProcess], name: str, path: str) -> str:
    return f"http://127.0.0.1:{servers[name].port}{path}"


PROBE = "/probe/mcp"
# (server, path) of the book_table seed, at the top level and mounted by Starlette.
FORM = {"top": ("top", "/mcp"), "mounted": ("mounted", "/tools/mcp")}


# ===================================================================== raw HTTP


class Raw:
    """One HTTP/1.1 connection, driven by hand (h11 client side, blocking socket)."""

    def __init__(self, port: int, *, source: str = "127.0.0.1", rcvbuf: int | None = None):
        self.port = port
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.bind((source, 0))
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(("127.0.0.1", port))
        self.h = h11.Connection(h11.CLIENT)

    def __enter__(self) -> Raw:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send(
        self,
        method: str,
        target: str,
        headers: dict[str, str] | None = None,
        body: Any = None,
        *,
        host: str | None = None,
    ) -> None:
        raw = (
            b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        )
        fields = {"Host": host or f"127.0.0.1:{self.port}", "Accept": BOTH}
        if method == "POST":
            fields["Content-Type"] = "application/json"
            fields["Content-Length"] = str(len(raw))
        fields.update(headers or {})
        out = self.h.send(h11.Request(method=method, target=target, headers=list(fields.items())))
        assert out is not None
        self.sock.sendall(out + (self.h.send(h11.Data(data=raw)) or b"") if raw else out)
        self.sock.sendall(self.h.send(h11.EndOfMessage()) or b"")

    def _next(self) -> Any:
        while True:
            event = self.h.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.h.receive_data(self.sock.recv(65536))

    def head(self) -> tuple[int, dict[str, str]]:
        event = self._next()
        assert isinstance(event, h11.Response), event
        return event.status_code, {k.decode(): v.decode() for k, v in event.headers}

    def body(self) -> bytes:
        chunks = []
        while True:
            event = self._next()
            if isinstance(event, h11.EndOfMessage):
                return b"".join(chunks)
            chunks.append(bytes(event.data))

    def events(self) -> Iterator[SSEEvent]:
        """SSE events as they arrive, until the response ends."""
        decoder = SSEDecoder()
        while True:
            event = self._next()
            if isinstance(event, h11.EndOfMessage):
                return
            yield from decoder.feed(bytes(event.data))

    def exchange(
        self, method: str, target: str, headers: Any = None, body: Any = None, **kw: Any
    ) -> tuple[int, dict[str, str], bytes]:
        self.send(method, target, headers, body, **kw)
        status, fields = self.head()
        data = self.body()
        self.h.start_next_cycle()
        return status, fields, data


def rpc(rid: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params else {})}


def modern(
    rid: int, method: str, params: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    return rpc(rid, method, {**(params or {}), "_meta": {PV: MODERN, CAPS: {}, **meta}})


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def initialize(port: int, path: str) -> dict[str, str]:
    """A legacy session by hand; the headers its later requests carry."""
    params = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    with Raw(port) as raw:
        status, fields, _ = raw.exchange("POST", path, body=rpc(0, "initialize", params))
        assert status == 200
        session = {"Mcp-Session-Id": fields["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
        status, _, _ = raw.exchange(
            "POST", path, session, {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        assert status == 202
    return session


def call(
    port: int,
    path: str,
    rid: int,
    tool: str,
    arguments: dict[str, Any],
    headers: dict[str, str] | None = None,
    **kw: Any,
) -> Any:
    """One tools/call (legacy when `headers` name a session, else 2026-07-28) -> result."""
    if headers is None:
        body, headers = (
            modern(rid, "tools/call", {"name": tool, "arguments": arguments}),
            modern_headers("tools/call", tool),
        )
    else:
        body = rpc(rid, "tools/call", {"name": tool, "arguments": arguments})
    with Raw(port, **kw) as raw:
        status, fields, data = raw.exchange("POST", path, headers, body)
    assert status == 200, data
    if fields["content-type"].startswith("text/event-stream"):
        data = [e.data for e in SSEDecoder().feed(data) if e.data][-1].encode()
    return json.loads(data)["result"]


def text(result: Any) -> str:
    if isinstance(result, dict):
        (block,) = result["content"]
        return str(block["text"])
    (block,) = result.content
    return str(block.text)


def until(condition: Any, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


# ============================================================ our Client, seeds


class Target:
    """A Client target for `url` whose "auto" probe may take as long as the machine
    needs: past `probe_timeout` the client settles on legacy by design, and the first
    request to a freshly started server on a loaded machine can be that slow."""

    def __init__(self, url: str) -> None:
        self.url = url

    def connect(self, config: Any, **options: Any) -> Any:
        return connect_http(self.url, config, probe_timeout=TIMEOUT, **options)


class Recorder:
    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> Any:
        self.asked.append(params)
        return self.answers.pop(0)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", MODERN, "auto"])
@pytest.mark.parametrize("where", list(FORM))
async def test_our_client_books_a_table(
    servers: dict[str, ServerProcess], where: str, mode: str
) -> None:
    answer = Recorder(
        ElicitResult(action="accept", content={"accept_alternative": True, "date": "2025-12-27"})
    )
    async with Client(
        Target(url(servers, *FORM[where])), mode=mode, elicitation_callback=answer
    ) as client:
        assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
        result = await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
    assert text(result) == "Booked a table for 2 on 2025-12-27."
    [asked] = answer.asked
    assert asked.message == "No tables for 2 on 2025-12-25. Would you like to try another date?"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_our_client_deletes_a_folder_through_a_resolver(
    servers: dict[str, ServerProcess], mode: str
) -> None:
    path = "/delete/ours-legacy/mcp" if mode == "legacy" else "/delete/ours-modern/mcp"
    answer = Recorder(
        ElicitResult(action="decline"), ElicitResult(action="accept", content={"ok": True})
    )
    async with Client(
        url(servers, "seeds", path), mode=mode, elicitation_callback=answer
    ) as client:
        texts = [
            text(await client.call_tool("delete_folder", {"path": p}))
            for p in ("/tmp/empty", "/tmp/project", "/tmp/project")
        ]
    assert texts == ["deleted /tmp/empty", "declined: folder not deleted", "deleted /tmp/project"]
    assert [p.message for p in answer.asked] == ["/tmp/project has 2 file(s). Delete anyway?"] * 2


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_our_client_is_sent_to_a_url(servers: dict[str, ServerProcess], mode: str) -> None:
    async def accept(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept")

    asked: list[Any] = []
    async with Client(
        url(servers, "seeds", "/url/mcp"), mode=mode, elicitation_callback=accept
    ) as client:
        result = await client.call_tool("pay_deposit", {"booking_id": "b-42"})
    assert text(result) == "Complete the payment in your browser."
    [params] = asked
    assert isinstance(params, ElicitRequestURLParams)
    assert params.url == "https://pay.example.com/deposit/b-42"


@pytest.mark.anyio
async def test_our_client_listens_for_changes(servers: dict[str, ServerProcess]) -> None:
    """A 2026-07-28 `subscriptions/listen` stream stays open across other requests and
    carries what the server announces."""
    async with (
        Client(url(servers, "seeds", PROBE), mode=MODERN) as client,
        client.listen(tools=True) as stream,
    ):
        told = await client.call_tool("announce", {})
        with anyio.fail_after(TIMEOUT):
            event = await stream.receive()
    assert told.structured_content == {"result": 1}
    assert event.method == "notifications/tools/list_changed"


# ============================================================ the official SDK

SDK_MODES = {"legacy": LEGACY, "default": MODERN}


def sdk(target: str, mode: str, **callbacks: Any) -> SDKClient:
    if mode != "default":
        callbacks["mode"] = mode
    return SDKClient(target, **callbacks)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", list(SDK_MODES))
@pytest.mark.parametrize("where", list(FORM))
async def test_sdk_books_a_table(servers: dict[str, ServerProcess], where: str, mode: str) -> None:
    answer = Recorder(
        SDKElicitResult(action="accept", content={"accept_alternative": True, "date": "2025-12-27"})
    )
    async with sdk(url(servers, *FORM[where]), mode, elicitation_callback=answer) as client:
        assert client.protocol_version == SDK_MODES[mode]
        result = await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
    assert text(result) == "Booked a table for 2 on 2025-12-27."
    [asked] = answer.asked
    assert isinstance(asked, SDKFormParams) and asked.requested_schema["required"] == [
        "accept_alternative"
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", list(SDK_MODES))
async def test_sdk_deletes_a_folder_through_a_resolver(
    servers: dict[str, ServerProcess], mode: str
) -> None:
    answer = Recorder(
        SDKElicitResult(action="cancel"), SDKElicitResult(action="accept", content={"ok": True})
    )
    async with sdk(
        url(servers, "seeds", f"/delete/sdk-{mode}/mcp"), mode, elicitation_callback=answer
    ) as client:
        texts = [
            text(await client.call_tool("delete_folder", {"path": p}))
            for p in ("/tmp/empty", "/tmp/project", "/tmp/project")
        ]
    assert texts == ["deleted /tmp/empty", "cancelled: folder not deleted", "deleted /tmp/project"]
    assert len(answer.asked) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("mode", list(SDK_MODES))
async def test_sdk_is_sent_to_a_url(servers: dict[str, ServerProcess], mode: str) -> None:
    answer = Recorder(SDKElicitResult(action="accept"))
    async with sdk(url(servers, "seeds", "/url/mcp"), mode, elicitation_callback=answer) as client:
        result = await client.call_tool("pay_deposit", {"booking_id": "b-42"})
    assert text(result) == "Complete the payment in your browser."
    [asked] = answer.asked
    assert isinstance(asked, SDKURLParams) and asked.url == "https://pay.example.com/deposit/b-42"


# ==================================================== mounting and HTTP rules


def test_starlette_serves_its_own_routes_beside_ours(servers: dict[str, ServerProcess]) -> None:
    port = servers["mounted"].port
    with Raw(port) as raw:
        assert raw.exchange("GET", "/health")[2] == b"ok"
        assert raw.exchange("GET", "/nowhere")[0] == 404  # Starlette's own 404
        # Under the mount, paths other than the endpoint are ours to refuse.
        assert raw.exchange("POST", "/tools/other", body=rpc(1, "tools/list"))[0] == 404
        # The same keep-alive connection carries an MCP request after all that.
        status, fields, data = raw.exchange(
            "POST", "/tools/mcp", modern_headers("tools/list"), modern(2, "tools/list")
        )
    assert status == 200 and fields["content-type"] == "application/json"
    assert [t["name"] for t in json.loads(data)["result"]["tools"]] == ["book_table"]


def test_a_mounted_app_without_its_lifespan_says_so(servers: dict[str, ServerProcess]) -> None:
    with Raw(servers["seeds"].port) as raw:
        assert raw.exchange("GET", "/hello")[2] == b"hello from starlette"
        status, _, data = raw.exchange("POST", "/not-started/mcp", body=rpc(1, "tools/list"))
    assert status == 503 and b"lifespan" in data


@pytest.mark.parametrize("where", list(FORM))
def test_host_origin_and_status_rules_hold(servers: dict[str, ServerProcess], where: str) -> None:
    name, path = FORM[where]
    with Raw(servers[name].port) as raw:
        assert (
            raw.exchange("POST", path, body=rpc(1, "tools/list"), host="evil.example:80")[0] == 421
        )
        assert (
            raw.exchange("POST", path, {"Origin": "http://evil.example"}, rpc(1, "tools/list"))[0]
            == 403
        )
        # Refused unread (406): the connection still carries the next request.
        assert (
            raw.exchange("POST", path, {"Accept": "application/json"}, rpc(1, "tools/list"))[0]
            == 406
        )
        assert raw.exchange("GET", path, {"Accept": "text/event-stream"})[0] == 400  # no session
        assert raw.exchange("DELETE", path, {"MCP-Protocol-Version": MODERN})[0] == 405
        status, _, data = raw.exchange(
            "POST", path, modern_headers("tools/list"), modern(2, "tools/list")
        )
        assert status == 200 and b"book_table" in data


def test_a_declared_body_over_the_limit_is_refused_unread(
    servers: dict[str, ServerProcess],
) -> None:
    """Past twice the limit (1 MiB here) the answer comes from the head alone: the client,
    which has sent none of its 3 MiB, is told at once, and that the connection will not
    carry another request."""
    with Raw(servers["seeds"].port) as raw:
        fields = [
            ("Host", f"127.0.0.1:{raw.port}"),
            ("Accept", BOTH),
            ("Content-Type", "application/json"),
            ("Content-Length", str(3 << 20)),
        ]
        out = raw.h.send(h11.Request(method="POST", target="/probe/mcp", headers=fields))
        raw.sock.sendall(out or b"")
        status, headers = raw.head()
        assert status == 413 and headers.get("connection") == "close"
        error = json.loads(raw.body())
        assert error["id"] is None and "exceeds the limit" in error["error"]["message"]


def test_a_body_over_the_limit_is_read_and_answered_413_with_its_id(
    servers: dict[str, ServerProcess],
) -> None:
    """Under twice the limit the body is read to its end and dropped, keeping its ends:
    the 413 carries the request's id, and the connection goes on."""
    with Raw(servers["seeds"].port) as raw:
        body = modern(9, "tools/list", {"pad": "x" * (1 << 20)})
        status, _, data = raw.exchange("POST", "/probe/mcp", modern_headers("tools/list"), body)
        assert status == 413 and json.loads(data)["id"] == 9
        status, _, data = raw.exchange(
            "POST", "/probe/mcp", modern_headers("tools/list"), modern(2, "tools/list")
        )
        assert status == 200  # the connection carried the next request


def test_websocket_upgrades_are_refused(servers: dict[str, ServerProcess]) -> None:
    with Raw(servers["top"].port) as raw:
        raw.sock.sendall(
            b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        assert raw.sock.recv(100).startswith(b"HTTP/1.1 403")


# ==================================================== streams, loss, pressure


def test_a_legacy_session_streams_resumes_and_ends(servers: dict[str, ServerProcess]) -> None:
    port = servers["seeds"].port
    session = initialize(port, PROBE)
    # The call reports progress, then waits: its answer commits to an SSE stream.
    raw = Raw(port)
    raw.send(
        "POST",
        PROBE,
        session,
        rpc(
            5,
            "tools/call",
            {"name": "steps", "arguments": {"tag": "resume"}, "_meta": {"progressToken": "p"}},
        ),
    )
    status, fields = raw.head()
    assert status == 200 and fields["content-type"] == "text/event-stream"
    assert fields["mcp-session-id"] == session["Mcp-Session-Id"]
    got = []
    for event in raw.events():
        got.append(event)
        if event.data:
            break
    assert got[0].data == "" and got[0].id  # the priming event
    assert json.loads(got[-1].data)["method"] == "notifications/progress"
    raw.close()  # dropped: in this era not a cancellation, the stream is resumable
    assert text(call(port, PROBE, 6, "release", {"tag": "resume"}, session)) == "released"
    with Raw(port) as again:
        again.send(
            "GET", PROBE, {**session, "Accept": "text/event-stream", "Last-Event-ID": got[-1].id}
        )
        assert again.head()[0] == 200
        [answer] = [json.loads(e.data) for e in again.events() if e.data]
    assert answer["id"] == 5 and text(answer["result"]) == "done resume"
    assert "resume" not in seen(port, session)["cancelled"]
    with Raw(port) as raw:
        assert raw.exchange("DELETE", PROBE, session)[0] == 200
        assert raw.exchange("POST", PROBE, session, rpc(8, "tools/list"))[0] == 404


def seen(port: int, session: dict[str, str] | None = None) -> dict[str, list[str]]:
    result: dict[str, list[str]] = call(port, PROBE, 99, "seen", {}, session)["structuredContent"]
    return result


@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_a_client_that_goes_away(servers: dict[str, ServerProcess], era: str) -> None:
    """A 2026-07-28 call whose client goes away (http.disconnect) is cancelled; a legacy
    one is not (its stream is resumable), until its session ends."""
    port = servers["seeds"].port
    tag = f"gone-{era}"
    session = initialize(port, PROBE) if era == "legacy" else None
    if session is None:
        headers, body = (
            modern_headers("tools/call", "wait"),
            modern(1, "tools/call", {"name": "wait", "arguments": {"tag": tag}}),
        )
    else:
        headers, body = session, rpc(1, "tools/call", {"name": "wait", "arguments": {"tag": tag}})
    raw = Raw(port)
    raw.send("POST", PROBE, headers, body)
    until(lambda: tag in seen(port)["started"])
    raw.close()
    if session is None:
        until(lambda: tag in seen(port)["cancelled"])
        return
    time.sleep(1.0)  # (were it cancelled, it would be by now)
    assert tag not in seen(port)["cancelled"]
    with Raw(port) as raw:
        assert raw.exchange("DELETE", PROBE, session)[0] == 200
    until(lambda: tag in seen(port)["cancelled"])


def test_a_legacy_get_stream_carries_server_messages(servers: dict[str, ServerProcess]) -> None:
    port = servers["seeds"].port
    session = initialize(port, PROBE)
    with Raw(port) as stream:
        stream.send("GET", PROBE, {**session, "Accept": "text/event-stream"})
        assert stream.head()[0] == 200
        events = stream.events()
        assert next(events).data == ""  # primed: resumable
        assert call(port, PROBE, 3, "announce", {}, session)["structuredContent"]["result"] >= 1
        note = json.loads(next(e for e in events if e.data).data)
        assert note["method"] == "notifications/tools/list_changed"
        # Deleting the session ends its GET stream (the response completes).
        with Raw(port) as raw:
            assert raw.exchange("DELETE", PROBE, session)[0] == 200
        assert [e for e in events if e.data] == []


def test_a_client_that_does_not_read_is_dropped(servers: dict[str, ServerProcess]) -> None:
    """Back-pressure: the server's `send` waits while the socket is full; what piles up
    in the exchange past `max_output_bytes` (1 MiB here) drops the stream, and a
    2026-07-28 call whose stream is dropped is cancelled. The client is still connected
    meanwhile."""
    port = servers["seeds"].port
    raw = Raw(port, rcvbuf=4096)
    try:
        raw.send(
            "POST",
            PROBE,
            modern_headers("tools/call", "flood"),
            modern(
                1, "tools/call", {"name": "flood", "arguments": {"tag": "flood"}}, progressToken=1
            ),
        )
        until(lambda: "flood" in seen(port)["cancelled"])
    finally:
        raw.close()


# ============================================================ trusted proxies

FORWARDED = {
    "X-Forwarded-Host": PUBLIC,
    "X-Forwarded-Proto": "https",
    "X-Forwarded-For": "203.0.113.9",
}


def whoami(
    server: ServerProcess, source: str, host: str, headers: dict[str, str]
) -> tuple[int, str | None]:
    body = modern(1, "tools/call", {"name": "whoami", "arguments": {}})
    with Raw(server.port, source=source) as raw:
        status, _, data = raw.exchange(
            "POST", "/mcp", {**modern_headers("tools/call", "whoami"), **headers}, body, host=host
        )
    return status, text(json.loads(data)["result"]) if status == 200 else None


def test_forwarded_headers_from_the_trusted_proxy_are_believed(
    servers: dict[str, ServerProcess],
) -> None:
    upstream = f"127.0.0.1:{servers['proxy'].port}"  # the name a proxy uses for us
    assert whoami(servers["proxy"], "127.0.0.1", upstream, FORWARDED) == (
        200,
        "203.0.113.9 https://mcp.example.com proxied=True",
    )
    # Without the proxy's word the upstream name is no allowed host.
    assert whoami(servers["proxy"], "127.0.0.1", upstream, {})[0] == 421


def test_forwarded_headers_from_anyone_else_are_ignored(servers: dict[str, ServerProcess]) -> None:
    upstream = f"127.0.0.1:{servers['proxy'].port}"
    assert whoami(servers["proxy"], "127.0.0.2", upstream, FORWARDED)[0] == 421
    # Addressed by the public name itself, it is served, as what it is.
    assert whoami(servers["proxy"], "127.0.0.2", PUBLIC, FORWARDED) == (
        200,
        "127.0.0.2 http://mcp.example.com proxied=False",
    )


def test_uvicorn_proxy_headers_rewrite_the_scope_first(tmp_path: Path) -> None:
    """With uvicorn's --proxy-headers (its default, for 127.0.0.1) the app sees the
    client where the proxy was, so it does not count as a trusted proxy: X-Forwarded-Host
    goes unheard (421 under the upstream name), while uvicorn's scheme and client show."""
    argv = uvicorn(
        "tests.adapters.asgi_apps:proxied", "--factory", "--forwarded-allow-ips", "127.0.0.1"
    )
    with http_servers({"proxy-uvicorn": argv}, tmp_path) as started:
        server = started["proxy-uvicorn"]
        assert whoami(server, "127.0.0.1", f"127.0.0.1:{server.port}", FORWARDED)[0] == 421
        assert whoami(server, "127.0.0.1", PUBLIC, FORWARDED) == (
            200,
            "203.0.113.9 https://mcp.example.com proxied=False",
        )


# ================================================================== lifespan


def test_lifespan_starts_and_stops_the_app_with_streams_open(tmp_path: Path) -> None:
    """SIGTERM with a legacy GET stream open: uvicorn waits for its connections (here
    at most 2 s: --timeout-graceful-shutdown), cancels what is left, then sends
    lifespan.shutdown, which ends every session; the process exits as uvicorn does on a
    signal (it re-raises it once shut down)."""
    server = ServerProcess("lifespan", uvicorn("examples.asgi_app:mcp_app"), tmp_path)
    try:
        server.wait_listening(time.monotonic() + 60)
        session = initialize(server.port, "/mcp")
        with Raw(server.port) as stream:
            stream.send("GET", "/mcp", {**session, "Accept": "text/event-stream"})
            assert stream.head()[0] == 200
            server.process.send_signal(signal.SIGTERM)
            assert server.process.wait(timeout=60) in (0, -signal.SIGTERM)
            while stream.sock.recv(65536):  # the stream was closed, not left hanging
                pass
    finally:
        server.terminate()
        server.reap()
    log = server.log_path.read_text()
    assert log.index("Application startup complete.") < log.index("Shutting down")
    assert log.index("timeout graceful shutdown exceeded") < log.index(
        "Application shutdown complete."
    )
