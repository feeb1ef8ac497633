"""Transports: how MCP bytes travel, each written once above the backends.

- `stdio` (taking over this process's stdin/stdout) and `process` (starting and
  stopping a stdio server); the stdio and TCP sessions themselves are opened by
  each backend module (`mcp_adapters.asyncio`, `.trio`, `.sockets`);
- `http_server` / `http_client`: Streamable HTTP on real sockets, each TCP
  connection run by the one `Driver` on the running loop's backend;
- `websocket`: MCP over WebSocket, on the running loop's backend;
- `link`: both engines in one process, joined by calls instead of a pipe.

Importing this package imports none of them.
"""
