"""Tests for tests/schema_check.py: valid messages pass, invalid ones are caught."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import SchemaError

from tests import schema_check
from tests.schema_check import (
    REVISIONS,
    SchemaViolation,
    method_index,
    result_definitions,
    spec_dir,
    validate_message,
)

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
ELICITATION = ("2025-06-18", "2025-11-25")  # legacy revisions with elicitation/create
NO_BATCH = tuple(r for r in REVISIONS if r != "2025-03-26")

Msg = dict[str, Any]


# ---------------------------------------------------------------------------
# Message builders
# ---------------------------------------------------------------------------


def req(method: str, params: Msg | None = None, id_: int | str = 1) -> Msg:
    msg: Msg = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def note(method: str, params: Msg | None = None) -> Msg:
    msg: Msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def ok(result: Msg, id_: int | str = 1) -> Msg:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def err(code: Any = -32601, message: str = "Method not found", id_: int | str = 1) -> Msg:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def initialize_request(revision: str) -> Msg:
    return req(
        "initialize",
        {
            "protocolVersion": revision,
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "test-client", "version": "1.0"},
        },
    )


def initialize_result(revision: str) -> Msg:
    return ok(
        {
            "protocolVersion": revision,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "test-server", "version": "1.0"},
        }
    )


TEXT = [{"type": "text", "text": "hello"}]
META_KEYS = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def modern_params(**params: Any) -> Msg:
    """2026-07-28 request params: the required `_meta` envelope plus `params`."""
    return {"_meta": dict(META_KEYS), **params}


def modern_call_tool() -> Msg:
    return req("tools/call", modern_params(name="echo", arguments={"text": "hi"}))


def modern_call_tool_result() -> Msg:
    return ok({"resultType": "complete", "content": TEXT})


def input_required_result() -> Msg:
    return ok(
        {
            "resultType": "input_required",
            "inputRequests": {
                "confirm": {
                    "method": "elicitation/create",
                    "params": {
                        "message": "Proceed?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"ok": {"type": "boolean"}},
                        },
                    },
                }
            },
            "requestState": "opaque-state",
        }
    )


def assert_violation(
    message: Msg | list[Any],
    revision: str,
    *,
    sender: schema_check.Sender,
    request_method: str | None = None,
    contains: tuple[str, ...] = (),
) -> str:
    with pytest.raises(SchemaViolation) as info:
        validate_message(message, revision, sender=sender, request_method=request_method)
    text = str(info.value)
    assert text.startswith(f"[{revision}]") or text.startswith("batch element")
    for fragment in contains:
        assert fragment in text, f"{fragment!r} not in:\n{text}"
    return text


# ---------------------------------------------------------------------------
# spec_dir and schema loading
# ---------------------------------------------------------------------------


@pytest.fixture
def fresh_caches() -> Iterator[None]:
    """Drop the per-revision caches around a test that changes where schemas come from."""
    schema_check._load.cache_clear()
    schema_check._validator.cache_clear()
    yield
    schema_check._load.cache_clear()
    schema_check._validator.cache_clear()


def test_spec_dir_default_is_the_copies_inside_the_repository(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MCP_SPEC_DIR", raising=False)
    repo = Path(schema_check.__file__).resolve().parents[1]
    assert spec_dir() == repo / "tests" / "spec"
    for revision in REVISIONS:
        assert (spec_dir() / revision / "schema.json").is_file()


def test_schema_copies_match_their_recorded_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    """The copies are the official files, byte for byte (digests in tests/spec/README.md)."""
    monkeypatch.delenv("MCP_SPEC_DIR", raising=False)
    readme = (spec_dir() / "README.md").read_text(encoding="utf-8")
    recorded = dict(re.findall(r"\| `(\S+)/schema\.json` \|.*\| `([0-9a-f]{64})` \|", readme))
    assert sorted(recorded) == sorted(REVISIONS)
    for revision, digest in recorded.items():
        data = (spec_dir() / revision / "schema.json").read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, revision


def test_the_repository_copies_are_valid_schemas_of_their_dialect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What loading checks for a schema from $MCP_SPEC_DIR, done once for the copies
    (loading them skips it: they are pinned by digest above)."""
    monkeypatch.delenv("MCP_SPEC_DIR", raising=False)
    for revision in REVISIONS:
        root = json.loads((spec_dir() / revision / "schema.json").read_text(encoding="utf-8"))
        schema_check._DIALECTS[root["$schema"]].check_schema(root)


