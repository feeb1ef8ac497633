"""cProfile of the Streamable HTTP path, server side or client side.

    python benchmarks/profile_http.py                      # server process, 2026-07-28
    python benchmarks/profile_http.py --mode legacy --calls 3000 --clients 16
    python benchmarks/profile_http.py --side client        # our Client instead
    python benchmarks/profile_http.py --tool echo_async --top 40

The server is `benchmarks/servers/ours.py`, served over HTTP in a child process
(`python -m mcp_adapters run ... --transport http`), as `benchmarks/run.py` does.
With `--side server` that child is profiled (from the end of the warm-up until it is
stopped); with `--side client` the calls made by our `Client` are profiled here.
`--clients` clients call concurrently, `--calls` calls in all. The table is the top
entries by own time ("tottime"), in µs per call of the tool.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "benchmarks" / "servers" / "ours.py"
MODES = {"legacy": "legacy", "2026": "2026-07-28"}


def _serve_profiled(stats_path: str, port: int) -> None:
    """The child: the benchmark server, profiled from SIGUSR1 (after the warm-up) to
    SIGTERM, when the stats are written."""
    from mcp_adapters.__main__ import main

    profiler = cProfile.Profile()

    def start(signum: int, frame: Any) -> None:
        profiler.enable()

    def stop(signum: int, frame: Any) -> None:
        profiler.disable()
        profiler.dump_stats(stats_path)
        os._exit(0)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGTERM, stop)
    main(["run", str(SERVER), "--transport", "http", "--port", str(port)])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def _drive(
    url: str, mode: str, tool: str, calls: int, clients: int, warmed: Callable[[], None]
) -> float:
    import anyio

    from mcp_adapters import Client

    async def one(n: int) -> None:
        async with Client(url, mode=MODES[mode]) as client:
            for _ in range(10):  # warm-up
                await client.call_tool(tool, {"text": "hello world"})
            await ready.wait()
            for _ in range(n):
                result = await client.call_tool(tool, {"text": "hello world"})
                if result.is_error:
                    raise RuntimeError(result.content)

    ready = anyio.Event()
    per = max(1, calls // clients)
    start = 0.0
    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(one, per)
        await anyio.sleep(0.5)
        warmed()
        start = time.perf_counter()
        ready.set()
    return time.perf_counter() - start


def _group(path: str) -> str:
    """The package a profiled function belongs to (C functions: "builtins")."""
    if path == "~":
        return "builtins"
    for name in ("mcp_core", "mcp_adapters", "h11", "anyio", "asyncio", "pydantic", "sniffio"):
        if f"/{name}/" in path:
            return name
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", choices=("server", "client"), default="server")
    parser.add_argument("--mode", choices=tuple(MODES), default="2026")
    parser.add_argument("--tool", default="echo")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument(
        "--by", choices=("time", "calls"), default="time", help="rank by own time or by calls"
    )
    parser.add_argument("--save", help="also keep the raw pstats file here (for pstats/snakeviz)")
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)  # the child's arguments
    args = parser.parse_args()
    if args.serve:
        _serve_profiled(args.serve[0], int(args.serve[1]))
        return

    import anyio

    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        stats_path = str(Path(tmp) / "server.prof")
        if args.side == "server":
            command = [sys.executable, __file__, "--serve", stats_path, str(port)]
        else:
            command = [sys.executable, "-m", "mcp_adapters", "run", str(SERVER)]
            command += ["--transport", "http", "--port", str(port)]
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL)
        try:
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            url = f"http://127.0.0.1:{port}/mcp"
            profiler = cProfile.Profile() if args.side == "client" else None

            def warmed() -> None:  # the profile starts after the warm-up calls
                if profiler is not None:
                    profiler.enable()
                else:
                    process.send_signal(signal.SIGUSR1)

            elapsed = anyio.run(_drive, url, args.mode, args.tool, args.calls, args.clients, warmed)
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(stats_path)
        finally:
            process.terminate()
            process.wait(timeout=10)
        done = max(1, args.calls // args.clients) * args.clients
        print(
            f"{done} calls of {args.tool} ({args.mode}, {args.clients} client(s)) in "
            f"{elapsed:.2f} s under the profiler ({args.side} side profiled)"
        )
        stats = pstats.Stats(stats_path)
        if args.save:
            stats.dump_stats(args.save)
        rows = sorted(
            stats.stats.items(),  # type: ignore[attr-defined]
            key=lambda item: item[1][2] if args.by == "time" else item[1][1],
            reverse=True,
        )
        total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
        calls = sum(v[1] for v in stats.stats.values())  # type: ignore[attr-defined]
        print(
            f"own time in all: {total / done * 1e6:.0f} µs per call; "
            f"{calls / done:.0f} Python function calls per call"
        )
        groups: dict[str, list[float]] = {}
        for (path, _, _), (_, ncalls, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
            group = _group(path)
            acc = groups.setdefault(group, [0.0, 0.0])
            acc[0] += tottime
            acc[1] += ncalls
        print(
            "by package: "
            + ", ".join(
                f"{name} {100 * t / total:.0f}% ({n / done:.0f} calls)"
                for name, (t, n) in sorted(groups.items(), key=lambda g: -g[1][0])
            )
        )
        print(f"{'own %':>6} {'µs/call':>8} {'calls':>7}  function")
        for (path, line, name), (_, ncalls, tottime, _, _) in rows[: args.top]:
            where = "/".join(Path(path).parts[-2:]) if path != "~" else ""
            print(
                f"{100 * tottime / total:6.1f} {tottime / done * 1e6:8.1f} "
                f"{ncalls / done:7.1f}  {where}:{line} {name}"
            )


if __name__ == "__main__":
    main()
