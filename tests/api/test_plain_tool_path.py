"""A plain tool without a `Context` is answered in `MCPServer.handle_now` itself (glue3).

`handle_now` writes in, for such a tool, what `_call_plain_tool`, `parse_arguments` and
`to_wire_result`'s text case do, and a session passes itself with `scope_of` so that its
`SessionScope` is made only when the request needs one. These tests hold the folded path
to the general one: the same request through both must send the same thing on the
connection (or raise the same error), for every way a plain call can end, on both eras;
and the folded path must make no scope for a plain tool that needs none.
"""

from __future__ import annotations

import types as pytypes
from typing import Any

import anyio
import pytest

from mcp_adapters import Client
from mcp_adapters.server import Context, MCPServer, ToolFailure
from mcp_core import Era, MCPError
from mcp_core import types as mt

pytestmark = pytest.mark.anyio


class Recording:
    """A connection as the server sees one: what it is sent is recorded."""

    def __init__(self, era: Era) -> None:
        self.era = era
        self.sent: list[tuple[Any, ...]] = []

    def send_result(self, request_id: Any, result: Any) -> None:
        self.sent.append(("result", request_id, result))

    def send_text_result(self, request_id: Any, text: str, *, structured: bool = False) -> None:
        # What `ServerConnection.send_text_result` stands for (tests/core/test_lanes.py
        # holds it to that): `send_result` of this dict.
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if structured:
            result["structuredContent"] = {"result": text}
        self.send_result(request_id, result)

    def request_input(self, request_id: Any, questions: Any, **kwargs: Any) -> bool:
        self.sent.append(("input", request_id, questions))
        return True


class Scope:
    """A `RequestScope` over an owner (what `scope_of` makes)."""

    def __init__(self, owner: Any) -> None:
        self.owner = owner
        self.connection = owner.connection

    async def ask(self, request_id: Any, questions: Any) -> Any:
        raise AssertionError("a plain tool does not ask")

    def wake(self) -> None:
        pass

    def wall_time(self) -> float:
        return 0.0


class Owner:
    """What a session is to `handle_now`: something with a `connection`."""

    def __init__(self, era: Era) -> None:
        self.connection = Recording(era)
        self.scopes = 0

    def scope_of(self, owner: Any) -> Scope:
        assert owner is self
        self.scopes += 1
        return Scope(owner)


async def later() -> str:
    return "from an awaitable"


def build() -> MCPServer:
    mcp = MCPServer("plain tools")

    @mcp.tool()
    def text(value: str) -> str:
        return value

    @mcp.tool()
    def untyped(value: str):  # type: ignore[no-untyped-def]
        return value

    @mcp.tool(structured_output=False)
    def unstructured(value: str) -> str:
        return value

    @mcp.tool()
    def number(n: int) -> int:
        return n * 2

    @mcp.tool()
    def table(n: int) -> dict[str, int]:
        return {"n": n}

    @mcp.tool()
    def items() -> list[str]:
        return ["a", "b"]

    @mcp.tool()
    def nothing() -> None:
        return None

    @mcp.tool()
    def whole() -> mt.CallToolResult:
        return mt.CallToolResult(content=[mt.TextContent(type="text", text="mine")])

    @mcp.tool()
    def crash() -> str:
        raise ValueError("broken")

    @mcp.tool()
    def failure() -> str:
        raise ToolFailure("refused")

    @mcp.tool()
    def refuse() -> str:
        raise MCPError(4001, "no", {"why": "because"})

    @mcp.tool()
    def awaitable():  # type: ignore[no-untyped-def]
        return later()

    # The same endings from coroutine tools (`_CoroutineCall`).
    @mcp.tool()
    async def a_text(value: str) -> str:
        return value

    @mcp.tool()
    async def a_untyped(value: str):  # type: ignore[no-untyped-def]
        return value

    @mcp.tool(structured_output=False)
    async def a_unstructured(value: str) -> str:
        return value

    @mcp.tool()
    async def a_number(n: int) -> int:
        return n * 2

    @mcp.tool()
    async def a_nothing() -> None:
        return None

    @mcp.tool()
    async def a_crash() -> str:
        raise ValueError("broken")

    @mcp.tool()
    async def a_failure() -> str:
        raise ToolFailure("refused")

    @mcp.tool()
    async def a_refuse() -> str:
        raise MCPError(4001, "no", {"why": "because"})

    # Coroutine tools that suspend before they end, and one taking a `Context`.
    @mcp.tool()
    async def a_later(value: str) -> str:
        await anyio.sleep(0)
        return value

    @mcp.tool()
    async def a_later_crash() -> str:
        await anyio.sleep(0)
        raise ValueError("broken later")

    @mcp.tool()
    async def a_context(value: str, ctx: Context) -> str:
        await anyio.sleep(0)
        return f"{value} {ctx.protocol_version}"

    return mcp


