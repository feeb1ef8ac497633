"""The shape every backend's driver follows, and the interfaces it binds.

One loop, three spellings (asyncio.py, trio.py, sockets.py)::

    reader:  data = read()                         # b"" at end of stream
             events = conn.receive_data(data, wall_time=time.time())  # requestState expiry
             on_events(events)                     # resolve waiters, start handlers
             wake the writer
    writer:  sleep until woken or until conn.next_deadline()
             if the deadline passed: on_events(conn.tick(now()))  # the loop's clock
             write(conn.data_to_send())            # one chunk at a time

The writer is the only thing that writes and the reader never waits for a
write, so two peers that both send a lot cannot deadlock each other: what is not
yet written stays in the connection's bounded output buffer. Application code
queues output through the connection (send_request, send_result ...) and then
calls `wake()`; `await drain()` is the back-pressure point (it waits while a
write is in progress).

The driver knows nothing about MCP. It binds any sans-IO object with the four
methods of `SansIOConnection`, so the HTTP and WebSocket layers can reuse it.
A failed read or write is translated once (`to_transport_error`), stored on
`driver.error`, and reported to the connection as end of stream; `finish()`
stops input, flushes what is queued (bounded by `close_timeout`) and closes the
stream.

End of input with answers still due: a stdio server fed a file of requests
reads all of it, and its end, before the first slow tool has answered. Fed at
once, that end would close the connection and cancel those tools. So a driver
given `hold_eof` stops reading at end of stream and feeds it only when
`hold_eof()` turns false, checked on every wake-up (each answer wakes it). The
sessions pass `SessionCore.answers_due` when made with `drain_on_eof=True`
(what `serve_stdio` does): handlers still running and none waiting on the peer,
whose answer can no longer come.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

#: Bytes asked for per read; the core's line buffer bounds what it keeps anyway.
READ_SIZE = 64 * 1024
#: How long a closing driver keeps trying to write what is still queued.
CLOSE_TIMEOUT = 2.0
#: How long a client waits for the handshake (initialize or server/discover).
CONNECT_TIMEOUT = 30.0
#: How long "auto" mode waits for a `server/discover` answer before trying `initialize`,
#: on message streams (stdio, TCP, WebSocket), where a legacy server may say nothing.
#: Over HTTP every server answers, so the answer decides and there is no such timer.
PROBE_TIMEOUT = 5.0


class SansIOConnection(Protocol):
    """What a driver needs from a protocol object (an MCP connection, an HTTP layer ...)."""

    def receive_data(self, data: bytes, *, wall_time: float | None = None) -> list[Any]: ...

    def data_to_send(self) -> bytes: ...

    def next_deadline(self) -> float | None: ...

    def tick(self, now: float) -> list[Any]: ...


class AsyncByteStream(Protocol):
    """The byte-stream interface the async drivers read and write (trio's `Stream` fits)."""

    async def receive_some(self, max_bytes: int) -> bytes: ...

    async def send_all(self, data: bytes) -> None: ...

    async def aclose(self) -> None: ...


EventSink = Callable[[list[Any]], None]


def authority(host: str, port: int) -> str:
    """`host:port` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


__all__ = [
    "CLOSE_TIMEOUT",
    "CONNECT_TIMEOUT",
    "PROBE_TIMEOUT",
    "READ_SIZE",
    "AsyncByteStream",
    "EventSink",
    "SansIOConnection",
    "authority",
]
