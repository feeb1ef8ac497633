"""The adapters' exceptions, and the one place where foreign errors become ours.

Application code sees exactly three kinds of failure from a session:

- `mcp_core.MCPError`: the peer answered with a JSON-RPC error;
- `RequestFailedError` (and `RequestTimeoutError`, `LimitExceededError`): the
  request ended without an answer for a local reason, so its code can never be
  mistaken for the peer's;
- `TransportError` (and `ConnectionClosedError`): the byte stream failed or ended.

Backends never let an `OSError`, a trio `BrokenResourceError` or an `EOFError`
escape: their drivers pass what they catch through `to_transport_error`, and
the events of the core pass through `error_for_event`.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_core import (
    CONNECTION_CLOSED,
    LIMIT_EXCEEDED,
    REQUEST_TIMEOUT,
    ErrorReceived,
    MCPError,
    RemoteProtocolError,
    RequestFailed,
)


class TransportError(Exception):
    """The byte stream under a connection failed (reset, broken pipe, spawn failure ...)."""


class ConnectionClosedError(TransportError):
    """The connection ended before the operation could finish.

    `code` is the implementation-defined CONNECTION_CLOSED (-32000) code, so a
    high-level layer can report it like any other request failure; `error` is the
    `RemoteProtocolError` that ended the connection when the peer broke the
    framing or the handshake.
    """

    code = CONNECTION_CLOSED

    def __init__(
        self, reason: str = "Connection closed", *, error: RemoteProtocolError | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


class RequestFailedError(Exception):
    """One of our requests ended without an answer from the peer (a local cause)."""

    def __init__(self, method: str, code: int, message: str) -> None:
        super().__init__(f"{method}: {message}")
        self.method = method
        self.code = code
        self.message = message


class RequestTimeoutError(RequestFailedError):
    """The request's deadline passed; the peer was told to cancel it."""


class LimitExceededError(RequestFailedError):
    """The peer's response to the request broke one of our limits and was refused.

    The message names the limit (`Limits.max_message_bytes`, say, or the HTTP or
    WebSocket setting in force) and its value; raise it (`Client(limits=...)`,
    `ClientConfig(limits=...)`) to accept such responses. Only this request
    failed: the connection goes on. See docs/limits.md.
    """


def error_for_event(event: ErrorReceived | RequestFailed) -> Exception:
    """The exception an awaiting caller gets for a request's failing terminal event."""
    if isinstance(event, ErrorReceived):
        return MCPError(event.code, event.message, event.data)
    if event.code == CONNECTION_CLOSED:
        return ConnectionClosedError(event.message)
    if event.code == REQUEST_TIMEOUT:
        return RequestTimeoutError(event.method, event.code, event.message)
    if event.code == LIMIT_EXCEEDED:
        return LimitExceededError(event.method, event.code, event.message)
    return RequestFailedError(event.method, event.code, event.message)


def os_error(exc: OSError) -> TransportError:
    """`to_transport_error` for an `OSError`, which always has a translation."""
    error = to_transport_error(exc)
    assert error is not None
    return error


# Errors that mean "the other end is gone", as opposed to "the stream is broken".
_DISCONNECTS: tuple[type[BaseException], ...] = (
    BrokenPipeError,
    ConnectionResetError,
    ConnectionAbortedError,
    EOFError,
)


def to_transport_error(
    exc: BaseException,
    extra: Mapping[type[BaseException], type[TransportError]] | None = None,
) -> TransportError | None:
    """Translate an I/O failure into a `TransportError`; None for anything else.

    `extra` maps a backend's own exception types (trio's `BrokenResourceError`
    ...) to ours. Cancellation and programming errors are never translated: they
    return None and the caller re-raises them.
    """
    if isinstance(exc, TransportError):
        return exc
    translated: TransportError | None = None
    if extra:
        for source, target in extra.items():
            if isinstance(exc, source):
                translated = target(str(exc) or type(exc).__name__)
                break
    if translated is None:
        if isinstance(exc, _DISCONNECTS):
            translated = ConnectionClosedError(f"{type(exc).__name__}: {exc}".rstrip(": "))
        elif isinstance(exc, OSError):
            translated = TransportError(f"{type(exc).__name__}: {exc}")
        elif isinstance(exc, RemoteProtocolError):
            translated = ConnectionClosedError(exc.message, error=exc)
        else:
            return None
    translated.__cause__ = exc
    return translated


__all__ = [
    "ConnectionClosedError",
    "LimitExceededError",
    "RequestFailedError",
    "RequestTimeoutError",
    "TransportError",
    "error_for_event",
    "os_error",
    "to_transport_error",
]
