"""A stdio server on the blocking backend (`mcp_adapters.sockets`), no event loop.

    python blocking_server.py

`tools/call` answers after a pause on its handler thread, like `double` of
slow_server.py: the answer is due after the input has ended.
"""

import time
from typing import Any

from mcp_adapters.sockets import Session, serve_stdio
from mcp_core import RequestReceived, ServerConfig


def on_request(session: Session, request: RequestReceived) -> Any:
    if request.method == "tools/list":
        return {"tools": [{"name": "double", "inputSchema": {"type": "object"}}]}
    time.sleep(0.2)
    x = int((request.params.arguments or {})["x"])
    return {"content": [{"type": "text", "text": str(2 * x)}]}


serve_stdio(on_request, ServerConfig(name="Blocking", capabilities={"tools": {}}))
