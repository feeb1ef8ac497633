"""Server-Sent Events codec (WHATWG HTML "server-sent events"), sans-IO.

Streamable HTTP carries JSON-RPC messages as SSE events, so both halves live here:
`encode_event` / `encode_comment` produce wire bytes, and `SSEDecoder` turns bytes,
fed in whatever pieces the network delivers, into `SSEEvent`s. The decoder follows
the EventSource parsing rules exactly (BOM, three line endings, comments, field
rules, dispatch on a blank line) so that any conforming server interoperates, and
it bounds memory with two limits because a server controls how much we buffer.

Where MCP uses it: a Streamable HTTP response (2025-03-26+) or the legacy GET
stream is `text/event-stream`, one JSON-RPC message per event's data. In the
legacy revisions event ids let a client resume a broken stream with
`Last-Event-ID`; 2026-07-28 dropped resumption, and ids there are only noise a
client may ignore. A limit hit is an error the caller sees, never a silent drop:
an SDK that dropped over-size events quietly left its caller with "stream ended
without a response" and the cause logged at DEBUG (python-sdk#3332).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._errors import INVALID_REQUEST, LocalProtocolError, RemoteProtocolError
from ._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES

__all__ = ["SSEDecoder", "SSEEvent", "encode_comment", "encode_event"]

# The UTF-8 byte order mark; EventSource ignores one at the very start of a stream.
_BOM = b"\xef\xbb\xbf"
# An MCP event carries one message: by default the engine's message limit, so a big
# message meets that limit and not a smaller one here. A line holds the field name
# besides the data ("data: "), hence the allowance.
_DEFAULT_LIMIT = DEFAULT_MAX_MESSAGE_BYTES
_FIELD_ALLOWANCE = 64
# Longer digit strings would meet Python's int() digit limit; 10**18 ms is ~31 million
# years, so clamping changes nothing a client could observe.
_RETRY_MAX_DIGITS = 18
_RETRY_CLAMP = 10**_RETRY_MAX_DIGITS - 1


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    `id` is the last-event-id in force at dispatch (it persists across events, as in
    EventSource), or None if the stream never set one. `retry` is the reconnection
    time given in this event's own block, or None; `SSEDecoder.retry` keeps the
    latest value even from blocks that dispatched nothing.
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def _utf8(text: str, what: str) -> bytes:
    """Encode, turning lone surrogates into a local error rather than UnicodeEncodeError."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise LocalProtocolError(f"SSE {what} is not encodable as UTF-8: {exc.reason}") from exc