def test_a_schema_from_elsewhere_is_checked_against_its_dialect(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_caches: None
) -> None:
    source = json.loads((spec_dir() / "2025-06-18" / "schema.json").read_text())
    source["definitions"]["Resource"]["type"] = 7  # not a JSON Schema type
    (tmp_path / "2025-06-18").mkdir()
    (tmp_path / "2025-06-18" / "schema.json").write_text(json.dumps(source))
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path))
    with pytest.raises(SchemaError):
        method_index("2025-06-18", "ServerRequest")


def test_spec_dir_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path))
    assert spec_dir() == tmp_path


def test_spec_dir_missing_raises(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    monkeypatch.setenv("MCP_SPEC_DIR", str(missing))
    with pytest.raises(RuntimeError, match="does not exist"):
        spec_dir()


def test_missing_revision_schema_raises(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_caches: None
) -> None:
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path))
    with pytest.raises(RuntimeError, match="not found"):
        validate_message(req("ping"), "2025-06-18", sender="client")


def test_env_dir_is_used_for_loading(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_caches: None
) -> None:
    # A copy of 2025-06-18 without ElicitRequest in ServerRequest: the index must follow it.
    source = json.loads((spec_dir() / "2025-06-18" / "schema.json").read_text())
    union = source["definitions"]["ServerRequest"]["anyOf"]
    source["definitions"]["ServerRequest"]["anyOf"] = [
        m for m in union if m["$ref"] != "#/definitions/ElicitRequest"
    ]
    (tmp_path / "2025-06-18").mkdir()
    (tmp_path / "2025-06-18" / "schema.json").write_text(json.dumps(source))
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path))
    assert "elicitation/create" not in method_index("2025-06-18", "ServerRequest")


def test_unknown_revision_and_sender_rejected() -> None:
    with pytest.raises(ValueError, match="unknown MCP revision"):
        validate_message(req("ping"), "2099-01-01", sender="client")
    with pytest.raises(ValueError, match="sender"):
        validate_message(req("ping"), "2025-06-18", sender="proxy")  # type: ignore[arg-type]


def test_revisions_and_dialects() -> None:
    assert REVISIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
    for revision in REVISIONS:
        root = json.loads((spec_dir() / revision / "schema.json").read_text())
        expected = Draft7Validator if revision < "2025-11-25" else Draft202012Validator
        assert ("draft-07" in root["$schema"]) == (expected is Draft7Validator)
        assert schema_check._load(revision).validator_cls is expected


def test_format_keywords_are_not_checked() -> None:
    # Resource.uri has `format: uri`; a non-URI string still passes (format is off).
    root = json.loads((spec_dir() / "2025-06-18" / "schema.json").read_text())
    assert root["definitions"]["Resource"]["properties"]["uri"]["format"] == "uri"
    result = ok({"resources": [{"uri": "not a uri", "name": "r"}]})
    validate_message(result, "2025-06-18", sender="server", request_method="resources/list")


def test_validators_are_cached() -> None:
    validate_message(req("ping"), "2025-06-18", sender="client")
    before = schema_check._validator.cache_info()
    for _ in range(10):
        validate_message(req("ping"), "2025-06-18", sender="client")
    after = schema_check._validator.cache_info()
    assert after.misses == before.misses
    assert after.hits >= before.hits + 20  # envelope + PingRequest per call


