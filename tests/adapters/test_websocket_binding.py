"""MCP over a real loopback WebSocket, on asyncio and trio, both generations."""

from __future__ import annotations

import contextlib
import functools

import anyio
import pytest

from examples.seeds.bistro_form_server import mcp as bistro
from mcp_adapters import Client
from mcp_adapters.websocket import serve_websocket
from mcp_core.types import ElicitResult

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


async def accept_another_date(context: object, params: object) -> ElicitResult:
    return ElicitResult(action="accept", content={"accept_alternative": True, "date": "2025-12-27"})


@pytest.mark.parametrize("mode", ["legacy", "auto", "2026-07-28"])
async def test_elicitation_round_trip_over_websocket(mode: str) -> None:
    async with anyio.create_task_group() as group:
        port = await group.start(functools.partial(serve_websocket, bistro, port=0))
        async with Client(
            f"ws://127.0.0.1:{port}/mcp", mode=mode, elicitation_callback=accept_another_date
        ) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            result = await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
            tools = await client.list_tools()
        group.cancel_scope.cancel()
    assert result.content[0].text == "Booked a table for 2 on 2025-12-27."
    assert [t.name for t in tools.tools] == ["book_table"]


async def test_a_binary_frame_closes_with_1003() -> None:
    async with anyio.create_task_group() as group:
        port = await group.start(functools.partial(serve_websocket, bistro, port=0))
        async with await anyio.connect_tcp("127.0.0.1", port) as sock:
            await sock.send(
                b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\n\r\n" % port
            )
            head = b""
            while b"\r\n\r\n" not in head:
                head += await sock.receive()
            assert head.startswith(b"HTTP/1.1 101")
            # A masked binary frame (opcode 2) carrying b"hi".
            mask = b"\x01\x02\x03\x04"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(b"hi"))
            await sock.send(b"\x82\x82" + mask + payload)
            frame = head.split(b"\r\n\r\n", 1)[1]
            while len(frame) < 4:
                frame += await sock.receive()
        group.cancel_scope.cancel()
    assert frame[0] == 0x88  # a close frame
    assert int.from_bytes(frame[2:4], "big") == 1003


async def test_a_foreign_origin_is_refused_with_403() -> None:
    async with anyio.create_task_group() as group:
        port = await group.start(functools.partial(serve_websocket, bistro, port=0))
        async with await anyio.connect_tcp("127.0.0.1", port) as sock:
            await sock.send(
                b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: http://evil.example\r\n"
                b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                % port
            )
            reply = await sock.receive()
        group.cancel_scope.cancel()
    assert reply.startswith(b"HTTP/1.1 403")


async def test_a_20k_upgrade_head_in_one_write_is_431_and_closes() -> None:
    async with anyio.create_task_group() as group:
        port = await group.start(functools.partial(serve_websocket, bistro, port=0))
        async with await anyio.connect_tcp("127.0.0.1", port) as sock:
            await sock.send(
                b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\nX-Pad: %s\r\n\r\n" % (port, b"a" * 20 * 1024)
            )
            reply = b""
            with anyio.fail_after(5), contextlib.suppress(anyio.EndOfStream):
                while True:  # until the server closes
                    reply += await sock.receive()
        group.cancel_scope.cancel()
    assert reply.startswith(b"HTTP/1.1 431 ")
    assert b"\r\nconnection: close\r\n" in reply.lower()
