"""Newline-delimited JSON framing for byte streams (stdio, TCP, Unix sockets).

One compact JSON message per line. A line longer than the message limit is not
kept: the framer holds only its first and last bytes while the rest streams by,
and hands the connection an `Oversized` item where the line was, so the
connection can refuse that one message (with its id, when those bytes show it)
and go on with the next line. Whether the bytes arrived in one chunk or many,
the items that come out are the same.

The rule is the stdio transport's (every revision, basic/transports): messages
are delimited by newlines and must not contain embedded ones, which compact JSON
never does (a newline inside a string is escaped). A newline is therefore always
the end of a message, and no JSON needs to be read to find one.

Why skip rather than close: a limit protects memory, and a message that is only
too big has not broken the framing, so the peer can be told (by its id) and the
session can go on. Buffering such a line whole lets one peer grow our memory
without bound (a stdio server without a cap does), and closing on it would fail
every request in flight along with the one that was too big.
"""

from __future__ import annotations

from typing import Final, NamedTuple

# The bytes `bytes.strip()` removes (ASCII whitespace), as ints for an index test.
_WHITESPACE: Final = frozenset(b" \t\n\r\x0b\x0c")


class Oversized(NamedTuple):
    """A discarded over-long line: its length (a trailing CR included), its first
    `window` bytes and its last `window` bytes (a trailing CR removed)."""

    size: int
    head: bytes
    tail: bytes


class Ends:
    """The size and the first and last `window` bytes of a message that is read piece
    by piece and not kept: what a transport needs to refuse it by its id."""

    __slots__ = ("_window", "head", "size", "tail")

    def __init__(self, window: int) -> None:
        """Nothing seen yet; `window` 0 keeps only the size."""
        self._window = window
        self.size = 0
        self.head = b""
        self.tail = b""

    def add(self, piece: bytes | bytearray | memoryview) -> None:
        """Count `piece` and keep what it adds to either end; memory stays two windows.

        The head fills once and is never touched again; the tail is the last
        `window` bytes seen so far, whatever the sizes of the pieces, which is
        what makes the result independent of how the stream was chunked.
        """
        size = len(piece)
        self.size += size
        window = self._window
        if not window or not size:
            return
        if len(self.head) < window:
            self.head += bytes(piece[: window - len(self.head)])
        if size >= window:
            self.tail = bytes(piece[size - window :])
        else:
            self.tail = (self.tail + bytes(piece))[-window:]


