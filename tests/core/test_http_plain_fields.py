"""`plain_fields`, `plain_head` and `_field_text` answer as the regular expressions did.

The direct paths of both HTTP connections read a head's fields with `plain_fields`. Its
common shape (printable ASCII, names of letters, digits and `-`) is read with string
methods, everything else with the two expressions it had before. The property: on any
head, the result is the one the expressions alone give (the same fields, or None).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_core._http import (
    _FIELD,
    _FIELDS,
    _FIELDS_OUT,
    _READ,
    _READ_MAX,
    _WRITTEN,
    plain_fields,
    plain_head,
)
from mcp_core._http_headers import _field_text
from tests.fuzz.harness import scaled


def _by_expressions(text: str, start: int) -> list[tuple[str, str]] | None:
    """What `plain_fields` returned before its string-method path."""
    if _FIELDS.fullmatch(text, start) is None:
        return None
    return [(name.lower(), value) for name, value in _FIELD.findall(text, start)]


# Mostly the common shape, with every kind of character the grammar treats specially.
_NAME = st.text(
    alphabet=st.sampled_from(list("Mcp-NameHostaccept0129_.!~ :\t\x00\x7f\xe9")), max_size=12
)
_VALUE = st.text(
    alphabet=st.sampled_from(list("ab/; =,.-019 \t:\x00\x01\x7f\x80\xe9\xff\r\n")), max_size=16
)
_LINE = st.tuples(_NAME, st.sampled_from([":", ": ", ":  ", ":\t", " :", ""]), _VALUE)
_END = st.sampled_from(["\r\n", "\r\n", "\r\n", "\n", "\r", " \r\n", "\t\r\n", ""])


@settings(max_examples=scaled(400), deadline=None)
@given(st.lists(st.tuples(_LINE, _END), max_size=6), st.sampled_from(["", "GET / HTTP/1.1\r\n"]))
def test_plain_fields_reads_as_its_expressions(
    lines: list[tuple[tuple[str, str, str], str]], prefix: str
) -> None:
    text = prefix + "".join(name + colon + value + end for (name, colon, value), end in lines)
    # Twice: the second time from the lines the first one kept (`_READ`).
    for _ in range(2):
        assert plain_fields(text, len(prefix)) == _by_expressions(text, len(prefix))


def test_the_common_shapes_are_read() -> None:
    head = (
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:8000\r\nAccept: application/json, "
        "text/event-stream\r\nContent-Length:5\r\nMcp-Name:   echo  \r\nX-Empty:\r\n"
        "X-Inner: a  b\r\n"
    )
    start = head.index("\r\n") + 2
    expected = [
        ("host", "127.0.0.1:8000"),
        ("accept", "application/json, text/event-stream"),
        ("content-length", "5"),
        ("mcp-name", "echo"),
        ("x-empty", ""),
        ("x-inner", "a  b"),
    ]
    assert plain_fields(head, start) == expected == _by_expressions(head, start)
    assert plain_fields("", 0) == [] == _by_expressions("", 0)
    # Off the common shape: a tab inside a value (taken), obs-text (taken), a space
    # before the colon and a bare LF (refused), each as the expressions read them.
    for odd in ("a:\tb\tc\r\n", "a: \xe9\r\n", "a : b\r\n", "a: b\nc: d\r\n", "a_b: c\r\n"):
        assert plain_fields(odd, 0) == _by_expressions(odd, 0)


_VISIBLE = re.compile(r"[\x20-\x7e]*")


def test_field_text_is_visible_ascii_and_space() -> None:
    """The mirrored-header checks read values with `_field_text` (string methods) where
    they used the expression `[\\x20-\\x7e]*`: the same answer for every character."""
    for code in range(0x3000):
        char = chr(code)
        assert _field_text(char) is (_VISIBLE.fullmatch(char) is not None), hex(code)
    assert _field_text("")


@given(st.text(alphabet=st.characters(max_codepoint=0x2100), max_size=12))
def test_field_text_agrees_on_any_text(value: str) -> None:
    assert _field_text(value) is (_VISIBLE.fullmatch(value) is not None)


def _head_by_expression(first_line: bytes, headers: list[tuple[str, str]]) -> bytes | None:
    """What `plain_head` returned before it kept the fields it wrote."""
    try:
        fields = "".join([f"{name}: {value}\r\n" for name, value in headers]).encode("ascii")
    except UnicodeEncodeError:
        return None
    if _FIELDS_OUT.fullmatch(fields) is None:
        return None
    return first_line + fields + b"\r\n"


_OUT_NAME = st.text(alphabet=st.sampled_from(list("Mcp-Nam0_ :\x00\xe9")), max_size=6)
_OUT_VALUE = st.text(alphabet=st.sampled_from(list("ab/; =1 \t:\x00\x01\x7f\xe9\r\n")), max_size=10)


@settings(max_examples=scaled(400), deadline=None)
@given(st.lists(st.tuples(_OUT_NAME, _OUT_VALUE), max_size=5))
def test_plain_head_writes_as_its_expression(headers: list[tuple[str, str]]) -> None:
    """The same bytes, or None, as the whole-head expression, twice (the second time
    from the fields kept by the first), whatever the fields: a value with a CRLF
    inside included."""
    for _ in range(2):
        assert plain_head(b"HTTP/1.1 200 OK\r\n", headers) == _head_by_expression(
            b"HTTP/1.1 200 OK\r\n", headers
        )


def test_plain_fields_keeps_only_short_plain_lines() -> None:
    long_value = "x" * 300
    head = f"host: a\r\nx-long: {long_value}\r\nx-tab: a\tb\r\n"
    expected = [("host", "a"), ("x-long", long_value), ("x-tab", "a\tb")]
    for _ in range(2):
        assert plain_fields(head, 0) == expected == _by_expressions(head, 0)
    # The plain line is kept; the long one is not, nor the one off the plain shape (the
    # expressions read the whole head then, and keep nothing).
    assert _READ.get("host: a") == ("host", "a")
    assert f"x-long: {long_value}" not in _READ and "x-tab: a\tb" not in _READ
    # A line the string methods refuse is never kept, so the next head with it is
    # judged again (here refused, as the expressions refuse it).
    for _ in range(2):
        assert plain_fields("a b: c\r\n", 0) is None
    assert "a b: c" not in _READ


def test_the_lines_kept_are_bounded() -> None:
    """A peer sending a new line with every head evicts the cache, never grows it; and a
    head read after the cache was cleared reads the same."""
    for number in range(_READ_MAX * 2 + 3):
        head = f"host: a\r\ncontent-length: {number}\r\nhost: b\r\n"
        fields = plain_fields(head, 0)
        assert fields == [("host", "a"), ("content-length", str(number)), ("host", "b")]
        assert fields is not None and fields.by_name() == {
            "host": ["a", "b"],
            "content-length": [str(number)],
        }
        assert len(_READ) <= _READ_MAX


def test_plain_head_keeps_only_short_plain_fields() -> None:
    long_value = "x" * 300
    head = plain_head(b"GET / HTTP/1.1\r\n", [("host", "a"), ("x-long", long_value)])
    assert head == b"GET / HTTP/1.1\r\nhost: a\r\nx-long: " + long_value.encode() + b"\r\n\r\n"
    assert ("host", "a") in _WRITTEN and ("x-long", long_value) not in _WRITTEN
    injected = [("x-a", "1\r\nx-b: 2")]  # two fields' bytes: judged whole, as before
    assert plain_head(b"GET / HTTP/1.1\r\n", injected) == _head_by_expression(
        b"GET / HTTP/1.1\r\n", injected
    )
    assert ("x-a", "1\r\nx-b: 2") not in _WRITTEN
