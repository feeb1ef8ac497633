"""What the Streamable HTTP server and client share: header names, media types,
the 2026-07-28 error-code -> status table, and small parsers for request heads.

The server lives in `_http_server.py` and the client in `_http_client.py`; both
own an h11 connection and feed whole JSON-RPC messages to an MCP connection.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from typing import Any, Final, Self, SupportsIndex

from . import _jsonrpc as jr
from ._errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    RemoteProtocolError,
)

# The path the spec's examples and the official SDKs use, so a client given only a
# host and port finds the endpoint.
DEFAULT_PATH: Final = "/mcp"

# The two media types of Streamable HTTP (2025-03-26 on): a POST's answer is one of them,
# chosen by the server, which is why a client must accept both.
JSON: Final = "application/json"
SSE: Final = "text/event-stream"

# Header names, lower-cased as h11 hands them over.
# 2025-11-25 spells it `MCP-Session-Id` and earlier revisions `Mcp-Session-Id`; field names
# ignore case (RFC 9110 5.1), so one lower-case name serves every revision.
SESSION_ID: Final = "mcp-session-id"
PROTOCOL_VERSION: Final = "mcp-protocol-version"
LAST_EVENT_ID: Final = "last-event-id"

ERROR_STATUS: Final[Mapping[int, int]] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""2026-07-28 (SPEC-NOTES 4.3): the status a JSON response carrying this error code goes out
with; any other code travels with 200. The official SDK uses the same table."""

Headers = list[tuple[str, str]]


def slot_setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """The setters of `cls`'s slots `names`, for the written-out `__init__` of a frozen
    slots dataclass built once or more per request (`RequestHead`, `ClientView`,
    `MCPEvent`).

    The `__init__` a frozen dataclass generates stores each field with
    `object.__setattr__(self, name, value)`: a lookup that builds a bound method, then
    the generic attribute machinery, about 1,500 instructions a field (callgrind,
    CPython 3.11); a 7-field `RequestHead` cost 12,000, and a POST builds two. The
    slot's own descriptor stores the same value in the same slot in about 800, and
    bypasses the class's refusing `__setattr__` exactly as `object.__setattr__` does,
    so the instance is the one the generated `__init__` makes (what equality, `repr`,
    `replace` and pickling see is the same).

    (The engine's events take the other way to the same end, a twin class whose plain
    `__init__` stores the slots and then becomes the frozen class: see "the hot path's
    builders" in `_events.py`. That is cheaper still per build but adds a builder
    beside the class; these HTTP records are built in many places, and the class's own
    `__init__` made cheaper serves every one of them.)"""
    return tuple(cls.__dict__[name].__set__ for name in names)


