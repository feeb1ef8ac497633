"""mcp_adapters: everything that waits. Thin drivers binding `mcp_core` to real I/O.

One driver loop, written once (`mcp_adapters._driver`) against a small backend
seam (`mcp_adapters.backends`), offered three ways:

- `mcp_adapters.asyncio`: native asyncio transports and tasks;
- `mcp_adapters.trio`: trio streams, nurseries and cancel scopes;
- `mcp_adapters.sockets`: blocking, `selectors` plus threads for handlers.

Each offers the same small API: `Session` (send requests, answer the peer's),
`connect_stdio` / `connect_tcp` (clients), `serve_stdio` / `tcp_server` /
`serve_tcp` (servers). Importing this package imports neither backend;
`current_backend()` picks the async one for the running loop, which is how
code written on anyio (the high-level server and client) chooses.
"""

from __future__ import annotations

from mcp_adapters._errors import (
    ConnectionClosedError,
    LimitExceededError,
    RequestFailedError,
    RequestTimeoutError,
    TransportError,
)
from mcp_adapters.backends import current_backend
from mcp_adapters.transports.process import StdioServerParameters


def __getattr__(name: str) -> object:
    # The high-level API loads on first use, so importing the package stays cheap.
    if name == "Client":
        from mcp_adapters.client import Client

        return Client
    if name == "MCPServer":
        from mcp_adapters.server import MCPServer

        return MCPServer
    raise AttributeError(f"module 'mcp_adapters' has no attribute {name!r}")


__all__ = [
    "Client",
    "ConnectionClosedError",
    "LimitExceededError",
    "MCPServer",
    "RequestFailedError",
    "RequestTimeoutError",
    "StdioServerParameters",
    "TransportError",
    "current_backend",
]