def test_a_thousand_validations_build_nothing_after_the_first() -> None:
    # What kept a thousand validations well under a second: each revision's schema is
    # loaded once and each validator built once, then reused. Counted, not timed.
    messages = [
        (modern_call_tool(), MODERN, "client", None),
        (modern_call_tool_result(), MODERN, "server", "tools/call"),
        (initialize_request("2025-06-18"), "2025-06-18", "client", None),
        (initialize_result("2025-06-18"), "2025-06-18", "server", "initialize"),
    ]
    for message, revision, sender, method in messages:  # warm the caches
        validate_message(message, revision, sender=sender, request_method=method)
    loads, validators = schema_check._load.cache_info(), schema_check._validator.cache_info()
    for i in range(1000):
        message, revision, sender, method = messages[i % len(messages)]
        validate_message(message, revision, sender=sender, request_method=method)
    assert schema_check._load.cache_info().misses == loads.misses
    after = schema_check._validator.cache_info()
    assert after.misses == validators.misses
    assert after.hits >= validators.hits + 2000  # envelope + member, every time


# ---------------------------------------------------------------------------
# Method indexes and the request -> result mapping
# ---------------------------------------------------------------------------


def test_method_index_follows_the_matrix() -> None:
    for revision in LEGACY:
        client = method_index(revision, "ClientRequest")
        assert client["initialize"] == "InitializeRequest"
        assert client["tools/call"] == "CallToolRequest"
        assert "ping" in method_index(revision, "ServerRequest")
        assert "notifications/initialized" in method_index(revision, "ClientNotification")
        assert "notifications/initialized" not in method_index(revision, "ServerNotification")
        has_elicit = "elicitation/create" in method_index(revision, "ServerRequest")
        assert has_elicit == (revision in ELICITATION)
    assert set(method_index(MODERN, "ClientRequest")) == {
        "server/discover",
        "tools/list",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "subscriptions/listen",
        "completion/complete",
    }
    assert method_index(MODERN, "ServerRequest") == {}
    # 2026's ClientNotification is an inline definition, not a union.
    assert method_index(MODERN, "ClientNotification") == {
        "notifications/cancelled": "ClientNotification"
    }
    with pytest.raises(ValueError, match="unknown union"):
        method_index(MODERN, "ClientResult")


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_request_maps_to_result_definitions(revision: str) -> None:
    root = json.loads((spec_dir() / revision / "schema.json").read_text())
    defs = root.get("$defs") or root["definitions"]
    for union, requester in (("ClientRequest", "client"), ("ServerRequest", "server")):
        for method in method_index(revision, union):
            results = result_definitions(revision, method, requester=requester)
            assert results
            assert all(name in defs for name in results)


@pytest.mark.parametrize("revision", LEGACY)
def test_result_mapping_special_cases_legacy(revision: str) -> None:
    for method in ("ping", "resources/subscribe", "resources/unsubscribe", "logging/setLevel"):
        assert result_definitions(revision, method, requester="client") == ("EmptyResult",)
    assert result_definitions(revision, "ping", requester="server") == ("EmptyResult",)
    tasks = revision == "2025-11-25"
    call = ("CallToolResult", "CreateTaskResult") if tasks else ("CallToolResult",)
    assert result_definitions(revision, "tools/call", requester="client") == call
    sampling = ("CreateMessageResult", "CreateTaskResult") if tasks else ("CreateMessageResult",)
    assert result_definitions(revision, "sampling/createMessage", requester="server") == sampling
    if revision in ELICITATION:
        elicit = ("ElicitResult", "CreateTaskResult") if tasks else ("ElicitResult",)
        assert result_definitions(revision, "elicitation/create", requester="server") == elicit
    with pytest.raises(ValueError, match="not in ServerRequest"):
        result_definitions(revision, "tools/call", requester="server")


def test_result_mapping_modern() -> None:
    for method, name in (
        ("tools/call", "CallToolResult"),
        ("prompts/get", "GetPromptResult"),
        ("resources/read", "ReadResourceResult"),
    ):
        assert set(result_definitions(MODERN, method, requester="client")) == {
            "InputRequiredResult",
            name,
        }
    assert result_definitions(MODERN, "tools/list", requester="client") == ("ListToolsResult",)
    assert result_definitions(MODERN, "server/discover", requester="client") == ("DiscoverResult",)
    assert result_definitions(MODERN, "subscriptions/listen", requester="client") == (
        "SubscriptionsListenResult",
    )


