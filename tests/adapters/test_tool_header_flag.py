"""`MCPServer.tool_headers_declared`, kept by registration, and the HTTP transport's
tool-header lookup that reads it first: every answer is still what the tool's schema
declares (`x_mcp_header_params`), however tools come and go."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mcp_adapters.server import MCPServer
from mcp_adapters.transports.http_server import tool_header_params_of
from mcp_core.http import InvalidToolHeaderAnnotation, x_mcp_header_params


def _expected(server: MCPServer, name: str) -> Any:
    """What the lookup must answer: the schema's header parameters, None for none, an
    unknown tool, or invalid annotations."""
    tool = server._tools.get(name)
    if tool is None:
        return None
    try:
        return x_mcp_header_params(tool.input_schema) or None
    except InvalidToolHeaderAnnotation:
        return None


def _plain(text: str) -> str:
    return text


def _routed(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    return region


def _nested(
    spec: Annotated[dict[str, Any], Field(json_schema_extra={"x-mcp-header": "Bad"})],
) -> str:
    return "invalid: the annotation is on an object"


def test_the_flag_follows_registration_and_the_lookup_follows_the_schemas() -> None:
    server = MCPServer("flags")
    lookup = tool_header_params_of(server)
    names = ["plain", "routed", "nested", "other", "missing"]

    def agrees() -> None:
        for name in names:
            assert lookup(name) == _expected(server, name), name

    assert server.tool_headers_declared is False
    agrees()
    server.add_tool(_plain, name="plain")
    assert server.tool_headers_declared is False
    agrees()
    server.add_tool(_routed, name="routed")
    assert server.tool_headers_declared is True
    assert lookup("routed") is not None
    agrees()
    server.add_tool(_plain, name="other")
    assert server.tool_headers_declared is True
    agrees()
    server.remove_tool("routed")
    assert server.tool_headers_declared is False
    agrees()
    # A tool whose annotation is invalid still counts as declaring (the lookup then
    # reads it, and answers None as before).
    server.add_tool(_nested, name="nested")
    assert server.tool_headers_declared is True
    agrees()
    server.remove_tool("nested")
    assert server.tool_headers_declared is False
    # The same name registered again with header parameters is read again.
    server.add_tool(_routed, name="plain")
    assert server.tool_headers_declared is True
    assert lookup("plain") == _expected(server, "plain") is not None
    agrees()
    server.remove_tool("plain")
    server.remove_tool("other")
    assert server.tool_headers_declared is False
    agrees()


def test_the_flag_survives_deep_and_self_referring_schemas() -> None:
    """A schema given as `input_schema=` is walked without recursion, each container
    once: a deep one does not overflow the stack, one that refers to itself ends."""
    server = MCPServer("odd schemas")
    deep: dict[str, Any] = {"type": "object"}
    inner = deep
    for _ in range(5000):
        inner["properties"] = {"x": {"type": "object"}}
        inner = inner["properties"]["x"]
    server.add_tool(_plain, name="deep", input_schema=deep)
    assert server.tool_headers_declared is False
    looped: dict[str, Any] = {"type": "object", "properties": {}}
    looped["properties"]["self"] = looped
    looped["anyOf"] = [looped, [looped]]
    server.add_tool(_plain, name="looped", input_schema=looped)
    assert server.tool_headers_declared is False
    inner["x-mcp-header"] = "Deep"
    server.add_tool(_plain, name="deep", input_schema=deep)
    assert server.tool_headers_declared is True
