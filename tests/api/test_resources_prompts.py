"""Resources (static and templates), prompts and completion."""

import base64
from typing import Any

import pytest

from mcp_adapters import Client
from mcp_adapters.server import Context, MCPServer
from mcp_core import INVALID_PARAMS, RESOURCE_NOT_FOUND, MCPError
from mcp_core.types import (
    BlobResourceContents,
    PromptArgument,
    PromptMessage,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
)

from .conftest import MODERN

pytestmark = pytest.mark.anyio

LOGO = bytes(range(256))


def build() -> MCPServer:
    mcp = MCPServer("Library")

    @mcp.resource("config://app", title="App config", mime_type="application/json")
    def config() -> dict[str, Any]:
        """The application's configuration."""
        return {"debug": False, "retries": 3}

    @mcp.resource("text://motd", name="motd")
    async def message_of_the_day(ctx: Context) -> str:
        return f"hello over {ctx.protocol_version}"

    @mcp.resource("file://logo.png", mime_type="image/png")
    def logo() -> bytes:
        return LOGO

    @mcp.resource("users://{user_id}/posts/{post_id}", description="One post.")
    def post(user_id: str, post_id: str) -> str:
        return f"post {post_id} by {user_id}"

    @mcp.prompt(title="Code review")
    def review(code: str, language: str = "python") -> str:
        """Review some code."""
        return f"Review this {language} code:\n{code}"

    @mcp.prompt()
    async def dialogue(topic: str) -> list[Any]:
        return [
            f"Let's talk about {topic}.",
            PromptMessage(role="assistant", content=TextContent(type="text", text="Sure.")),
        ]

    @mcp.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        languages = ["python", "pyret", "rust"]
        if isinstance(ref, PromptReference) and argument.name == "language":
            return [lang for lang in languages if lang.startswith(argument.value)]
        if isinstance(ref, ResourceTemplateReference) and argument.name == "post_id":
            user = (context.arguments or {}).get("user_id", "?") if context else "?"
            return [f"{user}-1", f"{user}-2"]
        return []

    return mcp


async def test_list_resources_and_templates(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
    listed = {str(r.uri): r for r in resources.resources}
    assert sorted(listed) == ["config://app", "file://logo.png", "text://motd"]
    assert listed["config://app"].name == "config"
    assert listed["config://app"].title == "App config"
    assert listed["config://app"].description == "The application's configuration."
    assert listed["config://app"].mime_type == "application/json"
    assert listed["text://motd"].name == "motd"
    assert listed["file://logo.png"].mime_type == "image/png"
    (template,) = templates.resource_templates
    assert template.uri_template == "users://{user_id}/posts/{post_id}"
    assert template.name == "post"
    assert template.description == "One post."


async def test_read_text_resources(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        config = await client.read_resource("config://app")
        motd = await client.read_resource("text://motd")
        version = client.protocol_version
    assert config.contents == [
        TextResourceContents(
            uri="config://app", mime_type="application/json", text='{"debug":false,"retries":3}'
        )
    ]
    assert motd.contents == [
        TextResourceContents(
            uri="text://motd", mime_type="text/plain", text=f"hello over {version}"
        )
    ]


async def test_read_blob_resource(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        result = await client.read_resource("file://logo.png")
    (blob,) = result.contents
    assert isinstance(blob, BlobResourceContents)
    assert str(blob.uri) == "file://logo.png"
    assert blob.mime_type == "image/png"
    assert base64.b64decode(blob.blob) == LOGO


async def test_read_template(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        result = await client.read_resource("users://ada/posts/42")
    assert result.contents == [
        TextResourceContents(
            uri="users://ada/posts/42", mime_type="text/plain", text="post 42 by ada"
        )
    ]


@pytest.mark.parametrize("uri", ["missing://nothing", "users://ada/posts/42/extra"])
async def test_resource_not_found(anyio_backend: str, mode: str, uri: str) -> None:
    async with Client(build(), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    expected = INVALID_PARAMS if mode == MODERN else RESOURCE_NOT_FOUND
    assert caught.value.code == expected == (-32602 if mode == MODERN else -32002)
    assert caught.value.message == f"Resource not found: {uri}"
    assert caught.value.data == {"uri": uri}


async def test_list_prompts(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        listed = await client.list_prompts()
    prompts = {p.name: p for p in listed.prompts}
    assert sorted(prompts) == ["dialogue", "review"]
    review = prompts["review"]
    assert review.title == "Code review"
    assert review.description == "Review some code."
    assert review.arguments == [
        PromptArgument(name="code", required=True),
        PromptArgument(name="language", required=False),
    ]
    assert prompts["dialogue"].arguments == [PromptArgument(name="topic", required=True)]


async def test_get_prompt(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        default = await client.get_prompt("review", {"code": "x = 1"})
        explicit = await client.get_prompt("review", {"code": "let x", "language": "rust"})
        dialogue = await client.get_prompt("dialogue", {"topic": "MCP"})
    assert default.description == "Review some code."
    assert default.messages == [
        PromptMessage(
            role="user", content=TextContent(type="text", text="Review this python code:\nx = 1")
        )
    ]
    assert explicit.messages[0].content.text == "Review this rust code:\nlet x"
    assert dialogue.messages == [
        PromptMessage(role="user", content=TextContent(type="text", text="Let's talk about MCP.")),
        PromptMessage(role="assistant", content=TextContent(type="text", text="Sure.")),
    ]


async def test_get_prompt_errors(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("review", {"language": "rust"})
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("nope", {})
    assert missing.value.code == INVALID_PARAMS
    assert missing.value.message == "Missing required arguments: code"
    assert unknown.value.code == INVALID_PARAMS
    assert unknown.value.message == "Unknown prompt: nope"


async def test_completion(anyio_backend: str, mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        languages = await client.complete(
            PromptReference(name="review"), {"name": "language", "value": "py"}
        )
        posts = await client.complete(
            ResourceTemplateReference(uri="users://{user_id}/posts/{post_id}"),
            {"name": "post_id", "value": ""},
            context_arguments={"user_id": "ada"},
        )
        nothing = await client.complete(
            PromptReference(name="review"), {"name": "code", "value": "x"}
        )
    assert languages.completion.values == ["python", "pyret"]
    assert languages.completion.total == 2
    assert languages.completion.has_more is False
    assert posts.completion.values == ["ada-1", "ada-2"]
    assert nothing.completion.values == []
