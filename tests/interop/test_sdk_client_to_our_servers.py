"""The official SDK's `Client` (mcp 2.3.0) calling OUR seed servers (examples/seeds).

Transports: Streamable HTTP (our servers as subprocesses, `python -m
mcp_adapters run FILE --transport http --port P`) and stdio (the SDK's own
stdio transport spawning `python -m mcp_adapters run FILE`). SDK modes:
`mode="legacy"` (initialize, 2025-11-25) and the SDK's default (`mode="auto"`:
it probes `server/discover` and settles on 2026-07-28 with our servers).

Over HTTP every test opens its own SDK client. Over stdio one SDK client per
(server, mode) is shared by the module's tests (a spawn costs about a second on
a loaded machine); each test resets what its callbacks answer and record. The
delete_folder sequence really deletes, so each delete_folder server process
sees it once and nothing else: one HTTP server per mode, and over stdio each
mode's own shared process.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitCompleteNotification,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
    Root,
    TextContent,
)
from pydantic import FileUrl

from tests.timing import HANG

from .conftest import (
    SEEDS,
    ServerProcess,
    held_open,
    http_servers,
    our_http,
    our_server_argv,
    sdk_stdio,
)

pytestmark = pytest.mark.anyio

MODES = ["legacy", "default"]
TRANSPORTS = ["http", "stdio"]
VERSION = {"legacy": "2025-11-25", "default": "2026-07-28"}

FORM = SEEDS / "bistro_form_server.py"
URL = SEEDS / "bistro_url_server.py"
LIBRARY = SEEDS / "library_server.py"
DELETE = SEEDS / "delete_folder_server.py"
SHARED = {"form": FORM, "url": URL, "library": LIBRARY}
STDIO = {**SHARED, "delete": DELETE}


def sdk_client(target: Any, mode: str, **callbacks: Any) -> Client:
    """The SDK's Client; `default` passes no `mode` (the SDK's own default, "auto")."""
    if mode != "default":
        callbacks["mode"] = mode
    return Client(target, **callbacks)


@dataclass
class Peer:
    """An SDK client plus what its callbacks were asked and what it was told."""

    answers: list[ElicitResult] = field(default_factory=list)
    asked: list[ElicitRequestParams] = field(default_factory=list)
    notifications: list[Any] = field(default_factory=list)
    client: Client | None = None

    def expect(self, *answers: ElicitResult) -> Peer:
        self.answers = list(answers)
        self.asked.clear()
        self.notifications.clear()
        return self

    async def elicitation_callback(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        self.asked.append(params)
        return self.answers.pop(0)

    async def message_handler(self, message: Any) -> None:
        self.notifications.append(message)  # notifications, and transport exceptions

    def connect(self, target: Any, mode: str) -> Client:
        self.client = sdk_client(
            target,
            mode,
            elicitation_callback=self.elicitation_callback,
            message_handler=self.message_handler,
        )
        return self.client

    @property
    def sdk(self) -> Client:
        assert self.client is not None
        return self.client


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ServerProcess]]:
    specs = {name: our_http(script) for name, script in SHARED.items()}
    for mode in MODES:
        specs[f"delete-{mode}"] = our_http(DELETE)  # one per mode: the sequence deletes
    with http_servers(specs, tmp_path_factory.mktemp("our-servers")) as started:
        yield started


@pytest.fixture(scope="module")
async def stdio_peers(anyio_backend: str) -> AsyncIterator[dict[tuple[str, str], Peer]]:
    """One SDK client per (seed server, mode) over stdio, shared by the module."""
    peers = {(name, mode): Peer() for name in STDIO for mode in MODES}
    clients = {
        (name, mode): peer.connect(sdk_stdio(our_server_argv(STDIO[name]), "module"), mode)
        for (name, mode), peer in peers.items()
    }
    async with held_open(clients):
        yield peers


@pytest.fixture
def peer(request: pytest.FixtureRequest, transport: str, mode: str) -> Any:
    """`async with peer(name) as p:`, an SDK client on the seed server `name`."""
    # Module fixtures are resolved here (a sync fixture), not inside the running test.
    shared = request.getfixturevalue("stdio_peers") if transport == "stdio" else None
    servers = request.getfixturevalue("servers") if transport == "http" else None

    @contextlib.asynccontextmanager
    async def open_peer(name: str) -> AsyncIterator[Peer]:
        if shared is not None:
            yield shared[name, mode].expect()
            return
        fresh = Peer()
        url = servers[f"delete-{mode}" if name == "delete" else name].url
        async with fresh.connect(url, mode):
            yield fresh

    return open_peer


def text(result: Any) -> str:
    (block,) = result.content
    assert block.type == "text"
    return str(block.text)


def matrix(test: Any) -> Any:
    """Every (transport, mode) combination; the `peer` fixture reads both."""
    test = pytest.mark.parametrize("mode", MODES)(test)
    return pytest.mark.parametrize("transport", TRANSPORTS)(test)


async def until(condition: Any, timeout: float = HANG) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.01)


@matrix
async def test_book_table_asks_and_books_another_date(peer: Any, mode: str) -> None:
    async with peer("form") as p:
        p.expect(
            ElicitResult(
                action="accept", content={"accept_alternative": True, "date": "2025-12-27"}
            )
        )
        assert p.sdk.protocol_version == VERSION[mode]
        result = await p.sdk.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
    (asked,) = p.asked
    assert isinstance(asked, ElicitRequestFormParams)
    assert asked.message == "No tables for 2 on 2025-12-25. Would you like to try another date?"
    assert asked.requested_schema["required"] == ["accept_alternative"]
    assert asked.requested_schema["properties"]["date"]["default"] == "2025-12-26"
    assert text(result) == "Booked a table for 2 on 2025-12-27."
    assert result.is_error is False


@matrix
async def test_book_table_declined(peer: Any, mode: str) -> None:
    async with peer("form") as p:
        p.expect(ElicitResult(action="decline"))
        result = await p.sdk.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
    assert len(p.asked) == 1
    assert text(result) == "No booking made."


@matrix
async def test_pay_deposit_sends_the_user_to_a_url(peer: Any, mode: str) -> None:
    async with peer("url") as p:
        p.expect(ElicitResult(action="accept"))
        result = await p.sdk.call_tool("pay_deposit", {"booking_id": "b-42"})
    (asked,) = p.asked
    assert isinstance(asked, ElicitRequestURLParams)
    assert asked.message == "A 20 EUR deposit confirms your booking."
    assert asked.url == "https://pay.example.com/deposit/b-42"
    # 2026-07-28 URL elicitations inside an InputRequiredResult carry no elicitationId.
    assert asked.elicitation_id == ("deposit-b-42" if mode == "legacy" else None)
    assert text(result) == "Complete the payment in your browser."


@matrix
async def test_confirm_deposit(peer: Any, mode: str) -> None:
    def completes() -> list[Any]:
        return [n for n in p.notifications if isinstance(n, ElicitCompleteNotification)]

    async with peer("url") as p:
        result = await p.sdk.call_tool("confirm_deposit", {"booking_id": "b-42"})
        if mode == "legacy":
            # Ours relates the notification to the tools/call: it precedes the result
            # on the call's own stream (HTTP) or the pipe (stdio). Allow for dispatch.
            await until(completes)
    assert text(result) == "Deposit received for booking b-42."
    if mode == "legacy":
        (note,) = completes()  # notifications/elicitation/complete (2025-11-25 only)
        assert note.params.elicitation_id == "deposit-b-42"
    else:
        assert completes() == []  # 2026-07-28 has no such notification


@matrix
async def test_issue_card_with_an_auto_filling_callback(peer: Any, mode: str) -> None:
    async with peer("library") as p:
        p.expect(ElicitResult(action="accept", content={"name": "Ada Lovelace"}))
        result = await p.sdk.call_tool("issue_card")
    (asked,) = p.asked
    assert asked.mode == "form"
    assert asked.message == "What name should go on the card?"
    assert asked.requested_schema["properties"]["name"] == {"title": "Name", "type": "string"}
    assert text(result) == "Card issued to Ada Lovelace."


@matrix
async def test_client_features_sees_the_sdk_elicitation_capability(peer: Any, mode: str) -> None:
    async with peer("library") as p:
        result = await p.sdk.call_tool("client_features")
    assert result.structured_content == {"result": ["elicitation"]}
    assert p.asked == []


@matrix
async def test_tools_list(peer: Any, mode: str) -> None:
    listed: dict[str, Any] = {}
    for name in SHARED:
        async with peer(name) as p:
            listed.update({tool.name: tool for tool in (await p.sdk.list_tools()).tools})
    assert sorted(listed) == [
        "book_table",
        "client_features",
        "confirm_deposit",
        "issue_card",
        "pay_deposit",
    ]
    book = listed["book_table"]
    assert book.description == "Book a table at the bistro."
    assert sorted(book.input_schema["required"]) == ["date", "party_size"]
    assert "ctx" not in book.input_schema["properties"]
    assert listed["issue_card"].input_schema.get("properties", {}) == {}
    assert listed["client_features"].output_schema is not None


# The seed page's sampling and roots callbacks, with the SDK's own types.
async def handle_sampling(
    context: ClientRequestContext, params: CreateMessageRequestParams
) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text="The answer is 42."),
        model="my-llm",
    )


async def handle_list_roots(context: ClientRequestContext) -> ListRootsResult:
    return ListRootsResult(
        roots=[Root(uri=FileUrl("file:///home/ada/notebooks"), name="notebooks")]
    )


async def no_answer(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
    raise AssertionError("not asked")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("callbacks", "expected"),
    [
        (
            {
                "elicitation_callback": no_answer,
                "sampling_callback": handle_sampling,
                "list_roots_callback": handle_list_roots,
            },
            ["elicitation", "sampling", "roots"],
        ),
        ({}, []),
    ],
    ids=["all-three", "none"],
)
async def test_client_features_reflect_the_sdk_callbacks(
    mode: str, callbacks: dict[str, Any], expected: list[str], servers: dict[str, ServerProcess]
) -> None:
    """HTTP only: capabilities are fixed per connection (the stdio clients are shared)."""
    async with sdk_client(servers["library"].url, mode, **callbacks) as client:
        result = await client.call_tool("client_features")
    assert result.structured_content == {"result": expected}


async def test_sdk_pinned_to_2026_07_28_without_discover(servers: dict[str, ServerProcess]) -> None:
    """`mode="2026-07-28"`: the SDK adopts the version without probing server/discover."""
    p = Peer()
    async with p.connect(servers["form"].url, "2026-07-28"):
        assert p.sdk.protocol_version == "2026-07-28"
        p.expect(
            ElicitResult(
                action="accept", content={"accept_alternative": True, "date": "2025-12-27"}
            )
        )
        result = await p.sdk.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})
    assert len(p.asked) == 1
    assert text(result) == "Booked a table for 2 on 2025-12-27."


@pytest.mark.parametrize("mode", MODES)
async def test_no_callback_means_elicitation_not_supported(
    mode: str, servers: dict[str, ServerProcess]
) -> None:
    async with sdk_client(servers["library"].url, mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("issue_card")
    assert raised.value.error.message == "Elicitation not supported"


@matrix
async def test_delete_folder_four_outcomes_and_no_round_trip_when_empty(
    peer: Any, mode: str
) -> None:
    # The only delete_folder calls each server process sees (see the module docstring).
    async with peer("delete") as p:
        p.expect(
            ElicitResult(action="accept", content={"ok": False}),
            ElicitResult(action="decline"),
            ElicitResult(action="cancel"),
            ElicitResult(action="accept", content={"ok": True}),
        )
        assert p.sdk.protocol_version == VERSION[mode]
        (tool,) = (await p.sdk.list_tools()).tools
        assert list(tool.input_schema["properties"]) == ["path"]  # confirm is resolved
        empty = await p.sdk.call_tool("delete_folder", {"path": "/tmp/empty"})
        assert p.asked == []  # resolved without a round trip
        texts = [text(empty)]
        for _ in range(4):
            result = await p.sdk.call_tool("delete_folder", {"path": "/tmp/project"})
            texts.append(text(result))
    assert texts == [
        "deleted /tmp/empty",
        "kept the folder",
        "declined: folder not deleted",
        "cancelled: folder not deleted",
        "deleted /tmp/project",
    ]
    assert [asked.message for asked in p.asked] == [
        "/tmp/project has 2 file(s). Delete anyway?"
    ] * 4
