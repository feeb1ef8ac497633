"""`Client` and tasks, against a server written on mcp_core's `ServerConnection` alone.

No packaged peer speaks the 2026-07-28 tasks extension (`io.modelcontextprotocol/
tasks`, SEP-2663), so `Board` below plays the server: a real `ServerConnection`
behind the backend's `Session`, joined to the Client by an in-process byte pipe,
answering `tools/call` with `resultType: "task"` and the extension's `tasks/get`,
`tasks/update` and `tasks/cancel` from a small table. The same board speaks the
2025-11-25 shapes (`params.task`, `CreateTaskResult`, `tasks/result`,
`tasks/list`, `notifications/tasks/status`) for the parts the everything server
(tests/interop/test_everything_tasks.py) cannot show: a status notification
waking the poller, the poll bounds. asyncio and trio, both eras.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from mcp_adapters import current_backend
from mcp_adapters.client import Client, ClientRequestContext, TaskCancelledError, TaskHandle
from mcp_core import (
    TASKS_EXTENSION,
    ClientConnection,
    Limits,
    LocalProtocolError,
    MCPError,
    ServerConfig,
    ServerConnection,
    to_wire,
)
from mcp_core.types import CallToolResult, ElicitRequestParams, ElicitResult
from tests.timing import HANG

from .conftest import MODERN, memory_stream_pair, serve_session

pytestmark = pytest.mark.anyio

STAMP = "2026-07-28T10:00:00Z"


class Board:
    """The server's tasks, by id, and what the client sent about them.

    Tools: `research` (asks one question, then completes with the answer),
    `slow` (works until cancelled), `broken` (fails), `quick` (no task),
    `confused` (its tasks/get answers about another task), `garbled`
    (completes with a malformed result), `nosy` (2026-07-28: asks a new
    question after every answer).
    A task advances one step per `tasks/get`, so a test sees each status.
    """

    def __init__(self, era: str, poll_ms: int = 10) -> None:
        self.era = era
        self.poll_ms = poll_ms
        self.tasks: dict[str, dict[str, Any]] = {}
        self.updates: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.gets = 0
        self.session: Any = None

    # ---- wire shapes of each era

    def _fields(self, task: dict[str, Any]) -> dict[str, Any]:
        body = {
            "taskId": task["id"],
            "status": task["status"],
            "createdAt": STAMP,
            "lastUpdatedAt": STAMP,
        }
        if self.era == MODERN:
            body |= {"ttlMs": 60_000, "pollIntervalMs": self.poll_ms}
        else:
            body |= {"ttl": 60_000, "pollInterval": self.poll_ms}
        return body

    def _detailed(self, task: dict[str, Any]) -> dict[str, Any]:
        body = self._fields(task)
        if self.era != MODERN:
            return body
        if task["status"] == "input_required":
            key = f"q{task['asks']}" if task["tool"] == "nosy" else "topic"
            body["inputRequests"] = {
                key: {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Which Rome?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"which": {"type": "string"}},
                            "required": ["which"],
                        },
                    },
                }
            }
        elif task["status"] == "completed":
            body["result"] = task["result"]
        elif task["status"] == "failed":
            body["error"] = {"code": -32603, "message": "the archive burned down"}
        return body

    # ---- the server's behaviour

    def _step(self, task: dict[str, Any]) -> None:
        tool, status = task["tool"], task["status"]
        if status != "working":
            return
        task["steps"] += 1
        if tool == "nosy":  # asks again after every answer
            task["status"] = "input_required"
        if tool == "research" and task["steps"] == 2 and task.get("answer") is None:
            task["status"] = "input_required"
        elif tool == "research" and task["steps"] >= 2:
            task["status"] = "completed"
            task["result"] = {"content": [{"type": "text", "text": f"Rome: {task['answer']}"}]}
        elif tool == "broken" and task["steps"] == 2:
            task["status"] = "failed"
        elif tool == "garbled":  # completes with a result that is no CallToolResult
            task["status"] = "completed"
            task["result"] = {"content": "not a list"}

    async def handle(self, session: Any, event: Any) -> Any:
        method, params = event.method, to_wire(event.params) or {}
        if method == "tools/call":
            self.calls.append(params)
            if params["name"] == "quick":
                return {"content": [{"type": "text", "text": "at once"}]}
            task = {"id": f"t{len(self.tasks) + 1}", "tool": params["name"]}
            task |= {"status": "working", "steps": 0, "asks": 0}
            self.tasks[task["id"]] = task
            if self.era == MODERN:
                return {"resultType": "task", **self._fields(task)}
            return {"task": self._fields(task)}
        if method == "tasks/list":
            return {"tasks": [self._fields(t) for t in self.tasks.values()]}
        task = self.tasks[params["taskId"]]
        if method == "tasks/get":
            self.gets += 1
            self._step(task)
            if task["tool"] == "confused":  # answers about another task
                return self._detailed({**task, "id": "elsewhere"})
            return self._detailed(task)
        if method == "tasks/update":
            self.updates.append(params["inputResponses"])
            task["status"] = "working"
            if task["tool"] == "nosy":
                task["asks"] += 1
                return {}
            task["answer"] = params["inputResponses"]["topic"]["content"]["which"]
            task["status"] = "working"
            return {}
        if method == "tasks/cancel":
            task["status"] = "cancelled"
            return {} if self.era == MODERN else self._fields(task)
        if method == "tasks/result":  # 2025-11-25: only asked once the task ended here
            if task["tool"] == "research":
                task["answer"] = "the city"
            return {"content": [{"type": "text", "text": f"done: {task.get('answer')}"}]}
        raise MCPError(-32601, f"Method not found: {method}")

    def push_status(self, task_id: str, status: str) -> None:
        """A 2025-11-25 `notifications/tasks/status` for a task, its status changed."""
        task = self.tasks[task_id]
        task["status"] = status
        self.session.apply(lambda conn: conn.send_task_status(self._fields(task)))

    # ---- the transport: an object with connect(config, **options), for Client(...)

    @contextlib.asynccontextmanager
    async def connect(self, config: Any, **options: Any) -> AsyncIterator[Any]:
        backend = current_backend()
        capabilities: dict[str, Any] = {"tools": {}}
        if self.era == MODERN:
            capabilities["extensions"] = {TASKS_EXTENSION: {}}
        else:
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        server_config = ServerConfig("board", capabilities=capabilities)
        client_stream, server_stream = memory_stream_pair()
        self.session = backend.Session(
            ServerConnection(server_config), server_stream, on_request=self.handle
        )
        async with anyio.create_task_group() as group:
            group.start_soon(serve_session, self.session)
            session = backend.Session(ClientConnection(config), client_stream, **options)
            try:
                async with session:
                    yield session
            finally:
                await self.session.aclose()


class Asked:
    """An elicitation callback that answers "the city" and records what it saw."""

    def __init__(self) -> None:
        self.contexts: list[ClientRequestContext] = []
        self.messages: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> Any:
        self.contexts.append(context)
        self.messages.append(params.message)
        return ElicitResult(action="accept", content={"which": "the city"})


def client(board: Board, **options: Any) -> Client:
    return Client(board, mode=board.era, tasks=True, **options)


# ------------------------------------------------------------------ 2026-07-28


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_modern_task_polls_asks_through_tasks_update_and_completes(
    anyio_backend: str,
) -> None:
    board, asked = Board(MODERN), Asked()
    with anyio.fail_after(HANG):
        async with client(board, elicitation_callback=asked) as c:
            handle = await c.call_tool("research", {"topic": "rome"}, task=True)
            assert isinstance(handle, TaskHandle)
            assert handle.task_id == "t1" and handle.status_value == "working"
            result = await handle.result()
    assert result.content[0].text == "Rome: the city"
    # One question, answered once through tasks/update under the server's key.
    assert asked.messages == ["Which Rome?"]
    assert asked.contexts[0].request_id == "topic"
    assert board.updates == [{"topic": {"action": "accept", "content": {"which": "the city"}}}]
    # The call declared the extension and carried no 2025-11-25 task param.
    assert "task" not in board.calls[0]
    assert handle.status_value == "completed"


async def test_modern_status_and_cancel(anyio_backend: str) -> None:
    board = Board(MODERN)
    with anyio.fail_after(HANG):
        async with client(board) as c:
            handle = await c.call_tool("slow", task=True)
            status = await handle.status()
            assert status.status == "working" and status.poll_interval_ms == 10
            await handle.cancel()
            with pytest.raises(TaskCancelledError) as caught:
                await handle.result()
    assert caught.value.task_id == "t1"
    assert board.tasks["t1"]["status"] == "cancelled"


async def test_modern_failed_task_raises_its_error(anyio_backend: str) -> None:
    board = Board(MODERN)
    with anyio.fail_after(HANG):
        async with client(board) as c:
            handle = await c.call_tool("broken", task=True)
            with pytest.raises(MCPError) as caught:
                await handle.result()
    assert caught.value.code == -32603 and caught.value.message == "the archive burned down"


async def test_modern_plain_call_follows_a_task_the_server_chose(anyio_backend: str) -> None:
    board = Board(MODERN)
    with anyio.fail_after(HANG):
        async with client(board, elicitation_callback=Asked()) as c:
            result = await c.call_tool("research", {"topic": "rome"})
            quick = await c.call_tool("quick", task=True)
            assert quick.task_id is None and quick.status_value == "completed"
            assert (await quick.result()).content[0].text == "at once"
    assert isinstance(result, CallToolResult)
    assert result.content[0].text == "Rome: the city"


async def test_modern_question_without_a_callback_cancels_the_task(anyio_backend: str) -> None:
    board = Board(MODERN)
    with anyio.fail_after(HANG):
        async with client(board) as c:  # no elicitation callback
            handle = await c.call_tool("research", task=True)
            with pytest.raises(MCPError) as caught:
                await handle.result()
    assert caught.value.code == -32601
    assert board.tasks["t1"]["status"] == "cancelled" and board.updates == []


async def test_modern_tasks_need_the_extension_declared(anyio_backend: str) -> None:
    board = Board(MODERN)
    with anyio.fail_after(HANG):
        async with Client(board, mode=MODERN) as c:
            with pytest.raises(ValueError, match="tasks=True"):
                await c.call_tool("slow", task=True)
            # No task param goes out on 2026-07-28, so the server decides; it gave one,
            # which a client without the extension refuses.
            with pytest.raises(MCPError, match="did not declare the tasks extension"):
                await c.call_tool("slow")
            with pytest.raises(LocalProtocolError):
                await c.task("t1").status()


# ------------------------------------------------------------------ 2025-11-25


async def test_legacy_task_polls_then_fetches_the_result(anyio_backend: str) -> None:
    board = Board("legacy")
    with anyio.fail_after(HANG):
        async with client(board) as c:
            handle = await c.call_tool("research", {"topic": "rome"}, task=True, ttl=30)
            result = await handle.result()
            listed = await c.list_tasks()
    assert board.calls[0]["task"] == {"ttl": 30_000}
    assert result.content[0].text == "done: the city"
    # input_required sent the client to tasks/result at once, as the spec says.
    assert board.gets == 2
    assert [t.task_id for t in listed.tasks] == ["t1"]


async def test_legacy_status_notification_wakes_the_poller(anyio_backend: str) -> None:
    # The server suggests polling once a minute; the client's ceiling keeps the
    # wait finite, and the notification ends it at once.
    board = Board("legacy", poll_ms=60_000)
    seen: list[str] = []

    async def on_status(params: Any) -> None:
        seen.append(params.status)

    with anyio.fail_after(HANG):
        async with client(board, task_status_callback=on_status, task_poll_bounds=(0.01, 30)) as c:
            handle = await c.call_tool("slow", task=True)
            async with anyio.create_task_group() as group:
                outcome: list[CallToolResult] = []

                async def wait() -> None:
                    outcome.append(await handle.result())

                group.start_soon(wait)
                await anyio.sleep(0)
                board.push_status("t1", "completed")
    assert outcome[0].content[0].text == "done: None"
    assert board.gets == 0  # no poll was needed
    assert seen == ["completed"]


async def test_a_plain_function_is_a_task_status_callback_too(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    """As `progress_callback` is: the Client sees it is not a coroutine function
    and calls it without awaiting its None, which would fail (logged as "callback
    failed"); the test above gives a coroutine function."""
    board = Board("legacy", poll_ms=60_000)
    seen: list[str] = []

    def on_status(params: Any) -> None:
        seen.append(params.status)

    with anyio.fail_after(HANG):
        async with client(board, task_status_callback=on_status, task_poll_bounds=(0.01, 30)) as c:
            handle = await c.call_tool("slow", task=True)
            async with anyio.create_task_group() as group:
                group.start_soon(handle.result)
                await anyio.sleep(0)
                board.push_status("t1", "completed")
    assert handle.status_value == "completed"
    assert seen == ["completed"]
    assert not [r for r in caplog.records if "callback failed" in r.getMessage()]


async def test_legacy_cancel(anyio_backend: str) -> None:
    board = Board("legacy")
    with anyio.fail_after(HANG):
        async with client(board) as c:
            handle = await c.call_tool("slow", task=True)
            cancelled = await handle.cancel()
            assert cancelled.status == "cancelled" and handle.status_value == "cancelled"
            with pytest.raises(TaskCancelledError):
                await handle.result()


def test_poll_bounds_and_ttl_are_checked() -> None:
    with pytest.raises(ValueError, match="task_poll_bounds"):
        Client("tcp://127.0.0.1:1", task_poll_bounds=(1.0, 0.5))
    with pytest.raises(ValueError, match="task_poll_bounds"):
        Client("tcp://127.0.0.1:1", task_poll_bounds=(0.0, 1.0))


async def test_ttl_needs_task(anyio_backend: str) -> None:
    board = Board("legacy")
    with anyio.fail_after(HANG):
        async with client(board) as c:
            with pytest.raises(ValueError, match="task=True"):
                await c.call_tool("slow", ttl=5)  # type: ignore[call-overload]
            with pytest.raises(ValueError, match="positive"):
                await c.call_tool("slow", task=True, ttl=-1)


# ------------------------------------------- 2025-11-25: tasks the client hosts

QUESTION = {
    "message": "Which Rome?",
    "requestedSchema": {"type": "object", "properties": {"which": {"type": "string"}}},
}


async def test_legacy_client_runs_the_servers_elicitation_as_a_task(anyio_backend: str) -> None:
    board = Board("legacy")
    release = anyio.Event()

    async def ask(context: ClientRequestContext, params: ElicitRequestParams) -> Any:
        await release.wait()
        return ElicitResult(action="accept", content={"which": "the city"})

    with anyio.fail_after(HANG):
        async with client(board, elicitation_callback=ask, limits=Limits(max_tasks=2)) as c:
            caps = c.config.capabilities_wire["tasks"]
            assert caps["requests"] == {"elicitation": {"create": {}}}
            ask_server = board.session.request
            created = await ask_server("elicitation/create", {**QUESTION, "task": {"ttl": 60_000}})
            task_id = created.task.task_id
            assert created.task.status == "working" and created.task.ttl == 60_000
            assert (await ask_server("tasks/get", {"taskId": task_id})).status == "working"
            listed = await ask_server("tasks/list")
            assert [t.task_id for t in listed.tasks] == [task_id]
            # A second task, cancelled by the server: its callback stops.
            other = await ask_server("elicitation/create", {**QUESTION, "task": {}})
            assert other.task.ttl == 3_600_000  # no TTL asked: the client's ceiling
            # The limit (Limits.max_tasks) refuses a third.
            with pytest.raises(MCPError, match="max_tasks"):
                await ask_server("elicitation/create", {**QUESTION, "task": {}})
            cancelled = await ask_server("tasks/cancel", {"taskId": other.task.task_id})
            assert cancelled.status == "cancelled"
            with pytest.raises(MCPError, match="cancelled"):
                await ask_server("tasks/result", {"taskId": other.task.task_id})
            with pytest.raises(MCPError) as caught:
                await ask_server("tasks/get", {"taskId": "nope"})
            assert caught.value.code == -32602
            # tasks/result waits for the answer.
            release.set()
            payload = to_wire(await ask_server("tasks/result", {"taskId": task_id}))
            assert payload["action"] == "accept" and payload["content"] == {"which": "the city"}
            assert payload["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
            assert (await ask_server("tasks/get", {"taskId": task_id})).status == "completed"


async def test_legacy_client_without_tasks_answers_plainly_and_refuses_tasks_requests(
    anyio_backend: str,
) -> None:
    board = Board("legacy")
    with anyio.fail_after(HANG):
        async with Client(board, mode="legacy", elicitation_callback=Asked()) as c:
            assert "tasks" not in c.config.capabilities_wire
            # The server may not ask for a task the client did not declare.
            with pytest.raises(LocalProtocolError):
                await board.session.request("elicitation/create", {**QUESTION, "task": {}})
            answer = await board.session.request("elicitation/create", QUESTION)
            assert answer.action == "accept"


async def test_legacy_progress_goes_on_after_the_task_was_created(anyio_backend: str) -> None:
    board = Board("legacy")
    seen: list[tuple[float, float | None, str | None]] = []
    got_two = anyio.Event()

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))
        if len(seen) == 2:
            got_two.set()

    with anyio.fail_after(HANG):
        async with client(board) as c:
            handle = await c.call_tool("slow", task=True, progress_callback=on_progress)
            send = board.session.apply
            assert send(lambda conn: conn.send_task_progress("t1", 1, 2, "half"))
            assert send(lambda conn: conn.send_task_progress("t1", 2, 2, "all"))
            await got_two.wait()
            board.push_status("t1", "completed")  # the token ends with the task
            assert not send(lambda conn: conn.send_task_progress("t1", 3, 3))
            await handle.result()
    assert seen == [(1, 2, "half"), (2, 2, "all")]


