"""cProfile of the Streamable HTTP path, server side or client side.

    python benchmarks/profile_http.py                      # server process, 2026-07-28
    python benchmarks/profile_http.py --mode legacy --calls 3000 --clients 16
    python benchmarks/profile_http.py --side client        # our Client instead
    python benchmarks/profile_http.py --tool echo_async --top 40
    python benchmarks/profile_http.py --by ir --side server --mode legacy   # callgrind

The server is `benchmarks/servers/ours.py`, served over HTTP in a child process
(`python -m mcp_adapters run ... --transport http`), as `benchmarks/run.py` does.
With `--side server` that child is profiled; with `--side client` the calls made by our
`Client` are profiled here.
`--clients` clients call concurrently, `--calls` calls in all. The table is the top
entries by own time ("tottime"), in µs per call of the tool. The profile covers the
measured calls only: not the warm-up, not the clients' closing.

`--by ir` counts instructions instead (`benchmarks/callgrind.py`): the side runs under
callgrind, collection on from the end of the warm-up to the end of the calls, and the
total is divided by the calls (`PYTHONHASHSEED=0` on that side, so that two trees or two
eras compare without the hash seed's noise). The client's garbage collector is off while
it is measured, as in the figures of docs/performance.md (with it on, its collections
added 2.7k to 3.7k per call there, by how many fell within the calls); the server's is
left on. With `--side server` the server child runs under callgrind (about 50 times
slower); with `--side client` this script runs itself again under it. Use it to compare
two trees or the two eras on a shared machine, where wall-clock rounds cannot (default
1,000 calls). Session 23: server 319.5k legacy against 329.6k 2026-07-28, client 264.1k
against 276.8k (3.11, one client, `echo`).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
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

import callgrind  # benchmarks/callgrind.py (this script's directory is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "benchmarks" / "servers" / "ours.py"
MODES = {"legacy": "legacy", "2026": "2026-07-28"}


def _serve_profiled(stats_path: str, port: int) -> None:
    """The child: the benchmark server, profiled from SIGUSR1 (after the warm-up) to
    SIGUSR2 (after the last call); the stats are written at SIGTERM."""
    from mcp_adapters.__main__ import main

    profiler = cProfile.Profile()

    def start(signum: int, frame: Any) -> None:
        profiler.enable()

    def pause(signum: int, frame: Any) -> None:
        profiler.disable()

    def stop(signum: int, frame: Any) -> None:
        profiler.disable()
        profiler.dump_stats(stats_path)
        os._exit(0)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, pause)
    signal.signal(signal.SIGTERM, stop)
    main(_serve_args(port))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def _drive(
    url: str,
    mode: str,
    tool: str,
    calls: int,
    clients: int,
    warmed: Callable[[], None],
    finished: Callable[[], None],
) -> float:
    """`clients` clients make `calls` calls in all after 10 calls each of warm-up; `warmed`
    is called when every client is warm, `finished` when the last call is answered (before
    any client closes). Returns the seconds between the two."""
    import anyio

    from mcp_adapters import Client

    warm = anyio.Event()
    ready = anyio.Event()
    done = anyio.Event()
    warming = running = clients
    end = 0.0

    async def one(n: int) -> None:
        nonlocal warming, running, end
        async with Client(url, mode=MODES[mode]) as client:
            for _ in range(10):  # warm-up
                await client.call_tool(tool, {"text": "hello world"})
            warming -= 1
            if warming == 0:
                warm.set()
            await ready.wait()
            for _ in range(n):
                result = await client.call_tool(tool, {"text": "hello world"})
                if result.is_error:
                    raise RuntimeError(result.content)
            running -= 1
            if running == 0:
                end = time.perf_counter()
                finished()
                done.set()
            await done.wait()

    per = max(1, calls // clients)
    start = 0.0
    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(one, per)
        # Every client warm (under callgrind the first calls are many times slower than
        # later ones, so no fixed wait would do), then a moment for the server to settle.
        await warm.wait()
        await anyio.sleep(0.2)
        warmed()
        start = time.perf_counter()
        ready.set()
    return end - start


def _serve_args(port: int) -> list[str]:
    """`python -m mcp_adapters`'s arguments for the benchmark's server on `port`, as
    `benchmarks/run.py` starts it (the profiled child passes them to `main` itself)."""
    return ["run", str(SERVER), "--transport", "http", "--port", str(port)]


def _serve_command(port: int) -> list[str]:
    return [sys.executable, "-m", "mcp_adapters", *_serve_args(port)]


def _wait_listening(port: int, seconds: float) -> None:
    """Until the server accepts connections on `port`; raises after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _count_instructions(args: argparse.Namespace) -> None:
    """`--by ir`: instructions per call of one side (see the module's docstring)."""
    import anyio

    done = max(1, args.calls // args.clients) * args.clients
    if args.side == "client" and not args.in_callgrind:
        # This script again, under callgrind, as the client; it dumps when the calls end.
        with tempfile.TemporaryDirectory() as tmp:
            out = str(Path(tmp) / "client.cg")
            argv = [sys.executable, __file__, *sys.argv[1:], "--in-callgrind", out]
            env = dict(os.environ, PYTHONHASHSEED="0")
            subprocess.run(callgrind.command(out, argv), check=True, env=env)
            per = callgrind.instructions(out) / done
        print(f"client: {per:,.0f} instructions per call ({args.mode}, {args.tool}, {done} calls)")
        return
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "server.cg")
        command = [*_serve_command(port), "--log-level", "error"]
        if args.side == "server":
            command = callgrind.command(f"{out}.%p", command)
        env = dict(os.environ, PYTHONHASHSEED="0")
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, env=env)
        # (valgrind's process is the server's: it runs the guest in place.)
        measured = process.pid if args.side == "server" else os.getpid()
        try:
            _wait_listening(port, 120.0)

            def warmed() -> None:
                if args.side == "client":
                    gc.collect()
                    gc.disable()
                callgrind.control(measured, "-i", "on")

            def finished() -> None:
                callgrind.control(measured, "-d")
                callgrind.control(measured, "-i", "off")
                if args.side == "client":
                    gc.enable()

            url = f"http://127.0.0.1:{port}/mcp"
            anyio.run(_drive, url, args.mode, args.tool, args.calls, args.clients, warmed, finished)
        finally:
            process.terminate()
            process.wait(timeout=60)
        if args.side == "server":
            per = callgrind.instructions(out) / done
            print(
                f"server: {per:,.0f} instructions per call ({args.mode}, {args.tool}, "
                f"{args.clients} client(s), {done} calls)"
            )


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
    parser.add_argument("--calls", type=int, default=None, help="2000; 1000 with --by ir")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument(
        "--by",
        choices=("time", "calls", "ir"),
        default="time",
        help="rank by own time or by calls; ir: callgrind instructions per call instead",
    )
    parser.add_argument("--save", help="also keep the raw pstats file here (for pstats/snakeviz)")
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)  # the child's arguments
    parser.add_argument("--in-callgrind", help=argparse.SUPPRESS)  # the dump file, client side
    args = parser.parse_args()
    if args.serve:
        _serve_profiled(args.serve[0], int(args.serve[1]))
        return
    if args.calls is None:
        args.calls = 1000 if args.by == "ir" else 2000
    if args.by == "ir":
        _count_instructions(args)
        return

    import anyio

    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        stats_path = str(Path(tmp) / "server.prof")
        if args.side == "server":
            command = [sys.executable, __file__, "--serve", stats_path, str(port)]
        else:
            command = _serve_command(port)
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL)
        try:
            _wait_listening(port, 10.0)
            url = f"http://127.0.0.1:{port}/mcp"
            profiler = cProfile.Profile() if args.side == "client" else None

            def warmed() -> None:  # the profile starts after the warm-up calls
                if profiler is not None:
                    profiler.enable()
                else:
                    process.send_signal(signal.SIGUSR1)

            def finished() -> None:  # and ends with the last call, before the clients close
                if profiler is not None:
                    profiler.disable()
                else:
                    process.send_signal(signal.SIGUSR2)

            elapsed = anyio.run(
                _drive, url, args.mode, args.tool, args.calls, args.clients, warmed, finished
            )
            if profiler is not None:
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
