"""An asyncio pipe stream writes to its descriptor itself while the transport holds nothing.

`_StreamProtocol.write_nowait` with `write_directly`: one `os.write` per message
instead of the transport's `write` (and our `is_closing()` before it). These tests
pin what the transport's own way guaranteed and the shortcut must keep: every byte
in order when the pipe fills (the rest is the transport's, and what follows waits
behind it), nothing written after we close or abort the stream, and a pipe whose
reader went away ending the stream as it did.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from mcp_adapters.backends import asyncio as asyncio_backend
from tests.timing import HANG

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _stream() -> tuple[asyncio_backend.AsyncioStream, int, int]:
    """A pipe stream (its read side an idle pipe), and the far end of its write pipe."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    stream = await asyncio_backend.open_pipe_stream(in_r, out_w)
    return stream, out_r, in_w


def _spy_transport_writes(stream: asyncio_backend.AsyncioStream) -> list[bytes]:
    """The bytes each call of the write transport's `write` was given."""
    writer = stream.write_nowait.__self__  # type: ignore[attr-defined]
    transport = writer.transport
    calls: list[bytes] = []
    write = transport.write

    def spy(data: bytes) -> None:
        calls.append(bytes(data))
        write(data)

    transport.write = spy
    return calls


def _read_all(fd: int, size: int) -> bytes:
    got = b""
    while len(got) < size:
        chunk = os.read(fd, size - len(got))
        assert chunk
        got += chunk
    return got


async def test_small_writes_go_straight_to_the_pipe_in_order() -> None:
    stream, out_r, in_w = await _stream()
    calls = _spy_transport_writes(stream)
    lines = [b"%d: %s\n" % (i, b"x" * i) for i in range(20)]
    for line in lines:
        assert stream.write_nowait(line)
    # The first write looks at the transport (it may hold something); the others do not.
    assert calls == [lines[0]]
    assert _read_all(out_r, sum(map(len, lines))) == b"".join(lines)
    stream.abort()
    await asyncio.sleep(0)
    os.close(out_r)
    os.close(in_w)


async def test_a_full_pipe_leaves_the_rest_to_the_transport_and_order_is_kept() -> None:
    stream, out_r, in_w = await _stream()
    calls = _spy_transport_writes(stream)
    assert stream.write_nowait(b"first\n")
    # More than a pipe holds (64 KiB on Linux), with a rest under the transport's
    # high-water mark (64 KiB), so it does not pause us.
    big = bytes(range(256)) * 320
    assert stream.write_nowait(big)
    # What the pipe did not take went to the transport, and so does what follows
    # while the transport still holds it.
    assert len(calls) == 2 and 0 < len(calls[1]) < len(big)
    assert big.endswith(calls[1])
    assert stream.write_nowait(b"after\n")
    assert calls[2] == b"after\n"
    expected = b"first\n" + big + b"after\n"
    loop = asyncio.get_running_loop()
    got = await asyncio.wait_for(loop.run_in_executor(None, _read_all, out_r, len(expected)), HANG)
    assert got == expected
    # Drained: straight to the pipe again (after one more look at the transport).
    for _ in range(100):
        if not stream.write_nowait.__self__.transport.get_write_buffer_size():  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.01)
    assert stream.write_nowait(b"one\n")
    assert stream.write_nowait(b"two\n")
    assert calls[3:] == [b"one\n"]
    assert _read_all(out_r, 8) == b"one\ntwo\n"
    stream.abort()
    await asyncio.sleep(0)
    os.close(out_r)
    os.close(in_w)


@pytest.mark.parametrize("how", ["abort", "close"])
async def test_nothing_is_written_after_the_stream_is_closed(how: str) -> None:
    stream, out_r, in_w = await _stream()
    assert stream.write_nowait(b"before\n")
    assert stream.write_nowait(b"before\n")  # (the direct way is on)
    if how == "abort":
        stream.abort()
        closing = asyncio.ensure_future(asyncio.sleep(0.01))
    else:
        closing = asyncio.ensure_future(stream.aclose())
        await asyncio.sleep(0)
    # The descriptor is still open until the transport's `connection_lost` has run:
    # a write to it now would reach the reader.
    assert not stream.write_nowait(b"after\n")
    await asyncio.wait_for(closing, HANG)
    assert _read_all(out_r, 14) == b"before\nbefore\n"
    assert os.read(out_r, 100) == b""  # the end: the writer closed, nothing more came
    os.close(out_r)
    os.close(in_w)


async def test_a_pipe_whose_reader_left_ends_the_stream_as_the_transport_does() -> None:
    stream, out_r, in_w = await _stream()
    writer = stream.write_nowait.__self__  # type: ignore[attr-defined]
    assert stream.write_nowait(b"one\n")
    assert stream.write_nowait(b"two\n")  # (the direct way is on)
    os.close(out_r)
    # Before the loop sees the pipe broken the write fails (EPIPE) and takes the
    # transport's way, which records the failure and closes; after, it is refused.
    stream.write_nowait(b"three\n")
    await asyncio.wait_for(asyncio.shield(writer.lost), HANG)
    assert not stream.write_nowait(b"four\n")
    with pytest.raises(OSError):
        await stream.send_all(b"five\n")
    await stream.aclose()
    os.close(in_w)
