"""The seam for the running loop, chosen when asked: asyncio's own, or trio's.

Its own module, not the package's: the backends import the package (its
protocols), so the package importing them, even inside a function, would make
an import cycle.
"""

from __future__ import annotations

import sniffio

from mcp_adapters.backends import SessionBackend


def loop_backend() -> SessionBackend:
    """The `SessionBackend` of the running loop (asyncio or trio); others are refused."""
    library = sniffio.current_async_library()
    if library == "asyncio":
        from mcp_adapters.backends import asyncio as on_asyncio

        return on_asyncio.backend()
    if library == "trio":
        from mcp_adapters.backends import trio as on_trio

        return on_trio.BACKEND
    raise RuntimeError(f"no mcp_adapters backend for {library!r}")


__all__ = ["loop_backend"]
