"""The send lanes (`ClientConnection.send_request`, `ServerConnection.send_result`) against
the general path they shortcut: the same calls on two connections in the same state, one
inside `general_path_only()`, must return or raise alike, put the same bytes and routing
out, and leave the same tables (entries, ids, deadlines, memories of ended ids).

The calls are well-formed ones (every client request of every revision, with params
from `mcp_core.testing.strategies`), each single-change mutation of them
(`mcp_core.testing.mutations`), and the cases a lane must hand over untouched: no
capability, a full buffer or in-flight table, progress asked, the application's `_meta`,
a task, a model, params the fast encoder refuses, a result for an ended request ..."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import (
    ClientConfig,
    ClientConnection,
    Limits,
    LocalProtocolError,
    RequestReceived,
    ServerConfig,
    ServerConnection,
)
from mcp_core.testing import ConnectionPair, default_server_config, general_path_only
from mcp_core.testing.mutations import mutations
from mcp_core.testing.strategies import valid_params
from mcp_core.types import TextContent

from .engine_support import LEGACY, MODERN

REVISIONS = (*LEGACY, MODERN)

Step = Callable[[ClientConnection, ServerConnection], Any]


def _pair(revision: str, server: ServerConfig | None, limits: Limits | None) -> ConnectionPair:
    client = ClientConfig(mode=revision, capabilities={"sampling": {}, "elicitation": {}})
    if limits is not None:
        client = ClientConfig(mode=revision, limits=limits)
    pair = ConnectionPair(server or default_server_config(), client)
    pair.connect()
    return pair


def _state(conn: ClientConnection | ServerConnection) -> dict[str, Any]:
    """What a send may change, as plain values."""

    def entries(table: dict[Any, Any]) -> dict[Any, Any]:
        return {
            rid: {name: getattr(entry, name) for name in type(entry).__slots__}
            for rid, entry in table.items()
        }

    return {
        "state": conn.state,
        "next_id": conn._next_id,
        "outbound": entries(conn._outbound),
        "inbound": entries(conn._inbound),
        "tokens": dict(conn._progress_tokens),
        "deadlines": None if conn._deadlines is None else sorted(conn._deadlines.heap),
        "epoch": conn.deadline_epoch,
        "ended_in": sorted(map(str, conn._ended_inbound._ring or [])),
        "ended_out": sorted(map(str, conn._ended_outbound._ring or [])),
        "bytes": conn._outgoing_bytes,
        "pending": conn.output_pending,
        # (the client's capabilities found granted: the lane and `_prepare_request` alike)
        "granted": getattr(conn, "_granted", None),
    }


def _outcome(step: Step, pair: ConnectionPair) -> Any:
    try:
        return ("returned", step(pair.client, pair.server))
    except LocalProtocolError as exc:
        return ("raised", type(exc), str(exc))


def _drained(conn: ClientConnection | ServerConnection, framed: bool) -> Any:
    if not framed:
        return conn.data_to_send()
    return [
        (m.payload, m.kind, m.method, m.request_id, m.related_request_id, m.params)
        for m in conn.messages_to_send()
    ]


@contextlib.contextmanager
def _lanes(on: bool) -> Iterator[None]:
    if on:
        yield
    else:
        with general_path_only():
            yield


def assert_alike(
    revision: str,
    steps: list[Step],
    *,
    server: ServerConfig | None = None,
    limits: Limits | None = None,
    framed: bool = False,
    setup: Step | None = None,
) -> list[Any]:
    """Run `steps` on a fresh pair with the lanes and on one without, comparing after each."""
    seen: list[Any] = []
    runs = []
    for on in (True, False):
        with _lanes(on):
            pair = _pair(revision, server, limits)
            if setup is not None:
                setup(pair.client, pair.server)
                _drained(pair.client, framed)
                _drained(pair.server, framed)
            run = []
            for step in steps:
                outcome = _outcome(step, pair)
                run.append(
                    (
                        outcome,
                        _state(pair.client),
                        _state(pair.server),
                        _drained(pair.client, framed),
                        _drained(pair.server, framed),
                    )
                )
                pair.client.check_invariants()
                pair.server.check_invariants()
            runs.append(run)
    assert runs[0] == runs[1]
    seen.extend(r[0] for r in runs[0])
    return seen


def send(method: str, params: Any = None, **kw: Any) -> Step:
    return lambda client, server: client.send_request(method, params, **kw)


# ---------------------------------------------------------------- send_request


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("framed", [False, True])
def test_request_lane_matches_the_general_path(revision: str, framed: bool) -> None:
    args = {"text": "hello", "n": [1, 2.5, None, {"deep": True}]}
    outcomes = assert_alike(
        revision,
        [
            send("tools/call", {"name": "echo", "arguments": args}),
            send("tools/call", {"name": "echo"}, deadline=5.0),
            send("tools/call", {"name": "echo"}, deadline=3.0, related_request_id="r"),
            send("tools/list", {}),
            send("tools/list"),  # None: the general path
            send("ping", {}),
            send("resources/read", {"uri": "file:///a"}),
            send("tools/call", {"name": "echo", "_meta": {"k": 1}}),
            send("tools/call", {"name": "echo", "_meta": {}}),
            send("tools/call", {"name": "echo"}, progress=True),
            send("tools/call", {"name": "echo", "task": {"ttl": 5}}),
            send("tools/call", {"name": "\ud800"}),  # the encoder's fallback
            send("tools/call", {"name": float("inf")}),
            send("nope/nope", {}),
            send("sampling/createMessage", {}),  # a server's request
            send("tools/call", [1]),
            send("tools/call", "x"),
        ],
        framed=framed,
    )
    assert outcomes[0][0] == "returned"


@pytest.mark.parametrize("revision", REVISIONS)
def test_request_lane_hands_over_what_it_cannot_take(revision: str) -> None:
    # No tools offered: the capability check refuses, through the general path.
    bare = ServerConfig(name="bare", capabilities={"prompts": {}})
    outcomes = assert_alike(
        revision, [send("tools/call", {"name": "echo"}), send("prompts/list", {})], server=bare
    )
    # (A pinned 2026-07-28 client skipped discovery: it knows no capabilities to check.)
    assert outcomes[0][0] == ("returned" if revision == MODERN else "raised")
    assert outcomes[1][0] == "returned"
    # A full in-flight table, then a full buffer.
    few = Limits(max_outbound_in_flight=2)
    outcomes = assert_alike(revision, [send("ping", {})] * 3, limits=few)
    assert outcomes[-1][0] == "raised"
    small = Limits(max_message_bytes=4096, max_buffered_output_bytes=400)
    big = {"name": "echo", "arguments": {"text": "x" * 150}}
    outcomes = assert_alike(
        revision,
        [
            lambda c, s: [c.send_request("tools/call", big), c.send_request("tools/call", big)],
        ],
        limits=small,
    )
    assert outcomes[0][0] == "raised"


@pytest.mark.parametrize("revision", [LEGACY[-1], MODERN])
def test_request_lane_after_the_end(revision: str) -> None:
    outcomes = assert_alike(
        revision, [lambda c, s: c.close(), send("ping", {}), send("tools/call", {"name": "x"})]
    )
    assert outcomes[1][0] == "raised"


@pytest.mark.parametrize("revision", [LEGACY[-1], MODERN])
def test_request_lane_matches_on_mutated_params(revision: str) -> None:
    base = {"name": "echo", "arguments": {"text": "hi", "list": [1, 2]}}
    steps = [send("tools/call", m.message) for m in mutations(base, insert={"": ["_meta", "task"]})]
    assert len(steps) > 50
    # (A `_meta` that is no object is refused with LocalProtocolError, both ways.)
    assert_alike(revision, steps, limits=Limits(max_outbound_in_flight=1000))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_request_lane_matches_on_generated_params(data: st.DataObject) -> None:
    revision = data.draw(st.sampled_from(REVISIONS))
    methods = ["tools/call", "prompts/get", "resources/read", "tools/list"]
    method = data.draw(st.sampled_from(methods if revision == MODERN else [*methods, "ping"]))
    params = data.draw(valid_params(revision, method, "client"))
    assert_alike(revision, [send(method, params), send(method, params, deadline=1.0)])


# ---------------------------------------------------------------- send_result


def _calls(n: int, *, meta: dict[str, Any] | None = None, method: str = "tools/call") -> Step:
    def step(client: ClientConnection, server: ServerConnection) -> Any:
        params: dict[str, Any] = {"name": "echo", "arguments": {"text": "hi"}}
        if meta is not None:
            params["_meta"] = meta
        for _ in range(n):
            client.send_request(method, params if method == "tools/call" else {})
        events = server.receive_data(client.data_to_send())
        # (kept on the connection for `answer`: the handshake took some ids first)
        server.test_ids = [e.request_id for e in events if isinstance(e, RequestReceived)]  # type: ignore[attr-defined]
        assert len(server.test_ids) == n  # type: ignore[attr-defined]

    return step


def answer(i: int, result: Any) -> Step:
    """Answer the `i`th request of the setup's (`_calls`); 99 names none."""
    return lambda client, server: server.send_result(
        server.test_ids[i] if i < 99 else "never",  # type: ignore[attr-defined]
        result,
    )


