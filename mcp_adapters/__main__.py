"""`python -m mcp_adapters run server.py[:attr] --transport stdio|http|ws|tcp`

Loads a Python file (or an importable module), finds the `MCPServer` in it
(`attr`, else `mcp`, else the only one defined there) and serves it until
interrupted. Streamable HTTP listens on http://127.0.0.1:8000/mcp by default.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from mcp_adapters._cli_limits import add_limit_options, limits_from_args


def load_server(target: str) -> Any:
    """The MCPServer named by `path/to/file.py[:attr]` or `package.module[:attr]`."""
    from mcp_adapters.server import MCPServer

    location, _, attr = target.partition(":")
    if location.endswith(".py") or Path(location).is_file():
        path = Path(location).resolve()
        if not path.is_file():
            raise SystemExit(f"no such file: {location}")
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load {location}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    if attr:
        server = getattr(module, attr, None)
    else:
        server = getattr(module, "mcp", None)
        if not isinstance(server, MCPServer):
            found = [v for v in vars(module).values() if isinstance(v, MCPServer)]
            server = found[0] if len(found) == 1 else None
    if not isinstance(server, MCPServer):
        raise SystemExit(f"{target}: no MCPServer found (name it `mcp` or pass file.py:attr)")
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_adapters", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve an MCPServer")
    run.add_argument("target", help="server.py[:attr] or package.module[:attr]")
    run.add_argument(
        "--transport",
        "-t",
        default="stdio",
        choices=["stdio", "http", "streamable-http", "ws", "websocket", "tcp"],
    )
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", "-p", type=int, default=8000)
    run.add_argument("--path", default="/mcp")
    run.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    add_limit_options(run)
    args = parser.parse_args(argv)
    server = load_server(args.target)
    try:
        server.limits, run_options = limits_from_args(args, server.limits)
    except ValueError as exc:
        parser.error(str(exc))
    with contextlib.suppress(KeyboardInterrupt):
        server.run(
            args.transport,
            host=args.host,
            port=args.port,
            path=args.path,
            backend=args.backend,
            **run_options,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
