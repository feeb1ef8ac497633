"""A stdio client run with its own stdin/stdout redirected (files, /dev/null, closed).

    python stdio_client.py RESULT_FILE asyncio|trio|sockets

Starts slow_server.py (blocking_server.py for `sockets`) over stdio, calls
`double(21)` and writes the answer's text to RESULT_FILE: its own stdout may be
closed.
"""

import sys
from pathlib import Path

import anyio

from mcp_adapters import Client, StdioServerParameters
from mcp_core import ClientConfig

HERE = Path(__file__).parent


def main() -> None:
    result_file, backend = sys.argv[1], sys.argv[2]
    if backend == "sockets":
        from mcp_adapters.sockets import connect_stdio

        params = StdioServerParameters(sys.executable, [str(HERE / "blocking_server.py")])
        with connect_stdio(params, ClientConfig(mode="legacy")) as session:
            result = session.request("tools/call", {"name": "double", "arguments": {"x": 21}})
        text = result.content[0].text
    else:

        async def call() -> str:
            params = StdioServerParameters(
                sys.executable,
                ["-m", "mcp_adapters", "run", str(HERE / "slow_server.py"), "--backend", backend],
            )
            async with Client(params) as client:
                answer = await client.call_tool("double", {"x": 21})
            return str(answer.content[0].text)

        text = anyio.run(call, backend=backend)
    Path(result_file).write_text(text)
    print(f"double(21) = {text}")  # goes wherever stdout goes, or nowhere


main()