class HeaderList(list[tuple[str, str]]):
    """A request head's fields, as a list of pairs (the `Headers` every reader takes),
    that also answers "the values of this name" from an index built once.

    A server reads the same head about eight times per request: the trusted proxies and
    the Host/Origin check, what the client accepts (twice), Content-Type, the version
    and session headers, the mirrored headers, the direct path's framing. Each was a
    Python pass over every field (about 7,000 instructions for a 2026-07-28 POST's
    seven); `by_name` makes one pass and each reader a dict lookup. The list stays a
    list (order, repeats, equality with a plain list), so code that scans the pairs
    reads it as before; every change to it drops the index, which the next
    `by_name` rebuilds, so the index never disagrees with the pairs.
    """

    __slots__ = ("folded",)

    folded: dict[str, list[str]] | None
    """The index `by_name` answers from, or None until it is built (and again after
    any change to the list). Hot readers take it as `headers.folded or
    headers.by_name()`: a slot read instead of a method call, about 450
    instructions each, and a server reads a head about nine times per request.
    Shared: read it, never change it."""

    def __init__(
        self, pairs: Iterable[tuple[str, str]] = (), index: dict[str, list[str]] | None = None
    ) -> None:
        """`index`, when given, is the one `by_name` would build from `pairs`: a reader
        that already lower-cased and trimmed every field (`plain_fields`) files it as it
        goes, which costs a fraction of a second pass (about 15,000 instructions for
        seven fields)."""
        list.__init__(self, pairs)  # (named: `super()` builds an object per head)
        self.folded = index

    def by_name(self) -> dict[str, list[str]]:
        """Lower-cased name -> every value of that name, in order, trimmed of blanks
        (RFC 9110 5.5: they are not part of the value; 5.1: names ignore case). Shared:
        read it, never change it."""
        index = self.folded
        if index is None:
            index = {}
            for name, value in self:
                key = name.lower()
                values = index.get(key)
                if values is None:
                    index[key] = [value.strip(" \t")]
                else:
                    values.append(value.strip(" \t"))
            self.folded = index
        return index

    # Every way a list changes drops the index (`*args: Any` takes each method's
    # overloads as they are).
    def __setitem__(self, *args: Any) -> None:
        self.folded = None
        super().__setitem__(*args)

    def __delitem__(self, *args: Any) -> None:
        self.folded = None
        super().__delitem__(*args)

    # (mypy compares `+=` with the inherited `+`, which gives a plain list; `+=` here
    # changes this list in place, as `list`'s own does.)
    def __iadd__(self, value: Iterable[tuple[str, str]], /) -> Self:  # type: ignore[override,misc]
        self.folded = None
        return super().__iadd__(value)

    def __imul__(self, value: SupportsIndex, /) -> Self:
        self.folded = None
        return super().__imul__(value)

    def append(self, *args: Any) -> None:
        self.folded = None
        super().append(*args)

    def extend(self, *args: Any) -> None:
        self.folded = None
        super().extend(*args)

    def insert(self, *args: Any) -> None:
        self.folded = None
        super().insert(*args)

    def remove(self, *args: Any) -> None:
        self.folded = None
        super().remove(*args)

    def pop(self, *args: Any) -> tuple[str, str]:
        self.folded = None
        return super().pop(*args)

    def clear(self) -> None:
        self.folded = None
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self.folded = None
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self.folded = None
        super().reverse()


def decode_headers(raw: Iterable[tuple[bytes, bytes]]) -> Headers:
    """h11 header pairs (names already lower-case) as text; Latin-1 never fails."""
    return HeaderList([(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw])


def header_values(headers: Headers, name: str) -> list[str]:
    """Every value of one header (`name` lower-case), in order.

    A list, not a dict: repeated headers must stay visible, since a repeat is itself a
    reason to refuse (see `single_header`).
    """
    return [value for key, value in headers if key == name]


def single_header(headers: Headers, name: str) -> tuple[str | None, bool]:
    """(the value or None, whether it was repeated): repeats are refused by callers,
    because a first-value reader and a last-value reader would disagree."""
    if type(headers) is HeaderList:
        found = (headers.folded or headers.by_name()).get(name)
        if found is None:
            return None, False
        return found[0], len(found) > 1
    values = header_values(headers, name)
    if not values:
        return None, False
    return values[0].strip(" \t"), len(values) > 1


def media_type(value: str | None) -> str:
    """`application/json; charset=utf-8` -> `application/json`.

    Parameters (`charset`) are ignored: JSON is UTF-8 by definition (RFC 8259 8.1), so a
    charset parameter cannot change how the body is read.
    """
    if value is None:
        return ""
    return value.split(";", 1)[0].strip().lower()


# Accept values seen (one field's value, or the tuple of several) -> what they accept: a
# client sends the same Accept header with every request, and parsing it is most of a
# request's header work. Bounded.
_ACCEPTED: dict[str | tuple[str, ...], tuple[bool, bool]] = {}
# Clients send a handful of distinct Accept values; a peer inventing a new one per
# request only evicts the cache, never grows it past this.
_ACCEPTED_MAX: Final = 256


def accepted(headers: Headers) -> tuple[bool, bool]:
    """(accepts JSON, accepts SSE) from every Accept header, wildcards included.

    A `q=0` entry means "not acceptable", so it does not count. An absent Accept
    header accepts anything (RFC 9110 section 12.5.1).
    """
    if type(headers) is HeaderList:
        # (Trimmed here, which changes no answer: each item is trimmed in `_accepted`.)
        listed = (headers.folded or headers.by_name()).get("accept")
        if listed is not None and len(listed) == 1:
            # One Accept field, as nearly every client sends (twice per POST): keyed by
            # its value itself, which spares building and hashing a tuple. A string
            # key never equals a tuple key, so the two kinds of entry cannot mix.
            one = listed[0]
            found = _ACCEPTED.get(one)
            if found is None:
                found = _remember_accepted(one, (one,))
            return found
        values = () if listed is None else tuple(listed)
    else:
        values = tuple(value for key, value in headers if key == "accept")
    if not values:
        return True, True
    found = _ACCEPTED.get(values)
    if found is None:
        found = _remember_accepted(values, values)
    return found


def _remember_accepted(key: str | tuple[str, ...], values: tuple[str, ...]) -> tuple[bool, bool]:
    """`_accepted(values)`, kept under `key` in the bounded `_ACCEPTED`."""
    found = _accepted(values)
    if len(_ACCEPTED) >= _ACCEPTED_MAX:
        _ACCEPTED.clear()
    _ACCEPTED[key] = found
    return found


def _accepted(values: tuple[str, ...]) -> tuple[bool, bool]:
    """The uncached parse of `accepted`. Only `q=0` matters: any other weight is
    still acceptable, and a server answering either type needs no preference."""
    json_ok = sse_ok = False
    for value in values:
        for item in value.split(","):
            kind, *params = (part.strip().lower() for part in item.split(";"))
            # RFC 9110 12.4.2: a weight has at most three decimals, so these four spellings
            # are the only ways to write zero.
            if any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params):
                continue
            if kind in ("*/*", JSON, "application/*"):
                json_ok = True
            if kind in ("*/*", SSE, "text/*"):
                sse_ok = True
    return json_ok, sse_ok


