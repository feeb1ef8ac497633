"""Tasks in the engine: the 2025-11-25 core messages and the 2026-07-28 extension.

Each test drives real connections with raw wire messages and checks what goes
out against the official schemas (the extension's excerpt for 2026-07-28, see
tests/spec/README.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_core import LocalProtocolError
from mcp_core._events import (
    NotificationReceived,
    ProgressReceived,
    RequestCancelled,
    RequestFailed,
    RequestReceived,
    ResponseReceived,
)
from mcp_core._tasks import RELATED_TASK_META_KEY, TASKS_EXTENSION, missing_extension
from mcp_core.types import CreateTaskResult, ExtCreateTaskResult, GetTaskResult
from tests.core.engine_support import (
    MODERN,
    error_code,
    feed,
    legacy_client,
    legacy_server,
    modern_client,
    modern_params,
    modern_server,
    notification,
    one,
    out,
    request,
    result,
    server,
)
from tests.schema_check import validate_message

LEGACY = "2025-11-25"
SERVER_TASKS = {
    "tools": {},
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}
CLIENT_TASKS = {
    "elicitation": {},
    "tasks": {"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}},
}
EXT = {"extensions": {TASKS_EXTENSION: {}}}
SERVER_EXT = {"tools": {}, **EXT}


def task(status: str = "working", **extra: Any) -> dict[str, Any]:
    return {
        "taskId": "t1",
        "status": status,
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z",
        "ttl": 60_000,
        "pollInterval": 50,
        **extra,
    }


def ext_task(status: str = "working", **extra: Any) -> dict[str, Any]:
    body = task(status, **extra)
    body["ttlMs"], body["pollIntervalMs"] = body.pop("ttl"), body.pop("pollInterval")
    return body


def checked(conn: Any, revision: str, sender: str, methods: dict[Any, str]) -> list[Any]:
    """Everything `conn` queued, each checked against the schema of `revision`."""
    sent = out(conn)
    for msg in sent:
        validate_message(msg, revision, sender=sender, request_method=methods.get(msg.get("id")))  # type: ignore[arg-type]
    return sent


# ------------------------------------------------------- 2025-11-25, server side


def tasks_server(**caps: Any) -> Any:
    conn = server(capabilities={**SERVER_TASKS, **caps})
    feed(
        conn,
        request(
            "init",
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": CLIENT_TASKS,
                "clientInfo": {"name": "c", "version": "1"},
            },
        ),
        notification("notifications/initialized"),
    )
    out(conn)
    return conn


def test_legacy_server_receives_every_tasks_request_and_answers_in_schema() -> None:
    conn = tasks_server()
    events = feed(
        conn,
        request(
            1,
            "tools/call",
            {"name": "slow", "task": {"ttl": 60_000}, "_meta": {"progressToken": "p"}},
        ),
        request(2, "tasks/get", {"taskId": "t1"}),
        request(3, "tasks/list", {}),
        request(4, "tasks/cancel", {"taskId": "t1"}),
        request(5, "tasks/result", {"taskId": "t1"}),
    )
    got = [e for e in events if isinstance(e, RequestReceived)]
    assert [e.method for e in got] == [
        "tools/call",
        "tasks/get",
        "tasks/list",
        "tasks/cancel",
        "tasks/result",
    ]
    assert got[0].params.task.ttl == 60_000
    conn.send_result(1, CreateTaskResult(task=task()))  # type: ignore[arg-type]
    conn.send_result(2, task())
    conn.send_result(3, {"tasks": [task()]})
    conn.send_result(4, task("cancelled"))
    conn.send_result(5, {"content": [{"type": "text", "text": "done"}]})
    methods = {
        1: "tools/call",
        2: "tasks/get",
        3: "tasks/list",
        4: "tasks/cancel",
        5: "tasks/result",
    }
    sent = checked(conn, LEGACY, "server", methods)
    assert sent[0]["result"]["task"]["taskId"] == "t1"
    # tasks/result names its task: every message about a task carries related-task.
    assert sent[4]["result"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": "t1"}


def test_a_task_augmented_request_must_be_answered_with_the_task() -> None:
    conn = tasks_server()
    feed(conn, request(1, "tools/call", {"name": "slow", "task": {}}))
    with pytest.raises(LocalProtocolError, match="CreateTaskResult"):
        conn.send_result(1, {"content": []})
    assert conn.requests_in_flight == (0, 1)  # nothing changed: it can still be answered
    assert conn.send_result(1, {"task": task()})


def test_task_augmentation_the_server_did_not_declare_is_served_plainly() -> None:
    conn = legacy_server(LEGACY)  # tools, but no tasks capability
    events = feed(conn, request(1, "tools/call", {"name": "t", "task": {"ttl": 5}}))
    assert one(events, RequestReceived).params.task is None
    assert conn.send_result(1, {"content": []})
    assert "result" in out(conn)[0]


def test_tasks_methods_need_the_servers_capabilities() -> None:
    conn = legacy_server(LEGACY)
    feed(conn, request(1, "tasks/get", {"taskId": "x"}), request(2, "tasks/list"))
    assert [error_code(m) for m in out(conn)] == [-32601, -32601]
    conn = tasks_server(tasks={"requests": {"tools": {"call": {}}}})  # neither list nor cancel
    feed(
        conn,
        request(1, "tasks/list"),
        request(2, "tasks/cancel", {"taskId": "x"}),
        request(3, "tasks/get", {"taskId": "x"}),
    )
    answers = out(conn)
    assert [error_code(m) for m in answers[:2]] == [-32601, -32601]
    assert conn.requests_in_flight == (0, 1)  # tasks/get is served


@pytest.mark.parametrize("params", [None, {}, {"taskId": 5}])
def test_malformed_tasks_params_get_invalid_params(params: Any) -> None:
    conn = tasks_server()
    feed(conn, request(1, "tasks/get", params))
    assert error_code(out(conn)[0]) == -32602
    conn.check_invariants()


def test_notifications_cancelled_does_not_stop_a_task_augmented_request() -> None:
    conn = tasks_server()
    feed(conn, request(1, "tools/call", {"name": "slow", "task": {}}))
    events = feed(conn, notification("notifications/cancelled", {"requestId": 1}))
    assert not [e for e in events if isinstance(e, RequestCancelled)]
    assert conn.send_result(1, {"task": task()})


def test_progress_outlives_the_create_task_result_until_a_terminal_status() -> None:
    conn = tasks_server()
    feed(
        conn,
        request(1, "tools/call", {"name": "slow", "task": {}, "_meta": {"progressToken": "p"}}),
    )
    conn.send_result(1, {"task": task()})
    out(conn)
    assert conn.send_task_progress("t1", 1, 10, "one")
    with pytest.raises(LocalProtocolError):
        conn.send_task_progress("t1", 1)  # progress must increase
    note = checked(conn, LEGACY, "server", {})[0]
    assert note["params"]["progressToken"] == "p"
    assert note["params"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": "t1"}
    conn.send_task_status(task("completed"))
    checked(conn, LEGACY, "server", {})
    assert not conn.send_task_progress("t1", 2)  # the token died with the task
    assert not conn.send_task_progress("unknown", 1)


def test_a_tasks_get_showing_the_end_ends_the_token_too() -> None:
    conn = tasks_server()
    feed(
        conn, request(1, "tools/call", {"name": "slow", "task": {}, "_meta": {"progressToken": 7}})
    )
    conn.send_result(1, {"task": task()})
    feed(conn, request(2, "tasks/get", {"taskId": "t1"}))
    conn.send_result(2, task("failed"))
    assert not conn.send_task_progress("t1", 1)


def test_the_task_table_is_bounded_by_max_tasks() -> None:
    from mcp_core import Limits

    conn = server(capabilities=SERVER_TASKS, limits=Limits(max_tasks=1))
    feed(
        conn,
        request(
            "i",
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        ),
    )
    for rid in (1, 2):
        feed(
            conn,
            request(rid, "tools/call", {"name": "s", "task": {}, "_meta": {"progressToken": rid}}),
        )
        conn.send_result(rid, {"task": task(taskId=f"t{rid}")})
    assert conn.send_task_progress("t1", 1)
    assert not conn.send_task_progress("t2", 1)  # created and served, but no progress after
    conn.task_ended("t1")
    assert not conn.send_task_progress("t1", 2)


def test_server_asks_the_client_for_a_task_only_where_it_declared_it() -> None:
    conn = legacy_server(LEGACY, {"elicitation": {}})
    form = {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}, "task": {}}
    with pytest.raises(LocalProtocolError, match=r"tasks\.requests\.elicitation\.create"):
        conn.send_request("elicitation/create", form)
    with pytest.raises(LocalProtocolError, match="tasks"):
        conn.send_request("tasks/get", {"taskId": "x"})
    conn = tasks_server()
    rid = conn.send_request("elicitation/create", form)
    assert checked(conn, LEGACY, "server", {})[0]["params"]["task"] == {}
    events = feed(conn, result(rid, {"task": task()}))
    assert isinstance(one(events, ResponseReceived).result, CreateTaskResult)
    rid = conn.send_request("tasks/list")
    feed(conn, result(rid, {"tasks": []}))


# ------------------------------------------------------- 2025-11-25, client side


def test_legacy_client_reads_a_create_task_result_and_keeps_the_token_alive() -> None:
    conn = legacy_client(LEGACY, server_caps=SERVER_TASKS)
    rid = conn.send_request("tools/call", {"name": "slow", "task": {"ttl": 1000}}, progress=True)
    sent = checked(conn, LEGACY, "client", {})[0]
    token = sent["params"]["_meta"]["progressToken"]
    events = feed(conn, result(rid, {"task": task()}))
    created = one(events, ResponseReceived).result
    assert isinstance(created, CreateTaskResult) and created.task.task_id == "t1"
    events = feed(
        conn, notification("notifications/progress", {"progressToken": token, "progress": 1})
    )
    assert one(events, ProgressReceived).request_id == rid
    events = feed(conn, notification("notifications/tasks/status", task("completed")))
    assert one(events, NotificationReceived).params.status == "completed"
    events = feed(
        conn, notification("notifications/progress", {"progressToken": token, "progress": 2})
    )
    assert not [e for e in events if isinstance(e, ProgressReceived)]


def test_legacy_client_polls_fetches_lists_and_cancels() -> None:
    conn = legacy_client(LEGACY, server_caps=SERVER_TASKS)
    ids = {
        conn.send_request("tasks/get", {"taskId": "t1"}): "tasks/get",
        conn.send_request("tasks/result", {"taskId": "t1"}): "tasks/result",
        conn.send_request("tasks/list"): "tasks/list",
        conn.send_request("tasks/cancel", {"taskId": "t1"}): "tasks/cancel",
    }
    for msg in out(conn):
        validate_message(msg, LEGACY, sender="client")
    answers = {
        "tasks/get": task(),
        "tasks/result": {"content": [], "_meta": {RELATED_TASK_META_KEY: {"taskId": "t1"}}},
        "tasks/list": {"tasks": [task()]},
        "tasks/cancel": task("cancelled"),
    }
    events = feed(conn, *(result(rid, answers[m]) for rid, m in ids.items()))
    got = {e.method: e.result for e in events if isinstance(e, ResponseReceived)}
    assert isinstance(got["tasks/get"], GetTaskResult)
    assert got["tasks/list"].tasks[0].task_id == "t1"
    assert got["tasks/cancel"].status == "cancelled"


def test_a_plain_result_to_a_task_augmented_call_is_an_invalid_answer() -> None:
    conn = legacy_client(LEGACY, server_caps=SERVER_TASKS)
    rid = conn.send_request("tools/call", {"name": "slow", "task": {}})
    events = feed(conn, result(rid, {"content": []}))
    assert "task" in one(events, RequestFailed).message


def test_legacy_client_asks_for_a_task_only_where_the_server_declared_it() -> None:
    conn = legacy_client(LEGACY, server_caps={"tools": {}})
    with pytest.raises(LocalProtocolError, match=r"tasks\.requests\.tools\.call"):
        conn.send_request("tools/call", {"name": "t", "task": {}})
    with pytest.raises(LocalProtocolError, match="tasks"):
        conn.send_request("tasks/list")
    conn = legacy_client(LEGACY, server_caps=SERVER_TASKS)
    with pytest.raises(LocalProtocolError, match="cannot be task-augmented"):
        conn.send_request("tools/list", {"task": {}})
    with pytest.raises(LocalProtocolError, match="not a client request"):
        legacy_client("2025-06-18", server_caps=SERVER_TASKS).send_request(
            "tasks/get", {"taskId": "x"}
        )


def test_legacy_client_hosts_tasks_it_declared() -> None:
    conn = legacy_client(LEGACY, capabilities=CLIENT_TASKS, server_caps=SERVER_TASKS)
    events = feed(conn, request(9, "tasks/get", {"taskId": "c1"}), request(10, "tasks/list"))
    assert [e.method for e in events if isinstance(e, RequestReceived)] == [
        "tasks/get",
        "tasks/list",
    ]
    conn = legacy_client(LEGACY, capabilities={"elicitation": {}}, server_caps=SERVER_TASKS)
    feed(conn, request(9, "tasks/get", {"taskId": "c1"}))
    assert error_code(out(conn)[0]) == -32601


# --------------------------------------------------- 2026-07-28 extension


def test_modern_server_runs_a_task_for_a_request_that_declared_the_extension() -> None:
    conn = modern_server(capabilities=SERVER_EXT)
    feed(
        conn,
        request(1, "tools/call", modern_params({"name": "slow"}, caps=EXT)),
        request(2, "tasks/get", modern_params({"taskId": "t1"}, caps=EXT)),
        request(
            3,
            "tasks/update",
            modern_params(
                {"taskId": "t1", "inputResponses": {"q": {"action": "decline"}}}, caps=EXT
            ),
        ),
        request(4, "tasks/cancel", modern_params({"taskId": "t1"}, caps=EXT)),
        request(5, "tasks/get", modern_params({"taskId": "t1"}, caps=EXT)),
    )
    conn.send_result(1, ExtCreateTaskResult(**ext_task()))  # type: ignore[arg-type]
    conn.send_result(
        2, {**ext_task("input_required"), "inputRequests": {"q": {"method": "roots/list"}}}
    )
    conn.send_result(3, {})
    conn.send_result(4, {})
    conn.send_result(5, ext_task("completed", result={"content": []}))
    methods = {
        1: "tools/call",
        2: "tasks/get",
        3: "tasks/update",
        4: "tasks/cancel",
        5: "tasks/get",
    }
    sent = checked(conn, MODERN, "server", methods)
    assert sent[0]["result"]["resultType"] == "task"
    assert [m["result"]["resultType"] for m in sent[1:]] == ["complete"] * 4


def test_modern_server_gives_no_task_to_a_request_without_the_extension() -> None:
    conn = modern_server(capabilities=SERVER_EXT)
    feed(conn, request(1, "tools/call", modern_params({"name": "slow"})))
    with pytest.raises(LocalProtocolError, match="did not declare the tasks extension"):
        conn.send_result(1, ext_task() | {"resultType": "task"})
    code, message, data = missing_extension()
    conn.send_error(1, code, message, data)
    refused = checked(conn, MODERN, "server", {})[0]
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {
        "requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}
    }


def test_modern_tasks_requests_without_the_extension_get_minus_32021() -> None:
    conn = modern_server(capabilities=SERVER_EXT)
    feed(conn, request(1, "tasks/get", modern_params({"taskId": "t1"})))
    answer = out(conn)[0]
    assert answer["error"]["code"] == -32021
    assert TASKS_EXTENSION in answer["error"]["data"]["requiredCapabilities"]["extensions"]
    plain = modern_server()  # the server does not offer the extension at all
    feed(plain, request(1, "tasks/get", modern_params({"taskId": "t1"}, caps=EXT)))
    assert error_code(out(plain)[0]) == -32601


def test_modern_has_no_tasks_result_list_or_task_param() -> None:
    conn = modern_server(capabilities=SERVER_EXT)
    feed(
        conn,
        request(1, "tasks/result", modern_params({"taskId": "t"}, caps=EXT)),
        request(2, "tasks/list", modern_params(caps=EXT)),
    )
    assert [error_code(m) for m in out(conn)] == [-32601, -32601]
    events = feed(
        conn, request(3, "tools/call", modern_params({"name": "t", "task": {}}, caps=EXT))
    )
    assert one(events, RequestReceived).params.task is None  # ignored, as SEP-2663 says


def test_modern_server_checks_the_shape_of_its_task() -> None:
    conn = modern_server(capabilities=SERVER_EXT)
    feed(conn, request(1, "tools/call", modern_params({"name": "slow"}, caps=EXT)))
    with pytest.raises(LocalProtocolError, match="ExtCreateTaskResult"):
        conn.send_result(1, {"resultType": "task", "taskId": "t1"})
    feed(conn, request(2, "tasks/get", modern_params({"taskId": "t1"}, caps=EXT)))
    assert conn.requests_in_flight == (0, 2)


def test_modern_client_reads_a_task_and_polls_it() -> None:
    conn = modern_client(capabilities=EXT)
    rid = conn.send_request("tools/call", {"name": "slow"})
    sent = out(conn)[0]
    assert (
        TASKS_EXTENSION
        in sent["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
    )
    events = feed(conn, result(rid, ext_task() | {"resultType": "task"}))
    created = one(events, ResponseReceived).result
    assert isinstance(created, ExtCreateTaskResult) and created.poll_interval_ms == 50
    get = conn.send_request("tasks/get", {"taskId": "t1"})
    update = conn.send_request(
        "tasks/update", {"taskId": "t1", "inputResponses": {"q": {"action": "cancel"}}}
    )
    cancel = conn.send_request("tasks/cancel", {"taskId": "t1"})
    for msg in out(conn):
        validate_message(msg, MODERN, sender="client")
    events = feed(
        conn,
        result(get, ext_task("completed", result={"content": []}) | {"resultType": "complete"}),
        result(update, {"resultType": "complete"}),
        result(cancel, {"resultType": "complete"}),
    )
    got = {e.method: e.result for e in events if isinstance(e, ResponseReceived)}
    assert got["tasks/get"].result == {"content": []}
    assert set(got) == {"tasks/get", "tasks/update", "tasks/cancel"}


def test_modern_client_refuses_a_task_it_did_not_ask_for() -> None:
    conn = modern_client()
    rid = conn.send_request("tools/call", {"name": "slow"})
    events = feed(conn, result(rid, ext_task() | {"resultType": "task"}))
    assert "did not declare the tasks extension" in one(events, RequestFailed).message
    conn = modern_client(capabilities=EXT)
    rid = conn.send_request("prompts/get", {"name": "p"})
    events = feed(conn, result(rid, ext_task() | {"resultType": "task"}))
    assert "cannot answer with resultType 'task'" in one(events, RequestFailed).message
    rid = conn.send_request("tools/call", {"name": "slow"})
    events = feed(conn, result(rid, {"resultType": "task", "taskId": "t1"}))
    assert one(events, RequestFailed).method == "tools/call"


def test_modern_client_sends_tasks_requests_only_with_the_extension() -> None:
    conn = modern_client()
    with pytest.raises(LocalProtocolError, match="tasks extension"):
        conn.send_request("tasks/get", {"taskId": "t1"})
    with pytest.raises(LocalProtocolError, match="no task param"):
        modern_client(capabilities=EXT).send_request("tools/call", {"name": "t", "task": {}})
    with pytest.raises(LocalProtocolError, match="not a client request"):
        modern_client(capabilities=EXT).send_request("tasks/result", {"taskId": "t1"})


def test_http_routing_header_names_the_task() -> None:
    from mcp_core._http_headers import NAME_BEARING_METHODS

    assert {NAME_BEARING_METHODS[m] for m in ("tasks/get", "tasks/update", "tasks/cancel")} == {
        "taskId"
    }


# ------------------------------------------------------- server additions


BOTH_ERAS = {**SERVER_TASKS, **EXT}


def test_each_era_is_shown_only_its_own_tasks_capability() -> None:
    legacy = server(capabilities=BOTH_ERAS)
    feed(
        legacy,
        request(
            "init",
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        ),
    )
    shown = out(legacy)[0]["result"]["capabilities"]
    assert shown["tasks"] == SERVER_TASKS["tasks"] and "extensions" not in shown
    modern = server(capabilities={**BOTH_ERAS, "extensions": {TASKS_EXTENSION: {}, "x/y": {}}})
    feed(modern, request("d", "server/discover", modern_params()))
    shown = out(modern)[0]["result"]["capabilities"]
    assert "tasks" not in shown
    assert shown["extensions"] == {TASKS_EXTENSION: {}, "x/y": {}}


def test_task_notifications_go_to_the_listen_streams_naming_the_task() -> None:
    conn = modern_server(capabilities=SERVER_EXT)
    feed(
        conn,
        request(
            1,
            "subscriptions/listen",
            modern_params({"notifications": {"taskIds": ["t1"]}}, caps=EXT),
        ),
        request(
            2,
            "subscriptions/listen",
            modern_params({"notifications": {"taskIds": ["t2"]}}, caps=EXT),
        ),
        request(3, "subscriptions/listen", modern_params({"notifications": {"taskIds": ["t1"]}})),
    )
    conn.acknowledge_subscription(1)
    conn.acknowledge_subscription(2)
    sent = out(conn)
    refused = [m for m in sent if m.get("id") == 3]
    assert error_code(refused[0]) == -32021  # task notifications need the extension
    acks = [m["params"]["notifications"] for m in sent if "method" in m]
    assert acks == [{"taskIds": ["t1"]}, {"taskIds": ["t2"]}]
    told = conn.notify_subscribers(
        "notifications/tasks", ext_task("completed", result={"content": []})
    )
    assert told == 1
    (note,) = checked(conn, MODERN, "server", {})
    assert note["method"] == "notifications/tasks"
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1


def test_a_legacy_session_hears_no_extension_task_notifications() -> None:
    conn = legacy_server(capabilities=BOTH_ERAS)
    assert conn.notify_subscribers("notifications/tasks", ext_task()) == 0
    assert out(conn) == []


def test_a_legacy_tasks_result_may_ask_for_the_tasks_input() -> None:
    conn = legacy_server(
        capabilities=SERVER_TASKS,
        client_caps={"elicitation": {"form": {}}},
        request_state_keys=(b"k" * 32,),
    )
    feed(conn, request(7, "tasks/result", {"taskId": "t1"}))
    question = {
        "method": "elicitation/create",
        "params": {
            "message": "Go?",
            "requestedSchema": {"type": "object", "properties": {}},
            "_meta": {RELATED_TASK_META_KEY: {"taskId": "t1"}},
        },
    }
    assert conn.request_input(7, {"go": question})
    (asked,) = checked(conn, LEGACY, "server", {})
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": "t1"}
    feed(conn, request(8, "tasks/get", {"taskId": "t1"}))
    with pytest.raises(LocalProtocolError, match="cannot ask for input"):
        conn.request_input(8, {"go": question})


def test_modern_task_answers_are_any_objects_until_the_server_reads_them() -> None:
    conn = modern_server(capabilities=SERVER_EXT)
    events = feed(
        conn,
        request(
            1,
            "tasks/update",
            modern_params(
                {"taskId": "t1", "inputResponses": {"unknown-key": {"ignored": True}}}, caps=EXT
            ),
        ),
        request(
            2,
            "tasks/update",
            modern_params({"taskId": "t1", "inputResponses": {"k": 12345}}, caps=EXT),
        ),
    )
    received = one(events, RequestReceived)
    assert received.params.input_responses == {"unknown-key": {"ignored": True}}
    (refused,) = out(conn)
    assert error_code(refused) == -32602  # an answer is still an object
