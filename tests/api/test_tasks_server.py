"""Tool calls run as tasks, on the server, in both eras (docs/tasks.md).

The client here is a raw peer writing JSON-RPC lines to a real server session
(the backend's stream driver over an in-process pipe), so every message the
server sends is seen and checked against the official schemas (the tasks
extension's excerpt for 2026-07-28).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pydantic
import pytest

from mcp_adapters import current_backend
from mcp_adapters.server import Context, MCPServer, TaskSettings
from mcp_adapters.server._serve import request_handler
from mcp_adapters.store import InMemoryStore, MemoryHub, StoreLimits
from mcp_core import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION
from mcp_core.tasks import RELATED_TASK_META_KEY, TASKS_EXTENSION
from tests.api.conftest import memory_stream_pair, serve_session
from tests.schema_check import validate_message
from tests.timing import HANG

pytestmark = pytest.mark.anyio

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
EXT = {"extensions": {TASKS_EXTENSION: {}}}
FAST = TaskSettings(poll_interval=0.02)


class Name(pydantic.BaseModel):
    name: str


def make_server(store: Any = None, settings: TaskSettings = FAST) -> MCPServer:
    mcp = MCPServer("tasks-test", store=store, tasks=settings)
    gate = anyio.Event()
    mcp.gate = gate  # type: ignore[attr-defined]

    @mcp.tool(task="optional")
    async def slow(text: str) -> str:
        """Waits for the test's gate, then echoes."""
        await gate.wait()
        return f"done: {text}"

    @mcp.tool(task="required")
    async def greet(ctx: Context) -> str:
        """Asks the user's name, as any tool would."""
        answer = await ctx.elicit("Your name?", Name)
        if answer.action != "accept":
            return "no name"
        return f"Hello, {answer.data.name}!"

    @mcp.tool(task="optional")
    async def broken() -> str:
        from mcp_core import MCPError

        raise MCPError(-32603, "the backend is down")

    @mcp.tool(task="optional")
    async def forever() -> str:
        await anyio.sleep_forever()
        return "never"  # pragma: no cover

    @mcp.tool(task="optional")
    async def progressing(ctx: Context) -> str:
        await gate.wait()
        assert await ctx.report_progress(1, 2, "half")
        return "progressed"

    @mcp.tool()
    def plain() -> str:
        return "plain"

    return mcp