def is_visible_ascii(value: str) -> bool:
    """Session ids must be visible ASCII (0x21-0x7E), and non-empty.

    2025-03-26 (transports, "Session Management"): a session id MUST contain only visible
    ASCII, so it can be sent back as a header without any encoding.
    """
    return bool(value) and all("\x21" <= c <= "\x7e" for c in value)


# h11 needs the reason phrase as bytes; computed once from the standard table.
_REASONS: Final = {status.value: status.phrase.encode("ascii") for status in HTTPStatus}


def reason_phrase(status: int) -> bytes:
    """The standard reason phrase of a status code (b"" for one without)."""
    return _REASONS.get(status, b"")


def error_body(request_id: Any, code: int, message: str, data: Any = None) -> bytes:
    """A JSON-RPC error response (id null when the request's id is unknown).

    Used for refusals made before any MCP connection saw the request (a bad header, an
    unknown session), which still owe the client a JSON-RPC error it can read.
    """
    return jr.encode_error(
        request_id if jr.is_request_id(request_id) else None,
        jr.error_object(code, message, data),
    )


# Where h11 ends a message head: the first empty line, CRLF or bare LF.
_HEAD_END: Final = re.compile(rb"\n\r?\n")


class HeadScanner:
    """Measures one request head in the raw bytes before h11 parses it.

    h11 applies `max_incomplete_event_size` only while a head is incomplete: a head
    that arrives whole in one `receive_data` is parsed whatever its size, so the
    limit held or not depending on how the peer's writes were split
    (python-hyper/h11#182). Feed a scanner every byte of the head, from its first,
    before h11 sees them: it keeps at most `limit` bytes and says whether the head
    ended within them.

    A complete head is also checked for two line framings h11 accepts and RFC 9112
    lets a server refuse: a bare LF ending a line (2.2) and obsolete line folding
    (5.2), which h11 joins into the field before it. Either can make a proxy in front
    and this server see different fields (`Transfer-Encoding:` folded onto the next
    line is the classic request-smuggling shape), so both are refused.
    """

    __slots__ = ("_head", "_limit")

    def __init__(self, limit: int) -> None:
        """A scanner for one head of at most `limit` bytes, its terminator included."""
        self._limit = limit
        self._head = bytearray()

    def feed(self, data: bytes | bytearray) -> bool:
        """Take the next bytes; True once the head ended, False while it has not.
        Raises `RemoteProtocolError`: status 431 once `limit` bytes came without its
        end, 400 for a head with a bare LF or a folded line."""
        head = self._head
        resume = max(0, len(head) - 2)  # an end may straddle the previous feed
        # Only up to the limit is kept: the rest of an over-long head is never buffered, so
        # the scanner's memory is bounded by the limit whatever the peer sends.
        head += memoryview(data)[: self._limit - len(head)]
        match = _HEAD_END.search(head, resume)
        if match is None:
            if len(head) >= self._limit:
                raise RemoteProtocolError(
                    f"Request header fields too large (over {self._limit} bytes)",
                    http_status=431,
                )
            return False
        del head[match.end() :]
        if head.count(b"\n") != head.count(b"\r\n"):
            raise RemoteProtocolError("Bad Request: a line of the request head ends in a bare LF")
        if b"\n " in head or b"\n\t" in head:
            raise RemoteProtocolError("Bad Request: obsolete line folding is unacceptable")
        return True


