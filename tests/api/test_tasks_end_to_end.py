"""Our Client's tasks against our MCPServer's tasks, in both eras (docs/tasks.md).

tests/api/test_client_tasks.py drives the Client against a server written on
`ServerConnection`, and tests/api/test_tasks_server.py drives MCPServer with a
raw peer; here the two halves of the library meet: `Client(..., tasks=True)`
in process against examples/tasks_server.py, on asyncio and trio.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from examples.tasks_server import mcp
from mcp_adapters.client import Client, ClientRequestContext, TaskCancelledError, TaskHandle
from mcp_core.types import ElicitRequestParams, ElicitResult
from tests.timing import HANG

pytestmark = pytest.mark.anyio

ERAS = ["legacy", "2026-07-28"]
BACKENDS = ["asyncio", "trio"]


class Approver:
    """An elicitation callback that answers `approve` and records the questions."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.messages: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> Any:
        self.messages.append(params.message)
        return ElicitResult(action="accept", content={"approve": self.approve})


@pytest.mark.parametrize("anyio_backend", BACKENDS)
@pytest.mark.parametrize("mode", ERAS)
async def test_a_task_that_asks_the_user_completes(anyio_backend: str, mode: str) -> None:
    """`approve` must run as a task and asks midway: the legacy path answers on
    tasks/result, 2026-07-28 through tasks/update; either way one question,
    through the Client's one elicitation callback, and the tool's own result."""
    approver = Approver(approve=mode == "legacy")
    with anyio.fail_after(HANG):
        async with Client(mcp, mode=mode, tasks=True, elicitation_callback=approver) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            handle = await client.call_tool("approve", {"item": "invoice 9"}, task=True)
            assert isinstance(handle, TaskHandle)
            assert handle.task_id is not None
            result = await handle.result()
            status = await handle.status()
    if mode == "legacy":  # 2025-11-25 says per tool; in the 2026 extension the server decides
        execution = tools["approve"].execution
        assert execution is not None and execution.task_support == "required"
    else:
        assert tools["approve"].execution is None
    expected = "approved" if mode == "legacy" else "not approved"
    assert result.content[0].text == f"invoice 9: {expected}"  # type: ignore[union-attr]
    assert approver.messages == ["Approve invoice 9?"]
    assert status.status == "completed"


@pytest.mark.parametrize("anyio_backend", BACKENDS)
@pytest.mark.parametrize("mode", ERAS)
async def test_a_task_is_cancelled(anyio_backend: str, mode: str) -> None:
    """`wait_forever` never ends by itself: tasks/cancel ends it, and the handle's
    result says so (TaskCancelledError), in both eras."""
    with anyio.fail_after(HANG):
        async with Client(mcp, mode=mode, tasks=True) as client:
            handle = await client.call_tool("wait_forever", {}, task=True)
            assert isinstance(handle, TaskHandle)
            await handle.cancel()
            with pytest.raises(TaskCancelledError):
                await handle.result()
            status = await handle.status()
    assert status.status == "cancelled"


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_a_legacy_task_is_listed_and_reports_progress(anyio_backend: str) -> None:
    """2025-11-25: `render` as a task keeps reporting progress to the call's
    callback after the handle came back, and tasks/list shows it."""
    progress: list[float] = []

    def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(HANG):
        async with Client(mcp, mode="legacy", tasks=True) as client:
            handle = await client.call_tool(
                "render", {"frames": 3}, task=True, progress_callback=on_progress
            )
            assert isinstance(handle, TaskHandle)
            listed = await client.list_tasks()
            result = await handle.result()
    assert handle.task_id in [task.task_id for task in listed.tasks]
    assert result.content[0].text == "rendered 3 frames"  # type: ignore[union-attr]
    assert progress[-1] == 3


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_a_modern_listen_stream_hears_of_the_task(anyio_backend: str) -> None:
    """2026-07-28: `listen(task_ids=...)` subscribes to `notifications/tasks` about
    that task; its cancellation arrives on the stream and at `task_status_callback`."""
    statuses: list[str] = []

    async def on_status(task: Any) -> None:
        statuses.append(task.status)

    with anyio.fail_after(HANG):
        async with Client(
            mcp, mode="2026-07-28", tasks=True, task_status_callback=on_status
        ) as client:
            handle = await client.call_tool("wait_forever", {}, task=True)
            assert isinstance(handle, TaskHandle) and handle.task_id is not None
            async with client.listen(task_ids=[handle.task_id]) as stream:
                await handle.cancel()
                async for event in stream:
                    if event.method == "notifications/tasks":
                        heard = event.params
                        if heard.status == "cancelled":
                            break
    assert heard.task_id == handle.task_id
    assert "cancelled" in statuses


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_a_legacy_task_reports_progress_over_http(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The same over Streamable HTTP on a loopback port: the Client stops observing
    plain answers once connected (the HTTP session can be told, as the stream sessions
    can) and observes them again only while a legacy task call follows its progress,
    so the progress after the handle came back still reaches the callback."""
    progress: list[float] = []

    def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with caplog.at_level(logging.INFO, logger="mcp_adapters"), anyio.fail_after(HANG):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: mcp.run_streamable_http_async(port=0))
            url = await served_url(caplog)
            async with Client(url, mode="legacy", tasks=True) as client:
                session: Any = client._session
                assert session.observe_responses is False  # plain answers: not observed
                handle = await client.call_tool(
                    "render", {"frames": 3}, task=True, progress_callback=on_progress
                )
                assert isinstance(handle, TaskHandle)
                result = await handle.result()
                assert session.observe_responses is False  # off again after the call
            group.cancel_scope.cancel()
    assert result.content[0].text == "rendered 3 frames"  # type: ignore[union-attr]
    assert progress[-1] == 3


async def served_url(caplog: pytest.LogCaptureFixture) -> str:
    """The address `run_streamable_http_async` logged once it listens."""
    while True:
        for record in caplog.records:
            message = record.getMessage()
            if message.startswith("serving ") and " on http://" in message:
                return message.rsplit(" ", 1)[1]
        await anyio.sleep(0.01)
