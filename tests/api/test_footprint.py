"""What importing `MCPServer` pulls in, and what an idle session keeps.

Why: the import is paid by every server process (each stdio server a client
starts, each test that starts one), and an idle session's size is multiplied by
the sessions a server holds (docs/performance.md, "Memory per idle session and
import time"). These tests pin the structural choices behind both, not a number
of bytes or milliseconds, which vary with the machine and the Python.
"""

from __future__ import annotations

import gc
import inspect
import json
import subprocess
import sys

import pytest

from mcp_adapters import Client
from mcp_adapters._driver import DriverCore
from mcp_adapters.server import MCPServer
from mcp_adapters.transports.link import LinkDriver
from mcp_core import META_LOG_LEVEL, ClientConnection, Limits, ServerConnection
from mcp_core._requests import EMPTY, NO_IDS, NO_ITEMS, NO_QUEUED
from mcp_core._tasks import NO_TASKS
from mcp_core.testing import default_server_config

from .conftest import MODES


def _echo_server() -> MCPServer:
    """The server every pair here talks to: one plain tool, so a call has an answer."""
    server = MCPServer("footprint")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


# Needed only once a server speaks HTTP (or a client connects over it), once a
# request is validated, or once a tool runs as a task: none of it belongs in the
# import of `MCPServer`.
NOT_AT_IMPORT = (
    "mcp_adapters.store",
    "mcp_core.http",
    "mcp_core._http_client",
    "mcp_core._http_server",
    "mcp_core._oauth",
    "mcp_core.types",
    "h11",
)

PROBE = """
import json, sys
from mcp_adapters.server import MCPServer
server = MCPServer("probe")
print(json.dumps(sorted(m for m in {names!r} if m in sys.modules)))
"""


def test_importing_mcpserver_leaves_the_http_stack_and_the_wire_models_unloaded() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(names=list(NOT_AT_IMPORT))],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(done.stdout) == []


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_an_idle_pair_keeps_the_engine_state_in_slots(anyio_backend: str, mode: str) -> None:
    """Every attribute the engine sets lives in a slot: a connection's instance dict is
    made only for what a transport hangs on it (MCPServer's wake function); and what a
    link pair never uses is never made."""
    server = _echo_server()
    async with Client(server, mode=mode) as client:
        assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
        client_connection = client._session.connection
        server_connection = client._context._server_session.connection
        assert isinstance(client_connection, ClientConnection)
        assert isinstance(server_connection, ServerConnection)
        assert vars(client_connection) == {}
        assert set(vars(server_connection)) <= {"_mcp_server_wake"}
        # The link hands over whole messages, so neither end builds the newline framer.
        assert client_connection._lines is None and server_connection._lines is None
        # No call here has a deadline (a server asking nothing, a call without a
        # timeout), so neither end has made a deadline heap.
        assert client_connection._deadlines is None and server_connection._deadlines is None
        # The tables neither end wrote to (no subscription, no round of questions, no
        # task, no progress) are the one shared read-only empty table, not 64 bytes each.
        unused = [
            server_connection._subscribed,
            server_connection._subscribing,
            server_connection._asking,
            server_connection._rounds,
            server_connection._progress_tokens,
            client_connection._input_slots,
            client_connection._retry_wire,
            client_connection._pending_inputs,
            client_connection._progress_tokens,
        ]
        assert all(table is EMPTY for table in unused)
        # The in-flight tables the call went through are back to the shared one once it
        # ended (a dict keeps its grown key table when its last entry leaves); a second
        # call makes them again.
        for _ in range(2):
            assert client_connection._outbound is EMPTY and server_connection._inbound is EMPTY
            assert (await client.call_tool("echo", {"text": "again"})).content[0].text == "again"
        assert client_connection._live_tasks is NO_TASKS is server_connection._live_tasks
        # Memories of ended ids: the server ended none of its own requests (it asked
        # nothing), the client none of the server's, nor a call with questions; those stay
        # the shared read-only one. The two that ended something remember it.
        assert server_connection._ended_outbound is NO_IDS
        assert client_connection._ended_inbound is NO_IDS is client_connection._dead_slots
        assert len(client_connection._ended_outbound) >= 2  # initialize (or discover), the call
        assert len(server_connection._ended_inbound) >= 1
        assert "id" not in NO_IDS and len(NO_IDS) == 0
        # Nothing queued: both output buffers are the shared read-only one the link's
        # drain (`payloads_to_send`) leaves, and the client made no table of `listen()`
        # streams.
        assert client_connection._outgoing is NO_QUEUED is server_connection._outgoing
        assert client_connection._pending_events is NO_ITEMS  # the handshake's went out
        assert client_connection._outgoing == [] and client_connection.messages_to_send() == []
        with pytest.raises(TypeError):
            client_connection._outgoing.append(None)
        assert client._listeners is None and client._unbound_listeners is None
        with pytest.raises(TypeError):
            NO_IDS.add("id")
        assert not NO_TASKS.start("task", 1, 1) and NO_TASKS.get("task") is None
        with pytest.raises(TypeError):
            EMPTY["written"] = True
        assert len(EMPTY) == 0