# Heads read and written without h11, by both HTTP connections' direct paths (the
# plainest requests and responses; h11 takes every other). Each shape is a subset of
# h11's grammar (h11/_abnf.py, after RFC 9112): a token name, a colon, optional blanks,
# a value of visible or obs-text characters with single blank runs inside, optional
# blanks, CRLF; so whatever these accept, h11 and `HeadScanner` accept and read alike.
_TOKEN: Final = r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
_FIELD_CHAR: Final = "[!-~\x80-\xff]"
_FIELD_LINE: Final = rf"({_TOKEN}):[ \t]*((?:{_FIELD_CHAR}+(?:[ \t]+{_FIELD_CHAR}+)*)?)[ \t]*\r\n"
_FIELD: Final = re.compile(_FIELD_LINE)
_FIELDS: Final = re.compile(rf"(?:{_FIELD_LINE})*")
# What h11 sends (h11/_abnf.py: a token, ": ", a value of any bytes but NUL and
# whitespace, with blank runs inside), over the encoded fields.
_FIELDS_OUT: Final = re.compile(
    rb"(?:[-!#$%&'*+.^_`|~0-9a-zA-Z]+: (?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?\r\n)*"
)


# Field lines read before -> their (name, value): a client sends the same host, accept,
# content-type and version lines with every request, so each is judged and split once and
# found again by one dict lookup (a line read afresh is about ten string-method calls,
# roughly 6,500 instructions; the seven of a 2026-07-28 POST were 47,000 of its server's
# 390,000). Only plain lines (the subset `_plain_field` takes) are kept, and short ones;
# cleared whole when full, as `_WRITTEN` is: a length or a session id changes per message
# or session, and a peer inventing lines only evicts the cache, never grows it. The
# entries are immutable pairs, shared by every head that has the line.
_READ: dict[str, tuple[str, str]] = {}
_READ_MAX: Final = 512
_READ_LINE: Final = 256


def _plain_field(line: str) -> tuple[str, str] | None:
    """One field line (without its CRLF) of the plain subset as (name lower-cased, value
    trimmed of blanks), or None for any other line: printable ASCII throughout (so no tab,
    control or obs-text), a name of letters, digits and `-`, a colon."""
    if not (line.isascii() and line.isprintable()):
        return None
    name, colon, value = line.partition(":")
    if not colon or not name.replace("-", "").isalnum():
        return None
    # (No tab can be left in the value: `isprintable` refused the line.)
    return name.lower(), value.strip(" ")


