"""The seed servers as one ASGI app, for gunicorn's uvicorn workers (tests/cluster/test_gunicorn.py).

    gunicorn -w 4 -k uvicorn_worker.UvicornWorker 'tests.cluster.gunicorn_app:seeds()'

Each seed file is loaded afresh under its own name and mounted at its own path
(`MOUNTS`), so delete_folder, which really deletes, has a fresh copy per client
mode. Every app takes its store, key ring and identity from the environment
(`MCP_STORE_URL`, `MCP_REQUEST_STATE_KEYS`, `MCP_SERVER_IDENTITY`), as a
deployment configures its workers: that is what lets one legacy session's
requests, and a 2026-07-28 call's retry, land on any worker.

The mounts share one store prefix. That is safe here, though a deployment
would give each service its own: session ids are random, each app in each
worker has its own bus address, and the only fan-out message seeds cause
(a session's end) is acted on by its holder alone.

Every response names the worker process that made it (`x-worker-pid`), which
nginx writes to its access log, so a test can show that requests of one
session were served by different workers.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_adapters.asgi import ASGIApp
from tests.adapters.asgi_apps import load_seed

# Where a copy is mounted -> the seed file it is loaded from.
MOUNTS = {
    "/form": "bistro_form_server",
    "/url": "bistro_url_server",
    "/library": "library_server",
    "/delete/legacy": "delete_folder_server",
    "/delete/2026-07-28": "delete_folder_server",
}
WORKER_HEADER = b"x-worker-pid"


class WorkerPid:
    """An ASGI middleware adding this process's id to every HTTP response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        pid = str(os.getpid()).encode()  # at call time: the worker, not a preloading parent

        async def send_naming_the_worker(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (WORKER_HEADER, pid)]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_naming_the_worker)


def seeds() -> WorkerPid:
    apps: dict[str, ASGIApp] = {
        mount: load_seed(name, f"gunicorn_seed_{n}").asgi_app()
        for n, (mount, name) in enumerate(MOUNTS.items())
    }

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for mcp_app in apps.values():
                await stack.enter_async_context(mcp_app.lifespan())
            yield

    routes = [Mount(mount, app=mcp_app) for mount, mcp_app in apps.items()]
    return WorkerPid(Starlette(routes=routes, lifespan=lifespan))