TEXT = {"content": [{"type": "text", "text": "hi"}], "structuredContent": {"result": "hi"}}


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("framed", [False, True])
def test_result_lane_matches_the_general_path(revision: str, framed: bool) -> None:
    outcomes = assert_alike(
        revision,
        [
            answer(0, TEXT),  # ids 0..9 wait: see the setup
            answer(1, {}),
            answer(2, {"content": [], "_meta": {"k": "v"}}),
            answer(3, {"content": [], "resultType": "complete"}),
            answer(4, {"content": [], "resultType": "input_required"}),
            answer(5, {"content": [{"type": "text", "text": "\ud800"}]}),
            answer(6, {"content": [], "isError": True, "x": float("nan")}),
            answer(7, {"content": [TextContent(type="text", text="m")]}),
            answer(8, [1]),
            answer(0, TEXT),  # answered already: False
            answer(99, TEXT),  # never asked: raises
            answer(9, None),
        ],
        framed=framed,
        setup=_calls(10),
    )
    assert outcomes[0] == ("returned", True)
    assert outcomes[9] == ("returned", False)
    assert outcomes[10][0] == "raised"


@pytest.mark.parametrize("revision", REVISIONS)
def test_result_lane_for_cacheable_and_listed_methods(revision: str) -> None:
    assert_alike(
        revision,
        [answer(0, {"tools": []}), answer(1, {"tools": [], "ttlMs": 5})],
        setup=_calls(2, method="tools/list"),
    )