class Peer:
    """A raw client on one connection: it writes lines and reads every message."""

    def __init__(self, stream: Any, revision: str, caps: dict[str, Any] | None = None) -> None:
        self.stream = stream
        self.revision = revision
        self.caps = caps if caps is not None else {}
        self.buffer = b""
        self.next_id = 0
        self.seen: list[dict[str, Any]] = []  # every message the server sent
        self.methods: dict[Any, str] = {}

    async def send(self, message: dict[str, Any]) -> None:
        await self.stream.send_all(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(HANG):
            while b"\n" not in self.buffer:
                chunk = await self.stream.receive_some(65536)
                assert chunk, "the server closed the connection"
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        self.seen.append(message)
        validate_message(
            message,
            self.revision,
            sender="server",
            request_method=self.methods.get(message.get("id")),  # type: ignore[arg-type]
        )
        return message

    def params(self, params: dict[str, Any] | None, caps: dict[str, Any] | None) -> dict[str, Any]:
        out = dict(params or {})
        if self.revision == MODERN:
            out["_meta"] = {
                **out.get("_meta", {}),
                META_PROTOCOL_VERSION: MODERN,
                META_CLIENT_CAPABILITIES: self.caps if caps is None else caps,
                META_CLIENT_INFO: {"name": "raw", "version": "1"},
            }
        return out

    async def start(
        self, method: str, params: dict[str, Any] | None = None, caps: dict[str, Any] | None = None
    ) -> int:
        self.next_id += 1
        self.methods[self.next_id] = method
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": method,
                "params": self.params(params, caps),
            }
        )
        return self.next_id

    async def until(self, rid: Any) -> dict[str, Any]:
        """Read until the answer to `rid` (other messages stay in `seen`)."""
        while True:
            message = await self.receive()
            if message.get("id") == rid and "method" not in message:
                return message

    async def call(
        self, method: str, params: dict[str, Any] | None = None, caps: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return await self.until(await self.start(method, params, caps))

    async def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = await self.call(method, params)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    async def initialize(self) -> dict[str, Any]:
        answer = await self.call(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": self.caps,
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result: dict[str, Any] = answer["result"]
        return result

    async def poll(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """tasks/get until the task shows one of `statuses`."""
        with anyio.fail_after(HANG):
            while True:
                got = await self.result("tasks/get", {"taskId": task_id})
                if got["status"] in statuses:
                    return got
                await anyio.sleep(0.01)


@contextlib.asynccontextmanager
async def connected(
    mcp: MCPServer, revision: str, caps: dict[str, Any] | None = None, principal: str | None = None
) -> AsyncIterator[Peer]:
    """A raw peer on a fresh connection to `mcp` (which must be running), as
    `principal` when given (what an authenticating transport would say)."""
    backend = current_backend()
    client_end, server_end = memory_stream_pair()
    connection = mcp.new_connection(principal=principal)
    session = backend.Session(connection, server_end, on_request=request_handler(mcp))
    async with anyio.create_task_group() as group:
        group.start_soon(serve_session, session)
        peer = Peer(client_end, revision, caps)
        if revision == LEGACY:
            await peer.initialize()
        try:
            yield peer
        finally:
            await client_end.aclose()
            with anyio.fail_after(HANG):
                await session.aclose()


# ------------------------------------------------------------------ 2025-11-25


async def test_legacy_capabilities_and_task_support_in_tools_list() -> None:
    mcp = make_server()
    async with mcp.running(), connected(mcp, LEGACY) as peer:
        init = await peer.call(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        )
        assert "error" in init  # already initialized by `connected`
        tools = {t["name"]: t for t in (await peer.result("tools/list"))["tools"]}
        assert tools["slow"]["execution"] == {"taskSupport": "optional"}
        assert tools["greet"]["execution"] == {"taskSupport": "required"}
        assert "execution" not in tools["plain"]
    caps = mcp.config.capabilities
    assert caps["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


async def test_legacy_task_runs_detached_and_its_result_comes_from_tasks_result() -> None:
    mcp = make_server()
    async with mcp.running(), connected(mcp, LEGACY) as peer:
        created = await peer.result(
            "tools/call", {"name": "slow", "arguments": {"text": "hi"}, "task": {"ttl": 60_000}}
        )
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] == 60_000
        got = await peer.result("tasks/get", {"taskId": task["taskId"]})
        assert got["status"] == "working"
        listed = await peer.result("tasks/list")
        assert [t["taskId"] for t in listed["tasks"]] == [task["taskId"]]
        rid = await peer.start("tasks/result", {"taskId": task["taskId"]})
        mcp.gate.set()  # type: ignore[attr-defined]
        answer = await peer.until(rid)
        assert answer["result"]["content"] == [{"type": "text", "text": "done: hi"}]
        assert answer["result"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": task["taskId"]}
        assert (await peer.result("tasks/get", {"taskId": task["taskId"]}))["status"] == "completed"
        statuses = [
            m["params"]["status"]
            for m in peer.seen
            if m.get("method") == "notifications/tasks/status"
        ]
        assert statuses == ["completed"]


async def test_legacy_task_asks_on_the_tasks_result_stream() -> None:
    mcp = make_server()
    caps = {"elicitation": {"form": {}}}
    async with mcp.running(), connected(mcp, LEGACY, caps) as peer:
        created = await peer.result("tools/call", {"name": "greet", "task": {}})
        task_id = created["task"]["taskId"]
        await peer.poll(task_id, "input_required")
        rid = await peer.start("tasks/result", {"taskId": task_id})
        while True:
            question = await peer.receive()
            if question.get("method") == "elicitation/create":
                break
        assert question["params"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": task_id}
        assert question["params"]["message"] == "Your name?"
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
        )
        answer = await peer.until(rid)
        assert answer["result"]["content"][0]["text"] == "Hello, Ada!"


async def test_legacy_refusals() -> None:
    mcp = make_server()
    async with mcp.running(), connected(mcp, LEGACY) as peer:
        # A required-task tool called plainly, a forbidden one as a task.
        assert (await peer.call("tools/call", {"name": "greet"}))["error"]["code"] == -32601
        plain = await peer.call("tools/call", {"name": "plain", "task": {}})
        assert plain["error"]["code"] == -32601
        missing = await peer.call("tasks/get", {"taskId": "nope"})
        assert missing["error"]["code"] == -32602
        bad_cursor = await peer.call("tasks/list", {"cursor": "x"})
        assert bad_cursor["error"]["code"] == -32602


async def test_legacy_cancel_a_failed_task_and_ttl_clamping() -> None:
    mcp = make_server(settings=TaskSettings(poll_interval=0.02, max_ttl=30.0))
    async with mcp.running(), connected(mcp, LEGACY) as peer:
        created = await peer.result("tools/call", {"name": "forever", "task": {"ttl": 10**9}})
        task = created["task"]
        assert task["ttl"] == 30_000  # clamped to the server's bound
        cancelled = await peer.result("tasks/cancel", {"taskId": task["taskId"]})
        assert cancelled["status"] == "cancelled"
        again = await peer.call("tasks/cancel", {"taskId": task["taskId"]})
        assert again["error"]["code"] == -32602
        result = await peer.call("tasks/result", {"taskId": task["taskId"]})
        assert result["error"]["code"] == -32602
        failing = (await peer.result("tools/call", {"name": "broken", "task": {}}))["task"]
        failed = await peer.call("tasks/result", {"taskId": failing["taskId"]})
        assert failed["error"] == {"code": -32603, "message": "the backend is down"}
        assert (await peer.poll(failing["taskId"], "failed"))["status"] == "failed"


# ------------------------------------------------------------------ 2026-07-28


async def test_modern_task_only_for_a_request_declaring_the_extension() -> None:
    mcp = make_server()
    async with mcp.running(), connected(mcp, MODERN, EXT) as peer:
        discover = await peer.result("server/discover")
        assert discover["capabilities"]["extensions"] == {TASKS_EXTENSION: {}}
        tools = {t["name"]: t for t in (await peer.result("tools/list"))["tools"]}
        assert "execution" not in tools["slow"]
        # Without the extension: an optional tool answers inline, a required one
        # is refused with -32021 naming the extension, and tasks/* are refused too.
        mcp.gate.set()  # type: ignore[attr-defined]
        inline = await peer.call(
            "tools/call", {"name": "slow", "arguments": {"text": "a"}}, caps={}
        )
        assert inline["result"]["content"][0]["text"] == "done: a"
        refused = await peer.call("tools/call", {"name": "greet"}, caps={})
        assert refused["error"]["code"] == -32021
        assert refused["error"]["data"] == {"requiredCapabilities": EXT}
        poll = await peer.call("tasks/get", {"taskId": "x"}, caps={})
        assert poll["error"]["code"] == -32021
        # With it: a task.
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"text": "b"}})
        assert created["resultType"] == "task" and created["status"] == "working"
        done = await peer.poll(created["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "done: b"
        assert done["resultType"] == "complete"


async def test_modern_input_required_answered_by_tasks_update() -> None:
    mcp = make_server()
    caps = {**EXT, "elicitation": {"form": {}}}
    async with mcp.running(), connected(mcp, MODERN, caps) as peer:
        created = await peer.result("tools/call", {"name": "greet"})
        task_id = created["taskId"]
        waiting = await peer.poll(task_id, "input_required")
        ((key, question),) = waiting["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        ack = await peer.result(
            "tasks/update",
            {
                "taskId": task_id,
                "inputResponses": {key: {"action": "accept", "content": {"name": "Bo"}}},
            },
        )
        assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
        done = await peer.poll(task_id, "completed")
        assert done["result"]["content"][0]["text"] == "Hello, Bo!"


async def test_modern_cancel_and_failure() -> None:
    mcp = make_server()
    async with mcp.running(), connected(mcp, MODERN, EXT) as peer:
        created = await peer.result("tools/call", {"name": "forever"})
        await peer.result("tasks/cancel", {"taskId": created["taskId"]})
        assert (await peer.poll(created["taskId"], "cancelled"))["status"] == "cancelled"
        await peer.result("tasks/cancel", {"taskId": created["taskId"]})  # still an ack
        failing = await peer.result("tools/call", {"name": "broken"})
        failed = await peer.poll(failing["taskId"], "failed")
        assert failed["error"] == {"code": -32603, "message": "the backend is down"}
        missing = await peer.call("tasks/update", {"taskId": "nope", "inputResponses": {}})
        assert missing["error"]["code"] == -32602


async def test_a_task_outlives_its_connection_and_is_read_on_another_replica() -> None:
    """Two servers sharing a store stand for two replicas: the task created on one
    is polled on the other, after the creating connection closed; a cancel
    written on the second stops the body running on the first."""
    hub = MemoryHub()
    first = make_server(InMemoryStore(hub=hub))
    second = make_server(InMemoryStore(hub=hub))
    async with first.running(), second.running():
        async with connected(first, MODERN, EXT) as peer:
            created = await peer.result("tools/call", {"name": "slow", "arguments": {"text": "x"}})
            stopping = await peer.result("tools/call", {"name": "forever"})
        assert first.tasks.running_count == 2
        async with connected(second, MODERN, EXT) as other:
            assert (await other.result("tasks/get", {"taskId": created["taskId"]}))[
                "status"
            ] == "working"
            first.gate.set()  # type: ignore[attr-defined]
            done = await other.poll(created["taskId"], "completed")
            assert done["result"]["content"][0]["text"] == "done: x"
            await other.result("tasks/cancel", {"taskId": stopping["taskId"]})
            with anyio.fail_after(HANG):
                while first.tasks.running_count:
                    await anyio.sleep(0.01)


async def test_a_task_past_its_ttl_is_gone() -> None:
    mcp = make_server(settings=TaskSettings(poll_interval=0.02, min_ttl=0.05, default_ttl=0.05))
    async with mcp.running(), connected(mcp, MODERN, EXT) as peer:
        created = await peer.result("tools/call", {"name": "forever"})
        assert created["ttlMs"] == 50
        with anyio.fail_after(HANG):
            while True:
                got = await peer.call("tasks/get", {"taskId": created["taskId"]})
                if "error" in got:
                    break
                await anyio.sleep(0.02)
        assert got["error"]["code"] == -32602
        # The body is cancelled at the TTL too (the loop's clock, which may trail
        # the store's wall clock by a moment).
        with anyio.fail_after(HANG):
            while mcp.tasks.running_count:
                await anyio.sleep(0.01)


async def test_too_many_tasks_are_refused_and_results_are_bounded() -> None:
    mcp = make_server(settings=TaskSettings(poll_interval=0.02, max_running=1, max_result_bytes=10))
    async with mcp.running(), connected(mcp, MODERN, EXT) as peer:
        first = await peer.result(
            "tools/call", {"name": "slow", "arguments": {"text": "long enough"}}
        )
        refused = await peer.call("tools/call", {"name": "forever"})
        assert refused["error"]["code"] == -32603
        mcp.gate.set()  # type: ignore[attr-defined]
        failed = await peer.poll(first["taskId"], "failed")
        assert "limit" in failed["error"]["message"]


async def test_tasks_need_the_server_served() -> None:
    mcp = make_server()
    # A session without `mcp.running()` around it: no task group to detach into.
    async with connected(mcp, MODERN, EXT) as peer:
        refused = await peer.call("tools/call", {"name": "forever"})
        assert refused["error"]["code"] == -32603
        assert "running" in refused["error"]["message"]


async def test_modern_status_notifications_on_a_listen_stream() -> None:
    mcp = make_server()
    async with mcp.running(), connected(mcp, MODERN, EXT) as peer:
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"text": "n"}})
        task_id = created["taskId"]
        # Asking for task notifications without the extension: -32021.
        refused = await peer.call(
            "subscriptions/listen", {"notifications": {"taskIds": [task_id]}}, caps={}
        )
        assert refused["error"]["code"] == -32021
        listen = await peer.start("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
        ack = await peer.receive()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}
        mcp.gate.set()  # type: ignore[attr-defined]
        with anyio.fail_after(HANG):
            while True:
                message = await peer.receive()
                if message.get("method") == "notifications/tasks":
                    break
        assert message["params"]["taskId"] == task_id
        assert message["params"]["status"] == "completed"
        assert message["params"]["result"]["content"][0]["text"] == "done: n"
        assert message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen


