"""In-memory byte streams for driver and session tests: no socket, every write recorded."""

from __future__ import annotations

import asyncio
from typing import Any


class RecordingStream:
    """Never readable; takes every write at once (as an unpaused asyncio transport)
    and keeps each in `written`, so a test can count the writes, not just the bytes."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self._closed = asyncio.get_running_loop().create_future()

    async def receive_some(self, max_bytes: int) -> bytes:
        await self._closed
        return b""

    async def send_all(self, data: bytes) -> None:
        self.written.append(data)

    def write_nowait(self, data: bytes) -> bool:
        self.written.append(data)
        return True

    async def aclose(self) -> None:
        if not self._closed.done():
            self._closed.set_result(None)


class PushedStream(RecordingStream):
    """A `RecordingStream` with the read fast path (`push_to`): the test hands bytes to
    `sink` itself, as a transport's read callback would."""

    def __init__(self) -> None:
        super().__init__()
        self.sink: Any = None

    def push_to(self, sink: Any) -> bool:
        self.sink = sink
        return True

    def stop_push(self) -> None:
        self.sink = None