@pytest.mark.parametrize("revision", REVISIONS)
def test_result_lane_with_a_full_buffer_and_after_the_end(revision: str) -> None:
    big = {"content": [{"type": "text", "text": "x" * 3000}]}

    def fill(client: ClientConnection, server: ServerConnection) -> Any:
        return [server.send_result(0, big), server.send_result(1, big)]

    outcomes = assert_alike(
        revision,
        [fill, answer(2, TEXT), lambda c, s: s.close(), answer(1, TEXT)],
        server=default_server_config(
            limits=Limits(max_message_bytes=4096, max_buffered_output_bytes=4000)
        ),
        setup=_calls(3),
    )
    assert outcomes[0][0] == "raised"
    assert outcomes[-1] == ("returned", False)


@pytest.mark.parametrize("revision", [LEGACY[-1], MODERN])
def test_result_lane_matches_on_mutated_results(revision: str) -> None:
    results = list(mutations(TEXT, insert={"": ["_meta", "resultType", "task"]}))
    assert len(results) > 50
    steps = [answer(i, m.message) for i, m in enumerate(results)]
    assert_alike(
        revision,
        steps,
        server=default_server_config(limits=Limits(max_inbound_in_flight=1000)),
        setup=_calls(len(results)),
    )


# ---------------------------------------------------------------- send_text_result


def answer_text(i: int, text: Any, structured: bool = False) -> Step:
    """`send_text_result` for the `i`th request of the setup's (`_calls`); 99 names none."""
    return lambda client, server: server.send_text_result(
        server.test_ids[i] if i < 99 else "never",  # type: ignore[attr-defined]
        text,
        structured=structured,
    )