async def test_legacy_progress_after_creation_is_tagged_with_the_task() -> None:
    mcp = make_server()
    async with mcp.running(), connected(mcp, LEGACY) as peer:
        created = await peer.result(
            "tools/call", {"name": "progressing", "task": {}, "_meta": {"progressToken": "p1"}}
        )
        task_id = created["task"]["taskId"]
        rid = await peer.start("tasks/result", {"taskId": task_id})
        mcp.gate.set()  # type: ignore[attr-defined]
        answer = await peer.until(rid)
        assert answer["result"]["content"][0]["text"] == "progressed"
        (progress,) = [m for m in peer.seen if m.get("method") == "notifications/progress"]
        assert progress["params"]["progressToken"] == "p1"
        assert progress["params"]["message"] == "half"
        assert progress["params"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": task_id}


async def test_a_full_task_store_refuses_the_call() -> None:
    mcp = make_server(InMemoryStore(limits=StoreLimits(max_tasks=1)))
    async with mcp.running(), connected(mcp, MODERN, EXT) as peer:
        await peer.result("tools/call", {"name": "forever"})
        refused = await peer.call("tools/call", {"name": "forever"})
        assert refused["error"]["code"] == -32603
        assert "at most 1 tasks" in refused["error"]["message"]


async def test_nested_serving_shares_one_task_group() -> None:
    mcp = make_server()
    async with mcp.running():
        async with mcp.running(), connected(mcp, MODERN, EXT) as peer:
            created = await peer.result("tools/call", {"name": "slow", "arguments": {"text": "z"}})
        # The inner way of serving ended; the task it started goes on in the outer's group.
        async with connected(mcp, MODERN, EXT) as peer:
            mcp.gate.set()  # type: ignore[attr-defined]
            done = await peer.poll(created["taskId"], "completed")
            assert done["result"]["content"][0]["text"] == "done: z"


async def test_a_principals_task_is_hidden_from_everyone_else() -> None:
    mcp = make_server()
    async with mcp.running():
        async with connected(mcp, LEGACY, principal="alice") as alice:
            created = await alice.result("tools/call", {"name": "forever", "task": {}})
            task_id = created["task"]["taskId"]
            assert (await alice.result("tasks/get", {"taskId": task_id}))["status"] == "working"
        for who in ("bob", None):
            async with connected(mcp, LEGACY, principal=who) as other:
                assert (await other.call("tasks/get", {"taskId": task_id}))["error"][
                    "code"
                ] == -32602
                assert (await other.call("tasks/cancel", {"taskId": task_id}))["error"][
                    "code"
                ] == -32602
                assert (await other.result("tasks/list"))["tasks"] == []
        async with connected(mcp, LEGACY, principal="alice") as again:
            # Another connection of the same principal: the task and the list are there.
            listed = await again.result("tasks/list")
            assert [t["taskId"] for t in listed["tasks"]] == [task_id]
            assert (await again.result("tasks/cancel", {"taskId": task_id}))[
                "status"
            ] == "cancelled"
