"""The ASGI app is configured by its environment, as `python -m mcp_adapters run` is
(a gunicorn worker has no command line of its own), and a store inherited across a
fork gives each process its own bus address.

The end-to-end runs (gunicorn's workers sharing sessions through Redis) are in
tests/seeds/test_seed_flows.py (`gunicorn-*`).
"""

from __future__ import annotations

import multiprocessing

import pytest

from mcp_adapters.request_state_keys import new_request_state_key, parse_request_state_keys
from mcp_adapters.server import MCPServer
from mcp_adapters.store import InMemoryStore, RedisStore


def test_the_asgi_app_takes_the_store_and_ring_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ring = new_request_state_key()
    monkeypatch.setenv("MCP_STORE_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("MCP_STORE_PREFIX", "bistro")
    monkeypatch.setenv("MCP_REQUEST_STATE_KEYS", ring)
    monkeypatch.setenv("MCP_SERVER_IDENTITY", "https://mcp.example.test/mcp")
    server = MCPServer("bistro", store=InMemoryStore())
    server.asgi_app()
    assert isinstance(server.store, RedisStore)  # the deployment's store wins, as on the CLI
    assert server.store.prefix == "bistro"
    assert server.config.request_state_keys == parse_request_state_keys(ring)
    assert server.config.request_state_audience == "https://mcp.example.test/mcp"


def test_environment_false_leaves_the_server_as_the_code_made_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCP_STORE_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("MCP_REQUEST_STATE_KEYS", new_request_state_key())
    mine = InMemoryStore()
    server = MCPServer("bistro", store=mine)
    keys = server.request_state_keys
    server.asgi_app(environment=False)
    assert server.store is mine
    assert server.request_state_keys == keys


def test_a_bad_ring_in_the_environment_fails_when_the_app_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCP_REQUEST_STATE_KEYS", "not-a-key")
    with pytest.raises(ValueError):
        MCPServer("bistro").asgi_app()


def _report_process_id(store: RedisStore, out: multiprocessing.connection.Connection) -> None:
    out.send(store.process_id)
    out.close()


def test_a_store_inherited_by_a_forked_worker_draws_its_own_process_id() -> None:
    """gunicorn --preload builds the app (and its store) once, then forks the
    workers: each must have its own bus address, or one would take another's
    answers. An id given explicitly is kept."""
    fork = multiprocessing.get_context("fork")
    for given, expect_same in ((None, False), ("replica-1", True)):
        store = RedisStore("redis://127.0.0.1:1/0", process_id=given)
        parent_id = store.process_id
        receiving, sending = fork.Pipe(duplex=False)
        child = fork.Process(target=_report_process_id, args=(store, sending))
        child.start()
        child_id = receiving.recv()
        child.join()
        assert child.exitcode == 0
        assert (child_id == parent_id) is expect_same
        assert store.process_id == parent_id  # the parent's own stays
