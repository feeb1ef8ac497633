"""Every try-it flow of the two seed pages, end to end, over real transports.

Transports: stdio (a server subprocess per client) and Streamable HTTP (a
server process per module); client modes: legacy and 2026-07-28. The texts
asserted are the pages' own.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import anyio
import pytest

from examples.seeds.callbacks import handle_list_roots, handle_sampling
from mcp_adapters import Client
from mcp_adapters.client import ClientRequestContext
from mcp_core import MCPError
from mcp_core.types import (
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
)
from tests.timing import HANG

from .conftest import ROOT, SEEDS, HTTPServer, HTTPServers, stdio

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]
TRANSPORTS = ["stdio", "http"]
# Two replicas behind nginx doing plain round robin (tests/cluster/harness.py): a
# 2026-07-28 retry lands on the other replica, which verifies the state the first
# sealed (shared key ring from the environment); a legacy session's requests
# alternate between them, held through the shared Redis store (MCP_STORE_URL).
BALANCED = [
    pytest.param("balanced", mode, id=f"balanced-{mode}") for mode in ("legacy", "2026-07-28")
]
# gunicorn -w 4 -k uvicorn_worker.UvicornWorker serving the seeds as ASGI apps, on
# the same Redis store, behind nginx opening a connection per request: a session's
# requests land on different workers (test_gunicorn_workers_shared_the_sessions).
GUNICORN = [
    pytest.param("gunicorn", mode, id=f"gunicorn-{mode}") for mode in ("legacy", "2026-07-28")
]
COMBINATIONS = [(t, m) for t in TRANSPORTS for m in MODES] + BALANCED + GUNICORN


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def target(transport: str, script: str, http_servers: HTTPServers) -> Any:
    if transport == "balanced":
        return http_servers.balanced(script).url
    if transport == "gunicorn":
        return http_servers.gunicorn(script)
    return stdio(script) if transport == "stdio" else http_servers[script].url


class Recorder:
    """A callback that answers with canned results and records what it was asked."""

    def __init__(self, *answers: ElicitResult) -> None:
        self.answers = list(answers)
        self.asked: list[ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        self.asked.append(params)
        return self.answers.pop(0)


@pytest.mark.parametrize(("transport", "mode"), COMBINATIONS)
async def test_book_table_asks_and_books_another_date(
    transport: str, mode: str, http_servers: HTTPServers
) -> None:
    answer = Recorder(
        ElicitResult(action="accept", content={"accept_alternative": True, "date": "2025-12-27"})
    )
    async with Client(
        target(transport, "bistro_form_server.py", http_servers),
        mode=mode,
        elicitation_callback=answer,
    ) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
        result = await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
    assert [p.message for p in answer.asked] == [
        "No tables for 2 on 2025-12-25. Would you like to try another date?"
    ]
    form = answer.asked[0]
    assert isinstance(form, ElicitRequestFormParams)
    assert form.requested_schema["required"] == ["accept_alternative"]
    assert form.requested_schema["properties"]["date"]["default"] == "2025-12-26"
    assert result.content[0].text == "Booked a table for 2 on 2025-12-27."
    assert result.is_error in (None, False)


@pytest.mark.parametrize(("transport", "mode"), COMBINATIONS)
async def test_pay_deposit_sends_the_user_to_a_url(
    transport: str, mode: str, http_servers: HTTPServers
) -> None:
    answer = Recorder(ElicitResult(action="accept"))
    async with Client(
        target(transport, "bistro_url_server.py", http_servers),
        mode=mode,
        elicitation_callback=answer,
    ) as client:
        result = await client.call_tool("pay_deposit", {"booking_id": "b-42"})
    (asked,) = answer.asked
    assert isinstance(asked, ElicitRequestURLParams)
    assert asked.url == "https://pay.example.com/deposit/b-42"
    if mode == "legacy":
        assert asked.elicitation_id == "deposit-b-42"
    else:
        assert asked.elicitation_id is None  # 2026-07-28 has no elicitationId
    assert result.content[0].text == "Complete the payment in your browser."


@pytest.mark.parametrize(("transport", "mode"), COMBINATIONS)
async def test_issue_card_with_an_auto_filling_callback(
    transport: str, mode: str, http_servers: HTTPServers
) -> None:
    answer = Recorder(ElicitResult(action="accept", content={"name": "Ada Lovelace"}))
    async with Client(
        target(transport, "library_server.py", http_servers), mode=mode, elicitation_callback=answer
    ) as client:
        result = await client.call_tool("issue_card")
    (asked,) = answer.asked
    assert asked.mode == "form"
    assert asked.message == "What name should go on the card?"
    assert asked.requested_schema["properties"]["name"] == {"title": "Name", "type": "string"}
    assert result.content[0].text == "Card issued to Ada Lovelace."


@pytest.mark.parametrize(("transport", "mode"), COMBINATIONS)
async def test_no_callback_means_elicitation_not_supported(
    transport: str, mode: str, http_servers: HTTPServers
) -> None:
    async with Client(target(transport, "library_server.py", http_servers), mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("issue_card")
    assert raised.value.message == "Elicitation not supported"


@pytest.mark.parametrize(("transport", "mode"), COMBINATIONS)
@pytest.mark.parametrize(
    ("callbacks", "expected"),
    [
        ({"elicitation_callback": Recorder()}, ["elicitation"]),
        (
            {
                "elicitation_callback": Recorder(),
                "sampling_callback": handle_sampling,
                "list_roots_callback": handle_list_roots,
            },
            ["elicitation", "sampling", "roots"],
        ),
        ({}, []),
    ],
    ids=["elicitation", "all-three", "none"],
)
async def test_client_features_reflect_the_registered_callbacks(
    transport: str,
    mode: str,
    callbacks: dict[str, Any],
    expected: list[str],
    http_servers: HTTPServers,
) -> None:
    async with Client(
        target(transport, "library_server.py", http_servers), mode=mode, **callbacks
    ) as client:
        result = await client.call_tool("client_features")
    assert result.structured_content == {"result": expected}


@pytest.mark.parametrize(("transport", "mode"), COMBINATIONS)
async def test_delete_folder_four_outcomes_and_no_round_trip_when_empty(
    transport: str, mode: str, http_servers: HTTPServers
) -> None:
    # One server process for the whole sequence (it really deletes): stdio spawns a
    # fresh one; for HTTP start a dedicated one so other tests do not interfere.
    # Through the balancer, each replica deletes in its own memory: a cluster of
    # its own for each mode, used by nothing else.
    server = HTTPServer("delete_folder_server.py") if transport == "http" else None
    try:
        if transport == "balanced":
            where: Any = http_servers.balanced("delete_folder_server.py", mode).url
        elif transport == "gunicorn":
            where = http_servers.gunicorn("delete_folder_server.py", mode)
        else:
            where = stdio("delete_folder_server.py") if server is None else server.url
        answer = Recorder(
            ElicitResult(action="accept", content={"ok": False}),
            ElicitResult(action="decline"),
            ElicitResult(action="cancel"),
            ElicitResult(action="accept", content={"ok": True}),
        )
        async with Client(where, mode=mode, elicitation_callback=answer) as client:
            empty = await client.call_tool("delete_folder", {"path": "/tmp/empty"})
            assert answer.asked == []  # resolved without a round trip
            texts = [empty.content[0].text]
            for _ in range(4):
                result = await client.call_tool("delete_folder", {"path": "/tmp/project"})
                texts.append(result.content[0].text)
        assert texts == [
            "deleted /tmp/empty",
            "kept the folder",
            "declined: folder not deleted",
            "cancelled: folder not deleted",
            "deleted /tmp/project",
        ]
        assert [p.message for p in answer.asked] == [
            "/tmp/project has 2 file(s). Delete anyway?"
        ] * 4
    finally:
        if server is not None:
            server.stop()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_seed_client_scripts_as_written(mode: str, http_servers: HTTPServers) -> None:
    """The pages' client programs, run as programs against the HTTP servers."""
    runs = [
        ("elicitation_client.py", "bistro_form_server.py", "book_table"),
        ("elicitation_client.py", "bistro_url_server.py", "pay_deposit"),
        ("library_client.py", "library_server.py", "issue_card"),
    ]
    outputs = []
    for client, server, tool in runs:
        done = subprocess.run(
            [sys.executable, str(SEEDS / client), http_servers[server].url, tool, f"--mode={mode}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert "No tables for 2 on 2025-12-25. Would you like to try another date?" in outputs[0]
    assert "Booked a table for 2 on 2025-12-27." in outputs[0]
    assert "Open this link to continue: https://pay.example.com/deposit/b-42" in outputs[1]
    assert "Complete the payment in your browser." in outputs[1]
    assert "Card issued to Ada Lovelace." in outputs[2]


async def test_gunicorn_workers_shared_the_sessions(http_servers: HTTPServers) -> None:
    """Under gunicorn, one legacy session's requests were served by different
    worker processes (the access log has each response's `X-Worker-Pid`): the
    question asked by one worker was answered through another, over the store.

    Which worker accepts a connection is the kernel's choice, so a session may
    by chance stay on one: up to five sessions are run, and one must cross."""
    url = http_servers.gunicorn("bistro_form_server.py")
    crossed: set[str] = set()
    sessions: dict[str, set[str]] = {}
    for _ in range(5):
        answer = Recorder(
            ElicitResult(
                action="accept", content={"accept_alternative": True, "date": "2025-12-27"}
            )
        )
        async with Client(url, mode="legacy", elicitation_callback=answer) as client:
            result = await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
            session = client.session.session_id
        assert result.content[0].text == "Booked a table for 2 on 2025-12-27."
        assert session is not None
        # nginx writes a line once the response has gone out, which may trail the
        # client's answer: wait (bounded) for the DELETE that closed the session.
        await wait_for_line(http_servers, session)
        for hit in http_servers.gunicorn_hits():
            # 499 is nginx's own line for a request the client closed before any
            # response came (the GET stream the client cancels as it leaves, on a
            # loaded machine): no worker answered it, so it names none.
            if hit.session != "-" and hit.status != 499:
                sessions.setdefault(hit.session, set()).add(hit.worker)
        crossed = sessions[session]
        if len(crossed) > 1:
            break
    assert len(crossed) > 1, sessions
    # Every response a worker made names it.
    assert all(worker.isdigit() for worker in crossed), http_servers.gunicorn_hits()


async def wait_for_line(http_servers: HTTPServers, session: str) -> None:
    with anyio.fail_after(HANG):
        while not any(
            h.session == session and h.method == "DELETE" for h in http_servers.gunicorn_hits()
        ):
            await anyio.sleep(0.05)
