"""Resource objects for `MCPServer.add_resource`, as the official SDK has them.

`@mcp.resource(uri)` turns a function into a resource; these are the other
way, a resource as a value, registered with `mcp.add_resource(...)`:

    mcp.add_resource(TextResource(uri="note://today", text="Buy milk."))
    mcp.add_resource(FileResource(uri="file:///etc/hosts", path=Path("/etc/hosts")))

`add_resource` takes any object with a `uri` and a `read()` (plain or async)
returning `str` or `bytes`, so a port's own subclasses work as they are;
`name`, `title`, `description`, `mime_type` and `icons` are read when present.
A URI template (`{var}`) needs a function: use `@mcp.resource`.

`ReadResourceContents` is what `ctx.read_resource(uri)` returns, one per part.
"""

from __future__ import annotations

import base64
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio.to_thread
import pydantic_core

# Text unless told otherwise: what a file of these types decodes as.
_TEXTUAL = ("application/json", "application/xml", "application/yaml", "application/javascript")


@dataclass(kw_only=True)
class Resource:
    """A resource with a fixed URI; subclasses say what `read()` returns."""

    uri: str
    name: str | None = None
    title: str | None = None
    description: str | None = None
    mime_type: str = "text/plain"
    icons: Any = None

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.uri

    async def read(self) -> str | bytes:
        raise NotImplementedError


@dataclass(kw_only=True)
class TextResource(Resource):
    text: str

    async def read(self) -> str:
        return self.text


@dataclass(kw_only=True)
class BinaryResource(Resource):
    data: bytes
    mime_type: str = "application/octet-stream"

    async def read(self) -> bytes:
        return self.data


@dataclass(kw_only=True)
class FunctionResource(Resource):
    """Calls `fn()` on each read (a plain one on a worker thread); non-text is JSON."""

    fn: Callable[[], Any]

    async def read(self) -> str | bytes:
        if inspect.iscoroutinefunction(self.fn):
            value = await self.fn()
        else:
            value = await anyio.to_thread.run_sync(self.fn)
        if isinstance(value, str | bytes):
            return value
        return pydantic_core.to_json(value, fallback=str, indent=2).decode()


@dataclass(kw_only=True)
class FileResource(Resource):
    """A file read on each read: text when `encoding` is set, else bytes.

    `encoding="auto"` is UTF-8 for textual MIME types (`text/*`, JSON, XML,
    YAML) and None (bytes) for the others. `path` must be absolute: a relative
    one would depend on the server's working directory.
    """

    path: Path
    encoding: str | Literal["auto"] | None = "auto"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.path = Path(self.path)
        if not self.path.is_absolute():
            raise ValueError(f"FileResource needs an absolute path, not {str(self.path)!r}")
        if self.encoding == "auto":
            essence = self.mime_type.split(";", 1)[0].strip().lower()
            textual = essence.startswith("text/") or essence in _TEXTUAL
            self.encoding = "utf-8" if textual or essence.endswith(("+json", "+xml")) else None

    async def read(self) -> str | bytes:
        if self.encoding is None:
            return await anyio.to_thread.run_sync(self.path.read_bytes)
        read_text = functools.partial(self.path.read_text, encoding=self.encoding)
        return await anyio.to_thread.run_sync(read_text)


@dataclass(frozen=True, slots=True)
class ReadResourceContents:
    """One part of a resource as `ctx.read_resource` returns it: text or bytes."""

    content: str | bytes
    mime_type: str | None = None
    meta: dict[str, Any] | None = None

    @classmethod
    def of(cls, part: Any) -> ReadResourceContents:
        """From a wire `TextResourceContents` or `BlobResourceContents` (base64 undone)."""
        text = getattr(part, "text", None)
        content = text if isinstance(text, str) else base64.b64decode(part.blob)
        return cls(content, part.mime_type, part.meta)


__all__ = [
    "BinaryResource",
    "FileResource",
    "FunctionResource",
    "ReadResourceContents",
    "Resource",
    "TextResource",
]
