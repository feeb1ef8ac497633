"""An MCP server as an ASGI application, alone or mounted in Starlette beside its own routes.

    uvicorn examples.asgi_app:mcp_app --port 8000   # MCP at http://127.0.0.1:8000/mcp
    uvicorn examples.asgi_app:app --port 8000       # /health, and MCP at /tools/mcp

Run from the repository root. At the top level the ASGI server's lifespan events start
and stop the MCP application; mounted, the framework does not pass them on, so
`lifespan=mcp_app.lifespan` hands that job to Starlette's own lifespan.
"""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from examples.seeds.bistro_form_server import mcp

mcp_app = mcp.asgi_app()  # Streamable HTTP at <mount>/mcp, both protocol eras


async def health(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


app = Starlette(
    routes=[Route("/health", health), Mount("/tools", app=mcp_app)],
    lifespan=mcp_app.lifespan,
)
