"""JSON-RPC 2.0 decoding and encoding with hard limits.

Parsing uses `pydantic_core.from_json` (already a dependency): it is several
times faster than `json` on small messages, never raises `RecursionError` on
deep input, and rejects NaN/Infinity tokens. The remaining limits (depth below
its own, integer digits, string length, non-finite floats from huge exponents)
are enforced with C-speed pre-checks on the raw bytes, so a typical message pays
almost nothing and only suspicious ones take the slow path.

Non-finite numbers: the NaN/Infinity tokens are refused here; a literal such as
`1e999` parses to infinity, which every typed field refuses (-32602) and which
is written back as `null`, never as invalid JSON. Free-form values (tool
arguments) may carry it to the application, as Python's own `json` would.

A message refused by a limit (not malformed, only too big, too deep ...) raises
`LimitExceeded`, which says what could be read of its envelope: its id, and
whether it is a response. For a message that was parsed anyway (a string or an
integer over its limit) that is exact; for one that was not (too many bytes, too
deep) it comes from `peek_envelope`, which reads only the first and the last
`PEEK_BYTES` bytes, so a transport that discards an over-long message can keep
just those and still answer with the id. docs/limits.md has the whole table.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeGuard

import pydantic_core

from ._errors import PARSE_ERROR, RemoteProtocolError

RequestId = int | str

JSONRPC_VERSION: Final = "2.0"
_FROM_JSON_MAX_DEPTH: Final = 200  # pydantic_core refuses deeper input by itself


MiB: Final = 1024 * 1024

#: The default message limit. Tool results carry files and images as base64, a third
#: larger than the file: a 40 MiB image is a 53.3 MiB string, plus a few hundred
#: bytes of envelope. 64 MiB takes that with 10 MiB to spare; a limit far above it
#: would let one peer make us buffer much more for nothing real.
DEFAULT_MAX_MESSAGE_BYTES: Final = 64 * MiB


@dataclass(frozen=True, slots=True)
class Limits:
    """Every buffer and count the engine keeps, with safe defaults.

    Raise a limit for a trusted peer; lower it for an exposed one. Depth is
    capped at 200 because the parser refuses deeper input anyway.

    Two limits follow `max_message_bytes` unless set, so that raising it is
    enough for bigger payloads and no second limit waits behind it:
    `max_string_length` (None: a string can never be longer than the message
    that holds it, so only the message limit counts, and accepted messages need
    no second pass to look for long strings) and `max_buffered_output_bytes`
    (None: twice the larger of the message limit and its default, so a message
    as big as a peer of the same settings accepts fits beside other output, and
    lowering the limit on what comes in never caps what goes out: a small request
    may well have a big answer). `string_limit` and `output_limit` give the
    values in force.
    """

    # Counted per message, never per chunk: a chunk may hold a near-limit message
    # and the start of the next (a per-chunk cap refused valid input elsewhere).
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    # Real payloads nest a few dozen levels at most; 128 leaves room for deep tool
    # arguments while staying under the depth at which other parsers and SDKs fail
    # (rmcp closed the session at 126) and well under the parser's own 200.
    max_depth: int = 128
    # An int64 has 19 digits and JSON numbers beyond double precision are noise;
    # converting a long digit string costs quadratic time (CVE-2020-10735, which is
    # why CPython stops at 4300), so 1000 is generous and still cheap.
    max_integer_digits: int = 1000
    max_string_length: int | None = None
    # Each request in flight holds an entry until it is answered: 1024 is far more
    # concurrency than any client uses (claude.ai sent 12 at once) and bounds what a
    # peer that never waits for answers can make us hold.
    max_inbound_in_flight: int = 1024
    max_outbound_in_flight: int = 1024
    max_buffered_output_bytes: int | None = None
    # A batch's answers are produced at once; 256 bounds that burst (2025-03-26).
    max_batch_size: int = 256
    # Ended ids are kept so a late or repeated answer is told apart from one to an
    # id never sent; 4096 covers several in-flight tables' worth of turnover.
    max_remembered_ids: int = 4096
    # The longest method any revision defines is under 50 characters; a method is
    # looked up and often logged, so a longer one is junk, refused before that.
    max_method_length: int = 256
    # Legacy `resources/subscribe` entries held per session.
    max_subscriptions: int = 1024
    # 2025-11-25 tasks whose progress token stays live after creation, each side.
    max_tasks: int = 1024

    def __post_init__(self) -> None:
        """Refuse nonsense at construction: a zero or negative bound would refuse
        everything, and a depth beyond the parser's own cap would promise what the
        parser cannot keep.
        """
        if not 1 <= self.max_depth <= _FROM_JSON_MAX_DEPTH:
            raise ValueError(f"max_depth must be between 1 and {_FROM_JSON_MAX_DEPTH}")
        for name in (
            "max_message_bytes",
            "max_integer_digits",
            "max_string_length",
            "max_inbound_in_flight",
            "max_outbound_in_flight",
            "max_buffered_output_bytes",
            "max_batch_size",
            "max_remembered_ids",
            "max_method_length",
            "max_subscriptions",
            "max_tasks",
        ):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be positive")

    @property
    def string_limit(self) -> int:
        """The longest string accepted (characters)."""
        limit = self.max_string_length
        return self.max_message_bytes if limit is None else limit

    @property
    def output_limit(self) -> int:
        """The most output bytes queued before sending refuses (see the class docstring)."""
        limit = self.max_buffered_output_bytes
        if limit is None:
            if self.max_message_bytes <= DEFAULT_MAX_MESSAGE_BYTES:
                # The one int object, not a new one per call: every connection keeps
                # this value, and an int this large is 32 bytes of each.
                return _DEFAULT_OUTPUT_LIMIT
            return 2 * self.max_message_bytes
        return limit


_DEFAULT_OUTPUT_LIMIT = 2 * DEFAULT_MAX_MESSAGE_BYTES


DEFAULT_LIMITS: Final = Limits()

# The pre-scans below work on raw bytes with `bytes.translate`, `count` and `find`,
# which run in C; the values they need are built once here.
_BRACKETS = bytes(range(256)).translate(None, b"[]{}")  # every byte except brackets
# The unrolled, possessive form: runs of plain characters go in one step, which on
# a long string is many times faster than one alternation per character.
_STRING_RE = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
# Large enough that the per-slice overhead vanishes, small enough that the
# translated copy of a 64 MiB message never exists whole.
_SCAN_CHUNK: Final = 1 << 20


@functools.lru_cache(maxsize=8)
def _zeros(n: int) -> bytes:
    """The run of `n` zeros searched for; cached, since the digit limit rarely changes."""
    return b"0" * n


def _has_digit_run(data: bytes | bytearray, longer_than: int) -> bool:
    """More than `longer_than` ASCII digits in a row anywhere (strings included)?

    Digits become "0" and everything else a space, then one substring search: two C
    passes. The regex `[0-9]{n+1}` restarts at every digit and takes seconds on a
    50 MB base64 string. Slices of 1 MiB bound the translated copy; they overlap
    by `longer_than` bytes, so a run across a boundary lies whole in one of them.
    """
    run = _zeros(longer_than + 1)
    size = len(data)
    if size <= _SCAN_CHUNK:
        return data.translate(_DIGITS_AS_ZERO).find(run) != -1
    for start in range(0, size, _SCAN_CHUNK):
        piece = data[start : start + _SCAN_CHUNK + longer_than]
        if piece.translate(_DIGITS_AS_ZERO).find(run) != -1:
            return True
    return False


def _max_depth(data: bytes | bytearray) -> int:
    """Nesting depth of a JSON text, ignoring brackets inside strings."""
    skeleton = _STRING_RE.sub(b"", data).translate(None, _BRACKETS)
    if not skeleton:
        return 0
    return max(itertools.accumulate(_DEPTH_STEP[b] for b in skeleton))


@functools.lru_cache(maxsize=8)
def _digits_bound(digits: int) -> int:
    """The smallest integer with more than `digits` digits (exact, unlike log10)."""
    return int(10**digits)


# ------------------------------------------------------------ refused messages

#: How much of the start and of the end of a refused message is read for its id.
#: Ids sit next to the envelope's other short members: first in what we, the
#: Python SDK and most encoders write (`{"jsonrpc":"2.0","id":7,"method":...`),
#: last in what the TypeScript SDK writes (`{"method":...,"params":{...},
#: "jsonrpc":"2.0","id":7}`). Either way they are within a few bytes of an end.
PEEK_BYTES: Final = 4096


class Envelope(NamedTuple):
    """What could be read of a refused message: its id (None when it could not be
    read, or itself breaks a limit), whether it is a response, and whether it is
    known to be a notification (only for a message that was parsed whole)."""

    request_id: RequestId | None
    is_response: bool
    is_notification: bool = False


class LimitExceeded(RemoteProtocolError):
    """A message refused by one of the `Limits`: well formed, perhaps, but too big,
    too deep, or with a string or an integer over its bound.

    `setting` names the limit (as in docs/limits.md: "Limits.max_message_bytes").
    `envelope` is what could be read of the message, so the refusal can carry the
    request's id, or fail our own request whose response it was.
    """

    def __init__(self, message: str, *, setting: str, http_status: int, envelope: Envelope) -> None:
        """-32700 (the message could not be read), with the setting and the envelope."""
        super().__init__(message, code=PARSE_ERROR, http_status=http_status)
        self.setting = setting
        self.envelope = envelope


# The tokens `peek_envelope` reads. They match JSON's grammar only as far as the
# envelope needs (strings, integers, a value's extent); anything else ends the
# reading, so malformed or cut bytes can lose the id but never raise.
_WS_RE = re.compile(rb"[ \t\r\n]*")
_STRING_TOKEN = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_SCALAR_TOKEN = re.compile(rb"[-+.0-9a-zA-Z]+")
_INTEGER = re.compile(rb"-?(?:0|[1-9][0-9]*)")
_STRUCTURE = re.compile(rb'["\[\]{}]')
_SCALAR_BYTES = frozenset(b"-+.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_OTHER: Final = object()  # a member value that is not a possible id (or not readable)


def _token_value(token: bytes) -> Any:
    """A string or scalar token as a value; integers and strings only, else _OTHER."""
    if token[:1] == b'"':
        try:
            value = json.loads(token)
        except ValueError:
            return _OTHER
        return value
    if _INTEGER.fullmatch(token):
        return int(token)
    return _OTHER


def _skip_ws(buf: bytes, i: int) -> int:
    """The index of the first non-whitespace byte at or after `i` (JSON's four)."""
    match = _WS_RE.match(buf, i)
    return match.end() if match else i


def _nested_end(buf: bytes, i: int) -> int:
    """The end of the array or object opening at `i`, or -1 when the window cuts it."""
    depth = 0
    pos = i
    while True:
        match = _STRUCTURE.search(buf, pos)
        if match is None:
            return -1
        char = buf[match.start()]
        if char == 0x22:
            string = _STRING_TOKEN.match(buf, match.start())
            if string is None:
                return -1
            pos = string.end()
            continue
        depth += 1 if char in (0x5B, 0x7B) else -1
        pos = match.end()
        if depth == 0:
            return pos


def _members_forward(head: bytes) -> dict[str, Any]:
    """Top-level members read from the start of an object, up to the first one the
    window cuts. Nested values are skipped; they, and a value the window cuts,
    count as _OTHER (the key is still seen: a cut `"result"` makes a response)."""
    found: dict[str, Any] = {}
    size = len(head)
    i = _skip_ws(head, 0)
    if i >= size or head[i] != 0x7B:
        return found
    i += 1
    while True:
        i = _skip_ws(head, i)
        key_token = _STRING_TOKEN.match(head, i)
        if key_token is None:
            return found
        key = _token_value(key_token.group())
        i = _skip_ws(head, key_token.end())
        if i >= size or head[i] != 0x3A or not isinstance(key, str):
            return found
        found[key] = _OTHER  # a repeated key: the last one counts, as in the parser
        i = _skip_ws(head, i + 1)
        if i >= size:
            return found
        if head[i] == 0x22:
            token = _STRING_TOKEN.match(head, i)
            if token is None:
                return found
            end, value = token.end(), _token_value(token.group())
        elif head[i] in (0x5B, 0x7B):
            end, value = _nested_end(head, i), _OTHER
            if end < 0:
                return found
        else:
            scalar = _SCALAR_TOKEN.match(head, i)
            if scalar is None or scalar.end() >= size:  # the window may have cut it
                return found
            end, value = scalar.end(), _token_value(scalar.group())
        found[key] = value
        i = _skip_ws(head, end)
        if i >= size or head[i] != 0x2C:
            return found
        i += 1


def _string_start(buf: bytes, end: int) -> int:
    """Where the string token ending at `end` (its closing quote at end - 1) opens.

    Inside a string every quote is escaped by an odd run of backslashes, so the
    opening one is the first quote, going back, with an even run (none) before
    it. A run that reaches the window's start is undecidable: -1.
    """
    pos = end - 1
    while True:
        quote = buf.rfind(b'"', 0, pos)
        if quote <= 0:
            return -1
        first = quote
        while first > 0 and buf[first - 1] == 0x5C:
            first -= 1
        if first == 0:
            return -1
        if (quote - first) % 2 == 0:
            return quote
        pos = quote


def _rskip_ws(buf: bytes, j: int) -> int:
    """The end of `buf[:j]` once trailing JSON whitespace is dropped."""
    while j > 0 and buf[j - 1] in b" \t\r\n":
        j -= 1
    return j


def _members_backward(tail: bytes) -> dict[str, Any]:
    """Top-level members read back from the end of an object, while their values
    are strings or scalars (a nested value ends the reading)."""
    found: dict[str, Any] = {}
    j = _rskip_ws(tail, len(tail))
    if j == 0 or tail[j - 1] != 0x7D:
        return found
    j -= 1
    while True:
        j = _rskip_ws(tail, j)
        if j == 0:
            return found
        if tail[j - 1] == 0x22:
            start = _string_start(tail, j)
        elif tail[j - 1] in _SCALAR_BYTES:
            start = j
            while start > 0 and tail[start - 1] in _SCALAR_BYTES:
                start -= 1
        else:
            return found  # a nested value, or the object's opening brace
        if start <= 0:
            return found
        value = _token_value(tail[start:j])
        k = _rskip_ws(tail, start)
        if k == 0 or tail[k - 1] != 0x3A:
            return found
        k = _rskip_ws(tail, k - 1)
        if k == 0 or tail[k - 1] != 0x22:
            return found
        key_start = _string_start(tail, k)
        if key_start < 0:
            return found
        key = _token_value(tail[key_start:k])
        if isinstance(key, str):
            found.setdefault(key, value)  # read backwards: the first seen is the last
        j = _rskip_ws(tail, key_start)
        if j == 0 or tail[j - 1] != 0x2C:
            return found
        j -= 1


def peek_envelope(head: bytes, tail: bytes, limits: Limits = DEFAULT_LIMITS) -> Envelope:
    """The id and kind of a message known only by its first and last bytes.

    `head` is its start and `tail` its end (they may overlap). The id can be read
    when the top-level `"id"` member is a string or an integer lying wholly in
    `head` after only complete members (nested ones are skipped), or wholly in
    `tail` after only string and scalar members up to the closing brace. If the
    two readings disagree (a repeated key), or the id itself breaks `limits` (too
    many digits, too long), there is no id. The message is a response when a
    `"result"` or `"error"` member was seen and no `"method"`. Never raises,
    whatever the bytes.
    """
    members = (_members_forward(head), _members_backward(tail))
    ids = {(type(m["id"]), m["id"]) for m in members if "id" in m}
    request_id: RequestId | None = None
    if len(ids) == 1:
        ((_, candidate),) = ids
        if is_request_id(candidate) and _id_fits(candidate, limits):
            request_id = candidate
    keys = members[0].keys() | members[1].keys()
    is_response = "method" not in keys and ("result" in keys or "error" in keys)
    return Envelope(request_id, is_response)


def envelope_of_value(value: Any, limits: Limits) -> Envelope:
    """The same, exactly, for a message that was parsed."""
    if type(value) is not dict:
        return Envelope(None, False)
    has_method = "method" in value
    is_response = not has_method and ("result" in value or "error" in value)
    request_id = recover_id(value)
    if request_id is not None and not _id_fits(request_id, limits):
        request_id = None
    return Envelope(request_id, is_response, has_method and "id" not in value)


def _id_fits(request_id: RequestId, limits: Limits) -> bool:
    """An id we can echo without breaking the peer's limits, if they are ours."""
    if type(request_id) is int:
        return abs(request_id) < _digits_bound(limits.max_integer_digits)
    return len(str(request_id)) <= limits.string_limit


def peek_window(limits: Limits) -> int:
    """Bytes kept of each end of a refused message: `PEEK_BYTES`, or half the message
    limit if that is less, so that both ends of an over-long line being skipped
    never hold more than the limit, and any chunking keeps the same bytes."""
    return min(PEEK_BYTES, limits.max_message_bytes // 2)


def too_big(
    size: int, limit: int, head: bytes, tail: bytes, setting: str, limits: Limits
) -> LimitExceeded:
    """The refusal of a message of `size` bytes over `limit`, known by its ends."""
    return LimitExceeded(
        f"message of {size} bytes exceeds the limit of {limit} bytes ({setting})",
        setting=setting,
        http_status=413,
        envelope=peek_envelope(head, tail, limits),
    )


def _walk_for_limits(value: Any, limits: Limits) -> None:
    """Slow path: check every leaf (only when a cheap byte scan found a suspect).

    Iterative, with its own stack: the value is at most `max_depth` deep, but a
    recursive walk would still cost a Python frame per level.
    """
    stack = [value]
    max_digits = limits.max_integer_digits
    max_len = limits.string_limit
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if len(key) > max_len:
                    raise _string_too_long(len(key), value, limits)
                stack.append(sub)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if len(item) > max_len:
                raise _string_too_long(len(item), value, limits)
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int) and abs(item) >= _digits_bound(max_digits):
            raise LimitExceeded(
                f"integer has more than {max_digits} digits (Limits.max_integer_digits)",
                setting="Limits.max_integer_digits",
                http_status=400,
                envelope=envelope_of_value(value, limits),
            )


def _string_too_long(length: int, message: Any, limits: Limits) -> LimitExceeded:
    """The refusal of a string over `max_string_length`; 413, as for a message too large."""
    return LimitExceeded(
        f"string of {length} characters exceeds the limit of {limits.string_limit} "
        "(Limits.max_string_length)",
        setting="Limits.max_string_length",
        http_status=413,
        envelope=envelope_of_value(message, limits),
    )


def parse(data: bytes | bytearray | memoryview | str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Bytes to a JSON value, or `RemoteProtocolError` with code -32700.

    Never raises anything else, whatever the input. A limit raises the subclass
    `LimitExceeded` (see the module docstring).
    """
    # A str is what a text transport (WebSocket, in-process) hands over; one holding a
    # lone surrogate has no UTF-8 form, so it is refused as a peer's invalid bytes are.
    if type(data) is bytes:
        pass  # what framed and byte transports hand over: read in place
    elif isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:
            raise RemoteProtocolError("message is not valid UTF-8", code=PARSE_ERROR) from None
    elif type(data) is memoryview:
        data = bytes(data)  # bytes and bytearray are read in place: no copy
    size = len(data)
    # The size first: an over-long message then costs two slices for its id, and
    # nothing of it is scanned or parsed.
    if size > limits.max_message_bytes:
        window = peek_window(limits)
        raise too_big(
            size,
            limits.max_message_bytes,
            bytes(data[:window]),
            bytes(data[-window:]),
            "Limits.max_message_bytes",
            limits,
        )
    # Depth before parsing, because a parser recursing into hostile nesting is the
    # failure to prevent (a RecursionError is no ValueError and escaped other SDKs).
    # Each test is cheaper than the next: a message too short for the limit cannot
    # nest past it, and one with fewer brackets than the limit cannot either.
    # "Too short" (`counted` false; the receive lane tests the same): each level takes
    # at least two bytes, its opener and its closer, so no text of at most
    # `2 * depth_limit + 1` bytes nests past the limit. A text without a `[` nests
    # objects only, and an object that holds another spends at least five bytes on that
    # level (`{`, the shortest key `""`, `:`, `}`), the innermost two (`{}`): so
    # `depth_limit + 1` levels take at least `5 * depth_limit + 2` bytes. Most requests
    # hold no array; a 2026-07-28 request, about 300 bytes with its `_meta` envelope, is
    # over the first bound and under the second, and skips the count of its `{` (about
    # 1,500 instructions; the `find` of a `[` is a `memchr`, and the count needs it).
    depth_limit = limits.max_depth
    counted = not (
        size <= 2 * depth_limit + 1 or ((at := data.find(b"[")) < 0 and size <= 5 * depth_limit + 1)
    )
    if (
        counted
        # (`_too_deep`, inline: `_openers`)
        and data.count(b"{") + (0 if at < 0 else data.count(b"[", at)) > depth_limit
        and _max_depth(data) > depth_limit
    ):
        raise _deep_refusal(data, limits)
    # `from_json` decodes UTF-8 strictly and refuses NaN/Infinity, so every way the
    # text can be malformed surfaces here as one ValueError, answered -32700.
    try:
        value = pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        # A message too short to nest past the limit (above) is judged for depth only
        # when it does not parse: a valid one cannot, and the parser (its own
        # limit is 200 levels) cannot recurse deeper than a message that short. So most
        # messages are spared the two scans, and a malformed one gets the error it got
        # before.
        if not counted and size > depth_limit and _too_deep(data, depth_limit):
            raise _deep_refusal(data, limits) from None
        raise RemoteProtocolError(f"parse error: {exc}", code=PARSE_ERROR) from None
    # Only a message longer than a limit can break it, so small ones skip the scans.
    # (Unset, the string limit is the message limit, which `size` is within already.)
    digits = limits.max_integer_digits
    strings = limits.max_string_length
    if (size > digits and _has_digit_run(data, digits)) or (strings is not None and size > strings):
        _walk_for_limits(value, limits)
    return value


def _too_deep(data: bytes | bytearray, depth_limit: int) -> bool:
    """Whether the text nests past `depth_limit`: the bracket count first (one with
    fewer brackets than the limit cannot), then the nesting itself."""
    return _openers(data) > depth_limit and _max_depth(data) > depth_limit


def _openers(data: bytes | bytearray) -> int:
    """How many `{` and `[` the text holds (inside strings too): what no text with
    fewer can nest deeper than.

    The `[` are counted from the first one, found by `find` (a `memchr`, many times
    faster than `count`'s byte loop): many messages hold no array, and then only the
    `{` are counted byte by byte (and not at all below five bytes a level: `parse`).
    (Written in where it runs per message: `parse` and `_Connection.receive_message`.)
    """
    at = data.find(b"[")
    return data.count(b"{") + (0 if at < 0 else data.count(b"[", at))


def _deep_refusal(data: bytes | bytearray, limits: Limits) -> LimitExceeded:
    window = peek_window(limits)
    return LimitExceeded(
        f"message nests deeper than {limits.max_depth} levels (Limits.max_depth)",
        setting="Limits.max_depth",
        http_status=400,
        envelope=peek_envelope(bytes(data[:window]), bytes(data[-window:]), limits),
    )


def is_request_id(value: object) -> TypeGuard[int | str]:
    """JSON-RPC ids are strings or integers; null, floats and booleans are not."""
    kind = type(value)
    return kind is int or kind is str


def recover_id(obj: object) -> RequestId | None:
    """The id of a malformed message, when it can be read, for the error reply."""
    if isinstance(obj, dict):
        candidate = obj.get("id")
        if is_request_id(candidate):
            return candidate
    return None


def loads_own(data: bytes) -> Any:
    """Read back a message we encoded ourselves. Our limits bound what the peer
    sends, not what we send, so none is applied (nor needed: `dumps` wrote it)."""
    return pydantic_core.from_json(data)


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes with no embedded newline.

    Falls back to ASCII-escaped stdlib output for strings the fast encoder
    refuses (lone surrogates), so an error that quotes bad input still encodes.
    """
    try:
        return pydantic_core.to_json(obj, inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=True, default=str).encode()


def error_object(code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error member (section 5.1); `data` is written only when given,
    since None would put an explicit `"data": null` on the wire."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


def encode_request(request_id: RequestId, method: str, params: Mapping[str, Any] | None) -> bytes:
    """A request. `params` None omits the member: JSON-RPC 2.0 (section 4) allows
    that, and several MCP methods (ping, `*/list`) define no params at all.

    (`ClientConnection.send_request`'s lane writes this out for its dict of params:
    keep the two alike.)"""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    try:  # `dumps`, inline: one call less per request
        return pydantic_core.to_json(msg, inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        return dumps(msg)


def trailing_members(members: Mapping[str, Any]) -> bytes | None:
    """The encoded tail of an object that ends with `members`, for the `_ending`
    encoders: the members after a comma, with the closing braces of the object and
    of the message (the encoders drop the comma when nothing comes before). None
    when `members` would not encode the fast way (their message then takes the
    plain encoder, which knows the fallback).

    Why: a 2026-07-28 client stamps the same `_meta` envelope on every request, and
    a 2026-07-28 server ends every plain result with the same `resultType` and
    server info. Encoding those once per client or server instead of once per
    message is a third of each message's encoding; the bytes are the same.
    """
    try:
        encoded = pydantic_core.to_json(dict(members), inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        return None
    return b"," + encoded[1:-1] + b"}}"  # `{...}` without its braces: the members


def encode_request_ending(
    request_id: RequestId, method: str, params: dict[str, Any], tail: bytes
) -> bytes | None:
    """`encode_request(request_id, method, params | members)` for the members whose
    `trailing_members` is `tail`, placed after those of `params` (the order a dict
    they were added to last has): the same bytes, the members not encoded again.
    None when the rest needs the plain encoder's fallback (the caller uses it)."""
    try:
        head = pydantic_core.to_json(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
            inf_nan_mode="null",
        )
    except pydantic_core.PydanticSerializationError:
        return None
    # `head` ends with the closing braces of params and of the message: the tail, which
    # carries both, goes in their place.
    return head[:-2] + (tail if params else tail[1:])


def encode_result_ending(
    request_id: RequestId, result: dict[str, Any], tail: bytes
) -> bytes | None:
    """`encode_result` of `result` with the members of `tail` added last (see
    `encode_request_ending`), or None for the plain encoder's fallback."""
    try:
        head = pydantic_core.to_json(
            {"jsonrpc": "2.0", "id": request_id, "result": result}, inf_nan_mode="null"
        )
    except pydantic_core.PydanticSerializationError:
        return None
    return head[:-2] + (tail if result else tail[1:])


def encode_text_result(
    request_id: RequestId, text: str, structured: bool, tail: bytes
) -> bytes | None:
    """`encode_result_ending(request_id, result, tail)` of the result of a tool that
    answered with the string `text`: `{"content": [{"type": "text", "text": text}]}`,
    with `"structuredContent": {"result": text}` after it when `structured`. `tail`
    as there (`b"}}"` for no members added). None when the strings need the plain
    encoder's fallback (the caller uses it).

    Why: `to_json` spends most of its work on the containers around the string (about
    8k instructions for this result), which are the same for every such call. Here
    only the id and the string are encoded, by `to_json` as there, and the containers
    are constant bytes in the order `to_json` writes them: the same bytes.
    (`ServerConnection.send_text_result` has this written out: keep the two alike.)
    """
    try:
        encoded = pydantic_core.to_json(text)
        rid = b"%d" % request_id if type(request_id) is int else pydantic_core.to_json(request_id)
    except pydantic_core.PydanticSerializationError:
        return None
    if structured:
        return b"".join((_RESULT_ID, rid, _TEXT_CONTENT, encoded, _STRUCTURED, encoded, b"}", tail))
    return b"".join((_RESULT_ID, rid, _TEXT_CONTENT, encoded, b"}]", tail))


_RESULT_ID: Final = b'{"jsonrpc":"2.0","id":'
_TEXT_CONTENT: Final = b',"result":{"content":[{"type":"text","text":'
_STRUCTURED: Final = b'}],"structuredContent":{"result":'


def encode_notification(method: str, params: Mapping[str, Any] | None) -> bytes:
    """A notification: a request without `id`, which the receiver must not answer
    (JSON-RPC 2.0, section 4.1), not even with an error."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return dumps(msg)


def encode_result(request_id: RequestId, result: Mapping[str, Any]) -> bytes:
    """A success response; its id is the request's, unchanged in type (a string
    "1" and an integer 1 are different ids)."""
    msg = {"jsonrpc": "2.0", "id": request_id, "result": result}
    try:  # `dumps`, inline: one call less per result
        return pydantic_core.to_json(msg, inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        return dumps(msg)


def encode_error(
    request_id: RequestId | None, error: Mapping[str, Any], *, omit_id: bool = False
) -> bytes:
    """An error response. JSON-RPC 2.0 (section 5) requires `id`, as null when the
    request's id could not be read (a parse error). `omit_id` is for the revisions
    whose schema lets an error carry no id at all, where the caller asks for that
    rather than a null the peer's validator may refuse."""
    if omit_id:
        return dumps({"jsonrpc": "2.0", "error": error})
    return dumps({"jsonrpc": "2.0", "id": request_id, "error": error})
