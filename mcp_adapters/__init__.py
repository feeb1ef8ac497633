"""mcp_adapters: everything that waits. Thin drivers binding `mcp_core` to real I/O.

One driver loop (see `mcp_adapters._driver`) spelled three ways:

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

from types import ModuleType

from mcp_adapters._errors import (
    ConnectionClosedError,
    LimitExceededError,
    RequestFailedError,
    RequestTimeoutError,
    TransportError,
)
from mcp_adapters._process import StdioServerParameters


def current_backend() -> ModuleType:
    """`mcp_adapters.asyncio` or `mcp_adapters.trio`, whichever loop is running now."""
    import importlib

    import sniffio

    library = sniffio.current_async_library()
    if library not in ("asyncio", "trio"):
        raise RuntimeError(f"no mcp_adapters backend for {library!r}")
    return importlib.import_module(f"mcp_adapters.{library}")


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
