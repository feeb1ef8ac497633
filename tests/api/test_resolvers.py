"""Resolvers: `Annotated[T, Resolve(fn)]` parameters, on both protocol generations."""

from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from mcp_adapters import Client
from mcp_adapters.server import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    ElicitUrl,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
    UrlElicitationResult,
)
from mcp_adapters.server._resolve import PlanBuilder
from mcp_core.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
    Root,
    SamplingMessage,
    TextContent,
)

from .conftest import MODERN, ByMessage, Recorder, SpyTransport, accept

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


class Name(BaseModel):
    name: str


class Size(BaseModel):
    size: int


def ask_confirm() -> Elicit[Confirm]:
    return Elicit("Really?", Confirm)


def ask_name() -> Elicit[Name]:
    return Elicit("Your name?", Name)


def ask_size() -> Elicit[Size]:
    return Elicit("Which size?", Size)


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


async def never_called(context: Any, params: Any) -> ElicitResult:
    raise AssertionError("the elicitation callback must not be called")


# ------------------------------------------------------------ outcome shapes


def outcome_server() -> MCPServer:
    mcp = MCPServer("Outcomes")

    @mcp.tool()
    async def with_outcome(
        answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)],
    ) -> str:
        match answer:
            case AcceptedElicitation(data=Confirm(ok=True)):
                return "accepted ok"
            case AcceptedElicitation(data=Confirm(ok=False)):
                return "accepted not ok"
            case DeclinedElicitation():
                return "declined"
            case CancelledElicitation():
                return "cancelled"
        return f"unexpected {answer!r}"

    @mcp.tool()
    async def bare(answer: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
        assert isinstance(answer, Confirm)
        return f"ok={answer.ok}"

    return mcp


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (accept(ok=True), "accepted ok"),
        (accept(ok=False), "accepted not ok"),
        (ElicitResult(action="decline"), "declined"),
        (ElicitResult(action="cancel"), "cancelled"),
    ],
    ids=["accept-ok", "accept-not-ok", "decline", "cancel"],
)
async def test_elicitation_result_outcomes(
    anyio_backend: str, mode: str, answer: ElicitResult, expected: str
) -> None:
    spy = SpyTransport(outcome_server())
    recorder = Recorder(answer)
    async with Client(spy, mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("with_outcome", {})
    assert texts(result) == [expected]
    assert not result.is_error
    assert len(recorder.asked) == 1
    asked = recorder.asked[0]
    assert isinstance(asked, ElicitRequestFormParams)
    assert asked.message == "Really?"
    assert asked.requested_schema == {
        "type": "object",
        "properties": {"ok": {"type": "boolean", "title": "Ok"}},
        "required": ["ok"],
    }
    if mode == MODERN:
        assert len(spy.input_required()) == 1
        assert spy.requests("elicitation/create") == []
    else:
        assert spy.input_required() == []
        assert len(spy.requests("elicitation/create")) == 1


async def test_bare_model_on_accept(anyio_backend: str, mode: str) -> None:
    recorder = Recorder(accept(ok=True))
    async with Client(outcome_server(), mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("bare", {})
    assert texts(result) == ["ok=True"]
    assert result.structured_content == {"result": "ok=True"}
    assert not result.is_error


@pytest.mark.parametrize(
    ("action", "message"),
    [("decline", "answer: the user declined"), ("cancel", "answer: the user cancelled")],
)
async def test_bare_model_decline_or_cancel_ends_the_call(
    anyio_backend: str, mode: str, action: str, message: str
) -> None:
    recorder = Recorder(ElicitResult(action=action))
    async with Client(outcome_server(), mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("bare", {})
    assert result.is_error is True
    assert texts(result) == [message]
    assert result.structured_content is None
    assert len(recorder.asked) == 1


# -------------------------------------------------------- no round trip


async def test_resolver_returning_a_value_asks_nothing(anyio_backend: str, mode: str) -> None:
    mcp = MCPServer("Values")

    async def maybe_confirm(path: str) -> Confirm | Elicit[Confirm]:
        if path == "/empty":
            return Confirm(ok=True)
        return Elicit(f"Delete {path}?", Confirm)

    @mcp.tool()
    async def delete(
        path: str, confirm: Annotated[ElicitationResult[Confirm], Resolve(maybe_confirm)]
    ) -> str:
        assert isinstance(confirm, AcceptedElicitation)
        return f"{path}: ok={confirm.data.ok}"

    @mcp.tool()
    async def delete_bare(path: str, confirm: Annotated[Confirm, Resolve(maybe_confirm)]) -> str:
        return f"{path}: ok={confirm.ok}"

    spy = SpyTransport(mcp)
    async with Client(spy, mode=mode, elicitation_callback=never_called) as client:
        result = await client.call_tool("delete", {"path": "/empty"})
        bare = await client.call_tool("delete_bare", {"path": "/empty"})
    assert texts(result) == ["/empty: ok=True"]
    assert texts(bare) == ["/empty: ok=True"]
    assert spy.input_required() == []
    assert spy.requests("elicitation/create") == []


# ---------------------------------------------------------- dependencies


async def test_chain_of_two_resolvers(anyio_backend: str, mode: str) -> None:
    mcp = MCPServer("Chain")

    def ask_greeting(who: Annotated[Name, Resolve(ask_name)]) -> Elicit[Confirm]:
        return Elicit(f"Greet {who.name}?", Confirm)

    @mcp.tool()
    async def greet(
        go: Annotated[Confirm, Resolve(ask_greeting)],
        who: Annotated[Name, Resolve(ask_name)],
    ) -> str:
        return f"{'Hello' if go.ok else 'Bye'}, {who.name}"

    spy = SpyTransport(mcp)
    recorder = Recorder(accept(name="Ada"), accept(ok=True))
    async with Client(spy, mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("greet", {})
    assert texts(result) == ["Hello, Ada"]
    assert [p.message for p in recorder.asked] == ["Your name?", "Greet Ada?"]
    if mode == MODERN:
        # The second question depends on the first answer: two rounds, one question each.
        rounds = spy.input_required()
        assert [sorted(r["inputRequests"]) for r in rounds] == [["ask_name"], ["ask_greeting"]]
    else:
        assert len(spy.requests("elicitation/create")) == 2


async def test_shared_dependency_runs_once(anyio_backend: str, mode: str) -> None:
    mcp = MCPServer("Shared")
    runs: list[str] = []

    def base(path: str) -> str:
        runs.append(path)
        return path.upper()

    def left(value: Annotated[str, Resolve(base)]) -> str:
        return f"L{value}"

    def right(value: Annotated[str, Resolve(base)]) -> str:
        return f"R{value}"

    @mcp.tool()
    async def combine(
        path: str,
        a: Annotated[str, Resolve(left)],
        b: Annotated[str, Resolve(right)],
        c: Annotated[str, Resolve(base)],
    ) -> str:
        return f"{a} {b} {c}"

    async with Client(mcp, mode=mode, elicitation_callback=never_called) as client:
        result = await client.call_tool("combine", {"path": "x"})
    assert texts(result) == ["LX RX X"]
    assert runs == ["x"]


async def test_shared_asking_dependency_is_asked_once(anyio_backend: str, mode: str) -> None:
    mcp = MCPServer("SharedAsk")

    def double(size: Annotated[Size, Resolve(ask_size)]) -> int:
        return size.size * 2

    def triple(size: Annotated[Size, Resolve(ask_size)]) -> int:
        return size.size * 3

    @mcp.tool()
    async def sizes(
        a: Annotated[int, Resolve(double)], b: Annotated[int, Resolve(triple)]
    ) -> list[int]:
        return [a, b]

    spy = SpyTransport(mcp)
    recorder = Recorder(accept(size=5))
    async with Client(spy, mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("sizes", {})
    assert result.structured_content == {"result": [10, 15]}
    assert [p.message for p in recorder.asked] == ["Which size?"]
    if mode == MODERN:
        assert [sorted(r["inputRequests"]) for r in spy.input_required()] == [["ask_size"]]
    else:
        assert len(spy.requests("elicitation/create")) == 1


async def test_resolver_taking_context_and_arguments(anyio_backend: str, mode: str) -> None:
    mcp = MCPServer("Ctx")
    seen: list[Any] = []

    def where(path: str, ctx: Context) -> str:
        seen.append(ctx)
        return f"{path}@{ctx.protocol_version}"

    @mcp.tool()
    async def locate(path: str, ctx: Context, place: Annotated[str, Resolve(where)]) -> str:
        assert seen == [ctx]  # the resolver got the tool's own Context
        return place

    async with Client(mcp, mode=mode) as client:
        result = await client.call_tool("locate", {"path": "/a"})
        version = client.protocol_version
    assert version == ("2025-11-25" if mode == "legacy" else MODERN)
    assert texts(result) == [f"/a@{version}"]
    assert len(seen) == 1
    assert isinstance(seen[0], Context)


# ------------------------------------------------- several questions, keys


def two_question_server(bodies: list[str]) -> MCPServer:
    mcp = MCPServer("Two")

    @mcp.tool()
    async def order(
        who: Annotated[Name, Resolve(ask_name)],
        size: Annotated[Size, Resolve(ask_size)],
    ) -> str:
        bodies.append(who.name)
        return f"{who.name} wants {size.size}"

    return mcp


async def test_two_independent_questions(anyio_backend: str, mode: str) -> None:
    bodies: list[str] = []
    spy = SpyTransport(two_question_server(bodies))
    answers = ByMessage({"Your name?": accept(name="Ada"), "Which size?": accept(size=3)})
    async with Client(spy, mode=mode, elicitation_callback=answers) as client:
        result = await client.call_tool("order", {})
    assert texts(result) == ["Ada wants 3"]
    # Exactly two callback calls (on 2026-07-28 they may run concurrently, in any order).
    assert sorted(answers.asked) == ["Which size?", "Your name?"]
    assert bodies == ["Ada"]  # the tool body ran once, after every answer
    if mode == MODERN:
        # Both questions in ONE InputRequiredResult, keyed by the resolvers' names.
        rounds = spy.input_required()
        assert len(rounds) == 1
        requests = rounds[0]["inputRequests"]
        assert sorted(requests) == ["ask_name", "ask_size"]
        assert requests["ask_name"]["method"] == "elicitation/create"
        assert requests["ask_name"]["params"]["message"] == "Your name?"
        assert requests["ask_size"]["params"]["message"] == "Which size?"
        # The retry carried both answers under the same keys.
        retries = [m["params"] for m in spy.sent if m.get("method") == "tools/call" and "id" in m]
        assert len(retries) == 2
        assert "inputResponses" not in retries[0]
        assert retries[1]["inputResponses"] == {
            "ask_name": {"action": "accept", "content": {"name": "Ada"}},
            "ask_size": {"action": "accept", "content": {"size": 3}},
        }
        assert "requestState" in retries[1]
    else:
        # Legacy: asked one after the other, as server-to-client requests.
        assert spy.input_required() == []
        asked = spy.requests("elicitation/create")
        assert [m["params"]["message"] for m in asked] == ["Your name?", "Which size?"]


def test_plan_keys_are_short_function_names() -> None:
    def ask() -> Elicit[Confirm]:
        return Elicit("first", Confirm)

    def make_other() -> Any:
        def ask() -> Elicit[Confirm]:  # same __name__, another function
            return Elicit("second", Confirm)

        return ask

    other = make_other()

    def depends(a: Annotated[Confirm, Resolve(ask)], path: str, ctx: Context) -> str:
        return path

    builder = PlanBuilder({"path"})
    node = builder.node_for(depends)
    assert node.key == "depends"
    assert node.arguments == ["path"]
    assert node.context_param == "ctx"
    assert [(d.param, d.node.key) for d in node.deps] == [("a", "ask")]
    assert builder.node_for(other).key == "ask_2"
    assert builder.node_for(ask) is node.deps[0].node  # analysed once, same key
    assert builder.keys == {"depends", "ask", "ask_2"}


def test_plan_rejects_unknown_parameters_and_cycles() -> None:
    def needs_unknown(nope: str) -> str:
        return nope

    with pytest.raises(TypeError, match="parameter 'nope' is neither a tool argument"):
        PlanBuilder({"path"}).node_for(needs_unknown)

    # A cycle cyc_a -> cyc_b -> cyc_a, closed after both are defined.
    def cyc_a(v: str) -> str:
        return v

    def cyc_b(v: Annotated[str, Resolve(cyc_a)]) -> str:
        return v

    cyc_a.__annotations__["v"] = Annotated[str, Resolve(cyc_b)]
    with pytest.raises(TypeError, match="resolver dependency cycle: cyc_a -> cyc_b -> cyc_a"):
        PlanBuilder(set()).node_for(cyc_a)


# ------------------------------------------------------------ invalid answers


async def test_invalid_form_answer(anyio_backend: str, mode: str) -> None:
    mcp = MCPServer("Invalid")
    bodies: list[int] = []

    @mcp.tool()
    async def pick(size: Annotated[Size, Resolve(ask_size)]) -> int:
        bodies.append(size.size)
        return size.size

    spy = SpyTransport(mcp)
    recorder = Recorder(accept(size="large"), accept(size=7))
    async with Client(spy, mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("pick", {})
    if mode == MODERN:
        # Asked again, never accepted blindly; the valid answer completes the call.
        assert [p.message for p in recorder.asked] == ["Which size?", "Which size?"]
        assert [sorted(r["inputRequests"]) for r in spy.input_required()] == [
            ["ask_size"],
            ["ask_size"],
        ]
        assert not result.is_error
        assert result.structured_content == {"result": 7}
        assert bodies == [7]
    else:
        assert len(recorder.asked) == 1
        assert recorder.answers == [accept(size=7)]  # never asked a second time
        assert result.is_error is True
        assert texts(result)[0].startswith("the client's answer to 'ask_size' is invalid:")
        assert "size" in texts(result)[0]
        assert bodies == []


# ------------------------------------------------- sampling, roots, URL mode


async def sampling_callback(context: Any, params: CreateMessageRequestParams) -> Any:
    prompt = params.messages[0].content.text
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text=f"echo:{prompt}:{params.max_tokens}"),
        model="test-llm",
    )


async def roots_callback(context: Any) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri="file:///home/ada", name="home")])


async def test_sample_and_list_roots_markers(anyio_backend: str, mode: str) -> None:
    mcp = MCPServer("SampleRoots")

    def summarize(text: str) -> Sample:
        message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
        return Sample([message], max_tokens=7, system_prompt="Be brief.")

    def roots() -> ListRoots:
        return ListRoots()

    @mcp.tool()
    async def work(
        text: str,
        summary: Annotated[CreateMessageResult, Resolve(summarize)],
        where: Annotated[ListRootsResult, Resolve(roots)],
    ) -> str:
        return f"{summary.content.text} from {summary.model} in " + ",".join(
            f"{r.name}={r.uri}" for r in where.roots
        )

    spy = SpyTransport(mcp)
    async with Client(
        spy,
        mode=mode,
        sampling_callback=sampling_callback,
        list_roots_callback=roots_callback,
    ) as client:
        result = await client.call_tool("work", {"text": "hi"})
    assert texts(result) == ["echo:hi:7 from test-llm in home=file:///home/ada"]
    if mode == MODERN:
        rounds = spy.input_required()
        assert len(rounds) == 1
        requests = rounds[0]["inputRequests"]
        assert sorted(requests) == ["roots", "summarize"]
        assert requests["summarize"]["method"] == "sampling/createMessage"
        assert requests["summarize"]["params"]["systemPrompt"] == "Be brief."
        assert requests["roots"]["method"] == "roots/list"
    else:
        assert len(spy.requests("sampling/createMessage")) == 1
        assert len(spy.requests("roots/list")) == 1


def url_server() -> MCPServer:
    mcp = MCPServer("Url")

    def go_pay(booking: str) -> ElicitUrl:
        return ElicitUrl("Pay the deposit.", f"https://pay.example.com/{booking}", f"dep-{booking}")

    @mcp.tool()
    async def pay(booking: str, answer: Annotated[UrlElicitationResult, Resolve(go_pay)]) -> str:
        return f"action={answer.action} type={type(answer).__name__}"

    return mcp


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_elicit_url_marker_refusals(anyio_backend: str, mode: str, action: str) -> None:
    spy = SpyTransport(url_server())
    recorder = Recorder(ElicitResult(action=action))
    async with Client(spy, mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("pay", {"booking": "b1"})
    expected = "DeclinedElicitation" if action == "decline" else "CancelledElicitation"
    assert texts(result) == [f"action={action} type={expected}"]
    (asked,) = recorder.asked
    assert isinstance(asked, ElicitRequestURLParams)
    assert asked.message == "Pay the deposit."
    assert asked.url == "https://pay.example.com/b1"
    # elicitationId exists on 2025-11-25 only.
    assert asked.elicitation_id == ("dep-b1" if mode == "legacy" else None)


async def test_elicit_url_marker_accept(anyio_backend: str, mode: str) -> None:
    recorder = Recorder(ElicitResult(action="accept"))
    async with Client(url_server(), mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("pay", {"booking": "b1"})
    assert len(recorder.asked) == 1
    assert texts(result)[0].startswith("action=accept type=")


async def test_elicit_url_marker_accept_injects_accepted_url_elicitation(
    anyio_backend: str, mode: str
) -> None:
    recorder = Recorder(ElicitResult(action="accept"))
    async with Client(url_server(), mode=mode, elicitation_callback=recorder) as client:
        result = await client.call_tool("pay", {"booking": "b1"})
    assert texts(result) == ["action=accept type=AcceptedUrlElicitation"]
    assert AcceptedUrlElicitation().action == "accept"