def text_result(text: Any, structured: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if structured:
        result["structuredContent"] = {"result": text}
    return result


TEXTS = ["hi", "", "h\u00e9llo \u2713 \U0001f600", '\x00\n\t"\\/</script>', "\ud800", "x" * 5000]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("framed", [False, True])
def test_text_result_matches_the_general_path(revision: str, framed: bool) -> None:
    """`send_text_result` against the general path's `send_result` of the same dict
    (under `general_path_only`, the verb hands that dict to it): every text, with and
    without its structured form, then one answered already, one never asked, one that
    is not a string."""
    steps = [
        answer_text(i * 2 + k, text, structured=bool(k))
        for i, text in enumerate(TEXTS)
        for k in (0, 1)
    ]
    n = len(steps)
    outcomes = assert_alike(
        revision,
        [*steps, answer_text(0, "again"), answer_text(99, "x"), answer_text(n, b"bytes")],
        framed=framed,
        server=default_server_config(limits=Limits(max_inbound_in_flight=100)),
        setup=_calls(n + 1),
    )
    assert outcomes[:n] == [("returned", True)] * n
    assert outcomes[n] == ("returned", False)
    assert outcomes[n + 1][0] == "raised"


@pytest.mark.parametrize("revision", REVISIONS)
def test_text_result_is_the_bytes_of_its_dict(revision: str) -> None:
    """With the lanes on both times, `send_text_result` queues what `send_result` of
    the same dict queues, and leaves the same state."""
    runs = []
    for verb in ("text", "dict"):
        pair = _pair(
            revision, default_server_config(limits=Limits(max_inbound_in_flight=100)), None
        )
        _calls(2 * len(TEXTS))(pair.client, pair.server)
        ids = pair.server.test_ids  # type: ignore[attr-defined]
        for i, text in enumerate(TEXTS):
            for k in (0, 1):
                rid = ids[2 * i + k]
                if verb == "text":
                    assert pair.server.send_text_result(rid, text, structured=bool(k))
                else:
                    assert pair.server.send_result(rid, text_result(text, bool(k)))
        runs.append((_state(pair.server), pair.server.data_to_send()))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("revision", REVISIONS)
def test_text_result_with_a_full_buffer_and_after_the_end(revision: str) -> None:
    outcomes = assert_alike(
        revision,
        [
            lambda c, s: [s.send_text_result(0, "x" * 3000), s.send_text_result(1, "x" * 3000)],
            answer_text(2, "hi", structured=True),
            lambda c, s: s.close(),
            answer_text(2, "hi"),
        ],
        server=default_server_config(
            limits=Limits(max_message_bytes=4096, max_buffered_output_bytes=4000)
        ),
        setup=_calls(3),
    )
    assert outcomes[0][0] == "raised"
    assert outcomes[-1] == ("returned", False)


@pytest.mark.parametrize("revision", [LEGACY[-1], MODERN])
def test_text_result_for_a_listed_method(revision: str) -> None:
    """A method `send_result`'s lane leaves to the general path (a cacheable one in
    2026-07-28) gets the same answer either way."""
    assert_alike(
        revision,
        [answer_text(0, "t"), answer_text(1, "t", structured=True)],
        setup=_calls(2, method="tools/list"),
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    request_id=st.one_of(st.integers(), st.integers(min_value=2**63), st.text()),
    text=st.text(),
    structured=st.booleans(),
    modern=st.booleans(),
)
def test_the_text_encoder_writes_what_to_json_writes(
    request_id: Any, text: str, structured: bool, modern: bool
) -> None:
    """`jr.encode_text_result` is `encode_result_ending` (or `encode_result`, for no
    tail) of the dict it stands for, byte for byte, or None where that one needs its
    fallback."""
    from mcp_core import _jsonrpc as jr

    result = text_result(text, structured)
    tail = b',"resultType":"complete","_meta":{"k":{"name":"s","version":"1"}}}}'
    if modern:
        expected = jr.encode_result_ending(request_id, result, tail)
        got = jr.encode_text_result(request_id, text, structured, tail)
    else:
        expected = jr.encode_result(request_id, result)
        got = jr.encode_text_result(request_id, text, structured, b"}}")
    if got is None:
        assert expected is None or not modern  # (`encode_result` has its own fallback)
        with pytest.raises(UnicodeEncodeError):
            text.encode("utf-8") if isinstance(request_id, int) else (text + request_id).encode()
    else:
        assert got == expected


# ---------------------------------------------------------------- the lanes are taken


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_plain_sends_take_the_lanes(revision: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparisons above mean something only if the lanes run: with the general
    verbs broken, the common request and result still go out. (The lanes on, even
    under `--general-path`: this is about the lanes themselves.)"""
    from mcp_core._base import _Connection

    monkeypatch.setattr(_Connection, "_lanes", True)
    pair = _pair(revision, None, None)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(_Connection, "send_request", broken)
    monkeypatch.setattr(_Connection, "send_result", broken)
    rid = pair.client.send_request("tools/call", {"name": "echo"}, deadline=9.0)
    (call,) = pair.server.receive_data(pair.client.data_to_send())
    assert isinstance(call, RequestReceived)
    assert pair.server.send_result(call.request_id, TEXT)
    (response,) = pair.client.receive_data(pair.server.data_to_send())
    assert response.request_id == rid  # type: ignore[attr-defined]
    with pytest.raises(AssertionError, match="general path"):
        pair.client.send_request("tools/call", {"name": "echo"}, progress=True)


@pytest.mark.parametrize("revision", LEGACY)
def test_a_granted_capability_is_remembered_and_a_refused_one_is_not(revision: str) -> None:
    """The send lane asks `has_capability` once per capability: what it found granted
    is kept (`_granted`) and checked against the server's capabilities by
    `check_invariants`; a refused one is asked again every time."""
    bare = ServerConfig(name="bare", capabilities={"tools": {}})
    for on in (True, False):
        with _lanes(on):
            pair = _pair(revision, bare, None)
            client = pair.client
            assert client._granted == ()
            client.send_request("tools/call", {"name": "echo"})
            client.send_request("tools/call", {"name": "echo"})
            assert client._granted == ("tools",)
            for _ in range(2):
                with pytest.raises(LocalProtocolError, match="prompts"):
                    client.send_request("prompts/list", {})
            assert client._granted == ("tools",)
            client.check_invariants()
            client._granted += ("prompts",)  # a grant the server never made
            with pytest.raises(AssertionError):
                client.check_invariants()


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_text_result_takes_its_lane(revision: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `send_result` broken, a text result still goes out (its lane ran), and
    one the lane leaves (not a string) reaches the broken verb."""
    from mcp_core._base import _Connection

    monkeypatch.setattr(_Connection, "_lanes", True)
    pair = _pair(revision, None, None)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(ServerConnection, "send_result", broken)
    for structured in (False, True):
        pair.client.send_request("tools/call", {"name": "echo"})
        (call,) = pair.server.receive_data(pair.client.data_to_send())
        assert pair.server.send_text_result(call.request_id, "hi", structured=structured)
        (response,) = pair.client.receive_data(pair.server.data_to_send())
        assert response.result.content[0].text == "hi"  # type: ignore[attr-defined]
    pair.client.send_request("tools/call", {"name": "echo"})
    (call,) = pair.server.receive_data(pair.client.data_to_send())
    with pytest.raises(AssertionError, match="general path"):
        pair.server.send_text_result(call.request_id, 5)  # type: ignore[arg-type]


# ------------------------------------------------- a read of one whole line


def _read_lines(revision: str) -> list[bytes]:
    """Lines a server may read: what a client sends, and each kind of line the
    whole-line read must hand on to a step of its own (a response, a batch, a bare
    value, bad JSON, every limit the inline parse checks)."""
    pair = _pair(revision, None, None)
    client = pair.client
    client.send_request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    client.send_request("tools/list", {})
    client.send_request("resources/read", {"uri": "file:///a"})
    sent = client.data_to_send().splitlines()
    ok = sent[0]
    return [
        *sent,
        ok.replace(b'"hi"', b'"' + b"x" * 300 + b'"'),  # over the string limit
        ok.replace(b'"hi"', b"1" * 40),  # over the integer limit
        ok.replace(b'"hi"', b"[" * 20 + b"]" * 20),  # over the depth
        ok.replace(b'"hi"', b"[" * 5 + b"]" * 5),
        ok.replace(b'"hi"', b"NaN"),
        ok.replace(b'"hi"', b"1e999"),
        ok.replace(b'"hi"', b'"\xff"'),  # not UTF-8
        ok.replace(b"tools/call", b"tools/nope"),
        ok[:-1],  # cut short
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}',
        b'{"jsonrpc":"2.0","id":999,"result":{}}',
        b'{"jsonrpc":"2.0","id":999,"error":{"code":1,"message":"x"}}',
        b"[" + ok + b"]",
        b"[]",
        b"1",
        b'"x"',
        b"{",
        b"x" * 600,  # over the message limit
    ]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_a_whole_line_read_matches_receive_message_and_the_general_path(
    revision: str, kind: type
) -> None:
    """`receive_data`'s copy of `receive_message`'s lane (a read of one whole line):
    each line read as a whole read, as `receive_message` of the line, and as a whole
    read with the lanes off gives the same events, bytes out and tables, one line
    after the other on the same connections (a line in flight stays in flight)."""
    limits = Limits(
        max_message_bytes=500, max_depth=12, max_integer_digits=30, max_string_length=200
    )
    server = default_server_config(limits=limits)
    lines = _read_lines(revision)
    runs = []
    for way in ("read", "message", "general"):
        with _lanes(way != "general"):
            pair = _pair(revision, server, None)
            conn = pair.server
            run = []
            for line in lines:
                if way == "message":
                    events = conn.receive_message(kind(line))
                else:
                    events = conn.receive_data(kind(line + b"\n"))
                run.append((events, conn.data_to_send(), _state(conn)))
                conn.check_invariants()
            runs.append(run)
    assert runs[0] == runs[2]
    assert runs[0] == runs[1]
