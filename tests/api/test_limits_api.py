"""Every limit can be set from the API and from the command line (docs/limits.md).

The command line's `--max-message-bytes` and `--limit NAME=VALUE` turn into the
three limit objects; `MCPServer.limits` rebuilds the config it feeds; `Client`
takes `limits`. In process (the direct link) a refused message behaves as on any
other transport: the call fails alone, by id, with the limit named.
"""

from __future__ import annotations

import argparse

import pytest

from mcp_adapters import LimitExceededError
from mcp_adapters._cli_limits import add_limit_options, limits_from_args
from mcp_adapters.client import Client
from mcp_adapters.server import MCPServer
from mcp_core import Limits, MCPError
from mcp_core.http import HTTPLimits, InMemoryEventStore
from mcp_core.websocket import WebSocketLimits

pytestmark = pytest.mark.anyio


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_limit_options(parser)
    return parser.parse_args(argv)


def test_no_option_keeps_the_server_limits_and_leaves_the_transports_default() -> None:
    own = Limits(max_depth=50)
    assert limits_from_args(parse(), own) == (own, {})
    assert limits_from_args(parse(), None) == (Limits(), {})


def test_the_options_fill_the_limit_objects() -> None:
    args = parse(
        "--max-message-bytes",
        "100000000",
        "--limit",
        "Limits.max_depth=64",
        "--limit",
        "Limits.max_string_length=none",
        "--limit",
        "HTTPLimits.max_body_bytes=5000",
        "--limit",
        "HTTPLimits.header_timeout=2.5",
        "--limit",
        "HTTPLimits.sse_after=none",
        "--limit",
        "WebSocketLimits.max_fragments=10",
        "--limit",
        "InMemoryEventStore.max_events_per_stream=7",
    )
    limits, run = limits_from_args(args, Limits(max_integer_digits=20))
    assert limits == Limits(max_message_bytes=100_000_000, max_depth=64, max_integer_digits=20)
    assert set(run) == {"http_limits", "ws_limits", "event_store"}
    assert run["http_limits"] == HTTPLimits(max_body_bytes=5000, header_timeout=2.5, sse_after=None)
    assert run["ws_limits"] == WebSocketLimits(max_fragments=10)
    store = run["event_store"]
    assert isinstance(store, InMemoryEventStore) and store._max_events == 7


@pytest.mark.parametrize(
    ("option", "complaint"),
    [
        ("max_depth=3", "expected NAME=VALUE with NAME one of Limits.<field>"),
        ("Limits.max_depth", "expected NAME=VALUE"),
        ("Nope.max_depth=3", "expected NAME=VALUE"),
        ("Limits.max_width=3", "Limits has no limit 'max_width' (it has: max_message_bytes,"),
        ("Limits.max_depth=deep", "Limits.max_depth: 'deep' is not a number"),
        ("Limits.max_depth=none", "Limits.max_depth cannot be none"),
        ("Limits.max_depth=500", "invalid limit: max_depth must be between 1 and 200"),
        ("HTTPLimits.max_body_bytes=0", "invalid limit: max_body_bytes must be positive"),
        ("InMemoryEventStore.retry=1", "InMemoryEventStore has no limit 'retry'"),
        ("InMemoryEventStore.max_events_per_stream=0", "invalid limit: "),
    ],
)
def test_a_bad_limit_option_is_explained(option: str, complaint: str) -> None:
    with pytest.raises(ValueError) as refused:
        limits_from_args(parse("--limit", option), None)
    assert complaint in str(refused.value)


def test_setting_a_server_s_limits_rebuilds_its_config() -> None:
    server = MCPServer("limits")
    assert server.config.limits == Limits()
    server.limits = Limits(max_message_bytes=1234)
    assert server.config.limits.max_message_bytes == 1234
    assert server.limits == Limits(max_message_bytes=1234)


def test_the_client_takes_limits_for_its_config() -> None:
    assert Client("http://127.0.0.1:1/mcp").config.limits == Limits()
    limits = Limits(max_message_bytes=10**8)
    assert Client("http://127.0.0.1:1/mcp", limits=limits).config.limits is limits


server = MCPServer("in-process", limits=Limits(max_message_bytes=2000))


@server.tool()
def sized(size: int) -> str:
    return "x" * size


async def test_in_process_a_refused_message_fails_its_call_alone() -> None:
    async with Client(server, limits=Limits(max_message_bytes=5000)) as client:
        with pytest.raises(MCPError) as too_big_argument:
            await client.call_tool("sized", {"size": 1, "pad": "p" * 3000})
        assert "exceeds the limit of 2000 bytes (Limits.max_message_bytes)" in str(
            too_big_argument.value
        )
        with pytest.raises(LimitExceededError) as too_big_result:
            await client.call_tool("sized", {"size": 6000})
        assert "exceeds the limit of 5000 bytes (Limits.max_message_bytes)" in str(
            too_big_result.value
        )
        answer = await client.call_tool("sized", {"size": 3})
    assert answer.content[0].text == "xxx"
