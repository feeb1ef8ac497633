"""SSE codec: WHATWG parsing rules, encoder output, limits, and chunking independence."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_core._errors import INVALID_REQUEST, LocalProtocolError, RemoteProtocolError
from mcp_core._sse import SSEDecoder, SSEEvent, encode_comment, encode_event

# The property tests marked NO_COVER run without coverage tracing (pytest-cov's
# `no_cover`), as tests/fuzz's generated tests do: the tracer about doubled their CPU
# time (test_http_headers.py alone: 18 s of CPU with it, 10 s without), and the
# example tests beside them reach the same code. What each asserts is unchanged.
NO_COVER = pytest.mark.no_cover

BOM = b"\xef\xbb\xbf"


def run(chunks: list[bytes], **limits: int) -> tuple[list[SSEEvent], bool]:
    """Feed chunks then end of stream; return events and whether a RemoteProtocolError ended it."""
    decoder = SSEDecoder(**limits)
    events: list[SSEEvent] = []
    for chunk in [*chunks, b""]:
        try:
            events += decoder.feed(chunk)
        except RemoteProtocolError:
            return events, True
    return events, False


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def decode_every_way(data: bytes, **limits: int) -> list[SSEEvent]:
    """Decode whole, byte by byte and split at every point; all must agree."""
    whole = run([data] if data else [], **limits)
    assert run(bytewise(data), **limits) == whole
    for i in range(1, len(data)):
        assert run([data[:i], data[i:]], **limits) == whole, f"split at {i}"
    events, failed = whole
    assert not failed
    return events


M = "message"

# (input, expected events) for each parsing rule.
CASES: list[Any] = [
    pytest.param(b"data: hello\n\n", [SSEEvent("hello")], id="simple"),
    pytest.param(b"data: a\ndata: b\ndata: c\n\n", [SSEEvent("a\nb\nc")], id="data-joined-lf"),
    pytest.param(b"data: a\r\ndata: b\r\n\r\n", [SSEEvent("a\nb")], id="crlf"),
    pytest.param(b"data: a\rdata: b\r\r", [SSEEvent("a\nb")], id="cr"),
    pytest.param(b"data: a\rdata: b\r\ndata: c\n\r\n", [SSEEvent("a\nb\nc")], id="mixed-endings"),
    pytest.param(b"data: a\r\rdata: b\n\n", [SSEEvent("a"), SSEEvent("b")], id="cr-cr-is-blank"),
    pytest.param(b"data: a\n\r\n", [SSEEvent("a")], id="lf-then-crlf-blank"),
    pytest.param(b"data: a\n\n\n\n", [SSEEvent("a")], id="extra-blank-lines"),
    pytest.param(BOM + b"data: x\n\n", [SSEEvent("x")], id="bom-stripped"),
    pytest.param(BOM + BOM + b"data: x\n\n", [], id="second-bom-kept"),
    pytest.param(BOM + b"data: x\n\n" + BOM + b"data: y\n\n", [SSEEvent("x")], id="mid-bom-kept"),
    pytest.param(b"data: \xef\xbb\xbfx\n\n", [SSEEvent("\ufeffx")], id="bom-in-data-kept"),
    pytest.param(b"\xef\xbbdata: x\n\n", [], id="partial-bom-not-stripped"),
    pytest.param(b": comment\ndata: x\n:\n\n", [SSEEvent("x")], id="comments"),
    pytest.param(b":only a comment\n\n", [], id="comment-alone-no-event"),
    pytest.param(b"data\n\n", [SSEEvent("")], id="field-without-colon"),
    pytest.param(b"data:\n\n", [SSEEvent("")], id="empty-data"),
    pytest.param(b"data\ndata\n\n", [SSEEvent("\n")], id="two-empty-data-lines"),
    pytest.param(b"data:x\n\n", [SSEEvent("x")], id="no-space-after-colon"),
    pytest.param(b"data:  x \n\n", [SSEEvent(" x ")], id="only-one-space-stripped"),
    pytest.param(b"data:\tx\n\n", [SSEEvent("\tx")], id="tab-not-stripped"),
    pytest.param(b"data: a:b: c\n\n", [SSEEvent("a:b: c")], id="colon-in-value"),
    pytest.param(b"data: x\nfoo: bar\nData: y\ndata : z\n\n", [SSEEvent("x")], id="unknown-fields"),
    pytest.param(b"event: ping\n\n", [], id="no-data-not-dispatched"),
    pytest.param(b"event: a\n\ndata: x\n\n", [SSEEvent("x")], id="event-type-reset-on-blank"),
    pytest.param(b"event: up\ndata: x\n\n", [SSEEvent("x", "up")], id="event-type"),
    pytest.param(b"event: a\nevent: b\ndata: x\n\n", [SSEEvent("x", "b")], id="last-event-wins"),
    pytest.param(b"event:\ndata: x\n\n", [SSEEvent("x")], id="empty-event-is-message"),
    pytest.param(b"event\ndata: x\n\n", [SSEEvent("x")], id="bare-event-is-message"),
    pytest.param(
        b"data: x\nevent: e\n\ndata: y\n\n", [SSEEvent("x", "e"), SSEEvent("y")], id="event-reset"
    ),
    pytest.param(b"id: 1\ndata: x\n\n", [SSEEvent("x", M, "1")], id="id"),
    pytest.param(
        b"id: 1\ndata: x\n\ndata: y\n\n",
        [SSEEvent("x", M, "1"), SSEEvent("y", M, "1")],
        id="id-persists",
    ),
    pytest.param(
        b"id: 1\ndata: x\n\nid\ndata: y\n\n",
        [SSEEvent("x", M, "1"), SSEEvent("y", M, "")],
        id="empty-id-resets",
    ),
    pytest.param(b"id: a\x00b\ndata: x\n\n", [SSEEvent("x")], id="id-with-nul-ignored"),
    pytest.param(
        b"id: 1\ndata: x\n\nid: \x00\ndata: y\n\n",
        [SSEEvent("x", M, "1"), SSEEvent("y", M, "1")],
        id="id-with-nul-keeps-previous",
    ),
    pytest.param(b"id: 7\n\ndata: x\n\n", [SSEEvent("x", M, "7")], id="id-from-dataless-block"),
    pytest.param(b"data: x\nid: 2\n\n", [SSEEvent("x", M, "2")], id="id-after-data"),
    pytest.param(b"id: 5\ndata:\n\n", [SSEEvent("", M, "5")], id="mcp-priming-event"),
    pytest.param(b"retry: 1500\ndata: x\n\n", [SSEEvent("x", retry=1500)], id="retry"),
    pytest.param(b"retry:0\ndata: x\n\n", [SSEEvent("x", retry=0)], id="retry-zero"),
    pytest.param(b"retry: 007\ndata: x\n\n", [SSEEvent("x", retry=7)], id="retry-leading-zeros"),
    pytest.param(
        b"retry: 1\ndata: x\n\ndata: y\n\n",
        [SSEEvent("x", retry=1), SSEEvent("y")],
        id="retry-per-block",
    ),
    pytest.param(b"retry: 10a\ndata: x\n\n", [SSEEvent("x")], id="retry-non-digit"),
    pytest.param(b"retry: -1\ndata: x\n\n", [SSEEvent("x")], id="retry-negative"),
    pytest.param(b"retry: +1\ndata: x\n\n", [SSEEvent("x")], id="retry-plus"),
    pytest.param(b"retry: 1.5\ndata: x\n\n", [SSEEvent("x")], id="retry-float"),
    pytest.param(b"retry:\ndata: x\n\n", [SSEEvent("x")], id="retry-empty"),
    pytest.param(b"retry:  1\ndata: x\n\n", [SSEEvent("x")], id="retry-second-space"),
    pytest.param(
        "retry: \u0661\u0662\ndata: x\n\n".encode(), [SSEEvent("x")], id="retry-non-ascii-digits"
    ),
    pytest.param(
        b"retry: " + b"9" * 5000 + b"\ndata: x\n\n",
        [SSEEvent("x", retry=10**18 - 1)],
        id="retry-huge-clamped",
    ),
    pytest.param(b"data: a\x00b\n\n", [SSEEvent("a\x00b")], id="nul-in-data-kept"),
    pytest.param(b"data: \xff\xfeok\n\n", [SSEEvent("\ufffd\ufffdok")], id="invalid-utf8-data"),
    pytest.param(b"data: \xe2\x82\n\n", [SSEEvent("\ufffd")], id="truncated-utf8-at-eol"),
    pytest.param(b"event: \xc3\ndata: x\n\n", [SSEEvent("x", "\ufffd")], id="invalid-utf8-event"),
    pytest.param(b"id: \x80\ndata: x\n\n", [SSEEvent("x", M, "\ufffd")], id="invalid-utf8-id"),
    pytest.param("data: héllo ✓\n\n".encode(), [SSEEvent("héllo ✓")], id="utf8"),
    pytest.param(
        "data: a\u2028b\x85c\x0bd\n\n".encode(),
        [SSEEvent("a\u2028b\x85c\x0bd")],
        id="no-unicode-eol",
    ),
    pytest.param(b"data: x\n", [], id="eof-discards-unterminated-event"),
    pytest.param(b"data: x", [], id="eof-discards-partial-line"),
    pytest.param(b"data: x\n\ndata: y\n", [SSEEvent("x")], id="eof-keeps-earlier-events"),
    pytest.param(b"", [], id="empty-stream"),
]


@pytest.mark.parametrize(("data", "expected"), CASES)
def test_decode_rules(data: bytes, expected: list[SSEEvent]) -> None:
    assert decode_every_way(data) == expected


def test_cr_at_chunk_end_then_lf_is_one_line_ending() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    # If the LF were a second line ending, the blank line would dispatch "a" alone.
    assert decoder.feed(b"\ndata: b\r") == []
    assert decoder.feed(b"\n") == []
    assert decoder.feed(b"\r") == [SSEEvent("a\nb")]
    assert decoder.feed(b"\n") == []  # the LF of that CRLF, not another blank line
    assert decoder.feed(b"data: c\n\n") == [SSEEvent("c")]


def test_cr_at_chunk_end_then_other_byte() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\r") == [SSEEvent("a")]
    assert decoder.feed(b"\n\n") == []  # CRLF ends the blank line; the next LF is one more blank


def test_bom_split_across_chunks() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef") == []
    assert decoder.feed(b"\xbb") == []
    assert decoder.feed(b"\xbfdata: x\n\n") == [SSEEvent("x")]


def test_bom_only_then_data() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(BOM) == []
    assert decoder.feed(b"data: x\n\n") == [SSEEvent("x")]


def test_several_events_in_one_chunk() -> None:
    data = b"event: a\ndata: 1\n\nevent: b\ndata: 2\n\n: ping\n\ndata: 3\n\n"
    assert SSEDecoder().feed(data) == [SSEEvent("1", "a"), SSEEvent("2", "b"), SSEEvent("3")]


def test_last_event_id_and_retry_properties() -> None:
    decoder = SSEDecoder()
    assert decoder.last_event_id is None
    assert decoder.retry is None
    decoder.feed(b"id: 1\nretry: 100\n")
    assert decoder.last_event_id is None  # the id takes effect at the blank line
    assert decoder.retry == 100  # retry takes effect at once
    decoder.feed(b"\n")
    assert decoder.last_event_id == "1"
    decoder.feed(b"retry: x\n\n")
    assert decoder.retry == 100


def test_retry_only_block_dispatches_nothing_but_sets_retry() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 9\ndata:\n\nretry: 3000\n\n") == [SSEEvent("", M, "9")]
    assert decoder.retry == 3000
    assert decoder.last_event_id == "9"


def test_end_of_stream_discards_pending_id_but_keeps_state_for_reconnect() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\ndata: a\n\nretry: 50\nid: 2\ndata: lost\n") == [
        SSEEvent("a", M, "1")
    ]
    assert decoder.feed(b"") == []
    assert decoder.last_event_id == "1"
    assert decoder.retry == 50
    # The next stream (after reconnecting) may begin with a BOM and inherits the id.
    assert decoder.feed(BOM + b"data: b\n\n") == [SSEEvent("b", M, "1")]


def test_end_of_stream_resets_cr_and_partial_line() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\r")
    decoder.feed(b"")
    assert decoder.feed(b"\ndata: b\n\n") == [SSEEvent("b")]  # the LF is a blank line now
    decoder.feed(b"data: partial")
    decoder.feed(b"")
    assert decoder.feed(b"\ndata: c\n\n") == [SSEEvent("c")]


# --- limits -----------------------------------------------------------------------------


def assert_limit_error(exc: RemoteProtocolError) -> None:
    assert type(exc) is RemoteProtocolError
    assert exc.code == INVALID_REQUEST
    assert exc.http_status == 400


def test_line_at_limit_is_accepted() -> None:
    assert decode_every_way(b"data: 12345\n\n", max_line_bytes=11) == [SSEEvent("12345")]


@pytest.mark.parametrize("ending", [b"\n", b"\r", b"\r\n"])
def test_complete_line_over_limit(ending: bytes) -> None:
    with pytest.raises(RemoteProtocolError, match="max_line_bytes") as info:
        SSEDecoder(max_line_bytes=11).feed(b"data: 123456" + ending)
    assert_limit_error(info.value)


def test_partial_line_over_limit_raises_before_terminator() -> None:
    decoder = SSEDecoder(max_line_bytes=8)
    for byte in bytewise(b": 345678"):
        assert decoder.feed(byte) == []
    with pytest.raises(RemoteProtocolError, match="max_line_bytes"):
        decoder.feed(b"9")


def test_partial_tail_over_limit_in_one_chunk() -> None:
    with pytest.raises(RemoteProtocolError, match="max_line_bytes"):
        SSEDecoder(max_line_bytes=4).feed(b"\n\nabcde")


def test_comment_lines_are_limited_too() -> None:
    with pytest.raises(RemoteProtocolError):
        SSEDecoder(max_line_bytes=4).feed(b":12345\n")


def test_event_data_at_limit_is_accepted() -> None:
    # Data "ab\ncd" is 5 bytes: lines plus the joining LF.
    data = b"data: ab\ndata: cd\n\n"
    assert decode_every_way(data, max_event_bytes=5) == [SSEEvent("ab\ncd")]


def test_event_data_over_limit() -> None:
    decoder = SSEDecoder(max_event_bytes=5, max_line_bytes=100)
    assert decoder.feed(b"data: ab\ndata: cd\n") == []
    with pytest.raises(RemoteProtocolError, match="max_event_bytes") as info:
        decoder.feed(b"data:\n")
    assert_limit_error(info.value)


def test_event_limit_counts_data_only_and_resets_per_event() -> None:
    data = b"event: long-name\nid: long-id\n: long comment\ndata: abc\n\ndata: def\n\n"
    assert decode_every_way(data, max_event_bytes=3) == [
        SSEEvent("abc", "long-name", "long-id"),
        SSEEvent("def", M, "long-id"),
    ]


def test_decoder_unusable_after_error() -> None:
    decoder = SSEDecoder(max_line_bytes=4)
    with pytest.raises(RemoteProtocolError):
        decoder.feed(b"data: toolong\n")
    for later in (b"data: x\n\n", b"\n", b""):
        with pytest.raises(RemoteProtocolError, match="max_line_bytes") as info:
            decoder.feed(later)
        assert_limit_error(info.value)


def test_events_before_error_in_same_chunk_are_returned_then_next_feed_raises() -> None:
    decoder = SSEDecoder(max_line_bytes=10)
    chunk = b"id: 1\ndata: ok\n\ndata: much too long\n\ndata: after\n\n"
    assert decoder.feed(chunk) == [SSEEvent("ok", M, "1")]
    assert decoder.last_event_id == "1"
    with pytest.raises(RemoteProtocolError, match="max_line_bytes"):
        decoder.feed(b"")


def test_zero_limits() -> None:
    assert decode_every_way(b"data\n\n", max_event_bytes=0, max_line_bytes=4) == [SSEEvent("")]
    assert run([b"\n\n\r\n"], max_line_bytes=0) == ([], False)
    assert run([b"x"], max_line_bytes=0) == ([], True)


@pytest.mark.parametrize("limits", [{"max_event_bytes": -1}, {"max_line_bytes": -1}])
def test_negative_limits_rejected(limits: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        SSEDecoder(**limits)


def test_large_event_in_small_chunks_is_linear_enough() -> None:
    payload = b"x" * 200_000
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    stream = b"data: " + payload + b"\n\n"
    for i in range(0, len(stream), 7):
        events += decoder.feed(stream[i : i + 7])
    assert events == [SSEEvent(payload.decode())]


# --- encoder ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"data": "hello"}, b"data: hello\n\n"),
        ({"data": ""}, b"data:\n\n"),
        ({"data": "", "id": "abc"}, b"id: abc\ndata:\n\n"),
        ({"data": "a\nb\r\nc\rd"}, b"data: a\ndata: b\ndata: c\ndata: d\n\n"),
        ({"data": "a\n"}, b"data: a\ndata:\n\n"),
        ({"data": "\n\n"}, b"data:\ndata:\ndata:\n\n"),
        ({"data": " x"}, b"data:  x\n\n"),
        ({"data": "a\u2028b\x85c"}, "data: a\u2028b\x85c\n\n".encode()),
        (
            {"data": "{}", "event": "message", "id": "s1-7", "retry": 2000},
            b"event: message\nid: s1-7\nretry: 2000\ndata: {}\n\n",
        ),
        ({"id": "5"}, b"id: 5\n\n"),
        ({"id": ""}, b"id:\n\n"),
        ({"retry": 0}, b"retry: 0\n\n"),
        ({"event": ""}, b"event:\n\n"),
        ({}, b"\n"),
        ({"data": "é"}, "data: é\n\n".encode()),
    ],
)
def test_encode_event_bytes(kwargs: dict[str, Any], expected: bytes) -> None:
    assert encode_event(**kwargs) == expected


@pytest.mark.parametrize(
    "kwargs",
    [
        {"id": "a\nb"},
        {"id": "a\rb"},
        {"id": "a\x00b"},
        {"event": "a\nb"},
        {"event": "a\rb"},
        {"retry": -1},
        {"retry": True},
        {"retry": 1.5},
        {"retry": "100"},
        {"data": "\ud800"},
        {"event": "\udfff"},
        {"id": "\ud800"},
    ],
)
def test_encode_event_rejects(kwargs: dict[str, Any]) -> None:
    with pytest.raises(LocalProtocolError):
        encode_event(**kwargs)


def test_event_name_may_contain_nul() -> None:
    encoded = encode_event("x", event="a\x00b")
    assert SSEDecoder().feed(encoded) == [SSEEvent("x", "a\x00b")]


def test_priming_event_decodes_to_empty_data_with_id() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(encode_event("", id="stream-1:0")) == [SSEEvent("", M, "stream-1:0")]
    assert decoder.last_event_id == "stream-1:0"


def test_dataless_event_sets_id_and_retry_only() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(encode_event(id="3", retry=10)) == []
    assert (decoder.last_event_id, decoder.retry) == ("3", 10)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", b":\n"),
        ("ping", b": ping\n"),
        ("a\nb\r\nc", b": a\n: b\n: c\n"),
        ("\n", b":\n:\n"),
    ],
)
def test_encode_comment(text: str, expected: bytes) -> None:
    assert encode_comment(text) == expected


def test_encode_comment_rejects_unencodable() -> None:
    with pytest.raises(LocalProtocolError):
        encode_comment("\ud800")


def test_comments_do_not_disturb_events() -> None:
    stream = (
        encode_comment()
        + b"data: a\n"
        + encode_comment("keep\nalive")
        + b"data: b\n\n"
        + encode_comment("x")
    )
    assert decode_every_way(stream) == [SSEEvent("a\nb")]


# --- properties -------------------------------------------------------------------------

# Text without surrogates (not encodable) and with every kind of line ending.
texts = st.text(
    st.one_of(
        st.characters(exclude_categories=["Cs"]),
        st.sampled_from(["\r", "\n", " ", ":", "\x00", "\ufeff"]),
    )
)
names = texts.filter(lambda s: "\r" not in s and "\n" not in s)
ids = names.filter(lambda s: "\x00" not in s)


def normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@given(
    st.lists(
        st.tuples(
            texts,
            st.none() | names,
            st.none() | ids,
            st.none() | st.integers(min_value=0, max_value=10**18 - 1),
        ),
        max_size=5,
    )
)
def test_round_trip(specs: list[tuple[str, str | None, str | None, int | None]]) -> None:
    stream = b"".join(
        encode_event(data, event=event, id=id, retry=retry) for data, event, id, retry in specs
    )
    expected: list[SSEEvent] = []
    last_id: str | None = None
    for data, event, id, retry in specs:
        last_id = id if id is not None else last_id
        expected.append(SSEEvent(normalise(data), event or M, last_id, retry))
    assert run([stream]) == (expected, False)
    assert run(bytewise(stream)) == (expected, False)


@given(texts)
def test_round_trip_comment_is_invisible(text: str) -> None:
    stream = encode_comment(text) + encode_event("x")
    assert run([stream]) == ([SSEEvent("x")], False)


# Byte strings built from SSE-shaped pieces hit the interesting paths far more often
# than uniform random bytes; both are used.
TOKENS = [
    b"data",
    b"data:",
    b"data: ",
    b"event:",
    b"event: e",
    b"id:",
    b"id: 1",
    b"retry:",
    b"retry: 12",
    b":",
    b" ",
    b"x",
    b"\r",
    b"\n",
    b"\r\n",
    b"\x00",
    BOM,
    b"\xef",
    b"\xbb\xbf",
    b"\xff",
    b"\xe2\x82",
    "é".encode(),
]
sse_bytes = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(TOKENS), max_size=60).map(b"".join),
)


@st.composite
def split(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """Split data at random points into non-empty chunks (an empty chunk means end of stream)."""
    if not data:
        return []
    cuts = draw(st.lists(st.integers(1, max(1, len(data) - 1)), unique=True, max_size=10))
    bounds = [0, *sorted(c for c in cuts if c < len(data)), len(data)]
    return [data[a:b] for a, b in pairwise(bounds)]


limits = st.fixed_dictionaries(
    {},
    optional={
        "max_line_bytes": st.integers(0, 40),
        "max_event_bytes": st.integers(0, 40),
    },
)


@NO_COVER
@settings(max_examples=400)
@given(sse_bytes, limits, st.data())
def test_split_equivalence(data: bytes, lims: dict[str, int], draw: st.DataObject) -> None:
    whole = run([data] if data else [], **lims)
    assert run(bytewise(data), **lims) == whole
    assert run(draw.draw(split(data)), **lims) == whole


@NO_COVER
@settings(max_examples=400)
@given(st.lists(sse_bytes, max_size=8), limits)
def test_arbitrary_bytes_raise_only_remote_protocol_error(
    chunks: list[bytes], lims: dict[str, int]
) -> None:
    decoder = SSEDecoder(**lims)
    for chunk in [*chunks, b""]:
        try:
            events = decoder.feed(chunk)
        except RemoteProtocolError as exc:
            assert_limit_error(exc)
            return
        for event in events:
            assert isinstance(event, SSEEvent)
            assert isinstance(event.data, str) and isinstance(event.event, str)
            assert event.event  # never empty: "" means "message"
            assert event.id is None or "\x00" not in event.id
            assert event.retry is None or event.retry >= 0
