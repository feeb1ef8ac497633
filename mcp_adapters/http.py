"""Streamable HTTP on real sockets: server and client, both protocol eras, on anyio.

One implementation runs on asyncio and on trio. The protocol lives in `mcp_core.http`
(sans-IO, over h11); this module only moves bytes, runs timers and tasks::

    # server: until cancelled (or `async with http_server(mcp, port=0) as running:`)
    await serve_http(mcp, host="127.0.0.1", port=8000, path="/mcp")

    # client: the handshake runs on entry ("auto": server/discover, else initialize)
    async with connect_http("http://127.0.0.1:8000/mcp", ClientConfig(mode="auto")) as s:
        result = await s.request("tools/call", {"name": "echo", "arguments": {}})

Server: `MCPServer.handle` runs as one task per request; a legacy `ctx.elicit` is a
server-to-client request on the POST's SSE stream whose answer may come back on any
TCP connection of the session; a cancelled request (legacy `notifications/cancelled`,
or a 2026-07-28 client closing its stream) cancels its task. Loopback binds check
`Host` and `Origin` against the loopback allow-list for the bound port.

Client: a small pool of keep-alive TCP connections, one HTTP exchange per connection
at a time; the legacy GET stream, resumption with `Last-Event-ID` after the server's
`retry`, and the DELETE on close; in 2026-07-28, cancelling a request closes its
connection.
"""

from mcp_adapters.transports.http_client import HTTPSession, connect_http
from mcp_adapters.transports.http_server import HTTPServer, http_server, serve_http

__all__ = ["HTTPServer", "HTTPSession", "connect_http", "http_server", "serve_http"]
