"""MCP over WebSocket (wsproto frames, h11 handshake), sans-IO: the public names.

A custom transport in the spec's terms (the proposed SEP-1288 shape: one
JSON-RPC message per UTF-8 text frame). Imported on its own so programs that
never speak WebSocket never load wsproto.

`WebSocketServerConnection` is one accepted TCP connection, handshake included;
`WebSocketClientConnection` one outgoing. Each owns an MCP connection (`.mcp`),
so everything above the framing (both eras, limits, events) is the same as on
stdio. The `CLOSE_*` codes are RFC 6455's, for reading `WebSocketClosed.code`.
No revision of MCP defines this transport, which is why a peer from another
implementation may frame differently; the module notes of `_websocket` say
what this one accepts and refuses.
"""

# The RFC 6455 (7.4.1) close codes are public because `WebSocketClosed.code` is the only
# account a peer gives of why it closed: 1003 for a binary frame (what the SEP-1288 proposal
# asks), 1007 for invalid UTF-8, 1009 for a message over the limit, 1008 for a policy
# refusal such as a bad Origin. `MCP_SUBPROTOCOL` is public so a server behind another
# WebSocket stack can negotiate the same subprotocol name.
from ._websocket import (
    CLOSE_ABNORMAL,
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_INVALID_PAYLOAD,
    CLOSE_MESSAGE_TOO_BIG,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    CLOSE_PROTOCOL_ERROR,
    CLOSE_UNSUPPORTED_DATA,
    MCP_SUBPROTOCOL,
    WebSocketAccepted,
    WebSocketClientConnection,
    WebSocketClosed,
    WebSocketLimits,
    WebSocketRejected,
    WebSocketServerConnection,
    WebSocketTokenVerificationNeeded,
)

# The events and limits stay beside the connections: an adapter that drives a WebSocket
# needs nothing else from the engine, and `mcp_core.websocket` is the only module that
# imports wsproto.
__all__ = [
    "CLOSE_ABNORMAL",
    "CLOSE_GOING_AWAY",
    "CLOSE_INTERNAL_ERROR",
    "CLOSE_INVALID_PAYLOAD",
    "CLOSE_MESSAGE_TOO_BIG",
    "CLOSE_NORMAL",
    "CLOSE_POLICY_VIOLATION",
    "CLOSE_PROTOCOL_ERROR",
    "CLOSE_UNSUPPORTED_DATA",
    "MCP_SUBPROTOCOL",
    "WebSocketAccepted",
    "WebSocketClientConnection",
    "WebSocketClosed",
    "WebSocketLimits",
    "WebSocketRejected",
    "WebSocketServerConnection",
    "WebSocketTokenVerificationNeeded",
]
