"""Tools: schemas from signatures, metadata pass-through, structured output, errors."""

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from mcp_adapters import Client
from mcp_adapters.server import Context, Elicit, MCPServer, Resolve
from mcp_core import INVALID_PARAMS, MCPError
from mcp_core.types import CallToolResult, Icon, TextContent, ToolAnnotations

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


class Point(BaseModel):
    x: int = Field(description="Horizontal")
    y: int


def ask_confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def build_server() -> MCPServer:
    mcp = MCPServer("Tools")

    @mcp.tool()
    async def describe(
        count: int,
        ctx: Context,
        confirm: Annotated[Confirm, Resolve(ask_confirm)],
        label: str = "x",
        tags: list[str] | None = None,
    ) -> str:
        """Describe something.

        Second paragraph of the description.
        """
        return "unused"

    @mcp.tool(
        name="renamed",
        title="A Nice Title",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False),
        icons=[Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"])],
    )
    async def original_name(value: float) -> None:
        """Overridden name."""

    @mcp.tool(
        description="Declared schema.",
        input_schema={
            "type": "object",
            "properties": {"q": {"type": "string", "minLength": 1}},
            "required": ["q"],
        },
    )
    async def declared(q: str) -> str:
        return q.upper()

    @mcp.tool()
    async def greet(name: str) -> str:
        return f"Hello, {name}!"

    @mcp.tool()
    async def point(x: int, y: int) -> Point:
        return Point(x=x, y=y)

    @mcp.tool()
    async def listing(n: int) -> list[str]:
        return [f"item{i}" for i in range(n)]

    @mcp.tool()
    async def raw() -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text="raw!")],
            structured_content={"k": 1},
            is_error=True,
        )

    @mcp.tool()
    async def boom() -> str:
        raise ValueError("kaboom")

    @mcp.tool()
    def sync_add(a: int, b: int = 2) -> int:
        return a + b

    return mcp


async def tools_by_name(client: Client) -> dict[str, Any]:
    listed = await client.list_tools()
    return {tool.name: tool for tool in listed.tools}


async def test_input_schema_from_signature(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        tool = (await tools_by_name(client))["describe"]
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "count": {"title": "Count", "type": "integer"},
            "label": {"default": "x", "title": "Label", "type": "string"},
            "tags": {
                "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
                "default": None,
                "title": "Tags",
            },
        },
        "required": ["count"],
    }
    # Context and resolver-filled parameters never appear.
    assert "ctx" not in tool.input_schema["properties"]
    assert "confirm" not in tool.input_schema["properties"]
    assert tool.description == "Describe something.\n\nSecond paragraph of the description."
    assert tool.title is None
    assert tool.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
    }


async def test_name_title_annotations_icons(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        tools = await tools_by_name(client)
    assert "original_name" not in tools
    tool = tools["renamed"]
    assert tool.title == "A Nice Title"
    assert tool.description == "Overridden name."
    assert tool.annotations == ToolAnnotations(read_only_hint=True, destructive_hint=False)
    assert tool.icons == [
        Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"])
    ]
    assert tool.input_schema == {
        "type": "object",
        "properties": {"value": {"title": "Value", "type": "number"}},
        "required": ["value"],
    }
    assert tool.output_schema is None  # `-> None`: no structured output


async def test_input_schema_override(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        tool = (await tools_by_name(client))["declared"]
        ok = await client.call_tool("declared", {"q": "abc"})
        bad = await client.call_tool("declared", {"q": 3})
    assert tool.description == "Declared schema."
    assert tool.input_schema == {
        "type": "object",
        "properties": {"q": {"type": "string", "minLength": 1}},
        "required": ["q"],
    }
    assert ok.content == [TextContent(type="text", text="ABC")]
    # Arguments are still validated against the signature.
    assert bad.is_error is True
    assert bad.content[0].text.startswith("Invalid arguments for tool declared:")


async def test_str_return_is_wrapped(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        tool = (await tools_by_name(client))["greet"]
        result = await client.call_tool("greet", {"name": "Ada"})
    assert result.content == [TextContent(type="text", text="Hello, Ada!")]
    assert result.structured_content == {"result": "Hello, Ada!"}
    assert not result.is_error
    assert tool.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
    }


async def test_model_return_is_the_object(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        tool = (await tools_by_name(client))["point"]
        result = await client.call_tool("point", {"x": 1, "y": 2})
    assert result.structured_content == {"x": 1, "y": 2}
    assert result.content == [TextContent(type="text", text='{"x":1,"y":2}')]
    assert tool.output_schema == Point.model_json_schema(mode="serialization")
    assert tool.output_schema == {
        "properties": {
            "x": {"description": "Horizontal", "title": "X", "type": "integer"},
            "y": {"title": "Y", "type": "integer"},
        },
        "required": ["x", "y"],
        "title": "Point",
        "type": "object",
    }


async def test_list_return_is_wrapped(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        tool = (await tools_by_name(client))["listing"]
        result = await client.call_tool("listing", {"n": 3})
        empty = await client.call_tool("listing", {"n": 0})
    assert result.structured_content == {"result": ["item0", "item1", "item2"]}
    assert result.content == [TextContent(type="text", text='["item0", "item1", "item2"]')]
    assert empty.structured_content == {"result": []}
    assert tool.output_schema == {
        "type": "object",
        "properties": {"result": {"items": {"type": "string"}, "type": "array"}},
        "required": ["result"],
    }


async def test_call_tool_result_passes_through(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        result = await client.call_tool("raw", {})
    assert result.content == [TextContent(type="text", text="raw!")]
    assert result.structured_content == {"k": 1}
    assert result.is_error is True


async def test_call_tool_result_annotation_declares_no_output_schema(
    anyio_backend: str, mode: str
) -> None:
    async with Client(build_server(), mode=mode) as client:
        tool = (await tools_by_name(client))["raw"]
    assert tool.output_schema is None


async def test_exception_becomes_error_result(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        result = await client.call_tool("boom", {})
    assert result.is_error is True
    assert result.content == [TextContent(type="text", text="Error executing tool boom: kaboom")]
    assert result.structured_content is None


@pytest.mark.parametrize(
    "arguments",
    [{"x": "not a number", "y": 2}, {"x": 1}, None],
    ids=["wrong-type", "missing", "no-arguments"],
)
async def test_invalid_arguments_become_error_result(
    anyio_backend: str, mode: str, arguments: dict[str, Any] | None
) -> None:
    async with Client(build_server(), mode=mode) as client:
        result = await client.call_tool("point", arguments)
    assert result.is_error is True
    assert len(result.content) == 1
    text = result.content[0].text
    assert text.startswith("Invalid arguments for tool point:")
    assert "x" in text


async def test_unknown_tool_is_a_protocol_error(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("nope", {})
        # The connection is still usable afterwards.
        after = await client.call_tool("greet", {"name": "x"})
    assert caught.value.code == INVALID_PARAMS == -32602
    assert caught.value.message == "Unknown tool: nope"
    assert after.content == [TextContent(type="text", text="Hello, x!")]


async def test_sync_tool(anyio_backend: str, mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        tool = (await tools_by_name(client))["sync_add"]
        result = await client.call_tool("sync_add", {"a": 40})
        explicit = await client.call_tool("sync_add", {"a": 1, "b": 1})
    assert result.content == [TextContent(type="text", text="42")]
    assert result.structured_content == {"result": 42}
    assert explicit.structured_content == {"result": 2}
    assert tool.input_schema["required"] == ["a"]
    assert tool.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
