"""`python -m mcp_adapters run server.py[:attr] --transport stdio|http|ws|tcp`

Loads a Python file (or an importable module), finds the `MCPServer` in it
(`attr`, else `mcp`, else the only one defined there) and serves it until
interrupted (stdio: until its input ends). Where it serves, and every tool
that raises, is logged on stderr; stdout belongs to the protocol on stdio.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

from mcp_adapters._cli_limits import add_limit_options, limits_from_args
from mcp_adapters.cluster import configure_store_from_environment
from mcp_adapters.request_state_keys import configure_from_environment
from mcp_adapters.transports.stdio import reserve_standard_fds


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


LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def main(argv: list[str] | None = None) -> int:
    # First of all, before any descriptor is opened: a closed stdin or stdout
    # (`<&-`, `>&-`) is reopened on /dev/null, so no socket or epoll descriptor
    # can take its number (see mcp_adapters.transports.stdio).
    reserve_standard_fds()
    parser = argparse.ArgumentParser(prog="python -m mcp_adapters", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    # Every option says its default in --help (the formatter appends it).
    run = commands.add_parser(
        "run",
        help="serve an MCPServer",
        description="Serve the MCPServer of a Python file or module.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    run.add_argument(
        "target",
        help="server.py[:attr] or package.module[:attr]; without attr, the MCPServer "
        "named `mcp`, else the only one in the module",
    )
    run.add_argument(
        "--transport",
        "-t",
        default="stdio",
        choices=["stdio", "http", "streamable-http", "ws", "websocket", "tcp"],
        help="stdio: this process's stdin/stdout; http (= streamable-http): "
        "http://HOST:PORT/PATH; ws (= websocket): ws://HOST:PORT/PATH; "
        "tcp: newline-delimited JSON on tcp://HOST:PORT",
    )
    run.add_argument("--host", default="127.0.0.1", help="address to listen on (http, ws, tcp)")
    run.add_argument(
        "--port",
        "-p",
        type=int,
        default=8000,
        help="port to listen on (http, ws, tcp); 0 picks one",
    )
    run.add_argument("--path", default="/mcp", help="endpoint path (http, ws)")
    run.add_argument(
        "--backend", default="asyncio", choices=["asyncio", "trio"], help="event loop to run on"
    )
    run.add_argument(
        "--log-level",
        default="info",
        type=str.lower,
        choices=LOG_LEVELS,
        help="stderr log level: info shows where the server listens, error each tool "
        "that raised, with its traceback",
    )
    # Behind a proxy or load balancer (http; docs/deploy.md).
    run.add_argument(
        "--allowed-host",
        action="append",
        metavar="HOST[:PORT]",
        help="a Host the server answers to (the name clients use; PORT may be *); "
        "repeatable. Without it a loopback bind answers only its own names "
        "(127.0.0.1, localhost, ::1 at its port), and a balancer's name gets 421",
    )
    run.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="SCHEME://HOST[:PORT]",
        help="a browser Origin allowed to call the server; repeatable",
    )
    run.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS|NETWORK",
        help="a proxy whose X-Forwarded-For/-Host/-Proto headers are believed; repeatable",
    )
    add_limit_options(run)
    args = parser.parse_args(argv)
    # The one place logging is configured: the library only logs.
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    server = load_server(args.target)
    try:
        server.limits, run_options = limits_from_args(args, server.limits)
        # Replicas share their key ring and identity through the environment.
        configure_from_environment(server)
        configure_store_from_environment(server)  # MCP_STORE_URL: legacy sessions shared
    except ValueError as exc:
        parser.error(str(exc))
    try:
        server.run(
            args.transport,
            host=args.host,
            port=args.port,
            path=args.path,
            backend=args.backend,
            allowed_hosts=args.allowed_host,
            allowed_origins=args.allowed_origin,
            trusted_proxies=args.trusted_proxy,
            **run_options,
        )
    except* KeyboardInterrupt:
        pass  # Ctrl-C is how a network server is stopped; trio wraps it in a group
    return 0


if __name__ == "__main__":
    sys.exit(main())