CALLS: list[tuple[str, dict[str, Any] | None]] = [
    ("text", {"value": "hi"}),
    ("text", {"value": 3}),  # invalid arguments
    ("text", None),  # no arguments at all: a missing required one
    ("untyped", {"value": "hi"}),
    ("unstructured", {"value": "hi"}),
    ("number", {"n": 4}),
    ("table", {"n": 1}),
    ("items", {}),
    ("items", None),
    ("nothing", {}),
    ("whole", {}),
    ("crash", {}),
    ("failure", {}),
    ("refuse", {}),
    ("awaitable", {}),
]

ASYNC_CALLS: list[tuple[str, dict[str, Any] | None]] = [
    ("a_text", {"value": "hi"}),
    ("a_text", {"value": 3}),
    ("a_text", None),
    ("a_untyped", {"value": "hi"}),
    ("a_unstructured", {"value": "hi"}),
    ("a_number", {"n": 4}),
    ("a_nothing", {}),
    ("a_crash", {}),
    ("a_failure", {}),
    ("a_refuse", {}),
    ("a_later", {"value": "hi"}),
    ("a_later_crash", {}),
    ("a_context", {"value": "hi"}),
    ("a_context", {"value": 3}),
]


#: Calls whose outcome is not a wire result (a refusal model, an awaitable's rest): the
#: general `_answer` takes them, with a scope.
NEEDS_A_SCOPE = {"awaitable", "crash", "failure"}


def request(name: str, arguments: dict[str, Any] | None) -> Any:
    params = mt.CallToolRequestParams(name=name, arguments=arguments)
    context = pytypes.SimpleNamespace(
        protocol_version="2026-07-28", client_capabilities=None, meta=None, client_info=None
    )
    return pytypes.SimpleNamespace(
        method="tools/call", params=params, request_id=7, context=context
    )


async def folded(mcp: MCPServer, era: Era, name: str, arguments: Any) -> tuple[Any, int]:
    owner = Owner(era)
    try:
        work = mcp.handle_now(request(name, arguments), owner, scope_of=owner.scope_of)
        if work is not None:
            await work()
    except MCPError as exc:
        return ("raised", exc.code, exc.message, exc.data), owner.scopes
    return owner.connection.sent, owner.scopes


async def general(mcp: MCPServer, era: Era, name: str, arguments: Any) -> Any:
    """The same call through `_call_plain_tool` and `_answer`, as `handle_now` made it
    before it was written in."""
    scope = Scope(Owner(era))
    req = request(name, arguments)
    tool = mcp._tools[name]
    try:
        outcome = mcp._call_plain_tool(tool, req, scope, arguments)
        if type(outcome).__name__ == "_Later":
            await mcp._answer_later(req, scope, outcome)
        else:
            mcp._answer(req, scope, outcome)
    except MCPError as exc:
        return ("raised", exc.code, exc.message, exc.data)
    return scope.connection.sent


@pytest.mark.parametrize("era", [Era.MODERN, Era.LEGACY])
@pytest.mark.parametrize(("name", "arguments"), CALLS)
async def test_the_folded_plain_path_answers_as_the_general_one(
    anyio_backend: str, era: Era, name: str, arguments: Any
) -> None:
    mcp = build()
    got, scopes = await folded(mcp, era, name, arguments)
    assert got == await general(build(), era, name, arguments)
    if era is Era.MODERN and name not in NEEDS_A_SCOPE and arguments != {"value": 3}:
        # A wire result (or an error raised): answered with the connection alone.
        assert (arguments is None and name == "text") or scopes == 0
    if era is Era.LEGACY:
        assert scopes >= 1  # attached, with a scope of its own, on its first call