def _split_lines(text: str) -> list[str]:
    """Split on exactly the SSE line endings; str.splitlines would also split on \\v, \\x85, ...

    Splitting on those would corrupt data that contains them: the receiver keeps
    them inside a line, so the sender must too.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _field_line(name: bytes, value: str, what: str) -> bytes:
    """One `name: value` line; an empty value becomes a bare `name:`.

    The space after the colon is the one the receiver strips; without it a value
    starting with a space would lose that space.
    """
    if not value:
        return name + b":\n"
    return name + b": " + _utf8(value, what) + b"\n"


def encode_event(
    data: str | None = None,
    *,
    event: str | None = None,
    id: str | None = None,
    retry: int | None = None,
) -> bytes:
    """Encode one event, ending with the blank line that makes the receiver dispatch it.

    Data is split on CRLF, CR and LF into several `data:` lines (the receiver joins them
    with LF, so CR and CRLF come back as LF). `data=""` gives a bare `data:` line, which
    *is* dispatched with empty data; `data=None` sends no data line, so the receiver
    dispatches nothing but still applies `id` and `retry`. The MCP priming event is
    `encode_event("", id=...)`: 2025-11-25 servers send it first on a stream so the
    client holds an id to resume from before any message arrives, and a client must
    expect it (an event whose data is not JSON-RPC). Raises LocalProtocolError for an
    id containing CR, LF or NUL, an event name containing CR or LF, a retry that is
    not a non-negative int, or text that cannot be encoded as UTF-8.
    """
    parts: list[bytes] = []
    if event is not None:
        if "\r" in event or "\n" in event:
            raise LocalProtocolError("SSE event name must not contain CR or LF")
        parts.append(_field_line(b"event", event, "event name"))
    if id is not None:
        if "\r" in id or "\n" in id or "\x00" in id:
            raise LocalProtocolError("SSE event id must not contain CR, LF or NUL")
        parts.append(_field_line(b"id", id, "event id"))
    if retry is not None:
        if isinstance(retry, bool) or not isinstance(retry, int) or retry < 0:
            raise LocalProtocolError("SSE retry must be a non-negative int (milliseconds)")
        parts.append(b"retry: %d\n" % retry)
    if data is not None:
        parts.extend(_field_line(b"data", line, "data") for line in _split_lines(data))
    parts.append(b"\n")
    return b"".join(parts)


def encode_comment(text: str = "") -> bytes:
    """Encode a comment line (receivers ignore it), e.g. a keep-alive that stops idle timeouts.

    Proxies and load balancers close a response that stays silent (often after 60
    s); a comment keeps it open without putting anything before the client's
    JSON-RPC parser, which is why 2026-07-28 names it for long listen streams.

    Multi-line text becomes several comment lines, so it can never end an event early.
    """
    return b"".join(
        b":\n" if not line else b": " + _utf8(line, "comment") + b"\n"
        for line in _split_lines(text)
    )


class SSEDecoder:
    """Incremental SSE parser: `feed(bytes)` returns the events completed so far.

    Chunk boundaries never matter: feeding a stream whole, byte by byte or in any split
    yields the same events, including a CRLF whose CR ends one chunk. Bytes are split
    on line endings with bytes operations and decoded as UTF-8 with replacement, so no
    input raises anything but RemoteProtocolError.

    `feed(b"")` marks end of stream: an incomplete event is discarded (per the spec) and
    parsing state is reset, so the same decoder can read the stream of a reconnection
    while keeping `last_event_id` and `retry`, as an EventSource object does.

    Limits, because the peer decides how much we buffer: a line longer than
    `max_line_bytes` (terminator excluded; by default `max_event_bytes` plus room for
    a field name) or an event whose data (data lines joined with LF) exceeds
    `max_event_bytes` raises RemoteProtocolError (code -32600, HTTP status 400).
    Events completed earlier in the same chunk are not lost: if there are any, that
    `feed` returns them and the *next* call raises. Either way the decoder is then
    unusable, and every later `feed` raises the same error.

    Why unusable rather than skipping to the next event: an event's end is a blank
    line, and once part of an event has been dropped the decoder cannot tell the
    rest of it from the next one's fields, so going on could hand over a forged or
    half event. The stream is the unit to retry.
    """

    __slots__ = (
        "_at_start",
        "_data",
        "_data_len",
        "_error",
        "_event_retry",
        "_event_type",
        "_head",
        "_id_buffer",
        "_last_event_id",
        "_max_event",
        "_max_line",
        "_partial",
        "_partial_len",
        "_retry",
        "_skip_lf",
    )

    def __init__(
        self, max_event_bytes: int = _DEFAULT_LIMIT, max_line_bytes: int | None = None
    ) -> None:
        """A decoder for one stream and its reconnections; limits are bytes, and
        `max_line_bytes` None leaves room for a field name beside `max_event_bytes`.
        """
        if max_line_bytes is None:
            max_line_bytes = max_event_bytes + _FIELD_ALLOWANCE
        if max_event_bytes < 0 or max_line_bytes < 0:
            raise ValueError("SSE limits must be non-negative")
        self._max_event = max_event_bytes
        self._max_line = max_line_bytes
        self._error: str | None = None
        self._last_event_id: str | None = None
        self._retry: int | None = None
        self._reset_stream()

    def _reset_stream(self) -> None:
        """Forget everything about the current stream except what EventSource keeps."""
        self._at_start = True  # a BOM may still come
        self._head = b""  # bytes held while deciding whether they start a BOM
        self._skip_lf = False  # the previous chunk ended in CR; drop a leading LF
        self._partial: list[bytes] = []  # unterminated line, kept as pieces (no O(n^2))
        self._partial_len = 0
        self._data: list[bytes] = []
        self._data_len = 0  # sum of data line lengths plus one LF each
        self._event_type = b""
        self._event_retry: int | None = None
        self._id_buffer = self._last_event_id  # an id in an undispatched event is dropped

    @property
    def last_event_id(self) -> str | None:
        """The id to send as Last-Event-ID on reconnection (updated at each blank line)."""
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The latest reconnection time (ms) the server sent, or None."""
        return self._retry

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Consume bytes and return the completed events; `b""` means end of stream.

        A BOM is looked for across the first chunks (a chunk of one or two bytes
        may hold only its start), and a CR ending one chunk with an LF starting the
        next is one line ending, not two: either split would otherwise dispatch an
        event early or misread the first field.
        """
        if self._error is not None:
            raise self._remote_error(self._error)
        if not data:
            self._reset_stream()
            return []
        if self._at_start:
            data = self._head + data
            if len(data) < len(_BOM) and _BOM.startswith(data):
                self._head = data
                return []
            self._at_start = False
            self._head = b""
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
        if self._skip_lf and data:
            self._skip_lf = False
            if data[0] == 0x0A:
                data = data[1:]
        if not data:
            return []
        events: list[SSEEvent] = []
        try:
            self._consume(data, events)
        except RemoteProtocolError:
            if events:
                return events
            raise
        return events

    def _consume(self, data: bytes, events: list[SSEEvent]) -> None:
        """Process every complete line in data; keep the unterminated rest for later.

        A chunk with no line ending is only appended, so a long line arriving in
        many small chunks costs one join at its end, not one per chunk.
        """
        if b"\n" not in data and b"\r" not in data:
            self._partial.append(data)
            self._partial_len += len(data)
            if self._partial_len > self._max_line:
                self._fail_line()
            return
        if self._partial:
            self._partial.append(data)
            data = b"".join(self._partial)
            self._partial = []
            self._partial_len = 0
        # Splitting whole chunks in C is what keeps a long stream cheap; the cost is the
        # CR-at-the-end case, carried over in `_skip_lf`.
        lines = data.splitlines()  # bytes.splitlines splits on CRLF, CR and LF only
        last = data[-1]
        if last == 0x0D:
            self._skip_lf = True
            tail = None
        elif last == 0x0A:
            tail = None
        else:
            tail = lines.pop()
        max_line = self._max_line
        for line in lines:
            if len(line) > max_line:
                self._fail_line()
            if not line:
                self._dispatch(events)
            elif line[0] != 0x3A:  # a leading colon marks a comment
                self._field(line)
        if tail is not None:
            self._partial.append(tail)
            self._partial_len = len(tail)
            if self._partial_len > max_line:
                self._fail_line()

    def _field(self, line: bytes) -> None:
        """Apply one field line; names are matched as bytes, so only values are decoded.

        The EventSource rules: unknown field names are ignored (a server may add
        its own); an id holding NUL is ignored, since it could not be sent back as a
        header; a retry that is not all ASCII digits is ignored, not an error.
        """
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
            self._data_len += len(value) + 1
            if self._data_len - 1 > self._max_event:
                self._fail(f"SSE event data exceeds max_event_bytes ({self._max_event})")
        elif name == b"event":
            self._event_type = value
        elif name == b"id":
            if b"\x00" not in value:
                self._id_buffer = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():  # bytes.isdigit: ASCII digits, non-empty
            # Leading zeros are legal and say nothing; stripping them first keeps the
            # digit count honest, so "000...1" is not clamped as if it were huge.
            digits = value.lstrip(b"0")
            retry = _RETRY_CLAMP if len(digits) > _RETRY_MAX_DIGITS else int(digits or b"0")
            self._retry = retry
            self._event_retry = retry

    def _dispatch(self, events: list[SSEEvent]) -> None:
        """Blank line: commit the id, emit an event if any data line came, reset the block.

        The id is committed even when no event is emitted, as EventSource does: a
        block with only `id:` moves the resumption point (the priming event with
        empty data does emit, with data "").
        """
        self._last_event_id = self._id_buffer
        retry = self._event_retry
        self._event_retry = None
        event_type = self._event_type
        self._event_type = b""
        if not self._data:
            return
        # Decoded with replacement, as EventSource does: a bad byte becomes U+FFFD in
        # one message instead of breaking the whole stream.
        data = b"\n".join(self._data).decode("utf-8", "replace")
        self._data = []
        self._data_len = 0
        events.append(
            SSEEvent(
                data,
                event_type.decode("utf-8", "replace") if event_type else "message",
                self._last_event_id,
                retry,
            )
        )

    def _fail_line(self) -> None:
        """A line over `max_line_bytes`, which no event can hold: the stream is broken."""
        self._fail(f"SSE line exceeds max_line_bytes ({self._max_line})")

    def _fail(self, message: str) -> None:
        """Enter the terminal error state (freeing buffers) and raise."""
        self._error = message
        self._partial = []
        self._data = []
        raise self._remote_error(message)

    @staticmethod
    def _remote_error(message: str) -> RemoteProtocolError:
        """The error for a broken stream: -32600 to fail the requests waiting on it,
        400 as the status hint (the server sent what no client can read)."""
        return RemoteProtocolError(message, code=INVALID_REQUEST, http_status=400)
