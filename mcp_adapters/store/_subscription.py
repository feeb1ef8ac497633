"""`Subscription`: what a bus inbox or a fan-out listener hands its reader.

A bounded buffer between the store (which must never wait for a slow reader:
one stuck listener must not hold up a publisher or the other listeners) and
the reader. When the buffer is full, new messages are dropped and counted in
`dropped`; a reader that sees it grow is not keeping up.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import anyio

__all__ = ["Subscription"]

T = TypeVar("T")


class Subscription(Generic[T]):
    """Messages in arrival order: `await sub.receive()` or `async for message in sub`."""

    def __init__(self, capacity: int) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[T](capacity)
        self.dropped = 0

    def offer(self, message: T) -> bool:
        """Hand over one message without waiting; False if it was dropped."""
        try:
            self._send.send_nowait(message)
        except anyio.WouldBlock:
            self.dropped += 1
            return False
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False  # the reader is gone
        return True

    async def receive(self) -> T:
        """The next message; raises `anyio.EndOfStream` once the subscription ended."""
        return await self._receive.receive()

    def __aiter__(self) -> Subscription[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    def close(self) -> None:
        """End it: the reader sees the end after what was already buffered."""
        self._send.close()

    def discard(self) -> None:
        """End it at once, dropping what was buffered (the store shuts down)."""
        self._send.close()
        self._receive.close()
