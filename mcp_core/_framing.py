"""Newline-delimited JSON framing for byte streams (stdio, TCP, Unix sockets).

One compact JSON message per line. A line longer than the message limit is a
framing failure: it ends the connection whether it arrived in one chunk or many,
so the outcome never depends on how the bytes were split.
"""

from __future__ import annotations

from ._errors import PARSE_ERROR, RemoteProtocolError


class LineBuffer:
    """Splits a byte stream into lines, holding at most `max_line_bytes` of a partial line.

    An over-long line does not raise at once: the good lines before it are
    returned, `failed` is set and the buffer is dropped, so the caller handles
    those lines and then ends the connection, however the bytes were split.
    """

    __slots__ = ("_buffer", "_max", "_scan_from", "failed")

    def __init__(self, max_line_bytes: int) -> None:
        self._buffer = bytearray()
        self._max = max_line_bytes
        self._scan_from = 0
        self.failed: RemoteProtocolError | None = None

    def feed(self, data: bytes) -> list[bytes]:
        """Complete lines (without the newline or a trailing CR), blank lines skipped."""
        if self.failed is not None:
            return []
        buffer = self._buffer
        if not buffer and data.endswith(b"\n") and data.count(b"\n") == 1:
            # Fast path: exactly one whole message, nothing buffered.
            line = data[:-1]
            if len(line) > self._max:
                self._too_long()
                return []
            if line.endswith(b"\r"):
                line = line[:-1]
            return [line] if line.strip() else []
        buffer += data
        lines: list[bytes] = []
        start = 0
        find = buffer.find
        nl = find(b"\n", self._scan_from)
        while nl != -1:
            if nl - start > self._max:
                self._too_long()
                return lines
            line = bytes(buffer[start:nl])
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip():
                lines.append(line)
            start = nl + 1
            nl = find(b"\n", start)
        if start:
            del buffer[:start]
        if len(buffer) > self._max:
            self._too_long()
            return lines
        self._scan_from = len(buffer)
        return lines

    @property
    def pending(self) -> int:
        """Bytes held of an unfinished line."""
        return len(self._buffer)

    def _too_long(self) -> None:
        self.failed = RemoteProtocolError(
            f"line exceeds the message limit of {self._max} bytes",
            code=PARSE_ERROR,
            http_status=413,
        )
        self._buffer = bytearray()  # nothing more is read; keep no memory for it
        self._scan_from = 0