async def test_a_handle_by_id_follows_a_task_another_handle_created(anyio_backend: str) -> None:
    for era in (MODERN, "legacy"):
        board = Board(era)
        with anyio.fail_after(HANG):
            async with client(board, elicitation_callback=Asked()) as c:
                first = await c.call_tool("research", {"topic": "rome"}, task=True)
                assert c.task("t1") is first  # the client's own handle
            async with client(board, elicitation_callback=Asked()) as c:
                again = c.task("t1")  # a new connection knows the task by id only
                assert again.status_value == "working"
                result = await again.result()
        expected = "Rome: the city" if era == MODERN else "done: the city"
        assert result.content[0].text == expected


@pytest.mark.parametrize("era", [MODERN, "legacy"])
async def test_an_answer_about_another_task_fails_the_wait(anyio_backend: str, era: str) -> None:
    board = Board(era)
    with anyio.fail_after(HANG):
        async with client(board) as c:
            handle = await c.call_tool("confused", task=True)
            with pytest.raises(MCPError, match="answered about 'elsewhere'"):
                await handle.result()
    assert board.gets == 1


async def test_modern_a_task_that_keeps_asking_is_cancelled_after_max_input_rounds(
    anyio_backend: str,
) -> None:
    board, asked = Board(MODERN), Asked()
    with anyio.fail_after(HANG):
        async with client(board, elicitation_callback=asked, max_input_rounds=2) as c:
            handle = await c.call_tool("nosy", task=True)
            with pytest.raises(MCPError, match="2 rounds exceeded"):
                await handle.result()
    assert len(asked.messages) == 2 and [list(u) for u in board.updates] == [["q0"], ["q1"]]
    assert board.tasks["t1"]["status"] == "cancelled"


async def test_modern_a_malformed_result_is_the_servers_error(anyio_backend: str) -> None:
    board = Board(MODERN)
    with anyio.fail_after(HANG):
        async with client(board) as c:
            handle = await c.call_tool("garbled", task=True)
            with pytest.raises(
                MCPError, match="invalid result: the task's CallToolResult: content"
            ):
                await handle.result()
