"""Our `Client` and the tasks of the official "everything" reference server.

`@modelcontextprotocol/server-everything` 2026.8.31 (node/package.json, pinned;
the TypeScript SDK 1.x inside) speaks 2025-11-25 tasks (SEP-1686) both ways:

- `simulate-research-query` runs only as a task (`execution.taskSupport:
  "required"`), takes about four seconds (four stages of one second), and, when
  `ambiguous`, turns `input_required` and asks an `elicitation/create` tied to
  the task (related-task `_meta`), delivered while the client waits in
  `tasks/result`;
- `trigger-elicitation-request-async` and `trigger-sampling-request-async`
  exist only for a client that declares `tasks.requests.elicitation.create` /
  `sampling.createMessage`: the server asks the client to run its callback as
  a task, polls the client's `tasks/get` and fetches `tasks/result`.

Each runs from our Client over stdio (the Client starts `dist/index.js stdio`)
and over Streamable HTTP (`dist/index.js streamableHttp`, `PORT` from the
environment, one server for the module). Node comes from scripts/node-env.sh;
without npm these tests fail, saying so.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from mcp_adapters.client import Client, ClientRequestContext, TaskCancelledError
from mcp_core import RELATED_TASK_META_KEY
from mcp_core.types import CreateMessageResult, ElicitRequestParams, ElicitResult, TextContent
from tests.timing import HANG

from .conftest import ROOT, http_servers, our_stdio

pytestmark = pytest.mark.anyio

EVERYTHING = ROOT / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything"
ENTRY = EVERYTHING / "dist" / "index.js"


@pytest.fixture(scope="module")
def node() -> str:
    done = subprocess.run(
        [str(ROOT / "scripts" / "node-env.sh")],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, (
        "the everything server needs npm (scripts/node-env.sh installs node/package-lock.json "
        f"and Node 22):\n{done.stderr}"
    )
    assert ENTRY.exists(), f"{ENTRY} is missing: is server-everything in node/package.json?"
    return done.stdout.strip()


@pytest.fixture(scope="module")
def http_url(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    argv = ["env", "PORT={port}", node, str(ENTRY), "streamableHttp"]
    with http_servers({"everything": argv}, tmp_path_factory.mktemp("everything")) as servers:
        yield servers["everything"].url


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, node: str) -> Any:
    if request.param == "http":
        return request.getfixturevalue("http_url")
    return our_stdio([node, str(ENTRY), "stdio"])


class Callbacks:
    """The user: answers the server's questions, records what it was asked and shown."""

    def __init__(self) -> None:
        self.elicited: list[tuple[str, dict[str, Any] | None]] = []
        self.sampled: list[str] = []
        self.statuses: list[tuple[str, str]] = []

    async def elicit(self, context: ClientRequestContext, params: ElicitRequestParams) -> Any:
        self.elicited.append((params.message, context.meta))
        if "research query" in params.message:
            return ElicitResult(action="accept", content={"interpretation": "programming"})
        return ElicitResult(action="accept", content={"name": "Ada", "favoriteColor": "Green"})

    async def sample(self, context: ClientRequestContext, params: Any) -> Any:
        self.sampled.append(params.messages[0].content.text)
        text = TextContent(type="text", text="a sampled answer")
        return CreateMessageResult(role="assistant", content=text, model="test-model")

    async def status(self, params: Any) -> None:
        self.statuses.append((params.task_id, params.status))

    def client(self, target: Any) -> Client:
        return Client(
            target,
            tasks=True,
            elicitation_callback=self.elicit,
            sampling_callback=self.sample,
            task_status_callback=self.status,
        )


async def test_research_task_and_the_servers_tasks_on_our_callbacks(target: Any) -> None:
    user = Callbacks()
    texts: dict[str, str] = {}
    with anyio.fail_after(HANG):
        async with user.client(target) as client:
            assert client.protocol_version == "2025-11-25"
            assert client.server_capabilities.tasks.requests.tools.call is not None
            handle = await client.call_tool(
                "simulate-research-query", {"topic": "python", "ambiguous": True}, task=True
            )
            assert handle.status_value == "working"

            async def plain(name: str, arguments: dict[str, Any]) -> None:
                result = await client.call_tool(name, arguments)
                texts[name] = "\n".join(c.text for c in result.content)

            # The server's own tasks on our callbacks run while the research works.
            async with anyio.create_task_group() as group:
                group.start_soon(plain, "trigger-elicitation-request-async", {})
                group.start_soon(plain, "trigger-sampling-request-async", {"prompt": "hi"})
                report = await handle.result()
            listed = await client.list_tasks()
    assert "# Research Report: python (programming)" in report.content[0].text
    # The research asked once, through the task: the question names it.
    research = [meta for message, meta in user.elicited if "research query" in message]
    assert research == [{RELATED_TASK_META_KEY: {"taskId": handle.task_id}}]
    assert (handle.task_id, "input_required") in user.statuses
    assert any(t.task_id == handle.task_id and t.status == "completed" for t in listed.tasks)
    # The server ran our callbacks as tasks it polled, and read their results.
    assert (
        "[COMPLETED] User provided the requested information!"
        in texts["trigger-elicitation-request-async"]
    )
    assert "- Name: Ada" in texts["trigger-elicitation-request-async"]
    assert "[COMPLETED] Async sampling completed!" in texts["trigger-sampling-request-async"]
    assert "a sampled answer" in texts["trigger-sampling-request-async"]
    assert user.sampled == ["Resource trigger-sampling-request-async context: hi"]


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_cancel_a_research_task(anyio_backend: str, node: str) -> None:
    target = our_stdio([node, str(ENTRY), "stdio"])
    with anyio.fail_after(HANG):
        async with Client(target, tasks=True) as client:
            handle = await client.call_tool("simulate-research-query", {"topic": "x"}, task=True)
            cancelled = await handle.cancel()
            assert cancelled.status == "cancelled"
            with pytest.raises(TaskCancelledError):
                await handle.result()
            assert (await handle.status()).status == "cancelled"


async def test_task_only_tool_and_client_task_tools_need_declaring(node: str) -> None:
    target = our_stdio([node, str(ENTRY), "stdio"])
    with anyio.fail_after(HANG):
        async with Client(target, elicitation_callback=Callbacks().elicit) as client:
            result = await client.call_tool("simulate-research-query", {"topic": "x"})
            names = {tool.name for tool in (await client.list_tools()).tools}
    # Called without a task, the task-only tool says so (as a tool error, the SDK's way).
    assert result.is_error and "requires task augmentation" in result.content[0].text
    # A client that does not declare tasks is not offered the tools that need it.
    assert "trigger-elicitation-request-async" not in names