class LineBuffer:
    """Splits a byte stream into lines, holding at most `max_line_bytes` of a partial line.

    `window` (at most half of `max_line_bytes`) is how much of each end of an
    over-long line is kept for `Oversized`. While such a line streams by, the
    buffer holds only those two windows, whatever its length.
    """

    __slots__ = ("_buffer", "_max", "_scan_from", "_skipping", "_window")

    def __init__(self, max_line_bytes: int, window: int = 0) -> None:
        """`window` is capped at half the line limit, so the two ends kept of a skipped line
        never hold more than one line's worth.
        """
        self._buffer = bytearray()
        self._max = max_line_bytes
        self._window = min(window, max_line_bytes // 2)
        # Where the search for a newline resumes: the bytes before it hold none. Without
        # it each chunk of a long line would rescan the whole buffer, quadratic in
        # the line's length (the typescript-sdk's `Buffer.concat` problem).
        self._scan_from = 0
        self._skipping: Ends | None = None  # the over-long line streaming by

    def idle(self) -> bool:
        """Whether nothing is held: no partial line, no over-long line streaming by.
        An idle buffer reads the next bytes as a new one would."""
        return self._skipping is None and not self._buffer

    def feed(self, data: bytes) -> list[bytes | bytearray | Oversized]:
        """Complete lines (without the newline or a trailing CR), blank lines skipped,
        and an `Oversized` in place of each line over the limit.

        A trailing CR is dropped because peers on Windows write CRLF; a blank line is
        skipped rather than refused because it carries nothing to answer (no id, no
        method). A line comes back as `bytearray` when it was the whole buffer,
        handed over uncopied: the framer keeps no reference to it.
        """
        skipping = self._skipping
        if skipping is None and not self._buffer:
            end = len(data) - 1
            # The usual read: one whole message within the limit, ending in its only
            # newline, with no CR before it and not blank (its first byte is above the
            # space, so no whitespace). The line is the read without its newline: what
            # the general path below gives for it too, in three quarters of the
            # instructions (callgrind, a 110-byte message: 4,850 -> 3,650 a read). `10 in`
            # is memchr with no argument parsing (`find` parses its arguments, and
            # `b"\n" in` first tries the needle as an int, raising and clearing an error).
            if 0 < end <= self._max and data[end] == 10:
                line = data[:end]
                if 10 not in line and line[-1] != 13 and line[0] > 32:
                    return [line]
        items: list[bytes | bytearray | Oversized] = []
        offset = 0
        # Still inside an over-long line: only its end matters, and everything up to
        # the newline belongs to it, whatever it contains.
        if skipping is not None:
            nl = data.find(b"\n")
            if nl == -1:
                skipping.add(data)
                return items
            skipping.add(memoryview(data)[:nl])
            items.append(_oversized(skipping))
            self._skipping = None
            offset = nl + 1
            if offset == len(data):
                return items
        buffer = self._buffer
        end = len(data) - 1
        if not offset and not buffer and end >= 0 and data.find(b"\n") == end:
            # Fast path: exactly one whole message (its first newline is its last
            # byte), nothing buffered. Byte tests by index, no method calls.
            if end > self._max:
                items.append(self._whole(data, 0, end))
                return items
            line = data[:-1]
            if line and line[-1] == 13:  # a CR before the newline
                line = line[:-1]
            # Blank (only whitespace) lines are skipped; a line whose first byte is
            # not whitespace cannot be blank, so `strip` runs only for the others.
            if line and (line[0] not in _WHITESPACE or line.strip()):
                items.append(line)
            return items
        buffer += memoryview(data)[offset:] if offset else data
        start = 0
        find = buffer.find
        nl = find(b"\n", self._scan_from)
        while nl != -1:
            # Measured per line, never per chunk: a near-limit line followed by the
            # start of the next in one chunk is two valid pieces, not one too many.
            if nl - start > self._max:
                items.append(self._whole(buffer, start, nl))
            elif start == 0 and nl == len(buffer) - 1:
                # The line is all that is buffered (a big message ends so): hand the
                # buffer over instead of copying it.
                del buffer[nl:]
                if buffer.endswith(b"\r"):
                    del buffer[-1:]
                if buffer.strip():
                    items.append(buffer)
                self._buffer = bytearray()
                self._scan_from = 0
                return items
            else:
                line = bytes(buffer[start:nl])
                if line.endswith(b"\r"):
                    line = line[:-1]
                if line.strip():
                    items.append(line)
            start = nl + 1
            nl = find(b"\n", start)
        if start:
            del buffer[:start]
        if len(buffer) > self._max:
            # Too long already and no end in sight: keep its ends, drop the rest.
            skipping = self._skipping = Ends(self._window)
            skipping.add(buffer)
            self._buffer = bytearray()
            self._scan_from = 0
            return items
        self._scan_from = len(buffer)
        return items

    @property
    def pending(self) -> int:
        """Bytes held of an unfinished line (only the kept ends, while skipping one)."""
        skipping = self._skipping
        if skipping is not None:
            return len(skipping.head) + len(skipping.tail)
        return len(self._buffer)

    def _whole(self, buffer: bytes | bytearray, start: int, end: int) -> Oversized:
        """The item for the over-long line buffer[start:end], whole in memory."""
        ends = Ends(self._window)
        with memoryview(buffer) as view:
            ends.add(view[start:end])
        return _oversized(ends)


def _oversized(ends: Ends) -> Oversized:
    """The item for a skipped line; a CR is dropped from the tail as from a line, so
    the id is read from the same bytes whether the peer wrote LF or CRLF."""
    tail = ends.tail
    return Oversized(ends.size, ends.head, tail[:-1] if tail.endswith(b"\r") else tail)