@pytest.mark.anyio
async def test_legacy_sessions_share_the_peers_declaration_read_only(anyio_backend: str) -> None:
    """Two legacy sessions of one client application hold one pair of models of its
    declaration on the server, and their clients one of the server's; another
    declaration gets its own pair, with what it declared."""
    server = MCPServer("footprint", version="1.2.3")

    @server.tool()
    def echo(text: str) -> str:
        return text

    async def answer(context: object, params: object) -> object:
        raise AssertionError("not asked")

    async with (
        Client(server, mode="legacy") as first,
        Client(server, mode="legacy") as second,
        Client(server, mode="legacy", elicitation_callback=answer) as eliciting,
    ):
        sessions = list(server._live)
        assert len(sessions) == 3
        # The two plain clients share one declaration; the eliciting one has its own.
        assert len({id(c.client_capabilities) for c in sessions}) == 2
        plain = [c for c in sessions if c.client_capabilities.elicitation is None]
        assert len(plain) == 2 and plain[0].client_info is plain[1].client_info
        assert plain[0].client_info.name == "mcp-sansio-client"
        ours = [client._session.connection for client in (first, second, eliciting)]
        assert ours[0].server_capabilities is ours[1].server_capabilities
        assert ours[0].server_info is ours[2].server_info
        assert ours[0].server_info.version == "1.2.3"
        assert ours[0].server_capabilities.tools is not None
        assert first.session.connected.server_capabilities is ours[0].server_capabilities
        # The wire form the engine checks capabilities against is shared with the models.
        assert plain[0]._client_caps_wire is plain[1]._client_caps_wire
        eliciting_caps = next(c for c in sessions if c not in plain)._client_caps_wire
        assert "elicitation" in eliciting_caps and "elicitation" not in plain[0]._client_caps_wire
        assert ours[0]._server_caps_wire is ours[2]._server_caps_wire
        assert "tools" in ours[0]._server_caps_wire


