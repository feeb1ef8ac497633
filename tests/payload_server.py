"""An MCP server with big payloads, for the large-payload tests (ours and the SDKs').

    python -m mcp_adapters run tests/payload_server.py [--transport ...] [--max-message-bytes N]

Tools:
- `transform(data, size)`: takes a base64 file (`data`), answers with a digest of
  what it received and an image of `size` bytes (base64, deterministic), so one
  call carries a big argument one way and a big result the other;
- `blob(size)`: just the image;
- `echo(text)`: a small call, to show the server still answers after a refusal.

The image bytes are `pattern(size)`, which the tests compute too: seeded
pseudo-random bytes, quick to make and not compressible into anything smaller.

It lives outside tests/adapters/servers on purpose: the adapter tests' leak check
watches that folder machine-wide, and the interop tests run this server too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_adapters.server import MCPServer
from mcp_core.types import CallToolResult, ImageContent, TextContent

mcp = MCPServer("payloads")

MiB = 1024 * 1024


def pattern(size: int) -> bytes:
    """`size` deterministic bytes that do not compress (seeded by the size)."""
    return random.Random(size).randbytes(size)


def _image(size: int) -> ImageContent:
    return ImageContent(
        type="image", data=base64.b64encode(pattern(size)).decode("ascii"), mime_type="image/png"
    )


@mcp.tool()
def transform(data: str, size: int) -> CallToolResult:
    """Digest the base64 file `data`; answer with an image of `size` bytes."""
    received = base64.b64decode(data, validate=True)
    digest = {
        "received_bytes": len(received),
        "received_sha256": hashlib.sha256(received).hexdigest(),
    }
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(digest)), _image(size)])


@mcp.tool()
def blob(size: int) -> CallToolResult:
    """An image of `size` bytes."""
    return CallToolResult(content=[_image(size)])


@mcp.tool()
def echo(text: str) -> str:
    return text