class Core:
    """What `Session._handle` reports to: its session core, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def answer_exception(self, request_id: Any, exc: BaseException) -> None:
        self.calls.append(("answer_exception", request_id, type(exc), str(exc)))

    def answer(self, request_id: Any, result: Any) -> None:
        self.calls.append(("answer", request_id, result))

    def forget(self, request_id: Any) -> None:
        self.calls.append(("forget", request_id))


class Driver:
    busy = False

    def __init__(self, core: Core) -> None:
        self.core = core

    def wake(self) -> None:
        self.core.calls.append(("wake",))


class Handling(Owner):
    """What `Session._handle` reads of its session, for `_handle` run unbound."""

    def __init__(self, era: Era, starting: bool) -> None:
        super().__init__(era)
        self._core = Core()
        self._driver = Driver(self._core)
        self._starting = starting
        self._cancelled = anyio.get_cancelled_exc_class()
        self._on_request = None


@pytest.mark.parametrize("era", [Era.MODERN, Era.LEGACY])
@pytest.mark.parametrize("starting", [False, True])
@pytest.mark.parametrize(("name", "arguments"), ASYNC_CALLS)
async def test_a_session_runs_coroutine_work_as_awaiting_it_does(
    anyio_backend: str, era: Era, starting: bool, name: str, arguments: Any
) -> None:
    """A coroutine tool's work (`AwaitThen`) is awaited by `Session._handle` in its own
    frame (`start`, the awaitable, `then` or `failed` written in) and by anything else
    with `await work()` (`AwaitThen.__call__`, the HTTP server's way): the same things
    sent, the same error given to the session's core, the same bookkeeping after."""
    from mcp_adapters._session import AwaitThen
    from mcp_adapters._session_base import Session

    mcp = build()
    in_frame = Handling(era, starting)
    work = mcp.handle_now(request(name, arguments), in_frame, scope_of=in_frame.scope_of)
    assert isinstance(work, AwaitThen)
    event = pytypes.SimpleNamespace(request_id=7)
    await Session._handle(in_frame, event, work)  # type: ignore[arg-type]

    awaited = Handling(era, starting)
    work = mcp.handle_now(request(name, arguments), awaited, scope_of=awaited.scope_of)
    assert isinstance(work, AwaitThen)

    async def as_work() -> None:
        await work()

    await Session._handle(awaited, event, as_work)  # type: ignore[arg-type]

    assert in_frame.connection.sent == awaited.connection.sent
    assert in_frame._core.calls == awaited._core.calls
    assert in_frame.scopes == awaited.scopes
    # And what was sent is what the general path sends (or the error it raises).
    general_outcome = await general(build(), era, name, arguments)
    if isinstance(general_outcome, tuple):
        assert in_frame._core.calls[0][:2] == ("answer_exception", 7)
        assert in_frame.connection.sent == []
    else:
        assert in_frame.connection.sent == general_outcome
    if not starting:
        assert in_frame._core.calls[-1] == ("wake",)


class HTTPHandling:
    """What the HTTP server's asyncio handlers read of their server, for them run unbound."""

    def __init__(self) -> None:
        self.done: list[Any] = []
        self._handlers = 1

    def _handler_done(self, conn: Any, core: Any, rid: Any) -> None:
        self.done.append(("done", rid))


@pytest.mark.parametrize("era", [Era.MODERN, Era.LEGACY])
@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize(("name", "arguments"), ASYNC_CALLS)
async def test_the_http_server_runs_coroutine_work_as_awaiting_it_does(
    anyio_backend: str, era: Era, in_place: bool, name: str, arguments: Any
) -> None:
    """The HTTP server's asyncio handlers (`_run_native_handler`, and `_run_in_place`
    for a request with no core yet) run a coroutine tool's `AwaitThen` through its
    `__call__`: given the work itself or a plain `Work` that awaits it, the same things
    are sent, the same error reaches the core, the handler ends alike, and the outcome
    is the general path's."""
    from mcp_adapters._session import AwaitThen
    from mcp_adapters.transports.http_server import HTTPServer

    seen = []
    for folded in (True, False):
        owner = Owner(era)
        work = build().handle_now(request(name, arguments), owner, scope_of=owner.scope_of)
        assert isinstance(work, AwaitThen)

        async def as_work(work: Any = work) -> None:
            await work()

        given: Any = work if folded else as_work
        server, core = HTTPHandling(), Core()
        event = pytypes.SimpleNamespace(request_id=7)
        if in_place:
            await HTTPServer._run_in_place(server, owner.connection, event, given, [core])  # type: ignore[arg-type]
        else:
            await HTTPServer._run_native_handler(server, owner.connection, core, event, given)  # type: ignore[arg-type]
        assert server.done == [("done", 7)]
        seen.append((owner.connection.sent, core.calls, owner.scopes))
    assert seen[0] == seen[1]
    general_outcome = await general(build(), era, name, arguments)
    if isinstance(general_outcome, tuple):
        assert seen[0][1][0][:2] == ("answer_exception", 7)
    else:
        assert seen[0][0] == general_outcome


async def test_a_plain_tool_in_process_makes_no_session_scope(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_adapters.server import _serve

    made: list[Any] = []

    class Counted(_serve.SessionScope):
        __slots__ = ()

        def __init__(self, session: Any) -> None:
            made.append(session)
            super().__init__(session)

    monkeypatch.setattr(_serve, "SessionScope", Counted)
    monkeypatch.setattr(_serve.ServerHandler, "scope_of", Counted)
    mcp = build()

    @mcp.tool()
    async def coroutine(value: str) -> str:
        return value

    @mcp.tool()
    def with_context(value: str, ctx: Context) -> str:
        return ctx.protocol_version

    async with Client(mcp, mode="2026-07-28") as client:
        before = len(made)
        assert (await client.call_tool("text", {"value": "x"})).content[0].text == "x"
        assert (await client.call_tool("coroutine", {"value": "y"})).content[0].text == "y"
        assert len(made) == before
        # A tool taking a `Context` gets one, with its scope, as before.
        answer = await client.call_tool("with_context", {"value": "z"})
        assert answer.content[0].text == "2026-07-28"
        assert len(made) == before + 1