def plain_fields(text: str, start: int) -> HeaderList | None:
    """The fields of a head (decoded as Latin-1) from `start` to its end, each line
    CRLF-ended (the blank line not included): names lower-cased, values trimmed, as
    h11 gives them; None unless every line is of the plain shape above."""
    # The shape nearly every client writes is read with string methods, a line seen
    # before with none (`_READ`): the two regular expressions below walk each character
    # in `re`'s engine, twice (callgrind, CPython 3.11: 58,700 instructions against
    # 38,700 for a 2026-07-28 POST's seven fields, 20,200 against 15,200 for a
    # response's two). A field is taken this way only when it is of a subset of the
    # plain shape (`_plain_field`), which the expressions read exactly alike (their
    # value is the text between the colon and the line end, trimmed of blanks); any
    # other head takes the expressions.
    block = text[start:]
    if block[-2:] == "\r\n":
        read = _READ
        fields: Headers = []
        # The head's index (`HeaderList.by_name`), filed as the fields are read: the
        # names are lower-cased and the values trimmed here already.
        index: dict[str, list[str]] = {}
        for line in block[:-2].split("\r\n"):
            field = read.get(line)
            if field is None:
                field = _plain_field(line)
                if field is None:
                    break
                if len(line) <= _READ_LINE:
                    if len(read) >= _READ_MAX:
                        read.clear()
                    read[line] = field
            fields.append(field)
            name, value = field
            values = index.get(name)
            if values is None:
                index[name] = [value]
            else:
                values.append(value)
        else:
            return HeaderList(fields, index)
    if _FIELDS.fullmatch(text, start) is None:
        return None
    return HeaderList([(name.lower(), value) for name, value in _FIELD.findall(text, start)])


# One field as `_FIELDS_OUT` accepts it: a head whose every field is of this shape is of
# that shape (and so the same bytes).
_FIELD_OUT: Final = re.compile(
    rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+: (?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?\r\n"
)
# Fields written before, as bytes: a client sends the same host, accept and mirrored
# headers with every request, a server the same content-type, so each is encoded and
# checked once (the check walks every byte in `re`'s engine: 30,700 instructions for a
# 2026-07-28 POST's seven fields, against about 8,000 from here). Only fields of the
# shape above, and short, are kept; cleared whole when full (a length or a session id
# changes per message).
_WRITTEN: dict[tuple[str, str], bytes] = {}
_WRITTEN_MAX: Final = 512
_WRITTEN_LINE: Final = 256


def plain_head(first_line: bytes, headers: Headers) -> bytes | None:
    """A head as h11 writes it (the first line, each field as given, a blank line), or
    None where h11 would refuse to (an illegal field; a non-ASCII one: h11 encodes
    text fields as ASCII)."""
    written = _WRITTEN
    lines = [first_line]
    for field in headers:
        line = written.get(field) if type(field) is tuple else None
        if line is None:
            name, value = field
            try:
                line = f"{name}: {value}\r\n".encode("ascii")
            except UnicodeEncodeError:
                return None
            if _FIELD_OUT.fullmatch(line) is None:
                break  # not alone of the shape: the whole head is judged below
            if len(line) <= _WRITTEN_LINE and type(field) is tuple:
                if len(written) >= _WRITTEN_MAX:
                    written.clear()
                written[field] = line
        lines.append(line)
    else:
        lines.append(b"\r\n")
        return b"".join(lines)
    try:
        fields = "".join([f"{name}: {value}\r\n" for name, value in headers]).encode("ascii")
    except UnicodeEncodeError:
        return None
    if _FIELDS_OUT.fullmatch(fields) is None:
        return None
    return first_line + fields + b"\r\n"


def sse_message(payload: bytes, event_id: str | None = None) -> bytes:
    """One SSE `message` event carrying a compact JSON-RPC message.

    `jr.dumps` never emits a newline, so the payload fits one `data:` line and the
    general encoder in `_sse.py` is not needed on this hot path.

    The event type is written out (`event: message`) although it is the default: some
    clients dispatch on it, and it costs a few bytes.
    """
    if event_id is None:
        return b"event: message\ndata: " + payload + b"\n\n"
    return b"event: message\nid: " + event_id.encode("ascii") + b"\ndata: " + payload + b"\n\n"


__all__ = [
    "DEFAULT_PATH",
    "ERROR_STATUS",
    "JSON",
    "LAST_EVENT_ID",
    "PROTOCOL_VERSION",
    "SESSION_ID",
    "SSE",
    "HeadScanner",
    "HeaderList",
    "Headers",
    "accepted",
    "decode_headers",
    "error_body",
    "header_values",
    "is_visible_ascii",
    "media_type",
    "reason_phrase",
    "single_header",
    "sse_message",
]