def test_a_stream_makes_the_line_framer_on_its_first_bytes() -> None:
    """The newline framer is made by the first `receive_data` that leaves part of a line
    (a connection fed whole messages never builds it: see the idle pair above), it still
    joins a ping split across two reads and answers it (a ping before `initialize` is
    allowed), and it is dropped once it holds nothing: an idle stream keeps no framer."""
    streamed = ServerConnection(default_server_config())
    assert streamed._lines is None
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n"
    assert streamed.receive_data(line[:7]) == []
    assert streamed._lines is not None and streamed._lines.pending == 7
    assert streamed.receive_data(line[7:]) == []
    assert streamed._lines is None  # nothing pending: nothing kept
    assert json.loads(streamed.data_to_send()) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_clients_declaring_the_same_share_one_config() -> None:
    """Clients that declare the same thing share one frozen `ClientConfig` (with its wire
    forms): it was about 570 bytes of every client. Any difference in what a client
    declares or how it is bounded gets a config of its own, with what it declared."""
    server = MCPServer("footprint")

    async def answer(context: object, params: object) -> object:
        raise AssertionError("not asked")

    first, second = Client(server), Client(server)
    assert first.config is second.config
    assert first.config.client_info_wire == {"name": "mcp-sansio-client", "version": "0.1.0"}
    others = [
        Client(server, log_level="debug"),
        Client(server, mode="legacy"),
        Client(server, max_input_rounds=3),
        Client(server, client_info={"name": "other", "version": "2"}),
        Client(server, elicitation_callback=answer),
    ]
    assert len({id(c.config) for c in [first, *others]}) == 1 + len(others)
    logging, legacy, bounded, named, eliciting = (c.config for c in others)
    assert logging.log_level == "debug" and first.config.log_level is None
    assert legacy.mode == "legacy" and bounded.max_input_rounds == 3
    assert named.client_info_wire == {"name": "other", "version": "2"}
    assert "elicitation" in eliciting.capabilities_wire
    assert "elicitation" not in first.config.capabilities_wire
    assert Client(server, client_info={"name": "other", "version": "2"}).config is named


@pytest.mark.anyio
async def test_connections_share_what_their_config_and_limits_derive(anyio_backend: str) -> None:
    """The 2026-07-28 `_meta` envelope is derived from the client's config alone, and the
    output limit from the limits alone: connections share them (about 180 and 32 bytes
    of each) rather than each building its own. A client declaring something else gets
    an envelope of its own, with what it declares."""
    server = _echo_server()
    async with (
        Client(server, mode="2026-07-28") as first,
        Client(server, mode="2026-07-28") as second,
        Client(server, mode="2026-07-28", log_level="debug") as logging,
    ):
        for client in (first, second, logging):
            assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
        ours = [client._session.connection for client in (first, second, logging)]
        assert ours[0]._envelope is ours[1]._envelope
        assert ours[0]._envelope is not ours[2]._envelope
        assert META_LOG_LEVEL not in ours[0]._envelope
        assert ours[2]._envelope[META_LOG_LEVEL] == "debug"
    limits = [ServerConnection(default_server_config())._output_limit for _ in range(2)]
    assert limits[0] is limits[1] and limits[0] == Limits().output_limit


@pytest.mark.anyio
async def test_in_process_sessions_share_the_servers_handler(anyio_backend: str) -> None:
    """The server sessions of one `MCPServer` share its one request handler and the
    handler's fast path (a handler and a bound method per session before), and the
    `running()` each in-process client keeps holds no bound method of the server."""
    server = _echo_server()
    async with Client(server) as first, Client(server) as second:
        for client in (first, second):
            assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
        sessions = [client._context._server_session for client in (first, second)]
        assert sessions[0]._on_request is sessions[1]._on_request is server.session_handler()
        assert sessions[0]._now is sessions[1]._now is server.session_handler().now
        serving = first._context._serving
        assert not any(inspect.ismethod(r) for r in gc.get_referents(serving))


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_link_driver_is_its_own_driver_core(anyio_backend: str, mode: str) -> None:
    """Each end of an in-process pair is one object, not a driver owning a `DriverCore`
    that called it back through a bound method (about 200 bytes of each end); the
    core's state (input ended, finishing, error) is the end's own."""
    server = _echo_server()
    async with Client(server, mode=mode) as client:
        assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
        ends = [client._session._driver, client._context._server_session._driver]
        for end in ends:
            assert isinstance(end, LinkDriver) and isinstance(end, DriverCore)
            assert not hasattr(end, "core")
            assert not end.input_done and not end.finishing and end.error is None
    for end in ends:
        assert end.input_done and end.finishing and end.error is None
