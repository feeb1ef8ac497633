"""ASGI applications the ASGI tests run under a real uvicorn (`uvicorn --factory MODULE:NAME`).

`seeds()`: one Starlette app mounting the seed servers (examples/seeds, each file loaded
afresh under its own name, so the delete_folder sequence can run once per client and
mode), a probe server, and a mounted MCP app left out of the lifespan; beside them a
route of Starlette's own. `proxied()`: the probe behind a public host name, with
127.0.0.1 as its trusted proxy.

The probe's tools let a test see from outside what happened inside the server: which
handlers were cancelled, and a tool that waits until told to finish.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcp_adapters.asgi import ASGIApp
from mcp_adapters.server import Context, MCPServer
from mcp_core.http import HostPolicy, HTTPLimits, RequestHead

SEEDS = Path(__file__).resolve().parents[2] / "examples" / "seeds"

# Where a path is mounted -> (seed file, the copy's module name).
SEED_MOUNTS = {
    "/url": "bistro_url_server",
    "/form": "bistro_form_server",
    "/delete/ours-legacy": "delete_folder_server",
    "/delete/ours-modern": "delete_folder_server",
    "/delete/sdk-legacy": "delete_folder_server",
    "/delete/sdk-default": "delete_folder_server",
}
LIMITS = HTTPLimits(max_body_bytes=1 << 20, max_output_bytes=1 << 20)


def load_seed(name: str, alias: str) -> MCPServer:
    """A fresh copy of a seed module (its own `mcp` and module state)."""
    spec = importlib.util.spec_from_file_location(alias, SEEDS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server: MCPServer = module.mcp
    return server


def probe_server() -> MCPServer:
    probe = MCPServer("Probe")
    started: list[str] = []
    cancelled: list[str] = []
    released: dict[str, anyio.Event] = {}

    def gate(tag: str) -> anyio.Event:
        return released.setdefault(tag, anyio.Event())

    @probe.tool()
    async def wait(tag: str) -> str:
        """Wait until cancelled (and remember it)."""
        started.append(tag)
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(tag)
            raise
        return "unreachable"

    @probe.tool()
    def seen() -> dict[str, list[str]]:
        """The tags of the handlers started and cancelled so far."""
        return {"started": list(started), "cancelled": list(cancelled)}

    @probe.tool()
    def announce(ctx: Context) -> int:
        """Tell every session its tool list changed (on its GET stream)."""
        return ctx.server.notify_tools_changed()

    @probe.tool()
    async def steps(tag: str, ctx: Context) -> str:
        """Report progress, then wait for `release(tag)`."""
        await ctx.report_progress(1, 2, "half way")
        await gate(tag).wait()
        return f"done {tag}"

    @probe.tool()
    def release(tag: str) -> str:
        gate(tag).set()
        return "released"

    @probe.tool()
    async def flood(tag: str, ctx: Context) -> str:
        """Progress far beyond what a client that does not read can hold."""
        try:
            for n in range(1, 201):
                await ctx.report_progress(n, 200, "x" * (256 * 1024))
                await anyio.sleep(0)
        except anyio.get_cancelled_exc_class():
            cancelled.append(tag)
            raise
        return "flooded"

    @probe.tool()
    def whoami(ctx: Context) -> str:
        """What the HTTP layer made of the request (see `principal_of` below)."""
        return str(ctx.scope.connection.principal)

    return probe


def _view_of(head: RequestHead) -> str:
    """The request's view as a principal, for `whoami`: client address and base URL."""
    assert head.view is not None
    return f"{head.view.client} {head.view.base_url} proxied={head.view.proxied}"


def seeds() -> Starlette:
    apps: dict[str, ASGIApp] = {
        mount: load_seed(name, f"asgi_seed_{n}").asgi_app()
        for n, (mount, name) in enumerate(SEED_MOUNTS.items())
    }
    apps["/probe"] = probe_server().asgi_app(limits=LIMITS, principal_of=_view_of)
    not_started = probe_server().asgi_app()

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for mcp_app in apps.values():
                await stack.enter_async_context(mcp_app.lifespan())
            yield

    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("hello from starlette")

    routes: list[Any] = [Route("/hello", hello)]
    routes += [Mount(mount, app=mcp_app) for mount, mcp_app in apps.items()]
    routes.append(Mount("/not-started", app=not_started))
    return Starlette(routes=routes, lifespan=lifespan)


def proxied() -> ASGIApp:
    """The probe at the top level, for https://mcp.example.com behind a proxy on 127.0.0.1."""
    return probe_server().asgi_app(
        host_policy=HostPolicy(
            allowed_hosts=("mcp.example.com",), allowed_origins=("https://mcp.example.com",)
        ),
        trusted_proxies=["127.0.0.1"],
        principal_of=_view_of,
    )