# ---------------------------------------------------------------------------
# Valid messages
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("revision", LEGACY)
def test_valid_legacy_lifecycle_and_tools(revision: str) -> None:
    validate_message(initialize_request(revision), revision, sender="client")
    validate_message(
        initialize_result(revision), revision, sender="server", request_method="initialize"
    )
    validate_message(initialize_result(revision), revision, sender="server")
    validate_message(note("notifications/initialized"), revision, sender="client")
    validate_message(
        req("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id_="abc"),
        revision,
        sender="client",
    )
    validate_message(
        ok({"content": TEXT, "isError": False}, id_="abc"),
        revision,
        sender="server",
        request_method="tools/call",
    )
    validate_message(req("tools/list"), revision, sender="client")
    validate_message(
        ok({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        revision,
        sender="server",
        request_method="tools/list",
    )
    validate_message(
        note("notifications/progress", {"progressToken": "t", "progress": 0.5, "total": 1}),
        revision,
        sender="server",
    )
    validate_message(
        note("notifications/message", {"level": "info", "data": "log line"}),
        revision,
        sender="server",
    )
    validate_message(note("notifications/cancelled", {"requestId": 3}), revision, sender="server")


@pytest.mark.parametrize("revision", LEGACY)
@pytest.mark.parametrize("sender", ["client", "server"])
def test_valid_ping_both_directions(revision: str, sender: schema_check.Sender) -> None:
    validate_message(req("ping", id_=7), revision, sender=sender)
    validate_message(ok({}, id_=7), revision, sender=sender, request_method="ping")
    validate_message(ok({"_meta": {"k": 1}}), revision, sender=sender, request_method="ping")


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("sender", ["client", "server"])
def test_valid_error_response(revision: str, sender: schema_check.Sender) -> None:
    validate_message(err(), revision, sender=sender)
    message = err(-32602, "Invalid params")
    message["error"]["data"] = {"detail": ["anything", 1]}
    validate_message(message, revision, sender=sender, request_method="tools/call")


@pytest.mark.parametrize("revision", ELICITATION)
def test_valid_elicitation_round_trip(revision: str) -> None:
    validate_message(
        req(
            "elicitation/create",
            {
                "message": "Your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            },
        ),
        revision,
        sender="server",
    )
    validate_message(
        ok({"action": "accept", "content": {"name": "Ada"}}),
        revision,
        sender="client",
        request_method="elicitation/create",
    )


def test_valid_task_result_for_tools_call_2025_11_25() -> None:
    task = {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z",
        "ttl": None,
    }
    validate_message(ok({"task": task}), "2025-11-25", sender="server", request_method="tools/call")
    # ... but not for a request whose params have no `task` (tools/list).
    assert_violation(
        ok({"task": task}),
        "2025-11-25",
        sender="server",
        request_method="tools/list",
        contains=("ListToolsResult", "'tools' is a required property"),
    )


def test_valid_batches_2025_03_26() -> None:
    revision = "2025-03-26"
    validate_message(
        [req("tools/list", id_=1), req("ping", id_=2), note("notifications/initialized")],
        revision,
        sender="client",
    )
    validate_message([ok({"tools": []}, id_=1), err(id_=2)], revision, sender="server")


def test_valid_modern_messages() -> None:
    validate_message(modern_call_tool(), MODERN, sender="client")
    validate_message(
        modern_call_tool_result(), MODERN, sender="server", request_method="tools/call"
    )
    validate_message(modern_call_tool_result(), MODERN, sender="server")
    validate_message(input_required_result(), MODERN, sender="server", request_method="tools/call")
    validate_message(req("server/discover", modern_params()), MODERN, sender="client")
    validate_message(
        ok(
            {
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}},
                "cacheScope": "public",
                "ttlMs": 60000,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
            }
        ),
        MODERN,
        sender="server",
        request_method="server/discover",
    )
    validate_message(
        ok({"resultType": "complete", "tools": [], "cacheScope": "private", "ttlMs": 0}),
        MODERN,
        sender="server",
        request_method="tools/list",
    )
    validate_message(note("notifications/cancelled", {"requestId": 1}), MODERN, sender="client")
    validate_message(
        note("notifications/progress", {"progressToken": 1, "progress": 3}),
        MODERN,
        sender="server",
    )
    validate_message(err(-32602, "missing _meta"), MODERN, sender="server")


# ---------------------------------------------------------------------------
# Invalid messages
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_missing_jsonrpc(revision: str) -> None:
    request = modern_call_tool() if revision == MODERN else initialize_request(revision)
    del request["jsonrpc"]
    assert_violation(
        request, revision, sender="client", contains=("'jsonrpc' is a required property", "at $:")
    )
    notification = note("notifications/cancelled", {"requestId": 1})
    del notification["jsonrpc"]
    assert_violation(notification, revision, sender="client", contains=("'jsonrpc'",))
    response = ok({"resultType": "complete", "content": TEXT})
    del response["jsonrpc"]
    assert_violation(
        response, revision, sender="server", request_method="tools/call", contains=("'jsonrpc'",)
    )
    error = err()
    del error["jsonrpc"]
    assert_violation(error, revision, sender="server", contains=("'jsonrpc'",))


@pytest.mark.parametrize("revision", LEGACY)
def test_wrong_direction_is_caught(revision: str) -> None:
    assert_violation(
        req("tools/call", {"name": "echo"}),
        revision,
        sender="server",
        contains=("'tools/call'", "not in ServerRequest", "allowed methods:"),
    )
    assert_violation(
        req("sampling/createMessage", {"messages": [], "maxTokens": 10}),
        revision,
        sender="client",
        contains=("not in ClientRequest",),
    )
    assert_violation(
        note("notifications/initialized"),
        revision,
        sender="server",
        contains=("not in ServerNotification",),
    )
    assert_violation(
        note("notifications/message", {"level": "info", "data": "x"}),
        revision,
        sender="client",
        contains=("not in ClientNotification",),
    )
    # A result answering a request the peer cannot send.
    assert_violation(
        ok({"content": TEXT}),
        revision,
        sender="client",
        request_method="tools/call",
        contains=("not a server request",),
    )


@pytest.mark.parametrize("revision", ("2024-11-05", "2025-03-26"))
def test_elicitation_before_2025_06_18(revision: str) -> None:
    message = req(
        "elicitation/create",
        {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}},
    )
    assert_violation(
        message, revision, sender="server", contains=("'elicitation/create'", "ServerRequest")
    )
    assert_violation(
        ok({"action": "decline"}),
        revision,
        sender="client",
        request_method="elicitation/create",
        contains=("not a server request",),
    )


@pytest.mark.parametrize("method", ["ping", "sampling/createMessage", "elicitation/create"])
def test_no_server_requests_in_2026(method: str) -> None:
    assert_violation(
        req(method, {}),
        MODERN,
        sender="server",
        contains=("defines no ServerRequest union",),
    )


def test_modern_request_envelope_required() -> None:
    no_meta = req("tools/call", {"name": "echo"})
    assert_violation(
        no_meta, MODERN, sender="client", contains=("'_meta' is a required property", "$.params")
    )
    no_params = req("server/discover")
    assert_violation(no_params, MODERN, sender="client", contains=("'params'",))
    missing_key = modern_call_tool()
    del missing_key["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
    assert_violation(
        missing_key,
        MODERN,
        sender="client",
        contains=("io.modelcontextprotocol/protocolVersion", "$.params['_meta']"),
    )
    # Removed methods are no longer client requests.
    assert_violation(
        req("initialize", modern_params()), MODERN, sender="client", contains=("not in",)
    )
    assert_violation(req("ping", modern_params()), MODERN, sender="client", contains=("not in",))


@pytest.mark.parametrize("revision", REVISIONS)
def test_call_tool_result_without_content(revision: str) -> None:
    result: Msg = {"structuredContent": {"x": 1}}
    if revision == MODERN:
        result["resultType"] = "complete"
    text = assert_violation(
        ok(result),
        revision,
        sender="server",
        request_method="tools/call",
        contains=("'content' is a required property", "CallToolResult"),
    )
    assert "at $.result:" in text


def test_modern_result_needs_result_type() -> None:
    assert_violation(
        ok({"content": TEXT}),
        MODERN,
        sender="server",
        request_method="tools/call",
        contains=("'resultType' is a required property",),
    )
    # Without request_method the envelope (JSONRPCResultResponse -> Result) still requires it.
    assert_violation(
        ok({"content": TEXT}),
        MODERN,
        sender="server",
        contains=("JSONRPCResultResponse", "'resultType' is a required property"),
    )


def test_input_required_result_only_where_allowed() -> None:
    assert_violation(
        input_required_result(),
        MODERN,
        sender="server",
        request_method="tools/list",
        contains=("'input_required'", "cannot be answered by an InputRequiredResult"),
    )
    # A "complete" result cannot hide behind the InputRequiredResult alternative.
    assert_violation(
        ok({"resultType": "complete"}),
        MODERN,
        sender="server",
        request_method="prompts/get",
        contains=("'messages' is a required property",),
    )
    broken = input_required_result()
    broken["result"]["inputRequests"]["confirm"] = {"method": "tools/call", "params": {}}
    assert_violation(
        broken,
        MODERN,
        sender="server",
        request_method="tools/call",
        contains=("InputRequiredResult", "$.result.inputRequests.confirm"),
    )


@pytest.mark.parametrize("revision", NO_BATCH)
def test_batch_outside_2025_03_26(revision: str) -> None:
    batch = [req("ping", id_=1), req("ping", id_=2)]
    assert_violation(batch, revision, sender="client", contains=("does not allow batching",))
    assert_violation([err(id_=1)], revision, sender="server", contains=("batching",))


def test_invalid_batches_in_2025_03_26() -> None:
    revision = "2025-03-26"
    assert_violation([], revision, sender="client", contains=("empty batch",))
    assert_violation([req("ping"), ok({})], revision, sender="client", contains=("mixes requests",))
    bad_element = [req("ping", id_=1), req("sampling/createMessage", id_=2)]
    text = assert_violation(bad_element, revision, sender="client")
    assert text.startswith("batch element [1]:")
    assert "not in ClientRequest" in text
    assert_violation(
        [ok({}, id_=1), {"jsonrpc": "2.0", "id": 2}],
        revision,
        sender="server",
        contains=("JSONRPCBatchResponse",),
    )


@pytest.mark.parametrize("revision", REVISIONS)
def test_malformed_envelopes(revision: str) -> None:
    assert_violation(err(code="oops"), revision, sender="server", contains=("'oops'", "code"))
    both = ok({})
    both["error"] = {"code": 1, "message": "x"}
    assert_violation(both, revision, sender="server", contains=("both 'result' and 'error'",))
    assert_violation(
        {"jsonrpc": "2.0", "id": 1}, revision, sender="client", contains=("neither a request",)
    )
    assert_violation(
        ok({}, id_=None),  # type: ignore[arg-type]
        revision,
        sender="client",
        contains=("$.id",),
    )
    assert_violation("ping", revision, sender="client", contains=("not a JSON object",))  # type: ignore[arg-type]


@pytest.mark.parametrize("revision", LEGACY)
def test_result_union_fallback_rejects_non_object(revision: str) -> None:
    assert_violation(ok([1, 2]), revision, sender="server", contains=("$.result",))  # type: ignore[arg-type]


def test_bad_nested_field_is_reported_with_path() -> None:
    message = initialize_result("2025-06-18")
    message["result"]["serverInfo"] = {"name": "s"}
    text = assert_violation(
        message,
        "2025-06-18",
        sender="server",
        request_method="initialize",
        contains=("at $.result.serverInfo:", "'version' is a required property", "schema path:"),
    )
    assert "message: " in text


def test_validation_does_not_mutate_message() -> None:
    message = modern_call_tool()
    snapshot = copy.deepcopy(message)
    validate_message(message, MODERN, sender="client")
    assert message == snapshot
