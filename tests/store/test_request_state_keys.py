"""`requestState` keys from configuration: replicas that share a ring share their state.

A 2026-07-28 call is answered with an `InputRequiredResult` by one replica
(`MCPServer` from the configured ring) and retried on another; the state must
verify there, through a key rotation too, and a key removed from the ring must
refuse with the engine's one uniform error.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_adapters.request_state_keys import (
    IDENTITY_VARIABLE,
    KEYS_FILE_VARIABLE,
    KEYS_VARIABLE,
    KeyRingError,
    configure_from_environment,
    load_request_state_keys,
    load_server_identity,
    new_request_state_key,
    parse_request_state_keys,
)
from mcp_adapters.server import MCPServer
from mcp_core import (
    INVALID_PARAMS,
    INVALID_REQUEST_STATE_MESSAGE,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    RequestReceived,
    RequestStateRejected,
    ServerConnection,
)

OLD = bytes(range(32))
NEW = bytes(range(100, 148))
T0 = 1_800_000_000.0
ASK = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Which day?",
        "requestedSchema": {"type": "object", "properties": {"day": {"type": "string"}}},
    },
}
ANSWER = {"day": {"action": "accept", "content": {"day": "monday"}}}


def b64(key: bytes, *, urlsafe: bool = False) -> str:
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(key).decode()


def replica(keys: Any, identity: str | None = None, name: str = "bistro") -> MCPServer:
    server = MCPServer(name, request_state_keys=keys, server_identity=identity)

    @server.tool()
    def book(party: int) -> str:
        return f"booked for {party}"

    return server


def call(rid: int, state: str | None = None) -> bytes:
    params: dict[str, Any] = {
        "name": "book",
        "arguments": {"party": 2},
        "_meta": {
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
            META_CLIENT_INFO: {"name": "client", "version": "1"},
        },
    }
    if state is not None:
        params["requestState"] = state
        params["inputResponses"] = ANSWER
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    ).encode()


def ask_on(server: MCPServer, state: Any = None) -> str:
    """The requestState replica `server` seals when it asks for the day."""
    conn = ServerConnection(server.config)
    (received,) = conn.receive_message(call(1), wall_time=T0)
    assert isinstance(received, RequestReceived)
    conn.send_input_required(1, {"day": ASK}, state or {"step": 1}, wall_time=T0)
    (message,) = conn.messages_to_send()
    token: str = json.loads(message.payload)["result"]["requestState"]
    return token


def retry_on(server: MCPServer, token: str) -> tuple[list[Any], list[Any]]:
    """(events, messages sent) when the retry carrying `token` lands on `server`."""
    conn = ServerConnection(server.config)
    events = conn.receive_message(call(2, token), wall_time=T0 + 5)
    return events, [json.loads(m.payload) for m in conn.messages_to_send()]


def verified(server: MCPServer, token: str) -> Any:
    events, sent = retry_on(server, token)
    assert sent == [], sent
    (received,) = events
    assert isinstance(received, RequestReceived)
    assert received.context.input_responses is not None
    return received.context.request_state


def refused(server: MCPServer, token: str) -> str:
    """The refusal, exactly as the engine gives it; returns the reason for the logs."""
    events, sent = retry_on(server, token)
    assert sent == [
        {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {
                "code": INVALID_PARAMS,
                "message": INVALID_REQUEST_STATE_MESSAGE,
                "data": {"reason": "invalid_request_state"},
            },
        }
    ]
    (rejected,) = [e for e in events if isinstance(e, RequestStateRejected)]
    return rejected.reason


# ------------------------------------------------------------------ replicas


def test_state_sealed_by_one_replica_verifies_on_another(tmp_path: Path) -> None:
    key_file = tmp_path / "keys"
    key_file.write_text(f"# request state keys\n{b64(OLD)}\n")
    a = replica(load_request_state_keys(key_file), "https://mcp.example.com/mcp")
    b = replica(
        load_request_state_keys(environ={KEYS_VARIABLE: b64(OLD, urlsafe=True).rstrip("=")}),
        load_server_identity(environ={"MCP_SERVER_IDENTITY": "https://mcp.example.com/mcp"}),
    )
    assert verified(b, ask_on(a, {"step": 1, "n": [1, 2]})) == {"step": 1, "n": [1, 2]}


def test_a_process_key_of_its_own_is_not_shared() -> None:
    # Without configured keys every process draws its own: fine alone, not for replicas.
    assert refused(replica(None), ask_on(replica(None))) == "unknown_key"


def test_a_rolling_rotation_never_fails_a_retry() -> None:
    phase0 = replica([OLD])  # before: the old key alone
    phase1 = replica([OLD, NEW])  # 1. the new key, verify-only, everywhere
    phase2 = replica([NEW, OLD])  # 2. the new key seals, the old still verifies
    phase3 = replica([NEW])  # 3. after the state TTL, the old key goes

    # During step 1 (some replicas at phase 0, some at 1) everything seals with OLD.
    for sealer in (phase0, phase1):
        token = ask_on(sealer)
        for verifier in (phase0, phase1, phase2):
            assert verified(verifier, token) == {"step": 1}
    # During step 2 (replicas at phase 1 or 2) states sealed with either key verify.
    for sealer in (phase1, phase2):
        token = ask_on(sealer)
        for verifier in (phase1, phase2):
            assert verified(verifier, token) == {"step": 1}
    # After step 3, new states still verify on replicas still at phase 2 ...
    assert verified(phase2, ask_on(phase3)) == {"step": 1}
    assert verified(phase3, ask_on(phase2)) == {"step": 1}


def test_a_removed_key_refuses_with_the_uniform_error() -> None:
    old_state = ask_on(replica([OLD]))
    assert refused(replica([NEW]), old_state) == "unknown_key"


def test_the_server_identity_is_bound_into_the_state() -> None:
    # Same keys, same identity, different names: one deployment.
    a = replica([OLD], "https://mcp.example.com/mcp", name="bistro-a")
    b = replica([OLD], "https://mcp.example.com/mcp", name="bistro-b")
    assert verified(b, ask_on(a)) == {"step": 1}
    # Same keys, another identity: another service, which must not accept it.
    other = replica([OLD], "https://other.example.com/mcp", name="bistro-a")
    assert refused(other, ask_on(a)) == "wrong_audience"
    # Without an identity the name is the audience, as before.
    assert refused(replica([OLD], name="bistro-b"), ask_on(replica([OLD]))) == "wrong_audience"


def test_server_identity_must_be_a_non_empty_string() -> None:
    with pytest.raises(ValueError, match="server_identity"):
        MCPServer("x", server_identity="")


# -------------------------------------------------------------------- format


def test_the_format_takes_newlines_commas_spaces_and_comments() -> None:
    text = f"""
        # rotated 2026-11
        {b64(NEW)}   # signs
        {b64(OLD, urlsafe=True).rstrip("=")}, # verifies only
    """
    assert parse_request_state_keys(text) == (NEW, OLD)
    assert parse_request_state_keys(f"{b64(NEW)},{b64(OLD)}") == (NEW, OLD)
    assert parse_request_state_keys(f"{b64(NEW)} {b64(OLD)}") == (NEW, OLD)


def test_a_new_key_is_valid_and_fresh() -> None:
    first, second = new_request_state_key(), new_request_state_key()
    assert first != second
    assert parse_request_state_keys(f"{first}\n{second}") == (
        base64.b64decode(first),
        base64.b64decode(second),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no keys"),
        ("# only a comment", "no keys"),
        ("not*base64", "key 1 is not base64"),
        (f"{b64(OLD)} abc=def", "key 2 is not base64"),
        (f"{b64(OLD)} A", "key 2 is not base64"),
        (b64(b"short"), "key 1 has 5 bytes"),
        (f"{b64(OLD)}\n{b64(NEW)}\n{b64(OLD, urlsafe=True)}", "key 3 repeats key 1"),
    ],
)
def test_an_unusable_ring_is_refused_without_echoing_keys(text: str, message: str) -> None:
    with pytest.raises(KeyRingError, match=message) as caught:
        parse_request_state_keys(text, source="the test ring")
    assert str(caught.value).startswith("the test ring: ")
    assert b64(OLD) not in str(caught.value)


def test_where_the_keys_come_from(tmp_path: Path) -> None:
    key_file = tmp_path / "ring"
    key_file.write_text(b64(NEW) + "\n")
    assert load_request_state_keys(environ={}) is None
    assert load_request_state_keys(environ={KEYS_VARIABLE: ""}) is None
    assert load_request_state_keys(environ={KEYS_FILE_VARIABLE: str(key_file)}) == (NEW,)
    assert load_request_state_keys(environ={KEYS_VARIABLE: b64(OLD)}) == (OLD,)
    # An explicit path wins over the environment.
    assert load_request_state_keys(key_file, environ={KEYS_VARIABLE: b64(OLD)}) == (NEW,)
    with pytest.raises(KeyRingError, match="keep one of them"):
        load_request_state_keys(
            environ={KEYS_VARIABLE: b64(OLD), KEYS_FILE_VARIABLE: str(key_file)}
        )
    with pytest.raises(KeyRingError, match="cannot read the key file"):
        load_request_state_keys(tmp_path / "missing")
    with pytest.raises(KeyRingError, match=f"{KEYS_VARIABLE}: key 1 is not base64"):
        load_request_state_keys(environ={KEYS_VARIABLE: "%%%"})
    assert load_server_identity(environ={}) is None
    assert load_server_identity(environ={"MCP_SERVER_IDENTITY": "  "}) is None


def test_the_documented_example_ring_parses() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "deploy.md").read_text()
    example = doc.split("```text\n", 1)[1].split("```", 1)[0]
    keys = parse_request_state_keys(example)
    assert len(keys) == 2 and all(len(key) == 32 for key in keys)


def test_the_command_line_configures_a_server_from_the_environment() -> None:
    """`python -m mcp_adapters run` calls configure_from_environment: the deployment's
    ring and identity replace what the code had; nothing set changes nothing."""
    server = MCPServer("bistro")
    own_key = server.request_state_keys
    assert configure_from_environment(server, environ={}) is False
    assert server.request_state_keys == own_key and server.server_identity is None
    ring = f"{new_request_state_key()}, {new_request_state_key()}"
    environ = {KEYS_VARIABLE: ring, IDENTITY_VARIABLE: "https://mcp.example.com/mcp"}
    assert configure_from_environment(server, environ=environ) is True
    assert server.request_state_keys == parse_request_state_keys(ring)
    assert server.server_identity == "https://mcp.example.com/mcp"


def test_shared_keys_for_an_unnamed_server_need_an_identity() -> None:
    environ = {KEYS_VARIABLE: new_request_state_key()}
    with pytest.raises(ValueError, match="no name: name it"):
        configure_from_environment(MCPServer(), environ=environ)
    server = MCPServer()
    configure_from_environment(server, environ={**environ, IDENTITY_VARIABLE: "https://a/mcp"})
    assert server.server_identity == "https://a/mcp"


def test_a_ring_set_after_the_config_was_built_is_the_one_connections_get() -> None:
    """An ASGI app builds its endpoint (and so the server's config) when the module
    makes it; the environment's ring, read then, must still be what seals."""
    server = MCPServer("bistro")
    before = server.config
    ring = new_request_state_key()
    environ = {KEYS_VARIABLE: ring, IDENTITY_VARIABLE: "https://mcp.example.com/mcp"}
    configure_from_environment(server, environ=environ)
    after = server.config
    assert after is not before
    assert after.request_state_keys == parse_request_state_keys(ring)
    assert after.request_state_audience == "https://mcp.example.com/mcp"
