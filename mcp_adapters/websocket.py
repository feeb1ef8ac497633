"""MCP over WebSocket, public path: `serve_websocket` and `connect_websocket`.

The transport itself is `mcp_adapters.transports.websocket`; this module keeps
the import path users and the docs know.
"""

from __future__ import annotations

from mcp_adapters.transports.websocket import connect_websocket, serve_websocket

__all__ = ["connect_websocket", "serve_websocket"]
