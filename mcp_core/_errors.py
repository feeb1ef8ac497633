"""Exceptions and JSON-RPC error codes.

Two kinds of protocol error, as in h11: `LocalProtocolError` means *you* used the
API in a way the protocol forbids (nothing was sent); `RemoteProtocolError` means
the *peer* broke the protocol. Receiving never raises anything else. Both carry
the JSON-RPC code and the HTTP status a transport should answer with.
"""

from __future__ import annotations

from typing import Any

# JSON-RPC 2.0 standard codes (section 5.1). -32700: the text is not JSON (or breaks a
# limit before it could be read); -32600: JSON, but not a valid request object;
# -32601: no such method (MCP also uses it for a capability that was not offered);
# -32602: the method exists but its params are wrong; -32603: our own failure.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# Implementation-defined range (-32000..-32019); receivers read no meaning into these.
# -32000 and -32001 are what the official SDKs report for a request ended by a closed
# connection or a timeout, so code that handles theirs handles ours.
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
SERVER_BUSY = -32005
# Local only (`RequestFailed`): the peer's response to our request broke one of our
# limits (size, depth, string, integer digits), so we refused to read it.
LIMIT_EXCEEDED = -32006

# MCP-defined codes.
RESOURCE_NOT_FOUND = -32002  # legacy revisions only; 2026-07-28 uses INVALID_PARAMS
# 2026-07-28: a mirrored HTTP header disagrees with the body (HTTP 400); the request
# needs a client capability its envelope did not declare (data lists it); the
# request's revision is not one the server speaks (data lists those it does, so the
# client can retry instead of guessing).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 only


class ProtocolError(Exception):
    """Base of the engine's protocol errors.

    `code` is the JSON-RPC error code to answer with, `http_status` the status a
    transport should use, `data` optional structured detail for the error object.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int = INVALID_REQUEST,
        http_status: int = 400,
        data: Any = None,
    ) -> None:
        """Defaults -32600 and 400: a malformed request, the commonest case."""
        super().__init__(message)
        self.message = message
        self.code = code
        self.http_status = http_status
        self.data = data

    def __repr__(self) -> str:
        """Class, message and code: what a log line needs to tell errors apart."""
        return f"{type(self).__name__}({self.message!r}, code={self.code})"


class LocalProtocolError(ProtocolError):
    """The application asked for something the protocol (or the negotiated session) forbids."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something that breaks the protocol."""


class MCPError(Exception):
    """An error response (JSON-RPC error object) surfaced to application code.

    Raised by the high-level APIs when a request fails; `code`, `message` and
    `data` are the wire error's fields.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        """The wire error's three fields, as the peer sent them."""
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        """Code and message; `data` is left out, as it may be large or sensitive."""
        return f"MCPError(code={self.code}, message={self.message!r})"
